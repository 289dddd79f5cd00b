/* The values of the shell parser's words (part of parse.c, see parse_int.h): variables,
 * expansions with several possible values, command substitutions (their text parsed again
 * as a script of its own) and arithmetic.  Apart from parse_word.c, which reads a word's
 * characters, because this is what a value means to the policy: known, one of several, or
 * unknown (UNK). */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"
#include "policy/parse_int.h"

/* ---- variables ---- */

bool parse_var_get(struct psh *P, const char *name, struct vals *out)
{
        return vars_get(P->vars, name, out);
}

/* The single known value of name, or NULL. */
const char *parse_var_one(struct psh *P, const char *name)
{
        struct vals v;
        return parse_var_get(P, name, &v) && v.n == 1 ? v.v[0] : NULL;
}

/* ---- words ---- */

void parse_put_unk(struct word *w)
{
        sb_putc(&w->b, UNK);
        w->unk = true;
}

/* The characters unquoted expansions are split at, or NULL when they cannot be known
 * (IFS set to command output, or to one of several values). */
const char *parse_ifs_chars(struct psh *P)
{
        return parse_var_one(P, "IFS");
}

void parse_put_value(struct psh *P, struct word *w, const char *v, bool quoted)
{
        if (!parse_spend(P, strlen(v)))
                return;
        w->unk |= has_unk(v);
        if (quoted) {
                sb_put(&w->b, v, strlen(v));
                return;
        }
        const char *ifs = parse_ifs_chars(P);
        if (!ifs) { /* split at characters that cannot be known: the fields cannot be */
                if (*v)
                        parse_put_unk(w);
                return;
        }
        for (; *v; v++)
                sb_putc(&w->b, *ifs && strchr(ifs, *v) ? SPLIT : *v);
}

bool parse_has_alt(const char *s) { return strchr(s, ALT_B) != NULL; }

/* Every variant of s with its markers replaced by each of their values (unquoted ones
 * split into fields at SPLIT), appended to out as separate strings (still unsplit);
 * false when there would be more than max. */
bool parse_alt_expand(struct psh *P, const char *s, struct strvec *out, size_t max)
{
        struct strvec cur = {0};
        strvec_push(&cur, xstrdup(""));
        for (const char *p = s; *p;) {
                const char *m = strchr(p, ALT_B);
                size_t lit = m ? (size_t)(m - p) : strlen(p);
                for (size_t k = 0; k < cur.n; k++) {
                        char *t = xasprintf("%s%.*s", cur.v[k], (int)lit, p);
                        free(cur.v[k]);
                        cur.v[k] = t;
                }
                if (!m)
                        break;
                char *end;
                size_t idx = strtoul(m + 1, &end, 10);
                if (*end != ALT_E || idx >= P->nalts) { /* cannot happen: a marker we wrote */
                        strv_free(cur.v);
                        return false;
                }
                const struct alt *a = &P->alts[idx];
                if (cur.n * a->v.n > max) {
                        strv_free(cur.v);
                        return false;
                }
                struct strvec next = {0};
                for (size_t k = 0; k < cur.n; k++)
                        for (unsigned j = 0; j < a->v.n; j++) {
                                char *val = xstrdup(a->v.v[j]);
                                for (char *c = val; a->ifs && *c; c++)
                                        if (*a->ifs && strchr(a->ifs, *c))
                                                *c = SPLIT;
                                strvec_push(&next, xasprintf("%s%s", cur.v[k], val));
                                free(val);
                        }
                strv_free(cur.v);
                cur = next;
                p = end + 1;
        }
        for (size_t k = 0; k < cur.n; k++)
                strvec_push(out, cur.v[k]);
        free(cur.v);
        return true;
}

/* The possible values of a word read as one string (an assignment's value). */
struct vals parse_vals_of_word(struct psh *P, const char *s)
{
        struct vals r = {0};
        /* only unknown: unknown; partly ("/tmp/" UNK from mktemp): what is known of it */
        if (has_unk(s) && strspn(s, UNK_S "\002") == strlen(s))
                return r;
        if (!parse_has_alt(s))
                return vals_of(s);
        struct strvec out = {0};
        if (!parse_alt_expand(P, s, &out, VAL_MAX)) {
                strv_free(out.v);
                return r;
        }
        for (size_t k = 0; k < out.n; k++) {
                for (char *c = out.v[k]; *c; c++)
                        if (*c == SPLIT)
                                *c = ' ';
                struct vals one = vals_of(out.v[k]);
                if (!k)
                        r = one;
                else {
                        vals_union(&r, &one);
                        vals_free(&one);
                }
        }
        strv_free(out.v);
        return r;
}

static bool is_downloader(const char *p)
{
        static const char *const dl[] = {"curl", "wget", "fetch", "aria2c", "http", "https",
                                         "lwp-download", "lwp-request", "GET", "nc", "ncat",
                                         "netcat", "socat", "telnet", "ftp", "tftp", "@net", "xh", "httpie",
                                         "curlie", "ztcp"};
        for (size_t k = 0; k < ARRAY_SIZE(dl); k++)
                if (!strcmp(p, dl[k]))
                        return true;
        return false;
}

/* After a substitution added commands [n0, n): its output is known only for a plain echo
 * of known words (agents write $(echo x) to build names), a fresh temporary name
 * (mktemp), or a listing of a directory (ls, find, git ls-files: names beneath it). */
void parse_subst_result(struct psh *P, struct word *w, size_t n0, bool quoted)
{
        struct scan *sc = P->sc;
        for (size_t k = n0; k < sc->n; k++)
                if (sc->cmds[k].argv.n && is_downloader(base_name(sc->cmds[k].argv.v[0])))
                        w->dl = true;
        if (sc->n == n0 + 1 && !strcmp(sc->cmds[n0].argv.v[0], "echo")) {
                struct scmd *c = &sc->cmds[n0];
                char *r = render_argv(c->argv.v + 1, SIZE_MAX);
                if (!has_unk(r) && (c->argv.n < 2 || c->argv.v[1][0] != '-')) {
                        parse_put_value(P, w, r, quoted);
                        free(r);
                        return;
                }
                free(r);
        }
        char *v = sc->n > n0 ? subst_value(sc, n0) : NULL;
        if (v) {
                if (parse_spend(P, strlen(v)))
                        sb_put(&w->b, v, strlen(v));
                w->unk |= has_unk(v);
                free(v);
                return;
        }
        parse_put_unk(w);
}

void parse_sub_begin(struct psh *P, size_t *depth)
{
        *depth = P->vars->nfr;
        frame_push(P->vars, FR_SUB, P);
}

void parse_sub_end(struct psh *P, size_t depth)
{
        frame_close_to(P->vars, depth + 1);
        frame_close(P->vars);
}

void parse_cmd_subst(struct psh *P, struct word *w, bool quoted)
{
        size_t n0 = P->sc->n, fd;
        int pid = P->pipe_id, st = P->stage, cd = P->case_depth;
        bool cp = P->case_pat;
        size_t cs = P->cmd_start;
        P->case_depth = 0;
        P->case_pat = false;
        parse_sub_begin(P, &fd);
        parse_list(P, ')');
        parse_sub_end(P, fd);
        P->pipe_id = pid, P->stage = st, P->case_depth = cd, P->case_pat = cp, P->cmd_start = cs;
        parse_subst_result(P, w, n0, quoted);
}

void parse_psh_free(struct psh *C)
{
        strv_free(C->funcs.v);
        strv_free(C->fbodies.v);
        for (size_t k = 0; k < C->nalts; k++) {
                vals_free(&C->alts[k].v);
                free(C->alts[k].ifs);
        }
        free(C->alts);
        free(C->pending_func);
}

/* A string found in this one and run in the same shell (its variables are shared). */
void parse_derived_fn(struct psh *P, const char *s, size_t n, const char *in_func,
                      const char *in_args)
{
        struct psh C = {.sc = P->sc, .s = s, .n = n, .depth = P->depth + 1, .vars = P->vars,
                        .parent = P, .in_func = in_func, .in_args = in_args};
        C.pos = (struct srcpos){.direct = false, .outer_off = parse_cmd_offset(P)};
        C.pipe_id = P->sc->next_pipe++;
        C.fr_base = P->vars->nfr;
        if (C.depth > POL_MAX_DEPTH) {
                scan_finding(P->sc, "@limit-exceeded", "nesting too deep", "", parse_cmd_offset(P));
                P->err = true;
                return;
        }
        if (memchr(s, SPLIT, n) || memchr(s, ALT_B, n) || memchr(s, ALT_E, n) || memchr(s, BR_O, n) ||
            memchr(s, BR_S, n) || memchr(s, BR_C, n))
                parse_err(&C, "control character in a command string");
        else
                parse_list(&C, 0);
        frame_close_to(P->vars, C.fr_base);
        parse_psh_free(&C);
        if (C.err)
                P->err = true;
}

void parse_derived(struct psh *P, const char *s, size_t n)
{
        parse_derived_fn(P, s, n, NULL, NULL);
}

void parse_backtick(struct psh *P, struct word *w, bool quoted)
{
        struct sb body = {0};
        P->i++;
        while (cur(P) != '`') {
                if (cur(P) == -1) {
                        free(body.s);
                        return parse_err(P, "unterminated backquote");
                }
                if (cur(P) == '\\' && (at(P, 1) == '`' || at(P, 1) == '\\' || at(P, 1) == '$'))
                        P->i++;
                sb_putc(&body, (char)cur(P));
                P->i++;
        }
        P->i++;
        size_t n0 = P->sc->n, fd;
        parse_sub_begin(P, &fd);
        parse_derived(P, body.s ? body.s : "", body.n);
        parse_sub_end(P, fd);
        free(body.s);
        parse_subst_result(P, w, n0, quoted);
}

/* Skip balanced parentheses from P->i (at an opening one). */
static void skip_parens(struct psh *P)
{
        int d = 0;
        do {
                int c = cur(P);
                if (c == -1)
                        return parse_err(P, "unbalanced parentheses");
                if (c == '(')
                        d++;
                else if (c == ')')
                        d--;
                else if (c == '\'' || c == '"') {
                        P->i++;
                        while (cur(P) != -1 && cur(P) != c)
                                P->i++;
                }
                P->i++;
        } while (d > 0);
}


/* The substitutions in s run (a string the shell expands later: PS4, a prompt, a value
 * evaluated in arithmetic); their commands are judged, their output is not used. */
void parse_substs_in(struct psh *P, const char *s, size_t n)
{
        if (P->depth + 1 > POL_MAX_DEPTH) {
                parse_limit(P, "nesting too deep");
                return;
        }
        struct psh C = {.sc = P->sc, .s = s, .n = n, .depth = P->depth + 1, .vars = P->vars, .parent = P};
        C.pos = (struct srcpos){.direct = false, .outer_off = parse_cmd_offset(P)};
        C.fr_base = P->vars->nfr;
        while (C.i < C.n && !C.err) {
                struct word w = {0};
                if (C.s[C.i] == '$')
                        parse_dollar(&C, &w, true);
                else if (C.s[C.i] == '`')
                        parse_backtick(&C, &w, true);
                else
                        C.i++;
                free(w.b.s);
        }
        frame_close_to(P->vars, C.fr_base);
        parse_psh_free(&C);
        if (C.err)
                P->err = true;
}


/* Names an arithmetic expression assigns (x=1, x+=2, x++, --x): unknown afterwards. */
void parse_arith_assigns(struct psh *P, const char *s)
{
        for (const char *p = s; *p;) {
                if (!is_name_start((unsigned char)*p) ||
                    (p > s && (is_name_char((unsigned char)p[-1]) || p[-1] == '$'))) {
                        p++;
                        continue;
                }
                const char *e = p;
                while (is_name_char((unsigned char)*e))
                        e++;
                const char *q = e;
                while (*q == ' ' || *q == '\t')
                        q++;
                if (*q == '[') { /* a[i] = ... assigns a */
                        int d = 0;
                        for (; *q; q++) {
                                d += *q == '[' ? 1 : *q == ']' ? -1 : 0;
                                if (!d)
                                        break;
                        }
                        q += *q ? 1 : 0;
                        while (*q == ' ' || *q == '\t')
                                q++;
                }
                const char *b = p;
                while (b > s && (b[-1] == ' ' || b[-1] == '\t'))
                        b--;
                bool pre = b - s >= 2 && ((b[-1] == '+' && b[-2] == '+') || (b[-1] == '-' && b[-2] == '-'));
                bool post = (q[0] == '+' && q[1] == '+') || (q[0] == '-' && q[1] == '-');
                bool asg = (q[0] == '=' && q[1] != '=') ||
                           (q[0] && strchr("+-*/%&|^", q[0]) && q[1] == '=') ||
                           ((q[0] == '<' || q[0] == '>') && q[1] == q[0] && q[2] == '=');
                if (pre || post || asg)
                        vars_set_unknown(P->vars, p, (size_t)(e - p));
                p = e;
        }
}

/* Arithmetic evaluation looks up every name in the expression and evaluates its value as
 * an expression in turn; a value holding an array subscript runs the substitutions in it
 * (x='a[$(rm -rf ~)]'; echo $((x))).  So the values of the names are judged too. */
void parse_arith_scan(struct psh *P, const char *s, int depth)
{
        if (depth > 8)
                return;
        for (const char *p = s; *p && !P->err;) {
                if (!is_name_start((unsigned char)*p) || (p > s && is_name_char((unsigned char)p[-1]))) {
                        p++;
                        continue;
                }
                const char *e = p;
                while (is_name_char((unsigned char)*e))
                        e++;
                char name[128];
                if ((size_t)(e - p) < sizeof(name)) {
                        memcpy(name, p, (size_t)(e - p));
                        name[e - p] = 0;
                        struct vals v;
                        if (parse_var_get(P, name, &v)) {
                                struct vals c = vals_copy(&v);
                                for (unsigned k = 0; k < c.n && !P->err; k++) {
                                        if (strstr(c.v[k], "$(") || strchr(c.v[k], '`') ||
                                            strstr(c.v[k], "${"))
                                                parse_substs_in(P, c.v[k], strlen(c.v[k]));
                                        parse_arith_scan(P, c.v[k], depth + 1);
                                }
                                vals_free(&c);
                        }
                }
                p = e;
        }
}

/* A word used as a variable name (printf -v, read, declare, unset, [[ -v ]], let): an
 * array subscript in it is evaluated, substitutions and all. */
void parse_name_scan(struct psh *P, const char *s)
{
        const char *b = strchr(s, '[');
        if (!b)
                return;
        if (strstr(b, "$(") || strchr(b, '`') || strstr(b, "${"))
                parse_substs_in(P, b, strlen(b));
        parse_arith_scan(P, b, 0);
}

/* (( ... )), $(( ... )), arr=( ... ): read without their words' meaning, but the
 * substitutions inside still run, and an arithmetic expression evaluates names' values
 * (their subscripts run too) and assigns some. */
void parse_skip_arith(struct psh *P, bool arith)
{
        size_t start = P->i;
        skip_parens(P);
        if (P->err)
                return;
        struct psh C = {.sc = P->sc, .s = P->s + start, .n = P->i - start, .depth = P->depth + 1,
                        .vars = P->vars, .parent = P};
        C.pos = (struct srcpos){.direct = false, .outer_off = parse_cmd_offset(P)};
        C.fr_base = P->vars->nfr;
        while (C.i < C.n && !C.err) {
                struct word w = {0};
                if (C.s[C.i] == '$' && C.i + 1 < C.n && C.s[C.i + 1] == '(' &&
                    !(C.i + 2 < C.n && C.s[C.i + 2] == '(')) {
                        C.i += 2;
                        parse_cmd_subst(&C, &w, true);
                } else if (C.s[C.i] == '$' && C.i + 1 < C.n && C.s[C.i + 1] == '{')
                        parse_dollar(&C, &w, true);
                else if (C.s[C.i] == '`')
                        parse_backtick(&C, &w, true);
                else
                        C.i++;
                free(w.b.s);
        }
        frame_close_to(P->vars, C.fr_base);
        parse_psh_free(&C);
        if (C.err)
                P->err = true;
        if (arith && !P->err) {
                char *text = strndup(P->s + start, P->i - start);
                if (!text)
                        abort();
                parse_arith_scan(P, text, 0);
                parse_arith_assigns(P, text);
                free(text);
        }
}
