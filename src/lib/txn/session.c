/* Session transactions: several commands, one savepoint each, committed at once.
 *
 * tx/ID/session      marker: this pending transaction is a session
 * tx/ID/sp/N/upper   savepoint N's layer; the overlay of command N stacks the layers of
 *                    savepoints N-1 .. 1 over the workspace as read-only lowers
 * tx/ID/merging      marker while commit folds the layers into tx/ID/upper (a crash there
 *                    rolls the session back: half-merged layers are no whole state)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <sys/xattr.h>

#include "store/record.h"
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

/* Savepoints are numbered 1..n without gaps. */
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
        } else if (write_file_atomic_at(tx->dir_fd, "session", "", 0, true) < 0 || mkdirat(tx->dir_fd, "sp", 0700) < 0) {
                r = tx_err(err, errno, "cannot create session %s in '%s/tx': %s", tx->rec.id, ws->state, strerror(errno));
                struct txbox_error e2;
                txbox_tx_rollback(tx, NULL, &e2);
        } else {
                free(tx->rec.message);
                tx->rec.message = xasprintf("session with no savepoint yet: txbox run --tx %s -- COMMAND", tx->rec.id);
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
        int r = txbox_tx_load(ws, id, &tx, err);

        if (r < 0)
                return r;
        if (!tx_is_session(tx)) {
                r = tx_err(err, EINVAL, "transaction %s is not a session (txbox begin makes one)", tx->rec.id);
                goto fail;
        }
        tx->sp = count_savepoints(tx->dir_fd) + 1;
        if (tx->sp > SESSION_MAX_SAVEPOINTS) {
                r = tx_err(err, E2BIG, "session %s has %d savepoints, the most there can be; commit it", tx->rec.id,
                           SESSION_MAX_SAVEPOINTS);
                goto fail;
        }
        snprintf(dir, sizeof(dir), "sp/%d", tx->sp);
        if (mkdirat(tx->dir_fd, dir, 0700) < 0 || mkdirat(tx->dir_fd, join(sub, sizeof(sub), dir, "/upper"), 0755) < 0 ||
            mkdirat(tx->dir_fd, join(sub, sizeof(sub), dir, "/work"), 0700) < 0) {
                r = tx_err(err, errno, "cannot create savepoint %d of session %s: %s", tx->sp, tx->rec.id, strerror(errno));
                goto fail;
        }
        strv_free(tx->sp_argv);
        tx->sp_argv = strv_dup(argv);
        tx->t0_us = mono_us();
        *out = tx;
        return 0;
fail:
        txbox_tx_free(tx);
        return r;
}

/* The overlay's layers for savepoint tx->sp: its own upper/work and the lowers beneath. */
void tx_session_layers(const struct txbox_tx *tx, char **upper, char **work, struct strvec *lowers)
{
        const char *base = tx->ws->state;
        *upper = xasprintf("%s/tx/%s/sp/%d/upper", base, tx->rec.id, tx->sp);
        *work = xasprintf("%s/tx/%s/sp/%d/work", base, tx->rec.id, tx->sp);
        for (int k = tx->sp - 1; k >= 1; k--)
                strvec_push(lowers, xasprintf("%s/tx/%s/sp/%d/upper", base, tx->rec.id, k));
}

static void sp_dir(char *buf, size_t size, int k) { snprintf(buf, size, "sp/%d", k); }

/* Savepoint tx->sp ends: kept when the command succeeded, dropped otherwise. */
int tx_session_end_savepoint(struct txbox_tx *tx, bool keep, struct txbox_error *err)
{
        char dir[32], sub[48];

        sp_dir(dir, sizeof(dir), tx->sp);
        rm_rf_at(tx->dir_fd, join(sub, sizeof(sub), dir, "/work"));
        if (!keep) {
                int r = rm_rf_at(tx->dir_fd, dir);
                if (r < 0)
                        return tx_err(err, -r, "cannot drop savepoint %d of session %s: %s", tx->sp, tx->rec.id, strerror(-r));
        }
        return tx_session_keep(tx, err);
}

int txbox_session_rollback_to(struct txbox_ws *ws, const char *id, int n, struct txbox_error *err)
{
        struct txbox_tx *tx = NULL;
        char dir[32];
        int r = txbox_tx_load(ws, id, &tx, err);

        if (r < 0)
                return r;
        if (!tx_is_session(tx)) {
                txbox_tx_free(tx);
                return tx_err(err, EINVAL, "transaction %s is not a session: --to applies to sessions only", id);
        }
        int have = count_savepoints(tx->dir_fd);
        if (n < 0 || n > have) {
                txbox_tx_free(tx);
                return tx_err(err, EINVAL, "session %s has savepoints 1 to %d: --to %d is not one of them (0 drops all)",
                              tx->rec.id, have, n);
        }
        /* Top first, so that the numbering never has a gap, even after a crash here. */
        for (int k = have; k > n && r == 0; k--) {
                sp_dir(dir, sizeof(dir), k);
                if ((r = rm_rf_at(tx->dir_fd, dir)) < 0)
                        r = tx_err(err, -r, "cannot drop savepoint %d of session %s: %s", k, tx->rec.id, strerror(-r));
        }
        if (r == 0) {
                tx->sp = n;
                r = tx_session_keep(tx, err);
        }
        txbox_tx_free(tx);
        return r;
}

int tx_session_keep(struct txbox_tx *tx, struct txbox_error *err)
{
        int n = count_savepoints(tx->dir_fd);
        free(tx->rec.message);
        tx->rec.message = xasprintf("session with %d savepoint%s: txbox commit %s, or txbox rollback %s [--to N]", n,
                                    n == 1 ? "" : "s", tx->rec.id, tx->rec.id);
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

/* Fold savepoints 1..n into tx/ID/upper, oldest first; afterwards the session is an
 * ordinary pending transaction. */
int tx_session_fold(struct txbox_tx *tx, struct txbox_error *err)
{
        int n = count_savepoints(tx->dir_fd), r = 0;
        char dir[48];

        if ((r = write_file_atomic_at(tx->dir_fd, "merging", "", 0, true)) < 0)
                return tx_err(err, -r, "cannot start folding session %s: %s", tx->rec.id, strerror(-r));
        _cleanup_close_ int base = openat(tx->dir_fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (base < 0)
                return tx_err(err, errno, "cannot open the layer of session %s: %s", tx->rec.id, strerror(errno));
        for (int k = 1; k <= n && r == 0; k++) {
                (void)failpoint("fold");
                snprintf(dir, sizeof(dir), "sp/%d/upper", k);
                _cleanup_close_ int top = openat(tx->dir_fd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                r = top < 0 ? -errno : merge_layer(top, base, 0);
        }
        if (r < 0)
                return tx_err(err, -r, "cannot fold the savepoints of session %s: %s", tx->rec.id, strerror(-r));
        rm_rf_at(tx->dir_fd, "sp");
        unlinkat(tx->dir_fd, "session", 0);
        unlinkat(tx->dir_fd, "merging", 0);
        return fsync_dirfd_at(tx->dir_fd, ".");
}
