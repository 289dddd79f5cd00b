/* Inside the MCP server, shared by its parts: mcp.c (JSON-RPC framing and dispatch),
 * mcp_tools.c (the tool table and one handler per tool) and mcp_stdio.c (the stdio loop,
 * its queue and the watch while a command runs).  Not an interface: faces/mcp.h is. */
#ifndef TXBOX_MCP_INT_H
#define TXBOX_MCP_INT_H

#include <jansson.h>
#include <stdbool.h>

#include "faces/mcp.h"
#include "txbox.h"

struct mcp_io; /* mcp_stdio.c's own */

struct mcp_server {
        struct txbox_ws *ws;
        struct mcp_opts opts;
        bool initialized;
        char version[32]; /* the negotiated protocol version */
        bool prepare;     /* a command ran: prepare the next one once the answer is out */
        struct txbox_run_opts prepare_opts;
        struct mcp_io *io;  /* while serving stdio (mcp_serve); NULL for mcp_handle alone */
        json_t *current_id; /* the request being handled (borrowed) */
        bool drop_reply;    /* it was cancelled: no answer */
};

struct rpc_error {
        int code;
        char msg[512];
};

/* mcp.c */
void mcp_log(struct mcp_server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
json_t *mcp_rpc_fail(struct rpc_error *e, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
char *mcp_rpc_reply(json_t *id, json_t *result, const struct rpc_error *e);
char *mcp_rpc_error_reply(json_t *id, int code, const char *msg);
bool mcp_id_valid(json_t *id);

/* mcp_tools.c */
json_t *mcp_tools_list(void);
json_t *mcp_tools_call(struct mcp_server *s, json_t *params, struct rpc_error *e);

/* mcp_stdio.c (all three do nothing when the server is not serving stdio) */
struct txbox_watch *mcp_watch(struct mcp_server *s);
void mcp_cancelled_by(struct mcp_server *s, int signo);
bool mcp_urgent(struct mcp_server *s, bool pings);

#endif
