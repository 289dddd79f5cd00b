/* Effect rules: what a transaction did, judged on its changeset before commit.  Command
 * rules cannot see everything (a build script may delete the tree); these catch the
 * outcome instead, whatever command produced it. */
#define _GNU_SOURCE
#include "effects.h"

#include <dirent.h>
#include <fnmatch.h>

#include "policy/pol.h"

#define MAX_VIOLATIONS 1000 /* one per path is enough to act on; more only floods the record */

struct eff {
        const struct policy *p;
        const struct policy_ctx *ctx;
        struct changeset *cs;
        int added;
};

static void violation(struct eff *e, const char *rule, const char *path, const char *detail)
{
        if (e->added >= MAX_VIOLATIONS)
                return;
        changeset_add_violation(e->cs, rule, path, detail);
        e->added++;
}

/* ---- mass deletion ---- */

/* Regular files (non-directories) beneath dirfd, counting stops at limit. */
static long count_files(int dfd, long limit, int depth)
{
        if (depth > CS_MAX_DEPTH)
                return 0;
        int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return 0;
        }
        long n = 0;
        for (struct dirent *de; n < limit && (de = readdir(d));) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                if (de->d_type != DT_DIR) {
                        n++;
                        continue;
                }
                _cleanup_close_ int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0)
                        n += count_files(sub, limit - n, depth + 1);
        }
        closedir(d);
        return n;
}

static void mass_deletion(struct eff *e, int live_fd)
{
        const struct effects_cfg *c = &e->p->eff;
        long deleted = 0;
        for (size_t k = 0; k < e->cs->npaths; k++)
                deleted += e->cs->paths[k].change == TXBOX_DELETED;
        if (deleted < c->mass_delete_min)
                return;
        char detail[256];
        if (deleted >= c->mass_delete_count) {
                snprintf(detail, sizeof(detail), "%ld paths deleted (limit %ld)", deleted, c->mass_delete_count);
                violation(e, "effect-mass-deletion", ".", detail);
                return;
        }
        /* Only the share matters now: stop counting once it cannot be reached. */
        long enough = (long)((double)deleted / c->mass_delete_share) + 1;
        long live = count_files(live_fd, enough, 0);
        if ((double)deleted >= c->mass_delete_share * (double)live) {
                snprintf(detail, sizeof(detail), "%ld of the workspace's %ld files deleted (limit %.0f%%)",
                         deleted, live, c->mass_delete_share * 100);
                violation(e, "effect-mass-deletion", ".", detail);
        }
}

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

static bool policy_path(const struct eff *e, const char *path)
{
        if (path_is_within(path, ".txbox/policy"))
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
                snprintf(detail, sizeof(detail), "deletes git internals; use git commands to change the repository");
                violation(e, "effect-git-internals", tp->path, detail);
        } else if (tp->change != TXBOX_ADDED && env_file(tp->path)) {
                snprintf(detail, sizeof(detail), "%s an .env file (secrets); edit it by hand", verb);
                violation(e, "effect-protected-path", tp->path, detail);
        } else if (policy_path(e, tp->path)) {
                snprintf(detail, sizeof(detail), "%s the txbox policy; only the user changes it", verb);
                violation(e, "effect-protected-path", tp->path, detail);
        } else if (user_protected(e, tp->path)) {
                snprintf(detail, sizeof(detail), "%s a path the policy protects", verb);
                violation(e, "effect-protected-path", tp->path, detail);
        }
}

/* ---- what the upper layer holds ---- */

/* Does a link at path (workspace-relative) with this target leave the workspace? */
static bool link_escapes(const char *path, const char *target, const struct policy_ctx *ctx)
{
        if (target[0] == '/')
                return !ctx || !ctx->workspace || !path_is_within(target, ctx->workspace);
        int depth = 0; /* components below the workspace root of the link's directory */
        for (const char *s = path; (s = strchr(s, '/')); s++)
                depth++;
        for (const char *s = target; *s;) {
                const char *e = strchrnul(s, '/');
                size_t l = (size_t)(e - s);
                if (l == 2 && s[0] == '.' && s[1] == '.')
                        depth--;
                else if (l && !(l == 1 && s[0] == '.'))
                        depth++;
                if (depth < 0)
                        return true;
                s = *e ? e + 1 : e;
        }
        return false;
}

static void upper_entry(struct eff *e, int upper_fd, const struct txbox_path *tp)
{
        const char *base;
        _cleanup_close_ int dfd = open_parent_beneath(upper_fd, tp->path, &base);
        struct stat st;
        if (dfd < 0 || fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return; /* not in the upper layer itself (inside a directory that moved whole) */
        char detail[PATH_MAX + 64];
        if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX];
                ssize_t n = readlinkat(dfd, base, target, sizeof(target) - 1);
                if (n < 0)
                        return;
                target[n] = 0;
                if (link_escapes(tp->path, target, e->ctx)) {
                        snprintf(detail, sizeof(detail), "symlink points outside the workspace: %s", target);
                        violation(e, "effect-symlink-escape", tp->path, detail);
                }
                return;
        }
        if (S_ISREG(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID))) {
                snprintf(detail, sizeof(detail), "sets the %s bit", st.st_mode & S_ISUID ? "setuid" : "setgid");
                violation(e, "effect-setuid", tp->path, detail);
        }
        if (S_ISREG(st.st_mode) && st.st_size > e->p->eff.max_file_size) {
                snprintf(detail, sizeof(detail), "file of %lld bytes (limit %lld)", (long long)st.st_size,
                         (long long)e->p->eff.max_file_size);
                violation(e, "effect-file-size", tp->path, detail);
        }
}

int effects_check(const struct policy *p, int upper_fd, int live_fd, struct changeset *cs,
                  const struct policy_ctx *ctx, struct txbox_error *err)
{
        if (!p || !cs)
                return tx_err(err, EINVAL, "effects_check: no policy or changeset");
        struct eff e = {.p = p, .ctx = ctx, .cs = cs};
        if (live_fd >= 0)
                mass_deletion(&e, live_fd);
        for (size_t k = 0; k < cs->npaths; k++) {
                protected_paths(&e, &cs->paths[k]);
                if (upper_fd >= 0 && cs->paths[k].change != TXBOX_DELETED)
                        upper_entry(&e, upper_fd, &cs->paths[k]);
        }
        return e.added;
}
