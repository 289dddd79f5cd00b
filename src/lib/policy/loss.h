/* The loss model of the effect rules (loss.c): what a transaction's changes lose, judged
 * on content (effect-lost-work, effect-mass-deletion), and what they do to the
 * repository's history (effect-git-integrity).  Private to src/lib/policy; effects.c calls
 * it. */
#ifndef TXBOX_LOSS_H
#define TXBOX_LOSS_H

#include "policy/policy.h"
#include "store/changeset.h"

/* Judge cs (upper_fd: the transaction's layer, live_fd: the workspace) and add a violation
 * for each broken rule, at most max of them.  Returns the number added. */
int loss_check(const struct policy *p, int upper_fd, int live_fd, struct changeset *cs, const struct policy_ctx *ctx,
               int max);

#endif
