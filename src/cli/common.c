/* Helpers shared by the verbs: opening the workspace, errors, human output. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "base/human.h"

/* Every "txbox:" line carries names and text from the program or the model: escaped
 * (base/human.h, text for humans), so that one line stays one line and moves nothing. */
void cli_error(const char *fmt, ...)
{
        va_list ap;
        char *msg = NULL;

        va_start(ap, fmt);
        int n = vasprintf(&msg, fmt, ap);
        va_end(ap);
        fputs("txbox: ", stderr);
        if (n >= 0)
                human_write(stderr, msg, (size_t)n, HUMAN_LINE);
        fputc('\n', stderr);
        free(msg);
}

void cli_human(FILE *f, const char *s)
{
        if (s)
                human_write(f, s, strlen(s), HUMAN_LINE);
}

bool cli_wants_help(int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--"))
                        return false;
                if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
                        return true;
        }
        return false;
}

bool cli_color(FILE *f)
{
        const char *nc = getenv("NO_COLOR");
        return isatty(fileno(f)) && !(nc && *nc);
}

/* "txbox: committing 2048/10000" on one terminal line, rewritten in place. */
static void show_progress(void *ctx, const char *what, size_t done, size_t total)
{
        (void)ctx;
        fprintf(stderr, "\rtxbox: %s %zu/%zu%s", what, done, total, done == total ? "\n" : "");
        fflush(stderr);
}

/* The library's warnings, as "txbox: warning: ..." lines. */
static void show_notice(void *ctx, const char *msg)
{
        (void)ctx;
        cli_error("warning: %s", msg);
}

void cli_discover(struct global_opts *g)
{
        struct txbox_error err;

        if (g->workspace || txbox_ws_discover(g->state, &g->found, &err) < 0)
                return;
        g->discovered = true;
        g->workspace = g->found.path;
}

void cli_globals_free(struct global_opts *g)
{
        if (g->discovered)
                txbox_ws_discovery_free(&g->found);
        g->discovered = false;
}

const char *cli_workspace(const struct global_opts *g) { return g->workspace ? g->workspace : "."; }

/* The search found no workspace: where it looked, for messages. */
static const char *stop_text(const struct txbox_ws_discovery *d, char *buf, size_t size)
{
        if (d->stopped && !strcmp(d->stopped, "mount")) {
                snprintf(buf, size, "from here up to the mount point %s", d->stop_dir ? d->stop_dir : "?");
                return buf;
        }
        if (d->stopped && !strcmp(d->stopped, "$HOME"))
                return d->stop_dir && !strcmp(d->stop_dir, d->path) ? "here (your home directory)"
                                                                      : "between here and your home directory";
        return "from here up to /";
}

/* The current directory is $HOME itself, found as the workspace for want of a better one. */
static bool home_fallback(const struct global_opts *g)
{
        return g->discovered && g->found.found == TXBOX_WS_CWD && g->found.stopped &&
               !strcmp(g->found.stopped, "$HOME") && g->found.stop_dir && !strcmp(g->found.stop_dir, g->found.path);
}

struct txbox_ws *cli_open(const struct global_opts *g, unsigned flags)
{
        struct txbox_ws *ws = NULL;
        struct txbox_error err = {0};
        char inside[PATH_MAX];
        if (txbox_inside_sandbox(inside, sizeof(inside))) {
                /* The state dir and the audit log are hidden from the commands a sandbox runs. */
                cli_error("this runs inside txbox's sandbox (workspace %s), where txbox's state and log are "
                          "hidden: run it outside the sandbox (txbox run and txbox sh work inside: they run "
                          "their command in the current sandbox)",
                          inside);
                return NULL;
        }
        char buf[PATH_MAX + 100];

        /* Your whole home as a workspace (every dot file, the state dir itself in it) is
         * never a guess: it takes -C. */
        if (!(flags & TXBOX_OPEN_NOCREATE) && home_fallback(g)) {
                cli_error("the current directory is your home directory, and txbox does not make it a "
                          "workspace unless asked: cd into a project (a directory holding .git or .txbox, "
                          "or any directory: mkdir .txbox marks one) or pass -C DIR");
                return NULL;
        }
        int r = txbox_ws_open(cli_workspace(g), g->state, flags, &ws, &err);
        if (r < 0) {
                cli_error("%s", err.msg);
                return NULL;
        }
        txbox_ws_set_notice(ws, show_notice, NULL);
        if (isatty(STDERR_FILENO))
                txbox_ws_set_progress(ws, show_progress, NULL);
        /* The first transaction of a workspace found for want of a marked one: say which. */
        if (g->discovered && g->found.found == TXBOX_WS_CWD && txbox_ws_state_created(ws))
                cli_error("new workspace '%s' (the current directory: no directory %s holds .txbox or "
                          ".git; mkdir .txbox marks a workspace, -C DIR names one)",
                          txbox_ws_path(ws), stop_text(&g->found, buf, sizeof(buf)));
        return ws;
}

void cli_no_transactions(const struct global_opts *g, struct txbox_ws *ws)
{
        char buf[PATH_MAX + 100];

        if (g->discovered && g->found.found == TXBOX_WS_CWD)
                cli_error("no transactions in workspace '%s' yet (the current directory: no directory %s "
                          "holds .txbox or .git)",
                          txbox_ws_path(ws), stop_text(&g->found, buf, sizeof(buf)));
        else
                cli_error("no transactions in workspace '%s' yet", txbox_ws_path(ws));
}

static void count_changes(const struct txbox_record *rec, size_t c[3])
{
        c[0] = c[1] = c[2] = 0;
        for (size_t i = 0; i < rec->npaths; i++)
                c[rec->paths[i].change]++;
}

/* The command line for a table or a field: escaped, cut at about max bytes (at a
 * character's boundary). */
static char *argv_line(char *const *argv, size_t max)
{
        char *joined = NULL, *s;
        size_t len = 0;
        FILE *f = open_memstream(&joined, &len);

        for (size_t i = 0; f && argv && argv[i] && len < 4 * max; i++) {
                fputs(i ? " " : "", f);
                human_write(f, argv[i], strlen(argv[i]), HUMAN_LINE);
                fflush(f);
        }
        if (!f || fclose(f) != 0)
                return NULL;
        s = joined;
        if (len > max) {
                size_t cut = max - 3;
                while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
                        cut--;
                strcpy(s + cut, "...");
        }
        return s;
}

static void format_time(int64_t ms, char *buf, size_t size)
{
        time_t t = (time_t)(ms / 1000);
        struct tm tm;
        localtime_r(&t, &tm);
        strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
}

static const char *outcome_color(enum txbox_outcome o)
{
        switch (o) {
        case TXBOX_COMMITTED: return "\033[32m";
        case TXBOX_ROLLED_BACK: return "\033[33m";
        case TXBOX_DENIED: return "\033[31m";
        case TXBOX_PENDING: return "\033[36m";
        default: return "\033[2m";
        }
}

static void exit_text(const struct txbox_record *rec, char *buf, size_t size)
{
        if (rec->signal)
                snprintf(buf, size, "sig %d", rec->signal);
        else if (rec->exit_code >= 0)
                snprintf(buf, size, "%d", rec->exit_code);
        else
                snprintf(buf, size, "-");
}

static bool is_session(const struct txbox_record *r)
{
        return r->nsavepoints || (r->argv && r->argv[0] && r->argv[1] && !r->argv[2] &&
                                  !strcmp(r->argv[0], "txbox") && !strcmp(r->argv[1], "begin"));
}

/* A session's COMMAND: how many of its commands it did not keep, then those it keeps. */
static char *session_line(const struct txbox_record *r, size_t max)
{
        char *joined = NULL;
        size_t len = 0, other = 0, kept = 0;
        FILE *f = open_memstream(&joined, &len);

        for (size_t i = 0; i < r->nsavepoints; i++)
                other += r->savepoints[i].outcome != TXBOX_SP_KEPT;
        if (f)
                fprintf(f, "session%s", r->nsavepoints ? "" : " (no command yet)");
        if (f && other)
                fprintf(f, " (+%zu not kept)", other);
        for (size_t i = 0; f && i < r->nsavepoints; i++) {
                if (r->savepoints[i].outcome != TXBOX_SP_KEPT)
                        continue;
                char *cmd = argv_line(r->savepoints[i].argv, max);
                fprintf(f, "%s%s", kept++ ? "; " : ": ", cmd ? cmd : "");
                free(cmd);
        }
        if (!f || fclose(f) != 0)
                return NULL;
        if (len > max) {
                size_t cut = max - 3;
                while (cut > 0 && ((unsigned char)joined[cut] & 0xc0) == 0x80)
                        cut--;
                strcpy(joined + cut, "...");
        }
        return joined;
}

void print_log_table(FILE *f, const struct txbox_record *recs, size_t n)
{
        bool color = cli_color(f);
        fprintf(f, "%-10s  %-19s  %-11s  %-6s  %-16s  %8s  %s\n", "TX", "STARTED", "OUTCOME", "EXIT",
                "CHANGES", "TIME", "COMMAND");
        for (size_t i = 0; i < n; i++) {
                const struct txbox_record *r = &recs[i];
                char when[32], ex[16], ch[40], dur[24];
                size_t c[3];
                char *cmd = is_session(r) ? session_line(r, 60) : argv_line(r->argv, 60);
                count_changes(r, c);
                format_time(r->started_ms, when, sizeof(when));
                exit_text(r, ex, sizeof(ex));
                snprintf(ch, sizeof(ch), "+%zu ~%zu -%zu", c[0], c[1], c[2]);
                snprintf(dur, sizeof(dur), "%lld ms", (long long)r->duration_ms);
                fprintf(f, "%-10s  %-19s  %s%-11s%s  %-6s  %-16s  %8s  %s\n", r->id, when,
                        color ? outcome_color(r->outcome) : "", txbox_outcome_name(r->outcome),
                        color ? "\033[0m" : "", ex, ch, dur, cmd ? cmd : "");
                free(cmd);
        }
}

/* One "label value" line of a record, the value escaped. */
static void field(FILE *f, const char *label, const char *value)
{
        fprintf(f, "%-10s", label);
        cli_human(f, value ? value : "");
        fputc('\n', f);
}

void print_record_human(FILE *f, const struct txbox_record *rec)
{
        static const char mark[] = {'+', '~', '-'};
        char when[32], ex[16], buf[80];
        char *cmd = argv_line(rec->argv, 400);

        format_time(rec->started_ms, when, sizeof(when));
        exit_text(rec, ex, sizeof(ex));
        field(f, "tx", rec->id);
        if (is_session(rec))
                fprintf(f, "%-10s%s (a session of %zu command%s, below)\n", "command", cmd ? cmd : "",
                        rec->nsavepoints, rec->nsavepoints == 1 ? "" : "s");
        else
                fprintf(f, "%-10s%s\n", "command", cmd ? cmd : "");
        field(f, "cwd", rec->cwd);
        snprintf(buf, sizeof(buf), "%s (%lld ms)", when, (long long)rec->duration_ms);
        field(f, "started", buf);
        fprintf(f, "%-10s", "decision");
        cli_human(f, rec->decision ? rec->decision : "allow");
        if (rec->rule) {
                fputs(" by rule ", f);
                cli_human(f, rec->rule);
        }
        fputc('\n', f);
        if (rec->reason)
                field(f, "reason", rec->reason);
        field(f, "exit", ex);
        field(f, "outcome", txbox_outcome_name(rec->outcome));
        if (rec->message)
                field(f, "message", rec->message);
        for (size_t i = 0; i < rec->nviolations; i++) {
                fprintf(f, "%-10s", "violation");
                cli_human(f, rec->violations[i].rule);
                fputs(": ", f);
                cli_human(f, rec->violations[i].path);
                fputs(" (", f);
                cli_human(f, rec->violations[i].detail);
                fputs(")\n", f);
        }
        for (size_t i = 0; i < rec->nsavepoints; i++) {
                const struct txbox_savepoint *sp = &rec->savepoints[i];
                char *line = argv_line(sp->argv, 400);
                char spex[16];
                if (sp->signal)
                        snprintf(spex, sizeof(spex), "sig %d", sp->signal);
                else if (sp->exit_code >= 0)
                        snprintf(spex, sizeof(spex), "%d", sp->exit_code);
                else
                        snprintf(spex, sizeof(spex), "-");
                fprintf(f, "savepoint %-2d %-11s exit %-6s %6lld ms  %s\n", sp->n,
                        txbox_sp_outcome_name(sp->outcome), spex, (long long)sp->duration_ms, line ? line : "");
                free(line);
        }
        fprintf(f, "changes   %zu%s\n", rec->npaths,
                is_session(rec) && rec->outcome == TXBOX_PENDING ? " (of its commands kept, together)" : "");
        for (size_t i = 0; i < rec->npaths; i++) {
                fprintf(f, "  %c ", mark[rec->paths[i].change]);
                cli_human(f, rec->paths[i].path);
                fputc('\n', f);
        }
        free(cmd);
}
