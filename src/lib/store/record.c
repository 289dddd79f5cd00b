/* Transaction records: freeing, copying, enum names and the JSON form. */
#include <string.h>

#include "base/cleanup.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"
#include "store/record.h"
#include "txbox.h"

static const char *const outcome_names[] = {
        [TXBOX_RUNNING] = "running",         [TXBOX_PENDING] = "pending",
        [TXBOX_COMMITTING] = "committing",   [TXBOX_COMMITTED] = "committed",
        [TXBOX_ROLLED_BACK] = "rolled_back", [TXBOX_DENIED] = "denied",
        [TXBOX_UNDOING] = "undoing",         [TXBOX_UNDONE] = "undone",
};

static const char *const change_names[] = {
        [TXBOX_ADDED] = "added",
        [TXBOX_MODIFIED] = "modified",
        [TXBOX_DELETED] = "deleted",
};

static const char *const sp_outcome_names[] = {
        [TXBOX_SP_KEPT] = "kept",
        [TXBOX_SP_DROPPED] = "dropped",
        [TXBOX_SP_DENIED] = "denied",
        [TXBOX_SP_ROLLED_BACK] = "rolled_back",
};

static int name_index(const char *const *names, size_t n, const char *s)
{
        if (!s)
                return -1;
        for (size_t i = 0; i < n; i++)
                if (!strcmp(names[i], s))
                        return (int)i;
        return -1;
}

TXBOX_API const char *txbox_outcome_name(enum txbox_outcome o)
{
        /* "unknown" rather than NULL: callers pass the result straight to printf and JSON. */
        return (unsigned)o < ARRAY_SIZE(outcome_names) ? outcome_names[o] : "unknown";
}

TXBOX_API const char *txbox_change_name(enum txbox_change c)
{
        return (unsigned)c < ARRAY_SIZE(change_names) ? change_names[c] : "unknown";
}

TXBOX_API const char *txbox_sp_outcome_name(enum txbox_sp_outcome o)
{
        return (unsigned)o < ARRAY_SIZE(sp_outcome_names) ? sp_outcome_names[o] : "unknown";
}

int txbox_sp_outcome_parse(const char *s)
{
        return name_index(sp_outcome_names, ARRAY_SIZE(sp_outcome_names), s);
}

int txbox_outcome_parse(const char *s)
{
        return name_index(outcome_names, ARRAY_SIZE(outcome_names), s);
}

int txbox_change_parse(const char *s)
{
        return name_index(change_names, ARRAY_SIZE(change_names), s);
}

/* ---- freeing and copying ---- */

void record_clear_savepoints(struct txbox_record *rec)
{
        for (size_t i = 0; i < rec->nsavepoints; i++)
                strv_free(rec->savepoints[i].argv);
        free(rec->savepoints);
        rec->savepoints = NULL;
        rec->nsavepoints = 0;
}

struct txbox_savepoint *record_add_savepoint(struct txbox_record *rec, char *const *argv)
{
        rec->savepoints = xrealloc(rec->savepoints, (rec->nsavepoints + 1) * sizeof(*rec->savepoints));
        struct txbox_savepoint *sp = &rec->savepoints[rec->nsavepoints++];
        *sp = (struct txbox_savepoint){.argv = strv_dup(argv), .exit_code = -1};
        return sp;
}

static void free_changes(struct txbox_record *rec)
{
        for (size_t i = 0; i < rec->npaths; i++)
                free(rec->paths[i].path);
        free(rec->paths);
        for (size_t i = 0; i < rec->nviolations; i++) {
                free(rec->violations[i].rule);
                free(rec->violations[i].path);
                free(rec->violations[i].detail);
        }
        free(rec->violations);
}

void record_set_changes(struct txbox_record *rec, const struct txbox_path *paths, size_t npaths,
                        const struct txbox_violation *violations, size_t nviolations)
{
        free_changes(rec);
        rec->paths = xcalloc(npaths + 1, sizeof(*rec->paths));
        for (size_t i = 0; i < npaths; i++)
                rec->paths[i] = (struct txbox_path){xstrdup(paths[i].path), paths[i].change};
        rec->npaths = npaths;
        rec->violations = xcalloc(nviolations + 1, sizeof(*rec->violations));
        for (size_t i = 0; i < nviolations; i++)
                rec->violations[i] = (struct txbox_violation){xstrdup_or_null(violations[i].rule),
                                                              xstrdup_or_null(violations[i].path),
                                                              xstrdup_or_null(violations[i].detail)};
        rec->nviolations = nviolations;
}

void record_set_paths(struct txbox_record *rec, const struct txbox_path *paths, size_t npaths)
{
        for (size_t i = 0; i < rec->npaths; i++)
                free(rec->paths[i].path);
        free(rec->paths);
        rec->paths = xcalloc(npaths + 1, sizeof(*rec->paths));
        for (size_t i = 0; i < npaths; i++)
                rec->paths[i] = (struct txbox_path){xstrdup(paths[i].path), paths[i].change};
        rec->npaths = npaths;
}

TXBOX_API void txbox_record_clear(struct txbox_record *rec)
{
        if (!rec)
                return;
        strv_free(rec->argv);
        free(rec->cwd);
        free(rec->decision);
        free(rec->rule);
        free(rec->reason);
        free_changes(rec);
        free(rec->message);
        free(rec->env_dropped);
        free(rec->net_log);
        record_clear_savepoints(rec);
        memset(rec, 0, sizeof(*rec));
}

TXBOX_API void txbox_records_free(struct txbox_record *recs, size_t n)
{
        if (!recs)
                return;
        for (size_t i = 0; i < n; i++)
                txbox_record_clear(&recs[i]);
        free(recs);
}

void record_copy(struct txbox_record *dst, const struct txbox_record *src)
{
        *dst = *src; /* scalars and id; every pointer is replaced below */
        dst->argv = strv_dup(src->argv);
        dst->cwd = xstrdup_or_null(src->cwd);
        dst->decision = xstrdup_or_null(src->decision);
        dst->rule = xstrdup_or_null(src->rule);
        dst->reason = xstrdup_or_null(src->reason);
        dst->message = xstrdup_or_null(src->message);
        dst->env_dropped = xstrdup_or_null(src->env_dropped);
        dst->net_log = xstrdup_or_null(src->net_log);
        dst->paths = src->npaths ? xcalloc(src->npaths, sizeof(*dst->paths)) : NULL;
        for (size_t i = 0; i < src->npaths; i++) {
                dst->paths[i].path = xstrdup_or_null(src->paths[i].path);
                dst->paths[i].change = src->paths[i].change;
        }
        dst->savepoints = src->nsavepoints ? xcalloc(src->nsavepoints, sizeof(*dst->savepoints)) : NULL;
        for (size_t i = 0; i < src->nsavepoints; i++) {
                dst->savepoints[i] = src->savepoints[i];
                dst->savepoints[i].argv = strv_dup(src->savepoints[i].argv);
        }
        dst->violations = src->nviolations ? xcalloc(src->nviolations, sizeof(*dst->violations))
                                           : NULL;
        for (size_t i = 0; i < src->nviolations; i++) {
                dst->violations[i].rule = xstrdup_or_null(src->violations[i].rule);
                dst->violations[i].path = xstrdup_or_null(src->violations[i].path);
                dst->violations[i].detail = xstrdup_or_null(src->violations[i].detail);
        }
}

/* ---- UTF-8 ---- */

/* Length of the well-formed UTF-8 sequence at s (1..4), 0 when s starts an ill-formed one:
 * overlong forms, surrogates and code points past U+10FFFF are ill-formed (RFC 3629), the
 * same rules jansson applies. */
static size_t utf8_seq_len(const unsigned char *s)
{
        unsigned c = s[0], cp, min;
        size_t n;

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                n = 2, cp = c & 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0)
                n = 3, cp = c & 0x0f, min = 0x800;
        else if (c >= 0xf0 && c <= 0xf4)
                n = 4, cp = c & 0x07, min = 0x10000;
        else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return n;
}

char *utf8_lossy(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        char *out = xmalloc(strlen(s) * 3 + 1), *o = out;

        while (*p) {
                size_t n = utf8_seq_len(p);
                if (n) {
                        memcpy(o, p, n);
                        o += n;
                        p += n;
                } else {
                        memcpy(o, "\xef\xbf\xbd", 3);
                        o += 3;
                        p++;
                }
        }
        *o = '\0';
        return out;
}

/* ---- JSON ---- */

/* jansson reports out-of-memory as NULL; the library's policy (xmalloc) is to abort then. */
json_t *jv_nonnull(json_t *j)
{
        if (!j)
                abort();
        return j;
}

void jv_set(json_t *obj, const char *key, json_t *val)
{
        if (json_object_set_new(obj, key, jv_nonnull(val)) < 0)
                abort();
}

void jv_push(json_t *arr, json_t *val)
{
        if (json_array_append_new(arr, jv_nonnull(val)) < 0)
                abort();
}

char *jv_dump(json_t *j)
{
        /* One line with the separators docs/CONTRACT.md shows (", " and ": "). */
        char *s = json_dumps(j, JSON_PRESERVE_ORDER);
        json_decref(j);
        if (!s)
                abort(); /* only on out-of-memory: every string was checked on the way in */
        return s;
}

json_t *jv_text(const char *s)
{
        if (!s)
                return jv_nonnull(json_null());
        json_t *j = json_string(s);
        if (j)
                return j;
        _cleanup_free_ char *fixed = utf8_lossy(s);
        return jv_nonnull(json_string(fixed));
}

/* ---- lossless names ----
 * File names and arguments are bytes; JSON strings are Unicode.  A string that is valid
 * UTF-8 is given as it is.  One that is not is given with U+FFFD for each invalid byte (for
 * reading), and its exact bytes in hex beside it, under the same key with "_hex" appended
 * (docs/CONTRACT.md): argv_hex and changes_hex are arrays parallel to argv and to each list
 * of changes (null where the string is exact), path_hex a violation's, cwd_hex the
 * directory's.  Those keys appear only when some string needs them. */

static bool utf8_valid(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        for (size_t n; *p; p += n)
                if (!(n = utf8_seq_len(p)))
                        return false;
        return true;
}

/* The bytes of s in hex, or JSON null when s is NULL or valid UTF-8 (exact as it is). */
static json_t *json_hex_if_lossy(const char *s)
{
        static const char digits[] = "0123456789abcdef";
        if (!s || utf8_valid(s))
                return jv_nonnull(json_null());
        size_t n = strlen(s);
        _cleanup_free_ char *hex = xmalloc(2 * n + 1);
        for (size_t i = 0; i < n; i++) {
                hex[2 * i] = digits[(unsigned char)s[i] >> 4];
                hex[2 * i + 1] = digits[(unsigned char)s[i] & 15];
        }
        hex[2 * n] = '\0';
        return jv_nonnull(json_string(hex));
}

/* An array parallel to the strings given (hex where lossy, else null), or NULL when every
 * one of them is exact. */
static json_t *hex_array(const char *const *v, size_t n)
{
        bool any = false;
        for (size_t i = 0; i < n && !any; i++)
                any = v[i] && !utf8_valid(v[i]);
        if (!any)
                return NULL;
        json_t *arr = jv_nonnull(json_array());
        for (size_t i = 0; i < n; i++)
                jv_push(arr, json_hex_if_lossy(v[i]));
        return arr;
}

static json_t *json_int_or_null(int64_t v, bool is_null)
{
        return jv_nonnull(is_null ? json_null() : json_integer((json_int_t)v));
}

static json_t *argv_json(char *const *argv)
{
        json_t *arr = jv_nonnull(json_array());
        for (size_t i = 0; argv && argv[i]; i++)
                jv_push(arr, jv_text(argv[i]));
        return arr;
}

static json_t *argv_hex_json(char *const *argv)
{
        size_t n = 0;
        while (argv && argv[n])
                n++;
        return hex_array((const char *const *)argv, n);
}

/* changes_hex: for each list of changes holding a name that is not UTF-8, the parallel
 * array of hex; NULL when every name is exact. */
static json_t *changes_hex_json(const struct txbox_record *rec)
{
        json_t *obj = NULL;
        for (size_t c = 0; c < ARRAY_SIZE(change_names); c++) {
                const char **v = xcalloc(rec->npaths + 1, sizeof(*v));
                size_t n = 0;
                for (size_t i = 0; i < rec->npaths; i++)
                        if ((unsigned)rec->paths[i].change == c && rec->paths[i].path)
                                v[n++] = rec->paths[i].path;
                json_t *arr = hex_array(v, n);
                free(v);
                if (!arr)
                        continue;
                if (!obj)
                        obj = jv_nonnull(json_object());
                jv_set(obj, change_names[c], arr);
        }
        return obj;
}

static json_t *changes_json(const struct txbox_record *rec)
{
        json_t *lists[ARRAY_SIZE(change_names)];
        json_t *obj = jv_nonnull(json_object());

        for (size_t c = 0; c < ARRAY_SIZE(change_names); c++) {
                lists[c] = jv_nonnull(json_array());
                jv_set(obj, change_names[c], lists[c]); /* obj holds the reference */
        }
        for (size_t i = 0; i < rec->npaths; i++) {
                unsigned c = (unsigned)rec->paths[i].change;
                if (c < ARRAY_SIZE(change_names) && rec->paths[i].path)
                        jv_push(lists[c], jv_text(rec->paths[i].path));
        }
        return obj;
}

static json_t *violations_json(const struct txbox_record *rec)
{
        json_t *arr = jv_nonnull(json_array());
        for (size_t i = 0; i < rec->nviolations; i++) {
                const struct txbox_violation *v = &rec->violations[i];
                json_t *o = jv_nonnull(json_object());
                jv_set(o, "rule", jv_text(v->rule));
                jv_set(o, "path", jv_text(v->path));
                if (v->path && !utf8_valid(v->path))
                        jv_set(o, "path_hex", json_hex_if_lossy(v->path));
                jv_set(o, "detail", jv_text(v->detail));
                jv_push(arr, o);
        }
        return arr;
}

/* A session's commands: what ran and how each ended. */
static json_t *savepoints_json(const struct txbox_record *rec)
{
        json_t *arr = jv_nonnull(json_array());
        for (size_t i = 0; i < rec->nsavepoints; i++) {
                const struct txbox_savepoint *sp = &rec->savepoints[i];
                json_t *o = jv_nonnull(json_object());
                /* Keys of their own: a line-oriented reader of the record (grep '"outcome"')
                 * must not take a command's for the session's. */
                jv_set(o, "n", json_integer(sp->n));
                jv_set(o, "command", argv_json(sp->argv));
                jv_set(o, "result", jv_text(txbox_sp_outcome_name(sp->outcome)));
                jv_set(o, "exit", json_int_or_null(sp->exit_code, sp->exit_code < 0));
                jv_set(o, "killed_by", json_int_or_null(sp->signal, sp->signal == 0));
                jv_set(o, "start_ms", json_int_or_null(sp->started_ms, false));
                jv_set(o, "time_ms", json_int_or_null(sp->duration_ms, false));
                jv_push(arr, o);
        }
        return arr;
}

json_t *record_to_json(const struct txbox_record *rec)
{
        char id[sizeof(rec->id) + 1];
        json_t *o = jv_nonnull(json_object());

        /* id is a fixed array: do not trust it to be terminated. */
        memcpy(id, rec->id, sizeof(rec->id));
        id[sizeof(rec->id)] = '\0';

        jv_set(o, "tx", jv_text(id));
        jv_set(o, "argv", argv_json(rec->argv));
        jv_set(o, "decision", jv_text(rec->decision));
        jv_set(o, "rule", jv_text(rec->rule));
        jv_set(o, "reason", jv_text(rec->reason));
        jv_set(o, "exit_code", json_int_or_null(rec->exit_code, rec->exit_code < 0));
        jv_set(o, "signal", json_int_or_null(rec->signal, rec->signal == 0));
        jv_set(o, "outcome", jv_text(txbox_outcome_name(rec->outcome)));
        jv_set(o, "changes", changes_json(rec));
        jv_set(o, "violations", violations_json(rec));
        jv_set(o, "duration_ms", json_int_or_null(rec->duration_ms, false));
        /* Extras beyond docs/CONTRACT.md, which allows adding fields. */
        jv_set(o, "cwd", jv_text(rec->cwd));
        jv_set(o, "started_ms", json_int_or_null(rec->started_ms, false));
        jv_set(o, "message", jv_text(rec->message));
        jv_set(o, "commit_seq", json_int_or_null(rec->commit_seq, rec->commit_seq <= 0));
        if (rec->env_dropped) {
                json_t *a = jv_nonnull(json_array());
                _cleanup_free_ char *copy = xstrdup(rec->env_dropped);
                char *save = NULL;
                for (char *n = strtok_r(copy, ",", &save); n; n = strtok_r(NULL, ",", &save))
                        jv_push(a, jv_text(n));
                jv_set(o, "env_dropped", a);
        }
        if (rec->net_log)
                jv_set(o, "net", jv_text(rec->net_log));
        /* the exact bytes of names that are not UTF-8 (see "lossless names" above) */
        json_t *h;
        if ((h = argv_hex_json(rec->argv)))
                jv_set(o, "argv_hex", h);
        if ((h = changes_hex_json(rec)))
                jv_set(o, "changes_hex", h);
        if (rec->cwd && !utf8_valid(rec->cwd))
                jv_set(o, "cwd_hex", json_hex_if_lossy(rec->cwd));
        if (rec->nsavepoints)
                jv_set(o, "savepoints", savepoints_json(rec));
        return o;
}

TXBOX_API char *txbox_record_json(const struct txbox_record *rec)
{
        return jv_dump(record_to_json(rec));
}

TXBOX_API char *txbox_records_json(const struct txbox_record *recs, size_t n)
{
        json_t *arr = jv_nonnull(json_array());
        for (size_t i = 0; i < n; i++)
                jv_push(arr, record_to_json(&recs[i]));
        return jv_dump(arr);
}
