/* What a simple command runs besides itself: wrappers (env, sudo, timeout, xargs, find
 * -exec ...), shells given a string (sh -c, eval, here-documents, piped text), git's
 * shell aliases, make recipes on stdin, and interpreters' one-liners.  Each layer is
 * judged on its own, so `sudo env rm -rf /` is seen as sudo, env and rm. */
#define _GNU_SOURCE
#include "pol.h"

#include <ctype.h>
#include <fnmatch.h>

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
                free(c->text);
                free(c->stdin_text);
        }
        free(sc->cmds);
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

/* ---- small helpers ---- */

const char *base_name(const char *p)
{
        const char *s = strrchr(p, '/');
        return s && s[1] ? s + 1 : p;
}

bool has_unk(const char *s) { return strchr(s, UNK) != NULL; }

/* A script that is nothing but unknown text ($CMD, $(curl ...)).  Partly unknown scripts
 * are parsed: their unknown words stay unknown, and an unknown command word is caught. */
static bool all_unk(const char *s) { return has_unk(s) && strspn(s, UNK_S " \t\n\"';") == strlen(s); }

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

static bool in_list(const char *s, const char *const *list)
{
        for (; *list; list++)
                if (!strcmp(s, *list))
                        return true;
        return false;
}

/* A child command for argv[from..] of command idx (or for the given words). */
static size_t add_child(struct scan *sc, size_t idx, char *const *words, size_t n)
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
        char *in = xstrdup_or_null(p->stdin_text);
        struct scmd *c = scan_add(sc, &v, text, off);
        free(text);
        if (!c) {
                strv_free(v.v);
                free(in);
                return (size_t)-1;
        }
        c->pipe_id = pipe, c->stage = stage, c->dl_word = dl, c->stdin_text = in;
        return sc->n - 1;
}

static void child_and_unwrap(struct scan *sc, size_t idx, char *const *words, size_t n, int depth)
{
        size_t k = add_child(sc, idx, words, n);
        if (k != (size_t)-1)
                unwrap_argv(sc, k, depth + 1);
}

static void parse_text(struct scan *sc, size_t idx, const char *s, int depth)
{
        struct srcpos pos = {.direct = false, .outer_off = sc->cmds[idx].offset};
        parse_script(sc, s, strlen(s), pos, depth + 1);
}

static void finding(struct scan *sc, size_t idx, const char *name, const char *detail)
{
        char *text = xstrdup(sc->cmds[idx].text);
        scan_finding(sc, name, detail, text, sc->cmds[idx].offset);
        free(text);
}

/* ---- option skipping ---- */

struct opts {
        const char *with_arg;             /* short options that take an argument */
        const char *const *long_with_arg; /* long options (no dashes) that take one */
};

/* Index of the first operand of argv after options, or argc: never more.  An option that
 * takes a value may be the last word (`sudo -u`, `env -u`): the value is then missing, the
 * real program fails on it, and the scan must not step past the end (every caller indexes
 * argv with what this returns). */
static size_t skip_opts(char **argv, size_t argc, size_t k, const struct opts *o)
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
                        if (!strchr(a, '=') && in_list(a + 2, lwa))
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

static bool has_short(char **argv, size_t from, size_t to, char f)
{
        for (size_t k = from; k < to && argv[k]; k++)
                if (argv[k][0] == '-' && argv[k][1] != '-' && strchr(argv[k] + 1, f))
                        return true;
        return false;
}

/* ---- what feeds a command's stdin ---- */

enum stdin_kind { IN_NONE, IN_TEXT, IN_DOWNLOAD, IN_DECODED };

static bool is_decoder(char **argv, size_t argc)
{
        const char *p = base_name(argv[0]);
        static const char *const always[] = {"uudecode", "gunzip", "zcat", "bzcat", "xzcat",
                                             "rev", "unxz", "zstdcat", NULL};
        if (in_list(p, always))
                return true;
        if (!strcmp(p, "base64") || !strcmp(p, "base32") || !strcmp(p, "openssl") ||
            !strcmp(p, "xxd") || !strcmp(p, "gzip") || !strcmp(p, "basenc"))
                for (size_t k = 1; k < argc; k++)
                        if (!strcmp(argv[k], "-d") || !strcmp(argv[k], "--decode") ||
                            !strcmp(argv[k], "-D") || !strcmp(argv[k], "-r") ||
                            !strcmp(argv[k], "-base64") || !strcmp(argv[k], "base64"))
                                return true;
        return !strcmp(p, "tr") && argc > 2; /* rot13 and friends */
}

static bool is_dl(const char *p)
{
        static const char *const dl[] = {"curl", "wget", "fetch", "aria2c", "http", "https",
                                         "lwp-download", "lwp-request", "GET", "nc", "ncat",
                                         "netcat", "socat", "telnet", "ftp", "tftp", "@net",
                                         NULL};
        return in_list(p, dl);
}

/* printf / echo -e output of known words (escapes decoded), or NULL. */
static char *echo_text(char **argv, size_t argc)
{
        const char *p = base_name(argv[0]);
        bool printf_ = !strcmp(p, "printf");
        if (strcmp(p, "echo") && !printf_)
                return NULL;
        size_t k = 1;
        bool esc = printf_;
        while (!printf_ && k < argc && argv[k][0] == '-' && strspn(argv[k] + 1, "neE") == strlen(argv[k] + 1) && argv[k][1]) {
                if (strchr(argv[k], 'e'))
                        esc = true;
                k++;
        }
        char *r = render_argv(argv + k, SIZE_MAX);
        if (has_unk(r)) {
                free(r);
                return NULL;
        }
        if (!esc)
                return r;
        /* decode backslash escapes in place (printf's format, echo -e) */
        char *o = r, *q = r;
        while (*q) {
                if (*q == '\\' && q[1]) {
                        static const char from[] = "abefnrtv\\", to[] = "\a\b\033\f\n\r\t\v\\";
                        const char *m = strchr(from, q[1]);
                        if (m) {
                                *o++ = to[m - from];
                                q += 2;
                        } else if (q[1] == 'x' && isxdigit((unsigned char)q[2])) {
                                unsigned v = 0;
                                size_t j = 2;
                                for (; j < 4 && isxdigit((unsigned char)q[j]); j++)
                                        v = v * 16 + (unsigned)(isdigit((unsigned char)q[j]) ? q[j] - '0' : (tolower((unsigned char)q[j]) - 'a' + 10));
                                *o++ = (char)v;
                                q += j;
                        } else if (q[1] >= '0' && q[1] <= '7') {
                                unsigned v = 0;
                                size_t j = 1;
                                if (q[1] == '0')
                                        j = 2;
                                for (size_t m2 = 0; m2 < 3 && q[j] >= '0' && q[j] <= '7'; m2++, j++)
                                        v = v * 8 + (unsigned)(q[j] - '0');
                                *o++ = (char)v;
                                q += j;
                        } else
                                *o++ = *q++;
                } else
                        *o++ = *q++;
        }
        *o = 0;
        return r;
}

static enum stdin_kind stdin_of(struct scan *sc, size_t idx, char **text)
{
        struct scmd *me = &sc->cmds[idx];
        *text = NULL;
        if (me->stdin_text) {
                *text = xstrdup(me->stdin_text);
                return IN_TEXT;
        }
        if (me->stage <= 0 || me->pipe_id < 0)
                return IN_NONE;
        enum stdin_kind r = IN_NONE;
        bool prev_seen = false;
        for (size_t k = idx; k-- > 0;) {
                struct scmd *c = &sc->cmds[k];
                if (c->pipe_id != me->pipe_id || c->stage >= me->stage || !c->argv.n)
                        continue;
                if (is_dl(base_name(c->argv.v[0])))
                        return IN_DOWNLOAD;
                if (is_decoder(c->argv.v, c->argv.n))
                        r = IN_DECODED;
                if (c->stage == me->stage - 1 && !prev_seen && r == IN_NONE) {
                        prev_seen = true;
                        *text = echo_text(c->argv.v, c->argv.n);
                        if (!*text && !strcmp(base_name(c->argv.v[0]), "cat") && c->argv.n == 1 && c->stdin_text)
                                *text = xstrdup(c->stdin_text);
                }
        }
        if (r != IN_NONE) {
                free(*text);
                *text = NULL;
                return r;
        }
        return *text ? IN_TEXT : IN_NONE;
}

/* A program that will read code from stdin: judge what feeds it. */
static void code_from_stdin(struct scan *sc, size_t idx, const char *lang, int depth)
{
        char *text;
        enum stdin_kind k = stdin_of(sc, idx, &text);
        if (k == IN_DOWNLOAD)
                finding(sc, idx, "@download-exec", "downloaded code piped into an interpreter");
        else if (k == IN_DECODED)
                finding(sc, idx, "@obfuscated-exec", "decoded data piped into an interpreter");
        else if (k == IN_TEXT && !lang)
                parse_text(sc, idx, text, depth);
        else if (k == IN_TEXT)
                scan_code(sc, lang, text, idx, depth);
        free(text);
}

/* Parsed from a shell string with nothing feeding its stdin (an argv checked at exec time
 * has pipe_id -1: its stdin is unknown, so it is not called interactive). */
static bool no_input(const struct scmd *c)
{
        return !c->stdin_text && c->stage == 0 && c->pipe_id >= 0;
}

/* A script argument that is not a file we can see. */
static void unknown_code(struct scan *sc, size_t idx, const char *what)
{
        if (sc->cmds[idx].dl_word)
                finding(sc, idx, "@download-exec", "downloaded code run by a shell or interpreter");
        else
                finding(sc, idx, "@unknown-command", what);
}

/* ---- handlers ---- */

typedef void handler_fn(struct scan *sc, size_t idx, int depth);

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
                if (all_unk(a[k]) || sc->cmds[idx].dl_word)
                        return unknown_code(sc, idx, "shell -c of a string that cannot be known");
                char *s = xstrdup(a[k]);
                parse_text(sc, idx, s, depth);
                free(s);
                return;
        }
        if (k < n && strcmp(a[k], "/dev/stdin")) {
                /* A script file runs inside the sandbox like any program; only one that
                 * comes straight from a download is refused. */
                if (sc->cmds[idx].dl_word)
                        unknown_code(sc, idx, "shell running a downloaded script");
                return;
        }
        if (no_input(&sc->cmds[idx]))
                return finding(sc, idx, "@interactive-shell", "a shell with no command reads its commands from the terminal");
        code_from_stdin(sc, idx, NULL, depth);
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
                else if ((!strcmp(o, "--command") || (o[0] == '-' && o[1] != '-' && o[strlen(o) - 1] == 'c')) && k + 1 < n)
                        cmd = a[k + 1];
                else if (o[0] == '-' && o[1] != '-' && o[1] && strchr("sgGw", o[strlen(o) - 1]))
                        k++; /* -s SHELL, -g GROUP, -G GROUP, -w LIST */
                if (!cmd)
                        continue;
                if (all_unk(cmd) || sc->cmds[idx].dl_word)
                        return unknown_code(sc, idx, "su -c of a string that cannot be known");
                return parse_text(sc, idx, cmd, depth);
        }
        if (no_input(&sc->cmds[idx]))
                return finding(sc, idx, "@interactive-shell", "su with no command starts a shell");
        code_from_stdin(sc, idx, NULL, depth);
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
                if (no_input(&sc->cmds[idx]))
                        finding(sc, idx, "@interactive-shell", "sg with no command starts a shell");
                return;
        }
        char *s = render_argv(a + k, SIZE_MAX);
        if (all_unk(s) || sc->cmds[idx].dl_word)
                unknown_code(sc, idx, "sg of a command that cannot be known");
        else
                parse_text(sc, idx, s, depth);
        free(s);
}

static void h_eval(struct scan *sc, size_t idx, int depth)
{
        char *s = render_argv(sc->cmds[idx].argv.v + 1, SIZE_MAX);
        if (all_unk(s) || sc->cmds[idx].dl_word)
                unknown_code(sc, idx, "eval of a string that cannot be known");
        else
                parse_text(sc, idx, s, depth);
        free(s);
}

static void h_source(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        if (sc->cmds[idx].argv.n < 2)
                return;
        if (!strcmp(a[1], "/dev/stdin") || !strcmp(a[1], "-"))
                code_from_stdin(sc, idx, NULL, depth);
        else if (sc->cmds[idx].dl_word)
                unknown_code(sc, idx, "source of a downloaded script");
}

struct wrapper {
        const char *name;
        struct opts o;
        int skip;          /* operands before the command (timeout's duration ...) */
        const char *stop;  /* options after which nothing is run (command -v) */
        bool shell;        /* with no command it starts an interactive shell */
};

static const struct wrapper wrappers[] = {
        {"sudo", {"ugpCDhrtUTR", (const char *const[]){"user", "group", "prompt", "close-from", "chdir", "host", "role", "type", "other-user", "command-timeout", "chroot", NULL}}, 0, "lVKkv"},
        {"doas", {"uC", NULL}, 0, NULL},
        {"nice", {"n", (const char *const[]){"adjustment", NULL}}, 0, NULL},
        {"nohup", {"", NULL}, 0, NULL},
        {"setsid", {"", NULL}, 0, NULL},
        {"timeout", {"sk", (const char *const[]){"signal", "kill-after", NULL}}, 1, NULL},
        {"command", {"", NULL}, 0, "vV"},
        {"builtin", {"", NULL}, 0, NULL},
        {"exec", {"a", NULL}, 0, NULL},
        {"time", {"fo", (const char *const[]){"format", "output", NULL}}, 0, NULL},
        {"stdbuf", {"ioe", (const char *const[]){"input", "output", "error", NULL}}, 0, NULL},
        {"ionice", {"cnpPu", (const char *const[]){"class", "classdata", "pid", "pgid", "uid", NULL}}, 0, NULL},
        {"chrt", {"T P D", NULL}, 1, NULL},
        {"taskset", {"", NULL}, 1, NULL},
        {"chroot", {"", (const char *const[]){"userspec", "groups", NULL}}, 1, NULL, true},
        {"unshare", {"SGRw", (const char *const[]){"setuid", "setgid", "root", "wd", "propagation", "setgroups",
                                                   "map-user", "map-group", "map-users", "map-groups", "monotonic",
                                                   "boottime", NULL}}, 0, NULL, true},
        /* -r[DIR] and -w[DIR] take a value only when it is attached */
        {"nsenter", {"tSG", (const char *const[]){"target", "setuid", "setgid", NULL}}, 0, NULL, true},
        {"newgrp", {"", NULL}, 1, NULL, true},
        {"capsh", {"", NULL}, 0, NULL, true},
        {"systemd-run", {"pEuMH", (const char *const[]){"unit", "property", "uid", "gid", "working-directory", "description",
                                                       "slice", "nice", "setenv", "service-type", "machine", "host",
                                                       "on-active", "on-boot", "on-startup", "on-unit-active",
                                                       "on-unit-inactive", "on-calendar", "timer-property", NULL}}, 0, NULL, true},
        /* -n is --nonblock, no value: flock -n LOCK CMD */
        {"flock", {"wEc", (const char *const[]){"timeout", "conflict-exit-code", "command", NULL}}, 1, NULL},
        {"strace", {"oepsEaIbPuXU", NULL}, 0, NULL},
        {"ltrace", {"oepsEaIbPuXUn", NULL}, 0, NULL},
        {"unbuffer", {"", NULL}, 0, NULL},
        {"chronic", {"", NULL}, 0, NULL},
        {"firejail", {"", NULL}, 0, NULL, true},
        {"runuser", {"ugl", (const char *const[]){"user", "group", NULL}}, 0, NULL},
        {"catchsegv", {"", NULL}, 0, NULL},
        {"dbus-launch", {"", NULL}, 0, NULL},
        {"caffeinate", {"", NULL}, 0, NULL},
        {"proxychains", {"f", NULL}, 0, NULL},
        {"proxychains4", {"f", NULL}, 0, NULL},
        {"torsocks", {"", NULL}, 0, NULL},
        /* -d[=permanent] takes a value only when it is attached */
        {"watch", {"nq", (const char *const[]){"interval", "equexit", NULL}}, 0, NULL},
        {"busybox", {"", NULL}, 0, NULL},
        {"rlwrap", {"", NULL}, 0, NULL},
        {"fakeroot", {"", NULL}, 0, NULL},
};

static void h_wrapper(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        const char *p = base_name(a[0]);
        const struct wrapper *w = NULL;
        for (size_t k = 0; k < ARRAY_SIZE(wrappers) && !w; k++)
                if (!strcmp(p, wrappers[k].name))
                        w = &wrappers[k];
        size_t k = skip_opts(a, n, 1, &w->o);
        if (w->stop)
                for (const char *s = w->stop; *s; s++)
                        if (has_short(a, 1, k, *s))
                                return;
        /* -c STRING (flock, runuser, su-like) runs a shell string */
        if (!strcmp(p, "flock") || !strcmp(p, "runuser")) {
                for (size_t j = 1; j < n; j++) {
                        const char *cmd = !strncmp(a[j], "--command=", 10)                                ? a[j] + 10
                                          : (!strcmp(a[j], "-c") || !strcmp(a[j], "--command")) && j + 1 < n ? a[j + 1]
                                                                                                           : NULL;
                        if (!cmd)
                                continue;
                        if (all_unk(cmd))
                                return unknown_code(sc, idx, "shell string that cannot be known");
                        return parse_text(sc, idx, cmd, depth);
                }
        }
        /* capsh ... -- ARGS runs bash with ARGS */
        if (!strcmp(p, "capsh")) {
                size_t j = 1;
                while (j < n && strcmp(a[j], "--"))
                        j++;
                if (j >= n)
                        return;
                struct strvec v = {0};
                strvec_push(&v, xstrdup("bash"));
                for (j++; j < n; j++)
                        strvec_push(&v, xstrdup(a[j]));
                child_and_unwrap(sc, idx, v.v, v.n, depth);
                return strv_free(v.v);
        }
        k += (size_t)w->skip;
        if (k >= n) {
                if (w->shell && no_input(&sc->cmds[idx]))
                        finding(sc, idx, "@interactive-shell", "starts a shell with no command");
                return;
        }
        if (!strcmp(p, "watch")) {
                char *s = render_argv(a + k, SIZE_MAX);
                if (all_unk(s))
                        unknown_code(sc, idx, "watch of a command that cannot be known");
                else
                        parse_text(sc, idx, s, depth);
                free(s);
                return;
        }
        child_and_unwrap(sc, idx, a + k, n - k, depth);
}

static void h_env(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n, k = 1;
        static const char *const lwa[] = {"unset", "chdir", NULL};
        static const struct opts o = {"uCP", lwa};
        for (;;) {
                size_t j = skip_opts(a, n, k, &o);
                for (size_t m = k; m < j; m++)
                        if (!strcmp(a[m], "-S") || !strncmp(a[m], "--split-string", 14) || (a[m][0] == '-' && a[m][1] != '-' && strchr(a[m], 'S'))) {
                                /* -S 'STRING': env splits the string into the command */
                                char *s = render_argv(a + m + 1, SIZE_MAX);
                                if (all_unk(s))
                                        unknown_code(sc, idx, "env -S of a string that cannot be known");
                                else
                                        parse_text(sc, idx, s, depth);
                                free(s);
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
                child_and_unwrap(sc, idx, a + k, n - k, depth);
}

/* a with every occurrence of pat replaced by with; NULL when that would be longer than a
 * shell string may be (find ROOT -exec with a long ROOT and {}{}{}...: the caller then
 * fails closed rather than judge a cut-down command). */
static char *replace_all(const char *a, const char *pat, const char *with)
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

/* What xargs reads: paths beneath find's root or ls's directory when the pipeline starts
 * with one of them (find . | xargs rm: paths in the workspace), else unknown. */
static char *xargs_item(struct scan *sc, size_t idx)
{
        const struct scmd *me = &sc->cmds[idx];
        /* An argv checked at exec time: what xargs runs is checked at its own exec, with
         * the real arguments; refusing here would only refuse the harmless cases. */
        if (me->pipe_id < 0 && me->offset < 0)
                return xstrdup("./" UNK_S);
        for (size_t k = idx; k-- > 0 && me->pipe_id >= 0;) {
                const struct scmd *c = &sc->cmds[k];
                if (c->pipe_id != me->pipe_id || c->stage != 0 || !c->argv.n)
                        continue;
                const char *p = base_name(c->argv.v[0]);
                const char *root = ".";
                if (!strcmp(p, "find")) {
                        for (size_t j = 1; j < c->argv.n; j++)
                                if (c->argv.v[j][0] != '-') {
                                        root = c->argv.v[j];
                                        break;
                                } else if (strcmp(c->argv.v[j], "-H") && strcmp(c->argv.v[j], "-L") && strcmp(c->argv.v[j], "-P"))
                                        break;
                } else if (strcmp(p, "ls"))
                        break;
                return xasprintf("%s/" UNK_S, root);
        }
        return xstrdup(UNK_S);
}

/* xargs CMD ARGS: runs CMD with ARGS plus words read from stdin (unknown). */
static void h_xargs(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        /* --replace[=R], --eof[=E] and --max-lines[=N] take a value only after '=' */
        static const char *const lwa[] = {"arg-file", "delimiter", "max-args", "max-procs", "max-chars",
                                          "process-slot-var", NULL};
        static const struct opts o = {"IaEdLnPs", lwa};
        size_t k = skip_opts(a, n, 1, &o);
        const char *repl = NULL;
        for (size_t j = 1; j < k; j++)
                if (!strcmp(a[j], "-I") && j + 1 < k)
                        repl = a[j + 1];
                else if ((!strncmp(a[j], "-I", 2) || !strncmp(a[j], "-i", 2)) && a[j][2])
                        repl = a[j] + 2;
                else if (!strncmp(a[j], "--replace=", 10))
                        repl = a[j] + 10;
                else if (!strcmp(a[j], "-i") || !strcmp(a[j], "--replace"))
                        repl = "{}";
        _cleanup_free_ char *item = xargs_item(sc, idx);
        struct strvec v = {0};
        if (k >= n)
                strvec_push(&v, xstrdup("echo"));
        for (size_t j = k; j < n; j++) {
                char *w = repl && *repl && strstr(a[j], repl) ? replace_all(a[j], repl, item) : xstrdup(a[j]);
                if (!w) {
                        strv_free(v.v);
                        return finding(sc, idx, "@limit-exceeded", "xargs replaces into too long a command");
                }
                strvec_push(&v, w);
        }
        if (!repl)
                strvec_push(&v, xstrdup(item));
        child_and_unwrap(sc, idx, v.v, v.n, depth);
        strv_free(v.v);
}

static bool find_test(const char *a)
{
        static const char *const not_tests[] = {"-delete", "-depth", "-maxdepth", "-mindepth",
                                                "-xdev", "-mount", "-follow", "-print", "-print0",
                                                "-d", "-noleaf", "-ignore_readdir_race", NULL};
        return a[0] == '-' && !in_list(a, not_tests);
}

/* find ROOTS EXPR: -exec/-execdir/-ok/-okdir run a command on each found path; -delete
 * without a test deletes the whole tree. */
static void h_find(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n, k = 1;
        while (k < n && (!strcmp(a[k], "-H") || !strcmp(a[k], "-L") || !strcmp(a[k], "-P")))
                k++;
        const char *root = k < n && a[k][0] != '-' && a[k][0] != '(' && a[k][0] != '!' ? a[k] : ".";
        while (k < n && a[k][0] != '-' && a[k][0] != '(' && a[k][0] != '!')
                k++;
        char *each = xasprintf("%s/" UNK_S, root);
        bool tests = false;
        for (size_t j = k; j < n; j++) {
                if (!strcmp(a[j], "-exec") || !strcmp(a[j], "-execdir") || !strcmp(a[j], "-ok") || !strcmp(a[j], "-okdir")) {
                        struct strvec v = {0};
                        bool cut = false;
                        for (j++; j < n && strcmp(a[j], ";") && strcmp(a[j], "+"); j++) {
                                char *w = replace_all(a[j], "{}", each);
                                if (!w) {
                                        cut = true;
                                        break;
                                }
                                strvec_push(&v, w);
                        }
                        if (cut)
                                finding(sc, idx, "@limit-exceeded", "find -exec replaces into too long a command");
                        else if (v.n)
                                child_and_unwrap(sc, idx, v.v, v.n, depth);
                        strv_free(v.v);
                        tests = true;
                } else if (!strcmp(a[j], "-delete")) {
                        char *const rf[] = {"rm", "-r", "-f", (char *)root, NULL};
                        char *const f[] = {"rm", "-f", each, NULL};
                        child_and_unwrap(sc, idx, tests ? f : rf, tests ? 3 : 4, depth);
                } else if (find_test(a[j]))
                        tests = true;
        }
        free(each);
}

/* git -c alias.x='!cmd' / -c core.pager=cmd ...: configuration values that are commands. */
static void h_git(struct scan *sc, size_t idx, int depth)
{
        static const char *const cmd_keys[] = {"core.pager", "core.sshcommand", "core.editor",
                                               "core.fsmonitor", "sequence.editor", "diff.external",
                                               "core.hookspath", "credential.helper", "pager.log",
                                               "pager.diff", "pager.show", "gpg.program", NULL};
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        for (size_t k = 1; k + 1 < n && a[k][0] == '-'; k++) {
                if (strcmp(a[k], "-c") && strcmp(a[k], "-C"))
                        continue;
                k++;
                if (strcmp(a[k - 1], "-c"))
                        continue;
                const char *eq = strchr(a[k], '=');
                if (!eq)
                        continue;
                char *key = strndup(a[k], (size_t)(eq - a[k]));
                for (char *p = key; p && *p; p++)
                        *p = (char)tolower((unsigned char)*p);
                const char *v = eq + 1;
                bool alias = key && !strncmp(key, "alias.", 6) && v[0] == '!';
                bool cmd = key && in_list(key, cmd_keys);
                free(key);
                if (has_unk(v) && (alias || cmd))
                        unknown_code(sc, idx, "git configuration runs a command that cannot be known");
                else if (alias || cmd)
                        parse_text(sc, idx, v + (alias ? 1 : 0), depth);
        }
}

/* make -f - / -f /dev/stdin with a here-document: its recipe lines are shell commands. */
static void h_make(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        bool from_stdin = false;
        for (size_t k = 1; k < n; k++)
                if ((!strcmp(a[k], "-f") || !strcmp(a[k], "--file") || !strcmp(a[k], "--makefile")) && k + 1 < n &&
                    (!strcmp(a[k + 1], "-") || !strcmp(a[k + 1], "/dev/stdin")))
                        from_stdin = true;
        if (!from_stdin)
                return;
        char *text;
        enum stdin_kind kind = stdin_of(sc, idx, &text);
        if (kind == IN_DOWNLOAD || kind == IN_DECODED)
                finding(sc, idx, kind == IN_DOWNLOAD ? "@download-exec" : "@obfuscated-exec", "makefile from a pipe");
        for (char *save = NULL, *l = text ? strtok_r(text, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save))
                if (l[0] == '\t')
                        parse_text(sc, idx, l + 1 + strspn(l + 1, "@-+"), depth);
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
        {"Rscript", "r", (const char *const[]){"-e", NULL}, ""},
        {"julia", "julia", (const char *const[]){"-e", "--eval", NULL}, ""},
        {"expect", "expect", (const char *const[]){"-c", NULL}, ""},
        {"osascript", "applescript", (const char *const[]){"-e", NULL}, ""},
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
        if (all_unk(code) || sc->cmds[idx].dl_word)
                unknown_code(sc, idx, "interpreter code that cannot be known");
        scan_code(sc, lang, code, idx, depth);
}

static void h_interp(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        const struct interp *in = find_interp(base_name(a[0]));
        bool code = false;
        for (size_t k = 1; k < n; k++) {
                const char *o = a[k];
                if (in_list(o, in->code_opts) && k + 1 < n) {
                        run_code(sc, idx, in->lang, a[++k], depth);
                        code = true;
                        if (strcmp(in->lang, "perl")) /* perl takes several -e */
                                return;
                        continue;
                }
                /* perl -ne 'code', python -Bc 'code': a cluster ending in the code option */
                if (o[0] == '-' && o[1] != '-' && strlen(o) > 2 && k + 1 < n) {
                        char last[3] = {'-', o[strlen(o) - 1], 0};
                        if (in_list(last, in->code_opts)) {
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
                                unknown_code(sc, idx, "interpreter running a downloaded script");
                        return;
                }
        }
        if (!code)
                code_from_stdin(sc, idx, in->lang, depth);
}

static void h_awk(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        static const char *const lwa[] = {"field-separator", "assign", "file", NULL};
        static const struct opts o = {"Fvf", lwa};
        if (has_short(a, 1, n, 'f'))
                return;
        size_t k = skip_opts(a, n, 1, &o);
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
        if (stdin_of(sc, idx, &text) == IN_TEXT)
                scan_sql(sc, text, idx);
        free(text);
}

/* rsync -e CMD / --rsh=CMD: the remote shell command runs here. */
static void h_rsync(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        for (size_t k = 1; k < n; k++) {
                const char *v = NULL;
                if ((!strcmp(a[k], "-e") || !strcmp(a[k], "--rsh")) && k + 1 < n)
                        v = a[k + 1];
                else if (!strncmp(a[k], "--rsh=", 6))
                        v = a[k] + 6;
                if (v && all_unk(v))
                        unknown_code(sc, idx, "rsync runs a remote shell that cannot be known");
                else if (v)
                        parse_text(sc, idx, v, depth);
        }
}

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
        {"rbash", h_shell}, {"yash", h_shell}, {"posh", h_shell}, {"elvish", h_shell}, {"pwsh", h_shell},
        {"xonsh", h_shell}, {"tclsh", h_shell}, {"wish", h_shell}, {"csh", h_shell}, {"tcsh", h_shell}, {"sash", h_shell}, {"su", h_su},     {"sg", h_sg},     {"rsync", h_rsync},   {"eval", h_eval},
        {"source", h_source}, {".", h_source},   {"env", h_env},        {"xargs", h_xargs},
        {"parallel", h_xargs}, {"find", h_find}, {"git", h_git},        {"make", h_make},
        {"gmake", h_make},  {"awk", h_awk},      {"gawk", h_awk},       {"mawk", h_awk},
        {"nawk", h_awk},    {"psql", h_db},      {"mysql", h_db},       {"mariadb", h_db},
        {"sqlite3", h_db},  {"mongo", h_db},     {"mongosh", h_db},     {"redis-cli", h_db},
        {"cqlsh", h_db},    {"clickhouse-client", h_db}, {"sqlcmd", h_db}, {"ssh", h_ssh_like},
};

void unwrap_argv(struct scan *sc, size_t idx, int depth)
{
        struct scmd *c = &sc->cmds[idx];
        if (!c->argv.n || scan_over_time(sc))
                return;
        if (depth > POL_MAX_DEPTH) {
                finding(sc, idx, "@limit-exceeded", "commands nested too deep");
                return;
        }
        const char *a0 = c->argv.v[0];
        if (has_unk(a0)) {
                unknown_code(sc, idx, "the command name cannot be known before it runs");
                return;
        }
        const char *p = base_name(a0);
        for (size_t k = 0; k < ARRAY_SIZE(handlers); k++)
                if (!strcmp(p, handlers[k].name))
                        return handlers[k].fn(sc, idx, depth);
        for (size_t k = 0; k < ARRAY_SIZE(wrappers); k++)
                if (!strcmp(p, wrappers[k].name))
                        return h_wrapper(sc, idx, depth);
        if (find_interp(p))
                return h_interp(sc, idx, depth);
}

/* ---- for code.c: what an interpreter's code runs ---- */

void code_child(struct scan *sc, size_t parent, char *const *argv, size_t n, int depth)
{
        child_and_unwrap(sc, parent, argv, n, depth);
}

void code_shell(struct scan *sc, size_t parent, const char *s, int depth)
{
        if (all_unk(s))
                unknown_code(sc, parent, "interpreter runs a shell string that cannot be known");
        else
                parse_text(sc, parent, s, depth);
}

void code_finding(struct scan *sc, size_t parent, const char *name, const char *detail)
{
        finding(sc, parent, name, detail);
}
