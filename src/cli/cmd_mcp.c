/* txbox mcp: a Model Context Protocol server on stdio for one workspace. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "faces/mcp.h"

static void mcp_usage(FILE *f)
{
        fprintf(f, "Usage: txbox [-C DIR] [--state DIR] [--policy FILE] mcp [OPTIONS]\n\n"
                   "Serve the Model Context Protocol on stdin/stdout (JSON-RPC 2.0, one message per\n"
                   "line) for the workspace: tools run_command, check_command, list_transactions,\n"
                   "show_transaction, commit_transaction, rollback_transaction, undo_transaction and\n"
                   "begin_transaction.  Every run_command is one transaction; its output is captured\n"
                   "and returned in the result, never written to stdout.  Diagnostics go to stderr.\n\n"
                   "  --max-message BYTES  largest incoming message (default 1048576)\n"
                   "  --output-cap BYTES   stdout and stderr kept per command (default 65536)\n"
                   "  --result-budget BYTES  a tool result's size beyond that output (default 4096):\n"
                   "                       many changed paths come as counts, directories and a few\n"
                   "                       names (run_command paths=all, show_transaction: all)\n"
                   "  --timeout SECONDS    run_command's timeout when a call names none (default 600)\n"
                   "  -v, --verbose        log every request on stderr\n"
                   "  -h, --help           this help\n\n"
                   "A request the client cancels (notifications/cancelled) is killed and rolled back\n"
                   "and gets no answer; pings are answered while a command runs.  When the client\n"
                   "goes away (stdin and stdout closed) or on SIGTERM, SIGINT or SIGHUP, a running\n"
                   "command is killed and rolled back and the server ends.\n\n"
                   "docs/INTEGRATIONS.md has configurations for Claude Code, Codex and Gemini CLI.\n");
}

static void log_stderr(void *ctx, const char *line)
{
        (void)ctx;
        fputs("txbox mcp: ", stderr);
        cli_human(stderr, line);
        fputc('\n', stderr);
}

/* Returns 0, EXIT_USAGE, or -1 after --help. */
static int mcp_parse(int argc, char **argv, struct mcp_opts *o, bool *verbose)
{
        static const struct option opts[] = {
                {"max-message", required_argument, NULL, 'm'}, {"output-cap", required_argument, NULL, 'o'},
                {"verbose", no_argument, NULL, 'v'},           {"help", no_argument, NULL, 'h'},
                {"timeout", required_argument, NULL, 't'},
                {"result-budget", required_argument, NULL, 'b'},
                {0},
        };
        int c;
        while ((c = getopt_long(argc, argv, "+vh", opts, NULL)) != -1) {
                char *end = NULL;
                unsigned long long v = 0;
                if (c == 'm' || c == 'o' || c == 'b') {
                        errno = 0;
                        v = strtoull(optarg, &end, 10);
                        if (errno || *end || v < 1024 || v > (1ull << 30)) {
                                cli_error("mcp: %s %s: expected a byte count from 1024 to 1073741824",
                                          c == 'm' ? "--max-message" : c == 'o' ? "--output-cap" : "--result-budget",
                                          optarg);
                                return EXIT_USAGE;
                        }
                }
                if (c == 't') {
                        errno = 0;
                        double t = strtod(optarg, &end);
                        if (errno || *end || end == optarg || !(t >= 1 && t <= 86400)) {
                                cli_error("mcp: --timeout %s: expected seconds from 1 to 86400", optarg);
                                return EXIT_USAGE;
                        }
                        o->timeout_s = t;
                        continue;
                }
                switch (c) {
                case 'm': o->max_message = v; break;
                case 'o': o->output_cap = v; break;
                case 'b': o->result_budget = v; break;
                case 'v': *verbose = true; break;
                case 'h': mcp_usage(stdout); return -1;
                default: mcp_usage(stderr); return EXIT_USAGE;
                }
        }
        if (optind < argc) {
                cli_error("mcp: unexpected argument '%s'", argv[optind]);
                return EXIT_USAGE;
        }
        return 0;
}

int cmd_mcp(int argc, char **argv, const struct global_opts *g)
{
        struct mcp_opts o = {0};
        struct mcp_server *s = NULL;
        bool verbose = false;
        int r = mcp_parse(argc, argv, &o, &verbose);

        if (r)
                return r < 0 ? 0 : r;
        /* stdout is the protocol channel: keep it for the protocol alone and point fd 1 at
         * stderr, so that nothing else (a stray message, a library's print) can corrupt it. */
        int proto = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        if (proto < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
                cli_error("mcp: cannot set up stdout: %s", strerror(errno));
                return EXIT_TXBOX;
        }
        signal(SIGPIPE, SIG_IGN); /* a client that went away is an EPIPE, not a kill */
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_RECOVER);
        if (!ws)
                return EXIT_TXBOX;
        if (g->policy)
                txbox_ws_set_policy(ws, g->policy);
        o.log = verbose ? log_stderr : NULL;
        mcp_server_new(ws, &o, &s);
        if (verbose) {
                fputs("txbox mcp: serving workspace ", stderr);
                cli_human(stderr, txbox_ws_path(ws));
                fputc('\n', stderr);
        }
        r = mcp_serve(s, STDIN_FILENO, proto);
        if (r < 0 && r != -EPIPE)
                cli_error("mcp: %s", strerror(-r));
        mcp_server_free(s);
        txbox_ws_close(ws);
        close(proto);
        return r < 0 && r != -EPIPE ? EXIT_TXBOX : 0;
}
