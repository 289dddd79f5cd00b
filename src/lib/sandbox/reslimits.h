/* Per-transaction resource limits and the environment the program sees (limits.c; named
 * reslimits.h because -Isrc/lib would make it shadow the system <limits.h>). */
#ifndef TXBOX_RESLIMITS_H
#define TXBOX_RESLIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct txbox_limits;

/* Fill the defaults for zero fields; upper is the upper layer (for the free-space default). */
/* Where each resolved limit came from, for messages: the option, the environment variable,
 * or which default (a limit the user never set must not be named as if they had). */
struct limit_origins {
        char disk[128], files[128];
};
void limits_resolve(const struct txbox_limits *in, const char *upper, struct txbox_limits *out,
                    struct limit_origins *why);
/* In the program's process before exec: rlimits (per process). Returns 0 or -errno. */
int limits_apply_rlimits(const struct txbox_limits *l);
/* In the sandbox's init after /proc is mounted: bound the number of pids of the pid
 * namespace (kernel >= 6.14 keeps pid_max per namespace).  Returns 0 or -errno. */
int limits_set_pid_max(uint64_t procs);
/* Mount options of the sandbox's /tmp and /dev/shm: sized by the limits. */
void limits_tmpfs_options(const struct txbox_limits *l, char *buf, size_t size);

/* Which limit stopped a program. */
enum { LIMIT_NONE = 0, LIMIT_MEMORY, LIMIT_DISK, LIMIT_FILES };

/* ---- the sandbox's init, every 100 ms ---- */

/* File systems by device: the workspace's (the overlay's and the upper layer's own), and
 * the kernel's internal shared-memory mount (memfds, System V). */
struct limits_devs {
        dev_t disk[2];
        dev_t shm;
};
/* Learn devs->shm (a memfd's device). */
void limits_probe_shm_dev(struct limits_devs *devs);

struct limits_usage {
        uint64_t held_disk, held_disk_files; /* deleted files on the workspace's fs still open */
        uint64_t held_shm; /* open memfds (and other deleted shared-memory files) */
        uint64_t tmpfs;    /* pages in /tmp and /dev/shm */
        uint64_t sysv;     /* resident System V shared memory */
        uint64_t rss;      /* resident memory of every process but init (an upper bound) */
};
/* Look at every process of the caller's /proc (the sandbox's) but init: with fds, the
 * deleted files they hold open (some microseconds a descriptor: not at every tick); with
 * memory, resident memory, tmpfs and System V usage. */
void limits_scan(const struct limits_devs *devs, bool fds, bool memory, struct limits_usage *u);
/* Cheap signs that the sandbox holds more than before: the available bytes of the
 * workspace's file system, and (shmem not NULL) the machine's shared memory
 * (/proc/meminfo Shmem). */
void limits_hints(const char *workspace, uint64_t *avail, uint64_t *shmem);
/* Whether the sandbox uses more than limit bytes of memory: processes (shared pages counted
 * once, by proportional set size), /tmp, /dev/shm, memfds and System V segments.  *total
 * gets the figure. */
bool limits_memory_exceeded(const struct limits_usage *u, uint64_t limit, uint64_t *total);

/* ---- the supervisor's disk meter ---- */

#define DISK_WALK_US 200000         /* walks of the layers, at least this far apart */
#define DISK_SLACK_MIN (4ULL << 20) /* the free-space rule's slack: max(this, limit / 4) */
#define FILES_SLACK_MIN 1000ULL

struct disk_meter {
        const char *upper, *work;
        const struct limit_origins *why;
        uint64_t limit, files_limit, slack, files_slack;
        bool have_base, have_inodes;
        uint64_t base_avail, base_ffree; /* the file system at the start of the run */
        uint64_t walked, walked_files;   /* the last walk of the layers */
        int64_t next_walk, walk_gap;
        /* The sandbox's user namespace (-1: none; not owned): a directory of the upper layer
         * closed to its owner is walked by a child that joined it, where the owner of the
         * layer's files may read any of them (CAP_DAC_READ_SEARCH over its own ids). */
        int userns_fd;
        bool unmeasured; /* the last walk met a directory that not even that child could enter */
};
void disk_meter_start(struct disk_meter *m, const char *upper, const char *work,
                      const struct txbox_limits *l, const struct limit_origins *why);
/* LIMIT_NONE, or LIMIT_DISK / LIMIT_FILES with detail saying what was measured.  held*: the
 * sandbox's deleted files still open (from init).  walk: walk the layers now (the final
 * check, once everything has stopped: the free-space rule is skipped then). */
int disk_meter_check(struct disk_meter *m, uint64_t held, uint64_t held_files, bool walk, char *detail,
                     size_t size);
/* Bytes allocated beneath dir and its entries (files with several names once), never
 * following symlinks.  lend: enter a directory closed to its owner by opening it for the
 * walk and giving its mode back after (else it is not entered, and *closed, when closed is
 * not NULL, is set: what it holds is not counted). */
void limits_tree_usage(const char *dir, bool lend, uint64_t *bytes, uint64_t *entries, bool *closed);
/* The same walk by a child that joined the user namespace userns_fd first: every directory
 * of the owner's layer is entered, whatever its mode, and none is changed.  0, or -errno
 * when the child could not join it or still met a directory it could not enter. */
int limits_tree_usage_as_owner(const char *dir, int userns_fd, uint64_t *bytes, uint64_t *entries);

/* Whether an environment variable name looks like it holds a secret. */
bool limits_env_secret(const char *name);
/* A copy of envp without secret-looking variables (unless named in keep); the dropped names
 * go to dropped (comma-separated, truncated with ",...").  *out is malloc'd (strings shared
 * with envp). */
void limits_filter_env(char *const *envp, const char *const *keep, char ***out, char *dropped,
                       size_t size);

#endif
