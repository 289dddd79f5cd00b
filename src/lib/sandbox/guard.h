/* Lock-down of the program inside the sandbox: the seccomp deny-list (with user notification
 * for execve/execveat when exec checks are on, for connect when the supervisor makes them,
 * and for the rename calls) and Landlock.  The filter is compiled once per process by the
 * supervisor and only loaded, never built, in the sandbox's child. */
#ifndef TXBOX_GUARD_H
#define TXBOX_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/seccomp.h>

struct txbox_error;

/* Filter variants. */
#define GUARD_NOTIFY_EXEC 0x1u /* execve/execveat return SECCOMP_RET_USER_NOTIF */
#define GUARD_ALLOW_UNIX  0x2u /* socket(AF_UNIX) allowed (pathname sockets are then reachable) */
#define GUARD_NOTIFY_CONNECT 0x4u /* socket(AF_UNIX) allowed, connect returns SECCOMP_RET_USER_NOTIF
                                   * (sockconn.c makes it: the host's unix sockets stay out of reach) */
#define GUARD_NOTIFY_RENAME 0x8u  /* rename/renameat/renameat2 return SECCOMP_RET_USER_NOTIF */
#define GUARD_NOTIFY (GUARD_NOTIFY_EXEC | GUARD_NOTIFY_CONNECT | GUARD_NOTIFY_RENAME)

/* Compile (once per process and variant) the filter; call in the supervisor before clone.
 * cache_dir (may be NULL): a directory private to the caller where the compiled program is
 * kept between processes. */
int guard_seccomp_prepare(unsigned variant, const char *cache_dir, struct txbox_error *err);
/* Load the prepared filter into the calling thread (needs no_new_privs).  With a
 * GUARD_NOTIFY bit, returns the listener fd; otherwise 0.  -errno on failure.  Safe after
 * fork: no allocation. */
int guard_seccomp_load(unsigned variant);

/* Ask for synchronous wake-ups on listener (the supervisor, once it holds it). */
void guard_notify_tune(int listener);
/* Answer notification id: let the call proceed as if no filter were there (cont), or end it
 * with error (a positive errno; 0: success, returning 0).  0, or -errno when the listener
 * is unusable (a task that died meanwhile is no error). */
int guard_notify_answer(int listener, uint64_t id, bool cont, int error);
/* Handle one pending notification on listener fd.  A connect: made by conn (sockconn.c;
 * NULL: refused).  Then other (may be NULL) sees it: it answers the ones it owns (rename.c's
 * renames) and returns 0 or -errno as this does, or 1 for an exec.  An exec: check returns
 * true to let it proceed; it gets the program that will actually run (resolved in the
 * task's view, every symlink followed; the path as named when nothing is there, so the exec
 * fails by itself; NULL when it has no name: a memfd, a deleted file), the argv, whose
 * argv[0] the caller chose, and the caller, to ask exec_caller_tool() about (execorigin.h).
 * Returns 0, or -errno when the listener is unusable. */
struct exec_caller;
typedef bool (*guard_exec_check_fn)(void *ctx, const char *program, char *const argv[],
                                    struct exec_caller *caller);
typedef int (*guard_notify_other_fn)(void *ctx, int listener, const struct seccomp_notif *n);
struct sockconn;
int guard_notify_handle(int listener, guard_exec_check_fn check, void *ctx, struct sockconn *conn,
                        guard_notify_other_fn other, void *other_ctx);

/* Landlock. */
int guard_landlock_abi(void); /* 0: unavailable */
/* Restrict writes to the given directories (and files), scope abstract unix sockets and
 * signals to the sandbox when the ABI allows.  Returns the ABI used (0: none available), or
 * -errno when a rule could not be applied. */
int guard_landlock_apply(const char *const *write_paths);

/* Names of the kernel features the filter relies on, for txbox doctor. */
bool guard_seccomp_available(void);
bool guard_notify_available(void);

#endif
