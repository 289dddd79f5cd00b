/* txbox undo [TX]: put a committed transaction's originals back. */
#define _GNU_SOURCE
#include "cli.h"

static void undo_usage(FILE *f)
{
        fprintf(f, "Usage: txbox undo [TX]\n\n"
                   "Revert committed transaction TX (default: the newest committed one): every path\n"
                   "it changed gets its original back, atomically.  Refuses, naming the paths, when\n"
                   "a later transaction or anything else changed the same paths since.\n");
}

int cmd_undo(int argc, char **argv, const struct global_opts *g)
{
        struct txbox_record rec = {0};
        struct txbox_error err = {0};

        if (cli_wants_help(argc, argv)) {
                undo_usage(stdout);
                return 0;
        }
        if (argc > 2) {
                undo_usage(stderr);
                return EXIT_USAGE;
        }
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_RECOVER);
        if (!ws)
                return EXIT_TXBOX;
        int r = txbox_undo(ws, argc == 2 ? argv[1] : NULL, &rec, &err);
        if (r < 0)
                cli_error("%s", err.msg);
        else
                printf("undid tx %s (%zu path%s restored)\n", rec.id, rec.npaths, rec.npaths == 1 ? "" : "s");
        txbox_record_clear(&rec);
        txbox_ws_close(ws);
        return r < 0 ? EXIT_REFUSED : 0;
}
