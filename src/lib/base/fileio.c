/* Files: whole reads, atomic writes, comparisons, directories. */
#define _GNU_SOURCE
#include "base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/mem.h"

DIR *dir_stream(int dirfd)
{
        int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

        if (!d && fd >= 0) {
                int e = errno;
                close(fd);
                errno = e;
        }
        if (d)
                rewinddir(d); /* the duplicate shares the original's position */
        return d;
}

int mkdir_p_at(int dirfd, const char *relpath, mode_t mode)
{
        char buf[PATH_MAX];

        if (strlen(relpath) >= sizeof(buf))
                return -ENAMETOOLONG;
        /* Usually all there, or all but the last: one call instead of one per component. */
        if (*relpath && (mkdirat(dirfd, relpath, mode) == 0 || errno == EEXIST))
                return 0;
        strcpy(buf, relpath);
        for (char *p = buf;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char c = *p;
                *p = '\0';
                if (*buf && mkdirat(dirfd, buf, mode) < 0 && errno != EEXIST)
                        return -errno;
                *p = c;
                if (!c)
                        break;
        }
        return 0;
}

int mkdir_p(const char *path, mode_t mode)
{
        return mkdir_p_at(AT_FDCWD, path, mode);
}

int fsync_dirfd_at(int dirfd, const char *relpath)
{
        _cleanup_close_ int fd = openat(dirfd, *relpath ? relpath : ".",
                                        O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return fsync(fd) < 0 ? -errno : 0;
}

static int write_all(int fd, const void *data, size_t len)
{
        const char *p = data;
        while (len) {
                ssize_t w = write(fd, p, len);
                if (w < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += w;
                len -= (size_t)w;
        }
        return 0;
}

int write_file_atomic_at(int dirfd, const char *name, const void *data, size_t len, bool durable)
{
        char tmp[NAME_MAX + 1];
        int r;

        if (snprintf(tmp, sizeof(tmp), ".%s.tmp", name) >= (int)sizeof(tmp))
                return -ENAMETOOLONG;
        _cleanup_close_ int fd =
                openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        r = write_all(fd, data, len);
        if (r == 0 && durable && fsync(fd) < 0)
                r = -errno;
        if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
                r = -errno;
        if (r < 0) {
                unlinkat(dirfd, tmp, 0);
                return r;
        }
        return durable ? fsync_dirfd_at(dirfd, ".") : 0;
}

int read_file_at(int dirfd, const char *name, size_t max, char **out, size_t *len)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

        return fd < 0 ? -errno : read_fd(fd, max, out, len);
}

int read_fd(int fd, size_t max, char **out, size_t *len)
{
        _cleanup_free_ char *buf = NULL;
        size_t n = 0, cap = 0;

        for (;;) {
                if (n + 4096 + 1 > cap) {
                        cap = cap ? cap * 2 : 8192;
                        buf = xrealloc(buf, cap);
                }
                ssize_t r = read(fd, buf + n, cap - n - 1);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (r == 0)
                        break;
                n += (size_t)r;
                if (n > max)
                        return -EFBIG;
        }
        if (!buf)
                buf = xcalloc(1, 1);
        buf[n] = '\0';
        if (len)
                *len = n;
        *out = TAKE_PTR(buf);
        return 0;
}

static ssize_t read_full(int fd, char *buf, size_t len)
{
        size_t n = 0;
        while (n < len) {
                ssize_t r = read(fd, buf + n, len - n);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        break;
                n += (size_t)r;
        }
        return (ssize_t)n;
}

int files_equal_at(int dirfd_a, const char *a, int dirfd_b, const char *b)
{
        _cleanup_close_ int fa = openat(dirfd_a, a, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int fb = openat(dirfd_b, b, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat sa, sb;
        enum { CHUNK = 65536 };
        _cleanup_free_ char *ba = NULL, *bb = NULL;

        if (fa < 0 || fb < 0)
                return -errno;
        if (fstat(fa, &sa) < 0 || fstat(fb, &sb) < 0)
                return -errno;
        if (sa.st_size != sb.st_size)
                return 0;
        ba = xmalloc(CHUNK);
        bb = xmalloc(CHUNK);
        for (;;) {
                ssize_t ra = read_full(fa, ba, CHUNK);
                ssize_t rb = read_full(fb, bb, CHUNK);
                if (ra < 0 || rb < 0)
                        return (int)(ra < 0 ? ra : rb);
                if (ra != rb || memcmp(ba, bb, (size_t)ra) != 0)
                        return 0;
                if (ra == 0)
                        return 1;
        }
}
