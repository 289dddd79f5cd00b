/* What the files of the sandbox share among themselves (sandbox.h is what the layers above
 * see): the supervisor's preparation, init's reports, the setup-error channel, and the few
 * functions one part of the sandbox calls in another.  Private to src/lib/sandbox/.
 *
 * The parts, each a job: sandbox.c starts the sandbox and runs a command in it (the process
 * layout is at its top); idmap.c plans and writes the id maps; probes.c is txbox doctor's. */
#ifndef TXBOX_SANDBOX_INT_H
#define TXBOX_SANDBOX_INT_H

#include "sandbox/sandbox.h"

/* ---- idmap.c ---- */

/* Write data to /proc/PID/file (uid_map, gid_map, setgroups): 0 or -errno. */
int sandbox_write_proc(pid_t pid, const char *file, const char *data);
/* Write m into the user namespace of pid (setgroups denied first when unprivileged). */
int sandbox_write_idmaps(pid_t pid, const struct idmap *m, struct txbox_error *err);

#endif
