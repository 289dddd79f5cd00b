/* txbox doctor: which protections hold on this machine, and what each missing one costs;
 * and agent configurations that would leave txbox silently out (docs/INTEGRATIONS.md). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli.h"
#include "base/beneath.h"

/* dir/rel as text (beneath dir, no symlinks, at most 1 MiB), or NULL. */
static char *read_config(const char *dir, const char *rel)
{
        char *text = NULL;
        size_t len = 0;
        int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return NULL;
        if (read_beneath(dfd, rel, 1 << 20, &text, &len) < 0)
                text = NULL;
        close(dfd);
        return text;
}

/* Does Gemini CLI trust folder ws?  ~/.gemini/trustedFolders.json maps a path to
 * TRUST_FOLDER (it and what is below), TRUST_PARENT (its parent and what is below) or
 * DO_NOT_TRUST (that folder). */
static bool within(const char *ws, const char *dir, size_t dl)
{
        while (dl > 1 && dir[dl - 1] == '/')
                dl--;
        if (dl == 1 && dir[0] == '/')
                return true;
        return !strncmp(ws, dir, dl) && (ws[dl] == '\0' || ws[dl] == '/');
}

static bool gemini_trusts(const char *home, const char *ws)
{
        const char *env = getenv("GEMINI_CLI_TRUST_WORKSPACE");
        if (env && !strcmp(env, "true"))
                return true;
        char *text = home ? read_config(home, ".gemini/trustedFolders.json") : NULL;
        json_t *root = text ? json_loads(text, 0, NULL) : NULL, *v;
        const char *key;
        bool trusted = false, distrusted = false;
        free(text);
        json_object_foreach(root, key, v) {
                const char *d = json_string_value(v), *slash = strrchr(key, '/');
                if (!d || key[0] != '/')
                        continue;
                if (!strcmp(d, "DO_NOT_TRUST") && !strcmp(key, ws))
                        distrusted = true;
                else if (!strcmp(d, "TRUST_FOLDER") && within(ws, key, strlen(key)))
                        trusted = true;
                else if (!strcmp(d, "TRUST_PARENT") && within(ws, key, slash == key ? 1
                                                              : (size_t)(slash - key)))
                        trusted = true;
        }
        json_decref(root);
        return trusted && !distrusted;
}

/* Agent settings that would leave txbox out without a word.  Returns the warnings printed. */
static int check_agents(const struct global_opts *g)
{
        const char *home = getenv("HOME");
        char ws[PATH_MAX];
        int warned = 0;

        if (!realpath(cli_workspace(g), ws))
                return 0;
        char *gem = read_config(ws, ".gemini/settings.json");
        if (gem && strstr(gem, "txbox") && !gemini_trusts(home, ws)) {
                printf("  warning  Gemini CLI: %s/.gemini/settings.json names txbox, but Gemini CLI does not "
                       "trust\n"
                       "           this folder, so it ignores that file: no hook, no MCP server, the shell "
                       "runs\n"
                       "           unguarded. Trust the folder or move the settings to "
                       "~/.gemini/settings.json.\n",
                       ws);
                warned++;
        }
        free(gem);
        char *cfg = home ? read_config(home, ".codex/config.toml") : NULL;
        if (cfg && strstr(cfg, "[mcp_servers.txbox]") && !strstr(cfg, "default_tools_approval_mode")) {
                printf("  warning  Codex: ~/.codex/config.toml has [mcp_servers.txbox] without\n"
                       "           default_tools_approval_mode = \"approve\": codex exec refuses every txbox "
                       "call.\n");
                warned++;
        }
        if (cfg && strstr(cfg, "codex_hooks")) {
                printf("  note     Codex: [features] codex_hooks is the deprecated name of hooks.\n");
                warned++;
        }
        free(cfg);
        for (int i = 0; i < 2; i++) {
                char *hooks = read_config(i ? ws : (home ? home : "/nonexistent"), ".codex/hooks.json");
                if (hooks && strstr(hooks, "txbox hook codex")) {
                        printf("  note     Codex: %s/.codex/hooks.json runs txbox hook codex only once you "
                               "have trusted\n"
                               "           it (codex, \"Hooks need review\"); codex exec skips untrusted "
                               "hooks silently.\n",
                               i ? ws : "~");
                        warned++;
                }
                free(hooks);
        }
        return warned;
}

#define PROBES_MAX 32

static void doctor_usage(FILE *f)
{
        fprintf(f, "Usage: txbox [-C DIR] [--state DIR] doctor [--json]\n\n"
                   "Probe every protection txbox uses where it would run: the namespaces, an overlay on\n"
                   "the workspace's own filesystem (-C DIR, default the one found from here up) with the state\n"
                   "dir beside it, the sandbox's own /proc, seccomp, Landlock and limits; then what a\n"
                   "container around txbox does (user-namespace mapping, seccomp mode, security label) and\n"
                   "the workspace's filesystem type.  Says what each missing protection costs and, inside\n"
                   "a container, which setting brings it back (docs/KUBERNETES.md).  Then warns about agent\n"
                   "settings (Gemini CLI, Codex) in the workspace and in ~ that would leave txbox out\n"
                   "without a word (docs/INTEGRATIONS.md; not with --json).\n\n"
                   "  --json      one JSON object: {\"ok\": bool, \"probes\": [{\"name\", \"ok\", "
                   "\"essential\",\n"
                   "              \"detail\", \"cost\"}], ...}\n"
                   "  -h, --help  this help\n\n"
                   "Exits 1 when txbox cannot run safely here (a MISSING line), 2 on bad usage.\n");
}

/* The home's view: the caches and the hidden paths (txbox_home_view), for people. */
static void print_home(const struct txbox_home_view *v)
{
        size_t present = 0;

        if (v->caches_off) {
                printf("writable caches: none: ");
                cli_human(stdout, v->caches_off);
                putchar('\n');
        } else {
                printf("writable caches, kept across transactions, never committed: ");
                cli_human(stdout, v->cache_root);
                putchar('\n');
                for (size_t i = 0; i < v->ncaches; i++) {
                        size_t l = v->caches[i].path ? strlen(v->caches[i].path) : 0;
                        printf("  ");
                        cli_human(stdout, v->caches[i].path);
                        printf("%*s", (int)(l < 28 ? 28 - l : 1), "");
                        cli_human(stdout, v->caches[i].detail);
                        putchar('\n');
                }
        }
        for (size_t i = 0; i < v->nhidden; i++)
                present += v->hidden[i].active;
        printf("hidden: %zu paths (credentials, agents' tokens, histories; --json lists them), %zu present here%s",
               v->nhidden, present, present ? ":" : "");
        for (size_t i = 0, k = 0; i < v->nhidden; i++) {
                if (!v->hidden[i].active)
                        continue;
                printf("%s", k++ ? ", " : " ");
                cli_human(stdout, v->hidden[i].path);
        }
        putchar('\n');
}

static json_t *home_json(const struct txbox_home_view *v)
{
        json_t *caches = json_array(), *hidden = json_array();
        for (size_t i = 0; i < v->ncaches; i++)
                json_array_append_new(caches, json_pack("{s:s, s:b, s:s?}", "path", v->caches[i].path, "mounted",
                                                        v->caches[i].active, "detail", v->caches[i].detail));
        for (size_t i = 0; i < v->nhidden; i++)
                json_array_append_new(hidden, json_pack("{s:s, s:b}", "path", v->hidden[i].path, "present",
                                                        v->hidden[i].active));
        return json_pack("{s:s?, s:s?, s:o, s:o}", "cache_root", v->cache_root, "caches_off", v->caches_off,
                         "caches", caches, "hidden", hidden);
}

static int print_json(const struct txbox_probe *p, int n, bool broken, const struct global_opts *g,
                      const struct txbox_home_view *home)
{
        struct utsname u;
        json_t *probes = json_array(), *o;

        uname(&u);
        for (int i = 0; i < n; i++)
                json_array_append_new(probes, json_pack("{s:s, s:b, s:b, s:s, s:s?}", "name", p[i].name, "ok",
                                                        p[i].ok, "essential", p[i].essential, "detail",
                                                        p[i].detail, "cost", p[i].cost));
        o = json_pack("{s:s, s:s, s:b, s:s, s:b, s:o, s:o*}", "txbox", TXBOX_VERSION, "kernel", u.release,
                      "root", geteuid() == 0, "workspace", cli_workspace(g), "ok", !broken, "probes", probes,
                      "home", home ? home_json(home) : NULL);
        char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        if (!s) {
                cli_error("doctor: cannot encode the result as JSON");
                return EXIT_TXBOX;
        }
        printf("%s\n", s);
        free(s);
        return broken ? EXIT_REFUSED : 0;
}

int cmd_doctor(int argc, char **argv, const struct global_opts *g)
{
        static const struct option opts[] = {
                {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
        struct txbox_probe p[PROBES_MAX];
        struct utsname u;
        bool color = cli_color(stdout), broken = false, json = false;
        int c;

        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'j': json = true; break;
                case 'h': doctor_usage(stdout); return 0;
                default: doctor_usage(stderr); return EXIT_USAGE;
                }
        }
        if (optind < argc) {
                doctor_usage(stderr);
                return EXIT_USAGE;
        }
        int n = txbox_doctor_at(cli_workspace(g), g->state, p, PROBES_MAX);
        for (int i = 0; i < n; i++)
                broken |= !p[i].ok && p[i].essential;
        struct txbox_home_view home;
        struct txbox_error err = {0};
        bool have_home = txbox_home_view(cli_workspace(g), g->state, g->policy, &home, &err) == 0;
        if (json) {
                int r = print_json(p, n, broken, g, have_home ? &home : NULL);
                txbox_home_view_free(have_home ? &home : NULL);
                return r;
        }
        uname(&u);
        printf("txbox %s on Linux %s, %s\n", TXBOX_VERSION, u.release, geteuid() ? "unprivileged" : "root");
        for (int i = 0; i < n; i++) {
                const char *tag = p[i].ok ? "ok" : p[i].essential ? "MISSING" : "missing";
                printf("  %s%-8s%s %-32s ", color ? (p[i].ok ? "\033[32m" : "\033[31m") : "", tag,
                       color ? "\033[0m" : "", p[i].name);
                cli_human(stdout, p[i].detail);
                putchar('\n');
                if (!p[i].ok)
                        printf("           %-32s cost: %s\n", "", p[i].cost);
        }
        printf("%s\n", broken ? "txbox cannot isolate programs here: fix the MISSING lines above"
                              : "the sandbox's boundary holds here; see docs/SECURITY.md for what each "
                                "protection covers");
        if (have_home)
                print_home(&home);
        else if (err.code) {
                printf("home: ");
                cli_human(stdout, err.msg);
                putchar('\n');
        }
        txbox_home_view_free(have_home ? &home : NULL);
        check_agents(g);
        return broken ? EXIT_REFUSED : 0;
}
