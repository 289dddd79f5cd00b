/* The audit log cannot silently shrink: the state dir knows which commits there were.
 *
 * state/seq holds the newest commit's sequence number, written by every commit after its
 * row, and never ahead of the log (ws.c): a log whose newest commit_seq is below it has lost
 * rows (its -wal deleted, audit.db truncated or deleted and made anew).  Each commit that
 * changed something keeps tx/ID/ (until txbox gc prunes it) with what its row said:
 *   begin       line 2: the record as the run began (command line, cwd, decision, start)
 *   journal     the operations, hence the paths and how each changed
 *   committed   marker, with the commit's sequence number; undone: txbox undo put it back
 * so the first connection to such a log puts those rows back (audit_import), and one
 * placeholder row stands for the commits nothing was left of (no-op commits, undo data
 * pruned).  Nothing in the state dir is trusted: a file that does not parse gives no row
 * (the placeholder then counts it among the lost). */
#define _GNU_SOURCE
#include "txn/tx.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>

#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fileio.h"
#include "base/mem.h"
#include "base/trace.h"
#include "store/journal.h"
#include "store/record.h"
#include "txbox.h"

#define MARKER_MAX 64

int ws_write_commit_marker(int dir_fd, int64_t commit_seq)
{
        char buf[48];
        int n = snprintf(buf, sizeof(buf), "commit_seq %lld\n", (long long)commit_seq);
        return write_file_atomic_at(dir_fd, "committed", buf, (size_t)n, false);
}

int64_t ws_read_commit_marker(int dir_fd)
{
        _cleanup_free_ char *buf = NULL;
        long long v;
        char nl;

        if (read_file_at(dir_fd, "committed", MARKER_MAX, &buf, NULL) < 0 ||
            sscanf(buf, "commit_seq %lld%c", &v, &nl) != 2 || nl != '\n' || v <= 0)
                return 0;
        return v;
}

static bool present(int dir_fd, const char *name, struct stat *st)
{
        struct stat tmp;
        return fstatat(dir_fd, name, st ? st : &tmp, AT_SYMLINK_NOFOLLOW) == 0;
}

/* A transaction id as txbox makes them: lowercase hex, and short. */
static bool tx_id_like(const char *name)
{
        size_t n = strlen(name);
        return n >= 4 && n < sizeof(((struct txbox_record *)0)->id) && strspn(name, "0123456789abcdef") == n;
}

static int cmp_path(const void *x, const void *y)
{
        return strcmp(((const struct txbox_path *)x)->path, ((const struct txbox_path *)y)->path);
}

/* The paths of a journal's operations, sorted, each once; -1 when it does not parse. */
static int journal_paths(int dir_fd, struct txbox_record *rec)
{
        struct cs_op *ops = NULL;
        size_t n = 0, k = 0;
        struct txbox_error e;

        if (journal_read(dir_fd, "journal", &ops, &n, &e) < 0)
                return -1;
        struct txbox_path *p = n ? xcalloc(n, sizeof(*p)) : NULL;
        for (size_t i = 0; i < n; i++) {
                enum txbox_change c = ops[i].kind != CS_OP_SWAP ? TXBOX_MODIFIED
                                    : !ops[i].has_new        ? TXBOX_DELETED
                                    : !ops[i].has_old        ? TXBOX_ADDED
                                                             : TXBOX_MODIFIED;
                p[i] = (struct txbox_path){ .path = ops[i].path, .change = c };
        }
        qsort(p, n, sizeof(*p), cmp_path);
        for (size_t i = 0; i < n; i++)
                if (!k || strcmp(p[k - 1].path, p[i].path))
                        p[k++] = p[i];
        record_set_changes(rec, p, k, NULL, 0);
        free(p);
        journal_ops_free(ops, n);
        return 0;
}

/* The row of committed transaction tx/ID as far as its directory tells; false when it
 * holds no commit (running, pending, rolled back) or does not parse. */
static bool rebuild_one(struct txbox_ws *ws, const char *id, struct txbox_record *rec)
{
        _cleanup_close_ int dir = openat(ws->tx_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_free_ char *begin = NULL;
        struct stat mark;
        bool committed, decided;

        memset(rec, 0, sizeof(*rec));
        rec->exit_code = -1;
        if (dir < 0)
                return false;
        committed = present(dir, "committed", &mark);
        /* A journal without the marker: a commit cut short, decided once its journal was
         * durable; logged as committing, recovery completes it (or reverts a "revert"). */
        decided = present(dir, "journal", NULL) || present(dir, "revert", NULL);
        if (!committed && !decided)
                return false;
        snprintf(rec->id, sizeof(rec->id), "%s", id);
        if (read_file_at(dir, "begin", BEGIN_MAX, &begin, NULL) < 0 || tx_begin_record(begin, rec) < 0) {
                txbox_record_clear(rec);
                memset(rec, 0, sizeof(*rec));
                snprintf(rec->id, sizeof(rec->id), "%s", id);
                rec->exit_code = -1;
                rec->argv = xcalloc(2, sizeof(char *));
                rec->argv[0] = xstrdup("(unknown)");
                rec->decision = xstrdup("allow");
        }
        if (present(dir, "journal", NULL) && journal_paths(dir, rec) < 0) {
                txbox_record_clear(rec);
                return false;
        }
        rec->outcome = !committed                      ? TXBOX_COMMITTING
                     : present(dir, "undone", NULL) ? TXBOX_UNDONE
                                                    : TXBOX_COMMITTED;
        rec->commit_seq = committed ? ws_read_commit_marker(dir) : 0;
        rec->ended_ms = committed ? (int64_t)mark.st_mtim.tv_sec * 1000 + mark.st_mtim.tv_nsec / 1000000
                                  : now_ms();
        if (!rec->started_ms)
                rec->started_ms = rec->ended_ms;
        rec->duration_ms = rec->ended_ms > rec->started_ms ? rec->ended_ms - rec->started_ms : 0;
        free(rec->message);
        rec->message = xstrdup(committed && !rec->commit_seq
                                       ? "rebuilt from the state dir after the audit log lost its row; its "
                                         "place in the commit order is unknown (its marker predates commit "
                                         "numbers)"
                                       : "rebuilt from the state dir after the audit log lost its row");
        return true;
}

/* Commit order: by number, those without one (older markers) first, by time. */
static int cmp_commit(const void *x, const void *y)
{
        const struct txbox_record *a = x, *b = y;
        if (a->commit_seq != b->commit_seq)
                return a->commit_seq < b->commit_seq ? -1 : 1;
        return a->ended_ms < b->ended_ms ? -1 : a->ended_ms > b->ended_ms;
}

int ws_check_log(void *ctx, struct audit *a, struct txbox_error *err)
{
        struct txbox_ws *ws = ctx;
        int64_t floor = ws_newest_commit_seq(ws), next;
        struct txbox_record *recs = NULL;
        size_t n = 0, cap = 0, added = 0;
        DIR *d;
        struct dirent *de;
        int r;

        if (floor <= 0)
                return 0;
        if ((r = audit_next_commit_seq(a, &next, err)) < 0 || next > floor)
                return r;
        trace_mark("audit log behind state/seq: rebuilding");
        if (!(d = dir_stream(ws->tx_fd)))
                return tx_err(err, errno, "the audit log '%s/audit.db' lost the rows of commits up to #%lld, "
                                          "and '%s/tx' cannot be read to rebuild them: %s",
                              ws->state, (long long)floor, ws->state, strerror(errno));
        while ((de = readdir(d))) {
                if (!tx_id_like(de->d_name))
                        continue;
                if (n == cap) {
                        cap = cap ? 2 * cap : 16;
                        recs = xrealloc(recs, cap * sizeof(*recs));
                }
                if (rebuild_one(ws, de->d_name, &recs[n]))
                        n++;
        }
        closedir(d);
        if (n)
                qsort(recs, n, sizeof(*recs), cmp_commit);
        _cleanup_free_ char *msg = xasprintf(
                "placeholder: the audit log lost rows and the state dir kept nothing of some commits "
                "(commits that changed nothing, undo data pruned by txbox gc): their history is gone");
        r = audit_import(a, recs, n, floor, msg, &added, err);
        txbox_records_free(recs, n);
        if (r < 0)
                return tx_err_wrap(err, "rebuild the audit log's lost rows from the state dir");
        if (added) {
                char *note = xasprintf(
                        "the audit log '%s/audit.db' had lost the rows of commits up to #%lld (a deleted "
                        "-wal, a truncated or new audit.db): %zu rows were put back from the state dir "
                        "('txbox log' shows them)",
                        ws->state, (long long)floor, added);
                if (ws->notice) {
                        ws->notice(ws->notice_ctx, note);
                        free(note);
                } else {
                        free(ws->notice_held);
                        ws->notice_held = note; /* for txbox_ws_set_notice */
                }
        }
        return 0;
}
