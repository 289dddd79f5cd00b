/* txbox begin: open a session transaction of several commands. */
#define _GNU_SOURCE
#include <string.h>

#include "cli.h"

static void begin_usage(FILE *f)
{
        fprintf(f, "Usage: txbox begin [--json]\n\n"
                   "Open a session: a pending transaction that several commands add to, one\n"
                   "savepoint each (txbox run --tx ID -- COMMAND).  A command that fails drops only\n"
                   "its own savepoint.  txbox rollback ID --to N drops the savepoints above N;\n"
                   "txbox commit ID applies all of them at once, atomically; txbox rollback ID drops\n"
                   "the session.  Prints the session's id (with --json: {\"tx\": \"ID\"}).\n");
}

int cmd_begin(int argc, char **argv, const struct global_opts *g)
{
        struct txbox_record rec = {0};
        struct txbox_error err = {0};
        bool json = argc == 2 && !strcmp(argv[1], "--json");

        if (cli_wants_help(argc, argv)) {
                begin_usage(stdout);
                return 0;
        }
        if (argc > 2 || (argc == 2 && !json)) {
                begin_usage(stderr);
                return EXIT_USAGE;
        }
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_RECOVER);
        if (!ws)
                return EXIT_TXBOX;
        int r = txbox_session_begin(ws, &rec, &err);
        if (r < 0)
                cli_error("%s", err.msg);
        else if (json)
                printf("{\"tx\": \"%s\"}\n", rec.id); /* ids are hex: nothing to escape */
        else
                printf("%s\n", rec.id);
        txbox_record_clear(&rec);
        txbox_ws_close(ws);
        return r < 0 ? EXIT_TXBOX : 0;
}
