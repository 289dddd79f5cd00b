/* rename_complete() on a real overlay mounted as the sandbox mounts it (userxattr, so no
 * redirects): a directory of the lower layer moved with its modes, times, xattrs, hard
 * links, symlinks, FIFOs and sockets; the kernel's own answers for what it refuses
 * (ENOTEMPTY, EEXIST, ENOTDIR, EINVAL); RENAME_NOREPLACE and RENAME_EXCHANGE; and the
 * upper layer it leaves, which is what the commit reads (a whiteout for the old name, a
 * directory for the new).  Runs as root and as an unprivileged user (as-user). */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>

#include "ovl_helper.h"
#include "base/macros.h"
#include "sandbox/renametree.h"
#include "tap.h"

#define CHK_IS(expr, want)                                                                   \
        do {                                                                                 \
                int got_ = (expr);                                                           \
                if (got_ != (want)) {                                                        \
                        fprintf(stderr, "# %s: got %d (%s), want %d\n", #expr, got_,         \
                                got_ > 0 ? strerror(got_) : "-", (want));                    \
                        _exit(1);                                                            \
                }                                                                            \
        } while (0)

static struct timespec t2001 = {.tv_sec = 978307200}, t2002 = {.tv_sec = 1009843200},
                       t2003 = {.tv_sec = 1041379200};

static void put_mode_time(const char *path, mode_t mode, const struct timespec *t)
{
        struct timespec ts[2] = {*t, *t};
        if (chmod(path, mode) < 0 || utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) < 0)
                abort();
}

static void make_socket(const char *path)
{
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (strlen(path) >= sizeof(a.sun_path))
                abort();
        memcpy(a.sun_path, path, strlen(path) + 1);
        if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
                abort();
        close(fd);
}

/* The lower layer: the tree to move and its neighbours. */
static void fill_lower(const char *L)
{
        char p[PATH_MAX];
#define AT(rel) (snprintf(p, sizeof(p), "%s/%s", L, rel), p)
        static const char *const dirs[] = {"src", "src/sub", "src/sub/deep", "src/ro", "empty", "full",
                                           "d2",  "d3",      "d4",           "d5",     "d6",    "n",
                                           "n/inner", "d7"};
        for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
                if (mkdir(AT(dirs[i]), 0755) < 0)
                        abort();
        if (ovl_put(AT("src/a"), "alpha\n") || ovl_put(AT("src/sub/b"), "beta\n") ||
            ovl_put(AT("src/sub/deep/c"), "gamma\n") || ovl_put(AT("src/ro/r"), "ro\n") ||
            ovl_put(AT("full/x"), "x\n") || ovl_put(AT("d2/two"), "2\n") || ovl_put(AT("d3/three"), "3\n") ||
            ovl_put(AT("d4/four"), "4\n") || ovl_put(AT("d5/five"), "5\n") || ovl_put(AT("d6/six"), "6\n") ||
            ovl_put(AT("file"), "f\n") || ovl_put(AT("n/inner/i"), "i\n") || ovl_put(AT("n/top"), "t\n") ||
            ovl_put(AT("d7/seven"), "7\n"))
                abort();
        char a[PATH_MAX];
        snprintf(a, sizeof(a), "%s/src/a", L);
        if (link(a, AT("src/hl")) < 0 || link(a, AT("src/sub/hl2")) < 0 || symlink("a", AT("src/sym")) < 0 ||
            mkfifo(AT("src/fifo"), 0600) < 0)
                abort();
        make_socket(AT("src/sock"));
        if (setxattr(AT("src/a"), "user.file", "f1", 2, 0) < 0 ||
            setxattr(AT("src"), "user.dir", "d1", 2, 0) < 0 ||
            setxattr(AT("src/sub"), "user.sub", "s1", 2, 0) < 0)
                abort();
        put_mode_time(AT("src/a"), 0640, &t2002);
        put_mode_time(AT("src/sub/deep"), 0700, &t2003);
        put_mode_time(AT("src/sub"), 0555, &t2003); /* read-only: the move must still empty it */
        put_mode_time(AT("src/ro"), 0500, &t2002);
        put_mode_time(AT("src"), 02750, &t2001);
#undef AT
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
        return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

static bool xattr_is(const char *path, const char *name, const char *want)
{
        char v[64];
        ssize_t n = lgetxattr(path, name, v, sizeof(v) - 1);
        return n >= 0 && (v[n] = '\0', !strcmp(v, want));
}

static void no_temporary_left(const char *dir)
{
        DIR *d = opendir(dir);
        CHK(d != NULL);
        for (struct dirent *de; (de = readdir(d));)
                CHK(strncmp(de->d_name, RENAME_TMP_PREFIX, strlen(RENAME_TMP_PREFIX)) != 0);
        closedir(d);
}

/* The kernel alone cannot: the premise of it all. */
static void sc_premise(void)
{
        CHK(renameat2(AT_FDCWD, "src", AT_FDCWD, "lib", 0) < 0 && errno == EXDEV);
}

static void sc_move(void)
{
        struct stat st, a, hl, hl2;
        char t[16];

        CHK_IS(rename_complete(AT_FDCWD, "src", AT_FDCWD, "lib", 0), 0);
        CHK(lstat("src", &st) < 0 && errno == ENOENT);
        CHK(lstat("lib", &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 02750);
        CHK(same_time(&st.st_mtim, &t2001) && xattr_is("lib", "user.dir", "d1"));
        CHK(lstat("lib/a", &a) == 0 && (a.st_mode & 07777) == 0640 && same_time(&a.st_mtim, &t2002));
        CHK(xattr_is("lib/a", "user.file", "f1"));
        CHK(lstat("lib/hl", &hl) == 0 && lstat("lib/sub/hl2", &hl2) == 0);
        CHK(a.st_ino == hl.st_ino && a.st_ino == hl2.st_ino && a.st_nlink == 3); /* hard links kept */
        CHK(readlink("lib/sym", t, sizeof(t)) == 1 && t[0] == 'a');
        CHK(lstat("lib/fifo", &st) == 0 && S_ISFIFO(st.st_mode) && (st.st_mode & 0777) == 0600);
        CHK(lstat("lib/sock", &st) == 0 && S_ISSOCK(st.st_mode));
        CHK(lstat("lib/sub", &st) == 0 && (st.st_mode & 07777) == 0555 && same_time(&st.st_mtim, &t2003));
        CHK(xattr_is("lib/sub", "user.sub", "s1"));
        CHK(lstat("lib/sub/deep", &st) == 0 && (st.st_mode & 07777) == 0700);
        CHK(same_time(&st.st_mtim, &t2003));
        CHK(lstat("lib/ro", &st) == 0 && (st.st_mode & 07777) == 0500);
        FILE *f = fopen("lib/sub/deep/c", "re");
        char line[16] = "";
        CHK(f && fgets(line, sizeof(line), f) && !strcmp(line, "gamma\n"));
        fclose(f);
        no_temporary_left(".");
}

static void sc_errors(void)
{
        struct stat st;

        CHK_IS(rename_complete(AT_FDCWD, "d3", AT_FDCWD, "full", 0), ENOTEMPTY);
        CHK_IS(rename_complete(AT_FDCWD, "d3", AT_FDCWD, "file", 0), ENOTDIR);
        CHK_IS(rename_complete(AT_FDCWD, "d3", AT_FDCWD, "d4", RENAME_NOREPLACE), EEXIST);
        CHK_IS(rename_complete(AT_FDCWD, "d7", AT_FDCWD, "d7/x", 0), EINVAL);
        CHK_IS(rename_complete(AT_FDCWD, "missing", AT_FDCWD, "m2", 0), ENOENT);
        CHK_IS(rename_complete(AT_FDCWD, "d3", AT_FDCWD, "no/such/dir", 0), ENOENT);
        /* nothing moved, nothing left behind */
        CHK(lstat("d3/three", &st) == 0 && lstat("full/x", &st) == 0 && lstat("d7/seven", &st) == 0);
        no_temporary_left(".");
}

static void sc_replace(void)
{
        struct stat st;

        /* over an empty directory of the lower layer, with and without a trailing slash */
        CHK_IS(rename_complete(AT_FDCWD, "d2/", AT_FDCWD, "empty", 0), 0);
        CHK(lstat("empty/two", &st) == 0 && lstat("d2", &st) < 0);
        CHK_IS(rename_complete(AT_FDCWD, "d3", AT_FDCWD, "d3new", RENAME_NOREPLACE), 0);
        CHK(lstat("d3new/three", &st) == 0 && lstat("d3", &st) < 0);
        /* relative to directory descriptors */
        int fd = open("n", O_PATH | O_DIRECTORY | O_CLOEXEC),
            root = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHK(fd >= 0 && root >= 0);
        CHK_IS(rename_complete(fd, "inner", root, "inner2", 0), 0); /* nested: out of n */
        CHK_IS(rename_complete(root, "n", fd, "../n2", 0), 0);      /* then n itself */
        CHK(lstat("inner2/i", &st) == 0 && lstat("n2/top", &st) == 0 && lstat("n2/inner", &st) < 0);
        close(fd);
        close(root);
        no_temporary_left(".");
}

static void sc_exchange(void)
{
        struct stat st;

        CHK_IS(rename_complete(AT_FDCWD, "d4", AT_FDCWD, "d5", RENAME_EXCHANGE), 0);
        CHK(lstat("d4/five", &st) == 0 && lstat("d5/four", &st) == 0);
        CHK_IS(rename_complete(AT_FDCWD, "d6", AT_FDCWD, "file", RENAME_EXCHANGE), 0);
        CHK(lstat("file/six", &st) == 0 && lstat("d6", &st) == 0 && S_ISREG(st.st_mode));
        CHK_IS(rename_complete(AT_FDCWD, "d7", AT_FDCWD, "nothing", RENAME_EXCHANGE), ENOENT);
        no_temporary_left(".");
}

/* What the changeset reads: the old name a whiteout, the new one a directory of the upper
 * layer holding every entry. */
static void check_upper(const struct ovl *o)
{
        struct stat st;
        ok(fstatat(o->upper_fd, "src", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR(st.st_mode) &&
                   st.st_rdev == makedev(0, 0),
           "the upper layer has a whiteout for the old name");
        ok(fstatat(o->upper_fd, "lib", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
                   fstatat(o->upper_fd, "lib/sub/deep/c", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                   S_ISREG(st.st_mode),
           "and a directory for the new one, whole");
        ok(fstatat(o->upper_fd, "d2", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR(st.st_mode) &&
                   fstatat(o->upper_fd, "empty/two", &st, AT_SYMLINK_NOFOLLOW) == 0,
           "a directory renamed over an empty one replaces it");
        ok(fstatat(o->lower_fd, "src/sub/deep/c", &st, AT_SYMLINK_NOFOLLOW) == 0,
           "the lower layer is untouched");
}

int main(void)
{
        struct ovl o;

        if (ovl_setup_root() < 0 || ovl_new(&o, "rn") < 0) {
                printf("Bail out! cannot make the test's overlay dirs\n");
                return 1;
        }
        fill_lower(o.lower);
        ok(ovl_run(&o, sc_premise) == 0, "the kernel refuses to move a directory of the lower layer (EXDEV)");
        ok(ovl_run(&o, sc_move) == 0, "rename_complete moves it: modes, times, xattrs, hard links, symlink, "
                                      "FIFO, socket, read-only dirs");
        ok(ovl_run(&o, sc_errors) == 0,
           "the kernel's answers: ENOTEMPTY, ENOTDIR, EEXIST (noreplace), EINVAL (into itself), ENOENT");
        ok(ovl_run(&o, sc_replace) == 0,
           "over an empty lower directory, with noreplace, nested, relative to directory descriptors");
        ok(ovl_run(&o, sc_exchange) == 0, "RENAME_EXCHANGE of two lower directories, and of one with a file");
        check_upper(&o);
        ovl_close(&o);
        ovl_cleanup_root();
        return tap_done();
}
