/* txbox show [--json] TX: one transaction's record and changes. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdlib.h>

#include "cli.h"

static void show_usage(FILE *f)
{
        fprintf(f, "Usage: txbox show [--json] [TX]\n\n"
                   "Show transaction TX (an id or a unique prefix of at least 4 characters; default:\n"
                   "the newest): its command, decision, exit status, outcome and changed paths; for a\n"
                   "session, each of its commands and the change of them all.\n\n"
                   "  --json      the JSON record (see txbox(1))\n"
                   "  -h, --help  this help\n");
}

int cmd_show(int argc, char **argv, const struct global_opts *g)
{
        static const struct option opts[] = {
                {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
        struct txbox_record rec = {0};
        struct txbox_error err = {0};
        bool json = false;
        int c;

        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'j': json = true; break;
                case 'h': show_usage(stdout); return 0;
                default: show_usage(stderr); return EXIT_USAGE;
                }
        }
        if (optind < argc - 1) {
                show_usage(stderr);
                return EXIT_USAGE;
        }
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_NOCREATE);
        if (!ws)
                return EXIT_TXBOX;
        int r;
        if (optind < argc)
                r = txbox_show(ws, argv[optind], &rec, &err);
        else { /* the newest */
                struct txbox_record *recs = NULL;
                size_t n = 0;
                r = txbox_log(ws, 1, &recs, &n, &err);
                if (r >= 0 && n == 1) {
                        rec = recs[0];
                        free(recs);
                } else if (r >= 0) {
                        txbox_records_free(recs, n);
                        r = -1;
                        if (!txbox_ws_has_state(ws))
                                cli_no_transactions(g, ws);
                        else
                                cli_error("no transactions in this workspace's log");
                }
        }
        if (r < 0 && err.msg[0])
                cli_error("%s", err.msg);
        else if (json) {
                char *s = txbox_record_json(&rec);
                printf("%s\n", s);
                free(s);
        } else
                print_record_human(stdout, &rec);
        txbox_record_clear(&rec);
        txbox_ws_close(ws);
        return r < 0 ? EXIT_REFUSED : 0;
}
