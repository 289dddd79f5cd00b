/* Where a symlink that leaves the workspace leads on this machine, and whether a commit may
 * leave it there (effect-symlink-escape).  A link is judged by what following it reaches,
 * not by its text: read-only system files (a venv's python -> /usr/bin/python3, a link to
 * /usr/share/zoneinfo/UTC), harmless devices and the stores of language toolchains are
 * fine; a secret, or anything else the user can write (the home directory,
 * another project, as root /etc), is refused: the user's own tools, outside any sandbox,
 * would read it or write through the link. */
#ifndef TXBOX_POLICY_LINKOUT_H
#define TXBOX_POLICY_LINKOUT_H

#include <stddef.h>

#include "policy/policy.h"

/* host: the absolute path the link reaches when it leaves the workspace (it may hold ".."
 * and need not exist).  NULL when the link may stay; else why not (static text), with the
 * path it reaches, resolved on this machine, in where. */
const char *linkout_judge(const char *host, const struct policy_ctx *ctx, char *where, size_t size);

#endif
