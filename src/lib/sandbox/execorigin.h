/* Who asks for an exec in the sandbox: whether it is a well-known tool's own internal step
 * (git's own subcommand, a make recipe), as the kernel shows it.  Supervisor side; the rules
 * that such a step is not judged by are the policy's (docs/DESIGN.md, "What is judged at
 * exec"). */
#ifndef TXBOX_EXECORIGIN_H
#define TXBOX_EXECORIGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The task that asked for an exec: a pending seccomp notification's. */
struct exec_caller {
        pid_t pid;   /* in the supervisor's pid namespace */
        bool looked; /* /proc was read about it: its notification must be confirmed pending
                      * again before an answer that relied on it is sent (the pid may have
                      * been reused meanwhile) */
};

/* Processes the supervisor saw start as a tool that the kernel cannot tell apart later: npm
 * is a node script, and it rewrites its own command line.  Filled by exec_tools_note() at
 * the exec that starts it; a stale entry (the process gone, its pid reused, or running
 * something else) is told by its start time and its executable. */
#define EXEC_TOOLS_MAX 16
struct exec_tools {
        struct {
                pid_t pid;
                unsigned long long start; /* clock ticks after boot (/proc/PID/stat) */
        } npm[EXEC_TOOLS_MAX];
        size_t n;
};

/* For every exec that is let through: the caller runs something else from now on (its
 * entry goes), and if this exec starts npm (the system's node running the system's
 * npm-cli.js), the caller is noted as npm.  Cheap unless the program is node. */
void exec_tools_note(struct exec_tools *t, struct exec_caller *c, const char *program, char *const argv[]);

/* The tool that runs this exec as its own internal step, established from the kernel alone
 * (/proc/PID/exe, /proc/PID/stat, /proc/PID/cmdline: never the environment, argv[0] or
 * anything else the program chooses):
 *   "git"   the caller is git's own binary running one of git's commands (not an alias,
 *           not an external git-NAME), and the program it runs is git's own binary;
 *   "make"  the caller is make's binary, or a shell whose parent chain (shells only) leads
 *           to make's binary: a recipe and the shell scripts it runs;
 *   "npm"   the same for npm (t: the npm processes noted), whose own forked child counts as
 *           npm until it execs: a package's script and the shell scripts it runs;
 * NULL otherwise, and whenever something cannot be read.  program is the file the exec will
 * run, as exec_target() found it in the task's view (NULL: none).  A tool's binary must be a
 * file neither the sandbox nor its user can have written: a regular file owned by root or
 * another user, writable by nobody else, on a read-only mount (exec_file_trusted). */
const char *exec_caller_tool(struct exec_caller *c, const char *program, const struct exec_tools *t);

/* fd (an O_PATH descriptor is enough) is a file the sandbox cannot have written. */
bool exec_file_trusted(int fd);

/* The first git command (not a global option) in a git command line given as NUL-separated
 * words (as /proc/PID/cmdline holds it), or NULL; words[0] is the program. */
const char *exec_git_command(const char *words, size_t len);

/* A git command whose own steps are git's (a builtin that runs git for its work): stash,
 * gc, rebase, pull ... An alias or an external git-NAME is not one. */
bool exec_git_builtin(const char *cmd);

#endif
