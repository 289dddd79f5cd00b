/* The loss model (loss.h): what a transaction's changes lose, judged on content, whatever
 * the change is called (docs/POLICY.md, "What counts as lost").
 *
 * A path loses work when its old entry held data (a regular file of some bytes; a
 * directory loses the files beneath it, each listed by the changeset) and its new entry
 * does not hold the same data:
 *   deleted     gone (rm, a directory removed or replaced, a rename out of its name);
 *   replaced    now a directory, a symlink or anything but a regular file;
 *   truncated   now a regular file that is a proper prefix of the old one (emptied too);
 *   reverted    now a regular file whose content git already had (git checkout, reset):
 *               what was there in its place exists only if git has it too.
 * A plain rewrite is an edit, not a loss.  A loss counts unless the data can be had back:
 *   git has it  the old content, hashed as a blob, is in the repository's objects (as
 *               they were before, and still after; or written by the transaction and
 *               reached from a ref it set or the index it wrote: git stash, git add);
 *   regenerable build, dependency and cache output (gitobj.h's kin: by name or content
 *               anywhere; by place only where the repository ignores it);
 *   kept        the same content is in a file the transaction adds or changes elsewhere
 *               in the workspace (a move, a copy), unless that place is regenerable.
 * The ignore rules are HEAD's, never what a transaction wrote (gitwork.h).  Counting
 * stops being cheap only where something was lost: a transaction that only adds files
 * costs one comparison per path. */
#define _GNU_SOURCE
#include "policy/loss.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/str.h"
#include "policy/gitwork.h"
#include "pol.h"
#include "txbox.h"

#define LOST_NAMED 20 /* paths named one by one; the rest are counted */
#define LOST_SHOWN 3  /* paths listed in a violation's detail */
#define MARKER_DIRS 64
/* How the user allows one command (docs/POLICY.md, "Allowing it once"); %s: the rule. */
#define ALLOW_HOW                                                                                      \
        "txbox run --allow-effect=%s -- COMMAND (or txbox commit --allow-effect=%s TX of a run kept with " \
        "--commit=keep)"

enum how { L_DELETED, L_REPLACED, L_TRUNCATED, L_REVERTED, L_REWRITTEN };

struct cand {
        size_t k;      /* index into the changeset */
        enum how how;  /* L_REWRITTEN: a loss only if the new content is one git had */
        int64_t size;  /* of the old entry */
        bool have_oid; /* oid: the old content's blob name */
        uint8_t oid[GIT_OID_RAW];
        const char *why; /* why it cannot be had back */
};

/* A file the transaction adds or changes: where a moved or copied file's data may be. */
struct kept {
        int64_t size;
        size_t k;
        int state; /* 0 not hashed, 1 hashed, -1 unreadable */
        uint8_t oid[GIT_OID_RAW];
};

struct loss {
        const struct policy *p;
        const struct policy_ctx *ctx;
        struct changeset *cs;
        int upper_fd, live_fd;
        struct gitwork *g;
        struct kept *kept;
        size_t nkept;
        bool kept_read;
        struct marker {
                char *dir;
                bool yes;
        } markers[MARKER_DIRS];
        size_t nmarkers, next_marker;
        int added, max;
};

static void add(struct loss *l, const char *rule, const char *path, const char *detail)
{
        if (l->added >= l->max)
                return;
        changeset_add_violation(l->cs, rule, path, detail);
        l->added++;
}

/* ---- what regenerates ---- */

/* Directories that only tools write, whatever ignores them: caches, installed
 * dependencies, a build system's own tree. */
static const char *const tool_dirs[] = {
        "__pycache__", "node_modules", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox",       ".nox",
        ".gradle",     "CMakeFiles",   ".eggs",         ".next",       ".nuxt",       ".parcel-cache", ".turbo",
        ".svelte-kit", ".angular",     ".sass-cache",   ".hypothesis", ".cargo-lock",
};
/* Files that are compiler output by name. */
static const char *const output_files[] = {
        "*.o",   "*.obj",  "*.lo",   "*.la",  "*.a",    "*.so",           "*.so.*", "*.dylib", "*.dll", "*.exe",
        "*.pyc", "*.pyo",  "*.class", "*.gcno", "*.gcda", "*.tsbuildinfo", "*.elc",  "*.beam",
};
/* Places build systems write, and files tools leave: regenerable where the repository
 * ignores them (in a workspace without one: by name). */
static const char *const output_places[] = {
        "build", "dist", "target", "out", "_build", ".venv", "venv", "obj", "coverage", "htmlcov",
        ".cache", "cmake-build-*", "*.egg-info", "site-packages",
};
static const char *const litter_files[] = {"*.log", "*.tmp", "*.swp", "*.swo", "*~", ".DS_Store", "Thumbs.db",
                                           ".coverage", "*.pid"};
/* A directory holding one of these is a tool's tree: a venv, a CMake build tree, a cache
 * (the Cache Directory Tagging Specification's CACHEDIR.TAG). */
static const char *const markers[] = {"pyvenv.cfg", "CMakeCache.txt", "CACHEDIR.TAG"};

static bool matches(const char *const *globs, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (!fnmatch(globs[i], name, 0))
                        return true;
        return false;
}

/* The component of path (of length cl at c) is in globs. */
static bool component_in(const char *const *globs, size_t n, const char *c, size_t cl)
{
        char name[256];
        if (cl >= sizeof(name))
                return false;
        memcpy(name, c, cl);
        name[cl] = 0;
        return matches(globs, n, name);
}

/* Does the workspace's directory dir (as it was) hold a tool's marker file? */
static bool marked(struct loss *l, const char *dir, size_t dl)
{
        for (size_t i = 0; i < l->nmarkers; i++)
                if (strlen(l->markers[i].dir) == dl && !memcmp(l->markers[i].dir, dir, dl))
                        return l->markers[i].yes;
        bool yes = false;
        for (size_t m = 0; m < ARRAY_SIZE(markers) && !yes; m++) {
                char *rel = xasprintf("%.*s/%s", (int)dl, dir, markers[m]);
                struct stat st;
                yes = lstat_beneath(l->live_fd, rel, &st) >= 0 && S_ISREG(st.st_mode);
                free(rel);
        }
        struct marker *mk = &l->markers[l->next_marker];
        l->next_marker = (l->next_marker + 1) % MARKER_DIRS;
        if (l->nmarkers < MARKER_DIRS)
                l->nmarkers++;
        else
                free(mk->dir);
        mk->dir = xasprintf("%.*s", (int)dl, dir);
        mk->yes = yes;
        return yes;
}

/* Compiled output by its first bytes: ELF, an ar archive, a Java class. */
static bool output_magic(const uint8_t b[8])
{
        return !memcmp(b, "\177ELF", 4) || !memcmp(b, "!<arch>\n", 8) || !memcmp(b, "\xca\xfe\xba\xbe", 4);
}

static bool output_content(struct loss *l, const char *path)
{
        _cleanup_close_ int fd = open_beneath_regular(l->live_fd, path, NULL);
        uint8_t b[8];
        return fd >= 0 && pread(fd, b, sizeof(b), 0) == (ssize_t)sizeof(b) && output_magic(b);
}

/* Is path (as it was) output a tool regenerates?  by_content: also look at its bytes. */
static bool regenerable(struct loss *l, const char *path, bool by_content)
{
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        bool place = false;
        for (const char *c = path; c < base;) { /* the directories on the way */
                size_t cl = strcspn(c, "/");
                if (component_in(tool_dirs, ARRAY_SIZE(tool_dirs), c, cl))
                        return true;
                place = place || component_in(output_places, ARRAY_SIZE(output_places), c, cl) ||
                        marked(l, path, (size_t)(c + cl - path));
                c += cl + 1;
        }
        if (matches(output_files, ARRAY_SIZE(output_files), base))
                return true;
        place = place || matches(litter_files, ARRAY_SIZE(litter_files), base);
        /* where the repository ignores it: its ignore rules as they were at HEAD, so that
         * no command can make the user's files "ignored" first */
        if (place && (!l->g || gitwork_ignored(l->g, path, false)))
                return true;
        return by_content && output_content(l, path);
}

/* ---- kept elsewhere ---- */

static int cmp_kept(const void *a, const void *b)
{
        const struct kept *x = a, *y = b;
        return x->size < y->size ? -1 : x->size > y->size;
}

/* The files the transaction adds or changes, by size (read once, when first needed). */
static void read_kept(struct loss *l)
{
        l->kept_read = true;
        if (l->upper_fd < 0)
                return;
        size_t cap = 0;
        for (size_t k = 0; k < l->cs->npaths; k++) {
                const struct txbox_path *tp = &l->cs->paths[k];
                struct stat st;
                if (tp->change == TXBOX_DELETED || lstat_beneath(l->upper_fd, tp->path, &st) < 0 ||
                    !S_ISREG(st.st_mode) || !st.st_size)
                        continue;
                if (l->nkept == cap)
                        l->kept = xrealloc(l->kept, (cap = cap ? 2 * cap : 64) * sizeof(*l->kept));
                l->kept[l->nkept++] = (struct kept){.size = st.st_size, .k = k};
        }
        if (l->nkept > 1)
                qsort(l->kept, l->nkept, sizeof(*l->kept), cmp_kept);
}

/* Is the candidate's old content in a file the transaction adds or changes elsewhere, in
 * a place that is not itself regenerable (a move into build/ is a loss deferred)? */
static bool kept_elsewhere(struct loss *l, struct cand *c)
{
        if (!l->kept_read)
                read_kept(l);
        size_t lo = 0, hi = l->nkept;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (l->kept[mid].size < c->size)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == l->nkept || l->kept[lo].size != c->size)
                return false;
        if (!c->have_oid && git_blob_name_at(l->live_fd, l->cs->paths[c->k].path, c->oid, NULL) < 0)
                return false;
        c->have_oid = true;
        for (size_t i = lo; i < l->nkept && l->kept[i].size == c->size; i++) {
                struct kept *kp = &l->kept[i];
                const char *path = l->cs->paths[kp->k].path;
                if (kp->k == c->k)
                        continue;
                if (!kp->state)
                        kp->state = git_blob_name_at(l->upper_fd, path, kp->oid, NULL) == 0 ? 1 : -1;
                if (kp->state == 1 && !memcmp(kp->oid, c->oid, GIT_OID_RAW) && !regenerable(l, path, false))
                        return true;
        }
        return false;
}

/* ---- made by txbox ---- */

/* Did a committed transaction create the file (as it is now: its ctime no later than that
 * commit), one that deleted nothing?  Then it is an earlier command's own output: nothing
 * of the user's is in it (a file moved there came with a deletion). */
static bool made_by_txbox(struct loss *l, const char *path)
{
        struct stat st;
        if (!l->ctx || !l->ctx->made_by_txbox || lstat_beneath(l->live_fd, path, &st) < 0)
                return false;
        int64_t ctime_ms = (int64_t)st.st_ctim.tv_sec * 1000 + st.st_ctim.tv_nsec / 1000000;
        return l->ctx->made_by_txbox(l->ctx->made_arg, path, ctime_ms, false);
}

/* ---- finding what may be lost ---- */

/* A component named .git: a repository's internals (the integrity rule judges them). */
static bool in_git(const char *path)
{
        for (const char *c = path; *c;) {
                size_t cl = strcspn(c, "/");
                if (cl == 4 && !memcmp(c, ".git", 4))
                        return true;
                c += cl + (c[cl] == '/');
        }
        return false;
}

/* Is the upper file (of up.st_size bytes) a proper prefix of the live one? */
static bool is_prefix(struct loss *l, const char *path, int64_t n)
{
        _cleanup_close_ int a = open_beneath_regular(l->live_fd, path, NULL);
        _cleanup_close_ int b = a < 0 ? -1 : open_beneath_regular(l->upper_fd, path, NULL);
        char x[65536], y[65536];
        if (b < 0)
                return false;
        for (int64_t off = 0; off < n;) {
                size_t want = (size_t)(n - off < (int64_t)sizeof(x) ? n - off : (int64_t)sizeof(x));
                if (pread(a, x, want, off) != (ssize_t)want || pread(b, y, want, off) != (ssize_t)want)
                        return false;
                if (memcmp(x, y, want))
                        return false;
                off += (int64_t)want;
        }
        return true;
}

/* What the change of path k does to the data its old entry held; false: nothing lost. */
static bool candidate(struct loss *l, size_t k, struct cand *c)
{
        const struct txbox_path *tp = &l->cs->paths[k];
        struct stat live, up;
        if (tp->change == TXBOX_ADDED || in_git(tp->path))
                return false;
        if (lstat_beneath(l->live_fd, tp->path, &live) < 0 || !S_ISREG(live.st_mode) || !live.st_size)
                return false;
        *c = (struct cand){.k = k, .size = live.st_size};
        if (tp->change == TXBOX_DELETED)
                c->how = L_DELETED;
        else if (l->upper_fd < 0)
                return false; /* no layer: an agent's own edit judged before it is made (txbox hook):
                               * a file it changes is rewritten, an edit */
        else if (lstat_beneath(l->upper_fd, tp->path, &up) < 0 || !S_ISREG(up.st_mode))
                c->how = L_REPLACED;
        else if (!up.st_size || (up.st_size < live.st_size && is_prefix(l, tp->path, up.st_size)))
                c->how = L_TRUNCATED;
        else
                c->how = L_REWRITTEN;
        return true;
}

/* A rewrite loses the old content when the new one is what git already had: a file
 * checked out or reset over changes.  Any other rewrite is an edit. */
static bool reverted(struct loss *l, const struct cand *c)
{
        uint8_t now[GIT_OID_RAW];
        if (!l->g || git_blob_name_at(l->upper_fd, l->cs->paths[c->k].path, now, NULL) < 0)
                return false;
        return gitwork_has_blob(l->g, now);
}

/* Can the candidate's data be had back (regenerable by name or place: already asked)?
 * Sets c->why when not. */
static bool recoverable(struct loss *l, struct cand *c)
{
        const char *path = l->cs->paths[c->k].path;
        if (l->g) { /* one read: the blob's name, and the first bytes for output_magic */
                uint8_t head[8];
                if (!c->have_oid && git_blob_name_at(l->live_fd, path, c->oid, head) == 0) {
                        c->have_oid = true;
                        if (output_magic(head))
                                return true;
                }
                if (c->have_oid && gitwork_has_blob(l->g, c->oid))
                        return true;
        } else if (output_content(l, path))
                return true;
        if (kept_elsewhere(l, c))
                return true;
        if (made_by_txbox(l, path))
                return true;
        if (!l->g)
                c->why = "no git repository holds a copy";
        else if (gitwork_ignored(l->g, path, false))
                c->why = "ignored by git but not build output or a cache: nothing regenerates it";
        else
                c->why = "git has no copy of this content (untracked, or changed since it was committed or added)";
        return false;
}

static const char *how_name(enum how h)
{
        static const char *const n[] = {[L_DELETED] = "deleted", [L_REPLACED] = "replaced by a non-file",
                                         [L_TRUNCATED] = "truncated", [L_REVERTED] = "overwritten with an older version",
                                         [L_REWRITTEN] = "rewritten"};
        return n[h];
}

/* "a, b, c and N more" (each path cut at 100 bytes). */
static void list_paths(const struct loss *l, const struct cand *lost, size_t nlost, size_t total, char *out,
                       size_t size)
{
        size_t n = 0;
        out[0] = 0;
        for (size_t i = 0; i < nlost && i < LOST_SHOWN; i++) {
                const char *p = l->cs->paths[lost[i].k].path;
                int w = snprintf(out + n, size - n, "%s%.100s%s", i ? ", " : "", p, strlen(p) > 100 ? "..." : "");
                n += w > 0 && (size_t)w < size - n ? (size_t)w : 0;
        }
        if (total > LOST_SHOWN)
                snprintf(out + n, size - n, " and %zu more", total - LOST_SHOWN);
}

/* ---- repository integrity ---- */

static void integrity_problem(void *arg, const char *what, const char *detail)
{
        struct loss *l = arg;
        char *d = xasprintf("%s: HEAD and every branch must keep their whole history (git commit, gc, repack, "
                            "stash, rebase and branch -d do); if this is meant, the user (not the agent) allows it "
                            "once: " ALLOW_HOW,
                            detail, "effect-git-integrity", "effect-git-integrity");
        add(l, "effect-git-integrity", what, d);
        free(d);
}

static void integrity(struct loss *l)
{
        if (l->g)
                gitwork_integrity(l->g, integrity_problem, l);
}

/* ---- the rules ---- */

/* Regular files in the workspace beneath dirfd, counting stops at limit. */
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
                _cleanup_close_ int sub =
                        openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub >= 0)
                        n += count_files(sub, limit - n, depth + 1);
        }
        closedir(d);
        return n;
}

static void judge(struct loss *l, const struct cand *lost, size_t nlost)
{
        const struct effects_cfg *c = &l->p->eff;
        char paths[512], detail[1024];
        list_paths(l, lost, nlost, nlost, paths, sizeof(paths));
        if (l->g && c->lost_work_min > 0 && (long)nlost >= c->lost_work_min)
                for (size_t i = 0; i < nlost && i < LOST_NAMED; i++) {
                        if (i) /* the first says it all; the others why each */
                                snprintf(detail, sizeof(detail), "%s, and %s", how_name(lost[i].how), lost[i].why);
                        else
                                snprintf(detail, sizeof(detail),
                                         "%s, and %s; %zu files lost in all (limit %ld): %s; keep the work first "
                                         "(git add and commit, git stash -u, or move it), or if the loss is meant, "
                                         "the user (not the agent) allows it once: " ALLOW_HOW,
                                         how_name(lost[i].how), lost[i].why, nlost, c->lost_work_min, paths,
                                         "effect-lost-work", "effect-lost-work");
                        add(l, "effect-lost-work", l->cs->paths[lost[i].k].path, detail);
                }
        if ((long)nlost < c->mass_delete_min)
                return;
        long live = -1;
        if ((long)nlost < c->mass_delete_count) {
                /* only the share matters now: stop counting once it cannot be reached */
                long enough = (long)((double)nlost / c->mass_delete_share) + 1;
                live = count_files(l->live_fd, enough, 0);
                if ((double)nlost < c->mass_delete_share * (double)live)
                        return;
        }
        int w = live < 0 ? snprintf(detail, sizeof(detail), "%zu files lost (limit %ld)", nlost, c->mass_delete_count)
                         : snprintf(detail, sizeof(detail), "%zu of the workspace's %ld files lost (limit %.0f%%)",
                                    nlost, live, c->mass_delete_share * 100);
        snprintf(detail + w, sizeof(detail) - (size_t)w,
                 ": %s (deleted, replaced or truncated; neither in git, nor build output, nor kept elsewhere); if "
                 "this is meant, the user (not the agent) allows it once: " ALLOW_HOW,
                 paths, "effect-mass-deletion", "effect-mass-deletion");
        add(l, "effect-mass-deletion", ".", detail);
}

/* Does the changeset touch a path within dir? */
static bool touches(const struct changeset *cs, const char *dir)
{
        char *prefix = xasprintf("%s/", dir);
        size_t k = gcs_lower(cs, prefix);
        bool yes = (k < cs->npaths && str_has_prefix(cs->paths[k].path, prefix)) || gcs_change(cs, dir) >= 0;
        free(prefix);
        return yes;
}

int loss_check(const struct policy *p, int upper_fd, int live_fd, struct changeset *cs, const struct policy_ctx *ctx,
               int max)
{
        struct loss l = {.p = p, .ctx = ctx, .cs = cs, .upper_fd = upper_fd, .live_fd = live_fd, .max = max};
        struct cand *cand = NULL;
        size_t ncand = 0, cap = 0;
        struct stat st;

        if (live_fd < 0)
                return 0;
        for (size_t k = 0; k < cs->npaths; k++) {
                struct cand c;
                if (!candidate(&l, k, &c))
                        continue;
                if (ncand == cap)
                        cand = xrealloc(cand, (cap = cap ? 2 * cap : 64) * sizeof(*cand));
                cand[ncand++] = c;
        }
        /* the repository is read only when something may be lost, or its history changes */
        if (ncand || touches(cs, ".git") ||
            (cs->npaths && lstat_beneath(live_fd, ".git", &st) >= 0 && S_ISREG(st.st_mode)))
                l.g = gitwork_open(live_fd, upper_fd, cs, ctx);
        size_t nlost = 0;
        for (size_t i = 0; i < ncand; i++) {
                struct cand *c = &cand[i];
                /* first what costs no reading: a rebuild rewrites all of target/ */
                if (regenerable(&l, cs->paths[c->k].path, false))
                        continue;
                if (c->how == L_REWRITTEN) {
                        if (!reverted(&l, c))
                                continue;
                        c->how = L_REVERTED;
                }
                if (!recoverable(&l, c))
                        cand[nlost++] = *c;
        }
        judge(&l, cand, nlost);
        integrity(&l);
        for (size_t i = 0; i < l.nmarkers; i++)
                free(l.markers[i].dir);
        free(l.kept);
        free(cand);
        gitwork_free(l.g);
        return l.added;
}
