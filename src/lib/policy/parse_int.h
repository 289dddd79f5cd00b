/* Private to the shell parser: parse.c (errors, compound commands, lists, parse_script) and
 * its parts parse_expand.c (values of words), parse_word.c (reading a word), parse_simple.c
 * (reading a simple command) and parse_emit.c (built-ins, emitting a command).  The parser
 * is one recursive descent split by job, so the parts share its state and call into one
 * another: a command substitution inside a word reads a list again, a function call reads
 * its body again. */
#ifndef TXBOX_POLICY_PARSE_INT_H
#define TXBOX_POLICY_PARSE_INT_H

#include "policy/vars.h"

#include <ctype.h>

#include "base/mem.h"
#include "base/strvec.h"

/* ---- growable byte buffer ---- */

struct sb {
        char *s;
        size_t n, cap;
};

static inline void sb_putc(struct sb *b, char c)
{
        if (b->n + 2 > b->cap) {
                b->cap = b->cap ? b->cap * 2 : 32;
                b->s = xrealloc(b->s, b->cap);
        }
        b->s[b->n++] = c;
        b->s[b->n] = 0;
}

static inline void sb_put(struct sb *b, const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                sb_putc(b, s[i]);
}

static inline char *sb_take(struct sb *b)
{
        char *s = b->s ? b->s : xstrdup("");
        b->s = NULL;
        b->n = b->cap = 0;
        return s;
}

/* ---- parser state ---- */

/* Bytes that mark what a word is made of; none can occur in the input (parse_script
 * refuses them), so a word cannot forge one. */
#define SPLIT '\002' /* a field-splitting point from an unquoted known expansion */
#define ALT_B '\003' /* ALT_B digits ALT_E: an expansion with several possible values */
#define ALT_E '\004'
#define BR_O '\005'  /* unquoted { , } typed in a word: brace expansion */
#define BR_S '\006'
#define BR_C '\007'

#define MAX_ALTS 4096    /* words with several possible values, per string */
#define MAX_VARIANTS 32  /* a command read once per combination of its words' values */
#define MAX_BRACE 256    /* words one brace expression expands to */
#define MAX_REPARSE 32   /* loop bodies read again, per decision */
#define MAX_FRAMES 512   /* nesting of compound commands */

struct alt {
        struct vals v;
        char *ifs; /* unquoted: split at these characters; NULL when quoted */
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
        size_t fr_base;               /* frames below this one belong to outer strings */
        struct strvec funcs, fbodies; /* defined functions and their bodies ("" unknown) */
        struct psh *parent;           /* the string this one was found in */
        const char *in_func;          /* the function whose body this is */
        const char *in_args;          /* ... and the arguments it is read with */
        char *pending_func;           /* name() just read: its body's { comes next */
        struct alt *alts;
        size_t nalts, capalts;
        bool err;
};

struct word {
        struct sb b;
        bool any, quoted, unk, dl, alt;
};

struct redirs {
        struct strvec writes, reads, clobbers;
        char *stdin_text;
        bool dl; /* it reads a download (sh < <(curl URL)) */
};

/* The lexer's one-line tests of the input, like the byte buffer above inline in every part
 * (they run for each character read). */
static inline int cur(const struct psh *P) { return P->i < P->n ? (unsigned char)P->s[P->i] : -1; }
static inline int at(const struct psh *P, size_t k)
{
        return P->i + k < P->n ? (unsigned char)P->s[P->i + k] : -1;
}

static inline bool is_meta(int c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
               c == '>' || c == '(' || c == ')' || c == -1;
}

static inline bool is_name_start(int c) { return c == '_' || isalpha(c); }
static inline bool is_name_char(int c) { return c == '_' || isalnum(c); }

/* parse.c */
void parse_list(struct psh *P, char term);
int parse_cmd_offset(const struct psh *P);
void parse_err(struct psh *P, const char *what);
void parse_limit(struct psh *P, const char *what);
void parse_finding(struct psh *P, const char *name, const char *detail);
bool parse_spend(struct psh *P, size_t n);

/* parse_expand.c */
bool parse_var_get(struct psh *P, const char *name, struct vals *out);
const char *parse_var_one(struct psh *P, const char *name);
void parse_put_unk(struct word *w);
const char *parse_ifs_chars(struct psh *P);
void parse_put_value(struct psh *P, struct word *w, const char *v, bool quoted);
bool parse_has_alt(const char *s);
bool parse_alt_expand(struct psh *P, const char *s, struct strvec *out, size_t max);
struct vals parse_vals_of_word(struct psh *P, const char *s);
void parse_subst_result(struct psh *P, struct word *w, size_t n0, bool quoted);
void parse_sub_begin(struct psh *P, size_t *depth);
void parse_sub_end(struct psh *P, size_t depth);
void parse_cmd_subst(struct psh *P, struct word *w, bool quoted);
void parse_psh_free(struct psh *C);
void parse_derived_fn(struct psh *P, const char *s, size_t n, const char *in_func,
                      const char *in_args);
void parse_derived(struct psh *P, const char *s, size_t n);
void parse_backtick(struct psh *P, struct word *w, bool quoted);
void parse_substs_in(struct psh *P, const char *s, size_t n);
void parse_arith_scan(struct psh *P, const char *s, int depth);
void parse_arith_assigns(struct psh *P, const char *s);
void parse_name_scan(struct psh *P, const char *s);
void parse_skip_arith(struct psh *P, bool arith);

/* parse_word.c */
void parse_dollar(struct psh *P, struct word *w, bool quoted);
bool parse_read_word(struct psh *P, struct word *w);
void parse_push_fields(struct psh *P, struct strvec *v, struct word *w);
char *parse_word_str(struct word *w);

/* parse_simple.c */
void parse_skip_blanks(struct psh *P);
void parse_take_newline(struct psh *P);
void parse_skip_space(struct psh *P);
void parse_assign_meaning(struct psh *P, const char *name, size_t nl, const struct vals *v, const char *raw);
bool parse_is_func(struct psh *P, const char *name);
void parse_add_func(struct psh *P, char *name);
void parse_inline_call(struct psh *P, char **argv, size_t argc);
void parse_simple(struct psh *P);

/* parse_emit.c */
char *parse_cwd_of(struct psh *P);
struct frame *parse_innermost_loop(struct psh *P);
void parse_redirs_free(struct redirs *r);
void parse_emit(struct psh *P, struct strvec *argv, struct redirs *r, bool dl, size_t end);

#endif
