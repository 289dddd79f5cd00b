/* git's object database read without git (gitobj.c): loose objects and packs (index
 * versions 1 and 2, pack versions 2 and 3, both kinds of delta), as git's documentation of
 * its formats describes them, in the workspace as it was before a transaction and as its
 * commit would leave it.  Every byte read here lies in the workspace or in the transaction's
 * layer and is hostile input: files are opened beneath their root without following a
 * symlink, every size, offset, varint and delta instruction is bounded and checked, and an
 * object read for its content is hashed and compared with its name, so that a file planted
 * under an object's name cannot pass for it. */
#ifndef TXBOX_GITOBJ_H
#define TXBOX_GITOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/changeset.h"
#include "txbox.h"

#define GIT_OID_RAW 20
#define GIT_OID_HEX 40

enum gobj_type { GOBJ_NONE = 0, GOBJ_COMMIT = 1, GOBJ_TREE = 2, GOBJ_BLOB = 3, GOBJ_TAG = 4 };

/* Which store a lookup asks: the workspace's as it was BEFORE the transaction, or as its
 * commit would leave it (AFTER: less the loose files and packs it deletes or rewrites, plus
 * those it writes). */
#define GSIDE_BEFORE 1u
#define GSIDE_AFTER 2u

/* 40 hex digits (either case) to 20 bytes; false when s does not start with them. */
static inline bool git_oid_parse(const char *s, uint8_t out[GIT_OID_RAW])
{
        for (int i = 0; i < GIT_OID_RAW; i++) {
                int v[2];
                for (int j = 0; j < 2; j++) {
                        char c = s[2 * i + j];
                        v[j] = c >= '0' && c <= '9'   ? c - '0'
                               : c >= 'a' && c <= 'f' ? c - 'a' + 10
                               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                      : -1;
                        if (v[j] < 0)
                                return false;
                }
                out[i] = (uint8_t)(v[0] << 4 | v[1]);
        }
        return true;
}

static inline void git_oid_hex(const uint8_t oid[GIT_OID_RAW], char out[GIT_OID_HEX + 1])
{
        static const char d[] = "0123456789abcdef";
        for (int i = 0; i < GIT_OID_RAW; i++) {
                out[2 * i] = d[oid[i] >> 4];
                out[2 * i + 1] = d[oid[i] & 15];
        }
        out[GIT_OID_HEX] = '\0';
}

/* The blob name of the regular file path beneath root (its content hashed as git would,
 * SHA-1 of "blob SIZE\0" and the content), and (head, may be NULL) its first 8 bytes,
 * zeros beyond its end.  0, or -errno (-EAGAIN: it changed while read). */
int git_blob_name_at(int root, const char *path, uint8_t oid[GIT_OID_RAW], uint8_t head[8]);

/* ---- a set of object names ---- */
struct oidset {
        uint8_t (*v)[GIT_OID_RAW];
        uint8_t *used;
        size_t n, cap;
};
/* Adds oid; true when it was not there yet. */
bool oidset_add(struct oidset *s, const uint8_t oid[GIT_OID_RAW]);
/* open addressing; names are hashes already: their first bytes are the slot */
static inline size_t oid_slot(const uint8_t oid[GIT_OID_RAW], size_t cap)
{
        uint64_t h;
        memcpy(&h, oid, sizeof(h));
        return (size_t)(h & (cap - 1));
}
static inline bool oidset_has(const struct oidset *s, const uint8_t oid[GIT_OID_RAW])
{
        if (!s->n)
                return false;
        for (size_t i = oid_slot(oid, s->cap); s->used[i]; i = (i + 1) & (s->cap - 1))
                if (!memcmp(s->v[i], oid, GIT_OID_RAW))
                        return true;
        return false;
}
static inline void oidset_clear(struct oidset *s)
{
        free(s->v);
        free(s->used);
        *s = (struct oidset){0};
}

/* The first of the changeset's (sorted) paths at or after prefix; and the changeset's
 * change (enum txbox_change) of path, or -1 when it lists none. */
size_t gcs_lower(const struct changeset *cs, const char *prefix);
static inline int gcs_change(const struct changeset *cs, const char *path)
{
        size_t k = gcs_lower(cs, path);
        return cs && k < cs->npaths && !strcmp(cs->paths[k].path, path) ? (int)cs->paths[k].change : -1;
}

/* ---- the object database ---- */
struct godb;

/* The store whose objects directory is objdir (workspace-relative, ".git/objects") in the
 * workspace live_fd; upper_fd and cs (both may be absent: -1, NULL) are the transaction's
 * layer and changeset, which say what the store is AFTER it.  Never fails: a store that
 * cannot be read holds nothing. */
struct godb *godb_open(int live_fd, int upper_fd, const char *objdir, const struct changeset *cs);
void godb_free(struct godb *db);

/* 1 when the object is in the store on side (a loose one that verify asks for only when
 * its content hashes to its name), 0 when it is not. */
int godb_has(struct godb *db, const uint8_t oid[GIT_OID_RAW], unsigned side, bool verify);

/* Read an object on side: its type, and its content (malloc'd, NUL-terminated, *len bytes)
 * when data is not NULL.  At most max bytes.  0, -ENOENT when it is not there, -EFBIG over
 * max, -EBADMSG when it is damaged or its content does not hash to its name. */
int godb_read(struct godb *db, const uint8_t oid[GIT_OID_RAW], unsigned side, size_t max,
              enum gobj_type *type, uint8_t **data, size_t *len);

/* Every object that was in the store BEFORE and is nowhere in it AFTER (its loose file or
 * pack deleted or rewritten, and no copy left or written elsewhere): added to out.
 * -errno when a removed pack could not be listed (the caller cannot judge). */
int godb_vanished(struct godb *db, struct oidset *out);

#endif
