/* Fuzz target: an argv through the policy, as the exec check sees each execve in the
 * sandbox.  The input is the arguments separated by NUL bytes. */
#define _GNU_SOURCE
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
        struct policy_result r;
        int ret = policy_check_argv(pol, argv, &ctx, &r);
        if (ret < 0 || (r.decision != POLICY_ALLOW && !r.rule[0]))
                abort();
        free(argv);
        free(buf);
        return 0;
}
