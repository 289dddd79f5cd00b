/* Inside the agent loop, shared by its parts: agent.c (the loop and the summary),
 * agent_model.c (the chat-completions client: HTTP, replies whole or streamed, retries) and
 * agent_tools.c (the tools the model may call, each run as a transaction).  Not an interface:
 * faces/agent.h is. */
#ifndef TXBOX_AGENT_INT_H
#define TXBOX_AGENT_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "faces/agent.h"
#include "faces/curlapi.h"

struct http {
        CURL *curl;
        struct curl_slist *headers;
        char *url;
        /* Of the last response: */
        long retry_after_ms; /* Retry-After, 0 when absent */
        bool event_stream;   /* Content-Type text/event-stream */
};

/* The model's reply: its message and why it ended. */
struct reply {
        json_t *msg;
        char finish[32]; /* finish_reason, "" when absent */
};

struct loop {
        struct txbox_ws *ws;
        const struct agent_opts *o;
        struct agent_stats *st;
        struct http http;
        json_t *messages, *tools;
        FILE *record;
        int last_status; /* of the newest tool call; -1: none yet */
        int steps_used;  /* of --max-steps: one per turn, one per tool call after a turn's first */
        int max_steps;
};

/* agent.c: one line to opts->log (nothing when it is NULL). */
void agent_logf(struct loop *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* agent_model.c */
int agent_http_init(struct http *h, const struct agent_opts *o, struct txbox_error *err);
void agent_http_free(struct http *h);
/* Ask the model; returns true with rp filled (rp->msg a new reference) or false with err. */
bool agent_ask_model(struct loop *L, struct reply *rp, struct txbox_error *err);

/* agent_tools.c */
json_t *agent_tool_defs(void);
/* An error result the model can read; counts as a refused call. */
char *agent_tool_error(struct loop *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One tool call: its result text (malloc'd).  *refused says whether the call was refused
 * (denied, unknown, malformed) rather than run. */
char *agent_tool_call(struct loop *L, json_t *call, bool *refused);

#endif
