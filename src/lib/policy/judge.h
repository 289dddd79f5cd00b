/* Judging that fails closed by construction.
 *
 * txbox's judgements (the policy on a shell string or an argv, a hook's whole answer) run
 * on hostile input.  Whatever goes wrong inside one (a crash, an abort on out of memory, a
 * hang) must end in "no", never in the process that judges dying silently or hanging: a
 * dead hook lets the agent's command through, a dead supervisor leaves its transaction
 * "running".  Two ways to contain a judgement:
 *
 *   judge_call()  in this thread: a crash signal unwinds back to the caller (cheap: the
 *                 supervisor judges every exec this way);
 *   judge_fork()  in a child process: the child's abnormal end is reported, its memory
 *                 cannot hurt the caller (a one-shot hook or check judges this way).
 *
 * Both return an error the caller turns into a refusal.  docs/SECURITY.md ("Fails closed")
 * lists who uses which. */
#ifndef TXBOX_JUDGE_H
#define TXBOX_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

#include "txbox.h"

/* Default deadline of judge_fork(): far above what a judgement takes (the policy engine
 * stops itself after 250 ms), far below an agent's own hook timeout (60 s; past it the
 * agent runs the command anyway). */
#define JUDGE_FORK_TIMEOUT_MS 10000

/* Run fn(arg) in this thread.  A SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT (an abort on out
 * of memory) raised in it unwinds to here: returns -EFAULT with err naming the signal;
 * otherwise 0.  fn's work is then abandoned half done: what it allocated is leaked, and
 * the caller must use nothing fn was building, nor trust a later judgement of the same
 * data.  The signals' handlers are the caller's again on return; a crash in another thread
 * meanwhile still ends the process as it would have.  There is no deadline: an
 * asynchronous unwind could leave the allocator's lock held (the policy engine keeps its
 * own deadline instead).  Not for nesting: an inner call fails with -EBUSY. */
int judge_call(void (*fn)(void *arg), void *arg, struct txbox_error *err);

/* Memory a failed judgement may have damaged (the policy it was reading): never freed nor
 * used again, but kept reachable, so that leak checkers do not take it for a leak. */
void judge_quarantine(const void *p);

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
