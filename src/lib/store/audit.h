/* The audit store: one SQLite database (WAL) in the state dir.
 *
 * Schema v1:
 *   meta(key TEXT PRIMARY KEY, value TEXT)               -- 'schema_version' = '1'
 *   tx(seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, argv TEXT (JSON array),
 *      cwd TEXT, decision TEXT, rule TEXT, reason TEXT, exit_code INTEGER (NULL when -1),
 *      signal INTEGER (NULL when 0), outcome TEXT, commit_seq INTEGER, started_ms INTEGER,
 *      ended_ms INTEGER, duration_ms INTEGER, n_added INTEGER, n_modified INTEGER,
 *      n_deleted INTEGER, violations TEXT (JSON array of {rule,path,detail}), message TEXT)
 *   path(tx_seq INTEGER REFERENCES tx(seq), path TEXT, change TEXT, PRIMARY KEY(tx_seq, path))
 *   index on path(path)
 */
#ifndef TXBOX_AUDIT_H
#define TXBOX_AUDIT_H

#include "txbox.h"

struct strvec;

struct audit;

/* Open or create the database at path; sets WAL, a busy timeout, foreign keys, and checks
 * integrity cheaply (quick schema read).  A corrupt or foreign file gives -EBADMSG with a
 * message saying which file and what to do. */
int audit_open(const char *path, struct audit **out, struct txbox_error *err);
/* The same, connecting only at the first read or write (a transaction's sandbox starts
 * meanwhile); a bad database is then reported by that first call.  A log file that is no
 * regular file (audit_check_files) is refused at once all the same. */
int audit_open_deferred(const char *path, struct audit **out, struct txbox_error *err);
/* Connect a deferred log now (0 when it is already). */
int audit_connect(struct audit *a, struct txbox_error *err);
/* -EBADF, with a message saying what to do, when the database at path or its -wal or -shm
 * file is there but is no regular file (a FIFO, a symlink, a directory, a device): never
 * opened, so nothing blocks.  Every open checks this first. */
int audit_check_files(const char *path, struct txbox_error *err);
/* Run fn once the log is connected (schema in place), before the first call that needs it
 * goes on; its error is that call's (the state dir checks the log for lost rows: logrepair.c). */
typedef int (*audit_check_fn)(void *ctx, struct audit *a, struct txbox_error *err);
void audit_set_check(struct audit *a, audit_check_fn fn, void *ctx);
/* Put back rows a damaged log lost, in one write transaction that first checks that the
 * log's newest commit_seq is still below floor (else it does nothing: repaired meanwhile):
 * each of recs whose id the log lacks is inserted with its paths; then, while the newest
 * commit_seq is still below floor, one placeholder row at floor (argv "(lost)", message
 * lost_msg) stands for the commits nothing was left of.  *added counts the rows inserted. */
int audit_import(struct audit *a, struct txbox_record *recs, size_t n, int64_t floor, const char *lost_msg,
                 size_t *added, struct txbox_error *err);
/* Has a deferred log connected yet (the first use connects)? */
bool audit_connected(const struct audit *a);
void audit_close(struct audit *a);
/* Checkpoint the WAL when it has grown enough (a thread of its own may call this while the
 * main thread uses the log: the connection is serialized). */
void audit_checkpoint(struct audit *a);

/* Insert a new record; assigns rec->seq.  rec->id must be unique. */
int audit_insert(struct audit *a, struct txbox_record *rec, struct txbox_error *err);
/* Overwrite the row of rec->id with rec's fields and replace its path rows with rec->paths,
 * in one SQLite transaction. */
int audit_update(struct audit *a, const struct txbox_record *rec, struct txbox_error *err);
/* Overwrite the row of rec->id only: its path rows stay as the last audit_update wrote them,
 * which must be rec->paths (the row's counts come from them).  For an outcome that changes
 * after the paths went in: a commit's "committed" after its "committing" rewrote three
 * b-tree pages of identical rows. */
int audit_update_row(struct audit *a, const struct txbox_record *rec, struct txbox_error *err);
/* Load one record (with paths and violations) by exact id or unique prefix (>= 4 chars).
 * -ENOENT when none, -EINVAL (message lists candidates) when ambiguous. */
int audit_get(struct audit *a, const char *id, struct txbox_record *out, struct txbox_error *err);
/* Newest first (by seq); limit <= 0: all.  Records carry their paths and violations. */
int audit_list(struct audit *a, int limit, struct txbox_record **out, size_t *n,
               struct txbox_error *err);
/* Records whose outcome is one of the given (e.g. RUNNING, COMMITTING, UNDOING). */
int audit_list_outcomes(struct audit *a, const enum txbox_outcome *outcomes, size_t noutcomes,
                        struct txbox_record **out, size_t *n, struct txbox_error *err);
/* Committed (not undone) records with commit_seq >= from, oldest commit first, at most max,
 * with their paths (sorted). */
int audit_commits_from(struct audit *a, int64_t from, int max, struct txbox_record **out, size_t *n,
                       struct txbox_error *err);
/* The newest committed (not undone) record that changed something, by commit_seq:
 * -ENOENT when none (a committed no-op is nothing to undo). */
int audit_newest_committed(struct audit *a, struct txbox_record *out, struct txbox_error *err);
/* The next commit sequence number (max(commit_seq)+1). */
int audit_next_commit_seq(struct audit *a, int64_t *out, struct txbox_error *err);
/* The newest committed change of path: what it was, when its transaction ended, how many
 * paths that transaction deleted, and whether it ran a program that exited (ran: false for
 * an agent's edit recorded from its hook, exit code -1, and for a program killed by a
 * signal).  1 when there is one, 0 when the log has none. */
int audit_last_change(struct audit *a, const char *path, enum txbox_change *change, int64_t *ended_ms,
                      int64_t *n_deleted, bool *ran, struct txbox_error *err);
/* Paths of committed (not undone) transactions with commit_seq > after_commit_seq that equal,
 * lie beneath, or lie above any of paths[].  Returned as "path (tx ID)" strings in *out. */
int audit_later_overlaps(struct audit *a, int64_t after_commit_seq, const struct txbox_path *paths,
                         size_t npaths, struct strvec *out, struct txbox_error *err);

/* Records written (inserted or updated) after change number since, oldest change first, at
 * most limit (<= 0: all); (*seqs)[i] is record i's change number.  Free both. */
int audit_changes(struct audit *a, int64_t since, int limit, struct txbox_record **out, int64_t **seqs,
                  size_t *n, struct txbox_error *err);

#endif
