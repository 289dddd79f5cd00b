/* Helpers shared by the verbs: opening the workspace, errors, human output. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

void cli_error(const char *fmt, ...)
{
        va_list ap;
        fputs("txbox: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
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

struct txbox_ws *cli_open(const struct global_opts *g, unsigned flags)
{
        struct txbox_ws *ws = NULL;
        struct txbox_error err = {0};
        int r = txbox_ws_open(g->workspace ? g->workspace : ".", g->state, flags, &ws, &err);
        if (r < 0) {
                cli_error("%s", err.msg);
                return NULL;
        }
        if (isatty(STDERR_FILENO))
                txbox_ws_set_progress(ws, show_progress, NULL);
        return ws;
}

static void count_changes(const struct txbox_record *rec, size_t c[3])
{
        c[0] = c[1] = c[2] = 0;
        for (size_t i = 0; i < rec->npaths; i++)
                c[rec->paths[i].change]++;
}

static char *argv_line(char *const *argv, size_t max)
{
        size_t len = 0;
        char *s = calloc(1, max + 4);
        for (size_t i = 0; s && argv && argv[i] && len < max; i++) {
                int n = snprintf(s + len, max - len, "%s%s", i ? " " : "", argv[i]);
                len += n > 0 ? (size_t)n : 0;
        }
        if (s && len >= max)
                strcpy(s + max - 3, "...");
        for (char *p = s; p && *p; p++)
                if (*p == '\n' || *p == '\t')
                        *p = ' ';
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

void print_log_table(FILE *f, const struct txbox_record *recs, size_t n)
{
        bool color = cli_color(f);
        fprintf(f, "%-10s  %-19s  %-11s  %-6s  %-16s  %8s  %s\n", "TX", "STARTED", "OUTCOME", "EXIT", "CHANGES",
                "TIME", "COMMAND");
        for (size_t i = 0; i < n; i++) {
                const struct txbox_record *r = &recs[i];
                char when[32], ex[16], ch[40], dur[24];
                size_t c[3];
                char *cmd = argv_line(r->argv, 60);
                count_changes(r, c);
                format_time(r->started_ms, when, sizeof(when));
                exit_text(r, ex, sizeof(ex));
                snprintf(ch, sizeof(ch), "+%zu ~%zu -%zu", c[0], c[1], c[2]);
                snprintf(dur, sizeof(dur), "%lld ms", (long long)r->duration_ms);
                fprintf(f, "%-10s  %-19s  %s%-11s%s  %-6s  %-16s  %8s  %s\n", r->id, when,
                        color ? outcome_color(r->outcome) : "", txbox_outcome_name(r->outcome), color ? "\033[0m" : "",
                        ex, ch, dur, cmd ? cmd : "");
                free(cmd);
        }
}

void print_record_human(FILE *f, const struct txbox_record *rec)
{
        static const char mark[] = {'+', '~', '-'};
        char when[32], ex[16];
        char *cmd = argv_line(rec->argv, 400);

        format_time(rec->started_ms, when, sizeof(when));
        exit_text(rec, ex, sizeof(ex));
        fprintf(f, "tx        %s\ncommand   %s\ncwd       %s\nstarted   %s (%lld ms)\n", rec->id, cmd ? cmd : "",
                rec->cwd ? rec->cwd : "", when, (long long)rec->duration_ms);
        fprintf(f, "decision  %s%s%s\n", rec->decision ? rec->decision : "allow", rec->rule ? " by rule " : "",
                rec->rule ? rec->rule : "");
        if (rec->reason)
                fprintf(f, "reason    %s\n", rec->reason);
        fprintf(f, "exit      %s\noutcome   %s\n", ex, txbox_outcome_name(rec->outcome));
        if (rec->message)
                fprintf(f, "message   %s\n", rec->message);
        for (size_t i = 0; i < rec->nviolations; i++)
                fprintf(f, "violation %s: %s (%s)\n", rec->violations[i].rule, rec->violations[i].path,
                        rec->violations[i].detail);
        fprintf(f, "changes   %zu\n", rec->npaths);
        for (size_t i = 0; i < rec->npaths; i++)
                fprintf(f, "  %c %s\n", mark[rec->paths[i].change], rec->paths[i].path);
        free(cmd);
}
