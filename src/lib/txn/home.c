/* What the sandbox makes of the user's home for a workspace, from the policy (sandbox: hide
 * and caches, docs/POLICY.md) and txbox's environment (TXBOX_HIDE, TXBOX_CACHE,
 * XDG_CACHE_HOME): the paths to hide besides the built-in ones, and the private cache root
 * with the cache paths.  The sandbox (home.c there) plans and makes the view from this. */
#define _GNU_SOURCE
#include <limits.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/mem.h"
#include "base/strv.h"
#include "txn/tx.h"

/* A path of the policy's hide list or of TXBOX_HIDE, absolute: "~/x" under home, "/x" as
 * is, anything else beneath the workspace (the policy's only; NULL from the environment). */
static char *hide_path(const char *p, const char *home, const char *workspace)
{
        if (p[0] == '~' && (!p[1] || p[1] == '/'))
                return home ? xasprintf("%s%s", home, p + 1) : NULL;
        if (p[0] == '/')
                return xstrdup(p);
        return workspace ? xasprintf("%s/%s", workspace, p) : NULL;
}

static bool off_word(const char *v)
{
        return v && (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no"));
}

void tx_home_config(const char *workspace, const struct policy *pol, struct tx_home *h)
{
        struct policy_sandbox sb;
        const char *home = ws_home_dir(), *xdg = getenv("XDG_CACHE_HOME"), *env = getenv("TXBOX_HIDE");

        memset(h, 0, sizeof(*h));
        policy_sandbox_get(pol, &sb);
        for (size_t i = 0; sb.hide && sb.hide[i]; i++) {
                char *p = hide_path(sb.hide[i], home, workspace);
                if (p)
                        strvec_push(&h->hide, p);
        }
        /* TXBOX_HIDE=PATH:PATH...: the user's own, for every workspace. */
        for (const char *c = env; c && *c;) {
                size_t n = strcspn(c, ":");
                if (n && n < PATH_MAX) {
                        _cleanup_free_ char *one = xasprintf("%.*s", (int)n, c);
                        char *p = hide_path(one, home, NULL);
                        if (p)
                                strvec_push(&h->hide, p);
                }
                c += n + (c[n] == ':');
        }
        if (off_word(getenv("TXBOX_CACHE")))
                h->cache_off = "turned off (TXBOX_CACHE=off)";
        else if (sb.caches == POLICY_CACHES_OFF)
                h->cache_off = "turned off by the policy (sandbox: caches: false)";
        else if (sb.caches == POLICY_CACHES_LIST && (!sb.cache_paths || !sb.cache_paths[0]))
                h->cache_off = "the policy lists no caches (sandbox: caches: [])";
        else if (!home)
                h->cache_off = "no home directory";
        if (h->cache_off)
                return;
        h->cache_root = xdg && xdg[0] == '/' ? xasprintf("%s/txbox/caches", xdg)
                                             : xasprintf("%s/.cache/txbox/caches", home);
        h->cache_list = sb.caches == POLICY_CACHES_LIST;
        for (size_t i = 0; h->cache_list && sb.cache_paths[i]; i++)
                strvec_push(&h->caches, xstrdup(sb.cache_paths[i]));
}

void tx_home_clear(struct tx_home *h)
{
        strvec_clear(&h->hide);
        strvec_clear(&h->caches);
        free(h->cache_root);
        memset(h, 0, sizeof(*h));
}
