/* The transaction handle's state machine (txn/txstate.c): the table of moves against a list
 * written out here on its own, the invariants each state asserts, and the states a handle
 * passes through on each path of its life, driven through the library: a commit, a keep and
 * later commit, a rollback, a refusal, a conflict (committing put back to evaluated, then
 * rolled back), a commit whose marker cannot be written (the same), and a session's
 * savepoints.  This is the test build: a move the table refuses aborts the process, so every
 * path here also checks the moves the library makes on its own.
 *
 * Only harmless commands run (this test is not jailed), in its own workspace under TMPDIR;
 * tests/run.sh runs it as root and as an unprivileged user. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "txbox.h"
#include "txn/tx.h"

static char dir[200], ws_path[256], spare[600];

/* Every legal move, written out apart from the table it checks. */
static const struct {
        enum tx_state from, to;
} legal[] = {
        {TX_NEW, TX_SEALED},           {TX_NEW, TX_DENIED},          {TX_NEW, TX_ROLLED_BACK},
        {TX_SEALED, TX_RAN},           {TX_SEALED, TX_PENDING},      {TX_SEALED, TX_DENIED},
        {TX_SEALED, TX_ROLLED_BACK},   {TX_RAN, TX_EVALUATED},       {TX_RAN, TX_ROLLED_BACK},
        {TX_EVALUATED, TX_EVALUATED},  {TX_EVALUATED, TX_COMMITTING}, {TX_EVALUATED, TX_COMMITTED},
        {TX_EVALUATED, TX_PENDING},    {TX_EVALUATED, TX_ROLLED_BACK}, {TX_COMMITTING, TX_COMMITTED},
        {TX_COMMITTING, TX_EVALUATED}, {TX_COMMITTING, TX_STUCK},    {TX_PENDING, TX_RAN},
        {TX_PENDING, TX_EVALUATED},    {TX_PENDING, TX_PENDING},     {TX_PENDING, TX_ROLLED_BACK},
};

static bool listed(enum tx_state from, enum tx_state to)
{
        for (size_t i = 0; i < sizeof(legal) / sizeof(legal[0]); i++)
                if (legal[i].from == from && legal[i].to == to)
                        return true;
        return false;
}

static void test_table(void)
{
        int wrong = 0, allowed = 0;

        for (int f = 0; f < TX_NSTATES; f++)
                for (int t = 0; t < TX_NSTATES; t++) {
                        bool a = tx_state_allows(f, t);
                        allowed += a;
                        if (a != listed(f, t)) {
                                wrong++;
                                printf("# %s -> %s: the table says %s\n", tx_state_name(f), tx_state_name(t),
                                       a ? "allowed" : "refused");
                        }
                }
        is_int(wrong, 0, "the table allows exactly the listed moves");
        is_int(allowed, (int)(sizeof(legal) / sizeof(legal[0])), "and %d of them", allowed);
        for (int s = TX_COMMITTED; s < TX_NSTATES; s++) {
                int out = 0;
                for (int t = 0; t < TX_NSTATES; t++)
                        out += tx_state_allows(s, t);
                is_int(out, 0, "%s is final", tx_state_name(s));
        }
        ok(!tx_state_allows(TX_NSTATES, TX_NEW) && !tx_state_allows(TX_NEW, TX_NSTATES),
           "no move from or to a state that does not exist");
        is_str(tx_state_name(TX_NSTATES), "invalid", "which has no name");
}

static void test_invariants(void)
{
        struct txbox_tx tx = {0};

        tx.state = TX_NEW;
        ok(!tx_state_broken(&tx), "a new handle without a row holds");
        tx.in_log = true;
        ok(tx_state_broken(&tx), "a new one with a row does not: %s", tx_state_broken(&tx));
        tx.state = TX_SEALED;
        ok(!tx_state_broken(&tx), "a sealed one with its row holds");
        tx.in_log = false;
        ok(tx_state_broken(&tx), "one without: %s", tx_state_broken(&tx));
        tx.state = TX_COMMITTED;
        tx.rec.outcome = TXBOX_PENDING;
        tx.in_log = true;
        ok(tx_state_broken(&tx), "committed with a pending record: %s", tx_state_broken(&tx));
        tx.rec.outcome = TXBOX_COMMITTED;
        ok(!tx_state_broken(&tx), "committed with its committed row holds");
        tx.state = TX_RAN;
        tx.sb = (struct sandbox *)&tx; /* never used: only tested for NULL */
        ok(tx_state_broken(&tx), "ran but still holding a sandbox: %s", tx_state_broken(&tx));
        tx.sb = NULL;
        tx.state = TX_PENDING;
        tx.rec.outcome = TXBOX_ROLLED_BACK;
        ok(tx_state_broken(&tx), "pending whose record is not: %s", tx_state_broken(&tx));
}

/* begin and run sh -c script; NULL on failure.  The state after the run in *after_run. */
static struct txbox_tx *begin_run(struct txbox_ws *ws, const char *script, struct txbox_run_result *res,
                                  enum tx_state *after_run)
{
        char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
        struct txbox_run_opts opts = {0};
        struct txbox_error err = {0};
        struct txbox_tx *tx = NULL;

        if (txbox_tx_begin(ws, argv, &tx, &err) < 0) {
                printf("# begin: %s\n", err.msg);
                return NULL;
        }
        is_str(tx_state_name(tx->state), "new", "begun: new");
        if (txbox_tx_check_policy(tx, NULL, NULL, &err) != 1 || txbox_tx_run(tx, &opts, res, &err) < 0) {
                printf("# run: %s\n", err.msg);
                txbox_tx_free(tx);
                return NULL;
        }
        *after_run = tx->state;
        return tx;
}

static void test_commit_paths(struct txbox_ws *ws)
{
        struct txbox_run_result res;
        struct txbox_error err = {0};
        enum tx_state ran = TX_NSTATES;
        char id[32];
        int status;

        struct txbox_tx *tx = begin_run(ws, "echo a > a", &res, &ran);
        if (!tx)
                return;
        is_str(tx_state_name(ran), "ran", "run: ran");
        ok(txbox_tx_finish(tx, TXBOX_COMMIT_AUTO, &res, &status, NULL, &err) == 0, "finish: %s", err.msg);
        is_str(tx_state_name(tx->state), "committed", "finished: committed");
        txbox_tx_free(tx);

        tx = begin_run(ws, "echo b > b", &res, &ran);
        if (!tx)
                return;
        ok(txbox_tx_finish(tx, TXBOX_COMMIT_KEEP, &res, &status, NULL, &err) == 0, "kept: %s", err.msg);
        is_str(tx_state_name(tx->state), "pending", "kept: pending");
        snprintf(id, sizeof(id), "%s", tx->rec.id);
        txbox_tx_free(tx);
        tx = NULL;
        ok(txbox_tx_load(ws, id, &tx, &err) == 0, "loaded: %s", err.msg);
        if (!tx)
                return;
        is_str(tx_state_name(tx->state), "pending", "loaded: pending");
        ok(txbox_tx_evaluate(tx, &err) >= 0, "evaluated: %s", err.msg);
        is_str(tx_state_name(tx->state), "evaluated", "evaluated");
        ok(txbox_tx_evaluate(tx, &err) >= 0 && tx->state == TX_EVALUATED, "evaluated again: the same");
        ok(txbox_tx_commit(tx, &err) == 0, "committed: %s", err.msg);
        is_str(tx_state_name(tx->state), "committed", "committed");
        txbox_tx_free(tx);

        tx = begin_run(ws, "echo c > c; exit 3", &res, &ran);
        if (!tx)
                return;
        ok(txbox_tx_finish(tx, TXBOX_COMMIT_AUTO, &res, &status, NULL, &err) == 0 && status == 3,
           "a failed command: %s", err.msg);
        is_str(tx_state_name(tx->state), "rolled-back", "rolled back");
        txbox_tx_free(tx);
}

static void test_denied(struct txbox_ws *ws)
{
        char *argv[] = {"/bin/sh", "-c", "rm -rf /", NULL};
        struct txbox_error err = {0};
        struct txbox_tx *tx = NULL;

        if (txbox_tx_begin(ws, argv, &tx, &err) < 0)
                return;
        is_int(txbox_tx_check_policy(tx, NULL, NULL, &err), 0, "rm -rf / is refused");
        is_str(tx_state_name(tx->state), "denied", "refused before it ran: denied");
        txbox_tx_free(tx);
}

/* The program's file is changed in the workspace before the commit: the conflict check
 * refuses it with nothing applied (still evaluated), and the rollback ends it. */
static void test_conflict(struct txbox_ws *ws)
{
        struct txbox_run_result res;
        struct txbox_error err = {0};
        enum tx_state ran;
        char path[512];

        struct txbox_tx *tx = begin_run(ws, "echo inside > a", &res, &ran);
        if (!tx)
                return;
        ok(txbox_tx_evaluate(tx, &err) >= 0, "evaluated");
        snprintf(path, sizeof(path), "%s/a", ws_path);
        FILE *f = fopen(path, "w");
        if (f) {
                fputs("outside\n", f);
                fclose(f);
        }
        is_int(txbox_tx_commit(tx, &err), -EAGAIN, "a conflict: %s", err.msg);
        is_str(tx_state_name(tx->state), "evaluated", "nothing applied: still evaluated");
        ok(txbox_tx_rollback(tx, "conflict", &err) == 0, "rolled back: %s", err.msg);
        is_str(tx_state_name(tx->state), "rolled-back", "rolled back");
        txbox_tx_free(tx);
}

/* In a child (the failpoints are read once per process, at the first; fork() copies them): the commit marker cannot be written,
 * the commit is reverted, and the handle goes committing -> evaluated -> rolled back.
 * Exit status: 0 when every state was the expected one, else the step that was not. */
static int marker_child(void)
{
        struct txbox_ws *ws = NULL;
        struct txbox_run_result res;
        struct txbox_error err = {0};
        enum tx_state ran;

        setenv("TXBOX_FAILPOINT", "commit:1:enospc", 1);
        if (txbox_ws_open(ws_path, NULL, 0, &ws, &err) < 0)
                return 10;
        struct txbox_tx *tx = begin_run(ws, "echo m > m", &res, &ran);
        if (!tx)
                return 11;
        if (txbox_tx_evaluate(tx, &err) < 0)
                return 12;
        if (txbox_tx_commit(tx, &err) != -ENOSPC)
                return 13;
        if (tx->state != TX_EVALUATED)
                return 14;
        if (txbox_tx_rollback(tx, "marker", &err) < 0 || tx->state != TX_ROLLED_BACK)
                return 15;
        txbox_tx_free(tx);
        txbox_ws_close(ws);
        return 0;
}

static void test_marker_fails(void)
{
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
                /* The child's own TAP lines would break the count: it says nothing. */
                if (!freopen("/dev/null", "w", stdout))
                        _exit(9);
                _exit(marker_child());
        }
        int st = 0;
        waitpid(pid, &st, 0);
        ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
           "a commit whose marker cannot be written: committing, evaluated, rolled back (step %d)",
           WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st));
        char path[512];
        snprintf(path, sizeof(path), "%s/m", ws_path);
        ok(access(path, F_OK) < 0, "and nothing of it is in the workspace");
}

static void test_session(struct txbox_ws *ws)
{
        char *argv[] = {"/bin/sh", "-c", "echo s >> s", NULL};
        struct txbox_record rec = {0};
        struct txbox_run_opts opts = {0};
        struct txbox_run_result res;
        struct txbox_error err = {0};
        struct txbox_tx *tx = NULL;
        int status;

        if (txbox_session_begin(ws, &rec, &err) < 0) {
                ok(0, "session begin: %s", err.msg);
                return;
        }
        for (int i = 1; i <= 2; i++) {
                ok(txbox_session_savepoint(ws, rec.id, argv, &tx, &err) == 0, "savepoint %d: %s", i, err.msg);
                if (!tx)
                        break;
                is_str(tx_state_name(tx->state), "pending", "a session between commands: pending");
                ok(txbox_tx_check_policy(tx, NULL, NULL, &err) == 1 && txbox_tx_run(tx, &opts, &res, &err) == 0,
                   "ran: %s", err.msg);
                is_str(tx_state_name(tx->state), "ran", "its command: ran");
                ok(txbox_tx_finish(tx, TXBOX_COMMIT_AUTO, &res, &status, NULL, &err) == 0, "savepoint kept: %s",
                   err.msg);
                is_str(tx_state_name(tx->state), "pending", "and the session pending again");
                txbox_tx_free(tx);
                tx = NULL;
        }
        ok(txbox_tx_load(ws, rec.id, &tx, &err) == 0 && txbox_tx_evaluate(tx, &err) >= 0 &&
           txbox_tx_commit(tx, &err) == 0, "the session committed: %s", err.msg);
        if (tx)
                is_str(tx_state_name(tx->state), "committed", "committed");
        txbox_tx_free(tx);
        txbox_record_clear(&rec);
}

/* A claimer killed between creating its hidden claim and renaming it into place leaves a
 * .claim-ID-PID: recovery removes it once that process is gone and nobody holds its lock;
 * one whose process lives (a claim being made) stays. */
static void test_hidden_claims(struct txbox_ws *ws)
{
        struct txbox_recover_stats st = {0};
        struct txbox_error err = {0};
        char dead[600], live[600];
        pid_t pid = fork();

        if (pid == 0)
                _exit(0);
        waitpid(pid, NULL, 0);
        snprintf(dead, sizeof(dead), "%s/active/.claim-0123456789-%d", ws->state, (int)pid);
        snprintf(live, sizeof(live), "%s/active/.claim-abcdef0123-%d", ws->state, (int)getpid());
        int a = open(dead, O_CREAT | O_WRONLY | O_CLOEXEC, 0600), b = open(live, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        ok(a >= 0 && b >= 0, "two hidden claims made");
        if (a >= 0)
                close(a);
        if (b >= 0)
                close(b);
        ok(txbox_recover(ws, &st, &err) == 0, "recover: %s", err.msg);
        ok(access(dead, F_OK) < 0, "the dead claimer's hidden claim is gone");
        ok(access(live, F_OK) == 0, "a live claimer's stays");
        unlink(live);
}

static ino_t ino_of(int fd)
{
        struct stat st;
        return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

/* A released claim is kept, renamed, for this process's next claim (no inode made and
 * freed per transaction of a server): the next claim is the same file, locked, under its
 * new name.  One whose lock another holds (a process that waited for the released claim
 * and has not seen its name gone yet) is dropped and the claim made anew; the workspace's
 * close removes the spare (main). */
static void test_spare_claim(struct txbox_ws *ws)
{
        struct txbox_error err = {0};
        char a[600];

        snprintf(spare, sizeof(spare), "%s/active/.claim-spare-%d", ws->state, (int)getpid());
        snprintf(a, sizeof(a), "%s/active/aaaaaaaaaa", ws->state);
        ws_drop_spare_claim(ws);
        int fd = tx_claim(ws, "aaaaaaaaaa", false, &err);
        ok(fd >= 0, "claim a: %s", err.msg);
        if (fd < 0)
                return;
        ino_t first = ino_of(fd);
        tx_unclaim(ws, "aaaaaaaaaa", fd);
        ok(access(a, F_OK) < 0 && access(spare, F_OK) == 0, "a released claim is kept under the spare name");
        int other = open(spare, O_RDWR | O_CLOEXEC);
        ok(other >= 0 && flock(other, LOCK_EX | LOCK_NB) == 0, "... unlocked");
        flock(other, LOCK_UN);
        fd = tx_claim(ws, "bbbbbbbbbb", false, &err);
        ok(fd >= 0 && ino_of(fd) == first, "the next claim is the same file: %s", err.msg);
        ok(access(spare, F_OK) < 0, "... no longer under the spare name");
        ok(flock(other, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK, "... and locked again");
        ok(tx_claim(ws, "bbbbbbbbbb", false, &err) == -EBUSY, "a second claim of it is refused (busy)");
        tx_unclaim(ws, "bbbbbbbbbb", fd);
        ok(flock(other, LOCK_EX | LOCK_NB) == 0, "another holds the spare's lock (a waiter)");
        err = (struct txbox_error){0};
        fd = tx_claim(ws, "cccccccccc", false, &err);
        ok(fd >= 0 && ino_of(fd) != first, "... the next claim is a new file: %s", err.msg);
        ok(access(spare, F_OK) < 0, "... and the spare is gone");
        close(other);
        tx_unclaim(ws, "cccccccccc", fd);
        ok(access(spare, F_OK) == 0, "released again, kept again");
}

int main(void)
{
        struct txbox_ws *ws = NULL;
        struct txbox_error err = {0};

        test_table();
        test_invariants();
        if (!tap_workspace(dir, sizeof(dir), "txbox-txstate", ws_path, sizeof(ws_path)))
                return 1;
        test_marker_fails(); /* first: no failpoint may have been read in this process yet */
        ok(txbox_ws_open(ws_path, NULL, TXBOX_OPEN_RECOVER, &ws, &err) == 0, "open the workspace: %s",
           err.msg);
        if (!ws)
                return tap_done();
        test_commit_paths(ws);
        test_denied(ws);
        test_conflict(ws);
        test_session(ws);
        test_hidden_claims(ws);
        test_spare_claim(ws);
        txbox_ws_close(ws);
        ok(access(spare, F_OK) < 0, "closing the workspace removes the spare claim");
        tap_rmtree(dir);
        return tap_done();
}
