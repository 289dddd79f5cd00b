/* Sessions that read their commands from a terminal: what is typed there is never seen by
 * the policy, as with a shell started with no command (`bash`, which the unwrapper finds).
 * Two more ways to the same: a shell given the terminal as its input (`sh </dev/tty`,
 * GTFOBins' way back to a prompt from inside another program), and the interactive
 * prompts of languages that run programs (tclsh, wish, pwsh, jshell, jjs, jrunscript)
 * started with no script, no code and no input. */
#define _GNU_SOURCE
#include "policy/feeds.h"

#include <stdlib.h>

static bool is_terminal(struct scan *sc, size_t idx, const char *arg)
{
        if (has_unk(arg))
                return false;
        char *p = uw_path(sc, idx, arg);
        bool t = p && (!strcmp(p, "/dev/tty") || !strncmp(p, "/dev/pts/", 9) || !strcmp(p, "/dev/console") ||
                       (!strncmp(p, "/dev/tty", 8) && p[8] >= '0' && p[8] <= '9'));
        free(p);
        return t;
}

/* Only options, none of which gives it code or a script. */
static bool no_script(char **a, size_t n, const char *const *code_opts)
{
        for (size_t k = 1; k < n; k++)
                if (a[k][0] != '-' || uw_in(a[k], code_opts))
                        return false;
        return true;
}

void tool_repl(struct scan *sc, size_t idx)
{
        static const char *const shells[] = {"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash", "posh",
                                             "fish", "csh", "tcsh", "rbash", NULL};
        static const char *const repls[] = {"tclsh", "wish", "pwsh", "powershell", "jshell", "jjs",
                                            "jrunscript", NULL};
        static const char *const code_opts[] = {"-c", "-e", "-f", "-s", "-Command", "-command", "-File", "-file",
                                                "-EncodedCommand", "-ec", "-encodedcommand", "--", NULL};
        const struct scmd *c = &sc->cmds[idx];
        char **a = c->argv.v;
        size_t n = c->argv.n;
        if (!n || a[0][0] == '@' || has_unk(a[0]))
                return;
        const char *p = base_name(a[0]);
        if (uw_in(p, shells)) {
                for (size_t r = 0; r < c->reads.n; r++)
                        if (is_terminal(sc, idx, c->reads.v[r]) && no_script(a, n, code_opts))
                                return uw_finding(sc, idx, "@interactive-shell",
                                                  "a shell reading its commands from the terminal");
                return;
        }
        /* as for a shell: an argv judged at an exec has no input to tell (pipe_id < 0), and
         * what it runs is judged at its own exec */
        if (!uw_in(p, repls) || !uw_no_input(c))
                return;
        if (no_script(a, n, code_opts) && !uw_help(a, 1, n))
                uw_finding(sc, idx, "@interactive-shell", "an interactive prompt that runs what is typed");
}
