/* The commit journal: the ordered list of operations, written and fsynced before the first
 * change, and the idempotent steps that apply or revert them.
 *
 * Every SWAP op is two renames: the live entry (if any) moves aside (tx/undo/PATH), then the
 * new entry moves in from the source layer (tx/upper/PATH).  Each step checks where the
 * entries are before moving them, so apply and revert can both be replayed after a crash at
 * any point.  Undo is the inverse list (journal_invert) applied with undo/ as the source and
 * redo/ as the aside area. */
#ifndef TXBOX_JOURNAL_H
#define TXBOX_JOURNAL_H

#include "store/changeset.h"
#include "txbox.h"

/* Write ops to dirfd/name through a temp file and a rename; durable (fsync of the file and
 * the directory) when asked, else the caller syncs (the commit's one syncfs). */
int journal_write(int dirfd, const char *name, const struct cs_op *ops, size_t n, bool durable,
                  struct txbox_error *err);
/* Read a journal; -EBADMSG when incomplete or malformed. */
int journal_read(int dirfd, const char *name, struct cs_op **ops, size_t *n,
                 struct txbox_error *err);
void journal_ops_free(struct cs_op *ops, size_t n);
/* The inverse operation list (reverse order, old and new swapped). */
struct cs_op *journal_invert(const struct cs_op *ops, size_t n);

struct journal_progress {
        txbox_progress_fn fn; /* NULL: no reports */
        void *ctx;
        const char *what;
};

/* The manifest of directories moved in whole (struct cs_manifest), as dirfd/name; not
 * durable by itself (the commit's one sync covers it).  Reading: -ENOENT when there is
 * none (a commit that moved no directory in, or one made before txbox kept them),
 * -EBADMSG when malformed. */
int journal_manifest_write(int dirfd, const char *name, const struct cs_manifest *m, struct txbox_error *err);
int journal_manifest_read(int dirfd, const char *name, struct cs_manifest *m, struct txbox_error *err);

/* Apply ops to live_fd, taking new entries from src_fd and moving originals to aside_fd.
 * Idempotent: applying again after a crash part-way completes the job.  fp names the
 * failpoint hit before every rename (tests crash there).  pg (may be NULL) hears about
 * progress once the apply has taken over a second.  With sync, ends with a syncfs. */
int journal_apply(int live_fd, int src_fd, int aside_fd, const struct cs_op *ops, size_t n,
                  const char *fp, const struct journal_progress *pg, bool sync, struct txbox_error *err);
/* Undo whatever part of journal_apply happened, in reverse order. */
int journal_revert(int live_fd, int src_fd, int aside_fd, const struct cs_op *ops, size_t n,
                   struct txbox_error *err);

#endif
