/* A self-contained HTML page of a workspace's transactions, for reading after a session:
 * the counts of each outcome, a labelled timeline, then one entry per transaction whose
 * first lines (visible without opening it) say what ran, how it ended and why, and what it
 * changed; opened, its details, a session's commands, its paths grouped by directory and
 * its diff.  No script, no external resource: it opens offline and in any browser.  Its
 * size is bounded per transaction (path lines, diff bytes) and for the page (diff bytes),
 * so that a venv of thousands of files or a long session stays a page, not megabytes. */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/human.h"
#include "base/macros.h"
#include "base/mem.h"
#include "txbox.h"
#include "txn/tx.h"

#define REPORT_DIFF_MAX (16 * 1024)       /* per transaction, as written (escaped, marked up) */
#define REPORT_DIFFS_TOTAL (320 * 1024)   /* for the page: later diffs are left to txbox diff */
#define REPORT_PATH_LINES 60              /* path lines per transaction, directories included */
#define REPORT_SMALL_GROUP 3              /* a directory with more paths than this is one line */
#define REPORT_GROUP_DEPTH 4              /* directory lines nest this deep, then just count */
#define REPORT_SUMMARY_CMD 160            /* bytes of a command shown in an entry's first line */

/* Text for humans, then for HTML: control bytes become visible escapes first (base/human.h),
 * newlines and tabs pass (a diff's lines, a long message). */
static void html_escape(FILE *f, const char *text)
{
        _cleanup_free_ char *h = human_escape(text ? text : "", HUMAN_KEEP_LINES);
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

/* The command line, cut at about max bytes (at a character's boundary) when max > 0. */
static void html_argv(FILE *f, char *const *argv, size_t max)
{
        char *joined = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&joined, &len);

        for (size_t i = 0; m && argv && argv[i]; i++)
                fprintf(m, "%s%s", i ? " " : "", argv[i]);
        if (!m || fclose(m) != 0)
                return;
        if (max && len > max) {
                size_t cut = max;
                while (cut > 0 && ((unsigned char)joined[cut] & 0xc0) == 0x80)
                        cut--;
                strcpy(joined + cut, "…");
        }
        html_escape(f, joined);
        free(joined);
}

static const char *const css =
        "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafbfc}"
        "h1{font-size:20px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 6px}.meta{color:#5a6270;margin-bottom:12px}"
        ".counts span{display:inline-block;margin-right:14px}"
        ".timeline{position:relative;height:28px;background:#eef0f3;border-radius:4px;margin:4px 0 2px}"
        ".axis{display:flex;justify-content:space-between;color:#5a6270;font-size:12px;margin-bottom:4px}"
        ".legend{font-size:12px;color:#5a6270;margin-bottom:16px}.legend span{margin-right:12px}"
        ".legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px}"
        ".bar{position:absolute;top:4px;height:20px;min-width:3px;border-radius:2px}"
        ".committed{background:#2e9e5b}.rolled_back{background:#d9822b}.denied{background:#c93c3c}"
        ".pending{background:#3b7dd8}.undone{background:#8a8f98}.running,.committing,.undoing{background:#"
        "b9a13a}"
        "details.tx{background:#fff;border:1px solid #dde1e6;border-radius:6px;margin:8px 0;padding:6px 10px}"
        "details.tx>summary{cursor:pointer;list-style-position:outside}"
        ".line1{display:flex;gap:12px;align-items:baseline}.why{color:#5a6270;margin:2px 0 0 0}"
        ".why b{color:#1d2330;font-weight:600}"
        ".badge{color:#fff;border-radius:10px;padding:0 8px;font-size:12px}"
        ".id{font-family:ui-monospace,monospace;color:#5a6270}.cmd{font-family:ui-monospace,monospace;"
        "overflow-wrap:anywhere}.n{font-family:ui-monospace,monospace;white-space:nowrap}"
        ".dur{margin-left:auto;color:#5a6270;white-space:nowrap}table{border-collapse:collapse;margin:6px 0}"
        "td{padding:1px 10px 1px 0;vertical-align:top}td:first-child{color:#5a6270}"
        "ul.paths{margin:4px 0;padding-left:18px;font-family:ui-monospace,monospace;list-style:none}"
        "ul.paths ul{padding-left:18px;list-style:none}ul.paths summary{cursor:pointer}"
        ".added{color:#2e7d32}.modified{color:#8a6d00}.deleted{color:#b71c1c}.dir{color:#1d2330}"
        ".more{color:#5a6270;font-style:italic}"
        "pre.diff{background:#f6f8fa;padding:8px;overflow:auto;max-height:480px}"
        "pre.diff .a{color:#1b7c35}pre.diff .d{color:#b3261e}pre.diff .h{color:#6f42c1}";

static const char *const outcome_label[] = {
        [TXBOX_RUNNING] = "running",       [TXBOX_PENDING] = "pending",     [TXBOX_COMMITTING] = "committing",
        [TXBOX_COMMITTED] = "committed",   [TXBOX_ROLLED_BACK] = "rolled back", [TXBOX_DENIED] = "denied",
        [TXBOX_UNDOING] = "undoing",       [TXBOX_UNDONE] = "undone",
};

static const char *label(enum txbox_outcome o)
{
        return (unsigned)o < ARRAY_SIZE(outcome_label) ? outcome_label[o] : "unknown";
}

struct page {
        size_t diff_bytes; /* of the page so far */
        size_t diffs_left_out;
};

/* ---- diff ---- */

static void write_diff(FILE *f, struct txbox_ws *ws, const struct txbox_record *r, struct page *pg)
{
        struct txbox_error err;
        char *d = NULL;

        if (r->npaths == 0 ||
            (r->outcome != TXBOX_COMMITTED && r->outcome != TXBOX_PENDING && r->outcome != TXBOX_UNDONE))
                return;
        if (pg->diff_bytes >= REPORT_DIFFS_TOTAL) {
                pg->diffs_left_out++;
                fprintf(f, "<p class=\"more\">diff left out to keep the page small: txbox diff %s</p>", r->id);
                return;
        }
        if (txbox_diff(ws, r->id, &d, &err) < 0) {
                fputs("<p class=\"more\">no diff: ", f);
                html_escape(f, err.msg);
                fputs("</p>", f);
                return;
        }
        if (!d || !*d) {
                free(d);
                return;
        }
        /* Measured as written: escaped and marked up, a diff line weighs several times
         * its own bytes. */
        size_t total = strlen(d), n = 0;
        long start = ftell(f), now = start;
        fprintf(f, "<details class=\"diffbox\"><summary>diff (%zu KiB)</summary><pre class=\"diff\">",
                (total + 1023) / 1024);
        for (char *line = d; *line && now - start < REPORT_DIFF_MAX;) {
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
                now = ftell(f);
                if (!nl)
                        break;
                line = nl + 1;
        }
        if (n < total)
                fprintf(f, "… (%zu KiB more: txbox diff %s shows it whole)\n", (total - n + 1023) / 1024, r->id);
        fputs("</pre></details>", f);
        n = (size_t)(ftell(f) - start);
        pg->diff_bytes += n;
        free(d);
}

/* ---- paths, grouped by directory ---- */

static void count_range(const struct txbox_path *p, size_t lo, size_t hi, size_t c[3])
{
        c[0] = c[1] = c[2] = 0;
        for (size_t i = lo; i < hi; i++)
                if ((unsigned)p[i].change < 3)
                        c[p[i].change]++;
}

static void write_counts_text(FILE *f, const size_t c[3])
{
        bool any = false;
        static const char mark[] = {'+', '~', '-'};
        for (int k = 0; k < 3; k++)
                if (c[k]) {
                        fprintf(f, "%s<span class=\"%s\">%c%zu</span>", any ? " " : "", txbox_change_name(k), mark[k],
                                c[k]);
                        any = true;
                }
}

/* The end of the group of paths from i that share the component after plen (the
 * directory entry itself, and all beneath it); *clen its length. */
static size_t group_end(const struct txbox_path *p, size_t i, size_t hi, size_t plen, size_t *clen)
{
        const char *a = p[i].path + plen;
        size_t l = strcspn(a, "/"), j = i + 1;
        *clen = l;
        while (j < hi && strlen(p[j].path) >= plen + l && !strncmp(p[j].path + plen, a, l) &&
               (p[j].path[plen + l] == '/' || p[j].path[plen + l] == '\0'))
                j++;
        return j;
}

static void path_line(FILE *f, const struct txbox_path *p)
{
        static const char mark[] = {'+', '~', '-'};
        unsigned c = (unsigned)p->change < 3 ? (unsigned)p->change : 1;
        fprintf(f, "<li class=\"%s\">%c ", txbox_change_name(c), mark[c]);
        html_escape(f, p->path);
        fputs("</li>", f);
}

/* Paths [lo, hi) that share the first plen bytes, as lines: a directory with few paths
 * beneath it shows them, a bigger one is one line with its counts (opened: the same one
 * level down); a directory that holds one directory only is named with it (venv/lib/
 * python3.11/site-packages/ is one line).  *budget counts the lines left; what it leaves
 * out is counted in *left. */
static void write_group(FILE *f, const struct txbox_path *p, size_t lo, size_t hi, size_t plen, int depth,
                        size_t *budget, size_t *left)
{
        size_t clen, c[3];

        for (size_t i = lo, j; i < hi; i = j) {
                j = group_end(p, i, hi, plen, &clen);
                if (!*budget) {
                        *left += hi - i;
                        return;
                }
                if (j - i <= REPORT_SMALL_GROUP) {
                        for (size_t k = i; k < j && *budget; k++, (*budget)--)
                                path_line(f, &p[k]);
                        continue;
                }
                /* The directory's own entry is its line; one directory alone in it joins it. */
                size_t dlen = plen + clen, k = i, sub;
                for (;;) {
                        if (k < j && strlen(p[k].path) == dlen)
                                k++;
                        if (k >= j || group_end(p, k, j, dlen + 1, &sub) != j)
                                break;
                        /* [k, j) lie in one entry of the directory: join it when it is a
                         * directory with paths of its own */
                        if (j - k < 2 && strlen(p[k].path) == dlen + 1 + sub)
                                break;
                        dlen += 1 + sub;
                }
                (*budget)--;
                count_range(p, i, j, c);
                bool nest = depth < REPORT_GROUP_DEPTH && k < j;
                fputs(nest ? "<li class=\"dir\"><details><summary>" : "<li class=\"dir\">", f);
                _cleanup_free_ char *dir = strndup(p[k < j ? k : i].path, dlen);
                html_escape(f, dir);
                fprintf(f, "/ — %zu paths (", j - i);
                write_counts_text(f, c);
                fputs(")", f);
                if (nest) {
                        fputs("</summary><ul>", f);
                        write_group(f, p, k, j, dlen + 1, depth + 1, budget, left);
                        fputs("</ul></details>", f);
                }
                fputs("</li>", f);
        }
}

static void write_paths(FILE *f, const struct txbox_record *r)
{
        size_t budget = REPORT_PATH_LINES, left = 0;

        if (!r->npaths)
                return;
        fputs("<ul class=\"paths\">", f);
        write_group(f, r->paths, 0, r->npaths, 0, 0, &budget, &left);
        if (left)
                fprintf(f, "<li class=\"more\">and %zu more (txbox show %s lists them all)</li>", left, r->id);
        fputs("</ul>", f);
}

/* ---- one transaction ---- */

static void write_row(FILE *f, const char *key, const char *value)
{
        if (!value)
                return;
        fprintf(f, "<tr><td>%s</td><td>", key);
        html_escape(f, value);
        fputs("</td></tr>", f);
}

static bool is_session(const struct txbox_record *r)
{
        return r->nsavepoints || (r->argv && r->argv[0] && r->argv[1] && !r->argv[2] &&
                                  !strcmp(r->argv[0], "txbox") && !strcmp(r->argv[1], "begin"));
}

/* The first line's command: a session's commands it keeps. */
static void write_command(FILE *f, const struct txbox_record *r)
{
        if (!is_session(r)) {
                html_argv(f, r->argv, REPORT_SUMMARY_CMD);
                return;
        }
        size_t kept = 0;
        for (size_t i = 0; i < r->nsavepoints; i++)
                kept += r->savepoints[i].outcome == TXBOX_SP_KEPT;
        fprintf(f, "session of %zu command%s", r->nsavepoints, r->nsavepoints == 1 ? "" : "s");
        if (kept != r->nsavepoints)
                fprintf(f, " (%zu kept)", kept);
        for (size_t i = 0, shown = 0; i < r->nsavepoints && shown < 3; i++)
                if (r->savepoints[i].outcome == TXBOX_SP_KEPT) {
                        fputs(shown++ ? "; " : ": ", f);
                        html_argv(f, r->savepoints[i].argv, 60);
                }
        if (kept > 3)
                fputs("; …", f);
}

/* Why it ended so, on the line under it: the rule and its reason, or txbox's message. */
static void write_why(FILE *f, const struct txbox_record *r)
{
        if (r->outcome == TXBOX_COMMITTED && !r->nviolations)
                return;
        fputs("<div class=\"why\">", f);
        if (r->rule) {
                fputs("<b>", f);
                html_escape(f, r->rule);
                fputs("</b>: ", f);
                html_escape(f, r->reason);
        } else if (r->nviolations) {
                fputs("<b>", f);
                html_escape(f, r->violations[0].rule);
                fputs("</b>: ", f);
                html_escape(f, r->violations[0].path);
                fputs(" (", f);
                html_escape(f, r->violations[0].detail);
                fputs(")", f);
                if (r->nviolations > 1)
                        fprintf(f, " and %zu more", r->nviolations - 1);
        } else
                html_escape(f, r->message);
        fputs("</div>", f);
}

static void write_savepoints(FILE *f, const struct txbox_record *r)
{
        if (!r->nsavepoints)
                return;
        fputs("<table class=\"savepoints\"><tr><td>#</td><td>command</td><td>result</td><td>exit</td>"
              "<td>time</td></tr>",
              f);
        for (size_t i = 0; i < r->nsavepoints; i++) {
                const struct txbox_savepoint *sp = &r->savepoints[i];
                fprintf(f, "<tr><td>%d</td><td class=\"cmd\">", sp->n);
                html_argv(f, sp->argv, 0);
                fprintf(f, "</td><td>%s</td><td>", txbox_sp_outcome_name(sp->outcome));
                if (sp->signal)
                        fprintf(f, "signal %d", sp->signal);
                else if (sp->exit_code >= 0)
                        fprintf(f, "%d", sp->exit_code);
                else
                        fputs("-", f);
                fprintf(f, "</td><td>%lld ms</td></tr>", (long long)sp->duration_ms);
        }
        fputs("</table>", f);
}

/* The local time of ms, with the date or (time_only) without. */
static void format_when(int64_t ms, bool time_only, char *buf, size_t size)
{
        time_t t = (time_t)(ms / 1000);
        struct tm tm;
        localtime_r(&t, &tm);
        if (time_only)
                strftime(buf, size, "%H:%M:%S", &tm);
        else
                strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
}

static void write_tx(FILE *f, struct txbox_ws *ws, const struct txbox_record *r, struct page *pg)
{
        const char *o = txbox_outcome_name(r->outcome);
        char exitbuf[32], when[32];
        size_t c[3];

        format_when(r->started_ms, false, when, sizeof(when));
        if (r->signal)
                snprintf(exitbuf, sizeof(exitbuf), "killed by signal %d", r->signal);
        else if (r->exit_code >= 0)
                snprintf(exitbuf, sizeof(exitbuf), "%d", r->exit_code);
        else
                snprintf(exitbuf, sizeof(exitbuf), "none");
        count_range(r->paths, 0, r->npaths, c);
        fprintf(f, "<details class=\"tx\" id=\"tx-%s\"><summary><span class=\"line1\"><span class=\"badge %s\">%s</span>"
                   "<span class=\"id\">%s</span><span class=\"cmd\">",
                r->id, o, label(r->outcome), r->id);
        write_command(f, r);
        fputs("</span><span class=\"n\">", f);
        if (r->npaths)
                write_counts_text(f, c);
        else
                fputs("no change", f);
        fprintf(f, "</span><span class=\"dur\">%lld ms</span></span>", (long long)r->duration_ms);
        write_why(f, r);
        fputs("</summary><table>", f);
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
        write_savepoints(f, r);
        if (r->npaths)
                fprintf(f, "<div>%s%zu path%s</div>", is_session(r) ? "the change of its commands together: " : "",
                        r->npaths, r->npaths == 1 ? "" : "s");
        write_paths(f, r);
        write_diff(f, ws, r, pg);
        fputs("</details>\n", f);
}

/* ---- the page's head: counts and timeline ---- */

static void write_timeline(FILE *f, const struct txbox_record *recs, size_t n)
{
        int64_t t0 = INT64_MAX, t1 = 0;
        char a[32], b[32];

        if (!n)
                return;
        for (size_t i = 0; i < n; i++) {
                t0 = recs[i].started_ms < t0 ? recs[i].started_ms : t0;
                int64_t end = recs[i].started_ms + recs[i].duration_ms;
                t1 = end > t1 ? end : t1;
        }
        double span = t1 > t0 ? (double)(t1 - t0) : 1;
        format_when(t0, false, a, sizeof(a));
        format_when(t1, true, b, sizeof(b));
        fprintf(f, "<h2>Timeline</h2><div class=\"axis\"><span>%s</span><span>+%.1f s</span><span>%s (+%.1f s)</span>"
                   "</div>",
                a, span / 1000.0 / 2, b, span / 1000.0);
        fputs("<div class=\"timeline\" title=\"each transaction from its start, as long as it took; click one to "
              "go to it\">",
              f);
        for (size_t i = 0; i < n; i++) {
                double left = 100.0 * (double)(recs[i].started_ms - t0) / span;
                double width = 100.0 * (double)recs[i].duration_ms / span;
                fprintf(f, "<a class=\"bar %s\" href=\"#tx-%s\" style=\"left:%.3f%%;width:%.3f%%\" title=\"%s %s: ",
                        txbox_outcome_name(recs[i].outcome), recs[i].id, left, width, recs[i].id,
                        label(recs[i].outcome));
                html_argv(f, recs[i].argv, 80);
                fputs("\"></a>", f);
        }
        fputs("</div><div class=\"legend\">", f);
        for (int o = 0; o <= TXBOX_UNDONE; o++) {
                bool any = false;
                for (size_t i = 0; i < n && !any; i++)
                        any = recs[i].outcome == (enum txbox_outcome)o;
                if (any)
                        fprintf(f, "<span><i class=\"%s\"></i>%s</span>", txbox_outcome_name(o), label(o));
        }
        fputs("</div>\n", f);
}

static void write_counts(FILE *f, const struct txbox_record *recs, size_t n)
{
        size_t count[TXBOX_UNDONE + 1] = {0}, ch[3] = {0}, c[3];
        int64_t total = 0;
        for (size_t i = 0; i < n; i++) {
                if ((unsigned)recs[i].outcome <= TXBOX_UNDONE)
                        count[recs[i].outcome]++;
                total += recs[i].duration_ms;
                if (recs[i].outcome == TXBOX_COMMITTED) {
                        count_range(recs[i].paths, 0, recs[i].npaths, c);
                        for (int k = 0; k < 3; k++)
                                ch[k] += c[k];
                }
        }
        fprintf(f, "<div class=\"counts\"><span>%zu transaction%s</span>", n, n == 1 ? "" : "s");
        for (int o = 0; o <= TXBOX_UNDONE; o++)
                if (count[o])
                        fprintf(f, "<span><span class=\"badge %s\">%s</span> %zu</span>", txbox_outcome_name(o),
                                label(o), count[o]);
        fputs("<span>committed changes: ", f);
        if (ch[0] + ch[1] + ch[2])
                write_counts_text(f, ch);
        else
                fputs("none", f);
        fprintf(f, "</span><span>%lld ms in all</span></div>\n", (long long)total);
}

int txbox_report_html(struct txbox_ws *ws, int limit, char **out, struct txbox_error *err)
{
        struct txbox_record *recs = NULL;
        struct page pg = {0};
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
        fprintf(f, "<h2>Transactions, newest first</h2>\n");
        for (size_t i = 0; i < n; i++) /* newest first, as txbox log */
                write_tx(f, ws, &recs[i], &pg);
        if (!n)
                fputs("<p>No transactions in this workspace yet.</p>\n", f);
        fputs("</body></html>\n", f);
        fclose(f);
        txbox_records_free(recs, n);
        *out = buf;
        return 0;
}
