/* The audit store: one SQLite database in WAL mode; the schema is in audit.h.
 *
 * Every write runs inside BEGIN IMMEDIATE so that it takes the write lock up front (a
 * deferred transaction that upgrades later gets SQLITE_BUSY without waiting); every read
 * of more than one statement runs inside BEGIN so that a record and its path rows come
 * from one snapshot while other txbox processes write. */
#include "store/audit.h"

#include <jansson.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <sys/file.h>

#include "store/record.h"

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
#define ID_PREFIX_MIN 4
#define AMBIGUOUS_SHOWN 5

typedef char id_buf[sizeof(((struct txbox_record *)0)->id)];

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
        "INSERT INTO meta(key, value) VALUES('schema_version', '1');";

/* Columns of a record row, in the order of enum col. */
#define TX_COLS                                                                           \
        "seq, id, argv, cwd, decision, rule, reason, exit_code, signal, outcome, commit_seq," \
        " started_ms, ended_ms, duration_ms, violations, message"
enum col {
        C_SEQ, C_ID, C_ARGV, C_CWD, C_DECISION, C_RULE, C_REASON, C_EXIT, C_SIGNAL, C_OUTCOME,
        C_COMMIT_SEQ, C_STARTED, C_ENDED, C_DURATION, C_VIOLATIONS, C_MESSAGE,
};

/* Path rows of committed transactions after commit ?1 (the outcome name is txbox_outcome_name's),
 * in two plans.  By path (OVERLAP_SQL): every row of the path's history, each joined to its tx;
 * by commit (RECENT_SQL, CROSS JOIN fixes the order): the commits after ?1, then one primary
 * key lookup each.  A file every command rewrites has thousands of rows in its history and
 * usually none or a few commits after ?1: the planner, without statistics, picks the index
 * on path, and a commit then cost half a millisecond per thousand commands of history.
 * find_overlaps picks by the number of later commits. */
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
/* The plan by commit when there are at most RECENT_MAX later commits and it probes at most
 * RECENT_PROBES primary keys in all (later commits x lookups): a 10,000-file change checked
 * against 200 later commits would otherwise probe two million times, where its paths, most
 * of them new, have almost no history to read. */
#define RECENT_MAX 256
#define RECENT_PROBES 65536
#define STR_(x) #x
#define STR(x) STR_(x)

/* The statements used on every command, prepared once per connection on first use. */
enum st {
        ST_BEGIN_READ, ST_BEGIN_WRITE, ST_COMMIT, ST_ROLLBACK,
        ST_INSERT_TX, ST_UPDATE_TX, ST_SEQ_OF_ID, ST_DELETE_PATHS, ST_INSERT_PATH,
        ST_GET_EXACT, ST_IDS_IN_RANGE, ST_PATHS_OF, ST_LIST, ST_NEWEST_COMMITTED,
        ST_NEXT_COMMIT_SEQ, ST_LATER_COMMITS,
        /* The three of each plan in this order (find_overlaps). */
        ST_OVERLAP_SUBTREE, ST_OVERLAP_EQ, ST_OVERLAP_ALL, ST_RECENT_SUBTREE, ST_RECENT_EQ, ST_RECENT_ALL,
        ST__MAX,
};

static const char *const st_sql[ST__MAX] = {
        [ST_BEGIN_READ] = "BEGIN",
        [ST_BEGIN_WRITE] = "BEGIN IMMEDIATE",
        [ST_COMMIT] = "COMMIT",
        [ST_ROLLBACK] = "ROLLBACK",
        /* ?1..?18 are bound by bind_record() for both. */
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
        [ST_LATER_COMMITS] = "SELECT count(*) FROM (SELECT 1 FROM tx WHERE commit_seq > ?1"
                             " LIMIT " STR(RECENT_MAX) " + 1)",
        [ST_OVERLAP_SUBTREE] = OVERLAP_SQL SUBTREE_SQL,
        [ST_OVERLAP_EQ] = OVERLAP_SQL " AND p.path = ?2",
        [ST_OVERLAP_ALL] = OVERLAP_SQL,
        [ST_RECENT_SUBTREE] = RECENT_SQL SUBTREE_SQL,
        [ST_RECENT_EQ] = RECENT_SQL " AND p.path = ?2",
        [ST_RECENT_ALL] = RECENT_SQL,
};

struct audit {
        sqlite3 *db;
        char *path;
        sqlite3_stmt *st[ST__MAX];
        atomic_int wal_frames; /* in the WAL after our last write (wal_hook) */
        audit_check_fn check;  /* run once connected (audit_set_check) */
        void *check_ctx;
};

/* Checkpoints.  Every txbox process is a new first connection, which re-reads the whole WAL
 * to rebuild its index: the WAL must stay short.  And the WAL is the one file whose loss
 * (deleted by hand, left behind by a copy of audit.db) takes rows with it: it should hold
 * little more than the last transaction's.  But a checkpoint syncs twice (WAL, then
 * database), which is more than a transaction's own commit costs: audit_checkpoint does it
 * from the workspace's background thread while a program runs (tx.c), once the WAL holds
 * WAL_CHECKPOINT_FRAMES, or holds anything and the last checkpoint is WAL_CHECKPOINT_AGE_MS
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
        sqlite3_exec(a->db, "INSERT OR REPLACE INTO meta(key, value) VALUES('wal_restarted', random())", NULL, NULL,
                     NULL);
}

/* ---- errors ---- */

/* A corrupt or foreign file: nothing in it can be trusted, and a new log is the way on. */
static int __attribute__((format(printf, 3, 4)))
unreadable(struct audit *a, struct txbox_error *err, const char *fmt, ...)
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
static int __attribute__((format(printf, 4, 5)))
db_fail(struct audit *a, int rc, struct txbox_error *err, const char *fmt, ...)
{
        int prim = rc & 0xff, errnum = EIO;
        const char *hint = "this looks like a bug in txbox: please report this message";
        char what[256];
        va_list ap;

        if (prim == SQLITE_CORRUPT || prim == SQLITE_NOTADB)
                return unreadable(a, err, "%s", sqlite3_errstr(rc));
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
                      prim == SQLITE_FULL ? strerror(errnum) : a->db ? sqlite3_errmsg(a->db) : sqlite3_errstr(rc),
                      hint);
}

/* ---- statements and transactions ---- */

static int stmt(struct audit *a, enum st which, sqlite3_stmt **out)
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

/* Cached statements go back to the cache reset: a statement left mid-result would hold
 * the read snapshot open. */
static void stmt_resetp(sqlite3_stmt **st)
{
        if (*st) {
                sqlite3_reset(*st);
                sqlite3_clear_bindings(*st);
        }
}
static void stmt_finalizep(sqlite3_stmt **st) { sqlite3_finalize(*st); }
#define _cleanup_reset_ _cleanup_(stmt_resetp)
#define _cleanup_finalize_ _cleanup_(stmt_finalizep)

static int step_done(sqlite3_stmt *st)
{
        int rc = sqlite3_step(st);
        return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static int exec_st(struct audit *a, enum st which)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = stmt(a, which, &st);
        return rc == SQLITE_OK ? step_done(st) : rc;
}

static int tx_begin(struct audit *a, bool write, struct txbox_error *err)
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
        return db_fail(a, rc, err, write ? "start writing to it" : "start reading it");
}

/* Commit when r >= 0, else roll back; returns r or the commit's error. */
static int tx_end(struct audit *a, int r, struct txbox_error *err)
{
        if (r >= 0) {
                int rc = exec_st(a, ST_COMMIT);
                if (rc == SQLITE_OK)
                        return r;
                r = db_fail(a, rc, err, "commit to it");
        }
        /* Some errors (SQLITE_FULL, ...) already rolled the transaction back. */
        if (!sqlite3_get_autocommit(a->db))
                (void)exec_st(a, ST_ROLLBACK);
        return r;
}

/* Binding collects the first error so that a record's 18 parameters need one check. */
struct binder {
        sqlite3_stmt *st;
        int rc;
};

static void bind_text(struct binder *b, int i, const char *s)
{
        if (b->rc == SQLITE_OK)
                b->rc = s ? sqlite3_bind_text(b->st, i, s, -1, SQLITE_TRANSIENT)
                          : sqlite3_bind_null(b->st, i);
}

static void bind_int(struct binder *b, int i, int64_t v, bool is_null)
{
        if (b->rc == SQLITE_OK)
                b->rc = is_null ? sqlite3_bind_null(b->st, i) : sqlite3_bind_int64(b->st, i, v);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
        return (const char *)sqlite3_column_text(st, i);
}

/* ---- JSON columns ---- */

/* Arguments and paths are bytes, JSON strings are Unicode: a string that is not UTF-8 is
 * stored as {"hex": "..."} so that it comes back byte for byte. */
static json_t *enc_str(const char *s)
{
        static const char digits[] = "0123456789abcdef";

        if (!s)
                return json_nonnull(json_null());
        json_t *j = json_string(s);
        if (j)
                return j;
        size_t n = strlen(s);
        _cleanup_free_ char *hex = xmalloc(2 * n + 1);
        for (size_t i = 0; i < n; i++) {
                hex[2 * i] = digits[(unsigned char)s[i] >> 4];
                hex[2 * i + 1] = digits[(unsigned char)s[i] & 15];
        }
        hex[2 * n] = '\0';
        return json_nonnull(json_pack("{s:s}", "hex", hex));
}

static int hexval(char c)
{
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The C string of an enc_str() value (a missing value is NULL); -1 when malformed. */
static int dec_str(json_t *j, char **out)
{
        *out = NULL;
        if (!j || json_is_null(j))
                return 0;
        if (json_is_string(j)) {
                *out = xstrdup(json_string_value(j));
                return 0;
        }
        const char *hex = json_string_value(json_object_get(j, "hex"));
        size_t n = hex ? strlen(hex) : 1;
        if (n % 2)
                return -1;
        _cleanup_free_ char *s = xmalloc(n / 2 + 1);
        for (size_t i = 0; i < n / 2; i++) {
                int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
                if (hi < 0 || lo < 0 || (hi | lo) == 0)
                        return -1;
                s[i] = (char)(hi << 4 | lo);
        }
        s[n / 2] = '\0';
        *out = TAKE_PTR(s);
        return 0;
}

static char *argv_to_text(char *const *argv)
{
        json_t *arr = json_nonnull(json_array());
        for (size_t i = 0; argv && argv[i]; i++)
                json_arr_add(arr, enc_str(argv[i]));
        return json_dump_compact(arr);
}

static char *violations_to_text(const struct txbox_record *rec)
{
        json_t *arr = json_nonnull(json_array());
        for (size_t i = 0; i < rec->nviolations; i++) {
                const struct txbox_violation *v = &rec->violations[i];
                json_t *o = json_nonnull(json_object());
                json_obj_set(o, "rule", enc_str(v->rule));
                json_obj_set(o, "path", enc_str(v->path));
                json_obj_set(o, "detail", enc_str(v->detail));
                json_arr_add(arr, o);
        }
        return json_dump_compact(arr);
}

static int text_to_argv(const char *text, char ***out)
{
        json_auto_t *arr = text ? json_loads(text, 0, NULL) : NULL;
        if (!json_is_array(arr))
                return -1;
        size_t n = json_array_size(arr);
        _cleanup_strv_ char **v = xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                if (dec_str(json_array_get(arr, i), &v[i]) < 0 || !v[i])
                        return -1;
        *out = TAKE_PTR(v);
        return 0;
}

/* Fills rec->violations; on failure what was filled stays for txbox_record_clear(). */
static int text_to_violations(const char *text, struct txbox_record *rec)
{
        json_auto_t *arr = text ? json_loads(text, 0, NULL) : NULL;
        if (!text)
                return 0; /* a row written without violations */
        if (!json_is_array(arr))
                return -1;
        rec->nviolations = json_array_size(arr);
        rec->violations = rec->nviolations ? xcalloc(rec->nviolations, sizeof(*rec->violations))
                                           : NULL;
        for (size_t i = 0; i < rec->nviolations; i++) {
                json_t *o = json_array_get(arr, i);
                struct txbox_violation *v = &rec->violations[i];
                if (!json_is_object(o) || dec_str(json_object_get(o, "rule"), &v->rule) < 0 ||
                    dec_str(json_object_get(o, "path"), &v->path) < 0 ||
                    dec_str(json_object_get(o, "detail"), &v->detail) < 0)
                        return -1;
        }
        return 0;
}

/* ---- rows <-> records ---- */

static int check_record(const struct txbox_record *rec, struct txbox_error *err)
{
        size_t idlen = strnlen(rec->id, sizeof(rec->id));

        if (idlen == 0 || idlen == sizeof(rec->id))
                return tx_err(err, EINVAL, "cannot record a transaction whose id is empty or longer "
                              "than %zu characters (a bug in txbox)", sizeof(rec->id) - 1);
        if (txbox_outcome_parse(txbox_outcome_name(rec->outcome)) < 0)
                return tx_err(err, EINVAL, "cannot record transaction '%s' with outcome %d "
                              "(a bug in txbox)", rec->id, (int)rec->outcome);
        for (size_t i = 0; i < rec->npaths; i++)
                if (!rec->paths[i].path ||
                    txbox_change_parse(txbox_change_name(rec->paths[i].change)) < 0)
                        return tx_err(err, EINVAL, "cannot record transaction '%s': path %zu is "
                                      "missing or has change %d (a bug in txbox)", rec->id, i,
                                      (int)rec->paths[i].change);
        return 0;
}

static int bind_record(sqlite3_stmt *st, const struct txbox_record *rec, const char *argv_text,
                       const char *violations_text)
{
        int64_t count[3] = { 0 };
        struct binder b = { st, SQLITE_OK };

        for (size_t i = 0; i < rec->npaths; i++)
                count[rec->paths[i].change]++; /* checked by check_record() */
        bind_text(&b, 1, rec->id);
        bind_text(&b, 2, argv_text);
        bind_text(&b, 3, rec->cwd);
        bind_text(&b, 4, rec->decision);
        bind_text(&b, 5, rec->rule);
        bind_text(&b, 6, rec->reason);
        bind_int(&b, 7, rec->exit_code, rec->exit_code < 0);
        bind_int(&b, 8, rec->signal, rec->signal == 0);
        bind_text(&b, 9, txbox_outcome_name(rec->outcome));
        bind_int(&b, 10, rec->commit_seq, rec->commit_seq <= 0);
        bind_int(&b, 11, rec->started_ms, false);
        bind_int(&b, 12, rec->ended_ms, false);
        bind_int(&b, 13, rec->duration_ms, false);
        bind_int(&b, 14, count[TXBOX_ADDED], false);
        bind_int(&b, 15, count[TXBOX_MODIFIED], false);
        bind_int(&b, 16, count[TXBOX_DELETED], false);
        bind_text(&b, 17, violations_text);
        bind_text(&b, 18, rec->message);
        return b.rc;
}

/* Fill rec (zeroed first) from the current row of a TX_COLS query; paths come separately. */
static int row_to_record(struct audit *a, sqlite3_stmt *st, struct txbox_record *rec,
                         struct txbox_error *err)
{
        const char *id = col_text(st, C_ID), *bad = NULL;
        int outcome = txbox_outcome_parse(col_text(st, C_OUTCOME));

        memset(rec, 0, sizeof(*rec));
        rec->seq = sqlite3_column_int64(st, C_SEQ);
        if (!id || strlen(id) >= sizeof(rec->id))
                bad = "id";
        else if (outcome < 0)
                bad = "outcome";
        else if (text_to_argv(col_text(st, C_ARGV), &rec->argv) < 0)
                bad = "argv";
        else if (text_to_violations(col_text(st, C_VIOLATIONS), rec) < 0)
                bad = "violations";
        if (bad) {
                txbox_record_clear(rec);
                return unreadable(a, err, "transaction row %lld has a bad %s",
                                  (long long)sqlite3_column_int64(st, C_SEQ), bad);
        }
        memcpy(rec->id, id, strlen(id) + 1);
        rec->outcome = (enum txbox_outcome)outcome;
        rec->cwd = xstrdup_or_null(col_text(st, C_CWD));
        rec->decision = xstrdup_or_null(col_text(st, C_DECISION));
        rec->rule = xstrdup_or_null(col_text(st, C_RULE));
        rec->reason = xstrdup_or_null(col_text(st, C_REASON));
        rec->message = xstrdup_or_null(col_text(st, C_MESSAGE));
        rec->exit_code = sqlite3_column_type(st, C_EXIT) == SQLITE_NULL
                                 ? -1 : sqlite3_column_int(st, C_EXIT);
        rec->signal = sqlite3_column_int(st, C_SIGNAL); /* NULL reads as 0: none */
        rec->commit_seq = sqlite3_column_int64(st, C_COMMIT_SEQ);
        rec->started_ms = sqlite3_column_int64(st, C_STARTED);
        rec->ended_ms = sqlite3_column_int64(st, C_ENDED);
        rec->duration_ms = sqlite3_column_int64(st, C_DURATION);
        return 0;
}

/* Append rec's path rows (sorted by path); on failure what was added stays for clearing. */
static int load_paths(struct audit *a, struct txbox_record *rec, struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        size_t cap = 0;
        int rc = stmt(a, ST_PATHS_OF, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, rec->seq);
        while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *p = col_text(st, 0);
                int change = txbox_change_parse(col_text(st, 1));
                if (!p || change < 0)
                        return unreadable(a, err, "a path row of transaction '%s' is bad", rec->id);
                if (rec->npaths == cap) {
                        cap = cap ? 2 * cap : 16;
                        rec->paths = xrealloc(rec->paths, cap * sizeof(*rec->paths));
                }
                rec->paths[rec->npaths++] =
                        (struct txbox_path){ .path = xstrdup(p), .change = (enum txbox_change)change };
                rc = SQLITE_OK;
        }
        return rc == SQLITE_DONE ? 0 : db_fail(a, rc, err, "read the paths of transaction '%s'", rec->id);
}

/* Step a TX_COLS query once: 1 and *rec filled (without paths) when a row came, 0 when none. */
static int read_row(struct audit *a, sqlite3_stmt *st, struct txbox_record *rec,
                    struct txbox_error *err)
{
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                int r = row_to_record(a, st, rec, err);
                return r < 0 ? r : 1;
        }
        return rc == SQLITE_DONE ? 0 : db_fail(a, rc, err, "read a transaction");
}

/* Step a TX_COLS query to the end: every row a record with its paths.  On failure *v and
 * *n hold what was read so far, for txbox_records_free(). */
static int read_rows(struct audit *a, sqlite3_stmt *st, struct txbox_record **v, size_t *n,
                     struct txbox_error *err)
{
        size_t cap = 0;
        int r;

        for (;;) {
                if (*n == cap) {
                        cap = cap ? 2 * cap : 16;
                        *v = xrealloc(*v, cap * sizeof(**v));
                }
                r = read_row(a, st, &(*v)[*n], err);
                if (r <= 0)
                        break;
                ++*n;
        }
        for (size_t i = 0; r >= 0 && i < *n; i++)
                r = load_paths(a, &(*v)[i], err);
        return r;
}

/* Run a TX_COLS query in one read transaction; *out and *n untouched on failure. */
static int read_records(struct audit *a, sqlite3_stmt *st, struct txbox_record **out, size_t *n,
                        struct txbox_error *err)
{
        struct txbox_record *v = NULL;
        size_t nv = 0;
        int r = tx_begin(a, false, err);

        if (r < 0)
                return r;
        r = read_rows(a, st, &v, &nv, err);
        sqlite3_reset(st); /* before COMMIT, which ends the snapshot */
        r = tx_end(a, r, err);
        if (r < 0) {
                txbox_records_free(v, nv);
                return r;
        }
        if (nv == 0) {
                free(v);
                v = NULL;
        }
        *out = v;
        *n = nv;
        return 0;
}

/* ---- open and close ---- */

/* One value of a one-off query as text (NULL when no row or NULL); an SQLite result code. */
static int query_text(struct audit *a, const char *sql, char **out)
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
        int rc = query_text(a, "SELECT count(*) FROM sqlite_master", &objects);

        if (rc == SQLITE_OK)
                rc = query_text(a, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                                   " AND name = 'meta'", &has_meta);
        if (rc == SQLITE_OK && parse_positive(has_meta) == 1)
                rc = query_text(a, "SELECT value FROM meta WHERE key = 'schema_version'", &value);
        if (rc != SQLITE_OK)
                return db_fail(a, rc, err, "read its schema");
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
                r = tx_begin(a, true, err);
                if (r < 0)
                        return r;
                r = schema_version(a, &version, err);
                if (r >= 0 && version == 0) {
                        int rc = sqlite3_exec(a->db, schema_sql, NULL, NULL, NULL);
                        r = rc == SQLITE_OK ? 0 : db_fail(a, rc, err, "create its tables");
                        version = SCHEMA_VERSION;
                }
                r = tx_end(a, r, err);
        }
        if (r < 0)
                return r;
        if (version < 0)
                return unreadable(a, err, "an SQLite database, but not a txbox audit log");
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
        int rc = sqlite3_open_v2(a->path, &a->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                                 NULL);
        if (rc != SQLITE_OK)
                return db_fail(a, rc, err, "open it");
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
                                         " PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;", NULL, NULL, NULL);
                if ((rc & 0xff) != SQLITE_BUSY || mono_us() >= deadline)
                        break;
                usleep(pause);
        }
        if (rc != SQLITE_OK)
                return db_fail(a, rc, err, "read it");
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

/* A deferred log connects at its first use (CONNECT at the top of every entry point). */
#define CONNECT(a, err)                                                  \
        do {                                                             \
                int cr_ = (a)->db ? 0 : connect_db((a), (err));          \
                if (cr_ < 0)                                             \
                        return cr_;                                      \
        } while (0)

int audit_open(const char *path, struct audit **out, struct txbox_error *err)
{
        _cleanup_(audit_closep) struct audit *a = xcalloc(1, sizeof(*a));
        int r;

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
        CONNECT(a, err);
        return 0;
}

/* ---- writes ---- */

static int write_row(struct audit *a, enum st which, const struct txbox_record *rec,
                     struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        _cleanup_free_ char *argv_text = argv_to_text(rec->argv);
        _cleanup_free_ char *violations_text = violations_to_text(rec);
        int rc = stmt(a, which, &st);

        if (rc == SQLITE_OK)
                rc = bind_record(st, rec, argv_text, violations_text);
        if (rc == SQLITE_OK)
                rc = step_done(st);
        if (rc == SQLITE_OK)
                return 0;
        if (rc == SQLITE_CONSTRAINT_UNIQUE)
                return tx_err(err, EEXIST, "audit database '%s' already holds a transaction '%s' "
                              "(a bug in txbox: ids are unique)", a->path, rec->id);
        return db_fail(a, rc, err, "record transaction '%s'", rec->id);
}

static int insert_paths(struct audit *a, int64_t seq, const struct txbox_record *rec,
                        struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = stmt(a, ST_INSERT_PATH, &st);
        size_t i;

        for (i = 0; rc == SQLITE_OK && i < rec->npaths; i++) {
                struct binder b = { st, SQLITE_OK };
                sqlite3_reset(st); /* its result is the previous step's, already checked */
                bind_int(&b, 1, seq, false);
                bind_text(&b, 2, rec->paths[i].path);
                bind_text(&b, 3, txbox_change_name(rec->paths[i].change));
                rc = b.rc == SQLITE_OK ? step_done(st) : b.rc;
        }
        if (rc == SQLITE_OK)
                return 0;
        if (rc == SQLITE_CONSTRAINT_PRIMARYKEY) /* the loop moved i past the failed path */
                return tx_err(err, EINVAL, "cannot record transaction '%s': path '%s' is listed "
                              "twice (a bug in txbox)", rec->id, rec->paths[i - 1].path);
        return db_fail(a, rc, err, "record the paths of transaction '%s'", rec->id);
}

int audit_insert(struct audit *a, struct txbox_record *rec, struct txbox_error *err)
{
        CONNECT(a, err);
        int r = check_record(rec, err);
        int64_t seq = 0;

        if (r < 0)
                return r;
        r = tx_begin(a, true, err);
        if (r < 0)
                return r;
        r = write_row(a, ST_INSERT_TX, rec, err);
        if (r >= 0) {
                seq = sqlite3_last_insert_rowid(a->db);
                r = insert_paths(a, seq, rec, err);
        }
        r = tx_end(a, r, err);
        if (r < 0)
                return r;
        rec->seq = seq;
        return 0;
}

static int no_such_tx(struct txbox_error *err, const char *id)
{
        return tx_err(err, ENOENT, "no transaction '%s' in this workspace's log%s: 'txbox log' "
                      "lists them", id, strlen(id) < ID_PREFIX_MIN
                      ? " (an id prefix needs at least 4 characters)" : "");
}

static int seq_of_id(struct audit *a, const char *id, int64_t *seq, struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = stmt(a, ST_SEQ_OF_ID, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                *seq = sqlite3_column_int64(st, 0);
                return 0;
        }
        return rc == SQLITE_DONE ? no_such_tx(err, id)
                                 : db_fail(a, rc, err, "look up transaction '%s'", id);
}

static int delete_paths(struct audit *a, int64_t seq, struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = stmt(a, ST_DELETE_PATHS, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, seq);
        if (rc == SQLITE_OK)
                rc = step_done(st);
        return rc == SQLITE_OK ? 0 : db_fail(a, rc, err, "replace the paths of a transaction");
}

static int update(struct audit *a, const struct txbox_record *rec, bool paths, struct txbox_error *err)
{
        CONNECT(a, err);
        int r = check_record(rec, err);
        int64_t seq = 0;

        if (r < 0)
                return r;
        r = tx_begin(a, true, err);
        if (r < 0)
                return r;
        if (paths)
                r = seq_of_id(a, rec->id, &seq, err);
        if (r >= 0)
                r = write_row(a, ST_UPDATE_TX, rec, err);
        if (r >= 0 && !paths && sqlite3_changes(a->db) == 0)
                r = no_such_tx(err, rec->id);
        if (r >= 0 && paths)
                r = delete_paths(a, seq, err);
        if (r >= 0 && paths)
                r = insert_paths(a, seq, rec, err);
        r = tx_end(a, r, err);
        return r < 0 ? r : 0;
}

int audit_update(struct audit *a, const struct txbox_record *rec, struct txbox_error *err)
{
        return update(a, rec, true, err);
}

int audit_update_row(struct audit *a, const struct txbox_record *rec, struct txbox_error *err)
{
        return update(a, rec, false, err);
}

/* ---- reads ---- */

/* The record of exactly id, without paths: 1 found, 0 not. */
static int get_exact(struct audit *a, const char *id, struct txbox_record *rec,
                     struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = stmt(a, ST_GET_EXACT, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
        if (rc != SQLITE_OK)
                return db_fail(a, rc, err, "look up transaction '%s'", id);
        return read_row(a, st, rec, err);
}

/* The smallest string above every string that starts with prefix: the prefix up to its
 * last byte below 0xff, that byte incremented.  "" when every byte is 0xff. */
static char *prefix_end(const char *prefix)
{
        char *end = xstrdup(prefix);

        for (size_t i = strlen(end); i > 0; i--) {
                unsigned char c = (unsigned char)end[i - 1];
                if (c < 0xff) {
                        end[i - 1] = (char)(c + 1);
                        end[i] = '\0';
                        return end;
                }
        }
        end[0] = '\0';
        return end;
}

static int ambiguous(const char *prefix, const id_buf *ids, size_t n, struct txbox_error *err)
{
        char list[AMBIGUOUS_SHOWN * (sizeof(id_buf) + 2) + 8] = "";
        size_t len = 0;

        /* Each id fits (ids are shorter than id_buf), so len never passes the buffer. */
        for (size_t i = 0; i < n && i < AMBIGUOUS_SHOWN; i++)
                len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", ids[i]);
        if (n > AMBIGUOUS_SHOWN)
                snprintf(list + len, sizeof(list) - len, ", ...");
        return tx_err(err, EINVAL, "transaction id '%s' is ambiguous: it matches %s: give more "
                      "characters", prefix, list);
}

/* The one id that starts with prefix, by an index range: 1 and *id, 0 none, -EINVAL many. */
static int unique_prefix(struct audit *a, const char *prefix, id_buf id, struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        _cleanup_free_ char *end = prefix_end(prefix);
        id_buf ids[AMBIGUOUS_SHOWN + 1]; /* the query's LIMIT */
        struct binder b = { NULL, stmt(a, ST_IDS_IN_RANGE, &st) };
        size_t n = 0;
        int rc;

        b.st = st;
        bind_text(&b, 1, prefix);
        /* With no end string every id from the prefix on matches: SQLite orders every
         * TEXT value below every BLOB, so an empty blob bounds the range from above. */
        if (b.rc == SQLITE_OK)
                b.rc = *end ? sqlite3_bind_text(st, 2, end, -1, SQLITE_TRANSIENT)
                            : sqlite3_bind_zeroblob(st, 2, 0);
        bind_int(&b, 3, AMBIGUOUS_SHOWN + 1, false);
        rc = b.rc;
        while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                snprintf(ids[n++], sizeof(ids[0]), "%s", col_text(st, 0) ? col_text(st, 0) : "");
                rc = SQLITE_OK;
        }
        if (rc != SQLITE_DONE)
                return db_fail(a, rc, err, "look up transaction '%s'", prefix);
        if (n > 1)
                return ambiguous(prefix, ids, n, err);
        if (n == 1)
                memcpy(id, ids[0], sizeof(ids[0]));
        return (int)n;
}

static int find_record(struct audit *a, const char *id, struct txbox_record *rec,
                       struct txbox_error *err)
{
        id_buf full;
        int r = get_exact(a, id, rec, err);

        if (r == 0 && strlen(id) >= ID_PREFIX_MIN) {
                r = unique_prefix(a, id, full, err);
                if (r > 0)
                        r = get_exact(a, full, rec, err);
        }
        if (r == 0)
                return no_such_tx(err, id);
        return r < 0 ? r : load_paths(a, rec, err);
}

int audit_get(struct audit *a, const char *id, struct txbox_record *out, struct txbox_error *err)
{
        CONNECT(a, err);
        struct txbox_record rec = { 0 };
        int r;

        if (!id || !*id)
                return tx_err(err, EINVAL, "no transaction id given: pass an id, or a prefix of at "
                              "least %d characters, from 'txbox log'", ID_PREFIX_MIN);
        r = tx_begin(a, false, err);
        if (r < 0)
                return r;
        r = find_record(a, id, &rec, err);
        r = tx_end(a, r, err);
        if (r < 0) {
                txbox_record_clear(&rec);
                return r;
        }
        *out = rec;
        return 0;
}

int audit_list(struct audit *a, int limit, struct txbox_record **out, size_t *n,
               struct txbox_error *err)
{
        CONNECT(a, err);
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = stmt(a, ST_LIST, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, limit > 0 ? limit : -1); /* -1: no limit */
        if (rc != SQLITE_OK)
                return db_fail(a, rc, err, "list its transactions");
        return read_records(a, st, out, n, err);
}

int audit_list_outcomes(struct audit *a, const enum txbox_outcome *outcomes, size_t noutcomes,
                        struct txbox_record **out, size_t *n, struct txbox_error *err)
{
        CONNECT(a, err);
        _cleanup_finalize_ sqlite3_stmt *st = NULL;
        char sql[sizeof("SELECT " TX_COLS " FROM tx WHERE outcome IN () ORDER BY seq") + 8 * 16];
        size_t len = (size_t)snprintf(sql, sizeof(sql), "SELECT " TX_COLS " FROM tx WHERE outcome IN (");
        unsigned seen = 0;

        for (size_t i = 0; i < noutcomes; i++) {
                const char *name = txbox_outcome_name(outcomes[i]);
                if (txbox_outcome_parse(name) < 0)
                        return tx_err(err, EINVAL, "cannot list transactions with outcome %d "
                                      "(a bug in txbox)", (int)outcomes[i]);
                if (seen & (1u << outcomes[i]))
                        continue;
                /* The names are our own constants, never input: safe to put in the SQL text. */
                len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s'%s'", seen ? ", " : "", name);
                seen |= 1u << outcomes[i];
        }
        snprintf(sql + len, sizeof(sql) - len, ") ORDER BY seq");
        if (!seen) {
                *out = NULL;
                *n = 0;
                return 0;
        }
        int rc = sqlite3_prepare_v2(a->db, sql, -1, &st, NULL);
        if (rc != SQLITE_OK)
                return db_fail(a, rc, err, "list its transactions");
        return read_records(a, st, out, n, err);
}

int audit_newest_committed(struct audit *a, struct txbox_record *out, struct txbox_error *err)
{
        CONNECT(a, err);
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        struct txbox_record rec = { 0 };
        int rc = stmt(a, ST_NEWEST_COMMITTED, &st);
        int r;

        if (rc != SQLITE_OK)
                return db_fail(a, rc, err, "look up the newest committed transaction");
        r = tx_begin(a, false, err);
        if (r < 0)
                return r;
        r = read_row(a, st, &rec, err);
        sqlite3_reset(st);
        if (r == 0)
                r = tx_err(err, ENOENT, "no committed transaction in this workspace's log");
        else if (r > 0)
                r = load_paths(a, &rec, err);
        r = tx_end(a, r, err);
        if (r < 0) {
                txbox_record_clear(&rec);
                return r;
        }
        *out = rec;
        return 0;
}

int audit_next_commit_seq(struct audit *a, int64_t *out, struct txbox_error *err)
{
        CONNECT(a, err);
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = stmt(a, ST_NEXT_COMMIT_SEQ, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
                return db_fail(a, rc, err, "read the commit sequence");
        *out = sqlite3_column_int64(st, 0);
        return 0;
}

/* ---- repair ---- */

/* A row the log kept of a transaction the state dir says is settled (committed, undone)
 * while the row is not (its last write was lost with the WAL): brought up to the state dir's
 * word, keeping what only the row knew (its exit status). */
static int settle_kept_row(struct audit *a, const struct txbox_record *from, int64_t seq, size_t *added,
                           struct txbox_error *err)
{
        struct txbox_record row = { 0 };
        int r = get_exact(a, from->id, &row, err);

        if (r <= 0 || row.outcome == from->outcome ||
            (row.outcome != TXBOX_RUNNING && row.outcome != TXBOX_COMMITTING &&
             row.outcome != TXBOX_UNDOING)) {
                txbox_record_clear(&row);
                return r < 0 ? r : 0;
        }
        row.outcome = from->outcome;
        row.commit_seq = from->commit_seq;
        row.ended_ms = from->ended_ms;
        free(row.message);
        row.message = xstrdup_or_null(from->message);
        record_set_changes(&row, from->paths, from->npaths, NULL, 0); /* a commit broke no rule */
        if ((r = write_row(a, ST_UPDATE_TX, &row, err)) >= 0 && (r = delete_paths(a, seq, err)) >= 0 &&
            (r = insert_paths(a, seq, &row, err)) >= 0)
                ++*added;
        txbox_record_clear(&row);
        return r;
}

int audit_import(struct audit *a, struct txbox_record *recs, size_t n, int64_t floor, const char *lost_msg,
                 size_t *added, struct txbox_error *err)
{
        CONNECT(a, err);
        _cleanup_free_ char *have = NULL;
        int64_t next = 0, seq;
        int r;

        *added = 0;
        for (size_t i = 0; i < n; i++)
                if ((r = check_record(&recs[i], err)) < 0)
                        return r;
        if ((r = tx_begin(a, true, err)) < 0)
                return r;
        /* Under the write lock: another process may have put the rows back meanwhile. */
        if ((r = audit_next_commit_seq(a, &next, err)) < 0 || next > floor)
                return tx_end(a, r, err);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                struct txbox_error e2;
                if (seq_of_id(a, recs[i].id, &seq, &e2) == 0) {
                        r = settle_kept_row(a, &recs[i], seq, added, err);
                        continue;
                }
                if ((r = write_row(a, ST_INSERT_TX, &recs[i], err)) >= 0) {
                        recs[i].seq = sqlite3_last_insert_rowid(a->db);
                        r = insert_paths(a, recs[i].seq, &recs[i], err);
                        ++*added;
                }
        }
        if (r >= 0)
                r = audit_next_commit_seq(a, &next, err);
        /* Commit numbers run 1, 2, ... without a gap: those missing are commits the state dir
         * holds nothing of (no-op commits, undo data pruned by txbox gc). */
        if (r >= 0) {
                char sql[160];
                snprintf(sql, sizeof(sql),
                         "SELECT count(DISTINCT commit_seq) FROM tx WHERE commit_seq BETWEEN 1 AND %lld",
                         (long long)floor);
                int rc = query_text(a, sql, &have);
                if (rc != SQLITE_OK)
                        r = db_fail(a, rc, err, "count its commits");
        }
        long long missing = r >= 0 && have ? (long long)floor - strtoll(have, NULL, 10) : 0;
        if (r >= 0 && missing > 0) {
                /* One row says they were, and keeps the commit sequence. */
                char *argv[] = { "(lost)", NULL };
                _cleanup_free_ char *msg = xasprintf("%s (%lld of commits #1 to #%lld)", lost_msg, missing,
                                                     (long long)floor);
                struct txbox_record lost = { .argv = argv, .decision = "allow", .outcome = TXBOX_COMMITTED,
                                             .exit_code = -1, .commit_seq = next <= floor ? floor : 0,
                                             .started_ms = now_ms(), .message = msg };
                lost.ended_ms = lost.started_ms;
                char id[64];
                snprintf(id, sizeof(id), "lost-%lld-%llx", (long long)floor % 1000000000000LL,
                         (unsigned long long)(lost.started_ms & 0xffffff));
                memcpy(lost.id, id, sizeof(lost.id) - 1);
                if ((r = write_row(a, ST_INSERT_TX, &lost, err)) >= 0)
                        ++*added;
        }
        r = tx_end(a, r, err);
        if (r >= 0)
                sqlite3_wal_checkpoint_v2(a->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        return r;
}

/* ---- overlaps ---- */

static void strvec_clearp(struct strvec *sv) { strvec_clear(sv); }

static int cmp_str(const void *x, const void *y)
{
        return strcmp(*(char *const *)x, *(char *const *)y);
}

static void sort_unique(struct strvec *sv)
{
        size_t k = 0;

        if (sv->n < 2)
                return;
        qsort(sv->v, sv->n, sizeof(char *), cmp_str);
        for (size_t i = 1; i < sv->n; i++) {
                if (strcmp(sv->v[i], sv->v[k]))
                        sv->v[++k] = sv->v[i];
                else
                        free(sv->v[i]);
        }
        sv->n = k + 1;
        sv->v[sv->n] = NULL;
}

/* Every proper ancestor directory of every path ("a/b/c": "a", "a/b"), once each. */
static struct strvec ancestors_of(const struct txbox_path *paths, size_t npaths)
{
        struct strvec sv = { 0 };

        for (size_t i = 0; i < npaths; i++) {
                const char *p = paths[i].path;
                for (const char *s = p ? strchr(p, '/') : NULL; s; s = strchr(s + 1, '/'))
                        if (s > p)
                                strvec_push(&sv, xasprintf("%.*s", (int)(s - p), p));
        }
        sort_unique(&sv);
        return sv;
}

static int overlaps_of(struct audit *a, enum st which, int64_t after, const char *path,
                       struct strvec *found, struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        struct binder b = { NULL, stmt(a, which, &st) };
        int rc;

        b.st = st;
        bind_int(&b, 1, after, false);
        if (which != ST_OVERLAP_ALL && which != ST_RECENT_ALL)
                bind_text(&b, 2, path);
        rc = b.rc;
        while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *p = col_text(st, 0), *id = col_text(st, 1);
                strvec_push(found, xasprintf("%s (tx %s)", p ? p : "", id ? id : ""));
                rc = SQLITE_OK;
        }
        return rc == SQLITE_DONE ? 0 : db_fail(a, rc, err, "look up later changes to '%s'", path);
}

/* How many commits came after commit AFTER, counted up to RECENT_MAX + 1. */
static int later_commits(struct audit *a, int64_t after, int64_t *out, struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = stmt(a, ST_LATER_COMMITS, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, after);
        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
                return db_fail(a, rc, err, "count the later commits");
        *out = sqlite3_column_int64(st, 0);
        return 0;
}

/* Ancestors are checked by equality, one index lookup each, rather than by scanning for
 * rows that are a prefix of q: the paths themselves come sorted, so a subtree needs one
 * index range, and a path has few ancestors. */
static int find_overlaps(struct audit *a, int64_t after, const struct txbox_path *paths,
                         size_t npaths, struct strvec *found, struct txbox_error *err)
{
        _cleanup_(strvec_clearp) struct strvec up = ancestors_of(paths, npaths);
        int64_t later = 0;
        int r = later_commits(a, after, &later, err);

        size_t lookups = up.n;
        for (size_t i = 0; i < npaths; i++)
                lookups += paths[i].path != NULL;
        /* The plan by commit for a few later commits (the usual case), else by path. */
        int plan = r == 0 && later <= RECENT_MAX && (uint64_t)later * lookups <= RECENT_PROBES
                           ? ST_RECENT_SUBTREE - ST_OVERLAP_SUBTREE
                           : 0;
        for (size_t i = 0; r >= 0 && i < npaths; i++)
                if (paths[i].path)
                        /* "" is the workspace root: everything lies beneath it. */
                        r = overlaps_of(a, (enum st)(plan + (*paths[i].path ? ST_OVERLAP_SUBTREE : ST_OVERLAP_ALL)),
                                        after, paths[i].path, found, err);
        for (size_t i = 0; r >= 0 && i < up.n; i++)
                r = overlaps_of(a, (enum st)(plan + ST_OVERLAP_EQ), after, up.v[i], found, err);
        return r;
}

int audit_later_overlaps(struct audit *a, int64_t after_commit_seq, const struct txbox_path *paths,
                         size_t npaths, struct strvec *out, struct txbox_error *err)
{
        CONNECT(a, err);
        _cleanup_(strvec_clearp) struct strvec found = { 0 };
        int r = tx_begin(a, false, err);

        if (r < 0)
                return r;
        r = find_overlaps(a, after_commit_seq, paths, npaths, &found, err);
        r = tx_end(a, r, err);
        if (r < 0)
                return r;
        sort_unique(&found);
        for (size_t i = 0; i < found.n; i++)
                strvec_push(out, TAKE_PTR(found.v[i]));
        return (int)found.n;
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
        int rc = query_text(a, "SELECT count(*) FROM sqlite_master WHERE name IN ('tx_change',"
                               " 'tx_change_INSERT', 'tx_change_UPDATE')", &n);
        if (rc != SQLITE_OK)
                return db_fail(a, rc, err, "read its schema");
        *yes = n && !strcmp(n, "3");
        return 0;
}

static int changes_ensure(struct audit *a, struct txbox_error *err)
{
        bool yes;
        int r = changes_present(a, &yes, err);

        if (r < 0 || yes)
                return r;
        if ((r = tx_begin(a, true, err)) < 0)
                return r;
        if ((r = changes_present(a, &yes, err)) >= 0 && !yes) {
                int rc = sqlite3_exec(a->db, changes_sql, NULL, NULL, NULL);
                r = rc == SQLITE_OK ? 0 : db_fail(a, rc, err, "add its change stream");
        }
        return tx_end(a, r, err);
}

#define CHANGES_QUERY                                                                   \
        "SELECT " TX_COLS ", cseq FROM tx JOIN (SELECT seq AS cseq, tx_seq FROM tx_change" \
        " WHERE seq > ?1 ORDER BY seq LIMIT ?2) ON tx_seq = seq ORDER BY cseq"

int audit_changes(struct audit *a, int64_t since, int limit, struct txbox_record **out, int64_t **seqs, size_t *n,
                  struct txbox_error *err)
{
        CONNECT(a, err);
        _cleanup_finalize_ sqlite3_stmt *st = NULL;
        struct txbox_record *v = NULL;
        int64_t *cs = NULL;
        size_t nv = 0, cap = 0;
        int rc = sqlite3_prepare_v2(a->db, CHANGES_QUERY, -1, &st, NULL), r;

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, since);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 2, limit > 0 ? limit : -1);
        if (rc != SQLITE_OK)
                return db_fail(a, rc, err, "read its change stream");
        if ((r = tx_begin(a, false, err)) < 0)
                return r;
        for (;;) {
                if (nv == cap) {
                        cap = cap ? 2 * cap : 16;
                        v = xrealloc(v, cap * sizeof(*v));
                        cs = xrealloc(cs, cap * sizeof(*cs));
                }
                if ((r = read_row(a, st, &v[nv], err)) <= 0)
                        break;
                cs[nv++] = sqlite3_column_int64(st, C_MESSAGE + 1);
        }
        for (size_t i = 0; r >= 0 && i < nv; i++)
                r = load_paths(a, &v[i], err);
        sqlite3_reset(st);
        if ((r = tx_end(a, r, err)) < 0) {
                txbox_records_free(v, nv);
                free(cs);
                return r;
        }
        *out = v;
        *seqs = cs;
        *n = nv;
        return 0;
}
