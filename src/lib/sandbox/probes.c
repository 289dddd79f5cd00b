/* txbox doctor's kernel probes: can this machine build the sandbox (user, mount, pid and
 * network namespaces, an overlay on the workspace's filesystem, its own /proc, pid_max,
 * seccomp, Landlock), and which mechanism enforces each resource limit here.
 *
 * Apart from the sandbox itself: the probes take the sandbox's steps one by one in a
 * throwaway child, each failure reported with its cost instead of stopping a run, and only
 * txbox doctor calls them (through txbox_doctor_at and sandbox_doctor).
 */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"

#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "base/cleanup.h"
#include "base/macros.h"
#include "sandbox/cgroup.h"
#include "sandbox/guard.h"
#include "sandbox/reslimits.h"
#include "sandbox/sandbox_int.h"
#include "base/syscalls.h"

enum {
        PROBE_USERNS = 1 << 0,
        PROBE_OVERLAY = 1 << 1,
        PROBE_SETATTR = 1 << 2,
        PROBE_PIDMAX = 1 << 3,
        PROBE_NETNS = 1 << 4,
        PROBE_PROC = 1 << 5,
};

/* What the probing child found: a bit per step that worked, the errno of those that did not. */
struct probe_result {
        int bits;
        int userns_err, overlay_err, proc_err;
};

/* An overlay as the sandbox makes it: lower (the workspace itself when given: its own
 * filesystem is what matters), upper and work in dir. */
static int probe_overlay(const char *dir, const char *lower, int *e)
{
        char l[PATH_MAX], u[PATH_MAX], w[PATH_MAX];
        snprintf(l, sizeof(l), "%s/l", dir);
        snprintf(u, sizeof(u), "%s/u", dir);
        snprintf(w, sizeof(w), "%s/w", dir);
        if ((!lower && mkdir(l, 0755) < 0) || mkdir(u, 0755) < 0 || mkdir(w, 0755) < 0)
                return *e = errno, 0;
        /* By descriptor, opened in this mount namespace (the overlay clones its lower layers
         * from it), as the sandbox names its layers: ':' or ',' in a path would split it. */
        _cleanup_close_ int lfd = lower ? open(lower, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
        if (lower && lfd < 0)
                return *e = errno, 0;
        if (lower)
                snprintf(l, sizeof(l), "/proc/self/fd/%d", lfd);
        _cleanup_close_ int fs = sys_fsopen("overlay", FSOPEN_CLOEXEC);
        if (fs < 0 || sys_fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", l, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", u, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_STRING, "workdir", w, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return *e = errno, 0;
        _cleanup_close_ int m = sys_fsmount(fs, FSMOUNT_CLOEXEC, 0);
        if (m < 0)
                return *e = errno, 0;
        struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
        return PROBE_OVERLAY |
               (sys_mount_setattr(m, "", AT_EMPTY_PATH, &attr, sizeof(attr)) == 0 ? PROBE_SETATTR : 0);
}

/* In a child: the namespaces, overlay, /proc and pid_max steps of a sandbox. */
__attribute__((noreturn)) static void probe_child(const char *dir, const char *lower, int fd)
{
        struct probe_result pr = {0};
        char map[64];
        uid_t uid = geteuid();
        gid_t gid = getegid();

        if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0) {
                pr.userns_err = errno;
                goto out;
        }
        /* Mapping fails where the sandbox's would: root without CAP_SETFCAP, say. */
        snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
        if ((pr.userns_err = -sandbox_write_proc(getpid(), "uid_map", map)) > 0)
                goto out;
        pr.bits |= PROBE_USERNS;
        sandbox_write_proc(getpid(), "setgroups", "deny");
        snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
        sandbox_write_proc(getpid(), "gid_map", map);
        if (unshare(CLONE_NEWNET) == 0)
                pr.bits |= PROBE_NETNS;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
                pr.bits |= probe_overlay(dir, lower, &pr.overlay_err);
        else
                pr.overlay_err = errno;
        pid_t pid = fork(); /* pid 1 of the new pid namespace */
        if (pid == 0) {
                /* The sandbox mounts its own /proc: the kernel refuses while the /proc we
                 * see has paths covered by someone more privileged (a container's masks). */
                if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                        _exit(128 + (errno & 127));
                _exit(PROBE_PROC | (limits_set_pid_max(1000) == 0 ? PROBE_PIDMAX : 0));
        }
        int st;
        if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st)) {
                if (WEXITSTATUS(st) >= 128)
                        pr.proc_err = WEXITSTATUS(st) - 128;
                else
                        pr.bits |= WEXITSTATUS(st);
        } else
                pr.proc_err = pid < 0 ? errno : ECHILD;
out:
        if (write(fd, &pr, sizeof(pr)) < 0) {
                /* the parent sees nothing and reports every probe missing */
        }
        _exit(0);
}

static void probe_namespaces(const char *dir_in, const char *lower, struct probe_result *pr)
{
        char dir[PATH_MAX] = "/var/tmp/txbox-doctor.XXXXXX";
        int p[2];

        memset(pr, 0, sizeof(*pr));
        pr->userns_err = pr->overlay_err = pr->proc_err = EIO;
        if (dir_in)
                snprintf(dir, sizeof(dir), "%s", dir_in);
        else if (!mkdtemp(dir) && !(strcpy(dir, "/tmp/txbox-doctor.XXXXXX") && mkdtemp(dir)))
                return;
        if (pipe2(p, O_CLOEXEC) < 0)
                goto out;
        pid_t pid = fork();
        if (pid == 0) {
                close(p[0]);
                probe_child(dir, lower, p[1]);
        }
        if (pid < 0)
                pr->userns_err = errno;
        close(p[1]);
        if (pid > 0) {
                if (read(p[0], pr, sizeof(*pr)) != sizeof(*pr))
                        memset(pr, 0, sizeof(*pr));
                waitpid(pid, NULL, 0);
        }
        close(p[0]);
out:;
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        const char *const sub[] = {"w/work", "w/index", "l", "u", "w"};
        for (size_t i = 0; dfd >= 0 && i < ARRAY_SIZE(sub); i++)
                unlinkat(dfd, sub[i], AT_REMOVEDIR);
        if (!dir_in)
                rmdir(dir);
}

/* How many mounts cover paths beneath /proc (a container runtime's masks); the first's path. */
static int proc_covered(char *first, size_t size)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        char line[4096], mp[PATH_MAX];
        int n = 0;

        first[0] = '\0';
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 && !strncmp(mp, "/proc/", 6) && n++ == 0)
                        snprintf(first, size, "%.100s", mp);
        return n;
}

static void proc_detail(const struct probe_result *pr, char *out, size_t size)
{
        char first[128];
        int n;

        if (pr->bits & PROBE_PROC)
                snprintf(out, size, "a fresh proc mounted in the sandbox's pid namespace");
        else if (!(pr->bits & PROBE_USERNS))
                snprintf(out, size, "not tried: no user namespace");
        else if ((n = proc_covered(first, sizeof(first))) > 0)
                snprintf(out, size, "mount of proc failed: %s; %d path%s under /proc covered (%s%s)",
                         strerror(pr->proc_err), n, n == 1 ? "" : "s", first, n > 1 ? ", ..." : "");
        else
                snprintf(out, size, "mount of proc failed: %s", strerror(pr->proc_err));
}

static void probe_set(struct txbox_probe *p, const char *name, bool ok, bool essential, const char *cost,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void probe_set(struct txbox_probe *p, const char *name, bool ok, bool essential, const char *cost,
                      const char *fmt, ...)
{
        va_list ap;
        p->name = name;
        p->ok = ok;
        p->essential = essential;
        p->cost = ok ? NULL : cost;
        va_start(ap, fmt);
        vsnprintf(p->detail, sizeof(p->detail), fmt, ap);
        va_end(ap);
}

/* How each sandbox gets into its transaction's cgroup, and what that costs (cgroup.h): a
 * move by txbox (a write of its pid into cgroup.procs) waits for an RCU grace period. */
static void cgroup_entry(struct txbox_probe *p, enum cgroup_mode mode)
{
        /* clone3 with no arguments: EINVAL where it exists, ENOSYS (or EPERM) where the
         * kernel or a seccomp profile refuses it. */
        errno = 0;
#ifdef SYS_clone3
        bool clone3 = syscall(SYS_clone3, NULL, 0) < 0 && errno == EINVAL;
#else
        bool clone3 = false;
#endif
        probe_set(p, "cgroup entry", mode != CGROUP_V2 || clone3, false,
                  "clone3 is refused here (a seccomp profile?): each sandbox is moved into its cgroup, a "
                  "wait of 1 to 15 ms per transaction for an RCU grace period; allow clone3, or mount "
                  "cgroup2 with favordynmods",
                  "%s",
                  mode == CGROUP_V2 && clone3
                          ? "born in it (clone3 CLONE_INTO_CGROUP): no move; a cgroup made and removed per "
                            "transaction, about 0.1 ms of CPU"
                  : mode == CGROUP_V2 ? "moved into it by txbox (clone3 refused)"
                  : mode == CGROUP_V1 ? "init writes itself into its tasks files: no move by txbox, no wait; "
                                        "a cgroup made and removed per transaction, about 0.1 ms of CPU"
                                      : "no cgroup: nothing to enter");
}

/* Which mechanism enforces each resource limit here (docs/SECURITY.md, "Limits"). */
static int probe_limits(struct txbox_probe *all, int n, int bits)
{
        char cg[200];
        enum cgroup_mode mode = cgroup_probe(cg, sizeof(cg));
        bool have = mode != CGROUP_NONE;

        probe_set(&all[n++], "cgroups", have, false,
                  "no kernel-enforced memory total: txbox's own accounting stands in (see the memory limit "
                  "below); "
                  "on systemd, `systemd-run --user --scope txbox ...` runs it where the user manager "
                  "delegates one",
                  "%s", cg);
        cgroup_entry(&all[n++], mode);
        probe_set(&all[n++], "memory limit", have, false,
                  "accounting by the sandbox's init every 100 ms (processes, /tmp, /dev/shm, memfds, System "
                  "V): a "
                  "program can overshoot by what it allocates in 100 ms, and kernel memory (socket and pipe "
                  "buffers, "
                  "page tables) is not counted; RLIMIT_DATA still bounds each process",
                  "%s",
                  mode == CGROUP_V2
                          ? "cgroup v2: memory.max, an OOM kill ends the transaction (kernel-enforced total)"
                  : mode == CGROUP_V1 ? "cgroup v1: memory.limit_in_bytes, an OOM kill ends the transaction "
                                        "(kernel-enforced)"
                                      : "accounting: init sums the sandbox's memory every 100 ms");
        bool v1_pids = mode == CGROUP_V1 && !cgroup_pid_max_per_ns();
        probe_set(&all[n++], "process limit", mode == CGROUP_V2 || v1_pids || (bits & PROBE_PIDMAX), false,
                  "RLIMIT_NPROC only, which does not bind root; the timeout ends a fork bomb", "%s%s%s",
                  bits & PROBE_PIDMAX ? "pid_max of the sandbox's pid namespace" : "",
                  (bits & PROBE_PIDMAX) && (mode == CGROUP_V2 || v1_pids) ? " and " : "",
                  mode == CGROUP_V2 ? "cgroup v2 pids.max" : v1_pids ? "cgroup v1 pids.max"
                                                        : bits & PROBE_PIDMAX ? "" : "RLIMIT_NPROC");
        probe_set(&all[n++], "CPU limits", true, false, NULL,
                  "RLIMIT_CPU per process (--max-cpu); --max-cpus %s",
                  cgroup_has_cpu() ? "by cgroup cpu.max" : "unavailable (no cgroup with the cpu controller)");
        probe_set(&all[n++], "disk and files limits", true, false, NULL, "%s",
                  "accounting: layers walked, deleted open files counted, free space checked every 20 ms");
        probe_set(&all[n++], "open files limit", true, false, NULL, "%s",
                  "RLIMIT_NOFILE per process (--max-open-files), kernel-enforced");
        return n;
}

int sandbox_doctor(const char *dir, const char *lower, struct txbox_probe *out, size_t max)
{
        struct txbox_probe all[20];
        struct probe_result pr;
        int abi = guard_landlock_abi(), n = 0;
        struct txbox_error err = {0};
        char proc[160];

        probe_namespaces(dir, lower, &pr);
        int bits = pr.bits;
        proc_detail(&pr, proc, sizeof(proc));
        probe_set(&all[n++], "user namespaces", bits & PROBE_USERNS, true,
                  "txbox cannot run: no sandbox without them (enable kernel.unprivileged_userns_clone or run "
                  "as root; in a container, a seccomp profile that allows unshare and mount: "
                          "deploy/seccomp/<arch>/txbox.json)",
                  "%s%s",
                  bits & PROBE_USERNS ? "unprivileged user, mount and pid namespaces"
                  : "unshare or its uid map failed: ", bits & PROBE_USERNS ? "" : strerror(pr.userns_err));
        probe_set(&all[n++], "network namespace", bits & PROBE_NETNS, true,
                  "--net=none and --net=loopback cannot isolate the network", "%s",
                  bits & PROBE_NETNS ? "own empty network namespace" : "unshare(CLONE_NEWNET) failed");
        probe_set(&all[n++], lower ? "overlay on the workspace's fs" : "overlay in a user namespace",
                  bits & PROBE_OVERLAY, true,
                  "no copy-on-write workspace: txbox cannot run (kernel >= 5.11 with overlayfs, and the "
                  "workspace and "
                  "state dir on a filesystem that can hold an overlay's layers: ext4, xfs, btrfs or tmpfs; "
                  "not NFS, "
                  "not a container's overlay root)",
                  "%s%s",
                  bits & PROBE_OVERLAY     ? "overlayfs with userxattr"
                  : !(bits & PROBE_USERNS) ? "not tried: no user namespace"
                                           : "overlay mount failed: ",
                  bits & PROBE_OVERLAY || !(bits & PROBE_USERNS) ? "" : strerror(pr.overlay_err));
        probe_set(&all[n++], "read-only root (mount_setattr)", bits & PROBE_SETATTR, true,
                  "the host's files could not be made read-only: txbox cannot run (kernel >= 5.12)", "%s",
                  bits & PROBE_SETATTR ? "recursive read-only bind" : "mount_setattr failed");
        probe_set(&all[n++], "own /proc", bits & PROBE_PROC, true,
                  "txbox cannot run: its sandbox needs a /proc of its own; inside a container lift the masks "
                  "on "
                  "/proc: in Kubernetes securityContext.procMount: Unmasked (with hostUsers: false), with "
                  "podman or "
                  "docker --security-opt unmask=ALL",
                  "%s", proc);
        probe_set(&all[n++], "seccomp filter",
                  guard_seccomp_available() && guard_seccomp_prepare(0, NULL, &err) == 0, true,
                  "no syscall deny-list: mount, keyring, bpf, io_uring, unix sockets stay reachable; txbox "
                  "refuses to run",
                  "%s", err.code ? err.msg : "deny-list compiled and loadable");
        probe_set(&all[n++], "seccomp user notification", guard_notify_available(), false,
                  "no exec checks while the program runs: only the first command line is checked by policy; "
                  "a directory of the workspace cannot be renamed (EXDEV)",
                  "%s",
                  guard_notify_available() ? "execve/execveat can be checked, renames of directories completed, "
                                             "by the supervisor"
                                           : "SECCOMP_RET_USER_NOTIF unavailable");
        bool conn = guard_notify_available() && sockconn_available();
        probe_set(&all[n++], "unix sockets", conn, false,
                  "no unix socket can be made in the sandbox (multiprocessing.Manager, test servers fail with "
                  "EPERM); --allow-unix-sockets lets them, and the host's sockets, through",
                  "%s", conn ? "connect() made by the supervisor: the sandbox's own in /tmp and /dev/shm, never "
                               "the host's"
                             : "seccomp user notification or pidfd_getfd unavailable, or Yama's ptrace_scope "
                               "above 1");
        probe_set(&all[n++], "Landlock", abi > 0, false,
                  "writes are confined by mounts only (read-only root), without a second, path-based layer",
                  "ABI %d%s", abi,
                  abi >= 3  ? " (writes, renames, truncate)"
                  : abi > 0 ? " (writes; no truncate control before ABI 3)"
                            : "");
        probe_set(&all[n++], "Landlock scopes (ABI 6)", abi >= 6, false,
                  "with --net=host (or --allow-unix-sockets) abstract unix sockets and signals outside are "
                          "not scoped",
                  "%s", abi >= 6 ? "abstract unix sockets and signals stay in the sandbox" : "kernel < 6.12");
        probe_set(&all[n++], "pid limit per namespace", bits & PROBE_PIDMAX, false,
                  "fork bombs are bounded only by RLIMIT_NPROC, which does not bind root; the timeout ends "
                          "them",
                  "%s", bits & PROBE_PIDMAX ? "pid_max of the sandbox's pid namespace (kernel >= 6.14)"
                  : "pid_max is global here");
        n = probe_limits(all, n, bits);
        for (int i = 0; i < n && (size_t)i < max; i++)
                out[i] = all[i];
        return n < (int)max ? n : (int)max;
}
