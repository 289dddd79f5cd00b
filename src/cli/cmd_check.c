/* txbox check [--json] (-c STRING | -- PROGRAM [ARG...]): the policy decision only.  It
 * never runs anything: the string or argv is parsed and matched, nothing more.
 *
 * Its exit status is what scripts and hooks act on, so it never says 0 by accident: the
 * decision is made in a child process (judge_fork), and a child that crashes, aborts, hangs
 * or ends without a decision is reported as a refusal (1). */
#define _GNU_SOURCE
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
                   "       txbox check [--json] -- PROGRAM [ARG...]\n\n"
                   "Say whether the policy allows a shell string or a program, without running it.\n"
                   "The string is parsed like sh -c would (substitutions, wrappers such as sudo, env,\n"
                   "xargs and find -exec, sh -c, eval and interpreter one-liners are looked into).\n\n"
                   "  -c STRING   a shell string\n"
                   "  --json      print {\"decision\", \"rule\", \"reason\", \"command\", \"offset\"}\n"
                   "  -h, --help  this help\n\n"
                   "Exit status: 0 allow; 1 deny or ask (no approval channel: ask counts as deny);\n"
                   "2 bad usage or an unreadable policy.  The policy is --policy FILE, else\n"
                   ".txbox/policy in the workspace, else the built-in default (docs/POLICY.md).\n");
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
        const char *script;
        char **argv;
};

/* Returns 0, or EXIT_USAGE after printing why; -1 when --help was printed. */
static int check_parse(int argc, char **argv, struct check_args *a)
{
        static const struct option opts[] = {
                {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
        int c;
        while ((c = getopt_long(argc, argv, "+c:h", opts, NULL)) != -1) {
                switch (c) {
                case 'j': a->json = true; break;
                case 'c': a->script = optarg; break;
                case 'h': check_usage(stdout); return -1;
                default: check_usage(stderr); return EXIT_USAGE;
                }
        }
        if (optind < argc)
                a->argv = argv + optind;
        if (!!a->script == !!a->argv) {
                cli_error("check needs exactly one of -c STRING or -- PROGRAM [ARG...]");
                return EXIT_USAGE;
        }
        return 0;
}

struct check_job {
        const struct check_args *a;
        const struct global_opts *g;
};

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
                                   (status == 0 && strstr(out, "allow")));
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
        policy_result_failed(&res, a.script ? a.script : a.argv[0], why);
        cli_error("%s; refused", why);
        if (a.json)
                print_json(&res);
        else
                print_human(&res);
        return EXIT_REFUSED;
}
