/* The MCP server: JSON-RPC 2.0 framing and dispatch, the tool table, and one handler per
 * tool.  JSON is built and parsed with jansson only. */
#define _GNU_SOURCE
#include <jansson.h>
#include <math.h>

#include "mcp.h"
#include "policy.h"
#include "record.h"
#include "tx.h"

#define DEFAULT_DIFF_CAP (256 * 1024)
#define LIST_DEFAULT 20
#define LIST_MAX 1000

static const char *const protocol_versions[] = {MCP_PROTOCOL_LATEST, "2025-06-18", "2025-03-26", "2024-11-05"};

struct mcp_server {
        struct txbox_ws *ws;
        struct mcp_opts opts;
        bool initialized;
        char version[32]; /* the negotiated protocol version */
        bool prepare;     /* a command ran: prepare the next one once the answer is out */
        struct txbox_run_opts prepare_opts;
};

static void mcp_log(struct mcp_server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mcp_log(struct mcp_server *s, const char *fmt, ...)
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

/* ---- tool results ---- */

struct tool_out {
        json_t *structured; /* NULL: none (only with is_error) */
        FILE *text;         /* the text block, for clients that read text only */
        char *text_buf;
        size_t text_len;
        bool is_error;
};

/* A failure the model should see (bad tx id, nothing to undo ...): isError with text only. */
static int tool_fail(struct tool_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int tool_fail(struct tool_out *o, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vfprintf(o->text, fmt, ap);
        va_end(ap);
        fputc('\n', o->text);
        o->is_error = true;
        return 0;
}

/* ---- argument specs: the inputSchema and its validation come from one table ---- */

enum arg_type { ARG_STRING, ARG_INTEGER, ARG_NUMBER };

struct arg_spec {
        const char *name;
        enum arg_type type;
        bool required;
        const char *desc;
        const char *const *choices; /* NULL-terminated, strings only */
        double min, max;            /* numbers only */
};

struct tool {
        const char *name;
        const char *desc;
        const struct arg_spec *args;
        size_t nargs;
        const char *const *out_required; /* keys structuredContent always has */
        bool read_only, destructive;
        int (*call)(struct mcp_server *s, json_t *args, struct tool_out *o);
};

static const char *const commit_modes[] = {"auto", "keep", "discard", NULL};

static json_t *arg_schema(const struct arg_spec *a)
{
        static const char *const type_names[] = {"string", "integer", "number"};
        json_t *p = json_pack("{s:s, s:s}", "type", type_names[a->type], "description", a->desc);

        json_nonnull(p);
        if (a->choices) {
                json_t *e = json_nonnull(json_array());
                for (const char *const *c = a->choices; *c; c++)
                        json_arr_add(e, json_string(*c));
                json_obj_set(p, "enum", e);
        }
        if (a->type != ARG_STRING) {
                json_obj_set(p, "minimum", a->type == ARG_INTEGER ? json_integer((json_int_t)a->min) : json_real(a->min));
                json_obj_set(p, "maximum", a->type == ARG_INTEGER ? json_integer((json_int_t)a->max) : json_real(a->max));
        }
        return p;
}

static json_t *input_schema(const struct tool *t)
{
        json_t *props = json_nonnull(json_object()), *req = json_nonnull(json_array());

        for (size_t i = 0; i < t->nargs; i++) {
                json_obj_set(props, t->args[i].name, arg_schema(&t->args[i]));
                if (t->args[i].required)
                        json_arr_add(req, json_string(t->args[i].name));
        }
        return json_nonnull(json_pack("{s:s, s:o, s:o, s:b}", "type", "object", "properties", props, "required", req,
                                      "additionalProperties", 0));
}

static json_t *output_schema(const struct tool *t)
{
        json_t *req = json_nonnull(json_array());
        for (const char *const *k = t->out_required; *k; k++)
                json_arr_add(req, json_string(*k));
        return json_nonnull(json_pack("{s:s, s:o}", "type", "object", "required", req));
}

/* Check one argument against its spec; fills why on failure. */
static bool arg_valid(const struct arg_spec *a, json_t *v, char *why, size_t size)
{
        static const char *const type_names[] = {"a string", "an integer", "a number"};
        bool type_ok = a->type == ARG_STRING ? json_is_string(v) : a->type == ARG_INTEGER ? json_is_integer(v) : json_is_number(v);

        if (!type_ok) {
                snprintf(why, size, "argument '%s' must be %s", a->name, type_names[a->type]);
                return false;
        }
        if (a->type == ARG_STRING && a->choices) {
                for (const char *const *c = a->choices; *c; c++)
                        if (!strcmp(*c, json_string_value(v)))
                                return true;
                int n = snprintf(why, size, "argument '%s' must be one of", a->name);
                for (const char *const *c = a->choices; *c && n > 0 && (size_t)n < size; c++)
                        n += snprintf(why + n, size - (size_t)n, "%s %s", c == a->choices ? "" : ",", *c);
                return false;
        }
        if (a->type == ARG_STRING && strlen(json_string_value(v)) != json_string_length(v)) {
                snprintf(why, size, "argument '%s' must not contain NUL characters", a->name);
                return false;
        }
        double d = a->type == ARG_STRING ? 0 : json_number_value(v);
        if (a->type != ARG_STRING && (!isfinite(d) || d < a->min || d > a->max)) {
                snprintf(why, size, "argument '%s' must be between %g and %g", a->name, a->min, a->max);
                return false;
        }
        return true;
}

/* Validate a tools/call's arguments against the tool's schema; false with why filled. */
static bool args_valid(const struct tool *t, json_t *args, char *why, size_t size)
{
        const char *key;
        json_t *v;

        json_object_foreach (args, key, v) {
                size_t i;
                for (i = 0; i < t->nargs && strcmp(t->args[i].name, key); i++)
                        ;
                if (i == t->nargs) {
                        snprintf(why, size, "tool '%s' has no argument '%.64s'", t->name, key);
                        return false;
                }
                if (!arg_valid(&t->args[i], v, why, size))
                        return false;
        }
        for (size_t i = 0; i < t->nargs; i++)
                if (t->args[i].required && !json_object_get(args, t->args[i].name)) {
                        snprintf(why, size, "tool '%s' needs argument '%s'", t->name, t->args[i].name);
                        return false;
                }
        return true;
}

static const char *arg_str(json_t *args, const char *name)
{
        return json_string_value(json_object_get(args, name)); /* NULL when absent */
}

/* ---- the text block ---- */

static void text_paths(FILE *f, const struct txbox_record *rec)
{
        static const char *const labels[] = {"added", "modified", "deleted"};

        if (!rec->npaths) {
                fputs("changes: none\n", f);
                return;
        }
        fprintf(f, "changes (%zu):\n", rec->npaths);
        for (size_t i = 0; i < rec->npaths && i < 200; i++)
                fprintf(f, "  %s %s\n", labels[rec->paths[i].change], rec->paths[i].path);
        if (rec->npaths > 200)
                fprintf(f, "  ... and %zu more\n", rec->npaths - 200);
}

static void text_record(FILE *f, const struct txbox_record *rec)
{
        fprintf(f, "tx %s: %s", rec->id, txbox_outcome_name(rec->outcome));
        if (rec->exit_code >= 0)
                fprintf(f, ", program exit status %d", rec->exit_code);
        if (rec->signal)
                fprintf(f, ", killed by signal %d", rec->signal);
        fputc('\n', f);
        if (rec->argv && rec->argv[0]) {
                fputs("command:", f);
                for (char **a = rec->argv; *a; a++)
                        fprintf(f, " %s", *a);
                fputc('\n', f);
        }
        if (rec->decision && !strcmp(rec->decision, "deny"))
                fprintf(f, "refused by policy rule %s: %s\n", rec->rule ? rec->rule : "?", rec->reason ? rec->reason : "");
        text_paths(f, rec);
        for (size_t i = 0; i < rec->nviolations; i++)
                fprintf(f, "violation %s on %s: %s\n", rec->violations[i].rule, rec->violations[i].path,
                        rec->violations[i].detail);
        if (rec->message)
                fprintf(f, "txbox: %s\n", rec->message);
}

/* ---- tools ---- */

static int call_run(struct mcp_server *s, json_t *args, struct tool_out *o)
{
        const char *mode = arg_str(args, "commit");
        json_t *timeout = json_object_get(args, "timeout_s");
        struct txbox_command cmd = {
                .shell = arg_str(args, "command"),
                .session = arg_str(args, "tx"),
                .mode = !mode || !strcmp(mode, "auto") ? TXBOX_COMMIT_AUTO
                        : !strcmp(mode, "keep")        ? TXBOX_COMMIT_KEEP
                                                       : TXBOX_COMMIT_DISCARD,
                .output_cap = s->opts.output_cap,
        };
        struct txbox_command_result res;
        struct txbox_error err = {0};

        cmd.opts.timeout_s = timeout ? json_number_value(timeout) : 0;
        s->prepare = true;
        s->prepare_opts = cmd.opts;
        if (txbox_command_run(s->ws, &cmd, &res, &err) < 0) {
                txbox_command_result_clear(&res);
                return tool_fail(o, "txbox could not start the transaction: %s", err.msg);
        }
        json_t *j = record_to_json(&res.rec);
        json_obj_set(j, "status", json_integer(res.status));
        json_obj_set(j, "why", json_text(res.why));
        json_obj_set(j, "stdout", json_text(res.out));
        json_obj_set(j, "stderr", json_text(res.err));
        json_obj_set(j, "stdout_truncated", json_boolean(res.out_truncated));
        json_obj_set(j, "stderr_truncated", json_boolean(res.err_truncated));
        json_obj_set(j, "truncated", json_boolean(res.out_truncated || res.err_truncated));
        o->structured = j;
        o->is_error = res.status != 0;

        fprintf(o->text, "exit status %d\n", res.status);
        if (res.why && (!res.rec.message || strcmp(res.why, res.rec.message)))
                fprintf(o->text, "txbox: %s\n", res.why);
        text_record(o->text, &res.rec);
        if (res.status == 126)
                fputs("Nothing ran and nothing changed. Adapt the command to the rule's reason.\n", o->text);
        fprintf(o->text, "--- stdout%s ---\n%s", res.out_truncated ? " (truncated)" : "", res.out);
        fprintf(o->text, "%s--- stderr%s ---\n%s", *res.out && res.out[strlen(res.out) - 1] != '\n' ? "\n" : "",
                res.err_truncated ? " (truncated)" : "", res.err);
        txbox_command_result_clear(&res);
        return 0;
}

static int call_check(struct mcp_server *s, json_t *args, struct tool_out *o)
{
        const struct policy *p = NULL;
        struct txbox_error err = {0};
        struct policy_result res;

        if (!s->ws)
                return tool_fail(o, "no workspace");
        if (ws_policy(s->ws, &p, &err) < 0)
                return tool_fail(o, "cannot load the policy: %s", err.msg);
        struct policy_ctx ctx = {.workspace = s->ws->path, .home = getenv("HOME"), .cwd = s->ws->path};
        /* A crash of the engine is this request's refusal, not the server's end. */
        ws_decide(s->ws, p, &ctx, arg_str(args, "command"), NULL, &res);
        o->is_error = !strcmp(res.rule, POLICY_RULE_FAILED);
        bool allow = res.decision == POLICY_ALLOW;
        o->structured = json_nonnull(json_pack(
                "{s:s, s:o, s:o, s:o, s:o}", "decision", policy_decision_name(res.decision), "rule",
                allow ? json_null() : json_text(res.rule), "reason", allow ? json_null() : json_text(res.reason), "command",
                allow ? json_null() : json_text(res.command), "offset",
                allow || res.offset < 0 ? json_null() : json_integer(res.offset)));
        if (allow)
                fputs("allow: the policy lets this command run\n", o->text);
        else
                fprintf(o->text, "%s by rule %s: %s\nin: %s\n", policy_decision_name(res.decision), res.rule, res.reason,
                        res.command);
        return 0;
}

static int call_list(struct mcp_server *s, json_t *args, struct tool_out *o)
{
        json_t *lim = json_object_get(args, "limit");
        struct txbox_record *recs = NULL;
        struct txbox_error err = {0};
        size_t n = 0;

        if (!s->ws || txbox_log(s->ws, lim ? (int)json_integer_value(lim) : LIST_DEFAULT, &recs, &n, &err) < 0)
                return tool_fail(o, "cannot read the audit log: %s", s->ws ? err.msg : "no workspace");
        json_t *arr = json_nonnull(json_array());
        fprintf(o->text, "%zu transaction%s, newest first:\n", n, n == 1 ? "" : "s");
        for (size_t i = 0; i < n; i++) {
                json_arr_add(arr, record_to_json(&recs[i]));
                fprintf(o->text, "%s %-11s %zu change%s  ", recs[i].id, txbox_outcome_name(recs[i].outcome),
                        recs[i].npaths, recs[i].npaths == 1 ? " " : "s");
                for (char **a = recs[i].argv; a && *a; a++)
                        fprintf(o->text, "%s%.200s", a == recs[i].argv ? "" : " ", *a);
                fputc('\n', o->text);
        }
        o->structured = json_nonnull(json_pack("{s:o}", "transactions", arr));
        txbox_records_free(recs, n);
        return 0;
}

static int call_show(struct mcp_server *s, json_t *args, struct tool_out *o)
{
        struct txbox_record rec = {0};
        struct txbox_error err = {0};
        _cleanup_free_ char *diff = NULL;
        size_t cap = s->opts.diff_cap ? s->opts.diff_cap : DEFAULT_DIFF_CAP;

        if (!s->ws || txbox_show(s->ws, arg_str(args, "tx"), &rec, &err) < 0)
                return tool_fail(o, "%s", s->ws ? err.msg : "no workspace");
        if (txbox_diff(s->ws, rec.id, &diff, &err) < 0) {
                free(diff);
                diff = xasprintf("(no diff: %s)\n", err.msg);
        }
        bool cut = strlen(diff) > cap;
        if (cut)
                diff[cap] = '\0';
        json_t *j = record_to_json(&rec);
        json_obj_set(j, "diff", json_text(diff));
        json_obj_set(j, "diff_truncated", json_boolean(cut));
        o->structured = j;
        text_record(o->text, &rec);
        fprintf(o->text, "--- diff%s ---\n%s", cut ? " (truncated)" : "", diff);
        txbox_record_clear(&rec);
        return 0;
}

static void record_result(struct tool_out *o, const struct txbox_record *rec, const char *verb)
{
        o->structured = record_to_json(rec);
        fprintf(o->text, "%s tx %s\n", verb, rec->id);
        text_record(o->text, rec);
}

static int call_commit(struct mcp_server *s, json_t *args, struct tool_out *o)
{
        struct txbox_tx *tx = NULL;
        struct txbox_error err = {0}, e2;
        int r;

        if (!s->ws)
                return tool_fail(o, "no workspace");
        if ((r = txbox_tx_load(s->ws, arg_str(args, "tx"), &tx, &err)) == 0 && (r = txbox_tx_evaluate(tx, &err)) >= 0)
                r = txbox_tx_commit(tx, &err);
        if (r == -EAGAIN) {
                /* First committer wins (as txbox commit): drop this one so it can be run again. */
                txbox_tx_rollback(tx, err.msg, &e2);
                record_result(o, txbox_tx_record(tx), "rolled back (conflict)");
                fprintf(o->text, "conflict: %s\nRunning the command again is safe.\n", err.msg);
                o->is_error = true;
        } else if (r < 0) {
                tool_fail(o, "cannot commit: %s", err.msg);
        } else {
                record_result(o, txbox_tx_record(tx), "committed");
        }
        txbox_tx_free(tx);
        return 0;
}

static int call_rollback(struct mcp_server *s, json_t *args, struct tool_out *o)
{
        json_t *sp = json_object_get(args, "savepoint");
        const char *id = arg_str(args, "tx");
        struct txbox_record rec = {0};
        struct txbox_error err = {0};
        struct txbox_tx *tx = NULL;
        int r;

        if (!s->ws)
                return tool_fail(o, "no workspace");
        if (sp) {
                if ((r = txbox_session_rollback_to(s->ws, id, (int)json_integer_value(sp), &err)) < 0 ||
                    (r = txbox_show(s->ws, id, &rec, &err)) < 0)
                        return tool_fail(o, "cannot roll back: %s", err.msg);
                record_result(o, &rec, "rolled back to its savepoint");
                txbox_record_clear(&rec);
                return 0;
        }
        if ((r = txbox_tx_load(s->ws, id, &tx, &err)) == 0)
                r = txbox_tx_rollback(tx, "rolled back by the MCP client", &err);
        if (r < 0)
                tool_fail(o, "cannot roll back: %s", err.msg);
        else
                record_result(o, txbox_tx_record(tx), "rolled back");
        txbox_tx_free(tx);
        return 0;
}

static int call_undo(struct mcp_server *s, json_t *args, struct tool_out *o)
{
        struct txbox_record rec = {0};
        struct txbox_error err = {0};

        if (!s->ws || txbox_undo(s->ws, arg_str(args, "tx"), &rec, &err) < 0)
                tool_fail(o, "cannot undo: %s", s->ws ? err.msg : "no workspace");
        else
                record_result(o, &rec, "undid");
        txbox_record_clear(&rec);
        return 0;
}

static int call_begin(struct mcp_server *s, json_t *args, struct tool_out *o)
{
        struct txbox_record rec = {0};
        struct txbox_error err = {0};

        (void)args;
        if (!s->ws || txbox_session_begin(s->ws, &rec, &err) < 0) {
                txbox_record_clear(&rec);
                return tool_fail(o, "cannot begin a session: %s", s->ws ? err.msg : "no workspace");
        }
        o->structured = json_nonnull(json_pack("{s:o}", "tx", json_text(rec.id)));
        fprintf(o->text, "session %s begun: pass tx=\"%s\" to run_command to add to it; commit_transaction or "
                         "rollback_transaction decide it as a whole\n", rec.id, rec.id);
        txbox_record_clear(&rec);
        return 0;
}

static const struct arg_spec run_args[] = {
        {"command", ARG_STRING, true, "the shell command (run as /bin/sh -c COMMAND in the workspace)"},
        {"commit", ARG_STRING, false,
         "auto (default): commit when it exits 0 and breaks no effect rule, else roll back; keep: leave it "
         "pending; discard: always roll back", commit_modes},
        {"timeout_s", ARG_NUMBER, false, "kill it after this many seconds (rolled back, status 124)", NULL, 0.001, 86400},
        {"tx", ARG_STRING, false, "a session from begin_transaction to add this command to, as one savepoint"},
};
static const struct arg_spec command_arg[] = {{"command", ARG_STRING, true, "the shell command to decide on"}};
static const struct arg_spec limit_arg[] = {
        {"limit", ARG_INTEGER, false, "how many transactions (default 20)", NULL, 1, LIST_MAX}};
static const struct arg_spec tx_arg[] = {{"tx", ARG_STRING, true, "the transaction id (or a unique prefix)"}};
static const struct arg_spec rollback_args[] = {
        {"tx", ARG_STRING, true, "the transaction id (or a unique prefix)"},
        {"savepoint", ARG_INTEGER, false, "for a session: drop only the savepoints above this one (0: all)", NULL, 0, 1000},
};
static const struct arg_spec undo_arg[] = {
        {"tx", ARG_STRING, false, "the committed transaction to revert (default: the newest committed one)"}};

static const char *const rec_keys[] = {"tx", "argv", "decision", "outcome", "changes", "violations", NULL};
static const char *const run_keys[] = {"tx", "argv", "decision", "outcome", "changes", "violations", "exit_code",
                                       "stdout", "stderr", "truncated", NULL};
static const char *const check_keys[] = {"decision", "rule", "reason", NULL};
static const char *const list_keys[] = {"transactions", NULL};
static const char *const show_keys[] = {"tx", "argv", "decision", "outcome", "changes", "violations", "diff", NULL};
static const char *const begin_keys[] = {"tx", NULL};

#define ARGS(a) a, ARRAY_SIZE(a)
static const struct tool tools[] = {
        {"run_command",
         "Run a shell command in the workspace as one transaction: sandboxed on a copy-on-write view, then "
         "committed (exit 0, no effect rule broken) or rolled back; refused before it runs when the policy forbids "
         "it (the result names the rule and the reason). Returns exit status, outcome, stdout/stderr and the "
         "changed files.",
         ARGS(run_args), run_keys, false, true, call_run},
        {"check_command", "The policy's decision on a shell command (allow, deny or ask) without running it.",
         ARGS(command_arg), check_keys, true, false, call_check},
        {"list_transactions", "The workspace's transactions, newest first.", ARGS(limit_arg), list_keys, true, false,
         call_list},
        {"show_transaction", "One transaction: its record, changed files and a unified diff of its text changes.",
         ARGS(tx_arg), show_keys, true, false, call_show},
        {"commit_transaction", "Commit a pending transaction or session (checked again; rolled back on a conflict).",
         ARGS(tx_arg), rec_keys, false, true, call_commit},
        {"rollback_transaction",
         "Roll back a pending transaction or session; with savepoint, drop only a session's savepoints above it.",
         ARGS(rollback_args), rec_keys, false, true, call_rollback},
        {"undo_transaction",
         "Revert a committed transaction (default: the newest); refuses, naming the paths, when a later change "
         "touched the same paths.",
         ARGS(undo_arg), rec_keys, false, true, call_undo},
        {"begin_transaction",
         "Open a session: a pending transaction that later run_command calls (with tx) add to, one savepoint each.",
         NULL, 0, begin_keys, false, false, call_begin},
};

static const struct tool *tool_find(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(tools); i++)
                if (!strcmp(tools[i].name, name))
                        return &tools[i];
        return NULL;
}

static json_t *tools_list(void)
{
        json_t *arr = json_nonnull(json_array());
        for (size_t i = 0; i < ARRAY_SIZE(tools); i++) {
                const struct tool *t = &tools[i];
                json_t *ann = json_pack("{s:b, s:b, s:b, s:b}", "readOnlyHint", t->read_only, "destructiveHint",
                                        t->destructive, "idempotentHint", t->read_only, "openWorldHint", 0);
                json_arr_add(arr, json_nonnull(json_pack("{s:s, s:s, s:o, s:o, s:o}", "name", t->name, "description",
                                                         t->desc, "inputSchema", input_schema(t), "outputSchema",
                                                         output_schema(t), "annotations", json_nonnull(ann))));
        }
        return json_nonnull(json_pack("{s:o}", "tools", arr));
}

/* ---- JSON-RPC ---- */

struct rpc_error {
        int code;
        char msg[512];
};

static json_t *rpc_fail(struct rpc_error *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static json_t *rpc_fail(struct rpc_error *e, int code, const char *fmt, ...)
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
                return rpc_fail(e, MCP_INVALID_PARAMS, "initialize needs params.protocolVersion (a string)");
        for (size_t i = 0; i < ARRAY_SIZE(protocol_versions); i++)
                if (!strcmp(want, protocol_versions[i]))
                        ver = protocol_versions[i];
        snprintf(s->version, sizeof(s->version), "%s", ver);
        s->initialized = true;
        mcp_log(s, "client asked for protocol %.40s; speaking %s", want, ver);
        return json_nonnull(json_pack(
                "{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", ver, "capabilities", "tools",
                "listChanged", 0, "serverInfo", "name", "txbox", "title", "txbox transactional shell", "version",
                TXBOX_VERSION, "instructions",
                "Every run_command is a transaction on the workspace: it runs sandboxed on a copy-on-write view and is "
                "committed only when it exits 0 and breaks no effect rule; otherwise nothing changes. Commands the "
                "policy forbids are refused before they run, with the rule and the reason: adapt instead of retrying. "
                "undo_transaction reverts a committed one."));
}

static json_t *do_call(struct mcp_server *s, json_t *params, struct rpc_error *e)
{
        const char *name = json_string_value(json_object_get(params, "name"));
        json_t *args = json_object_get(params, "arguments");
        char why[256];

        if (!name)
                return rpc_fail(e, MCP_INVALID_PARAMS, "tools/call needs params.name (a string)");
        const struct tool *t = tool_find(name);
        if (!t)
                return rpc_fail(e, MCP_INVALID_PARAMS, "unknown tool '%.64s'; tools/list names the tools", name);
        if (args && !json_is_object(args) && !json_is_null(args))
                return rpc_fail(e, MCP_INVALID_PARAMS, "params.arguments must be an object");
        json_t *empty = json_nonnull(json_object());
        if (!json_is_object(args))
                args = empty;
        if (!args_valid(t, args, why, sizeof(why))) {
                json_decref(empty);
                return rpc_fail(e, MCP_INVALID_PARAMS, "%s", why);
        }
        struct tool_out o = {0};
        o.text = open_memstream(&o.text_buf, &o.text_len);
        if (!o.text)
                abort(); /* out of memory, as xmalloc */
        if (s->ws)
                t->call(s, args, &o);
        else
                tool_fail(&o, "no workspace is open");
        fclose(o.text);
        json_decref(empty);
        json_t *content = json_nonnull(json_pack("[{s:s, s:o}]", "type", "text", "text", json_text(o.text_buf)));
        free(o.text_buf);
        json_t *res = json_nonnull(json_pack("{s:o, s:b}", "content", content, "isError", o.is_error));
        if (o.structured)
                json_obj_set(res, "structuredContent", o.structured);
        mcp_log(s, "%s: %s", t->name, o.is_error ? "error" : "ok");
        return res;
}

/* Answer a request: its result, or NULL with e filled. */
static json_t *dispatch(struct mcp_server *s, const char *method, json_t *params, struct rpc_error *e)
{
        if (params && !json_is_object(params))
                return rpc_fail(e, MCP_INVALID_PARAMS, "params must be an object");
        if (!strcmp(method, "initialize"))
                return do_initialize(s, params, e);
        if (!strcmp(method, "ping"))
                return json_nonnull(json_object());
        if (!strcmp(method, "tools/list"))
                return tools_list();
        if (!strcmp(method, "tools/call"))
                return do_call(s, params, e);
        return rpc_fail(e, MCP_METHOD_NOT_FOUND, "method '%.64s' not found", method);
}

static char *rpc_reply(json_t *id, json_t *result, const struct rpc_error *e)
{
        json_t *r = json_nonnull(json_pack("{s:s, s:O}", "jsonrpc", "2.0", "id", id ? id : json_null()));
        if (result)
                json_obj_set(r, "result", result);
        else
                json_obj_set(r, "error", json_nonnull(json_pack("{s:i, s:o}", "code", e->code, "message", json_text(e->msg))));
        return json_dump_compact(r);
}

static char *rpc_error_reply(json_t *id, int code, const char *msg)
{
        struct rpc_error e = {.code = code};
        snprintf(e.msg, sizeof(e.msg), "%s", msg);
        return rpc_reply(id, NULL, &e);
}

static bool id_valid(json_t *id)
{
        return json_is_string(id) || json_is_integer(id);
}

static char *handle_value(struct mcp_server *s, json_t *m)
{
        if (json_is_array(m))
                return rpc_error_reply(NULL, MCP_INVALID_REQUEST, "batches are not supported: send one message per line");
        if (!json_is_object(m))
                return rpc_error_reply(NULL, MCP_INVALID_REQUEST, "a message must be a JSON object");
        json_t *id = json_object_get(m, "id"), *method = json_object_get(m, "method");
        if (id && !id_valid(id))
                id = NULL; /* never echo an id of the wrong type */
        if (!json_is_string(json_object_get(m, "jsonrpc")) || strcmp(json_string_value(json_object_get(m, "jsonrpc")), "2.0"))
                return rpc_error_reply(id, MCP_INVALID_REQUEST, "jsonrpc must be \"2.0\"");
        if (!method) {
                if (json_object_get(m, "result") || json_object_get(m, "error"))
                        return NULL; /* a response: this server sends no requests, so nothing waits for it */
                return rpc_error_reply(id, MCP_INVALID_REQUEST, "a request needs a method");
        }
        if (!json_is_string(method))
                return rpc_error_reply(id, MCP_INVALID_REQUEST, "method must be a string");
        if (!json_object_get(m, "id")) { /* a notification: never answered */
                mcp_log(s, "notification %.64s", json_string_value(method));
                return NULL;
        }
        if (!id)
                return rpc_error_reply(NULL, MCP_INVALID_REQUEST, "id must be a string or an integer");
        struct rpc_error e = {0};
        json_t *result = dispatch(s, json_string_value(method), json_object_get(m, "params"), &e);
        return rpc_reply(id, result, &e);
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
                return rpc_error_reply(NULL, MCP_INVALID_REQUEST, "message too large");
        json_t *m = json_loadb(msg, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
        if (!m) {
                mcp_log(s, "parse error: %s", jerr.text);
                char text[300];
                snprintf(text, sizeof(text), "parse error: %s", jerr.text);
                return rpc_error_reply(NULL, MCP_PARSE_ERROR, text);
        }
        char *reply = handle_value(s, m);
        json_decref(m);
        return reply;
}

/* ---- the stdio loop ---- */

static int write_line(int fd, const char *line)
{
        size_t len = strlen(line), off = 0;

        while (off <= len) {
                /* the line, then its newline: two writes keep the buffer untouched */
                const char *p = off < len ? line + off : "\n";
                size_t n = off < len ? len - off : 1;
                ssize_t w = write(fd, p, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0)
                        return -errno;
                off += (size_t)w;
        }
        return 0;
}

struct line_reader {
        char *buf;
        size_t len, cap, max;
        bool too_long; /* the current line passed max: its bytes are dropped until its newline */
};

static int answer(struct mcp_server *s, int out_fd, struct line_reader *lr)
{
        char *reply;
        int r = 0;

        if (lr->too_long) {
                char msg[128];
                snprintf(msg, sizeof(msg), "message too large: the limit is %zu bytes", lr->max);
                mcp_log(s, "%s", msg);
                reply = rpc_error_reply(NULL, MCP_INVALID_REQUEST, msg);
        } else {
                reply = mcp_handle(s, lr->buf, lr->len);
        }
        if (reply)
                r = write_line(out_fd, reply);
        free(reply);
        lr->len = 0;
        lr->too_long = false;
        /* The next command's sandbox gets ready while the client reads this answer (and its
         * model thinks): started before the answer, it would delay it. */
        if (s->prepare && s->ws) {
                s->prepare = false;
                command_prepare_upto(s->ws, &s->prepare_opts, WS_PREPARED_MAX);
        }
        return r;
}

static void take(struct line_reader *lr, const char *p, size_t n)
{
        if (!n) /* an empty line before any other: no buffer yet to add nothing to */
                return;
        if (lr->too_long || lr->len + n > lr->max) {
                lr->too_long = true;
                lr->len = 0;
                return;
        }
        if (lr->len + n > lr->cap) {
                lr->cap = lr->len + n > 2 * lr->cap ? lr->len + n : 2 * lr->cap;
                lr->buf = xrealloc(lr->buf, lr->cap);
        }
        memcpy(lr->buf + lr->len, p, n);
        lr->len += n;
}

int mcp_serve(struct mcp_server *s, int in_fd, int out_fd)
{
        struct line_reader lr = {.max = s->opts.max_message ? s->opts.max_message : MCP_MAX_MESSAGE};
        char chunk[65536];
        int r = 0;

        for (;;) {
                ssize_t n = read(in_fd, chunk, sizeof(chunk));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        break;
                }
                if (n == 0) { /* end of input: a last line without its newline still counts */
                        if (lr.len || lr.too_long)
                                r = answer(s, out_fd, &lr);
                        break;
                }
                for (char *p = chunk, *end = chunk + n; p < end && r == 0;) {
                        char *nl = memchr(p, '\n', (size_t)(end - p));
                        take(&lr, p, (size_t)((nl ? nl : end) - p));
                        if (nl)
                                r = answer(s, out_fd, &lr);
                        p = nl ? nl + 1 : end;
                }
                if (r < 0)
                        break;
        }
        free(lr.buf);
        return r;
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
