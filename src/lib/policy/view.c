/* The workspace as a commit would leave it (view.h). */
#define _GNU_SOURCE
#include "policy/view.h"

#include <limits.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/mem.h"
#include "base/str.h"
#include "base/strv.h"
#include "txbox.h"

#define VIEW_FOLLOW_MAX 40 /* links on one path, as the kernel's own limit */

static int cmp_tpath(const void *key, const void *elem)
{
        return strcmp(key, ((const struct txbox_path *)elem)->path);
}

static const struct txbox_path *cs_find(const struct changeset *cs, const char *rel)
{
        return cs && cs->npaths ? bsearch(rel, cs->paths, cs->npaths, sizeof(*cs->paths), cmp_tpath) : NULL;
}

bool view_changed(const struct view *v, const char *rel)
{
        return cs_find(v->cs, rel) != NULL;
}

int view_lstat(const struct view *v, const char *rel, struct stat *st, int *rootfd)
{
        if (v->upper_fd >= 0) {
                const struct txbox_path *tp = cs_find(v->cs, rel);
                if (tp && tp->change == TXBOX_DELETED)
                        return -ENOENT;
                if (lstat_beneath(v->upper_fd, rel, st) == 0) {
                        if (S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0))
                                return -ENOENT; /* a whiteout */
                        if (rootfd)
                                *rootfd = v->upper_fd;
                        return 0;
                }
        }
        if (v->live_fd < 0 || lstat_beneath(v->live_fd, rel, st) < 0)
                return -ENOENT;
        if (rootfd)
                *rootfd = v->live_fd;
        return 0;
}

/* The target of the symlink rel (NUL-terminated in buf).  0 or -errno. */
static int view_readlink(const struct view *v, const char *rel, char *buf, size_t size)
{
        struct stat st;
        const char *base;
        int root;

        if (view_lstat(v, rel, &st, &root) < 0)
                return -ENOENT;
        if (!S_ISLNK(st.st_mode))
                return -EINVAL;
        _cleanup_close_ int dir = open_parent_beneath(root, rel, &base);
        ssize_t n = dir < 0 ? -1 : readlinkat(dir, base, buf, size - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return 0;
}

int view_read(const struct view *v, const char *rel, size_t max, char **out, size_t *len)
{
        struct stat st;
        int root;

        if (view_lstat(v, rel, &st, &root) < 0)
                return -ENOENT;
        if (S_ISLNK(st.st_mode))
                return -ELOOP;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        return read_beneath(root, rel, max, out, len);
}

/* The absolute host path the walk has reached when it leaves the workspace: base, then
 * whatever of the path was still to walk. */
static char *outside(const char *base, const char *rest)
{
        while (*rest == '/')
                rest++;
        return xasprintf("%s%s%s", base, *rest && base[strlen(base) - 1] != '/' ? "/" : "", rest);
}

int view_resolve(const struct view *v, const char *rel, char **out, struct strvec *seen)
{
        char cur[PATH_MAX] = "", link[PATH_MAX];
        _cleanup_free_ char *rest = xstrdup(rel);
        int follows = 0;
        bool gone = false; /* a name on the way does not exist: the rest is only names */

        *out = NULL;
        for (const char *c = rest; *c;) {
                const char *end = strchrnul(c, '/');
                size_t l = (size_t)(end - c), n = strlen(cur);
                const char *next = *end ? end + 1 : end;
                if (!l || (l == 1 && c[0] == '.')) {
                        c = next;
                        continue;
                }
                if (l == 2 && c[0] == '.' && c[1] == '.') {
                        if (!n) { /* above the root: the workspace's parent and on */
                                *out = outside(v->workspace ? v->workspace : "/", c);
                                return 0;
                        }
                        char *slash = strrchr(cur, '/');
                        *(slash ? slash : cur) = '\0';
                        c = next;
                        continue;
                }
                if (n + 1 + l >= sizeof(cur))
                        return -ENAMETOOLONG;
                snprintf(cur + n, sizeof(cur) - n, "%s%.*s", n ? "/" : "", (int)l, c);
                c = next;
                struct stat st;
                if (gone || view_lstat(v, cur, &st, NULL) < 0) {
                        gone = true;
                        continue;
                }
                if (!S_ISLNK(st.st_mode))
                        continue;
                if (++follows > VIEW_FOLLOW_MAX || view_readlink(v, cur, link, sizeof(link)) < 0)
                        return -ELOOP;
                if (seen)
                        strvec_push(seen, xstrdup(cur));
                /* The target replaces the link's name; what followed it follows the target. */
                char *spliced = xasprintf("%s/%s", link, c);
                if (strlen(spliced) >= PATH_MAX) {
                        free(spliced);
                        return -ENAMETOOLONG;
                }
                char *slash = strrchr(cur, '/');
                *(slash ? slash : cur) = '\0';
                if (link[0] == '/') {
                        const char *ws = v->workspace;
                        if (!ws || !path_is_within(link, ws)) {
                                *out = outside(link, c);
                                free(spliced);
                                return 0;
                        }
                        cur[0] = '\0';
                        char *inside = xasprintf("%s/%s", link + strlen(ws), c);
                        free(spliced);
                        spliced = inside;
                }
                free(rest);
                rest = spliced;
                c = rest;
        }
        *out = xstrdup(cur);
        return 1;
}
