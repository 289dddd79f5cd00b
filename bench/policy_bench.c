/* Policy check throughput: how many decisions per second on typical agent one-liners, to
 * see whether `txbox check` can sit in a pre-tool hook.  Run by hand:
 *   make && cc -O2 -Iinclude -Isrc/lib -o build/policy_bench bench/policy_bench.c \
 *      build/libtxbox-int.a $(pkg-config --libs libseccomp sqlite3 jansson libfyaml zlib libcurl) && build/policy_bench
 * It only parses and matches strings; nothing is executed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "policy/policy.h"

static const char *const lines[] = {
        "git status && git diff --stat",
        "find . -name '*.py' | xargs grep -n 'TODO' | head -20",
        "cd src && make -j8 && ./run_tests --verbose 2>&1 | tail -50",
        "rm -rf build/ && cmake -B build && cmake --build build",
        "python3 -c \"import json,sys; print(json.load(open('package.json'))['version'])\"",
        "curl -fsSL https://example.com/install.sh | bash",
};

int main(int argc, char **argv)
{
        long n = argc > 1 ? atol(argv[1]) : 200000;
        struct policy *p = NULL;
        struct txbox_error err = {0};
        if (policy_load(NULL, &p, &err) < 0) {
                fprintf(stderr, "policy_bench: %s\n", err.msg);
                return 1;
        }
        struct policy_ctx ctx = {.workspace = "/work/project", .home = "/home/agent", .cwd = "/work/project"};
        printf("| one-liner | checks/s |\n|---|---|\n");
        for (size_t k = 0; k < sizeof(lines) / sizeof(lines[0]); k++) {
                struct policy_result r;
                int64_t t0 = mono_us();
                for (long i = 0; i < n; i++)
                        policy_check_shell(p, lines[k], &ctx, &r);
                double s = (double)(mono_us() - t0) / 1e6;
                printf("| `%s` (%s) | %.0f |\n", lines[k], policy_decision_name(r.decision), (double)n / s);
        }
        policy_free(p);
        return 0;
}
