/* Judging that fails closed by construction: see judge.h. */
#define _GNU_SOURCE
#include "policy/judge.h"

#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "base/util.h"

/* ---- in this thread ---- */

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

struct guard {
        sigjmp_buf jb;
        volatile sig_atomic_t sig;
};

/* The guard of the judgement running in this thread (NULL: none). */
static __thread struct guard *volatile active;
/* Room for the handler when the crash is a stack overflow (deep recursion). */
static __thread char *altstack;
#define ALTSTACK_SIZE (64 * 1024)

static void on_crash(int sig)
{
        struct guard *g = active;
        if (!g) {
                /* Another thread crashed meanwhile: end as it would have without us. */
                signal(sig, SIG_DFL);
                raise(sig);
                return;
        }
        active = NULL;
        g->sig = sig;
        siglongjmp(g->jb, 1);
}

int judge_call(void (*fn)(void *arg), void *arg, struct txbox_error *err)
{
        struct sigaction sa = {.sa_handler = on_crash, .sa_flags = SA_NODEFER | SA_ONSTACK};
        struct sigaction old[ARRAY_SIZE(crash_signals)];
        struct guard g;
        stack_t ss, old_ss;

        if (active)
                return tx_err(err, EBUSY, "a judgement is already running in this thread");
        if (!altstack)
                altstack = xmalloc(ALTSTACK_SIZE); /* kept for the thread's later judgements */
        ss = (stack_t){.ss_sp = altstack, .ss_size = ALTSTACK_SIZE};
        bool own_stack = sigaltstack(&ss, &old_ss) == 0;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ARRAY_SIZE(crash_signals); i++)
                sigaction(crash_signals[i], &sa, &old[i]);
        g.sig = 0;
        /* No signal mask saved: SA_NODEFER leaves the mask as it was when the signal came. */
        if (sigsetjmp(g.jb, 0) == 0) {
                active = &g;
                fn(arg);
                active = NULL;
        }
        for (size_t i = 0; i < ARRAY_SIZE(crash_signals); i++)
                sigaction(crash_signals[i], &old[i], NULL);
        if (own_stack)
                sigaltstack(&old_ss, NULL);
        if (g.sig)
                return tx_err(err, EFAULT, "it crashed (signal %d, %s)", (int)g.sig, strsignal(g.sig));
        return 0;
}

void judge_quarantine(const void *p)
{
        /* The one piece of global state here: a crash of the policy engine is rare, and the
         * process that saw one refuses until it loads its policy again. */
        static const void *kept[64];
        static size_t n;
        if (p && n < ARRAY_SIZE(kept))
                kept[n++] = p;
}

/* ---- in a child process ---- */

/* Enough for any judgement txbox makes (the policy engine copies at most 1 MiB of text); a
 * runaway one fails at the cap and is reported, rather than press on the machine.  Not
 * under AddressSanitizer, whose shadow memory counts too. */
#define JUDGE_DATA_LIMIT (2ULL << 30)
#if defined(__SANITIZE_ADDRESS__)
#define JUDGE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JUDGE_SANITIZED 1
#endif
#endif

static int cap_data(void)
{
#ifndef JUDGE_SANITIZED
        struct rlimit rl;
        if (getrlimit(RLIMIT_DATA, &rl) < 0)
                return -errno;
        if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > JUDGE_DATA_LIMIT) {
                rl.rlim_cur = JUDGE_DATA_LIMIT;
                if (setrlimit(RLIMIT_DATA, &rl) < 0)
                        return -errno;
        }
#endif
        return 0;
}

/* Read the child's output until it closes its end or the deadline passes. */
static int collect(int fd, int64_t deadline, size_t max_out, char **out, size_t *len)
{
        size_t cap = 4096;
        *out = xmalloc(cap + 1);
        *len = 0;
        for (;;) {
                int64_t left = deadline - mono_us();
                if (left <= 0)
                        return -ETIMEDOUT;
                struct pollfd p = {.fd = fd, .events = POLLIN};
                int n = poll(&p, 1, (int)((left + 999) / 1000));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        continue;
                if (*len == cap) {
                        cap *= 2;
                        *out = xrealloc(*out, cap + 1);
                }
                ssize_t r = read(fd, *out + *len, cap - *len);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        break;
                *len += (size_t)r;
                if (*len > max_out)
                        return -EFBIG;
        }
        (*out)[*len] = 0;
        return 0;
}

int judge_fork(int (*fn)(void *arg), void *arg, int timeout_ms, size_t max_out, char **out, int *status,
               struct txbox_error *err)
{
        int p[2], ws = 0;
        size_t len = 0;

        *out = NULL;
        *status = -1;
        if (pipe2(p, O_CLOEXEC) < 0)
                return tx_err(err, errno, "cannot make a pipe: %s", strerror(errno));
        fflush(NULL); /* the child must not print what this process had buffered */
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(p[0]);
                close(p[1]);
                return tx_err(err, e, "cannot fork: %s", strerror(e));
        }
        if (pid == 0) {
                close(p[0]);
                if (dup2(p[1], STDOUT_FILENO) < 0)
                        _exit(127);
                /* A crash ends the child by its signal, whoever had handlers installed (a
                 * sanitizer's would report and exit 1, which looks like an answer). */
                for (size_t i = 0; i < ARRAY_SIZE(crash_signals); i++)
                        signal(crash_signals[i], SIG_DFL);
                if (cap_data() < 0)
                        _exit(127); /* an unbounded judge is no judge: no answer, so a refusal */
                int r = fn(arg);
                fflush(stdout);
                _exit(r & 0xff);
        }
        close(p[1]);
        int64_t deadline = mono_us() + (int64_t)timeout_ms * 1000;
        int r = collect(p[0], deadline, max_out, out, &len);
        close(p[0]);
        /* Its end of the pipe closed: it should be gone, but must not hang us either. */
        pid_t w = 0;
        while (r == 0) {
                w = waitpid(pid, &ws, WNOHANG);
                if (w == pid)
                        break;
                if (w < 0 && errno != EINTR)
                        r = -errno;
                else if (mono_us() >= deadline)
                        r = -ETIMEDOUT;
                else
                        usleep(200);
        }
        if (r < 0 && w != pid) {
                kill(pid, SIGKILL); /* over time or over size: its answer cannot be used */
                while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
                        ;
        }
        if (r == -ETIMEDOUT)
                r = tx_err(err, ETIMEDOUT, "it did not finish within %d ms", timeout_ms);
        else if (r == -EFBIG)
                r = tx_err(err, EFBIG, "it printed more than %zu bytes", max_out);
        else if (r < 0)
                r = tx_err(err, -r, "cannot read its answer: %s", strerror(-r));
        else if (WIFSIGNALED(ws))
                r = tx_err(err, EFAULT, "it crashed (signal %d, %s)", WTERMSIG(ws), strsignal(WTERMSIG(ws)));
        if (r < 0) {
                free(*out);
                *out = NULL;
                return r;
        }
        *status = WEXITSTATUS(ws);
        return 0;
}

int judge_timeout_ms(const char *env, int def)
{
        const char *v = env ? getenv(env) : NULL;
        char *end = NULL;
        long ms = v ? strtol(v, &end, 10) : 0;
        return v && end && !*end && ms > 0 && ms < def ? (int)ms : def;
}
