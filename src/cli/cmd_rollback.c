/* txbox rollback TX: drop a pending transaction. */
#define _GNU_SOURCE
#include "cli.h"

static void rollback_usage(FILE *f)
{
        fprintf(f, "Usage: txbox rollback TX\n\n"
                   "Roll back pending transaction TX: its changes are discarded and the workspace\n"
                   "stays as it is.  (Committed transactions are reverted with txbox undo.)\n");
}

int cmd_rollback(int argc, char **argv, const struct global_opts *g)
{
        struct txbox_tx *tx = NULL;
        struct txbox_error err = {0};
        int r;

        if (cli_wants_help(argc, argv)) {
                rollback_usage(stdout);
                return 0;
        }
        if (argc != 2) {
                rollback_usage(stderr);
                return EXIT_USAGE;
        }
        struct txbox_ws *ws = cli_open(g, true);
        if (!ws)
                return EXIT_TXBOX;
        if ((r = txbox_tx_load(ws, argv[1], &tx, &err)) == 0)
                r = txbox_tx_rollback(tx, "rolled back by txbox rollback", &err);
        if (r < 0)
                cli_error("%s", err.msg);
        else
                printf("rolled back tx %s\n", txbox_tx_record(tx)->id);
        txbox_tx_free(tx);
        txbox_ws_close(ws);
        return r < 0 ? EXIT_REFUSED : 0;
}
