/* Effect rules: judged on a transaction's changeset before commit (work lost and repository
 * integrity: loss.c; protected paths, symlinks leaving the workspace, setuid/setgid,
 * special files, size). */
#ifndef TXBOX_EFFECTS_H
#define TXBOX_EFFECTS_H

#include <string.h>

#include "store/changeset.h"
#include "policy/policy.h"

struct txbox_error;

/* Add a violation to cs (changeset_add_violation) for every broken effect rule.  upper_fd is
 * the transaction's upper layer, live_fd the workspace root.  Returns the number added, or
 * -errno. */
int effects_check(const struct policy *p, int upper_fd, int live_fd, struct changeset *cs,
                  const struct policy_ctx *ctx, struct txbox_error *err);

/* The rules the user may allow a command to break once (--allow-effect): those that judge a
 * loss the user can mean.  The i-th of them, NULL past the last. */
const char *effects_allowable(size_t i);
static inline bool effects_is_allowable(const char *rule)
{
        for (size_t i = 0; effects_allowable(i); i++)
                if (!strcmp(effects_allowable(i), rule))
                        return true;
        return false;
}

#endif
