/* Conflict stamps (tx_stamp_changes, tx_begin_stamp in ws.c): a transaction that begins
 * right after a commit never takes the commit's own changes for later ones, however quickly
 * it follows; a change made after it began is always later, even one in the same clock tick
 * as its begin: a write, a chmod, a rename over the path of an entry made long before, a
 * delete.  Each round plays a commit (a file made, stat'ed as the changeset build does,
 * renamed into place), a begin, then an outside change, on a real filesystem under TMPDIR.
 *
 * tests/run.sh runs this as root and as an unprivileged user (as-user). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/rmtree.h"
#include "tap.h"
#include "txn/tx.h"

#define ROUNDS 400
#define TICK_NS (10 * 1000000LL) /* the longest tick: HZ=100 */

static int64_t ctime_of(int dir, const char *name, bool *exists)
{
        struct stat st;

        *exists = fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
        return *exists ? (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec : 0;
}

static void put(int dir, const char *name, const char *text, int flags)
{
        int fd = openat(dir, name, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
                abort();
        close(fd);
}

/* One commit as commit_locked leaves it: renamed into place, then stamped. */
static void commit(int ws, int state, int round)
{
        char tmp[32];
        struct stat st;

        snprintf(tmp, sizeof(tmp), "new.%d", round);
        put(ws, tmp, "committed\n", O_TRUNC);
        fstatat(ws, tmp, &st, 0); /* the changeset build stats it: its next stamp may be fine */
        if (renameat(ws, tmp, ws, "f") < 0)
                abort();
        tx_stamp_changes(state);
}

/* An outside change of kind K made right after the begin; false when it could not be made. */
static bool change(int ws, int k)
{
        switch (k) {
        case 0:
                put(ws, "f", "theirs\n", O_APPEND);
                return true;
        case 1:
                return fchmodat(ws, "f", 0600, 0) == 0;
        case 2:
                return renameat(ws, "old", ws, "f") == 0; /* an inode older than the begin */
        default:
                return unlinkat(ws, "f", 0) == 0;
        }
}

int main(void)
{
        const char *tmpdir = getenv("TMPDIR") ?: "/var/tmp";
        char top[1024];
        int own = 0, missed = 0, same_tick = 0, failed = 0, gave_up = 0, late = 0;

        snprintf(top, sizeof(top), "%s/test_stamp.XXXXXX", tmpdir);
        if (!mkdtemp(top))
                return 1;
        int topfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (topfd < 0 || mkdirat(topfd, "ws", 0755) < 0 || mkdirat(topfd, "state", 0700) < 0 ||
            mkdirat(topfd, "txdir", 0700) < 0)
                return 1;
        int ws = openat(topfd, "ws", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int state = openat(topfd, "state", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int txdir = openat(topfd, "txdir", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        put(ws, "old", "made long before\n", 0);

        for (int i = 0; i < ROUNDS; i++) {
                int k = i % 4;
                bool exists;
                if (k == 2 && faccessat(ws, "old", F_OK, AT_SYMLINK_NOFOLLOW) < 0)
                        put(ws, "old", "made long before\n", 0);
                commit(ws, state, i);
                int64_t begin = tx_begin_stamp(state, txdir);
                int64_t changed = ctime_of(state, "changed", &exists);
                if (changed >= begin)
                        gave_up++;
                if (begin - changed >= 2 * TICK_NS)
                        late++;
                if (ctime_of(ws, "f", &exists) >= begin)
                        own++;
                if (!change(ws, k)) {
                        failed++;
                        continue;
                }
                int64_t ct = ctime_of(ws, "f", &exists);
                if (exists && ct < begin)
                        missed++;
                if (exists && ct - begin < TICK_NS)
                        same_tick++;
        }
        is_int(own, 0, "%d commits, each followed at once by a begin: none counts as a change after it",
               ROUNDS);
        is_int(failed, 0, "every outside change was made");
        is_int(missed, 0, "every write, chmod, rename over and delete made after a begin is seen as later");
        ok(same_tick > 0, "including changes in the begin's own clock tick (%d of %d)", same_tick,
           ROUNDS - ROUNDS / 4);
        /* How long a begin takes is not timed (a loaded machine made such an assertion fail):
         * its wait is counted in the filesystem's own ticks instead, between the commit's stamp
         * and the begin's.  The wait ends with the first stamp past the commit's (never more
         * than a tick later), and only its cap (BEGIN_WAIT_NS in ws.c) ends it sooner, with a
         * stamp no later than the commit's.  A begin that gives up at its cap fails the first;
         * one that waits on past the clock's turn is two ticks late every round and fails the
         * second, which leaves room for the rounds a busy machine delays between the two. */
        is_int(gave_up, 0, "every begin's stamp is later than the commit before it: the wait ended "
                           "when the clock passed it, not at its cap");
        ok(late <= ROUNDS / 4, "a begin's stamp is within two ticks of the commit's (%d of %d rounds not)",
           late, ROUNDS);

        if (rm_rf_at(AT_FDCWD, top) < 0) /* no shell: the path is TMPDIR's, any byte */
                printf("# could not remove %s\n", top);
        printf("1..%d\n", tap_n);
        return tap_failed != 0;
}
