/* A self-contained HTML page of a workspace's transactions: a timeline coloured by outcome,
 * then one collapsible entry per transaction with its command, decision, rule, changes and
 * diff.  No script, no external resource: it opens offline and in any browser. */
#define _GNU_SOURCE
#include <time.h>

#include "txn/tx.h"

#define REPORT_DIFF_MAX (256 * 1024) /* per transaction: a huge diff would drown the page */

/* Text for humans, then for HTML: control bytes become visible escapes first (util.h),
 * newlines and tabs pass (a diff's lines, a long message). */
static void html_escape(FILE *f, const char *text)
{
        _cleanup_free_ char *h = human_escape(text, HUMAN_KEEP_LINES);
        for (const char *s = h; *s; s++) {
                switch (*s) {
                case '&': fputs("&amp;", f); break;
                case '<': fputs("&lt;", f); break;
                case '>': fputs("&gt;", f); break;
                case '"': fputs("&quot;", f); break;
                case '\'': fputs("&#39;", f); break;
                default: fputc(*s, f);
                }
        }
}

static void html_argv(FILE *f, char *const *argv)
{
        for (size_t i = 0; argv && argv[i]; i++) {
                if (i)
                        fputc(' ', f);
                html_escape(f, argv[i]);
        }
}

static const char *const css =
        "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafbfc}"
        "h1{font-size:20px;margin:0 0 4px}.meta{color:#5a6270;margin-bottom:16px}"
        ".counts span{display:inline-block;margin-right:14px}"
        ".timeline{position:relative;height:28px;background:#eef0f3;border-radius:4px;margin:12px 0 20px}"
        ".bar{position:absolute;top:4px;height:20px;min-width:3px;border-radius:2px}"
        ".committed{background:#2e9e5b}.rolled_back{background:#d9822b}.denied{background:#c93c3c}"
        ".pending{background:#3b7dd8}.undone{background:#8a8f98}.running,.committing,.undoing{background:#"
        "b9a13a}"
        "details{background:#fff;border:1px solid #dde1e6;border-radius:6px;margin:8px 0;padding:6px 10px}"
        "summary{cursor:pointer;display:flex;gap:12px;align-items:baseline}"
        ".badge{color:#fff;border-radius:10px;padding:0 8px;font-size:12px}"
        ".id{font-family:ui-monospace,monospace;color:#5a6270}.cmd{font-family:ui-monospace,monospace}"
        ".dur{margin-left:auto;color:#5a6270}table{border-collapse:collapse;margin:6px 0}"
        "td{padding:1px 10px 1px 0;vertical-align:top}td:first-child{color:#5a6270}"
        "ul.paths{margin:4px 0;padding-left:18px;font-family:ui-monospace,monospace}"
        ".added{color:#2e7d32}.modified{color:#8a6d00}.deleted{color:#b71c1c}"
        "pre.diff{background:#f6f8fa;padding:8px;overflow:auto;max-height:480px}"
        "pre.diff .a{color:#1b7c35}pre.diff .d{color:#b3261e}pre.diff .h{color:#6f42c1}";

static void write_diff(FILE *f, struct txbox_ws *ws, const struct txbox_record *r)
{
        struct txbox_error err;
        char *d = NULL;

        if (r->npaths == 0 || txbox_diff(ws, r->id, &d, &err) < 0 || !d || !*d) {
                free(d);
                return;
        }
        fputs("<details class=\"diffbox\"><summary>diff</summary><pre class=\"diff\">", f);
        size_t n = 0;
        for (char *line = d; *line && n < REPORT_DIFF_MAX;) {
                char *nl = strchr(line, '\n');
                if (nl)
                        *nl = '\0';
                const char *cls = !strncmp(line, "+++", 3) || !strncmp(line, "---", 3) ? "h"
                                  : *line == '+'                                   ? "a"
                                  : *line == '-'                                   ? "d"
                                  : *line == '@'                                   ? "h"
                                                                                   : NULL;
                if (cls)
                        fprintf(f, "<span class=\"%s\">", cls);
                html_escape(f, line);
                fputs(cls ? "</span>\n" : "\n", f);
                n += strlen(line) + 1;
                if (!nl)
                        break;
                line = nl + 1;
        }
        if (n >= REPORT_DIFF_MAX)
                fputs("… (diff cut at 256 KiB; txbox diff shows it whole)\n", f);
        fputs("</pre></details>", f);
        free(d);
}

static void write_paths(FILE *f, const struct txbox_record *r)
{
        static const char mark[] = {'+', '~', '-'};
        if (!r->npaths)
                return;
        fputs("<ul class=\"paths\">", f);
        for (size_t i = 0; i < r->npaths; i++) {
                fprintf(f, "<li class=\"%s\">%c ", txbox_change_name(r->paths[i].change),
                        mark[r->paths[i].change]);
                html_escape(f, r->paths[i].path);
                fputs("</li>", f);
        }
        fputs("</ul>", f);
}

static void write_row(FILE *f, const char *key, const char *value)
{
        if (!value)
                return;
        fprintf(f, "<tr><td>%s</td><td>", key);
        html_escape(f, value);
        fputs("</td></tr>", f);
}

static void write_tx(FILE *f, struct txbox_ws *ws, const struct txbox_record *r)
{
        const char *o = txbox_outcome_name(r->outcome);
        char exitbuf[32], when[32];
        time_t t = (time_t)(r->started_ms / 1000);
        struct tm tm;

        localtime_r(&t, &tm);
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
        if (r->signal)
                snprintf(exitbuf, sizeof(exitbuf), "killed by signal %d", r->signal);
        else if (r->exit_code >= 0)
                snprintf(exitbuf, sizeof(exitbuf), "%d", r->exit_code);
        else
                snprintf(exitbuf, sizeof(exitbuf), "none");
        fprintf(f, "<details class=\"tx\" id=\"tx-%s\"><summary><span class=\"badge %s\">%s</span>"
                   "<span class=\"id\">%s</span><span class=\"cmd\">",
                r->id, o, o, r->id);
        html_argv(f, r->argv);
        fprintf(f, "</span><span class=\"dur\">%lld ms</span></summary><table>", (long long)r->duration_ms);
        write_row(f, "started", when);
        write_row(f, "directory", r->cwd);
        write_row(f, "decision", r->decision);
        write_row(f, "rule", r->rule);
        write_row(f, "reason", r->reason);
        write_row(f, "exit", exitbuf);
        write_row(f, "message", r->message);
        for (size_t i = 0; i < r->nviolations; i++) {
                char *v = xasprintf("%s: %s (%s)", r->violations[i].rule, r->violations[i].path,
                                    r->violations[i].detail);
                write_row(f, "violation", v);
                free(v);
        }
        fputs("</table>", f);
        write_paths(f, r);
        write_diff(f, ws, r);
        fputs("</details>\n", f);
}

static void write_timeline(FILE *f, const struct txbox_record *recs, size_t n)
{
        int64_t t0 = INT64_MAX, t1 = 0;
        for (size_t i = 0; i < n; i++) {
                t0 = recs[i].started_ms < t0 ? recs[i].started_ms : t0;
                int64_t end = recs[i].started_ms + recs[i].duration_ms;
                t1 = end > t1 ? end : t1;
        }
        double span = t1 > t0 ? (double)(t1 - t0) : 1;
        fputs("<div class=\"timeline\" title=\"transactions over time\">", f);
        for (size_t i = 0; i < n; i++) {
                double left = 100.0 * (double)(recs[i].started_ms - t0) / span;
                double width = 100.0 * (double)recs[i].duration_ms / span;
                fprintf(f,
                        "<a class=\"bar %s\" href=\"#tx-%s\" style=\"left:%.3f%%;width:%.3f%%\" title=\"%s "
                                "%s\"></a>",
                        txbox_outcome_name(recs[i].outcome), recs[i].id, left, width, recs[i].id,
                        txbox_outcome_name(recs[i].outcome));
        }
        fputs("</div>\n", f);
}

static void write_counts(FILE *f, const struct txbox_record *recs, size_t n)
{
        size_t count[TXBOX_UNDONE + 1] = {0};
        int64_t total = 0;
        for (size_t i = 0; i < n; i++) {
                if ((unsigned)recs[i].outcome <= TXBOX_UNDONE)
                        count[recs[i].outcome]++;
                total += recs[i].duration_ms;
        }
        fprintf(f, "<div class=\"counts\"><span>%zu transactions</span>", n);
        for (int o = 0; o <= TXBOX_UNDONE; o++)
                if (count[o])
                        fprintf(f, "<span><span class=\"badge %s\">%s</span> %zu</span>",
                                txbox_outcome_name(o), txbox_outcome_name(o), count[o]);
        fprintf(f, "<span>%lld ms in all</span></div>\n", (long long)total);
}

int txbox_report_html(struct txbox_ws *ws, int limit, char **out, struct txbox_error *err)
{
        struct txbox_record *recs = NULL;
        size_t n = 0, len = 0;
        char *buf = NULL;
        int r = txbox_log(ws, limit, &recs, &n, err);

        if (r < 0)
                return r;
        FILE *f = open_memstream(&buf, &len);
        if (!f) {
                txbox_records_free(recs, n);
                return tx_err(err, ENOMEM, "cannot build the report");
        }
        fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<title>txbox report: ");
        html_escape(f, ws->path);
        fprintf(f,
                "</title><style>%s</style></head><body>\n<h1>txbox report</h1><div class=\"meta\">workspace ",
                css);
        html_escape(f, ws->path);
        fputs("</div>\n", f);
        write_counts(f, recs, n);
        write_timeline(f, recs, n);
        for (size_t i = 0; i < n; i++) /* newest first, as txbox log */
                write_tx(f, ws, &recs[i]);
        fputs("</body></html>\n", f);
        fclose(f);
        txbox_records_free(recs, n);
        *out = buf;
        return 0;
}
