/* txbox prefix STRING: Claude Code's CLAUDE_CODE_SHELL_PREFIX (docs/INTEGRATIONS.md).
 *
 * Claude Code runs every Bash tool command as PREFIX 'STRING', one argument, STRING being a
 * shell script that sources its shell snapshot, evals the model's command and ends with
 * "&& pwd -P >| $TMPDIR/claude-XXXX-cwd" so that a cd carries over to the next command.  It
 * starts hooks and stdio MCP servers through the prefix too ('txbox hook claude-code',
 * 'txbox mcp').
 *
 * Every string is a transaction, except two kinds that pass through untouched: txbox's own
 * hook and mcp verbs (exact words, run as this very binary, no shell), and the exact strings
 * the user lists in TXBOX_PREFIX_PASS.  Nothing the model writes can take those forms: its
 * commands always come wrapped, and a string that merely resembles one (a quote, a ';', a
 * second command, another program named txbox) is a transaction like any other.
 *
 * The cwd bookkeeping: the sandbox's /tmp is its own and the rest of the host is read-only,
 * so the final "pwd -P >| FILE" is taken off the script; the shell reports its directory on
 * a pipe given to it as standard input (its own commands read /dev/null: "eval ... <
 * /dev/null"), and txbox writes FILE itself when the command succeeded and the directory is
 * inside the workspace. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "run.h"
#include "base/macros.h"
#include "base/mem.h"

#define PASS_ENV "TXBOX_PREFIX_PASS"
#define MAX_WORDS 32

static void prefix_usage(FILE *f)
{
        fprintf(f, "Usage: txbox [-C DIR] [--policy FILE] prefix [RUN-OPTIONS] STRING\n\n"
                   "       txbox-prefix [RUN-OPTIONS] STRING   (a link to txbox, make install makes it)\n\n"
                   "Claude Code's shell prefix: set CLAUDE_CODE_SHELL_PREFIX to /usr/local/bin/txbox-prefix\n"
                   "(Claude Code accepts a program path and simple flags only, such as --net=host; other\n"
                   "options, global ones included, go in TXBOX_PREFIX_OPTIONS, e.g.\n"
                   "\"--workspace=/home/me/project --net=allow:pypi.org\").  Claude Code then runs each "
                           "Bash\n"
                   "command as txbox-prefix STRING, and STRING runs as one transaction (bash -c STRING;\n"
                   "zsh when $SHELL is zsh), as txbox sh would, with Claude Code's record of the shell's\n"
                   "directory kept working.\n\n"
                   "Passed through untouched (not a transaction): 'txbox hook AGENT' and\n"
                   "'txbox [-C DIR] [--state DIR] [--policy FILE] mcp [OPTIONS]' in plain words, run\n"
                   "as this txbox; and each line of $" PASS_ENV " that equals STRING exactly (your\n"
                   "other hooks and MCP servers).  Anything else, including what merely looks like\n"
                   "those, is a transaction.\n\n"
                   "The workspace is -C DIR, else the nearest directory from the current one up (below\n"
                   "$HOME) that holds .txbox, .git or .claude or already has transactions, else the\n"
                   "current directory: as for every verb (txbox(1), \"The workspace\").\n\n"
                   "Options (those of txbox run):\n");
        run_options_help(f);
}

/* A word of a passed-through command: plain characters only, nothing a shell would expand. */
static bool plain_word(const char *w, size_t n)
{
        if (!n)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-", w[i]))
                        return false;
        return true;
}

/* Split s at single spaces into plain words; false when anything else is in it. */
static bool split_plain(const char *s, char *buf, size_t size, char **words, int *n)
{
        size_t len = strlen(s);
        if (len >= size)
                return false;
        memcpy(buf, s, len + 1);
        *n = 0;
        for (char *p = buf; *p;) {
                char *e = strchrnul(p, ' ');
                if (*n == MAX_WORDS - 1 || !plain_word(p, (size_t)(e - p)))
                        return false;
                words[(*n)++] = p;
                if (!*e)
                        break;
                *e = '\0';
                p = e + 1;
        }
        words[*n] = NULL;
        return *n > 0;
}

/* Is w this txbox: the word "txbox" (found on PATH by Claude Code's settings, as by us) or a
 * path to the very binary that runs now? */
static bool is_us(const char *w)
{
        char a[PATH_MAX], b[PATH_MAX];
        if (!strcmp(w, "txbox"))
                return true;
        if (w[0] != '/' || strcmp(strrchr(w, '/') + 1, "txbox"))
                return false;
        return realpath(w, a) && realpath("/proc/self/exe", b) && !strcmp(a, b);
}

/* txbox [-C DIR | --workspace DIR | --state DIR | --policy FILE]... (hook AGENT | mcp [OPTIONS]) */
static bool txbox_start(char **w, int n)
{
        static const char *const with_value[] = {"-C", "--workspace", "--state", "--policy"};
        int i = 1;

        if (!is_us(w[0]))
                return false;
        for (bool more = true; more && i < n;) {
                more = false;
                for (size_t k = 0; k < ARRAY_SIZE(with_value) && !more; k++)
                        if (!strcmp(w[i], with_value[k]) && i + 1 < n) {
                                i += 2;
                                more = true;
                        }
        }
        if (i < n && !strcmp(w[i], "hook"))
                return i + 2 == n && (!strcmp(w[i + 1], "claude-code") || !strcmp(w[i + 1], "codex") ||
                                      !strcmp(w[i + 1], "gemini"));
        return i < n && !strcmp(w[i], "mcp");
}

/* Is s one of the user's lines in TXBOX_PREFIX_PASS (exactly)? */
static bool user_pass(const char *s)
{
        const char *list = getenv(PASS_ENV);
        size_t n = strlen(s);

        for (const char *l = list; l && *l;) {
                const char *e = strchrnul(l, '\n');
                if ((size_t)(e - l) == n && n && !memcmp(l, s, n))
                        return true;
                l = *e ? e + 1 : e;
        }
        return false;
}

/* Claude Code's last step, " && pwd -P >| FILE" with FILE $TMPDIR/claude-HEX-cwd (or /tmp):
 * returns where the suffix starts, FILE copied to file; -1 when STRING does not end so. */
static ssize_t cwd_suffix(const char *s, char *file, size_t size)
{
        static const char mark[] = " && pwd -P >| ";
        const char *m = NULL;

        for (const char *p = strstr(s, mark); p; p = strstr(p + 1, mark))
                m = p;
        if (!m)
                return -1;
        const char *f = m + strlen(mark), *base = strrchr(f, '/');
        size_t len = strlen(f);
        if (!base || len >= size || !plain_word(f, len) || strncmp(base, "/claude-", 8) || len < 12 ||
            strcmp(f + len - 4, "-cwd"))
                return -1;
        for (const char *h = base + 8; h < f + len - 4; h++)
                if (!strchr("0123456789abcdef", *h))
                        return -1;
        /* Only in Claude Code's temporary directory, never a path of the string's choosing. */
        const char *tmp = getenv("TMPDIR");
        size_t dl = (size_t)(base - f);
        bool in_tmp = (dl == 4 && !strncmp(f, "/tmp", 4));
        if (tmp && *tmp == '/') {
                size_t tl = strlen(tmp);
                while (tl > 1 && tmp[tl - 1] == '/')
                        tl--;
                in_tmp = in_tmp || (dl == tl && !strncmp(f, tmp, tl));
        }
        if (!in_tmp)
                return -1;
        memcpy(file, f, len + 1);
        return m - s;
}

/* The shell Claude Code's snapshot is for: zsh when that is the user's, else bash. */
static const char *shell_path(void)
{
        const char *names[] = {getenv("CLAUDE_CODE_SHELL"), getenv("SHELL")};
        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                const char *sh = names[i], *b = sh ? strrchr(sh, '/') : NULL;
                if (b && sh[0] == '/' && (!strcmp(b, "/bash") || !strcmp(b, "/zsh")) && access(sh, X_OK) == 0)
                        return sh;
        }
        return access("/bin/bash", X_OK) == 0 ? "/bin/bash" : "/bin/sh";
}

/* After the run: the shell's last directory, from its pipe, into Claude Code's file. */
static void record_cwd(int fd, const char *file, const char *ws)
{
        char buf[PATH_MAX + 2], *line = buf;
        ssize_t n, got = 0;
        struct stat st;

        while ((n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0 && got < (ssize_t)sizeof(buf) - 1)
                got += n;
        buf[got] = '\0';
        while (got > 0 && buf[got - 1] == '\n')
                buf[--got] = '\0';
        if (strrchr(buf, '\n'))
                line = strrchr(buf, '\n') + 1;
        size_t wl = strlen(ws);
        /* The program could have written to the pipe too: only a directory of the workspace,
         * as the host sees it now, is passed on. */
        if (line[0] != '/' || strncmp(line, ws, wl) || (line[wl] != '/' && line[wl] != '\0') ||
            strstr(line, "/..") || stat(line, &st) < 0 || !S_ISDIR(st.st_mode))
                return;
        int out = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out < 0)
                return;
        dprintf(out, "%s\n", line);
        close(out);
}

static int run_string(const char *s, struct run_cli *o, struct global_opts *g)
{
        char file[PATH_MAX];
        /* Inside txbox's sandbox the string runs there as it is (run_transaction): no pipe
         * for the directory, nobody would read it. */
        ssize_t cut = txbox_inside_sandbox(NULL, 0) ? -1 : cwd_suffix(s, file, sizeof(file));
        int pipefd[2] = {-1, -1};
        char *script = NULL;

        if (cut >= 0) {
                if (pipe2(pipefd, O_CLOEXEC) < 0) {
                        cli_error("prefix: cannot make a pipe: %m");
                        return EXIT_TXBOX;
                }
                /* the shell's stdin is the pipe's write end; stdout and stderr stay Claude's */
                script = xasprintf("%.*s && pwd -P >&0", (int)cut, s);
                o->opts.stdio_redirect = true;
                o->opts.stdio[0] = pipefd[1], o->opts.stdio[1] = STDOUT_FILENO,
                o->opts.stdio[2] = STDERR_FILENO;
        }
        o->command = script ? script : s;
        char *argv[] = {(char *)shell_path(), "-c", (char *)o->command, NULL};
        int st = run_transaction(argv, o, g);
        if (cut >= 0) {
                close(pipefd[1]);
                char wsbuf[PATH_MAX];
                const char *root = cli_workspace(g);
                if (st == 0 && realpath(root, wsbuf))
                        record_cwd(pipefd[0], file, wsbuf);
                close(pipefd[0]);
        }
        free(script);
        return st;
}

/* Claude Code splits CLAUDE_CODE_SHELL_PREFIX into a path and simple flags only (a value
 * with '/', ':' or ',' breaks it), and a path of a program, not a verb: installed as
 * txbox-prefix (a link to txbox), txbox reads the rest of its options from
 * TXBOX_PREFIX_OPTIONS.  Returns the argv of "txbox [GLOBAL] prefix [OPTIONS] -- STRING"
 * (malloc'd, pointing into argv and opts_buf), or NULL. */
char **prefix_argv(int argc, char **argv, char **opts_buf, int *out_argc)
{
        static const char *const globals[] = {"--workspace=", "--state=", "--policy=", "--approve="};
        const char *env = getenv("TXBOX_PREFIX_OPTIONS");
        size_t max = (size_t)argc + 4 + (env ? strlen(env) / 2 + 1 : 0);
        char **words = calloc(max, sizeof(char *)), **out = calloc(max, sizeof(char *));
        int nw = 0, n = 0;

        *opts_buf = env ? strdup(env) : NULL;
        if (!words || !out || (env && !*opts_buf)) {
                free(words);
                free(out);
                return NULL;
        }
        /* the options: TXBOX_PREFIX_OPTIONS (split at white space), then the prefix's own */
        char *save = NULL;
        for (char *t = *opts_buf ? strtok_r(*opts_buf, " \t\n", &save) : NULL; t;
             t = strtok_r(NULL, " \t\n", &save))
                words[nw++] = t;
        for (int i = 1; i < argc - 1; i++)
                words[nw++] = argv[i];
        out[n++] = "txbox";
        for (int i = 0; i < nw; i++)
                for (size_t k = 0; k < ARRAY_SIZE(globals) && words[i]; k++)
                        if (!strncmp(words[i], globals[k], strlen(globals[k])))
                                out[n++] = words[i], words[i] = NULL;
        out[n++] = "prefix";
        for (int i = 0; i < nw; i++)
                if (words[i])
                        out[n++] = words[i];
        if (argc > 1) { /* the command string, never taken for an option */
                out[n++] = "--";
                out[n++] = argv[argc - 1];
        }
        free(words);
        *out_argc = n;
        return out;
}

int cmd_prefix(int argc, char **argv, const struct global_opts *gin)
{
        struct run_cli o = {0};
        struct global_opts g = *gin;
        char buf[4096], *w[MAX_WORDS];
        int n = 0, i = run_parse_options(argc, argv, &o, prefix_usage), st;

        if (i == -0x100 || i < 0) {
                run_cli_free(&o);
                return i == -0x100 ? 0 : -i;
        }
        if (argc - i != 1) {
                cli_error("prefix: expected one argument, the command string (Claude Code's form); usage: "
                          "txbox "
                          "prefix [OPTIONS] STRING");
                run_cli_free(&o);
                return EXIT_TXBOX;
        }
        const char *s = argv[i];
        if (split_plain(s, buf, sizeof(buf), w, &n) && txbox_start(w, n)) {
                /* txbox's own hook or MCP server: this binary, these words, no shell. */
                run_cli_free(&o);
                execv("/proc/self/exe", w);
                cli_error("prefix: cannot run txbox itself: %m");
                return EXIT_TXBOX;
        }
        if (user_pass(s)) {
                run_cli_free(&o);
                execl("/bin/sh", "sh", "-c", s, (char *)NULL);
                cli_error("prefix: cannot run /bin/sh: %m");
                return EXIT_TXBOX;
        }
        st = run_string(s, &o, &g);
        run_cli_free(&o);
        return st;
}
