/* Commands that act on names another command lists: find -exec and -delete, xargs and
 * parallel, $(ls) and `while read f`.  What matters is whether the names are some files of
 * a directory or all of them: `find . -name '*.o' -delete` cleans a build, `find . -type f
 * -delete` and `ls | xargs rm` destroy the project.  A listing is "all" when nothing in it
 * selects (a name pattern, an age, a size, a grep between it and its consumer), and then
 * its names stand for DIR/STAR, which the rules read as everything in DIR; otherwise for
 * DIR/UNK, some path beneath DIR.  find's own root is one of its names unless a test
 * leaves it out. */
#define _GNU_SOURCE
#include "pol.h"

#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/macros.h"
#include "base/mem.h"
#include "base/strv.h"

/* ---- find's expression ---- */

struct findm {
        const char *roots[16];
        size_t nroots;
        size_t expr;         /* index of the first word of the expression */
        bool selective;      /* every alternative has a test that picks some files */
        bool root_in;        /* a root itself is among the names found */
};

static bool all_pattern(const char *p)
{
        return !strcmp(p, "*") || !strcmp(p, "**") || !strcmp(p, "./*") || !strcmp(p, "*/*") ||
               !strcmp(p, "?*") || !strcmp(p, ".*") || !strcmp(p, "*.*") || !strcmp(p, "") ||
               !strcmp(p, ".*\\|*") || !strcmp(p, ".*");
}

/* Tests that select: a name, a time, a size, an owner ... (-type f and -mindepth do not:
 * they keep every file). */
static bool selecting(char **a, size_t n, size_t k, bool *takes)
{
        static const char *const name_tests[] = {"-name",      "-iname",      "-path",  "-ipath",
                                                 "-wholename", "-iwholename", "-regex", "-iregex",
                                                 "-lname",     "-ilname",     NULL};
        static const char *const valued[] = {"-newer",    "-anewer", "-cnewer", "-newermt", "-newerct",
                                             "-newerat",  "-mtime",  "-mmin",   "-atime",   "-amin",
                                             "-ctime",    "-cmin",   "-used",   "-size",    "-inum",
                                             "-samefile", "-links",  "-user",   "-group",   "-uid",
                                             "-gid",      "-perm",   "-fstype", "-context", NULL};
        static const char *const plain[] = {"-empty", "-nouser", "-nogroup", NULL};
        const char *t = a[k];
        *takes = false;
        if (uw_in(t, name_tests)) {
                *takes = true;
                return k + 1 < n && !all_pattern(a[k + 1]);
        }
        if (uw_in(t, valued)) {
                *takes = true;
                return true;
        }
        if (!strcmp(t, "-type") || !strcmp(t, "-xtype")) {
                *takes = true;
                return k + 1 < n && strcmp(a[k + 1], "f") && strcmp(a[k + 1], "d") && !strchr(a[k + 1], ',');
        }
        return uw_in(t, plain);
}

static void find_model(char **a, size_t n, struct findm *m)
{
        static const char *const with_arg[] = {"-maxdepth", "-mindepth", "-regextype", "-fprint", "-fprint0",
                                               "-fls",      "-printf",   "-D",         "-O",      NULL};
        memset(m, 0, sizeof(*m));
        size_t k = 1;
        while (k < n && (!strcmp(a[k], "-H") || !strcmp(a[k], "-L") || !strcmp(a[k], "-P") ||
                         ((!strcmp(a[k], "-D") || !strncmp(a[k], "-O", 2)) && k + 1 < n)))
                k += !strcmp(a[k], "-D") ? 2 : 1;
        while (k < n && a[k][0] != '-' && a[k][0] != '(' && a[k][0] != '!' && a[k][0] != ')' &&
               strcmp(a[k], ",")) {
                if (m->nroots < ARRAY_SIZE(m->roots))
                        m->roots[m->nroots++] = a[k];
                k++;
        }
        if (!m->nroots)
                m->roots[m->nroots++] = ".";
        m->expr = k;
        bool alt_sel = false, all_sel = true, negate = false, files_only = false, names = false,
             name_hit = false;
        long mindepth = 0;
        for (; k < n; k++) {
                const char *t = a[k];
                if (!strcmp(t, "-o") || !strcmp(t, "-or") || !strcmp(t, ",")) {
                        all_sel &= alt_sel;
                        alt_sel = false;
                        continue;
                }
                if (!strcmp(t, "!") || !strcmp(t, "-not")) {
                        negate = !negate;
                        continue;
                }
                if (!strcmp(t, "-exec") || !strcmp(t, "-execdir") || !strcmp(t, "-ok") ||
                    !strcmp(t, "-okdir")) {
                        while (k + 1 < n && strcmp(a[k + 1], ";") && strcmp(a[k + 1], "+"))
                                k++;
                        k++;
                        continue;
                }
                if (!strcmp(t, "-mindepth") && k + 1 < n)
                        mindepth = strtol(a[k + 1], NULL, 10);
                if (!strcmp(t, "-type") && k + 1 < n && !strcmp(a[k + 1], "f") && !negate)
                        files_only = true;
                bool takes;
                bool sel = selecting(a, n, k, &takes);
                if (sel && (!strcmp(t, "-name") || !strcmp(t, "-iname")) && k + 1 < n && !negate) {
                        names = true;
                        for (size_t r = 0; r < m->nroots; r++)
                                name_hit |= !fnmatch(a[k + 1], base_name(m->roots[r]), 0);
                }
                /* a negated test selects all the others: as good as none */
                alt_sel |= sel && !negate;
                negate = false;
                if (takes || uw_in(t, with_arg))
                        k++;
        }
        all_sel &= alt_sel;
        m->selective = all_sel;
        /* The root is found unless a test leaves it out: a name it does not have, -type f,
         * -mindepth 1.  Other selecting tests (an age, a size, an inode) are taken to pick
         * files beneath it: counting the root would make every find . -mtime +30 -exec rm
         * a deletion of the workspace. */
        m->root_in = mindepth < 1 && !files_only && (names ? name_hit : !all_sel);
}

/* find ROOTS EXPR: -exec/-execdir/-ok/-okdir run a command on each found path, -delete
 * deletes them; -fprint FILE and friends write FILE. */
void h_find(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        if (uw_help(a, 1, 2))
                return;
        struct findm m;
        find_model(a, n, &m);
        for (size_t r = 0; r < m.nroots; r++) {
                a = sc->cmds[idx].argv.v;
                char *root = xstrdup(m.roots[r]);
                /* what {} stands for: some or all of the names beneath, and the root itself */
                char *each = m.selective ? xasprintf("%s/" UNK_S, root) : xasprintf("%s/*", root);
                const char *names[2] = {each, m.root_in ? root : NULL};
                for (size_t j = m.expr; j < n; j++) {
                        a = sc->cmds[idx].argv.v;
                        if (!strcmp(a[j], "-exec") || !strcmp(a[j], "-execdir") || !strcmp(a[j], "-ok") ||
                            !strcmp(a[j], "-okdir")) {
                                size_t from = j + 1;
                                while (j + 1 < n && strcmp(a[j + 1], ";") && strcmp(a[j + 1], "+"))
                                        j++;
                                size_t to = j + 1;
                                for (size_t v = 0; v < 2 && names[v]; v++) {
                                        struct strvec cmd = {0};
                                        bool cut = false;
                                        a = sc->cmds[idx].argv.v;
                                        for (size_t q = from; q < to && !cut; q++) {
                                                char *w = uw_replace(a[q], "{}", names[v]);
                                                cut = !w;
                                                if (w)
                                                        strvec_push(&cmd, w);
                                        }
                                        if (cut)
                                                uw_finding(sc, idx, "@limit-exceeded",
                                                           "find -exec replaces into too long a command");
                                        else if (cmd.n)
                                                uw_run(sc, idx, cmd.v, cmd.n, depth);
                                        strv_free(cmd.v);
                                }
                                j++;
                        } else if (!strcmp(a[j], "-delete")) {
                                char *const rf[] = {"rm", "-r", "-f", root, NULL};
                                char *const f[] = {"rm", "-f", each, NULL};
                                uw_run(sc, idx, m.selective ? f : rf, m.selective ? 3 : 4, depth);
                        } else if ((!strcmp(a[j], "-fprint") || !strcmp(a[j], "-fprint0") ||
                                    !strcmp(a[j], "-fls") || !strcmp(a[j], "-fprintf")) &&
                                   j + 1 < n) {
                                char *const tee[] = {"tee", a[j + 1], NULL};
                                uw_run(sc, idx, tee, 2, depth);
                                j++;
                        }
                }
                free(each);
                free(root);
        }
}

/* ---- listings ---- */

/* Does command c print names of files?  root: the directory they are in (relative to c's
 * cwd), *all when it prints every one of them. */
static bool lister(const struct scmd *c, const char **root, bool *all)
{
        char **a = c->argv.v;
        size_t n = c->argv.n;
        const char *p = base_name(a[0]);
        *root = ".";
        *all = true;
        if (!strcmp(p, "ls") || !strcmp(p, "dir") || !strcmp(p, "exa") || !strcmp(p, "eza")) {
                for (size_t k = 1; k < n; k++) {
                        if (a[k][0] == '-')
                                continue;
                        *root = a[k];
                        const char *slash = strrchr(a[k], '/');
                        const char *last = slash ? slash + 1 : a[k];
                        if (strpbrk(last, "*?[")) {
                                *all = all_pattern(last);
                                if (slash) {
                                        static char buf[4096];
                                        snprintf(buf, sizeof(buf), "%.*s", (int)(slash - a[k]), a[k]);
                                        *root = buf;
                                } else
                                        *root = ".";
                        }
                        if (has_unk(a[k]))
                                *all = false;
                        break;
                }
                return true;
        }
        if (!strcmp(p, "find")) {
                struct findm m;
                find_model(a, n, &m);
                for (size_t k = m.expr; k < n; k++)
                        if (!strcmp(a[k], "-exec") || !strcmp(a[k], "-delete") || !strcmp(a[k], "-execdir"))
                                return false; /* it acts itself; what it prints is not the point */
                *root = m.roots[0];
                *all = !m.selective;
                return true;
        }
        if (!strcmp(p, "fd") || !strcmp(p, "fdfind")) {
                size_t k = 1;
                while (k < n && a[k][0] == '-')
                        k++;
                *all = k >= n || all_pattern(a[k]) || !strcmp(a[k], ".");
                if (k + 1 < n)
                        *root = a[k + 1];
                return true;
        }
        if (!strcmp(p, "git") && n > 1) {
                size_t k = 1;
                while (k + 1 < n && a[k][0] == '-')
                        k += !strcmp(a[k], "-C") || !strcmp(a[k], "-c") ? 2 : 1;
                if (k >= n || (strcmp(a[k], "ls-files") && strcmp(a[k], "ls-tree")))
                        return false;
                for (size_t j = k + 1; j < n; j++)
                        if (a[j][0] != '-' && strcmp(a[j], ".") && strcmp(a[j], ":/") &&
                            strcmp(a[j], "HEAD") && strcmp(a[j], "--"))
                                *all = false;
                return true;
        }
        if ((!strcmp(p, "rg") || !strcmp(p, "ag")) && uw_in("--files", (const char *const *)a)) {
                for (size_t k = 1; k < n; k++)
                        if (!strcmp(a[k], "-g") || !strcmp(a[k], "--glob") || !strcmp(a[k], "-t") ||
                            !strcmp(a[k], "--type"))
                                *all = false;
                return true;
        }
        return false;
}

/* A stage between a listing and its consumer that keeps only some names. */
static bool filters(const struct scmd *c)
{
        char **a = c->argv.v;
        size_t n = c->argv.n;
        const char *p = base_name(a[0]);
        static const char *const greps[] = {"grep", "egrep", "fgrep",    "rg", "ag",
                                            "ack",  "zgrep", "pcregrep", NULL};
        static const char *const cut[] = {"head", "tail", "comm", "join", "look", "shuf", NULL};
        if (uw_in(p, greps)) {
                for (size_t k = 1; k < n; k++)
                        if ((a[k][0] == '-' && a[k][1] != '-' && strchr(a[k], 'v')) ||
                            !strcmp(a[k], "--invert-match"))
                                return false; /* keeps all but the matches */
                return true;
        }
        if (uw_in(p, cut))
                return true;
        if (!strcmp(p, "sed"))
                return uw_has_short(a, 1, n, 'n') || uw_in("--quiet", (const char *const *)a);
        if (!strcmp(p, "awk") || !strcmp(p, "gawk") || !strcmp(p, "mawk")) {
                for (size_t k = 1; k < n; k++)
                        if (a[k][0] != '-')
                                return a[k][0] != '{'; /* a pattern before the action selects */
        }
        return false;
}

/* The names the pipeline stages before stage `stage` of pipe `pipe` feed on (commands
 * [from, to) of the scan): "DIR/STAR" for all of a directory, "DIR/UNK" for some; NULL
 * when the feed is not a listing. */
static char *listing_of(struct scan *sc, size_t from, size_t to, int pipe, int stage)
{
        const struct scmd *prod = NULL;
        size_t prod_k = 0;
        bool filtered = false;
        for (size_t k = to; k-- > from;) {
                const struct scmd *c = &sc->cmds[k];
                if (c->pipe_id != pipe || c->stage >= stage || !c->argv.n || c->argv.v[0][0] == '@')
                        continue;
                if (c->stage > 0 && filters(c))
                        filtered = true;
                if (c->stage == 0) {
                        prod = c; /* the earliest added: a wrapper's child comes after it */
                        prod_k = k;
                }
        }
        if (!prod)
                return NULL;
        const char *root = NULL;
        bool all = false;
        /* the producer, or the command a wrapper of it runs */
        for (size_t k = prod_k; k < to && !root; k++) {
                const struct scmd *c = &sc->cmds[k];
                if (c->pipe_id == pipe && c->stage == 0 && c->argv.n && lister(c, &root, &all)) {
                        prod_k = k;
                        break;
                }
                root = NULL;
        }
        if (!root)
                return NULL;
        char *abs = uw_path(sc, prod_k, root);
        if (!abs)
                return xstrdup(UNK_S);
        char *r = all && !filtered ? xasprintf("%s/*", abs) : xasprintf("%s/" UNK_S, abs);
        free(abs);
        return r;
}

char *stdin_listing(struct scan *sc, size_t idx)
{
        const struct scmd *me = &sc->cmds[idx];
        if (me->stage <= 0 || me->pipe_id < 0)
                return NULL;
        return listing_of(sc, 0, idx, me->pipe_id, me->stage);
}

/* mktemp's output: a fresh name in the temporary directory (or where its template or -p
 * puts it). */
static char *mktemp_value(struct scan *sc, size_t k)
{
        char **a = sc->cmds[k].argv.v;
        size_t n = sc->cmds[k].argv.n;
        const char *dir = NULL, *tmpl = NULL;
        bool t = false;
        for (size_t j = 1; j < n; j++) {
                if (has_unk(a[j]))
                        return NULL;
                if ((!strcmp(a[j], "-p") || !strcmp(a[j], "--tmpdir")) && j + 1 < n)
                        dir = a[++j];
                else if (!strncmp(a[j], "--tmpdir=", 9))
                        dir = a[j] + 9;
                else if (!strcmp(a[j], "--tmpdir") || !strcmp(a[j], "-t"))
                        t = true;
                else if (!strncmp(a[j], "-p", 2) && a[j][2])
                        dir = a[j] + 2;
                else if (a[j][0] != '-')
                        tmpl = a[j];
        }
        if (tmpl && tmpl[0] == '/')
                dir = NULL;
        else if (!dir && (t || !tmpl))
                dir = "/tmp";
        char *name = tmpl ? xasprintf("%.*s" UNK_S, (int)(strcspn(tmpl, "X")), tmpl) : xstrdup("tmp." UNK_S);
        char *rel = dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
        free(name);
        char *abs = uw_path(sc, k, rel);
        free(rel);
        return abs;
}

char *subst_value(struct scan *sc, size_t n0)
{
        const struct scmd *c = &sc->cmds[n0];
        if (!c->argv.n || c->argv.v[0][0] == '@')
                return NULL;
        const char *p = base_name(c->argv.v[0]);
        if (!strcmp(p, "mktemp") && sc->n == n0 + 1)
                return mktemp_value(sc, n0);
        if (!strcmp(p, "pwd") && sc->n == n0 + 1) {
                const char *cwd = c->cwd ? c->cwd : sc->ctx->cwd;
                return cwd && !has_unk(cwd) ? xstrdup(cwd) : NULL;
        }
        /* the last pipeline of the substitution, when it is a listing */
        int pipe = sc->cmds[sc->n - 1].pipe_id, last = 0;
        for (size_t k = n0; k < sc->n; k++)
                if (sc->cmds[k].pipe_id == pipe && sc->cmds[k].stage > last)
                        last = sc->cmds[k].stage;
        if (pipe < 0)
                return NULL;
        return listing_of(sc, n0, sc->n, pipe, last + 1);
}

/* ---- xargs and parallel ---- */

/* What xargs reads: a listing's names (all or some of a directory), else unknown. */
static char *xargs_item(struct scan *sc, size_t idx)
{
        const struct scmd *me = &sc->cmds[idx];
        /* An argv checked at exec time: what xargs runs is checked at its own exec, with
         * the real arguments; refusing here would only refuse the harmless cases. */
        if (me->pipe_id < 0 && me->offset < 0)
                return xstrdup("./" UNK_S);
        char *l = stdin_listing(sc, idx);
        return l ? l : xstrdup(UNK_S);
}

/* xargs CMD ARGS: runs CMD with ARGS plus words read from stdin. */
void h_xargs(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        /* --replace[=R], --eof[=E] and --max-lines[=N] take a value only after '=' */
        static const char *const lwa[] = {"arg-file", "delimiter", "max-args", "max-procs", "max-chars",
                                          "process-slot-var", NULL};
        static const struct opts o = {"IaEdLnPs", lwa};
        size_t k = uw_skip_opts(a, n, 1, &o);
        if (uw_help(a, 1, k))
                return;
        const char *repl = NULL;
        bool none = false; /* -a /dev/null: no items at all */
        for (size_t j = 1; j < k; j++)
                if (!strcmp(a[j], "-I") && j + 1 < k)
                        repl = a[j + 1];
                else if ((!strncmp(a[j], "-I", 2) || !strncmp(a[j], "-i", 2)) && a[j][2])
                        repl = a[j] + 2;
                else if (!strncmp(a[j], "--replace=", 10))
                        repl = a[j] + 10;
                else if (!strcmp(a[j], "-i") || !strcmp(a[j], "--replace"))
                        repl = "{}";
                else if ((!strcmp(a[j], "-a") || !strcmp(a[j], "--arg-file")) && j + 1 < k)
                        none = !strcmp(a[j + 1], "/dev/null");
        char *item = xargs_item(sc, idx);
        a = sc->cmds[idx].argv.v;
        struct strvec v = {0};
        if (k >= n)
                strvec_push(&v, xstrdup("echo"));
        for (size_t j = k; j < n; j++) {
                char *w = repl && *repl && strstr(a[j], repl) ? uw_replace(a[j], repl, none ? "" : item)
                                                              : xstrdup(a[j]);
                if (!w) {
                        strv_free(v.v);
                        free(item);
                        return uw_finding(sc, idx, "@limit-exceeded",
                                          "xargs replaces into too long a command");
                }
                strvec_push(&v, w);
        }
        if (!repl && !none)
                strvec_push(&v, xstrdup(item));
        free(item);
        size_t c = uw_child(sc, idx, v.v, v.n);
        strv_free(v.v);
        if (c == (size_t)-1)
                return;
        if (none) { /* nothing read: a shell it runs reads the terminal */
                sc->cmds[c].stage = 0;
                sc->cmds[c].pipe_id = sc->cmds[idx].pipe_id >= 0 ? sc->next_pipe++ : -1;
                free(sc->cmds[c].stdin_text);
                sc->cmds[c].stdin_text = NULL;
        }
        scan_push_argv(sc, c, depth + 1);
}

/* parallel CMD ::: ARGS (its arguments are known) or, like xargs, names from stdin.  The
 * command is a shell string, with {} replaced by each argument (or the argument added). */
void h_parallel(struct scan *sc, size_t idx, int depth)
{
        char **a = sc->cmds[idx].argv.v;
        size_t n = sc->cmds[idx].argv.n;
        static const char *const lwa[] = {"jobs",      "arg-file",  "colsep",
                                          "delimiter", "joblog",    "results",
                                          "tmpdir",    "sshlogin",  "workdir",
                                          "timeout",   "retries",   "delay",
                                          "memfree",   "load",      "halt",
                                          "basefile",  "return",    "transfer",
                                          "env",       "max-args",  "max-replace-args",
                                          "max-lines", "max-chars", "tag-string",
                                          "tagstring", "termseq",   NULL};
        static const struct opts o = {"jaCdIELnNPsSWX", lwa};
        size_t k = uw_skip_opts(a, n, 1, &o);
        if (uw_help(a, 1, k))
                return;
        size_t sep = k;
        while (sep < n && strncmp(a[sep], ":::", 3))
                sep++;
        struct strvec vals = {0};
        bool unknown = sep >= n;
        for (size_t j = sep; j < n; j++) {
                if (!strcmp(a[j], "::::") || !strcmp(a[j], "::::+"))
                        unknown = true;
                else if (strncmp(a[j], ":::", 3))
                        strvec_push(&vals, xstrdup(a[j]));
        }
        if (unknown || vals.n > 16 || !vals.n) {
                strv_free(vals.v);
                vals = (struct strvec){0};
                strvec_push(&vals, unknown ? xargs_item(sc, idx) : xstrdup(UNK_S));
        }
        a = sc->cmds[idx].argv.v;
        char **cmdv = xcalloc(sep - k + 1, sizeof(char *));
        for (size_t j = k; j < sep; j++)
                cmdv[j - k] = a[j];
        char *cmd = sep > k ? render_argv(cmdv, SIZE_MAX) : xstrdup("echo");
        free(cmdv);
        static const char *const holes[] = {"{}", "{.}", "{/}", "{//}", "{/.}", "{1}", "{2}", NULL};
        for (size_t j = 0; j < vals.n; j++) {
                char *s = xstrdup(cmd);
                bool hole = false;
                for (const char *const *h = holes; *h && s; h++)
                        if (strstr(s, *h)) {
                                char *r = uw_replace(s, *h, vals.v[j]);
                                free(s);
                                s = r;
                                hole = true;
                        }
                if (!s) {
                        uw_finding(sc, idx, "@limit-exceeded", "parallel replaces into too long a command");
                        break;
                }
                if (!hole) {
                        char *r = xasprintf("%s %s", s, vals.v[j]);
                        free(s);
                        s = r;
                }
                if (uw_all_unk(s))
                        uw_unknown(sc, idx, "parallel runs a command that cannot be known");
                else
                        uw_text(sc, idx, s, depth);
                free(s);
        }
        free(cmd);
        strv_free(vals.v);
}
