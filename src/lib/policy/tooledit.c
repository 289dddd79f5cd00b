/* Programs that take commands in a language of their own: vim's ex commands (-c, +cmd)
 * and other editors' files, emacs --eval lisp, ed scripts, sed's e and w commands, gdb's
 * and lldb's shell, pipe, python and dump commands, m4's syscmd and esyscmd.  Each is read for the commands that
 * run a program or write a file, judged as those would be.  Their table is looked up by
 * tool_handler (tools.c). */
#define _GNU_SOURCE
#include "policy/feeds.h"
#include "policy/tools.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"

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
                return tool_text_at(sc, idx, c + 1, depth, "an editor runs a command that cannot be known");
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
                        return tool_text_at(sc, idx, rest, depth,
                                            "an editor runs a command that cannot be known");
                return uw_finding(sc, idx, "@interactive-shell", "an editor starts a shell");
        }
        if ((!strcmp(word, "r") || !strcmp(word, "read") || !strcmp(word, "w") || !strcmp(word, "write")) &&
            rest[0] == '!')
                return tool_text_at(sc, idx, rest + 1, depth,
                                    "an editor runs a command that cannot be known");
        if ((!strcmp(word, "w") || !strcmp(word, "write") || !strcmp(word, "wq") || !strcmp(word, "x") ||
             !strcmp(word, "sav") || !strcmp(word, "saveas") || !strcmp(word, "up") ||
             !strcmp(word, "update")) &&
            *rest && rest[0] != '!')
                return tool_write_at(sc, idx, rest, depth);
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
                        tool_text_at(sc, idx, lit, depth, "an editor runs a command that cannot be known");
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
                                tool_write_at(sc, idx, a[k + 1], depth);
                        k++;
                } else if (!strcmp(o, "-R") || !strcmp(o, "-M"))
                        ro = true;
                else if (o[0] != '-' && o[0] != '+' && !ro && !dir_name(o))
                        tool_write_at(sc, idx, o, depth); /* a file opened to edit */
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
                        tool_write_at(sc, idx, a[k], depth);
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
                                tool_text_at(sc, idx, lit, depth,
                                             "emacs runs a command that cannot be known");
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
                        tool_write_at(sc, idx, a[k], depth);
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
                        tool_write_at(sc, idx, a[k], depth);
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
                                        tool_write_at(sc, idx, f, depth);
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
                                tool_text_at(sc, idx, arg, depth, "sed runs a command that cannot be known");
                        else if (c == 'e')
                                uw_finding(sc, idx, "@unknown-command", "sed runs its text as a command");
                        else if ((c == 'w' || c == 'W') && *arg)
                                tool_write_at(sc, idx, arg, depth);
                        else if (*arg)
                                tool_read_at(sc, idx, arg, depth);
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
                return tool_text_at(sc, idx, c + 1, depth, "gdb runs a command that cannot be known");
        if (!strncmp(c, "shell", 5) && (!c[5] || isspace((unsigned char)c[5]))) {
                if (!c[5 + strspn(c + 5, " \t")])
                        return uw_finding(sc, idx, "@interactive-shell", "gdb starts a shell");
                return tool_text_at(sc, idx, c + 5, depth, "gdb runs a command that cannot be known");
        }
        if (!strncmp(c, "pipe ", 5)) {
                const char *bar = strchr(c, '|');
                if (bar)
                        tool_text_at(sc, idx, bar + 1, depth, "gdb runs a command that cannot be known");
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
                        tool_write_at(sc, idx, w, depth);
                free(copy);
                return;
        }
        if (!strncmp(c, "set logging file ", 17))
                return tool_write_at(sc, idx, c + 17, depth);
        if (!strncmp(c, "platform shell ", 15)) /* lldb */
                return tool_text_at(sc, idx, c + 15, depth, "lldb runs a command that cannot be known");
        if (!strncmp(c, "script ", 7)) /* lldb */
                return scan_code(sc, "python", c + 7, idx, depth + 1);
        if (strstr(c, "system(") || strstr(c, "execl(") || strstr(c, "popen(")) {
                char *lit = first_literal(strchr(c, '('));
                if (lit)
                        tool_text_at(sc, idx, lit, depth, "gdb runs a command that cannot be known");
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
                        tool_run_words(sc, idx, k + 1, depth);
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

/* ---- m4: syscmd(CMD) and esyscmd(CMD) run CMD in a shell ---- */

/* The macro text m4 reads: its input when it is known (a here-document, an echoed literal
 * piped in)
 * and the values of -D/--define.  Each syscmd/esyscmd argument runs as a shell string;
 * m4's quotes `...' are text to the shell once m4 has stripped them. */
static void m4_text(struct scan *sc, size_t idx, const char *t, int depth)
{
        for (const char *s = t; (s = strstr(s, "syscmd(")) != NULL;) {
                const char *b = s += 7;
                int level = 1;
                while (*s && level)
                        level += *s == '(' ? 1 : *s == ')' ? -1 : 0, s++;
                char *cmd = strndup(b, (size_t)(s - b) - (level ? 0 : 1));
                if (!cmd)
                        abort();
                for (char *q = cmd; *q; q++)
                        if (*q == '`' || *q == '\'')
                                *q = ' ';
                tool_text_at(sc, idx, cmd, depth, "m4 runs a command that cannot be known");
                free(cmd);
        }
}

static void h_m4(struct scan *sc, size_t idx, int depth)
{
        char *in = NULL;
        if (uw_stdin_of(sc, idx, &in) == IN_TEXT && in)
                m4_text(sc, idx, in, depth);
        free(in);
        for (size_t k = 1; k < argc_of(sc, idx); k++) {
                char **a = argv_of(sc, idx);
                if ((!strcmp(a[k], "-D") || !strcmp(a[k], "--define")) && k + 1 < argc_of(sc, idx))
                        k++;
                else if (strncmp(a[k], "-D", 2) && strncmp(a[k], "--define=", 9))
                        continue;
                char *d = xstrdup(argv_of(sc, idx)[k]);
                m4_text(sc, idx, d, depth);
                free(d);
        }
}

const struct tool tool_edit_models[] = {
        {"vim", h_vim}, {"vi", h_vim}, {"nvim", h_vim}, {"view", h_vim}, {"vimdiff", h_vim},
        {"gvim", h_vim}, {"rvim", h_vim}, {"ex", h_vim}, {"rview", h_vim}, {"nvi", h_vim}, {"elvis", h_vim},
        {"vim.basic", h_vim}, {"vim.tiny", h_vim}, {"ed", h_ed}, {"red", h_ed}, {"emacs", h_emacs},
        {"emacsclient", h_emacs}, {"nano", h_editor}, {"pico", h_editor}, {"joe", h_editor},
        {"micro", h_editor}, {"mcedit", h_editor}, {"kak", h_editor}, {"hx", h_editor}, {"helix", h_editor},
        {"jed", h_editor}, {"ne", h_editor}, {"mg", h_editor}, {"sed", h_sed}, {"gsed", h_sed},
        {"gdb", h_gdb}, {"lldb", h_gdb}, {"cgdb", h_gdb}, {"m4", h_m4}, {"gm4", h_m4}, {NULL, NULL},
};
