/* The headless agent loop: ask the model (agent_model.c), run the tool calls of its reply
 * (agent_tools.c), give the results back, until a final answer or a limit; the --atomic
 * session and the baseline around it; and the session summary.
 *
 * Every tool call is a transaction (txbox_command_run), its outcome back to the model as the
 * tool result; the loop bounds steps, calls per turn and refused turns. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/wait.h>

#include "faces/agent_int.h"
#include "store/record.h"
#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/mem.h"

static const char default_system_prompt[] =
        "You are a coding agent working in a workspace directory (your current directory). "
        "Use the tools to inspect and change it. Every tool call runs as a transaction: "
        "a command that fails, is refused by the policy or breaks an effect rule is rolled back "
        "and changes nothing; its result says why (rule and reason), so choose another way. "
        "Paths are relative to the workspace. When the task is done, reply with a short final "
        "answer and no tool call.";

void agent_logf(struct loop *L, const char *fmt, ...)
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

/* ---- the loop ---- */

static void add_message(struct loop *L, const char *role, const char *content)
{
        jv_push(L->messages, json_pack("{s:s, s:o}", "role", role, "content", jv_text(content)));
}

/* A call that is not run because the turn asked for too many: every call still gets its
 * tool message (the API wants one per call id). */
static char *not_run(struct loop *L, size_t i)
{
        int cap = L->o->max_calls > 0 ? L->o->max_calls : AGENT_MAX_CALLS;
        L->st->calls++;
        L->st->not_run++;
        if ((int)i >= cap)
                return agent_tool_error(
                        L,
                        "not run: at most %d tool calls per turn; make the calls that are left in the "
                        "next turn",
                        cap);
        return agent_tool_error(
                L, "not run: --max-steps %d is used up (every tool call after a turn's first counts)",
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
                _cleanup_free_ char *text = run ? agent_tool_call(L, call, &r) : not_run(L, i);
                refused += r || !run;
                const char *id = json_string_value(json_object_get(call, "id"));
                jv_push(L->messages, json_pack("{s:s, s:s, s:s}", "role", "tool", "tool_call_id",
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
                        jv_set(c, "id", json_sprintf("call_txbox_%d_%zu", step, i));
        }
}

/* Ask, run; returns 1 to go on, 0 when the loop stops (L->st->stop says why), -errno. */
static int step(struct loop *L, int n, int *refused_turns, struct txbox_error *err)
{
        struct agent_stats *st = L->st;
        int64_t t0 = mono_us();
        struct reply rp;
        if (!agent_ask_model(L, &rp, err)) {
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
        jv_set(echo, "role", json_string("assistant"));
        jv_push(L->messages, echo);
        agent_logf(L, "step %d: model replied in %lld ms with %zu tool call%s%s", n,
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
        agent_logf(L, "baseline: sh -c true takes %.1f ms bare, %.1f ms as a transaction", bare, txd);
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
                agent_logf(L, "session %s rolled back: %s", st->session, why);
        } else {
                st->session_outcome = "committed";
                agent_logf(L, "session %s committed", st->session);
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
        int r = agent_http_init(&L->http, o, err);
        if (r < 0)
                return r;
        L->tools = agent_tool_defs();
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
                agent_logf(L, "session %s begun: everything commits at the end or nothing does",
                           L->st->session);
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
                agent_http_free(&L.http);
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
        jv_nonnull(o);
        jv_set(o, "high_risk", json_pack("{s:i, s:i, s:o}", "calls", st->high_risk, "intercepted",
                                               st->high_risk_intercepted, "share_pct",
                                               st->high_risk
                                               ? json_real(share(st->high_risk_intercepted, st->high_risk))
                                                             : json_null()));
        json_t *rules = jv_nonnull(json_object());
        for (int i = 0; i < st->nrules; i++)
                jv_set(rules, st->rules[i].rule,
                             json_pack("{s:i, s:i}", "denied", st->rules[i].denied, "broken", st->rules[i].broken));
        jv_set(o, "stopped_by_rules", json_pack("{s:o, s:i, s:i}", "rules", rules, "other_rules", st->rules_other,
                                                      "asks_refused", st->asks_refused));
        jv_set(o, "failed_states", json_pack("{s:i, s:i, s:o}", "failed", st->failed, "rolled_back",
                                                   st->failed_rolled_back, "share_pct",
                                                   st->failed
                                                   ? json_real(share(st->failed_rolled_back, st->failed))
                                                              : json_null()));
        double ov = overhead_ms(st);
        jv_set(o, "overhead", ov < 0 ? json_null()
                                           : json_pack("{s:f, s:f, s:f, s:f}", "per_tx_ms", ov, "pct_of_wall",
                                                       overhead_pct(st), "bare_ms", st->bare_ms, "tx_ms",
                                                       st->tx_true_ms));
        jv_set(o, "not_run", json_integer(st->not_run));
        jv_set(o, "session", st->session[0] ? json_string(st->session) : json_null());
        jv_set(o, "session_outcome",
                     st->session_outcome ? json_string(st->session_outcome) : json_null());
        jv_set(o, "final_answer", jv_text(st->final_answer));
        return o;
}

/* "rm-root 1, write-system 2" for the rules that stopped calls (denied or broken). */
static char *rule_list(const struct agent_stats *st, bool denied)
{
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);

        for (int i = 0, n = 0; f && i < st->nrules; i++) {
                int c = denied ? st->rules[i].denied : st->rules[i].broken;
                if (c)
                        fprintf(f, "%s%s %d", n++ ? ", " : "", st->rules[i].rule, c);
        }
        if (f && fclose(f) != 0)
                s = NULL;
        return s && *s ? s : (free(s), xstrdup("none"));
}

char *agent_summary_text(const struct agent_stats *st)
{
        char ov[200] = "not measured (--no-baseline)", p2[16];
        if (overhead_ms(st) >= 0)
                snprintf(ov, sizeof(ov), "%.1f ms per transaction, %.2f%% of the session's wall time "
                                         "(sh -c true: %.1f ms bare, %.1f ms as a transaction)",
                         overhead_ms(st), overhead_pct(st), st->bare_ms, st->tx_true_ms);
        _cleanup_free_ char *sess = st->session[0] ? xasprintf("  session:    %s %s\n", st->session,
                                                               st->session_outcome ? st->session_outcome : "")
                                                   : xstrdup("");
        _cleanup_free_ char *den = rule_list(st, true), *brk = rule_list(st, false);
        _cleanup_free_ char *stopped =
                st->high_risk
                        ? xasprintf("%d call%s, %s kept out of the workspace (denied before running: %s; "
                                    "rolled back for a broken rule: %s%s); a rule's refusal is its judgement, "
                                    "not proof of danger: txbox log shows each",
                                    st->high_risk, st->high_risk == 1 ? "" : "s",
                                    st->high_risk_intercepted == st->high_risk ? "all"
                                                                                 : "not all",
                                    den, brk, st->rules_other ? "; and other rules" : "")
                        : xstrdup("none");
        _cleanup_free_ char *asks = st->asks_refused
                                            ? xasprintf("  asks refused: %d (the policy asks; without --approve "
                                                        "nobody answers)\n",
                                                        st->asks_refused)
                                            : xstrdup("");
        return xasprintf("session summary\n"
                         "  stopped:    %s after %d step%s, %d tool call%s\n"
                         "  outcomes:   %d committed, %d rolled back, %d denied, %d tool errors\n%s"
                         "  stopped by a rule: %s\n%s"
                         "  failed states rolled back:   %d of %d %s\n"
                         "  overhead:   %s\n"
                         "  time:       %lld ms in the model, %lld ms in txbox, %lld ms in all (%d "
                                 "retries)\n",
                         st->stop, st->steps, st->steps == 1 ? "" : "s", st->calls, st->calls == 1 ? "" : "s",
                         st->committed, st->rolled_back, st->denied, st->tool_errors, sess, stopped, asks,
                         st->failed_rolled_back, st->failed,
                         pct(p2, sizeof(p2), st->failed_rolled_back, st->failed), ov, (long long)st->model_ms,
                         (long long)st->txbox_ms, (long long)st->wall_ms, st->http_retries);
}
