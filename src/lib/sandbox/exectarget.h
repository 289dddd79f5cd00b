/* The program an exec in the sandbox will run, for the exec check (supervisor side). */
#ifndef TXBOX_EXECTARGET_H
#define TXBOX_EXECTARGET_H

#include <stdbool.h>
#include <sys/types.h>

/* The file has no name to judge it by (a memfd, a deleted or anonymous file), or it could
 * not be resolved: judge it as unknown. */
#define EXEC_TARGET_UNKNOWN 1

/* What the exec of task pid will run: path (relative to dirfd, AT_FDCWD or a descriptor of
 * the task, as execveat takes them; flags AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW) resolved in
 * the task's own view, every symlink followed.  0: buf holds the file's path (its last
 * component is the file's own name); -ENOENT: nothing executable is there (the exec fails
 * by itself); EXEC_TARGET_UNKNOWN. */
int exec_target(pid_t pid, int dirfd, const char *path, unsigned flags, char *buf, size_t size);

/* An O_PATH descriptor of the file an absolute path names in the task's own view (every
 * symlink followed there), or -errno. */
int exec_target_open(pid_t pid, const char *path);
/* An O_PATH descriptor of what path (relative to dirfd: AT_FDCWD or a descriptor of the
 * task) names for task pid, resolved in its own view beneath its root with every symlink
 * followed (the last one too unless nofollow), as the kernel will; -errno. */
int task_open(pid_t pid, int dirfd, const char *path, bool nofollow);

#endif
