/* Effect rules: what a transaction did, judged on its changeset before commit.  Command
 * rules cannot see everything (a build script may delete the tree); these catch the
 * outcome instead, whatever command produced it. */
#define _GNU_SOURCE
#include "policy/effects.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/error.h"
#include "base/human.h"
#include "base/macros.h"
#include "base/str.h"
#include "policy/linkout.h"
#include "policy/runlater.h"
#include "policy/loss.h"
#include "pol.h"
#include "txbox.h"

#define MAX_VIOLATIONS 1000 /* one per path is enough to act on; more only floods the record */

struct eff {
        const struct policy *p;
        const struct policy_ctx *ctx;
        struct changeset *cs;
        int upper_fd, live_fd;
        int added;
};

static void violation(struct eff *e, const char *rule, const char *path, const char *detail)
{
        if (e->added >= MAX_VIOLATIONS)
                return;
        changeset_add_violation(e->cs, rule, path, detail);
        e->added++;
}

/* ---- what is lost: loss.c (effect-lost-work, effect-mass-deletion, effect-git-integrity) ---- */

/* ---- protected paths ---- */

/* .git itself, or its objects, refs or HEAD (any repository in the tree) deleted.  Git's
 * own operations rewrite files inside these but never delete them. */
static bool git_internal(const char *path)
{
        static const char *const tails[] = {".git", ".git/objects", ".git/refs", ".git/HEAD"};
        for (size_t k = 0; k < ARRAY_SIZE(tails); k++) {
                size_t lp = strlen(path), lt = strlen(tails[k]);
                if (lp >= lt && !strcmp(path + lp - lt, tails[k]) && (lp == lt || path[lp - lt - 1] == '/'))
                        return true;
        }
        return false;
}

static bool env_file(const char *path)
{
        const char *b = base_name(path);
        if (strcmp(b, ".env") && strncmp(b, ".env.", 5))
                return false;
        static const char *const samples[] = {"*.example", "*.sample", "*.template", "*.dist"};
        for (size_t k = 0; k < ARRAY_SIZE(samples); k++)
                if (!fnmatch(samples[k], b, 0))
                        return false;
        return true;
}

/* .txbox itself or anything under it (txbox's own configuration in the workspace: a command
 * that could add a file there, or make .txbox a link, could change the policy for every
 * later command), or the policy file in use when it lies in the workspace. */
static bool policy_path(const struct eff *e, const char *path)
{
        if (path_is_within(path, ".txbox"))
                return true;
        const char *f = e->p->file, *ws = e->ctx ? e->ctx->workspace : NULL;
        if (!f || !ws || !path_is_within(f, ws) || !strcmp(f, ws))
                return false;
        return !strcmp(f + strlen(ws) + (strcmp(ws, "/") ? 1 : 0), path);
}

static bool user_protected(const struct eff *e, const char *path)
{
        for (const char *const *g = e->p->eff.protect; g && *g; g++)
                if (!fnmatch(*g, path, 0) || path_is_within(path, *g))
                        return true;
        return false;
}

static void protected_paths(struct eff *e, const struct txbox_path *tp)
{
        static const char *const verbs[] = {"adds", "rewrites", "deletes"};
        const char *verb = (unsigned)tp->change < ARRAY_SIZE(verbs) ? verbs[tp->change] : "changes";
        char detail[256];
        if (tp->change == TXBOX_DELETED && git_internal(tp->path)) {
                snprintf(detail, sizeof(detail),
                         "deletes git internals; use git commands to change the repository");
                violation(e, "effect-git-internals", tp->path, detail);
        } else if (tp->change != TXBOX_ADDED && env_file(tp->path)) {
                snprintf(detail, sizeof(detail), "%s an .env file (secrets); edit it by hand", verb);
                violation(e, "effect-protected-path", tp->path, detail);
        } else if (policy_path(e, tp->path)) {
                snprintf(detail, sizeof(detail),
                         "%s txbox's configuration (.txbox/, the policy); only the user "
                         "changes it",
                         verb);
                violation(e, "effect-protected-path", tp->path, detail);
        } else if (user_protected(e, tp->path)) {
                snprintf(detail, sizeof(detail), "%s a path the policy protects", verb);
                violation(e, "effect-protected-path", tp->path, detail);
        }
}

/* ---- what the upper layer holds ---- */

/* ---- symlinks leaving the workspace ----
 * A link is judged as the kernel will follow it once committed: in the view the commit
 * produces (the upper layer over the live workspace), through every other link on the way,
 * in either layer.  And as later commits could change that view: a ".." after a name of
 * the target climbs out of whatever the name leads to then (a directory today, a link to
 * the workspace root tomorrow), so only leading ".." are accepted, and none after an
 * absolute target's workspace prefix. */

#define LINK_FOLLOW_MAX 40 /* as the kernel's own limit */

enum link_verdict { LINK_STAYS = 0, LINK_LEAVES, LINK_CLIMBS, LINK_TOO_DEEP };

/* Components of target: "." and empty ones dropped; *rest points past an absolute target's
 * workspace prefix.  LINK_CLIMBS when a ".." follows a name, LINK_LEAVES when an absolute
 * target is not beneath the workspace. */
static enum link_verdict link_shape(const char *target, const struct policy_ctx *ctx, const char **rest)
{
        bool named = false;

        *rest = target;
        if (target[0] == '/') {
                const char *ws = ctx ? ctx->workspace : NULL;
                if (!ws || !path_is_within(target, ws))
                        return LINK_LEAVES;
                *rest = target + strlen(ws);
                named = true; /* the prefix names the workspace: no ".." may follow */
        }
        for (const char *c = *rest; *c;) {
                const char *end = strchrnul(c, '/');
                size_t l = (size_t)(end - c);
                if (l == 2 && c[0] == '.' && c[1] == '.') {
                        if (named)
                                return LINK_CLIMBS;
                } else if (l && !(l == 1 && c[0] == '.'))
                        named = true;
                c = *end ? end + 1 : end;
        }
        return LINK_STAYS;
}

static int cmp_tpath(const void *key, const void *elem)
{
        return strcmp(key, ((const struct txbox_path *)elem)->path);
}

/* The entry at rel (whose parent is a directory of the committed view): the upper layer's,
 * unless it has none; the live one unless the changeset deletes it (a whiteout, or beneath
 * a directory that replaces the live one whole).  0 when there is none; the link's target
 * in buf. */
static mode_t view_lookup(const struct eff *e, const char *rel, char *buf, size_t size)
{
        struct stat st;
        const char *base;
        int root = e->upper_fd;

        if (lstat_beneath(root, rel, &st) < 0) {
                const struct txbox_path *tp = bsearch(rel, e->cs->paths, e->cs->npaths, sizeof(*tp),
                                                      cmp_tpath);
                root = e->live_fd;
                if ((tp && tp->change == TXBOX_DELETED) || root < 0 || lstat_beneath(root, rel, &st) < 0)
                        return 0;
        } else if (S_ISCHR(st.st_mode) && st.st_rdev == 0)
                return 0; /* a whiteout */
        if (!S_ISLNK(st.st_mode))
                return st.st_mode;
        _cleanup_close_ int dir = open_parent_beneath(root, rel, &base);
        ssize_t n = dir < 0 ? -1 : readlinkat(dir, base, buf, size - 1);
        if (n < 0)
                return 0;
        buf[n] = '\0';
        return st.st_mode;
}

struct link_walk {
        const struct eff *e;
        char cur[PATH_MAX]; /* where the walk is, workspace-relative ("": the root) */
        int follows;
        char out[PATH_MAX]; /* LINK_LEAVES: the host path it leaves to, the rest of the path on */
};

/* Follow target from the directory w->cur; w->cur ends at what it leads to. */
static enum link_verdict follow(struct link_walk *w, const char *target)
{
        const char *rest;
        enum link_verdict v = link_shape(target, w->e->ctx, &rest);
        bool gone = false; /* a name on the way does not exist (yet): the rest is only names */

        if (v == LINK_LEAVES)
                snprintf(w->out, sizeof(w->out), "%s", target);
        if (v != LINK_STAYS)
                return v;
        if (rest != target)
                w->cur[0] = '\0';
        for (const char *c = rest; *c;) {
                const char *end = strchrnul(c, '/');
                size_t l = (size_t)(end - c), n = strlen(w->cur);
                const char *next = *end ? end + 1 : end;
                if (!l || (l == 1 && c[0] == '.')) {
                        c = next;
                        continue;
                }
                if (l == 2 && c[0] == '.' && c[1] == '.') {
                        if (!n) {
                                const char *ws = w->e->ctx && w->e->ctx->workspace ? w->e->ctx->workspace : "";
                                return (size_t)snprintf(w->out, sizeof(w->out), "%s/%s", ws, c) < sizeof(w->out)
                                               ? LINK_LEAVES
                                               : LINK_TOO_DEEP;
                        }
                        char *slash = strrchr(w->cur, '/');
                        *(slash ? slash : w->cur) = '\0';
                        c = next;
                        continue;
                }
                if (n + 1 + l >= sizeof(w->cur))
                        return LINK_TOO_DEEP;
                snprintf(w->cur + n, sizeof(w->cur) - n, "%s%.*s", n ? "/" : "", (int)l, c);
                c = next;
                char link[PATH_MAX];
                mode_t m = gone ? 0 : view_lookup(w->e, w->cur, link, sizeof(link));
                gone = gone || !m;
                if (!S_ISLNK(m))
                        continue;
                if (++w->follows > LINK_FOLLOW_MAX)
                        return LINK_TOO_DEEP;
                char *slash = strrchr(w->cur, '/'); /* a relative target starts beside the link */
                *(slash ? slash : w->cur) = '\0';
                if ((v = follow(w, link)) != LINK_STAYS) {
                        size_t o = strlen(w->out); /* what follows the link follows its target */
                        if (v == LINK_LEAVES && *c &&
                            (size_t)snprintf(w->out + o, sizeof(w->out) - o, "/%s", c) >= sizeof(w->out) - o)
                                return LINK_TOO_DEEP; /* longer than any path the kernel resolves */
                        return v;
                }
        }
        return LINK_STAYS;
}

/* Does a link at path (workspace-relative) with this target leave the workspace?  Where to,
 * on LINK_LEAVES, in out. */
static enum link_verdict link_escapes(const struct eff *e, const char *path, const char *target, char *out,
                                      size_t size)
{
        struct link_walk w = {.e = e};
        const char *slash = strrchr(path, '/');

        if (slash)
                snprintf(w.cur, sizeof(w.cur), "%.*s", (int)(slash - path), path);
        enum link_verdict v = follow(&w, target);
        snprintf(out, size, "%s", w.out);
        return v;
}

static void upper_entry(struct eff *e, int upper_fd, const struct txbox_path *tp)
{
        const char *base;
        _cleanup_close_ int dfd = open_parent_beneath(upper_fd, tp->path, &base);
        struct stat st;
        if (dfd < 0 || fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return; /* not in the upper layer itself (inside a directory that moved whole) */
        char detail[3 * PATH_MAX];
        if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX], out[PATH_MAX], where[PATH_MAX] = "";
                ssize_t n = readlinkat(dfd, base, target, sizeof(target) - 1);
                if (n < 0)
                        return;
                target[n] = 0;
                static const char *const why[] = {
                        [LINK_LEAVES] = "symlink points outside the workspace",
                        [LINK_CLIMBS] =
                                "symlink target climbs back out of a directory it names (NAME/..), which a "
                                "later change could point anywhere; write the target without it",
                        [LINK_TOO_DEEP] = "symlink chain too long or deep to judge",
                };
                enum link_verdict v = link_escapes(e, tp->path, target, out, sizeof(out));
                /* Leaving is judged by where it leads (linkout.c): a venv's python, a zoneinfo
                 * file may; a secret or a file the user can write may not. */
                const char *reason = v == LINK_LEAVES && e->ctx ? linkout_judge(out, e->ctx, where, sizeof(where))
                                     : v != LINK_STAYS       ? why[v]
                                                             : NULL;
                if (reason) {
                        _cleanup_free_ char *t = human_escape(target, HUMAN_LINE), *w = human_escape(where, HUMAN_LINE);
                        if (where[0] && strcmp(where, target))
                                snprintf(detail, sizeof(detail), "%s: %s (leads to %s)", reason, t, w);
                        else
                                snprintf(detail, sizeof(detail), "%s: %s", reason, t);
                        violation(e, "effect-symlink-escape", tp->path, detail);
                }
                return;
        }
        if (S_ISREG(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID))) {
                snprintf(detail, sizeof(detail), "sets the %s bit", st.st_mode & S_ISUID ? "setuid"
                         : "setgid");
                violation(e, "effect-setuid", tp->path, detail);
        }
        if (S_ISREG(st.st_mode) && st.st_size > e->p->eff.max_file_size) {
                char sz[32], lim[32];
                human_size((uint64_t)st.st_size, sz, sizeof(sz));
                human_size((uint64_t)e->p->eff.max_file_size, lim, sizeof(lim));
                snprintf(detail, sizeof(detail), "a file of %s (%lld bytes), over the limit of %s", sz,
                         (long long)st.st_size, lim);
                violation(e, "effect-file-size", tp->path, detail);
        }
}

const char *effects_allowable(size_t i)
{
        static const char *const r[] = {"effect-lost-work",     "effect-mass-deletion",  "effect-git-integrity",
                                        "effect-git-internals", "effect-protected-path", "effect-file-size"};
        return i < ARRAY_SIZE(r) ? r[i] : NULL;
}

int effects_check(const struct policy *p, int upper_fd, int live_fd, struct changeset *cs,
                  const struct policy_ctx *ctx, struct txbox_error *err)
{
        if (!p || !cs)
                return tx_err(err, EINVAL, "effects_check: no policy or changeset");
        struct eff e = {.p = p, .ctx = ctx, .cs = cs, .upper_fd = upper_fd, .live_fd = live_fd};
        e.added += loss_check(p, upper_fd, live_fd, cs, ctx, MAX_VIOLATIONS);
        for (size_t k = 0; k < cs->npaths; k++) {
                protected_paths(&e, &cs->paths[k]);
                if (upper_fd >= 0 && cs->paths[k].change != TXBOX_DELETED)
                        upper_entry(&e, upper_fd, &cs->paths[k]);
        }
        e.added += runlater_check(upper_fd, live_fd, cs, ctx, MAX_VIOLATIONS - e.added);
        return e.added;
}
