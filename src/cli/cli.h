/* Shared pieces of the command-line faces: global options, opening the workspace, errors. */
#ifndef TXBOX_CLI_H
#define TXBOX_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "txbox.h"

/* Exit statuses: the names of include/txbox.h (enum txbox_exit, docs/CONTRACT.md), short. */
enum {
        EXIT_REFUSED = TXBOX_EXIT_REFUSED,
                /* the verb could not do what was asked (nothing to undo, conflict) */
        EXIT_USAGE = TXBOX_EXIT_USAGE,
        EXIT_CONFLICT = TXBOX_EXIT_CONFLICT,
        EXIT_EFFECT = TXBOX_EXIT_EFFECT,
        EXIT_TIMEOUT = TXBOX_EXIT_TIMEOUT,
        EXIT_TXBOX = TXBOX_EXIT_TXBOX,
        EXIT_DENIED = TXBOX_EXIT_DENIED,
};

struct global_opts {
        const char *workspace; /* -C DIR, or the one discovered (cli_discover) */
        const char *state;
        const char *policy;
        const char *approve; /* --approve PROGRAM: who decides "ask" */
        /* No -C: how the workspace was found (txbox_ws_discover); path is workspace. */
        bool discovered;
        struct txbox_ws_discovery found;
};

struct verb {
        const char *name;
        int (*run)(int argc, char **argv, const struct global_opts *g);
        const char *summary;
};

/* Parse global options at the front of argv; returns the index of the verb, or -1 with a
 * message printed (usage), or -2 when --help/--version was handled. */
int cli_parse_globals(int argc, char **argv, struct global_opts *g);
/* Without -C: find the workspace from the current directory up (txbox_ws_discover) and
 * make it g->workspace; quiet (a failure leaves g->workspace NULL: the current directory). */
void cli_discover(struct global_opts *g);
void cli_globals_free(struct global_opts *g);
/* The workspace as the verbs name it: -C DIR, the discovered one, else ".". */
const char *cli_workspace(const struct global_opts *g);
/* Open the workspace (recovering interrupted commits when recover); prints the error.
 * With TXBOX_OPEN_NOCREATE a workspace without transactions opens empty (nothing made). */
struct txbox_ws *cli_open(const struct global_opts *g, unsigned flags); /* TXBOX_OPEN_* */
/* "no transactions in workspace ... yet" on stderr, for a read-only verb (says how the
 * workspace was found when it was). */
void cli_no_transactions(const struct global_opts *g, struct txbox_ws *ws);
/* Print "txbox: MSG" to stderr, MSG escaped for the terminal (base/human.h: text for humans). */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Write s (may be NULL) to f as one line of text for humans: escaped. */
void cli_human(FILE *f, const char *s);
/* True when argv has -h or --help before any "--". */
bool cli_wants_help(int argc, char **argv);
/* Colour is used only on a terminal and never with NO_COLOR. */
bool cli_color(FILE *f);

int cmd_run(int argc, char **argv, const struct global_opts *g);
int cmd_sh(int argc, char **argv, const struct global_opts *g);
int cmd_log(int argc, char **argv, const struct global_opts *g);
int cmd_show(int argc, char **argv, const struct global_opts *g);
int cmd_diff(int argc, char **argv, const struct global_opts *g);
int cmd_commit(int argc, char **argv, const struct global_opts *g);
int cmd_rollback(int argc, char **argv, const struct global_opts *g);
int cmd_undo(int argc, char **argv, const struct global_opts *g);
int cmd_recover(int argc, char **argv, const struct global_opts *g);
int cmd_gc(int argc, char **argv, const struct global_opts *g);
int cmd_check(int argc, char **argv, const struct global_opts *g);
int cmd_begin(int argc, char **argv, const struct global_opts *g);
int cmd_report(int argc, char **argv, const struct global_opts *g);
int cmd_agent(int argc, char **argv, const struct global_opts *g);
int cmd_doctor(int argc, char **argv, const struct global_opts *g);
int cmd_hook(int argc, char **argv, const struct global_opts *g);
int cmd_trust(int argc, char **argv, const struct global_opts *g);
/* The hook's answer to one event of agent (claude-code, codex, gemini): printed on stdout,
 * the exit status returned (0, or 2 to block).  cmd_hook runs it in a child process;
 * tests/fuzz/fuzz_hook.c calls it directly. */
int hook_answer(const char *agent, const char *event, size_t len, const struct global_opts *g);
int cmd_mcp(int argc, char **argv, const struct global_opts *g);
int cmd_prefix(int argc, char **argv, const struct global_opts *g);
/* Invoked as txbox-prefix: the argv of the equivalent txbox ... prefix command (cmd_prefix.c). */
char **prefix_argv(int argc, char **argv, char **opts_buf, int *out_argc);

/* Human output shared by show, log, commit, rollback and undo. */
void print_record_human(FILE *f, const struct txbox_record *rec);
void print_log_table(FILE *f, const struct txbox_record *recs, size_t n);
/* Parse a --json / -n style flag set for read verbs; returns 0 or EXIT_USAGE. */

#endif
