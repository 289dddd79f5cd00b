/* Fuzz target: an argv through the policy, as the exec check sees each execve in the
 * sandbox.  The input is the arguments separated by NUL bytes. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "policy/policy.h"

#define MAX_ARGS 4096

static struct policy *pol;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc, (void)argv;
        if (policy_load(NULL, &pol, NULL) < 0)
                abort();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const struct policy_ctx ctx = {.workspace = FUZZ_WORKSPACE, .home = FUZZ_HOME,
                                              .cwd = FUZZ_WORKSPACE};
        char *buf = malloc(size + 1);
        char **argv = calloc(MAX_ARGS + 1, sizeof(char *));
        size_t n = 0;
        if (!buf || !argv)
                abort();
        memcpy(buf, data, size);
        buf[size] = 0;
        for (size_t i = 0; i <= size && n < MAX_ARGS;) {
                argv[n++] = buf + i;
                i += strlen(buf + i) + 1;
        }
        /* As before the run, as at an exec, and as a tool's own step at an exec (the exec
         * check asks the last only after a rule of scope workspace refused). */
        static const struct policy_ctx exec_ctx = {.workspace = FUZZ_WORKSPACE, .home = FUZZ_HOME,
                                                   .cwd = FUZZ_WORKSPACE, .at_exec = true};
        static const struct policy_ctx tool_ctx = {.workspace = FUZZ_WORKSPACE, .home = FUZZ_HOME,
                                                   .cwd = FUZZ_WORKSPACE, .at_exec = true,
                                                   .tool_internal = true};
        const struct policy_ctx *ctxs[] = {&ctx, &exec_ctx, &tool_ctx};
        for (size_t k = 0; k < sizeof(ctxs) / sizeof(ctxs[0]); k++) {
                struct policy_result r;
                int ret = policy_check_argv(pol, argv, ctxs[k], &r);
                if (ret < 0 || (r.decision != POLICY_ALLOW && !r.rule[0]))
                        abort();
                /* a tool's own step is spared only the rules of scope workspace */
                if (k == 2 && r.workspace_scope)
                        abort();
        }
        free(argv);
        free(buf);
        return 0;
}
