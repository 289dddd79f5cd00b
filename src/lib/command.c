/* One command as one transaction, output captured: what the MCP server and the agent loop
 * run for every tool call. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>

#include "record.h"
#include "tx.h"

#define DEFAULT_OUTPUT_CAP (64 * 1024)

/* The program's stdout and stderr go to pipes that a thread of ours drains while it runs,
 * keeping the first cap bytes of each and counting the rest: what the program writes costs
 * us no more than cap, however much it writes (a memfd kept all of it, in our memory), and
 * the program sees its writes succeed, as on a terminal. */
struct capture {
        int fd[2];      /* read ends */
        char *buf[2];   /* cap + 1 bytes each, allocated before the thread starts */
        size_t len[2];
        uint64_t total[2];
        size_t cap;
        pthread_t thread;
        bool running;
};

/* The thread allocates nothing and takes no lock: a sandbox may be cloned (a raw clone,
 * which runs no fork handlers) while it runs. */
static void *capture_main(void *arg)
{
        struct capture *c = arg;
        char scratch[16384];
        bool open[2] = {true, true};

        while (open[0] || open[1]) {
                struct pollfd p[2] = {{.fd = open[0] ? c->fd[0] : -1, .events = POLLIN},
                                      {.fd = open[1] ? c->fd[1] : -1, .events = POLLIN}};
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                for (int i = 0; i < 2; i++) {
                        if (!p[i].revents)
                                continue;
                        size_t room = c->cap - c->len[i];
                        char *dst = room ? c->buf[i] + c->len[i] : scratch;
                        ssize_t n = read(c->fd[i], dst, room ? room : sizeof(scratch));
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n <= 0) {
                                open[i] = false;
                                continue;
                        }
                        if (room)
                                c->len[i] += (size_t)n;
                        c->total[i] += (uint64_t)n;
                }
        }
        return NULL;
}

/* Pipes for stdout and stderr (write ends in w) and the thread that drains them. */
static int capture_start(struct capture *c, size_t cap, int w[2])
{
        int p[2][2] = {{-1, -1}, {-1, -1}};

        memset(c, 0, sizeof(*c));
        c->fd[0] = c->fd[1] = w[0] = w[1] = -1;
        c->cap = cap;
        if (pipe2(p[0], O_CLOEXEC) < 0 || pipe2(p[1], O_CLOEXEC) < 0) {
                int e = errno;
                for (int i = 0; i < 2; i++)
                        closep(&p[i][0]), closep(&p[i][1]);
                return -e;
        }
        for (int i = 0; i < 2; i++) {
                c->fd[i] = p[i][0];
                w[i] = p[i][1];
                c->buf[i] = xmalloc(cap + 1);
        }
        int r = thread_start(&c->thread, capture_main, c);
        if (r != 0) {
                for (int i = 0; i < 2; i++) {
                        closep(&w[i]);
                        closep(&c->fd[i]);
                        free(TAKE_PTR(c->buf[i]));
                }
                return -r;
        }
        c->running = true;
        return 0;
}

/* Once every writer is gone (our write ends closed, the sandbox's processes ended): wait
 * for the thread and hand over what it kept. */
static void capture_finish(struct capture *c, struct txbox_command_result *res)
{
        if (c->running)
                pthread_join(c->thread, NULL);
        c->running = false;
        char **out[2] = {&res->out, &res->err};
        bool *cut[2] = {&res->out_truncated, &res->err_truncated};
        for (int i = 0; i < 2; i++) {
                closep(&c->fd[i]);
                if (!c->buf[i])
                        continue;
                c->buf[i][c->len[i]] = '\0';
                free(*out[i]);
                *out[i] = TAKE_PTR(c->buf[i]);
                *cut[i] = c->total[i] > c->len[i];
        }
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
                res->status = allowed < 0 ? TXBOX_EXIT_TXBOX : TXBOX_EXIT_DENIED;
                set_why(res, allowed < 0 ? err->msg : txbox_tx_record(tx)->message);
                if (allowed < 0)
                        txbox_tx_abort(tx, err->msg, &e2);
                return;
        }
        struct capture c;
        int w[2], cr = 0;
        _cleanup_close_ int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (in < 0 || (cr = capture_start(&c, cap, w)) < 0) {
                tx_err(err, in < 0 ? errno : -cr, "cannot set up the program's output: %s",
                       strerror(in < 0 ? errno : -cr));
                set_why(res, err->msg);
                txbox_tx_abort(tx, err->msg, &e2);
                return;
        }
        opts.cwd = cwd;
        opts.stdio_redirect = true;
        opts.stdio[0] = in, opts.stdio[1] = w[0], opts.stdio[2] = w[1];
        int rr_r = txbox_tx_run(tx, &opts, &rr, err);
        /* Every process of the sandbox has ended: ours are the last write ends. */
        closep(&w[0]);
        closep(&w[1]);
        capture_finish(&c, res);
        if (rr_r < 0) {
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
}

int txbox_command_run(struct txbox_ws *ws, const struct txbox_command *cmd, struct txbox_command_result *res,
                      struct txbox_error *err)
{
        char *shell_argv[] = {"/bin/sh", "-c", (char *)cmd->shell, NULL};
        char *const *argv = cmd->shell ? shell_argv : cmd->argv;
        struct txbox_tx *tx = NULL;
        int r;

        memset(res, 0, sizeof(*res));
        res->status = TXBOX_EXIT_TXBOX;
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
