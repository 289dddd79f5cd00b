/* Which program an exec in the sandbox will actually run: the file the kernel will find for
 * the path the exec names (or behind the descriptor it passes), in the task's own view.
 * argv[0] is whatever the caller chose (exec -a ls /bin/rm), so the exec check judges this
 * too. */
#define _GNU_SOURCE
#include "exectarget.h"

#include <limits.h>

#include "syscalls.h"

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

/* Open (O_PATH) what path names for the task: resolved beneath the task's root with every
 * symlink followed there, as the kernel will. */
static int open_in_task(pid_t pid, int dirfd, const char *path, bool nofollow)
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
        struct open_how how = {.flags = O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0), .resolve = RESOLVE_IN_ROOT};
        int fd = sys_openat2(root, p, &how, sizeof(how));
        return fd < 0 ? -errno : fd;
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
        } else if ((fd = open_in_task(pid, dirfd, path, flags & AT_SYMLINK_NOFOLLOW)) < 0) {
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
