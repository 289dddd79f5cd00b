/* git's object database read without git (gitobj.h).  Formats as git's documentation
 * describes them (gitformat-pack(5), the loose object format of git-hash-object(1)):
 *
 *   loose   objects/XX/YYYY...: zlib of "TYPE SIZE\0" and the content;
 *   index   pack-*.idx: version 2 ("\377tOc", 2, fan-out, names, CRCs, 31-bit offsets,
 *           64-bit offsets, two checksums) or version 1 (fan-out, then offset+name pairs);
 *   pack    pack-*.pack: "PACK", version 2 or 3, entries of a type/size varint and zlib
 *           data; OFS_DELTA (a base earlier in the pack) and REF_DELTA (a base by name)
 *           carry a delta: two size varints, then copy and insert instructions.
 *
 * git itself is never run: its configuration in the workspace could run commands as the
 * user.  Nothing here follows a symlink or trusts a size: see gitobj.h. */
#define _GNU_SOURCE
#include "policy/gitobj.h"

#include <dirent.h>
#include <endian.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/mem.h"
#include "base/str.h"
#include "txbox.h"

#define OBJ_MAX (64u << 20)       /* an object (or a delta base) read for its content */
#define VERIFY_MAX (256ull << 20) /* a loose object hashed only to tell it is genuine */
#define IDX_MAX (512u << 20)      /* a pack index loaded whole */
#define CHAIN_MAX 10000           /* deltas on the way to one object, across packs */
#define REF_DEPTH 64              /* bases by name (REF_DELTA) within one another: each is a recursion */
#define LOOKUPS_LOAD 256          /* lookups before the indexes are read whole */
#define CACHE_SLOTS 251
#define CACHE_BYTES (16u << 20)
#define CACHE_ONE (1u << 20)

/* ---- SHA-1 (FIPS 180-4), git's object names ---- */

struct sha1_ctx {
        uint32_t h[5];
        uint8_t buf[64];
        size_t nbuf;
        uint64_t total;
};

static uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

static void sha1_block(uint32_t h[5], const uint8_t *p)
{
        uint32_t w[80];
        for (int i = 0; i < 16; i++)
                w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
                       p[4 * i + 3];
        for (int i = 16; i < 80; i++)
                w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
        for (int i = 0; i < 80; i++) {
                uint32_t f, k;
                if (i < 20)
                        f = (b & c) | (~b & d), k = 0x5a827999;
                else if (i < 40)
                        f = b ^ c ^ d, k = 0x6ed9eba1;
                else if (i < 60)
                        f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
                else
                        f = b ^ c ^ d, k = 0xca62c1d6;
                uint32_t t = rol(a, 5) + f + e + k + w[i];
                e = d, d = c, c = rol(b, 30), b = a, a = t;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

static void sha1_init(struct sha1_ctx *c)
{
        *c = (struct sha1_ctx){.h = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0}};
}

static void sha1_update(struct sha1_ctx *c, const void *data, size_t len)
{
        const uint8_t *p = data;
        c->total += len;
        if (c->nbuf) {
                size_t n = 64 - c->nbuf < len ? 64 - c->nbuf : len;
                memcpy(c->buf + c->nbuf, p, n);
                c->nbuf += n, p += n, len -= n;
                if (c->nbuf < 64)
                        return;
                sha1_block(c->h, c->buf);
                c->nbuf = 0;
        }
        for (; len >= 64; p += 64, len -= 64)
                sha1_block(c->h, p);
        memcpy(c->buf, p, len);
        c->nbuf = len;
}

static void sha1_final(struct sha1_ctx *c, uint8_t out[GIT_OID_RAW])
{
        uint64_t bits = c->total * 8;
        uint8_t pad[72] = {0x80};
        size_t padlen = (c->nbuf < 56 ? 56 : 120) - c->nbuf;
        for (int i = 0; i < 8; i++)
                pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
        sha1_update(c, pad, padlen + 8);
        for (int i = 0; i < 5; i++)
                for (int j = 0; j < 4; j++)
                        out[4 * i + j] = (uint8_t)(c->h[i] >> (24 - 8 * j));
}

/* ---- a set of object names (open addressing; names are hashes already) ---- */

static void oidset_grow(struct oidset *s)
{
        struct oidset n = {.cap = s->cap ? 2 * s->cap : 64};
        n.v = xcalloc(n.cap, sizeof(*n.v));
        n.used = xcalloc(n.cap, 1);
        for (size_t i = 0; i < s->cap; i++)
                if (s->used[i])
                        oidset_add(&n, s->v[i]);
        oidset_clear(s);
        *s = n;
}

bool oidset_add(struct oidset *s, const uint8_t oid[GIT_OID_RAW])
{
        if ((s->n + 1) * 2 > s->cap)
                oidset_grow(s);
        for (size_t i = oid_slot(oid, s->cap);; i = (i + 1) & (s->cap - 1)) {
                if (!s->used[i]) {
                        s->used[i] = 1;
                        memcpy(s->v[i], oid, GIT_OID_RAW);
                        s->n++;
                        return true;
                }
                if (!memcmp(s->v[i], oid, GIT_OID_RAW))
                        return false;
        }
}

/* ---- the store ---- */

struct gpack {
        int idx_fd, pack_fd;
        unsigned sides;
        int ver; /* of the index: 1 or 2 */
        uint32_t fanout[256], n;
        uint64_t idx_size, pack_size;
        uint8_t *idx; /* the whole index, once many lookups are coming */
        char *name;   /* workspace-relative path of the index */
};

struct gcache_slot {
        size_t pack;
        uint64_t off;
        enum gobj_type type;
        uint8_t *data;
        size_t len;
};

struct godb {
        int live_fd, upper_fd;
        char *objdir;
        const struct changeset *cs;
        bool touched;
        unsigned lookups; /* in the packs: past LOOKUPS_LOAD, their indexes are read whole */
        struct gpack *packs;
        size_t npacks;
        struct gcache_slot cache[CACHE_SLOTS];
        size_t cache_bytes;
        int chain; /* deltas followed for the object being read */
        int ref_depth; /* REF_DELTA bases being read within one another */
};

size_t gcs_lower(const struct changeset *cs, const char *prefix)
{
        size_t lo = 0, hi = cs ? cs->npaths : 0;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (strcmp(cs->paths[mid].path, prefix) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static int pread_full(int fd, void *buf, size_t len, uint64_t off)
{
        uint8_t *p = buf;
        while (len) {
                ssize_t n = pread(fd, p, len, (off_t)off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return -EIO;
                p += n, off += (uint64_t)n, len -= (size_t)n;
        }
        return 0;
}

static uint32_t be32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void pack_close(struct gpack *p)
{
        closep(&p->idx_fd);
        closep(&p->pack_fd);
        free(p->idx);
        free(p->name);
}

/* Open the pack whose index is idx_rel (in idx_root) and data pack_rel (in pack_root). */
static void pack_add(struct godb *db, int idx_root, const char *idx_rel, int pack_root, const char *pack_rel,
                     unsigned sides)
{
        struct gpack p = {.idx_fd = -1, .pack_fd = -1, .sides = sides, .name = xstrdup(idx_rel)};
        struct stat st;
        uint8_t head[8 + 1024], ph[12];

        if ((p.idx_fd = open_beneath_regular(idx_root, idx_rel, &st)) < 0)
                goto bad;
        p.idx_size = (uint64_t)st.st_size;
        if ((p.pack_fd = open_beneath_regular(pack_root, pack_rel, &st)) < 0)
                goto bad;
        p.pack_size = (uint64_t)st.st_size;
        if (p.idx_size < sizeof(head) + 40 || p.pack_size < 12 + 20 || pread_full(p.idx_fd, head, sizeof(head), 0) < 0 ||
            pread_full(p.pack_fd, ph, sizeof(ph), 0) < 0 || memcmp(ph, "PACK", 4) ||
            (be32(ph + 4) != 2 && be32(ph + 4) != 3))
                goto bad;
        const uint8_t *fan = head;
        p.ver = 1;
        if (!memcmp(head, "\377tOc", 4)) {
                if (be32(head + 4) != 2)
                        goto bad;
                p.ver = 2;
                fan = head + 8;
        }
        for (int i = 0; i < 256; i++) {
                p.fanout[i] = be32(fan + 4 * i);
                if (i && p.fanout[i] < p.fanout[i - 1])
                        goto bad;
        }
        p.n = p.fanout[255];
        uint64_t need = p.ver == 2 ? 8 + 1024 + (uint64_t)p.n * 28 + 40 : 1024 + (uint64_t)p.n * 24 + 40;
        if (need > p.idx_size || p.n != be32(ph + 8))
                goto bad;
        db->packs = xrealloc(db->packs, (db->npacks + 1) * sizeof(*db->packs));
        db->packs[db->npacks++] = p;
        return;
bad:
        pack_close(&p);
}

/* Load a pack's index whole (for many lookups). */
static void pack_load(struct gpack *p)
{
        if (p->idx || p->idx_size > IDX_MAX)
                return;
        uint8_t *b = xmalloc((size_t)p->idx_size);
        if (pread_full(p->idx_fd, b, (size_t)p->idx_size, 0) < 0) {
                free(b);
                return;
        }
        p->idx = b;
}

static int pack_name_at(const struct gpack *p, uint32_t i, uint8_t out[GIT_OID_RAW])
{
        uint64_t at = p->ver == 2 ? 8 + 1024 + (uint64_t)i * 20 : 1024 + (uint64_t)i * 24 + 4;
        if (p->idx) {
                memcpy(out, p->idx + at, GIT_OID_RAW);
                return 0;
        }
        return pread_full(p->idx_fd, out, GIT_OID_RAW, at);
}

/* The position of oid in the pack's index, or -1. */
static int64_t pack_find(const struct gpack *p, const uint8_t oid[GIT_OID_RAW])
{
        uint32_t lo = oid[0] ? p->fanout[oid[0] - 1] : 0, hi = p->fanout[oid[0]];
        uint8_t cur[GIT_OID_RAW];
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (pack_name_at(p, mid, cur) < 0)
                        return -1;
                int c = memcmp(cur, oid, GIT_OID_RAW);
                if (!c)
                        return mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

static bool pack_on(const struct gpack *p, unsigned side) { return (p->sides & side) != 0; }

/* The position of oid in pack i if it is on side, or -1.  Many lookups (a commit of many
 * files, a deletion of many tracked ones) read the indexes whole: one read each instead
 * of a binary search of small reads per lookup. */
static int64_t db_find(struct godb *db, size_t i, unsigned side, const uint8_t oid[GIT_OID_RAW])
{
        if (!pack_on(&db->packs[i], side))
                return -1;
        if (db->lookups < LOOKUPS_LOAD && ++db->lookups == LOOKUPS_LOAD)
                for (size_t j = 0; j < db->npacks; j++)
                        pack_load(&db->packs[j]);
        return pack_find(&db->packs[i], oid);
}

static int pack_offset(const struct gpack *p, uint32_t i, uint64_t *off)
{
        uint8_t b[8];
        if (p->ver == 1) {
                if (pread_full(p->idx_fd, b, 4, 1024 + (uint64_t)i * 24) < 0)
                        return -EIO;
                *off = be32(b);
        } else {
                uint64_t base = 8 + 1024 + (uint64_t)p->n * 24;
                if (pread_full(p->idx_fd, b, 4, base + (uint64_t)i * 4) < 0)
                        return -EIO;
                uint32_t o = be32(b);
                if (o & 0x80000000u) {
                        uint64_t at = base + (uint64_t)p->n * 4 + (uint64_t)(o & 0x7fffffffu) * 8;
                        if (at + 8 > p->idx_size - 40 || pread_full(p->idx_fd, b, 8, at) < 0)
                                return -EBADMSG;
                        *off = (uint64_t)be32(b) << 32 | be32(b + 4);
                } else
                        *off = o;
        }
        return *off >= 12 && *off < p->pack_size - 20 ? 0 : -EBADMSG;
}

static void list_packs(struct godb *db)
{
        char *dir = xasprintf("%s/pack", db->objdir);
        int fd = open_beneath(db->live_fd, dir, O_RDONLY | O_DIRECTORY, 0);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d && fd >= 0)
                close(fd);
        for (struct dirent *de; d && (de = readdir(d));) {
                size_t l = strlen(de->d_name);
                if (l < 5 || strcmp(de->d_name + l - 4, ".idx"))
                        continue;
                char *idx = xasprintf("%s/%s", dir, de->d_name);
                char *pack = xasprintf("%s/%.*s.pack", dir, (int)(l - 4), de->d_name);
                int ci = gcs_change(db->cs, idx), cp = gcs_change(db->cs, pack);
                bool stays = (ci < 0 || ci == TXBOX_ADDED) && (cp < 0 || cp == TXBOX_ADDED);
                pack_add(db, db->live_fd, idx, db->live_fd, pack, GSIDE_BEFORE | (stays ? GSIDE_AFTER : 0));
                free(idx);
                free(pack);
        }
        if (d)
                closedir(d);
        /* the packs the transaction writes (or rewrites) */
        char *prefix = xasprintf("%s/", dir);
        for (size_t k = gcs_lower(db->cs, prefix); db->cs && k < db->cs->npaths; k++) {
                const struct txbox_path *tp = &db->cs->paths[k];
                if (!str_has_prefix(tp->path, prefix))
                        break;
                size_t l = strlen(tp->path);
                if (tp->change == TXBOX_DELETED || strchr(tp->path + strlen(prefix), '/') || l < 5 ||
                    strcmp(tp->path + l - 4, ".idx"))
                        continue;
                char *pack = xasprintf("%.*s.pack", (int)(l - 4), tp->path);
                int cp = gcs_change(db->cs, pack);
                if (cp == TXBOX_ADDED || cp == TXBOX_MODIFIED)
                        pack_add(db, db->upper_fd, tp->path, db->upper_fd, pack, GSIDE_AFTER);
                else if (cp < 0)
                        pack_add(db, db->upper_fd, tp->path, db->live_fd, pack, GSIDE_AFTER);
                free(pack);
        }
        free(prefix);
        free(dir);
}

struct godb *godb_open(int live_fd, int upper_fd, const char *objdir, const struct changeset *cs)
{
        struct godb *db = xcalloc(1, sizeof(*db));
        db->live_fd = live_fd;
        db->upper_fd = upper_fd >= 0 && cs ? upper_fd : -1;
        db->cs = db->upper_fd >= 0 ? cs : NULL;
        db->objdir = xstrdup(objdir);
        char *prefix = xasprintf("%s/", objdir);
        size_t k = gcs_lower(db->cs, prefix);
        db->touched = db->cs && k < db->cs->npaths && str_has_prefix(db->cs->paths[k].path, prefix);
        free(prefix);
        list_packs(db);
        return db;
}

static void cache_clear(struct godb *db)
{
        for (size_t i = 0; i < CACHE_SLOTS; i++) {
                free(db->cache[i].data);
                db->cache[i] = (struct gcache_slot){0};
        }
        db->cache_bytes = 0;
}

void godb_free(struct godb *db)
{
        if (!db)
                return;
        for (size_t i = 0; i < db->npacks; i++)
                pack_close(&db->packs[i]);
        free(db->packs);
        cache_clear(db);
        free(db->objdir);
        free(db);
}


/* ---- inflating ---- */

/* Inflate the zlib stream at off in fd into exactly want bytes at out (room for want + 1:
 * a stream that holds more is damaged). */
static int inflate_at(int fd, uint64_t off, uint64_t end, uint8_t *out, size_t want)
{
        z_stream z = {0};
        uint8_t in[16384];
        int r = -EBADMSG;

        if (inflateInit(&z) != Z_OK)
                return -ENOMEM;
        z.next_out = out;
        z.avail_out = (uInt)want + 1;
        for (;;) {
                if (!z.avail_in) {
                        if (off >= end)
                                break;
                        size_t n = end - off < sizeof(in) ? (size_t)(end - off) : sizeof(in);
                        if (!n || pread_full(fd, in, n, off) < 0)
                                break;
                        off += n;
                        z.next_in = in;
                        z.avail_in = (uInt)n;
                }
                int zr = inflate(&z, Z_NO_FLUSH);
                if (zr == Z_STREAM_END) {
                        r = z.total_out == want ? 0 : -EBADMSG;
                        break;
                }
                if (zr != Z_OK)
                        break;
        }
        inflateEnd(&z);
        return r;
}

static enum gobj_type type_named(const char *s, size_t n)
{
        static const char *const names[] = {[GOBJ_COMMIT] = "commit", [GOBJ_TREE] = "tree", [GOBJ_BLOB] = "blob",
                                            [GOBJ_TAG] = "tag"};
        for (int t = GOBJ_COMMIT; t <= GOBJ_TAG; t++)
                if (strlen(names[t]) == n && !memcmp(names[t], s, n))
                        return (enum gobj_type)t;
        return GOBJ_NONE;
}

static const char *type_name(enum gobj_type t)
{
        return t == GOBJ_COMMIT ? "commit" : t == GOBJ_TREE ? "tree" : t == GOBJ_BLOB ? "blob" : "tag";
}

static bool hashes_to(enum gobj_type t, const uint8_t *data, size_t len, const uint8_t oid[GIT_OID_RAW])
{
        char head[48];
        int hl = snprintf(head, sizeof(head), "%s %zu", type_name(t), len);
        struct sha1_ctx c;
        uint8_t got[GIT_OID_RAW];
        sha1_init(&c);
        sha1_update(&c, head, (size_t)hl + 1);
        sha1_update(&c, data, len);
        sha1_final(&c, got);
        return !memcmp(got, oid, GIT_OID_RAW);
}

/* A loose object: inflated as a stream and hashed as it goes; it is genuine only when its
 * content hashes to its name.  keep: return its content (at most max bytes). */
static int loose_read(int root, const char *rel, const uint8_t oid[GIT_OID_RAW], size_t max, bool keep,
                      enum gobj_type *type, uint8_t **data, size_t *len)
{
        _cleanup_close_ int fd = open_beneath_regular(root, rel, NULL);
        if (fd < 0)
                return fd == -ENOENT || fd == -ENOTDIR ? -ENOENT : -EBADMSG;
        z_stream z = {0};
        uint8_t in[16384], out[65536], head[40];
        size_t nhead = 0, body = 0, size = 0;
        bool have_head = false, end = false;
        uint8_t *buf = NULL;
        struct sha1_ctx c;
        int r = -EBADMSG;

        if (inflateInit(&z) != Z_OK)
                return -ENOMEM;
        sha1_init(&c);
        while (!end) {
                if (!z.avail_in) {
                        ssize_t n = read(fd, in, sizeof(in));
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n <= 0)
                                goto out;
                        z.next_in = in;
                        z.avail_in = (uInt)n;
                }
                z.next_out = out;
                z.avail_out = sizeof(out);
                int zr = inflate(&z, Z_NO_FLUSH);
                if (zr != Z_OK && zr != Z_STREAM_END)
                        goto out;
                end = zr == Z_STREAM_END;
                size_t got = sizeof(out) - z.avail_out, at = 0;
                sha1_update(&c, out, got);
                while (!have_head && at < got) { /* "TYPE SIZE\0" */
                        if (nhead >= sizeof(head))
                                goto out;
                        head[nhead++] = out[at++];
                        if (head[nhead - 1])
                                continue;
                        const char *sp = memchr(head, ' ', nhead);
                        if (!sp || !(*type = type_named((const char *)head, (size_t)(sp - (const char *)head))))
                                goto out;
                        char *e;
                        errno = 0;
                        unsigned long long v = strtoull(sp + 1, &e, 10);
                        if (errno || *e || e == sp + 1 || (keep ? v > max : v > VERIFY_MAX))
                                goto out;
                        size = (size_t)v;
                        have_head = true;
                        if (keep)
                                buf = xmalloc(size + 1);
                }
                if (got - at > size - body)
                        goto out; /* more than it says it holds */
                if (buf)
                        memcpy(buf + body, out + at, got - at);
                body += got - at;
        }
        uint8_t name[GIT_OID_RAW];
        sha1_final(&c, name);
        if (have_head && body == size && !memcmp(name, oid, GIT_OID_RAW)) {
                r = 0;
                if (keep) {
                        buf[size] = 0;
                        *data = buf;
                        *len = size;
                        buf = NULL;
                }
        }
out:
        inflateEnd(&z);
        free(buf);
        return r;
}

static void loose_rel(const struct godb *db, const uint8_t oid[GIT_OID_RAW], char *out, size_t size)
{
        char hex[GIT_OID_HEX + 1];
        git_oid_hex(oid, hex);
        snprintf(out, size, "%s/%.2s/%s", db->objdir, hex, hex + 2);
}

/* Where a loose object is on side: the root to read it from, or -1. */
static int loose_root(const struct godb *db, const char *rel, unsigned side)
{
        int ch = side == GSIDE_AFTER ? gcs_change(db->cs, rel) : -1;
        if (ch == TXBOX_DELETED)
                return -1;
        return ch == TXBOX_ADDED || ch == TXBOX_MODIFIED ? db->upper_fd : db->live_fd;
}

/* ---- packed objects ---- */

static struct gcache_slot *cache_slot(struct godb *db, size_t pack, uint64_t off)
{
        return &db->cache[(pack * 7919 + off) % CACHE_SLOTS];
}

static void cache_put(struct godb *db, size_t pack, uint64_t off, enum gobj_type t, const uint8_t *data, size_t len)
{
        if (len > CACHE_ONE)
                return;
        if (db->cache_bytes + len > CACHE_BYTES)
                cache_clear(db);
        struct gcache_slot *s = cache_slot(db, pack, off);
        db->cache_bytes -= s->len;
        free(s->data);
        *s = (struct gcache_slot){.pack = pack, .off = off, .type = t, .len = len, .data = xmalloc(len + 1)};
        memcpy(s->data, data, len);
        s->data[len] = 0;
        db->cache_bytes += len;
}

/* An entry's header at off: type, size, and where its data starts; base_off for an
 * OFS_DELTA, base for a REF_DELTA. */
static int entry_header(const struct gpack *p, uint64_t off, int *type, uint64_t *size, uint64_t *data_off,
                        uint64_t *base_off, uint8_t base[GIT_OID_RAW])
{
        uint8_t h[64];
        size_t n = p->pack_size - 20 - off < sizeof(h) ? (size_t)(p->pack_size - 20 - off) : sizeof(h), i = 0;
        if (n < 2 || pread_full(p->pack_fd, h, n, off) < 0)
                return -EBADMSG;
        uint8_t c = h[i++];
        *type = (c >> 4) & 7;
        *size = c & 15;
        for (int shift = 4; c & 0x80; shift += 7) {
                if (i >= n || shift > 57)
                        return -EBADMSG;
                c = h[i++];
                *size |= (uint64_t)(c & 0x7f) << shift;
        }
        if (*type == 6) { /* OFS_DELTA: a base this far before */
                if (i >= n)
                        return -EBADMSG;
                c = h[i++];
                uint64_t rel = c & 0x7f;
                while (c & 0x80) {
                        if (i >= n || rel > (UINT64_MAX >> 8))
                                return -EBADMSG;
                        c = h[i++];
                        rel = ((rel + 1) << 7) | (c & 0x7f);
                }
                if (!rel || rel > off - 12)
                        return -EBADMSG;
                *base_off = off - rel;
        } else if (*type == 7) { /* REF_DELTA: a base by name */
                if (i + GIT_OID_RAW > n)
                        return -EBADMSG;
                memcpy(base, h + i, GIT_OID_RAW);
                i += GIT_OID_RAW;
        } else if (*type < GOBJ_COMMIT || *type > GOBJ_TAG)
                return -EBADMSG;
        *data_off = off + i;
        return 0;
}

static uint64_t delta_varint(const uint8_t **p, const uint8_t *end, bool *ok)
{
        uint64_t v = 0;
        for (int shift = 0;; shift += 7) {
                if (*p >= end || shift > 56) {
                        *ok = false;
                        return 0;
                }
                uint8_t c = *(*p)++;
                v |= (uint64_t)(c & 0x7f) << shift;
                if (!(c & 0x80))
                        return v;
        }
}

/* Apply a delta to base: the result (malloc'd, NUL-terminated) or NULL when it is damaged. */
static uint8_t *delta_apply(const uint8_t *base, size_t blen, const uint8_t *d, size_t dlen, size_t *olen)
{
        const uint8_t *p = d, *end = d + dlen;
        bool ok = true;
        uint64_t src = delta_varint(&p, end, &ok), dst = delta_varint(&p, end, &ok);
        if (!ok || src != blen || dst > OBJ_MAX)
                return NULL;
        uint8_t *out = xmalloc((size_t)dst + 1);
        size_t o = 0;
        while (p < end) {
                uint8_t op = *p++;
                if (op & 0x80) { /* copy from the base */
                        uint64_t cof = 0, csz = 0;
                        for (int b = 0; b < 4; b++)
                                if (op & (1 << b)) {
                                        if (p >= end)
                                                goto bad;
                                        cof |= (uint64_t)*p++ << (8 * b);
                                }
                        for (int b = 0; b < 3; b++)
                                if (op & (0x10 << b)) {
                                        if (p >= end)
                                                goto bad;
                                        csz |= (uint64_t)*p++ << (8 * b);
                                }
                        if (!csz)
                                csz = 0x10000;
                        if (cof + csz > blen || csz > dst - o)
                                goto bad;
                        memcpy(out + o, base + cof, (size_t)csz);
                        o += (size_t)csz;
                } else if (op) { /* insert the next op bytes */
                        if ((size_t)(end - p) < op || op > dst - o)
                                goto bad;
                        memcpy(out + o, p, op);
                        o += op, p += op;
                } else
                        goto bad; /* reserved */
        }
        if (o != dst)
                goto bad;
        out[o] = 0;
        *olen = o;
        return out;
bad:
        free(out);
        return NULL;
}

static int godb_read_side(struct godb *db, const uint8_t oid[GIT_OID_RAW], unsigned side, size_t max,
                          enum gobj_type *type, uint8_t **data, size_t *len, bool verify);

/* The object at off in pack pk: its type and content (at most OBJ_MAX bytes). */
static int pack_read(struct godb *db, size_t pk, uint64_t off, unsigned side, enum gobj_type *type, uint8_t **data,
                     size_t *len)
{
        const struct gpack *p = &db->packs[pk];
        struct step {
                uint64_t off, data_off, size;
        } *chain = NULL;
        size_t n = 0, cap = 0;
        uint8_t *cur = NULL;
        size_t clen = 0;
        enum gobj_type ct = GOBJ_NONE;
        int r = 0;

        for (;;) { /* down to a base: a plain object, a cached one, or one by name */
                struct gcache_slot *s = cache_slot(db, pk, off);
                if (s->data && s->pack == pk && s->off == off) {
                        ct = s->type;
                        clen = s->len;
                        cur = xmalloc(clen + 1);
                        memcpy(cur, s->data, clen + 1);
                        break;
                }
                int t;
                uint64_t size, data_off, base_off = 0;
                uint8_t base[GIT_OID_RAW];
                if ((r = entry_header(p, off, &t, &size, &data_off, &base_off, base)) < 0)
                        goto out;
                if (++db->chain > CHAIN_MAX || size > OBJ_MAX) {
                        r = size > OBJ_MAX ? -EFBIG : -EBADMSG;
                        goto out;
                }
                if (t < 6) {
                        cur = xmalloc((size_t)size + 1);
                        if ((r = inflate_at(p->pack_fd, data_off, p->pack_size - 20, cur, (size_t)size)) < 0)
                                goto out;
                        cur[size] = 0;
                        ct = (enum gobj_type)t;
                        clen = (size_t)size;
                        cache_put(db, pk, off, ct, cur, clen);
                        break;
                }
                if (n == cap)
                        chain = xrealloc(chain, (cap = cap ? 2 * cap : 8) * sizeof(*chain));
                chain[n++] = (struct step){.off = off, .data_off = data_off, .size = size};
                if (t == 6) {
                        off = base_off;
                        continue;
                }
                if (++db->ref_depth > REF_DEPTH) {
                        db->ref_depth--;
                        r = -EBADMSG;
                        goto out;
                }
                r = godb_read_side(db, base, side, OBJ_MAX, &ct, &cur, &clen, true);
                db->ref_depth--;
                if (r < 0)
                        goto out;
                break;
        }
        while (n--) { /* the deltas, from the base up */
                uint8_t *d = xmalloc((size_t)chain[n].size + 1), *next = NULL;
                size_t nlen = 0;
                if ((r = inflate_at(p->pack_fd, chain[n].data_off, p->pack_size - 20, d, (size_t)chain[n].size)) == 0 &&
                    !(next = delta_apply(cur, clen, d, (size_t)chain[n].size, &nlen)))
                        r = -EBADMSG;
                free(d);
                free(cur);
                cur = next;
                clen = nlen;
                if (r < 0)
                        goto out;
                cache_put(db, pk, chain[n].off, ct, cur, clen);
        }
        *type = ct;
        *data = cur;
        *len = clen;
        cur = NULL;
out:
        free(cur);
        free(chain);
        return r;
}

static int godb_read_side(struct godb *db, const uint8_t oid[GIT_OID_RAW], unsigned side, size_t max,
                          enum gobj_type *type, uint8_t **data, size_t *len, bool verify)
{
        char rel[PATH_MAX];
        int r = -ENOENT;

        for (size_t i = 0; i < db->npacks; i++) {
                int64_t at = db_find(db, i, side, oid);
                uint64_t off;
                if (at < 0)
                        continue;
                int pr = pack_offset(&db->packs[i], (uint32_t)at, &off);
                if (pr == 0 && (pr = pack_read(db, i, off, side, type, data, len)) == 0) {
                        if (*len > max)
                                pr = -EFBIG;
                        else if (verify && !hashes_to(*type, *data, *len, oid))
                                pr = -EBADMSG;
                        if (pr == 0)
                                return 0;
                        free(*data);
                        *data = NULL;
                }
                if (pr == -EFBIG)
                        return pr;
                r = pr; /* a damaged copy: another may serve */
        }
        loose_rel(db, oid, rel, sizeof(rel));
        int root = loose_root(db, rel, side);
        int lr = root < 0 ? -ENOENT : loose_read(root, rel, oid, max, true, type, data, len);
        return lr == -ENOENT ? r : lr;
}

int godb_read(struct godb *db, const uint8_t oid[GIT_OID_RAW], unsigned side, size_t max, enum gobj_type *type,
              uint8_t **data, size_t *len)
{
        uint8_t *d = NULL;
        size_t l = 0;
        enum gobj_type t = GOBJ_NONE;
        db->chain = 0;
        db->ref_depth = 0;
        int r = godb_read_side(db, oid, side, max, &t, &d, &l, true);
        if (r < 0)
                return r;
        *type = t;
        if (data) {
                *data = d;
                *len = l;
        } else
                free(d);
        return 0;
}

int godb_has(struct godb *db, const uint8_t oid[GIT_OID_RAW], unsigned side, bool verify)
{
        for (size_t i = 0; i < db->npacks; i++)
                if (db_find(db, i, side, oid) >= 0)
                        return 1;
        char rel[PATH_MAX];
        loose_rel(db, oid, rel, sizeof(rel));
        int root = loose_root(db, rel, side);
        if (root < 0)
                return 0;
        if (verify) {
                enum gobj_type t;
                return loose_read(root, rel, oid, 0, false, &t, NULL, NULL) == 0;
        }
        struct stat st;
        return lstat_beneath(root, rel, &st) >= 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

int godb_vanished(struct godb *db, struct oidset *out)
{
        if (!db->touched)
                return 0;
        for (size_t i = 0; i < db->npacks; i++)
                if (pack_on(&db->packs[i], GSIDE_AFTER))
                        pack_load(&db->packs[i]); /* every name below is looked up there */
        char *prefix = xasprintf("%s/", db->objdir);
        size_t pl = strlen(prefix);
        uint8_t oid[GIT_OID_RAW];
        for (size_t k = gcs_lower(db->cs, prefix); k < db->cs->npaths; k++) {
                const struct txbox_path *tp = &db->cs->paths[k];
                if (!str_has_prefix(tp->path, prefix))
                        break;
                const char *r = tp->path + pl; /* XX/YYYY... */
                char hex[GIT_OID_HEX + 1];
                if (tp->change == TXBOX_ADDED || strlen(r) != GIT_OID_HEX + 1 || r[2] != '/')
                        continue;
                snprintf(hex, sizeof(hex), "%.2s%s", r, r + 3);
                /* a loose object rewritten in place must prove itself */
                if (git_oid_parse(hex, oid) && !godb_has(db, oid, GSIDE_AFTER, true))
                        oidset_add(out, oid);
        }
        free(prefix);
        int r = 0;
        for (size_t i = 0; i < db->npacks; i++) {
                struct gpack *p = &db->packs[i];
                if (!pack_on(p, GSIDE_BEFORE) || pack_on(p, GSIDE_AFTER))
                        continue;
                pack_load(p);
                if (!p->idx) {
                        r = -EFBIG;
                        continue;
                }
                for (uint32_t j = 0; j < p->n; j++) {
                        pack_name_at(p, j, oid);
                        if (!godb_has(db, oid, GSIDE_AFTER, false))
                                oidset_add(out, oid);
                }
        }
        return r;
}

int git_blob_name_at(int root, const char *path, uint8_t oid[GIT_OID_RAW], uint8_t head[8])
{
        struct stat st;
        _cleanup_close_ int fd = open_beneath_regular(root, path, &st);
        if (fd < 0)
                return fd;
        char hdr[32], buf[65536];
        int hl = snprintf(hdr, sizeof(hdr), "blob %lld", (long long)st.st_size);
        struct sha1_ctx c;
        if (head)
                memset(head, 0, 8);
        sha1_init(&c);
        sha1_update(&c, hdr, (size_t)hl + 1);
        uint64_t total = 0;
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (!n)
                        break;
                if (head && total < 8)
                        memcpy(head + total, buf, (size_t)n < 8 - total ? (size_t)n : 8 - total);
                sha1_update(&c, buf, (size_t)n);
                total += (uint64_t)n;
        }
        if (total != (uint64_t)st.st_size)
                return -EAGAIN; /* it changed while read */
        sha1_final(&c, oid);
        return 0;
}
