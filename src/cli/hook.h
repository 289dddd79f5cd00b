/* txbox hook, shared by its two files: cmd_hook.c (the verb, the events, the shell tools'
 * judgement, Claude Code's permission rules) and hook_edit.c (the agents' edit tools:
 * judged by the policy's write and effect rules, captured before, recorded after). */
#ifndef TXBOX_HOOK_H
#define TXBOX_HOOK_H

#include <jansson.h>

#include "cli.h"
#include "policy/policy.h"

#define EXIT_BLOCK 2 /* the hook protocols' "block, reason on stderr" */

enum hook_agent { AGENT_CLAUDE, AGENT_CODEX, AGENT_GEMINI };

/* Which event: before the tool runs (PreToolUse, BeforeTool; an event without a name is
 * taken for one), after it succeeded (PostToolUse, AfterTool), after it failed (Claude
 * Code's PostToolUseFailure), or another. */
enum hook_phase { HOOK_PRE, HOOK_POST, HOOK_FAILED, HOOK_OTHER };
enum hook_phase hook_phase_of(json_t *ev);

/* Fail closed: exit 2 with the reason on stderr (escaped), which every agent reads as block. */
int hook_block(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The agent's deny (or, Claude Code, ask) answer for res, printed. */
void hook_answer_policy(enum hook_agent agent, const struct policy_result *res);
/* The workspace whose policy and log apply (-C, $CLAUDE_PROJECT_DIR, "."). */
const char *hook_workspace(const struct global_opts *g, enum hook_agent agent);

/* Is tool one of agent's edit tools (Claude Code: Edit, Write, MultiEdit, NotebookEdit;
 * Codex: apply_patch; Gemini CLI: write_file, replace)? */
bool hook_is_edit_tool(enum hook_agent agent, const char *tool);
/* The judgement of an edit before it runs (in the judging child): every path it writes or
 * deletes, resolved as the tool will (symlinks followed), under the policy's write rules
 * (as a redirection or rm to that path would be) and, inside the workspace, its effect
 * rules (.txbox/, .env, protected globs, lost work).  Prints the answer; returns 0 or 2. */
int hook_edit_judge(enum hook_agent agent, const char *tool, json_t *ev, const struct global_opts *g);
/* What txbox does about an edit once judged (in the hook's own process): before an allowed
 * one, capture what its paths hold; after it, record it as a committed transaction; after
 * a failed one, drop the capture.  answer is what the judgement printed (for an allowed
 * edit: nothing, or "{}" for Gemini CLI); prints the agent's answer in its place: the same,
 * or a systemMessage when the edit will not be, or was not, recorded. */
void hook_edit_act(enum hook_agent agent, enum hook_phase phase, const char *tool, json_t *ev,
                   const struct global_opts *g, const char *answer);

#endif
