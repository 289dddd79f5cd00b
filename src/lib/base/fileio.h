/* Files: whole reads, atomic writes, comparisons, directories made and streamed.  For a
 * path the sandboxed program controlled, see beneath.h instead. */
#ifndef TXBOX_FILEIO_H
#define TXBOX_FILEIO_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A stream over the entries of the open directory DIRFD from its start, on a duplicate
 * (closedir leaves DIRFD open; the two share a position, which *at() calls ignore); NULL
 * with errno set on failure. */
DIR *dir_stream(int dirfd);
/* mkdir -p of relpath beneath dirfd (components created with mode). */
int mkdir_p_at(int dirfd, const char *relpath, mode_t mode);
int mkdir_p(const char *path, mode_t mode);
/* fsync the directory relpath beneath dirfd ("": dirfd itself). */
int fsync_dirfd_at(int dirfd, const char *relpath);
/* Write data to dirfd/name atomically (temp + fsync + rename + fsync dir when durable). */
int write_file_atomic_at(int dirfd, const char *name, const void *data, size_t len, bool durable);
/* Read a whole file (at most max bytes; -EFBIG beyond).  *out is NUL-terminated. */
int read_file_at(int dirfd, const char *name, size_t max, char **out, size_t *len);
/* Compare two regular files' contents: 1 equal, 0 different, -errno. */
int files_equal_at(int dirfd_a, const char *a, int dirfd_b, const char *b);
/* Read the whole open file fd (at most max bytes; -EFBIG beyond).  *out is NUL-terminated. */
int read_fd(int fd, size_t max, char **out, size_t *len);

#endif
