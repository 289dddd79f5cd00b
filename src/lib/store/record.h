/* Transaction records: names of enum values, deep copies and the JSON form (docs/CONTRACT.md,
 * "JSON records").  The public half (txbox_record_clear, txbox_record_json, ...) is declared
 * in txbox.h; these are the helpers other modules (audit store, MCP server) share. */
#ifndef TXBOX_RECORD_H
#define TXBOX_RECORD_H

#include <jansson.h>

#include "txbox.h"

/* The enum value for a name from txbox_outcome_name(); -1 when unknown or NULL. */
int txbox_outcome_parse(const char *s);
/* The enum value for a name from txbox_change_name(); -1 when unknown or NULL. */
int txbox_change_parse(const char *s);
/* The enum value for a name from txbox_sp_outcome_name(); -1 when unknown or NULL. */
int txbox_sp_outcome_parse(const char *s);

/* A session's savepoints: free them all; append one for argv (copied; exit_code -1, the
 * rest zero), returned to fill in. */
void record_clear_savepoints(struct txbox_record *rec);
struct txbox_savepoint *record_add_savepoint(struct txbox_record *rec, char *const *argv);

/* The record as a new JSON object (the docs/CONTRACT.md fields, then cwd, started_ms, message,
 * commit_seq).  Never NULL (aborts on out-of-memory, like xmalloc). */
json_t *record_to_json(const struct txbox_record *rec);

/* Deep copy of src into dst.  dst is overwritten without being freed: pass an empty or
 * cleared record.  src's argv NULL gives an empty (non-NULL) argv. */
void record_copy(struct txbox_record *dst, const struct txbox_record *src);

/* Replace rec's paths (only) with deep copies of these. */
void record_set_paths(struct txbox_record *rec, const struct txbox_path *paths, size_t npaths);
/* Replace rec's paths and violations with deep copies of these. */
void record_set_changes(struct txbox_record *rec, const struct txbox_path *paths, size_t npaths,
                        const struct txbox_violation *violations, size_t nviolations);

/* A JSON value for a C string: null for NULL, the string itself when it is valid UTF-8,
 * else a copy with every invalid byte replaced by U+FFFD (file names and arguments are
 * bytes, JSON text is Unicode).  Never NULL. */
json_t *jv_text(const char *s);

/* s with every byte that is not part of valid UTF-8 replaced by U+FFFD; malloc'd. */
char *utf8_lossy(const char *s);

/* jansson reports out-of-memory as NULL or -1; like xmalloc, these abort then. */
json_t *jv_nonnull(json_t *j);
void jv_set(json_t *obj, const char *key, json_t *val); /* steals val */
void jv_push(json_t *arr, json_t *val);                  /* steals val */
/* Compact JSON text of j (malloc'd, no trailing newline); drops the reference to j. */
char *jv_dump(json_t *j);

#endif
