/* Renaming a directory on an overlay that cannot move it.  Mounted in a user namespace
 * (userxattr), overlayfs has no redirects: rename(2) of a directory that has content in a
 * lower layer fails with EXDEV, which git, Python's os.rename and many build tools do not
 * handle.  rename_complete() gives the caller what a file system that can move directories
 * would: it runs in the sandbox, with the program's own privileges (rename.c's helper), so
 * whatever it does, the program could have done itself with cp -a and rm -r. */
#ifndef TXBOX_RENAMETREE_H
#define TXBOX_RENAMETREE_H

/* Bounds on the tree one rename copies (beyond them the call fails with EXDEV, as the
 * kernel's did): the disk and files limits of the run bind long before. */
#define RENAME_MAX_DEPTH   256
#define RENAME_MAX_ENTRIES 1000000
/* The hidden name the copy is built under, in the destination's directory. */
#define RENAME_TMP_PREFIX ".txbox-rename-"

/* renameat2(olddfd, old, newdfd, new, flags), completed when the kernel refuses it with
 * EXDEV only because the overlay cannot move a directory of its lower layers.  Returns 0,
 * or the errno the call returns to the program (the kernel's, or EXDEV when the move cannot
 * be made faithfully: a directory owned by someone else, a file that cannot be linked, an
 * xattr that cannot be set, a tree past the bounds).
 *
 * How: the kernel is asked first, so every error it gives (ENOENT, EACCES, EINVAL for a
 * directory into itself, EEXIST with RENAME_NOREPLACE ...) is its own.  On EXDEV, when both
 * names lie on one overlay mount, the source tree is rebuilt under a hidden temporary name
 * in the destination's directory: directories made anew with their mode, owner, group,
 * xattrs and times; every other entry hard-linked from the old name, which makes overlayfs
 * copy it up whole (data, mode, owner, times, xattrs) and keeps hard links among the tree's
 * files.  The copy, a directory of the upper layer only, is then renamed into place by the
 * kernel (with the caller's RENAME_NOREPLACE), and the old tree removed, which leaves a
 * whiteout for its name.  RENAME_EXCHANGE replaces each lower directory involved by such a
 * copy under its own name first, then exchanges. */
int rename_complete(int olddfd, const char *old, int newdfd, const char *new, unsigned flags);

#endif
