/* Policy: decide, before a command runs and at every exec while it runs, whether it may.
 *
 * A policy is a list of rules (built in, or loaded from a file) matched against the simple
 * commands that a shell string or an argv would run, after parsing the shell grammar and
 * unwrapping wrappers (sh -c, eval, xargs, find -exec, env, sudo, timeout, interpreters'
 * one-liners ...).  Anything whose command word cannot be known is treated as unknown, not
 * as safe.  Parse errors and limits exceeded fail closed (deny). */
#ifndef TXBOX_POLICY_H
#define TXBOX_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct txbox_error;

enum policy_decision {
        POLICY_ALLOW = 0,
        POLICY_DENY,
        POLICY_ASK, /* headless: treated as deny unless an approval program is configured */
};

struct policy_result {
        enum policy_decision decision;
        char rule[64];     /* rule id; "" when no rule matched (allow) */
        char reason[512];  /* what to do instead, for the agent; "" on allow */
        char command[512]; /* the simple command that triggered the decision (its text) */
        int offset;        /* byte offset of that command in the input string; -1 for argv */
        bool workspace_scope; /* the deciding rule guards only the workspace (scope: workspace) */
};

struct policy_ctx {
        const char *workspace; /* absolute; paths are resolved against it, home and / */
        const char *home;      /* may be NULL */
        const char *cwd;       /* absolute; where relative paths start */
        /* For the effect rules (loss.c, gitwork.c): did a committed transaction of txbox's
         * own create path (workspace-relative), running a program, without deleting
         * anything (a file it moved there is not its own), with nothing changed since
         * (ctime_ms, the file's ctime, no later than that commit)?  any: did any committed
         * transaction (a command, or an agent's edit) last create or change it, with
         * nothing changed since?  NULL: no log to ask. */
        bool (*made_by_txbox)(void *arg, const char *path, int64_t ctime_ms, bool any);
        void *made_arg;
        /* At an exec while the command runs: the argv is concrete, and what a shell or an
         * interpreter in it would run is judged at its own exec; so nothing counts for being
         * unknown (no @unknown-command, no path of class unknown).  docs/DESIGN.md, "What
         * is judged at exec". */
        bool at_exec;
        /* A well-known tool's own internal step (git's own subcommand, a make recipe), as
         * the supervisor established it from the kernel: rules of scope workspace are not
         * applied (the effect rules and undo judge what it does). */
        bool tool_internal;
};

struct policy;

/* Load a policy: file (YAML) when non-NULL, else the built-in default.  Errors name the
 * file, line and what is wrong. */
int policy_load(const char *file, struct policy **out, struct txbox_error *err);
/* The policy for a workspace: explicit file if given (the user's choice), else
 * WORKSPACE/.txbox/policy when it exists, else the built-in default.  The workspace's file
 * is read beneath the workspace with no symlink on the way; unless the user trusted that
 * exact file (policy_trusted), it may only tighten the built-in policy: its rules are
 * judged beside the built-in ones (the stricter decision wins, its allow rules lift
 * nothing), defaults: false is ignored, and its effect limits count only where lower. */
int policy_load_for(const char *workspace, const char *explicit_file, struct policy **out,
                    struct txbox_error *err);
void policy_free(struct policy *p);
/* What the user should know about how the policy applies (an untrusted workspace policy
 * that would loosen it), or NULL. */
const char *policy_note(const struct policy *p);
/* The file a policy was read from (the workspace's, for an untrusted one), or NULL for the
 * built-in policy. */
const char *policy_file(const struct policy *p);
/* A policy file's text as written (name for messages), as policy_load does with a file. */
int policy_load_text(const char *name, const char *text, size_t len, struct policy **out,
                     struct txbox_error *err);
/* One line on what a policy holds: its rules, those that allow, whether it drops the
 * built-in ones, malloc'd (for txbox trust). */
char *policy_summary(const struct policy *p);

/* What the policy says about the sandbox itself (sandbox: in the file; docs/POLICY.md). */
enum policy_caches {
        POLICY_CACHES_DEFAULT = 0, /* the built-in list of cache paths */
        POLICY_CACHES_OFF,         /* none: $HOME read-only as a whole */
        POLICY_CACHES_LIST,        /* exactly cache_paths */
};
struct policy_sandbox {
        /* More paths to hide: "~/x", absolute, or workspace-relative, as written (lexically
         * checked: no "..", not "/"); NULL-terminated, or NULL. */
        const char *const *hide;
        enum policy_caches caches;
        const char *const *cache_paths; /* POLICY_CACHES_LIST: "~/x" each, NULL-terminated */
};
/* The sandbox settings of p: its file's; with an untrusted workspace file, that file's hide
 * list and caches: false (they only take away), never its list of caches (policy_note
 * then says so). */
void policy_sandbox_get(const struct policy *p, struct policy_sandbox *out);

/* ---- the workspace's policy file and the user's trust in it (policy/trust.c) ---- */
/* Read WORKSPACE/.txbox/policy beneath the workspace, no symlink followed: 0, -ENOENT
 * when there is none, else -errno with err naming the file and why. */
int policy_ws_read(const char *workspace, char **text, size_t *len, struct txbox_error *err);
/* The SHA-256 of a policy file's content, as 64 hex digits. */
void policy_hash(const char *text, size_t len, char out[65]);
/* The trust store's path ($XDG_CONFIG_HOME/txbox/trusted-policies, default
 * ~/.config/txbox/trusted-policies), malloc'd; NULL without a home. */
char *policy_trust_path(void);
/* 1 when the user trusted the policy file with this hash in this workspace, else 0 (also
 * when the trust store lies inside the workspace: a command could have written it). */
int policy_trusted(const char *workspace, const char *hash);
/* Record the trust (hash), or withdraw it (hash NULL), for this workspace. */
int policy_trust_set(const char *workspace, const char *hash, struct txbox_error *err);

/* Decide on a shell string (as sh -c would run it). */
int policy_check_shell(const struct policy *p, const char *script, const struct policy_ctx *ctx,
                       struct policy_result *res);
/* Decide on an argv (as execve would run it). */
int policy_check_argv(const struct policy *p, char *const argv[], const struct policy_ctx *ctx,
                      struct policy_result *res);

const char *policy_decision_name(enum policy_decision d);

/* ---- a policy's rules checked against their examples (policy/examples.c) ----
 * A rule's match: examples must each be decided by that rule, its not_match: examples must
 * not be, when the whole policy judges them (a shell string each, as an agent sends it),
 * in this workspace and home, wherever the check runs. */
#define POLICY_EXAMPLE_WORKSPACE "/work/project"
#define POLICY_EXAMPLE_HOME "/home/agent"
enum policy_examples {
        POLICY_EXAMPLES_OWN,     /* the rules of the policy file (and of an untrusted workspace file) */
        POLICY_EXAMPLES_BUILTIN, /* the built-in rules (src/lib/policy/default.yml) */
};
struct policy_example_failure {
        const char *rule;    /* the rule whose example failed: its id, */
        const char *file;    /* its file ("built-in" for the built-in rules) */
        int line;            /* and line */
        const char *example;
        bool must_match;     /* a match: example (else a not_match: one) */
        enum policy_decision decision; /* what the policy decided */
        char decided_by[64]; /* the rule that did ("": none, an allow no rule matched) */
};
typedef void policy_example_fn(void *arg, const struct policy_example_failure *f);
/* Run the examples of p's rules of the kind which; report(arg, f) for each that fails
 * (report may be NULL).  Returns how many failed; *n_examples: how many ran. */
size_t policy_test_examples(const struct policy *p, enum policy_examples which, policy_example_fn *report,
                            void *arg, size_t *n_examples);

/* The rule id of a decision that could not be made (the engine crashed, hung or failed):
 * a refusal, like every other failure to judge. */
#define POLICY_RULE_FAILED "judgement-failed"
/* Fill res with that refusal: command (may be NULL) is what was being judged, why what
 * went wrong ("the policy engine crashed (signal 11, Segmentation fault)"). */
void policy_result_failed(struct policy_result *res, const char *command, const char *why);

/* An "ask" decision put to an approval program (--approve=PROGRAM): it gets the decision as
 * one JSON object on stdin ({"decision": "ask", "rule", "reason", "command", "workspace"})
 * and answers "allow" or "deny" as the first word of its stdout within 60 s.  Returns 1 for
 * allow, 0 for deny (also for no answer, a timeout or a failing program: fail closed). */
int policy_ask_approver(const char *program, const struct policy_result *res, const char *workspace);

#endif
