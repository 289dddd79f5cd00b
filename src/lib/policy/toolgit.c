/* git's own ways to run commands and write files: aliases ("!cmd", or other git words),
 * configuration that names a program (core.pager, diff.X.textconv ... by -c or git config),
 * --exec-path, submodule foreach, rebase --exec, bisect run, the files apply, archive and
 * format-patch write, and what show, diff and blame read back.  A file of its own because
 * git alone has this much of it; its table is looked up by tool_handler (tools.c). */
#define _GNU_SOURCE
#include "policy/tools.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"

/* ---- git ---- */

static const char *const git_cmd_keys[] = {"core.pager", "core.sshcommand", "core.editor", "core.fsmonitor",
                                           "sequence.editor", "diff.external", "core.hookspath",
                                           "credential.helper", "pager.log", "pager.diff", "pager.show",
                                           "pager.branch", "gpg.program", "gpg.ssh.program", "core.askpass",
                                           "interactive.difffilter", "merge.tool", "diff.tool",
                                           "uploadpack.packobjectshook", "core.alternaterefscommand",
                                           "protocol.ext.allow", NULL};

static bool git_cmd_key(const char *key)
{
        if (uw_in(key, git_cmd_keys))
                return true;
        size_t l = strlen(key);
        /* filter.X.clean/smudge/process, diff.X.textconv/command, merge.X.driver,
         * mergetool.X.cmd, difftool.X.cmd, credential.URL.helper */
        static const char *const tails[] = {".clean",   ".smudge", ".process", ".textconv",
                                            ".command", ".driver", ".cmd",     ".helper"};
        for (size_t k = 0; k < ARRAY_SIZE(tails); k++) {
                size_t t = strlen(tails[k]);
                if (l > t && !strcmp(key + l - t, tails[k]))
                        return true;
        }
        return false;
}

/* A git configuration value: a shell command for command keys and ! aliases. */
static void git_value(struct scan *sc, size_t idx, const char *key, const char *v, int depth)
{
        char *k = xstrdup(key);
        for (char *p = k; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        bool alias = !strncmp(k, "alias.", 6) && v[0] == '!';
        bool cmd = git_cmd_key(k);
        if (!strcmp(k, "gc.pruneexpire") || !strncmp(k, "gc.reflogexpire", 15)) {
                if (!strcmp(v, "now") || !strcmp(v, "all") || !strcmp(v, "0") || strstr(v, "second") ||
                    strstr(v, "minute")) {
                        char *const gc[] = {"git", "gc", "--prune=now", NULL};
                        uw_run(sc, idx, gc, 3, depth);
                }
        }
        free(k);
        if (has_unk(v) && (alias || cmd))
                uw_unknown(sc, idx, "git configuration runs a command that cannot be known");
        else if (alias || cmd)
                tool_text_at(sc, idx, v + (alias ? 1 : 0), depth,
                        "git configuration runs a command that cannot be known");
}

/* git show REV:PATH, git diff -- PATH, git log -p -- PATH: the file's content, as cat. */
static void git_reads(struct scan *sc, size_t idx, size_t sub, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        const char *s = a[sub];
        bool content = !strcmp(s, "show") || !strcmp(s, "diff") || !strcmp(s, "blame") ||
                       !strcmp(s, "annotate") || !strcmp(s, "cat-file") || !strcmp(s, "grep") ||
                       !strcmp(s, "archive") || !strcmp(s, "whatchanged");
        bool patch = false;
        for (size_t k = sub + 1; k < n; k++)
                patch |= !strcmp(a[k], "-p") || !strcmp(a[k], "--patch") || !strcmp(a[k], "-u") ||
                         !strncmp(a[k], "-L", 2) || !strcmp(a[k], "--follow");
        if (!strcmp(s, "log") || !strcmp(s, "reflog"))
                content = patch;
        if (!content)
                return;
        bool paths = false;
        for (size_t k = sub + 1; k < argc_of(sc, idx); k++) {
                a = argv_of(sc, idx);
                const char *w = a[k];
                if (!strcmp(w, "--")) {
                        paths = true;
                        continue;
                }
                const char *colon = w[0] != '-' ? strchr(w, ':') : NULL;
                if (colon && colon[1] && !strstr(w, "://")) /* REV:PATH */
                        tool_read_at(sc, idx, colon + 1 + (colon[1] == '/'), depth);
                else if (paths ||
                         (w[0] != '-' && (!strcmp(s, "blame") || !strcmp(s, "diff")) && strchr(w, '.')))
                        tool_read_at(sc, idx, w, depth);
        }
}

/* git's global options: -c KEY=VALUE, -C DIR, --exec-path=DIR, --git-dir ... */
static size_t git_globals(struct scan *sc, size_t idx, int depth, const char **exec_path)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx), k = 1;
        static const char *const with_arg[] = {"-C",          "-c",           "--git-dir",      "--work-tree",
                                               "--namespace", "--config-env", "--super-prefix", "--list-cmds",
                                               NULL};
        *exec_path = NULL;
        while (k < n && a[k][0] == '-') {
                a = argv_of(sc, idx);
                if (!strcmp(a[k], "-c") && k + 1 < n) {
                        const char *eq = strchr(a[k + 1], '=');
                        if (eq) {
                                char *key = strndup(a[k + 1], (size_t)(eq - a[k + 1]));
                                char *v = xstrdup(eq + 1);
                                if (key)
                                        git_value(sc, idx, key, v, depth);
                                free(key);
                                free(v);
                        }
                }
                if (!strncmp(a[k], "--exec-path=", 12))
                        *exec_path = a[k] + 12;
                if (uw_in(a[k], with_arg))
                        k++;
                k++;
        }
        return k;
}

/* The value of -c alias.NAME=VALUE for this subcommand, or NULL. */
static const char *git_alias(char **a, size_t upto, const char *sub)
{
        size_t l = strlen(sub);
        for (size_t k = 1; k + 1 < upto; k++)
                if (!strcmp(a[k], "-c") && !strncasecmp(a[k + 1], "alias.", 6) &&
                    !strncmp(a[k + 1] + 6, sub, l) && a[k + 1][6 + l] == '=')
                        return a[k + 1] + 7 + l;
        return NULL;
}

static void h_git(struct scan *sc, size_t idx, int depth)
{
        const char *exec_path;
        size_t sub = git_globals(sc, idx, depth, &exec_path);
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        if (sub >= n)
                return;
        char *s = xstrdup(a[sub]);
        const char *alias = git_alias(a, sub, s);
        if (alias && alias[0] != '!') { /* an alias of other git words: git push -f */
                struct strvec v = {0};
                strvec_push(&v, xstrdup("git"));
                char *copy = xstrdup(alias), *save = NULL;
                for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
                        strvec_push(&v, xstrdup(t));
                free(copy);
                a = argv_of(sc, idx);
                for (size_t k = sub + 1; k < n; k++)
                        strvec_push(&v, xstrdup(a[k]));
                uw_run(sc, idx, v.v, v.n, depth);
                strv_free(v.v);
        }
        if (exec_path) { /* git SUB runs DIR/git-SUB */
                char *prog = xasprintf("%s/git-%s", exec_path, s);
                struct strvec v = {0};
                strvec_push(&v, prog);
                a = argv_of(sc, idx);
                for (size_t k = sub + 1; k < n; k++)
                        strvec_push(&v, xstrdup(a[k]));
                uw_run(sc, idx, v.v, v.n, depth);
                strv_free(v.v);
        }
        a = argv_of(sc, idx);
        if (!strcmp(s, "config") || !strcmp(s, "config-set")) {
                size_t k = sub + 1;
                while (k < n && a[k][0] == '-')
                        k += !strcmp(a[k], "--file") || !strcmp(a[k], "-f") || !strcmp(a[k], "--blob")
                                     ? 2
                                     : 1;
                if (k < n && !strcmp(a[k], "set"))
                        for (k++; k < n && a[k][0] == '-'; k++)
                                ;
                if (k + 1 < n) {
                        char *key = xstrdup(a[k]), *v = xstrdup(a[k + 1]);
                        git_value(sc, idx, key, v, depth);
                        free(key);
                        free(v);
                }
        } else if (!strcmp(s, "submodule") && sub + 1 < n && !strcmp(a[sub + 1], "foreach")) {
                size_t k = sub + 2;
                while (k < n && a[k][0] == '-')
                        k++;
                tool_text_words(sc, idx, k, depth, "git submodule foreach of a command that cannot be known");
        } else if (!strcmp(s, "rebase")) {
                for (size_t k = sub + 1; k < argc_of(sc, idx); k++) {
                        a = argv_of(sc, idx);
                        const char *v = (!strcmp(a[k], "-x") || !strcmp(a[k], "--exec")) && k + 1 < n
                                ? a[k + 1]
                                        : !strncmp(a[k], "--exec=", 7)                          ? a[k] + 7
                                                                                                 : NULL;
                        if (v)
                                tool_text_at(sc, idx, v, depth,
                                        "git rebase --exec of a command that cannot be known");
                }
        } else if (!strcmp(s, "bisect") && sub + 1 < n && !strcmp(a[sub + 1], "run"))
                tool_run_words(sc, idx, sub + 2, depth);
        else if (!strcmp(s, "apply") || !strcmp(s, "am")) {
                bool unsafe = false;
                const char *dir = NULL;
                for (size_t k = sub + 1; k < n; k++) {
                        unsafe |= !strcmp(a[k], "--unsafe-paths");
                        if (!strcmp(a[k], "--directory") && k + 1 < n)
                                dir = a[k + 1];
                        else if (!strncmp(a[k], "--directory=", 12))
                                dir = a[k] + 12;
                }
                if (unsafe && dir) {
                        char *p = xasprintf("%s/" UNK_S, dir);
                        tool_write_at(sc, idx, p, depth);
                        free(p);
                }
        } else if (!strcmp(s, "archive") || !strcmp(s, "format-patch") || !strcmp(s, "bundle")) {
                for (size_t k = sub + 1; k < n; k++) {
                        a = argv_of(sc, idx);
                        if ((!strcmp(a[k], "-o") || !strcmp(a[k], "--output") ||
                             !strcmp(a[k], "--output-directory")) &&
                            k + 1 < n)
                                tool_write_at(sc, idx, a[k + 1], depth);
                        else if (!strncmp(a[k], "--output=", 9))
                                tool_write_at(sc, idx, a[k] + 9, depth);
                }
        }
        git_reads(sc, idx, sub, depth);
        free(s);
}

const struct tool tool_git_models[] = {
        {"git", h_git}, {NULL, NULL},
};
