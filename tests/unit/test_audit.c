/* Unit tests for the audit store (src/lib/store/audit.c, auditwrite.c, auditread.c) and records
 * (src/lib/store/record.c). */
#define _GNU_SOURCE
/* tests/run.sh runs this as root and as an unprivileged user (as-user). */
#include <dirent.h>
#include <ftw.h>
#include <jansson.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"
#include "store/audit.h"
#include "store/record.h"
#include "tap.h"
#include "txbox.h"

static char tmpdir[200];

static char *tmp_path(const char *name) { return xasprintf("%s/%s", tmpdir, name); }

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st, (void)flag, (void)ftw;
        return remove(p);
}

/* Fill r: each path spec is "+path" (added), "~path" (modified) or "-path" (deleted). */
static void mkrec(struct txbox_record *r, const char *id, enum txbox_outcome outcome,
                  int64_t commit_seq, const char *const *specs)
{
        static char *const argv[] = { "true", NULL };

        memset(r, 0, sizeof(*r));
        snprintf(r->id, sizeof(r->id), "%s", id);
        r->argv = strv_dup(argv);
        r->decision = xstrdup("allow");
        r->exit_code = 0;
        r->outcome = outcome;
        r->commit_seq = commit_seq;
        for (size_t i = 0; specs && specs[i]; i++) {
                r->paths = xrealloc(r->paths, (r->npaths + 1) * sizeof(*r->paths));
                r->paths[r->npaths].path = xstrdup(specs[i] + 1);
                r->paths[r->npaths++].change = specs[i][0] == '+'   ? TXBOX_ADDED
                                               : specs[i][0] == '~' ? TXBOX_MODIFIED
                                                                    : TXBOX_DELETED;
        }
}

static int insert(struct audit *a, const char *id, enum txbox_outcome outcome, int64_t commit_seq,
                  const char *const *specs)
{
        struct txbox_record r;
        struct txbox_error err = { 0 };
        mkrec(&r, id, outcome, commit_seq, specs);
        int ret = audit_insert(a, &r, &err);
        if (ret < 0)
                printf("# insert %s: %s\n", id, err.msg);
        txbox_record_clear(&r);
        return ret;
}

static struct audit *open_db(const char *name)
{
        _cleanup_free_ char *p = tmp_path(name);
        struct txbox_error err = { 0 };
        struct audit *a = NULL;
        if (audit_open(p, &a, &err) < 0)
                printf("# open %s: %s\n", p, err.msg);
        return a;
}

/* The full record: every field set, NULL rule/reason, no exit code, a signal. */
static void full_record(struct txbox_record *r)
{
        static const char *const specs[] = { "~src/b.c", "+a.txt", "-old", NULL };
        static char *const argv[] = { "sh", "-c", "echo hi > a.txt", "\xff\xfe bytes", NULL };

        mkrec(r, "a1b2c3d4e5f60718", TXBOX_ROLLED_BACK, 0, specs);
        strv_free(r->argv);
        r->argv = strv_dup(argv);
        r->cwd = xstrdup("/work/ws");
        r->exit_code = -1;
        r->signal = 9;
        r->started_ms = 1700000000123;
        r->ended_ms = 1700000000623;
        r->duration_ms = 500;
        r->message = xstrdup("killed by signal 9");
        r->nviolations = 2;
        r->violations = xcalloc(2, sizeof(*r->violations));
        r->violations[0] = (struct txbox_violation){ xstrdup("no-secrets"), xstrdup(".env"),
                                                     xstrdup("wrote a secret") };
        r->violations[1] = (struct txbox_violation){ xstrdup("no-\xc3\xa9-bin"),
                                                     xstrdup("bin/\x80x"), NULL };
}

static void test_names(void)
{
        static const char *const names[] = { "running", "pending", "committing", "committed",
                                              "rolled_back", "denied", "undoing", "undone" };
        int good = 1;

        for (int i = 0; i < (int)ARRAY_SIZE(names); i++)
                good &= !strcmp(txbox_outcome_name((enum txbox_outcome)i), names[i]) &&
                        txbox_outcome_parse(names[i]) == i;
        ok(good, "outcome names and parse are inverse for all 8 outcomes");
        is_int(txbox_outcome_parse("bogus"), -1, "unknown outcome name parses to -1");
        is_int(txbox_outcome_parse(NULL), -1, "NULL outcome name parses to -1");
        is_str(txbox_outcome_name((enum txbox_outcome)99), "unknown", "out-of-range outcome name");
        is_str(txbox_change_name(TXBOX_ADDED), "added", "change name added");
        is_str(txbox_change_name(TXBOX_MODIFIED), "modified", "change name modified");
        is_str(txbox_change_name(TXBOX_DELETED), "deleted", "change name deleted");
        is_int(txbox_change_parse("deleted"), TXBOX_DELETED, "change parse deleted");
        is_int(txbox_change_parse("gone"), -1, "unknown change parses to -1");
}

static void test_record_copy_clear(void)
{
        struct txbox_record a, b;

        full_record(&a);
        record_copy(&b, &a);
        ok(b.argv != a.argv && b.paths != a.paths && b.violations != a.violations &&
           b.cwd != a.cwd, "record_copy allocates its own arrays and strings");
        txbox_record_clear(&a);
        is_str(b.argv[3], "\xff\xfe bytes", "copied argv survives clearing the source");
        is_str(b.paths[2].path, "old", "copied paths survive clearing the source");
        is_str(b.violations[1].rule, "no-\xc3\xa9-bin", "copied violations survive");
        is_int(b.signal, 9, "copy keeps scalars");
        txbox_record_clear(&b);
        ok(b.argv == NULL && b.paths == NULL && b.npaths == 0 && b.nviolations == 0 &&
           b.signal == 0 && b.id[0] == '\0', "txbox_record_clear zeroes the record");
        /* NULL-safe: a crash here fails the run (no plan line). */
        txbox_record_clear(NULL);
        txbox_records_free(NULL, 0);
}

static void check_full(const struct txbox_record *g, int64_t seq)
{
        is_str(g->id, "a1b2c3d4e5f60718", "get: id");
        is_int(g->seq, seq, "get: seq");
        is_int(strv_len(g->argv), 4, "get: argv length");
        is_str(g->argv[2], "echo hi > a.txt", "get: argv text");
        is_str(g->argv[3], "\xff\xfe bytes", "get: non-UTF-8 argv comes back byte for byte");
        is_str(g->cwd, "/work/ws", "get: cwd");
        is_str(g->decision, "allow", "get: decision");
        ok(g->rule == NULL, "get: NULL rule stays NULL");
        ok(g->reason == NULL, "get: NULL reason stays NULL");
        is_int(g->exit_code, -1, "get: exit_code -1");
        is_int(g->signal, 9, "get: signal");
        is_int(g->outcome, TXBOX_ROLLED_BACK, "get: outcome");
        is_int(g->commit_seq, 0, "get: commit_seq 0");
        is_int(g->started_ms, 1700000000123, "get: started_ms");
        is_int(g->ended_ms, 1700000000623, "get: ended_ms");
        is_int(g->duration_ms, 500, "get: duration_ms");
        is_str(g->message, "killed by signal 9", "get: message");
        is_int(g->npaths, 3, "get: 3 paths");
        if (g->npaths == 3) {
                is_str(g->paths[0].path, "a.txt", "get: paths sorted (0)");
                is_int(g->paths[0].change, TXBOX_ADDED, "get: a.txt added");
                is_str(g->paths[1].path, "old", "get: paths sorted (1)");
                is_int(g->paths[1].change, TXBOX_DELETED, "get: old deleted");
                is_str(g->paths[2].path, "src/b.c", "get: paths sorted (2)");
                is_int(g->paths[2].change, TXBOX_MODIFIED, "get: src/b.c modified");
        }
        is_int(g->nviolations, 2, "get: 2 violations");
        if (g->nviolations == 2) {
                is_str(g->violations[0].rule, "no-secrets", "get: violation rule");
                is_str(g->violations[0].path, ".env", "get: violation path");
                is_str(g->violations[0].detail, "wrote a secret", "get: violation detail");
                is_str(g->violations[1].rule, "no-\xc3\xa9-bin", "get: UTF-8 violation rule");
                is_str(g->violations[1].path, "bin/\x80x", "get: non-UTF-8 violation path");
                ok(g->violations[1].detail == NULL, "get: NULL violation detail stays NULL");
        }
}

static void test_roundtrip(struct audit *a)
{
        struct txbox_record r, g = { 0 };
        struct txbox_error err = { 0 };

        full_record(&r);
        is_int(audit_insert(a, &r, &err), 0, "insert the full record");
        ok(r.seq > 0, "insert assigns seq (%lld)", (long long)r.seq);
        is_int(audit_get(a, r.id, &g, &err), 0, "get it back by exact id");
        check_full(&g, r.seq);
        txbox_record_clear(&g);

        is_int(audit_insert(a, &r, &err), -EEXIST, "inserting the same id again gives -EEXIST");
        ok(strstr(err.msg, r.id) != NULL, "duplicate message names the id: %s", err.msg);
        txbox_record_clear(&r);
}

static void test_update(struct audit *a)
{
        static const char *const before[] = { "+x/1", "+x/2", "~y", NULL };
        static const char *const after[] = { "-y", NULL };
        struct txbox_record r, g = { 0 };
        struct txbox_error err = { 0 };

        mkrec(&r, "feed00000001", TXBOX_RUNNING, 0, before);
        is_int(audit_insert(a, &r, &err), 0, "insert a running record");
        int64_t seq = r.seq;
        txbox_record_clear(&r);

        mkrec(&r, "feed00000001", TXBOX_COMMITTED, 7, after);
        r.rule = xstrdup("allow-all");
        r.reason = xstrdup("default rule");
        r.exit_code = 0;
        r.signal = 0;
        r.message = NULL;
        is_int(audit_update(a, &r, &err), 0, "update it");
        is_int(audit_get(a, "feed00000001", &g, &err), 0, "get the updated record");
        is_int(g.seq, seq, "update keeps seq");
        is_int(g.outcome, TXBOX_COMMITTED, "update changes outcome");
        is_int(g.commit_seq, 7, "update sets commit_seq");
        is_str(g.rule, "allow-all", "update sets rule");
        is_str(g.reason, "default rule", "update sets reason");
        is_int(g.exit_code, 0, "exit_code 0 is kept as 0, not none");
        is_int(g.signal, 0, "signal 0 reads back as 0");
        ok(g.message == NULL, "NULL message stays NULL");
        is_int(g.npaths, 1, "update replaces the path rows (3 -> 1)");
        if (g.npaths == 1)
                ok(!strcmp(g.paths[0].path, "y") && g.paths[0].change == TXBOX_DELETED,
                   "the remaining path is the new one");
        txbox_record_clear(&g);

        /* The row alone: the outcome changes, the path rows stay as written above.  (r now
         * lists none, against update_row's rule, only to show that the rows are not rewritten.) */
        r.outcome = TXBOX_UNDONE;
        for (size_t i = 0; i < r.npaths; i++)
                free(r.paths[i].path);
        r.npaths = 0;
        is_int(audit_update_row(a, &r, &err), 0, "update the row only");
        is_int(audit_get(a, "feed00000001", &g, &err), 0, "get it again");
        is_int(g.outcome, TXBOX_UNDONE, "update_row changes the outcome");
        is_int(g.commit_seq, 7, "update_row keeps the other fields it was given");
        is_int(g.npaths, 1, "update_row leaves the path rows alone");
        txbox_record_clear(&g);

        snprintf(r.id, sizeof(r.id), "nothere00000");
        is_int(audit_update(a, &r, &err), -ENOENT, "updating an unknown id gives -ENOENT");
        is_int(audit_update_row(a, &r, &err), -ENOENT, "so does updating only its row");
        txbox_record_clear(&r);
}

static void test_prefix(struct audit *a)
{
        struct txbox_record g = { 0 };
        struct txbox_error err = { 0 };

        insert(a, "abcd1111", TXBOX_PENDING, 0, NULL);
        insert(a, "abcd2222", TXBOX_PENDING, 0, NULL);
        insert(a, "abce3333", TXBOX_PENDING, 0, NULL);
        insert(a, "abc", TXBOX_PENDING, 0, NULL);

        is_int(audit_get(a, "abcd1", &g, &err), 0, "unique prefix abcd1 resolves");
        is_str(g.id, "abcd1111", "prefix lookup finds abcd1111");
        txbox_record_clear(&g);
        is_int(audit_get(a, "abce", &g, &err), 0, "4-character unique prefix resolves");
        is_str(g.id, "abce3333", "prefix lookup finds abce3333");
        txbox_record_clear(&g);
        is_int(audit_get(a, "abc", &g, &err), 0, "a short id that exists exactly is found");
        is_str(g.id, "abc", "exact match wins over prefix");
        txbox_record_clear(&g);

        g.seq = 4242;
        is_int(audit_get(a, "abcd", &g, &err), -EINVAL, "ambiguous prefix gives -EINVAL");
        ok(strstr(err.msg, "abcd1111") && strstr(err.msg, "abcd2222") && !strstr(err.msg, "abce3333"),
           "ambiguity message lists the candidates: %s", err.msg);
        is_int(g.seq, 4242, "a failed get leaves out untouched");
        is_int(err.code, EINVAL, "err.code is set");

        is_int(audit_get(a, "ab", &g, &err), -ENOENT, "a 2-character prefix is not looked up");
        ok(strstr(err.msg, "at least 4") != NULL, "short-prefix message says why: %s", err.msg);
        is_int(audit_get(a, "zzzz", &g, &err), -ENOENT, "missing id gives -ENOENT");
        ok(strstr(err.msg, "no transaction 'zzzz' in this workspace's log") != NULL,
           "missing message: %s", err.msg);
        is_int(audit_get(a, "", &g, &err), -EINVAL, "empty id gives -EINVAL");

        for (int i = 0; i < 7; i++) {
                char id[16];
                snprintf(id, sizeof(id), "dddd%04d", i);
                insert(a, id, TXBOX_PENDING, 0, NULL);
        }
        is_int(audit_get(a, "dddd", &g, &err), -EINVAL, "7-way ambiguous prefix");
        ok(strstr(err.msg, "dddd0004") && !strstr(err.msg, "dddd0005") && strstr(err.msg, "..."),
           "only 5 candidates listed, then ...: %s", err.msg);

        /* A prefix with no successor string: every byte 0xff. */
        insert(a, "\xff\xff\xff\xff\xff", TXBOX_PENDING, 0, NULL);
        is_int(audit_get(a, "\xff\xff\xff\xff", &g, &err), 0, "all-0xff prefix resolves");
        is_str(g.id, "\xff\xff\xff\xff\xff", "all-0xff prefix finds its id");
        txbox_record_clear(&g);
}

static void test_list(void)
{
        static const char *const one[] = { "+f", NULL };
        struct audit *a = open_db("list.db");
        struct txbox_record *v = NULL;
        struct txbox_error err = { 0 };
        size_t n = 99;
        int64_t next = 0;

        is_int(audit_list(a, 0, &v, &n, &err), 0, "list an empty log");
        is_int(n, 0, "empty log lists nothing");
        txbox_records_free(v, n);
        is_int(audit_next_commit_seq(a, &next, &err), 0, "next_commit_seq on empty log");
        is_int(next, 1, "next_commit_seq starts at 1");
        is_int(audit_newest_committed(a, &(struct txbox_record){ 0 }, &err), -ENOENT,
               "newest_committed on empty log gives -ENOENT");

        insert(a, "l1000000", TXBOX_COMMITTED, 1, one);
        insert(a, "l2000000", TXBOX_RUNNING, 0, NULL);
        insert(a, "l3000000", TXBOX_COMMITTED, 3, one);
        insert(a, "l4000000", TXBOX_COMMITTING, 0, NULL);
        insert(a, "l5000000", TXBOX_UNDONE, 5, one);
        insert(a, "l6000000", TXBOX_PENDING, 0, NULL);

        is_int(audit_list(a, 2, &v, &n, &err), 0, "list with limit 2");
        is_int(n, 2, "limit 2 gives 2 records");
        if (n == 2) {
                is_str(v[0].id, "l6000000", "newest first (0)");
                is_str(v[1].id, "l5000000", "newest first (1)");
                ok(v[1].npaths == 1 && !strcmp(v[1].paths[0].path, "f"), "listed records carry paths");
        }
        txbox_records_free(v, n);
        is_int(audit_list(a, -1, &v, &n, &err), 0, "list everything");
        is_int(n, 6, "limit <= 0 lists all 6");
        if (n == 6)
                is_str(v[5].id, "l1000000", "oldest last");
        txbox_records_free(v, n);

        enum txbox_outcome want[] = { TXBOX_COMMITTING, TXBOX_RUNNING, TXBOX_RUNNING };
        is_int(audit_list_outcomes(a, want, 3, &v, &n, &err), 0, "list_outcomes running+committing");
        is_int(n, 2, "two records match");
        if (n == 2)
                ok(!strcmp(v[0].id, "l2000000") && !strcmp(v[1].id, "l4000000"),
                   "list_outcomes gives the right ones, oldest first");
        txbox_records_free(v, n);
        is_int(audit_list_outcomes(a, want, 0, &v, &n, &err), 0, "list_outcomes with no outcomes");
        is_int(n, 0, "no outcomes: nothing");
        txbox_records_free(v, n);
        enum txbox_outcome bad[] = { (enum txbox_outcome)42 };
        is_int(audit_list_outcomes(a, bad, 1, &v, &n, &err), -EINVAL, "unknown outcome: -EINVAL");

        is_int(audit_next_commit_seq(a, &next, &err), 0, "next_commit_seq");
        is_int(next, 6, "next_commit_seq is max+1, undone included");
        struct txbox_record g = { 0 };
        is_int(audit_newest_committed(a, &g, &err), 0, "newest_committed");
        is_str(g.id, "l3000000", "newest committed ignores the undone one");
        is_int(g.npaths, 1, "newest committed carries its paths");
        txbox_record_clear(&g);
        audit_close(a);
}

static int has(const struct strvec *sv, const char *s)
{
        int k = 0;
        for (size_t i = 0; i < sv->n; i++)
                k += !strcmp(sv->v[i], s);
        return k;
}

static void test_overlaps(void)
{
        static const char *const e1[] = { "~lib/x.c", NULL };
        static const char *const e2[] = { "~src/a.c", "+docs/readme", NULL };
        static const char *const e3[] = { "+build/out/obj.o", "+src-other/z", "+src.c", "+buildx",
                                          NULL };
        static const char *const e4[] = { "-tree", NULL };
        static const char *const e5[] = { "~src/a.c", "+build/new", NULL };
        struct audit *a = open_db("overlap.db");
        struct txbox_error err = { 0 };
        struct strvec out = { 0 };

        insert(a, "e1000000", TXBOX_COMMITTED, 1, e1);
        insert(a, "e2000000", TXBOX_COMMITTED, 2, e2);
        insert(a, "e3000000", TXBOX_COMMITTED, 3, e3);
        insert(a, "e4000000", TXBOX_COMMITTED, 4, e4);
        insert(a, "e5000000", TXBOX_UNDONE, 5, e5);
        insert(a, "e6000000", TXBOX_PENDING, 0, e5);

        struct txbox_path q[] = { { "src/a.c", TXBOX_MODIFIED }, { "build", TXBOX_ADDED },
                                  { "tree/deep/file", TXBOX_ADDED }, { "lib/x.c", TXBOX_MODIFIED } };
        int r = audit_later_overlaps(a, 1, q, ARRAY_SIZE(q), &out, &err);
        is_int(r, 3, "3 overlaps after commit 1");
        is_int(out.n, 3, "3 strings out");
        is_int(has(&out, "src/a.c (tx e2000000)"), 1, "equal path counted");
        is_int(has(&out, "build/out/obj.o (tx e3000000)"), 1, "descendant counted");
        is_int(has(&out, "tree (tx e4000000)"), 1, "ancestor counted");
        is_int(has(&out, "lib/x.c (tx e1000000)"), 0, "commit not after N not counted");
        is_int(has(&out, "buildx (tx e3000000)"), 0, "sibling with the same name prefix not counted");
        is_int(has(&out, "build/new (tx e5000000)"), 0, "undone transaction not counted");
        for (size_t i = 0; i < out.n; i++)
                printf("#   %s\n", out.v[i]);
        strvec_clear(&out);

        struct txbox_path q2[] = { { "src", TXBOX_DELETED }, { "src/a.c", TXBOX_DELETED } };
        r = audit_later_overlaps(a, 0, q2, ARRAY_SIZE(q2), &out, &err);
        is_int(r, 1, "src and src/a.c: one overlap, deduplicated");
        is_int(has(&out, "src/a.c (tx e2000000)"), 1, "only src/a.c, not src-other/z or src.c");
        strvec_clear(&out);

        struct txbox_path q3[] = { { "docs/other", TXBOX_ADDED }, { "nothing/here", TXBOX_ADDED } };
        is_int(audit_later_overlaps(a, 0, q3, ARRAY_SIZE(q3), &out, &err), 0, "unrelated paths: none");
        is_int(out.n, 0, "unrelated paths: empty list");
        strvec_clear(&out);

        is_int(audit_later_overlaps(a, 3, q, ARRAY_SIZE(q), &out, &err), 1, "after commit 3: one");
        is_int(has(&out, "tree (tx e4000000)"), 1, "after commit 3: the ancestor of commit 4");
        strvec_clear(&out);

        struct txbox_path root[] = { { "", TXBOX_MODIFIED } };
        is_int(audit_later_overlaps(a, 1, root, 1, &out, &err), 7,
               "the workspace root overlaps every later committed path");
        strvec_clear(&out);
        audit_close(a);
}

/* Past 256 later commits the lookup goes by path, below by commit: both find the same. */
static void test_overlap_plans(void)
{
        static const char *const hot[] = { "~hot/f", NULL };
        static const char *const both[] = { "~hot/f", "+cold/x", NULL };
        struct audit *a = open_db("plans.db");
        struct txbox_error err = { 0 };
        struct strvec out = { 0 };
        char id[32];

        for (int i = 1; i <= 300; i++) {
                snprintf(id, sizeof(id), "p%07d", i);
                insert(a, id, i == 200 ? TXBOX_UNDONE : TXBOX_COMMITTED, i, i == 150 ? both : hot);
        }
        struct txbox_path q[] = { { "hot/f", TXBOX_MODIFIED }, { "cold/x/y", TXBOX_ADDED } };
        /* 299 committed after 0 (one undone): by path */
        is_int(audit_later_overlaps(a, 0, q, ARRAY_SIZE(q), &out, &err), 300,
               "300 later commits: 299 + cold/x");
        is_int(has(&out, "cold/x (tx p0000150)"), 1, "by path: the ancestor");
        is_int(has(&out, "hot/f (tx p0000200)"), 0, "by path: not the undone one");
        is_int(has(&out, "hot/f (tx p0000001)"), 1, "by path: the first");
        strvec_clear(&out);
        /* 160 later: by commit */
        is_int(audit_later_overlaps(a, 140, q, ARRAY_SIZE(q), &out, &err), 160,
               "160 later commits: 159 + cold/x");
        is_int(has(&out, "cold/x (tx p0000150)"), 1, "by commit: the ancestor");
        is_int(has(&out, "hot/f (tx p0000200)"), 0, "by commit: not the undone one");
        is_int(has(&out, "hot/f (tx p0000140)"), 0, "by commit: not commit 140 itself");
        is_int(has(&out, "hot/f (tx p0000141)"), 1, "by commit: the first after it");
        strvec_clear(&out);
        /* 160 later commits x 500 lookups: over the probe budget, by path again */
        struct txbox_path *big = xcalloc(500, sizeof(*big));
        big[0] = (struct txbox_path){ "hot/f", TXBOX_MODIFIED };
        big[1] = (struct txbox_path){ "cold/x/y", TXBOX_ADDED };
        for (int i = 2; i < 500; i++)
                big[i] = (struct txbox_path){ xasprintf("fresh/%03d", i), TXBOX_ADDED };
        is_int(audit_later_overlaps(a, 140, big, 500, &out, &err), 160,
               "500 lookups x 160 later commits: by path");
        is_int(has(&out, "cold/x (tx p0000150)"), 1, "over the budget: the ancestor");
        is_int(has(&out, "hot/f (tx p0000141)"), 1, "over the budget: the first after it");
        strvec_clear(&out);
        for (int i = 2; i < 500; i++)
                free(big[i].path);
        free(big);
        struct txbox_path sub[] = { { "hot", TXBOX_DELETED } };
        is_int(audit_later_overlaps(a, 290, sub, 1, &out, &err), 10, "a subtree, by commit");
        strvec_clear(&out);
        is_int(audit_later_overlaps(a, 20, sub, 1, &out, &err), 279, "a subtree, by path");
        strvec_clear(&out);
        struct txbox_path root[] = { { "", TXBOX_MODIFIED } };
        is_int(audit_later_overlaps(a, 295, root, 1, &out, &err), 5, "the root, by commit");
        strvec_clear(&out);
        is_int(audit_later_overlaps(a, 10, root, 1, &out, &err), 290, "the root, by path");
        strvec_clear(&out);
        audit_close(a);
}

static void test_json(void)
{
        struct txbox_record r;
        json_error_t jerr;

        full_record(&r);
        _cleanup_free_ char *s = txbox_record_json(&r);
        json_auto_t *j = json_loads(s, 0, &jerr);
        ok(j != NULL, "record JSON parses back");
        ok(!strncmp(s, "{\"tx\": \"a1b2c3d4e5f60718\", \"argv\": [", 36),
           "one line, CONTRACT separators, tx first: %.40s", s);
        ok(!strchr(s, '\n'), "one line");
        ok(s[strlen(s) - 1] == '}', "no trailing newline");
        is_str(json_string_value(json_object_get(j, "tx")), r.id, "tx");
        ok(json_is_null(json_object_get(j, "rule")), "rule null");
        ok(json_is_null(json_object_get(j, "reason")), "reason null");
        ok(json_is_null(json_object_get(j, "exit_code")), "exit_code -1 is null");
        is_int(json_integer_value(json_object_get(j, "signal")), 9, "signal 9");
        is_str(json_string_value(json_object_get(j, "outcome")), "rolled_back", "outcome");
        is_str(json_string_value(json_object_get(j, "decision")), "allow", "decision");
        is_int(json_integer_value(json_object_get(j, "duration_ms")), 500, "duration_ms");
        json_t *ch = json_object_get(j, "changes");
        is_str(json_string_value(json_array_get(json_object_get(ch, "added"), 0)), "a.txt",
               "changes.added");
        is_str(json_string_value(json_array_get(json_object_get(ch, "modified"), 0)), "src/b.c",
               "changes.modified");
        is_str(json_string_value(json_array_get(json_object_get(ch, "deleted"), 0)), "old",
               "changes.deleted");
        json_t *v = json_object_get(j, "violations");
        is_int(json_array_size(v), 2, "two violations");
        is_str(json_string_value(json_object_get(json_array_get(v, 0), "rule")), "no-secrets",
               "violation rule");
        ok(json_is_null(json_object_get(json_array_get(v, 1), "detail")), "NULL detail is null");
        is_str(json_string_value(json_object_get(json_array_get(v, 1), "path")), "bin/\xef\xbf\xbdx",
               "non-UTF-8 byte shown as U+FFFD");
        is_str(json_string_value(json_array_get(json_object_get(j, "argv"), 3)),
               "\xef\xbf\xbd\xef\xbf\xbd bytes", "non-UTF-8 argv shown lossy");
        /* ... and given exactly beside, in hex, under the same key with _hex (CONTRACT) */
        json_t *ah = json_object_get(j, "argv_hex");
        ok(json_is_array(ah) && json_array_size(ah) == 4 && json_is_null(json_array_get(ah, 0)) &&
                   json_is_null(json_array_get(ah, 2)),
           "argv_hex: parallel to argv, null where exact");
        is_str(json_string_value(json_array_get(ah, 3)), "fffe206279746573", "argv_hex: the exact bytes");
        is_str(json_string_value(json_object_get(json_array_get(v, 1), "path_hex")), "62696e2f8078",
               "a violation's path_hex: the exact bytes");
        ok(!json_object_get(json_array_get(v, 0), "path_hex"), "no path_hex where the path is exact");
        ok(!json_object_get(j, "changes_hex") && !json_object_get(j, "cwd_hex"),
           "no changes_hex nor cwd_hex when every name is exact");
        is_str(json_string_value(json_object_get(j, "cwd")), "/work/ws", "extra: cwd");
        is_int(json_integer_value(json_object_get(j, "started_ms")), 1700000000123, "extra: started_ms");
        is_str(json_string_value(json_object_get(j, "message")), "killed by signal 9", "extra: message");
        ok(json_is_null(json_object_get(j, "commit_seq")), "extra: commit_seq 0 is null");

        r.exit_code = 3;
        r.signal = 0;
        free(r.message);
        r.message = NULL;
        _cleanup_free_ char *s2 = txbox_records_json(&r, 1);
        json_auto_t *arr = json_loads(s2, 0, &jerr);
        json_t *o = json_array_get(arr, 0);
        is_int(json_array_size(arr), 1, "records JSON is an array of 1");
        is_int(json_integer_value(json_object_get(o, "exit_code")), 3, "exit_code 3 is a number");
        ok(json_is_null(json_object_get(o, "signal")), "signal 0 is null");
        ok(json_is_null(json_object_get(o, "message")), "NULL message is null");
        _cleanup_free_ char *s3 = txbox_records_json(NULL, 0);
        is_str(s3, "[]", "no records: []");
        txbox_record_clear(&r);

        /* Names that are not UTF-8 among the changes and in the directory: lossless. */
        static const char *const specs[] = {"+ok.txt", "+a\xff.txt", "-caf\xc3\xa9", "-\xed\xa0\x80x",
                                            "~src/\xc0\xaf", NULL};
        mkrec(&r, "b1b2c3d4e5", TXBOX_COMMITTED, 0, specs);
        r.cwd = xstrdup("/w/\xfe");
        _cleanup_free_ char *s4 = txbox_record_json(&r);
        json_auto_t *j4 = json_loads(s4, 0, &jerr);
        json_t *chx = json_object_get(j4, "changes_hex");
        ok(j4 && json_is_object(chx), "changes_hex when a changed name is not UTF-8");
        json_t *add = json_object_get(chx, "added"), *del = json_object_get(chx, "deleted");
        ok(json_array_size(add) == 2 && json_is_null(json_array_get(add, 0)) &&
                   !strcmp(json_string_value(json_array_get(add, 1)) ?: "", "61ff2e747874"),
           "changes_hex.added: parallel, a\\xff.txt as 61ff2e747874");
        ok(json_array_size(del) == 2 && json_is_null(json_array_get(del, 0)) &&
                   !strcmp(json_string_value(json_array_get(del, 1)) ?: "", "eda08078"),
           "changes_hex.deleted: valid UTF-8 (café) null, an encoded surrogate in hex");
        is_str(json_string_value(json_array_get(json_object_get(chx, "modified"), 0)), "7372632fc0af",
               "changes_hex.modified: an overlong form in hex");
        is_str(json_string_value(json_array_get(json_object_get(json_object_get(j4, "changes"), "added"), 1)),
               "a\xef\xbf\xbd.txt", "changes.added keeps its readable form");
        is_str(json_string_value(json_object_get(j4, "cwd_hex")), "2f772ffe", "cwd_hex");
        ok(!json_object_get(j4, "argv_hex"), "no argv_hex when argv is exact");
        txbox_record_clear(&r);
}

static int write_file(const char *p, const void *data, size_t len)
{
        FILE *f = fopen(p, "we");
        if (!f)
                return -1;
        size_t w = fwrite(data, 1, len, f);
        return fclose(f) == 0 && w == len ? 0 : -1;
}

static void expect_open_fails(const char *name, int code, const char *what)
{
        _cleanup_free_ char *p = tmp_path(name);
        struct txbox_error err = { 0 };
        struct audit *a = NULL;

        is_int(audit_open(p, &a, &err), -code, "%s: audit_open fails", what);
        ok(a == NULL, "%s: no handle", what);
        ok(strstr(err.msg, p) != NULL, "%s: message names the file: %s", what, err.msg);
        is_int(err.code, code, "%s: err.code", what);
}

static int sql(const char *name, const char *statements)
{
        _cleanup_free_ char *p = tmp_path(name);
        sqlite3 *db = NULL;
        int rc = sqlite3_open(p, &db);
        if (rc == SQLITE_OK)
                rc = sqlite3_exec(db, statements, NULL, NULL, NULL);
        sqlite3_close(db);
        return rc;
}

static void test_bad_files(void)
{
        char garbage[4096];

        for (size_t i = 0; i < sizeof(garbage); i++)
                garbage[i] = (char)(i * 7 + 13);
        _cleanup_free_ char *p = tmp_path("garbage.db");
        _cleanup_free_ char *p2 = tmp_path("short.db");
        ok(write_file(p, garbage, sizeof(garbage)) == 0, "write a garbage file");
        expect_open_fails("garbage.db", EBADMSG, "garbage file");
        ok(write_file(p2, "not a db\n", 9) == 0, "write a short text file");
        expect_open_fails("short.db", EBADMSG, "short text file");

        is_int(sql("foreign.db", "CREATE TABLE foo(x); INSERT INTO foo VALUES(1);"), SQLITE_OK,
               "make a foreign SQLite database");
        expect_open_fails("foreign.db", EBADMSG, "foreign database");

        struct audit *a = open_db("newer.db");
        ok(a != NULL, "create a log to make newer");
        audit_close(a);
        is_int(sql("newer.db", "UPDATE meta SET value = '2' WHERE key = 'schema_version'"),
               SQLITE_OK, "set schema_version 2");
        expect_open_fails("newer.db", EPROTO, "newer schema");

        expect_open_fails("no/such/dir/audit.db", ENOENT, "missing directory");
}

static void test_busy(void)
{
        _cleanup_free_ char *p = tmp_path("busy.db");
        /* The timeout comes from TXBOX_DB_BUSY_MS when set (10 s otherwise): 1.5 s keeps the
         * unit run short and still shows the wait is the configured one. */
        setenv("TXBOX_DB_BUSY_MS", "1500", 1);
        struct audit *a = open_db("busy.db");
        struct txbox_error err = { 0 };
        struct txbox_record r;
        sqlite3 *db = NULL;

        ok(sqlite3_open(p, &db) == SQLITE_OK &&
           sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK,
           "another connection holds the write lock");
        mkrec(&r, "busy0000", TXBOX_RUNNING, 0, NULL);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        is_int(audit_insert(a, &r, &err), -EBUSY, "insert under a held lock gives -EBUSY");
        clock_gettime(CLOCK_MONOTONIC, &t1);
        long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        ok(ms >= 1400, "after waiting the busy timeout (%ld ms of 1500)", ms);
        ok(strstr(err.msg, p) && strstr(err.msg, "locked") && strstr(err.msg, "for 2 s"),
           "busy message names the file and the wait: %s", err.msg);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close(db);
        is_int(audit_insert(a, &r, &err), 0, "insert works once the lock is gone");
        txbox_record_clear(&r);
        audit_close(a);
        unsetenv("TXBOX_DB_BUSY_MS");
}

/* A log file that is no regular file is refused at once, by name, before anything opens it
 * (a FIFO would block open(2) and SQLite's first read). */
static void test_odd_files(void)
{
        _cleanup_free_ char *fifo = tmp_path("fifo.db"), *link = tmp_path("link.db");
        _cleanup_free_ char *dir = tmp_path("dir.db");
        _cleanup_free_ char *target = tmp_path("target.db"), *side = tmp_path("side.db");
        _cleanup_free_ char *side_wal = tmp_path("side.db-wal");
        struct txbox_error err = { 0 };
        struct audit *a = NULL;

        ok(mkfifo(fifo, 0600) == 0, "make a FIFO audit.db");
        is_int(audit_check_files(fifo, &err), -EBADF, "audit_check_files refuses a FIFO");
        ok(strstr(err.msg, "is a FIFO, not a regular file") && strstr(err.msg, "move it aside"),
           "and says what it is and what to do: %s", err.msg);
        expect_open_fails("fifo.db", EBADF, "FIFO");
        is_int(audit_open_deferred(fifo, &a, &err), -EBADF, "a deferred open refuses it too");
        ok(a == NULL, "and gives no handle");

        struct audit *t = open_db("target.db");
        audit_close(t);
        ok(symlink(target, link) == 0, "make a symlink to a good log");
        expect_open_fails("link.db", EBADF, "symlink");
        is_int(audit_check_files(link, &err), -EBADF, "audit_check_files refuses the symlink");
        ok(strstr(err.msg, "is a symlink") != NULL, "naming it a symlink: %s", err.msg);

        ok(mkdir(dir, 0700) == 0, "make a directory audit.db");
        expect_open_fails("dir.db", EBADF, "directory");

        ok(mkfifo(side_wal, 0600) == 0, "make a FIFO audit.db-wal beside a missing log");
        is_int(audit_check_files(side, &err), -EBADF, "audit_check_files refuses a FIFO -wal");
        ok(strstr(err.msg, "side.db-wal") != NULL, "naming the -wal file: %s", err.msg);

        _cleanup_free_ char *ok_path = tmp_path("none.db");
        is_int(audit_check_files(ok_path, &err), 0, "a missing log is fine (it is made)");
}

/* A -wal left without its database belongs to a log that is gone: set aside, not replayed
 * into the new one. */
static void test_orphan_wal(void)
{
        _cleanup_free_ char *p = tmp_path("orphan.db"), *wal = tmp_path("orphan.db-wal");
        struct txbox_error err = { 0 };
        struct audit *a = open_db("orphan.db");
        sqlite3 *keep = NULL;

        /* Another connection keeps the WAL (SQLite removes it at the last close). */
        ok(a && sqlite3_open(p, &keep) == SQLITE_OK &&
                   sqlite3_exec(keep, "SELECT 1 FROM tx", NULL, NULL, NULL) == SQLITE_OK,
           "a log, with a second connection");
        is_int(insert(a, "0rphan01", TXBOX_COMMITTED, 1, NULL), 0, "a row in its WAL");
        audit_close(a);
        ok(access(wal, F_OK) == 0, "the -wal is there");
        ok(unlink(p) == 0, "delete the database, not its -wal");
        a = open_db("orphan.db");
        ok(a != NULL, "a new log opens: %s", err.msg);
        struct txbox_record *v = NULL;
        size_t n = 9;
        is_int(a ? audit_list(a, 0, &v, &n, &err) : -1, 0, "and reads");
        is_int(n, 0, "empty: the old -wal was not replayed into it");
        txbox_records_free(v, n);
        audit_close(a);
        sqlite3_close(keep);
        DIR *d = opendir(tmpdir);
        struct dirent *de;
        bool aside = false;
        while (d && (de = readdir(d)))
                aside |= !strncmp(de->d_name, "orphan.db-wal.orphan-", 21);
        if (d)
                closedir(d);
        ok(aside, "the old -wal was set aside (orphan.db-wal.orphan-*)");
}

struct check_calls {
        int n;
        int64_t floor;
};

static int check_hook(void *ctx, struct audit *a, struct txbox_error *err)
{
        struct check_calls *c = ctx;
        struct txbox_record r;
        size_t added = 0;
        static const char *const specs[] = { "+f4", NULL };
        c->n++;
        mkrec(&r, "feed0004", TXBOX_COMMITTED, 4, specs);
        int ret = audit_import(a, &r, 1, c->floor, "placeholder", &added, err);
        txbox_record_clear(&r);
        return ret;
}

/* audit_import puts back rows the log lacks, settles a kept row whose last write was lost,
 * and one placeholder stands for the commit numbers nothing was left of. */
static void test_import(void)
{
        struct txbox_error err = { 0 };
        struct audit *a = open_db("import.db");
        struct txbox_record recs[3], g = { 0 };
        static const char *const s1[] = { "+f1", NULL }, *const s3[] = { "~README", "-gone", NULL };
        size_t added = 0;

        is_int(insert(a, "feed0001", TXBOX_COMMITTED, 1, s1), 0, "commit 1 is in the log");
        is_int(insert(a, "feed0003", TXBOX_RUNNING, 0, NULL), 0, "commit 3's row says running (end lost)");
        mkrec(&recs[0], "feed0001", TXBOX_COMMITTED, 1, s1);
        mkrec(&recs[1], "feed0003", TXBOX_COMMITTED, 3, s3);
        mkrec(&recs[2], "feed0005", TXBOX_UNDONE, 5, s1);
        is_int(audit_import(a, recs, 3, 6, "lost ones", &added, &err), 0, "import up to commit 6: %s",
               err.msg);
        is_int(added, 3, "one row settled, one inserted, one placeholder");
        is_int(audit_get(a, "feed0003", &g, &err), 0, "the kept row");
        is_int(g.outcome, TXBOX_COMMITTED, "is committed now");
        is_int(g.commit_seq, 3, "with its number");
        is_int(g.npaths, 2, "and its paths");
        txbox_record_clear(&g);
        is_int(audit_get(a, "feed0005", &g, &err), 0, "the lost row is back");
        is_int(g.outcome, TXBOX_UNDONE, "as undone");
        txbox_record_clear(&g);
        is_int(audit_newest_committed(a, &g, &err), 0, "newest committed");
        ok(!strncmp(g.id, "feed0003", 8), "is commit 3 (5 is undone, the placeholder changed nothing): %s",
           g.id);
        txbox_record_clear(&g);
        int64_t next = 0;
        is_int(audit_next_commit_seq(a, &next, &err), 0, "next commit number");
        is_int(next, 7, "follows the placeholder's 6");
        struct txbox_record *v = NULL;
        size_t n = 0;
        is_int(audit_list(a, 1, &v, &n, &err), 0, "newest row");
        ok(n == 1 && !strncmp(v[0].id, "lost-6-", 7) && v[0].message &&
                   strstr(v[0].message, "lost ones (3 of commits #1 to #6)"),
           "is the placeholder for commits 2, 4 and 6: %s %s", n ? v[0].id : "",
           n && v[0].message ? v[0].message : "");
        txbox_records_free(v, n);
        is_int(audit_import(a, recs, 3, 6, "lost ones", &added, &err), 0, "a second import");
        is_int(added, 0, "adds nothing (the log is no longer behind)");
        for (int i = 0; i < 3; i++)
                txbox_record_clear(&recs[i]);
        audit_close(a);

        /* The hook runs once, at the connection, and its rows are there for the first call. */
        struct check_calls c = { 0, 4 };
        _cleanup_free_ char *p = tmp_path("hook.db");
        a = NULL;
        is_int(audit_open_deferred(p, &a, &err), 0, "a deferred log");
        audit_set_check(a, check_hook, &c);
        is_int(c.n, 0, "the hook waits for the connection");
        is_int(audit_get(a, "feed0004", &g, &err), 0, "the first call finds the hook's row");
        txbox_record_clear(&g);
        is_int(audit_get(a, "feed0004", &g, &err), 0, "a second call");
        is_int(c.n, 1, "the hook ran once");
        txbox_record_clear(&g);
        audit_close(a);
}

int main(void)
{
        if (!tap_mkdtemp(tmpdir, sizeof(tmpdir), "txbox-test-audit")) {
                perror("mkdtemp");
                return 1;
        }
        test_names();
        test_record_copy_clear();

        _cleanup_free_ char *main_db = tmp_path("audit.db");
        struct audit *a = open_db("audit.db");
        struct stat st;
        ok(a != NULL, "audit_open creates a new log");
        ok(stat(main_db, &st) == 0 && (st.st_mode & 0777) == 0600, "the log file is mode 0600");
        if (a) {
                test_roundtrip(a);
                test_update(a);
                test_prefix(a);
                audit_close(a);
        }

        a = open_db("audit.db");
        ok(a != NULL, "reopen the log");
        struct txbox_record g = { 0 };
        struct txbox_error err = { 0 };
        is_int(a ? audit_get(a, "a1b2c3d4", &g, &err) : -1, 0, "reopened log still holds the record");
        is_str(g.message, "killed by signal 9", "reopened record is whole");
        is_int(g.npaths, 3, "reopened record has its paths");
        txbox_record_clear(&g);
        audit_close(a);

        test_list();
        test_overlaps();
        test_overlap_plans();
        test_json();
        test_bad_files();
        test_busy();
        test_odd_files();
        test_orphan_wal();
        test_import();

        nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        ok(access(tmpdir, F_OK) != 0, "temp dir removed");
        return tap_done();
}
