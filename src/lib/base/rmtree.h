/* Removing trees: never following a symlink, allocating nothing. */
#ifndef TXBOX_RMTREE_H
#define TXBOX_RMTREE_H

/* Remove name (a file or a whole tree) beneath dirfd; ENOENT is success.  Never follows
 * symlinks; makes unreadable directories (overlay's work/work) readable to descend. */
int rm_rf_at(int dirfd, const char *name);
/* Remove everything in the open directory DIRFD (not it); allocates nothing. */
int rm_children(int dirfd);

#endif
