/* Private to the policy engine's matching (match.c, pathclass.c): the parts of the path
 * classification that rules match on beyond classify_path() and resolve_path() (pol.h). */
#ifndef TXBOX_POLICY_PATHCLASS_H
#define TXBOX_POLICY_PATHCLASS_H

#include "policy/pol.h"

/* arg resolved to an absolute normalised path; *all when it stands for everything in that
 * directory (dir/STAR or dir/$unknown).  NULL when even the directory cannot be known. */
char *pathclass_resolve(const char *arg, const struct policy_ctx *ctx, bool *all);
/* The classes (PC_*) of an absolute path from pathclass_resolve. */
unsigned pathclass_abs(const char *p, bool all, const struct policy_ctx *ctx);
/* The classes of a path that starts unknown: PC_UNKNOWN and what its known end says. */
unsigned pathclass_tail(const char *arg);
/* p is beneath dir and not dir itself (dir NULL: never). */
bool pathclass_strictly_under(const char *p, const char *dir);

#endif
