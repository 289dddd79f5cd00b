/* The MCP server's tools (docs/CONTRACT.md, "MCP tools"): the tool table, whose argument
 * specs give both the inputSchema and its validation, the output schemas, one handler per tool
 * and tools/call around them.  Apart from the protocol (mcp.c) because this is what txbox
 * offers the model, and it grows with the tools. */
#define _GNU_SOURCE
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/macros.h"
#include "base/mem.h"
#include "faces/mcp_int.h"
#include "faces/summary.h"
#include "policy/policy.h"
#include "store/record.h"
#include "txn/tx.h"

#define DEFAULT_DIFF_CAP (256 * 1024)
#define LIST_DEFAULT 20
#define LIST_MAX 1000


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
static const char *const path_modes[] = {"summary", "all", NULL};

static json_t *arg_schema(const struct arg_spec *a)
{
        static const char *const type_names[] = {"string", "integer", "number"};
        json_t *p = json_pack("{s:s, s:s}", "type", type_names[a->type], "description", a->desc);

        jv_nonnull(p);
        if (a->choices) {
                json_t *e = jv_nonnull(json_array());
                for (const char *const *c = a->choices; *c; c++)
                        jv_push(e, json_string(*c));
                jv_set(p, "enum", e);
        }
        if (a->type != ARG_STRING) {
                jv_set(p, "minimum",
                             a->type == ARG_INTEGER ? json_integer((json_int_t)a->min) : json_real(a->min));
                jv_set(p, "maximum",
                             a->type == ARG_INTEGER ? json_integer((json_int_t)a->max) : json_real(a->max));
        }
        return p;
}

static json_t *input_schema(const struct tool *t)
{
        json_t *props = jv_nonnull(json_object()), *req = jv_nonnull(json_array());

        for (size_t i = 0; i < t->nargs; i++) {
                jv_set(props, t->args[i].name, arg_schema(&t->args[i]));
                if (t->args[i].required)
                        jv_push(req, json_string(t->args[i].name));
        }
        return jv_nonnull(json_pack("{s:s, s:o, s:o, s:b}", "type", "object", "properties", props,
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
        jv_set(o, "type", json_string("object"));
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

/* ---- the text block and the budget ----
 * Every result that carries a record says first what happened, then the changed paths
 * summarised (counts, the directories, a few names), and its JSON keeps within the server's
 * result budget (--result-budget, 4 KB) beyond the command's own output: a venv or 5,000
 * generated files no longer fill the model's context with paths.  The full list is one
 * call away (run_command paths="all", show_transaction). */

static size_t budget_of(const struct mcp_server *s)
{
        return s->opts.result_budget ? s->opts.result_budget : SUMMARY_BUDGET;
}

static void text_violations(FILE *f, const struct txbox_record *rec)
{
        for (size_t i = 0; i < rec->nviolations && i < 5; i++) {
                _cleanup_free_ char *r = summary_escape(rec->violations[i].rule, 64);
                _cleanup_free_ char *p = summary_escape(rec->violations[i].path, 200);
                _cleanup_free_ char *d = summary_escape(rec->violations[i].detail, 300);
                fprintf(f, "violation %s on %s: %s\n", r, p, d);
        }
        if (rec->nviolations > 5)
                fprintf(f, "... and %zu more violations\n", rec->nviolations - 5);
}

static void text_command(FILE *f, const struct txbox_record *rec)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);

        if (!m || !rec->argv || !rec->argv[0]) {
                if (m)
                        fclose(m);
                free(buf);
                return;
        }
        for (char **a = rec->argv; *a; a++)
                fprintf(m, "%s%s", a == rec->argv ? "" : " ", *a);
        fclose(m);
        _cleanup_free_ char *e = summary_escape(buf, 300);
        fprintf(f, "command: %s\n", e);
        free(buf);
}

/* The text block of a record: what happened, then the details. */
static void text_record(FILE *f, const struct txbox_record *rec, int status, const char *why)
{
        _cleanup_free_ char *line = summary_outcome(rec, status, why);
        _cleanup_free_ char *hint = xasprintf("show_transaction tx=%s lists them all", rec->id);

        fprintf(f, "%s\n", line);
        text_command(f, rec);
        if (rec->outcome != TXBOX_DENIED)
                summary_changes_text(f, rec, hint);
        text_violations(f, rec);
}

/* The record's JSON as a tool result: "summary" (what happened) first, then the record and
 * extra (may be NULL; its keys are added, it is released), fitted into budget bytes less
 * what the text block takes; stdout and stderr do not count (--output-cap caps them).
 * budget 0: every path. */
static json_t *result_json(const struct txbox_record *rec, int status, const char *why, json_t *extra,
                           size_t budget, size_t text_len)
{
        static const char *const exempt[] = {"stdout", "stderr", NULL};
        _cleanup_free_ char *line = summary_outcome(rec, status, why);
        json_t *o = jv_nonnull(json_pack("{s:o}", "summary", jv_text(line)));

        json_t *r = record_to_json(rec);
        json_object_update(o, r);
        json_decref(r);
        if (extra) {
                json_object_update(o, extra);
                json_decref(extra);
        }
        summary_fit(o, rec, !budget ? 0 : budget > text_len + 512 ? budget - text_len : 512, exempt);
        return o;
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
        json_t *extra = jv_nonnull(json_object());
        jv_set(extra, "status", json_integer(res.status));
        jv_set(extra, "why", jv_text(res.why));
        jv_set(extra, "stdout", jv_text(res.out));
        jv_set(extra, "stderr", jv_text(res.err));
        jv_set(extra, "stdout_truncated", json_boolean(res.out_truncated));
        jv_set(extra, "stderr_truncated", json_boolean(res.err_truncated));
        jv_set(extra, "truncated", json_boolean(res.out_truncated || res.err_truncated));
        o->is_error = res.status != 0;

        /* The text block says what happened first, then the details; the output is in the JSON. */
        text_record(o->text, &res.rec, res.status, res.why);
        if (res.rec.outcome != TXBOX_DENIED)
                fprintf(o->text, "exit status %d\n", res.status);
        if (res.status == TXBOX_EXIT_DENIED && res.rec.outcome == TXBOX_DENIED)
                fputs("Adapt the command to the rule's reason.\n", o->text);
        fflush(o->text);
        bool all = arg_str(args, "paths") && !strcmp(arg_str(args, "paths"), "all");
        o->structured = result_json(&res.rec, res.status, res.why, extra, all ? 0 : budget_of(s), o->text_len);
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
        ws_decide(s->ws, &ctx, arg_str(args, "command"), NULL, &res);
        o->is_error = !strcmp(res.rule, POLICY_RULE_FAILED);
        bool allow = res.decision == POLICY_ALLOW;
        o->structured = jv_nonnull(json_pack(
                "{s:s, s:o, s:o, s:o, s:o}", "decision", policy_decision_name(res.decision), "rule",
                allow ? json_null() : jv_text(res.rule), "reason",
                allow ? json_null() : jv_text(res.reason), "command",
                allow ? json_null() : jv_text(res.command), "offset", allow || res.offset < 0 ? json_null()
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
        json_t *arr = jv_nonnull(json_array());
        fprintf(o->text, "%zu transaction%s, newest first:\n", n, n == 1 ? "" : "s");
        for (size_t i = 0; i < n; i++) {
                /* Each record's changes as counts and the paths that fit 1 KB: twenty venvs
                 * would otherwise be megabytes (show_transaction gives one whole). */
                json_t *r = record_to_json(&recs[i]);
                summary_fit(r, &recs[i], 1024, NULL);
                jv_push(arr, r);
                fprintf(o->text, "%s %-11s %zu change%s  ", recs[i].id, txbox_outcome_name(recs[i].outcome),
                        recs[i].npaths, recs[i].npaths == 1 ? " " : "s");
                for (char **a = recs[i].argv; a && *a; a++)
                        fprintf(o->text, "%s%.200s", a == recs[i].argv ? "" : " ", *a);
                fputc('\n', o->text);
        }
        o->structured = jv_nonnull(json_pack("{s:o}", "transactions", arr));
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
        /* The whole list of paths: this is where a summarised result points for it. */
        json_t *extra = jv_nonnull(json_object());
        jv_set(extra, "diff", jv_text(diff));
        jv_set(extra, "diff_truncated", json_boolean(cut));
        o->structured = result_json(&rec, -1, NULL, extra, 0, 0);
        text_record(o->text, &rec, -1, NULL);
        fprintf(o->text, "--- diff%s ---\n%s", cut ? " (truncated)" : "", diff);
        txbox_record_clear(&rec);
        return 0;
}

static void record_result(struct mcp_server *s, struct tool_out *o, const struct txbox_record *rec)
{
        text_record(o->text, rec, -1, NULL);
        fflush(o->text);
        o->structured = result_json(rec, -1, NULL, NULL, budget_of(s), o->text_len);
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
                record_result(s, o, txbox_tx_record(tx));
                fprintf(o->text, "conflict: %s\nRunning the command again is safe.\n", err.msg);
                o->is_error = true;
        } else if (r < 0) {
                tool_fail(o, "cannot commit: %s", err.msg);
        } else {
                record_result(s, o, txbox_tx_record(tx));
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
                record_result(s, o, &rec);
                txbox_record_clear(&rec);
                return 0;
        }
        if ((r = txbox_tx_load(s->ws, id, &tx, &err)) == 0)
                r = txbox_tx_rollback(tx, "rolled back by the MCP client", &err);
        if (r < 0)
                tool_fail(o, "cannot roll back: %s", err.msg);
        else
                record_result(s, o, txbox_tx_record(tx));
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
                record_result(s, o, &rec);
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
        o->structured = jv_nonnull(json_pack("{s:o}", "tx", jv_text(rec.id)));
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
        {"paths", ARG_STRING, false,
         "summary (default): the changed paths as counts, directories and a few names when they are many "
         "(the result stays within the server's budget); all: every changed path",
         path_modes},
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
        "\"cwd\": " S_NSTR("where it ran") ", \"message\": " S_NSTR("what txbox did, in words") ", "  \
        "\"summary\": {\"type\": \"string\", \"description\": \"what happened, in one line\"}, "           \
        "\"change_counts\": {\"type\": \"object\", \"properties\": {\"added\": {\"type\": \"integer\"}, "     \
        "\"modified\": {\"type\": \"integer\"}, \"deleted\": {\"type\": \"integer\"}}, "                      \
        "\"description\": \"how many paths changed, whether listed in changes or not\"}, "                \
        "\"changes_truncated\": {\"type\": \"boolean\", \"description\": \"changes lists only the first "  \
        "paths of each kind (the result budget); show_transaction lists them all\"}"
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
         "forbids it (the result names the rule and the reason). Returns what happened (first), exit status, "
         "outcome, stdout/stderr and the changed files (summarised when many: paths=all lists every one).",
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

json_t *mcp_tools_list(void)
{
        json_t *arr = jv_nonnull(json_array());
        for (size_t i = 0; i < ARRAY_SIZE(tools); i++) {
                const struct tool *t = &tools[i];
                json_t *ann = json_pack("{s:b, s:b, s:b, s:b}", "readOnlyHint", t->read_only,
                                        "destructiveHint",
                                        t->destructive, "idempotentHint", t->read_only, "openWorldHint", 0);
                jv_push(arr, jv_nonnull(json_pack("{s:s, s:s, s:o, s:o, s:o}", "name", t->name,
                                                         "description", t->desc, "inputSchema",
                                                         input_schema(t), "outputSchema", output_schema(t),
                                                         "annotations", jv_nonnull(ann))));
        }
        return jv_nonnull(json_pack("{s:o}", "tools", arr));
}

json_t *mcp_tools_call(struct mcp_server *s, json_t *params, struct rpc_error *e)
{
        const char *name = json_string_value(json_object_get(params, "name"));
        json_t *args = json_object_get(params, "arguments");
        char why[256];

        if (!name)
                return mcp_rpc_fail(e, MCP_INVALID_PARAMS, "tools/call needs params.name (a string)");
        const struct tool *t = tool_find(name);
        if (!t)
                return mcp_rpc_fail(e, MCP_INVALID_PARAMS, "unknown tool '%.64s'; tools/list names the tools",
                                    name);
        if (args && !json_is_object(args) && !json_is_null(args))
                return mcp_rpc_fail(e, MCP_INVALID_PARAMS, "params.arguments must be an object");
        json_t *empty = jv_nonnull(json_object());
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
        json_t *content = jv_nonnull(json_array());
        /* Clients that read text only get the structured result as JSON text (the spec's
         * advice), then the summary in words. */
        if (o.structured) {
                char *dump = jv_dump(json_incref(o.structured));
                jv_push(content,
                             jv_nonnull(json_pack("{s:s, s:o}", "type", "text", "text", jv_text(dump))));
                free(dump);
        }
        if (o.text_len || !o.structured)
                jv_push(content, jv_nonnull(json_pack("{s:s, s:o}", "type", "text", "text",
                                                             jv_text(o.text_buf))));
        free(o.text_buf);
        json_t *res = jv_nonnull(json_pack("{s:o, s:b}", "content", content, "isError", o.is_error));
        if (o.structured)
                jv_set(res, "structuredContent", o.structured);
        mcp_log(s, "%s: %s", t->name, o.is_error ? "error" : "ok");
        return res;
}
