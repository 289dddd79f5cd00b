/* The case tables of test_policy_classes, test_policy_gaps and test_policy_harms, checked
 * against a policy: each refused command must be refused (denied or asked) by the rule it
 * names, each allowed one allowed.  One TAP line per case. */
#ifndef TXBOX_TEST_POLICY_CASES_H
#define TXBOX_TEST_POLICY_CASES_H

#include <stdio.h>
#include <string.h>

#include "policy/policy.h"
#include "tap.h"

struct refused_case {
        const char *cmd, *rule;
};

/* s on one TAP line: newlines and tabs as spaces, '#' (TAP's directive) as '%'. */
static void policy_case_line(char *out, size_t n, const char *s)
{
        snprintf(out, n, "%s", s);
        for (char *c = out; *c; c++)
                if (*c == '\n' || *c == '\t' || *c == '#')
                        *c = *c == '#' ? '%' : ' ';
}

static void policy_cases_check(const struct policy *p, const struct policy_ctx *ctx,
                               const struct refused_case *refused, size_t nrefused,
                               const char *const *allowed, size_t nallowed)
{
        char line[72];

        for (size_t k = 0; k < nrefused; k++) {
                struct policy_result r;
                int ret = policy_check_shell(p, refused[k].cmd, ctx, &r);
                policy_case_line(line, sizeof(line), refused[k].cmd);
                ok(ret == 0 && r.decision != POLICY_ALLOW && !strcmp(r.rule, refused[k].rule),
                   "refused %-48.48s -> %s (got %s %s)", line, refused[k].rule,
                   policy_decision_name(r.decision), r.rule);
        }
        for (size_t k = 0; k < nallowed; k++) {
                struct policy_result r;
                int ret = policy_check_shell(p, allowed[k], ctx, &r);
                policy_case_line(line, sizeof(line), allowed[k]);
                ok(ret == 0 && r.decision == POLICY_ALLOW, "allowed %-48.48s (got %s %s)", line,
                   policy_decision_name(r.decision), r.rule);
        }
}

#endif
