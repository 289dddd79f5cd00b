/* A shell parser that finds the simple commands a script would run.
 *
 * It follows the POSIX sh grammar plus the bash forms agents use, but builds no tree: the
 * policy needs every simple command (with its expanded words, redirections, pipeline
 * position and here-document), not the control flow, so compound commands are read flat
 * and every branch counts as run.  Values that cannot be known (parameters, command
 * output) become UNK so that the matcher treats them as unknown rather than safe.
 * Parse errors add an @parse-error finding: a guard must fail closed on what it cannot
 * read, since the real shell may read it differently. */
#define _GNU_SOURCE
#include "pol.h"

#include <ctype.h>

/* ---- growable byte buffer ---- */

struct sb {
        char *s;
        size_t n, cap;
};

static void sb_putc(struct sb *b, char c)
{
        if (b->n + 2 > b->cap) {
                b->cap = b->cap ? b->cap * 2 : 32;
                b->s = xrealloc(b->s, b->cap);
        }
        b->s[b->n++] = c;
        b->s[b->n] = 0;
}

static void sb_put(struct sb *b, const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                sb_putc(b, s[i]);
}

static char *sb_take(struct sb *b)
{
        char *s = b->s ? b->s : xstrdup("");
        b->s = NULL;
        b->n = b->cap = 0;
        return s;
}

/* ---- parser state ---- */

#define SPLIT '\002' /* a field-splitting point from an unquoted known expansion */

struct vars {
        char *name[POL_MAX_VARS];
        char *val[POL_MAX_VARS]; /* NULL: unknown */
        size_t n;
        bool full; /* an assignment found no room: from then on no value is known */
};

struct psh {
        struct scan *sc;
        const char *s;
        size_t n, i;
        struct srcpos pos;
        int depth;      /* nesting of derived strings (sh -c, eval ...) */
        int nest;       /* nesting of ( ) and $( ) within this string */
        int pipe_id, stage;
        int case_depth;
        bool case_pat;
        size_t hd_from, hd_to; /* at the newline hd_from, skip to hd_to (here-doc bodies) */
        bool hd_active;
        size_t cmd_start;
        struct vars *vars;
        struct strvec funcs, fbodies; /* defined functions and their bodies ("" unknown) */
        struct psh *parent;           /* the string this one was found in */
        const char *in_func;          /* the function whose body this is */
        const char *in_args;          /* ... and the arguments it is read with */
        bool err;
};

struct word {
        struct sb b;
        bool any, quoted, unk, dl;
};

struct redirs {
        struct strvec writes, reads;
        char *stdin_text;
};

static void parse_list(struct psh *P, char term);

static void perr(struct psh *P, const char *what)
{
        if (P->err)
                return;
        P->err = true;
        size_t from = P->cmd_start < P->n ? P->cmd_start : P->n;
        char *text = xasprintf("%.200s", P->s + from);
        scan_finding(P->sc, "@parse-error", what, text,
                     P->pos.direct ? P->pos.base + (int)P->cmd_start : P->pos.outer_off);
        free(text);
}

/* A limit was reached: fail closed like a parse error, but say which. */
static void plimit(struct psh *P, const char *what)
{
        if (P->err)
                return;
        P->err = true;
        scan_finding(P->sc, "@limit-exceeded", what, "",
                     P->pos.direct ? P->pos.base + (int)P->cmd_start : P->pos.outer_off);
}

static int cur(const struct psh *P) { return P->i < P->n ? (unsigned char)P->s[P->i] : -1; }
static int at(const struct psh *P, size_t k)
{
        return P->i + k < P->n ? (unsigned char)P->s[P->i + k] : -1;
}

static bool is_meta(int c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
               c == '>' || c == '(' || c == ')' || c == -1;
}

static bool is_name_start(int c) { return c == '_' || isalpha(c); }
static bool is_name_char(int c) { return c == '_' || isalnum(c); }

static int cmd_offset(const struct psh *P)
{
        return P->pos.direct ? P->pos.base + (int)P->cmd_start : P->pos.outer_off;
}

/* ---- variables ---- */

static const char *var_get(struct psh *P, const char *name, bool *known)
{
        *known = false;
        /* A table that overflowed dropped an assignment: any name may have changed since,
         * even HOME, so no value is known (x=echo ... 256 more ... x=rm; $x -rf ~). */
        if (P->vars->full)
                return NULL;
        for (size_t k = P->vars->n; k-- > 0;)
                if (!strcmp(P->vars->name[k], name)) {
                        *known = P->vars->val[k] != NULL;
                        return P->vars->val[k];
                }
        const struct policy_ctx *ctx = P->sc->ctx;
        *known = true;
        /* These are fixed by the environment txbox runs the command in. */
        if (!strcmp(name, "HOME") && ctx->home)
                return ctx->home;
        if (!strcmp(name, "PWD") && ctx->cwd)
                return ctx->cwd;
        if (!strcmp(name, "TMPDIR"))
                return "/tmp";
        *known = false;
        return NULL;
}

/* A new entry for name (it shadows older ones until popped: a function's $1). */
static void var_push(struct psh *P, const char *name, size_t nlen, const char *val)
{
        struct vars *v = P->vars;
        if (v->n == POL_MAX_VARS) {
                v->full = true;
                return;
        }
        v->name[v->n] = strndup(name, nlen);
        if (!v->name[v->n])
                abort();
        v->val[v->n] = val ? xstrdup(val) : NULL;
        v->n++;
}

/* An assignment: the newest entry of that name takes the value, so that reassigning one
 * variable in a loop of commands does not use up the table. */
static void var_set(struct psh *P, const char *name, size_t nlen, const char *val)
{
        struct vars *v = P->vars;
        for (size_t k = v->n; k-- > 0;)
                if (strlen(v->name[k]) == nlen && !memcmp(v->name[k], name, nlen)) {
                        free(v->val[k]);
                        v->val[k] = val ? xstrdup(val) : NULL;
                        return;
                }
        var_push(P, name, nlen, val);
}

/* Text the parser copies beyond the input itself (expanded values, function bodies) counts
 * against one budget per decision: x=$x$x doubles a word with each assignment. */
static bool spend(struct psh *P, size_t n)
{
        struct scan *sc = P->sc;
        if (n <= POL_MAX_COPIED && sc->copied <= POL_MAX_COPIED - n) {
                sc->copied += n;
                return true;
        }
        if (!sc->failed)
                scan_finding(sc, "@limit-exceeded", "expansions too large", "", -1);
        P->err = true;
        return false;
}

/* ---- words ---- */

static void put_value(struct psh *P, struct word *w, const char *v, bool quoted)
{
        if (!spend(P, strlen(v)))
                return;
        for (; *v; v++)
                sb_putc(&w->b, !quoted && (*v == ' ' || *v == '\t' || *v == '\n') ? SPLIT : *v);
}

static void put_unk(struct word *w)
{
        sb_putc(&w->b, UNK);
        w->unk = true;
}

static bool is_downloader(const char *p)
{
        static const char *const dl[] = {"curl", "wget", "fetch", "aria2c", "http", "https",
                                         "lwp-download", "lwp-request", "GET", "nc", "ncat",
                                         "netcat", "socat", "telnet", "ftp", "tftp", "@net"};
        for (size_t k = 0; k < ARRAY_SIZE(dl); k++)
                if (!strcmp(p, dl[k]))
                        return true;
        return false;
}

/* After a substitution added commands [n0, n): its output is known only for a plain echo
 * of known words (agents write $(echo x) to build names). */
static void subst_result(struct psh *P, struct word *w, size_t n0, bool quoted)
{
        struct scan *sc = P->sc;
        for (size_t k = n0; k < sc->n; k++)
                if (sc->cmds[k].argv.n && is_downloader(base_name(sc->cmds[k].argv.v[0])))
                        w->dl = true;
        if (sc->n == n0 + 1 && !strcmp(sc->cmds[n0].argv.v[0], "echo")) {
                struct scmd *c = &sc->cmds[n0];
                char *r = render_argv(c->argv.v + 1, SIZE_MAX);
                if (!has_unk(r) && (c->argv.n < 2 || c->argv.v[1][0] != '-')) {
                        put_value(P, w, r, quoted);
                        free(r);
                        return;
                }
                free(r);
        }
        put_unk(w);
}

static void cmd_subst(struct psh *P, struct word *w, bool quoted)
{
        size_t n0 = P->sc->n;
        int pid = P->pipe_id, st = P->stage, cd = P->case_depth;
        bool cp = P->case_pat;
        size_t cs = P->cmd_start;
        P->case_depth = 0;
        P->case_pat = false;
        parse_list(P, ')');
        P->pipe_id = pid, P->stage = st, P->case_depth = cd, P->case_pat = cp, P->cmd_start = cs;
        subst_result(P, w, n0, quoted);
}

static void parse_derived_fn(struct psh *P, const char *s, size_t n, const char *in_func,
                             const char *in_args)
{
        struct psh C = {.sc = P->sc, .s = s, .n = n, .depth = P->depth + 1, .vars = P->vars,
                        .parent = P, .in_func = in_func, .in_args = in_args};
        C.pos = (struct srcpos){.direct = false, .outer_off = cmd_offset(P)};
        C.pipe_id = P->sc->next_pipe++;
        if (C.depth > POL_MAX_DEPTH) {
                scan_finding(P->sc, "@limit-exceeded", "nesting too deep", "", cmd_offset(P));
                return;
        }
        parse_list(&C, 0);
        strv_free(C.funcs.v);
        strv_free(C.fbodies.v);
        if (C.err)
                P->err = true;
}

static void parse_derived(struct psh *P, const char *s, size_t n)
{
        parse_derived_fn(P, s, n, NULL, NULL);
}

static void backtick(struct psh *P, struct word *w, bool quoted)
{
        struct sb body = {0};
        P->i++;
        while (cur(P) != '`') {
                if (cur(P) == -1) {
                        free(body.s);
                        return perr(P, "unterminated backquote");
                }
                if (cur(P) == '\\' && (at(P, 1) == '`' || at(P, 1) == '\\' || at(P, 1) == '$'))
                        P->i++;
                sb_putc(&body, (char)cur(P));
                P->i++;
        }
        P->i++;
        size_t n0 = P->sc->n;
        parse_derived(P, body.s ? body.s : "", body.n);
        free(body.s);
        subst_result(P, w, n0, quoted);
}

/* Skip balanced parentheses from P->i (at an opening one). */
static void skip_parens(struct psh *P)
{
        int d = 0;
        do {
                int c = cur(P);
                if (c == -1)
                        return perr(P, "unbalanced parentheses");
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

/* (( ... )), $(( ... )), arr=( ... ): skipped, but the substitutions inside still run
 * (their words are arithmetic, not commands). */
static void skip_arith(struct psh *P)
{
        size_t start = P->i;
        skip_parens(P);
        if (P->err)
                return;
        struct psh C = {.sc = P->sc, .s = P->s + start, .n = P->i - start, .depth = P->depth + 1,
                        .vars = P->vars, .parent = P};
        C.pos = (struct srcpos){.direct = false, .outer_off = cmd_offset(P)};
        while (C.i < C.n && !C.err) {
                struct word w = {0};
                if (C.s[C.i] == '$' && C.i + 1 < C.n && C.s[C.i + 1] == '(' && !(C.i + 2 < C.n && C.s[C.i + 2] == '(')) {
                        C.i += 2;
                        cmd_subst(&C, &w, true);
                } else if (C.s[C.i] == '`')
                        backtick(&C, &w, true);
                else
                        C.i++;
                free(w.b.s);
        }
        strv_free(C.funcs.v);
        strv_free(C.fbodies.v);
        if (C.err)
                P->err = true;
}

static int hexval(int c)
{
        return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

static void put_utf8(struct sb *b, unsigned long u)
{
        if (u < 0x80)
                sb_putc(b, (char)u);
        else if (u < 0x800) {
                sb_putc(b, (char)(0xc0 | u >> 6));
                sb_putc(b, (char)(0x80 | (u & 0x3f)));
        } else {
                sb_putc(b, (char)(0xe0 | (u >> 12 & 0x0f)));
                sb_putc(b, (char)(0x80 | (u >> 6 & 0x3f)));
                sb_putc(b, (char)(0x80 | (u & 0x3f)));
        }
}

/* One backslash escape of $'...' (or printf / echo -e); s points after the backslash.
 * Returns the characters consumed. */
size_t c_escape(const char *s, size_t n, struct sb *out);
size_t c_escape(const char *s, size_t n, struct sb *out)
{
        static const char from[] = "abefnrtv\\'\"?", to[] = "\a\b\033\f\n\r\t\v\\'\"?";
        if (!n)
                return 0;
        const char *m = strchr(from, s[0]);
        if (m && s[0]) {
                sb_putc(out, to[m - from]);
                return 1;
        }
        size_t k = 1;
        unsigned long v = 0;
        if (s[0] == 'x' || s[0] == 'u' || s[0] == 'U') {
                size_t max = s[0] == 'x' ? 2 : s[0] == 'u' ? 4 : 8;
                while (k <= max && k < n && hexval((unsigned char)s[k]) >= 0)
                        v = v * 16 + (unsigned long)hexval((unsigned char)s[k++]);
                if (s[0] == 'x')
                        sb_putc(out, (char)v);
                else
                        put_utf8(out, v);
                return k;
        }
        if (s[0] >= '0' && s[0] <= '7') {
                k = 0;
                while (k < 3 && k < n && s[k] >= '0' && s[k] <= '7')
                        v = v * 8 + (unsigned long)(s[k++] - '0');
                sb_putc(out, (char)v);
                return k;
        }
        if (s[0] == 'c' && n > 1) {
                sb_putc(out, (char)(s[1] & 0x1f));
                return 2;
        }
        sb_putc(out, '\\');
        sb_putc(out, s[0]);
        return 1;
}

static void ansi_c(struct psh *P, struct word *w)
{
        P->i += 2;
        while (cur(P) != '\'') {
                if (cur(P) == -1)
                        return perr(P, "unterminated $'...'");
                if (cur(P) == '\\') {
                        P->i++;
                        P->i += c_escape(P->s + P->i, P->n - P->i, &w->b);
                } else
                        sb_putc(&w->b, (char)P->s[P->i++]);
        }
        P->i++;
        w->quoted = true;
}

/* ${...}: known only for a plain or defaulted lookup of a known variable. */
static void braced(struct psh *P, struct word *w, bool quoted)
{
        size_t start = P->i + 2, k = start;
        int d = 1;
        for (; k < P->n && d; k++) {
                char c = P->s[k];
                if (c == '\\')
                        k++;
                else if (c == '{')
                        d++;
                else if (c == '}')
                        d--;
                else if (c == '\'' || c == '"') {
                        char q = c;
                        for (k++; k < P->n && P->s[k] != q; k++)
                                ;
                }
        }
        if (d)
                return perr(P, "unterminated ${...}");
        size_t end = k - 1, nl = 0; /* s[end] == '}' */
        while (start + nl < end && is_name_char((unsigned char)P->s[start + nl]))
                nl++;
        P->i = k;
        char name[128];
        const char *op = P->s + start + nl;
        bool plain = nl && nl < sizeof(name) && (op == P->s + end || *op == ':' || *op == '-');
        if (plain && *op == ':' && op[1] != '-' && op[1] != '=')
                plain = false;
        if (!plain)
                return put_unk(w);
        memcpy(name, P->s + start, nl);
        name[nl] = 0;
        bool known;
        const char *v = var_get(P, name, &known);
        if (known && v && *v)
                put_value(P, w, v, quoted);
        else
                put_unk(w);
}

static void dollar(struct psh *P, struct word *w, bool quoted)
{
        int c1 = at(P, 1);
        if (c1 == '\'' && !quoted)
                return ansi_c(P, w);
        if (c1 == '"' && !quoted) {
                P->i++;
                return;
        }
        if (c1 == '(' && at(P, 2) == '(') {
                P->i++;
                skip_arith(P);
                return put_unk(w);
        }
        if (c1 == '(') {
                P->i += 2;
                if (++P->nest > POL_MAX_DEPTH * 4)
                        return plimit(P, "nesting too deep");
                cmd_subst(P, w, quoted);
                P->nest--;
                return;
        }
        if (c1 == '{')
                return braced(P, w, quoted);
        if (is_name_start(c1)) {
                size_t s = ++P->i, nl = 0;
                while (is_name_char(cur(P)))
                        P->i++, nl++;
                char name[128];
                if (nl >= sizeof(name))
                        return put_unk(w);
                memcpy(name, P->s + s, nl);
                name[nl] = 0;
                bool known;
                const char *v = var_get(P, name, &known);
                if (known && v)
                        put_value(P, w, v, quoted);
                else
                        put_unk(w);
                return;
        }
        if (c1 >= '1' && c1 <= '9') { /* set while a function call is re-read */
                char name[2] = {(char)c1, 0};
                bool known;
                const char *v = var_get(P, name, &known);
                P->i += 2;
                if (known && v)
                        put_value(P, w, v, quoted);
                else
                        put_unk(w);
                return;
        }
        if (c1 != -1 && strchr("0123456789@*#?$!-", c1)) {
                P->i += 2;
                return put_unk(w);
        }
        sb_putc(&w->b, '$');
        P->i++;
}

static void dquote(struct psh *P, struct word *w)
{
        P->i++;
        w->quoted = true;
        for (;;) {
                int c = cur(P);
                if (c == -1)
                        return perr(P, "unterminated double quote");
                if (c == '"')
                        break;
                if (c == '\\' && at(P, 1) != -1 && strchr("$`\"\\\n", at(P, 1))) {
                        if (at(P, 1) != '\n')
                                sb_putc(&w->b, P->s[P->i + 1]);
                        P->i += 2;
                } else if (c == '$')
                        dollar(P, w, true);
                else if (c == '`')
                        backtick(P, w, true);
                else
                        sb_putc(&w->b, P->s[P->i++]);
                if (P->err)
                        return;
        }
        P->i++;
}

static void procsubst(struct psh *P, struct word *w)
{
        P->i += 2;
        if (++P->nest > POL_MAX_DEPTH * 4)
                return plimit(P, "nesting too deep");
        size_t n0 = P->sc->n;
        int pid = P->pipe_id, st = P->stage;
        parse_list(P, ')');
        P->pipe_id = pid, P->stage = st;
        P->nest--;
        subst_result(P, w, n0, true);
        /* <(...) is a path to a pipe, never its output as text. */
        w->b.n = 0;
        put_unk(w);
}

static void tilde(struct psh *P, struct word *w)
{
        int c1 = at(P, 1);
        if (c1 == '/' || is_meta(c1)) {
                bool known; /* ~ is $HOME, which the string may have assigned */
                const char *h = var_get(P, "HOME", &known);
                P->i++;
                if (known && h)
                        sb_put(&w->b, h, spend(P, strlen(h)) ? strlen(h) : 0);
                else
                        put_unk(w);
                return;
        }
        sb_putc(&w->b, '~'); /* ~user: another user's home; kept literal (outside everything) */
        P->i++;
}

/* Read one word (expansions done as far as they can be known).  False at an operator. */
static bool read_word(struct psh *P, struct word *w)
{
        memset(w, 0, sizeof(*w));
        size_t start = P->i;
        for (;;) {
                int c = cur(P);
                if (P->err)
                        return false;
                if ((c == '<' || c == '>') && at(P, 1) == '(' && P->i == start) {
                        procsubst(P, w);
                        w->any = true;
                        continue;
                }
                if (c == '(' && w->b.n && w->b.s[w->b.n - 1] == '=' && !w->quoted) {
                        skip_arith(P); /* arr=(...) */
                        put_unk(w);
                        continue;
                }
                if (is_meta(c))
                        break;
                w->any = true;
                switch (c) {
                case '\\':
                        if (at(P, 1) == '\n')
                                P->i += 2;
                        else if (at(P, 1) == -1)
                                P->i++;
                        else {
                                sb_putc(&w->b, P->s[P->i + 1]);
                                P->i += 2;
                                w->quoted = true;
                        }
                        break;
                case '\'': {
                        const char *e = memchr(P->s + P->i + 1, '\'', P->n - P->i - 1);
                        if (!e) {
                                perr(P, "unterminated single quote");
                                return false;
                        }
                        sb_put(&w->b, P->s + P->i + 1, (size_t)(e - P->s) - P->i - 1);
                        P->i = (size_t)(e - P->s) + 1;
                        w->quoted = true;
                        break;
                }
                case '"': dquote(P, w); break;
                case '$': dollar(P, w, false); break;
                case '`': backtick(P, w, false); break;
                case '~':
                        if (P->i == start)
                                tilde(P, w);
                        else
                                sb_putc(&w->b, P->s[P->i++]);
                        break;
                default: sb_putc(&w->b, P->s[P->i++]);
                }
        }
        return w->any && !P->err;
}

/* Push a word's fields (split at unquoted known expansions) onto v. */
static void push_fields(struct strvec *v, struct word *w)
{
        char *s = sb_take(&w->b);
        if (!strchr(s, SPLIT)) {
                strvec_push(v, s);
                return;
        }
        char *save = NULL, *sep = (char[]){SPLIT, 0};
        for (char *t = strtok_r(s, sep, &save); t; t = strtok_r(NULL, sep, &save))
                strvec_push(v, xstrdup(t));
        free(s);
}

static char *word_str(struct word *w)
{
        char *s = sb_take(&w->b);
        for (char *p = s; *p; p++)
                if (*p == SPLIT)
                        *p = ' ';
        return s;
}

/* ---- blanks, comments, here-documents ---- */

static void skip_blanks(struct psh *P)
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
static void take_newline(struct psh *P)
{
        if (P->hd_active && P->i == P->hd_from) {
                P->i = P->hd_to;
                P->hd_active = false;
        } else
                P->i++;
}

static void skip_space(struct psh *P) /* blanks, newlines, comments */
{
        for (;;) {
                skip_blanks(P);
                if (cur(P) == '#')
                        skip_comment(P);
                else if (cur(P) == '\n')
                        take_newline(P);
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
        if (k < P->n && (P->s[k] == '<' || P->s[k] == '>'))
                return !(k + 1 < P->n && P->s[k + 1] == '(');
        return P->s[P->i] == '&' && P->i + 1 < P->n && P->s[P->i + 1] == '>';
}

static void parse_redir(struct psh *P, struct redirs *r)
{
        while (isdigit(cur(P)))
                P->i++;
        char op[4] = {0};
        size_t k = 0;
        while (k < 3 && (cur(P) == '<' || cur(P) == '>' || cur(P) == '&' || cur(P) == '|' ||
                         (cur(P) == '-' && k && op[0] == '<' && op[1] == '<'))) {
                if (cur(P) == '|' && strcmp(op, ">"))
                        break;
                op[k++] = (char)P->s[P->i++];
        }
        skip_blanks(P);
        struct word w;
        if (!read_word(P, &w)) {
                free(w.b.s);
                return perr(P, "redirection without a target");
        }
        bool in = op[0] == '<';
        if (!strcmp(op, "<<") || !strcmp(op, "<<-")) {
                char *d = word_str(&w);
                free(r->stdin_text);
                r->stdin_text = heredoc_body(P, d, op[2] == '-');
                free(d);
                return;
        }
        char *t = word_str(&w);
        if (!strcmp(op, "<<<")) {
                free(r->stdin_text);
                r->stdin_text = has_unk(t) ? NULL : xasprintf("%s\n", t);
                free(t);
                return;
        }
        if ((!strcmp(op, ">&") || !strcmp(op, "<&")) && (isdigit((unsigned char)t[0]) || !strcmp(t, "-"))) {
                free(t); /* duplicating a descriptor opens nothing */
                return;
        }
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

static void parse_derived(struct psh *P, const char *s, size_t n);

/* Variables whose value a program runs as a command (PAGER=..., LESSOPEN='|cmd %s'). */
static bool command_var(const char *name, size_t nl)
{
        static const char *const vars[] = {"PAGER", "MANPAGER", "GIT_PAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL",
                                           "GIT_EDITOR", "LESSOPEN", "LESSCLOSE", "GIT_SSH_COMMAND", "GIT_SSH",
                                           "GIT_EXTERNAL_DIFF", "RESTIC_PASSWORD_COMMAND", "PERL5DB", "PROMPT_COMMAND",
                                           "BASH_ENV", "ENV", "CRASHPAGER", "SUDO_ASKPASS", "SSH_ASKPASS", "BROWSER"};
        for (size_t k = 0; k < ARRAY_SIZE(vars); k++)
                if (strlen(vars[k]) == nl && !memcmp(vars[k], name, nl))
                        return true;
        return false;
}

static void assign(struct psh *P, const char *raw, struct word *w)
{
        size_t nl = 0;
        while (is_name_char((unsigned char)raw[nl]))
                nl++;
        char *v = word_str(w);
        const char *eq = strchr(v, '=');
        const char *val = eq ? eq + 1 : "";
        bool plain = raw[nl] == '=';
        var_set(P, raw, nl, plain && !has_unk(val) ? val : NULL);
        if (command_var(raw, nl) && *val && !P->err) {
                const char *cmd = val + strspn(val, "|");
                if (!strcmp(raw, "PERL5DB") || !strncmp(raw, "PERL5DB=", 8))
                        cmd = "";
                parse_derived(P, cmd, strlen(cmd));
        }
        free(v);
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

static bool is_func(struct psh *P, const char *name) { return func_body(P, name) != NULL; }

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

static void add_func(struct psh *P, char *name)
{
        if (P->funcs.n >= POL_MAX_FUNCS) {
                free(name);
                return plimit(P, "too many functions");
        }
        char *body = capture_body(P);
        if (!spend(P, strlen(body))) {
                free(name);
                free(body);
                return;
        }
        strvec_push(&P->funcs, name);
        strvec_push(&P->fbodies, body);
}

/* A call of a known function: read its body again with $1..$9 bound to the arguments,
 * so that f() { rm -rf "$1"; }; f / is seen as rm -rf /. */
static void inline_call(struct psh *P, char **argv, size_t argc)
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
                return plimit(P, "too many function calls");
        }
        P->sc->inlines++;
        size_t nv = P->vars->n;
        for (size_t k = 1; k < argc && k <= 9; k++) {
                char name[2] = {(char)('0' + k), 0};
                var_push(P, name, 1, has_unk(argv[k]) ? NULL : argv[k]);
        }
        char *b = xstrdup(body), *fn = xstrdup(argv[0]);
        parse_derived_fn(P, b, strlen(b), fn, args);
        free(b);
        free(fn);
        free(args);
        while (P->vars->n > nv) {
                P->vars->n--;
                free(P->vars->name[P->vars->n]);
                free(P->vars->val[P->vars->n]);
        }
}

/* local/declare/export NAME=VALUE assign like a bare NAME=VALUE. */
static void declare_vars(struct psh *P, char **argv, size_t argc)
{
        static const char *const decl[] = {"local", "declare", "typeset", "export", "readonly"};
        bool is_decl = false;
        for (size_t k = 0; k < ARRAY_SIZE(decl); k++)
                is_decl |= !strcmp(argv[0], decl[k]);
        /* local (and declare, typeset in a function) shadow the variable until the function
         * returns: a new entry, popped with the function's $1..$9, never an update of the
         * caller's (x=rm; f() { local x=echo; }; f; $x -rf ~ runs rm). */
        bool scoped = is_decl && strcmp(argv[0], "export") && strcmp(argv[0], "readonly");
        for (size_t k = 1; is_decl && k < argc; k++) {
                const char *eq = strchr(argv[k], '=');
                if (argv[k][0] == '-' || !eq || !is_assignment(argv[k], strlen(argv[k])))
                        continue;
                (scoped ? var_push : var_set)(P, argv[k], (size_t)(eq - argv[k]), has_unk(eq + 1) ? NULL : eq + 1);
        }
}

static void emit(struct psh *P, struct strvec *argv, struct redirs *r, bool dl, size_t end)
{
        struct scan *sc = P->sc;
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
        if (P->stage > 0 && is_func(P, argv->v[0]))
                scan_finding(sc, "@fork-bomb", argv->v[0], text, cmd_offset(P));
        declare_vars(P, argv->v, argv->n);
        char **call = is_func(P, argv->v[0]) ? strv_dup(argv->v) : NULL;
        size_t callc = argv->n;
        struct scmd *c = scan_add(sc, argv, text, cmd_offset(P));
        free(text);
        if (!c) {
                strv_free(call);
                return;
        }
        c->pipe_id = P->pipe_id;
        c->stage = P->stage;
        c->writes = r->writes;
        c->reads = r->reads;
        c->stdin_text = r->stdin_text;
        c->dl_word = dl;
        memset(r, 0, sizeof(*r));
        unwrap_argv(sc, sc->n - 1, P->depth);
        if (call)
                inline_call(P, call, callc);
        strv_free(call);
}

/* name() { ...}: remember the name (fork bombs call it in a pipeline). */
static bool func_def(struct psh *P, struct strvec *argv)
{
        size_t save = P->i;
        skip_blanks(P);
        if (argv->n != 1 || cur(P) != '(')
                goto no;
        P->i++;
        skip_blanks(P);
        if (cur(P) != ')')
                goto no;
        P->i++;
        add_func(P, xstrdup(argv->v[0]));
        strv_free(argv->v);
        memset(argv, 0, sizeof(*argv));
        return true;
no:
        P->i = save;
        return false;
}

static void parse_simple(struct psh *P)
{
        struct strvec argv = {0};
        struct redirs r = {0};
        bool dl = false;
        for (;;) {
                skip_blanks(P);
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
                if (!read_word(P, &w)) {
                        free(w.b.s);
                        break;
                }
                dl |= w.dl;
                if (!argv.n && is_assignment(P->s + ws, P->i - ws)) {
                        char *raw = strndup(P->s + ws, P->i - ws);
                        assign(P, raw ? raw : "", &w);
                        free(raw);
                        continue;
                }
                if (argv.n >= POL_MAX_WORDS) {
                        free(w.b.s);
                        scan_finding(P->sc, "@limit-exceeded", "too many words", "", cmd_offset(P));
                        P->err = true;
                        break;
                }
                push_fields(&argv, &w);
                if (func_def(P, &argv))
                        break;
        }
        size_t end = P->i;
        if (!P->err)
                emit(P, &argv, &r, dl, end);
        strv_free(argv.v);
        strv_free(r.writes.v);
        strv_free(r.reads.v);
        free(r.stdin_text);
}

/* ---- compound commands, read flat ---- */

/* The reserved word at P->i (unquoted, followed by a delimiter), or NULL. */
static const char *peek_reserved(const struct psh *P)
{
        static const char *const words[] = {"if", "then", "else", "elif", "fi", "do", "done",
                                            "while", "until", "for", "select", "case", "esac",
                                            "in", "function", "time", "coproc", "{", "}", "!",
                                            "[[", "]]"};
        for (size_t k = 0; k < ARRAY_SIZE(words); k++) {
                size_t l = strlen(words[k]);
                if (P->i + l <= P->n && !memcmp(P->s + P->i, words[k], l)) {
                        int after = P->i + l < P->n ? (unsigned char)P->s[P->i + l] : -1;
                        if (is_meta(after) || (words[k][0] == '{' && after == '\n'))
                                return words[k];
                }
        }
        return NULL;
}

/* Skip words up to (not including) a separator, parsing their substitutions. */
static void skip_words(struct psh *P, bool stop_at_paren)
{
        for (;;) {
                skip_blanks(P);
                int c = cur(P);
                if (c == -1 || c == ';' || c == '\n' || c == '&' || (stop_at_paren && c == ')'))
                        return;
                if (c == '|' || c == '(' || c == ')' || c == '<' || c == '>') {
                        P->i++;
                        continue;
                }
                struct word w;
                bool got = read_word(P, &w);
                free(w.b.s);
                if (!got) {
                        if (!P->err)
                                P->i++;
                        if (P->err)
                                return;
                }
        }
}

static void for_loop(struct psh *P)
{
        skip_blanks(P);
        if (cur(P) == '(' && at(P, 1) == '(') {
                skip_arith(P);
                return;
        }
        struct word w;
        read_word(P, &w); /* the loop variable: unknown from here on */
        char *name = word_str(&w);
        var_set(P, name, strlen(name), NULL);
        free(name);
        skip_blanks(P);
        if (peek_reserved(P) && !strcmp(peek_reserved(P), "in")) {
                P->i += 2;
                skip_words(P, false);
        }
}

/* "case WORD in": the subject, up to the reserved word in. */
static void case_header(struct psh *P)
{
        for (int k = 0; k < 2 && !P->err; k++) {
                skip_space(P);
                struct word w;
                bool got = read_word(P, &w);
                bool in = got && !w.quoted && w.b.s && !strcmp(w.b.s, "in");
                free(w.b.s);
                if (!got || in)
                        return;
        }
}

static void case_pattern(struct psh *P)
{
        skip_space(P);
        const char *rw = peek_reserved(P);
        if (rw && !strcmp(rw, "esac")) {
                P->i += 4;
                P->case_depth--;
                P->case_pat = false;
                return;
        }
        if (cur(P) == '(')
                P->i++;
        skip_words(P, true);
        if (cur(P) == ')')
                P->i++;
        P->case_pat = false;
}

static void double_bracket(struct psh *P)
{
        for (;;) {
                skip_blanks(P);
                const char *rw = peek_reserved(P);
                if (rw && !strcmp(rw, "]]")) {
                        P->i += 2;
                        return;
                }
                int c = cur(P);
                if (c == -1 || c == '\n' || c == ';')
                        return perr(P, "unterminated [[");
                if (is_meta(c)) {
                        P->i++;
                        continue;
                }
                struct word w;
                read_word(P, &w);
                free(w.b.s);
                if (P->err)
                        return;
        }
}

/* Reserved words; returns true when a command may still follow on this line. */
static bool reserved(struct psh *P, const char *rw)
{
        P->i += strlen(rw);
        if (!strcmp(rw, "for") || !strcmp(rw, "select"))
                for_loop(P);
        else if (!strcmp(rw, "case")) {
                case_header(P);
                P->case_depth++;
                P->case_pat = true;
        } else if (!strcmp(rw, "function")) {
                skip_blanks(P);
                struct word w;
                char *name = read_word(P, &w) ? word_str(&w) : NULL;
                free(w.b.s);
                skip_blanks(P);
                if (cur(P) == '(' && at(P, 1) == ')')
                        P->i += 2;
                if (name)
                        add_func(P, name);
        } else if (!strcmp(rw, "esac"))
                P->case_depth--;
        else if (!strcmp(rw, "[["))
                double_bracket(P);
        return true;
}

/* "time -p CMD" and "time -f FMT CMD": bash's keyword takes -p, but sh (dash, what txbox
 * sh -c runs) has no such keyword and runs /usr/bin/time, whose options take values.  Read
 * as a command, the time wrapper finds CMD either way. */
static bool time_command(const struct psh *P, const char *rw)
{
        if (strcmp(rw, "time"))
                return false;
        size_t k = P->i + 4;
        while (k < P->n && (P->s[k] == ' ' || P->s[k] == '\t'))
                k++;
        return k < P->n && P->s[k] == '-';
}

static void parse_command(struct psh *P)
{
        for (;;) {
                skip_blanks(P);
                if (P->err || scan_over_time(P->sc)) {
                        if (!P->err && P->sc->failed)
                                P->err = true;
                        return;
                }
                P->cmd_start = P->i;
                if (P->case_pat) {
                        case_pattern(P);
                        continue;
                }
                if (cur(P) == '(' && at(P, 1) == '(') {
                        skip_arith(P); /* (( arithmetic )) */
                        break;
                }
                if (cur(P) == '(') {
                        P->i++;
                        if (++P->nest > POL_MAX_DEPTH * 4)
                                return plimit(P, "nesting too deep");
                        parse_list(P, ')');
                        P->nest--;
                        break;
                }
                const char *rw = peek_reserved(P);
                if (!rw || !strcmp(rw, "in") || !strcmp(rw, "]]") || time_command(P, rw))
                        break;
                reserved(P, rw);
                if (!strcmp(rw, "case"))
                        continue; /* its patterns come next */
                if (!strcmp(rw, "}") || !strcmp(rw, "fi") || !strcmp(rw, "done") ||
                    !strcmp(rw, "esac") || !strcmp(rw, "[[") || !strcmp(rw, "for") ||
                    !strcmp(rw, "select"))
                        break;
        }
        P->cmd_start = P->i;
        parse_simple(P); /* the command, or the redirections after a compound */
}

static void parse_pipeline(struct psh *P)
{
        int pid = P->pipe_id, st = P->stage;
        P->pipe_id = P->sc->next_pipe++;
        P->stage = 0;
        for (;;) {
                parse_command(P);
                skip_blanks(P);
                if (P->err || cur(P) != '|' || at(P, 1) == '|')
                        break;
                P->i += at(P, 1) == '&' ? 2 : 1;
                skip_space(P);
                if (cur(P) == -1 || strchr(";&|)", cur(P)))
                        return perr(P, "missing command after |");
                P->stage++;
        }
        P->pipe_id = pid, P->stage = st;
}

static void parse_list(struct psh *P, char term)
{
        for (;;) {
                skip_space(P);
                if (P->err)
                        return;
                int c = cur(P);
                if (c == -1) {
                        if (term)
                                perr(P, "missing ')'");
                        return;
                }
                if (term && c == term) {
                        P->i++;
                        return;
                }
                if (c == ')')
                        return perr(P, "unexpected ')'");
                if (c == ';' || c == '&' || c == '|')
                        return perr(P, "unexpected operator");
                size_t before = P->i;
                parse_pipeline(P);
                while (!P->err) { /* && || chains */
                        skip_blanks(P);
                        if (!((cur(P) == '&' && at(P, 1) == '&') || (cur(P) == '|' && at(P, 1) == '|')))
                                break;
                        P->i += 2;
                        skip_space(P);
                        if (cur(P) == -1 || strchr(";&|)", cur(P)))
                                return perr(P, "missing command after && or ||");
                        parse_pipeline(P);
                }
                skip_blanks(P);
                c = cur(P);
                if (c == ';' && at(P, 1) == ';') {
                        P->i += at(P, 2) == '&' ? 3 : 2;
                        if (P->case_depth > 0)
                                P->case_pat = true;
                } else if (c == ';' && at(P, 1) == '&') {
                        P->i += 2;
                        if (P->case_depth > 0)
                                P->case_pat = true;
                } else if (c == ';' || c == '&')
                        P->i++;
                else if (c == '\n')
                        take_newline(P);
                else if (P->i == before && c != -1 && c != term && !P->err)
                        return perr(P, "unexpected character");
        }
}

void parse_script(struct scan *sc, const char *s, size_t n, struct srcpos pos, int depth)
{
        struct vars *vars = xcalloc(1, sizeof(*vars));
        struct psh P = {.sc = sc, .s = s, .n = n, .pos = pos, .depth = depth, .vars = vars};
        if (n > POL_MAX_INPUT)
                scan_finding(sc, "@limit-exceeded", "input too long", "",
                             pos.direct ? pos.base : pos.outer_off);
        else if (depth > POL_MAX_DEPTH)
                scan_finding(sc, "@limit-exceeded", "nesting too deep", "", pos.outer_off);
        else if (memchr(s, 0, n))
                scan_finding(sc, "@parse-error", "NUL byte in input", "", pos.base);
        else
                parse_list(&P, 0);
        for (size_t k = 0; k < vars->n; k++)
                free(vars->name[k]), free(vars->val[k]);
        free(vars);
        strv_free(P.funcs.v);
        strv_free(P.fbodies.v);
}
