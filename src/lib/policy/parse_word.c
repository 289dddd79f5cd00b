/* Reading one word of a shell script (part of parse.c, see parse_int.h): quotes, escapes,
 * $-forms, tilde, process substitution, then brace expansion and the split into fields.
 * Apart from parse_expand.c because this is the lexer's job, character by character; what
 * an expansion's value is comes from there. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "base/mem.h"
#include "base/strv.h"
#include "policy/parse_int.h"

/* A value that is one of several: a marker the command is expanded at, once per value. */
static void put_vals(struct psh *P, struct word *w, const struct vals *v, bool quoted)
{
        if (!v->n)
                return parse_put_unk(w);
        if (v->n == 1)
                return parse_put_value(P, w, v->v[0], quoted);
        const char *ifs = quoted ? NULL : parse_ifs_chars(P);
        if ((!quoted && !ifs) || P->nalts >= MAX_ALTS)
                return parse_put_unk(w);
        size_t bytes = 0;
        for (unsigned k = 0; k < v->n; k++)
                bytes += strlen(v->v[k]) + 1;
        if (!parse_spend(P, bytes))
                return;
        if (P->nalts == P->capalts) {
                P->capalts = P->capalts ? P->capalts * 2 : 8;
                P->alts = xrealloc(P->alts, P->capalts * sizeof(*P->alts));
        }
        P->alts[P->nalts] = (struct alt){vals_copy(v), quoted ? NULL : xstrdup(ifs)};
        char num[32];
        snprintf(num, sizeof(num), "%c%zu%c", ALT_B, P->nalts++, ALT_E);
        sb_put(&w->b, num, strlen(num));
        w->alt = true;
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
static size_t c_escape(const char *s, size_t n, struct sb *out)
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
                        return parse_err(P, "unterminated $'...'");
                if (cur(P) == '\\') {
                        P->i++;
                        P->i += c_escape(P->s + P->i, P->n - P->i, &w->b);
                } else
                        sb_putc(&w->b, (char)P->s[P->i++]);
        }
        P->i++;
        w->quoted = true;
}

/* ${name@P} expands name's value as a prompt (its substitutions run); ${name@E} decodes
 * its escapes as $'...' does. */
static void braced_op(struct psh *P, struct word *w, const char *name, const char *op, bool quoted)
{
        struct vals v;
        bool known = parse_var_get(P, name, &v);
        if (!strncmp(op, "@P", 2)) {
                if (!known) {
                        parse_finding(P, "@unknown-command",
                                 "a prompt expansion (${x@P}) of a value that cannot be known");
                        return parse_put_unk(w);
                }
                struct vals c = vals_copy(&v);
                for (unsigned k = 0; k < c.n; k++)
                        parse_substs_in(P, c.v[k], strlen(c.v[k]));
                vals_free(&c);
                return parse_put_unk(w);
        }
        if (!strncmp(op, "@E", 2) && known && v.n == 1) {
                struct sb b = {0};
                const char *s = v.v[0];
                for (size_t k = 0, n = strlen(s); k < n;) {
                        if (s[k] == '\\' && k + 1 < n)
                                k += 1 + c_escape(s + k + 1, n - k - 1, &b);
                        else
                                sb_putc(&b, s[k++]);
                }
                char *d = sb_take(&b);
                parse_put_value(P, w, d, quoted);
                free(d);
                return;
        }
        parse_put_unk(w);
}

/* ${...}: known for a plain or defaulted lookup of a known variable.  Whatever else is in
 * it (a default word, a pattern, an offset) may run substitutions: they are judged. */
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
                return parse_err(P, "unterminated ${...}");
        size_t end = k - 1, nl = 0; /* s[end] == '}' */
        bool indirect = start < end && P->s[start] == '!';
        size_t ns = start + indirect;
        while (ns + nl < end && is_name_char((unsigned char)P->s[ns + nl]))
                nl++;
        P->i = k;
        char name[128];
        const char *op = P->s + ns + nl;
        if (!nl || nl >= sizeof(name))
                return parse_put_unk(w);
        memcpy(name, P->s + ns, nl);
        name[nl] = 0;
        /* what follows the name: judged for the commands it may run */
        if (op < P->s + end && (memmem(op, (size_t)(P->s + end - op), "$(", 2) ||
                                memchr(op, '`', (size_t)(P->s + end - op)) ||
                                memmem(op, (size_t)(P->s + end - op), "${", 2)))
                parse_substs_in(P, op, (size_t)(P->s + end - op));
        if (*op == '[') { /* ${a[i]}: the subscript is arithmetic */
                char *sub = strndup(op, (size_t)(P->s + end - op));
                if (!sub)
                        abort();
                parse_arith_scan(P, sub, 0);
                free(sub);
        }
        struct vals v;
        if (indirect) { /* ${!x}: the variable x names, subscript and all */
                if (!parse_var_get(P, name, &v)) {
                        parse_finding(P, "@unknown-command",
                                 "an indirect expansion (${!x}) of a name that cannot be known");
                        return parse_put_unk(w);
                }
                struct vals c = vals_copy(&v);
                for (unsigned j = 0; j < c.n; j++)
                        parse_name_scan(P, c.v[j]);
                if (c.n == 1 && op == P->s + end && strlen(c.v[0]) < sizeof(name) && !strchr(c.v[0], '[')) {
                        snprintf(name, sizeof(name), "%s", c.v[0]);
                        vals_free(&c);
                        if (parse_var_get(P, name, &v))
                                return put_vals(P, w, &v, quoted);
                        return parse_put_unk(w);
                }
                vals_free(&c);
                return parse_put_unk(w);
        }
        if (*op == '@')
                return braced_op(P, w, name, op, quoted);
        bool plain = op == P->s + end || *op == '-' || (*op == ':' && op[1] == '-');
        if (!plain)
                return parse_put_unk(w);
        bool known = parse_var_get(P, name, &v);
        bool empty = known && v.n == 1 && !*v.v[0];
        if (known && !(empty && *op == ':'))
                put_vals(P, w, &v, quoted);
        else
                parse_put_unk(w);
}

void parse_dollar(struct psh *P, struct word *w, bool quoted)
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
                parse_skip_arith(P, true);
                return parse_put_unk(w);
        }
        if (c1 == '(') {
                P->i += 2;
                if (++P->nest > POL_MAX_DEPTH * 4)
                        return parse_limit(P, "nesting too deep");
                parse_cmd_subst(P, w, quoted);
                P->nest--;
                return;
        }
        if (c1 == '[') { /* $[ expr ]: old arithmetic */
                P->i++;
                size_t s = P->i;
                while (cur(P) != -1 && cur(P) != ']')
                        P->i++;
                char *e = strndup(P->s + s, P->i - s);
                if (!e)
                        abort();
                if (cur(P) == ']')
                        P->i++;
                parse_substs_in(P, e, strlen(e));
                parse_arith_scan(P, e, 0);
                free(e);
                return parse_put_unk(w);
        }
        if (c1 == '{')
                return braced(P, w, quoted);
        if (is_name_start(c1)) {
                size_t s = ++P->i, nl = 0;
                while (is_name_char(cur(P)))
                        P->i++, nl++;
                char name[128];
                if (nl >= sizeof(name))
                        return parse_put_unk(w);
                memcpy(name, P->s + s, nl);
                name[nl] = 0;
                struct vals v;
                parse_var_get(P, name, &v);
                return put_vals(P, w, &v, quoted);
        }
        if (c1 >= '1' && c1 <= '9') { /* set while a function call is re-read */
                char name[2] = {(char)c1, 0};
                struct vals v;
                parse_var_get(P, name, &v);
                P->i += 2;
                return put_vals(P, w, &v, quoted);
        }
        if (c1 != -1 && strchr("0@*#?$!-", c1)) {
                P->i += 2;
                return parse_put_unk(w);
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
                        return parse_err(P, "unterminated double quote");
                if (c == '"')
                        break;
                if (c == '\\' && at(P, 1) != -1 && strchr("$`\"\\\n", at(P, 1))) {
                        if (at(P, 1) != '\n')
                                sb_putc(&w->b, P->s[P->i + 1]);
                        P->i += 2;
                } else if (c == '$')
                        parse_dollar(P, w, true);
                else if (c == '`')
                        parse_backtick(P, w, true);
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
                return parse_limit(P, "nesting too deep");
        size_t n0 = P->sc->n, fd;
        int pid = P->pipe_id, st = P->stage;
        parse_sub_begin(P, &fd);
        parse_list(P, ')');
        parse_sub_end(P, fd);
        P->pipe_id = pid, P->stage = st;
        P->nest--;
        parse_subst_result(P, w, n0, true);
        /* <(...) is a path to a pipe, never its output as text. */
        w->b.n = 0;
        parse_put_unk(w);
}

/* ~, ~/x, ~user, ~+ and ~-: the home directory is $HOME (which the string may have
 * assigned); the user's own name is their home too; another user's home is /home/NAME
 * (root's /root), outside everything the workspace may touch. */
static void tilde(struct psh *P, struct word *w)
{
        size_t k = P->i + 1;
        while (k < P->n && (is_name_char((unsigned char)P->s[k]) || P->s[k] == '-' || P->s[k] == '.') &&
               P->s[k] != '/')
                k++;
        size_t ul = k - P->i - 1;
        int after = k < P->n ? (unsigned char)P->s[k] : -1;
        if (after != '/' && !is_meta(after) && after != ':') {
                sb_putc(&w->b, '~'); /* ~"x" or ~$x: no expansion */
                P->i++;
                return;
        }
        struct vals v = {0};
        char *user = strndup(P->s + P->i + 1, ul);
        if (!user)
                abort();
        const char *home = P->sc->ctx->home;
        P->i = k;
        if (!ul)
                parse_var_get(P, "HOME", &v);
        else if (!strcmp(user, "+"))
                parse_var_get(P, "PWD", &v);
        else if (!strcmp(user, "-"))
                ;
        else if (home && !strcmp(user, base_name(home))) {
                struct vals h = vals_of(home);
                put_vals(P, w, &h, true);
                vals_free(&h);
                free(user);
                return;
        } else {
                char *o = !strcmp(user, "root") ? xstrdup("/root") : xasprintf("/home/%s", user);
                parse_put_value(P, w, o, true);
                free(o);
                free(user);
                return;
        }
        free(user);
        put_vals(P, w, &v, true);
}

/* Tilde expansion also follows = and : in an assignment-like word (x=~/a, PATH=a:~/b). */
static bool tilde_here(const struct psh *P, const struct word *w, size_t start)
{
        if (P->i == start)
                return true;
        if (!w->b.n || w->quoted)
                return false;
        char prev = w->b.s[w->b.n - 1];
        if (prev != '=' && prev != ':')
                return false;
        size_t k = 0;
        const char *s = w->b.s;
        if (!is_name_start((unsigned char)s[0]))
                return false;
        while (k < w->b.n && is_name_char((unsigned char)s[k]))
                k++;
        return k < w->b.n && (s[k] == '=' || (s[k] == '+' && s[k + 1] == '='));
}

/* Read one word (expansions done as far as they can be known).  False at an operator. */
bool parse_read_word(struct psh *P, struct word *w)
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
                        parse_skip_arith(P, false); /* arr=(...) */
                        parse_put_unk(w);
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
                                parse_err(P, "unterminated single quote");
                                return false;
                        }
                        sb_put(&w->b, P->s + P->i + 1, (size_t)(e - P->s) - P->i - 1);
                        P->i = (size_t)(e - P->s) + 1;
                        w->quoted = true;
                        break;
                }
                case '"': dquote(P, w); break;
                case '$': parse_dollar(P, w, false); break;
                case '`': parse_backtick(P, w, false); break;
                case '~':
                        if (tilde_here(P, w, start))
                                tilde(P, w);
                        else
                                sb_putc(&w->b, P->s[P->i++]);
                        break;
                case '{': sb_putc(&w->b, BR_O), P->i++; break;
                case ',': sb_putc(&w->b, BR_S), P->i++; break;
                case '}': sb_putc(&w->b, BR_C), P->i++; break;
                default: sb_putc(&w->b, P->s[P->i++]);
                }
        }
        return w->any && !P->err;
}

/* Brace markers back to the characters they stand for (where no expansion happens). */
static void unbrace(char *s)
{
        for (; *s; s++)
                *s = *s == BR_O ? '{' : *s == BR_S ? ',' : *s == BR_C ? '}' : *s;
}

/* The items of a sequence expression {a..b[..step]} (numbers or letters), or false. */
static bool brace_seq(const char *s, size_t n, struct strvec *items)
{
        char buf[64];
        if (n >= sizeof(buf))
                return false;
        memcpy(buf, s, n);
        buf[n] = 0;
        char *dots = strstr(buf, "..");
        if (!dots)
                return false;
        *dots = 0;
        char *b = dots + 2, *stp = strstr(b, "..");
        long step = 1;
        if (stp) {
                *stp = 0;
                step = strtol(stp + 2, NULL, 10);
        }
        step = labs(step ? step : 1);
        char *e1, *e2;
        long x = strtol(buf, &e1, 10), y = strtol(b, &e2, 10);
        bool num = *buf && *b && !*e1 && !*e2;
        if (!num) {
                if (strlen(buf) != 1 || strlen(b) != 1 || !isalpha((unsigned char)buf[0]) ||
                    !isalpha((unsigned char)b[0]))
                        return false;
                x = buf[0], y = b[0];
        }
        if (labs(y - x) / step + 1 > MAX_BRACE) { /* too many to list: some unknown items */
                strvec_push(items, xstrdup(UNK_S));
                return true;
        }
        for (long v = x; x <= y ? v <= y : v >= y; v += x <= y ? step : -step)
                strvec_push(items, num ? xasprintf("%ld", v) : xasprintf("%c", (char)v));
        return true;
}

/* Brace expansion of the unquoted { , } a word was typed with: a{b,c}d is abd acd. */
static void brace_expand(const char *s, struct strvec *out, size_t *budget)
{
        for (const char *o = s; (o = strchr(o, BR_O)); o++) {
                int d = 0;
                const char *c = o, *comma = NULL;
                for (; *c; c++) {
                        d += *c == BR_O ? 1 : *c == BR_C ? -1 : 0;
                        if (*c == BR_S && d == 1 && !comma)
                                comma = c;
                        if (!d)
                                break;
                }
                if (!*c)
                        break;
                struct strvec items = {0};
                if (comma) {
                        const char *p = o + 1;
                        d = 0;
                        for (const char *q = p; q <= c; q++) {
                                if (q < c) {
                                        d += *q == BR_O ? 1 : *q == BR_C ? -1 : 0;
                                        if (!(*q == BR_S && d == 0))
                                                continue;
                                }
                                char *it = strndup(p, (size_t)(q - p));
                                if (!it)
                                        abort();
                                strvec_push(&items, it);
                                p = q + 1;
                        }
                } else if (!brace_seq(o + 1, (size_t)(c - o - 1), &items))
                        continue;
                for (size_t k = 0; k < items.n; k++) {
                        if (!*budget) {
                                strvec_push(out, xstrdup(UNK_S));
                                break;
                        }
                        char *t = xasprintf("%.*s%s%s", (int)(o - s), s, items.v[k], c + 1);
                        brace_expand(t, out, budget);
                        free(t);
                }
                strv_free(items.v);
                return;
        }
        char *t = xstrdup(s);
        unbrace(t);
        if (*budget)
                --*budget;
        strvec_push(out, t);
}

/* Push a word's fields (brace-expanded, split at unquoted known expansions) onto v.  An
 * unquoted expansion that comes to nothing is no word at all: x=; $x rm -rf ~ runs rm. */
/* Tilde expansion of a word brace expansion made: {~,/tmp} is the home and /tmp. */
static char *tilde_word(struct psh *P, char *t)
{
        if (t[0] != '~')
                return t;
        size_t ul = strcspn(t + 1, "/");
        char *user = strndup(t + 1, ul);
        if (!user)
                abort();
        const char *home = P->sc->ctx->home, *v = NULL;
        char *own = NULL;
        if (!ul)
                v = parse_var_one(P, "HOME");
        else if (!strcmp(user, "+"))
                v = parse_var_one(P, "PWD");
        else if (!strcmp(user, "-"))
                v = NULL;
        else if (home && !strcmp(user, base_name(home)))
                v = home;
        else
                v = own = !strcmp(user, "root") ? xstrdup("/root") : xasprintf("/home/%s", user);
        char *r = xasprintf("%s%s", v ? v : UNK_S, t + 1 + ul);
        free(user);
        free(own);
        free(t);
        return r;
}

/* Push a word's fields (brace-expanded, split at unquoted known expansions) onto v.  An
 * unquoted expansion that comes to nothing is no word at all: x=; $x rm -rf ~ runs rm. */
void parse_push_fields(struct psh *P, struct strvec *v, struct word *w)
{
        char *s = sb_take(&w->b);
        struct strvec words = {0};
        size_t budget = MAX_BRACE;
        bool braced_word = strchr(s, BR_O) != NULL;
        if (braced_word)
                brace_expand(s, &words, &budget);
        else { /* a lone , or } is itself: no marker may reach a command's words */
                unbrace(s);
                strvec_push(&words, s);
                s = NULL;
        }
        free(s);
        for (size_t k = 0; k < words.n; k++) {
                char *t = braced_word ? tilde_word(P, words.v[k]) : words.v[k];
                if (!*t && !w->quoted) {
                        free(t);
                        continue;
                }
                if (!strchr(t, SPLIT)) {
                        strvec_push(v, t);
                        continue;
                }
                char *save = NULL, *sep = (char[]){SPLIT, 0};
                for (char *f = strtok_r(t, sep, &save); f; f = strtok_r(NULL, sep, &save))
                        strvec_push(v, xstrdup(f));
                free(t);
        }
        free(words.v);
}

char *parse_word_str(struct word *w)
{
        char *s = sb_take(&w->b);
        for (char *p = s; *p; p++)
                if (*p == SPLIT)
                        *p = ' ';
        unbrace(s);
        return s;
}
