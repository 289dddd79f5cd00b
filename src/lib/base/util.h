/* Internal helpers: errors, cleanup attributes, safe path operations. */
#ifndef TXBOX_UTIL_H
#define TXBOX_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "txbox.h"

#define HIDDEN __attribute__((visibility("hidden")))

/* ---- errors ---- */

/* Set err (may be NULL) to code (positive errno) and a formatted message; return -code. */
int tx_err(struct txbox_error *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Prefix err's message with context ("context: old message"); return -err->code
 * (or -EIO when err is NULL or empty). */
int tx_err_wrap(struct txbox_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- cleanup ---- */

static inline void freep(void *p) { free(*(void **)p); }
/* Close and forget: a later poll or close of the same variable must not see a number the
 * process may already have reused. */
static inline void closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
                *fd = -1;
        }
}
static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}
static inline void strv_free(char **v)
{
        if (!v)
                return;
        for (char **p = v; *p; p++)
                free(*p);
        free(v);
}
static inline void strv_freep(char ***v) { strv_free(*v); }

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_strv_ _cleanup_(strv_freep)

#define TAKE_PTR(p)                      \
        ({                               \
                __typeof__(p) _p_ = (p); \
                (p) = NULL;              \
                _p_;                     \
        })
#define TAKE_FD(fd)             \
        ({                      \
                int _fd_ = (fd); \
                (fd) = -1;      \
                _fd_;           \
        })

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- memory and strings (abort on OOM: the library cannot do anything useful then) ---- */

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrdup_or_null(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char **strv_dup(char *const *v);
size_t strv_len(char *const *v);
bool str_has_prefix(const char *s, const char *prefix);
/* A positive count or size, digits with an optional K, M or G (binary) suffix; 0 when s is
 * anything else, zero, or does not fit in 64 bits once multiplied. */
uint64_t parse_size(const char *s);
/* Write s to f with every byte that would break a line-oriented file (space and below, '%',
 * DEL) as %XX: the escaping of paths in the journal and the trust store. */
void fput_pct_escaped(FILE *f, const char *s);
/* True when path equals dir or lies beneath it (both relative or both absolute). */
bool path_is_within(const char *path, const char *dir);

/* A growable array of strings. */
struct strvec {
        char **v;
        size_t n, cap;
};
void strvec_push(struct strvec *sv, char *s); /* takes ownership */
void strvec_clear(struct strvec *sv);
/* True when an entry of sv is "PATH (...)": conflict lists name each path once. */
bool strvec_lists_path(const struct strvec *sv, const char *path);

/* ---- time ---- */
int64_t now_ms(void);
int64_t mono_us(void);
/* This boot's id (/proc/sys/kernel/random/boot_id, 36 characters), or "" when unreadable:
 * a kernel that has not rebooted still holds in its page cache every write made since. */
const char *boot_id(void);

/* pthread_create() for txbox's helper threads, with every signal blocked in the new thread:
 * a process-directed signal (SIGTERM to txbox) must reach the main thread, which reads it
 * from a signalfd while a program runs; a thread that left it unblocked would take it, and
 * its default action would end txbox mid-transaction.  0 or a positive error number. */
int thread_start(pthread_t *t, void *(*fn)(void *), void *arg);
/* In a child just forked or cloned: be sent SIGKILL when the parent dies, and make sure it
 * had not died already (it may have before the request took hold; we would then wait on an
 * init that never signals).  parent: the pid the child must find as its parent, taken before
 * the fork; 0 for the first process of a new pid namespace, which sees no parent (getppid()
 * is 0 there), where the caller must learn of the parent's death another way (EOF on a pipe
 * the parent holds).  0, or -errno: the caller must then exit. */
int die_with_parent(pid_t parent);
/* TXBOX_TRACE=1: print the time since the process's first mark, and what, to stderr (for
 * finding where a transaction's time goes; free when unset). */
void trace_mark(const char *what);

/* ---- files (side effects) ---- */

/* Remove name (a file or a whole tree) beneath dirfd; ENOENT is success.  Never follows
 * symlinks; makes unreadable directories (overlay's work/work) readable to descend. */
int rm_rf_at(int dirfd, const char *name);
/* A stream over the entries of the open directory DIRFD from its start, on a duplicate
 * (closedir leaves DIRFD open; the two share a position, which *at() calls ignore); NULL
 * with errno set on failure. */
DIR *dir_stream(int dirfd);
/* Remove everything in the open directory DIRFD (not it); allocates nothing. */
int rm_children(int dirfd);
/* mkdir -p of relpath beneath dirfd (components created with mode). */
int mkdir_p_at(int dirfd, const char *relpath, mode_t mode);
int mkdir_p(const char *path, mode_t mode);
/* ---- beneath a root: the one way txbox, acting as the user, reaches data the sandboxed
 * program controlled (the workspace, a transaction's layers, what undo keeps) ----
 * Every such path is hostile input: a relative path opened beneath a directory fd that is
 * its root, never following a symlink in any component, never leaving the root, and
 * content read from the descriptor, never from a path joined as a string
 * (docs/SECURITY.md, "Where txbox acts on what the program left"). */

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
int fsync_dirfd_at(int dirfd, const char *relpath);
/* Write data to dirfd/name atomically (temp + fsync + rename + fsync dir when durable). */
int write_file_atomic_at(int dirfd, const char *name, const void *data, size_t len, bool durable);
/* Read a whole file (at most max bytes; -EFBIG beyond).  *out is NUL-terminated. */
int read_file_at(int dirfd, const char *name, size_t max, char **out, size_t *len);
/* Compare two regular files' contents: 1 equal, 0 different, -errno. */
int files_equal_at(int dirfd_a, const char *a, int dirfd_b, const char *b);
/* Read the whole open file fd (at most max bytes; -EFBIG beyond).  *out is NUL-terminated. */
int read_fd(int fd, size_t max, char **out, size_t *len);
/* Random lowercase hex string of 2*nbytes characters. */
void random_hex(char *out, size_t nbytes);

/* ---- text for humans ----
 * Names, command lines and messages that reach a terminal come from the program or the
 * model: a byte of them could move the cursor, erase or forge lines, set the window title or
 * write the clipboard.  This is the one escaping for everything txbox writes for humans: C0
 * controls, DEL, C1 controls (U+0080-U+009F), bidirectional overrides (U+202A-U+202E,
 * U+2066-U+2069) and bytes that are not UTF-8 become visible escapes (\n, \t, \r, \xHH,
 * \uHHHH); everything else passes unchanged. */
enum {
        HUMAN_LINE = 0,       /* one line: newline and tab are escaped too */
        HUMAN_KEEP_LINES = 1, /* text of several lines: newline and tab pass */
};
/* s escaped (NULL: ""), malloc'd. */
char *human_escape(const char *s, unsigned flags);
/* A size for people: "512 B", "97.7 KiB", "1.5 GiB". */
void human_size(uint64_t bytes, char *buf, size_t size);
/* The first n bytes of s escaped, written to f. */
void human_write(FILE *f, const char *s, size_t n, unsigned flags);
/* True when s needs no escaping (HUMAN_LINE). */
bool human_plain(const char *s);

/* ---- failpoints (test builds only) ----
 * TXBOX_FAILPOINT=NAME:N makes the process kill itself with SIGKILL when failpoint NAME is
 * reached for the N-th time (counting from 0), to test crash recovery at every step;
 * TXBOX_FAILPOINT=NAME:N:enospc makes that step fail with ENOSPC instead (returns -ENOSPC;
 * otherwise 0); :segv raises SIGSEGV there (a bug), :abort aborts (out of memory), :hang
 * never returns, :full fails it with ENOSPC that time and every time after (a disk
 * that stays full).  Up to four, comma-separated (commit:3:enospc,revert:1: a commit fails,
 * and its revert is cut short).  Every action only makes a step fail, never skips one:
 * set in a real run it can stop txbox, not weaken it (the "judge" point, reached by every
 * policy decision, ends in a refusal whatever the action). */
#ifdef TXBOX_TESTING
int failpoint(const char *name);
/* Set how often failpoint NAME counts as reached: a judge process (policy/judge.h), a copy
 * of its supervisor forked once, continues the supervisor's count of decisions. */
void failpoint_set_count(const char *name, long count);
#else
/* The release build has no failpoint: the environment cannot reach this code. */
static inline int failpoint(const char *name)
{
        (void)name;
        return 0;
}
static inline void failpoint_set_count(const char *name, long count)
{
        (void)name, (void)count;
}
#endif

#endif
