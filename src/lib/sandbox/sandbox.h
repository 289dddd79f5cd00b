/* The sandbox: a child in new user, mount, pid, ipc, uts (and network) namespaces that sees
 * the workspace through an overlay and the rest of the system read-only. */
#ifndef TXBOX_SANDBOX_H
#define TXBOX_SANDBOX_H

#include <sys/types.h>

#include "base/util.h"

#define IDMAP_MAX 32

/* How ids map into the sandbox's user namespace: identity ranges. */
struct idmap {
        struct {
                uint32_t start, count;
        } uid[IDMAP_MAX], gid[IDMAP_MAX];
        size_t nuid, ngid;
        bool privileged; /* we may write arbitrary maps (CAP_SETUID/CAP_SETGID) */
};

/* Plan the id maps: with CAP_SETUID+CAP_SETGID, mirror every range of our own namespace;
 * otherwise map only our uid and gid. */
int idmap_plan(struct idmap *m, struct txbox_error *err);
bool idmap_has_uid(const struct idmap *m, uid_t uid);
bool idmap_has_gid(const struct idmap *m, gid_t gid);

/* A user namespace (mapped by an idmap) and an empty network namespace, made once and held
 * by descriptors: a server's --net=none sandboxes join them instead of making their own (a
 * network namespace costs half a millisecond of CPU to make and again to tear down).  Each
 * sandbox still gets its own mount, pid, ipc and uts namespaces; the programs of one server
 * share only a network namespace with no interface up. */
struct sandbox_shared_ns {
        int user_fd, net_fd;
        struct idmap map;
};
int sandbox_shared_ns_open(const struct idmap *m, struct sandbox_shared_ns **out, struct txbox_error *err);
void sandbox_shared_ns_close(struct sandbox_shared_ns *ns);

struct exec_caller; /* execorigin.h */

struct sandbox_spec {
        const char *workspace; /* absolute, canonical */
        const char *upper;     /* absolute; on a filesystem with user xattrs */
        /* Read-only layers between upper and the workspace, topmost first (a session's earlier
         * savepoints); NULL-terminated, may be NULL. */
        char *const *lowers;
        const char *work;      /* absolute; same filesystem as upper, empty */
        const char *state_dir; /* hidden inside the sandbox */
        const char *home;      /* secrets beneath it are hidden; may be NULL */
        char *const *argv;
        const char *cwd; /* absolute; where the program starts */
        enum txbox_net_mode net;
        char *const *net_allow; /* TXBOX_NET_ALLOW: the hosts the proxy admits */
        double timeout_s;
        const struct idmap *idmap;
        /* NULL, or namespaces to join when net is TXBOX_NET_NONE and idmap is theirs */
        const struct sandbox_shared_ns *shared_ns;
        /* Called by the supervisor for every execve/execveat inside the sandbox (seccomp user
         * notification), with the program path and argv read from the caller's memory;
         * returns true to let the exec proceed, false to fail it with EPERM.  NULL: no exec
         * checks.  (argv can be swapped by another thread after the check: this is an
         * interception layer for mistakes and prompt injection, not the security boundary.) */
        bool (*exec_check)(void *ctx, const char *path, char *const argv[], struct exec_caller *caller);
        void *exec_ctx;
        struct txbox_limits limits;     /* 0 fields: defaults (limits_resolve) */
        const char *const *env_keep;    /* secret-looking variables passed anyway; may be NULL */
        bool allow_unix_sockets;        /* socket(AF_UNIX) allowed in the program */
        bool stdio_redirect;            /* give the program stdio[0..2] instead of ours */
        int stdio[3];
        struct txbox_watch *watch;      /* a server's: watched while the program runs; may be NULL */
};

/* Paths beneath $HOME that hold credentials: masked (empty) inside the sandbox. */
extern const char *const sandbox_secret_paths[];

/* Run spec->argv; returns when the program and every process it left are gone. */
/* Collect the inits of finished sandboxes (their exit overlaps the commit); with wait,
 * block until all are gone (txbox_ws_close does). */
void sandbox_reap(bool wait);
/* The same in two steps: start the sandbox (namespaces, mounts, init waiting), then run a
 * command in it; the caller works meanwhile (checks the command, writes the audit row).
 * spec must stay alive until sandbox_exec or sandbox_abort, which free the handle; its
 * argv and cwd are not used by sandbox_start, its stdio only by sandbox_exec. */
struct sandbox;
int sandbox_start(const struct sandbox_spec *spec, struct sandbox **out, struct txbox_error *err);
int sandbox_exec(struct sandbox *sb, char *const argv[], const char *cwd, struct txbox_run_result *res,
                 struct txbox_error *err);
void sandbox_abort(struct sandbox *sb);
int sandbox_run(const struct sandbox_spec *spec, struct txbox_run_result *res,
                struct txbox_error *err);

/* The kernel probes of txbox doctor: the sandbox's namespaces, an overlay with lower as its
 * lower layer (NULL: an empty directory) and its other layers in dir (NULL: a temporary
 * directory under /var/tmp or /tmp), its own /proc, seccomp, Landlock, limits.  Fills up to
 * max entries, returns the count. */
int sandbox_doctor(const char *dir, const char *lower, struct txbox_probe *out, size_t max);

#endif
