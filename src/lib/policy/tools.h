/* What the models of programs with their own ways to run commands or write files share:
 * tools.c (the dispatch, output options, unknown programs and the smaller models),
 * toolwork.c (the helpers below), toolgit.c, tooledit.c, toolrun.c and toolmass.c; and
 * the judgements made of every command beside them: toolfill.c (filling the disk),
 * toolhunt.c (key hunts), toolrepl.c (prompts reading the terminal).  Private to those
 * files. */
#ifndef TXBOX_POLICY_TOOLS_H
#define TXBOX_POLICY_TOOLS_H

#include "policy/pol.h"

#define LW(...) ((const char *const[]){__VA_ARGS__, NULL})

static inline char **argv_of(struct scan *sc, size_t idx) { return sc->cmds[idx].argv.v; }
static inline size_t argc_of(struct scan *sc, size_t idx) { return sc->cmds[idx].argv.n; }

/* The command at idx runs the shell text s (one that cannot be known is a finding saying
 * what). */
void tool_text_at(struct scan *sc, size_t idx, const char *s, int depth, const char *what);
/* ... writes path, judged as `tee path` would be. */
void tool_write_at(struct scan *sc, size_t idx, const char *path, int depth);
/* ... reads path, judged as `cat path` would be. */
void tool_read_at(struct scan *sc, size_t idx, const char *path, int depth);
/* ... runs its words from `from` on as a command. */
void tool_run_words(struct scan *sc, size_t idx, size_t from, int depth);
/* ... runs its words from `from` on as one shell string (tmux, watchexec, concurrently ...). */
void tool_text_words(struct scan *sc, size_t idx, size_t from, int depth, const char *what);

/* A program's name and its model.  Each file's table ends with {NULL, NULL}; tool_handler
 * looks a program up in all of them. */
struct tool {
        const char *name;
        handler_fn *fn;
};
extern const struct tool tool_git_models[];  /* toolgit.c */
extern const struct tool tool_edit_models[]; /* tooledit.c */
extern const struct tool tool_run_models[];  /* toolrun.c */
extern const struct tool tool_mass_models[]; /* toolmass.c */

#endif
