/* Who asks for an exec in the sandbox: a well-known tool's own internal step, or not.  Read
 * from the kernel's view of the caller (its executable, its parent, its command line), never
 * from anything the program chooses (its environment, argv[0], GIT_EXEC_PATH).  The threat
 * analysis is in docs/DESIGN.md ("What is judged at exec"); the rules such a step is spared
 * are the policy's (rules of scope workspace).
 */
#define _GNU_SOURCE
#include "sandbox/execorigin.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "sandbox/exectarget.h"
#include "base/cleanup.h"
#include "base/macros.h"

/* Shells between make and the exec: a recipe's, and the shell scripts it runs. */
#define WALK_MAX 16

bool exec_file_trusted(int fd)
{
        struct stat st;
        struct statvfs sv;

        /* Neither the sandbox nor, outside it, the user it runs as can have put it there:
         * owned by root or by another user (one our user namespace does not map shows as
         * the overflow id), writable by nobody else, and on a mount that is read-only in the
         * sandbox (all are but the workspace's overlay, /tmp, /dev/shm and /dev's nodes). */
        return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_uid == 0 || st.st_uid != geteuid()) &&
               !(st.st_mode & (S_IWGRP | S_IWOTH)) && fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

/* The last component of the path fd stands for, into name. */
static bool fd_name(int fd, char *name, size_t size)
{
        char proc[64], path[PATH_MAX];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(proc, path, sizeof(path) - 1);
        if (n <= 0)
                return false;
        path[n] = '\0';
        const char *s = strrchr(path, '/');
        s = s ? s + 1 : path;
        if (strlen(s) >= size)
                return false;
        memcpy(name, s, strlen(s) + 1);
        return true;
}

/* The name of the executable task pid runs, when it is a trusted file; else false. */
static bool trusted_exe(pid_t pid, char *name, size_t size)
{
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)pid);
        _cleanup_close_ int fd = open(proc, O_PATH | O_CLOEXEC);
        return fd >= 0 && exec_file_trusted(fd) && fd_name(fd, name, size);
}

/* Task pid's parent (in our pid namespace), or -1. */
static pid_t parent_of(pid_t pid)
{
        char proc[64], buf[512];
        snprintf(proc, sizeof(proc), "/proc/%d/stat", (int)pid);
        _cleanup_close_ int fd = open(proc, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        /* "PID (COMM) STATE PPID ...": COMM may hold anything, ')' too */
        char *close_paren = strrchr(buf, ')');
        int ppid;
        if (!close_paren || sscanf(close_paren + 1, " %*c %d", &ppid) != 1)
                return -1;
        return ppid;
}

/* Task pid's thread group and its start time, or false. */
static bool start_of(pid_t pid, pid_t *tgid, unsigned long long *start)
{
        char proc[64], buf[1024];
        int g = -1;

        snprintf(proc, sizeof(proc), "/proc/%d/status", (int)pid);
        _cleanup_fclose_ FILE *f = fopen(proc, "re");
        while (f && fgets(buf, sizeof(buf), f))
                if (sscanf(buf, "Tgid: %d", &g) == 1)
                        break;
        if (g <= 0)
                return false;
        snprintf(proc, sizeof(proc), "/proc/%d/stat", g);
        _cleanup_close_ int fd = open(proc, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        /* after "PID (COMM)": state, then 18 more fields before starttime (proc(5)) */
        char *p = strrchr(buf, ')');
        if (!p || sscanf(p + 1,
                         " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                         start) != 1)
                return false;
        *tgid = g;
        return true;
}

static bool is_shell(const char *name)
{
        return !strcmp(name, "sh") || !strcmp(name, "dash") || !strcmp(name, "bash");
}

static bool is_make(const char *name)
{
        return !strcmp(name, "make") || !strcmp(name, "gmake");
}

static bool is_node(const char *name)
{
        return !strcmp(name, "node") || !strcmp(name, "nodejs");
}

/* The file at path (absolute, in task pid's view) is trusted and its name is name. */
static bool trusted_named(pid_t pid, const char *path, bool (*is)(const char *))
{
        char name[NAME_MAX + 1];
        if (!path || path[0] != '/')
                return false;
        _cleanup_close_ int fd = exec_target_open(pid, path);
        return fd >= 0 && exec_file_trusted(fd) && fd_name(fd, name, sizeof(name)) && is(name);
}

static bool is_npm_cli(const char *name)
{
        return !strcmp(name, "npm-cli.js");
}

void exec_tools_note(struct exec_tools *t, struct exec_caller *c, const char *program, char *const argv[])
{
        char script[PATH_MAX];
        pid_t tgid;
        unsigned long long start;

        for (size_t i = 0; i < t->n; i++)
                if (t->npm[i].pid == c->pid) {
                        t->npm[i] = t->npm[--t->n];
                        break;
                }
        const char *base = program ? strrchr(program, '/') : NULL;
        if (!base || !is_node(base + 1) || !argv[0] || !argv[1])
                return;
        /* node SCRIPT ...: npm's #! line (env node) makes exactly this, the script first */
        c->looked = true;
        if (!trusted_named(c->pid, program, is_node) ||
            exec_target(c->pid, AT_FDCWD, argv[1], 0, script, sizeof(script)) != 0 ||
            !trusted_named(c->pid, script, is_npm_cli) || !start_of(c->pid, &tgid, &start))
                return;
        if (t->n == EXEC_TOOLS_MAX) /* the oldest goes: its scripts are then judged in full */
                memmove(&t->npm[0], &t->npm[1], --t->n * sizeof(t->npm[0]));
        t->npm[t->n].pid = tgid;
        t->npm[t->n++].start = start;
}

/* Task pid (whose executable is the system's node) is an npm noted at its start. */
static bool noted_npm(const struct exec_tools *t, pid_t pid)
{
        pid_t tgid;
        unsigned long long start;
        for (size_t i = 0; t && i < t->n; i++)
                if (t->npm[i].pid == pid)
                        return start_of(pid, &tgid, &start) && tgid == pid && start == t->npm[i].start;
        return false;
}

bool exec_git_builtin(const char *cmd)
{
        /* Builtins of every git txbox supports (2.30 on) that run git for their own steps:
         * git stash's reset --hard, gc's reflog expire and prune, worktree add's reset
         * --hard, rebase's and pull's stash, submodule--helper's checkout -f ...  Only names
         * an alias cannot take: git runs a builtin before it looks for an alias. */
        static const char *const builtins[] = {
                "am",     "bisect",      "bisect--helper", "checkout", "cherry-pick", "clone",
                "commit", "fetch",       "gc",             "maintenance", "merge",    "pull",
                "push",   "rebase",      "remote",         "repack",   "reset",       "revert",
                "sparse-checkout", "stash", "submodule--helper", "switch", "worktree",
        };
        for (size_t i = 0; i < ARRAY_SIZE(builtins); i++)
                if (!strcmp(cmd, builtins[i]))
                        return true;
        return false;
}

const char *exec_git_command(const char *words, size_t len)
{
        /* git's global options that take the next word as their value (git.c,
         * handle_options); every other word starting with '-' is one by itself. */
        static const char *const with_value[] = {"-C", "-c", "--git-dir", "--work-tree", "--namespace",
                                                 "--super-prefix", "--config-env"};
        const char *end = words + len, *w = words;
        size_t n = strnlen(w, len);

        if (n == len)
                return NULL;
        /* git-NAME (a dashed builtin: /usr/lib/git-core/git-stash) names its command itself */
        const char *base = memrchr(w, '/', n);
        base = base ? base + 1 : w;
        if (!strncmp(base, "git-", 4) && base[4])
                return base + 4;
        for (w += n + 1; w < end; w += n + 1) {
                n = strnlen(w, (size_t)(end - w));
                if (w + n == end)
                        return NULL; /* cut short: not a whole word */
                if (w[0] != '-')
                        return w;
                for (size_t i = 0; i < ARRAY_SIZE(with_value); i++)
                        if (!strcmp(w, with_value[i])) {
                                w += n + 1;
                                if (w >= end)
                                        return NULL;
                                n = strnlen(w, (size_t)(end - w));
                                break;
                        }
        }
        return NULL;
}

/* Task pid (a git) runs one of git's own builtins: its command line, which git never
 * rewrites, says which. */
static bool runs_git_builtin(pid_t pid)
{
        char proc[64], buf[4096];
        snprintf(proc, sizeof(proc), "/proc/%d/cmdline", (int)pid);
        _cleanup_close_ int fd = open(proc, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
        if (n <= 0)
                return false;
        const char *cmd = exec_git_command(buf, (size_t)n);
        return cmd && exec_git_builtin(cmd);
}

static bool is_git(const char *name)
{
        return !strcmp(name, "git");
}

const char *exec_caller_tool(struct exec_caller *c, const char *program, const struct exec_tools *t)
{
        char name[NAME_MAX + 1];
        pid_t cur = c->pid;

        c->looked = true;
        if (!trusted_exe(cur, name, sizeof(name)))
                return NULL;
        /* git: the caller itself (a forked git, before its exec), no walk: a hook, an alias
         * (!CMD) or an editor git runs is a program of its own, judged in full. */
        if (!strcmp(name, "git"))
                return runs_git_builtin(cur) && trusted_named(cur, program, is_git) ? "git" : NULL;
        /* make, npm: up through shells only.  Each parent is confirmed still the parent
         * after its executable was read: a parent that ended meanwhile (its pid free for
         * reuse) would have left its child to the sandbox's init. */
        for (int depth = 0; depth < WALK_MAX; depth++) {
                if (is_make(name))
                        return "make";
                if (is_node(name) && noted_npm(t, cur))
                        return "npm";
                if (is_node(name) && depth == 0) {
                        /* npm's own fork, before it execs the script's shell */
                        pid_t parent = parent_of(cur);
                        return parent > 1 && trusted_exe(parent, name, sizeof(name)) && is_node(name) &&
                                               noted_npm(t, parent) && parent_of(cur) == parent
                                       ? "npm"
                                       : NULL;
                }
                if (!is_shell(name))
                        return NULL;
                pid_t parent = parent_of(cur);
                if (parent <= 1 || !trusted_exe(parent, name, sizeof(name)) || parent_of(cur) != parent)
                        return NULL;
                cur = parent;
        }
        return NULL;
}
