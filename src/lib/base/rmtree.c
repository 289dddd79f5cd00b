/* Removing trees. */
#define _GNU_SOURCE
#include "base/rmtree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Remove NAME in DIRFD, of type TYPE (a d_type; DT_UNKNOWN: look): 0 when it is gone, 1
 * with *sub open on it when it is a directory that still holds something, or -errno. */
static int rm_one(int dirfd, const char *name, unsigned char type, int *sub)
{
        struct stat st;

        if (type == DT_UNKNOWN) {
                if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return errno == ENOENT ? 0 : -errno;
                type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
        }
        int flag = type == DT_DIR ? AT_REMOVEDIR : 0;
        int r = unlinkat(dirfd, name, flag);
        if (r < 0 && errno == EACCES && fchmod(dirfd, 0700) == 0) /* a program made it read-only */
                r = unlinkat(dirfd, name, flag);
        if (r == 0 || errno == ENOENT)
                return 0;
        if (!flag || (errno != ENOTEMPTY && errno != EEXIST))
                return -errno;
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == EACCES) {
                /* overlay leaves work/work with mode 000; we own it, so make it readable. */
                if (fchmodat(dirfd, name, 0700, 0) == 0)
                        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        *sub = fd;
        return 1;
}

int rm_rf_at(int dirfd, const char *name)
{
        int fd, r = rm_one(dirfd, name, DT_UNKNOWN, &fd);

        if (r <= 0)
                return r;
        r = rm_children(fd);
        close(fd);
        if (r < 0)
                return r;
        return unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}

/* Depth first without recursion, reading with getdents64 into a buffer on the stack: no
 * allocation and a bounded stack, so a thread may run it while another clone()s (the trash
 * sweeper, txn/sweep.c), and a program that nested directories a million deep cannot make it
 * overflow.  The first RM_KEEP levels keep their descriptor and the position to read on
 * from (the directory just emptied, which then goes); deeper ones are reopened through ".."
 * and read again from the start. */
#define RM_KEEP 128
int rm_children(int root)
{
        int fds[RM_KEEP], depth = 0, r = 0;
        off_t resume[RM_KEEP], start = 0;
        char buf[1024] __attribute__((aligned(8)));
        int cur = fcntl(root, F_DUPFD_CLOEXEC, 0);

        if (cur < 0)
                return -errno;
        for (;;) {
                off_t pos = start;
                ssize_t n = 0;
                int sub = -1;

                if (lseek(cur, start, SEEK_SET) < 0) {
                        r = -errno;
                        break;
                }
                while (sub < 0 && (n = getdents64(cur, buf, sizeof(buf))) > 0)
                        for (ssize_t off = 0; off < n && sub < 0;) {
                                struct dirent64 *de = (struct dirent64 *)(buf + off);
                                off_t here = pos;
                                off += de->d_reclen;
                                pos = de->d_off;
                                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                                        continue;
                                int k = rm_one(cur, de->d_name, de->d_type, &sub);
                                if (k < 0) {
                                        r = k;
                                        goto out;
                                }
                                if (sub >= 0 && depth < RM_KEEP)
                                        fds[depth] = cur, resume[depth] = here;
                                else if (sub >= 0)
                                        close(cur);
                        }
                if (sub >= 0) {
                        depth++;
                        cur = sub;
                        start = 0;
                        continue;
                }
                if (n < 0) {
                        r = -errno;
                        break;
                }
                if (depth == 0)
                        break; /* root is empty */
                depth--;
                if (depth < RM_KEEP) {
                        close(cur);
                        cur = fds[depth];
                        start = resume[depth];
                } else {
                        int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        close(cur);
                        cur = up;
                        start = 0;
                        if (cur < 0) {
                                r = -errno;
                                break;
                        }
                }
        }
out:
        if (cur >= 0)
                close(cur);
        for (int i = 0; i < depth && i < RM_KEEP; i++)
                close(fds[i]);
        return r;
}
