/* Harm to everything at once by other means than rm -r: killing every process of the
 * user, and wiping the workspace by sync or move.  Each is judged as the command it
 * amounts to, and the rules for that command decide (docs/POLICY.md, "What the engine
 * sees").
 *
 * Killing processes: kill, pkill and killall, and the look-ups whose output kill is given
 * (pgrep, ps).  Two harms: killing a system daemon found by its name, and killing every
 * process the user owns.  For an unprivileged user, kill -1 is exactly the second: it
 * signals every process the user may signal.  So pkill -u USER with no pattern, killall
 * -u USER with no name, pkill -v (everything but a pattern), a pattern that matches every
 * name, kill -9 -1 1234 (where -1 is not the last word) and kill $(pgrep -u USER) are
 * judged as the `kill -1` they amount to; in hook mode no sandbox contains it.  A pattern
 * or name (pkill -u me node), a parent, session, terminal or process group, or the newest
 * or oldest process narrows the set: allowed.
 *
 * Wiping by sync or move: what leaves the workspace by a move is gone from it, and a sync
 * with --delete removes from its destination whatever the source lacks.  So each is judged
 * as the deletion it amounts to, of the paths known to lie in the workspace:
 *   mv SRC... DEST, DEST outside the workspace:  rm -rf SRC...  (mv * ~/trash/)
 *   rsync --delete SRC DEST:                      rm -rf DEST    (rsync -a --delete empty/ ./)
 *   rsync --remove-source-files SRC... DEST:      rm -rf SRC...
 * Moving a file or a directory out (mv big.iso ~/Downloads/) and mirroring into a
 * subdirectory (rsync -a --delete src/ dst/) stay allowed, as their rm -rf would be. */
#define _GNU_SOURCE
#include "policy/tools.h"

#include <ctype.h>
#include <string.h>

#include "base/mem.h"
#include "base/strv.h"

/* ---- the daemons ---- */

static const char *const daemons[] = {
        "sshd", "init", "systemd", "dockerd", "containerd", "containerd-shim", "docker-proxy",
        "docker-containerd-shim", "runc", "kubelet", "kube-apiserver", "kube-proxy", "etcd", "NetworkManager",
        "wpa_supplicant", "cron", "crond", "rsyslogd", "syslogd", "systemd-journald", "journald",
        "dbus-daemon", "dbus-broker", "Xorg", "Xwayland", "sssd", "gdm", "gdm3", "lightdm", "sddm", "cupsd",
        "bluetoothd", "avahi-daemon", "ntpd", "chronyd", "firewalld", "polkitd", "udevd", "systemd-udevd",
        "snapd", "agetty", "auditd", "atd", "nginx", "apache2", "httpd", "mysqld", "mariadbd", "postgres",
        "postmaster", "redis-server", "mongod", "memcached", "ModemManager", "accounts-daemon", "gnome-shell",
        "plasmashell", "sshd:", "systemd-logind", "systemd-networkd", "systemd-resolved", "named", "dnsmasq",
        "haproxy", "php-fpm", "supervisord", "rabbitmq-server", "elasticsearch", "zookeeper", "kafka", NULL};

static bool names_daemon(const char *w)
{
        char tok[64];
        for (const char *s = w; *s;) {
                size_t l = 0;
                while (s[l] && (isalnum((unsigned char)s[l]) || s[l] == '-' || s[l] == '_'))
                        l++;
                if (l && l < sizeof(tok)) {
                        memcpy(tok, s, l);
                        tok[l] = 0;
                        if (uw_in(tok, daemons))
                                return true;
                }
                s += l ? l : 1;
        }
        return false;
}

/* ---- reading pgrep, pkill and killall ---- */

/* What a pgrep-like command line selects. */
struct procsel {
        bool user;     /* by owner: -u -U --euid --uid --user */
        bool narrow;   /* by parent, session, terminal, group, pid file, cgroup, newest/oldest */
        bool invert;   /* -v: every process but those matched */
        bool all_pat;  /* a pattern or name that matches every name (., .*, "") */
        size_t nnames; /* patterns or names */
};

static const char *const signals[] = {
        "HUP",  "INT",  "QUIT", "ILL",    "TRAP",   "ABRT",  "BUS",  "FPE",  "KILL", "USR1", "SEGV",
        "USR2", "PIPE", "ALRM", "TERM",   "STKFLT", "CHLD",  "CONT", "STOP", "TSTP", "TTIN", "TTOU",
        "URG",  "XCPU", "XFSZ", "VTALRM", "PROF",   "WINCH", "IO",   "PWR",  "SYS",  "IOT",  NULL};

/* -9, -KILL, -SIGKILL, -s9 ... : a signal given as an option. */
static bool signal_opt(const char *w)
{
        if (w[0] != '-' || !w[1])
                return false;
        const char *s = w + 1;
        if (strspn(s, "0123456789") == strlen(s))
                return true;
        if (!strncmp(s, "SIG", 3))
                s += 3;
        return uw_in(s, signals);
}

static bool everything(const char *pat)
{
        static const char *const all[] = {"", ".", ".*", ".+", "^", "$", "^.*", ".*$", "^.*$", "*", NULL};
        return uw_in(pat, all);
}

/* The first l bytes of w are one of list. */
static bool in_n(const char *w, size_t l, const char *const *list)
{
        for (; *list; list++)
                if (strlen(*list) == l && !strncmp(w, *list, l))
                        return true;
        return false;
}

/* killall (psmisc) when killall, else pgrep/pkill (procps). */
static void read_sel(char **a, size_t n, bool killall, struct procsel *s)
{
        const char *with = killall ? "usoyZn" : "dgGPstuUFqr";
        static const char *const long_with[] = {"--user",    "--signal", "--older-than", "--younger-than",
                                                "--context", "--ns",     "--delimiter",  "--pgroup",
                                                "--group",   "--parent", "--session",    "--terminal",
                                                "--euid",    "--uid",    "--pidfile",    "--queue",
                                                "--nslist",  "--cgroup", "--runstates",  "--env",
                                                NULL};
        static const char *const long_narrow[] = {"--pgroup",  "--parent",    "--session", "--terminal",
                                                  "--pidfile", "--ns",        "--cgroup",  "--newest",
                                                  "--oldest",  "--runstates", "--env",     NULL};
        static const char *const long_user[] = {"--euid", "--uid", "--user", NULL};
        bool opts = true;
        for (size_t k = 1; k < n; k++) {
                const char *w = a[k];
                if (!opts || w[0] != '-' || !w[1]) {
                        s->nnames++;
                        s->all_pat |= everything(w);
                        continue;
                }
                if (!strcmp(w, "--")) {
                        opts = false;
                        continue;
                }
                if (w[1] == '-') {
                        const char *eq = strchr(w, '=');
                        size_t l = eq ? (size_t)(eq - w) : strlen(w);
                        s->user |= in_n(w, l, long_user);
                        s->invert |= !strcmp(w, "--inverse");
                        s->narrow |= in_n(w, l, long_narrow);
                        if (!eq && uw_in(w, long_with))
                                k++;
                        continue;
                }
                if (signal_opt(w) &&
                    (killall || strspn(w + 1, "0123456789") == strlen(w + 1) || isupper((unsigned char)w[1])))
                        continue;
                for (const char *c = w + 1; *c; c++) {
                        s->user |= *c == 'u' || (*c == 'U' && !killall);
                        s->invert |= *c == 'v' && !killall;
                        s->narrow |= !killall && strchr("gPstFnor", *c);
                        if (strchr(with, *c)) {
                                if (!c[1])
                                        k++;
                                break;
                        }
                }
        }
}

/* pkill/killall whose selection is every process the user may signal. */
static bool kills_everything(char **a, size_t n)
{
        const char *p = base_name(a[0]);
        bool killall = !strcmp(p, "killall");
        struct procsel s = {0};
        read_sel(a, n, killall, &s);
        if (s.narrow)
                return false;
        if (s.invert || s.all_pat)
                return true;
        return s.user && !s.nnames;
}

/* kill's pids (after -s SIG, -n NUM, -SIG, --): -1 anywhere but alone.  kill -0 only
 * checks that processes exist. */
static bool kill_minus_one(char **a, size_t n)
{
        size_t k = 1;
        if (k < n && (!strcmp(a[k], "-l") || !strcmp(a[k], "-L")))
                return false;
        if (k + 1 < n && (!strcmp(a[k], "-s") || !strcmp(a[k], "-n"))) {
                if (!strcmp(a[k + 1], "0"))
                        return false;
                k += 2;
        } else if (k + 1 < n && a[k][0] == '-' && a[k][1] && strcmp(a[k], "--")) {
                if (!strcmp(a[k], "-0") || !strcmp(a[k], "-s0") || !strcmp(a[k], "-n0"))
                        return false;
                k++;
        }
        if (k < n && !strcmp(a[k], "--"))
                k++;
        if (n == 2 && !strcmp(a[1], "-1"))
                return false; /* kill -1 itself: the rule names it */
        for (; k < n; k++)
                if (!strcmp(a[k], "-1"))
                        return true;
        return false;
}

/* ---- what the input looks up ---- */

/* A cluster of ps's options that lists every process: -e or -A with others (-eo, -eF,
 * -Af), or BSD's a and x together (axo, auxww). */
static bool ps_every_cluster(const char *w)
{
        if (w[0] == '-' && w[1] && w[1] != '-')
                return strspn(w + 1, "eAfFlLjHMoywZcT") == strlen(w + 1) && strpbrk(w + 1, "eA");
        return strspn(w, "auxwfjlvcseo") == strlen(w) && strchr(w, 'a') && strchr(w, 'x');
}

/* pgrep selecting every process of a user, or ps listing them with nothing in the input
 * that picks among its lines. */
static bool looks_up_everything(struct scan *sc)
{
        static const char *const filters[] = {"grep", "egrep", "fgrep",   "rg",     "ag",
                                              "awk",  "gawk",  "mawk",    "sed",    "head",
                                              "tail", "perl",  "python3", "python", NULL};
        bool ps_all = false, filtered = false;
        for (size_t k = 0; k < sc->n; k++) {
                const struct scmd *c = &sc->cmds[k];
                if (!c->argv.n || c->argv.v[0][0] == '@')
                        continue;
                const char *p = base_name(c->argv.v[0]);
                filtered |= uw_in(p, filters);
                if (!strcmp(p, "pgrep")) {
                        struct procsel s = {0};
                        read_sel(c->argv.v, c->argv.n, false, &s);
                        if (!s.narrow && (s.invert || s.all_pat || (s.user && !s.nnames)))
                                return true;
                }
                for (size_t j = 1; !strcmp(p, "ps") && j < c->argv.n; j++) {
                        const char *w = c->argv.v[j];
                        ps_all |= !strcmp(w, "-e") || !strcmp(w, "-A") || !strcmp(w, "-u") ||
                                  !strcmp(w, "-U") || !strncmp(w, "--user", 6) || !strcmp(w, "aux") ||
                                  !strcmp(w, "ax") || !strcmp(w, "-ax") || !strcmp(w, "-aux") ||
                                  !strcmp(w, "-ef") || ps_every_cluster(w);
                }
        }
        return ps_all && !filtered;
}

static bool looks_up_daemon(struct scan *sc)
{
        bool lookup = false, daemon = false;
        for (size_t k = 0; k < sc->n && !(lookup && daemon); k++) {
                const struct scmd *c = &sc->cmds[k];
                if (!c->argv.n || c->argv.v[0][0] == '@')
                        continue;
                const char *p = base_name(c->argv.v[0]);
                lookup |= !strcmp(p, "ps") || !strcmp(p, "pgrep") || !strcmp(p, "pidof") ||
                          !strcmp(p, "pstree") || !strcmp(p, "lsof") || !strcmp(p, "top");
                for (size_t j = 1; j < c->argv.n && !daemon; j++)
                        daemon |= names_daemon(c->argv.v[j]);
        }
        return lookup && daemon;
}

static void kill_all(struct scan *sc, size_t idx, int depth)
{
        char *const all[] = {"kill", "-1", NULL};
        uw_run(sc, idx, all, 2, depth);
}

/* kill, pkill, killall. */
static void h_kill(struct scan *sc, size_t idx, int depth)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        bool kill = !strcmp(base_name(a[0]), "kill");
        if (kill ? kill_minus_one(a, n) : kills_everything(a, n))
                return kill_all(sc, idx, depth);
        bool unknown = false;
        for (size_t k = 1; k < n; k++)
                unknown |= has_unk(a[k]);
        if (!unknown)
                return;
        /* kill $pid where the PIDs come from a look at every process: a daemon's name picks
         * them (as pkill of the daemon), or nothing does (as kill -1) */
        if (looks_up_daemon(sc))
                uw_finding(sc, idx, "@kill-daemon", "kills processes found by a system daemon's name");
        else if (kill && looks_up_everything(sc))
                kill_all(sc, idx, depth);
}

/* ---- wiping by sync or move ---- */

/* Where path p lies, as command idx sees it: 1 inside the workspace, 0 outside, -1 unknown. */
static int in_workspace(struct scan *sc, size_t idx, const char *p)
{
        const char *ws = sc->ctx->workspace;
        if (!ws || has_unk(p))
                return -1;
        char *abs = uw_path(sc, idx, p);
        if (!abs)
                return -1;
        size_t l = strlen(ws);
        while (l > 1 && ws[l - 1] == '/')
                l--;
        bool in = !strncmp(abs, ws, l) && (abs[l] == 0 || abs[l] == '/');
        free(abs);
        return in;
}

/* Command idx amounts to rm -rf of those of the n paths w known to lie in the workspace
 * (a path that cannot be known, or one elsewhere, loses nothing of it). */
static void as_rm(struct scan *sc, size_t idx, char **w, size_t n, int depth)
{
        struct strvec v = {0};
        strvec_push(&v, xstrdup("rm"));
        strvec_push(&v, xstrdup("-rf"));
        strvec_push(&v, xstrdup("--"));
        for (size_t k = 0; k < n; k++)
                if (in_workspace(sc, idx, w[k]) == 1)
                        strvec_push(&v, xstrdup(w[k]));
        if (v.n > 3)
                uw_run(sc, idx, v.v, v.n, depth);
        strv_free(v.v);
}

/* The operands of argv a[1..n) after options (values of the with-arg options skipped):
 * their indices in ops, their count returned; *target the value of -t/--target-directory. */
static size_t operands(char **a, size_t n, const char *with, const char *const *long_with, size_t *ops,
                       const char **target)
{
        size_t m = 0;
        bool opts = true;
        for (size_t k = 1; k < n; k++) {
                const char *w = a[k];
                if (!opts || w[0] != '-' || !w[1]) {
                        ops[m++] = k;
                        continue;
                }
                if (!strcmp(w, "--")) {
                        opts = false;
                } else if (w[1] == '-') {
                        if (!strncmp(w, "--target-directory=", 19))
                                *target = w + 19;
                        else if (!strcmp(w, "--target-directory") && k + 1 < n)
                                *target = a[++k];
                        else if (!strchr(w, '=') && uw_in(w + 2, long_with))
                                k++;
                } else {
                        for (const char *c = w + 1; *c; c++)
                                if (strchr(with, *c)) {
                                        if (*c == 't')
                                                *target = c[1] ? c + 1 : k + 1 < n ? a[k + 1] : NULL;
                                        if (!c[1])
                                                k++;
                                        break;
                                }
                }
        }
        return m;
}

static void h_mv(struct scan *sc, size_t idx, int depth)
{
        static const char *const long_with[] = {"suffix", "context", NULL};
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx), m;
        const char *target = NULL;
        size_t *ops = xcalloc(n, sizeof(*ops));
        m = operands(a, n, "tS", long_with, ops, &target);
        const char *dest = target ? target : m ? a[ops[m - 1]] : NULL;
        size_t nsrc = target ? m : m ? m - 1 : 0;
        if (dest && nsrc && in_workspace(sc, idx, dest) == 0) {
                char **src = xcalloc(nsrc + 1, sizeof(*src));
                for (size_t k = 0; k < nsrc; k++)
                        src[k] = xstrdup(a[ops[k]]);
                as_rm(sc, idx, src, nsrc, depth);
                strv_free(src);
        }
        free(ops);
}

/* HOST:PATH and rsync://HOST/PATH are another machine's (a colon before any slash). */
static bool remote(const char *p)
{
        const char *colon = strchr(p, ':'), *slash = strchr(p, '/');
        return colon && (!slash || colon < slash);
}

static bool rsync_deletes(char **a, size_t n, bool *sources)
{
        bool dest = false;
        for (size_t k = 1; k < n; k++) {
                dest |= !strcmp(a[k], "--del") || !strncmp(a[k], "--delete", 8);
                *sources |= !strcmp(a[k], "--remove-source-files");
        }
        return dest;
}

/* rsync's --delete and --remove-source-files. */
static void rsync_wipe(struct scan *sc, size_t idx, int depth)
{
        static const char *const long_with[] = {"rsh",
                                                "exclude",
                                                "include",
                                                "filter",
                                                "files-from",
                                                "exclude-from",
                                                "include-from",
                                                "temp-dir",
                                                "log-file",
                                                "password-file",
                                                "chmod",
                                                "chown",
                                                "backup-dir",
                                                "suffix",
                                                "block-size",
                                                "compare-dest",
                                                "copy-dest",
                                                "link-dest",
                                                "partial-dir",
                                                "max-delete",
                                                "max-size",
                                                "min-size",
                                                "timeout",
                                                "contimeout",
                                                "port",
                                                "sockopts",
                                                "out-format",
                                                "info",
                                                "debug",
                                                "usermap",
                                                "groupmap",
                                                "iconv",
                                                "remote-option",
                                                "bwlimit",
                                                "modify-window",
                                                "compress-level",
                                                "skip-compress",
                                                "checksum-choice",
                                                "outbuf",
                                                "write-batch",
                                                "read-batch",
                                                "only-write-batch",
                                                "protocol",
                                                "address",
                                                "stop-after",
                                                "stop-at",
                                                "rsync-path",
                                                "log-file-format",
                                                NULL};
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        bool sources = false, dest = rsync_deletes(a, n, &sources);
        if (!dest && !sources)
                return;
        const char *target = NULL;
        size_t *ops = xcalloc(n, sizeof(*ops));
        size_t m = operands(a, n, "efTBM", long_with, ops, &target);
        char **w = xcalloc(m + 1, sizeof(*w));
        for (size_t k = 0; k < m; k++)
                w[k] = xstrdup(a[ops[k]]);
        free(ops);
        bool remote_src = false;
        for (size_t k = 0; k + 1 < m; k++)
                remote_src |= remote(w[k]);
        if (dest && m >= 2 && !remote(w[m - 1]))
                as_rm(sc, idx, w + m - 1, 1, depth);
        if (sources && m >= 2 && !remote_src)
                as_rm(sc, idx, w, m - 1, depth);
        strv_free(w);
}

/* rsync: -e/--rsh CMD runs CMD; --delete and --remove-source-files delete. */
static void h_rsync(struct scan *sc, size_t idx, int depth)
{
        rsync_wipe(sc, idx, depth);
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        for (size_t k = 1; k < n; k++) {
                a = sc->cmds[idx].argv.v;
                const char *v = NULL;
                if ((!strcmp(a[k], "-e") || !strcmp(a[k], "--rsh")) && k + 1 < n)
                        v = a[k + 1];
                else if (!strncmp(a[k], "--rsh=", 6))
                        v = a[k] + 6;
                if (v && uw_all_unk(v))
                        uw_unknown(sc, idx, "rsync runs a remote shell that cannot be known");
                else if (v) {
                        char *s = xstrdup(v);
                        uw_text(sc, idx, s, depth);
                        free(s);
                }
        }
}

const struct tool tool_mass_models[] = {
        {"kill", h_kill}, {"pkill", h_kill}, {"killall", h_kill}, {"mv", h_mv}, {"rsync", h_rsync},
        {NULL, NULL},
};
