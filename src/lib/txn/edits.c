/* Edits made outside a transaction, recorded as committed transactions with undo data.
 *
 * An agent's own edit tools (Claude Code's Edit and Write, Codex's apply_patch, Gemini CLI's
 * write_file and replace) change files directly, not through a command txbox runs.  Their
 * hooks (txbox hook AGENT, src/cli/cmd_hook.c) bracket each edit:
 *
 *   txbox_edit_capture  at the pre-tool event: what the paths hold now goes to
 *                       state/edits/NAME: for each file a hard link (its inode, untouched by
 *                       an edit that writes a new file and renames it over the name, as
 *                       Claude Code does) and a copy of its content (for an edit that writes
 *                       in place, as Codex and Gemini CLI do), its stat in NAME/meta.  The
 *                       workspace is only read.
 *   txbox_edit_record   at the post-tool event, when the edit is already on disk: what the
 *                       paths hold now against what was kept, committed as a transaction:
 *                       tx/ID/undo/ holds the originals, tx/ID/journal the operations (as a
 *                       commit's: added, replaced, deleted), the log a committed row.  txbox
 *                       undo then puts the originals back like any commit's, and the undo of
 *                       a command before it is no longer refused for a path "changed outside
 *                       txbox": the original's very inode comes back.
 *
 * The original's inode is what an earlier commit's undo checks (live_untouched in undo.c).
 * An edit in place keeps it, with the new content; so the record moves the new content to a
 * new inode, exchanged into the name (the name never goes missing), and writes the original
 * content back into the old inode, which becomes the undo data.  Not when the file has other
 * hard links (they would see the old content again): then the copy is the undo data, and an
 * undo puts the content back under a new inode.
 *
 * Crash discipline, as a commit's (docs/DESIGN.md): the record holds active/ID from the
 * start; the undo data, the journal and the exchange are synced (one syncfs) before the row
 * goes in, committed; the marker and the begin file follow.  Killed before the row: recovery
 * finds active/ID, no row and no begin file, and removes tx/ID (the edit stays as the tool
 * left it, unrecorded; the new content is in the name either way).  Killed after it:
 * recovery completes the commit from its journal (nothing to move: only the marker).
 * A capture whose post-tool event never comes (the agent crashed, the tool failed after
 * the hook) holds nothing but state-dir data: it blocks nothing and is removed after an
 * hour, or when the same key captures again.  A capture is also stale when a transaction
 * committed one of its paths after it was taken: the edit is then not recorded (its
 * originals are not what the edit replaced). */
#define _GNU_SOURCE
#include "txn/tx.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <string.h>
#include <sys/xattr.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/failpoint.h"
#include "base/fileio.h"
#include "base/mem.h"
#include "base/random.h"
#include "base/rmtree.h"
#include "base/sha256.h"
#include "base/str.h"
#include "base/strv.h"
#include "store/journal.h"
#include "store/record.h"
#include "txbox.h"

#define EDIT_MAX_PATHS 256              /* paths of one capture (one apply_patch) */
#define EDIT_MAX_FILE (64ll << 20)      /* a file's content kept (and moved by the record) */
#define EDIT_MAX_BYTES (256ll << 20)    /* copies of one capture in all */
#define EDIT_MAX_CAPTURES 64            /* captures waiting for their post-tool event */
#define EDIT_TTL_MS EDITS_TTL_MS       /* ... at most this long (tx.h: txbox gc removes them too) */
#define EDIT_MAX_WALK 10000             /* entries of a directory an edit created */
#define EDIT_META_MAX (4u << 20)
#define EDIT_MSG "an edit by the agent's own tool, made outside txbox and recorded from its hook's " \
                 "pre- and post-tool events"

enum before { BEFORE_ABSENT, BEFORE_FILE, BEFORE_OTHER };
static const char *const before_names[] = {"absent", "file", "other"};

struct entry {
        char *path;
        enum before before;
        char *made_from; /* absent: the first missing ancestor (the edit may make it), or NULL */
        uint64_t ino;
        mode_t mode;
        int64_t size, mtime_ns;
        uid_t uid;
        gid_t gid;
        bool keep, copy; /* N.keep: a hard link; N.copy: the content */
};

struct capture {
        int fd; /* state/edits/NAME */
        int64_t created_ms, begin_seq;
        char **argv;
        struct entry *e;
        size_t n;
};

static void capture_free(struct capture *c)
{
        closep(&c->fd);
        strv_free(c->argv);
        for (size_t i = 0; i < c->n; i++) {
                free(c->e[i].path);
                free(c->e[i].made_from);
        }
        free(c->e);
        memset(c, 0, sizeof(*c));
        c->fd = -1;
}

static int64_t ns_of(const struct timespec *t)
{
        return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static struct timespec ts_of(int64_t ns)
{
        return (struct timespec){.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
}

/* A path as the hooks give it: relative to the workspace, no empty, "." or ".." component. */
static bool valid_rel(const char *p)
{
        size_t n = strlen(p);
        if (!n || n >= PATH_MAX || p[0] == '/' || p[n - 1] == '/')
                return false;
        for (const char *s = p; *s;) {
                const char *e = strchrnul(s, '/');
                size_t len = (size_t)(e - s);
                if (!len || (len == 1 && s[0] == '.') || (len == 2 && !strncmp(s, "..", 2)))
                        return false;
                s = *e ? e + 1 : e;
        }
        return true;
}

/* Its meta file is JSON: names and the command line must be UTF-8 (the hooks' come from
 * JSON text, so they are). */
static bool utf8_valid(const char *s)
{
        _cleanup_free_ char *u = utf8_lossy(s);
        return !strcmp(u, s);
}

/* The capture's directory name: the key hashed (it comes from the event: any bytes). */
static void capture_name(const char *key, char out[65])
{
        sha256_hex(key, strlen(key), out);
        out[32] = '\0';
}

static int open_edits(struct txbox_ws *ws, bool create, struct txbox_error *err)
{
        if (create && mkdirat(ws->state_fd, "edits", 0700) < 0 && errno != EEXIST)
                return tx_err(err, errno, "cannot create '%s/edits': %s", ws->state, strerror(errno));
        int fd = openat(ws->state_fd, "edits", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ENOENT
                                       : tx_err(err, errno, "cannot open '%s/edits': %s", ws->state, strerror(errno));
        return fd;
}

/* Captures past their time, and the oldest beyond EDIT_MAX_CAPTURES (keep: one more is
 * about to come), go: their post-tool events are not coming. */
static void sweep(int edits_fd, size_t keep)
{
        struct item {
                char name[NAME_MAX + 1];
                int64_t t;
        } *v = NULL;
        size_t n = 0, cap = 0;
        DIR *d = dir_stream(edits_fd);
        struct dirent *de;
        int64_t now = now_ms() * 1000000;
        struct stat st;

        if (!d)
                return;
        while ((de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
                    fstatat(edits_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (now - ns_of(&st.st_mtim) > EDIT_TTL_MS * 1000000) {
                        rm_rf_at(edits_fd, de->d_name);
                        continue;
                }
                if (n == cap)
                        v = xrealloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));
                snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
                v[n++].t = ns_of(&st.st_mtim);
        }
        closedir(d);
        while (n + keep > EDIT_MAX_CAPTURES && n) {
                size_t old = 0;
                for (size_t i = 1; i < n; i++)
                        if (v[i].t < v[old].t)
                                old = i;
                rm_rf_at(edits_fd, v[old].name);
                v[old] = v[--n];
        }
        free(v);
}

/* Copy the open file in to out (at most max bytes; -EFBIG beyond): the bytes copied. */
static int64_t copy_fd(int in, int out, int64_t max)
{
        int64_t total = 0;
        char buf[65536];

        if (lseek(in, 0, SEEK_SET) < 0)
                return -errno;
        for (;;) {
                ssize_t r = copy_file_range(in, NULL, out, NULL, 1 << 20, 0);
                if (r < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP) &&
                    total == 0)
                        break; /* not here: read and write */
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return total;
                if ((total += r) > max)
                        return -EFBIG;
        }
        for (;;) {
                ssize_t r = read(in, buf, sizeof(buf));
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return total;
                if ((total += r) > max)
                        return -EFBIG;
                for (ssize_t w = 0; w < r;) {
                        ssize_t k = write(out, buf + w, (size_t)(r - w));
                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k < 0)
                                return -errno;
                        w += k;
                }
        }
}

/* The extended attributes of in onto out, where they can go (best effort: security labels
 * and ACLs need rights txbox may not have; user.* go). */
static void copy_xattrs(int in, int out)
{
        char names[4096], val[4096];
        ssize_t n = flistxattr(in, names, sizeof(names));
        for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(names + i) + 1) {
                ssize_t v = fgetxattr(in, names + i, val, sizeof(val));
                if (v >= 0 && fsetxattr(out, names + i, val, (size_t)v, 0) < 0) {
                        /* not ours to set: left */
                }
        }
}

/* The first component of path (its shortest prefix) that does not exist, when every one
 * before it is a directory reached without a symlink; NULL otherwise. */
static char *first_missing(int ws_fd, const char *path)
{
        _cleanup_free_ char *p = xstrdup(path);
        for (char *s = p;;) {
                char *slash = strchr(s, '/');
                if (slash)
                        *slash = '\0';
                struct stat st;
                int r = lstat_beneath(ws_fd, p, &st);
                if (r == -ENOENT)
                        return xstrdup(p);
                if (r < 0 || !S_ISDIR(st.st_mode) || !slash)
                        return NULL;
                *slash = '/';
                s = slash + 1;
        }
}

/* What entry i (its path set) holds now, kept in capture directory cfd. */
static void capture_one(struct txbox_ws *ws, int cfd, size_t i, struct entry *e, int64_t *left)
{
        const char *base;
        struct stat st, ks;
        char name[32];
        _cleanup_close_ int dir = open_parent_beneath(ws->ws_fd, e->path, &base);

        e->before = BEFORE_OTHER;
        if (dir == -ENOENT) {
                if ((e->made_from = first_missing(ws->ws_fd, e->path)))
                        e->before = BEFORE_ABSENT;
                return;
        }
        if (dir < 0)
                return; /* behind a symlink or a file: the tool would not write it there */
        if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOENT)
                        e->before = BEFORE_ABSENT;
                return;
        }
        if (!S_ISREG(st.st_mode))
                return;
        e->before = BEFORE_FILE;
        e->ino = st.st_ino;
        e->mode = st.st_mode;
        e->size = st.st_size;
        e->mtime_ns = ns_of(&st.st_mtim);
        e->uid = st.st_uid;
        e->gid = st.st_gid;
        /* The inode itself: a name for it in the capture. */
        snprintf(name, sizeof(name), "%zu.keep", i);
        if (linkat(dir, base, cfd, name, 0) == 0) {
                e->keep = fstatat(cfd, name, &ks, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(ks.st_mode) &&
                          ks.st_ino == st.st_ino;
                if (!e->keep)
                        unlinkat(cfd, name, 0);
        }
        /* Its content, for an edit that writes in place. */
        if (st.st_size > EDIT_MAX_FILE || st.st_size > *left)
                return;
        _cleanup_close_ int in = openat(dir, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat s1, s2;
        if (in < 0 || fstat(in, &s1) < 0 || s1.st_ino != st.st_ino || !S_ISREG(s1.st_mode))
                return;
        snprintf(name, sizeof(name), "%zu.copy", i);
        _cleanup_close_ int out = openat(cfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        int64_t got = out >= 0 ? copy_fd(in, out, EDIT_MAX_FILE) : -1;
        /* Written meanwhile: the copy may be torn. */
        if (got < 0 || fstat(in, &s2) < 0 || s2.st_size != s1.st_size || ns_of(&s2.st_mtim) != e->mtime_ns ||
            got != s1.st_size) {
                unlinkat(cfd, name, 0);
                return;
        }
        e->copy = true;
        *left -= got;
}

static json_t *entry_json(const struct entry *e)
{
        return jv_nonnull(json_pack("{s:o, s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:b}", "path",
                                      jv_nonnull(json_stringn(e->path, strlen(e->path))), "before",
                                      before_names[e->before], "made_from",
                                      e->made_from ? jv_nonnull(json_stringn(e->made_from, strlen(e->made_from)))
                                                   : json_null(),
                                      "ino", (json_int_t)e->ino, "mode", (json_int_t)e->mode, "size",
                                      (json_int_t)e->size, "mtime_ns", (json_int_t)e->mtime_ns, "uid",
                                      (json_int_t)e->uid, "gid", (json_int_t)e->gid, "keep", e->keep, "copy",
                                      e->copy));
}

static int write_meta(int cfd, const struct capture *c, struct txbox_error *err)
{
        json_t *argv = jv_nonnull(json_array()), *es = jv_nonnull(json_array());
        for (char **a = c->argv; *a; a++)
                jv_push(argv, jv_nonnull(json_stringn(*a, strlen(*a))));
        for (size_t i = 0; i < c->n; i++)
                jv_push(es, entry_json(&c->e[i]));
        json_t *m = jv_nonnull(json_pack("{s:i, s:I, s:I, s:o, s:o}", "version", 1, "created_ms",
                                           (json_int_t)c->created_ms, "begin_seq", (json_int_t)c->begin_seq,
                                           "argv", argv, "entries", es));
        char *s = json_dumps(m, JSON_COMPACT | JSON_ENSURE_ASCII);
        json_decref(m);
        if (!s)
                abort();
        int r = write_file_atomic_at(cfd, "meta", s, strlen(s), false);
        free(s);
        return r < 0 ? tx_err(err, -r, "cannot write the capture of an edit: %s", strerror(-r)) : 0;
}

/* The meta file read back.  It lies in the state dir (which commands in the sandbox never
 * see, but the agent's own unsandboxed tools could write): checked as hostile input. */
static int read_meta(int cfd, struct capture *c)
{
        _cleanup_free_ char *s = NULL;
        size_t len;
        json_t *m = read_file_at(cfd, "meta", EDIT_META_MAX, &s, &len) == 0 ? json_loadb(s, len, 0, NULL) : NULL;
        json_t *argv = json_object_get(m, "argv"), *es = json_object_get(m, "entries"), *v;
        size_t i;
        int r = -EBADMSG;

        if (!json_is_array(argv) || !json_array_size(argv) || json_array_size(argv) > 4096 || !json_is_array(es) ||
            json_array_size(es) > EDIT_MAX_PATHS || json_integer_value(json_object_get(m, "version")) != 1)
                goto out;
        c->created_ms = json_integer_value(json_object_get(m, "created_ms"));
        c->begin_seq = json_integer_value(json_object_get(m, "begin_seq"));
        c->argv = xcalloc(json_array_size(argv) + 1, sizeof(char *));
        json_array_foreach (argv, i, v) {
                if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
                        goto out;
                c->argv[i] = xstrdup(json_string_value(v));
        }
        c->e = xcalloc(json_array_size(es) + 1, sizeof(*c->e));
        json_array_foreach (es, i, v) {
                struct entry *e = &c->e[c->n];
                const char *p = json_string_value(json_object_get(v, "path"));
                const char *b = json_string_value(json_object_get(v, "before"));
                const char *mf = json_string_value(json_object_get(v, "made_from"));
                if (!p || !valid_rel(p) || !b || (mf && (!valid_rel(mf) || !path_is_within(p, mf))))
                        goto out;
                e->path = xstrdup(p);
                c->n++;
                e->made_from = mf ? xstrdup(mf) : NULL;
                e->before = !strcmp(b, "absent") ? BEFORE_ABSENT : !strcmp(b, "file") ? BEFORE_FILE : BEFORE_OTHER;
                e->ino = (uint64_t)json_integer_value(json_object_get(v, "ino"));
                e->mode = (mode_t)json_integer_value(json_object_get(v, "mode"));
                e->size = json_integer_value(json_object_get(v, "size"));
                e->mtime_ns = json_integer_value(json_object_get(v, "mtime_ns"));
                e->uid = (uid_t)json_integer_value(json_object_get(v, "uid"));
                e->gid = (gid_t)json_integer_value(json_object_get(v, "gid"));
                e->keep = json_is_true(json_object_get(v, "keep"));
                e->copy = json_is_true(json_object_get(v, "copy"));
                if (e->before == BEFORE_FILE && (!S_ISREG(e->mode) || e->size < 0))
                        goto out;
        }
        r = 0;
out:
        json_decref(m);
        return r;
}

int txbox_edit_capture(struct txbox_ws *ws, const char *key, char *const argv[], char *const paths[],
                       struct txbox_error *err)
{
        struct capture c = {.fd = -1};
        char name[65], tmp[96];
        size_t n = 0;
        int r;

        if (!key || !argv || !argv[0] || !paths)
                return tx_err(err, EINVAL, "txbox_edit_capture: no key, argv or paths");
        for (; paths[n]; n++)
                if (n >= EDIT_MAX_PATHS || !valid_rel(paths[n]) || !utf8_valid(paths[n]))
                        return tx_err(err, EINVAL,
                                      n >= EDIT_MAX_PATHS ? "an edit of more than %d paths is not recorded"
                                                          : "path %d of the edit is not a UTF-8 path relative to the "
                                                            "workspace",
                                      n >= EDIT_MAX_PATHS ? EDIT_MAX_PATHS : (int)n);
        for (size_t i = 0; argv[i]; i++)
                if (!utf8_valid(argv[i]) || i > 4096)
                        return tx_err(err, EINVAL, "the edit's command line is not UTF-8 text");
        _cleanup_close_ int edits = open_edits(ws, true, err);
        if (edits < 0)
                return edits;
        sweep(edits, 1);
        capture_name(key, name);
        snprintf(tmp, sizeof(tmp), ".%s.%d", name, (int)getpid());
        rm_rf_at(edits, tmp);
        if (mkdirat(edits, tmp, 0700) < 0 ||
            (c.fd = openat(edits, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
                r = tx_err(err, errno, "cannot make a capture in '%s/edits': %s", ws->state, strerror(errno));
                goto out;
        }
        /* The newest commit first, then the originals: a commit that changes a path after
         * this is later than begin_seq (a stale capture is seen), never the other way. */
        c.begin_seq = ws_newest_commit_seq(ws);
        if (c.begin_seq < 0) {
                if ((r = audit_next_commit_seq(ws->audit, &c.begin_seq, err)) < 0)
                        goto out;
                c.begin_seq--;
        }
        c.created_ms = now_ms();
        c.argv = strv_dup(argv);
        c.e = xcalloc(n + 1, sizeof(*c.e));
        int64_t left = EDIT_MAX_BYTES;
        for (size_t i = 0; i < n; i++) {
                bool dup = false;
                for (size_t k = 0; k < c.n; k++)
                        dup = dup || !strcmp(c.e[k].path, paths[i]);
                if (dup)
                        continue;
                c.e[c.n].path = xstrdup(paths[i]);
                capture_one(ws, c.fd, c.n, &c.e[c.n], &left);
                c.n++;
        }
        if ((r = write_meta(c.fd, &c, err)) < 0)
                goto out;
        /* An earlier capture under the same key never got its post-tool event. */
        rm_rf_at(edits, name);
        if (renameat(edits, tmp, edits, name) < 0)
                r = tx_err(err, errno, "cannot keep the capture of an edit in '%s/edits': %s", ws->state,
                           strerror(errno));
out:
        if (r < 0)
                rm_rf_at(edits, tmp);
        capture_free(&c);
        return r;
}

int txbox_edit_drop(struct txbox_ws *ws, const char *key)
{
        char name[65];
        _cleanup_close_ int edits = open_edits(ws, false, NULL);
        if (edits < 0)
                return edits == -ENOENT ? 0 : edits;
        capture_name(key, name);
        return rm_rf_at(edits, name);
}

/* ---- the record ---- */

enum what { W_NONE, W_ADD_FILE, W_ADD_DIR, W_MODIFY, W_DELETE };
enum undo_src { U_NONE, U_KEEP, U_COPY, U_REWRITE };

struct item {
        const struct entry *e;
        size_t idx;          /* the entry's number: its N.keep, N.copy */
        enum what what;
        enum undo_src undo;
        const char *op_path; /* the entry's path, or the directory the edit made */
        struct stat live;    /* after the record (for the journal) */
};

/* Is N.keep still the original, untouched (an edit that renamed a new file over it)? */
static bool keep_intact(int cfd, size_t idx, const struct entry *e)
{
        char name[32];
        struct stat st;
        snprintf(name, sizeof(name), "%zu.keep", idx);
        return e->keep && fstatat(cfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
               st.st_ino == e->ino && st.st_size == e->size && ns_of(&st.st_mtim) == e->mtime_ns;
}

/* Do two open files hold the same bytes?  1 yes, 0 no, -errno. */
static int fds_equal(int a, int b)
{
        char ba[65536], bb[65536];

        if (lseek(a, 0, SEEK_SET) < 0 || lseek(b, 0, SEEK_SET) < 0)
                return -errno;
        for (;;) {
                ssize_t ra = read(a, ba, sizeof(ba)), rb;
                if (ra < 0)
                        return -errno;
                for (rb = 0; rb < ra;) {
                        ssize_t k = read(b, bb + rb, (size_t)(ra - rb));
                        if (k < 0)
                                return -errno;
                        if (k == 0)
                                return 0;
                        rb += k;
                }
                if (ra == 0)
                        return read(b, bb, 1) == 0;
                if (memcmp(ba, bb, (size_t)ra))
                        return 0;
        }
}

/* Are the live file (parent dir, base) and the capture's N.SUFFIX the same content and mode? */
static bool same_as(int dir, const char *base, int cfd, size_t idx, const char *suffix, const struct entry *e,
                    const struct stat *live)
{
        char name[32];
        snprintf(name, sizeof(name), "%zu.%s", idx, suffix);
        if ((live->st_mode & 07777) != (e->mode & 07777) || live->st_size != e->size)
                return false;
        _cleanup_close_ int a = openat(dir, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        _cleanup_close_ int b = openat(cfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        return a >= 0 && b >= 0 && fstat(a, &st) == 0 && S_ISREG(st.st_mode) && fds_equal(a, b) == 1;
}

/* What became of entry e, and where its original comes from. */
static int plan_one(struct txbox_ws *ws, int cfd, struct item *it, struct txbox_error *err)
{
        const struct entry *e = it->e;
        const char *base;
        _cleanup_close_ int dir = open_parent_beneath(ws->ws_fd, e->path, &base);
        struct stat st;
        bool exists = dir >= 0 && fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0;

        it->op_path = e->path;
        if (!exists && dir != -ENOENT && (dir < 0 || errno != ENOENT))
                return tx_err(err, ELOOP, "'%s' cannot be reached without a symlink now", e->path);
        if (exists && !S_ISREG(st.st_mode))
                return tx_err(err, EINVAL, "'%s' is no regular file after the edit", e->path);
        switch (e->before) {
        case BEFORE_OTHER:
                return tx_err(err, EINVAL, "'%s' was no regular file before the edit, or was behind a symlink",
                              e->path);
        case BEFORE_ABSENT:
                if (!exists)
                        return 0;
                it->what = W_ADD_FILE;
                if (e->made_from) {
                        struct stat ds;
                        if (lstat_beneath(ws->ws_fd, e->made_from, &ds) < 0 || !S_ISDIR(ds.st_mode))
                                return tx_err(err, EINVAL, "'%s' is no directory after the edit", e->made_from);
                        it->what = W_ADD_DIR;
                        it->op_path = e->made_from;
                }
                return 0;
        case BEFORE_FILE:
                break;
        }
        bool kept = keep_intact(cfd, it->idx, e);
        if (!exists) {
                it->what = W_DELETE;
                it->undo = kept ? U_KEEP : e->copy ? U_COPY : U_NONE;
        } else if (st.st_ino != e->ino) {
                /* A new file renamed over the name: the original inode is whole in N.keep. */
                if (kept ? same_as(dir, base, cfd, it->idx, "keep", e, &st)
                         : e->copy && same_as(dir, base, cfd, it->idx, "copy", e, &st))
                        return 0;
                it->what = W_MODIFY;
                it->undo = kept ? U_KEEP : e->copy ? U_COPY : U_NONE;
        } else {
                /* Written in place: the inode holds the new content. */
                if (st.st_size == e->size && ns_of(&st.st_mtim) == e->mtime_ns && st.st_mode == e->mode)
                        return 0;
                it->what = W_MODIFY;
                it->undo = !e->copy                                                  ? U_NONE
                           : st.st_nlink == (nlink_t)(e->keep ? 2 : 1) && st.st_size <= EDIT_MAX_FILE ? U_REWRITE
                                                                                      : U_COPY;
        }
        if (it->undo == U_NONE)
                return tx_err(err, EFBIG,
                              "the original of '%s' was not kept (over %lld MiB, or it changed while it was "
                              "read)",
                              e->path, (long long)(EDIT_MAX_FILE >> 20));
        return 0;
}

/* N.copy as the original it stands for: its mode, owner (as root) and modification time. */
static int copy_as_original(int cfd, size_t idx, const struct entry *e)
{
        char name[32];
        snprintf(name, sizeof(name), "%zu.copy", idx);
        _cleanup_close_ int fd = openat(cfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct timespec t[2] = {{.tv_nsec = UTIME_OMIT}, ts_of(e->mtime_ns)};
        if (fd < 0 || (geteuid() == 0 && fchown(fd, e->uid, e->gid) < 0) || fchmod(fd, e->mode & 07777) < 0 ||
            futimens(fd, t) < 0)
                return -errno;
        return 0;
}

/* Link what dir_fd/name holds into undo/PATH (a name of its own: the capture goes later). */
static int link_undo(int undo_fd, const char *path, int dir_fd, const char *name)
{
        const char *b;
        _cleanup_close_ int p = make_parent_beneath(undo_fd, path, 0700, &b);
        if (p < 0)
                return p;
        return linkat(dir_fd, name, p, b, 0) < 0 ? -errno : 0;
}

/* An edit in place: the new content goes to a new inode exchanged into the name, and the
 * old inode, now in stage/, gets the original content back: the undo data, and the inode an
 * earlier commit's undo will look for.  -EAGAIN: the file changed meanwhile (nothing done). */
static int rewrite(struct txbox_ws *ws, int cfd, int stage, int undo_fd, const struct item *it)
{
        const struct entry *e = it->e;
        const char *base;
        char k[32], cname[32];
        struct stat s1, s2, got;
        _cleanup_close_ int dir = open_parent_beneath(ws->ws_fd, e->path, &base);
        _cleanup_close_ int in = dir < 0 ? -1 : openat(dir, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        int r;

        snprintf(k, sizeof(k), "%zu", it->idx);
        snprintf(cname, sizeof(cname), "%zu.copy", it->idx);
        if (in < 0 || fstat(in, &s1) < 0 || s1.st_ino != e->ino || !S_ISREG(s1.st_mode))
                return -EAGAIN;
        {
                _cleanup_close_ int out = openat(stage, k, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                struct timespec t[2] = {s1.st_atim, s1.st_mtim};
                bool ok = out >= 0 && copy_fd(in, out, EDIT_MAX_FILE) == s1.st_size &&
                          (geteuid() != 0 || fchown(out, s1.st_uid, s1.st_gid) == 0) &&
                          fchmod(out, s1.st_mode & 07777) == 0;
                if (ok)
                        copy_xattrs(in, out);
                /* The same time to the nanosecond: Claude Code refuses to edit a file whose
                 * modification time moved since it read it. */
                ok = ok && futimens(out, t) == 0 && fstat(in, &s2) == 0 && s2.st_size == s1.st_size &&
                     ns_of(&s2.st_mtim) == ns_of(&s1.st_mtim);
                if (!ok) {
                        unlinkat(stage, k, 0);
                        return -EAGAIN;
                }
        }
        if ((r = failpoint("edit")) < 0)
                return r;
        if (renameat2(stage, k, dir, base, RENAME_EXCHANGE) < 0) {
                r = errno;
                unlinkat(stage, k, 0);
                return r == EINVAL || r == ENOSYS ? -EAGAIN : -r;
        }
        /* Still the inode read, unchanged?  Else trade back: someone wrote between. */
        if (fstatat(stage, k, &got, AT_SYMLINK_NOFOLLOW) < 0 || got.st_ino != e->ino || got.st_size != s1.st_size ||
            ns_of(&got.st_mtim) != ns_of(&s1.st_mtim)) {
                if (renameat2(stage, k, dir, base, RENAME_EXCHANGE) < 0)
                        return -ENOTRECOVERABLE; /* stage/k holds the file the name had: kept */
                unlinkat(stage, k, 0);
                return -EAGAIN;
        }
        (void)failpoint("edit");
        /* The old inode gets the original content and time back (opened for writing as
         * its owner, whatever its mode). */
        if (fchmodat(stage, k, 0600, 0) < 0)
                return -errno;
        {
                _cleanup_close_ int o = openat(stage, k, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
                _cleanup_close_ int c = openat(cfd, cname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                struct timespec t[2] = {{.tv_nsec = UTIME_OMIT}, ts_of(e->mtime_ns)};
                if (o < 0 || c < 0 || copy_fd(c, o, EDIT_MAX_FILE) != e->size || fchmod(o, e->mode & 07777) < 0 ||
                    futimens(o, t) < 0)
                        return o < 0 || c < 0 ? -errno : -EIO;
        }
        if ((r = link_undo(undo_fd, e->path, stage, k)) < 0)
                return r;
        unlinkat(stage, k, 0);
        return 0;
}

static int cmp_item(const void *a, const void *b)
{
        return strcmp(((const struct item *)a)->op_path, ((const struct item *)b)->op_path);
}

static int cmp_tpath(const void *a, const void *b)
{
        return strcmp(((const struct txbox_path *)a)->path, ((const struct txbox_path *)b)->path);
}

struct walk {
        int ws_fd;
        struct cs_manifest *mf;
        struct txbox_path **paths;
        size_t *npaths, cap;
        size_t count;
};

static void add_path(struct walk *w, const char *path, enum txbox_change c)
{
        if (*w->npaths == w->cap)
                *w->paths = xrealloc(*w->paths, (w->cap = w->cap ? 2 * w->cap : 16) * sizeof(**w->paths));
        (*w->paths)[(*w->npaths)++] = (struct txbox_path){xstrdup(path), c};
}

/* Everything in the directory the edit made, into the manifest (undo checks it is all as
 * the edit left it) and the paths. */
static int walk_new_dir(struct walk *w, const char *path, int depth)
{
        _cleanup_close_ int fd = open_beneath(w->ws_fd, path, O_RDONLY | O_DIRECTORY, 0);
        DIR *d = fd >= 0 && depth <= CS_MAX_DEPTH ? dir_stream(fd) : NULL;
        struct dirent *de;
        int r = 0;

        if (!d)
                return fd < 0 ? fd : -ELOOP;
        while (r == 0 && (de = readdir(d))) {
                struct stat st;
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                if (++w->count > EDIT_MAX_WALK) {
                        r = -E2BIG;
                        break;
                }
                _cleanup_free_ char *child = xasprintf("%s/%s", path, de->d_name);
                if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                cs_manifest_add(w->mf, child, &st);
                add_path(w, child, TXBOX_ADDED);
                if (S_ISDIR(st.st_mode))
                        r = walk_new_dir(w, child, depth + 1);
        }
        closedir(d);
        return r;
}

static int lstat_live(struct txbox_ws *ws, const char *path, struct stat *st)
{
        return lstat_beneath(ws->ws_fd, path, st);
}

/* The operations (parents first), the paths and the manifest of what the edit made. */
static int build_ops(struct txbox_ws *ws, struct item *items, size_t n, struct cs_op **ops, size_t *nops,
                     struct cs_manifest *mf, struct txbox_path **paths, size_t *npaths)
{
        struct walk w = {.ws_fd = ws->ws_fd, .mf = mf, .paths = paths, .npaths = npaths};
        int r = 0;

        *ops = xcalloc(n + 1, sizeof(**ops));
        *nops = 0;
        for (size_t i = 0; i < n && r == 0; i++) {
                struct item *it = &items[i];
                struct cs_op *o = &(*ops)[*nops];
                if (it->what == W_NONE)
                        continue;
                if (it->what != W_DELETE && (r = lstat_live(ws, it->op_path, &it->live)) < 0)
                        break;
                o->path = xstrdup(it->op_path);
                o->kind = CS_OP_SWAP;
                o->has_old = it->what == W_MODIFY || it->what == W_DELETE;
                o->has_new = it->what != W_DELETE;
                o->old_mode = o->has_old ? it->e->mode : 0;
                if (o->has_new) {
                        o->new_mode = it->live.st_mode;
                        o->new_ino = it->live.st_ino;
                        o->new_size = it->live.st_size;
                        o->new_mtime_ns = ns_of(&it->live.st_mtim);
                }
                (*nops)++;
                add_path(&w, it->op_path,
                         it->what == W_DELETE ? TXBOX_DELETED : it->what == W_MODIFY ? TXBOX_MODIFIED : TXBOX_ADDED);
                if (it->what == W_ADD_DIR)
                        r = walk_new_dir(&w, it->op_path, 1);
        }
        cs_manifest_sort(mf);
        if (*npaths)
                qsort(*paths, *npaths, sizeof(**paths), cmp_tpath);
        return r;
}

static void paths_free(struct txbox_path *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(p[i].path);
        free(p);
}

/* Refused (ESTALE) when a transaction committed one of the captured paths after the capture:
 * the capture is then not what the edit replaced. */
static int check_not_stale(struct txbox_ws *ws, const struct capture *c, struct txbox_error *err)
{
        struct txbox_path *tp = xcalloc(c->n + 1, sizeof(*tp));
        struct strvec stale = {0};

        for (size_t i = 0; i < c->n; i++)
                tp[i] = (struct txbox_path){c->e[i].path, TXBOX_MODIFIED};
        int r = audit_later_overlaps(ws->audit, c->begin_seq, tp, c->n, &stale, err);
        free(tp);
        if (r >= 0 && stale.n)
                r = tx_err(err, ESTALE,
                           "a transaction changed it between the pre- and post-tool events: %s; the edit's "
                           "originals are not what it replaced",
                           stale.v[0]);
        strvec_clear(&stale);
        return r < 0 ? r : 0;
}

/* What became of each captured path, one item per operation (*n of them), sorted; 1 when
 * nothing changed. */
static int plan_items(struct txbox_ws *ws, struct capture *c, struct item **out, size_t *n,
                      struct txbox_error *err)
{
        struct item *items = xcalloc(c->n + 1, sizeof(*items));
        bool any = false;
        int r;

        *out = items;
        *n = 0;
        for (size_t i = 0; i < c->n; i++) {
                items[*n] = (struct item){.e = &c->e[i], .idx = i};
                if ((r = plan_one(ws, c->fd, &items[*n], err)) < 0)
                        return r;
                /* Two paths under one directory the edit made: one operation. */
                bool dup = false;
                for (size_t k = 0; k < *n && items[*n].what == W_ADD_DIR; k++)
                        dup = dup || (items[k].what == W_ADD_DIR && !strcmp(items[k].op_path, items[*n].op_path));
                if (dup)
                        continue;
                any = any || items[*n].what != W_NONE;
                (*n)++;
        }
        if (!any)
                return 1;
        qsort(items, *n, sizeof(*items), cmp_item);
        return 0;
}

/* The undo data of each item in tx/ID/undo: the inode kept, the copy, or the inode rewritten.
 * 1 (with err set) when an exchange could not be undone: what the name held is in the stage,
 * and the transaction's directory must stay. */
static int keep_originals(struct txbox_ws *ws, const struct capture *c, int stage, int undo, struct item *items,
                          size_t n, const char *id, struct txbox_error *err)
{
        for (size_t i = 0; i < n; i++) {
                struct item *it = &items[i];
                char kname[32];
                int r = it->undo == U_REWRITE ? rewrite(ws, c->fd, stage, undo, it) : 0;
                if (r == -EAGAIN) {
                        it->undo = U_COPY; /* it changed meanwhile: the content, not the inode */
                        r = 0;
                } else if (r == -ENOTRECOVERABLE) {
                        /* Never seen: an exchange that worked could not be undone a moment
                         * later.  What the name held is in the stage: the directory stays. */
                        tx_err(err, EIO,
                               "'%s' changed while txbox recorded the edit, and its content is now in "
                               "'%s/tx/%s/stage/%zu': put it back by hand",
                               it->e->path, ws->state, id, it->idx);
                        return 1;
                }
                if (r >= 0 && it->undo == U_COPY)
                        r = copy_as_original(c->fd, it->idx, it->e);
                snprintf(kname, sizeof(kname), "%zu.%s", it->idx, it->undo == U_KEEP ? "keep" : "copy");
                if (r >= 0 && (it->undo == U_KEEP || it->undo == U_COPY))
                        r = link_undo(undo, it->e->path, c->fd, kname);
                if (r < 0)
                        return tx_err(err, -r, "cannot keep the original of '%s': %s", it->e->path, strerror(-r));
        }
        return 0;
}

/* The committed row of the edit, then the marker and the begin file as a commit leaves them
 * (logrepair.c, gc.c).  Takes the paths. */
static int write_row(struct txbox_ws *ws, int dir, const struct capture *c, struct txbox_record *rec,
                     struct txbox_path *paths, size_t npaths, struct txbox_error *err)
{
        int r;

        rec->argv = strv_dup(c->argv);
        rec->cwd = xstrdup(ws->path);
        rec->decision = xstrdup("allow");
        rec->exit_code = -1;
        rec->outcome = TXBOX_COMMITTED;
        rec->started_ms = c->created_ms;
        rec->ended_ms = now_ms();
        rec->duration_ms = rec->ended_ms - rec->started_ms;
        rec->message = xstrdup(EDIT_MSG);
        rec->paths = paths, rec->npaths = npaths;
        if ((r = audit_next_commit_seq(ws->audit, &rec->commit_seq, err)) < 0)
                return r;
        tx_stamp_changes(ws->state_fd); /* before the row: see write_snapshot in tx.c */
        if ((r = audit_insert(ws->audit, rec, err)) < 0)
                return r;
        ws_note_commit_seq(ws, rec->commit_seq);
        (void)failpoint("edit"); /* past the row: only a crash is of interest */
        ws_write_commit_marker(dir, rec->commit_seq);
        _cleanup_free_ char *j = jv_dump(record_to_json(rec));
        _cleanup_free_ char *b = xasprintf("%lld 0\n%s\n", (long long)c->begin_seq, j);
        write_file_atomic_at(dir, "begin", b, strlen(b), false);
        return 0;
}

static int record_locked(struct txbox_ws *ws, int edits, const char *name, struct txbox_record *out,
                         struct txbox_error *err)
{
        struct capture c = {.fd = -1};
        struct item *items = NULL;
        struct cs_op *ops = NULL;
        size_t n = 0, nops = 0, npaths = 0;
        struct txbox_path *paths = NULL;
        struct cs_manifest mf = {0};
        struct txbox_record rec = {0};
        int lock = -1, dir = -1, undo = -1, stage = -1;
        int r;

        if ((c.fd = openat(edits, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
                c.fd = -1;
                return tx_err(err, ENOENT, "no capture of this edit: its pre-tool event was not seen, or the capture "
                                           "expired");
        }
        if (read_meta(c.fd, &c) < 0) {
                r = tx_err(err, EBADMSG, "the capture of this edit is damaged");
                goto out;
        }
        if ((r = check_not_stale(ws, &c, err)) < 0 || (r = plan_items(ws, &c, &items, &n, err)) != 0)
                goto out; /* 1: nothing changed, nothing to record */
        random_hex(rec.id, 5);
        if ((lock = tx_claim(ws, rec.id, false, err)) < 0) {
                r = lock;
                goto out;
        }
        if (mkdirat(ws->tx_fd, rec.id, 0700) < 0 ||
            (dir = openat(ws->tx_fd, rec.id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
            mkdirat(dir, "undo", 0700) < 0 || (undo = openat(dir, "undo", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
            mkdirat(dir, "stage", 0700) < 0 || (stage = openat(dir, "stage", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                r = tx_err(err, errno, "cannot make '%s/tx/%s' for the edit: %s", ws->state, rec.id, strerror(errno));
                goto fail;
        }
        if ((r = keep_originals(ws, &c, stage, undo, items, n, rec.id, err)) > 0) {
                tx_unclaim(ws, rec.id, lock); /* the stage holds a file: its directory stays */
                lock = -1;
                r = -EIO;
                goto out;
        }
        if (r < 0)
                goto fail;
        if ((r = build_ops(ws, items, n, &ops, &nops, &mf, &paths, &npaths)) < 0) {
                tx_err(err, -r, "cannot list what the edit changed: %s",
                       r == -E2BIG ? "a directory it made holds too many entries" : strerror(-r));
                goto fail;
        }
        if ((r = journal_write(dir, "journal", ops, nops, false, err)) < 0 ||
            (mf.n && (r = journal_manifest_write(dir, "manifest", &mf, err)) < 0))
                goto fail;
        /* Durable before the row: the undo data, the journal, the exchange of an edit in place. */
        if ((r = failpoint("edit")) < 0 || (syncfs(dir) < 0 && (r = -errno) < 0)) {
                tx_err(err, -r, "cannot sync the record of the edit: %s", strerror(-r));
                goto fail;
        }
        r = write_row(ws, dir, &c, &rec, TAKE_PTR(paths), npaths, err);
        npaths = 0;
        if (r < 0)
                goto fail;
        rm_rf_at(dir, "stage");
        tx_unclaim(ws, rec.id, lock);
        lock = -1;
        rm_rf_at(edits, name);
        if (out)
                *out = rec;
        else
                txbox_record_clear(&rec);
        memset(&rec, 0, sizeof(rec));
        r = 0;
        goto out;
fail:
        /* Nothing in the log: the tx directory goes (the capture still holds what it kept). */
        rm_rf_at(ws->tx_fd, rec.id);
        tx_unclaim(ws, rec.id, lock);
        lock = -1;
out:
        if (r != 0 && r != -ENOENT)
                rm_rf_at(edits, name); /* recorded, nothing to record, or not recordable: done */
        closep(&dir);
        closep(&undo);
        closep(&stage);
        if (lock >= 0)
                close(lock);
        journal_ops_free(ops, nops);
        cs_manifest_free(&mf);
        paths_free(paths, npaths);
        txbox_record_clear(&rec);
        free(items);
        capture_free(&c);
        return r;
}

int txbox_edit_record(struct txbox_ws *ws, const char *key, struct txbox_record *out, struct txbox_error *err)
{
        char name[65];
        int r;

        if (out)
                memset(out, 0, sizeof(*out));
        if (!key)
                return tx_err(err, EINVAL, "txbox_edit_record: no key");
        _cleanup_close_ int edits = open_edits(ws, false, err);
        if (edits == -ENOENT)
                return tx_err(err, ENOENT, "no capture of this edit: its pre-tool event was not seen");
        if (edits < 0)
                return edits;
        capture_name(key, name);
        if ((r = ws_lock(ws, err)) < 0)
                return r;
        r = record_locked(ws, edits, name, out, err);
        ws_unlock(ws);
        sweep(edits, 0);
        return r;
}
