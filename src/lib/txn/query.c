/* Reading the log: list, show, and a unified diff of one transaction. */
#define _GNU_SOURCE
#include <limits.h>
#include <spawn.h>
#include <sys/wait.h>

#include "txn/tx.h"

extern char **environ;

/* A workspace opened read-only that has no state dir: no transaction ever ran there. */
static int no_such(struct txbox_ws *ws, const char *id, struct txbox_error *err)
{
        if (!id)
                return tx_err(err, ENOENT, "no transactions in workspace '%s' yet", ws->path);
        return tx_err(err, ENOENT, "no transaction '%s': there are no transactions in workspace '%s' yet", id,
                      ws->path);
}

int txbox_log(struct txbox_ws *ws, int limit, struct txbox_record **out, size_t *n, struct txbox_error *err)
{
        if (ws->no_state) {
                *out = NULL;
                *n = 0;
                return 0;
        }
        return audit_list(ws->audit, limit, out, n, err);
}

int txbox_show(struct txbox_ws *ws, const char *id, struct txbox_record *out, struct txbox_error *err)
{
        if (ws->no_state)
                return no_such(ws, id, err);
        return audit_get(ws->audit, id, out, err);
}

/* The two sides of a diff for a transaction in a given state: directory fds, each the root
 * beneath which the record's paths are opened (-1: that side is empty). */
struct diff_sides {
        int old_root, new_root;
};

static int tx_area(struct txbox_ws *ws, const char *id, const char *name)
{
        _cleanup_free_ char *rel = xasprintf("%s/%s", id, name);
        return open_beneath(ws->tx_fd, rel, O_PATH | O_DIRECTORY, 0);
}

static int diff_sides(struct txbox_ws *ws, const struct txbox_record *rec, struct diff_sides *s,
                      struct txbox_error *err)
{
        bool ws_old = rec->outcome != TXBOX_COMMITTED;
        const char *area = rec->outcome == TXBOX_PENDING     ? "upper"
                           : rec->outcome == TXBOX_COMMITTED ? "undo"
                           : rec->outcome == TXBOX_UNDONE    ? "redo"
                                                             : NULL;

        if (!area)
                return tx_err(err, ENOENT,
                              "transaction %s is %s: its changes were not kept, so there is no diff", rec->id,
                              txbox_outcome_name(rec->outcome));
        int other = tx_area(ws, rec->id, area);
        /* Without its undo data the diff would show every live file as new. */
        if (other < 0 && rec->outcome != TXBOX_PENDING && rec->npaths)
                return tx_err(err, ENOENT, "no diff for tx %s: its undo data %s", rec->id,
                              rec->started_ms <= gc_pruned_through_ms(ws)
                                      ? "was pruned by txbox gc under the workspace's retention (txbox gc "
                                        "--help)"
                                      : "is missing from the state dir");
        int live = fcntl(ws->ws_fd, F_DUPFD_CLOEXEC, 3);
        s->old_root = ws_old ? live : other;
        s->new_root = ws_old ? other : live;
        return 0;
}

/* One side of the diff, as a descriptor: the file when it is a regular file beneath its
 * root (no symlink on the way: the program made these trees), else -1 (/dev/null: absent,
 * a whiteout, a directory, a symlink, a fifo). */
static int side_fd(int root, const char *rel)
{
        if (root < 0)
                return -1;
        int fd = open_beneath_regular(root, rel, NULL);
        /* Clear of 3 and 4, where the child wants them. */
        int moved = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 10) : -1;
        if (fd >= 0)
                close(fd);
        return moved;
}

/* Run diff -u for one path, appending its output to f.  The two files reach diff(1) as
 * descriptors 3 and 4, opened here: diff never resolves a name the program chose. */
static int diff_one(FILE *f, const struct diff_sides *s, const char *rel)
{
        _cleanup_close_ int a = side_fd(s->old_root, rel), b = side_fd(s->new_root, rel);
        /* The labels are the one part of diff's output it takes from a name: escaped, so
         * that a name cannot make lines of its own (util.h, text for humans). */
        _cleanup_free_ char *name = human_escape(rel, HUMAN_LINE);
        _cleanup_free_ char *la = xasprintf("a/%s", name), *lb = xasprintf("b/%s", name);
        char *argv[] = {"diff", "-u", "--label", la, "--label", lb, a >= 0 ? "/dev/fd/3" : "/dev/null",
                        b >= 0 ? "/dev/fd/4" : "/dev/null", NULL};
        int pipefd[2], status;
        pid_t pid;
        posix_spawn_file_actions_t fa;

        if (a < 0 && b < 0)
                return 0; /* a directory, symlink or special file: no text to show */
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
        if (a >= 0)
                posix_spawn_file_actions_adddup2(&fa, a, 3);
        if (b >= 0)
                posix_spawn_file_actions_adddup2(&fa, b, 4);
        int r = posix_spawnp(&pid, "diff", &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        close(pipefd[1]);
        if (r != 0) {
                close(pipefd[0]);
                return -r;
        }
        char buf[8192];
        ssize_t n;
        while ((n = read(pipefd[0], buf, sizeof(buf))) > 0)
                fwrite(buf, 1, (size_t)n, f);
        close(pipefd[0]);
        waitpid(pid, &status, 0);
        return 0;
}

int txbox_diff(struct txbox_ws *ws, const char *id, char **out, struct txbox_error *err)
{
        struct txbox_record rec = {0};
        struct diff_sides s = {-1, -1};
        char *buf = NULL;
        size_t len = 0;
        int r;

        if (ws->no_state)
                return no_such(ws, id, err);
        if ((r = audit_get(ws->audit, id, &rec, err)) < 0)
                return r;
        if ((r = diff_sides(ws, &rec, &s, err)) < 0)
                goto out;
        FILE *f = open_memstream(&buf, &len);
        for (size_t i = 0; f && i < rec.npaths && r == 0; i++)
                r = diff_one(f, &s, rec.paths[i].path);
        if (f)
                fclose(f);
        if (r < 0) {
                free(buf);
                r = tx_err(err, -r, "cannot run diff(1): %s; install diffutils", strerror(-r));
                goto out;
        }
        *out = buf ? buf : xstrdup("");
out:
        closep(&s.old_root);
        closep(&s.new_root);
        txbox_record_clear(&rec);
        return r;
}

int txbox_log_changes(struct txbox_ws *ws, int64_t since, int limit, struct txbox_record **out,
                      int64_t **seqs, size_t *n, struct txbox_error *err)
{
        if (ws->no_state) {
                *out = NULL;
                *seqs = NULL;
                *n = 0;
                return 0;
        }
        return audit_changes(ws->audit, since, limit, out, seqs, n, err);
}
