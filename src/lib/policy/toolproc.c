/* Killing processes: kill, pkill and killall, and the look-ups whose output kill is given
 * (pgrep, ps).  Two harms: killing a system daemon found by its name, and killing every
 * process the user owns.  For an unprivileged user, kill -1 is exactly the second: it
 * signals every process the user may signal.  So pkill -u USER with no pattern, killall
 * -u USER with no name, pkill -v (everything but a pattern), a pattern that matches every
 * name, kill -9 -1 1234 (where -1 is not the last word) and kill $(pgrep -u USER) are
 * judged as the `kill -1` they amount to; in hook mode no sandbox contains it
 * (docs/POLICY.md, "What the engine sees").  A pattern or name (pkill -u me node), a
 * parent, session, terminal or process group, or the newest or oldest process narrows
 * the set: allowed. */
#define _GNU_SOURCE
#include "policy/tools.h"

#include <ctype.h>

/* ---- the daemons ---- */

static const char *const daemons[] = {"sshd",
                                      "init",
                                      "systemd",
                                      "dockerd",
                                      "containerd",
                                      "containerd-shim",
                                      "docker-proxy",
                                      "docker-containerd-shim",
                                      "runc",
                                      "kubelet",
                                      "kube-apiserver",
                                      "kube-proxy",
                                      "etcd",
                                      "NetworkManager",
                                      "wpa_supplicant",
                                      "cron",
                                      "crond",
                                      "rsyslogd",
                                      "syslogd",
                                      "systemd-journald",
                                      "journald",
                                      "dbus-daemon",
                                      "dbus-broker",
                                      "Xorg",
                                      "Xwayland",
                                      "sssd",
                                      "gdm",
                                      "gdm3",
                                      "lightdm",
                                      "sddm",
                                      "cupsd",
                                      "bluetoothd",
                                      "avahi-daemon",
                                      "ntpd",
                                      "chronyd",
                                      "firewalld",
                                      "polkitd",
                                      "udevd",
                                      "systemd-udevd",
                                      "snapd",
                                      "agetty",
                                      "auditd",
                                      "atd",
                                      "nginx",
                                      "apache2",
                                      "httpd",
                                      "mysqld",
                                      "mariadbd",
                                      "postgres",
                                      "postmaster",
                                      "redis-server",
                                      "mongod",
                                      "memcached",
                                      "ModemManager",
                                      "accounts-daemon",
                                      "gnome-shell",
                                      "plasmashell",
                                      "sshd:",
                                      "systemd-logind",
                                      "systemd-networkd",
                                      "systemd-resolved",
                                      "named",
                                      "dnsmasq",
                                      "haproxy",
                                      "php-fpm",
                                      "supervisord",
                                      "rabbitmq-server",
                                      "elasticsearch",
                                      "zookeeper",
                                      "kafka",
                                      NULL};

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
                                  !strcmp(w, "-ef");
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

const struct tool tool_proc_models[] = {
        {"kill", h_kill},
        {"pkill", h_kill},
        {"killall", h_kill},
        {NULL, NULL},
};
