/* The transaction's life through the library (tx.c): begin, run, finish by hand; a kept
 * transaction stays pending with nothing in the workspace, loads by a unique id prefix,
 * commits later or rolls back leaving the workspace as it was; a failed command and
 * --discard roll back; a finished transaction, an unknown id and a second load of one
 * pending transaction are refused.  Only harmless commands run (this test is not jailed),
 * in its own workspace under TMPDIR.
 *
 * tests/run.sh runs this as root and as an unprivileged user (as-user). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "txbox.h"

static char dir[200], ws_path[256];

/* Run shell through the driver in mode; the outcome's name, the id in id. */
static const char *run(struct txbox_ws *ws, const char *shell, enum txbox_commit_mode mode, char *id)
{
        static char out[32];
        struct txbox_command cmd = {.shell = shell, .mode = mode};
        struct txbox_command_result res;
        struct txbox_error err = {0};

        id[0] = '\0';
        if (txbox_command_run(ws, &cmd, &res, &err) < 0) {
                printf("# txbox_command_run: %s\n", err.msg);
                return "error";
        }
        snprintf(id, 32, "%s", res.rec.id);
        snprintf(out, sizeof(out), "%s", txbox_outcome_name(res.rec.outcome));
        txbox_command_result_clear(&res);
        return out;
}

static bool in_ws(const char *name)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", ws_path, name);
        return access(path, F_OK) == 0;
}

/* begin, run, finish by hand, as txbox run does without the driver. */
static void test_by_hand(struct txbox_ws *ws)
{
        char *argv[] = {"/bin/sh", "-c", "echo hand > byhand", NULL};
        struct txbox_run_opts opts = {0};
        struct txbox_run_result res = {0};
        struct txbox_error err = {0};
        struct txbox_tx *tx = NULL;
        const char *why = NULL;
        int status = -1;

        ok(txbox_tx_begin(ws, argv, &tx, &err) == 0, "begin: %s", err.msg);
        if (!tx)
                return;
        is_int(txbox_tx_check_policy(tx, NULL, NULL, &err), 1, "the policy lets it run");
        ok(txbox_tx_run(tx, &opts, &res, &err) == 0, "run: %s", err.msg);
        is_int(res.exit_code, 0, "it exited 0");
        ok(!in_ws("byhand"), "before the finish its file is not in the workspace");
        ok(txbox_tx_finish(tx, TXBOX_COMMIT_AUTO, &res, &status, &why, &err) == 0, "finish: %s", err.msg);
        is_int(status, 0, "status 0");
        is_str(txbox_outcome_name(txbox_tx_record(tx)->outcome), "committed", "committed");
        ok(txbox_tx_record(tx)->npaths == 1 && !strcmp(txbox_tx_record(tx)->paths[0].path, "byhand"),
           "its record lists the one path");
        txbox_tx_free(tx);
        ok(in_ws("byhand"), "its file is in the workspace");
}

int main(void)
{
        struct txbox_ws *ws = NULL;
        struct txbox_error err = {0};
        struct txbox_tx *tx = NULL, *tx2 = NULL;
        char id[32], id2[32], prefix[16];

        if (!tap_workspace(dir, sizeof(dir), "txbox-tx", ws_path, sizeof(ws_path)))
                return 1;
        ok(txbox_ws_open(ws_path, NULL, TXBOX_OPEN_RECOVER, &ws, &err) == 0, "open the workspace: %s",
           err.msg);
        if (!ws)
                return tap_done();

        test_by_hand(ws);

        /* Kept, then committed by a prefix of its id. */
        is_str(run(ws, "echo kept > kept", TXBOX_COMMIT_KEEP, id), "pending", "--keep leaves it pending");
        ok(!in_ws("kept"), "nothing in the workspace yet");
        snprintf(prefix, sizeof(prefix), "%.6s", id);
        ok(txbox_tx_load(ws, prefix, &tx, &err) == 0, "loaded by the prefix %s: %s", prefix, err.msg);
        if (tx) {
                is_str(txbox_tx_record(tx)->id, id, "the right one");
                is_int(txbox_tx_load(ws, id, &tx2, &err) < 0, 1, "a second load while it is held is refused");
                ok(err.msg[0], "saying why: %s", err.msg);
                txbox_tx_free(tx2);
                ok(txbox_tx_evaluate(tx, &err) >= 0 && txbox_tx_commit(tx, &err) == 0, "committed later: %s",
                   err.msg);
                txbox_tx_free(tx);
                tx = NULL;
        }
        ok(in_ws("kept"), "its file is in the workspace");
        is_int(txbox_tx_load(ws, id, &tx, &err), -EINVAL, "a committed one no longer loads");
        ok(strstr(err.msg, "not pending"), "it is not pending");
        txbox_tx_free(tx);
        tx = NULL;

        /* Kept, then rolled back. */
        is_str(run(ws, "echo gone > gone; rm kept", TXBOX_COMMIT_KEEP, id), "pending", "another kept");
        ok(txbox_tx_load(ws, id, &tx, &err) == 0 && txbox_tx_rollback(tx, "test", &err) == 0,
           "rolled back: %s", err.msg);
        txbox_tx_free(tx);
        tx = NULL;
        ok(!in_ws("gone") && in_ws("kept"), "the workspace as it was");
        is_int(txbox_tx_load(ws, id, &tx, &err), -EINVAL, "a rolled back one no longer loads");
        txbox_tx_free(tx);
        tx = NULL;

        /* A failed command, --discard: rolled back at once. */
        is_str(run(ws, "echo f > failed; exit 4", TXBOX_COMMIT_AUTO, id), "rolled_back", "a failed command");
        ok(!in_ws("failed"), "left nothing");
        is_str(run(ws, "echo d > discarded", TXBOX_COMMIT_DISCARD, id2), "rolled_back", "--discard");
        ok(!in_ws("discarded"), "left nothing");
        ok(strcmp(id, id2), "each transaction has its own id");

        is_int(txbox_tx_load(ws, "0123456789abcdef", &tx, &err), -ENOENT, "an unknown id is refused");
        txbox_tx_free(tx);

        txbox_ws_close(ws);
        tap_rmtree(dir);
        return tap_done();
}
