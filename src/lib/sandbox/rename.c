/* Directory renames for the program: the supervisor's side, and the helper that makes them.
 *
 * The overlay cannot move a directory of its lower layers (EXDEV; renametree.h).  Every
 * rename, renameat and renameat2 of the program stops at the seccomp listener (guard.c).
 * Most rename a file: the supervisor reads the source path from the task's memory, looks at
 * it in the task's view and lets the call go on at once (SECCOMP_USER_NOTIF_FLAG_CONTINUE),
 * so the kernel does it as if nothing had stopped it.  A directory (or either side of
 * RENAME_EXCHANGE, or a path it cannot look at safely) goes to the helper, which makes the
 * call itself and completes it when the kernel refuses with EXDEV (rename_complete); its
 * answer becomes the call's result.  Meanwhile the supervisor keeps watching the time and
 * the limits: a huge tree is the disk and files limits' business, and the timeout ends it.
 *
 * The helper has nothing the program has not.  It is started at the first such call, by a
 * child of the supervisor that joins the calling task's user, mount, pid, network, IPC and
 * UTS namespaces and its root (the sandbox's: the program can change none of them), and
 * then forks it into the sandbox's pid namespace and cgroup; it drops every capability,
 * sets no_new_privs, takes the program's Landlock rules, seccomp deny-list and file-size
 * limit, and is non-dumpable (its memory is a copy of the supervisor's).  Paths reach it as
 * strings the supervisor read, and the task's working directory or directory descriptor as
 * O_PATH descriptors the supervisor opened through /proc/PID while the call was confirmed
 * pending (SECCOMP_IOCTL_NOTIF_ID_VALID): every name is resolved in the program's own view
 * with the program's own rights, so a path swapped under it (a symlink into /proc, out of
 * the workspace, to the state dir) leads where the program itself could go, and no further.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/audit.h>

#include "base/cleanup.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/process.h"
#include "base/trace.h"
#include "sandbox/cgroup.h"
#include "sandbox/guard.h"
#include "sandbox/renametree.h"
#include "sandbox/sandbox_int.h"
#include "base/syscalls.h"

/* Calls the helper holds at once (each a task of the program waiting); more go on to the
 * kernel, which refuses them as before. */
#define PENDING_MAX 64

enum { CALL_RENAME, CALL_RENAMEAT, CALL_RENAMEAT2, NCALLS };

struct renamer {
        const struct sandbox_spec *spec;
        const struct sandbox_prep *prep;
        int root;          /* the sandbox's root, for absolute paths; -1 until needed */
        pid_t helper;      /* 0: not started; -1: gone, and no other is started */
        int sock;          /* to the helper; -1 */
        bool ready;        /* the helper is locked down and serving */
        uint64_t pending[PENDING_MAX]; /* notifications it holds, in the order sent */
        size_t npending;
        bool cut;          /* it ended in the middle of one */
};

/* The messages.  A request carries the two paths and, by SCM_RIGHTS in this order, the
 * task's working directory (the helper works from there: "/proc/self/cwd/x" means there)
 * and for each relative path the directory it is relative to. */
struct rename_req {
        uint64_t id;
        uint32_t flags;
        uint8_t has_dir[3]; /* the working directory, old's, new's */
        uint16_t len[2];    /* old, new: bytes, the NUL included */
        char paths[2 * PATH_MAX];
};
enum { ANS_READY = 1, ANS_DONE };
struct rename_ans {
        uint32_t kind;
        int32_t err; /* ANS_DONE: 0 or the errno the call returns */
        uint64_t id;
};

/* One call's arguments, whichever of the three it is. */
struct call {
        int dfd[2];      /* old, new */
        uint64_t addr[2];
        unsigned flags;
};

static struct renamer *renamer_new(const struct sandbox_spec *s, const struct sandbox_prep *p)
{
        struct renamer *rn = xcalloc(1, sizeof(*rn));
        rn->spec = s;
        rn->prep = p;
        rn->root = rn->sock = -1;
        return rn;
}

/* The calls' numbers: the native ABI's (an ABI may lack the older two) and, on x86_64,
 * i386's, the one other ABI the filter lets in (guard.c).  Known at build time: the
 * supervisor looks at every notification, every exec's too. */
#ifndef __NR_rename
#define __NR_rename -1
#endif
#ifndef __NR_renameat
#define __NR_renameat -1
#endif
static const int native_nr[NCALLS] = {__NR_rename, __NR_renameat, __NR_renameat2};
#ifdef __x86_64__
static const int i386_nr[NCALLS] = {38, 302, 353};
#endif

/* CALL_*, or -1 when n is not a rename call. */
static int call_of(const struct seccomp_notif *n)
{
        const int *nr = native_nr;

#ifdef __x86_64__
        if (n->data.arch == AUDIT_ARCH_I386)
                nr = i386_nr;
#endif
        for (int i = 0; i < NCALLS; i++)
                if (nr[i] >= 0 && n->data.nr == nr[i])
                        return i;
        return -1;
}

static void decode(int which, const struct seccomp_notif *n, struct call *c)
{
        const __u64 *a = n->data.args;

        /* Descriptors and flags are ints to the kernel: the low 32 bits (AT_FDCWD too). */
        if (which == CALL_RENAME)
                *c = (struct call){.dfd = {AT_FDCWD, AT_FDCWD}, .addr = {a[0], a[1]}};
        else
                *c = (struct call){.dfd = {(int)(uint32_t)a[0], (int)(uint32_t)a[2]}, .addr = {a[1], a[3]},
                                   .flags = which == CALL_RENAMEAT2 ? (unsigned)a[4] : 0};
}

/* A NUL-terminated path of at most PATH_MAX bytes at addr in the task's memory: 0, or -1
 * when unreadable or too long (the kernel then fails the call by itself). */
static int read_path(pid_t pid, uint64_t addr, char buf[PATH_MAX])
{
        /* Split at the next 4 KiB boundary: the read then ends short at an unmapped page
         * instead of failing whole (process_vm_readv reads whole iovecs or none). */
        size_t first = 4096 - (size_t)(addr & 4095);
        struct iovec local = {.iov_base = buf, .iov_len = PATH_MAX};
        struct iovec remote[2] = {
                {.iov_base = (void *)(uintptr_t)addr, .iov_len = first},
                {.iov_base = (void *)(uintptr_t)(addr + first), .iov_len = PATH_MAX - first},
        };
        ssize_t n = process_vm_readv(pid, &local, 1, remote, first < PATH_MAX ? 2 : 1, 0);

        return n > 0 && memchr(buf, '\0', (size_t)n) ? 0 : -1;
}

/* The directory a relative path of the task is relative to: its working directory or
 * descriptor dfd, opened O_PATH through /proc (whoever the supervisor is, it gets what the
 * task has, nothing else).  -1 when there is none (the kernel then says EBADF or ENOENT). */
static int open_dir_of(pid_t pid, int dfd)
{
        char p[64];

        if (dfd == AT_FDCWD)
                snprintf(p, sizeof(p), "/proc/%d/cwd", (int)pid);
        else if (dfd >= 0)
                snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)pid, dfd);
        else
                return -1;
        return open(p, O_PATH | O_CLOEXEC);
}

/* Is path (the task's, relative to dfd) a directory?  Looked at in the task's view and
 * never beyond it: an absolute path beneath the sandbox's root, a relative one within the
 * mount it starts on, no magic links.  What cannot be told that way counts as a directory:
 * the helper, in the task's own view, finds out.  Where the path leads nowhere, the kernel
 * says so. */
static bool is_dir(struct renamer *rn, int listener, const struct seccomp_notif *n, int dfd, const char *path)
{
        /* O_DIRECTORY | O_NOFOLLOW: a file or a symlink fails (ENOTDIR), which spares the
         * common case an fstat and a close; this runs at every rename. */
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC};
        _cleanup_close_ int base = -1, fd = -1;
        uint64_t id = n->id;
        char p[64];

        if (path[0] == '/') {
                /* The sandbox's root, the same for every task (none can chroot): the first
                 * task's, once the notification shows the pid was still that task's. */
                snprintf(p, sizeof(p), "/proc/%d/root", (int)n->pid);
                if (rn->root < 0 && (base = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0 &&
                    ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0)
                        rn->root = TAKE_FD(base);
                if (rn->root < 0)
                        return true;
                how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
                fd = sys_openat2(rn->root, path, &how, sizeof(how));
        } else {
                if ((base = open_dir_of(n->pid, dfd)) < 0)
                        return false;
                how.resolve = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS;
                fd = sys_openat2(base, path, &how, sizeof(how));
        }
        return fd >= 0 || errno == EXDEV || errno == ELOOP || errno == EAGAIN || errno == ENOSYS;
}

/* ---- the helper ---- */

static int send_ans(int sock, uint32_t kind, uint64_t id, int err)
{
        struct rename_ans a = {.kind = kind, .err = err, .id = id};
        return send(sock, &a, sizeof(a), MSG_NOSIGNAL) == sizeof(a) ? 0 : -1;
}

/* One request off sock: 1, 0 when the supervisor is gone, -1 when malformed.  dirs[] get
 * the directories it carries, -1 for those it does not. */
static int recv_req(int sock, struct rename_req *q, int dirs[3])
{
        char cbuf[CMSG_SPACE(3 * sizeof(int))];
        struct iovec iov = {.iov_base = q, .iov_len = sizeof(*q)};
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        int fds[3] = {-1, -1, -1}, nfds = 0;
        ssize_t n;

        dirs[0] = dirs[1] = dirs[2] = -1;
        while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
                ;
        if (n <= 0)
                return 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && nfds == 0) {
                        nfds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
                        nfds = nfds > 3 ? 3 : nfds;
                        memcpy(fds, CMSG_DATA(c), (size_t)nfds * sizeof(int));
                }
        for (int i = 0, k = 0; i < 3; i++)
                if (q->has_dir[i] && k < nfds)
                        dirs[i] = fds[k++];
        size_t head = offsetof(struct rename_req, paths);
        bool ok = (size_t)n >= head && q->len[0] >= 1 && q->len[1] >= 1 && q->len[0] <= PATH_MAX &&
                  q->len[1] <= PATH_MAX && head + q->len[0] + q->len[1] == (size_t)n &&
                  q->paths[q->len[0] - 1] == '\0' && q->paths[q->len[0] + q->len[1] - 1] == '\0';
        for (int i = 0; i < 3; i++)
                ok &= !q->has_dir[i] || dirs[i] >= 0;
        return ok ? 1 : -1;
}

__attribute__((noreturn)) static void helper_serve(int sock)
{
        for (;;) {
                struct rename_req q;
                int dirs[3], r = recv_req(sock, &q, dirs), err = EXDEV;

                if (r == 0)
                        _exit(0);
                if (r > 0 && (dirs[0] >= 0 ? fchdir(dirs[0]) : chdir("/")) == 0)
                        err = rename_complete(dirs[1] >= 0 ? dirs[1] : AT_FDCWD, q.paths,
                                              dirs[2] >= 0 ? dirs[2] : AT_FDCWD, q.paths + q.len[0], q.flags);
                for (int i = 0; i < 3; i++)
                        if (dirs[i] >= 0)
                                close(dirs[i]);
                if (send_ans(sock, ANS_DONE, q.id, err) < 0)
                        _exit(0);
        }
}

/* The helper, in the sandbox's namespaces: lock down as the program did, then serve. */
__attribute__((noreturn)) static void helper_main(const struct renamer *rn, int sock, unsigned variant)
{
        const struct txbox_limits *l = &rn->prep->limits;
        struct rlimit fsize;

        /* Our parent (the supervisor) is outside our pid namespace, so getppid() says 0 and
         * cannot be rechecked; had it died already, its end of sock is closed and the first
         * recv ends us.  A copy of the supervisor's memory, not to be read by the program,
         * which has our uid: non-dumpable since the starter, and again here should that ever
         * change. */
        if (die_with_parent(0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                _exit(1);
        umask(0);
        signal(SIGPIPE, SIG_IGN);
        signal(SIGXFSZ, SIG_IGN); /* a file over the disk limit fails the copy (EFBIG) */
        if (l->disk && getrlimit(RLIMIT_FSIZE, &fsize) == 0 &&
            (fsize.rlim_max == RLIM_INFINITY || fsize.rlim_max > l->disk)) {
                fsize.rlim_cur = fsize.rlim_max = l->disk;
                if (setrlimit(RLIMIT_FSIZE, &fsize) < 0)
                        _exit(1);
        }
        if (setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0}) < 0 ||
            sandbox_confine_helper(rn->spec, rn->prep) < 0 ||
            guard_seccomp_load(variant) < 0)
                _exit(1);
        if (send_ans(sock, ANS_READY, 0, 0) < 0)
                _exit(0);
        helper_serve(sock);
}

/* The namespaces the helper joins, the user namespace first (it grants the rights to join
 * the others). */
static const char *const helper_ns[] = {"user", "mnt", "pid", "net", "ipc", "uts"};
#define NNS ARRAY_SIZE(helper_ns)

/* In the child of the supervisor that starts the helper: join, then fork it (as our
 * parent's child, CLONE_PARENT, into the sandbox's pid namespace) and report its pid. */
__attribute__((noreturn)) static void starter(const struct renamer *rn, pid_t parent, int *fds, size_t nfds,
                                              int sock, int pidfd, int rootfd, int nullfd, unsigned variant)
{
        /* Non-dumpable before anything joins the sandbox (the helper inherits it): our
         * memory is a copy of the supervisor's. */
        if (die_with_parent(parent) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                _exit(1);
        for (int i = 0; i < 3; i++)
                if (dup2(nullfd, i) < 0)
                        _exit(1);
        int keep[NNS + 3];
        memcpy(keep, fds, nfds * sizeof(int));
        keep[nfds] = sock;
        keep[nfds + 1] = pidfd;
        keep[nfds + 2] = rootfd;
        /* Nothing of ours may reach the sandbox: no claim on the state dir, no log. */
        if (sandbox_close_all_but(keep, nfds + 3) < 0)
                _exit(1);
        for (size_t i = 0; i < NNS; i++)
                if (setns(fds[i], 0) < 0)
                        _exit(1);
        /* The program's root, which setns gave us unless txbox itself runs chrooted (the
         * sandbox then has the chroot's): chroot(2) only then, since a container's seccomp
         * profile may refuse it (deploy/seccomp). */
        struct stat want, got;
        if (fstat(rootfd, &want) < 0 || stat("/", &got) < 0)
                _exit(1);
        bool same = want.st_dev == got.st_dev && want.st_ino == got.st_ino;
        if (!same && (fchdir(rootfd) < 0 || chroot(".") < 0))
                _exit(1);
        if (chdir("/") < 0)
                _exit(1);
        for (size_t i = 0; i < NNS; i++)
                close(fds[i]);
        close(rootfd);
        pid_t h = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, NULL);
        if (h == 0) {
                close(pidfd);
                helper_main(rn, sock, variant);
        }
        _exit(h > 0 && write(pidfd, &h, sizeof(h)) == sizeof(h) ? 0 : 1);
}

/* What the helper is started into: the waiting task's namespaces and root, opened through
 * its /proc entries (init's are closed to us: it is not dumpable; the program's process is,
 * for the exec checks).  They are init's too: the program can neither unshare nor chroot. */
struct joined {
        int ns[NNS], root;
};

static void joined_close(struct joined *j)
{
        for (size_t i = 0; i < NNS; i++)
                closep(&j->ns[i]);
        closep(&j->root);
}

static int joined_open(pid_t pid, struct joined *j)
{
        char p[64];

        for (size_t i = 0; i < NNS; i++)
                j->ns[i] = -1;
        for (size_t i = 0; i < NNS; i++) {
                snprintf(p, sizeof(p), "/proc/%d/ns/%s", (int)pid, helper_ns[i]);
                if ((j->ns[i] = open(p, O_RDONLY | O_CLOEXEC)) < 0)
                        return -1;
        }
        snprintf(p, sizeof(p), "/proc/%d/root", (int)pid);
        return (j->root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ? -1 : 0;
}

/* Start the helper into j: 0, or -1 (renames of lower directories then fail as the kernel
 * has them, EXDEV). */
static int spawn(struct renamer *rn, const struct joined *j)
{
        int sp[2] = {-1, -1}, pidp[2] = {-1, -1}, nullfd = -1, r = -1, fds[NNS];
        pid_t h = -1;
        unsigned variant = rn->prep->guard & ~GUARD_NOTIFY;

        memcpy(fds, j->ns, sizeof(fds));
        if (guard_seccomp_prepare(variant, rn->spec->state_dir, NULL) < 0 ||
            (nullfd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0 ||
            socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0 || pipe2(pidp, O_CLOEXEC) < 0)
                goto out;
        pid_t self = getpid(), c = fork();
        if (c == 0)
                starter(rn, self, fds, NNS, sp[1], pidp[1], j->root, nullfd, variant);
        closep(&pidp[1]);
        if (c > 0) {
                while (read(pidp[0], &h, sizeof(h)) < 0 && errno == EINTR)
                        ;
                while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        if (c < 0 || h <= 0)
                goto out;
        /* Its memory and processes count against the run's, like the program's. */
        if (rn->prep->cg && cgroup_tx_attach(rn->prep->cg, h, NULL) < 0) {
                /* its share of memory then goes uncounted; the copy's disk is counted all the same */
        }
        rn->helper = h;
        rn->sock = TAKE_FD(sp[0]);
        trace_mark("rename helper started");
        r = 0;
out:
        closep(&nullfd);
        closep(&sp[0]);
        closep(&sp[1]);
        closep(&pidp[0]);
        closep(&pidp[1]);
        return r;
}

/* ---- the supervisor ---- */

/* dirs: the task's working directory, old's directory, new's (-1: none). */
static int send_req(int sock, uint64_t id, unsigned flags, const char *paths[2], const int dirs[3])
{
        struct rename_req q = {.id = id, .flags = flags};
        char cbuf[CMSG_SPACE(3 * sizeof(int))] = {0};
        int fds[3], nfds = 0;

        for (int i = 0; i < 2; i++) {
                size_t len = strlen(paths[i]) + 1;
                q.len[i] = (uint16_t)len;
                memcpy(q.paths + (i ? q.len[0] : 0), paths[i], len);
        }
        for (int i = 0; i < 3; i++)
                if ((q.has_dir[i] = dirs[i] >= 0))
                        fds[nfds++] = dirs[i];
        struct iovec iov = {.iov_base = &q,
                            .iov_len = offsetof(struct rename_req, paths) + q.len[0] + q.len[1]};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        if (nfds) {
                mh.msg_control = cbuf;
                mh.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
                memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
        }
        return sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)iov.iov_len ? 0 : -1;
}

/* Hand the call n to the helper (started at the first): 0, or -1 when it cannot take it
 * (the call then goes on to the kernel). */
static int hand_over(struct renamer *rn, int listener, const struct seccomp_notif *n, const struct call *c,
                     const char *paths[2], bool *gone)
{
        int dirs[3] = {-1, -1, -1}, r = -1;
        struct joined j = {.ns = {-1, -1, -1, -1, -1, -1}, .root = -1};

        if (rn->helper < 0 || rn->npending == PENDING_MAX)
                return -1;
        dirs[0] = open_dir_of(n->pid, AT_FDCWD); /* none: a task with no working directory */
        for (int i = 0; i < 2; i++)
                if (paths[i][0] != '/' && (dirs[i + 1] = open_dir_of(n->pid, c->dfd[i])) < 0)
                        goto out;
        if (rn->helper == 0 && joined_open(n->pid, &j) < 0) {
                rn->helper = -1; /* a task closed to us (made non-dumpable): no helper */
                goto out;
        }
        /* What /proc/PID showed is the waiting task's only if it still waits (a pid can be
         * reused): checked after the opens. */
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &n->id) < 0) {
                *gone = true;
                goto out;
        }
        if ((rn->helper == 0 && spawn(rn, &j) < 0) || send_req(rn->sock, n->id, c->flags, paths, dirs) < 0) {
                if (rn->helper == 0)
                        rn->helper = -1;
                goto out;
        }
        rn->pending[rn->npending++] = n->id;
        r = 0;
out:
        for (int i = 0; i < 3; i++)
                closep(&dirs[i]);
        joined_close(&j);
        return r;
}

static int notify(struct renamer *rn, int listener, const struct seccomp_notif *n)
{
        struct call c;
        char old[PATH_MAX], new[PATH_MAX];
        const char *paths[2] = {old, new};
        bool gone = false;

        decode(call_of(n), n, &c);
        /* Flags the overlay has no answer to (RENAME_WHITEOUT, unknown ones) are the
         * kernel's to refuse, as is a path it cannot read.  Only a directory can be
         * refused with EXDEV on the overlay: the source, or with RENAME_EXCHANGE either
         * side.  Anything else goes on at once: most renames are of files. */
        bool xchg = c.flags & RENAME_EXCHANGE;
        if ((c.flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE)) ||
            read_path(n->pid, c.addr[0], old) < 0 || (xchg && read_path(n->pid, c.addr[1], new) < 0) ||
            (!is_dir(rn, listener, n, c.dfd[0], old) && !(xchg && is_dir(rn, listener, n, c.dfd[1], new))) ||
            (!xchg && read_path(n->pid, c.addr[1], new) < 0))
                return guard_notify_answer(listener, n->id, true, 0);
        if (hand_over(rn, listener, n, &c, paths, &gone) == 0 || gone)
                return 0;
        return guard_notify_answer(listener, n->id, true, 0);
}

/* The helper is gone: the calls it held fail as the kernel had them (EXDEV); one it had
 * begun may have been left half done. */
static void helper_gone(struct renamer *rn, int listener)
{
        if (rn->ready && rn->npending)
                rn->cut = true;
        for (size_t i = 0; i < rn->npending && listener >= 0; i++)
                guard_notify_answer(listener, rn->pending[i], false, EXDEV);
        rn->npending = 0;
        closep(&rn->sock);
        if (rn->helper > 0) {
                kill(rn->helper, SIGKILL);
                while (waitpid(rn->helper, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        rn->helper = -1;
}

/* Take the helper's answers; listener < 0: only note them. */
static void take_answers(struct renamer *rn, int listener)
{
        struct rename_ans a;

        for (;;) {
                ssize_t n = recv(rn->sock, &a, sizeof(a), MSG_DONTWAIT);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                if (n != sizeof(a) || (a.kind == ANS_DONE && (!rn->npending || a.id != rn->pending[0]))) {
                        helper_gone(rn, listener); /* closed, or not making sense */
                        return;
                }
                if (a.kind == ANS_READY) {
                        rn->ready = true;
                        continue;
                }
                memmove(rn->pending, rn->pending + 1, --rn->npending * sizeof(rn->pending[0]));
                if (listener >= 0)
                        guard_notify_answer(listener, a.id, false, a.err);
        }
}

int renamer_notify(void *ctx, int listener, const struct seccomp_notif *n)
{
        struct supervise *sv = ctx;

        if (call_of(n) < 0)
                return 1; /* an exec */
        if (!sv->rn)
                sv->rn = renamer_new(sv->spec, sv->prep);
        int r = notify(sv->rn, listener, n);
        sv->rename_sock = sv->rn->sock;
        return r;
}

void renamer_on_answer(struct supervise *sv)
{
        struct renamer *rn = sv->rn;

        if (rn && rn->sock >= 0)
                take_answers(rn, sv->listener);
        sv->rename_sock = rn ? rn->sock : -1;
}

void renamer_end(struct supervise *sv, char *cut, size_t size)
{
        struct renamer *rn = TAKE_PTR(sv->rn);

        sv->rename_sock = -1;
        if (size)
                cut[0] = '\0';
        if (!rn)
                return;
        if (rn->helper > 0) {
                /* Dead with the sandbox's pid namespace, or about to be: wait for it, then
                 * read what it answered before (a call it finished is not cut short). */
                kill(rn->helper, SIGKILL);
                while (waitpid(rn->helper, NULL, 0) < 0 && errno == EINTR)
                        ;
                rn->helper = 0;
                take_answers(rn, -1);
                if (rn->ready && rn->npending)
                        rn->cut = true;
        }
        if (rn->cut)
                snprintf(cut, size, "the program ended while txbox was completing one of its directory "
                                    "renames, which may be left half done");
        closep(&rn->sock);
        closep(&rn->root);
        free(rn);
}
