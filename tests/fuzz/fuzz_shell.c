/* Fuzz target: a shell string through the policy (parser, unwrapping of wrappers and
 * interpreters, matching), as txbox check -c, the hooks and MCP's check_command see it.
 * The policy has user rules (globs, flags, paths, writes) before the built-in ones, so
 * that both kinds of matching run. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "policy/policy.h"

static struct policy *pol;

static const char policy_text[] =
        "rules:\n"
        "  - id: no-docker-push\n    reason: r\n    program: [docker, 'pod*']\n    subcommand: push\n"
        "  - id: no-long-flag\n    decision: ask\n    reason: r\n    program: 'tool|*-tool'\n"
        "    any_flags: [force, f, very-long-option-name-for-a-flag]\n"
        "  - id: etc-reads\n    decision: ask\n    reason: r\n    program: cat\n    paths: ['/etc/*', '~/.config/*', 'secrets/**']\n"
        "  - id: writes\n    reason: r\n    program: '*'\n    writes: [system, '*.lock']\n"
        "  - id: last\n    reason: r\n    program: [cp, mv]\n    last_arg: '/opt/*'\n    path_target: last\n"
        "  - id: args\n    reason: r\n    args: ['*--upload-pack*']\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc, (void)argv;
        if (policy_load_text("fuzz-policy", policy_text, strlen(policy_text), &pol, NULL) < 0)
                abort();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const struct policy_ctx ctx = {.workspace = FUZZ_WORKSPACE, .home = FUZZ_HOME,
                                              .cwd = FUZZ_WORKSPACE "/src"};
        char *s = malloc(size + 1);
        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = 0; /* an embedded NUL ends the string, as it would in argv or JSON */
        struct policy_result r;
        if (policy_check_shell(pol, s, &ctx, &r) < 0)
                abort();
        /* What every caller relies on: a decision it knows, and a rule for a refusal. */
        if (r.decision != POLICY_ALLOW && r.decision != POLICY_DENY && r.decision != POLICY_ASK)
                abort();
        if (r.decision != POLICY_ALLOW && !r.rule[0])
                abort();
        free(s);
        return 0;
}
