/* txbox hook: the agents' own edit tools (Claude Code's Edit, Write, MultiEdit and
 * NotebookEdit, Codex's apply_patch, Gemini CLI's write_file and replace) write files
 * directly, not through a command.  Before one runs, its paths are judged by the policy as
 * the writes they are and by the effect rules on what the paths will hold (edit_layer), and
 * what they hold is captured; after it ran, the edit is recorded
 * as a committed transaction (txbox_edit_record, src/lib/txn/edits.c): in txbox log, taken
 * back by txbox undo, shown by txbox diff.
 *
 * Every field of the event is hostile input: the paths are resolved as the tool will
 * resolve them (relative to the event's cwd, every symlink followed), a path that then lies
 * outside the workspace is judged by the policy and never recorded, and the library opens
 * what it records beneath the workspace with no symlink on the way. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/beneath.h"
#include "base/cleanup.h"
#include "base/fileio.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/rmtree.h"
#include "faces/summary.h"
#include "hook.h"
#include "policy/effects.h"
#include "store/record.h"

#define EDIT_TARGETS_MAX 256 /* paths of one edit (txbox_edit_capture's limit) */
#define LINKS_MAX 40         /* as the kernel */

static const struct {
        enum hook_agent agent;
        const char *tool;
        const char *field; /* the path in tool_input; NULL: a patch in tool_input.command */
} edit_tools[] = {
        {AGENT_CLAUDE, "Edit", "file_path"},         {AGENT_CLAUDE, "Write", "file_path"},
        {AGENT_CLAUDE, "MultiEdit", "file_path"},    {AGENT_CLAUDE, "NotebookEdit", "notebook_path"},
        {AGENT_CODEX, "apply_patch", NULL},          {AGENT_GEMINI, "write_file", "file_path"},
        {AGENT_GEMINI, "replace", "file_path"},
};

bool hook_is_edit_tool(enum hook_agent agent, const char *tool)
{
        for (size_t i = 0; tool && i < ARRAY_SIZE(edit_tools); i++)
                if (edit_tools[i].agent == agent && !strcmp(edit_tools[i].tool, tool))
                        return true;
        return false;
}

static const char *path_field(enum hook_agent agent, const char *tool)
{
        for (size_t i = 0; i < ARRAY_SIZE(edit_tools); i++)
                if (edit_tools[i].agent == agent && !strcmp(edit_tools[i].tool, tool))
                        return edit_tools[i].field;
        return NULL;
}

struct target {
        char *given; /* as the event said it, for messages */
        char *abs;   /* where the tool will write: absolute, every symlink followed */
        char *rel;   /* abs relative to the workspace, or NULL outside it */
        bool del;    /* deleted (apply_patch), not written */
        bool exists; /* there before the edit */
};

struct targets {
        struct target *v;
        size_t n;
        char why[600]; /* when they could not be known */
};

static void targets_free(struct targets *t)
{
        for (size_t i = 0; i < t->n; i++) {
                free(t->v[i].given);
                free(t->v[i].abs);
                free(t->v[i].rel);
        }
        free(t->v);
        memset(t, 0, sizeof(*t));
}

/* "/a/./b//c/../d" -> "/a/b/d", lexically; abs is absolute. */
static char *normalize(const char *abs)
{
        char *out = xmalloc(strlen(abs) + 2);
        size_t o = 0;

        for (const char *p = abs; *p;) {
                const char *e = strchrnul(p, '/');
                size_t len = (size_t)(e - p);
                if (len == 2 && !strncmp(p, "..", 2)) {
                        while (o > 0 && out[o - 1] != '/')
                                o--;
                        if (o > 0)
                                o--;
                } else if (len && !(len == 1 && p[0] == '.')) {
                        out[o++] = '/';
                        memcpy(out + o, p, len);
                        o += len;
                }
                p = *e ? e + 1 : e;
        }
        if (!o)
                out[o++] = '/';
        out[o] = '\0';
        return out;
}

/* Where a write to the normalized absolute path p lands: its directory resolved (realpath,
 * or for a directory that does not exist yet its own parent's resolution), and a last
 * component that is a symlink followed, as open(O_CREAT) follows it.  NULL with errno set
 * (ELOOP: more than 40 links). */
static char *resolve(const char *p, int depth)
{
        if (depth > LINKS_MAX) {
                errno = ELOOP;
                return NULL;
        }
        if (!strcmp(p, "/"))
                return xstrdup("/");
        const char *slash = strrchr(p, '/');
        _cleanup_free_ char *dir = slash == p ? xstrdup("/") : strndup(p, (size_t)(slash - p));
        char buf[PATH_MAX];
        _cleanup_free_ char *rdir = NULL;

        if (!dir)
                abort();
        if (realpath(dir, buf))
                rdir = xstrdup(buf);
        else if (errno == ENOENT)
                rdir = resolve(dir, depth + 1); /* a directory the edit will make */
        if (!rdir)
                return NULL;
        char *joined = xasprintf("%s%s%s", rdir, strcmp(rdir, "/") ? "/" : "", slash + 1);
        struct stat st;
        if (lstat(joined, &st) < 0 || !S_ISLNK(st.st_mode))
                return joined;
        ssize_t n = readlink(joined, buf, sizeof(buf) - 1);
        if (n < 0) {
                free(joined);
                return NULL;
        }
        buf[n] = '\0';
        _cleanup_free_ char *next = buf[0] == '/' ? xstrdup(buf) : xasprintf("%s/%s", rdir, buf);
        _cleanup_free_ char *norm = normalize(next);
        free(joined);
        return resolve(norm, depth + 1);
}

static bool add_target(struct targets *t, const char *ws, const char *cwd, const char *given, size_t len, bool del)
{
        if (t->n >= EDIT_TARGETS_MAX) {
                snprintf(t->why, sizeof(t->why), "the edit names more than %d paths", EDIT_TARGETS_MAX);
                return false;
        }
        if (!len || len >= PATH_MAX || memchr(given, '\0', len)) {
                snprintf(t->why, sizeof(t->why), "a path of the edit is empty, too long or has a NUL");
                return false;
        }
        _cleanup_free_ char *g = strndup(given, len);
        if (!g)
                abort();
        _cleanup_free_ char *abs = g[0] == '/' ? xstrdup(g) : xasprintf("%s/%s", cwd, g);
        _cleanup_free_ char *norm = normalize(abs);
        char *real = resolve(norm, 0);
        if (!real) {
                _cleanup_free_ char *e = summary_escape(g, 200);
                snprintf(t->why, sizeof(t->why), "the path '%s' cannot be resolved: %s", e, strerror(errno));
                return false;
        }
        t->v = xrealloc(t->v, (t->n + 1) * sizeof(*t->v));
        struct target *x = &t->v[t->n++];
        struct stat st;
        *x = (struct target){.given = TAKE_PTR(g), .abs = real, .del = del, .exists = lstat(real, &st) == 0};
        size_t wl = strlen(ws);
        if (!strncmp(real, ws, wl) && real[wl] == '/' && real[wl + 1])
                x->rel = xstrdup(real + wl + 1);
        return true;
}

/* The paths of a patch in Codex's format: "*** Add File: P", "*** Update File: P",
 * "*** Delete File: P", and "*** Move to: P" after an update (its source is deleted). */
static bool patch_targets(struct targets *t, const char *ws, const char *cwd, const char *patch)
{
        static const struct {
                const char *head;
                bool del;
        } heads[] = {{"*** Add File: ", false}, {"*** Update File: ", false}, {"*** Delete File: ", true},
                     {"*** Move to: ", false}};
        for (const char *l = patch; *l;) {
                const char *e = strchrnul(l, '\n');
                for (size_t k = 0; k < ARRAY_SIZE(heads); k++) {
                        size_t hl = strlen(heads[k].head);
                        if ((size_t)(e - l) <= hl || strncmp(l, heads[k].head, hl))
                                continue;
                        const char *p = l + hl, *q = e;
                        while (q > p && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\r'))
                                q--;
                        while (p < q && (*p == ' ' || *p == '\t'))
                                p++;
                        if (k == 3 && t->n)
                                t->v[t->n - 1].del = true; /* moved away */
                        if (!add_target(t, ws, cwd, p, (size_t)(q - p), heads[k].del))
                                return false;
                }
                l = *e ? e + 1 : e;
        }
        return true;
}

/* The edit's paths from the event; false with t->why filled when they cannot be known. */
static bool edit_targets(enum hook_agent agent, const char *tool, json_t *ev, const char *ws, struct targets *t)
{
        json_t *input = json_object_get(ev, "tool_input");
        const char *cwdv = json_string_value(json_object_get(ev, "cwd"));
        const char *field = path_field(agent, tool);
        char here[PATH_MAX];

        memset(t, 0, sizeof(*t));
        /* Relative paths start where the agent says it is; one that cannot be resolved
         * cannot be judged from. */
        if (!cwdv)
                snprintf(here, sizeof(here), "%s", ws);
        else if (cwdv[0] != '/' || !realpath(cwdv, here)) {
                _cleanup_free_ char *e = summary_escape(cwdv, 200);
                snprintf(t->why, sizeof(t->why), "the event's cwd '%s' is not an existing absolute directory", e);
                return false;
        }
        if (field) {
                json_t *p = json_object_get(input, field);
                if (!json_is_string(p)) {
                        snprintf(t->why, sizeof(t->why), "the %s event has no tool_input.%s string", tool, field);
                        return false;
                }
                return add_target(t, ws, here, json_string_value(p), json_string_length(p), false);
        }
        json_t *patch = json_object_get(input, "command");
        if (!json_is_string(patch))
                patch = json_object_get(input, "input");
        if (!json_is_string(patch) || strlen(json_string_value(patch)) != json_string_length(patch)) {
                snprintf(t->why, sizeof(t->why), "the %s event has no tool_input.command patch string", tool);
                return false;
        }
        return patch_targets(t, ws, here, json_string_value(patch));
}

/* The script a shell would run to make this change: the policy's write rules judge it. */
static char *as_shell(const struct target *x)
{
        size_t n = strlen(x->abs);
        char *q = xmalloc(4 * n + 3), *w = q;
        *w++ = '\'';
        for (const char *s = x->abs; *s; s++) {
                if (*s == '\'') {
                        memcpy(w, "'\\''", 4);
                        w += 4;
                } else
                        *w++ = *s;
        }
        *w++ = '\'';
        *w = '\0';
        char *script = x->del ? xasprintf("rm -f -- %s", q) : xasprintf(": >%s", q);
        free(q);
        return script;
}

/* ---- what the edit will leave, for the effect rules ---- */

static int cmp_tpath(const void *a, const void *b)
{
        return strcmp(((const struct txbox_path *)a)->path, ((const struct txbox_path *)b)->path);
}

#define AFTER_MAX (64u << 20) /* bytes of a file read to apply an edit to (edits.c keeps as much) */

/* text with old replaced by new (the first time, or every time); old empty: new is the file
 * (an Edit that creates one).  Not found: unchanged (the tool then fails and writes nothing). */
static char *replaced(const char *text, size_t len, const char *old, const char *new, bool all, size_t *out_len)
{
        size_t ol = strlen(old), nl = strlen(new), cap = len + 1, n = 0;
        char *out;

        if (!ol) {
                *out_len = nl;
                return xstrdup(new);
        }
        out = xmalloc(cap);
        for (size_t i = 0; i < len;) {
                const char *hit = memmem(text + i, len - i, old, ol);
                size_t upto = hit ? (size_t)(hit - text) : len;
                size_t need = n + (upto - i) + (hit ? nl : 0) + 1;
                if (need > cap)
                        out = xrealloc(out, cap = need * 2);
                memcpy(out + n, text + i, upto - i);
                n += upto - i;
                if (!hit)
                        break;
                memcpy(out + n, new, nl);
                n += nl;
                i = upto + ol;
                if (!all) {
                        if (n + (len - i) + 1 > cap)
                                out = xrealloc(out, cap = n + (len - i) + 1);
                        memcpy(out + n, text + i, len - i);
                        n += len - i;
                        break;
                }
        }
        out[n] = '\0';
        *out_len = n;
        return out;
}

/* One replacement object ({old_string, new_string, replace_all | expected_replacements})
 * applied to *text; false when its fields are not strings. */
static bool apply_one(json_t *o, char **text, size_t *len)
{
        json_t *old = json_object_get(o, "old_string"), *new = json_object_get(o, "new_string");
        json_t *n = json_object_get(o, "expected_replacements");
        if (!json_is_string(old) || !json_is_string(new) ||
            strlen(json_string_value(old)) != json_string_length(old) ||
            strlen(json_string_value(new)) != json_string_length(new))
                return false;
        bool all = json_is_true(json_object_get(o, "replace_all")) ||
                   (json_is_integer(n) && json_integer_value(n) > 1);
        size_t nl;
        char *r = replaced(*text, *len, json_string_value(old), json_string_value(new), all, &nl);
        free(*text);
        *text = r;
        *len = nl;
        return true;
}

/* The lines of "*** Add File: " at line l of a patch, each without its '+'. */
static char *patch_added(const char *l, size_t *len)
{
        size_t cap = 256, n = 0;
        char *out = xmalloc(cap);
        for (l = strchrnul(l, '\n'); *l && l[1] == '+';) {
                const char *s = l + 2, *e = strchrnul(s, '\n');
                size_t k = (size_t)(e - s) + 1;
                if (n + k + 1 > cap)
                        out = xrealloc(out, cap = (n + k + 1) * 2);
                memcpy(out + n, s, k - 1);
                n += k - 1;
                out[n++] = '\n';
                l = e;
        }
        out[n] = '\0';
        *len = n;
        return out;
}

/* What target x will hold once the edit ran, when the event says: a Write's content, the
 * file as it is with an Edit's replacements made, a patch's new file.  NULL when it cannot
 * be known from the event (a patch's update of a file, a notebook cell, a file too big). */
static char *after_content(const char *tool, json_t *input, int wfd, const struct target *x, size_t *len)
{
        json_t *content = json_object_get(input, "content");
        if (!strcmp(tool, "Write") || !strcmp(tool, "write_file")) {
                if (!json_is_string(content) ||
                    strlen(json_string_value(content)) != json_string_length(content))
                        return NULL;
                *len = json_string_length(content);
                return xstrdup(json_string_value(content));
        }
        if (!strcmp(tool, "apply_patch")) {
                json_t *patch = json_object_get(input, "command");
                if (!json_is_string(patch))
                        patch = json_object_get(input, "input");
                const char *pt = json_string_value(patch), *head = "*** Add File: ";
                for (const char *l = pt; l && *l;) {
                        const char *e = strchrnul(l, '\n');
                        if (!strncmp(l, head, strlen(head))) {
                                _cleanup_free_ char *name =
                                        strndup(l + strlen(head), (size_t)(e - l) - strlen(head));
                                size_t nl = strlen(name);
                                while (nl && strchr(" \t\r", name[nl - 1]))
                                        name[--nl] = '\0';
                                if (!strcmp(name + strspn(name, " \t"), x->given))
                                        return patch_added(l, len);
                        }
                        l = *e ? e + 1 : e;
                }
                return NULL; /* an update: the hunks would have to be matched as Codex does */
        }
        if (strcmp(tool, "Edit") && strcmp(tool, "MultiEdit") && strcmp(tool, "replace"))
                return NULL;
        char *text = NULL;
        if (!x->exists) {
                text = xstrdup("");
                *len = 0;
        } else if (read_beneath(wfd, x->rel, AFTER_MAX, &text, len) < 0) {
                return NULL;
        }
        json_t *edits = json_object_get(input, "edits"), *one;
        size_t i;
        bool good = true;
        if (!strcmp(tool, "MultiEdit")) {
                good = json_is_array(edits);
                json_array_foreach(edits, i, one) good = good && apply_one(one, &text, len);
        } else {
                good = apply_one(input, &text, len);
        }
        if (!good) {
                free(text);
                return NULL;
        }
        return text;
}

/* A layer over the workspace holding what the edit's targets will hold, as a command's
 * upper layer would, made in a private directory under TMPDIR; a target whose content
 * cannot be known gets a single NUL byte, which no configuration, JSON or script parser
 * accepts: the effect rules that read it then refuse (and nothing reads an ordinary source
 * file).  Its descriptor, or -errno; *dir the directory to remove. */
static int edit_layer(const char *tool, json_t *ev, int wfd, const struct targets *t, char **dir, bool *unknown)
{
        const char *tmp = getenv("TMPDIR");
        char *d = xasprintf("%s/txbox-edit.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
        json_t *input = json_object_get(ev, "tool_input");
        int fd;

        if (!mkdtemp(d) || (fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                int e = -errno;
                free(d);
                return e;
        }
        *dir = d;
        for (size_t i = 0; i < t->n; i++) {
                const struct target *x = &t->v[i];
                unknown[i] = false;
                if (!x->rel || x->del)
                        continue;
                size_t len = 0;
                _cleanup_free_ char *text = after_content(tool, input, wfd, x, &len);
                if (!text) {
                        unknown[i] = true;
                        len = 1;
                }
                _cleanup_free_ char *parent = xstrdup(x->rel);
                char *slash = strrchr(parent, '/');
                const char *base = slash ? slash + 1 : x->rel;
                int r = 0;
                if (slash) {
                        *slash = '\0';
                        r = mkdir_p_at(fd, parent, 0700);
                }
                _cleanup_close_ int pfd =
                        r < 0 ? r : open_beneath(fd, slash ? parent : ".", O_RDONLY | O_DIRECTORY, 0);
                if (pfd < 0 || (r = write_file_atomic_at(pfd, base, text ? text : "", len, false)) < 0) {
                        close(fd);
                        return pfd < 0 ? pfd : r;
                }
        }
        return fd;
}

int hook_edit_judge(enum hook_agent agent, const char *tool, json_t *ev, const struct global_opts *g)
{
        char ws[PATH_MAX];
        const char *w = hook_workspace(g, agent);
        struct txbox_error err = {0};
        struct policy *p = NULL;
        struct policy_result res = {0};
        struct targets t;
        int r = 0;

        if (!realpath(w, ws))
                return hook_block("workspace '%s': %s", w, strerror(errno));
        if (!edit_targets(agent, tool, ev, ws, &t)) {
                r = hook_block("%s", t.why);
                goto out;
        }
        if (policy_load_for(ws, g->policy, &p, &err) < 0) {
                r = hook_block("%s", err.msg);
                goto out;
        }
        struct policy_ctx ctx = {.workspace = ws, .home = getenv("HOME"), .cwd = ws};
        /* The writes, as the redirections or rm they are. */
        for (size_t i = 0; i < t.n && res.decision == POLICY_ALLOW; i++) {
                _cleanup_free_ char *script = as_shell(&t.v[i]);
                if ((r = policy_check_shell(p, script, &ctx, &res)) < 0) {
                        r = hook_block("policy check failed: %s", strerror(-r));
                        goto out;
                }
                if (res.decision != POLICY_ALLOW) {
                        _cleanup_free_ char *e = summary_escape(t.v[i].given, 300);
                        snprintf(res.command, sizeof(res.command), "%s %s%s", tool, t.v[i].del ? "deleting " : "", e);
                }
        }
        /* What it does to the workspace, as the effect rules judge a command's changes: a
         * tool's edit is committed the moment it is made, so they decide now. */
        if (res.decision == POLICY_ALLOW) {
                struct changeset cs = {0};
                for (size_t i = 0; i < t.n; i++) {
                        if (!t.v[i].rel)
                                continue;
                        cs.paths = xrealloc(cs.paths, (cs.npaths + 1) * sizeof(*cs.paths));
                        cs.paths[cs.npaths++] = (struct txbox_path){
                                xstrdup(t.v[i].rel), t.v[i].del      ? TXBOX_DELETED
                                                     : t.v[i].exists ? TXBOX_MODIFIED
                                                                     : TXBOX_ADDED};
                }
                if (cs.npaths > 1)
                        qsort(cs.paths, cs.npaths, sizeof(*cs.paths), cmp_tpath);
                _cleanup_close_ int wfd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                /* What the paths will hold, as a command's upper layer would: the rules that
                 * read content (what git or an editor will run, emptied files, sizes) read it. */
                _cleanup_free_ char *layer = NULL;
                _cleanup_free_ bool *unknown = xcalloc(t.n + 1, sizeof(*unknown));
                _cleanup_close_ int up = wfd < 0 ? -EBADF : edit_layer(tool, ev, wfd, &t, &layer, unknown);
                if (up < 0) {
                        r = hook_block("cannot lay out what the edit writes, to judge it: %s", strerror(-up));
                        if (layer)
                                (void)rm_rf_at(AT_FDCWD, layer);
                        changeset_free(&cs);
                        goto out;
                }
                if (cs.npaths && effects_check(p, up, wfd, &cs, &ctx, &err) > 0) {
                        const struct txbox_violation *v = &cs.violations[0];
                        bool guessed = false;
                        for (size_t i = 0; i < t.n && !guessed; i++)
                                guessed = unknown[i] && t.v[i].rel && !strcmp(t.v[i].rel, v->path);
                        res.decision = POLICY_DENY;
                        snprintf(res.rule, sizeof(res.rule), "%s", v->rule);
                        snprintf(res.reason, sizeof(res.reason),
                                 "%s (the effect rules judge an agent's own edits as they judge commands%s)",
                                 v->detail,
                                 guessed ? "; what this edit writes there cannot be known before it runs, so "
                                           "it was judged as unreadable: make the change with txbox run"
                                         : "");
                        _cleanup_free_ char *e = summary_escape(v->path, 300);
                        snprintf(res.command, sizeof(res.command), "%s %s", tool, e);
                }
                (void)rm_rf_at(AT_FDCWD, layer);
                changeset_free(&cs);
        }
        if (res.decision != POLICY_ALLOW)
                hook_answer_policy(agent, &res);
        else if (agent == AGENT_GEMINI)
                printf("{}\n");
out:
        policy_free(p);
        targets_free(&t);
        return r;
}

/* ---- capture and record ---- */

static const char *const agent_names[] = {"claude-code", "codex", "gemini"};

/* The key pre and post events share: the session and the tool call (Gemini CLI names no
 * call: its tool and paths, the same in both events). */
static char *edit_key(json_t *ev, const char *tool)
{
        const char *sid = json_string_value(json_object_get(ev, "session_id"));
        const char *call = json_string_value(json_object_get(ev, "tool_use_id"));
        if (call)
                return xasprintf("%s\x1f%s", sid ? sid : "", call);
        char *in = json_dumps(json_object_get(ev, "tool_input"), JSON_COMPACT | JSON_SORT_KEYS);
        char *k = xasprintf("%s\x1f%s\x1f%s", sid ? sid : "", tool, in ? in : "");
        free(in);
        return k;
}

/* "Edit of src/a.c", "apply_patch of a.c, b.c and 3 more": escaped, bounded; outside: only
 * the paths outside the workspace (as resolved), else all. */
static char *what_of(const char *tool, const struct targets *t, bool outside)
{
        char *buf = NULL;
        size_t len = 0, shown = 0, n = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                abort();
        fprintf(f, "%s of ", tool);
        for (size_t i = 0; i < t->n; i++) {
                if (outside && t->v[i].rel)
                        continue;
                if (n++ >= 3)
                        continue;
                _cleanup_free_ char *e = summary_escape(t->v[i].rel ? t->v[i].rel : t->v[i].abs, 200);
                fprintf(f, "%s%s", shown++ ? ", " : "", e);
        }
        if (n > shown)
                fprintf(f, " and %zu more", n - shown);
        fclose(f);
        return buf;
}

/* The agent's answer (answer: what the judgement printed, "" when nothing) with msg for the
 * user added as its systemMessage (a field all three agents show the user). */
static void system_message_to(const char *answer, const char *msg)
{
        json_t *j = answer && *answer ? json_loads(answer, 0, NULL) : NULL;
        if (!json_is_object(j)) {
                json_decref(j);
                j = json_object();
        }
        if (j && json_object_set_new(j, "systemMessage", jv_text(msg)) < 0) {
                json_decref(j);
                j = NULL;
        }
        char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
        if (s)
                printf("%s\n", s);
        free(s);
        json_decref(j);
}

static void quiet(enum hook_agent agent)
{
        if (agent == AGENT_GEMINI)
                printf("{}\n");
}

void hook_edit_act(enum hook_agent agent, enum hook_phase phase, const char *tool, json_t *ev,
                   const struct global_opts *g, const char *answer)
{
        char ws[PATH_MAX];
        struct targets t = {0};
        struct txbox_ws *w = NULL;
        struct txbox_error err = {0};
        _cleanup_free_ char *key = edit_key(ev, tool);
        /* Claude Code's ask: the user may let it run, so it is captured too. */
        bool allowed = !*answer || !strcmp(answer, "{}\n") || strstr(answer, "\"permissionDecision\":\"ask\"");

        if (phase == HOOK_PRE && !allowed) {
                fputs(answer, stdout); /* refused: nothing to capture */
                return;
        }
        /* (after an ask, the answer is printed as it is: the capture adds nothing to say) */
        if (!realpath(hook_workspace(g, agent), ws) || !edit_targets(agent, tool, ev, ws, &t)) {
                if (phase == HOOK_PRE)
                        fputs(answer, stdout);
                else
                        quiet(agent);
                targets_free(&t);
                return;
        }
        size_t inside = 0;
        for (size_t i = 0; i < t.n; i++)
                inside += t.v[i].rel != NULL;
        _cleanup_free_ char *what = what_of(tool, &t, false);
        /* Outside the workspace: the policy judged it, and there is no transaction to make;
         * once made, the user is told it has no undo. */
        _cleanup_free_ char *out_what = inside < t.n ? what_of(tool, &t, true) : NULL;
        _cleanup_free_ char *ws_shown = summary_escape(ws, 300);
        _cleanup_free_ char *out_note =
                out_what ? xasprintf("txbox: the %s is outside the workspace %s: not recorded (no undo)", out_what,
                                     ws_shown)
                         : NULL;
        if (!inside && phase == HOOK_POST && out_note) {
                system_message_to(NULL, out_note);
                targets_free(&t);
                return;
        }
        if (!inside || txbox_ws_open(ws, g->state, TXBOX_OPEN_DEFER_LOG, &w, &err) < 0) {
                if (inside && phase != HOOK_FAILED) {
                        _cleanup_free_ char *m = xasprintf("txbox: the %s %s not recorded (no undo): %s", what,
                                                           phase == HOOK_PRE ? "will be" : "was", err.msg);
                        system_message_to(phase == HOOK_PRE ? answer : NULL, m);
                } else if (phase == HOOK_PRE)
                        fputs(answer, stdout);
                else
                        quiet(agent);
                targets_free(&t);
                return;
        }
        if (phase == HOOK_PRE) {
                char **argv = xcalloc(t.n + 3, sizeof(char *)), **paths = xcalloc(t.n + 1, sizeof(char *));
                size_t np = 0;
                argv[0] = (char *)agent_names[agent];
                argv[1] = (char *)tool;
                for (size_t i = 0; i < t.n; i++)
                        if (t.v[i].rel)
                                argv[2 + np] = paths[np] = t.v[i].rel, np++;
                if (txbox_edit_capture(w, key, argv, paths, &err) < 0) {
                        _cleanup_free_ char *m =
                                xasprintf("txbox: the %s will not be recorded (no undo): %s", what, err.msg);
                        system_message_to(answer, m);
                } else
                        fputs(answer, stdout);
                free(argv);
                free(paths);
        } else if (phase == HOOK_FAILED) {
                txbox_edit_drop(w, key);
        } else {
                struct txbox_record rec = {0};
                int r = txbox_edit_record(w, key, &rec, &err);
                if (r < 0) {
                        _cleanup_free_ char *m = xasprintf("txbox: the %s was not recorded (no undo): %s%s%s", what,
                                                           err.msg, out_note ? "; " : "",
                                                           out_note ? out_note + strlen("txbox: ") : "");
                        system_message_to(NULL, m);
                } else if (out_note)
                        system_message_to(NULL, out_note);
                else
                        quiet(agent);
                txbox_record_clear(&rec);
        }
        txbox_ws_close(w);
        targets_free(&t);
}
