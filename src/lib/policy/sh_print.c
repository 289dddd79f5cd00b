/* The syntax tree printed back as shell text, in the form bash prints a function with
 * `declare -f`: lists one command a line, compound commands spread over lines and
 * indented by four, redirections after the words, [[ ]] and (( )) normalised as bash
 * normalises them, the contents of $( ) on one line.  Only tests use it: what the parser
 * read is held against bash's own reading of the same text (tests/corpus/shparse.sh),
 * and the fuzzer checks that printing and reading again gives the same print. */
#define _GNU_SOURCE
#include "policy/sh_ast.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/macros.h"
#include "base/mem.h"

struct pr {
        const struct sh_ast *a;
        char *s;
        size_t n, cap;
        int indent, skip;
        bool infunc, was_heredoc;
        int comsub; /* inside $( ): bash prints functions there with `function` */
        uint32_t hd[64]; /* here-documents whose bodies come after the line */
        size_t nhd;
};

static void put(struct pr *p, const char *s, size_t n)
{
        if (p->n + n + 1 > p->cap) {
                while (p->n + n + 1 > p->cap)
                        p->cap = p->cap ? p->cap * 2 : 256;
                p->s = xrealloc(p->s, p->cap);
        }
        memcpy(p->s + p->n, s, n);
        p->n += n;
        p->s[p->n] = 0;
}

static void puts_(struct pr *p, const char *s) { put(p, s, strlen(s)); }

static void indent(struct pr *p)
{
        for (int k = 0; k < p->indent; k++)
                put(p, " ", 1);
}

static void newline(struct pr *p, const char *s)
{
        puts_(p, "\n");
        indent(p);
        puts_(p, s);
}

static char last(const struct pr *p) { return p->n ? p->s[p->n - 1] : 0; }

static void semicolon(struct pr *p)
{
        if (p->n && (last(p) == '&' || last(p) == '\n'))
                return;
        puts_(p, ";");
}

#define NODE(p, k) (&(p)->a->nodes[k])

static void cmd(struct pr *p, uint32_t k);
static void list(struct pr *p, uint32_t k);
static void word(struct pr *p, uint32_t k);
static void heredocs(struct pr *p);

/* Source text with line continuations removed (as bash stores a word). */
static void src(struct pr *p, size_t from, size_t to)
{
        const char *s = p->a->src;
        for (size_t k = from; k < to; k++) {
                if (s[k] == '\\' && k + 1 < to && s[k + 1] == '\n') {
                        k++;
                        continue;
                }
                if (s[k] == '\\' && k + 1 < to) { /* \\ is one escaped backslash: a newline after it stays */
                        put(p, s + k, 2);
                        k++;
                        continue;
                }
                put(p, s + k, 1);
        }
}

/* A word part as written, but with the substitutions in it printed again (bash prints
 * what is inside $( ) in its own form). */
static void span(struct pr *p, uint32_t k)
{
        const struct sh_node *n = NODE(p, k);
        switch (n->kind) {
        case SH_SQ:
                put(p, p->a->src + n->off, n->len);
                return;
        case SH_ANSI: /* decoded, in single quotes */
                puts_(p, "'");
                for (uint32_t j = 0; j < n->tlen; j++)
                        if (n->text[j] == '\'')
                                puts_(p, "'\\''");
                        else
                                put(p, n->text + j, 1);
                puts_(p, "'");
                return;
        case SH_ESC:
                if (n->len == 1) { /* a backslash that ended the input: itself, escaped */
                        puts_(p, "\\\\");
                        return;
                }
                src(p, n->off, n->off + n->len);
                return;
        case SH_BACKTICK:
        case SH_ARITH:
        case SH_LIT:
        case SH_TILDE:
                src(p, n->off, n->off + n->len);
                return;
        case SH_CMDSUB:
        case SH_PROCSUB: {
                bool f = p->infunc, hd = p->was_heredoc;
                int ind = p->indent, skip = p->skip;
                size_t nhd = p->nhd;
                uint32_t saved[ARRAY_SIZE(p->hd)];
                memcpy(saved, p->hd, sizeof(saved));
                p->infunc = false;
                p->indent = 0;
                p->skip = 1;
                p->nhd = 0;
                p->comsub++;
                puts_(p, n->kind == SH_CMDSUB ? "$(" : n->op == '<' ? "<(" : ">(");
                size_t at = p->n;
                list(p, n->kid);
                if (p->n > at && p->s[at] == '(') { /* $( ( a ) ): not $(( */
                        put(p, " ", 1);
                        memmove(p->s + at + 1, p->s + at, p->n - at - 1);
                        p->s[at] = ' ';
                }
                heredocs(p);
                puts_(p, ")");
                p->comsub--;
                p->infunc = f;
                p->indent = ind;
                p->skip = skip;
                p->was_heredoc = hd;
                memcpy(p->hd, saved, sizeof(saved));
                p->nhd = nhd;
                return;
        }
        case SH_ARRAY: {
                puts_(p, "(");
                bool first = true;
                SH_KIDS(p->a, k, w) {
                        if (!first)
                                puts_(p, " ");
                        first = false;
                        word(p, w);
                }
                puts_(p, ")");
                return;
        }
        default:
                break;
        }
        size_t pos = n->off;
        if (n->kind == SH_DQ && (n->flags & SH_F_LOCALE))
                pos++; /* $"..." is printed "..." */
        SH_KIDS(p->a, k, c) {
                const struct sh_node *x = NODE(p, c);
                if (x->kind == SH_HEREDOC)
                        continue;
                if (x->off < pos)
                        continue;
                src(p, pos, x->off);
                span(p, c);
                pos = x->off + x->len;
        }
        src(p, pos, n->off + n->len);
}

static void word(struct pr *p, uint32_t k) { span(p, k); }

static void assign(struct pr *p, uint32_t k)
{
        const struct sh_node *n = NODE(p, k);
        put(p, n->text, n->tlen); /* NAME[subscript] as written */
        puts_(p, n->op == '+' ? "+=" : "=");
        uint32_t v = n->kid;
        if (v && NODE(p, v)->kind == SH_WORD && NODE(p, v)->op == '[')
                v = NODE(p, v)->next;
        if (v)
                span(p, v);
}

/* A here-document's delimiter as written (s, n bytes) with its quotes removed: inside
 * '...' every byte is itself, inside "..." a backslash quotes only $ ` " \ and newline,
 * elsewhere it quotes any byte. */
static void delimiter(struct pr *p, const char *s, size_t n)
{
        char q = 0;
        for (size_t j = 0; j < n; j++) {
                if (q == '\'' && s[j] != '\'') {
                        put(p, s + j, 1);
                        continue;
                }
                if ((!q || q == s[j]) && (s[j] == '\'' || s[j] == '"')) {
                        q = q ? 0 : s[j];
                        continue;
                }
                if (s[j] == '\\' && j + 1 < n && (!q || strchr("$`\"\\\n", s[j + 1])))
                        j++;
                put(p, s + j, 1);
        }
}

static void redir_fd(struct pr *p, uint32_t k, const char *fd);

/* A redirection; its fd as written: a number, or {NAME} of any length. */
static void redir(struct pr *p, uint32_t k)
{
        const struct sh_node *n = NODE(p, k);
        if (n->text) {
                char *fd = xmalloc(n->tlen + 3);
                fd[0] = '{';
                memcpy(fd + 1, n->text, n->tlen);
                memcpy(fd + 1 + n->tlen, "}", 2);
                redir_fd(p, k, fd);
                free(fd);
                return;
        }
        char fd[16] = "";
        if (n->fd >= 0)
                snprintf(fd, sizeof(fd), "%d", n->fd);
        redir_fd(p, k, fd);
}

static void redir_fd(struct pr *p, uint32_t k, const char *fd)
{
        const struct sh_node *n = NODE(p, k);
        bool dflt_in = n->fd == 0 && !n->text, dflt_out = n->fd == 1 && !n->text;
        const struct sh_node *t = n->kid ? NODE(p, n->kid) : NULL;
        switch (n->op) {
        case SH_R_IN: puts_(p, dflt_in ? "" : fd), puts_(p, "< "); break;
        case SH_R_OUT: puts_(p, dflt_out ? "" : fd), puts_(p, "> "); break;
        case SH_R_APPEND: puts_(p, dflt_out ? "" : fd), puts_(p, ">> "); break;
        case SH_R_CLOBBER: puts_(p, dflt_out ? "" : fd), puts_(p, ">| "); break;
        case SH_R_RW: puts_(p, dflt_in ? "" : fd), puts_(p, "<> "); break;
        case SH_R_DUPIN: puts_(p, *fd ? fd : "0"), puts_(p, "<&"); break;
        case SH_R_DUPOUT: { /* >&FILE is &>FILE, printed >&FILE */
                const char *w = p->a->src + t->off;
                bool num = t->len && (strspn(w, "0123456789") == t->len || (t->len == 1 && *w == '-'));
                puts_(p, *fd ? fd : num ? "1" : ""), puts_(p, ">&");
                break;
        }
        case SH_R_ALL: puts_(p, "&> "); break;
        case SH_R_ALL_APPEND: puts_(p, "&>> "); break;
        case SH_R_HERESTR: puts_(p, dflt_in ? "" : fd), puts_(p, "<<< "); break;
        case SH_R_HEREDOC:
        case SH_R_HEREDOC_TAB: {
                puts_(p, dflt_in ? "" : fd);
                puts_(p, n->op == SH_R_HEREDOC ? "<<" : "<<-");
                /* the delimiter: quoted ones as 'DELIM' */
                struct pr d = {0};
                delimiter(&d, p->a->src + t->off, t->len);
                bool q = t->flags & SH_F_QUOTED;
                if (q)
                        puts_(p, "'");
                for (const char *c = d.s; c && *c; c++) /* a quote inside: '\'' */
                        puts_(p, q && *c == '\'' ? "'\\''" : (char[]){*c, 0});
                if (q)
                        puts_(p, "'");
                if (p->nhd < ARRAY_SIZE(p->hd))
                        p->hd[p->nhd++] = k;
                free(d.s);
                return;
        }
        }
        if (t)
                span(p, n->kid);
}

static void heredocs(struct pr *p)
{
        if (!p->nhd)
                return;
        puts_(p, "\n");
        for (size_t h = 0; h < p->nhd; h++) {
                const struct sh_node *r = NODE(p, p->hd[h]), *t = NODE(p, r->kid);
                put(p, t->text, t->tlen);
                delimiter(p, p->a->src + t->off, t->len);
                puts_(p, "\n");
        }
        p->nhd = 0;
        p->was_heredoc = true;
}

/* Bodies waiting when a | && || or & goes on to another command: bash prints them at
 * once, after the operator, and the next command on the line after them, led by pad. */
static void mid_heredocs(struct pr *p, const char *pad)
{
        if (!p->nhd)
                return;
        heredocs(p);
        p->was_heredoc = false;
        puts_(p, pad);
}

/* The redirections among the kids of k (after its words; extra: a 2>&1 that |& adds). */
static void redirs(struct pr *p, uint32_t k, bool lead, bool err)
{
        SH_KIDS(p->a, k, c) {
                if (NODE(p, c)->kind != SH_REDIR)
                        continue;
                if (lead)
                        puts_(p, " ");
                lead = true;
                redir(p, c);
        }
        if (err) {
                if (lead)
                        puts_(p, " ");
                puts_(p, "2>&1");
        }
}

static void simple(struct pr *p, uint32_t k, bool err)
{
        bool any = false;
        SH_KIDS(p->a, k, c) {
                const struct sh_node *x = NODE(p, c);
                if (x->kind == SH_REDIR)
                        continue;
                if (any)
                        puts_(p, " ");
                any = true;
                if (x->kind == SH_ASSIGN)
                        assign(p, c);
                else
                        word(p, c);
        }
        redirs(p, k, any, err);
}

/* [[ ]]: a small expression printer, as bash prints its parse of it (a lone word is
 * -n WORD). */
struct cw {
        struct pr *p;
        uint32_t w[512];
        size_t n, i;
};

static bool cw_is(struct cw *c, size_t i, const char *s)
{
        if (i >= c->n)
                return false;
        const struct sh_node *x = NODE(c->p, c->w[i]);
        if (!x->kid || x->kid != x->last || NODE(c->p, x->kid)->kind != SH_LIT)
                return false;
        const struct sh_node *l = NODE(c->p, x->kid);
        return l->tlen == strlen(s) && !memcmp(l->text, s, l->tlen);
}

static bool cw_in(struct cw *c, size_t i, const char *const *set)
{
        for (; *set; set++)
                if (cw_is(c, i, *set))
                        return true;
        return false;
}

static const char *const unary_ops[] = {"-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r",
                                        "-s", "-t", "-u", "-w", "-x", "-G", "-L", "-N", "-O", "-S", "-z",
                                        "-n", "-o", "-v", "-R", NULL};
static const char *const binary_ops[] = {"=",   "==",  "!=",  "<",   ">",   "=~",  "-eq", "-ne",
                                         "-lt", "-le", "-gt", "-ge", "-ef", "-nt", "-ot", NULL};

static const char *const cond_ops[] = {"&&", "||", "(", ")", "<", ">", NULL};

static void cond_or(struct cw *c);

static void cond_term(struct cw *c)
{
        struct pr *p = c->p;
        if (c->i >= c->n)
                return;
        if (cw_is(c, c->i, "!")) {
                puts_(p, "! ");
                c->i++;
                cond_term(c);
                return;
        }
        if (cw_is(c, c->i, "(")) {
                puts_(p, "( ");
                c->i++;
                cond_or(c);
                if (cw_is(c, c->i, ")"))
                        c->i++;
                puts_(p, " )");
                return;
        }
        /* a unary test takes the next word whatever it is (-n -ne), but [[ ]]'s own
         * operators (the parser's cond_term) */
        if (cw_in(c, c->i, unary_ops) && c->i + 1 < c->n && !cw_in(c, c->i + 1, cond_ops)) {
                word(p, c->w[c->i++]);
                puts_(p, " ");
                word(p, c->w[c->i++]);
                return;
        }
        if (c->i + 2 < c->n + 0 && cw_in(c, c->i + 1, binary_ops)) {
                word(p, c->w[c->i++]);
                puts_(p, " ");
                word(p, c->w[c->i++]);
                puts_(p, " ");
                word(p, c->w[c->i++]);
                return;
        }
        puts_(p, "-n ");
        word(p, c->w[c->i++]);
}

static void cond_and(struct cw *c)
{
        cond_term(c);
        while (cw_is(c, c->i, "&&")) {
                c->i++;
                puts_(c->p, " && ");
                cond_term(c);
        }
}

static void cond_or(struct cw *c)
{
        cond_and(c);
        while (cw_is(c, c->i, "||")) {
                c->i++;
                puts_(c->p, " || ");
                cond_and(c);
        }
}

static void cond(struct pr *p, uint32_t k)
{
        struct cw c = {.p = p};
        SH_KIDS(p->a, k, w) {
                if (NODE(p, w)->kind == SH_WORD && c.n < ARRAY_SIZE(c.w))
                        c.w[c.n++] = w;
        }
        puts_(p, "[[ ");
        while (c.i < c.n) {
                size_t before = c.i;
                cond_or(&c);
                if (c.i == before)
                        c.i++;
        }
        puts_(p, " ]]");
}

static uint32_t kid_at(const struct pr *p, uint32_t k, int i)
{
        uint32_t c = NODE(p, k)->kid;
        while (c && i-- > 0)
                c = NODE(p, c)->next;
        return c;
}

/* The arithmetic between (( and )), as written. */
static void arith_text(struct pr *p, uint32_t a)
{
        const struct sh_node *n = NODE(p, a);
        src(p, n->off + 2, n->off + n->len - 2);
}

static void arith_for(struct pr *p, uint32_t k)
{
        const struct sh_node *a = NODE(p, NODE(p, k)->kid);
        const char *s = p->a->src + a->off + 2;
        size_t n = a->len - 4, cut[2] = {n, n};
        (void)sh_arith_for_cuts(s, n, cut); /* the parser read it only when it holds */
        puts_(p, "for ((");
        size_t from = 0;
        for (int part = 0; part < 3; part++) {
                size_t to = part < 2 ? cut[part] : n;
                size_t b = from, e = to;
                while (b < e && isspace((unsigned char)s[b]))
                        b++;
                if (part)
                        puts_(p, "; ");
                if (e > b)
                        put(p, s + b, e - b);
                else
                        puts_(p, "1");
                from = to < n ? to + 1 : n;
        }
        puts_(p, "))");
        newline(p, "do\n");
        p->indent += 4;
        list(p, kid_at(p, k, 1));
        heredocs(p);
        semicolon(p);
        p->indent -= 4;
        newline(p, "done");
}

static void for_loop(struct pr *p, uint32_t k)
{
        const struct sh_node *n = NODE(p, k);
        puts_(p, n->op == 's' ? "select " : "for ");
        put(p, n->text, n->tlen);
        puts_(p, " in ");
        uint32_t body = 0;
        bool first = true;
        SH_KIDS(p->a, k, c) {
                if (NODE(p, c)->kind != SH_WORD) {
                        body = c;
                        break;
                }
                if (!first)
                        puts_(p, " ");
                first = false;
                word(p, c);
        }
        if (!(n->flags & SH_F_IN))
                puts_(p, "\"$@\"");
        puts_(p, ";");
        newline(p, "do\n");
        p->indent += 4;
        list(p, body);
        heredocs(p);
        semicolon(p);
        p->indent -= 4;
        newline(p, "done");
}

static void if_cmd(struct pr *p, uint32_t k, uint32_t first)
{
        uint32_t c = first;
        puts_(p, "if ");
        p->skip++;
        list(p, c);
        heredocs(p); /* a condition's here-documents come before then, as bash prints them */
        semicolon(p);
        puts_(p, " then\n");
        p->indent += 4;
        c = NODE(p, c)->next;
        list(p, c);
        heredocs(p);
        p->indent -= 4;
        c = NODE(p, c)->next;
        if (c) {
                semicolon(p);
                newline(p, "else\n");
                p->indent += 4;
                if (NODE(p, c)->next) { /* elif: an if inside the else */
                        indent(p);
                        if_cmd(p, k, c);
                } else
                        list(p, c);
                heredocs(p);
                p->indent -= 4;
        }
        semicolon(p);
        newline(p, "fi");
}

static void case_cmd(struct pr *p, uint32_t k)
{
        uint32_t subj = NODE(p, k)->kid;
        puts_(p, "case ");
        word(p, subj);
        puts_(p, " in ");
        p->indent += 4;
        for (uint32_t it = NODE(p, subj)->next; it; it = NODE(p, it)->next) {
                newline(p, "");
                bool first = true;
                uint32_t body = 0;
                SH_KIDS(p->a, it, c) {
                        if (NODE(p, c)->kind != SH_WORD) {
                                body = c;
                                break;
                        }
                        if (!first)
                                puts_(p, " | ");
                        first = false;
                        word(p, c);
                }
                puts_(p, ")\n");
                p->indent += 4;
                if (body && NODE(p, body)->kid)
                        list(p, body);
                p->indent -= 4;
                heredocs(p);
                int op = NODE(p, it)->op;
                newline(p, op == SH_CASE_FALL ? ";&" : op == SH_CASE_NEXT ? ";;&" : ";;");
        }
        p->indent -= 4;
        newline(p, "esac");
}

static void group(struct pr *p, uint32_t k)
{
        puts_(p, "{ ");
        if (!p->infunc)
                p->skip++;
        else {
                puts_(p, "\n");
                p->indent += 4;
        }
        list(p, NODE(p, k)->kid);
        heredocs(p);
        if (p->infunc) {
                puts_(p, "\n");
                p->indent -= 4;
                indent(p);
        } else {
                semicolon(p);
                puts_(p, " ");
        }
        puts_(p, "}");
}

static void func(struct pr *p, uint32_t k)
{
        const struct sh_node *n = NODE(p, k);
        if (p->comsub)
                puts_(p, "function ");
        put(p, n->text, n->tlen);
        puts_(p, " () \n");
        indent(p);
        puts_(p, "{ \n");
        bool f = p->infunc;
        p->infunc = true;
        p->indent += 4;
        uint32_t body = n->kid;
        bool grp = NODE(p, body)->kind == SH_GROUP;
        if (grp)
                list(p, NODE(p, body)->kid);
        else
                cmd(p, body);
        heredocs(p);
        p->indent -= 4;
        p->infunc = f;
        bool rd = false;
        SH_KIDS(p->a, body, c) rd |= grp && NODE(p, c)->kind == SH_REDIR;
        if (rd) {
                newline(p, "} ");
                redirs(p, body, false, false);
        } else
                newline(p, "}");
}

/* One command (err: a |& follows it, which bash reads as 2>&1 |). */
static void command(struct pr *p, uint32_t k, bool err)
{
        if (p->skip)
                p->skip--;
        else
                indent(p);
        const struct sh_node *n = NODE(p, k);
        switch (n->kind) {
        case SH_SIMPLE: simple(p, k, err); return;
        case SH_FUNC: func(p, k); return;
        case SH_SUBSHELL:
                puts_(p, "( ");
                p->skip++;
                list(p, n->kid);
                heredocs(p);
                puts_(p, " )");
                break;
        case SH_GROUP: group(p, k); break;
        case SH_IF: if_cmd(p, k, n->kid); break;
        case SH_LOOP:
                puts_(p, n->op == 'w' ? "while " : "until ");
                p->skip++;
                list(p, n->kid);
                heredocs(p); /* before do, as for if's condition */
                semicolon(p);
                puts_(p, " do\n");
                p->indent += 4;
                list(p, kid_at(p, k, 1));
                heredocs(p);
                p->indent -= 4;
                semicolon(p);
                newline(p, "done");
                break;
        case SH_FOR: for_loop(p, k); break;
        case SH_ARITH_FOR: arith_for(p, k); break;
        case SH_CASE: case_cmd(p, k); break;
        case SH_ARITH_CMD:
                puts_(p, "((");
                arith_text(p, n->kid);
                puts_(p, "))");
                break;
        case SH_COND: cond(p, k); break;
        case SH_COPROC:
                puts_(p, "coproc ");
                if (n->text)
                        put(p, n->text, n->tlen);
                else
                        puts_(p, "COPROC");
                puts_(p, " ");
                p->skip++;
                command(p, n->kid, false);
                return;
        default: return;
        }
        redirs(p, k, true, err);
}

/* Bash keeps a list as connections, the earlier ones nested in the later: each adds its
 * connector after what came before. */
static void pipeline(struct pr *p, uint32_t k, uint32_t upto)
{
        const struct sh_node *n = NODE(p, k);
        uint32_t prev = 0;
        for (uint32_t c = n->kid; c && c != upto; c = NODE(p, c)->next)
                prev = c;
        if (!prev)
                return;
        uint32_t next = NODE(p, prev)->next;
        bool err = next && next == upto && (NODE(p, next)->flags & SH_F_PIPE_ERR);
        if (prev == n->kid) {
                command(p, prev, err);
                return;
        }
        if (p->skip)
                p->skip--;
        else
                indent(p);
        p->skip++;
        pipeline(p, k, prev);
        puts_(p, p->nhd ? " |" : " | ");
        mid_heredocs(p, "  ");
        p->skip++;
        command(p, prev, err);
}

static void pipe_cmd(struct pr *p, uint32_t k)
{
        const struct sh_node *n = NODE(p, k);
        if (n->flags & (SH_F_TIME | SH_F_BANG)) {
                if (p->skip)
                        p->skip--;
                else
                        indent(p);
                if (n->flags & SH_F_TIME)
                        puts_(p, n->flags & SH_F_TIMEP ? "time -p " : "time ");
                if (n->flags & SH_F_BANG)
                        puts_(p, "! ");
                p->skip++;
                if (!n->kid) {
                        p->skip--;
                        return;
                }
        }
        pipeline(p, k, 0);
}

static void andor(struct pr *p, uint32_t k, uint32_t upto)
{
        const struct sh_node *n = NODE(p, k);
        uint32_t prev = 0;
        for (uint32_t c = n->kid; c && c != upto; c = NODE(p, c)->next)
                prev = c;
        if (!prev)
                return;
        if (prev == n->kid) {
                pipe_cmd(p, prev);
                return;
        }
        if (p->skip)
                p->skip--;
        else
                indent(p);
        p->skip++;
        andor(p, k, prev);
        puts_(p, NODE(p, prev)->op == SH_AND ? " && " : " || ");
        mid_heredocs(p, " ");
        p->skip++;
        pipe_cmd(p, prev);
}

static void connector(struct pr *p, int op, bool second)
{
        if (op == '&') {
                puts_(p, " &");
                if (second && p->nhd) {
                        mid_heredocs(p, "  ");
                        p->skip++;
                } else if (second) {
                        puts_(p, " ");
                        p->skip++;
                }
                return;
        }
        if (p->nhd) {
                heredocs(p);
                if (op == '\n' && !p->infunc) /* in $( ), a line ends after the bodies too */
                        puts_(p, "\n");
        } else if (!p->was_heredoc)
                puts_(p, op == '\n' && !p->infunc ? "\n" : ";");
        else {
                p->was_heredoc = false; /* bash leaves out the ; after a body, not a line's end */
                if (op == '\n' && !p->infunc)
                        puts_(p, "\n");
        }
        if (p->infunc)
                puts_(p, "\n");
        else {
                if (op != '\n')
                        puts_(p, " ");
                p->skip++;
        }
}

/* The items of list k before item upto (0: all of them). */
static void items(struct pr *p, uint32_t k, uint32_t upto)
{
        uint32_t prev = 0;
        for (uint32_t c = NODE(p, k)->kid; c && c != upto; c = NODE(p, c)->next)
                prev = c;
        if (!prev)
                return;
        bool bg_end = !upto && NODE(p, prev)->op == '&';
        if (prev == NODE(p, k)->kid && !bg_end) {
                andor(p, prev, 0);
                return;
        }
        if (p->skip)
                p->skip--;
        else
                indent(p);
        p->skip++;
        if (prev == NODE(p, k)->kid) { /* a lone command in the background */
                andor(p, prev, 0);
                connector(p, '&', false);
                return;
        }
        uint32_t before = 0;
        for (uint32_t c = NODE(p, k)->kid; c != prev; c = NODE(p, c)->next)
                before = c;
        items(p, k, prev);
        connector(p, NODE(p, before)->op, true);
        andor(p, prev, 0);
        if (NODE(p, prev)->op != '&') /* else after the & (a body cannot come before it) */
                heredocs(p);
        if (bg_end)
                connector(p, '&', false);
}

static void list(struct pr *p, uint32_t k)
{
        if (!k || !NODE(p, k)->kid)
                return;
        items(p, k, 0);
}

static void cmd(struct pr *p, uint32_t k) { command(p, k, false); }

char *sh_print(const struct sh_ast *a)
{
        struct pr p = {.a = a, .infunc = true, .indent = 4};
        puts_(&p, "f () \n{ \n");
        list(&p, a->root);
        heredocs(&p);
        p.indent = 0;
        newline(&p, "}");
        return p.s;
}
