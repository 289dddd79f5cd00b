/* A cgroup per transaction, where the machine lets us have one: the kernel then enforces the
 * memory total (memory.max: processes, tmpfs pages, memfds, kernel memory of the sandbox),
 * the number of processes (pids.max) and CPU bandwidth (cpu.max), and counts the OOM kills.
 *
 * Where: cgroup v2, beneath the nearest ancestor of our own cgroup that enables the memory
 * and pids controllers for its children and that we may write (root; systemd's delegated
 * user manager, where a desktop's terminals run; a container with a writable, delegated
 * cgroup); else cgroup v1 hierarchies of memory and pids we may write (root on a hybrid
 * machine).  Otherwise nothing, and the limits fall back to rlimits and the sandbox's own
 * accounting (docs/SECURITY.md says how far that falls short). */
#ifndef TXBOX_CGROUP_H
#define TXBOX_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct txbox_error;
struct txbox_limits;

enum cgroup_mode { CGROUP_NONE = 0, CGROUP_V2, CGROUP_V1 };

#define CGROUP_MAX_FDS 3 /* v1: memory, pids, cpu; v2: one */

/* What this process can have (probed once): the mode, and in detail where and why. */
enum cgroup_mode cgroup_probe(char *detail, size_t size);
/* Whether the kernel keeps pid_max per pid namespace (Linux >= 6.14): then a v1 pids
 * cgroup adds nothing and is not made. */
bool cgroup_pid_max_per_ns(void);
/* Whether a transaction's cgroup can bound CPU bandwidth here (cpu controller). */
bool cgroup_has_cpu(void);
/* Where transaction cgroups go under cgroup v2, given the text of /proc/self/mountinfo and
 * /proc/self/cgroup: the nearest ancestor of our cgroup (itself included) whose
 * cgroup.subtree_control enables memory and pids and whose directory and cgroup.procs we may
 * write; *cpu tells whether it enables cpu too.  False when none (parent then holds the
 * cgroup2 mount point, or "" when there is none).  Exposed for tests. */
bool cgroup_v2_parent(const char *mountinfo, const char *cgroup, char *parent, size_t size, bool *cpu);

struct cgroup_tx;

/* A new cgroup with the limits (memory.max = memory, pids.max = procs + 2 for init and the
 * program's first process (v1: only where pid_max is not per namespace), cpu.max when
 * cpu_milli).  0 with *out NULL when no cgroup can be
 * had here; -errno when one should have been made and could not. */
int cgroup_tx_create(const struct txbox_limits *l, struct cgroup_tx **out, struct txbox_error *err);
/* How the sandbox gets in without a move by the supervisor: writing a pid into cgroup.procs
 * takes the kernel's global threadgroup lock for writing, which waits for an RCU grace
 * period (milliseconds; docs/BENCHMARKS.md, 2026-12-07).  Under v2 the sandbox is born in
 * it: returns the directory, for clone3's CLONE_INTO_CGROUP (-1 otherwise).  Under v1 its
 * init moves itself (a thread that writes "0" into a tasks file takes no global lock): fds
 * gets the tasks files, opened by us (the kernel checks the opener's credentials), *n of
 * them.  They stay open until cgroup_tx_destroy; the sandbox's init closes its copies. */
int cgroup_tx_handoff(const struct cgroup_tx *cg, int fds[CGROUP_MAX_FDS], size_t *n);
/* Move pid into it: the sandbox's init, before it starts anything, the slow way, for a v2
 * machine without clone3 (a container whose seccomp profile refuses it); or, later, a
 * process started for the sandbox (rename.c's helper). */
int cgroup_tx_attach(struct cgroup_tx *cg, pid_t pid, struct txbox_error *err);
/* Processes the kernel's OOM killer ended in it so far. */
uint64_t cgroup_tx_oom_kills(const struct cgroup_tx *cg);
/* The most memory it was charged at once, in bytes (0 when the kernel does not say). */
uint64_t cgroup_tx_memory_peak(const struct cgroup_tx *cg);
/* Remove it once its processes are gone (left for cgroup_reap when some are still exiting). */
void cgroup_tx_destroy(struct cgroup_tx *cg);
/* Retry removals left by cgroup_tx_destroy; with wait, for up to a second. */
void cgroup_reap(bool wait);

#endif
