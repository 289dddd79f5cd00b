/* txbox agent: a headless agent loop against an OpenAI-compatible server (docs/AGENT.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/human.h"
#include "faces/agent.h"
#include "cli.h"
#include "store/record.h"

static void agent_usage(FILE *f)
{
        fprintf(f, "Usage: txbox agent --endpoint URL --model NAME [OPTIONS] TASK...\n\n"
                   "Ask an OpenAI-compatible chat-completions server (llama.cpp, vLLM, Ollama, hosted APIs)\n"
                   "to do TASK with the tools run_command, read_file and write_file; every tool call runs\n"
                   "as one transaction in the workspace and its outcome goes back to the model.  Stops on\n"
                   "a final answer, at --max-steps, or after --max-refusals refused turns in a row.  One\n"
                   "line per step and a session summary go to stderr; the final answer to stdout.\n\n"
                   "  --endpoint URL        server base URL (http://127.0.0.1:8080, with or without /v1)\n"
                   "  --model NAME          model name sent with each request\n"
                   "  --api-key-env VAR     send the key in environment variable VAR as a bearer token\n"
                   "  --max-steps N         model turns at most, each tool call after a turn's first\n"
                   "                        counting as one too (default 30)\n"
                   "  --max-calls N         tool calls run per turn; more get a \"not run\" result (16)\n"
                   "  --max-refusals N      stop after N turns in a row whose calls were all refused (3)\n"
                   "  --system FILE         system prompt from FILE instead of the built-in one\n"
                   "  --atomic              one session transaction: everything commits at the end only\n"
                   "                        when the model finished and the last command succeeded\n"
                   "  --timeout SECONDS     time limit of each command (default 600)\n"
                   "  --net MODE            network of the commands: none (default), loopback, host\n"
                   "  --output-cap BYTES    stdout and stderr returned to the model, each (16384)\n"
                   "  --result-budget BYTES a tool result's size beyond that output (4096): many changed\n"
                   "                        paths come as counts, directories and a few names\n"
                   "  --http-timeout SECONDS  per model request (default 300)\n"
                   "  --retries N           attempts per model request, with exponential backoff (4)\n"
                   "  --retry-base-ms MS    first backoff (default 1000; doubles each retry)\n"
                   "  --no-baseline         skip measuring the per-transaction overhead at the start\n"
                   "  --summary-json FILE   write the session summary as JSON to FILE\n"
                   "  --record FILE         append each model response to FILE, one per line (a replay\n"
                   "                        script for a scripted server)\n\n"
                   "Exit status: 0 the model finished (and with --atomic the session committed); 1 it\n"
                   "stopped otherwise (--max-steps, refusals, session rolled back); 125 the model could\n"
                   "not be reached or txbox failed; 2 bad usage.\n");
}

struct agent_args {
        struct agent_opts o;
        const char *system_file, *key_env, *summary_json;
        char *task;
};

enum { O_ENDPOINT = 256, O_MODEL, O_KEY, O_STEPS, O_REFUSALS, O_SYSTEM, O_ATOMIC, O_TIMEOUT, O_NET, O_CAP,
       O_HTTP_TIMEOUT, O_RETRIES, O_BACKOFF, O_NO_BASELINE, O_SUMMARY, O_RECORD, O_CALLS, O_BUDGET };

static bool parse_num(const char *s, double lo, double hi, double *out)
{
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || end == s || *end || v < lo || v > hi)
                return false;
        *out = v;
        return true;
}

/* Numeric and enumerated options; returns false after printing why. */
static bool set_option(struct agent_args *a, int c, const char *arg)
{
        double v = 0;
        bool ok = true;
        switch (c) {
        case O_STEPS: ok = parse_num(arg, 1, 100000, &v), a->o.max_steps = (int)v; break;
        case O_REFUSALS: ok = parse_num(arg, 1, 1000, &v), a->o.max_refusals = (int)v; break;
        case O_CALLS: ok = parse_num(arg, 1, 1000, &v), a->o.max_calls = (int)v; break;
        case O_TIMEOUT: ok = parse_num(arg, 0.001, 86400 * 7, &v), a->o.cmd_timeout_s = v; break;
        case O_CAP: ok = parse_num(arg, 1, 64 * 1024 * 1024, &v), a->o.output_cap = (size_t)v; break;
        case O_BUDGET: ok = parse_num(arg, 1024, 64 * 1024 * 1024, &v), a->o.result_budget = (size_t)v; break;
        case O_HTTP_TIMEOUT:
                ok = parse_num(arg, 0.001, 86400, &v), a->o.http_timeout_ms = (long)(v * 1000);
                break;
        case O_RETRIES: ok = parse_num(arg, 1, 100, &v), a->o.http_attempts = (int)v; break;
        case O_BACKOFF: ok = parse_num(arg, 1, 600000, &v), a->o.retry_base_ms = (long)v; break;
        case O_NET:
                if (!strcmp(arg, "none")) a->o.net = TXBOX_NET_NONE;
                else if (!strcmp(arg, "loopback")) a->o.net = TXBOX_NET_LOOPBACK;
                else if (!strcmp(arg, "host")) a->o.net = TXBOX_NET_HOST;
                else ok = false;
                break;
        }
        if (!ok)
                cli_error("agent: invalid value '%s' for an option; txbox agent --help lists the ranges",
                          arg);
        return ok;
}

/* Returns 0, EXIT_USAGE after printing why, or -1 when --help was printed. */
static int agent_parse(int argc, char **argv, struct agent_args *a)
{
        static const struct option opts[] = {
                {"endpoint", required_argument, NULL, O_ENDPOINT},
                {"model", required_argument, NULL, O_MODEL},
                {"api-key-env", required_argument, NULL, O_KEY},
                {"max-steps", required_argument, NULL, O_STEPS},
                {"max-refusals", required_argument, NULL, O_REFUSALS},
                {"system", required_argument, NULL, O_SYSTEM},
                {"atomic", no_argument, NULL, O_ATOMIC},
                {"timeout", required_argument, NULL, O_TIMEOUT},
                {"net", required_argument, NULL, O_NET},
                {"output-cap", required_argument, NULL, O_CAP},
                {"http-timeout", required_argument, NULL, O_HTTP_TIMEOUT},
                {"retries", required_argument, NULL, O_RETRIES},
                {"retry-base-ms", required_argument, NULL, O_BACKOFF},
                {"no-baseline", no_argument, NULL, O_NO_BASELINE},
                {"summary-json", required_argument, NULL, O_SUMMARY},
                {"record", required_argument, NULL, O_RECORD},
                {"help", no_argument, NULL, 'h'},
                {"max-calls", required_argument, NULL, O_CALLS},
                {"result-budget", required_argument, NULL, O_BUDGET},
                {0},
        };
        int c;
        a->o.baseline = true;
        while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
                switch (c) {
                case O_ENDPOINT: a->o.endpoint = optarg; break;
                case O_MODEL: a->o.model = optarg; break;
                case O_KEY: a->key_env = optarg; break;
                case O_SYSTEM: a->system_file = optarg; break;
                case O_ATOMIC: a->o.atomic = true; break;
                case O_NO_BASELINE: a->o.baseline = false; break;
                case O_SUMMARY: a->summary_json = optarg; break;
                case O_RECORD: a->o.record_file = optarg; break;
                case 'h': agent_usage(stdout); return -1;
                case '?': agent_usage(stderr); return EXIT_USAGE;
                default:
                        if (!set_option(a, c, optarg))
                                return EXIT_USAGE;
                }
        }
        if (!a->o.endpoint || !a->o.model || optind >= argc) {
                cli_error("agent needs --endpoint URL, --model NAME and a TASK; txbox agent --help");
                return EXIT_USAGE;
        }
        size_t len = 1;
        for (int i = optind; i < argc; i++)
                len += strlen(argv[i]) + 1;
        a->task = calloc(1, len);
        for (int i = optind; a->task && i < argc; i++)
                strcat(strcat(a->task, i > optind ? " " : ""), argv[i]);
        return a->task ? 0 : EXIT_TXBOX;
}

/* --api-key-env and --system; returns 0 or EXIT_USAGE after printing why.  *prompt is malloc'd. */
static int agent_inputs(struct agent_args *a, char **prompt)
{
        if (a->key_env && !(a->o.api_key = getenv(a->key_env))) {
                cli_error("agent: --api-key-env %s: the variable is not set", a->key_env);
                return EXIT_USAGE;
        }
        if (!a->system_file)
                return 0;
        FILE *f = fopen(a->system_file, "re");
        char *buf = f ? calloc(1, 65537) : NULL;
        size_t n = buf ? fread(buf, 1, 65536, f) : 0;
        bool more = f && fgetc(f) != EOF;
        if (f)
                fclose(f);
        if (!buf || more || n == 0) {
                cli_error("agent: --system '%s': %s", a->system_file,
                          !f ? strerror(errno) : more ? "larger than 64 KiB" : "empty or unreadable");
                free(buf);
                return EXIT_USAGE;
        }
        a->o.system_prompt = *prompt = buf;
        return 0;
}

static void log_line(void *ctx, const char *line)
{
        (void)ctx;
        /* Tool labels carry the model's commands and paths: escaped. */
        fputs("agent: ", stderr);
        cli_human(stderr, line);
        fputc('\n', stderr);
}

static int write_summary_json(const char *file, const struct agent_stats *st)
{
        _cleanup_free_ char *s = jv_dump(agent_summary_json(st));
        FILE *f = fopen(file, "we");
        if (!f || fprintf(f, "%s\n", s) < 0 || fclose(f) != 0) {
                cli_error("agent: cannot write the summary to '%s': %s", file, strerror(errno));
                return -1;
        }
        return 0;
}

int cmd_agent(int argc, char **argv, const struct global_opts *g)
{
        struct agent_args a = {0};
        struct agent_stats st = {0};
        struct txbox_error err = {0};
        _cleanup_free_ char *prompt = NULL;
        int r = agent_parse(argc, argv, &a);

        if (r)
                return r < 0 ? 0 : r;
        _cleanup_free_ char *task = a.task;
        if ((r = agent_inputs(&a, &prompt)))
                return r;
        a.o.task = task;
        a.o.log = log_line;
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_RECOVER);
        if (!ws)
                return EXIT_TXBOX;
        r = agent_run(ws, &a.o, &st, &err);
        if (r < 0)
                cli_error("agent: %s", err.msg);
        _cleanup_free_ char *summary = agent_summary_text(&st);
        fputs("agent: ", stderr);
        human_write(stderr, summary, strlen(summary), HUMAN_KEEP_LINES);
        if (a.summary_json && write_summary_json(a.summary_json, &st) < 0 && r == 0)
                r = -EIO;
        if (st.final_answer) { /* the model's own text: lines pass, controls do not */
                human_write(stdout, st.final_answer, strlen(st.final_answer), HUMAN_KEEP_LINES);
                putchar('\n');
        }
        int status = r < 0 ? EXIT_TXBOX
                     : st.finished && (!st.session_outcome || !strcmp(st.session_outcome, "committed"))
                             ? 0
                             : EXIT_REFUSED;
        agent_stats_clear(&st);
        txbox_ws_close(ws);
        return status;
}
