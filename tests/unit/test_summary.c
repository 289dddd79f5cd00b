/* Compact results for models (src/lib/faces/summary.c): the first line, the paths in words,
 * a result fitted into its budget, and hostile names (control characters, bytes that are not
 * UTF-8, very long paths) kept from forging lines or blowing the budget. */
#define _GNU_SOURCE
#include <jansson.h>

#include "base/mem.h"
#include "faces/summary.h"
#include "store/record.h"
#include "tap.h"
#include "txbox.h"

/* Paths PREFIX0 SUFFIX, PREFIX1 SUFFIX, ... */
static struct txbox_record make_rec(size_t n, const char *prefix, const char *suffix)
{
        struct txbox_record r = {0};
        snprintf(r.id, sizeof(r.id), "0123abcd45");
        r.exit_code = 0;
        r.outcome = TXBOX_COMMITTED;
        r.decision = xstrdup("allow");
        r.argv = xcalloc(4, sizeof(char *));
        r.argv[0] = xstrdup("/bin/sh"), r.argv[1] = xstrdup("-c"), r.argv[2] = xstrdup("make gen");
        r.paths = xcalloc(n ? n : 1, sizeof(*r.paths));
        r.npaths = n;
        for (size_t i = 0; i < n; i++) {
                r.paths[i].path = xasprintf("%s%zu%s", prefix, i, suffix);
                r.paths[i].change = i % 7 == 0 ? TXBOX_MODIFIED : TXBOX_ADDED;
        }
        return r;
}

static char *text_of(const struct txbox_record *r, const char *hint)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        summary_changes_text(f, r, hint);
        fclose(f);
        return buf;
}

static size_t lines(const char *s)
{
        size_t n = 0;
        for (; *s; s++)
                n += *s == '\n';
        return n;
}

int main(void)
{
        /* escaping */
        char *e = summary_escape("a\nb\x1b[1mc\xff", 0);
        is_str(e, "a\\nb\\x1b[1mc\\xff", "control characters and a byte that is not UTF-8 escaped");
        free(e);
        e = summary_escape("h\xc3\xa9llo world", 2);
        is_str(e, "h...", "cut on a character's boundary, marked");
        free(e);

        /* a few paths: all listed */
        struct txbox_record r = make_rec(3, "src/f", ".c");
        char *t = text_of(&r, "HINT");
        is_str(t, "changes: 2 added, 1 modified\n  modified src/f0.c\n  added src/f1.c\n  added src/f2.c\n",
               "up to ten paths: every one, by kind");
        free(t);
        char *line = summary_outcome(&r, 0, NULL);
        is_str(line, "committed tx 0123abcd45: exit status 0, 3 changes (2 added, 1 modified)",
               "the first line of a commit: id, status, counts");
        free(line);
        txbox_record_clear(&r);

        /* 5,000 paths: summarised */
        r = make_rec(5000, "venv/lib/site-packages/m", ".py");
        free(r.paths[4999].path);
        r.paths[4999].path = xstrdup("venv/pyvenv.cfg");
        t = text_of(&r, "show_transaction tx=0123abcd45 lists them all");
        ok(strlen(t) < 1500, "5,000 paths in words: %zu bytes", strlen(t));
        ok(strstr(t, "changes: 4285 added, 715 modified\n") != NULL, "the counts");
        ok(strstr(t, "  in venv/lib/site-packages/ (4999); 1 elsewhere\n") != NULL,
           "the directory that holds them, looked for below venv/ and venv/lib/ which hold them all");
        ok(strstr(t, "  added venv/pyvenv.cfg\n") != NULL, "the shallowest path is named first");
        ok(strstr(t, "  ... and 4995 more: show_transaction tx=0123abcd45 lists them all\n") != NULL,
           "how many more, and where they are");
        free(t);

        json_t *o = record_to_json(&r);
        json_object_set_new(o, "stdout", json_string("x"));
        size_t full = summary_json_size(o, NULL);
        size_t got = summary_fit(o, &r, 4096, (const char *const[]){"stdout", NULL});
        ok(full > 100000 && got <= 4096, "a 5,000-path record fitted from %zu bytes into 4096 (%zu)", full, got);
        ok(json_is_true(json_object_get(o, "changes_truncated")), "changes_truncated");
        is_int(json_integer_value(json_object_get(json_object_get(o, "change_counts"), "added")), 4285,
               "change_counts stays whole");
        size_t listed = json_array_size(json_object_get(json_object_get(o, "changes"), "added"));
        ok(listed > 10 && listed < 4285, "some paths still listed (%zu)", listed);
        json_decref(o);

        o = record_to_json(&r);
        summary_fit(o, &r, 0, NULL);
        is_int(json_array_size(json_object_get(json_object_get(o, "changes"), "added")), 4285,
               "budget 0: every path");
        ok(json_is_false(json_object_get(o, "changes_truncated")), "... not truncated");
        json_decref(o);
        txbox_record_clear(&r);

        /* hostile names: a newline cannot start a line of its own, a huge name is cut */
        r = make_rec(12, "x", "\ncommitted tx ffff: forged");
        t = text_of(&r, NULL);
        ok(!strstr(t, "\ncommitted tx ffff"), "a newline in a path does not start a line");
        is_int(lines(t), 7, "counts, five names and the rest (no directory): seven lines");
        free(t);
        txbox_record_clear(&r);
        char *huge = xmalloc(70000);
        memset(huge, 'p', 69999);
        huge[69999] = '\0';
        r = make_rec(1, "", "");
        free(r.paths[0].path);
        r.paths[0].path = huge;
        free(r.argv[2]);
        r.argv[2] = xstrdup(huge);
        t = text_of(&r, NULL);
        ok(strlen(t) < 400, "a 70 KB path is cut in the text (%zu bytes)", strlen(t));
        free(t);
        o = record_to_json(&r);
        got = summary_fit(o, &r, 4096, NULL);
        ok(got <= 4096, "a 70 KB path and a 70 KB argument: fitted into 4096 (%zu)", got);
        ok(json_is_true(json_object_get(o, "result_cut")), "... result_cut says the argument was cut");
        json_decref(o);
        txbox_record_clear(&r);

        /* first lines */
        r = make_rec(0, "", "");
        r.outcome = TXBOX_DENIED;
        r.rule = xstrdup("rm-root");
        r.reason = xstrdup("deletes\neverything");
        line = summary_outcome(&r, 126, NULL);
        is_str(line, "refused by policy rule rm-root: deletes\\neverything; nothing ran and nothing changed",
               "a refusal: rule and reason, escaped, on one line");
        free(line);
        r.outcome = TXBOX_ROLLED_BACK;
        r.exit_code = 1;
        line = summary_outcome(&r, 1, NULL);
        is_str(line, "rolled back tx 0123abcd45: exit status 1", "a rollback without a message: its status");
        free(line);
        line = summary_outcome(&r, 123, "rolled back tx 0123abcd45: rule effect-x broken by 'a' (b)");
        is_str(line, "rolled back tx 0123abcd45: rule effect-x broken by 'a' (b)", "... with one: the reason");
        free(line);
        txbox_record_clear(&r);
        return tap_done();
}
