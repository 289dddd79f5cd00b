/* Wiping by sync or move: what leaves the workspace by a move is gone from it, and a sync
 * with --delete removes from its destination whatever the source lacks.  So each is judged
 * as the deletion it amounts to, of the paths known to lie in the workspace, and the
 * deletion rules (rm-root ...) decide:
 *   mv SRC... DEST, DEST outside the workspace:      rm -rf SRC...   (mv * ~/trash/)
 *   rsync --delete SRC DEST:                          rm -rf DEST     (rsync -a --delete empty/ ./)
 *   rsync --remove-source-files SRC... DEST:          rm -rf SRC...
 * Moving a file or a directory out (mv big.iso ~/Downloads/) and mirroring into a
 * subdirectory (rsync -a --delete src/ dst/) stay allowed, as their rm -rf would be. */
#define _GNU_SOURCE
#include "policy/tools.h"

/* Where path p lies, as command idx sees it: 1 inside the workspace, 0 outside, -1 unknown. */
static int in_workspace(struct scan *sc, size_t idx, const char *p)
{
        const char *ws = sc->ctx->workspace;
        if (!ws || has_unk(p))
                return -1;
        char *abs = uw_path(sc, idx, p);
        if (!abs)
                return -1;
        size_t l = strlen(ws);
        while (l > 1 && ws[l - 1] == '/')
                l--;
        bool in = !strncmp(abs, ws, l) && (abs[l] == 0 || abs[l] == '/');
        free(abs);
        return in;
}

/* Command idx amounts to rm -rf of those of the n paths w known to lie in the workspace
 * (a path that cannot be known, or one elsewhere, loses nothing of it). */
static void as_rm(struct scan *sc, size_t idx, char **w, size_t n, int depth)
{
        struct strvec v = {0};
        strvec_push(&v, xstrdup("rm"));
        strvec_push(&v, xstrdup("-rf"));
        strvec_push(&v, xstrdup("--"));
        for (size_t k = 0; k < n; k++)
                if (in_workspace(sc, idx, w[k]) == 1)
                        strvec_push(&v, xstrdup(w[k]));
        if (v.n > 3)
                uw_run(sc, idx, v.v, v.n, depth);
        strv_free(v.v);
}

/* The operands of argv a[1..n) after options (values of the with-arg options skipped):
 * their indices in ops, their count returned; *target the value of -t/--target-directory. */
static size_t operands(char **a, size_t n, const char *with, const char *const *long_with, size_t *ops,
                       const char **target)
{
        size_t m = 0;
        bool opts = true;
        for (size_t k = 1; k < n; k++) {
                const char *w = a[k];
                if (!opts || w[0] != '-' || !w[1]) {
                        ops[m++] = k;
                        continue;
                }
                if (!strcmp(w, "--")) {
                        opts = false;
                } else if (w[1] == '-') {
                        if (!strncmp(w, "--target-directory=", 19))
                                *target = w + 19;
                        else if (!strcmp(w, "--target-directory") && k + 1 < n)
                                *target = a[++k];
                        else if (!strchr(w, '=') && uw_in(w + 2, long_with))
                                k++;
                } else {
                        for (const char *c = w + 1; *c; c++)
                                if (strchr(with, *c)) {
                                        if (*c == 't')
                                                *target = c[1] ? c + 1 : k + 1 < n ? a[k + 1] : NULL;
                                        if (!c[1])
                                                k++;
                                        break;
                                }
                }
        }
        return m;
}

static void h_mv(struct scan *sc, size_t idx, int depth)
{
        static const char *const long_with[] = {"suffix", "context", NULL};
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx), m;
        const char *target = NULL;
        size_t *ops = xcalloc(n, sizeof(*ops));
        m = operands(a, n, "tS", long_with, ops, &target);
        const char *dest = target ? target : m ? a[ops[m - 1]] : NULL;
        size_t nsrc = target ? m : m ? m - 1 : 0;
        if (dest && nsrc && in_workspace(sc, idx, dest) == 0) {
                char **src = xcalloc(nsrc + 1, sizeof(*src));
                for (size_t k = 0; k < nsrc; k++)
                        src[k] = xstrdup(a[ops[k]]);
                as_rm(sc, idx, src, nsrc, depth);
                strv_free(src);
        }
        free(ops);
}

/* HOST:PATH and rsync://HOST/PATH are another machine's (a colon before any slash). */
static bool remote(const char *p)
{
        const char *colon = strchr(p, ':'), *slash = strchr(p, '/');
        return colon && (!slash || colon < slash);
}

static bool rsync_deletes(char **a, size_t n, bool *sources)
{
        bool dest = false;
        for (size_t k = 1; k < n; k++) {
                dest |= !strcmp(a[k], "--del") || !strncmp(a[k], "--delete", 8);
                *sources |= !strcmp(a[k], "--remove-source-files");
        }
        return dest;
}

/* rsync's --delete and --remove-source-files (called by its model in unwrap.c). */
void tool_rsync_wipe(struct scan *sc, size_t idx, int depth)
{
        static const char *const long_with[] = {"rsh",
                                                "exclude",
                                                "include",
                                                "filter",
                                                "files-from",
                                                "exclude-from",
                                                "include-from",
                                                "temp-dir",
                                                "log-file",
                                                "password-file",
                                                "chmod",
                                                "chown",
                                                "backup-dir",
                                                "suffix",
                                                "block-size",
                                                "compare-dest",
                                                "copy-dest",
                                                "link-dest",
                                                "partial-dir",
                                                "max-delete",
                                                "max-size",
                                                "min-size",
                                                "timeout",
                                                "contimeout",
                                                "port",
                                                "sockopts",
                                                "out-format",
                                                "info",
                                                "debug",
                                                "usermap",
                                                "groupmap",
                                                "iconv",
                                                "remote-option",
                                                "bwlimit",
                                                "modify-window",
                                                "compress-level",
                                                "skip-compress",
                                                "checksum-choice",
                                                "outbuf",
                                                "write-batch",
                                                "read-batch",
                                                "only-write-batch",
                                                "protocol",
                                                "address",
                                                "stop-after",
                                                "stop-at",
                                                "rsync-path",
                                                "log-file-format",
                                                NULL};
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        bool sources = false, dest = rsync_deletes(a, n, &sources);
        if (!dest && !sources)
                return;
        const char *target = NULL;
        size_t *ops = xcalloc(n, sizeof(*ops));
        size_t m = operands(a, n, "efTBM", long_with, ops, &target);
        char **w = xcalloc(m + 1, sizeof(*w));
        for (size_t k = 0; k < m; k++)
                w[k] = xstrdup(a[ops[k]]);
        free(ops);
        bool remote_src = false;
        for (size_t k = 0; k + 1 < m; k++)
                remote_src |= remote(w[k]);
        if (dest && m >= 2 && !remote(w[m - 1]))
                as_rm(sc, idx, w + m - 1, 1, depth);
        if (sources && m >= 2 && !remote_src)
                as_rm(sc, idx, w, m - 1, depth);
        strv_free(w);
}

const struct tool tool_wipe_models[] = {
        {"mv", h_mv},
        {NULL, NULL},
};
