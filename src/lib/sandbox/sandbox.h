/* The sandbox: a child in new user, mount, pid, ipc, uts (and network) namespaces that sees
 * the workspace through an overlay and the rest of the system read-only. */
#ifndef TXBOX_SANDBOX_H
#define TXBOX_SANDBOX_H

#include <sys/types.h>

#include "txbox.h"

struct strvec;

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
        /* The home's view (home.c): more paths to hide (absolute; NULL-terminated, may be
         * NULL), and the private cache root mounted over the tools' cache paths (NULL: no
         * caches) with those paths, home-relative (NULL: the built-in list). */
        char *const *hide;
        const char *cache_root;
        char *const *cache_paths;
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

/* ---- the home's view (home.c) ---- */

/* Paths beneath $HOME that hold credentials: masked (empty) inside the sandbox. */
extern const char *const sandbox_secret_paths[];
/* Environment variables that name credential files or directories (hidden too). */
extern const char *const sandbox_secret_envs[];
/* Every path a sandbox of workspace hides besides its state dir: the secret paths under
 * home (and under XDG_CONFIG_HOME and XDG_DATA_HOME where set elsewhere), what the secret
 * variables of our environment name, and extra (absolute); lexically normal, none that is
 * the root or holds the workspace, each once.  Appended to out (malloc'd strings). */
void sandbox_hidden_paths(const char *home, const char *workspace, char *const *extra, struct strvec *out);
/* Keep only the paths of hidden that exist on the host now (a name below home is looked up
 * in its directory's listing, read once; the rest with lstat): what init then masks.  A
 * path missing here holds no secret of the host's; one that appears in the moment before
 * init masks would be missed, as would any made after. */
void sandbox_hidden_present(struct strvec *hidden, const char *home);
/* The built-in cache paths, home-relative: the i-th, or NULL past the last. */
const char *sandbox_default_cache(size_t i);

/* One cache path of the plan. */
struct sandbox_cache {
        char *rel;       /* home-relative */
        char *target;    /* mounted: where (the host's path, every link followed) */
        char *source;    /* mounted: ROOT/rel, made by the plan */
        char *env;       /* redirected: the "VAR=VALUE" the program gets instead, or NULL
                          * when another path of the same tool sets it */
        const char *why; /* not mounted: why (a constant string) */
        bool mounted, redirected;
};
struct sandbox_caches {
        char *root;            /* the private cache root */
        char *off;             /* no caches at all: why; or NULL */
        char *xdg;             /* the XDG_CACHE_HOME the program gets instead of ours, or NULL */
        struct sandbox_cache *v;
        size_t n;
};
/* Plan the writable caches of a sandbox: rels (home-relative or "~/x"; NULL: the built-in
 * list) under home, each mounted from root/REL unless it overlaps the workspace or the
 * state dir, lies in a hidden path (hidden: sandbox_hidden_paths), or cannot be had (a
 * missing path is made when only its last component is missing, ~/.cache included, else
 * a tool that has a variable for it is sent to ~/.cache/TOOL).  create: make the root and
 * its directories (a run); false: only look (txbox doctor).  A cache that cannot be had is
 * left out with its reason, never an error.  Free with sandbox_caches_free. */
int sandbox_caches_plan(const char *root, char *const *rels, const char *home, const char *workspace,
                        const char *state_mask, char *const *hidden, bool create, struct sandbox_caches *out);
void sandbox_caches_free(struct sandbox_caches *c);
/* The program's environment with the plan's variables (a tool sent to ~/.cache, and
 * XDG_CACHE_HOME when ours points where the sandbox cannot write); *envp is replaced, its
 * strings kept (the new ones belong to c). */
void sandbox_caches_env(struct sandbox_caches *c, const char *home, const char *workspace, char ***envp);

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
