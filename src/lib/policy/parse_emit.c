/* What a simple command does once its words are read (part of parse.c, see parse_int.h):
 * built-ins that change the parser's shell (declare, cd, read, eval, alias ...), then the
 * command emitted to the policy once per combination of its words' possible values, with
 * its redirections and working directory.  Apart from parse_simple.c because this is the
 * parser's output, not its reading. */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"
#include "policy/parse_int.h"

static void var_set1(struct psh *P, const char *name, size_t nlen, const char *val)
{
        struct vals v = val ? vals_of(val) : (struct vals){0};
        vars_set(P->vars, name, nlen, &v);
        vals_free(&v);
}

/* s with every marker replaced by UNK (too many combinations to judge one by one). */
static char *alt_unknown(const char *s)
{
        char *r = xstrdup(s), *o = r;
        for (const char *p = s; *p;) {
                if (*p == ALT_B) {
                        *o++ = UNK;
                        while (*p && *p != ALT_E)
                                p++;
                        if (*p)
                                p++;
                        continue;
                }
                *o++ = *p++;
        }
        *o = 0;
        return r;
}

/* ---- built-ins that change the shell's state ---- */

/* The single known value of a word (markers expanded), or NULL. */
static char *word_one(struct psh *P, const char *s)
{
        struct vals v = parse_vals_of_word(P, s);
        char *r = v.n == 1 ? xstrdup(v.v[0]) : NULL;
        vals_free(&v);
        return r;
}

/* local/declare/typeset/export/readonly: NAME=VALUE assigns, -n makes a nameref; in a
 * function local and declare shadow the caller's variable until the call returns
 * (x=rm; f() { local x=echo; }; f; $x -rf ~ runs rm). */
static void b_declare(struct psh *P, char **argv, size_t argc)
{
        bool ref = false, integer = false, global = false, func_opt = false;
        bool scoped = strcmp(argv[0], "export") && strcmp(argv[0], "readonly") && P->in_func;
        for (size_t k = 1; k < argc; k++) {
                const char *a = argv[k];
                if ((a[0] == '-' || a[0] == '+') && a[1] && !strchr(a, '=')) {
                        ref |= a[0] == '-' && strchr(a, 'n') != NULL;
                        integer |= strchr(a, 'i') != NULL;
                        global |= strchr(a, 'g') != NULL;
                        func_opt |= strchr(a, 'f') != NULL || strchr(a, 'F') != NULL;
                        continue;
                }
                if (func_opt)
                        return;
                const char *eq = strchr(a, '=');
                size_t nl = eq ? (size_t)(eq - a) : strlen(a);
                parse_name_scan(P, a);
                size_t pure = 0;
                while (pure < nl && is_name_char((unsigned char)a[pure]))
                        pure++;
                if (!pure)
                        continue;
                if (ref) {
                        char *t = eq ? word_one(P, eq + 1) : NULL;
                        if (t)
                                parse_name_scan(P, t);
                        vars_set_ref(P->vars, a, pure, t && !strchr(t, '[') ? t : NULL, scoped && !global);
                        free(t);
                        continue;
                }
                struct vals v = eq && pure == nl ? parse_vals_of_word(P, eq + 1) : (struct vals){0};
                if (integer && eq) {
                        for (unsigned j = 0; j < v.n; j++)
                                parse_arith_scan(P, v.v[j], 0);
                        vals_free(&v);
                }
                if (eq)
                        parse_assign_meaning(P, a, pure, &v, a);
                if (!eq && !scoped) {
                        vals_free(&v);
                        continue; /* export x: keeps its value */
                }
                if (scoped && !global)
                        vars_push_local(P->vars, a, pure, &v);
                else
                        vars_set(P->vars, a, pure, &v);
                vals_free(&v);
        }
}

/* cd DIR / pushd DIR: later relative paths start there (a subshell's cd is undone). */
static void b_cd(struct psh *P, char **argv, size_t argc)
{
        size_t k = 1;
        while (k < argc && argv[k][0] == '-' && argv[k][1] && strcmp(argv[k], "-"))
                k++;
        bool popd = !strcmp(argv[0], "popd");
        if (popd || (k < argc && (!strcmp(argv[k], "-") || argv[k][0] == '+' || argv[k][0] == '-')) ||
            (!strcmp(argv[0], "pushd") && k >= argc) || parse_var_one(P, "CDPATH")) {
                var_set1(P, "PWD", 3, NULL);
                return;
        }
        struct vals dirs = k < argc ? parse_vals_of_word(P, argv[k]) : (struct vals){0};
        if (k >= argc) {
                struct vals h;
                parse_var_get(P, "HOME", &h);
                dirs = vals_copy(&h);
        }
        struct vals pwd;
        const char *base = parse_var_get(P, "PWD", &pwd) && pwd.n == 1 ? pwd.v[0] : NULL;
        struct vals out = {0};
        for (unsigned j = 0; j < dirs.n; j++) {
                if (dirs.v[j][0] != '/' && !base) {
                        vals_free(&out);
                        out = (struct vals){0};
                        break;
                }
                char *p = dirs.v[j][0] == '/' ? xstrdup(dirs.v[j]) : xasprintf("%s/%s", base, dirs.v[j]);
                char *norm = lexical_path(p);
                free(p);
                struct vals one = vals_of(norm);
                free(norm);
                if (!j)
                        out = one;
                else {
                        vals_union(&out, &one);
                        vals_free(&one);
                }
        }
        vals_free(&dirs);
        vars_set(P->vars, "PWD", 3, &out);
        vals_free(&out);
}

/* read NAME...: the words of its input; printf -v NAME: the formatted text; mapfile,
 * getopts, let, unset: unknown (and the names' subscripts are evaluated). */
static void b_assigns(struct psh *P, char **argv, size_t argc)
{
        const char *p = argv[0];
        if (!strcmp(p, "let")) {
                for (size_t k = 1; k < argc; k++) {
                        parse_substs_in(P, argv[k], strlen(argv[k]));
                        parse_arith_scan(P, argv[k], 0);
                        parse_arith_assigns(P, argv[k]);
                }
                return;
        }
        if (!strcmp(p, "printf")) {
                for (size_t k = 1; k + 1 < argc && argv[k][0] == '-'; k++)
                        if (!strcmp(argv[k], "-v")) {
                                parse_name_scan(P, argv[k + 1]);
                                size_t nl = 0;
                                while (is_name_char((unsigned char)argv[k + 1][nl]))
                                        nl++;
                                char *text = nl ? printf_text(argv + k + 2, argc - k - 2) : NULL;
                                if (nl)
                                        var_set1(P, argv[k + 1], nl,
                                                 text && !parse_has_alt(text) ? text : NULL);
                                free(text);
                                return;
                        }
                return;
        }
        if (!strcmp(p, "mapfile") || !strcmp(p, "readarray")) {
                for (size_t k = 1; k < argc; k++) {
                        if (!strcmp(argv[k], "-C") && k + 1 < argc) { /* a callback run per line */
                                if (has_unk(argv[k + 1]))
                                        parse_finding(P, "@unknown-command",
                                                 "mapfile -C runs a callback that cannot be known");
                                else
                                        parse_derived(P, argv[k + 1], strlen(argv[k + 1]));
                        }
                        if (argv[k][0] == '-' && strchr("dnOsucC", argv[k][1]) && !argv[k][2])
                                k++;
                        else if (argv[k][0] != '-') {
                                parse_name_scan(P, argv[k]);
                                var_set1(P, argv[k], strcspn(argv[k], "["), NULL);
                        }
                }
                return;
        }
        if (!strcmp(p, "unset") || !strcmp(p, "getopts") || !strcmp(p, "wait")) {
                for (size_t k = !strcmp(p, "getopts") ? 2 : 1; k < argc; k++) {
                        if (argv[k][0] == '-')
                                continue;
                        parse_name_scan(P, argv[k]);
                        if (is_name_start((unsigned char)argv[k][0]))
                                var_set1(P, argv[k], strcspn(argv[k], "["), NULL);
                }
                return;
        }
        if (!strcmp(p, "test") || !strcmp(p, "[")) {
                for (size_t k = 1; k + 1 < argc; k++)
                        if (!strcmp(argv[k], "-v"))
                                parse_name_scan(P, argv[k + 1]);
                return;
        }
        if (!strcmp(p, "shift") ||
            (!strcmp(p, "set") && argc > 1 && (argv[1][0] != '-' || !strcmp(argv[1], "--")))) {
                for (int k = 1; k <= 9; k++)
                        var_set1(P, (char[]){(char)('0' + k), 0}, 1, NULL);
        }
}

/* read's variables, once its input is known: a here-string or here-document's first
 * line (split at IFS), a listing's names, else unknown. */
static void b_read(struct psh *P, size_t idx)
{
        struct scmd *c = &P->sc->cmds[idx];
        char **a = c->argv.v;
        size_t n = c->argv.n, k = 1;
        bool array = false;
        for (; k < n && a[k][0] == '-' && a[k][1]; k++) {
                array |= strchr(a[k], 'a') != NULL;
                const char *last = a[k] + strlen(a[k]) - 1;
                if (strchr("adinNptu", *last) && k + 1 < n && a[k][1] != '-')
                        k++;
        }
        char *text = c->stdin_text ? xstrdup(c->stdin_text) : NULL;
        char *listing = !text ? stdin_listing(P->sc, idx) : NULL;
        const char *ifs = parse_ifs_chars(P);
        char *save = NULL, *line = text ? strtok_r(text, "\n", &save) : NULL;
        char *rest = line;
        for (; k < n; k++) {
                parse_name_scan(P, a[k]);
                size_t nl = strcspn(a[k], "[");
                if (!nl || array) {
                        if (nl)
                                var_set1(P, a[k], nl, NULL);
                        continue;
                }
                const char *v = NULL;
                char *field = NULL;
                if (listing)
                        v = listing;
                else if (rest && ifs && k + 1 < n) {
                        rest += strspn(rest, ifs);
                        size_t fl = strcspn(rest, ifs);
                        field = strndup(rest, fl);
                        rest += fl;
                        v = field;
                } else if (rest && ifs)
                        v = rest + strspn(rest, ifs);
                var_set1(P, a[k], nl, v);
                free(field);
        }
        free(text);
        free(listing);
}

/* A sourced file runs in this shell: any variable may have changed.  A string run by
 * eval is read here with the same variables. */
static bool b_eval(struct psh *P, size_t idx)
{
        struct scmd *c = &P->sc->cmds[idx];
        char *s = render_argv(c->argv.v + 1, SIZE_MAX);
        bool unknown = has_unk(s) && strspn(s, UNK_S " \t\n\"';") == strlen(s);
        if (unknown || c->dl_word)
                parse_finding(P, c->dl_word ? "@download-exec" : "@unknown-command",
                         c->dl_word ? "eval of downloaded code" : "eval of a string that cannot be known");
        else
                parse_derived(P, s, strlen(s));
        free(s);
        return true;
}

/* Spawn loops and recursive background calls: a loop that never ends and starts a job in
 * the background each time, or a function that calls itself in the background, fill the
 * process table like a fork bomb. */
struct frame *parse_innermost_loop(struct psh *P)
{
        for (size_t k = P->vars->nfr; k-- > 0;)
                if (P->vars->fr[k].kind == FR_LOOP)
                        return &P->vars->fr[k];
        return NULL;
}

static void note_control(struct psh *P, const char *prog)
{
        struct frame *l = parse_innermost_loop(P);
        if (l && !strcmp(prog, "wait"))
                l->waits = true;
        if (l && (!strcmp(prog, "break") || !strcmp(prog, "exit") || !strcmp(prog, "return") ||
                  !strcmp(prog, "exec")))
                l->breaks = true;
}

static void b_alias(struct psh *P, char **argv, size_t argc)
{
        bool un = !strcmp(argv[0], "unalias");
        for (size_t k = 1; k < argc; k++) {
                const char *eq = strchr(argv[k], '=');
                if (un) {
                        vars_alias_set(P->vars, argv[k], "");
                        continue;
                }
                if (argv[k][0] == '-' || !eq)
                        continue;
                char *name = strndup(argv[k], (size_t)(eq - argv[k]));
                if (!name)
                        abort();
                char *v = word_one(P, eq + 1);
                vars_alias_set(P->vars, name, v ? v : UNK_S);
                free(v);
                free(name);
        }
}

/* hash -p PATH NAME: NAME runs PATH from now on. */
static void b_hash(struct psh *P, char **argv, size_t argc)
{
        for (size_t k = 1; k + 2 < argc + 1 && k + 1 < argc; k++)
                if (!strcmp(argv[k], "-p") && k + 2 < argc) {
                        vars_alias_set(P->vars, argv[k + 2], argv[k + 1]);
                        return;
                }
}

static void builtins(struct psh *P, struct strvec *argv)
{
        static const char *const decl[] = {"local", "declare", "typeset", "export", "readonly"};
        const char *p = argv->v[0];
        for (size_t k = 0; k < ARRAY_SIZE(decl); k++)
                if (!strcmp(p, decl[k]))
                        return b_declare(P, argv->v, argv->n);
        if (!strcmp(p, "cd") || !strcmp(p, "pushd") || !strcmp(p, "popd"))
                return b_cd(P, argv->v, argv->n);
        if (!strcmp(p, "alias") || !strcmp(p, "unalias"))
                return b_alias(P, argv->v, argv->n);
        if (!strcmp(p, "hash"))
                return b_hash(P, argv->v, argv->n);
        b_assigns(P, argv->v, argv->n);
}

/* ---- emitting a simple command ---- */

char *parse_cwd_of(struct psh *P)
{
        struct vals v;
        if (!parse_var_get(P, "PWD", &v) || v.n != 1)
                return xstrdup(UNK_S);
        const char *c = P->sc->ctx->cwd;
        return c && !strcmp(c, v.v[0]) ? NULL : xstrdup(v.v[0]);
}

/* Expand every word and redirection target with several possible values: the argvs to
 * judge (one per combination; too many combinations make those words unknown). */
static void variants(struct psh *P, struct strvec *argv, struct strvec **outv, size_t *nout)
{
        struct strvec *out = xcalloc(1, sizeof(*out));
        size_t n = 1;
        for (size_t k = 0; k < argv->n; k++) {
                const char *a = argv->v[k];
                if (!parse_has_alt(a)) {
                        for (size_t j = 0; j < n; j++)
                                strvec_push(&out[j], xstrdup(a));
                        continue;
                }
                /* a word of markers only: one that comes to nothing is no word */
                bool bare = true;
                for (const char *c = a; *c && bare;) {
                        if (*c != ALT_B) {
                                bare = false;
                                break;
                        }
                        size_t idx = strtoul(c + 1, (char **)&c, 10);
                        bare = idx < P->nalts && P->alts[idx].ifs;
                        c += *c == ALT_E;
                }
                struct strvec vs = {0};
                if (!parse_alt_expand(P, a, &vs, MAX_VARIANTS) || n * vs.n > MAX_VARIANTS) {
                        strv_free(vs.v);
                        char *u = alt_unknown(a);
                        for (size_t j = 0; j < n; j++)
                                strvec_push(&out[j], xstrdup(u));
                        free(u);
                        continue;
                }
                struct strvec *next = xcalloc(n * vs.n, sizeof(*next));
                for (size_t j = 0; j < n; j++)
                        for (size_t m = 0; m < vs.n; m++) {
                                struct strvec *d = &next[j * vs.n + m];
                                for (size_t q = 0; q < out[j].n; q++)
                                        strvec_push(d, xstrdup(out[j].v[q]));
                                char *t = xstrdup(vs.v[m]);
                                if (!*t && bare) {
                                        free(t);
                                        continue;
                                }
                                char *save = NULL, *sep = (char[]){SPLIT, 0};
                                if (!strchr(t, SPLIT)) {
                                        strvec_push(d, t);
                                        continue;
                                }
                                for (char *f = strtok_r(t, sep, &save); f; f = strtok_r(NULL, sep, &save))
                                        strvec_push(d, xstrdup(f));
                                free(t);
                        }
                for (size_t j = 0; j < n; j++)
                        strv_free(out[j].v);
                free(out);
                strv_free(vs.v);
                out = next;
                n *= vs.n;
        }
        *outv = out;
        *nout = n;
}

/* Redirection targets with several possible values: every one of them. */
static void expand_targets(struct psh *P, struct strvec *t)
{
        struct strvec out = {0};
        for (size_t k = 0; k < t->n; k++) {
                if (!parse_has_alt(t->v[k])) {
                        strvec_push(&out, t->v[k]);
                        continue;
                }
                struct strvec vs = {0};
                if (parse_alt_expand(P, t->v[k], &vs, MAX_VARIANTS)) {
                        for (size_t j = 0; j < vs.n; j++) {
                                for (char *c = vs.v[j]; *c; c++)
                                        *c = *c == SPLIT ? ' ' : *c;
                                strvec_push(&out, vs.v[j]);
                        }
                        free(vs.v);
                } else {
                        strv_free(vs.v);
                        strvec_push(&out, alt_unknown(t->v[k]));
                }
                free(t->v[k]);
        }
        free(t->v);
        *t = out;
}

static void emit_one(struct psh *P, struct strvec *argv, struct redirs *r, bool dl, const char *text)
{
        struct scan *sc = P->sc;
        const char *p0 = argv->v[0];
        if (P->stage > 0 && parse_is_func(P, p0))
                scan_finding(sc, "@fork-bomb", p0, text, parse_cmd_offset(P));
        char **call = parse_is_func(P, p0) ? strv_dup(argv->v) : NULL;
        size_t callc = argv->n;
        const char *alias = vars_alias(P->vars, base_name(p0));
        char *alias_text = alias && *alias ? xasprintf("%s %s", alias, argv->n > 1 ? "" : "") : NULL;
        if (alias_text && argv->n > 1) {
                char *rest = render_argv(argv->v + 1, SIZE_MAX);
                free(alias_text);
                alias_text = xasprintf("%s %s", alias, rest);
                free(rest);
        }
        note_control(P, base_name(p0));
        struct scmd *c = scan_add(sc, argv, text, parse_cmd_offset(P));
        if (!c) {
                strv_free(call);
                free(alias_text);
                return;
        }
        c->pipe_id = P->pipe_id;
        c->stage = P->stage;
        c->writes = r->writes;
        c->reads = r->reads;
        c->clobbers = r->clobbers;
        c->stdin_text = r->stdin_text;
        c->dl_word = dl || r->dl;
        c->cwd = parse_cwd_of(P);
        memset(r, 0, sizeof(*r));
        size_t idx = sc->n - 1;
        bool direct_eval = !strcmp(c->argv.v[0], "eval");
        if (direct_eval)
                b_eval(P, idx);
        else
                scan_command(sc, idx, P->depth);
        if (P->err)
                goto out;
        const char *prog = base_name(sc->cmds[idx].argv.v[0]);
        if (!strcmp(prog, "read"))
                b_read(P, idx);
        if (!strcmp(prog, "source") || !strcmp(prog, ".") || sc->forget) {
                vars_forget(P->vars);
                sc->forget = false;
        }
        if (alias_text)
                parse_derived(P, alias_text, strlen(alias_text));
        if (call)
                parse_inline_call(P, call, callc);
out:
        strv_free(call);
        free(alias_text);
}

static struct redirs redirs_copy(const struct redirs *r)
{
        struct redirs c = {0};
        for (size_t k = 0; k < r->writes.n; k++)
                strvec_push(&c.writes, xstrdup(r->writes.v[k]));
        for (size_t k = 0; k < r->reads.n; k++)
                strvec_push(&c.reads, xstrdup(r->reads.v[k]));
        for (size_t k = 0; k < r->clobbers.n; k++)
                strvec_push(&c.clobbers, xstrdup(r->clobbers.v[k]));
        c.stdin_text = xstrdup_or_null(r->stdin_text);
        c.dl = r->dl;
        return c;
}

void parse_redirs_free(struct redirs *r)
{
        strv_free(r->writes.v);
        strv_free(r->reads.v);
        strv_free(r->clobbers.v);
        free(r->stdin_text);
        memset(r, 0, sizeof(*r));
}

void parse_emit(struct psh *P, struct strvec *argv, struct redirs *r, bool dl, size_t end)
{
        if (!argv->n) {
                if (!r->writes.n && !r->reads.n)
                        return;
                strvec_push(argv, xstrdup(":")); /* a bare redirection still opens its target */
        }
        size_t s = P->cmd_start;
        while (end > s && isspace((unsigned char)P->s[end - 1]))
                end--;
        char *text = strndup(P->s + s, end - s);
        if (!text)
                abort();
        if (!parse_has_alt(argv->v[0]))
                builtins(P, argv);
        expand_targets(P, &r->writes);
        expand_targets(P, &r->reads);
        expand_targets(P, &r->clobbers);
        struct strvec *vs;
        size_t nv;
        variants(P, argv, &vs, &nv);
        if (nv == 1) {
                if (!vs[0].n)
                        strvec_push(&vs[0], xstrdup(":"));
                emit_one(P, &vs[0], r, dl, text);
        } else {
                /* One of them runs: judged each, their changes to variables joined. */
                frame_push(P->vars, FR_ALT, P);
                for (size_t k = 0; k < nv && !P->err; k++) {
                        if (k)
                                frame_sep(P->vars);
                        if (!vs[k].n)
                                continue;
                        struct redirs rc = redirs_copy(r);
                        if (parse_has_alt(argv->v[0]))
                                builtins(P, &vs[k]);
                        emit_one(P, &vs[k], &rc, dl, text);
                        parse_redirs_free(&rc);
                }
                frame_close(P->vars);
        }
        for (size_t k = 0; k < nv; k++)
                strv_free(vs[k].v);
        free(vs);
        free(text);
}
