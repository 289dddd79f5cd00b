/* What git can give back, and what a transaction does to the repository (gitwork.h).  The
 * index as git's documentation of its format describes it (versions 2 to 4), ignore files
 * as gitignore(5) describes them (the subset that matters here), refs as git-update-ref(1)
 * and gitrepository-layout(5) describe them (loose files, packed-refs, symbolic refs);
 * objects through gitobj.c.  git itself is never run: the repository is the workspace's,
 * and its configuration could run commands (core.fsmonitor, filters) as the user, outside
 * the sandbox. */
#define _GNU_SOURCE
#include "policy/gitwork.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <fnmatch.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/mem.h"
#include "base/str.h"
#include "txbox.h"

#define INDEX_MAX (128u << 20) /* bytes of .git/index read */
#define IGNORE_MAX (1u << 20)  /* bytes of one ignore file */
#define IGNORE_DIRS 4096       /* directories whose ignore rules are kept */
#define TREE_MAX (16u << 20)   /* one tree or commit object */
#define REF_MAX 4096           /* one loose ref or HEAD */
#define PACKED_REFS_MAX (64u << 20)
#define REFS_MAX 200000        /* refs read */
#define REF_DEPTH 8            /* symbolic refs followed */
#define WALK_MAX 1000000       /* objects walked to prove a history whole */
#define PROBLEMS_MAX 10        /* integrity problems reported */

/* ---- ignore files ---- */

struct pattern {
        char *pat;
        bool neg, dir_only, anchored;
};

struct ignores {
        char *dir; /* workspace-relative, "" the root */
        struct pattern *v;
        size_t n;
};

/* HEAD's tree at one directory, read once. */
struct headtree {
        char *dir;
        uint8_t *data; /* NULL: HEAD has no such directory */
        size_t len;
};

struct ref {
        char *name;
        uint8_t oid[GIT_OID_RAW];
        bool sym; /* a symbolic ref ("ref: NAME"): not a root of its own */
        bool bad; /* a loose ref file that names nothing */
};

struct refs {
        struct ref *v;
        size_t n;
};

struct gitwork {
        int live_fd, upper_fd;
        const struct changeset *cs;
        char *gitdir;
        bool sha256; /* a SHA-256 repository: its objects are not read here */
        bool objs_touched; /* the transaction adds, changes or deletes something in objects/ */
        struct godb *db;
        /* HEAD as it was before the transaction */
        bool head_read, head_commit;
        uint8_t head_tree[GIT_OID_RAW];
        struct headtree *trees;
        size_t ntrees;
        struct ignores exclude; /* .git/info/exclude, relative to the root */
        struct ignores *dirs;
        size_t ndirs;
        /* blobs the transaction wrote that a ref it set or the index it wrote reaches */
        bool new_read;
        struct oidset new_blobs;
};

static void ignores_parse(struct ignores *ig, const char *dir, const char *text)
{
        ig->dir = xstrdup(dir);
        char *copy = xstrdup(text ? text : ""), *save = NULL;
        for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                size_t n = strlen(l);
                if (n && l[n - 1] == '\r')
                        l[--n] = 0;
                while (n && l[n - 1] == ' ' && (n < 2 || l[n - 2] != '\\'))
                        l[--n] = 0;
                if (!n || l[0] == '#')
                        continue;
                struct pattern p = {0};
                if (l[0] == '!')
                        p.neg = true, l++, n--;
                else if (l[0] == '\\' && (l[1] == '!' || l[1] == '#'))
                        l++, n--;
                if (n && l[n - 1] == '/')
                        p.dir_only = true, l[--n] = 0;
                if (!n)
                        continue;
                p.anchored = strchr(l, '/') != NULL;
                if (l[0] == '/')
                        l++;
                p.pat = xstrdup(l);
                ig->v = xrealloc(ig->v, (ig->n + 1) * sizeof(*ig->v));
                ig->v[ig->n++] = p;
        }
        free(copy);
}

static void ignores_free(struct ignores *ig)
{
        for (size_t k = 0; k < ig->n; k++)
                free(ig->v[k].pat);
        free(ig->v);
        free(ig->dir);
}

/* ---- trees and commits ---- */

/* The next entry of a tree object: mode, name (not NUL-terminated: *nl bytes), object. */
static bool tree_next(const uint8_t **p, const uint8_t *end, uint32_t *mode, const char **name, size_t *nl,
                      const uint8_t **oid)
{
        const uint8_t *q = *p;
        uint32_t m = 0;
        if (q >= end)
                return false;
        for (; q < end && *q != ' '; q++) {
                if (*q < '0' || *q > '7' || m > 0777777)
                        return false;
                m = m * 8 + (uint32_t)(*q - '0');
        }
        if (q >= end || q == *p)
                return false;
        const uint8_t *nm = ++q, *z = memchr(q, 0, (size_t)(end - q));
        if (!z || z == nm || (size_t)(end - z) < 1 + GIT_OID_RAW)
                return false;
        *mode = m;
        *name = (const char *)nm;
        *nl = (size_t)(z - nm);
        *oid = z + 1;
        *p = z + 1 + GIT_OID_RAW;
        return true;
}

static bool is_tree_mode(uint32_t m) { return (m & 0170000) == 0040000; }
static bool is_gitlink(uint32_t m) { return (m & 0170000) == 0160000; }

/* The object a header line names ("tree HEX", "parent HEX", "object HEX") at line. */
static bool header_oid(const char *line, const char *end, const char *key, uint8_t oid[GIT_OID_RAW])
{
        size_t kl = strlen(key);
        return (size_t)(end - line) >= kl + 1 + GIT_OID_HEX && !memcmp(line, key, kl) && line[kl] == ' ' &&
               git_oid_parse(line + kl + 1, oid);
}

/* ---- refs and HEAD, on either side ---- */

/* Read a file of the repository on side: AFTER reads what the transaction wrote where the
 * changeset says it wrote it. */
static int side_read(struct gitwork *g, unsigned side, const char *rel, size_t max, char **out, size_t *len)
{
        int ch = side == GSIDE_AFTER ? gcs_change(g->cs, rel) : -1;
        if (ch == TXBOX_DELETED)
                return -ENOENT;
        int root = ch == TXBOX_ADDED || ch == TXBOX_MODIFIED ? g->upper_fd : g->live_fd;
        return root < 0 ? -ENOENT : read_beneath(root, rel, max, out, len);
}

/* A ref name that may be read as a file: refs/... (or HEAD) with no empty, "." or ".."
 * component. */
static bool ref_name_ok(const char *name)
{
        if (strcmp(name, "HEAD") && !str_has_prefix(name, "refs/"))
                return false;
        for (const char *c = name; *c;) {
                size_t l = strcspn(c, "/");
                if (!l || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                c += l + (c[l] == '/');
        }
        return strlen(name) < 1024;
}

/* The packed-refs line for name on side. */
static bool packed_ref(struct gitwork *g, unsigned side, const char *name, uint8_t oid[GIT_OID_RAW])
{
        char *rel = xasprintf("%s/packed-refs", g->gitdir), *text = NULL;
        size_t len, nl = strlen(name);
        bool found = false;
        if (side_read(g, side, rel, PACKED_REFS_MAX, &text, &len) >= 0)
                for (char *l = text; *l && !found;) {
                        char *e = strchrnul(l, '\n');
                        if ((size_t)(e - l) == GIT_OID_HEX + 1 + nl && l[GIT_OID_HEX] == ' ' &&
                            !memcmp(l + GIT_OID_HEX + 1, name, nl))
                                found = git_oid_parse(l, oid);
                        l = *e ? e + 1 : e;
                }
        free(text);
        free(rel);
        return found;
}

/* What ref name (HEAD or refs/...) resolves to on side.  1: *oid; 0: it does not exist (a
 * symbolic ref to a missing one: *sym_target names it); -1: it exists but names nothing
 * that can be read. */
static int resolve(struct gitwork *g, unsigned side, const char *name, uint8_t oid[GIT_OID_RAW], char *sym_target,
                   size_t st_size, int depth)
{
        if (depth > REF_DEPTH || !ref_name_ok(name))
                return -1;
        char *rel = xasprintf("%s/%s", g->gitdir, name), *text = NULL;
        size_t len;
        int r = side_read(g, side, rel, REF_MAX, &text, &len);
        free(rel);
        if (r < 0) {
                free(text);
                return strcmp(name, "HEAD") && packed_ref(g, side, name, oid) ? 1 : 0;
        }
        text[strcspn(text, "\r\n")] = 0;
        if (!strncmp(text, "ref:", 4)) {
                const char *t = text + 4 + strspn(text + 4, " \t");
                if (sym_target)
                        snprintf(sym_target, st_size, "%s", t);
                r = resolve(g, side, t, oid, sym_target, st_size, depth + 1);
        } else
                r = strlen(text) == GIT_OID_HEX && git_oid_parse(text, oid) ? 1 : -1;
        free(text);
        return r;
}

static void refs_add(struct refs *rs, const char *name, const uint8_t oid[GIT_OID_RAW], bool sym, bool bad)
{
        for (size_t k = 0; k < rs->n; k++) /* a loose ref overrides its packed line */
                if (!strcmp(rs->v[k].name, name)) {
                        memcpy(rs->v[k].oid, oid, GIT_OID_RAW);
                        rs->v[k].sym = sym;
                        rs->v[k].bad = bad;
                        return;
                }
        rs->v = xrealloc(rs->v, (rs->n + 1) * sizeof(*rs->v));
        rs->v[rs->n] = (struct ref){.name = xstrdup(name), .sym = sym, .bad = bad};
        memcpy(rs->v[rs->n++].oid, oid, GIT_OID_RAW);
}

static void refs_free(struct refs *rs)
{
        for (size_t k = 0; k < rs->n; k++)
                free(rs->v[k].name);
        free(rs->v);
        *rs = (struct refs){0};
}

/* One loose ref file (workspace-relative rel; name is the ref's) read from root. */
static void loose_ref(int root, const char *rel, const char *name, struct refs *rs)
{
        char *text = NULL;
        size_t len;
        uint8_t oid[GIT_OID_RAW] = {0};
        if (rs->n >= REFS_MAX || read_beneath(root, rel, REF_MAX, &text, &len) < 0)
                return;
        text[strcspn(text, "\r\n")] = 0;
        if (!strncmp(text, "ref:", 4))
                refs_add(rs, name, oid, true, false);
        else if (strlen(text) == GIT_OID_HEX && git_oid_parse(text, oid))
                refs_add(rs, name, oid, false, false);
        else
                refs_add(rs, name, oid, false, true);
        free(text);
}

/* The loose refs beneath dir (workspace-relative) in the workspace, as on side. */
static void loose_refs_live(struct gitwork *g, unsigned side, const char *dir, int depth, struct refs *rs)
{
        int fd = depth > 32 ? -1 : open_beneath(g->live_fd, dir, O_RDONLY | O_DIRECTORY, 0);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        size_t skip = strlen(g->gitdir) + 1;
        for (struct dirent *de; rs->n < REFS_MAX && (de = readdir(d));) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                char *rel = xasprintf("%s/%s", dir, de->d_name);
                int ch = side == GSIDE_AFTER ? gcs_change(g->cs, rel) : -1;
                if (de->d_type == DT_DIR)
                        loose_refs_live(g, side, rel, depth + 1, rs);
                else if (ch != TXBOX_DELETED && ch != TXBOX_MODIFIED && de->d_type == DT_REG)
                        loose_ref(g->live_fd, rel, rel + skip, rs);
                free(rel);
        }
        closedir(d);
}

/* Every ref (packed, then loose) on side. */
static void collect_refs(struct gitwork *g, unsigned side, struct refs *rs)
{
        char *rel = xasprintf("%s/packed-refs", g->gitdir), *text = NULL;
        size_t len;
        if (side_read(g, side, rel, PACKED_REFS_MAX, &text, &len) >= 0)
                for (char *l = text; *l && rs->n < REFS_MAX;) {
                        char *e = strchrnul(l, '\n');
                        uint8_t oid[GIT_OID_RAW];
                        if (e - l > GIT_OID_HEX + 1 && l[GIT_OID_HEX] == ' ' && git_oid_parse(l, oid)) {
                                char *name = strndup(l + GIT_OID_HEX + 1, (size_t)(e - l) - GIT_OID_HEX - 1);
                                if (name && ref_name_ok(name))
                                        refs_add(rs, name, oid, false, false);
                                free(name);
                        }
                        l = *e ? e + 1 : e;
                }
        free(text);
        free(rel);
        rel = xasprintf("%s/refs", g->gitdir);
        loose_refs_live(g, side, rel, 0, rs);
        if (side == GSIDE_AFTER) { /* refs the transaction wrote or rewrote */
                char *prefix = xasprintf("%s/", rel);
                size_t skip = strlen(g->gitdir) + 1;
                for (size_t k = gcs_lower(g->cs, prefix); g->cs && k < g->cs->npaths; k++) {
                        const struct txbox_path *tp = &g->cs->paths[k];
                        struct stat st;
                        if (!str_has_prefix(tp->path, prefix))
                                break;
                        if (tp->change != TXBOX_DELETED && lstat_beneath(g->upper_fd, tp->path, &st) >= 0 &&
                            S_ISREG(st.st_mode))
                                loose_ref(g->upper_fd, tp->path, tp->path + skip, rs);
                }
                free(prefix);
        }
        free(rel);
}

/* ---- opening ---- */

/* A gitdir: path within the workspace: relative, no empty, "." or ".." component. */
static bool within(const char *p)
{
        if (!*p || *p == '/' || strlen(p) >= 1024)
                return false;
        for (const char *c = p; *c;) {
                size_t l = strcspn(c, "/");
                if ((l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                if (!l && c[l])
                        return false;
                c += l + (c[l] == '/');
        }
        return true;
}

/* The repository's directory, workspace-relative, or NULL.  The .git file is read from
 * the workspace as it was before the transaction. */
static char *git_dir(int live_fd)
{
        struct stat st;
        if (lstat_beneath(live_fd, ".git", &st) < 0)
                return NULL;
        if (S_ISDIR(st.st_mode))
                return xstrdup(".git");
        char *text = NULL, *dir = NULL;
        size_t len;
        if (!S_ISREG(st.st_mode) || read_beneath(live_fd, ".git", 4096, &text, &len) < 0)
                return NULL;
        if (!strncmp(text, "gitdir:", 7)) {
                char *p = text + 7 + strspn(text + 7, " \t");
                p[strcspn(p, "\r\n")] = 0;
                size_t l = strlen(p);
                while (l > 1 && p[l - 1] == '/')
                        p[--l] = 0;
                if (within(p) && lstat_beneath(live_fd, p, &st) >= 0 && S_ISDIR(st.st_mode))
                        dir = xstrdup(p);
        }
        free(text);
        return dir;
}

/* .git/info/exclude is no commit's: it is believed unless a transaction of txbox's wrote it
 * last (a command, or an agent's edit), and the user did not change it since, so that no
 * command can make a place "ignored" for the next one to delete as build output. */
static bool exclude_trusted(int live_fd, const char *rel, const struct policy_ctx *ctx)
{
        struct stat st;
        if (!ctx || !ctx->made_by_txbox || lstat_beneath(live_fd, rel, &st) < 0)
                return true;
        int64_t ctime_ms = (int64_t)st.st_ctim.tv_sec * 1000 + st.st_ctim.tv_nsec / 1000000;
        return !ctx->made_by_txbox(ctx->made_arg, rel, ctime_ms, true);
}

struct gitwork *gitwork_open(int live_fd, int upper_fd, const struct changeset *cs, const struct policy_ctx *ctx)
{
        char *gd = live_fd < 0 ? NULL : git_dir(live_fd);
        if (!gd)
                return NULL;
        struct gitwork *g = xcalloc(1, sizeof(*g));
        g->live_fd = live_fd;
        g->upper_fd = upper_fd >= 0 && cs ? upper_fd : -1;
        g->cs = g->upper_fd >= 0 ? cs : NULL;
        g->gitdir = gd;
        char *objdir = xasprintf("%s/objects", gd), *ex = NULL, *rel = xasprintf("%s/info/exclude", gd);
        g->db = godb_open(live_fd, g->upper_fd, objdir, g->cs);
        char *objs = xasprintf("%s/", objdir);
        size_t k = gcs_lower(g->cs, objs);
        g->objs_touched = g->cs && k < g->cs->npaths && str_has_prefix(g->cs->paths[k].path, objs);
        free(objs);
        size_t len;
        char *cfg = NULL, *crel = xasprintf("%s/config", gd);
        g->sha256 = read_beneath(live_fd, crel, IGNORE_MAX, &cfg, &len) >= 0 && strcasestr(cfg, "objectformat") &&
                    strcasestr(cfg, "sha256");
        free(cfg);
        free(crel);
        if (!exclude_trusted(live_fd, rel, ctx) || read_beneath(live_fd, rel, IGNORE_MAX, &ex, &len) < 0)
                ex = NULL;
        ignores_parse(&g->exclude, "", ex);
        free(ex);
        free(rel);
        free(objdir);
        return g;
}

void gitwork_free(struct gitwork *g)
{
        if (!g)
                return;
        for (size_t k = 0; k < g->ntrees; k++) {
                free(g->trees[k].dir);
                free(g->trees[k].data);
        }
        free(g->trees);
        for (size_t k = 0; k < g->ndirs; k++)
                ignores_free(&g->dirs[k]);
        free(g->dirs);
        ignores_free(&g->exclude);
        oidset_clear(&g->new_blobs);
        godb_free(g->db);
        free(g->gitdir);
        free(g);
}

/* ---- HEAD's tree, as it was before the transaction ---- */

static void read_head(struct gitwork *g)
{
        uint8_t commit[GIT_OID_RAW];
        uint8_t *data = NULL;
        size_t len;
        enum gobj_type t;
        g->head_read = true;
        if (resolve(g, GSIDE_BEFORE, "HEAD", commit, NULL, 0, 0) != 1 ||
            godb_read(g->db, commit, GSIDE_BEFORE, TREE_MAX, &t, &data, &len) < 0)
                return;
        g->head_commit = t == GOBJ_COMMIT && header_oid((char *)data, (char *)data + len, "tree", g->head_tree);
        free(data);
}

/* The entry name (of nl bytes) in a tree object: its mode and object, or false. */
static bool tree_find(const uint8_t *data, size_t len, const char *name, size_t nl, uint32_t *mode,
                      uint8_t oid[GIT_OID_RAW])
{
        const uint8_t *p = data, *end = data + len, *o;
        const char *n;
        size_t l;
        uint32_t m;
        while (tree_next(&p, end, &m, &n, &l, &o))
                if (l == nl && !memcmp(n, name, nl)) {
                        *mode = m;
                        memcpy(oid, o, GIT_OID_RAW);
                        return true;
                }
        return false;
}

/* HEAD's tree at directory dir ("" the root), or NULL when HEAD has none there. */
static const struct headtree *head_tree(struct gitwork *g, const char *dir)
{
        for (size_t k = g->ntrees; k-- > 0;)
                if (!strcmp(g->trees[k].dir, dir))
                        return &g->trees[k];
        if (g->ntrees >= IGNORE_DIRS)
                return NULL;
        uint8_t oid[GIT_OID_RAW];
        bool have = false;
        if (!*dir) {
                have = g->head_commit;
                memcpy(oid, g->head_tree, GIT_OID_RAW);
        } else {
                const char *slash = strrchr(dir, '/');
                char *parent = slash ? strndup(dir, (size_t)(slash - dir)) : xstrdup("");
                const char *base = slash ? slash + 1 : dir;
                const struct headtree *up = parent ? head_tree(g, parent) : NULL;
                uint32_t mode;
                have = up && up->data && tree_find(up->data, up->len, base, strlen(base), &mode, oid) &&
                       is_tree_mode(mode);
                free(parent);
        }
        struct headtree ht = {.dir = xstrdup(dir)};
        enum gobj_type t;
        if (have && (godb_read(g->db, oid, GSIDE_BEFORE, TREE_MAX, &t, &ht.data, &ht.len) < 0 || t != GOBJ_TREE)) {
                free(ht.data);
                ht.data = NULL;
        }
        g->trees = xrealloc(g->trees, (g->ntrees + 1) * sizeof(*g->trees));
        g->trees[g->ntrees] = ht;
        return &g->trees[g->ntrees++];
}

/* The .gitignore of directory dir as HEAD has it (the workspace's while there is no
 * commit): malloc'd text, or NULL. */
static char *ignore_text(struct gitwork *g, const char *dir)
{
        char *text = NULL;
        size_t len;
        if (!g->head_read)
                read_head(g);
        if (!g->head_commit) {
                char *rel = *dir ? xasprintf("%s/.gitignore", dir) : xstrdup(".gitignore");
                if (read_beneath(g->live_fd, rel, IGNORE_MAX, &text, &len) < 0)
                        text = NULL;
                free(rel);
                return text;
        }
        const struct headtree *ht = head_tree(g, dir);
        uint8_t oid[GIT_OID_RAW];
        uint32_t mode;
        enum gobj_type t;
        if (!ht || !ht->data || !tree_find(ht->data, ht->len, ".gitignore", 10, &mode, oid) ||
            (mode & 0170000) != 0100000 ||
            godb_read(g->db, oid, GSIDE_BEFORE, IGNORE_MAX, &t, (uint8_t **)&text, &len) < 0)
                return NULL;
        if (t != GOBJ_BLOB || memchr(text, 0, len)) {
                free(text);
                return NULL;
        }
        return text;
}

/* The ignore patterns of directory dir ("" the root), read once. */
static struct ignores *dir_ignores(struct gitwork *g, const char *dir)
{
        for (size_t k = g->ndirs; k-- > 0;)
                if (!strcmp(g->dirs[k].dir, dir))
                        return &g->dirs[k];
        if (g->ndirs >= IGNORE_DIRS)
                return NULL;
        char *text = ignore_text(g, dir);
        g->dirs = xrealloc(g->dirs, (g->ndirs + 1) * sizeof(*g->dirs));
        struct ignores *ig = &g->dirs[g->ndirs++];
        *ig = (struct ignores){0};
        ignores_parse(ig, dir, text);
        free(text);
        return ig;
}

/* The last pattern of ig that matches rel (relative to ig's directory): 1 ignored, -1
 * re-included, 0 none. */
static int ignores_match(const struct ignores *ig, const char *rel, bool is_dir)
{
        const char *base = strrchr(rel, '/');
        base = base ? base + 1 : rel;
        for (size_t k = ig->n; k-- > 0;) {
                const struct pattern *p = &ig->v[k];
                if (p->dir_only && !is_dir)
                        continue;
                bool hit;
                if (!p->anchored)
                        hit = !fnmatch(p->pat, base, 0);
                else /* "**" crosses directories; elsewhere a star does not */
                        hit = !fnmatch(p->pat, rel, strstr(p->pat, "**") ? 0 : FNM_PATHNAME);
                if (hit)
                        return p->neg ? -1 : 1;
        }
        return 0;
}

/* Is path (is_dir: a directory) ignored, judged at its own level only? */
static bool ignored_here(struct gitwork *g, const char *path, bool is_dir)
{
        int v = ignores_match(&g->exclude, path, is_dir);
        /* each ancestor's .gitignore, the deepest last: it has the last word */
        char dir[4096];
        if (strlen(path) >= sizeof(dir))
                return false;
        for (const char *s = path;;) {
                snprintf(dir, sizeof(dir), "%.*s", (int)(s > path ? s - path - 1 : 0), path);
                struct ignores *ig = dir_ignores(g, dir);
                if (!ig)
                        return false; /* too many directories to judge: not ignored (counted) */
                int m = ignores_match(ig, path + (s - path), is_dir);
                if (m)
                        v = m;
                const char *slash = strchr(s, '/');
                if (!slash)
                        break;
                s = slash + 1;
        }
        return v > 0;
}

bool gitwork_ignored(struct gitwork *g, const char *path, bool is_dir)
{
        char buf[4096];
        size_t n = strlen(path);
        if (n >= sizeof(buf))
                return false;
        for (size_t k = 0; k < n; k++)
                if (path[k] == '/') {
                        memcpy(buf, path, k);
                        buf[k] = 0;
                        if (ignored_here(g, buf, true))
                                return true;
                }
        return ignored_here(g, path, is_dir);
}

/* ---- what the transaction wrote ---- */

static uint32_t be32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Every object an index names (versions 2 to 4), added to out; false when it cannot be
 * read as one. */
static bool index_names(const uint8_t *d, size_t len, struct oidset *out)
{
        if (len < 12 + 20 || memcmp(d, "DIRC", 4))
                return false;
        uint32_t ver = be32(d + 4), count = be32(d + 8);
        if (ver < 2 || ver > 4 || count > len / 40)
                return false;
        size_t off = 12, end = len - 20; /* the trailing checksum */
        for (uint32_t k = 0; k < count; k++) {
                size_t start = off;
                if (off + 62 > end)
                        return false;
                const uint8_t *p = d + off;
                uint16_t flags = (uint16_t)(p[60] << 8 | p[61]);
                if ((be32(p + 24) & 0170000) != 0160000)
                        oidset_add(out, p + 40);
                off += 62;
                if (ver >= 3 && (flags & 0x4000))
                        off += 2;
                if (ver == 4) { /* a varint (prefix to strip), then the rest of the name */
                        int bytes = 0;
                        uint8_t c;
                        do {
                                if (off >= end || ++bytes > 9)
                                        return false;
                                c = d[off++];
                        } while (c & 128);
                        const uint8_t *z = off < end ? memchr(d + off, 0, end - off) : NULL;
                        if (!z)
                                return false;
                        off = (size_t)(z - d) + 1;
                } else {
                        const uint8_t *z = off < end ? memchr(d + off, 0, end - off) : NULL;
                        if (!z)
                                return false;
                        size_t sl = (size_t)(z - (d + off));
                        off = start + ((off - start + sl + 8) & ~(size_t)7);
                }
        }
        return true;
}

struct walk {
        struct gitwork *g;
        struct oidset seen;
        uint8_t (*stack)[GIT_OID_RAW];
        size_t n, cap;
        size_t visited;
};

static void walk_push(struct walk *w, const uint8_t oid[GIT_OID_RAW])
{
        if (oidset_has(&w->seen, oid))
                return;
        if (w->n == w->cap)
                w->stack = xrealloc(w->stack, (w->cap = w->cap ? 2 * w->cap : 64) * sizeof(*w->stack));
        memcpy(w->stack[w->n++], oid, GIT_OID_RAW);
}

static void walk_free(struct walk *w)
{
        oidset_clear(&w->seen);
        free(w->stack);
}

/* Push what a commit, tree or tag names (blobs into blobs, when not NULL). */
static void walk_children(struct walk *w, enum gobj_type t, const uint8_t *data, size_t len, struct oidset *blobs)
{
        uint8_t oid[GIT_OID_RAW];
        if (t == GOBJ_COMMIT || t == GOBJ_TAG) {
                for (const char *l = (const char *)data, *end = l + len; l < end && *l != '\n';) {
                        const char *e = memchr(l, '\n', (size_t)(end - l));
                        e = e ? e : end;
                        if (header_oid(l, e, "tree", oid) || header_oid(l, e, "parent", oid) ||
                            header_oid(l, e, "object", oid))
                                walk_push(w, oid);
                        l = e + 1;
                }
        } else if (t == GOBJ_TREE) {
                const uint8_t *p = data, *end = data + len, *o;
                const char *n;
                size_t l;
                uint32_t m;
                while (tree_next(&p, end, &m, &n, &l, &o)) {
                        if (is_gitlink(m))
                                continue;
                        if (!is_tree_mode(m) && blobs) {
                                if (oidset_add(&w->seen, o))
                                        oidset_add(blobs, o);
                        } else
                                walk_push(w, o);
                }
        }
}

/* The blobs the transaction wrote that a ref it set, or the index it wrote, names: walked
 * from those refs through the objects that were not there before. */
static void read_new(struct gitwork *g)
{
        g->new_read = true;
        if (!g->objs_touched)
                return;
        char *idx = xasprintf("%s/index", g->gitdir), *text = NULL;
        size_t len;
        int ch = gcs_change(g->cs, idx);
        if ((ch == TXBOX_ADDED || ch == TXBOX_MODIFIED) && read_beneath(g->upper_fd, idx, INDEX_MAX, &text, &len) >= 0)
                index_names((const uint8_t *)text, len, &g->new_blobs);
        free(text);
        free(idx);
        struct refs rs = {0};
        struct walk w = {.g = g};
        collect_refs(g, GSIDE_AFTER, &rs);
        for (size_t k = 0; k < rs.n; k++)
                if (!rs.v[k].sym && !rs.v[k].bad)
                        walk_push(&w, rs.v[k].oid);
        uint8_t head[GIT_OID_RAW];
        if (resolve(g, GSIDE_AFTER, "HEAD", head, NULL, 0, 0) == 1)
                walk_push(&w, head);
        refs_free(&rs);
        while (w.n && w.visited < WALK_MAX) {
                uint8_t oid[GIT_OID_RAW], *data = NULL;
                memcpy(oid, w.stack[--w.n], GIT_OID_RAW);
                enum gobj_type t;
                if (!oidset_add(&w.seen, oid) || godb_has(g->db, oid, GSIDE_BEFORE, false))
                        continue; /* there before: not the transaction's */
                w.visited++;
                if (godb_read(g->db, oid, GSIDE_AFTER, TREE_MAX, &t, &data, &len) == 0)
                        walk_children(&w, t, data, len, &g->new_blobs);
                free(data);
        }
        walk_free(&w);
}

bool gitwork_has_blob(struct gitwork *g, const uint8_t oid[GIT_OID_RAW])
{
        if (g->sha256)
                return false;
        if (godb_has(g->db, oid, GSIDE_BEFORE, true))
                return !g->objs_touched || godb_has(g->db, oid, GSIDE_AFTER, false) == 1;
        if (!g->objs_touched)
                return false;
        if (!g->new_read)
                read_new(g);
        return oidset_has(&g->new_blobs, oid) && godb_has(g->db, oid, GSIDE_AFTER, true) == 1;
}

/* ---- integrity ---- */

static bool within_git(const struct gitwork *g, const char *path, const char *sub)
{
        char buf[1200];
        snprintf(buf, sizeof(buf), "%s/%s", g->gitdir, sub);
        return path_is_within(path, buf);
}

static bool touches_history(const struct gitwork *g)
{
        if (!g->cs)
                return false;
        if (g->objs_touched)
                return true;
        static const char *const subs[] = {"refs", "packed-refs", "HEAD", "shallow"};
        for (size_t s = 0; s < sizeof(subs) / sizeof(subs[0]); s++) {
                char *p = xasprintf("%s/%s", g->gitdir, subs[s]);
                size_t k = gcs_lower(g->cs, p);
                bool hit = k < g->cs->npaths && within_git(g, g->cs->paths[k].path, subs[s]);
                free(p);
                if (hit)
                        return true;
        }
        return false;
}

struct integrity {
        struct gitwork *g;
        void (*fn)(void *, const char *, const char *);
        void *arg;
        int problems;
        struct oidset vanished;
        bool lenient; /* objects may be missing by design: shallow, partial, alternates */
        struct oidset shallow;
};

static void problem(struct integrity *in, const char *what, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem(struct integrity *in, const char *what, const char *fmt, ...)
{
        char detail[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof(detail), fmt, ap);
        va_end(ap);
        if (in->problems++ < PROBLEMS_MAX)
                in->fn(in->arg, what, detail);
}

static bool exists_on(struct gitwork *g, unsigned side, const char *sub)
{
        char *rel = xasprintf("%s/%s", g->gitdir, sub);
        int ch = side == GSIDE_AFTER ? gcs_change(g->cs, rel) : -1;
        struct stat st;
        int root = ch == TXBOX_ADDED || ch == TXBOX_MODIFIED ? g->upper_fd : g->live_fd;
        bool yes = ch != TXBOX_DELETED && lstat_beneath(root, rel, &st) >= 0;
        free(rel);
        return yes;
}

/* Whole history may be missing by design in a shallow clone, a partial clone (promisor
 * packs) or a repository borrowing objects (alternates): there, an object missing before
 * and after is not the transaction's doing. */
static void read_lenient(struct integrity *in)
{
        struct gitwork *g = in->g;
        char *text = NULL, *rel = xasprintf("%s/shallow", g->gitdir);
        size_t len;
        in->lenient = exists_on(g, GSIDE_BEFORE, "objects/info/alternates");
        if (side_read(g, GSIDE_AFTER, rel, PACKED_REFS_MAX, &text, &len) >= 0) {
                in->lenient = true;
                for (char *l = text; *l;) {
                        uint8_t oid[GIT_OID_RAW];
                        if (git_oid_parse(l, oid))
                                oidset_add(&in->shallow, oid);
                        char *e = strchrnul(l, '\n');
                        l = *e ? e + 1 : e;
                }
        }
        free(text);
        free(rel);
        rel = xasprintf("%s/objects/pack", g->gitdir);
        int fd = open_beneath(g->live_fd, rel, O_RDONLY | O_DIRECTORY, 0);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d && fd >= 0)
                close(fd);
        for (struct dirent *de; d && !in->lenient && (de = readdir(d));) {
                size_t l = strlen(de->d_name);
                in->lenient = l > 9 && !strcmp(de->d_name + l - 9, ".promisor");
        }
        if (d)
                closedir(d);
        free(rel);
}

/* Walk from root (named what) through the objects after the transaction.  full: every
 * object, looking for one the transaction removed; else only the objects it wrote (one
 * that was there before, and stays, had its whole history then). */
static int walk_from(struct integrity *in, struct walk *w, const char *what, const uint8_t root[GIT_OID_RAW],
                     bool full)
{
        struct gitwork *g = in->g;
        char hex[GIT_OID_HEX + 1];
        struct oidset blobs = {0};
        int r = 0;

        walk_push(w, root);
        while (w->n && in->problems < PROBLEMS_MAX) {
                uint8_t oid[GIT_OID_RAW], *data = NULL;
                memcpy(oid, w->stack[--w->n], GIT_OID_RAW);
                if (!oidset_add(&w->seen, oid))
                        continue;
                if (++w->visited > WALK_MAX) {
                        r = -E2BIG;
                        break;
                }
                git_oid_hex(oid, hex);
                if (oidset_has(&in->vanished, oid)) {
                        problem(in, what, "%s needs object %s, which this command removes from the repository", what,
                                hex);
                        continue;
                }
                if (!full && godb_has(g->db, oid, GSIDE_BEFORE, false))
                        continue; /* there before, and still: its history was whole */
                enum gobj_type t;
                size_t len;
                int rr = godb_read(g->db, oid, GSIDE_AFTER, TREE_MAX, &t, &data, &len);
                if (rr < 0) {
                        if (!full && !in->lenient && rr != -EFBIG)
                                problem(in, what, "%s needs object %s, which is missing or damaged", what, hex);
                        continue;
                }
                if (t == GOBJ_COMMIT && oidset_has(&in->shallow, oid)) {
                        /* a shallow boundary: its parents are not in the repository */
                        uint8_t tree[GIT_OID_RAW];
                        if (header_oid((char *)data, (char *)data + len, "tree", tree))
                                walk_push(w, tree);
                } else
                        walk_children(w, t, data, len, &blobs);
                free(data);
                /* the blobs a tree names need only be there (after), and not removed */
                for (size_t i = 0; i < blobs.cap && blobs.n; i++) {
                        if (!blobs.used[i])
                                continue;
                        const uint8_t *b = blobs.v[i];
                        if (oidset_has(&in->vanished, b)) {
                                git_oid_hex(b, hex);
                                problem(in, what, "%s needs object %s, which this command removes from the repository",
                                        what, hex);
                        } else if (!full && !in->lenient && !godb_has(g->db, b, GSIDE_AFTER, false)) {
                                git_oid_hex(b, hex);
                                problem(in, what, "%s needs object %s, which is missing", what, hex);
                        }
                }
                oidset_clear(&blobs);
        }
        oidset_clear(&blobs);
        return r;
}

/* HEAD: it must still name a commit, unless it did not before either.  Returns what
 * resolving HEAD after the transaction gave (1: a commit, in after; *moved: not the same
 * as before). */
static int check_head(struct integrity *in, uint8_t after[GIT_OID_RAW], bool *moved)
{
        struct gitwork *g = in->g;
        uint8_t before[GIT_OID_RAW], was[GIT_OID_RAW];
        char target[1024] = "";
        int hb = resolve(g, GSIDE_BEFORE, "HEAD", before, NULL, 0, 0);
        int ha = resolve(g, GSIDE_AFTER, "HEAD", after, target, sizeof(target), 0);
        if (hb == 1 && ha != 1) {
                if (!exists_on(g, GSIDE_AFTER, "HEAD"))
                        problem(in, "HEAD", "HEAD is removed");
                else if (ha == 0 && target[0] && resolve(g, GSIDE_BEFORE, target, was, NULL, 0, 0) == 1)
                        problem(in, "HEAD", "the branch HEAD is on (%s) is removed", target);
                else if (ha < 0)
                        problem(in, "HEAD", "HEAD no longer names a branch or a commit");
        }
        *moved = ha == 1 && (hb != 1 || memcmp(before, after, GIT_OID_RAW));
        return ha;
}

/* A loose ref removed while packed-refs keeps another value: the ref moves back to that
 * value, which no git command does (pack-refs moves the same value, branch -d and
 * update-ref -d remove both). */
static void check_moved_back(struct integrity *in)
{
        struct gitwork *g = in->g;
        char *prefix = xasprintf("%s/refs/", g->gitdir);
        for (size_t k = gcs_lower(g->cs, prefix); k < g->cs->npaths && in->problems < PROBLEMS_MAX; k++) {
                const struct txbox_path *tp = &g->cs->paths[k];
                const char *name = tp->path + strlen(g->gitdir) + 1;
                char *text = NULL;
                size_t len;
                uint8_t was[GIT_OID_RAW], now[GIT_OID_RAW];
                if (!str_has_prefix(tp->path, prefix))
                        break;
                if (tp->change == TXBOX_DELETED && read_beneath(g->live_fd, tp->path, REF_MAX, &text, &len) >= 0 &&
                    len >= GIT_OID_HEX && git_oid_parse(text, was) && resolve(g, GSIDE_AFTER, name, now, NULL, 0, 0) == 1 &&
                    memcmp(was, now, GIT_OID_RAW))
                        problem(in, name, "%s moves back to an older commit: its ref file is removed and packed-refs "
                                "holds another value", name);
                free(text);
        }
        free(prefix);
}

/* The refs the transaction set (rs: every ref after it): what they name must be there,
 * and what that names. */
static int check_set_refs(struct integrity *in, const struct refs *rs, struct walk *w)
{
        struct gitwork *g = in->g;
        char *packed = xasprintf("%s/packed-refs", g->gitdir);
        bool packed_changed = gcs_change(g->cs, packed) >= 0;
        int r = 0;
        free(packed);
        for (size_t k = 0; k < rs->n && r >= 0 && in->problems < PROBLEMS_MAX; k++) {
                const struct ref *rf = &rs->v[k];
                char *rel = xasprintf("%s/%s", g->gitdir, rf->name);
                int ch = gcs_change(g->cs, rel);
                free(rel);
                if (rf->sym || (ch < 0 && !packed_changed))
                        continue;
                if (rf->bad) {
                        problem(in, rf->name, "%s no longer names a commit", rf->name);
                        continue;
                }
                if (!godb_has(g->db, rf->oid, GSIDE_AFTER, false) &&
                    (str_has_prefix(rf->name, "refs/heads/") || oidset_has(&in->vanished, rf->oid))) {
                        char hex[GIT_OID_HEX + 1];
                        git_oid_hex(rf->oid, hex);
                        problem(in, rf->name, "%s names object %s, which is not in the repository", rf->name, hex);
                        continue;
                }
                r = walk_from(in, w, rf->name, rf->oid, false);
        }
        return r;
}

/* Objects the transaction removed: no ref may need one (every ref's history walked). */
static int check_vanished(struct integrity *in, const struct refs *rs, int ha, const uint8_t head[GIT_OID_RAW])
{
        struct walk all = {.g = in->g};
        int r = 0;
        if (ha == 1)
                r = walk_from(in, &all, "HEAD", head, true);
        for (size_t k = 0; k < rs->n && r >= 0 && in->problems < PROBLEMS_MAX; k++)
                if (!rs->v[k].sym && !rs->v[k].bad)
                        r = walk_from(in, &all, rs->v[k].name, rs->v[k].oid, true);
        walk_free(&all);
        return r;
}

int gitwork_integrity(struct gitwork *g, void (*fn)(void *arg, const char *what, const char *detail), void *arg)
{
        if (!touches_history(g))
                return 0;
        struct integrity in = {.g = g, .fn = fn, .arg = arg};
        int r = g->sha256 ? -EPROTONOSUPPORT /* its objects have other names: cannot be judged */
                          : godb_vanished(g->db, &in.vanished);
        if (r >= 0) {
                read_lenient(&in);
                uint8_t head[GIT_OID_RAW];
                bool moved;
                int ha = check_head(&in, head, &moved);
                check_moved_back(&in);
                struct refs rs = {0};
                struct walk w = {.g = g};
                collect_refs(g, GSIDE_AFTER, &rs);
                r = check_set_refs(&in, &rs, &w);
                if (r >= 0 && moved)
                        r = walk_from(&in, &w, "HEAD", head, false);
                walk_free(&w);
                if (r >= 0 && in.vanished.n && in.problems < PROBLEMS_MAX)
                        r = check_vanished(&in, &rs, ha, head);
                refs_free(&rs);
        }
        if (r < 0) /* nothing judged is allowed */
                problem(&in, g->gitdir, "the repository's history could not be checked after this command (%s)",
                        r == -E2BIG             ? "it removes objects, and the history to walk for them is over "
                                                  "1,000,000 objects"
                        : r == -EPROTONOSUPPORT ? "a SHA-256 repository's objects are not read by txbox"
                        : r == -EFBIG           ? "a pack it removes has an index too large to list"
                                                : strerror(-r));
        oidset_clear(&in.vanished);
        oidset_clear(&in.shallow);
        return in.problems;
}
