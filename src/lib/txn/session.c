/* Session transactions: several commands, one savepoint each, committed at once.
 *
 * tx/ID/session      marker: this pending transaction is a session
 * tx/ID/sp/N/upper   savepoint N's layer, for N = 1 .. n without a gap: only these count.
 *                    The overlay of command N stacks the layers of savepoints N-1 .. 1 over
 *                    the workspace as read-only lowers
 * tx/ID/sp/N.new/    savepoint N while its command runs and is judged; it counts only once
 *                    kept: its layer made durable, then one rename to sp/N
 * tx/ID/sp/.gone-X   a savepoint retired (dropped, folded, left over): moved out of the
 *                    numbered range in one rename, then removed; it never counts again
 * tx/ID/drop-to      rollback --to K decided (durable before the first savepoint goes): the
 *                    savepoints above K are retired, from the top down, by whoever finds it
 * tx/ID/merging      marker while commit folds the layers into tx/ID/upper, oldest first,
 *                    each retired once folded: a fold cut short is resumed, and a layer
 *                    half folded folds again to the same result (tx_session_tidy)
 *
 * A crash at any step leaves one of these whole states.  Every load of a pending
 * transaction, and recovery, tidies it first (tx_session_tidy): a decided fold or rollback --to
 * is completed and every name in sp/ that does not count is removed, so that a half-run
 * command, a half-removed savepoint or a number past a gap can never come to count.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/xattr.h>

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
#include "store/record.h"
#include "txbox.h"
#include "txn/tx.h"

#define SESSION_MAX_SAVEPOINTS 64

/* dir + suffix in buf (for short state-dir-relative names). */
static const char *join(char *buf, size_t size, const char *dir, const char *suffix)
{
        snprintf(buf, size, "%s%s", dir, suffix);
        return buf;
}

static bool has_at(int dirfd, const char *name)
{
        struct stat st;
        return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool tx_is_session(const struct txbox_tx *tx) { return tx->dir_fd >= 0 && has_at(tx->dir_fd, "session"); }

/* Savepoints are numbered 1..n without gaps; only these count. */
static int count_savepoints(int dir_fd)
{
        char name[32];
        int n = 0;
        while (n < SESSION_MAX_SAVEPOINTS) {
                snprintf(name, sizeof(name), "sp/%d", n + 1);
                if (!has_at(dir_fd, name))
                        break;
                n++;
        }
        return n;
}

/* name is a savepoint's final name: "1" .. "64", no sign, no leading zero. */
static bool sp_number(const char *name, int *k)
{
        int v = 0;

        if (name[0] < '1' || name[0] > '9')
                return false;
        for (const char *p = name; *p; p++) {
                if (*p < '0' || *p > '9' || (v = v * 10 + (*p - '0')) > SESSION_MAX_SAVEPOINTS)
                        return false;
        }
        *k = v;
        return true;
}

/* Retire sp/NAME: one rename out of the numbered range (it no longer counts from here),
 * then its removal, which a crash may cut short: a dot name is removed by the next tidy. */
static int retire(int sp_fd, const char *name, const char *fp)
{
        char gone[NAME_MAX + 1];
        int r;

        if (snprintf(gone, sizeof(gone), ".gone-%s", name) >= (int)sizeof(gone))
                return rm_rf_at(sp_fd, name); /* not ours (a number never is this long) */
        if ((r = rm_rf_at(sp_fd, gone)) < 0 || (r = failpoint(fp)) < 0)
                return r;
        if (renameat(sp_fd, name, sp_fd, gone) < 0 && errno != ENOENT)
                return -errno;
        if ((r = failpoint(fp)) < 0)
                return r;
        return rm_rf_at(sp_fd, gone);
}

/* Keep savepoints 1..keep and retire everything else in sp/: numbers above keep from the
 * top down (a crash leaves a prefix), staging names, leftovers. */
static int tidy_sp(int dir_fd, int keep, const char *fp)
{
        _cleanup_close_ int sp = openat(dir_fd, "sp", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        bool over[SESSION_MAX_SAVEPOINTS + 1] = {false}, any = false;
        struct strvec names = {0};
        struct dirent *de;
        DIR *d;
        int r = 0, k;

        if (sp < 0)
                return errno == ENOENT && mkdirat(dir_fd, "sp", 0700) == 0 ? 0 : -errno;
        if (!(d = dir_stream(sp)))
                return -errno;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        strvec_push(&names, xstrdup(de->d_name));
        closedir(d);
        for (size_t i = 0; i < names.n && r == 0; i++) {
                const char *name = names.v[i];
                if (sp_number(name, &k)) {
                        over[k] = k > keep;
                        any |= over[k];
                } else if (name[0] == '.')
                        r = rm_rf_at(sp, name);
                else if ((r = retire(sp, name, fp)) == 0)
                        any = true;
        }
        strvec_clear(&names);
        for (k = SESSION_MAX_SAVEPOINTS; k > keep && r == 0; k--) {
                char name[16];
                snprintf(name, sizeof(name), "%d", k);
                if (over[k])
                        r = retire(sp, name, fp);
        }
        return r < 0 ? r : any && fsync(sp) < 0 ? -errno : 0;
}

int txbox_session_begin(struct txbox_ws *ws, struct txbox_record *out, struct txbox_error *err)
{
        char *argv[] = {"txbox", "begin", NULL};
        struct txbox_tx *tx = NULL;
        int r = txbox_tx_begin(ws, argv, &tx, err);

        if (r < 0)
                return r;
        if ((r = tx_seal(tx, err)) < 0) {
                struct txbox_error e2;
                txbox_tx_rollback(tx, NULL, &e2);
        } else if (write_file_atomic_at(tx->dir_fd, "session", "", 0, true) < 0 ||
                   mkdirat(tx->dir_fd, "sp", 0700) < 0) {
                r = tx_err(err, errno, "cannot create session %s in '%s/tx': %s", tx->rec.id, ws->state,
                           strerror(errno));
                struct txbox_error e2;
                txbox_tx_rollback(tx, NULL, &e2);
        } else {
                free(tx->rec.message);
                tx->rec.message = tx_session_message(tx->rec.id, tx->dir_fd);
                r = txbox_tx_keep(tx, err);
        }
        if (r == 0 && out)
                record_copy(out, &tx->rec);
        txbox_tx_free(tx);
        return r;
}

int txbox_session_savepoint(struct txbox_ws *ws, const char *id, char *const argv[], struct txbox_tx **out,
                            struct txbox_error *err)
{
        struct txbox_tx *tx = NULL;
        char dir[32], sub[48];
        int r = txbox_tx_load(ws, id, &tx, err); /* tidied: sp/ holds savepoints 1..n only */

        if (r < 0)
                return r;
        if (!tx_is_session(tx)) {
                r = tx_err(err, EINVAL, "transaction %s is not a session (txbox begin makes one)",
                           tx->rec.id);
                goto fail;
        }
        tx->sp = count_savepoints(tx->dir_fd) + 1;
        if (tx->sp > SESSION_MAX_SAVEPOINTS) {
                r = tx_err(err, E2BIG, "session %s has %d savepoints, the most there can be; commit it",
                           tx->rec.id, SESSION_MAX_SAVEPOINTS);
                goto fail;
        }
        tx_session_dir(tx, dir, sizeof(dir));
        if (mkdirat(tx->dir_fd, dir, 0700) < 0 ||
            mkdirat(tx->dir_fd, join(sub, sizeof(sub), dir, "/upper"), 0755) < 0 ||
            mkdirat(tx->dir_fd, join(sub, sizeof(sub), dir, "/work"), 0700) < 0) {
                r = tx_err(err, errno, "cannot create savepoint %d of session %s: %s", tx->sp, tx->rec.id,
                           strerror(errno));
                goto fail;
        }
        strv_free(tx->sp_argv);
        tx->sp_argv = strv_dup(argv);
        /* The command's own clock; tx->t0_us (txbox_tx_load) runs on, so that the session's
         * time is its commands' time in all. */
        tx->sp_t0_us = mono_us();
        tx->sp_started_ms = now_ms();
        tx->sp_exit = -1;
        tx->sp_signal = 0;
        *out = tx;
        return 0;
fail:
        txbox_tx_free(tx);
        return r;
}

/* Savepoint tx->sp while it runs: its staging directory, which does not count. */
void tx_session_dir(const struct txbox_tx *tx, char *buf, size_t size)
{
        snprintf(buf, size, "sp/%d.new", tx->sp);
}

/* The overlay's layers for savepoint tx->sp: its own upper/work and the lowers beneath. */
void tx_session_layers(const struct txbox_tx *tx, char **upper, char **work, struct strvec *lowers)
{
        const char *base = tx->ws->state;
        *upper = xasprintf("%s/tx/%s/sp/%d.new/upper", base, tx->rec.id, tx->sp);
        *work = xasprintf("%s/tx/%s/sp/%d.new/work", base, tx->rec.id, tx->sp);
        for (int k = tx->sp - 1; k >= 1; k--)
                strvec_push(lowers, xasprintf("%s/tx/%s/sp/%d/upper", base, tx->rec.id, k));
}

/* The session's exit status: 0 once a command of it was kept (a kept command exited 0),
 * else none; what a single command exited with is in its savepoint entry. */
static int session_exit(const struct txbox_record *rec)
{
        for (size_t i = 0; i < rec->nsavepoints; i++)
                if (rec->savepoints[i].outcome == TXBOX_SP_KEPT)
                        return 0;
        return -1;
}

/* The session's paths: the net change of its savepoints (tx_session_net).  Left as they
 * are, with a word in the message, when it cannot be computed. */
static void set_net_paths(struct txbox_tx *tx)
{
        struct changeset net;
        struct txbox_error e;

        if (tx_session_net(tx, &net, &e) < 0) {
                char *m = xasprintf("%s (its net change could not be listed: %s)",
                                    tx->rec.message ? tx->rec.message : "", e.msg);
                free(tx->rec.message);
                tx->rec.message = m;
                return;
        }
        record_set_paths(&tx->rec, net.paths, net.npaths);
        changeset_free(&net);
}

/* The session's row after command tx->sp ended as how: the command is added to its list,
 * and the row says what the session holds now (its net change, exit 0 once a command was
 * kept, its time in all).  The caller's record then says again what the command did (its
 * status, signal, time and own changes), as txbox run --tx, MCP and the agent report it. */
static int write_session_row(struct txbox_tx *tx, enum txbox_sp_outcome how, struct txbox_error *err)
{
        struct txbox_savepoint *sp = record_add_savepoint(&tx->rec, tx->sp_argv);
        int64_t cmd_ms = (mono_us() - tx->sp_t0_us) / 1000;
        struct txbox_path *own = NULL;
        size_t nown = 0;

        sp->n = tx->sp;
        sp->outcome = how;
        sp->exit_code = how == TXBOX_SP_DENIED ? -1 : tx->sp_exit;
        sp->signal = how == TXBOX_SP_DENIED ? 0 : tx->sp_signal;
        sp->started_ms = tx->sp_started_ms;
        sp->duration_ms = cmd_ms;
        if (tx->state == TX_EVALUATED && how != TXBOX_SP_DENIED) {
                own = tx->cs.paths;
                nown = tx->cs.npaths;
        }
        trace_mark("savepoint ended");
        set_net_paths(tx);
        trace_mark("net change listed");
        tx->rec.exit_code = session_exit(&tx->rec);
        tx->rec.signal = 0;
        int r = tx_session_keep(tx, err);
        trace_mark("session row written");
        /* the command's own account, for whoever ran it */
        tx->rec.exit_code = sp->exit_code;
        tx->rec.signal = sp->signal;
        tx->rec.duration_ms = cmd_ms;
        if (own)
                record_set_paths(&tx->rec, own, nown);
        return r;
}

/* Savepoint tx->sp ends: kept when the command succeeded, dropped otherwise (how says
 * which and why).  Kept, its layer is made durable (the overlay is volatile), then it
 * counts, by one rename; the row's sync (finish_record) makes the rename durable before
 * the command returns.  Dropped, it never counted: a crash in its removal leaves a name the
 * next tidy removes. */
int tx_session_end_savepoint(struct txbox_tx *tx, enum txbox_sp_outcome how, struct txbox_error *err)
{
        char dir[32], sub[48], final[32];
        bool keep = how == TXBOX_SP_KEPT;
        int r;

        tx_session_dir(tx, dir, sizeof(dir));
        snprintf(final, sizeof(final), "sp/%d", tx->sp);
        rm_rf_at(tx->dir_fd, join(sub, sizeof(sub), dir, "/work"));
        if (!keep) {
                if ((r = failpoint("savepoint")) < 0 || (r = rm_rf_at(tx->dir_fd, dir)) < 0)
                        return tx_err(err, -r, "cannot drop savepoint %d of session %s: %s", tx->sp,
                                      tx->rec.id, strerror(-r));
        } else if ((r = failpoint("savepoint")) < 0 || (syncfs(tx->dir_fd) < 0 && (r = -errno)) ||
                   (r = failpoint("savepoint")) < 0 ||
                   (renameat(tx->dir_fd, dir, tx->dir_fd, final) < 0 && (r = -errno))) {
                /* Not kept: the session stays as it was before the command. */
                struct txbox_error e2;
                tx_err(err, -r, "cannot keep savepoint %d of session %s: %s", tx->sp, tx->rec.id,
                       strerror(-r));
                rm_rf_at(tx->dir_fd, dir);
                write_session_row(tx, TXBOX_SP_DROPPED, &e2);
                return r;
        }
        if (keep)
                (void)failpoint("savepoint"); /* kept: past the rename only a crash is of interest */
        return write_session_row(tx, how, err);
}

int txbox_session_rollback_to(struct txbox_ws *ws, const char *id, int n, struct txbox_error *err)
{
        struct txbox_tx *tx = NULL;
        char k[16];
        int r = txbox_tx_load(ws, id, &tx, err);

        if (r < 0)
                return r;
        if (!tx_is_session(tx)) {
                txbox_tx_free(tx);
                return tx_err(err, EINVAL, "transaction %s is not a session: --to applies to sessions only",
                              id);
        }
        int have = count_savepoints(tx->dir_fd);
        if (n < 0 || n > have) {
                r = tx_err(err, EINVAL,
                           "session %s has savepoints 1 to %d: --to %d is not one of them (0 drops all)",
                           tx->rec.id, have, n);
                txbox_tx_free(tx); /* after the message: it names tx->rec.id */
                return r;
        }
        /* Decided once drop-to is durable: from there every savepoint above n goes, here or,
         * after a crash, in the next tidy; before it, none went. */
        snprintf(k, sizeof(k), "%d", n);
        if (n < have && ((r = failpoint("rollback")) < 0 ||
                         (r = write_file_atomic_at(tx->dir_fd, "drop-to", k, strlen(k), true)) < 0 ||
                         (r = tx_session_tidy(tx->dir_fd, "rollback")) < 0))
                r = tx_err(err, -r, "cannot drop the savepoints above %d of session %s: %s", n, tx->rec.id,
                           strerror(-r));
        if (r == 0) {
                /* The commands whose savepoints went: rolled back, and out of the net change. */
                for (size_t i = 0; i < tx->rec.nsavepoints; i++)
                        if (tx->rec.savepoints[i].outcome == TXBOX_SP_KEPT && tx->rec.savepoints[i].n > n)
                                tx->rec.savepoints[i].outcome = TXBOX_SP_ROLLED_BACK;
                tx->sp = n;
                set_net_paths(tx);
                tx->rec.exit_code = session_exit(&tx->rec);
                r = tx_session_keep(tx, err);
        }
        txbox_tx_free(tx);
        return r;
}

char *tx_session_message(const char *id, int dir_fd)
{
        if (!has_at(dir_fd, "session"))
                return xasprintf("tx %s is pending (a session whose savepoints were folded for commit): "
                                 "txbox commit %s or txbox rollback %s", id, id, id);
        int n = count_savepoints(dir_fd);
        if (n == 0)
                return xasprintf("session with no savepoint yet: txbox run --tx %s -- COMMAND", id);
        return xasprintf("session with %d savepoint%s: txbox commit %s, or txbox rollback %s [--to N]", n,
                         n == 1 ? "" : "s", id, id);
}

int tx_session_keep(struct txbox_tx *tx, struct txbox_error *err)
{
        free(tx->rec.message);
        tx->rec.message = tx_session_message(tx->rec.id, tx->dir_fd);
        return txbox_tx_keep(tx, err);
}

/* ---- folding the layers for commit ---- */

static bool is_whiteout_at(int dirfd, const char *name, const struct stat *st)
{
        if (S_ISCHR(st->st_mode) && st->st_rdev == 0)
                return true;
        if (!S_ISREG(st->st_mode) || st->st_size != 0)
                return false;
        char path[64 + NAME_MAX];
        snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
        return lgetxattr(path, "user.overlay.whiteout", NULL, 0) >= 0;
}

static bool is_opaque_at(int dirfd, const char *name)
{
        char path[64 + NAME_MAX], v[4];
        snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
        ssize_t n = lgetxattr(path, "user.overlay.opaque", v, sizeof(v));
        return n == 1 && v[0] == 'y';
}

static int merge_layer(int top, int base, int depth);

static int merge_entry(int top, int base, const char *name, int depth)
{
        struct stat ts, bs;

        if (fstatat(top, name, &ts, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        bool base_dir = fstatat(base, name, &bs, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(bs.st_mode);
        if (S_ISDIR(ts.st_mode) && base_dir && !is_opaque_at(top, name) && !is_whiteout_at(top, name, &ts)) {
                _cleanup_close_ int t = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                _cleanup_close_ int b = openat(base, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (t < 0 || b < 0)
                        return -errno;
                int r = merge_layer(t, b, depth + 1);
                return r < 0 ? r : fchmod(b, ts.st_mode & 07777) < 0 ? -errno : 0;
        }
        /* The upper entry hides whatever the layers below had: it replaces it whole (a
         * whiteout stays a whiteout, so it still hides the workspace's entry). */
        int r = rm_rf_at(base, name);
        if (r < 0)
                return r;
        return renameat(top, name, base, name) < 0 ? -errno : 0;
}

static int merge_layer(int top, int base, int depth)
{
        if (depth > CS_MAX_DEPTH)
                return -ELOOP;
        int dfd = dup(top), r = 0;
        DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
        struct dirent *de;
        struct strvec names = {0};

        if (!d) {
                closep(&dfd);
                return -errno;
        }
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        strvec_push(&names, xstrdup(de->d_name));
        closedir(d);
        for (size_t i = 0; i < names.n && r == 0; i++)
                r = merge_entry(top, base, names.v[i], depth);
        strvec_clear(&names);
        return r;
}

/* Fold the savepoints into tx/ID/upper, oldest first, each retired once folded; then the
 * session is an ordinary pending transaction.  Resumable: the layers still in sp/ are
 * exactly those not wholly folded, and folding a layer again that was cut short gives the
 * same result (each entry moved is gone from it, a directory merged into stays and merges
 * again into the same directory; no later layer has touched the base yet). */
static int fold_dir(int dir_fd)
{
        _cleanup_close_ int base = openat(dir_fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int sp = -1;
        char name[16];
        int r = 0;

        if (base < 0)
                return -errno;
        sp = openat(dir_fd, "sp", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sp < 0 && errno != ENOENT)
                return -errno;
        for (int k = 1; sp >= 0 && k <= SESSION_MAX_SAVEPOINTS && r == 0; k++) {
                snprintf(name, sizeof(name), "%d", k);
                if (!has_at(sp, name))
                        continue;
                if ((r = failpoint("fold")) < 0)
                        break;
                snprintf(name, sizeof(name), "%d/upper", k);
                _cleanup_close_ int top = openat(sp, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if ((r = top < 0 ? (errno == ENOENT ? 0 : -errno) : merge_layer(top, base, 0)) == 0) {
                        snprintf(name, sizeof(name), "%d", k);
                        r = retire(sp, name, "fold");
                }
        }
        if (r < 0 || (r = rm_rf_at(dir_fd, "sp")) < 0 || (r = failpoint("fold")) < 0)
                return r;
        /* The folded layer is durable before the markers go: then it is the transaction. */
        if (syncfs(dir_fd) < 0)
                return -errno;
        if (unlinkat(dir_fd, "session", 0) < 0 && errno != ENOENT)
                return -errno;
        if ((r = failpoint("fold")) < 0)
                return r;
        if (unlinkat(dir_fd, "merging", 0) < 0 && errno != ENOENT)
                return -errno;
        return fsync_dirfd_at(dir_fd, ".");
}

int tx_session_fold(struct txbox_tx *tx, struct txbox_error *err)
{
        int r;

        /* The load tidied sp/: what is numbered there now is what the commit folds. */
        if ((r = failpoint("fold")) < 0 || (r = write_file_atomic_at(tx->dir_fd, "merging", "", 0, true)) < 0)
                return tx_err(err, -r, "cannot start folding session %s: %s", tx->rec.id, strerror(-r));
        if ((r = fold_dir(tx->dir_fd)) < 0)
                return tx_err(err, -r, "cannot fold the savepoints of session %s: %s (txbox recover "
                              "finishes it)", tx->rec.id, strerror(-r));
        return 0;
}

/* ---- the session's net change: what a commit now would fold (review) ----
 *
 * After each command the session's row lists the change of all its savepoints together, as
 * the commit will fold them: sp/1 .. sp/n merged in order (merge_layer's rules) and
 * compared with the workspace.  The layers are not ours to move while the session stays
 * open, so they are merged by hard links into sp/.net (a dot name: a crash leaves it to the
 * next tidy), which changeset_build then reads, and which goes at once. */

/* A copy of dirfd/name at dst/name: hard links for files, links and whiteouts (an empty
 * file marked as whiteout where a link is refused), directories made anew with their mode
 * and opaque mark.  The layers are the program's: nothing is followed. */
static int clone_entry(int sfd, const char *name, int dfd, int depth);

static int clone_dir(int sfd, const char *name, int dfd, const struct stat *st, int depth)
{
        char path[64 + NAME_MAX];
        bool lent = false;
        int r = 0;

        if (depth > CS_MAX_DEPTH)
                return -ELOOP;
        if (mkdirat(dfd, name, 0700) < 0)
                return -errno;
        if (is_opaque_at(sfd, name)) {
                snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, name);
                if (lsetxattr(path, "user.overlay.opaque", "y", 1, 0) < 0)
                        return -errno;
        }
        _cleanup_close_ int d = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int s = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        /* a directory the program closed (000): opened to its owner while read, as the
         * changeset's walk does */
        if (s < 0 && errno == EACCES && fchmodat(sfd, name, (st->st_mode | S_IRWXU) & 07777, 0) == 0) {
                lent = true;
                s = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (d < 0 || s < 0)
                r = -errno;
        DIR *dir = s >= 0 && r == 0 ? dir_stream(s) : NULL;
        struct dirent *de;
        if (s >= 0 && r == 0 && !dir)
                r = -errno;
        while (dir && r == 0 && (de = readdir(dir)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        r = clone_entry(s, de->d_name, d, depth + 1);
        if (dir)
                closedir(dir);
        if (s >= 0)
                close(s);
        if (lent && fchmodat(sfd, name, st->st_mode & 07777, 0) < 0 && r == 0)
                r = -errno; /* the layer keeps the program's mode */
        if (r == 0 && d >= 0 && fchmod(d, st->st_mode & 07777) < 0)
                r = -errno;
        return r;
}

static int clone_entry(int sfd, const char *name, int dfd, int depth)
{
        struct stat st;
        char path[64 + NAME_MAX];

        if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return clone_dir(sfd, name, dfd, &st, depth);
        if (linkat(sfd, name, dfd, name, 0) == 0)
                return 0;
        if (errno != EPERM && errno != EMLINK)
                return -errno;
        /* A link refused (protected_hardlinks, a file another uid owns): a whiteout is only
         * its mark, and a file or symlink only its content or target. */
        if (is_whiteout_at(sfd, name, &st)) {
                int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0)
                        return -errno;
                close(fd);
                snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, name);
                return lsetxattr(path, "user.overlay.whiteout", "y", 1, 0) < 0 ? -errno : 0;
        }
        if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t n = readlinkat(sfd, name, target, sizeof(target) - 1);
                if (n < 0)
                        return -errno;
                target[n] = '\0';
                return symlinkat(target, dfd, name) < 0 ? -errno : 0;
        }
        if (!S_ISREG(st.st_mode))
                return -EPERM;
        _cleanup_close_ int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        char buf[65536];
        ssize_t n;
        if (in < 0 || out < 0)
                return -errno;
        while ((n = read(in, buf, sizeof(buf))) > 0)
                if (write(out, buf, (size_t)n) != n)
                        return -EIO;
        if (n < 0)
                return -errno;
        return fchmod(out, st.st_mode & 07777) < 0 ? -errno : 0;
}

/* merge_layer with top read-only: what would move is cloned instead. */
static int link_merge_layer(int top, int base, int depth);

static int link_merge_entry(int top, int base, const char *name, int depth)
{
        struct stat ts, bs;

        if (fstatat(top, name, &ts, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        bool base_dir = fstatat(base, name, &bs, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(bs.st_mode);
        if (S_ISDIR(ts.st_mode) && base_dir && !is_opaque_at(top, name) && !is_whiteout_at(top, name, &ts)) {
                bool lent = false;
                int t = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (t < 0 && errno == EACCES && fchmodat(top, name, (ts.st_mode | S_IRWXU) & 07777, 0) == 0) {
                        lent = true;
                        t = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                }
                _cleanup_close_ int b = openat(base, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                int r = t < 0 || b < 0 ? -errno : link_merge_layer(t, b, depth + 1);
                if (t >= 0)
                        close(t);
                if (lent && fchmodat(top, name, ts.st_mode & 07777, 0) < 0 && r == 0)
                        r = -errno;
                return r < 0 ? r : fchmod(b, ts.st_mode & 07777) < 0 ? -errno : 0;
        }
        int r = rm_rf_at(base, name);
        return r < 0 ? r : clone_entry(top, name, base, depth);
}

static int link_merge_layer(int top, int base, int depth)
{
        if (depth > CS_MAX_DEPTH)
                return -ELOOP;
        /* base's directories are ours, made 0700 until their last merge: opened to us */
        struct stat bst;
        if (fstat(base, &bst) == 0 && (bst.st_mode & S_IRWXU) != S_IRWXU &&
            fchmod(base, (bst.st_mode | S_IRWXU) & 07777) < 0)
                return -errno;
        DIR *d = dir_stream(top);
        struct dirent *de;
        struct strvec names = {0};
        int r = 0;

        if (!d)
                return -errno;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        strvec_push(&names, xstrdup(de->d_name));
        closedir(d);
        for (size_t i = 0; i < names.n && r == 0; i++)
                r = link_merge_entry(top, base, names.v[i], depth);
        strvec_clear(&names);
        return r;
}

/* ---- the net change read from the layers as they stand (no copy, no link) ----
 *
 * Every path any savepoint holds an entry for (a whiteout included) is a candidate; each is
 * resolved through the savepoints from the newest down, as overlayfs (and the fold) resolve
 * it, and compared with the workspace.  What a layer hides of the workspace (beneath a
 * whiteout, a file, or an opaque directory) is listed as deleted. */

/* Where the last lookup's parent directory led in one layer: candidates come sorted, so
 * most lookups share it and cost one fstatat. */
struct dircache {
        char *dir;  /* the parent's path ("" the layer's root), or NULL */
        int fd;     /* the parent, or -1 */
        int state;  /* LK_NONE, LK_CUT (then no fd) or LK_FOUND */
        bool opaque;
};

struct stack {
        int n;
        int layer[SESSION_MAX_SAVEPOINTS]; /* sp/N/upper, newest first */
        struct dircache cache[SESSION_MAX_SAVEPOINTS];
        struct dircache wcache; /* the workspace's */
        int ws;
};

enum lk { LK_NONE, LK_CUT, LK_GONE, LK_FOUND };

/* The parent directory dir (a path, "" for the root) of a lookup in one layer: LK_FOUND with
 * *fd, LK_NONE (the layer has no such directory and hides nothing), or LK_CUT (a whiteout, a
 * file or an opaque directory on the way hides it); *opaque when an opaque directory is on
 * the way. */
static int walk_dirs(int layer, const char *dir, int *fd, bool *opaque)
{
        _cleanup_free_ char *copy = xstrdup(dir);
        int cur = fcntl(layer, F_DUPFD_CLOEXEC, 3);
        char *save = NULL;
        struct stat st;

        *opaque = false;
        *fd = -1;
        if (cur < 0)
                return -errno;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                int r = fstatat(cur, c, &st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
                if (r == 0 && S_ISDIR(st.st_mode)) {
                        *opaque = *opaque || is_opaque_at(cur, c);
                        int sub = openat(cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        r = sub < 0 ? -errno : 0;
                        close(cur);
                        cur = sub;
                        if (r == 0)
                                continue;
                } else
                        close(cur);
                if (r == -ENOENT)
                        return *opaque ? LK_CUT : LK_NONE;
                return r < 0 ? r : LK_CUT; /* a whiteout or a file here */
        }
        *fd = cur;
        return LK_FOUND;
}

/* rel in one layer: nothing said (LK_NONE), hidden by what lies above it in the layer
 * (LK_CUT: a whiteout, a file, or an opaque directory without it), a whiteout (LK_GONE), or
 * an entry (LK_FOUND, with its stat and, for a directory, whether it is opaque). */
static int layer_lookup(int layer, struct dircache *dc, const char *rel, struct stat *st, bool *opaque)
{
        const char *slash = strrchr(rel, '/'), *base = slash ? slash + 1 : rel;
        size_t dl = slash ? (size_t)(slash - rel) : 0;

        if (!dc->dir || strlen(dc->dir) != dl || strncmp(dc->dir, rel, dl)) {
                free(dc->dir);
                if (dc->fd >= 0)
                        close(dc->fd);
                dc->dir = strndup(rel, dl);
                dc->state = walk_dirs(layer, dc->dir, &dc->fd, &dc->opaque);
        }
        if (dc->state < 0 || dc->state != LK_FOUND)
                return dc->state;
        if (fstatat(dc->fd, base, st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? (dc->opaque ? LK_CUT : LK_NONE) : -errno;
        if (is_whiteout_at(dc->fd, base, st))
                return LK_GONE;
        *opaque = S_ISDIR(st->st_mode) && is_opaque_at(dc->fd, base);
        return LK_FOUND;
}

static void dircache_clear(struct dircache *dc)
{
        free(dc->dir);
        if (dc->fd >= 0)
                close(dc->fd);
        dc->dir = NULL;
        dc->fd = -1;
}

static int ws_lstat(struct stack *sk, const char *rel, struct stat *st);

struct resolved {
        bool present, from_ws; /* from_ws: no savepoint says anything: the workspace's own */
        int layer;             /* the savepoint holding the entry (index into stack.layer) */
        bool ws_under;         /* a directory the workspace's entries still show through */
        struct stat st;
};

static int resolve(struct stack *sk, const char *rel, struct resolved *out)
{
        bool dir = false, op;
        struct stat st;

        memset(out, 0, sizeof(*out));
        for (int i = 0; i < sk->n; i++) {
                int r = layer_lookup(sk->layer[i], &sk->cache[i], rel, &st, &op);
                if (r < 0)
                        return r;
                if (r == LK_NONE)
                        continue;
                if (r == LK_FOUND && S_ISDIR(st.st_mode)) {
                        if (!dir) {
                                out->present = dir = true;
                                out->layer = i;
                                out->st = st;
                        }
                        if (op)
                                return 0; /* nothing beneath shows through */
                        continue;
                }
                if (dir)
                        return 0; /* a directory above hides what is here and beneath */
                out->present = r == LK_FOUND;
                out->layer = i;
                out->st = st;
                return 0;
        }
        if (dir) {
                out->ws_under = true;
                return 0;
        }
        out->from_ws = true;
        out->present = ws_lstat(sk, rel, &out->st) == 0;
        return 0;
}

struct plist {
        struct txbox_path *v;
        size_t n, cap;
};

static void plist_add(struct plist *l, const char *path, enum txbox_change c)
{
        if (l->n == l->cap) {
                l->cap = l->cap ? 2 * l->cap : 64;
                l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
        }
        l->v[l->n++] = (struct txbox_path){xstrdup(path), c};
}

static int cmp_str_ptr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int cmp_tpath(const void *a, const void *b)
{
        return strcmp(((const struct txbox_path *)a)->path, ((const struct txbox_path *)b)->path);
}

/* Every path beneath rel (the directory fd) into names, depth first. */
static int collect_at(int fd, const char *rel, int depth, struct strvec *names)
{
        if (depth > CS_MAX_DEPTH || names->n > CS_MAX_ENTRIES)
                return -E2BIG;
        DIR *d = dir_stream(fd);
        struct dirent *de;
        int r = 0;

        if (!d)
                return -errno;
        while (r == 0 && (de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                char *path = *rel ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
                strvec_push(names, path);
                struct stat st;
                if (de->d_type != DT_DIR &&
                    (de->d_type != DT_UNKNOWN || fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                     !S_ISDIR(st.st_mode)))
                        continue;
                int sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                r = sub < 0 ? -errno : collect_at(sub, path, depth + 1, names);
                if (sub >= 0)
                        close(sub);
        }
        closedir(d);
        return r;
}

/* Every path beneath rel in root (a layer or the workspace; "" the root itself); a
 * directory closed to us (000, as a program may leave one) fails with -EACCES. */
static int collect(int root, const char *rel, struct strvec *names)
{
        _cleanup_close_ int fd = *rel ? open_beneath(root, rel, O_RDONLY | O_DIRECTORY, 0)
                                      : openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return *rel && (fd == -ENOTDIR || fd == -ENOENT) ? 0 : *rel ? fd : -errno;
        return collect_at(fd, rel, 1, names);
}

/* lstat of rel in the workspace, no symlink on the way (the parent is cached). */
static int ws_lstat(struct stack *sk, const char *rel, struct stat *st)
{
        const char *slash = strrchr(rel, '/'), *base = slash ? slash + 1 : rel;
        size_t dl = slash ? (size_t)(slash - rel) : 0;
        struct dircache *dc = &sk->wcache;

        if (!dc->dir || strlen(dc->dir) != dl || strncmp(dc->dir, rel, dl)) {
                dircache_clear(dc);
                dc->dir = strndup(rel, dl);
                dc->state = walk_dirs(sk->ws, dc->dir, &dc->fd, &dc->opaque);
        }
        if (dc->state != LK_FOUND)
                return -ENOENT;
        return fstatat(dc->fd, base, st, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static bool same_content(const struct stack *sk, const struct resolved *f, const char *rel, const struct stat *w)
{
        const struct stat *u = &f->st;
        const char *ub, *wb;

        if (u->st_mode != w->st_mode || u->st_uid != w->st_uid || u->st_gid != w->st_gid)
                return false;
        if (!S_ISREG(u->st_mode) && !S_ISLNK(u->st_mode))
                return S_ISDIR(u->st_mode) || u->st_rdev == w->st_rdev;
        _cleanup_close_ int ud = open_parent_beneath(sk->layer[f->layer], rel, &ub);
        _cleanup_close_ int wd = open_parent_beneath(sk->ws, rel, &wb);
        if (ud < 0 || wd < 0)
                return false;
        if (S_ISREG(u->st_mode))
                return files_equal_at(ud, ub, wd, wb) == 1;
        char a[PATH_MAX], b[PATH_MAX];
        ssize_t na = readlinkat(ud, ub, a, sizeof(a)), nb = readlinkat(wd, wb, b, sizeof(b));
        return na >= 0 && na == nb && !memcmp(a, b, (size_t)na);
}

/* The workspace's entries beneath rel that the session's view no longer has: deleted. */
static int hidden_beneath(struct stack *sk, const char *rel, struct plist *out)
{
        struct strvec w = {0};
        struct resolved f;
        int r = collect(sk->ws, rel, &w);

        for (size_t i = 0; i < w.n && r == 0; i++)
                if ((r = resolve(sk, w.v[i], &f)) == 0 && !f.present)
                        plist_add(out, w.v[i], TXBOX_DELETED);
        strvec_clear(&w);
        return r;
}

static int net_walk(struct stack *sk, struct changeset *out)
{
        struct strvec cand = {0};
        struct plist l = {0};
        int r = 0;

        for (int i = 0; i < sk->n && r == 0; i++)
                r = collect(sk->layer[i], "", &cand);
        if (r == 0 && cand.n > 1)
                qsort(cand.v, cand.n, sizeof(*cand.v), cmp_str_ptr);
        for (size_t i = 0; i < cand.n && r == 0; i++) {
                const char *p = cand.v[i];
                struct resolved f;
                struct stat w;
                if (i && !strcmp(p, cand.v[i - 1]))
                        continue;
                if ((r = resolve(sk, p, &f)) < 0 || f.from_ws)
                        continue; /* the workspace's own: no change */
                bool live = ws_lstat(sk, p, &w) == 0;
                if (!f.present && live) {
                        plist_add(&l, p, TXBOX_DELETED);
                        if (S_ISDIR(w.st_mode))
                                r = hidden_beneath(sk, p, &l);
                } else if (f.present && !live)
                        plist_add(&l, p, TXBOX_ADDED);
                else if (f.present) {
                        bool fd = S_ISDIR(f.st.st_mode), wd = S_ISDIR(w.st_mode);
                        if (fd != wd || !same_content(sk, &f, p, &w) ||
                            (fd && (f.st.st_mode & 07777) != (w.st_mode & 07777)))
                                plist_add(&l, p, TXBOX_MODIFIED);
                        if (wd && (!fd || !f.ws_under))
                                r = hidden_beneath(sk, p, &l);
                }
        }
        strvec_clear(&cand);
        /* sorted, once each (a path found twice keeps its first change) */
        if (l.n > 1)
                qsort(l.v, l.n, sizeof(*l.v), cmp_tpath);
        size_t k = 0;
        for (size_t i = 0; i < l.n; i++) {
                if (k && !strcmp(l.v[k - 1].path, l.v[i].path))
                        free(l.v[i].path);
                else
                        l.v[k++] = l.v[i];
        }
        out->paths = l.v;
        out->npaths = k;
        out->cap_paths = l.cap;
        return r;
}

#define NET_DIR ".net"

int tx_session_net(struct txbox_tx *tx, struct changeset *out, struct txbox_error *err)
{
        return tx_session_net_at(tx->ws, tx->dir_fd, tx->rec.id, out, err);
}

int tx_session_net_at(struct txbox_ws *ws, int dir_fd, const char *id, struct changeset *out,
                      struct txbox_error *err)
{
        int n = count_savepoints(dir_fd), r = 0;
        char name[32];

        memset(out, 0, sizeof(*out));
        if (n == 0)
                return 0;
        if (n == 1) { /* one layer is its own fold */
                _cleanup_close_ int up = openat(dir_fd, "sp/1/upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                                                                                 O_CLOEXEC);
                if (up < 0)
                        return tx_err(err, errno, "cannot open savepoint 1 of session %s: %s", id,
                                      strerror(errno));
                return changeset_build(up, ws->ws_fd, out, err);
        }
        _cleanup_close_ int sp = openat(dir_fd, "sp", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sp < 0)
                return tx_err(err, errno, "cannot open the savepoints of session %s: %s", id,
                              strerror(errno));
        /* Read from the layers as they stand; where that cannot be (a directory closed to
         * us), merged by hard links as the fold would merge them. */
        struct stack sk = {.n = n, .ws = ws->ws_fd, .wcache.fd = -1};
        for (int i = 0; i < n; i++)
                sk.cache[i].fd = sk.layer[i] = -1;
        for (int i = 0; i < n && r == 0; i++) {
                snprintf(name, sizeof(name), "%d/upper", n - i);
                sk.layer[i] = openat(sp, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                r = sk.layer[i] < 0 ? -errno : 0;
        }
        if (r == 0)
                r = net_walk(&sk, out);
        for (int i = 0; i < n; i++) {
                dircache_clear(&sk.cache[i]);
                if (sk.layer[i] >= 0)
                        close(sk.layer[i]);
        }
        dircache_clear(&sk.wcache);
        trace_mark("savepoints read for review");
        if (r != -EACCES)
                return r < 0 ? tx_err(err, -r, "cannot read the savepoints of session %s: %s", id, strerror(-r)) : 0;
        changeset_free(out);
        r = 0;
        rm_rf_at(sp, NET_DIR);
        if (mkdirat(sp, NET_DIR, 0700) < 0)
                return tx_err(err, errno, "cannot make '%s' in session %s: %s", NET_DIR, id,
                              strerror(errno));
        _cleanup_close_ int base = openat(sp, NET_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (base < 0)
                r = -errno;
        for (int k = 1; k <= n && r == 0; k++) {
                snprintf(name, sizeof(name), "%d/upper", k);
                _cleanup_close_ int top = openat(sp, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                r = top < 0 ? -errno : link_merge_layer(top, base, 0);
        }
        trace_mark("layers merged for review");
        if (r < 0)
                r = tx_err(err, -r, "cannot merge the savepoints of session %s for review: %s", id,
                           strerror(-r));
        else
                r = changeset_build(base, ws->ws_fd, out, err);
        trace_mark("merged layers compared");
        rm_rf_at(sp, NET_DIR);
        return r;
}

/* The file rel as the session's savepoints 1..n show it over the workspace, as overlayfs
 * (and the fold) resolve it: the highest layer that has it, a whiteout or a file on the way
 * hiding it, an opaque directory on the way hiding the layers beneath.  0: *fd is the file
 * (or -1: none, or not a regular file); 1: no layer says anything (the workspace's). */
static int layer_file(int layer, const char *rel, int *fd)
{
        _cleanup_free_ char *copy = xstrdup(rel);
        _cleanup_close_ int cur = fcntl(layer, F_DUPFD_CLOEXEC, 3);
        bool opaque = false;
        struct stat st;
        char *save = NULL, *c = strtok_r(copy, "/", &save);

        *fd = -1;
        while (c && cur >= 0) {
                char *next = strtok_r(NULL, "/", &save);
                if (fstatat(cur, c, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        return errno == ENOENT && !opaque ? 1 : 0;
                if (is_whiteout_at(cur, c, &st))
                        return 0;
                if (!next) {
                        if (S_ISREG(st.st_mode))
                                *fd = openat(cur, c, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                        return 0;
                }
                if (!S_ISDIR(st.st_mode))
                        return 0; /* a file or link here: nothing beneath it */
                opaque = opaque || is_opaque_at(cur, c);
                int sub = openat(cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                close(cur);
                cur = sub;
                c = next;
        }
        return cur < 0 ? 0 : 1;
}

int tx_session_open_file(int dir_fd, int ws_fd, const char *rel)
{
        int n = count_savepoints(dir_fd), fd;
        char name[32];

        for (int k = n; k >= 1; k--) {
                snprintf(name, sizeof(name), "sp/%d/upper", k);
                _cleanup_close_ int layer = openat(dir_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (layer < 0)
                        return -1;
                if (layer_file(layer, rel, &fd) == 0)
                        return fd;
        }
        return open_beneath_regular(ws_fd, rel, NULL);
}

/* drop-to's savepoint number; garbage drops them all (fail closed: a rollback was asked). */
static int drop_to(int dir_fd)
{
        _cleanup_free_ char *s = NULL;
        int k;

        if (read_file_at(dir_fd, "drop-to", 16, &s, NULL) < 0 || !sp_number(s, &k))
                return 0; /* "0" too */
        return k;
}

int tx_session_tidy(int dir_fd, const char *fp)
{
        int r;

        if (has_at(dir_fd, "merging"))
                return fold_dir(dir_fd);
        if (!has_at(dir_fd, "session"))
                return 0;
        bool decided = has_at(dir_fd, "drop-to");
        int keep = count_savepoints(dir_fd);
        if (decided && drop_to(dir_fd) < keep)
                keep = drop_to(dir_fd);
        if ((r = tidy_sp(dir_fd, keep, fp)) < 0 || !decided)
                return r;
        if ((r = failpoint(fp)) < 0)
                return r;
        if (unlinkat(dir_fd, "drop-to", 0) < 0 && errno != ENOENT)
                return -errno;
        return fsync_dirfd_at(dir_fd, ".");
}
