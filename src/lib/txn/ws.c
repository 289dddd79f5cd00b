/* The workspace and its state dir: where the state dir goes and the checks on it, opening
 * and closing a workspace, the workspace lock, and the small state files that let the next
 * transaction see the last commit without SQLite (state/seq, state/changed).  The sweeper
 * is in sweep.c, transactions in tx.c, commits in commit.c.
 *
 * State dir layout:
 *   audit.db            the audit store (SQLite, WAL)
 *   lock                flock'd around every commit, undo and recovery step
 *   active/ID           one file per transaction a process is working on, flock'd by it;
 *                       recovery visits only these (a dead owner leaves an unlocked file)
 *   active/.claim-*     a claim being made (.claim-ID-PID), or a process's released one
 *                       kept for its next (.claim-spare-PID, unlocked); recovery removes
 *                       either once its process is gone
 *   tx/ID/upper, work   the overlay's layers
 *   settle/BOOT.ID      a commit whose renames no filesystem sync has covered yet (its
 *                       active/ID, moved): recovery after a reboot completes it
 *   trash/              finished transactions' layers, removed while the next program runs
 *   tx/ID/journal       the commit plan; once durable, the commit is decided
 *   tx/ID/committed     marker: every op applied
 *   tx/ID/revert        the journal of a commit that failed and is being reverted
 *   tx/ID/undo/         originals moved aside by the commit (what undo puts back)
 *   tx/ID/undoing, undone, redo/   the same for an undo
 *   edits/NAME          an agent's edit captured before it ran, waiting for its record
 *                       (edits.c): meta, N.keep (hard links), N.copy (contents)
 *   seq                 the newest commit's sequence number (ws_newest_commit_seq)
 *   changed             empty; its ctime is at or after every change txbox made to the
 *                       workspace (tx_stamp_changes)
 */
#define _GNU_SOURCE
#include "txn/tx.h"

#include <limits.h>
#include <pwd.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fileio.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/str.h"
#include "base/strv.h"
#include "base/trace.h"
#include "txbox.h"

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

const char *ws_home_dir(void)
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
        const char *home = ws_home_dir();
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
        _cleanup_free_ char *in = path[0] == '/'
                                          ? xstrdup(path)
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
                return tx_err(err, EINVAL,
                              "state dir '%s' is inside the workspace '%s'; choose a directory "
                              "outside it (the overlay cannot have its upper layer in its lower layer)",
                              state, ws);
        if (path_is_within(ws, state))
                return tx_err(err, EINVAL, "workspace '%s' is inside the state dir '%s'", ws, state);
        if (!same_mount(state, ws))
                return tx_err(err, EXDEV,
                              "state dir '%s' is on another filesystem or mount than workspace '%s'; "
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

/* ---- discovery ---- */

static bool env_true(const char *name)
{
        const char *v = getenv(name);
        return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes"));
}

/* Does dir already have a state dir (the default mapping, or state_opt's)? */
static bool has_state_dir(const char *dir, const char *state_opt)
{
        _cleanup_free_ char *state = NULL, *mask = NULL;
        struct txbox_error e;
        struct stat st;

        if (state_opt) /* one state dir for whichever workspace: it says nothing of this one */
                return false;
        return default_state(dir, &state, &mask, &e) == 0 && stat(state, &st) == 0 && S_ISDIR(st.st_mode);
}

int txbox_ws_discover(const char *state_opt, struct txbox_ws_discovery *out, struct txbox_error *err)
{
        /* .claude: Claude Code's project settings (txbox prefix runs its commands) */
        static const char *const marks[] = {".txbox", ".git", ".claude"};
        char cwd[PATH_MAX], homebuf[PATH_MAX];
        const char *home = ws_home_dir();
        bool across = env_true("TXBOX_DISCOVERY_ACROSS_FILESYSTEM");

        memset(out, 0, sizeof(*out));
        if (!getcwd(cwd, sizeof(cwd)))
                return tx_err(err, errno, "cannot find the current directory: %s; pass -C DIR", strerror(errno));
        if (home && realpath(home, homebuf))
                home = homebuf;
        _cleanup_free_ char *dir = xstrdup(cwd);
        for (;;) {
                struct stat st;
                if (home && !strcmp(dir, home)) {
                        out->stopped = "$HOME";
                        break;
                }
                for (size_t i = 0; i < ARRAY_SIZE(marks); i++) {
                        _cleanup_free_ char *p = xasprintf("%s/%s", strcmp(dir, "/") ? dir : "", marks[i]);
                        if (lstat(p, &st) == 0) {
                                out->found = TXBOX_WS_MARK;
                                snprintf(out->mark, sizeof(out->mark), "%s", marks[i]);
                                out->path = TAKE_PTR(dir);
                                return 0;
                        }
                }
                if (has_state_dir(dir, state_opt)) {
                        out->found = TXBOX_WS_STATE;
                        out->path = TAKE_PTR(dir);
                        return 0;
                }
                if (!strcmp(dir, "/")) {
                        out->stopped = "/";
                        break;
                }
                _cleanup_free_ char *parent = xstrdup(dir);
                char *slash = strrchr(parent, '/');
                slash[slash == parent ? 1 : 0] = '\0';
                uint64_t a, b;
                if (!across && (mount_id(dir, &a) < 0 || mount_id(parent, &b) < 0 || a != b)) {
                        out->stopped = "mount";
                        break;
                }
                free(dir);
                dir = TAKE_PTR(parent);
        }
        out->found = TXBOX_WS_CWD;
        out->stop_dir = TAKE_PTR(dir);
        out->path = xstrdup(cwd);
        return 0;
}

void txbox_ws_discovery_free(struct txbox_ws_discovery *d)
{
        if (!d)
                return;
        free(d->path);
        free(d->stop_dir);
        memset(d, 0, sizeof(*d));
}

/* NAME in DIRFD, made if missing (opened first: it is there but the first time). */
static int open_subdir(int dirfd, const char *name)
{
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && (mkdirat(dirfd, name, 0700) == 0 || errno == EEXIST))
                fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd;
}

static int open_state(struct txbox_ws *ws, unsigned flags, struct txbox_error *err)
{
        int r;
        ws->state_fd = open(ws->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ws->state_fd < 0 && errno == ENOENT && (flags & TXBOX_OPEN_NOCREATE)) {
                ws->no_state = true; /* read-only use of a workspace without transactions */
                return 0;
        }
        if (ws->state_fd < 0 && errno == ENOENT) {
                if ((r = mkdir_p(ws->state, 0700)) < 0)
                        return tx_err(err, -r, "cannot create state dir '%s': %s", ws->state, strerror(-r));
                ws->state_fd = open(ws->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                ws->state_created = ws->state_fd >= 0;
        }
        if (ws->state_fd < 0)
                return tx_err(err, errno, "cannot open state dir '%s': %s", ws->state, strerror(errno));
        if ((ws->tx_fd = open_subdir(ws->state_fd, "tx")) < 0 ||
            (ws->active_fd = open_subdir(ws->state_fd, "active")) < 0 ||
            (ws->trash_fd = open_subdir(ws->state_fd, "trash")) < 0 ||
            (ws->settle_fd = open_subdir(ws->state_fd, "settle")) < 0)
                return tx_err(err, errno,
                              "cannot create or open tx/, active/, trash/ or settle/ in state dir "
                              "'%s': %s; it must be a directory this user owns and can write",
                              ws->state, strerror(errno));
        ws->lock_fd = openat(ws->state_fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (ws->lock_fd < 0)
                return tx_err(err, errno, "cannot open state dir '%s': %s", ws->state, strerror(errno));
        _cleanup_free_ char *db = xasprintf("%s/audit.db", ws->state);
        if ((r = audit_open_deferred(db, &ws->audit, err)) < 0)
                return r;
        audit_set_check(ws->audit, ws_check_log, ws); /* a log that lost rows (logrepair.c) */
        return (flags & TXBOX_OPEN_DEFER_LOG) ? 0 : audit_connect(ws->audit, err);
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
                ws->mountinfo_fd = ws->spare_claim_fd = -1;
        if (!realpath(workspace, buf)) {
                r = tx_err(err, errno, "workspace '%s' %s", workspace,
                           errno == ENOENT ? "does not exist; create it or pass -C DIR" : strerror(errno));
                goto fail;
        }
        ws->path = xstrdup(buf);
        ws->ws_fd = open(ws->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ws->ws_fd < 0) {
                r = tx_err(err, errno, "workspace '%s' is not a usable directory: %s", ws->path,
                           strerror(errno));
                goto fail;
        }
        if (state_dir) {
                _cleanup_free_ char *abs = absolute_path(state_dir);
                /* Check before creating anything: a state dir must never appear inside the
                 * workspace, not even empty. */
                if ((r = check_state_dir(ws->path, abs, err)) < 0)
                        goto fail;
                /* Read-only use makes nothing: a missing one stays missing (empty log). */
                if (!(flags & TXBOX_OPEN_NOCREATE) && (r = mkdir_p(state_dir, 0700)) < 0) {
                        r = tx_err(err, -r, "cannot create state dir '%s': %s", state_dir, strerror(-r));
                        goto fail;
                }
                if (realpath(state_dir, buf))
                        ws->state = xstrdup(buf);
                else if (errno == ENOENT && (flags & TXBOX_OPEN_NOCREATE))
                        ws->state = TAKE_PTR(abs);
                else {
                        r = tx_err(err, errno, "cannot open state dir '%s': %s", state_dir, strerror(errno));
                        goto fail;
                }
                ws->state_mask = xstrdup(ws->state);
        } else if ((r = default_state(ws->path, &ws->state, &ws->state_mask, err)) < 0)
                goto fail;
        trace_mark("state dir found");
        if ((r = check_state_dir(ws->path, ws->state, err)) < 0 ||
            (r = open_state(ws, flags, err)) < 0)
                goto fail;
        trace_mark("state open");
        if ((flags & TXBOX_OPEN_RECOVER) && !ws->no_state && (r = txbox_recover(ws, NULL, err)) < 0)
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
        ws_discard_prepared(ws);
        ws_sweep_wait(ws);
        ws_judge_stop(ws);
        sandbox_reap(true);
        sandbox_shared_ns_close(ws->shared_ns);
        policy_free(ws->policy);
        free(ws->policy_file);
        free(ws->approver);
        audit_close(ws->audit);
        closep(&ws->ws_fd);
        closep(&ws->state_fd);
        closep(&ws->tx_fd);
        ws_drop_spare_claim(ws);
        closep(&ws->active_fd);
        closep(&ws->trash_fd);
        closep(&ws->settle_fd);
        closep(&ws->lock_fd);
        closep(&ws->mountinfo_fd);
        pthread_cond_destroy(&ws->sweep_cv);
        pthread_mutex_destroy(&ws->sweep_mu);
        free(ws->notice_held);
        strvec_clear(&ws->allowed_effects);
        free(ws->path);
        free(ws->state);
        free(ws->state_mask);
        free(ws);
}

const char *txbox_ws_path(const struct txbox_ws *ws) { return ws->path; }

void txbox_ws_set_notice(struct txbox_ws *ws, txbox_notice_fn fn, void *ctx)
{
        ws->notice = fn;
        ws->notice_ctx = ctx;
        if (fn && ws->notice_held)
                fn(ctx, ws->notice_held);
        free(TAKE_PTR(ws->notice_held));
}

void txbox_ws_set_progress(struct txbox_ws *ws, txbox_progress_fn fn, void *ctx)
{
        ws->progress = fn;
        ws->progress_ctx = ctx;
}
const char *txbox_ws_state_path(const struct txbox_ws *ws) { return ws->state; }
bool txbox_ws_has_state(const struct txbox_ws *ws) { return !ws->no_state; }
bool txbox_ws_state_created(const struct txbox_ws *ws) { return ws->state_created; }

int ws_lock(struct txbox_ws *ws, struct txbox_error *err)
{
        while (flock(ws->lock_fd, LOCK_EX) < 0)
                if (errno != EINTR)
                        return tx_err(err, errno, "cannot lock '%s/lock': %s", ws->state, strerror(errno));
        return 0;
}

void ws_unlock(struct txbox_ws *ws) { flock(ws->lock_fd, LOCK_UN); }

/* ---- conflict stamps and the newest commit ---- */

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

/* How long begin waits, at most, for the filesystem's clock to pass the last change txbox
 * made (fs_now_after): a tick is 1/HZ, at most 10 ms; a stamp further ahead (a clock set
 * back, a state file not ours) is not waited for. */
#define BEGIN_WAIT_NS (20 * 1000000LL)
#define BEGIN_WAIT_STEP_NS (250 * 1000L)

/* A stamp on the filesystem's clock strictly later than AFTER (ns), taken as fs_now_ns does.
 * Two stamps inside one tick compare equal, so a transaction that began in the tick of the
 * commit before it took that commit's own renames for changes made after it began: up to 8
 * of 20 sequential MCP calls appending to one file failed with 122.  Where the kernel has
 * fine-grained stamps (Linux 6.13 on), a second or third touch gets one at once; elsewhere
 * this sleeps out the rest of the tick. */
static int64_t fs_now_after(int dir_fd, int64_t after)
{
        int64_t now = fs_now_ns(dir_fd), t0 = mono_us();
        struct timespec step = {0, BEGIN_WAIT_STEP_NS};

        if (now > after || after - now > BEGIN_WAIT_NS)
                return now;
        for (int i = 0; now <= after && (mono_us() - t0) * 1000 < BEGIN_WAIT_NS; i++) {
                if (i >= 2)
                        nanosleep(&step, NULL);
                now = fs_now_ns(dir_fd);
        }
        return now;
}

int64_t tx_begin_stamp(int state_fd, int dir_fd)
{
        struct stat st;
        int64_t changes = 0;

        if (fstatat(state_fd, "changed", &st, AT_SYMLINK_NOFOLLOW) == 0)
                changes = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
        return fs_now_after(dir_fd, changes);
}

void tx_stamp_changes(int state_fd)
{
        /* Touching needs no content: the kernel gives the ctime a stamp no earlier than any
         * it gave before, those of the renames just made included.  A file of its own, not
         * state/seq, which every commit rewrites: a begin after a commit that changed
         * nothing (ls, grep) then need not wait for the next tick. */
        if (utimensat(state_fd, "changed", NULL, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
                int fd = openat(state_fd, "changed", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd >= 0)
                        close(fd);
        }
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
