/* Transaction handles: the claim on state/active/ID, begin (or load a pending one), the
 * begin snapshot and the audit row (seal), the sandbox started and run, and the evaluation
 * of its upper layer.  What is done with it after (conflicts, commit, rollback, keep, the
 * decision) is in commit.c; the workspace and state dir in ws.c, the sweeper in sweep.c. */
#define _GNU_SOURCE
#include "txn/tx.h"

#include <dirent.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fileio.h"
#include "base/mem.h"
#include "base/random.h"
#include "base/rmtree.h"
#include "base/strv.h"
#include "base/trace.h"
#include "store/record.h"
#include "txbox.h"

/* ---- transaction handles ---- */

/* The name of this process's spare claim: a hidden claim (recovery drops it once the
 * process is gone and nobody holds its lock, undo.c's drop_stale_hidden_claim). */
static void spare_name(char *buf, size_t size)
{
        snprintf(buf, size, ".claim-spare-%d", (int)getpid());
}

/* Claim ID with the spare claim: locked first, then renamed into place, as a new claim is
 * (so that recovery never sees an unlocked claim of a live transaction).  -1 when there is
 * none or it cannot be used (the caller makes a new one); -EEXIST when ID was claimed
 * meanwhile. */
static int claim_spare(struct txbox_ws *ws, const char *id)
{
        char name[64];
        int fd = ws->spare_claim_fd;

        if (fd < 0)
                return -1;
        spare_name(name, sizeof(name));
        /* A waiter that locked the released claim before we renamed it away holds it until
         * it sees the name gone: make a new one then. */
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                unlinkat(ws->active_fd, name, 0);
                closep(&ws->spare_claim_fd);
                return -1;
        }
        if (renameat2(ws->active_fd, name, ws->active_fd, id, RENAME_NOREPLACE) < 0) {
                int e = errno;
                flock(fd, LOCK_UN);
                if (e == EEXIST)
                        return -EEXIST;
                closep(&ws->spare_claim_fd); /* removed by another's recovery: make a new one */
                return -1;
        }
        ws->spare_claim_fd = -1;
        return fd;
}

/* Claim active/ID: exclusive lock held for as long as this process works on the tx. */
int tx_claim(struct txbox_ws *ws, const char *id, bool wait, struct txbox_error *err)
{
        char tmp[64];
        int fd = openat(ws->active_fd, id, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

        if (fd < 0 && errno == ENOENT) {
                /* A claim released earlier by this process, renamed: no inode made (and, at
                 * release, none freed) per transaction of a server. */
                int s = claim_spare(ws, id);
                if (s >= 0)
                        return s;
                if (s == -EEXIST)
                        return tx_claim(ws, id, wait, err);
                /* Appear already locked: recovery in another process must never see an unlocked
                 * claim of a live transaction, so lock a hidden file, then rename it in place. */
                snprintf(tmp, sizeof(tmp), ".claim-%s-%d", id, (int)getpid());
                fd = openat(ws->active_fd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (fd >= 0 && (flock(fd, LOCK_EX | LOCK_NB) < 0 ||
                                renameat2(ws->active_fd, tmp, ws->active_fd, id, RENAME_NOREPLACE) < 0)) {
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
                return tx_err(err, e == EWOULDBLOCK ? EBUSY : e,
                              "transaction %s is in use by another txbox process", id);
        }
        /* The claim file may have been released (unlinked) while we waited for its lock. */
        struct stat a, b;
        if (fstat(fd, &a) < 0 || fstatat(ws->active_fd, id, &b, AT_SYMLINK_NOFOLLOW) < 0 ||
            a.st_ino != b.st_ino) {
                close(fd);
                return tx_claim(ws, id, wait, err);
        }
        return fd;
}

/* Release a claim: its name goes first, then the lock, so that a process waiting for the
 * lock finds the name gone (tx_claim) and makes a claim of its own.  The file is kept for
 * this process's next claim, renamed to its hidden spare name (one at a time). */
void tx_unclaim(struct txbox_ws *ws, const char *id, int fd)
{
        char name[64];

        if (fd < 0)
                return;
        spare_name(name, sizeof(name));
        if (ws->spare_claim_fd < 0 && renameat2(ws->active_fd, id, ws->active_fd, name, RENAME_NOREPLACE) == 0) {
                flock(fd, LOCK_UN);
                ws->spare_claim_fd = fd;
                return;
        }
        unlinkat(ws->active_fd, id, 0);
        close(fd);
}

void ws_drop_spare_claim(struct txbox_ws *ws)
{
        char name[64];

        if (ws->spare_claim_fd < 0)
                return;
        spare_name(name, sizeof(name));
        unlinkat(ws->active_fd, name, 0);
        closep(&ws->spare_claim_fd);
}

void tx_release(struct txbox_tx *tx)
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
        tx_home_clear(&tx->home);
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
                return tx_err(err, errno, "cannot create '%s/tx/%s': %s", ws->state, tx->rec.id,
                              strerror(errno));
        tx->dir_fd = openat(ws->tx_fd, tx->rec.id, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        /* The sandbox sees the upper root's mode as the workspace root's. */
        struct stat st;
        mode_t mode = fstat(ws->ws_fd, &st) == 0 ? (st.st_mode & 0777) | 0700 : 0755;
        if (tx->dir_fd < 0 || mkdirat(tx->dir_fd, "upper", mode) < 0 ||
            fchmodat(tx->dir_fd, "upper", mode, 0) < 0 || mkdirat(tx->dir_fd, "work", 0700) < 0)
                return tx_err(err, errno, "cannot create the layers of tx %s in '%s': %s", tx->rec.id,
                              ws->state, errno == ENOSPC ? "no space left on device" : strerror(errno));
        return 0;
}

static void warn_unmapped(struct txbox_tx *tx, const struct idmap *m);

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
 * the last commit it could see, and the filesystem's clock (fs_now_ns in ws.c).
 * The order matters.  Every commit stamps state/changed after its renames and before its row
 * (tx_stamp_changes), so reading the newest commit first and the stamp second, a commit
 * counted as seen has all its changes strictly before begin_ns, and one not seen is a
 * later commit (audit_later_overlaps): a transaction never conflicts with a commit it saw,
 * however quickly it follows it, while any change after begin_ns, even in the same tick,
 * has a ctime >= begin_ns (docs/DESIGN.md, "Conflicts"). */
static int write_snapshot(struct txbox_tx *tx, bool *defer, struct txbox_error *err)
{
        int r;

        /* A process that has not touched the log yet (a one-shot run) leaves its row to the
         * thread beside the program: connecting costs a millisecond or two. */
        *defer = !audit_connected(tx->ws->audit) && (tx->begin_seq = ws_newest_commit_seq(tx->ws)) >= 0;
        if (!*defer) {
                if ((r = audit_next_commit_seq(tx->ws->audit, &tx->begin_seq, err)) < 0)
                        return r;
                tx->begin_seq--; /* the newest commit seen */
        }
        tx->begin_ns = tx_begin_stamp(tx->ws->state_fd, tx->dir_fd);
        /* Line 2, the record: should this process die before the row is written, recovery
         * logs the run from it; kept after a commit, it gives a log that lost the row the
         * command line back (logrepair.c). */
        _cleanup_free_ char *rec = jv_dump(record_to_json(&tx->rec));
        _cleanup_free_ char *buf =
                xasprintf("%lld %lld\n%s\n", (long long)tx->begin_seq, (long long)tx->begin_ns, rec);
        if ((r = write_file_atomic_at(tx->dir_fd, "begin", buf, strlen(buf), false)) < 0)
                return tx_err(err, -r, "cannot write '%s/tx/%s/begin': %s", tx->ws->state, tx->rec.id,
                              strerror(-r));
        return 0;
}

static int read_snapshot(struct txbox_tx *tx, struct txbox_error *err)
{
        _cleanup_free_ char *buf = NULL;
        long long seq, ns;
        int r = read_file_at(tx->dir_fd, "begin", BEGIN_MAX, &buf, NULL);

        if (r < 0 || sscanf(buf, "%lld %lld", &seq, &ns) != 2)
                return tx_err(err, r < 0 ? -r : EBADMSG, "cannot read '%s/tx/%s/begin'", tx->ws->state,
                              tx->rec.id);
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
                        tx_err(err, EXDEV,
                               "workspace '%s' has a mount point inside it at '%s': the overlay cannot "
                               "include another mount, so its files would be outside the transaction; "
                               "unmount it or use a workspace without mounts inside",
                               ws->path, mp);
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
        tx_release(tx);
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
        tx->state = TX_PENDING;
        tx->t0_us = mono_us() - tx->rec.duration_ms * 1000;
        *out = tx;
        return 0;
fail:
        tx_release(tx);
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
                _cleanup_close_ int sub =
                        openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
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
                        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s'%s'", i ? ", " : "",
                                 sc.bad.v[i]);
                char *w = xasprintf("workspace entries owned by ids the sandbox cannot map (only uid %u and "
                                    "gid %u are mapped without privileges): %s%s; writing them will fail "
                                    "with EOVERFLOW: chown them to yourself or run txbox as root",
                                    (unsigned)getuid(), (unsigned)getgid(), list,
                                    sc.bad.n >= 5 ? ", ..." : "");
                tx_add_warning(tx, w);
        }
        strvec_clear(&sc.bad);
}

const char *txbox_tx_warning(const struct txbox_tx *tx) { return tx->warning; }

void tx_add_warning(struct txbox_tx *tx, char *msg)
{
        if (tx->warning) {
                char *both = xasprintf("%s; %s", tx->warning, msg);
                free(msg);
                msg = both;
        }
        free(tx->warning);
        tx->warning = msg;
}

void tx_discard(struct txbox_tx *tx)
{
        if (!tx)
                return;
        sandbox_abort(TAKE_PTR(tx->sb));
        rm_rf_at(tx->ws->tx_fd, tx->rec.id);
        tx_release(tx);
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

/* A workspace its user cannot write could take no commit (each is a rename into it): refused
 * before anything runs, rather than after the program did its work.  Its root is what the
 * check can see (the overlay shows the upper layer's mode there, so the program would not
 * notice); a read-only subdirectory is the program's to find, as without txbox. */
static int check_writable(struct txbox_ws *ws, struct txbox_error *err)
{
        if (faccessat(ws->ws_fd, ".", W_OK, AT_EACCESS) == 0)
                return 0;
        int e = errno;
        if (e != EACCES && e != EROFS && e != EPERM)
                return 0; /* not known to be read-only: the commit will say */
        return tx_err(err, e,
                      "workspace '%s' is read-only (%s): a command's changes are committed by renaming them "
                      "into it, so none could be; nothing ran. Make it writable (chmod u+w '%s') or run the "
                      "command without txbox",
                      ws->path, e == EROFS ? "a read-only file system" : "no write permission", ws->path);
}

/* Before the program may run: the begin snapshot (first committer wins) and the audit row
 * that recovery needs. */
int tx_seal(struct txbox_tx *tx, struct txbox_error *err)
{
        bool defer;
        int r;

        if (tx->in_log || tx->log_copy)
                return 0;
        if ((r = check_writable(tx->ws, err)) < 0 || (r = check_submounts(tx->ws, err)) < 0 ||
            (r = write_snapshot(tx, &defer, err)) < 0)
                return r;
        if (defer) {
                tx->log_copy = xcalloc(1, sizeof(*tx->log_copy));
                record_copy(tx->log_copy, &tx->rec);
        } else if ((r = audit_insert(tx->ws->audit, &tx->rec, err)) < 0)
                return r;
        else
                tx->in_log = true;
        tx_move(tx, TX_SEALED);
        trace_mark("sealed");
        return 0;
}

/* Make sure a deferred row is in the log: the sweeper's insert, or ours now. */
int tx_log_flush(struct txbox_tx *tx, struct txbox_error *err)
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
        tx_home_clear(&tx->home);
        tx_home_config(ws->path, ws->policy, &tx->home);
        tx->spec = (struct sandbox_spec){
                .workspace = ws->path,
                .upper = tx->upper,
                .lowers = tx->lowers.v,
                .work = tx->work,
                .state_dir = ws->state_mask,
                .home = ws_home_dir(),
                .hide = tx->home.hide.v,
                .cache_root = tx->home.cache_root,
                .cache_paths = tx->home.cache_list ? tx->home.caches.v : NULL,
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
        /* The judge of the exec checks, forked now if it is not running yet (it is after a
         * pre-run check): before the sweeper and the sandbox's threads start (judging.c). */
        if (tx->ws->policy && (r = ws_judge_ready(tx->ws, err)) < 0)
                return r;
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
        if (r == 0)
                tx_move(tx, TX_RAN);
        /* The thread's audit writes never interleave with ours (last_insert_rowid, open
         * transactions): it is done with the log once the program has run.  Joined before
         * the next sandbox is cloned, or when the workspace closes. */
        ws_sweep_db_wait(tx->ws);
        struct txbox_error e2;
        int lr = tx_log_flush(tx, r < 0 ? &e2 : err);
        if (lr < 0 && r == 0)
                r = tx_err_wrap(
                        err,
                        "the program ran, but its audit row could not be written; its changes are discarded");
        trace_mark("sandbox done");
        txbox_tx_set_result(tx, res);
        free(tx->rec.env_dropped);
        tx->rec.env_dropped = res->env_dropped[0] ? xstrdup(res->env_dropped) : NULL;
        free(tx->rec.net_log);
        tx->rec.net_log = res->net_log[0] ? xstrdup(res->net_log) : NULL;
        if (res->killed[0])
                tx_add_warning(tx, xasprintf("stopped with the command, still running in the background: %s "
                                             "(see BACKGROUND PROCESSES in txbox(1))",
                                             res->killed));
        if (res->limit_hit[0] && !tx->rec.message)
                tx->rec.message = xasprintf("the program was stopped at its %s limit: %s", res->limit_hit,
                                            res->limit_detail);
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
        tx->sp_exit = res->exit_code; /* a session's command: its savepoint entry */
        tx->sp_signal = res->signal;
}
/* ---- evaluate ---- */

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
                return tx_err(
                        err, EINVAL,
                        "tx %s was prepared for a commit that did not complete: its layer no "
                        "longer says what the program did and cannot be judged again; txbox rollback %s",
                        tx->rec.id, tx->rec.id);
        _cleanup_close_ int upper =
                openat(tx->dir_fd, layer, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (upper < 0)
                return tx_err(err, errno, "cannot open the upper layer of tx %s: %s", tx->rec.id,
                              strerror(errno));
        changeset_free(&tx->cs);
        if ((r = changeset_build(upper, tx->ws->ws_fd, &tx->cs, err)) < 0)
                return tx_err_wrap(err, "evaluate tx %s", tx->rec.id);
        trace_mark("changeset built");
        if ((r = tx_judge_effects(tx, upper, err)) < 0)
                return tx_err_wrap(err, "evaluate tx %s", tx->rec.id);
        tx_record_take_changes(tx);
        tx_move(tx, TX_EVALUATED);
        return (int)tx->cs.nviolations;
}

/* Copy the changeset's paths and violations into the record. */
void tx_record_take_changes(struct txbox_tx *tx)
{
        record_set_changes(&tx->rec, tx->cs.paths, tx->cs.npaths, tx->cs.violations, tx->cs.nviolations);
}
