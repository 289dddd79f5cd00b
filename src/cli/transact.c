/* The transaction behind txbox run and txbox sh. */
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

int run_transaction(char **argv, struct run_cli *o, const struct global_opts *g)
{
        /* The audit log opens while the sandbox starts (txbox_tx_prestart). */
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_RECOVER | TXBOX_OPEN_DEFER_LOG);
        struct txbox_tx *tx = NULL;
        struct txbox_run_result res;
        struct txbox_error err = {0};
        const char *why = NULL;
        char cwd[PATH_MAX];
        int status = EXIT_TXBOX;

        if (!ws)
                return EXIT_TXBOX;
        if (g->policy)
                txbox_ws_set_policy(ws, g->policy, &err);
        txbox_ws_set_approver(ws, g->approve);
        if ((o->session ? txbox_session_savepoint(ws, o->session, argv, &tx, &err)
                        : txbox_tx_begin(ws, argv, &tx, &err)) < 0) {
                cli_error("%s", err.msg);
                goto out;
        }
        o->opts.cwd = start_dir(ws, cwd, sizeof(cwd));
        txbox_tx_prestart(tx, &o->opts);
        int allowed = txbox_tx_check_policy(tx, o->command, o->opts.cwd, &err);
        if (allowed <= 0) {
                struct txbox_error e2;
                if (allowed < 0) {
                        cli_error("%s", err.msg);
                        txbox_tx_abort(tx, err.msg, &e2);
                } else {
                        cli_error("%s", txbox_tx_record(tx)->message);
                        status = EXIT_DENIED;
                }
                goto report;
        }
        if (txbox_tx_run(tx, &o->opts, &res, &err) < 0) {
                struct txbox_error e2;
                cli_error("%s", err.msg);
                txbox_tx_abort(tx, err.msg, &e2);
                goto report;
        }
        if (txbox_tx_warning(tx))
                cli_error("warning: %s", txbox_tx_warning(tx));
        if (res.exec_failed)
                cli_error("%s", err.msg);
        if (txbox_tx_finish(tx, o->mode, &res, &status, &why, &err) < 0)
                cli_error("%s", err.msg);
        else if (why)
                cli_error("%s", why);
        if (o->verbose)
                summary(txbox_tx_record(tx));
report:
        if (o->report && write_report(o->report, txbox_tx_record(tx)) < 0 && status == 0)
                status = EXIT_TXBOX;
out:
        txbox_tx_free(tx);
        txbox_ws_close(ws);
        return status;
}
