/* The transaction behind txbox run and txbox sh: the library's one driver, with the
 * terminal's stdio and its messages printed. */
#define _GNU_SOURCE
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
        fprintf(stderr, "txbox: tx %s %s: +%zu ~%zu -%zu in %lld ms\n", rec->id,
                txbox_outcome_name(rec->outcome), c[0], c[1], c[2], (long long)rec->duration_ms);
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

int run_transaction(char **argv, struct run_cli *o, const struct global_opts *g)
{
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
                txbox_ws_set_policy(ws, g->policy, &err);
        txbox_ws_set_approver(ws, g->approve);
        if (txbox_ws_allow_effects(ws, o->allow_effects, &err) < 0) {
                cli_error("%s", err.msg);
                txbox_ws_close(ws);
                return EXIT_TXBOX;
        }
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
