/* txbox: dispatch to one verb. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const struct verb verbs[] = {
        {"run", cmd_run, "run a program as one transaction in the workspace"},
        {"sh", cmd_sh, "run a shell string as one transaction (a drop-in for sh -c)"},
        {"log", cmd_log, "list transactions, newest first"},
        {"show", cmd_show, "show one transaction and its changes"},
        {"diff", cmd_diff, "unified diff of one transaction's text changes"},
        {"commit", cmd_commit, "commit a pending transaction"},
        {"rollback", cmd_rollback, "roll back a pending transaction"},
        {"undo", cmd_undo, "revert a committed transaction (default: the newest)"},
        {"recover", cmd_recover, "finish or revert interrupted commits and undos"},
        {"gc", cmd_gc, "prune undo data beyond the retention (count, age, size) and the trash"},
        {"check", cmd_check, "the policy decision for a command, without running it"},
        {"begin", cmd_begin, "open a session of several commands, one savepoint each"},
        {"report", cmd_report, "a readable report of the transactions (HTML with --html FILE)"},
        {"agent", cmd_agent,
         "a headless agent loop: an OpenAI-compatible model's tool calls as transactions"},
        {"doctor", cmd_doctor, "which protections hold on this machine, and what missing ones cost"},
        {"hook", cmd_hook, "answer an agent's pre-tool hook (claude-code, codex, gemini) with the policy"},
        {"trust", cmd_trust,
         "trust the workspace's .txbox/policy as it is now (else it only adds restrictions)"},
        {"mcp", cmd_mcp, "serve the Model Context Protocol on stdio (tools for AI agents)"},
        {"prefix", cmd_prefix, "Claude Code's shell prefix: each Bash command string as one transaction"},
};

static void usage(FILE *f)
{
        fprintf(f, "Usage: txbox [-C DIR] [--state DIR] [--policy FILE] VERB [ARGS...]\n\n"
                   "Every command becomes a transaction on the workspace: it runs in a sandbox on a\n"
                   "copy-on-write view, and its effects are committed atomically or rolled back.\n\n"
                   "Verbs:\n");
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
                fprintf(f, "  %-9s %s\n", verbs[i].name, verbs[i].summary);
        fprintf(f, "\nGlobal options:\n"
                   "  -C, --workspace DIR  the workspace (default: the nearest directory from the\n"
                   "                       current one up that holds .txbox, .git or .claude, or\n"
                   "                       has transactions; else the current directory)\n"
                   "  --state DIR          transactions and audit log (default: on the workspace's\n"
                   "                       filesystem, outside it, e.g. ~/.local/state/txbox/NAME-HASH)\n"
                   "  --policy FILE        policy file (default: .txbox/policy, which only adds\n"
                   "                       restrictions until you txbox trust it; else built-in)\n"
                   "  --approve PROGRAM    put the policy's \"ask\" decisions to PROGRAM (JSON on its\n"
                   "                       stdin, answers allow or deny); without it they refuse\n"
                   "  -h, --help           this help; txbox VERB --help for a verb's\n"
                   "  --version            print the version\n\n"
                   "See txbox(1) for exit statuses and the JSON record.\n");
}

int cli_parse_globals(int argc, char **argv, struct global_opts *g)
{
        static const struct option opts[] = {
                {"workspace", required_argument, NULL, 'C'}, {"state", required_argument, NULL, 's'},
                {"policy", required_argument, NULL, 'p'},    {"help", no_argument, NULL, 'h'},
                {"approve", required_argument, NULL, 'a'},
                {"version", no_argument, NULL, 'V'},         {0},
        };
        int c;

        optind = 1;
        opterr = 1;
        while ((c = getopt_long(argc, argv, "+C:h", opts, NULL)) != -1) {
                switch (c) {
                case 'C': g->workspace = optarg; break;
                case 's': g->state = optarg; break;
                case 'p': g->policy = optarg; break;
                case 'a': g->approve = optarg; break;
                case 'h': usage(stdout); return -2;
                case 'V': printf("txbox %s\n", TXBOX_VERSION); return -2;
                default: return -1;
                }
        }
        if (optind >= argc) {
                usage(stderr);
                return -1;
        }
        return optind;
}

/* The verb's status; argv may be the one prefix_argv made. */
static int run_verb(int argc, char **argv)
{
        struct global_opts g = {0};
        /* getopt prefixes its messages with argv[0]: make them read "txbox: ..." */
        argv[0] = "txbox";
        int i = cli_parse_globals(argc, argv, &g);

        if (i == -2)
                return 0;
        if (i < 0)
                return EXIT_USAGE;
        for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
                if (!strcmp(argv[i], verbs[v].name)) {
                        optind = 1;
                        /* The hook finds its workspace its own way (the agent names it). */
                        if (strcmp(argv[i], "hook") && !cli_wants_help(argc - i, argv + i))
                                cli_discover(&g);
                        int st = verbs[v].run(argc - i, argv + i, &g);
                        cli_globals_free(&g);
                        return st;
                }
        cli_error("unknown verb '%s'; txbox --help lists the verbs", argv[i]);
        return EXIT_USAGE;
}

int main(int argc, char **argv)
{
        const char *base = strrchr(argv[0], '/');
        char *opts_buf = NULL, **made = NULL;

        /* txbox-prefix (a link): Claude Code's CLAUDE_CODE_SHELL_PREFIX takes no verb */
        if (!strcmp(base ? base + 1 : argv[0], "txbox-prefix") &&
            !(argv = made = prefix_argv(argc, argv, &opts_buf, &argc)))
                return EXIT_TXBOX;
        int st = run_verb(argc, argv);
        free(made);
        free(opts_buf);
        return st;
}
