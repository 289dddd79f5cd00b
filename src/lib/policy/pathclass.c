/* Path classes: where a path argument or redirection target points (the root, system
 * files, the home directory, the workspace, secrets, files that decide what runs later,
 * devices, .git, temporary space) after resolving it lexically against the command's cwd,
 * the workspace and the home directory; also for globs and paths that start unknown.
 * Apart from match.c because it is the knowledge of the file system's places, not of
 * rules: match.c's rules ask it through pathclass.h. */
#define _GNU_SOURCE
#include "policy/pathclass.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "base/macros.h"
#include "base/mem.h"
#include "base/str.h"

/* ---- paths ---- */

/* Components of path without "." and "..", as an absolute path. */
static void normalise(char *p)
{
        char *out = p, *s = p;
        while (*s) {
                while (*s == '/')
                        s++;
                char *e = strchrnul(s, '/');
                size_t l = (size_t)(e - s);
                if (l == 1 && s[0] == '.')
                        ;
                else if (l == 2 && s[0] == '.' && s[1] == '.') {
                        while (out > p && *--out != '/')
                                ;
                } else if (l) {
                        *out++ = '/';
                        memmove(out, s, l);
                        out += l;
                }
                s = e;
        }
        if (out == p)
                *out++ = '/';
        *out = 0;
}

char *lexical_path(const char *p)
{
        char *r = xstrdup(p);
        normalise(r);
        return r;
}

static bool all_glob(const char *c)
{
        return !strcmp(c, "*") || !strcmp(c, ".*") || !strcmp(c, "**") || !strcmp(c, "*.*") ||
               !strcmp(c, "{*,.*}") || !strcmp(c, ".[!.]*") || !strcmp(c, "*/");
}

/* Resolve arg to an absolute normalised path; *all when it stands for everything in that
 * directory (dir/STAR or dir/$unknown).  NULL when even the directory cannot be known. */
char *pathclass_resolve(const char *arg, const struct policy_ctx *ctx, bool *all)
{
        *all = false;
        if (!*arg || arg[0] == UNK)
                return NULL;
        const char *base = ctx->cwd ? ctx->cwd : ctx->workspace;
        char *p;
        if (arg[0] == '/')
                p = xstrdup(arg);
        else if (base && has_unk(base)) /* after a cd that cannot be known */
                return NULL;
        else if (base)
                p = xasprintf("%s/%s", base, arg);
        else
                return NULL;
        /* dir/$x is some unknown path beneath dir (not all of it: dir/$x/.. is rare, and
         * an empty $x is caught where the path starts unknown, "$x/") */
        char *u = strchr(p, UNK);
        /* dir/$x/..: where that leads cannot be known */
        for (const char *c = u; c && (c = strstr(c, "/..")); c += 3)
                if (c[3] == '/' || !c[3]) {
                        free(p);
                        return NULL;
                }
        if (u) {
                while (u > p && *u != '/')
                        u--;
                u[0] = '/';
                u[1] = UNK;
                u[2] = 0;
        }
        char *slash = strrchr(p, '/');
        if (slash && all_glob(slash + 1)) {
                *slash = 0;
                *all = true;
        }
        normalise(p);
        return p;
}

char *resolve_path(const char *arg, const struct policy_ctx *ctx)
{
        bool all;
        return pathclass_resolve(arg, ctx, &all);
}

static bool under(const char *p, const char *dir) { return dir && path_is_within(p, dir); }
bool pathclass_strictly_under(const char *p, const char *dir)
{
        return dir && path_is_within(p, dir) && strcmp(p, dir);
}

static bool name_in(const char *name, const char *const *list)
{
        for (; *list; list++)
                if (!fnmatch(*list, name, FNM_PERIOD * 0))
                        return true;
        return false;
}

/* Relative to a home directory (the user's, root's or another user's). */
static const char *const home_secrets[] = {
        ".ssh/id_*", ".ssh/*_key", ".ssh/*.pem", ".ssh/*.key", ".ssh", ".gnupg", ".gnupg/*", ".aws", ".aws/*",
        ".azure", ".azure/*", ".config/gcloud", ".config/gcloud/*", ".kube", ".kube/*", ".docker/config.json",
        ".docker/*.json", ".password-store", ".password-store/*", ".netrc", ".git-credentials",
        ".config/git/credentials", ".pgpass", ".pypirc", ".vault-token", ".cargo/credentials*",
        ".config/gh/hosts.yml", ".config/gh", ".config/glab-cli", ".config/glab-cli/*", ".config/hub",
        ".local/share/keyrings*", ".npmrc", ".yarnrc", ".yarnrc.yml", ".config/doctl", ".config/doctl/*",
        ".terraform.d/credentials*", ".terraformrc", ".terraform.d", ".config/helm/repositories.yaml",
        ".my.cnf", ".mylogin.cnf", ".s3cfg", ".boto", ".config/rclone", ".config/rclone/*", ".oci", ".oci/*",
        ".gem/credentials", ".m2/settings*.xml", ".gradle/gradle.properties", ".config/op", ".config/op/*",
        ".op", ".config/sops", ".config/sops/*", ".age", ".config/age", ".fly", ".fly/*", ".config/hcloud",
        ".config/hcloud/*", ".config/linode-cli", ".config/heroku", ".netlify", ".config/netlify", ".vercel",
        ".config/vercel", ".wrangler", ".config/configstore", ".config/configstore/*", ".ibmcloud",
        ".bluemix", ".config/cloudflared", ".cloudflared", ".databrickscfg", ".snowsql", ".snowflake",
        ".dbt/profiles.yml", ".config/gspread", ".kaggle", ".kaggle/*", ".huggingface/token",
        ".cache/huggingface/token", ".config/github-copilot", ".config/Code/User/globalStorage",
        ".mozilla/firefox/*/logins.json", ".mozilla/firefox/*/key4.db", ".config/google-chrome/*/Login Data",
        ".config/chromium/*/Login Data", ".bash_history", ".zsh_history", ".psql_history", ".mysql_history",
        ".python_history", ".node_repl_history", ".lesshst", ".viminfo", ".history",
        ".local/share/fish/fish_history", ".ssh/known_hosts_secret", ".config/1Password",
        ".git-credential-cache", ".tsh", ".config/atlassian", ".jfrog", ".docker", NULL};

/* Files in a home directory that programs read to decide what to run: writing one changes
 * what the user's tools do after this task (shell rc files, git, ssh, editors, ...). */
static const char *const home_persist[] = {
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
        ".zshenv", ".zlogin", ".kshrc", ".cshrc", ".tcshrc", ".xprofile", ".xinitrc", ".xsessionrc",
        ".ssh/authorized_keys*", ".ssh/rc", ".ssh/config", ".config/fish/config.fish", ".config/autostart*",
        ".config/systemd*", ".local/share/systemd*", NULL};

/* Caches and stores in a home directory that build tools fill on their own. */
static const char *const home_caches[] = {
        ".cache", ".cache/*", ".npm", ".npm/*", ".cargo/registry*", ".cargo/git*", ".rustup*",
        ".m2/repository*", ".gradle/caches*", ".gradle/wrapper*", ".pyenv/versions*", ".nvm/versions*",
        ".local/lib*", ".local/share/virtualenvs*", ".virtualenvs*", ".bun/install*", ".deno*",
        ".yarn/cache*", ".pnpm-store*", ".gem/*", ".local/share/pnpm*", ".hex*", ".mix*", ".stack*",
        ".cabal/packages*", ".ivy2*", ".sbt*", ".julia/packages*", ".platformio*", ".vscode-server*",
        ".local/state*", NULL};

static unsigned home_file_class(const char *rel)
{
        unsigned c = 0;
        if (name_in(rel, home_secrets) && fnmatch("*.pub", rel, 0) && fnmatch(".ssh/known_hosts*", rel, 0) &&
            fnmatch(".ssh/config", rel, 0))
                c |= PC_SECRET;
        if (name_in(rel, home_persist))
                c |= PC_PERSIST;
        /* every other dot file or directory of a home holds some program's settings */
        else if (rel[0] == '.' && rel[1] && strcmp(rel, "..") && !name_in(rel, home_caches))
                c |= PC_PERSIST;
        return c;
}

static unsigned system_file_class(const char *p)
{
        /* /etc/passwd holds no secret (every program reads it); /etc/shadow does */
        static const char *const secret[] = {"/etc/shadow*", "/etc/gshadow*", "/etc/sudoers*",
                                             "/etc/security/opasswd",
                                             "/etc/ssh/ssh_host_*_key", "/etc/ssl/private*",
                                             "/etc/pki/*/private*", "/var/lib/pam/*", "/etc/krb5.keytab",
                                             "/etc/machine-id", "/var/log/btmp*", "/var/log/auth.log*",
                                             "/var/log/secure*", "/proc/*/environ", "/proc/kcore",
                                             "/etc/NetworkManager/system-connections*",
                                             "/etc/wpa_supplicant*", "/etc/docker/daemon.json",
                                             "/etc/kubernetes/admin.conf", "/etc/rancher*",
                                             "/var/lib/docker/*", "/etc/letsencrypt/*", NULL};
        static const char *const persist[] = {"/etc/profile",  "/etc/profile.d*",     "/etc/bash.bashrc",
                                              "/etc/zsh*",     "/etc/environment",    "/etc/ld.so.preload",
                                              "/etc/rc.local", "/etc/cron*",          "/var/spool/cron*",
                                              "/etc/systemd*", "/lib/systemd*",       "/usr/lib/systemd*",
                                              "/etc/init.d*",  "/etc/sudoers*",       "/etc/passwd",
                                              "/etc/shadow",   "/etc/update-motd.d*", NULL};
        unsigned c = 0;
        if (name_in(p, secret))
                c |= PC_SECRET;
        if (name_in(p, persist))
                c |= PC_PERSIST;
        return c;
}

static unsigned dev_class(const char *p)
{
        static const char *const benign[] = {"/dev/null",    "/dev/zero",  "/dev/full",   "/dev/random",
                                             "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr",
                                             "/dev/tty",     "/dev/ptmx",  "/dev/fd/*",   "/dev/pts/*",
                                             "/dev/tcp/*",   "/dev/udp/*", NULL};
        static const char *const devices[] = {"/dev/sd*",   "/dev/hd*",      "/dev/vd*",    "/dev/xvd*",
                                              "/dev/nvme*", "/dev/mmcblk*",  "/dev/md*",    "/dev/dm-*",
                                              "/dev/loop*", "/dev/mapper/*", "/dev/disk/*", "/dev/mem",
                                              "/dev/kmem",  "/dev/port",     "/dev/sg*",    NULL};
        if (name_in(p, benign))
                return 0;
        if (name_in(p, devices))
                return PC_DEVICE | PC_SYSTEM;
        return PC_SYSTEM;
}

static bool has_component(const char *p, const char *name)
{
        size_t l = strlen(name);
        for (const char *s = p; (s = strstr(s, name)); s += l)
                if (s > p && s[-1] == '/' && (s[l] == '/' || !s[l]))
                        return true;
        return false;
}

static unsigned env_file_class(const char *p)
{
        const char *b = base_name(p);
        size_t l = strlen(b);
        bool env = !strcmp(b, ".env") || !strncmp(b, ".env.", 5) || !strcmp(b, ".envrc") ||
                !strncmp(b, ".env-", 5) ||
                   (l > 4 && !strcmp(b + l - 4, ".env") && b[0] != '.') || !strcmp(b, ".secrets") ||
                   !strcmp(b, "secrets.yml") || !strcmp(b, "secrets.yaml") || !strcmp(b, "secrets.json") ||
                   !strcmp(b, "credentials.json") || !strcmp(b, "service-account.json") ||
                   !strcmp(b, ".htpasswd") ||
                   !strcmp(b, "id_rsa") || !strcmp(b, "id_ed25519") || !strcmp(b, "id_ecdsa") ||
                   !strcmp(b, "id_dsa");
        if (!env)
                return 0;
        static const char *const samples[] = {"*.example", "*.sample",   "*.template",
                                              "*.dist",    "*.defaults", NULL};
        return name_in(b, samples) ? 0 : PC_SECRET;
}

/* Paths a glob could name that hold secrets: `cat .e*`, `cat ~/.ssh/id*`, `cat /etc/sha*`. */
static unsigned glob_class(const char *p, const struct policy_ctx *ctx)
{
        static const char *const home_ex[] = {".ssh/id_rsa", ".ssh/id_ed25519", ".ssh/id_ecdsa",
                                              ".aws/credentials",
                                              ".aws/config", ".netrc", ".git-credentials", ".pgpass",
                                              ".pypirc", ".npmrc", ".kube/config", ".docker/config.json",
                                              ".gnupg/private-keys-v1.d", ".config/gcloud/credentials.db",
                                              ".config/gh/hosts.yml", ".vault-token", ".bash_history",
                                              ".my.cnf", ".s3cfg", NULL};
        static const char *const sys_ex[] = {"/etc/shadow", "/etc/gshadow", "/etc/sudoers",
                                             "/etc/ssh/ssh_host_rsa_key",
                                             "/etc/ssh/ssh_host_ed25519_key", "/etc/security/opasswd", NULL};
        static const char *const env_ex[] = {".env",   ".env.local",  ".env.production",
                                             ".envrc", "secrets.env", NULL};
        if (!strpbrk(p, "*?["))
                return 0;
        const int fl = FNM_PATHNAME | FNM_PERIOD;
        for (const char *const *e = sys_ex; *e; e++)
                if (!fnmatch(p, *e, fl))
                        return PC_SECRET;
        const char *homes[3] = {ctx->home, "/root", NULL};
        for (size_t h = 0; homes[h]; h++)
                for (const char *const *e = home_ex; *e; e++) {
                        char *ex = xasprintf("%s/%s", homes[h], *e);
                        bool hit = !fnmatch(p, ex, fl);
                        free(ex);
                        if (hit)
                                return PC_SECRET;
                }
        /* an .env in the glob's own directory */
        const char *slash = strrchr(p, '/');
        for (const char *const *e = env_ex; *e && slash; e++) {
                char *ex = xasprintf("%.*s/%s", (int)(slash - p), p, *e);
                bool hit = !fnmatch(p, ex, fl);
                free(ex);
                if (hit)
                        return PC_SECRET;
        }
        return 0;
}

/* Another user's home (/home/NAME, /root): its secrets are like ours, and root's whole
 * home is private.  Returns the path inside it, or NULL. */
static const char *other_home(const char *p, const struct policy_ctx *ctx, bool *root)
{
        *root = false;
        if (!strcmp(p, "/root") || !strncmp(p, "/root/", 6)) {
                *root = true;
                return p[5] ? p + 6 : "";
        }
        static const char *const bases[] = {"/home/", "/Users/", "/var/home/"};
        for (size_t k = 0; k < ARRAY_SIZE(bases); k++) {
                size_t l = strlen(bases[k]);
                if (strncmp(p, bases[k], l) || !p[l])
                        continue;
                if (ctx->home && path_is_within(p, ctx->home))
                        return NULL;
                const char *rest = strchr(p + l, '/');
                return rest ? rest + 1 : "";
        }
        return NULL;
}

unsigned pathclass_abs(const char *p, bool all, const struct policy_ctx *ctx)
{
        if (!strcmp(p, "/"))
                return PC_ROOT | (all ? PC_ALL : 0);
        const char *ws = ctx->workspace, *home = ctx->home;
        unsigned c = env_file_class(p) | glob_class(p, ctx);
        if (all && ((ws && path_is_within(ws, p)) || (home && path_is_within(home, p))))
                c |= PC_ALL;
        if (has_component(p, ".git"))
                c |= PC_GITDIR;
        if (ws && path_is_within(ws, p))
                c |= PC_WORKSPACE;
        if (home && path_is_within(home, p))
                c |= PC_HOME;
        if (pathclass_strictly_under(p, ws))
                return c | PC_INSIDE;
        if (ws && !strcmp(p, ws))
                return c;
        if (pathclass_strictly_under(p, home))
                return c | home_file_class(p + strlen(home) + 1);
        bool root;
        const char *in_other = other_home(p, ctx, &root);
        if (in_other) /* another user's home: no business of this task's */
                c |= (*in_other ? home_file_class(in_other) : 0) | (root || !*in_other ? PC_SECRET : 0);
        static const char *const tmps[] = {"/tmp", "/var/tmp", "/dev/shm"};
        for (size_t k = 0; k < ARRAY_SIZE(tmps); k++)
                if (under(p, tmps[k]))
                        return c | (strcmp(p, tmps[k]) || all ? PC_TMP : PC_SYSTEM);
        if (under(p, "/dev"))
                return c | dev_class(p);
        if (home && !strcmp(p, home))
                return c;
        return c | PC_SYSTEM | system_file_class(p);
}

/* A path that starts unknown ("$DIR"/.ssh/id_rsa, or relative after a cd that cannot be
 * known): unknown, and whatever its known end says (a key, a shell rc file, /etc/shadow
 * under some root, a .git). */
unsigned pathclass_tail(const char *arg)
{
        const char *t = strrchr(arg, UNK);
        t = t ? t + 1 : arg;
        unsigned c = PC_UNKNOWN | env_file_class(t);
        if (has_component(t, ".git") || !strncmp(t, ".git", 4))
                c |= PC_GITDIR;
        for (const char *s = t; s; s = strchr(s, '/')) {
                s += *s == '/';
                if (!*s)
                        break;
                if (name_in(s, home_secrets) && fnmatch("*.pub", s, 0))
                        c |= PC_SECRET;
                if (name_in(s, home_persist))
                        c |= PC_PERSIST;
                char *abs = xasprintf("/%s", s);
                c |= system_file_class(abs);
                free(abs);
        }
        return c;
}

unsigned classify_path(const char *arg, const struct policy_ctx *ctx)
{
        bool all;
        char *p = pathclass_resolve(arg, ctx, &all);
        if (!p)
                return pathclass_tail(arg);
        unsigned c = pathclass_abs(p, all, ctx);
        free(p);
        return c;
}
