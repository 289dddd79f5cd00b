/* The sandbox's init, pid 1 of its pid namespace, and what the children of the supervisor
 * report to it.  init makes its network namespace, waits for its id maps, sets up the mounts
 * (mounts.c), the loopback and the --net=allow port, waits to be in its cgroup, starts the
 * program's process (program.c), then reaps, measures what the sandbox holds, and reports
 * the program's status; its exit then ends every process left in the namespace.  Setup
 * errors of every child travel to the supervisor over one pipe (sandbox_child_fail).  Apart
 * from sandbox.c: all of this runs inside the sandbox, none of it in the supervisor.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "base/trace.h"
#include "sandbox/netproxy.h"
#include "sandbox/reslimits.h"
#include "sandbox/sandbox_int.h"

/* ---- inside the sandbox: errors travel to the supervisor over a pipe ---- */

static int child_errfd = -1;

void sandbox_child_errfd_set(int fd)
{
        child_errfd = fd;
}

__attribute__((format(printf, 3, 4))) int sandbox_child_fail(int kind, int e, const char *fmt, ...)
{
        struct child_msg m = {.kind = kind, .err = e};
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(m.msg, sizeof(m.msg), fmt, ap);
        va_end(ap);
        if (child_errfd >= 0 && write(child_errfd, &m, sizeof(m)) < 0) {
                /* nothing more we can do: the supervisor sees the pipe close */
        }
        return -e;
}

/* Hand fd to the supervisor over sock, tagged by one byte ('n': the exec listener, 'p': the
 * proxy port). */
int sandbox_send_fd(int sock, char tag, int fd)
{
        char cbuf[CMSG_SPACE(sizeof(int))] = {0};
        struct iovec iov = {.iov_base = &tag, .iov_len = 1};
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
        return sendmsg(sock, &mh, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

static int loopback_up(void)
{
        struct ifreq ifr = {0};
        _cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        strcpy(ifr.ifr_name, "lo");
        if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
                return SETUP_FAIL("cannot find the sandbox's loopback: %s", strerror(errno));
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
                return SETUP_FAIL("cannot bring the sandbox's loopback up: %s", strerror(errno));
        return 0;
}

/* --net=allow: listen on the sandbox's loopback and hand the socket to the supervisor, whose
 * proxy (in the host's network) serves it.  Sent before the program exists, so it is the
 * first message on the socket; its tag byte 'p' tells it from the exec listener ('n'). */
static int send_proxy_socket(const struct sandbox_prep *p)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(NETPROXY_PORT),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int one = 1;
        _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0)
                return SETUP_FAIL("cannot set up the sandbox's proxy port: %s", strerror(errno));
        if (sandbox_send_fd(p->notify_sock, 'p', fd) < 0)
                return SETUP_FAIL("cannot hand the proxy port to the supervisor: %s", strerror(errno));
        return 0;
}

/* ---- init (pid 1 of the sandbox) ---- */

static volatile sig_atomic_t init_child_pid;

static void init_forward(int sig)
{
        if (init_child_pid > 0)
                kill(init_child_pid, sig);
}

static void init_tick(int sig)
{
        (void)sig; /* interrupts waitpid so that init can measure memory */
}

/* What init knows between its looks at the sandbox. */
struct init_meter {
        struct limits_devs devs;
        uint64_t base_avail, base_shmem; /* when the program started */
        int64_t last_fd_scan;
        struct limits_usage held; /* deleted files held open, as of the last descriptor scan */
};

/* Looking at every descriptor costs microseconds each (a build holds thousands): done when
 * the file system lost over half the disk limit since the start, or the machine's shared
 * memory grew by over half the memory limit (accounting only), and else once a second.
 * What a scan would find sooner is bounded meanwhile by the supervisor's free-space rule. */
#define FD_SCAN_MAX_GAP_US 1000000

static bool fd_scan_due(const struct sandbox_spec *s, const struct sandbox_prep *p,
                        const struct init_meter *im, bool accounting)
{
        uint64_t avail, shmem = 0;

        if (mono_us() - im->last_fd_scan >= FD_SCAN_MAX_GAP_US)
                return true;
        limits_hints(s->workspace, &avail, accounting ? &shmem : NULL);
        return (im->base_avail > avail && im->base_avail - avail > p->limits.disk / 2) ||
               (accounting && shmem > im->base_shmem && shmem - im->base_shmem > p->limits.memory / 2);
}

/* Whether init is in the transaction's cgroup, whose memory.max then holds the memory limit
 * (else init's accounting does). */
static bool in_cgroup;

/* One tick: publish the deleted files the sandbox holds open (the supervisor adds them to
 * its disk count); without a cgroup, also sum the sandbox's memory and kill everything but
 * init past the limit. */
static void init_measure(const struct sandbox_spec *s, const struct sandbox_prep *p, struct init_meter *im,
                         struct init_status *out)
{
        struct limits_usage u;
        struct stat st;
        uint64_t total;
        bool accounting = !in_cgroup, fds = fd_scan_due(s, p, im, accounting);

        /* At the first scan, not before the program starts (most end before it): files of
         * the overlay report its device, or the upper layer's (which the supervisor gave
         * us); memfds that of the kernel's shared-memory mount. */
        if (fds && !im->devs.disk[1] && stat(s->workspace, &st) == 0) {
                im->devs.disk[1] = st.st_dev;
                limits_probe_shm_dev(&im->devs);
        }
        limits_scan(&im->devs, fds, accounting, &u);
        if (fds) {
                im->held = u;
                im->last_fd_scan = mono_us();
        }
        u.held_disk = im->held.held_disk;
        u.held_disk_files = im->held.held_disk_files;
        u.held_shm = im->held.held_shm;
        __atomic_store_n(&p->meter->held_disk, u.held_disk, __ATOMIC_RELAXED);
        __atomic_store_n(&p->meter->held_disk_files, u.held_disk_files, __ATOMIC_RELAXED);
        if (accounting && out->limit == LIMIT_NONE && limits_memory_exceeded(&u, p->limits.memory, &total)) {
                out->limit = LIMIT_MEMORY;
                snprintf(out->detail, sizeof(out->detail),
                         "%.1f MiB in use (processes, /tmp, /dev/shm, memfds), over the limit of %.1f MiB "
                         "(--max-memory; measured by txbox, no cgroup here)",
                         (double)total / (1 << 20), (double)p->limits.memory / (1 << 20));
                kill(-1, SIGKILL); /* pid 1 is spared */
        }
}

/* Reap until the program exits, measuring every 100 ms. */
static void init_reap(pid_t pid, const struct sandbox_spec *s, const struct sandbox_prep *p,
                      struct init_meter *im, struct init_status *out)
{
        struct sigaction sa = {.sa_handler = init_tick};
        struct itimerval it = {.it_interval = {0, 100000}, .it_value = {0, 100000}};

        /* The program runs now: what it takes is measured from here. */
        limits_hints(s->workspace, &im->base_avail, in_cgroup ? NULL : &im->base_shmem);
        im->last_fd_scan = mono_us();
        sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART: waitpid returns EINTR */
        setitimer(ITIMER_REAL, &it, NULL);
        for (;;) {
                int st;
                pid_t w = waitpid(-1, &st, 0);
                if (w < 0 && errno == EINTR) {
                        init_measure(s, p, im, out);
                        continue;
                }
                if (w < 0)
                        break;
                if (w == pid) {
                        out->status = st;
                        break;
                }
        }
}

/* Into the transaction's cgroup before anything else (see cgroup.h): born in it (v2), or
 * writing ourselves into its tasks files (v1; should that fail, the accounting stands in,
 * unless --max-cpus asked for the cgroup). */
static void join_cgroup(const struct sandbox_prep *p)
{
        int r = 0;

        in_cgroup = p->cg && !p->cg_wait;
        if (!p->ncg_join)
                return;
        for (size_t i = 0; i < p->ncg_join; i++) {
                if (r == 0 && write(p->cg_join[i], "0", 1) != 1)
                        r = -errno;
                close(p->cg_join[i]);
        }
        if (r < 0) {
                in_cgroup = false;
                if (p->limits.cpu_milli) {
                        errno = -r;
                        SETUP_FAIL("cannot enter the transaction's cgroup: %s", strerror(-r));
                        _exit(TXBOX_EXIT_TXBOX);
                }
        }
}

/* One process's command line (its name when it has none), NULs as spaces, into buf. */
static void proc_command(const char *pid, char *buf, size_t size)
{
        char path[300];
        snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);
        if (fd >= 0)
                close(fd);
        if (n < 0)
                n = 0;
        while (n > 0 && buf[n - 1] == '\0')
                n--;
        for (ssize_t i = 0; i < n; i++)
                if (buf[i] == '\0')
                        buf[i] = ' ';
        buf[n] = '\0';
}

/* A process that is running, not a zombie waiting for us. */
static bool proc_alive(const char *pid, char *comm, size_t size)
{
        char path[300], buf[512];
        snprintf(path, sizeof(path), "/proc/%s/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
        if (fd >= 0)
                close(fd);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
        if (!open_paren || !close_paren || close_paren < open_paren || close_paren[1] != ' ')
                return false;
        snprintf(comm, size, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
        return close_paren[2] != 'Z' && close_paren[2] != 'X';
}

/* The program has ended: name what it left running (background jobs, servers, daemons),
 * which our exit is about to kill, for the notice the caller gets.  Orphans are ours, so
 * when we have no child left nothing is left at all, and /proc is not read. */
static void name_leftovers(struct init_status *out)
{
        size_t used = 0, more = 0;
        pid_t w;
        int st;

        while ((w = waitpid(-1, &st, WNOHANG)) > 0)
                ;
        if (w < 0)
                return;
        DIR *d = opendir("/proc");
        for (struct dirent *e; d && (e = readdir(d));) {
                char cmd[160], comm[32];
                if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
                    strspn(e->d_name, "0123456789") != strlen(e->d_name) || !strcmp(e->d_name, "1") ||
                    !proc_alive(e->d_name, comm, sizeof(comm)))
                        continue;
                proc_command(e->d_name, cmd, sizeof(cmd));
                int n = snprintf(out->killed + used, sizeof(out->killed) - used, "%s%s (pid %s)",
                                 used ? "; " : "", cmd[0] ? cmd : comm, e->d_name);
                if (n < 0 || (size_t)n >= sizeof(out->killed) - used - 8) {
                        out->killed[used] = '\0';
                        more++;
                        continue;
                }
                used += (size_t)n;
        }
        if (d)
                closedir(d);
        if (more && used)
                snprintf(out->killed + used, sizeof(out->killed) - used, "; %zu more", more);
}

/* Where clone3 was refused, the supervisor moves us into the cgroup while we set up the
 * mounts; nothing starts the program before that is done, so whatever it starts is in it. */
static void wait_cgroup(const struct sandbox_prep *p)
{
        char c;
        ssize_t n;

        if (!p->cg_wait)
                return;
        while ((n = read(p->cg_sync, &c, 1)) < 0 && errno == EINTR)
                ;
        if (n != 1) /* the supervisor gave up on us */
                _exit(TXBOX_EXIT_TXBOX);
        in_cgroup = c == 'x';
        close(p->cg_sync);
}

__attribute__((noreturn)) void sandbox_init_main(const struct sandbox_spec *spec,
                                                 const struct sandbox_prep *p, int syncfd, int statusfd)
{
        char c;
        struct init_status status = {0};
        const struct sandbox_spec *s = spec;
        struct init_meter im = {.devs = {.disk = {p->upper_dev}}};

        (void)prctl(PR_SET_NAME, "txbox-init", 0, 0, 0); /* unchecked: a name for ps and perf only */
        join_cgroup(p);
        /* Our own empty network namespace (owned by the sandbox's user namespace, whose
         * capabilities we hold from the start), made while the supervisor maps our ids.
         * (syncfd < 0: we were born in shared namespaces, mapped and without network.) */
        if (syncfd >= 0) {
                if (s->net != TXBOX_NET_HOST && unshare(CLONE_NEWNET) < 0) {
                        SETUP_FAIL("cannot create the sandbox's network namespace: %s", strerror(errno));
                        _exit(TXBOX_EXIT_TXBOX);
                }
                if (read(syncfd, &c, 1) != 1) /* the supervisor died before writing our id maps */
                        _exit(TXBOX_EXIT_TXBOX);
                close(syncfd);
        }
        trace_mark("init: mapped");
        if (sandbox_setup_mounts(s, p) < 0 ||
            (s->net != TXBOX_NET_NONE && s->net != TXBOX_NET_HOST && loopback_up() < 0) ||
            (s->net == TXBOX_NET_ALLOW && send_proxy_socket(p) < 0))
                _exit(TXBOX_EXIT_TXBOX);
        if (sethostname("txbox", 5) < 0) {
                /* cosmetic: the uts namespace is still private */
        }
        /* Fork bombs end at the pid limit of our own pid namespace (root too); older kernels
         * keep pid_max global, and RLIMIT_NPROC then binds non-root users only. */
        if (limits_set_pid_max(p->limits.procs) < 0) {
                /* reported by txbox doctor */
        }
        trace_mark("init: mounted");
        if (sandbox_protect_proc() < 0)
                _exit(TXBOX_EXIT_TXBOX);
        trace_mark("init: proc protected");
        /* The program runs as our uid: make init unreachable by ptrace from it.  Init holds
         * the notification socket's peer and the namespaces' powers: a program that could
         * attach to it would be out of the sandbox, so no init that cannot be protected runs. */
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
                SETUP_FAIL("cannot make the sandbox's init undumpable (PR_SET_DUMPABLE): %s", strerror(errno));
                _exit(TXBOX_EXIT_TXBOX);
        }
        wait_cgroup(p);
        trace_mark("init: in its cgroup");
        pid_t pid = sandbox_spawn_program(s, p, statusfd);
        if (pid < 0) {
                SETUP_FAIL("cannot fork the program: %s", strerror(errno));
                _exit(TXBOX_EXIT_TXBOX);
        }
        close(child_errfd);
        close(p->notify_sock);
        init_child_pid = pid;
        struct sigaction sa = {.sa_handler = init_forward};
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        sigaction(SIGQUIT, &sa, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        init_reap(pid, s, p, &im, &status);
        trace_mark("init: program reaped");
        if (status.limit == LIMIT_NONE)
                name_leftovers(&status);
        /* Nothing may write the upper layer once the supervisor has the status: end every
         * process left (daemons, background jobs) and reap them all first.  Then the
         * supervisor can evaluate and commit while the namespaces are torn down. */
        setitimer(ITIMER_REAL, &(struct itimerval){0}, NULL);
        kill(-1, SIGKILL);
        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
                ;
        trace_mark("init: all reaped");
        if (write(statusfd, &status, sizeof(status)) < 0) {
                /* the supervisor is gone; our exit kills the namespace all the same */
        }
        _exit(0);
}
