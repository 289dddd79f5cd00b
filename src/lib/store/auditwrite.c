/* Writes to the audit store: a record's row and path rows inserted or updated in one write
 * transaction (audit_insert, audit_update, audit_update_row), and rows a damaged log lost
 * put back from the state dir (audit_import).  Arguments and violations go into JSON
 * columns here (auditread.c reads them back).  The connection is audit.c's. */
#include "store/audit_int.h"

#include <jansson.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/mem.h"
#include "store/record.h"
#include "txbox.h"

/* ---- JSON columns ---- */

/* Arguments and paths are bytes, JSON strings are Unicode: a string that is not UTF-8 is
 * stored as {"hex": "..."} so that it comes back byte for byte. */
static json_t *enc_str(const char *s)
{
        static const char digits[] = "0123456789abcdef";

        if (!s)
                return jv_nonnull(json_null());
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
        return jv_nonnull(json_pack("{s:s}", "hex", hex));
}

static char *argv_to_text(char *const *argv)
{
        json_t *arr = jv_nonnull(json_array());
        for (size_t i = 0; argv && argv[i]; i++)
                jv_push(arr, enc_str(argv[i]));
        return jv_dump(arr);
}

static char *violations_to_text(const struct txbox_record *rec)
{
        json_t *arr = jv_nonnull(json_array());
        for (size_t i = 0; i < rec->nviolations; i++) {
                const struct txbox_violation *v = &rec->violations[i];
                json_t *o = jv_nonnull(json_object());
                jv_set(o, "rule", enc_str(v->rule));
                jv_set(o, "path", enc_str(v->path));
                jv_set(o, "detail", enc_str(v->detail));
                jv_push(arr, o);
        }
        return jv_dump(arr);
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

/* ---- writes ---- */

/* A session's savepoint rows, all of them again (a session has at most a few dozen). */
static int write_savepoints(struct audit *a, int64_t seq, const struct txbox_record *rec,
                            struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *del = NULL, *ins = NULL;
        int r = audit_ensure_savepoints(a, err), rc;

        if (r < 0)
                return r;
        rc = audit_stmt(a, ST_DELETE_SAVEPOINTS, &del);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(del, 1, seq);
        if (rc == SQLITE_OK)
                rc = step_done(del);
        if (rc == SQLITE_OK)
                rc = audit_stmt(a, ST_INSERT_SAVEPOINT, &ins);
        for (size_t i = 0; rc == SQLITE_OK && i < rec->nsavepoints; i++) {
                const struct txbox_savepoint *sp = &rec->savepoints[i];
                _cleanup_free_ char *argv_text = argv_to_text(sp->argv);
                struct binder b = { ins, SQLITE_OK };
                sqlite3_reset(ins);
                bind_int(&b, 1, seq, false);
                bind_int(&b, 2, (int64_t)i + 1, false);
                bind_int(&b, 3, sp->n, false);
                bind_text(&b, 4, argv_text);
                bind_int(&b, 5, sp->exit_code, sp->exit_code < 0);
                bind_int(&b, 6, sp->signal, sp->signal == 0);
                bind_text(&b, 7, txbox_sp_outcome_name(sp->outcome));
                bind_int(&b, 8, sp->started_ms, false);
                bind_int(&b, 9, sp->duration_ms, false);
                rc = b.rc == SQLITE_OK ? step_done(ins) : b.rc;
        }
        return rc == SQLITE_OK ? 0 : audit_db_fail(a, rc, err, "record the commands of session '%s'", rec->id);
}

static int write_row(struct audit *a, enum st which, const struct txbox_record *rec,
                     struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        _cleanup_free_ char *argv_text = argv_to_text(rec->argv);
        _cleanup_free_ char *violations_text = violations_to_text(rec);
        int rc = audit_stmt(a, which, &st);

        if (rc == SQLITE_OK)
                rc = bind_record(st, rec, argv_text, violations_text);
        if (rc == SQLITE_OK)
                rc = step_done(st);
        if (rc == SQLITE_OK)
                return 0;
        if (rc == SQLITE_CONSTRAINT_UNIQUE)
                return tx_err(err, EEXIST, "audit database '%s' already holds a transaction '%s' "
                              "(a bug in txbox: ids are unique)", a->path, rec->id);
        return audit_db_fail(a, rc, err, "record transaction '%s'", rec->id);
}

static int insert_paths(struct audit *a, int64_t seq, const struct txbox_record *rec,
                        struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = audit_stmt(a, ST_INSERT_PATH, &st);
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
        return audit_db_fail(a, rc, err, "record the paths of transaction '%s'", rec->id);
}

int audit_insert(struct audit *a, struct txbox_record *rec, struct txbox_error *err)
{
        CONNECT(a, err);
        int r = check_record(rec, err);
        int64_t seq = 0;

        if (r < 0)
                return r;
        r = audit_tx_begin(a, true, err);
        if (r < 0)
                return r;
        r = write_row(a, ST_INSERT_TX, rec, err);
        if (r >= 0) {
                seq = sqlite3_last_insert_rowid(a->db);
                r = insert_paths(a, seq, rec, err);
        }
        if (r >= 0 && rec->nsavepoints)
                r = write_savepoints(a, seq, rec, err);
        r = audit_tx_end(a, r, err);
        if (r < 0)
                return r;
        rec->seq = seq;
        return 0;
}

static int seq_of_id(struct audit *a, const char *id, int64_t *seq, struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = audit_stmt(a, ST_SEQ_OF_ID, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                *seq = sqlite3_column_int64(st, 0);
                return 0;
        }
        return rc == SQLITE_DONE ? audit_no_such_tx(err, id)
                                 : audit_db_fail(a, rc, err, "look up transaction '%s'", id);
}

static int delete_paths(struct audit *a, int64_t seq, struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = audit_stmt(a, ST_DELETE_PATHS, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, seq);
        if (rc == SQLITE_OK)
                rc = step_done(st);
        return rc == SQLITE_OK ? 0 : audit_db_fail(a, rc, err, "replace the paths of a transaction");
}

static int update(struct audit *a, const struct txbox_record *rec, bool paths, struct txbox_error *err)
{
        CONNECT(a, err);
        int r = check_record(rec, err);
        int64_t seq = 0;

        if (r < 0)
                return r;
        r = audit_tx_begin(a, true, err);
        if (r < 0)
                return r;
        if (paths)
                r = seq_of_id(a, rec->id, &seq, err);
        if (r >= 0)
                r = write_row(a, ST_UPDATE_TX, rec, err);
        if (r >= 0 && !paths && sqlite3_changes(a->db) == 0)
                r = audit_no_such_tx(err, rec->id);
        if (r >= 0 && paths)
                r = delete_paths(a, seq, err);
        if (r >= 0 && paths)
                r = insert_paths(a, seq, rec, err);
        if (r >= 0 && paths && rec->nsavepoints)
                r = write_savepoints(a, seq, rec, err);
        r = audit_tx_end(a, r, err);
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

/* ---- repair ---- */

/* A row the log kept of a transaction the state dir says is settled (committed, undone)
 * while the row is not (its last write was lost with the WAL): brought up to the state dir's
 * word, keeping what only the row knew (its exit status). */
static int settle_kept_row(struct audit *a, const struct txbox_record *from, int64_t seq, size_t *added,
                           struct txbox_error *err)
{
        struct txbox_record row = { 0 };
        int r = audit_get_exact(a, from->id, &row, err);

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
        if ((r = audit_tx_begin(a, true, err)) < 0)
                return r;
        /* Under the write lock: another process may have put the rows back meanwhile. */
        if ((r = audit_next_commit_seq(a, &next, err)) < 0 || next > floor)
                return audit_tx_end(a, r, err);
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
                int rc = audit_query_text(a, sql, &have);
                if (rc != SQLITE_OK)
                        r = audit_db_fail(a, rc, err, "count its commits");
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
        r = audit_tx_end(a, r, err);
        if (r >= 0)
                sqlite3_wal_checkpoint_v2(a->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
        return r;
}
