/* The "work that git cannot give back" effect rule (effect-lost-work) on hand-made
 * changesets, and what it reads: SHA-1, git's objects (loose, then packed by git gc),
 * ignore files (git's own test of them, check-ignore, agrees).  tests/unit/test_loss.c
 * judges real overlay layers.  Each repository is a throwaway directory under TMPDIR; the
 * rule itself never runs git. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/changeset.h"
#include "policy/effects.h"
#include "policy/gitwork.h"
#include "policy/policy.h"
#include "tap.h"
#include "base/util.h"

static char ws[512];
static int lfd = -1, ufd = -1;
static struct policy *pol;

static void put(int dfd, const char *name, const char *text)
{
        const char *slash = strrchr(name, '/');
        if (slash) {
                char dir[256];
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - name), name);
                mkdirat(dfd, dir, 0755);
        }
        int fd = openat(dfd, name, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
                abort();
        close(fd);
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
        char cmd[2048], *body;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&body, fmt, ap) < 0)
                abort();
        va_end(ap);
        snprintf(cmd, sizeof(cmd), "cd '%s' && { %s; } >/dev/null 2>&1", ws, body);
        free(body);
        return system(cmd);
}

static void add_path(struct changeset *cs, const char *path, enum txbox_change ch)
{
        cs->paths = xrealloc(cs->paths, (cs->npaths + 1) * sizeof(*cs->paths));
        cs->paths[cs->npaths++] = (struct txbox_path){.path = xstrdup(path), .change = ch};
}

static int cmp_path(const void *a, const void *b)
{
        return strcmp(((const struct txbox_path *)a)->path, ((const struct txbox_path *)b)->path);
}

/* Run the effect rules on a changeset of paths (space-separated), each with change ch;
 * returns how many effect-lost-work violations it got. */
static int lost(const char *paths, enum txbox_change ch)
{
        struct changeset cs = {0};
        char *copy = xstrdup(paths), *save = NULL;
        for (char *p = strtok_r(copy, " ", &save); p; p = strtok_r(NULL, " ", &save))
                add_path(&cs, p, ch);
        free(copy);
        qsort(cs.paths, cs.npaths, sizeof(*cs.paths), cmp_path);
        struct policy_ctx c = {.workspace = ws, .home = "/home/agent", .cwd = ws};
        effects_check(pol, ufd, lfd, &cs, &c, NULL);
        int n = 0;
        for (size_t k = 0; k < cs.nviolations; k++)
                n += !strcmp(cs.violations[k].rule, "effect-lost-work");
        changeset_free(&cs);
        return n;
}

static void test_sha1(void)
{
        uint8_t d[20];
        char hex[41];
        static const struct {
                const char *in, *out;
        } v[] = {{"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
                 {"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
                 {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                  "84983e441c3bd26ebaae4aa1f95129e5e54670f1"}};
        for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
                sha1(v[k].in, strlen(v[k].in), d);
                for (int i = 0; i < 20; i++)
                        snprintf(hex + 2 * i, 3, "%02x", d[i]);
                ok(!strcmp(hex, v[k].out), "sha1(\"%.8s...\") = %s", v[k].in, hex);
        }
        char *m = malloc(1000000);
        memset(m, 'a', 1000000);
        sha1(m, 1000000, d);
        free(m);
        for (int i = 0; i < 20; i++)
                snprintf(hex + 2 * i, 3, "%02x", d[i]);
        ok(!strcmp(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"), "sha1 of a million a's (many blocks)");
}

int main(void)
{
        test_sha1();
        if (system("git --version >/dev/null 2>&1") != 0) {
                printf("ok %d - # SKIP git not installed\n", ++tap_n);
                return tap_done();
        }
        const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(ws, sizeof(ws), "%s/txbox-gitwork-XXXXXX", tmp);
        char up[512];
        snprintf(up, sizeof(up), "%s/txbox-gitup-XXXXXX", tmp);
        if (!mkdtemp(ws) || !mkdtemp(up))
                abort();
        lfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ufd = open(up, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct txbox_error err = {0};
        if (policy_load(NULL, &pol, &err) < 0) {
                printf("Bail out! %s\n", err.msg);
                return 1;
        }
        char n[64];
        for (int k = 1; k <= 6; k++) {
                snprintf(n, sizeof(n), "src/t%d.c", k), put(lfd, n, "tracked\n");
                snprintf(n, sizeof(n), "m%d.txt", k), put(lfd, n, "old\n");
                snprintf(n, sizeof(n), "build/o%d.o", k), put(lfd, n, "object\n");
                snprintf(n, sizeof(n), "x%d.log", k), put(lfd, n, "log\n");
        }
        put(lfd, ".gitignore", "build/\n*.log\n!keep.log\n");
        ok(sh("git init -q . && git add -A && "
              "git -c user.name=t -c user.email=t@example.com commit -qm init") == 0,
           "a throwaway repository with 6 tracked files, 6 more to change, ignored output");
        for (int k = 1; k <= 6; k++) {
                snprintf(n, sizeof(n), "u%d.txt", k), put(lfd, n, "my new work\n");
                snprintf(n, sizeof(n), "m%d.txt", k), put(lfd, n, "changed, not committed\n");
        }
        put(lfd, "keep.log", "re-included\n");

        is_int(lost("src/t1.c src/t2.c src/t3.c src/t4.c src/t5.c src/t6.c src", TXBOX_DELETED), 0,
               "deleting clean tracked files is allowed (git checkout gives them back)");
        is_int(lost("u1.txt u2.txt u3.txt u4.txt u5.txt u6.txt", TXBOX_DELETED), 6,
               "deleting 6 untracked files is refused, each named");
        is_int(lost("m1.txt m2.txt m3.txt m4.txt m5.txt m6.txt", TXBOX_DELETED), 6,
               "deleting 6 tracked files changed since the commit is refused");
        is_int(lost("u1.txt u2.txt m1.txt m2.txt m3.txt src/t1.c", TXBOX_DELETED), 5,
               "... counted together, clean ones apart");
        is_int(lost("u1.txt u2.txt m1.txt m2.txt src/t1.c src/t2.c", TXBOX_DELETED), 0,
               "4 files git cannot give back is under the threshold (5)");
        is_int(lost("build build/o1.o build/o2.o build/o3.o build/o4.o build/o5.o build/o6.o x1.log x2.log "
                    "x3.log",
                    TXBOX_DELETED),
               0, "ignored files (build/, *.log) are not work");
        is_int(lost("keep.log u1.txt u2.txt u3.txt u4.txt", TXBOX_DELETED), 5,
               "a !negated pattern re-includes keep.log");
        /* emptied: the upper layer holds them with no bytes */
        for (int k = 1; k <= 5; k++)
                snprintf(n, sizeof(n), "u%d.txt", k), put(ufd, n, "");
        is_int(lost("u1.txt u2.txt u3.txt u4.txt u5.txt", TXBOX_MODIFIED), 5,
               "emptying 5 untracked files is refused");
        put(ufd, "u5.txt", "rewritten, not emptied\n");
        is_int(lost("u1.txt u2.txt u3.txt u4.txt u5.txt", TXBOX_MODIFIED), 0,
               "rewriting a file is not emptying it");

        /* the stat data no longer matches, the content does: still clean (hashed) */
        ok(sh("touch -d '2001-01-01' src/t1.c src/t2.c src/t3.c src/t4.c src/t5.c") == 0,
           "tracked files touched");
        is_int(lost("src/t1.c src/t2.c src/t3.c src/t4.c src/t5.c", TXBOX_DELETED), 0,
               "... are compared by content and still count as clean");
        put(lfd, "src/t1.c", "tracked,\n"); /* same size? no: one byte more */
        put(lfd, "src/t2.c", "TRACKED\n"); /* same size, other content */
        is_int(lost("src/t1.c src/t2.c u1.txt u2.txt u3.txt", TXBOX_DELETED), 5,
               "a tracked file changed to the same size is not clean");

        ok(sh("git update-index --index-version 4") == 0,
           "the index rewritten as version 4 (path compression)");
        is_int(lost("src/t3.c src/t4.c src/t5.c src/t6.c m1.txt m2.txt u1.txt u2.txt u3.txt", TXBOX_DELETED),
               5, "version 4: clean files still clean, a changed one still counted");
        is_int(lost("u1.txt u2.txt u3.txt u4.txt u5.txt", TXBOX_DELETED), 5,
               "version 4: untracked files counted");

        /* the index is a claim: what git holds is its objects, so a damaged index changes nothing */
        put(lfd, ".git/index", "DIRC\0\0\0\2garbage that is no index at all, long enough to be read");
        is_int(lost("src/t3.c src/t4.c src/t5.c src/t6.c u6.txt build/o1.o", TXBOX_DELETED), 0,
               "a damaged index: clean tracked files are still in git's objects, ignored output still output");
        is_int(lost("u1.txt u2.txt u3.txt u4.txt u5.txt", TXBOX_DELETED), 5,
               "... and untracked work still counts");
        struct policy *loose = NULL;
        char pf[600];
        snprintf(pf, sizeof(pf), "%s/../txbox-gitwork-policy-%d", up, (int)getpid());
        FILE *f = fopen(pf, "w");
        fputs("version: 1\neffects:\n  lost_work_min: 100\n", f);
        fclose(f);
        ok(policy_load(pf, &loose, &err) == 0, "a policy raising lost_work_min loads");
        struct policy *strict = pol;
        pol = loose;
        is_int(lost("u1.txt u2.txt u3.txt u4.txt u5.txt u6.txt", TXBOX_DELETED), 0,
               "... and allows 6 at once");
        pol = strict;
        unlink(pf);
        policy_free(loose);

        /* without a repository the rule does not apply */
        ok(sh("rm -rf .git") == 0, "the repository removed");
        is_int(lost("u1.txt u2.txt u3.txt u4.txt u5.txt u6.txt", TXBOX_DELETED), 0,
               "no repository: the rule does not apply");
        policy_free(pol);
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", ws, up);
        if (system(cmd) != 0)
                return 1;
        return tap_done();
}
