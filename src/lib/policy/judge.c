/* Judging that fails closed by construction: see judge.h. */
#define _GNU_SOURCE
#include "policy/judge.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/process.h"
#include "base/syscalls.h"

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

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

/* ---- a judge process, asked over a socket ---- */

/* Questions go in packets of at most this many bytes (a packet of a SOCK_SEQPACKET socket
 * must fit its send buffer); the first starts with the question's length.  An answer is one
 * packet: a status (0: an answer follows), then serve's bytes. */
#define JUDGE_CHUNK (64 * 1024)

struct judge_proc {
        pid_t pid; /* 0: gone (reaped) */
        int sock;
        size_t max_answer;
        int timeout_ms; /* the socket's receive timeout now (SO_RCVTIMEO) */
};

/* Close every descriptor from 3 up but keep. */
static int close_from3_but(int keep)
{
        if (keep > 3 && sys_close_range(3, (unsigned)keep - 1, 0) < 0)
                return -errno;
        return sys_close_range((unsigned)(keep < 3 ? 3 : keep + 1), ~0U, 0) < 0 ? -errno : 0;
}

/* The judge's own settings: nothing of the caller's but a copy of its memory. */
static int judge_setup(int sock, pid_t parent)
{
        static const int quiet[] = {SIGINT, SIGQUIT, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE};
        struct rlimit no_core = {0, 0};
        sigset_t none;
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);

        if (die_with_parent(parent) < 0 || null < 0 || dup2(null, STDIN_FILENO) < 0 ||
            dup2(null, STDOUT_FILENO) < 0 || close_from3_but(sock) < 0)
                return -1;
        /* A crash ends it by its signal, whoever had handlers installed; the terminal's
         * signals are the caller's to act on, which ends the judge with it. */
        for (size_t i = 0; i < ARRAY_SIZE(crash_signals); i++)
                signal(crash_signals[i], SIG_DFL);
        for (size_t i = 0; i < ARRAY_SIZE(quiet); i++)
                signal(quiet[i], SIG_IGN);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* (a name for ps; PR_SET_NAME does not fail) */
        if (setrlimit(RLIMIT_CORE, &no_core) < 0 || cap_data() < 0 || prctl(PR_SET_NAME, "txbox-judge", 0, 0, 0) < 0)
                return -1; /* an unbounded judge is no judge: no answer, so a refusal */
        return 0;
}

/* The question being read (the judge's): in place when it fits one packet, else in big. */
struct question {
        char *chunk, *big;
        const char *req; /* NUL-terminated */
        size_t len;
};

/* One question from sock: 0, or -1 at its end (or on a question it cannot read). */
static int read_question(int sock, struct question *q)
{
        uint32_t total;
        ssize_t n;

        free(q->big);
        q->big = NULL;
        while ((n = recv(sock, q->chunk, JUDGE_CHUNK, 0)) < 0 && errno == EINTR)
                ;
        if (n < (ssize_t)sizeof(total))
                return -1; /* the caller is gone, or sent nothing we can read */
        memcpy(&total, q->chunk, sizeof(total));
        size_t have = (size_t)n - sizeof(total);
        if (total > JUDGE_MAX_REQUEST || have > total)
                return -1;
        q->len = total;
        if (have == total) { /* nearly every question: read in place */
                q->chunk[n] = 0;
                q->req = q->chunk + sizeof(total);
                return 0;
        }
        q->big = xmalloc((size_t)total + 1);
        memcpy(q->big, q->chunk + sizeof(total), have);
        while (have < total) {
                size_t want = total - have < JUDGE_CHUNK ? total - have : JUDGE_CHUNK;
                while ((n = recv(sock, q->big + have, want, 0)) < 0 && errno == EINTR)
                        ;
                if (n <= 0)
                        return -1;
                have += (size_t)n;
        }
        q->big[total] = 0;
        q->req = q->big;
        return 0;
}

static _Noreturn void judge_main(int sock, pid_t parent, judge_serve_fn *serve, void *arg, size_t max_answer)
{
        if (judge_setup(sock, parent) < 0)
                _exit(127);
        struct question q = {.chunk = xmalloc(JUDGE_CHUNK + 1)};
        void *ans = xmalloc(max_answer); /* malloc's alignment: serve may write any struct there */
        for (;;) {
                if (read_question(sock, &q) < 0)
                        _exit(0);
                long n = serve(arg, q.req, q.len, ans, max_answer);
                int32_t status = n < 0 || (size_t)n > max_answer ? -1 : 0;
                struct iovec iov[2] = {{&status, sizeof(status)}, {ans, status ? 0 : (size_t)n}};
                struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
                size_t out = sizeof(status) + iov[1].iov_len;
                ssize_t w;
                while ((w = sendmsg(sock, &mh, MSG_NOSIGNAL)) < 0 && errno == EINTR)
                        ;
                if (w != (ssize_t)out)
                        _exit(0);
        }
}

int judge_proc_start(struct judge_proc **out, judge_serve_fn *serve, void *arg, size_t max_answer,
                     struct txbox_error *err)
{
        int sv[2];
        *out = NULL;
        if (max_answer + sizeof(int32_t) > JUDGE_CHUNK)
                return tx_err(err, EINVAL, "an answer of %zu bytes is too long for the judge", max_answer);
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return tx_err(err, errno, "cannot make the judge's socket: %s", strerror(errno));
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(sv[0]);
                close(sv[1]);
                return tx_err(err, e, "cannot start the judge: %s", strerror(e));
        }
        if (pid == 0) {
                close(sv[0]);
                judge_main(sv[1], parent, serve, arg, max_answer);
        }
        close(sv[1]);
        struct judge_proc *jp = xcalloc(1, sizeof(*jp));
        jp->pid = pid;
        jp->sock = sv[0];
        jp->max_answer = max_answer;
        *out = jp;
        return 0;
}

static bool judge_alive(const struct judge_proc *jp) { return jp && jp->pid > 0; }

/* The judge is gone or must go: reaped (killed first when kill_it is set, or when it has
 * not ended by the deadline), its socket closed; what ended it, in words, into why. */
static void judge_reap(struct judge_proc *jp, bool kill_it, int64_t deadline, char *why, size_t size)
{
        int ws = 0;
        pid_t w = 0;
        if (kill_it)
                kill(jp->pid, SIGKILL);
        while ((w = waitpid(jp->pid, &ws, WNOHANG)) == 0 && mono_us() < deadline)
                usleep(200);
        if (w == 0) {
                kill(jp->pid, SIGKILL); /* it closed its end but goes on: no judge of ours */
                while ((w = waitpid(jp->pid, &ws, 0)) < 0 && errno == EINTR)
                        ;
        }
        if (w > 0 && WIFSIGNALED(ws))
                snprintf(why, size, "it crashed (signal %d, %s)", WTERMSIG(ws), strsignal(WTERMSIG(ws)));
        else if (w > 0)
                snprintf(why, size, "it exited with status %d without an answer", WEXITSTATUS(ws));
        else
                snprintf(why, size, "it could not be reaped: %s", strerror(errno));
        jp->pid = 0;
        closep(&jp->sock);
}

/* The judge failed: hung (no answer in time: it is killed) or dead; reaped either way. */
static int judge_fail(struct judge_proc *jp, bool hung, int timeout_ms, struct txbox_error *err)
{
        char why[128];
        if (hung) {
                judge_reap(jp, true, mono_us(), why, sizeof(why));
                return tx_err(err, ETIMEDOUT, "it did not answer within %d ms", timeout_ms);
        }
        /* Its end closed or hung up: it died (or is dying) without an answer. */
        judge_reap(jp, false, mono_us() + 1000000, why, sizeof(why));
        return tx_err(err, EFAULT, "%s", why);
}

/* Wait until sock can take more, or the deadline: 1 ready, 0 timed out, -1 hung up. */
static int wait_writable(int sock, int64_t deadline)
{
        for (;;) {
                int64_t left = deadline - mono_us();
                if (left <= 0)
                        return 0;
                struct pollfd p = {.fd = sock, .events = POLLOUT};
                int n = poll(&p, 1, (int)((left + 999) / 1000));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -1;
                if (n > 0)
                        return p.revents & POLLOUT ? 1 : -1;
        }
}

/* The question, in as many packets as it takes: 1 sent, 0 the deadline passed (a judge
 * that reads no more), -1 hung up. */
static int send_question(int sock, const void *req, size_t len, int64_t deadline)
{
        uint32_t total = (uint32_t)len;
        size_t first = JUDGE_CHUNK - sizeof(total), off = len < first ? len : first;
        struct iovec iov[2] = {{&total, sizeof(total)}, {(void *)req, off}};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
        for (;;) {
                ssize_t w = sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0 && errno == EAGAIN) { /* a long question, and nobody reading it */
                        int r = wait_writable(sock, deadline);
                        if (r <= 0)
                                return r;
                        continue;
                }
                if (w < 0)
                        return -1;
                if (off == len)
                        return 1;
                size_t n = len - off < JUDGE_CHUNK ? len - off : JUDGE_CHUNK;
                iov[0] = (struct iovec){(char *)req + off, n};
                mh.msg_iovlen = 1;
                off += n;
        }
}

/* The answer, straight into status and ans (one byte more shows one too long): its size,
 * 0 for the judge's end (it died), -1 for no answer by the deadline (or an error).  A
 * blocking receive under SO_RCVTIMEO: one system call where poll and receive were two. */
static ssize_t recv_answer(struct judge_proc *jp, int32_t *status, void *ans, size_t cap, int64_t deadline)
{
        char extra;
        struct iovec iov[3] = {{status, sizeof(*status)}, {ans, cap}, {&extra, 1}};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 3};
        for (;;) {
                int64_t left = deadline - mono_us();
                if (left <= 0)
                        return -1;
                int ms = (int)((left + 999) / 1000);
                if (ms != jp->timeout_ms) {
                        struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
                        if (setsockopt(jp->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
                                return -1;
                        jp->timeout_ms = ms;
                }
                ssize_t n = recvmsg(jp->sock, &mh, 0);
                if (n < 0 && (errno == EINTR || ((errno == EAGAIN || errno == EWOULDBLOCK) && mono_us() < deadline)))
                        continue;
                return n < 0 ? -1 : n;
        }
}

int judge_proc_ask(struct judge_proc *jp, const void *req, size_t len, void *ans, size_t cap, size_t *alen,
                   int timeout_ms, struct txbox_error *err)
{
        char why[128];
        int32_t status = -1;
        int64_t deadline = mono_us() + (int64_t)timeout_ms * 1000;

        *alen = 0;
        if (!judge_alive(jp))
                return tx_err(err, EPIPE, "no judge is running");
        if (len > JUDGE_MAX_REQUEST)
                return tx_err(err, E2BIG, "the question is longer than %u bytes", JUDGE_MAX_REQUEST);
        int r = send_question(jp->sock, req, len, deadline);
        if (r < 0) { /* it had ended before it read the question (killed while idle) */
                judge_reap(jp, false, mono_us() + 1000000, why, sizeof(why));
                return tx_err(err, EPIPE, "it had ended before the question: %s", why);
        }
        if (r == 0)
                return judge_fail(jp, true, timeout_ms, err);
        if (cap > jp->max_answer)
                cap = jp->max_answer;
        ssize_t n = recv_answer(jp, &status, ans, cap, deadline);
        if (n >= (ssize_t)sizeof(status) && status == 0 && (size_t)n - sizeof(status) <= cap) {
                *alen = (size_t)n - sizeof(status);
                return 0;
        }
        if (n >= (ssize_t)sizeof(status)) { /* it answered, but nothing usable: it goes too */
                judge_reap(jp, true, mono_us(), why, sizeof(why));
                return tx_err(err, EPROTO, "it gave no answer");
        }
        return judge_fail(jp, n < 0, timeout_ms, err);
}

void judge_proc_stop(struct judge_proc *jp)
{
        char why[128];
        if (!jp)
                return;
        if (jp->pid > 0) {
                shutdown(jp->sock, SHUT_RDWR); /* its read ends: it exits */
                judge_reap(jp, false, mono_us() + 100000, why, sizeof(why));
        }
        closep(&jp->sock);
        free(jp);
}
