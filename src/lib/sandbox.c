/* Namespaces, id maps, mounts and the sandbox's init process.
 *
 * Process layout:
 *   supervisor (txbox) --clone(NEWUSER|NEWNS|NEWPID|NEWIPC|NEWUTS[|NEWNET])--> init (pid 1)
 *   init: sets up mounts, forks the program, reaps, reports the program's wait status on a
 *   pipe and exits; the kernel then kills everything left in the pid namespace (daemons,
 *   fork bombs), so nothing outlives the transaction.
 */
#define _GNU_SOURCE
#include "sandbox.h"

#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "syscalls.h"

const char *const sandbox_secret_paths[] = {
        ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
        ".netrc", ".git-credentials", ".npmrc", ".pypirc", ".config/gh", ".cargo/credentials",
        ".cargo/credentials.toml", ".password-store", ".local/share/keyrings", NULL,
};

/* ---- id maps ---- */

static bool have_setid_caps(void)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        unsigned long long eff = 0;

        if (!f)
                return false;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "CapEff: %llx", &eff) == 1)
                        break;
        return (eff & (1ULL << CAP_SETUID)) && (eff & (1ULL << CAP_SETGID));
}

static int read_own_map(const char *file, uint32_t start[], uint32_t count[], size_t *n)
{
        _cleanup_fclose_ FILE *f = fopen(file, "re");
        unsigned long inside, outside, cnt;

        if (!f)
                return -errno;
        *n = 0;
        while (*n < IDMAP_MAX && fscanf(f, "%lu %lu %lu", &inside, &outside, &cnt) == 3) {
                start[*n] = (uint32_t)inside;
                count[*n] = (uint32_t)cnt;
                (*n)++;
        }
        return 0;
}

int idmap_plan(struct idmap *m, struct txbox_error *err)
{
        uint32_t s[IDMAP_MAX], c[IDMAP_MAX];
        size_t n;
        int r;

        memset(m, 0, sizeof(*m));
        m->privileged = have_setid_caps();
        if (!m->privileged) {
                m->uid[0].start = (uint32_t)geteuid();
                m->gid[0].start = (uint32_t)getegid();
                m->uid[0].count = m->gid[0].count = 1;
                m->nuid = m->ngid = 1;
                return 0;
        }
        /* Privileged: the sandbox sees every id we see, so no file is unmapped. */
        if ((r = read_own_map("/proc/self/uid_map", s, c, &n)) < 0)
                return tx_err(err, -r, "cannot read /proc/self/uid_map: %s", strerror(-r));
        for (size_t i = 0; i < n; i++)
                m->uid[i].start = s[i], m->uid[i].count = c[i];
        m->nuid = n;
        if ((r = read_own_map("/proc/self/gid_map", s, c, &n)) < 0)
                return tx_err(err, -r, "cannot read /proc/self/gid_map: %s", strerror(-r));
        for (size_t i = 0; i < n; i++)
                m->gid[i].start = s[i], m->gid[i].count = c[i];
        m->ngid = n;
        return 0;
}

static bool range_has(uint32_t start, uint32_t count, uint32_t id)
{
        return id >= start && (uint64_t)id < (uint64_t)start + count;
}

bool idmap_has_uid(const struct idmap *m, uid_t uid)
{
        for (size_t i = 0; i < m->nuid; i++)
                if (range_has(m->uid[i].start, m->uid[i].count, (uint32_t)uid))
                        return true;
        return false;
}

bool idmap_has_gid(const struct idmap *m, gid_t gid)
{
        for (size_t i = 0; i < m->ngid; i++)
                if (range_has(m->gid[i].start, m->gid[i].count, (uint32_t)gid))
                        return true;
        return false;
}

static int write_proc(pid_t pid, const char *file, const char *data)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t len = (ssize_t)strlen(data);
        return write(fd, data, (size_t)len) == len ? 0 : -errno;
}

static void format_map(char *buf, size_t size, const void *ranges, size_t n)
{
        const struct { uint32_t start, count; } *r = ranges;
        size_t off = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < n && off < size; i++)
                off += (size_t)snprintf(buf + off, size - off, "%u %u %u\n", r[i].start,
                                        r[i].start, r[i].count);
}

static int write_idmaps(pid_t pid, const struct idmap *m, struct txbox_error *err)
{
        char buf[IDMAP_MAX * 40];
        int r;

        /* Unprivileged users must give up setgroups before writing a gid map. */
        if (!m->privileged && (r = write_proc(pid, "setgroups", "deny")) < 0)
                return tx_err(err, -r, "cannot write /proc/%d/setgroups: %s", (int)pid, strerror(-r));
        format_map(buf, sizeof(buf), m->uid, m->nuid);
        if ((r = write_proc(pid, "uid_map", buf)) < 0)
                return tx_err(err, -r, "cannot write the sandbox's uid map (%s): %s",
                              strtok(buf, "\n"), strerror(-r));
        format_map(buf, sizeof(buf), m->gid, m->ngid);
        if ((r = write_proc(pid, "gid_map", buf)) < 0)
                return tx_err(err, -r, "cannot write the sandbox's gid map (%s): %s",
                              strtok(buf, "\n"), strerror(-r));
        return 0;
}

/* ---- inside the sandbox: errors travel to the supervisor over a pipe ---- */

enum { CHILD_SETUP_FAILED = 1, CHILD_EXEC_FAILED = 2 };

struct child_msg {
        int kind;
        int err;
        char msg[900];
};

static int child_errfd = -1;

__attribute__((format(printf, 3, 4))) static int child_fail(int kind, int e, const char *fmt, ...)
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

#define SETUP_FAIL(...) child_fail(CHILD_SETUP_FAILED, errno ? errno : EIO, __VA_ARGS__)

static int set_tree_attr(const char *path, unsigned flags, uint64_t set, uint64_t clr)
{
        struct mount_attr attr = {.attr_set = set, .attr_clr = clr};
        return sys_mount_setattr(AT_FDCWD, path, flags, &attr, sizeof(attr));
}

/* Build the overlay as a detached mount: it is moved over the workspace only after /tmp and
 * friends are replaced, since those may cover the workspace's own path. */
static int make_overlay(const struct sandbox_spec *s)
{
        char lower[PATH_MAX * 2];
        size_t j = 0;

        /* ':' separates lower layers and '\' escapes; escape both in the workspace path. */
        for (const char *p = s->workspace; *p && j + 2 < sizeof(lower); p++) {
                if (*p == ':' || *p == '\\')
                        lower[j++] = '\\';
                lower[j++] = *p;
        }
        lower[j] = '\0';
        _cleanup_close_ int fs = sys_fsopen("overlay", FSOPEN_CLOEXEC);
        if (fs < 0)
                return SETUP_FAIL("overlayfs is not available (fsopen overlay: %s); load the overlay module", strerror(errno));
        if (sys_fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", lower, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", s->upper, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_STRING, "workdir", s->work, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return SETUP_FAIL("cannot mount an overlay on '%s' (upper '%s'): %s; the workspace's "
                                  "filesystem must support overlayfs in a user namespace (kernel >= 5.11, "
                                  "user xattrs on the state dir's filesystem)",
                                  s->workspace, s->upper, strerror(errno));
        int m = sys_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (m < 0)
                return SETUP_FAIL("cannot attach the overlay of '%s': %s", s->workspace, strerror(errno));
        return m;
}

static int bind_dev_node(const char *name)
{
        char src[64], dst[64];
        snprintf(src, sizeof(src), "/dev/%s", name);
        snprintf(dst, sizeof(dst), "/tmp/.txbox-dev/%s", name);
        _cleanup_close_ int fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0 || mount(src, dst, NULL, MS_BIND, NULL) < 0)
                return SETUP_FAIL("cannot bind %s into the sandbox: %s", src, strerror(errno));
        return 0;
}

/* A minimal /dev: the usual character devices, a private devpts and /dev/shm. */
static int setup_dev(void)
{
        static const char *const nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
        static const char *const links[][2] = {
                {"/proc/self/fd", "fd"},       {"/proc/self/fd/0", "stdin"},
                {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"},
                {"pts/ptmx", "ptmx"},
        };
        const char *stage = "/tmp/.txbox-dev";

        if (mkdir(stage, 0755) < 0 || mount("tmpfs", stage, "tmpfs", MS_NOSUID, "mode=0755,size=64k") < 0)
                return SETUP_FAIL("cannot create the sandbox's /dev: %s", strerror(errno));
        for (size_t i = 0; i < ARRAY_SIZE(nodes); i++)
                if (bind_dev_node(nodes[i]) < 0)
                        return -1;
        for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
                char dst[64];
                snprintf(dst, sizeof(dst), "%s/%s", stage, links[i][1]);
                if (symlink(links[i][0], dst) < 0)
                        return SETUP_FAIL("cannot create %s: %s", dst, strerror(errno));
        }
        if (mkdir("/tmp/.txbox-dev/pts", 0755) < 0 || mkdir("/tmp/.txbox-dev/shm", 01777) < 0 ||
            mount("devpts", "/tmp/.txbox-dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                  "newinstance,ptmxmode=0666,mode=620") < 0 ||
            mount("tmpfs", "/tmp/.txbox-dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0)
                return SETUP_FAIL("cannot mount the sandbox's /dev/pts or /dev/shm: %s", strerror(errno));
        if (mount(stage, "/dev", NULL, MS_MOVE, NULL) < 0)
                return SETUP_FAIL("cannot move the sandbox's /dev into place: %s", strerror(errno));
        rmdir(stage);
        /* Read-only like the rest; device nodes on a read-only mount stay writable. */
        if (set_tree_attr("/dev", 0, MOUNT_ATTR_RDONLY, 0) < 0)
                return SETUP_FAIL("cannot make the sandbox's /dev read-only: %s", strerror(errno));
        return 0;
}

static int mask_path(const char *path)
{
        struct stat st;

        if (lstat(path, &st) < 0 || S_ISLNK(st.st_mode))
                return 0; /* nothing there to hide (a symlink's target is masked if listed) */
        if (S_ISDIR(st.st_mode)) {
                if (mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                          "mode=0755,size=4k") < 0)
                        return SETUP_FAIL("cannot hide '%s': %s", path, strerror(errno));
                return 0;
        }
        if (mount("/dev/null", path, NULL, MS_BIND, NULL) < 0 ||
            set_tree_attr(path, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC, 0) < 0)
                return SETUP_FAIL("cannot hide '%s': %s", path, strerror(errno));
        return 0;
}

static int mask_secrets(const struct sandbox_spec *s)
{
        char path[PATH_MAX];

        /* The state dir holds upper layers and the audit log: never reachable from inside. */
        if (mask_path(s->state_dir) < 0)
                return -1;
        if (!s->home || s->home[0] != '/')
                return 0;
        for (size_t i = 0; sandbox_secret_paths[i]; i++) {
                snprintf(path, sizeof(path), "%s/%s", s->home, sandbox_secret_paths[i]);
                if (mask_path(path) < 0)
                        return -1;
        }
        return 0;
}

static int place_workspace(const struct sandbox_spec *s, int ovl)
{
        struct stat st;

        /* The workspace may sit beneath the fresh /tmp: recreate its path there. */
        if (stat(s->workspace, &st) < 0 && mkdir_p(s->workspace, 0755) < 0)
                return SETUP_FAIL("cannot recreate '%s' in the sandbox: %s", s->workspace, strerror(errno));
        if (sys_move_mount(ovl, "", AT_FDCWD, s->workspace, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return SETUP_FAIL("cannot mount the overlay over '%s': %s", s->workspace, strerror(errno));
        return 0;
}

static int setup_mounts(const struct sandbox_spec *s)
{
        _cleanup_close_ int ovl = -1;

        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return SETUP_FAIL("cannot make mounts private: %s", strerror(errno));
        if ((ovl = make_overlay(s)) < 0)
                return -1;
        /* Everything the host has, read-only and without setuid; devices stay usable only in
         * the fresh /dev below. */
        if (set_tree_attr("/", AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0) < 0)
                return SETUP_FAIL("cannot make the root read-only (mount_setattr: %s); kernel >= 5.12 is needed",
                                  strerror(errno));
        if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0)
                return SETUP_FAIL("cannot mount a private /tmp: %s", strerror(errno));
        if (setup_dev() < 0)
                return -1;
        if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                return SETUP_FAIL("cannot mount the sandbox's own /proc: %s (the current /proc is partly "
                                  "covered, as inside another container; run txbox where /proc is fully visible)",
                                  strerror(errno));
        if (place_workspace(s, ovl) < 0)
                return -1;
        return mask_secrets(s);
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

/* ---- the program ---- */

static int drop_privileges(void)
{
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct data[2] = {{0}};
        long last = 63;
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");

        if (f && fscanf(f, "%ld", &last) != 1)
                last = 63;
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

__attribute__((noreturn)) static void exec_program(const struct sandbox_spec *s)
{
        reset_signals();
        if (drop_privileges() < 0)
                _exit(125);
        if (chdir(s->cwd) < 0) {
                child_fail(CHILD_SETUP_FAILED, errno, "cannot enter '%s' in the sandbox: %s", s->cwd, strerror(errno));
                _exit(125);
        }
        execvp(s->argv[0], s->argv);
        int e = errno;
        child_fail(CHILD_EXEC_FAILED, e, "%s: %s", s->argv[0],
                   e == ENOENT ? "command not found" : strerror(e));
        _exit(e == ENOENT ? 127 : 126);
}

/* ---- init (pid 1 of the sandbox) ---- */

static volatile sig_atomic_t init_child_pid;

static void init_forward(int sig)
{
        if (init_child_pid > 0)
                kill(init_child_pid, sig);
}

__attribute__((noreturn)) static void init_main(const struct sandbox_spec *s, int syncfd, int statusfd)
{
        char c;
        int status = 0;

        if (read(syncfd, &c, 1) != 1) /* the supervisor died before writing our id maps */
                _exit(125);
        close(syncfd);
        if (setup_mounts(s) < 0 || (s->net == TXBOX_NET_LOOPBACK && loopback_up() < 0))
                _exit(125);
        if (sethostname("txbox", 5) < 0) {
                /* cosmetic: the uts namespace is still private */
        }
        /* The program runs as our uid: make init unreachable by ptrace from it. */
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        pid_t pid = fork();
        if (pid < 0) {
                SETUP_FAIL("cannot fork the program: %s", strerror(errno));
                _exit(125);
        }
        if (pid == 0) {
                close(statusfd);
                exec_program(s);
        }
        close(child_errfd);
        init_child_pid = pid;
        struct sigaction sa = {.sa_handler = init_forward};
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        sigaction(SIGQUIT, &sa, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (;;) {
                int st;
                pid_t w = waitpid(-1, &st, 0);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        break;
                if (w == pid) {
                        status = st;
                        break;
                }
        }
        if (write(statusfd, &status, sizeof(status)) < 0) {
                /* the supervisor is gone; our exit kills the namespace all the same */
        }
        _exit(0);
}

/* ---- supervisor ---- */

static int clone_sandbox(const struct sandbox_spec *s)
{
        unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
        if (s->net != TXBOX_NET_HOST)
                flags |= CLONE_NEWNET;
        /* A fork-like clone: the child continues on a copy of our stack. */
        return (int)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
}

static int explain_clone_failure(int e, struct txbox_error *err)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/unprivileged_userns_clone", "re");
        int v = 1;
        if (f && fscanf(f, "%d", &v) == 1 && v == 0)
                return tx_err(err, e, "user namespaces are disabled: sysctl kernel.unprivileged_userns_clone=0; "
                                      "enable them (sysctl -w kernel.unprivileged_userns_clone=1) or run as root");
        _cleanup_fclose_ FILE *g = fopen("/proc/sys/user/max_user_namespaces", "re");
        if (g && fscanf(g, "%d", &v) == 1 && v == 0)
                return tx_err(err, e, "user namespaces are disabled: sysctl user.max_user_namespaces=0; "
                                      "raise it (sysctl -w user.max_user_namespaces=10000)");
        return tx_err(err, e, "cannot create the sandbox's namespaces (clone: %s); user namespaces may be "
                              "restricted here (AppArmor's kernel.apparmor_restrict_unprivileged_userns, "
                              "or a container without CLONE_NEWUSER)", strerror(e));
}

struct supervise {
        pid_t pid;
        int statusfd, errfd, sigfd;
        double timeout_s;
};

/* Wait for the program's status, forwarding termination signals and enforcing the timeout. */
static void supervise_wait(struct supervise *sv, struct txbox_run_result *res)
{
        int64_t deadline = sv->timeout_s > 0 ? mono_us() + (int64_t)(sv->timeout_s * 1e6) : 0;
        int status = 0;
        bool got = false;

        for (;;) {
                struct pollfd p[2] = {{.fd = sv->statusfd, .events = POLLIN}, {.fd = sv->sigfd, .events = POLLIN}};
                int ms = -1;
                if (deadline) {
                        int64_t left = deadline - mono_us();
                        ms = left <= 0 ? 0 : (int)((left + 999) / 1000);
                }
                int n = poll(p, 2, ms);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n == 0) {
                        res->timed_out = true;
                        kill(sv->pid, SIGKILL);
                        break;
                }
                if (p[1].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        if (read(sv->sigfd, &si, sizeof(si)) == sizeof(si))
                                kill(sv->pid, (int)si.ssi_signo);
                }
                if (p[0].revents & (POLLIN | POLLHUP)) {
                        got = read(sv->statusfd, &status, sizeof(status)) == sizeof(status);
                        break;
                }
        }
        while (waitpid(sv->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        if (res->timed_out || !got) {
                res->exit_code = -1;
                res->signal = SIGKILL;
        } else if (WIFSIGNALED(status)) {
                res->exit_code = -1;
                res->signal = WTERMSIG(status);
        } else {
                res->exit_code = WEXITSTATUS(status);
                res->signal = 0;
        }
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

int sandbox_run(const struct sandbox_spec *s, struct txbox_run_result *res, struct txbox_error *err)
{
        int syncp[2] = {-1, -1}, statusp[2] = {-1, -1}, errp[2] = {-1, -1};
        sigset_t mask, old;
        _cleanup_close_ int sigfd = -1;
        int r;

        memset(res, 0, sizeof(*res));
        res->exit_code = -1;
        if ((r = make_pipes(syncp, statusp, errp)) < 0) {
                r = tx_err(err, -r, "cannot create pipes: %s", strerror(-r));
                goto out_pipes;
        }
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigaddset(&mask, SIGQUIT);
        sigprocmask(SIG_BLOCK, &mask, &old);
        pid_t pid = clone_sandbox(s);
        if (pid < 0) {
                r = explain_clone_failure(errno, err);
                goto out_mask;
        }
        if (pid == 0) {
                /* Die with the supervisor: the kernel then kills the whole pid namespace. */
                prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                close(syncp[1]);
                close(statusp[0]);
                close(errp[0]);
                child_errfd = errp[1];
                init_main(s, syncp[0], statusp[1]);
        }
        close(syncp[0]);
        close(statusp[1]);
        close(errp[1]);
        syncp[0] = statusp[1] = errp[1] = -1;
        if ((r = write_idmaps(pid, s->idmap, err)) < 0 || write(syncp[1], "x", 1) != 1) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                if (r >= 0)
                        r = tx_err(err, EIO, "the sandbox died while starting");
                goto out_mask;
        }
        sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
        struct supervise sv = {.pid = pid, .statusfd = statusp[0], .errfd = errp[0], .sigfd = sigfd,
                               .timeout_s = s->timeout_s};
        supervise_wait(&sv, res);
        r = read_child_error(errp[0], res, err);
        if (r > 0) {
                res->exit_code = res->exit_code >= 0 ? res->exit_code : 127;
                r = 0;
        }
out_mask:
        sigprocmask(SIG_SETMASK, &old, NULL);
out_pipes:
        for (int i = 0; i < 2; i++) {
                closep(&syncp[i]);
                closep(&statusp[i]);
                closep(&errp[i]);
        }
        return r;
}
