/* txbox log [--json] [-n N]: transactions, newest first. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdlib.h>

#include "cli.h"

static void log_usage(FILE *f)
{
        fprintf(f, "Usage: txbox log [--json] [-n N]\n\n"
                   "List the workspace's transactions, newest first: id, start time, outcome\n"
                   "(committed, rolled_back, denied, pending, undone), exit status, changes\n"
                   "(+added ~modified -deleted), duration and command.\n\n"
                   "  --json      a JSON array of records (see txbox(1))\n"
                   "  -n N        only the N newest\n"
                   "  -h, --help  this help\n");
}

int cmd_log(int argc, char **argv, const struct global_opts *g)
{
        static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
        struct txbox_record *recs = NULL;
        struct txbox_error err = {0};
        size_t n = 0;
        bool json = false;
        int limit = 0, c;

        while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
                switch (c) {
                case 'j': json = true; break;
                case 'n': {
                        char *end;
                        long v = strtol(optarg, &end, 10);
                        if (*end || v <= 0 || v > 1000000) {
                                cli_error("log: -n %s: expected a positive number", optarg);
                                return EXIT_USAGE;
                        }
                        limit = (int)v;
                        break;
                }
                case 'h': log_usage(stdout); return 0;
                default: log_usage(stderr); return EXIT_USAGE;
                }
        }
        if (optind < argc) {
                log_usage(stderr);
                return EXIT_USAGE;
        }
        struct txbox_ws *ws = cli_open(g, 0);
        if (!ws)
                return EXIT_TXBOX;
        int r = txbox_log(ws, limit, &recs, &n, &err);
        if (r < 0)
                cli_error("%s", err.msg);
        else if (json) {
                char *s = txbox_records_json(recs, n);
                printf("%s\n", s);
                free(s);
        } else
                print_log_table(stdout, recs, n);
        txbox_records_free(recs, n);
        txbox_ws_close(ws);
        return r < 0 ? EXIT_REFUSED : 0;
}
