/* What a simple command runs besides itself: wrappers (env, sudo, timeout ...), shells
 * given a string (sh -c, here-documents, piped text), eval, sourced files, interpreters'
 * one-liners, make's recipes and database clients' SQL.  Each layer is judged on its own,
 * so `sudo env rm -rf /` is seen as sudo, env and rm.  A handler never judges what it
 * finds itself: it adds the commands and leaves them, and the shell strings to parse, as
 * work for the walker (walk.c), which calls back here and into the parser.  scan.c holds
 * the list of commands
 * and the helpers the handlers share; feeds.c what feeds a shell its code (piped text,
 * files written earlier in the same input); listing.c models find, xargs and parallel;
 * tools.c the programs with their own ways to run commands or write files (git, editors,
 * sed, gdb, tmux ...). */
#define _GNU_SOURCE
#include "policy/feeds.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdint.h>
#include <string.h>

#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"

/* ---- handlers ---- */

static void h_shell(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n, k = 1;
        bool c_opt = false;
        /* A cluster may hold c (the command string is the first operand after the options)
         * and o or O, each taking the next word: bash -eo pipefail -c '...'. */
        for (; k < n; k++) {
                const char *o = a[k];
                if (!strcmp(o, "--") || !strcmp(o, "-")) {
                        k++;
                        break;
                }
                if ((o[0] != '-' && o[0] != '+') || !o[1])
                        break;
                if (o[1] == '-') {
                        if (!strcmp(o, "--help") || !strcmp(o, "--version"))
                                return; /* prints and exits, whatever follows */
                        if (!strcmp(o, "--rcfile") || !strcmp(o, "--init-file"))
                                k++;
                        continue;
                }
                for (const char *q = o + 1; *q; q++) {
                        if (*q == 'c' && o[0] == '-')
                                c_opt = true;
                        if (*q == 'o' || *q == 'O')
                                k++;
                }
        }
        if (c_opt) {
                if (k >= n)
                        return;
                if (uw_all_unk(a[k]) || sc->cmds[idx].dl_word)
                        return uw_unknown(sc, idx, "shell -c of a string that cannot be known");
                return uw_text(sc, idx, a[k], depth);
        }
        if (k < n && strcmp(a[k], "/dev/stdin")) {
                /* A script file runs inside the sandbox like any program; one this input
                 * downloaded or wrote is judged, one straight from a download refused. */
                if (sc->cmds[idx].dl_word)
                        return uw_unknown(sc, idx, "shell running a downloaded script");
                char *f = xstrdup(a[k]);
                uw_script_file(sc, idx, f, NULL, depth);
                free(f);
                return;
        }
        if (uw_no_input(&sc->cmds[idx]))
                return uw_finding(sc, idx, "@interactive-shell",
                                  "a shell with no command reads its commands from the terminal");
        uw_code_from_stdin(sc, idx, NULL, depth);
}

/* su [options] [-] [user [args]]: options may follow the user; -c STRING (--command)
 * runs the string in the user's shell, anything else starts one. */
static void h_su(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        for (size_t k = 1; k < n; k++) {
                const char *o = a[k], *cmd = NULL;
                if (!strcmp(o, "--"))
                        break;
                if (!strncmp(o, "--command=", 10))
                        cmd = o + 10;
                else if ((!strcmp(o, "--command") || (o[0] == '-' && o[1] != '-' &&
                                                      o[strlen(o) - 1] == 'c')) && k + 1 < n)
                        cmd = a[k + 1];
                else if (o[0] == '-' && o[1] != '-' && o[1] && strchr("sgGw", o[strlen(o) - 1]))
                        k++; /* -s SHELL, -g GROUP, -G GROUP, -w LIST */
                if (!cmd)
                        continue;
                if (uw_all_unk(cmd) || sc->cmds[idx].dl_word)
                        return uw_unknown(sc, idx, "su -c of a string that cannot be known");
                return uw_text(sc, idx, cmd, depth);
        }
        if (uw_no_input(&sc->cmds[idx]))
                return uw_finding(sc, idx, "@interactive-shell", "su with no command starts a shell");
        uw_code_from_stdin(sc, idx, NULL, depth);
}

/* sg [-] [GROUP [-c] COMMAND]: COMMAND is a string for /bin/sh -c. */
static void h_sg(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n, k = 1;
        if (k < n && !strcmp(a[k], "-"))
                k++;
        k++; /* the group */
        if (k < n && !strcmp(a[k], "-c"))
                k++;
        if (k >= n) {
                if (uw_no_input(&sc->cmds[idx]))
                        uw_finding(sc, idx, "@interactive-shell", "sg with no command starts a shell");
                return;
        }
        char *s = render_argv(a + k, SIZE_MAX);
        if (uw_all_unk(s) || sc->cmds[idx].dl_word)
                uw_unknown(sc, idx, "sg of a command that cannot be known");
        else
                uw_text(sc, idx, s, depth);
        free(s);
}

/* eval reached through a wrapper (builtin eval, command eval): read in a shell of its own,
 * so the variables it may set are unknown afterwards.  (A plain eval is read by the parser
 * with the same variables.) */
static void h_eval(struct scan *sc, size_t idx, int depth)
{
        char *s = render_argv(sc->cmds[idx].argv.v + 1, SIZE_MAX);
        if (uw_all_unk(s) || sc->cmds[idx].dl_word)
                uw_unknown(sc, idx, "eval of a string that cannot be known");
        else
                uw_text(sc, idx, s, depth);
        free(s);
        sc->forget = true;
}

static void h_source(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        sc->forget = true;
        if (sc->cmds[idx].argv.n < 2)
                return;
        if (!strcmp(a[1], "/dev/stdin") || !strcmp(a[1], "-") || !strncmp(a[1], "/proc/self/fd/", 14) ||
            !strncmp(a[1], "/dev/fd/", 8))
                uw_code_from_stdin(sc, idx, NULL, depth);
        else if (sc->cmds[idx].dl_word)
                uw_unknown(sc, idx, "source of a downloaded script");
        else {
                char *f = xstrdup(a[1]);
                uw_script_file(sc, idx, f, NULL, depth);
                free(f);
        }
}

/* trap 'COMMANDS' SIGNAL...: the commands run later, when the signal (or EXIT) comes. */
static void h_trap(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n, k = 1;
        while (k < n && a[k][0] == '-' && a[k][1] && strcmp(a[k], "--"))
                if (!strcmp(a[k++], "-p") || !strcmp(a[k - 1], "-l"))
                        return;
        if (k < n && !strcmp(a[k], "--"))
                k++;
        if (k + 1 >= n || !strcmp(a[k], "-") || !*a[k])
                return;
        if (uw_all_unk(a[k]))
                return uw_unknown(sc, idx, "trap of commands that cannot be known");
        char *s = xstrdup(a[k]);
        uw_text(sc, idx, s, depth);
        free(s);
}

/* A wrapper as data: which of its options take a value (and how many: bwrap --bind SRC
 * DST), how many operands come before the command (timeout's duration), which options mean
 * it runs nothing (command -v, ld.so --list), which take a shell string (flock -c) or a
 * list of libraries (ld.so --preload), whether its command is PREFIX and the words after
 * -- (capsh), one shell string (watch) or a descriptor (flock FD), and whether with no
 * command it starts a shell.  One model, h_wrapper, reads every row. */
struct arity {
        const char *opt; /* a long option ... */
        int n;           /* ... and how many words its value takes */
};

struct wrapper {
        const char *name;
        struct opts o;
        int skip;         /* operands before the command (timeout's duration ...) */
        const char *stop; /* options after which nothing is run (command -v) */
        bool shell;       /* with no command it starts an interactive shell */
        const struct arity *arity;      /* options by arity (replaces o): bwrap */
        const char *const *stop_long;   /* long options after which nothing runs */
        const char *const *string_opts; /* options whose value is a shell string */
        const char *const *lib_opts;    /* options whose value lists libraries (: or space) */
        const char *prefix;             /* the command is PREFIX and the words after -- */
        bool text;                      /* its command is its words as one shell string */
        bool fd;                        /* an operand of digits is a descriptor: nothing runs */
};

#define LW(...) ((const char *const[]){__VA_ARGS__, NULL})

/* bwrap's options take one, two or three values; the command follows them. */
static const struct arity bwrap_arity[] = {
        {"--bind", 2}, {"--ro-bind", 2}, {"--dev-bind", 2}, {"--bind-try", 2}, {"--ro-bind-try", 2},
        {"--dev-bind-try", 2}, {"--setenv", 2}, {"--symlink", 2}, {"--file", 2}, {"--bind-data", 2},
        {"--ro-bind-data", 2}, {"--chmod", 2}, {"--bind-fd", 2}, {"--ro-bind-fd", 2}, {"--overlay", 3},
        {"--args", 1}, {"--unsetenv", 1}, {"--lock-file", 1}, {"--sync-fd", 1}, {"--userns", 1},
        {"--userns2", 1}, {"--pidns", 1}, {"--uid", 1}, {"--gid", 1}, {"--hostname", 1}, {"--chdir", 1},
        {"--dev", 1}, {"--proc", 1}, {"--tmpfs", 1}, {"--mqueue", 1}, {"--dir", 1}, {"--remount-ro", 1},
        {"--exec-label", 1}, {"--file-label", 1}, {"--seccomp", 1}, {"--add-seccomp-fd", 1},
        {"--info-fd", 1}, {"--json-status-fd", 1}, {"--block-fd", 1}, {"--userns-block-fd", 1},
        {"--cap-add", 1}, {"--cap-drop", 1}, {"--perms", 1}, {"--size", 1}, {"--overlay-src", 1},
        {"--tmp-overlay", 1}, {"--ro-overlay", 1}, {"--argv0", 1}, {NULL, 0},
};

/* The dynamic loader run as a program: --list and --verify run nothing; --preload and
 * --audit load libraries into the program. */
#define LD_SO .stop_long = LW("--list", "--verify"), .lib_opts = LW("--preload", "--audit")

static const struct wrapper wrappers[] = {
        {"sudo", {"ugpCDhrtUTR", LW("user", "group", "prompt", "close-from", "chdir", "host", "role", "type",
                                    "other-user", "command-timeout", "chroot")}, 0, "lVKv"},
        {"doas", {"uC", NULL}, 0, "L", true},
        {"run0", {"uDg", LW("user", "group", "chdir", "nice", "setenv", "unit", "property", "description",
                            "slice", "machine")}, 0, NULL, true},
        {"nice", {"n", LW("adjustment")}, 0, NULL},
        {"nohup", {"", NULL}, 0, NULL},
        {"setsid", {"", NULL}, 0, NULL},
        {"timeout", {"sk", LW("signal", "kill-after")}, 1, NULL},
        {"command", {"", NULL}, 0, "vV"},
        {"builtin", {"", NULL}, 0, NULL},
        {"exec", {"a", NULL}, 0, NULL},
        /* time -p and --portability take no value; -f and -o do (GNU time) */
        {"time", {"fo", LW("format", "output")}, 0, NULL},
        {"stdbuf", {"ioe", LW("input", "output", "error")}, 0, NULL},
        {"ionice", {"cnpPu", LW("class", "classdata", "pid", "pgid", "uid")}, 0, NULL},
        {"chrt", {"TPD", LW("sched-runtime", "sched-period", "sched-deadline")}, 1, "p"},
        {"taskset", {"", NULL}, 1, "p"},
        {"chroot", {"", LW("userspec", "groups")}, 1, NULL, true},
        {"unshare", {"SGRw", LW("setuid", "setgid", "root", "wd", "propagation", "setgroups", "map-user",
                                "map-group",
                                "map-users", "map-groups", "monotonic", "boottime")}, 0, NULL, true},
        /* -r[DIR] and -w[DIR] take a value only when it is attached */
        {"nsenter", {"tSG", LW("target", "setuid", "setgid")}, 0, NULL, true},
        {"newgrp", {"", NULL}, 1, NULL, true},
        {"capsh", {"", NULL}, 0, NULL, true, .prefix = "bash"},
        {"systemd-run", {"pEuMH", LW("unit", "property", "uid", "gid", "working-directory", "description",
                                     "slice", "nice",
                                     "setenv", "service-type", "machine", "host", "on-active", "on-boot",
                                     "on-startup", "on-unit-active", "on-unit-inactive", "on-calendar",
                                     "timer-property")}, 0, NULL, true},
        {"systemd-inhibit", {"", LW("what", "who", "why", "mode")}, 0, NULL},
        /* -n is --nonblock, no value: flock -n LOCK CMD */
        {"flock", {"wE", LW("timeout", "conflict-exit-code")}, 1, NULL, .string_opts = LW("-c", "--command"),
         .fd = true},
        {"strace", {"oepsEaIbPuXU", LW("output", "expr", "attach", "user", "string-limit", "env")}, 0, NULL},
        {"ltrace", {"oepsEaIbPuXUn", LW("output", "library")}, 0, NULL},
        {"unbuffer", {"", NULL}, 0, NULL},
        {"chronic", {"", NULL}, 0, NULL},
        {"ifne", {"", NULL}, 0, NULL},
        {"firejail", {"", NULL}, 0, NULL, true},
        {"runuser", {"ugl", LW("user", "group")}, 0, NULL, .string_opts = LW("-c", "--command")},
        {"catchsegv", {"", NULL}, 0, NULL},
        {"dbus-launch", {"", LW("config-file")}, 0, NULL},
        {"dbus-run-session", {"", LW("config-file", "dbus-daemon")}, 0, NULL},
        {"caffeinate", {"", NULL}, 0, NULL},
        {"proxychains", {"f", NULL}, 0, NULL},
        {"proxychains4", {"f", NULL}, 0, NULL},
        {"torsocks", {"uaPp", NULL}, 0, NULL},
        {"tsocks", {"", NULL}, 0, NULL},
        {"trickle", {"udwtlns", NULL}, 0, NULL},
        /* -d[=permanent] takes a value only when it is attached */
        {"watch", {"nq", LW("interval", "equexit")}, 0, NULL, .text = true},
        {"busybox", {"", NULL}, 0, NULL},
        {"toybox", {"", NULL}, 0, NULL},
        {"rlwrap", {"bfHlPpqSstwz", LW("break-chars", "file", "history-filename", "logfile", "pre-given",
                                       "prompt-colour",
                                      "quote-characters", "substitute-prompt", "histsize", "command-name",
                                      "polling", "filter")}, 0, NULL},
        {"fakeroot", {"li", LW("lib", "faked")}, 0, NULL},
        {"fakechroot", {"cesl", LW("config-dir", "environment", "lib", "use-system-libs")}, 0, NULL},
        {"setpriv", {"", LW("reuid", "regid", "groups", "inh-caps", "ambient-caps", "bounding-set",
                            "securebits", "pdeathsig",
                            "selinux-label", "apparmor-profile", "landlock-access", "landlock-rule",
                            "seccomp-filter", "ruid", "euid", "rgid", "egid")}, 0, NULL},
        {"prlimit", {"p", LW("pid", "output")}, 0, "p"},
        {"ssh-agent", {"aEPtO", NULL}, 0, "kl"},
        {"xvfb-run", {"nsfewp", LW("server-num", "server-args", "auth-file", "error-file", "wait",
                                   "xauth-protocol")}, 0, NULL},
        {"valgrind", {"", NULL}, 0, NULL},
        {"numactl", {"CNmipPw", LW("physcpubind", "cpunodebind", "membind", "interleave", "preferred",
                                   "weighted-interleave")}, 0, NULL},
        {"cgexec", {"g", NULL}, 0, NULL},
        {"faketime", {"", NULL}, 1, NULL},
        {"eatmydata", {"", NULL}, 0, NULL},
        {"nocache", {"n", NULL}, 0, NULL},
        {"chpst", {"uUe/nlLmdopfcrt", NULL}, 0, NULL},
        {"softlimit", {"madopfcrt", NULL}, 0, NULL},
        {"envdir", {"", NULL}, 1, NULL},
        {"envuidgid", {"", NULL}, 1, NULL},
        {"setuidgid", {"", NULL}, 1, NULL},
        {"setarch", {"", NULL}, 1, NULL, true},
        {"linux32", {"", NULL}, 0, NULL, true},
        {"linux64", {"", NULL}, 0, NULL, true},
        {"i386", {"", NULL}, 0, NULL, true},
        {"x86_64", {"", NULL}, 0, NULL, true},
        {"flatpak-spawn", {"", LW("env", "forward-fd", "directory", "sandbox-expose", "sandbox-expose-ro")},
         0, NULL},
        {"cpulimit", {"lpeLm", LW("limit", "pid", "exe", "path")}, 0, "pe"},
        {"runcon", {"utrl", LW("user", "role", "type", "range")}, 0, NULL},
        {"proot", {"rbmwgqk", LW("rootfs", "bind", "mount", "cwd", "qemu", "kernel-release")}, 0, NULL, true},
        {"bwrap", {"", NULL}, 0, NULL, .arity = bwrap_arity},
        {"ld.so", {"", LW("library-path", "preload", "audit", "argv0", "inhibit-rpath",
                          "glibc-hwcaps-prepend", "glibc-hwcaps-mask")}, 0, NULL, LD_SO},
        {"ld-linux.so.2", {"", LW("library-path", "preload", "audit", "argv0", "inhibit-rpath")}, 0, NULL,
         LD_SO},
        {"ld-linux-x86-64.so.2", {"", LW("library-path", "preload", "audit", "argv0", "inhibit-rpath")}, 0,
         NULL, LD_SO},
        {"ld-linux-aarch64.so.1", {"", LW("library-path", "preload", "audit", "argv0", "inhibit-rpath")}, 0,
         NULL, LD_SO},
        {"qemu-x86_64", {"LUEgrBRscdDp", NULL}, 0, NULL},
        {"qemu-aarch64", {"LUEgrBRscdDp", NULL}, 0, NULL},
        {"daemonize", {"acelopuE", NULL}, 0, NULL},
        {"dtach", {"", NULL}, 0, NULL},
        {"heaptrack", {"o", LW("output")}, 0, NULL},
        {"retry", {"tdm", LW("times", "delay", "until")}, 0, NULL},
        {"sem", {"jP", LW("jobs", "id")}, 0, NULL},
        {"tsp", {"LNDW", NULL}, 0, NULL},
        {"nq", {"c", NULL}, 0, NULL},
        {"pkexec", {"", LW("user")}, 0, NULL, true},
};

/* Index of the first word of the command after the wrapper's options. */
static size_t wrap_skip(char **a, size_t n, const struct wrapper *w)
{
        if (!w->arity)
                return uw_skip_opts(a, n, 1, &w->o);
        size_t k = 1;
        while (k < n) {
                if (!strcmp(a[k], "--"))
                        return k + 1;
                if (a[k][0] != '-')
                        return k;
                int more = 0;
                for (const struct arity *r = w->arity; r->opt && !more; r++)
                        if (!strcmp(a[k], r->opt))
                                more = r->n;
                k += 1 + (size_t)more;
        }
        return n;
}

/* The value of one of opts in a[1..n): "-c STRING", "--command STRING", "--command=STRING". */
static const char *opt_value(char **a, size_t n, const char *const *opts)
{
        for (size_t j = 1; j < n; j++)
                for (const char *const *o = opts; *o; o++) {
                        size_t l = strlen(*o);
                        if (!strcmp(a[j], *o) && j + 1 < n)
                                return a[j + 1];
                        if ((*o)[1] == '-' && !strncmp(a[j], *o, l) && a[j][l] == '=')
                                return a[j] + l + 1;
                }
        return NULL;
}

/* Options before the command (a[1..k)) that mean it runs nothing. */
static bool runs_nothing(char **a, size_t k, const struct wrapper *w)
{
        if (uw_help(a, 1, k))
                return true; /* the wrapper prints its help or version */
        for (const char *s = w->stop; s && *s; s++)
                if (uw_has_short(a, 1, k, *s))
                        return true;
        for (size_t j = 1; w->stop_long && j < k; j++)
                if (uw_in(a[j], w->stop_long))
                        return true;
        return false;
}

static void libraries(struct scan *sc, size_t idx, size_t k, const struct wrapper *w)
{
        for (size_t j = 1; w->lib_opts && j + 1 < k; j++) {
                char **a = sc->cmds[idx].argv.v;
                if (!uw_in(a[j], w->lib_opts))
                        continue;
                char *libs = xstrdup(a[j + 1]), *save = NULL;
                for (char *l = strtok_r(libs, ": ", &save); l; l = strtok_r(NULL, ": ", &save))
                        tool_lib_load(sc, idx, l);
                free(libs);
        }
}

/* capsh ... -- ARGS: PREFIX ARGS */
static void prefixed(struct scan *sc, size_t idx, char **a, size_t n, const char *prefix, int depth)
{
        size_t j = 1;
        while (j < n && strcmp(a[j], "--"))
                j++;
        if (j >= n)
                return;
        struct strvec v = {0};
        strvec_push(&v, xstrdup(prefix));
        for (j++; j < n; j++)
                strvec_push(&v, xstrdup(a[j]));
        uw_run(sc, idx, v.v, v.n, depth);
        strv_free(v.v);
}

/* A shell string the wrapper runs (one that cannot be known is a finding saying what). */
static void run_text(struct scan *sc, size_t idx, const char *s, int depth, const char *what)
{
        if (uw_all_unk(s))
                return uw_unknown(sc, idx, what);
        char *copy = xstrdup(s);
        uw_text(sc, idx, copy, depth);
        free(copy);
}

static void h_wrapper(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        const char *p = base_name(a[0]);
        const struct wrapper *w = NULL;
        for (size_t k = 0; k < ARRAY_SIZE(wrappers) && !w; k++)
                if (!strcmp(p, wrappers[k].name))
                        w = &wrappers[k];
        size_t k = wrap_skip(a, n, w);
        if (runs_nothing(a, k, w))
                return;
        libraries(sc, idx, k, w);
        a = sc->cmds[idx].argv.v;
        const char *s = w->string_opts ? opt_value(a, n, w->string_opts) : NULL;
        if (s)
                return run_text(sc, idx, s, depth, "shell string that cannot be known");
        if (w->prefix)
                return prefixed(sc, idx, a, n, w->prefix, depth);
        if (w->fd && k < n && *a[k] && strspn(a[k], "0123456789") == strlen(a[k]))
                return; /* flock FD: locks a descriptor, runs nothing */
        k += (size_t)w->skip;
        if (k >= n) {
                if (w->shell && uw_no_input(&sc->cmds[idx]))
                        uw_finding(sc, idx, "@interactive-shell", "starts a shell with no command");
                return;
        }
        if (w->text) {
                char *t = render_argv(a + k, SIZE_MAX);
                run_text(sc, idx, t, depth, "watch of a command that cannot be known");
                return free(t);
        }
        uw_run(sc, idx, a + k, n - k, depth);
}

/* env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... [CMD [ARG]...]: -S splits its
 * string into the command (-S STRING, -SSTRING, --split-string=STRING, and the words
 * after it). */
static void h_env(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n, k = 1;
        static const char *const lwa[] = {"unset", "chdir", "split-string", NULL};
        static const struct opts o = {"uCPS", lwa};
        for (;;) {
                size_t j = uw_skip_opts(a, n, k, &o);
                if (uw_help(a, k, j))
                        return;
                for (size_t m = k; m < j; m++) {
                        const char *s = NULL;
                        size_t from = m + 1;
                        if (!strncmp(a[m], "--split-string=", 15))
                                s = a[m] + 15;
                        else if (!strcmp(a[m], "--split-string") || !strcmp(a[m], "-S"))
                                s = "";
                        else if (a[m][0] == '-' && a[m][1] != '-' && strchr(a[m], 'S')) {
                                const char *at = strchr(a[m], 'S');
                                s = at[1] ? at + 1 : "";
                        }
                        if (!s)
                                continue;
                        /* -S STRING: the string (attached or the next word), then the rest */
                        struct strvec v = {0};
                        if (*s)
                                strvec_push(&v, xstrdup(s));
                        for (size_t q = from; q < n; q++)
                                strvec_push(&v, xstrdup(a[q]));
                        char *str = v.n ? render_argv(v.v, SIZE_MAX) : xstrdup("");
                        strv_free(v.v);
                        if (uw_all_unk(str))
                                uw_unknown(sc, idx, "env -S of a string that cannot be known");
                        else
                                uw_text(sc, idx, str, depth);
                        free(str);
                        return;
                }
                k = j;
                if (k < n && strchr(a[k], '=') && a[k][0] != '=' && a[k][0] != '-') {
                        k++;
                        continue;
                }
                break;
        }
        if (k < n)
                uw_run(sc, idx, a + k, n - k, depth);
}

/* make -f - / -f /dev/stdin with a here-document: its recipe lines are shell commands;
 * a Makefile this input wrote: its recipes too. */
static void recipes(struct scan *sc, size_t idx, const char *text, int depth)
{
        char *copy = xstrdup(text);
        for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                if (l[0] == '\t')
                        uw_text(sc, idx, l + 1 + strspn(l + 1, "@-+"), depth);
        free(copy);
}

static void h_make(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        const char *file = NULL;
        for (size_t k = 1; k < n; k++) {
                if ((!strcmp(a[k], "-f") || !strcmp(a[k], "--file") || !strcmp(a[k], "--makefile")) &&
                    k + 1 < n)
                        file = a[k + 1];
                else if (!strncmp(a[k], "--eval=", 7) || (!strcmp(a[k], "--eval") && k + 1 < n)) {
                        const char *e = a[k][6] == '=' ? a[k] + 7 : a[k + 1];
                        /* $(shell CMD) and $(file >PATH,...) in evaluated make text */
                        for (const char *s = e; (s = strstr(s, "$(shell ")); s += 8) {
                                char *c = strndup(s + 8, strcspn(s + 8, ")"));
                                if (c) {
                                        uw_text(sc, idx, c, depth);
                                        free(c);
                                }
                        }
                        for (const char *s = e; (s = strstr(s, "$(file ")); s += 7) {
                                const char *p = s + 7 + strspn(s + 7, "> ");
                                char *f = strndup(p, strcspn(p, ",)"));
                                if (f) {
                                        char *tee[] = {"tee", f, NULL};
                                        uw_run(sc, idx, tee, 2, depth);
                                        free(f);
                                }
                        }
                }
        }
        if (!file) {
                static const char *const names[] = {"GNUmakefile", "makefile", "Makefile"};
                for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
                        char *abs = uw_path(sc, idx, names[k]);
                        const char *t = abs ? uw_text_file(sc, abs) : NULL;
                        if (t) {
                                char *copy = xstrdup(t);
                                recipes(sc, idx, copy, depth);
                                free(copy);
                        }
                        free(abs);
                }
                return;
        }
        if (strcmp(file, "-") && strcmp(file, "/dev/stdin")) {
                char *abs = uw_path(sc, idx, file);
                const char *t = abs ? uw_text_file(sc, abs) : NULL;
                if (t) {
                        char *copy = xstrdup(t);
                        recipes(sc, idx, copy, depth);
                        free(copy);
                }
                free(abs);
                return;
        }
        char *text;
        enum stdin_kind kind = uw_stdin_of(sc, idx, &text);
        if (kind == IN_DOWNLOAD || kind == IN_DECODED)
                uw_finding(sc, idx, kind == IN_DOWNLOAD ? "@download-exec" : "@obfuscated-exec",
                           "makefile from a pipe");
        if (kind == IN_TEXT && text)
                recipes(sc, idx, text, depth);
        free(text);
}

/* ---- interpreters ---- */

struct interp {
        const char *name;
        const char *lang;
        const char *const *code_opts; /* options whose argument is code */
        const char *with_arg;         /* other short options taking an argument */
};

static const struct interp interps[] = {
        {"python", "python", (const char *const[]){"-c", NULL}, "mWXQ"},
        {"perl", "perl", (const char *const[]){"-e", "-E", NULL}, "IMmx"},
        {"ruby", "ruby", (const char *const[]){"-e", NULL}, "IrCEx"},
        {"node", "js", (const char *const[]){"-e", "--eval", "-p", "--print", NULL}, "r"},
        {"nodejs", "js", (const char *const[]){"-e", "--eval", "-p", "--print", NULL}, "r"},
        {"bun", "js", (const char *const[]){"-e", "--eval", "-p", "--print", NULL}, ""},
        {"deno", "js", (const char *const[]){"eval", NULL}, ""},
        {"php", "php", (const char *const[]){"-r", NULL}, "cdz"},
        {"lua", "lua", (const char *const[]){"-e", NULL}, "l"},
        {"luajit", "lua", (const char *const[]){"-e", NULL}, "l"},
        {"Rscript", "r", (const char *const[]){"-e", NULL}, ""},
        {"julia", "julia", (const char *const[]){"-e", "--eval", NULL}, ""},
        {"expect", "expect", (const char *const[]){"-c", NULL}, ""},
        {"osascript", "applescript", (const char *const[]){"-e", NULL}, ""},
        {"jrunscript", "js", (const char *const[]){"-e", NULL}, ""},
        {"octave", "octave", (const char *const[]){"--eval", NULL}, ""},
        {"octave-cli", "octave", (const char *const[]){"--eval", NULL}, ""},
        {"tclsh", "expect", (const char *const[]){NULL}, ""},
        {"guile", "scheme", (const char *const[]){"-c", NULL}, ""},
        {"racket", "scheme", (const char *const[]){"-e", NULL}, ""},
        {"sbcl", "lisp", (const char *const[]){"--eval", NULL}, ""},
        {"clisp", "lisp", (const char *const[]){"-x", NULL}, ""},
        {"pwsh", "pwsh", (const char *const[]){"-c", "-Command", "-command", NULL}, ""},
        {"powershell", "pwsh", (const char *const[]){"-c", "-Command", "-command", NULL}, ""},
};

static const struct interp *find_interp(const char *p)
{
        for (size_t k = 0; k < ARRAY_SIZE(interps); k++) {
                size_t l = strlen(interps[k].name);
                /* python3, python3.11, perl5.36, ruby3.1 ... */
                if (!strncmp(p, interps[k].name, l) && (!p[l] || isdigit((unsigned char)p[l])))
                        return &interps[k];
        }
        if (!strcmp(p, "pypy") || !strcmp(p, "pypy3"))
                return &interps[0];
        return NULL;
}

static void run_code(struct scan *sc, size_t idx, const char *lang, const char *code, int depth)
{
        if (uw_all_unk(code) || sc->cmds[idx].dl_word)
                uw_unknown(sc, idx, "interpreter code that cannot be known");
        char *copy = xstrdup(code);
        if (!strcmp(lang, "pwsh"))
                uw_text(sc, idx, copy, depth); /* its commands read like a shell's */
        else
                scan_code(sc, lang, copy, idx, depth);
        free(copy);
}

static void h_interp(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        const struct interp *in = find_interp(base_name(a[0]));
        bool code = false;
        for (size_t k = 1; k < n; k++) {
                a = sc->cmds[idx].argv.v;
                const char *o = a[k];
                if (!code && (!strcmp(o, "--version") || !strcmp(o, "--help") || !strcmp(o, "-V") ||
                              (!strcmp(o, "-v") && strcmp(in->lang, "perl") == 0)))
                        return; /* prints and exits */
                if (uw_in(o, in->code_opts) && k + 1 < n) {
                        run_code(sc, idx, in->lang, a[++k], depth);
                        code = true;
                        if (strcmp(in->lang, "perl")) /* perl takes several -e */
                                return;
                        continue;
                }
                /* perl -ne 'code', python -Bc 'code': a cluster ending in the code option */
                if (o[0] == '-' && o[1] != '-' && strlen(o) > 2 && k + 1 < n) {
                        char last[3] = {'-', o[strlen(o) - 1], 0};
                        if (uw_in(last, in->code_opts)) {
                                run_code(sc, idx, in->lang, a[++k], depth);
                                code = true;
                                continue;
                        }
                }
                if (!strcmp(o, "-m") && !strcmp(in->lang, "python"))
                        return;
                if (o[0] == '-' && o[1] && o[1] != '-' && !o[2] && strchr(in->with_arg, o[1])) {
                        k++;
                        continue;
                }
                if (!strcmp(o, "-"))
                        break;
                if (o[0] != '-' || code) { /* a script file, or the code's arguments */
                        if (sc->cmds[idx].dl_word)
                                return uw_unknown(sc, idx, "interpreter running a downloaded script");
                        if (!code) {
                                char *f = xstrdup(o);
                                uw_script_file(sc, idx, f, in->lang, depth);
                                free(f);
                        }
                        return;
                }
        }
        if (!code)
                uw_code_from_stdin(sc, idx, in->lang, depth);
}

static void h_awk(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        static const char *const lwa[] = {"field-separator", "assign", "file", "include", "load", NULL};
        static const struct opts o = {"Fvfil", lwa};
        if (uw_has_short(a, 1, n, 'f'))
                return;
        size_t k = uw_skip_opts(a, n, 1, &o);
        if (uw_help(a, 1, k))
                return;
        if (k < n)
                run_code(sc, idx, "awk", a[k], depth);
}

static void h_db(struct scan *sc, size_t idx, int depth)
{
        (void)depth;
        char *all = render_argv(sc->cmds[idx].argv.v + 1, SIZE_MAX);
        scan_sql(sc, all, idx);
        free(all);
        char *text;
        if (uw_stdin_of(sc, idx, &text) == IN_TEXT)
                scan_sql(sc, text, idx);
        free(text);
}

/* rsync -e CMD / --rsh=CMD: the remote shell command runs here. */
static void h_ssh_like(struct scan *sc, size_t idx, int depth)
{
        (void)sc, (void)idx, (void)depth; /* runs elsewhere: out of this workspace's reach */
}

struct handler {
        const char *name;
        handler_fn *fn;
};

static const struct handler handlers[] = {
        {"sh", h_shell},    {"bash", h_shell},   {"dash", h_shell},     {"zsh", h_shell},
        {"ksh", h_shell},   {"ash", h_shell},    {"mksh", h_shell},     {"fish", h_shell},
        {"rbash", h_shell}, {"yash", h_shell}, {"posh", h_shell}, {"elvish", h_shell},
        {"xonsh", h_shell}, {"wish", h_shell}, {"csh", h_shell}, {"tcsh", h_shell}, {"sash", h_shell},
        {"rc", h_shell},    {"es", h_shell},     {"oksh", h_shell},     {"loksh", h_shell}, {"nu", h_shell},
        {"bash5", h_shell}, {"ksh93", h_shell},  {"pdksh", h_shell},    {"scsh", h_shell},
        {"su", h_su},     {"sg", h_sg},     {"eval", h_eval},
        {"source", h_source}, {".", h_source},   {"env", h_env},        {"xargs", h_xargs},
        {"parallel", h_parallel}, {"find", h_find}, {"make", h_make},
        {"gmake", h_make},  {"awk", h_awk},      {"gawk", h_awk},       {"mawk", h_awk},
        {"nawk", h_awk},    {"busybox-awk", h_awk}, {"trap", h_trap},
        {"psql", h_db},      {"mysql", h_db},       {"mariadb", h_db},
        {"sqlite3", h_db},  {"sqlite", h_db},    {"mongo", h_db},     {"mongosh", h_db},
        {"redis-cli", h_db}, {"valkey-cli", h_db}, {"keydb-cli", h_db}, {"cqlsh", h_db},
        {"clickhouse-client", h_db}, {"clickhouse", h_db}, {"clickhouse-local", h_db}, {"sqlcmd", h_db},
        {"duckdb", h_db},  {"usql", h_db}, {"pgcli", h_db}, {"mycli", h_db},    {"litecli", h_db},
        {"trino", h_db},       {"presto", h_db}, {"snowsql", h_db}, {"bq", h_db},       {"cockroach", h_db},
        {"influx", h_db},      {"isql", h_db}, {"sqlplus", h_db}, {"db2", h_db},      {"vsql", h_db},
        {"spark-sql", h_db},   {"beeline", h_db}, {"hive", h_db}, {"impala-shell", h_db},
        {"cypher-shell", h_db}, {"surreal", h_db}, {"edgedb", h_db}, {"mssql-cli", h_db}, {"turso", h_db},
        {"planetscale", h_db}, {"pscale", h_db}, {"psql.bin", h_db}, {"ysqlsh", h_db}, {"ssh", h_ssh_like},
};

static bool is_wrapper(const char *p)
{
        for (size_t k = 0; k < ARRAY_SIZE(wrappers); k++)
                if (!strcmp(p, wrappers[k].name))
                        return true;
        return false;
}

void unwrap_argv(struct scan *sc, size_t idx, int depth)
{
        struct scmd *c = &sc->cmds[idx];
        if (!c->argv.n || scan_over_time(sc))
                return;
        if (depth > POL_MAX_DEPTH) {
                uw_finding(sc, idx, "@limit-exceeded", "commands nested too deep");
                return;
        }
        const char *a0 = c->argv.v[0];
        if (a0[0] == '@')
                return;
        if (has_unk(a0)) {
                uw_unknown(sc, idx, "the command name cannot be known before it runs");
                return;
        }
        char *p = xstrdup(base_name(a0));
        /* a program this input downloaded or wrote, run by its path: ./install.sh */
        if (strchr(a0, '/')) {
                char *f = xstrdup(a0);
                uw_script_file(sc, idx, f, NULL, depth);
                free(f);
        }
        bool runner = false;
        for (size_t k = 0; k < ARRAY_SIZE(handlers) && !runner; k++)
                if (!strcmp(p, handlers[k].name)) {
                        handlers[k].fn(sc, idx, depth);
                        runner = true;
                }
        if (!runner && is_wrapper(p)) {
                h_wrapper(sc, idx, depth);
                runner = true;
        }
        if (!runner && find_interp(p)) {
                h_interp(sc, idx, depth);
                runner = true;
        }
        handler_fn *t = runner ? NULL : tool_handler(p);
        if (t)
                t(sc, idx, depth);
        else if (!runner)
                tool_generic(sc, idx, depth);
        tool_outputs(sc, idx, depth);
        tool_env_leak(sc, idx);
        tool_fill(sc, idx);
        tool_hunt(sc, idx);
        tool_repl(sc, idx);
        c = &sc->cmds[idx];
        /* --help or --version: the program prints and exits.  Wrappers, shells and
         * interpreters read their own options above (after them come the command's). */
        if (!runner && c->argv.v[0][0] != '@')
                c->help = uw_help(c->argv.v, 1, c->argv.n);
        uw_record_outputs(sc, idx);
        free(p);
}
