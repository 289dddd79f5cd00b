/* txbox diff [--stat] [TX | --since TX] [-- PATH...]: what one transaction changed, or
 * everything since one, as a unified diff or a summary per file. */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "base/cleanup.h"
#include "base/human.h"
#include "base/mem.h"
#include "base/strv.h"

static void diff_usage(FILE *f)
{
        fprintf(f, "Usage: txbox diff [--stat] [TX] [-- PATH...]\n"
                   "       txbox diff [--stat] --since TX [-- PATH...]\n\n"
                   "A unified diff of what transaction TX changed (default: the newest transaction that\n"
                   "changed something).  A pending one: the workspace against its changes (a session:\n"
                   "all its commands so far, as txbox commit would apply them).  A committed one: the\n"
                   "files it replaced against the versions it put in place, also when later transactions\n"
                   "changed them since (nothing later shows as its own).  An undone one: what the undo\n"
                   "took back.  Coloured on a terminal unless NO_COLOR is set.\n\n"
                   "  --since TX  the net change since TX: every path TX and the commits after it\n"
                   "              changed, as it was before them against the workspace now\n"
                   "  --stat      per file, the lines added and removed, and a total\n"
                   "  PATH...     only these files and what lies beneath these directories\n"
                   "              (relative to the current directory)\n"
                   "  -h, --help  this help\n");
}

static void print_colored(const char *s)
{
        while (*s) {
                const char *nl = strchr(s, '\n');
                size_t len = nl ? (size_t)(nl - s + 1) : strlen(s);
                const char *c = "";
                if (!strncmp(s, "+++", 3) || !strncmp(s, "---", 3))
                        c = "\033[1m";
                else if (*s == '+')
                        c = "\033[32m";
                else if (*s == '-')
                        c = "\033[31m";
                else if (*s == '@')
                        c = "\033[36m";
                fputs(c, stdout);
                human_write(stdout, s, nl ? len - 1 : len, HUMAN_KEEP_LINES);
                fputs(*c ? "\033[0m" : "", stdout);
                if (nl)
                        putchar('\n');
                s += len;
        }
}

/* ---- --stat ---- */

struct file_stat {
        char *name;
        long add, del;
        bool binary;
};

static long hunk_count(const char *p)
{
        /* "-a,b" or "-a": b lines (1 when absent) */
        const char *comma = strpbrk(p, ", ");
        return comma && *comma == ',' ? strtol(comma + 1, NULL, 10) : 1;
}

/* The per-file counts of a unified diff, read hunk by hunk (a removed line "-- x" reads
 * "--- x" and is no header inside a hunk). */
static size_t parse_stat(const char *d, struct file_stat **out)
{
        struct file_stat *v = NULL;
        size_t n = 0;
        long old_left = 0, new_left = 0;

        for (const char *line = d; line && *line;) {
                const char *nl = strchr(line, '\n');
                size_t len = nl ? (size_t)(nl - line) : strlen(line);
                if (old_left > 0 || new_left > 0) {
                        if (line[0] == '-' && n)
                                old_left--, v[n - 1].del++;
                        else if (line[0] == '+' && n)
                                new_left--, v[n - 1].add++;
                        else if (line[0] == ' ')
                                old_left--, new_left--;
                } else if (!strncmp(line, "--- a/", 6)) {
                        v = xrealloc(v, (n + 1) * sizeof(*v));
                        v[n++] = (struct file_stat){.name = strndup(line + 6, len - 6)};
                } else if (!strncmp(line, "@@ -", 4)) {
                        const char *plus = strstr(line, " +");
                        old_left = hunk_count(line + 3);
                        new_left = plus ? hunk_count(plus + 1) : 0;
                } else if (!strncmp(line, "Binary files a/", 15)) {
                        const char *end = strstr(line, " and b/");
                        v = xrealloc(v, (n + 1) * sizeof(*v));
                        v[n++] = (struct file_stat){.name = strndup(line + 15, end ? (size_t)(end - line - 15)
                                                                                    : len - 15),
                                                    .binary = true};
                }
                line = nl ? nl + 1 : NULL;
        }
        *out = v;
        return n;
}

static void print_stat(const char *d)
{
        struct file_stat *v = NULL;
        size_t n = parse_stat(d, &v), width = 0;
        long total_add = 0, total_del = 0, most = 0;
        bool color = cli_color(stdout);

        for (size_t i = 0; i < n; i++) {
                size_t w = strlen(v[i].name);
                width = w > width ? w : width;
                most = v[i].add + v[i].del > most ? v[i].add + v[i].del : most;
        }
        width = width > 50 ? 50 : width;
        for (size_t i = 0; i < n; i++) {
                long a = v[i].add, r = v[i].del, bar = a + r;
                /* the longest bar is 40 marks; every change shows at least one */
                if (most > 40) {
                        long sa = a ? (a * 40 + most - 1) / most : 0, sr = r ? (r * 40 + most - 1) / most : 0;
                        a = sa, r = sr;
                }
                putchar(' ');
                cli_human(stdout, v[i].name);
                printf("%*s | ", (int)(width > strlen(v[i].name) ? width - strlen(v[i].name) : 0), "");
                if (v[i].binary)
                        printf("Bin\n");
                else {
                        printf("%ld %s", bar, color ? "\033[32m" : "");
                        for (long k = 0; k < a; k++)
                                putchar('+');
                        printf("%s", color ? "\033[31m" : "");
                        for (long k = 0; k < r; k++)
                                putchar('-');
                        printf("%s\n", color ? "\033[0m" : "");
                }
                total_add += v[i].add;
                total_del += v[i].del;
                free(v[i].name);
        }
        if (n) {
                printf(" %zu file%s changed", n, n == 1 ? "" : "s");
                if (total_add || !total_del)
                        printf(", %ld insertion%s(+)", total_add, total_add == 1 ? "" : "s");
                if (total_del)
                        printf(", %ld deletion%s(-)", total_del, total_del == 1 ? "" : "s");
                putchar('\n');
        }
        free(v);
}

/* ---- paths ---- */

/* PATH (relative to the current directory, or absolute) as a path relative to the
 * workspace, lexically ("." and ".." resolved, symlinks not followed); NULL when outside. */
static char *ws_relative(const char *ws, const char *path)
{
        char cwd[PATH_MAX];
        _cleanup_free_ char *in = path[0] == '/' ? xstrdup(path)
                                                 : xasprintf("%s/%s", getcwd(cwd, sizeof(cwd)) ? cwd : "/", path);
        char *out = xmalloc(strlen(in) + 2), *save = NULL;
        size_t len = 0;

        out[0] = '\0';
        for (char *c = strtok_r(in, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (!strcmp(c, "."))
                        continue;
                if (!strcmp(c, "..")) {
                        char *slash = strrchr(out, '/');
                        len = slash ? (size_t)(slash - out) : 0;
                        out[len] = '\0';
                        continue;
                }
                len += (size_t)sprintf(out + len, "/%s", c);
        }
        size_t wl = strcmp(ws, "/") ? strlen(ws) : 0;
        if (strncmp(out, ws, wl) || (out[wl] != '/' && out[wl] != '\0')) {
                free(out);
                return NULL;
        }
        char *rel = xstrdup(out + wl + (out[wl] == '/'));
        free(out);
        return rel;
}

/* The newest transaction with something to diff (pending, committed or undone, with
 * changes); its id in id.  0, or 1 when there is none. */
static int newest_with_changes(struct txbox_ws *ws, char *id, size_t size)
{
        struct txbox_record *recs = NULL;
        struct txbox_error err;
        size_t n = 0;
        int found = 1;

        if (txbox_log(ws, 0, &recs, &n, &err) < 0)
                return 1;
        for (size_t i = 0; i < n && found; i++)
                if (recs[i].npaths && (recs[i].outcome == TXBOX_PENDING || recs[i].outcome == TXBOX_COMMITTED ||
                                       recs[i].outcome == TXBOX_UNDONE)) {
                        snprintf(id, size, "%s", recs[i].id);
                        found = 0;
                }
        txbox_records_free(recs, n);
        return found;
}

int cmd_diff(int argc, char **argv, const struct global_opts *g)
{
        static const struct option opts[] = {{"stat", no_argument, NULL, 's'},
                                             {"since", required_argument, NULL, 'S'},
                                             {"help", no_argument, NULL, 'h'},
                                             {0}};
        struct txbox_diff_opts o = {0};
        struct txbox_error err = {0};
        const char *id = NULL;
        char *out = NULL, *notes = NULL, newest[32];
        bool stat = false;
        int c, st = 0;

        while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
                switch (c) {
                case 's': stat = true; break;
                case 'S': id = optarg, o.since = true; break;
                case 'h': diff_usage(stdout); return 0;
                default: diff_usage(stderr); return EXIT_USAGE;
                }
        }
        /* getopt took a "--" that ended the options: paths follow */
        bool dashdash = optind > 1 && !strcmp(argv[optind - 1], "--");
        if (!dashdash && optind < argc && strcmp(argv[optind], "--")) {
                if (o.since) {
                        cli_error("diff: --since TX takes no other transaction");
                        return EXIT_USAGE;
                }
                id = argv[optind++];
        }
        if (!dashdash && optind < argc && strcmp(argv[optind], "--")) {
                diff_usage(stderr);
                return EXIT_USAGE;
        }
        if (!dashdash && optind < argc) /* "--" */
                optind++;
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_NOCREATE);
        if (!ws)
                return EXIT_TXBOX;
        char **paths = xcalloc((size_t)(argc - optind) + 1, sizeof(char *));
        for (int i = optind, k = 0; i < argc; i++) {
                char *rel = ws_relative(txbox_ws_path(ws), argv[i]);
                if (!rel) {
                        cli_error("diff: '%s' is outside the workspace '%s'", argv[i], txbox_ws_path(ws));
                        st = EXIT_USAGE;
                } else
                        paths[k++] = rel;
        }
        o.paths = paths;
        if (st == 0 && !id) {
                if (!txbox_ws_has_state(ws)) {
                        cli_no_transactions(g, ws);
                        st = EXIT_REFUSED;
                } else if (newest_with_changes(ws, newest, sizeof(newest))) {
                        cli_error("nothing to diff: no transaction in this workspace's log changed anything");
                        st = EXIT_REFUSED;
                } else
                        id = newest;
        }
        if (st == 0 && txbox_diff_ex(ws, id, &o, &out, &notes, &err) < 0) {
                cli_error("%s", err.msg);
                st = EXIT_REFUSED;
        } else if (st == 0) {
                if (stat)
                        print_stat(out);
                else if (cli_color(stdout))
                        print_colored(out);
                else /* the files' own bytes: lines pass, controls do not (base/human.h) */
                        human_write(stdout, out, strlen(out), HUMAN_KEEP_LINES);
                for (char *line = notes, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                        nl = strchr(line, '\n');
                        if (nl)
                                *nl = '\0';
                        cli_error("note: %s", line);
                }
        }
        strv_free(paths);
        free(out);
        free(notes);
        txbox_ws_close(ws);
        return st;
}
