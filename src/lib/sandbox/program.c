/* The program's process: forked by init once the mounts are made, it resets its signals,
 * drops every capability, sets no_new_privs, puts on Landlock and the seccomp filter, then
 * waits for the command (its directory, argv and stdio, sent by the supervisor once the
 * command is checked) and execs it.  Both ends of that message are here (sandbox_send_go is
 * the supervisor's).  Apart from init: this is the process that becomes the untrusted
 * program, and everything it does before exec is its lock-down.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/close_range.h>

#include "base/cleanup.h"
#include "base/mem.h"
#include "base/trace.h"
#include "sandbox/guard.h"
#include "sandbox/reslimits.h"
#include "sandbox/sandbox_int.h"
#include "base/syscalls.h"

static int drop_privileges(long last)
{
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct data[2] = {{0}};

        /* The program must not regain our namespace capabilities, not even as uid 0 through
         * exec: it could otherwise unmount the overlay and reach the real workspace. */
        for (long c = 0; c <= last; c++)
                if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
                        return SETUP_FAIL("cannot drop capability %ld: %s", c, strerror(errno));
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return SETUP_FAIL("cannot clear ambient capabilities: %s", strerror(errno));
        if (syscall(SYS_capset, &hdr, data) < 0)
                return SETUP_FAIL("cannot drop capabilities: %s", strerror(errno));
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return SETUP_FAIL("cannot set no_new_privs: %s", strerror(errno));
        return 0;
}

static void reset_signals(void)
{
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        for (int sig = 1; sig < NSIG; sig++)
                signal(sig, SIG_DFL);
}

/* A terminal on fd, open for writing. */
static bool writable_terminal(int fd)
{
        int fl = fcntl(fd, F_GETFL);
        return fl >= 0 && (fl & O_ACCMODE) != O_RDONLY && isatty(fd);
}

/* Where the program may write, for Landlock: the workspace, the private /tmp and /dev nodes,
 * the caches mounted over the tools' cache paths.
 * Not its standard streams: Landlock checks opens, not writes through descriptors the
 * program already has, so they need no grant; and a grant on /proc/self/fd/N is one on
 * whatever the caller passed there: a file given as stdin (read-only) could be reopened
 * for writing, a directory given as stdin filled with files.  Only a terminal on stdout
 * or stderr, open for writing, is granted (the program writes to it anyway), so that
 * "echo x >/dev/stderr" still reaches it; the host's terminal is not under /dev/pts here. */
#define LANDLOCK_FIXED_PATHS 16

static int apply_landlock(const struct sandbox_spec *s, const struct sandbox_prep *p)
{
        const struct sandbox_caches *c = &p->caches;
        const char *paths[LANDLOCK_FIXED_PATHS + c->n];
        size_t n = 9;
        const char *fixed[] = {s->workspace, "/tmp", "/dev/shm", "/dev/pts", "/dev/null", "/dev/zero",
                               "/dev/full", "/dev/tty", "/proc"};

        memcpy(paths, fixed, sizeof(fixed));
        for (size_t i = 0; i < c->n; i++)
                if (c->v[i].mounted)
                        paths[n++] = c->v[i].target;
        if (writable_terminal(1))
                paths[n++] = "/proc/self/fd/1";
        if (writable_terminal(2))
                paths[n++] = "/proc/self/fd/2";
        paths[n] = NULL;
        int r = guard_landlock_apply(paths);
        if (r < 0) {
                errno = -r;
                return SETUP_FAIL("cannot apply Landlock rules: %s", strerror(-r));
        }
        return 0;
}

int sandbox_confine_helper(const struct sandbox_spec *s, const struct sandbox_prep *p)
{
        return drop_privileges(p->last_cap) < 0 || apply_landlock(s, p) < 0 ? -1 : 0;
}

/* Lock down, last step before exec: seccomp, and with notifications (exec checks, renames)
 * hand the listener to the supervisor (which must answer our own execve below). */
static int apply_seccomp(const struct sandbox_prep *p)
{
        int fd = guard_seccomp_load(p->guard);
        if (fd < 0) {
                errno = -fd;
                return SETUP_FAIL("cannot load the seccomp filter: %s", strerror(-fd));
        }
        if (!(p->guard & GUARD_NOTIFY))
                return 0;
        if (sandbox_send_fd(p->notify_sock, 'n', fd) < 0)
                return SETUP_FAIL("cannot hand the seccomp listener to the supervisor: %s", strerror(errno));
        close(fd);
        return 0;
}

/* Search PATH as execvp would, before the exec guard is on: every failed execve of the
 * search is otherwise one round trip to the supervisor (ten for a program in /usr/bin).
 * NULL when not found; execvpe then reports the error as it would have. */
static const char *resolve_program(const char *name, char *buf, size_t size)
{
        const char *path = getenv("PATH");
        struct stat st;

        if (!*name || strchr(name, '/'))
                return name;
        if (!path)
                path = "/bin:/usr/bin";
        for (const char *p = path;; p++) {
                const char *end = strchrnul(p, ':');
                int n = snprintf(buf, size, "%.*s%s%s", (int)(end - p), p, end == p ? "" : "/", name);
                if (n > 0 && (size_t)n < size && stat(buf, &st) == 0 && S_ISREG(st.st_mode) &&
                    access(buf, X_OK) == 0)
                        return buf;
                if (!*end)
                        return NULL;
                p = end;
        }
}

/* ---- the command: sent to the program's process once it is ready ---- */

/* The program's directory and argv as "cwd\0arg0\0arg1\0...", after a header; the
 * redirected stdio descriptors ride along with the header.  Chunked: a SEQPACKET message
 * must fit the socket's buffer, an argv need not. */
struct go_header {
        uint32_t len;   /* bytes of strings that follow */
        uint32_t nfds;  /* 0, or 3 (stdin, stdout, stderr) */
};

#define GO_CHUNK 32768

int sandbox_send_go(int sock, char *const argv[], const char *cwd, const int *stdio)
{
        size_t len = strlen(cwd) + 1;
        for (char *const *a = argv; *a; a++)
                len += strlen(*a) + 1;
        if (len > (64u << 20))
                return -E2BIG;
        _cleanup_free_ char *buf = xmalloc(len);
        char *w = stpcpy(buf, cwd) + 1;
        for (char *const *a = argv; *a; a++)
                w = stpcpy(w, *a) + 1;

        struct go_header h = {.len = (uint32_t)len, .nfds = stdio ? 3 : 0};
        char cbuf[CMSG_SPACE(3 * sizeof(int))] = {0};
        struct iovec iov = {.iov_base = &h, .iov_len = sizeof(h)};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        if (stdio) {
                mh.msg_control = cbuf;
                mh.msg_controllen = sizeof(cbuf);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(3 * sizeof(int));
                memcpy(CMSG_DATA(c), stdio, 3 * sizeof(int));
        }
        if (sendmsg(sock, &mh, MSG_NOSIGNAL) != sizeof(h))
                return errno ? -errno : -EIO;
        for (size_t off = 0; off < len; off += GO_CHUNK) {
                size_t n = len - off < GO_CHUNK ? len - off : GO_CHUNK;
                if (send(sock, buf + off, n, MSG_NOSIGNAL) != (ssize_t)n)
                        return errno ? -errno : -EIO;
        }
        return 0;
}

/* In the program's process: the command, into its copy of the spec.  Returns -1 when the supervisor gave up
 * (the socket closed: the transaction was refused or aborted). */
static int recv_go(int sock, struct sandbox_spec *s)
{
        struct go_header h;
        char cbuf[CMSG_SPACE(3 * sizeof(int))];
        struct iovec iov = {.iov_base = &h, .iov_len = sizeof(h)};
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        ssize_t n;

        while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
                ;
        if (n != sizeof(h) || h.len == 0 || h.len > (64u << 20))
                return -1;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        if (h.nfds == 3) {
                if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(3 * sizeof(int)))
                        return -1;
                memcpy(s->stdio, CMSG_DATA(c), 3 * sizeof(int));
                s->stdio_redirect = true;
        }
        char *buf = xmalloc(h.len);
        for (size_t off = 0; off < h.len; off += (size_t)n) {
                while ((n = recv(sock, buf + off, h.len - off, 0)) < 0 && errno == EINTR)
                        ;
                if (n <= 0)
                        return -1;
        }
        if (buf[h.len - 1] != '\0')
                return -1;
        size_t argc = 0;
        for (size_t i = 0; i < h.len; i++)
                argc += buf[i] == '\0';
        if (argc < 2)
                return -1;
        char **argv = xcalloc(argc, sizeof(char *));
        s->cwd = buf;
        char *p = buf + strlen(buf) + 1;
        for (size_t i = 0; i + 1 < argc; i++, p += strlen(p) + 1)
                argv[i] = p;
        s->argv = argv;
        return 0;
}

/* The program's process, forked by init as soon as the mounts are made: it drops its
 * privileges and puts its guards on before the command is known, then waits for it, so
 * that a command finds a process one exec away from running. */
__attribute__((noreturn)) static void exec_program(const struct sandbox_spec *spec,
                                                   const struct sandbox_prep *p)
{
        struct sandbox_spec cmd = *spec, *s = &cmd;

        trace_mark("program: forked");
        (void)prctl(PR_SET_NAME, "txbox-program", 0, 0, 0); /* unchecked: a name for ps and perf only */
        reset_signals();
        if (drop_privileges(p->last_cap) < 0)
                _exit(TXBOX_EXIT_TXBOX);
        trace_mark("program: unprivileged");
        /* init made itself (and so us) non-dumpable; the supervisor must read our memory to
         * check our execve, and nothing else runs in the sandbox yet. */
        if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0) {
                SETUP_FAIL("cannot make the program readable to the exec check: %s", strerror(errno));
                _exit(TXBOX_EXIT_TXBOX);
        }
        if (apply_landlock(s, p) < 0)
                _exit(TXBOX_EXIT_TXBOX);
        trace_mark("program: landlocked");
        if (apply_seccomp(p) < 0)
                _exit(TXBOX_EXIT_TXBOX);
        trace_mark("program: guarded");
        /* Ready: wait for the command (the supervisor checks it meanwhile); the socket closes
         * when the transaction was refused or given up. */
        cmd.stdio_redirect = false;
        if (recv_go(p->notify_sock, &cmd) < 0)
                _exit(TXBOX_EXIT_TXBOX);
        close(p->notify_sock); /* the supervisor sees every sender gone once we exec */
        trace_mark("program: command");
        if (chdir(s->cwd) < 0) {
                sandbox_child_fail(CHILD_SETUP_FAILED, errno, "cannot enter '%s' in the sandbox: %s", s->cwd,
                           strerror(errno));
                _exit(TXBOX_EXIT_TXBOX);
        }
        for (int i = 0; s->stdio_redirect && i < 3; i++)
                if (s->stdio[i] != i && dup2(s->stdio[i], i) < 0) {
                        sandbox_child_fail(CHILD_SETUP_FAILED, errno, "cannot set up the program's stdio: %s",
                                   strerror(errno));
                        _exit(TXBOX_EXIT_TXBOX);
                }
        char found[PATH_MAX];
        const char *prog = resolve_program(s->argv[0], found, sizeof(found));
        /* Descriptors the caller left open (a directory of the host's writable mount, a
         * connected unix socket) would bypass the read-only view: none survives exec. */
        if (sys_close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
                sandbox_child_fail(CHILD_SETUP_FAILED, errno, "cannot close inherited descriptors: %s",
                           strerror(errno));
                _exit(TXBOX_EXIT_TXBOX);
        }
        /* Last: RLIMIT_DATA counts what this process already mapped (an ASan build maps
         * terabytes of shadow), so nothing may allocate between here and exec. */
        int r = limits_apply_rlimits(&p->limits);
        if (r < 0) {
                sandbox_child_fail(CHILD_SETUP_FAILED, -r, "cannot set resource limits: %s", strerror(-r));
                _exit(TXBOX_EXIT_TXBOX);
        }
        execvpe(prog ? prog : s->argv[0], s->argv, p->envp);
        int e = errno;
        sandbox_child_fail(CHILD_EXEC_FAILED, e, "%s: %s", s->argv[0],
                   e == ENOENT ? "command not found" : strerror(e));
        _exit(e == ENOENT ? TXBOX_EXIT_NOTFOUND : TXBOX_EXIT_NOEXEC);
}

struct program_args {
        const struct sandbox_spec *s;
        const struct sandbox_prep *p;
        int statusfd;
};

static int program_main(void *arg)
{
        const struct program_args *a = arg;
        close(a->statusfd);
        exec_program(a->s, a->p);
}

/* The program's process shares init's memory until it execs (CLONE_VM|CLONE_VFORK, as
 * posix_spawn does), on a stack of its own: a fork would copy init's page tables (the
 * supervisor's, inherited) and then fault in copies of every page either process writes,
 * milliseconds on a virtual machine.  init has nothing to do meanwhile and waits.  The
 * sanitizers do not follow a process onto a foreign stack: there, a plain fork. */
pid_t sandbox_spawn_program(const struct sandbox_spec *s, const struct sandbox_prep *p, int statusfd)
{
        struct program_args a = {s, p, statusfd};
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
        pid_t pid = fork();
        if (pid == 0)
                program_main(&a);
        return pid;
#else
        /* Room for execvpe's copy of a long argv (it falls back to /bin/sh on ENOEXEC). */
        const size_t size = 16u << 20;
        char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED)
                return -1;
        return clone(program_main, stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
#endif
}
