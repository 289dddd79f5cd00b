/* What becomes of an evaluated transaction: first-committer-wins conflicts, the commit
 * (journal, one sync, renames, marker, row), rollback, keep and abort, the settle entries
 * that stand for a sync not yet made, and the decision after a run (txbox_tx_finish).
 * The transaction itself (begin, run, evaluate) is in tx.c. */
#define _GNU_SOURCE
#include "txn/tx.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/failpoint.h"
#include "base/fileio.h"
#include "base/mem.h"
#include "base/rmtree.h"
#include "base/strv.h"
#include "base/trace.h"
#include "store/journal.h"
#include "txbox.h"

/* ---- settle: a commit is decided once its journal is durable (recovery completes it from
 * there), so it syncs once, before its first rename, not again after the last.  Until a
 * later sync covers the renames (the next commit's, by any process), the commit keeps an
 * entry in state/settle named after the boot: only a reboot can lose what the kernel
 * holds, and recovery completes the commits of earlier boots (txbox_recover). ---- */

static bool settle_name(const char *name, const char **id)
{
        const char *b = boot_id();
        size_t n = strlen(b);
        if (!n || strncmp(name, b, n) != 0 || name[n] != '.')
                return false;
        *id = name + n + 1;
        return true;
}

bool ws_is_settle_of_other_boot(const char *name, const char **id)
{
        const char *dot = strchr(name, '.');
        if (name[0] == '.' || !dot || settle_name(name, id))
                return false;
        *id = dot + 1;
        return true;
}

/* This boot's entries now: the commit's sync about to come covers them. */
static void settle_list(struct txbox_ws *ws, struct strvec *names)
{
        DIR *d = dir_stream(ws->settle_fd);
        struct dirent *de;
        const char *id;

        if (!d)
                return;
        while ((de = readdir(d)))
                if (settle_name(de->d_name, &id))
                        strvec_push(names, xstrdup(de->d_name));
        closedir(d);
}

static void settle_done(struct txbox_ws *ws, struct strvec *names)
{
        for (size_t i = 0; i < names->n; i++)
                unlinkat(ws->settle_fd, names->v[i], 0);
        strvec_clear(names);
}

/* Leave the claim of a commit that renamed entries as its settle entry. */
static void settle(struct txbox_tx *tx)
{
        char name[128];

        snprintf(name, sizeof(name), "%s.%s", boot_id(), tx->rec.id);
        if (!boot_id()[0] || renameat(tx->ws->active_fd, tx->rec.id, tx->ws->settle_fd, name) < 0) {
                /* Without an entry nothing would complete it after a crash: sync now.  When
                 * even that fails, the claim stays: recovery finds it as after a crash here
                 * and completes the commit from its journal (replaying it is idempotent). */
                if (syncfs(tx->ws->ws_fd) == 0)
                        unlinkat(tx->ws->active_fd, tx->rec.id, 0);
        }
        closep(&tx->lock_fd);
}

/* Is trash entry NAME (ID.upper, ID.work) the layer of a commit not settled yet?  It stays
 * until it is: a file system that reorders could keep its removal and lose renames out of
 * it.  A commit moves its layers here, then its claim from active/ to settle/ (one rename):
 * while the claim is still in active/ (a commit finishing, in this process or another), the
 * layers stay too.  Looked up in that order, one of the two is always seen. */
bool ws_unsettled_layer(struct txbox_ws *ws, const char *name)
{
        const char *dot = strchr(name, '.');
        char s[128];

        if (!dot)
                return false;
        snprintf(s, sizeof(s), "%.*s", (int)(dot - name), name);
        if (faccessat(ws->active_fd, s, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                return true;
        if (!boot_id()[0])
                return false;
        snprintf(s, sizeof(s), "%s.%.*s", boot_id(), (int)(dot - name), name);
        return faccessat(ws->settle_fd, s, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* ---- commit, rollback, keep ---- */

static void set_message(struct txbox_tx *tx, const char *msg)
{
        free(tx->rec.message);
        tx->rec.message = xstrdup_or_null(msg);
}

static int record_outcome(struct txbox_tx *tx, enum txbox_outcome o, struct txbox_error *err)
{
        /* The overlay is mounted volatile (no sync per copy-up, none at unmount): a layer that
         * outlives this process, for a later commit or the session's next command, is made
         * durable here, in one sync. */
        if (o == TXBOX_PENDING && tx->dir_fd >= 0 && syncfs(tx->dir_fd) < 0)
                return tx_err(err, errno, "cannot sync the layers of tx %s: %s", tx->rec.id, strerror(errno));
        tx->rec.outcome = o;
        tx->rec.ended_ms = now_ms();
        tx->rec.duration_ms = (mono_us() - tx->t0_us) / 1000;
        if (tx->log_copy)
                tx_log_flush(tx, err); /* failed: inserted below, with the outcome */
        if (tx->in_log) {
                int r = tx->paths_in_log ? audit_update_row(tx->ws->audit, &tx->rec, err)
                                         : audit_update(tx->ws->audit, &tx->rec, err);
                if (r == 0 && o == TXBOX_COMMITTED)
                        ws_note_commit_seq(tx->ws, tx->rec.commit_seq);
                return r;
        }
        int r = audit_insert(tx->ws->audit, &tx->rec, err); /* ended before it ran (denied) */
        tx->in_log = r == 0;
        return r;
}

/* The transaction ends as o (or stays pending) in its record and its state.  A rollback or
 * a refusal has removed the layers already: it is what it is whether or not its row could
 * be written (recovery rolls back a transaction without layers).  A commit whose row could
 * not be written is the caller's to hand to recovery. */
static int finish_record(struct txbox_tx *tx, enum txbox_outcome o, struct txbox_error *err)
{
        int r = record_outcome(tx, o, err);

        if (o == TXBOX_ROLLED_BACK)
                tx_move(tx, TX_ROLLED_BACK);
        else if (o == TXBOX_DENIED)
                tx_move(tx, TX_DENIED);
        else if (r == 0)
                tx_move(tx, o == TXBOX_COMMITTED ? TX_COMMITTED : TX_PENDING);
        return r;
}

/* Leave only what undo needs: the journal, the marker and the originals. */
static void drop_layers(struct txbox_tx *tx)
{
        char as[64];

        snprintf(as, sizeof(as), "%s.upper", tx->rec.id);
        ws_trash(tx->ws, tx->dir_fd, "upper", as);
        snprintf(as, sizeof(as), "%s.work", tx->rec.id);
        ws_trash(tx->ws, tx->dir_fd, "work", as);
}

static int64_t ctime_ns(const struct stat *st)
{
        return (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/* Has the live entry an op replaces, deletes or creates changed since the transaction
 * began?  (Directories' ctime moves when their entries change: a directory this
 * transaction deletes or replaces conflicts with any change beneath it, as it should.)
 * An op that creates a path the workspace lacks conflicts when the path was there after
 * begin: its upper entry was copied up from it, and the parent directory changed since
 * (a delete moves its ctime; checked first, it spares the xattr look-up for every file a
 * build adds to a directory left alone).  Without that, an append to a file deleted
 * outside txbox while the command ran brought the file back.  UPPER is -1 when an origin
 * cannot tell (changeset_copied_up, changeset_deletes): then such a delete goes unseen
 * (docs/DESIGN.md, "Conflicts"). */
static bool live_changed(struct txbox_tx *tx, int upper, const struct cs_op *o)
{
        struct stat st, pst;
        const char *base;
        _cleanup_close_ int dir = open_parent_beneath(tx->ws->ws_fd, o->path, &base);

        if (dir < 0)
                return true; /* its parent went away or became a symlink */
        bool exists = fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (o->kind == CS_OP_CHMOD)
                return !exists || (st.st_mode & 07777) != (o->old_mode & 07777);
        if (!o->has_old)
                return exists || (upper >= 0 && (fstat(dir, &pst) < 0 || ctime_ns(&pst) >= tx->begin_ns) &&
                                  changeset_copied_up(upper, o->path));
        return !exists || ctime_ns(&st) >= tx->begin_ns || (st.st_mode & S_IFMT) != (o->old_mode & S_IFMT);
}

/* First committer wins: refuse when a path this transaction changes was changed in the live
 * workspace after it began, by a transaction (audit log) or by anyone else (ctime). */
static int check_conflicts(struct txbox_tx *tx, int upper, struct txbox_error *err)
{
        struct strvec bad = {0};
        char list[600] = "";
        size_t nw = tx->rec.npaths + tx->cs.touched.n;
        struct txbox_path *written = xcalloc(nw + 1, sizeof(*written));

        /* Written = changed, or rewritten with the content that is live now. */
        memcpy(written, tx->rec.paths, tx->rec.npaths * sizeof(*written));
        for (size_t i = 0; i < tx->cs.touched.n; i++)
                written[tx->rec.npaths + i] = (struct txbox_path){tx->cs.touched.v[i], TXBOX_MODIFIED};
        int r = audit_later_overlaps(tx->ws->audit, tx->begin_seq, written, nw, &bad, err);
        free(written);
        if (r < 0)
                return r;
        if (changeset_deletes(&tx->cs))
                upper = -1; /* an origin may be a moved entry's (live_changed) */
        for (size_t i = 0; i < tx->cs.nops && bad.n < 20; i++)
                if (!strvec_lists_path(&bad, tx->cs.ops[i].path) && live_changed(tx, upper, &tx->cs.ops[i]))
                        strvec_push(&bad, xasprintf("%s (changed since tx %s began)", tx->cs.ops[i].path,
                                                    tx->rec.id));
        for (size_t i = 0; i < tx->cs.touched.n && bad.n < 20; i++) {
                struct cs_op o = {.path = tx->cs.touched.v[i], .kind = CS_OP_SWAP, .has_old = true};
                struct stat st;
                if (lstat_beneath(tx->ws->ws_fd, o.path, &st) == 0)
                        o.old_mode = st.st_mode;
                if (!strvec_lists_path(&bad, o.path) && live_changed(tx, upper, &o))
                        strvec_push(&bad, xasprintf("%s (changed since tx %s began)", o.path, tx->rec.id));
        }
        if (!bad.n)
                return 0;
        for (size_t i = 0; i < bad.n && i < 8; i++)
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", bad.v[i]);
        r = tx_err(err, EAGAIN, "conflict: %s%s; nothing was applied and running the command again is safe",
                   list, bad.n > 8 ? ", ..." : "");
        strvec_clear(&bad);
        return r;
}

static int commit_locked(struct txbox_tx *tx, struct txbox_error *err)
{
        _cleanup_close_ int upper =
                openat(tx->dir_fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int undo = -1;
        enum txbox_outcome before = tx->rec.outcome;
        struct txbox_error e2;
        struct strvec settled = {0};
        int r;

        if (upper < 0)
                return tx_err(err, errno, "cannot open the upper layer of tx %s: %s", tx->rec.id,
                              strerror(errno));
        if ((r = check_conflicts(tx, upper, err)) < 0)
                return r;
        trace_mark("commit: conflicts checked");
        if (tx->cs.nops == 0) {
                /* Nothing to apply (ls, grep, a build that wrote nothing): no journal, no
                 * marker, no sync; the audit row is the whole commit. */
                if ((r = audit_next_commit_seq(tx->ws->audit, &tx->rec.commit_seq, err)) < 0)
                        return r;
                if (before == TXBOX_PENDING)
                        set_message(tx, NULL);
                return finish_record(tx, TXBOX_COMMITTED, err);
        }
        if ((r = changeset_prepare(upper, &tx->cs, tx->dir_fd, err)) < 0)
                return r;
        if ((mkdirat(tx->dir_fd, "undo", 0700) < 0 && errno != EEXIST) ||
            (undo = openat(tx->dir_fd, "undo", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                return tx_err(err, errno, "cannot create the undo area of tx %s: %s", tx->rec.id,
                              strerror(errno));
        /* One filesystem sync: it makes the journal and the new files' contents (the overlay
         * is volatile) durable before the first rename, and the commit with them: from here
         * recovery completes it.  The renames need no sync of their own (see settle()).
         * The log row goes first, with the paths and the exit status: recovery completes a
         * commit from its journal and this row. */
        tx->rec.outcome = TXBOX_COMMITTING;
        tx_move(tx, TX_COMMITTING);
        if ((r = audit_update(tx->ws->audit, &tx->rec, err)) < 0)
                goto unrecord;
        tx->paths_in_log = true;
        if ((r = journal_write(tx->dir_fd, "journal", tx->cs.ops, tx->cs.nops, false, err)) < 0)
                goto unrecord;
        settle_list(tx->ws, &settled);
        if ((r = failpoint("commit")) < 0 || (syncfs(tx->dir_fd) < 0 && (r = -errno))) {
                tx_err(err, -r, "cannot sync the commit journal of tx %s: %s", tx->rec.id, strerror(-r));
                unlinkat(tx->dir_fd, "journal", 0);
                strvec_clear(&settled);
                goto unrecord;
        }
        settle_done(tx->ws, &settled); /* earlier commits' renames: covered by this sync */
        trace_mark("commit: journal synced");
        struct journal_progress pg = {tx->ws->progress, tx->ws->progress_ctx, "committing"};
        if ((r = journal_apply(tx->ws->ws_fd, upper, undo, tx->cs.ops, tx->cs.nops, "commit", &pg, false,
                               err)) < 0)
                goto revert;
        trace_mark("commit: applied");
        /* The marker says every op was applied; recovery applies the journal again all the
         * same (idempotent): a file system may keep the marker and lose a rename.  It holds
         * the commit's sequence number, for a log that lost the row (logrepair.c). */
        if ((r = audit_next_commit_seq(tx->ws->audit, &tx->rec.commit_seq, err)) < 0)
                goto revert;
        if ((r = failpoint("commit")) < 0 ||
            (r = ws_write_commit_marker(tx->dir_fd, tx->rec.commit_seq)) < 0) {
                tx_err(err, -r, "cannot write the commit marker of tx %s: %s", tx->rec.id, strerror(-r));
                unlinkat(tx->dir_fd, "committed", 0);
                goto revert;
        }
        (void)failpoint("commit"); /* past the marker: only a crash is of interest */
        gc_note(tx->ws, tx->rec.id);
        trace_mark("commit: marked");
        tx_stamp_changes(tx->ws->state_fd); /* before the row: see write_snapshot in tx.c */
        if (before == TXBOX_PENDING)
                set_message(tx, NULL); /* "is pending: txbox commit ..." no longer holds */
        if ((r = finish_record(tx, TXBOX_COMMITTED, err)) < 0)
                tx_move(tx, TX_STUCK); /* applied and marked, the row not written (a full disk): recovery's */
        return r;
revert:; /* a label needs a statement before the declaration below (C11; clang holds to it) */
        /* Put the workspace back as it was; the error above is what the user needs to see.
         * The journal becomes "revert" first, or recovery would complete the commit; when
         * even the revert fails it stays, and recovery finishes the job.  (Should the rename
         * fail too, a crash from here on leaves a journal: completed by recovery, also whole.) */
        const char *plan = renameat(tx->dir_fd, "journal", tx->dir_fd, "revert") == 0 ? "revert" : "journal";
        if (journal_revert(tx->ws->ws_fd, upper, undo, tx->cs.ops, tx->cs.nops, &e2) < 0) {
                tx_move(tx, TX_STUCK);
                return tx_err_wrap(err, "%s; the workspace is being restored by 'txbox recover'", e2.msg);
        }
        unlinkat(tx->dir_fd, plan, 0);
unrecord:
        tx->rec.outcome = before;
        tx->rec.commit_seq = 0;
        tx_move(tx, TX_EVALUATED); /* nothing of it applied */
        if (tx->paths_in_log)
                audit_update_row(tx->ws->audit, &tx->rec, &e2);
        else
                audit_update(tx->ws->audit, &tx->rec, &e2);
        tx->paths_in_log = false;
        return r;
}

int txbox_tx_commit(struct txbox_tx *tx, struct txbox_error *err)
{
        int r;

        if (tx->state != TX_EVALUATED && (r = txbox_tx_evaluate(tx, err)) < 0)
                return r;
        if (tx->cs.nviolations)
                return tx_err(err, EPERM, "tx %s broke rule %s on '%s' (%s); it cannot be committed",
                              tx->rec.id, tx->cs.violations[0].rule, tx->cs.violations[0].path,
                              tx->cs.violations[0].detail);
        if ((r = ws_lock(tx->ws, err)) < 0)
                return r;
        r = commit_locked(tx, err);
        ws_unlock(tx->ws);
        trace_mark("commit: recorded");
        if (r < 0 && tx->state == TX_STUCK)
                closep(&tx->lock_fd); /* leave active/ID for recovery */
        if (r < 0 && tx->state != TX_STUCK && tx->rec.outcome == TXBOX_PENDING &&
            faccessat(tx->dir_fd, "prepared", F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
                /* It failed (a full disk) after its layer was prepared: that layer no longer
                 * says what the program did and can never be judged again (changeset_prepare),
                 * so the transaction cannot stay pending.  Nothing of it was applied. */
                struct txbox_error e2;
                _cleanup_free_ char *why = xasprintf("its commit failed after its layer was prepared (%s); "
                                                     "nothing of it was applied", err->msg);
                if (txbox_tx_rollback(tx, why, &e2) < 0)
                        return tx_err_wrap(err, "tx %s could not be rolled back (%s) after its commit failed",
                                           tx->rec.id, e2.msg);
                return tx_err_wrap(err, "tx %s was rolled back, nothing of it applied (its layer had been "
                                   "prepared for the commit and cannot be judged again; run the command "
                                   "again) after its commit failed",
                                   tx->rec.id);
        }
        if (r < 0)
                return r;
        /* A commit that changed nothing leaves nothing to undo: its directory goes whole
         * (it used to stay behind with its begin file, one per read-only command). */
        if (tx->cs.nops == 0 && !tx->sp)
                ws_trash(tx->ws, tx->ws->tx_fd, tx->rec.id, tx->rec.id);
        else
                drop_layers(tx);
        if (tx->cs.nops)
                settle(tx);
        else
                tx_release(tx);
        return 0;
}

int txbox_tx_rollback(struct txbox_tx *tx, const char *message, struct txbox_error *err)
{
        sandbox_abort(TAKE_PTR(tx->sb)); /* its init may still be mounting the layers */
        if (tx->state == TX_STUCK) /* a commit recovery finishes: its directory and claim are recovery's */
                return tx_err(err, EAGAIN, "tx %s is left to 'txbox recover'", tx->rec.id);
        /* Removed at once, not trashed: what a failed program wrote can be big, and its
         * space is the user's again when the command returns.  A pending one (a session,
         * run --commit=keep) leaves tx/ in one rename first: a removal cut short must not
         * leave part of it to commit (recovery rolls back a pending tx without layers). */
        char gone[64];
        snprintf(gone, sizeof(gone), "%s.rollback", tx->rec.id);
        bool out = tx->rec.outcome == TXBOX_PENDING && tx->ws->trash_fd >= 0 &&
                   renameat2(tx->ws->tx_fd, tx->rec.id, tx->ws->trash_fd, gone, RENAME_NOREPLACE) == 0;
        if (out)
                (void)failpoint("abort"); /* out of tx/: only a crash is of interest */
        int r = out ? rm_rf_at(tx->ws->trash_fd, gone) : rm_rf_at(tx->ws->tx_fd, tx->rec.id);
        if (r < 0)
                return tx_err(err, -r, "cannot remove the layers of tx %s in '%s/tx': %s", tx->rec.id,
                              tx->ws->state, strerror(-r));
        if (message)
                set_message(tx, message);
        r = finish_record(tx, TXBOX_ROLLED_BACK, err);
        tx_release(tx);
        return r;
}

int txbox_tx_abort(struct txbox_tx *tx, const char *message, struct txbox_error *err)
{
        if (!tx->sp)
                return txbox_tx_rollback(tx, message, err);
        int r = tx_session_end_savepoint(tx, TXBOX_SP_DROPPED, err);
        if (message)
                set_message(tx, message);
        return r;
}

int tx_finish_denied(struct txbox_tx *tx, struct txbox_error *err)
{
        sandbox_abort(TAKE_PTR(tx->sb)); /* its init may still be mounting the layers */
        int r = tx->sp ? 0 : rm_rf_at(tx->ws->tx_fd, tx->rec.id);
        if (tx->sp) {
                /* A refused command in a session drops only its (empty) savepoint. */
                char *msg = xstrdup(tx->rec.message);
                r = tx_session_end_savepoint(tx, TXBOX_SP_DENIED, err);
                free(tx->rec.message);
                tx->rec.message = msg;
                return r;
        }
        if (r < 0)
                return tx_err(err, -r, "cannot remove the layers of tx %s: %s", tx->rec.id, strerror(-r));
        r = finish_record(tx, TXBOX_DENIED, err);
        tx_release(tx);
        return r;
}

int txbox_tx_keep(struct txbox_tx *tx, struct txbox_error *err)
{
        int r = finish_record(tx, TXBOX_PENDING, err);
        if (r == 0)
                tx_release(tx);
        return r;
}

/* ---- the decision after a run ---- */

static const char *violation_line(struct txbox_tx *tx)
{
        const struct txbox_violation *v = &tx->rec.violations[0];
        free(tx->rec.message);
        tx->rec.message = xasprintf("rolled back tx %s: rule %s broken by '%s' (%s)%s", tx->rec.id, v->rule,
                                    v->path, v->detail, tx->rec.nviolations > 1 ? " and more" : "");
        return tx->rec.message;
}

static int decide(struct txbox_tx *tx, enum txbox_commit_mode mode, const struct txbox_run_result *res,
                  int *status, struct txbox_error *err)
{
        bool ok = res->exit_code == 0 && !res->signal && !res->timed_out;
        size_t n = tx->rec.npaths;
        int r;

        *status = res->timed_out ? TXBOX_EXIT_TIMEOUT
                  : res->signal  ? TXBOX_EXIT_SIGNAL + res->signal
                                 : res->exit_code;
        if (res->cancelled) { /* whatever the mode: a cancelled command leaves nothing */
                free(tx->rec.message);
                tx->rec.message =
                        xasprintf("rolled back tx %s: the run was cancelled%s (%zu change%s discarded)",
                                  tx->rec.id, res->cancel_signal ? " by a signal to txbox" : " by the client",
                                  n, n == 1 ? "" : "s");
                return txbox_tx_rollback(tx, NULL, err);
        }
        if (res->cut_short[0]) { /* whatever the mode: half a rename must not be committed */
                free(tx->rec.message);
                tx->rec.message = xasprintf("rolled back tx %s: %s (%zu change%s discarded)", tx->rec.id,
                                            res->cut_short, n, n == 1 ? "" : "s");
                if (ok)
                        *status = TXBOX_EXIT_TXBOX;
                return txbox_tx_rollback(tx, NULL, err);
        }
        if (res->timed_out) {
                free(tx->rec.message);
                tx->rec.message = xasprintf("rolled back tx %s: the program ran past the timeout and was "
                                            "killed (%zu change%s discarded)",
                                            tx->rec.id, n, n == 1 ? "" : "s");
                return txbox_tx_rollback(tx, NULL, err);
        }
        if (mode == TXBOX_COMMIT_KEEP) {
                if (n || tx->rec.nviolations) {
                        free(tx->rec.message);
                        tx->rec.message = xasprintf(
                                "tx %s is pending with %zu change%s: txbox commit %s or txbox rollback %s",
                                tx->rec.id, n, n == 1 ? "" : "s", tx->rec.id, tx->rec.id);
                }
                return txbox_tx_keep(tx, err);
        }
        if (mode == TXBOX_COMMIT_DISCARD) {
                free(tx->rec.message);
                tx->rec.message = xasprintf("discarded tx %s as asked (%zu change%s)", tx->rec.id, n,
                                            n == 1 ? "" : "s");
                return txbox_tx_rollback(tx, NULL, err);
        }
        if (tx->rec.nviolations) {
                violation_line(tx);
                if (ok)
                        *status = TXBOX_EXIT_EFFECT;
                return txbox_tx_rollback(tx, NULL, err);
        }
        if (!ok) {
                if (res->limit_hit[0]) {
                        /* Name the limit, not the SIGKILL that enforced it. */
                        free(tx->rec.message);
                        tx->rec.message =
                                xasprintf("rolled back tx %s: the program was stopped at its %s limit: %s "
                                          "(%zu change%s discarded)",
                                          tx->rec.id, res->limit_hit, res->limit_detail, n,
                                          n == 1 ? "" : "s");
                } else if (n) {
                        free(tx->rec.message);
                        tx->rec.message = xasprintf(
                                "rolled back tx %s: the program %s %d (%zu change%s discarded)", tx->rec.id,
                                res->signal ? "was killed by signal" : "exited with status",
                                res->signal ? res->signal : res->exit_code, n, n == 1 ? "" : "s");
                }
                return txbox_tx_rollback(tx, NULL, err);
        }
        if ((r = txbox_tx_commit(tx, err)) < 0 && tx->lock_fd >= 0) {
                struct txbox_error e2;
                free(tx->rec.message);
                tx->rec.message = xasprintf("rolled back tx %s: %s%s", tx->rec.id,
                                            r == -EAGAIN ? "" : "commit failed: ", err->msg);
                txbox_tx_rollback(tx, NULL, &e2);
                if (r == -EAGAIN) {
                        *status = TXBOX_EXIT_CONFLICT;
                        return 0;
                }
        }
        return r;
}

/* A savepoint is kept when its command succeeded (and auto or keep was asked), else dropped;
 * the session stays pending either way. */
static int decide_savepoint(struct txbox_tx *tx, enum txbox_commit_mode mode,
                            const struct txbox_run_result *res, int *status, struct txbox_error *err)
{
        bool ok = res->exit_code == 0 && !res->signal && !res->timed_out && !res->cancelled &&
                  !res->cut_short[0] && !tx->rec.nviolations;
        bool keep = ok && mode != TXBOX_COMMIT_DISCARD;

        *status = res->timed_out ? TXBOX_EXIT_TIMEOUT
                  : res->signal  ? TXBOX_EXIT_SIGNAL + res->signal
                                 : res->exit_code;
        if (res->exit_code == 0 && !res->signal && tx->rec.nviolations)
                *status = TXBOX_EXIT_EFFECT;
        int r = tx_session_end_savepoint(tx, keep ? TXBOX_SP_KEPT : TXBOX_SP_DROPPED, err);
        if (r == 0 && !keep) {
                char *m = xasprintf(
                        "savepoint %d of session %s dropped: %s; the session keeps its earlier savepoints",
                        tx->sp, tx->rec.id,
                        res->cancelled                 ? "the run was cancelled"
                        : res->cut_short[0]            ? res->cut_short
                        : res->timed_out               ? "the program ran past the timeout"
                        : res->limit_hit[0]            ? "the program was stopped at a resource limit"
                        : tx->rec.nviolations          ? "an effect rule was broken"
                        : mode == TXBOX_COMMIT_DISCARD ? "discarded as asked"
                                                       : "the program failed");
                free(tx->rec.message);
                tx->rec.message = m;
        }
        return r;
}

int txbox_tx_finish(struct txbox_tx *tx, enum txbox_commit_mode mode, const struct txbox_run_result *res,
                    int *status, const char **why, struct txbox_error *err)
{
        int r;

        txbox_tx_set_result(tx, res);
        if (why)
                *why = NULL;
        if ((r = txbox_tx_evaluate(tx, err)) < 0) {
                struct txbox_error e2;
                txbox_tx_rollback(tx, err->msg, &e2);
                *status = TXBOX_EXIT_TXBOX;
                return r;
        }
        trace_mark("evaluated");
        r = tx->sp ? decide_savepoint(tx, mode, res, status, err) : decide(tx, mode, res, status, err);
        trace_mark("decided");
        if (r < 0) {
                *status = TXBOX_EXIT_TXBOX;
                return r;
        }
        if (why && tx->rec.message && (*status != 0 || (tx->rec.outcome == TXBOX_PENDING && !tx->sp)))
                *why = tx->rec.message;
        return 0;
}
