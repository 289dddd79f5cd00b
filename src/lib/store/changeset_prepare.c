/* Making a transaction's upper layer fit to be renamed into the workspace (changeset_prepare),
 * and the manifest of the directories that move in whole, which it writes for undo.
 * Comparing the layer with the workspace is changeset.c's; the walk and the helpers both use
 * are in changeset_int.h.  Nothing here follows a symlink (see changeset.c). */
#define _GNU_SOURCE
#include "store/changeset.h"
#include "store/changeset_int.h"
#include "store/journal.h"

#include <fcntl.h>
#include <string.h>
#include <sys/xattr.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/error.h"
#include "base/failpoint.h"
#include "base/mem.h"
#include "base/str.h"

static int prepare_entry(struct walk *w, int dirfd, const char *name, const char *path,
                         const struct stat *st, unsigned depth);

/* ---- preparing the upper layer for commit ---- */

static bool is_own_xattr(const char *xname)
{
        return str_has_prefix(xname, OVL_PREFIX) && !str_has_prefix(xname, OVL_ESCAPED_PREFIX);
}

static int cmp_len(const void *a, const void *b)
{
        const char *x = *(const char *const *)a, *y = *(const char *const *)b;
        size_t lx = strlen(x), ly = strlen(y);
        return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x, y);
}

/* Value of xattr xname of p (a cs_proc_at path), malloc'd; its length or -errno. */
static ssize_t read_xattr(const char *p, const char *xname, char **out)
{
        for (;;) {
                ssize_t n = lgetxattr(p, xname, NULL, 0);
                if (n < 0)
                        return -errno;
                char *buf = xmalloc(n ? (size_t)n : 1);
                ssize_t m = lgetxattr(p, xname, buf, (size_t)n);
                if (m >= 0) {
                        *out = buf;
                        return m;
                }
                free(buf);
                if (errno != ERANGE)
                        return -errno;
        }
}

/* user.overlay.overlay.X becomes user.overlay.X: what the program set. */
static int unescape_xattr(struct walk *w, const char *p, const char *xname, const char *path)
{
        _cleanup_free_ char *val = NULL;
        _cleanup_free_ char *plain = xasprintf(OVL_PREFIX "%s", xname + strlen(OVL_ESCAPED_PREFIX));
        ssize_t n = read_xattr(p, xname, &val);

        if (n < 0)
                return tx_err(w->err, (int)-n, "read xattr %s of \"%s\" in the upper layer: %s",
                              xname, path, strerror((int)-n));
        if (lsetxattr(p, plain, val, (size_t)n, 0) < 0 || lremovexattr(p, xname) < 0)
                return tx_err(w->err, errno, "rename xattr %s of \"%s\" in the upper layer: %m",
                              xname, path);
        return 0;
}

/* Drop overlay's own xattrs, then unescape the program's.  Escaped names go shortest first:
 * unescaping user.overlay.overlay.overlay.X writes user.overlay.overlay.X, which must have
 * been moved out of the way already. */
static int fix_xattrs(struct walk *w, int dirfd, const char *name, const char *path)
{
        _cleanup_free_ char *list = NULL;
        _cleanup_free_ const char **esc = NULL;
        struct proc_path pp;
        const char *p = cs_proc_at(&pp, dirfd, name);
        size_t len, nesc = 0;
        int r = p ? cs_list_xattrs(dirfd, name, &list, &len) : -ENAMETOOLONG;

        if (r < 0)
                return cs_fail(w, -r, "list the xattrs of", path, UPPER);
        esc = xcalloc(len / sizeof(OVL_ESCAPED_PREFIX) + 1, sizeof(*esc));
        for (size_t i = 0; i < len; i += strlen(list + i) + 1) {
                if (str_has_prefix(list + i, OVL_ESCAPED_PREFIX))
                        esc[nesc++] = list + i;
                else if (is_own_xattr(list + i) && lremovexattr(p, list + i) < 0 && errno != ENODATA)
                        return tx_err(w->err, errno, "remove xattr %s of \"%s\" in the upper layer: %m",
                                      list + i, path);
        }
        if (nesc > 1)
                qsort(esc, nesc, sizeof(*esc), cmp_len);
        for (size_t i = 0; r >= 0 && i < nesc; i++)
                r = unescape_xattr(w, p, esc[i], path);
        return r;
}

/* One entry inside a directory that moves whole: overlay's whiteouts there mean nothing
 * once the directory replaces the live one, so they go. */
static int prepare_child(struct walk *w, int dirfd, const char *name, const char *parent,
                         unsigned depth)
{
        _cleanup_free_ char *path = NULL;
        struct stat st;
        bool exists;
        int r = cs_child_path(w, parent, name, depth, &path);

        if (r >= 0)
                r = cs_stat_at(w, dirfd, name, path, UPPER, &st, &exists);
        if (r < 0 || !exists)
                return r;
        r = cs_is_whiteout(dirfd, name, &st);
        if (r < 0)
                return cs_fail(w, -r, "read the xattrs of", path, UPPER);
        if (r)
                return unlinkat(dirfd, name, 0) < 0 ? cs_fail(w, errno, "remove whiteout", path, UPPER) : 0;
        if ((r = prepare_entry(w, dirfd, name, path, &st, depth)) < 0)
                return r;
        /* As it will be live: prepare_entry gave it its final mode. */
        if (w->mf && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return cs_fail(w, errno, "stat", path, UPPER);
        if (w->mf)
                cs_manifest_add(w->mf, path, &st);
        return 0;
}

static int prepare_dir(struct walk *w, int dirfd, const char *name, const char *path,
                       unsigned depth)
{
        _cleanup_(cs_strvec_clearp) struct strvec names = { 0 };
        _cleanup_close_ int fd = cs_open_dir(w, dirfd, name, path, UPPER);
        int r = fd < 0 ? fd : cs_list_dir(w, fd, path, UPPER, &names);

        for (size_t i = 0; r >= 0 && i < names.n; i++)
                r = prepare_child(w, fd, names.v[i], path, depth + 1);
        return r;
}

static int chmod_at(struct walk *w, int dirfd, const char *name, const char *path, mode_t mode)
{
        return fchmodat(dirfd, name, mode, 0) < 0 ? cs_fail(w, errno, "chmod", path, UPPER) : 0;
}

static int prepare_entry(struct walk *w, int dirfd, const char *name, const char *path,
                         const struct stat *st, unsigned depth)
{
        /* Symlinks carry neither user xattrs nor a mode; fifos, sockets and devices are
         * violations, and commit refuses those. */
        if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode))
                return 0;
        /* A transaction never brings setuid/setgid into the workspace: an agent must not be
         * able to mint privileged programs there. */
        mode_t want = st->st_mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID);
        /* Changing user xattrs needs read and write permission (a directory also search, to
         * clear its subtree).  Unprivileged we have only the owner's rights: lend them to
         * ourselves meanwhile (the sandbox made the entry, so it is ours). */
        mode_t need = S_ISDIR(st->st_mode) ? S_IRWXU : S_IRUSR | S_IWUSR;
        mode_t cur = st->st_mode & 07777;
        int r = 0;

        if ((cur & need) != need && (r = chmod_at(w, dirfd, name, path, want | need)) >= 0)
                cur = want | need;
        if (r >= 0)
                r = fix_xattrs(w, dirfd, name, path);
        if (r >= 0 && S_ISDIR(st->st_mode))
                r = prepare_dir(w, dirfd, name, path, depth);
        if (cur != want) {
                int r2 = chmod_at(w, dirfd, name, path, want);
                r = r < 0 ? r : r2;
        }
        return r;
}

static int prepare_op(struct walk *w, int upper_fd, const char *path)
{
        const char *base;
        struct stat st;
        unsigned depth = 1;
        _cleanup_close_ int pfd = open_parent_beneath(upper_fd, path, &base);

        if (pfd < 0)
                return cs_fail(w, -pfd, "open the directory of", path, UPPER);
        if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return cs_fail(w, errno, "stat", path, UPPER);
        for (const char *s = path; *s; s++)
                depth += *s == '/';
        return prepare_entry(w, pfd, base, path, &st, depth);
}

/* Prepare must run once: after it, an unescaped user.overlay.X (the program's own) looks
 * exactly like overlay's marker and a second run would strip it.  A commit that fails after
 * prepare and is retried would do that, so the upper root (never committed) remembers. */
#define PREPARED_XATTR "user.txbox.prepared"

static int prepared_mark(int upper_fd, bool set)
{
        char p[sizeof("/proc/self/fd/") + 3 * sizeof(int)];
        char v;

        snprintf(p, sizeof(p), "/proc/self/fd/%d", upper_fd);
        if (set)
                return setxattr(p, PREPARED_XATTR, "1", 1, 0) < 0 ? -errno : 0;
        return getxattr(p, PREPARED_XATTR, &v, 1) >= 0;
}

/* Merged directories stay in the layer: their modes go live by the plan's mode steps, not
 * from the layer.  Those the program closed there are opened to us, parents first, so that
 * prepare and the commit's moves can reach what lies beneath them. */
static int open_merged_dirs(struct walk *w, int upper_fd, const struct changeset *cs)
{
        char proc[sizeof("/proc/self/fd/") + 3 * sizeof(int)];

        for (unsigned depth = 0, more = 1; more; depth++) {
                more = 0;
                for (size_t i = 0; i < cs->nops; i++) {
                        const struct cs_op *op = &cs->ops[i];
                        unsigned d = 0;
                        for (const char *s = op->path; *s; s++)
                                d += *s == '/';
                        if (op->kind != CS_OP_CHMOD || d < depth)
                                continue;
                        if (d > depth) {
                                more = 1;
                                continue;
                        }
                        struct stat st;
                        _cleanup_close_ int fd = open_beneath(upper_fd, op->path, O_PATH | O_DIRECTORY, 0);
                        if (fd == -ENOENT)
                                continue;
                        if (fd < 0 || fstat(fd, &st) < 0)
                                return cs_fail(w, fd < 0 ? -fd : errno, "open the directory", op->path,
                                               UPPER);
                        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
                        if ((st.st_mode & S_IRWXU) != S_IRWXU &&
                            chmod(proc, (st.st_mode | S_IRWXU) & 07777) < 0)
                                return cs_fail(w, errno, "chmod", op->path, UPPER);
                }
        }
        return 0;
}

int changeset_prepare(int upper_fd, const struct changeset *cs, int dirfd, struct txbox_error *err)
{
        struct cs_manifest mf = { 0 };
        struct walk w = { .err = err, .mf = &mf };
        bool dirs = false;
        int r = cs_need_proc(err);

        if (r < 0 || prepared_mark(upper_fd, false) > 0)
                return r;
        int fd = openat(dirfd, "prepared", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return tx_err(err, errno, "cannot mark the upper layer as being prepared: %m");
        close(fd);
        if ((r = failpoint("prepare")) < 0)
                return tx_err(err, -r, "prepare the upper layer: %s", strerror(-r));
        r = open_merged_dirs(&w, upper_fd, cs);
        for (size_t i = 0; r >= 0 && i < cs->nops; i++) {
                const struct cs_op *op = &cs->ops[i];
                if (op->kind != CS_OP_SWAP || !op->has_new)
                        continue;
                dirs = dirs || S_ISDIR(op->new_mode);
                r = prepare_op(&w, upper_fd, op->path);
        }
        /* Written before the mark: a retried commit finds both or neither. */
        if (r >= 0 && dirs) {
                cs_manifest_sort(&mf);
                r = journal_manifest_write(dirfd, "manifest", &mf, err);
        }
        cs_manifest_free(&mf);
        if (r >= 0 && (r = failpoint("prepare")) < 0)
                return tx_err(err, -r, "prepare the upper layer: %s", strerror(-r));
        if (r >= 0 && (r = prepared_mark(upper_fd, true)) < 0)
                return tx_err(err, -r, "mark the upper layer prepared: %s", strerror(-r));
        return r;
}

/* ---- the manifest ---- */

void cs_manifest_add(struct cs_manifest *m, const char *path, const struct stat *st)
{
        GROW(m->e, m->n, m->cap);
        m->e[m->n++] = (struct cs_manifest_entry){
                .path = xstrdup(path),
                .ino = st->st_ino,
                .mode = st->st_mode & (S_IFMT | 07777),
                .size = st->st_size,
                .mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
        };
}

static int cmp_entry(const void *a, const void *b)
{
        return strcmp(((const struct cs_manifest_entry *)a)->path,
                      ((const struct cs_manifest_entry *)b)->path);
}

void cs_manifest_sort(struct cs_manifest *m)
{
        if (m->n > 1)
                qsort(m->e, m->n, sizeof(*m->e), cmp_entry);
}

const struct cs_manifest_entry *cs_manifest_find(const struct cs_manifest *m, const char *path)
{
        struct cs_manifest_entry key = { .path = (char *)path };
        return m->n ? bsearch(&key, m->e, m->n, sizeof(*m->e), cmp_entry) : NULL;
}

void cs_manifest_free(struct cs_manifest *m)
{
        for (size_t i = 0; m && i < m->n; i++)
                free(m->e[i].path);
        if (m)
                free(m->e);
        if (m)
                memset(m, 0, sizeof(*m));
}
