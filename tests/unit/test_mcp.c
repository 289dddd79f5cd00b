/* The MCP server's JSON-RPC layer: framing, dispatch, errors, argument validation, and a
 * fuzz-style replay of malformed and mutated messages that must each get a well-formed
 * answer (or none, for notifications) and never crash.  The tools themselves are driven
 * against a throwaway workspace with harmless commands only (this test is not jailed). */
#define _GNU_SOURCE
#include <dirent.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faces/mcp.h"
#include "tap.h"
#include "txbox.h"

static char dir[200];

/* Send one message; return the parsed reply (NULL when none). */
static json_t *call(struct mcp_server *s, const char *msg)
{
        char *reply = mcp_handle(s, msg, strlen(msg));
        if (!reply)
                return NULL;
        json_t *j = json_loads(reply, 0, NULL);
        if (!j || strchr(reply, '\n'))
                printf("# bad reply to %.80s: %s\n", msg, reply);
        free(reply);
        return j;
}

static int err_code(json_t *r)
{
        return (int)json_integer_value(json_object_get(json_object_get(r, "error"), "code"));
}

/* A reply is well-formed: jsonrpc 2.0, an id (maybe null), exactly one of result/error, an
 * error having an integer code and a string message. */
static bool well_formed(json_t *r)
{
        json_t *res = json_object_get(r, "result"), *e = json_object_get(r, "error");
        if (!json_is_object(r) || !json_is_string(json_object_get(r, "jsonrpc")) || !json_object_get(r, "id"))
                return false;
        if (!!res == !!e)
                return false;
        return !e ||
               (json_is_integer(json_object_get(e, "code")) && json_is_string(json_object_get(e, "message")));
}

static void test_protocol(struct mcp_server *s)
{
        json_t *r = call(
                s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                   "\"2025-03-26\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
        json_t *res = json_object_get(r, "result");
        is_str(json_string_value(json_object_get(res, "protocolVersion")), "2025-03-26",
               "a supported version is kept");
        is_str(json_string_value(json_object_get(json_object_get(res, "serverInfo"), "name")), "txbox",
               "serverInfo.name");
        ok(json_is_object(json_object_get(json_object_get(res, "capabilities"), "tools")),
           "tools capability");
        is_int(json_integer_value(json_object_get(r, "id")), 1, "the id is echoed");
        json_decref(r);

        r = call(s, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"initialize\",\"params\":{"
                    "\"protocolVersion\":\"1999-01-01\"}}");
        is_str(json_string_value(json_object_get(json_object_get(r, "result"), "protocolVersion")),
               MCP_PROTOCOL_LATEST, "an unknown version gets the latest");
        is_str(json_string_value(json_object_get(r, "id")), "a", "a string id is echoed");
        json_decref(r);

        r = call(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{}}");
        is_int(err_code(r), MCP_INVALID_PARAMS, "initialize without protocolVersion: -32602");
        json_decref(r);

        ok(call(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}") == NULL,
           "a notification gets no reply");
        ok(call(s, "{\"jsonrpc\":\"2.0\",\"method\":\"no/such/notification\",\"params\":[1]}") == NULL,
           "nor does an unknown notification");
        ok(call(s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}") == NULL,
           "a response from the client gets no reply");
        ok(call(s, "   ") == NULL, "a blank line gets no reply");

        r = call(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
        ok(json_is_object(json_object_get(r, "result")) &&
           json_object_size(json_object_get(r, "result")) == 0,
           "ping answers {}");
        json_decref(r);
}

#define TOOL_ERROR 1 /* not a JSON-RPC error: a tool result with isError */

static void test_errors(struct mcp_server *s)
{
        static const struct {
                const char *msg;
                int code;
                const char *what;
        } cases[] = {
                {"{", MCP_PARSE_ERROR, "truncated JSON"},
                {"not json", MCP_PARSE_ERROR, "not JSON"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}", MCP_PARSE_ERROR,
                 "duplicate keys"},
                {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCP_INVALID_REQUEST, "a batch"},
                {"42", MCP_INVALID_REQUEST, "a bare number"},
                {"\"str\"", MCP_INVALID_REQUEST, "a bare string"},
                {"{\"id\":1,\"method\":\"ping\"}", MCP_INVALID_REQUEST, "no jsonrpc member"},
                {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", MCP_INVALID_REQUEST, "jsonrpc 1.0"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1}", MCP_INVALID_REQUEST, "no method"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", MCP_INVALID_REQUEST, "method not a string"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", MCP_INVALID_REQUEST,
                 "a fractional id"},
                {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", MCP_INVALID_REQUEST, "an object id"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}", MCP_METHOD_NOT_FOUND,
                 "unknown method"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[]}", MCP_INVALID_PARAMS,
                 "params array"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}", MCP_INVALID_PARAMS,
                 "call without name"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"rm\"}}",
                 MCP_INVALID_PARAMS,
                 "unknown tool"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"run_command\"}}",
                 TOOL_ERROR, "missing required argument"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"run_command\",\"arguments\":"
                 "{\"command\":[\"ls\"]}}}", TOOL_ERROR, "command as an array"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"run_command\",\"arguments\":"
                 "{\"command\":\"true\",\"commit\":\"maybe\"}}}", TOOL_ERROR, "commit not in the enum"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"run_command\",\"arguments\":"
                 "{\"command\":\"true\",\"timeout_s\":\"10\"}}}", TOOL_ERROR, "timeout as a string"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"run_command\",\"arguments\":"
                 "{\"command\":\"true\",\"timeout_s\":-1}}}", TOOL_ERROR, "negative timeout"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"run_command\",\"arguments\":"
                 "{\"command\":\"a\\u0000b\"}}}", MCP_PARSE_ERROR, "a NUL in a string"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"run_command\",\"arguments\":"
                 "{\"command\":\"true\",\"rm\":1}}}", TOOL_ERROR, "an unknown argument"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"list_transactions\","
                 "\"arguments\":{\"limit\":1.5}}}", TOOL_ERROR, "limit not an integer"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"list_transactions\","
                 "\"arguments\":{\"limit\":0}}}", TOOL_ERROR, "limit 0"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"list_transactions\","
                 "\"arguments\":7}}", MCP_INVALID_PARAMS, "arguments not an object"},
                {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"rollback_transaction\","
                 "\"arguments\":{\"tx\":\"x\",\"savepoint\":true}}}", TOOL_ERROR, "savepoint a boolean"},
                {"\xff\xfe{}", MCP_PARSE_ERROR, "invalid UTF-8"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                json_t *r = call(s, cases[i].msg);
                if (cases[i].code == TOOL_ERROR) { /* MCP 2025-11-25: the model reads what was wrong */
                        json_t *res = json_object_get(r, "result");
                        const char *t = json_string_value(
                                json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
                        ok(r && well_formed(r) && json_is_true(json_object_get(res, "isError")) && t &&
                                   strstr(t, "invalid arguments: ") &&
                                   !json_object_get(res, "structuredContent"),
                           "%s: a tool result with isError and the reason: %s", cases[i].what,
                           t ? t : "(none)");
                } else {
                        ok(r && well_formed(r) && err_code(r) == cases[i].code, "%s: error %d", cases[i].what,
                           cases[i].code);
                }
                json_decref(r);
        }

        /* Deep nesting must be refused by the parser, not overflow the stack. */
        size_t depth = 100000;
        char *deep = malloc(2 * depth + 1);
        memset(deep, '[', depth);
        memset(deep + depth, ']', depth);
        deep[2 * depth] = '\0';
        json_t *r = call(s, deep);
        ok(r && well_formed(r) && json_object_get(r, "error"), "100000 nested arrays: an error, no crash");
        json_decref(r);
        free(deep);
}

static void test_tools_list(struct mcp_server *s)
{
        static const char *const names[] = {"run_command",        "check_command",        "list_transactions",
                                            "show_transaction",   "commit_transaction",
                                            "rollback_transaction", "undo_transaction",
                                            "begin_transaction"};
        json_t *r = call(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
        json_t *tools = json_object_get(json_object_get(r, "result"), "tools");
        is_int(json_array_size(tools), 8, "eight tools");
        for (size_t i = 0; i < 8; i++) {
                json_t *t = json_array_get(tools, i);
                json_t *schema = json_object_get(t, "inputSchema");
                is_str(json_string_value(json_object_get(t, "name")), names[i], "tool %zu is %s", i,
                       names[i]);
                ok(json_is_object(schema) &&
                           !strcmp(json_string_value(json_object_get(schema, "type")), "object") &&
                           json_is_object(json_object_get(schema, "properties")),
                   "%s has an object inputSchema", names[i]);
        }
        for (size_t i = 0; i < 8; i++) {
                json_t *os = json_object_get(json_array_get(tools, i), "outputSchema");
                json_t *props = json_object_get(os, "properties"), *req = json_object_get(os, "required"), *k;
                size_t j, missing = 0;
                json_array_foreach (req, j, k)
                        missing += !json_object_get(props, json_string_value(k));
                ok(json_is_object(props) && json_object_size(props) > 0 && json_array_size(req) > 0 &&
                   !missing,
                   "%s: an outputSchema with properties, every required key among them", names[i]);
        }
        json_t *run_props =
                json_object_get(json_object_get(json_array_get(tools, 0), "inputSchema"), "properties");
        is_str(json_string_value(json_object_get(json_object_get(run_props, "timeout_s"), "type")), "number",
               "run_command's timeout_s is a number");
        json_decref(r);
}

/* mcp_serve over pipes: several lines in one write, an oversized one in between, a last line
 * without its newline. */
static void test_serve(void)
{
        struct mcp_opts o = {.max_message = 4096};
        struct mcp_server *s = NULL;
        int in[2], out[2];

        mcp_server_new(NULL, &o, &s);
        if (pipe(in) < 0 || pipe(out) < 0)
                return;
        pid_t pid = fork();
        if (pid == 0) {
                close(in[0]);
                close(out[0]);
                char *big = malloc(20000);
                memset(big, ' ', 20000);
                memcpy(big, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"x\":\"", 44);
                const char *a = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\n{\"jsonrpc\":\"2.0\","
                                "\"method\":\"n\"}\n";
                const char *b = "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}";
                /* the TypeScript SDK puts the id last, after the params */
                const char *c1 = "\n{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"params\":{\"a\":[1,{\"id\":"
                                 "\"inner\"}],\"x\":\"";
                const char *c2 = "\\\"\"},\"id\":\"late\"}\n";
                if (write(in[1], a, strlen(a)) < 0 || write(in[1], big, 20000) < 0 ||
                    write(in[1], c1, strlen(c1)) < 0 || write(in[1], big + 44, 9000) < 0 ||
                    write(in[1], c2, strlen(c2)) < 0 || write(in[1], b + 1, strlen(b) - 1) < 0)
                        _exit(1);
                _exit(0);
        }
        close(in[1]);
        int r = mcp_serve(s, in[0], out[1]);
        close(out[1]);
        close(in[0]);
        waitpid(pid, NULL, 0);
        char buf[8192] = {0};
        ssize_t n = read(out[0], buf, sizeof(buf) - 1);
        close(out[0]);
        buf[n > 0 ? n : 0] = '\0';
        is_int(r, 0, "serve ends cleanly at end of input");
        char *l1 = strtok(buf, "\n"), *l2 = strtok(NULL, "\n"), *l2b = strtok(NULL, "\n"),
             *l3 = strtok(NULL, "\n"), *l4 = strtok(NULL, "\n");
        ok(l1 && strstr(l1, "\"id\": 1") && strstr(l1, "\"result\""), "first ping answered: %s", l1 ? l1
           : "");
        ok(l2 && strstr(l2, "-32600") && strstr(l2, "too large"), "oversized line: -32600: %s", l2 ? l2 : "");
        ok(l2 && strstr(l2, "\"id\": 9"), "... answered with its id, so that the client does not wait");
        ok(l2b && strstr(l2b, "\"id\": \"late\"") && strstr(l2b, "-32600"),
           "an oversized line whose id comes last (after nested ids and escapes): its id: %s", l2b ? l2b
           : "");
        ok(l3 && strstr(l3, "\"id\": 2"), "the session goes on; a last line without newline is answered");
        ok(!l4, "nothing else was written (notification, blank line)");
        mcp_server_free(s);
}

/* Deterministic mutations of valid messages, and the malformed corpus again through serve:
 * every reply must be well-formed JSON-RPC; no crash, no hang. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        return (uint32_t)rng;
}

static void test_fuzz(struct mcp_server *s)
{
        static const char *const seeds[] = {
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                "\"2025-06-18\"}}",
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
                "call\",\"params\":{\"name\":\"check_command\",\"arguments\":{\"command\":\"ls\"}}}",
                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/"
                "call\",\"params\":{\"name\":\"run_command\",\"arguments\":{\"command\":\"true\",\"timeout_"
                "s\":5}}}",
                "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/list\",\"params\":{}}",
                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/"
                "call\",\"params\":{\"name\":\"rollback_transaction\",\"arguments\":{\"tx\":\"ab\","
                "\"savepoint\":1}}}",
        };
        static const char tokens[] = "{}[]\":,0123456789.eE+-\\ntfu \x01\x80\xff";
        int bad = 0, replies = 0;

        /* make fuzz runs many more (TXBOX_FUZZ_N); make check keeps it short. */
        const char *env = getenv("TXBOX_FUZZ_N");
        long iterations = env && atol(env) > 0 ? atol(env) : 20000;
        for (long i = 0; i < iterations; i++) {
                char buf[512];
                const char *seed = seeds[rnd() % 5];
                size_t len = strlen(seed);
                memcpy(buf, seed, len);
                for (int k = 0, edits = 1 + rnd() % 4; k < edits; k++) {
                        size_t at = rnd() % len;
                        switch (rnd() % 3) {
                        case 0: buf[at] = tokens[rnd() % (sizeof(tokens) - 1)]; break; /* replace */
                        case 1: len = at + 1; break;                                  /* truncate */
                        default:                                                        /* delete */
                                memmove(buf + at, buf + at + 1, len - at - 1);
                                len = len > 1 ? len - 1 : 1;
                        }
                }
                char *reply = mcp_handle(s, buf, len);
                if (!reply)
                        continue;
                replies++;
                json_t *r = json_loads(reply, 0, NULL);
                if (!r || !well_formed(r) || strchr(reply, '\n')) {
                        if (bad++ < 3)
                                printf("# bad reply to %.*s: %s\n", (int)len, buf, reply);
                }
                json_decref(r);
                free(reply);
        }
        is_int(bad, 0, "%ld mutated messages: every one of %d replies is well-formed JSON-RPC on one line",
               iterations, replies);
}

static json_t *tool(struct mcp_server *s, const char *name, const char *args)
{
        char *msg = NULL;
        if (asprintf(&msg,
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
                     "\"arguments\":%s}}",
                     name, args) < 0)
                return NULL;
        json_t *r = call(s, msg);
        free(msg);
        json_t *res = json_incref(json_object_get(r, "result"));
        json_decref(r);
        return res;
}

static const char *sc_str(json_t *res, const char *key)
{
        return json_string_value(json_object_get(json_object_get(res, "structuredContent"), key));
}

static const char *text_of(json_t *res)
{
        json_t *content = json_object_get(res, "content");
        const char *t = json_string_value(
                json_object_get(json_array_get(content, json_array_size(content) - 1), "text"));
        return t ? t : "";
}

static void test_tools(struct mcp_server *s, const char *ws_path)
{
        char path[512];
        json_t *r = tool(s, "run_command", "{\"command\":\"echo hi; echo x >f.txt\"}");
        is_str(sc_str(r, "outcome"), "committed", "run_command commits");
        is_str(sc_str(r, "stdout"), "hi\n", "stdout is in structuredContent");
        ok(json_is_false(json_object_get(r, "isError")), "not an error");
        ok(strstr(text_of(r), "added f.txt") != NULL, "the text block names the changed file");
        const char *jt =
                json_string_value(json_object_get(json_array_get(json_object_get(r, "content"), 0), "text"));
        json_t *parsed = jt ? json_loads(jt, 0, NULL) : NULL;
        ok(parsed && json_equal(parsed, json_object_get(r, "structuredContent")),
           "the first text block is structuredContent as JSON");
        json_decref(parsed);
        snprintf(path, sizeof(path), "%s/f.txt", ws_path);
        ok(access(path, F_OK) == 0, "the file reached the workspace");
        char id[32];
        snprintf(id, sizeof(id), "%s", sc_str(r, "tx") ? sc_str(r, "tx") : "");
        json_decref(r);

        r = tool(s, "run_command", "{\"command\":\"git push --force origin main\"}");
        is_str(sc_str(r, "outcome"), "denied", "a forbidden command is denied");
        ok(sc_str(r, "rule") && strstr(text_of(r), sc_str(r, "rule")), "the text names the rule");
        ok(json_is_true(json_object_get(r, "isError")), "a refusal is isError");
        json_decref(r);

        r = tool(s, "check_command", "{\"command\":\"rm -rf ~\"}");
        is_str(sc_str(r, "decision"), "deny", "check_command: rm -rf ~ is denied");
        json_decref(r);

        r = tool(s, "list_transactions", "{\"limit\":1}");
        json_t *txs = json_object_get(json_object_get(r, "structuredContent"), "transactions");
        is_int(json_array_size(txs), 1, "list_transactions honours limit");
        json_decref(r);

        char args[128];
        snprintf(args, sizeof(args), "{\"tx\":\"%s\"}", id);
        r = tool(s, "show_transaction", args);
        ok(sc_str(r, "diff") != NULL, "show_transaction has a diff");
        json_decref(r);

        r = tool(s, "run_command", "{\"command\":\"echo y >g.txt\",\"commit\":\"keep\"}");
        is_str(sc_str(r, "outcome"), "pending", "commit=keep leaves it pending");
        snprintf(args, sizeof(args), "{\"tx\":\"%s\"}", sc_str(r, "tx") ? sc_str(r, "tx") : "");
        json_decref(r);
        r = tool(s, "commit_transaction", args);
        is_str(sc_str(r, "outcome"), "committed", "commit_transaction commits it");
        json_decref(r);

        r = tool(s, "undo_transaction", "{}");
        is_str(sc_str(r, "outcome"), "undone", "undo_transaction undoes the newest");
        snprintf(path, sizeof(path), "%s/g.txt", ws_path);
        ok(access(path, F_OK) != 0, "its file is gone");
        json_decref(r);

        r = tool(s, "begin_transaction", "{}");
        const char *sid = sc_str(r, "tx");
        snprintf(args, sizeof(args), "{\"command\":\"echo s >s.txt\",\"tx\":\"%s\"}", sid ? sid : "");
        char rb[128];
        snprintf(rb, sizeof(rb), "{\"tx\":\"%s\",\"savepoint\":0}", sid ? sid : "");
        json_decref(r);
        r = tool(s, "run_command", args);
        is_str(sc_str(r, "outcome"), "pending", "a command in a session stays pending");
        json_decref(r);
        r = tool(s, "rollback_transaction", rb);
        ok(r && !json_is_true(json_object_get(r, "isError")), "rollback to savepoint 0");
        json_decref(r);

        r = tool(s, "commit_transaction", "{\"tx\":\"ffffffffff\"}");
        ok(json_is_true(json_object_get(r, "isError")) && !json_object_get(r, "structuredContent"),
           "an unknown tx is a tool error with text only: %s", text_of(r));
        json_decref(r);
}

static int count_entries(const char *path)
{
        DIR *d = opendir(path);
        struct dirent *de;
        int n = 0;

        while (d && (de = readdir(d)))
                n += de->d_name[0] != '.';
        if (d)
                closedir(d);
        return d ? n : -1;
}

int main(void)
{
        struct mcp_server *s = NULL;
        struct txbox_ws *ws = NULL;
        struct txbox_error err = {0};
        char ws_path[256], home[256];

        mcp_server_new(NULL, NULL, &s);
        test_protocol(s);
        test_errors(s);
        test_tools_list(s);
        test_fuzz(s);
        mcp_server_free(s);
        test_serve();

        if (!tap_mkdtemp(dir, sizeof(dir), "txbox-mcp"))
                return 1;
        snprintf(ws_path, sizeof(ws_path), "%s/ws", dir);
        snprintf(home, sizeof(home), "%s/home", dir);
        mkdir(ws_path, 0755);
        mkdir(home, 0755);
        setenv("HOME", home, 1);
        if (txbox_ws_open(ws_path, NULL, TXBOX_OPEN_RECOVER, &ws, &err) < 0) {
                ok(0, "open a workspace: %s", err.msg);
        } else {
                mcp_server_new(ws, NULL, &s);
                test_tools(s, ws_path);
                /* Once a command's answer is out, the server begins the next commands'
                 * transactions and starts their sandboxes, two deep: two claims, two
                 * layer dirs; closing the workspace drops them. */
                char active[512], txdir[512];
                snprintf(active, sizeof(active), "%s/active", txbox_ws_state_path(ws));
                snprintf(txdir, sizeof(txdir), "%s/tx", txbox_ws_state_path(ws));
                is_int(count_entries(active), 0, "calls handled outside the serve loop prepare nothing");
                int in[2], out[2];
                static const char req[] =
                        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
                        "{\"name\":\"run_command\",\"arguments\":{\"command\":\"true\"}}}\n";
                if (pipe(in) == 0 && pipe(out) == 0 &&
                    write(in[1], req, sizeof(req) - 1) == (ssize_t)sizeof(req) - 1) {
                        close(in[1]);
                        is_int(mcp_serve(s, in[0], out[1]), 0, "serve: one run_command");
                        close(in[0]);
                        close(out[0]);
                        close(out[1]);
                }
                mcp_server_free(s);
                int claims = count_entries(active), dirs = count_entries(txdir);
                is_int(claims, 2, "two prepared transactions hold a claim each while the server runs");
                txbox_ws_close(ws);
                is_int(count_entries(active), 0, "closing the workspace releases them");
                is_int(count_entries(txdir), dirs - 2, "and removes their layers");
        }
        tap_rmtree(dir);
        return tap_done();
}
