/* txbox recover: bring interrupted transactions to a whole state. */
#define _GNU_SOURCE
#include "cli.h"

static void recover_usage(FILE *f)
{
        fprintf(f, "Usage: txbox recover\n\n"
                   "Bring every interrupted transaction to a whole state.  A commit is decided once\n"
                   "its journal is durable: one cut short after that (crash, kill) is completed, one\n"
                   "cut short before it, or one that failed and was being reverted, is rolled back,\n"
                   "so the workspace is exactly as before it.  An undo cut short is reverted (the\n"
                   "transaction stays committed).  Runs whose txbox process died are rolled back,\n"
                   "and so is every row of the log still running, committing or undoing that no live\n"
                   "txbox process owns (one that could not write its end on a full disk).\n"
                   "A session keeps only its whole savepoints: a step killed while its command ran\n"
                   "or while it was kept is dropped, a rollback --to or a commit's fold cut short is\n"
                   "finished, and a pending transaction killed after its layer was prepared for a\n"
                   "commit is rolled back (that layer can no longer be judged).\n"
                   "Every verb that changes the workspace does the first part itself; run this by\n"
                   "hand after a crash to see what it did.\n\n"
                   "The audit log is checked at every open: a log that lost rows (its -wal deleted,\n"
                   "audit.db truncated or deleted) gets back every committed transaction the state\n"
                   "dir still holds, and one \"(lost)\" row stands for those it holds nothing of; an\n"
                   "audit.db that is no regular file (a FIFO, a symlink) is refused.\n");
}

int cmd_recover(int argc, char **argv, const struct global_opts *g)
{
        struct txbox_recover_stats st = {0};
        struct txbox_error err = {0};

        if (cli_wants_help(argc, argv)) {
                recover_usage(stdout);
                return 0;
        }
        if (argc != 1) {
                recover_usage(stderr);
                return EXIT_USAGE;
        }
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_NOCREATE);
        if (!ws)
                return EXIT_TXBOX;
        int r = txbox_recover_log(ws, &st, &err);
        if (r < 0)
                cli_error("%s", err.msg);
        else
                printf("recovered: %u rolled back, %u completed\n", st.rolled_back, st.completed);
        txbox_ws_close(ws);
        return r < 0 ? EXIT_REFUSED : 0;
}
