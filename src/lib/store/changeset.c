/* The changeset: compare a transaction's upper layer with the live workspace (changeset_build).
 * Making the layer fit to be renamed into the workspace is in changeset_prepare.c; the walk and the helpers both use are declared in changeset_int.h.
 *
 * Nothing here follows a symlink: directories are opened with O_NOFOLLOW, entries are
 * examined with AT_SYMLINK_NOFOLLOW, and xattrs are reached as /proc/self/fd/<dir>/<name>
 * with the l*xattr calls, which act on the entry itself.  Going by path rather than through
 * an fd of the entry means no open(2) of files the sandbox made (no fifo can block us) and
 * listing xattrs needs no permission on the entry. */
#define _GNU_SOURCE
#include "store/changeset.h"
#include "store/changeset_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/error.h"
#include "base/fileio.h"
#include "base/mem.h"
#include "base/strv.h"
#include "txbox.h"

static const char *const side_name[] = { [UPPER] = "the upper layer", [LIVE] = "the workspace" };

/* What an upper entry is to the changeset. */
enum kind { K_WHITEOUT = 1, K_SPECIAL, K_DIR, K_FILE };

/* One name in an upper directory and in the matching live directory. */
struct pair {
        int ufd, lfd; /* parent directories; lfd < 0 when live has no directory there */
        const char *name;
        const char *path; /* relative to the workspace */
        unsigned depth;   /* components in path */
        struct stat ust, lst;
        bool has_upper, has_live;
};

static int report_tree(struct walk *w, int parentfd, const char *name, const char *path,
                       unsigned depth, enum side s, mode_t mode);
static int compare_dirs(struct walk *w, const struct pair *p);
static int walk_dir(struct walk *w, int ufd, int lfd, const char *path, unsigned depth);

/* ---- small helpers ---- */

int cs_fail(struct walk *w, int code, const char *what, const char *path, enum side s)
{
        return tx_err(w->err, code, "%s \"%s\" in %s: %s", what, *path ? path : ".",
                      side_name[s], strerror(code));
}

void cs_strvec_clearp(struct strvec *sv) { strvec_clear(sv); }

static void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* /proc/self/fd/<dirfd>/<name>: the magic link leads to the directory we hold, and the
 * l*xattr calls never follow the last component.  NULL when name cannot be an entry name. */
const char *cs_proc_at(struct proc_path *pp, int dirfd, const char *name)
{
        int n = snprintf(pp->s, sizeof(pp->s), "/proc/self/fd/%d/%s", dirfd, name);
        return n > 0 && (size_t)n < sizeof(pp->s) && !strchr(name, '/') ? pp->s : NULL;
}

/* Child path of parent, within the depth and length limits. */
int cs_child_path(struct walk *w, const char *parent, const char *name, unsigned depth,
                  char **out)
{
        if (depth > CS_MAX_DEPTH)
                return tx_err(w->err, ELOOP, "\"%s\" is nested more than %d directories deep",
                              parent, CS_MAX_DEPTH);
        if (strlen(parent) + 1 + strlen(name) >= PATH_MAX)
                return tx_err(w->err, ENAMETOOLONG, "path \"%s/%s\" is longer than %d bytes",
                              parent, name, PATH_MAX - 1);
        *out = *parent ? xasprintf("%s/%s", parent, name) : xstrdup(name);
        return 0;
}

/* Names in directory dirfd, sorted so that the changeset comes out the same every time.
 * Opens "." anew: a dup would share (and move) the caller's file offset. */
int cs_list_dir(struct walk *w, int dirfd, const char *path, enum side s,
                struct strvec *out)
{
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return cs_fail(w, errno, "open directory", path, s);
        _cleanup_(closedirp) DIR *d = fdopendir(fd);
        if (!d) {
                int e = errno;
                close(fd);
                return cs_fail(w, e, "read directory", path, s);
        }
        for (struct dirent *de; (errno = 0, de = readdir(d));) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                if (++w->entries > CS_MAX_ENTRIES)
                        return tx_err(w->err, E2BIG, "more than %d entries under \"%s\" in %s",
                                      CS_MAX_ENTRIES, *path ? path : ".", side_name[s]);
                strvec_push(out, xstrdup(de->d_name));
        }
        if (errno)
                return cs_fail(w, errno, "read directory", path, s);
        if (out->n > 1)
                qsort(out->v, out->n, sizeof(*out->v), cmp_str);
        return 0;
}

int cs_open_dir(struct walk *w, int dirfd, const char *name, const char *path, enum side s)
{
        int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd >= 0 ? fd : cs_fail(w, errno, "open directory", path, s);
}

/* A directory of the upper layer that the program closed (no read, write or search for its
 * owner) is opened to us while the walk is in it, and gets its mode back after: the layer
 * is ours, and its modes are what the program left (a directory that moves in whole keeps
 * exactly that mode).  Nothing is lent in the workspace itself. */
struct lent {
        int dirfd;
        const char *name;
        mode_t mode;
        bool on;
};

/* mode: the entry's, as the walk saw it (no stat of its own: this is on every run's path). */
static struct lent lend_dir(int dirfd, const char *name, mode_t mode)
{
        struct lent l = { .dirfd = dirfd, .name = name };

        if (S_ISDIR(mode) && (mode & S_IRWXU) != S_IRWXU &&
            fchmodat(dirfd, name, (mode | S_IRWXU) & 07777, 0) == 0) {
                l.mode = mode & 07777;
                l.on = true;
        }
        return l;
}

static void lend_back(struct lent *l)
{
        if (l->on && fchmodat(l->dirfd, l->name, l->mode, 0) < 0) {
                /* it stays open to its owner: the layer is ours, and prepare sets modes again */
        }
}

/* lstat of name in dirfd; a missing entry (or dirfd < 0: no directory) is not an error. */
int cs_stat_at(struct walk *w, int dirfd, const char *name, const char *path, enum side s,
               struct stat *st, bool *exists)
{
        *exists = false;
        if (dirfd < 0)
                return 0;
        if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) == 0) {
                *exists = true;
                return 0;
        }
        return errno == ENOENT ? 0 : cs_fail(w, errno, "stat", path, s);
}

/* ---- xattrs ---- */

/* NUL-separated xattr names of dirfd/name (*out NULL when there are none). */
int cs_list_xattrs(int dirfd, const char *name, char **out, size_t *len)
{
        struct proc_path pp;
        const char *p = cs_proc_at(&pp, dirfd, name);

        *out = NULL;
        *len = 0;
        if (!p)
                return -ENAMETOOLONG;
        for (;;) {
                ssize_t n = llistxattr(p, NULL, 0);
                if (n <= 0)
                        return n == 0 || errno == ENOTSUP ? 0 : -errno;
                char *buf = xmalloc((size_t)n + 1);
                ssize_t m = llistxattr(p, buf, (size_t)n);
                if (m >= 0) {
                        buf[m] = '\0';
                        *out = buf;
                        *len = (size_t)m;
                        return 0;
                }
                free(buf);
                if (errno != ERANGE) /* ERANGE: the list grew between the two calls */
                        return -errno;
        }
}

static int has_xattr(int dirfd, const char *name, const char *xname)
{
        _cleanup_free_ char *list = NULL;
        size_t len;
        int r = cs_list_xattrs(dirfd, name, &list, &len);

        for (size_t i = 0; r >= 0 && i < len; i += strlen(list + i) + 1)
                if (!strcmp(list + i, xname))
                        return 1;
        return r;
}

bool changeset_copied_up(int upper_fd, const char *path)
{
        const char *base;
        struct stat st;
        _cleanup_close_ int dir = open_parent_beneath(upper_fd, path, &base);

        /* A hard link the program made to a copied-up file carries the file's origin. */
        if (dir < 0 || fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            (!S_ISDIR(st.st_mode) && st.st_nlink != 1))
                return false;
        return has_xattr(dir, base, OVL_PREFIX "origin") > 0;
}

bool changeset_deletes(const struct changeset *cs)
{
        for (size_t i = 0; i < cs->nops; i++)
                if (cs->ops[i].kind == CS_OP_SWAP && cs->ops[i].has_old && !cs->ops[i].has_new)
                        return true;
        return false;
}

/* Overlay's markers: a char device 0/0, or an empty file with user.overlay.whiteout
 * (checked by listing, which needs no permission on the file). */
int cs_is_whiteout(int dirfd, const char *name, const struct stat *st)
{
        if (S_ISCHR(st->st_mode))
                return st->st_rdev == makedev(0, 0);
        if (!S_ISREG(st->st_mode) || st->st_size != 0)
                return 0;
        return has_xattr(dirfd, name, OVL_WHITEOUT);
}

/* Exactly user.overlay.opaque = "y", as the kernel reads it.  user.overlay.overlay.opaque is
 * the program's own xattr, escaped, and must never hide the live directory. */
static int is_opaque(int dirfd, const char *name)
{
        struct proc_path pp;
        const char *p = cs_proc_at(&pp, dirfd, name);
        char v[2];

        if (!p)
                return -ENAMETOOLONG;
        ssize_t n = lgetxattr(p, OVL_OPAQUE, v, sizeof(v));
        if (n < 0)
                return errno == ENODATA || errno == ERANGE || errno == ENOTSUP ? 0 : -errno;
        return n == 1 && v[0] == 'y';
}

/* ---- the changeset's arrays ---- */

static void add_path(struct changeset *cs, const char *path, enum txbox_change c)
{
        GROW(cs->paths, cs->npaths, cs->cap_paths);
        cs->paths[cs->npaths++] = (struct txbox_path){ .path = xstrdup(path), .change = c };
}

static struct cs_op *add_op(struct changeset *cs, const char *path, enum cs_op_kind kind)
{
        GROW(cs->ops, cs->nops, cs->cap_ops);
        struct cs_op *op = &cs->ops[cs->nops++];
        *op = (struct cs_op){ .path = xstrdup(path), .kind = kind };
        return op;
}

void changeset_add_violation(struct changeset *cs, const char *rule, const char *path,
                             const char *detail)
{
        GROW(cs->violations, cs->nviolations, cs->cap_violations);
        cs->violations[cs->nviolations++] = (struct txbox_violation){
                .rule = xstrdup_or_null(rule),
                .path = xstrdup_or_null(path),
                .detail = xstrdup_or_null(detail),
        };
}

void changeset_free(struct changeset *cs)
{
        if (!cs)
                return;
        for (size_t i = 0; i < cs->nops; i++)
                free(cs->ops[i].path);
        for (size_t i = 0; i < cs->npaths; i++)
                free(cs->paths[i].path);
        for (size_t i = 0; i < cs->nviolations; i++) {
                free(cs->violations[i].rule);
                free(cs->violations[i].path);
                free(cs->violations[i].detail);
        }
        free(cs->ops);
        free(cs->paths);
        free(cs->violations);
        strvec_clear(&cs->touched);
        memset(cs, 0, sizeof(*cs));
}

static int cmp_path(const void *a, const void *b)
{
        const struct txbox_path *x = a, *y = b;
        int c = strcmp(x->path, y->path);
        return c ? c : (int)x->change - (int)y->change;
}

/* Sort by path and drop duplicates (none are expected; the first change wins). */
static void sort_paths(struct changeset *cs)
{
        size_t out = 0;

        if (cs->npaths > 1)
                qsort(cs->paths, cs->npaths, sizeof(*cs->paths), cmp_path);
        for (size_t i = 0; i < cs->npaths; i++) {
                if (out && !strcmp(cs->paths[out - 1].path, cs->paths[i].path))
                        free(cs->paths[i].path);
                else
                        cs->paths[out++] = cs->paths[i];
        }
        cs->npaths = out;
}

/* ---- comparing ---- */

/* Classify an upper entry; records the violation for a special file. */
static int classify_upper(struct walk *w, int dirfd, const char *name, const char *path,
                          const struct stat *st)
{
        int r = cs_is_whiteout(dirfd, name, st);
        if (r < 0)
                return cs_fail(w, -r, "read the xattrs of", path, UPPER);
        if (r)
                return K_WHITEOUT;
        if (S_ISDIR(st->st_mode))
                return K_DIR;
        if (S_ISREG(st->st_mode) || S_ISLNK(st->st_mode))
                return K_FILE;
        changeset_add_violation(w->cs, "special-file", path,
                                "a fifo/socket/device cannot be committed");
        return K_SPECIAL;
}

static int stat_pair(struct walk *w, struct pair *p)
{
        int r = cs_stat_at(w, p->ufd, p->name, p->path, UPPER, &p->ust, &p->has_upper);
        return r < 0 ? r : cs_stat_at(w, p->lfd, p->name, p->path, LIVE, &p->lst, &p->has_live);
}

static int links_equal(const struct pair *p)
{
        char a[PATH_MAX], b[PATH_MAX];
        ssize_t na = readlinkat(p->ufd, p->name, a, sizeof(a));
        if (na < 0)
                return -errno;
        ssize_t nb = readlinkat(p->lfd, p->name, b, sizeof(b));
        if (nb < 0)
                return -errno;
        return na == nb && memcmp(a, b, (size_t)na) == 0;
}

/* 1 when the upper entry is the live one copied up unchanged: same type, owner, permissions
 * and content (symlink: target).  Timestamps are ignored on purpose: opening a file for
 * writing copies it up without changing it. */
static int same_entry(struct walk *w, const struct pair *p)
{
        const struct stat *u = &p->ust, *l = &p->lst;

        if (u->st_mode != l->st_mode || u->st_uid != l->st_uid || u->st_gid != l->st_gid)
                return 0;
        if (S_ISDIR(u->st_mode))
                return 1;
        int r = S_ISLNK(u->st_mode) ? links_equal(p) : files_equal_at(p->ufd, p->name, p->lfd, p->name);
        /* A file we may not read cannot be shown equal; "modified" is the safe answer.  So
         * for a live entry gone since it was listed (another commit replacing it: the
         * conflict check then speaks). */
        if (r == -EACCES || r == -ENOENT)
                return 0;
        return r < 0 ? cs_fail(w, -r, "compare", p->path, UPPER) : r;
}

static void add_swap(struct walk *w, const struct pair *p)
{
        struct cs_op *op = add_op(w->cs, p->path, CS_OP_SWAP);

        op->has_old = p->has_live;
        op->has_new = p->has_upper;
        if (p->has_live)
                op->old_mode = p->lst.st_mode;
        if (p->has_upper) {
                /* As it will be live: changeset_prepare clears setuid/setgid. */
                op->new_mode = p->ust.st_mode & ~(mode_t)(S_ISUID | S_ISGID);
                op->new_ino = p->ust.st_ino;
                op->new_size = p->ust.st_size;
                op->new_mtime_ns = (int64_t)p->ust.st_mtim.tv_sec * 1000000000 + p->ust.st_mtim.tv_nsec;
        }
}

/* Report an entry that appeared, changed or went away; a directory that appears or goes
 * away brings its whole subtree. */
static int report_change(struct walk *w, const struct pair *p)
{
        enum txbox_change c = !p->has_upper ? TXBOX_DELETED
                              : !p->has_live ? TXBOX_ADDED
                                             : TXBOX_MODIFIED;
        int r = 0;

        add_path(w->cs, p->path, c);
        if (p->has_live && S_ISDIR(p->lst.st_mode))
                r = report_tree(w, p->lfd, p->name, p->path, p->depth, LIVE, p->lst.st_mode);
        if (r >= 0 && p->has_upper && S_ISDIR(p->ust.st_mode))
                r = report_tree(w, p->ufd, p->name, p->path, p->depth, UPPER, p->ust.st_mode);
        return r;
}

/* One entry beneath a directory that appears (upper: added) or goes away (live: deleted). */
static int report_tree_entry(struct walk *w, int dirfd, const char *name, const char *parent,
                             unsigned depth, enum side s)
{
        _cleanup_free_ char *path = NULL;
        struct stat st;
        bool exists;
        int r = cs_child_path(w, parent, name, depth, &path);

        if (r >= 0)
                r = cs_stat_at(w, dirfd, name, path, s, &st, &exists);
        if (r < 0 || !exists)
                return r;
        if (s == UPPER) {
                r = classify_upper(w, dirfd, name, path, &st);
                if (r < 0 || r == K_WHITEOUT || r == K_SPECIAL)
                        return r < 0 ? r : 0;
        }
        add_path(w->cs, path, s == LIVE ? TXBOX_DELETED : TXBOX_ADDED);
        return S_ISDIR(st.st_mode) ? report_tree(w, dirfd, name, path, depth, s, st.st_mode) : 0;
}

static int report_tree(struct walk *w, int parentfd, const char *name, const char *path,
                       unsigned depth, enum side s, mode_t mode)
{
        _cleanup_(cs_strvec_clearp) struct strvec names = { 0 };
        _cleanup_(lend_back) __attribute__((unused)) struct lent l =
                s == UPPER ? lend_dir(parentfd, name, mode) : (struct lent){0};
        _cleanup_close_ int fd = cs_open_dir(w, parentfd, name, path, s);
        int r = fd < 0 ? fd : cs_list_dir(w, fd, path, s, &names);

        for (size_t i = 0; r >= 0 && i < names.n; i++)
                r = report_tree_entry(w, fd, names.v[i], path, depth + 1, s);
        return r;
}

/* Two directories at the same path: the directory itself when its permissions differ,
 * then every entry that differs. */
static int report_dirs(struct walk *w, const struct pair *p)
{
        if ((p->ust.st_mode & 07777) != (p->lst.st_mode & 07777))
                add_path(w->cs, p->path, TXBOX_MODIFIED);
        return compare_dirs(w, p);
}

/* One name of a directory that replaces a live directory whole (opaque).  Whiteouts are
 * not entries there. */
static int compare_entry(struct walk *w, int ufd, int lfd, const char *name, const char *parent,
                         unsigned depth)
{
        _cleanup_free_ char *path = NULL;
        struct pair p = { .ufd = ufd, .lfd = lfd, .name = name, .depth = depth };
        int r = cs_child_path(w, parent, name, depth, &path);

        p.path = path;
        if (r >= 0)
                r = stat_pair(w, &p);
        if (r >= 0 && p.has_upper)
                r = classify_upper(w, ufd, name, path, &p.ust);
        if (r < 0 || r == K_SPECIAL)
                return r < 0 ? r : 0;
        p.has_upper = p.has_upper && r != K_WHITEOUT;
        if (!p.has_upper && !p.has_live)
                return 0;
        if (p.has_upper && p.has_live && S_ISDIR(p.ust.st_mode) && S_ISDIR(p.lst.st_mode))
                return report_dirs(w, &p);
        r = p.has_upper && p.has_live ? same_entry(w, &p) : 0;
        return r != 0 ? (r < 0 ? r : 0) : report_change(w, &p);
}

/* Merge the sorted listings of both directories. */
static int compare_dirs(struct walk *w, const struct pair *p)
{
        _cleanup_(cs_strvec_clearp) struct strvec un = { 0 }, ln = { 0 };
        _cleanup_(lend_back) __attribute__((unused)) struct lent l =
                lend_dir(p->ufd, p->name, p->ust.st_mode);
        _cleanup_close_ int ufd = cs_open_dir(w, p->ufd, p->name, p->path, UPPER);
        _cleanup_close_ int lfd = ufd < 0 ? -1 : cs_open_dir(w, p->lfd, p->name, p->path, LIVE);
        int r = ufd < 0 ? ufd : lfd < 0 ? lfd : cs_list_dir(w, ufd, p->path, UPPER, &un);
        size_t i = 0, j = 0;

        if (r >= 0)
                r = cs_list_dir(w, lfd, p->path, LIVE, &ln);
        while (r >= 0 && (i < un.n || j < ln.n)) {
                int c = i == un.n ? 1 : j == ln.n ? -1 : strcmp(un.v[i], ln.v[j]);
                r = compare_entry(w, ufd, lfd, c <= 0 ? un.v[i] : ln.v[j], p->path, p->depth + 1);
                i += c <= 0;
                j += c >= 0;
        }
        return r;
}

/* ---- the walk of the upper layer ---- */

static int on_whiteout(struct walk *w, struct pair *p)
{
        if (!p->has_live) /* hides something live no longer has (or never had) */
                return 0;
        p->has_upper = false;
        add_swap(w, p);
        return report_change(w, p);
}

static int on_file(struct walk *w, const struct pair *p)
{
        int r = p->has_live ? same_entry(w, p) : 0;
        if (r > 0)
                strvec_push(&w->cs->touched, xstrdup(p->path));
        if (r != 0)
                return r < 0 ? r : 0;
        add_swap(w, p);
        return report_change(w, p);
}

/* A directory present on both sides and not opaque: overlay merged it.  Its mode is the one
 * attribute commit carries over; the program may drop setuid/setgid but never add them. */
static int on_merged_dir(struct walk *w, const struct pair *p)
{
        mode_t um = p->ust.st_mode & 07777, lm = p->lst.st_mode & 07777;
        mode_t nm = um & ~((mode_t)(S_ISUID | S_ISGID) & ~lm);

        if (nm != lm) {
                struct cs_op *op = add_op(w->cs, p->path, CS_OP_CHMOD);
                op->old_mode = lm;
                op->new_mode = nm;
                add_path(w->cs, p->path, TXBOX_MODIFIED);
        }
        _cleanup_close_ int ufd = cs_open_dir(w, p->ufd, p->name, p->path, UPPER);
        _cleanup_close_ int lfd = ufd < 0 ? -1 : cs_open_dir(w, p->lfd, p->name, p->path, LIVE);
        size_t before = w->cs->nops;
        if (ufd < 0 || lfd < 0)
                return ufd < 0 ? ufd : lfd;
        int r = walk_dir(w, ufd, lfd, p->path, p->depth);
        /* A live directory closed to us (no write or search) that the program opened in its
         * view, changed and closed again: the commit opens it for its moves and closes it
         * after, as its mode steps do for a changed mode (journal.c). */
        if (r >= 0 && nm == lm && (lm & (S_IWUSR | S_IXUSR)) != (S_IWUSR | S_IXUSR) && w->cs->nops > before) {
                struct cs_op *op = add_op(w->cs, p->path, CS_OP_CHMOD);
                op->old_mode = op->new_mode = lm;
        }
        return r;
}

static int on_dir(struct walk *w, const struct pair *p)
{
        bool both = p->has_live && S_ISDIR(p->lst.st_mode);
        _cleanup_(lend_back) __attribute__((unused)) struct lent l =
                lend_dir(p->ufd, p->name, p->ust.st_mode);

        if (both) {
                int r = is_opaque(p->ufd, p->name);
                if (r < 0)
                        return cs_fail(w, -r, "read the xattrs of", p->path, UPPER);
                if (!r)
                        return on_merged_dir(w, p);
        }
        add_swap(w, p); /* moves whole: new, opaque, or replacing a non-directory */
        return both ? report_dirs(w, p) : report_change(w, p);
}

static int walk_entry(struct walk *w, int ufd, int lfd, const char *name, const char *parent,
                      unsigned depth)
{
        _cleanup_free_ char *path = NULL;
        struct pair p = { .ufd = ufd, .lfd = lfd, .name = name, .depth = depth };
        int r = cs_child_path(w, parent, name, depth, &path);

        p.path = path;
        if (r >= 0)
                r = stat_pair(w, &p);
        if (r < 0 || !p.has_upper)
                return r;
        switch ((r = classify_upper(w, ufd, name, path, &p.ust))) {
        case K_WHITEOUT:
                return on_whiteout(w, &p);
        case K_DIR:
                return on_dir(w, &p);
        case K_FILE:
                return on_file(w, &p);
        default:
                return r < 0 ? r : 0;
        }
}

static int walk_dir(struct walk *w, int ufd, int lfd, const char *path, unsigned depth)
{
        _cleanup_(cs_strvec_clearp) struct strvec names = { 0 };
        int r = cs_list_dir(w, ufd, path, UPPER, &names);

        for (size_t i = 0; r >= 0 && i < names.n; i++)
                r = walk_entry(w, ufd, lfd, names.v[i], path, depth + 1);
        return r;
}

/* Without /proc every xattr lookup would fail with a puzzling ENOENT: say why up front. */
int cs_need_proc(struct txbox_error *err)
{
        if (access("/proc/self/fd", X_OK) < 0)
                return tx_err(err, errno, "reading overlay xattrs needs /proc (\"/proc/self/fd\": %s)",
                              strerror(errno));
        return 0;
}

int changeset_build(int upper_fd, int live_fd, struct changeset *cs, struct txbox_error *err)
{
        struct changeset out = { 0 };
        struct walk w = { .cs = &out, .err = err };
        int r = cs_need_proc(err);

        if (r >= 0)
                r = walk_dir(&w, upper_fd, live_fd, "", 0);

        if (r < 0) { /* never clobber the caller's cs on failure */
                changeset_free(&out);
                return r;
        }
        sort_paths(&out);
        *cs = out;
        return 0;
}
