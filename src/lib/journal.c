/* Crash-safe commit: journal file and idempotent apply/revert steps. */
#define _GNU_SOURCE
#include "journal.h"

#include <limits.h>
#include <stdio.h>

#define JOURNAL_MAGIC "txbox-journal 1"
#define JOURNAL_MAX (1u << 30)

/* Paths come from the sandbox and may hold any byte but NUL: escape the ones that would
 * break a line-oriented file. */
static void escape_path(FILE *f, const char *p)
{
        for (; *p; p++) {
                unsigned char c = (unsigned char)*p;
                if (c <= 0x20 || c == '%' || c == 0x7f)
                        fprintf(f, "%%%02x", c);
                else
                        fputc(c, f);
        }
}

static int unescape_path(const char *in, char **out)
{
        size_t n = strlen(in);
        char *r = xmalloc(n + 1), *w = r;

        for (const char *p = in; *p; p++) {
                unsigned v;
                if (*p != '%') {
                        *w++ = *p;
                        continue;
                }
                if (sscanf(p + 1, "%2x", &v) != 1 || v == 0) {
                        free(r);
                        return -EBADMSG;
                }
                *w++ = (char)v;
                p += 2;
        }
        *w = '\0';
        *out = r;
        return 0;
}

int journal_write(int dirfd, const char *name, const struct cs_op *ops, size_t n, bool durable,
                  struct txbox_error *err)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int r;

        if (!f)
                return tx_err(err, ENOMEM, "cannot build the journal");
        fprintf(f, "%s\n", JOURNAL_MAGIC);
        for (size_t i = 0; i < n; i++) {
                const struct cs_op *o = &ops[i];
                fprintf(f, "%c %d %d %o %o %llu %lld %lld ", o->kind == CS_OP_SWAP ? 'S' : 'C',
                        o->has_old, o->has_new, (unsigned)o->old_mode, (unsigned)o->new_mode,
                        (unsigned long long)o->new_ino, (long long)o->new_size,
                        (long long)o->new_mtime_ns);
                escape_path(f, o->path);
                fputc('\n', f);
        }
        fprintf(f, "end %zu\n", n);
        fclose(f);
        r = write_file_atomic_at(dirfd, name, buf, len, durable);
        free(buf);
        if (r < 0)
                return tx_err(err, -r, "cannot write the commit journal '%s': %s", name, strerror(-r));
        return 0;
}

static int parse_line(char *line, struct cs_op *o)
{
        char kind;
        int has_old, has_new, off = 0;
        unsigned om, nm;
        unsigned long long ino;
        long long size, mtime;

        if (sscanf(line, "%c %d %d %o %o %llu %lld %lld %n", &kind, &has_old, &has_new, &om, &nm,
                   &ino, &size, &mtime, &off) != 8 || off == 0 || (kind != 'S' && kind != 'C'))
                return -EBADMSG;
        line[strcspn(line, "\n")] = '\0';
        if (unescape_path(line + off, &o->path) < 0 || !*o->path || o->path[0] == '/')
                return -EBADMSG;
        o->kind = kind == 'S' ? CS_OP_SWAP : CS_OP_CHMOD;
        o->has_old = has_old, o->has_new = has_new;
        o->old_mode = om, o->new_mode = nm;
        o->new_ino = ino, o->new_size = size, o->new_mtime_ns = mtime;
        return 0;
}

int journal_read(int dirfd, const char *name, struct cs_op **out, size_t *nout,
                 struct txbox_error *err)
{
        _cleanup_free_ char *buf = NULL;
        struct cs_op *ops = NULL;
        size_t n = 0, cap = 0, len, declared = SIZE_MAX;
        char *save = NULL;
        int r = read_file_at(dirfd, name, JOURNAL_MAX, &buf, &len);

        if (r < 0)
                return tx_err(err, -r, "cannot read the journal '%s': %s", name, strerror(-r));
        char *line = strtok_r(buf, "\n", &save);
        if (!line || strcmp(line, JOURNAL_MAGIC) != 0)
                goto bad;
        while ((line = strtok_r(NULL, "\n", &save))) {
                if (sscanf(line, "end %zu", &declared) == 1)
                        break;
                if (n == cap)
                        ops = xrealloc(ops, (cap = cap ? cap * 2 : 64) * sizeof(*ops));
                memset(&ops[n], 0, sizeof(*ops));
                if (parse_line(line, &ops[n]) < 0)
                        goto bad;
                n++;
        }
        if (declared != n)
                goto bad;
        *out = ops;
        *nout = n;
        return 0;
bad:
        journal_ops_free(ops, n);
        return tx_err(err, EBADMSG, "the journal '%s' is incomplete or malformed", name);
}

void journal_ops_free(struct cs_op *ops, size_t n)
{
        for (size_t i = 0; ops && i < n; i++)
                free(ops[i].path);
        free(ops);
}

struct cs_op *journal_invert(const struct cs_op *ops, size_t n)
{
        struct cs_op *inv = xcalloc(n ? n : 1, sizeof(*inv));
        for (size_t i = 0; i < n; i++) {
                const struct cs_op *o = &ops[n - 1 - i];
                inv[i] = *o;
                inv[i].path = xstrdup(o->path);
                inv[i].has_old = o->has_new;
                inv[i].has_new = o->has_old;
                inv[i].old_mode = o->new_mode;
                inv[i].new_mode = o->old_mode;
                /* The inverse's new entry (the one set aside) was never identified, its
                 * old one is the commit's new entry (apply_one's exchange). */
                inv[i].new_ino = 0;
                inv[i].old_ino = o->new_ino;
        }
        return inv;
}

/* ---- steps ---- */

static bool exists_at(int dirfd, const char *name)
{
        struct stat st;
        return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Parent directory of path beneath root, created when missing (for the aside/source areas,
 * which belong to txbox), or only opened (for the live workspace, which must not be
 * changed beyond the op itself). */
static int parent_at(int root, const char *path, bool create, const char **base)
{
        const char *slash = strrchr(path, '/');
        if (create && slash) {
                char dir[PATH_MAX];
                if ((size_t)(slash - path) >= sizeof(dir))
                        return -ENAMETOOLONG;
                memcpy(dir, path, slash - path);
                dir[slash - path] = '\0';
                int r = mkdir_p_at(root, dir, 0700);
                if (r < 0)
                        return r;
        }
        return open_parent_beneath(root, path, base);
}

static int move(int from_dir, const char *from, int to_dir, const char *to)
{
        /* NOREPLACE: a step must never destroy an entry it did not plan to move. */
        return renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE) < 0 ? -errno : 0;
}

static int op_dirs(int live_fd, int src_fd, int aside_fd, const char *path, int fds[3],
                   const char **base)
{
        const char *b1, *b2, *b3;
        fds[0] = parent_at(live_fd, path, false, &b1);
        fds[1] = parent_at(src_fd, path, true, &b2);
        fds[2] = parent_at(aside_fd, path, true, &b3);
        *base = b1;
        for (int i = 0; i < 3; i++)
                if (fds[i] < 0)
                        return fds[i];
        return 0;
}

static void close3(int fds[3])
{
        for (int i = 0; i < 3; i++)
                closep(&fds[i]);
}

static int chmod_beneath(int live_fd, const char *path, mode_t mode)
{
        _cleanup_close_ int fd = open_beneath(live_fd, path, O_RDONLY | O_DIRECTORY, 0);
        if (fd < 0)
                return fd;
        return fchmod(fd, mode & 07777) < 0 ? -errno : 0;
}

/* A file replaced by a file (or symlink), where one side is identified by inode: the new
 * entry goes in by one exchange (live and source trade places), then the original, now in
 * the source area, is set aside.  The live name never goes missing, as it would between two
 * renames (a program of a concurrent transaction reading it would fail).  The inode tells
 * the steps apart: a commit's journal has the new entry's (new_ino: live holds it once
 * exchanged), an undo's inverted ops the live entry's they replace (old_ino: the source
 * area holds it once exchanged).  Directories keep the two renames. */
static bool exchangeable(const struct cs_op *o)
{
        return o->has_old && o->has_new && (o->new_ino || o->old_ino) && !S_ISDIR(o->old_mode) &&
               !S_ISDIR(o->new_mode);
}

static bool ino_at(int dirfd, const char *name, uint64_t *ino)
{
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return false;
        *ino = st.st_ino;
        return true;
}

/* Where an exchangeable op stands: EX_READY, both entries in place as planned; EX_DONE, the
 * new entry exchanged into live, the original not yet set aside; EX_NONE, neither (not as
 * planned, or half-way by two renames).  Two stats and one lookup, whichever it is. */
enum { EX_NONE, EX_READY, EX_DONE };
static int exchange_state(const int fds[3], const char *base, const struct cs_op *o)
{
        uint64_t live, src;
        if (!ino_at(fds[0], base, &live) || !ino_at(fds[1], base, &src) || exists_at(fds[2], base))
                return EX_NONE;
        if (o->new_ino ? live == o->new_ino : src == o->old_ino && live != o->old_ino)
                return EX_DONE;
        return (o->new_ino ? src == o->new_ino : live == o->old_ino) ? EX_READY : EX_NONE;
}

/* 1: done by exchange; 0: not applicable here (the two renames follow); < 0: error. */
static int apply_exchange(const int fds[3], const char *base, const struct cs_op *o, const char *fp)
{
        int st = exchange_state(fds, base, o), r;

        if (st == EX_NONE)
                return 0;
        if (st == EX_READY) {
                if ((r = failpoint(fp)) < 0)
                        return r;
                if (renameat2(fds[1], base, fds[0], base, RENAME_EXCHANGE) < 0)
                        return errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP ? 0 : -errno;
        }
        /* The original, now where the new entry was, goes aside. */
        if ((r = failpoint(fp)) < 0 || (r = move(fds[1], base, fds[2], base)) < 0)
                return r;
        return 1;
}

static int apply_one(int live_fd, int src_fd, int aside_fd, const struct cs_op *o, const char *fp)
{
        int fds[3] = {-1, -1, -1}, r;
        const char *base;

        if (o->kind == CS_OP_CHMOD)
                return (r = failpoint(fp)) < 0 ? r : chmod_beneath(live_fd, o->path, o->new_mode);
        if ((r = op_dirs(live_fd, src_fd, aside_fd, o->path, fds, &base)) < 0)
                goto out;
        if (exchangeable(o) && (r = apply_exchange(fds, base, o, fp)) != 0) {
                r = r < 0 ? r : 0;
                goto out;
        }
        if (o->has_old && exists_at(fds[0], base) && !exists_at(fds[2], base)) {
                if ((r = failpoint(fp)) < 0 || (r = move(fds[0], base, fds[2], base)) < 0)
                        goto out;
        }
        if (o->has_new && exists_at(fds[1], base))
                r = failpoint(fp) ?: move(fds[1], base, fds[0], base);
out:
        close3(fds);
        return r;
}

static int revert_one(int live_fd, int src_fd, int aside_fd, const struct cs_op *o)
{
        int fds[3] = {-1, -1, -1}, r;
        const char *base;

        if (o->kind == CS_OP_CHMOD)
                return chmod_beneath(live_fd, o->path, o->old_mode);
        if ((r = op_dirs(live_fd, src_fd, aside_fd, o->path, fds, &base)) < 0)
                goto out;
        if (exchangeable(o) && exchange_state(fds, base, o) == EX_DONE) {
                /* Exchanged, original not yet aside: trade them back. */
                if (renameat2(fds[1], base, fds[0], base, RENAME_EXCHANGE) < 0)
                        r = -errno;
                goto out;
        }
        if (o->has_new && !exists_at(fds[1], base) && exists_at(fds[0], base) &&
            (r = move(fds[0], base, fds[1], base)) < 0)
                goto out;
        if (o->has_old && exists_at(fds[2], base))
                r = move(fds[2], base, fds[0], base);
out:
        close3(fds);
        return r;
}

/* SWAPs first, parents before children; then CHMODs children first, so a directory that
 * becomes read-only gets its mode only after everything has moved into it. */
/* Report progress every 256 operations once a second has gone by. */
static bool progress(const struct journal_progress *pg, int64_t t0, size_t done, size_t total, bool reported)
{
        if (!pg || !pg->fn || (!reported && (done % 256 != 0 || mono_us() - t0 < 1000000)))
                return reported;
        if (reported && done % 256 != 0 && done != total)
                return reported;
        pg->fn(pg->ctx, pg->what, done, total);
        return true;
}

int journal_apply(int live_fd, int src_fd, int aside_fd, const struct cs_op *ops, size_t n,
                  const char *fp, const struct journal_progress *pg, bool sync, struct txbox_error *err)
{
        int64_t t0 = mono_us();
        bool reported = false;
        size_t done = 0;

        for (int pass = 0; pass < 2; pass++)
                for (size_t k = 0; k < n; k++) {
                        const struct cs_op *o = pass == 0 ? &ops[k] : &ops[n - 1 - k];
                        if ((o->kind == CS_OP_CHMOD) != (pass == 1))
                                continue;
                        int r = apply_one(live_fd, src_fd, aside_fd, o, fp);
                        if (r < 0)
                                return tx_err(err, -r, "cannot apply the change to '%s': %s", o->path,
                                              r == -ELOOP || r == -EXDEV
                                                      ? "a symlink or mount point is in the way"
                                                      : strerror(-r));
                        reported = progress(pg, t0, ++done, n, reported);
                }
        if (reported && done % 256 != 0)
                pg->fn(pg->ctx, pg->what, n, n);
        /* One filesystem sync makes every rename above durable before the caller's marker. */
        if (sync && syncfs(live_fd) < 0)
                return tx_err(err, errno, "cannot sync the workspace's filesystem: %s", strerror(errno));
        return 0;
}

/* The mirror of journal_apply: modes back first (parents writable again), then the
 * renames in reverse. */
int journal_revert(int live_fd, int src_fd, int aside_fd, const struct cs_op *ops, size_t n,
                   struct txbox_error *err)
{
        for (int pass = 0; pass < 2; pass++)
                for (size_t k = 0; k < n; k++) {
                        const struct cs_op *o = pass == 0 ? &ops[k] : &ops[n - 1 - k];
                        if ((o->kind == CS_OP_CHMOD) != (pass == 0))
                                continue;
                        int r = failpoint("revert") ?: revert_one(live_fd, src_fd, aside_fd, o);
                        if (r < 0)
                                return tx_err(err, -r, "cannot revert the change to '%s': %s", o->path,
                                              strerror(-r));
                }
        if (syncfs(live_fd) < 0)
                return tx_err(err, errno, "cannot sync the workspace's filesystem: %s", strerror(errno));
        return 0;
}
