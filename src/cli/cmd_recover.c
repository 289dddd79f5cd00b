/* txbox recover: bring interrupted transactions to a whole state. */
#define _GNU_SOURCE
#include "cli.h"

static void recover_usage(FILE *f)
{
        fprintf(f, "Usage: txbox recover\n\n"
                   "Bring every interrupted transaction to a whole state: a commit or undo cut short\n"
                   "(crash, kill, full disk) before its completion marker is reverted, so the\n"
                   "workspace is exactly as before it; one that had written its marker is completed;\n"
                   "runs whose txbox process died are rolled back.  Every verb that changes the\n"
                   "workspace does this first; run it by hand after a crash to see what it did.\n");
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
        struct txbox_ws *ws = cli_open(g, 0);
        if (!ws)
                return EXIT_TXBOX;
        int r = txbox_recover(ws, &st, &err);
        if (r < 0)
                cli_error("%s", err.msg);
        else
                printf("recovered: %u rolled back, %u completed\n", st.rolled_back, st.completed);
        txbox_ws_close(ws);
        return r < 0 ? EXIT_REFUSED : 0;
}
