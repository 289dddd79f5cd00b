/* Shell variables for the policy engine: values (one, a few, or unknown) and the frames
 * of control flow that decide which values a variable may have where it is used.  A guard
 * that read a script flat would take `x=rm; (x=echo); $x -rf ~` for echo; here the
 * subshell's assignment is undone, a branch's is joined with the value before it, and a
 * loop's body is read again with what later iterations could see (vars.h). */
#define _GNU_SOURCE
#include <string.h>

#include "base/mem.h"
#include "base/strv.h"
#include "vars.h"

/* ---- values ---- */

void vals_free(struct vals *a)
{
        for (unsigned k = 0; k < a->n; k++)
                free(a->v[k]);
        free(a->v);
        a->v = NULL;
        a->n = 0;
}

struct vals vals_of(const char *s)
{
        struct vals r = {xmalloc(sizeof(char *)), 1};
        r.v[0] = xstrdup(s);
        return r;
}

struct vals vals_copy(const struct vals *a)
{
        struct vals r = {0};
        if (!a->n)
                return r;
        r.v = xmalloc(a->n * sizeof(char *));
        for (unsigned k = 0; k < a->n; k++)
                r.v[k] = xstrdup(a->v[k]);
        r.n = a->n;
        return r;
}

static bool vals_has(const struct vals *a, const char *s)
{
        for (unsigned k = 0; k < a->n; k++)
                if (!strcmp(a->v[k], s))
                        return true;
        return false;
}

void vals_union(struct vals *dst, const struct vals *src)
{
        if (!dst->n)
                return; /* unknown stays unknown */
        if (!src->n) {
                vals_free(dst);
                return;
        }
        for (unsigned k = 0; k < src->n; k++) {
                if (vals_has(dst, src->v[k]))
                        continue;
                if (dst->n == VAL_MAX) {
                        vals_free(dst);
                        return;
                }
                dst->v = xrealloc(dst->v, (dst->n + 1) * sizeof(char *));
                dst->v[dst->n++] = xstrdup(src->v[k]);
        }
}

static bool vals_equal(const struct vals *a, const struct vals *b)
{
        if (a->n != b->n)
                return false;
        for (unsigned k = 0; k < a->n; k++)
                if (!vals_has(b, a->v[k]))
                        return false;
        return true;
}

/* Copies count against the decision's budget; past it a value is unknown (never a stale
 * one) and the parser fails closed. */
static struct vals copy_counted(struct vars *V, const struct vals *a)
{
        size_t n = 0;
        for (unsigned k = 0; k < a->n; k++)
                n += strlen(a->v[k]) + 1;
        if (V->over || (V->copied && (n > POL_MAX_COPIED || *V->copied > POL_MAX_COPIED - n))) {
                V->over = true;
                return (struct vals){0};
        }
        if (V->copied)
                *V->copied += n;
        return vals_copy(a);
}

/* ---- the table ---- */

struct vars *vars_new(const struct policy_ctx *ctx, size_t *copied)
{
        struct vars *V = xcalloc(1, sizeof(*V));
        V->ctx = ctx;
        V->copied = copied;
        return V;
}

void vars_free(struct vars *V)
{
        if (!V)
                return;
        for (size_t k = 0; k < V->n; k++) {
                free(V->e[k].name);
                vals_free(&V->e[k].val);
                free(V->e[k].ref);
        }
        free(V->e);
        for (size_t k = 0; k < V->nlog; k++) {
                free(V->log[k].name);
                vals_free(&V->log[k].old);
                vals_free(&V->log[k].acc);
                vals_free(&V->log[k].start);
        }
        free(V->log);
        for (size_t k = 0; k < V->nfr; k++)
                free(V->fr[k].func);
        free(V->fr);
        strv_free(V->alias_names.v);
        strv_free(V->alias_vals.v);
        free(V);
}

static ssize_t find(const struct vars *V, const char *name, size_t nlen)
{
        for (size_t k = V->n; k-- > 0;)
                if (strlen(V->e[k].name) == nlen && !memcmp(V->e[k].name, name, nlen))
                        return (ssize_t)k;
        return -1;
}

/* What txbox fixes in the environment the command runs in; and IFS's default. */
static bool dflt(struct vars *V, const char *name, struct vals *out)
{
        const char *v = NULL;
        if (!strcmp(name, "HOME"))
                v = V->ctx->home;
        else if (!strcmp(name, "PWD"))
                v = V->ctx->cwd;
        else if (!strcmp(name, "TMPDIR"))
                v = "/tmp";
        else if (!strcmp(name, "IFS") && !V->forgot)
                v = " \t\n";
        if (!v)
                return false;
        V->dflt[0] = (char *)v;
        out->v = V->dflt;
        out->n = 1;
        return true;
}

bool vars_get(struct vars *V, const char *name, struct vals *out)
{
        *out = (struct vals){0};
        /* A change that could not be tracked (the table overflowed, an assignment through a
         * nameref to an unknown name) may have set any name, even HOME. */
        if (V->full)
                return false;
        for (int hop = 0; hop < 8; hop++) {
                ssize_t k = find(V, name, strlen(name));
                if (k < 0)
                        return dflt(V, name, out);
                if (!V->e[k].ref) {
                        *out = V->e[k].val;
                        return out->n > 0;
                }
                if (!*V->e[k].ref)
                        return false;
                name = V->e[k].ref;
        }
        return false;
}

static void push(struct vars *V, const char *name, size_t nlen, struct vals val, bool local)
{
        if (V->n == POL_MAX_VARS) {
                V->full = true;
                vals_free(&val);
                return;
        }
        if (V->n == V->cap) {
                V->cap = V->cap ? V->cap * 2 : 8;
                V->e = xrealloc(V->e, V->cap * sizeof(*V->e));
        }
        char *nm = strndup(name, nlen);
        if (!nm)
                abort();
        V->e[V->n++] = (struct var){.name = nm, .val = val, .local = local};
}

/* Set without logging (a frame ending puts back or joins what it logged). */
static void set_raw(struct vars *V, const char *name, struct vals val)
{
        ssize_t k = find(V, name, strlen(name));
        if (k >= 0 && !V->e[k].ref) {
                vals_free(&V->e[k].val);
                V->e[k].val = val;
                return;
        }
        push(V, name, strlen(name), val, false);
}

static struct vals current(struct vars *V, const char *name)
{
        struct vals b;
        vars_get(V, name, &b);
        return b; /* borrowed */
}

/* Its entries end where the next frame's begin. */
static size_t log_end(const struct vars *V, const struct frame *f)
{
        size_t i = (size_t)(f - V->fr);
        return i + 1 < V->nfr ? V->fr[i + 1].log0 : V->nlog;
}

static struct logent *log_find(struct vars *V, const struct frame *f, const char *name)
{
        for (size_t k = f->log0, end = log_end(V, f); k < end; k++)
                if (!strcmp(V->log[k].name, name))
                        return &V->log[k];
        return NULL;
}

static void log_add(struct vars *V, struct frame *f, const char *name, struct vals old)
{
        if (V->nlog == V->caplog) {
                V->caplog = V->caplog ? V->caplog * 2 : 16;
                V->log = xrealloc(V->log, V->caplog * sizeof(*V->log));
        }
        struct logent *e = &V->log[V->nlog++];
        *e = (struct logent){.name = xstrdup(name), .old = old};
        e->start = copy_counted(V, &e->old);
        /* Branches already read left it as it was before the frame. */
        if (f->nsep > 0) {
                e->acc = copy_counted(V, &e->old);
                e->acc_set = true;
        }
}

/* Before name changes: the innermost frame remembers what it was. */
static void log_touch(struct vars *V, const char *name)
{
        if (!V->nfr)
                return;
        struct frame *f = &V->fr[V->nfr - 1];
        if (log_find(V, f, name))
                return;
        struct vals cur = current(V, name);
        log_add(V, f, name, copy_counted(V, &cur));
}

/* name after following namerefs, or NULL when one leads to an unknown name. */
static const char *resolve_ref(struct vars *V, const char *name, size_t *nlen)
{
        for (int hop = 0; hop < 8; hop++) {
                ssize_t k = find(V, name, *nlen);
                if (k < 0 || !V->e[k].ref)
                        return name;
                if (!*V->e[k].ref)
                        return NULL;
                name = V->e[k].ref;
                *nlen = strlen(name);
        }
        return NULL;
}

void vars_set(struct vars *V, const char *name, size_t nlen, const struct vals *v)
{
        name = resolve_ref(V, name, &nlen);
        if (!name) {
                V->full = true; /* an assignment to a name that cannot be known */
                return;
        }
        char *nm = strndup(name, nlen);
        if (!nm)
                abort();
        log_touch(V, nm);
        struct vals val = copy_counted(V, v);
        ssize_t k = find(V, nm, nlen);
        if (k >= 0) {
                vals_free(&V->e[k].val);
                V->e[k].val = val;
        } else
                push(V, nm, nlen, val, false);
        free(nm);
}

void vars_set_unknown(struct vars *V, const char *name, size_t nlen)
{
        struct vals u = {0};
        vars_set(V, name, nlen, &u);
}

void vars_set_ref(struct vars *V, const char *name, size_t nlen, const char *target, bool local)
{
        if (local)
                push(V, name, nlen, (struct vals){0}, true);
        else {
                char *nm = strndup(name, nlen);
                if (!nm)
                        abort();
                log_touch(V, nm);
                if (find(V, nm, nlen) < 0)
                        push(V, nm, nlen, (struct vals){0}, false);
                free(nm);
        }
        ssize_t k = find(V, name, nlen);
        if (k < 0)
                return;
        free(V->e[k].ref);
        V->e[k].ref = xstrdup(target ? target : "");
}

void vars_push_local(struct vars *V, const char *name, size_t nlen, const struct vals *v)
{
        push(V, name, nlen, copy_counted(V, v), true);
}

void vars_pop_locals(struct vars *V, size_t mark)
{
        size_t o = mark;
        for (size_t k = mark; k < V->n; k++) {
                if (!V->e[k].local) {
                        V->e[o++] = V->e[k];
                        continue;
                }
                free(V->e[k].name);
                vals_free(&V->e[k].val);
                free(V->e[k].ref);
        }
        V->n = o;
}

void vars_forget(struct vars *V)
{
        for (size_t k = 0; k < V->n; k++) {
                const char *nm = V->e[k].name;
                if (!strcmp(nm, "HOME") || !strcmp(nm, "PWD") || !strcmp(nm, "TMPDIR"))
                        continue;
                char *copy = xstrdup(nm);
                vars_set_unknown(V, copy, strlen(copy));
                free(copy);
        }
        if (!V->forgot && V->nfr)
                log_touch(V, "IFS");
        V->forgot = true;
}

/* ---- frames ---- */

struct frame *frame_push(struct vars *V, enum frame_kind kind, const void *owner)
{
        if (V->nfr == V->capfr) {
                V->capfr = V->capfr ? V->capfr * 2 : 8;
                V->fr = xrealloc(V->fr, V->capfr * sizeof(*V->fr));
        }
        struct frame *f = &V->fr[V->nfr++];
        *f = (struct frame){.kind = kind, .id = ++V->next_id, .log0 = V->nlog, .owner = owner};
        return f;
}

struct frame *frame_top(struct vars *V) { return V->nfr ? &V->fr[V->nfr - 1] : NULL; }

void frame_sep(struct vars *V)
{
        struct frame *f = frame_top(V);
        if (!f)
                return;
        f->nsep++;
        for (size_t k = f->log0; k < V->nlog; k++) {
                struct logent *e = &V->log[k];
                struct vals cur = current(V, e->name);
                if (!e->acc_set) {
                        e->acc = copy_counted(V, &cur);
                        e->acc_set = true;
                } else
                        vals_union(&e->acc, &cur);
                /* The next branch starts from the value before the frame; of an if, from
                 * that joined with what the branches so far assigned (its conditions ran
                 * before it, and they are not told apart from the branches). */
                struct vals next = copy_counted(V, &e->old);
                if (f->kind != FR_ALT)
                        vals_union(&next, &e->acc);
                set_raw(V, e->name, next);
        }
}

/* The frame's entries move to the frame around it (what they were before both). */
static void propagate(struct vars *V, struct frame *f)
{
        struct frame *parent = V->nfr >= 2 ? &V->fr[V->nfr - 2] : NULL;
        size_t n = V->nlog;
        for (size_t k = f->log0; k < n; k++) {
                struct logent *e = &V->log[k];
                if (parent && !log_find(V, parent, e->name)) {
                        /* appended after this frame's entries, moved down below */
                        struct vals old = e->old;
                        e->old = (struct vals){0};
                        if (V->nlog == V->caplog) {
                                V->caplog *= 2;
                                V->log = xrealloc(V->log, V->caplog * sizeof(*V->log));
                                e = &V->log[k];
                        }
                        struct logent *p = &V->log[V->nlog++];
                        *p = (struct logent){.name = xstrdup(e->name), .old = old};
                        p->start = copy_counted(V, &p->old);
                        if (parent->nsep > 0) {
                                p->acc = copy_counted(V, &p->old);
                                p->acc_set = true;
                        }
                }
        }
        /* drop this frame's entries, keep the new parent entries */
        size_t moved = V->nlog - n;
        for (size_t k = f->log0; k < n; k++) {
                free(V->log[k].name);
                vals_free(&V->log[k].old);
                vals_free(&V->log[k].acc);
                vals_free(&V->log[k].start);
        }
        if (moved) /* V->log may be NULL when nothing was ever logged */
                memmove(&V->log[f->log0], &V->log[n], moved * sizeof(*V->log));
        V->nlog = f->log0 + moved;
}

void frame_close(struct vars *V)
{
        struct frame *f = frame_top(V);
        if (!f)
                return;
        if (f->piped && f->kind != FR_SUB)
                f->kind = FR_MAYBE;
        for (size_t k = f->log0; k < V->nlog && f->kind != FR_GROUP && f->kind != FR_BRACE; k++) {
                struct logent *e = &V->log[k];
                struct vals cur = current(V, e->name), u;
                if (f->kind == FR_SUB) {
                        set_raw(V, e->name, copy_counted(V, &e->old));
                        continue;
                }
                u = copy_counted(V, &cur);
                if (e->acc_set)
                        vals_union(&u, &e->acc);
                if (f->kind == FR_MAYBE || f->kind == FR_LOOP || f->kind == FR_CASE ||
                    (f->kind == FR_IF && !f->has_else))
                        vals_union(&u, &e->old);
                set_raw(V, e->name, u);
        }
        if (f->kind == FR_SUB) { /* nothing it did is seen outside */
                for (size_t k = f->log0; k < V->nlog; k++) {
                        free(V->log[k].name);
                        vals_free(&V->log[k].old);
                        vals_free(&V->log[k].acc);
                        vals_free(&V->log[k].start);
                }
                V->nlog = f->log0;
        } else
                propagate(V, f);
        free(f->func);
        V->nfr--;
}

void frame_close_to(struct vars *V, size_t depth)
{
        while (V->nfr > depth) {
                struct frame *f = frame_top(V);
                if ((f->kind == FR_IF && !f->ended) || (f->kind == FR_CASE && !f->ended) || f->kind == FR_ALT)
                        f->kind = FR_MAYBE; /* unfinished: joined with what was before */
                frame_close(V);
        }
}

bool frame_loop_again(struct vars *V)
{
        struct frame *f = frame_top(V);
        if (!f || f->kind != FR_LOOP || f->pass >= 2)
                return false;
        bool grown = false;
        for (size_t k = f->log0; k < V->nlog; k++) {
                struct logent *e = &V->log[k];
                struct vals cur = current(V, e->name), u = copy_counted(V, &e->start);
                vals_union(&u, &cur);
                grown |= !vals_equal(&u, &e->start);
                vals_free(&u);
        }
        if (!grown)
                return false;
        f->pass++;
        for (size_t k = f->log0; k < V->nlog; k++) {
                struct logent *e = &V->log[k];
                struct vals cur = current(V, e->name), u = copy_counted(V, &e->start);
                vals_union(&u, &cur);
                if (f->pass == 2) /* the last reading: what it changes is unknown */
                        vals_free(&u);
                vals_free(&e->start);
                e->start = copy_counted(V, &u);
                set_raw(V, e->name, u);
        }
        return true;
}

/* ---- aliases ---- */

const char *vars_alias(struct vars *V, const char *name)
{
        for (size_t k = V->alias_names.n; k-- > 0;)
                if (!strcmp(V->alias_names.v[k], name))
                        return V->alias_vals.v[k];
        return NULL;
}

void vars_alias_set(struct vars *V, const char *name, const char *value)
{
        if (V->alias_names.n >= POL_MAX_VARS) {
                V->full = true;
                return;
        }
        strvec_push(&V->alias_names, xstrdup(name));
        strvec_push(&V->alias_vals, xstrdup(value ? value : UNK_S));
}
