/* Fuzz target: a policy file through the loader (YAML via libfyaml, then the rule fields),
 * and, when it loads, a few commands through its rules, so that whatever the loader lets
 * through is also matched. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "policy/policy.h"
#include "txbox.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc, (void)argv;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const struct policy_ctx ctx = {.workspace = FUZZ_WORKSPACE, .home = FUZZ_HOME,
                                              .cwd = FUZZ_WORKSPACE};
        static const char *const cmds[] = {"rm -rf /", "git push --force origin main", "cat /etc/shadow > out",
                                           "docker push img", "ls -la ~/.ssh", "echo hi"};
        struct policy *p = NULL;
        struct txbox_error err = {0};
        if (policy_load_text("fuzz.yaml", (const char *)data, size, &p, &err) < 0) {
                /* A refusal names the file, as the user must fix it. */
                if (!strstr(err.msg, "fuzz.yaml"))
                        abort();
                return 0;
        }
        for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
                struct policy_result r;
                if (policy_check_shell(p, cmds[k], &ctx, &r) < 0 || (r.decision != POLICY_ALLOW && !r.rule[0]))
                        abort();
        }
        char *argv[] = {"find", ".", "-name", "*.o", "-delete", NULL};
        struct policy_result r;
        if (policy_check_argv(p, argv, &ctx, &r) < 0)
                abort();
        policy_free(p);
        return 0;
}

/* libfyaml 0.7 leaks the buffer it grows to format a quoted scalar full of escapes
 * (fy_atom_iter_grow_chunk, reached from fy_node_get_scalar0): the library's, not
 * txbox's, and at most once per policy load in a real run.  Kept quiet here so that the
 * target finds leaks of ours.  (Read by LeakSanitizer, gcc's and clang's: exported, as
 * gcc's runtime is a shared library looking for it in the program.) */
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void);
__attribute__((visibility("default"))) const char *__lsan_default_suppressions(void)
{
        return "leak:fy_atom_iter_grow_chunk\n";
}
