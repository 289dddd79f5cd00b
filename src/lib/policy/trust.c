/* The workspace's own policy file, and the user's trust in it.
 *
 * WORKSPACE/.txbox/policy lies where every command can write (a commit, a bypass of the
 * effect rules, an earlier agent): until the user trusts that exact file it may only make
 * the policy stricter (load.c).  Trust is recorded outside the workspace, in the user's
 * configuration ($XDG_CONFIG_HOME/txbox/trusted-policies, default ~/.config/txbox/...), as
 * the SHA-256 of the file's content and the workspace's path, one line per workspace: any
 * change to the file ends it.  A store that lies inside the workspace is never used. */
#define _GNU_SOURCE
#include "pol.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/error.h"
#include "base/fileio.h"
#include "base/mem.h"
#include "base/sha256.h"
#include "base/str.h"

#define TRUST_MAX (4 << 20)
#define TRUST_NAME "trusted-policies"
#define TRUST_HEADER "# txbox: workspace policy files the user trusted (txbox trust): SHA-256 WORKSPACE\n"

/* The directory of the trust store, or NULL when there is no home to keep it in. */
static char *trust_dir(void)
{
        const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
        if (x && x[0] == '/')
                return xasprintf("%s/txbox", x);
        return h && h[0] == '/' ? xasprintf("%s/.config/txbox", h) : NULL;
}

char *policy_trust_path(void)
{
        _cleanup_free_ char *d = trust_dir();
        return d ? xasprintf("%s/%s", d, TRUST_NAME) : NULL;
}

/* The store's directory, opened, when it is outside ws (resolved: a link into the workspace
 * counts as inside).  -ENOENT when it does not exist, -EPERM when it lies inside ws. */
static int open_trust_dir(const char *ws, bool create)
{
        _cleanup_free_ char *d = trust_dir();
        char real[PATH_MAX];

        if (!d)
                return -ENOENT;
        if (create) {
                int r = mkdir_p(d, 0700);
                if (r < 0)
                        return r;
        }
        if (!realpath(d, real))
                return -errno;
        if (path_is_within(real, ws))
                return -EPERM;
        int fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static char *escaped(const char *p)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                abort();
        fput_pct_escaped(f, p); /* the workspace path in a line: bytes that would break it as %XX */
        fclose(f);
        return buf;
}

/* The store's text; NULL when there is none yet. */
static int read_store(int dirfd, char **text)
{
        int r = read_beneath(dirfd, TRUST_NAME, TRUST_MAX, text, NULL); /* a plain file, or nothing */
        if (r == -ENOENT) {
                *text = NULL;
                return 0;
        }
        return r;
}

/* Is line "HASH WORKSPACE" about workspace ews (escaped)?  *hash points at its hash. */
static bool line_of(const char *line, size_t n, const char *ews, const char **hash)
{
        size_t l = strlen(ews);
        *hash = line;
        return n == 65 + l && line[64] == ' ' && !memcmp(line + 65, ews, l);
}

int policy_trusted(const char *ws, const char *hash)
{
        _cleanup_free_ char *text = NULL, *ews = escaped(ws);
        int fd = open_trust_dir(ws, false);
        const char *h;

        if (fd < 0)
                return 0;
        int r = read_store(fd, &text);
        close(fd);
        for (const char *line = text; r == 0 && line && *line;) {
                const char *nl = strchrnul(line, '\n');
                if (line_of(line, (size_t)(nl - line), ews, &h) && !strncmp(h, hash, 64) &&
                    strlen(hash) == 64)
                        return 1;
                line = *nl ? nl + 1 : nl;
        }
        return 0;
}

int policy_trust_set(const char *ws, const char *hash, struct txbox_error *err)
{
        _cleanup_free_ char *text = NULL, *ews = escaped(ws), *path = policy_trust_path(), *out = NULL;
        _cleanup_close_ int fd = open_trust_dir(ws, hash != NULL);
        size_t len = 0;
        const char *h;

        if (fd == -ENOENT && !hash)
                return 0; /* nothing was trusted */
        if (fd == -EPERM)
                return tx_err(err, EPERM,
                              "the trust store '%s' lies inside the workspace '%s', where any command could "
                              "write it; set XDG_CONFIG_HOME to a directory outside it",
                              path ? path : "?", ws);
        if (fd < 0)
                return tx_err(err, -fd, "cannot open the directory of the trust store '%s': %s",
                              path ? path : "(no home)", strerror(-fd));
        int r = read_store(fd, &text);
        if (r < 0)
                return tx_err(err, -r, "cannot read the trust store '%s': %s", path, strerror(-r));
        FILE *f = open_memstream(&out, &len);
        if (!f)
                return tx_err(err, ENOMEM, "out of memory");
        fputs(TRUST_HEADER, f);
        for (const char *line = text; line && *line;) {
                const char *nl = strchrnul(line, '\n');
                size_t n = (size_t)(nl - line);
                if (n && line[0] != '#' && !line_of(line, n, ews, &h))
                        fprintf(f, "%.*s\n", (int)n, line);
                line = *nl ? nl + 1 : nl;
        }
        if (hash)
                fprintf(f, "%.64s %s\n", hash, ews);
        fclose(f);
        r = write_file_atomic_at(fd, TRUST_NAME, out, len, true);
        return r < 0 ? tx_err(err, -r, "cannot write the trust store '%s': %s", path, strerror(-r)) : 0;
}

int policy_ws_read(const char *ws, char **text, size_t *len, struct txbox_error *err)
{
        _cleanup_close_ int fd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int r = fd < 0 ? -errno : read_beneath(fd, ".txbox/policy", POL_MAX_FILE, text, len);

        if (r == 0 || r == -ENOENT)
                return r;
        return tx_err(err, -r, "policy '%s/.txbox/policy': %s", ws,
                      r == -ELOOP || r == -EXDEV
                              ? "it is a symlink or lies behind one; txbox reads the workspace's "
                                "policy only as a plain file inside it"
                      : r == -EINVAL ? "not a regular file"
                      : r == -EFBIG  ? "larger than 1 MiB"
                                     : strerror(-r));
}

void policy_hash(const char *text, size_t len, char out[65])
{
        sha256_hex(text, len, out);
}
