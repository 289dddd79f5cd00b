/* txbox diff: a unified diff of what one transaction changed, or of everything since one.
 *
 * Each changed path is diffed between two versions, each opened here as a descriptor
 * beneath its own root with no symlink on the way (the program made these trees), and
 * handed to diff(1) as /dev/fd/3 and /dev/fd/4: diff never resolves a name of the
 * program's choosing.  Which two versions:
 *
 *   pending          the workspace, and its upper layer (a session: its savepoints as the
 *                    commit will fold them, resolved path by path: tx_session_open_file)
 *   committed        its originals (tx/ID/undo), and the version it put in place, wherever
 *                    that is now: still live, or moved aside into the undo data of a later
 *                    transaction that replaced or deleted it.  Renames keep a file's inode,
 *                    and the journal (or the manifest, beneath a directory moved in whole)
 *                    holds the inode, size and mtime the commit gave it: the version whose
 *                    inode matches is the one.  Nothing later or by hand mixes in.
 *   undone           the workspace (its originals back), and what the undo took away (redo/)
 *   since TX         for every path TX or a later commit changed: the version before the
 *                    first of them (that commit's undo data), and the workspace as it is. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/error.h"
#include "base/human.h"
#include "base/mem.h"
#include "base/str.h"
#include "store/journal.h"
#include "txbox.h"
#include "txn/tx.h"

extern char **environ;

/* Later commits looked at for where a version went (a diff of an old transaction in a very
 * long log reads at most this many). */
#define DIFF_LATER_MAX 5000

enum new_side { NEW_ROOT, NEW_SESSION, NEW_COMMITTED };

struct later {
        struct txbox_record *recs; /* committed after the transaction, oldest first */
        size_t n;
        int *undo;                 /* each one's undo/ (-1: not opened yet, -2: none) */
};

struct diff_ctx {
        struct txbox_ws *ws;
        const struct txbox_record *rec;
        int old_root;        /* -1: the old side is empty */
        int new_root;        /* NEW_ROOT: the new side's root (-1: empty) */
        enum new_side kind;
        int dir_fd;          /* NEW_SESSION: the session's tx dir */
        /* NEW_COMMITTED: the identities the commit gave, and the commits after it */
        struct cs_op *ops;
        size_t nops;
        struct cs_op **ops_sorted;
        struct cs_manifest mf;
        struct later later;
        FILE *notes;
};

static int tx_area(struct txbox_ws *ws, const char *id, const char *name)
{
        _cleanup_free_ char *rel = xasprintf("%s/%s", id, name);
        return open_beneath(ws->tx_fd, rel, O_PATH | O_DIRECTORY, 0);
}

static bool has_in_tx(struct txbox_ws *ws, const char *id, const char *name)
{
        _cleanup_free_ char *rel = xasprintf("%s/%s", id, name);
        struct stat st;
        return fstatat(ws->tx_fd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static int cmp_op(const void *a, const void *b)
{
        return strcmp((*(struct cs_op *const *)a)->path, (*(struct cs_op *const *)b)->path);
}

static const struct cs_op *find_op(const struct diff_ctx *c, const char *path)
{
        struct cs_op key = {.path = (char *)path}, *kp = &key, **hit;
        hit = c->nops ? bsearch(&kp, c->ops_sorted, c->nops, sizeof(*c->ops_sorted), cmp_op) : NULL;
        return hit ? *hit : NULL;
}

static void later_free(struct later *l)
{
        for (size_t i = 0; l->undo && i < l->n; i++)
                if (l->undo[i] >= 0)
                        close(l->undo[i]);
        free(l->undo);
        txbox_records_free(l->recs, l->n);
        memset(l, 0, sizeof(*l));
}

static int later_load(struct txbox_ws *ws, int64_t from_seq, struct later *l, struct txbox_error *err)
{
        int r = audit_commits_from(ws->audit, from_seq, DIFF_LATER_MAX, &l->recs, &l->n, err);
        if (r < 0)
                return r;
        l->undo = xcalloc(l->n + 1, sizeof(*l->undo));
        for (size_t i = 0; i < l->n; i++)
                l->undo[i] = -1;
        return 0;
}

static bool lists_path(const struct txbox_record *rec, const char *path)
{
        size_t lo = 0, hi = rec->npaths;
        while (lo < hi) { /* the log keeps paths sorted */
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(rec->paths[mid].path, path);
                if (!c)
                        return true;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return false;
}

static int later_undo(struct txbox_ws *ws, struct later *l, size_t i)
{
        if (l->undo[i] == -1) {
                int fd = tx_area(ws, l->recs[i].id, "undo");
                l->undo[i] = fd >= 0 ? fd : -2;
        }
        return l->undo[i];
}

/* Clear of 3 and 4, where the child wants them. */
static int moved_fd(int fd)
{
        int moved = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 10) : -1;
        if (fd >= 0)
                close(fd);
        return moved;
}

/* The regular file rel beneath root, or -1 (absent, a whiteout, a directory, a symlink, a
 * fifo: no text). */
static int file_beneath(int root, const char *rel, struct stat *st)
{
        return root < 0 ? -1 : moved_fd(open_beneath_regular(root, rel, st));
}

static void note(struct diff_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct diff_ctx *c, const char *fmt, ...)
{
        va_list ap;
        if (!c->notes)
                return;
        va_start(ap, fmt);
        vfprintf(c->notes, fmt, ap);
        va_end(ap);
        fputc('\n', c->notes);
}

/* The version of rel a committed transaction put in place, wherever it is now. */
static int committed_new(struct diff_ctx *c, const char *rel, enum txbox_change change)
{
        const struct cs_op *op = find_op(c, rel);
        const struct cs_manifest_entry *e = op ? NULL : cs_manifest_find(&c->mf, rel);
        bool known = (op && op->kind == CS_OP_SWAP && op->has_new) || e;
        uint64_t ino = op ? op->new_ino : e ? e->ino : 0;
        int64_t size = op ? op->new_size : e ? e->size : 0, mtime = op ? op->new_mtime_ns : e ? e->mtime_ns : 0;
        int fallback = -1, fd;
        const char *where = NULL, *fallback_where = NULL;
        struct stat st;

        if (change == TXBOX_DELETED || (op && op->kind == CS_OP_SWAP && !op->has_new))
                return -1;
        /* Each later commit that changed rel moved the version it found into its undo data;
         * the workspace has the newest. */
        for (size_t i = 0; i <= c->later.n; i++) {
                bool live = i == c->later.n;
                if (!live && !lists_path(&c->later.recs[i], rel))
                        continue;
                int root = live ? c->ws->ws_fd : later_undo(c->ws, &c->later, i);
                if (root < 0 || (fd = file_beneath(root, rel, &st)) < 0)
                        continue;
                where = live ? "the workspace" : c->later.recs[i].id;
                if (known && st.st_ino == ino) {
                        int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
                        if (st.st_size != size || mt != mtime)
                                note(c, "%s: changed in place outside txbox after tx %s; shown as %s%s has it", rel,
                                     c->rec->id, live ? "" : "tx ", where);
                        if (fallback >= 0)
                                close(fallback);
                        return fd;
                }
                if (fallback < 0) {
                        fallback = fd;
                        fallback_where = where;
                } else
                        close(fd);
        }
        if (fallback >= 0 && known)
                note(c, "%s: the version tx %s made was replaced outside txbox; shown as %s%s found it", rel,
                     c->rec->id, strcmp(fallback_where, "the workspace") ? "tx " : "", fallback_where);
        else if (fallback < 0 && known)
                note(c, "%s: the version tx %s made is no longer kept (replaced outside txbox, or its "
                        "later undo data pruned)", rel, c->rec->id);
        return fallback;
}

/* Run diff -u for one path, appending its output to f.  a and b are closed. */
static int diff_fds(FILE *f, int a, int b, const char *rel)
{
        /* The labels are the one part of diff's output it takes from a name: escaped, so
         * that a name cannot make lines of its own (base/human.h, text for humans). */
        _cleanup_free_ char *name = human_escape(rel, HUMAN_LINE);
        _cleanup_free_ char *la = xasprintf("a/%s", name), *lb = xasprintf("b/%s", name);
        char *argv[] = {"diff", "-u", "--label", la, "--label", lb, a >= 0 ? "/dev/fd/3" : "/dev/null",
                        b >= 0 ? "/dev/fd/4" : "/dev/null", NULL};
        int pipefd[2], status, r;
        pid_t pid;
        posix_spawn_file_actions_t fa;

        if (a < 0 && b < 0)
                return 0; /* a directory, symlink or special file: no text to show */
        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                r = -errno;
                goto out;
        }
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
        if (a >= 0)
                posix_spawn_file_actions_adddup2(&fa, a, 3);
        if (b >= 0)
                posix_spawn_file_actions_adddup2(&fa, b, 4);
        r = -posix_spawnp(&pid, "diff", &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        close(pipefd[1]);
        if (r == 0) {
                char buf[8192];
                ssize_t n;
                while ((n = read(pipefd[0], buf, sizeof(buf))) > 0)
                        fwrite(buf, 1, (size_t)n, f);
                waitpid(pid, &status, 0);
        }
        close(pipefd[0]);
out:
        if (a >= 0)
                close(a);
        if (b >= 0)
                close(b);
        return r;
}

static int diff_path(FILE *f, struct diff_ctx *c, const char *rel, enum txbox_change change)
{
        int a = file_beneath(c->old_root, rel, NULL), b;

        switch (c->kind) {
        case NEW_SESSION: b = moved_fd(tx_session_open_file(c->dir_fd, c->ws->ws_fd, rel)); break;
        case NEW_COMMITTED: b = committed_new(c, rel, change); break;
        default: b = file_beneath(c->new_root, rel, NULL); break;
        }
        return diff_fds(f, a, b, rel);
}

/* Is path one the filters name (itself or beneath one)?  No filters: every path. */
static bool wanted(char *const *filters, const char *path)
{
        if (!filters || !filters[0])
                return true;
        for (size_t i = 0; filters[i]; i++)
                if (!filters[i][0] || path_is_within(path, filters[i]))
                        return true;
        return false;
}

static void ctx_free(struct diff_ctx *c)
{
        closep(&c->old_root);
        closep(&c->new_root);
        closep(&c->dir_fd);
        journal_ops_free(c->ops, c->nops);
        free(c->ops_sorted);
        cs_manifest_free(&c->mf);
        later_free(&c->later);
}

static int undo_missing(struct txbox_ws *ws, const struct txbox_record *rec, const char *what,
                        struct txbox_error *err)
{
        return tx_err(err, ENOENT, "no diff %s tx %s: its undo data %s", what, rec->id,
                      rec->started_ms <= gc_pruned_through_ms(ws)
                              ? "was pruned by txbox gc under the workspace's retention (txbox gc --help)"
                              : "is missing from the state dir");
}

/* The two sides of one transaction's diff. */
static int ctx_open(struct diff_ctx *c, struct txbox_ws *ws, const struct txbox_record *rec,
                    struct txbox_error *err)
{
        c->ws = ws;
        c->rec = rec;
        switch (rec->outcome) {
        case TXBOX_PENDING:
                c->old_root = fcntl(ws->ws_fd, F_DUPFD_CLOEXEC, 3);
                if (has_in_tx(ws, rec->id, "session")) {
                        c->kind = NEW_SESSION;
                        c->dir_fd = openat(ws->tx_fd, rec->id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (c->dir_fd < 0)
                                return tx_err(err, errno, "the savepoints of session %s are missing from "
                                              "'%s/tx': %s", rec->id, ws->state, strerror(errno));
                } else
                        c->new_root = tx_area(ws, rec->id, "upper");
                return 0;
        case TXBOX_UNDONE:
                c->old_root = fcntl(ws->ws_fd, F_DUPFD_CLOEXEC, 3);
                c->new_root = tx_area(ws, rec->id, "redo");
                if (c->new_root < 0 && rec->npaths)
                        return undo_missing(ws, rec, "for", err);
                return 0;
        case TXBOX_COMMITTED: {
                struct txbox_error e;
                c->kind = NEW_COMMITTED;
                c->old_root = tx_area(ws, rec->id, "undo");
                if (c->old_root < 0 && rec->npaths)
                        return undo_missing(ws, rec, "for", err); /* without it every file looks new */
                _cleanup_close_ int dir = openat(ws->tx_fd, rec->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (dir >= 0 && journal_read(dir, "journal", &c->ops, &c->nops, &e) == 0) {
                        c->ops_sorted = xcalloc(c->nops + 1, sizeof(*c->ops_sorted));
                        for (size_t i = 0; i < c->nops; i++)
                                c->ops_sorted[i] = &c->ops[i];
                        qsort(c->ops_sorted, c->nops, sizeof(*c->ops_sorted), cmp_op);
                }
                if (dir >= 0)
                        (void)journal_manifest_read(dir, "manifest", &c->mf, &e);
                return rec->commit_seq > 0 ? later_load(ws, rec->commit_seq + 1, &c->later, err) : 0;
        }
        default:
                return tx_err(err, ENOENT, "transaction %s is %s: its changes were not kept, so there is no diff",
                              rec->id, txbox_outcome_name(rec->outcome));
        }
}

struct since_path {
        const char *path;
        size_t first; /* the first commit of the range that changed it */
};

static int cmp_since(const void *a, const void *b)
{
        const struct since_path *x = a, *y = b;
        int c = strcmp(x->path, y->path);
        return c ? c : x->first < y->first ? -1 : x->first > y->first;
}

/* Everything TX and the commits after it changed: the versions before, against the
 * workspace now. */
static int diff_since(FILE *f, struct txbox_ws *ws, const struct txbox_record *from,
                      const struct txbox_diff_opts *o, struct txbox_error *err)
{
        struct later l = {0};
        struct since_path *v = NULL;
        size_t n = 0, cap = 0;
        int r;

        if (from->outcome != TXBOX_COMMITTED && from->outcome != TXBOX_UNDONE)
                return tx_err(err, EINVAL, "tx %s is %s: --since takes a committed transaction (txbox diff %s "
                              "shows a pending one)", from->id, txbox_outcome_name(from->outcome), from->id);
        if ((r = later_load(ws, from->commit_seq, &l, err)) < 0)
                return r;
        for (size_t i = 0; i < l.n; i++)
                for (size_t k = 0; k < l.recs[i].npaths; k++) {
                        if (!wanted(o->paths, l.recs[i].paths[k].path))
                                continue;
                        if (n == cap) {
                                cap = cap ? 2 * cap : 64;
                                v = xrealloc(v, cap * sizeof(*v));
                        }
                        v[n++] = (struct since_path){l.recs[i].paths[k].path, i};
                }
        if (v && n > 1)
                qsort(v, n, sizeof(*v), cmp_since);
        _cleanup_close_ int live = fcntl(ws->ws_fd, F_DUPFD_CLOEXEC, 3);
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (i && !strcmp(v[i].path, v[i - 1].path))
                        continue;
                const struct txbox_record *first = &l.recs[v[i].first];
                int undo = later_undo(ws, &l, v[i].first);
                if (undo < 0 && first->npaths) {
                        r = undo_missing(ws, first, "since", err);
                        break;
                }
                r = diff_fds(f, file_beneath(undo, v[i].path, NULL), file_beneath(live, v[i].path, NULL),
                             v[i].path);
                if (r < 0)
                        r = tx_err(err, -r, "cannot run diff(1): %s; install diffutils", strerror(-r));
        }
        free(v);
        later_free(&l);
        return r;
}

int txbox_diff_ex(struct txbox_ws *ws, const char *id, const struct txbox_diff_opts *opts, char **out,
                  char **notes, struct txbox_error *err)
{
        static const struct txbox_diff_opts none = {0};
        const struct txbox_diff_opts *o = opts ? opts : &none;
        struct txbox_record rec = {0};
        struct diff_ctx c = {.old_root = -1, .new_root = -1, .dir_fd = -1};
        char *buf = NULL, *nbuf = NULL;
        size_t len = 0, nlen = 0;
        int r;

        *out = NULL;
        if (notes)
                *notes = NULL;
        if (ws->no_state)
                return tx_err(err, ENOENT, "no transaction '%s': there are no transactions in workspace '%s' yet",
                              id, ws->path);
        if ((r = audit_get(ws->audit, id, &rec, err)) < 0)
                return r;
        FILE *f = open_memstream(&buf, &len);
        c.notes = notes ? open_memstream(&nbuf, &nlen) : NULL;
        if (!f) {
                r = tx_err(err, ENOMEM, "out of memory");
                goto out;
        }
        if (o->since) {
                r = diff_since(f, ws, &rec, o, err);
                goto out;
        }
        if ((r = ctx_open(&c, ws, &rec, err)) < 0)
                goto out;
        for (size_t i = 0; i < rec.npaths && r >= 0; i++)
                if (wanted(o->paths, rec.paths[i].path) &&
                    (r = diff_path(f, &c, rec.paths[i].path, rec.paths[i].change)) < 0)
                        r = tx_err(err, -r, "cannot run diff(1): %s; install diffutils", strerror(-r));
out:
        if (f)
                fclose(f);
        if (c.notes)
                fclose(c.notes);
        ctx_free(&c);
        txbox_record_clear(&rec);
        if (r < 0) {
                free(buf);
                free(nbuf);
                return r;
        }
        *out = buf ? buf : xstrdup("");
        if (notes)
                *notes = nbuf && *nbuf ? nbuf : (free(nbuf), NULL);
        else
                free(nbuf);
        return 0;
}

int txbox_diff(struct txbox_ws *ws, const char *id, char **out, struct txbox_error *err)
{
        return txbox_diff_ex(ws, id, NULL, out, NULL, err);
}
