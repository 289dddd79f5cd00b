/* Effect rule effect-run-later: a change that makes the user's own next command run
 * something, outside any sandbox.  git configuration that names a program (core.fsmonitor,
 * core.pager, aliases, filters, credential helpers, includes ... in any repository of the
 * workspace, written by git config or by hand, judged against what was there before), hooks
 * (in .git/hooks or wherever core.hooksPath points), VS Code tasks that run when the folder
 * opens and settings that name programs, and the configuration of coding agents that run
 * commands at their start.  docs/POLICY.md lists every file considered and why each is or
 * is not refused. */
#ifndef TXBOX_POLICY_RUNLATER_H
#define TXBOX_POLICY_RUNLATER_H

#include "policy/policy.h"
#include "store/changeset.h"

#define RUNLATER_RULE "effect-run-later"

/* Add at most budget violations to cs (rule RUNLATER_RULE); returns how many were added.
 * upper_fd is the transaction's upper layer, live_fd the workspace root. */
int runlater_check(int upper_fd, int live_fd, struct changeset *cs, const struct policy_ctx *ctx, int budget);

#endif
