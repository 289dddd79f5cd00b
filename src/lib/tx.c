/* Transactions: workspace and state dir, begin/run/evaluate/commit/rollback/keep.
 *
 * State dir layout:
 *   audit.db            the audit store (SQLite, WAL)
 *   lock                flock'd around every commit, undo and recovery step
 *   active/ID           one file per transaction a process is working on, flock'd by it;
 *                       recovery visits only these (a dead owner leaves an unlocked file)
 *   tx/ID/upper, work   the overlay's layers
 *   settle/BOOT.ID      a commit whose renames no filesystem sync has covered yet (its
 *                       active/ID, moved): recovery after a reboot completes it
 *   trash/              finished transactions' layers, removed while the next program runs
 *   tx/ID/journal       the commit plan; once durable, the commit is decided
 *   tx/ID/committed     marker: every op applied
 *   tx/ID/revert        the journal of a commit that failed and is being reverted
 *   tx/ID/undo/         originals moved aside by the commit (what undo puts back)
 *   tx/ID/undoing, undone, redo/   the same for an undo
 */
#define _GNU_SOURCE
#include "tx.h"

#include <dirent.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <time.h>

#include "journal.h"
#include "record.h"

/* ---- workspace ---- */

static int mount_id(const char *path, uint64_t *id)
{
        struct statx stx;
        if (statx(AT_FDCWD, path, 0, STATX_MNT_ID, &stx) < 0)
                return -errno;
        if (!(stx.stx_mask & STATX_MNT_ID))
                return -ENOSYS;
        *id = stx.stx_mnt_id;
        return 0;
}

/* The mount of the closest existing ancestor of path (path itself when it exists). */
static int ancestor_mount_id(const char *path, uint64_t *id)
{
        _cleanup_free_ char *p = xstrdup(path);
        int r;

        while ((r = mount_id(p, id)) == -ENOENT) {
                char *slash = strrchr(p, '/');
                if (!slash || slash == p)
                        return mount_id("/", id);
                *slash = '\0';
        }
        return r;
}

static bool same_mount(const char *a, const char *b)
{
        uint64_t ia, ib;
        return ancestor_mount_id(a, &ia) == 0 && ancestor_mount_id(b, &ib) == 0 && ia == ib;
}

static uint32_t fnv1a(const char *s)
{
        uint32_t h = 2166136261u;
        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 16777619u;
        return h;
}

static const char *home_dir(void)
{
        const char *h = getenv("HOME");
        if (h && h[0] == '/')
                return h;
        struct passwd *pw = getpwuid(getuid());
        return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

/* Default state dir: $XDG_STATE_HOME/txbox/NAME-HASH when on the workspace's mount (commit is
 * rename(2)), else .txbox-state/NAME-HASH next to the workspace.  *mask is the directory
 * hidden inside the sandbox (the whole txbox state root, so other workspaces' logs too). */
static int default_state(const char *ws, char **state, char **mask, struct txbox_error *err)
{
        const char *base = strrchr(ws, '/');
        const char *home = home_dir();
        const char *xdg = getenv("XDG_STATE_HOME");
        _cleanup_free_ char *root = NULL, *parent = xstrdup(ws);
        char leaf[NAME_MAX];

        snprintf(leaf, sizeof(leaf), "%.200s-%08x", base && base[1] ? base + 1 : "root", fnv1a(ws));
        if (xdg && xdg[0] == '/')
                root = xasprintf("%s/txbox", xdg);
        else if (home)
                root = xasprintf("%s/.local/state/txbox", home);
        if (root && !path_is_within(root, ws) && same_mount(root, ws)) {
                *state = xasprintf("%s/%s", root, leaf);
                *mask = TAKE_PTR(root);
                return 0;
        }
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent)
                *slash = '\0';
        free(root);
        root = xasprintf("%s/.txbox-state", strcmp(parent, ws) ? parent : "");
        if (strcmp(ws, "/") && same_mount(root, ws)) {
                *state = xasprintf("%s/%s", root, leaf);
                *mask = TAKE_PTR(root);
                return 0;
        }
        return tx_err(err, EXDEV,
                      "no state dir on the filesystem of workspace '%s' could be chosen; pass --state DIR "
                      "with a directory on the same mount, outside the workspace", ws);
}

/* path made absolute and lexically normal ("." and ".." resolved, no symlinks followed). */
static char *absolute_path(const char *path)
{
        char cwd[PATH_MAX], *out = xmalloc(PATH_MAX * 2 + 2), *save = NULL;
        _cleanup_free_ char *in = path[0] == '/' ? xstrdup(path)
                                                 : xasprintf("%s/%s", getcwd(cwd, sizeof(cwd)) ? cwd : "/", path);
        size_t len = 0;

        out[0] = '\0';
        for (char *c = strtok_r(in, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (!strcmp(c, "."))
                        continue;
                if (!strcmp(c, "..")) {
                        char *slash = strrchr(out, '/');
                        len = slash ? (size_t)(slash - out) : 0;
                        out[len] = '\0';
                        continue;
                }
                len += (size_t)snprintf(out + len, PATH_MAX * 2 + 2 - len, "/%s", c);
        }
        if (!len)
                strcpy(out, "/");
        return out;
}

static int check_state_dir(const char *ws, const char *state, struct txbox_error *err)
{
        if (path_is_within(state, ws))
                return tx_err(err, EINVAL, "state dir '%s' is inside the workspace '%s'; choose a directory "
                                           "outside it (the overlay cannot have its upper layer in its lower layer)",
                              state, ws);
        if (path_is_within(ws, state))
                return tx_err(err, EINVAL, "workspace '%s' is inside the state dir '%s'", ws, state);
        if (!same_mount(state, ws))
                return tx_err(err, EXDEV, "state dir '%s' is on another filesystem or mount than workspace '%s'; "
                                          "commits are renames, so pass --state DIR on the workspace's mount",
                              state, ws);
        return 0;
}

int ws_choose_state(const char *ws, const char *state_opt, char **state, struct txbox_error *err)
{
        _cleanup_free_ char *mask = NULL;
        int r;

        *state = state_opt ? absolute_path(state_opt) : NULL;
        if (!state_opt && (r = default_state(ws, state, &mask, err)) < 0)
                return r;
        if ((r = check_state_dir(ws, *state, err)) < 0)
                free(TAKE_PTR(*state));
        return r;
}

/* NAME in DIRFD, made if missing (opened first: it is there but the first time). */
static int open_subdir(int dirfd, const char *name)
{
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && (mkdirat(dirfd, name, 0700) == 0 || errno == EEXIST))
                fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd;
}

static int open_state(struct txbox_ws *ws, bool defer_log, struct txbox_error *err)
{
        int r;
        ws->state_fd = open(ws->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ws->state_fd < 0 && errno == ENOENT) {
                if ((r = mkdir_p(ws->state, 0700)) < 0)
                        return tx_err(err, -r, "cannot create state dir '%s': %s", ws->state, strerror(-r));
                ws->state_fd = open(ws->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        if (ws->state_fd < 0)
                return tx_err(err, errno, "cannot open state dir '%s': %s", ws->state, strerror(errno));
        if ((ws->tx_fd = open_subdir(ws->state_fd, "tx")) < 0 ||
            (ws->active_fd = open_subdir(ws->state_fd, "active")) < 0 ||
            (ws->trash_fd = open_subdir(ws->state_fd, "trash")) < 0 ||
            (ws->settle_fd = open_subdir(ws->state_fd, "settle")) < 0)
                return tx_err(err, errno, "cannot create or open tx/, active/, trash/ or settle/ in state dir "
                                          "'%s': %s; it must be a directory this user owns and can write",
                              ws->state, strerror(errno));
        ws->lock_fd = openat(ws->state_fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (ws->lock_fd < 0)
                return tx_err(err, errno, "cannot open state dir '%s': %s", ws->state, strerror(errno));
        _cleanup_free_ char *db = xasprintf("%s/audit.db", ws->state);
        if (defer_log) {
                ws->audit = audit_open_deferred(db);
                return 0;
        }
        return audit_open(db, &ws->audit, err);
}

int txbox_ws_open(const char *workspace, const char *state_dir, unsigned flags,
                  struct txbox_ws **out, struct txbox_error *err)
{
        struct txbox_ws *ws = xcalloc(1, sizeof(*ws));
        char buf[PATH_MAX];
        int r;

        trace_mark("open workspace");
        pthread_mutex_init(&ws->sweep_mu, NULL);
        pthread_cond_init(&ws->sweep_cv, NULL);
        ws->ws_fd = ws->state_fd = ws->tx_fd = ws->active_fd = ws->trash_fd = ws->settle_fd = ws->lock_fd =
                ws->mountinfo_fd = -1;
        if (!realpath(workspace, buf)) {
                r = tx_err(err, errno, "workspace '%s' %s", workspace,
                           errno == ENOENT ? "does not exist; create it or pass -C DIR" : strerror(errno));
                goto fail;
        }
        ws->path = xstrdup(buf);
        ws->ws_fd = open(ws->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ws->ws_fd < 0) {
                r = tx_err(err, errno, "workspace '%s' is not a usable directory: %s", ws->path, strerror(errno));
                goto fail;
        }
        if (state_dir) {
                _cleanup_free_ char *abs = absolute_path(state_dir);
                /* Check before creating anything: a state dir must never appear inside the
                 * workspace, not even empty. */
                if ((r = check_state_dir(ws->path, abs, err)) < 0)
                        goto fail;
                if ((r = mkdir_p(state_dir, 0700)) < 0 || !realpath(state_dir, buf)) {
                        r = tx_err(err, r < 0 ? -r : errno, "cannot create state dir '%s': %s", state_dir,
                                   strerror(r < 0 ? -r : errno));
                        goto fail;
                }
                ws->state = xstrdup(buf);
                ws->state_mask = xstrdup(buf);
        } else if ((r = default_state(ws->path, &ws->state, &ws->state_mask, err)) < 0)
                goto fail;
        trace_mark("state dir found");
        if ((r = check_state_dir(ws->path, ws->state, err)) < 0 || (r = open_state(ws, flags & TXBOX_OPEN_DEFER_LOG, err)) < 0)
                goto fail;
        trace_mark("state open");
        if ((flags & TXBOX_OPEN_RECOVER) && (r = txbox_recover(ws, NULL, err)) < 0)
                goto fail;
        *out = ws;
        trace_mark("workspace open");
        return 0;
fail:
        txbox_ws_close(ws);
        return r;
}

void txbox_ws_close(struct txbox_ws *ws)
{
        if (!ws)
                return;
        for (int i = 0; i < WS_PREPARED_MAX; i++)
                tx_discard(TAKE_PTR(ws->prepared[i]));
        ws_sweep_wait(ws);
        sandbox_reap(true);
        sandbox_shared_ns_close(ws->shared_ns);
        policy_free(ws->policy);
        free(ws->policy_file);
        free(ws->approver);
        audit_close(ws->audit);
        closep(&ws->ws_fd);
        closep(&ws->state_fd);
        closep(&ws->tx_fd);
        closep(&ws->active_fd);
        closep(&ws->trash_fd);
        closep(&ws->settle_fd);
        closep(&ws->lock_fd);
        closep(&ws->mountinfo_fd);
        pthread_cond_destroy(&ws->sweep_cv);
        pthread_mutex_destroy(&ws->sweep_mu);
        free(ws->path);
        free(ws->state);
        free(ws->state_mask);
        free(ws);
}

const char *txbox_ws_path(const struct txbox_ws *ws) { return ws->path; }

void txbox_ws_set_progress(struct txbox_ws *ws, txbox_progress_fn fn, void *ctx)
{
        ws->progress = fn;
        ws->progress_ctx = ctx;
}
const char *txbox_ws_state_path(const struct txbox_ws *ws) { return ws->state; }

int ws_lock(struct txbox_ws *ws, struct txbox_error *err)
{
        while (flock(ws->lock_fd, LOCK_EX) < 0)
                if (errno != EINTR)
                        return tx_err(err, errno, "cannot lock '%s/lock': %s", ws->state, strerror(errno));
        return 0;
}

void ws_unlock(struct txbox_ws *ws) { flock(ws->lock_fd, LOCK_UN); }

/* ---- trash: removing a finished transaction's directories costs about a millisecond
 * (an inode freed per directory, on the caller's clock), so they are moved aside in one
 * rename and removed while the next program runs.  Nothing in the trash is needed: a crash
 * leaves it for the next sweep. ---- */

void ws_trash(struct txbox_ws *ws, int dirfd, const char *name, const char *as)
{
        if (ws->trash_fd < 0 || renameat2(dirfd, name, ws->trash_fd, as, RENAME_NOREPLACE) < 0)
                rm_rf_at(dirfd, name);
}

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
                /* Without an entry nothing would complete it after a crash: sync now. */
                syncfs(tx->ws->ws_fd);
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

static void sweep_db_release(struct txbox_ws *ws)
{
        pthread_mutex_lock(&ws->sweep_mu);
        ws->sweep_db_done = true;
        pthread_cond_signal(&ws->sweep_cv);
        pthread_mutex_unlock(&ws->sweep_mu);
}

static void *sweep_main(void *arg)
{
        struct txbox_ws *ws = arg;
        struct strvec names = {0};
        DIR *d;
        struct dirent *de;

        if (ws->log_rec) {
                /* tests: die with the program started and no row, or fail the insert */
                int fp = failpoint("log");
                ws->log_r = fp < 0 ? tx_err(&ws->log_err, -fp, "cannot write the audit row: %s", strerror(-fp))
                                   : audit_insert(ws->audit, ws->log_rec, &ws->log_err);
                ws->log_done = true;
        }
        audit_checkpoint(ws->audit);
        /* What the trash holds now, read before the log is released: the commit waits for
         * that, and only then moves this transaction's own leftovers in, which stay for the
         * next command (a directory read while entries arrive may or may not show them). */
        d = dir_stream(ws->trash_fd);
        while (d && (de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        strvec_push(&names, xstrdup(de->d_name));
        /* The log is the program's own from here: the trash may take longer than the
         * program (a synchronous discard per directory on some file systems), and goes on
         * beside its evaluation and commit. */
        sweep_db_release(ws);
        gc_auto(ws); /* the retention, after a commit (gc.c): before this command's own commit */
        for (size_t i = 0; d && i < names.n; i++)
                if (!ws_unsettled_layer(ws, names.v[i]))
                        rm_rf_at(dirfd(d), names.v[i]);
        strvec_clear(&names);
        if (d)
                closedir(d);
        atomic_store(&ws->swept, true);
        return NULL;
}

void ws_sweep(struct txbox_ws *ws, struct txbox_record *log)
{
        if (ws->sweeping) {
                if (!log && !atomic_load(&ws->swept))
                        return; /* the last one is still at it */
                ws_sweep_wait(ws);
        }
        ws->log_rec = log;
        ws->log_done = false;
        atomic_store(&ws->swept, false);
        ws->sweep_db_done = false;
        ws->sweeping = thread_start(&ws->sweeper, sweep_main, ws) == 0;
}

void ws_sweep_wait(struct txbox_ws *ws)
{
        if (ws->sweeping)
                pthread_join(ws->sweeper, NULL);
        ws->sweeping = false;
}

/* Wait until the sweeper is done with the audit log (its row written); it may still be
 * emptying the trash. */
static void ws_sweep_db_wait(struct txbox_ws *ws)
{
        if (!ws->sweeping)
                return;
        pthread_mutex_lock(&ws->sweep_mu);
        while (!ws->sweep_db_done)
                pthread_cond_wait(&ws->sweep_cv, &ws->sweep_mu);
        pthread_mutex_unlock(&ws->sweep_mu);
}

/* ---- transaction handles ---- */

/* Claim active/ID: exclusive lock held for as long as this process works on the tx. */
int tx_claim(struct txbox_ws *ws, const char *id, bool wait, struct txbox_error *err)
{
        char tmp[64];
        int fd = openat(ws->active_fd, id, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

        if (fd < 0 && errno == ENOENT) {
                /* Appear already locked: recovery in another process must never see an unlocked
                 * claim of a live transaction, so lock a hidden file, then rename it in place. */
                snprintf(tmp, sizeof(tmp), ".claim-%s-%d", id, (int)getpid());
                fd = openat(ws->active_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (fd >= 0 && (flock(fd, LOCK_EX | LOCK_NB) < 0 || renameat2(ws->active_fd, tmp, ws->active_fd, id, RENAME_NOREPLACE) < 0)) {
                        int e = errno;
                        unlinkat(ws->active_fd, tmp, 0);
                        close(fd);
                        errno = e;
                        fd = -1;
                        if (e == EEXIST) /* claimed by another process meanwhile: take the slow path */
                                return tx_claim(ws, id, wait, err);
                } else if (fd >= 0)
                        return fd;
        }
        if (fd < 0)
                return tx_err(err, errno, "cannot create '%s/active/%s': %s", ws->state, id, strerror(errno));
        if (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) {
                int e = errno;
                close(fd);
                return tx_err(err, e == EWOULDBLOCK ? EBUSY : e, "transaction %s is in use by another txbox process", id);
        }
        /* The claim file may have been released (unlinked) while we waited for its lock. */
        struct stat a, b;
        if (fstat(fd, &a) < 0 || fstatat(ws->active_fd, id, &b, AT_SYMLINK_NOFOLLOW) < 0 || a.st_ino != b.st_ino) {
                close(fd);
                return tx_claim(ws, id, wait, err);
        }
        return fd;
}

void tx_unclaim(struct txbox_ws *ws, const char *id, int fd)
{
        if (fd < 0)
                return;
        unlinkat(ws->active_fd, id, 0);
        close(fd);
}

static void release(struct txbox_tx *tx)
{
        tx_unclaim(tx->ws, tx->rec.id, tx->lock_fd);
        tx->lock_fd = -1;
}

static struct txbox_tx *tx_new(struct txbox_ws *ws)
{
        struct txbox_tx *tx = xcalloc(1, sizeof(*tx));
        tx->ws = ws;
        tx->dir_fd = tx->lock_fd = -1;
        tx->rec.exit_code = -1;
        return tx;
}

void txbox_tx_free(struct txbox_tx *tx)
{
        if (!tx)
                return;
        sandbox_abort(tx->sb);
        free(tx->upper);
        free(tx->work);
        strvec_clear(&tx->lowers);
        closep(&tx->dir_fd);
        closep(&tx->lock_fd);
        if (tx->ws && tx->ws->log_rec == tx->log_copy)
                tx->ws->log_rec = NULL;
        if (tx->log_copy)
                txbox_record_clear(tx->log_copy);
        free(tx->log_copy);
        changeset_free(&tx->cs);
        txbox_record_clear(&tx->rec);
        free(tx->warning);
        strv_free(tx->sp_argv);
        free(tx->pctx_cwd);
        free(tx);
}

const struct txbox_record *txbox_tx_record(const struct txbox_tx *tx) { return &tx->rec; }

static int make_tx_dir(struct txbox_tx *tx, struct txbox_error *err)
{
        struct txbox_ws *ws = tx->ws;
        if (mkdirat(ws->tx_fd, tx->rec.id, 0700) < 0)
                return tx_err(err, errno, "cannot create '%s/tx/%s': %s", ws->state, tx->rec.id, strerror(errno));
        tx->dir_fd = openat(ws->tx_fd, tx->rec.id, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        /* The sandbox sees the upper root's mode as the workspace root's. */
        struct stat st;
        mode_t mode = fstat(ws->ws_fd, &st) == 0 ? (st.st_mode & 0777) | 0700 : 0755;
        if (tx->dir_fd < 0 || mkdirat(tx->dir_fd, "upper", mode) < 0 || fchmodat(tx->dir_fd, "upper", mode, 0) < 0 ||
            mkdirat(tx->dir_fd, "work", 0700) < 0)
                return tx_err(err, errno, "cannot create the layers of tx %s in '%s': %s", tx->rec.id,
                              ws->state, errno == ENOSPC ? "no space left on device" : strerror(errno));
        return 0;
}

static void warn_unmapped(struct txbox_tx *tx, const struct idmap *m);

/* Now, on the workspace filesystem's own clock: the ctime the kernel gives the transaction's
 * directory (same filesystem as the workspace) when it is touched.  Any later change to a
 * live entry gets a ctime >= it.  The clock cannot be read from user space: since Linux 6.13
 * (multigrain timestamps) a file's ctime may be finer than, and ahead of,
 * CLOCK_REALTIME_COARSE, and a change made just before the transaction began then looked
 * like one made after it (a false conflict).  The stat before the touch asks for a
 * fine-grained stamp, so earlier changes have strictly smaller ctimes where the kernel
 * has them; elsewhere the stamp is the coarse tick, as before. */
static int64_t fs_now_ns(int dir_fd)
{
        struct stat st;
        struct timespec ts;

        if (fstat(dir_fd, &st) == 0 && futimens(dir_fd, NULL) == 0 && fstat(dir_fd, &st) == 0)
                return (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
        clock_gettime(CLOCK_REALTIME_COARSE, &ts); /* never later than a stamp to come */
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* state/seq: the newest commit's sequence number, 20 digits and a newline, rewritten in
 * place by every commit under the workspace lock.  A crash may leave it behind the log (a
 * transaction then takes one more commit for later than itself: at worst a conflict
 * reported that running again resolves), never ahead of it. */
int64_t ws_newest_commit_seq(struct txbox_ws *ws)
{
        char buf[32];
        int fd = openat(ws->state_fd, "seq", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
        char *end;

        if (fd >= 0)
                close(fd);
        if (n != 21 || buf[20] != '\n')
                return -1;
        buf[20] = '\0';
        errno = 0;
        long long v = strtoll(buf, &end, 10);
        return errno || end != buf + 20 || v < 0 ? -1 : v;
}

void ws_note_commit_seq(struct txbox_ws *ws, int64_t seq)
{
        char buf[32];
        int fd = openat(ws->state_fd, "seq", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

        snprintf(buf, sizeof(buf), "%020lld\n", (long long)seq);
        if (fd >= 0 && pwrite(fd, buf, 21, 0) != 21)
                unlinkat(ws->state_fd, "seq", 0); /* readers then ask the log */
        if (fd >= 0)
                close(fd);
}

int tx_begin_record(const char *begin, struct txbox_record *rec)
{
        const char *line = strchr(begin, '\n');
        json_t *j = line ? json_loads(line + 1, 0, NULL) : NULL, *argv = json_object_get(j, "argv");
        const char *cwd = json_string_value(json_object_get(j, "cwd"));
        const char *decision = json_string_value(json_object_get(j, "decision"));
        const char *rule = json_string_value(json_object_get(j, "rule"));
        const char *reason = json_string_value(json_object_get(j, "reason"));
        size_t n = json_array_size(argv);

        if (!json_is_array(argv) || !n || !decision) {
                json_decref(j);
                return -EBADMSG;
        }
        rec->argv = xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                rec->argv[i] = xstrdup(json_string_value(json_array_get(argv, i)) ?: "");
        rec->cwd = cwd ? xstrdup(cwd) : NULL;
        rec->decision = xstrdup(decision);
        rec->rule = rule ? xstrdup(rule) : NULL;
        rec->reason = reason ? xstrdup(reason) : NULL;
        rec->started_ms = json_integer_value(json_object_get(j, "started_ms"));
        json_decref(j);
        return 0;
}

/* What the workspace looked like when the transaction began, for first-committer-wins:
 * the last commit it could see, and the filesystem's clock (fs_now_ns). */
static int write_snapshot(struct txbox_tx *tx, bool *defer, struct txbox_error *err)
{
        int r;

        tx->begin_ns = fs_now_ns(tx->dir_fd);
        /* A process that has not touched the log yet (a one-shot run) leaves its row to the
         * thread beside the program: connecting costs a millisecond or two. */
        *defer = !audit_connected(tx->ws->audit) && (tx->begin_seq = ws_newest_commit_seq(tx->ws)) >= 0;
        if (!*defer) {
                if ((r = audit_next_commit_seq(tx->ws->audit, &tx->begin_seq, err)) < 0)
                        return r;
                tx->begin_seq--; /* the newest commit seen */
        }
        /* Line 2 when the row waits, the record: should this process die before the row is
         * written, recovery logs the run from it. */
        _cleanup_free_ char *rec = *defer ? json_dump_compact(record_to_json(&tx->rec)) : NULL;
        _cleanup_free_ char *buf = xasprintf("%lld %lld\n%s%s", (long long)tx->begin_seq, (long long)tx->begin_ns,
                                             rec ? rec : "", rec ? "\n" : "");
        if ((r = write_file_atomic_at(tx->dir_fd, "begin", buf, strlen(buf), false)) < 0)
                return tx_err(err, -r, "cannot write '%s/tx/%s/begin': %s", tx->ws->state, tx->rec.id, strerror(-r));
        return 0;
}

static int read_snapshot(struct txbox_tx *tx, struct txbox_error *err)
{
        _cleanup_free_ char *buf = NULL;
        long long seq, ns;
        int r = read_file_at(tx->dir_fd, "begin", BEGIN_MAX, &buf, NULL);

        if (r < 0 || sscanf(buf, "%lld %lld", &seq, &ns) != 2)
                return tx_err(err, r < 0 ? -r : EBADMSG, "cannot read '%s/tx/%s/begin'", tx->ws->state, tx->rec.id);
        tx->begin_seq = seq;
        tx->begin_ns = ns;
        return 0;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
        char *w = s;
        for (char *p = s; *p; p++) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
                    p[3] <= '7') {
                        *w++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                        p += 3;
                } else
                        *w++ = *p;
        }
        *w = '\0';
}

/* The overlay shows only the workspace's own filesystem: a mount inside it would be
 * invisible in the sandbox and outside the transaction.  Refuse rather than surprise.
 * Checked just before each program runs (a server's workspace may gain a mount between
 * commands), and read again only when the mount table changed since: /proc/self/mountinfo,
 * kept open, reports a change as POLLPRI once. */
static int check_submounts(struct txbox_ws *ws, struct txbox_error *err)
{
        struct pollfd pf = {.fd = ws->mountinfo_fd, .events = POLLPRI};
        char line[8192], mp[PATH_MAX];
        size_t n = 0, wl = strlen(ws->path);

        if (ws->mountinfo_fd >= 0 && ws->mounts_checked && poll(&pf, 1, 0) == 1 && !(pf.revents & POLLPRI))
                return 0;
        ws->mounts_checked = false;
        if (ws->mountinfo_fd < 0)
                ws->mountinfo_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        int fd = ws->mountinfo_fd >= 0 ? fcntl(ws->mountinfo_fd, F_DUPFD_CLOEXEC, 0) : -1;
        _cleanup_fclose_ FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
        if (!f) {
                closep(&fd);
                return 0; /* no /proc: the sandbox setup reports that more precisely */
        }
        rewind(f);
        while (fgets(line, sizeof(line), f)) {
                if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1)
                        continue;
                unescape_octal(mp);
                if (strncmp(mp, ws->path, wl) || mp[wl] != '/' || !mp[wl + 1])
                        continue;
                if (n++ == 0)
                        tx_err(err, EXDEV, "workspace '%s' has a mount point inside it at '%s': the overlay cannot "
                                           "include another mount, so its files would be outside the transaction; "
                                           "unmount it or use a workspace without mounts inside", ws->path, mp);
        }
        ws->mounts_checked = n == 0;
        return n ? -EXDEV : 0;
}

int txbox_tx_begin(struct txbox_ws *ws, char *const argv[], struct txbox_tx **out,
                   struct txbox_error *err)
{
        struct txbox_tx *tx = tx_new(ws);
        char cwd[PATH_MAX];
        int r;

        random_hex(tx->rec.id, 5);
        tx->rec.argv = strv_dup(argv);
        tx->rec.cwd = xstrdup(getcwd(cwd, sizeof(cwd)) ? cwd : ws->path);
        tx->rec.decision = xstrdup("allow");
        tx->rec.outcome = TXBOX_RUNNING;
        tx->rec.started_ms = now_ms();
        tx->t0_us = mono_us();
        if ((r = tx_claim(ws, tx->rec.id, false, err)) < 0)
                goto fail;
        tx->lock_fd = r;
        trace_mark("claimed");
        if ((r = idmap_plan(&tx->idmap, err)) < 0)
                goto fail;
        trace_mark("idmap");
        /* The snapshot and the audit row come with the run (tx_seal), so that a prestarted
         * sandbox gets ready meanwhile; recovery removes a claimed dir without a row. */
        if ((r = make_tx_dir(tx, err)) < 0) {
                rm_rf_at(ws->tx_fd, tx->rec.id);
                goto fail;
        }
        *out = tx;
        trace_mark("begun");
        return 0;
fail:
        release(tx);
        txbox_tx_free(tx);
        return r;
}

int txbox_tx_load(struct txbox_ws *ws, const char *id, struct txbox_tx **out, struct txbox_error *err)
{
        struct txbox_tx *tx = tx_new(ws);
        int r;

        if ((r = audit_get(ws->audit, id, &tx->rec, err)) < 0)
                goto fail;
        if (tx->rec.outcome != TXBOX_PENDING) {
                r = tx_err(err, EINVAL, "transaction %s is %s, not pending: only pending transactions can be "
                                        "committed or rolled back (use txbox undo for committed ones)",
                           tx->rec.id, txbox_outcome_name(tx->rec.outcome));
                goto fail;
        }
        if ((r = tx_claim(ws, tx->rec.id, false, err)) < 0)
                goto fail;
        tx->lock_fd = r;
        tx->dir_fd = openat(ws->tx_fd, tx->rec.id, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (tx->dir_fd < 0) {
                r = tx_err(err, errno, "the layers of pending tx %s are missing from '%s/tx': %s", tx->rec.id,
                           ws->state, strerror(errno));
                goto fail;
        }
        /* A session's process may have died mid-step: only whole savepoints may count. */
        if ((r = tx_session_tidy(tx->dir_fd, "tidy")) < 0) {
                r = tx_err(err, -r, "cannot tidy the savepoints of session %s: %s", tx->rec.id, strerror(-r));
                goto fail;
        }
        if ((r = read_snapshot(tx, err)) < 0)
                goto fail;
        tx->in_log = true;
        tx->t0_us = mono_us() - tx->rec.duration_ms * 1000;
        *out = tx;
        return 0;
fail:
        release(tx);
        txbox_tx_free(tx);
        return r;
}

/* ---- run ---- */

struct owner_scan {
        const struct idmap *m;
        struct strvec bad;
        size_t seen;
};

/* Files whose owner or group is unmapped in the sandbox make overlay copy-up fail with
 * EOVERFLOW when the program writes them: find them before running so the user learns
 * which ones and why. */
static void scan_owners(int dirfd, const char *rel, struct owner_scan *sc, int depth)
{
        DIR *d;
        struct dirent *de;
        int dfd = dup(dirfd);

        if (dfd < 0 || depth > CS_MAX_DEPTH || !(d = fdopendir(dfd))) {
                if (dfd >= 0)
                        close(dfd);
                return;
        }
        while ((de = readdir(d)) && sc->bad.n < 5 && sc->seen++ < CS_MAX_ENTRIES) {
                struct stat st;
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
                    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                _cleanup_free_ char *p = *rel ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
                if (!idmap_has_uid(sc->m, st.st_uid) || !idmap_has_gid(sc->m, st.st_gid))
                        strvec_push(&sc->bad, xasprintf("%s (uid %u, gid %u)", p, st.st_uid, st.st_gid));
                if (!S_ISDIR(st.st_mode))
                        continue;
                _cleanup_close_ int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0)
                        scan_owners(sub, p, sc, depth + 1);
        }
        closedir(d);
}

static void warn_unmapped(struct txbox_tx *tx, const struct idmap *m)
{
        struct owner_scan sc = {.m = m};
        struct stat st;

        if (fstat(tx->ws->ws_fd, &st) == 0 && (!idmap_has_uid(m, st.st_uid) || !idmap_has_gid(m, st.st_gid)))
                strvec_push(&sc.bad, xasprintf(". (uid %u, gid %u)", st.st_uid, st.st_gid));
        scan_owners(tx->ws->ws_fd, "", &sc, 0);
        if (sc.bad.n) {
                char list[700] = "";
                for (size_t i = 0; i < sc.bad.n; i++)
                        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s'%s'", i ? ", " : "", sc.bad.v[i]);
                free(tx->warning);
                tx->warning = xasprintf("workspace entries owned by ids the sandbox cannot map (only uid %u and "
                                        "gid %u are mapped without privileges): %s%s; writing them will fail "
                                        "with EOVERFLOW: chown them to yourself or run txbox as root",
                                        (unsigned)getuid(), (unsigned)getgid(), list, sc.bad.n >= 5 ? ", ..." : "");
        }
        strvec_clear(&sc.bad);
}

const char *txbox_tx_warning(const struct txbox_tx *tx) { return tx->warning; }

void tx_discard(struct txbox_tx *tx)
{
        if (!tx)
                return;
        sandbox_abort(TAKE_PTR(tx->sb));
        rm_rf_at(tx->ws->tx_fd, tx->rec.id);
        release(tx);
        txbox_tx_free(tx);
}

void tx_set_command(struct txbox_tx *tx, char *const argv[])
{
        char cwd[PATH_MAX];

        strv_free(tx->rec.argv);
        tx->rec.argv = strv_dup(argv);
        free(tx->rec.cwd);
        tx->rec.cwd = xstrdup(getcwd(cwd, sizeof(cwd)) ? cwd : tx->ws->path);
        tx->rec.started_ms = now_ms();
        tx->t0_us = mono_us();
}

/* Before the program may run: the begin snapshot (first committer wins) and the audit row
 * that recovery needs. */
int tx_seal(struct txbox_tx *tx, struct txbox_error *err)
{
        bool defer;
        int r;

        if (tx->in_log || tx->log_copy)
                return 0;
        if ((r = check_submounts(tx->ws, err)) < 0 || (r = write_snapshot(tx, &defer, err)) < 0)
                return r;
        if (defer) {
                tx->log_copy = xcalloc(1, sizeof(*tx->log_copy));
                record_copy(tx->log_copy, &tx->rec);
        } else if ((r = audit_insert(tx->ws->audit, &tx->rec, err)) < 0)
                return r;
        else
                tx->in_log = true;
        trace_mark("sealed");
        return 0;
}

/* Make sure a deferred row is in the log: the sweeper's insert, or ours now. */
static int tx_log_flush(struct txbox_tx *tx, struct txbox_error *err)
{
        struct txbox_ws *ws = tx->ws;
        int r;

        if (!tx->log_copy)
                return 0;
        if (ws->log_rec == tx->log_copy && ws->log_done) {
                if ((r = ws->log_r) < 0)
                        *err = ws->log_err;
        } else
                r = audit_insert(ws->audit, tx->log_copy, err);
        if (ws->log_rec == tx->log_copy)
                ws->log_rec = NULL;
        if (r == 0) {
                tx->in_log = true;
                tx->rec.seq = tx->log_copy->seq;
        }
        txbox_record_clear(tx->log_copy);
        free(TAKE_PTR(tx->log_copy));
        return r;
}

static void fill_spec(struct txbox_tx *tx, const struct txbox_run_opts *opts)
{
        static const struct txbox_run_opts none = {.net = TXBOX_NET_NONE, .stdio = {0, 1, 2}};
        struct txbox_ws *ws = tx->ws;

        if (!opts)
                opts = &none;
        if (!tx->upper) {
                if (tx->sp)
                        tx_session_layers(tx, &tx->upper, &tx->work, &tx->lowers);
                else {
                        tx->upper = xasprintf("%s/tx/%s/upper", ws->state, tx->rec.id);
                        tx->work = xasprintf("%s/tx/%s/work", ws->state, tx->rec.id);
                }
        }
        tx->spec = (struct sandbox_spec){
                .workspace = ws->path,
                .upper = tx->upper,
                .lowers = tx->lowers.v,
                .work = tx->work,
                .state_dir = ws->state_mask,
                .home = home_dir(),
                .argv = tx->sp ? tx->sp_argv : tx->rec.argv,
                .cwd = opts->cwd ? opts->cwd : ws->path,
                .net = opts->net,
                .net_allow = opts->net_allow,
                .timeout_s = opts->timeout_s,
                .idmap = &tx->idmap,
                .shared_ns = ws->shared_ns,
                .exec_check = ws->policy ? tx_exec_check : NULL,
                .exec_ctx = tx,
                .limits = opts->limits,
                .env_keep = opts->env_keep,
                .allow_unix_sockets = opts->allow_unix_sockets,
                .stdio_redirect = opts->stdio_redirect,
                .stdio = {opts->stdio[0], opts->stdio[1], opts->stdio[2]},
        };
        tx->sb_opts = *opts;
}

static int start_sandbox(struct txbox_tx *tx, const struct txbox_run_opts *opts, struct txbox_error *err)
{
        int r;

        if (!tx->idmap.nuid && (r = idmap_plan(&tx->idmap, err)) < 0)
                return r;
        /* The sandbox's init is cloned like a fork: no other thread may hold a lock it would
         * inherit (malloc's, SQLite's) at that moment. */
        ws_sweep_wait(tx->ws);
        fill_spec(tx, opts);
        if ((r = sandbox_start(&tx->spec, &tx->sb, err)) < 0)
                tx->sb = NULL;
        return r;
}

void txbox_tx_prestart(struct txbox_tx *tx, const struct txbox_run_opts *opts)
{
        const struct policy *p;
        struct txbox_error e;

        /* Sessions stack layers that change with every savepoint: started at run time.  The
         * policy decides whether execs are checked, which the sandbox is built for.  Errors
         * are reported again by txbox_tx_run, where they matter. */
        if (!tx->sb && !tx->sp && opts && ws_policy(tx->ws, &p, &e) == 0)
                start_sandbox(tx, opts, &e);
}

/* Was the prestarted sandbox made for these options?  (cwd, stdio and the timeout are the
 * run's own.) */
static bool same_start(const struct txbox_tx *tx, const struct txbox_run_opts *o)
{
        const struct txbox_run_opts *a = &tx->sb_opts;
        return o && a->net == o->net && a->net_allow == o->net_allow && a->env_keep == o->env_keep &&
               a->allow_unix_sockets == o->allow_unix_sockets && a->stdio_redirect == o->stdio_redirect &&
               !memcmp(&a->limits, &o->limits, sizeof(a->limits)) &&
               (tx->spec.exec_check != NULL) == (tx->ws->policy != NULL);
}

int txbox_tx_run(struct txbox_tx *tx, const struct txbox_run_opts *opts, struct txbox_run_result *res,
                 struct txbox_error *err)
{
        int r;

        if (tx->sb && !same_start(tx, opts)) {
                sandbox_abort(tx->sb);
                tx->sb = NULL;
        }
        if ((r = tx_seal(tx, err)) < 0 || (!tx->sb && (r = start_sandbox(tx, opts, err)) < 0))
                goto fail;
        /* The run's own: what the sandbox reads only once the command is sent. */
        tx->spec.timeout_s = opts ? opts->timeout_s : 0;
        for (int i = 0; opts && i < 3; i++)
                tx->spec.stdio[i] = opts->stdio[i];
        tx->spec.watch = opts ? opts->watch : NULL;
        trace_mark("run");
        ws_sweep(tx->ws, tx->log_copy); /* row and audit checkpoint while this program runs, then trash */
        r = sandbox_exec(TAKE_PTR(tx->sb), tx->sp ? tx->sp_argv : tx->rec.argv,
                         opts && opts->cwd ? opts->cwd : tx->ws->path, res, err);
        /* The thread's audit writes never interleave with ours (last_insert_rowid, open
         * transactions): it is done with the log once the program has run.  Joined before
         * the next sandbox is cloned, or when the workspace closes. */
        ws_sweep_db_wait(tx->ws);
        struct txbox_error e2;
        int lr = tx_log_flush(tx, r < 0 ? &e2 : err);
        if (lr < 0 && r == 0)
                r = tx_err_wrap(err, "the program ran, but its audit row could not be written; its changes are discarded");
        trace_mark("sandbox done");
        txbox_tx_set_result(tx, res);
        free(tx->rec.env_dropped);
        tx->rec.env_dropped = res->env_dropped[0] ? xstrdup(res->env_dropped) : NULL;
        free(tx->rec.net_log);
        tx->rec.net_log = res->net_log[0] ? xstrdup(res->net_log) : NULL;
        if (res->limit_hit[0] && !tx->rec.message)
                tx->rec.message = xasprintf("the program was stopped at its %s limit: %s", res->limit_hit, res->limit_detail);
        /* Unmapped owners only matter when a write failed: looked for then, not every run. */
        if (r == 0 && res->exit_code != 0 && !tx->idmap.privileged)
                warn_unmapped(tx, &tx->idmap);
        return r;
fail:
        memset(res, 0, sizeof(*res));
        res->exit_code = -1;
        return r;
}

void txbox_tx_set_result(struct txbox_tx *tx, const struct txbox_run_result *res)
{
        tx->rec.exit_code = res->exit_code;
        tx->rec.signal = res->signal;
}

/* ---- evaluate, commit, rollback, keep ---- */

int txbox_tx_evaluate(struct txbox_tx *tx, struct txbox_error *err)
{
        char layer[48] = "upper";
        int r;

        /* A savepoint is judged on its own layer; a session about to commit, on all of them
         * folded into one. */
        if (tx->sp) {
                tx_session_dir(tx, layer, sizeof(layer) - 8);
                strcat(layer, "/upper");
        } else if (tx_is_session(tx) && (r = tx_session_fold(tx, err)) < 0)
                return r;
        if (!tx->sp && faccessat(tx->dir_fd, "prepared", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                return tx_err(err, EINVAL, "tx %s was prepared for a commit that did not complete: its layer no "
                              "longer says what the program did and cannot be judged again; txbox rollback %s",
                              tx->rec.id, tx->rec.id);
        _cleanup_close_ int upper = openat(tx->dir_fd, layer, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (upper < 0)
                return tx_err(err, errno, "cannot open the upper layer of tx %s: %s", tx->rec.id, strerror(errno));
        changeset_free(&tx->cs);
        if ((r = changeset_build(upper, tx->ws->ws_fd, &tx->cs, err)) < 0)
                return tx_err_wrap(err, "evaluate tx %s", tx->rec.id);
        if ((r = tx_judge_effects(tx, upper, err)) < 0)
                return tx_err_wrap(err, "evaluate tx %s", tx->rec.id);
        tx_record_take_changes(tx);
        tx->evaluated = true;
        return (int)tx->cs.nviolations;
}

/* Copy the changeset's paths and violations into the record. */
void tx_record_take_changes(struct txbox_tx *tx)
{
        record_set_changes(&tx->rec, tx->cs.paths, tx->cs.npaths, tx->cs.violations, tx->cs.nviolations);
}

static void set_message(struct txbox_tx *tx, const char *msg)
{
        free(tx->rec.message);
        tx->rec.message = xstrdup_or_null(msg);
}

static int finish_record(struct txbox_tx *tx, enum txbox_outcome o, struct txbox_error *err)
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

/* Leave only what undo needs: the journal, the marker and the originals. */
static void drop_layers(struct txbox_tx *tx)
{
        char as[64];

        snprintf(as, sizeof(as), "%s.upper", tx->rec.id);
        ws_trash(tx->ws, tx->dir_fd, "upper", as);
        snprintf(as, sizeof(as), "%s.work", tx->rec.id);
        ws_trash(tx->ws, tx->dir_fd, "work", as);
}

/* Has the live entry an op replaces, deletes or creates changed since the transaction
 * began?  (Directories' ctime moves when their entries change: a directory this
 * transaction deletes or replaces conflicts with any change beneath it, as it should.) */
static bool live_changed(struct txbox_tx *tx, const struct cs_op *o)
{
        struct stat st;
        const char *base;
        _cleanup_close_ int dir = open_parent_beneath(tx->ws->ws_fd, o->path, &base);

        if (dir < 0)
                return true; /* its parent went away or became a symlink */
        bool exists = fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (o->kind == CS_OP_CHMOD)
                return !exists || (st.st_mode & 07777) != (o->old_mode & 07777);
        if (!o->has_old)
                return exists;
        int64_t ct = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
        return !exists || ct >= tx->begin_ns || (st.st_mode & S_IFMT) != (o->old_mode & S_IFMT);
}

/* First committer wins: refuse when a path this transaction changes was changed in the live
 * workspace after it began, by a transaction (audit log) or by anyone else (ctime). */
static int check_conflicts(struct txbox_tx *tx, struct txbox_error *err)
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
        for (size_t i = 0; i < tx->cs.nops && bad.n < 20; i++)
                if (!strvec_lists_path(&bad, tx->cs.ops[i].path) && live_changed(tx, &tx->cs.ops[i]))
                        strvec_push(&bad, xasprintf("%s (changed since tx %s began)", tx->cs.ops[i].path, tx->rec.id));
        for (size_t i = 0; i < tx->cs.touched.n && bad.n < 20; i++) {
                struct cs_op o = {.path = tx->cs.touched.v[i], .kind = CS_OP_SWAP, .has_old = true};
                struct stat st;
                if (lstat_beneath(tx->ws->ws_fd, o.path, &st) == 0)
                        o.old_mode = st.st_mode;
                if (!strvec_lists_path(&bad, o.path) && live_changed(tx, &o))
                        strvec_push(&bad, xasprintf("%s (changed since tx %s began)", o.path, tx->rec.id));
        }
        if (!bad.n)
                return 0;
        for (size_t i = 0; i < bad.n && i < 8; i++)
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", bad.v[i]);
        r = tx_err(err, EAGAIN, "conflict: %s%s; nothing was applied and running the command again is safe", list,
                   bad.n > 8 ? ", ..." : "");
        strvec_clear(&bad);
        return r;
}

static int commit_locked(struct txbox_tx *tx, struct txbox_error *err)
{
        _cleanup_close_ int upper = openat(tx->dir_fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_close_ int undo = -1;
        enum txbox_outcome before = tx->rec.outcome;
        struct txbox_error e2;
        struct strvec settled = {0};
        int r;

        if (upper < 0)
                return tx_err(err, errno, "cannot open the upper layer of tx %s: %s", tx->rec.id, strerror(errno));
        if ((r = check_conflicts(tx, err)) < 0)
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
                return tx_err(err, errno, "cannot create the undo area of tx %s: %s", tx->rec.id, strerror(errno));
        /* One filesystem sync: it makes the journal and the new files' contents (the overlay
         * is volatile) durable before the first rename, and the commit with them: from here
         * recovery completes it.  The renames need no sync of their own (see settle()).
         * The log row goes first, with the paths and the exit status: recovery completes a
         * commit from its journal and this row. */
        tx->rec.outcome = TXBOX_COMMITTING;
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
        if ((r = journal_apply(tx->ws->ws_fd, upper, undo, tx->cs.ops, tx->cs.nops, "commit", &pg, false, err)) < 0)
                goto revert;
        trace_mark("commit: applied");
        /* The marker says every op was applied; recovery applies the journal again all the
         * same (idempotent): a file system may keep the marker and lose a rename. */
        if ((r = failpoint("commit")) < 0 || (r = write_file_atomic_at(tx->dir_fd, "committed", "", 0, false)) < 0) {
                tx_err(err, -r, "cannot write the commit marker of tx %s: %s", tx->rec.id, strerror(-r));
                unlinkat(tx->dir_fd, "committed", 0);
                goto revert;
        }
        (void)failpoint("commit"); /* past the marker: only a crash is of interest */
        trace_mark("commit: marked");
        if ((r = audit_next_commit_seq(tx->ws->audit, &tx->rec.commit_seq, err)) < 0)
                return r; /* applied and marked: recovery completes the audit row */
        if (before == TXBOX_PENDING)
                set_message(tx, NULL); /* "is pending: txbox commit ..." no longer holds */
        return finish_record(tx, TXBOX_COMMITTED, err);
revert:; /* a label needs a statement before the declaration below (C11; clang holds to it) */
        /* Put the workspace back as it was; the error above is what the user needs to see.
         * The journal becomes "revert" first, or recovery would complete the commit; when
         * even the revert fails it stays, and recovery finishes the job.  (Should the rename
         * fail too, a crash from here on leaves a journal: completed by recovery, also whole.) */
        const char *plan = renameat(tx->dir_fd, "journal", tx->dir_fd, "revert") == 0 ? "revert" : "journal";
        if (journal_revert(tx->ws->ws_fd, upper, undo, tx->cs.ops, tx->cs.nops, &e2) < 0) {
                tx->stuck = true;
                return tx_err_wrap(err, "%s; the workspace is being restored by 'txbox recover'", e2.msg);
        }
        unlinkat(tx->dir_fd, plan, 0);
unrecord:
        tx->rec.outcome = before;
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

        if (!tx->evaluated && (r = txbox_tx_evaluate(tx, err)) < 0)
                return r;
        if (tx->cs.nviolations)
                return tx_err(err, EPERM, "tx %s broke rule %s on '%s' (%s); it cannot be committed", tx->rec.id,
                              tx->cs.violations[0].rule, tx->cs.violations[0].path, tx->cs.violations[0].detail);
        if ((r = ws_lock(tx->ws, err)) < 0)
                return r;
        r = commit_locked(tx, err);
        ws_unlock(tx->ws);
        trace_mark("commit: recorded");
        if (r < 0 && tx->stuck)
                closep(&tx->lock_fd); /* leave active/ID for recovery */
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
                release(tx);
        return 0;
}

int txbox_tx_rollback(struct txbox_tx *tx, const char *message, struct txbox_error *err)
{
        sandbox_abort(TAKE_PTR(tx->sb)); /* its init may still be mounting the layers */
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
        release(tx);
        return r;
}

int txbox_tx_abort(struct txbox_tx *tx, const char *message, struct txbox_error *err)
{
        if (!tx->sp)
                return txbox_tx_rollback(tx, message, err);
        int r = tx_session_end_savepoint(tx, false, err);
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
                r = tx_session_end_savepoint(tx, false, err);
                free(tx->rec.message);
                tx->rec.message = msg;
                return r;
        }
        if (r < 0)
                return tx_err(err, -r, "cannot remove the layers of tx %s: %s", tx->rec.id, strerror(-r));
        r = finish_record(tx, TXBOX_DENIED, err);
        release(tx);
        return r;
}

int txbox_tx_keep(struct txbox_tx *tx, struct txbox_error *err)
{
        int r = finish_record(tx, TXBOX_PENDING, err);
        if (r == 0)
                release(tx);
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

        *status = res->timed_out ? 124 : res->signal ? 128 + res->signal : res->exit_code;
        if (res->cancelled) { /* whatever the mode: a cancelled command leaves nothing */
                free(tx->rec.message);
                tx->rec.message = xasprintf("rolled back tx %s: the run was cancelled%s (%zu change%s discarded)",
                                            tx->rec.id, res->cancel_signal ? " by a signal to txbox" : " by the client",
                                            n, n == 1 ? "" : "s");
                return txbox_tx_rollback(tx, NULL, err);
        }
        if (res->timed_out) {
                free(tx->rec.message);
                tx->rec.message = xasprintf("rolled back tx %s: the program ran past the timeout and was killed (%zu change%s discarded)",
                                            tx->rec.id, n, n == 1 ? "" : "s");
                return txbox_tx_rollback(tx, NULL, err);
        }
        if (mode == TXBOX_COMMIT_KEEP) {
                if (n || tx->rec.nviolations) {
                        free(tx->rec.message);
                        tx->rec.message = xasprintf("tx %s is pending with %zu change%s: txbox commit %s or txbox rollback %s",
                                                    tx->rec.id, n, n == 1 ? "" : "s", tx->rec.id, tx->rec.id);
                }
                return txbox_tx_keep(tx, err);
        }
        if (mode == TXBOX_COMMIT_DISCARD) {
                free(tx->rec.message);
                tx->rec.message = xasprintf("discarded tx %s as asked (%zu change%s)", tx->rec.id, n, n == 1 ? "" : "s");
                return txbox_tx_rollback(tx, NULL, err);
        }
        if (tx->rec.nviolations) {
                violation_line(tx);
                if (ok)
                        *status = 123;
                return txbox_tx_rollback(tx, NULL, err);
        }
        if (!ok) {
                if (res->limit_hit[0]) {
                        /* Name the limit, not the SIGKILL that enforced it. */
                        free(tx->rec.message);
                        tx->rec.message = xasprintf("rolled back tx %s: the program was stopped at its %s limit: %s "
                                                    "(%zu change%s discarded)", tx->rec.id, res->limit_hit,
                                                    res->limit_detail, n, n == 1 ? "" : "s");
                } else if (n) {
                        free(tx->rec.message);
                        tx->rec.message = xasprintf("rolled back tx %s: the program %s %d (%zu change%s discarded)", tx->rec.id,
                                                    res->signal ? "was killed by signal" : "exited with status",
                                                    res->signal ? res->signal : res->exit_code, n, n == 1 ? "" : "s");
                }
                return txbox_tx_rollback(tx, NULL, err);
        }
        if ((r = txbox_tx_commit(tx, err)) < 0 && tx->lock_fd >= 0) {
                struct txbox_error e2;
                free(tx->rec.message);
                tx->rec.message = xasprintf("rolled back tx %s: %s%s", tx->rec.id, r == -EAGAIN ? "" : "commit failed: ",
                                            err->msg);
                txbox_tx_rollback(tx, NULL, &e2);
                if (r == -EAGAIN) {
                        *status = 122;
                        return 0;
                }
        }
        return r;
}

/* A savepoint is kept when its command succeeded (and auto or keep was asked), else dropped;
 * the session stays pending either way. */
static int decide_savepoint(struct txbox_tx *tx, enum txbox_commit_mode mode, const struct txbox_run_result *res,
                            int *status, struct txbox_error *err)
{
        bool ok = res->exit_code == 0 && !res->signal && !res->timed_out && !res->cancelled && !tx->rec.nviolations;
        bool keep = ok && mode != TXBOX_COMMIT_DISCARD;

        *status = res->timed_out ? 124 : res->signal ? 128 + res->signal : res->exit_code;
        if (res->exit_code == 0 && !res->signal && tx->rec.nviolations)
                *status = 123;
        int r = tx_session_end_savepoint(tx, keep, err);
        if (r == 0 && !keep) {
                char *m = xasprintf("savepoint %d of session %s dropped: %s; the session keeps its earlier savepoints",
                                    tx->sp, tx->rec.id,
                                    res->cancelled      ? "the run was cancelled"
                                    : res->timed_out    ? "the program ran past the timeout"
                                    : res->limit_hit[0] ? "the program was stopped at a resource limit"
                                    : tx->rec.nviolations ? "an effect rule was broken"
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
                *status = 125;
                return r;
        }
        trace_mark("evaluated");
        r = tx->sp ? decide_savepoint(tx, mode, res, status, err) : decide(tx, mode, res, status, err);
        trace_mark("decided");
        if (r < 0) {
                *status = 125;
                return r;
        }
        if (why && tx->rec.message && (*status != 0 || (tx->rec.outcome == TXBOX_PENDING && !tx->sp)))
                *why = tx->rec.message;
        return 0;
}
