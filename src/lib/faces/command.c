/* One command as one transaction: the one driver of begin -> prestart -> check -> run ->
 * finish.  The MCP server and the agent loop run every tool call through it with the output
 * captured; txbox run and sh (src/cli/transact.c) with the terminal's stdio, printing what
 * its step callback tells. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/process.h"
#include "store/record.h"
#include "txbox.h"
#include "txn/tx.h"

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

/* Start tx's sandbox for a command's options, with stdio redirected as run_checked asks
 * when it captures the output. */
static void prestart_captured(struct txbox_tx *tx, const struct txbox_run_opts *opts)
{
        struct txbox_run_opts pre = opts ? *opts : (struct txbox_run_opts){0};
        pre.stdio_redirect = true;
        txbox_tx_prestart(tx, &pre);
}

/* Begin the next command's transaction and start its sandbox with opts (net, limits, env;
 * the cwd, stdio and timeout are the command's own), unless one is prepared already (the
 * workspace's spares, txn/spares.c): txbox_command_run then takes it for a command without a
 * session.  Failures are silent (the command then starts its own). */
static void command_prepare(struct txbox_ws *ws, const struct txbox_run_opts *opts)
{
        ws_prepare_upto(ws, opts, 1);
}

/* Tell cmd->step, and keep the reason as res->why (a warning is only told). */
static void step(const struct txbox_command *cmd, struct txbox_command_result *res, enum txbox_step st,
                 const char *msg)
{
        if (msg && st != TXBOX_STEP_WARNING)
                set_why(res, msg);
        if (cmd->step)
                cmd->step(cmd->ctx, st, msg);
}

/* Give up on a run that could not take place: say why, then roll it back. */
static void fail(struct txbox_tx *tx, const struct txbox_command *cmd, struct txbox_command_result *res,
                 const char *msg)
{
        struct txbox_error e2;
        step(cmd, res, TXBOX_STEP_FAILED, msg);
        txbox_tx_abort(tx, msg, &e2);
}

/* Empty stdin and capture pipes for the program's stdio in opts. */
static int capture_setup(struct capture *c, size_t cap, struct txbox_run_opts *opts, int w[2],
                         struct txbox_error *err)
{
        int cr = 0;
        int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (in < 0 || (cr = capture_start(c, cap, w)) < 0) {
                int e = in < 0 ? errno : -cr;
                closep(&in);
                return tx_err(err, e, "cannot set up the program's output: %s", strerror(e));
        }
        opts->stdio_redirect = true;
        opts->stdio[0] = in, opts->stdio[1] = w[0], opts->stdio[2] = w[1];
        return 0;
}

/* Start tx's sandbox for the command's options: as given with own_stdio, else redirected. */
static void prestart(struct txbox_tx *tx, const struct txbox_command *cmd, const struct txbox_run_opts *opts)
{
        if (cmd->own_stdio)
                txbox_tx_prestart(tx, opts);
        else
                prestart_captured(tx, opts);
}

/* The notice for a program that failed on the read-only home: txbox sees none of the
 * program's failed opens, but where it captures the output it sees the program say so
 * (EROFS's message, as libc, Python, node and Go print it).  The program's stdio when
 * own_stdio is its caller's: no notice there (docs/SECURITY.md, "Writable caches"). */
#define EROFS_NOTICE                                                                                       \
        "the program met a read-only file system: in the sandbox only the workspace, /tmp and the "   \
        "caches under $HOME (~/.cache, ~/.npm, ...; txbox doctor lists them) are writable; write in the " \
        "workspace or /tmp (a tool's --prefix, --cache or TMPDIR), or add the path to the policy's "  \
        "sandbox: caches"

static bool met_erofs(const struct txbox_command_result *res)
{
        static const char *const says[] = {"Read-only file system", "EROFS"};
        for (size_t i = 0; i < ARRAY_SIZE(says); i++)
                if ((res->err && strstr(res->err, says[i])) || (res->out && strstr(res->out, says[i])))
                        return true;
        return false;
}

/* Policy check, run (its output captured unless own_stdio), then the decision; fills
 * res->status and res->why and tells cmd->step. */
static void run_checked(struct txbox_tx *tx, const struct txbox_command *cmd, struct txbox_run_opts *opts,
                        struct txbox_command_result *res, struct txbox_error *err)
{
        struct txbox_run_result rr;
        size_t cap = cmd->output_cap ? cmd->output_cap : DEFAULT_OUTPUT_CAP;
        const char *why = NULL;
        int allowed = txbox_tx_check_policy(tx, cmd->shell, opts->cwd, err);

        if (allowed <= 0) {
                res->status = allowed < 0 ? TXBOX_EXIT_TXBOX : TXBOX_EXIT_DENIED;
                if (allowed < 0)
                        fail(tx, cmd, res, err->msg);
                else
                        step(cmd, res, TXBOX_STEP_REFUSED, txbox_tx_record(tx)->message);
                return;
        }
        struct capture c = {.fd = {-1, -1}};
        int w[2] = {-1, -1};
        if (!cmd->own_stdio && capture_setup(&c, cap, opts, w, err) < 0) {
                fail(tx, cmd, res, err->msg);
                return;
        }
        int rr_r = txbox_tx_run(tx, opts, &rr, err);
        if (!cmd->own_stdio) {
                /* Every process of the sandbox has ended: ours are the last write ends. */
                closep(&opts->stdio[0]);
                closep(&w[0]);
                closep(&w[1]);
                capture_finish(&c, res);
        }
        if (rr_r < 0) {
                fail(tx, cmd, res, err->msg);
                return;
        }
        res->cancelled = rr.cancelled;
        res->cancel_signal = rr.cancel_signal;
        if (cmd->prepare_next && !rr.cancelled)
                command_prepare(tx->ws, opts);
        if (txbox_tx_warning(tx))
                step(cmd, res, TXBOX_STEP_WARNING, txbox_tx_warning(tx));
        step(cmd, res, TXBOX_STEP_RAN, rr.exec_failed ? err->msg : NULL);
        if (txbox_tx_finish(tx, cmd->mode, &rr, &res->status, &why, err) < 0)
                why = err->msg;
        _cleanup_free_ char *noted = NULL, *sock = NULL;
        if (res->status != 0 && !cmd->own_stdio && met_erofs(res))
                why = noted = why ? xasprintf("%s; %s", why, EROFS_NOTICE) : xstrdup(EROFS_NOTICE);
        /* The supervisor refused it: told whatever the program printed. */
        if (res->status != 0 && rr.unix_refused) {
                char more[48] = "";
                if (rr.unix_refused > 1)
                        snprintf(more, sizeof(more), " (and %u more)", rr.unix_refused - 1);
                sock = xasprintf("%s%sthe program's connection to the unix socket '%s' outside the sandbox was "
                                 "refused (EACCES)%s: only sockets in the sandbox's /tmp and /dev/shm are "
                                 "reachable (--allow-unix-sockets lets every one through)",
                                 why ? why : "", why ? "; " : "", rr.unix_refused_path,
                                 more);
                why = sock;
        }
        step(cmd, res, TXBOX_STEP_FINISHED, why);
}

int txbox_command_run(struct txbox_ws *ws, const struct txbox_command *cmd, struct txbox_command_result *res,
                      struct txbox_error *err)
{
        char *shell_argv[] = {"/bin/sh", "-c", (char *)cmd->shell, NULL};
        char *const *argv = cmd->argv ? cmd->argv : cmd->shell ? shell_argv : NULL;
        struct txbox_run_opts opts = cmd->opts;
        struct txbox_tx *tx = NULL;
        int r;

        memset(res, 0, sizeof(*res));
        res->status = TXBOX_EXIT_TXBOX;
        if (!argv || !argv[0])
                return tx_err(err, EINVAL, "no command given");
        if (!cmd->session && (tx = ws_take_prepared(ws))) {
                tx_set_command(tx, argv);
                r = 0;
        } else {
                r = cmd->session ? txbox_session_savepoint(ws, cmd->session, argv, &tx, err)
                                 : txbox_tx_begin(ws, argv, &tx, err);
        }
        if (r < 0)
                return r;
        opts.cwd = cmd->cwd ? cmd->cwd : ws->path;
        /* The record names where the command runs, not where the server was started. */
        if (!cmd->caller_cwd) {
                free(tx->rec.cwd);
                tx->rec.cwd = xstrdup(opts.cwd);
        }
        step(cmd, res, TXBOX_STEP_BEGUN, NULL);
        prestart(tx, cmd, &opts);
        run_checked(tx, cmd, &opts, res, err);
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
