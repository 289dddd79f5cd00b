/* The built-in rules (src/lib/policy/default.yml): the compiled form txbox runs with is what
 * the YAML says, field by field; every rule has a description and examples, and every
 * example holds through the whole engine (a match: decided by that rule, a not_match: not);
 * docs/POLICY.md's rule table is the one generated from them.  Also the loader's keys the
 * built-in rules brought (reads, truncates, all, description, match, not_match) and the
 * example checker on a user's file, where it must find what is wrong.
 *
 *   test_policy_rules            TAP (run from the source tree's root, as tests/run.sh does)
 *   test_policy_rules --table    print the generated table (scripts/policy-table.sh) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/macros.h"
#include "base/mem.h"
#include "policy/pol.h"
#include "tap.h"
#include "txbox.h"

#define YAML_PATH "src/lib/policy/default.yml"
#define DOC_PATH "docs/POLICY.md"
#define TABLE_BEGIN "<!-- rules: generated from src/lib/policy/default.yml by scripts/policy-table.sh -->"
#define TABLE_END "<!-- end of the generated rules -->"

/* ---- the compiled form against the YAML ---- */

static bool same_str(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

static bool same_list(const char *const *a, const char *const *b)
{
        if (!a || !b)
                return a == b;
        for (; *a && *b; a++, b++)
                if (strcmp(*a, *b))
                        return false;
        return !*a && !*b;
}

/* The first field in which two rules differ, or NULL. */
static const char *rule_diff(const struct rule *a, const struct rule *b)
{
#define STR(f) if (!same_str(a->f, b->f)) return #f
#define LIST(f) if (!same_list(a->f, b->f)) return #f
#define NUM(f) if (a->f != b->f) return #f
        STR(id); STR(reason); STR(description);
        LIST(programs); LIST(not_programs); LIST(sub); LIST(flags); LIST(any_flags); LIST(not_flags);
        LIST(args); LIST(last); LIST(path_globs); LIST(write_globs); LIST(read_globs); LIST(clobber_globs);
        LIST(match); LIST(not_match);
        NUM(decision); NUM(paths); NUM(writes); NUM(reads); NUM(clobbers); NUM(target);
        NUM(workspace_scope); NUM(builtin); NUM(line);
#undef STR
#undef LIST
#undef NUM
        return NULL;
}

static void compiled_is_the_yaml(void)
{
        struct txbox_error err = {0};
        struct policy *y = NULL;
        char *text = NULL;
        size_t len = 0;
        const struct policy *b = policy_builtin();

        if (read_file_at(AT_FDCWD, YAML_PATH, POL_MAX_FILE, &text, &len) < 0) {
                ok(0, "%s is readable (run from the source tree's root)", YAML_PATH);
                return;
        }
        ok(policy_parse_builtin(YAML_PATH, text, len, &y, &err) == 0, "%s loads as the built-in policy: %s",
           YAML_PATH, err.msg);
        free(text);
        if (!y)
                return;
        is_int(b->nrules, y->nrules, "the compiled built-in policy has the YAML's %zu rules", y->nrules);
        size_t differ = 0;
        for (size_t k = 0; k < b->nrules && k < y->nrules; k++) {
                const char *f = rule_diff(&b->rules[k], &y->rules[k]);
                if (f && differ++ < 5)
                        printf("# rule %zu (%s): %s differs\n", k, y->rules[k].id, f);
                if (!f && memcmp(b->first[k], y->first[k], sizeof(b->first[k])) && differ++ < 5)
                        printf("# rule %zu (%s): its index of first bytes differs\n", k, y->rules[k].id);
        }
        is_int(differ, 0, "every field of every compiled rule is the YAML's (make rebuilt it)");
        const struct effects_cfg *e = &b->eff, *f = &y->eff;
        ok(e->mass_delete_count == f->mass_delete_count && e->mass_delete_min == f->mass_delete_min &&
                   e->mass_delete_share == f->mass_delete_share && e->max_file_size == f->max_file_size &&
                   e->lost_work_min == f->lost_work_min && same_list(e->protect, f->protect),
           "and its effect limits");
        policy_free(y);
}

/* ---- what every built-in rule carries ---- */

static void report(void *arg, const struct policy_example_failure *f)
{
        (void)arg;
        printf("# line %d, rule %s: '%s' %s (decision %s%s%s)\n", f->line, f->rule, f->example,
               f->must_match ? "not decided by it" : "decided by it", policy_decision_name(f->decision),
               f->decided_by[0] ? ", by " : "", f->decided_by);
}

static void builtin_rules_carry_examples(void)
{
        const struct policy *b = policy_builtin();
        size_t bare = 0, n = 0;

        for (size_t k = 0; k < b->nrules; k++) {
                const struct rule *r = &b->rules[k];
                if (!r->description || !r->reason || !r->match || !r->match[0] || !r->not_match ||
                    !r->not_match[0]) {
                        if (bare++ < 5)
                                printf("# rule %s (line %d) lacks a description, a reason, or examples both ways\n",
                                       r->id, r->line);
                }
        }
        is_int(bare, 0, "each of the %zu built-in rules has a description, a reason, match: and not_match:",
               b->nrules);
        struct policy *p;
        struct txbox_error err;
        ok(policy_load(NULL, &p, &err) == 0, "the built-in policy loads");
        size_t failed = policy_test_examples(p, POLICY_EXAMPLES_BUILTIN, report, NULL, &n);
        is_int(failed, 0, "every one of the %zu examples holds through the whole engine", n);
        ok(n >= 2 * b->nrules, "at least two examples a rule (%zu for %zu rules)", n, b->nrules);
        /* Its own examples are not those of the policy file's rules, which it has none of. */
        size_t own = 99;
        is_int(policy_test_examples(p, POLICY_EXAMPLES_OWN, NULL, NULL, &own), 0, "no rule of its own: no failure");
        is_int(own, 0, "and no example run");
        policy_free(p);
}

/* ---- the table in docs/POLICY.md ---- */

/* s as a table cell: | escaped, in backticks when code. */
static void cell(FILE *f, const char *s, bool code)
{
        const char *tick = code ? (strchr(s, '`') ? "`` " : "`") : "";
        const char *end = code ? (strchr(s, '`') ? " ``" : "`") : "";
        fputs(tick, f);
        for (; *s; s++) {
                if (*s == '|')
                        fputc('\\', f);
                fputc(*s, f);
        }
        fputs(end, f);
}

/* One row per rule id, in the order ids first appear: its decision, what its entries catch
 * (their descriptions) with examples (the first match: of each entry, at most three), and its
 * reason (each distinct one). */
static char *table(const struct policy *b)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        fputs("| rule | decision | catches (e.g.) | reason the agent is given |\n|---|---|---|---|\n", f);
        for (size_t k = 0; k < b->nrules; k++) {
                const struct rule *r = &b->rules[k];
                size_t first = 0;
                while (strcmp(b->rules[first].id, r->id))
                        first++;
                if (first != k)
                        continue; /* its row was written */
                fprintf(f, "| `%s` | %s | ", r->id, policy_decision_name(r->decision));
                int shown = 0;
                for (size_t j = k, n = 0; j < b->nrules; j++) {
                        const struct rule *e = &b->rules[j];
                        if (strcmp(e->id, r->id))
                                continue;
                        fputs(n++ ? "; " : "", f);
                        cell(f, e->description ? e->description : "", false);
                }
                fputs(" (e.g. ", f);
                for (size_t j = k; j < b->nrules && shown < 3; j++)
                        if (!strcmp(b->rules[j].id, r->id) && b->rules[j].match && b->rules[j].match[0]) {
                                fputs(shown++ ? ", " : "", f);
                                cell(f, b->rules[j].match[0], true);
                        }
                fputs(") | ", f);
                for (size_t j = k, n = 0; j < b->nrules; j++) {
                        const struct rule *e = &b->rules[j];
                        bool seen = false;
                        for (size_t i = k; i < j && !seen; i++)
                                seen = !strcmp(b->rules[i].id, r->id) && same_str(b->rules[i].reason, e->reason);
                        if (strcmp(e->id, r->id) || seen || !e->reason)
                                continue;
                        fputs(n++ ? "; or: " : "", f);
                        cell(f, e->reason, false);
                }
                fputs(" |\n", f);
        }
        fclose(f);
        return buf;
}

static void doc_table_is_generated(void)
{
        char *doc = NULL, *want = table(policy_builtin());
        size_t len = 0;

        if (read_file_at(AT_FDCWD, DOC_PATH, 4 << 20, &doc, &len) < 0) {
                ok(0, "%s is readable (run from the source tree's root)", DOC_PATH);
                free(want);
                return;
        }
        char *b = strstr(doc, TABLE_BEGIN), *e = b ? strstr(b, TABLE_END) : NULL;
        ok(b && e, "%s marks the generated table", DOC_PATH);
        if (b && e) {
                b += strlen(TABLE_BEGIN);
                b += *b == '\n';
                *e = 0;
                bool same = !strcmp(b, want);
                ok(same, "its rule table is the one generated from %s (run scripts/policy-table.sh)", YAML_PATH);
                for (size_t i = 0; !same && b[i] && want[i]; i++)
                        if (b[i] != want[i]) {
                                printf("# first difference at byte %zu: '%.60s' vs generated '%.60s'\n", i, b + i,
                                       want + i);
                                break;
                        }
        }
        free(doc);
        free(want);
}

/* ---- the loader's keys, and the checker on a user's file ---- */

static struct policy *load(const char *text, struct txbox_error *err)
{
        struct policy *p = NULL;
        memset(err, 0, sizeof(*err));
        if (policy_load_text("test.yml", text, strlen(text), &p, err) < 0)
                return NULL;
        return p;
}

static void loader_keys(void)
{
        struct txbox_error err;
        struct policy *p = load("rules:\n"
                                "  - id: no-secret-stdin\n"
                                "    reason: r\n"
                                "    reads: [\"~/private/*\", secret]\n"
                                "    description: reading ~/private\n"
                                "    match: ['wc -l < ~/private/notes']\n"
                                "    not_match: ['wc -l < notes']\n"
                                "  - id: no-truncate-logs\n"
                                "    reason: r\n"
                                "    truncates: [\"logs/*\", all]\n"
                                "    match: [': > logs/app.log', 'echo x > logs/y']\n"
                                "    not_match: ['echo x >> logs/app.log', 'echo x > out.log']\n",
                                &err);
        ok(p != NULL, "reads:, truncates: (classes and globs), description:, match:, not_match: load: %s",
           err.msg);
        if (!p)
                return;
        const struct rule *r = &p->rules[0];
        ok(r->reads == PC_SECRET && r->read_globs && !strcmp(r->read_globs[0], "~/private/*") &&
                   !strcmp(r->description, "reading ~/private") && r->line == 2 && !r->builtin,
           "the fields as written, the rule's line, not built in");
        ok(p->rules[1].clobbers == PC_ALL && !strcmp(p->rules[1].clobber_globs[0], "logs/*"),
           "truncates: names the class all and a glob");
        size_t n = 0;
        is_int(policy_test_examples(p, POLICY_EXAMPLES_OWN, report, NULL, &n), 0,
               "their examples hold: a read glob, a truncating redirection (not >>)");
        is_int(n, 6, "six examples ran");
        ok(p->nrules > 2 && p->rules[2].builtin, "the built-in rules follow the file's own");
        policy_free(p);

        static const struct {
                const char *text, *want;
        } bad[] = {
                {"rules:\n  - id: x\n    reason: r\n    program: a\n    match: [[nested]]\n", "a string in the list"},
                {"rules:\n  - id: x\n    reason: r\n    program: a\n    match: ['']\n", "must not be empty"},
                {"rules:\n  - id: x\n    reason: r\n    program: a\n    description: [a]\n", "description must be"},
                {"rules:\n  - id: x\n    reason: r\n    match: [ls]\n", "rule matches everything"},
                {"rules:\n  - id: x\n    reason: r\n    program: a\n    reads: {a: b}\n", "expected a string"},
        };
        for (size_t k = 0; k < ARRAY_SIZE(bad); k++) {
                p = load(bad[k].text, &err);
                ok(!p && strstr(err.msg, bad[k].want) && strstr(err.msg, "'test.yml' line "),
                   "refused with the file and line: %s", err.msg);
                policy_free(p);
        }
}

struct collected {
        size_t n;
        struct policy_example_failure f[8];
};

static void collect(void *arg, const struct policy_example_failure *f)
{
        struct collected *got = arg;
        if (got->n < 8)
                got->f[got->n++] = *f;
}

static void checker_finds_failures(void)
{
        struct txbox_error err;
        struct policy *p = load("rules:\n"
                                "  - id: no-docker-push\n"
                                "    reason: publishes\n"
                                "    program: docker\n"
                                "    subcommand: push\n"
                                "    match: ['docker push img', 'docker pull img', 'rm -rf /']\n"
                                "    not_match: ['docker images', 'sudo docker push x']\n"
                                "  - id: allow-kubectl-delete\n"
                                "    decision: allow\n"
                                "    program: kubectl\n"
                                "    subcommand: delete\n"
                                "    match: ['kubectl delete pod web', 'kubectl get pods']\n",
                                &err);
        ok(p != NULL, "a policy file with examples loads: %s", err.msg);
        if (!p)
                return;
        struct collected got = {0};
        size_t n = 0;
        size_t failed = policy_test_examples(p, POLICY_EXAMPLES_OWN, NULL, NULL, &n);
        is_int(failed, 4, "four of its examples fail");
        is_int(n, 7, "of seven");
        /* the same again, collecting what each failure says */
        policy_test_examples(p, POLICY_EXAMPLES_OWN, collect, &got, NULL);
        ok(got.n == 4, "each failure is reported");
        ok(got.n > 0 && got.f[0].must_match && !strcmp(got.f[0].example, "docker pull img") &&
                   got.f[0].decision == POLICY_ALLOW && !got.f[0].decided_by[0] && got.f[0].line == 2 &&
                   !strcmp(got.f[0].file, "test.yml"),
           "a match: the policy allows (no rule decides): file, line, example");
        ok(got.n > 1 && !strcmp(got.f[1].example, "rm -rf /") && got.f[1].decision == POLICY_DENY &&
                   !strcmp(got.f[1].decided_by, "rm-root"),
           "a match: another rule decides (rm-root, a built-in one)");
        ok(got.n > 2 && !got.f[2].must_match && !strcmp(got.f[2].example, "sudo docker push x") &&
                   !strcmp(got.f[2].decided_by, "no-docker-push"),
           "a not_match: the rule decides (through sudo)");
        ok(got.n > 3 && !strcmp(got.f[3].rule, "allow-kubectl-delete") && !strcmp(got.f[3].example, "kubectl get pods"),
           "an allow rule's match: no allow rule matched it");
        policy_free(p);

        /* A file's allow rule lifts a built-in refusal for its example. */
        p = load("rules:\n  - id: allow-reset\n    decision: allow\n    program: git\n    subcommand: reset\n"
                 "    match: ['git reset --hard']\n",
                 &err);
        ok(p && policy_test_examples(p, POLICY_EXAMPLES_OWN, NULL, NULL, NULL) == 0,
           "a trusted file's allow rule decides its example");
        policy_free(p);
}

static void builtin_must_fail_closed(void)
{
        struct txbox_error err = {0};
        struct policy *p = NULL;
        static const char eff[] = "effects: {mass_delete_count: 1, mass_delete_min: 1, mass_delete_share: 0.5, "
                                  "max_file_size: 1, lost_work_min: 1}\n";
        char *t = xasprintf("%srules:\n  - id: parse-error\n    reason: r\n    program: '@parse-error'\n", eff);
        ok(policy_parse_builtin("b.yml", t, strlen(t), &p, &err) < 0 && strstr(err.msg, "limit-exceeded"),
           "a built-in policy without a deny rule limit-exceeded is refused: %s", err.msg);
        free(t);
        t = xasprintf("%srules:\n  - id: parse-error\n    reason: r\n    program: '@parse-error'\n"
                      "  - id: limit-exceeded\n    decision: ask\n    reason: r\n    program: '@limit-exceeded'\n",
                      eff);
        ok(policy_parse_builtin("b.yml", t, strlen(t), &p, &err) < 0 && strstr(err.msg, "limit-exceeded"),
           "and one where it asks instead of denying");
        free(t);
        t = xstrdup("rules:\n  - id: parse-error\n    reason: r\n    program: '@parse-error'\n"
                    "  - id: limit-exceeded\n    reason: r\n    program: '@limit-exceeded'\n");
        ok(policy_parse_builtin("b.yml", t, strlen(t), &p, &err) < 0 && strstr(err.msg, "effect limit"),
           "and one without its effect limits");
        free(t);
        t = xasprintf("defaults: true\n%s", eff);
        ok(policy_parse_builtin("b.yml", t, strlen(t), &p, &err) < 0 && strstr(err.msg, "is the defaults"),
           "defaults: has no meaning in it");
        free(t);
        /* A file without the built-in rules still refuses what it cannot read. */
        p = load("defaults: false\nrules:\n  - id: a\n    decision: allow\n    program: '*'\n", &err);
        struct policy_result res;
        const struct policy_ctx ctx = {.workspace = "/work/project", .home = "/home/agent", .cwd = "/work/project"};
        ok(p && policy_check_shell(p, "echo 'open", &ctx, &res) == 0 && res.decision == POLICY_DENY &&
                   !strcmp(res.rule, "parse-error"),
           "defaults: false still denies a parse error (the built-in rule)");
        policy_free(p);
}

int main(int argc, char **argv)
{
        if (argc == 2 && !strcmp(argv[1], "--table")) {
                char *t = table(policy_builtin());
                fputs(t, stdout);
                free(t);
                return 0;
        }
        compiled_is_the_yaml();
        builtin_rules_carry_examples();
        doc_table_is_generated();
        loader_keys();
        checker_finds_failures();
        builtin_must_fail_closed();
        return tap_done();
}
