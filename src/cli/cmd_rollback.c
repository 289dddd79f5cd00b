/* txbox rollback TX: drop a pending transaction. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void rollback_usage(FILE *f)
{
        fprintf(f, "Usage: txbox rollback TX [--to N]\n\n"
                   "Roll back pending transaction TX: its changes are discarded and the workspace\n"
                   "stays as it is.  (Committed transactions are reverted with txbox undo.)\n"
                   "With --to N, TX is a session: only its savepoints above N are dropped (0: all)\n"
                   "and the session stays open.\n");
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
        int to = -1;
        if (argc == 4 && !strcmp(argv[2], "--to")) {
                char *end;
                long v = strtol(argv[3], &end, 10);
                if (*end || v < 0 || v > 1000) {
                        cli_error("rollback: --to %s: expected a savepoint number", argv[3]);
                        return EXIT_USAGE;
                }
                to = (int)v;
        } else if (argc != 2) {
                rollback_usage(stderr);
                return EXIT_USAGE;
        }
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_RECOVER);
        if (!ws)
                return EXIT_TXBOX;
        if (to >= 0) {
                if ((r = txbox_session_rollback_to(ws, argv[1], to, &err)) < 0)
                        cli_error("%s", err.msg);
                else
                        printf("session %s rolled back to savepoint %d\n", argv[1], to);
                txbox_ws_close(ws);
                return r < 0 ? EXIT_REFUSED : 0;
        }
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
