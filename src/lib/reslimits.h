/* Per-transaction resource limits and the environment the program sees (limits.c; named
 * reslimits.h because -Isrc/lib would make it shadow the system <limits.h>). */
#ifndef TXBOX_RESLIMITS_H
#define TXBOX_RESLIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "txbox.h"

/* Fill the defaults for zero fields; upper is the upper layer (for the free-space default). */
void limits_resolve(const struct txbox_limits *in, const char *upper, struct txbox_limits *out);
/* In the program's process before exec: rlimits (per process). Returns 0 or -errno. */
int limits_apply_rlimits(const struct txbox_limits *l);
/* In the sandbox's init after /proc is mounted: bound the number of pids of the pid
 * namespace (kernel >= 6.14 keeps pid_max per namespace).  Returns 0 or -errno. */
int limits_set_pid_max(uint64_t procs);
/* Whether the processes of the caller's /proc (the sandbox's) use more than limit bytes of
 * memory, counting shared pages once (proportional set size). */
bool limits_memory_exceeded(uint64_t limit);
/* Bytes allocated beneath dir (a du-like walk that does not follow symlinks). */
uint64_t limits_tree_usage(const char *dir);

/* Whether an environment variable name looks like it holds a secret. */
bool limits_env_secret(const char *name);
/* A copy of envp without secret-looking variables (unless named in keep); the dropped names
 * go to dropped (comma-separated, truncated with ",...").  *out is malloc'd (strings shared
 * with envp). */
void limits_filter_env(char *const *envp, const char *const *keep, char ***out, char *dropped,
                       size_t size);

#endif
