/* What the files of the audit store share, private to them: audit.c (the connection: open,
 * schema, WAL, locks, errors, statements and transactions), auditwrite.c (inserts, updates,
 * repair) and auditread.c (look-ups, lists, overlaps, the change stream).  The schema is in
 * audit.h.  The few lines every statement needs (reset, step, bind, read a column) are
 * static inline here: they were static helpers before the split, and stay free to call. */
#ifndef TXBOX_STORE_AUDIT_INT_H
#define TXBOX_STORE_AUDIT_INT_H

#include <sqlite3.h>
#include <stdatomic.h>

#include "base/cleanup.h"
#include "store/audit.h"
#include "txbox.h"

#define ID_PREFIX_MIN 4

/* Columns of a record row, in the order of enum col. */
#define TX_COLS                                                                           \
        "seq, id, argv, cwd, decision, rule, reason, exit_code, signal, outcome, commit_seq," \
        " started_ms, ended_ms, duration_ms, violations, message"
enum col {
        C_SEQ, C_ID, C_ARGV, C_CWD, C_DECISION, C_RULE, C_REASON, C_EXIT, C_SIGNAL, C_OUTCOME,
        C_COMMIT_SEQ, C_STARTED, C_ENDED, C_DURATION, C_VIOLATIONS, C_MESSAGE,
};

/* The plan by commit when there are at most RECENT_MAX later commits and it probes at most
 * RECENT_PROBES primary keys in all (later commits x lookups): a 10,000-file change checked
 * against 200 later commits would otherwise probe two million times, where its paths, most
 * of them new, have almost no history to read. */
#define RECENT_MAX 256
#define RECENT_PROBES 65536

/* The statements used on every command, prepared once per connection on first use. */
enum st {
        ST_BEGIN_READ, ST_BEGIN_WRITE, ST_COMMIT, ST_ROLLBACK,
        ST_INSERT_TX, ST_UPDATE_TX, ST_SEQ_OF_ID, ST_DELETE_PATHS, ST_INSERT_PATH,
        ST_GET_EXACT, ST_IDS_IN_RANGE, ST_PATHS_OF, ST_LIST, ST_NEWEST_COMMITTED,
        ST_NEXT_COMMIT_SEQ, ST_LATER_COMMITS, ST_LAST_CHANGE,
        /* The three of each plan in this order (find_overlaps, auditread.c). */
        ST_OVERLAP_SUBTREE, ST_OVERLAP_EQ, ST_OVERLAP_ALL, ST_RECENT_SUBTREE, ST_RECENT_EQ, ST_RECENT_ALL,
        /* A session's savepoints (the table may be missing from a log made before it: see
         * audit_has_savepoints). */
        ST_SAVEPOINTS_OF, ST_DELETE_SAVEPOINTS, ST_INSERT_SAVEPOINT,
        ST__MAX,
};

/* A session's commands, one row each in the order they ran (txbox_savepoint).  Added to
 * schema 1 without a new version: a log made before it gets the table at its first session
 * (CREATE ... IF NOT EXISTS, audit_ensure_savepoints), and a txbox that predates it never
 * reads it. */
#define SAVEPOINT_TABLE_SQL                                                                          \
        "CREATE TABLE IF NOT EXISTS savepoint(tx_seq INTEGER NOT NULL REFERENCES tx(seq),"          \
        " step INTEGER NOT NULL, sp INTEGER NOT NULL, argv TEXT NOT NULL, exit_code INTEGER,"        \
        " signal INTEGER, outcome TEXT NOT NULL, started_ms INTEGER, duration_ms INTEGER,"           \
        " PRIMARY KEY(tx_seq, step))"

struct audit {
        sqlite3 *db;
        int has_savepoints; /* the savepoint table: -1 not known yet, 0 absent, 1 there */
        char *path;
        sqlite3_stmt *st[ST__MAX];
        atomic_int wal_frames; /* in the WAL after our last write (wal_hook) */
        audit_check_fn check;  /* run once connected (audit_set_check) */
        void *check_ctx;
};

/* A deferred log connects at its first use (CONNECT at the top of every entry point). */
#define CONNECT(a, err)                                                  \
        do {                                                             \
                int cr_ = (a)->db ? 0 : audit_connect((a), (err));       \
                if (cr_ < 0)                                             \
                        return cr_;                                      \
        } while (0)

/* ---- errors (audit.c) ---- */

/* A corrupt or foreign file: nothing in it can be trusted, and a new log is the way on. */
int __attribute__((format(printf, 3, 4)))
audit_unreadable(struct audit *a, struct txbox_error *err, const char *fmt, ...);
/* Turn a failed SQLite call into -errno and a message naming the database file. */
int __attribute__((format(printf, 4, 5)))
audit_db_fail(struct audit *a, int rc, struct txbox_error *err, const char *fmt, ...);
/* -ENOENT: no transaction id (or id prefix) in the log. */
int audit_no_such_tx(struct txbox_error *err, const char *id);

/* ---- statements and transactions (audit.c) ---- */

/* The cached statement `which` (prepared at its first use); an SQLite result code. */
int audit_stmt(struct audit *a, enum st which, sqlite3_stmt **out);
/* BEGIN IMMEDIATE for a write, BEGIN for a read. */
int audit_tx_begin(struct audit *a, bool write, struct txbox_error *err);
/* Commit when r >= 0, else roll back; returns r or the commit's error. */
int audit_tx_end(struct audit *a, int r, struct txbox_error *err);
/* One value of a one-off query as text (NULL when no row or NULL); an SQLite result code. */
int audit_query_text(struct audit *a, const char *sql, char **out);
/* Is the savepoint table there (asked once per connection)?  Make it (inside a write). */
bool audit_has_savepoints(struct audit *a);
int audit_ensure_savepoints(struct audit *a, struct txbox_error *err);

/* Cached statements go back to the cache reset: a statement left mid-result would hold
 * the read snapshot open. */
static inline void stmt_resetp(sqlite3_stmt **st)
{
        if (*st) {
                sqlite3_reset(*st);
                sqlite3_clear_bindings(*st);
        }
}
static inline void stmt_finalizep(sqlite3_stmt **st) { sqlite3_finalize(*st); }
#define _cleanup_reset_ _cleanup_(stmt_resetp)
#define _cleanup_finalize_ _cleanup_(stmt_finalizep)

static inline int step_done(sqlite3_stmt *st)
{
        int rc = sqlite3_step(st);
        return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

/* Binding collects the first error so that a record's 18 parameters need one check. */
struct binder {
        sqlite3_stmt *st;
        int rc;
};

static inline void bind_text(struct binder *b, int i, const char *s)
{
        if (b->rc == SQLITE_OK)
                b->rc = s ? sqlite3_bind_text(b->st, i, s, -1, SQLITE_TRANSIENT)
                          : sqlite3_bind_null(b->st, i);
}

static inline void bind_int(struct binder *b, int i, int64_t v, bool is_null)
{
        if (b->rc == SQLITE_OK)
                b->rc = is_null ? sqlite3_bind_null(b->st, i) : sqlite3_bind_int64(b->st, i, v);
}

static inline const char *col_text(sqlite3_stmt *st, int i)
{
        return (const char *)sqlite3_column_text(st, i);
}

/* ---- reads (auditread.c) ---- */

/* The record of exactly id, without paths: 1 found, 0 not. */
int audit_get_exact(struct audit *a, const char *id, struct txbox_record *rec, struct txbox_error *err);

#endif
