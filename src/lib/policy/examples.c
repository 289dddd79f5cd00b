/* A policy's rules checked against their own examples (match: commands a rule must decide,
 * not_match: commands it must not), in the manner of Codex's execpolicy.  Each example goes
 * through the whole engine, as an agent's command would: parsed, unwrapped and matched
 * against every rule of the policy in order, so that an example that another rule decides
 * first is a failure too.  make check runs the built-in rules' examples
 * (tests/unit/test_policy_rules.c); txbox check --test runs a policy file's. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "pol.h"

/* Examples mean the same wherever they are checked: this workspace and home. */
static const struct policy_ctx example_ctx = {
        .workspace = POLICY_EXAMPLE_WORKSPACE, .home = POLICY_EXAMPLE_HOME, .cwd = POLICY_EXAMPLE_WORKSPACE};

static void report_one(const struct rule *r, const char *file, const char *example, bool must,
                       const struct policy_result *res, const struct rule *by,
                       policy_example_fn *report, void *arg)
{
        struct policy_example_failure f = {.rule = r->id, .file = file, .line = r->line, .example = example,
                                           .must_match = must, .decision = res->decision};
        if (by)
                snprintf(f.decided_by, sizeof(f.decided_by), "%s", by->id);
        else if (res->decision != POLICY_ALLOW)
                snprintf(f.decided_by, sizeof(f.decided_by), "%s", res->rule);
        report(arg, &f);
}

/* The examples of one rule (r, within the policy top): failures reported; counts added. */
static void rule_examples(const struct policy *top, const struct rule *r, const char *file,
                          policy_example_fn *report, void *arg, size_t *n, size_t *failed)
{
        for (int must = 1; must >= 0; must--) {
                const char *const *ex = must ? r->match : r->not_match;
                for (; ex && *ex; ex++) {
                        struct policy_result res;
                        const struct rule *by = NULL;
                        (*n)++;
                        int rr = policy_check_shell_by(top, *ex, &example_ctx, &res, &by);
                        bool decided = rr == 0 && by == r;
                        if (rr == 0 && decided == (bool)must)
                                continue;
                        (*failed)++;
                        if (rr < 0)
                                policy_result_failed(&res, *ex, strerror(-rr));
                        if (report)
                                report_one(r, file, *ex, must, &res, rr == 0 ? by : NULL, report, arg);
                }
        }
}

size_t policy_test_examples(const struct policy *p, enum policy_examples which, policy_example_fn *report,
                            void *arg, size_t *n_examples)
{
        size_t n = 0, failed = 0;
        /* An untrusted workspace policy's own rules are judged beside the built-in ones
         * (p->tighten): their examples too, through the decision that combines both. */
        for (const struct policy *q = p; q; q = q->tighten)
                for (size_t k = 0; k < q->nrules; k++) {
                        const struct rule *r = &q->rules[k];
                        if (r->builtin != (which == POLICY_EXAMPLES_BUILTIN))
                                continue;
                        rule_examples(p, r, r->builtin ? "built-in" : q->file, report, arg, &n, &failed);
                }
        if (n_examples)
                *n_examples = n;
        return failed;
}
