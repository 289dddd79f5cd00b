/* The sandbox's view of the user's home, planned by the supervisor before the sandbox starts
 * (mounts.c then makes it): which paths are hidden (the credentials of tools and agents under
 * $HOME, the files that environment variables name as credentials, and the policy's own),
 * and which directories of a private cache root are mounted writable over the tools' cache
 * paths (~/.cache, ~/.npm, ...), with the variables that send a tool there when its own path
 * cannot be mounted.  The rest of $HOME stays read-only.  txbox doctor shows the same plan.
 *
 * The caches are txbox's own, never the host's: the host's tools trust what is in their
 * caches (a wheel pip built, a module go extracted, a crate cargo unpacked) and would run a
 * poisoned entry outside the sandbox; a private root can only mislead later sandboxed runs
 * (docs/SECURITY.md, "Writable caches").
 */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/str.h"
#include "base/strv.h"

/* Beneath $HOME: credentials of tools, clouds, agents, browsers, password stores, and the
 * histories that record what was typed (tokens included).  A directory is hidden whole:
 * a new credential file in it is hidden too. */
const char *const sandbox_secret_paths[] = {
        /* keys and tools' tokens */
        ".ssh",
        ".gnupg",
        ".aws",
        ".azure",
        ".config/gcloud",
        ".kube",
        ".docker",
        ".netrc",
        ".git-credentials",
        ".git-credential-cache",
        ".config/git/credentials",
        ".npmrc",
        ".yarnrc",
        ".yarnrc.yml",
        ".pypirc",
        ".config/gh",
        ".config/glab-cli",
        ".config/hub",
        ".cargo/credentials",
        ".cargo/credentials.toml",
        ".gem/credentials",
        ".m2/settings.xml",
        ".m2/settings-security.xml",
        ".gradle/gradle.properties",
        ".pgpass",
        ".my.cnf",
        ".mylogin.cnf",
        ".vault-token",
        ".terraform.d/credentials.tfrc.json",
        ".terraformrc",
        ".config/doctl",
        ".config/hcloud",
        ".oci",
        ".s3cfg",
        ".boto",
        ".config/rclone",
        ".databrickscfg",
        ".kaggle",
        ".huggingface",
        ".cache/huggingface/token",
        ".config/configstore",
        ".netlify",
        ".local/share/com.vercel.cli",
        ".fly",
        ".tsh",
        ".jfrog",
        ".cloudflared",
        ".snowsql",
        ".dbt",
        ".env",
        /* password stores and keyrings */
        ".password-store",
        ".local/share/keyrings",
        ".config/op",
        ".op",
        ".config/1Password",
        ".config/sops",
        /* coding agents: their tokens, API keys, settings with MCP servers' keys, transcripts */
        ".claude",
        ".claude.json",
        ".claude.json.backup",
        ".codex",
        ".gemini",
        ".qwen",
        ".aider",
        ".aider.conf.yml",
        ".cursor",
        ".config/Cursor",
        ".codeium",
        ".config/Windsurf",
        ".continue",
        ".openhands",
        ".config/goose",
        ".local/share/opencode",
        ".local/share/amp",
        ".config/amp",
        ".config/crush",
        ".local/share/crush",
        ".config/github-copilot",
        ".config/Code/User/globalStorage",
        ".vscode-server/data/User/globalStorage",
        /* browsers' and chat apps' profiles: cookies are sessions, saved passwords */
        ".mozilla",
        ".config/google-chrome",
        ".config/chromium",
        ".config/BraveSoftware",
        ".config/microsoft-edge",
        ".config/vivaldi",
        ".config/opera",
        ".config/Slack",
        ".config/discord",
        /* histories */
        ".bash_history",
        ".zsh_history",
        ".history",
        ".local/share/fish/fish_history",
        ".python_history",
        ".node_repl_history",
        ".psql_history",
        ".mysql_history",
        ".sqlite_history",
        ".lesshst",
        ".viminfo",
        NULL,
};

/* Variables that name a credential file or directory elsewhere (KUBECONFIG: a list). */
const char *const sandbox_secret_envs[] = {
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GNUPGHOME",
        "PASSWORD_STORE_DIR",
        "AWS_SHARED_CREDENTIALS_FILE",
        "AWS_CONFIG_FILE",
        "AZURE_CONFIG_DIR",
        "CLOUDSDK_CONFIG",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "KUBECONFIG",
        "DOCKER_CONFIG",
        "GH_CONFIG_DIR",
        "NPM_CONFIG_USERCONFIG",
        "npm_config_userconfig",
        NULL,
};

/* The tools' cache paths under $HOME; env: the variable that sends the tool to
 * ~/.cache/SUB instead when its own path cannot be mounted (its parent missing). */
static const struct {
        const char *rel, *env, *sub;
} cache_defaults[] = {
        {".cache", NULL, NULL}, /* pip, go-build, yarn 1, deno, bazel, uv, poetry, playwright, ... */
        {".npm", "npm_config_cache", "npm"},
        {".cargo/registry", "CARGO_HOME", "cargo"},
        {".cargo/git", "CARGO_HOME", "cargo"},
        {"go/pkg/mod", "GOMODCACHE", "go-mod"},
        {".m2/repository", NULL, NULL},
        {".gradle/caches", "GRADLE_USER_HOME", "gradle"},
        {".gradle/wrapper", "GRADLE_USER_HOME", "gradle"},
        {".local/share/pnpm/store", "npm_config_store_dir", "pnpm-store"},
        {".yarn/berry/cache", "YARN_GLOBAL_FOLDER", "yarn-berry"},
        {".bun/install/cache", "BUN_INSTALL_CACHE_DIR", "bun-install"},
        {".nuget/packages", "NUGET_PACKAGES", "nuget-packages"},
        {".ivy2/cache", NULL, NULL},
        {".conda/pkgs", "CONDA_PKGS_DIRS", "conda-pkgs"},
};

const char *sandbox_default_cache(size_t i)
{
        return i < ARRAY_SIZE(cache_defaults) ? cache_defaults[i].rel : NULL;
}

/* path lexically normal: absolute, no "." or empty components, no trailing slash; NULL
 * when it is relative or has a "..". */
static char *normal_path(const char *path)
{
        if (!path || path[0] != '/' || strlen(path) >= PATH_MAX)
                return NULL;
        char *out = xmalloc(strlen(path) + 2);
        size_t len = 0;
        for (const char *c = path; *c;) {
                while (*c == '/')
                        c++;
                size_t n = strcspn(c, "/");
                if (!n)
                        break;
                if (n == 2 && c[0] == '.' && c[1] == '.') {
                        free(out);
                        return NULL;
                }
                if (!(n == 1 && c[0] == '.')) {
                        out[len++] = '/';
                        memcpy(out + len, c, n);
                        len += n;
                }
                c += n;
        }
        if (!len)
                out[len++] = '/';
        out[len] = '\0';
        return out;
}

static bool listed(const struct strvec *v, const char *p)
{
        for (size_t i = 0; i < v->n; i++)
                if (!strcmp(v->v[i], p))
                        return true;
        return false;
}

/* One hidden path, unless it is the root or holds the workspace (hiding it would hide the
 * workspace: the policy's mistake, not a secret), or is listed already (unique: the
 * built-in list, whose entries differ). */
static void add_hidden(struct strvec *out, const char *path, const char *workspace, bool unique)
{
        char *p = normal_path(path);
        if (!p || !strcmp(p, "/") || (workspace && path_is_within(workspace, p)) ||
            (!unique && listed(out, p))) {
                free(p);
                return;
        }
        strvec_push(out, p);
}

/* Under $XDG_CONFIG_HOME or $XDG_DATA_HOME, where set elsewhere, the tools keep what they
 * would keep under ~/.config or ~/.local/share. */
static void add_xdg(struct strvec *out, const char *prefix, const char *var, const char *home,
                    const char *workspace)
{
        const char *x = getenv(var);
        size_t pl = strlen(prefix);
        char def[PATH_MAX], path[PATH_MAX];

        snprintf(def, sizeof(def), "%s/%s", home ? home : "", prefix);
        if (!x || x[0] != '/' || (home && !strcmp(x, def)))
                return;
        for (size_t i = 0; sandbox_secret_paths[i]; i++) {
                const char *rel = sandbox_secret_paths[i];
                if (strncmp(rel, prefix, pl) || rel[pl] != '/')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", x, rel + pl + 1);
                add_hidden(out, path, workspace, false);
        }
}

void sandbox_hidden_paths(const char *home, const char *workspace, char *const *extra, struct strvec *out)
{
        char path[PATH_MAX];

        for (size_t i = 0; home && home[0] == '/' && sandbox_secret_paths[i]; i++) {
                snprintf(path, sizeof(path), "%s/%s", home, sandbox_secret_paths[i]);
                add_hidden(out, path, workspace, true);
        }
        add_xdg(out, ".config", "XDG_CONFIG_HOME", home, workspace);
        add_xdg(out, ".local/share", "XDG_DATA_HOME", home, workspace);
        for (size_t i = 0; sandbox_secret_envs[i]; i++) {
                const char *v = getenv(sandbox_secret_envs[i]);
                for (const char *c = v; c && *c;) {
                        size_t n = strcspn(c, ":");
                        if (n && n < sizeof(path)) {
                                snprintf(path, sizeof(path), "%.*s", (int)n, c);
                                add_hidden(out, path, workspace, false);
                        }
                        c += n + (c[n] == ':');
                }
        }
        for (size_t i = 0; extra && extra[i]; i++)
                add_hidden(out, extra[i], workspace, false);
}

/* The names in directory dir (NULL when it cannot be read), sorted, for many lookups. */
struct names {
        char *path;
        char **v;
        size_t n;
        bool loaded, readable;
};

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_load(struct names *d)
{
        DIR *dir = opendir(d->path);
        struct dirent *e;
        size_t cap = 0;

        d->loaded = true;
        d->readable = dir || errno == ENOENT || errno == ENOTDIR; /* missing: holds nothing */
        if (!dir)
                return;
        while ((e = readdir(dir))) {
                if (d->n == cap)
                        d->v = xrealloc(d->v, (cap = cap ? 2 * cap : 64) * sizeof(char *));
                d->v[d->n++] = xstrdup(e->d_name);
        }
        closedir(dir);
        if (d->n)
                qsort(d->v, d->n, sizeof(char *), cmp_str);
}

/* Is name in d?  An unreadable directory may hold anything: yes. */
static bool names_has(struct names *d, const char *name, size_t len)
{
        char key[NAME_MAX + 1];
        if (!d->loaded)
                names_load(d);
        if (!d->readable || len > NAME_MAX)
                return true;
        memcpy(key, name, len);
        key[len] = '\0';
        const char *k = key;
        return d->n && bsearch(&k, d->v, d->n, sizeof(char *), cmp_str) != NULL;
}

static void names_free(struct names *d)
{
        for (size_t i = 0; i < d->n; i++)
                free(d->v[i]);
        free(d->v);
        free(d->path);
}

void sandbox_hidden_present(struct strvec *hidden, const char *home)
{
        /* Most hidden paths are a name or two below the home, and most are missing: the home's
         * directory and those of its .config and .local/share are read once each, instead
         * of looking up a hundred paths one by one. */
        struct names dirs[3] = {{.path = home ? xstrdup(home) : NULL},
                                {.path = home ? xasprintf("%s/.config", home) : NULL},
                                {.path = home ? xasprintf("%s/.local/share", home) : NULL}};
        size_t k = 0, hl = home ? strlen(home) : 0;
        struct stat st;

        for (size_t i = 0; i < hidden->n; i++) {
                char *p = hidden->v[i];
                bool there = true;
                if (home && hl > 1 && !strncmp(p, home, hl) && p[hl] == '/') {
                        const char *rel = p + hl + 1;
                        size_t first = strcspn(rel, "/");
                        there = names_has(&dirs[0], rel, first);
                        for (int d = 1; there && rel[first] && d < 3; d++) {
                                const char *sub = dirs[d].path + hl + 1;
                                size_t sl = strlen(sub);
                                if (!strncmp(rel, sub, sl) && rel[sl] == '/') {
                                        there = names_has(&dirs[d], rel + sl + 1, strcspn(rel + sl + 1, "/"));
                                        if (!strchr(rel + sl + 1, '/'))
                                                goto decided; /* a name of that directory: listed or not */
                                }
                        }
                        if (there && !rel[first])
                                goto decided; /* a name of the home's */
                }
                there = there && lstat(p, &st) == 0;
        decided:
                if (there)
                        hidden->v[k++] = p;
                else
                        free(p);
        }
        hidden->n = k;
        if (hidden->v)
                hidden->v[k] = NULL;
        for (int d = 0; d < 3; d++)
                names_free(&dirs[d]);
}

/* ---- caches ---- */

void sandbox_caches_free(struct sandbox_caches *c)
{
        for (size_t i = 0; c && i < c->n; i++) {
                free(c->v[i].rel);
                free(c->v[i].target);
                free(c->v[i].source);
                free(c->v[i].env);
        }
        if (c) {
                free(c->v);
                free(c->root);
                free(c->off);
                free(c->xdg);
                memset(c, 0, sizeof(*c));
        }
}

static bool overlaps(const char *a, const char *b)
{
        return a && b && (path_is_within(a, b) || path_is_within(b, a));
}

/* Where the sandbox has a file system of its own instead of the host's. */
static bool replaced_in_sandbox(const char *p)
{
        return path_is_within(p, "/tmp") || path_is_within(p, "/dev") || path_is_within(p, "/proc");
}

/* rel made plain (no "~/", "." or empty components); NULL when it has "..". */
static char *plain_rel(const char *rel)
{
        char buf[PATH_MAX];
        if (!strncmp(rel, "~/", 2))
                rel += 2;
        snprintf(buf, sizeof(buf), "/%s", rel);
        char *n = normal_path(buf);
        if (!n || !strcmp(n, "/")) {
                free(n);
                return NULL;
        }
        memmove(n, n + 1, strlen(n));
        return n;
}

/* The cache directory root/rel, made when missing one component at a time beneath root,
 * never through a symlink (the sandbox writes in its siblings).  Usually there already:
 * one look. */
static int make_source(int rootfd, const char *rel)
{
        const char *base;
        int fd;
        /* There already, or only the last component missing: one call.  (init opens it
         * beneath the root with no link on the way, whatever this finds.) */
        if (mkdirat(rootfd, rel, 0700) == 0 || errno == EEXIST)
                return 0;
        _cleanup_close_ int dir = make_parent_beneath(rootfd, rel, 0700, &base);
        if (dir < 0)
                return dir;
        if (mkdirat(dir, base, 0700) < 0 && errno != EEXIST)
                return -errno;
        fd = open_beneath(rootfd, rel, O_PATH | O_DIRECTORY, 0);
        if (fd >= 0)
                close(fd);
        return fd < 0 ? fd : 0;
}

/* Where the home's cache path rel is for the host, every link followed: a directory there
 * (*missing false), or where one can be made (*missing true): only its last component is
 * missing, under a parent the user has (a tool's own directory, or the home for ~/.cache,
 * which the XDG rules define).  NULL with *why when it cannot be had.  home_real: the home
 * with its links followed; homefd: it, opened. */
static char *cache_target(const char *home_real, int homefd, const char *rel, bool *missing, const char **why)
{
        char path[PATH_MAX], real[PATH_MAX];
        struct stat st;

        *missing = false;
        /* Most paths have no link below the home: one look, no walk of every component. */
        int fd = open_beneath(homefd, rel, O_PATH | O_DIRECTORY, 0);
        if (fd >= 0) {
                close(fd);
                return xasprintf("%s/%s", home_real, rel);
        }
        if (fd == -ENOTDIR) {
                *why = "not a directory";
                return NULL;
        }
        if (fd == -ENOENT) {
                /* Missing, and no link on the way: is its directory there? */
                const char *slash = strrchr(rel, '/');
                if (slash && (size_t)(slash - rel) < sizeof(path)) {
                        snprintf(path, sizeof(path), "%.*s", (int)(slash - rel), rel);
                        fd = open_beneath(homefd, path, O_PATH | O_DIRECTORY, 0);
                        if (fd >= 0)
                                close(fd);
                        else if (fd == -ENOENT || fd == -ENOTDIR) {
                                *why = "its directory does not exist here";
                                return NULL;
                        }
                }
        }
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", home_real, rel) >= sizeof(path)) {
                *why = "path too long";
                return NULL;
        }
        if (realpath(path, real)) {
                if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
                        *why = "not a directory";
                        return NULL;
                }
                return xstrdup(real);
        }
        char *slash = strrchr(path, '/');
        *slash = '\0';
        bool parent = realpath(path, real) && stat(real, &st) == 0 && S_ISDIR(st.st_mode);
        if (!parent || (!strcmp(path, home_real) && strcmp(rel, ".cache"))) {
                *why = parent ? "does not exist here" : "its directory does not exist here";
                return NULL;
        }
        size_t l = strlen(real);
        snprintf(real + l, sizeof(real) - l, "/%s", slash + 1);
        *missing = true;
        return xstrdup(real);
}

/* Make the missing last component of target, found by cache_target, and check that it is
 * what it was meant to be. */
static int make_target(const char *target)
{
        char real[PATH_MAX];
        struct stat st;

        if (mkdir(target, 0700) < 0 && errno != EEXIST)
                return -errno;
        if (!realpath(target, real) || strcmp(real, target) || stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
                return -ENOTDIR;
        return 0;
}

/* Why root cannot hold the caches of a sandbox of workspace, or NULL. */
static const char *root_problem(const char *root, const char *workspace, const char *state_mask,
                                char *const *hidden)
{
        if (!root || root[0] != '/')
                return "no cache directory: neither XDG_CACHE_HOME nor HOME is set";
        if (overlaps(root, workspace))
                return "the cache directory and the workspace overlap";
        if (replaced_in_sandbox(root))
                return "the cache directory lies in /tmp, /dev or /proc, which the sandbox has its own of";
        if (overlaps(root, state_mask))
                return "the cache directory and the state dir overlap";
        for (size_t i = 0; hidden && hidden[i]; i++)
                if (path_is_within(root, hidden[i]))
                        return "the cache directory lies in a hidden path";
        return NULL;
}

/* The cache root, made when missing, ours and closed to everyone else: what sandboxes left
 * there (set-user-ID files of root's sandboxes among them: nosuid holds only in the
 * sandbox) must be out of other users' reach. */
static int open_root(const char *root, int *fd)
{
        struct stat st;
        int r;

        *fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (*fd < 0 && errno == ENOENT && (r = mkdir_p(root, 0700)) < 0)
                return r;
        if (*fd < 0 && (*fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                return -errno;
        if (fstat(*fd, &st) < 0)
                return -errno;
        if (st.st_uid != geteuid())
                return -EPERM;
        if ((st.st_mode & 077) && fchmod(*fd, 0700) < 0)
                return -errno;
        return 0;
}

static size_t default_index(const char *rel)
{
        for (size_t i = 0; i < ARRAY_SIZE(cache_defaults); i++)
                if (!strcmp(rel, cache_defaults[i].rel))
                        return i;
        return SIZE_MAX;
}

/* Drop paths inside another listed one: the outer mount covers them, and a cache inside a
 * cache could be replaced by a link from the sandbox. */
static bool nested(char **rels, size_t n, size_t k)
{
        for (size_t i = 0; i < n; i++)
                if (i != k && rels[i] && path_is_within(rels[k], rels[i]) && (strcmp(rels[k], rels[i]) || i < k))
                        return true;
        return false;
}

static void plan_one(struct sandbox_caches *c, struct sandbox_cache *e, int rootfd, const char *home_real,
                     int homefd, const char *workspace, const char *state_mask, char *const *hidden,
                     bool create)
{
        const char *why = NULL;
        bool missing;
        e->target = cache_target(home_real, homefd, e->rel, &missing, &why);
        if (!e->target) {
                e->why = why;
                return;
        }
        if (overlaps(e->target, workspace))
                e->why = "overlaps the workspace (its own copy-on-write view stays)";
        else if (overlaps(e->target, state_mask))
                e->why = "overlaps txbox's state dir";
        else if (replaced_in_sandbox(e->target) || !strcmp(e->target, "/"))
                e->why = "lies where the sandbox has its own file system (/tmp, /dev, /proc)";
        for (size_t i = 0; !e->why && hidden && hidden[i]; i++)
                if (path_is_within(e->target, hidden[i]))
                        e->why = "lies in a hidden path";
        /* Made only once it is known to be harmless where it is. */
        if (!e->why && create && missing && make_target(e->target) < 0)
                e->why = "cannot be made here";
        if (!e->why && create && rootfd >= 0 && make_source(rootfd, e->rel) < 0)
                e->why = "its directory in the cache root cannot be made";
        if (e->why) {
                free(e->target);
                e->target = NULL;
                return;
        }
        e->source = xasprintf("%s/%s", c->root, e->rel);
        e->mounted = true;
}

/* Send a tool whose cache path could not be mounted to ~/.cache/SUB by its variable, when
 * ~/.cache is mounted and the variable is not set already. */
static void plan_redirects(struct sandbox_caches *c, const char *home)
{
        bool cache_mounted = false;
        for (size_t i = 0; i < c->n; i++)
                cache_mounted |= c->v[i].mounted && !strcmp(c->v[i].rel, ".cache");
        for (size_t i = 0; cache_mounted && i < c->n; i++) {
                struct sandbox_cache *e = &c->v[i];
                size_t d = default_index(e->rel);
                if (e->mounted || d == SIZE_MAX || !cache_defaults[d].env || getenv(cache_defaults[d].env))
                        continue;
                bool dup = false;
                for (size_t k = 0; k < i; k++)
                        dup |= c->v[k].env &&
                               !strncmp(c->v[k].env, cache_defaults[d].env, strlen(cache_defaults[d].env)) &&
                               c->v[k].env[strlen(cache_defaults[d].env)] == '=';
                e->env = dup ? NULL
                             : xasprintf("%s=%s/.cache/%s", cache_defaults[d].env, home, cache_defaults[d].sub);
                e->redirected = true;
        }
}

int sandbox_caches_plan(const char *root, char *const *rels, const char *home, const char *workspace,
                        const char *state_mask, char *const *hidden, bool create, struct sandbox_caches *out)
{
        _cleanup_close_ int rootfd = -1, homefd = -1;
        int r;
        size_t n = rels ? strv_len(rels) : ARRAY_SIZE(cache_defaults);
        char home_real[PATH_MAX];

        memset(out, 0, sizeof(*out));
        out->root = root ? xstrdup(root) : NULL;
        if (!home || home[0] != '/') {
                out->off = xstrdup("no home directory");
                return 0;
        }
        if (!realpath(home, home_real) || (homefd = open(home_real, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
                out->off = xasprintf("the home directory '%s' cannot be opened: %s", home, strerror(errno));
                return 0;
        }
        const char *problem = root_problem(root, workspace, state_mask, hidden);
        if (problem) {
                out->off = xstrdup(problem);
                return 0;
        }
        if (create && (r = open_root(root, &rootfd)) < 0) {
                out->off = r == -EPERM ? xasprintf("the cache directory '%s' belongs to another user", root)
                                       : xasprintf("the cache directory '%s' cannot be used: %s", root,
                                                   strerror(-r));
                return 0;
        }
        char **plain = xcalloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                plain[i] = plain_rel(rels ? rels[i] : cache_defaults[i].rel);
        out->v = xcalloc(n ? n : 1, sizeof(*out->v));
        for (size_t i = 0; i < n; i++) {
                if (!plain[i] || nested(plain, n, i))
                        continue;
                struct sandbox_cache *e = &out->v[out->n++];
                e->rel = xstrdup(plain[i]);
                plan_one(out, e, rootfd, home_real, homefd, workspace, state_mask, hidden, create);
        }
        for (size_t i = 0; i < n; i++)
                free(plain[i]);
        free(plain);
        plan_redirects(out, home);
        return 0;
}

/* XDG_CACHE_HOME names where the tools keep their caches: with ~/.cache mounted, one that
 * points anywhere the sandbox cannot write would leave them read-only. */
static bool xdg_cache_elsewhere(const char *e, const char *home, const char *workspace)
{
        const char *v = e + strlen("XDG_CACHE_HOME=");
        char def[PATH_MAX];
        snprintf(def, sizeof(def), "%s/.cache", home);
        return v[0] == '/' && strcmp(v, def) && !path_is_within(v, workspace) && !path_is_within(v, "/tmp") &&
               !path_is_within(v, "/dev/shm");
}

void sandbox_caches_env(struct sandbox_caches *c, const char *home, const char *workspace, char ***envp)
{
        size_t n = 0, k = 0, add = 0;
        bool cache_mounted = false;

        for (size_t i = 0; i < c->n; i++) {
                add += c->v[i].env != NULL;
                cache_mounted |= c->v[i].mounted && !strcmp(c->v[i].rel, ".cache");
        }
        while ((*envp)[n])
                n++;
        char **v = xcalloc(n + add + 2, sizeof(char *));
        for (size_t i = 0; i < n; i++) {
                const char *e = (*envp)[i];
                if (cache_mounted && !strncmp(e, "XDG_CACHE_HOME=", 15) &&
                    xdg_cache_elsewhere(e, home, workspace)) {
                        free(c->xdg);
                        c->xdg = xasprintf("XDG_CACHE_HOME=%s/.cache", home);
                        v[k++] = c->xdg;
                        continue;
                }
                v[k++] = (*envp)[i];
        }
        for (size_t i = 0; i < c->n; i++)
                if (c->v[i].env)
                        v[k++] = c->v[i].env;
        free(*envp);
        *envp = v;
}
