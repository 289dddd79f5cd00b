/* txbox report [--html FILE] [-n N]: a readable report of the transactions. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void report_usage(FILE *f)
{
        fprintf(f, "Usage: txbox report [--html FILE] [-n N]\n\n"
                   "A report of the workspace's transactions.  Without --html: a summary and the\n"
                   "log table.  With --html FILE: a self-contained page (no network, no script) with\n"
                   "a timeline coloured by outcome and, for each transaction, its command, decision,\n"
                   "rule, exit status, changed paths and a collapsible diff.  FILE - is stdout.\n\n"
                   "  --html FILE  write the HTML page to FILE\n"
                   "  -n N         only the N newest transactions\n"
                   "  -h, --help   this help\n");
}

static int write_out(const char *file, const char *html)
{
        FILE *f = strcmp(file, "-") ? fopen(file, "we") : stdout;
        if (!f) {
                cli_error("report: cannot write '%s': %m", file);
                return EXIT_REFUSED;
        }
        int ok = fputs(html, f) >= 0;
        if (f != stdout)
                ok = fclose(f) == 0 && ok;
        if (!ok)
                cli_error("report: cannot write '%s': %m", file);
        return ok ? 0 : EXIT_REFUSED;
}

int cmd_report(int argc, char **argv, const struct global_opts *g)
{
        static const struct option opts[] = {
                {"html", required_argument, NULL, 'H'}, {"help", no_argument, NULL, 'h'}, {0}};
        const char *html = NULL;
        struct txbox_error err = {0};
        int limit = 0, c;

        while ((c = getopt_long(argc, argv, "n:h", opts, NULL)) != -1) {
                switch (c) {
                case 'H': html = optarg; break;
                case 'n': limit = atoi(optarg); break;
                case 'h': report_usage(stdout); return 0;
                default: report_usage(stderr); return EXIT_USAGE;
                }
        }
        if (optind < argc || limit < 0) {
                report_usage(stderr);
                return EXIT_USAGE;
        }
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_NOCREATE);
        if (!ws)
                return EXIT_TXBOX;
        int st = 0;
        if (html) {
                char *page = NULL;
                if (txbox_report_html(ws, limit, &page, &err) < 0) {
                        cli_error("%s", err.msg);
                        st = EXIT_REFUSED;
                } else
                        st = write_out(html, page);
                free(page);
        } else {
                struct txbox_record *recs = NULL;
                size_t n = 0;
                if (txbox_log(ws, limit, &recs, &n, &err) < 0) {
                        cli_error("%s", err.msg);
                        st = EXIT_REFUSED;
                } else {
                        size_t count[TXBOX_UNDONE + 1] = {0};
                        for (size_t i = 0; i < n; i++)
                                if ((unsigned)recs[i].outcome <= TXBOX_UNDONE)
                                        count[recs[i].outcome]++;
                        fputs("workspace ", stdout);
                        cli_human(stdout, txbox_ws_path(ws));
                        printf(": %zu transaction%s", n, n == 1 ? "" : "s");
                        /* each outcome by name: denied and undone are not "other" */
                        static const enum txbox_outcome order[] = {TXBOX_COMMITTED, TXBOX_ROLLED_BACK, TXBOX_DENIED,
                                                                   TXBOX_PENDING,   TXBOX_UNDONE,      TXBOX_RUNNING,
                                                                   TXBOX_COMMITTING, TXBOX_UNDOING};
                        for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
                                if (count[order[k]])
                                        printf(", %zu %s", count[order[k]],
                                               order[k] == TXBOX_ROLLED_BACK ? "rolled back"
                                                                             : txbox_outcome_name(order[k]));
                        printf("\n\n");
                        print_log_table(stdout, recs, n);
                }
                txbox_records_free(recs, n);
        }
        txbox_ws_close(ws);
        return st;
}
