/* The agent's model client: chat-completions requests over libcurl (loaded at run time, see
 * curlapi.h), the reply read whole or assembled from a server-sent event stream, retries with
 * exponential backoff (or the server's Retry-After) and the recording of every reply.  Apart
 * from the loop (agent.c) because it is all about the network and the API's wire format.
 *
 * Nothing here trusts the model or the network: responses are size-capped and parsed
 * defensively, and requests time out. */
#define _GNU_SOURCE
#include <math.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "faces/agent_int.h"
#include "store/record.h"
#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/mem.h"

#define MAX_RESPONSE (16 * 1024 * 1024) /* bytes of one HTTP response kept */

struct buf {
        char *p;
        size_t n;
        bool over;
};

/* The chat-completions URL for an endpoint given with or without /v1 (malloc'd). */
static char *agent_completions_url(const char *endpoint);

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

int agent_http_init(struct http *h, const struct agent_opts *o, struct txbox_error *err)
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

void agent_http_free(struct http *h)
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
                        jv_push(calls, json_pack("{s:s, s:{s:s, s:s}}", "type", "function", "function",
                                                      "name", "", "arguments", ""));
                json_t *c = json_array_get(calls, k), *fn = json_object_get(c, "function");
                json_t *df = json_object_get(d, "function");
                if (json_is_string(json_object_get(d, "id")))
                        jv_set(c, "id", json_incref(json_object_get(d, "id")));
                static const char *const parts[] = {"name", "arguments"};
                for (size_t p = 0; p < 2; p++) {
                        const char *add = json_string_value(json_object_get(df, parts[p]));
                        if (!add)
                                continue;
                        _cleanup_free_ char *v =
                                xasprintf("%s%s", json_string_value(json_object_get(fn, parts[p])), add);
                        jv_set(fn, parts[p], jv_text(v));
                }
        }
}

/* A reply streamed as server-sent events (chat.completion.chunk) although we asked for none:
 * assembled into one message, or NULL with why filled. */
static json_t *parse_sse(const char *body, struct reply *rp, char *why, size_t whylen)
{
        json_t *calls = jv_nonnull(json_array());
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
                            *content ? jv_text(content) : json_null());
        if (json_array_size(calls))
                jv_set(rp->msg, "tool_calls", calls);
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

/* One response per line, as the test's scripted server replays them: the reply as a chat
 * completion (a streamed one assembled). */
static void record_response(FILE *f, const struct reply *rp)
{
        json_t *j = json_pack("{s:[{s:i, s:O, s:s}]}", "choices", "index", 0, "message", rp->msg,
                              "finish_reason", rp->finish[0] ? rp->finish : "stop");
        _cleanup_free_ char *line = jv_dump(jv_nonnull(j));
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
bool agent_ask_model(struct loop *L, struct reply *rp, struct txbox_error *err)
{
        /* "stream": false: some servers stream unless told not to (the reply is read whole). */
        json_t *req = json_pack("{s:s, s:O, s:O, s:s, s:b}", "model", L->o->model, "messages", L->messages,
                                "tools", L->tools, "tool_choice", "auto", "stream", 0);
        _cleanup_free_ char *text = jv_dump(jv_nonnull(req));
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
                agent_logf(L, "model request failed (%s); retry %d of %d in %ld ms%s", why, a, attempts - 1,
                           wait, L->http.retry_after_ms > 0 ? " (Retry-After)" : "");
                L->st->http_retries++;
                sleep_ms(wait);
                backoff = backoff > 60000 ? 120000 : backoff * 2;
        }
        L->st->model_ms += (mono_us() - t0) / 1000;
        if (!rp->msg)
                tx_err(err, EIO, "model at '%s' failed: %s", L->http.url, why);
        return rp->msg != NULL;
}

static char *agent_completions_url(const char *endpoint)
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
