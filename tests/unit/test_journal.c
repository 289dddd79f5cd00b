/* The commit journal (journal.c): its file format (every field, names with any byte but NUL,
 * and what a truncated or garbled file gives), journal_invert, and journal_apply /
 * journal_revert on real trees: restoring exactly, idempotent, and crash-safe at every step
 * (TXBOX_FAILPOINT, in a forked child that the failpoint kills).
 *
 * Trees are compared as snapshots in which every entry carries a label naming where it was
 * when the scenario was set up ("L:path" live, "S:path" the source layer), found by its
 * inode: an apply that copied instead of renamed, or moved the wrong entry, shows.
 *
 * tests/run.sh runs this as root and as an unprivileged user (as-user): as a user, directory
 * modes really stop renames, so the order of journal_apply's mode rounds is tested too. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/macros.h"
#include "base/mem.h"
#include "store/journal.h"
#include "tap.h"

static char top[1024];
static int top_fd = -1;

/* ---- small helpers ---- */

static char *xasprintf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf_(const char *fmt, ...)
{
        va_list ap;
        char *s = NULL;
        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                abort();
        va_end(ap);
        return s;
}

/* Bytes as one readable token: everything but printable ASCII as %xx. */
static char *esc(const char *s, size_t n)
{
        char *out = xmalloc(3 * n + 1), *w = out;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c <= 0x20 || c >= 0x7f || c == '%')
                        w += sprintf(w, "%%%02x", c);
                else
                        *w++ = (char)c;
        }
        *w = '\0';
        return out;
}

static bool put(int dirfd, const char *path, const char *text, mode_t mode)
{
        int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        size_t len = strlen(text);
        bool good = fd >= 0 && write(fd, text, len) == (ssize_t)len && fchmod(fd, mode) == 0;
        if (fd >= 0)
                close(fd);
        return good;
}

static bool put_bytes(int dirfd, const char *name, const char *data, size_t len)
{
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        bool good = fd >= 0 && write(fd, data, len) == (ssize_t)len;
        if (fd >= 0)
                close(fd);
        return good;
}

static int opendir_at(int dirfd, const char *path)
{
        return openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* ---- running journal code in a forked child ----
 * failpoint() reads TXBOX_FAILPOINT once per process: this process never calls journal_apply
 * or journal_revert itself, so that each child reads the spec it was given. */

#define CRASHED(sig) (1000 + (sig))

/* 0 or -errno as the child's fn returned it, or CRASHED(signal). */
static int in_child(const char *fpspec, int (*fn)(void *), void *arg)
{
        int status;
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                if (fpspec)
                        setenv("TXBOX_FAILPOINT", fpspec, 1);
                int r = fn(arg);
                fflush(stdout);
                _exit(r < 0 ? (-r) & 0xff : 0);
        }
        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        if (WIFSIGNALED(status))
                return CRASHED(WTERMSIG(status));
        return -WEXITSTATUS(status);
}

/* ---- snapshots of trees ---- */

struct label {
        dev_t dev;
        ino_t ino;
        char *name;
};

struct fixture {
        char *root;
        int live, src, aside, redo;
        struct label *labels;
        size_t nlabels;
        struct cs_op *ops;
        size_t nops;
};

struct ent {
        char *path; /* escaped */
        char type;  /* f d l ? */
        unsigned mode;
        const char *label;
        char *data; /* escaped content or symlink target */
};

struct snap {
        struct ent *e;
        size_t n, cap;
};

enum { SNAP_AREA = 1 }; /* txbox's own areas: no unlabeled directories, no directory modes */

static const char *label_of(const struct fixture *fx, const struct stat *st)
{
        for (size_t i = 0; i < fx->nlabels; i++)
                if (fx->labels[i].ino == st->st_ino && fx->labels[i].dev == st->st_dev)
                        return fx->labels[i].name;
        return "-";
}

static void snap_add(struct snap *s, struct ent e)
{
        if (s->n == s->cap)
                s->e = xrealloc(s->e, (s->cap = s->cap ? 2 * s->cap : 64) * sizeof(*s->e));
        s->e[s->n++] = e;
}

static void snap_free(struct snap *s)
{
        for (size_t i = 0; i < s->n; i++) {
                free(s->e[i].path);
                free(s->e[i].data);
        }
        free(s->e);
        memset(s, 0, sizeof(*s));
}

static int cmp_name(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *entry_data(int dirfd, const char *name, const struct stat *st)
{
        char buf[8192];
        ssize_t n = -1;

        if (S_ISLNK(st->st_mode)) {
                n = readlinkat(dirfd, name, buf, sizeof(buf));
        } else if (S_ISREG(st->st_mode)) {
                int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
                if (fd >= 0)
                        close(fd);
        } else {
                n = 0;
        }
        return n < 0 ? xstrdup("<unreadable>") : esc(buf, (size_t)n);
}

/* Every entry beneath dirfd (prefix: the raw path of dirfd inside the tree, "" at the top). */
static void walk(const struct fixture *fx, int dirfd, const char *prefix, unsigned flags, struct snap *s)
{
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;
        char **names = NULL;
        size_t n = 0, cap = 0;

        if (!d) {
                if (fd >= 0)
                        close(fd);
                snap_add(s, (struct ent){esc(prefix, strlen(prefix)), '?', 0, "-", xstrdup("<cannot list>")});
                return;
        }
        while ((de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                if (n == cap)
                        names = xrealloc(names, (cap = cap ? 2 * cap : 16) * sizeof(*names));
                names[n++] = xstrdup(de->d_name);
        }
        closedir(d);
        if (n)
                qsort(names, n, sizeof(*names), cmp_name);
        for (size_t i = 0; i < n; i++) {
                struct stat st;
                char *raw = *prefix ? xasprintf_("%s/%s", prefix, names[i]) : xstrdup(names[i]);
                if (fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0) {
                        const char *label = label_of(fx, &st);
                        bool dir = S_ISDIR(st.st_mode);
                        char type = dir ? 'd' : S_ISREG(st.st_mode) ? 'f' : S_ISLNK(st.st_mode) ? 'l' : '?';
                        if (!(flags & SNAP_AREA && dir && !strcmp(label, "-")))
                                snap_add(s, (struct ent){esc(raw, strlen(raw)), type,
                                                         flags & SNAP_AREA && dir ? 0 : st.st_mode & 07777,
                                                         label, entry_data(dirfd, names[i], &st)});
                        int sub = dir ? opendir_at(dirfd, names[i]) : -1;
                        if (sub >= 0) {
                                walk(fx, sub, raw, flags, s);
                                close(sub);
                        }
                }
                free(raw);
                free(names[i]);
        }
        free(names);
}

static int cmp_ent(const void *a, const void *b)
{
        return strcmp(((const struct ent *)a)->path, ((const struct ent *)b)->path);
}

/* One line per entry, sorted. */
static char *snap_str(struct snap *s)
{
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        if (s->n)
                qsort(s->e, s->n, sizeof(*s->e), cmp_ent);
        for (size_t i = 0; i < s->n; i++)
                fprintf(f, "%s %c %04o %s %s\n", s->e[i].path, s->e[i].type, s->e[i].mode, s->e[i].label,
                        s->e[i].data);
        fclose(f);
        return out;
}

static char *tree_str(const struct fixture *fx, int dirfd, unsigned flags)
{
        struct snap s = {0};
        walk(fx, dirfd, "", flags, &s);
        char *str = snap_str(&s);
        snap_free(&s);
        return str;
}

/* ok() on two snapshots; on a mismatch, the first line that differs. */
static void same_tree(const char *got, const char *want, const char *what, const char *area)
{
        bool eq = !strcmp(got, want);
        ok(eq, "%s: %s", what, area);
        if (eq)
                return;
        const char *g = got, *w = want;
        while (*g && *w) {
                size_t gl = strcspn(g, "\n"), wl = strcspn(w, "\n");
                if (gl != wl || memcmp(g, w, gl)) {
                        printf("#   got:  %.*s\n#   want: %.*s\n", (int)gl, g, (int)wl, w);
                        return;
                }
                g += gl + (g[gl] == '\n');
                w += wl + (w[wl] == '\n');
        }
        printf("#   got %s, want %s\n", *g ? g : "(end)", *w ? w : "(end)");
}

/* ---- the scenario: a live tree, the layer that changes it, and the ops ---- */

#define DEEP_LEVELS 14
#define DEEP_NAME 250

static char *deep_path(const char *leaf)
{
        char name[DEEP_NAME + 1], *p = xstrdup("deep");
        memset(name, 'n', DEEP_NAME);
        name[DEEP_NAME] = '\0';
        for (int i = 0; i < DEEP_LEVELS; i++) {
                name[0] = (char)('a' + i);
                char *q = xasprintf_("%s/%s", p, name);
                free(p);
                p = q;
        }
        if (leaf) {
                char *q = xasprintf_("%s/%s", p, leaf);
                free(p);
                p = q;
        }
        return p;
}

static bool mkdeep(int dirfd, const char *leaf_text)
{
        char *dir = deep_path(NULL), *leaf = deep_path("leaf");
        bool good = mkdir_p_at(dirfd, dir, 0755) == 0 && put(dirfd, leaf, leaf_text, 0644);
        free(dir);
        free(leaf);
        return good;
}

/* Parts a scenario can leave out: a directory the commit closes (0755 -> 0555) with a
 * file changed inside, and one it opens (0555 -> 0755), which its undo closes. */
enum { FX_FULL = 0, FX_NO_CLOSED = 1, FX_NO_OPENED = 2 };

#define ODD "odd \n%\xff\xfe name"
#define ODD_NEW "-new\tname\x01\x7f"

static bool make_live(int l, unsigned v)
{
        bool g = true;
        g = g && put(l, "keep.txt", "keep\n", 0644);
        g = g && put(l, "mod.txt", "old\n", 0644);
        g = g && put(l, "mod2.txt", "old2\n", 0644);
        g = g && put(l, "del.txt", "gone\n", 0644);
        g = g && put(l, "exe.sh", "#!/bin/sh\n", 0755);
        g = g && symlinkat("keep.txt", l, "link") == 0;
        g = g && symlinkat("../nowhere", l, "dangling") == 0;
        g = g && mkdirat(l, "d", 0755) == 0 && put(l, "d/a", "a\n", 0644) && put(l, "d/b", "b\n", 0600);
        g = g && mkdirat(l, "d/sub", 0750) == 0 && put(l, "d/sub/c", "c\n", 0644);
        g = g && put(l, "f2d", "file\n", 0644);
        g = g && mkdirat(l, "d2f", 0755) == 0 && put(l, "d2f/k", "k\n", 0644);
        g = g && mkdirat(l, "ro", 0755) == 0 && put(l, "ro/r", "r\n", 0644) &&
                fchmodat(l, "ro", 0555, 0) == 0;
        if (!(v & FX_NO_OPENED))
                g = g && mkdirat(l, "opened", 0755) == 0 && put(l, "opened/f", "f-old\n", 0644) &&
                    fchmodat(l, "opened", 0555, 0) == 0;
        if (!(v & FX_NO_CLOSED))
                g = g && mkdirat(l, "closed", 0755) == 0 && put(l, "closed/f", "c-old\n", 0644);
        g = g && mkdirat(l, "cm", 0755) == 0 && mkdirat(l, "cm/inner", 0700) == 0 &&
            put(l, "cm/inner/g", "g-old\n", 0644);
        g = g && put(l, ODD, "o-old\n", 0644);
        g = g && mkdeep(l, "leaf-old\n");
        return g;
}

static bool make_src(int s, unsigned v)
{
        bool g = true;
        g = g && put(s, "mod.txt", "new\n", 0600);
        g = g && put(s, "mod2.txt", "new2\n", 0755);
        g = g && symlinkat("keep.txt", s, "exe.sh") == 0;
        g = g && put(s, "link", "now a file\n", 0644);
        g = g && put(s, "new.txt", "added\n", 0640);
        g = g && mkdirat(s, "d", 0755) == 0 && put(s, "d/x", "x\n", 0644) && mkdirat(s, "d/y", 0700) == 0 &&
            put(s, "d/y/z", "z\n", 0644);
        g = g && mkdirat(s, "f2d", 0755) == 0 && put(s, "f2d/inside", "in\n", 0644);
        g = g && put(s, "d2f", "now a file\n", 0600);
        g = g && mkdirat(s, "newdir", 0755) == 0 && put(s, "newdir/n", "n\n", 0644) &&
            mkdirat(s, "newdir/nd", 0755) == 0 && put(s, "newdir/nd/m", "m\n", 0644) &&
            fchmodat(s, "newdir/nd", 0500, 0) == 0 && fchmodat(s, "newdir", 0555, 0) == 0;
        if (!(v & FX_NO_OPENED))
                g = g && mkdirat(s, "opened", 0755) == 0 && put(s, "opened/f", "f-new\n", 0644);
        if (!(v & FX_NO_CLOSED))
                g = g && mkdirat(s, "closed", 0755) == 0 && put(s, "closed/f", "c-new\n", 0644) &&
                    fchmodat(s, "closed", 0555, 0) == 0;
        g = g && mkdirat(s, "cm", 0755) == 0 && mkdirat(s, "cm/inner", 0755) == 0 &&
            put(s, "cm/inner/g", "g-new\n", 0644) && fchmodat(s, "cm", 0555, 0) == 0;
        g = g && put(s, ODD, "o-new\n", 0600);
        g = g && put(s, ODD_NEW, "odd new\n", 0644);
        g = g && mkdeep(s, "leaf-new\n");
        return g;
}

static void add_labels(struct fixture *fx, int dirfd, const char *area, const char *prefix)
{
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;

        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        while ((de = readdir(d))) {
                struct stat st;
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
                    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                char *raw = *prefix ? xasprintf_("%s/%s", prefix, de->d_name) : xstrdup(de->d_name);
                char *e = esc(raw, strlen(raw));
                fx->labels = xrealloc(fx->labels, (fx->nlabels + 1) * sizeof(*fx->labels));
                fx->labels[fx->nlabels++] = (struct label){st.st_dev, st.st_ino,
                                                           xasprintf_("%s:%s", area, e)};
                free(e);
                int sub = S_ISDIR(st.st_mode) ? opendir_at(dirfd, de->d_name) : -1;
                if (sub >= 0) {
                        add_labels(fx, sub, area, raw);
                        close(sub);
                }
                free(raw);
        }
        closedir(d);
}

static void add_op(struct fixture *fx, struct cs_op o)
{
        fx->ops = xrealloc(fx->ops, (fx->nops + 1) * sizeof(*fx->ops));
        o.path = xstrdup(o.path);
        fx->ops[fx->nops++] = o;
}

/* A SWAP as changeset_build plans it: modes of both sides, the new entry's identity (unless
 * ino is false: the two-rename path). */
static void swap_op(struct fixture *fx, const char *path, bool has_old, bool has_new, bool ino)
{
        struct stat ls = {0}, ss = {0};
        if (has_old && fstatat(fx->live, path, &ls, AT_SYMLINK_NOFOLLOW) < 0)
                ok(0, "set up: live %s: %s", path, strerror(errno));
        if (has_new && fstatat(fx->src, path, &ss, AT_SYMLINK_NOFOLLOW) < 0)
                ok(0, "set up: source %s: %s", path, strerror(errno));
        add_op(fx, (struct cs_op){.path = (char *)path, .kind = CS_OP_SWAP, .has_old = has_old,
                                  .has_new = has_new, .old_mode = has_old ? ls.st_mode : 0,
                                  .new_mode = has_new ? ss.st_mode : 0,
                                  .new_ino = has_new && ino ? ss.st_ino : 0, .new_size = ss.st_size,
                                  .new_mtime_ns =
                                  (int64_t)ss.st_mtim.tv_sec * 1000000000 + ss.st_mtim.tv_nsec});
}

static void chmod_op(struct fixture *fx, const char *path, mode_t from, mode_t to)
{
        add_op(fx, (struct cs_op){.path = (char *)path, .kind = CS_OP_CHMOD, .old_mode = from,
                                  .new_mode = to});
}

static void fixture_free(struct fixture *fx)
{
        int *fds[] = {&fx->live, &fx->src, &fx->aside, &fx->redo};
        for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
                if (*fds[i] >= 0)
                        close(*fds[i]);
        for (size_t i = 0; i < fx->nlabels; i++)
                free(fx->labels[i].name);
        free(fx->labels);
        journal_ops_free(fx->ops, fx->nops);
        free(fx->root);
        memset(fx, 0, sizeof(*fx));
}

/* A fresh scenario under top/name; its ops go through journal_write and journal_read, as a
 * commit's and a recovery's do. */
static bool fixture_new(struct fixture *fx, const char *name, unsigned v)
{
        struct txbox_error err = {0};
        struct cs_op *read_ops = NULL;
        size_t nread = 0;
        char *deep = deep_path("leaf");

        memset(fx, 0, sizeof(*fx));
        fx->live = fx->src = fx->aside = fx->redo = -1;
        fx->root = xasprintf_("%s/%s", top, name);
        bool g = mkdir(fx->root, 0755) == 0;
        int rfd = g ? opendir_at(AT_FDCWD, fx->root) : -1;
        g = rfd >= 0 && mkdirat(rfd, "live", 0755) == 0 && mkdirat(rfd, "src", 0755) == 0 &&
            mkdirat(rfd, "aside", 0700) == 0 && mkdirat(rfd, "redo", 0700) == 0;
        if (g) {
                fx->live = opendir_at(rfd, "live");
                fx->src = opendir_at(rfd, "src");
                fx->aside = opendir_at(rfd, "aside");
                fx->redo = opendir_at(rfd, "redo");
        }
        g = g && fx->live >= 0 && fx->src >= 0 && fx->aside >= 0 && fx->redo >= 0 && make_live(fx->live, v) &&
            make_src(fx->src, v);
        if (!g) {
                ok(0, "set up scenario %s: %s", name, strerror(errno));
                free(deep);
                if (rfd >= 0)
                        close(rfd);
                return false;
        }
        add_labels(fx, fx->live, "L", "");
        add_labels(fx, fx->src, "S", "");

        /* pre-order, as changeset_build makes them */
        swap_op(fx, "cm", true, true, true);
        fx->nops--; /* (only its modes were wanted: replaced by the CHMOD below) */
        free(fx->ops[fx->nops].path);
        chmod_op(fx, "cm", 0755, 0555);
        chmod_op(fx, "cm/inner", 0700, 0755);
        swap_op(fx, "cm/inner/g", true, true, true);
        if (!(v & FX_NO_CLOSED)) {
                chmod_op(fx, "closed", 0755, 0555);
                swap_op(fx, "closed/f", true, true, true);
        }
        swap_op(fx, "d", true, true, true);
        swap_op(fx, "d2f", true, true, true);
        swap_op(fx, deep, true, true, true);
        swap_op(fx, "dangling", true, false, false);
        swap_op(fx, "del.txt", true, false, false);
        swap_op(fx, "exe.sh", true, true, true);
        swap_op(fx, "f2d", true, true, true);
        swap_op(fx, "link", true, true, true);
        swap_op(fx, "mod.txt", true, true, true);
        swap_op(fx, "mod2.txt", true, true, false);
        swap_op(fx, "new.txt", false, true, true);
        swap_op(fx, "newdir", false, true, true);
        if (!(v & FX_NO_OPENED)) {
                chmod_op(fx, "opened", 0555, 0755);
                swap_op(fx, "opened/f", true, true, true);
        }
        swap_op(fx, "ro", true, false, false);
        swap_op(fx, ODD, true, true, true);
        swap_op(fx, ODD_NEW, false, true, true);
        free(deep);

        g = journal_write(rfd, "journal", fx->ops, fx->nops, false, &err) == 0 &&
            journal_read(rfd, "journal", &read_ops, &nread, &err) == 0 && nread == fx->nops;
        close(rfd);
        if (!g) {
                ok(0, "set up scenario %s: journal: %s", name, err.msg);
                return false;
        }
        journal_ops_free(fx->ops, fx->nops);
        fx->ops = read_ops;
        return true;
}

/* ---- what the trees must look like (the model) ---- */

static bool at_or_under(const char *p, const char *op)
{
        size_t n = strlen(op);
        return !strncmp(p, op, n) && (p[n] == '\0' || p[n] == '/');
}

/* Which SWAP op (escaped path) p is at or beneath, with has_old / has_new as asked. */
static bool moved_by(const struct fixture *fx, const char *p, bool old_side)
{
        for (size_t i = 0; i < fx->nops; i++) {
                const struct cs_op *o = &fx->ops[i];
                if (o->kind != CS_OP_SWAP || !(old_side ? o->has_old : o->has_new))
                        continue;
                char *e = esc(o->path, strlen(o->path));
                bool hit = at_or_under(p, e);
                free(e);
                if (hit)
                        return true;
        }
        return false;
}

static const struct cs_op *chmod_at(const struct fixture *fx, const char *p)
{
        for (size_t i = 0; i < fx->nops; i++) {
                char *e = esc(fx->ops[i].path, strlen(fx->ops[i].path));
                bool hit = fx->ops[i].kind == CS_OP_CHMOD && !strcmp(e, p);
                free(e);
                if (hit)
                        return &fx->ops[i];
        }
        return NULL;
}

static struct ent ent_dup(const struct ent *e, unsigned flags)
{
        return (struct ent){xstrdup(e->path), e->type, flags & SNAP_AREA && e->type == 'd' ? 0 : e->mode,
                            e->label, xstrdup(e->data)};
}

/* The trees as they were set up (flags for the area they will be compared in). */
static void original(const struct fixture *fx, int dirfd, unsigned flags, struct snap *s)
{
        walk(fx, dirfd, "", flags, s);
}

/* After a complete apply: live keeps what no op moves and gains what the source moved in
 * (CHMOD dirs get their new mode); the source loses it; aside holds what live lost. */
struct expect {
        char *live, *src, *aside;
};

static void expect_free(struct expect *x)
{
        free(x->live);
        free(x->src);
        free(x->aside);
}

static struct expect expect_applied(const struct fixture *fx, const struct snap *l, const struct snap *s)
{
        struct snap live = {0}, src = {0}, aside = {0};
        for (size_t i = 0; i < l->n; i++) {
                if (moved_by(fx, l->e[i].path, true)) {
                        snap_add(&aside, ent_dup(&l->e[i], SNAP_AREA));
                        continue;
                }
                struct ent e = ent_dup(&l->e[i], 0);
                const struct cs_op *c = chmod_at(fx, e.path);
                if (c)
                        e.mode = c->new_mode & 07777;
                snap_add(&live, e);
        }
        for (size_t i = 0; i < s->n; i++)
                if (moved_by(fx, s->e[i].path, false))
                        snap_add(&live, ent_dup(&s->e[i], 0));
                else
                        snap_add(&src, ent_dup(&s->e[i], SNAP_AREA));
        struct expect x = {snap_str(&live), snap_str(&src), snap_str(&aside)};
        snap_free(&live);
        snap_free(&src);
        snap_free(&aside);
        return x;
}

/* What a scenario starts as, and what it must be once applied. */
struct reference {
        char *live, *src, *live_area, *src_area; /* as set up (as live tree / as an area) */
        struct expect applied;
};

static struct reference reference_of(const struct fixture *fx)
{
        struct snap l = {0}, s = {0}, la = {0}, sa = {0};
        original(fx, fx->live, 0, &l);
        original(fx, fx->src, 0, &s);
        original(fx, fx->live, SNAP_AREA, &la);
        original(fx, fx->src, SNAP_AREA, &sa);
        struct reference ref = {.applied = expect_applied(fx, &l, &s)};
        ref.live = snap_str(&l);
        ref.src = snap_str(&s);
        ref.live_area = snap_str(&la);
        ref.src_area = snap_str(&sa);
        snap_free(&l);
        snap_free(&s);
        snap_free(&la);
        snap_free(&sa);
        return ref;
}

static void reference_free(struct reference *r)
{
        free(r->live);
        free(r->src);
        free(r->live_area);
        free(r->src_area);
        expect_free(&r->applied);
}

/* ---- apply / revert in a child ---- */

struct job {
        const struct fixture *fx;
        const struct cs_op *ops;
        size_t n;
        int live, src, aside;
        bool revert;
};

static int run_job(void *arg)
{
        const struct job *j = arg;
        struct txbox_error err = {0};
        int r = j->revert ? journal_revert(j->live, j->src, j->aside, j->ops, j->n, &err)
                          : journal_apply(j->live, j->src, j->aside, j->ops, j->n, "unit", NULL, false, &err);
        if (r < 0 && r != -ENOSPC) {
                char *e = esc(err.msg, strlen(err.msg) < 200 ? strlen(err.msg) : 200);
                printf("#   (child) %s\n", e);
                free(e);
        }
        return r;
}

static struct job commit_job(const struct fixture *fx, bool revert)
{
        return (struct job){fx, fx->ops, fx->nops, fx->live, fx->src, fx->aside, revert};
}

static int apply(const struct fixture *fx, const char *fp)
{
        struct job j = commit_job(fx, false);
        return in_child(fp, run_job, &j);
}

static int revert(const struct fixture *fx, const char *fp)
{
        struct job j = commit_job(fx, true);
        return in_child(fp, run_job, &j);
}

static void check_trees(const struct fixture *fx, const char *live, const char *src, const char *aside,
                        const char *what)
{
        char *l = tree_str(fx, fx->live, 0), *s = tree_str(fx, fx->src, SNAP_AREA),
             *a = tree_str(fx, fx->aside, SNAP_AREA);
        same_tree(l, live, what, "live");
        if (src)
                same_tree(s, src, what, "source");
        if (aside)
                same_tree(a, aside, what, "aside");
        free(l);
        free(s);
        free(a);
}

static void check_applied(const struct fixture *fx, const struct reference *ref, const char *what)
{
        check_trees(fx, ref->applied.live, ref->applied.src, ref->applied.aside, what);
}

static void check_reverted(const struct fixture *fx, const struct reference *ref, const char *what)
{
        check_trees(fx, ref->live, ref->src_area, "", what);
}

/* ---- tests: the file format ---- */

static char *long_path(void)
{
        /* 4000 bytes, every kind of byte but NUL and '/' among them, in components of 200 */
        char *p = xmalloc(4001);
        for (int i = 0; i < 4000; i++) {
                int c = 1 + (i * 7) % 255; /* 1..255 */
                p[i] = (char)(i % 201 == 200 ? '/' : c == '/' ? 'x' : c);
        }
        p[4000] = '\0';
        return p;
}

static bool op_eq(const struct cs_op *a, const struct cs_op *b)
{
        return !strcmp(a->path, b->path) && a->kind == b->kind && a->has_old == b->has_old &&
               a->has_new == b->has_new && a->old_mode == b->old_mode && a->new_mode == b->new_mode &&
               a->new_ino == b->new_ino && a->new_size == b->new_size && a->new_mtime_ns == b->new_mtime_ns;
}

static int count_entries(int dirfd)
{
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;
        if (!d)
                return -1;
        while ((de = readdir(d)))
                n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
        closedir(d);
        return n;
}

static void test_roundtrip(int dir)
{
        char *lp = long_path();
        const char *names[] = {
                "a", "with space", "new\nline", "tab\tcr\rff\f", "pct%20literal%", "\xff\xfe\x80 not utf-8",
                "\x01\x1f\x7f ctl", "dir/sub/file", "-leading-dash", "end 3", "txbox-journal 1", "%",
                "a b/c d", lp,
        };
        struct cs_op ops[ARRAY_SIZE(names) + 4];
        size_t n = 0;

        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                ops[n++] = (struct cs_op){.path = (char *)names[i], .kind = CS_OP_SWAP, .has_old = i % 2,
                                          .has_new = i % 3 != 0, .old_mode = S_IFREG | 0644,
                                          .new_mode = (i % 2 ? S_IFLNK | 0777 : S_IFDIR | 0555),
                                          .new_ino = 1000 + i, .new_size = (int64_t)i * 4096,
                                          .new_mtime_ns = 1700000000123456789LL + (int64_t)i};
        ops[n++] = (struct cs_op){.path = "chmod/dir", .kind = CS_OP_CHMOD, .old_mode = 07755, .new_mode = 0};
        ops[n++] = (struct cs_op){.path = "extremes", .kind = CS_OP_SWAP, .has_old = true, .has_new = true,
                                  .old_mode = S_IFREG | 06777, .new_mode = S_IFSOCK | 01777,
                                  .new_ino = UINT64_MAX, .new_size = INT64_MAX, .new_mtime_ns = INT64_MIN};
        ops[n++] = (struct cs_op){.path = "negative", .kind = CS_OP_SWAP, .has_new = true,
                                  .new_mode = S_IFREG | 0600, .new_size = -1, .new_mtime_ns = -1500000000LL};
        ops[n++] = (struct cs_op){.path = "old-ino", .kind = CS_OP_SWAP, .has_old = true, .has_new = true,
                                  .old_ino = 77 /* never written */};

        for (int durable = 0; durable <= 1; durable++) {
                struct txbox_error err = {0};
                struct cs_op *got = NULL;
                size_t ngot = 0;
                const char *name = durable ? "durable.journal" : "plain.journal";
                int r = journal_write(dir, name, ops, n, durable, &err);
                is_int(r, 0, "write %s (%s)", name, err.msg);
                r = journal_read(dir, name, &got, &ngot, &err);
                is_int(r, 0, "read %s back (%s)", name, err.msg);
                is_int(ngot, n, "%s: every op read back", name);
                size_t same = 0;
                for (size_t i = 0; r == 0 && i < n && i < ngot; i++) {
                        if (op_eq(&got[i], &ops[i]) && got[i].old_ino == 0)
                                same++;
                        else
                                printf("#   op %zu differs: %s\n", i, got[i].path);
                }
                is_int(same, n, "%s: every op and field equal, in order (old_ino never kept)", name);
                ok(r == 0 && ngot > 13 && !strcmp(got[13].path, lp) && strlen(got[13].path) == 4000,
                   "%s: a 4000-byte path with every byte value survives", name);
                journal_ops_free(got, ngot);
        }
        is_int(count_entries(dir), 2, "no temp file left beside the two journals");

        /* The file itself stays line-oriented: no raw newline inside an op line. */
        char *buf = NULL;
        size_t len = 0;
        int r = read_file_at(dir, "plain.journal", 1 << 20, &buf, &len);
        size_t lines = 0;
        for (size_t i = 0; r == 0 && i < len; i++)
                lines += buf[i] == '\n';
        is_int(lines, n + 2, "the journal holds one line per op, plus its magic and end lines");
        free(buf);

        /* Rewriting replaces; an empty list round-trips. */
        struct txbox_error err = {0};
        struct cs_op *got = (struct cs_op *)1;
        size_t ngot = 99;
        r = journal_write(dir, "plain.journal", ops, 0, false, &err);
        is_int(r, 0, "rewrite with no ops");
        r = journal_read(dir, "plain.journal", &got, &ngot, &err);
        ok(r == 0 && ngot == 0, "an empty journal (no ops) reads back as no ops");
        if (r == 0)
                journal_ops_free(got, ngot);

        r = journal_read(dir, "absent.journal", &got, &ngot, &err);
        is_int(r, -ENOENT, "reading a journal that is not there: -ENOENT");
        ok(err.code == ENOENT && strstr(err.msg, "absent.journal"), "and the error names it: %s", err.msg);

        r = journal_write(dir, "no-such-dir/j", ops, 1, true, &err);
        ok(r < 0 && err.code == -r, "writing where it cannot fails with the error filled (%s)", err.msg);
        free(lp);
}

/* ---- tests: damaged journals ---- */

struct read_job {
        int dir;
        const char *name;
        bool manifest;
};

static int run_read(void *arg)
{
        const struct read_job *j = arg;
        struct txbox_error err = {0};
        int r;
        if (j->manifest) {
                struct cs_manifest m = {0};
                if ((r = journal_manifest_read(j->dir, j->name, &m, &err)) == 0)
                        cs_manifest_free(&m);
        } else {
                struct cs_op *ops = NULL;
                size_t n = 0;
                if ((r = journal_read(j->dir, j->name, &ops, &n, &err)) == 0)
                        journal_ops_free(ops, n);
        }
        if (r < 0 && (r != -EBADMSG || err.code != EBADMSG || !strstr(err.msg, j->name)))
                return -EPROTO; /* the error not filled as documented */
        return r;
}

/* Many inputs read in one child, each result kept in shared memory; a crash costs a child
 * of its own (the inputs after it run in the next).  Results: 0, -errno or CRASHED(sig). */
struct inputs {
        char **data;
        size_t *len, n, cap;
        int *res; /* shared with the child */
        size_t start;
        int dir;
        bool manifest;
};

#define NOT_RUN INT32_MIN

static void input_add(struct inputs *in, const char *data, size_t len)
{
        if (in->n == in->cap) {
                in->cap = in->cap ? 2 * in->cap : 256;
                in->data = xrealloc(in->data, in->cap * sizeof(*in->data));
                in->len = xrealloc(in->len, in->cap * sizeof(*in->len));
        }
        in->data[in->n] = xmalloc(len + 1);
        memcpy(in->data[in->n], data, len);
        in->len[in->n++] = len;
}

static int run_inputs(void *arg)
{
        struct inputs *in = arg;
        for (size_t i = in->start; i < in->n; i++) {
                struct read_job j = {in->dir, "damaged", in->manifest};
                in->res[i] = put_bytes(in->dir, "damaged", in->data[i], in->len[i]) ? run_read(&j) : -EIO;
        }
        return 0;
}

static void read_inputs(struct inputs *in, int dir, bool manifest)
{
        in->dir = dir, in->manifest = manifest, in->start = 0;
        in->res = mmap(NULL, (in->n + 1) * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                       -1, 0);
        if (in->res == MAP_FAILED)
                abort();
        for (size_t i = 0; i < in->n; i++)
                in->res[i] = NOT_RUN;
        while (in->start < in->n) {
                int r = in_child(NULL, run_inputs, in);
                size_t i = in->start;
                while (i < in->n && in->res[i] != NOT_RUN)
                        i++;
                if (i == in->n)
                        break;
                in->res[i] = r >= CRASHED(0) ? r : CRASHED(0);
                in->start = i + 1;
        }
        unlinkat(dir, "damaged", 0);
}

static void inputs_free(struct inputs *in)
{
        for (size_t i = 0; i < in->n; i++)
                free(in->data[i]);
        free(in->data);
        free(in->len);
        if (in->res && in->res != MAP_FAILED)
                munmap(in->res, (in->n + 1) * sizeof(int));
        memset(in, 0, sizeof(*in));
}

/* Does data end in the middle of a %xx escape, one hex digit after the %? */
static bool cut_in_escape(const char *data, size_t len)
{
        return len >= 2 && data[len - 2] == '%' && data[len - 1] && strchr("0123456789abcdef", data[len - 1]);
}

/* Does data hold a %x escape with one hex digit before the end of its line?  (The reader
 * once stepped past the line's end there: a heap overflow.) */
static bool has_one_digit_escape(const char *data, size_t len)
{
        for (size_t i = 0; i + 1 < len; i++)
                if (data[i] == '%' && data[i + 1] && strchr("0123456789abcdefABCDEF", data[i + 1]) &&
                    (i + 2 == len || data[i + 2] == '\n' || data[i + 2] == '\0'))
                        return true;
        return false;
}

static void sweep_truncations(int dir, const char *what, const char *full, size_t len, bool manifest)
{
        struct inputs in = {0};
        size_t bad = 0, bug = 0, nbug = 0, crashed = 0;

        for (size_t cut = 0; cut + 1 < len; cut++) /* len - 1: only the last newline gone, complete */
                input_add(&in, full, cut);
        input_add(&in, full, len - 1);
        input_add(&in, full, len);
        read_inputs(&in, dir, manifest);
        for (size_t cut = 0; cut + 1 < len; cut++) {
                int r = in.res[cut];
                bool esc_cut = cut_in_escape(full, cut);
                nbug += esc_cut;
                crashed += r >= CRASHED(0);
                if (r != -EBADMSG) {
                        if (esc_cut)
                                bug++;
                        else if (bad++ < 3)
                                printf("#   cut at %zu: got %d\n", cut, r);
                }
        }
        is_int(bad, 0, "%s: every truncation (%zu) gives -EBADMSG, none crashes", what, len - 1 - nbug);
        ok(bug == 0, "%s: the %zu truncations one digit into a %%xx escape give -EBADMSG too",
                  what, nbug);
        if (crashed)
                printf("#   %zu of the reads crashed\n", crashed);
        is_int(in.res[len - 1], 0, "%s: without its final newline it is complete", what);
        is_int(in.res[len], 0, "%s: whole, it reads", what);
        inputs_free(&in);
}

static void test_damaged(int dir)
{
        const struct cs_op ops[] = {
                {.path = "a b%c", .kind = CS_OP_SWAP, .has_old = 1, .has_new = 1, .old_mode = S_IFREG | 0644,
                 .new_mode = S_IFREG | 0600, .new_ino = 12345, .new_size = 6, .new_mtime_ns = 1},
                {.path = "dir", .kind = CS_OP_CHMOD, .old_mode = 0755, .new_mode = 0555},
                {.path = "dir/\n\xff", .kind = CS_OP_SWAP, .has_new = 1, .new_mode = S_IFDIR | 0755},
        };
        struct txbox_error err = {0};
        struct inputs in = {0};
        char *full = NULL;
        size_t len = 0;

        if (journal_write(dir, "j", ops, ARRAY_SIZE(ops), false, &err) < 0 ||
            read_file_at(dir, "j", 1 << 20, &full, &len) < 0) {
                ok(0, "write a journal to damage: %s", err.msg);
                return;
        }
        sweep_truncations(dir, "journal", full, len, false);

        /* Every byte overwritten by one that breaks it: never a crash; 0 or -EBADMSG. */
        static const char repl[] = {'\0', '\n', ' ', '%', 'x', '-', '9', '/', '\xff'};
        for (size_t i = 0; i < len; i++)
                for (size_t k = 0; k < sizeof(repl); k++) {
                        char saved = full[i];
                        if (saved == repl[k])
                                continue;
                        full[i] = repl[k];
                        input_add(&in, full, len);
                        full[i] = saved;
                }
        read_inputs(&in, dir, false);
        size_t crashes = 0, bug = 0, other = 0;
        for (size_t i = 0; i < in.n; i++) {
                int r = in.res[i];
                bool known = has_one_digit_escape(in.data[i], in.len[i]);
                crashes += r >= CRASHED(0) && !known;
                bug += r >= CRASHED(0) && known;
                other += r != 0 && r != -EBADMSG && r < CRASHED(0);
                if (r != 0 && r != -EBADMSG && !known && crashes + other <= 3)
                        printf("#   change %zu: %d\n", i, r);
        }
        is_int(crashes, 0, "journal: no one-byte change makes the reader crash (%zu changes)", in.n);
        ok(bug == 0, "journal: nor one that leaves a one-digit escape (%zu crashed)", bug);
        is_int(other, 0, "journal: every one-byte change reads or gives -EBADMSG with the error filled");
        inputs_free(&in);

        const struct {
                const char *what, *data;
        } cases[] = {
                {"empty", ""},
                {"a newline only", "\n"},
                {"no end line", "txbox-journal 1\n"},
                {"magic only, no newline", "txbox-journal 1"},
                {"another version", "txbox-journal 2\nend 0\n"},
                {"magic with trailing space", "txbox-journal 1 \nend 0\n"},
                {"count too high", "txbox-journal 1\nend 1\n"},
                {"count too low", "txbox-journal 1\nS 0 1 0 100644 1 2 3 a\nend 0\n"},
                {"count not a number", "txbox-journal 1\nS 0 1 0 100644 1 2 3 a\nend x\n"},
                {"unknown kind", "txbox-journal 1\nX 0 1 0 100644 1 2 3 a\nend 1\n"},
                {"fields missing", "txbox-journal 1\nS 0 1 0 100644\nend 1\n"},
                {"a field not a number", "txbox-journal 1\nS 0 1 0 1006z4 1 2 3 a\nend 1\n"},
                {"no path", "txbox-journal 1\nS 0 1 0 100644 1 2 3 \nend 1\n"},
                {"no path, no space", "txbox-journal 1\nS 0 1 0 100644 1 2 3\nend 1\n"},
                {"absolute path", "txbox-journal 1\nS 0 1 0 100644 1 2 3 /etc/passwd\nend 1\n"},
                {"escaped NUL", "txbox-journal 1\nS 0 1 0 100644 1 2 3 a%00b\nend 1\n"},
                {"bad escape", "txbox-journal 1\nS 0 1 0 100644 1 2 3 a%zzb\nend 1\n"},
                {"escape cut at the end", "txbox-journal 1\nS 0 1 0 100644 1 2 3 a%\nend 1\n"},
                {"binary", "\x7f"
                           "ELF\x02\x01\x01\x01"},
                /* the three below: escapes that are not two hex digits, once read past */
                {"a one-digit escape at the end of a path",
                 "txbox-journal 1\nS 0 1 0 100644 1 2 3 a%4\nend 1\n"},
                {"a blank inside an escape", "txbox-journal 1\nS 0 1 0 100644 1 2 3 a% 41\nend 1\n"},
                {"a sign inside an escape", "txbox-journal 1\nS 0 1 0 100644 1 2 3 a%-1\nend 1\n"},
        };
        size_t nc = ARRAY_SIZE(cases);
        for (size_t i = 0; i < nc; i++)
                input_add(&in, cases[i].data, strlen(cases[i].data));
        read_inputs(&in, dir, false);
        for (size_t i = 0; i < nc - 3; i++)
                is_int(in.res[i], -EBADMSG, "journal %s: -EBADMSG", cases[i].what);
        ok(in.res[nc - 3] == -EBADMSG, "journal with %s: -EBADMSG (got %d)", cases[nc - 3].what,
                  in.res[nc - 3]);
        for (size_t i = nc - 2; i < nc; i++)
                ok(in.res[i] == -EBADMSG,
                          "journal with %s: -EBADMSG (got %d)", cases[i].what, in.res[i]);
        inputs_free(&in);

        /* Random bodies after the magic: never a crash. */
        unsigned seed = 24;
        for (int i = 0; i < 300; i++) {
                char b[300];
                size_t n = (size_t)(rand_r(&seed) % 280);
                int m = snprintf(b, sizeof(b), "txbox-journal 1\n");
                for (size_t k = 0; k < n; k++)
                        b[m + k] = (char)(rand_r(&seed) % 3 ? " S0123%\nabcdef/"[rand_r(&seed) % 16]
                                                            : rand_r(&seed));
                input_add(&in, b, (size_t)m + n);
        }
        read_inputs(&in, dir, false);
        size_t rcrash = 0, rbug = 0, rother = 0;
        for (size_t i = 0; i < in.n; i++) {
                bool known = has_one_digit_escape(in.data[i], in.len[i]);
                rcrash += in.res[i] >= CRASHED(0) && !known;
                rbug += in.res[i] >= CRASHED(0) && known;
                rother += in.res[i] != 0 && in.res[i] != -EBADMSG && in.res[i] < CRASHED(0);
        }
        is_int(rcrash, 0, "journal: %zu random bodies after the magic never crash the reader", in.n);
        ok(rbug == 0, "journal: nor those with a one-digit escape (%zu crashed)", rbug);
        is_int(rother, 0, "journal: random bodies read or give -EBADMSG");
        inputs_free(&in);
        free(full);
        unlinkat(dir, "j", 0);
}

/* ---- tests: journal_invert ---- */

static void test_invert(void)
{
        const struct cs_op ops[] = {
                {.path = "first", .kind = CS_OP_SWAP, .has_old = 1, .has_new = 0, .old_mode = S_IFREG | 0644,
                 .new_mode = 0, .new_ino = 0, .new_size = 1, .new_mtime_ns = 2},
                {.path = "second", .kind = CS_OP_CHMOD, .old_mode = 0755, .new_mode = 0500},
                {.path = "third", .kind = CS_OP_SWAP, .has_old = 0, .has_new = 1, .old_mode = 0,
                 .new_mode = S_IFDIR | 0700, .new_ino = 42, .new_size = 4096, .new_mtime_ns = 3},
                {.path = "fourth", .kind = CS_OP_SWAP, .has_old = 1, .has_new = 1, .old_mode = S_IFLNK | 0777,
                 .new_mode = S_IFREG | 0600, .new_ino = 9, .new_size = 5, .new_mtime_ns = 6},
        };
        size_t n = ARRAY_SIZE(ops), good = 0;
        struct cs_op *inv = journal_invert(ops, n);

        for (size_t i = 0; i < n; i++) {
                const struct cs_op *o = &ops[n - 1 - i], *v = &inv[i];
                bool g = !strcmp(v->path, o->path) && v->path != o->path && v->kind == o->kind &&
                         v->has_old == o->has_new && v->has_new == o->has_old && v->old_mode == o->new_mode &&
                         v->new_mode == o->old_mode && v->old_ino == o->new_ino && v->new_ino == 0;
                good += g;
                if (!g)
                        printf("#   inverse op %zu (%s) is wrong\n", i, v->path);
        }
        is_int(good, n, "journal_invert: reverse order, own copies of the paths, old and new swapped, "
                        "the live entry's identity as old_ino");

        struct cs_op *twice = journal_invert(inv, n);
        good = 0;
        for (size_t i = 0; i < n; i++)
                good += !strcmp(twice[i].path, ops[i].path) && twice[i].kind == ops[i].kind &&
                        twice[i].has_old == ops[i].has_old && twice[i].has_new == ops[i].has_new &&
                        twice[i].old_mode == ops[i].old_mode && twice[i].new_mode == ops[i].new_mode;
        is_int(good, n, "journal_invert twice: the original ops (paths, kinds, sides and modes)");
        journal_ops_free(twice, n);
        journal_ops_free(inv, n);

        struct cs_op *none = journal_invert(ops, 0);
        ok(none != NULL, "journal_invert of no ops gives an empty list");
        journal_ops_free(none, 0);
}

/* ---- tests: the manifest ---- */

static bool mentry_eq(const struct cs_manifest_entry *a, const struct cs_manifest_entry *b)
{
        return !strcmp(a->path, b->path) && a->ino == b->ino && a->mode == b->mode && a->size == b->size &&
               a->mtime_ns == b->mtime_ns;
}

static void test_manifest(int dir)
{
        struct cs_manifest m = {0}, got = {0};
        struct txbox_error err = {0};
        char *lp = long_path();
        const char *paths[] = {"z/last", "a b", "new\nline", "\xff\xfe", "%41", "d/e/f", "-x", lp};
        struct stat st = {0};

        for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
                st.st_ino = (ino_t)(i == 0 ? UINT64_MAX : 100 + i);
                st.st_mode = (mode_t)(i % 2 ? S_IFDIR | 0755 : S_IFREG | 04711);
                st.st_size = (off_t)(i * 1000);
                st.st_mtim.tv_sec = 1700000000 + (time_t)i;
                st.st_mtim.tv_nsec = (long)i * 111111111;
                cs_manifest_add(&m, paths[i], &st);
        }
        int r = journal_manifest_write(dir, "manifest", &m, &err);
        is_int(r, 0, "manifest written (%s)", err.msg);
        r = journal_manifest_read(dir, "manifest", &got, &err);
        is_int(r, 0, "manifest read back (%s)", err.msg);
        is_int(got.n, m.n, "every manifest entry read back");
        cs_manifest_sort(&m);
        size_t same = 0;
        for (size_t i = 0; r == 0 && i < m.n && i < got.n; i++)
                same += mentry_eq(&m.e[i], &got.e[i]);
        is_int(same, m.n, "manifest: every entry and field equal, sorted by path");
        ok(r == 0 && cs_manifest_find(&got, lp) && cs_manifest_find(&got, "new\nline"),
           "manifest read back: entries found by their raw paths");
        cs_manifest_free(&got);
        cs_manifest_free(&m);

        struct cs_manifest empty = {0};
        r = journal_manifest_write(dir, "empty", &empty, &err);
        ok(r == 0 && journal_manifest_read(dir, "empty", &got, &err) == 0 && got.n == 0,
           "an empty manifest round-trips");
        cs_manifest_free(&got);

        memset(&err, 0, sizeof(err));
        got.n = 7;
        r = journal_manifest_read(dir, "none", &got, &err);
        is_int(r, -ENOENT, "no manifest: -ENOENT");
        is_int(got.n, 7, "and the output is left alone");

        char *full = NULL;
        size_t len = 0;
        cs_manifest_add(&m, "p%q r", &st);
        cs_manifest_add(&m, "s", &st);
        if (journal_manifest_write(dir, "m2", &m, &err) == 0 &&
            read_file_at(dir, "m2", 1 << 20, &full, &len) == 0)
                sweep_truncations(dir, "manifest", full, len, true);
        else
                ok(0, "write a manifest to damage: %s", err.msg);
        cs_manifest_free(&m);
        free(full);

        const struct {
                const char *what, *data;
        } cases[] = {
                {"empty", ""},
                {"a journal, not a manifest", "txbox-journal 1\nend 0\n"},
                {"no end line", "txbox-manifest 1\n1 100644 2 3 a\n"},
                {"count wrong", "txbox-manifest 1\n1 100644 2 3 a\nend 2\n"},
                {"fields missing", "txbox-manifest 1\n1 100644 a\nend 1\n"},
                {"a field not a number", "txbox-manifest 1\n1 1006x4 2 3 a\nend 1\n"},
                {"escaped NUL", "txbox-manifest 1\n1 100644 2 3 a%00\nend 1\n"},
                {"bad escape", "txbox-manifest 1\n1 100644 2 3 a%g1\nend 1\n"},
        };
        struct inputs in = {0};
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
                input_add(&in, cases[i].data, strlen(cases[i].data));
        read_inputs(&in, dir, true);
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
                is_int(in.res[i], -EBADMSG, "manifest %s: -EBADMSG", cases[i].what);
        inputs_free(&in);
        free(lp);
}

/* ---- tests: apply and revert ---- */

static int fixture_seq;

static bool fresh(struct fixture *fx, struct reference *ref, const char *what, unsigned v)
{
        char name[64];
        snprintf(name, sizeof(name), "fx%03d", fixture_seq++);
        if (!fixture_new(fx, name, v)) {
                printf("#   (for %s)\n", what);
                return false;
        }
        *ref = reference_of(fx);
        return true;
}

static void done(struct fixture *fx, struct reference *ref)
{
        reference_free(ref);
        fixture_free(fx);
}

static void test_apply_revert(void)
{
        struct fixture fx;
        struct reference ref;
        struct stat st;

        if (!fresh(&fx, &ref, "apply", FX_FULL))
                return;
        /* The model itself must see the change, or the checks below prove nothing. */
        ok(strcmp(ref.live, ref.applied.live) && strstr(ref.applied.live,
                                                        "mod.txt f 0600 S:mod.txt new%0a") &&
           strstr(ref.applied.aside, "mod.txt f 0644 L:mod.txt old%0a") &&
           !strstr(ref.applied.live, "del.txt") &&
           strstr(ref.applied.live, "newdir/nd/m f 0644 S:newdir/nd/m") &&
           strstr(ref.applied.live, "closed d 0555 L:closed"),
           "the expected trees differ from the original where the ops say");
        is_int(apply(&fx, NULL), 0, "journal_apply succeeds");
        check_applied(&fx, &ref, "after apply");
        ok(fstatat(fx.live, "newdir", &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & 07777) == 0555,
           "a read-only directory moved in whole keeps its mode");
        ok(fstatat(fx.live, "newdir/nd", &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & 07777) == 0500,
           "and so does the closed directory inside it");
        is_int(apply(&fx, NULL), 0, "journal_apply again on the applied tree succeeds");
        check_applied(&fx, &ref, "apply twice == apply once");
        done(&fx, &ref);

        if (!fresh(&fx, &ref, "apply+revert", FX_NO_CLOSED))
                return;
        is_int(apply(&fx, NULL), 0, "journal_apply succeeds");
        is_int(revert(&fx, NULL), 0, "journal_revert of the complete apply succeeds");
        check_reverted(&fx, &ref, "apply then revert");
        ok(fstatat(fx.src, "newdir", &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & 07777) == 0555,
           "the directory moved back to the source keeps its mode");
        is_int(revert(&fx, NULL), 0, "journal_revert again succeeds");
        check_reverted(&fx, &ref, "revert twice == revert once");
        is_int(apply(&fx, NULL), 0, "apply after the revert succeeds");
        check_applied(&fx, &ref, "apply, revert, apply");
        done(&fx, &ref);

        /* The same with a directory the commit closes. */
        if (!fresh(&fx, &ref, "apply+revert closed", FX_FULL))
                return;
        is_int(apply(&fx, NULL), 0, "journal_apply succeeds (a directory closed)");
        int r = revert(&fx, NULL);
        char *live = tree_str(&fx, fx.live, 0);
        ok(r == 0 && !strcmp(live, ref.live),
                  "journal_revert of a complete apply that closed a directory restores the original (%d)", r);
        free(live);
        done(&fx, &ref);

        /* A revert of a journal never applied changes nothing. */
        if (!fresh(&fx, &ref, "revert only", FX_FULL))
                return;
        is_int(revert(&fx, NULL), 0, "journal_revert with nothing applied succeeds");
        check_reverted(&fx, &ref, "revert of nothing");
        done(&fx, &ref);
}

/* Crash (SIGKILL) at failpoint step k of the apply, for every k: apply again completes to
 * the same trees as an uninterrupted apply. */
static void test_crash_apply(void)
{
        size_t steps = 0;
        char spec[64], what[96];

        for (int k = 0; k < 200; k++) {
                struct fixture fx;
                struct reference ref;
                if (!fresh(&fx, &ref, "crash", FX_FULL))
                        return;
                snprintf(spec, sizeof(spec), "unit:%d", k);
                int r = apply(&fx, spec);
                if (r == 0) { /* past the last step: the apply ran through */
                        check_applied(&fx, &ref, "apply with a failpoint past the last step");
                        done(&fx, &ref);
                        break;
                }
                steps++;
                snprintf(what, sizeof(what), "crash at step %d, apply again", k);
                is_int(r, CRASHED(SIGKILL), "apply killed at step %d", k);
                is_int(apply(&fx, NULL), 0, "%s: succeeds", what);
                check_applied(&fx, &ref, what);
                done(&fx, &ref);
                if (r != CRASHED(SIGKILL))
                        break;
        }
        ok(steps >= 25, "the apply has a failpoint step before every rename and mode (%zu steps)", steps);
}

/* Killed at step k, or failing there (ENOSPC: the commit's own revert follows), for every
 * k: journal_revert restores the original.  v FX_FULL (with a directory the commit closes,
 * which the revert once left closed as a user): failures counted, none allowed. */
static void test_crash_then_revert(unsigned v)
{
        size_t steps = 0, bad = 0;
        char spec[64], what[96];

        for (int k = 0; k < 200; k++) {
                struct fixture fx;
                struct reference ref;
                if (!fresh(&fx, &ref, "crash+revert", v))
                        return;
                snprintf(spec, sizeof(spec), "unit:%d", k);
                int r = apply(&fx, spec);
                if (r == 0) {
                        done(&fx, &ref);
                        break;
                }
                steps++;
                snprintf(what, sizeof(what), "crash at step %d, revert", k);
                int rr = revert(&fx, NULL);
                if (v == FX_FULL) {
                        char *live = tree_str(&fx, fx.live, 0);
                        bad += rr != 0 || strcmp(live, ref.live);
                        free(live);
                } else {
                        is_int(rr, 0, "%s: succeeds (apply gave %d)", what, r);
                        check_reverted(&fx, &ref, what);
                }
                done(&fx, &ref);

                if (!fresh(&fx, &ref, "enospc+revert", v))
                        return;
                snprintf(spec, sizeof(spec), "unit:%d:enospc", k);
                snprintf(what, sizeof(what), "ENOSPC at step %d, revert", k);
                r = apply(&fx, spec);
                rr = revert(&fx, NULL);
                if (v == FX_FULL) {
                        char *live = tree_str(&fx, fx.live, 0);
                        bad += r != -ENOSPC || rr != 0 || strcmp(live, ref.live);
                        free(live);
                } else {
                        is_int(r, -ENOSPC, "apply failing at step %d reports ENOSPC", k);
                        is_int(rr, 0, "%s: succeeds", what);
                        check_reverted(&fx, &ref, what);
                }
                done(&fx, &ref);
        }
        if (v == FX_FULL)
                ok(bad == 0,
                   "a commit that closes a directory: killed or failing at each of %zu steps, reverted "
                   "(%zu of %zu not restored)",
                   steps, bad, 2 * steps);
        else
                ok(steps >= 25, "killed or failing at each of the %zu steps, then reverted", steps);
}

/* A crash at every step of a revert (after a complete apply): revert again restores. */
static void test_crash_revert(void)
{
        size_t steps = 0;
        char spec[64], what[96];

        for (int k = 0; k < 200; k++) {
                struct fixture fx;
                struct reference ref;
                if (!fresh(&fx, &ref, "revert crash", FX_NO_CLOSED))
                        return;
                snprintf(spec, sizeof(spec), "revert:%d", k);
                is_int(apply(&fx, NULL), 0, "apply before the revert crash at step %d", k);
                int r = revert(&fx, spec);
                if (r == 0) {
                        check_reverted(&fx, &ref, "revert with a failpoint past the last step");
                        done(&fx, &ref);
                        break;
                }
                steps++;
                snprintf(what, sizeof(what), "revert killed at step %d, revert again", k);
                is_int(r, CRASHED(SIGKILL), "revert killed at step %d", k);
                is_int(revert(&fx, NULL), 0, "%s: succeeds", what);
                check_reverted(&fx, &ref, what);
                done(&fx, &ref);
                if (r != CRASHED(SIGKILL))
                        break;
        }
        ok(steps >= 20, "the revert has a failpoint step per op and mode (%zu steps)", steps);
}

/* Undo: the inverse ops applied with the aside area as the source and redo/ as the aside. */
static int undo_apply(const struct fixture *fx, const struct cs_op *inv, const char *fp, bool rev)
{
        struct job j = {fx, inv, fx->nops, fx->live, fx->aside, fx->redo, rev};
        return in_child(fp, run_job, &j);
}

static void check_undone(const struct fixture *fx, const struct reference *ref, const char *what)
{
        char *redo = tree_str(fx, fx->redo, SNAP_AREA), *aside = tree_str(fx, fx->aside, SNAP_AREA);

        check_trees(fx, ref->live, ref->applied.src, NULL, what);
        same_tree(aside, "", what, "undo area emptied");
        ok(strstr(redo, "mod.txt f 0600 S:mod.txt new%0a") &&
                   strstr(redo, "newdir/nd/m f 0644 S:newdir/nd/m") && !strstr(redo, " L:"),
           "%s: redo holds the commit's new entries and nothing of the original", what);
        free(redo);
        free(aside);
}

static void test_undo(void)
{
        struct fixture fx;
        struct reference ref;
        size_t steps = 0;
        char spec[64], what[96];

        if (!fresh(&fx, &ref, "undo", FX_FULL))
                return;
        struct cs_op *inv = journal_invert(fx.ops, fx.nops);
        is_int(apply(&fx, NULL), 0, "apply before undo");
        is_int(undo_apply(&fx, inv, NULL, false), 0, "undo (the inverse applied) succeeds");
        check_undone(&fx, &ref, "undo");
        is_int(undo_apply(&fx, inv, NULL, false), 0, "undo again succeeds");
        check_undone(&fx, &ref, "undo twice == undo once");
        int r = undo_apply(&fx, inv, NULL, true);
        char *live = tree_str(&fx, fx.live, 0);
        ok(r == 0 && !strcmp(live, ref.applied.live),
                  "revert of an undo that closed a directory: the commit again (%d)", r);
        free(live);
        journal_ops_free(inv, fx.nops);
        done(&fx, &ref);

        if (!fresh(&fx, &ref, "undo+revert", FX_NO_OPENED))
                return;
        inv = journal_invert(fx.ops, fx.nops);
        is_int(apply(&fx, NULL), 0, "apply before undo");
        is_int(undo_apply(&fx, inv, NULL, false), 0, "undo succeeds");
        is_int(undo_apply(&fx, inv, NULL, true), 0, "revert of the undo succeeds");
        check_applied(&fx, &ref, "undo then its revert: the commit again");
        journal_ops_free(inv, fx.nops);
        done(&fx, &ref);

        for (int k = 0; k < 200; k++) {
                if (!fresh(&fx, &ref, "undo crash", FX_FULL))
                        return;
                inv = journal_invert(fx.ops, fx.nops);
                snprintf(spec, sizeof(spec), "unit:%d", k);
                r = apply(&fx, NULL);
                r = r ?: undo_apply(&fx, inv, spec, false);
                if (r == 0) {
                        check_undone(&fx, &ref, "undo with a failpoint past the last step");
                        journal_ops_free(inv, fx.nops);
                        done(&fx, &ref);
                        break;
                }
                steps++;
                is_int(r, CRASHED(SIGKILL), "undo killed at step %d", k);
                snprintf(what, sizeof(what), "undo killed at step %d, undo again", k);
                is_int(undo_apply(&fx, inv, NULL, false), 0, "%s: succeeds", what);
                check_undone(&fx, &ref, what);
                journal_ops_free(inv, fx.nops);
                done(&fx, &ref);
                if (r != CRASHED(SIGKILL))
                        break;

                if (!fresh(&fx, &ref, "undo crash+revert", FX_NO_OPENED))
                        return;
                inv = journal_invert(fx.ops, fx.nops);
                snprintf(what, sizeof(what), "undo killed at step %d, reverted", k);
                r = apply(&fx, NULL);
                r = r ?: undo_apply(&fx, inv, spec, false);
                is_int(undo_apply(&fx, inv, NULL, true), 0, "%s: succeeds (undo gave %d)", what, r);
                check_applied(&fx, &ref, what);
                journal_ops_free(inv, fx.nops);
                done(&fx, &ref);
        }
        ok(steps >= 25, "undo has a failpoint step before every rename and mode (%zu steps)", steps);
}

/* ---- tests: what apply must refuse ---- */

static void test_refusals(void)
{
        char *root = xasprintf_("%s/refuse", top);
        int rfd = -1, live = -1, src = -1, aside = -1;
        bool g = mkdir(root, 0755) == 0 && (rfd = opendir_at(AT_FDCWD, root)) >= 0 &&
                 mkdirat(rfd, "live", 0755) == 0 && mkdirat(rfd, "src", 0755) == 0 &&
                 mkdirat(rfd, "aside", 0700) == 0 && mkdirat(rfd, "victim", 0755) == 0 &&
                 (live = opendir_at(rfd, "live")) >= 0 && (src = opendir_at(rfd, "src")) >= 0 &&
                 (aside = opendir_at(rfd, "aside")) >= 0 && put(rfd, "victim/x", "victim\n", 0644) &&
                 symlinkat("../victim", live, "sl") == 0 && mkdirat(src, "sl", 0755) == 0 &&
                 put(src, "sl/x", "planted\n", 0644) && mkdirat(live, "p", 0755) == 0 &&
                 symlinkat("../victim", src, "p") == 0 && put(live, "busy", "live\n", 0644) &&
                 put(src, "busy", "new\n", 0644) && put(aside, "busy", "already aside\n", 0644);
        if (!g) {
                ok(0, "set up refusals: %s", strerror(errno));
                goto out;
        }
        struct fixture fx = {.live = live, .src = src, .aside = aside, .redo = -1};
        struct stat st;
        fstatat(src, "busy", &st, AT_SYMLINK_NOFOLLOW);
        const struct {
                const char *what;
                struct cs_op op;
        } cases[] = {
                {"a symlink in place of a live parent",
                 {.path = "sl/x", .kind = CS_OP_SWAP, .has_old = 1, .has_new = 1, .old_mode = S_IFREG | 0644,
                  .new_mode = S_IFREG | 0644}},
                {"a symlink in place of a source parent",
                 {.path = "p/x", .kind = CS_OP_SWAP, .has_old = 0, .has_new = 1, .new_mode = S_IFREG | 0644}},
                {"a symlink as the directory to chmod", {.path = "sl", .kind = CS_OP_CHMOD, .old_mode = 0755,
                                                         .new_mode = 0700}},
                {"an entry already aside (by exchange)",
                 {.path = "busy", .kind = CS_OP_SWAP, .has_old = 1, .has_new = 1, .old_mode = S_IFREG | 0644,
                  .new_mode = S_IFREG | 0644, .new_ino = st.st_ino}},
                {"an entry already aside (by renames)",
                 {.path = "busy", .kind = CS_OP_SWAP, .has_old = 1, .has_new = 1, .old_mode = S_IFREG | 0644,
                  .new_mode = S_IFREG | 0644}},
        };
        char *before = NULL, *after = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                struct job j = {&fx, &cases[i].op, 1, live, src, aside, false};
                free(before);
                before = tree_str(&fx, rfd, 0);
                int r = in_child(NULL, run_job, &j);
                ok(r < 0 && r > -4096, "%s: apply refuses (%d)", cases[i].what, r);
                free(after);
                after = tree_str(&fx, rfd, 0);
                /* aside/ and src/ may gain the parent directories txbox makes for itself. */
                ok(!strcmp(before, after) || (strstr(after, "victim/x f 0644 - victim%0a") &&
                                              strstr(after, "live/busy f 0644 - live%0a") &&
                                              strstr(after, "aside/busy f 0644 - already%20aside%0a") &&
                                              strstr(after, "src/busy f 0644 - new%0a") &&
                                              !strstr(after, "victim/x f 0644 - planted")),
                   "%s: nothing moved, nothing lost, the symlink's target untouched", cases[i].what);
        }
        ok(after && strstr(after, "victim d 0755"), "the victim directory keeps its mode");
        free(before);
        free(after);
out:
        if (live >= 0)
                close(live);
        if (src >= 0)
                close(src);
        if (aside >= 0)
                close(aside);
        if (rfd >= 0)
                close(rfd);
        free(root);
}

int main(void)
{
        unsetenv("TXBOX_FAILPOINT"); /* the children get theirs; this process must have none */
        if (!tap_mkdtemp(top, sizeof(top), "txbox-test-journal") || chmod(top, 0755) < 0 ||
            (top_fd = opendir_at(AT_FDCWD, top)) < 0) {
                printf("Bail out! cannot make a temp dir: %s\n", strerror(errno));
                return 1;
        }
        if (mkdirat(top_fd, "files", 0755) < 0) {
                printf("Bail out! mkdir: %s\n", strerror(errno));
                return 1;
        }
        int files = opendir_at(top_fd, "files");

        test_roundtrip(files);
        test_damaged(files);
        test_invert();
        test_manifest(files);
        test_apply_revert();
        test_crash_apply();
        test_crash_then_revert(FX_NO_CLOSED);
        test_crash_then_revert(FX_FULL);
        test_crash_revert();
        test_undo();
        test_refusals();

        close(files);
        close(top_fd);
        tap_rmtree(top);
        return tap_done();
}
