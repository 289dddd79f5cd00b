/* txbox: every command an agent runs becomes a transaction on its workspace.
 *
 * Lifecycle of one transaction:
 *
 *   txbox_ws_open()          open the workspace, its state dir and audit store;
 *                            recovers interrupted commits when asked to
 *   txbox_tx_begin()         allocate a transaction: tx dir, upper/work layers, audit row
 *   txbox_tx_run()           run a program in the sandbox on an overlay of the workspace
 *   txbox_tx_evaluate()      walk the upper layer: what changed, which effect rules broke
 *   txbox_tx_commit()        apply the changes atomically and crash-safe (journal + renames)
 *   txbox_tx_rollback()      or drop them
 *   txbox_tx_free()          release the handle (a pending transaction stays on disk)
 *   txbox_ws_close()
 *
 * Later: txbox_undo() puts a committed transaction's originals back; txbox_recover() brings
 * every interrupted transaction to a whole state.
 *
 * Errors: functions return >= 0 on success and -errno on failure, and fill the optional
 * struct txbox_error with a message naming the path or value at fault.  The library never
 * prints and never exits.
 */
#ifndef TXBOX_H
#define TXBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TXBOX_API __attribute__((visibility("default")))

#define TXBOX_VERSION "0.1.0"

struct txbox_error {
        int code;        /* positive errno */
        char msg[1024];  /* one line, no trailing newline */
};

/* Exit statuses, as docs/CONTRACT.md defines them.  txbox run and sh end with the program's
 * own status, 128+N when a signal N killed it, or one of 122 to 126 when txbox decided the
 * outcome; the other verbs end with 0, REFUSED or USAGE (TXBOX for an unopenable workspace).
 * 126 and 127 are also the shell's "cannot execute" and "not found", which the sandbox
 * reports for a program it could not exec: only txbox's "txbox:" line tells a 126 from the
 * policy from a 126 of the shell. */
enum txbox_exit {
        TXBOX_EXIT_REFUSED = 1,    /* a verb could not do what was asked (no such tx, undo refused) */
        TXBOX_EXIT_USAGE = 2,      /* bad usage, unknown verb or global option */
        TXBOX_EXIT_CONFLICT = 122, /* exited 0, but a path it wrote changed meanwhile; rolled back */
        TXBOX_EXIT_EFFECT = 123,   /* exited 0 but broke an effect rule (or exec was refused); rolled back */
        TXBOX_EXIT_TIMEOUT = 124,  /* killed by --timeout; rolled back */
        TXBOX_EXIT_TXBOX = 125,    /* txbox itself failed (usage, workspace, sandbox); nothing changed */
        TXBOX_EXIT_DENIED = 126,   /* the policy refused it before it started; nothing ran */
        TXBOX_EXIT_NOEXEC = 126,   /* the shell's: found but could not be executed */
        TXBOX_EXIT_NOTFOUND = 127, /* the shell's: command not found */
        TXBOX_EXIT_SIGNAL = 128,   /* 128 + N: killed by signal N */
};

struct txbox_ws;
struct txbox_tx;
struct txbox_watch;

enum txbox_outcome {
        TXBOX_RUNNING = 0,
        TXBOX_PENDING,
        TXBOX_COMMITTING,
        TXBOX_COMMITTED,
        TXBOX_ROLLED_BACK,
        TXBOX_DENIED,
        TXBOX_UNDOING,
        TXBOX_UNDONE,
};

enum txbox_change {
        TXBOX_ADDED = 0,
        TXBOX_MODIFIED,
        TXBOX_DELETED,
};

struct txbox_path {
        char *path; /* relative to the workspace, no leading slash */
        enum txbox_change change;
};

struct txbox_violation {
        char *rule;
        char *path;
        char *detail;
};

/* What became of one command of a session (txbox run --tx). */
enum txbox_sp_outcome {
        TXBOX_SP_KEPT = 0,   /* it succeeded: its changes are part of the session */
        TXBOX_SP_DROPPED,    /* it failed (or was discarded): its changes were dropped at once */
        TXBOX_SP_DENIED,     /* the policy refused it: it never ran */
        TXBOX_SP_ROLLED_BACK, /* kept, then dropped by txbox rollback --to */
};

struct txbox_savepoint {
        int n;              /* the savepoint's number when it ran (1, 2, ...) */
        char **argv;        /* its command, NULL-terminated */
        int exit_code;      /* -1: none */
        int signal;         /* 0: none */
        enum txbox_sp_outcome outcome;
        int64_t started_ms, duration_ms;
};

/* The record of one transaction: what the audit store keeps and what JSON shows. */
struct txbox_record {
        char id[32];
        int64_t seq;        /* begin order, from the audit store */
        int64_t commit_seq; /* commit order, 0 when never committed */
        char **argv;        /* NULL-terminated */
        char *cwd;
        char *decision; /* "allow" | "deny" */
        char *rule;     /* NULL when no rule decided */
        char *reason;   /* NULL when no rule decided */
        int exit_code;  /* -1: none (did not exit normally or did not run) */
        int signal;     /* 0: none */
        enum txbox_outcome outcome;
        struct txbox_path *paths;
        size_t npaths;
        struct txbox_violation *violations;
        size_t nviolations;
        int64_t started_ms; /* unix time, milliseconds */
        int64_t ended_ms;
        int64_t duration_ms;
        char *message; /* why txbox decided what it did; NULL when nothing to say */
        /* Environment variables withheld from the program because their names look secret,
         * comma-separated; NULL when none.  In the run's report only (not in the audit log). */
        char *env_dropped;
        /* --net=allow: the proxy's log of attempts, comma-separated; NULL when none.  In the
         * run's report only. */
        char *net_log;
        /* A session's commands, in the order they ran (none for other transactions). */
        struct txbox_savepoint *savepoints;
        size_t nsavepoints;
};

enum txbox_commit_mode {
        TXBOX_COMMIT_AUTO = 0,
        TXBOX_COMMIT_KEEP,
        TXBOX_COMMIT_DISCARD,
};

enum txbox_net_mode {
        TXBOX_NET_NONE = 0, /* an empty network namespace: no interface up */
        TXBOX_NET_LOOPBACK, /* an own network namespace with its loopback up */
        TXBOX_NET_HOST,     /* the host's network */
        TXBOX_NET_ALLOW,    /* own loopback and an HTTP(S) proxy that admits listed hosts only */
};

/* Resource limits of one transaction; 0 in a field picks the default (docs/SECURITY.md). */
struct txbox_limits {
        uint64_t procs;     /* processes and threads at once (default 1024) */
        uint64_t memory;    /* bytes: the sandbox's total (processes, /tmp, /dev/shm, memfds; default
                             * half the RAM) */
        uint64_t cpu_s;     /* CPU seconds per process (default none: --timeout bounds the wall time) */
        uint64_t disk;      /* bytes the transaction holds on the workspace's file system: upper and work
                             * layers and deleted files still open (default min(10 GiB, half the free
                             * space)) */
        uint64_t files;     /* files written: entries of the upper layer and deleted files still open
                             * (default min(1,000,000, half the free inodes)) */
        uint64_t open_files; /* open files per process (default 4096) */
        uint64_t cpu_milli; /* CPU bandwidth in thousandths of a CPU (cgroup cpu.max); 0: none */
};

/* Check one entry of --net=allow (NAME, *.NAME, NAME:PORT, an address, private:NAME; see
 * docs/SECURITY.md): 0, or -EINVAL with err saying what is wrong. */
TXBOX_API int txbox_net_allow_check(const char *entry, struct txbox_error *err);
/* True when this process runs inside a txbox sandbox (the mark txbox's init leaves in the
 * sandbox's read-only /dev); workspace (may be NULL) gets the workspace it runs on. */
TXBOX_API bool txbox_inside_sandbox(char *workspace, size_t size);

struct txbox_run_opts {
        enum txbox_net_mode net;
        char *const *net_allow; /* TXBOX_NET_ALLOW: entries (txbox_net_allow_check), NULL-terminated */
        double timeout_s; /* 0: none */
        const char *cwd;  /* absolute; NULL: the workspace root */
        struct txbox_limits limits;
        /* Environment variables passed although their names look secret (--env NAME);
         * NULL-terminated, may be NULL. */
        const char *const *env_keep;
        /* Let the program connect to every unix socket (--allow-unix-sockets): pathname
         * sockets on the read-only host filesystem become reachable.  Without it only the
         * sandbox's own are (in its /tmp and /dev/shm; docs/SECURITY.md, "Connections"). */
        bool allow_unix_sockets;
        /* The program's stdin, stdout and stderr: when stdio_redirect, these descriptors
         * instead of the caller's (the MCP server and the agent loop capture output). */
        bool stdio_redirect;
        int stdio[3];
        /* Servers: watched while the program runs (NULL: nothing watched). */
        struct txbox_watch *watch;
};

/* What a server watches while a program runs (the MCP server: its client's messages).
 * Whenever fd has one of events (or an error or hang-up), fn is called with what poll(2)
 * returned; it returns 0 to go on watching (it may change fd and events, fd -1 to stop)
 * or 1 to cancel the run: the program is killed, the run result says cancelled, and the
 * transaction is rolled back whatever the commit mode.  While a watch is set, SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT cancel the run the same way instead of being forwarded to the
 * program (cancel_signal says which). */
struct txbox_watch {
        int fd;
        short events;
        int (*fn)(struct txbox_watch *w, short revents);
};

/* What txbox_command_run has reached, told to struct txbox_command's step as it happens.
 * msg, when not NULL, is the one-line reason (the "txbox:" line of txbox run); it lives
 * until the callback returns.  A committed command: BEGUN, RAN, FINISHED; a refused one:
 * BEGUN, REFUSED; one txbox could not check or run: BEGUN, FAILED (rolled back).  A WARNING
 * (txbox_tx_warning) comes right before RAN. */
enum txbox_step {
        TXBOX_STEP_BEGUN,    /* the transaction exists (begun, or the session's savepoint) */
        TXBOX_STEP_REFUSED,  /* the policy refused it; msg says why; nothing ran */
        TXBOX_STEP_FAILED,   /* the policy could not be loaded or the program not run (msg) */
        TXBOX_STEP_WARNING,  /* a non-fatal problem of the run (msg) */
        TXBOX_STEP_RAN,      /* the program ended; msg when it could not be executed */
        TXBOX_STEP_FINISHED, /* evaluated, then committed, kept or rolled back; msg: why, or NULL */
};

/* One command as one transaction: the one driver of begin -> prestart -> check -> run ->
 * finish, shared by the MCP server, the agent loop and txbox run/sh. */
struct txbox_command {
        const char *shell;   /* a shell string the policy judges, run as /bin/sh -c SHELL ... */
        char *const *argv;   /* ... or this argv (with shell too: argv runs, shell is judged) */
        const char *session; /* add to this session as a savepoint, or NULL */
        const char *cwd;     /* where it starts; NULL: the workspace root */
        enum txbox_commit_mode mode;
        /* net, timeout, limits, env; stdio is set by txbox_command_run unless own_stdio */
        struct txbox_run_opts opts;
        size_t output_cap;   /* bytes of stdout and of stderr kept (0: 64 KiB) */
        /* Servers: once this command's program has ended, begin the next transaction and
         * start its sandbox, so that the next command only starts its program.  The
         * prepared one is dropped by txbox_ws_close. */
        bool prepare_next;
        /* txbox run: the program gets the stdio opts give it (the caller's own, or
         * opts.stdio with stdio_redirect) instead of an empty stdin and captured output
         * (res->out and res->err are then ""). */
        bool own_stdio;
        /* txbox run: the record keeps the caller's directory (where txbox was started) as
         * its cwd, also when the program starts elsewhere. */
        bool caller_cwd;
        /* Called at every step (NULL: not told); ctx is passed on. */
        void (*step)(void *ctx, enum txbox_step step, const char *msg);
        void *ctx;
};

struct txbox_command_result {
        struct txbox_record rec; /* the transaction's record (clear with txbox_record_clear) */
        int status;              /* the exit status txbox run would return (docs/CONTRACT.md) */
        char *why;               /* the "txbox:" line for a non-zero outcome, or NULL */
        char *out, *err;         /* captured stdout and stderr, NUL-terminated */
        bool out_truncated, err_truncated;
        bool cancelled;          /* its watch or a signal cancelled it (rolled back) */
        int cancel_signal;       /* the signal that did, or 0 */
};

/* Run one command as one transaction (policy check, sandbox, evaluate, commit or roll back)
 * with stdin empty and stdout/stderr captured (unless own_stdio).  Returns 0 when a decision
 * was reached (see res->status, 125 included), -errno only for failures before a
 * transaction existed (then no step is told). */
TXBOX_API int txbox_command_run(struct txbox_ws *ws, const struct txbox_command *cmd,
                                struct txbox_command_result *res, struct txbox_error *err);
TXBOX_API void txbox_command_result_clear(struct txbox_command_result *res);

/* What txbox_tx_run() saw. */
struct txbox_run_result {
        int exit_code;  /* -1 when killed by a signal or never started */
        int signal;     /* 0 when exited */
        bool timed_out;
        bool exec_failed; /* the program could not be executed (exit_code 126/127) */
        /* Names of environment variables withheld because they look secret, comma-separated
         * ("" when none; ends in ",..." when truncated). */
        char env_dropped[1024];
        /* The resource limit that ended the program: "memory", "disk", "files" or "" (none). */
        char limit_hit[16];
        /* What was measured against that limit and by which mechanism, one line ("" when none). */
        char limit_detail[256];
        int landlock_abi; /* the Landlock ABI that confined the program; 0: not available */
        /* --net=allow: every attempt through the proxy ("allowed CONNECT host:443", ...). */
        char net_log[1024];
        /* Processes still running when the program ended (background jobs, servers), killed
         * with the sandbox: "COMMAND (pid N); ..." ("" when none).  The command lines are the
         * program's bytes: escape them before printing. */
        char killed[400];
        /* The run's watch (or a termination signal, then cancel_signal) cancelled it. */
        bool cancelled;
        int cancel_signal;
        /* connect()s to unix sockets outside the sandbox (the host's), refused with EACCES:
         * how many, and the first one's path as the program named it ("" when none). */
        unsigned unix_refused;
        char unix_refused_path[112];
};

/* Flags for txbox_ws_open(). */
#define TXBOX_OPEN_RECOVER 0x1u /* recover interrupted transactions first */
#define TXBOX_OPEN_DEFER_LOG 0x2u /* open the audit log at its first use, not now */
/* Read-only use (log, show, diff, report ...): a workspace without a state dir yet opens
 * empty, and nothing is created; its log lists nothing (txbox_ws_has_state says which). */
#define TXBOX_OPEN_NOCREATE 0x4u

/* How txbox_ws_discover found the workspace. */
enum txbox_ws_found {
        TXBOX_WS_MARK = 0, /* the nearest directory holding .txbox, .git or .claude */
        TXBOX_WS_STATE,    /* the nearest directory that already has a state dir */
        TXBOX_WS_CWD,      /* neither up to where the search stops: the current directory */
};

struct txbox_ws_discovery {
        char *path;                /* canonical (malloc'd; free it) */
        enum txbox_ws_found found;
        char mark[16];             /* TXBOX_WS_MARK: ".txbox", ".git" or ".claude" */
        /* Where the search stopped without finding one (TXBOX_WS_CWD): "/" (the root),
         * "$HOME" (the home directory, never a workspace by discovery) or "mount" (a file
         * system boundary at stop_dir, crossed only with TXBOX_DISCOVERY_ACROSS_FILESYSTEM). */
        const char *stopped;
        char *stop_dir;            /* the last directory looked at (malloc'd or NULL) */
};

/* Find the workspace for a command started in the current directory, as git finds its
 * repository: the nearest directory, from the current one up, that holds .txbox, .git (a
 * directory or a file: worktrees, submodules) or .claude, or that already has a state dir
 * (state_dir NULL: the default mapping); the home directory and what is above it are not
 * searched, nor across a file system boundary (unless TXBOX_DISCOVERY_ACROSS_FILESYSTEM=1);
 * else the current directory.  Paths are physical (symlinks resolved, as getcwd(3) gives
 * them).  Fails only when the current directory cannot be found. */
TXBOX_API int txbox_ws_discover(const char *state_dir, struct txbox_ws_discovery *out, struct txbox_error *err);
TXBOX_API void txbox_ws_discovery_free(struct txbox_ws_discovery *d);

/* Open a workspace.  state_dir NULL picks the default (on the workspace's filesystem,
 * outside the workspace).  Fails when the workspace is missing, the state dir is on
 * another filesystem or the audit store is unusable. */
TXBOX_API int txbox_ws_open(const char *workspace, const char *state_dir, unsigned flags,
                            struct txbox_ws **out, struct txbox_error *err);
TXBOX_API void txbox_ws_close(struct txbox_ws *ws);
/* Absolute, canonical paths of the workspace and the state dir. */
TXBOX_API const char *txbox_ws_path(const struct txbox_ws *ws);
TXBOX_API const char *txbox_ws_state_path(const struct txbox_ws *ws);
/* False for a workspace opened with TXBOX_OPEN_NOCREATE that has no state dir (no
 * transaction ever ran there); true once this open created it or found it. */
TXBOX_API bool txbox_ws_has_state(const struct txbox_ws *ws);
/* True when this open made the state dir (the workspace's first transaction). */
TXBOX_API bool txbox_ws_state_created(const struct txbox_ws *ws);

/* Use this policy file instead of WORKSPACE/.txbox/policy or the built-in default.  The
 * policy is loaded (and its errors reported) on first use. */
TXBOX_API void txbox_ws_set_policy(struct txbox_ws *ws, const char *file);

/* Called while a commit or undo that has run for over a second moves paths: what is
 * "committing" or "undoing", done of total operations; once more with done == total. */
typedef void (*txbox_progress_fn)(void *ctx, const char *what, size_t done, size_t total);
TXBOX_API void txbox_ws_set_progress(struct txbox_ws *ws, txbox_progress_fn fn, void *ctx);

/* Called with a warning the caller should show (an audit log rebuilt after it lost rows); it
 * may come from a thread of the library's.  One raised before it is set (while
 * txbox_ws_open read the log) is passed to it at once; without one it is only in the log. */
typedef void (*txbox_notice_fn)(void *ctx, const char *msg);
TXBOX_API void txbox_ws_set_notice(struct txbox_ws *ws, txbox_notice_fn fn, void *ctx);

/* Put the policy's "ask" decisions to PROGRAM (NULL: refuse them, as headless use must). */
TXBOX_API void txbox_ws_set_approver(struct txbox_ws *ws, const char *program);

/* Start a transaction for argv (recorded as given). */
TXBOX_API int txbox_tx_begin(struct txbox_ws *ws, char *const argv[], struct txbox_tx **out,
                             struct txbox_error *err);
/* Load a pending transaction by id or unique id prefix, to commit or roll it back. */
TXBOX_API int txbox_tx_load(struct txbox_ws *ws, const char *id, struct txbox_tx **out,
                            struct txbox_error *err);
/* The policy's decision before the run: on the shell string when script is non-NULL (txbox
 * sh -c), else on argv.  Returns 1 when the command may run, 0 when it was denied (the
 * transaction is then finished as denied: nothing ran, exit status 126, the reason in the
 * record's message), -errno when the policy could not be loaded. */
TXBOX_API int txbox_tx_check_policy(struct txbox_tx *tx, const char *script, const char *cwd,
                                    struct txbox_error *err);
/* Optional, right after txbox_tx_begin: start the sandbox (namespaces, mounts) now, so that
 * it gets ready while the caller checks the policy; txbox_tx_run with the same options then
 * only starts the program (with other options it starts afresh).  Loads the workspace's
 * policy.  A sandbox that cannot start is reported by txbox_tx_run. */
TXBOX_API void txbox_tx_prestart(struct txbox_tx *tx, const struct txbox_run_opts *opts);
/* Run argv in the sandbox; blocks until the program and all its descendants are gone.  Every
 * exec inside is checked against the policy too: a refused one fails with EPERM and the
 * transaction is rolled back with the rule as a violation. */
TXBOX_API int txbox_tx_run(struct txbox_tx *tx, const struct txbox_run_opts *opts,
                           struct txbox_run_result *res, struct txbox_error *err);
/* Compute the changeset and effect-rule violations; fills the record's paths and
 * violations.  Returns the number of violations. */
TXBOX_API int txbox_tx_evaluate(struct txbox_tx *tx, struct txbox_error *err);
/* Apply the changes to the live workspace.  Refuses (-EPERM) when violations exist. */
TXBOX_API int txbox_tx_commit(struct txbox_tx *tx, struct txbox_error *err);
/* Drop the changes; message (may be NULL) says why, for the audit log. */
TXBOX_API int txbox_tx_rollback(struct txbox_tx *tx, const char *message, struct txbox_error *err);
/* Give up on a run that could not take place: roll the transaction back, or for a session's
 * savepoint drop only that savepoint. */
TXBOX_API int txbox_tx_abort(struct txbox_tx *tx, const char *message, struct txbox_error *err);
/* Leave the transaction pending on disk (commit or roll back later by id). */
TXBOX_API int txbox_tx_keep(struct txbox_tx *tx, struct txbox_error *err);
/* Record the program's exit status before commit/rollback/keep. */
TXBOX_API void txbox_tx_set_result(struct txbox_tx *tx, const struct txbox_run_result *res);
/* The whole decision after a run, as docs/CONTRACT.md says: evaluate, then commit (auto and the
 * program exited 0 with no violation), keep, or roll back.  *status receives the exit status
 * txbox run must return (the program's, 122-126, or 128+N).  When txbox decided a non-zero
 * outcome, *why (may be NULL) points at a one-line reason owned by the record. */
TXBOX_API int txbox_tx_finish(struct txbox_tx *tx, enum txbox_commit_mode mode,
                              const struct txbox_run_result *res, int *status, const char **why,
                              struct txbox_error *err);
TXBOX_API const struct txbox_record *txbox_tx_record(const struct txbox_tx *tx);
/* A non-fatal problem found by txbox_tx_run (e.g. the program failed and workspace files
 * are owned by ids the sandbox cannot map), or NULL. */
TXBOX_API const char *txbox_tx_warning(const struct txbox_tx *tx);
TXBOX_API void txbox_tx_free(struct txbox_tx *tx);

/* Revert committed transaction id (NULL: the newest committed one).  Refuses with
 * -EBUSY, naming the paths in err, when a later change touched the same paths.
 * out (may be NULL) receives the updated record. */
TXBOX_API int txbox_undo(struct txbox_ws *ws, const char *id, struct txbox_record *out,
                         struct txbox_error *err);

/* Edits made outside a transaction (an agent's own edit tools: Claude Code's Edit and Write,
 * Codex's apply_patch, Gemini CLI's write_file and replace), recorded as committed
 * transactions with undo data by the agent's hooks (txbox hook, docs/INTEGRATIONS.md):
 *   txbox_edit_capture  before the edit: keeps what paths (relative to the workspace,
 *                       NULL-terminated, at most 256) hold now, under key (any string: the
 *                       agent's session and tool call), with argv as the record's command
 *                       line; reads the workspace only.  A capture whose edit never comes is
 *                       dropped after an hour, or by the next capture under the same key.
 *   txbox_edit_record   after it: commits what changed since as a transaction (undo puts the
 *                       originals back, their very inodes where it can); out (may be NULL)
 *                       receives its record.  Returns 0 when recorded, 1 when nothing changed
 *                       (nothing recorded), -ENOENT without a capture, -ESTALE when a
 *                       transaction committed one of the paths in between, -EFBIG when an
 *                       original was not kept (over 64 MiB), other -errno on failure; the
 *                       capture is gone after any answer but -ENOENT.
 *   txbox_edit_drop     forget the capture under key (the edit was refused after it). */
TXBOX_API int txbox_edit_capture(struct txbox_ws *ws, const char *key, char *const argv[], char *const paths[],
                                 struct txbox_error *err);
TXBOX_API int txbox_edit_record(struct txbox_ws *ws, const char *key, struct txbox_record *out,
                                struct txbox_error *err);
TXBOX_API int txbox_edit_drop(struct txbox_ws *ws, const char *key);

/* Sessions: one pending transaction of several commands, one savepoint each (stacked
 * overlay layers), committed or rolled back at once.  txbox_session_savepoint returns a
 * handle to run and finish like any transaction: its changes stay in the session (kept when
 * the command succeeds, dropped when not); commit and rollback take the session's id. */
TXBOX_API int txbox_session_begin(struct txbox_ws *ws, struct txbox_record *out, struct txbox_error *err);
TXBOX_API int txbox_session_savepoint(struct txbox_ws *ws, const char *id, char *const argv[],
                                      struct txbox_tx **out, struct txbox_error *err);
/* Drop savepoints above n (0: all); the session stays open. */
TXBOX_API int txbox_session_rollback_to(struct txbox_ws *ws, const char *id, int n, struct txbox_error *err);

struct txbox_recover_stats {
        unsigned rolled_back; /* interrupted commits reverted, dead runs discarded */
        unsigned completed;   /* commits or undos found finished, audit brought up to date */
};
TXBOX_API int txbox_recover(struct txbox_ws *ws, struct txbox_recover_stats *stats,
                            struct txbox_error *err);
/* txbox_recover, then every row of the log still running, committing or undoing whose
 * transaction no live process owns (its claim in the state dir's active/ is gone, or held
 * by nobody: a txbox process that died, or could not write the row's end on a full disk)
 * is settled the same way.  It reads the whole log: txbox recover does this, not every verb. */
TXBOX_API int txbox_recover_log(struct txbox_ws *ws, struct txbox_recover_stats *stats,
                                struct txbox_error *err);

/* Retention of what a long-lived workspace keeps for undo (txbox gc).  Every committed
 * transaction that changed something keeps its originals in the state dir, so that txbox
 * undo can put them back; the retention says for how many, how long and up to what size.
 * Undo data beyond it is pruned oldest first, by txbox_gc and automatically after commits;
 * the newest commit's is always kept.  0 in a field: no limit of that kind. */
struct txbox_retention {
        uint64_t keep;      /* transactions whose undo data is kept (default 1000) */
        uint64_t max_age_s; /* seconds since the commit (default 30 days) */
        uint64_t max_size;  /* bytes of undo data in all (default 1 GiB) */
};

struct txbox_gc_stats {
        unsigned kept, pruned;     /* transactions whose undo data stays / was removed */
        uint64_t kept_bytes, pruned_bytes;
        unsigned trash;            /* leftovers removed (finished layers, pruned data, orphans) */
        uint64_t trash_bytes;
        unsigned skipped;          /* transactions in use, pending, or waiting for recovery */
};

#define TXBOX_GC_DRY_RUN 0x1u /* say what would go; change nothing */

/* Parse "keep=N,max-age=AGE,max-size=SIZE" (any of them; AGE like 90m, 12h, 30d, SIZE like
 * 512M, 2G; 0 or "none": no limit) into *out, which holds the defaults for what is not named. */
TXBOX_API int txbox_retention_parse(const char *spec, struct txbox_retention *out, struct txbox_error *err);
/* The retention in force: saved with txbox_retention_save, else TXBOX_RETENTION from the
 * environment, else the defaults. */
TXBOX_API int txbox_retention_get(struct txbox_ws *ws, struct txbox_retention *out, struct txbox_error *err);
/* Save r as this workspace's retention (in its state dir), applied from now on. */
TXBOX_API int txbox_retention_save(struct txbox_ws *ws, const struct txbox_retention *r,
                                   struct txbox_error *err);
/* The retention as text, "keep=1000,max-age=30d,max-size=1G". */
TXBOX_API void txbox_retention_format(const struct txbox_retention *r, char *buf, size_t size);
/* Prune undo data beyond r (NULL: the retention in force), leftovers of finished
 * transactions and the trash.  Never touches a pending transaction, one in use by a
 * process, or one waiting for recovery; crash-safe: a transaction's undo data is moved
 * out whole (one rename) before it is removed, so it is either all there or gone. */
TXBOX_API int txbox_gc(struct txbox_ws *ws, const struct txbox_retention *r, unsigned flags,
                       struct txbox_gc_stats *stats, struct txbox_error *err);

/* One protection as probed on this machine (txbox doctor). */
struct txbox_probe {
        const char *name;   /* e.g. "seccomp user notification" */
        bool ok;
        bool essential;     /* txbox refuses to run without it */
        char detail[160];   /* what was found */
        const char *cost;   /* what its absence costs; NULL when ok */
};
/* Probe the kernel for every protection txbox uses (fills up to max entries and returns the
 * count; forks short-lived children in new namespaces; changes nothing on the machine), and
 * for one workspace (NULL: none) and --state DIR (NULL: the default): the overlay is
 * probed on the workspace's own filesystem, with the workspace as its lower layer (mounted
 * detached, in a namespace of its own: nothing in it is touched); then the state dir, the
 * workspace's filesystem type, and what a container around txbox does: user-namespace
 * mapping, seccomp mode, security label.  Makes and removes one empty directory next to
 * the state dir. */
TXBOX_API int txbox_doctor_at(const char *workspace, const char *state_dir, struct txbox_probe *out,
                              size_t max);

/* What a sandbox of a workspace makes of the user's home (txbox doctor; docs/SECURITY.md,
 * "Writable caches" and "Hidden paths"): the private cache root with each cache path, and
 * the paths hidden.  Looks only: nothing is made. */
struct txbox_home_entry {
        char *path;   /* "~/.npm", or absolute outside the home */
        char *detail; /* caches: where it is mounted, or why not and what is set instead */
        bool active;  /* caches: mounted; hidden: present here (so masked) */
};
struct txbox_home_view {
        char *cache_root; /* the private cache root, or NULL */
        char *caches_off; /* why there are no caches at all, or NULL */
        struct txbox_home_entry *caches, *hidden;
        size_t ncaches, nhidden;
};
/* For workspace, --state DIR (NULL: the default) and --policy FILE (NULL: the workspace's
 * own or the built-in one, as a run would load it).  0, or -errno with err (an unreadable
 * policy). */
TXBOX_API int txbox_home_view(const char *workspace, const char *state_dir, const char *policy_file,
                              struct txbox_home_view *out, struct txbox_error *err);
TXBOX_API void txbox_home_view_free(struct txbox_home_view *v);

/* Audit reads. */
TXBOX_API int txbox_log(struct txbox_ws *ws, int limit, struct txbox_record **out, size_t *n,
                        struct txbox_error *err);
TXBOX_API int txbox_show(struct txbox_ws *ws, const char *id, struct txbox_record *out,
                         struct txbox_error *err);
/* The log as a stream for shipping (txbox log --json-lines): every record written after
 * change number since (0: from the start), oldest change first, at most limit (<= 0: all).
 * A record appears again, in its new state, each time it changes (running, then committed,
 * later undone); (*seqs)[i] is record i's change number, to pass as since next time.
 * *out and *seqs are malloc'd (txbox_records_free, free). */
TXBOX_API int txbox_log_changes(struct txbox_ws *ws, int64_t since, int limit, struct txbox_record **out,
                                int64_t **seqs, size_t *n, struct txbox_error *err);
/* A unified diff of what transaction id changed: pending, the workspace against its changes
 * (a session: all its savepoints, as the commit would fold them); committed, the originals
 * it replaced against the versions it put in place (wherever later commits moved them: not
 * the workspace as it is now); undone, the workspace against what the undo took away.
 * *out is malloc'd. */
TXBOX_API int txbox_diff(struct txbox_ws *ws, const char *id, char **out, struct txbox_error *err);
struct txbox_diff_opts {
        /* Only these paths (relative to the workspace) and what lies beneath them; "" is the
         * whole workspace; NULL or empty: every path.  NULL-terminated. */
        char *const *paths;
        /* The net change since id: everything id and every later commit changed, the versions
         * before the first of them against the workspace as it is now. */
        bool since;
};
/* txbox_diff with options; *notes (may be NULL) gets lines about versions that changed
 * outside txbox since (malloc'd, or NULL when none). */
TXBOX_API int txbox_diff_ex(struct txbox_ws *ws, const char *id, const struct txbox_diff_opts *opts,
                            char **out, char **notes, struct txbox_error *err);

/* A self-contained HTML page of the newest limit transactions (<= 0: all): a timeline and
 * one collapsible entry each with command, decision, changes and diff.  *out is malloc'd. */
TXBOX_API int txbox_report_html(struct txbox_ws *ws, int limit, char **out, struct txbox_error *err);

TXBOX_API void txbox_record_clear(struct txbox_record *rec);
TXBOX_API void txbox_records_free(struct txbox_record *recs, size_t n);
TXBOX_API const char *txbox_outcome_name(enum txbox_outcome o);
TXBOX_API const char *txbox_change_name(enum txbox_change c);
TXBOX_API const char *txbox_sp_outcome_name(enum txbox_sp_outcome o);
/* The record as one JSON object (docs/CONTRACT.md), malloc'd, no trailing newline. */
TXBOX_API char *txbox_record_json(const struct txbox_record *rec);
/* An array of records as JSON. */
TXBOX_API char *txbox_records_json(const struct txbox_record *recs, size_t n);

#endif
