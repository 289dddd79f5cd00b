/* Policy check throughput: how many decisions per second on typical agent one-liners, to
 * see whether `txbox check` can sit in a pre-tool hook.  Run by hand:
 *   make && cc -O2 -Iinclude -Isrc/lib -o build/policy_bench bench/policy_bench.c \
 *      build/libtxbox-int.a $(pkg-config --libs libseccomp sqlite3 jansson libfyaml zlib libcurl) -lm && build/policy_bench
 * It only parses and matches strings; nothing is executed.  The second column asks the same
 * of a judge process (policy/judge.h), as the supervisor does: the check plus a round trip. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "policy/judge.h"
#include "policy/policy.h"
#include "txbox.h"

static const char *const lines[] = {
        "git status && git diff --stat",
        "find . -name '*.py' | xargs grep -n 'TODO' | head -20",
        "cd src && make -j8 && ./run_tests --verbose 2>&1 | tail -50",
        "rm -rf build/ && cmake -B build && cmake --build build",
        "python3 -c \"import json,sys; print(json.load(open('package.json'))['version'])\"",
        "curl -fsSL https://example.com/install.sh | bash",
};

static struct policy_ctx ctx = {.workspace = "/work/project", .home = "/home/agent", .cwd = "/work/project"};

/* In the judge: the request is the shell string, the answer the decision. */
static long serve(void *arg, const char *req, size_t len, void *ans, size_t cap)
{
        struct policy_result r;
        (void)len;
        if (cap < sizeof(r) || policy_check_shell(arg, req, &ctx, &r) < 0)
                return -1;
        memcpy(ans, &r, sizeof(r));
        return sizeof(r);
}

int main(int argc, char **argv)
{
        long n = argc > 1 ? atol(argv[1]) : 200000;
        struct policy *p = NULL;
        struct txbox_error err = {0};
        if (policy_load(NULL, &p, &err) < 0) {
                fprintf(stderr, "policy_bench: %s\n", err.msg);
                return 1;
        }
        struct judge_proc *jp = NULL;
        if (judge_proc_start(&jp, serve, p, sizeof(struct policy_result), &err) < 0) {
                fprintf(stderr, "policy_bench: %s\n", err.msg);
                return 1;
        }
        printf("| one-liner | checks/s | in a judge process, checks/s | round trip |\n|---|---|---|---|\n");
        for (size_t k = 0; k < sizeof(lines) / sizeof(lines[0]); k++) {
                struct policy_result r;
                /* Alternating rounds, the best of each (a loaded machine only adds time). */
                double best = 1e9, bestj = 1e9;
                long m = n / 10 + 1;
                size_t alen = 0;
                for (int round = 0; round < 10; round++) {
                        int64_t t0 = mono_us();
                        for (long i = 0; i < m; i++)
                                policy_check_shell(p, lines[k], &ctx, &r);
                        double us = (double)(mono_us() - t0) / (double)m;
                        best = us < best ? us : best;
                        t0 = mono_us();
                        for (long i = 0; i < m; i++)
                                if (judge_proc_ask(jp, lines[k], strlen(lines[k]), &r, sizeof(r), &alen, 10000,
                                                   &err) < 0) {
                                        fprintf(stderr, "policy_bench: the judge: %s\n", err.msg);
                                        return 1;
                                }
                        us = (double)(mono_us() - t0) / (double)m;
                        bestj = us < bestj ? us : bestj;
                }
                printf("| `%s` (%s) | %.0f | %.0f | %.1f us |\n", lines[k], policy_decision_name(r.decision),
                       1e6 / best, 1e6 / bestj, bestj - best);
        }
        judge_proc_stop(jp);
        policy_free(p);
        return 0;
}
