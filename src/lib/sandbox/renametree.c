/* rename_complete(): a directory rename that an overlay without redirects refuses, made by
 * copying the tree up under a hidden name and renaming the copy into place (renametree.h
 * says how and why).  Runs in rename.c's helper, inside the sandbox, with the program's
 * privileges: every path here is the program's and every step is one the program could
 * take itself; no symlink is followed below the names the kernel resolved for the call.
 */
#define _GNU_SOURCE
#include "sandbox/renametree.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <linux/limits.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "base/mem.h"
#include "base/random.h"
#include "base/rmtree.h"
#include "base/str.h"

#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif

/* One end of the rename: its directory (opened as the kernel resolved it) and its name. */
struct end {
        int dirfd;
        char name[NAME_MAX + 1];
};

static void end_close(struct end *e)
{
        closep(&e->dirfd);
}

/* Split path (relative to dfd) into its directory, opened, and its last name.  Trailing
 * slashes go (a rename of "src/" is one of the directory src).  -1 when it has no name a
 * directory could be moved by ("/", ".", ".."): the kernel's EXDEV stands then. */
static int split(int dfd, const char *path, struct end *e)
{
        char dir[PATH_MAX];
        size_t len = strlen(path), b;

        e->dirfd = -1;
        while (len > 1 && path[len - 1] == '/')
                len--;
        for (b = len; b > 0 && path[b - 1] != '/'; b--)
                ;
        if (len - b == 0 || len - b > NAME_MAX || b >= sizeof(dir))
                return -1;
        memcpy(e->name, path + b, len - b);
        e->name[len - b] = '\0';
        if (!strcmp(e->name, ".") || !strcmp(e->name, ".."))
                return -1;
        memcpy(dir, path, b);
        dir[b] = '\0';
        e->dirfd = openat(dfd, b ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        return e->dirfd < 0 ? -1 : 0;
}

/* Both directories on one overlay mount: only then is the kernel's EXDEV the overlay's
 * own (a rename between file systems or mounts fails on the host too). */
static bool same_overlay(int a, int b)
{
        struct statx xa, xb;
        struct statfs fs;

        return statx(a, "", AT_EMPTY_PATH, STATX_MNT_ID, &xa) == 0 &&
               statx(b, "", AT_EMPTY_PATH, STATX_MNT_ID, &xb) == 0 && (xa.stx_mask & STATX_MNT_ID) &&
               (xb.stx_mask & STATX_MNT_ID) && xa.stx_mnt_id == xb.stx_mnt_id && fstatfs(a, &fs) == 0 &&
               fs.f_type == OVERLAYFS_SUPER_MAGIC;
}

/* The mount fd is on (its id in *id): 0, or -1. */
static int mount_of(int fd, uint64_t *id)
{
        struct statx x;

        if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &x) < 0 || !(x.stx_mask & STATX_MNT_ID))
                return -1;
        *id = x.stx_mnt_id;
        return 0;
}

/* ---- hard links among the tree's files ---- */

/* The first name (below the copy's top) each multiply-linked file got in the copy: its
 * other names are linked to that one.  Keyed by the inode the old name showed, which the
 * overlay keeps until the file is copied up. */
struct link {
        dev_t dev;
        ino_t ino;
        char *path;
};
struct links {
        struct link *t;
        size_t n, cap; /* cap: a power of two, or 0 */
};

static size_t link_slot(const struct links *l, dev_t dev, ino_t ino)
{
        size_t h = ((size_t)ino * 0x9e3779b97f4a7c15ULL) ^ (size_t)dev;
        for (size_t i = h & (l->cap - 1);; i = (i + 1) & (l->cap - 1))
                if (!l->t[i].path || (l->t[i].dev == dev && l->t[i].ino == ino))
                        return i;
}

static const char *links_find(const struct links *l, const struct stat *st)
{
        return l->cap ? l->t[link_slot(l, st->st_dev, st->st_ino)].path : NULL;
}

static void links_add(struct links *l, const struct stat *st, const char *path)
{
        if (2 * (l->n + 1) > l->cap) {
                struct links g = {.cap = l->cap ? 2 * l->cap : 64};
                g.t = xcalloc(g.cap, sizeof(*g.t));
                for (size_t i = 0; i < l->cap; i++)
                        if (l->t[i].path)
                                g.t[link_slot(&g, l->t[i].dev, l->t[i].ino)] = l->t[i];
                g.n = l->n;
                free(l->t);
                *l = g;
        }
        struct link *s = &l->t[link_slot(l, st->st_dev, st->st_ino)];
        *s = (struct link){.dev = st->st_dev, .ino = st->st_ino, .path = xstrdup(path)};
        l->n++;
}

static void links_free(struct links *l)
{
        for (size_t i = 0; i < l->cap; i++)
                free(l->t[i].path);
        free(l->t);
}

/* ---- the copy ---- */

/* A source directory we gave ourselves rwx on (we own it) to copy and then remove it. */
struct opened {
        char *path; /* below the source's directory */
        mode_t mode;
};

struct copy {
        int top;          /* the copy's top directory (the temporary name) */
        int src_dirfd;    /* the source's directory */
        uint64_t mnt_id;  /* the source's mount: the overlay */
        uid_t uid;
        size_t entries;
        struct links links;
        char rel[PATH_MAX]; /* the directory being copied, below the copy's top ("" at the top) */
        char src_rel[PATH_MAX]; /* the same directory below the source's directory */
        struct opened *opened;
        size_t nopened;
};

/* What a failed step makes of the whole call: out of space is the program's to hear;
 * anything else means the move cannot be made faithfully, and the kernel's EXDEV stands. */
static int fail(int e)
{
        return e == ENOSPC || e == EDQUOT ? e : EXDEV;
}

static int push(char *buf, size_t *saved, const char *name)
{
        size_t len = strlen(buf);
        *saved = len;
        int n = snprintf(buf + len, PATH_MAX - len, "%s%s", len ? "/" : "", name);
        if (n < 0 || (size_t)n >= PATH_MAX - len) {
                buf[len] = '\0';
                return EXDEV;
        }
        return 0;
}

/* Make the source directory name (in dirfd, stat st) readable, writable and searchable by
 * us: the copy reads it and the removal empties it.  Only a directory of our own: one we
 * could not chown to its owner in the copy is refused before. */
static int open_up(struct copy *c, int dirfd, const char *name, const struct stat *st)
{
        if ((st->st_mode & 0700) == 0700)
                return 0;
        if (fchmodat(dirfd, name, (st->st_mode & 07777) | 0700, AT_SYMLINK_NOFOLLOW) < 0)
                return fail(errno);
        c->opened = xrealloc(c->opened, (c->nopened + 1) * sizeof(*c->opened));
        c->opened[c->nopened++] = (struct opened){.path = xstrdup(c->src_rel), .mode = st->st_mode & 07777};
        return 0;
}

/* After a failure: the source directories get their modes back. */
static void close_up(struct copy *c)
{
        for (size_t i = c->nopened; i-- > 0;)
                if (fchmodat(c->src_dirfd, c->opened[i].path, c->opened[i].mode, AT_SYMLINK_NOFOLLOW) < 0) {
                        /* gone or swapped meanwhile: the program's doing */
                }
}

static int copy_xattrs(int sfd, int dfd)
{
        ssize_t n = flistxattr(sfd, NULL, 0);
        if (n <= 0)
                return n == 0 || errno == ENOTSUP ? 0 : fail(errno);
        _cleanup_free_ char *names = xmalloc((size_t)n), *val = xmalloc(XATTR_SIZE_MAX);
        if ((n = flistxattr(sfd, names, (size_t)n)) < 0)
                return fail(errno);
        for (char *name = names; name < names + n; name += strlen(name) + 1) {
                ssize_t v = fgetxattr(sfd, name, val, XATTR_SIZE_MAX);
                if (v < 0 && errno == ENODATA)
                        continue; /* removed meanwhile */
                if (v < 0)
                        return fail(errno);
                /* A security label is the system's to give (SELinux relabels a new
                 * directory by its place); every other name must be kept. */
                if (fsetxattr(dfd, name, val, (size_t)v, 0) < 0 && !str_has_prefix(name, "security."))
                        return fail(errno);
        }
        return 0;
}

/* The copied directory dfd takes sst's xattrs, group, mode and times, in that order: a
 * POSIX ACL set before the mode keeps its mask, and nothing touches the directory after
 * its times. */
static int copy_dir_attrs(int sfd, const struct stat *sst, int dfd)
{
        struct stat dst;
        int r = copy_xattrs(sfd, dfd);
        if (r)
                return r;
        if (fstat(dfd, &dst) < 0 || (dst.st_gid != sst->st_gid && fchown(dfd, (uid_t)-1, sst->st_gid) < 0) ||
            fchmod(dfd, sst->st_mode & 07777) < 0)
                return fail(errno);
        if (fstat(dfd, &dst) < 0 || (dst.st_mode & 07777) != (sst->st_mode & 07777))
                return EXDEV; /* a setgid bit the kernel would not give us */
        struct timespec ts[2] = {sst->st_atim, sst->st_mtim};
        return futimens(dfd, ts) < 0 ? fail(errno) : 0;
}

/* A file, symlink, FIFO or socket: linked from its old name, which copies it up whole; a
 * further name of a file already linked is linked to the copy's first name. */
static int copy_entry(struct copy *c, int sfd, const char *name, const struct stat *st, int dfd)
{
        size_t saved;
        const char *first = st->st_nlink > 1 ? links_find(&c->links, st) : NULL;

        if (first)
                return linkat(c->top, first, dfd, name, 0) < 0 ? fail(errno) : 0;
        if (linkat(sfd, name, dfd, name, 0) < 0)
                return errno == ENOENT ? 0 : fail(errno); /* gone meanwhile: nothing to move */
        if (st->st_nlink > 1) {
                if (push(c->rel, &saved, name))
                        return EXDEV;
                links_add(&c->links, st, c->rel);
                c->rel[saved] = '\0';
        }
        return 0;
}

static int copy_dir(struct copy *c, int sfd, const struct stat *sst, int dfd, int depth);

/* The directory name (stat st) in sfd, copied as name in dfd. */
static int copy_subdir(struct copy *c, int sfd, const char *name, const struct stat *st, int dfd, int depth)
{
        struct stat now;
        int r;

        if (st->st_uid != c->uid)
                return EXDEV; /* its owner could not be given to the copy */
        if ((r = open_up(c, sfd, name, st)))
                return r;
        if (mkdirat(dfd, name, 0700) < 0)
                return fail(errno);
        _cleanup_close_ int s = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int d = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        uint64_t mnt;
        if (s < 0 || d < 0 || fstat(s, &now) < 0 || mount_of(s, &mnt) < 0)
                return fail(errno);
        if (now.st_uid != c->uid)
                return EXDEV; /* swapped meanwhile */
        /* A mount inside the tree is the sandbox's (a hidden path's mask): copying it would
         * copy the mask, and its mount point cannot be removed.  Files on other mounts fail
         * to link by themselves (EXDEV). */
        if (mnt != c->mnt_id)
                return EXDEV;
        return copy_dir(c, s, now.st_ino == st->st_ino ? st : &now, d, depth + 1);
}

/* Both relative paths of the copy, one level down (at name) while fn runs. */
static int copy_descend(struct copy *c, int sfd, const char *name, const struct stat *st, int dfd, int depth)
{
        size_t rel = strlen(c->rel), src_rel = strlen(c->src_rel);
        int r = push(c->rel, &rel, name);

        if (!r && !(r = push(c->src_rel, &src_rel, name)))
                r = copy_subdir(c, sfd, name, st, dfd, depth);
        c->rel[rel] = '\0';
        c->src_rel[src_rel] = '\0';
        return r;
}

static int copy_dir(struct copy *c, int sfd, const struct stat *sst, int dfd, int depth)
{
        int r = 0;

        if (depth > RENAME_MAX_DEPTH)
                return EXDEV;
        DIR *d = dir_stream(sfd);
        if (!d)
                return fail(errno);
        for (struct dirent *de; !r && (errno = 0, de = readdir(d));) {
                struct stat st;
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                if (++c->entries > RENAME_MAX_ENTRIES) {
                        r = EXDEV;
                        break;
                }
                if (fstatat(sfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = errno == ENOENT ? 0 : fail(errno); /* gone meanwhile: nothing to move */
                        continue;
                }
                r = S_ISDIR(st.st_mode) ? copy_descend(c, sfd, de->d_name, &st, dfd, depth)
                                        : copy_entry(c, sfd, de->d_name, &st, dfd);
        }
        if (!r && errno)
                r = fail(errno);
        closedir(d);
        return r ? r : copy_dir_attrs(sfd, sst, dfd);
}

/* Build the copy of the directory src (stat sst) in the empty directory tmp of dirfd.  0,
 * or an errno (then copy_abandon). */
static int copy_tree(struct copy *c, const struct end *src, const struct stat *sst, int dirfd,
                     const char *tmp)
{
        int r;

        *c = (struct copy){.top = -1, .src_dirfd = src->dirfd, .uid = geteuid()};
        snprintf(c->src_rel, sizeof(c->src_rel), "%s", src->name);
        if (sst->st_uid != c->uid)
                return EXDEV;
        if ((r = open_up(c, src->dirfd, src->name, sst)))
                return r;
        _cleanup_close_ int s =
                openat(src->dirfd, src->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        c->top = openat(dirfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s < 0 || c->top < 0 || mount_of(s, &c->mnt_id) < 0)
                return fail(errno);
        return copy_dir(c, s, sst, c->top, 0);
}

/* A copy that is not wanted after all: removed, and the source's modes given back. */
static void copy_abandon(struct copy *c, int dirfd, const char *tmp)
{
        rm_rf_at(dirfd, tmp);
        close_up(c);
}

static void copy_free(struct copy *c)
{
        closep(&c->top);
        links_free(&c->links);
        for (size_t i = 0; i < c->nopened; i++)
                free(c->opened[i].path);
        free(c->opened);
}

/* A fresh hidden directory in dirfd (its name in tmp): 0 or an errno. */
static int make_tmp(int dirfd, char tmp[NAME_MAX + 1])
{
        for (int i = 0; i < 16; i++) {
                char hex[17];
                random_hex(hex, 8);
                snprintf(tmp, NAME_MAX + 1, "%s%s", RENAME_TMP_PREFIX, hex);
                if (mkdirat(dirfd, tmp, 0700) == 0)
                        return 0;
                if (errno != EEXIST)
                        return errno;
        }
        return EEXIST;
}

/* ENOTEMPTY when the directory name in dirfd holds anything, 0 when it is empty. */
static int check_empty(int dirfd, const char *name)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno;
        DIR *d = dir_stream(fd);
        if (!d)
                return errno;
        int r = 0;
        for (struct dirent *de; !r && (de = readdir(d));)
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        r = ENOTEMPTY;
        closedir(d);
        return r;
}

/* The plain rename (flags 0 or RENAME_NOREPLACE) of the directory src: the copy goes in
 * first, the old tree out after, so that at no moment is either name missing its data. */
static int move(const struct end *src, const struct end *dst, unsigned flags)
{
        struct stat sst, dst_st;
        char tmp[NAME_MAX + 1];
        int r;

        if (fstatat(src->dirfd, src->name, &sst, AT_SYMLINK_NOFOLLOW) < 0)
                return errno;
        if (!S_ISDIR(sst.st_mode)) /* swapped since the kernel's try: ask it again */
                return renameat2(src->dirfd, src->name, dst->dirfd, dst->name, flags) < 0 ? errno : 0;
        /* What the kernel would say of the destination, said before the copy is paid for
         * (overlayfs checks a directory's emptiness only after refusing the move). */
        if (fstatat(dst->dirfd, dst->name, &dst_st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (flags & RENAME_NOREPLACE)
                        return EEXIST;
                if (!S_ISDIR(dst_st.st_mode))
                        return ENOTDIR;
                if ((r = check_empty(dst->dirfd, dst->name)))
                        return r;
        } else if (errno != ENOENT) {
                return errno;
        }
        if ((r = make_tmp(dst->dirfd, tmp)))
                return r;
        struct copy c;
        if ((r = copy_tree(&c, src, &sst, dst->dirfd, tmp)) == 0 &&
            renameat2(dst->dirfd, tmp, dst->dirfd, dst->name, flags & RENAME_NOREPLACE) < 0)
                r = errno;
        if (r)
                copy_abandon(&c, dst->dirfd, tmp);
        else /* the move is made; the old tree goes, which leaves the whiteout.  Every
              * directory in it is ours and open to us: only a concurrent change by the
              * program itself could leave some of it. */
                rm_rf_at(src->dirfd, src->name);
        copy_free(&c);
        return r;
}

/* Replace the directory e by a copy of itself of the upper layer only, which the overlay
 * can move.  The name is missing its data while the old tree is removed: this serves
 * RENAME_EXCHANGE, which cannot be had otherwise. */
static int detach(const struct end *e)
{
        struct stat st;
        char tmp[NAME_MAX + 1];
        int r;

        if (fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno;
        if ((r = make_tmp(e->dirfd, tmp)))
                return r;
        struct copy c;
        if ((r = copy_tree(&c, e, &st, e->dirfd, tmp))) {
                copy_abandon(&c, e->dirfd, tmp);
        } else if (rm_rf_at(e->dirfd, e->name) < 0) {
                r = EXDEV; /* changed meanwhile by the program: the copy stays, nothing is lost */
        } else if (renameat2(e->dirfd, tmp, e->dirfd, e->name, RENAME_NOREPLACE) < 0) {
                r = errno;
        }
        copy_free(&c);
        return r;
}

static bool is_dir_at(const struct end *e)
{
        struct stat st;
        return fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

static int exchange(int olddfd, const char *old, int newdfd, const char *new, const struct end *a,
                    const struct end *b)
{
        int r;

        if (is_dir_at(a)) {
                if ((r = detach(a)))
                        return r;
                if (renameat2(olddfd, old, newdfd, new, RENAME_EXCHANGE) == 0)
                        return 0;
                if (errno != EXDEV)
                        return errno;
        }
        if (is_dir_at(b) && (r = detach(b)))
                return r;
        return renameat2(olddfd, old, newdfd, new, RENAME_EXCHANGE) < 0 ? errno : 0;
}

int rename_complete(int olddfd, const char *old, int newdfd, const char *new, unsigned flags)
{
        struct end src = {.dirfd = -1}, dst = {.dirfd = -1};
        int r;

        if (renameat2(olddfd, old, newdfd, new, flags) == 0)
                return 0;
        if (errno != EXDEV || (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE)))
                return errno;
        if (split(olddfd, old, &src) < 0 || split(newdfd, new, &dst) < 0 ||
            !same_overlay(src.dirfd, dst.dirfd))
                r = EXDEV;
        else if (flags & RENAME_EXCHANGE)
                r = exchange(olddfd, old, newdfd, new, &src, &dst);
        else
                r = move(&src, &dst, flags);
        end_close(&src);
        end_close(&dst);
        return r;
}
