/* The MCP server's protocol half: JSON-RPC 2.0 framing (one message in, one reply out),
 * initialize and dispatch, and the server's life.  mcp_handle is a pure function of the server
 * state and one message; the tools are in mcp_tools.c, the stdio loop that feeds it in
 * mcp_stdio.c.  JSON is built and parsed with jansson only. */
#define _GNU_SOURCE
#include <jansson.h>
#include <stddef.h>
#include <string.h>

#include "base/macros.h"
#include "base/mem.h"
#include "faces/mcp_int.h"
#include "store/record.h"

static const char *const protocol_versions[] = {MCP_PROTOCOL_LATEST, "2025-06-18", "2025-03-26",
                                                "2024-11-05"};

void mcp_log(struct mcp_server *s, const char *fmt, ...)
{
        char line[1024];
        va_list ap;

        if (!s->opts.log)
                return;
        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        s->opts.log(s->opts.log_ctx, line);
}

/* ---- JSON-RPC ---- */

json_t *mcp_rpc_fail(struct rpc_error *e, int code, const char *fmt, ...)
{
        va_list ap;
        e->code = code;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
        va_end(ap);
        return NULL;
}

static json_t *do_initialize(struct mcp_server *s, json_t *params, struct rpc_error *e)
{
        const char *want = json_string_value(json_object_get(params, "protocolVersion"));
        const char *ver = MCP_PROTOCOL_LATEST;

        if (!want)
                return mcp_rpc_fail(e, MCP_INVALID_PARAMS,
                                    "initialize needs params.protocolVersion (a string)");
        for (size_t i = 0; i < ARRAY_SIZE(protocol_versions); i++)
                if (!strcmp(want, protocol_versions[i]))
                        ver = protocol_versions[i];
        snprintf(s->version, sizeof(s->version), "%s", ver);
        s->initialized = true;
        mcp_log(s, "client asked for protocol %.40s; speaking %s", want, ver);
        return jv_nonnull(json_pack(
                "{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", ver, "capabilities", "tools",
                "listChanged", 0, "serverInfo", "name", "txbox", "title", "txbox transactional shell",
                "version", TXBOX_VERSION, "instructions",
                "Every run_command is a transaction on the workspace: it runs sandboxed on a copy-on-write "
                "view and is "
                "committed only when it exits 0 and breaks no effect rule; otherwise nothing changes. "
                "Commands the "
                "policy forbids are refused before they run, with the rule and the reason: adapt instead of "
                "retrying. undo_transaction reverts a committed one."));
}

/* Answer a request: its result, or NULL with e filled. */
static json_t *dispatch(struct mcp_server *s, const char *method, json_t *params, struct rpc_error *e)
{
        if (params && !json_is_object(params))
                return mcp_rpc_fail(e, MCP_INVALID_PARAMS, "params must be an object");
        if (!strcmp(method, "initialize"))
                return do_initialize(s, params, e);
        if (!strcmp(method, "ping"))
                return jv_nonnull(json_object());
        if (!strcmp(method, "tools/list"))
                return mcp_tools_list();
        if (!strcmp(method, "tools/call"))
                return mcp_tools_call(s, params, e);
        return mcp_rpc_fail(e, MCP_METHOD_NOT_FOUND, "method '%.64s' not found", method);
}

char *mcp_rpc_reply(json_t *id, json_t *result, const struct rpc_error *e)
{
        json_t *r = jv_nonnull(json_pack("{s:s, s:O}", "jsonrpc", "2.0", "id", id ? id : json_null()));
        if (result)
                jv_set(r, "result", result);
        else
                jv_set(
                        r, "error",
                        jv_nonnull(json_pack("{s:i, s:o}", "code", e->code, "message", jv_text(e->msg))));
        return jv_dump(r);
}

char *mcp_rpc_error_reply(json_t *id, int code, const char *msg)
{
        struct rpc_error e = {.code = code};
        snprintf(e.msg, sizeof(e.msg), "%s", msg);
        return mcp_rpc_reply(id, NULL, &e);
}

bool mcp_id_valid(json_t *id)
{
        return json_is_string(id) || json_is_integer(id);
}

static char *handle_value(struct mcp_server *s, json_t *m)
{
        if (json_is_array(m))
                return mcp_rpc_error_reply(NULL, MCP_INVALID_REQUEST,
                                       "batches are not supported: send one message per line");
        if (!json_is_object(m))
                return mcp_rpc_error_reply(NULL, MCP_INVALID_REQUEST, "a message must be a JSON object");
        json_t *id = json_object_get(m, "id"), *method = json_object_get(m, "method");
        if (id && !mcp_id_valid(id))
                id = NULL; /* never echo an id of the wrong type */
        if (!json_is_string(json_object_get(m, "jsonrpc")) ||
            strcmp(json_string_value(json_object_get(m, "jsonrpc")), "2.0"))
                return mcp_rpc_error_reply(id, MCP_INVALID_REQUEST, "jsonrpc must be \"2.0\"");
        if (!method) {
                if (json_object_get(m, "result") || json_object_get(m, "error"))
                        return NULL; /* a response: this server sends no requests, so nothing waits for it */
                return mcp_rpc_error_reply(id, MCP_INVALID_REQUEST, "a request needs a method");
        }
        if (!json_is_string(method))
                return mcp_rpc_error_reply(id, MCP_INVALID_REQUEST, "method must be a string");
        if (!json_object_get(m, "id")) { /* a notification: never answered */
                mcp_log(s, "notification %.64s", json_string_value(method));
                return NULL;
        }
        if (!id)
                return mcp_rpc_error_reply(NULL, MCP_INVALID_REQUEST, "id must be a string or an integer");
        struct rpc_error e = {0};
        s->current_id = id;
        s->drop_reply = false;
        /* A cancellation that came while earlier requests were handled: it never starts. */
        json_t *result = mcp_urgent(s, false)
                                 ? (s->drop_reply = true, NULL)
                                 : dispatch(s, json_string_value(method), json_object_get(m, "params"), &e);
        s->current_id = NULL;
        if (s->drop_reply) {
                json_decref(result);
                mcp_log(s, "request cancelled: no answer");
                return NULL;
        }
        return mcp_rpc_reply(id, result, &e);
}

char *mcp_handle(struct mcp_server *s, const char *msg, size_t len)
{
        json_error_t jerr;
        size_t i;

        for (i = 0; i < len && strchr(" \t\r", msg[i]); i++)
                ;
        if (i == len)
                return NULL; /* blank line */
        if (len > (s->opts.max_message ? s->opts.max_message : MCP_MAX_MESSAGE))
                return mcp_rpc_error_reply(NULL, MCP_INVALID_REQUEST, "message too large");
        json_t *m = json_loadb(msg, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
        if (!m) {
                mcp_log(s, "parse error: %s", jerr.text);
                char text[300];
                snprintf(text, sizeof(text), "parse error: %s", jerr.text);
                return mcp_rpc_error_reply(NULL, MCP_PARSE_ERROR, text);
        }
        char *reply = handle_value(s, m);
        json_decref(m);
        return reply;
}


int mcp_server_new(struct txbox_ws *ws, const struct mcp_opts *opts, struct mcp_server **out)
{
        struct mcp_server *s = xcalloc(1, sizeof(*s));
        s->ws = ws;
        if (opts)
                s->opts = *opts;
        *out = s;
        return 0;
}

void mcp_server_free(struct mcp_server *s)
{
        free(s);
}
