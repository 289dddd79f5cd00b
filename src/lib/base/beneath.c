/* Opening beneath a root, never through a symlink. */
#define _GNU_SOURCE
#include "base/beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "base/syscalls.h"

/* Component walk for kernels without openat2: every component opened O_NOFOLLOW relative
 * to the previous one, ".." refused, so the walk can neither follow a symlink nor leave
 * rootfd. */
static int open_beneath_walk(int rootfd, const char *relpath, int flags, mode_t mode)
{
        char buf[PATH_MAX];
        _cleanup_close_ int cur = -1;
        char *save = NULL, *comp, *next;

        if (strlen(relpath) >= sizeof(buf))
                return -ENAMETOOLONG;
        strcpy(buf, relpath);
        cur = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (cur < 0)
                return -errno;
        comp = strtok_r(buf, "/", &save);
        if (!comp)
                return openat(rootfd, ".", flags | O_CLOEXEC);
        for (; comp; comp = next) {
                next = strtok_r(NULL, "/", &save);
                if (!strcmp(comp, ".."))
                        return -EXDEV;
                if (!strcmp(comp, ".") && next)
                        continue;
                int f = next ? O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
                             : flags | O_NOFOLLOW | O_CLOEXEC;
                int fd = openat(cur, comp, f, mode);
                if (fd < 0)
                        return errno == ENOTDIR && next ? -ELOOP : -errno;
                closep(&cur);
                cur = fd;
        }
        return TAKE_FD(cur);
}

int open_beneath(int rootfd, const char *relpath, int flags, mode_t mode)
{
        static int have_openat2 = -1;
        const char *p = *relpath ? relpath : ".";

        if (have_openat2 != 0) {
                struct open_how how = {
                        .flags = (uint64_t)(flags | O_CLOEXEC),
                        .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
                };
                int fd = sys_openat2(rootfd, p, &how, sizeof(how));
                if (fd >= 0 || errno != ENOSYS) {
                        have_openat2 = 1;
                        return fd >= 0 ? fd : -errno;
                }
                have_openat2 = 0;
        }
        return open_beneath_walk(rootfd, p, flags, mode);
}

int open_parent_beneath(int rootfd, const char *relpath, const char **base)
{
        const char *slash = strrchr(relpath, '/');
        char buf[PATH_MAX];

        if (!slash) {
                *base = relpath;
                return open_beneath(rootfd, "", O_PATH | O_DIRECTORY, 0);
        }
        if ((size_t)(slash - relpath) >= sizeof(buf))
                return -ENAMETOOLONG;
        memcpy(buf, relpath, slash - relpath);
        buf[slash - relpath] = '\0';
        *base = slash + 1;
        return open_beneath(rootfd, buf, O_PATH | O_DIRECTORY, 0);
}

int make_parent_beneath(int rootfd, const char *relpath, mode_t mode, const char **base)
{
        char buf[PATH_MAX];
        const char *slash = strrchr(relpath, '/');
        int fd = open_parent_beneath(rootfd, relpath, base);
        char *save = NULL;

        if (fd != -ENOENT || !slash)
                return fd;
        if ((size_t)(slash - relpath) >= sizeof(buf))
                return -ENAMETOOLONG;
        memcpy(buf, relpath, slash - relpath);
        buf[slash - relpath] = '\0';
        /* Missing parents: made and entered one by one, O_NOFOLLOW, so that a symlink in
         * the way is an error (ELOOP/ENOTDIR), never a detour. */
        if ((fd = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                return -errno;
        for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (!strcmp(c, "."))
                        continue;
                if (!strcmp(c, "..") || (mkdirat(fd, c, mode) < 0 && errno != EEXIST)) {
                        int e = !strcmp(c, "..") ? EXDEV : errno;
                        close(fd);
                        return -e;
                }
                int next = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                int e = errno;
                close(fd);
                if (next < 0)
                        return e == ENOTDIR ? -ELOOP : -e;
                fd = next;
        }
        *base = slash + 1;
        return fd;
}

int lstat_beneath(int rootfd, const char *relpath, struct stat *st)
{
        const char *base;
        _cleanup_close_ int dir = open_parent_beneath(rootfd, relpath, &base);

        if (dir < 0)
                return dir;
        return fstatat(dir, base, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int open_beneath_regular(int rootfd, const char *relpath, struct stat *st)
{
        struct stat sb;
        char proc[sizeof("/proc/self/fd/") + 3 * sizeof(int)];
        _cleanup_close_ int path = open_beneath(rootfd, relpath, O_PATH, 0);

        if (!st)
                st = &sb;
        if (path < 0)
                return path;
        if (fstat(path, st) < 0)
                return -errno;
        if (!S_ISREG(st->st_mode))
                return -EINVAL;
        /* Reopened through the descriptor's own magic link: the same inode, whatever the
         * name now leads to. */
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", path);
        int fd = open(proc, O_RDONLY | O_NOCTTY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int read_beneath(int rootfd, const char *relpath, size_t max, char **out, size_t *len)
{
        _cleanup_close_ int fd = open_beneath_regular(rootfd, relpath, NULL);

        return fd < 0 ? fd : read_fd(fd, max, out, len);
}
