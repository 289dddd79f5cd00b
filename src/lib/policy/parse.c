/* A shell parser that finds the simple commands a script would run.
 *
 * It follows the POSIX sh grammar plus the bash forms agents use, but builds no tree: the
 * policy needs every simple command (with its expanded words, redirections, pipeline
 * position and here-document), so compound commands are read in one pass and every branch
 * counts as run.  What control flow does to variables is kept, though (vars.c): a value
 * assigned in a subshell is undone after it, one assigned in a branch, a loop or a function
 * body joins the value before it, and a command whose words have several possible values
 * is judged once for each.  Values that cannot be known (parameters, command output)
 * become UNK so that the matcher treats them as unknown rather than safe.  Parse errors
 * add an @parse-error finding: a guard must fail closed on what it cannot read, since the
 * real shell may read it differently.  The parser is split by job into this file and the
 * parse_*.c beside it; parse_int.h lists them and what they share. */
#define _GNU_SOURCE
#include <string.h>

#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"
#include "policy/parse_int.h"


int parse_cmd_offset(const struct psh *P)
{
        return P->pos.direct ? P->pos.base + (int)P->cmd_start : P->pos.outer_off;
}

void parse_err(struct psh *P, const char *what)
{
        if (P->err)
                return;
        P->err = true;
        size_t from = P->cmd_start < P->n ? P->cmd_start : P->n;
        char *text = xasprintf("%.200s", P->s + from);
        scan_finding(P->sc, "@parse-error", what, text, parse_cmd_offset(P));
        free(text);
}

/* A limit was reached: fail closed like a parse error, but say which. */
void parse_limit(struct psh *P, const char *what)
{
        if (P->err)
                return;
        P->err = true;
        scan_finding(P->sc, "@limit-exceeded", what, "", parse_cmd_offset(P));
}

void parse_finding(struct psh *P, const char *name, const char *detail)
{
        size_t from = P->cmd_start < P->n ? P->cmd_start : P->n;
        char *text = xasprintf("%.200s", P->s + from);
        char *nl = strchr(text, '\n');
        if (nl)
                *nl = 0;
        scan_finding(P->sc, name, detail, text, parse_cmd_offset(P));
        free(text);
}

/* Text the parser copies beyond the input itself (expanded values, function bodies) counts
 * against one budget per decision: x=$x$x doubles a word with each assignment. */
bool parse_spend(struct psh *P, size_t n)
{
        struct scan *sc = P->sc;
        if (!P->vars->over && n <= POL_MAX_COPIED && sc->copied <= POL_MAX_COPIED - n) {
                sc->copied += n;
                return true;
        }
        if (!sc->failed)
                scan_finding(sc, "@limit-exceeded", "expansions too large", "", -1);
        P->err = true;
        return false;
}

/* ---- compound commands ---- */

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

/* The words of a for loop's list, expanded: its variable takes each of them. */
static struct vals for_words(struct psh *P)
{
        struct strvec words = {0};
        bool unknown = false;
        for (;;) {
                parse_skip_blanks(P);
                int c = cur(P);
                if (c == -1 || c == ';' || c == '\n' || c == '&' || c == ')')
                        break;
                if (c == '|' || c == '(' || c == '<' || c == '>') {
                        P->i++;
                        unknown = true;
                        continue;
                }
                struct word w;
                bool got = parse_read_word(P, &w);
                if (!got) {
                        free(w.b.s);
                        if (!P->err)
                                P->i++;
                        if (P->err)
                                break;
                        continue;
                }
                parse_push_fields(P, &words, &w);
        }
        struct vals v = {0};
        for (size_t k = 0; k < words.n && !unknown; k++) {
                struct vals one = parse_vals_of_word(P, words.v[k]);
                if (!k)
                        v = one;
                else {
                        vals_union(&v, &one);
                        vals_free(&one);
                }
                if (!v.n)
                        break;
        }
        if (unknown || !words.n)
                vals_free(&v);
        strv_free(words.v);
        return v;
}

/* Does the text of a loop's condition always succeed (true, :, ((1)))? */
static bool always(const char *s, size_t n, bool until)
{
        static const char *const yes[] = {"true",   ":",      "[1]",       "((1))",
                                          "[[1]]",  "test1",  "/bin/true", "/usr/bin/true",
                                          "[true]", "((;;))", "sleep1",    "sleep0"};
        static const char *const no[] = {"false", "!true", "/bin/false", "/usr/bin/false", "((0))", "!:"};
        char buf[32];
        size_t o = 0;
        for (size_t k = 0; k < n; k++)
                if (!isspace((unsigned char)s[k]) && s[k] != ';') {
                        if (o + 1 >= sizeof(buf))
                                return false;
                        buf[o++] = s[k];
                }
        buf[o] = 0;
        const char *const *list = until ? no : yes;
        size_t len = until ? ARRAY_SIZE(no) : ARRAY_SIZE(yes);
        for (size_t k = 0; k < len; k++)
                if (!strcmp(buf, list[k]))
                        return true;
        return false;
}

/* for (( init; cond; step )): endless when cond is empty or a nonzero constant. */
static bool arith_for_endless(const char *s, size_t n)
{
        if (n < 4 || strncmp(s, "((", 2))
                return false;
        const char *end = s + n, *a = memchr(s + 2, ';', (size_t)(end - s - 2));
        const char *b = a ? memchr(a + 1, ';', (size_t)(end - a - 1)) : NULL;
        if (!b)
                return false;
        bool digit = false;
        for (const char *p = a + 1; p < b; p++) {
                if (isspace((unsigned char)*p))
                        continue;
                if (!isdigit((unsigned char)*p))
                        return false;
                digit |= *p != '0';
        }
        return digit || strspn(a + 1, " \t") == (size_t)(b - a - 1);
}

static struct frame *push_loop(struct psh *P)
{
        struct frame *f = frame_push(P->vars, FR_LOOP, P);
        f->hd_active = P->hd_active;
        f->hd_from = P->hd_from;
        f->hd_to = P->hd_to;
        f->n0 = P->sc->n;
        return f;
}

static void for_loop(struct psh *P)
{
        parse_skip_blanks(P);
        struct frame *f = push_loop(P);
        if (cur(P) == '(' && at(P, 1) == '(') {
                size_t s = P->i;
                parse_skip_arith(P, true);
                f = frame_top(P->vars);
                f->infinite = arith_for_endless(P->s + s, P->i - s);
                f->start = P->i;
                f->cond_done = true;
                return;
        }
        struct word w;
        parse_read_word(P, &w);
        char *name = parse_word_str(&w);
        parse_skip_blanks(P);
        struct vals v = {0};
        if (peek_reserved(P) && !strcmp(peek_reserved(P), "in")) {
                P->i += 2;
                v = for_words(P);
        }
        /* the loop variable takes every word of the list (for f in *: every file) */
        if (is_name_start((unsigned char)name[0]))
                vars_set(P->vars, name, strlen(name), &v);
        vals_free(&v);
        free(name);
        f = frame_top(P->vars);
        f->start = P->i;
        f->cond_done = true;
}

/* "case WORD in": the subject, up to the reserved word in. */
static void case_header(struct psh *P)
{
        for (int k = 0; k < 2 && !P->err; k++) {
                parse_skip_space(P);
                struct word w;
                bool got = parse_read_word(P, &w);
                bool in = got && !w.quoted && w.b.s && !strcmp(w.b.s, "in");
                free(w.b.s);
                if (!got || in)
                        return;
        }
}

/* Skip words up to (not including) a separator, parsing their substitutions. */
static void skip_words(struct psh *P, bool stop_at_paren)
{
        for (;;) {
                parse_skip_blanks(P);
                int c = cur(P);
                if (c == -1 || c == ';' || c == '\n' || c == '&' || (stop_at_paren && c == ')'))
                        return;
                if (c == '|' || c == '(' || c == ')' || c == '<' || c == '>') {
                        P->i++;
                        continue;
                }
                struct word w;
                bool got = parse_read_word(P, &w);
                free(w.b.s);
                if (!got) {
                        if (!P->err)
                                P->i++;
                        if (P->err)
                                return;
                }
        }
}

static void case_pattern(struct psh *P)
{
        parse_skip_space(P);
        const char *rw = peek_reserved(P);
        if (rw && !strcmp(rw, "esac"))
                return; /* parse_command closes it */
        if (cur(P) == '(')
                P->i++;
        skip_words(P, true);
        if (cur(P) == ')')
                P->i++;
        P->case_pat = false;
}

/* [[ ... ]]: its words are expanded (substitutions run); the operands of -eq, -lt ... are
 * arithmetic and -v's a name (subscripts evaluated). */
static void double_bracket(struct psh *P)
{
        static const char *const arith_ops[] = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"};
        char *prev = NULL;
        bool arith_next = false;
        for (;;) {
                parse_skip_blanks(P);
                const char *rw = peek_reserved(P);
                if (rw && !strcmp(rw, "]]")) {
                        P->i += 2;
                        break;
                }
                int c = cur(P);
                if (c == -1 || c == '\n' || c == ';') {
                        parse_err(P, "unterminated [[");
                        break;
                }
                if (is_meta(c)) {
                        P->i++;
                        continue;
                }
                struct word w;
                parse_read_word(P, &w);
                char *s = parse_word_str(&w);
                if (P->err) {
                        free(s);
                        break;
                }
                bool op = false;
                for (size_t k = 0; k < ARRAY_SIZE(arith_ops); k++)
                        op |= !strcmp(s, arith_ops[k]);
                if (op || arith_next || (prev && !strcmp(prev, "-v")))
                        parse_name_scan(P, s), parse_arith_scan(P, s, 0);
                if (op && prev)
                        parse_name_scan(P, prev), parse_arith_scan(P, prev, 0);
                arith_next = op;
                free(prev);
                prev = s;
        }
        free(prev);
}

/* ---- frames of control flow ---- */

static unsigned fpush(struct psh *P, enum frame_kind k) { return frame_push(P->vars, k, P)->id; }

static struct frame *fby_id(struct psh *P, unsigned id)
{
        for (size_t d = P->vars->nfr; d-- > P->fr_base;)
                if (P->vars->fr[d].id == id)
                        return &P->vars->fr[d];
        return NULL;
}

/* The list or pipeline that opened frame id is done: it ends now when nothing was left
 * open above it, else once what is above it ends. */
static void fend(struct psh *P, unsigned id)
{
        struct frame *t = frame_top(P->vars);
        if (t && t->id == id)
                frame_close(P->vars);
        else if ((t = fby_id(P, id)))
                t->orphan = true;
}

/* End the frames on top that are done (compounds whose closing word was read, lists that
 * moved on); bg: they ran in the background, so nothing they did is seen here. */
static void settle(struct psh *P, bool bg)
{
        struct frame *t;
        while (P->vars->nfr > P->fr_base && (t = frame_top(P->vars)) && t->owner == P &&
               (t->ended || t->orphan)) {
                if (bg)
                        t->kind = FR_SUB;
                frame_close(P->vars);
        }
}

/* A list's or pipeline's own frame (not a compound's). */
static bool list_frame(const struct frame *f)
{
        return f->kind == FR_GROUP || (f->kind == FR_MAYBE && !f->func);
}

/* The innermost open compound of kind a or b (or a function's body) of this string, or
 * NULL; lists' frames and ended compounds are passed over, a subshell is not. */
static struct frame *find_compound(struct psh *P, enum frame_kind a, enum frame_kind b, bool func,
                                   size_t *depth)
{
        struct vars *V = P->vars;
        for (size_t d = V->nfr; d > P->fr_base; d--) {
                struct frame *f = &V->fr[d - 1];
                if (f->owner != P || f->kind == FR_SUB)
                        return NULL;
                if (f->ended || (list_frame(f) && !(func && f->func)))
                        continue;
                if (f->kind == a || f->kind == b || (func && f->func)) {
                        if (depth)
                                *depth = d;
                        return f;
                }
                return NULL;
        }
        return NULL;
}

/* Its closing word: the frames above it end, it ends with the list it is read in (which
 * may run it in the background or in a pipeline). */
static struct frame *close_compound(struct psh *P, enum frame_kind a, enum frame_kind b, bool func)
{
        size_t d;
        struct frame *f = find_compound(P, a, b, func, &d);
        if (!f)
                return NULL;
        frame_close_to(P->vars, d);
        f = frame_top(P->vars);
        return f;
}

/* A branch separator (else, elif, ;;) of the innermost if or case. */
static void branch(struct psh *P, enum frame_kind k, bool is_else)
{
        size_t d;
        struct frame *f = find_compound(P, k, k, false, &d);
        if (!f)
                return;
        frame_close_to(P->vars, d);
        frame_sep(P->vars);
        frame_top(P->vars)->has_else |= is_else;
}

/* done: a loop whose body changed a variable is read again (a later iteration sees the
 * new value); then its frame ends.  Returns true when the body is read again. */
static bool loop_done(struct psh *P)
{
        struct frame *f = close_compound(P, FR_LOOP, FR_LOOP, false);
        if (!f)
                return false;
        if (frame_loop_again(P->vars)) {
                if (++P->sc->reparses > MAX_REPARSE) {
                        parse_limit(P, "too many loops that change variables");
                        return false;
                }
                P->i = f->start;
                P->hd_active = f->hd_active;
                P->hd_from = f->hd_from;
                P->hd_to = f->hd_to;
                return true;
        }
        if (f->infinite && f->bg && !f->waits && !f->breaks)
                parse_finding(P, "@fork-bomb",
                              "a loop without end that starts a job in the background each time");
        f->ended = true;
        return false;
}

/* Reserved words; returns true when the parser must read a command next (the body of a
 * loop read again). */
static bool reserved(struct psh *P, const char *rw)
{
        size_t at_kw = P->i;
        P->i += strlen(rw);
        struct vars *V = P->vars;
        if (V->nfr - P->fr_base > MAX_FRAMES &&
            (!strcmp(rw, "if") || !strcmp(rw, "while") || !strcmp(rw, "until") || !strcmp(rw, "for") ||
             !strcmp(rw, "case") || !strcmp(rw, "{"))) {
                parse_limit(P, "compound commands nested too deep");
                return false;
        }
        if (!strcmp(rw, "for") || !strcmp(rw, "select"))
                for_loop(P);
        else if (!strcmp(rw, "while") || !strcmp(rw, "until")) {
                struct frame *f = push_loop(P);
                f->start = P->i;
                f->until = !strcmp(rw, "until");
        } else if (!strcmp(rw, "do")) {
                struct frame *f = find_compound(P, FR_LOOP, FR_LOOP, false, NULL);
                if (f && !f->cond_done) { /* the condition of while/until ends here */
                        f->infinite = always(P->s + f->start, at_kw - f->start, f->until);
                        f->cond_done = true;
                }
        } else if (!strcmp(rw, "done"))
                return loop_done(P);
        else if (!strcmp(rw, "if"))
                frame_push(V, FR_IF, P);
        else if (!strcmp(rw, "else") || !strcmp(rw, "elif"))
                branch(P, FR_IF, !strcmp(rw, "else"));
        else if (!strcmp(rw, "fi")) {
                struct frame *f = close_compound(P, FR_IF, FR_IF, false);
                if (f)
                        f->ended = true;
        } else if (!strcmp(rw, "case")) {
                case_header(P);
                frame_push(V, FR_CASE, P);
                P->case_depth++;
                P->case_pat = true;
        } else if (!strcmp(rw, "esac")) {
                struct frame *f = close_compound(P, FR_CASE, FR_CASE, false);
                if (f)
                        f->ended = true;
                P->case_depth--;
                P->case_pat = false;
        } else if (!strcmp(rw, "{")) {
                /* a function's body runs when it is called, if ever */
                struct frame *f = frame_push(V, P->pending_func ? FR_MAYBE : FR_BRACE, P);
                f->func = P->pending_func;
                P->pending_func = NULL;
        } else if (!strcmp(rw, "}")) {
                struct frame *f = close_compound(P, FR_BRACE, FR_BRACE, true);
                if (f)
                        f->ended = true;
        }
        else if (!strcmp(rw, "function")) {
                parse_skip_blanks(P);
                struct word w;
                char *name = parse_read_word(P, &w) ? parse_word_str(&w) : NULL;
                free(w.b.s);
                parse_skip_blanks(P);
                if (cur(P) == '(' && at(P, 1) == ')')
                        P->i += 2;
                if (name)
                        parse_add_func(P, name);
        } else if (!strcmp(rw, "[["))
                double_bracket(P);
        return false;
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
                parse_skip_blanks(P);
                if (P->err || scan_over_time(P->sc)) {
                        if (!P->err && P->sc->failed)
                                P->err = true;
                        return;
                }
                P->cmd_start = P->i;
                if (P->case_pat) {
                        case_pattern(P);
                        if (!P->case_pat)
                                continue;
                }
                if (cur(P) == '(' && at(P, 1) == '(') {
                        parse_skip_arith(P, true); /* (( arithmetic )) */
                        break;
                }
                if (cur(P) == '(') {
                        P->i++;
                        if (++P->nest > POL_MAX_DEPTH * 4)
                                return parse_limit(P, "nesting too deep");
                        free(P->pending_func);
                        P->pending_func = NULL;
                        size_t fd;
                        parse_sub_begin(P, &fd);
                        parse_list(P, ')');
                        parse_sub_end(P, fd);
                        P->nest--;
                        break;
                }
                const char *rw = peek_reserved(P);
                if (rw && P->case_pat && !strcmp(rw, "esac"))
                        P->case_pat = false;
                if (!rw || !strcmp(rw, "in") || !strcmp(rw, "]]") || time_command(P, rw))
                        break;
                if (strcmp(rw, "{")) {
                        free(P->pending_func);
                        P->pending_func = NULL;
                }
                if (reserved(P, rw))
                        continue; /* a loop's body, read again */
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
        unsigned id = fpush(P, FR_GROUP);
        for (;;) {
                parse_command(P);
                parse_skip_blanks(P);
                if (P->err || cur(P) != '|' || at(P, 1) == '|')
                        break;
                P->i += at(P, 1) == '&' ? 2 : 1;
                parse_skip_space(P);
                if (cur(P) == -1 || strchr(";&|)", cur(P))) {
                        parse_err(P, "missing command after |");
                        break;
                }
                /* Stages run in subshells (the last one, in some shells, in this one): what
                 * they assign may or may not be seen after the pipeline. */
                struct frame *f = fby_id(P, id);
                if (f)
                        f->kind = FR_MAYBE;
                for (size_t d = P->vars->nfr;
                     d-- > P->fr_base && (P->vars->fr[d].ended || P->vars->fr[d].orphan);)
                        P->vars->fr[d].piped = true;
                P->stage++;
        }
        fend(P, id);
        P->pipe_id = pid, P->stage = st;
}

/* A function being defined that this and-or list calls in the background: a fork bomb. */
static void background(struct psh *P, size_t n0)
{
        struct frame *l = parse_innermost_loop(P);
        if (l)
                l->bg = true;
        struct vars *V = P->vars;
        for (size_t k = n0; k < P->sc->n; k++) {
                const struct scmd *c = &P->sc->cmds[k];
                if (!c->argv.n || c->argv.v[0][0] == '@')
                        continue;
                for (size_t d = V->nfr; d-- > 0;)
                        if (V->fr[d].func && !strcmp(V->fr[d].func, c->argv.v[0])) {
                                parse_finding(P, "@fork-bomb", c->argv.v[0]);
                                return;
                        }
        }
}

void parse_list(struct psh *P, char term)
{
        for (;;) {
                parse_skip_space(P);
                if (P->err)
                        return;
                int c = cur(P);
                if (c == -1) {
                        if (term)
                                parse_err(P, "missing ')'");
                        return;
                }
                if (term && c == term) {
                        P->i++;
                        return;
                }
                if (c == ')')
                        return parse_err(P, "unexpected ')'");
                if (c == ';' || c == '&' || c == '|')
                        return parse_err(P, "unexpected operator");
                size_t before = P->i, n0 = P->sc->n;
                unsigned lid = fpush(P, FR_GROUP); /* the and-or list: undone if it runs in the background */
                parse_pipeline(P);
                while (!P->err) { /* && || chains */
                        parse_skip_blanks(P);
                        if (!((cur(P) == '&' && at(P, 1) == '&') || (cur(P) == '|' && at(P, 1) == '|')))
                                break;
                        P->i += 2;
                        parse_skip_space(P);
                        if (cur(P) == -1 || strchr(";&|)", cur(P)))
                                return parse_err(P, "missing command after && or ||");
                        unsigned mid = fpush(P, FR_MAYBE);
                        parse_pipeline(P);
                        fend(P, mid);
                }
                parse_skip_blanks(P);
                c = cur(P);
                bool bg = c == '&' && at(P, 1) != '&' && at(P, 1) != '>';
                struct frame *lf = fby_id(P, lid);
                if (lf && bg)
                        lf->kind = FR_SUB;
                settle(P, bg);
                fend(P, lid);
                settle(P, bg);
                if (bg)
                        background(P, n0);
                if (c == ';' && (at(P, 1) == ';' || at(P, 1) == '&')) {
                        P->i += at(P, 1) == '&' ? 2 : at(P, 2) == '&' ? 3 : 2;
                        if (P->case_depth > 0) {
                                P->case_pat = true;
                                branch(P, FR_CASE, false);
                        }
                } else if (c == ';' || c == '&')
                        P->i++;
                else if (c == '\n')
                        parse_take_newline(P);
                else if (P->i == before && c != -1 && c != term && !P->err)
                        return parse_err(P, "unexpected character");
        }
}

void parse_script(struct scan *sc, const char *s, size_t n, struct srcpos pos, int depth)
{
        struct vars *vars = vars_new(sc->ctx, &sc->copied);
        struct psh P = {.sc = sc, .s = s, .n = n, .pos = pos, .depth = depth, .vars = vars};
        bool ctl = false;
        for (size_t k = 0; k < n && !ctl; k++) /* the parser's own marks; UNK only where we made it */
                ctl = (s[k] > 0 && s[k] < 8 && (s[k] != UNK || pos.direct));
        if (n > POL_MAX_INPUT)
                scan_finding(sc, "@limit-exceeded", "input too long", "",
                             pos.direct ? pos.base : pos.outer_off);
        else if (depth > POL_MAX_DEPTH)
                scan_finding(sc, "@limit-exceeded", "nesting too deep", "", pos.outer_off);
        else if (memchr(s, 0, n))
                scan_finding(sc, "@parse-error", "NUL byte in input", "", pos.base);
        else if (ctl) {
                /* the input itself is quoted (its first bytes; printers escape it), with the
                 * bytes the parser uses as marks shown as '?' */
                char *quote = strndup(s, n < 200 ? n : 200);
                if (!quote)
                        abort();
                for (char *q = quote; *q; q++)
                        if (*q > 0 && *q < 8)
                                *q = '?';
                scan_finding(sc, "@parse-error", "control character in input", quote,
                             pos.direct ? pos.base : pos.outer_off);
                free(quote);
        } else
                parse_list(&P, 0);
        frame_close_to(vars, 0);
        if (vars->over && !sc->failed)
                scan_finding(sc, "@limit-exceeded", "expansions too large", "", -1);
        vars_free(vars);
        parse_psh_free(&P);
}
