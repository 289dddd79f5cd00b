/* Compact results for models (faces/summary.h): what happened in one line, the changed paths
 * summarised, and a tool result's JSON fitted into a byte budget. */
#define _GNU_SOURCE
#include <string.h>

#include "base/cleanup.h"
#include "base/human.h"
#include "base/macros.h"
#include "base/mem.h"
#include "faces/summary.h"
#include "txbox.h"

#include "store/record.h"

#define NAME_MAX_BYTES 200   /* one path as shown in a summary */
#define SUMMARY_NAMES 5      /* paths named when the list is summarised */
#define SUMMARY_PLACES 4     /* directories named */
#define PLACES_DEPTH_MAX 6   /* how deep the directories are looked for */
#define CUT_STRING 300       /* argv strings, message, reason once the budget is tight */
#define CUT_ARGV 16          /* argv entries kept then */
#define CUT_VIOLATIONS 3

struct change_counts {
        size_t added, modified, deleted;
};

static void summary_counts(const struct txbox_record *rec, struct change_counts *c)
{
        memset(c, 0, sizeof(*c));
        for (size_t i = 0; i < rec->npaths; i++) {
                if (rec->paths[i].change == TXBOX_ADDED)
                        c->added++;
                else if (rec->paths[i].change == TXBOX_DELETED)
                        c->deleted++;
                else
                        c->modified++;
        }
}

/* Bytes of a UTF-8 string s that fit in max without splitting a character. */
static size_t utf8_cut(const char *s, size_t max)
{
        size_t n = strlen(s);
        if (n <= max)
                return n;
        while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
                max--;
        return max;
}

char *summary_escape(const char *s, size_t max)
{
        const char *in = s ? s : "";
        size_t n = max ? utf8_cut(in, max) : strlen(in);
        _cleanup_free_ char *cut = strndup(in, n);
        char *e;

        if (!cut)
                abort(); /* out of memory, as xmalloc */
        e = human_escape(cut, HUMAN_LINE); /* the one escaping for text people and models read */
        if (n < strlen(in)) {
                char *more = xasprintf("%s...", e);
                free(e);
                e = more;
        }
        return e;
}

/* "2 added, 1 modified" */
static void kinds_phrase(FILE *f, const struct change_counts *c)
{
        const char *sep = "";
        if (c->added)
                fprintf(f, "%zu added", c->added), sep = ", ";
        if (c->modified)
                fprintf(f, "%s%zu modified", sep, c->modified), sep = ", ";
        if (c->deleted)
                fprintf(f, "%s%zu deleted", sep, c->deleted);
}

/* "3 changes (2 added, 1 modified)" */
static void counts_phrase(FILE *f, const struct txbox_record *rec)
{
        struct change_counts c;

        summary_counts(rec, &c);
        if (!rec->npaths) {
                fputs("no changes", f);
                return;
        }
        fprintf(f, "%zu change%s (", rec->npaths, rec->npaths == 1 ? "" : "s");
        kinds_phrase(f, &c);
        fputc(')', f);
}

static bool starts_with(const char *s, const char *prefix)
{
        return s && !strncmp(s, prefix, strlen(prefix));
}

char *summary_outcome(const struct txbox_record *rec, int status, const char *why)
{
        char *buf = NULL, id[sizeof(rec->id) + 1];
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        const char *msg = why ? why : rec->message;
        _cleanup_free_ char *m = msg ? summary_escape(msg, 900) : NULL;

        if (!f)
                abort();
        memcpy(id, rec->id, sizeof(rec->id));
        id[sizeof(rec->id)] = '\0';
        switch (rec->outcome) {
        case TXBOX_DENIED: {
                _cleanup_free_ char *rule = summary_escape(rec->rule ? rec->rule : "?", 64);
                _cleanup_free_ char *reason = summary_escape(rec->reason ? rec->reason : "", 600);
                fprintf(f, "refused by policy rule %s: %s; nothing ran and nothing changed", rule, reason);
                break;
        }
        case TXBOX_COMMITTED:
                fprintf(f, "committed tx %s: ", id);
                if (rec->exit_code >= 0)
                        fprintf(f, "exit status %d, ", rec->exit_code);
                counts_phrase(f, rec);
                break;
        case TXBOX_ROLLED_BACK:
                if (m && (starts_with(m, "rolled back") || starts_with(m, "discarded")))
                        fputs(m, f);
                else if (m)
                        fprintf(f, "rolled back tx %s: %s", id, m);
                else if (rec->signal)
                        fprintf(f, "rolled back tx %s: the program was killed by signal %d", id, rec->signal);
                else
                        fprintf(f, "rolled back tx %s: exit status %d", id, status >= 0 ? status : rec->exit_code);
                break;
        case TXBOX_PENDING:
                if (m)
                        fputs(m, f);
                else {
                        fprintf(f, "tx %s is pending: ", id);
                        counts_phrase(f, rec);
                }
                break;
        case TXBOX_UNDONE:
                fprintf(f, "undone tx %s: its %zu change%s taken back", id, rec->npaths,
                        rec->npaths == 1 ? "" : "s");
                break;
        default:
                fprintf(f, "tx %s is %s", id, txbox_outcome_name(rec->outcome));
                break;
        }
        fclose(f);
        return buf;
}

/* ---- the paths in words ---- */

static const char *const change_names[] = {"added", "modified", "deleted"};

static int cmp_path_ptr(const void *a, const void *b)
{
        return strcmp((*(const struct txbox_path *const *)a)->path, (*(const struct txbox_path *const *)b)->path);
}

static size_t depth_of(const char *p)
{
        size_t d = 0;
        for (; *p; p++)
                d += *p == '/';
        return d;
}

/* Length of the first d components of p and the slash after them, 0 when p has no more
 * than d components (a path directly in that directory counts as its own). */
static size_t prefix_len(const char *p, size_t d)
{
        const char *s = p;
        for (size_t k = 0; k < d; k++) {
                s = strchr(s, '/');
                if (!s)
                        return 0;
                s++;
        }
        return (size_t)(s - p);
}

struct place {
        const char *path; /* the first path of the group; its first len bytes name it */
        size_t len, count;
};

/* The directories (first d components) that hold the most paths: top[0..ntop), sorted by
 * count; *groups counts every group, *loose the paths in none. */
static void places_at(const struct txbox_path *const *v, size_t n, size_t d, struct place *top, size_t *ntop,
                      size_t *groups, size_t *loose)
{
        *ntop = *groups = *loose = 0;
        for (size_t i = 0; i < n;) {
                size_t len = prefix_len(v[i]->path, d), j = i + 1;
                if (!len) {
                        (*loose)++;
                        i++;
                        continue;
                }
                while (j < n && !strncmp(v[j]->path, v[i]->path, len))
                        j++;
                struct place p = {v[i]->path, len, j - i};
                (*groups)++;
                size_t k = *ntop < SUMMARY_PLACES ? (*ntop)++ : SUMMARY_PLACES;
                if (k == SUMMARY_PLACES && top[SUMMARY_PLACES - 1].count >= p.count) {
                        i = j;
                        continue;
                }
                if (k == SUMMARY_PLACES)
                        k = SUMMARY_PLACES - 1;
                while (k > 0 && top[k - 1].count < p.count) {
                        top[k] = top[k - 1];
                        k--;
                }
                top[k] = p;
                i = j;
        }
}

static void print_name(FILE *f, const char *p, size_t len)
{
        _cleanup_free_ char *copy = strndup(p, len);
        _cleanup_free_ char *e = summary_escape(copy ? copy : "", NAME_MAX_BYTES);
        fputs(e, f);
}

void summary_changes_text(FILE *f, const struct txbox_record *rec, const char *more_hint)
{
        size_t n = rec->npaths;
        struct change_counts c;

        summary_counts(rec, &c);
        fputs("changes: ", f);
        if (n)
                kinds_phrase(f, &c);
        else
                fputs("none", f);
        fputc('\n', f);
        if (!n)
                return;
        if (n <= SUMMARY_LIST_ALL) {
                for (size_t i = 0; i < n; i++) {
                        fprintf(f, "  %s ", change_names[rec->paths[i].change % 3]);
                        print_name(f, rec->paths[i].path, strlen(rec->paths[i].path));
                        fputc('\n', f);
                }
                return;
        }
        const struct txbox_path **v = xcalloc(n, sizeof(*v));
        for (size_t i = 0; i < n; i++)
                v[i] = &rec->paths[i];
        qsort(v, n, sizeof(*v), cmp_path_ptr);

        /* Where: the first level of directories, or deeper while one of them holds nine in
         * ten of the paths (a venv: venv/ holds them all, venv/lib/ says more). */
        struct place top[SUMMARY_PLACES];
        size_t ntop, groups, loose, d = 1;
        places_at(v, n, d, top, &ntop, &groups, &loose);
        while (ntop && top[0].count * 10 >= n * 9 && d < PLACES_DEPTH_MAX) {
                struct place t2[SUMMARY_PLACES];
                size_t n2, g2, l2;
                places_at(v, n, d + 1, t2, &n2, &g2, &l2);
                if (!n2)
                        break;
                memcpy(top, t2, sizeof(top));
                ntop = n2, groups = g2, loose = l2, d++;
        }
        if (ntop) {
                size_t shown = 0;
                fputs("  in ", f);
                for (size_t k = 0; k < ntop; k++) {
                        fputs(k ? ", " : "", f);
                        print_name(f, top[k].path, top[k].len);
                        fprintf(f, " (%zu)", top[k].count);
                        shown += top[k].count;
                }
                if (shown < n)
                        fprintf(f, "; %zu elsewhere", n - shown);
                fputc('\n', f);
        }

        /* A few names: the shallowest, which say most (venv/pyvenv.cfg over a module deep in
         * site-packages). */
        size_t pick[SUMMARY_NAMES], npick = 0;
        for (size_t i = 0; i < n; i++) {
                size_t di = depth_of(v[i]->path), k = npick < SUMMARY_NAMES ? npick++ : SUMMARY_NAMES;
                if (k == SUMMARY_NAMES) {
                        if (depth_of(v[pick[SUMMARY_NAMES - 1]]->path) <= di)
                                continue;
                        k = SUMMARY_NAMES - 1;
                }
                while (k > 0 && depth_of(v[pick[k - 1]]->path) > di) {
                        pick[k] = pick[k - 1];
                        k--;
                }
                pick[k] = i;
        }
        for (size_t k = 0; k < npick; k++) {
                fprintf(f, "  %s ", change_names[v[pick[k]]->change % 3]);
                print_name(f, v[pick[k]]->path, strlen(v[pick[k]]->path));
                fputc('\n', f);
        }
        fprintf(f, "  ... and %zu more", n - npick);
        if (more_hint) {
                _cleanup_free_ char *h = summary_escape(more_hint, 300);
                fprintf(f, ": %s", h);
        }
        fputc('\n', f);
        free(v);
}

/* ---- a JSON result within a budget ---- */

size_t summary_json_size(json_t *obj, const char *const *exempt)
{
        json_t *saved[8] = {0};
        size_t k = 0;

        for (; exempt && exempt[k] && k < ARRAY_SIZE(saved); k++) {
                saved[k] = json_incref(json_object_get(obj, exempt[k]));
                if (saved[k])
                        jv_set(obj, exempt[k], json_string(""));
        }
        char *s = json_dumps(obj, JSON_PRESERVE_ORDER); /* as jv_dump */
        size_t n = s ? strlen(s) : 0;
        free(s);
        for (size_t i = 0; i < k; i++)
                if (saved[i])
                        jv_set(obj, exempt[i], saved[i]);
        return n;
}

/* {"added": [...], "modified": [...], "deleted": [...]} with at most keep paths of each kind. */
static json_t *changes_capped(const struct txbox_record *rec, size_t keep)
{
        json_t *a[3];
        for (int k = 0; k < 3; k++)
                a[k] = jv_nonnull(json_array());
        for (size_t i = 0; i < rec->npaths; i++) {
                json_t *arr = a[rec->paths[i].change % 3];
                if (json_array_size(arr) < keep)
                        jv_push(arr, jv_text(rec->paths[i].path));
        }
        return jv_nonnull(json_pack("{s:o, s:o, s:o}", "added", a[0], "modified", a[1], "deleted", a[2]));
}

static void cut_string(json_t *obj, const char *key)
{
        json_t *v = json_object_get(obj, key);
        if (!json_is_string(v) || json_string_length(v) <= CUT_STRING)
                return;
        _cleanup_free_ char *e = summary_escape(json_string_value(v), CUT_STRING);
        jv_set(obj, key, jv_text(e));
}

/* The last resort: what the model sent (a heredoc of 100 KB), long messages, many violations. */
static void cut_rest(json_t *obj)
{
        json_t *argv = json_object_get(obj, "argv"), *viol = json_object_get(obj, "violations");

        if (json_is_array(argv)) {
                json_t *a = jv_nonnull(json_array());
                size_t n = json_array_size(argv);
                for (size_t i = 0; i < n && i < CUT_ARGV; i++) {
                        const char *s = json_string_value(json_array_get(argv, i));
                        _cleanup_free_ char *e = summary_escape(s ? s : "", CUT_STRING);
                        jv_push(a, jv_text(e));
                }
                if (n > CUT_ARGV) {
                        _cleanup_free_ char *more = xasprintf("... (%zu more arguments)", n - CUT_ARGV);
                        jv_push(a, jv_text(more));
                }
                jv_set(obj, "argv", a);
        }
        cut_string(obj, "message");
        cut_string(obj, "reason");
        cut_string(obj, "why");
        cut_string(obj, "summary");
        if (json_is_array(viol) && json_array_size(viol) > CUT_VIOLATIONS) {
                json_t *a = jv_nonnull(json_array());
                for (size_t i = 0; i < CUT_VIOLATIONS; i++)
                        jv_push(a, json_incref(json_array_get(viol, i)));
                jv_set(obj, "violations", a);
        }
        jv_set(obj, "result_cut", json_true());
}

size_t summary_fit(json_t *obj, const struct txbox_record *rec, size_t budget, const char *const *exempt)
{
        struct change_counts c;

        summary_counts(rec, &c);
        jv_set(obj, "change_counts",
                     jv_nonnull(json_pack("{s:I, s:I, s:I}", "added", (json_int_t)c.added, "modified",
                                            (json_int_t)c.modified, "deleted", (json_int_t)c.deleted)));
        jv_set(obj, "changes_truncated", json_false());
        size_t size = summary_json_size(obj, exempt);
        if (!budget || size <= budget)
                return size;

        /* The most paths of each kind that fit: a binary search over that number. */
        size_t most = c.added > c.modified ? c.added : c.modified;
        most = most > c.deleted ? most : c.deleted;
        size_t lo = 0, hi = most; /* lo fits (once tried), hi + 1 does not */
        jv_set(obj, "changes_truncated", json_true());
        while (lo < hi) {
                size_t mid = lo + (hi - lo + 1) / 2;
                jv_set(obj, "changes", changes_capped(rec, mid));
                if (summary_json_size(obj, exempt) <= budget)
                        lo = mid;
                else
                        hi = mid - 1;
        }
        jv_set(obj, "changes", changes_capped(rec, lo));
        if ((size = summary_json_size(obj, exempt)) <= budget)
                return size;
        cut_rest(obj);
        return summary_json_size(obj, exempt);
}
