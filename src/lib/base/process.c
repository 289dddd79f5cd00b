/* Threads and children. */
#include "base/process.h"

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

int thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
        sigset_t all, old;

        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int r = pthread_create(t, NULL, fn, arg);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return r;
}

int die_with_parent(pid_t parent)
{
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                return -errno;
        if (parent > 0 && getppid() != parent)
                return -ESRCH; /* reparented: the parent died before the request took hold */
        return 0;
}
