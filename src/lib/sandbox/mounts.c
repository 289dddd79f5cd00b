/* The sandbox's view of the file system, set up by its init in its own mount namespace: the
 * workspace as an overlay (the upper layer is what the program changes), the host's tree
 * read-only and nosuid, a private /tmp, a minimal /dev, its own /proc with the kernel's knobs
 * read-only, the state dir and the credentials masked, and the private caches mounted
 * writable over the tools' cache paths under $HOME (planned by home.c).  Apart from init's
 * other steps: this is the read-only boundary, and every failure here stops the run.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"

#include <limits.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "base/macros.h"
#include "base/str.h"
#include "base/trace.h"
#include "sandbox/sandbox_int.h"
#include "base/syscalls.h"

static int set_tree_attr(const char *path, unsigned flags, uint64_t set, uint64_t clr)
{
        struct mount_attr attr = {.attr_set = set, .attr_clr = clr};
        return sys_mount_setattr(AT_FDCWD, path, flags, &attr, sizeof(attr));
}

#define OVL_MAX_LAYERS 128

/* fsconfig() takes string values of at most 256 bytes, which a deep workspace or a stack of
 * savepoints easily exceeds: name every layer by a short /proc/self/fd/N path instead. */
static int layer_fd(const char *path, char *name, size_t size)
{
        int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0)
                snprintf(name, size, "/proc/self/fd/%d", fd);
        return fd;
}

/* Lower layers topmost first (a session's savepoints), the workspace last: one "lowerdir+"
 * each (Linux >= 6.8), else one ':'-joined "lowerdir". */
static int config_lowers(int fs, const struct sandbox_spec *s, int fds[], size_t *nfds)
{
        char joined[256] = "", name[40];
        const char *paths[OVL_MAX_LAYERS];
        size_t n = 0;

        for (size_t k = 0; s->lowers && s->lowers[k] && n + 1 < OVL_MAX_LAYERS; k++)
                paths[n++] = s->lowers[k];
        paths[n++] = s->workspace;
        for (size_t k = 0; k < n; k++) {
                if ((fds[(*nfds)++] = layer_fd(paths[k], name, sizeof(name))) < 0)
                        return SETUP_FAIL("cannot open overlay layer '%s': %s", paths[k], strerror(errno));
                if (sys_fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir+", name, 0) == 0)
                        continue;
                if (k > 0 || errno != EINVAL)
                        return SETUP_FAIL("cannot add overlay layer '%s': %s", paths[k], strerror(errno));
                /* An older kernel: fall back to the joined list. */
                for (size_t i = 0; i < n; i++) {
                        if (i > 0 && (fds[(*nfds)++] = layer_fd(paths[i], name, sizeof(name))) < 0)
                                return SETUP_FAIL("cannot open overlay layer '%s': %s", paths[i],
                                                  strerror(errno));
                        if (strlen(joined) + strlen(name) + 2 > sizeof(joined))
                                return SETUP_FAIL("too many overlay layers for this kernel (%zu); commit the "
                                                  "session", n);
                        snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s%s",
                                 i ? ":" : "", name);
                }
                return sys_fsconfig(fs, FSCONFIG_SET_STRING, "lowerdir", joined, 0) == 0
                               ? 0
                               : SETUP_FAIL("cannot set the overlay's layers: %s", strerror(errno));
        }
        return 0;
}

/* No sync at each copy-up nor at unmount: a layer becomes durable only when it has to, in
 * one syncfs (the commit's, or a pending transaction's). A layer left by a crash is never
 * mounted again: recovery discards it. Kernels before 5.10 lack the option. */
static int set_volatile(int fs)
{
        return sys_fsconfig(fs, FSCONFIG_SET_FLAG, "volatile", NULL, 0) < 0 && errno != EINVAL ? -1 : 0;
}

/* Build the overlay as a detached mount: it is moved over the workspace only after /tmp and
 * friends are replaced, since those may cover the workspace's own path. */
static int make_overlay(const struct sandbox_spec *s)
{
        int fds[OVL_MAX_LAYERS + 2];
        size_t nfds = 0;
        char up[40], wk[40];
        int m = -1;

        _cleanup_close_ int fs = sys_fsopen("overlay", FSOPEN_CLOEXEC);
        if (fs < 0)
                return SETUP_FAIL("overlayfs is not available (fsopen overlay: %s); load the overlay module",
                                  strerror(errno));
        if (config_lowers(fs, s, fds, &nfds) < 0)
                goto out;
        if ((fds[nfds++] = layer_fd(s->upper, up, sizeof(up))) < 0 ||
            (fds[nfds++] = layer_fd(s->work, wk, sizeof(wk))) < 0) {
                SETUP_FAIL("cannot open the overlay's upper layer '%s': %s", s->upper, strerror(errno));
                goto out;
        }
        if (sys_fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", up, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_STRING, "workdir", wk, 0) < 0 ||
            sys_fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
            set_volatile(fs) < 0 ||
            sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
                SETUP_FAIL("cannot mount an overlay on '%s' (upper '%s'): %s; the workspace's "
                           "filesystem must support overlayfs in a user namespace (kernel >= 5.11, "
                           "user xattrs on the state dir's filesystem)",
                           s->workspace, s->upper, strerror(errno));
                goto out;
        }
        m = sys_fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (m < 0)
                SETUP_FAIL("cannot attach the overlay of '%s': %s", s->workspace, strerror(errno));
out:
        for (size_t i = 0; i < nfds; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
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

/* The mark of a txbox sandbox, in its own /dev (read-only, made by init): a txbox started
 * inside one runs its command there (txbox_inside_sandbox).  On a host only root could make
 * it, on a read-only tmpfs at that. */
#define SANDBOX_MARK_NAME ".txbox-sandbox"
#define SANDBOX_MARK      "/dev/" SANDBOX_MARK_NAME

bool txbox_inside_sandbox(char *workspace, size_t size)
{
        struct stat st;
        struct statfs sf;
        struct statvfs sv;
        char buf[PATH_MAX + 16];
        _cleanup_close_ int fd = open(SANDBOX_MARK, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size >= (off_t)sizeof(buf) ||
            fstatfs(fd, &sf) < 0 || sf.f_type != TMPFS_MAGIC || fstatvfs(fd, &sv) < 0 ||
            !(sv.f_flag & ST_RDONLY))
                return false;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0 || buf[0] != '/')
                return false;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        if (workspace && size)
                snprintf(workspace, size, "%s", buf);
        return true;
}

static int write_mark(const char *path, const char *workspace)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
        if (fd < 0 || dprintf(fd, "%s\n", workspace) < 0)
                return SETUP_FAIL("cannot write the sandbox's mark %s: %s", path, strerror(errno));
        return 0;
}

/* A minimal /dev: the usual character devices, a private devpts and /dev/shm, and the mark. */
static int setup_dev(const char *tmpfs_opts, const char *workspace)
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
        if (write_mark("/tmp/.txbox-dev/" SANDBOX_MARK_NAME, workspace) < 0)
                return -1;
        if (mkdir("/tmp/.txbox-dev/pts", 0755) < 0 || mkdir("/tmp/.txbox-dev/shm", 01777) < 0 ||
            mount("devpts", "/tmp/.txbox-dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                  "newinstance,ptmxmode=0666,mode=620") < 0 ||
            mount("tmpfs", "/tmp/.txbox-dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, tmpfs_opts) < 0)
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
        char real[PATH_MAX];

        if (lstat(path, &st) < 0)
                return 0; /* nothing there to hide */
        if (S_ISLNK(st.st_mode)) {
                /* What the name leads to is what must go dark (~/.ssh -> dotfiles/ssh, a
                 * state root that is a link): resolved here, in the sandbox's own view. */
                if (!realpath(path, real) || lstat(real, &st) < 0 || S_ISLNK(st.st_mode))
                        return 0; /* dangling: nothing there */
                path = real;
        }
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

/* A hidden path a cache is mounted over: the sandbox sees the private cache there, which
 * holds nothing of the host's. */
static bool under_cache(const struct sandbox_caches *c, const char *path)
{
        for (size_t i = 0; i < c->n; i++)
                if (c->v[i].mounted && path_is_within(path, c->v[i].target))
                        return true;
        return false;
}

/* Before the caches are mounted: a link among the hidden paths is resolved in the host's
 * view, never through a cache's content, which the sandbox wrote. */
static int mask_secrets(const struct sandbox_spec *s, const struct sandbox_prep *p)
{
        /* The state dir holds upper layers and the audit log: never reachable from inside. */
        if (mask_path(s->state_dir) < 0)
                return -1;
        for (size_t i = 0; i < p->hidden.n; i++)
                if (!under_cache(&p->caches, p->hidden.v[i]) && mask_path(p->hidden.v[i]) < 0)
                        return -1;
        return 0;
}

/* The private caches, writable (the rest of the tree is read-only by now), nosuid and
 * nodev, each opened beneath the cache root with no link on the way: the sandboxes write
 * inside the caches, never above them. */
static int mount_caches(const struct sandbox_caches *c)
{
        char src[64];

        if (c->off || !c->n)
                return 0;
        _cleanup_close_ int root = open(c->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return SETUP_FAIL("cannot open the cache directory '%s': %s (TXBOX_CACHE=off runs without "
                                  "caches)", c->root, strerror(errno));
        for (size_t i = 0; i < c->n; i++) {
                const struct sandbox_cache *e = &c->v[i];
                if (!e->mounted)
                        continue;
                _cleanup_close_ int fd = open_beneath(root, e->rel, O_PATH | O_DIRECTORY, 0);
                if (fd < 0) {
                        errno = -fd;
                        return SETUP_FAIL("cannot open the cache '%s/%s': %s (TXBOX_CACHE=off runs without "
                                          "caches)", c->root, e->rel, strerror(-fd));
                }
                snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
                if (mount(src, e->target, NULL, MS_BIND, NULL) < 0 ||
                    set_tree_attr(e->target, 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, MOUNT_ATTR_RDONLY) < 0)
                        return SETUP_FAIL("cannot mount the cache '%s/%s' over '%s': %s (TXBOX_CACHE=off runs "
                                          "without caches)", c->root, e->rel, e->target, strerror(errno));
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

int sandbox_setup_mounts(const struct sandbox_spec *s, const struct sandbox_prep *p)
{
        _cleanup_close_ int ovl = -1;

        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return SETUP_FAIL("cannot make mounts private: %s", strerror(errno));
        if ((ovl = make_overlay(s)) < 0)
                return -1;
        trace_mark("init: overlay");
        /* Everything the host has, read-only and without setuid; devices stay usable only in
         * the fresh /dev below. */
        if (set_tree_attr("/", AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0) < 0)
                return SETUP_FAIL(
                        "cannot make the root read-only (mount_setattr: %s); kernel >= 5.12 is needed",
                        strerror(errno));
        /* Sized: tmpfs pages are memory, which without swap nothing else gives back. */
        if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, p->tmpfs_opts) < 0)
                return SETUP_FAIL("cannot mount a private /tmp (%s): %s", p->tmpfs_opts, strerror(errno));
        if (setup_dev(p->tmpfs_opts, s->workspace) < 0)
                return -1;
        if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                return SETUP_FAIL("cannot mount the sandbox's own /proc: %s (the current /proc is partly "
                                  "covered, as inside a container with masked paths: in Kubernetes set "
                                  "securityContext.procMount: Unmasked with hostUsers: false, with podman or "
                                  "docker --security-opt unmask=ALL; docs/KUBERNETES.md)",
                                  strerror(errno));
        trace_mark("init: dev, proc");
        if (place_workspace(s, ovl) < 0 || mask_secrets(s, p) < 0)
                return -1;
        trace_mark("init: masks");
        return mount_caches(&p->caches);
}

/* Kernel knobs under /proc are checked against the writer's uid, not its capabilities: as
 * root, the program could otherwise rewrite host-wide sysctls such as kernel.core_pattern (a
 * path the kernel executes as real root).  Make them read-only, as container runtimes do. */
int sandbox_protect_proc(void)
{
        static const char *const paths[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus",
                                            "/proc/fs", "/proc/acpi", "/proc/scsi"};
        for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
                if (access(paths[i], F_OK) < 0)
                        continue;
                if (mount(paths[i], paths[i], NULL, MS_BIND | MS_REC, NULL) < 0 ||
                    set_tree_attr(paths[i], AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                  MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0) < 0)
                        return SETUP_FAIL("cannot make '%s' read-only: %s", paths[i], strerror(errno));
        }
        return 0;
}
