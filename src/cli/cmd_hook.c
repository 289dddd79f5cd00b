/* txbox hook AGENT: answer an agent's pre-tool hook on stdin/stdout with the policy's
 * decision on a shell command.  It never runs anything: the command is parsed and matched,
 * as txbox check does.  The agent's edit tools are judged, captured and recorded as
 * transactions by hook_edit.c.
 *
 *   claude-code  PreToolUse, tool "Bash": deny -> hookSpecificOutput permissionDecision
 *                "deny" with the reason; ask -> "ask" (Claude Code asks the user); allow ->
 *                no output (no opinion: Claude Code's own permission rules still apply).
 *   codex        PreToolUse, tool "Bash", same JSON as Claude Code; ask counts as deny
 *                (Codex has no prompt for hooks), allow -> no output.
 *   gemini       BeforeTool, tool "run_shell_command": {"decision": "deny", "reason": ...};
 *                ask counts as deny; allow -> {} (Gemini CLI expects JSON on stdout).
 * Input that cannot be understood fails closed: exit 2 with the reason on stderr, which all
 * three agents treat as "block".  So does any failure of the judgement itself: it runs in a
 * child process (judge_fork), and a child that crashes, aborts (out of memory), hangs past
 * its deadline or ends in any other way than with an answer is a block. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "hook.h"
#include "policy/judge.h"

#define HOOK_MAX_INPUT (4 * 1024 * 1024)

static const struct {
        const char *name;
        enum hook_agent agent;
        const char *shell_tool; /* the agent's name for its shell tool */
} agents[] = {
        {"claude-code", AGENT_CLAUDE, "Bash"},
        {"codex", AGENT_CODEX, "Bash"},
        {"gemini", AGENT_GEMINI, "run_shell_command"},
};

static void hook_usage(FILE *f)
{
        fprintf(f, "Usage: txbox [-C DIR] [--state DIR] [--policy FILE] hook claude-code|codex|gemini\n\n"
                   "Answer an agent's hook: read its JSON event on stdin and, for its shell\n"
                   "tool (Claude Code and Codex: Bash; Gemini CLI: run_shell_command), decide on\n"
                   "tool_input.command with the policy, without running anything.\n"
                   "  deny   print the agent's deny answer with the rule and the reason\n"
                   "  ask    Claude Code: ask the user; Codex and Gemini CLI: deny\n"
                   "  allow  no opinion (Claude Code, Codex: no output; Gemini CLI: {})\n"
                   "Input that cannot be understood is blocked (exit 2, reason on stderr), and so\n"
                   "is any failure of the judgement itself (a crash, out of memory, 10 s passed).\n"
                   "The workspace is -C DIR, else $CLAUDE_PROJECT_DIR (claude-code), else this\n"
                   "process's working directory (where the agent starts hooks): never the event's\n"
                   "cwd, which the model chooses.  That cwd is only where the command runs:\n"
                   "relative paths are judged from there, inside the workspace or not.\n"
                   "docs/INTEGRATIONS.md shows the settings for each agent.\n"
                   "claude-code also applies the Bash rules of Claude Code's own settings\n"
                   "(~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json:\n"
                   "permissions.deny and .ask add to txbox's refusals; .allow lifts an ask).\n\n"
                   "The agent's own edit tools (Claude Code: Edit, Write, MultiEdit, NotebookEdit;\n"
                   "Codex: apply_patch; Gemini CLI: write_file, replace) are answered before and\n"
                   "after they run (PreToolUse/PostToolUse, BeforeTool/AfterTool): before, each path\n"
                   "the edit writes or deletes, resolved as the tool will (symlinks followed), is\n"
                   "judged by the policy's write rules and the effect rules (.txbox/, .env, ...), and\n"
                   "what the paths hold is kept; after, the edit is recorded as a committed\n"
                   "transaction: txbox log lists it, txbox undo takes it back.  An edit outside the\n"
                   "workspace is judged and not recorded; one that cannot be recorded is said in a\n"
                   "systemMessage.\n");
}

/* Fail closed: every agent reads exit 2 as "block" and shows stderr as the reason. */
int hook_block(const char *fmt, ...)
{
        va_list ap;
        char *msg = NULL;
        fputs("txbox hook: ", stderr);
        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) >= 0)
                cli_human(stderr, msg); /* names from the event: escaped */
        va_end(ap);
        free(msg);
        fputs(" (blocked: txbox fails closed)\n", stderr);
        return EXIT_BLOCK;
}

/* All of stdin (at most HOOK_MAX_INPUT bytes), or NULL with why filled. */
static char *read_stdin(size_t *len, char *why, size_t size)
{
        size_t cap = 65536;
        char *buf = malloc(cap);
        ssize_t n;

        *len = 0;
        while (buf && (n = read(STDIN_FILENO, buf + *len, cap - *len)) != 0) {
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 || *len + (size_t)n > HOOK_MAX_INPUT) {
                        snprintf(why, size, n < 0 ? "cannot read stdin" : "the event is over 4 MiB");
                        free(buf);
                        return NULL;
                }
                *len += (size_t)n;
                if (*len == cap) {
                        char *nb = realloc(buf, cap *= 2);
                        if (!nb)
                                free(buf);
                        buf = nb;
                }
        }
        if (!buf)
                snprintf(why, size, "out of memory");
        return buf;
}

/* Whose policy applies: what the user configured (-C DIR), what Claude Code says the
 * project is, or where the agent started this hook.  Never the event's cwd: the model
 * chooses it (Codex's workdir), and a workspace of its choosing (the secrets directory)
 * would make everything there "inside the workspace". */
const char *hook_workspace(const struct global_opts *g, enum hook_agent agent)
{
        const char *pd = getenv("CLAUDE_PROJECT_DIR");
        if (g->workspace)
                return g->workspace;
        if (agent == AGENT_CLAUDE && pd && *pd)
                return pd;
        return ".";
}

static void print_json(json_t *j)
{
        char *s = json_dumps(j, JSON_COMPACT);
        if (s)
                printf("%s\n", s);
        free(s);
        json_decref(j);
}

/* The agent's answer for a deny (or an ask). */
void hook_answer_policy(enum hook_agent agent, const struct policy_result *res)
{
        bool ask = res->decision == POLICY_ASK && agent == AGENT_CLAUDE;
        char reason[1200];

        snprintf(reason, sizeof(reason), "txbox policy rule %s: %s (in: %s)%s", res->rule, res->reason,
                 res->command,
                 res->decision == POLICY_ASK && !ask
                         ? " [needs approval; no approval channel here, so denied]"
                         : "");
        if (agent == AGENT_GEMINI) {
                print_json(json_pack("{s:s, s:s}", "decision", "deny", "reason", reason));
                return;
        }
        print_json(json_pack("{s:{s:s, s:s, s:s}}", "hookSpecificOutput", "hookEventName", "PreToolUse",
                             "permissionDecision", ask ? "ask" : "deny", "permissionDecisionReason", reason));
}

/* ---- Claude Code's own permission rules, so users keep them ----
 * settings.json "permissions": {"allow": [...], "ask": [...], "deny": [...]} with Bash
 * entries "Bash" (every command), "Bash(cmd)" (exactly cmd), "Bash(prefix:*)" (the older
 * prefix form) or a wildcard pattern "Bash(git *)", "Bash(git * main)": '*' stands for any
 * run of characters, and a pattern ending in " *" also matches its words alone ("git"). */

enum perm { PERM_NONE, PERM_ALLOW, PERM_ASK, PERM_DENY };

/* pat[0..plen) against all of s, '*' any run of characters.  Iterative, with one
 * backtracking point: linear in practice and never worse than plen * strlen(s), whatever
 * the (hostile) settings file holds. */
static bool glob_match(const char *pat, size_t plen, const char *s)
{
        size_t p = 0, after_star = SIZE_MAX;
        const char *retry = NULL;

        while (*s) {
                if (p < plen && pat[p] == '*') {
                        after_star = ++p;
                        retry = s;
                } else if (p < plen && pat[p] == *s) {
                        p++, s++;
                } else if (after_star != SIZE_MAX) {
                        /* the last '*' takes one more character; try again after it */
                        p = after_star;
                        s = ++retry;
                } else {
                        return false;
                }
        }
        while (p < plen && pat[p] == '*')
                p++;
        return p == plen;
}

static bool bash_rule_matches(const char *rule, const char *command)
{
        if (!strcmp(rule, "Bash") || !strcmp(rule, "Bash(*)"))
                return true;
        size_t n = strlen(rule);
        if (strncmp(rule, "Bash(", 5) != 0 || n < 7 || rule[n - 1] != ')')
                return false;
        const char *pat = rule + 5;
        size_t plen = n - 6;
        if (plen >= 2 && !strncmp(pat + plen - 2, ":*", 2))
                return !strncmp(command, pat, plen - 2);
        if (memchr(pat, '*', plen)) {
                if (plen >= 2 && !strncmp(pat + plen - 2, " *", 2) && strlen(command) == plen - 2 &&
                    !strncmp(command, pat, plen - 2))
                        return true;
                return glob_match(pat, plen, command);
        }
        return strlen(command) == plen && !strncmp(command, pat, plen);
}

/* The strongest of the rules in dir/rel that match (deny > ask > allow).  The file is read
 * beneath dir with no symlink on the way and at most 1 MiB (the workspace's is the
 * program's to shape: a link to a secret, a fifo, /dev/zero). */
static enum perm perms_in_file(const char *dir, const char *rel, const char *command, char *pattern,
                               size_t size)
{
        static const char *const lists[] = {"allow", "ask", "deny"};
        char *text = NULL, file[PATH_MAX + 64];
        size_t len = 0;
        int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        json_t *root = dfd >= 0 && read_beneath(dfd, rel, 1 << 20, &text, &len) == 0
                               ? json_loadb(text, len, 0, NULL)
                               : NULL;
        enum perm best = PERM_NONE;

        if (dfd >= 0)
                close(dfd);
        free(text);
        snprintf(file, sizeof(file), "%s/%s", dir, rel);

        for (int k = 0; root && k < 3; k++) {
                json_t *arr = json_object_get(json_object_get(root, "permissions"), lists[k]), *v;
                size_t i;
                json_array_foreach(arr, i, v) {
                        if (json_is_string(v) && bash_rule_matches(json_string_value(v), command) &&
                            k + 1 > (int)best) {
                                best = (enum perm)(k + 1);
                                snprintf(pattern, size, "%s in %.300s: %.200s", lists[k], file,
                                         json_string_value(v));
                        }
                }
        }
        json_decref(root);
        return best;
}

static enum perm claude_permission(const char *ws, const char *command, char *pattern, size_t size)
{
        const char *home = getenv("HOME");
        const char *files[3][2] = {{home ? home : "/nonexistent", ".claude/settings.json"},
                                   {ws, ".claude/settings.json"},
                                   {ws, ".claude/settings.local.json"}};
        char tmp[PATH_MAX + 128];
        enum perm best = PERM_NONE;

        for (int i = 0; i < 3; i++) {
                enum perm p = perms_in_file(files[i][0], files[i][1], command, tmp, sizeof(tmp));
                /* The workspace's own files may add refusals, never lift one of txbox's asks:
                 * a command could have written them (as a workspace policy, they only
                 * tighten). */
                if (i > 0 && p == PERM_ALLOW)
                        continue;
                if (p > best) {
                        best = p;
                        snprintf(pattern, size, "%.600s", tmp);
                }
        }
        return best;
}

/* The user's own rules refine txbox's: their deny and ask add restrictions; their allow
 * lifts an "ask" but never one of txbox's refusals. */
static void apply_claude_permissions(const char *ws, const char *command, struct policy_result *res)
{
        char pattern[PATH_MAX + 128] = "";
        enum perm p = claude_permission(ws, command, pattern, sizeof(pattern));

        if (p == PERM_DENY || (p == PERM_ASK && res->decision == POLICY_ALLOW)) {
                res->decision = p == PERM_DENY ? POLICY_DENY : POLICY_ASK;
                snprintf(res->rule, sizeof(res->rule), "claude-settings");
                snprintf(res->reason, sizeof(res->reason), "your Claude Code settings say %s (%.400s)",
                         p == PERM_DENY ? "deny" : "ask", pattern);
                snprintf(res->command, sizeof(res->command), "%.500s", command);
        } else if (p == PERM_ALLOW && res->decision == POLICY_ASK)
                res->decision = POLICY_ALLOW;
}

static int decide(const struct global_opts *g, enum hook_agent agent, const char *command, const char *cwd)
{
        char ws[PATH_MAX], here[PATH_MAX];
        const char *w = hook_workspace(g, agent);
        struct txbox_error err = {0};
        struct policy *p = NULL;
        struct policy_result res;

        if (!realpath(w, ws))
                return hook_block("workspace '%s': %s", w, strerror(errno));
        /* Where the command runs: relative paths are judged from there, so a cwd outside
         * the workspace makes them outside paths (a secrets directory: secrets).  One that
         * cannot be resolved cannot be judged from. */
        if (!cwd)
                snprintf(here, sizeof(here), "%s", ws);
        else if (cwd[0] != '/' || !realpath(cwd, here))
                return hook_block("the event's cwd '%s' is not an existing absolute directory", cwd);
        if (policy_load_for(ws, g->policy, &p, &err) < 0)
                return hook_block("%s", err.msg);
        struct policy_ctx ctx = {.workspace = ws, .home = getenv("HOME"), .cwd = here};
        int r = policy_check_shell(p, command, &ctx, &res);
        policy_free(p);
        if (r < 0)
                return hook_block("policy check failed: %s", strerror(-r));
        if (agent == AGENT_CLAUDE)
                apply_claude_permissions(ws, command, &res);
        if (res.decision != POLICY_ALLOW)
                hook_answer_policy(agent, &res);
        else if (agent == AGENT_GEMINI)
                printf("{}\n");
        return 0;
}

enum hook_phase hook_phase_of(json_t *ev)
{
        json_t *name = json_object_get(ev, "hook_event_name");
        const char *n = json_string_value(name);
        if (!name)
                return HOOK_PRE; /* the first hooks were set up for PreToolUse only */
        if (!n)
                return HOOK_OTHER;
        if (!strcmp(n, "PreToolUse") || !strcmp(n, "BeforeTool"))
                return HOOK_PRE;
        if (!strcmp(n, "PostToolUse") || !strcmp(n, "AfterTool"))
                return HOOK_POST;
        return !strcmp(n, "PostToolUseFailure") ? HOOK_FAILED : HOOK_OTHER;
}

static int agent_of(const char *name)
{
        for (size_t a = 0; a < sizeof(agents) / sizeof(agents[0]); a++)
                if (!strcmp(agents[a].name, name))
                        return (int)a;
        return -1;
}

int hook_answer(const char *agent, const char *event, size_t len, const struct global_opts *g)
{
        int a = agent_of(agent);
        json_error_t jerr;

        if (a < 0)
                return hook_block("unknown agent '%s'", agent);
        json_t *ev = json_loadb(event, len, 0, &jerr);
        if (!ev)
                return hook_block("the event on stdin is not JSON: %s", jerr.text);
        const char *tool = json_string_value(json_object_get(ev, "tool_name"));
        json_t *input = json_object_get(ev, "tool_input");
        enum hook_agent ag = agents[a].agent;
        int r = 0;
        if (!tool) {
                r = hook_block("the event has no tool_name");
        } else if (hook_phase_of(ev) != HOOK_PRE) {
                /* After the tool: nothing left to decide (an edit is recorded by cmd_hook). */
                if (ag == AGENT_GEMINI)
                        printf("{}\n");
        } else if (hook_is_edit_tool(ag, tool)) {
                r = hook_edit_judge(ag, tool, ev, g);
        } else if (strcmp(tool, agents[a].shell_tool)) {
                if (ag == AGENT_GEMINI) /* not a shell command: no opinion */
                        printf("{}\n");
        } else if (!json_is_string(json_object_get(input, "command"))) {
                r = hook_block("the %s event has no tool_input.command string", tool);
        } else {
                const char *cmd = json_string_value(json_object_get(input, "command"));
                if (strlen(cmd) != json_string_length(json_object_get(input, "command")))
                        r = hook_block("the command contains a NUL character");
                else
                        r = decide(g, ag, cmd, json_string_value(json_object_get(ev, "cwd")));
        }
        json_decref(ev);
        fflush(stdout);
        return r;
}

struct hook_job {
        const char *agent;
        const char *event;
        size_t len;
        const struct global_opts *g;
};

static int hook_child(void *arg)
{
        struct hook_job *j = arg;
        return hook_answer(j->agent, j->event, j->len, j->g);
}

/* After the judgement: an edit tool's event is acted on here, in the hook's own process
 * (what it writes is txbox's state, not a judgement): captured before, recorded after.
 * Prints the agent's answer. */
static void act(const char *agent, const char *event, size_t len, const struct global_opts *g, const char *out)
{
        int a = agent_of(agent);
        json_t *ev = a >= 0 ? json_loadb(event, len, 0, NULL) : NULL;
        const char *tool = json_string_value(json_object_get(ev, "tool_name"));
        enum hook_phase phase = hook_phase_of(ev);

        if (ev && tool && phase != HOOK_OTHER && hook_is_edit_tool(agents[a].agent, tool))
                hook_edit_act(agents[a].agent, phase, tool, ev, g, out);
        else
                fputs(out, stdout);
        json_decref(ev);
}

int cmd_hook(int argc, char **argv, const struct global_opts *g)
{
        size_t a;

        if (cli_wants_help(argc, argv)) {
                hook_usage(stdout);
                return 0;
        }
        for (a = 0; argc == 2 && a < sizeof(agents) / sizeof(agents[0]) &&
             strcmp(agents[a].name, argv[1]); a++)
                ;
        if (argc != 2 || a == sizeof(agents) / sizeof(agents[0])) {
                hook_usage(stderr);
                return EXIT_USAGE;
        }
        char why[256];
        size_t len;
        _cleanup_free_ char *event = read_stdin(&len, why, sizeof(why));
        if (!event)
                return hook_block("%s", why);
        /* The whole judgement (the event, the policy file, the settings, deciding) runs in a
         * child: whatever happens to it, this process can still say "block".  Its answer
         * counts only when it ended by itself with one of the protocol's statuses. */
        struct hook_job job = {agents[a].name, event, len, g};
        struct txbox_error err = {0};
        char *out = NULL;
        int status = -1;
        int r = judge_fork(hook_child, &job, judge_timeout_ms("TXBOX_JUDGE_TIMEOUT_MS",
                                                              JUDGE_FORK_TIMEOUT_MS),
                           1 << 20, &out, &status, &err);
        if (r < 0 || (status != 0 && status != EXIT_BLOCK)) {
                free(out);
                return r < 0 ? hook_block("the judgement failed: %s", err.msg)
                             : hook_block("the judgement failed: it exited with status %d", status);
        }
        if (status == 0)
                act(agents[a].name, event, len, g, out);
        else
                fputs(out, stdout);
        free(out);
        fflush(stdout);
        return status;
}
