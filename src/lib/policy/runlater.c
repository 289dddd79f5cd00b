/* Effect rule effect-run-later (runlater.h): what a transaction leaves for the user's next
 * command to run.  Judged on consequences: a git configuration entry counts when it names a
 * program and was not there, with that value, before the transaction (an unchanged
 * core.pager the user set is nobody's business); a hook counts wherever git would look for
 * it; editor and agent files count when they would start something on their own.  Every file
 * read here was written by the sandboxed program: read from the view, beneath the workspace,
 * bounded (gitconfig.c, view.c), and every byte of it shown escaped. */
#define _GNU_SOURCE
#include "policy/runlater.h"

#include <jansson.h>
#include <string.h>
#include <strings.h>

#include "base/cleanup.h"
#include "base/human.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/str.h"
#include "base/strv.h"
#include "policy/gitconfig.h"
#include "policy/pol.h"
#include "policy/view.h"
#include "txbox.h"

#define MAX_REPOS 256   /* repositories judged in one transaction */
#define SHOWN_MAX 160   /* bytes of a value shown in a message */
#define JSON_MAX (1u << 20)

#define HOW_ALLOW                                                                                           \
        "if you want it, make this change yourself outside txbox (or give txbox --approve PROGRAM to be " \
        "asked)"

struct rl {
        struct view v, before;
        struct changeset *cs;
        int budget, added;
        struct strvec hookdirs; /* directories core.hooksPath names, workspace-relative */
        struct strvec judged;   /* "after\nbefore" gitdir pairs already judged */
        char *hooks_parent;     /* the last directory holding a "hooks" asked about ... */
        bool hooks_parent_git;  /* ... and whether it is a repository's (paths come sorted) */
};

static void add(struct rl *r, const char *path, char *detail)
{
        if (r->added < r->budget) {
                changeset_add_violation(r->cs, RUNLATER_RULE, path, detail);
                r->added++;
        }
        free(detail);
}

/* s for a message: escaped, and cut to SHOWN_MAX bytes. */
static char *shown(const char *s)
{
        char *e = human_escape(s ? s : "", HUMAN_LINE);
        if (strlen(e) > SHOWN_MAX) {
                size_t cut = SHOWN_MAX;
                while (cut && (e[cut] & 0xc0) == 0x80) /* not inside a UTF-8 sequence */
                        cut--;
                strcpy(e + cut, "...");
        }
        return e;
}

static bool ends_with(const char *s, const char *tail)
{
        size_t l = strlen(s), t = strlen(tail);
        return l >= t && !strcmp(s + l - t, tail);
}

static char *dir_of(const char *path)
{
        const char *slash = strrchr(path, '/');
        return slash ? strndup(path, (size_t)(slash - path)) : xstrdup("");
}

static char *path_in(const char *dir, const char *name)
{
        return dir[0] ? xasprintf("%s/%s", dir, name) : xstrdup(name);
}

/* ---- repositories ---- */

static bool exists_as(const struct view *v, const char *dir, const char *name, mode_t type)
{
        _cleanup_free_ char *p = path_in(dir, name);
        struct stat st;
        return view_lstat(v, p, &st, NULL) == 0 && (st.st_mode & S_IFMT) == type;
}

/* Would git take dir for a repository's directory (git's is_git_directory, roughly)?  A
 * HEAD, and objects or a commondir; or a directory named .git. */
static bool gitdir_like(const struct view *v, const char *dir)
{
        struct stat st;
        if (!strcmp(base_name(dir), ".git") && view_lstat(v, dir, &st, NULL) == 0 && S_ISDIR(st.st_mode))
                return true;
        return (exists_as(v, dir, "HEAD", S_IFREG) || exists_as(v, dir, "HEAD", S_IFLNK)) &&
               (exists_as(v, dir, "objects", S_IFDIR) || exists_as(v, dir, "commondir", S_IFREG));
}

/* A path a repository file names ("gitdir: X", commondir), from the directory dir: the
 * workspace-relative directory it leads to, or NULL when outside the workspace. */
static char *named_dir(const struct view *v, const char *dir, const char *text)
{
        _cleanup_free_ char *t = xstrdup(text), *joined = NULL, *out = NULL;
        t[strcspn(t, "\r\n")] = '\0';
        const char *ws = v->workspace;
        if (!t[0])
                return NULL;
        if (t[0] == '/') {
                if (!ws || !path_is_within(t, ws))
                        return NULL;
                joined = xstrdup(t + strlen(ws) + (t[strlen(ws)] == '/'));
        } else {
                joined = path_in(dir, t);
        }
        return view_resolve(v, joined, &out, NULL) == 1 ? TAKE_PTR(out) : NULL;
}

/* The directory of the repository whose work tree is wt: wt/.git, or where a .git file
 * points.  NULL when there is none in the workspace. */
static char *gitdir_of(const struct view *v, const char *wt)
{
        _cleanup_free_ char *dotgit = path_in(wt, ".git"), *at = NULL, *text = NULL;
        struct stat st;
        size_t len;

        if (view_resolve(v, dotgit, &at, NULL) != 1 || view_lstat(v, at, &st, NULL) < 0)
                return NULL;
        if (S_ISDIR(st.st_mode))
                return TAKE_PTR(at);
        if (!S_ISREG(st.st_mode) || view_read(v, at, 4096, &text, &len) < 0 || strncmp(text, "gitdir:", 7))
                return NULL;
        _cleanup_free_ char *d = dir_of(at);
        return named_dir(v, d, text + 7 + strspn(text + 7, " \t"));
}

/* Everything git reads as the repository's own configuration: its config (or the common
 * directory's, for a linked worktree) and config.worktree. */
static void load_repo(struct gitcfg *c, const struct view *v, const char *gd)
{
        _cleanup_free_ char *cd = path_in(gd, "commondir"), *text = NULL, *common = NULL;
        size_t len;

        strvec_push(&c->files, xstrdup(cd));
        if (view_read(v, cd, 4096, &text, &len) == 0)
                common = named_dir(v, gd, text);
        _cleanup_free_ char *cfg = path_in(common ? common : gd, "config");
        _cleanup_free_ char *wcfg = path_in(gd, "config.worktree");
        gitcfg_load(c, v, cfg);
        gitcfg_load(c, v, wcfg);
}

static bool any_changed(const struct rl *r, const struct strvec *files)
{
        for (size_t k = 0; k < files->n; k++)
                if (view_changed(&r->v, files->v[k]))
                        return true;
        return false;
}

/* "name\1value" (value NULL: "\2"), for looking an entry up among the ones before. */
static char *entry_key(const struct gitcfg_entry *e)
{
        return xasprintf("%s\1%s", e->name, e->value ? e->value : "\2");
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Add the keys of c's entries that run something to keys. */
static void running(const struct gitcfg *c, struct strvec *keys)
{
        for (size_t k = 0; k < c->n; k++)
                if (gitcfg_runs(c->v[k].name, c->v[k].value))
                        strvec_push(keys, entry_key(&c->v[k]));
}

/* What ran before: the repository's configuration as it was (b), and every file a's entries
 * come from as that file was (a linked worktree or a new clone of a shared configuration
 * reads files the user's git already read). */
static void before_keys(const struct rl *r, const struct gitcfg *a, const struct gitcfg *b, struct strvec *keys)
{
        const char *done[GITCFG_MAX_FILES];
        size_t ndone = 0;

        running(b, keys);
        for (size_t k = 0; k < a->n; k++) {
                const char *f = a->v[k].file;
                bool seen = false;
                for (size_t j = 0; j < ndone && !seen; j++)
                        seen = done[j] == f;
                if (seen || ndone == ARRAY_SIZE(done))
                        continue;
                done[ndone++] = f;
                struct gitcfg old = {0};
                gitcfg_load(&old, &r->before, f);
                running(&old, keys);
                gitcfg_free(&old);
        }
        if (keys->n)
                qsort(keys->v, keys->n, sizeof(*keys->v), cmp_str);
}

struct cand {
        char *key;
        size_t idx;
};

static int cmp_cand(const void *a, const void *b)
{
        const struct cand *x = a, *y = b;
        int c = strcmp(x->key, y->key);
        return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* The directory core.hooksPath names, when it is in the workspace (relative to the work
 * tree, as git takes it; a bare repository's own directory). */
static void note_hookdir(struct rl *r, const struct gitcfg *c, const char *top)
{
        const char *hp = gitcfg_last(c, "core.hookspath");
        const char *ws = r->v.workspace;
        _cleanup_free_ char *joined = NULL, *out = NULL;

        if (!hp || !hp[0] || hp[0] == '~')
                return;
        if (hp[0] == '/') {
                if (!ws || !path_is_within(hp, ws))
                        return;
                joined = xstrdup(hp + strlen(ws) + (hp[strlen(ws)] == '/'));
        } else {
                joined = path_in(top, hp);
        }
        if (view_resolve(&r->v, joined, &out, NULL) != 1)
                return;
        for (size_t k = 0; k < r->hookdirs.n; k++)
                if (!strcmp(r->hookdirs.v[k], out))
                        return;
        strvec_push(&r->hookdirs, TAKE_PTR(out));
}

static void report_entry(struct rl *r, const struct gitcfg_entry *e, const char *when)
{
        _cleanup_free_ char *name = shown(e->name), *value = shown(e->value ? e->value : "(true)");
        add(r, e->file,
            xasprintf("sets git config %s = '%s' (line %u), which git runs %s, outside the sandbox; %s", name, value,
                      e->line, when, HOW_ALLOW));
}

/* One repository: its configuration after the transaction against before (gb: its directory
 * before, NULL when it had none).  top is its work tree, for a relative core.hooksPath. */
static void judge_repo(struct rl *r, const char *ga, const char *gb, const char *top, bool wt_changed)
{
        struct gitcfg a = {0}, b = {0};
        _cleanup_free_ char *pair = xasprintf("%s\n%s", ga ? ga : "", gb ? gb : "");

        for (size_t k = 0; k < r->judged.n; k++)
                if (!strcmp(r->judged.v[k], pair))
                        return;
        strvec_push(&r->judged, xstrdup(pair));
        if (ga)
                load_repo(&a, &r->v, ga);
        if (gb)
                load_repo(&b, &r->before, gb);
        note_hookdir(r, &a, top);
        bool moved = (ga == NULL) != (gb == NULL) || (ga && gb && strcmp(ga, gb));
        if (ga && (wt_changed || moved || any_changed(r, &a.files) || any_changed(r, &b.files))) {
                if (a.opaque && (!b.opaque || strcmp(a.opaque, b.opaque))) {
                        _cleanup_free_ char *why = shown(a.opaque);
                        _cleanup_free_ char *cfg = path_in(ga, "config");
                        add(r, cfg,
                            xasprintf("git's configuration cannot be judged (%s), and what it makes git run "
                                      "at your next git command is unknown; %s",
                                      why, HOW_ALLOW));
                }
                /* Entries that run something and were not there, with that value, before;
                 * the same entry twice is named once. */
                struct cand *cand = NULL;
                size_t nc = 0;
                for (size_t k = 0; k < a.n; k++)
                        if (gitcfg_runs(a.v[k].name, a.v[k].value)) {
                                cand = xrealloc(cand, (nc + 1) * sizeof(*cand));
                                cand[nc++] = (struct cand){entry_key(&a.v[k]), k};
                        }
                struct strvec old = {0};
                if (nc)
                        before_keys(r, &a, &b, &old);
                if (nc)
                        qsort(cand, nc, sizeof(*cand), cmp_cand);
                for (size_t k = 0; k < nc; k++) {
                        bool dup = k && !strcmp(cand[k].key, cand[k - 1].key);
                        bool was = old.n && bsearch(&cand[k].key, old.v, old.n, sizeof(*old.v), cmp_str);
                        if (!dup && !was && r->added < r->budget) {
                                const struct gitcfg_entry *e = &a.v[cand[k].idx];
                                report_entry(r, e, gitcfg_runs(e->name, e->value));
                        }
                }
                for (size_t k = 0; k < nc; k++)
                        free(cand[k].key);
                free(cand);
                strvec_clear(&old);
        }
        gitcfg_free(&a);
        gitcfg_free(&b);
}

/* The repository whose work tree is wt, in both views. */
static void judge_worktree(struct rl *r, const char *wt)
{
        _cleanup_free_ char *ga = gitdir_of(&r->v, wt), *gb = gitdir_of(&r->before, wt);
        _cleanup_free_ char *dotgit = path_in(wt, ".git");
        if (ga || gb)
                judge_repo(r, ga, gb, wt, view_changed(&r->v, dotgit));
}

/* A repository's directory found by what is in it (a bare one, a submodule's in
 * .git/modules, a linked worktree's in .git/worktrees). */
static void judge_gitdir(struct rl *r, const char *gd)
{
        bool a = gitdir_like(&r->v, gd), b = gitdir_like(&r->before, gd);
        if (a || b)
                judge_repo(r, a ? gd : NULL, b ? gd : NULL, gd, false);
}

/* The repositories a changed path may belong to: the work tree above every ".git" on its
 * way, and the directory of a changed config, config.worktree or commondir. */
static void repos_of(struct rl *r, const char *path, struct strvec *wts, struct strvec *gds)
{
        for (const char *c = path;;) {
                const char *end = strchrnul(c, '/');
                if (end - c == 4 && !strncmp(c, ".git", 4)) {
                        char *wt = strndup(path, c > path ? (size_t)(c - path - 1) : 0);
                        bool have = false;
                        for (size_t k = 0; k < wts->n && !have; k++)
                                have = !strcmp(wts->v[k], wt);
                        if (have)
                                free(wt);
                        else
                                strvec_push(wts, wt);
                }
                if (!*end)
                        break;
                c = end + 1;
        }
        const char *b = base_name(path);
        if (strcmp(b, "config") && strcmp(b, "config.worktree") && strcmp(b, "commondir"))
                return;
        char *gd = dir_of(path);
        for (size_t k = 0; k < gds->n; k++)
                if (!strcmp(gds->v[k], gd)) {
                        free(gd);
                        return;
                }
        if (gitdir_like(&r->v, gd) || gitdir_like(&r->before, gd))
                strvec_push(gds, gd);
        else
                free(gd);
}

/* A hook: a file in a repository's hooks directory, or in the one core.hooksPath names. */
static void hooks(struct rl *r, const struct txbox_path *tp)
{
        const char *hookdir = NULL; /* the core.hooksPath directory it is in, when it is */
        bool in_git = false;        /* in a repository's own hooks directory */
        struct stat st;

        if (tp->change == TXBOX_DELETED || ends_with(tp->path, ".sample"))
                return;
        /* Names first (every changed path passes here): the layers only for the few. */
        for (const char *c = tp->path; !in_git;) {
                const char *end = strchrnul(c, '/');
                if (end - c == 5 && !strncmp(c, "hooks", 5)) {
                        char *gd = strndup(tp->path, c > tp->path ? (size_t)(c - tp->path - 1) : 0);
                        if (!r->hooks_parent || strcmp(r->hooks_parent, gd)) {
                                free(r->hooks_parent);
                                r->hooks_parent = gd;
                                r->hooks_parent_git = gitdir_like(&r->v, gd) || gitdir_like(&r->before, gd);
                        } else {
                                free(gd);
                        }
                        in_git = r->hooks_parent_git;
                }
                if (!*end)
                        break;
                c = end + 1;
        }
        for (size_t k = 0; k < r->hookdirs.n && !in_git && !hookdir; k++)
                if (path_is_within(tp->path, r->hookdirs.v[k]) && strcmp(tp->path, r->hookdirs.v[k]))
                        hookdir = r->hookdirs.v[k];
        if ((!in_git && !hookdir) || (view_lstat(&r->v, tp->path, &st, NULL) == 0 && S_ISDIR(st.st_mode)))
                return;
        _cleanup_free_ char *p = shown(tp->path), *hd = shown(hookdir);
        const char *verb = tp->change == TXBOX_ADDED ? "adds" : "changes";
        if (in_git)
                add(r, tp->path,
                    xasprintf("%s the git hook %s, which git runs at your next commit, checkout, merge or push in "
                              "that repository, outside the sandbox; %s",
                              verb, p, HOW_ALLOW));
        else
                add(r, tp->path,
                    xasprintf("%s %s in %s, the hooks directory core.hooksPath names: git runs it at your next "
                              "commit, checkout, merge or push, outside the sandbox; %s",
                              verb, p, hd, HOW_ALLOW));
}

/* ---- editors and agents ---- */

/* JSON with comments and trailing commas (VS Code's settings and tasks) as plain JSON. */
static json_t *jsonc_load(const char *text, size_t len)
{
        _cleanup_free_ char *out = xmalloc(len + 1);
        size_t n = 0, i = 0;
        bool str = false;

        if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3))
                i = 3;
        for (; i < len; i++) {
                char c = text[i];
                if (str) {
                        out[n++] = c;
                        if (c == '\\' && i + 1 < len)
                                out[n++] = text[++i];
                        else if (c == '"')
                                str = false;
                        continue;
                }
                if (c == '/' && i + 1 < len && text[i + 1] == '/') {
                        while (i < len && text[i] != '\n')
                                i++;
                        out[n++] = '\n';
                        continue;
                }
                if (c == '/' && i + 1 < len && text[i + 1] == '*') {
                        const char *e = memmem(text + i + 2, len - i - 2, "*/", 2);
                        if (!e)
                                return NULL;
                        i = (size_t)(e - text) + 1;
                        out[n++] = ' ';
                        continue;
                }
                if (c == ',') { /* dropped when only blanks and comments lead to } or ] */
                        size_t j = i + 1;
                        for (;;) {
                                while (j < len && strchr(" \t\r\n", text[j]))
                                        j++;
                                if (j + 1 < len && text[j] == '/' && text[j + 1] == '/') {
                                        while (j < len && text[j] != '\n')
                                                j++;
                                } else if (j + 1 < len && text[j] == '/' && text[j + 1] == '*') {
                                        const char *e = memmem(text + j + 2, len - j - 2, "*/", 2);
                                        if (!e)
                                                return NULL;
                                        j = (size_t)(e - text) + 2;
                                } else {
                                        break;
                                }
                        }
                        if (j < len && (text[j] == '}' || text[j] == ']'))
                                continue;
                }
                if (c == '"')
                        str = true;
                out[n++] = c;
        }
        json_error_t e;
        return json_loadb(out, n, 0, &e);
}

/* A setting whose value is a program, a path to one, its arguments or environment, or the
 * switch that lets tasks start on their own: a word of its name (after the first) ends
 * with one of these. */
static bool program_setting(const char *key)
{
        static const char *const tails[] = {"path", "executable", "command", "commands", "commandline", "cmd",
                                            "shell", "shellargs", "interpreter", "runtime", "binary", "server",
                                            "program", "launcher", "wrapper", "home", "env", "envvars", "envfile",
                                            "tsdk", "profile", "profiles"};
        if (!strcasecmp(key, "task.allowAutomaticTasks"))
                return true;
        const char *dot = strchr(key, '.');
        for (const char *c = dot ? dot + 1 : NULL; c && *c;) {
                const char *end = strchrnul(c, '.');
                size_t l = (size_t)(end - c);
                for (size_t k = 0; k < ARRAY_SIZE(tails); k++) {
                        size_t t = strlen(tails[k]);
                        if (l >= t && !strncasecmp(c + l - t, tails[k], t))
                                return true;
                }
                c = *end ? end + 1 : end;
        }
        return false;
}

/* "what\1json" for every setting that names a program, and every task that runs when the
 * folder opens; from a settings object, a tasks object ({"tasks": [...]}), or both (a
 * .code-workspace file's "settings" and "tasks"). */
static void vscode_items(json_t *settings, json_t *tasks, struct strvec *out)
{
        const char *key;
        json_t *val;
        if (json_is_object(settings))
                json_object_foreach(settings, key, val) {
                        if (key[0] == '[' && json_is_object(val)) { /* "[python]": {...} */
                                vscode_items(val, NULL, out);
                                continue;
                        }
                        if (!program_setting(key))
                                continue;
                        char *j = json_dumps(val, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
                        strvec_push(out, xasprintf("setting %s\1%s", key, j ? j : ""));
                        free(j);
                }
        json_t *list = json_is_object(tasks) ? json_object_get(tasks, "tasks") : NULL;
        size_t i;
        json_array_foreach(list, i, val) {
                json_t *ro = json_object_get(val, "runOptions");
                const char *on = json_string_value(json_object_get(ro, "runOn"));
                if (!on || strcmp(on, "folderOpen"))
                        continue;
                const char *label = json_string_value(json_object_get(val, "label"));
                char *j = json_dumps(val, JSON_COMPACT | JSON_SORT_KEYS);
                strvec_push(out, xasprintf("task %s\1%s", label ? label : "(no label)", j ? j : ""));
                free(j);
        }
}

/* -1: not JSON VS Code would read; else the items (vscode_items) of the file in view v. */
static int vscode_file(const struct view *v, const char *path, int kind, struct strvec *out)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int rr = view_read(v, path, JSON_MAX, &text, &len);
        if (rr == -ENOENT)
                return 0;
        json_t *j = rr < 0 ? NULL : jsonc_load(text, len);
        if (!j)
                return -1;
        if (kind == 0)
                vscode_items(j, NULL, out);
        else if (kind == 1)
                vscode_items(NULL, j, out);
        else
                vscode_items(json_object_get(j, "settings"), json_object_get(j, "tasks"), out);
        json_decref(j);
        return 0;
}

static void vscode(struct rl *r, const struct txbox_path *tp, int kind)
{
        struct strvec after = {0}, before = {0};
        _cleanup_free_ char *p = shown(tp->path);

        if (tp->change == TXBOX_DELETED)
                return;
        if (vscode_file(&r->v, tp->path, kind, &after) < 0) {
                add(r, tp->path,
                    xasprintf("%s cannot be read as JSON with comments, and VS Code may start tasks or programs "
                              "it names when the folder opens; %s",
                              p, HOW_ALLOW));
                goto out;
        }
        (void)vscode_file(&r->before, tp->path, kind, &before); /* unreadable before: all is new */
        for (size_t k = 0; k < after.n && r->added < r->budget; k++) {
                bool old = false;
                for (size_t j = 0; j < before.n && !old; j++)
                        old = !strcmp(after.v[k], before.v[j]);
                if (old)
                        continue;
                char *sep = strchr(after.v[k], '\1');
                *sep = '\0';
                _cleanup_free_ char *what = shown(after.v[k]), *val = shown(sep + 1);
                bool task = !strncmp(after.v[k], "task ", 5);
                add(r, tp->path,
                    xasprintf(task ? "adds the VS Code %s, which runs when the folder is opened (%s), outside the "
                                     "sandbox; %s"
                                   : "sets the VS Code %s = %s, a program (or its environment) that VS Code or an "
                                     "extension starts when the folder is opened, outside the sandbox; %s",
                              what, val, HOW_ALLOW));
        }
out:
        strvec_clear(&after);
        strvec_clear(&before);
}

/* Settings of coding agents that run commands on this machine at their next start (hooks,
 * status lines, key helpers, MCP servers let in without asking), and that hold the hooks
 * txbox itself is wired in with. */
static bool agent_settings(const char *path)
{
        static const char *const files[] = {".claude/settings.json", ".claude/settings.local.json",
                                            ".gemini/settings.json"};
        for (size_t k = 0; k < ARRAY_SIZE(files); k++)
                if (!strcmp(path, files[k]) || (ends_with(path, files[k]) && path[strlen(path) -
                                                                                  strlen(files[k]) - 1] == '/'))
                        return true;
        return false;
}

static void editors_agents(struct rl *r, const struct txbox_path *tp)
{
        const char *b = base_name(tp->path);
        _cleanup_free_ char *dir = dir_of(tp->path);
        const char *parent = base_name(dir);

        if (!strcmp(parent, ".vscode") && !strcmp(b, "settings.json"))
                vscode(r, tp, 0);
        else if (!strcmp(parent, ".vscode") && !strcmp(b, "tasks.json"))
                vscode(r, tp, 1);
        else if (ends_with(b, ".code-workspace"))
                vscode(r, tp, 2);
        else if (agent_settings(tp->path)) {
                _cleanup_free_ char *p = shown(tp->path);
                static const char *const verbs[] = {"adds", "changes", "deletes"};
                add(r, tp->path,
                    xasprintf("%s %s, the settings of a coding agent: the hooks, status line, key helper and "
                              "MCP servers it names run on this machine at the agent's next start, outside the "
                              "sandbox (and txbox's own hook is set there); %s",
                              (unsigned)tp->change < ARRAY_SIZE(verbs) ? verbs[tp->change] : "changes", p,
                              HOW_ALLOW));
        }
}

int runlater_check(int upper_fd, int live_fd, struct changeset *cs, const struct policy_ctx *ctx, int budget)
{
        struct rl r = {.v = {.upper_fd = upper_fd, .live_fd = live_fd, .cs = cs,
                             .workspace = ctx ? ctx->workspace : NULL},
                       .cs = cs, .budget = budget};
        struct strvec wts = {0}, gds = {0};

        if (upper_fd < 0 || live_fd < 0 || budget <= 0)
                return 0;
        r.before = view_before(&r.v);
        strvec_push(&wts, xstrdup("")); /* the workspace's own repository, whatever changed */
        size_t k = 0;
        for (; k < cs->npaths && wts.n + gds.n < MAX_REPOS; k++)
                repos_of(&r, cs->paths[k].path, &wts, &gds);
        if (k < cs->npaths) /* fail closed: what the rest configure is not known */
                add(&r, ".", xasprintf("changes the configuration of more than %d git repositories at once, "
                                       "more than txbox judges; %s", MAX_REPOS, HOW_ALLOW));
        for (k = 0; k < wts.n; k++)
                judge_worktree(&r, wts.v[k]);
        for (k = 0; k < gds.n; k++)
                judge_gitdir(&r, gds.v[k]);
        for (k = 0; k < cs->npaths && r.added < r.budget; k++) {
                hooks(&r, &cs->paths[k]);
                editors_agents(&r, &cs->paths[k]);
        }
        strvec_clear(&wts);
        strvec_clear(&gds);
        strvec_clear(&r.hookdirs);
        strvec_clear(&r.judged);
        free(r.hooks_parent);
        return r.added;
}
