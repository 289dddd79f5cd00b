/* Beneath a root: the one way txbox, acting as the user, reaches data the sandboxed
 * program controlled (the workspace, a transaction's layers, what undo keeps).
 * Every such path is hostile input: a relative path opened beneath a directory fd that is
 * its root, never following a symlink in any component, never leaving the root, and
 * content read from the descriptor, never from a path joined as a string
 * (docs/SECURITY.md, "Where txbox acts on what the program left"). */
#ifndef TXBOX_BENEATH_H
#define TXBOX_BENEATH_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Open relpath beneath rootfd never following a symlink in any component and never
 * leaving rootfd (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, with a per-component
 * O_NOFOLLOW walk when openat2 is missing).  "" or "." opens rootfd itself. */
int open_beneath(int rootfd, const char *relpath, int flags, mode_t mode);
/* Open the parent directory of relpath beneath rootfd (O_PATH|O_DIRECTORY) and point
 * *base at the last component. */
int open_parent_beneath(int rootfd, const char *relpath, const char **base);
/* The same, creating missing parent directories (mode) one component at a time, none of
 * them through a symlink (for txbox's own areas inside a transaction's directory). */
int make_parent_beneath(int rootfd, const char *relpath, mode_t mode, const char **base);
/* lstat of relpath beneath rootfd (the last component itself; no symlink before it). */
int lstat_beneath(int rootfd, const char *relpath, struct stat *st);
/* Open relpath beneath rootfd for reading when it is a regular file, and only then: it is
 * looked at through an O_PATH descriptor first, so a fifo is never opened (it would block)
 * nor a device (opening one can act).  -EINVAL for anything but a regular file.  *st (may
 * be NULL) receives its stat. */
int open_beneath_regular(int rootfd, const char *relpath, struct stat *st);
/* The content of the regular file relpath beneath rootfd (open_beneath_regular), at most
 * max bytes (-EFBIG beyond); *out is NUL-terminated. */
int read_beneath(int rootfd, const char *relpath, size_t max, char **out, size_t *len);

#endif
