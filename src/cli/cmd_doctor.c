/* txbox doctor: which protections hold on this machine, and what each missing one costs. */
#define _GNU_SOURCE
#include <getopt.h>
#include <jansson.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli.h"

#define PROBES_MAX 32

static void doctor_usage(FILE *f)
{
        fprintf(f, "Usage: txbox [-C DIR] [--state DIR] doctor [--json]\n\n"
                   "Probe every protection txbox uses where it would run: the namespaces, an overlay on\n"
                   "the workspace's own filesystem (-C DIR, default the current directory) with the state\n"
                   "dir beside it, the sandbox's own /proc, seccomp, Landlock and limits; then what a\n"
                   "container around txbox does (user-namespace mapping, seccomp mode, security label) and\n"
                   "the workspace's filesystem type.  Says what each missing protection costs and, inside\n"
                   "a container, which setting brings it back (docs/KUBERNETES.md).\n\n"
                   "  --json      one JSON object: {\"ok\": bool, \"probes\": [{\"name\", \"ok\", \"essential\",\n"
                   "              \"detail\", \"cost\"}], ...}\n"
                   "  -h, --help  this help\n\n"
                   "Exits 1 when txbox cannot run safely here (a MISSING line), 2 on bad usage.\n");
}

static int print_json(const struct txbox_probe *p, int n, bool broken, const struct global_opts *g)
{
        struct utsname u;
        json_t *probes = json_array(), *o;

        uname(&u);
        for (int i = 0; i < n; i++)
                json_array_append_new(probes, json_pack("{s:s, s:b, s:b, s:s, s:s?}", "name", p[i].name, "ok", p[i].ok,
                                                        "essential", p[i].essential, "detail", p[i].detail, "cost",
                                                        p[i].cost));
        o = json_pack("{s:s, s:s, s:b, s:s, s:b, s:o}", "txbox", TXBOX_VERSION, "kernel", u.release, "root",
                      geteuid() == 0, "workspace", g->workspace ? g->workspace : ".", "ok", !broken, "probes", probes);
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
        static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
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
        int n = txbox_doctor_at(g->workspace ? g->workspace : ".", g->state, p, PROBES_MAX);
        for (int i = 0; i < n; i++)
                broken |= !p[i].ok && p[i].essential;
        if (json)
                return print_json(p, n, broken, g);
        uname(&u);
        printf("txbox %s on Linux %s, %s\n", TXBOX_VERSION, u.release, geteuid() ? "unprivileged" : "root");
        for (int i = 0; i < n; i++) {
                const char *tag = p[i].ok ? "ok" : p[i].essential ? "MISSING" : "missing";
                printf("  %s%-8s%s %-32s ", color ? (p[i].ok ? "\033[32m" : "\033[31m") : "", tag, color ? "\033[0m" : "",
                       p[i].name);
                cli_human(stdout, p[i].detail);
                putchar('\n');
                if (!p[i].ok)
                        printf("           %-32s cost: %s\n", "", p[i].cost);
        }
        printf("%s\n", broken ? "txbox cannot isolate programs here: fix the MISSING lines above"
                              : "the sandbox's boundary holds here; see docs/SECURITY.md for what each protection covers");
        return broken ? EXIT_REFUSED : 0;
}
