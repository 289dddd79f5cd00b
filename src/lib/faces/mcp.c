/* The MCP server: JSON-RPC 2.0 framing and dispatch, the tool table, and one handler per
 * tool.  JSON is built and parsed with jansson only. */
#define _GNU_SOURCE
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <stddef.h>

#include "faces/mcp.h"
#include "policy/policy.h"
#include "store/record.h"
#include "txn/tx.h"

#define DEFAULT_DIFF_CAP (256 * 1024)
#define LIST_DEFAULT 20
#define LIST_MAX 1000

static const char *const protocol_versions[] = {MCP_PROTOCOL_LATEST, "2025-06-18", "2025-03-26",
                                                "2024-11-05"};

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

struct mcp_io;
static struct txbox_watch *mcp_watch(struct mcp_server *s);
static void mcp_cancelled_by(struct mcp_server *s, int signo);
static bool mcp_urgent(struct mcp_server *s, bool pings);

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
        const char *out_schema; /* the outputSchema's properties and required keys (JSON text) */
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
                json_obj_set(p, "minimum",
                             a->type == ARG_INTEGER ? json_integer((json_int_t)a->min) : json_real(a->min));
                json_obj_set(p, "maximum",
                             a->type == ARG_INTEGER ? json_integer((json_int_t)a->max) : json_real(a->max));
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
        return json_nonnull(json_pack("{s:s, s:o, s:o, s:b}", "type", "object", "properties", props,
                                      "required", req, "additionalProperties", 0));
}

/* The outputSchema: clients (the TypeScript SDK among them) validate structuredContent with
 * it, so it says what every result carries; other keys may be added (docs/CONTRACT.md). */
static json_t *output_schema(const struct tool *t)
{
        json_error_t jerr;
        json_t *o = json_loads(t->out_schema, 0, &jerr);

        if (!o) /* a bug in the table below: tests/unit/test_mcp.c parses every schema */
                abort();
        json_obj_set(o, "type", json_string("object"));
        return o;
}

/* Check one argument against its spec; fills why on failure. */
static bool arg_valid(const struct arg_spec *a, json_t *v, char *why, size_t size)
{
        static const char *const type_names[] = {"a string", "an integer", "a number"};
        bool type_ok = a->type == ARG_STRING    ? json_is_string(v)
                       : a->type == ARG_INTEGER ? json_is_integer(v)
                                                : json_is_number(v);

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
                fprintf(f, "refused by policy rule %s: %s\n", rec->rule ? rec->rule : "?",
                        rec->reason ? rec->reason : "");
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

        cmd.opts.timeout_s = timeout             ? json_number_value(timeout)
                             : s->opts.timeout_s ? s->opts.timeout_s
                                                 : MCP_DEFAULT_TIMEOUT;
        s->prepare = true;
        s->prepare_opts = cmd.opts;
        cmd.opts.watch = mcp_watch(s); /* ping, cancellation and a client gone, while it runs */
        if (txbox_command_run(s->ws, &cmd, &res, &err) < 0) {
                txbox_command_result_clear(&res);
                return tool_fail(o, "txbox could not start the transaction: %s", err.msg);
        }
        if (res.cancelled) { /* rolled back; a cancelled request gets no answer (the spec) */
                mcp_log(s, "run_command cancelled: %s", res.rec.message ? res.rec.message : "");
                s->drop_reply = true;
                mcp_cancelled_by(s, res.cancel_signal);
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

        /* The summary after the JSON text block: the output is in the JSON already. */
        fprintf(o->text, "exit status %d\n", res.status);
        if (res.why && (!res.rec.message || strcmp(res.why, res.rec.message)))
                fprintf(o->text, "txbox: %s\n", res.why);
        text_record(o->text, &res.rec);
        if (res.status == TXBOX_EXIT_DENIED)
                fputs("Nothing ran and nothing changed. Adapt the command to the rule's reason.\n", o->text);
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
                allow ? json_null() : json_text(res.rule), "reason",
                allow ? json_null() : json_text(res.reason), "command",
                allow ? json_null() : json_text(res.command), "offset", allow || res.offset < 0 ? json_null()
                : json_integer(res.offset)));
        if (allow)
                fputs("allow: the policy lets this command run\n", o->text);
        else
                fprintf(o->text, "%s by rule %s: %s\nin: %s\n", policy_decision_name(res.decision), res.rule,
                        res.reason, res.command);
        return 0;
}

static int call_list(struct mcp_server *s, json_t *args, struct tool_out *o)
{
        json_t *lim = json_object_get(args, "limit");
        struct txbox_record *recs = NULL;
        struct txbox_error err = {0};
        size_t n = 0;

        if (!s->ws || txbox_log(s->ws, lim ? (int)json_integer_value(lim) : LIST_DEFAULT, &recs, &n,
                                &err) < 0)
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
        if ((r = txbox_tx_load(s->ws, arg_str(args, "tx"), &tx, &err)) == 0 &&
            (r = txbox_tx_evaluate(tx, &err)) >= 0)
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
        fprintf(o->text,
                "session %s begun: pass tx=\"%s\" to run_command to add to it; commit_transaction or "
                "rollback_transaction decide it as a whole\n",
                rec.id, rec.id);
        txbox_record_clear(&rec);
        return 0;
}

static const struct arg_spec run_args[] = {
        {"command", ARG_STRING, true, "the shell command (run as /bin/sh -c COMMAND in the workspace)"},
        {"commit", ARG_STRING, false,
         "auto (default): commit when it exits 0 and breaks no effect rule, else roll back; keep: leave it "
         "pending; discard: always roll back",
         commit_modes},
        {"timeout_s", ARG_NUMBER, false, "kill it after this many seconds (rolled back, status 124)", NULL,
         0.001, 86400},
        {"tx", ARG_STRING, false,
         "a session from begin_transaction to add this command to, as one savepoint"},
};
static const struct arg_spec command_arg[] = {{"command", ARG_STRING, true,
                                               "the shell command to decide on"}};
static const struct arg_spec limit_arg[] = {
        {"limit", ARG_INTEGER, false, "how many transactions (default 20)", NULL, 1, LIST_MAX}};
static const struct arg_spec tx_arg[] = {{"tx", ARG_STRING, true, "the transaction id (or a unique prefix)"}};
static const struct arg_spec rollback_args[] = {
        {"tx", ARG_STRING, true, "the transaction id (or a unique prefix)"},
        {"savepoint", ARG_INTEGER, false, "for a session: drop only the savepoints above this one (0: all)",
         NULL, 0, 1000},
};
static const struct arg_spec undo_arg[] = {
        {"tx", ARG_STRING, false, "the committed transaction to revert (default: the newest committed one)"}};

/* Output schemas (JSON text).  The record is docs/CONTRACT.md's "JSON records". */
#define S_NSTR(d) "{\"type\": [\"string\", \"null\"], \"description\": \"" d "\"}"
#define S_NINT(d) "{\"type\": [\"integer\", \"null\"], \"description\": \"" d "\"}"
#define S_STRS "{\"type\": \"array\", \"items\": {\"type\": \"string\"}}"
#define REC_PROPS                                                                                          \
        "\"tx\": {\"type\": \"string\", \"description\": \"the transaction id\"}, "                        \
        "\"argv\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, "                              \
        "\"description\": \"what ran\"}, "                                                                 \
        "\"decision\": " S_NSTR("the policy's decision: allow or deny") ", "                               \
        "\"rule\": " S_NSTR("the policy rule that refused it") ", "                                        \
        "\"reason\": " S_NSTR("why the rule refused it, and what to do instead") ", "                      \
        "\"exit_code\": " S_NINT("the program's exit status (null: killed or never ran)") ", "             \
        "\"signal\": " S_NINT("the signal that killed it") ", "                                            \
        "\"outcome\": {\"type\": \"string\", \"description\": \"committed, rolled_back, denied, "          \
        "pending, undone or running\"}, "                                                                  \
        "\"changes\": {\"type\": \"object\", \"properties\": {\"added\": " S_STRS ", "                     \
        "\"modified\": " S_STRS                                                                            \
        ", \"deleted\": " S_STRS "}, \"required\": [\"added\", \"modified\", \"deleted\"], "               \
        "\"description\": \"paths relative to the workspace\"}, "                                          \
        "\"violations\": {\"type\": \"array\", \"items\": {\"type\": \"object\", "                         \
        "\"properties\": {\"rule\": "                                                                      \
        "{\"type\": \"string\"}, \"path\": {\"type\": \"string\"}, \"detail\": {\"type\": \"string\"}}}, " \
        "\"description\": \"effect rules broken (the transaction was rolled back)\"}, "                    \
        "\"duration_ms\": " S_NINT("how long it took") ", "                                                \
        "\"cwd\": " S_NSTR("where it ran") ", \"message\": " S_NSTR("what txbox did, in words")
#define REC_REQ                                                                                          \
        "\"tx\", \"argv\", \"decision\", \"rule\", \"reason\", \"exit_code\", \"signal\", \"outcome\", " \
        "\"changes\", \"violations\""
static const char rec_schema[] = "{\"properties\": {" REC_PROPS "}, \"required\": [" REC_REQ "]}";
static const char run_schema[] =
        "{\"properties\": {" REC_PROPS ", "
        "\"status\": {\"type\": \"integer\", \"description\": \"the exit status txbox run would return: the "
                "program's, "
        "126 refused, 124 timed out, 123 an effect rule broken, 122 a conflict, 125 txbox failed\"}, "
        "\"why\": " S_NSTR("txbox's one-line reason for a non-zero status") ", "
        "\"stdout\": {\"type\": \"string\"}, \"stderr\": {\"type\": \"string\"}, "
        "\"stdout_truncated\": {\"type\": \"boolean\"}, \"stderr_truncated\": {\"type\": \"boolean\"}, "
        "\"truncated\": {\"type\": \"boolean\", \"description\": \"stdout or stderr was cut at the cap\"}}, "
        "\"required\": [" REC_REQ ", \"status\", \"stdout\", \"stderr\", \"truncated\"]}";
static const char check_schema[] =
        "{\"properties\": {\"decision\": {\"type\": \"string\", \"enum\": [\"allow\", \"deny\", \"ask\"]}, "
        "\"rule\": " S_NSTR("the rule that decided (null: allowed)") ", \"reason\": " S_NSTR("why") ", "
        "\"command\": " S_NSTR("the part of the command the rule matched") ", "
        "\"offset\": " S_NINT("where that part starts in the command") "}, "
        "\"required\": [\"decision\", \"rule\", \"reason\"]}";
static const char list_schema[] =
        "{\"properties\": {\"transactions\": {\"type\": \"array\", \"items\": {\"type\": \"object\", "
        "\"properties\": {" REC_PROPS
        "}}, \"description\": \"newest first\"}}, \"required\": [\"transactions\"]}";
static const char show_schema[] =
        "{\"properties\": {" REC_PROPS
        ", \"diff\": {\"type\": \"string\", \"description\": \"a unified diff of its "
        "text changes\"}, \"diff_truncated\": {\"type\": \"boolean\"}}, \"required\": [" REC_REQ
        ", \"diff\"]}";
static const char begin_schema[] =
        "{\"properties\": {\"tx\": {\"type\": \"string\", \"description\": \"the session's id: pass it as tx "
                "to "
        "run_command\"}}, \"required\": [\"tx\"]}";

#define ARGS(a) a, ARRAY_SIZE(a)
static const struct tool tools[] = {
        {"run_command",
         "Run a shell command in the workspace as one transaction: sandboxed on a copy-on-write view, then "
         "committed (exit 0, no effect rule broken) or rolled back; refused before it runs when the policy "
         "forbids it (the result names the rule and the reason). Returns exit status, outcome, stdout/stderr "
         "and the changed files.",
         ARGS(run_args), run_schema, false, true, call_run},
        {"check_command", "The policy's decision on a shell command (allow, deny or ask) without running it.",
         ARGS(command_arg), check_schema, true, false, call_check},
        {"list_transactions", "The workspace's transactions, newest first.", ARGS(limit_arg), list_schema,
         true, false,
         call_list},
        {"show_transaction",
         "One transaction: its record, changed files and a unified diff of its text changes.",
         ARGS(tx_arg), show_schema, true, false, call_show},
        {"commit_transaction",
         "Commit a pending transaction or session (checked again; rolled back on a conflict).",
         ARGS(tx_arg), rec_schema, false, true, call_commit},
        {"rollback_transaction",
         "Roll back a pending transaction or session; with savepoint, drop only a session's savepoints above "
                 "it.",
         ARGS(rollback_args), rec_schema, false, true, call_rollback},
        {"undo_transaction",
         "Revert a committed transaction (default: the newest); refuses, naming the paths, when a later "
         "change touched the same paths.",
         ARGS(undo_arg), rec_schema, false, true, call_undo},
        {"begin_transaction",
         "Open a session: a pending transaction that later run_command calls (with tx) add to, one savepoint "
                 "each.",
         NULL, 0, begin_schema, false, false, call_begin},
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
                json_t *ann = json_pack("{s:b, s:b, s:b, s:b}", "readOnlyHint", t->read_only,
                                        "destructiveHint",
                                        t->destructive, "idempotentHint", t->read_only, "openWorldHint", 0);
                json_arr_add(arr, json_nonnull(json_pack("{s:s, s:s, s:o, s:o, s:o}", "name", t->name,
                                                         "description", t->desc, "inputSchema",
                                                         input_schema(t), "outputSchema", output_schema(t),
                                                         "annotations", json_nonnull(ann))));
        }
        return json_nonnull(json_pack("{s:o}", "tools", arr));
}

/* ---- JSON-RPC ---- */

struct rpc_error {
        int code;
        char msg[512];
};

static json_t *rpc_fail(struct rpc_error *e, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
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
                "listChanged", 0, "serverInfo", "name", "txbox", "title", "txbox transactional shell",
                "version", TXBOX_VERSION, "instructions",
                "Every run_command is a transaction on the workspace: it runs sandboxed on a copy-on-write "
                "view and is "
                "committed only when it exits 0 and breaks no effect rule; otherwise nothing changes. "
                "Commands the "
                "policy forbids are refused before they run, with the rule and the reason: adapt instead of "
                "retrying. undo_transaction reverts a committed one."));
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
                return rpc_fail(e, MCP_INVALID_PARAMS, "unknown tool '%.64s'; tools/list names the tools",
                                name);
        if (args && !json_is_object(args) && !json_is_null(args))
                return rpc_fail(e, MCP_INVALID_PARAMS, "params.arguments must be an object");
        json_t *empty = json_nonnull(json_object());
        if (!json_is_object(args))
                args = empty;
        struct tool_out o = {0};
        o.text = open_memstream(&o.text_buf, &o.text_len);
        if (!o.text)
                abort(); /* out of memory, as xmalloc */
        /* Bad arguments are the tool's error, not the protocol's (MCP 2025-11-25): the model
         * reads the message and can correct its call. */
        if (!args_valid(t, args, why, sizeof(why)))
                tool_fail(&o, "invalid arguments: %s; nothing ran", why);
        else if (s->ws)
                t->call(s, args, &o);
        else
                tool_fail(&o, "no workspace is open");
        fclose(o.text);
        json_decref(empty);
        json_t *content = json_nonnull(json_array());
        /* Clients that read text only get the structured result as JSON text (the spec's
         * advice), then the summary in words. */
        if (o.structured) {
                char *dump = json_dump_compact(json_incref(o.structured));
                json_arr_add(content,
                             json_nonnull(json_pack("{s:s, s:o}", "type", "text", "text", json_text(dump))));
                free(dump);
        }
        if (o.text_len || !o.structured)
                json_arr_add(content, json_nonnull(json_pack("{s:s, s:o}", "type", "text", "text",
                                                             json_text(o.text_buf))));
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
                json_obj_set(
                        r, "error",
                        json_nonnull(json_pack("{s:i, s:o}", "code", e->code, "message", json_text(e->msg))));
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
                return rpc_error_reply(NULL, MCP_INVALID_REQUEST,
                                       "batches are not supported: send one message per line");
        if (!json_is_object(m))
                return rpc_error_reply(NULL, MCP_INVALID_REQUEST, "a message must be a JSON object");
        json_t *id = json_object_get(m, "id"), *method = json_object_get(m, "method");
        if (id && !id_valid(id))
                id = NULL; /* never echo an id of the wrong type */
        if (!json_is_string(json_object_get(m, "jsonrpc")) ||
            strcmp(json_string_value(json_object_get(m, "jsonrpc")), "2.0"))
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

/* An over-long line cannot be parsed, but its answer must carry its id, or the client waits
 * for an answer that never comes.  The id is found by a scan that keeps no more than the id
 * itself: the top-level object's "id" member, wherever it is in the line. */
#define ID_MAX 256
struct id_scan {
        int depth;
        bool in_str, esc, want_key, in_key, is_id, capture, overflow, dup;
        char key[4];
        size_t klen;
        char val[ID_MAX];
        size_t vlen;
        json_t *id;
};

static void idscan_keep(struct id_scan *z, char c)
{
        if (z->vlen < sizeof(z->val))
                z->val[z->vlen++] = c;
        else
                z->overflow = true;
}

static void idscan_end(struct id_scan *z)
{
        json_t *v = z->overflow ? NULL : json_loadb(z->val, z->vlen, JSON_DECODE_ANY, NULL);

        z->capture = false;
        if (v && id_valid(v) && !z->id && !z->dup)
                z->id = json_incref(v);
        else if (z->id) /* a second "id": which one the client meant is unknowable */
                z->dup = true;
        json_decref(v);
}

static void idscan(struct id_scan *z, const char *p, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                char c = p[i];
                if (z->in_str) {
                        bool closing = !z->esc && c == '"';
                        z->esc = !z->esc && c == '\\';
                        if (z->capture)
                                idscan_keep(z, c);
                        else if (z->in_key && !closing && z->klen++ < sizeof(z->key))
                                z->key[z->klen - 1] = c;
                        if (closing && z->in_key) {
                                z->in_key = false;
                                z->is_id = z->klen == 2 && !memcmp(z->key, "id", 2);
                        }
                        z->in_str = !closing;
                        continue;
                }
                bool member_end = z->depth == 1 && (c == ',' || c == '}');
                if (member_end && z->capture)
                        idscan_end(z);
                else if (z->capture && !strchr(" \t\r\n", c))
                        idscan_keep(z, c);
                switch (c) {
                case '{': z->want_key = ++z->depth == 1; break;
                case '[': z->depth++; break;
                case '}': case ']': z->depth--; break;
                case ',': z->want_key = z->depth == 1; break;
                case ':':
                        z->capture = z->depth == 1 && z->is_id;
                        z->is_id = false;
                        z->vlen = 0;
                        z->overflow = false;
                        break;
                case '"':
                        z->in_str = true;
                        z->in_key = z->depth == 1 && z->want_key;
                        z->klen = 0;
                        z->want_key = false;
                        break;
                }
        }
}

/* The id of an over-long line, or NULL (json null) when it had none or it was unclear. */
static json_t *idscan_take(struct id_scan *z)
{
        json_t *id = z->dup ? NULL : z->id;
        if (z->dup)
                json_decref(z->id);
        memset(z, 0, sizeof(*z));
        return id;
}

/* A complete line not yet handled. */
struct msg {
        char *buf;
        size_t len;
        bool too_long;  /* over the cap: its bytes are gone, id keeps its id */
        bool scanned;   /* looked at by mcp_urgent */
        json_t *id;     /* a request's id (too long, or once scanned) */
};

#define QUEUE_MAX 256
#define QUEUE_BYTES (64u * 1024 * 1024)

struct mcp_io {
        struct mcp_server *s;
        int in_fd, out_fd;
        char *buf; /* the line being read */
        size_t len, cap, max;
        bool too_long;
        struct id_scan scan;
        struct msg q[QUEUE_MAX];
        size_t nq, qbytes;
        char chunk[4096]; /* read but not yet split into lines */
        size_t coff, clen;
        bool eof;  /* stdin ended */
        bool gone; /* the client is gone, or a signal ends the server: answer nothing more */
        int err;   /* a read or write failed (-errno) */
        struct txbox_watch watch;
};

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

static void send_line(struct mcp_io *io, char *line)
{
        int r = line && !io->err ? write_line(io->out_fd, line) : 0;
        if (r < 0) {
                io->err = r;
                io->gone = true; /* nobody reads our answers any more */
        }
        free(line);
}

static void msg_free(struct msg *m)
{
        free(m->buf);
        json_decref(m->id);
}

static void queue_drop(struct mcp_io *io, size_t i)
{
        io->qbytes -= io->q[i].len;
        msg_free(&io->q[i]);
        memmove(io->q + i, io->q + i + 1, (io->nq - i - 1) * sizeof(io->q[0]));
        io->nq--;
}

/* The line just read is complete: queue it (the buffer moves into the queue). */
static void line_done(struct mcp_io *io)
{
        struct msg m = {.too_long = io->too_long};

        if (io->too_long) {
                m.id = idscan_take(&io->scan);
        } else if (io->len) {
                m.buf = io->buf, m.len = io->len;
                io->buf = NULL, io->cap = 0;
        }
        io->len = 0;
        io->too_long = false;
        if (!m.buf && !m.too_long)
                return; /* an empty line */
        io->q[io->nq++] = m; /* room was made before reading (queue_full) */
        io->qbytes += m.len;
}

static void take(struct mcp_io *io, const char *p, size_t n)
{
        if (!n)
                return;
        if (!io->too_long && io->len + n > io->max) {
                io->too_long = true;
                idscan(&io->scan, io->buf, io->len); /* the line so far, then the rest as it comes */
                io->len = 0;
        }
        if (io->too_long) {
                idscan(&io->scan, p, n);
                return;
        }
        if (io->len + n > io->cap) {
                io->cap = io->len + n > 2 * io->cap ? io->len + n : 2 * io->cap;
                io->buf = xrealloc(io->buf, io->cap);
        }
        memcpy(io->buf + io->len, p, n);
        io->len += n;
}

/* While a command runs, the client may send more than can wait: then it waits (its writes
 * block) until the command is done. */
static bool queue_full(const struct mcp_io *io)
{
        return io->nq >= QUEUE_MAX || io->qbytes > QUEUE_BYTES;
}

/* Split what was read into lines while the queue has room; then read once more from the
 * client when nothing is left over. */
static void fill(struct mcp_io *io)
{
        ssize_t n;

        if (io->coff == io->clen && !io->eof) {
                while ((n = read(io->in_fd, io->chunk, sizeof(io->chunk))) < 0 && errno == EINTR)
                        ;
                if (n <= 0) { /* end of input: a last line without its newline still counts */
                        if (n < 0)
                                io->err = -errno;
                        if (io->len || io->too_long)
                                line_done(io);
                        io->eof = true;
                        return;
                }
                io->coff = 0, io->clen = (size_t)n;
        }
        while (io->coff < io->clen && io->nq < QUEUE_MAX) {
                char *p = io->chunk + io->coff, *end = io->chunk + io->clen;
                char *nl = memchr(p, '\n', (size_t)(end - p));
                take(io, p, (size_t)((nl ? nl : end) - p));
                if (nl)
                        line_done(io);
                io->coff = (size_t)((nl ? nl + 1 : end) - io->chunk);
        }
}

/* What a queued line is, parsed once. */
enum msg_kind { MSG_OTHER, MSG_PING, MSG_CANCEL };

static enum msg_kind msg_classify(struct msg *m, json_t **cancel_id)
{
        /* (a ping stays unscanned: it is looked at again while a command runs) */
        json_t *j = m->too_long ? NULL : json_loadb(m->buf, m->len, JSON_REJECT_DUPLICATES, NULL);
        const char *method = json_string_value(json_object_get(j, "method"));
        json_t *id = json_object_get(j, "id");
        enum msg_kind k = MSG_OTHER;

        if (method && id && id_valid(id) && !strcmp(method, "ping") && !json_object_get(j, "params"))
                k = MSG_PING;
        else if (method && !id && !strcmp(method, "notifications/cancelled"))
                k = MSG_CANCEL;
        m->scanned = k != MSG_PING;
        if (method && id && id_valid(id) && !m->id)
                m->id = json_incref(id);
        *cancel_id = k == MSG_CANCEL ? json_incref(json_object_get(json_object_get(j, "params"), "requestId"))
                                     : NULL;
        json_decref(j);
        return k;
}

/* Handle what cannot wait for the running request: cancellations of queued requests drop
 * them, and, while a command runs (pings), pings are answered.  Returns true when the
 * running request was cancelled. */
static bool mcp_urgent(struct mcp_server *s, bool pings)
{
        struct mcp_io *io = s->io;
        bool cancel = false;

        for (size_t i = 0; io && i < io->nq;) {
                json_t *target = NULL;
                enum msg_kind k = io->q[i].scanned ? MSG_OTHER : msg_classify(&io->q[i], &target);
                if (k == MSG_PING && !pings) {
                        i++;
                        continue;
                }
                if (k == MSG_PING) {
                        send_line(io, rpc_reply(io->q[i].id, json_nonnull(json_object()), NULL));
                        queue_drop(io, i);
                        continue;
                }
                if (k == MSG_CANCEL) {
                        queue_drop(io, i);
                        if (target && s->current_id && json_equal(target, s->current_id))
                                cancel = true;
                        for (size_t j = 0; target && j < io->nq; j++)
                                if (io->q[j].id && json_equal(io->q[j].id, target)) {
                                        queue_drop(io, j); /* cancelled before it started: no answer */
                                        if (j < i)
                                                i--;
                                        break;
                                }
                        json_decref(target);
                        continue;
                }
                i++;
        }
        return cancel;
}

/* The watch while a command runs: the client's messages, and whether it is still there. */
static int on_watch(struct txbox_watch *w, short revents)
{
        struct mcp_io *io = (struct mcp_io *)((char *)w - offsetof(struct mcp_io, watch));

        if (w->fd == io->out_fd) { /* stdin ended earlier: only a reader gone matters now */
                if (revents & (POLLERR | POLLHUP))
                        io->gone = true;
                return io->gone;
        }
        if (!queue_full(io))
                fill(io);
        if (io->eof) {
                /* stdin closed: the client is gone when nobody reads stdout either; else it
                 * has only finished writing, and what it sent is still answered. */
                struct pollfd p = {.fd = io->out_fd};
                if (poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)))
                        io->gone = true;
        }
        bool cancel = io->gone || mcp_urgent(io->s, true);
        if (io->eof || queue_full(io)) { /* nothing more to read now: watch the reader (and
                                           * stop watching stdin, which would poll readable) */
                w->fd = io->out_fd;
                w->events = 0;
        }
        return cancel;
}

static struct txbox_watch *mcp_watch(struct mcp_server *s)
{
        if (!s->io)
                return NULL;
        s->io->watch = (struct txbox_watch){.fd = s->io->eof ? s->io->out_fd : s->io->in_fd,
                                            .events = s->io->eof ? 0 : POLLIN, .fn = on_watch};
        return &s->io->watch;
}

static void mcp_cancelled_by(struct mcp_server *s, int signo)
{
        if (signo && s->io) {
                mcp_log(s, "signal %d: the command was rolled back; the server ends", signo);
                s->io->gone = true;
        }
}

static void answer(struct mcp_server *s, struct msg *m)
{
        if (m->too_long) {
                char text[128];
                snprintf(text, sizeof(text), "message too large: the limit is %zu bytes", s->io->max);
                mcp_log(s, "%s", text);
                send_line(s->io, rpc_error_reply(m->id, MCP_INVALID_REQUEST, text));
        } else {
                send_line(s->io, mcp_handle(s, m->buf, m->len));
        }
        /* The next command's sandbox gets ready while the client reads this answer (and its
         * model thinks): started before the answer, it would delay it. */
        if (s->prepare && s->ws && !s->io->gone) {
                s->prepare = false;
                command_prepare_upto(s->ws, &s->prepare_opts, WS_PREPARED_MAX);
        }
}

int mcp_serve(struct mcp_server *s, int in_fd, int out_fd)
{
        struct mcp_io io = {.s = s, .in_fd = in_fd, .out_fd = out_fd};

        io.max = s->opts.max_message ? s->opts.max_message : MCP_MAX_MESSAGE;
        s->io = &io;
        while (!io.gone) {
                if (!io.nq) {
                        if (io.eof)
                                break;
                        fill(&io);
                        continue;
                }
                struct msg m = io.q[0];
                io.qbytes -= m.len;
                memmove(io.q, io.q + 1, --io.nq * sizeof(io.q[0]));
                answer(s, &m);
                msg_free(&m);
        }
        while (io.nq)
                queue_drop(&io, 0);
        json_decref(idscan_take(&io.scan));
        free(io.buf);
        s->io = NULL;
        return io.err == -EPIPE || (io.gone && !io.err) ? 0 : io.err;
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
