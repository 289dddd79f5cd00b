/* The sandbox's guard: secret environment filtering and exec checks through seccomp user
 * notification.  Runs only harmless programs (true, sh).  tests/run.sh runs this as root and
 * as an unprivileged user (as-user). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/guard.h"
#include "sandbox/reslimits.h"
#include "sandbox/sandbox.h"
#include "tap.h"
#include "base/util.h"

struct seen {
        char paths[64][64];
        int n;
        bool long_argv;
};

static bool check(void *ctx, const char *path, char *const argv[])
{
        struct seen *s = ctx;
        size_t argc = 0;
        while (argv[argc])
                argc++;
        if (s->n < 64)
                snprintf(s->paths[s->n++], sizeof(s->paths[0]), "%s", path ? path : "(unnamed)");
        if (argc == 3001 && !strcmp(argv[3000], "3000"))
                s->long_argv = true; /* every argument arrived, the last one intact */
        for (size_t i = 1; i < argc; i++)
                if (!strcmp(argv[i], "DENY"))
                        return false;
        return true;
}

/* The check sees the program that will run, resolved: /bin/true may be /usr/bin/true. */
static bool saw(const struct seen *s, const char *path)
{
        char want[PATH_MAX];
        for (int i = 0; i < s->n; i++) {
                if (realpath(path, want) && !strcmp(s->paths[i], want))
                        return true;
        }
        return false;
}

static void test_env(void)
{
        char *envp[] = {"PATH=/bin", "GITHUB_TOKEN=x", "AWS_REGION=y", "MY_PASSWORD=z", "OPENAI_API_KEY=k",
                        "HOME=/h", "SSH_AUTH_SOCK=/s", "GIT_AUTHOR_NAME=a", "KEEPME_TOKEN=1", NULL};
        const char *keep[] = {"KEEPME_TOKEN", NULL};
        char dropped[1024];
        char **out = NULL;

        limits_filter_env(envp, keep, &out, dropped, sizeof(dropped));
        is_str(dropped, "GITHUB_TOKEN,AWS_REGION,MY_PASSWORD,OPENAI_API_KEY,SSH_AUTH_SOCK",
               "secret-looking names are dropped and listed");
        int n = 0;
        while (out[n])
                n++;
        is_int(n, 4, "PATH, HOME, GIT_AUTHOR_NAME and the kept variable pass");
        ok(!limits_env_secret("PATH") && !limits_env_secret("GIT_AUTHOR_EMAIL") &&
                   limits_env_secret("GITHUB_PAT"),
           "PATH and GIT_AUTHOR_* are not secrets; *_PAT is");
        ok(limits_env_secret("github_token") && limits_env_secret("MyApiKey") && limits_env_secret("aws_profile") &&
                   limits_env_secret("db_pass") && !limits_env_secret("compass") && !limits_env_secret("pathext"),
           "names match whatever their case, words as words (PASS in db_pass, not in compass)");
        char longname[300];
        memset(longname, 'A', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        ok(limits_env_secret(longname), "a name of 299 characters is taken for a secret");
        free(out);
        char small[16];
        limits_filter_env(envp, NULL, &out, small, sizeof(small));
        ok(strlen(small) < sizeof(small) && strstr(small, "..."), "a long list is truncated with '...' (%s)",
           small);
        free(out);
}

static int run(const char *dir, const char *script, struct seen *s, struct txbox_run_result *res)
{
        struct idmap m;
        struct txbox_error err = {0};
        char ws[512], upper[512], work[512], state[512];
        snprintf(ws, sizeof(ws), "%s/ws", dir);
        snprintf(state, sizeof(state), "%s/state", dir);
        snprintf(upper, sizeof(upper), "%s/state/u%d", dir, s->n);
        snprintf(work, sizeof(work), "%s/state/w%d", dir, s->n);
        mkdir(upper, 0755);
        mkdir(work, 0755);
        char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
        if (idmap_plan(&m, &err) < 0)
                return -1;
        struct sandbox_spec spec = {.workspace = ws, .upper = upper, .work = work, .state_dir = state,
                                    .argv = argv, .cwd = ws, .idmap = &m, .exec_check = check, .exec_ctx = s,
                                    .timeout_s = 20};
        int r = sandbox_run(&spec, res, &err);
        if (r < 0)
                printf("# sandbox_run: %s\n", err.msg);
        return r;
}

static void test_exec_checks(void)
{
        char dir[200];
        struct txbox_run_result res;
        struct seen s = {0};

        if (!tap_mkdtemp(dir, sizeof(dir), "txbox-guard") || chmod(dir, 0755) < 0) {
                ok(0, "mkdtemp");
                return;
        }
        char p[600];
        snprintf(p, sizeof(p), "%s/ws", dir);
        mkdir(p, 0755);
        snprintf(p, sizeof(p), "%s/state", dir);
        mkdir(p, 0755);

        is_int(run(dir, "/bin/true ALLOW", &s, &res), 0, "a run with exec checks works");
        is_int(res.exit_code, 0, "an allowed exec proceeds");
        ok(saw(&s, "/bin/sh"), "the program's own first exec is checked");
        ok(saw(&s, "/bin/true"), "a nested exec is checked with its path");
        s.n = 1;
        run(dir, "/bin/true DENY; echo $? >/dev/null; /bin/true DENY", &s, &res);
        is_int(res.exit_code, 126, "a denied exec fails (sh reports 126)");
        s.n = 2;
        /* The program cannot install a listener of its own to answer its execs itself. */
        run(dir, "exec python3 -c 'import ctypes, struct, sys\n"
                 "libc = ctypes.CDLL(None, use_errno=True)\n"
                 "insn = ctypes.create_string_buffer(struct.pack(\"HBBI\", 6, 0, 0, 0x7fff0000))\n"
                 "prog = ctypes.create_string_buffer(struct.pack(\"HxxxxxxQ\", 1, ctypes.addressof(insn)))\n"
                 "r = libc.syscall(317, 1, 8, prog)\n"
                 "sys.exit(0 if r < 0 and ctypes.get_errno() == 1 else 1)'", &s, &res);
        is_int(res.exit_code, 0, "the program cannot create its own seccomp listener");
        s.n = 3;
        run(dir, "set -- $(seq 3000); /bin/true \"$@\"", &s, &res);
        is_int(res.exit_code, 0, "an exec with 3,000 arguments (xargs, find -exec +) runs");
        ok(s.long_argv, "... and the check saw every argument");
        s.long_argv = false;
        run(dir, "set -- $(seq 3000) DENY; /bin/true \"$@\"", &s, &res);
        ok(res.exit_code != 0 && !s.long_argv, "... and can refuse it (status %d)", res.exit_code);
        tap_rmtree(dir);
}

int main(void)
{
        test_env();
        test_exec_checks();
        ok(guard_landlock_abi() >= 0, "the Landlock ABI probe answers (%d)", guard_landlock_abi());
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}
