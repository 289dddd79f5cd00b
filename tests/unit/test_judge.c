/* judge.c: a judgement that crashes, aborts, hangs or overflows its stack comes back as an
 * error to the caller, who survives to refuse; the caller's signal handlers are its own
 * again afterwards. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "policy/judge.h"
#include "tap.h"
#include "base/util.h"

static void fine(void *arg) { *(int *)arg = 42; }
static void segv(void *arg) { (void)arg; raise(SIGSEGV); }
static void ro_write(void *arg)
{
        volatile char *p = arg;
        *p = 1; /* a read-only page: a real fault, not a raised signal (and no UB a sanitizer stops at) */
}
static void aborts(void *arg) { (void)arg; abort(); }
static void fpe(void *arg) { (void)arg; raise(SIGFPE); }

static int depth(volatile char *prev, int n)
{
        volatile char pad[4096];
        pad[0] = prev ? prev[0] : 0;
        return n > 0 ? depth(pad, n - 1) + pad[0] : pad[0];
}
static void overflow(void *arg) { *(int *)arg = depth(NULL, 1 << 30); }

static void nested(void *arg)
{
        int x = 0;
        *(int *)arg = judge_call(fine, &x, NULL);
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
        int x = 0;
        struct sigaction before, after;

        sigaction(SIGSEGV, NULL, &before);
        ok(judge_call(fine, &x, &err) == 0 && x == 42, "a judgement that ends normally: 0");
        is_int(judge_call(segv, NULL, &err), -EFAULT, "SIGSEGV raised in it: -EFAULT");
        ok(strstr(err.msg, "signal 11") != NULL, "naming the signal: %s", err.msg);
        char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        is_int(judge_call(ro_write, ro, &err), -EFAULT, "a write to a read-only page: -EFAULT");
        munmap(ro, 4096);
        is_int(judge_call(aborts, NULL, &err), -EFAULT, "abort() (out of memory in xmalloc): -EFAULT");
        ok(strstr(err.msg, "signal 6") != NULL, "naming SIGABRT: %s", err.msg);
        is_int(judge_call(fpe, NULL, &err), -EFAULT, "SIGFPE: -EFAULT");
        is_int(judge_call(overflow, &x, &err), -EFAULT, "a stack overflow (runaway recursion): -EFAULT");
        x = 0;
        ok(judge_call(nested, &x, &err) == 0 && x == -EBUSY, "a judgement inside a judgement: -EBUSY");
        ok(judge_call(fine, &x, &err) == 0 && x == 42, "and judging works again after all that");
        sigaction(SIGSEGV, NULL, &after);
        ok(before.sa_handler == after.sa_handler &&
                   (before.sa_flags & SA_SIGINFO) == (after.sa_flags & SA_SIGINFO),
           "the caller's SIGSEGV handler is its own again");

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
