/* Internal view of workspaces and transactions, shared by the txn folder: ws.c (workspace,
 * state dir), sweep.c (the sweeper), tx.c (transactions), commit.c (commit, rollback,
 * decision), session.c, undo.c (undo, recovery), gc.c, logrepair.c, txpolicy.c, query.c. */
#ifndef TXBOX_TX_H
#define TXBOX_TX_H

#include <pthread.h>
#include <stdatomic.h>

#include "base/strvec.h"
#include "store/audit.h"
#include "store/changeset.h"
#include "policy/policy.h"
#include "sandbox/execorigin.h"
#include "sandbox/sandbox.h"
#include "txbox.h"
#include "txn/txstate.h"

/* Transactions a server keeps prepared: two, so that a client that asks again as soon as
 * it has an answer finds a sandbox started an answer earlier, whose init is ready. */
#define WS_PREPARED_MAX 2

/* What the sandbox makes of the home (home.c): from the policy (sandbox:) and txbox's
 * environment (TXBOX_HIDE, TXBOX_CACHE, XDG_CACHE_HOME). */
struct tx_home {
        struct strvec hide;    /* more paths to hide, absolute */
        char *cache_root;      /* the private cache root, or NULL: no caches */
        const char *cache_off; /* why there are none (a constant), or NULL */
        struct strvec caches;  /* cache_list: the policy's cache paths ("~/x") */
        bool cache_list;       /* false: the built-in list */
};

struct txbox_ws {
        char *path;       /* canonical workspace path */
        char *state;      /* canonical state dir */
        char *state_mask; /* what the sandbox must not see (the state dir or its parent) */
        bool no_state;      /* opened TXBOX_OPEN_NOCREATE without a state dir: nothing to read */
        bool state_created; /* this open made the state dir */
        int ws_fd, state_fd, tx_fd, active_fd, lock_fd;
        int trash_fd;              /* state/trash: finished transactions' layers, to remove */
        int settle_fd;             /* state/settle: commits not yet covered by a filesystem sync */
        int mountinfo_fd;          /* /proc/self/mountinfo, for check_submounts */
        bool mounts_checked;       /* no mount inside the workspace at the last look */
        pthread_t sweeper;         /* the row, the checkpoint, then state/trash, beside a program */
        bool sweeping;             /* sweeper was started and not yet joined */
        atomic_bool swept;         /* ... and has finished */
        /* ... and is done with the audit log (sweep_mu guards it; sweep_cv signals it): the
         * trash it may still be emptying while the program's commit goes on. */
        bool sweep_db_done;
        pthread_mutex_t sweep_mu;
        pthread_cond_t sweep_cv;
        struct audit *audit;
        struct policy *policy; /* loaded on first use (txbox_ws_set_policy or the default) */
        /* The process that judges for this workspace (judging.c): forked holding a copy
         * of policy, asked over a socket, forked again after it failed. */
        struct judge_proc *judge;
        char *policy_file;     /* --policy FILE, or NULL */
        char *approver;        /* --approve PROGRAM for "ask" decisions, or NULL */
        struct strvec allowed_effects; /* --allow-effect: rules the user lets break (txbox_ws_allow_effects) */
        txbox_progress_fn progress;
        void *progress_ctx;
        txbox_notice_fn notice; /* warnings for the caller to show (txbox_ws_set_notice) */
        void *notice_ctx;
        char *notice_held; /* one raised before there was a notice function */
        /* A released claim kept for the next one (tx_unclaim): active/.claim-spare-PID,
         * unlocked, or -1. */
        int spare_claim_fd;
        /* Begun, sandbox started, for the next commands (servers); oldest first. */
        struct txbox_tx *prepared[WS_PREPARED_MAX];
        /* A row for the sweeper thread to insert (a one-shot run's: its first use of the
         * log, connection and all, overlaps the program), and how that went. */
        struct txbox_record *log_rec;
        bool log_done;
        int log_r;
        struct txbox_error log_err;
        /* Servers: the user and network namespaces their --net=none sandboxes join. */
        struct sandbox_shared_ns *shared_ns;
        bool shared_ns_tried;
};

struct txbox_tx {
        struct txbox_ws *ws;
        struct txbox_record rec;
        int dir_fd;  /* state/tx/ID */
        int lock_fd; /* state/active/ID, flock'd */
        struct changeset cs;
        enum tx_state state; /* where it is in its life (txstate.h); tx_move moves it */
        int64_t t0_us;
        char *warning; /* a non-fatal problem seen before the run (unmapped owners) */
        struct idmap idmap; /* how ids map into the sandbox */
        int sp;             /* >0: this handle runs savepoint sp of a session */
        char **sp_argv;     /* the savepoint's command */
        int64_t sp_t0_us, sp_started_ms; /* when it began (monotonic, wall clock) */
        int sp_exit, sp_signal;          /* how it ended (txbox_tx_set_result) */
        int64_t begin_seq;  /* the newest commit_seq when the transaction began */
        int64_t begin_ns;   /* the filesystem's clock when it began (fs_now_ns) */
        struct policy_ctx pctx;      /* what relative paths in commands resolve against */
        struct policy_result denied; /* the first exec the policy refused while running */
        bool exec_denied;
        struct exec_tools tools;     /* npm processes seen starting (execorigin.h) */
        char *pctx_cwd;
        bool in_log;                 /* the audit log has its row */
        bool paths_in_log;           /* ... and, in this commit, its paths as rec.paths */
        /* Sealed with its row not written yet: the copy to insert (ws->log_rec), by the
         * thread that runs beside the program (ws_sweep), or by tx_log_flush. */
        struct txbox_record *log_copy;
        struct sandbox *sb;          /* prestarted, waiting for the command */
        struct sandbox_spec spec;    /* sb's (and the run's) spec; strings below */
        char *upper, *work;
        struct tx_home home;
        struct strvec lowers;
        struct txbox_run_opts sb_opts; /* what sb was started with */
};

/* Move NAME in DIRFD (a finished transaction's layers, or its whole directory) into
 * state/trash as AS, to be removed by ws_sweep; removed at once where it cannot move. */
void ws_trash(struct txbox_ws *ws, int dirfd, const char *name, const char *as);
/* Insert LOG (may be NULL) into the audit log, empty state/trash (but for the layers of
 * commits not settled yet) and checkpoint the audit log (audit_checkpoint) in a thread of
 * its own, while a program runs: off the
 * critical path.  ws_sweep_wait joins it: txbox_tx_run does
 * once the program has ended (no audit use of ours overlaps the thread's), and so do every
 * sandbox start (no lock may be held across that clone) and txbox_ws_close. */
void ws_sweep(struct txbox_ws *ws, struct txbox_record *log);
/* The newest commit's sequence number as the last commit left it in state/seq (no SQLite
 * needed); -1 when unknown.  ws_note_commit_seq writes it (under the workspace lock). */
int64_t ws_newest_commit_seq(struct txbox_ws *ws);
void ws_note_commit_seq(struct txbox_ws *ws, int64_t seq);
/* tx/ID/committed holds the commit's sequence number ("commit_seq N\n"); written without a
 * sync (the commit's own covers it).  Reading: 0 when absent, empty (older txbox) or bad. */
int ws_write_commit_marker(int dir_fd, int64_t commit_seq);
int64_t ws_read_commit_marker(int dir_fd);
/* audit_check_fn for the workspace's log (logrepair.c): when the log's newest commit is
 * older than state/seq says, rows were lost (a deleted -wal, a truncated or deleted
 * audit.db): put back every committed transaction the state dir still holds. */
int ws_check_log(void *ws, struct audit *a, struct txbox_error *err);
/* Conflict stamps (docs/DESIGN.md, "Conflicts").  tx_stamp_changes gives STATE_FD/changed a
 * ctime at or after every change made to the workspace so far: a commit, undo or recovery
 * calls it once its renames are done and before its row is written.  tx_begin_stamp is a
 * stamp on the filesystem's clock (touching DIR_FD, on the workspace's filesystem) strictly
 * later than that ctime, waiting out at most one clock tick for it: a transaction that
 * begins after a commit's row begins strictly after the commit's changes, while any change
 * made after it began has a ctime >= the stamp. */
void tx_stamp_changes(int state_fd);
int64_t tx_begin_stamp(int state_fd, int dir_fd);
/* The largest begin file read back (its record holds the command line). */
#define BEGIN_MAX (4u << 20)
/* Parse line 2 of a begin file (the record as it was sealed) into rec; -EBADMSG without. */
int tx_begin_record(const char *begin, struct txbox_record *rec);
/* Is NAME in state/settle an entry of an earlier boot (*id: its transaction)? */
bool ws_is_settle_of_other_boot(const char *name, const char **id);
void ws_sweep_wait(struct txbox_ws *ws);
/* Is trash entry NAME (ID.upper, ID.work) the layer of a commit not settled yet?  It stays
 * until it is (see commit.c). */
bool ws_unsettled_layer(struct txbox_ws *ws, const char *name);
/* Wait until the sweeper is done with the audit log (its row written); it may still be
 * emptying the trash (sweep.c). */
void ws_sweep_db_wait(struct txbox_ws *ws);
/* The user's home directory (absolute), or NULL: the default state dir's root and the
 * sandbox's HOME (ws.c). */
const char *ws_home_dir(void);

void tx_home_config(const char *workspace, const struct policy *pol, struct tx_home *h);
void tx_home_clear(struct tx_home *h);

/* Retention (gc.c): one automatic pass when a commit happened since the last one (or an
 * hour went by), run by the sweeper beside a program; skipped while the workspace lock is
 * taken.  gc_pruned_through_ms: the newest commit time (ms) whose undo data gc pruned. */
void gc_auto(struct txbox_ws *ws);
int64_t gc_pruned_through_ms(struct txbox_ws *ws);
/* Tell the automatic gc pass (gc.c): id, a commit's directory got its marker (under the
 * workspace lock), for the pass to measure; NULL, a directory state/gc lists is about to be
 * changed or removed (an undo, recovery), so that the next pass looks at every directory
 * again (written durably; 0 or -errno). */
int gc_note(struct txbox_ws *ws, const char *id);

/* Edits made outside a transaction (edits.c): a capture in state/edits waits this long for
 * its record; txbox gc removes older ones too (with the trash). */
#define EDITS_TTL_MS (3600ll * 1000)

/* The transactions a server keeps prepared (spares.c): keep n (at most WS_PREPARED_MAX),
 * their sandbox started with opts and their output captured; the oldest (NULL: none);
 * discard them all. */
void ws_prepare_upto(struct txbox_ws *ws, const struct txbox_run_opts *opts, int n);
struct txbox_tx *ws_take_prepared(struct txbox_ws *ws);
void ws_discard_prepared(struct txbox_ws *ws);

/* The state dir txbox would use for workspace ws (canonical) with --state state_opt (NULL:
 * the default), checked to be on its mount and outside it; nothing is created. */
int ws_choose_state(const char *ws, const char *state_opt, char **state, struct txbox_error *err);

/* Serialise commits, undos and recovery on the workspace. */
int ws_lock(struct txbox_ws *ws, struct txbox_error *err);
void ws_unlock(struct txbox_ws *ws);

void tx_record_take_changes(struct txbox_tx *tx);
/* The begin snapshot and the audit row of a begun transaction (txbox_tx_run does it before
 * the program starts; a session does it at once). */
int tx_seal(struct txbox_tx *tx, struct txbox_error *err);
/* Drop a begun transaction that never ran nor reached the log: sandbox, layers and claim. */
void tx_discard(struct txbox_tx *tx);
/* Give a begun, not yet run transaction its command (a prepared one taken for use). */
void tx_set_command(struct txbox_tx *tx, char *const argv[]);
/* Claim state/active/ID (flock'd file) while this process works on the transaction, so that
 * recovery after a crash finds it; returns the lock fd.  -EBUSY when another process has it. */
int tx_claim(struct txbox_ws *ws, const char *id, bool wait, struct txbox_error *err);
/* Release a claim once the transaction is in a final state. */
void tx_unclaim(struct txbox_ws *ws, const char *id, int fd);
/* Remove the claim tx_unclaim kept for the next one (at the workspace's close). */
void ws_drop_spare_claim(struct txbox_ws *ws);
/* The same for tx's own claim (tx->lock_fd), which it no longer holds after. */
void tx_release(struct txbox_tx *tx);
/* Make sure a deferred row (tx->log_copy) is in the log: the sweeper's insert, or one now. */
int tx_log_flush(struct txbox_tx *tx, struct txbox_error *err);

/* Policy (txpolicy.c). */
int ws_policy(struct txbox_ws *ws, const struct policy **out, struct txbox_error *err);
/* The decision of ws's policy on a shell string or an argv, made in ws's judge process so
 * that it fails closed: a judge that crashes, aborts, hangs or fails gives a refusal (rule
 * judgement-failed), and the next decision is made by a new judge (judging.c). */
void ws_decide(struct txbox_ws *ws, const struct policy_ctx *ctx, const char *script, char *const *argv,
               struct policy_result *res);
/* ws's judge is running (forked now if need be: call where no other thread may hold a
 * lock); 0, or -errno when it cannot be started. */
int ws_judge_ready(struct txbox_ws *ws, struct txbox_error *err);
/* The judge's end (txbox_ws_close, a new policy). */
void ws_judge_stop(struct txbox_ws *ws);
/* Called by the supervisor for every execve inside the sandbox (sandbox_spec.exec_check):
 * each decision is made by ws's judge (txpolicy.c). */
bool tx_exec_check(void *ctx, const char *path, char *const argv[], struct exec_caller *caller);
/* Add msg (taken) to the run's warning (txbox_tx_warning). */
void tx_add_warning(struct txbox_tx *tx, char *msg);
int tx_judge_effects(struct txbox_tx *tx, int upper_fd, struct txbox_error *err);
/* Finish a transaction the policy refused before it ran: outcome denied. */
int tx_finish_denied(struct txbox_tx *tx, struct txbox_error *err);

/* Sessions (session.c). */
bool tx_is_session(const struct txbox_tx *tx);
/* The staging directory of savepoint tx->sp while its command runs ("sp/N.new"). */
void tx_session_dir(const struct txbox_tx *tx, char *buf, size_t size);
void tx_session_layers(const struct txbox_tx *tx, char **upper, char **work, struct strvec *lowers);
/* Savepoint tx->sp ends: kept (TXBOX_SP_KEPT), else dropped; the session stays pending, its
 * row lists the command and the net change of the savepoints kept. */
int tx_session_end_savepoint(struct txbox_tx *tx, enum txbox_sp_outcome how, struct txbox_error *err);
/* The net change of the session's savepoints against the workspace, as a commit now would
 * fold them (review: the session's row, show, log). */
int tx_session_net(struct txbox_tx *tx, struct changeset *out, struct txbox_error *err);
/* The same for the session ID whose tx dir is dir_fd (recovery; the caller holds its claim). */
int tx_session_net_at(struct txbox_ws *ws, int dir_fd, const char *id, struct changeset *out,
                      struct txbox_error *err);
/* The regular file rel as a pending session's savepoints show it over the workspace (the
 * session's tx dir, the workspace root), opened; -1 when absent or not a regular file. */
int tx_session_open_file(int dir_fd, int ws_fd, const char *rel);
/* Record the session as pending with a message listing what to do next. */
int tx_session_keep(struct txbox_tx *tx, struct txbox_error *err);
/* That message for pending transaction ID in dir_fd (a session, or one whose fold ended). */
char *tx_session_message(const char *id, int dir_fd);
/* Fold every savepoint into tx/ID/upper (commit of a session). */
int tx_session_fold(struct txbox_tx *tx, struct txbox_error *err);
/* Bring the pending transaction in dir_fd to a whole state (any transaction: a no-op for
 * one that is no session): finish a decided fold or rollback --to, remove every savepoint
 * name that does not count.  fp names the failpoint of its steps.  0 or -errno. */
int tx_session_tidy(int dir_fd, const char *fp);

#endif
