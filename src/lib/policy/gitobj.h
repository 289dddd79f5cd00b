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

#include "store/changeset.h"

#define GIT_OID_RAW 20
#define GIT_OID_HEX 40

enum gobj_type { GOBJ_NONE = 0, GOBJ_COMMIT = 1, GOBJ_TREE = 2, GOBJ_BLOB = 3, GOBJ_TAG = 4 };

/* Which store a lookup asks: the workspace's as it was BEFORE the transaction, or as its
 * commit would leave it (AFTER: less the loose files and packs it deletes or rewrites, plus
 * those it writes). */
#define GSIDE_BEFORE 1u
#define GSIDE_AFTER 2u

/* ---- SHA-1 (FIPS 180-4), git's object names ---- */
struct sha1_ctx {
        uint32_t h[5];
        uint8_t buf[64];
        size_t nbuf;
        uint64_t total;
};
void sha1_init(struct sha1_ctx *c);
void sha1_update(struct sha1_ctx *c, const void *data, size_t len);
void sha1_final(struct sha1_ctx *c, uint8_t out[GIT_OID_RAW]);
void sha1(const void *data, size_t len, uint8_t out[GIT_OID_RAW]);

/* 40 hex digits (either case) to 20 bytes; false when s does not start with them. */
bool git_oid_parse(const char *s, uint8_t out[GIT_OID_RAW]);
void git_oid_hex(const uint8_t oid[GIT_OID_RAW], char out[GIT_OID_HEX + 1]);

/* ---- a set of object names ---- */
struct oidset {
        uint8_t (*v)[GIT_OID_RAW];
        uint8_t *used;
        size_t n, cap;
};
/* Adds oid; true when it was not there yet. */
bool oidset_add(struct oidset *s, const uint8_t oid[GIT_OID_RAW]);
bool oidset_has(const struct oidset *s, const uint8_t oid[GIT_OID_RAW]);
void oidset_clear(struct oidset *s);

/* The changeset's change (enum txbox_change) of path, or -1 when it lists none; and the
 * first of its (sorted) paths at or after prefix. */
int gcs_change(const struct changeset *cs, const char *path);
size_t gcs_lower(const struct changeset *cs, const char *prefix);

/* ---- the object database ---- */
struct godb;

/* The store whose objects directory is objdir (workspace-relative, ".git/objects") in the
 * workspace live_fd; upper_fd and cs (both may be absent: -1, NULL) are the transaction's
 * layer and changeset, which say what the store is AFTER it.  Never fails: a store that
 * cannot be read holds nothing. */
struct godb *godb_open(int live_fd, int upper_fd, const char *objdir, const struct changeset *cs);
void godb_free(struct godb *db);

/* Does the transaction add, change or delete anything in the store? */
bool godb_touched(const struct godb *db);

/* Many lookups are coming: read the packs' indexes whole (one read each, instead of a
 * binary search of small reads per lookup). */
void godb_expect_lookups(struct godb *db);

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
