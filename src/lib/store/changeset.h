/* The changeset: what a transaction's upper layer changes in the live workspace, and the
 * operations that commit applies.
 *
 * Operations never nest: when a directory moves into place whole (new directory, opaque
 * directory, or directory replacing a non-directory) its children are not operations of
 * their own.  Operations come in pre-order (parents before children). */
#ifndef TXBOX_CHANGESET_H
#define TXBOX_CHANGESET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base/strvec.h"

struct txbox_error;
struct txbox_path;
struct txbox_violation;

enum cs_op_kind {
        CS_OP_SWAP = 0, /* move live entry (if has_old) aside; move upper entry (if has_new) in */
        CS_OP_CHMOD,    /* a merged directory whose mode changed: chmod live to new_mode */
};

struct cs_op {
        char *path; /* relative to the workspace */
        enum cs_op_kind kind;
        bool has_old;  /* SWAP: live had an entry at plan time */
        bool has_new;  /* SWAP: upper has an entry to move in (false: a deletion) */
        mode_t old_mode, new_mode; /* CHMOD: permission bits; SWAP: file type+mode of each side */
        /* Identity of the new entry (upper; rename keeps it) for undo's "touched since?" check. */
        uint64_t new_ino;
        /* Inverted ops (undo, journal_invert): the live entry they replace, i.e. the commit's
         * new one (0 elsewhere; never in a journal). */
        uint64_t old_ino;
        int64_t new_size;
        int64_t new_mtime_ns;
};

struct changeset {
        struct cs_op *ops;
        size_t nops, cap_ops;
        struct txbox_path *paths; /* every added/modified/deleted path, sorted by path */
        size_t npaths, cap_paths;
        struct txbox_violation *violations;
        size_t nviolations, cap_violations;
        /* Files the program opened for writing that ended up equal to the live ones: no change
         * to commit, but written all the same, so conflict checks count them (a stale
         * read-modify-write that happens to write what another agent just committed must not
         * pass as a no-op). */
        struct strvec touched;
};

/* Limits on what a transaction's upper layer may hold. */
#define CS_MAX_DEPTH 256
#define CS_MAX_ENTRIES 2000000

/* Walk upper_fd (the transaction's upper layer) against live_fd (the workspace root) and fill
 * cs.  Classifies entries: whiteouts (char 0/0, or zero-size file with xattr
 * user.overlay.whiteout) = deleted; directories with user.overlay.opaque = "y" replace the
 * live directory; copy-ups whose type, mode, content (or symlink target) equal the live entry
 * are no change; devices, fifos and sockets are violations (rule "special-file").
 * Deleted or replaced live directories list every live path beneath them as deleted.  Never
 * follows symlinks. */
int changeset_build(int upper_fd, int live_fd, struct changeset *cs, struct txbox_error *err);
/* Was the entry at PATH in the upper layer copied up from the workspace?  overlayfs records
 * a copy-up as user.overlay.origin (in a user namespace with an empty value: no file handle
 * says from which inode); a program cannot set that name through the mount (what it sets
 * there is stored escaped, or refused), so it cannot forge one, and a forged one would only
 * make a conflict.  A hard link (nlink > 1) answers no: it may carry another path's origin.
 * An entry the program made anew (a file written and renamed over the name, as sed -i
 * does) has no origin. */
bool changeset_copied_up(int upper_fd, const char *path);
/* Does the changeset delete a path?  Then an entry copied up may have been moved from it
 * (mv a b), and its origin says nothing about its own path. */
bool changeset_deletes(const struct changeset *cs);

/* What the directories that move in whole hold, entry by entry, as they will be live (the
 * entries beneath each such op, not the op's own): undo compares the workspace with it, so
 * that nothing made or changed there since is taken away. */
struct cs_manifest_entry {
        char *path;     /* relative to the workspace */
        uint64_t ino;
        mode_t mode;    /* type and permission bits */
        int64_t size;
        int64_t mtime_ns;
};
struct cs_manifest {
        struct cs_manifest_entry *e; /* sorted by path once complete */
        size_t n, cap;
};
void cs_manifest_add(struct cs_manifest *m, const char *path, const struct stat *st);
void cs_manifest_sort(struct cs_manifest *m);
/* The entry at path, or NULL. */
const struct cs_manifest_entry *cs_manifest_find(const struct cs_manifest *m, const char *path);
void cs_manifest_free(struct cs_manifest *m);

/* Make the upper layer fit to move into the live workspace: remove overlay's own xattrs
 * (user.overlay.opaque, .origin, .impure, .nlink, .upper, .redirect, .metacopy, .whiteout,
 * .protattr, .uuid ...), unescape user.overlay.overlay.X to user.overlay.X, remove whiteouts
 * inside directories that move whole, clear setuid/setgid bits.  Only touches entries
 * named by cs->ops (and their subtrees).  Runs once: the first run writes the manifest of
 * the directories that move whole to dirfd/"manifest" (journal_manifest_write) before it
 * marks the layer prepared.  Before it changes anything it leaves dirfd/"prepared": a layer
 * prepared in part or whole no longer says what the program did (opaque markers and
 * whiteouts are gone), so it can never be judged again (txbox_tx_evaluate refuses it). */
int changeset_prepare(int upper_fd, const struct changeset *cs, int dirfd, struct txbox_error *err);

void changeset_free(struct changeset *cs);

/* Add a violation (copies strings). */
void changeset_add_violation(struct changeset *cs, const char *rule, const char *path,
                             const char *detail);

#endif
