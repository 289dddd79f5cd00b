/* The Model Context Protocol server (txbox mcp): JSON-RPC 2.0 over newline-delimited stdio,
 * with the tools of docs/CONTRACT.md ("MCP tools").  One process serves one workspace, opened
 * once; every run_command is one transaction (txbox_command_run), its output captured so
 * that nothing but protocol messages ever reaches the protocol channel.
 *
 * The protocol half (mcp_handle) is a pure function of the server state and one message, so
 * unit tests and fuzz replays drive it without pipes. */
#ifndef TXBOX_MCP_H
#define TXBOX_MCP_H

#include <stddef.h>

struct txbox_ws;

/* The newest protocol version this server speaks; older ones it also accepts are listed in
 * mcp.c.  A client asking for one it does not know gets this one (the spec's negotiation). */
#define MCP_PROTOCOL_LATEST "2025-11-25"
/* Default cap on one incoming message (one line). */
#define MCP_MAX_MESSAGE (1024 * 1024)
/* Default run_command timeout in seconds (timeout_s overrides it per call). */
#define MCP_DEFAULT_TIMEOUT 600

/* JSON-RPC 2.0 error codes. */
enum {
        MCP_PARSE_ERROR = -32700,
        MCP_INVALID_REQUEST = -32600,
        MCP_METHOD_NOT_FOUND = -32601,
        MCP_INVALID_PARAMS = -32602,
        MCP_INTERNAL_ERROR = -32603,
};

struct mcp_opts {
        size_t max_message; /* bytes in one incoming line (0: MCP_MAX_MESSAGE) */
        size_t output_cap;  /* bytes of a command's stdout and of its stderr kept (0: 64 KiB) */
        size_t diff_cap;    /* bytes of show_transaction's diff kept (0: 256 KiB) */
        /* bytes of a tool result beyond the command's stdout and stderr: changed paths are
         * summarised to fit (0: SUMMARY_BUDGET, 4 KiB) */
        size_t result_budget;
        double timeout_s;   /* run_command's timeout when the call names none (0: MCP_DEFAULT_TIMEOUT) */
        /* Diagnostics (never the protocol): called with one line, no newline.  May be NULL. */
        void (*log)(void *ctx, const char *line);
        void *log_ctx;
};

struct mcp_server;

/* A server for ws (borrowed: it must outlive the server; NULL serves the protocol with every
 * tool call failing, for protocol tests). */
int mcp_server_new(struct txbox_ws *ws, const struct mcp_opts *opts, struct mcp_server **out);
void mcp_server_free(struct mcp_server *s);

/* Handle one incoming message (one line, without its newline; need not be NUL-terminated).
 * Returns the response line (malloc'd, compact JSON, no newline), or NULL when nothing is to
 * be sent (a notification, a response, an empty line). */
char *mcp_handle(struct mcp_server *s, const char *msg, size_t len);

/* Serve until end of input: read lines from in_fd, write responses to out_fd.  A line over
 * the cap is discarded and answered with an error (-32600, with its id when the line had
 * one); it never ends the session.  While a command runs, pings are answered and
 * notifications/cancelled for it kills it and rolls it back (no answer, as the spec says);
 * when the client is gone (stdin ended and nobody reads out_fd) or a termination signal
 * comes, the command is cancelled the same way and the server returns.  At the end of input
 * with out_fd still read, what was received is answered first.
 * Returns 0 at end of input, -errno when reading or writing failed. */
int mcp_serve(struct mcp_server *s, int in_fd, int out_fd);

#endif
