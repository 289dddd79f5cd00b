/* Undo of committed transactions and recovery of interrupted ones. */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/failpoint.h"
#include "base/fileio.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/rmtree.h"
#include "base/str.h"
#include "base/strv.h"
#include "store/journal.h"
#include "store/record.h"
#include "txbox.h"
#include "txn/tx.h"

static int open_subdir(int dirfd, const char *name, bool create)
{
        if (create && mkdirat(dirfd, name, 0700) < 0 && errno != EEXIST)
                return -errno;
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static bool has_file(int dirfd, const char *name)
{
        struct stat st;
        return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Is the live entry still what the commit put there?  Renames keep inode and mtime, so any
 * later write, replacement, deletion or chmod shows. */
static bool live_untouched(int ws_fd, const struct cs_op *o, bool *unreachable)
{
        struct stat st;
        const char *base;
        _cleanup_close_ int dir = open_parent_beneath(ws_fd, o->path, &base);

        *unreachable = dir == -EACCES;
        if (dir < 0)
                return false;
        int r = fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW);
        *unreachable = r < 0 && errno == EACCES;
        if (o->kind == CS_OP_CHMOD)
                return r == 0 && (st.st_mode & 07777) == (o->new_mode & 07777);
        if (!o->has_new)
                return r < 0 && errno == ENOENT;
        if (r < 0 || st.st_ino != o->new_ino || (st.st_mode & S_IFMT) != (o->new_mode & S_IFMT))
                return false;
        if (S_ISDIR(st.st_mode)) /* its entries: check_moved_dirs */
                return (st.st_mode & 0777) == (o->new_mode & 0777);
        int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        return st.st_size == o->new_size && mt == o->new_mtime_ns;
}

/* ---- what a directory the commit moved in holds now, against its manifest ---- */

#define UNDO_MAX_NAMED 20 /* paths named in a refusal; more only flood it */

struct tree_check {
        const struct cs_manifest *mf;
        struct strvec *bad;
        size_t seen; /* manifest entries found as they were */
};

static void named(struct strvec *bad, const char *path, const char *why)
{
        if (bad->n < UNDO_MAX_NAMED && !strvec_lists_path(bad, path))
                strvec_push(bad, xasprintf("%s (%s)", path, why));
}

/* Manifest entries beneath prefix ("dir/"): they are contiguous in its sorted order. */
static size_t manifest_range(const struct cs_manifest *mf, const char *prefix, size_t *first)
{
        size_t lo = 0, hi = mf->n, len = strlen(prefix);

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(mf->e[mid].path, prefix) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *first = lo;
        for (hi = lo; hi < mf->n && !strncmp(mf->e[hi].path, prefix, len); hi++)
                ;
        return hi - lo;
}

static bool as_committed(const struct cs_manifest_entry *e, const struct stat *st)
{
        int64_t mt = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
        if (e->ino != st->st_ino || e->mode != (st->st_mode & (S_IFMT | 07777)))
                return false;
        return S_ISDIR(st->st_mode) || (e->size == st->st_size && e->mtime_ns == mt);
}

static void check_tree(struct tree_check *tc, int dirfd, const char *path, int depth);

static void check_entry(struct tree_check *tc, int dirfd, const char *name, const char *path, int depth)
{
        _cleanup_free_ char *child = xasprintf("%s/%s", path, name);
        const struct cs_manifest_entry *e = cs_manifest_find(tc->mf, child);
        struct stat st;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return; /* gone meanwhile: counted as missing */
        if (!e || !as_committed(e, &st)) {
                named(tc->bad, child, e ? "changed outside txbox" : "made outside txbox");
                return;
        }
        tc->seen++;
        if (!S_ISDIR(st.st_mode))
                return;
        _cleanup_close_ int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) {
                check_tree(tc, sub, child, depth + 1);
                return;
        }
        /* Closed as the commit left it (its mode is as committed): nobody wrote in it
         * without opening it first, which changes its mode. */
        _cleanup_free_ char *prefix = xasprintf("%s/", child);
        size_t first;
        tc->seen += manifest_range(tc->mf, prefix, &first);
}

static void check_tree(struct tree_check *tc, int dirfd, const char *path, int depth)
{
        DIR *d = depth <= CS_MAX_DEPTH ? dir_stream(dirfd) : NULL;
        struct dirent *de;

        if (!d) {
                named(tc->bad, path, "cannot be read to compare");
                return;
        }
        while (tc->bad->n < UNDO_MAX_NAMED && (de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        check_entry(tc, dirfd, de->d_name, path, depth);
        closedir(d);
}

/* A directory the commit moved in whole (a new one, or one replacing what was there): undo
 * takes it away, so everything in it must be what the commit put there, at every depth. */
static void check_moved_dir(struct txbox_ws *ws, const struct cs_manifest *mf, const struct cs_op *o,
                            struct strvec *bad)
{
        _cleanup_free_ char *prefix = xasprintf("%s/", o->path);
        _cleanup_close_ int fd = open_beneath(ws->ws_fd, o->path, O_RDONLY | O_DIRECTORY, 0);
        struct tree_check tc = {.mf = mf, .bad = bad};
        size_t first, want = manifest_range(mf, prefix, &first);

        if (fd < 0)
                return; /* live_untouched names it */
        check_tree(&tc, fd, o->path, 1);
        for (size_t i = first; tc.seen < want && i < first + want && bad->n < UNDO_MAX_NAMED; i++) {
                struct stat st;
                if (lstat_beneath(ws->ws_fd, mf->e[i].path, &st) < 0)
                        named(bad, mf->e[i].path, "deleted outside txbox");
        }
}

static void check_moved_dirs(struct txbox_ws *ws, int dir, const struct cs_op *ops, size_t n,
                             struct strvec *bad)
{
        struct cs_manifest mf = {0};
        struct txbox_error e;
        bool loaded = false;
        int r = 0;

        for (size_t i = 0; i < n && bad->n < UNDO_MAX_NAMED; i++) {
                const struct cs_op *o = &ops[i];
                if (o->kind != CS_OP_SWAP || !o->has_new || !S_ISDIR(o->new_mode) ||
                    strvec_lists_path(bad, o->path))
                        continue;
                if (!loaded) {
                        r = journal_manifest_read(dir, "manifest", &mf, &e);
                        loaded = true;
                }
                /* No record, no undo: what is in the directory cannot be told from what
                 * the commit put there. */
                if (r < 0)
                        named(bad, o->path,
                              "what the transaction made in it is not on record (committed by an "
                              "older txbox)");
                else
                        check_moved_dir(ws, &mf, o, bad);
        }
        cs_manifest_free(&mf);
}

/* Is path beneath a directory that the commit closed to its owner (no search or read) and
 * that is still exactly as the commit left it?  Nothing beneath it can be seen, and nothing
 * changed there without opening it first, which changes its mode. */
static bool beneath_closed(int ws_fd, const struct cs_op *ops, size_t n, const char *path)
{
        bool unreachable;
        for (size_t i = 0; i < n; i++)
                if (ops[i].kind == CS_OP_CHMOD &&
                    (ops[i].new_mode & (S_IRUSR | S_IXUSR)) != (S_IRUSR | S_IXUSR) &&
                    path_is_within(path, ops[i].path) && strcmp(path, ops[i].path) &&
                    live_untouched(ws_fd, &ops[i], &unreachable))
                        return true;
        return false;
}

static int undo_conflicts(struct txbox_ws *ws, const struct txbox_record *rec, int dir,
                          const struct cs_op *ops, size_t n, struct txbox_error *err)
{
        struct strvec bad = {0};
        char list[600] = "";
        int r;

        if ((r = audit_later_overlaps(ws->audit, rec->commit_seq, rec->paths, rec->npaths, &bad, err)) < 0)
                return r;
        for (size_t i = 0; i < n && bad.n < UNDO_MAX_NAMED; i++) {
                bool unreachable;
                if (!strvec_lists_path(&bad, ops[i].path) &&
                    !live_untouched(ws->ws_fd, &ops[i], &unreachable) &&
                    !(unreachable && beneath_closed(ws->ws_fd, ops, n, ops[i].path)))
                        strvec_push(&bad, xasprintf("%s (changed outside txbox)", ops[i].path));
        }
        check_moved_dirs(ws, dir, ops, n, &bad);
        if (!bad.n)
                return 0;
        for (size_t i = 0; i < bad.n && i < 8; i++)
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", bad.v[i]);
        r = tx_err(err, EBUSY,
                   "cannot undo tx %s: later changes touched the same paths: %s%s; undo those first "
                   "(txbox log shows them) or restore the paths by hand",
                   rec->id, list, bad.n > 8 ? ", ..." : "");
        strvec_clear(&bad);
        return r;
}

static int find_committed(struct txbox_ws *ws, const char *id, struct txbox_record *rec,
                          struct txbox_error *err)
{
        int r = id ? audit_get(ws->audit, id, rec, err) : audit_newest_committed(ws->audit, rec, err);
        if (r == -ENOENT && !id)
                return tx_err(err, ENOENT,
                              "nothing to undo: no committed transaction in this workspace's log");
        if (r < 0)
                return r;
        if (rec->outcome != TXBOX_COMMITTED)
                return tx_err(err, EINVAL, "transaction %s is %s: only committed transactions can be undone",
                              rec->id, txbox_outcome_name(rec->outcome));
        return 0;
}

struct undo_ctx {
        int dir, undo, redo;
        struct cs_op *ops, *inv;
        size_t n;
};

static void undo_ctx_free(struct undo_ctx *c)
{
        closep(&c->dir);
        closep(&c->undo);
        closep(&c->redo);
        journal_ops_free(c->ops, c->n);
        journal_ops_free(c->inv, c->n);
}

static int undo_ctx_open(struct txbox_ws *ws, const char *id, struct undo_ctx *c, struct txbox_error *err)
{
        memset(c, 0, sizeof(*c));
        c->undo = c->redo = -1;
        if ((c->dir = open_subdir(ws->tx_fd, id, false)) < 0)
                return tx_err(err, -c->dir, "the undo data of tx %s is missing from '%s/tx': %s", id,
                              ws->state, strerror(-c->dir));
        int r = journal_read(c->dir, "journal", &c->ops, &c->n, err);
        if (r < 0)
                return r;
        c->inv = journal_invert(c->ops, c->n);
        if ((c->undo = open_subdir(c->dir, "undo", true)) < 0 ||
            (c->redo = open_subdir(c->dir, "redo", true)) < 0)
                return tx_err(err, EIO, "cannot open the undo area of tx %s in '%s/tx'", id, ws->state);
        return 0;
}

static int undo_locked(struct txbox_ws *ws, const char *id, struct txbox_record *rec, struct txbox_error *err)
{
        struct undo_ctx c;
        int r;

        if ((r = find_committed(ws, id, rec, err)) < 0)
                return r;
        int lock = tx_claim(ws, rec->id, false, err);
        if (lock < 0)
                return lock;
        if (rec->npaths == 0) {
                /* A commit that changed nothing has nothing to put back. */
                rec->outcome = TXBOX_UNDONE;
                r = audit_update(ws->audit, rec, err);
                tx_unclaim(ws, rec->id, lock);
                return r;
        }
        if ((r = undo_ctx_open(ws, rec->id, &c, err)) < 0) {
                if (c.dir < 0 && rec->started_ms <= gc_pruned_through_ms(ws))
                        r = tx_err(err, ENOENT,
                                   "cannot undo tx %s: its undo data was pruned by txbox gc under the "
                                   "workspace's retention (txbox gc --help); its record stays in the log",
                                   rec->id);
                goto out;
        }
        if ((r = undo_conflicts(ws, rec, c.dir, c.ops, c.n, err)) < 0)
                goto out;
        if ((r = gc_note(ws, NULL)) < 0) {
                r = tx_err(err, -r, "cannot start undo of tx %s: cannot write '%s/gc-stale': %s", rec->id,
                           ws->state, strerror(-r));
                goto out;
        }
        if ((r = write_file_atomic_at(c.dir, "undoing", "", 0, true)) < 0) {
                r = tx_err(err, -r, "cannot start undo of tx %s: %s", rec->id, strerror(-r));
                goto out;
        }
        rec->outcome = TXBOX_UNDOING;
        if ((r = audit_update(ws->audit, rec, err)) < 0 ||
            (r = journal_apply(ws->ws_fd, c.undo, c.redo, c.inv, c.n, "undo",
                               &(struct journal_progress){ws->progress, ws->progress_ctx, "undoing"}, true,
                               err)) < 0) {
                struct txbox_error e2;
                int rv = journal_revert(ws->ws_fd, c.undo, c.redo, c.inv, c.n, &e2);
                tx_stamp_changes(ws->state_fd); /* renamed, both ways */
                if (rv == 0) {
                        unlinkat(c.dir, "undoing", 0);
                        rec->outcome = TXBOX_COMMITTED;
                        audit_update(ws->audit, rec, &e2);
                }
                goto out;
        }
        tx_stamp_changes(ws->state_fd); /* before the row: see write_snapshot in tx.c */
        (void)failpoint("undo");
        if ((r = write_file_atomic_at(c.dir, "undone", "", 0, true)) < 0) {
                r = tx_err(err, -r, "cannot finish undo of tx %s: %s", rec->id, strerror(-r));
                goto out;
        }
        rec->outcome = TXBOX_UNDONE;
        r = audit_update(ws->audit, rec, err);
out:
        if (r == 0 || c.dir < 0 || !has_file(c.dir, "undoing") || has_file(c.dir, "undone"))
                tx_unclaim(ws, rec->id, lock);
        else
                close(lock); /* stuck half-way: leave active/ID for recovery */
        undo_ctx_free(&c);
        return r;
}

int txbox_undo(struct txbox_ws *ws, const char *id, struct txbox_record *out, struct txbox_error *err)
{
        struct txbox_record rec = {0};
        int r;

        if ((r = ws_lock(ws, err)) < 0)
                return r;
        r = undo_locked(ws, id, &rec, err);
        ws_unlock(ws);
        if (r == 0 && out)
                *out = rec;
        else
                txbox_record_clear(&rec);
        return r;
}

/* ---- recovery ---- */

static int recover_undo(struct txbox_ws *ws, struct txbox_record *rec, struct txbox_error *err)
{
        struct undo_ctx c;
        int r = undo_ctx_open(ws, rec->id, &c, err);

        if (r == 0 && (r = journal_revert(ws->ws_fd, c.undo, c.redo, c.inv, c.n, err)) == 0) {
                unlinkat(c.dir, "undoing", 0);
                rec->outcome = TXBOX_COMMITTED;
                free(rec->message);
                rec->message = xstrdup(
                        "an interrupted undo was reverted by recovery; the transaction stays committed");
                r = audit_update(ws->audit, rec, err);
        }
        undo_ctx_free(&c);
        return r;
}

/* Replay an interrupted commit's plan (PLAN: "journal", or "revert" for a commit that
 * failed and was being reverted): forward, to complete it, or backward.  Both directions
 * are idempotent.  Forward, a commit whose upper layer is already gone has nothing left to
 * move; -EBADMSG: the plan is incomplete. */
static int replay_commit(struct txbox_ws *ws, struct txbox_record *rec, int dir, const char *plan,
                         bool forward, struct txbox_error *err)
{
        _cleanup_close_ int upper = -1, undo = -1;
        struct cs_op *ops = NULL;
        size_t n = 0;
        int r;

        /* The sweeper may have the layer in the trash, where a file system that reorders can
         * have kept it though some of its renames out were lost. */
        char as[64];
        snprintf(as, sizeof(as), "%s.upper", rec->id);
        if (!has_file(dir, "upper") && ws->trash_fd >= 0)
                renameat(ws->trash_fd, as, dir, "upper");
        upper = open_subdir(dir, "upper", !forward);
        undo = open_subdir(dir, "undo", !forward);
        if (forward && (upper < 0 || undo < 0 || !has_file(dir, plan)))
                return 0;
        if ((r = journal_read(dir, plan, &ops, &n, err)) == 0 && (upper < 0 || undo < 0))
                r = tx_err(err, EIO, "cannot open the layers of tx %s", rec->id);
        if (r == 0)
                r = forward ? journal_apply(ws->ws_fd, upper, undo, ops, n, "recover", NULL, true, err)
                            : journal_revert(ws->ws_fd, upper, undo, ops, n, err);
        journal_ops_free(ops, n);
        if (r < 0 && r != -EBADMSG)
                return tx_err_wrap(err, "%s tx %s", forward ? "complete the commit of" : "recover", rec->id);
        return r;
}

static int set_outcome(struct txbox_ws *ws, struct txbox_record *rec, enum txbox_outcome o, const char *msg,
                       struct txbox_error *err)
{
        rec->outcome = o;
        if (msg) {
                free(rec->message);
                rec->message = xstrdup(msg);
        }
        if (!rec->ended_ms)
                rec->ended_ms = now_ms();
        if (o == TXBOX_COMMITTED && !rec->commit_seq) {
                int r = audit_next_commit_seq(ws->audit, &rec->commit_seq, err);
                if (r < 0)
                        return r;
        }
        int r = audit_update(ws->audit, rec, err);
        if (r == 0 && o == TXBOX_COMMITTED)
                ws_note_commit_seq(ws, rec->commit_seq);
        return r;
}

/* A commit is decided once its journal is durable (its one sync comes before the first
 * rename): complete it, whether it was cut short or finished without a later sync.  An
 * incomplete journal was never synced, so nothing was renamed; a commit that cannot be
 * completed (the live tree changed in its way since) is reverted. */
static int complete_commit(struct txbox_ws *ws, struct txbox_record *rec, int dir, struct txbox_error *err)
{
        bool marked = has_file(dir, "committed");
        int r = replay_commit(ws, rec, dir, "journal", true, err);

        if (r == -EBADMSG) {
                rm_rf_at(ws->tx_fd, rec->id);
                return set_outcome(ws, rec, TXBOX_ROLLED_BACK,
                                   "a commit interrupted before its journal was written was rolled back by "
                                   "recovery; "
                                   "nothing of it was applied",
                                   err)
                               ?: 1;
        }
        if (r < 0) {
                struct txbox_error e2;
                char why[sizeof(err->msg)];
                snprintf(why, sizeof(why), "%s", err->msg);
                if (replay_commit(ws, rec, dir, "journal", false, &e2) < 0)
                        return r;
                rm_rf_at(ws->tx_fd, rec->id);
                _cleanup_free_ char *msg =
                        xasprintf("recovery could not complete an interrupted commit (%s) and "
                                  "reverted it; nothing of it was applied",
                                  why);
                return set_outcome(ws, rec, TXBOX_ROLLED_BACK, msg, err) ?: 1;
        }
        if (!rec->commit_seq)
                rec->commit_seq = ws_read_commit_marker(dir); /* 0: none, or a marker without it */
        if (!marked) {
                if (!rec->commit_seq && (r = audit_next_commit_seq(ws->audit, &rec->commit_seq, err)) < 0)
                        return r;
                ws_write_commit_marker(dir, rec->commit_seq);
        }
        rm_rf_at(dir, "upper");
        rm_rf_at(dir, "work");
        if (rec->outcome == TXBOX_COMMITTED)
                return 0;
        return set_outcome(ws, rec, TXBOX_COMMITTED,
                           marked ? NULL : "an interrupted commit was completed by recovery", err)
                       ?: 2;
}

/* A transaction without a row: its process died before the row was written.  Sealed (its
 * begin file holds the record), its program may have run, its row written beside it: log
 * the run, rolled back; else nothing ran and only the directory goes. */
static int recover_unlogged(struct txbox_ws *ws, const char *id, int dir, struct txbox_error *err)
{
        _cleanup_free_ char *begin = NULL;
        struct txbox_record rec = {.exit_code = -1, .outcome = TXBOX_ROLLED_BACK};
        int r = 0;

        if (dir >= 0 && read_file_at(dir, "begin", BEGIN_MAX, &begin, NULL) == 0 &&
            strlen(id) < sizeof(rec.id) && tx_begin_record(begin, &rec) == 0) {
                snprintf(rec.id, sizeof(rec.id), "%s", id);
                rec.ended_ms = now_ms();
                rec.message = xstrdup("the txbox process running it died before logging it; its changes were "
                                      "discarded by recovery");
                r = audit_insert(ws->audit, &rec, err) ?: 1;
        }
        txbox_record_clear(&rec);
        if (r >= 0)
                rm_rf_at(ws->tx_fd, id);
        return r;
}

/* A pending transaction whose process died: a session mid-step is tidied (a decided fold or
 * rollback --to completed, a savepoint that was not kept dropped) and its row's message
 * made true again.  It stays pending. */
static int recover_pending(struct txbox_ws *ws, struct txbox_record *rec, int dir, struct txbox_error *err)
{
        bool session = has_file(dir, "session") || has_file(dir, "merging");
        int r = tx_session_tidy(dir, "recover");

        if (r < 0)
                return tx_err(err, -r, "cannot recover session %s: %s", rec->id, strerror(-r));
        if (!session)
                return 0;
        _cleanup_free_ char *msg = tx_session_message(rec->id, dir);
        if (rec->message && !strcmp(rec->message, msg))
                return 0;
        /* Its savepoints changed since its row was written (one kept or a rollback --to
         * finished, and the txbox that did it died): the row's net change too. */
        struct changeset net;
        struct txbox_error e2;
        if (has_file(dir, "session") && tx_session_net_at(ws, dir, rec->id, &net, &e2) == 0) {
                record_set_paths(rec, net.paths, net.npaths);
                changeset_free(&net);
        }
        return set_outcome(ws, rec, TXBOX_PENDING, msg, err);
}

/* Bring one abandoned transaction to a whole state.  Returns 1 when the workspace was put
 * back, 2 when a finished commit or undo only needed its audit row, 0 when nothing. */
static int recover_one(struct txbox_ws *ws, const char *id, struct txbox_error *err)
{
        struct txbox_record rec = {0};
        _cleanup_close_ int dir = open_subdir(ws->tx_fd, id, false);
        int r = audit_get(ws->audit, id, &rec, err);

        /* It may change or remove a directory the automatic gc pass lists: that pass checks
         * every directory next time (gc.c).  Should even that fail, its list goes. */
        if (gc_note(ws, NULL) < 0)
                unlinkat(ws->state_fd, "gc", 0);

        if (r == -ENOENT) /* died before its audit row was written */
                return recover_unlogged(ws, id, dir, err);
        if (r < 0)
                return r;
        bool pending = rec.outcome == TXBOX_PENDING;
        if (pending && dir >= 0 && !has_file(dir, "journal") && !has_file(dir, "committed") &&
            has_file(dir, "prepared")) {
                /* Cut short after its layer was (partly) prepared for a commit: that layer can
                 * never be judged again (changeset_prepare), and nothing was applied. */
                rm_rf_at(ws->tx_fd, id);
                r = set_outcome(
                            ws, &rec, TXBOX_ROLLED_BACK,
                            "a commit of it was cut short after its layer was prepared, before its journal "
                            "was written; nothing of it was applied and recovery rolled it back",
                            err)
                            ?: 1;
        } else if (pending && dir >= 0 && !has_file(dir, "journal") && !has_file(dir, "committed"))
                r = recover_pending(ws, &rec, dir, err);
        else if (pending && dir == -ENOENT) {
                /* Its layers left tx/ in one rename: only a rollback does that. */
                r = set_outcome(ws, &rec, TXBOX_ROLLED_BACK,
                                "a rollback was interrupted after its layers had gone: recovery finished it",
                                err) ?: 1;
        } else if (dir >= 0 && has_file(dir, "undoing") && !has_file(dir, "undone"))
                r = recover_undo(ws, &rec, err) ?: 1;
        else if (dir >= 0 && has_file(dir, "undone"))
                r = rec.outcome == TXBOX_UNDONE ? 0 : set_outcome(ws, &rec, TXBOX_UNDONE, NULL, err) ?: 2;
        else if (dir >= 0 && has_file(dir, "revert")) {
                if ((r = replay_commit(ws, &rec, dir, "revert", false, err)) == 0) {
                        rm_rf_at(ws->tx_fd, id);
                        r = set_outcome(
                                    ws, &rec, TXBOX_ROLLED_BACK,
                                    "a commit that failed was interrupted while it was reverted; recovery "
                                    "finished the revert, nothing of it was applied",
                                    err)
                                    ?: 1;
                }
        } else if (dir >= 0 && (has_file(dir, "committed") || has_file(dir, "journal")))
                r = complete_commit(ws, &rec, dir, err);
        else if (rec.outcome == TXBOX_PENDING) {
                r = 0;
        } else if (rec.outcome == TXBOX_RUNNING || rec.outcome == TXBOX_COMMITTING) {
                rm_rf_at(ws->tx_fd, id);
                r = set_outcome(ws, &rec, TXBOX_ROLLED_BACK,
                                "the txbox process running it died; its changes were discarded by recovery",
                                err)
                            ?: 1;
        }
        txbox_record_clear(&rec);
        return r;
}

/* Count what recover_one did (1: put back, 2: completed); 0 to go on. */
static int tally(struct txbox_recover_stats *st, int r)
{
        if (r == 1)
                st->rolled_back++;
        else if (r == 2)
                st->completed++;
        return 0;
}

/* Commits of an earlier boot that no sync had covered: what the kernel held of them may be
 * lost; complete them from their journals (this boot's, the next commit's sync settles). */
static int recover_settle(struct txbox_ws *ws, struct txbox_recover_stats *st, struct txbox_error *err)
{
        DIR *d = dir_stream(ws->settle_fd);
        struct dirent *de;
        const char *id;
        int r = 0;

        if (!d)
                return tx_err(err, errno, "cannot read '%s/settle': %s", ws->state, strerror(errno));
        while ((de = readdir(d))) {
                if (!ws_is_settle_of_other_boot(de->d_name, &id))
                        continue;
                if ((r = recover_one(ws, id, err)) < 0)
                        break;
                if (syncfs(ws->ws_fd) < 0) {
                        r = tx_err(err, errno, "cannot sync the workspace's filesystem: %s", strerror(errno));
                        break;
                }
                unlinkat(ws->settle_fd, de->d_name, 0);
                r = tally(st, r);
        }
        closedir(d);
        return r;
}

/* A hidden claim (.claim-ID-PID, tx_claim) is a claim before its rename into place: one left
 * behind is a process killed between the two.  It is removed when nobody holds its lock and
 * its process is gone (a live claimer may not have locked it yet); nothing else refers to
 * it: the transaction, if it began, is recovered by its row (recover_rows). */
static void drop_stale_hidden_claim(struct txbox_ws *ws, const char *name)
{
        const char *dash = strrchr(name, '-');
        char *end = NULL;
        long pid = dash ? strtol(dash + 1, &end, 10) : 0;

        if (strncmp(name, ".claim-", 7) || pid <= 0 || !end || *end)
                return;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
                return; /* its process lives (or may: EPERM) */
        _cleanup_close_ int fd = openat(ws->active_fd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
                unlinkat(ws->active_fd, name, 0);
}

static int recover_locked(struct txbox_ws *ws, struct txbox_recover_stats *st, struct txbox_error *err)
{
        DIR *d = dir_stream(ws->active_fd);
        struct dirent *de;
        int r = 0;

        if (!d)
                return tx_err(err, errno, "cannot read '%s/active': %s", ws->state, strerror(errno));
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.') {
                        drop_stale_hidden_claim(ws, de->d_name);
                        continue;
                }
                int fd = openat(ws->active_fd, de->d_name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
                        closep(&fd); /* alive: its owner holds the lock */
                        continue;
                }
                r = recover_one(ws, de->d_name, err);
                if (r >= 0)
                        unlinkat(ws->active_fd, de->d_name, 0);
                close(fd);
                if (r < 0)
                        break;
                r = tally(st, r);
        }
        closedir(d);
        return r < 0 ? r : recover_settle(ws, st, err);
}

/* Rows still running, committing or undoing that no live process owns: a live one holds
 * the claim of its transaction (active/ID, flock'd) from before its row is written until
 * after its last; a process that died or could not write that last row (a full disk) left
 * no claim, or one nobody holds.  Claimed here, each is settled as recovery settles a dead
 * owner's. */
static int recover_rows(struct txbox_ws *ws, struct txbox_recover_stats *st, struct txbox_error *err)
{
        static const enum txbox_outcome unsettled[] = {TXBOX_RUNNING, TXBOX_COMMITTING, TXBOX_UNDOING};
        struct txbox_record *recs = NULL;
        size_t n = 0;
        int r = audit_list_outcomes(ws->audit, unsettled, ARRAY_SIZE(unsettled), &recs, &n, err);

        for (size_t i = 0; r >= 0 && i < n; i++) {
                struct txbox_error e2;
                /* The id names files in active/ and tx/: only one txbox could have made. */
                size_t len = strlen(recs[i].id);
                if (len < 4 || strspn(recs[i].id, "0123456789abcdef") != len)
                        continue;
                int lock = tx_claim(ws, recs[i].id, false, &e2);
                if (lock < 0)
                        continue; /* its owner lives */
                r = recover_one(ws, recs[i].id, err);
                tx_unclaim(ws, recs[i].id, lock);
                if (r >= 0)
                        r = tally(st, r);
        }
        txbox_records_free(recs, n);
        return r;
}

static int recover(struct txbox_ws *ws, bool rows, struct txbox_recover_stats *stats, struct txbox_error *err)
{
        struct txbox_recover_stats st = {0};
        int r;

        if ((r = ws_lock(ws, err)) < 0)
                return r;
        r = recover_locked(ws, &st, err);
        if (st.rolled_back || st.completed)
                tx_stamp_changes(ws->state_fd); /* it may have renamed: see write_snapshot in tx.c */
        if (r >= 0 && rows)
                r = recover_rows(ws, &st, err);
        ws_unlock(ws);
        if (stats)
                *stats = st;
        return r;
}

int txbox_recover(struct txbox_ws *ws, struct txbox_recover_stats *stats, struct txbox_error *err)
{
        if (ws->no_state) { /* no transaction ever ran: nothing to recover */
                if (stats)
                        *stats = (struct txbox_recover_stats){0};
                return 0;
        }
        return recover(ws, false, stats, err);
}

int txbox_recover_log(struct txbox_ws *ws, struct txbox_recover_stats *stats, struct txbox_error *err)
{
        if (ws->no_state)
                return txbox_recover(ws, stats, err);
        return recover(ws, true, stats, err);
}
