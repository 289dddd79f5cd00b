/* The transaction behind txbox run and txbox sh: the library's one driver, with the
 * terminal's stdio and its messages printed. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

/* The program starts in the caller's directory when that lies in the workspace. */
static const char *start_dir(struct txbox_ws *ws, char *buf, size_t size)
{
        const char *root = txbox_ws_path(ws);
        size_t n = strlen(root);
        if (getcwd(buf, size) && !strncmp(buf, root, n) && (buf[n] == '/' || buf[n] == '\0' || n == 1))
                return buf;
        return root;
}

static int write_report(const char *file, const struct txbox_record *rec)
{
        char *json = txbox_record_json(rec);
        FILE *f = fopen(file, "we");
        int ok = f && json && fprintf(f, "%s\n", json) >= 0;
        if (f && fclose(f) != 0)
                ok = 0;
        free(json);
        if (!ok)
                cli_error("cannot write the report to '%s': %m", file);
        return ok ? 0 : -1;
}

static void summary(const struct txbox_record *rec)
{
        size_t c[3] = {0};
        for (size_t i = 0; i < rec->npaths; i++)
                c[rec->paths[i].change]++;
        fprintf(stderr, "txbox: tx %s %s: +%zu ~%zu -%zu in %lld ms", rec->id, txbox_outcome_name(rec->outcome),
                c[0], c[1], c[2], (long long)rec->duration_ms);
        /* The one notice of what the environment lost (else only --report's env_dropped). */
        if (rec->env_dropped && *rec->env_dropped) {
                fputs("; withheld from its environment: ", stderr);
                cli_human(stderr, rec->env_dropped);
                fputs(" (--env NAME passes one)", stderr);
        }
        fputc('\n', stderr);
}

/* What txbox run prints as the one driver (txbox_command_run) goes: every reason as a
 * "txbox:" line, at once; and whether the decision was reached, which -v's summary follows. */
struct printing {
        bool finished;
};

static void print_step(void *ctx, enum txbox_step step, const char *msg)
{
        struct printing *p = ctx;

        if (step == TXBOX_STEP_WARNING)
                cli_error("warning: %s", msg);
        else if (msg)
                cli_error("%s", msg);
        if (step == TXBOX_STEP_FINISHED)
                p->finished = true;
}

static bool path_within(const char *p, const char *dir)
{
        size_t n = strlen(dir);
        return !strncmp(p, dir, n) && (p[n] == '/' || p[n] == '\0' || n == 1);
}

/* Options that shape a transaction of its own, which a txbox inside the sandbox cannot
 * start: named, so that it can say they do not apply. */
static void tx_options(const struct run_cli *o, const struct global_opts *g, char *buf, size_t size)
{
        struct txbox_limits none = {0};
        const struct {
                bool set;
                const char *name;
        } opts[] = {
                {o->mode != TXBOX_COMMIT_AUTO, "--commit"},
                {o->opts.net != TXBOX_NET_NONE, "--net"},
                {o->opts.timeout_s > 0, "--timeout"},
                {o->report != NULL, "--report"},
                {o->session != NULL, "--tx"},
                {o->env_keep.n > 0, "--env"},
                {o->opts.allow_unix_sockets, "--allow-unix-sockets"},
                {memcmp(&o->opts.limits, &none, sizeof(none)) != 0, "--max-*"},
                {g->state != NULL, "--state"},
                {g->policy != NULL, "--policy"},
                {g->approve != NULL, "--approve"},
        };
        buf[0] = '\0';
        for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
                if (opts[i].set)
                        snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", buf[0] ? ", " : "",
                                 opts[i].name);
}

/* txbox inside txbox's sandbox (an inherited SHELL=txbox-sh, a script that calls txbox run):
 * the command runs right here, in the sandbox and the transaction it is part of, where every
 * exec is judged and every change committed or rolled back with the rest.  A transaction of
 * its own cannot be had inside one (the state dir is hidden there).  Returns only when the
 * program could not be run. */
static int run_inside(char **argv, const struct run_cli *o, const struct global_opts *g, const char *ws)
{
        char opts[256];

        tx_options(o, g, opts, sizeof(opts));
        if (opts[0])
                cli_error("inside txbox's sandbox already (workspace %s): running the command in it, as part "
                          "of the transaction that runs this one; %s do not apply here",
                          ws, opts);
        else if (o->verbose)
                cli_error("inside txbox's sandbox already (workspace %s): running the command in it, as part "
                          "of the transaction that runs this one",
                          ws);
        /* -C: start there, as a transaction would, unless already inside it */
        char dir[PATH_MAX], cwd[PATH_MAX];
        if (g->workspace && realpath(g->workspace, dir) && getcwd(cwd, sizeof(cwd)) &&
            !path_within(cwd, dir) && chdir(dir) < 0) {
                cli_error("cannot change to the workspace '%s': %s", dir, strerror(errno));
                return EXIT_TXBOX;
        }
        fflush(NULL);
        execvp(argv[0], argv);
        int e = errno;
        cli_error("cannot run '%s': %s", argv[0], strerror(e));
        return e == ENOENT ? TXBOX_EXIT_NOTFOUND : TXBOX_EXIT_NOEXEC;
}

int run_transaction(char **argv, struct run_cli *o, const struct global_opts *g)
{
        char inside[PATH_MAX];
        if (txbox_inside_sandbox(inside, sizeof(inside)))
                return run_inside(argv, o, g, inside);

        /* The audit log opens while the sandbox starts (txbox_tx_prestart). */
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_RECOVER | TXBOX_OPEN_DEFER_LOG);
        struct txbox_command_result res;
        struct txbox_error err = {0};
        struct printing p = {0};
        char cwd[PATH_MAX];
        int status;

        if (!ws)
                return EXIT_TXBOX;
        if (g->policy)
                txbox_ws_set_policy(ws, g->policy);
        txbox_ws_set_approver(ws, g->approve);
        struct txbox_command cmd = {
                .shell = o->command,
                .argv = argv,
                .session = o->session,
                .cwd = start_dir(ws, cwd, sizeof(cwd)),
                .mode = o->mode,
                .opts = o->opts,
                .own_stdio = true,
                .caller_cwd = true,
                .step = print_step,
                .ctx = &p,
        };
        if (txbox_command_run(ws, &cmd, &res, &err) < 0) {
                cli_error("%s", err.msg);
                txbox_ws_close(ws);
                return EXIT_TXBOX;
        }
        status = res.status;
        if (o->verbose && p.finished)
                summary(&res.rec);
        if (o->report && write_report(o->report, &res.rec) < 0 && status == 0)
                status = EXIT_TXBOX;
        txbox_command_result_clear(&res);
        txbox_ws_close(ws);
        return status;
}
