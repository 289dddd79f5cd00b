/* Failpoints (test builds only).
 * TXBOX_FAILPOINT=NAME:N makes the process kill itself with SIGKILL when failpoint NAME is
 * reached for the N-th time (counting from 0), to test crash recovery at every step;
 * TXBOX_FAILPOINT=NAME:N:enospc makes that step fail with ENOSPC instead (returns -ENOSPC;
 * otherwise 0); :segv raises SIGSEGV there (a bug), :abort aborts (out of memory), :hang
 * never returns, :full fails it with ENOSPC that time and every time after (a disk
 * that stays full).  Up to four, comma-separated (commit:3:enospc,revert:1: a commit fails,
 * and its revert is cut short).  Every action only makes a step fail, never skips one:
 * set in a real run it can stop txbox, not weaken it (the "judge" point, reached by every
 * policy decision, ends in a refusal whatever the action). */
#ifndef TXBOX_FAILPOINT_H
#define TXBOX_FAILPOINT_H

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
