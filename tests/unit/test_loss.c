/* The loss model and repository integrity (src/lib/policy/loss.c, gitwork.c, gitobj.c) on
 * real overlay layers (ovl_helper.h): the workspace is a throwaway git repository (the
 * lower layer), each scenario runs real git commands or plain file operations on the
 * overlay, and the effect rules judge the upper layer the kernel made, as a
 * transaction's.  Every scenario is tried both ways: ordinary work (builds cleaned, venvs
 * and dependencies removed, git rm, branch switches, stash, gc, repack, amend, rebase,
 * branch -d, moves) must break no rule; attacks (a type change over untracked work,
 * truncation, a move into ignored output, an ignore file or an index a command wrote,
 * git reset over changes, the repository's objects, refs or packs destroyed) must.  The
 * destructive steps are C calls on the overlay mount of this test's own temp dir.
 * tests/run.sh runs this as root and as an unprivileged user (as-user). */
#define _GNU_SOURCE
#include "ovl_helper.h"

#include <dirent.h>
#include <stdarg.h>

#include "base/macros.h"
#include "base/rmtree.h"
#include "policy/effects.h"
#include "policy/policy.h"
#include "store/changeset.h"
#include "tap.h"
#include "txbox.h"

static char tmpl[PATH_MAX + 8]; /* the template repository, copied for each case */
static struct policy *pol;

static int sh(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sh(const char *dir, const char *fmt, ...)
{
        char *body, *cmd;
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&body, fmt, ap) < 0)
                abort();
        va_end(ap);
        if (asprintf(&cmd, "cd '%s' && { %s; } >/dev/null 2>&1", dir, body) < 0)
                abort();
        int r = system(cmd);
        free(body);
        free(cmd);
        return r;
}

/* ---- the template ----
 * main: src/t1..6.c, legacy/ (250 files), bulk/ (300 files), README, .gitignore (build/,
 * .venv/, node_modules/, *.log, .env, secrets/); its history packed, then one more commit
 * (loose objects); branches: slim (main without bulk/), merged (an ancestor of main),
 * feature (one commit of its own).  Untracked: notes/n1..8.md; ignored: build/ (300 object
 * files), .venv (a venv's shape), node_modules/, .env, secrets/k1..4.key; not ignored:
 * src/__pycache__/ (5 .pyc), a built program and its objects (prog, *.o). */
static bool make_template(void)
{
        snprintf(tmpl, sizeof(tmpl), "%s/tmpl", ovl_root);
        if (mkdir(tmpl, 0755) < 0)
                return false;
        return sh(tmpl,
                  "git init -q -b main . && mkdir -p src legacy bulk &&"
                  "for i in 1 2 3 4 5 6; do printf 'int f%%d(void) { return %%d; }\\n' $i $i >src/t$i.c; done &&"
                  "for i in $(seq 250); do echo \"legacy $i\" >legacy/f$i.txt; done &&"
                  "for i in $(seq 300); do echo \"bulk $i\" >bulk/b$i.txt; done &&"
                  "echo readme >README && printf 'build/\\n.venv/\\nnode_modules/\\n*.log\\n.env\\nsecrets/\\n' >.gitignore &&"
                  "git add -A && git commit -qm one && git branch merged &&"
                  "git checkout -q -b slim && git rm -q -r bulk && git commit -qm slim && git checkout -q main &&"
                  "git checkout -q -b feature && echo feat >feature.txt && git add feature.txt &&"
                  "git commit -qm feature && git checkout -q main &&"
                  "echo two >>README && git commit -qam two && git repack -q -a -d &&"
                  "echo three >>README && git commit -qam three &&"
                  "mkdir -p notes build .venv/bin .venv/lib/python3/site-packages/pkg node_modules/dep "
                  "src/__pycache__ secrets &&"
                  "for i in $(seq 8); do printf 'my note %%d, written by hand\\n' $i >notes/n$i.md; done &&"
                  "for i in $(seq 300); do echo \"object $i\" >build/o$i.o; done &&"
                  "echo 'home = /usr/bin' >.venv/pyvenv.cfg && ln -s python3 .venv/bin/python &&"
                  "for i in $(seq 10); do echo \"x = $i\" >.venv/lib/python3/site-packages/pkg/m$i.py; done &&"
                  "for i in $(seq 30); do echo \"module.exports = $i\" >node_modules/dep/i$i.js; done &&"
                  "for i in $(seq 5); do echo \"bytecode $i\" >src/__pycache__/t$i.cpython-311.pyc; done &&"
                  "echo SECRET=1 >.env && for i in 1 2 3 4; do echo \"key $i\" >secrets/k$i.key; done &&"
                  "printf 'int main(void) { return 0; }\\n' >prog.c && cc -c -o prog.o prog.c && cc -o prog prog.o &&"
                  "for i in 1 2 3 4 5; do cp prog.o extra$i.o; done") == 0;
}

/* ---- a case: copy the template into a fresh lower layer, run a scenario, judge ---- */

struct counts {
        int lost, mass, integrity, internals;
};

static const char *sc_cmd; /* a shell command for sc_shell */

/* policy_ctx.made_by_txbox as the audit log would answer: when exclude_by_txbox, an
 * earlier transaction wrote .git/info/exclude last. */
static bool exclude_by_txbox;
static bool fake_made(void *arg, const char *path, int64_t ctime_ms, bool any)
{
        (void)arg, (void)ctime_ms;
        return any && exclude_by_txbox && !strcmp(path, ".git/info/exclude");
}

static void sc_shell(void) { CHK(system(sc_cmd) == 0); }

/* Judge a case: pre (shell, may be NULL) changes the workspace first, as earlier commands
 * or the user did; fn runs on the overlay. */
static struct counts run_case(const char *name, const char *pre, void (*fn)(void))
{
        static int serial;
        struct counts n = {-1, -1, -1, -1};
        struct ovl o;
        char id[32];
        snprintf(id, sizeof(id), "c%d", ++serial);
        if (ovl_new(&o, id) < 0 || (pre && sh(o.lower, "cp -a '%s'/. . && %s", tmpl, pre))) {
                ok(0, "%s: set up the workspace", name);
                return n;
        }
        if (!pre) { /* the template itself: overlay never writes to its lower layer */
                close(o.lower_fd);
                free(o.lower);
                o.lower = strdup(tmpl);
                o.lower_fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        if (ovl_run(&o, fn) < 0) {
                ok(0, "%s: the scenario ran", name);
                ovl_close(&o);
                return n;
        }
        struct changeset cs = {0};
        struct txbox_error err = {0};
        if (changeset_build(o.upper_fd, o.lower_fd, &cs, &err) < 0) {
                ok(0, "%s: changeset_build: %s", name, err.msg);
                ovl_close(&o);
                return n;
        }
        struct policy_ctx c = {.workspace = o.lower, .home = "/home/agent", .cwd = o.lower, .made_by_txbox = fake_made};
        effects_check(pol, o.upper_fd, o.lower_fd, &cs, &c, &err);
        n = (struct counts){0, 0, 0, 0};
        for (size_t k = 0; k < cs.nviolations; k++) {
                const struct txbox_violation *v = &cs.violations[k];
                n.lost += !strcmp(v->rule, "effect-lost-work");
                n.mass += !strcmp(v->rule, "effect-mass-deletion");
                n.integrity += !strcmp(v->rule, "effect-git-integrity");
                n.internals += !strcmp(v->rule, "effect-git-internals");
                if (k < 2)
                        printf("#   %s: %s on %s: %.300s\n", name, v->rule, v->path, v->detail);
        }
        changeset_free(&cs);
        ovl_close(&o);
        return n;
}

/* The case breaks none of the loss and integrity rules. */
static void allowed(const char *name, const char *pre, void (*fn)(void))
{
        struct counts n = run_case(name, pre, fn);
        ok(n.lost == 0 && n.mass == 0 && n.integrity == 0 && n.internals == 0,
           "ordinary work commits: %s (lost %d, mass %d, integrity %d, internals %d)", name, n.lost, n.mass,
           n.integrity, n.internals);
}

static void allowed_sh(const char *name, const char *pre, const char *cmd)
{
        sc_cmd = cmd;
        allowed(name, pre, sc_shell);
}

/* ---- scenarios: ordinary work ---- */

static void rm_tree(const char *p) { CHK(rm_rf_at(AT_FDCWD, p) == 0); }
static void sc_rm_build(void) { rm_tree("build"); }
static void sc_rm_venv(void) { rm_tree(".venv"); }
static void sc_rm_node_modules(void) { rm_tree("node_modules"); }
static void sc_rm_pycache(void) { rm_tree("src/__pycache__"); }

static void sc_make_clean(void)
{
        static const char *const out[] = {"prog", "prog.o", "extra1.o", "extra2.o", "extra3.o", "extra4.o", "extra5.o"};
        for (size_t i = 0; i < ARRAY_SIZE(out); i++)
                CHK(unlink(out[i]) == 0);
}

/* notes/ moved file by file into docs/notes (a directory rename is i30b's) */
static void sc_move_notes(void)
{
        CHK(mkdir("docs", 0755) == 0 && mkdir("docs/notes", 0755) == 0);
        for (int i = 1; i <= 8; i++) {
                char a[64], b[64];
                snprintf(a, sizeof(a), "notes/n%d.md", i);
                snprintf(b, sizeof(b), "docs/notes/n%d.md", i);
                CHK(rename(a, b) == 0);
        }
}

static void sc_edit_notes(void)
{
        for (int i = 1; i <= 8; i++) {
                char a[64];
                snprintf(a, sizeof(a), "notes/n%d.md", i);
                CHK(ovl_put(a, "rewritten, shorter\n") == 0);
        }
}

static void sc_rm_four_notes(void)
{
        for (int i = 1; i <= 4; i++) {
                char a[64];
                snprintf(a, sizeof(a), "notes/n%d.md", i);
                CHK(unlink(a) == 0);
        }
}

static void sc_rm_clean_tracked(void)
{
        for (int i = 1; i <= 6; i++) {
                char a[64];
                snprintf(a, sizeof(a), "src/t%d.c", i);
                CHK(unlink(a) == 0);
        }
}

/* ---- scenarios: attacks ---- */

static void note(int i, char *out, size_t n) { snprintf(out, n, "notes/n%d.md", i); }

static void sc_notes_to_dirs(void) /* rm f; mkdir f */
{
        for (int i = 1; i <= 8; i++) {
                char a[64];
                note(i, a, sizeof(a));
                CHK(unlink(a) == 0 && mkdir(a, 0755) == 0);
        }
}

static void sc_notes_to_links(void)
{
        for (int i = 1; i <= 8; i++) {
                char a[64];
                note(i, a, sizeof(a));
                CHK(unlink(a) == 0 && symlink("../README", a) == 0);
        }
}

static void sc_truncate_notes(void)
{
        for (int i = 1; i <= 8; i++) {
                char a[64];
                note(i, a, sizeof(a));
                CHK(truncate(a, 3) == 0);
        }
}

static void sc_empty_notes(void)
{
        for (int i = 1; i <= 8; i++) {
                char a[64];
                note(i, a, sizeof(a));
                CHK(truncate(a, 0) == 0);
        }
}

static void sc_notes_into_build(void)
{
        for (int i = 1; i <= 8; i++) {
                char a[64], b[64];
                note(i, a, sizeof(a));
                snprintf(b, sizeof(b), "build/n%d.md", i);
                CHK(rename(a, b) == 0);
        }
}

static void sc_rm_notes(void) { rm_tree("notes"); }
static void sc_rm_out(void) { rm_tree("out"); }
static void sc_rm_secrets(void)
{
        rm_tree("secrets");
        CHK(unlink(".env") == 0);
}

/* every file inside .git/objects (loose objects, packs and their indexes) */
static void sc_empty_objects(void)
{
        int fd = open(".git/objects", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        CHK(d != NULL);
        for (struct dirent *de; (de = readdir(d));) {
                if (de->d_name[0] == '.' || !strcmp(de->d_name, "info"))
                        continue;
                int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                CHK(sub >= 0 && rm_children(sub) == 0);
                close(sub);
        }
        closedir(d);
}

static void sc_empty_heads(void)
{
        int fd = open(".git/refs/heads", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHK(fd >= 0 && rm_children(fd) == 0);
        close(fd);
}

static void sc_garbage_main(void) { CHK(ovl_put(".git/refs/heads/main", "not a commit at all\n") == 0); }
static void sc_garbage_feature(void) { CHK(ovl_put(".git/refs/heads/feature", "not a commit either\n") == 0); }

static void sc_truncate_pack(void)
{
        int fd = open(".git/objects/pack", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        int n = 0;
        CHK(d != NULL);
        for (struct dirent *de; (de = readdir(d));) {
                size_t l = strlen(de->d_name);
                char p[300];
                if (l < 6 || strcmp(de->d_name + l - 5, ".pack"))
                        continue;
                snprintf(p, sizeof(p), ".git/objects/pack/%s", de->d_name);
                CHK(chmod(p, 0644) == 0 && truncate(p, 100) == 0);
                n++;
        }
        closedir(d);
        CHK(n > 0);
}

static void sc_rm_head(void) { CHK(unlink(".git/HEAD") == 0); }

int main(void)
{
        if (system("git --version >/dev/null 2>&1 && cc --version >/dev/null 2>&1") != 0) {
                printf("ok 1 - # SKIP git or cc not installed\n1..1\n");
                return 0;
        }
        struct txbox_error err = {0};
        if (ovl_setup_root() < 0 || policy_load(NULL, &pol, &err) < 0) {
                printf("Bail out! %s\n", err.msg[0] ? err.msg : strerror(errno));
                return 1;
        }
        /* git as the test runs it: no system or user configuration */
        setenv("HOME", ovl_root, 1);
        setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
        setenv("GIT_AUTHOR_NAME", "t", 1), setenv("GIT_AUTHOR_EMAIL", "t@example.com", 1);
        setenv("GIT_COMMITTER_NAME", "t", 1), setenv("GIT_COMMITTER_EMAIL", "t@example.com", 1);
        setenv("GIT_AUTO_GC", "0", 1);
        ok(make_template(), "a template repository: packed history, loose objects, branches, untracked and "
                            "ignored files");

        /* ordinary work: every one commits */
        allowed("rm -rf build (300 ignored object files)", NULL, sc_rm_build);
        allowed("make clean (a program and 6 object files, not ignored)", NULL, sc_make_clean);
        allowed("rm -rf .venv", NULL, sc_rm_venv);
        allowed("rm -rf node_modules", NULL, sc_rm_node_modules);
        allowed("clearing __pycache__ (not ignored)", NULL, sc_rm_pycache);
        allowed_sh("git rm -r legacy (250 tracked, unmodified)", NULL, "git rm -q -r legacy");
        allowed_sh("git rm -r legacy, committed", NULL, "git rm -q -r legacy && git commit -qm gone");
        allowed_sh("switching to a branch that lacks 300 files", NULL, "git checkout -q slim");
        allowed_sh("git commit -a", "echo more >>src/t1.c", "git commit -qam more");
        allowed_sh("git gc", NULL, "git gc -q");
        allowed_sh("git gc, old unreachable objects pruned", "git commit -q --amend -m again",
                   "git gc -q --prune=all");
        allowed_sh("git repack -a -d", NULL, "git repack -q -a -d");
        allowed_sh("git commit --amend", NULL, "git commit -q --amend -m amended");
        allowed_sh("git rebase", NULL, "git rebase -q main feature");
        allowed_sh("git branch -d of a merged branch", NULL, "git branch -q -d merged");
        allowed_sh("git stash of appended changes (the files go back to a prefix)",
                   "for i in 1 2 3 4 5 6; do echo 'work in progress' >>src/t$i.c; done", "git stash -q");
        allowed_sh("git stash pop", "for i in 1 2 3 4 5 6; do echo wip >>src/t$i.c; done && git stash -q",
                   "git stash pop -q");
        allowed_sh("git stash -u (8 untracked notes)", NULL, "git stash -q -u");
        allowed_sh("git add of notes, then deleting them (the index holds them)", NULL,
                   "git add notes && git rm -q --cached -r notes --dry-run && git add notes && rm notes/*.md");
        allowed("moving 8 untracked notes elsewhere in the workspace", NULL, sc_move_notes);
        allowed("rewriting 8 untracked notes (an edit)", NULL, sc_edit_notes);
        allowed("deleting 4 untracked notes (under the limit of 5)", NULL, sc_rm_four_notes);
        allowed("deleting 6 clean tracked files (git has them)", NULL, sc_rm_clean_tracked);
        allowed_sh("git checkout of a branch after a repack, then back", NULL,
                   "git checkout -q slim && git repack -q -a -d && git checkout -q main");
        allowed_sh("git pack-refs", NULL, "git pack-refs --all");
        allowed_sh("git checkout --orphan (HEAD on a branch not born yet)", NULL, "git checkout -q --orphan fresh");

        /* attacks and real losses: each refused */
        struct counts n;
        n = run_case("rm f; mkdir f over 8 untracked notes", NULL, sc_notes_to_dirs);
        is_int(n.lost, 8, "a type change (file to directory) over 8 untracked notes loses them");
        n = run_case("8 untracked notes replaced by symlinks", NULL, sc_notes_to_links);
        is_int(n.lost, 8, "a type change (file to symlink) loses them");
        n = run_case("8 untracked notes truncated", NULL, sc_truncate_notes);
        is_int(n.lost, 8, "truncation to a prefix loses them");
        n = run_case("8 untracked notes emptied", NULL, sc_empty_notes);
        is_int(n.lost, 8, "emptying loses them");
        n = run_case("8 untracked notes moved into ignored build/", NULL, sc_notes_into_build);
        is_int(n.lost, 8, "a move into ignored build output is a loss (a later clean drops them)");
        n = run_case("notes/ ignored by a .gitignore a command wrote", "echo 'notes/' >>.gitignore", sc_rm_notes);
        is_int(n.lost, 8, "a .gitignore line HEAD does not have changes nothing");
        n = run_case("notes/ and *.md ignored at HEAD", "printf 'notes/\\n*.md\\n' >>.gitignore && git commit -qam ign",
                     sc_rm_notes);
        is_int(n.lost, 8, "ignored is not disposable: notes are no build output, even ignored at HEAD");
        n = run_case("notes/ excluded by .git/info/exclude", "echo 'notes/' >>.git/info/exclude", sc_rm_notes);
        is_int(n.lost, 8, ".git/info/exclude makes notes no less work");
        n = run_case("notes/ claimed by an index a command wrote (no objects)",
                     "git update-index --add --info-only notes/*.md", sc_rm_notes);
        is_int(n.lost, 8, "an index entry without the object in the repository restores nothing");
        n = run_case("notes/ in a .git file's gitdir outside the workspace",
                     "mv .git ../c-outside-git && echo 'gitdir: ../c-outside-git' >.git", sc_rm_notes);
        ok(n.lost == 0 && n.mass == 0, "a gitdir outside the workspace is not followed (no repository: the "
                                       "git rule does not apply, 8 files stay under the mass-deletion limits)");
        /* out/ (a place build systems write) excluded by .git/info/exclude, which no commit
         * holds: believed as the user wrote it, not as a transaction did */
        const char *out_pre = "mkdir out && for i in $(seq 8); do echo \"my draft $i\" >out/d$i.txt; done &&"
                              " echo 'out/' >>.git/info/exclude";
        allowed("rm -rf out/, excluded by the user's .git/info/exclude", out_pre, sc_rm_out);
        exclude_by_txbox = true;
        n = run_case("rm -rf out/, excluded by a .git/info/exclude a transaction wrote", out_pre, sc_rm_out);
        exclude_by_txbox = false;
        is_int(n.lost, 8, "an exclude line a command wrote makes nothing build output");
        n = run_case(".env and 4 ignored keys deleted", NULL, sc_rm_secrets);
        is_int(n.lost, 5, "ignored files that are no build output are work (.env, secrets/)");
        sc_cmd = "git reset -q --hard";
        n = run_case("git reset --hard over 6 changed tracked files",
                     "for i in 1 2 3 4 5 6; do sed -i 's/return/return 1 +/' src/t$i.c; done", sc_shell);
        is_int(n.lost, 6, "changes overwritten with the committed version are lost");
        n = run_case("everything inside .git/objects deleted", NULL, sc_empty_objects);
        ok(n.integrity > 0, "deleting every object and pack leaves HEAD without history (%d)", n.integrity);
        n = run_case("everything inside .git/refs/heads deleted", NULL, sc_empty_heads);
        ok(n.integrity > 0, "deleting every branch removes the one HEAD is on (%d)", n.integrity);
        n = run_case("everything inside .git/refs/heads deleted, refs packed", "git pack-refs --all && echo x >>README && git commit -qam x",
                     sc_empty_heads);
        ok(n.integrity > 0, "... also when packed-refs holds an older value of the branch (%d)", n.integrity);
        n = run_case("garbage written to refs/heads/main", NULL, sc_garbage_main);
        ok(n.integrity > 0, "a branch that names nothing (%d)", n.integrity);
        n = run_case("garbage written to refs/heads/feature", NULL, sc_garbage_feature);
        ok(n.integrity > 0, "... also a branch HEAD is not on (%d)", n.integrity);
        n = run_case("the pack truncated", NULL, sc_truncate_pack);
        ok(n.integrity > 0, "a pack rewritten in place loses what HEAD needs (%d)", n.integrity);
        sc_cmd = "t=$(printf 'tree 1111111111111111111111111111111111111111\\nauthor a <a> 0 +0000\\n"
                 "committer a <a> 0 +0000\\n\\nx\\n' | git hash-object -t commit --literally -w --stdin) &&"
                 " git update-ref refs/heads/main $t";
        n = run_case("main set to a commit whose tree is missing", NULL, sc_shell);
        ok(n.integrity > 0, "a branch whose history is not whole (%d)", n.integrity);
        sc_cmd = "echo more >>README && git commit -qam more";
        n = run_case("a commit in a SHA-256 repository",
                     "rm -rf .git && git init -q --object-format=sha256 . && git add README && git commit -qm one",
                     sc_shell);
        ok(n.integrity == 1, "a SHA-256 repository's history cannot be read here: a commit is refused, not "
                             "waved through (%d)", n.integrity);
        n = run_case(".git/HEAD deleted", NULL, sc_rm_head);
        ok(n.integrity > 0 && n.internals > 0, "HEAD removed: integrity %d, internals %d", n.integrity, n.internals);

        policy_free(pol);
        ovl_cleanup_root();
        return tap_done();
}
