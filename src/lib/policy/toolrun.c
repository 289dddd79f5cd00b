/* Package runners and scripts: npx and its kin, the scripts of a package.json or
 * composer.json the input wrote (npm run, yarn, composer ...), environment runners that
 * run the rest of their words (poetry run, bundle exec, direnv exec, nix develop ...),
 * programs that take commands as strings (watchexec, nodemon, concurrently ...),
 * rimraf and del-cli (rm -rf), and the host paths docker and podman mount.  Their table
 * is looked up by tool_handler (tools.c). */
#define _GNU_SOURCE
#include <string.h>

#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"
#include "policy/tools.h"

/* ---- package runners and scripts ---- */

/* The "scripts" of a package.json or composer.json this input wrote: each a command. */
static void json_scripts(struct scan *sc, size_t idx, const char *json, int depth)
{
        const char *s = strstr(json, "\"scripts\"");
        if (!s)
                return;
        s = strchr(s, '{');
        for (int d = 0; s && *s; s++) {
                if (*s == '{')
                        d++;
                else if (*s == '}' && --d == 0)
                        break;
                else if (*s == ':' && d == 1) {
                        const char *q = s + 1 + strspn(s + 1, " \t\n");
                        if (*q != '"')
                                continue;
                        struct strvec v = {0};
                        char *val = xmalloc(strlen(q) + 1), *o = val;
                        for (q++; *q && *q != '"'; q++)
                                *o++ = *q == '\\' && q[1] ? *++q : *q;
                        *o = 0;
                        tool_text_at(sc, idx, val, depth, "a package script that cannot be known");
                        free(val);
                        strv_free(v.v);
                }
        }
}

static void project_file(struct scan *sc, size_t idx, const char *dir, const char *name, const char *kind,
                         int depth)
{
        char *rel = dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
        char *abs = uw_path(sc, idx, rel);
        free(rel);
        const char *t = NULL;
        for (size_t k = sc->text_files.n; abs && k >= 2 && !t; k -= 2)
                if (!strcmp(sc->text_files.v[k - 2], abs))
                        t = sc->text_files.v[k - 1];
        if (t) {
                char *copy = xstrdup(t);
                if (!strcmp(kind, "json"))
                        json_scripts(sc, idx, copy, depth);
                else
                        scan_code(sc, kind, copy, idx, depth + 1);
                free(copy);
        }
        free(abs);
}

/* npx PKG ARGS, npm exec -- PKG, npx -c STRING, and the package scripts npm/yarn/pnpm/bun
 * and composer run (from a package.json this input wrote). */
static void h_npm(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        const char *p = base_name(a[0]);
        const char *dir = NULL;
        bool exec = !strcmp(p, "npx") || !strcmp(p, "pnpx") || !strcmp(p, "bunx") || !strcmp(p, "uvx");
        size_t k = 1;
        for (; k < n && a[k][0] == '-'; k++) {
                if ((!strcmp(a[k], "-C") || !strcmp(a[k], "--prefix") || !strcmp(a[k], "--cwd") ||
                     !strcmp(a[k], "--dir") || !strcmp(a[k], "-d") || !strcmp(a[k], "--working-dir")) &&
                    k + 1 < n)
                        dir = a[++k];
                else if ((!strcmp(a[k], "-p") || !strcmp(a[k], "--package") || !strcmp(a[k], "-w") ||
                          !strcmp(a[k], "--workspace") || !strcmp(a[k], "--from") ||
                          !strcmp(a[k], "--with")) && k + 1 < n)
                        k++;
                else if ((!strcmp(a[k], "-c") || !strcmp(a[k], "--call")) && k + 1 < n)
                        return tool_text_at(sc, idx, a[k + 1], depth,
                                            "npx -c of a command that cannot be known");
                else if (!strncmp(a[k], "--call=", 7))
                        return tool_text_at(sc, idx, a[k] + 7, depth,
                                            "npx -c of a command that cannot be known");
        }
        if (!exec && k < n && (!strcmp(a[k], "exec") || !strcmp(a[k], "x") || !strcmp(a[k], "dlx"))) {
                exec = true;
                for (k++; k < n && a[k][0] == '-'; k++) {
                        if ((!strcmp(a[k], "-c") || !strcmp(a[k], "--call")) && k + 1 < n)
                                return tool_text_at(sc, idx, a[k + 1], depth,
                                                    "npm exec -c of a command that cannot be known");
                        if (!strcmp(a[k], "--"))
                                break;
                        if ((!strcmp(a[k], "-p") || !strcmp(a[k], "--package")) && k + 1 < n)
                                k++;
                }
                if (k < n && !strcmp(a[k], "--"))
                        k++;
        }
        if (exec) {
                if (k >= n)
                        return;
                struct strvec v = {0};
                a = argv_of(sc, idx);
                const char *at = a[k][0] == '@' ? strchr(a[k] + 1, '@') : strchr(a[k], '@');
                strvec_push(&v, at ? strndup(a[k], (size_t)(at - a[k])) : xstrdup(a[k]));
                for (size_t j = k + 1; j < n; j++)
                        strvec_push(&v, xstrdup(a[j]));
                /* a scoped package runs its own binary: @scope/name is name */
                if (v.v[0][0] == '@' && strchr(v.v[0], '/')) {
                        char *b = xstrdup(strchr(v.v[0], '/') + 1);
                        free(v.v[0]);
                        v.v[0] = b;
                }
                uw_run(sc, idx, v.v, v.n, depth);
                strv_free(v.v);
                return;
        }
        if (!strcmp(p, "composer"))
                return project_file(sc, idx, dir, "composer.json", "json", depth);
        if (!strcmp(p, "bundle") || !strcmp(p, "bundler")) {
                project_file(sc, idx, dir, "Gemfile", "ruby", depth);
                if (k < n && !strcmp(a[k], "exec"))
                        tool_run_words(sc, idx, k + 1, depth);
                return;
        }
        project_file(sc, idx, dir, "package.json", "json", depth);
}

/* Runners: PROG SUB [OPTS] CMD ARGS runs CMD (poetry run, bundle exec, conda run ...). */
struct runner {
        const char *prog, *sub;
        struct opts o;
        int skip;          /* operands before the command */
        const char *str;   /* an option whose value is a shell string */
};

static const struct runner runners[] = {
        {"poetry", "run", {"C", LW("directory", "project")}, 0, NULL},
        {"pipenv", "run", {"", NULL}, 0, NULL},
        {"uv", "run", {"pw", LW("python", "with", "with-requirements", "directory", "project", "package",
                                "env-file",
                               "index", "extra", "group")}, 0, NULL},
        {"pdm", "run", {"p", LW("project")}, 0, NULL},
        {"hatch", "run", {"e", LW("env")}, 0, NULL},
        {"conda", "run", {"np", LW("name", "prefix", "cwd")}, 0, NULL},
        {"mamba", "run", {"np", LW("name", "prefix", "cwd")}, 0, NULL},
        {"micromamba", "run", {"np", LW("name", "prefix", "cwd")}, 0, NULL},
        {"pixi", "run", {"e", LW("environment", "manifest-path")}, 0, NULL},
        {"rbenv", "exec", {"", NULL}, 0, NULL},
        {"pyenv", "exec", {"", NULL}, 0, NULL},
        {"asdf", "exec", {"", NULL}, 0, NULL},
        {"mise", "exec", {"C", LW("cd")}, 0, NULL},
        {"mise", "x", {"C", LW("cd")}, 0, NULL},
        {"devbox", "run", {"c", LW("config")}, 0, NULL},
        {"foreman", "run", {"ed", LW("env", "root")}, 0, NULL},
        {"honcho", "run", {"e", LW("env")}, 0, NULL},
        {"toolbox", "run", {"cdr", LW("container", "distro", "release")}, 0, NULL},
        {"distrobox", "enter", {"n", LW("name")}, 0, NULL},
        {"direnv", "exec", {"", NULL}, 1, NULL},
        {"op", "run", {"", LW("env-file")}, 0, NULL},
        {"aws-vault", "exec", {"", LW("duration", "region")}, 1, NULL},
        {"doppler", "run", {"pc", LW("project", "config", "command")}, 0, "command"},
        {"infisical", "run", {"", LW("env", "path", "projectId", "command")}, 0, "command"},
        {"chamber", "exec", {"", NULL}, 1, NULL},
        {"perf", "record", {"eoFcCpt", LW("event", "output", "freq", "count", "cpu", "pid", "tid")}, 0, NULL},
        {"perf", "stat", {"eoCprx", LW("event", "output", "cpu", "pid", "repeat")}, 0, NULL},
        {"perf", "trace", {"eopt", LW("event", "output", "pid", "tid")}, 0, NULL},
        {"rr", "record", {"", NULL}, 0, NULL},
        {"nix", "develop", {"", LW("command")}, 0, NULL},
        {"nix", "shell", {"", LW("command")}, 0, NULL},
        {"cargo", "watch", {"xswi", LW("exec", "shell", "watch", "ignore")}, 0, "shell"},
        {"systemd-nspawn", NULL, {"DMuUS", LW("directory", "machine", "user", "image", "bind", "bind-ro",
                                              "setenv")}, 0, NULL},
};

static void h_runner(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        const char *p = base_name(a[0]);
        for (size_t r = 0; r < ARRAY_SIZE(runners); r++) {
                const struct runner *R = &runners[r];
                if (strcmp(R->prog, p))
                        continue;
                size_t k = 1;
                if (R->sub) {
                        while (k < n && a[k][0] == '-')
                                k++;
                        if (k >= n || strcmp(a[k], R->sub))
                                continue;
                        k++;
                }
                size_t j = uw_skip_opts(a, n, k, &R->o);
                for (size_t q = k; q < j && q < n; q++) {
                        const char *o = a[q];
                        if ((!strcmp(o, "-c") || !strcmp(o, "--command")) && !strcmp(R->prog, "nix") &&
                            q + 1 < n)
                                return tool_run_words(sc, idx, q + 1, depth);
                        if (R->str && o[0] == '-' && o[1] == '-' && !strncmp(o + 2, R->str, strlen(R->str))) {
                                const char *v = o[2 + strlen(R->str)] == '=' ? o + 3 + strlen(R->str)
                                                : q + 1 < n                  ? a[q + 1]
                                                                             : NULL;
                                if (v)
                                        return tool_text_at(sc, idx, v, depth,
                                                            "a runner runs a command that cannot be known");
                        }
                }
                j += (size_t)R->skip;
                if (j < n)
                        tool_run_words(sc, idx, j, depth);
                return;
        }
}

/* String runners: each argument (concurrently, hyperfine, pee) or one option's value
 * (nix-shell --run, nodemon --exec, sops exec-env FILE CMD, watchexec) is a shell string. */
static void h_strings(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        const char *p = base_name(a[0]);
        if (!strcmp(p, "concurrently") || !strcmp(p, "hyperfine") || !strcmp(p, "pee") ||
            !strcmp(p, "npm-run-all")) {
                for (size_t k = 1; k < argc_of(sc, idx); k++) {
                        a = argv_of(sc, idx);
                        if (a[k][0] == '-') {
                                if (strchr(a[k], '=') == NULL &&
                                    (!strcmp(a[k], "-n") || !strcmp(a[k], "--names") ||
                                                                 !strcmp(a[k], "-c") || !strcmp(a[k], "-w") ||
                                                                 !strcmp(a[k], "--warmup") ||
                                                                 !strcmp(a[k], "-r") ||
                                                                 !strcmp(a[k], "--runs") ||
                                                                 !strcmp(a[k], "-p") ||
                                                                 !strcmp(a[k], "--prepare") ||
                                                                 !strcmp(a[k], "--export-json") ||
                                                                 !strcmp(a[k], "--export-markdown")))
                                        k++;
                                continue;
                        }
                        if (strcmp(p, "npm-run-all"))
                                tool_text_at(sc, idx, a[k], depth, "runs a command that cannot be known");
                }
                return;
        }
        if (!strcmp(p, "sops")) {
                for (size_t k = 1; k + 2 < n; k++)
                        if (!strcmp(a[k], "exec-env") || !strcmp(a[k], "exec-file"))
                                return tool_text_at(sc, idx, a[k + 2], depth,
                                                    "sops runs a command that cannot be known");
                return;
        }
        for (size_t k = 1; k < n; k++) {
                a = argv_of(sc, idx);
                const char *o = a[k], *v = NULL;
                if ((!strcmp(o, "--run") || !strcmp(o, "--command") || !strcmp(o, "-x") ||
                     !strcmp(o, "--exec") || !strcmp(o, "-s") || !strcmp(o, "--shell")) &&
                    k + 1 < n)
                        v = a[++k];
                else if (!strncmp(o, "--run=", 6) || !strncmp(o, "--exec=", 7) ||
                         !strncmp(o, "--command=", 10))
                        v = strchr(o, '=') + 1;
                else if (!strcmp(o, "--") &&
                         (!strcmp(p, "watchexec") || !strcmp(p, "entr") || !strcmp(p, "reflex")))
                        return tool_text_words(sc, idx, k + 1, depth, "runs a command that cannot be known");
                if (v)
                        tool_text_at(sc, idx, v, depth, "runs a command that cannot be known");
        }
        if (!strcmp(p, "entr")) { /* entr [-opts] CMD ARGS */
                size_t k = 1;
                while (k < n && a[k][0] == '-')
                        k++;
                tool_run_words(sc, idx, k, depth);
        }
}

/* rimraf, del-cli and trash-like tools delete recursively: as rm -r -f. */
static void h_rimraf(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        struct strvec v = {0};
        strvec_push(&v, xstrdup("rm"));
        strvec_push(&v, xstrdup("-r"));
        strvec_push(&v, xstrdup("-f"));
        for (size_t k = 1; k < n; k++)
                if (a[k][0] != '-')
                        strvec_push(&v, xstrdup(a[k]));
        if (v.n > 3)
                uw_run(sc, idx, v.v, v.n, depth);
        strv_free(v.v);
}

/* docker/podman run -v SRC:DST, --mount source=SRC: the container reads SRC (judged as
 * cat: a secret mounted in is a secret read). */
static void h_docker(struct scan *sc, size_t idx, int depth)
{
        size_t n = argc_of(sc, idx);
        for (size_t k = 1; k < n; k++) {
                char **a = argv_of(sc, idx);
                const char *v = NULL;
                if ((!strcmp(a[k], "-v") || !strcmp(a[k], "--volume")) && k + 1 < n)
                        v = a[++k];
                else if (!strncmp(a[k], "--volume=", 9))
                        v = a[k] + 9;
                else if (!strncmp(a[k], "-v", 2) && a[k][2] && a[k][1] != '-')
                        v = a[k] + 2;
                if (v && (v[0] == '/' || v[0] == '.' || v[0] == '~' || v[0] == UNK)) {
                        char *src = strndup(v, strcspn(v, ":"));
                        if (src && strcmp(src, "/"))
                                tool_read_at(sc, idx, src, depth);
                        free(src);
                }
                const char *m = !strncmp(a[k], "--mount", 7) ? (a[k][7] == '=' ? a[k] + 8
                                                                : k + 1 < n    ? a[k + 1]
                                                                               : NULL)
                                                             : NULL;
                const char *s = m ? strstr(m, "source=")    ? strstr(m, "source=") + 7
                                        : strstr(m, "src=") ? strstr(m, "src=") + 4
                                                            : NULL
                                  : NULL;
                if (s) {
                        char *src = strndup(s, strcspn(s, ","));
                        if (src && strcmp(src, "/"))
                                tool_read_at(sc, idx, src, depth);
                        free(src);
                }
        }
}

const struct tool tool_run_models[] = {
        {"npx", h_npm}, {"pnpx", h_npm}, {"bunx", h_npm}, {"uvx", h_npm}, {"npm", h_npm}, {"pnpm", h_npm},
        {"yarn", h_npm}, {"composer", h_npm}, {"bundle", h_npm}, {"bundler", h_npm}, {"poetry", h_runner},
        {"pipenv", h_runner}, {"uv", h_runner}, {"pdm", h_runner}, {"hatch", h_runner}, {"conda", h_runner},
        {"mamba", h_runner}, {"micromamba", h_runner}, {"pixi", h_runner}, {"rbenv", h_runner},
        {"pyenv", h_runner}, {"asdf", h_runner}, {"mise", h_runner}, {"devbox", h_runner},
        {"foreman", h_runner}, {"honcho", h_runner}, {"toolbox", h_runner}, {"distrobox", h_runner},
        {"direnv", h_runner}, {"op", h_runner}, {"aws-vault", h_runner}, {"doppler", h_runner},
        {"infisical", h_runner}, {"chamber", h_runner}, {"perf", h_runner}, {"rr", h_runner},
        {"nix", h_runner}, {"cargo", h_runner}, {"systemd-nspawn", h_runner}, {"nix-shell", h_strings},
        {"nodemon", h_strings}, {"watchexec", h_strings}, {"entr", h_strings}, {"reflex", h_strings},
        {"concurrently", h_strings}, {"hyperfine", h_strings}, {"pee", h_strings}, {"sops", h_strings},
        {"dotenv", h_strings}, {"rimraf", h_rimraf}, {"del-cli", h_rimraf}, {"docker", h_docker},
        {"podman", h_docker}, {"nerdctl", h_docker}, {NULL, NULL},
};
