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
#include "store/changeset.h"

struct gitwork;

/* The repository at the root of the workspace live_fd: a .git directory, or a .git file
 * whose "gitdir:" names a directory within the workspace (a relative path with no "." or
 * ".." component; anything else is not followed).  upper_fd and cs (may be -1 and NULL)
 * are the transaction's layer and changeset.  NULL when there is no repository. */
struct gitwork *gitwork_open(int live_fd, int upper_fd, const struct changeset *cs);
void gitwork_free(struct gitwork *g);

/* The repository's directory, workspace-relative (".git"). */
const char *gitwork_dir(const struct gitwork *g);

/* Is path (workspace-relative; is_dir: a directory) ignored, by the .gitignore files of
 * HEAD's tree (of the workspace, while the repository has no commit) and
 * .git/info/exclude as they were before the transaction?  A directory ignored ignores
 * everything beneath it. */
bool gitwork_ignored(struct gitwork *g, const char *path, bool is_dir);

/* Does git hold this blob so that it can be had back after the transaction: in the store
 * before it and still after it; or written by it (content verified) and reachable from a
 * ref it set or named by the index it wrote (git stash, git add)? */
bool gitwork_has_blob(struct gitwork *g, const uint8_t oid[GIT_OID_RAW]);

/* The blob name of the regular file path beneath root (its content hashed as git would),
 * and (head, may be NULL) its first 8 bytes, zeros beyond its end.  0, or -errno. */
int git_blob_name_at(int root, const char *path, uint8_t oid[GIT_OID_RAW], uint8_t head[8]);

/* Some n blobs will be asked about (gitwork_has_blob): prepare for many lookups. */
void gitwork_expect(struct gitwork *g, size_t n);

/* Does the transaction change the repository's history: objects, refs, packed-refs, HEAD? */
bool gitwork_touches_history(const struct gitwork *g);

/* Repository integrity after the transaction: HEAD and every branch must still resolve to
 * complete history.  Calls fn once per problem (what: the ref or path; detail: why) and
 * returns their number, or -errno when it could not be judged (a removed pack that cannot
 * be listed, a history too large to walk).  Cheap unless the transaction removes objects
 * that were there: then every ref's history is walked. */
int gitwork_integrity(struct gitwork *g, void (*fn)(void *arg, const char *what, const char *detail), void *arg);

#endif
