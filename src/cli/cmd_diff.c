/* txbox diff TX: a unified diff of one transaction's text changes. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/util.h"

static void diff_usage(FILE *f)
{
        fprintf(f, "Usage: txbox diff TX\n\n"
                   "A unified diff of transaction TX's text changes: for a committed one, the\n"
                   "originals against the workspace; for a pending one, the workspace against its\n"
                   "changes.  Coloured on a terminal unless NO_COLOR is set.\n");
}

static void print_colored(const char *s)
{
        while (*s) {
                const char *nl = strchr(s, '\n');
                size_t len = nl ? (size_t)(nl - s + 1) : strlen(s);
                const char *c = "";
                if (!strncmp(s, "+++", 3) || !strncmp(s, "---", 3))
                        c = "\033[1m";
                else if (*s == '+')
                        c = "\033[32m";
                else if (*s == '-')
                        c = "\033[31m";
                else if (*s == '@')
                        c = "\033[36m";
                fputs(c, stdout);
                human_write(stdout, s, nl ? len - 1 : len, HUMAN_KEEP_LINES);
                fputs(*c ? "\033[0m" : "", stdout);
                if (nl)
                        putchar('\n');
                s += len;
        }
}

int cmd_diff(int argc, char **argv, const struct global_opts *g)
{
        struct txbox_error err = {0};
        char *out = NULL;

        if (cli_wants_help(argc, argv)) {
                diff_usage(stdout);
                return 0;
        }
        if (argc != 2) {
                diff_usage(stderr);
                return EXIT_USAGE;
        }
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_NOCREATE);
        if (!ws)
                return EXIT_TXBOX;
        int r = txbox_diff(ws, argv[1], &out, &err);
        if (r < 0)
                cli_error("%s", err.msg);
        else if (cli_color(stdout))
                print_colored(out);
        else /* the files' own bytes: lines pass, controls do not (util.h) */
                human_write(stdout, out, strlen(out), HUMAN_KEEP_LINES);
        free(out);
        txbox_ws_close(ws);
        return r < 0 ? EXIT_REFUSED : 0;
}
