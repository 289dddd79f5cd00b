/* Matching: normalise a simple command (program basename, flags with -rf = -r -f =
 * --recursive --force, positional words, paths resolved against cwd, workspace and home)
 * and find the first rule that matches it; then the decision for a whole input.  What
 * class of place a path is (system, home, secret ...) is pathclass.c's. */
#define _GNU_SOURCE
#include "policy/pathclass.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/failpoint.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"

/* ---- normalised commands ---- */

#define MAX_FLAGS 128

struct norm {
        const char *prog;
        char *const *argv;
        size_t argc;
        const char **pos; /* arrays of argc entries */
        size_t npos;
        char flags[MAX_FLAGS][POL_MAX_FLAG];
        size_t nflags;
        bool overflow;
        /* path candidates, classified lazily */
        const char **cand;
        size_t ncand, cap;
        unsigned *cls;
        char **abs;
        bool classified;
};

struct alias {
        const char *prog, *from, *to;
};

static const struct alias aliases[] = {
        {"rm", "recursive", "r"},     {"rm", "R", "r"},          {"rm", "force", "f"},
        {"rm", "no-preserve-root", "no-preserve-root"},
        {"chmod", "recursive", "R"},  {"chown", "recursive", "R"}, {"chgrp", "recursive", "R"},
        {"setfacl", "recursive", "R"}, {"chattr", "recursive", "R"}, {"cp", "recursive", "r"},
        {"cp", "R", "r"},             {"cp", "force", "f"},       {"git", "force", "f"},
        {"git", "delete", "d"},       {"git", "dry-run", "n"},    {"git", "hard", "hard"},
        {"shred", "remove", "u"},     {"sudo", "shell", "s"},     {"sudo", "login", "i"},
        {"kill", "signal", "s"},      {"crontab", "list", "l"},   {"rsync", "delete", "delete"},
        {"nc", "exec", "e"},          {"ncat", "exec", "e"},      {"ncat", "sh-exec", "c"},
        {"netcat", "exec", "e"},      {"xargs", "null", "0"},
};

struct prog_opts {
        const char *prog;
        const char *short_with_arg;
        const char *const *long_with_arg;
        bool stop; /* options end at the first operand (the wrapped command's own follow) */
};

/* Options whose argument must not be taken for a positional word (git -C dir reset). */
static const struct prog_opts prog_opts[] = {
        {"git", "Cc", (const char *const[]){"git-dir", "work-tree", "namespace", "exec-path", "config-env",
                                            NULL}},
        {"kubectl", "nlc", (const char *const[]){"namespace", "context", "kubeconfig", "cluster", "user",
                                                 "server", "selector", NULL}},
        {"helm", "n", (const char *const[]){"namespace", "kube-context", NULL}},
        {"aws", "", (const char *const[]){"profile", "region", "output", "endpoint-url", "query", NULL}},
        {"gcloud", "", (const char *const[]){"project", "account", "configuration", NULL}},
        {"az", "g", (const char *const[]){"resource-group", "subscription", "name", NULL}},
        {"docker", "Hc", (const char *const[]){"host", "context", "config", NULL}},
        {"kill", "sn", NULL},
        {"crontab", "u", NULL},
        {"systemctl", "HMp", (const char *const[]){"host", "machine", "property", NULL}},
        {"npm", "w", (const char *const[]){"workspace", "prefix", "registry", "otp", "tag", NULL}},
        {"terraform", "", NULL},
        {"sudo", "ugpCDhrtUT", (const char *const[]){"user", "group", "prompt", "chdir", "host", "role",
                                                     "type", "other-user", NULL}, true},
        {"doas", "uC", NULL, true},
        {"sed", "efl", (const char *const[]){"expression", "file", "line-length", NULL}},
        {"gsed", "efl", (const char *const[]){"expression", "file", "line-length", NULL}},
        /* A shell's -c script is code, judged as the commands it holds (unwrap.c), not a path:
         * "sh -c 'echo DEBUG=1 >> .env'" ended in ".env" and was refused as reading secrets. */
        {"sh", "coO", NULL},
        {"bash", "coO", (const char *const[]){"rcfile", "init-file", NULL}},
        {"dash", "co", NULL},
        {"zsh", "co", NULL},
        {"ksh", "co", NULL},
        {"mksh", "co", NULL},
        {"ash", "co", NULL},
};

/* Longer flags are cut to POL_MAX_FLAG - 1 bytes: none of a rule's flags is that long (the
 * loader refuses them), so a cut flag can only match more, never less. */
static void add_flag(struct norm *nm, const char *f, size_t l)
{
        char buf[POL_MAX_FLAG];
        if (l >= sizeof(buf))
                l = sizeof(buf) - 1;
        memcpy(buf, f, l);
        buf[l] = 0;
        /* git accepts any unambiguous prefix of a long option: --ha is --hard */
        if (!strcmp(nm->prog, "git") && l >= 2) {
                static const struct {
                        const char *name;
                        size_t min;
                } abbrev[] = {
                        {"hard", 2},     {"delete", 2},          {"mirror", 2}, {"merge", 2},
                        {"prune", 3},    {"discard-changes", 3}, {"force", 5},  {"pathspec-from-file", 5},
                        {"worktree", 2}, {"staged", 3},          {"source", 3}};
                for (size_t k = 0; k < ARRAY_SIZE(abbrev); k++)
                        if (l >= abbrev[k].min && l < strlen(abbrev[k].name) &&
                            !strncmp(abbrev[k].name, buf, l)) {
                                snprintf(buf, sizeof(buf), "%s", abbrev[k].name);
                                break;
                        }
        }
        for (size_t k = 0; k < ARRAY_SIZE(aliases); k++)
                if (!strcmp(aliases[k].from, buf) && !strcmp(aliases[k].prog, nm->prog)) {
                        snprintf(buf, sizeof(buf), "%s", aliases[k].to);
                        break;
                }
        for (size_t k = 0; k < nm->nflags; k++)
                if (!strcmp(nm->flags[k], buf))
                        return;
        if (nm->nflags == MAX_FLAGS) {
                nm->overflow = true; /* a flag we dropped might be the one a rule looks for */
                return;
        }
        memcpy(nm->flags[nm->nflags++], buf, sizeof(buf));
}

static void add_cand(struct norm *nm, const char *a)
{
        if (a[0] == '@')
                a++;
        if (*a && nm->ncand < nm->cap)
                nm->cand[nm->ncand++] = a;
}

/* key=value (dd of=X, curl -F f=@X): the value may be a path. */
static void cand_value(struct norm *nm, const char *a)
{
        const char *eq = strchr(a, '=');
        if (!eq)
                return add_cand(nm, a);
        for (const char *p = a; p < eq; p++)
                if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
                        return add_cand(nm, a);
        add_cand(nm, eq + 1);
}

static void norm_build(struct norm *nm, const struct scmd *c)
{
        nm->argv = c->argv.v;
        nm->argc = c->argv.n;
        nm->prog = base_name(c->argv.v[0]);
        nm->npos = nm->nflags = nm->ncand = 0;
        nm->cap = nm->argc;
        nm->pos = xcalloc(nm->argc + 1, sizeof(*nm->pos));
        nm->cand = xcalloc(nm->argc + 1, sizeof(*nm->cand));
        nm->overflow = nm->classified = false;
        const struct prog_opts *po = NULL;
        for (size_t k = 0; k < ARRAY_SIZE(prog_opts) && !po; k++)
                if (!strcmp(prog_opts[k].prog, nm->prog))
                        po = &prog_opts[k];
        bool opts = true;
        /* sed's first operand is its script unless -e or -f gave one: a regex (/^#/d) is no
         * path */
        bool sed_script = !strcmp(nm->prog, "sed") || !strcmp(nm->prog, "gsed");
        for (size_t k = 1; sed_script && k < nm->argc && strcmp(nm->argv[k], "--"); k++) {
                const char *a = nm->argv[k];
                if (!strncmp(a, "--expression", 12) || !strncmp(a, "--file", 6) ||
                    (a[0] == '-' && a[1] != '-' && strpbrk(a + 1, "ef")))
                        sed_script = false;
        }
        for (size_t k = 1; k < nm->argc; k++) {
                const char *a = nm->argv[k];
                if (opts && !strcmp(a, "--")) {
                        opts = false;
                        continue;
                }
                if (!opts || a[0] != '-' || !a[1]) {
                        if (po && po->stop)
                                opts = false;
                        nm->pos[nm->npos++] = a;
                        if (sed_script)
                                sed_script = false;
                        else
                                cand_value(nm, a);
                        continue;
                }
                if (a[1] == '-') {
                        const char *eq = strchr(a, '=');
                        size_t l = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
                        add_flag(nm, a + 2, l);
                        if (eq)
                                add_cand(nm, eq + 1);
                        else if (po && po->long_with_arg && k + 1 < nm->argc) {
                                for (const char *const *o = po->long_with_arg; *o; o++)
                                        if (strlen(*o) == l && !strncmp(*o, a + 2, l)) {
                                                k++;
                                                break;
                                        }
                        }
                        continue;
                }
                for (const char *p = a + 1; *p; p++) {
                        add_flag(nm, p, 1);
                        if (po && strchr(po->short_with_arg, *p)) {
                                if (!p[1] && k + 1 < nm->argc)
                                        k++;
                                break;
                        }
                }
        }
}

static void norm_classify(struct norm *nm, const struct policy_ctx *ctx)
{
        if (nm->classified)
                return;
        nm->classified = true;
        nm->cls = xcalloc(nm->ncand + 1, sizeof(*nm->cls));
        nm->abs = xcalloc(nm->ncand + 1, sizeof(*nm->abs));
        for (size_t k = 0; k < nm->ncand; k++) {
                bool all;
                nm->abs[k] = pathclass_resolve(nm->cand[k], ctx, &all);
                nm->cls[k] = nm->abs[k] ? pathclass_abs(nm->abs[k], all, ctx) : pathclass_tail(nm->cand[k]);
                if (ctx->at_exec) /* what it will be is judged where it is used */
                        nm->cls[k] &= ~(unsigned)PC_UNKNOWN;
        }
}

static void norm_free(struct norm *nm)
{
        for (size_t k = 0; nm->classified && k < nm->ncand; k++)
                free(nm->abs[k]);
        free(nm->abs);
        free(nm->cls);
        free(nm->pos);
        free(nm->cand);
}

/* ---- rules ---- */

/* Can the glob [pat, end) match s at all?  Its longest literal run must occur in s; this
 * spares most fnmatch calls (shell-escape's "*<literal>" patterns meet every argument). */
static bool glob_literal_in(const char *pat, const char *end, const char *s)
{
        const char *best = NULL, *p = pat;
        size_t bl = 0;
        while (p < end) {
                if (glob_special(*p)) {
                        if (*p == '[') /* skip the bracket expression */
                                while (p < end && *p != ']')
                                        p++;
                        p++;
                        continue;
                }
                const char *q = p;
                while (q < end && !glob_special(*q))
                        q++;
                if ((size_t)(q - p) > bl)
                        best = p, bl = (size_t)(q - p);
                p = q;
        }
        return bl < 2 || memmem(s, strlen(s), best, bl) != NULL;
}

/* A glob, or alternatives "a|b|c" (rules stay short).  Most patterns are plain words
 * compared with most words, so the plain case is one pass without copying: this runs
 * for every rule on every command. */
static bool glob_eq(const char *pat, const char *s)
{
        while (*pat) {
                const char *p = pat, *q = s;
                while (*p && *p != '|' && !glob_special(*p) && *p == *q)
                        p++, q++;
                if ((!*p || *p == '|') && !*q)
                        return true;
                const char *end = p;
                bool special = false;
                while (*end && *end != '|')
                        special |= glob_special(*end++);
                if (special && glob_literal_in(pat, end, s)) {
                        /* Any length: a pattern too long for a buffer must not silently
                         * stop matching (a user's deny rule would never apply). */
                        char buf[256], *heap = NULL, *g = buf;
                        size_t n = (size_t)(end - pat);
                        if (n >= sizeof(buf))
                                g = heap = xmalloc(n + 1);
                        memcpy(g, pat, n);
                        g[n] = 0;
                        bool hit = !fnmatch(g, s, 0);
                        free(heap);
                        if (hit)
                                return true;
                }
                pat = *end ? end + 1 : end;
        }
        return false;
}

static bool any_glob(const char *const *pats, const char *s)
{
        for (; *pats; pats++)
                if (glob_eq(*pats, s))
                        return true;
        return false;
}

static bool has_flag(const struct norm *nm, const char *f)
{
        for (size_t k = 0; k < nm->nflags; k++)
                if (!strcmp(nm->flags[k], f))
                        return true;
        return false;
}

static bool flags_match(const struct rule *r, const struct norm *nm)
{
        if (r->flags)
                for (const char *const *f = r->flags; *f; f++)
                        if (!has_flag(nm, *f))
                                return false;
        if (r->any_flags) {
                bool any = false;
                for (const char *const *f = r->any_flags; *f && !any; f++)
                        any = has_flag(nm, *f);
                if (!any)
                        return false;
        }
        if (r->not_flags)
                for (const char *const *f = r->not_flags; *f; f++)
                        if (has_flag(nm, *f))
                                return false;
        return true;
}

static size_t sub_len(const struct rule *r)
{
        size_t n = 0;
        if (r->sub)
                while (r->sub[n])
                        n++;
        return n;
}

static bool args_match(const struct rule *r, const struct norm *nm)
{
        size_t ns = sub_len(r);
        if (ns > nm->npos)
                return false;
        for (size_t k = 0; k < ns; k++)
                if (!glob_eq(r->sub[k], nm->pos[k]))
                        return false;
        if (r->args) {
                bool any = false;
                for (size_t k = 1; k < nm->argc && !any; k++)
                        any = any_glob(r->args, nm->argv[k]);
                if (!any)
                        return false;
        }
        if (r->last && (nm->argc < 2 || !any_glob(r->last, nm->argv[nm->argc - 1])))
                return false;
        return true;
}

/* Path globs: absolute, "~/..." (under home) or relative to the workspace. */
static bool path_glob(const char *pat, const char *abs, const struct policy_ctx *ctx)
{
        if (pat[0] == '~' && pat[1] == '/')
                return pathclass_strictly_under(abs, ctx->home) &&
                       glob_eq(pat + 2, abs + strlen(ctx->home) + 1);
        if (pat[0] != '/' && pat[0] != '*')
                return pathclass_strictly_under(abs, ctx->workspace) &&
                       glob_eq(pat, abs + strlen(ctx->workspace) + (strcmp(ctx->workspace, "/") ? 1 : 0));
        return glob_eq(pat, abs);
}

static bool any_path_glob(const char *const *pats, const char *abs, const struct policy_ctx *ctx)
{
        for (; *pats; pats++)
                if (path_glob(*pats, abs, ctx))
                        return true;
        return false;
}

static bool paths_match(const struct rule *r, struct norm *nm, const struct policy_ctx *ctx)
{
        if (!r->paths && !r->path_globs)
                return true;
        norm_classify(nm, ctx);
        size_t ns = sub_len(r), from = 0;
        /* positional candidates come in order; skip the subcommand words */
        for (size_t k = 0; k < nm->ncand && from < ns; k++)
                if (nm->cand[k] == nm->pos[from])
                        from = k + 1;
        size_t start = r->target == TGT_LAST && nm->ncand ? nm->ncand - 1 : from;
        for (size_t k = start; k < nm->ncand; k++) {
                if (nm->cls[k] & r->paths)
                        return true;
                if (r->path_globs && nm->abs[k] && any_path_glob(r->path_globs, nm->abs[k], ctx))
                        return true;
        }
        return false;
}

static bool redirs_match(const struct strvec *targets, unsigned bits, const char *const *globs,
                         const struct policy_ctx *ctx)
{
        for (size_t k = 0; k < targets->n; k++) {
                bool all;
                char *p = pathclass_resolve(targets->v[k], ctx, &all);
                unsigned cls = p ? pathclass_abs(p, all, ctx) : pathclass_tail(targets->v[k]);
                if (ctx->at_exec)
                        cls &= ~(unsigned)PC_UNKNOWN;
                bool hit = (cls & bits) || (p && globs && any_path_glob(globs, p, ctx));
                free(p);
                if (hit)
                        return true;
        }
        return false;
}

static bool writes_match(const struct rule *r, const struct scmd *c, const struct policy_ctx *ctx)
{
        if ((r->reads || r->read_globs) && !redirs_match(&c->reads, r->reads, r->read_globs, ctx))
                return false;
        if ((r->clobbers || r->clobber_globs) && !redirs_match(&c->clobbers, r->clobbers, r->clobber_globs, ctx))
                return false;
        if (!r->writes && !r->write_globs)
                return true;
        return redirs_match(&c->writes, r->writes, r->write_globs, ctx);
}

static bool rule_matches(const struct rule *r, struct norm *nm, const struct scmd *c,
                         const struct policy_ctx *ctx)
{
        if (r->programs && !any_glob(r->programs, nm->prog))
                return false;
        if (r->not_programs && any_glob(r->not_programs, nm->prog))
                return false;
        if (!r->programs && nm->prog[0] == '@')
                return false; /* findings only match rules naming them */
        return flags_match(r, nm) && args_match(r, nm) && paths_match(r, nm, ctx) &&
               writes_match(r, c, ctx);
}

/* A rule that fails closed whatever the policy says (parse-error, limit-exceeded): the
 * policy's copy of the built-in one, or the built-in one itself (defaults: false). */
static const struct rule *fail_closed(const struct policy *p, const char *id)
{
        for (size_t k = 0; k < p->nrules; k++)
                if (p->rules[k].builtin && !strcmp(p->rules[k].id, id))
                        return &p->rules[k];
        return policy_builtin_rule(id);
}

const struct rule *match_cmd(const struct policy *p, const struct scmd *c,
                             const struct policy_ctx *ctx)
{
        if (!c->argv.n)
                return NULL;
        const char *a0 = c->argv.v[0];
        /* Fail closed whatever the rules say: the input could not be read. */
        if (!strcmp(a0, "@parse-error") || !strcmp(a0, "@limit-exceeded"))
                return fail_closed(p, a0 + 1);
        /* --help or --version: the program prints and exits (findings still count) */
        if (c->help && a0[0] != '@')
                return NULL;
        /* At an exec the argv is concrete: a command word, a string or code that could not
         * be told apart from it is run by a shell or an interpreter, whose own execs are
         * judged in turn.  Unknown means nothing there (docs/DESIGN.md). */
        if (ctx->at_exec && !strcmp(a0, "@unknown-command"))
                return NULL;
        /* relative paths start where this command runs (after cd) */
        struct policy_ctx here = *ctx;
        if (c->cwd)
                here.cwd = c->cwd;
        ctx = &here;
        /* On the stack and not zeroed (norm_build sets what is read): 8 KiB of flags per
         * command would otherwise be allocated and cleared for every command judged. */
        struct norm nm_, *nm = &nm_;
        nm->cls = NULL;
        nm->abs = NULL;
        norm_build(nm, c);
        const struct rule *hit = nm->overflow ? fail_closed(p, "limit-exceeded") : NULL;
        unsigned char f = (unsigned char)nm->prog[0];
        for (size_t k = 0; k < p->nrules && !hit; k++)
                if ((!p->first || (p->first[k][f >> 6] >> (f & 63) & 1)) &&
                    !(ctx->tool_internal && p->rules[k].workspace_scope) &&
                    rule_matches(&p->rules[k], nm, c, ctx))
                        hit = &p->rules[k];
        norm_free(nm);
        return hit;
}

/* ---- decisions ---- */

static int severity(enum policy_decision d) { return d == POLICY_DENY ? 2 : d == POLICY_ASK ? 1 : 0; }

static void fill(struct policy_result *res, const struct rule *r, const struct scmd *c)
{
        res->decision = r->decision;
        snprintf(res->rule, sizeof(res->rule), "%s", r->id);
        snprintf(res->reason, sizeof(res->reason), "%s", r->reason ? r->reason : "");
        snprintf(res->command, sizeof(res->command), "%s", c->text ? c->text : "");
        for (char *s = res->command; *s; s++)
                if (*s == UNK)
                        *s = '?';
        res->offset = c->offset;
        res->workspace_scope = r->workspace_scope;
}

/* The finding that ends a scan (@limit-exceeded, @parse-error), or NULL. */
static const struct scmd *fatal_finding(const struct scan *sc)
{
        for (size_t k = sc->n; sc->failed && k-- > 0;)
                if (sc->cmds[k].argv.n && (!strcmp(sc->cmds[k].argv.v[0], "@limit-exceeded") ||
                                           !strcmp(sc->cmds[k].argv.v[0], "@parse-error")))
                        return &sc->cmds[k];
        return NULL;
}

static void decide(const struct policy *p, struct scan *sc, const struct policy_ctx *ctx,
                   struct policy_result *res, const struct rule **by)
{
        int worst = -1;
        *by = NULL;
        /* Matching is bounded by the commands and the bytes a scan may hold; a scan that
         * already failed is a refusal anyway, so it gets a fifth of a scan's time to name
         * a more useful rule than its limit, not more. */
        int64_t stop = mono_us() + POL_MAX_US / 5;
        for (size_t k = 0; k < sc->n; k++) {
                if (sc->failed && mono_us() > stop) {
                        const struct scmd *f = fatal_finding(sc);
                        *by = match_cmd(p, f, ctx);
                        fill(res, *by, f);
                        return;
                }
                const struct rule *r = match_cmd(p, &sc->cmds[k], ctx);
                if (r && severity(r->decision) > worst) {
                        worst = severity(r->decision);
                        fill(res, r, &sc->cmds[k]);
                        *by = r;
                        if (worst == 2)
                                break;
                }
        }
        if (worst <= 0) { /* allow: nothing to report */
                res->decision = POLICY_ALLOW;
                res->rule[0] = res->reason[0] = res->command[0] = 0;
                res->offset = worst < 0 ? -1 : res->offset;
                res->workspace_scope = false;
        }
}

static void res_init(struct policy_result *res)
{
        memset(res, 0, sizeof(*res));
        res->decision = POLICY_ALLOW;
        res->offset = -1;
}

/* The policy's decision, and an untrusted workspace policy's beside it: the stricter wins,
 * so that such a file can only add refusals (load.c). */
static void decide_all(const struct policy *p, struct scan *sc, const struct policy_ctx *ctx,
                       struct policy_result *res, const struct rule **by)
{
        struct policy_result r2;
        const struct rule *by2;

        decide(p, sc, ctx, res, by);
        if (!p->tighten)
                return;
        res_init(&r2);
        decide(p->tighten, sc, ctx, &r2, &by2);
        if (severity(r2.decision) > severity(res->decision)) {
                *res = r2;
                *by = by2;
        } else if (!*by && r2.decision == res->decision) {
                *by = by2; /* an allow that only the workspace's own rules matched */
        }
}

/* Tests make the N-th decision of a process crash, abort, hang or fail here
 * (TXBOX_FAILPOINT=judge:N:segv|abort|hang|enospc): every caller must then refuse. */
static int judge_failpoint(struct policy_result *res)
{
        int r = failpoint("judge");
        if (r < 0) /* what a caller sees of a decision that failed: a refusal */
                policy_result_failed(res, NULL, "test failpoint");
        return r;
}

int policy_check_shell(const struct policy *p, const char *script, const struct policy_ctx *ctx,
                       struct policy_result *res)
{
        const struct rule *by;
        return policy_check_shell_by(p, script, ctx, res, &by);
}

int policy_check_shell_by(const struct policy *p, const char *script, const struct policy_ctx *ctx,
                          struct policy_result *res, const struct rule **by)
{
        *by = NULL;
        if (!p || !script || !ctx || !res)
                return -EINVAL;
        res_init(res);
        int fr = judge_failpoint(res);
        if (fr < 0)
                return fr;
        struct scan sc;
        scan_init(&sc, ctx);
        size_t n = strnlen(script, POL_MAX_INPUT + 1);
        walk_script(&sc, script, n);
        decide_all(p, &sc, ctx, res, by);
        scan_free(&sc);
        return 0;
}

int policy_check_argv(const struct policy *p, char *const argv[], const struct policy_ctx *ctx,
                      struct policy_result *res)
{
        if (!p || !argv || !argv[0] || !ctx || !res)
                return -EINVAL;
        res_init(res);
        int fr = judge_failpoint(res);
        if (fr < 0)
                return fr;
        struct scan sc;
        scan_init(&sc, ctx);
        struct strvec v = {0};
        size_t n = 0;
        for (; argv[n] && n < POL_MAX_ARGV; n++) {
                char *a = xstrdup(argv[n]);
                /* At an exec every byte is literal: a \001 in an argument is a character of a
                 * name, not the engine's mark of an unknown value, which counts for nothing
                 * there (match_cmd) and must not make a known path unknown. */
                for (char *u = ctx->at_exec ? strchr(a, UNK) : NULL; u; u = strchr(u, UNK))
                        *u = '_';
                strvec_push(&v, a);
        }
        char *text = render_argv(v.v, 4096);
        struct scmd *c = scan_add(&sc, &v, text, -1);
        free(text);
        if (argv[n])
                scan_finding(&sc, "@limit-exceeded", "too many arguments", "", -1);
        if (c) {
                c->pipe_id = -1;
                walk_argv(&sc);
        }
        const struct rule *by;
        decide_all(p, &sc, ctx, res, &by);
        scan_free(&sc);
        return 0;
}

void policy_result_failed(struct policy_result *res, const char *command, const char *why)
{
        memset(res, 0, sizeof(*res));
        res->decision = POLICY_DENY;
        res->offset = -1;
        snprintf(res->rule, sizeof(res->rule), "%s", POLICY_RULE_FAILED);
        snprintf(res->reason, sizeof(res->reason),
                 "txbox could not judge this command (%s), and a command it cannot judge is refused; "
                 "try a simpler form of it, and tell the user", why);
        snprintf(res->command, sizeof(res->command), "%s", command ? command : "");
}

const char *policy_decision_name(enum policy_decision d)
{
        static const char *const names[] = {"allow", "deny", "ask"};
        return (unsigned)d < ARRAY_SIZE(names) ? names[d] : "deny";
}
