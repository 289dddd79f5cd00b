/* txbox doctor: which protections hold on this machine, and what each missing one costs. */
#define _GNU_SOURCE
#include <sys/utsname.h>
#include <unistd.h>

#include "cli.h"

int cmd_doctor(int argc, char **argv, const struct global_opts *g)
{
        struct txbox_probe p[32];
        struct utsname u;
        bool color = cli_color(stdout), broken = false;

        (void)g;
        if (cli_wants_help(argc, argv) || argc != 1) {
                fprintf(argc != 1 && !cli_wants_help(argc, argv) ? stderr : stdout,
                        "Usage: txbox doctor\n\nProbe the kernel for every protection txbox uses and say what each "
                        "missing one costs.\nExits 1 when txbox cannot run safely here.\n");
                return cli_wants_help(argc, argv) ? 0 : EXIT_USAGE;
        }
        int n = txbox_doctor(p, sizeof(p) / sizeof(p[0]));
        uname(&u);
        printf("txbox %s on Linux %s, %s\n", TXBOX_VERSION, u.release, geteuid() ? "unprivileged" : "root");
        for (int i = 0; i < n; i++) {
                const char *tag = p[i].ok ? "ok" : p[i].essential ? "MISSING" : "missing";
                printf("  %s%-8s%s %-32s %s\n", color ? (p[i].ok ? "\033[32m" : "\033[31m") : "", tag,
                       color ? "\033[0m" : "", p[i].name, p[i].detail);
                if (!p[i].ok)
                        printf("           %-32s cost: %s\n", "", p[i].cost);
                broken |= !p[i].ok && p[i].essential;
        }
        printf("%s\n", broken ? "txbox cannot isolate programs here: fix the MISSING lines above"
                              : "the sandbox's boundary holds here; see docs/SECURITY.md for what each protection covers");
        return broken ? EXIT_REFUSED : 0;
}
