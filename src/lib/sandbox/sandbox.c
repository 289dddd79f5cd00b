/* Starting a sandbox and handing it a command: the supervisor's side (sandbox_start,
 * sandbox_exec, sandbox_run), and the namespaces a server's sandboxes share.
 *
 * Process layout:
 *   supervisor (txbox) --clone(NEWUSER|NEWNS|NEWPID|NEWIPC|NEWUTS[|NEWNET])--> init (pid 1)
 *   init: sets up mounts, forks the program, reaps, reports the program's wait status on a
 *   pipe and exits; the kernel then kills everything left in the pid namespace (daemons,
 *   fork bombs), so nothing outlives the transaction.
 *
 * The other parts, by job: init.c (init, and the children's setup errors), mounts.c (the
 * file system the sandbox sees), program.c (the program's process up to its exec),
 * supervise.c (the wait while the program runs), idmap.c (the id maps), probes.c (txbox
 * doctor's kernel probes).
 */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/socket.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/process.h"
#include "base/strv.h"
#include "base/trace.h"
#include "sandbox/cgroup.h"
#include "sandbox/guard.h"
#include "sandbox/reslimits.h"
#include "sandbox/netproxy.h"
#include "sandbox/sandbox_int.h"
#include "base/syscalls.h"

int sandbox_close_all_but(int *keep, size_t n)
{
        int lo = 3;

        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
                        int t = keep[j];
                        keep[j] = keep[j - 1];
                        keep[j - 1] = t;
                }
        for (size_t i = 0; i < n; i++) {
                if (keep[i] < lo)
                        continue;
                if (keep[i] > lo && sys_close_range((unsigned)lo, (unsigned)keep[i] - 1, 0) < 0)
                        return -errno;
                lo = keep[i] + 1;
        }
        return sys_close_range((unsigned)lo, ~0U, 0) < 0 ? -errno : 0;
}

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* clone3's arguments up to the cgroup (the kernel's struct clone_args, version 2). */
struct clone3_args {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
                set_tid_size, cgroup;
};

/* A fork-like clone (the child continues on a copy of our stack) with flags; with cgfd >= 0,
 * born in that cgroup v2 directory (CLONE_INTO_CGROUP: nothing is moved, so no global lock
 * is taken; see cgroup.h).  -1 with errno when the kernel or a seccomp profile refuses
 * clone3: the caller then clones without it and moves the child. */
static pid_t clone_child(unsigned long flags, int cgfd)
{
        if (cgfd < 0)
                return (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
#ifdef TXBOX_TESTING
        const char *t = getenv("TXBOX_TEST_CLONE3");
        if (t && !strcmp(t, "fail")) {
                errno = ENOSYS; /* as under a seccomp profile that refuses clone3 */
                return -1;
        }
#endif
#ifdef SYS_clone3
        struct clone3_args a = {
                .flags = flags | CLONE_INTO_CGROUP, .exit_signal = SIGCHLD, .cgroup = (uint64_t)cgfd};
        return (pid_t)syscall(SYS_clone3, &a, sizeof(a));
#else
        errno = ENOSYS;
        return -1;
#endif
}

/* Clone init (or, in shared namespaces, the child that makes it) into the transaction's
 * cgroup when it is v2; where clone3 is refused, without it, and init then waits on cg_sync
 * until attach_cgroup has moved it (cg_wait, seen by the child in its copy of prep). */
static pid_t clone_into_cgroup(struct sandbox_prep *p, unsigned long flags)
{
        size_t n;
        int fds[CGROUP_MAX_FDS], cgfd = cgroup_tx_handoff(p->cg, fds, &n);
        pid_t pid = clone_child(flags, cgfd);

        if (pid >= 0 || cgfd < 0)
                return pid;
        p->cg_wait = true;
        return clone_child(flags, -1);
}

static pid_t clone_sandbox(struct sandbox_prep *p)
{
        /* The network namespace is init's first act (see sandbox_init_main in init.c), not
         * ours: creating one costs a millisecond or two, which then overlaps our writing the
         * id maps. */
        return clone_into_cgroup(p, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS);
}

static int explain_clone_failure(int e, struct txbox_error *err)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/unprivileged_userns_clone", "re");
        int v = 1;
        if (f && fscanf(f, "%d", &v) == 1 && v == 0)
                return tx_err(err, e,
                              "user namespaces are disabled: sysctl kernel.unprivileged_userns_clone=0; "
                              "enable them (sysctl -w kernel.unprivileged_userns_clone=1) or run as root");
        _cleanup_fclose_ FILE *g = fopen("/proc/sys/user/max_user_namespaces", "re");
        if (g && fscanf(g, "%d", &v) == 1 && v == 0)
                return tx_err(err, e, "user namespaces are disabled: sysctl user.max_user_namespaces=0; "
                                      "raise it (sysctl -w user.max_user_namespaces=10000)");
        return tx_err(err, e, "cannot create the sandbox's namespaces (clone: %s); user namespaces may be "
                              "restricted here (AppArmor's kernel.apparmor_restrict_unprivileged_userns, "
                              "or a container without CLONE_NEWUSER)", strerror(e));
}

/* Read what the sandbox reported before exec (setup or exec failure). */
static int read_child_error(int errfd, struct txbox_run_result *res, struct txbox_error *err)
{
        struct child_msg m;
        ssize_t n;

        while ((n = read(errfd, &m, sizeof(m))) < 0 && errno == EINTR)
                ;
        if (n != (ssize_t)sizeof(m))
                return 0;
        m.msg[sizeof(m.msg) - 1] = '\0';
        if (m.kind == CHILD_EXEC_FAILED) {
                res->exec_failed = true;
                tx_err(err, m.err, "%s", m.msg);
                return 1;
        }
        return tx_err(err, m.err > 0 ? m.err : EIO, "sandbox setup failed: %s", m.msg);
}

static int make_pipes(int syncp[2], int statusp[2], int errp[2])
{
        if (pipe2(syncp, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(statusp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0)
                return -errno;
        return 0;
}

/* --net=allow: tell HTTP clients where the proxy is (both spellings are in use). */
static void add_proxy_env(char ***envp)
{
        static char *const vars[] = {
                "HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3128",
                "http_proxy=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
                "ALL_PROXY=http://127.0.0.1:3128",  "NO_PROXY=",
                "no_proxy=",
        };
        size_t n = 0, k = 0;
        while ((*envp)[n])
                n++;
        char **v = xcalloc(n + ARRAY_SIZE(vars) + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++) {
                const char *e = (*envp)[i];
                bool ours = false;
                for (size_t j = 0; j < ARRAY_SIZE(vars); j++)
                        ours |= !strncmp(e, vars[j], strcspn(vars[j], "=") + 1);
                if (!ours)
                        v[k++] = (*envp)[i];
        }
        for (size_t j = 0; j < ARRAY_SIZE(vars); j++)
                v[k++] = vars[j];
        free(*envp);
        *envp = v;
}

/* --net=allow: the list, checked before anything starts. */
static int parse_allow(char *const *hosts, struct sandbox_prep *p, struct txbox_error *err)
{
        size_t n = strv_len(hosts);
        int r;

        if (n == 0 || n > NETPROXY_RULES_MAX)
                return tx_err(err, EINVAL, "--net=allow: give between 1 and %d hosts", NETPROXY_RULES_MAX);
        p->rules = xcalloc(n, sizeof(*p->rules));
        for (size_t i = 0; i < n; i++)
                if ((r = netproxy_rule_parse(hosts[i], &p->rules[i], err)) < 0)
                        return r;
        p->nrules = n;
        return 0;
}

static long read_last_cap(void)
{
        long last = 63;
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");

        if (f && fscanf(f, "%ld", &last) != 1)
                last = 63;
        return last;
}

/* Everything the children need that the supervisor must compute: limits, environment,
 * the compiled seccomp filter, the cgroup. */
static int prepare(const struct sandbox_spec *s, struct sandbox_prep *p, struct txbox_run_result *res,
                   struct txbox_error *err)
{
        extern char **environ;
        int r;

        limits_resolve(&s->limits, s->upper, &p->limits, &p->limits_why);
        limits_tmpfs_options(&p->limits, p->tmpfs_opts, sizeof(p->tmpfs_opts));
        struct stat st;
        p->upper_dev = s->upper && stat(s->upper, &st) == 0 ? st.st_dev : 0;
        p->meter = mmap(NULL, sizeof(*p->meter), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p->meter == MAP_FAILED) {
                p->meter = NULL;
                return tx_err(err, errno, "cannot map the sandbox's meter: %s", strerror(errno));
        }
        if (s->net == TXBOX_NET_ALLOW && (r = parse_allow(s->net_allow, p, err)) < 0)
                return r;
        if (p->limits.cpu_milli && !cgroup_has_cpu())
                return tx_err(err, ENOTSUP,
                              "--max-cpus needs a cgroup with the cpu controller, and none can be had "
                              "here (txbox doctor says why)");
        p->last_cap = read_last_cap();
        /* Unix sockets: the user's opt-in lets every connect through; else, where the
         * supervisor can take the program's sockets, it makes every connect itself and only
         * the sandbox's own unix sockets are reachable; else none can be made.  Renames stop
         * at the supervisor wherever it can be notified (rename.c); else a directory of the
         * lower layer stays unmovable (EXDEV) as the overlay has it. */
        bool notify = guard_notify_available();
        p->guard = (s->exec_check ? GUARD_NOTIFY_EXEC : 0) | (notify ? GUARD_NOTIFY_RENAME : 0) |
                   (s->allow_unix_sockets                 ? GUARD_ALLOW_UNIX
                    : notify && sockconn_available() ? GUARD_NOTIFY_CONNECT
                                                      : 0);
        if ((r = guard_seccomp_prepare(p->guard, s->state_dir, err)) < 0)
                return r;
        limits_filter_env(environ, s->env_keep, &p->envp, res->env_dropped, sizeof(res->env_dropped));
        if (s->net == TXBOX_NET_ALLOW)
                add_proxy_env(&p->envp);
        /* The home's view: what init hides, and the caches it mounts (made here, as the
         * user, before anything of the sandbox runs). */
        sandbox_hidden_paths(s->home, s->workspace, s->hide, &p->hidden);
        if (s->cache_root && s->home) {
                sandbox_caches_plan(s->cache_root, s->cache_paths, s->home, s->workspace, s->state_dir,
                                    p->hidden.v, true, &p->caches);
                sandbox_caches_env(&p->caches, s->home, s->workspace, &p->envp);
        }
        sandbox_hidden_present(&p->hidden, s->home); /* after the plan, which may make some */
        res->landlock_abi = guard_landlock_abi();
        /* The transaction's cgroup, made before the clone so that init starts in it (see
         * cgroup.h).  Without one, the limits rest on rlimits and init's accounting
         * (docs/SECURITY.md says how far that falls short). */
        if ((r = cgroup_tx_create(&p->limits, &p->cg, err)) < 0 && p->limits.cpu_milli)
                return r; /* asked for explicitly: nothing else enforces it */
        cgroup_tx_handoff(p->cg, p->cg_join, &p->ncg_join);
        return 0;
}

struct sandbox {
        const struct sandbox_spec *spec; /* the caller's, alive until sandbox_exec/abort */
        struct sandbox_prep prep;
        pid_t pid;               /* init */
        int statusfd, errfd;     /* init's status pipe, the children's error pipe */
        int sock;                /* our end of the socketpair: the command out, fds in */
        int userns_fd;           /* its user namespace, for the disk meter's walks as its owner */
        sigset_t mask, old;      /* termination signals, blocked while the program runs */
        bool blocked;
        struct txbox_run_result pre; /* what prepare() found (dropped env, Landlock ABI) */
};

static void sandbox_free(struct sandbox *sb)
{
        closep(&sb->statusfd);
        closep(&sb->errfd);
        closep(&sb->sock);
        closep(&sb->userns_fd);
        if (sb->blocked)
                sigprocmask(SIG_SETMASK, &sb->old, NULL);
        free(sb->prep.envp);
        strvec_clear(&sb->prep.hidden);
        sandbox_caches_free(&sb->prep.caches);
        netproxy_stop(sb->prep.proxy, NULL, 0);
        free(sb->prep.rules);
        cgroup_tx_destroy(sb->prep.cg); /* init is gone (else it was handed to defer_reap) */
        if (sb->prep.meter)
                munmap(sb->prep.meter, sizeof(*sb->prep.meter));
        free(sb);
}

static bool idmap_equal(const struct idmap *a, const struct idmap *b)
{
        return a->nuid == b->nuid && a->ngid == b->ngid && a->privileged == b->privileged &&
               !memcmp(a->uid, b->uid, a->nuid * sizeof(a->uid[0])) &&
               !memcmp(a->gid, b->gid, a->ngid * sizeof(a->gid[0]));
}

int sandbox_shared_ns_open(const struct idmap *m, struct sandbox_shared_ns **out, struct txbox_error *err)
{
        struct sandbox_shared_ns *ns = xcalloc(1, sizeof(*ns));
        int hold[2], r = 0;
        char c;

        ns->user_fd = ns->net_fd = -1;
        ns->map = *m;
        if (pipe2(hold, O_CLOEXEC) < 0) {
                free(ns);
                return tx_err(err, errno, "cannot create a pipe: %s", strerror(errno));
        }
        /* A child makes them and waits; we map it, keep its namespaces by descriptor, let it go. */
        pid_t self = getpid();
        pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNET | SIGCHLD, NULL, NULL, NULL, NULL);
        if (pid == 0) {
                if (die_with_parent(self) < 0)
                        _exit(1);
                if (sandbox_close_all_but(&hold[0], 1) < 0) /* no claim of ours may outlive us in it */
                        _exit(1);
                _exit(read(hold[0], &c, 1) < 0 ? 1 : 0);
        }
        close(hold[0]);
        if (pid < 0)
                r = tx_err(err, errno, "cannot create the shared namespaces: %s", strerror(errno));
        if (r == 0)
                r = sandbox_write_idmaps(pid, m, err);
        if (r == 0) {
                char path[64];
                snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
                ns->user_fd = open(path, O_RDONLY | O_CLOEXEC);
                snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
                ns->net_fd = open(path, O_RDONLY | O_CLOEXEC);
                if (ns->user_fd < 0 || ns->net_fd < 0)
                        r = tx_err(err, errno, "cannot open %s: %s", path, strerror(errno));
        }
        close(hold[1]);
        if (pid > 0)
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        if (r < 0) {
                sandbox_shared_ns_close(ns);
                return r;
        }
        *out = ns;
        return 0;
}

void sandbox_shared_ns_close(struct sandbox_shared_ns *ns)
{
        if (!ns)
                return;
        closep(&ns->user_fd);
        closep(&ns->net_fd);
        free(ns);
}

/* Start init in the shared namespaces: a short-lived child joins them (which a process with
 * threads, like us, cannot), makes the mount, pid, ipc and uts namespaces and clones init as
 * our child (CLONE_PARENT), then tells us its pid and exits.  Returns init's pid in the
 * parent, -1 on failure (the reason on the error pipe); never returns in init. */
static pid_t clone_joined(const struct sandbox_spec *s, struct sandbox_prep *p, int statusfd, int errfd,
                          int nsock)
{
        int pidp[2];
        pid_t init = -1;

        if (pipe2(pidp, O_CLOEXEC) < 0)
                return -1;
        pid_t self = getpid();
        pid_t c = clone_into_cgroup(p, 0);
        if (c == 0) {
                if (die_with_parent(self) < 0)
                        _exit(TXBOX_EXIT_TXBOX);
                int keep[7 + CGROUP_MAX_FDS] = {pidp[1], statusfd, errfd, nsock, s->shared_ns->user_fd,
                                                s->shared_ns->net_fd, p->cg_sync};
                memcpy(keep + 7, p->cg_join, p->ncg_join * sizeof(int));
                int closed = sandbox_close_all_but(keep, 7 + p->ncg_join);
                sandbox_child_errfd_set(errfd);
                if (closed < 0) {
                        errno = -closed;
                        SETUP_FAIL("cannot close the descriptors the sandbox must not have: %s", strerror(errno));
                        _exit(TXBOX_EXIT_TXBOX);
                }
                if (setns(s->shared_ns->user_fd, CLONE_NEWUSER) < 0 ||
                    setns(s->shared_ns->net_fd, CLONE_NEWNET) < 0 ||
                    unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS) < 0) {
                        SETUP_FAIL("cannot join the server's sandbox namespaces: %s", strerror(errno));
                        _exit(TXBOX_EXIT_TXBOX);
                }
                close(s->shared_ns->user_fd);
                close(s->shared_ns->net_fd);
                pid_t i = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, NULL);
                if (i == 0) {
                        /* Die with the supervisor (our parent now): the kernel then kills the
                         * whole pid namespace.  As the new namespace's first process we see no
                         * parent; a supervisor already gone shows as EOF on the socket that
                         * brings the program (recv_go), before anything runs. */
                        if (die_with_parent(0) < 0) {
                                SETUP_FAIL("cannot ask to die with the supervisor: %s", strerror(errno));
                                _exit(TXBOX_EXIT_TXBOX);
                        }
                        close(pidp[1]);
                        sandbox_init_main(s, p, -1, statusfd);
                }
                if (i < 0)
                        SETUP_FAIL("cannot start the sandbox's init: %s", strerror(errno));
                _exit(i > 0 && write(pidp[1], &i, sizeof(i)) == sizeof(i) ? 0 : TXBOX_EXIT_TXBOX);
        }
        close(pidp[1]);
        if (c > 0) {
                while (read(pidp[0], &init, sizeof(init)) < 0 && errno == EINTR)
                        ;
                while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        close(pidp[0]);
        return init > 0 ? init : -1;
}

/* Init is in the transaction's cgroup already (born in it, or it joins it itself), unless
 * clone3 was refused (cg_wait): then it is moved now, while it sets up its mounts, and told
 * on cg_sync ('x' in it, 'n' not: it then keeps the accounting) before it may start the
 * program.  The move waits for an RCU grace period (cgroup.h). */
static int attach_cgroup(struct sandbox *sb, int cg_sync, struct txbox_error *err)
{
        int r = 0;

        if (!sb->prep.cg_wait)
                return 0;
        if ((r = cgroup_tx_attach(sb->prep.cg, sb->pid, err)) < 0)
                cgroup_tx_destroy(TAKE_PTR(sb->prep.cg));
        if (r < 0 && sb->prep.limits.cpu_milli)
                return r; /* asked for explicitly: nothing else enforces it */
        if (write(cg_sync, r < 0 ? "n" : "x", 1) != 1)
                return tx_err(err, EIO, "the sandbox died while starting");
        trace_mark("cgroup");
        return 0;
}

/* The descriptors that join the supervisor and a sandbox while it starts: ours are taken
 * into struct sandbox, the rest closed. */
struct start_fds {
        int syncp[2], statusp[2], errp[2], nsock[2], cgp[2];
};

static void start_fds_close(struct start_fds *f)
{
        for (int i = 0; i < 2; i++) {
                closep(&f->syncp[i]);
                closep(&f->statusp[i]);
                closep(&f->errp[i]);
                closep(&f->nsock[i]);
                closep(&f->cgp[i]);
        }
}

static struct sandbox *sandbox_new(const struct sandbox_spec *s)
{
        struct sandbox *sb = xcalloc(1, sizeof(*sb));

        sb->spec = s;
        sb->statusfd = sb->errfd = sb->sock = sb->userns_fd = -1;
        sb->prep.notify_sock = -1;
        sb->prep.cg_sync = -1;
        for (int i = 0; i < CGROUP_MAX_FDS; i++)
                sb->prep.cg_join[i] = -1;
        sigemptyset(&sb->mask);
        sigaddset(&sb->mask, SIGINT);
        sigaddset(&sb->mask, SIGTERM);
        sigaddset(&sb->mask, SIGHUP);
        sigaddset(&sb->mask, SIGQUIT);
        sb->pre.exit_code = -1;
        return sb;
}

/* Our ends of a started init's pipes and socket. */
static void take_ends(struct sandbox *sb, pid_t pid, struct start_fds *f)
{
        sb->pid = pid;
        sb->statusfd = TAKE_FD(f->statusp[0]);
        sb->errfd = TAKE_FD(f->errp[0]);
        sb->sock = TAKE_FD(f->nsock[0]);
}

/* Init in the server's shared namespaces (clone_joined); old: the signal mask to restore. */
static int start_joined(struct sandbox *sb, struct start_fds *f, const sigset_t *old, struct txbox_error *err)
{
        pid_t pid = clone_joined(sb->spec, &sb->prep, f->statusp[1], f->errp[1], f->nsock[1]);

        sigprocmask(SIG_SETMASK, old, NULL);
        if (pid < 0) {
                closep(&f->errp[1]);
                struct txbox_run_result ignored = {0};
                int r = read_child_error(f->errp[0], &ignored, err);
                return r < 0 ? r : tx_err(err, EIO, "the sandbox died while starting");
        }
        take_ends(sb, pid, f);
        sb->userns_fd = fcntl(sb->spec->shared_ns->user_fd, F_DUPFD_CLOEXEC, 0);
        trace_mark("cloned, joined");
        return 0;
}

/* Init in namespaces of its own, mapped by us once it exists. */
static int start_own(struct sandbox *sb, struct start_fds *f, const sigset_t *old, struct txbox_error *err)
{
        const struct sandbox_spec *s = sb->spec;
        pid_t pid = clone_sandbox(&sb->prep);
        int r, clone_errno = errno;

        if (pid != 0)
                sigprocmask(SIG_SETMASK, old, NULL);
        if (pid < 0)
                return explain_clone_failure(clone_errno, err);
        if (pid == 0) {
                /* Die with the supervisor: the kernel then kills the whole pid namespace.  As
                 * the new namespace's first process we see no parent; a supervisor already gone
                 * shows as EOF on the sync pipe (init reads it before anything runs). */
                if (die_with_parent(0) < 0)
                        _exit(TXBOX_EXIT_TXBOX);
                /* Keep only our ends: an inherited claim (a flock'd state/active/ID, ours or
                 * a prepared transaction's) would outlive a killed supervisor for as long as
                 * this namespace takes to die, and recovery would take it for alive. */
                int keep[5 + CGROUP_MAX_FDS] = {f->syncp[0], f->statusp[1], f->errp[1], f->nsock[1],
                                                sb->prep.cg_sync};
                memcpy(keep + 5, sb->prep.cg_join, sb->prep.ncg_join * sizeof(int));
                int closed = sandbox_close_all_but(keep, 5 + sb->prep.ncg_join);
                sandbox_child_errfd_set(f->errp[1]);
                if (closed < 0) {
                        errno = -closed;
                        SETUP_FAIL("cannot close the descriptors the sandbox must not have: %s", strerror(errno));
                        _exit(TXBOX_EXIT_TXBOX);
                }
                sandbox_init_main(s, &sb->prep, f->syncp[0], f->statusp[1]);
        }
        take_ends(sb, pid, f);
        if ((r = sandbox_write_idmaps(pid, s->idmap, err)) == 0) {
                /* Now, while init waits for its map: once it runs it is not dumpable, and its
                 * namespace files are closed to us. */
                char ns[64];
                snprintf(ns, sizeof(ns), "/proc/%d/ns/user", (int)pid);
                sb->userns_fd = open(ns, O_RDONLY | O_CLOEXEC);
        }
        if (r < 0 || write(f->syncp[1], "x", 1) != 1) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                sb->pid = 0;
                return r < 0 ? r : tx_err(err, EIO, "the sandbox died while starting");
        }
        trace_mark("cloned, mapped");
        return 0;
}

int sandbox_start(const struct sandbox_spec *s, struct sandbox **out, struct txbox_error *err)
{
        struct start_fds f = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}};
        struct sandbox *sb = sandbox_new(s);
        int r;

        sandbox_reap(false);
        if ((r = prepare(s, &sb->prep, &sb->pre, err)) < 0)
                goto fail;
        trace_mark("prepared");
        /* cgp: for a v2 cgroup, should clone3 be refused (attach_cgroup) */
        if ((r = make_pipes(f.syncp, f.statusp, f.errp)) < 0 ||
            (sb->prep.cg && !sb->prep.ncg_join && pipe2(f.cgp, O_CLOEXEC) < 0 && (r = -errno)) ||
            (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f.nsock) < 0 && (r = -errno))) {
                r = tx_err(err, -r, "cannot create pipes: %s", strerror(-r));
                goto fail;
        }
        sb->prep.notify_sock = f.nsock[1];
        sb->prep.cg_sync = f.cgp[0];
        /* Forked now, while no other thread of ours runs (start_sandbox saw to it). */
        if (s->net == TXBOX_NET_ALLOW &&
            (r = netproxy_start(sb->prep.rules, sb->prep.nrules, &sb->prep.proxy, err)) < 0)
                goto fail;
        /* init starts with them blocked and unblocks them once it forwards them.  Until
         * sandbox_exec they are ours again: ^C while the command is checked (or put to an
         * approver) ends txbox, and init with it (PDEATHSIG). */
        sigset_t old;
        sigprocmask(SIG_BLOCK, &sb->mask, &old);
        if (s->shared_ns && s->net == TXBOX_NET_NONE && idmap_equal(s->idmap, &s->shared_ns->map))
                r = start_joined(sb, &f, &old, err);
        else
                r = start_own(sb, &f, &old, err);
        if (r < 0)
                goto fail;
        if ((r = attach_cgroup(sb, f.cgp[1], err)) < 0) {
                kill(sb->pid, SIGKILL);
                while (waitpid(sb->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                goto fail;
        }
        start_fds_close(&f);
        sb->prep.notify_sock = sb->prep.cg_sync = -1;
        *out = sb;
        return 0;
fail:
        start_fds_close(&f);
        sandbox_free(sb);
        return r;
}

void sandbox_abort(struct sandbox *sb)
{
        if (!sb)
                return;
        kill(sb->pid, SIGKILL);
        while (waitpid(sb->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        sandbox_free(sb);
}

int sandbox_exec(struct sandbox *sb, char *const argv[], const char *cwd, struct txbox_run_result *res,
                 struct txbox_error *err)
{
        const struct sandbox_spec *s = sb->spec;
        _cleanup_close_ int sigfd = -1;
        int r, send_errno = 0;

        *res = sb->pre;
        res->exit_code = -1;
        sigprocmask(SIG_BLOCK, &sb->mask, &sb->old);
        sb->blocked = true;
        /* With the signals blocked, this descriptor is the only way Ctrl-C, a timeout's SIGTERM
         * or the client's going away reaches us while the program runs: without it, no run. */
        if ((sigfd = signalfd(-1, &sb->mask, SFD_CLOEXEC)) < 0) {
                r = tx_err(err, errno, "cannot watch for signals (signalfd): %s", strerror(errno));
                sandbox_abort(sb);
                return r;
        }
        struct supervise sv = {.pid = sb->pid, .statusfd = sb->statusfd, .errfd = sb->errfd, .listener = -1,
                               .timeout_s = s->timeout_s, .spec = s, .prep = &sb->prep, .sigfd = sigfd};
        sockconn_init(&sv.conn, s->net != TXBOX_NET_HOST);
        /* The file system's free space from here on is the program's to answer for. */
        disk_meter_start(&sv.disk, s->upper, s->work, &sb->prep.limits, &sb->prep.limits_why);
        sv.disk.userns_fd = sb->userns_fd; /* still ours: sandbox_free closes it */
        /* A sandbox that died while setting up shows it on its status and error pipes, and its
         * reason on the error pipe.  One that is alive but was not given the program would
         * wait for it for ever: end it, and say so below if it left no reason of its own. */
        if ((r = sandbox_send_go(sb->sock, argv, cwd, s->stdio_redirect ? s->stdio : NULL)) < 0) {
                send_errno = r == -1 || r == 0 ? EIO : -r;
                kill(sb->pid, SIGKILL);
        }
        sv.notify_sock = TAKE_FD(sb->sock);
        sandbox_supervise_wait(&sv, res);
        res->unix_refused = sv.conn.refused;
        snprintf(res->unix_refused_path, sizeof(res->unix_refused_path), "%s", sv.conn.refused_path);
        sockconn_free(&sv.conn);
        trace_mark("program exited");
        netproxy_stop(TAKE_PTR(sb->prep.proxy), res->net_log, sizeof(res->net_log));
        closep(&sv.notify_sock);
        closep(&sv.listener);
        r = read_child_error(sb->errfd, res, err);
        if (r == 0 && send_errno)
                r = tx_err(err, send_errno, "cannot hand the program to the sandbox: %s", strerror(send_errno));
        if (r > 0) {
                res->exit_code = res->exit_code >= 0 ? res->exit_code : TXBOX_EXIT_NOTFOUND;
                r = 0;
        }
        sandbox_free(sb);
        return r;
}

int sandbox_run(const struct sandbox_spec *s, struct txbox_run_result *res, struct txbox_error *err)
{
        struct sandbox *sb;
        int r = sandbox_start(s, &sb, err);

        if (r < 0) {
                memset(res, 0, sizeof(*res));
                res->exit_code = -1;
                return r;
        }
        return sandbox_exec(sb, s->argv, s->cwd, res, err);
}
