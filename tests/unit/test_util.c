/* rm_rf_at / rm_children (util.c): what the trash sweeper and every rollback use to remove
 * a transaction's layers, which a program shaped as it liked: wide, deep past the levels
 * whose descriptors are kept, unreadable, read-only, and with symlinks out of the tree.
 * Everything happens in a fresh directory under /var/tmp; the symlinks point at a sibling
 * "victim" directory inside it, so a removal that followed one harms only this test. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "util.h"

static int count_entries(int dirfd)
{
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;

        if (!d)
                return -1;
        while ((de = readdir(d)))
                n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
        closedir(d);
        return n;
}

static bool put(int dirfd, const char *name)
{
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        bool ok = fd >= 0 && write(fd, "x\n", 2) == 2;
        if (fd >= 0)
                close(fd);
        return ok;
}

/* A directory chain n deep beneath dirfd/name, a file at each level. */
static bool deep(int dirfd, const char *name, int n)
{
        int fd = -1;
        bool ok = mkdirat(dirfd, name, 0755) == 0 && (fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY)) >= 0;

        for (int i = 0; ok && i < n; i++) {
                ok = put(fd, "f") && mkdirat(fd, "d", 0755) == 0;
                int next = ok ? openat(fd, "d", O_RDONLY | O_DIRECTORY) : -1;
                close(fd);
                fd = next;
                ok = ok && fd >= 0;
        }
        if (fd >= 0)
                close(fd);
        return ok;
}

static bool make_tree(int top)
{
        char name[32];
        int t, w, u, r;
        bool ok = mkdirat(top, "t", 0755) == 0 && (t = openat(top, "t", O_RDONLY | O_DIRECTORY)) >= 0;

        if (!ok)
                return false;
        ok = ok && mkdirat(t, "wide", 0755) == 0 && (w = openat(t, "wide", O_RDONLY | O_DIRECTORY)) >= 0;
        for (int i = 0; ok && i < 300; i++) {
                snprintf(name, sizeof(name), "d%d", i);
                int d;
                ok = mkdirat(w, name, 0755) == 0 && (d = openat(w, name, O_RDONLY | O_DIRECTORY)) >= 0;
                ok = ok && put(d, "a") && put(d, "b");
                if (ok)
                        close(d);
                snprintf(name, sizeof(name), "f%d", i);
                ok = ok && put(w, name);
        }
        ok = ok && deep(t, "deep", 1000);
        /* As overlay leaves work/work: mode 000 around a directory. */
        ok = ok && mkdirat(t, "unreadable", 0755) == 0 && (u = openat(t, "unreadable", O_RDONLY | O_DIRECTORY)) >= 0 &&
             mkdirat(u, "work", 0755) == 0 && put(u, "dirty") && fchmod(u, 0) == 0;
        ok = ok && mkdirat(t, "readonly", 0755) == 0 && (r = openat(t, "readonly", O_RDONLY | O_DIRECTORY)) >= 0 &&
             put(r, "kept") && fchmod(r, 0555) == 0;
        ok = ok && symlinkat("../victim", t, "to-victim") == 0 && symlinkat("../victim/file", t, "to-file") == 0;
        return ok;
}

int main(void)
{
        char dir[] = "/var/tmp/txbox-test-util.XXXXXX";

        if (!mkdtemp(dir)) {
                printf("1..0 # SKIP cannot make a temp dir\n");
                return 0;
        }
        int top = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ok(top >= 0 && mkdirat(top, "victim", 0755) == 0 && put(openat(top, "victim", O_RDONLY | O_DIRECTORY), "file"),
           "a victim directory outside the tree");
        ok(make_tree(top), "a tree 300 wide, 1,000 deep, with unreadable and read-only directories and symlinks out");

        is_int(rm_rf_at(top, "t"), 0, "rm_rf_at removes it");
        struct stat st;
        ok(fstatat(top, "t", &st, AT_SYMLINK_NOFOLLOW) < 0, "the tree is gone");
        ok(fstatat(top, "victim/file", &st, 0) == 0, "what its symlinks pointed at is untouched");
        is_int(rm_rf_at(top, "t"), 0, "removing what is not there is no error");

        int keep = -1;
        ok(mkdirat(top, "keep", 0700) == 0 && (keep = openat(top, "keep", O_RDONLY | O_DIRECTORY)) >= 0 &&
           put(keep, "one") && deep(keep, "two", 200) && symlinkat("../victim", keep, "three") == 0,
           "a directory with a file, a 200-deep chain and a symlink");
        is_int(rm_children(keep), 0, "rm_children empties it");
        is_int(count_entries(keep), 0, "nothing is left in it");
        ok(fstatat(top, "keep", &st, 0) == 0 && S_ISDIR(st.st_mode), "and it stays");
        ok(fstatat(top, "victim/file", &st, 0) == 0, "the victim is still untouched");
        is_int(rm_children(keep), 0, "emptying an empty directory succeeds");

        close(keep);
        close(top);
        tap_rmtree(dir);
        return tap_done();
}
