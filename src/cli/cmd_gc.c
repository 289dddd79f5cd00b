/* txbox gc: prune undo data beyond the retention, and the trash. */
#define _GNU_SOURCE
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/human.h"

static void gc_usage(FILE *f)
{
        fprintf(f,
                "Usage: txbox gc [--dry-run] [--json] [--keep=N] [--max-age=AGE] [--max-size=SIZE] [--save]\n"
                   "       txbox gc --show\n\n"
                   "Every commit that changed something keeps the originals it replaced in the state\n"
                   "dir, for txbox undo.  gc removes that undo data beyond the workspace's retention,\n"
                   "oldest first (the newest commit's always stays), with what finished transactions\n"
                   "left behind, the trash, and captures of agents' edits (txbox hook) whose record\n"
                   "never came, after an hour.  It never touches a pending transaction, one a process\n"
                   "is working on or one waiting for recovery, and it is crash-safe: a transaction's\n"
                   "undo data is either all there or gone.  The same pass runs by itself beside the\n"
                   "next command after each commit, so a long-lived workspace stays within the limits.\n\n"
                   "  --keep=N          keep undo data for the N newest commits (default 1000)\n"
                   "  --max-age=AGE     ... and none older than AGE: 90m, 12h, 30d, 2w (default 30d)\n"
                   "  --max-size=SIZE   ... and at most SIZE in all: 512M, 2G (default 1G)\n"
                   "                    (0 or none: no limit of that kind)\n"
                   "  --save            make these the workspace's retention (kept in its state dir,\n"
                   "                    applied from now on, also automatically)\n"
                   "  --show            print the retention in force and exit\n"
                   "  -n, --dry-run     say what would be removed; remove nothing\n"
                   "  --json            the result as one JSON object\n"
                   "  -h, --help        this help\n\n"
                   "The retention in force is the saved one, else TXBOX_RETENTION from the environment\n"
                   "(\"keep=200,max-age=7d,max-size=2G\"), else the defaults.  The audit log is never\n"
                   "pruned: export it with txbox log --json-lines.  Undoing a pruned transaction says so.\n");
}

static void print_human(const struct txbox_gc_stats *st, const char *ret, bool dry)
{
        char kept[32], pruned[32], trash[32];

        human_size(st->kept_bytes, kept, sizeof(kept));
        human_size(st->pruned_bytes, pruned, sizeof(pruned));
        human_size(st->trash_bytes, trash, sizeof(trash));
        printf("retention %s\n", ret);
        printf("%s undo data of %u transaction%s (%s); kept %u (%s)\n", dry ? "would prune" : "pruned",
               st->pruned, st->pruned == 1 ? "" : "s", pruned, st->kept, kept);
        printf("%s %u leftover%s (%s)\n", dry ? "would remove" : "removed", st->trash,
               st->trash == 1 ? "" : "s", trash);
        if (st->skipped)
                printf("left alone %u transaction%s: pending, in use, just committed or waiting for txbox "
                       "recover\n",
                       st->skipped, st->skipped == 1 ? "" : "s");
}

static int print_json(const struct txbox_gc_stats *st, const char *ret, bool dry)
{
        json_t *o = json_pack("{s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "retention", ret, "dry_run",
                              dry, "kept",
                              (json_int_t)st->kept, "kept_bytes", (json_int_t)st->kept_bytes, "pruned",
                              (json_int_t)st->pruned, "pruned_bytes", (json_int_t)st->pruned_bytes,
                              "leftovers", (json_int_t)st->trash, "leftover_bytes",
                              (json_int_t)st->trash_bytes, "skipped", (json_int_t)st->skipped);
        char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

        json_decref(o);
        if (!s)
                return -1;
        printf("%s\n", s);
        free(s);
        return 0;
}

/* --keep=N and friends, as one retention item each on top of the retention in force. */
static int add_item(char *spec, size_t size, const char *key, const char *value)
{
        size_t len = strlen(spec);
        int n = snprintf(spec + len, size - len, "%s%s=%s", len ? "," : "", key, value);
        return n < 0 || (size_t)n >= size - len ? -1 : 0;
}

int cmd_gc(int argc, char **argv, const struct global_opts *g)
{
        static const struct option opts[] = {
                {"keep", required_argument, NULL, 'k'}, {"max-age", required_argument, NULL, 'a'},
                {"max-size", required_argument, NULL, 's'}, {"save", no_argument, NULL, 'S'},
                {"show", no_argument, NULL, 'w'},          {"dry-run", no_argument, NULL, 'n'},
                {"json", no_argument, NULL, 'j'},          {"help", no_argument, NULL, 'h'},
                {0},
        };
        struct txbox_retention ret;
        struct txbox_gc_stats st;
        struct txbox_error err = {0};
        char spec[400] = "", text[128];
        bool save = false, show = false, dry = false, json = false;
        int c;

        while ((c = getopt_long(argc, argv, "nh", opts, NULL)) != -1) {
                switch (c) {
                case 'k': c = add_item(spec, sizeof(spec), "keep", optarg); break;
                case 'a': c = add_item(spec, sizeof(spec), "max-age", optarg); break;
                case 's': c = add_item(spec, sizeof(spec), "max-size", optarg); break;
                case 'S': save = true; c = 0; break;
                case 'w': show = true; c = 0; break;
                case 'n': dry = true; c = 0; break;
                case 'j': json = true; c = 0; break;
                case 'h': gc_usage(stdout); return 0;
                default: gc_usage(stderr); return EXIT_USAGE;
                }
                if (c < 0) {
                        cli_error("gc: option value too long");
                        return EXIT_USAGE;
                }
        }
        if (optind < argc || (save && !spec[0]) || (show && (spec[0] || save || dry))) {
                if (save && !spec[0])
                        cli_error("gc: --save needs --keep, --max-age or --max-size");
                gc_usage(stderr);
                return EXIT_USAGE;
        }
        struct txbox_ws *ws = cli_open(g, save && !dry ? TXBOX_OPEN_RECOVER : show || dry ? TXBOX_OPEN_NOCREATE
                                                                            : TXBOX_OPEN_RECOVER | TXBOX_OPEN_NOCREATE);
        if (!ws)
                return EXIT_TXBOX;
        int r = txbox_retention_get(ws, &ret, &err);
        if (r >= 0 && spec[0] && (r = txbox_retention_parse(spec, &ret, &err)) < 0) {
                cli_error("gc: %s", err.msg);
                txbox_ws_close(ws);
                return EXIT_USAGE;
        }
        txbox_retention_format(&ret, text, sizeof(text));
        if (r >= 0 && show) {
                printf("%s\n", text);
                txbox_ws_close(ws);
                return 0;
        }
        if (r >= 0 && save && !dry)
                r = txbox_retention_save(ws, &ret, &err);
        if (r >= 0)
                r = txbox_gc(ws, &ret, dry ? TXBOX_GC_DRY_RUN : 0, &st, &err);
        if (r < 0)
                cli_error("%s", err.msg);
        else if (json)
                r = print_json(&st, text, dry);
        else
                print_human(&st, text, dry);
        txbox_ws_close(ws);
        return r < 0 ? EXIT_REFUSED : 0;
}
