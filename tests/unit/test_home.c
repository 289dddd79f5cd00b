/* The sandbox's view of the home, as the supervisor plans it (src/lib/sandbox/home.c): the
 * hidden paths and the private caches.  Only makes directories under its own temporary
 * directory; mounts nothing (the integration tests t_home.sh run the sandbox). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "tap.h"
#include "base/fileio.h"
#include "base/mem.h"
#include "base/rmtree.h"
#include "base/str.h"
#include "base/strv.h"

static bool has(const struct strvec *v, const char *p)
{
        for (size_t i = 0; i < v->n; i++)
                if (!strcmp(v->v[i], p))
                        return true;
        return false;
}

static size_t count(const struct strvec *v, const char *p)
{
        size_t n = 0;
        for (size_t i = 0; i < v->n; i++)
                n += !strcmp(v->v[i], p);
        return n;
}

static void test_hidden(void)
{
        struct strvec v = {0};
        char *const extra[] = {"/h/.ssh", "/x/../y", "/", "/w", "/w/secrets/prod.env", "//opt//corp/./creds/",
                               NULL};

        setenv("KUBECONFIG", "/k/one:/k/two::relative", 1);
        setenv("CLAUDE_CONFIG_DIR", "/alt/claude", 1);
        setenv("CODEX_HOME", "/", 1);
        setenv("XDG_CONFIG_HOME", "/xdg", 1);
        sandbox_hidden_paths("/h", "/w", extra, &v);
        ok(has(&v, "/h/.ssh") && has(&v, "/h/.aws") && has(&v, "/h/.netrc"),
           "the tools' credentials under home");
        ok(has(&v, "/h/.claude") && has(&v, "/h/.claude.json") && has(&v, "/h/.codex") &&
                   has(&v, "/h/.gemini") && has(&v, "/h/.aider.conf.yml") &&
                   has(&v, "/h/.config/github-copilot"),
           "the coding agents' credentials under home");
        ok(has(&v, "/h/.bash_history") && has(&v, "/h/.mozilla"), "histories and browser profiles");
        ok(has(&v, "/k/one") && has(&v, "/k/two") && !has(&v, "relative"),
           "KUBECONFIG: each absolute entry of the list");
        ok(has(&v, "/alt/claude"), "CLAUDE_CONFIG_DIR: where it points");
        ok(has(&v, "/xdg/gh") && has(&v, "/xdg/gcloud") && has(&v, "/h/.config/gh"),
           "XDG_CONFIG_HOME elsewhere: the .config entries there too");
        is_int(count(&v, "/h/.ssh"), 1, "a path listed twice is hidden once");
        ok(!has(&v, "/") && !has(&v, "/y") && !has(&v, "/x/../y"), "never the root, never a path with ..");
        ok(!has(&v, "/w"), "never the workspace itself (CODEX_HOME=/ neither)");
        ok(has(&v, "/w/secrets/prod.env"), "a path inside the workspace: hidden in its view");
        ok(has(&v, "/opt/corp/creds"), "paths made lexically normal");
        strvec_clear(&v);

        /* A home that holds the workspace: nothing of the home that holds it is dropped, only
         * what would hide the workspace itself. */
        char *const up[] = {"/h", NULL};
        sandbox_hidden_paths("/h", "/h/proj", up, &v);
        ok(!has(&v, "/h") && has(&v, "/h/.ssh"), "a path holding the workspace is not hidden");
        strvec_clear(&v);
        unsetenv("KUBECONFIG");
        unsetenv("CLAUDE_CONFIG_DIR");
        unsetenv("CODEX_HOME");
        unsetenv("XDG_CONFIG_HOME");
}

static const struct sandbox_cache *find(const struct sandbox_caches *c, const char *rel)
{
        for (size_t i = 0; i < c->n; i++)
                if (!strcmp(c->v[i].rel, rel))
                        return &c->v[i];
        return NULL;
}

static void mk(const char *dir, const char *rel)
{
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", dir, rel);
        mkdir_p(p, 0755);
}

static bool isdir(const char *dir, const char *rel)
{
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof(p), "%s/%s", dir, rel);
        return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_caches(void)
{
        char t[PATH_MAX], home[PATH_MAX + 8], ws[PATH_MAX + 8], root[PATH_MAX + 32], p[PATH_MAX + 64],
                want[PATH_MAX + 64];
        struct sandbox_caches c;
        struct strvec hidden = {0};
        struct stat st;

        if (!tap_mkdtemp(t, sizeof(t), "txbox-home")) {
                ok(0, "mkdtemp");
                return;
        }
        if (path_is_within(t, "/tmp") || path_is_within(t, "/dev")) {
                /* The sandbox has its own /tmp: a home there is refused (the last test below). */
                struct sandbox_caches c0;
                sandbox_caches_plan("/tmp/txbox-caches", NULL, t, "/nonexistent", NULL, NULL, false, &c0);
                ok(c0.off && strstr(c0.off, "/tmp"),
                   "a cache root under /tmp (the sandbox's own): no caches");
                sandbox_caches_free(&c0);
                printf("ok %d - # SKIP the plan's other cases need a TMPDIR outside /tmp and /dev\n", ++tap_n);
                rmdir(t);
                return;
        }
        snprintf(home, sizeof(home), "%s/h", t);
        snprintf(ws, sizeof(ws), "%s/w", t);
        snprintf(root, sizeof(root), "%s/.cache/txbox/caches", home);
        mk(home, ".npm");
        mk(home, ".cargo/bin");
        mk(t, "elsewhere/m2/repository");
        mk(t, "w/gradle");
        snprintf(p, sizeof(p), "%s/elsewhere/m2", t);
        snprintf(want, sizeof(want), "%s/.m2", home);
        ok(symlink(p, want) == 0, "~/.m2 is a link elsewhere");
        snprintf(p, sizeof(p), "%s/w/gradle", t);
        snprintf(want, sizeof(want), "%s/.gradle", home);
        ok(symlink(p, want) == 0, "~/.gradle is a link into the workspace");

        /* Only looking (txbox doctor) makes nothing. */
        unsetenv("GOMODCACHE");
        sandbox_caches_plan(root, NULL, home, ws, NULL, NULL, false, &c);
        ok(!c.off, "the plan holds caches");
        ok(!isdir(home, ".cache") && !isdir(home, ".cargo/registry") && !isdir(root, ""),
           "looking made nothing: no ~/.cache, no ~/.cargo/registry, no cache root");
        sandbox_caches_free(&c);

        sandbox_caches_plan(root, NULL, home, ws, NULL, NULL, true, &c);
        const struct sandbox_cache *e = find(&c, ".cache");
        snprintf(want, sizeof(want), "%s/.cache", home);
        ok(e && e->mounted && !strcmp(e->target, want),
           "~/.cache: made (the XDG rules define it) and mounted");
        snprintf(want, sizeof(want), "%s/.cache", root);
        ok(e && e->source && !strcmp(e->source, want) && isdir(root, ".cache"), "... from ROOT/.cache, made");
        e = find(&c, ".npm");
        ok(e && e->mounted && isdir(root, ".npm"), "~/.npm (there already): mounted");
        e = find(&c, ".cargo/registry");
        ok(e && e->mounted && isdir(home, ".cargo/registry") && isdir(root, ".cargo/registry"),
           "~/.cargo/registry: only its last component missing, made on the host and mounted");
        e = find(&c, "go/pkg/mod");
        snprintf(want, sizeof(want), "GOMODCACHE=%s/.cache/go-mod", home);
        ok(e && !e->mounted && e->redirected && e->env && !strcmp(e->env, want) && !isdir(home, "go"),
           "~/go/pkg/mod: its directory missing, not made; go is sent to ~/.cache/go-mod instead");
        e = find(&c, ".m2/repository");
        snprintf(want, sizeof(want), "%s/elsewhere/m2/repository", t);
        ok(e && e->mounted && !strcmp(e->target, want), "~/.m2 a link: mounted where it leads");
        e = find(&c, ".gradle/caches");
        ok(e && !e->mounted && e->why && strstr(e->why, "workspace") && !isdir(t, "w/gradle/caches"),
           "~/.gradle a link into the workspace: not mounted, nothing made there (%s)",
           e && e->why ? e->why : "");
        e = find(&c, ".ivy2/cache");
        ok(e && !e->mounted && !e->redirected && e->why && strstr(e->why, "does not exist"),
           "~/.ivy2/cache: nothing there, no variable: left out, saying why");
        ok(stat(root, &st) == 0 && (st.st_mode & 0777) == 0700 && st.st_uid == geteuid(),
           "the cache root is ours and closed to others");

        /* The program's environment. */
        char *env0[] = {"PATH=/bin", "XDG_CACHE_HOME=/var/cache/elsewhere", NULL};
        char **envp = calloc(3, sizeof(char *));
        memcpy(envp, env0, sizeof(env0));
        sandbox_caches_env(&c, home, ws, &envp);
        bool gomod = false, xdg = false;
        for (size_t i = 0; envp[i]; i++) {
                snprintf(want, sizeof(want), "GOMODCACHE=%s/.cache/go-mod", home);
                gomod |= !strcmp(envp[i], want);
                snprintf(want, sizeof(want), "XDG_CACHE_HOME=%s/.cache", home);
                xdg |= !strcmp(envp[i], want);
        }
        ok(gomod, "the program gets GOMODCACHE");
        ok(xdg, "XDG_CACHE_HOME pointing where the sandbox cannot write becomes ~/.cache");
        free(envp);
        char ws_cache[PATH_MAX + 32];
        snprintf(ws_cache, sizeof(ws_cache), "XDG_CACHE_HOME=%s/.cache", ws);
        char *env1[] = {ws_cache, NULL};
        envp = calloc(2, sizeof(char *));
        memcpy(envp, env1, sizeof(env1));
        sandbox_caches_env(&c, home, ws, &envp);
        bool kept = false;
        for (size_t i = 0; envp[i]; i++)
                kept |= !strcmp(envp[i], ws_cache);
        ok(kept, "XDG_CACHE_HOME inside the workspace is kept (its writes are the transaction's)");
        free(envp);
        sandbox_caches_free(&c);

        /* A root another user's sandbox opened up is closed again. */
        chmod(root, 0755);
        sandbox_caches_plan(root, NULL, home, ws, NULL, NULL, true, &c);
        ok(!c.off && stat(root, &st) == 0 && (st.st_mode & 0777) == 0700,
           "a root opened to others is closed");
        sandbox_caches_free(&c);

        /* The policy's list: nested paths once, the outer one. */
        char *const rels[] = {"~/.cache/pip", "~/.cache", "~/.npm", "~/./.npm/", NULL};
        sandbox_caches_plan(root, rels, home, ws, NULL, NULL, true, &c);
        is_int(c.n, 2, "a nested path and a repeated one collapse: ~/.cache and ~/.npm");
        ok(find(&c, ".cache") && find(&c, ".npm") && !find(&c, ".cache/pip"), "... the outer ones");
        sandbox_caches_free(&c);

        /* Never over the workspace, the state dir or a hidden path. */
        char *const ssh[] = {"~/.ssh", "~/.npm", NULL};
        mk(home, ".ssh");
        snprintf(p, sizeof(p), "%s/.ssh", home);
        strvec_push(&hidden, xstrdup(p));
        snprintf(p, sizeof(p), "%s/.npm", home);
        sandbox_caches_plan(root, ssh, home, ws, p, hidden.v, true, &c);
        e = find(&c, ".ssh");
        ok(e && !e->mounted && e->why && strstr(e->why, "hidden"), "a cache in a hidden path is refused");
        e = find(&c, ".npm");
        ok(e && !e->mounted && e->why && strstr(e->why, "state dir"),
           "a cache over the state dir is refused");
        ok(!isdir(root, ".ssh"), "... and nothing made for it");
        sandbox_caches_free(&c);
        sandbox_caches_plan(root, NULL, home, home, NULL, NULL, true, &c);
        ok(c.off && strstr(c.off, "workspace"), "a workspace that holds the cache root: no caches (%s)",
           c.off ? c.off : "");
        sandbox_caches_free(&c);
        snprintf(p, sizeof(p), "%s/.cache", home);
        strvec_push(&hidden, xstrdup(p));
        sandbox_caches_plan(root, NULL, home, ws, NULL, hidden.v, true, &c);
        ok(c.off && strstr(c.off, "hidden"), "a cache root in a hidden path: no caches");
        sandbox_caches_free(&c);
        sandbox_caches_plan("/tmp/txbox-caches", NULL, home, ws, NULL, NULL, true, &c);
        ok(c.off && strstr(c.off, "/tmp"), "a cache root under /tmp (the sandbox's own): no caches");
        sandbox_caches_free(&c);
        strvec_clear(&hidden);

        /* What exists now is what init masks. */
        mk(home, ".config/gh");
        mk(home, ".local/state");
        mk(t, "outside/creds");
        snprintf(p, sizeof(p), "%s/.netrc", home);
        close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        char extra1[PATH_MAX + 32], extra2[PATH_MAX + 32];
        snprintf(extra1, sizeof(extra1), "%s/outside/creds", t);
        snprintf(extra2, sizeof(extra2), "%s/outside/none", t);
        char *const extra[] = {extra1, extra2, NULL};
        sandbox_hidden_paths(home, ws, extra, &hidden);
        size_t all = hidden.n;
        sandbox_hidden_present(&hidden, home);
        snprintf(p, sizeof(p), "%s/.ssh", home);
        bool dot_ssh = has(&hidden, p);
        snprintf(p, sizeof(p), "%s/.config/gh", home);
        bool gh = has(&hidden, p);
        snprintf(p, sizeof(p), "%s/.netrc", home);
        bool netrc = has(&hidden, p);
        snprintf(p, sizeof(p), "%s/.local/share/keyrings", home);
        ok(dot_ssh && gh && netrc && has(&hidden, extra1), "present: a directory, one in ~/.config, a file, an extra path");
        ok(!has(&hidden, p) && !has(&hidden, extra2), "missing ones are dropped (~/.local/share absent, an extra)");
        is_int(hidden.n, 4, "exactly those four of %zu", all);
        strvec_clear(&hidden);

        rm_rf_at(AT_FDCWD, t);
}

int main(void)
{
        test_hidden();
        test_caches();
        return tap_done();
}
