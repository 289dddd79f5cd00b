/* The workspace as a commit would leave it (a transaction's upper layer over the live
 * workspace), or as it is now, read for the effect rules.  Every path is workspace-relative
 * and hostile: looked up beneath a root descriptor, one component at a time, never through a
 * symlink the kernel would follow for us; links are followed here, by hand, and only within
 * the workspace. */
#ifndef TXBOX_POLICY_VIEW_H
#define TXBOX_POLICY_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "store/changeset.h"

struct strvec;

struct view {
        int upper_fd;               /* the transaction's upper layer, -1: the live workspace only */
        int live_fd;                /* the workspace root */
        const struct changeset *cs; /* what the upper layer changes (NULL with upper_fd -1) */
        const char *workspace;      /* absolute path of the workspace (NULL: links to it leave it) */
};

/* The view as it is now (the live workspace only). */
static inline struct view view_before(const struct view *v)
{
        return (struct view){.upper_fd = -1, .live_fd = v->live_fd, .cs = NULL, .workspace = v->workspace};
}

/* lstat of rel in the view: the upper layer's entry unless it has none, else the live one
 * unless the changeset deletes it.  rel's parents must be directories (no link on the way);
 * *rootfd (may be NULL) gets the layer it was found in.  0, or -ENOENT / -errno. */
int view_lstat(const struct view *v, const char *rel, struct stat *st, int *rootfd);
/* The content of the regular file rel (no link anywhere on its path), at most max bytes:
 * 0, -ENOENT, -EFBIG beyond max, -ELOOP for a link, -EINVAL for anything but a file. */
int view_read(const struct view *v, const char *rel, size_t max, char **out, size_t *len);
/* Is rel in the changeset (added, modified or deleted)? */
bool view_changed(const struct view *v, const char *rel);

/* Where rel leads, every symlink on the way followed as the kernel would (a relative target
 * from the link's directory, ".." from where the walk has got to), at most 40 of them.
 * Returns 1 with *out the workspace-relative path it ends at ("" for the root; it need not
 * exist), 0 when it leaves the workspace (*out then the absolute host path reached, the rest
 * of the path appended), or -ELOOP / -ENAMETOOLONG.  Every link followed is added to seen
 * (may be NULL) as a workspace-relative path. */
int view_resolve(const struct view *v, const char *rel, char **out, struct strvec *seen);

#endif
