/* The list of simple commands one input would run (struct scan: adding commands and
 * findings, the time limit, the work left for the walker), and the small helpers every
 * handler of the unwrapping uses: a child command of a command, a shell string it runs, a
 * finding, paths as it sees them, option skipping; and what code.c calls to add what an
 * interpreter's code runs.  Apart from unwrap.c because parse.c, listing.c, tools.c and
 * code.c use it as much as unwrap.c does; nothing here knows any program, and nothing
 * here calls the parser or the unwrapper (walk.c does). */
#define _GNU_SOURCE
#include <string.h>

#include "base/clock.h"
#include "base/mem.h"
#include "base/strv.h"
#include "pol.h"

/* ---- the list of commands ---- */

void scan_init(struct scan *sc, const struct policy_ctx *ctx)
{
        memset(sc, 0, sizeof(*sc));
        sc->ctx = ctx;
        sc->deadline_us = mono_us() + POL_MAX_US;
}

void scan_free(struct scan *sc)
{
        for (size_t k = 0; k < sc->n; k++) {
                struct scmd *c = &sc->cmds[k];
                strv_free(c->argv.v);
                strv_free(c->writes.v);
                strv_free(c->reads.v);
                strv_free(c->clobbers.v);
                free(c->text);
                free(c->stdin_text);
                free(c->cwd);
        }
        free(sc->cmds);
        for (size_t k = 0; k < sc->nwork; k++)
                free(sc->work[k].text);
        free(sc->work);
        strv_free(sc->dl_files.v);
        strv_free(sc->text_files.v);
        memset(sc, 0, sizeof(*sc));
}

bool scan_over_time(struct scan *sc)
{
        if (sc->failed)
                return true;
        if (mono_us() <= sc->deadline_us)
                return false;
        scan_finding(sc, "@limit-exceeded", "took too long to analyse", "", -1);
        return true;
}

static struct scmd *push_cmd(struct scan *sc)
{
        if (sc->n == sc->cap) {
                sc->cap = sc->cap ? sc->cap * 2 : 16;
                sc->cmds = xrealloc(sc->cmds, sc->cap * sizeof(*sc->cmds));
        }
        struct scmd *c = &sc->cmds[sc->n++];
        memset(c, 0, sizeof(*c));
        return c;
}

struct scmd *scan_add(struct scan *sc, struct strvec *argv, const char *text, int offset)
{
        if (sc->n >= POL_MAX_CMDS) {
                if (!sc->failed)
                        scan_finding(sc, "@limit-exceeded", "too many commands", text, offset);
                return NULL;
        }
        struct scmd *c = push_cmd(sc);
        c->argv = *argv;
        memset(argv, 0, sizeof(*argv));
        c->text = xstrdup(text);
        c->offset = offset;
        return c;
}

void scan_finding(struct scan *sc, const char *name, const char *detail, const char *text,
                  int offset)
{
        bool fatal = !strcmp(name, "@limit-exceeded") || !strcmp(name, "@parse-error");
        if (fatal && sc->failed)
                return;
        struct scmd *c = push_cmd(sc); /* findings bypass the limit: they are what we report */
        strvec_push(&c->argv, xstrdup(name));
        strvec_push(&c->argv, xstrdup(detail ? detail : ""));
        c->text = xstrdup(text && *text ? text : detail ? detail : "");
        c->offset = offset;
        c->pipe_id = -1;
        if (fatal)
                sc->failed = true;
}

/* ---- work for the walker ---- */

static struct work *push_work(struct scan *sc, size_t bytes)
{
        /* Every pending item is a command added or a text a command carried: beyond these
         * the input is judged too big, like one with too many commands. */
        if (sc->nwork >= POL_MAX_CMDS || bytes > POL_MAX_COPIED - sc->work_bytes) {
                if (!sc->failed)
                        scan_finding(sc, "@limit-exceeded", "too much left to judge", "", -1);
                return NULL;
        }
        if (sc->nwork == sc->capwork) {
                sc->capwork = sc->capwork ? sc->capwork * 2 : 16;
                sc->work = xrealloc(sc->work, sc->capwork * sizeof(*sc->work));
        }
        sc->work_bytes += bytes;
        struct work *w = &sc->work[sc->nwork++];
        memset(w, 0, sizeof(*w));
        return w;
}

void scan_push_argv(struct scan *sc, size_t idx, int depth)
{
        struct work *w = push_work(sc, 0);
        if (w)
                w->idx = idx, w->depth = depth;
}

void scan_push_text(struct scan *sc, const char *s, struct srcpos pos, int depth)
{
        size_t n = strlen(s);
        struct work *w = push_work(sc, n + 1);
        if (w)
                w->text = xstrdup(s), w->pos = pos, w->depth = depth;
}

/* ---- small helpers ---- */

/* A script that is nothing but unknown text ($CMD, $(curl ...)).  Partly unknown scripts
 * are parsed: their unknown words stay unknown, and an unknown command word is caught. */
bool uw_all_unk(const char *s) { return has_unk(s) && strspn(s, UNK_S " \t\n\"';") == strlen(s); }

char *render_argv(char *const *argv, size_t max)
{
        size_t n = 0;
        for (char *const *a = argv; *a; a++)
                n += strlen(*a) + 1;
        char *s = xmalloc(n + 1), *p = s;
        *s = 0;
        for (char *const *a = argv; *a; a++) {
                size_t l = strlen(*a);
                if (p != s)
                        *p++ = ' ';
                memcpy(p, *a, l);
                p += l;
                *p = 0;
        }
        if (strlen(s) > max)
                s[max] = 0;
        return s;
}

bool uw_in(const char *s, const char *const *list)
{
        for (; *list; list++)
                if (!strcmp(s, *list))
                        return true;
        return false;
}

size_t uw_child(struct scan *sc, size_t idx, char *const *words, size_t n)
{
        struct strvec v = {0};
        for (size_t k = 0; k < n && words[k]; k++)
                strvec_push(&v, xstrdup(words[k]));
        if (!v.n)
                return (size_t)-1;
        struct scmd *p = &sc->cmds[idx];
        char *text = xstrdup(p->text);
        int off = p->offset, pipe = p->pipe_id, stage = p->stage;
        bool dl = p->dl_word;
        char *in = xstrdup_or_null(p->stdin_text), *cwd = xstrdup_or_null(p->cwd);
        struct scmd *c = scan_add(sc, &v, text, off);
        free(text);
        if (!c) {
                strv_free(v.v);
                free(in);
                free(cwd);
                return (size_t)-1;
        }
        c->pipe_id = pipe, c->stage = stage, c->dl_word = dl, c->stdin_text = in, c->cwd = cwd;
        return sc->n - 1;
}

void uw_run(struct scan *sc, size_t idx, char *const *words, size_t n, int depth)
{
        size_t k = uw_child(sc, idx, words, n);
        if (k != (size_t)-1)
                scan_push_argv(sc, k, depth + 1);
}

void uw_text(struct scan *sc, size_t idx, const char *s, int depth)
{
        struct srcpos pos = {.direct = false, .outer_off = sc->cmds[idx].offset};
        scan_push_text(sc, s, pos, depth + 1);
}

void uw_unknown(struct scan *sc, size_t idx, const char *what)
{
        if (sc->cmds[idx].dl_word)
                uw_finding(sc, idx, "@download-exec", "downloaded code run by a shell or interpreter");
        else
                uw_finding(sc, idx, "@unknown-command", what);
}

void uw_finding(struct scan *sc, size_t idx, const char *name, const char *detail)
{
        char *text = xstrdup(sc->cmds[idx].text);
        scan_finding(sc, name, detail, text, sc->cmds[idx].offset);
        free(text);
}

char *uw_path(struct scan *sc, size_t idx, const char *arg)
{
        const char *cwd = sc->cmds[idx].cwd;
        if (arg[0] != '/' && cwd && has_unk(cwd))
                return NULL;
        struct policy_ctx c = *sc->ctx;
        if (cwd)
                c.cwd = cwd;
        return resolve_path(arg, &c);
}

/* ---- option skipping ---- */

size_t uw_skip_opts(char **argv, size_t argc, size_t k, const struct opts *o)
{
        static const char *const none[] = {NULL};
        const char *const *lwa = o->long_with_arg ? o->long_with_arg : none;
        while (k < argc) {
                const char *a = argv[k];
                if (!strcmp(a, "--"))
                        return k + 1;
                if (a[0] != '-' || !a[1])
                        return k;
                k++;
                if (a[1] == '-') {
                        if (!strchr(a, '=') && uw_in(a + 2, lwa))
                                k++;
                        continue;
                }
                for (const char *p = a + 1; *p; p++)
                        if (o->with_arg && strchr(o->with_arg, *p)) {
                                if (!p[1])
                                        k++;
                                break;
                        }
        }
        return k < argc ? k : argc;
}

bool uw_has_short(char **argv, size_t from, size_t to, char f)
{
        for (size_t k = from; k < to && argv[k]; k++)
                if (argv[k][0] == '-' && argv[k][1] != '-' && strchr(argv[k] + 1, f))
                        return true;
        return false;
}

bool uw_help(char **argv, size_t from, size_t to)
{
        for (size_t k = from; k < to && argv[k]; k++) {
                if (!strcmp(argv[k], "--"))
                        return false;
                if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "--version"))
                        return true;
        }
        return false;
}

char *uw_replace(const char *a, const char *pat, const char *with)
{
        size_t pl = strlen(pat), wl = strlen(with), n = 0;
        for (const char *p = a; pl && (p = strstr(p, pat)); p += pl)
                n++;
        if (n && wl > POL_MAX_INPUT / n)
                return NULL;
        char *r = xmalloc(strlen(a) + n * wl + 1), *o = r;
        for (const char *p = a;;) {
                const char *m = pl ? strstr(p, pat) : NULL;
                size_t l = m ? (size_t)(m - p) : strlen(p);
                memcpy(o, p, l);
                o += l;
                if (!m)
                        break;
                memcpy(o, with, wl);
                o += wl;
                p = m + pl;
        }
        *o = 0;
        return r;
}

/* ---- for code.c: what an interpreter's code runs ---- */

void code_child(struct scan *sc, size_t parent, char *const *argv, size_t n, int depth)
{
        uw_run(sc, parent, argv, n, depth);
}

void code_shell(struct scan *sc, size_t parent, const char *s, int depth)
{
        if (uw_all_unk(s))
                uw_unknown(sc, parent, "interpreter runs a shell string that cannot be known");
        else
                uw_text(sc, parent, s, depth);
}

void code_finding(struct scan *sc, size_t parent, const char *name, const char *detail)
{
        uw_finding(sc, parent, name, detail);
}
