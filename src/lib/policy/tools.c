/* Programs with their own ways to run commands or write files: git (aliases, hooks,
 * configuration that runs commands, history read back), editors and ex commands, sed's e
 * and w commands, gdb, tmux, screen, script, npx and package scripts, runners (poetry
 * run, bundle exec ...), docker volumes, library loads, programs' own output options
 * (sort -o, find -fprint ...), processes killed by a daemon's name; and unknown programs
 * that take a command anyway, judged as wrappers. */
#define _GNU_SOURCE
#include "pol.h"

#include <ctype.h>
#include <strings.h>

#define LW(...) ((const char *const[]){__VA_ARGS__, NULL})

static char **argv_of(struct scan *sc, size_t idx) { return sc->cmds[idx].argv.v; }
static size_t argc_of(struct scan *sc, size_t idx) { return sc->cmds[idx].argv.n; }

static void text_at(struct scan *sc, size_t idx, const char *s, int depth, const char *what)
{
        if (uw_all_unk(s))
                return uw_unknown(sc, idx, what);
        char *copy = xstrdup(s);
        uw_text(sc, idx, copy, depth);
        free(copy);
}

static void write_at(struct scan *sc, size_t idx, const char *path, int depth)
{
        char *copy = xstrdup(path);
        char *const tee[] = {"tee", copy, NULL};
        uw_run(sc, idx, tee, 2, depth);
        free(copy);
}

static void read_at(struct scan *sc, size_t idx, const char *path, int depth)
{
        char *copy = xstrdup(path);
        char *const cat[] = {"cat", copy, NULL};
        uw_run(sc, idx, cat, 2, depth);
        free(copy);
}

static void run_words(struct scan *sc, size_t idx, size_t from, int depth)
{
        size_t n = argc_of(sc, idx);
        if (from >= n)
                return;
        char **copy = strv_dup(argv_of(sc, idx) + from);
        uw_run(sc, idx, copy, n - from, depth);
        strv_free(copy);
}

/* The words from `from` on as one shell string (tmux, watchexec, concurrently ...). */
static void text_words(struct scan *sc, size_t idx, size_t from, int depth, const char *what)
{
        size_t n = argc_of(sc, idx);
        if (from >= n)
                return;
        char *s = render_argv(argv_of(sc, idx) + from, SIZE_MAX);
        text_at(sc, idx, s, depth, what);
        free(s);
}

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
                text_at(sc, idx, v + (alias ? 1 : 0), depth,
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
                        read_at(sc, idx, colon + 1 + (colon[1] == '/'), depth);
                else if (paths ||
                         (w[0] != '-' && (!strcmp(s, "blame") || !strcmp(s, "diff")) && strchr(w, '.')))
                        read_at(sc, idx, w, depth);
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
                text_words(sc, idx, k, depth, "git submodule foreach of a command that cannot be known");
        } else if (!strcmp(s, "rebase")) {
                for (size_t k = sub + 1; k < argc_of(sc, idx); k++) {
                        a = argv_of(sc, idx);
                        const char *v = (!strcmp(a[k], "-x") || !strcmp(a[k], "--exec")) && k + 1 < n
                                ? a[k + 1]
                                        : !strncmp(a[k], "--exec=", 7)                          ? a[k] + 7
                                                                                                 : NULL;
                        if (v)
                                text_at(sc, idx, v, depth,
                                        "git rebase --exec of a command that cannot be known");
                }
        } else if (!strcmp(s, "bisect") && sub + 1 < n && !strcmp(a[sub + 1], "run"))
                run_words(sc, idx, sub + 2, depth);
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
                        write_at(sc, idx, p, depth);
                        free(p);
                }
        } else if (!strcmp(s, "archive") || !strcmp(s, "format-patch") || !strcmp(s, "bundle")) {
                for (size_t k = sub + 1; k < n; k++) {
                        a = argv_of(sc, idx);
                        if ((!strcmp(a[k], "-o") || !strcmp(a[k], "--output") ||
                             !strcmp(a[k], "--output-directory")) &&
                            k + 1 < n)
                                write_at(sc, idx, a[k + 1], depth);
                        else if (!strncmp(a[k], "--output=", 9))
                                write_at(sc, idx, a[k] + 9, depth);
                }
        }
        git_reads(sc, idx, sub, depth);
        free(s);
}

/* ---- editors: ex commands (vim -c, +cmd), emacs --eval, ed scripts ---- */

static void ex_cmd(struct scan *sc, size_t idx, const char *cmd, int depth, int level);

/* The first string literal in s ("..." or '...'), malloc'd, or NULL. */
static char *first_literal(const char *s)
{
        const char *q = strpbrk(s, "\"'");
        if (!q)
                return NULL;
        const char *e = strchr(q + 1, *q);
        return e ? strndup(q + 1, (size_t)(e - q - 1)) : NULL;
}

static void ex_one(struct scan *sc, size_t idx, const char *c, int depth, int level)
{
        c += strspn(c, ": \t");
        c += strspn(c, "%.$0123456789,;'<>+-"); /* a range */
        c += strspn(c, " \t");
        if (!*c)
                return;
        if (c[0] == '!')
                return text_at(sc, idx, c + 1, depth, "an editor runs a command that cannot be known");
        size_t w = 0;
        while (isalpha((unsigned char)c[w]) || c[w] == '3')
                w++;
        char word[32];
        snprintf(word, sizeof(word), "%.*s", (int)(w < 31 ? w : 31), c);
        const char *rest = c + w;
        rest += strspn(rest, " \t");
        if (!strcmp(word, "sh") || !strcmp(word, "shell") || !strcmp(word, "terminal") ||
            !strcmp(word, "term") || !strcmp(word, "te")) {
                if (*rest && strcmp(word, "sh") && strcmp(word, "shell"))
                        return text_at(sc, idx, rest, depth, "an editor runs a command that cannot be known");
                return uw_finding(sc, idx, "@interactive-shell", "an editor starts a shell");
        }
        if ((!strcmp(word, "r") || !strcmp(word, "read") || !strcmp(word, "w") || !strcmp(word, "write")) &&
            rest[0] == '!')
                return text_at(sc, idx, rest + 1, depth, "an editor runs a command that cannot be known");
        if ((!strcmp(word, "w") || !strcmp(word, "write") || !strcmp(word, "wq") || !strcmp(word, "x") ||
             !strcmp(word, "sav") || !strcmp(word, "saveas") || !strcmp(word, "up") ||
             !strcmp(word, "update")) &&
            *rest && rest[0] != '!')
                return write_at(sc, idx, rest, depth);
        if (!strcmp(word, "py") || !strcmp(word, "py3") || !strcmp(word, "python") ||
            !strcmp(word, "python3") || !strcmp(word, "pyx") || !strcmp(word, "pythonx") ||
            !strcmp(word, "pydo") || !strcmp(word, "py3do"))
                return scan_code(sc, "python", rest, idx, depth + 1);
        if (!strcmp(word, "lua") || !strcmp(word, "luado"))
                return scan_code(sc, "lua", rest, idx, depth + 1);
        if (!strcmp(word, "perl") || !strcmp(word, "perldo"))
                return scan_code(sc, "perl", rest, idx, depth + 1);
        if (!strcmp(word, "ruby") || !strcmp(word, "rubydo"))
                return scan_code(sc, "ruby", rest, idx, depth + 1);
        if ((!strcmp(word, "exe") || !strcmp(word, "execute")) && level < 4) {
                char *lit = first_literal(rest);
                if (lit)
                        ex_cmd(sc, idx, lit, depth, level + 1);
                else
                        uw_unknown(sc, idx, "an editor executes a command that cannot be known");
                free(lit);
                return;
        }
        if (strstr(c, "system(") || strstr(c, "systemlist(") || strstr(c, "jobstart(") ||
            strstr(c, "termopen(") || strstr(c, "job_start(") || strstr(c, "term_start(")) {
                char *lit = first_literal(strchr(c, '('));
                if (lit)
                        text_at(sc, idx, lit, depth, "an editor runs a command that cannot be known");
                else
                        uw_unknown(sc, idx, "an editor runs a command that cannot be known");
                free(lit);
        }
}

/* ex commands, separated by | (except in a :! command, which takes the rest). */
static void ex_cmd(struct scan *sc, size_t idx, const char *cmd, int depth, int level)
{
        char *copy = xstrdup(cmd), *p = copy;
        while (p && *p) {
                char *t = p + strspn(p, ": \t%.$0123456789,");
                bool shell = t[0] == '!' || !strncmp(t, "r !", 3) || !strncmp(t, "r!", 2) ||
                             !strncmp(t, "w !", 3);
                char *bar = shell ? NULL : strchr(p, '|');
                if (bar)
                        *bar = 0;
                ex_one(sc, idx, p, depth, level);
                p = bar ? bar + 1 : NULL;
        }
        free(copy);
}

/* An editor given a directory (vim ., code ./) browses it: it writes no file by that name. */
static bool dir_name(const char *a)
{
        size_t l = strlen(a);
        return !strcmp(a, ".") || !strcmp(a, "..") || (l && a[l - 1] == '/') ||
               (l >= 2 && !strcmp(a + l - 2, "/.")) || (l >= 3 && !strcmp(a + l - 3, "/.."));
}

static void h_vim(struct scan *sc, size_t idx, int depth)
{
        size_t n = argc_of(sc, idx);
        const char *p = base_name(argv_of(sc, idx)[0]);
        bool ro = !strcmp(p, "view") || !strcmp(p, "rview") || !strcmp(p, "nview");
        for (size_t k = 1; k < argc_of(sc, idx); k++) {
                char **a = argv_of(sc, idx);
                const char *o = a[k], *cmd = NULL;
                if ((!strcmp(o, "-c") || !strcmp(o, "--cmd") || !strcmp(o, "-C")) && k + 1 < n)
                        cmd = a[++k];
                else if (o[0] == '+' && o[1])
                        cmd = o + 1;
                else if ((!strcmp(o, "-S") || !strcmp(o, "-s") || !strcmp(o, "-u") || !strcmp(o, "-i") ||
                          !strcmp(o, "-T") || !strcmp(o, "-w") || !strcmp(o, "-W") ||
                          !strcmp(o, "--listen") || !strcmp(o, "--servername")) &&
                         k + 1 < n) {
                        if (!strcmp(o, "-W") || !strcmp(o, "-w"))
                                write_at(sc, idx, a[k + 1], depth);
                        k++;
                } else if (!strcmp(o, "-R") || !strcmp(o, "-M"))
                        ro = true;
                else if (o[0] != '-' && o[0] != '+' && !ro && !dir_name(o))
                        write_at(sc, idx, o, depth); /* a file opened to edit */
                if (cmd) {
                        char *copy = xstrdup(cmd);
                        ex_cmd(sc, idx, copy, depth, 0);
                        free(copy);
                }
        }
}

/* ed/ex scripts on stdin: !cmd, r !cmd, w FILE. */
static void h_ed(struct scan *sc, size_t idx, int depth)
{
        size_t n = argc_of(sc, idx);
        for (size_t k = 1; k < n; k++) {
                char **a = argv_of(sc, idx);
                if (a[k][0] != '-')
                        write_at(sc, idx, a[k], depth);
        }
        const char *in = sc->cmds[idx].stdin_text;
        if (!in)
                return;
        char *copy = xstrdup(in), *save = NULL;
        for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                if (l[0] == '!' || !strncmp(l, "r !", 3) || !strncmp(l, "w !", 3) || !strncmp(l, "e !", 3) ||
                    (l[0] == 'w' && l[1] == ' '))
                        ex_one(sc, idx, l, depth, 0);
        free(copy);
}

/* emacs --eval EXPR: shell-command, call-process and friends. */
static void lisp(struct scan *sc, size_t idx, const char *e, int depth)
{
        static const char *const shell[] = {"(shell-command ",
                                            "(shell-command-to-string ",
                                            "(async-shell-command ",
                                            "(call-process-shell-command ",
                                            "(start-process-shell-command ",
                                            NULL};
        for (const char *const *f = shell; *f; f++)
                for (const char *s = e; (s = strstr(s, *f)); s++) {
                        char *lit = first_literal(s + strlen(*f) - 1);
                        if (lit)
                                text_at(sc, idx, lit, depth, "emacs runs a command that cannot be known");
                        else
                                uw_unknown(sc, idx, "emacs runs a command that cannot be known");
                        free(lit);
                }
        for (const char *s = e; (s = strstr(s, "(delete-directory ")); s++) {
                char *lit = first_literal(s);
                if (lit) {
                        char *const rf[] = {"rm", "-r", "-f", lit, NULL};
                        uw_run(sc, idx, rf, 4, depth);
                }
                free(lit);
        }
        if (strstr(e, "(call-process ") || strstr(e, "(start-process ") || strstr(e, "(process-lines "))
                uw_finding(sc, idx, "@unknown-command", "emacs starts a process");
}

static void h_emacs(struct scan *sc, size_t idx, int depth)
{
        size_t n = argc_of(sc, idx);
        for (size_t k = 1; k < n; k++) {
                char **a = argv_of(sc, idx);
                const char *e = NULL;
                if ((!strcmp(a[k], "--eval") || !strcmp(a[k], "-eval") || !strcmp(a[k], "--execute")) &&
                    k + 1 < n)
                        e = a[++k];
                else if (!strncmp(a[k], "--eval=", 7) || !strncmp(a[k], "--execute=", 10))
                        e = strchr(a[k], '=') + 1;
                else if ((!strcmp(a[k], "-l") || !strcmp(a[k], "--load") || !strcmp(a[k], "-f") ||
                          !strcmp(a[k], "--funcall")) &&
                         k + 1 < n)
                        k++;
                else if (a[k][0] != '-' && a[k][0] != '+' && !dir_name(a[k]))
                        write_at(sc, idx, a[k], depth);
                if (e) {
                        char *copy = xstrdup(e);
                        lisp(sc, idx, copy, depth);
                        free(copy);
                }
        }
}

/* Plain editors: a file opened is a file written. */
static void h_editor(struct scan *sc, size_t idx, int depth)
{
        size_t n = argc_of(sc, idx);
        for (size_t k = 1; k < n; k++) {
                char **a = argv_of(sc, idx);
                if (!strcmp(a[k], "-v") || !strcmp(a[k], "--view"))
                        return;
                if (a[k][0] != '-' && a[k][0] != '+' && !dir_name(a[k]))
                        write_at(sc, idx, a[k], depth);
        }
}

/* ---- sed ---- */

/* Does a sed script leave nothing of a file (d, 1,$d, s/.STAR//, -n without p)? */
static bool sed_wipes(const char *script, bool quiet)
{
        char buf[64];
        size_t o = 0;
        for (const char *s = script; *s && o + 1 < sizeof(buf); s++)
                if (!isspace((unsigned char)*s))
                        buf[o++] = *s;
        buf[o] = 0;
        if (o + 1 >= sizeof(buf))
                return false;
        static const char *const wipe[] = {"d",       "1,$d",    "0,$d",    ",$d",    "/.*/d",    "/^/d",
                                           "/$/d",    "/^.*$/d", "/./d",    "s/.*//", "s/^.*$//", "s/.*//g",
                                           "s/^.*//", "s/.*$//", "$!d;d",   "1,$d;",  "d;",       "N;d",
                                           "$d;d",    "/^.*/d",  "s/.*//;", "/.*$/d", "1~1d",     "0~1d"};
        for (size_t k = 0; k < ARRAY_SIZE(wipe); k++)
                if (!strcmp(buf, wipe[k]))
                        return true;
        return quiet && !strpbrk(buf, "pPwW=lqaic");
}

/* One sed script: its e commands run a shell, w and s///w write files, r reads one. */
static void sed_script(struct scan *sc, size_t idx, const char *script, int depth)
{
        const char *s = script;
        while (*s) {
                s += strspn(s, " \t\n;{}!");
                /* an address: digits, $, /re/, \cREc, ranges, steps */
                while (*s && strchr("0123456789$,~+/\\", *s)) {
                        if (*s == '/' || *s == '\\') {
                                char d = *s == '\\' ? s[1] : '/';
                                s += *s == '\\' ? 2 : 1;
                                while (*s && *s != d)
                                        s += *s == '\\' && s[1] ? 2 : 1;
                                if (*s)
                                        s++;
                        } else
                                s++;
                        s += strspn(s, " \t!");
                }
                if (!*s)
                        break;
                char c = *s++;
                if (c == 's' || c == 'y') {
                        char d = *s;
                        if (!d)
                                break;
                        s++;
                        for (int part = 0; part < 2 && *s; part++) {
                                while (*s && *s != d)
                                        s += *s == '\\' && s[1] ? 2 : 1;
                                if (*s)
                                        s++;
                        }
                        while (*s && strchr("gpiIme0123456789", *s)) {
                                if (*s == 'e')
                                        uw_finding(sc, idx, "@unknown-command",
                                                   "sed runs the substituted text as a command");
                                s++;
                        }
                        if (*s == 'w' || *s == 'W') {
                                s++;
                                s += strspn(s, " \t");
                                char *f = strndup(s, strcspn(s, "\n;}"));
                                if (f && *f)
                                        write_at(sc, idx, f, depth);
                                free(f);
                                s += strcspn(s, "\n");
                        }
                        continue;
                }
                if (c == 'e' || c == 'w' || c == 'W' || c == 'r' || c == 'R') {
                        s += strspn(s, " \t");
                        char *arg = strndup(s, strcspn(s, "\n"));
                        if (!arg)
                                abort();
                        if (c == 'e' && *arg)
                                text_at(sc, idx, arg, depth, "sed runs a command that cannot be known");
                        else if (c == 'e')
                                uw_finding(sc, idx, "@unknown-command", "sed runs its text as a command");
                        else if ((c == 'w' || c == 'W') && *arg)
                                write_at(sc, idx, arg, depth);
                        else if (*arg)
                                read_at(sc, idx, arg, depth);
                        free(arg);
                        s += strcspn(s, "\n");
                        continue;
                }
                if (c == 'a' || c == 'i' || c == 'c' || c == 'b' || c == 't' || c == 'T' || c == ':' ||
                    c == 'q' || c == 'Q' || c == 'l' || c == 'L' || c == 'v')
                        s += strcspn(s, "\n;}");
        }
}

static void h_sed(struct scan *sc, size_t idx, int depth)
{
        size_t n = argc_of(sc, idx);
        bool inplace = false, quiet = false, script_opt = false, file_script = false;
        struct strvec scripts = {0}, files = {0};
        for (size_t k = 1; k < n; k++) {
                char **a = argv_of(sc, idx);
                const char *o = a[k];
                if ((!strcmp(o, "-e") || !strcmp(o, "--expression")) && k + 1 < n) {
                        strvec_push(&scripts, xstrdup(a[++k]));
                        script_opt = true;
                } else if (!strncmp(o, "--expression=", 13)) {
                        strvec_push(&scripts, xstrdup(o + 13));
                        script_opt = true;
                } else if ((!strcmp(o, "-f") || !strcmp(o, "--file")) && k + 1 < n) {
                        k++;
                        file_script = true;
                } else if (!strcmp(o, "-l") && k + 1 < n)
                        k++;
                else if (!strncmp(o, "-i", 2) || !strncmp(o, "--in-place", 10))
                        inplace = true;
                else if (!strcmp(o, "-n") || !strcmp(o, "--quiet") || !strcmp(o, "--silent"))
                        quiet = true;
                else if (o[0] == '-' && o[1] != '-' && o[1]) {
                        inplace |= strchr(o, 'i') != NULL;
                        quiet |= strchr(o, 'n') != NULL;
                        if (o[strlen(o) - 1] == 'e' && k + 1 < n) {
                                strvec_push(&scripts, xstrdup(a[++k]));
                                script_opt = true;
                        }
                } else if (o[0] != '-' && !script_opt && !scripts.n && !file_script)
                        strvec_push(&scripts, xstrdup(o));
                else if (o[0] != '-')
                        strvec_push(&files, xstrdup(o));
        }
        char *all = scripts.n ? render_argv(scripts.v, SIZE_MAX) : xstrdup("");
        for (size_t k = 0; k < scripts.n; k++)
                sed_script(sc, idx, scripts.v[k], depth);
        /* sed -i that deletes every line empties its files: as truncate -s 0 */
        if (inplace && !file_script && files.n && sed_wipes(all, quiet)) {
                struct strvec t = {0};
                strvec_push(&t, xstrdup("truncate"));
                strvec_push(&t, xstrdup("-s"));
                strvec_push(&t, xstrdup("0"));
                for (size_t k = 0; k < files.n; k++)
                        strvec_push(&t, xstrdup(files.v[k]));
                uw_run(sc, idx, t.v, t.n, depth);
                strv_free(t.v);
        }
        free(all);
        strv_free(scripts.v);
        strv_free(files.v);
}

/* ---- debuggers ---- */

static void gdb_cmd(struct scan *sc, size_t idx, const char *c, int depth)
{
        c += strspn(c, " \t");
        if (c[0] == '!' || c[0] == '|')
                return text_at(sc, idx, c + 1, depth, "gdb runs a command that cannot be known");
        if (!strncmp(c, "shell", 5) && (!c[5] || isspace((unsigned char)c[5]))) {
                if (!c[5 + strspn(c + 5, " \t")])
                        return uw_finding(sc, idx, "@interactive-shell", "gdb starts a shell");
                return text_at(sc, idx, c + 5, depth, "gdb runs a command that cannot be known");
        }
        if (!strncmp(c, "pipe ", 5)) {
                const char *bar = strchr(c, '|');
                if (bar)
                        text_at(sc, idx, bar + 1, depth, "gdb runs a command that cannot be known");
                return;
        }
        if (!strncmp(c, "python ", 7) || !strncmp(c, "py ", 3) || !strncmp(c, "pi ", 3) ||
            !strncmp(c, "python-interactive ", 19))
                return scan_code(sc, "python", strchr(c, ' ') + 1, idx, depth + 1);
        if (!strncmp(c, "dump ", 5) || !strncmp(c, "append ", 7)) { /* dump KIND FILE EXPR */
                char *copy = xstrdup(c), *save = NULL;
                strtok_r(copy, " \t", &save);
                char *w = strtok_r(NULL, " \t", &save);
                while (w && (!strcmp(w, "binary") || !strcmp(w, "ihex") || !strcmp(w, "srec") ||
                             !strcmp(w, "tekhex") || !strcmp(w, "verilog") || !strcmp(w, "value") ||
                             !strcmp(w, "memory")))
                        w = strtok_r(NULL, " \t", &save);
                if (w)
                        write_at(sc, idx, w, depth);
                free(copy);
                return;
        }
        if (!strncmp(c, "set logging file ", 17))
                return write_at(sc, idx, c + 17, depth);
        if (!strncmp(c, "platform shell ", 15)) /* lldb */
                return text_at(sc, idx, c + 15, depth, "lldb runs a command that cannot be known");
        if (!strncmp(c, "script ", 7)) /* lldb */
                return scan_code(sc, "python", c + 7, idx, depth + 1);
        if (strstr(c, "system(") || strstr(c, "execl(") || strstr(c, "popen(")) {
                char *lit = first_literal(strchr(c, '('));
                if (lit)
                        text_at(sc, idx, lit, depth, "gdb runs a command that cannot be known");
                else
                        uw_unknown(sc, idx, "gdb calls a command that cannot be known");
                free(lit);
        }
}

static void h_gdb(struct scan *sc, size_t idx, int depth)
{
        size_t n = argc_of(sc, idx);
        for (size_t k = 1; k < n; k++) {
                char **a = argv_of(sc, idx);
                const char *o = a[k], *cmd = NULL;
                if ((!strcmp(o, "-ex") || !strcmp(o, "--ex") || !strcmp(o, "-iex") || !strcmp(o, "--iex") ||
                     !strcmp(o, "-eval-command") || !strcmp(o, "--eval-command") || !strcmp(o, "-o") ||
                     !strcmp(o, "--one-line") || !strcmp(o, "-O") || !strcmp(o, "--one-line-before-file")) &&
                    k + 1 < n)
                        cmd = a[++k];
                else if (!strncmp(o, "--eval-command=", 15))
                        cmd = o + 15;
                else if (!strcmp(o, "--args") || !strcmp(o, "-args")) {
                        run_words(sc, idx, k + 1, depth);
                        return;
                }
                if (cmd) {
                        char *copy = xstrdup(cmd);
                        gdb_cmd(sc, idx, copy, depth);
                        free(copy);
                }
        }
        const char *in = sc->cmds[idx].stdin_text;
        if (in) {
                char *copy = xstrdup(in), *save = NULL;
                for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                        gdb_cmd(sc, idx, l, depth);
                free(copy);
        }
}

/* ---- terminal multiplexers and session recorders ---- */

static void h_tmux(struct scan *sc, size_t idx, int depth)
{
        static const char *const make[] = {"new-session", "new", "new-window", "neww", "split-window",
                                           "splitw",
                                           "respawn-pane", "respawnp", "respawn-window", "respawnw",
                                           "run-shell", "run", "display-popup", "popup", "pipe-pane", "pipep",
                                           "if-shell", "if", NULL};
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx), k = 1;
        while (k < n && a[k][0] == '-') {
                if (!strcmp(a[k], "-c") && k + 1 < n)
                        return text_at(sc, idx, a[k + 1], depth, "tmux runs a command that cannot be known");
                k += strchr("LSfT", a[k][1]) && !a[k][2] ? 2 : 1;
        }
        if (k >= n) {
                if (!sc->cmds[idx].stdin_text && sc->cmds[idx].stage == 0 && sc->cmds[idx].pipe_id >= 0)
                        uw_finding(sc, idx, "@interactive-shell", "tmux starts a shell");
                return;
        }
        /* tmux CMD [ARGS] [; CMD ...]: each command of the chain */
        while (k < n) {
                a = argv_of(sc, idx);
                size_t end = k;
                while (end < n && strcmp(a[end], ";") && strcmp(a[end], "\\;"))
                        end++;
                const char *c = a[k];
                size_t j = k + 1;
                while (j < end && a[j][0] == '-' && a[j][1]) {
                        bool val = strchr("cetnsFxylwST", a[j][1]) && !a[j][2];
                        if (!strcmp(c, "send-keys") || !strcmp(c, "send"))
                                val = strchr("tN", a[j][1]) && !a[j][2];
                        j += val ? 2 : 1;
                }
                if (uw_in(c, make) && j < end) {
                        char **w = xcalloc(end - j + 1, sizeof(char *));
                        for (size_t q = j; q < end; q++)
                                w[q - j] = a[q];
                        char *s = render_argv(w, SIZE_MAX);
                        free(w);
                        text_at(sc, idx, s, depth, "tmux runs a command that cannot be known");
                        free(s);
                } else if ((!strcmp(c, "new-session") || !strcmp(c, "new")) && j >= end &&
                           !sc->cmds[idx].stdin_text)
                        uw_finding(sc, idx, "@interactive-shell", "tmux starts a shell");
                else if (!strcmp(c, "send-keys") || !strcmp(c, "send")) { /* keys typed into a shell */
                        char *s = xstrdup("");
                        for (size_t q = j; q < end; q++) {
                                a = argv_of(sc, idx);
                                bool enter = !strcmp(a[q], "Enter") || !strcmp(a[q], "C-m") ||
                                             !strcmp(a[q], "KPEnter") || !strcmp(a[q], "C-j");
                                char *t = xasprintf("%s%s", s, enter ? "\n" : a[q]);
                                free(s);
                                s = t;
                        }
                        text_at(sc, idx, s, depth, "tmux types a command that cannot be known");
                        free(s);
                }
                k = end + 1;
        }
}

static void h_screen(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx), k = 1;
        /* listing, wiping dead sessions or the version: no shell starts */
        for (size_t j = 1; j < n && a[j][0] == '-'; j++)
                if (!strcmp(a[j], "-ls") || !strcmp(a[j], "-list") || !strcmp(a[j], "-wipe") ||
                    !strcmp(a[j], "-v") || !strcmp(a[j], "--version") || !strcmp(a[j], "--help"))
                        return;
        for (; k < n && a[k][0] == '-'; k++) {
                a = argv_of(sc, idx);
                if (!strcmp(a[k], "-Logfile") && k + 1 < n)
                        write_at(sc, idx, a[++k], depth);
                else if (!strcmp(a[k], "-X") && k + 1 < n) {
                        if (!strcmp(a[k + 1], "stuff") && k + 2 < n) {
                                char *t = xstrdup(a[k + 2]);
                                for (char *p = t; (p = strstr(p, "\\n")); p += 2)
                                        p[0] = ' ', p[1] = '\n';
                                text_at(sc, idx, t, depth, "screen types a command that cannot be known");
                                free(t);
                        } else if (!strcmp(a[k + 1], "exec") && k + 2 < n)
                                run_words(sc, idx, k + 2, depth);
                        return;
                } else if (strchr("cehpSstTx", a[k][1]) && !a[k][2] && k + 1 < n)
                        k++;
        }
        if (k < n)
                run_words(sc, idx, k, depth);
        else if (!sc->cmds[idx].stdin_text && sc->cmds[idx].stage == 0 && sc->cmds[idx].pipe_id >= 0)
                uw_finding(sc, idx, "@interactive-shell", "screen starts a shell");
}

/* script [-c CMD] [FILE]: CMD runs in a shell (without it, an interactive one); FILE is
 * written. */
static void h_script(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        const char *cmd = NULL;
        size_t k = 1;
        for (; k < n; k++) {
                a = argv_of(sc, idx);
                if ((!strcmp(a[k], "-c") || !strcmp(a[k], "--command")) && k + 1 < n)
                        cmd = a[++k];
                else if (!strncmp(a[k], "--command=", 10))
                        cmd = a[k] + 10;
                else if (a[k][0] == '-' && a[k][1] && a[k][1] != '-') {
                        /* a cluster (-qc CMD, -qfcCMD): its first option with a value ends it */
                        for (const char *c = a[k] + 1; *c; c++) {
                                if (!strchr("cEIOBTmo", *c))
                                        continue;
                                const char *v = c[1] ? c + 1 : k + 1 < n ? a[++k] : NULL;
                                if (*c == 'c')
                                        cmd = v;
                                break;
                        }
                } else if (a[k][0] != '-')
                        write_at(sc, idx, a[k], depth);
        }
        a = argv_of(sc, idx);
        if (cmd)
                text_at(sc, idx, cmd, depth, "script runs a command that cannot be known");
        else if (!sc->cmds[idx].stdin_text && sc->cmds[idx].stage == 0 && sc->cmds[idx].pipe_id >= 0)
                uw_finding(sc, idx, "@interactive-shell", "script starts a shell");
}

/* ---- package runners and scripts ---- */

/* The "scripts" of a package.json or composer.json this input wrote: each a command. */
static void json_scripts(struct scan *sc, size_t idx, const char *json, int depth)
{
        const char *s = strstr(json, "\"scripts\"");
        if (!s)
                return;
        s = strchr(s, '{');
        for (int d = 0; s && *s; s++) {
                if (*s == '{')
                        d++;
                else if (*s == '}' && --d == 0)
                        break;
                else if (*s == ':' && d == 1) {
                        const char *q = s + 1 + strspn(s + 1, " \t\n");
                        if (*q != '"')
                                continue;
                        struct strvec v = {0};
                        char *val = xmalloc(strlen(q) + 1), *o = val;
                        for (q++; *q && *q != '"'; q++)
                                *o++ = *q == '\\' && q[1] ? *++q : *q;
                        *o = 0;
                        text_at(sc, idx, val, depth, "a package script that cannot be known");
                        free(val);
                        strv_free(v.v);
                }
        }
}

static void project_file(struct scan *sc, size_t idx, const char *dir, const char *name, const char *kind,
                         int depth)
{
        char *rel = dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
        char *abs = uw_path(sc, idx, rel);
        free(rel);
        const char *t = NULL;
        for (size_t k = sc->text_files.n; abs && k >= 2 && !t; k -= 2)
                if (!strcmp(sc->text_files.v[k - 2], abs))
                        t = sc->text_files.v[k - 1];
        if (t) {
                char *copy = xstrdup(t);
                if (!strcmp(kind, "json"))
                        json_scripts(sc, idx, copy, depth);
                else
                        scan_code(sc, kind, copy, idx, depth + 1);
                free(copy);
        }
        free(abs);
}

/* npx PKG ARGS, npm exec -- PKG, npx -c STRING, and the package scripts npm/yarn/pnpm/bun
 * and composer run (from a package.json this input wrote). */
static void h_npm(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        const char *p = base_name(a[0]);
        const char *dir = NULL;
        bool exec = !strcmp(p, "npx") || !strcmp(p, "pnpx") || !strcmp(p, "bunx") || !strcmp(p, "uvx");
        size_t k = 1;
        for (; k < n && a[k][0] == '-'; k++) {
                if ((!strcmp(a[k], "-C") || !strcmp(a[k], "--prefix") || !strcmp(a[k], "--cwd") ||
                     !strcmp(a[k], "--dir") || !strcmp(a[k], "-d") || !strcmp(a[k], "--working-dir")) &&
                    k + 1 < n)
                        dir = a[++k];
                else if ((!strcmp(a[k], "-p") || !strcmp(a[k], "--package") || !strcmp(a[k], "-w") ||
                          !strcmp(a[k], "--workspace") || !strcmp(a[k], "--from") ||
                          !strcmp(a[k], "--with")) && k + 1 < n)
                        k++;
                else if ((!strcmp(a[k], "-c") || !strcmp(a[k], "--call")) && k + 1 < n)
                        return text_at(sc, idx, a[k + 1], depth, "npx -c of a command that cannot be known");
                else if (!strncmp(a[k], "--call=", 7))
                        return text_at(sc, idx, a[k] + 7, depth, "npx -c of a command that cannot be known");
        }
        if (!exec && k < n && (!strcmp(a[k], "exec") || !strcmp(a[k], "x") || !strcmp(a[k], "dlx"))) {
                exec = true;
                for (k++; k < n && a[k][0] == '-'; k++) {
                        if ((!strcmp(a[k], "-c") || !strcmp(a[k], "--call")) && k + 1 < n)
                                return text_at(sc, idx, a[k + 1], depth,
                                               "npm exec -c of a command that cannot be known");
                        if (!strcmp(a[k], "--"))
                                break;
                        if ((!strcmp(a[k], "-p") || !strcmp(a[k], "--package")) && k + 1 < n)
                                k++;
                }
                if (k < n && !strcmp(a[k], "--"))
                        k++;
        }
        if (exec) {
                if (k >= n)
                        return;
                struct strvec v = {0};
                a = argv_of(sc, idx);
                const char *at = a[k][0] == '@' ? strchr(a[k] + 1, '@') : strchr(a[k], '@');
                strvec_push(&v, at ? strndup(a[k], (size_t)(at - a[k])) : xstrdup(a[k]));
                for (size_t j = k + 1; j < n; j++)
                        strvec_push(&v, xstrdup(a[j]));
                /* a scoped package runs its own binary: @scope/name is name */
                if (v.v[0][0] == '@' && strchr(v.v[0], '/')) {
                        char *b = xstrdup(strchr(v.v[0], '/') + 1);
                        free(v.v[0]);
                        v.v[0] = b;
                }
                uw_run(sc, idx, v.v, v.n, depth);
                strv_free(v.v);
                return;
        }
        if (!strcmp(p, "composer"))
                return project_file(sc, idx, dir, "composer.json", "json", depth);
        if (!strcmp(p, "bundle") || !strcmp(p, "bundler")) {
                project_file(sc, idx, dir, "Gemfile", "ruby", depth);
                if (k < n && !strcmp(a[k], "exec"))
                        run_words(sc, idx, k + 1, depth);
                return;
        }
        project_file(sc, idx, dir, "package.json", "json", depth);
}

/* Runners: PROG SUB [OPTS] CMD ARGS runs CMD (poetry run, bundle exec, conda run ...). */
struct runner {
        const char *prog, *sub;
        struct opts o;
        int skip;          /* operands before the command */
        const char *str;   /* an option whose value is a shell string */
};

static const struct runner runners[] = {
        {"poetry", "run", {"C", LW("directory", "project")}, 0, NULL},
        {"pipenv", "run", {"", NULL}, 0, NULL},
        {"uv", "run", {"pw", LW("python", "with", "with-requirements", "directory", "project", "package",
                                "env-file",
                               "index", "extra", "group")}, 0, NULL},
        {"pdm", "run", {"p", LW("project")}, 0, NULL},
        {"hatch", "run", {"e", LW("env")}, 0, NULL},
        {"conda", "run", {"np", LW("name", "prefix", "cwd")}, 0, NULL},
        {"mamba", "run", {"np", LW("name", "prefix", "cwd")}, 0, NULL},
        {"micromamba", "run", {"np", LW("name", "prefix", "cwd")}, 0, NULL},
        {"pixi", "run", {"e", LW("environment", "manifest-path")}, 0, NULL},
        {"rbenv", "exec", {"", NULL}, 0, NULL},
        {"pyenv", "exec", {"", NULL}, 0, NULL},
        {"asdf", "exec", {"", NULL}, 0, NULL},
        {"mise", "exec", {"C", LW("cd")}, 0, NULL},
        {"mise", "x", {"C", LW("cd")}, 0, NULL},
        {"devbox", "run", {"c", LW("config")}, 0, NULL},
        {"foreman", "run", {"ed", LW("env", "root")}, 0, NULL},
        {"honcho", "run", {"e", LW("env")}, 0, NULL},
        {"toolbox", "run", {"cdr", LW("container", "distro", "release")}, 0, NULL},
        {"distrobox", "enter", {"n", LW("name")}, 0, NULL},
        {"direnv", "exec", {"", NULL}, 1, NULL},
        {"op", "run", {"", LW("env-file")}, 0, NULL},
        {"aws-vault", "exec", {"", LW("duration", "region")}, 1, NULL},
        {"doppler", "run", {"pc", LW("project", "config", "command")}, 0, "command"},
        {"infisical", "run", {"", LW("env", "path", "projectId", "command")}, 0, "command"},
        {"chamber", "exec", {"", NULL}, 1, NULL},
        {"perf", "record", {"eoFcCpt", LW("event", "output", "freq", "count", "cpu", "pid", "tid")}, 0, NULL},
        {"perf", "stat", {"eoCprx", LW("event", "output", "cpu", "pid", "repeat")}, 0, NULL},
        {"perf", "trace", {"eopt", LW("event", "output", "pid", "tid")}, 0, NULL},
        {"rr", "record", {"", NULL}, 0, NULL},
        {"nix", "develop", {"", LW("command")}, 0, NULL},
        {"nix", "shell", {"", LW("command")}, 0, NULL},
        {"cargo", "watch", {"xswi", LW("exec", "shell", "watch", "ignore")}, 0, "shell"},
        {"systemd-nspawn", NULL, {"DMuUS", LW("directory", "machine", "user", "image", "bind", "bind-ro",
                                              "setenv")}, 0, NULL},
};

static void h_runner(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        const char *p = base_name(a[0]);
        for (size_t r = 0; r < ARRAY_SIZE(runners); r++) {
                const struct runner *R = &runners[r];
                if (strcmp(R->prog, p))
                        continue;
                size_t k = 1;
                if (R->sub) {
                        while (k < n && a[k][0] == '-')
                                k++;
                        if (k >= n || strcmp(a[k], R->sub))
                                continue;
                        k++;
                }
                size_t j = uw_skip_opts(a, n, k, &R->o);
                for (size_t q = k; q < j && q < n; q++) {
                        const char *o = a[q];
                        if ((!strcmp(o, "-c") || !strcmp(o, "--command")) && !strcmp(R->prog, "nix") &&
                            q + 1 < n)
                                return run_words(sc, idx, q + 1, depth);
                        if (R->str && o[0] == '-' && o[1] == '-' && !strncmp(o + 2, R->str, strlen(R->str))) {
                                const char *v = o[2 + strlen(R->str)] == '=' ? o + 3 + strlen(R->str)
                                                : q + 1 < n                  ? a[q + 1]
                                                                             : NULL;
                                if (v)
                                        return text_at(sc, idx, v, depth,
                                                       "a runner runs a command that cannot be known");
                        }
                }
                j += (size_t)R->skip;
                if (j < n)
                        run_words(sc, idx, j, depth);
                return;
        }
}

/* String runners: each argument (concurrently, hyperfine, pee) or one option's value
 * (nix-shell --run, nodemon --exec, sops exec-env FILE CMD, watchexec) is a shell string. */
static void h_strings(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        const char *p = base_name(a[0]);
        if (!strcmp(p, "concurrently") || !strcmp(p, "hyperfine") || !strcmp(p, "pee") ||
            !strcmp(p, "npm-run-all")) {
                for (size_t k = 1; k < argc_of(sc, idx); k++) {
                        a = argv_of(sc, idx);
                        if (a[k][0] == '-') {
                                if (strchr(a[k], '=') == NULL &&
                                    (!strcmp(a[k], "-n") || !strcmp(a[k], "--names") ||
                                                                 !strcmp(a[k], "-c") || !strcmp(a[k], "-w") ||
                                                                 !strcmp(a[k], "--warmup") ||
                                                                 !strcmp(a[k], "-r") ||
                                                                 !strcmp(a[k], "--runs") ||
                                                                 !strcmp(a[k], "-p") ||
                                                                 !strcmp(a[k], "--prepare") ||
                                                                 !strcmp(a[k], "--export-json") ||
                                                                 !strcmp(a[k], "--export-markdown")))
                                        k++;
                                continue;
                        }
                        if (strcmp(p, "npm-run-all"))
                                text_at(sc, idx, a[k], depth, "runs a command that cannot be known");
                }
                return;
        }
        if (!strcmp(p, "sops")) {
                for (size_t k = 1; k + 2 < n; k++)
                        if (!strcmp(a[k], "exec-env") || !strcmp(a[k], "exec-file"))
                                return text_at(sc, idx, a[k + 2], depth,
                                               "sops runs a command that cannot be known");
                return;
        }
        for (size_t k = 1; k < n; k++) {
                a = argv_of(sc, idx);
                const char *o = a[k], *v = NULL;
                if ((!strcmp(o, "--run") || !strcmp(o, "--command") || !strcmp(o, "-x") ||
                     !strcmp(o, "--exec") || !strcmp(o, "-s") || !strcmp(o, "--shell")) &&
                    k + 1 < n)
                        v = a[++k];
                else if (!strncmp(o, "--run=", 6) || !strncmp(o, "--exec=", 7) ||
                         !strncmp(o, "--command=", 10))
                        v = strchr(o, '=') + 1;
                else if (!strcmp(o, "--") &&
                         (!strcmp(p, "watchexec") || !strcmp(p, "entr") || !strcmp(p, "reflex")))
                        return text_words(sc, idx, k + 1, depth, "runs a command that cannot be known");
                if (v)
                        text_at(sc, idx, v, depth, "runs a command that cannot be known");
        }
        if (!strcmp(p, "entr")) { /* entr [-opts] CMD ARGS */
                size_t k = 1;
                while (k < n && a[k][0] == '-')
                        k++;
                run_words(sc, idx, k, depth);
        }
}

/* rimraf, del-cli and trash-like tools delete recursively: as rm -r -f. */
static void h_rimraf(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        struct strvec v = {0};
        strvec_push(&v, xstrdup("rm"));
        strvec_push(&v, xstrdup("-r"));
        strvec_push(&v, xstrdup("-f"));
        for (size_t k = 1; k < n; k++)
                if (a[k][0] != '-')
                        strvec_push(&v, xstrdup(a[k]));
        if (v.n > 3)
                uw_run(sc, idx, v.v, v.n, depth);
        strv_free(v.v);
}

/* docker/podman run -v SRC:DST, --mount source=SRC: the container reads SRC (judged as
 * cat: a secret mounted in is a secret read). */
static void h_docker(struct scan *sc, size_t idx, int depth)
{
        size_t n = argc_of(sc, idx);
        for (size_t k = 1; k < n; k++) {
                char **a = argv_of(sc, idx);
                const char *v = NULL;
                if ((!strcmp(a[k], "-v") || !strcmp(a[k], "--volume")) && k + 1 < n)
                        v = a[++k];
                else if (!strncmp(a[k], "--volume=", 9))
                        v = a[k] + 9;
                else if (!strncmp(a[k], "-v", 2) && a[k][2] && a[k][1] != '-')
                        v = a[k] + 2;
                if (v && (v[0] == '/' || v[0] == '.' || v[0] == '~' || v[0] == UNK)) {
                        char *src = strndup(v, strcspn(v, ":"));
                        if (src && strcmp(src, "/"))
                                read_at(sc, idx, src, depth);
                        free(src);
                }
                const char *m = !strncmp(a[k], "--mount", 7) ? (a[k][7] == '=' ? a[k] + 8
                                                                : k + 1 < n    ? a[k + 1]
                                                                               : NULL)
                                                             : NULL;
                const char *s = m ? strstr(m, "source=")    ? strstr(m, "source=") + 7
                                        : strstr(m, "src=") ? strstr(m, "src=") + 4
                                                            : NULL
                                  : NULL;
                if (s) {
                        char *src = strndup(s, strcspn(s, ","));
                        if (src && strcmp(src, "/"))
                                read_at(sc, idx, src, depth);
                        free(src);
                }
        }
}

/* ---- libraries loaded into a program ---- */

/* A library from a system library directory or the workspace is a build's own; one from
 * anywhere else (a temporary or placeholder path, another user's files) is refused. */
void tool_lib_load(struct scan *sc, size_t idx, const char *lib)
{
        if (has_unk(lib))
                return uw_finding(sc, idx, "@unknown-command", "loads a library that cannot be known");
        char *abs = uw_path(sc, idx, lib);
        if (!abs)
                return;
        static const char *const ok[] = {"/usr/lib",       "/lib",       "/usr/lib64", "/lib64",
                                         "/usr/local/lib", "/nix/store", "/opt",       "/usr/libexec"};
        bool fine = path_is_within(abs, sc->ctx->workspace);
        for (size_t k = 0; k < ARRAY_SIZE(ok) && !fine; k++)
                fine = path_is_within(abs, ok[k]);
        if (!fine)
                uw_finding(sc, idx, "@library-load", abs);
        free(abs);
}

static void h_libs(struct scan *sc, size_t idx, int depth)
{
        (void)depth;
        size_t n = argc_of(sc, idx);
        const char *p = base_name(argv_of(sc, idx)[0]);
        for (size_t k = 1; k < n; k++) {
                char **a = argv_of(sc, idx);
                const char *o = a[k], *lib = NULL;
                if (!strcmp(p, "curl") && !strcmp(o, "--engine") && k + 1 < n && strcmp(a[k + 1], "list"))
                        lib = a[k + 1];
                else if (!strcmp(p, "openssl") && (!strcmp(o, "-engine") || !strcmp(o, "-provider")) &&
                         k + 1 < n)
                        lib = a[k + 1];
                else if (!strcmp(p, "ssh-keygen") && (!strcmp(o, "-D")) && k + 1 < n)
                        lib = a[k + 1];
                else if ((!strcmp(p, "mysql") || !strcmp(p, "mariadb")) && !strncmp(o, "--default-auth=", 15))
                        lib = o + 15;
                else if ((!strcmp(p, "mysql") || !strcmp(p, "mariadb")) && !strncmp(o, "--plugin-dir=", 13))
                        lib = o + 13;
                else if ((!strcmp(p, "mysql") || !strcmp(p, "mariadb")) &&
                         (!strcmp(o, "--default-auth") || !strcmp(o, "--plugin-dir")) && k + 1 < n)
                        lib = a[k + 1];
                else if (!strcmp(p, "enable") && !strcmp(o, "-f") && k + 1 < n)
                        lib = a[k + 1];
                else if (!strcmp(p, "ffmpeg") && strstr(o, "ladspa=file="))
                        lib = strstr(o, "ladspa=file=") + 12;
                if (lib) {
                        char *l = strndup(lib, strcspn(lib, ":,"));
                        if (l)
                                tool_lib_load(sc, idx, l);
                        free(l);
                }
        }
}

/* ---- killing processes picked from the machine's process list by a daemon's name ---- */

static const char *const daemons[] = {
        "sshd", "init", "systemd", "dockerd", "containerd", "containerd-shim", "docker-proxy",
        "docker-containerd-shim", "runc", "kubelet", "kube-apiserver", "kube-proxy", "etcd", "NetworkManager",
        "wpa_supplicant", "cron", "crond", "rsyslogd", "syslogd", "systemd-journald", "journald",
        "dbus-daemon", "dbus-broker", "Xorg", "Xwayland", "sssd", "gdm", "gdm3", "lightdm", "sddm", "cupsd",
        "bluetoothd", "avahi-daemon", "ntpd", "chronyd", "firewalld", "polkitd", "udevd", "systemd-udevd",
        "snapd", "agetty", "auditd", "atd", "nginx", "apache2", "httpd", "mysqld", "mariadbd", "postgres",
        "postmaster", "redis-server", "mongod", "memcached", "ModemManager", "accounts-daemon", "gnome-shell",
        "plasmashell", "sshd:", "systemd-logind", "systemd-networkd", "systemd-resolved", "named", "dnsmasq",
        "haproxy", "php-fpm", "supervisord", "rabbitmq-server", "elasticsearch", "zookeeper", "kafka", NULL};

static bool names_daemon(const char *w)
{
        char tok[64];
        for (const char *s = w; *s;) {
                size_t l = 0;
                while (s[l] && (isalnum((unsigned char)s[l]) || s[l] == '-' || s[l] == '_'))
                        l++;
                if (l && l < sizeof(tok)) {
                        memcpy(tok, s, l);
                        tok[l] = 0;
                        if (uw_in(tok, daemons))
                                return true;
                }
                s += l ? l : 1;
        }
        return false;
}

/* kill $pid where the PIDs come from a look at every process (ps -e, pgrep, pidof) and a
 * daemon's name is what picks them: as pkill of the daemon. */
static void h_kill(struct scan *sc, size_t idx, int depth)
{
        (void)depth;
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        bool unknown = false;
        for (size_t k = 1; k < n; k++)
                unknown |= has_unk(a[k]);
        if (!unknown)
                return;
        bool lookup = false, daemon = false;
        for (size_t k = 0; k < sc->n && !(lookup && daemon); k++) {
                const struct scmd *c = &sc->cmds[k];
                if (!c->argv.n || c->argv.v[0][0] == '@')
                        continue;
                const char *p = base_name(c->argv.v[0]);
                lookup |= !strcmp(p, "ps") || !strcmp(p, "pgrep") || !strcmp(p, "pidof") ||
                          !strcmp(p, "pstree") || !strcmp(p, "lsof") || !strcmp(p, "top");
                for (size_t j = 1; j < c->argv.n && !daemon; j++)
                        daemon |= names_daemon(c->argv.v[j]);
        }
        if (lookup && daemon)
                uw_finding(sc, idx, "@kill-daemon", "kills processes found by a system daemon's name");
}

static void h_run_parts(struct scan *sc, size_t idx, int depth)
{
        (void)depth;
        char **a = argv_of(sc, idx);
        for (size_t k = 1; k < argc_of(sc, idx); k++)
                if (!strcmp(a[k], "--test") || !strcmp(a[k], "--list"))
                        return;
        uw_finding(sc, idx, "@unknown-command", "run-parts runs every program in a directory");
}

/* man -P PAGER / --pager=PAGER, journalctl etc. take their pager from PAGER (parse.c). */
static void h_man(struct scan *sc, size_t idx, int depth)
{
        size_t n = argc_of(sc, idx);
        for (size_t k = 1; k < n; k++) {
                char **a = argv_of(sc, idx);
                const char *v = NULL;
                if ((!strcmp(a[k], "-P") || !strcmp(a[k], "--pager") || !strcmp(a[k], "-H") ||
                     !strcmp(a[k], "--html")) &&
                    k + 1 < n)
                        v = a[++k];
                else if (!strncmp(a[k], "--pager=", 8) || !strncmp(a[k], "--html=", 7))
                        v = strchr(a[k], '=') + 1;
                if (v)
                        text_at(sc, idx, v, depth, "man runs a pager that cannot be known");
        }
}

struct tool {
        const char *name;
        handler_fn *fn;
};

static const struct tool tools[] = {
        {"git", h_git},         {"vim", h_vim},           {"vi", h_vim},          {"nvim", h_vim},
        {"view", h_vim},        {"vimdiff", h_vim},       {"gvim", h_vim},        {"rvim", h_vim},
        {"ex", h_vim},          {"rview", h_vim},         {"nvi", h_vim},         {"elvis", h_vim},
        {"vim.basic", h_vim},   {"vim.tiny", h_vim},      {"ed", h_ed},           {"red", h_ed},
        {"emacs", h_emacs},     {"emacsclient", h_emacs}, {"nano", h_editor},     {"pico", h_editor},
        {"joe", h_editor},      {"micro", h_editor},      {"mcedit", h_editor},   {"kak", h_editor},
        {"hx", h_editor},       {"helix", h_editor},      {"jed", h_editor},      {"ne", h_editor},
        {"mg", h_editor},       {"sed", h_sed},           {"gsed", h_sed},        {"gdb", h_gdb},
        {"lldb", h_gdb},        {"cgdb", h_gdb},          {"tmux", h_tmux},       {"screen", h_screen},
        {"script", h_script},   {"npx", h_npm},           {"pnpx", h_npm},        {"bunx", h_npm},
        {"uvx", h_npm},         {"npm", h_npm},           {"pnpm", h_npm},        {"yarn", h_npm},
        {"composer", h_npm},    {"bundle", h_npm},        {"bundler", h_npm},     {"poetry", h_runner},
        {"pipenv", h_runner},   {"uv", h_runner},         {"pdm", h_runner},      {"hatch", h_runner},
        {"conda", h_runner},    {"mamba", h_runner},      {"micromamba", h_runner}, {"pixi", h_runner},
        {"rbenv", h_runner},    {"pyenv", h_runner},      {"asdf", h_runner},     {"mise", h_runner},
        {"devbox", h_runner},   {"foreman", h_runner},    {"honcho", h_runner},   {"toolbox", h_runner},
        {"distrobox", h_runner}, {"direnv", h_runner},    {"op", h_runner},       {"aws-vault", h_runner},
        {"doppler", h_runner},  {"infisical", h_runner},  {"chamber", h_runner},  {"perf", h_runner},
        {"rr", h_runner},       {"nix", h_runner},        {"cargo", h_runner},
        {"systemd-nspawn", h_runner}, {"nix-shell", h_strings}, {"nodemon", h_strings},
        {"watchexec", h_strings}, {"entr", h_strings}, {"reflex", h_strings},  {"concurrently", h_strings},
        {"hyperfine", h_strings}, {"pee", h_strings}, {"sops", h_strings},    {"dotenv", h_strings},
        {"rimraf", h_rimraf},   {"del-cli", h_rimraf}, {"docker", h_docker},   {"podman", h_docker},
        {"nerdctl", h_docker},  {"curl", h_libs}, {"openssl", h_libs},    {"ssh-keygen", h_libs},
        {"enable", h_libs},     {"ffmpeg", h_libs}, {"kill", h_kill},       {"pkill", h_kill},
        {"killall", h_kill},    {"run-parts", h_run_parts}, {"man", h_man},
};

handler_fn *tool_handler(const char *prog)
{
        for (size_t k = 0; k < ARRAY_SIZE(tools); k++)
                if (!strcmp(prog, tools[k].name))
                        return tools[k].fn;
        if (!strcmp(prog, "mysql") || !strcmp(prog, "mariadb"))
                return h_libs;
        return NULL;
}

/* ---- programs' own output options ---- */

struct outopt {
        const char *prog;
        const char *const *opts; /* options whose value is a file it writes */
        int operand;             /* the operand it writes (1-based), -1 the last, 0 none */
};

static const struct outopt outopts[] = {
        {"sort", LW("-o", "--output"), 0},
        {"uniq", LW("\x01"), 2},
        {"iconv", LW("-o", "--output"), 0},
        {"shuf", LW("-o", "--output"), 0},
        {"openssl", LW("-out", "-keyout"), 0},
        {"gcc", LW("-o"), 0}, {"cc", LW("-o"), 0}, {"g++", LW("-o"), 0}, {"c++", LW("-o"), 0},
        {"clang", LW("-o"), 0}, {"clang++", LW("-o"), 0}, {"ld", LW("-o"), 0}, {"as", LW("-o"), 0},
        {"tcc", LW("-o"), 0}, {"rustc", LW("-o"), 0}, {"go", LW("-o"), 0}, {"gfortran", LW("-o"), 0},
        {"tsc", LW("--outFile", "--outDir", "--out"), 0},
        {"pandoc", LW("-o", "--output"), 0},
        {"gtester", LW("-o"), 0},
        {"nmap", LW("-oN", "-oX", "-oG", "-oA", "-oS"), 0},
        {"mypy", LW("--junit-xml", "--html-report", "--txt-report", "--xml-report", "--linecount-report"), 0},
        {"exiftool", LW("-o", "-W", "-w"), 0},
        {"wget", LW("-o", "--output-file", "-a", "--append-output"), 0},
        {"curl", LW("--trace", "--trace-ascii", "-D", "--dump-header", "-c", "--cookie-jar", "--libcurl",
                    "--stderr"), 0},
        {"strace", LW("-o", "--output"), 0},
        {"ltrace", LW("-o", "--output"), 0},
        {"rlwrap", LW("-l", "--logfile"), 0},
        {"tcpdump", LW("-w"), 0},
        {"dmidecode", LW("--dump-bin"), 0},
        {"check_log", LW("-O"), 0},
        {"logrotate", LW("-l", "--log", "-s", "--state"), 0},
        {"iptables-save", LW("-f", "--file"), 0},
        {"ip6tables-save", LW("-f", "--file"), 0},
        {"xxd", LW("\x01"), 2},
        {"csplit", LW("-f", "--prefix"), 0},
        {"gpg", LW("-o", "--output"), 0},
        {"lwp-download", LW("\x01"), 2},
        {"ffmpeg", LW("\x01"), -1},
        {"convert", LW("\x01"), -1},
        {"magick", LW("\x01"), -1},
        {"cpio", LW("-F", "--file", "-O"), 0},
        {"base64", LW("-o", "--output"), 0},
        {"zip", LW("\x01"), 1},
        {"sqlite3", LW("\x01"), 0},
        {"varnishncsa", LW("-w"), 0},
        {"sponge", LW("\x01"), 1},
        {"dd", LW("\x01"), 0},
        {"dos2unix", LW("-n", "--newfile"), 0},
        {"unix2dos", LW("-n", "--newfile"), 0},
        {"mac2unix", LW("-n", "--newfile"), 0},
        {"tar", LW("-C", "--directory"), 0},
        {"unzip", LW("-d"), 0},
        {"7z", LW("\x01"), 0},
};

static bool opt_is(const char *a, const char *o, const char **attached)
{
        size_t l = strlen(o);
        *attached = NULL;
        if (!strcmp(a, o))
                return true;
        if (!strncmp(a, o, l) && a[l] == '=') {
                *attached = a + l + 1;
                return true;
        }
        /* -oFILE, -oG=FILE (nmap) */
        if (o[0] == '-' && o[1] != '-' && !strncmp(a, o, l) && a[l] && strlen(o) <= 3) {
                *attached = a + l + (a[l] == '=');
                return true;
        }
        return false;
}

void tool_outputs(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        if (!n || a[0][0] == '@')
                return;
        const char *p = base_name(a[0]);
        const struct outopt *t = NULL;
        for (size_t k = 0; k < ARRAY_SIZE(outopts) && !t; k++)
                if (!strcmp(outopts[k].prog, p))
                        t = &outopts[k];
        if (!t)
                return;
        /* the tar/unzip/7z destination only when it extracts */
        bool extract = !strcmp(p, "unzip") || !strcmp(p, "7z");
        if (!strcmp(p, "tar"))
                for (size_t k = 1; k < n; k++)
                        extract |= (a[k][0] != '-' && k == 1 && strchr(a[k], 'x')) ||
                                   (a[k][0] == '-' && a[k][1] != '-' && strchr(a[k], 'x')) ||
                                   !strcmp(a[k], "--extract") || !strcmp(a[k], "--get");
        if ((!strcmp(p, "tar") || !strcmp(p, "unzip")) && !extract)
                return;
        struct strvec out = {0};
        size_t operand = 0;
        const char *last = NULL;
        for (size_t k = 1; k < n; k++) {
                const char *w = a[k], *att;
                bool hit = false;
                for (const char *const *o = t->opts; *o && !hit; o++)
                        if ((*o)[0] != '\x01' && opt_is(w, *o, &att)) {
                                hit = true;
                                if (att && *att)
                                        strvec_push(&out, xstrdup(att));
                                else if (k + 1 < n) {
                                        /* dos2unix -n IN OUT: the second is written */
                                        if (!strcmp(*o, "-n") || !strcmp(*o, "--newfile"))
                                                k++;
                                        if (k + 1 < n)
                                                strvec_push(&out, xstrdup(a[++k]));
                                }
                        }
                if (hit)
                        continue;
                if (!strcmp(p, "dd") && !strncmp(w, "of=", 3))
                        strvec_push(&out, xstrdup(w + 3));
                else if (!strcmp(p, "7z") && !strncmp(w, "-o", 2) && w[2])
                        strvec_push(&out, xstrdup(w + 2));
                else if (!strcmp(p, "exiftool") &&
                         (!strncasecmp(w, "-filename=", 10) || !strncasecmp(w, "-directory=", 11)))
                        strvec_push(&out, xstrdup(strchr(w, '=') + 1));
                else if (!strcmp(p, "sqlite3") && (strstr(w, ".output ") || strstr(w, ".once ") ||
                                                   strstr(w, ".save ") || strstr(w, ".backup "))) {
                        const char *f = strchr(strstr(w, "."), ' ') + 1;
                        strvec_push(&out, strndup(f, strcspn(f, " \n;")));
                } else if (w[0] != '-' || !w[1]) {
                        operand++;
                        last = w;
                        if (t->operand > 0 && (int)operand == t->operand)
                                strvec_push(&out, xstrdup(w));
                }
        }
        if (t->operand < 0 && last && operand > 1)
                strvec_push(&out, xstrdup(last));
        for (size_t k = 0; k < out.n; k++) {
                bool dir = !strcmp(p, "tar") || !strcmp(p, "unzip") || !strcmp(p, "7z") || !strcmp(p, "tsc");
                char *w = dir ? xasprintf("%s/" UNK_S, out.v[k]) : xstrdup(out.v[k]);
                if (strcmp(w, "-") && strcmp(w, "/dev/stdout") && strcmp(w, "/dev/null"))
                        write_at(sc, idx, w, depth);
                free(w);
        }
        strv_free(out.v);
}

/* ---- unknown programs that take a command ---- */

/* Programs an argument list can hand a command to; a word naming one is the start of a
 * command a program not modelled here may run (frobnicate --retry 3 rm -rf ~). */
static const char *const runnable[] = {
        "rm", "rmdir", "unlink", "shred", "srm", "wipe", "dd", "mkfs", "fdisk", "parted", "wipefs", "chmod",
        "chown", "chgrp", "chattr", "mv", "cp", "ln", "install", "tee", "truncate", "sh", "bash", "dash",
        "zsh", "ksh", "fish", "csh", "tcsh", "su", "sudo", "doas", "python", "python3", "perl", "ruby",
        "node", "php", "lua", "curl", "wget", "nc", "ncat", "netcat", "socat", "git", "kill", "pkill",
        "killall", "shutdown", "reboot", "halt", "poweroff", "systemctl", "service", "crontab", "iptables",
        "nft", "ufw", "mount", "umount", "find", "xargs", "env", "eval", "docker", "podman", "kubectl",
        "helm", "terraform", "aws", "gcloud", "az", "psql", "mysql", "sqlite3", "redis-cli", "mongo",
        "mongosh", "dropdb", "scp", "rsync", "useradd", "userdel", "passwd", "usermod", "visudo", "setcap",
        "insmod", "rmmod", "modprobe", "sysctl", "chroot", "/bin/sh", "/bin/bash", "/bin/rm", NULL};

/* Programs whose arguments are text, patterns, names or packages, never a command. */
static const char *const plain[] = {
        "echo", "printf", "which", "type", "whereis", "man", "info", "help", "apropos", "whatis", "grep",
        "egrep", "fgrep", "rg", "ag", "ack", "cut", "sort", "uniq", "wc", "head", "tail", "cat", "less",
        "more", "ls", "test", "[", "[[", "file", "stat", "du", "df", "basename", "dirname", "realpath",
        "readlink", "jq", "yq", "diff", "cmp", "comm", "tr", "fold", "fmt", "column", "ps", "pgrep", "pidof",
        "lsof", "apt", "apt-get", "apt-cache", "dpkg", "yum", "dnf", "brew", "pacman", "snap", "pip", "pip3",
        "gem", "go", "rustup", "logger", "notify-send", "figlet", "cowsay", "tldr", "complete", "compgen",
        "history", "hash", "declare", "local", "export", "readonly", "alias", "unalias", "unset", "set",
        "read", "mapfile", "printenv", "id", "whoami", "groups", "getent", "date", "touch", "mkdir", "gh",
        "glab", "hub", "tar", "zip", "unzip", "gzip", "md5sum", "sha256sum", "sha1sum", "b2sum", "xxd", "od",
        "hexdump", "strings", "nl", "expand", "paste", "join", "seq", "yes", "sleep", "true", "false", ":",
        "cd", "pushd", "popd", "dirs", "wait", "jobs", "fg", "bg", "disown", "exit", "return", "break",
        "continue", "shift", "getopts", "let", "ulimit", "umask", "shopt", "bind", "caller", "times", "trap",
        "kill", "[", "clear", "tput", "stty", "reset", "column", "look", "spell", "aspell", "locate",
        "updatedb", "hostname", "uname", "arch", "nproc", "free", "uptime", "w", "who", "last", "dmesg",
        "journalctl", "lsblk", "blkid", "lscpu", "lspci", "lsusb", "ip", "ifconfig", "ss", "netstat", "ping",
        "traceroute", "dig", "nslookup", "host", "systemd-analyze", "npm", "pnpm", "yarn", "cargo", "mvn",
        "gradle", "dotnet", "composer", "pytest", "tox", "nox", "ruff", "black", "flake8", "pylint", "mypy",
        "eslint", "prettier", "tsc", "jest", "vitest", "mocha", "make", "cmake", "ninja", "meson", "bazel",
        "gcc", "cc", "g++", "clang", "clang++", "rustc", "javac", "java", "kotlin", "scala", "swift", "zig",
        "nim", "crystal", "ghc", "stack", "cabal", "elixir", "mix", "erl", "pio", "helm", "kubectl", "docker",
        "podman", "terraform", "ansible", "ansible-playbook", "vagrant", NULL};

static bool runnable_word(const char *w)
{
        return uw_in(w, runnable) || uw_in(base_name(w), runnable);
}

void tool_generic(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        const char *p = base_name(a[0]);
        if (uw_in(p, plain) || a[0][0] == '@')
                return;
        static const char *const cmd_opts[] = {"-c", "--command", "--cmd", "--exec", "--execute", "--run",
                                               "--shell-command", "--exec-command", "--command-line",
                                               "--hook", "--on-change", "--on-success", "--on-failure",
                                               "--pre-command", "--post-command", "--eval", NULL};
        for (size_t k = 1; k < n; k++) {
                a = argv_of(sc, idx);
                const char *w = a[k], *v = NULL;
                if (uw_in(w, cmd_opts) && k + 1 < n)
                        v = a[k + 1];
                else if (w[0] == '-' && w[1] == '-' && strchr(w, '=')) {
                        char *o = strndup(w, (size_t)(strchr(w, '=') - w));
                        if (o && uw_in(o, cmd_opts))
                                v = strchr(w, '=') + 1;
                        free(o);
                }
                if (v) {
                        char first[64];
                        snprintf(first, sizeof(first), "%.*s", (int)strcspn(v, " \t;|&"), v);
                        if (runnable_word(first) || strstr(v, "&&") || strstr(v, "; "))
                                return text_at(sc, idx, v, depth, "runs a command that cannot be known");
                }
                if (w[0] != '-' && runnable_word(w))
                        return run_words(sc, idx, k, depth);
                if (!strcmp(w, "--") && k + 1 < n && runnable_word(a[k + 1]))
                        return run_words(sc, idx, k + 1, depth);
        }
}
