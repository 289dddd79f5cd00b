/* What git can give back (gitwork.h): the index read as git's documentation of its format
 * describes it (versions 2 to 4), ignore files read as gitignore(5) describes them (the
 * subset that matters here), and SHA-1 for comparing a file with its blob.  git itself is
 * never run: the repository is the workspace's, and its configuration could run commands
 * (core.fsmonitor, filters) as the user, outside the sandbox. */
#define _GNU_SOURCE
#include "policy/gitwork.h"

#include <endian.h>
#include <fnmatch.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"

#define INDEX_MAX (128u << 20)  /* bytes of .git/index read */
#define BLOB_MAX (64u << 20)    /* a larger file is not hashed: counted as changed */
#define IGNORE_MAX (1u << 20)   /* bytes of one ignore file */
#define IGNORE_DIRS 4096        /* directories whose .gitignore is cached */

/* ---- SHA-1 (FIPS 180-4) ---- */

static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void sha1_block(uint32_t h[5], const uint8_t *p)
{
        uint32_t w[80];
        for (int i = 0; i < 16; i++)
                w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
                       p[4 * i + 3];
        for (int i = 16; i < 80; i++)
                w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int i = 0; i < 80; i++) {
                uint32_t f, k;
                if (i < 20)
                        f = (b & c) | (~b & d), k = 0x5a827999;
                else if (i < 40)
                        f = b ^ c ^ d, k = 0x6ed9eba1;
                else if (i < 60)
                        f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
                else
                        f = b ^ c ^ d, k = 0xca62c1d6;
                uint32_t t = rol(a, 5) + f + e + k + w[i];
                e = d, d = c, c = rol(b, 30), b = a, a = t;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

struct sha1_ctx {
        uint32_t h[5];
        uint8_t buf[64];
        size_t nbuf;
        uint64_t total;
};

static void sha1_init(struct sha1_ctx *c)
{
        *c = (struct sha1_ctx){.h = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0}};
}

static void sha1_update(struct sha1_ctx *c, const void *data, size_t len)
{
        const uint8_t *p = data;
        c->total += len;
        while (len) {
                size_t n = 64 - c->nbuf < len ? 64 - c->nbuf : len;
                memcpy(c->buf + c->nbuf, p, n);
                c->nbuf += n, p += n, len -= n;
                if (c->nbuf == 64) {
                        sha1_block(c->h, c->buf);
                        c->nbuf = 0;
                }
        }
}

static void sha1_final(struct sha1_ctx *c, uint8_t out[20])
{
        uint64_t bits = c->total * 8;
        uint8_t pad = 0x80, zero = 0, len[8];
        sha1_update(c, &pad, 1);
        while (c->nbuf != 56)
                sha1_update(c, &zero, 1);
        for (int i = 0; i < 8; i++)
                len[i] = (uint8_t)(bits >> (56 - 8 * i));
        sha1_update(c, len, 8);
        for (int i = 0; i < 5; i++)
                for (int j = 0; j < 4; j++)
                        out[4 * i + j] = (uint8_t)(c->h[i] >> (24 - 8 * j));
}

void sha1(const void *data, size_t len, uint8_t out[20])
{
        struct sha1_ctx c;
        sha1_init(&c);
        sha1_update(&c, data, len);
        sha1_final(&c, out);
}

/* ---- the index ---- */

struct entry {
        char *path;
        uint8_t oid[20];
        uint32_t mode, size, ino;
        uint32_t ctime_s, ctime_ns, mtime_s, mtime_ns;
};

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

struct gitwork {
        struct entry *e;
        size_t n;
        struct ignores exclude; /* .git/info/exclude, relative to the root */
        struct ignores *dirs;
        size_t ndirs;
};

static uint32_t be32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int cmp_entry(const void *a, const void *b)
{
        return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

static bool parse_index(struct gitwork *g, const uint8_t *d, size_t len)
{
        if (len < 12 + 20 || memcmp(d, "DIRC", 4))
                return false;
        uint32_t ver = be32(d + 4), count = be32(d + 8);
        if (ver < 2 || ver > 4 || count > len / 40)
                return false;
        size_t off = 12, end = len - 20; /* the trailing checksum */
        char *prev = xstrdup("");
        g->e = xcalloc(count ? count : 1, sizeof(*g->e));
        bool good = true;
        for (uint32_t k = 0; k < count && good; k++) {
                size_t start = off;
                if (off + 62 > end) {
                        good = false;
                        break;
                }
                const uint8_t *p = d + off;
                struct entry en = {.ctime_s = be32(p), .ctime_ns = be32(p + 4), .mtime_s = be32(p + 8),
                                   .mtime_ns = be32(p + 12), .ino = be32(p + 20), .mode = be32(p + 24),
                                   .size = be32(p + 36)};
                memcpy(en.oid, p + 40, 20);
                uint16_t flags = (uint16_t)(p[60] << 8 | p[61]);
                off += 62;
                if (ver >= 3 && (flags & 0x4000))
                        off += 2;
                char *name;
                if (ver == 4) {
                        size_t strip = 0;
                        uint8_t c;
                        int bytes = 0;
                        do {
                                if (off >= end || ++bytes > 9) {
                                        good = false;
                                        break;
                                }
                                c = d[off++];
                                strip = bytes > 1 ? ((strip + 1) << 7) | (c & 127) : c & 127;
                        } while (c & 128);
                        const uint8_t *z = good && off < end ? memchr(d + off, 0, end - off) : NULL;
                        if (!z || strip > strlen(prev)) {
                                good = false;
                                break;
                        }
                        size_t keep = strlen(prev) - strip, sl = (size_t)(z - (d + off));
                        name = xcalloc(keep + sl + 1, 1);
                        memcpy(name, prev, keep);
                        memcpy(name + keep, d + off, sl);
                        off += sl + 1;
                } else {
                        const uint8_t *z = off < end ? memchr(d + off, 0, end - off) : NULL;
                        if (!z) {
                                good = false;
                                break;
                        }
                        size_t sl = (size_t)(z - (d + off));
                        name = xcalloc(sl + 1, 1);
                        memcpy(name, d + off, sl);
                        off = start + ((off - start + sl + 8) & ~(size_t)7);
                }
                free(prev);
                prev = xstrdup(name);
                en.path = name;
                /* conflicted entries (a stage) and sparse directories restore nothing */
                if ((flags & 0x3000) || (en.mode & 0170000) == 0040000)
                        free(en.path);
                else
                        g->e[g->n++] = en;
        }
        free(prev);
        if (good) /* git keeps it sorted; a hostile index need not be */
                qsort(g->e, g->n, sizeof(*g->e), cmp_entry);
        return good;
}

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

/* The ignore patterns of directory dir ("" the root), read once. */
static struct ignores *dir_ignores(struct gitwork *g, int live_fd, const char *dir)
{
        for (size_t k = g->ndirs; k-- > 0;)
                if (!strcmp(g->dirs[k].dir, dir))
                        return &g->dirs[k];
        if (g->ndirs >= IGNORE_DIRS)
                return NULL;
        char *rel = *dir ? xasprintf("%s/.gitignore", dir) : xstrdup(".gitignore");
        char *text = NULL;
        size_t len;
        if (read_beneath(live_fd, rel, IGNORE_MAX, &text, &len) < 0)
                text = NULL;
        free(rel);
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
static bool ignored_here(struct gitwork *g, int live_fd, const char *path, bool is_dir)
{
        int v = ignores_match(&g->exclude, path, is_dir);
        /* each ancestor's .gitignore, the deepest last: it has the last word */
        char dir[4096];
        if (strlen(path) >= sizeof(dir))
                return false;
        for (const char *s = path;;) {
                snprintf(dir, sizeof(dir), "%.*s", (int)(s > path ? s - path - 1 : 0), path);
                struct ignores *ig = dir_ignores(g, live_fd, dir);
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

/* A path is ignored when it, or a directory above it, is (git does not look inside an
 * ignored directory, so nothing beneath it can be re-included). */
static bool ignored(struct gitwork *g, int live_fd, const char *path)
{
        char buf[4096];
        size_t n = strlen(path);
        if (n >= sizeof(buf))
                return false;
        for (size_t k = 0; k < n; k++)
                if (path[k] == '/') {
                        memcpy(buf, path, k);
                        buf[k] = 0;
                        if (ignored_here(g, live_fd, buf, true))
                                return true;
                }
        return ignored_here(g, live_fd, path, false);
}

/* ---- opening and judging ---- */

/* The repository's directory: .git, or where a .git file (a worktree's, a submodule's)
 * says it is ("gitdir: PATH", relative to the workspace unless absolute).  -1 when none. */
static int git_dir(int live_fd)
{
        struct stat st;
        if (lstat_beneath(live_fd, ".git", &st) < 0)
                return -1;
        if (S_ISDIR(st.st_mode))
                return open_beneath(live_fd, ".git", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        char *text = NULL;
        size_t len;
        if (!S_ISREG(st.st_mode) || read_beneath(live_fd, ".git", 4096, &text, &len) < 0)
                return -1;
        int fd = -1;
        if (!strncmp(text, "gitdir:", 7)) {
                char *p = text + 7 + strspn(text + 7, " \t");
                p[strcspn(p, "\r\n")] = 0;
                /* only ever read (index, exclude, config), as the user: no write goes there */
                if (*p)
                        fd = openat(live_fd, p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        free(text);
        return fd;
}

struct gitwork *gitwork_open(int live_fd)
{
        _cleanup_close_ int gd = live_fd < 0 ? -1 : git_dir(live_fd);
        if (gd < 0)
                return NULL;
        struct gitwork *g = xcalloc(1, sizeof(*g));
        /* An index that cannot be read as one (too big, damaged, a SHA-256 repository's other
         * layout) holds nothing: every file counts as untracked.  A missing one (git init,
         * nothing added yet) is exactly that. */
        char *cfg = NULL, *idx = NULL;
        size_t len;
        bool sha256 = read_beneath(gd, "config", IGNORE_MAX, &cfg, &len) >= 0 &&
                      strcasestr(cfg, "objectformat") && strcasestr(cfg, "sha256");
        free(cfg);
        if (!sha256 && read_beneath(gd, "index", INDEX_MAX, &idx, &len) >= 0 &&
            !parse_index(g, (const uint8_t *)idx, len)) {
                for (size_t k = 0; k < g->n; k++)
                        free(g->e[k].path);
                g->n = 0;
        }
        free(idx);
        char *ex = NULL;
        if (read_beneath(gd, "info/exclude", IGNORE_MAX, &ex, &len) < 0)
                ex = NULL;
        ignores_parse(&g->exclude, "", ex);
        free(ex);
        return g;
}

void gitwork_free(struct gitwork *g)
{
        if (!g)
                return;
        for (size_t k = 0; k < g->n; k++)
                free(g->e[k].path);
        free(g->e);
        for (size_t k = 0; k < g->ndirs; k++)
                ignores_free(&g->dirs[k]);
        free(g->dirs);
        ignores_free(&g->exclude);
        free(g);
}

static bool blob_matches(int live_fd, const char *path, const struct entry *en)
{
        char *data = NULL;
        size_t len;
        if (read_beneath(live_fd, path, BLOB_MAX, &data, &len) < 0)
                return false;
        char head[32];
        int hl = snprintf(head, sizeof(head), "blob %zu", len);
        struct sha1_ctx c;
        uint8_t oid[20];
        sha1_init(&c);
        sha1_update(&c, head, (size_t)hl + 1); /* with its NUL */
        sha1_update(&c, data, len);
        sha1_final(&c, oid);
        free(data);
        return !memcmp(oid, en->oid, 20);
}

enum git_state gitwork_state(struct gitwork *g, int live_fd, const char *path)
{
        struct entry key = {.path = (char *)path};
        const struct entry *en = g->n ? bsearch(&key, g->e, g->n, sizeof(*g->e), cmp_entry) : NULL;
        if (!en)
                return ignored(g, live_fd, path) ? GIT_IGNORED : GIT_UNTRACKED;
        if ((en->mode & 0170000) != 0100000)
                return GIT_CHANGED; /* a regular file where git has a link or submodule */
        struct stat st;
        if (lstat_beneath(live_fd, path, &st) < 0 || !S_ISREG(st.st_mode))
                return GIT_CHANGED;
        /* git's own shortcut: the stat data it recorded still holds (ctime cannot be set by
         * a program, so the content is the one git saw when it wrote the entry) */
        if ((uint32_t)st.st_size == en->size && (uint32_t)st.st_ino == en->ino &&
            (uint32_t)st.st_mtim.tv_sec == en->mtime_s && (uint32_t)st.st_mtim.tv_nsec == en->mtime_ns &&
            (uint32_t)st.st_ctim.tv_sec == en->ctime_s && (uint32_t)st.st_ctim.tv_nsec == en->ctime_ns)
                return GIT_CLEAN;
        return blob_matches(live_fd, path, en) ? GIT_CLEAN : GIT_CHANGED;
}
