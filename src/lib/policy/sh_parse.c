/* The shell parser: a string into a syntax tree (sh_ast.h), and nothing else.
 *
 * It reads the POSIX sh grammar plus the bash forms agents write ([[ ]], (( )), $'...',
 * arrays, here-strings, process substitution, coproc, function, select, ;& and ;;&) by
 * recursive descent, character by character, as the shell's own reader does: which
 * characters end a word depends on where the word is (a command, a case pattern, the
 * inside of ${...}, of [[ ]], of a here-document).  Command substitutions, arithmetic and
 * process substitutions are read into the tree in place; a backquoted command is read
 * again from its body with the backslashes the shell removes removed, into a tree of its
 * own, as the shell does.  Here-documents are read at the newline that follows their
 * redirection.
 *
 * Nothing here knows what a command means: the walker (walk.c) does.  Every construct
 * nests under SH_MAX_NEST, the tree holds at most SH_MAX_NODES nodes, and a failure to
 * read (a syntax error or a limit) keeps the complete commands read before it and says
 * where it happened: the walker judges those and refuses the rest. */
#define _GNU_SOURCE
#include "policy/sh_ast.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macros.h"
#include "base/mem.h"

#define MAX_WORDS 4096 /* words and redirections of one simple command */

/* Terminators a list may end at (and the reserved words that are them). */
enum {
        T_EOF = 1 << 0,
        T_RPAREN = 1 << 1,
        T_THEN = 1 << 2,
        T_ELSE = 1 << 3, /* else, elif */
        T_FI = 1 << 4,
        T_DO = 1 << 5,
        T_DONE = 1 << 6,
        T_ESAC = 1 << 7,
        T_RBRACE = 1 << 8,
        T_CASEEND = 1 << 9, /* ;; ;& ;;& */
};

/* word modes: what ends a word, and where ~ expands */
enum {
        W_ASSIGN = 1 << 0,  /* an assignment's value: ~ also after : */
        W_PATTERN = 1 << 1, /* a case pattern */
        W_BRACE = 1 << 2,   /* the operand of ${...}: } ends it, blanks are characters */
        W_COND = 1 << 3,    /* a word of [[ ]] */
        W_REGEX = 1 << 4,   /* the word after =~: ( ) | are characters */
        W_SUBSCRIPT = 1 << 5, /* [...] of ${a[...]}: ] ends it */
        W_CMDWORD = 1 << 6,   /* a command's first word: NAME[...] keeps its blanks */
};

struct hdpend {
        uint32_t node; /* its SH_HEREDOC */
        char *delim;
        bool strip, quoted;
};

struct chunk {
        struct chunk *next;
        char data[];
};

struct psr {
        struct sh_ast *a;
        const char *s;
        size_t n, i;
        int nest;
        struct hdpend hd[SH_MAX_HEREDOCS];
        size_t nhd;
        bool fail;
        size_t cmd_start;
};

/* ---- the tree ---- */

#define N(P, k) (&(P)->a->nodes[k])

static void fail(struct psr *P, enum sh_err e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(struct psr *P, enum sh_err e, const char *fmt, ...)
{
        if (P->fail)
                return;
        P->fail = true;
        struct sh_ast *a = P->a;
        a->err = e;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->errmsg, sizeof(a->errmsg), fmt, ap);
        va_end(ap);
        a->err_off = (uint32_t)(P->i < P->n ? P->i : P->n);
        a->err_cmd = (uint32_t)P->cmd_start;
}

#define SYNTAX(P, ...) fail(P, SH_ERR_SYNTAX, __VA_ARGS__)
#define LIMIT(P, ...) fail(P, SH_ERR_LIMIT, __VA_ARGS__)

/* A new node (0, the scratch node nothing links to, once the tree is full). */
static uint32_t node(struct psr *P, int kind, size_t off)
{
        struct sh_ast *a = P->a;
        if (a->nn + a->nsub >= SH_MAX_NODES) {
                LIMIT(P, "syntax tree too large");
                return 0;
        }
        if (a->nn == a->cap) {
                a->cap *= 2;
                a->nodes = xrealloc(a->nodes, a->cap * sizeof(*a->nodes));
        }
        uint32_t k = a->nn++;
        a->nodes[k] = (struct sh_node){.kind = (uint8_t)kind, .fd = -1, .off = (uint32_t)off};
        return k;
}

static void kid_add(struct psr *P, uint32_t parent, uint32_t kid)
{
        if (!kid || !parent)
                return;
        struct sh_node *p = N(P, parent);
        if (p->last)
                N(P, p->last)->next = kid;
        else
                p->kid = kid;
        p->last = kid;
}

static void end_at(struct psr *P, uint32_t k)
{
        /* A construct the input ended inside may have stepped past its end (over the
         * closing character it found missing): the span stops at the input's end. */
        size_t end = P->i < P->n ? P->i : P->n;
        if (k)
                N(P, k)->len = end > N(P, k)->off ? (uint32_t)(end - N(P, k)->off) : 0;
}

/* Text the tree owns (decoded, or joined from pieces of the input). */
static const char *store(struct psr *P, const char *s, size_t n)
{
        struct chunk *c = xmalloc(sizeof(*c) + n + 1);
        memcpy(c->data, s, n);
        c->data[n] = 0;
        c->next = P->a->strs;
        P->a->strs = c;
        return c->data;
}

static void set_text(struct psr *P, uint32_t k, const char *t, size_t n)
{
        if (!k)
                return;
        N(P, k)->text = t;
        N(P, k)->tlen = (uint32_t)n;
}

/* ---- characters ---- */

static int cur(const struct psr *P) { return P->i < P->n ? (unsigned char)P->s[P->i] : -1; }
static int at(const struct psr *P, size_t k) { return P->i + k < P->n ? (unsigned char)P->s[P->i + k] : -1; }

static bool is_meta(int c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
               c == '>' || c == '(' || c == ')' || c == -1;
}

static bool name_start(int c) { return c == '_' || (c >= 0 && c < 128 && isalpha(c)); }
static bool name_char(int c) { return c == '_' || (c >= 0 && c < 128 && isalnum(c)); }

static void skip_blanks(struct psr *P)
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

static void skip_comment(struct psr *P)
{
        while (cur(P) != -1 && cur(P) != '\n')
                P->i++;
}

static void heredoc_bodies(struct psr *P);

/* Past a newline: the bodies of the here-documents of the line come next. */
static void take_newline(struct psr *P)
{
        P->i++;
        if (P->nhd)
                heredoc_bodies(P);
}

/* Blanks, comments and newlines (where a list may go on on the next line). */
static void linebreak(struct psr *P)
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

static const char *const reserved_words[] = {"if",    "then",   "else",   "elif",     "fi",   "do",
                                             "done",  "case",   "esac",   "while",    "until", "for",
                                             "select", "{",     "}",      "!",        "in",   "function",
                                             "time",  "[[",     "]]",     "coproc"};

/* The reserved word at P->i (unquoted, followed by a delimiter), or NULL. */
static const char *reserved_at(const struct psr *P)
{
        int c = cur(P);
        if (c == -1 || !(islower(c) || c == '{' || c == '}' || c == '!' || c == '[' || c == ']'))
                return NULL;
        for (size_t k = 0; k < ARRAY_SIZE(reserved_words); k++) {
                const char *w = reserved_words[k];
                size_t l = strlen(w);
                if (P->i + l <= P->n && !memcmp(P->s + P->i, w, l) && is_meta(at(P, l)))
                        return w;
        }
        return NULL;
}

static bool rw_is(const char *rw, const char *w) { return rw && !strcmp(rw, w); }

static bool nest_in(struct psr *P)
{
        if (++P->nest > SH_MAX_NEST) {
                LIMIT(P, "nesting too deep");
                return false;
        }
        return true;
}

/* ---- escapes ---- */

static int hexval(int c) { return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1; }

struct strbuf_ {
        char *s;
        size_t n, cap;
};

static void bput(struct strbuf_ *b, char c)
{
        if (b->n + 2 > b->cap) {
                b->cap = b->cap ? b->cap * 2 : 32;
                b->s = xrealloc(b->s, b->cap);
        }
        b->s[b->n++] = c;
        b->s[b->n] = 0;
}

static void put_utf8(struct strbuf_ *b, unsigned long u)
{
        if (u < 0x80)
                bput(b, (char)u);
        else if (u < 0x800) {
                bput(b, (char)(0xc0 | u >> 6));
                bput(b, (char)(0x80 | (u & 0x3f)));
        } else {
                bput(b, (char)(0xe0 | (u >> 12 & 0x0f)));
                bput(b, (char)(0x80 | (u >> 6 & 0x3f)));
                bput(b, (char)(0x80 | (u & 0x3f)));
        }
}

/* One backslash escape of $'...' (s after the backslash) appended to b: the characters
 * it took. */
static size_t c_escape(const char *s, size_t n, struct strbuf_ *b)
{
        static const char from[] = "abefnrtv\\'\"?", to[] = "\a\b\033\f\n\r\t\v\\'\"?";
        if (!n)
                return 0;
        const char *m = s[0] ? strchr(from, s[0]) : NULL;
        if (m) {
                bput(b, to[m - from]);
                return 1;
        }
        size_t k = 1;
        unsigned long v = 0;
        if (s[0] == 'x' || s[0] == 'u' || s[0] == 'U') {
                size_t max = s[0] == 'x' ? 2 : s[0] == 'u' ? 4 : 8;
                while (k <= max && k < n && hexval((unsigned char)s[k]) >= 0)
                        v = v * 16 + (unsigned long)hexval((unsigned char)s[k++]);
                if (s[0] == 'x')
                        bput(b, (char)v);
                else
                        put_utf8(b, v);
                return k;
        }
        if (s[0] >= '0' && s[0] <= '7') {
                k = 0;
                while (k < 3 && k < n && s[k] >= '0' && s[k] <= '7')
                        v = v * 8 + (unsigned long)(s[k++] - '0');
                bput(b, (char)v);
                return k;
        }
        if (s[0] == 'c' && n > 1) {
                bput(b, (char)(s[1] & 0x1f));
                return 2;
        }
        bput(b, '\\');
        bput(b, s[0]);
        return 1;
}

/* s[0..n) with the escapes of $'...' decoded; malloc'd. */
static char *sh_decode_c(const char *s, size_t n)
{
        struct strbuf_ b = {0};
        for (size_t k = 0; k < n;) {
                if (s[k] == '\\' && k + 1 < n)
                        k += 1 + c_escape(s + k + 1, n - k - 1, &b);
                else
                        bput(&b, s[k++]);
        }
        return b.s ? b.s : xstrdup("");
}

/* ---- words ---- */

/* A substitution's here-documents are its own: a newline inside $( ) reads only theirs,
 * not the bodies the line outside still waits for (cat <<A $(cat <<B ...) ...).  Those
 * are set aside while it is read; the substitution's own that the ) came before are read
 * at the next newline, before the outer ones (as bash reads them). */
static size_t hd_aside(struct psr *P, struct hdpend *outer)
{
        size_t no = P->nhd;
        memcpy(outer, P->hd, no * sizeof(*outer));
        P->nhd = 0;
        return no;
}

static void hd_back(struct psr *P, const struct hdpend *outer, size_t no)
{
        for (size_t j = 0; j < no; j++) {
                if (P->nhd >= SH_MAX_HEREDOCS) {
                        free(outer[j].delim);
                        LIMIT(P, "too many here-documents on one line");
                        continue;
                }
                P->hd[P->nhd++] = outer[j];
        }
}

static uint32_t parse_list(struct psr *P, unsigned stops, bool top);
static void dollar(struct psr *P, uint32_t parent, bool dq);
static void backtick(struct psr *P, uint32_t parent, bool dq);
static uint32_t parse_word(struct psr *P, unsigned mode);

/* A literal run [from, P->i) as a part of parent. */
static void flush_lit(struct psr *P, uint32_t parent, size_t *from)
{
        if (*from == SIZE_MAX || *from >= P->i) {
                *from = SIZE_MAX;
                return;
        }
        uint32_t l = node(P, SH_LIT, *from);
        set_text(P, l, P->s + *from, P->i - *from);
        end_at(P, l);
        kid_add(P, parent, l);
        *from = SIZE_MAX;
}

/* Does the arithmetic that starts at i (after its opening "((") close with "))"?  Else
 * "$((" and "((" open a command substitution or subshell holding a subshell. */
static bool arith_closes(const struct psr *P, size_t i)
{
        int d = 0;
        for (; i < P->n; i++) {
                char c = P->s[i];
                if (c == '\\') {
                        i++;
                } else if (c == '\'' || c == '"') {
                        const char *e = memchr(P->s + i + 1, c, P->n - i - 1);
                        if (!e)
                                return false;
                        i = (size_t)(e - P->s);
                } else if (c == '(')
                        d++;
                else if (c == ')') {
                        if (d > 0)
                                d--;
                        else
                                return i + 1 < P->n && P->s[i + 1] == ')';
                }
        }
        return false;
}

/* The parts of an arithmetic expression up to its closing "))" (or "]" for $[ ]), which
 * is consumed; expansions inside it are parts of their own. */
static uint32_t arith(struct psr *P, size_t off, bool old)
{
        uint32_t a = node(P, SH_ARITH, off);
        if (old)
                N(P, a)->flags |= SH_F_OLD;
        size_t lit = SIZE_MAX;
        int d = 0;
        for (;;) {
                int c = cur(P);
                if (P->fail)
                        return a;
                if (c == -1) {
                        SYNTAX(P, "unterminated arithmetic");
                        return a;
                }
                if (old ? c == ']' && d == 0 : c == ')' && d == 0 && at(P, 1) == ')') {
                        flush_lit(P, a, &lit);
                        P->i += old ? 1 : 2;
                        end_at(P, a);
                        return a;
                }
                if (c == '$' || c == '`') {
                        flush_lit(P, a, &lit);
                        if (c == '$')
                                dollar(P, a, true);
                        else
                                backtick(P, a, true);
                        continue;
                }
                if (c == '\\' && at(P, 1) == '\n') {
                        flush_lit(P, a, &lit);
                        P->i += 2;
                        continue;
                }
                if (lit == SIZE_MAX)
                        lit = P->i;
                if (c == (old ? '[' : '('))
                        d++;
                else if (c == (old ? ']' : ')'))
                        d--;
                P->i++;
        }
}

/* $'...': its escapes decoded. */
static void ansi_c(struct psr *P, uint32_t parent)
{
        size_t off = P->i;
        P->i += 2;
        size_t from = P->i;
        while (cur(P) != '\'') {
                if (cur(P) == -1) {
                        SYNTAX(P, "unterminated $'...'");
                        return;
                }
                P->i += cur(P) == '\\' && at(P, 1) != -1 ? 2 : 1;
        }
        char *d = sh_decode_c(P->s + from, P->i - from);
        P->i++;
        uint32_t k = node(P, SH_ANSI, off);
        set_text(P, k, store(P, d, strlen(d)), strlen(d));
        free(d);
        end_at(P, k);
        kid_add(P, parent, k);
}

static void dquote(struct psr *P, uint32_t parent, bool locale);

/* ${...} */
static void braced(struct psr *P, uint32_t parent)
{
        size_t off = P->i;
        P->i += 2;
        uint32_t k = node(P, SH_PARAM, off);
        N(P, k)->flags |= SH_F_BRACED;
        if (cur(P) == '#' && at(P, 1) != '}' && at(P, 1) != -1 &&
            (name_char(at(P, 1)) || strchr("@*#?$!-", at(P, 1)))) {
                N(P, k)->flags |= SH_F_LENGTH;
                P->i++;
        } else if (cur(P) == '!' && at(P, 1) != '}' && at(P, 1) != -1) {
                N(P, k)->flags |= SH_F_INDIRECT;
                P->i++;
        }
        size_t ns = P->i;
        if (name_start(cur(P)))
                while (name_char(cur(P)))
                        P->i++;
        else if (cur(P) >= '0' && cur(P) <= '9')
                while (cur(P) >= '0' && cur(P) <= '9')
                        P->i++;
        else if (cur(P) != -1 && strchr("@*#?$!-", cur(P)))
                P->i++;
        if (P->i == ns) {
                SYNTAX(P, "bad substitution");
                return;
        }
        size_t ne = P->i;
        if (cur(P) == '[') { /* a subscript: its own word, read up to the ] that closes it */
                P->i++;
                uint32_t sub = parse_word(P, W_SUBSCRIPT);
                if (cur(P) != ']') {
                        SYNTAX(P, "unterminated subscript");
                        return;
                }
                P->i++;
                ne = P->i;
                if (sub) {
                        N(P, sub)->op = '[';
                        kid_add(P, k, sub);
                }
        }
        set_text(P, k, P->s + ns, ne - ns);
        int c = cur(P);
        unsigned op = SH_P_PLAIN;
        if ((N(P, k)->flags & SH_F_INDIRECT) && (c == '*' || c == '@') && at(P, 1) == '}') {
                op = SH_P_PREFIX;
                P->i++;
        } else if (c == ':' && at(P, 1) != -1 && strchr("-=?+", at(P, 1))) {
                op = SH_P_COLON;
                P->i++;
                c = cur(P);
        } else if (c == ':') {
                op = SH_P_SLICE;
                P->i++;
        }
        if ((op & ~SH_P_COLON) == 0 || op == SH_P_COLON) {
                switch (c) {
                case '}': break;
                case '-': op |= SH_P_DEFAULT, P->i++; break;
                case '=': op |= SH_P_ASSIGN, P->i++; break;
                case '?': op |= SH_P_ERROR, P->i++; break;
                case '+': op |= SH_P_ALT, P->i++; break;
                case '#':
                case '%': op = SH_P_TRIM, P->i += at(P, 1) == c ? 2 : 1; break;
                case '/': op = SH_P_SUBST, P->i++; break;
                case '^':
                case ',': op = SH_P_CASE, P->i += at(P, 1) == c ? 2 : 1; break;
                case '@': op = SH_P_TRANSFORM, P->i++; break;
                default:
                        if (c == -1) {
                                SYNTAX(P, "unterminated ${...}");
                                return;
                        }
                        op = SH_P_SUBST; /* bash refuses it when it runs */
                }
        }
        N(P, k)->op = (uint8_t)op;
        if (cur(P) != '}') {
                uint32_t w = parse_word(P, W_BRACE);
                kid_add(P, k, w);
        }
        if (cur(P) != '}') {
                SYNTAX(P, "unterminated ${...}");
                return;
        }
        P->i++;
        end_at(P, k);
        kid_add(P, parent, k);
}

/* $... (dq: inside double quotes or an arithmetic expression, where $'...' is not). */
static void dollar(struct psr *P, uint32_t parent, bool dq)
{
        int c1 = at(P, 1);
        size_t off = P->i;
        if (c1 == '\'' && !dq)
                return ansi_c(P, parent);
        if (c1 == '"' && !dq) {
                P->i++;
                return dquote(P, parent, true);
        }
        if (c1 == '(' && at(P, 2) == '(' && arith_closes(P, P->i + 3)) {
                P->i += 3;
                if (!nest_in(P))
                        return;
                uint32_t a = arith(P, off, false);
                P->nest--;
                kid_add(P, parent, a);
                return;
        }
        if (c1 == '(') {
                P->i += 2;
                if (!nest_in(P))
                        return;
                uint32_t k = node(P, SH_CMDSUB, off);
                struct hdpend outer[SH_MAX_HEREDOCS];
                size_t no = hd_aside(P, outer);
                uint32_t l = parse_list(P, T_RPAREN, false);
                hd_back(P, outer, no);
                kid_add(P, k, l);
                if (!P->fail && cur(P) != ')')
                        SYNTAX(P, "missing ')'");
                P->i++;
                P->nest--;
                end_at(P, k);
                kid_add(P, parent, k);
                return;
        }
        if (c1 == '[') {
                P->i += 2;
                if (!nest_in(P))
                        return;
                uint32_t a = arith(P, off, true);
                P->nest--;
                kid_add(P, parent, a);
                return;
        }
        if (c1 == '{') {
                if (!nest_in(P))
                        return;
                braced(P, parent);
                P->nest--;
                return;
        }
        size_t ns = P->i + 1, ne = ns;
        if (name_start(c1))
                while (name_char(ne < P->n ? (unsigned char)P->s[ne] : -1))
                        ne++;
        else if (c1 != -1 && (isdigit(c1) || strchr("@*#?$!-", c1)))
                ne++;
        if (ne == ns) { /* a $ that starts nothing */
                uint32_t l = node(P, SH_LIT, off);
                set_text(P, l, P->s + off, 1);
                P->i++;
                end_at(P, l);
                kid_add(P, parent, l);
                return;
        }
        uint32_t k = node(P, SH_PARAM, off);
        set_text(P, k, P->s + ns, ne - ns);
        P->i = ne;
        end_at(P, k);
        kid_add(P, parent, k);
}

/* `...`: the body with \` \\ \$ (and \" in double quotes) unescaped, read as a tree of
 * its own. */
static void backtick(struct psr *P, uint32_t parent, bool dq)
{
        size_t off = P->i;
        P->i++;
        struct strbuf_ body = {0};
        for (;;) {
                int c = cur(P);
                if (c == -1) {
                        free(body.s);
                        SYNTAX(P, "unterminated backquote");
                        return;
                }
                if (c == '`')
                        break;
                if (c == '\\' && (at(P, 1) == '`' || at(P, 1) == '\\' || at(P, 1) == '$' ||
                                  (dq && at(P, 1) == '"'))) {
                        P->i++;
                        c = cur(P);
                }
                bput(&body, (char)c);
                P->i++;
        }
        P->i++;
        if (P->nest + 1 > SH_MAX_NEST) {
                free(body.s);
                LIMIT(P, "nesting too deep");
                return;
        }
        struct sh_ast *sub = sh_parse(body.s ? body.s : "", body.n, P->nest + 1);
        free(body.s);
        P->a->nsub += sub->nn + sub->nsub;
        if (sub->err) {
                fail(P, sub->err, "%s", sub->errmsg);
                sh_ast_free(sub);
                return;
        }
        uint32_t k = node(P, SH_BACKTICK, off);
        if (!k) {
                sh_ast_free(sub);
                return;
        }
        N(P, k)->sub = sub;
        end_at(P, k);
        kid_add(P, parent, k);
}

/* "...": literal runs, escapes of $ ` " \ and expansions. */
static void dquote(struct psr *P, uint32_t parent, bool locale)
{
        uint32_t k = node(P, SH_DQ, P->i - (locale ? 1 : 0));
        if (locale)
                N(P, k)->flags |= SH_F_LOCALE;
        P->i++;
        size_t lit = SIZE_MAX;
        for (;;) {
                int c = cur(P);
                if (P->fail)
                        return;
                if (c == -1) {
                        SYNTAX(P, "unterminated double quote");
                        return;
                }
                if (c == '"')
                        break;
                if (c == '\\' && at(P, 1) != -1 && strchr("$`\"\\\n", at(P, 1))) {
                        flush_lit(P, k, &lit);
                        if (at(P, 1) != '\n') {
                                uint32_t e = node(P, SH_ESC, P->i);
                                set_text(P, e, P->s + P->i + 1, 1);
                                P->i += 2;
                                end_at(P, e);
                                kid_add(P, k, e);
                        } else
                                P->i += 2;
                        continue;
                }
                if (c == '$' || c == '`') {
                        flush_lit(P, k, &lit);
                        if (c == '$')
                                dollar(P, k, true);
                        else
                                backtick(P, k, true);
                        continue;
                }
                if (lit == SIZE_MAX)
                        lit = P->i;
                P->i++;
        }
        flush_lit(P, k, &lit);
        P->i++;
        end_at(P, k);
        kid_add(P, parent, k);
}

/* <( list ) and >( list ) */
static void procsub(struct psr *P, uint32_t parent)
{
        uint32_t k = node(P, SH_PROCSUB, P->i);
        N(P, k)->op = (uint8_t)P->s[P->i];
        P->i += 2;
        if (!nest_in(P))
                return;
        struct hdpend outer[SH_MAX_HEREDOCS];
        size_t no = hd_aside(P, outer);
        kid_add(P, k, parse_list(P, T_RPAREN, false));
        hd_back(P, outer, no);
        if (!P->fail && cur(P) != ')')
                SYNTAX(P, "missing ')'");
        P->i++;
        P->nest--;
        end_at(P, k);
        kid_add(P, parent, k);
}

/* NAME=( words ): the elements, over lines. */
static void array(struct psr *P, uint32_t parent)
{
        uint32_t k = node(P, SH_ARRAY, P->i);
        P->i++;
        if (!nest_in(P))
                return;
        for (;;) {
                linebreak(P);
                if (P->fail)
                        return;
                if (cur(P) == ')')
                        break;
                uint32_t w = parse_word(P, 0);
                if (!w) {
                        if (!P->fail)
                                SYNTAX(P, "unexpected '%c' in an array", cur(P) == -1 ? ' ' : cur(P));
                        return;
                }
                kid_add(P, k, w);
        }
        P->i++;
        P->nest--;
        end_at(P, k);
        kid_add(P, parent, k);
}

/* ~, ~USER, ~+, ~-: at P->i, where a tilde expands (the word's start, or after = and :
 * in a value).  False when what follows the ~ makes it a plain character. */
static bool tilde(struct psr *P, uint32_t parent, unsigned mode)
{
        size_t k = P->i + 1;
        if (k < P->n && (P->s[k] == '+' || P->s[k] == '-'))
                k++;
        else
                while (k < P->n && (name_char((unsigned char)P->s[k]) || P->s[k] == '-' || P->s[k] == '.'))
                        k++;
        int after = k < P->n ? (unsigned char)P->s[k] : -1;
        bool ends = after == '/' || (is_meta(after) && !(mode & W_BRACE)) ||
                    ((mode & W_ASSIGN) && after == ':') || ((mode & W_BRACE) && after == '}') ||
                    ((mode & W_PATTERN) && (after == '|' || after == ')'));
        if (!ends)
                return false;
        uint32_t t = node(P, SH_TILDE, P->i);
        set_text(P, t, P->s + P->i + 1, k - P->i - 1);
        P->i = k;
        end_at(P, t);
        kid_add(P, parent, t);
        return true;
}

/* An unquoted NAME= or NAME+= is all the word holds so far (from start): a value may
 * be an array, and ~ expands after = and :. */
static bool assign_like(const struct psr *P, size_t start, bool only_lit)
{
        if (!only_lit || !name_start((unsigned char)P->s[start]))
                return false;
        size_t k = start;
        while (k < P->i && name_char((unsigned char)P->s[k]))
                k++;
        return k < P->i && (P->s[k] == '=' || (P->s[k] == '+' && k + 1 < P->i && P->s[k + 1] == '='));
}

struct wst { /* a word being read */
        uint32_t w;    /* its node, once it has a part */
        size_t start;  /* where it started */
        size_t lit;    /* where the literal run being read started (SIZE_MAX: none) */
        bool only_lit; /* nothing but unquoted characters so far */
        int sub;       /* inside the subscript of a command's NAME[...]: its [ ] depth */
        bool subseen;  /* that subscript was read (only the first [ opens one) */
};

static void wnode(struct psr *P, struct wst *W)
{
        if (!W->w)
                W->w = node(P, SH_WORD, W->start);
}

static bool word_ends(const struct psr *P, unsigned mode)
{
        int c = cur(P);
        if (mode & W_BRACE)
                return c == '}' || c == -1;
        if (mode & W_SUBSCRIPT)
                return c == ']' || c == -1;
        if (mode & W_REGEX)
                return c == ' ' || c == '\t' || c == '\n' || c == -1;
        return is_meta(c);
}

/* At a character that would end the word: <( ) and >( ), NAME=( ... ) and an extended
 * glob's @( ) go on with it.  False when the word ends. */
static bool word_goes_on(struct psr *P, struct wst *W, unsigned mode)
{
        int c = cur(P);
        if ((c == '<' || c == '>') && at(P, 1) == '(' && !(mode & (W_COND | W_PATTERN))) {
                wnode(P, W);
                flush_lit(P, W->w, &W->lit);
                procsub(P, W->w);
                W->only_lit = false;
                return true;
        }
        if (c == '(' && !(mode & (W_COND | W_PATTERN)) && assign_like(P, W->start, W->only_lit) &&
            P->s[P->i - 1] == '=') {
                wnode(P, W);
                flush_lit(P, W->w, &W->lit);
                array(P, W->w);
                W->only_lit = false;
                return true;
        }
        if (c == '(' && P->i > W->start && strchr("@!*+?", P->s[P->i - 1]) && W->lit != SIZE_MAX) {
                /* an extended glob: its parentheses and bars are the pattern's */
                int d = 0;
                do {
                        int e = cur(P);
                        if (e == -1 || e == '\n') {
                                SYNTAX(P, "unterminated pattern");
                                return false;
                        }
                        d += e == '(' ? 1 : e == ')' ? -1 : 0;
                        P->i++;
                } while (d > 0);
                return true;
        }
        return false;
}

static void lit_char(struct psr *P, struct wst *W)
{
        if (W->lit == SIZE_MAX)
                W->lit = P->i;
        P->i++;
}

/* \x quotes x; \ newline is nothing; a backslash at the very end is itself. */
static void backslash(struct psr *P, struct wst *W)
{
        flush_lit(P, W->w, &W->lit);
        if (at(P, 1) == '\n') {
                P->i += 2;
                return;
        }
        /* At the end of the input a backslash stands for itself: an escaped backslash, so
         * that a print of the word followed by more text still means it. */
        bool last = at(P, 1) == -1;
        uint32_t e = node(P, SH_ESC, P->i);
        set_text(P, e, last ? "\\" : P->s + P->i + 1, 1);
        P->i += last ? 1 : 2;
        end_at(P, e);
        kid_add(P, W->w, e);
        W->only_lit = false;
}

static bool single_quote(struct psr *P, struct wst *W)
{
        flush_lit(P, W->w, &W->lit);
        const char *e = memchr(P->s + P->i + 1, '\'', P->n - P->i - 1);
        if (!e) {
                SYNTAX(P, "unterminated single quote");
                return false;
        }
        uint32_t q = node(P, SH_SQ, P->i);
        set_text(P, q, P->s + P->i + 1, (size_t)(e - P->s) - P->i - 1);
        P->i = (size_t)(e - P->s) + 1;
        end_at(P, q);
        kid_add(P, W->w, q);
        W->only_lit = false;
        return true;
}

/* ~ where it expands: the word's start, or after = and : in a value (an assignment, or
 * an argument shaped like one: make PREFIX=~/x). */
static void tilde_at(struct psr *P, struct wst *W, unsigned mode)
{
        bool here = P->i == W->start ||
                    ((P->s[P->i - 1] == '=' || P->s[P->i - 1] == ':') &&
                     (((mode & W_ASSIGN) && W->lit != SIZE_MAX) || assign_like(P, W->start, W->only_lit)));
        if (here && !(mode & (W_SUBSCRIPT | W_REGEX))) {
                flush_lit(P, W->w, &W->lit);
                if (tilde(P, W->w, mode)) {
                        W->only_lit = false;
                        return;
                }
        }
        lit_char(P, W);
}

/* The nested [ ] of a subscript are its own characters. */
static void brackets(struct psr *P, struct wst *W)
{
        if (W->lit == SIZE_MAX)
                W->lit = P->i;
        int d = 0;
        while (cur(P) != -1) {
                d += cur(P) == '[' ? 1 : cur(P) == ']' ? -1 : 0;
                P->i++;
                if (!d)
                        break;
        }
}

/* Past line continuations from k: bash joins the lines before it reads a word, so a
 * name, a [ or an = may be split by one (x\<newline>y=1 assigns xy). */
static size_t past_cont(const char *s, size_t n, size_t k)
{
        while (k + 1 < n && s[k] == '\\' && s[k + 1] == '\n')
                k += 2;
        return k;
}

/* Past a name's characters and the line continuations among and after them. */
static size_t name_end(const char *s, size_t n, size_t k)
{
        for (k = past_cont(s, n, k); k < n && name_char((unsigned char)s[k]);)
                k = past_cont(s, n, k + 1);
        return k;
}

/* In a command's place, a [ right after an unquoted NAME opens a subscript that runs to
 * the ] that closes it, blanks, newlines and ; included (what may be an assignment's
 * NAME[...]=, read as one word when it is not: `x[a  b] c` runs the command "x[a  b]").
 * Quotes and substitutions inside are read as usual, and their brackets do not count. */
static bool subscript_here(const struct psr *P, const struct wst *W, unsigned mode)
{
        size_t b = past_cont(P->s, P->n, W->start);
        return (mode & W_CMDWORD) && !W->subseen && W->only_lit && P->i > b &&
               name_start((unsigned char)P->s[b]) && name_end(P->s, P->n, b) == P->i;
}

/* A word: its parts, up to what ends a word in this mode.  0 when there is none. */
static uint32_t parse_word(struct psr *P, unsigned mode)
{
        struct wst W = {.start = P->i, .lit = SIZE_MAX, .only_lit = true};
        while (!P->fail) {
                if (W.sub && cur(P) == -1) {
                        SYNTAX(P, "unexpected end of input looking for ']'");
                        break;
                }
                if (!W.sub && word_ends(P, mode)) {
                        if (word_goes_on(P, &W, mode))
                                continue;
                        break;
                }
                wnode(P, &W);
                int c = cur(P);
                if ((c == '[' && (W.sub || subscript_here(P, &W, mode))) || (c == ']' && W.sub)) {
                        W.sub += c == '[' ? 1 : -1;
                        W.subseen = true;
                        lit_char(P, &W);
                } else if (c == '\\')
                        backslash(P, &W);
                else if (c == '\'') {
                        if (!single_quote(P, &W))
                                return W.w;
                } else if (c == '"' || c == '$' || c == '`') {
                        flush_lit(P, W.w, &W.lit);
                        if (c == '"')
                                dquote(P, W.w, false);
                        else if (c == '$')
                                dollar(P, W.w, false);
                        else
                                backtick(P, W.w, false);
                        W.only_lit = false;
                } else if (c == '~')
                        tilde_at(P, &W, mode);
                else if (c == '[' && (mode & W_SUBSCRIPT))
                        brackets(P, &W);
                else
                        lit_char(P, &W);
        }
        if (W.w && !P->fail) {
                flush_lit(P, W.w, &W.lit);
                end_at(P, W.w);
        }
        return W.w;
}

/* ---- here-documents ---- */

/* The delimiter of a here-document, as written (quotes removed); *quoted when any part
 * of it was quoted (then the body is taken literally). */
static char *heredoc_delim(const struct psr *P, uint32_t w, bool *quoted)
{
        const struct sh_node *n = &P->a->nodes[w];
        const char *s = P->s + n->off;
        struct strbuf_ b = {0};
        *quoted = false;
        char q = 0; /* inside '...': every byte is itself; inside "...": \ quotes $ ` " \ newline */
        for (size_t k = 0; k < n->len; k++) {
                if (q == '\'' && s[k] != '\'') {
                        bput(&b, s[k]);
                        continue;
                }
                if ((!q || q == s[k]) && (s[k] == '\'' || s[k] == '"')) {
                        *quoted = true;
                        q = q ? 0 : s[k];
                        continue;
                }
                if (s[k] == '\\' && k + 1 < n->len && (!q || strchr("$`\"\\\n", s[k + 1]))) {
                        *quoted = true;
                        k++;
                } else if (s[k] == '\\' && k + 1 == n->len && !q)
                        *quoted = true; /* one that ended the input: itself, escaped (backslash()) */
                bput(&b, s[k]);
        }
        return b.s ? b.s : xstrdup("");
}

/* The expansions in an unquoted here-document's body [from, to): parts of node k. */
static void heredoc_parts(struct psr *P, uint32_t k, size_t from, size_t to)
{
        size_t save_n = P->n, save_i = P->i, nhd = P->nhd;
        struct hdpend saved[SH_MAX_HEREDOCS];
        memcpy(saved, P->hd, nhd * sizeof(*saved));
        P->nhd = 0;
        P->n = to;
        P->i = from;
        size_t lit = SIZE_MAX;
        while (!P->fail && P->i < P->n) {
                int c = cur(P);
                if (c == '\\' && at(P, 1) != -1 && strchr("$`\\\n", at(P, 1))) {
                        flush_lit(P, k, &lit);
                        P->i += 2;
                        continue;
                }
                if (c == '$' || c == '`') {
                        flush_lit(P, k, &lit);
                        if (c == '$')
                                dollar(P, k, true);
                        else
                                backtick(P, k, true);
                        continue;
                }
                if (lit == SIZE_MAX)
                        lit = P->i;
                P->i++;
        }
        flush_lit(P, k, &lit);
        for (size_t j = 0; j < P->nhd; j++)
                free(P->hd[j].delim);
        P->n = save_n;
        P->i = save_i;
        memcpy(P->hd, saved, nhd * sizeof(*saved));
        P->nhd = nhd;
}

/* At P->i (after a newline): the bodies of the pending here-documents, in order. */
static void heredoc_bodies(struct psr *P)
{
        /* A list of its own: reading a body's expansions may queue here-documents anew */
        struct hdpend list[SH_MAX_HEREDOCS];
        size_t n = P->nhd;
        memcpy(list, P->hd, n * sizeof(*list));
        P->nhd = 0;
        for (size_t h = 0; h < n; h++) {
                struct hdpend *d = &list[h];
                size_t k = P->i, from = k, end = P->n, next = P->n;
                const char *dm = d->delim; /* <<- strips the delimiter's own tabs too */
                while (d->strip && *dm == '\t')
                        dm++;
                size_t dl = strlen(dm);
                while (k < P->n) {
                        const char *e = memchr(P->s + k, '\n', P->n - k);
                        size_t le = e ? (size_t)(e - P->s) : P->n, ls = k;
                        if (d->strip)
                                while (ls < le && P->s[ls] == '\t')
                                        ls++;
                        if (le - ls == dl && !memcmp(P->s + ls, dm, dl)) {
                                end = k;
                                next = e ? le + 1 : P->n;
                                break;
                        }
                        k = e ? le + 1 : P->n;
                }
                uint32_t hn = d->node;
                /* A body the input ended inside reads, as in bash, as if its last line
                 * ended with a newline. */
                bool nl = end == P->n && end > from && P->s[end - 1] != '\n';
                if (d->strip || nl) { /* without the tabs that start its lines (<<-) */
                        struct strbuf_ b = {0};
                        bool bol = true;
                        for (size_t j = from; j < end; j++) {
                                if (d->strip && bol && P->s[j] == '\t')
                                        continue;
                                bol = P->s[j] == '\n';
                                bput(&b, P->s[j]);
                        }
                        if (nl)
                                bput(&b, '\n');
                        set_text(P, hn, store(P, b.s ? b.s : "", b.n), b.n);
                        free(b.s);
                } else
                        set_text(P, hn, P->s + from, end - from);
                if (!d->quoted && hn)
                        heredoc_parts(P, hn, from, end);
                P->i = next;
                free(d->delim);
                d->delim = NULL;
                if (P->fail) {
                        for (size_t j = h + 1; j < n; j++)
                                free(list[j].delim);
                        return;
                }
        }
}

/* ---- redirections ---- */

static bool at_redir(const struct psr *P)
{
        size_t k = P->i;
        while (k < P->n && isdigit((unsigned char)P->s[k]))
                k++;
        if (k == P->i && k < P->n && P->s[k] == '{') { /* {fd}>file */
                size_t j = k + 1;
                while (j < P->n && name_char((unsigned char)P->s[j]))
                        j++;
                if (j > k + 1 && j < P->n && P->s[j] == '}' && j + 1 < P->n &&
                    (P->s[j + 1] == '<' || P->s[j + 1] == '>'))
                        return true;
        }
        if (k < P->n && (P->s[k] == '<' || P->s[k] == '>'))
                return !(k + 1 < P->n && P->s[k + 1] == '(');
        return k == P->i && cur(P) == '&' && at(P, 1) == '>';
}

static uint32_t parse_redir(struct psr *P)
{
        uint32_t r = node(P, SH_REDIR, P->i);
        if (isdigit(cur(P))) {
                long fd = 0;
                while (isdigit(cur(P))) {
                        if (fd < 100000)
                                fd = fd * 10 + (cur(P) - '0');
                        P->i++;
                }
                N(P, r)->fd = (int32_t)fd;
        } else if (cur(P) == '{') {
                size_t s = ++P->i;
                while (cur(P) != '}')
                        P->i++;
                set_text(P, r, P->s + s, P->i - s);
                P->i++;
        }
        static const struct {
                const char *op;
                uint8_t code;
        } ops[] = {{"<<<", SH_R_HERESTR}, {"<<-", SH_R_HEREDOC_TAB}, {"&>>", SH_R_ALL_APPEND},
                   {"<<", SH_R_HEREDOC},  {"<>", SH_R_RW},           {"<&", SH_R_DUPIN},
                   {">>", SH_R_APPEND},   {">|", SH_R_CLOBBER},      {">&", SH_R_DUPOUT},
                   {"&>", SH_R_ALL},      {"<", SH_R_IN},            {">", SH_R_OUT}};
        uint8_t op = 0;
        for (size_t k = 0; k < ARRAY_SIZE(ops) && !op; k++) {
                size_t l = strlen(ops[k].op);
                if (P->i + l <= P->n && !memcmp(P->s + P->i, ops[k].op, l)) {
                        op = ops[k].code;
                        P->i += l;
                }
        }
        N(P, r)->op = op;
        skip_blanks(P);
        uint32_t w = is_meta(cur(P)) && !((cur(P) == '<' || cur(P) == '>') && at(P, 1) == '(') ? 0
                                                                                                : parse_word(P, 0);
        if (!w) {
                if (!P->fail)
                        SYNTAX(P, "a redirection without a target");
                return r;
        }
        if (op == SH_R_HEREDOC || op == SH_R_HEREDOC_TAB) {
                if (P->nhd >= SH_MAX_HEREDOCS) {
                        LIMIT(P, "too many here-documents on one line");
                        return r;
                }
                bool quoted;
                char *delim = heredoc_delim(P, w, &quoted);
                if (strchr(delim, '\n')) {
                        /* No line can end such a body (bash reads to the end of the input):
                         * what it swallows is left to the printer's guess.  Refused. */
                        free(delim);
                        SYNTAX(P, "a here-document delimiter with a newline in it");
                        return r;
                }
                uint32_t h = node(P, SH_HEREDOC, N(P, w)->off);
                if (quoted)
                        N(P, h)->flags |= SH_F_QUOTED;
                N(P, h)->len = N(P, w)->len;
                set_text(P, h, "", 0);
                kid_add(P, r, h);
                P->hd[P->nhd++] = (struct hdpend){h, delim, op == SH_R_HEREDOC_TAB, quoted};
        } else
                kid_add(P, r, w);
        end_at(P, r);
        return r;
}

/* ---- commands ---- */

static uint32_t parse_command(struct psr *P);
static uint32_t parse_pipeline(struct psr *P);

static bool is_compound(int kind)
{
        return kind == SH_GROUP || kind == SH_SUBSHELL || kind == SH_IF || kind == SH_LOOP || kind == SH_FOR ||
               kind == SH_ARITH_FOR || kind == SH_CASE || kind == SH_ARITH_CMD || kind == SH_COND;
}

/* The unquoted literal text of a word, or NULL (a function's or a loop variable's name). */
static bool word_literal(const struct psr *P, uint32_t w, const char **s, size_t *n)
{
        const struct sh_node *x = &P->a->nodes[w];
        if (!w || !x->kid || x->kid != x->last || P->a->nodes[x->kid].kind != SH_LIT)
                return false;
        *s = P->a->nodes[x->kid].text;
        *n = P->a->nodes[x->kid].tlen;
        return true;
}

/* The compound command a function's name and () are followed by. */
static uint32_t func_body(struct psr *P, uint32_t f)
{
        linebreak(P);
        uint32_t body = parse_command(P);
        if (P->fail)
                return f;
        if (!body || !is_compound(N(P, body)->kind)) {
                SYNTAX(P, "a function's body must be a compound command");
                return f;
        }
        kid_add(P, f, body);
        end_at(P, f);
        return f;
}

/* From k in s[0..n), past what the quote or substitution opened just before it holds,
 * up to and with the byte close: the index after it, SIZE_MAX when the input ends first.
 * A look-ahead as the shell reads a subscript or an arithmetic for's header: quotes, $( )
 * and ` ` nest, and their brackets and semicolons are theirs.  Depth-bounded like the
 * parser. */
static size_t span_end(const char *s, size_t n, size_t k, char close, int depth)
{
        if (depth > SH_MAX_NEST)
                return SIZE_MAX;
        int d = 0; /* [ ] depth for close ']', ( ) depth for close ')' */
        while (k < n) {
                char c = s[k];
                if (c == close && close != ']' && !(close == ')' && d))
                        return k + 1;
                if (c == '\\' && close != '\'') {
                        k += 2;
                        continue;
                }
                if (close == '\'' || (close == '"' && c != '$' && c != '`')) {
                        k++;
                        continue;
                }
                if (c == '\'' || c == '"' || c == '`')
                        k = span_end(s, n, k + 1, c, depth + 1);
                else if (c == '$' && k + 1 < n && s[k + 1] == '(')
                        k = span_end(s, n, k + 2, ')', depth + 1);
                else if (close == ')' && (c == '(' || c == ')')) {
                        d += c == '(' ? 1 : -1;
                        k++;
                } else if (close == ']' && (c == '[' || c == ']')) {
                        d += c == '[' ? 1 : -1;
                        k++;
                        if (!d)
                                return k;
                } else
                        k++;
                if (k == SIZE_MAX)
                        return SIZE_MAX;
        }
        return SIZE_MAX;
}

static size_t skip_to(const struct psr *P, size_t k, char close, int depth)
{
        return span_end(P->s, P->n, k, close, depth);
}

bool sh_arith_for_cuts(const char *s, size_t n, size_t cut[2])
{
        size_t m = 0;
        for (size_t k = 0; k < n; k++) {
                char c = s[k];
                size_t e = k;
                if (c == '\\')
                        e = k + 2;
                else if (c == '\'' || c == '"' || c == '`')
                        e = span_end(s, n, k + 1, c, 1);
                else if (c == '$' && k + 1 < n && s[k + 1] == '(')
                        e = span_end(s, n, k + 2, ')', 1);
                else if (c == ';') {
                        if (m == 2)
                                return false;
                        cut[m++] = k;
                }
                if (e == SIZE_MAX)
                        return false;
                if (e > k)
                        k = e - 1;
        }
        return m == 2;
}

/* At NAME[: the index after the ] that closes the subscript (SIZE_MAX: none, 0: no [). */
static size_t subscript_end(const struct psr *P)
{
        size_t k = name_end(P->s, P->n, P->i);
        if (k >= P->n || P->s[k] != '[')
                return 0;
        return skip_to(P, k, ']', 0);
}

/* NAME=, NAME+=, NAME[...]= and NAME[...]+= at P->i. */
static bool is_assignment(const struct psr *P)
{
        if (!name_start(cur(P)))
                return false;
        size_t k = subscript_end(P);
        if (k == SIZE_MAX)
                return false;
        k = past_cont(P->s, P->n, k ? k : name_end(P->s, P->n, P->i));
        if (k < P->n && P->s[k] == '+')
                k = past_cont(P->s, P->n, k + 1) - 1; /* +\<newline>= is += */
        return k + 1 < P->n && (P->s[k] == '=' || (P->s[k] == '+' && P->s[k + 1] == '='));
}

/* NAME[ with no ] to close it: bash reads a subscript there and fails at the end. */
static bool subscript_open(const struct psr *P)
{
        return subscript_end(P) == SIZE_MAX;
}

static uint32_t parse_assign(struct psr *P)
{
        uint32_t a = node(P, SH_ASSIGN, P->i);
        size_t s = P->i, end = subscript_end(P);
        P->i = name_end(P->s, P->n, P->i);
        uint32_t sub = 0;
        if (end) { /* NAME[...]: the subscript is a word of its own (it is expanded) */
                P->i++;
                sub = parse_word(P, W_SUBSCRIPT);
                if (P->fail)
                        return a;
                if (P->i + 1 != end) {
                        SYNTAX(P, "bad array subscript");
                        return a;
                }
                P->i = end;
        }
        /* the name without its line continuations, then the subscript as written */
        struct strbuf_ t = {0};
        size_t k = s;
        for (; k < P->i && P->s[k] != '['; k = past_cont(P->s, P->i, k + 1))
                if (!(P->s[k] == '\\' && P->s[k + 1] == '\n'))
                        bput(&t, P->s[k]);
        for (; k < P->i; k++)
                bput(&t, P->s[k]);
        set_text(P, a, store(P, t.s ? t.s : "", t.n), t.n);
        free(t.s);
        if (sub) {
                N(P, sub)->op = '[';
                kid_add(P, a, sub);
        }
        P->i = past_cont(P->s, P->n, P->i);
        N(P, a)->op = P->s[P->i] == '+' ? '+' : '=';
        if (P->s[P->i] == '+')
                P->i = past_cont(P->s, P->n, P->i + 1);
        P->i++;
        if (cur(P) == '(')
                array(P, a);
        else
                kid_add(P, a, parse_word(P, W_ASSIGN));
        end_at(P, a);
        return a;
}

/* A command word that is a reserved word once its line continuations go (i\<newline>f):
 * bash removes them before it reads words, so that is `if`, where this parser would see
 * a command named if.  Refused (a syntax error), not misread. */
static bool split_reserved(const struct psr *P, uint32_t w)
{
        const struct sh_node *x = &P->a->nodes[w];
        if (!memmem(P->s + x->off, x->len, "\\\n", 2))
                return false;
        char t[16];
        size_t n = 0;
        for (uint32_t k = x->kid; k; k = P->a->nodes[k].next) {
                const struct sh_node *l = &P->a->nodes[k];
                if (l->kind != SH_LIT || n + l->tlen >= sizeof(t))
                        return false;
                memcpy(t + n, l->text, l->tlen);
                n += l->tlen;
        }
        t[n] = 0;
        for (size_t k = 0; k < ARRAY_SIZE(reserved_words); k++)
                if (!strcmp(t, reserved_words[k]))
                        return true;
        return false;
}

static uint32_t parse_simple(struct psr *P)
{
        uint32_t c = node(P, SH_SIMPLE, P->i);
        size_t nwords = 0, nparts = 0;
        bool prefix = false; /* assignments or redirections before the command word */
        for (;;) {
                skip_blanks(P);
                int ch = cur(P);
                if (P->fail || ch == -1)
                        break;
                if (ch == '#') { /* a comment to the end of the line */
                        skip_comment(P);
                        break;
                }
                if (++nparts > MAX_WORDS) {
                        LIMIT(P, "too many words");
                        break;
                }
                if (at_redir(P)) {
                        kid_add(P, c, parse_redir(P));
                        prefix = true;
                        continue;
                }
                if (is_meta(ch) && !((ch == '<' || ch == '>') && at(P, 1) == '('))
                        break;
                if (!nwords && name_start(ch) && subscript_open(P)) {
                        SYNTAX(P, "unexpected end of input looking for ']'");
                        break;
                }
                if (!nwords && is_assignment(P)) {
                        kid_add(P, c, parse_assign(P));
                        prefix = true;
                        continue;
                }
                uint32_t w = parse_word(P, nwords ? 0 : W_CMDWORD);
                if (!w)
                        break;
                if (!nwords && !prefix && split_reserved(P, w)) {
                        SYNTAX(P, "a reserved word split by a line continuation");
                        break;
                }
                kid_add(P, c, w);
                nwords++;
                if (nwords == 1 && !prefix) { /* NAME ( ) BODY: a function */
                        size_t save = P->i;
                        skip_blanks(P);
                        if (cur(P) == '(') {
                                P->i++;
                                skip_blanks(P);
                                if (cur(P) == ')') {
                                        P->i++;
                                        const char *name;
                                        size_t nl;
                                        if (!word_literal(P, w, &name, &nl)) {
                                                SYNTAX(P, "a function's name must be a plain word");
                                                return c;
                                        }
                                        N(P, c)->kind = SH_FUNC;
                                        N(P, c)->kid = N(P, c)->last = 0;
                                        set_text(P, c, name, nl);
                                        return func_body(P, c);
                                }
                                SYNTAX(P, "unexpected '('");
                                return c;
                        }
                        P->i = save;
                }
        }
        if (!N(P, c)->kid && c)
                return 0;
        end_at(P, c);
        return c;
}

/* Redirections after a compound command. */
static void compound_redirs(struct psr *P, uint32_t c)
{
        for (;;) {
                skip_blanks(P);
                if (P->fail || !at_redir(P))
                        break;
                kid_add(P, c, parse_redir(P));
        }
        end_at(P, c);
}

static void expect(struct psr *P, const char *word)
{
        skip_blanks(P);
        if (P->fail)
                return;
        if (!rw_is(reserved_at(P), word)) {
                SYNTAX(P, "expected '%s'", word);
                return;
        }
        P->i += strlen(word);
}

static uint32_t nonempty(struct psr *P, uint32_t list, const char *what)
{
        if (!P->fail && list && !N(P, list)->kid)
                SYNTAX(P, "an empty %s", what);
        return list;
}

static uint32_t parse_if(struct psr *P, size_t off)
{
        uint32_t k = node(P, SH_IF, off);
        P->i += 2;
        for (;;) {
                kid_add(P, k, nonempty(P, parse_list(P, T_THEN, false), "condition"));
                expect(P, "then");
                kid_add(P, k, nonempty(P, parse_list(P, T_ELSE | T_FI, false), "then-part"));
                if (P->fail)
                        return k;
                const char *rw = reserved_at(P);
                if (rw_is(rw, "elif")) {
                        P->i += 4;
                        continue;
                }
                if (rw_is(rw, "else")) {
                        P->i += 4;
                        N(P, k)->flags |= SH_F_ELSE;
                        kid_add(P, k, nonempty(P, parse_list(P, T_FI, false), "else-part"));
                }
                expect(P, "fi");
                return k;
        }
}

static uint32_t do_body(struct psr *P, uint32_t k)
{
        linebreak(P);
        if (rw_is(reserved_at(P), "{")) { /* bash: for x in a; { ...; } */
                uint32_t g = parse_command(P);
                uint32_t l = node(P, SH_LIST, N(P, g)->off);
                uint32_t ao = node(P, SH_ANDOR, N(P, g)->off), pp = node(P, SH_PIPE, N(P, g)->off);
                kid_add(P, pp, g);
                kid_add(P, ao, pp);
                kid_add(P, l, ao);
                kid_add(P, k, l);
                return k;
        }
        expect(P, "do");
        kid_add(P, k, nonempty(P, parse_list(P, T_DONE, false), "loop body"));
        expect(P, "done");
        return k;
}

static uint32_t parse_for(struct psr *P, size_t off, bool select)
{
        uint32_t k = node(P, SH_FOR, off);
        N(P, k)->op = select ? 's' : 'f';
        P->i += select ? 6 : 3;
        skip_blanks(P);
        if (!select && cur(P) == '(' && at(P, 1) == '(') {
                N(P, k)->kind = SH_ARITH_FOR;
                size_t a0 = P->i;
                P->i += 2;
                if (!nest_in(P))
                        return k;
                uint32_t h = arith(P, a0, false);
                kid_add(P, k, h);
                P->nest--;
                size_t cut[2];
                if (!P->fail && !sh_arith_for_cuts(P->s + a0 + 2, N(P, h)->len - 4, cut)) {
                        SYNTAX(P, "an arithmetic for needs three expressions: ((init; test; step))");
                        return k;
                }
                skip_blanks(P);
                if (cur(P) == ';')
                        P->i++;
                return do_body(P, k);
        }
        size_t ns = P->i;
        while (name_char(cur(P)))
                P->i++;
        if (P->i == ns || !is_meta(cur(P))) {
                SYNTAX(P, "a %s loop needs a variable name", select ? "select" : "for");
                return k;
        }
        set_text(P, k, P->s + ns, P->i - ns);
        linebreak(P);
        if (rw_is(reserved_at(P), "in")) {
                P->i += 2;
                N(P, k)->flags |= SH_F_IN;
                for (;;) {
                        skip_blanks(P);
                        int c = cur(P);
                        if (P->fail || c == -1 || c == ';' || c == '\n')
                                break;
                        uint32_t w = parse_word(P, 0);
                        if (!w) {
                                if (!P->fail)
                                        SYNTAX(P, "unexpected '%c' in a for list", c);
                                return k;
                        }
                        kid_add(P, k, w);
                }
                if (cur(P) == ';')
                        P->i++;
        } else if (cur(P) == ';')
                P->i++;
        return do_body(P, k);
}

static uint32_t parse_case(struct psr *P, size_t off)
{
        uint32_t k = node(P, SH_CASE, off);
        P->i += 4;
        skip_blanks(P);
        uint32_t subj = parse_word(P, 0);
        if (!subj) {
                if (!P->fail)
                        SYNTAX(P, "case without a word");
                return k;
        }
        kid_add(P, k, subj);
        linebreak(P);
        expect(P, "in");
        for (;;) {
                linebreak(P);
                if (P->fail)
                        return k;
                if (rw_is(reserved_at(P), "esac")) {
                        P->i += 4;
                        return k;
                }
                uint32_t item = node(P, SH_CASE_ITEM, P->i);
                if (cur(P) == '(')
                        P->i++;
                for (;;) {
                        skip_blanks(P);
                        uint32_t w = parse_word(P, W_PATTERN);
                        if (!w) {
                                if (!P->fail)
                                        SYNTAX(P, "a case pattern is missing");
                                return k;
                        }
                        kid_add(P, item, w);
                        skip_blanks(P);
                        if (cur(P) != '|')
                                break;
                        P->i++;
                }
                if (cur(P) != ')') {
                        SYNTAX(P, "expected ')' after a case pattern");
                        return k;
                }
                P->i++;
                kid_add(P, item, parse_list(P, T_ESAC | T_CASEEND, false));
                if (P->fail)
                        return k;
                skip_blanks(P);
                if (cur(P) == ';' && at(P, 1) == ';' && at(P, 2) == '&')
                        N(P, item)->op = SH_CASE_NEXT, P->i += 3;
                else if (cur(P) == ';' && at(P, 1) == ';')
                        N(P, item)->op = SH_CASE_BREAK, P->i += 2;
                else if (cur(P) == ';' && at(P, 1) == '&')
                        N(P, item)->op = SH_CASE_FALL, P->i += 2;
                end_at(P, item);
                kid_add(P, k, item);
        }
}

/* ---- [[ ]]'s grammar, checked as bash checks it ---- */

/* Word w of a [[ ]] is the unquoted token t (an operator is one literal part). */
static bool cond_tok(const struct psr *P, uint32_t w, const char *t)
{
        const struct sh_node *x = &P->a->nodes[w];
        if (!w || !x->kid || x->kid != x->last || P->a->nodes[x->kid].kind != SH_LIT)
                return false;
        const struct sh_node *l = &P->a->nodes[x->kid];
        return l->tlen == strlen(t) && !memcmp(l->text, t, l->tlen);
}

static bool cond_in(const struct psr *P, uint32_t w, const char *const *set)
{
        for (; *set; set++)
                if (cond_tok(P, w, *set))
                        return true;
        return false;
}

static const char *const cond_unary[] = {"-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p",
                                         "-r", "-s", "-t", "-u", "-w", "-x", "-G", "-L", "-N", "-O",
                                         "-S", "-z", "-n", "-o", "-v", "-R", NULL};
static const char *const cond_binary[] = {"=",   "==",  "!=",  "<",   ">",   "=~",  "-eq", "-ne",
                                          "-lt", "-le", "-gt", "-ge", "-ef", "-nt", "-ot", NULL};
/* What cannot be an operand: [[ ]]'s own operators (! can: [[ -n ! ]]). */
static const char *const cond_ops[] = {"&&", "||", "(", ")", "<", ">", NULL};

static bool cond_or(const struct psr *P, uint32_t *w, int depth);

/* An operand, a unary or binary test, ( expression ) or ! term; *w moves past it. */
static bool cond_term(const struct psr *P, uint32_t *w, int depth)
{
        uint32_t x = *w;
        if (!x || depth > SH_MAX_NEST)
                return false;
        uint32_t nx = P->a->nodes[x].next;
        if (cond_tok(P, x, "!")) {
                *w = nx;
                return cond_term(P, w, depth + 1);
        }
        if (cond_tok(P, x, "(")) {
                *w = nx;
                if (!cond_or(P, w, depth + 1) || !cond_tok(P, *w, ")"))
                        return false;
                *w = P->a->nodes[*w].next;
                return true;
        }
        if (cond_in(P, x, cond_ops))
                return false;
        if (cond_in(P, x, cond_unary)) { /* its operand, whatever follows */
                if (!nx || cond_in(P, nx, cond_ops))
                        return false;
                *w = P->a->nodes[nx].next;
                return true;
        }
        if (nx && cond_in(P, nx, cond_binary)) {
                uint32_t r = P->a->nodes[nx].next;
                if (!r || cond_in(P, r, cond_ops))
                        return false;
                *w = P->a->nodes[r].next;
                return true;
        }
        *w = nx; /* a lone word: -n WORD */
        return true;
}

static bool cond_and(const struct psr *P, uint32_t *w, int depth)
{
        if (!cond_term(P, w, depth))
                return false;
        while (cond_tok(P, *w, "&&")) {
                *w = P->a->nodes[*w].next;
                if (!cond_term(P, w, depth))
                        return false;
        }
        return true;
}

static bool cond_or(const struct psr *P, uint32_t *w, int depth)
{
        if (!cond_and(P, w, depth))
                return false;
        while (cond_tok(P, *w, "||")) {
                *w = P->a->nodes[*w].next;
                if (!cond_and(P, w, depth))
                        return false;
        }
        return true;
}

/* The words of [[ ]] node k form one expression (bash refuses the command otherwise). */
static bool cond_valid(const struct psr *P, uint32_t k)
{
        uint32_t w = P->a->nodes[k].kid;
        return cond_or(P, &w, 0) && !w;
}

/* [[ ... ]]: words, with ( ) < > && || ! as operators of its own. */
static uint32_t parse_cond(struct psr *P, size_t off)
{
        uint32_t k = node(P, SH_COND, off);
        P->i += 2;
        bool regex = false;
        for (;;) {
                skip_blanks(P);
                while (cur(P) == '\n') {
                        take_newline(P);
                        skip_blanks(P);
                }
                if (P->fail)
                        return k;
                if (rw_is(reserved_at(P), "]]")) {
                        if (!cond_valid(P, k)) {
                                SYNTAX(P, "syntax error in conditional expression");
                                return k;
                        }
                        P->i += 2;
                        return k;
                }
                int c = cur(P);
                if (c == -1 || c == ';') {
                        SYNTAX(P, "unterminated [[");
                        return k;
                }
                size_t ol = 0;
                if ((c == '&' && at(P, 1) == '&') || (c == '|' && at(P, 1) == '|'))
                        ol = 2;
                else if (c == '(' || c == ')' || c == '<' || c == '>' || c == '!')
                        ol = c == '!' && !is_meta(at(P, 1)) ? 0 : 1;
                else if (c == '&' || c == '|') {
                        SYNTAX(P, "unexpected '%c' in [[", c);
                        return k;
                }
                uint32_t w;
                if (ol && !regex) {
                        w = node(P, SH_WORD, P->i);
                        uint32_t l = node(P, SH_LIT, P->i);
                        set_text(P, l, P->s + P->i, ol);
                        P->i += ol;
                        end_at(P, l);
                        kid_add(P, w, l);
                        end_at(P, w);
                } else
                        w = parse_word(P, regex ? W_REGEX : W_COND);
                if (!w) {
                        if (!P->fail)
                                SYNTAX(P, "unexpected '%c' in [[", c);
                        return k;
                }
                kid_add(P, k, w);
                const char *t;
                size_t tl;
                regex = word_literal(P, w, &t, &tl) && tl == 2 && !memcmp(t, "=~", 2);
        }
}

/* ( list ) or (( arithmetic )) */
static uint32_t paren_command(struct psr *P, size_t off)
{
        uint32_t c;
        if (at(P, 1) == '(' && arith_closes(P, P->i + 2)) {
                c = node(P, SH_ARITH_CMD, off);
                P->i += 2;
                kid_add(P, c, arith(P, off, false));
                return c;
        }
        c = node(P, SH_SUBSHELL, off);
        P->i++;
        kid_add(P, c, nonempty(P, parse_list(P, T_RPAREN, false), "subshell"));
        if (!P->fail && cur(P) != ')')
                SYNTAX(P, "missing ')'");
        if (!P->fail)
                P->i++;
        return c;
}

/* function NAME [()] BODY */
static uint32_t function_keyword(struct psr *P, size_t off)
{
        P->i += 8;
        skip_blanks(P);
        uint32_t w = parse_word(P, 0);
        const char *name;
        size_t nl;
        if (!word_literal(P, w, &name, &nl)) {
                if (!P->fail)
                        SYNTAX(P, "a function's name must be a plain word");
                return 0;
        }
        uint32_t c = node(P, SH_FUNC, off);
        N(P, c)->flags |= SH_F_KEYWORD;
        set_text(P, c, name, nl);
        skip_blanks(P);
        if (cur(P) == '(') {
                P->i++;
                skip_blanks(P);
                if (cur(P) == ')')
                        P->i++;
        }
        return func_body(P, c);
}

/* coproc [NAME] COMMAND: a name only before a compound command */
static uint32_t coproc(struct psr *P, size_t off)
{
        uint32_t c = node(P, SH_COPROC, off);
        P->i += 6;
        skip_blanks(P);
        size_t save = P->i, ns = P->i;
        while (name_char(cur(P)))
                P->i++;
        size_t ne = P->i;
        skip_blanks(P);
        const char *nx = reserved_at(P);
        if (ne > ns && is_meta(ne < P->n ? (unsigned char)P->s[ne] : -1) &&
            (cur(P) == '(' || rw_is(nx, "{") || rw_is(nx, "if") || rw_is(nx, "while") || rw_is(nx, "until") ||
             rw_is(nx, "for") || rw_is(nx, "case") || rw_is(nx, "[[")))
                set_text(P, c, P->s + ns, ne - ns);
        else
                P->i = save;
        uint32_t cmd = parse_command(P);
        if (!cmd && !P->fail)
                SYNTAX(P, "coproc without a command");
        kid_add(P, c, cmd);
        end_at(P, c);
        return c;
}

static uint32_t while_until(struct psr *P, size_t off, char kind)
{
        uint32_t c = node(P, SH_LOOP, off);
        N(P, c)->op = (uint8_t)kind;
        P->i += 5;
        kid_add(P, c, nonempty(P, parse_list(P, T_DO, false), "loop condition"));
        expect(P, "do");
        kid_add(P, c, nonempty(P, parse_list(P, T_DONE, false), "loop body"));
        expect(P, "done");
        return c;
}

/* A compound command opened by reserved word rw (its redirections are read after). */
static uint32_t compound(struct psr *P, const char *rw, size_t off)
{
        if (rw_is(rw, "{")) {
                uint32_t c = node(P, SH_GROUP, off);
                P->i++;
                kid_add(P, c, nonempty(P, parse_list(P, T_RBRACE, false), "group"));
                expect(P, "}");
                return c;
        }
        if (rw_is(rw, "if"))
                return parse_if(P, off);
        if (rw_is(rw, "while") || rw_is(rw, "until"))
                return while_until(P, off, rw[0] == 'w' ? 'w' : 'u');
        if (rw_is(rw, "for") || rw_is(rw, "select"))
                return parse_for(P, off, rw[0] == 's');
        if (rw_is(rw, "case"))
                return parse_case(P, off);
        return parse_cond(P, off); /* [[ */
}

static uint32_t parse_command(struct psr *P)
{
        skip_blanks(P);
        size_t off = P->i;
        if (P->fail)
                return 0;
        const char *rw = reserved_at(P);
        if (cur(P) != '(') {
                if (rw_is(rw, "in") || rw_is(rw, "]]")) {
                        SYNTAX(P, "unexpected '%s'", rw);
                        return 0;
                }
                if (!rw || rw_is(rw, "time") || rw_is(rw, "!"))
                        return parse_simple(P);
                if (rw_is(rw, "then") || rw_is(rw, "else") || rw_is(rw, "elif") || rw_is(rw, "fi") ||
                    rw_is(rw, "do") || rw_is(rw, "done") || rw_is(rw, "esac") || rw_is(rw, "}"))
                        return 0; /* the end of a list: the caller says whether it may end here */
        }
        if (!nest_in(P))
                return 0;
        uint32_t c;
        bool redirs = true;
        if (cur(P) == '(')
                c = paren_command(P, off);
        else if (rw_is(rw, "function"))
                c = function_keyword(P, off), redirs = false;
        else if (rw_is(rw, "coproc"))
                c = coproc(P, off), redirs = false;
        else
                c = compound(P, rw, off);
        P->nest--;
        if (redirs)
                compound_redirs(P, c);
        return c;
}

static uint32_t parse_pipeline(struct psr *P)
{
        skip_blanks(P);
        uint32_t p = node(P, SH_PIPE, P->i);
        for (;;) {
                const char *rw = reserved_at(P);
                if (rw_is(rw, "!")) {
                        N(P, p)->flags ^= SH_F_BANG;
                        P->i++;
                } else if (rw_is(rw, "time") && !(N(P, p)->flags & SH_F_TIME)) {
                        /* time -p: bash's keyword; time -f FMT (GNU time, what sh runs) is a
                         * command, which the time wrapper reads */
                        size_t k = P->i + 4;
                        while (k < P->n && (P->s[k] == ' ' || P->s[k] == '\t'))
                                k++;
                        if (k < P->n && P->s[k] == '-' &&
                            !(k + 2 <= P->n && P->s[k + 1] == 'p' && (k + 2 == P->n || is_meta((unsigned char)P->s[k + 2]))))
                                break;
                        N(P, p)->flags |= SH_F_TIME;
                        P->i = k;
                        if (k < P->n && P->s[k] == '-') {
                                N(P, p)->flags |= SH_F_TIMEP;
                                P->i += 2;
                        }
                } else
                        break;
                skip_blanks(P);
        }
        bool err = false, more = false;
        for (;;) {
                uint32_t c = parse_command(P);
                if (P->fail)
                        return p;
                if (!c) {
                        if ((N(P, p)->flags & (SH_F_BANG | SH_F_TIME)) && !N(P, p)->kid && !more)
                                break; /* time alone, ! alone */
                        SYNTAX(P, "a command is missing");
                        return p;
                }
                if (err)
                        N(P, c)->flags |= SH_F_PIPE_ERR;
                kid_add(P, p, c);
                skip_blanks(P);
                if (cur(P) != '|' || at(P, 1) == '|')
                        break;
                err = at(P, 1) == '&';
                more = true;
                P->i += err ? 2 : 1;
                linebreak(P);
        }
        end_at(P, p);
        return p;
}

static uint32_t parse_andor(struct psr *P)
{
        uint32_t ao = node(P, SH_ANDOR, P->i);
        kid_add(P, ao, parse_pipeline(P));
        for (;;) {
                skip_blanks(P);
                if (P->fail)
                        return ao;
                uint8_t op = cur(P) == '&' && at(P, 1) == '&' ? SH_AND : cur(P) == '|' && at(P, 1) == '|' ? SH_OR : 0;
                if (!op)
                        break;
                P->i += 2;
                linebreak(P);
                uint32_t p = parse_pipeline(P);
                if (p)
                        N(P, p)->op = op;
                kid_add(P, ao, p);
        }
        end_at(P, ao);
        return ao;
}

/* What ends a list here: T_* (0 when a command comes next). */
static unsigned terminator(const struct psr *P)
{
        int c = cur(P);
        if (c == -1)
                return T_EOF;
        if (c == ')')
                return T_RPAREN;
        if (c == ';' && (at(P, 1) == ';' || at(P, 1) == '&'))
                return T_CASEEND;
        const char *rw = reserved_at(P);
        if (!rw)
                return 0;
        if (rw_is(rw, "then"))
                return T_THEN;
        if (rw_is(rw, "else") || rw_is(rw, "elif"))
                return T_ELSE;
        if (rw_is(rw, "fi"))
                return T_FI;
        if (rw_is(rw, "do"))
                return T_DO;
        if (rw_is(rw, "done"))
                return T_DONE;
        if (rw_is(rw, "esac"))
                return T_ESAC;
        if (rw_is(rw, "}"))
                return T_RBRACE;
        return 0;
}

/* and-or lists separated by ; & and newlines, up to a terminator in stops (not consumed).
 * top: the program itself, where a failed command is left out of the tree. */
static uint32_t parse_list(struct psr *P, unsigned stops, bool top)
{
        uint32_t list = node(P, SH_LIST, P->i);
        for (;;) {
                linebreak(P);
                if (P->fail)
                        break;
                unsigned t = terminator(P);
                if (t) {
                        if (!(stops & t)) {
                                if (t == T_EOF)
                                        SYNTAX(P, "unexpected end of input");
                                else if (t == T_RPAREN)
                                        SYNTAX(P, "unexpected ')'");
                                else if (t == T_CASEEND)
                                        SYNTAX(P, "unexpected ;;");
                                else
                                        SYNTAX(P, "unexpected '%s'", reserved_at(P));
                        }
                        break;
                }
                int c = cur(P);
                if (c == ';' || c == '&' || c == '|') {
                        SYNTAX(P, "unexpected '%c'", c);
                        break;
                }
                if (top)
                        P->cmd_start = P->i;
                uint32_t ao = parse_andor(P);
                if (P->fail)
                        break;
                skip_blanks(P);
                if (cur(P) == '#') /* a comment after a command: a token starts here */
                        skip_comment(P);
                c = cur(P);
                if (c == ';' && at(P, 1) != ';' && at(P, 1) != '&') {
                        N(P, ao)->op = ';';
                        P->i++;
                } else if (c == '&') {
                        N(P, ao)->op = '&';
                        P->i++;
                } else if (c == '\n') {
                        N(P, ao)->op = '\n';
                        take_newline(P);
                } else if (c != -1 && c != ')' && !(c == ';' && (stops & T_CASEEND)) && !terminator(P)) {
                        SYNTAX(P, "unexpected '%c'", c);
                        break;
                }
                kid_add(P, list, ao);
        }
        end_at(P, list);
        return list;
}

/* ---- the entry ---- */

struct sh_ast *sh_parse(const char *s, size_t n, int nest)
{
        struct sh_ast *a = xcalloc(1, sizeof(*a));
        a->src = xmalloc(n + 1);
        memcpy(a->src, s, n);
        a->src[n] = 0;
        a->n = n;
        a->cap = 64;
        a->nodes = xcalloc(a->cap, sizeof(*a->nodes));
        a->nn = 1; /* node 0: none */
        struct psr P = {.a = a, .s = a->src, .n = n, .nest = nest};
        if (n > SH_MAX_NODES * 16u) {
                LIMIT(&P, "input too long");
                a->root = node(&P, SH_LIST, 0);
                return a;
        }
        if (nest > SH_MAX_NEST) {
                LIMIT(&P, "nesting too deep");
                a->root = node(&P, SH_LIST, 0);
                return a;
        }
        a->root = parse_list(&P, T_EOF, true);
        if (!a->root) { /* the tree was full at once */
                P.a->nodes[0] = (struct sh_node){.kind = SH_LIST, .fd = -1};
        }
        for (size_t k = 0; k < P.nhd; k++) /* here-documents the input ended before */
                free(P.hd[k].delim);
        return a;
}

void sh_ast_free(struct sh_ast *a)
{
        if (!a)
                return;
        for (uint32_t k = 1; k < a->nn; k++)
                if (a->nodes[k].kind == SH_BACKTICK)
                        sh_ast_free(a->nodes[k].sub);
        for (struct chunk *c = a->strs, *nx; c; c = nx) {
                nx = c->next;
                free(c);
        }
        free(a->nodes);
        free(a->src);
        free(a);
}
