/* Crash-safe commit: journal file and idempotent apply/revert steps. */
#define _GNU_SOURCE
#include "store/journal.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/failpoint.h"
#include "base/fileio.h"
#include "base/mem.h"
#include "base/str.h"

#define JOURNAL_MAGIC "txbox-journal 1"
#define JOURNAL_MAX (1u << 30)

static int hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Exactly two hex digits after each '%': one digit before the end of the line must not
 * step past it (the next line would be copied into this one's buffer), and a blank or a
 * sign is no digit. */
static int unescape_path(const char *in, char **out)
{
        size_t n = strlen(in);
        char *r = xmalloc(n + 1), *w = r;

        for (const char *p = in; *p; p++) {
                if (*p != '%') {
                        *w++ = *p;
                        continue;
                }
                int hi = hex_digit(p[1]), lo = hi < 0 ? -1 : hex_digit(p[2]);
                if (lo < 0 || (hi | lo) == 0) {
                        free(r);
                        return -EBADMSG;
                }
                *w++ = (char)(hi << 4 | lo);
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
                fput_pct_escaped(f, o->path); /* from the sandbox: any byte but NUL */
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

/* ---- the manifest of directories moved in whole ---- */

#define MANIFEST_MAGIC "txbox-manifest 1"

int journal_manifest_write(int dirfd, const char *name, const struct cs_manifest *m, struct txbox_error *err)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int r;

        if (!f)
                return tx_err(err, ENOMEM, "cannot build the manifest");
        fprintf(f, "%s\n", MANIFEST_MAGIC);
        for (size_t i = 0; i < m->n; i++) {
                const struct cs_manifest_entry *e = &m->e[i];
                fprintf(f, "%llu %o %lld %lld ", (unsigned long long)e->ino, (unsigned)e->mode,
                        (long long)e->size, (long long)e->mtime_ns);
                fput_pct_escaped(f, e->path);
                fputc('\n', f);
        }
        fprintf(f, "end %zu\n", m->n);
        fclose(f);
        r = write_file_atomic_at(dirfd, name, buf, len, false);
        free(buf);
        return r < 0 ? tx_err(err, -r, "cannot write the manifest '%s': %s", name, strerror(-r)) : 0;
}

int journal_manifest_read(int dirfd, const char *name, struct cs_manifest *m, struct txbox_error *err)
{
        _cleanup_free_ char *buf = NULL;
        struct cs_manifest out = {0};
        size_t declared = SIZE_MAX;
        char *save = NULL, *line;
        int r = read_file_at(dirfd, name, JOURNAL_MAX, &buf, NULL);

        if (r < 0)
                return r == -ENOENT ? r : tx_err(err, -r, "cannot read the manifest '%s': %s", name,
                                                 strerror(-r));
        line = strtok_r(buf, "\n", &save);
        if (!line || strcmp(line, MANIFEST_MAGIC) != 0)
                goto bad;
        while ((line = strtok_r(NULL, "\n", &save))) {
                unsigned long long ino;
                unsigned mode;
                long long size, mtime;
                int off = 0;
                char *path;
                if (sscanf(line, "end %zu", &declared) == 1)
                        break;
                if (sscanf(line, "%llu %o %lld %lld %n", &ino, &mode, &size, &mtime, &off) != 4 || !off ||
                    unescape_path(line + off, &path) < 0)
                        goto bad;
                struct stat st = {.st_ino = ino, .st_mode = mode, .st_size = size};
                st.st_mtim.tv_sec = mtime / 1000000000;
                st.st_mtim.tv_nsec = mtime % 1000000000;
                cs_manifest_add(&out, path, &st);
                free(path);
        }
        if (declared != out.n)
                goto bad;
        cs_manifest_sort(&out);
        *m = out;
        return 0;
bad:
        cs_manifest_free(&out);
        return tx_err(err, EBADMSG, "the manifest '%s' is incomplete or malformed", name);
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
 * changed beyond the op itself).  Never through a symlink either way. */
static int parent_at(int root, const char *path, bool create, const char **base)
{
        return create ? make_parent_beneath(root, path, 0700, base) : open_parent_beneath(root, path, base);
}

static int move(int from_dir, const char *from, int to_dir, const char *to)
{
        /* NOREPLACE: a step must never destroy an entry it did not plan to move. */
        return renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE) < 0 ? -errno : 0;
}

/* A directory changes parents only when it is writable (its ".." entry changes): a
 * read-only one (mode from the plan) is lent u+w for the move and gets its mode back
 * after it, wherever it ended up. */
static bool closed_dir(mode_t mode)
{
        return S_ISDIR(mode) && !(mode & S_IWUSR);
}

static int move_entry(int from_dir, int to_dir, const char *base, mode_t mode)
{
        bool lend = closed_dir(mode);
        int r;

        if (lend && fchmodat(from_dir, base, (mode | S_IWUSR) & 07777, 0) < 0)
                return -errno;
        r = move(from_dir, base, to_dir, base);
        if (lend && fchmodat(r == 0 ? to_dir : from_dir, base, mode & 07777, 0) < 0 && r == 0)
                r = -errno;
        return r;
}

/* The source and aside areas are txbox's (the upper layer, undo/, redo/), but what the
 * program left there keeps the program's modes: a directory it closed there is opened
 * (u+rwx) once a move out of it or into it is refused, and only then, so that the common
 * case costs nothing.  (The live workspace's directories are opened by the plan's own
 * mode steps, which also close them again.) */
static void open_area(int dirfd)
{
        struct stat st;
        char proc[sizeof("/proc/self/fd/") + 3 * sizeof(int)];

        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
        if (fstat(dirfd, &st) == 0 && S_ISDIR(st.st_mode) &&
            chmod(proc, (st.st_mode | S_IRWXU) & 07777) < 0) {
                /* the retry reports it */
        }
}

/* move_entry between two of fds[3] (0 the live parent, 1 the source's, 2 the aside's). */
static int move_op(const int fds[3], int from, int to, const char *base, mode_t mode)
{
        int r = move_entry(fds[from], fds[to], base, mode);

        if (r != -EACCES || (!from && !to))
                return r;
        if (from)
                open_area(fds[from]);
        if (to)
                open_area(fds[to]);
        return move_entry(fds[from], fds[to], base, mode);
}

/* The exchange of the source's entry with the live one, the source area opened as above. */
static int exchange(const int fds[3], const char *base)
{
        int r = renameat2(fds[1], base, fds[0], base, RENAME_EXCHANGE) < 0 ? -errno : 0;

        if (r == -EACCES) {
                open_area(fds[1]);
                r = renameat2(fds[1], base, fds[0], base, RENAME_EXCHANGE) < 0 ? -errno : 0;
        }
        return r;
}

/* After a crash between a lent move and its mode: the mode again (idempotent). */
static void closed_mode_again(int dirfd, const char *base, mode_t mode)
{
        struct stat st;
        if (closed_dir(mode) && fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
            (st.st_mode & 07777) != (mode & 07777) && fchmodat(dirfd, base, mode & 07777, 0) < 0) {
                /* no matter: the entry is where it belongs, only more open */
        }
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

/* chmod of the directory at path, reached beneath live_fd with no symlink and through an
 * O_PATH descriptor: a directory closed to reading (mode 000) still gets its mode. */
static int chmod_beneath(int live_fd, const char *path, mode_t mode)
{
        char proc[sizeof("/proc/self/fd/") + 3 * sizeof(int)];
        _cleanup_close_ int fd = open_beneath(live_fd, path, O_PATH | O_DIRECTORY, 0);
        if (fd < 0)
                return fd;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        return chmod(proc, mode & 07777) < 0 ? -errno : 0;
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
                if ((r = exchange(fds, base)) < 0)
                        return r == -EINVAL || r == -ENOSYS || r == -EOPNOTSUPP ? 0 : r;
        }
        /* The original, now where the new entry was, goes aside. */
        if ((r = failpoint(fp)) < 0 || (r = move_op(fds, 1, 2, base, o->old_mode)) < 0)
                return r;
        return 1;
}

static int apply_one(int live_fd, int src_fd, int aside_fd, const struct cs_op *o, const char *fp)
{
        int fds[3] = {-1, -1, -1}, r;
        const char *base;

        if ((r = op_dirs(live_fd, src_fd, aside_fd, o->path, fds, &base)) < 0)
                goto out;
        if (exchangeable(o) && (r = apply_exchange(fds, base, o, fp)) != 0) {
                r = r < 0 ? r : 0;
                goto out;
        }
        if (o->has_old && exists_at(fds[0], base) && !exists_at(fds[2], base)) {
                if ((r = failpoint(fp)) < 0 || (r = move_op(fds, 0, 2, base, o->old_mode)) < 0)
                        goto out;
        }
        if (o->has_new && exists_at(fds[1], base))
                r = failpoint(fp) ?: move_op(fds, 1, 0, base, o->new_mode);
        if (r == 0 && o->has_old)
                closed_mode_again(fds[2], base, o->old_mode);
        if (r == 0 && o->has_new)
                closed_mode_again(fds[0], base, o->new_mode);
out:
        close3(fds);
        return r;
}

static int revert_one(int live_fd, int src_fd, int aside_fd, const struct cs_op *o)
{
        int fds[3] = {-1, -1, -1}, r;
        const char *base;

        if ((r = op_dirs(live_fd, src_fd, aside_fd, o->path, fds, &base)) < 0)
                goto out;
        if (exchangeable(o) && exchange_state(fds, base, o) == EX_DONE) {
                /* Exchanged, original not yet aside: trade them back. */
                r = exchange(fds, base);
                goto out;
        }
        if (o->has_new && !exists_at(fds[1], base) && exists_at(fds[0], base) &&
            (r = move_op(fds, 0, 1, base, o->new_mode)) < 0)
                goto out;
        if (o->has_old && exists_at(fds[2], base))
                r = move_op(fds, 2, 0, base, o->old_mode);
        if (r == 0 && o->has_old)
                closed_mode_again(fds[0], base, o->old_mode);
out:
        close3(fds);
        return r;
}

/* ---- the order of the steps ----
 * A directory's mode decides whether entries can move in and out of it (write) and whether
 * anything beneath it can be reached (search).  So the renames happen between two rounds
 * of modes: first every directory whose mode changes gets the permissions it has before
 * and after together (what the change adds, parents first, so that each is reachable when
 * its turn comes), then the renames, then every such directory its final mode (children
 * first, while their parents can still be searched).  A directory made read-only by one
 * commit thus never blocks a later commit that makes it writable again and writes into it,
 * and an undo, a revert or a recovery, which run the same steps, never meet a directory
 * that the commit closed. */

static size_t path_depth(const char *p)
{
        size_t d = 0;
        for (; *p; p++)
                d += *p == '/';
        return d;
}

/* Indices of the CHMOD ops, parents first: by depth, as the list itself may run either
 * way (undo's is reversed).  NULL when there are none. */
static size_t *chmod_order(const struct cs_op *ops, size_t n, size_t *m)
{
        size_t *idx = NULL;

        *m = 0;
        for (size_t k = 0; k < n; k++)
                if (ops[k].kind == CS_OP_CHMOD) {
                        if (!idx)
                                idx = xcalloc(n, sizeof(*idx));
                        idx[(*m)++] = k;
                }
        for (size_t i = 1; i < *m; i++) /* stable insertion sort: a change has few of them */
                for (size_t j = i; j > 0 && path_depth(ops[idx[j - 1]].path) > path_depth(ops[idx[j]].path);
                     j--) {
                        size_t t = idx[j];
                        idx[j] = idx[j - 1];
                        idx[j - 1] = t;
                }
        return idx;
}

/* Round one: each directory gets its modes before and after together, and our own write
 * and search permission for the moves beneath it, parents first.  Unless always, nothing
 * to do where that adds nothing to old_mode (a directory not yet past round two). */
static int widen_modes(int live_fd, const struct cs_op *ops, const size_t *idx, size_t m, bool always,
                       const char *fp, const char **bad)
{
        for (size_t i = 0; i < m; i++) {
                const struct cs_op *o = &ops[idx[i]];
                mode_t both = (o->old_mode | o->new_mode | S_IWUSR | S_IXUSR) & 07777;
                int r = !always && both == (o->old_mode & 07777)
                                ? 0
                                : failpoint(fp) ?: chmod_beneath(live_fd, o->path, both);
                if (r < 0) {
                        *bad = o->path;
                        return r;
                }
        }
        return 0;
}

/* Round two: each directory its final mode (new_mode, or old_mode when reverting),
 * children first. */
static int final_modes(int live_fd, const struct cs_op *ops, const size_t *idx, size_t m, bool revert,
                       const char *fp, const char **bad)
{
        for (size_t i = m; i-- > 0;) {
                const struct cs_op *o = &ops[idx[i]];
                int r = failpoint(fp) ?: chmod_beneath(live_fd, o->path, revert ? o->old_mode : o->new_mode);
                if (r < 0) {
                        *bad = o->path;
                        return r;
                }
        }
        return 0;
}

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

static int apply_failed(struct txbox_error *err, const char *path, int r)
{
        return tx_err(err, -r, "cannot apply the change to '%s': %s", path,
                      r == -ELOOP || r == -EXDEV ? "a symlink or mount point is in the way" : strerror(-r));
}

int journal_apply(int live_fd, int src_fd, int aside_fd, const struct cs_op *ops, size_t n,
                  const char *fp, const struct journal_progress *pg, bool sync, struct txbox_error *err)
{
        int64_t t0 = mono_us();
        bool reported = false;
        size_t done = 0, m;
        const char *bad = NULL;
        _cleanup_free_ size_t *modes = chmod_order(ops, n, &m);
        int r = widen_modes(live_fd, ops, modes, m, false, fp, &bad);

        if (r < 0)
                return apply_failed(err, bad, r);
        for (size_t k = 0; k < n; k++) {
                if (ops[k].kind == CS_OP_CHMOD)
                        continue;
                if ((r = apply_one(live_fd, src_fd, aside_fd, &ops[k], fp)) < 0)
                        return apply_failed(err, ops[k].path, r);
                reported = progress(pg, t0, ++done, n, reported);
        }
        if ((r = final_modes(live_fd, ops, modes, m, false, fp, &bad)) < 0)
                return apply_failed(err, bad, r);
        if (reported && done != n) /* the modes were the rest */
                pg->fn(pg->ctx, pg->what, n, n);
        /* One filesystem sync makes every rename above durable before the caller's marker. */
        if (sync && syncfs(live_fd) < 0)
                return tx_err(err, errno, "cannot sync the workspace's filesystem: %s", strerror(errno));
        return 0;
}

/* The mirror of journal_apply, from wherever it stopped: the modes of before and after
 * together (parents first), the renames back in reverse, then the modes of before
 * (children first). */
int journal_revert(int live_fd, int src_fd, int aside_fd, const struct cs_op *ops, size_t n,
                   struct txbox_error *err)
{
        size_t m;
        const char *bad = NULL;
        _cleanup_free_ size_t *modes = chmod_order(ops, n, &m);
        /* Always: the apply may have reached its final round, leaving a directory at a
         * new_mode that the skip in widen_modes (which assumes old_mode) would leave closed. */
        int r = widen_modes(live_fd, ops, modes, m, true, "revert", &bad);

        for (size_t k = n; r >= 0 && k-- > 0;) {
                if (ops[k].kind == CS_OP_CHMOD)
                        continue;
                bad = ops[k].path;
                r = failpoint("revert") ?: revert_one(live_fd, src_fd, aside_fd, &ops[k]);
        }
        if (r >= 0)
                r = final_modes(live_fd, ops, modes, m, true, "revert", &bad);
        if (r < 0)
                return tx_err(err, -r, "cannot revert the change to '%s': %s", bad, strerror(-r));
        if (syncfs(live_fd) < 0)
                return tx_err(err, errno, "cannot sync the workspace's filesystem: %s", strerror(errno));
        return 0;
}
