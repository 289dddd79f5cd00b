/* The headless agent loop: chat-completions requests over libcurl, every tool call a
 * transaction (txbox_command_run), the outcome back to the model as the tool result.
 *
 * Nothing here trusts the model or the network: responses are size-capped and parsed
 * defensively, malformed tool calls and unknown tools get an error result the model can read,
 * requests time out and are retried with exponential backoff, and every command goes through
 * the same policy, sandbox and commit/rollback as txbox run. */
#define _GNU_SOURCE
#include <math.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>

#include "faces/agent.h"
#include "faces/curlapi.h"
#include "store/record.h"
#include "base/util.h"

#define MAX_RESPONSE (16 * 1024 * 1024) /* bytes of one HTTP response kept */
#define CONTENT_CHUNK (64 * 1024)      /* one argv string stays below MAX_ARG_STRLEN (128 KiB) */
#define DEFAULT_OUTPUT_CAP (16 * 1024)

static const char default_system_prompt[] =
        "You are a coding agent working in a workspace directory (your current directory). "
        "Use the tools to inspect and change it. Every tool call runs as a transaction: "
        "a command that fails, is refused by the policy or breaks an effect rule is rolled back "
        "and changes nothing; its result says why (rule and reason), so choose another way. "
        "Paths are relative to the workspace. When the task is done, reply with a short final "
        "answer and no tool call.";

/* ---- HTTP ---- */

struct buf {
        char *p;
        size_t n;
        bool over;
};

static size_t buf_write(char *data, size_t size, size_t nmemb, void *ctx)
{
        struct buf *b = ctx;
        size_t len = size * nmemb;
        if (b->n + len > MAX_RESPONSE) {
                b->over = true;
                return 0; /* aborts the transfer: a response this big is no chat completion */
        }
        b->p = xrealloc(b->p, b->n + len + 1);
        memcpy(b->p + b->n, data, len);
        b->n += len;
        b->p[b->n] = '\0';
        return len;
}

struct http {
        CURL *curl;
        struct curl_slist *headers;
        char *url;
        /* Of the last response: */
        long retry_after_ms; /* Retry-After, 0 when absent */
        bool event_stream;   /* Content-Type text/event-stream */
};

#define RETRY_AFTER_MAX_MS 60000L /* a server may not park the agent for longer per attempt */

/* Retry-After in seconds (an HTTP date is treated as "soon": the clock may differ). */
static long retry_after_ms(const char *v)
{
        char *end;
        errno = 0;
        double sec = strtod(v, &end);
        if (end == v || errno || !isfinite(sec) || sec < 0)
                return 1000;
        return sec * 1000 > RETRY_AFTER_MAX_MS ? RETRY_AFTER_MAX_MS : (long)(sec * 1000);
}

static size_t header_line(char *data, size_t size, size_t nmemb, void *ctx)
{
        struct http *h = ctx;
        size_t len = size * nmemb;
        char line[256];

        if (len >= sizeof(line))
                return len; /* no header we read is that long */
        memcpy(line, data, len);
        line[len] = '\0';
        line[strcspn(line, "\r\n")] = '\0';
        if (!strncasecmp(line, "HTTP/", 5)) { /* a new response (after a redirect or a 100) */
                h->retry_after_ms = 0;
                h->event_stream = false;
        } else if (!strncasecmp(line, "Retry-After:", 12)) {
                h->retry_after_ms = retry_after_ms(line + 12 + strspn(line + 12, " \t"));
        } else if (!strncasecmp(line, "Content-Type:", 13)) {
                h->event_stream = strcasestr(line + 13, "text/event-stream") != NULL;
        }
        return len;
}

static int http_init(struct http *h, const struct agent_opts *o, struct txbox_error *err)
{
        int r = curl_api_load(err);
        if (r < 0)
                return r;
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(h->curl = curl_easy_init()))
                return tx_err(err, ENOMEM, "cannot initialise libcurl");
        h->url = agent_completions_url(o->endpoint);
        h->headers = curl_slist_append(NULL, "Content-Type: application/json");
        if (o->api_key) {
                _cleanup_free_ char *auth = xasprintf("Authorization: Bearer %s", o->api_key);
                h->headers = curl_slist_append(h->headers, auth);
        }
        curl_easy_setopt(h->curl, CURLOPT_URL, h->url);
        curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers);
        curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, buf_write);
        curl_easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, header_line);
        curl_easy_setopt(h->curl, CURLOPT_HEADERDATA, h);
        curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
        curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, o->http_timeout_ms > 0 ? o->http_timeout_ms : 300000L);
        /* Only http and https: an endpoint must not turn into file:// or anything else. */
        curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(h->curl, CURLOPT_USERAGENT, "txbox-agent/" TXBOX_VERSION);
        return 0;
}

static void http_free(struct http *h)
{
        free(h->url);
        if (!curl_api.global_cleanup)
                return; /* libcurl was never loaded */
        if (h->curl)
                curl_easy_cleanup(h->curl);
        curl_slist_free_all(h->headers);
        curl_global_cleanup();
}

/* One POST.  Returns the HTTP status (>0) with *body set, or 0 with why filled on a transport
 * error. */
static long http_post(struct http *h, const char *req, char **body, char *why, size_t whylen)
{
        struct buf b = {0};
        char cerr[CURL_ERROR_SIZE] = "";
        long code = 0;

        h->retry_after_ms = 0;
        h->event_stream = false;
        curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, req);
        curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, cerr);
        CURLcode rc = curl_easy_perform(h->curl);
        curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, NULL);
        if (rc != CURLE_OK) {
                snprintf(why, whylen, "%s",
                         b.over    ? "response larger than 16 MiB"
                         : cerr[0] ? cerr
                                   : curl_easy_strerror(rc));
                free(b.p);
                return 0;
        }
        curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &code);
        *body = b.p ? b.p : xstrdup("");
        return code;
}

static void sleep_ms(long ms)
{
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* The model's reply: its message and why it ended. */
struct reply {
        json_t *msg;
        char finish[32]; /* finish_reason, "" when absent */
};

/* choices[0].message of a response body, or NULL with why filled. */
static json_t *parse_message(const char *body, struct reply *rp, char *why, size_t whylen)
{
        json_error_t je;
        json_t *root = json_loads(body, 0, &je);
        json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
        json_t *msg = json_object_get(choice, "message");
        if (!json_is_object(msg)) {
                snprintf(why, whylen, "%s",
                         root ? "response has no choices[0].message" : "response is not JSON");
                json_decref(root);
                return NULL;
        }
        snprintf(rp->finish, sizeof(rp->finish), "%s",
                 json_string_value(json_object_get(choice, "finish_reason")) ?: "");
        rp->msg = json_incref(msg);
        json_decref(root);
        return rp->msg;
}

#define SSE_MAX_CALLS 1024 /* tool calls one streamed reply may build */

/* One chunk's delta.tool_calls merged into calls (by index; arguments arrive in pieces). */
static void sse_merge_calls(json_t *calls, json_t *deltas)
{
        size_t i;
        json_t *d;

        json_array_foreach(deltas, i, d) {
                json_t *ix = json_object_get(d, "index");
                size_t k = json_is_integer(ix) ? (size_t)json_integer_value(ix) : i;
                if (k >= SSE_MAX_CALLS)
                        continue;
                while (json_array_size(calls) <= k)
                        json_arr_add(calls, json_pack("{s:s, s:{s:s, s:s}}", "type", "function", "function",
                                                      "name", "", "arguments", ""));
                json_t *c = json_array_get(calls, k), *fn = json_object_get(c, "function");
                json_t *df = json_object_get(d, "function");
                if (json_is_string(json_object_get(d, "id")))
                        json_obj_set(c, "id", json_incref(json_object_get(d, "id")));
                static const char *const parts[] = {"name", "arguments"};
                for (size_t p = 0; p < 2; p++) {
                        const char *add = json_string_value(json_object_get(df, parts[p]));
                        if (!add)
                                continue;
                        _cleanup_free_ char *v =
                                xasprintf("%s%s", json_string_value(json_object_get(fn, parts[p])), add);
                        json_obj_set(fn, parts[p], json_text(v));
                }
        }
}

/* A reply streamed as server-sent events (chat.completion.chunk) although we asked for none:
 * assembled into one message, or NULL with why filled. */
static json_t *parse_sse(const char *body, struct reply *rp, char *why, size_t whylen)
{
        json_t *calls = json_nonnull(json_array());
        char *content = xstrdup("");
        int chunks = 0;

        for (const char *l = body; *l;) {
                const char *e = strchrnul(l, '\n');
                if (!strncmp(l, "data:", 5)) {
                        const char *d = l + 5 + strspn(l + 5, " ");
                        json_t *j = strncmp(d, "[DONE]", 6) ? json_loadb(d, (size_t)(e - d), 0, NULL) : NULL;
                        json_t *choice = json_array_get(json_object_get(j, "choices"), 0);
                        json_t *delta = json_object_get(choice, "delta");
                        const char *text = json_string_value(json_object_get(delta, "content"));
                        const char *fin = json_string_value(json_object_get(choice, "finish_reason"));
                        const char *errmsg =
                                json_string_value(json_object_get(json_object_get(j, "error"), "message"));
                        if (errmsg && !chunks)
                                snprintf(why, whylen, "the event stream carried an error: %.300s", errmsg);
                        if (text) {
                                char *c = xasprintf("%s%s", content, text);
                                free(content);
                                content = c;
                        }
                        sse_merge_calls(calls, json_object_get(delta, "tool_calls"));
                        if (fin)
                                snprintf(rp->finish, sizeof(rp->finish), "%s", fin);
                        chunks += json_is_object(delta);
                        json_decref(j);
                }
                l = *e ? e + 1 : e;
        }
        if (!chunks) {
                if (!why[0] || strncmp(why, "the event stream", 16))
                        snprintf(why, whylen,
                                 "the server answered with an event stream (text/event-stream) that holds "
                                 "no chat-completion chunk; it should honour \"stream\": false");
                free(content);
                json_decref(calls);
                return NULL;
        }
        rp->msg = json_pack("{s:s, s:o}", "role", "assistant", "content",
                            *content ? json_text(content) : json_null());
        if (json_array_size(calls))
                json_obj_set(rp->msg, "tool_calls", calls);
        else
                json_decref(calls);
        free(content);
        return rp->msg;
}

static bool looks_like_sse(const char *body)
{
        body += strspn(body, " \t\r\n");
        return !strncmp(body, "data:", 5) || !strncmp(body, "event:", 6) || !strncmp(body, ":", 1);
}

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

static void logf_(struct loop *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct loop *L, const char *fmt, ...)
{
        if (!L->o->log)
                return;
        char line[2048];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof(line), fmt, ap);
        va_end(ap);
        L->o->log(L->o->log_ctx, line);
}

/* One response per line, as the test's scripted server replays them: the reply as a chat
 * completion (a streamed one assembled). */
static void record_response(FILE *f, const struct reply *rp)
{
        json_t *j = json_pack("{s:[{s:i, s:O, s:s}]}", "choices", "index", 0, "message", rp->msg,
                              "finish_reason", rp->finish[0] ? rp->finish : "stop");
        _cleanup_free_ char *line = json_dump_compact(json_nonnull(j));
        fprintf(f, "%s\n", line);
        fflush(f);
}

/* Retryable: transport errors, 408, 429 and 5xx (the server is busy or restarting), and a 200
 * whose body is not a chat completion (a proxy's error page).  Other 4xx are final. */
static bool retryable(long code)
{
        return code == 0 || code == 200 || code == 408 || code == 429 || code >= 500;
}

/* Ask the model; returns true with rp filled (rp->msg a new reference) or false with err. */
static bool ask_model(struct loop *L, struct reply *rp, struct txbox_error *err)
{
        /* "stream": false: some servers stream unless told not to (the reply is read whole). */
        json_t *req = json_pack("{s:s, s:O, s:O, s:s, s:b}", "model", L->o->model, "messages", L->messages,
                                "tools", L->tools, "tool_choice", "auto", "stream", 0);
        _cleanup_free_ char *text = json_dump_compact(json_nonnull(req));
        int attempts = L->o->http_attempts > 0 ? L->o->http_attempts : 4;
        long backoff = L->o->retry_base_ms > 0 ? L->o->retry_base_ms : 1000;
        char why[512] = "";
        int64_t t0 = mono_us();

        memset(rp, 0, sizeof(*rp));
        for (int a = 1; a <= attempts && !rp->msg; a++) {
                _cleanup_free_ char *body = NULL;
                long code = http_post(&L->http, text, &body, why, sizeof(why));
                bool sse = code == 200 && (L->http.event_stream || looks_like_sse(body));
                if (code == 200)
                        why[0] = '\0';
                if (code == 200 && (sse ? parse_sse(body, rp, why, sizeof(why))
                                    : parse_message(body, rp, why, sizeof(why))) &&
                    L->record)
                        record_response(L->record, rp);
                if (rp->msg || sse) /* a stream without a completion is no passing failure */
                        break;
                if (code != 0 && code != 200) {
                        _cleanup_free_ char *b = utf8_lossy(body ? body : "");
                        snprintf(why, sizeof(why), "HTTP %ld: %.300s", code, b);
                }
                if (!retryable(code) || a == attempts)
                        break;
                /* A server that says when to come back (429, 503) is believed, within bounds. */
                long wait = L->http.retry_after_ms > 0 ? L->http.retry_after_ms : backoff;
                logf_(L, "model request failed (%s); retry %d of %d in %ld ms%s", why, a, attempts - 1, wait,
                      L->http.retry_after_ms > 0 ? " (Retry-After)" : "");
                L->st->http_retries++;
                sleep_ms(wait);
                backoff = backoff > 60000 ? 120000 : backoff * 2;
        }
        L->st->model_ms += (mono_us() - t0) / 1000;
        if (!rp->msg)
                tx_err(err, EIO, "model at '%s' failed: %s", L->http.url, why);
        return rp->msg != NULL;
}

/* ---- the tools ---- */

static json_t *tool_def(const char *name, const char *desc, json_t *props, json_t *required)
{
        return json_pack("{s:s, s:{s:s, s:s, s:{s:s, s:o, s:o}}}", "type", "function", "function", "name",
                         name,
                         "description", desc, "parameters", "type", "object", "properties", props, "required",
                         required);
}

static json_t *tool_defs(void)
{
        json_t *t = json_array();
        json_arr_add(t, json_nonnull(tool_def(
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
        json_arr_add(t, json_nonnull(tool_def("read_file",
                                              "Read a text file of the workspace (path relative to it).",
                                              json_pack("{s:{s:s}}", "path", "type", "string"),
                                              json_pack("[s]", "path"))));
        json_arr_add(t, json_nonnull(tool_def(
                                "write_file",
                                "Create or replace a file of the workspace with the given content (at most 1 "
                                "MiB), as one transaction; parent directories are created.",
                                json_pack("{s:{s:s}, s:{s:s}}", "path", "type", "string", "content", "type",
                                          "string"),
                                json_pack("[s, s]", "path", "content"))));
        return t;
}

char *agent_completions_url(const char *endpoint)
{
        size_t n = strlen(endpoint);
        while (n > 0 && endpoint[n - 1] == '/')
                n--;
        const char *tail = "/v1/chat/completions";
        if (n >= 17 && !strncmp(endpoint + n - 17, "/chat/completions", 17))
                tail = "";
        else if (n >= 3 && !strncmp(endpoint + n - 3, "/v1", 3))
                tail = "/chat/completions";
        return xasprintf("%.*s%s", (int)n, endpoint, tail);
}

char *agent_workspace_path(const char *ws_path, const char *path, const char **why)
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
static char *tool_error(struct loop *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *tool_error(struct loop *L, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        L->st->tool_errors++;
        return json_dump_compact(json_pack("{s:s, s:s}", "outcome", "error", "error", msg));
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

        if (denied)
                st->denied++;
        else if (rolled)
                st->rolled_back++;
        else if (res->status == 0)
                st->committed++;
        if (denied || res->rec.nviolations > 0) {
                st->high_risk++;
                if (res->status != 0)
                        st->high_risk_intercepted++;
        }
        if (!denied && res->status != 0 && res->status != TXBOX_EXIT_TXBOX) {
                st->failed++;
                if (rolled)
                        st->failed_rolled_back++;
        }
}

static char *result_json(const struct txbox_command_result *res, json_t *shown_argv)
{
        json_t *o = record_to_json(&res->rec);
        if (shown_argv) /* what the model asked for, not the whole command (write_file's content) */
                json_obj_set(o, "argv", json_incref(shown_argv));
        json_obj_set(o, "exit_status", json_integer(res->status));
        json_obj_set(o, "why", json_text(res->why));
        json_obj_set(o, "stdout", json_text(res->out));
        json_obj_set(o, "stdout_truncated", json_boolean(res->out_truncated));
        json_obj_set(o, "stderr", json_text(res->err));
        json_obj_set(o, "stderr_truncated", json_boolean(res->err_truncated));
        /* The model needs none of these and they cost context. */
        json_object_del(o, "cwd");
        json_object_del(o, "started_ms");
        json_object_del(o, "commit_seq");
        return json_dump_compact(o);
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
                logf_(L, "  %s -> txbox failed: %s", label, err.msg);
                return tool_error(L, "txbox could not run this: %s", err.msg);
        }
        L->last_status = res.status;
        count_call(L, &res);
        const struct txbox_record *rec = &res.rec;

        if (rec->outcome == TXBOX_DENIED)
                logf_(L, "  %s -> denied (%s: %s)", label, rec->rule ? rec->rule : "?",
                      rec->reason ? rec->reason : "");
        else
                logf_(L, "  %s -> %s (status %d, %zu change%s, %lld ms)%s%s", label,
                      L->o->atomic && res.status == 0 ? "kept" : txbox_outcome_name(rec->outcome), res.status,
                      rec->npaths, rec->npaths == 1 ? "" : "s", (long long)ms, res.why ? ": " : "",
                      res.why ? res.why : "");
        char *text = result_json(&res, shown_argv);
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
                return tool_error(L, "run_command needs {\"command\": \"shell string\"}");
        if (t && (!json_is_number(t) || json_number_value(t) <= 0 || json_number_value(t) > 86400))
                return tool_error(L, "timeout_s must be a number of seconds between 0 and 86400");
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
                return tool_error(L, "read_file needs {\"path\": \"file relative to the workspace\"}");
        if (!rel)
                return tool_error(L, "read_file '%s': %s", path, why);
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
                return tool_error(L, "write_file needs {\"path\": \"file\", \"content\": \"text\"}");
        size_t len = json_string_length(content);
        if (len > AGENT_MAX_CONTENT)
                return tool_error(L, "write_file content is %zu bytes; at most %d bytes per call", len,
                                  AGENT_MAX_CONTENT);
        if (memchr(json_string_value(content), '\0', len))
                return tool_error(L, "write_file content contains a NUL byte; only text can be written");
        _cleanup_free_ char *rel = agent_workspace_path(txbox_ws_path(L->ws), path, &why);
        if (!rel)
                return tool_error(L, "write_file '%s': %s", path, why);
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
        char *text = run_tx(L, &cmd, label, json_nonnull(shown));
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
static char *do_call(struct loop *L, json_t *call, bool *refused)
{
        json_t *fn = json_object_get(call, "function");
        const char *name = json_string_value(json_object_get(fn, "name"));
        const char *argstr = json_string_value(json_object_get(fn, "arguments"));
        json_t *argobj = json_object_get(fn, "arguments");
        int errors = L->st->tool_errors, denied = L->st->denied;
        char *text = NULL;

        L->st->calls++;
        if (!name) {
                logf_(L, "  (tool call without a function name) -> error");
                text = tool_error(L, "the tool call has no function name");
        }
        for (size_t i = 0; !text && i < sizeof(tools) / sizeof(tools[0]); i++) {
                if (strcmp(name, tools[i].name))
                        continue;
                json_error_t je;
                /* arguments is a JSON string by the protocol; some servers send the object. */
                json_t *args = argstr ? json_loads(argstr, 0, &je) : json_incref(argobj);
                if (!json_is_object(args)) {
                        _cleanup_free_ char *a = utf8_lossy(argstr ? argstr : "");
                        logf_(L, "  %s with malformed arguments -> error", name);
                        text = tool_error(L, "the arguments of %s are not a JSON object (%s): %.200s", name,
                                          args || !argstr ? "wrong type" : je.text, a);
                } else
                        text = tools[i].run(L, args);
                json_decref(args);
        }
        if (!text) {
                _cleanup_free_ char *n = utf8_lossy(name);
                logf_(L, "  unknown tool '%s' -> refused", n);
                text = tool_error(L, "unknown tool '%s'; the tools are run_command, read_file and write_file",
                                  n);
        }
        *refused = L->st->tool_errors > errors || L->st->denied > denied;
        return text;
}

/* ---- the loop ---- */

static void add_message(struct loop *L, const char *role, const char *content)
{
        json_arr_add(L->messages, json_pack("{s:s, s:o}", "role", role, "content", json_text(content)));
}

/* A call that is not run because the turn asked for too many: every call still gets its
 * tool message (the API wants one per call id). */
static char *not_run(struct loop *L, size_t i)
{
        int cap = L->o->max_calls > 0 ? L->o->max_calls : AGENT_MAX_CALLS;
        L->st->calls++;
        L->st->not_run++;
        if ((int)i >= cap)
                return tool_error(
                        L,
                        "not run: at most %d tool calls per turn; make the calls that are left in the "
                        "next turn",
                        cap);
        return tool_error(L,
                          "not run: --max-steps %d is used up (every tool call after a turn's first counts)",
                          L->max_steps);
}

/* The model's tool calls, run in order; returns how many of them were refused. */
static int run_calls(struct loop *L, json_t *calls, int *ncalls)
{
        int cap = L->o->max_calls > 0 ? L->o->max_calls : AGENT_MAX_CALLS;
        size_t i;
        json_t *call;
        int refused = 0;

        *ncalls = (int)json_array_size(calls);
        json_array_foreach(calls, i, call) {
                bool r = false;
                /* One response may ask for hundreds of calls: the turn's first is in its step,
                 * each further one takes a step of --max-steps, and a turn runs at most cap. */
                bool run = (int)i < cap && (i == 0 || L->steps_used < L->max_steps);
                if (run && i > 0)
                        L->steps_used++;
                _cleanup_free_ char *text = run ? do_call(L, call, &r) : not_run(L, i);
                refused += r || !run;
                const char *id = json_string_value(json_object_get(call, "id"));
                json_arr_add(L->messages, json_pack("{s:s, s:s, s:s}", "role", "tool", "tool_call_id",
                                                    id ? id : "", "content", text));
        }
        return refused;
}

/* Calls without an id (some servers omit it) get one, in the echoed assistant message and
 * in their tool message alike, so that each result answers its call. */
static void name_calls(json_t *calls, int step)
{
        size_t i;
        json_t *c;

        json_array_foreach(calls, i, c) {
                const char *id = json_string_value(json_object_get(c, "id"));
                if (json_is_object(c) && (!id || !*id))
                        json_obj_set(c, "id", json_sprintf("call_txbox_%d_%zu", step, i));
        }
}

/* Ask, run; returns 1 to go on, 0 when the loop stops (L->st->stop says why), -errno. */
static int step(struct loop *L, int n, int *refused_turns, struct txbox_error *err)
{
        struct agent_stats *st = L->st;
        int64_t t0 = mono_us();
        struct reply rp;
        if (!ask_model(L, &rp, err)) {
                snprintf(st->stop, sizeof(st->stop), "the model could not be reached");
                return -EIO;
        }
        json_t *msg = rp.msg;
        st->steps = n;
        L->steps_used++;
        json_t *calls = json_object_get(msg, "tool_calls");
        const char *content = json_string_value(json_object_get(msg, "content"));
        name_calls(calls, n);
        json_t *echo = json_deep_copy(msg);
        json_obj_set(echo, "role", json_string("assistant"));
        json_arr_add(L->messages, echo);
        logf_(L, "step %d: model replied in %lld ms with %zu tool call%s%s", n,
              (long long)(mono_us() - t0) / 1000, json_array_size(calls),
              json_array_size(calls) == 1 ? "" : "s",
              !strcmp(rp.finish, "length") ? " (cut off at its token limit)" : "");
        if ((!json_is_array(calls) || json_array_size(calls) == 0) && !strcmp(rp.finish, "length")) {
                /* Cut off, not finished: let it go on (the steps bound this). */
                add_message(L, "user",
                            "Your reply was cut off at the output token limit. Continue where it stopped, "
                            "or make the tool call you meant to make.");
                json_decref(msg);
                return 1;
        }
        if (!json_is_array(calls) || json_array_size(calls) == 0) {
                st->finished = true;
                st->final_answer = xstrdup(content ? content : "");
                snprintf(st->stop, sizeof(st->stop), "final answer");
                json_decref(msg);
                return 0;
        }
        int ncalls = 0;
        int refused = run_calls(L, calls, &ncalls);
        json_decref(msg);
        *refused_turns = refused == ncalls ? *refused_turns + 1 : 0;
        int max_ref = L->o->max_refusals > 0 ? L->o->max_refusals : 3;
        if (*refused_turns >= max_ref) {
                snprintf(st->stop, sizeof(st->stop), "%d turns in a row refused", *refused_turns);
                return 0;
        }
        return 1;
}

static double time_bare_true(void)
{
        int64_t t0 = mono_us();
        pid_t pid = fork();
        if (pid == 0) {
                execl("/bin/sh", "sh", "-c", "true", (char *)NULL);
                _exit(TXBOX_EXIT_NOTFOUND);
        }
        if (pid < 0)
                return -1;
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return (double)(mono_us() - t0) / 1000.0;
}

/* Baseline for the overhead: the same trivial program bare and as a discarded transaction,
 * the best of three each (the first runs warm the caches). */
static void measure_baseline(struct loop *L)
{
        char *argv[] = {"/bin/sh", "-c", "true", NULL};
        double bare = -1, txd = -1;
        for (int i = 0; i < 3; i++) {
                double b = time_bare_true();
                struct txbox_command cmd = {.argv = argv, .mode = TXBOX_COMMIT_DISCARD,
                                            .opts.net = L->o->net};
                struct txbox_command_result res;
                struct txbox_error err;
                int64_t t0 = mono_us();
                if (txbox_command_run(L->ws, &cmd, &res, &err) < 0)
                        return;
                double t = (double)(mono_us() - t0) / 1000.0;
                txbox_command_result_clear(&res);
                bare = bare < 0 || b < bare ? b : bare;
                txd = txd < 0 || t < txd ? t : txd;
        }
        L->st->bare_ms = bare, L->st->tx_true_ms = txd;
        logf_(L, "baseline: sh -c true takes %.1f ms bare, %.1f ms as a transaction", bare, txd);
}

/* With --atomic: commit the session when the model finished and the last call succeeded. */
static int finish_session(struct loop *L, struct txbox_error *err)
{
        struct agent_stats *st = L->st;
        struct txbox_tx *tx = NULL;
        bool commit = st->finished && L->last_status == 0;
        int r = txbox_tx_load(L->ws, st->session, &tx, err);

        if (r == 0 && commit && (r = txbox_tx_evaluate(tx, err)) >= 0)
                r = txbox_tx_commit(tx, err);
        if (r < 0 || !commit) {
                struct txbox_error e2 = {0};
                const char *why = r < 0 ? err->msg
                                  : L->last_status < 0 ? "the agent ran no command"
                                  : st->finished ? "the last command failed"
                                                 : "the agent did not finish";
                if (tx)
                        txbox_tx_rollback(tx, why, &e2);
                st->rolled_back += st->committed;
                st->committed = 0;
                st->session_outcome = "rolled_back";
                logf_(L, "session %s rolled back: %s", st->session, why);
        } else {
                st->session_outcome = "committed";
                logf_(L, "session %s committed", st->session);
        }
        txbox_tx_free(tx);
        return r < 0 ? r : 0;
}

static int loop_setup(struct loop *L, struct txbox_error *err)
{
        const struct agent_opts *o = L->o;
        L->last_status = -1;
        L->st->bare_ms = L->st->tx_true_ms = -1;
        if (o->record_file && !(L->record = fopen(o->record_file, "ae")))
                return tx_err(err, errno, "cannot open '%s' to record the responses: %s", o->record_file,
                              strerror(errno));
        int r = http_init(&L->http, o, err);
        if (r < 0)
                return r;
        L->tools = tool_defs();
        L->messages = json_array();
        add_message(L, "system", o->system_prompt ? o->system_prompt : default_system_prompt);
        add_message(L, "user", o->task);
        if (o->baseline)
                measure_baseline(L);
        if (o->atomic) {
                struct txbox_record rec = {0};
                if ((r = txbox_session_begin(L->ws, &rec, err)) < 0)
                        return r;
                snprintf(L->st->session, sizeof(L->st->session), "%s", rec.id);
                txbox_record_clear(&rec);
                logf_(L, "session %s begun: everything commits at the end or nothing does", L->st->session);
        }
        return 0;
}

int agent_run(struct txbox_ws *ws, const struct agent_opts *o, struct agent_stats *st,
              struct txbox_error *err)
{
        struct loop L = {.ws = ws, .o = o, .st = st};
        int max_steps = o->max_steps > 0 ? o->max_steps : 30;
        int refused_turns = 0, r;
        int64_t t0;

        memset(st, 0, sizeof(*st));
        r = loop_setup(&L, err);
        t0 = mono_us(); /* after the baseline: the session's own time */
        L.max_steps = max_steps;
        for (int n = 1; r == 0; n++) {
                if (L.steps_used >= max_steps) {
                        snprintf(st->stop, sizeof(st->stop), "--max-steps %d reached", max_steps);
                        break;
                }
                r = step(&L, n, &refused_turns, err);
                r = r > 0 ? 0 : r < 0 ? r : 1;
        }
        r = r > 0 ? 0 : r;
        if (st->session[0]) {
                struct txbox_error e2 = {0};
                int r2 = finish_session(&L, &e2);
                if (r2 < 0 && r == 0) {
                        r = r2;
                        *err = e2;
                }
        }
        st->wall_ms = (mono_us() - t0) / 1000;
        if (L.record)
                fclose(L.record);
        json_decref(L.messages);
        json_decref(L.tools);
        if (L.http.url || L.http.curl)
                http_free(&L.http);
        return r;
}

void agent_stats_clear(struct agent_stats *st)
{
        free(st->final_answer);
        memset(st, 0, sizeof(*st));
}

/* ---- the summary ---- */

static double share(int a, int b) { return b ? 100.0 * a / b : 0; }

/* "(100%)", or "(none)" when there was nothing to count. */
static const char *pct(char *buf, size_t size, int a, int b)
{
        if (b)
                snprintf(buf, size, "(%.0f%%)", share(a, b));
        else
                snprintf(buf, size, "(none)");
        return buf;
}

/* Overhead of one transaction: the transacted trivial program minus the bare one. */
static double overhead_ms(const struct agent_stats *st)
{
        return st->tx_true_ms >= 0 && st->bare_ms >= 0 ? st->tx_true_ms - st->bare_ms : -1;
}

static double overhead_pct(const struct agent_stats *st)
{
        double ov = overhead_ms(st);
        int ntx = st->calls - st->tool_errors;
        return ov >= 0 && st->wall_ms > 0 ? 100.0 * ov * ntx / (double)st->wall_ms : -1;
}

json_t *agent_summary_json(const struct agent_stats *st)
{
        json_t *o = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:b, s:I, s:I, s:I}", "steps",
                              st->steps, "tool_calls", st->calls, "committed", st->committed, "rolled_back",
                              st->rolled_back, "denied", st->denied, "tool_errors", st->tool_errors,
                              "http_retries", st->http_retries, "stop", st->stop, "finished", st->finished,
                              "model_ms", (json_int_t)st->model_ms, "txbox_ms", (json_int_t)st->txbox_ms,
                              "wall_ms", (json_int_t)st->wall_ms);
        json_nonnull(o);
        json_obj_set(o, "high_risk", json_pack("{s:i, s:i, s:o}", "calls", st->high_risk, "intercepted",
                                               st->high_risk_intercepted, "share_pct",
                                               st->high_risk
                                               ? json_real(share(st->high_risk_intercepted, st->high_risk))
                                                             : json_null()));
        json_obj_set(o, "failed_states", json_pack("{s:i, s:i, s:o}", "failed", st->failed, "rolled_back",
                                                   st->failed_rolled_back, "share_pct",
                                                   st->failed
                                                   ? json_real(share(st->failed_rolled_back, st->failed))
                                                              : json_null()));
        double ov = overhead_ms(st);
        json_obj_set(o, "overhead", ov < 0 ? json_null()
                                           : json_pack("{s:f, s:f, s:f, s:f}", "per_tx_ms", ov, "pct_of_wall",
                                                       overhead_pct(st), "bare_ms", st->bare_ms, "tx_ms",
                                                       st->tx_true_ms));
        json_obj_set(o, "not_run", json_integer(st->not_run));
        json_obj_set(o, "session", st->session[0] ? json_string(st->session) : json_null());
        json_obj_set(o, "session_outcome",
                     st->session_outcome ? json_string(st->session_outcome) : json_null());
        json_obj_set(o, "final_answer", json_text(st->final_answer));
        return o;
}

char *agent_summary_text(const struct agent_stats *st)
{
        char ov[200] = "not measured (--no-baseline)", p1[16], p2[16];
        if (overhead_ms(st) >= 0)
                snprintf(ov, sizeof(ov), "%.1f ms per transaction, %.2f%% of the session's wall time "
                                         "(sh -c true: %.1f ms bare, %.1f ms as a transaction)",
                         overhead_ms(st), overhead_pct(st), st->bare_ms, st->tx_true_ms);
        _cleanup_free_ char *sess = st->session[0] ? xasprintf("  session:    %s %s\n", st->session,
                                                               st->session_outcome ? st->session_outcome : "")
                                                   : xstrdup("");
        return xasprintf("session summary\n"
                         "  stopped:    %s after %d step%s, %d tool call%s\n"
                         "  outcomes:   %d committed, %d rolled back, %d denied, %d tool errors\n%s"
                         "  high-risk calls intercepted: %d of %d %s\n"
                         "  failed states rolled back:   %d of %d %s\n"
                         "  overhead:   %s\n"
                         "  time:       %lld ms in the model, %lld ms in txbox, %lld ms in all (%d "
                                 "retries)\n",
                         st->stop, st->steps, st->steps == 1 ? "" : "s", st->calls, st->calls == 1 ? "" : "s",
                         st->committed, st->rolled_back, st->denied, st->tool_errors, sess,
                         st->high_risk_intercepted, st->high_risk,
                         pct(p1, sizeof(p1), st->high_risk_intercepted, st->high_risk),
                         st->failed_rolled_back, st->failed,
                         pct(p2, sizeof(p2), st->failed_rolled_back, st->failed), ov, (long long)st->model_ms,
                         (long long)st->txbox_ms, (long long)st->wall_ms, st->http_retries);
}
