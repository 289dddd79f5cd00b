/* The supervisor's watch over a running sandbox.  From the moment the command is sent until
 * init reports the program's status, it forwards termination signals, answers the seccomp
 * notifications of the one listener (exec checks; connects, sockconn.c; renames, rename.c),
 * hands the --net=allow port to the proxy, and enforces the timeout and the disk, files and
 * memory limits; then it turns init's report into the run's result.  A finished sandbox's
 * init is reaped later (sandbox_reap), off the commit's path.  Apart from sandbox.c, which
 * starts the sandbox: this is the loop that runs while the program does.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"

#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "base/human.h"
#include "base/macros.h"
#include "sandbox/cgroup.h"
#include "sandbox/guard.h"
#include "sandbox/netproxy.h"
#include "sandbox/reslimits.h"
#include "sandbox/sandbox_int.h"

/* Sandboxes whose init reported and is exiting, with their cgroups; reaped by
 * sandbox_reap(), which then removes the cgroups. */
static struct {
        pid_t pid;
        struct cgroup_tx *cg;
} deferred[16];

static void defer_reap(pid_t pid, struct cgroup_tx *cg)
{
        for (size_t i = 0; i < ARRAY_SIZE(deferred); i++)
                if (!deferred[i].pid) {
                        deferred[i].pid = pid;
                        deferred[i].cg = cg;
                        return;
                }
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        cgroup_tx_destroy(cg);
}

void sandbox_reap(bool wait)
{
        for (size_t i = 0; i < ARRAY_SIZE(deferred); i++) {
                pid_t r;
                if (!deferred[i].pid)
                        continue;
                while ((r = waitpid(deferred[i].pid, NULL, wait ? 0 : WNOHANG)) < 0 && errno == EINTR)
                        ;
                if (r != 0) {
                        cgroup_tx_destroy(deferred[i].cg);
                        deferred[i].pid = 0;
                        deferred[i].cg = NULL;
                }
        }
        cgroup_reap(wait);
}

/* How often the cheap limit checks run (the file system's free space, the cgroup's OOM
 * kills, init's count of deleted files held open); the layers are walked less often. */
#define LIMIT_POLL_US 20000

/* Take the seccomp listener the program sends before its first exec, or the proxy port. */
static void receive_listener(struct supervise *sv)
{
        char byte, cbuf[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        ssize_t n = recvmsg(sv->notify_sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;

        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                closep(&sv->notify_sock); /* every sender is gone */
                return;
        }
        if (!c || c->cmsg_type != SCM_RIGHTS)
                return;
        int fd;
        memcpy(&fd, CMSG_DATA(c), sizeof(int));
        if (byte == 'p' && sv->prep->proxy && !sv->proxy_given) {
                /* Its own process: resolving and connecting never wait in this loop.  Should
                 * it fail, nobody accepts on the port: the program's connections fail. */
                sv->proxy_given = true;
                netproxy_listen(sv->prep->proxy, fd);
        } else if (byte == 'n' && sv->listener < 0) {
                sv->listener = fd;
                guard_notify_tune(fd);
        } else {
                close(fd);
        }
}

/* Stop the sandbox at a limit: init's death takes the whole namespace down. */
static void stop_at(struct supervise *sv, int limit, const char *detail)
{
        if (sv->limit != LIMIT_NONE)
                return;
        sv->limit = limit;
        snprintf(sv->detail, sizeof(sv->detail), "%s", detail);
        kill(sv->pid, SIGKILL);
}

/* A server's watch, appended to the poll set (NULL when there is none or it stopped). */
static struct pollfd *watch_pollfd(const struct txbox_watch *w, struct pollfd *p, size_t *np)
{
        if (!w || !w->fn || w->fd < 0)
                return NULL;
        p[*np] = (struct pollfd){.fd = w->fd, .events = w->events};
        return &p[(*np)++];
}

/* The run is cancelled: killed like a timeout, and the caller rolls it back. */
static void cancel_run(struct supervise *sv, struct txbox_run_result *res, int signo)
{
        res->cancelled = true;
        res->cancel_signal = signo;
        kill(sv->pid, SIGKILL); /* init's death takes the whole namespace down */
}

static bool oom_killed(struct supervise *sv)
{
        char d[256];
        uint64_t kills = cgroup_tx_oom_kills(sv->prep->cg);
        if (!kills)
                return false;
        uint64_t peak = cgroup_tx_memory_peak(sv->prep->cg);
        snprintf(d, sizeof(d),
                 "the kernel's OOM killer ended %llu process%s of its cgroup at the limit of %.1f MiB "
                 "(--max-memory; peak %.1f MiB)",
                 (unsigned long long)kills, kills == 1 ? "" : "es",
                 (double)sv->prep->limits.memory / (1 << 20), (double)peak / (1 << 20));
        stop_at(sv, LIMIT_MEMORY, d);
        return true;
}

/* The limits the supervisor enforces: disk, files and (with a cgroup) memory; walk: the
 * final check, once every process has ended. */
static void check_limits(struct supervise *sv, bool walk)
{
        char d[256];
        const struct sandbox_meter *m = sv->prep->meter;
        uint64_t held = walk ? 0 : __atomic_load_n(&m->held_disk, __ATOMIC_RELAXED);
        uint64_t held_files = walk ? 0 : __atomic_load_n(&m->held_disk_files, __ATOMIC_RELAXED);

        if (sv->limit != LIMIT_NONE || oom_killed(sv))
                return;
        int l = disk_meter_check(&sv->disk, held, held_files, walk, d, sizeof(d));
        if (l != LIMIT_NONE)
                stop_at(sv, l, d);
}

static int poll_timeout(int64_t deadline, int64_t next_check)
{
        int64_t now = mono_us(), until = next_check;
        if (deadline && deadline < until)
                until = deadline;
        return until <= now ? 0 : (int)((until - now + 999) / 1000);
}

static const char *limit_name(int limit)
{
        return limit == LIMIT_MEMORY  ? "memory"
               : limit == LIMIT_DISK  ? "disk"
               : limit == LIMIT_FILES ? "files"
                                      : "";
}

/* The program's status (st: init's report, NULL when init died without one) and the limit
 * that stopped it, once everything has stopped. */
static void supervise_end(struct supervise *sv, struct txbox_run_result *res, struct init_status *st)
{
        char cut[sizeof(res->cut_short)];

        /* The renames' helper first: it is our child in the sandbox's pid namespace, whose
         * init cannot finish exiting before we reap it; and the layer must be still before
         * it is judged (rename.c). */
        renamer_end(sv, cut, sizeof(cut));
        if (!st)
                while (waitpid(sv->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        if (st) { /* init's report: bounded here, escaped where it is printed */
                _Static_assert(sizeof(res->killed) == sizeof(st->killed), "the same size");
                memcpy(res->killed, st->killed, sizeof(res->killed));
                res->killed[sizeof(res->killed) - 1] = '\0';
        }
        if (st && st->limit != LIMIT_NONE && sv->limit == LIMIT_NONE) {
                st->detail[sizeof(st->detail) - 1] = '\0';
                sv->limit = st->limit;
                snprintf(sv->detail, sizeof(sv->detail), "%s", st->detail);
        }
        /* With the status in hand, init has ended everything else: its own exit (the
         * namespaces' teardown) overlaps the commit, and sandbox_reap() collects it (below).
         * Without one, it was waited for above. */
        /* Everything has stopped: what the program left is what would be committed. */
        bool killed = res->timed_out || res->cancelled;
        if (!killed)
                check_limits(sv, true);
        if (sv->limit != LIMIT_NONE) {
                snprintf(res->limit_hit, sizeof(res->limit_hit), "%s", limit_name(sv->limit));
                snprintf(res->limit_detail, sizeof(res->limit_detail), "%s", sv->detail);
        } else if (!killed) {
                /* A rename cut short by the program's own end; killed by txbox, the run
                 * is rolled back for that reason already. */
                snprintf(res->cut_short, sizeof(res->cut_short), "%s", cut);
        }
        res->exit_code = -1;
        res->signal = SIGKILL; /* timed out, cancelled, or init died without a word */
        if (!killed && st && WIFSIGNALED(st->status)) {
                res->signal = WTERMSIG(st->status);
        } else if (!killed && st) {
                res->exit_code = WEXITSTATUS(st->status);
                res->signal = 0;
        }
        /* Over a limit: never a success, whenever it was found.  Found only by the final check,
         * or by a check that came after the program had exited 0 but before its status did
         * (the kill then reached nobody, and init reports the 0): as if stopped a moment
         * earlier.  (A run over the limit that exited 0 used to commit in that window.) */
        if (sv->limit != LIMIT_NONE && res->exit_code == 0) {
                res->exit_code = -1;
                res->signal = SIGKILL;
        }
        if (st)
                defer_reap(sv->pid, TAKE_PTR(sv->prep->cg));
        /* A single file that reached RLIMIT_FSIZE (the disk limit) killed its writer (a shell
         * reports that as 128 + SIGXFSZ). */
        if (sv->limit == LIMIT_NONE &&
            (res->signal == SIGXFSZ || res->exit_code == TXBOX_EXIT_SIGNAL + SIGXFSZ)) {
                snprintf(res->limit_hit, sizeof(res->limit_hit), "disk");
                char lim[32];
                human_size(sv->prep->limits.disk, lim, sizeof(lim));
                snprintf(res->limit_detail, sizeof(res->limit_detail),
                         "a file reached the disk limit of %s (%s; RLIMIT_FSIZE sends SIGXFSZ)", lim,
                         sv->prep->limits_why.disk);
        }
}

/* Wait for the program's status, forwarding termination signals, answering exec checks and
 * renames, and enforcing the timeout and the limits. */
void sandbox_supervise_wait(struct supervise *sv, struct txbox_run_result *res)
{
        int64_t deadline = sv->timeout_s > 0 ? mono_us() + (int64_t)(sv->timeout_s * 1e6) : 0;
        int64_t next_check = mono_us() + LIMIT_POLL_US;
        struct init_status st = {0};
        bool got = false;

        sv->rn = NULL;
        sv->rename_sock = -1;
        for (;;) {
                struct pollfd p[7] = {
                        {.fd = sv->statusfd, .events = POLLIN}, {.fd = sv->sigfd, .events = POLLIN},
                        {.fd = sv->notify_sock, .events = POLLIN}, {.fd = sv->listener, .events = POLLIN},
                        {.fd = sockconn_fd(&sv->conn), .events = POLLIN},
                        {.fd = sv->rename_sock, .events = POLLIN}};
                size_t np = 6;
                struct pollfd *w = watch_pollfd(sv->spec->watch, p, &np);
                int n = poll(p, np, poll_timeout(deadline, next_check));
                if (n < 0 && errno == EINTR)
                        continue;
                if (w && w->revents && sv->spec->watch->fn(sv->spec->watch, w->revents) > 0) {
                        cancel_run(sv, res, 0);
                        break;
                }
                if (deadline && mono_us() >= deadline) {
                        res->timed_out = true;
                        kill(sv->pid, SIGKILL);
                        break;
                }
                if (mono_us() >= next_check) {
                        check_limits(sv, false);
                        next_check = mono_us() + LIMIT_POLL_US;
                        /* unix connects waiting for a backlog, and those given up */
                        if (sv->listener >= 0 && sv->conn.npend)
                                sockconn_service(&sv->conn, sv->listener);
                }
                if (p[1].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        if (read(sv->sigfd, &si, sizeof(si)) == sizeof(si)) {
                                /* A server stops (its run is cancelled, rolled back); a
                                 * one-shot run passes the signal to its program. */
                                if (sv->spec->watch) {
                                        cancel_run(sv, res, (int)si.ssi_signo);
                                        break;
                                }
                                kill(sv->pid, (int)si.ssi_signo);
                        }
                }
                if (p[2].revents)
                        receive_listener(sv);
                if (p[4].revents && sv->listener >= 0)
                        sockconn_service(&sv->conn, sv->listener); /* inet connects completed */
                if (p[5].revents)
                        renamer_on_answer(sv);
                if (p[3].revents & POLLIN) {
                        if (guard_notify_handle(sv->listener, sv->spec->exec_check, sv->spec->exec_ctx,
                                                &sv->conn, renamer_notify, sv) < 0)
                                closep(&sv->listener); /* pending execs then fail (ENOSYS) */
                } else if (p[3].revents & (POLLHUP | POLLERR | POLLNVAL)) {
                        closep(&sv->listener); /* no process left under the filter */
                }
                if (p[0].revents & (POLLIN | POLLHUP)) {
                        got = read(sv->statusfd, &st, sizeof(st)) == sizeof(st);
                        break;
                }
        }
        supervise_end(sv, res, got ? &st : NULL);
}
