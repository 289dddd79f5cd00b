/* What the models of programs (tools.c, toolgit.c, tooledit.c, toolrun.c, toolmass.c) say
 * a command does, turned into work for the walker: a shell string it runs, a file it
 * writes or reads (judged as `tee`/`cat` of it), its words run as a command.  Apart from
 * tools.c, whose look-up refers to every model's table, so that the models need not call
 * back into it. */
#define _GNU_SOURCE
#include "policy/tools.h"

#include <stdlib.h>

#include "base/mem.h"
#include "base/strv.h"

void tool_text_at(struct scan *sc, size_t idx, const char *s, int depth, const char *what)
{
        if (uw_all_unk(s))
                return uw_unknown(sc, idx, what);
        char *copy = xstrdup(s);
        uw_text(sc, idx, copy, depth);
        free(copy);
}

void tool_write_at(struct scan *sc, size_t idx, const char *path, int depth)
{
        char *copy = xstrdup(path);
        char *const tee[] = {"tee", copy, NULL};
        uw_run(sc, idx, tee, 2, depth);
        free(copy);
}

void tool_read_at(struct scan *sc, size_t idx, const char *path, int depth)
{
        char *copy = xstrdup(path);
        char *const cat[] = {"cat", copy, NULL};
        uw_run(sc, idx, cat, 2, depth);
        free(copy);
}

void tool_run_words(struct scan *sc, size_t idx, size_t from, int depth)
{
        size_t n = argc_of(sc, idx);
        if (from >= n)
                return;
        char **copy = strv_dup(argv_of(sc, idx) + from);
        uw_run(sc, idx, copy, n - from, depth);
        strv_free(copy);
}

/* The words from `from` on as one shell string (tmux, watchexec, concurrently ...). */
void tool_text_words(struct scan *sc, size_t idx, size_t from, int depth, const char *what)
{
        size_t n = argc_of(sc, idx);
        if (from >= n)
                return;
        char *s = render_argv(argv_of(sc, idx) + from, SIZE_MAX);
        tool_text_at(sc, idx, s, depth, what);
        free(s);
}
