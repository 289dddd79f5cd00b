/* The transactions a server keeps prepared (the MCP server, the agent loop): begun, their
 * sandbox started with the options of the server's last command, so that the next command
 * only starts its program while the sandbox's init has set up its mounts in the meantime.
 * At most WS_PREPARED_MAX; taken oldest first; discarded at the workspace's close
 * (txbox_ws_close).  A prepared transaction has a placeholder command until it is taken
 * (tx_set_command).  Its output is captured: a server's commands never get its stdio. */
#define _GNU_SOURCE
#include <string.h>

#include "base/error.h"
#include "sandbox/sandbox.h"
#include "txbox.h"
#include "txn/tx.h"

/* A server runs many commands: its sandboxes share one user and network namespace, made at
 * its first prepared transaction.  Without it each sandbox makes its own, as a one-shot run
 * does. */
static void open_shared_ns(struct txbox_ws *ws)
{
        struct txbox_error e;
        struct idmap m;

        if (ws->shared_ns_tried)
                return;
        ws->shared_ns_tried = true;
        if (idmap_plan(&m, &e) < 0 || sandbox_shared_ns_open(&m, &ws->shared_ns, &e) < 0)
                ws->shared_ns = NULL;
}

void ws_prepare_upto(struct txbox_ws *ws, const struct txbox_run_opts *opts, int n)
{
        char *argv[] = {"/bin/sh", "-c", "", NULL};
        struct txbox_run_opts pre = opts ? *opts : (struct txbox_run_opts){0};
        struct txbox_error e;
        struct txbox_tx *tx;

        pre.stdio_redirect = true;
        open_shared_ns(ws);
        for (int i = 0; i < n && i < WS_PREPARED_MAX; i++) {
                if (ws->prepared[i])
                        continue;
                if (txbox_tx_begin(ws, argv, &tx, &e) < 0)
                        return; /* silent: the command then begins its own */
                txbox_tx_prestart(tx, &pre);
                if (!tx->sb) {
                        tx_discard(tx);
                        return;
                }
                ws->prepared[i] = tx;
        }
}

struct txbox_tx *ws_take_prepared(struct txbox_ws *ws)
{
        struct txbox_tx *tx = ws->prepared[0];

        memmove(ws->prepared, ws->prepared + 1, (WS_PREPARED_MAX - 1) * sizeof(ws->prepared[0]));
        ws->prepared[WS_PREPARED_MAX - 1] = NULL;
        return tx;
}

void ws_discard_prepared(struct txbox_ws *ws)
{
        for (int i = 0; i < WS_PREPARED_MAX; i++) {
                tx_discard(ws->prepared[i]);
                ws->prepared[i] = NULL;
        }
}
