/* Judging that fails closed by construction.
 *
 * txbox's judgements (the policy on a shell string or an argv, a hook's whole answer) run
 * on hostile input.  Whatever goes wrong inside one (a crash, an abort on out of memory, a
 * hang) must end in "no", never in the process that judges dying silently or hanging: a
 * dead hook lets the agent's command through, a dead supervisor leaves its transaction
 * "running".  So a judgement never runs in the process that acts on it:
 *
 *   judge_proc    a judge process forked once and asked again and again over a socket (the
 *                 supervisor judges every exec this way): its crash, abort or hang is an
 *                 error for that one question, and the next one is answered by a new judge;
 *   judge_fork()  a child process per judgement (a one-shot hook or check judges this way).
 *
 * Either way the caller's memory is never the judge's (a crash there cannot leave the
 * caller's allocator or data half changed), and there is no signal handler to unwind from.
 * Both return an error the caller turns into a refusal.  docs/SECURITY.md ("Fails closed")
 * lists who uses which. */
#ifndef TXBOX_JUDGE_H
#define TXBOX_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

struct txbox_error;

/* Default deadline of judge_fork() and of an answer of judge_proc: far above what a
 * judgement takes (the policy engine stops itself after 250 ms), far below an agent's own
 * hook timeout (60 s; past it the agent runs the command anyway). */
#define JUDGE_FORK_TIMEOUT_MS 10000

/* ---- a judge process ----
 * serve(arg, req, len, ans, cap) runs in the judge for each question (req: len bytes, NUL
 * after them), with room for the answer; it returns the answer's length (at most cap), or
 * -1 when it has none (the caller's error).  arg and everything serve reads were copied
 * into the judge when it was forked. */
#define JUDGE_MAX_REQUEST (16u << 20) /* an exec's argv is at most ARG_MAX (2 MiB) and then some */
typedef long judge_serve_fn(void *arg, const char *req, size_t len, void *ans, size_t cap);
struct judge_proc;

/* Fork a judge.  Call only while no other thread of the caller holds a lock (SQLite's, a
 * mutex of its own ...): the judge keeps running on a copy of this process, and would wait
 * for ever on a lock copied held.  The judge closes every descriptor but its socket and
 * stderr, dies with its parent (the calling thread), ignores the terminal's signals, caps
 * its data segment (a runaway allocation aborts there) and dumps no core. */
int judge_proc_start(struct judge_proc **out, judge_serve_fn *serve, void *arg, size_t max_answer,
                     struct txbox_error *err);
/* Ask the judge: req (len bytes) goes over, the answer comes back into ans (*alen bytes,
 * at most cap).  -EFAULT when the judge died meanwhile (crashed, aborted, or exited),
 * -ETIMEDOUT when it did not answer within timeout_ms (it is then killed), -EPROTO when it
 * answered nothing usable (it is then killed), -EPIPE when there is no judge (it died
 * before, or had ended by the time the question was sent: it is not this question's
 * doing, start another and ask again), -E2BIG for a question over JUDGE_MAX_REQUEST (the judge stays);
 * err says which.  After any other error the judge is gone (reaped): every later question
 * gets -EPIPE, and jp is only for judge_proc_stop. */
int judge_proc_ask(struct judge_proc *jp, const void *req, size_t len, void *ans, size_t cap, size_t *alen,
                   int timeout_ms, struct txbox_error *err);
/* End the judge (asked to exit, killed if it does not at once), reap it, free jp. */
void judge_proc_stop(struct judge_proc *jp);

/* Run fn(arg) in a child process with its stdout captured: returns 0 when the child exited
 * by itself (*status: its exit status, *out: what it printed, NUL-terminated, at most
 * max_out bytes, caller frees); -EFAULT when it was killed by a signal, -ETIMEDOUT when it
 * was still running after timeout_ms (then killed), -EFBIG when it printed more than
 * max_out, or another -errno when it could not be run.  stdin and stderr are the caller's.
 * The child's data segment is capped (RLIMIT_DATA) so that a runaway allocation fails there
 * (and is reported) instead of pressing on the machine. */
int judge_fork(int (*fn)(void *arg), void *arg, int timeout_ms, size_t max_out, char **out, int *status,
               struct txbox_error *err);

/* A deadline of at most def ms, shortened (never lengthened: a longer one could outlast an
 * agent's own timeout) by the environment variable env when set to a number of ms. */
int judge_timeout_ms(const char *env, int def);

#endif
