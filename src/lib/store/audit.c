/* The audit store: one SQLite database in WAL mode; the schema is in audit.h.  This file
 * holds the connection: opening (refusing a log that is no regular file, creating it
 * private), the schema and its change stream, WAL checkpoints, waiting on other processes'
 * locks, turning SQLite's errors into messages, and the statements and transactions every
 * call runs in.  Writes (insert, update, repair) are in auditwrite.c, reads in auditread.c;
 * what the three share is in audit_int.h.
 *
 * Every write runs inside BEGIN IMMEDIATE so that it takes the write lock up front (a
 * deferred transaction that upgrades later gets SQLITE_BUSY without waiting); every read
 * of more than one statement runs inside BEGIN so that a record and its path rows come
 * from one snapshot while other txbox processes write. */
#include "store/audit_int.h"

#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/failpoint.h"
#include "base/macros.h"
#include "base/mem.h"
#include "txbox.h"

#define SCHEMA_VERSION 1
#define BUSY_TIMEOUT_MS 10000

/* How long to wait for another process's lock on the database: TXBOX_DB_BUSY_MS (tests set
 * it low), else 10 s. */
static int busy_timeout_ms(void)
{
        const char *e = getenv("TXBOX_DB_BUSY_MS");
        long v = e ? strtol(e, NULL, 10) : 0;
        return v > 0 && v <= 600000 ? (int)v : BUSY_TIMEOUT_MS;
}

static const char schema_sql[] =
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
        "CREATE TABLE tx(seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL,"
        " argv TEXT NOT NULL, cwd TEXT, decision TEXT, rule TEXT, reason TEXT, exit_code INTEGER,"
        " signal INTEGER, outcome TEXT NOT NULL, commit_seq INTEGER, started_ms INTEGER,"
        " ended_ms INTEGER, duration_ms INTEGER, n_added INTEGER, n_modified INTEGER,"
        " n_deleted INTEGER, violations TEXT, message TEXT);"
        "CREATE INDEX tx_commit_seq ON tx(commit_seq);"
        "CREATE TABLE path(tx_seq INTEGER NOT NULL REFERENCES tx(seq), path TEXT NOT NULL,"
        " change TEXT NOT NULL, PRIMARY KEY(tx_seq, path));"
        "CREATE INDEX path_path ON path(path);"
        SAVEPOINT_TABLE_SQL ";"
        "INSERT INTO meta(key, value) VALUES('schema_version', '1');";

/* Path rows of committed transactions after commit ?1 (the outcome name is txbox_outcome_name's),
 * in two plans.  By path (OVERLAP_SQL): every row of the path's history, each joined to its tx;
 * by commit (RECENT_SQL, CROSS JOIN fixes the order): the commits after ?1, then one primary
 * key lookup each.  A file every command rewrites has thousands of rows in its history and
 * usually none or a few commits after ?1: the planner, without statistics, picks the index
 * on path, and a commit then cost half a millisecond per thousand commands of history.
 * find_overlaps (auditread.c) picks by the number of later commits. */
#define OVERLAP_SQL                                                             \
        "SELECT p.path, t.id FROM path p JOIN tx t ON t.seq = p.tx_seq"          \
        " WHERE t.outcome = 'committed' AND t.commit_seq > ?1"
#define RECENT_SQL                                                                   \
        "SELECT p.path, t.id FROM tx t CROSS JOIN path p ON p.tx_seq = t.seq"          \
        " WHERE t.outcome = 'committed' AND t.commit_seq > ?1"
/* ?2 itself or beneath it: the index range [?2, ?2 || '0') holds exactly the strings that
 * start with ?2 and continue with a byte below '0'; of those, the ones from ?2 || '/' on are
 * beneath it ('/' is the byte just below '0'). */
#define SUBTREE_SQL " AND p.path >= ?2 AND p.path < ?2 || '0' AND (p.path = ?2 OR p.path > ?2 || '/')"
#define STR_(x) #x
#define STR(x) STR_(x)

static const char *const st_sql[ST__MAX] = {
        [ST_BEGIN_READ] = "BEGIN",
        [ST_BEGIN_WRITE] = "BEGIN IMMEDIATE",
        [ST_COMMIT] = "COMMIT",
        [ST_ROLLBACK] = "ROLLBACK",
        /* ?1..?18 are bound by bind_record() (auditwrite.c) for both. */
        [ST_INSERT_TX] = "INSERT INTO tx(id, argv, cwd, decision, rule, reason, exit_code, signal,"
                         " outcome, commit_seq, started_ms, ended_ms, duration_ms, n_added,"
                         " n_modified, n_deleted, violations, message) VALUES(?1, ?2, ?3, ?4, ?5,"
                         " ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        [ST_UPDATE_TX] = "UPDATE tx SET argv = ?2, cwd = ?3, decision = ?4, rule = ?5, reason = ?6,"
                         " exit_code = ?7, signal = ?8, outcome = ?9, commit_seq = ?10,"
                         " started_ms = ?11, ended_ms = ?12, duration_ms = ?13, n_added = ?14,"
                         " n_modified = ?15, n_deleted = ?16, violations = ?17, message = ?18"
                         " WHERE id = ?1",
        [ST_SEQ_OF_ID] = "SELECT seq FROM tx WHERE id = ?1",
        [ST_DELETE_PATHS] = "DELETE FROM path WHERE tx_seq = ?1",
        [ST_INSERT_PATH] = "INSERT INTO path(tx_seq, path, change) VALUES(?1, ?2, ?3)",
        [ST_GET_EXACT] = "SELECT " TX_COLS " FROM tx WHERE id = ?1",
        [ST_IDS_IN_RANGE] = "SELECT id FROM tx WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT ?3",
        [ST_PATHS_OF] = "SELECT path, change FROM path WHERE tx_seq = ?1 ORDER BY path",
        [ST_LIST] = "SELECT " TX_COLS " FROM tx ORDER BY seq DESC LIMIT ?1",
        [ST_NEWEST_COMMITTED] = "SELECT " TX_COLS " FROM tx WHERE outcome = 'committed'"
                                " AND n_added + n_modified + n_deleted > 0"
                                " AND commit_seq IS NOT NULL ORDER BY commit_seq DESC LIMIT 1",
        [ST_NEXT_COMMIT_SEQ] = "SELECT coalesce(max(commit_seq), 0) + 1 FROM tx",
        [ST_LAST_CHANGE] = "SELECT p.change, t.ended_ms, t.n_deleted, t.exit_code FROM path p JOIN tx t ON t.seq = p.tx_seq"
                           " WHERE p.path = ?1 AND t.outcome = 'committed' AND t.commit_seq IS NOT NULL"
                           " ORDER BY t.commit_seq DESC LIMIT 1",
        [ST_LATER_COMMITS] = "SELECT count(*) FROM (SELECT 1 FROM tx WHERE commit_seq > ?1"
                             " LIMIT " STR(RECENT_MAX) " + 1)",
        [ST_OVERLAP_SUBTREE] = OVERLAP_SQL SUBTREE_SQL,
        [ST_OVERLAP_EQ] = OVERLAP_SQL " AND p.path = ?2",
        [ST_OVERLAP_ALL] = OVERLAP_SQL,
        [ST_RECENT_SUBTREE] = RECENT_SQL SUBTREE_SQL,
        [ST_RECENT_EQ] = RECENT_SQL " AND p.path = ?2",
        [ST_RECENT_ALL] = RECENT_SQL,
        [ST_SAVEPOINTS_OF] = "SELECT sp, argv, exit_code, signal, outcome, started_ms, duration_ms"
                             " FROM savepoint WHERE tx_seq = ?1 ORDER BY step",
        [ST_DELETE_SAVEPOINTS] = "DELETE FROM savepoint WHERE tx_seq = ?1",
        [ST_INSERT_SAVEPOINT] = "INSERT INTO savepoint(tx_seq, step, sp, argv, exit_code, signal, outcome,"
                                " started_ms, duration_ms) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
};

/* Checkpoints.  Every txbox process is a new first connection, which re-reads the whole WAL
 * to rebuild its index: the WAL must stay short.  And the WAL is the one file whose loss
 * (deleted by hand, left behind by a copy of audit.db) takes rows with it: it should hold
 * little more than the last transaction's.  But a checkpoint syncs twice (WAL, then
 * database), which is more than a transaction's own commit costs: audit_checkpoint does it
 * from the workspace's background thread while a program runs (txn/sweep.c), once the WAL
 * holds WAL_CHECKPOINT_FRAMES, or holds anything and the last checkpoint is WAL_CHECKPOINT_AGE_MS
 * old (the database file's mtime: in WAL mode only checkpoints write it).  So the WAL holds
 * the rows of the runs of the last second and those of the newest run; a checkpoint at
 * every run cost 8 to 10 % of a one-shot run (two syncs), one a second costs nothing
 * measurable in a loop of runs and keeps the loss small where commands come seconds apart.
 * Only a WAL left to grow to WAL_CHECKPOINT_FORCE (no run to hide behind: commit ID, ...)
 * is checkpointed by the write that passed it.  Commits whose rows went with a lost WAL are
 * put back from the state dir (logrepair.c). */
#define WAL_CHECKPOINT_FRAMES 64
#define WAL_CHECKPOINT_AGE_MS 1000
#define WAL_CHECKPOINT_FORCE (4 * WAL_CHECKPOINT_FRAMES)

static int wal_hook(void *ctx, sqlite3 *db, const char *name, int frames)
{
        struct audit *a = ctx;

        atomic_store(&a->wal_frames, frames);
        if (frames >= WAL_CHECKPOINT_FORCE)
                sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        return SQLITE_OK;
}

void audit_checkpoint(struct audit *a)
{
        int log = 0, done = 0;

        int frames = a && a->db ? atomic_load(&a->wal_frames) : 0;
        struct stat st;

        if (frames <= 0)
                return;
        if (frames < WAL_CHECKPOINT_FRAMES &&
            (stat(a->path, &st) < 0 ||
             (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000 >
                     now_ms() - WAL_CHECKPOINT_AGE_MS))
                return;
        if (sqlite3_wal_checkpoint_v2(a->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done) != SQLITE_OK ||
            done < log)
                return;
        /* Fully checkpointed: the next write starts the WAL over, and syncs its new header.
         * Make that write here, not in the next commit (a changed value: SQLite writes no
         * page for an update that changes nothing). */
        sqlite3_exec(a->db, "INSERT OR REPLACE INTO meta(key, value) VALUES('wal_restarted', random())",
                     NULL, NULL, NULL);
}

/* ---- errors ---- */

/* A corrupt or foreign file: nothing in it can be trusted, and a new log is the way on. */
int __attribute__((format(printf, 3, 4)))
audit_unreadable(struct audit *a, struct txbox_error *err, const char *fmt, ...)
{
        char why[256];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        return tx_err(err, EBADMSG,
                      "audit database '%s' is unreadable (%s): move it aside (mv '%s' '%s.bad', and "
                      "its '-wal' file likewise if present) and run the command again; a new log "
                      "starts empty",
                      a->path, why, a->path, a->path);
}

static const struct {
        int rc; /* primary SQLite result code */
        int errnum;
        const char *hint;
} rc_errors[] = {
        { SQLITE_FULL, ENOSPC, "free space on its filesystem and run the command again" },
        { SQLITE_READONLY, EROFS, "make the file and its directory writable by this user" },
        { SQLITE_PERM, EACCES, "make the file and its directory writable by this user" },
        { SQLITE_AUTH, EACCES, "make the file and its directory writable by this user" },
        { SQLITE_CANTOPEN, EACCES, "check that its directory exists and is writable by this user" },
        { SQLITE_IOERR, EIO, "check the filesystem that holds it (the kernel log may say more)" },
        { SQLITE_NOMEM, ENOMEM, "free some memory and run the command again" },
        { SQLITE_TOOBIG, E2BIG, "the record is larger than SQLite accepts" },
        { SQLITE_NOLFS, EFBIG, "the filesystem refuses a file this large" },
};

/* Turn a failed SQLite call into -errno and a message naming the database file. */
int __attribute__((format(printf, 4, 5)))
audit_db_fail(struct audit *a, int rc, struct txbox_error *err, const char *fmt, ...)
{
        int prim = rc & 0xff, errnum = EIO;
        const char *hint = "this looks like a bug in txbox: please report this message";
        char what[256];
        va_list ap;

        if (prim == SQLITE_CORRUPT || prim == SQLITE_NOTADB)
                return audit_unreadable(a, err, "%s", sqlite3_errstr(rc));
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        if (prim == SQLITE_BUSY || prim == SQLITE_LOCKED)
                return tx_err(err, EBUSY,
                              "audit database '%s' stayed locked by another process for %d s while "
                              "trying to %s: let the other txbox command finish and run this one again",
                              a->path, (busy_timeout_ms() + 999) / 1000, what);
        for (size_t i = 0; i < ARRAY_SIZE(rc_errors); i++)
                if (rc_errors[i].rc == prim) {
                        errnum = rc_errors[i].errnum;
                        hint = rc_errors[i].hint;
                }
        /* For file errors the system's errno is more precise (ENOENT for a missing directory). */
        int sys = a->db ? sqlite3_system_errno(a->db) : 0;
        if ((prim == SQLITE_IOERR || prim == SQLITE_CANTOPEN) && sys > 0)
                errnum = sys;
        /* SQLite reports a full disk met while writing its WAL index as a plain I/O error. */
        if (errnum == ENOSPC || errnum == EDQUOT) {
                prim = SQLITE_FULL;
                hint = rc_errors[0].hint;
        }
        return tx_err(err, errnum, "audit database '%s': cannot %s: %s: %s", a->path, what,
                      prim == SQLITE_FULL ? strerror(errnum)
                      : a->db             ? sqlite3_errmsg(a->db)
                                          : sqlite3_errstr(rc),
                      hint);
}

int audit_no_such_tx(struct txbox_error *err, const char *id)
{
        return tx_err(err, ENOENT, "no transaction '%s' in this workspace's log%s: 'txbox log' "
                      "lists them", id, strlen(id) < ID_PREFIX_MIN
                      ? " (an id prefix needs at least 4 characters)" : "");
}

/* ---- statements and transactions ---- */

int audit_stmt(struct audit *a, enum st which, sqlite3_stmt **out)
{
        if (!a->st[which]) {
                int rc = sqlite3_prepare_v3(a->db, st_sql[which], -1, SQLITE_PREPARE_PERSISTENT,
                                            &a->st[which], NULL);
                if (rc != SQLITE_OK)
                        return rc;
        }
        *out = a->st[which];
        return SQLITE_OK;
}

static int exec_st(struct audit *a, enum st which)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = audit_stmt(a, which, &st);
        return rc == SQLITE_OK ? step_done(st) : rc;
}

int audit_tx_begin(struct audit *a, bool write, struct txbox_error *err)
{
        /* tests: the N-th write of this process fails as on a full disk (its row is left as
         * the last write that went through made it) */
        int fp = write ? failpoint("audit") : 0;
        if (fp < 0)
                return tx_err(err, -fp, "audit database '%s': cannot start writing to it: %s: free space on "
                              "its filesystem and run the command again", a->path, strerror(-fp));
        int rc = exec_st(a, write ? ST_BEGIN_WRITE : ST_BEGIN_READ);
        if (rc == SQLITE_OK)
                return 0;
        return audit_db_fail(a, rc, err, write ? "start writing to it" : "start reading it");
}

/* Commit when r >= 0, else roll back; returns r or the commit's error. */
int audit_tx_end(struct audit *a, int r, struct txbox_error *err)
{
        if (r >= 0) {
                int rc = exec_st(a, ST_COMMIT);
                if (rc == SQLITE_OK)
                        return r;
                r = audit_db_fail(a, rc, err, "commit to it");
        }
        /* Some errors (SQLITE_FULL, ...) already rolled the transaction back. */
        if (!sqlite3_get_autocommit(a->db))
                (void)exec_st(a, ST_ROLLBACK);
        return r;
}

/* ---- open and close ---- */

/* One value of a one-off query as text (NULL when no row or NULL); an SQLite result code. */
int audit_query_text(struct audit *a, const char *sql, char **out)
{
        _cleanup_finalize_ sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(a->db, sql, -1, &st, NULL);

        *out = NULL;
        if (rc != SQLITE_OK)
                return rc;
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
                *out = xstrdup_or_null(col_text(st, 0));
        return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
}

bool audit_has_savepoints(struct audit *a)
{
        _cleanup_free_ char *n = NULL;

        if (a->has_savepoints <= 0 &&
            audit_query_text(a, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'savepoint'",
                             &n) == SQLITE_OK)
                a->has_savepoints = n && !strcmp(n, "1");
        return a->has_savepoints > 0;
}

int audit_ensure_savepoints(struct audit *a, struct txbox_error *err)
{
        if (audit_has_savepoints(a))
                return 0;
        int rc = sqlite3_exec(a->db, SAVEPOINT_TABLE_SQL, NULL, NULL, NULL);
        if (rc != SQLITE_OK)
                return audit_db_fail(a, rc, err, "add its savepoint table");
        a->has_savepoints = 1;
        return 0;
}

static int parse_positive(const char *s)
{
        char *end;
        long v;

        if (!s)
                return -1;
        errno = 0;
        v = strtol(s, &end, 10);
        return errno || end == s || *end || v <= 0 || v > 1000000 ? -1 : (int)v;
}

/* *version: 0 for an empty database, -1 for a database that is not ours, else the schema
 * version it carries. */
static int schema_version(struct audit *a, int *version, struct txbox_error *err)
{
        _cleanup_free_ char *objects = NULL, *has_meta = NULL, *value = NULL;
        int rc = audit_query_text(a, "SELECT count(*) FROM sqlite_master", &objects);

        if (rc == SQLITE_OK)
                rc = audit_query_text(a, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                                   " AND name = 'meta'", &has_meta);
        if (rc == SQLITE_OK && parse_positive(has_meta) == 1)
                rc = audit_query_text(a, "SELECT value FROM meta WHERE key = 'schema_version'", &value);
        if (rc != SQLITE_OK)
                return audit_db_fail(a, rc, err, "read its schema");
        if (parse_positive(objects) < 0)
                *version = 0;
        else
                *version = parse_positive(value); /* -1 when absent or not a number */
        return 0;
}

static int schema_ensure(struct audit *a, struct txbox_error *err)
{
        int version = 0, r = schema_version(a, &version, err);

        if (r >= 0 && version == 0) {
                /* Check again under the write lock: another txbox may have created it meanwhile. */
                r = audit_tx_begin(a, true, err);
                if (r < 0)
                        return r;
                r = schema_version(a, &version, err);
                if (r >= 0 && version == 0) {
                        int rc = sqlite3_exec(a->db, schema_sql, NULL, NULL, NULL);
                        r = rc == SQLITE_OK ? 0 : audit_db_fail(a, rc, err, "create its tables");
                        version = SCHEMA_VERSION;
                }
                r = audit_tx_end(a, r, err);
        }
        if (r < 0)
                return r;
        if (version < 0)
                return audit_unreadable(a, err, "an SQLite database, but not a txbox audit log");
        if (version > SCHEMA_VERSION)
                return tx_err(err, EPROTO,
                              "audit database '%s' has schema version %d, newer than this txbox "
                              "(%s) understands (%d): use the newer txbox that wrote it, or move the "
                              "file aside (mv '%s' '%s.new') to start a new log",
                              a->path, version, TXBOX_VERSION, SCHEMA_VERSION, a->path, a->path);
        return 0;
}

/* What a file of the log (the database, its -wal or -shm) is when it is not a regular
 * file; NULL when it is one. */
static const char *odd_kind(mode_t m)
{
        return S_ISREG(m) ? NULL : S_ISLNK(m) ? "a symlink" : S_ISFIFO(m) ? "a FIFO"
             : S_ISDIR(m) ? "a directory" : S_ISSOCK(m) ? "a socket"
             : S_ISCHR(m) || S_ISBLK(m) ? "a device" : "not a regular file";
}

static int odd_file(struct txbox_error *err, const char *path, const char *kind)
{
        return tx_err(err, EBADF,
                      "audit file '%s' is %s, not a regular file: txbox refuses it (SQLite would block on "
                      "a FIFO, or write through a symlink); remove or move it aside (mv '%s' '%s.bad') and "
                      "run the command again: txbox rebuilds the committed transactions it can from the "
                      "state dir (txbox recover --help)",
                      path, kind, path, path);
}

/* The -wal and -shm files beside path, when present, must be regular files too (SQLite opens
 * them with O_CREAT but follows symlinks, and a read of a FIFO blocks). */
static int check_side_files(const char *path, struct txbox_error *err)
{
        static const char *const sides[] = { "-wal", "-shm" };
        struct stat st;

        for (size_t i = 0; i < ARRAY_SIZE(sides); i++) {
                _cleanup_free_ char *side = xasprintf("%s%s", path, sides[i]);
                const char *kind;
                if (lstat(side, &st) == 0 && (kind = odd_kind(st.st_mode)))
                        return odd_file(err, side, kind);
        }
        return 0;
}

int audit_check_files(const char *path, struct txbox_error *err)
{
        struct stat st;
        const char *kind;

        if (lstat(path, &st) == 0 && (kind = odd_kind(st.st_mode)))
                return odd_file(err, path, kind);
        return check_side_files(path, err);
}

/* A -wal or -shm file left without its database (audit.db deleted) belongs to a log that is
 * gone: SQLite would replay its pages into the new empty file, a malformed database.  Moved
 * aside (never deleted) before the new file is made. */
static void set_aside_orphans(const char *path)
{
        static const char *const sides[] = { "-wal", "-shm" };

        for (size_t i = 0; i < ARRAY_SIZE(sides); i++) {
                _cleanup_free_ char *side = xasprintf("%s%s", path, sides[i]);
                _cleanup_free_ char *as = xasprintf("%s.orphan-%lld", side, (long long)now_ms());
                (void)rename(side, as);
        }
}

static int db_open(struct audit *a, struct txbox_error *err)
{
        struct stat st;
        const char *kind;
        int r;

        /* Refuse a log that is no regular file before anything opens it: a FIFO would block
         * every verb in open(2) or in SQLite's first read.  A missing one is made under a
         * lock on its directory, so that a process making it never sets aside the -wal of
         * another that made it first. */
        _cleanup_close_ int dir_lock = -1;
        if (lstat(a->path, &st) < 0 && errno == ENOENT) {
                _cleanup_free_ char *dir = xstrdup(a->path);
                char *slash = strrchr(dir, '/');
                if (slash)
                        *slash = '\0';
                dir_lock = open(slash && slash != dir ? dir : slash ? "/" : ".",
                                O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                while (dir_lock >= 0 && flock(dir_lock, LOCK_EX) < 0 && errno == EINTR)
                        ;
                if (lstat(a->path, &st) < 0 && errno == ENOENT)
                        set_aside_orphans(a->path);
        }
        if ((r = audit_check_files(a->path, err)) < 0)
                return r;
        /* The log holds every command line, which may carry secrets: create it private.  The
         * -wal and -shm files take the database file's mode.  O_NOFOLLOW: never create or
         * open the log through a symlink; O_NONBLOCK: never wait in open(2) for a FIFO's
         * writer (one put there since the look above is refused all the same). */
        int fd = open(a->path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
        if (fd < 0 && errno == ELOOP)
                return odd_file(err, a->path, "a symlink");
        if (fd < 0)
                return tx_err(err, errno, "audit database '%s': cannot open or create it: %s: check "
                              "that its directory exists and is writable by this user",
                              a->path, strerror(errno));
        if (fstat(fd, &st) == 0 && (kind = odd_kind(st.st_mode))) {
                close(fd);
                return odd_file(err, a->path, kind);
        }
        /* Close it before SQLite opens the file: closing any descriptor of a file drops all of
         * this process's POSIX locks on it, SQLite's included, and another process could then
         * checkpoint and reset the WAL under our feet (lost rows, "malformed" errors). */
        close(fd);

        /* FULLMUTEX: audit_checkpoint runs in another thread. */
        int rc = sqlite3_open_v2(a->path, &a->db,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
        if (rc != SQLITE_OK)
                return audit_db_fail(a, rc, err, "open it");
        sqlite3_extended_result_codes(a->db, 1);
        sqlite3_busy_timeout(a->db, busy_timeout_ms());
        /* A database file is input like any other: no schema-defined functions or triggers
         * run with our privileges, and no SQL can corrupt the file on purpose. */
        sqlite3_db_config(a->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
        sqlite3_db_config(a->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
        /* Every txbox command opens and closes the log: a checkpoint (and its fsyncs) at each
         * close would cost more than the transaction's own work (see wal_hook). */
        sqlite3_db_config(a->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
        /* schema_version is the first statement that reads the file (a foreign or damaged
         * file shows up here as SQLITE_NOTADB): a plain read, which waits for locks through
         * the busy handler and finds a log already in WAL mode, so that journal_mode then
         * has nothing to change.  Setting it first on a fresh connection failed twice in
         * about 80 runs of 8 agents x 50 transactions with SQLITE_BUSY well before the
         * timeout; whatever the path, a busy open is retried until the timeout. */
        int64_t deadline = mono_us() + (int64_t)busy_timeout_ms() * 1000;
        for (useconds_t pause = 1000;; pause = pause < 50000 ? pause * 2 : pause) {
                rc = sqlite3_exec(a->db, "PRAGMA schema_version; PRAGMA journal_mode = WAL;"
                                         " PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;",
                                  NULL, NULL, NULL);
                if ((rc & 0xff) != SQLITE_BUSY || mono_us() >= deadline)
                        break;
                usleep(pause);
        }
        if (rc != SQLITE_OK)
                return audit_db_fail(a, rc, err, "read it");
        sqlite3_wal_hook(a->db, wal_hook, a); /* instead of SQLite's autocheckpoint */
        return 0;
}

void audit_close(struct audit *a)
{
        if (!a)
                return;
        for (size_t i = 0; i < ST__MAX; i++)
                sqlite3_finalize(a->st[i]);
        sqlite3_close_v2(a->db);
        free(a->path);
        free(a);
}

static void audit_closep(struct audit **a) { audit_close(*a); }

static int changes_ensure(struct audit *a, struct txbox_error *err);

static int connect_db(struct audit *a, struct txbox_error *err)
{
        int r = db_open(a, err);
        if (r >= 0)
                r = schema_ensure(a, err);
        if (r >= 0)
                r = changes_ensure(a, err);
        if (r >= 0 && a->check)
                r = a->check(a->check_ctx, a, err);
        if (r < 0 && a->db) {
                sqlite3_close_v2(a->db);
                a->db = NULL;
        }
        return r;
}

int audit_open(const char *path, struct audit **out, struct txbox_error *err)
{
        _cleanup_(audit_closep) struct audit *a = xcalloc(1, sizeof(*a));
        int r;

        a->has_savepoints = -1;
        a->path = xstrdup(path);
        if ((r = connect_db(a, err)) < 0)
                return r;
        *out = TAKE_PTR(a);
        return 0;
}

bool audit_connected(const struct audit *a) { return a->db != NULL; }

int audit_open_deferred(const char *path, struct audit **out, struct txbox_error *err)
{
        int r = audit_check_files(path, err);
        if (r < 0)
                return r;
        struct audit *a = xcalloc(1, sizeof(*a));
        a->has_savepoints = -1;
        a->path = xstrdup(path);
        *out = a;
        return 0;
}

void audit_set_check(struct audit *a, audit_check_fn fn, void *ctx)
{
        a->check = fn;
        a->check_ctx = ctx;
}

int audit_connect(struct audit *a, struct txbox_error *err)
{
        int r = a->db ? 0 : connect_db(a, err);
        return r < 0 ? r : 0;
}

/* ---- the change stream (txbox log --json-lines --since SEQ) ----
 * A row's outcome changes after it is written (running, committed, undone), so the begin
 * order cannot say what a reader has not seen.  tx_change numbers every write of a tx row:
 * triggers give the row a new number (AUTOINCREMENT never hands one out twice) at each
 * insert and update, so a reader that asks for the numbers after the last it saw gets every
 * transaction whose record changed since, in its latest state.  Triggers rather than code
 * in the writes: every writer, an older txbox included, keeps the stream whole, and the
 * schema version stays 1 (an older txbox reads and writes the log as before). */
#define CHANGE_TRIGGER(when) \
        "CREATE TRIGGER IF NOT EXISTS tx_change_" when " AFTER " when " ON tx BEGIN" \
        " INSERT OR REPLACE INTO tx_change(tx_seq) VALUES(NEW.seq); END;"
static const char changes_sql[] =
        "CREATE TABLE IF NOT EXISTS tx_change(seq INTEGER PRIMARY KEY AUTOINCREMENT,"
        " tx_seq INTEGER UNIQUE NOT NULL);"
        CHANGE_TRIGGER("INSERT") CHANGE_TRIGGER("UPDATE")
        "INSERT OR IGNORE INTO tx_change(tx_seq) SELECT seq FROM tx ORDER BY seq;";

static int changes_present(struct audit *a, bool *yes, struct txbox_error *err)
{
        _cleanup_free_ char *n = NULL;
        int rc = audit_query_text(a, "SELECT count(*) FROM sqlite_master WHERE name IN ('tx_change',"
                               " 'tx_change_INSERT', 'tx_change_UPDATE')", &n);
        if (rc != SQLITE_OK)
                return audit_db_fail(a, rc, err, "read its schema");
        *yes = n && !strcmp(n, "3");
        return 0;
}

static int changes_ensure(struct audit *a, struct txbox_error *err)
{
        bool yes;
        int r = changes_present(a, &yes, err);

        if (r < 0 || yes)
                return r;
        if ((r = audit_tx_begin(a, true, err)) < 0)
                return r;
        if ((r = changes_present(a, &yes, err)) >= 0 && !yes) {
                int rc = sqlite3_exec(a->db, changes_sql, NULL, NULL, NULL);
                r = rc == SQLITE_OK ? 0 : audit_db_fail(a, rc, err, "add its change stream");
        }
        return audit_tx_end(a, r, err);
}
