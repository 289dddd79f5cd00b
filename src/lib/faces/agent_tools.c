/* The agent's tools: their definitions for the model, and run_command, read_file and
 * write_file, each one a transaction (txbox_command_run) through the same policy, sandbox and
 * commit/rollback as txbox run, its outcome back to the model as the tool result.  Apart from
 * the loop (agent.c) because this is the whole of what the model can do to the workspace.
 *
 * Malformed tool calls, unknown tools and paths outside the workspace get an error result the
 * model can read. */
#define _GNU_SOURCE

#include <string.h>

#include "faces/agent_int.h"
#include "faces/summary.h"
#include "store/record.h"
#include "base/cleanup.h"
#include "base/clock.h"
#include "base/mem.h"
#include "base/strv.h"

#define CONTENT_CHUNK (64 * 1024)      /* one argv string stays below MAX_ARG_STRLEN (128 KiB) */
#define DEFAULT_OUTPUT_CAP (16 * 1024)

static json_t *tool_def(const char *name, const char *desc, json_t *props, json_t *required)
{
        return json_pack("{s:s, s:{s:s, s:s, s:{s:s, s:o, s:o}}}", "type", "function", "function", "name",
                         name,
                         "description", desc, "parameters", "type", "object", "properties", props, "required",
                         required);
}

json_t *agent_tool_defs(void)
{
        json_t *t = json_array();
        jv_push(t, jv_nonnull(tool_def(
                                "run_command",
                                "Run a shell command (/bin/sh -c) in the workspace as one transaction. "
                                "Returns the exit status, outcome (committed, rolled_back, denied), changed "
                                "files and capped stdout/stderr; for a refusal or a rollback, the rule and "
                                        "the reason.",
                                json_pack("{s:{s:s, s:s}, s:{s:s, s:s}}", "command", "type", "string",
                                          "description",
                                          "the shell command", "timeout_s", "type", "number", "description",
                                          "optional time limit in seconds"),
                                json_pack("[s]", "command"))));
        jv_push(t, jv_nonnull(tool_def("read_file",
                                              "Read a text file of the workspace (path relative to it).",
                                              json_pack("{s:{s:s}}", "path", "type", "string"),
                                              json_pack("[s]", "path"))));
        jv_push(t, jv_nonnull(tool_def(
                                "write_file",
                                "Create or replace a file of the workspace with the given content (at most 1 "
                                "MiB), as one transaction; parent directories are created.",
                                json_pack("{s:{s:s}, s:{s:s}}", "path", "type", "string", "content", "type",
                                          "string"),
                                json_pack("[s, s]", "path", "content"))));
        return t;
}

/* A workspace-relative form of path for read_file/write_file, or NULL with *why set when the
 * path is empty, absolute outside the workspace or climbs out with "..". malloc'd. */
static char *agent_workspace_path(const char *ws_path, const char *path, const char **why)
{
        size_t wl = strlen(ws_path);
        if (!path || !*path) {
                *why = "the path is empty";
                return NULL;
        }
        if (path[0] == '/') {
                if (strncmp(path, ws_path, wl) || (path[wl] != '/' && path[wl] != '\0')) {
                        *why = "the path is outside the workspace; give a path relative to it";
                        return NULL;
                }
                path += wl;
                while (*path == '/')
                        path++;
        }
        /* Normalise component by component; ".." may not climb above the workspace root. */
        char *out = xmalloc(strlen(path) + 2);
        size_t o = 0;
        for (const char *p = path; *p;) {
                const char *e = strchrnul(p, '/');
                size_t len = (size_t)(e - p);
                if (len == 2 && !strncmp(p, "..", 2)) {
                        if (o == 0) {
                                free(out);
                                *why = "the path climbs out of the workspace with '..'";
                                return NULL;
                        }
                        while (o > 0 && out[o - 1] != '/')
                                o--;
                        if (o > 0)
                                o--;
                } else if (len > 0 && !(len == 1 && p[0] == '.')) {
                        if (o > 0)
                                out[o++] = '/';
                        memcpy(out + o, p, len);
                        o += len;
                }
                p = *e ? e + 1 : e;
        }
        out[o] = '\0';
        if (o == 0) {
                free(out);
                *why = "the path names the workspace itself, not a file";
                return NULL;
        }
        return out;
}

/* An error result the model can read; counts as a refused call. */
char *agent_tool_error(struct loop *L, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        L->st->tool_errors++;
        return jv_dump(json_pack("{s:s, s:s}", "outcome", "error", "error", msg));
}

/* Which rules stopped calls, for the summary (the first AGENT_RULES_MAX by name). */
static void count_rule(struct agent_stats *st, const char *rule, bool denied)
{
        int i;

        for (i = 0; i < st->nrules && strcmp(st->rules[i].rule, rule ? rule : "?"); i++)
                ;
        if (i == st->nrules) {
                if (i == AGENT_RULES_MAX) {
                        st->rules_other++;
                        return;
                }
                snprintf(st->rules[i].rule, sizeof(st->rules[i].rule), "%s", rule ? rule : "?");
                st->nrules++;
        }
        if (denied)
                st->rules[i].denied++;
        else
                st->rules[i].broken++;
}

/* Counts one finished call into the measures (docs/AGENT.md defines them). */
static void count_call(struct loop *L, const struct txbox_command_result *res)
{
        struct agent_stats *st = L->st;
        bool in_session = L->o->atomic;
        bool rolled = in_session ? res->status != 0 : res->rec.outcome == TXBOX_ROLLED_BACK;

        /* Denied: the policy refused it before it ran (126 alone may be the program's own
         * status, e.g. a shell whose exec was refused during the run). */
        bool denied = res->rec.outcome == TXBOX_DENIED ||
                      (res->rec.decision && !strcmp(res->rec.decision, "deny") && res->rec.nviolations == 0);

        /* An "ask" nobody could answer (no --approve): refused, but not judged dangerous. */
        _cleanup_free_ char *ask = res->rec.rule ? xasprintf("denied by rule %s (needs approval):", res->rec.rule)
                                                 : NULL;
        bool asked = denied && ask && res->rec.message && !strncmp(res->rec.message, ask, strlen(ask));

        if (denied)
                st->denied++;
        else if (rolled)
                st->rolled_back++;
        else if (res->status == 0)
                st->committed++;
        if (asked)
                st->asks_refused++;
        else if (denied || res->rec.nviolations > 0) {
                st->high_risk++;
                if (res->status != 0)
                        st->high_risk_intercepted++;
                count_rule(st, denied ? res->rec.rule : res->rec.violations[0].rule, denied);
        }
        if (!denied && res->status != 0 && res->status != TXBOX_EXIT_TXBOX) {
                st->failed++;
                if (rolled)
                        st->failed_rolled_back++;
        }
}

/* The tool result: "summary" first (what happened, one line: committed, rolled back and why,
 * refused and why), then the record, fitted into the result budget beyond stdout and stderr
 * (which --output-cap caps): a 5,000-file change gives its counts and some paths, not all. */
static char *result_json(struct loop *L, const struct txbox_command_result *res, json_t *shown_argv)
{
        static const char *const exempt[] = {"stdout", "stderr", NULL};
        _cleanup_free_ char *line = summary_outcome(&res->rec, res->status, res->why);
        json_t *o = jv_nonnull(json_pack("{s:o}", "summary", jv_text(line)));
        json_t *r = record_to_json(&res->rec);

        json_object_update(o, r);
        json_decref(r);
        if (shown_argv) /* what the model asked for, not the whole command (write_file's content) */
                jv_set(o, "argv", json_incref(shown_argv));
        jv_set(o, "exit_status", json_integer(res->status));
        jv_set(o, "why", jv_text(res->why));
        jv_set(o, "stdout", jv_text(res->out));
        jv_set(o, "stdout_truncated", json_boolean(res->out_truncated));
        jv_set(o, "stderr", jv_text(res->err));
        jv_set(o, "stderr_truncated", json_boolean(res->err_truncated));
        /* The model needs none of these and they cost context. */
        json_object_del(o, "cwd");
        json_object_del(o, "started_ms");
        json_object_del(o, "commit_seq");
        summary_fit(o, &res->rec, L->o->result_budget ? L->o->result_budget : SUMMARY_BUDGET, exempt);
        return jv_dump(o);
}

/* Run cmd as a transaction, count it, log it; returns the tool result text (with shown_argv,
 * if not NULL, as its argv). */
static char *run_tx(struct loop *L, struct txbox_command *cmd, const char *label, json_t *shown_argv)
{
        struct txbox_command_result res;
        struct txbox_error err = {0};
        int64_t t0 = mono_us();

        cmd->session = L->st->session[0] ? L->st->session : NULL;
        cmd->mode = TXBOX_COMMIT_AUTO;
        cmd->opts.net = L->o->net;
        if (cmd->opts.timeout_s <= 0)
                cmd->opts.timeout_s = L->o->cmd_timeout_s > 0 ? L->o->cmd_timeout_s : 600;
        cmd->output_cap = L->o->output_cap ? L->o->output_cap : DEFAULT_OUTPUT_CAP;
        cmd->prepare_next = true;
        int r = txbox_command_run(L->ws, cmd, &res, &err);
        int64_t ms = (mono_us() - t0) / 1000;
        L->st->txbox_ms += ms;
        if (r < 0) {
                L->last_status = TXBOX_EXIT_TXBOX;
                agent_logf(L, "  %s -> txbox failed: %s", label, err.msg);
                return agent_tool_error(L, "txbox could not run this: %s", err.msg);
        }
        L->last_status = res.status;
        count_call(L, &res);
        const struct txbox_record *rec = &res.rec;

        if (rec->outcome == TXBOX_DENIED)
                agent_logf(L, "  %s -> denied (%s: %s)", label, rec->rule ? rec->rule : "?",
                           rec->reason ? rec->reason : "");
        else
                agent_logf(L, "  %s -> %s (status %d, %zu change%s, %lld ms)%s%s", label,
                           L->o->atomic && res.status == 0 ? "kept" : txbox_outcome_name(rec->outcome),
                           res.status, rec->npaths, rec->npaths == 1 ? "" : "s", (long long)ms,
                           res.why ? ": " : "", res.why ? res.why : "");
        char *text = result_json(L, &res, shown_argv);
        txbox_command_result_clear(&res);
        return text;
}

static char *short_label(const char *tool, const char *arg)
{
        _cleanup_free_ char *a = utf8_lossy(arg);
        for (char *p = a; *p; p++)
                if (*p == '\n' || *p == '\t' || *p == '\r')
                        *p = ' ';
        return strlen(a) > 80 ? xasprintf("%s `%.77s...`", tool, a) : xasprintf("%s `%s`", tool, a);
}

static char *do_run_command(struct loop *L, json_t *args)
{
        const char *command = json_string_value(json_object_get(args, "command"));
        json_t *t = json_object_get(args, "timeout_s");
        if (!command || !*command)
                return agent_tool_error(L, "run_command needs {\"command\": \"shell string\"}");
        if (t && (!json_is_number(t) || json_number_value(t) <= 0 || json_number_value(t) > 86400))
                return agent_tool_error(L, "timeout_s must be a number of seconds between 0 and 86400");
        struct txbox_command cmd = {.shell = command, .opts.timeout_s = t ? json_number_value(t) : 0};
        _cleanup_free_ char *label = short_label("run_command", command);
        return run_tx(L, &cmd, label, NULL);
}

static char *do_read_file(struct loop *L, json_t *args)
{
        const char *why = NULL;
        const char *path = json_string_value(json_object_get(args, "path"));
        _cleanup_free_ char *rel = agent_workspace_path(txbox_ws_path(L->ws), path, &why);
        if (!path)
                return agent_tool_error(L, "read_file needs {\"path\": \"file relative to the workspace\"}");
        if (!rel)
                return agent_tool_error(L, "read_file '%s': %s", path, why);
        char *argv[] = {"/bin/cat", "--", rel, NULL};
        struct txbox_command cmd = {.argv = argv};
        _cleanup_free_ char *label = short_label("read_file", rel);
        return run_tx(L, &cmd, label, NULL);
}

/* The content travels as arguments (the program's stdin is /dev/null), in chunks below the
 * kernel's limit of one argument; printf '%s' "$@" joins them again. */
static char *do_write_file(struct loop *L, json_t *args)
{
        static const char script[] =
                "p=$1; shift; mkdir -p -- \"$(dirname -- \"$p\")\" && printf '%s' \"$@\" >\"$p\"";
        const char *why = NULL;
        const char *path = json_string_value(json_object_get(args, "path"));
        json_t *content = json_object_get(args, "content");
        if (!path || !json_is_string(content))
                return agent_tool_error(L, "write_file needs {\"path\": \"file\", \"content\": \"text\"}");
        size_t len = json_string_length(content);
        if (len > AGENT_MAX_CONTENT)
                return agent_tool_error(L, "write_file content is %zu bytes; at most %d bytes per call", len,
                                        AGENT_MAX_CONTENT);
        if (memchr(json_string_value(content), '\0', len))
                return agent_tool_error(L,
                                        "write_file content contains a NUL byte; only text can be written");
        _cleanup_free_ char *rel = agent_workspace_path(txbox_ws_path(L->ws), path, &why);
        if (!rel)
                return agent_tool_error(L, "write_file '%s': %s", path, why);
        size_t nchunks = len / CONTENT_CHUNK + 1;
        char **argv = xcalloc(nchunks + 6, sizeof(char *));
        size_t i = 0;
        argv[i++] = xstrdup("/bin/sh"), argv[i++] = xstrdup("-c"), argv[i++] = xstrdup(script);
        argv[i++] = xstrdup("sh"), argv[i++] = xstrdup(rel);
        for (size_t off = 0; off < len || off == 0; off += CONTENT_CHUNK) {
                size_t n = len - off < CONTENT_CHUNK ? len - off : CONTENT_CHUNK;
                argv[i++] = strndup(json_string_value(content) + off, n);
                if (!argv[i - 1])
                        abort();
                if (len == 0)
                        break;
        }
        struct txbox_command cmd = {.argv = argv};
        _cleanup_free_ char *label = xasprintf("write_file `%s` (%zu bytes)", rel, len);
        /* The content stays out of the result: echoed back, it would double every write in the
         * model's context (the audit log keeps the command whole). */
        _cleanup_free_ char *size = xasprintf("(%zu bytes)", len);
        json_t *shown = json_pack("[s, s, s]", "write_file", rel, size);
        char *text = run_tx(L, &cmd, label, jv_nonnull(shown));
        json_decref(shown);
        strv_free(argv);
        return text;
}

static const struct {
        const char *name;
        char *(*run)(struct loop *L, json_t *args);
} tools[] = {
        {"run_command", do_run_command},
        {"read_file", do_read_file},
        {"write_file", do_write_file},
};

/* One tool call: its result text (malloc'd).  *refused says whether the call was refused
 * (denied, unknown, malformed) rather than run. */
char *agent_tool_call(struct loop *L, json_t *call, bool *refused)
{
        json_t *fn = json_object_get(call, "function");
        const char *name = json_string_value(json_object_get(fn, "name"));
        const char *argstr = json_string_value(json_object_get(fn, "arguments"));
        json_t *argobj = json_object_get(fn, "arguments");
        int errors = L->st->tool_errors, denied = L->st->denied;
        char *text = NULL;

        L->st->calls++;
        if (!name) {
                agent_logf(L, "  (tool call without a function name) -> error");
                text = agent_tool_error(L, "the tool call has no function name");
        }
        for (size_t i = 0; !text && i < sizeof(tools) / sizeof(tools[0]); i++) {
                if (strcmp(name, tools[i].name))
                        continue;
                json_error_t je;
                /* arguments is a JSON string by the protocol; some servers send the object. */
                json_t *args = argstr ? json_loads(argstr, 0, &je) : json_incref(argobj);
                if (!json_is_object(args)) {
                        _cleanup_free_ char *a = utf8_lossy(argstr ? argstr : "");
                        agent_logf(L, "  %s with malformed arguments -> error", name);
                        text = agent_tool_error(L, "the arguments of %s are not a JSON object (%s): %.200s",
                                                name, args || !argstr ? "wrong type" : je.text, a);
                } else
                        text = tools[i].run(L, args);
                json_decref(args);
        }
        if (!text) {
                _cleanup_free_ char *n = utf8_lossy(name);
                agent_logf(L, "  unknown tool '%s' -> refused", n);
                text = agent_tool_error(
                        L, "unknown tool '%s'; the tools are run_command, read_file and write_file", n);
        }
        *refused = L->st->tool_errors > errors || L->st->denied > denied;
        return text;
}
