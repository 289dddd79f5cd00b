/* The program's connect(2)s, made by the supervisor.
 *
 * A unix socket file on the read-only host tree is still connectable (docker.sock, an
 * ssh-agent, the D-Bus session bus: code run outside the sandbox), and Landlock cannot
 * refuse a pathname connect (its LANDLOCK_ACCESS_FS_RESOLVE_UNIX right, merged in 2026, is
 * in no kernel this was written for).  A seccomp filter cannot either: it cannot read connect's
 * address nor tell the family of its descriptor, and letting the call go on after a look would
 * race (another thread swaps the descriptor with dup2 or rewrites the address between the
 * look and the kernel's own read).  So every connect stops at the supervisor, which takes the
 * program's socket (pidfd_getfd: the same open file) and connects it itself, answering with
 * the result; nothing the program changes afterwards matters:
 *
 *   - a unix pathname is resolved in the program's own view (its root and cwd, every link
 *     followed) and pinned; only a socket file on the sandbox's own /tmp or /dev/shm (fresh
 *     tmpfs mounts no host process can reach) is connected, through /proc/self/fd/PIN, the
 *     very inode that was checked.  Anything else gets EACCES, as a Landlock refusal would;
 *   - an abstract name is connected when the sandbox has a network namespace of its own
 *     (abstract names live there); with --net=host it is the host's and refused;
 *   - inet and inet6 sockets are connected as asked: the network namespace is their boundary;
 *   - any other family is refused (EOPNOTSUPP): the kernel would check our capabilities
 *     there, not the program's (a netlink socket's multicast groups).
 *
 * A blocking connect that cannot complete at once (a TCP handshake, a unix listener's full
 * backlog) is started without blocking us and answered when it completes: the supervisor
 * never waits for the program's peers.  The program's socket is made non-blocking for the
 * moment of our call only.  Its peer sees txbox's pid (0, outside its pid namespace) in
 * SO_PEERCRED, with the program's uid and gid.
 */
#define _GNU_SOURCE
#include "sandbox/sockconn.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/net.h>
#include <seccomp.h>

#include "sandbox/exectarget.h"
#include "base/cleanup.h"

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
/* 32-bit x86's numbers: libseccomp names its connect by a pseudo number (it multiplexes
 * the socket calls), the kernel notifies the real one. */
#define I386_SOCKETCALL 102
#define I386_CONNECT    362

void sockconn_init(struct sockconn *c, bool own_net)
{
        memset(c, 0, sizeof(*c));
        c->own_net = own_net;
        c->epfd = -1;
}

static void drop(struct sockconn *c, struct sockconn_pending *p)
{
        if (p->sock >= 0 && c->epfd >= 0)
                epoll_ctl(c->epfd, EPOLL_CTL_DEL, p->sock, NULL);
        closep(&p->sock);
        closep(&p->pin);
        p->used = false;
        c->npend--;
}

void sockconn_free(struct sockconn *c)
{
        for (size_t i = 0; i < SOCKCONN_PENDING_MAX; i++)
                if (c->pend[i].used)
                        drop(c, &c->pend[i]);
        closep(&c->epfd);
}

bool sockconn_is_connect(const struct seccomp_notif *n)
{
        if (n->data.arch == AUDIT_ARCH_I386)
                return n->data.nr == I386_CONNECT ||
                       (n->data.nr == I386_SOCKETCALL && n->data.args[0] == SYS_CONNECT);
        return n->data.nr == seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, "connect");
}

static int answer(int listener, uint64_t id, int err)
{
        struct seccomp_notif_resp resp = {.id = id, .error = err ? -err : 0};
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
                return -errno; /* ENOENT: the task gave up meanwhile (a signal) or died */
        return 0;
}

static bool still_waiting(int listener, uint64_t id)
{
        return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* connect(fd, addr, len) without blocking us: the program's socket is non-blocking for the
 * moment of the call.  Returns 0 or the errno. */
static int connect_now(int fd, const struct sockaddr *addr, socklen_t len, bool *blocking)
{
        int fl = fcntl(fd, F_GETFL), e = 0;
        *blocking = fl >= 0 && !(fl & O_NONBLOCK);
        if (*blocking && fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
                return errno;
        if (connect(fd, addr, len) < 0)
                e = errno;
        if (*blocking)
                fcntl(fd, F_SETFL, fl);
        return e;
}

/* Wait for a blocking connect in progress, answering later; false when none can be kept. */
static bool defer(struct sockconn *c, uint64_t id, int *sock, int *pin)
{
        size_t i = 0;
        while (i < SOCKCONN_PENDING_MAX && c->pend[i].used)
                i++;
        if (i == SOCKCONN_PENDING_MAX)
                return false;
        if (*pin < 0) {
                struct epoll_event ev = {.events = EPOLLOUT, .data.u64 = i};
                if (c->epfd < 0 && (c->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
                        return false;
                if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, *sock, &ev) < 0)
                        return false;
        }
        c->pend[i] =
                (struct sockconn_pending){.id = id, .sock = TAKE_FD(*sock), .pin = TAKE_FD(*pin), .used = true};
        c->npend++;
        return true;
}

/* The connect of a socket we hold, with its result the answer (or deferred). */
static int finish(struct sockconn *c, int listener, uint64_t id, int *sock, int *pin,
                  const struct sockaddr *addr, socklen_t len)
{
        bool blocking;
        int e = connect_now(*sock, addr, len, &blocking);
        /* A blocking connect waits: inet for its handshake, unix for room in the listener's
         * backlog (EAGAIN, retried). */
        bool waits =
                blocking && ((*pin < 0 && (e == EINPROGRESS || e == EALREADY)) || (*pin >= 0 && e == EAGAIN));
        if (waits && defer(c, id, sock, pin))
                return 0;
        return answer(listener, id, waits ? ENOBUFS : e);
}

/* The dev numbers of the sandbox's own /tmp and /dev/shm, looked up in the task's view (the
 * program cannot mount anything over them). */
static void find_devs(struct sockconn *c, pid_t pid)
{
        struct stat st;
        int fd = task_open(pid, AT_FDCWD, "/tmp", false);
        if (fd >= 0 && fstat(fd, &st) == 0)
                c->tmp_dev = st.st_dev;
        closep(&fd);
        fd = task_open(pid, AT_FDCWD, "/dev/shm", false);
        if (fd >= 0 && fstat(fd, &st) == 0)
                c->shm_dev = st.st_dev;
        closep(&fd);
        c->devs_known = true;
}

static int unix_connect(struct sockconn *c, int listener, const struct seccomp_notif *n, int *sock,
                        const struct sockaddr_un *sun, socklen_t len)
{
        char path[sizeof(sun->sun_path) + 1];
        struct sockaddr_un pinned = {.sun_family = AF_UNIX};
        struct stat st;
        int pin = -1, r;

        if (len <= offsetof(struct sockaddr_un, sun_path) || sun->sun_family != AF_UNIX)
                return finish(c, listener, n->id, sock, &pin, (const struct sockaddr *)sun, len);
        if (sun->sun_path[0] == '\0') {
                /* An abstract name, in the namespace of the socket's network namespace. */
                if (c->own_net)
                        return finish(c, listener, n->id, sock, &pin, (const struct sockaddr *)sun, len);
                return answer(listener, n->id, EACCES);
        }
        size_t pl = strnlen(sun->sun_path, len - offsetof(struct sockaddr_un, sun_path));
        memcpy(path, sun->sun_path, pl);
        path[pl] = '\0';
        if ((pin = task_open((pid_t)n->pid, AT_FDCWD, path, false)) < 0)
                return answer(listener, n->id,
                              -pin == ELOOP || -pin == ENOENT || -pin == ENOTDIR || -pin == EACCES ||
                                              -pin == ENAMETOOLONG
                                      ? -pin
                                      : EACCES);
        if (!c->devs_known)
                find_devs(c, (pid_t)n->pid);
        if (fstat(pin, &st) < 0 || !S_ISSOCK(st.st_mode)) {
                close(pin);
                return answer(listener, n->id, ECONNREFUSED); /* what the kernel says of a non-socket */
        }
        if (!c->tmp_dev || (st.st_dev != c->tmp_dev && st.st_dev != c->shm_dev)) {
                /* The host's: docker.sock, an ssh-agent, D-Bus ... */
                if (!c->refused++)
                        snprintf(c->refused_path, sizeof(c->refused_path), "%s", path);
                close(pin);
                return answer(listener, n->id, EACCES);
        }
        snprintf(pinned.sun_path, sizeof(pinned.sun_path), "/proc/self/fd/%d", pin);
        r = finish(c, listener, n->id, sock, &pin, (const struct sockaddr *)&pinned,
                   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(pinned.sun_path) + 1));
        closep(&pin);
        return r;
}

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* A pidfd for the thread that asked (its descriptors): PIDFD_THREAD since Linux 6.9, else
 * its thread group's leader, which shares them (threads share one table of descriptors). */
static int thread_pidfd(pid_t tid)
{
        char path[64], line[128];
        int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
        if (fd >= 0 || errno != EINVAL)
                return fd;
        if ((fd = (int)syscall(SYS_pidfd_open, tid, 0)) >= 0 || errno != EINVAL)
                return fd; /* the leader itself */
        snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        long tgid = 0;
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "Tgid: %ld", &tgid) == 1)
                        break;
        return tgid > 0 ? (int)syscall(SYS_pidfd_open, (pid_t)tgid, 0) : -1;
}

int sockconn_handle(struct sockconn *c, int listener, const struct seccomp_notif *n)
{
        bool compat = n->data.arch == AUDIT_ARCH_I386;
        uint64_t fd = n->data.args[0], addr = n->data.args[1], len = n->data.args[2];
        struct sockaddr_storage sa;
        char mem[64];
        int domain = 0;
        socklen_t dl = sizeof(domain);

        snprintf(mem, sizeof(mem), "/proc/%u/mem", n->pid);
        _cleanup_close_ int m = open(mem, O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int pidfd = thread_pidfd((pid_t)n->pid);
        _cleanup_close_ int sock = -1;
        /* The pid may have been reused between the notification and our opens. */
        if (!still_waiting(listener, n->id))
                return 0;
        if (m < 0 || pidfd < 0)
                return answer(listener, n->id, EPERM);
        if (compat) {
                uint32_t a[3];
                if (n->data.nr == I386_SOCKETCALL) {
                        if (pread(m, a, sizeof(a), (off_t)n->data.args[1]) != (ssize_t)sizeof(a))
                                return answer(listener, n->id, EFAULT);
                } else {
                        a[0] = (uint32_t)n->data.args[0], a[1] = (uint32_t)n->data.args[1];
                        a[2] = (uint32_t)n->data.args[2];
                }
                fd = a[0], addr = a[1], len = a[2];
        }
        if ((int)len < 0 || len > sizeof(sa))
                return answer(listener, n->id, EINVAL);
        memset(&sa, 0, sizeof(sa));
        if (len && pread(m, &sa, len, (off_t)addr) != (ssize_t)len)
                return answer(listener, n->id, EFAULT);
        if ((sock = (int)syscall(SYS_pidfd_getfd, pidfd, (int)fd, 0)) < 0)
                return answer(listener, n->id, errno == EBADF ? EBADF : EPERM);
        if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &dl) < 0)
                return answer(listener, n->id, errno == ENOTSOCK ? ENOTSOCK : EPERM);
        int none = -1;
        switch (domain) {
                case AF_UNIX:
                        return unix_connect(c, listener, n, &sock, (const struct sockaddr_un *)&sa,
                                            (socklen_t)len);
                case AF_INET:
                case AF_INET6:
                        return finish(c, listener, n->id, &sock, &none, (const struct sockaddr *)&sa,
                                      (socklen_t)len);
                default: return answer(listener, n->id, EOPNOTSUPP);
        }
}

bool sockconn_available(void)
{
        static int avail = -1;
        char scope[8] = "0";

        if (avail < 0) {
                /* pidfd_getfd (Linux >= 5.6) on ourselves, and a Yama that lets a parent reach
                 * its children without CAP_SYS_PTRACE (scope 0 or 1). */
                int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
                int fd = pfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pfd, 2, 0) : -1;
                FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
                if (f && !fgets(scope, sizeof(scope), f))
                        scope[0] = '0';
                if (f)
                        fclose(f);
                avail = fd >= 0 && scope[0] <= '1';
                if (fd >= 0)
                        close(fd);
                if (pfd >= 0)
                        close(pfd);
        }
        return avail;
}

int sockconn_fd(const struct sockconn *c) { return c->epfd; }

bool sockconn_retrying(const struct sockconn *c)
{
        for (size_t i = 0; i < SOCKCONN_PENDING_MAX; i++)
                if (c->pend[i].used && c->pend[i].pin >= 0)
                        return true;
        return false;
}

void sockconn_service(struct sockconn *c, int listener)
{
        for (size_t i = 0; c->npend && i < SOCKCONN_PENDING_MAX; i++) {
                struct sockconn_pending *p = &c->pend[i];
                struct pollfd pf;
                int e = 0;
                socklen_t el = sizeof(e);
                bool blocking;

                if (!p->used)
                        continue;
                if (!still_waiting(listener, p->id)) { /* a signal, or the end of the task */
                        drop(c, p);
                        continue;
                }
                if (p->pin >= 0) {
                        struct sockaddr_un pinned = {.sun_family = AF_UNIX};
                        snprintf(pinned.sun_path, sizeof(pinned.sun_path), "/proc/self/fd/%d", p->pin);
                        e = connect_now(p->sock, (const struct sockaddr *)&pinned,
                                        (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
                                                    strlen(pinned.sun_path) + 1),
                                        &blocking);
                        if (e == EAGAIN)
                                continue;
                } else {
                        pf = (struct pollfd){.fd = p->sock, .events = POLLOUT};
                        if (poll(&pf, 1, 0) <= 0)
                                continue;
                        if (getsockopt(p->sock, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
                                e = errno;
                }
                answer(listener, p->id, e);
                drop(c, p);
        }
}
