/* What git can give back, and what a transaction does to the repository (gitwork.c): the
 * repository at the workspace's root read without running git, as it was before the
 * transaction and as its commit would leave it, so that the effect rules can tell work git
 * restores from work that would be lost, and a repository left whole from one left without
 * the history its branches need.
 *
 * What the repository *claims* (ignore files, the excludes) is read as it was at HEAD, or
 * before the transaction, never from what the transaction wrote; what it *holds* (objects)
 * is believed only when the content hashes to its name, whoever wrote it.  Every file read
 * here is hostile input: read beneath the workspace or the layer, never through a symlink,
 * with sizes bounded (gitobj.h). */
#ifndef TXBOX_GITWORK_H
#define TXBOX_GITWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/gitobj.h"
#include "policy/policy.h"
#include "store/changeset.h"

struct gitwork;

/* The repository at the root of the workspace live_fd: a .git directory, or a .git file
 * whose "gitdir:" names a directory within the workspace (a relative path with no "." or
 * ".." component; anything else is not followed).  upper_fd and cs (may be -1 and NULL)
 * are the transaction's layer and changeset; ctx (may be NULL) says which files an earlier
 * transaction wrote (made_by_txbox).  NULL when there is no repository. */
struct gitwork *gitwork_open(int live_fd, int upper_fd, const struct changeset *cs, const struct policy_ctx *ctx);
void gitwork_free(struct gitwork *g);

/* Is path (workspace-relative; is_dir: a directory) ignored, by the .gitignore files of
 * HEAD's tree (of the workspace, while the repository has no commit) and
 * .git/info/exclude as it was before the transaction, unless a transaction wrote it (and
 * the user did not change it since)?  A directory ignored ignores
 * everything beneath it. */
bool gitwork_ignored(struct gitwork *g, const char *path, bool is_dir);

/* Does git hold this blob so that it can be had back after the transaction: in the store
 * before it and still after it; or written by it (content verified) and reachable from a
 * ref it set or named by the index it wrote (git stash, git add)? */
bool gitwork_has_blob(struct gitwork *g, const uint8_t oid[GIT_OID_RAW]);

/* Repository integrity after the transaction: HEAD and every branch must still resolve to
 * complete history.  Calls fn once per problem (what: the ref, or the repository's
 * directory when it could not be judged, which is a problem too: a removed pack that cannot
 * be listed, a history too large to walk, a SHA-256 repository; detail: why) and returns
 * their number.  Nothing is read unless the transaction changes the history (objects,
 * refs, packed-refs, HEAD), and every ref's history is walked only when it removes objects
 * that were there. */
int gitwork_integrity(struct gitwork *g, void (*fn)(void *arg, const char *what, const char *detail), void *arg);

#endif
