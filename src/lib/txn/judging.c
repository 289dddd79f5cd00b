/* The workspace's judge: the process where every decision of its policy on a command is
 * made, so that a decision that crashes, aborts or hangs is a refusal of that decision and
 * ends nothing else (policy/judge.h).  The judge is a copy of this process, forked holding
 * the policy, once per workspace and policy, before its first decision (before the run's
 * threads start), and asked over a socket: a shell string before the run (txbox run, sh,
 * MCP's run_command and check_command), an argv at each exec of a run.  The supervisor keeps
 * the seccomp listener and everything read from the kernel (the exec's argv, the caller's
 * tool): it asks, and answers the exec with what the judge said.  Should the judge die, or
 * not answer by its deadline, it is killed and reaped, that decision is a refusal (rule
 * judgement-failed), and the next one is made by a new judge.
 *
 * A judge is forked only while no other thread of ours holds a lock: the sweeper is waited
 * for, the output-capturing thread takes none, and glibc's fork takes malloc's own locks
 * across it. */
#define _GNU_SOURCE
#include <string.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/failpoint.h"
#include "base/mem.h"
#include "base/trace.h"
#include "policy/judge.h"
#include "txn/tx.h"

enum { JQ_SHELL = 1, JQ_ARGV };
#define JQ_AT_EXEC 1u
#define JQ_TOOL_INTERNAL 2u
#define JQ_HOME 4u /* a home directory is among the strings */

/* A question; then NUL-terminated strings: workspace, [home], cwd, then the script or the
 * argv (nargs strings). */
struct jq_head {
        uint32_t kind, flags;
        int64_t counted; /* decisions made so far (the test build's failpoints count on) */
        uint32_t nargs;
};

/* An answer: the engine's return and its decision. */
struct jq_answer {
        int32_t r;
        int64_t counted;
        struct policy_result res;
};

/* Decisions made so far, by this process's judges: the test build's failpoint "judge"
 * (TXBOX_FAILPOINT=judge:N:ACTION) makes the N-th of them fail, whichever judge makes it.
 * Each question carries the count; the judge continues it. */
static int64_t judged;

static const char *next_str(const char **p, const char *end)
{
        const char *s = *p;
        if (s >= end)
                return NULL;
        *p = s + strlen(s) + 1;
        return s;
}

/* argv as one line (cut at size), for the record of a decision that failed. */
static void render_args(char *const *argv, char *buf, size_t size)
{
        size_t n = 0;
        buf[0] = 0;
        for (char *const *a = argv; *a && n + 1 < size; a++) {
                int w = snprintf(buf + n, size - n, "%s%s", a == argv ? "" : " ", *a);
                n += w < 0 ? 0 : (size_t)w;
        }
}

/* ---- in the judge ---- */

/* One question: its bytes are the supervisor's, checked before use (a judge that misreads
 * them fails only its own answer). */
static long judge_serve(void *arg, const char *req, size_t len, void *ans, size_t cap)
{
        const struct policy *p = arg;
        struct jq_head h;
        struct jq_answer *a = ans;
        const char *s = req + sizeof(h), *end = req + len;
        int r;

        if (len < sizeof(h) || cap < sizeof(*a))
                return -1;
        memcpy(&h, req, sizeof(h));
        struct policy_ctx ctx = {.at_exec = h.flags & JQ_AT_EXEC, .tool_internal = h.flags & JQ_TOOL_INTERNAL};
        ctx.workspace = next_str(&s, end);
        ctx.home = h.flags & JQ_HOME ? next_str(&s, end) : NULL;
        ctx.cwd = next_str(&s, end);
        if (!ctx.workspace || !ctx.cwd || h.nargs > len || (h.kind == JQ_ARGV && !h.nargs) ||
            (h.kind != JQ_ARGV && h.kind != JQ_SHELL))
                return -1;
        memset(a, 0, sizeof(*a));
        failpoint_set_count("judge", (long)h.counted);
        if (h.kind == JQ_SHELL) {
                const char *script = next_str(&s, end);
                if (!script)
                        return -1;
                r = policy_check_shell(p, script, &ctx, &a->res);
        } else {
                char **argv = xcalloc(h.nargs + 1, sizeof(char *));
                for (uint32_t k = 0; k < h.nargs; k++)
                        if (!(argv[k] = (char *)next_str(&s, end))) {
                                free(argv);
                                return -1;
                        }
                r = policy_check_argv(p, argv, &ctx, &a->res);
                free(argv);
        }
        a->r = r;
        a->counted = h.counted + 1;
        return sizeof(*a);
}

/* ---- in the supervisor ---- */

void ws_judge_stop(struct txbox_ws *ws)
{
        judge_proc_stop(TAKE_PTR(ws->judge));
}

int ws_judge_ready(struct txbox_ws *ws, struct txbox_error *err)
{
        if (ws->judge)
                return 0; /* (one that failed was stopped at once: ws_decide) */
        if (!ws->policy) /* (every caller loads it first) */
                return tx_err(err, ENOENT, "no policy is loaded");
        /* No other thread may hold a lock the judge would inherit held. */
        ws_sweep_wait(ws);
        trace_mark("judge forked");
        return judge_proc_start(&ws->judge, judge_serve, ws->policy, sizeof(struct jq_answer), err);
}

static int judge_deadline_ms(void)
{
        return judge_timeout_ms("TXBOX_JUDGE_TIMEOUT_MS", JUDGE_FORK_TIMEOUT_MS);
}

/* A question being written: the head, then its strings. */
struct qbuf {
        char *buf;
        size_t len, cap;
        char small[4096];
};

static void q_init(struct qbuf *b, const struct jq_head *h)
{
        b->buf = b->small;
        b->cap = sizeof(b->small);
        memcpy(b->buf, h, sizeof(*h));
        b->len = sizeof(*h);
}

static void q_str(struct qbuf *b, const char *s)
{
        size_t l = strlen(s) + 1;
        if (b->len + l > b->cap) {
                b->cap = (b->len + l) * 2;
                if (b->buf == b->small) {
                        b->buf = xmalloc(b->cap);
                        memcpy(b->buf, b->small, b->len);
                } else {
                        b->buf = xrealloc(b->buf, b->cap);
                }
        }
        memcpy(b->buf + b->len, s, l);
        b->len += l;
}

static void q_done(struct qbuf *b, const struct jq_head *h)
{
        memcpy(b->buf, h, sizeof(*h));
}

static void q_free(struct qbuf *b)
{
        if (b->buf != b->small)
                free(b->buf);
}

static void q_ctx(struct qbuf *b, const struct policy_ctx *ctx)
{
        q_str(b, ctx->workspace);
        if (ctx->home)
                q_str(b, ctx->home);
        q_str(b, ctx->cwd);
}

/* The decision of ws's judge on a script or an argv, into res; a decision that could not
 * be made is a refusal (rule judgement-failed) saying why. */
void ws_decide(struct txbox_ws *ws, const struct policy_ctx *ctx, const char *script, char *const *argv,
               struct policy_result *res)
{
        struct jq_head h = {.kind = script ? JQ_SHELL : JQ_ARGV, .counted = judged};
        struct txbox_error e = {0};
        struct jq_answer a;
        struct qbuf b;
        size_t alen = 0;
        char why[256], text[512];
        int r;

        h.flags = (ctx->at_exec ? JQ_AT_EXEC : 0) | (ctx->tool_internal ? JQ_TOOL_INTERNAL : 0) |
                  (ctx->home ? JQ_HOME : 0);
        q_init(&b, &h);
        q_ctx(&b, ctx);
        if (script)
                q_str(&b, script);
        /* Every argument: one too many for the engine is its to refuse (limit-exceeded), and
         * a question too long for the judge is refused below. */
        for (char *const *v = script ? NULL : argv; v && *v; v++, h.nargs++)
                q_str(&b, *v);
        q_done(&b, &h);
        /* Asked again (once) of a new judge when the one asked had ended before it read the
         * question (it was killed while idle): that end was not this question's doing. */
        for (int tries = 0; tries < 2; tries++) {
                if ((r = ws_judge_ready(ws, &e)) == 0)
                        r = judge_proc_ask(ws->judge, b.buf, b.len, &a, sizeof(a), &alen, judge_deadline_ms(), &e);
                if (r < 0 && r != -E2BIG)
                        ws_judge_stop(ws); /* gone (judge.h): the next question forks a new one */
                if (r != -EPIPE)
                        break;
        }
        q_free(&b);
        if (r == 0 && alen != sizeof(a))
                r = tx_err(&e, EPROTO, "it gave no answer");
        judged++;
        if (r == 0 && a.r == 0) {
                *res = a.res;
                return;
        }
        if (r < 0)
                snprintf(why, sizeof(why), "the policy engine failed: %.200s", e.msg);
        else
                snprintf(why, sizeof(why), "the policy engine failed: %s", strerror(-a.r));
        if (!script)
                render_args(argv, text, sizeof(text));
        policy_result_failed(res, script ? script : text, why);
}
