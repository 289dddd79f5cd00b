/* The sandbox's guard: secret environment filtering and exec checks through seccomp user
 * notification.  Runs only harmless programs (true, sh).  tests/run.sh runs this as root and
 * as an unprivileged user (as-user). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/execorigin.h"
#include "sandbox/guard.h"
#include "sandbox/reslimits.h"
#include "sandbox/sandbox.h"
#include "tap.h"
#include "base/macros.h"

struct seen {
        char paths[64][64];
        int n;
        bool long_argv;
        char tools[16][8]; /* exec_caller_tool() of the execs marked WHO, or git's reset */
        int ntools;
        struct exec_tools npm;
};

static bool check_args(struct seen *s, const char *path, char *const argv[]);

static bool check(void *ctx, const char *path, char *const argv[], struct exec_caller *caller)
{
        struct seen *s = ctx;
        const char *base = strrchr(argv[0], '/');
        bool who = argv[1] && (!strcmp(argv[1], "WHO") ||
                               (!strcmp(base ? base + 1 : argv[0], "git") && !strcmp(argv[1], "reset")));
        if (who && s->ntools < 16) {
                const char *t = exec_caller_tool(caller, path, &s->npm);
                snprintf(s->tools[s->ntools++], sizeof(s->tools[0]), "%s", t ? t : "-");
        }
        exec_tools_note(&s->npm, caller, path, argv);
        return check_args(s, path, argv);
}

static bool check_args(struct seen *s, const char *path, char *const argv[])
{
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

/* exec_git_command on /proc/PID/cmdline's NUL-separated words. */
static void test_git_command(void)
{
        static const struct {
                const char *words; /* '|' for NUL */
                const char *want;
        } cases[] = {
                {"git|stash|pop|", "stash"},
                {"/usr/bin/git|-C|sub|-c|a.b=c|--no-pager|gc|--auto|", "gc"},
                {"git|--git-dir|.git|--work-tree=.|rebase|main|", "rebase"},
                {"git|-c|alias.x=!git|x|reset|--hard|", "x"},
                {"/usr/lib/git-core/git-stash|push|", "stash"},
                {"git|-c|", NULL},
                {"git|--bare|", NULL},
                {"git|sta", NULL}, /* cut short: not a whole word */
        };
        for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
                char buf[128];
                size_t n = strlen(cases[k].words);
                memcpy(buf, cases[k].words, n);
                for (size_t i = 0; i < n; i++)
                        if (buf[i] == '|')
                                buf[i] = '\0';
                const char *got = exec_git_command(buf, n);
                ok(cases[k].want ? got && !strcmp(got, cases[k].want) : !got, "git command of '%s': %s",
                   cases[k].words, got ? got : "(none)");
        }
        ok(exec_git_builtin("stash") && exec_git_builtin("gc") && exec_git_builtin("rebase"),
           "stash, gc and rebase are git's own builtins");
        ok(!exec_git_builtin("x") && !exec_git_builtin("lfs") && !exec_git_builtin(""),
           "an alias or an external git-NAME is not");
}

static void put_file(const char *dir, const char *name, const char *text)
{
        char path[600];
        snprintf(path, sizeof(path), "%s/ws/%s", dir, name);
        FILE *f = fopen(path, "w");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0)
                printf("# cannot write %s\n", path);
}

/* Run script; the tools exec_caller_tool() named for its marked execs (WHO, or git's reset),
 * space-separated ("-" for none), must be want. */
static void who(const char *dir, const char *script, const char *want, const char *what)
{
        static int runs = 10;
        struct txbox_run_result res;
        struct seen s = {0};
        char got[256] = "";

        s.n = runs++;
        run(dir, script, &s, &res);
        for (int i = 0; i < s.ntools; i++)
                snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "", s.tools[i]);
        ok(res.exit_code == 0 && !strcmp(got, want), "%s: '%s' (status %d)", what, got, res.exit_code);
}

#define GIT_ENV                                                                                        \
        "export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e " \
        "GIT_CONFIG_NOSYSTEM=1 HOME=$PWD; cd r && echo $$ >>f && "

/* Who runs an exec, from the kernel's view: git's own steps and make's and npm's scripts
 * are told apart from the same commands run by a shell, an alias, a copy of git, a program
 * that names itself make, or one that sets npm's variables. */
static void test_exec_origin(void)
{
        char dir[200], p[600];

        if (!tap_mkdtemp(dir, sizeof(dir), "txbox-origin") || chmod(dir, 0755) < 0) {
                ok(0, "mkdtemp");
                return;
        }
        snprintf(p, sizeof(p), "%s/ws", dir);
        mkdir(p, 0755);
        snprintf(p, sizeof(p), "%s/state", dir);
        mkdir(p, 0755);
        snprintf(p, sizeof(p), "cd '%s/ws' && git init -q r && cd r && echo 0 >f && git add f && "
                              "git -c user.name=t -c user.email=t@e commit -qm x", dir);
        if (system(p) != 0) {
                ok(0, "cannot make a git repository: %s", p);
                tap_rmtree(dir);
                return;
        }
        who(dir, GIT_ENV "git stash -q", "git", "git stash's own reset --hard is git's");
        who(dir, GIT_ENV "sh -c 'git reset --hard -q'", "-", "a shell's git reset --hard is not");
        who(dir, GIT_ENV "git -c alias.x='!git' x reset --hard -q", "-", "an alias's (!git) is not");
        who(dir, GIT_ENV "git -c alias.x='reset --hard -q' x", "-", "an alias's (reset --hard) is not");
        who(dir, GIT_ENV "cp \"$(command -v git)\" ./git && ./git stash -q", "-",
            "a copy of git's (in the workspace) is not");
        who(dir, GIT_ENV "cp \"$(command -v git)\" ./git && GIT_EXEC_PATH=$PWD git stash -q", "-",
            "git's, when GIT_EXEC_PATH leads it to a copy, is not");

        put_file(dir, "Makefile", "x:\n\t/bin/true WHO\ny:\n\t/bin/true WHO && /bin/true WHO\n"
                                  "z:\n\tpython3 run.py\n");
        put_file(dir, "run.py", "import subprocess\nsubprocess.run(['/bin/true', 'WHO'])\n");
        who(dir, "make -s x y", "make make make", "make's recipes are make's, run directly or by its shell");
        who(dir, "make -s z; /bin/true WHO", "- -",
            "a program a recipe runs, and the shell beside make, are not");
        put_file(dir, "named.py", "import os\nos.execv('/bin/true', ['make', 'WHO'])\n");
        who(dir, "python3 named.py", "-", "a program that names itself make is not");

        if (access("/usr/bin/npm", X_OK) == 0) {
                put_file(dir, "package.json",
                         "{\"name\": \"t\", \"version\": \"1.0.0\", \"scripts\": "
                         "{\"w\": \"/bin/true WHO\", \"v\": \"sh -c '/bin/true WHO'\"}}\n");
                put_file(dir, "run.js", "require('child_process').execFileSync('/bin/true', ['WHO'])\n");
#define NPM_ENV "export HOME=$PWD npm_config_cache=$PWD/.npm npm_config_update_notifier=false; "
                who(dir, NPM_ENV "npm run -s w && npm run -s v", "npm npm", "npm's scripts are npm's");
                who(dir,
                    NPM_ENV "node run.js && "
                            "npm_lifecycle_event=w npm_execpath=/usr/bin/npm sh -c '/bin/true WHO'",
                    "- -", "node's own child, and npm's variables, are not");
        } else {
                ok(1, "# SKIP npm is not installed");
        }
        tap_rmtree(dir);
}

int main(void)
{
        test_env();
        test_exec_checks();
        test_git_command();
        test_exec_origin();
        ok(guard_landlock_abi() >= 0, "the Landlock ABI probe answers (%d)", guard_landlock_abi());
        printf("1..%d\n", tap_n);
        return tap_failed ? 1 : 0;
}
