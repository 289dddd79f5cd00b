/* Reads of the audit store: rows turned back into records (their JSON columns decoded,
 * every text checked, since the file is input like any other), one record by id or unique
 * id prefix, lists, the newest commit, the paths later commits changed that overlap a
 * transaction's (the conflict check), and the change stream txbox log --since follows.
 * Every read of more than one statement runs in one read transaction (audit.c). */
#include "store/audit_int.h"

#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/mem.h"
#include "base/strv.h"
#include "store/record.h"
#include "txbox.h"

#define AMBIGUOUS_SHOWN 5

typedef char id_buf[sizeof(((struct txbox_record *)0)->id)];

/* ---- JSON columns (auditwrite.c writes them) ---- */

static int hexval(char c)
{
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The C string of an enc_str() value (auditwrite.c; a missing value is NULL); -1 when malformed. */
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
                return audit_unreadable(a, err, "transaction row %lld has a bad %s",
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
        int rc = audit_stmt(a, ST_PATHS_OF, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, rec->seq);
        while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *p = col_text(st, 0);
                int change = txbox_change_parse(col_text(st, 1));
                if (!p || change < 0)
                        return audit_unreadable(a, err, "a path row of transaction '%s' is bad", rec->id);
                if (rec->npaths == cap) {
                        cap = cap ? 2 * cap : 16;
                        rec->paths = xrealloc(rec->paths, cap * sizeof(*rec->paths));
                }
                rec->paths[rec->npaths++] =
                        (struct txbox_path){ .path = xstrdup(p), .change = (enum txbox_change)change };
                rc = SQLITE_OK;
        }
        return rc == SQLITE_DONE ? 0
                                 : audit_db_fail(a, rc, err, "read the paths of transaction '%s'", rec->id);
}

/* A session's savepoint rows (none for other transactions, or in a log made before the
 * table); on failure what was added stays for clearing. */
static int load_savepoints(struct audit *a, struct txbox_record *rec, struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc;

        if (!audit_has_savepoints(a))
                return 0;
        rc = audit_stmt(a, ST_SAVEPOINTS_OF, &st);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, rec->seq);
        while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                _cleanup_strv_ char **argv = NULL;
                int outcome = txbox_sp_outcome_parse(col_text(st, 4));
                if (text_to_argv(col_text(st, 1), &argv) < 0 || outcome < 0)
                        return audit_unreadable(a, err, "a savepoint row of session '%s' is bad", rec->id);
                struct txbox_savepoint *sp = record_add_savepoint(rec, argv);
                sp->n = sqlite3_column_int(st, 0);
                sp->exit_code = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 2);
                sp->signal = sqlite3_column_int(st, 3);
                sp->outcome = (enum txbox_sp_outcome)outcome;
                sp->started_ms = sqlite3_column_int64(st, 5);
                sp->duration_ms = sqlite3_column_int64(st, 6);
                rc = SQLITE_OK;
        }
        return rc == SQLITE_DONE ? 0
                                 : audit_db_fail(a, rc, err, "read the commands of session '%s'", rec->id);
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
        return rc == SQLITE_DONE ? 0 : audit_db_fail(a, rc, err, "read a transaction");
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
                if ((r = load_paths(a, &(*v)[i], err)) >= 0)
                        r = load_savepoints(a, &(*v)[i], err);
        return r;
}

/* Run a TX_COLS query in one read transaction; *out and *n untouched on failure. */
static int read_records(struct audit *a, sqlite3_stmt *st, struct txbox_record **out, size_t *n,
                        struct txbox_error *err)
{
        struct txbox_record *v = NULL;
        size_t nv = 0;
        int r = audit_tx_begin(a, false, err);

        if (r < 0)
                return r;
        r = read_rows(a, st, &v, &nv, err);
        sqlite3_reset(st); /* before COMMIT, which ends the snapshot */
        r = audit_tx_end(a, r, err);
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

/* ---- reads ---- */

/* The record of exactly id, without paths: 1 found, 0 not. */
int audit_get_exact(struct audit *a, const char *id, struct txbox_record *rec,
                    struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = audit_stmt(a, ST_GET_EXACT, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
        if (rc != SQLITE_OK)
                return audit_db_fail(a, rc, err, "look up transaction '%s'", id);
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
        struct binder b = { NULL, audit_stmt(a, ST_IDS_IN_RANGE, &st) };
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
                return audit_db_fail(a, rc, err, "look up transaction '%s'", prefix);
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
        int r = audit_get_exact(a, id, rec, err);

        if (r == 0 && strlen(id) >= ID_PREFIX_MIN) {
                r = unique_prefix(a, id, full, err);
                if (r > 0)
                        r = audit_get_exact(a, full, rec, err);
        }
        if (r == 0)
                return audit_no_such_tx(err, id);
        if (r > 0 && (r = load_paths(a, rec, err)) >= 0)
                r = load_savepoints(a, rec, err);
        return r;
}

int audit_get(struct audit *a, const char *id, struct txbox_record *out, struct txbox_error *err)
{
        CONNECT(a, err);
        struct txbox_record rec = { 0 };
        int r;

        if (!id || !*id)
                return tx_err(err, EINVAL, "no transaction id given: pass an id, or a prefix of at "
                              "least %d characters, from 'txbox log'", ID_PREFIX_MIN);
        r = audit_tx_begin(a, false, err);
        if (r < 0)
                return r;
        r = find_record(a, id, &rec, err);
        r = audit_tx_end(a, r, err);
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
        int rc = audit_stmt(a, ST_LIST, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, limit > 0 ? limit : -1); /* -1: no limit */
        if (rc != SQLITE_OK)
                return audit_db_fail(a, rc, err, "list its transactions");
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
                return audit_db_fail(a, rc, err, "list its transactions");
        return read_records(a, st, out, n, err);
}

int audit_commits_from(struct audit *a, int64_t from, int max, struct txbox_record **out, size_t *n,
                       struct txbox_error *err)
{
        CONNECT(a, err);
        _cleanup_finalize_ sqlite3_stmt *st = NULL;
        int rc = sqlite3_prepare_v2(a->db,
                                    "SELECT " TX_COLS " FROM tx WHERE outcome = 'committed' AND commit_seq >= ?1"
                                    " ORDER BY commit_seq LIMIT ?2",
                                    -1, &st, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, from);
        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int(st, 2, max > 0 ? max : -1);
        if (rc != SQLITE_OK)
                return audit_db_fail(a, rc, err, "list its commits");
        return read_records(a, st, out, n, err);
}

int audit_newest_committed(struct audit *a, struct txbox_record *out, struct txbox_error *err)
{
        CONNECT(a, err);
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        struct txbox_record rec = { 0 };
        int rc = audit_stmt(a, ST_NEWEST_COMMITTED, &st);
        int r;

        if (rc != SQLITE_OK)
                return audit_db_fail(a, rc, err, "look up the newest committed transaction");
        r = audit_tx_begin(a, false, err);
        if (r < 0)
                return r;
        r = read_row(a, st, &rec, err);
        sqlite3_reset(st);
        if (r == 0)
                r = tx_err(err, ENOENT, "no committed transaction in this workspace's log");
        else if (r > 0 && (r = load_paths(a, &rec, err)) >= 0)
                r = load_savepoints(a, &rec, err);
        r = audit_tx_end(a, r, err);
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
        int rc = audit_stmt(a, ST_NEXT_COMMIT_SEQ, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
                return audit_db_fail(a, rc, err, "read the commit sequence");
        *out = sqlite3_column_int64(st, 0);
        return 0;
}

int audit_last_change(struct audit *a, const char *path, enum txbox_change *change, int64_t *ended_ms,
                      int64_t *n_deleted, bool *ran, struct txbox_error *err)
{
        CONNECT(a, err);
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = audit_stmt(a, ST_LAST_CHANGE, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc == SQLITE_DONE)
                return 0;
        if (rc != SQLITE_ROW)
                return audit_db_fail(a, rc, err, "read a path's last change");
        const char *c = (const char *)sqlite3_column_text(st, 0);
        *change = c && !strcmp(c, "added") ? TXBOX_ADDED : c && !strcmp(c, "deleted") ? TXBOX_DELETED : TXBOX_MODIFIED;
        *ended_ms = sqlite3_column_int64(st, 1);
        *n_deleted = sqlite3_column_int64(st, 2);
        *ran = sqlite3_column_type(st, 3) != SQLITE_NULL && sqlite3_column_int64(st, 3) >= 0;
        return 1;
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
        struct binder b = { NULL, audit_stmt(a, which, &st) };
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
        return rc == SQLITE_DONE ? 0 : audit_db_fail(a, rc, err, "look up later changes to '%s'", path);
}

/* How many commits came after commit AFTER, counted up to RECENT_MAX + 1. */
static int later_commits(struct audit *a, int64_t after, int64_t *out, struct txbox_error *err)
{
        _cleanup_reset_ sqlite3_stmt *st = NULL;
        int rc = audit_stmt(a, ST_LATER_COMMITS, &st);

        if (rc == SQLITE_OK)
                rc = sqlite3_bind_int64(st, 1, after);
        if (rc == SQLITE_OK)
                rc = sqlite3_step(st);
        if (rc != SQLITE_ROW)
                return audit_db_fail(a, rc, err, "count the later commits");
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
                        r = overlaps_of(a, (enum st)(plan + (*paths[i].path ? ST_OVERLAP_SUBTREE
                                                                            : ST_OVERLAP_ALL)),
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
        int r = audit_tx_begin(a, false, err);

        if (r < 0)
                return r;
        r = find_overlaps(a, after_commit_seq, paths, npaths, &found, err);
        r = audit_tx_end(a, r, err);
        if (r < 0)
                return r;
        sort_unique(&found);
        for (size_t i = 0; i < found.n; i++)
                strvec_push(out, TAKE_PTR(found.v[i]));
        return (int)found.n;
}

/* ---- the change stream (its table and triggers: audit.c) ---- */

#define CHANGES_QUERY                                                                   \
        "SELECT " TX_COLS ", cseq FROM tx JOIN (SELECT seq AS cseq, tx_seq FROM tx_change" \
        " WHERE seq > ?1 ORDER BY seq LIMIT ?2) ON tx_seq = seq ORDER BY cseq"

int audit_changes(struct audit *a, int64_t since, int limit, struct txbox_record **out, int64_t **seqs,
                  size_t *n, struct txbox_error *err)
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
                return audit_db_fail(a, rc, err, "read its change stream");
        if ((r = audit_tx_begin(a, false, err)) < 0)
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
                if ((r = load_paths(a, &v[i], err)) >= 0)
                        r = load_savepoints(a, &v[i], err);
        sqlite3_reset(st);
        if ((r = audit_tx_end(a, r, err)) < 0) {
                txbox_records_free(v, nv);
                free(cs);
                return r;
        }
        *out = v;
        *seqs = cs;
        *n = nv;
        return 0;
}
