/* changeset_build/changeset_prepare on upper layers made by a real overlay mount (see
 * ovl_helper.h), so whiteouts, opaque directories and xattrs are what the kernel makes. */
#define _GNU_SOURCE
/* tests/run.sh runs this as root and as an unprivileged user (as-user). */
#include "ovl_helper.h"

#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "store/changeset.h"
#include "store/journal.h"
#include "tap.h"
#include "txbox.h"

/* ---- the live workspace every scenario starts from ---- */

static int lput(const struct ovl *o, const char *rel, const char *text)
{
        return ovl_put_at(o->lower_fd, rel, text);
}

static int populate(const struct ovl *o)
{
        int r = 0;

        r |= lput(o, "keep.txt", "keep\n");
        r |= lput(o, "mod.txt", "old\n");
        r |= lput(o, "exe.sh", "#!/bin/sh\n");
        r |= fchmodat(o->lower_fd, "exe.sh", 0755, 0);
        r |= mkdirat(o->lower_fd, "d", 0755);
        r |= lput(o, "d/a", "a\n");
        r |= lput(o, "d/b", "b\n");
        r |= lput(o, "d/c", "c\n");
        r |= mkdirat(o->lower_fd, "sub", 0755);
        r |= lput(o, "sub/x.txt", "x\n");
        r |= symlinkat("keep.txt", o->lower_fd, "link");
        r |= symlinkat("mod.txt", o->lower_fd, "link2");
        return r ? -1 : 0;
}

/* ---- rendering a changeset for compact assertions ---- */

static char *paths_str(const struct changeset *cs)
{
        static const char code[] = { [TXBOX_ADDED] = 'A', [TXBOX_MODIFIED] = 'M', [TXBOX_DELETED] = 'D' };
        char *s = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&s, &n);
        for (size_t i = 0; i < cs->npaths; i++)
                fprintf(f, "%s%c:%s", i ? " " : "", code[cs->paths[i].change], cs->paths[i].path);
        fclose(f);
        return s;
}

static char *ops_str(const struct changeset *cs)
{
        char *s = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&s, &n);
        for (size_t i = 0; i < cs->nops; i++) {
                const struct cs_op *op = &cs->ops[i];
                if (op->kind == CS_OP_CHMOD)
                        fprintf(f, "%sC:%s", i ? " " : "", op->path);
                else
                        fprintf(f, "%sS%d%d:%s", i ? " " : "", op->has_old, op->has_new, op->path);
        }
        fclose(f);
        return s;
}

static char *violations_str(const struct changeset *cs)
{
        char *s = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&s, &n);
        for (size_t i = 0; i < cs->nviolations; i++)
                fprintf(f, "%s%s:%s", i ? " " : "", cs->violations[i].rule, cs->violations[i].path);
        fclose(f);
        return s;
}

static void check_cs(const struct changeset *cs, const char *name, const char *paths,
                     const char *ops)
{
        char *p = paths_str(cs), *o = ops_str(cs);
        is_str(p, paths, "%s: paths", name);
        is_str(o, ops, "%s: ops", name);
        free(p);
        free(o);
}

static const struct cs_op *find_op(const struct changeset *cs, const char *path)
{
        for (size_t i = 0; i < cs->nops; i++)
                if (!strcmp(cs->ops[i].path, path))
                        return &cs->ops[i];
        return NULL;
}

/* Sorted xattr names of path, space separated ("" when none). */
static char *xattrs_str(const char *path)
{
        char list[4096], *v[64], *s = NULL;
        size_t n = 0, nv = 0;
        ssize_t len = llistxattr(path, list, sizeof(list));
        FILE *f = open_memstream(&s, &n);

        for (ssize_t i = 0; i < len && nv < 64; i += (ssize_t)strlen(list + i) + 1)
                v[nv++] = list + i;
        for (size_t i = 1; i < nv; i++) /* insertion sort: a handful of names */
                for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
                        char *t = v[j];
                        v[j] = v[j - 1];
                        v[j - 1] = t;
                }
        for (size_t i = 0; i < nv; i++)
                fprintf(f, "%s%s", i ? " " : "", v[i]);
        fclose(f);
        return s;
}

static char *upath(const struct ovl *o, const char *rel)
{
        char *s = NULL;
        if (asprintf(&s, "%s/%s", o->upper, rel) < 0)
                abort();
        return s;
}

static mode_t umode(const struct ovl *o, const char *rel)
{
        struct stat st;
        return fstatat(o->upper_fd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_mode : 0;
}

/* Make a scenario's upper layer and build its changeset; false when that failed. */
static bool scenario(struct ovl *o, const char *name, void (*fn)(void), struct changeset *cs)
{
        struct txbox_error err = { 0 };
        int r;

        memset(cs, 0, sizeof(*cs));
        if (ovl_new(o, name) < 0 || populate(o) < 0) {
                ok(0, "%s: set up lower layer: %s", name, strerror(errno));
                return false;
        }
        r = ovl_run(o, fn);
        if (r < 0) {
                ok(0, "%s: run scenario on overlay: %s", name, strerror(-r));
                return false;
        }
        r = changeset_build(o->upper_fd, o->lower_fd, cs, &err);
        is_int(r, 0, "%s: changeset_build (%s)", name, err.msg);
        return r == 0;
}

static void done(struct ovl *o, struct changeset *cs)
{
        changeset_free(cs);
        ovl_close(o);
}

/* ---- scenarios (run inside the overlay, cwd = mount point) ---- */

static void sc_new_file(void) { CHK(ovl_put("new.txt", "new\n") == 0); }
static void sc_modify(void) { CHK(ovl_put("mod.txt", "changed\n") == 0); }

static void sc_copyup_nochange(void)
{
        int fd = open("keep.txt", O_WRONLY | O_APPEND | O_CLOEXEC);
        CHK(fd >= 0 && close(fd) == 0);
        CHK(ovl_put("mod.txt", "old\n") == 0); /* same bytes back, after O_TRUNC */
        CHK(ovl_put("sub/tmp", "t\n") == 0 && unlink("sub/tmp") == 0);
        CHK(unlink("link2") == 0 && symlink("mod.txt", "link2") == 0);
}

static void sc_delete_file(void) { CHK(unlink("keep.txt") == 0); }

static void rm_d(void)
{
        CHK(unlink("d/a") == 0 && unlink("d/b") == 0 && unlink("d/c") == 0);
        CHK(rmdir("d") == 0);
}

static void sc_delete_dir(void) { rm_d(); }

static void sc_recreate_dir(void)
{
        rm_d();
        CHK(mkdir("d", 0755) == 0);
        CHK(ovl_put("d/a", "a\n") == 0); /* same as before: not a change */
        CHK(ovl_put("d/b", "B\n") == 0);
        CHK(ovl_put("d/n", "n\n") == 0);
}

static void sc_new_tree(void)
{
        CHK(mkdir("t", 0755) == 0 && mkdir("t/u", 0755) == 0);
        CHK(ovl_put("t/f", "f\n") == 0 && ovl_put("t/u/g", "g\n") == 0);
}

static void sc_chmod_file(void) { CHK(chmod("mod.txt", 0600) == 0); }

static void sc_chmod_dir(void)
{
        CHK(chmod("sub", 0700) == 0);
        CHK(ovl_put("sub/n", "n\n") == 0);
}

static void sc_symlinks(void)
{
        CHK(symlink("keep.txt", "newlink") == 0);
        CHK(unlink("link") == 0 && symlink("mod.txt", "link") == 0);
}

static void sc_fifo(void)
{
        CHK(mkfifo("p", 0644) == 0);
        CHK(mkdir("nd", 0755) == 0 && mkfifo("nd/q", 0644) == 0);
}

static void sc_escaped_opaque(void)
{
        CHK(setxattr("sub", "user.overlay.opaque", "y", 1, 0) == 0);
        CHK(ovl_put("sub/n2", "n2\n") == 0);
}

static void sc_hardlink(void)
{
        CHK(ovl_put("h1", "h\n") == 0);
        CHK(link("h1", "h2") == 0);
}

static void sc_replace_types(void)
{
        CHK(unlink("mod.txt") == 0 && mkdir("mod.txt", 0755) == 0);
        CHK(ovl_put("mod.txt/z", "z\n") == 0);
        CHK(unlink("sub/x.txt") == 0 && rmdir("sub") == 0);
        CHK(ovl_put("sub", "now a file\n") == 0);
}

static void sc_mv_dir(void) { CHK(system("mv d d2") == 0); }

static void sc_prepare(void)
{
        rm_d();
        CHK(mkdir("d", 0755) == 0 && ovl_put("d/n", "n\n") == 0);
        CHK(mkdir("nd", 0755) == 0 && chmod("nd", 02755) == 0);
        CHK(ovl_put("nd/f", "#!/bin/sh\n") == 0);
        CHK(setxattr("nd/f", "user.overlay.foo", "bar", 3, 0) == 0);
        CHK(setxattr("nd/f", "user.overlay.overlay.deep", "d", 1, 0) == 0);
        CHK(setxattr("nd/f", "user.plain", "p", 1, 0) == 0);
        CHK(chmod("nd/f", 04755) == 0);
        CHK(ovl_put("su", "s\n") == 0 && chmod("su", 04755) == 0);
        CHK(chmod("mod.txt", 0444) == 0);
        CHK(ovl_put("sub/y", "y\n") == 0);
        CHK(setxattr("sub", "user.overlay.opaque", "y", 1, 0) == 0);
        /* read-only new directory: prepare must still reach inside */
        CHK(mkdir("ro", 0755) == 0 && ovl_put("ro/f", "f\n") == 0);
        CHK(setxattr("ro/f", "user.overlay.k", "v", 1, 0) == 0);
        CHK(chmod("ro/f", 0400) == 0 && chmod("ro", 0555) == 0);
}

/* ---- tests ---- */

static void test_new_file(void)
{
        struct ovl o;
        struct changeset cs;
        if (!scenario(&o, "new_file", sc_new_file, &cs))
                return;
        check_cs(&cs, "new file", "A:new.txt", "S01:new.txt");
        struct stat st;
        const struct cs_op *op = find_op(&cs, "new.txt");
        ok(op && fstatat(o.upper_fd, "new.txt", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                   op->new_ino == st.st_ino && op->new_size == 4 &&
                   op->new_mtime_ns == (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec &&
                   op->new_mode == (S_IFREG | 0644),
           "new file: op carries the upper entry's identity and mode");
        is_int(cs.nviolations, 0, "new file: no violations");
        ok(!changeset_copied_up(o.upper_fd, "new.txt"), "new file: not copied up (no origin)");
        ok(!changeset_copied_up(o.upper_fd, "absent/new.txt"),
           "a path not in the upper layer: not copied up either");
        done(&o, &cs);
}

static void test_modify(void)
{
        struct ovl o;
        struct changeset cs;
        if (!scenario(&o, "modify", sc_modify, &cs))
                return;
        check_cs(&cs, "modified file", "M:mod.txt", "S11:mod.txt");
        const struct cs_op *op = find_op(&cs, "mod.txt");
        ok(op && op->old_mode == (S_IFREG | 0644) && op->new_mode == (S_IFREG | 0644),
           "modified file: old and new modes");
        ok(changeset_copied_up(o.upper_fd, "mod.txt"),
           "modified file: copied up (overlayfs noted its origin)");
        ok(!changeset_deletes(&cs), "modified file: the changeset deletes nothing");
        done(&o, &cs);
}

static void test_copyup_nochange(void)
{
        struct ovl o;
        struct changeset cs;
        if (!scenario(&o, "copyup", sc_copyup_nochange, &cs))
                return;
        ok(S_ISREG(umode(&o, "keep.txt")) && S_ISREG(umode(&o, "mod.txt")) &&
                   S_ISDIR(umode(&o, "sub")) && S_ISLNK(umode(&o, "link2")),
           "copy-up: the kernel copied the untouched entries up");
        check_cs(&cs, "copy-up without change", "", "");
        done(&o, &cs);
}

static void test_delete_file(void)
{
        struct ovl o;
        struct changeset cs;
        struct stat st;
        if (!scenario(&o, "delete_file", sc_delete_file, &cs))
                return;
        ok(fstatat(o.upper_fd, "keep.txt", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR(st.st_mode) &&
                   st.st_rdev == makedev(0, 0),
           "deleted file: the kernel left a 0/0 whiteout");
        check_cs(&cs, "deleted file", "D:keep.txt", "S10:keep.txt");
        const struct cs_op *op = find_op(&cs, "keep.txt");
        ok(op && op->old_mode == (S_IFREG | 0644), "deleted file: old mode");
        ok(changeset_deletes(&cs), "deleted file: the changeset deletes a path");
        done(&o, &cs);
}

static void test_delete_dir(void)
{
        struct ovl o;
        struct changeset cs;
        if (!scenario(&o, "delete_dir", sc_delete_dir, &cs))
                return;
        check_cs(&cs, "deleted directory", "D:d D:d/a D:d/b D:d/c", "S10:d");
        done(&o, &cs);
}

static void test_recreate_dir(void)
{
        struct ovl o;
        struct changeset cs;
        char v[8] = "";
        if (!scenario(&o, "recreate_dir", sc_recreate_dir, &cs))
                return;
        char *d = upath(&o, "d");
        ok(lgetxattr(d, "user.overlay.opaque", v, sizeof(v)) == 1 && v[0] == 'y',
           "recreated directory: the kernel marked it opaque");
        free(d);
        check_cs(&cs, "recreated directory", "M:d/b D:d/c A:d/n", "S11:d");
        done(&o, &cs);
}

static void test_new_tree(void)
{
        struct ovl o;
        struct changeset cs;
        if (!scenario(&o, "new_tree", sc_new_tree, &cs))
                return;
        check_cs(&cs, "new directory tree", "A:t A:t/f A:t/u A:t/u/g", "S01:t");
        const struct cs_op *op = find_op(&cs, "t");
        ok(op && S_ISDIR(op->new_mode) && op->new_ino != 0, "new directory tree: op is the directory");
        done(&o, &cs);
}

static void test_chmod_file(void)
{
        struct ovl o;
        struct changeset cs;
        if (!scenario(&o, "chmod_file", sc_chmod_file, &cs))
                return;
        check_cs(&cs, "chmod file", "M:mod.txt", "S11:mod.txt");
        const struct cs_op *op = find_op(&cs, "mod.txt");
        ok(op && op->old_mode == (S_IFREG | 0644) && op->new_mode == (S_IFREG | 0600),
           "chmod file: modes");
        done(&o, &cs);
}

static void test_chmod_dir(void)
{
        struct ovl o;
        struct changeset cs;
        if (!scenario(&o, "chmod_dir", sc_chmod_dir, &cs))
                return;
        check_cs(&cs, "chmod directory", "M:sub A:sub/n", "C:sub S01:sub/n");
        const struct cs_op *op = find_op(&cs, "sub");
        ok(op && op->kind == CS_OP_CHMOD && op->old_mode == 0755 && op->new_mode == 0700,
           "chmod directory: CHMOD 0755 -> 0700");
        done(&o, &cs);
}

static void test_symlinks(void)
{
        struct ovl o;
        struct changeset cs;
        if (!scenario(&o, "symlinks", sc_symlinks, &cs))
                return;
        check_cs(&cs, "symlinks", "M:link A:newlink", "S11:link S01:newlink");
        const struct cs_op *op = find_op(&cs, "newlink");
        ok(op && S_ISLNK(op->new_mode), "symlinks: new_mode is a symlink");
        done(&o, &cs);
}

static void test_fifo(void)
{
        struct ovl o;
        struct changeset cs;
        if (!scenario(&o, "fifo", sc_fifo, &cs))
                return;
        check_cs(&cs, "fifo", "A:nd", "S01:nd");
        char *v = violations_str(&cs);
        is_str(v, "special-file:nd/q special-file:p", "fifo: violations");
        free(v);
        ok(cs.nviolations == 2 && cs.violations[0].detail && *cs.violations[0].detail,
           "fifo: violation has a detail");
        done(&o, &cs);
}

static void test_escaped_opaque(void)
{
        struct ovl o;
        struct changeset cs;
        if (!scenario(&o, "escaped_opaque", sc_escaped_opaque, &cs))
                return;
        char *sub = upath(&o, "sub"), *x = xattrs_str(sub);
        ok(strstr(x, "user.overlay.overlay.opaque") && !strstr(x, "user.overlay.opaque "),
           "escaped opaque: upper holds user.overlay.overlay.opaque (got '%s')", x);
        check_cs(&cs, "escaped opaque", "A:sub/n2", "S01:sub/n2");
        free(sub);
        free(x);
        done(&o, &cs);
}

static void test_hardlink(void)
{
        struct ovl o;
        struct changeset cs;
        if (!scenario(&o, "hardlink", sc_hardlink, &cs))
                return;
        check_cs(&cs, "hard link", "A:h1 A:h2", "S01:h1 S01:h2");
        ok(cs.nops == 2 && cs.ops[0].new_ino == cs.ops[1].new_ino, "hard link: one inode");
        done(&o, &cs);
}

static void test_replace_types(void)
{
        struct ovl o;
        struct changeset cs;
        if (!scenario(&o, "replace_types", sc_replace_types, &cs))
                return;
        check_cs(&cs, "type changes", "M:mod.txt A:mod.txt/z M:sub D:sub/x.txt",
                 "S11:mod.txt S11:sub");
        const struct cs_op *m = find_op(&cs, "mod.txt"), *s = find_op(&cs, "sub");
        ok(m && S_ISREG(m->old_mode) && S_ISDIR(m->new_mode) && s && S_ISDIR(s->old_mode) &&
                   S_ISREG(s->new_mode),
           "type changes: modes of both sides");
        done(&o, &cs);
}

static void test_mv_dir(void)
{
        struct ovl o;
        struct changeset cs;
        if (!scenario(&o, "mv_dir", sc_mv_dir, &cs))
                return;
        check_cs(&cs, "mv of a lower directory",
                 "D:d D:d/a D:d/b D:d/c A:d2 A:d2/a A:d2/b A:d2/c", "S10:d S01:d2");
        done(&o, &cs);
}

static void check_xattrs(const struct ovl *o, const char *rel, const char *want, const char *what)
{
        char *p = upath(o, rel), *x = xattrs_str(p);
        is_str(x, want, "%s", what);
        free(p);
        free(x);
}

static void test_prepare(void)
{
        struct ovl o;
        struct changeset cs;
        struct txbox_error err = { 0 };
        char v[8] = "";
        if (ovl_new(&o, "prepare") < 0 || populate(&o) < 0 || ovl_run(&o, sc_prepare) < 0) {
                ok(0, "prepare: make the upper layer");
                return;
        }
        /* Whiteouts inside a directory that moves whole (the kernel makes none there; an
         * upper layer may still hold them): not entries, removed by prepare. */
        char *wh2 = upath(&o, "nd/wh2");
        ok(mknodat(o.upper_fd, "nd/wh1", S_IFCHR | 0600, makedev(0, 0)) == 0 &&
                   ovl_put(wh2, "") == 0 && setxattr(wh2, "user.overlay.whiteout", "y", 1, 0) == 0,
           "prepare: add whiteouts to a new directory");
        free(wh2);

        is_int(changeset_build(o.upper_fd, o.lower_fd, &cs, &err), 0, "prepare: build (%s)", err.msg);
        check_cs(&cs, "prepare",
                 "D:d/a D:d/b D:d/c A:d/n M:mod.txt A:nd A:nd/f A:ro A:ro/f A:su A:sub/y",
                 "S11:d S11:mod.txt S01:nd S01:ro S01:su S01:sub/y");
        const struct cs_op *su = find_op(&cs, "su");
        /* The op carries the mode as it will be live (the commit gives a closed directory
         * its mode back from it); effect rules read the layer itself. */
        ok(su && !(su->new_mode & (S_ISUID | S_ISGID)) && (su->new_mode & 0777) == 0755,
           "prepare: the op's mode is the committed one (setuid cleared)");
        check_xattrs(&o, "d", "user.overlay.opaque", "prepare: before, recreated dir is opaque");
        check_xattrs(&o, "nd", "", "prepare: before, brand-new dir has no overlay xattr");
        check_xattrs(&o, "mod.txt", "user.overlay.origin", "prepare: before, copy-up has origin");

        char *jdir = strdup(o.upper);
        jdir[strlen(jdir) - 1] = 'J';
        int jfd = mkdir(jdir, 0700) == 0 ? open(jdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        free(jdir);
        is_int(changeset_prepare(o.upper_fd, &cs, jfd, &err), 0, "changeset_prepare (%s)", err.msg);
        struct cs_manifest mf = { 0 };
        is_int(journal_manifest_read(jfd, "manifest", &mf, &err), 0, "prepare: the manifest is written (%s)",
               err.msg);
        const struct cs_manifest_entry *me = cs_manifest_find(&mf, "nd/f"),
                                       *rf = cs_manifest_find(&mf, "ro/f");
        struct stat nst;
        ok(me && fstatat(o.upper_fd, "nd/f", &nst, 0) == 0 && me->ino == nst.st_ino &&
                   (me->mode & 07777) == 0755 && S_ISREG(me->mode) && me->size == nst.st_size,
           "prepare: the manifest holds what moves in whole, as it will be live");
        ok(rf && !cs_manifest_find(&mf, "nd") && !cs_manifest_find(&mf, "nd/wh1") &&
                   !cs_manifest_find(&mf, "mod.txt"),
           "prepare: ... beneath the ops only, whiteouts not included (%zu entries)", mf.n);
        cs_manifest_free(&mf);
        unlinkat(jfd, "manifest", 0);
        is_int(changeset_prepare(o.upper_fd, &cs, jfd, &err), 0, "changeset_prepare again (%s)", err.msg);
        ok(faccessat(jfd, "manifest", F_OK, 0) < 0, "prepare: runs once (no second manifest)");
        close(jfd);
        check_xattrs(&o, "d", "", "prepare: opaque marker removed");
        check_xattrs(&o, "nd/f", "user.overlay.foo user.overlay.overlay.deep user.plain",
                     "prepare: escaped xattrs unescaped, others kept (and kept by a second run)");
        char *f = upath(&o, "nd/f");
        ok(lgetxattr(f, "user.overlay.foo", v, sizeof(v)) == 3 && !memcmp(v, "bar", 3),
           "prepare: unescaped value kept");
        free(f);
        check_xattrs(&o, "mod.txt", "", "prepare: copied-up file loses overlay's xattrs");
        is_int(umode(&o, "mod.txt") & 07777, 0444, "prepare: read-only file keeps mode 0444");
        is_int(umode(&o, "nd") & 07777, 0755, "prepare: setgid cleared on new directory");
        is_int(umode(&o, "nd/f") & 07777, 0755, "prepare: setuid cleared inside new directory");
        is_int(umode(&o, "su") & 07777, 0755, "prepare: setuid cleared");
        ok(umode(&o, "nd/wh1") == 0 && umode(&o, "nd/wh2") == 0, "prepare: whiteouts removed");
        check_xattrs(&o, "ro/f", "user.overlay.k", "prepare: unescaped inside a read-only dir");
        ok((umode(&o, "ro") & 07777) == 0555 && (umode(&o, "ro/f") & 07777) == 0400,
           "prepare: read-only modes restored");
        char *sub = upath(&o, "sub"), *x = xattrs_str(sub);
        ok(strstr(x, "user.overlay.overlay.opaque") != NULL,
           "prepare: merged directory (no op) untouched ('%s')", x);
        free(sub);
        free(x);
        done(&o, &cs);
}

/* ---- upper layers made by hand: markers the kernel does not make here, and limits ---- */

static bool plain_pair(struct ovl *o, const char *name) { return ovl_new(o, name) == 0; }

static void test_hand_markers(void)
{
        struct ovl o;
        struct changeset cs = { 0 };
        struct txbox_error err = { 0 };
        char *p;
        bool okset = plain_pair(&o, "markers");

        okset = okset && lput(&o, "gone", "x") == 0 && lput(&o, "fake", "x") == 0;
        p = upath(&o, "gone");
        okset = okset && ovl_put(p, "") == 0 && setxattr(p, "user.overlay.whiteout", "", 0, 0) == 0;
        free(p);
        p = upath(&o, "fake");
        okset = okset && ovl_put(p, "") == 0 &&
                setxattr(p, "user.overlay.overlay.whiteout", "", 0, 0) == 0;
        free(p);
        okset = okset && mknodat(o.upper_fd, "ghost", S_IFCHR | 0600, makedev(0, 0)) == 0;
        okset = okset && mkdirat(o.lower_fd, "dir", 0755) == 0 && lput(&o, "dir/k", "k") == 0 &&
                mkdirat(o.upper_fd, "dir", 0755) == 0;
        p = upath(&o, "dir");
        okset = okset && setxattr(p, "user.overlay.opaque", "yes", 3, 0) == 0;
        free(p);
        ok(okset, "hand-made markers: set up");
        is_int(changeset_build(o.upper_fd, o.lower_fd, &cs, &err), 0, "hand-made markers: build (%s)",
               err.msg);
        check_cs(&cs, "hand-made markers (xattr whiteout, escaped whiteout, 0/0 over nothing, opaque=yes)",
                 "M:fake D:gone", "S11:fake S10:gone");
        done(&o, &cs);
}

/* n nested directories named name beneath the upper layer. */
static bool nest(const struct ovl *o, int n, const char *name)
{
        int fd = dup(o->upper_fd);
        for (int i = 0; i < n && fd >= 0; i++) {
                int next = mkdirat(fd, name, 0755) == 0
                                   ? openat(fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                   : -1;
                close(fd);
                fd = next;
        }
        if (fd < 0)
                return false;
        close(fd);
        return true;
}

static void test_limits(void)
{
        struct ovl o;
        struct changeset cs = { 0 };
        struct txbox_error err = { 0 };
        char longname[256];

        ok(plain_pair(&o, "depth_ok") && nest(&o, CS_MAX_DEPTH, "a"), "limits: %d deep", CS_MAX_DEPTH);
        is_int(changeset_build(o.upper_fd, o.lower_fd, &cs, &err), 0, "limits: %d deep is fine (%s)",
               CS_MAX_DEPTH, err.msg);
        is_int(cs.npaths, CS_MAX_DEPTH, "limits: every level reported");
        done(&o, &cs);

        ok(plain_pair(&o, "depth_bad") && nest(&o, CS_MAX_DEPTH + 1, "a"), "limits: one deeper");
        is_int(changeset_build(o.upper_fd, o.lower_fd, &cs, &err), -ELOOP, "limits: too deep is ELOOP");
        ok(err.code == ELOOP && strstr(err.msg, "a/a/a") != NULL, "limits: message names the path");
        ok(cs.npaths == 0 && cs.paths == NULL && cs.ops == NULL, "limits: cs untouched on failure");
        done(&o, &cs);

        memset(longname, 'n', 255);
        longname[255] = '\0';
        ok(plain_pair(&o, "long") && nest(&o, 17, longname), "limits: 17 x 255-byte names");
        is_int(changeset_build(o.upper_fd, o.lower_fd, &cs, &err), -ENAMETOOLONG,
               "limits: path beyond PATH_MAX is ENAMETOOLONG");
        done(&o, &cs);
}

int main(void)
{
        umask(022);
        if (ovl_setup_root() < 0) {
                ok(0, "mkdtemp: %s", strerror(errno));
                return tap_done();
        }
        test_new_file();
        test_modify();
        test_copyup_nochange();
        test_delete_file();
        test_delete_dir();
        test_recreate_dir();
        test_new_tree();
        test_chmod_file();
        test_chmod_dir();
        test_symlinks();
        test_fifo();
        test_escaped_opaque();
        test_hardlink();
        test_replace_types();
        test_mv_dir();
        test_prepare();
        test_hand_markers();
        test_limits();
        ovl_cleanup_root();
        return tap_done();
}
