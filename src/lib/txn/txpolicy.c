/* The policy in a transaction's life: before the run, at every exec, and on the changeset.
 * Every decision on a command is made in the workspace's judge process (judging.c). */
#define _GNU_SOURCE
#include "base/cleanup.h"
#include "base/error.h"
#include "base/mem.h"
#include "base/strv.h"
#include "base/trace.h"
#include "policy/effects.h"
#include "store/audit.h"
#include "policy/runlater.h"
#include "txn/tx.h"

void txbox_ws_set_policy(struct txbox_ws *ws, const char *file)
{
        free(ws->policy_file);
        ws->policy_file = xstrdup_or_null(file);
        ws_judge_stop(ws); /* it holds the old policy */
        policy_free(ws->policy);
        ws->policy = NULL;
}

void txbox_ws_set_approver(struct txbox_ws *ws, const char *program)
{
        free(ws->approver);
        ws->approver = xstrdup_or_null(program);
}

int txbox_ws_allow_effects(struct txbox_ws *ws, const char *rules, struct txbox_error *err)
{
        struct strvec v = {0};
        _cleanup_free_ char *copy = xstrdup(rules ? rules : "");
        char *save = NULL;
        for (char *r = strtok_r(copy, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
                if (!effects_is_allowable(r)) {
                        strvec_clear(&v);
                        char list[256] = "";
                        for (size_t i = 0; effects_allowable(i); i++)
                                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                                         effects_allowable(i));
                        return tx_err(err, EINVAL, "--allow-effect=%s: not an effect rule a user can allow (%s)", r,
                                      list);
                }
                strvec_push(&v, xstrdup(r));
        }
        strvec_clear(&ws->allowed_effects);
        ws->allowed_effects = v;
        return 0;
}

/* Allowed as it stands, or an "ask" the approval program allowed. */
static bool allowed(struct txbox_tx *tx, const struct policy_result *res)
{
        if (res->decision == POLICY_ALLOW)
                return true;
        return res->decision == POLICY_ASK && tx->ws->approver &&
               policy_ask_approver(tx->ws->approver, res, tx->ws->path) == 1;
}

int ws_policy(struct txbox_ws *ws, const struct policy **out, struct txbox_error *err)
{
        int r;
        if (!ws->policy && (r = policy_load_for(ws->path, ws->policy_file, &ws->policy, err)) < 0)
                return r;
        *out = ws->policy;
        return 0;
}

/* policy_ctx.made_by_txbox: the audit log's newest committed change of path is its
 * creation by a command txbox ran (a program whose output running it again gives back),
 * not by an agent's own edit tool (content the model wrote, in no log: txbox hook records
 * it as a transaction too); or (any) any change by either, the file unchanged since. */
static bool made_by_txbox(void *arg, const char *path, int64_t ctime_ms, bool any)
{
        struct txbox_ws *ws = arg;
        enum txbox_change c;
        int64_t ended = 0, deleted = 0;
        bool ran = false;
        struct txbox_error e = {0};
        int r = ws->audit ? audit_last_change(ws->audit, path, &c, &ended, &deleted, &ran, &e) : 0;
        if (r < 0) /* the log cannot say: the answer that judges more strictly */
                return any;
        if (r == 0 || ended <= 0 || ctime_ms > ended)
                return false;
        return any ? c != TXBOX_DELETED : c == TXBOX_ADDED && ran && !deleted;
}

static void set_ctx(struct txbox_tx *tx, const char *cwd)
{
        const char *home = getenv("HOME");
        free(tx->pctx_cwd);
        tx->pctx_cwd = xstrdup(cwd && cwd[0] == '/' ? cwd : tx->ws->path);
        tx->pctx = (struct policy_ctx){
                .workspace = tx->ws->path,
                .home = home && home[0] == '/' ? home : NULL,
                .cwd = tx->pctx_cwd,
                .made_by_txbox = made_by_txbox,
                .made_arg = tx->ws,
        };
}

/* The record says who refused and why, so that an agent can fix exactly that part. */
static void record_denial(struct txbox_tx *tx, const struct policy_result *res)
{
        free(tx->rec.decision);
        free(tx->rec.rule);
        free(tx->rec.reason);
        tx->rec.decision = xstrdup("deny");
        tx->rec.rule = xstrdup(res->rule[0] ? res->rule : "policy");
        tx->rec.reason = xstrdup(res->reason);
}

int txbox_tx_check_policy(struct txbox_tx *tx, const char *script, const char *cwd, struct txbox_error *err)
{
        const struct policy *p;
        struct policy_result res;
        int r;

        set_ctx(tx, cwd);
        if ((r = ws_policy(tx->ws, &p, err)) < 0)
                return r;
        (void)p; /* loaded: the judge holds a copy */
        ws_decide(tx->ws, &tx->pctx, script, tx->sp ? tx->sp_argv : tx->rec.argv, &res);
        if (allowed(tx, &res))
                return 1;
        /* Headless: "ask" with nobody to ask is refused with its reason. */
        record_denial(tx, &res);
        const char *note = policy_note(tx->ws->policy);
        free(tx->rec.message);
        tx->rec.message = xasprintf("denied by rule %s%s: %s (in: %s); nothing ran%s%s", tx->rec.rule,
                                    res.decision == POLICY_ASK ? " (needs approval)" : "", res.reason,
                                    res.command, note ? "; note: " : "", note ? note : "");
        r = tx_finish_denied(tx, err);
        return r < 0 ? r : 0;
}

static const char *last_name(const char *p)
{
        const char *s = strrchr(p, '/');
        return s ? s + 1 : p;
}

static bool exec_refused(struct txbox_tx *tx, const struct policy_result *res)
{
        if (!tx->exec_denied) {
                tx->denied = *res;
                tx->exec_denied = true;
        }
        return false;
}

/* One judgement of an exec's argv (ectx: the exec's context, at_exec set).  A refusal by a
 * rule of scope workspace is looked at again when the supervisor finds, from the kernel, that
 * a well-known tool runs this exec as its own step (execorigin.h): such a step is judged by
 * its effects, every other rule still applies (docs/DESIGN.md, "What is judged at exec").
 * The finding is kept in ectx for the exec's other judgement. */
static bool exec_allowed(struct txbox_tx *tx, struct policy_ctx *ectx,
                         struct exec_caller *caller, const char *program, char *const argv[],
                         struct policy_result *res)
{
        ws_decide(tx->ws, ectx, NULL, argv, res);
        if (allowed(tx, res))
                return true;
        if (ectx->tool_internal || !res->workspace_scope || !caller ||
            !exec_caller_tool(caller, program, &tx->tools))
                return false;
        ectx->tool_internal = true;
        ws_decide(tx->ws, ectx, NULL, argv, res);
        return allowed(tx, res);
}

/* An exec let through: the tools it starts are noted (npm, which the kernel cannot tell
 * from another node program afterwards). */
static bool exec_let_through(struct txbox_tx *tx, struct exec_caller *caller, const char *program,
                             char *const argv[])
{
        if (caller)
                exec_tools_note(&tx->tools, caller, program, argv);
        return true;
}

/* Called by the supervisor for every execve inside the sandbox.  argv[0] is the caller's
 * choice (exec -a ls /bin/rm -rf ., a link named ls): the program that will actually run
 * (guard.h) is judged as well, by its own name in argv[0]'s place, and either refusal
 * counts; argv[0] itself still counts too (a multi-call binary acts on it).  A program with
 * no name to judge (a memfd, a deleted file) is refused, and so is an exec whose judgement
 * failed (the judge crashed, aborted, hung: judging.c); the next exec is judged again. */
bool tx_exec_check(void *ctx, const char *program, char *const argv[], struct exec_caller *caller)
{
        trace_mark("exec check");
        struct txbox_tx *tx = ctx;
        const struct policy *p = tx->ws->policy;
        struct policy_result res = {.decision = POLICY_DENY, .offset = -1};
        struct policy_ctx ectx = tx->pctx;

        if (!p) {
                policy_result_failed(&res, argv[0], "no policy is loaded");
                return exec_refused(tx, &res);
        }
        if (!program) {
                snprintf(res.rule, sizeof(res.rule), "exec-unnamed");
                snprintf(res.reason, sizeof(res.reason),
                         "a program with no name (a memfd, a deleted or anonymous "
                         "file) cannot be judged; run a program from a file");
                snprintf(res.command, sizeof(res.command), "%s", argv[0] ? argv[0] : "");
                return exec_refused(tx, &res);
        }
        ectx.at_exec = true;
        if (!exec_allowed(tx, &ectx, caller, program, argv, &res))
                return exec_refused(tx, &res);
        if (!argv[0] || !strcmp(last_name(program), last_name(argv[0])))
                return exec_let_through(tx, caller, program, argv);
        size_t argc = 0;
        while (argv[argc])
                argc++;
        _cleanup_free_ char **as_run = xcalloc(argc + 1, sizeof(char *));
        memcpy(as_run, argv, argc * sizeof(char *));
        as_run[0] = (char *)program;
        if (!exec_allowed(tx, &ectx, caller, program, as_run, &res))
                return exec_refused(tx, &res);
        return exec_let_through(tx, caller, program, argv);
}

/* The violations of the rules the user allowed (--allow-effect) leave the changeset; the
 * record's message and a notice say what was allowed, and on which paths. */
static bool allowed_rule(const struct txbox_ws *ws, const char *rule)
{
        for (size_t i = 0; i < ws->allowed_effects.n; i++)
                if (!strcmp(ws->allowed_effects.v[i], rule))
                        return true;
        return false;
}

static void allow_once(struct txbox_tx *tx)
{
        struct changeset *cs = &tx->cs;
        size_t kept = 0, n = 0;
        char paths[512] = "", rules[256] = "";
        for (size_t i = 0; i < cs->nviolations; i++) {
                struct txbox_violation *v = &cs->violations[i];
                if (!v->rule || !allowed_rule(tx->ws, v->rule) || !effects_is_allowable(v->rule)) {
                        cs->violations[kept++] = *v;
                        continue;
                }
                if (!strstr(rules, v->rule))
                        snprintf(rules + strlen(rules), sizeof(rules) - strlen(rules), "%s%s", rules[0] ? ", " : "",
                                 v->rule);
                if (n++ < 3)
                        snprintf(paths + strlen(paths), sizeof(paths) - strlen(paths), "%s%.100s", n > 1 ? ", " : "",
                                 v->path ? v->path : "");
                free(v->rule);
                free(v->path);
                free(v->detail);
        }
        cs->nviolations = kept;
        if (!n)
                return;
        free(tx->rec.message);
        tx->rec.message = xasprintf("the user allowed %s for this command (--allow-effect): %zu violation%s on %s%s",
                                    rules, n, n == 1 ? "" : "s", paths, n > 3 ? " and more" : "");
        if (tx->ws->notice)
                tx->ws->notice(tx->ws->notice_ctx, tx->rec.message);
}

/* What a transaction leaves for the user's next command to run (effect-run-later) is the
 * user's to allow: with an approval channel (--approve), it is put to it as one "ask" (the
 * first such violation and how many there are), and when it answers allow those violations
 * are dropped; every other rule still holds.  Without one they stand (refused, 123). */
static void approve_run_later(struct txbox_tx *tx)
{
        struct changeset *cs = &tx->cs;
        size_t n = 0, first = 0;

        for (size_t k = cs->nviolations; k-- > 0;) {
                if (strcmp(cs->violations[k].rule, RUNLATER_RULE))
                        return; /* refused whatever the answer: nothing to ask */
                n++, first = k;
        }
        if (!n || !tx->ws->approver)
                return;
        struct policy_result res = {.decision = POLICY_ASK, .offset = -1};
        snprintf(res.rule, sizeof(res.rule), "%s", RUNLATER_RULE);
        snprintf(res.reason, sizeof(res.reason), "%s: %s%s", cs->violations[first].path,
                 cs->violations[first].detail, n > 1 ? " (and more of the kind)" : "");
        size_t off = 0;
        for (char **a = tx->rec.argv; a && *a && off + 1 < sizeof(res.command); a++)
                off += (size_t)snprintf(res.command + off, sizeof(res.command) - off, "%s%s", off ? " " : "", *a);
        if (policy_ask_approver(tx->ws->approver, &res, tx->ws->path) != 1)
                return;
        size_t kept = 0;
        for (size_t k = 0; k < cs->nviolations; k++) {
                struct txbox_violation *v = &cs->violations[k];
                if (strcmp(v->rule, RUNLATER_RULE)) {
                        cs->violations[kept++] = *v;
                        continue;
                }
                free(v->rule);
                free(v->path);
                free(v->detail);
        }
        cs->nviolations = kept;
}

/* After the run and the changeset: a refused exec becomes a violation (rolled back), and the
 * effect rules judge what the program changed. */
int tx_judge_effects(struct txbox_tx *tx, int upper_fd, struct txbox_error *err)
{
        const struct policy *p;
        int r;

        if (tx->exec_denied) {
                char *detail = xasprintf("exec refused: %s", tx->denied.reason);
                changeset_add_violation(&tx->cs, tx->denied.rule[0] ? tx->denied.rule : "policy",
                                        tx->denied.command, detail);
                free(detail);
                record_denial(tx, &tx->denied);
        }
        if (!tx->pctx.workspace)
                set_ctx(tx, NULL);
        if ((r = ws_policy(tx->ws, &p, err)) < 0)
                return r;
        r = effects_check(p, upper_fd, tx->ws->ws_fd, &tx->cs, &tx->pctx, err);
        if (r >= 0 && tx->ws->allowed_effects.n)
                allow_once(tx);
        if (r >= 0)
                approve_run_later(tx);
        return r < 0 ? r : 0;
}
