/* The walker: the one loop that turns an input into the list of simple commands it would
 * run (struct scan), for match.c to judge.
 *
 * Three parts take part, and none calls another: the parser (parse.c) reads a shell string
 * and hands each simple command it reads to its sink (scan_command); the unwrapper
 * (unwrap.c and its handlers) looks at one command and adds what it runs, leaving each
 * command to unwrap in turn and each shell string to parse as work (scan_push_argv,
 * scan_push_text); this file owns the work stack and calls the other two.
 *
 * Order matters and is kept as it was when they called each other: a command the parser
 * read is unwrapped, with all it runs, before the parser reads on (the output of $(mktemp),
 * a file written or sourced, a pipeline's listing are looked up in what came before), and
 * the work one step left is done in the order it was left, each item with all it leads to
 * before the next.  Depth (POL_MAX_DEPTH) travels with the work; the stack is bounded in
 * items and bytes (scan.c).
 *
 * Left to do (issue 34): the parser still expands and emits while it reads, and calls its
 * sink from inside its recursion.  sh_parse.c reads the same grammar into a tree
 * (sh_ast.h) and is held against bash; the step after this one is to parse with it, walk
 * the tree here (expansion, functions and variables as parse_expand.c and vars.c do them
 * now) and hand each simple command to the unwrapper from this loop, so that parse*.c
 * can go. */
#define _GNU_SOURCE
#include "pol.h"

#include <stdlib.h>

/* Work off the stack down to mark: the work of one command, and all it leads to. */
static void drain(struct scan *sc, size_t mark)
{
        while (sc->nwork > mark) {
                struct work w = sc->work[--sc->nwork];
                size_t top = sc->nwork;
                if (w.text) {
                        /* sc->forget (eval, source: the variables of the shell that ran
                         * the command are unknown after it) is for the parser that read
                         * that command, not for this string's own, which starts afresh */
                        bool forget = sc->forget;
                        sc->forget = false;
                        sc->work_bytes -= strlen(w.text) + 1;
                        parse_script(sc, w.text, strlen(w.text), w.pos, w.depth);
                        free(w.text);
                        sc->forget = forget;
                } else {
                        unwrap_argv(sc, w.idx, w.depth);
                }
                /* what this step left, first left on top: done in the order it was left */
                for (size_t i = top, j = sc->nwork; i + 1 < j; i++, j--) {
                        struct work t = sc->work[i];
                        sc->work[i] = sc->work[j - 1];
                        sc->work[j - 1] = t;
                }
        }
}

/* The parser's sink: a command it has just read, unwrapped with all it runs. */
static void on_command(struct scan *sc, size_t idx, int depth)
{
        size_t mark = sc->nwork;
        scan_push_argv(sc, idx, depth);
        drain(sc, mark);
}

void walk_script(struct scan *sc, const char *s, size_t n)
{
        sc->on_command = on_command;
        parse_script(sc, s, n, (struct srcpos){.base = 0, .direct = true}, 0);
        drain(sc, 0);
}

void walk_argv(struct scan *sc)
{
        sc->on_command = on_command;
        on_command(sc, 0, 0);
}
