/* Private to the policy engine: shell variables as the parser tracks them (vars.c).
 *
 * A variable is known (one value, or a few values when control flow decides between
 * assignments: `if c; then d=build; else d=dist; fi`) or unknown.  Control flow is kept as
 * a stack of frames (a branch, a loop, a subshell, a function body ...); each frame logs
 * the value every variable it changes had when the frame began, so that when the frame
 * ends the variable takes every value it may have there: a subshell's assignments are
 * undone, a branch's are joined with the value before it, and a loop's body is read again
 * when a later iteration could see a value the first reading did not. */
#ifndef TXBOX_POLICY_VARS_H
#define TXBOX_POLICY_VARS_H

#include "base/strvec.h"
#include "pol.h"

#define VAL_MAX 16 /* possible values of one variable; more is unknown */

struct vals {
        char **v;
        unsigned n; /* 0: unknown */
};

void vals_free(struct vals *a);
struct vals vals_of(const char *s);
struct vals vals_copy(const struct vals *a);
/* dst gets every value of src too; unknown absorbs, and more than VAL_MAX is unknown. */
void vals_union(struct vals *dst, const struct vals *src);

enum frame_kind {
        FR_GROUP, /* no branching: { ... }, a single command's pipeline */
        FR_SUB,   /* a subshell: ( ), $( ), ` `, a background job: its changes are undone */
        FR_MAYBE, /* runs or not: && ||, a pipeline's stages, a function's body */
        FR_IF,    /* if/elif/else: exclusive branches, joined at fi */
        FR_CASE,  /* case: branches joined at esac, with the value before (no pattern matched) */
        FR_LOOP,  /* while/until/for/select: zero or more times */
        FR_ALT,   /* one command read once per possible value of its words: exactly one runs */
        FR_BRACE, /* { ... }: no branching */
};

struct frame {
        enum frame_kind kind;
        unsigned id;
        /* The parser reads compound commands in one pass: the list that opened one has
         * moved on when it ends.  Its frame ends later, when it is on top again: */
        bool orphan; /* the list or pipeline that opened it has ended */
        bool ended;  /* its closing word (fi, done, esac, }) was read */
        bool piped;  /* it is a stage of a pipeline (a subshell in most shells) */
        size_t log0;       /* its entries in the log */
        const void *owner; /* the parse that opened it (closers of other strings are ignored) */
        int nsep;          /* branch separators seen */
        bool has_else;
        /* loops: where the body is read again from, and what the parser had there */
        size_t start, hd_from, hd_to, n0;
        bool hd_active;
        int pass;
        bool until, cond_done;
        bool infinite, bg, waits, breaks; /* a spawn loop: infinite, backgrounds, never waits */
        /* function bodies: the function's name (a call of itself in the background) */
        char *func;
};

struct logent {
        char *name;
        struct vals old, acc, start;
        bool acc_set;
};

struct var {
        char *name;
        struct vals val;
        char *ref;  /* a nameref's target ("" when unknown), or NULL */
        bool local; /* a function's $1..$9 or local: dropped when the call returns */
};

struct vars {
        const struct policy_ctx *ctx;
        struct var *e;
        size_t n, cap;
        bool full; /* a change could not be tracked: from then on no value is known */
        struct frame *fr;
        size_t nfr, capfr;
        struct logent *log;
        size_t nlog, caplog;
        struct strvec alias_names, alias_vals;
        size_t *copied; /* bytes copied, counted against POL_MAX_COPIED */
        bool over;      /* that budget ran out (the parser fails closed) */
        char *dflt[1];
        bool forgot;    /* a sourced file may have changed anything: defaults unknown too */
        unsigned next_id;
};

struct vars *vars_new(const struct policy_ctx *ctx, size_t *copied);
void vars_free(struct vars *V);

/* The value of name, borrowed until the next change; false when unknown. */
bool vars_get(struct vars *V, const char *name, struct vals *out);
/* An assignment (through namerefs), logged in the innermost frame. */
void vars_set(struct vars *V, const char *name, size_t nlen, const struct vals *v);
void vars_set_unknown(struct vars *V, const char *name, size_t nlen);
/* A nameref: name refers to target (NULL: a target that cannot be known). */
void vars_set_ref(struct vars *V, const char *name, size_t nlen, const char *target, bool local);
/* A new entry that shadows name until vars_pop_locals (a function's $1, local x). */
void vars_push_local(struct vars *V, const char *name, size_t nlen, const struct vals *v);
void vars_pop_locals(struct vars *V, size_t mark);
/* A sourced file ran: every variable it could change is unknown. */
void vars_forget(struct vars *V);

struct frame *frame_push(struct vars *V, enum frame_kind kind, const void *owner);
struct frame *frame_top(struct vars *V);
/* Between two branches of the innermost frame (else, elif, ;;, the next value). */
void frame_sep(struct vars *V);
/* End the innermost frame: its changes undone (FR_SUB), joined, or kept. */
void frame_close(struct vars *V);
/* Close every frame above depth. */
void frame_close_to(struct vars *V, size_t depth);
/* At the end of a loop's body: true when it must be read again, because a variable it
 * changes now has values the first reading did not use (the third reading makes every
 * such variable unknown, which no later iteration can add to). */
bool frame_loop_again(struct vars *V);

/* Aliases defined in the string: name's text, or NULL. */
const char *vars_alias(struct vars *V, const char *name);
void vars_alias_set(struct vars *V, const char *name, const char *value);

#endif
