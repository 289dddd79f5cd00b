/* Failpoints: compiled only into the test build (Makefile, HOOK_SRC). */
#include "base/failpoint.h"

#ifdef TXBOX_TESTING
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/macros.h"

enum { FP_NONE = -1, FP_KILL, FP_ENOSPC, FP_SEGV, FP_ABORT, FP_HANG, FP_FULL };
static struct {
        char name[32];
        long target, count;
        int action;
} fp[4];
static size_t nfp;
static pthread_once_t fp_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t fp_lock = PTHREAD_MUTEX_INITIALIZER;

/* NAME:N[:ACTION][,NAME:N[:ACTION]...] (ACTION: kill, the default, enospc, segv, abort, hang
 * or full), read once: the sweeper thread reaches failpoints too. */
static void fp_load(void)
{
        static const char *const actions[] = {"kill", "enospc", "segv", "abort", "hang", "full"};
        const char *env = getenv("TXBOX_FAILPOINT");
        char buf[256], *save = NULL;

        if (!env || strlen(env) >= sizeof(buf))
                return;
        strcpy(buf, env);
        for (char *spec = strtok_r(buf, ",", &save); spec && nfp < ARRAY_SIZE(fp);
             spec = strtok_r(NULL, ",", &save)) {
                char *s2 = NULL, *n = strtok_r(spec, ":", &s2), *k = strtok_r(NULL, ":", &s2);
                char *a = strtok_r(NULL, ":", &s2);
                if (!n || !k || strlen(n) >= sizeof(fp[0].name))
                        continue;
                strcpy(fp[nfp].name, n);
                fp[nfp].target = strtol(k, NULL, 10);
                fp[nfp].action = FP_KILL;
                for (int i = 0; a && i < (int)ARRAY_SIZE(actions); i++)
                        if (!strcmp(a, actions[i]))
                                fp[nfp].action = i;
                nfp++;
        }
}

/* The action due at this passage of failpoint NAME (FP_NONE: none); counts it. */
static int fp_due(const char *name)
{
        int act = FP_NONE;

        pthread_mutex_lock(&fp_lock);
        for (size_t i = 0; i < nfp && act == FP_NONE; i++) {
                if (strcmp(name, fp[i].name) != 0)
                        continue;
                if (fp[i].action == FP_FULL)
                        act = fp[i].count++ >= fp[i].target ? FP_ENOSPC : FP_NONE; /* stays full */
                else if (fp[i].count++ == fp[i].target)
                        act = fp[i].action;
        }
        pthread_mutex_unlock(&fp_lock);
        return act;
}

void failpoint_set_count(const char *name, long count)
{
        pthread_once(&fp_once, fp_load);
        pthread_mutex_lock(&fp_lock);
        for (size_t i = 0; i < nfp; i++)
                if (!strcmp(name, fp[i].name))
                        fp[i].count = count;
        pthread_mutex_unlock(&fp_lock);
}

int failpoint(const char *name)
{
        pthread_once(&fp_once, fp_load);
        switch (fp_due(name)) {
        case FP_NONE:
                return 0;
        case FP_ENOSPC:
                return -ENOSPC; /* the step fails as on a full disk */
        case FP_SEGV:
                raise(SIGSEGV); /* as a bug would */
                break;
        case FP_ABORT:
                abort(); /* as xmalloc does when memory runs out */
        case FP_HANG:
                for (;;)
                        pause();
        }
        /* A test asked for a crash here: die as a power cut or OOM kill would. */
        kill(getpid(), SIGKILL);
        _exit(137);
}
#endif
