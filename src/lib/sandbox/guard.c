/* seccomp deny-list, user notification (execs, connects, renames) and Landlock for the
 * program.
 *
 * The seccomp filter is a deny-list on a default-allow base: the namespaces, the read-only
 * root and Landlock are the boundary; the filter removes kernel interfaces that reach past
 * them (mounts, keyrings, modules, io_uring, device-level sockets...) or that a program never
 * needs in a development sandbox.  It is compiled once per process (libseccomp is slow and
 * allocates) and exported as BPF, which the sandbox child loads with seccomp(2).
 */
#define _GNU_SOURCE
#include "sandbox/guard.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>

#include "sandbox/execorigin.h"
#include "sandbox/exectarget.h"
#include "sandbox/sockconn.h"
#include "base/cleanup.h"
#include "base/error.h"
#include "base/macros.h"
#include "base/mem.h"
#include "txbox.h"

/* ---- the filter ---- */

/* Denied outright (EPERM).  Names the running architecture lacks are skipped. */
static const char *const denied_syscalls[] = {
        /* the mount table: the overlay and the read-only root must stay as they are */
        "mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig",
        "fsmount", "fspick", "mount_setattr", "chroot",
        /* the machine itself */
        "kexec_load", "kexec_file_load", "reboot", "init_module", "finit_module", "delete_module",
        "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "ioperm", "iopl", "syslog",
        "settimeofday", "clock_settime", "clock_settime64", "clock_adjtime", "clock_adjtime64",
        "adjtimex", "stime", "vhangup", "lookup_dcookie", "nfsservctl", "uselib",
        /* large kernel attack surface, rarely needed for development */
        "bpf", "perf_event_open", "userfaultfd", "fanotify_init",
        /* the user's kernel keyring holds secrets (kerberos, ecryptfs, ssh via keyctl) */
        "keyctl", "add_key", "request_key",
        /* opens any inode by handle, bypassing path-based confinement */
        "open_by_handle_at",
        /* io_uring operations are not seen by seccomp (socket, connect, openat) */
        "io_uring_setup", "io_uring_enter", "io_uring_register",
};

/* Socket families a development sandbox has no use for; some reach beyond the network
 * namespace (AF_VSOCK talks to the hypervisor host). */
static int denied_family(int fam)
{
        return fam != AF_UNIX && fam != AF_INET && fam != AF_INET6 && fam != AF_NETLINK;
}

#define TIOCSTI_NR   0x5412
#define TIOCLINUX_NR 0x541C

struct bpf_cache {
        struct sock_filter *insns;
        unsigned short len;
        bool ready;
};

/* One compiled program per variant, built once per process: per-transaction cost is then a
 * single seccomp(2) in the child.  (The only global state of the library, read-only once
 * built.) */
static struct bpf_cache cache[16];

static int add_rule(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n,
                    const struct scmp_arg_cmp *cmp)
{
        int nr = seccomp_syscall_resolve_name(name);
        if (nr == __NR_SCMP_ERROR)
                return 0; /* not on this architecture */
        int r = seccomp_rule_add_array(ctx, action, nr, n, cmp);
        return r == -EACCES || r == -EDOM ? 0 : r; /* multiplexed or pseudo syscalls */
}

static int add_socket_rules(scmp_filter_ctx ctx, bool allow_unix)
{
        uint32_t deny = SCMP_ACT_ERRNO(EPERM);
        struct scmp_arg_cmp cmp;
        int r;

        /* A unix socket file on a read-only mount is still connectable (docker.sock, ssh
         * agents, D-Bus): unless the supervisor makes every connect (GUARD_NOTIFY_CONNECT,
         * sockconn.c) or the user opted in, no unix socket can be created at all.
         * socketpair(2) stays: its stream and seqpacket pairs reach nothing outside (a
         * datagram pair can still sendto(2) a host's datagram socket, as any unix datagram
         * socket could: docs/SECURITY.md). */
        for (int fam = 0; fam <= AF_MAX; fam++) {
                if (!denied_family(fam) && !(fam == AF_UNIX && !allow_unix))
                        continue;
                cmp = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fam);
                if ((r = add_rule(ctx, deny, "socket", 1, &cmp)) < 0)
                        return r;
        }
        /* The kernel reads the family as an int: a value with high bits set would pass the
         * equality rules above as its low half, and is caught here. */
        cmp = SCMP_A0(SCMP_CMP_GT, (scmp_datum_t)AF_MAX);
        return add_rule(ctx, deny, "socket", 1, &cmp);
}

static int add_rules(scmp_filter_ctx ctx, unsigned variant)
{
        uint32_t deny = SCMP_ACT_ERRNO(EPERM);
        struct scmp_arg_cmp cmp;
        int r;

        for (size_t i = 0; i < ARRAY_SIZE(denied_syscalls); i++)
                if ((r = add_rule(ctx, deny, denied_syscalls[i], 0, NULL)) < 0)
                        return r;
        /* Terminal injection: pushing input into the controlling terminal of the caller. */
        cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI_NR);
        if ((r = add_rule(ctx, deny, "ioctl", 1, &cmp)) < 0)
                return r;
        cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX_NR);
        if ((r = add_rule(ctx, deny, "ioctl", 1, &cmp)) < 0)
                return r;
        /* New user namespaces would hand the program a full capability set over fresh
         * namespaces: a large kernel attack surface, and of little use here since mounting
         * is denied anyway.  clone3 passes flags in memory that BPF cannot read: ENOSYS makes
         * libc fall back to clone(2), which is checked. */
        cmp = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
        if ((r = add_rule(ctx, deny, "clone", 1, &cmp)) < 0 ||
            (r = add_rule(ctx, deny, "unshare", 1, &cmp)) < 0)
                return r;
        if ((r = add_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL)) < 0)
                return r;
        if ((r = add_socket_rules(ctx, variant & (GUARD_ALLOW_UNIX | GUARD_NOTIFY_CONNECT))) < 0)
                return r;
        if (variant & (GUARD_NOTIFY_EXEC | GUARD_NOTIFY_CONNECT)) {
                /* A listener of the program's own would receive its execs and connects first
                 * (the newest filter's notification wins) and could wave them through.  Its
                 * renames it may take: it only keeps txbox from completing them for itself. */
                struct scmp_arg_cmp own[2] = {
                        SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER),
                        SCMP_A1(SCMP_CMP_MASKED_EQ, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                                SECCOMP_FILTER_FLAG_NEW_LISTENER),
                };
                if ((r = add_rule(ctx, deny, "seccomp", 2, own)) < 0)
                        return r;
        }
        if ((variant & GUARD_NOTIFY_EXEC) && ((r = add_rule(ctx, SCMP_ACT_NOTIFY, "execve", 0, NULL)) < 0 ||
                                              (r = add_rule(ctx, SCMP_ACT_NOTIFY, "execveat", 0, NULL)) < 0))
                return r;
        /* Every connect: BPF sees neither its address nor its socket's family. */
        if ((variant & GUARD_NOTIFY_CONNECT) && (r = add_rule(ctx, SCMP_ACT_NOTIFY, "connect", 0, NULL)) < 0)
                return r;
        /* An overlay without redirects cannot move a directory of the lower layer (EXDEV):
         * the supervisor completes such renames (rename.c).  Every rename stops here, since
         * BPF cannot look at the path; most are let through at once. */
        if (variant & GUARD_NOTIFY_RENAME)
                if ((r = add_rule(ctx, SCMP_ACT_NOTIFY, "rename", 0, NULL)) < 0 ||
                    (r = add_rule(ctx, SCMP_ACT_NOTIFY, "renameat", 0, NULL)) < 0 ||
                    (r = add_rule(ctx, SCMP_ACT_NOTIFY, "renameat2", 0, NULL)) < 0)
                        return r;
        return 0;
}

static int export_bpf(scmp_filter_ctx ctx, struct bpf_cache *c)
{
        _cleanup_close_ int fd = memfd_create("txbox-seccomp", MFD_CLOEXEC);
        int r;

        if (fd < 0)
                return -errno;
        if ((r = seccomp_export_bpf(ctx, fd)) < 0)
                return r;
        off_t size = lseek(fd, 0, SEEK_END);
        if (size <= 0 || size % (off_t)sizeof(struct sock_filter) ||
            size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
                return -E2BIG;
        c->insns = xmalloc((size_t)size);
        if (pread(fd, c->insns, (size_t)size, 0) != size) {
                free(c->insns);
                c->insns = NULL;
                return -EIO;
        }
        c->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
        c->ready = true;
        return 0;
}

/* A key for the on-disk copy: changes with anything that changes the program. */
static uint64_t filter_key(unsigned variant)
{
        uint64_t h = 1469598103934665603ULL;
        const struct scmp_version *v = seccomp_version();
        char extra[96];

        snprintf(extra, sizeof(extra), "%s/%u/%u.%u.%u/%u/%d/tree", TXBOX_VERSION, variant, v ? v->major : 0,
                 v ? v->minor : 0, v ? v->micro : 0, seccomp_arch_native(), AF_MAX);
        for (size_t i = 0; i <= ARRAY_SIZE(denied_syscalls); i++)
                for (const char *p = i < ARRAY_SIZE(denied_syscalls) ? denied_syscalls[i] : extra; *p; p++)
                        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        return h;
}

/* The compiled program from an earlier txbox process (in the state dir, which the sandbox
 * cannot see or write): saves compiling it in every transaction.  Only a file we own, of a
 * plausible size, is taken. */
static bool load_cached(const char *path, struct bpf_cache *c)
{
        struct stat st;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
            st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) ||
            st.st_size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
                return false;
        c->insns = xmalloc((size_t)st.st_size);
        if (pread(fd, c->insns, (size_t)st.st_size, 0) != st.st_size) {
                free(c->insns);
                c->insns = NULL;
                return false;
        }
        c->len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
        c->ready = true;
        return true;
}

static void store_cached(const char *path, const struct bpf_cache *c)
{
        char tmp[PATH_MAX];
        size_t size = (size_t)c->len * sizeof(struct sock_filter);

        snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return; /* a cache: never an error */
        bool ok = write(fd, c->insns, size) == (ssize_t)size;
        close(fd);
        if (!ok || rename(tmp, path) < 0)
                unlink(tmp);
}

int guard_seccomp_prepare(unsigned variant, const char *cache_dir, struct txbox_error *err)
{
        struct bpf_cache *c = &cache[variant & 15u];
        char path[PATH_MAX] = "";
        int r;

        if (c->ready)
                return 0;
        if (cache_dir) {
                snprintf(path, sizeof(path), "%s/seccomp-%016llx.bpf", cache_dir,
                         (unsigned long long)filter_key(variant));
                if (load_cached(path, c))
                        return 0;
        }
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx)
                return tx_err(err, ENOMEM, "cannot build the seccomp filter (seccomp_init failed)");
        /* A binary tree of the syscall numbers rather than a list: loading it (checked
         * and compiled by the kernel in every sandbox) took 0.18 ms instead of 0.25. */
        if ((r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) < 0 && r != -EINVAL &&
            r != -EOPNOTSUPP) {
                seccomp_release(ctx);
                return tx_err(err, -r, "cannot build the seccomp filter: %s", strerror(-r));
        }
        /* Other ABIs of this CPU get the same rules; anything else is killed (libseccomp's
         * default for a foreign architecture). */
        if (seccomp_arch_native() == SCMP_ARCH_X86_64)
                r = seccomp_arch_add(ctx, SCMP_ARCH_X86);
        else
                r = 0;
        if ((r < 0 && r != -EEXIST) || (r = add_rules(ctx, variant)) < 0 || (r = export_bpf(ctx, c)) < 0) {
                seccomp_release(ctx);
                return tx_err(err, -r, "cannot build the seccomp filter: %s", strerror(-r));
        }
        seccomp_release(ctx);
        if (path[0])
                store_cached(path, c);
        return 0;
}

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

int guard_seccomp_load(unsigned variant)
{
        const struct bpf_cache *c = &cache[variant & 15u];
        struct sock_fprog prog = {.len = c->len, .filter = c->insns};
        unsigned flags = variant & GUARD_NOTIFY ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;

        if (!c->ready)
                return -EINVAL;
        /* Linux >= 5.19: once the supervisor has taken a notification, only a fatal signal
         * ends the task's wait.  Otherwise a signal (Go's runtime preempts with SIGURG every
         * 10 ms) restarts the call as a new notification while the first is being completed:
         * a directory rename done twice fails the second time (ENOENT). */
        long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                         flags ? flags | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV : 0, &prog);
        if (r < 0 && flags && errno == EINVAL)
                r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
        if (r < 0)
                return -errno;
        return flags ? (int)r : 0;
}

bool guard_seccomp_available(void)
{
        return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 &&
               syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &(uint32_t){SECCOMP_RET_ERRNO}) == 0;
}

bool guard_notify_available(void)
{
        return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &(uint32_t){SECCOMP_RET_USER_NOTIF}) == 0;
}

/* ---- exec notification (supervisor side) ---- */

/* What one exec may pass: the kernel caps argv and envp together at a quarter of the stack
 * limit (2 MiB by default); the check reads argv only, and must read all of it (a refused
 * argument may hide behind hundreds of harmless ones), so the budget is generous and an
 * exec over it fails closed. */
#define EXEC_MAX_ARGS  (1 << 20)
#define EXEC_MAX_BYTES (16u << 20)

/* A window onto the task's memory: wl bytes at wa. */
struct window {
        uint64_t wa;
        size_t wl;
        char b[16384];
};

struct exec_read {
        int mem;
        char *buf;              /* the strings, copied out */
        size_t used, cap;
        struct window ptrs, strs; /* argv's pointer array and its strings lie apart */
};

/* A pointer to at least need bytes of the task's memory at addr, through window w: one
 * read serves many pointers or strings (a read per string cost 20,000 reads for an xargs
 * of 1,000 names).  A read that runs into an unmapped page comes back short; one that
 * starts there fails.  Returns the bytes available. */
static ssize_t peek(int mem, struct window *w, uint64_t addr, size_t need, const char **p)
{
        if (!(w->wl && addr >= w->wa && addr - w->wa + need <= w->wl)) {
                ssize_t n = pread(mem, w->b, sizeof(w->b), (off_t)addr);
                if (n < (ssize_t)need)
                        return -1;
                w->wa = addr;
                w->wl = (size_t)n;
        }
        *p = w->b + (addr - w->wa);
        return (ssize_t)(w->wl - (addr - w->wa));
}

/* Copy a NUL-terminated string at addr from the task's memory into r->buf; returns its
 * offset, or -1 when unreadable or over the budget. */
static ssize_t read_string(struct exec_read *r, uint64_t addr)
{
        size_t start = r->used;

        for (;;) {
                const char *p;
                ssize_t n = peek(r->mem, &r->strs, addr, 1, &p);
                if (n <= 0)
                        return -1;
                const char *nul = memchr(p, '\0', (size_t)n);
                size_t take = nul ? (size_t)(nul - p) + 1 : (size_t)n;
                if (r->used + take > EXEC_MAX_BYTES)
                        return -1;
                if (r->cap < r->used + take) {
                        while (r->cap < r->used + take)
                                r->cap = r->cap ? 2 * r->cap : 16384;
                        r->buf = xrealloc(r->buf, r->cap);
                }
                memcpy(r->buf + r->used, p, take);
                r->used += take;
                if (nul)
                        return (ssize_t)start;
                addr += take;
        }
}

static int read_pointer(struct exec_read *r, uint64_t addr, bool compat, uint64_t *out)
{
        const char *p;
        if (peek(r->mem, &r->ptrs, addr, compat ? 4 : 8, &p) < 0)
                return -1;
        if (compat) {
                uint32_t v;
                memcpy(&v, p, sizeof(v));
                *out = v;
        } else {
                memcpy(out, p, sizeof(*out));
        }
        return 0;
}

/* Read path and argv of the exec in n; *argv (allocated, NULL-terminated) points into
 * r->buf.  Returns 0, or -1 (unreadable, over the budget): fail closed. */
static int read_exec(struct exec_read *r, const struct seccomp_notif *n, char ***argv, ssize_t *path_off)
{
        bool at = n->data.nr !=
                  seccomp_syscall_resolve_name_arch(
                          n->data.arch == AUDIT_ARCH_I386 ? SCMP_ARCH_X86 : SCMP_ARCH_NATIVE, "execve");
        bool compat = n->data.arch == AUDIT_ARCH_I386;
        uint64_t argv_addr = n->data.args[at ? 2 : 1];
        _cleanup_free_ ssize_t *offs = NULL;
        size_t argc = 0, cap = 0;

        if ((*path_off = read_string(r, n->data.args[at ? 1 : 0])) < 0)
                return -1;
        for (; argv_addr; argc++) {
                uint64_t p;
                if (read_pointer(r, argv_addr + argc * (compat ? 4 : 8), compat, &p) < 0)
                        return -1;
                if (!p)
                        break;
                if (argc == EXEC_MAX_ARGS)
                        return -1;
                if (argc == cap)
                        offs = xrealloc(offs, (cap = cap ? 2 * cap : 64) * sizeof(*offs));
                if ((offs[argc] = read_string(r, p)) < 0)
                        return -1;
        }
        *argv = xcalloc(argc + 1, sizeof(char *));
        for (size_t i = 0; i < argc; i++)
                (*argv)[i] = r->buf + offs[i];
        return 0;
}

int guard_notify_answer(int listener, uint64_t id, bool cont, int error)
{
        struct seccomp_notif_resp resp = {.id = id};
        if (cont)
                resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        else
                resp.error = -error;
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
                return -errno; /* ENOENT: the task died meanwhile */
        return 0;
}

static int reply(int listener, uint64_t id, bool allow)
{
        return guard_notify_answer(listener, id, allow, EPERM);
}

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

void guard_notify_tune(int listener)
{
        /* Linux >= 6.6: wake the supervisor on the CPU of the task that execs, which sleeps
         * until the answer anyway; each exec's round trip then skips two cross-CPU wake-ups
         * (the bulk of an exec check's cost in a build).  Older kernels: EINVAL, no matter. */
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) < 0) {
                /* optional */
        }
}

/* The program the exec will run (exectarget.c), resolved before the notification is
 * confirmed valid, like its argv: NULL when it has no name to judge; the path as named when
 * nothing is there (the exec fails by itself). */
static const char *exec_program_of(const struct seccomp_notif *n, const char *path, char *buf, size_t size)
{
        bool at = n->data.nr !=
                  seccomp_syscall_resolve_name_arch(
                          n->data.arch == AUDIT_ARCH_I386 ? SCMP_ARCH_X86 : SCMP_ARCH_NATIVE, "execve");
        int r = exec_target((pid_t)n->pid, at ? (int)n->data.args[0] : AT_FDCWD, path,
                            at ? (unsigned)n->data.args[4] : 0, buf, size);
        return r == 0 ? buf : r == -ENOENT ? path : NULL;
}

int guard_notify_handle(int listener, guard_exec_check_fn check, void *ctx, struct sockconn *conn,
                        guard_notify_other_fn other, void *other_ctx)
{
        struct seccomp_notif n;
        char path[64];
        _cleanup_free_ char **argv = NULL;
        ssize_t path_off = -1;
        bool allow = false;
        int r0;

        memset(&n, 0, sizeof(n));
        if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &n) < 0)
                return errno == EINTR || errno == ENOENT ? 0 : -errno;
        if (sockconn_is_connect(&n))
                return conn ? sockconn_handle(conn, listener, &n) : reply(listener, n.id, false);
        if (other && (r0 = other(other_ctx, listener, &n)) <= 0)
                return r0;
        _cleanup_free_ struct exec_read *r = xmalloc(sizeof(*r));
        r->buf = NULL;
        r->used = r->cap = r->ptrs.wl = r->strs.wl = 0;
        snprintf(path, sizeof(path), "/proc/%u/mem", n.pid);
        r->mem = open(path, O_RDONLY | O_CLOEXEC);
        char prog[PATH_MAX];
        if (r->mem >= 0) {
                int ok = read_exec(r, &n, &argv, &path_off);
                close(r->mem);
                /* The pid may have been reused between receive and open: the notification
                 * must still be pending for what we read to be that task's memory. */
                if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &n.id) < 0) {
                        free(r->buf);
                        return 0; /* the task is gone: nothing to answer */
                }
                /* Unreadable, over the budget, or nobody to judge it: refused. */
                struct exec_caller caller = {.pid = (pid_t)n.pid};
                if (ok == 0 && check)
                        allow = check(ctx, exec_program_of(&n, r->buf + path_off, prog, sizeof(prog)), argv,
                                      &caller);
                /* What was read about the caller counts only if it was that task's. */
                if (caller.looked && ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &n.id) < 0) {
                        free(r->buf);
                        return 0;
                }
        }
        free(r->buf);
        return reply(listener, n.id, allow);
}

/* ---- Landlock ---- */

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL               (1ULL << 1)

/* Newer than the installed headers: handled_access_net (ABI 4) and scoped (ABI 6). */
struct ll_ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net;
        uint64_t scoped;
};

int guard_landlock_abi(void)
{
        long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        return abi < 0 ? 0 : (int)abi;
}

static uint64_t write_rights(int abi)
{
        uint64_t w = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
        if (abi >= 2)
                w |= LANDLOCK_ACCESS_FS_REFER;
        if (abi >= 3)
                w |= LANDLOCK_ACCESS_FS_TRUNCATE;
        return w;
}

static int add_path_rule(int ruleset, const char *path, uint64_t rights)
{
        struct stat st;
        _cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode)) /* files take only the file rights */
                rights &= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
        struct landlock_path_beneath_attr pb = {.allowed_access = rights, .parent_fd = fd};
        if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
                /* stdio may be a pipe or socket: nothing to allow there, it stays usable */
                return S_ISDIR(st.st_mode) ? -errno : 0;
        return 0;
}

int guard_landlock_apply(const char *const *write_paths)
{
        int abi = guard_landlock_abi();
        struct ll_ruleset_attr attr = {0};
        size_t size = sizeof(attr.handled_access_fs);
        int r = 0;

        if (abi <= 0)
                return 0;
        attr.handled_access_fs = write_rights(abi);
        if (abi >= 6) {
                /* Abstract unix sockets and signals stay within the sandbox. */
                attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
                size = sizeof(attr);
        }
        _cleanup_close_ int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
        if (rs < 0)
                return -errno;
        for (size_t i = 0; write_paths[i]; i++)
                if ((r = add_path_rule(rs, write_paths[i], attr.handled_access_fs)) < 0)
                        return r;
        if (syscall(SYS_landlock_restrict_self, rs, 0) < 0)
                return -errno;
        return abi;
}
