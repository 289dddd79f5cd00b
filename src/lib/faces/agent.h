/* The headless agent loop (txbox agent): asks an OpenAI-compatible chat-completions server for
 * tool calls and runs each one as a transaction in the workspace (docs/AGENT.md).
 *
 * The loop never prints: it reports each step through opts->log and fills struct agent_stats,
 * from which agent_summary_text / agent_summary_json make the session summary. */
#ifndef TXBOX_AGENT_H
#define TXBOX_AGENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "txbox.h"

#define AGENT_MAX_CONTENT (1024 * 1024) /* bytes of write_file content */
#define AGENT_MAX_CALLS 16               /* tool calls run per model turn (default) */

struct agent_opts {
        const char *endpoint;      /* base URL, with or without /v1 or /chat/completions */
        const char *model;
        const char *api_key;       /* NULL: no Authorization header */
        const char *system_prompt; /* NULL: the built-in one */
        const char *task;
        int max_steps;             /* model turns and tool calls past a turn's first; 0: 30 */
        int max_calls;             /* tool calls run per turn (the rest get a "not run" result); 0: 16 */
        int max_refusals;          /* consecutive refused turns before giving up; 0: 3 */
        bool atomic;               /* one session transaction for the whole run */
        long http_timeout_ms;      /* per request; 0: 300 s */
        int http_attempts;         /* per request, retries included; 0: 4 */
        long retry_base_ms;        /* first backoff; doubles each retry; 0: 1000 */
        double cmd_timeout_s;      /* per tool call; 0: 600 s */
        size_t output_cap;         /* bytes of stdout and of stderr returned to the model; 0: 16 KiB */
        size_t result_budget;      /* bytes of a tool result beyond that output; 0: SUMMARY_BUDGET */
        enum txbox_net_mode net;   /* for the commands */
        bool baseline;             /* measure a bare and a transacted `sh -c true` first */
        const char *record_file;   /* append every model response to it, one per line (replayable) */
        void (*log)(void *ctx, const char *line);
        void *log_ctx;
};

struct agent_stats {
        int steps;       /* model turns */
        int calls;       /* tool calls */
        int committed;   /* calls whose effects were committed (kept in the session when atomic) */
        int rolled_back; /* calls whose effects were rolled back */
        int denied;      /* refused by the policy before they ran */
        int tool_errors; /* malformed calls, unknown tools, paths outside the workspace, calls not run */
        int not_run;     /* calls past --max-calls or --max-steps, answered "not run" */
        /* Calls a deny rule refused before they ran or that broke a rule while they ran (an
         * exec refused, an effect rule), and of those, the ones kept out of the workspace.
         * A rule's refusal is its judgement, not proof that the call was dangerous: the
         * summary names the rules and says so.  An "ask" refused for want of --approve is
         * not counted here (the policy itself was not sure): asks_refused. */
        int high_risk, high_risk_intercepted;
        int asks_refused;
#define AGENT_RULES_MAX 12
        struct agent_rule_count {
                char rule[48];
                int denied, broken; /* refused before running / broken while running */
        } rules[AGENT_RULES_MAX];
        int nrules, rules_other;
        int failed, failed_rolled_back;
        int http_retries;
        int64_t model_ms, txbox_ms, wall_ms;
        double bare_ms,
                tx_true_ms; /* baseline: sh -c true without and with a transaction; <0: not measured */
        char stop[160];             /* why the loop stopped */
        bool finished;              /* the model gave a final answer */
        char *final_answer;         /* malloc'd, or NULL */
        char session[32];           /* the session transaction with atomic, else "" */
        const char *session_outcome; /* "committed" / "rolled_back" / NULL */
};

/* Run the loop.  Returns 0 when it ran to a stop (see st->stop, st->finished), -errno when it
 * could not start or the model could not be reached (err says why; st is still filled). */
int agent_run(struct txbox_ws *ws, const struct agent_opts *opts, struct agent_stats *st,
              struct txbox_error *err);
void agent_stats_clear(struct agent_stats *st);

/* The session summary, several lines ending in a newline; malloc'd. */
char *agent_summary_text(const struct agent_stats *st);
/* The same as a JSON object (new reference). */
json_t *agent_summary_json(const struct agent_stats *st);

#endif
