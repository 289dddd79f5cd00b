/* The savepoint discipline of sessions (session.c, tx_session_tidy): in a real state dir, a
 * session's tx/ID/ is planted with what a crash may leave (a half-run step sp/N.new, a
 * half-removed sp/.gone-N, a number past a gap, names that only look like numbers, a decided
 * drop-to, a fold cut short) and tidied: exactly the savepoints 1..n without a gap stay, a
 * decided rollback --to or fold is finished, and the count the session reports is n.  Each
 * session is begun through the API (nothing runs) and rolled back; one last session runs a
 * few harmless commands as savepoints, in this test's own workspace under TMPDIR.
 * The crash campaigns cut a tidy short at each of its failpoints (TXBOX_FAILPOINT, in a copy
 * of this test run with --tidy DIR, killed there as by a power cut), then tidy again.
 *
 * tests/run.sh runs this as root and as an unprivileged user (as-user). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fileio.h"
#include "tap.h"
#include "txbox.h"
#include "txn/tx.h"

static struct txbox_ws *ws;
static char dir[200];

/* mkdir -p of path under dirfd (all parts ours, made fresh). */
static void mk(int dirfd, const char *path)
{
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", path);
        for (char *p = buf + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        mkdirat(dirfd, buf, 0755);
                        *p = '/';
                }
        if (mkdirat(dirfd, buf, 0755) < 0 && errno != EEXIST)
                printf("# mkdir %s: %m\n", path);
}

static void put(int dirfd, const char *path, const char *text)
{
        int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
                printf("# write %s: %m\n", path);
        if (fd >= 0)
                close(fd);
}

static bool has(int dirfd, const char *path)
{
        struct stat st;
        return fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names in dirfd/path, sorted, space-separated ("-" when path is missing). */
static const char *names(int dirfd, const char *path)
{
        static char out[512];
        char *v[64];
        size_t n = 0, len = 0;
        int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;

        if (!d) {
                if (fd >= 0)
                        close(fd);
                return "-";
        }
        while ((de = readdir(d)) && n < 64)
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        v[n++] = strdup(de->d_name);
        closedir(d);
        qsort(v, n, sizeof(v[0]), by_name);
        out[0] = '\0';
        for (size_t i = 0; i < n; i++) {
                len += snprintf(out + len, sizeof(out) - len, "%s%s", i ? " " : "", v[i]);
                free(v[i]);
        }
        return out;
}

/* Begin a session (nothing runs) and open its tx/ID/; -1 on failure. */
static int begin(char *id, size_t size)
{
        struct txbox_record rec = {0};
        struct txbox_error err = {0};
        char path[512];

        if (txbox_session_begin(ws, &rec, &err) < 0) {
                printf("# txbox_session_begin: %s\n", err.msg);
                return -1;
        }
        snprintf(id, size, "%s", rec.id);
        txbox_record_clear(&rec);
        snprintf(path, sizeof(path), "%s/tx/%s", txbox_ws_state_path(ws), id);
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || !has(fd, "session") || !has(fd, "sp"))
                printf("# %s: no session marker or sp/\n", path);
        return fd;
}

static void end(int fd, const char *id)
{
        struct txbox_tx *tx = NULL;
        struct txbox_error err = {0};

        close(fd);
        if (txbox_tx_load(ws, id, &tx, &err) < 0 || txbox_tx_rollback(tx, "test", &err) < 0)
                printf("# rollback %s: %s\n", id, err.msg);
        txbox_tx_free(tx);
}

/* A savepoint as a kept step leaves it: sp/N/upper with a file. */
static void savepoint(int fd, const char *name)
{
        char path[64];
        snprintf(path, sizeof(path), "sp/%s/upper", name);
        mk(fd, path);
        snprintf(path, sizeof(path), "sp/%s/upper/f%s", name, name);
        put(fd, path, name);
}

static bool message_says(int fd, const char *id, const char *want)
{
        char *m = tx_session_message(id, fd);
        bool found = m && strstr(m, want);
        if (!found)
                printf("# message: %s\n", m ? m : "(null)");
        free(m);
        return found;
}

/* Leftovers of crashes around savepoints 1..2: only 1 and 2 count, the rest goes. */
static void test_leftovers(void)
{
        char id[32];
        int fd = begin(id, sizeof(id));

        ok(fd >= 0, "a session begins");
        if (fd < 0)
                return;
        is_str(names(fd, "sp"), "", "a new session has no savepoint");
        ok(message_says(fd, id, "no savepoint yet"), "and says so");
        savepoint(fd, "1");
        savepoint(fd, "2");
        savepoint(fd, "3.new");    /* a step cut short while it ran */
        savepoint(fd, ".gone-4");  /* a savepoint half removed */
        savepoint(fd, "6");        /* past the gap at 5 */
        savepoint(fd, "64");
        savepoint(fd, "65");       /* past the most there can be */
        savepoint(fd, "03");       /* not a savepoint's name: a leading zero */
        savepoint(fd, "+5");
        savepoint(fd, "99999999999999999999");
        put(fd, "sp/7", "a file, no layer");
        if (symlinkat("1", fd, "sp/8") < 0)
                printf("# symlink: %m\n");
        is_str(names(fd, "sp"), "+5 .gone-4 03 1 2 3.new 6 64 65 7 8 99999999999999999999", "planted");
        ok(message_says(fd, id, "with 2 savepoints"), "before the tidy, only 1..2 count already");

        is_int(tx_session_tidy(fd, "test"), 0, "tidy");
        is_str(names(fd, "sp"), "1 2", "only savepoints 1 and 2 stay");
        is_str(names(fd, "sp/1/upper"), "f1", "savepoint 1 untouched");
        is_str(names(fd, "sp/2/upper"), "f2", "savepoint 2 untouched");
        ok(has(fd, "session") && !has(fd, "drop-to") && !has(fd, "merging"), "markers as they were");
        ok(message_says(fd, id, "with 2 savepoints"), "the session says 2 savepoints");
        is_int(tx_session_tidy(fd, "test"), 0, "a second tidy");
        is_str(names(fd, "sp"), "1 2", "changes nothing");

        /* Every load tidies: a half-run step planted again is gone once the API loads it, and
         * rollback --to counts the savepoints that count. */
        savepoint(fd, "3.new");
        savepoint(fd, "4");
        struct txbox_error err = {0};
        is_int(txbox_session_rollback_to(ws, id, 3, &err), -EINVAL,
               "rollback --to 3 of 2 savepoints refused");
        ok(strstr(err.msg, "savepoints 1 to 2"), "saying which there are: %s", err.msg);
        is_str(names(fd, "sp"), "1 2", "the load removed the leftovers");
        is_int(txbox_session_rollback_to(ws, id, 1, &err), 0, "rollback --to 1: %s", err.msg);
        is_str(names(fd, "sp"), "1", "savepoint 2 dropped");
        ok(!has(fd, "drop-to"), "the decision is gone once carried out");
        ok(message_says(fd, id, "with 1 savepoint:"), "1 savepoint");
        end(fd, id);
}

/* A decided rollback --to K (drop-to durable) that a crash cut short: whoever tidies finishes
 * it; garbage in drop-to drops them all (a rollback was asked: fail closed). */
static void test_drop_to(void)
{
        static const struct {
                const char *planted, *drop_to, *left, *what;
        } cases[] = {
                {"1 2 3 4", "2", "1 2", "drop-to 2 of 4"},
                {"1 2 4", "1", "1", "drop-to 1, a gap above 2"},
                {"1 2 3", "0", "", "drop-to 0: all go"},
                {"1 2", "5", "1 2", "drop-to above the count: what counts stays"},
                {"1 2 3", "x", "", "garbage: all go"},
                {"1 2 3", "02", "", "a leading zero is garbage: all go"},
                {"1 2 3", "", "", "empty: all go"},
                {"1 2 3", "-1", "", "a sign is garbage: all go"},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char id[32], buf[64];
                int fd = begin(id, sizeof(id));
                if (fd < 0) {
                        ok(0, "%s: a session begins", cases[i].what);
                        continue;
                }
                snprintf(buf, sizeof(buf), "%s", cases[i].planted);
                for (char *s = NULL, *t = strtok_r(buf, " ", &s); t; t = strtok_r(NULL, " ", &s))
                        savepoint(fd, t);
                savepoint(fd, ".gone-3"); /* what the cut-short retire left */
                put(fd, "drop-to", cases[i].drop_to);
                is_int(tx_session_tidy(fd, "test"), 0, "%s: tidy", cases[i].what);
                is_str(names(fd, "sp"), cases[i].left, "%s: savepoints left", cases[i].what);
                ok(!has(fd, "drop-to") && has(fd, "session"), "%s: decision carried out, still a session",
                   cases[i].what);
                end(fd, id);
        }
}

/* A fold for commit cut short: savepoint 1 was folded and retired, 2 was half folded (one
 * entry of its directory moved), 3 not begun.  The tidy resumes it: the layers merge, newer
 * over older, into tx/ID/upper and the session becomes an ordinary pending transaction. */
static void test_merging(void)
{
        char id[32];
        int fd = begin(id, sizeof(id));

        ok(fd >= 0, "a session begins");
        if (fd < 0)
                return;
        /* savepoint 1 (folded): a, d/x, keep */
        mk(fd, "upper/d");
        put(fd, "upper/a", "a1");
        put(fd, "upper/d/x", "x1");
        put(fd, "upper/keep", "k1");
        savepoint(fd, ".gone-1");
        /* savepoint 2, half folded: d/y moved already; d/z and a (over a1) left */
        put(fd, "upper/d/y", "y2");
        mk(fd, "sp/2/upper/d");
        put(fd, "sp/2/upper/d/z", "z2");
        put(fd, "sp/2/upper/a", "a2");
        /* savepoint 3: a again, and a directory replaced by a file */
        mk(fd, "sp/3/upper");
        put(fd, "sp/3/upper/a", "a3");
        mk(fd, "sp/3/upper/e");
        put(fd, "sp/3/upper/e/in", "e3");
        put(fd, "merging", "");

        is_int(tx_session_tidy(fd, "test"), 0, "tidy resumes the fold");
        is_str(names(fd, "upper"), "a d e keep", "the folded layer");
        is_str(names(fd, "upper/d"), "x y z", "a directory merged from three layers");
        char *s = NULL;
        ok(read_file_at(fd, "upper/a", 16, &s, NULL) >= 0 && s && !strcmp(s, "a3"), "the newest a wins: %s",
           s ? s : "(none)");
        free(s);
        is_str(names(fd, "upper/e"), "in", "a new directory moved whole");
        ok(!has(fd, "sp") && !has(fd, "session") && !has(fd, "merging"),
           "savepoints and markers gone: an ordinary pending transaction");
        ok(message_says(fd, id, "folded for commit"), "and it says so");
        is_int(tx_session_tidy(fd, "test"), 0, "a second tidy");
        is_str(names(fd, "upper"), "a d e keep", "changes nothing");
        end(fd, id);
}

/* A pending transaction that is no session: the tidy leaves it alone, whatever is in it. */
static void test_not_session(void)
{
        char id[32];
        int fd = begin(id, sizeof(id));

        ok(fd >= 0, "a session begins");
        if (fd < 0)
                return;
        savepoint(fd, "1");
        savepoint(fd, "3.new");
        put(fd, "drop-to", "0");
        unlinkat(fd, "session", 0);
        is_int(tx_session_tidy(fd, "test"), 0, "tidy of no session");
        is_str(names(fd, "sp"), "1 3.new", "touches nothing in sp/");
        ok(has(fd, "drop-to"), "nor a drop-to");
        unlinkat(fd, "drop-to", 0);
        end(fd, id);
}

/* One savepoint through the driver, as txbox run --tx ID does; its outcome's name. */
static const char *step(const char *id, const char *shell)
{
        static char out[32];
        struct txbox_command cmd = {.shell = shell, .session = id};
        struct txbox_command_result res;
        struct txbox_error err = {0};

        if (txbox_command_run(ws, &cmd, &res, &err) < 0) {
                printf("# txbox_command_run: %s\n", err.msg);
                return "error";
        }
        snprintf(out, sizeof(out), "%s", txbox_outcome_name(res.rec.outcome));
        txbox_command_result_clear(&res);
        return out;
}

/* A whole session through the API, harmless commands only: a kept savepoint counts, a
 * failed one leaves no trace, a later one sees the earlier ones' files, nothing reaches the
 * workspace before the commit, rollback --to drops the top, the commit folds the rest. */
static void test_api_flow(const char *ws_path)
{
        struct txbox_tx *tx = NULL;
        struct txbox_error err = {0};
        char id[32], path[512];
        int fd = begin(id, sizeof(id));
        const char *pending = txbox_outcome_name(TXBOX_PENDING);

        ok(fd >= 0, "a session begins");
        if (fd < 0)
                return;
        is_str(step(id, "echo one > f"), pending, "savepoint 1 kept, the session pending");
        is_str(names(fd, "sp"), "1", "sp/1 counts");
        is_str(step(id, "echo two > g; exit 1"), pending, "a failing command: the session stays pending");
        is_str(names(fd, "sp"), "1", "its savepoint was dropped, no staging name left");
        is_str(step(id, "cat f > h && echo three > k"), pending, "savepoint 2 reads savepoint 1's file");
        is_str(names(fd, "sp"), "1 2", "sp/1 and sp/2 count");
        ok(message_says(fd, id, "with 2 savepoints"), "2 savepoints");
        snprintf(path, sizeof(path), "%s/f", ws_path);
        ok(access(path, F_OK) < 0, "nothing in the workspace before the commit");
        is_str(names(fd, "sp/2/upper"), "h k", "savepoint 2's layer holds only its own changes");
        is_int(txbox_session_rollback_to(ws, id, 1, &err), 0, "rollback --to 1: %s", err.msg);
        is_str(names(fd, "sp"), "1", "savepoint 2 dropped");
        close(fd);
        ok(txbox_tx_load(ws, id, &tx, &err) == 0 && txbox_tx_evaluate(tx, &err) >= 0 &&
           txbox_tx_commit(tx, &err) == 0, "the session commits: %s", err.msg);
        txbox_tx_free(tx);
        is_str(names(-1, ws_path), "f", "the workspace holds savepoint 1's file only");
}

/* The numbers in sp/ form 1..m without a gap (m in *m), nothing else numbered. */
static bool numbered_prefix(int fd, int *m)
{
        char name[16];
        int k = 0;
        *m = 0;
        while (k < 70) {
                snprintf(name, sizeof(name), "sp/%d", ++k);
                if (has(fd, name) && *m == k - 1)
                        *m = k;
                else if (has(fd, name))
                        return false;
        }
        return true;
}

/* Tidy tx/ID/ in a copy of this test with failpoint spec fp; 1 when the copy was cut short
 * (killed at the failpoint), 0 when it tidied to the end, -1 on any other exit. */
static int tidy_cut(const char *id, const char *fp)
{
        char path[512];
        int status;

        snprintf(path, sizeof(path), "%s/tx/%s", txbox_ws_state_path(ws), id);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
                setenv("TXBOX_FAILPOINT", fp, 1);
                execl("/proc/self/exe", "test_session", "--tidy", path, (char *)NULL);
                _exit(127);
        }
        if (pid < 0 || waitpid(pid, &status, 0) != pid)
                return -1;
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
                return 1;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* A decided rollback --to 2 of 5 savepoints, cut short at each step of its tidy: what is
 * left numbered is always a prefix (the top goes first) holding savepoints 1 and 2, and
 * the next tidy finishes it. */
static void test_drop_to_cut(void)
{
        int cuts = 0, bad = 0, r = 1;
        char fp[32];

        for (int n = 0; r == 1 && n < 40; n++) {
                char id[32];
                int fd = begin(id, sizeof(id)), m = 0;
                if (fd < 0) {
                        bad++;
                        break;
                }
                for (int k = 1; k <= 5; k++) {
                        char name[8];
                        snprintf(name, sizeof(name), "%d", k);
                        savepoint(fd, name);
                }
                savepoint(fd, "6.new");
                put(fd, "drop-to", "2");
                snprintf(fp, sizeof(fp), "cut:%d", n);
                r = tidy_cut(id, fp);
                cuts += r == 1;
                if (r < 0 || !numbered_prefix(fd, &m) || m < 2 || (m > 2 && !has(fd, "drop-to"))) {
                        printf("# cut at %d: %s, drop-to %s\n", n, names(fd, "sp"),
                               has(fd, "drop-to") ? "kept" : "gone");
                        bad++;
                }
                if (tx_session_tidy(fd, "test") < 0 || strcmp(names(fd, "sp"), "1 2") || has(fd, "drop-to")) {
                        printf("# after the cut at %d and a tidy: %s\n", n, names(fd, "sp"));
                        bad++;
                }
                end(fd, id);
        }
        ok(cuts >= 4, "rollback --to was cut short at %d steps", cuts);
        ok(r == 0, "and tidied to the end without a cut");
        is_int(bad, 0, "each cut left a prefix with 1 and 2 and a decision the next tidy finished");
}

/* A fold for commit cut short at each of its steps, then resumed: the result is always the
 * fold's, newest layer over older.  Savepoint 3 replaces by a file the directory d that 1
 * made and 2 merged into (which leaves 2's own d behind, empty): a layer folded again after
 * a later one would bring the directory back. */
static void test_fold_cut(void)
{
        int cuts = 0, bad = 0, r = 1;
        char fp[32];

        for (int n = 0; r == 1 && n < 40; n++) {
                char id[32];
                int fd = begin(id, sizeof(id));
                if (fd < 0) {
                        bad++;
                        break;
                }
                mk(fd, "upper");
                mk(fd, "sp/1/upper/d");
                put(fd, "sp/1/upper/d/x", "x1");
                put(fd, "sp/1/upper/a", "a1");
                mk(fd, "sp/2/upper");
                mk(fd, "sp/2/upper/d");
                put(fd, "sp/2/upper/d/y", "y2");
                put(fd, "sp/2/upper/b", "b2");
                mk(fd, "sp/3/upper/c");
                put(fd, "sp/3/upper/d", "d3");
                put(fd, "sp/3/upper/a", "a3");
                put(fd, "sp/3/upper/c/in", "c3");
                put(fd, "merging", "");
                snprintf(fp, sizeof(fp), "fold:%d", n);
                r = tidy_cut(id, fp);
                cuts += r == 1;
                if (r < 0 || tx_session_tidy(fd, "test") < 0)
                        bad++;
                char *a = NULL, *d = NULL;
                struct stat st;
                read_file_at(fd, "upper/a", 16, &a, NULL);
                if (strcmp(names(fd, "upper"), "a b c d") || !a || strcmp(a, "a3") ||
                    fstatat(fd, "upper/d", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
                    read_file_at(fd, "upper/d", 16, &d, NULL) < 0 || strcmp(d, "d3") || has(fd, "sp") ||
                    has(fd, "session") || has(fd, "merging")) {
                        printf("# cut at %d: upper holds %s, a %s\n", n, names(fd, "upper"), a ? a : "-");
                        bad++;
                }
                free(a);
                free(d);
                end(fd, id);
        }
        ok(cuts >= 4, "the fold was cut short at %d steps", cuts);
        ok(r == 0, "and folded to the end without a cut");
        is_int(bad, 0, "each fold resumed gave the fold's result");
}

int main(int argc, char **argv)
{
        struct txbox_error err = {0};
        char ws_path[256];

        if (argc == 3 && !strcmp(argv[1], "--tidy")) { /* a copy cut short by a failpoint */
                int fd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                return fd >= 0 && tx_session_tidy(fd, "cut") == 0 ? 0 : 1;
        }

        if (!tap_workspace(dir, sizeof(dir), "txbox-session", ws_path, sizeof(ws_path)))
                return 1;
        unsetenv("TXBOX_FAILPOINT");
        ok(txbox_ws_open(ws_path, NULL, TXBOX_OPEN_RECOVER, &ws, &err) == 0, "open the workspace: %s",
           err.msg);
        if (ws) {
                test_leftovers();
                test_drop_to();
                test_merging();
                test_not_session();
                test_drop_to_cut();
                test_fold_cut();
                test_api_flow(ws_path);
                txbox_ws_close(ws);
        }
        tap_rmtree(dir);
        return tap_done();
}
