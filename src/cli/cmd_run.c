/* txbox run [OPTS] -- PROGRAM [ARG...]: one program, one transaction. */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run.h"
#include "base/mem.h"
#include "base/str.h"

static void run_usage(FILE *f)
{
        fprintf(f, "Usage: txbox run [OPTIONS] -- PROGRAM [ARG...]\n\n"
                   "Run PROGRAM as one transaction: in a sandbox (own user, mount, pid, ipc, uts and\n"
                   "network namespaces; read-only system; private /tmp; secrets hidden) on a\n"
                   "copy-on-write view of the workspace.  When it ends, its changes are committed\n"
                   "atomically or rolled back.  stdin, stdout and stderr pass through.\n\n"
                   "Options:\n");
        run_options_help(f);
        fprintf(f, "\nExit status: the program's own (128+N when killed by signal N); 124 timeout;\n"
                   "123 an effect rule was broken; 122 conflict; 125 txbox failed; 126 denied by policy.\n");
}

void run_options_help(FILE *f)
{
        fprintf(f, "  --commit=auto|keep|discard  auto (default): commit when PROGRAM exits 0 and no\n"
                   "                              effect rule is broken, else roll back; keep: leave it\n"
                   "                              pending (txbox commit/rollback TX); discard: roll back\n"
                   "  --net=none|loopback|host    network: none (default, empty namespace), loopback\n"
                   "                              (own loopback up), host (the host's network)\n"
                   "  --net=allow:HOST[,HOST...]  only HTTP(S) to these hosts and their subdomains,\n"
                   "                              ports 80 and 443, public addresses only, through a\n"
                   "                              proxy (HTTP(S)_PROXY is set); HOST:PORT for another\n"
                   "                              port, an address (10.0.0.5, [::1]:8080) or\n"
                   "                              private:HOST to reach a private one; every attempt\n"
                   "                              is logged with its address in the report's \"net\"\n"
                   "  --timeout=SECONDS           kill the program and roll back after SECONDS\n"
                   "  --report=FILE               write the transaction's JSON record to FILE\n"
                   "  --tx=ID                     add to session ID (txbox begin) as one savepoint\n"
                   "  --env=NAME                  pass environment variable NAME although its name\n"
                   "                              looks secret (*TOKEN*, *KEY*, AWS_*, ...; repeatable)\n"
                   "  --allow-unix-sockets        let the program connect to every unix socket, the\n"
                   "                              host's too (docker.sock, ssh-agent; by default only\n"
                   "                              the sandbox's own, in its /tmp and /dev/shm)\n"
                   "  --allow-effect=RULE[,RULE]  let this one command break these effect rules, as\n"
                   "                              the user's own choice (the policy refuses the option\n"
                   "                              in a command an agent runs): effect-lost-work,\n"
                   "                              effect-mass-deletion, effect-git-integrity,\n"
                   "                              effect-git-internals, effect-protected-path,\n"
                   "                              effect-file-size; repeatable; the record says so\n"
                   "  --max-procs=N               processes and threads at once (default 1024)\n"
                   "  --max-memory=SIZE           memory of the whole sandbox: processes, /tmp,\n"
                   "                              /dev/shm, memfds (default half the RAM)\n"
                   "  --max-disk=SIZE             what the transaction may hold on the workspace's\n"
                   "                              file system (default min(10G, half the free space))\n"
                   "  --max-files=N               files it may write (default min(1000000, half the\n"
                   "                              free inodes))\n"
                   "  --max-open-files=N          open files per process (default 4096)\n"
                   "  --max-cpu=SECONDS           CPU time per process (default none)\n"
                   "  --max-cpus=N                CPU bandwidth, e.g. 1.5 (needs a cgroup; default none)\n"
                   "                              SIZE: bytes or with K/M/G; past a limit the program\n"
                   "                              is stopped and rolled back (txbox doctor: how each\n"
                   "                              limit is enforced here)\n"
                   "  -v, --verbose               say what happened even when it went well\n"
                   "  -h, --help                  this help\n");
}

static int parse_commit(const char *s, enum txbox_commit_mode *m)
{
        if (!strcmp(s, "auto"))
                *m = TXBOX_COMMIT_AUTO;
        else if (!strcmp(s, "keep"))
                *m = TXBOX_COMMIT_KEEP;
        else if (!strcmp(s, "discard"))
                *m = TXBOX_COMMIT_DISCARD;
        else
                return -1;
        return 0;
}

static int parse_net(const char *s, enum txbox_net_mode *m)
{
        if (!strcmp(s, "none"))
                *m = TXBOX_NET_NONE;
        else if (!strcmp(s, "loopback"))
                *m = TXBOX_NET_LOOPBACK;
        else if (!strcmp(s, "host"))
                *m = TXBOX_NET_HOST;
        else if (!strncmp(s, "allow:", 6) && s[6]) {
                *m = TXBOX_NET_ALLOW;
        } else
                return -1;
        return 0;
}

static int set_limit(uint64_t *field, const char *opt, const char *arg)
{
        if ((*field = parse_size(arg)) == 0) {
                cli_error("--%s=%s: expected a positive number (sizes may end in K, M or G)", opt, arg);
                return -1;
        }
        return 0;
}

static void run_cli_free_hosts(struct run_cli *o)
{
        free(o->net_allow);
        free(o->net_allow_buf);
        o->net_allow = NULL;
        o->net_allow_buf = NULL;
        o->opts.net_allow = NULL;
}

/* allow:HOST[,HOST...]: names of hosts, "*.domain" for its subdomains only, HOST:PORT,
 * addresses, private:HOST (the library checks each: txbox_net_allow_check). */
static int parse_hosts(const char *list, struct run_cli *o)
{
        char *copy = strdup(list), *save = NULL;
        size_t n = 0;

        if (!copy)
                return -1;
        run_cli_free_hosts(o); /* a later --net=allow replaces an earlier one */
        o->net_allow = calloc(strlen(list) / 2 + 2, sizeof(char *));
        for (char *h = strtok_r(copy, ",", &save); h && o->net_allow; h = strtok_r(NULL, ",", &save)) {
                struct txbox_error err = {0};
                if (txbox_net_allow_check(h, &err) < 0) {
                        cli_error("%s", err.msg);
                        free(copy);
                        return -1;
                }
                o->net_allow[n++] = h;
        }
        if (!n) {
                cli_error("--net=allow: needs at least one host, e.g. "
                          "--net=allow:pypi.org,files.pythonhosted.org");
                free(copy);
                return -1;
        }
        o->net_allow_buf = copy;
        o->opts.net_allow = o->net_allow;
        return 0;
}

/* CPUs of bandwidth, in thousandths: "2", "0.5" (at least 0.01). */
static int parse_cpus(const char *s, uint64_t *milli)
{
        char *end;
        double v = strtod(s, &end);
        if (*s < '0' || *s > '9' || *end || v < 0.01 || v > 100000)
                return -1;
        *milli = (uint64_t)(v * 1000 + 0.5);
        return 0;
}

static int parse_timeout(const char *s, double *t)
{
        char *end;
        *t = strtod(s, &end);
        return *end || *t < 0 || *t > 1e7 ? -1 : 0;
}

static const struct option run_longopts[] = {
        {"commit", required_argument, NULL, 'm'}, {"net", required_argument, NULL, 'n'},
        {"timeout", required_argument, NULL, 't'}, {"report", required_argument, NULL, 'r'},
        {"verbose", no_argument, NULL, 'v'},      {"help", no_argument, NULL, 'h'},
        {"tx", required_argument, NULL, 'x'},     {"env", required_argument, NULL, 'e'},
        {"allow-unix-sockets", no_argument, NULL, 'u'}, {"allow-effect", required_argument, NULL, 'A'},
        {"max-procs", required_argument, NULL, 'P'}, {"max-memory", required_argument, NULL, 'M'},
        {"max-cpu", required_argument, NULL, 'U'},   {"max-disk", required_argument, NULL, 'D'},
        {"max-files", required_argument, NULL, 'F'}, {"max-open-files", required_argument, NULL, 'O'},
        {"max-cpus", required_argument, NULL, 'C'}, {0},
};

int run_long_option(const char *arg)
{
        if (strncmp(arg, "--", 2) || !arg[2])
                return 0;
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const struct option *hit = NULL;
        for (const struct option *op = run_longopts; op->name; op++) {
                if (strncmp(op->name, name, len))
                        continue;
                if (strlen(op->name) == len) { /* exact */
                        hit = op;
                        break;
                }
                if (hit) /* two options start so: getopt_long calls it ambiguous */
                        return 0;
                hit = op; /* a unique abbreviation, as getopt_long takes it */
        }
        if (!hit)
                return 0;
        return hit->has_arg == required_argument && !eq ? 2 : 1;
}

/* Parse run/sh options up to the first non-option; returns optind or -EXIT code. */
int run_parse_options(int argc, char **argv, struct run_cli *o, void (*help)(FILE *))
{
        const struct option *opts = run_longopts;
        int c, r;

        optind = 1;
        while ((c = getopt_long(argc, argv, o->shell ? "+vhc:" : "+vh", opts, NULL)) != -1) {
                switch (c) {
                case 'm':
                        if (parse_commit(optarg, &o->mode) < 0) {
                                cli_error("--commit=%s: expected auto, keep or discard", optarg);
                                return -EXIT_TXBOX;
                        }
                        break;
                case 'n':
                        if ((r = parse_net(optarg, &o->opts.net)) < 0) {
                                if (r == -1)
                                        cli_error("--net=%s: expected none, loopback, host or "
                                                  "allow:HOST[,HOST...]",
                                                  optarg);
                                return -EXIT_TXBOX;
                        }
                        if (o->opts.net == TXBOX_NET_ALLOW && parse_hosts(optarg + 6, o) < 0)
                                return -EXIT_TXBOX;
                        break;
                case 't':
                        if (parse_timeout(optarg, &o->opts.timeout_s) < 0) {
                                cli_error("--timeout=%s: expected a number of seconds", optarg);
                                return -EXIT_TXBOX;
                        }
                        break;
                case 'r': o->report = optarg; break;
                case 'v': o->verbose = true; break;
                case 'c': o->command = optarg; break;
                case 'x': o->session = optarg; break;
                case 'e':
                        o->env_keep.v = xrealloc(o->env_keep.v, (o->env_keep.n + 2) * sizeof(char *));
                        o->env_keep.v[o->env_keep.n++] = optarg;
                        o->env_keep.v[o->env_keep.n] = NULL;
                        o->opts.env_keep = o->env_keep.v;
                        break;
                case 'u': o->opts.allow_unix_sockets = true; break;
                case 'A': {
                        char *joined = o->allow_effects ? xasprintf("%s,%s", o->allow_effects, optarg)
                                                        : xstrdup(optarg);
                        free(o->allow_effects);
                        o->allow_effects = joined;
                        break;
                }
                case 'P':
                        if (set_limit(&o->opts.limits.procs, "max-procs", optarg) < 0)
                                return -EXIT_TXBOX;
                        break;
                case 'M':
                        if (set_limit(&o->opts.limits.memory, "max-memory", optarg) < 0)
                                return -EXIT_TXBOX;
                        break;
                case 'U':
                        if (set_limit(&o->opts.limits.cpu_s, "max-cpu", optarg) < 0)
                                return -EXIT_TXBOX;
                        break;
                case 'D':
                        if (set_limit(&o->opts.limits.disk, "max-disk", optarg) < 0)
                                return -EXIT_TXBOX;
                        break;
                case 'F':
                        if (set_limit(&o->opts.limits.files, "max-files", optarg) < 0)
                                return -EXIT_TXBOX;
                        break;
                case 'O':
                        if (set_limit(&o->opts.limits.open_files, "max-open-files", optarg) < 0)
                                return -EXIT_TXBOX;
                        break;
                case 'C':
                        if (parse_cpus(optarg, &o->opts.limits.cpu_milli) < 0) {
                                cli_error("--max-cpus=%s: expected a number of CPUs, e.g. 2 or 0.5", optarg);
                                return -EXIT_TXBOX;
                        }
                        break;
                case 'h': help(stdout); return -0x100;
                default: help(stderr); return -EXIT_TXBOX;
                }
        }
        return optind;
}

void run_cli_free(struct run_cli *o)
{
        free(o->env_keep.v);
        o->env_keep.v = NULL;
        free(o->allow_effects);
        o->allow_effects = NULL;
        run_cli_free_hosts(o);
}

int cmd_run(int argc, char **argv, const struct global_opts *g)
{
        struct run_cli o = {0};
        int i = run_parse_options(argc, argv, &o, run_usage), st;

        if (i == -0x100 || i < 0)
                st = i == -0x100 ? 0 : -i;
        else if (i >= argc) {
                cli_error("run: no program given; usage: txbox run [OPTIONS] -- PROGRAM [ARG...]");
                st = EXIT_TXBOX;
        } else
                st = run_transaction(argv + i, &o, g);
        run_cli_free(&o);
        return st;
}
