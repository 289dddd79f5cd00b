/* The "work that git cannot give back" effect rule (effect-lost-work) on hand-made
 * changesets, and what it reads: blob names (SHA-1), git's objects (loose, then packed by git gc),
 * ignore files (git's own test of them, check-ignore, agrees).  tests/unit/test_loss.c
 * judges real overlay layers.  Each repository is a throwaway directory under TMPDIR; the
 * rule itself never runs git.  tests/run.sh runs this as root and as an unprivileged user
 * (as-user). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "store/changeset.h"
#include "policy/effects.h"
#include "policy/gitobj.h"
#include "policy/policy.h"
#include "tap.h"
#include "base/mem.h"
#include "txbox.h"

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
 * returns how many effect-lost-work violations it got.  lost_nolayer: without an upper
 * layer, as txbox hook judges an agent's edit before it is made. */
static int lost_in(int upper, const char *paths, enum txbox_change ch);
static int lost(const char *paths, enum txbox_change ch) { return lost_in(ufd, paths, ch); }
static int lost_nolayer(const char *paths, enum txbox_change ch) { return lost_in(-1, paths, ch); }
static int lost_in(int upper, const char *paths, enum txbox_change ch)
{
        struct changeset cs = {0};
        char *copy = xstrdup(paths), *save = NULL;
        for (char *p = strtok_r(copy, " ", &save); p; p = strtok_r(NULL, " ", &save))
                add_path(&cs, p, ch);
        free(copy);
        qsort(cs.paths, cs.npaths, sizeof(*cs.paths), cmp_path);
        struct policy_ctx c = {.workspace = ws, .home = "/home/agent", .cwd = ws};
        effects_check(pol, upper, lfd, &cs, &c, NULL);
        int n = 0;
        for (size_t k = 0; k < cs.nviolations; k++)
                n += !strcmp(cs.violations[k].rule, "effect-lost-work");
        changeset_free(&cs);
        return n;
}

static int scratch = -1; /* a directory for blob_name's file */

static void write_bytes(int dfd, const char *name, const void *data, size_t len);

/* The blob name of data, as the library computes it for a file. */
static void blob_name(const char *data, size_t len, uint8_t oid[20])
{
        write_bytes(scratch, "blob", data, len);
        if (git_blob_name_at(scratch, "blob", oid, NULL) < 0)
                abort();
}

/* git's names for contents (SHA-1 of "blob SIZE\0" and the content): two well-known ones,
 * and (with git installed) git hash-object's for contents that end in every place of a
 * 64-byte block and span many blocks. */
static void test_blob_names(void)
{
        uint8_t d[20], head[8];
        char hex[41];
        blob_name("", 0, d);
        git_oid_hex(d, hex);
        ok(!strcmp(hex, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"), "the empty blob's name (%s)", hex);
        blob_name("hello\n", 6, d);
        git_oid_hex(d, hex);
        ok(!strcmp(hex, "ce013625030ba8dba906f756967f9e9ca394464a"), "the name of \"hello\\n\" (%s)", hex);
        ok(git_blob_name_at(scratch, "blob", d, head) == 0 && !memcmp(head, "hello\n\0\0", 8),
           "and its first 8 bytes, zeros beyond its end");
        ok(git_blob_name_at(scratch, "none", d, NULL) == -ENOENT, "no file: -ENOENT");
        if (symlinkat("blob", scratch, "link") < 0)
                abort();
        ok(git_blob_name_at(scratch, "link", d, NULL) < 0, "a symlink is not followed");
        if (system("git --version >/dev/null 2>&1") != 0)
                return;
        static const size_t sizes[] = {3, 47, 48, 55, 56, 63, 64, 65, 119, 120, 1000000};
        char *m = malloc(1000000);
        for (size_t i = 0; i < 1000000; i++)
                m[i] = (char)('a' + i % 23);
        bool all = true;
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
                char want[64] = "";
                blob_name(m, sizes[k], d);
                git_oid_hex(d, hex);
                FILE *f = popen("cd \"$TXBOX_SCRATCH\" && git hash-object --no-filters blob", "r");
                if (!f || !fgets(want, sizeof(want), f))
                        want[0] = 0;
                if (f)
                        pclose(f);
                want[strcspn(want, "\n")] = 0;
                if (strcmp(want, hex)) {
                        all = false;
                        printf("# %zu bytes: %s, git hash-object %s\n", sizes[k], hex, want);
                }
        }
        free(m);
        ok(all, "git hash-object agrees on contents of 3 to 1,000,000 bytes (every padding case)");
}

/* ---- a hostile object store: every byte below is what a command could leave ---- */

static void write_bytes(int dfd, const char *name, const void *data, size_t len)
{
        int fd = openat(dfd, name, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, data, len) != (ssize_t)len)
                abort();
        close(fd);
}

/* A loose object file holding zlib(raw) under the name oid. */
static void put_loose(int dfd, const uint8_t oid[20], const void *raw, size_t rlen)
{
        char hex[41], dir[64], path[128];
        git_oid_hex(oid, hex);
        snprintf(dir, sizeof(dir), "objects/%.2s", hex);
        snprintf(path, sizeof(path), "%s/%s", dir, hex + 2);
        mkdirat(dfd, dir, 0755);
        uLongf clen = compressBound(rlen);
        uint8_t *c = xmalloc(clen);
        if (compress(c, &clen, raw, rlen) != Z_OK)
                abort();
        write_bytes(dfd, path, c, clen);
        free(c);
}

struct pk {
        uint8_t buf[8192];
        size_t n;
        struct {
                uint8_t oid[20];
                uint32_t off;
        } e[8];
        size_t ne;
};

static void pk_bytes(struct pk *p, const void *d, size_t n)
{
        memcpy(p->buf + p->n, d, n);
        p->n += n;
}

/* An entry: its header, an OFS_DELTA's distance or a REF_DELTA's base, zlib(data). */
static void pk_entry(struct pk *p, const uint8_t oid[20], int type, const void *data, size_t len, uint32_t ofs_base,
                     const uint8_t *ref_base)
{
        p->e[p->ne].off = (uint32_t)p->n;
        memcpy(p->e[p->ne++].oid, oid, 20);
        size_t sz = len;
        uint8_t h = (uint8_t)(type << 4 | (sz & 15));
        sz >>= 4;
        while (sz) {
                pk_bytes(p, (uint8_t[]){h | 0x80}, 1);
                h = sz & 127;
                sz >>= 7;
        }
        pk_bytes(p, &h, 1);
        if (type == 6) {
                uint32_t rel = p->e[p->ne - 1].off - ofs_base;
                uint8_t v[8];
                int pos = 7;
                v[pos] = rel & 127;
                while (rel >>= 7)
                        v[--pos] = (uint8_t)(128 | (--rel & 127));
                pk_bytes(p, v + pos, (size_t)(8 - pos));
        } else if (type == 7)
                pk_bytes(p, ref_base, 20);
        uLongf clen = compressBound(len);
        uint8_t c[4096];
        if (clen > sizeof(c) || compress(c, &clen, data, len) != Z_OK)
                abort();
        pk_bytes(p, c, clen);
}

static int cmp_oid20(const void *a, const void *b) { return memcmp(a, b, 20); }

/* Write objects/pack/pack-NAME.{pack,idx} (index version 2, names sorted). */
static void pk_write(int dfd, struct pk *p, const char *name, bool bad_fanout)
{
        uint8_t head[12] = "PACK";
        head[7] = 2, head[11] = (uint8_t)p->ne;
        memmove(p->buf + 12, p->buf, p->n);
        memcpy(p->buf, head, 12);
        for (size_t i = 0; i < p->ne; i++)
                p->e[i].off += 12;
        p->n += 12;
        uint8_t sum[20] = {0}; /* checksums: not read (what is read is hashed against its name) */
        pk_bytes(p, sum, 20);
        qsort(p->e, p->ne, sizeof(p->e[0]), cmp_oid20);
        uint8_t idx[4096];
        size_t n = 0;
        memcpy(idx, "\377tOc\0\0\0\2", 8), n = 8;
        for (int b = 0; b < 256; b++) {
                uint32_t cnt = 0;
                for (size_t i = 0; i < p->ne; i++)
                        cnt += p->e[i].oid[0] <= b;
                if (bad_fanout && b == 200)
                        cnt = 0;
                uint8_t be[4] = {(uint8_t)(cnt >> 24), (uint8_t)(cnt >> 16), (uint8_t)(cnt >> 8), (uint8_t)cnt};
                memcpy(idx + n, be, 4), n += 4;
        }
        for (size_t i = 0; i < p->ne; i++)
                memcpy(idx + n, p->e[i].oid, 20), n += 20;
        memset(idx + n, 0, 4 * p->ne), n += 4 * p->ne; /* CRCs: not read */
        for (size_t i = 0; i < p->ne; i++) {
                uint32_t o = p->e[i].off;
                uint8_t be[4] = {(uint8_t)(o >> 24), (uint8_t)(o >> 16), (uint8_t)(o >> 8), (uint8_t)o};
                memcpy(idx + n, be, 4), n += 4;
        }
        memcpy(idx + n, sum, 20), n += 20;
        memset(idx + n, 0, 20), n += 20;
        char path[128];
        mkdirat(dfd, "objects/pack", 0755);
        snprintf(path, sizeof(path), "objects/pack/pack-%s.pack", name);
        write_bytes(dfd, path, p->buf, p->n);
        snprintf(path, sizeof(path), "objects/pack/pack-%s.idx", name);
        write_bytes(dfd, path, idx, n);
}

/* A delta: copy [0, copy) of the base, then insert add. */
static size_t mk_delta(uint8_t *out, size_t src, size_t dst, uint32_t copy_off, uint8_t copy, const char *add)
{
        size_t n = 0;
        out[n++] = (uint8_t)src; /* all sizes here are under 128 */
        out[n++] = (uint8_t)dst;
        out[n++] = 0x80 | 0x01 | 0x10;
        out[n++] = (uint8_t)copy_off;
        out[n++] = copy;
        out[n++] = (uint8_t)strlen(add);
        memcpy(out + n, add, strlen(add));
        return n + strlen(add);
}

static void test_hostile_store(void)
{
        char dir[512];
        const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        snprintf(dir, sizeof(dir), "%s/txbox-odb-XXXXXX", tmp);
        if (!mkdtemp(dir))
                abort();
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        mkdirat(dfd, "objects", 0755);
        uint8_t a[20], b[20], bad[20], planted[20], huge[20], junk[20], c1[20], c2[20], off_far[20];
        enum gobj_type t;
        uint8_t *data = NULL;
        size_t len;

        /* loose: a genuine one, one planted under another content's name, lies about sizes */
        static const char hello[] = "hello\n";
        blob_name(hello, 6, a);
        put_loose(dfd, a, "blob 6\0hello\n", 13);
        blob_name("the user's notes", 16, planted);
        put_loose(dfd, planted, "blob 3\0abc", 10);
        blob_name("huge", 4, huge);
        put_loose(dfd, huge, "blob 99999999999999\0huge", 24);
        blob_name("junk", 4, junk);
        char jp[128], jh[41];
        git_oid_hex(junk, jh);
        snprintf(jp, sizeof(jp), "objects/%.2s", jh);
        mkdirat(dfd, jp, 0755);
        snprintf(jp, sizeof(jp), "objects/%.2s/%s", jh, jh + 2);
        write_bytes(dfd, jp, "not zlib at all", 15);

        /* a pack: a base, an OFS_DELTA on it, a delta copying past its base, two REF_DELTAs
         * on each other, an entry whose OFS_DELTA points before the pack's start */
        static const char base[] = "base content of a blob, long enough to copy from";
        static const char want[] = "base content plus an insert";
        uint8_t d[128];
        struct pk p = {0};
        uint8_t base_oid[20];
        blob_name(base, strlen(base), base_oid);
        pk_entry(&p, base_oid, 3, base, strlen(base), 0, NULL);
        blob_name(want, strlen(want), b);
        size_t dl = mk_delta(d, strlen(base), strlen(want), 0, 13, "plus an insert");
        pk_entry(&p, b, 6, d, dl, p.e[0].off, NULL);
        blob_name("copies past its base", 20, bad);
        dl = mk_delta(d, strlen(base), 20, 40, 60, "");
        pk_entry(&p, bad, 6, d, dl, p.e[0].off, NULL);
        blob_name("cycle one", 9, c1);
        blob_name("cycle two", 9, c2);
        dl = mk_delta(d, 9, 9, 0, 9, "");
        pk_entry(&p, c1, 7, d, dl, 0, c2);
        pk_entry(&p, c2, 7, d, dl, 0, c1);
        blob_name("far", 3, off_far);
        pk_entry(&p, off_far, 6, d, dl, 0, NULL); /* rel = its own offset: before "PACK" */
        pk_write(dfd, &p, "1", false);

        struct godb *db = godb_open(dfd, -1, "objects", NULL);
        is_int(godb_has(db, a, GSIDE_BEFORE, true), 1, "a genuine loose object is there");
        ok(godb_read(db, a, GSIDE_BEFORE, 100, &t, &data, &len) == 0 && t == GOBJ_BLOB && len == 6 &&
                   !memcmp(data, hello, 6),
           "and reads back as its blob");
        free(data), data = NULL;
        is_int(godb_has(db, planted, GSIDE_BEFORE, true), 0,
               "a loose file planted under the name of the user's notes is not them (its content hashes elsewhere)");
        is_int(godb_read(db, planted, GSIDE_BEFORE, 100, &t, &data, &len), -EBADMSG, "... and reads as damaged");
        is_int(godb_has(db, huge, GSIDE_BEFORE, true), 0, "a loose object declaring 10^14 bytes is not believed");
        is_int(godb_has(db, junk, GSIDE_BEFORE, true), 0, "a loose file that is not zlib is no object");
        ok(godb_read(db, b, GSIDE_BEFORE, 100, &t, &data, &len) == 0 && len == strlen(want) &&
                   !memcmp(data, want, len),
           "an OFS_DELTA entry is applied to its base");
        free(data), data = NULL;
        is_int(godb_has(db, b, GSIDE_BEFORE, false), 1, "packed objects are found by the index");
        ok(godb_read(db, bad, GSIDE_BEFORE, 100, &t, &data, &len) < 0, "a delta copying past its base is damaged");
        ok(godb_read(db, c1, GSIDE_BEFORE, 100, &t, &data, &len) < 0,
           "two REF_DELTAs based on each other end in an error, not a loop");
        ok(godb_read(db, off_far, GSIDE_BEFORE, 100, &t, &data, &len) < 0,
           "an OFS_DELTA reaching before the pack's start is damaged");
        godb_free(db);

        /* the same pack with an index whose fan-out goes down: not a pack at all */
        unlinkat(dfd, "objects/pack/pack-1.pack", 0);
        unlinkat(dfd, "objects/pack/pack-1.idx", 0);
        struct pk q = {0};
        pk_entry(&q, base_oid, 3, base, strlen(base), 0, NULL);
        pk_write(dfd, &q, "2", true);
        db = godb_open(dfd, -1, "objects", NULL);
        is_int(godb_has(db, base_oid, GSIDE_BEFORE, false), 0, "an index whose fan-out is not sorted is ignored");
        godb_free(db);

        /* a truncated pack: the index's offsets lie past its end */
        struct pk r = {0};
        pk_entry(&r, base_oid, 3, base, strlen(base), 0, NULL);
        pk_write(dfd, &r, "3", false);
        char pp[700];
        snprintf(pp, sizeof(pp), "%s/%s", dir, jp);
        if (truncate(pp, 0) < 0) /* (and the junk loose file emptied) */
                abort();
        snprintf(pp, sizeof(pp), "%s/objects/pack/pack-3.pack", dir);
        if (truncate(pp, 30) < 0)
                abort();
        db = godb_open(dfd, -1, "objects", NULL);
        ok(godb_read(db, base_oid, GSIDE_BEFORE, 100, &t, &data, &len) < 0, "a truncated pack reads as damaged");
        is_int(godb_has(db, junk, GSIDE_BEFORE, false), 0, "an empty loose file is no object");
        godb_free(db);
        close(dfd);
        char cmd[700];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                abort();
}

int main(void)
{
        const char *tmp0 = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
        char sdir[512];
        snprintf(sdir, sizeof(sdir), "%s/txbox-blob-XXXXXX", tmp0);
        if (!mkdtemp(sdir) || (scratch = open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                abort();
        setenv("TXBOX_SCRATCH", sdir, 1);
        test_blob_names();
        test_hostile_store();
        unlinkat(scratch, "blob", 0);
        unlinkat(scratch, "link", 0);
        close(scratch);
        rmdir(sdir);
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
        /* an agent's own edit tool, judged by txbox hook before the edit: no layer yet */
        is_int(lost_nolayer("u1.txt u2.txt u3.txt u4.txt u5.txt u6.txt", TXBOX_MODIFIED), 0,
               "an agent's edit of 6 untracked files (no layer: judged before it is made) is an edit, no loss");
        is_int(lost_nolayer("u1.txt u2.txt u3.txt u4.txt u5.txt u6.txt", TXBOX_DELETED), 6,
               "... its deletion of them is a loss");

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
