/* Where a symlink that leaves the workspace leads (linkout.h).  The path is resolved on
 * this machine, as the user, by the kernel's own rules (realpath: every host link on the
 * way followed); only names are looked at and writability asked, never a file opened. */
#define _GNU_SOURCE
#include "policy/linkout.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/macros.h"
#include "base/str.h"
#include "policy/pathclass.h"

/* Language toolchains keep their interpreters and packages here, and venvs, version
 * managers and `npm link` point into them; writable by the user, but nothing writes
 * through such a link (relative to the home directory, then absolute). */
static const char *const home_stores[] = {
        ".pyenv", ".local/share/uv", ".local/share/mise", ".local/share/rtx", ".asdf", ".nvm", ".volta",
        ".fnm", ".local/share/fnm", ".rustup", ".cargo/bin", ".rye", ".conda", "miniconda3", "anaconda3",
        "miniforge3", "mambaforge", ".sdkman", ".deno", ".bun", ".local/share/pnpm", ".local/lib",
        ".local/pipx", ".local/share/virtualenvs", ".cache", ".npm-global", ".local/share/JetBrains/Toolbox",
        "go/pkg/mod", "sdk",
};
static const char *const abs_stores[] = {"/home/linuxbrew/.linuxbrew", "/opt/homebrew", "/opt/conda",
                                         "/nix/store"};

/* Trees of installed software that root can write but no ordinary work writes through. */
static const char *const system_trees[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                                           "/opt", "/nix/store", "/snap"};

static bool under_any(const char *p, const char *base, const char *const *list, size_t n)
{
        char full[PATH_MAX];
        for (size_t k = 0; k < n; k++) {
                if (base)
                        snprintf(full, sizeof(full), "%s/%s", base, list[k]);
                if (path_is_within(p, base ? full : list[k]))
                        return true;
        }
        return false;
}

/* Lexically normalised absolute path (".", "..", "//" taken out); false when it does not fit. */
static bool normalise(const char *in, char *out, size_t size)
{
        size_t n = 0;
        bool fits = true;
        out[0] = '\0';
        for (const char *c = in; *c;) {
                const char *end = strchrnul(c, '/');
                size_t l = (size_t)(end - c);
                if (l == 2 && c[0] == '.' && c[1] == '.') {
                        char *slash = strrchr(out, '/');
                        n = slash ? (size_t)(slash - out) : 0;
                        out[n] = '\0';
                } else if (l && !(l == 1 && c[0] == '.')) {
                        if (n + l + 2 >= size) {
                                fits = false;
                                break;
                        }
                        n += (size_t)snprintf(out + n, size - n, "/%.*s", (int)l, c);
                }
                c = *end ? end + 1 : end;
        }
        if (!n)
                snprintf(out, size, "/");
        return fits;
}

/* host resolved as the kernel would (realpath); when it does not exist, its nearest
 * existing ancestor resolved and the rest appended (*exists false, *ancestor that one).
 * false when the result would not fit. */
static bool resolve(const char *host, char *out, size_t size, char *ancestor, size_t asize, bool *exists)
{
        char buf[PATH_MAX], *r = realpath(host, NULL);
        *exists = r != NULL;
        if (r) {
                bool fits = strlen(r) < size && strlen(r) < asize;
                snprintf(out, size, "%s", r);
                snprintf(ancestor, asize, "%s", r);
                free(r);
                return fits;
        }
        if (strlen(host) >= sizeof(buf))
                return false;
        snprintf(buf, sizeof(buf), "%s", host);
        for (char *slash; (slash = strrchr(buf, '/'));) {
                *slash = '\0';
                r = realpath(buf[0] ? buf : "/", NULL);
                if (!r)
                        continue;
                char joined[PATH_MAX * 2];
                snprintf(joined, sizeof(joined), "%s/%s", r, host + (slash - buf) + 1);
                snprintf(ancestor, asize, "%s", r);
                free(r);
                return normalise(joined, out, size);
        }
        snprintf(ancestor, asize, "/");
        return normalise(host, out, size);
}

/* Could the user write it?  As root, anything outside the trees of installed software;
 * else what the kernel says for this user (a file that does not exist: its directory). */
static bool writable(const char *path, const char *ancestor, bool exists)
{
        if (geteuid() == 0)
                return !under_any(path, NULL, system_trees, ARRAY_SIZE(system_trees));
        return faccessat(AT_FDCWD, exists ? path : ancestor, W_OK, AT_EACCESS) == 0;
}

const char *linkout_judge(const char *host, const struct policy_ctx *ctx, char *where, size_t size)
{
        static const char *const harmless_dev[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                                   "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr",
                                                   "/dev/tty"};
        char ancestor[PATH_MAX], plain[PATH_MAX];
        bool exists;

        if (!normalise(host, plain, sizeof(plain)))
                return "symlink leads to a path too long to judge";
        for (size_t k = 0; k < ARRAY_SIZE(harmless_dev); k++)
                if (!strcmp(plain, harmless_dev[k])) { /* (/dev/stdin itself leads into /proc) */
                        snprintf(where, size, "%s", plain);
                        return NULL;
                }
        if (!resolve(host, where, size, ancestor, sizeof(ancestor), &exists))
                return "symlink leads to a path too long to judge";
        if (ctx && ctx->workspace && path_is_within(where, ctx->workspace))
                return "symlink leaves the workspace and comes back into it: its target depends on what lies "
                       "outside; write it relative, within the workspace";
        if (path_is_within(plain, "/proc") || path_is_within(plain, "/sys") || path_is_within(where, "/proc") ||
            path_is_within(where, "/sys"))
                return "symlink leads into /proc or /sys, which name another file for each process that follows "
                       "them";
        struct policy_ctx c = ctx ? *ctx : (struct policy_ctx){0};
        if (pathclass_abs(where, false, &c) & PC_SECRET)
                return "symlink leads to a secret outside the workspace (keys, credentials, history), which the "
                       "sandbox hides: your own tools would read it through the link; copy what is needed into "
                       "the workspace, or make the link yourself outside txbox";
        for (size_t k = 0; k < ARRAY_SIZE(harmless_dev); k++)
                if (!strcmp(where, harmless_dev[k]))
                        return NULL;
        if ((ctx && ctx->home && under_any(where, ctx->home, home_stores, ARRAY_SIZE(home_stores))) ||
            under_any(where, NULL, abs_stores, ARRAY_SIZE(abs_stores)))
                return NULL;
        /* (No exception for /tmp: another project, or the workspace's neighbours, may live
         * there, as writable as anything in the home directory.) */
        struct stat st;
        bool sys = under_any(where, NULL, system_trees, ARRAY_SIZE(system_trees)) ||
                   (geteuid() != 0 && path_is_within(where, "/etc"));
        if (exists && !sys && stat(where, &st) == 0 && S_ISDIR(st.st_mode))
                return "symlink leads outside the workspace to a directory that holds what you can write (a "
                       "path through the link reaches all of it); copy what is needed into the workspace, or "
                       "make the link yourself outside txbox";
        if (writable(where, ancestor, exists))
                return geteuid() == 0 ? "symlink leads outside the workspace to a path root can write: a write "
                                        "through the link (an editor saving it, a build, an install) would "
                                        "change it outside any transaction; copy it into the workspace, or "
                                        "make the link yourself outside txbox"
                                      : "symlink leads outside the workspace to a path you can write: a write "
                                        "through the link (an editor saving it, a build, an install) would "
                                        "change it outside any transaction; copy it into the workspace, or "
                                        "make the link yourself outside txbox";
        return NULL;
}
