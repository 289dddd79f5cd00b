/* Programs with their own ways to run commands or write files, and what their models share.
 * This file holds the look-up of a program's model (tool_handler) over the tables of the
 * others, and the models that stand alone: tmux, screen and
 * script, library loads, run-parts, man's pager;
 * then programs' own output options (sort -o, find -fprint ...) and unknown programs that
 * take a command anyway, judged as wrappers.  git is in toolgit.c; editors, sed and gdb,
 * which read commands in a language of their own, in tooledit.c; package runners and
 * scripts (npx, poetry run, bundle exec ...) and docker volumes in toolrun.c; kill, pkill,
 * killall, mv and rsync, which can kill or wipe everything at once, in toolmass.c.  The
 * helpers they all judge with are in toolwork.c. */
#define _GNU_SOURCE
#include "policy/tools.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "base/macros.h"
#include "base/mem.h"
#include "base/str.h"
#include "base/strv.h"

/* ---- terminal multiplexers and session recorders ---- */

static void h_tmux(struct scan *sc, size_t idx, int depth)
{
        static const char *const make[] = {"new-session", "new", "new-window", "neww", "split-window",
                                           "splitw",
                                           "respawn-pane", "respawnp", "respawn-window", "respawnw",
                                           "run-shell", "run", "display-popup", "popup", "pipe-pane", "pipep",
                                           "if-shell", "if", NULL};
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx), k = 1;
        while (k < n && a[k][0] == '-') {
                if (!strcmp(a[k], "-c") && k + 1 < n)
                        return tool_text_at(sc, idx, a[k + 1], depth,
                                            "tmux runs a command that cannot be known");
                k += strchr("LSfT", a[k][1]) && !a[k][2] ? 2 : 1;
        }
        if (k >= n) {
                if (!sc->cmds[idx].stdin_text && sc->cmds[idx].stage == 0 && sc->cmds[idx].pipe_id >= 0)
                        uw_finding(sc, idx, "@interactive-shell", "tmux starts a shell");
                return;
        }
        /* tmux CMD [ARGS] [; CMD ...]: each command of the chain */
        while (k < n) {
                a = argv_of(sc, idx);
                size_t end = k;
                while (end < n && strcmp(a[end], ";") && strcmp(a[end], "\\;"))
                        end++;
                const char *c = a[k];
                size_t j = k + 1;
                while (j < end && a[j][0] == '-' && a[j][1]) {
                        bool val = strchr("cetnsFxylwST", a[j][1]) && !a[j][2];
                        if (!strcmp(c, "send-keys") || !strcmp(c, "send"))
                                val = strchr("tN", a[j][1]) && !a[j][2];
                        j += val ? 2 : 1;
                }
                if (uw_in(c, make) && j < end) {
                        char **w = xcalloc(end - j + 1, sizeof(char *));
                        for (size_t q = j; q < end; q++)
                                w[q - j] = a[q];
                        char *s = render_argv(w, SIZE_MAX);
                        free(w);
                        tool_text_at(sc, idx, s, depth, "tmux runs a command that cannot be known");
                        free(s);
                } else if ((!strcmp(c, "new-session") || !strcmp(c, "new")) && j >= end &&
                           !sc->cmds[idx].stdin_text)
                        uw_finding(sc, idx, "@interactive-shell", "tmux starts a shell");
                else if (!strcmp(c, "send-keys") || !strcmp(c, "send")) { /* keys typed into a shell */
                        char *s = xstrdup("");
                        for (size_t q = j; q < end; q++) {
                                a = argv_of(sc, idx);
                                bool enter = !strcmp(a[q], "Enter") || !strcmp(a[q], "C-m") ||
                                             !strcmp(a[q], "KPEnter") || !strcmp(a[q], "C-j");
                                char *t = xasprintf("%s%s", s, enter ? "\n" : a[q]);
                                free(s);
                                s = t;
                        }
                        tool_text_at(sc, idx, s, depth, "tmux types a command that cannot be known");
                        free(s);
                }
                k = end + 1;
        }
}

static void h_screen(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx), k = 1;
        /* listing, wiping dead sessions or the version: no shell starts */
        for (size_t j = 1; j < n && a[j][0] == '-'; j++)
                if (!strcmp(a[j], "-ls") || !strcmp(a[j], "-list") || !strcmp(a[j], "-wipe") ||
                    !strcmp(a[j], "-v") || !strcmp(a[j], "--version") || !strcmp(a[j], "--help"))
                        return;
        for (; k < n && a[k][0] == '-'; k++) {
                a = argv_of(sc, idx);
                if (!strcmp(a[k], "-Logfile") && k + 1 < n)
                        tool_write_at(sc, idx, a[++k], depth);
                else if (!strcmp(a[k], "-X") && k + 1 < n) {
                        if (!strcmp(a[k + 1], "stuff") && k + 2 < n) {
                                char *t = xstrdup(a[k + 2]);
                                for (char *p = t; (p = strstr(p, "\\n")); p += 2)
                                        p[0] = ' ', p[1] = '\n';
                                tool_text_at(sc, idx, t, depth,
                                             "screen types a command that cannot be known");
                                free(t);
                        } else if (!strcmp(a[k + 1], "exec") && k + 2 < n)
                                tool_run_words(sc, idx, k + 2, depth);
                        return;
                } else if (strchr("cehpSstTx", a[k][1]) && !a[k][2] && k + 1 < n)
                        k++;
        }
        if (k < n)
                tool_run_words(sc, idx, k, depth);
        else if (!sc->cmds[idx].stdin_text && sc->cmds[idx].stage == 0 && sc->cmds[idx].pipe_id >= 0)
                uw_finding(sc, idx, "@interactive-shell", "screen starts a shell");
}

/* script [-c CMD] [FILE]: CMD runs in a shell (without it, an interactive one); FILE is
 * written. */
static void h_script(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        const char *cmd = NULL;
        size_t k = 1;
        for (; k < n; k++) {
                a = argv_of(sc, idx);
                if ((!strcmp(a[k], "-c") || !strcmp(a[k], "--command")) && k + 1 < n)
                        cmd = a[++k];
                else if (!strncmp(a[k], "--command=", 10))
                        cmd = a[k] + 10;
                else if (a[k][0] == '-' && a[k][1] && a[k][1] != '-') {
                        /* a cluster (-qc CMD, -qfcCMD): its first option with a value ends it */
                        for (const char *c = a[k] + 1; *c; c++) {
                                if (!strchr("cEIOBTmo", *c))
                                        continue;
                                const char *v = c[1] ? c + 1 : k + 1 < n ? a[++k] : NULL;
                                if (*c == 'c')
                                        cmd = v;
                                break;
                        }
                } else if (a[k][0] != '-')
                        tool_write_at(sc, idx, a[k], depth);
        }
        a = argv_of(sc, idx);
        if (cmd)
                tool_text_at(sc, idx, cmd, depth, "script runs a command that cannot be known");
        else if (!sc->cmds[idx].stdin_text && sc->cmds[idx].stage == 0 && sc->cmds[idx].pipe_id >= 0)
                uw_finding(sc, idx, "@interactive-shell", "script starts a shell");
}

/* ---- libraries loaded into a program ---- */

/* A library from a system library directory or the workspace is a build's own; one from
 * anywhere else (a temporary or placeholder path, another user's files) is refused. */
void tool_lib_load(struct scan *sc, size_t idx, const char *lib)
{
        if (has_unk(lib))
                return uw_finding(sc, idx, "@unknown-command", "loads a library that cannot be known");
        char *abs = uw_path(sc, idx, lib);
        if (!abs)
                return;
        static const char *const ok[] = {"/usr/lib",       "/lib",       "/usr/lib64", "/lib64",
                                         "/usr/local/lib", "/nix/store", "/opt",       "/usr/libexec"};
        bool fine = path_is_within(abs, sc->ctx->workspace);
        for (size_t k = 0; k < ARRAY_SIZE(ok) && !fine; k++)
                fine = path_is_within(abs, ok[k]);
        if (!fine)
                uw_finding(sc, idx, "@library-load", abs);
        free(abs);
}

static void h_libs(struct scan *sc, size_t idx, int depth)
{
        (void)depth;
        size_t n = argc_of(sc, idx);
        const char *p = base_name(argv_of(sc, idx)[0]);
        for (size_t k = 1; k < n; k++) {
                char **a = argv_of(sc, idx);
                const char *o = a[k], *lib = NULL;
                if (!strcmp(p, "curl") && !strcmp(o, "--engine") && k + 1 < n && strcmp(a[k + 1], "list"))
                        lib = a[k + 1];
                else if (!strcmp(p, "openssl") && (!strcmp(o, "-engine") || !strcmp(o, "-provider")) &&
                         k + 1 < n)
                        lib = a[k + 1];
                else if (!strcmp(p, "ssh-keygen") && (!strcmp(o, "-D")) && k + 1 < n)
                        lib = a[k + 1];
                else if ((!strcmp(p, "mysql") || !strcmp(p, "mariadb")) && !strncmp(o, "--default-auth=", 15))
                        lib = o + 15;
                else if ((!strcmp(p, "mysql") || !strcmp(p, "mariadb")) && !strncmp(o, "--plugin-dir=", 13))
                        lib = o + 13;
                else if ((!strcmp(p, "mysql") || !strcmp(p, "mariadb")) &&
                         (!strcmp(o, "--default-auth") || !strcmp(o, "--plugin-dir")) && k + 1 < n)
                        lib = a[k + 1];
                else if (!strcmp(p, "enable") && !strcmp(o, "-f") && k + 1 < n)
                        lib = a[k + 1];
                else if (!strcmp(p, "ffmpeg") && strstr(o, "ladspa=file="))
                        lib = strstr(o, "ladspa=file=") + 12;
                if (lib) {
                        char *l = strndup(lib, strcspn(lib, ":,"));
                        if (l)
                                tool_lib_load(sc, idx, l);
                        free(l);
                }
        }
}

/* ---- killing processes picked from the machine's process list by a daemon's name ---- */

static void h_run_parts(struct scan *sc, size_t idx, int depth)
{
        (void)depth;
        char **a = argv_of(sc, idx);
        for (size_t k = 1; k < argc_of(sc, idx); k++)
                if (!strcmp(a[k], "--test") || !strcmp(a[k], "--list"))
                        return;
        uw_finding(sc, idx, "@unknown-command", "run-parts runs every program in a directory");
}

/* man -P PAGER / --pager=PAGER, journalctl etc. take their pager from PAGER (parse.c). */
static void h_man(struct scan *sc, size_t idx, int depth)
{
        size_t n = argc_of(sc, idx);
        for (size_t k = 1; k < n; k++) {
                char **a = argv_of(sc, idx);
                const char *v = NULL;
                if ((!strcmp(a[k], "-P") || !strcmp(a[k], "--pager") || !strcmp(a[k], "-H") ||
                     !strcmp(a[k], "--html")) &&
                    k + 1 < n)
                        v = a[++k];
                else if (!strncmp(a[k], "--pager=", 8) || !strncmp(a[k], "--html=", 7))
                        v = strchr(a[k], '=') + 1;
                if (v)
                        tool_text_at(sc, idx, v, depth, "man runs a pager that cannot be known");
        }
}

static const struct tool tools[] = {
        {"tmux", h_tmux}, {"screen", h_screen}, {"script", h_script}, {"curl", h_libs}, {"openssl", h_libs},
        {"ssh-keygen", h_libs}, {"enable", h_libs}, {"ffmpeg", h_libs},
        {"run-parts", h_run_parts}, {"man", h_man}, {NULL, NULL},
};

/* The tables of toolgit.c, tooledit.c, this file, toolrun.c and toolmass.c: no program is
 * named in two of them, so the order of the look-up decides nothing. */
static const struct tool *const models[] = {tool_git_models, tool_edit_models, tools, tool_run_models,
                                            tool_mass_models};

handler_fn *tool_handler(const char *prog)
{
        for (size_t m = 0; m < ARRAY_SIZE(models); m++)
                for (const struct tool *t = models[m]; t->name; t++)
                        if (!strcmp(prog, t->name))
                                return t->fn;
        if (!strcmp(prog, "mysql") || !strcmp(prog, "mariadb"))
                return h_libs;
        return NULL;
}

/* ---- programs' own output options ---- */

struct outopt {
        const char *prog;
        const char *const *opts; /* options whose value is a file it writes */
        int operand;             /* the operand it writes (1-based), -1 the last, 0 none */
};

static const struct outopt outopts[] = {
        {"sort", LW("-o", "--output"), 0},
        {"uniq", LW("\x01"), 2},
        {"iconv", LW("-o", "--output"), 0},
        {"shuf", LW("-o", "--output"), 0},
        {"openssl", LW("-out", "-keyout"), 0},
        {"gcc", LW("-o"), 0}, {"cc", LW("-o"), 0}, {"g++", LW("-o"), 0}, {"c++", LW("-o"), 0},
        {"clang", LW("-o"), 0}, {"clang++", LW("-o"), 0}, {"ld", LW("-o"), 0}, {"as", LW("-o"), 0},
        {"tcc", LW("-o"), 0}, {"rustc", LW("-o"), 0}, {"go", LW("-o"), 0}, {"gfortran", LW("-o"), 0},
        {"tsc", LW("--outFile", "--outDir", "--out"), 0},
        {"pandoc", LW("-o", "--output"), 0},
        {"gtester", LW("-o"), 0},
        {"nmap", LW("-oN", "-oX", "-oG", "-oA", "-oS"), 0},
        {"mypy", LW("--junit-xml", "--html-report", "--txt-report", "--xml-report", "--linecount-report"), 0},
        {"exiftool", LW("-o", "-W", "-w"), 0},
        {"wget", LW("-o", "--output-file", "-a", "--append-output"), 0},
        {"curl", LW("--trace", "--trace-ascii", "-D", "--dump-header", "-c", "--cookie-jar", "--libcurl",
                    "--stderr"), 0},
        {"strace", LW("-o", "--output"), 0},
        {"ltrace", LW("-o", "--output"), 0},
        {"rlwrap", LW("-l", "--logfile"), 0},
        {"tcpdump", LW("-w"), 0},
        {"dmidecode", LW("--dump-bin"), 0},
        {"check_log", LW("-O"), 0},
        {"logrotate", LW("-l", "--log", "-s", "--state"), 0},
        {"iptables-save", LW("-f", "--file"), 0},
        {"ip6tables-save", LW("-f", "--file"), 0},
        {"xxd", LW("\x01"), 2},
        {"csplit", LW("-f", "--prefix"), 0},
        {"gpg", LW("-o", "--output"), 0},
        {"lwp-download", LW("\x01"), 2},
        {"ffmpeg", LW("\x01"), -1},
        {"convert", LW("\x01"), -1},
        {"magick", LW("\x01"), -1},
        {"cpio", LW("-F", "--file", "-O"), 0},
        {"base64", LW("-o", "--output"), 0},
        {"zip", LW("\x01"), 1},
        {"sqlite3", LW("\x01"), 0},
        {"varnishncsa", LW("-w"), 0},
        {"sponge", LW("\x01"), 1},
        {"dd", LW("\x01"), 0},
        {"dos2unix", LW("-n", "--newfile"), 0},
        {"unix2dos", LW("-n", "--newfile"), 0},
        {"mac2unix", LW("-n", "--newfile"), 0},
        {"tar", LW("-C", "--directory"), 0},
        {"unzip", LW("-d"), 0},
        {"7z", LW("\x01"), 0},
};

static bool opt_is(const char *a, const char *o, const char **attached)
{
        size_t l = strlen(o);
        *attached = NULL;
        if (!strcmp(a, o))
                return true;
        if (!strncmp(a, o, l) && a[l] == '=') {
                *attached = a + l + 1;
                return true;
        }
        /* -oFILE, -oG=FILE (nmap) */
        if (o[0] == '-' && o[1] != '-' && !strncmp(a, o, l) && a[l] && strlen(o) <= 3) {
                *attached = a + l + (a[l] == '=');
                return true;
        }
        return false;
}

void tool_outputs(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        if (!n || a[0][0] == '@')
                return;
        const char *p = base_name(a[0]);
        const struct outopt *t = NULL;
        for (size_t k = 0; k < ARRAY_SIZE(outopts) && !t; k++)
                if (!strcmp(outopts[k].prog, p))
                        t = &outopts[k];
        if (!t)
                return;
        /* the tar/unzip/7z destination only when it extracts */
        bool extract = !strcmp(p, "unzip") || !strcmp(p, "7z");
        if (!strcmp(p, "tar"))
                for (size_t k = 1; k < n; k++)
                        extract |= (a[k][0] != '-' && k == 1 && strchr(a[k], 'x')) ||
                                   (a[k][0] == '-' && a[k][1] != '-' && strchr(a[k], 'x')) ||
                                   !strcmp(a[k], "--extract") || !strcmp(a[k], "--get");
        if ((!strcmp(p, "tar") || !strcmp(p, "unzip")) && !extract)
                return;
        struct strvec out = {0};
        size_t operand = 0;
        const char *last = NULL;
        for (size_t k = 1; k < n; k++) {
                const char *w = a[k], *att;
                bool hit = false;
                for (const char *const *o = t->opts; *o && !hit; o++)
                        if ((*o)[0] != '\x01' && opt_is(w, *o, &att)) {
                                hit = true;
                                if (att && *att)
                                        strvec_push(&out, xstrdup(att));
                                else if (k + 1 < n) {
                                        /* dos2unix -n IN OUT: the second is written */
                                        if (!strcmp(*o, "-n") || !strcmp(*o, "--newfile"))
                                                k++;
                                        if (k + 1 < n)
                                                strvec_push(&out, xstrdup(a[++k]));
                                }
                        }
                if (hit)
                        continue;
                if (!strcmp(p, "dd") && !strncmp(w, "of=", 3))
                        strvec_push(&out, xstrdup(w + 3));
                else if (!strcmp(p, "7z") && !strncmp(w, "-o", 2) && w[2])
                        strvec_push(&out, xstrdup(w + 2));
                else if (!strcmp(p, "exiftool") &&
                         (!strncasecmp(w, "-filename=", 10) || !strncasecmp(w, "-directory=", 11)))
                        strvec_push(&out, xstrdup(strchr(w, '=') + 1));
                else if (!strcmp(p, "sqlite3") && (strstr(w, ".output ") || strstr(w, ".once ") ||
                                                   strstr(w, ".save ") || strstr(w, ".backup "))) {
                        const char *f = strchr(strstr(w, "."), ' ') + 1;
                        strvec_push(&out, strndup(f, strcspn(f, " \n;")));
                } else if (w[0] != '-' || !w[1]) {
                        operand++;
                        last = w;
                        if (t->operand > 0 && (int)operand == t->operand)
                                strvec_push(&out, xstrdup(w));
                }
        }
        if (t->operand < 0 && last && operand > 1)
                strvec_push(&out, xstrdup(last));
        for (size_t k = 0; k < out.n; k++) {
                bool dir = !strcmp(p, "tar") || !strcmp(p, "unzip") || !strcmp(p, "7z") || !strcmp(p, "tsc");
                char *w = dir ? xasprintf("%s/" UNK_S, out.v[k]) : xstrdup(out.v[k]);
                if (strcmp(w, "-") && strcmp(w, "/dev/stdout") && strcmp(w, "/dev/null"))
                        tool_write_at(sc, idx, w, depth);
                free(w);
        }
        strv_free(out.v);
}

/* ---- unknown programs that take a command ---- */

/* Programs an argument list can hand a command to; a word naming one is the start of a
 * command a program not modelled here may run (frobnicate --retry 3 rm -rf ~). */
static const char *const runnable[] = {
        "rm", "rmdir", "unlink", "shred", "srm", "wipe", "dd", "mkfs", "fdisk", "parted", "wipefs", "chmod",
        "chown", "chgrp", "chattr", "mv", "cp", "ln", "install", "tee", "truncate", "sh", "bash", "dash",
        "zsh", "ksh", "fish", "csh", "tcsh", "su", "sudo", "doas", "python", "python3", "perl", "ruby",
        "node", "php", "lua", "curl", "wget", "nc", "ncat", "netcat", "socat", "git", "kill", "pkill",
        "killall", "shutdown", "reboot", "halt", "poweroff", "systemctl", "service", "crontab", "iptables",
        "nft", "ufw", "mount", "umount", "find", "xargs", "env", "eval", "docker", "podman", "kubectl",
        "helm", "terraform", "aws", "gcloud", "az", "psql", "mysql", "sqlite3", "redis-cli", "mongo",
        "mongosh", "dropdb", "scp", "rsync", "useradd", "userdel", "passwd", "usermod", "visudo", "setcap",
        "insmod", "rmmod", "modprobe", "sysctl", "chroot", "/bin/sh", "/bin/bash", "/bin/rm", NULL};

/* Programs whose arguments are text, patterns, names or packages, never a command (the
 * file operands of cp, mv and ln included: `ln -s /usr/bin/passwd x` makes a link, it runs
 * no passwd). */
static const char *const plain[] = {
        "cp", "mv", "ln", "link", "echo", "printf", "which", "type", "whereis", "man", "info", "help", "apropos", "whatis", "grep",
        "egrep", "fgrep", "rg", "ag", "ack", "cut", "sort", "uniq", "wc", "head", "tail", "cat", "less",
        "more", "ls", "test", "[", "[[", "file", "stat", "du", "df", "basename", "dirname", "realpath",
        "readlink", "jq", "yq", "diff", "cmp", "comm", "tr", "fold", "fmt", "column", "ps", "pgrep", "pidof",
        "lsof", "apt", "apt-get", "apt-cache", "dpkg", "yum", "dnf", "brew", "pacman", "snap", "pip", "pip3",
        "gem", "go", "rustup", "logger", "notify-send", "figlet", "cowsay", "tldr", "complete", "compgen",
        "history", "hash", "declare", "local", "export", "readonly", "alias", "unalias", "unset", "set",
        "read", "mapfile", "printenv", "id", "whoami", "groups", "getent", "date", "touch", "mkdir", "gh",
        "glab", "hub", "tar", "zip", "unzip", "gzip", "md5sum", "sha256sum", "sha1sum", "b2sum", "xxd", "od",
        "hexdump", "strings", "nl", "expand", "paste", "join", "seq", "yes", "sleep", "true", "false", ":",
        "cd", "pushd", "popd", "dirs", "wait", "jobs", "fg", "bg", "disown", "exit", "return", "break",
        "continue", "shift", "getopts", "let", "ulimit", "umask", "shopt", "bind", "caller", "times", "trap",
        "kill", "[", "clear", "tput", "stty", "reset", "column", "look", "spell", "aspell", "locate",
        "updatedb", "hostname", "uname", "arch", "nproc", "free", "uptime", "w", "who", "last", "dmesg",
        "journalctl", "lsblk", "blkid", "lscpu", "lspci", "lsusb", "ip", "ifconfig", "ss", "netstat", "ping",
        "traceroute", "dig", "nslookup", "host", "systemd-analyze", "npm", "pnpm", "yarn", "cargo", "mvn",
        "gradle", "dotnet", "composer", "pytest", "tox", "nox", "ruff", "black", "flake8", "pylint", "mypy",
        "eslint", "prettier", "tsc", "jest", "vitest", "mocha", "make", "cmake", "ninja", "meson", "bazel",
        "gcc", "cc", "g++", "clang", "clang++", "rustc", "javac", "java", "kotlin", "scala", "swift", "zig",
        "nim", "crystal", "ghc", "stack", "cabal", "elixir", "mix", "erl", "pio", "helm", "kubectl", "docker",
        "podman", "terraform", "ansible", "ansible-playbook", "vagrant", NULL};

static bool runnable_word(const char *w)
{
        return uw_in(w, runnable) || uw_in(base_name(w), runnable);
}

void tool_generic(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        const char *p = base_name(a[0]);
        if (uw_in(p, plain) || a[0][0] == '@')
                return;
        static const char *const cmd_opts[] = {"-c", "--command", "--cmd", "--exec", "--execute", "--run",
                                               "--shell-command", "--exec-command", "--command-line",
                                               "--hook", "--on-change", "--on-success", "--on-failure",
                                               "--pre-command", "--post-command", "--eval", NULL};
        for (size_t k = 1; k < n; k++) {
                a = argv_of(sc, idx);
                const char *w = a[k], *v = NULL;
                if (uw_in(w, cmd_opts) && k + 1 < n)
                        v = a[k + 1];
                else if (w[0] == '-' && w[1] == '-' && strchr(w, '=')) {
                        char *o = strndup(w, (size_t)(strchr(w, '=') - w));
                        if (o && uw_in(o, cmd_opts))
                                v = strchr(w, '=') + 1;
                        free(o);
                }
                if (v) {
                        char first[64];
                        snprintf(first, sizeof(first), "%.*s", (int)strcspn(v, " \t;|&"), v);
                        if (runnable_word(first) || strstr(v, "&&") || strstr(v, "; "))
                                return tool_text_at(sc, idx, v, depth, "runs a command that cannot be known");
                }
                if (w[0] != '-' && runnable_word(w))
                        return tool_run_words(sc, idx, k, depth);
                if (!strcmp(w, "--") && k + 1 < n && runnable_word(a[k + 1]))
                        return tool_run_words(sc, idx, k + 1, depth);
        }
}
