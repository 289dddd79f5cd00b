/* judge.c: a judgement that crashes, aborts, hangs, overflows its stack or dies runs in a
 * judge process, and comes back as an error to the caller, who survives to refuse and to
 * ask again; the judge's memory is its own; judge_fork's child likewise. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/judge.h"
#include "tap.h"
#include "base/clock.h"
#include "base/macros.h"
#include "base/mem.h"
#include "txbox.h"

static int depth(volatile char *prev, int n)
{
        volatile char pad[4096];
        pad[0] = prev ? prev[0] : 0;
        return n > 0 ? depth(pad, n - 1) + pad[0] : pad[0];
}

static int counter; /* the judge's copy changes, the caller's not */

/* The judge's side: the question names what to do. */
static long serve(void *arg, const char *req, size_t len, void *ans, size_t cap)
{
        (void)arg;
        counter++;
        if (!strcmp(req, "segv"))
                raise(SIGSEGV);
        if (!strcmp(req, "fault")) {
                char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                *(volatile char *)ro = 1; /* a real fault, not a raised signal */
        }
        if (!strcmp(req, "abort"))
                abort();
        if (!strcmp(req, "oom")) { /* more than its data cap: xmalloc aborts, as on out of memory */
                struct rlimit rl;
                if (getrlimit(RLIMIT_DATA, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
                        return snprintf(ans, cap, "uncapped"); /* a sanitizer's build */
                char *volatile big = xmalloc(rl.rlim_cur + (64u << 20));
                big[0] = 1;
                return snprintf(ans, cap, "allocated");
        }
        if (!strcmp(req, "hang"))
                for (;;)
                        pause();
        if (!strcmp(req, "overflow"))
                return depth(NULL, 1 << 30);
        if (!strcmp(req, "alarm")) { /* answers, then dies while idle */
                alarm(1);
                return snprintf(ans, cap, "ok");
        }
        if (!strcmp(req, "exit"))
                _exit(3);
        if (!strcmp(req, "none"))
                return -1;
        if (!strcmp(req, "toolong"))
                return (long)cap + 1;
        if (!strcmp(req, "sigint")) /* the terminal's ^C reaches the judge too: it stays */
                kill(getpid(), SIGINT);
        /* anything else: its length, its byte sum and the count of questions seen */
        unsigned long sum = 0;
        for (size_t i = 0; i < len; i++)
                sum += (unsigned char)req[i];
        int n = snprintf(ans, cap, "%zu %lu %d", len, sum, counter);
        return n < 0 || (size_t)n >= cap ? -1 : n;
}

static void judge_procs(void)
{
        struct txbox_error err = {0};
        struct judge_proc *jp = NULL;
        char ans[64];
        size_t alen = 0;

        ok(judge_proc_start(&jp, serve, NULL, sizeof(ans) - 1, &err) == 0 && jp,
           "a judge process starts");
        ok(judge_proc_ask(jp, "hello", 5, ans, sizeof(ans) - 1, &alen, 5000, &err) == 0, "it answers: %s", err.msg);
        ans[alen] = 0;
        is_str(ans, "5 532 1", "its answer, from its own count");
        ok(judge_proc_ask(jp, "hi", 2, ans, sizeof(ans) - 1, &alen, 5000, &err) == 0, "and again");
        ans[alen] = 0;
        is_str(ans, "2 209 2", "the same judge (its count went on)");
        is_int(counter, 0, "whose memory is its own: the caller's count is untouched");
        ok(judge_proc_ask(jp, "sigint", 6, ans, sizeof(ans) - 1, &alen, 5000, &err) == 0,
           "a ^C meant for the terminal does not end it");

        static const struct {
                const char *q, *what, *msg;
                int want;
        } bad[] = {
                {"segv", "SIGSEGV raised in it", "signal 11", -EFAULT},
                {"fault", "a write to a read-only page", "signal 11", -EFAULT},
                {"abort", "abort()", "signal 6", -EFAULT},
                {"oom", "an allocation over its data cap (xmalloc aborts)", "signal 6", -EFAULT},
                {"overflow", "a stack overflow (runaway recursion)", "signal", -EFAULT},
                {"exit", "an exit without an answer", "status 3", -EFAULT},
                {"hang", "a hang", "within 300 ms", -ETIMEDOUT},
                {"none", "no answer from serve", "no answer", -EPROTO},
                {"toolong", "an answer longer than it may be", "no answer", -EPROTO},
        };
        for (size_t k = 0; k < ARRAY_SIZE(bad); k++) {
                int64_t t0 = mono_us();
                int r = judge_proc_ask(jp, bad[k].q, strlen(bad[k].q), ans, sizeof(ans) - 1, &alen, 300, &err);
                if (r == 0 && alen == 8 && !memcmp(ans, "uncapped", 8)) {
                        printf("# %s: no data cap under a sanitizer, not tried\n", bad[k].what);
                        continue;
                }
                is_int(r, bad[k].want, "%s: an error (%s)", bad[k].what, err.msg);
                ok(strstr(err.msg, bad[k].msg) != NULL, "naming it: %s", err.msg);
                ok(mono_us() - t0 < 5000000, "in bounded time (%lld ms)", (long long)(mono_us() - t0) / 1000);
                is_int(judge_proc_ask(jp, "x", 1, ans, sizeof(ans) - 1, &alen, 300, &err), -EPIPE,
                       "asking it again: no judge");
                judge_proc_stop(jp);
                jp = NULL;
                ok(judge_proc_start(&jp, serve, NULL, sizeof(ans) - 1, &err) == 0 &&
                           judge_proc_ask(jp, "next", 4, ans, sizeof(ans) - 1, &alen, 5000, &err) == 0,
                   "and a new judge answers the next question");
        }
        /* A question of many packets, as an exec's argv of megabytes is. */
        size_t big = 3u << 20;
        char *q = xmalloc(big + 1);
        unsigned long sum = 0;
        for (size_t i = 0; i < big; i++) {
                q[i] = (char)('a' + i % 26);
                sum += (unsigned char)q[i];
        }
        q[big] = 0;
        ok(judge_proc_ask(jp, q, big, ans, sizeof(ans) - 1, &alen, 20000, &err) == 0, "a 3 MiB question: %s",
           err.msg);
        ans[alen] = 0;
        char want[64];
        snprintf(want, sizeof(want), "%zu %lu 2", big, sum);
        is_str(ans, want, "arrives whole");
        free(q);
        is_int(judge_proc_ask(jp, "x", JUDGE_MAX_REQUEST + 1, ans, sizeof(ans) - 1, &alen, 300, &err), -E2BIG,
               "one over the limit is refused before it is sent");
        ok(judge_proc_ask(jp, "x", 1, ans, sizeof(ans) - 1, &alen, 5000, &err) == 0, "and the judge stays");

        /* A judge that ends while idle (killed from outside): the next question finds it gone
         * before it was read, which is not that question's doing. */
        ok(judge_proc_ask(jp, "alarm", 5, ans, sizeof(ans) - 1, &alen, 5000, &err) == 0, "a judge answers");
        usleep(1500 * 1000);
        is_int(judge_proc_ask(jp, "x", 1, ans, sizeof(ans) - 1, &alen, 5000, &err), -EPIPE,
               "then dies while idle: the next question is not sent (%s)", err.msg);
        ok(strstr(err.msg, "ended before the question") && strstr(err.msg, "signal 14"),
           "naming it, and reaped: %s", err.msg);
        judge_proc_stop(jp);
        ok(judge_proc_start(&jp, serve, NULL, sizeof(ans) - 1, &err) == 0 &&
                   judge_proc_ask(jp, "x", 1, ans, sizeof(ans) - 1, &alen, 5000, &err) == 0,
           "a new judge answers it");

        judge_proc_stop(jp);
        ok(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD, "stopped: no child left behind");
}

static int prints(void *arg) { printf("answer %s\n", (const char *)arg); return 3; }
static int crashes(void *arg) { (void)arg; printf("half"); fflush(stdout); raise(SIGSEGV); return 0; }
static int sleeps(void *arg) { (void)arg; sleep(30); return 0; }
static int floods(void *arg)
{
        (void)arg;
        for (int i = 0; i < 100000; i++)
                printf("0123456789");
        return 0;
}

int main(void)
{
        struct txbox_error err = {0};

        judge_procs();
        char *out = NULL;
        int status = -1;
        ok(judge_fork(prints, "yes", 5000, 1024, &out, &status, &err) == 0 && status == 3 && out &&
                   !strcmp(out, "answer yes\n"),
           "a child's output and exit status come back");
        free(out);
        is_int(judge_fork(crashes, NULL, 5000, 1024, &out, &status, &err), -EFAULT,
               "a child that crashes: -EFAULT");
        ok(out == NULL, "and what it printed before is not used");
        int64_t t0 = mono_us();
        is_int(judge_fork(sleeps, NULL, 300, 1024, &out, &status, &err), -ETIMEDOUT,
               "a child that hangs: -ETIMEDOUT");
        ok(mono_us() - t0 < 5000000, "ended at its deadline, not its own end (%lld ms)",
           (long long)(mono_us() - t0) / 1000);
        is_int(judge_fork(floods, NULL, 5000, 1024, &out, &status, &err), -EFBIG,
               "a child that prints too much: -EFBIG");

        unsetenv("TXBOX_TEST_MS");
        is_int(judge_timeout_ms("TXBOX_TEST_MS", 10000), 10000, "the default deadline");
        setenv("TXBOX_TEST_MS", "500", 1);
        is_int(judge_timeout_ms("TXBOX_TEST_MS", 10000), 500, "shortened by the environment");
        setenv("TXBOX_TEST_MS", "99999", 1);
        is_int(judge_timeout_ms("TXBOX_TEST_MS", 10000), 10000, "never lengthened");
        setenv("TXBOX_TEST_MS", "1x", 1);
        is_int(judge_timeout_ms("TXBOX_TEST_MS", 10000), 10000, "a value that is not a number is ignored");
        return tap_done();
}
