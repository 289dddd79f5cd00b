/* Which program an exec in the sandbox will actually run: the file the kernel will find for
 * the path the exec names (or behind the descriptor it passes), in the task's own view.
 * argv[0] is whatever the caller chose (exec -a ls /bin/rm), so the exec check judges this
 * too. */
#define _GNU_SOURCE
#include "sandbox/exectarget.h"

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "base/cleanup.h"
#include "base/syscalls.h"

#define FOLLOW_MAX 40

/* The task's own path of its cwd or of its descriptor fd, as /proc shows it to us: its
 * mount namespace's view (the sandbox's /tmp and overlay are not ours). */
static int task_dir(pid_t pid, int dirfd, char *buf, size_t size)
{
        char proc[64];
        if (dirfd == AT_FDCWD)
                snprintf(proc, sizeof(proc), "/proc/%d/cwd", (int)pid);
        else
                snprintf(proc, sizeof(proc), "/proc/%d/fd/%d", (int)pid, dirfd);
        ssize_t n = readlink(proc, buf, size - 1);
        if (n < 0 || (size_t)n >= size - 1 || buf[0] != '/')
                return n < 0 ? -errno : -ENAMETOOLONG;
        buf[n] = '\0';
        return 0;
}

/* /proc/self/... and /proc/thread-self/... name the task itself: ours are /proc/PID/...
 * (its executable, its descriptors: a program that runs itself again, or a file it opened).
 * Other names in the task's /proc are not followed (RESOLVE_IN_ROOT refuses magic links). */
static const char *own_proc(pid_t pid, const char *path, char *buf, size_t size)
{
        static const char *const selfs[] = {"/proc/self/", "/proc/thread-self/"};
        for (size_t i = 0; i < 2; i++) {
                size_t l = strlen(selfs[i]);
                if (!strncmp(path, selfs[i], l)) {
                        int n = snprintf(buf, size, "/proc/%d/%s", (int)pid, path + l);
                        return n > 0 && (size_t)n < size ? buf : NULL;
                }
        }
        return NULL;
}

/* The slow way, when the quick one found nothing: a name can exist for the task and not for
 * us, through its /proc (/dev/fd/3, a link to /proc/self/fd/3: "self" is whoever looks,
 * and we are not in its pid namespace).  One component at a time from the task's root,
 * every link followed by hand; "self" and "thread-self" of a procfs become the task's own
 * /proc/PID in ours; procfs's own links (fd/N, exe) are followed by the kernel. */
struct twalk {
        pid_t pid;
        int root;
        int follows;
};

static bool on_procfs(int fd)
{
        struct statfs sf;
        return fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

static int twalk_from(struct twalk *t, int start, const char *path, bool nofollow);

/* One name beneath dirfd; takes dirfd.  Returns the descriptor of what it leads to. */
static int twalk_step(struct twalk *t, int dirfd, const char *name, bool last, bool nofollow)
{
        struct stat st;
        char target[PATH_MAX], mine[64];
        int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC), r;

        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISLNK(st.st_mode) || (last && nofollow)) {
                r = fd < 0 ? -errno : fd;
                close(dirfd);
                return r;
        }
        if (++t->follows > FOLLOW_MAX) {
                close(fd), close(dirfd);
                return -ELOOP;
        }
        if (on_procfs(dirfd)) {
                if (!strcmp(name, "self") || !strcmp(name, "thread-self")) {
                        snprintf(mine, sizeof(mine), "/proc/%d", (int)t->pid);
                        r = open(mine, O_PATH | O_DIRECTORY | O_CLOEXEC);
                } else /* fd/N, exe, cwd, root: the kernel follows its own links */
                        r = openat(dirfd, name, O_PATH | O_CLOEXEC);
                r = r < 0 ? -errno : r;
                close(fd), close(dirfd);
                return r;
        }
        ssize_t n = readlinkat(fd, "", target, sizeof(target) - 1);
        close(fd);
        if (n < 0 || (size_t)n >= sizeof(target) - 1) {
                close(dirfd);
                return n < 0 ? -errno : -ENAMETOOLONG;
        }
        target[n] = '\0';
        if (target[0] == '/') {
                close(dirfd);
                dirfd = fcntl(t->root, F_DUPFD_CLOEXEC, 0);
        }
        return dirfd < 0 ? -errno : twalk_from(t, dirfd, target, false);
}

/* Resolve path from start (taken); ".." never climbs above the task's root, as in the
 * kernel's own walk. */
static int twalk_from(struct twalk *t, int start, const char *path, bool nofollow)
{
        char buf[PATH_MAX];
        char *save = NULL;
        int cur = start;

        if (strlen(path) >= sizeof(buf)) {
                close(cur);
                return -ENAMETOOLONG;
        }
        strcpy(buf, path);
        for (char *c = strtok_r(buf, "/", &save), *next; c && cur >= 0; c = next) {
                next = strtok_r(NULL, "/", &save);
                if (!strcmp(c, "."))
                        continue;
                cur = twalk_step(t, cur, c, !next, nofollow);
        }
        return cur;
}

static int twalk(pid_t pid, int root, int dirfd, const char *path, bool nofollow)
{
        char proc[64];
        struct twalk t = {.pid = pid, .root = root};
        int start;

        if (path[0] == '/')
                start = fcntl(root, F_DUPFD_CLOEXEC, 0);
        else {
                if (dirfd == AT_FDCWD)
                        snprintf(proc, sizeof(proc), "/proc/%d/cwd", (int)pid);
                else
                        snprintf(proc, sizeof(proc), "/proc/%d/fd/%d", (int)pid, dirfd);
                start = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
        }
        return start < 0 ? -errno : twalk_from(&t, start, path, nofollow);
}

/* Open (O_PATH) what path names for the task: resolved beneath the task's root with every
 * symlink followed there, as the kernel will. */
int task_open(pid_t pid, int dirfd, const char *path, bool nofollow)
{
        char full[2 * PATH_MAX], dir[PATH_MAX], mine[PATH_MAX + 64], proc[64];
        const char *p = path;
        int r;

        if (p[0] != '/') {
                if ((r = task_dir(pid, dirfd, dir, sizeof(dir))) < 0)
                        return r;
                snprintf(full, sizeof(full), "%s/%s", strcmp(dir, "/") ? dir : "", path);
                p = full;
        }
        const char *own = own_proc(pid, p, mine, sizeof(mine));
        if (own) {
                int fd = open(own, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
                return fd < 0 ? -errno : fd;
        }
        snprintf(proc, sizeof(proc), "/proc/%d/root", (int)pid);
        _cleanup_close_ int root = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        struct open_how how = {.flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0),
                               .resolve = RESOLVE_IN_ROOT};
        int fd = sys_openat2(root, p, &how, sizeof(how));
        if (fd >= 0)
                return fd;
        /* Not there for us, or through a procfs link: look again the slow way (a PATH
         * search's misses come here too, and are misses again). */
        return errno == ENOENT || errno == ELOOP || errno == EXDEV ? twalk(pid, root, dirfd, path, nofollow)
                                                                   : -errno;
}

int exec_target_open(pid_t pid, const char *path)
{
        return path[0] == '/' ? task_open(pid, AT_FDCWD, path, false) : -EINVAL;
}

int exec_target(pid_t pid, int dirfd, const char *path, unsigned flags, char *buf, size_t size)
{
        char proc[64];
        struct stat st;
        _cleanup_close_ int fd = -1;

        if (!*path && (flags & AT_EMPTY_PATH)) {
                /* fexecve: the file behind the task's descriptor. */
                snprintf(proc, sizeof(proc), "/proc/%d/fd/%d", (int)pid, dirfd);
                fd = open(proc, O_PATH | O_CLOEXEC);
                if (fd < 0)
                        return EXEC_TARGET_UNKNOWN;
        } else if ((fd = task_open(pid, dirfd, path, flags & AT_SYMLINK_NOFOLLOW)) < 0) {
                /* Nothing there (a PATH search tries every directory): the exec fails by
                 * itself.  Anything else that cannot be resolved is not judged by its name. */
                return fd == -ENOENT || fd == -ENOTDIR ? -ENOENT : EXEC_TARGET_UNKNOWN;
        }
        if (fstat(fd, &st) < 0)
                return EXEC_TARGET_UNKNOWN;
        if (!S_ISREG(st.st_mode))
                return -ENOENT; /* not executable at all: the kernel refuses it (EACCES) */
        /* No name to judge: a memfd, an O_TMPFILE file, a file deleted since. */
        if (st.st_nlink == 0)
                return EXEC_TARGET_UNKNOWN;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(proc, buf, size - 1);
        if (n <= 0 || (size_t)n >= size - 1)
                return EXEC_TARGET_UNKNOWN;
        buf[n] = '\0';
        return 0;
}
