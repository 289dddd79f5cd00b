/* txbox check [--json] (-c STRING | -- PROGRAM [ARG...]): the policy decision only.  It
 * never runs anything: the string or argv is parsed and matched, nothing more.
 * txbox check --test: the policy's rules against their own examples (match:, not_match:).
 *
 * Its exit status is what scripts and hooks act on, so it never says 0 by accident: the
 * decision is made in a child process (judge_fork), and a child that crashes, aborts, hangs
 * or ends without a decision is reported as a refusal (1). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "policy/judge.h"
#include "policy/policy.h"

static void check_usage(FILE *f)
{
        fprintf(f, "Usage: txbox check [--json] -c STRING\n"
                   "       txbox check [--json] -- PROGRAM [ARG...]\n"
                   "       txbox check [--json] --test\n\n"
                   "Say whether the policy allows a shell string or a program, without running it.\n"
                   "The string is parsed like sh -c would (substitutions, wrappers such as sudo, env,\n"
                   "xargs and find -exec, sh -c, eval and interpreter one-liners are looked into).\n\n"
                   "  -c STRING   a shell string\n"
                   "  --json      print {\"decision\", \"rule\", \"reason\", \"command\", \"offset\"}\n"
                   "  --test      check the policy file's rules against their examples (match: and\n"
                   "              not_match:; without a policy file, the built-in rules'), judged in\n"
                   "              the workspace " POLICY_EXAMPLE_WORKSPACE " with the home " POLICY_EXAMPLE_HOME "\n"
                   "  -h, --help  this help\n\n"
                   "Exit status: 0 allow (--test: every example holds); 1 deny or ask (no approval\n"
                   "channel: ask counts as deny; --test: an example failed); 2 bad usage or an\n"
                   "unreadable policy.  The policy is --policy FILE, else .txbox/policy in the\n"
                   "workspace, else the built-in default (docs/POLICY.md).\n");
}

static void print_json(const struct policy_result *r)
{
        bool allow = r->decision == POLICY_ALLOW;
        json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:o}", "decision", policy_decision_name(r->decision),
                              "rule", allow ? json_null() : json_string(r->rule),
                              "reason", allow ? json_null() : json_string(r->reason),
                              "command", allow ? json_null() : json_string(r->command),
                              "offset", allow || r->offset < 0 ? json_null() : json_integer(r->offset));
        char *s = o ? json_dumps(o, JSON_PRESERVE_ORDER) : NULL; /* one line, CONTRACT separators */
        printf("%s\n", s ? s : "{\"decision\": \"deny\", \"rule\": null, \"reason\": null}");
        free(s);
        json_decref(o);
}

static void print_human(const struct policy_result *r)
{
        if (r->decision == POLICY_ALLOW) {
                printf("allow\n");
                return;
        }
        printf("%s (", policy_decision_name(r->decision));
        cli_human(stdout, r->rule);
        fputs("): ", stdout);
        cli_human(stdout, r->reason);
        putchar('\n');
        if (r->command[0]) {
                fputs("  in: ", stdout);
                cli_human(stdout, r->command);
                if (r->offset >= 0)
                        printf(" (at offset %d)", r->offset);
                putchar('\n');
        }
}

struct check_args {
        bool json;
        bool test;
        const char *script;
        char **argv;
};

/* Returns 0, or EXIT_USAGE after printing why; -1 when --help was printed. */
static int check_parse(int argc, char **argv, struct check_args *a)
{
        static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                             {"test", no_argument, NULL, 't'},
                                             {"help", no_argument, NULL, 'h'},
                                             {0}};
        int c;
        while ((c = getopt_long(argc, argv, "+c:h", opts, NULL)) != -1) {
                switch (c) {
                case 'j': a->json = true; break;
                case 't': a->test = true; break;
                case 'c': a->script = optarg; break;
                case 'h': check_usage(stdout); return -1;
                default: check_usage(stderr); return EXIT_USAGE;
                }
        }
        if (optind < argc)
                a->argv = argv + optind;
        if (a->test && (a->script || a->argv)) {
                cli_error("check --test takes no command: it runs the policy's own examples");
                return EXIT_USAGE;
        }
        if (!a->test && !!a->script == !!a->argv) {
                cli_error("check needs exactly one of -c STRING or -- PROGRAM [ARG...]");
                return EXIT_USAGE;
        }
        return 0;
}

struct check_job {
        const struct check_args *a;
        const struct global_opts *g;
};

/* ---- --test ---- */

struct test_report {
        bool json;
        json_t *failures;
};

static void print_failure(void *arg, const struct policy_example_failure *f)
{
        struct test_report *t = arg;
        const char *got = f->decision == POLICY_ALLOW ? "allows it" : f->decision == POLICY_ASK ? "asks" : "denies it";
        if (t->json) {
                json_array_append_new(t->failures,
                                      json_pack("{s:s, s:s, s:i, s:s, s:s, s:s, s:o}", "rule", f->rule, "file",
                                                f->file ? f->file : "", "line", f->line, "example", f->example,
                                                "expected", f->must_match ? "match" : "not_match", "decision",
                                                policy_decision_name(f->decision), "decided_by",
                                                f->decided_by[0] ? json_string(f->decided_by) : json_null()));
                return;
        }
        printf("policy '");
        cli_human(stdout, f->file ? f->file : "");
        printf("' line %d: rule ", f->line);
        cli_human(stdout, f->rule);
        printf(": '");
        cli_human(stdout, f->example);
        if (f->must_match)
                printf("' should be decided by this rule, but the policy %s", got);
        else
                printf("' should not be decided by this rule, but it %s", got);
        if (f->must_match && f->decided_by[0]) {
                printf(" (rule ");
                cli_human(stdout, f->decided_by);
                putchar(')');
        }
        putchar('\n');
}

/* Exit status: 0 when every example holds, 1 when one does not. */
static int test_examples(const struct policy *p, bool json)
{
        struct test_report t = {.json = json, .failures = json ? json_array() : NULL};
        size_t n = 0;
        /* A policy file's own rules; the built-in ones when there is none. */
        enum policy_examples which = policy_file(p) ? POLICY_EXAMPLES_OWN : POLICY_EXAMPLES_BUILTIN;
        size_t failed = policy_test_examples(p, which, print_failure, &t, &n);
        if (json) {
                json_t *o = json_pack("{s:i, s:i, s:o}", "examples", (json_int_t)n, "failed", (json_int_t)failed,
                                      "failures", t.failures);
                char *s = o ? json_dumps(o, JSON_PRESERVE_ORDER) : NULL;
                printf("%s\n", s ? s : "{\"examples\": 0, \"failed\": 1, \"failures\": []}");
                free(s);
                json_decref(o);
        } else {
                printf("%zu example%s of the %s rules: %zu failed\n", n, n == 1 ? "" : "s",
                       which == POLICY_EXAMPLES_OWN ? "policy file's" : "built-in", failed);
        }
        return failed || (json && !t.failures) ? EXIT_REFUSED : 0;
}

static int check_child(void *arg)
{
        const struct check_job *j = arg;
        const struct check_args a = *j->a;
        const struct global_opts *g = j->g;
        int r;
        char ws[PATH_MAX], cwd[PATH_MAX];
        if (!realpath(cli_workspace(g), ws)) {
                cli_error("workspace '%s': %s", cli_workspace(g), strerror(errno));
                return EXIT_USAGE;
        }
        if (!getcwd(cwd, sizeof(cwd)))
                snprintf(cwd, sizeof(cwd), "%s", ws);
        struct txbox_error err = {0};
        struct policy *p = NULL;
        if (policy_load_for(ws, g->policy, &p, &err) < 0) {
                cli_error("%s", err.msg);
                return EXIT_USAGE;
        }
        if (a.test) {
                r = test_examples(p, a.json);
                policy_free(p);
                return r;
        }
        if (policy_note(p) && !a.json)
                cli_error("note: %s", policy_note(p));
        struct policy_ctx ctx = {.workspace = ws, .home = getenv("HOME"), .cwd = cwd};
        struct policy_result res;
        r = a.script ? policy_check_shell(p, a.script, &ctx, &res) : policy_check_argv(p, a.argv, &ctx, &res);
        policy_free(p);
        if (r < 0) { /* fail closed */
                char why[128];
                snprintf(why, sizeof(why), "the policy engine failed: %s", strerror(-r));
                policy_result_failed(&res, a.script ? a.script : a.argv[0], why);
                cli_error("%s; refused", why);
        }
        /* With an approval channel, "ask" is put to it and reported as what it decided. */
        if (res.decision == POLICY_ASK && g->approve)
                res.decision = policy_ask_approver(g->approve, &res, ws) == 1 ? POLICY_ALLOW : POLICY_DENY;
        if (a.json)
                print_json(&res);
        else
                print_human(&res);
        return res.decision == POLICY_ALLOW ? 0 : EXIT_REFUSED;
}

int cmd_check(int argc, char **argv, const struct global_opts *g)
{
        struct check_args a = {0};
        int r = check_parse(argc, argv, &a);
        if (r)
                return r < 0 ? 0 : r;
        /* An approval program may take its 60 s: the deadline leaves it that. */
        struct check_job job = {&a, g};
        struct txbox_error err = {0};
        char *out = NULL;
        int status = -1;
        r = judge_fork(check_child, &job,
                       judge_timeout_ms("TXBOX_JUDGE_TIMEOUT_MS", g->approve ? 75000 : JUDGE_FORK_TIMEOUT_MS),
                       1 << 20, &out, &status, &err);
        /* An answer is believed only from a child that ended by itself and printed it (a
         * sanitizer's report also exits 1, with nothing on stdout); usage errors and an
         * unreadable policy (2) are on stderr. */
        bool answered = r == 0 && (status == EXIT_USAGE || (status == EXIT_REFUSED && *out) ||
                                   (status == 0 && strstr(out, a.test ? "\n" : "allow")));
        if (answered) {
                fputs(out, stdout);
                free(out);
                return status;
        }
        free(out);
        char why[300];
        if (r < 0)
                snprintf(why, sizeof(why), "the policy engine failed: %.200s", err.msg);
        else
                snprintf(why, sizeof(why), "the policy engine failed: it exited with status %d", status);
        struct policy_result res;
        cli_error("%s; refused", why);
        if (a.test)
                return EXIT_REFUSED;
        policy_result_failed(&res, a.script ? a.script : a.argv[0], why);
        if (a.json)
                print_json(&res);
        else
                print_human(&res);
        return EXIT_REFUSED;
}
