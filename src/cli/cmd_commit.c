/* txbox commit TX: apply a pending transaction. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/cleanup.h"
#include "base/mem.h"
#include "base/str.h"

static void commit_usage(FILE *f)
{
        fprintf(f, "Usage: txbox commit [--allow-effect=RULE[,RULE]] TX\n\n"
                   "Commit pending transaction TX (left by run --commit=keep): its changes are\n"
                   "checked again and applied atomically; the originals are kept for txbox undo.\n"
                   "When a path it changes was changed since it began, it is rolled back instead\n"
                   "(exit 122): first committer wins; run the command again.\n\n"
                   "  --allow-effect=RULE[,RULE]  commit it although it breaks these effect rules,\n"
                   "                              as the user's own choice (effect-lost-work,\n"
                   "                              effect-mass-deletion, effect-git-integrity,\n"
                   "                              effect-git-internals, effect-protected-path,\n"
                   "                              effect-file-size); repeatable; the record says so\n");
}

int cmd_commit(int argc, char **argv, const struct global_opts *g)
{
        struct txbox_tx *tx = NULL;
        struct txbox_error err = {0};
        int r;

        if (cli_wants_help(argc, argv)) {
                commit_usage(stdout);
                return 0;
        }
        _cleanup_free_ char *allow = NULL;
        const char *id = NULL;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *rules = NULL;
                if (!strcmp(a, "--allow-effect") && i + 1 < argc)
                        rules = argv[++i];
                else if (str_has_prefix(a, "--allow-effect="))
                        rules = a + 15;
                if (rules) {
                        char *joined = allow ? xasprintf("%s,%s", allow, rules) : xstrdup(rules);
                        free(allow);
                        allow = joined;
                } else if (!strcmp(a, "--") && i + 2 == argc && !id) {
                        id = argv[++i];
                } else if (a[0] == '-' || id) {
                        commit_usage(stderr);
                        return EXIT_USAGE;
                } else
                        id = a;
        }
        if (!id) {
                commit_usage(stderr);
                return EXIT_USAGE;
        }
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_RECOVER);
        if (!ws)
                return EXIT_TXBOX;
        if (txbox_ws_allow_effects(ws, allow, &err) < 0) {
                cli_error("%s", err.msg);
                txbox_ws_close(ws);
                return EXIT_USAGE;
        }
        if ((r = txbox_tx_load(ws, id, &tx, &err)) == 0 && (r = txbox_tx_evaluate(tx, &err)) >= 0)
                r = txbox_tx_commit(tx, &err);
        if (r == -EAGAIN) {
                /* First committer wins: this one lost; drop it so the agent can run it again. */
                struct txbox_error e2;
                cli_error("rolled back tx %s: %s", txbox_tx_record(tx)->id, err.msg);
                txbox_tx_rollback(tx, err.msg, &e2);
                txbox_tx_free(tx);
                txbox_ws_close(ws);
                return EXIT_CONFLICT;
        }
        if (r < 0)
                cli_error("%s", err.msg);
        else
                printf("committed tx %s (%zu change%s)\n", txbox_tx_record(tx)->id,
                       txbox_tx_record(tx)->npaths, txbox_tx_record(tx)->npaths == 1 ? "" : "s");
        txbox_tx_free(tx);
        txbox_ws_close(ws);
        return r < 0 ? EXIT_REFUSED : 0;
}
