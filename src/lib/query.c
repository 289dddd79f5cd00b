/* Reading the log: list, show, and a unified diff of one transaction. */
#define _GNU_SOURCE
#include <limits.h>
#include <spawn.h>
#include <sys/wait.h>

#include "tx.h"

extern char **environ;

int txbox_log(struct txbox_ws *ws, int limit, struct txbox_record **out, size_t *n, struct txbox_error *err)
{
        return audit_list(ws->audit, limit, out, n, err);
}

int txbox_show(struct txbox_ws *ws, const char *id, struct txbox_record *out, struct txbox_error *err)
{
        return audit_get(ws->audit, id, out, err);
}

/* Where the two sides of a diff live for a transaction in a given state. */
struct diff_sides {
        char *old_root, *new_root;
};

static int diff_sides(struct txbox_ws *ws, const struct txbox_record *rec, struct diff_sides *s,
                      struct txbox_error *err)
{
        switch (rec->outcome) {
        case TXBOX_PENDING:
                s->old_root = xstrdup(ws->path);
                s->new_root = xasprintf("%s/tx/%s/upper", ws->state, rec->id);
                return 0;
        case TXBOX_COMMITTED:
                s->old_root = xasprintf("%s/tx/%s/undo", ws->state, rec->id);
                s->new_root = xstrdup(ws->path);
                return 0;
        case TXBOX_UNDONE:
                s->old_root = xstrdup(ws->path);
                s->new_root = xasprintf("%s/tx/%s/redo", ws->state, rec->id);
                return 0;
        default:
                return tx_err(err, ENOENT, "transaction %s is %s: its changes were not kept, so there is no diff",
                              rec->id, txbox_outcome_name(rec->outcome));
        }
}

/* A side of the diff: the file when it is a regular file, else /dev/null (absent, whiteout). */
static char *side_path(const char *root, const char *rel)
{
        struct stat st;
        char *p = xasprintf("%s/%s", root, rel);
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
                return p;
        free(p);
        return xstrdup("/dev/null");
}

/* Run diff -u for one path, appending its output to f. */
static int diff_one(FILE *f, const struct diff_sides *s, const char *rel)
{
        _cleanup_free_ char *a = side_path(s->old_root, rel), *b = side_path(s->new_root, rel);
        _cleanup_free_ char *la = xasprintf("a/%s", rel), *lb = xasprintf("b/%s", rel);
        char *argv[] = {"diff", "-u", "--label", la, "--label", lb, a, b, NULL};
        int pipefd[2], status;
        pid_t pid;
        posix_spawn_file_actions_t fa;

        if (!strcmp(a, "/dev/null") && !strcmp(b, "/dev/null"))
                return 0; /* a directory, symlink or special file: no text to show */
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
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
        struct diff_sides s = {0};
        char *buf = NULL;
        size_t len = 0;
        int r;

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
        free(s.old_root);
        free(s.new_root);
        txbox_record_clear(&rec);
        return r;
}
