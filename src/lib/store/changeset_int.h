/* Shared by changeset.c (comparing the upper layer with the workspace) and
 * changeset_prepare.c (making the layer fit to move in, and its manifest): the walk both
 * make, and the helpers that reach entries and their xattrs without following a symlink.
 * Private to store/. */
#ifndef TXBOX_CHANGESET_INT_H
#define TXBOX_CHANGESET_INT_H

#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "base/mem.h"
#include "base/strvec.h"
#include "store/changeset.h"

#define OVL_PREFIX "user.overlay."
/* What a program set as user.overlay.X through the mount (kernel >= 6.7 escapes it). */
#define OVL_ESCAPED_PREFIX "user.overlay.overlay."
#define OVL_OPAQUE OVL_PREFIX "opaque"
#define OVL_WHITEOUT OVL_PREFIX "whiteout"

enum side { UPPER, LIVE };

struct walk {
        struct changeset *cs; /* NULL while preparing */
        struct cs_manifest *mf; /* while preparing: what moves in whole */
        struct txbox_error *err;
        size_t entries;
};

/* A path for the l*xattr calls (cs_proc_at). */
struct proc_path {
        char s[sizeof("/proc/self/fd//") + 3 * sizeof(int) + NAME_MAX + 1];
};

/* Grow arr (n used of cap) to hold one more. */
#define GROW(arr, n, cap)                                                    \
        do {                                                                 \
                if ((n) == (cap)) {                                          \
                        (cap) = (cap) ? 2 * (cap) : 16;                      \
                        (arr) = xrealloc((arr), (cap) * sizeof(*(arr)));     \
                }                                                            \
        } while (0)

/* An error on path in side s, with errno code. */
int cs_fail(struct walk *w, int code, const char *what, const char *path, enum side s);
void cs_strvec_clearp(struct strvec *sv);
/* /proc/self/fd/<dirfd>/<name>: the magic link leads to the directory we hold, and the
 * l*xattr calls never follow the last component.  NULL when name cannot be an entry name. */
const char *cs_proc_at(struct proc_path *pp, int dirfd, const char *name);
/* Child path of parent, within the depth and length limits. */
int cs_child_path(struct walk *w, const char *parent, const char *name, unsigned depth, char **out);
/* Names in directory dirfd, sorted. */
int cs_list_dir(struct walk *w, int dirfd, const char *path, enum side s, struct strvec *out);
/* An O_PATH fd of directory name in dirfd (never a symlink). */
int cs_open_dir(struct walk *w, int dirfd, const char *name, const char *path, enum side s);
/* lstat of name in dirfd; a missing entry (or dirfd < 0: no directory) is not an error. */
int cs_stat_at(struct walk *w, int dirfd, const char *name, const char *path, enum side s,
               struct stat *st, bool *exists);
/* NUL-separated xattr names of dirfd/name (*out NULL when there are none). */
int cs_list_xattrs(int dirfd, const char *name, char **out, size_t *len);
/* Is dirfd/name (lstat st) overlay's whiteout?  1, 0 or -errno. */
int cs_is_whiteout(int dirfd, const char *name, const struct stat *st);
/* -errno with a message when /proc (needed to reach xattrs) is missing. */
int cs_need_proc(struct txbox_error *err);

#endif
