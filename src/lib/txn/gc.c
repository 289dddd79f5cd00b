/* Long-lived workspaces: what the state dir keeps for undo, and for how long.
 *
 * A commit that changed something leaves state/tx/ID: its journal, its marker and the
 * originals it replaced (undo/), what txbox undo puts back (redo/ after an undo, for diff).
 * The retention (count, age, size) says how much of that stays; the rest is pruned oldest
 * first, so that what stays undoable is always the newest commits, which undo needs in
 * order anyway (undo refuses while a later commit touched the same paths).
 *
 * Crash safety: a transaction's directory leaves tx/ in one rename into trash/, and only
 * then is removed; a crash leaves it whole in tx/ (still undoable) or in the trash (gone,
 * removed by the next sweep).  state/gc, written atomically before the renames, holds the
 * sizes measured so far and the newest commit time pruned (for undo's message).
 *
 * Never touched: a transaction with a claim in active/ (a process works on it, or recovery
 * must), one whose commit is not settled yet (settle/: recovery after a reboot replays its
 * journal from tx/ID), a pending one, one half-way through an undo.
 *
 * The automatic pass after each commit (gc_auto) must not cost in proportion to the commits
 * kept (up to a thousand by default): it takes the sizes and commit times of state/gc for
 * the directories listed there without looking at them again, measures only the commits
 * named in state/gc-new since (each commit appends its id under the workspace lock; state/gc
 * says how far the passes have read, so that the file stays: on a file system without a
 * journal, ext4 makes every new inode skip the ones freed in the last minutes), and
 * looks again at a listed one only before pruning it.  Only an undo or recovery changes or
 * removes a commit's directory once it is listed: it first leaves state/gc-stale (durably),
 * and the next pass then reads tx/ and checks every directory, as txbox gc and a pass an
 * hour after the last full one do.  Whatever state/gc misses (a lost append) is kept until
 * such a pass: never pruned early. */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/failpoint.h"
#include "base/fileio.h"
#include "base/human.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/rmtree.h"
#include "base/strv.h"
#include "txbox.h"
#include "txn/tx.h"

#define RETENTION_FILE "retention"
#define GC_FILE "gc"
#define GC_STALE_FILE "gc-stale"
#define GC_NEW_FILE "gc-new"
#define GC_NEW_KEEP 16384 /* bytes of state/gc-new read before it is emptied */
#define GC_FILE_MAX (8u << 20)
#define GC_AUTO_MAX 64      /* prunes per automatic pass: it runs beside a program */
#define GC_AUTO_STALE_S 3600 /* an automatic pass at least this often, for the age limit */
#define GC_AUTO_LOCK_TRIES 40 /* 5 ms apart: a commit's hold of the lock, not an undo's */

static const struct txbox_retention defaults = {
        .keep = 1000,
        .max_age_s = 30 * 86400,
        .max_size = 1ull << 30,
};

/* ---- the setting ---- */

static bool parse_scaled(const char *v, const char *const units[], const uint64_t scale[], size_t n,
                         uint64_t *out)
{
        char *end;

        if (!strcmp(v, "none")) {
                *out = 0;
                return true;
        }
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (errno || end == v || v[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strcasecmp(end, units[i])) {
                        if (x > UINT64_MAX / scale[i])
                                return false;
                        *out = x * scale[i];
                        return true;
                }
        return false;
}

static bool parse_age(const char *v, uint64_t *out)
{
        static const char *const u[] = {"", "s", "m", "h", "d", "w"};
        static const uint64_t k[] = {1, 1, 60, 3600, 86400, 7 * 86400};
        return parse_scaled(v, u, k, ARRAY_SIZE(u), out);
}

static bool parse_bytes(const char *v, uint64_t *out)
{
        static const char *const u[] = {"",    "b", "k",  "kb",  "kib", "m",  "mb",
                                        "mib", "g", "gb", "gib", "t",   "tb", "tib"};
        static const uint64_t k[] = {1,          1,          1ull << 10, 1ull << 10, 1ull << 10,
                                     1ull << 20, 1ull << 20, 1ull << 20, 1ull << 30, 1ull << 30,
                                     1ull << 30, 1ull << 40, 1ull << 40, 1ull << 40};
        return parse_scaled(v, u, k, ARRAY_SIZE(u), out);
}

TXBOX_API int txbox_retention_parse(const char *spec, struct txbox_retention *out, struct txbox_error *err)
{
        struct txbox_retention r = *out;
        _cleanup_free_ char *buf = xstrdup(spec);
        char *save = NULL;

        if (strlen(spec) > 256)
                return tx_err(err, EINVAL, "retention setting too long (over 256 characters)");
        for (char *t = strtok_r(buf, ", \t\n", &save); t; t = strtok_r(NULL, ", \t\n", &save)) {
                char *eq = strchr(t, '=');
                bool ok = false;
                if (eq) {
                        *eq = '\0';
                        if (!strcmp(t, "keep"))
                                ok = parse_bytes(eq + 1, &r.keep) &&
                                     strspn(eq + 1, "0123456789") == strlen(eq + 1);
                        else if (!strcmp(t, "max-age") || !strcmp(t, "age"))
                                ok = parse_age(eq + 1, &r.max_age_s);
                        else if (!strcmp(t, "max-size") || !strcmp(t, "size"))
                                ok = parse_bytes(eq + 1, &r.max_size);
                        if (!ok && !strcmp(t, "keep") && !strcmp(eq + 1, "none"))
                                ok = (r.keep = 0, true);
                }
                if (!ok) {
                        _cleanup_free_ char *h = human_escape(t, HUMAN_LINE);
                        return tx_err(
                                err, EINVAL,
                                "bad retention item '%s%s%s': expected keep=N, max-age=AGE "
                                "(90m, 12h, 30d, 2w) or max-size=SIZE (512M, 2G), 0 or none for no limit",
                                h, eq ? "=" : "", eq ? eq + 1 : "");
                }
        }
        *out = r;
        return 0;
}

TXBOX_API void txbox_retention_format(const struct txbox_retention *r, char *buf, size_t size)
{
        static const struct { uint64_t k; const char *u;
        } ages[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}},
          sizes[] = {{1ull << 40, "T"}, {1ull << 30, "G"}, {1ull << 20, "M"}, {1ull << 10, "K"}, {1, ""}};
        char keep[32] = "none", age[32] = "none", sz[32] = "none";
        size_t i;

        if (r->keep)
                snprintf(keep, sizeof(keep), "%llu", (unsigned long long)r->keep);
        for (i = 0; r->max_age_s && r->max_age_s % ages[i].k; i++)
                ;
        if (r->max_age_s)
                snprintf(age, sizeof(age), "%llu%s", (unsigned long long)(r->max_age_s / ages[i].k),
                         ages[i].u);
        for (i = 0; r->max_size && r->max_size % sizes[i].k; i++)
                ;
        if (r->max_size)
                snprintf(sz, sizeof(sz), "%llu%s", (unsigned long long)(r->max_size / sizes[i].k),
                         sizes[i].u);
        snprintf(buf, size, "keep=%s,max-age=%s,max-size=%s", keep, age, sz);
}

static int retention_read(int state_fd, struct txbox_retention *out, struct txbox_error *err)
{
        _cleanup_free_ char *text = NULL;
        const char *env = getenv("TXBOX_RETENTION");
        int r = state_fd < 0 ? -ENOENT : read_file_at(state_fd, RETENTION_FILE, 4096, &text, NULL);

        *out = defaults;
        if (r == -ENOENT)
                return env && *env ? txbox_retention_parse(env, out, err) : 0;
        if (r < 0)
                return tx_err(err, -r, "cannot read the retention setting (state dir's '%s'): %s",
                              RETENTION_FILE, strerror(-r));
        return txbox_retention_parse(text, out, err);
}

TXBOX_API int txbox_retention_get(struct txbox_ws *ws, struct txbox_retention *out, struct txbox_error *err)
{
        return retention_read(ws->state_fd, out, err);
}

TXBOX_API int txbox_retention_save(struct txbox_ws *ws, const struct txbox_retention *r,
                                   struct txbox_error *err)
{
        char text[128];
        int e;

        txbox_retention_format(r, text, sizeof(text) - 1);
        strcat(text, "\n");
        if ((e = write_file_atomic_at(ws->state_fd, RETENTION_FILE, text, strlen(text), true)) < 0)
                return tx_err(err, -e, "cannot save the retention setting in '%s/%s': %s", ws->state,
                              RETENTION_FILE, strerror(-e));
        return 0;
}

/* ---- what is there ---- */

struct gc_entry {
        char id[32];
        int64_t time_ns;  /* when it was committed (its marker) */
        int64_t mtime_ns; /* its directory's: the key of the size measured */
        uint64_t bytes;
        bool measured;
        bool pinned; /* committed, not settled yet: recovery after a reboot may replay it */
};

struct gc_scan {
        struct gc_entry *v; /* finished commits, undone or not */
        size_t n, cap;
        struct gc_entry *known; /* state/gc's entries, sorted by id */
        size_t nknown;
        struct strvec orphans; /* directories no transaction needs any more */
        unsigned skipped;
        int64_t pruned_ms;     /* from state/gc */
        int64_t seq;           /* newest commit seq at the last pass, from state/gc */
        int64_t checked_s;     /* when a pass last looked at every directory, from state/gc */
        int64_t new_off;       /* how much of state/gc-new the passes have read, from state/gc */
        int64_t new_size;      /* state/gc-new's size as this pass read it */
        bool trusted;          /* known entries taken as they are (gc_auto) */
        bool known_sorted;     /* known sorted by id (else in the file's order) */
        struct strvec claimed; /* the names in active/ */
        struct strvec again;   /* directories skipped while claimed: in state/gc, for next time */
        struct strvec pending; /* from state/gc: those of the last pass */
};

static void scan_free(struct gc_scan *sc)
{
        free(sc->v);
        free(sc->known);
        strvec_clear(&sc->orphans);
        strvec_clear(&sc->claimed);
        strvec_clear(&sc->again);
        strvec_clear(&sc->pending);
}

static int64_t ts_ns(const struct timespec *t) { return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec; }

/* Disk usage of name beneath dirfd, in bytes of blocks; symlinks are not followed and the
 * depth is bounded (what undo keeps came from the workspace: the program's trees). */
static uint64_t du_at(int dirfd, const char *name, int depth)
{
        struct stat st;
        uint64_t sum;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return 0;
        sum = (uint64_t)st.st_blocks * 512;
        if (!S_ISDIR(st.st_mode) || depth > CS_MAX_DEPTH)
                return sum;
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = fd >= 0 ? dir_stream(fd) : NULL;
        struct dirent *de;
        while (d && (de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
                        sum += du_at(fd, de->d_name, depth + 1);
        if (d)
                closedir(d);
        return sum;
}

static bool is_tx_id(const char *s)
{
        size_t n = strlen(s);
        return n > 0 && n < sizeof(((struct txbox_record *)0)->id) && strspn(s, "0123456789abcdef") == n;
}

static bool has(int dirfd, const char *name, struct stat *st)
{
        struct stat dummy;
        return fstatat(dirfd, name, st ? st : &dummy, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Ids with an entry in settle/ (of any boot): commits whose journal recovery may replay. */
static void settle_ids(struct txbox_ws *ws, struct strvec *ids)
{
        DIR *d = dir_stream(ws->settle_fd);
        struct dirent *de;
        const char *dot;

        while (d && (de = readdir(d)))
                if (de->d_name[0] != '.' && (dot = strchr(de->d_name, '.')))
                        strvec_push(ids, xstrdup(dot + 1));
        if (d)
                closedir(d);
}

static bool strvec_has(const struct strvec *sv, const char *s)
{
        for (size_t i = 0; i < sv->n; i++)
                if (!strcmp(sv->v[i], s))
                        return true;
        return false;
}

/* A directory without a commit marker: pending (kept), or a leftover of a transaction that
 * ended otherwise (rolled back, denied: removed).  Only the log can tell; without it
 * (the automatic pass) it stays. */
static bool is_orphan(struct txbox_ws *ws, const char *id, bool use_log)
{
        struct txbox_record rec = {0};
        struct txbox_error e;

        if (!use_log)
                return false;
        int r = audit_get(ws->audit, id, &rec, &e);
        bool orphan = r == -ENOENT || (r == 0 && strcmp(rec.id, id) == 0 &&
                                       (rec.outcome == TXBOX_ROLLED_BACK || rec.outcome == TXBOX_DENIED ||
                                        (rec.outcome == TXBOX_COMMITTED && rec.npaths == 0)));
        txbox_record_clear(&rec);
        return orphan;
}

static int by_id(const void *a, const void *b)
{
        return strcmp(((const struct gc_entry *)a)->id, ((const struct gc_entry *)b)->id);
}

static void add_entry(struct gc_scan *sc, const struct gc_entry *e)
{
        if (sc->n == sc->cap) {
                sc->cap = sc->cap ? 2 * sc->cap : 64;
                sc->v = xrealloc(sc->v, sc->cap * sizeof(*sc->v));
        }
        sc->v[sc->n++] = *e;
}

/* state/gc's entry for id: by binary search once sorted by id (a full pass looks up every
 * directory), else one by one (a trusted pass, in the file's newest-first order, looks up
 * only the commits since). */
static struct gc_entry *known_entry(struct gc_scan *sc, const char *id)
{
        if (!sc->trusted && !sc->known_sorted && sc->nknown) {
                qsort(sc->known, sc->nknown, sizeof(*sc->known), by_id);
                sc->known_sorted = true;
        }
        if (!sc->known_sorted) {
                for (size_t i = 0; i < sc->nknown; i++)
                        if (!strcmp(sc->known[i].id, id))
                                return &sc->known[i];
                return NULL;
        }
        struct gc_entry key = {0};
        size_t n = strlen(id);
        if (n >= sizeof(key.id))
                return NULL;
        memcpy(key.id, id, n + 1);
        return sc->nknown ? bsearch(&key, sc->known, sc->nknown, sizeof(key), by_id) : NULL;
}

static void scan_one(struct txbox_ws *ws, const char *id, const struct strvec *settled, bool use_log,
                     struct gc_scan *sc)
{
        struct stat mk, dst;
        struct gc_entry *k;

        /* Claimed: a process works on it, or recovery must. */
        if (faccessat(ws->active_fd, id, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
                sc->skipped++;
                return;
        }
        /* Measured by an earlier pass and unchanged since (a marker, an undo would have
         * changed the directory's mtime): one stat, no walk. */
        if (fstatat(ws->tx_fd, id, &dst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(dst.st_mode)) {
                k = known_entry(sc, id);
                if (k && k->mtime_ns == ts_ns(&dst.st_mtim) && k->time_ns) {
                        add_entry(sc, k);
                        sc->v[sc->n - 1].pinned = strvec_has(settled, id);
                        return;
                }
        }
        _cleanup_close_ int dfd = openat(ws->tx_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0 || fstat(dfd, &dst) < 0) {
                sc->skipped++;
                return;
        }
        bool committed = has(dfd, "committed", &mk), undoing = has(dfd, "undoing", NULL),
             undone = has(dfd, "undone", NULL);
        if (committed && (!undoing || undone)) {
                struct gc_entry e = {0};
                snprintf(e.id, sizeof(e.id), "%s", id);
                e.time_ns = ts_ns(&mk.st_mtim);
                e.mtime_ns = ts_ns(&dst.st_mtim);
                add_entry(sc, &e);
                sc->v[sc->n - 1].pinned = strvec_has(settled, id);
                return;
        }
        /* Half-way through a commit, a revert, an undo or a fold: recovery's. */
        if (committed || undoing || has(dfd, "journal", NULL) || has(dfd, "revert", NULL) ||
            has(dfd, "merging", NULL) || !is_orphan(ws, id, use_log)) {
                sc->skipped++;
                return;
        }
        strvec_push(&sc->orphans, xstrdup(id));
}

/* state/gc: "txbox-gc 1", "seq N", "pruned_ms N", then "ID MTIME_NS BYTES TIME_NS" per
 * transaction measured (its directory's mtime, its size, its commit time).  Anything
 * malformed is ignored: it is measured again. */
/* "ID MTIME_NS BYTES TIME_NS": a line of state/gc read by hand (sscanf would cost a pass
 * with a thousand commits kept more than the rest of it). */
/* A decimal number of 1 to 19 digits at most INT64_MAX at *p, then the byte stop; advances
 * *p past it. */
static bool parse_u63(const char **p, char stop, uint64_t *v)
{
        const char *s = *p;
        uint64_t x = 0;
        size_t n = 0;

        for (; *s >= '0' && *s <= '9' && n < 20; s++, n++)
                x = x * 10 + (uint64_t)(*s - '0');
        if (n == 0 || n > 19 || x > INT64_MAX || *s != stop)
                return false;
        *v = x;
        *p = s + (stop != '\0');
        return true;
}

static bool parse_entry(const char *l, char id[32], long long *mt, unsigned long long *b, long long *t)
{
        const char *sp = strchr(l, ' ');
        uint64_t x, y, z;
        if (!sp || sp - l >= 32)
                return false;
        memcpy(id, l, (size_t)(sp - l));
        id[sp - l] = '\0';
        sp++;
        if (!parse_u63(&sp, ' ', &x) || !parse_u63(&sp, ' ', &y) || !parse_u63(&sp, '\0', &z) ||
            !is_tx_id(id))
                return false;
        *mt = (long long)x, *b = y, *t = (long long)z;
        return true;
}

static void cache_read(struct txbox_ws *ws, struct gc_scan *sc)
{
        _cleanup_free_ char *text = NULL;
        char *save = NULL;
        long long seq = -1, ms = 0, checked = 0, off = 0;
        char pend[32];
        size_t cap = 0;

        sc->seq = -1;
        if (read_file_at(ws->state_fd, GC_FILE, GC_FILE_MAX, &text, NULL) < 0 ||
            strncmp(text, "txbox-gc 1\n", 11))
                return;
        for (char *l = strtok_r(text + 11, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                char id[32];
                long long mt, t;
                unsigned long long b;
                if (!parse_entry(l, id, &mt, &b, &t)) {
                        if (sscanf(l, "seq %lld", &seq) != 1 && sscanf(l, "pruned_ms %lld", &ms) != 1 &&
                            sscanf(l, "checked_s %lld", &checked) != 1 &&
                            sscanf(l, "new_off %lld", &off) != 1 && sscanf(l, "pending %31s", pend) == 1 &&
                            is_tx_id(pend))
                                strvec_push(&sc->pending, xstrdup(pend));
                        continue;
                }
                if (sc->nknown == cap) {
                        cap = cap ? 2 * cap : 64;
                        sc->known = xrealloc(sc->known, cap * sizeof(*sc->known));
                }
                struct gc_entry *e = &sc->known[sc->nknown++];
                memset(e, 0, sizeof(*e));
                memcpy(e->id, id, strlen(id) + 1); /* under 32 bytes: parse_entry */
                e->mtime_ns = mt;
                e->bytes = b;
                e->time_ns = t;
                e->measured = true;
        }
        sc->seq = seq;
        sc->pruned_ms = ms;
        sc->checked_s = checked;
        sc->new_off = off;
}

/* Sizes of entries found unchanged since the last pass, from state/gc. */
static void cache_apply(struct gc_scan *sc)
{
        for (size_t i = 0; i < sc->n; i++) {
                struct gc_entry *k = sc->v[i].measured ? NULL : known_entry(sc, sc->v[i].id);
                if (k && k->mtime_ns == sc->v[i].mtime_ns) {
                        sc->v[i].bytes = k->bytes;
                        sc->v[i].measured = true;
                }
        }
}

/* v in decimal at w; returns the end. */
static char *fmt_u64(char *w, uint64_t v)
{
        char tmp[24];
        size_t n = 0;
        do
                tmp[n++] = (char)('0' + v % 10);
        while ((v /= 10));
        while (n)
                *w++ = tmp[--n];
        return w;
}

static int cache_write(struct txbox_ws *ws, const struct gc_scan *sc, size_t kept, int64_t seq,
                       int64_t pruned_ms, int64_t new_off, bool idle, bool durable)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                return -ENOMEM;
        /* checked_s: now after a pass that looked at every directory, else the last one's;
         * new_off: state/gc-new read up to there; idle: this pass left nothing for the next
         * one but what new commits bring (gc_auto); pending: skipped while claimed. */
        fprintf(f, "txbox-gc 1\nseq %lld\npruned_ms %lld\nchecked_s %lld\nnew_off %lld\nidle %d\n",
                (long long)seq, (long long)pruned_ms,
                (long long)(sc->trusted ? sc->checked_s : (int64_t)time(NULL)), (long long)new_off, idle);
        for (size_t i = 0; i < sc->again.n; i++)
                fprintf(f, "pending %s\n", sc->again.v[i]);
        for (size_t i = 0; i < kept; i++) {
                char line[128], *w = stpcpy(line, sc->v[i].id);
                const uint64_t v[3] = {(uint64_t)sc->v[i].mtime_ns, sc->v[i].bytes,
                                       (uint64_t)sc->v[i].time_ns};
                for (int j = 0; j < 3; j++) /* printf's %lld, by hand: a thousand lines per commit */
                        w = fmt_u64(stpcpy(w, " "), v[j]);
                *w++ = '\n';
                fwrite(line, 1, (size_t)(w - line), f);
        }
        fclose(f);
        int r = write_file_atomic_at(ws->state_fd, GC_FILE, buf, len, durable);
        free(buf);
        return r;
}

static int newest_first(const void *a, const void *b)
{
        const struct gc_entry *x = a, *y = b;
        if (x->time_ns != y->time_ns)
                return x->time_ns < y->time_ns ? 1 : -1;
        return strcmp(y->id, x->id);
}

/* Whether the automatic pass may take state/gc's entries as they are: a full pass checked
 * every directory less than GC_AUTO_STALE_S ago, and no undo happened since (gc-stale). */
static bool cache_trusted(struct txbox_ws *ws, const struct gc_scan *sc)
{
        int64_t age = (int64_t)time(NULL) - sc->checked_s;
        return sc->seq >= 0 && sc->checked_s > 0 && age >= 0 && age < GC_AUTO_STALE_S &&
               faccessat(ws->state_fd, GC_STALE_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

static void list_names(int dirfd, struct strvec *out)
{
        DIR *d = dir_stream(dirfd);
        struct dirent *de;

        while (d && (de = readdir(d)))
                if (de->d_name[0] != '.')
                        strvec_push(out, xstrdup(de->d_name));
        if (d)
                closedir(d);
}

/* Trusted: besides those state/gc lists, the directories to look at are the commits since
 * (state/gc-new), not every entry of tx/. */
static void trusted_ids(struct txbox_ws *ws, struct gc_scan *sc, struct strvec *ids)
{
        _cleanup_free_ char *text = NULL;
        char *save = NULL;
        size_t len = 0;

        for (size_t i = 0; i < sc->pending.n; i++)
                if (!known_entry(sc, sc->pending.v[i]) && !strvec_has(ids, sc->pending.v[i]))
                        strvec_push(ids, xstrdup(sc->pending.v[i]));
        if (read_file_at(ws->state_fd, GC_NEW_FILE, GC_FILE_MAX, &text, &len) < 0)
                return;
        sc->new_size = (int64_t)len;
        /* A file shorter than what was read of it was replaced: all of it is new. */
        char *from = sc->new_off > 0 && (size_t)sc->new_off <= len ? text + sc->new_off : text;
        for (char *l = strtok_r(from, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
                if (is_tx_id(l) && !known_entry(sc, l) && !strvec_has(ids, l))
                        strvec_push(ids, xstrdup(l));
}

/* state/gc-new once this pass is in state/gc: read up to new_size (appends wait for our
 * lock); emptied in place, never removed, once it holds over GC_NEW_KEEP bytes. */
static int64_t new_read_to(struct txbox_ws *ws, struct gc_scan *sc)
{
        if (!sc->trusted) { /* a full pass read tx/ itself */
                struct stat st;
                bool there = fstatat(ws->state_fd, GC_NEW_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0;
                sc->new_size = there ? st.st_size : 0;
        }
        return sc->new_size;
}

static int scan(struct txbox_ws *ws, bool use_log, bool trust, struct gc_scan *sc)
{
        struct strvec settled = {0}, ids = {0};

        memset(sc, 0, sizeof(*sc));
        cache_read(ws, sc);
        sc->trusted = trust && cache_trusted(ws, sc);
        list_names(ws->active_fd, &sc->claimed);
        if (sc->trusted) {
                trusted_ids(ws, sc, &ids); /* the commits since first: the newest */
        } else {
                DIR *d = dir_stream(ws->tx_fd);
                struct dirent *de;
                if (!d)
                        return -errno;
                while ((de = readdir(d)))
                        if (is_tx_id(de->d_name))
                                strvec_push(&ids, xstrdup(de->d_name));
                closedir(d);
        }
        settle_ids(ws, &settled);
        for (size_t i = 0; i < ids.n; i++) {
                size_t n = sc->n;
                scan_one(ws, ids.v[i], &settled, use_log, sc);
                if (sc->n == n && strvec_has(&sc->claimed, ids.v[i]))
                        strvec_push(&sc->again, xstrdup(ids.v[i])); /* its process is not done with it */
        }
        /* Trusted (see the top): the listed ones as listed, but those claimed now. */
        for (size_t i = 0; sc->trusted && i < sc->nknown; i++) {
                const struct gc_entry *k = &sc->known[i];
                if (!k->time_ns || strvec_has(&sc->claimed, k->id)) {
                        scan_one(ws, k->id, &settled, use_log, sc);
                        continue;
                }
                add_entry(sc, k);
                sc->v[sc->n - 1].pinned = strvec_has(&settled, k->id);
        }
        strvec_clear(&ids);
        strvec_clear(&settled);
        bool sorted = true; /* state/gc is written newest first */
        for (size_t i = 1; sorted && i < sc->n; i++)
                sorted = newest_first(&sc->v[i - 1], &sc->v[i]) <= 0;
        if (!sorted)
                qsort(sc->v, sc->n, sizeof(*sc->v), newest_first);
        cache_apply(sc);
        for (size_t i = 0; i < sc->n; i++)
                if (!sc->v[i].measured)
                        sc->v[i].bytes = du_at(ws->tx_fd, sc->v[i].id, 0);
        return 0;
}

/* How many of the newest stay: the newest always (its undo is the one an agent's last step
 * may need), then as long as every limit holds; past the first that breaks one, none. */
static size_t select_kept(const struct gc_scan *sc, const struct txbox_retention *r, uint64_t *kept_bytes)
{
        struct timespec now;
        uint64_t total = 0;
        size_t i;

        clock_gettime(CLOCK_REALTIME, &now);
        for (i = 0; i < sc->n; i++) {
                const struct gc_entry *e = &sc->v[i];
                int64_t age_s = (ts_ns(&now) - e->time_ns) / 1000000000;
                bool fits = (!r->keep || i < r->keep) && (!r->max_age_s || age_s <= (int64_t)r->max_age_s) &&
                            (!r->max_size || total + e->bytes <= r->max_size);
                if (i > 0 && !fits && !e->pinned)
                        break;
                total += e->bytes;
        }
        *kept_bytes = total;
        return i;
}

/* Move tx/ID out whole, then remove it.  The rename is the step that decides.  (Crash
 * points only in txbox gc's own pass: the failpoint table is not the sweeper thread's.) */
static int prune_dir(struct txbox_ws *ws, const char *id, const char *suffix, bool fp)
{
        char as[64];
        int r;

        snprintf(as, sizeof(as), "%s.%s", id, suffix);
        if (fp && (r = failpoint("gc")) < 0)
                return r;
        if (renameat2(ws->tx_fd, id, ws->trash_fd, as, RENAME_NOREPLACE) < 0) {
                if (errno != EEXIST)
                        return -errno;
                rm_rf_at(ws->trash_fd, as); /* a crashed pass's: nothing needs it */
                if (renameat2(ws->tx_fd, id, ws->trash_fd, as, RENAME_NOREPLACE) < 0)
                        return -errno;
        }
        if (fp)
                (void)failpoint("gc");
        return rm_rf_at(ws->trash_fd, as);
}

/* The trash but for the layers of commits not settled yet (ws_unsettled_layer). */
static void empty_trash(struct txbox_ws *ws, bool dry, struct txbox_gc_stats *st)
{
        struct strvec names = {0};
        DIR *d = dir_stream(ws->trash_fd);
        struct dirent *de;

        while (d && (de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
                    !ws_unsettled_layer(ws, de->d_name))
                        strvec_push(&names, xstrdup(de->d_name));
        if (d)
                closedir(d);
        for (size_t i = 0; i < names.n; i++) {
                st->trash++;
                st->trash_bytes += du_at(ws->trash_fd, names.v[i], 0);
                if (!dry) {
                        (void)failpoint("gc");
                        rm_rf_at(ws->trash_fd, names.v[i]);
                }
        }
        strvec_clear(&names);
}

/* Captures of agents' edits (edits.c) whose record never came, past their time: removed
 * with the trash (a hook that ran again would have, but hooks may be gone). */
static void expire_captures(struct txbox_ws *ws, bool dry, struct txbox_gc_stats *st)
{
        _cleanup_close_ int fd = openat(ws->state_fd, "edits", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = fd >= 0 ? dir_stream(fd) : NULL;
        struct dirent *de;
        struct strvec names = {0};
        struct stat s;
        int64_t now = (int64_t)time(NULL) * 1000;

        while (d && (de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
                    fstatat(fd, de->d_name, &s, AT_SYMLINK_NOFOLLOW) == 0 &&
                    now - (int64_t)s.st_mtime * 1000 > EDITS_TTL_MS)
                        strvec_push(&names, xstrdup(de->d_name));
        if (d)
                closedir(d);
        for (size_t i = 0; i < names.n; i++) {
                st->trash++;
                st->trash_bytes += du_at(fd, names.v[i], 0);
                if (!dry)
                        rm_rf_at(fd, names.v[i]);
        }
        strvec_clear(&names);
}

/* One pass under the workspace lock. */
/* Trusted: whether a listed directory about to be pruned is still what state/gc says (no
 * claim on it, its directory unchanged). */
static bool still_listed(struct txbox_ws *ws, const struct gc_entry *e)
{
        struct stat st;
        return faccessat(ws->active_fd, e->id, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
               fstatat(ws->tx_fd, e->id, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
               ts_ns(&st.st_mtim) == e->mtime_ns;
}

/* One pass under the workspace lock; trust: the automatic pass (see the top). */
static int gc_locked(struct txbox_ws *ws, const struct txbox_retention *r, bool use_log, bool trust,
                     size_t max_prune, bool dry, struct txbox_gc_stats *st, struct txbox_error *err)
{
        struct gc_scan sc;
        int64_t seq = ws_newest_commit_seq(ws), pruned_ms;
        uint64_t kept_bytes;
        bool capped = false;
        int e = scan(ws, use_log, trust, &sc);

        if (e < 0)
                return tx_err(err, -e, "cannot read '%s/tx': %s", ws->state, strerror(-e));
        size_t kept = select_kept(&sc, r, &kept_bytes);
        if (sc.n - kept > max_prune) { /* the oldest first; the rest next time */
                kept = sc.n - max_prune;
                capped = true;
        }
        pruned_ms = sc.pruned_ms;
        for (size_t i = kept; i < sc.n; i++) {
                /* An old unsettled commit (recovery's first), or one taken from state/gc that
                 * changed since (left out of it: the next pass looks at it) */
                if (sc.v[i].pinned || (sc.trusted && !still_listed(ws, &sc.v[i]))) {
                        sc.v[i].pinned = true;
                        sc.skipped++;
                        continue;
                }
                st->pruned++;
                st->pruned_bytes += sc.v[i].bytes;
                if (sc.v[i].time_ns / 1000000 > pruned_ms)
                        pruned_ms = sc.v[i].time_ns / 1000000;
        }
        st->kept = (unsigned)kept;
        st->skipped = sc.skipped;
        st->kept_bytes = 0;
        for (size_t i = 0; i < kept; i++)
                st->kept_bytes += sc.v[i].bytes;
        for (size_t i = 0; i < sc.orphans.n; i++) {
                st->trash++;
                st->trash_bytes += du_at(ws->tx_fd, sc.orphans.v[i], 0);
        }
        if (dry) {
                scan_free(&sc);
                return 0;
        }
        /* The record first (sizes, and what undo may call pruned), then the renames.  After
         * an undo it is made durable before gc-stale goes: the two must not be undone by a
         * crash in the wrong order. */
        bool stale = !sc.trusted && faccessat(ws->state_fd, GC_STALE_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
        int64_t new_off = new_read_to(ws, &sc);
        bool empty_new = new_off > GC_NEW_KEEP;
        bool idle = !capped && !sc.skipped && !sc.again.n;
        if ((e = cache_write(ws, &sc, kept, seq, pruned_ms, empty_new ? 0 : new_off, idle, stale)) < 0) {
                scan_free(&sc);
                return tx_err(err, -e, "cannot write '%s/%s': %s", ws->state, GC_FILE, strerror(-e));
        }
        if (stale)
                unlinkat(ws->state_fd, GC_STALE_FILE, 0);
        if (empty_new) {
                int fd = openat(ws->state_fd, GC_NEW_FILE, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
                if (fd >= 0 && ftruncate(fd, 0) < 0) {
                        /* read again from the start next time: known ids are skipped */
                }
                if (fd >= 0)
                        close(fd);
        }
        for (size_t i = sc.n; e >= 0 && i > kept; i--)
                if (!sc.v[i - 1].pinned)
                        e = prune_dir(ws, sc.v[i - 1].id, "gc", use_log);
        for (size_t i = 0; e >= 0 && i < sc.orphans.n; i++)
                e = prune_dir(ws, sc.orphans.v[i], "orphan", use_log);
        scan_free(&sc);
        if (e < 0)
                return tx_err(err, -e, "cannot move pruned undo data into '%s/trash': %s", ws->state,
                              strerror(-e));
        return 0;
}

TXBOX_API int txbox_gc(struct txbox_ws *ws, const struct txbox_retention *r, unsigned flags,
                       struct txbox_gc_stats *stats, struct txbox_error *err)
{
        struct txbox_retention in_force;
        struct txbox_gc_stats st = {0};
        bool dry = flags & TXBOX_GC_DRY_RUN;
        int e;

        if (!r) {
                if ((e = txbox_retention_get(ws, &in_force, err)) < 0)
                        return e;
                r = &in_force;
        }
        if (ws->no_state) { /* no transaction ever ran: nothing to prune */
                if (stats)
                        *stats = st;
                return 0;
        }
        ws_sweep_wait(ws); /* its trash and its log writes are done */
        if ((e = ws_lock(ws, err)) < 0)
                return e;
        e = gc_locked(ws, r, true, false, SIZE_MAX, dry, &st, err);
        if (e >= 0) {
                empty_trash(ws, dry, &st);
                expire_captures(ws, dry, &st);
        }
        ws_unlock(ws);
        if (stats)
                *stats = st;
        return e;
}

/* ---- the automatic pass (sweep.c's sweeper, beside a program) ---- */

/* Whether the automatic pass has nothing to do: a commit since the last pass, but none that
 * kept a directory (a command that changed nothing, the usual one).  From state/gc's first
 * lines: the newest commit seq the last pass saw, or that pass left nothing for later
 * ("idle": none capped, skipped or claimed), read state/gc-new to its end, and no undo since
 * (gc-stale), and the setting not saved since.  The retention's count and size grow only
 * with what gc-new lists; its age is the hourly pass's (gc_auto's "fresh").  Skipped, the pass does not rewrite state/gc: no
 * inode made and freed per command (on ext4 without a journal each new inode skips the
 * ones freed in the last minutes), no thousand-line file written. */
static bool cache_idle(struct txbox_ws *ws, int64_t seq, const struct stat *gst)
{
        char buf[128];
        long long s, ms, chk, off;
        int idle = 0;
        struct stat st;
        _cleanup_close_ int fd = openat(ws->state_fd, GC_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;

        if (n <= 0)
                return false;
        /* An undo since the last pass: the next pass, even when no commit came after it (the
         * pass beside a command may have seen that command's own commit land). */
        if (faccessat(ws->state_fd, GC_STALE_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
                return false;
        buf[n] = '\0';
        int got = sscanf(buf, "txbox-gc 1\nseq %lld\npruned_ms %lld\nchecked_s %lld\nnew_off %lld\nidle %d", &s,
                         &ms, &chk, &off, &idle);
        if (got >= 1 && s == seq)
                return true;
        if (got != 5 || idle != 1)
                return false;
        if (fstatat(ws->state_fd, RETENTION_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            ts_ns(&st.st_mtim) >= ts_ns(&gst->st_mtim))
                return false;
        if (fstatat(ws->state_fd, GC_NEW_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT && off == 0;
        return st.st_size == off;
}

void gc_auto(struct txbox_ws *ws)
{
        struct txbox_retention r;
        struct txbox_gc_stats st = {0};
        struct txbox_error err;
        struct stat gst;

        /* A setting that cannot be read prunes nothing. */
        if (retention_read(ws->state_fd, &r, &err) < 0)
                return;
        /* Due after a commit since the last pass, and now and then for the age limit. */
        int64_t seq = ws_newest_commit_seq(ws);
        bool fresh =
                fstatat(ws->state_fd, GC_FILE, &gst, 0) == 0 && time(NULL) - gst.st_mtime < GC_AUTO_STALE_S;
        if (seq >= 0 && fresh && cache_idle(ws, seq, &gst))
                return;
        /* Our own lock: the workspace's descriptor is the main thread's (flock is per open
         * file, so the two would not exclude each other).  A commit holds it for
         * milliseconds; busy longer (a large undo, recovery): another time, for nothing may
         * wait long on this thread (the next sandbox start joins it). */
        _cleanup_close_ int lock = openat(ws->state_fd, "lock", O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        int tries = 0;
        while (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) < 0) {
                if (errno != EWOULDBLOCK || ++tries > GC_AUTO_LOCK_TRIES)
                        return;
                usleep(5000);
        }
        if (lock < 0)
                return;
        gc_locked(ws, &r, false, true, GC_AUTO_MAX, false, &st, &err);
        flock(lock, LOCK_UN);
}

int gc_note(struct txbox_ws *ws, const char *id)
{
        char line[64];
        int n = id ? snprintf(line, sizeof(line), "%s\n", id) : 0;

        if (!id)
                return write_file_atomic_at(ws->state_fd, GC_STALE_FILE, "", 0, true);
        int fd = openat(ws->state_fd, GC_NEW_FILE, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                        0600);
        if (fd >= 0 && write(fd, line, (size_t)n) != n) {
                /* lost: kept until a full pass (see the top) */
        }
        if (fd >= 0)
                close(fd);
        return 0;
}

int64_t gc_pruned_through_ms(struct txbox_ws *ws)
{
        struct gc_scan sc = {0};

        cache_read(ws, &sc);
        scan_free(&sc);
        return sc.pruned_ms;
}
