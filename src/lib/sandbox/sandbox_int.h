/* What the files of the sandbox share among themselves (sandbox.h is what the layers above
 * see): the supervisor's preparation, init's report, the setup-error channel, and the few
 * functions one part of the sandbox calls in another.  Private to src/lib/sandbox/.
 *
 * The parts, each a job: sandbox.c starts the sandbox and hands it a command (the process
 * layout is at its top); init.c is pid 1 inside it; mounts.c makes its view of the file
 * system; program.c is the program's process up to its exec; supervise.c watches the
 * program while it runs; idmap.c plans and writes the id maps; probes.c is txbox doctor's.
 */
#ifndef TXBOX_SANDBOX_INT_H
#define TXBOX_SANDBOX_INT_H

#include "sandbox/sandbox.h"
#include "sandbox/reslimits.h"
#include "sandbox/sockconn.h"

struct cgroup_tx;
struct netproxy;
struct netproxy_rule;

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
        int cg_sync;                /* init's end: one byte once it is in the cgroup (or none is had) */
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

/* ---- program.c ---- */

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
};

/* Wait for the program's status (forwarding signals, answering exec checks, enforcing the
 * timeout and the limits) and fill res from it. */
void sandbox_supervise_wait(struct supervise *sv, struct txbox_run_result *res);

#endif
