/* What the files of the sandbox share among themselves (sandbox.h is what the layers above
 * see): the supervisor's preparation, init's report, the setup-error channel, and the few
 * functions one part of the sandbox calls in another.  Private to src/lib/sandbox/.
 *
 * The parts, each a job: sandbox.c starts the sandbox and hands it a command (the process
 * layout is at its top); init.c is pid 1 inside it; mounts.c makes its view of the file
 * system; program.c is the program's process up to its exec; supervise.c watches the
 * program while it runs; rename.c completes the renames of directories the overlay cannot
 * move (renametree.c does the moving); idmap.c plans and writes the id maps; probes.c is
 * txbox doctor's.
 */
#ifndef TXBOX_SANDBOX_INT_H
#define TXBOX_SANDBOX_INT_H

#include "base/strvec.h"
#include "sandbox/cgroup.h"
#include "sandbox/sandbox.h"
#include "sandbox/reslimits.h"
#include "sandbox/sockconn.h"

struct netproxy;
struct netproxy_rule;
struct renamer;
struct seccomp_notif;

/* What init measures and the supervisor reads while the program runs: one shared page,
 * mapped before clone (init is the supervisor's fork-like child). */
struct sandbox_meter {
        uint64_t held_disk, held_disk_files; /* deleted files on the workspace's fs still open */
};

/* What the supervisor prepares before clone for the children (they share its memory copy). */
struct sandbox_prep {
        struct txbox_limits limits; /* resolved */
        struct limit_origins limits_why; /* where each came from (messages) */
        char **envp;                /* filtered environment of the program */
        unsigned guard;             /* seccomp filter variant (GUARD_*) */
        int notify_sock;            /* children's end: the program sends its listener here */
        long last_cap;              /* /proc/sys/kernel/cap_last_cap, read by the supervisor */
        struct cgroup_tx *cg;       /* the transaction's cgroup, or NULL (accounting) */
        int cg_join[CGROUP_MAX_FDS]; /* v1: the tasks files init writes itself into */
        size_t ncg_join;
        bool cg_wait;               /* v2 without clone3: init waits to be moved */
        int cg_sync;                /* init's end then: one byte once it is moved ('x') or not ('n') */
        char tmpfs_opts[128];       /* /tmp and /dev/shm */
        dev_t upper_dev;            /* the upper layer's file system */
        struct sandbox_meter *meter;
        struct netproxy_rule *rules; /* --net=allow */
        size_t nrules;
        struct netproxy *proxy;      /* the supervisor's: its proxy process, forked before clone */
        struct strvec hidden;        /* sandbox_hidden_paths: masked by init */
        struct sandbox_caches caches; /* mounted by init */
};

/* What init reports when the program ends. */
struct init_status {
        int status;
        int limit; /* LIMIT_* that made init kill the program */
        /* Processes still running when the program ended, which init's exit kills:
         * "COMMAND (pid N); ..." as their command lines read, bytes as they are. */
        char killed[400];
        char detail[200];
};

/* ---- init.c ---- */

/* init, pid 1 of the sandbox: never returns.  syncfd < 0: born in shared namespaces, mapped
 * and without network. */
__attribute__((noreturn)) void sandbox_init_main(const struct sandbox_spec *spec,
                                                 const struct sandbox_prep *p, int syncfd, int statusfd);

/* The setup-error channel: inside the sandbox, errors travel to the supervisor over a pipe.
 * A child of the supervisor names its end once, before any SETUP_FAIL. */
void sandbox_child_errfd_set(int fd);

enum { CHILD_SETUP_FAILED = 1, CHILD_EXEC_FAILED = 2 };

struct child_msg {
        int kind;
        int err;
        char msg[900];
};

/* Report an error of kind CHILD_* to the supervisor (over the children's error pipe);
 * returns -e. */
__attribute__((format(printf, 3, 4))) int sandbox_child_fail(int kind, int e, const char *fmt, ...);
#define SETUP_FAIL(...) sandbox_child_fail(CHILD_SETUP_FAILED, errno ? errno : EIO, __VA_ARGS__)

/* Hand fd to the supervisor over sock, tagged by one byte ('n': the exec listener, 'p': the
 * proxy port). */
int sandbox_send_fd(int sock, char tag, int fd);

/* ---- sandbox.c ---- */

/* Close every descriptor from 3 up but the n in keep (which this sorts): 0 or -errno. */
int sandbox_close_all_but(int *keep, size_t n);

/* ---- program.c ---- */

/* rename.c's helper: the program's own lock-down but its seccomp filter, which the helper
 * loads itself (every capability dropped, no_new_privs, the same Landlock rules).  0, or -1
 * after a SETUP_FAIL. */
int sandbox_confine_helper(const struct sandbox_spec *s, const struct sandbox_prep *p);

/* In init: start the program's process, which locks itself down and waits for the command;
 * its pid, or -1. */
pid_t sandbox_spawn_program(const struct sandbox_spec *s, const struct sandbox_prep *p, int statusfd);
/* In the supervisor: send the command (cwd, argv, and stdio when not NULL) to the program's
 * process; 0 or -errno. */
int sandbox_send_go(int sock, char *const argv[], const char *cwd, const int *stdio);

/* ---- mounts.c ---- */

/* In init: the overlay, the read-only root, /tmp, /dev, /proc, the masks; -1 on failure
 * (reported with SETUP_FAIL). */
int sandbox_setup_mounts(const struct sandbox_spec *s, const struct sandbox_prep *p);
/* In init: /proc/sys and the other kernel knobs under /proc made read-only. */
int sandbox_protect_proc(void);

/* ---- idmap.c ---- */

/* Write data to /proc/PID/file (uid_map, gid_map, setgroups): 0 or -errno. */
int sandbox_write_proc(pid_t pid, const char *file, const char *data);
/* Write m into the user namespace of pid (setgroups denied first when unprivileged). */
int sandbox_write_idmaps(pid_t pid, const struct idmap *m, struct txbox_error *err);

/* ---- supervise.c ---- */

/* The supervisor's view of one run, from the command's start to the program's status. */
struct supervise {
        pid_t pid;
        int statusfd, errfd, sigfd;
        int notify_sock; /* receives the program's seccomp listener */
        int listener;    /* -1 until received */
        bool proxy_given; /* --net=allow: the sandbox's port went to the proxy */
        double timeout_s;
        const struct sandbox_spec *spec;
        struct sandbox_prep *prep;
        struct disk_meter disk;
        struct sockconn conn; /* the program's connects (GUARD_NOTIFY_CONNECT) */
        int limit;
        char detail[256];
        struct renamer *rn; /* directory renames completed for the program (rename.c) */
        int rename_sock;    /* its helper's socket, -1 */
};

/* Wait for the program's status (forwarding signals, answering exec checks, enforcing the
 * timeout and the limits) and fill res from it. */
void sandbox_supervise_wait(struct supervise *sv, struct txbox_run_result *res);

/* ---- rename.c ---- */

/* The supervisor's side of the directory renames an overlay without redirects refuses
 * (EXDEV): every rename call of the program stops at the seccomp listener; one whose
 * source (or, exchanging, either side) is not a directory goes on at once, the others go to
 * a helper process in the sandbox's namespaces with the program's own privileges, which
 * completes them (renametree.c) and says how it went.  State in sv->rn, made at the first
 * rename; the helper's socket, to poll for its answers, in sv->rename_sock (-1: none). */

/* guard_notify_handle's other (ctx: the struct supervise): answer the rename n now or hand
 * it to the helper; 0, or -errno when the listener is unusable; 1 when n is no rename. */
int renamer_notify(void *sv, int listener, const struct seccomp_notif *n);
/* sv->rename_sock is readable: pass the helper's answers on to the waiting tasks. */
void renamer_on_answer(struct supervise *sv);
/* The program has ended: stop the helper, wait for it, free sv->rn.  A rename it was in
 * the middle of is named in cut (size bytes; "" when none): the layer may hold half of it. */
void renamer_end(struct supervise *sv, char *cut, size_t size);

#endif
