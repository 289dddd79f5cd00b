/* What git can give back: a workspace's git index (.git/index) read without running git,
 * and its ignore files, so that an effect rule can tell work that `git checkout` restores
 * (a file whose content is the one git recorded) from work that would be lost (untracked,
 * or changed since).  Every file read here lies in the workspace and is hostile input: read
 * beneath the workspace root, never through a symlink, with sizes bounded. */
#ifndef TXBOX_GITWORK_H
#define TXBOX_GITWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gitwork;

/* The repository at the root of the workspace live_fd, or NULL when there is none (no .git
 * directory, or no index in it yet) or its index cannot be read: then the rule does not
 * apply. */
struct gitwork *gitwork_open(int live_fd);
void gitwork_free(struct gitwork *g);

enum git_state {
        GIT_CLEAN,     /* tracked, and the file is what the index holds: git restores it */
        GIT_CHANGED,   /* tracked, but its content differs (or could not be compared) */
        GIT_UNTRACKED, /* not in the index, and not ignored */
        GIT_IGNORED,   /* not in the index, ignored (.gitignore, .git/info/exclude) */
};

/* The state of the regular file path (workspace-relative) as it is in live_fd now. */
enum git_state gitwork_state(struct gitwork *g, int live_fd, const char *path);

/* SHA-1 (git's object names); exposed for the unit tests. */
void sha1(const void *data, size_t len, uint8_t out[20]);

#endif
