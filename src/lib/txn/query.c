/* Reading the log: list and show (the diff is diff.c's). */
#define _GNU_SOURCE
#include <errno.h>

#include "base/error.h"
#include "txn/tx.h"

/* A workspace opened read-only that has no state dir: no transaction ever ran there. */
static int no_such(struct txbox_ws *ws, const char *id, struct txbox_error *err)
{
        if (!id)
                return tx_err(err, ENOENT, "no transactions in workspace '%s' yet", ws->path);
        return tx_err(err, ENOENT, "no transaction '%s': there are no transactions in workspace '%s' yet", id,
                      ws->path);
}

int txbox_log(struct txbox_ws *ws, int limit, struct txbox_record **out, size_t *n, struct txbox_error *err)
{
        if (ws->no_state) {
                *out = NULL;
                *n = 0;
                return 0;
        }
        return audit_list(ws->audit, limit, out, n, err);
}

int txbox_show(struct txbox_ws *ws, const char *id, struct txbox_record *out, struct txbox_error *err)
{
        if (ws->no_state)
                return no_such(ws, id, err);
        return audit_get(ws->audit, id, out, err);
}

int txbox_log_changes(struct txbox_ws *ws, int64_t since, int limit, struct txbox_record **out,
                      int64_t **seqs, size_t *n, struct txbox_error *err)
{
        if (ws->no_state) {
                *out = NULL;
                *seqs = NULL;
                *n = 0;
                return 0;
        }
        return audit_changes(ws->audit, since, limit, out, seqs, n, err);
}
