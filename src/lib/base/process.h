/* Threads and children: signals kept for the main thread, and a child tied to its parent. */
#ifndef TXBOX_PROCESS_H
#define TXBOX_PROCESS_H

#include <pthread.h>
#include <sys/types.h>

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

#endif
