/* One command as one transaction, output captured: what the MCP server and the agent loop
 * run for every tool call. */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "record.h"
#include "tx.h"

#define DEFAULT_OUTPUT_CAP (64 * 1024)

/* The first cap bytes of a memfd the program wrote, and whether there was more. */
static char *read_capped(int fd, size_t cap, bool *truncated)
{
        struct stat st;
        char *buf = xmalloc(cap + 1);
        ssize_t n = fstat(fd, &st) == 0 ? pread(fd, buf, cap, 0) : -1;

        if (n < 0)
                n = 0;
        buf[n] = '\0';
        *truncated = st.st_size > (off_t)n;
        return buf;
}

static void set_why(struct txbox_command_result *res, const char *why)
{
        free(res->why);
        res->why = xstrdup_or_null(why);
}

/* Begin the next command's transaction and start its sandbox now: its init sets up the
 * mounts while this one commits and the caller answers; the next command then only starts
 * its program.  Placeholder argv until the command is known (tx_set_command). */
/* Start tx's sandbox for a command's options, with stdio redirected as run_checked asks. */
static void prestart(struct txbox_tx *tx, const struct txbox_run_opts *opts)
{
        struct txbox_run_opts pre = opts ? *opts : (struct txbox_run_opts){0};
        pre.stdio_redirect = true;
        txbox_tx_prestart(tx, &pre);
}

void command_prepare_upto(struct txbox_ws *ws, const struct txbox_run_opts *opts, int n)
{
        char *argv[] = {"/bin/sh", "-c", "", NULL};
        struct txbox_error e;
        struct txbox_tx *tx;

        /* A server runs many commands: its sandboxes share one user and network namespace. */
        if (!ws->shared_ns_tried) {
                struct idmap m;
                ws->shared_ns_tried = true;
                if (idmap_plan(&m, &e) < 0 || sandbox_shared_ns_open(&m, &ws->shared_ns, &e) < 0)
                        ws->shared_ns = NULL; /* each sandbox makes its own, as a one-shot run does */
        }
        for (int i = 0; i < n && i < WS_PREPARED_MAX; i++) {
                if (ws->prepared[i])
                        continue;
                if (txbox_tx_begin(ws, argv, &tx, &e) < 0)
                        return;
                prestart(tx, opts);
                if (!tx->sb) {
                        tx_discard(tx);
                        return;
                }
                ws->prepared[i] = tx;
        }
}

void txbox_command_prepare(struct txbox_ws *ws, const struct txbox_run_opts *opts)
{
        command_prepare_upto(ws, opts, 1);
}

/* The oldest prepared transaction (its sandbox has had the longest to get ready). */
static struct txbox_tx *take_prepared(struct txbox_ws *ws)
{
        struct txbox_tx *tx = ws->prepared[0];

        memmove(ws->prepared, ws->prepared + 1, (WS_PREPARED_MAX - 1) * sizeof(ws->prepared[0]));
        ws->prepared[WS_PREPARED_MAX - 1] = NULL;
        return tx;
}

/* Policy check, run with captured stdio, then the decision; fills res->status and res->why. */
static void run_checked(struct txbox_tx *tx, const struct txbox_command *cmd, const char *cwd,
                        struct txbox_command_result *res, struct txbox_error *err)
{
        struct txbox_error e2;
        struct txbox_run_result rr;
        struct txbox_run_opts opts = cmd->opts;
        size_t cap = cmd->output_cap ? cmd->output_cap : DEFAULT_OUTPUT_CAP;
        const char *why = NULL;
        int allowed = txbox_tx_check_policy(tx, cmd->shell, cwd, err);

        if (allowed <= 0) {
                res->status = allowed < 0 ? 125 : 126;
                set_why(res, allowed < 0 ? err->msg : txbox_tx_record(tx)->message);
                if (allowed < 0)
                        txbox_tx_abort(tx, err->msg, &e2);
                return;
        }
        _cleanup_close_ int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int out = memfd_create("txbox-stdout", MFD_CLOEXEC);
        _cleanup_close_ int errfd = memfd_create("txbox-stderr", MFD_CLOEXEC);
        if (in < 0 || out < 0 || errfd < 0) {
                tx_err(err, errno, "cannot set up the program's output: %s", strerror(errno));
                set_why(res, err->msg);
                txbox_tx_abort(tx, err->msg, &e2);
                return;
        }
        opts.cwd = cwd;
        opts.stdio_redirect = true;
        opts.stdio[0] = in, opts.stdio[1] = out, opts.stdio[2] = errfd;
        if (txbox_tx_run(tx, &opts, &rr, err) < 0) {
                set_why(res, err->msg);
                txbox_tx_abort(tx, err->msg, &e2);
                return;
        }
        res->cancelled = rr.cancelled;
        res->cancel_signal = rr.cancel_signal;
        if (cmd->prepare_next && !rr.cancelled)
                txbox_command_prepare(tx->ws, &opts);
        if (rr.exec_failed)
                set_why(res, err->msg);
        if (txbox_tx_finish(tx, cmd->mode, &rr, &res->status, &why, err) < 0)
                set_why(res, err->msg);
        else if (why)
                set_why(res, why);
        res->out = read_capped(out, cap, &res->out_truncated);
        res->err = read_capped(errfd, cap, &res->err_truncated);
}

int txbox_command_run(struct txbox_ws *ws, const struct txbox_command *cmd, struct txbox_command_result *res,
                      struct txbox_error *err)
{
        char *shell_argv[] = {"/bin/sh", "-c", (char *)cmd->shell, NULL};
        char *const *argv = cmd->shell ? shell_argv : cmd->argv;
        struct txbox_tx *tx = NULL;
        int r;

        memset(res, 0, sizeof(*res));
        res->status = 125;
        if (!argv || !argv[0])
                return tx_err(err, EINVAL, "no command given");
        if (!cmd->session && ws->prepared[0]) {
                tx = take_prepared(ws);
                tx_set_command(tx, argv);
                r = 0;
        } else {
                r = cmd->session ? txbox_session_savepoint(ws, cmd->session, argv, &tx, err)
                                 : txbox_tx_begin(ws, argv, &tx, err);
        }
        if (r < 0)
                return r;
        /* The record names where the command runs, not where the server was started. */
        const char *cwd = cmd->cwd ? cmd->cwd : ws->path;
        free(tx->rec.cwd);
        tx->rec.cwd = xstrdup(cwd);
        prestart(tx, &cmd->opts);
        run_checked(tx, cmd, cwd, res, err);
        if (!res->out)
                res->out = xstrdup("");
        if (!res->err)
                res->err = xstrdup("");
        record_copy(&res->rec, txbox_tx_record(tx));
        txbox_tx_free(tx);
        return 0;
}

void txbox_command_result_clear(struct txbox_command_result *res)
{
        txbox_record_clear(&res->rec);
        free(res->why);
        free(res->out);
        free(res->err);
        memset(res, 0, sizeof(*res));
}
