/* Reading a simple command (part of parse.c, see parse_int.h): blanks, comments and
 * here-documents, redirections, assignments (and what an assigned variable means to the
 * policy), function definitions and calls of them read again with their arguments.  Apart
 * from parse.c, which reads the compound commands and lists around simple commands, and
 * from parse_emit.c, which decides what the command read here runs. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"
#include "policy/parse_int.h"

/* ---- blanks, comments, here-documents ---- */

void parse_skip_blanks(struct psh *P)
{
        for (;;) {
                int c = cur(P);
                if (c == ' ' || c == '\t' || c == '\r')
                        P->i++;
                else if (c == '\\' && at(P, 1) == '\n')
                        P->i += 2;
                else
                        return;
        }
}

static void skip_comment(struct psh *P)
{
        while (cur(P) != -1 && cur(P) != '\n')
                P->i++;
}

/* Consume a newline, jumping over the here-document bodies that follow it. */
void parse_take_newline(struct psh *P)
{
        if (P->hd_active && P->i == P->hd_from) {
                P->i = P->hd_to;
                P->hd_active = false;
        } else
                P->i++;
}

void parse_skip_space(struct psh *P) /* blanks, newlines, comments */
{
        for (;;) {
                parse_skip_blanks(P);
                if (cur(P) == '#')
                        skip_comment(P);
                else if (cur(P) == '\n')
                        parse_take_newline(P);
                else
                        return;
        }
}

/* Read the body of a here-document whose delimiter was just read; returns it. */
static char *heredoc_body(struct psh *P, const char *delim, bool strip_tabs)
{
        size_t k;
        if (P->hd_active)
                k = P->hd_to;
        else {
                const char *nl = memchr(P->s + P->i, '\n', P->n - P->i);
                if (!nl) /* no body follows: bash warns and reads nothing */
                        return xstrdup("");
                P->hd_from = (size_t)(nl - P->s);
                k = P->hd_from + 1;
        }
        struct sb body = {0};
        size_t dl = strlen(delim);
        while (k < P->n) {
                const char *e = memchr(P->s + k, '\n', P->n - k);
                size_t le = e ? (size_t)(e - P->s) : P->n, ls = k;
                if (strip_tabs)
                        while (ls < le && P->s[ls] == '\t')
                                ls++;
                k = e ? le + 1 : P->n;
                if (le - ls == dl && !memcmp(P->s + ls, delim, dl))
                        break;
                sb_put(&body, P->s + ls, le - ls);
                sb_putc(&body, '\n');
        }
        P->hd_to = k;
        P->hd_active = true;
        return sb_take(&body);
}

/* ---- redirections ---- */

static bool at_redir(const struct psh *P)
{
        size_t k = P->i;
        while (k < P->n && isdigit((unsigned char)P->s[k]))
                k++;
        if (k < P->n && P->s[k] == '{') { /* {fd}>file */
                size_t j = k + 1;
                while (j < P->n && is_name_char((unsigned char)P->s[j]))
                        j++;
                if (j < P->n && P->s[j] == '}' && j + 1 < P->n && (P->s[j + 1] == '<' || P->s[j + 1] == '>'))
                        return true;
        }
        if (k < P->n && (P->s[k] == '<' || P->s[k] == '>'))
                return !(k + 1 < P->n && P->s[k + 1] == '(');
        return P->s[P->i] == '&' && P->i + 1 < P->n && P->s[P->i + 1] == '>';
}

static void parse_redir(struct psh *P, struct redirs *r)
{
        while (isdigit(cur(P)))
                P->i++;
        if (cur(P) == '{') {
                while (cur(P) != -1 && cur(P) != '}')
                        P->i++;
                P->i++;
        }
        char op[4] = {0};
        size_t k = 0;
        while (k < 3 && (cur(P) == '<' || cur(P) == '>' || cur(P) == '&' || cur(P) == '|' ||
                         (cur(P) == '-' && k && op[0] == '<' && op[1] == '<'))) {
                if (cur(P) == '|' && strcmp(op, ">"))
                        break;
                op[k++] = (char)P->s[P->i++];
        }
        parse_skip_blanks(P);
        struct word w;
        if (!parse_read_word(P, &w)) {
                free(w.b.s);
                return parse_err(P, "redirection without a target");
        }
        bool in = op[0] == '<';
        if (!strcmp(op, "<<") || !strcmp(op, "<<-")) {
                char *d = parse_word_str(&w);
                free(r->stdin_text);
                r->stdin_text = heredoc_body(P, d, op[2] == '-');
                free(d);
                return;
        }
        char *t = parse_word_str(&w);
        r->dl |= in && w.dl;
        if (!strcmp(op, "<<<")) {
                free(r->stdin_text);
                r->stdin_text = has_unk(t) || parse_has_alt(t) ? NULL : xasprintf("%s\n", t);
                free(t);
                return;
        }
        if ((!strcmp(op, ">&") || !strcmp(op, "<&")) && (isdigit((unsigned char)t[0]) || !strcmp(t, "-"))) {
                free(t); /* duplicating a descriptor opens nothing */
                return;
        }
        /* > >| &> >& truncate what they open; >> and <> do not */
        if (!in && strcmp(op, ">>") && strcmp(op, "&>>"))
                strvec_push(&r->clobbers, xstrdup(t));
        strvec_push(in && strcmp(op, "<>") ? &r->reads : &r->writes, t);
}

/* ---- simple commands ---- */

static bool is_assignment(const char *raw, size_t n)
{
        size_t k = 0;
        if (!n || !is_name_start((unsigned char)raw[0]))
                return false;
        while (k < n && is_name_char((unsigned char)raw[k]))
                k++;
        if (k < n && raw[k] == '[') /* a[i]=v */
                while (k < n && raw[k] != ']')
                        k++, k += k < n && raw[k] == ']' ? 1 : 0;
        return k < n && (raw[k] == '=' || (raw[k] == '+' && k + 1 < n && raw[k + 1] == '='));
}


/* Variables whose value a program runs as a command (PAGER=..., LESSOPEN='|cmd %s'). */
static bool command_var(const char *name, size_t nl)
{
        static const char *const vars[] = {"PAGER", "MANPAGER", "GIT_PAGER", "SYSTEMD_PAGER", "EDITOR",
                                           "VISUAL",
                                           "GIT_EDITOR", "LESSOPEN", "LESSCLOSE", "GIT_SSH_COMMAND",
                                           "GIT_SSH", "GIT_EXTERNAL_DIFF", "RESTIC_PASSWORD_COMMAND",
                                           "PERL5DB", "PROMPT_COMMAND", "BASH_ENV", "ENV", "CRASHPAGER",
                                           "SUDO_ASKPASS", "SSH_ASKPASS", "BROWSER", "GIT_ASKPASS",
                                           "GIT_SEQUENCE_EDITOR", "SVN_EDITOR", "HGEDITOR", "FCEDIT",
                                           "PSQL_PAGER", "MYSQL_PS1", "DIFFPROG", "TERMINAL",
                                           "BORG_PASSCOMMAND", "FZF_DEFAULT_COMMAND", "SYSTEMD_EDITOR",
                                           "KUBE_EDITOR", "GH_EDITOR", "GH_PAGER"};
        for (size_t k = 0; k < ARRAY_SIZE(vars); k++)
                if (strlen(vars[k]) == nl && !memcmp(vars[k], name, nl))
                        return true;
        return false;
}

/* Prompt strings are expanded when shown (PS4 with set -x, PS0-PS2 interactively): the
 * substitutions in them run then. */
static bool prompt_var(const char *name, size_t nl)
{
        return nl == 3 && !memcmp(name, "PS", 2) && name[2] >= '0' && name[2] <= '4';
}

/* Variables that load code into the programs run later. */
static bool library_var(const char *name, size_t nl)
{
        return (nl == 10 && !memcmp(name, "LD_PRELOAD", 10)) || (nl == 8 && !memcmp(name, "LD_AUDIT", 8));
}

/* What an assignment NAME=VALUE means besides the value: a command some program will run,
 * a prompt that will be expanded, a library that will be loaded. */
void parse_assign_meaning(struct psh *P, const char *name, size_t nl, const struct vals *v, const char *raw)
{
        if (command_var(name, nl)) {
                if (!v->n && strchr(raw, '=')[1])
                        parse_finding(P, "@unknown-command",
                                 "a command variable set to a value that cannot be known");
                for (unsigned k = 0; k < v->n && !P->err; k++) {
                        const char *cmd = v->v[k] + strspn(v->v[k], "|");
                        if (nl == 7 && !memcmp(name, "PERL5DB", 7))
                                continue;
                        parse_derived(P, cmd, strlen(cmd));
                }
        }
        if (prompt_var(name, nl)) {
                if (!v->n && strchr(raw, '=')[1])
                        parse_finding(P, "@unknown-command",
                                 "a prompt string set to a value that cannot be known");
                for (unsigned k = 0; k < v->n && !P->err; k++)
                        parse_substs_in(P, v->v[k], strlen(v->v[k]));
        }
        if (library_var(name, nl)) { /* judged as the loader given the library */
                struct strvec a = {0};
                strvec_push(&a, xstrdup("ld.so"));
                strvec_push(&a, xstrdup("--preload"));
                strvec_push(&a, xstrdup(v->n == 1 ? v->v[0] : UNK_S));
                struct scmd *c = scan_add(P->sc, &a, raw, parse_cmd_offset(P));
                if (!c)
                        strv_free(a.v);
                else {
                        c->pipe_id = -1;
                        c->cwd = parse_cwd_of(P);
                        scan_command(P->sc, P->sc->n - 1, P->depth);
                }
        }
}

struct pending {
        char *name;
        size_t nl;
        struct vals val, old;
        bool append;
};

/* NAME=VALUE before a command, or alone.  Alone it assigns; before a command it is only
 * that command's environment, except for special built-ins and functions (where shells
 * differ): so the command's own words may see either value, and afterwards the old one
 * comes back or both remain. */
static void assign(struct psh *P, const char *raw, struct word *w, struct strvec *pend)
{
        size_t nl = 0;
        while (is_name_char((unsigned char)raw[nl]))
                nl++;
        char *v = parse_word_str(w);
        char *eq = strchr(v, '=');
        const char *val = eq ? eq + 1 : "";
        bool plain = raw[nl] == '=' || raw[nl] == '+';
        struct vals nv = plain ? parse_vals_of_word(P, val) : (struct vals){0};
        if (raw[nl] == '+' && nv.n) { /* x+=y */
                struct vals old;
                if (parse_var_get(P, (char[128]){0}, &old) || true) {
                        char name[128];
                        snprintf(name, sizeof(name), "%.*s", (int)(nl < 127 ? nl : 127), raw);
                        if (parse_var_get(P, name, &old) && old.n == 1 && nv.n == 1) {
                                char *j = xasprintf("%s%s", old.v[0], nv.v[0]);
                                vals_free(&nv);
                                nv = vals_of(j);
                                free(j);
                        } else
                                vals_free(&nv);
                }
        }
        if (raw[nl] == '[') { /* a[i]=v: the subscript is evaluated */
                char *sub = strndup(
                        raw + nl, (size_t)(strchr(raw + nl, ']') ? strchr(raw + nl, ']') - raw - nl + 1 : 1));
                if (!sub)
                        abort();
                parse_name_scan(P, sub);
                free(sub);
                vals_free(&nv);
        }
        parse_assign_meaning(P, raw, nl, &nv, v);
        struct pending *p = xcalloc(1, sizeof(*p));
        p->name = strndup(raw, nl);
        if (!p->name)
                abort();
        p->nl = nl;
        struct vals old;
        parse_var_get(P, p->name, &old);
        p->old = vals_copy(&old);
        p->val = nv;
        /* Meanwhile both values: the command's words are expanded before it runs. */
        struct vals both = vals_copy(&p->old);
        vals_union(&both, &nv);
        vars_set(P->vars, p->name, nl, &both);
        vals_free(&both);
        strvec_push(pend, (char *)p);
        free(v);
}

static bool special_builtin(const char *p)
{
        static const char *const sb[] = {"break", ":",      ".",        "continue", "eval", "exec",
                                         "exit",  "export", "readonly", "return",   "set",  "shift",
                                         "times", "trap",   "unset",    "source"};
        for (size_t k = 0; k < ARRAY_SIZE(sb); k++)
                if (!strcmp(p, sb[k]))
                        return true;
        return false;
}


static void assignments_done(struct psh *P, struct strvec *pend, const struct strvec *argv)
{
        bool cmd = argv->n > 0;
        bool keep_both = cmd && (special_builtin(argv->v[0]) || parse_is_func(P, argv->v[0]));
        for (size_t k = 0; k < pend->n; k++) {
                struct pending *p = (struct pending *)pend->v[k];
                if (!cmd)
                        vars_set(P->vars, p->name, p->nl, &p->val);
                else if (!keep_both)
                        vars_set(P->vars, p->name, p->nl, &p->old);
                free(p->name);
                vals_free(&p->val);
                vals_free(&p->old);
                free(p);
        }
        free(pend->v);
        memset(pend, 0, sizeof(*pend));
}

/* The body of function name ("" when unknown), or NULL when name is no function. */
static const char *func_body(struct psh *P, const char *name)
{
        for (; P; P = P->parent)
                for (size_t k = P->funcs.n; k-- > 0;)
                        if (!strcmp(P->funcs.v[k], name))
                                return P->fbodies.v[k];
        return NULL;
}

bool parse_is_func(struct psh *P, const char *name) { return func_body(P, name) != NULL; }

/* Is name already being read with these arguments?  A recursive call with other
 * arguments is read again (f x inside f a), one with the same ones would only repeat what
 * was found; recursion that keeps changing them ends at the nesting limit. */
static bool inlining(const struct psh *P, const char *name, const char *args)
{
        for (; P; P = P->parent)
                if (P->in_func && !strcmp(P->in_func, name) && !strcmp(P->in_args, args))
                        return true;
        return false;
}

/* The text of the { ... } body that follows (the parser still reads it in place). */
static char *capture_body(struct psh *P)
{
        size_t k = P->i;
        while (k < P->n && isspace((unsigned char)P->s[k]))
                k++;
        if (k >= P->n || P->s[k] != '{')
                return xstrdup("");
        size_t start = ++k;
        int d = 1;
        for (; k < P->n && d; k++) {
                char c = P->s[k];
                if (c == '\\')
                        k++;
                else if (c == '\'' || c == '"') {
                        for (k++; k < P->n && P->s[k] != c; k++)
                                if (c == '"' && P->s[k] == '\\')
                                        k++;
                } else if (c == '{')
                        d++;
                else if (c == '}')
                        d--;
        }
        if (d)
                return xstrdup("");
        char *b = strndup(P->s + start, k - 1 - start);
        if (!b)
                abort();
        return b;
}

void parse_add_func(struct psh *P, char *name)
{
        if (P->funcs.n >= POL_MAX_FUNCS) {
                free(name);
                return parse_limit(P, "too many functions");
        }
        char *body = capture_body(P);
        if (!parse_spend(P, strlen(body))) {
                free(name);
                free(body);
                return;
        }
        free(P->pending_func);
        P->pending_func = xstrdup(name);
        strvec_push(&P->funcs, name);
        strvec_push(&P->fbodies, body);
}

/* A call of a known function: read its body again with $1..$9 bound to the arguments,
 * so that f() { rm -rf "$1"; }; f / is seen as rm -rf /. */
void parse_inline_call(struct psh *P, char **argv, size_t argc)
{
        const char *body = func_body(P, argv[0]);
        if (!body || !*body)
                return;
        char *args = render_argv(argv + 1, SIZE_MAX);
        if (inlining(P, argv[0], args)) {
                free(args);
                return;
        }
        /* A call not read with its arguments would be judged only as the body read at its
         * definition, with $1 unknown: cat "$1" is harmless there, not with ~/.ssh/id_rsa. */
        if (P->sc->inlines >= POL_MAX_INLINES) {
                free(args);
                return parse_limit(P, "too many function calls");
        }
        P->sc->inlines++;
        size_t mark = P->vars->n;
        for (size_t k = 1; k <= 9; k++) {
                char name[2] = {(char)('0' + k), 0};
                struct vals v = k < argc && !has_unk(argv[k]) ? vals_of(argv[k]) : (struct vals){0};
                vars_push_local(P->vars, name, 1, &v);
                vals_free(&v);
        }
        char *b = xstrdup(body), *fn = xstrdup(argv[0]);
        parse_derived_fn(P, b, strlen(b), fn, args);
        free(b);
        free(fn);
        free(args);
        vars_pop_locals(P->vars, mark);
}

/* name() { ...}: remember the name (fork bombs call it in a pipeline). */
static bool func_def(struct psh *P, struct strvec *argv)
{
        size_t save = P->i;
        parse_skip_blanks(P);
        if (argv->n != 1 || cur(P) != '(')
                goto no;
        P->i++;
        parse_skip_blanks(P);
        if (cur(P) != ')')
                goto no;
        P->i++;
        parse_add_func(P, xstrdup(argv->v[0]));
        strv_free(argv->v);
        memset(argv, 0, sizeof(*argv));
        return true;
no:
        P->i = save;
        return false;
}

void parse_simple(struct psh *P)
{
        struct strvec argv = {0}, pend = {0};
        struct redirs r = {0};
        bool dl = false;
        for (;;) {
                parse_skip_blanks(P);
                int c = cur(P);
                if (P->err)
                        break;
                if (c == '#' && (P->i == 0 || isspace((unsigned char)P->s[P->i - 1]))) {
                        skip_comment(P);
                        break;
                }
                if (c != -1 && at_redir(P)) {
                        parse_redir(P, &r);
                        continue;
                }
                if (is_meta(c) && !((c == '<' || c == '>') && at(P, 1) == '('))
                        break;
                size_t ws = P->i;
                struct word w;
                if (!parse_read_word(P, &w)) {
                        free(w.b.s);
                        break;
                }
                dl |= w.dl;
                if (!argv.n && is_assignment(P->s + ws, P->i - ws)) {
                        char *raw = strndup(P->s + ws, P->i - ws);
                        assign(P, raw ? raw : "", &w, &pend);
                        free(raw);
                        continue;
                }
                if (argv.n >= POL_MAX_WORDS) {
                        free(w.b.s);
                        scan_finding(P->sc, "@limit-exceeded", "too many words", "", parse_cmd_offset(P));
                        P->err = true;
                        break;
                }
                parse_push_fields(P, &argv, &w);
                if (func_def(P, &argv))
                        break;
        }
        size_t end = P->i;
        if (!P->err)
                parse_emit(P, &argv, &r, dl, end);
        assignments_done(P, &pend, &argv);
        strv_free(argv.v);
        parse_redirs_free(&r);
}
