/* git's configuration read without running git (gitconfig.h).  The parser follows git's
 * own (config.c: get_next_char, parse_value, get_value, get_base_var) step by step, with
 * git's locale-independent ASCII classes, so that a file reads here as git reads it: what
 * git would refuse is an error here too, never a different reading. */
#define _GNU_SOURCE
#include "policy/gitconfig.h"

#include <string.h>
#include <strings.h>

#include "base/cleanup.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/str.h"
#include "base/strv.h"

/* ---- the syntax ---- */

struct src {
        const char *p, *end;
        unsigned line;
        bool eof;
};

struct buf {
        char *s;
        size_t len, cap;
};

static void buf_add(struct buf *b, char c)
{
        if (b->len + 2 > b->cap) {
                b->cap = b->cap ? 2 * b->cap : 64;
                b->s = xrealloc(b->s, b->cap);
        }
        b->s[b->len++] = c;
        b->s[b->len] = '\0';
}

static void buf_setlen(struct buf *b, size_t len)
{
        b->len = len;
        if (b->s)
                b->s[len] = '\0';
}

/* git's sane_ctype: ASCII only, and space is tab, newline, carriage return and ' '. */
static bool g_space(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool g_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool g_keychar(int c) { return g_alpha(c) || (c >= '0' && c <= '9') || c == '-'; }
static int g_lower(int c) { return c >= 'A' && c <= 'Z' ? c + 'a' - 'A' : c; }

/* One character; CRLF reads as LF; past the end a LF, over and over (git's EOF). */
static int next_char(struct src *s)
{
        if (s->p >= s->end) {
                s->eof = true;
                return '\n';
        }
        int c = (unsigned char)*s->p++;
        if (c == '\r' && s->p < s->end && *s->p == '\n') {
                s->p++;
                c = '\n';
        }
        if (c == '\n')
                s->line++;
        return c;
}

/* A value after '=': NULL on an error git refuses (an unknown escape, an open quote). */
static const char *parse_value(struct src *s, struct buf *v)
{
        bool quote = false, comment = false;
        size_t trim = 0;

        buf_setlen(v, 0);
        buf_add(v, 'x'); /* make sure v->s exists, then empty it */
        buf_setlen(v, 0);
        for (;;) {
                int c = next_char(s);
                if (c == '\n') {
                        if (quote)
                                return NULL;
                        if (trim)
                                buf_setlen(v, trim);
                        return v->s;
                }
                if (comment)
                        continue;
                if (g_space(c) && !quote) {
                        if (!trim)
                                trim = v->len;
                        if (v->len)
                                buf_add(v, (char)c);
                        continue;
                }
                if (!quote && (c == ';' || c == '#')) {
                        comment = true;
                        continue;
                }
                trim = 0;
                if (c == '\\') {
                        c = next_char(s);
                        switch (c) {
                        case '\n': continue; /* a continued line */
                        case 't': c = '\t'; break;
                        case 'b': c = '\b'; break;
                        case 'n': c = '\n'; break;
                        case '\\': case '"': break;
                        default: return NULL;
                        }
                        buf_add(v, (char)c);
                        continue;
                }
                if (c == '"') {
                        quote = !quote;
                        continue;
                }
                buf_add(v, (char)c);
        }
}

/* "[base "extension"]" after the space: the subsection, case-sensitive, '\' escaping any
 * character but a newline. */
static int extended_base(struct src *s, struct buf *name, int c)
{
        do {
                if (c == '\n')
                        return -1;
                c = next_char(s);
        } while (g_space(c));
        if (c != '"')
                return -1;
        buf_add(name, '.');
        for (;;) {
                c = next_char(s);
                if (c == '\n')
                        return -1;
                if (c == '"')
                        break;
                if (c == '\\' && (c = next_char(s)) == '\n')
                        return -1;
                buf_add(name, (char)c);
        }
        return next_char(s) == ']' ? 0 : -1;
}

/* A section header after '[': "[core]", "[remote \"origin\"]", the old "[branch.main]". */
static int base_var(struct src *s, struct buf *name)
{
        for (;;) {
                int c = next_char(s);
                if (s->eof)
                        return -1;
                if (c == ']')
                        return 0;
                if (g_space(c))
                        return extended_base(s, name, c);
                if (!g_keychar(c) && c != '.')
                        return -1;
                buf_add(name, (char)g_lower(c));
        }
}

int gitcfg_parse(const char *text, size_t len, gitcfg_fn fn, void *data, unsigned *line)
{
        struct src s = {.p = text, .end = text + len, .line = 1};
        struct buf name = {0}, value = {0};
        size_t base = 0;
        bool comment = false;
        int r = -EINVAL;
        unsigned at = 1; /* the line the entry or header being read starts on */

        /* A NUL ends git's value early (it keeps C strings): the text would read two ways. */
        const char *nul = memchr(text, '\0', len);
        if (nul) {
                for (const char *p = text; p < nul; p++)
                        at += *p == '\n';
                goto out;
        }
        static const char bom[] = "\xef\xbb\xbf";
        size_t b = 0;
        while (b < 3 && b < len && text[b] == bom[b])
                b++;
        if (b == 3)
                s.p += 3;
        else if (b) /* git does not tolerate part of one */
                goto out;
        buf_add(&name, 'x');
        buf_setlen(&name, 0);
        for (;;) {
                int c = next_char(&s);
                if (c == '\n') {
                        if (s.eof) {
                                r = 0;
                                goto out;
                        }
                        comment = false;
                        continue;
                }
                if (comment || g_space(c))
                        continue;
                if (c == '#' || c == ';') {
                        comment = true;
                        continue;
                }
                at = s.line;
                if (c == '[') {
                        buf_setlen(&name, 0);
                        if (base_var(&s, &name) < 0 || name.len < 1)
                                goto out;
                        buf_add(&name, '.');
                        base = name.len;
                        continue;
                }
                if (!g_alpha(c))
                        goto out;
                buf_setlen(&name, base);
                buf_add(&name, (char)g_lower(c));
                for (;;) {
                        c = next_char(&s);
                        if (s.eof || !g_keychar(c))
                                break;
                        buf_add(&name, (char)g_lower(c));
                }
                while (c == ' ' || c == '\t')
                        c = next_char(&s);
                const char *v = NULL;
                if (c != '\n') {
                        if (c != '=' || !(v = parse_value(&s, &value)))
                                goto out;
                }
                if ((r = fn(name.s, v, at, data)) != 0)
                        goto out_keep;
                r = -EINVAL;
        }
out:
        if (r == -EINVAL && line)
                *line = at;
out_keep:
        free(name.s);
        free(value.s);
        return r;
}

/* ---- files and includes ---- */

struct loader {
        struct gitcfg *c;
        const struct view *v;
        int depth;
        const char *name; /* the file being read, as git names it (for relative includes) */
        const char *file; /* where it was found (stored in c->files) */
};

static void opaque(struct gitcfg *c, char *why)
{
        if (!c->opaque)
                c->opaque = why;
        else
                free(why);
}

static void load(struct loader *L, const char *name);

static void include(struct loader *L, const char *value)
{
        struct gitcfg *c = L->c;
        const char *ws = L->v->workspace;

        if (!value) {
                opaque(c, xasprintf("%s: an include without a path (git refuses it)", L->file));
                return;
        }
        if (value[0] == '~' || !strncmp(value, "%(prefix)/", 10) || !value[0]) {
                strvec_push(&c->outside, xstrdup(value)); /* a home or install directory */
                return;
        }
        _cleanup_free_ char *joined = NULL;
        if (value[0] == '/') {
                if (!ws || !path_is_within(value, ws)) {
                        strvec_push(&c->outside, xstrdup(value));
                        return;
                }
                joined = xstrdup(value + strlen(ws) + (value[strlen(ws)] == '/'));
        } else {
                /* From the including file's directory as git names it: the kernel takes any
                 * ".." from where the names before it lead (view_resolve does the same). */
                const char *slash = strrchr(L->name, '/');
                joined = slash ? xasprintf("%.*s/%s", (int)(slash - L->name), L->name, value) : xstrdup(value);
        }
        if (L->depth + 1 > GITCFG_MAX_DEPTH) {
                opaque(c, xasprintf("%s: includes nested deeper than git's limit of %d (a cycle?)", L->file,
                                    GITCFG_MAX_DEPTH));
                return;
        }
        struct loader sub = *L;
        sub.depth++;
        load(&sub, joined);
}

static bool is_include(const char *name)
{
        if (!strcmp(name, "include.path"))
                return true;
        size_t l = strlen(name);
        return !strncmp(name, "includeif.", 10) && l > 15 && !strcmp(name + l - 5, ".path");
}

static int on_entry(const char *name, const char *value, unsigned line, void *data)
{
        struct loader *L = data;
        struct gitcfg *c = L->c;

        if (c->n >= GITCFG_MAX_ENTRIES) {
                opaque(c, xasprintf("more than %d entries", GITCFG_MAX_ENTRIES));
                return 1;
        }
        if (c->n == c->cap) {
                c->cap = c->cap ? 2 * c->cap : 32;
                c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
        }
        c->v[c->n++] = (struct gitcfg_entry){
                .name = xstrdup(name), .value = xstrdup_or_null(value), .file = L->file, .line = line};
        if (is_include(name))
                include(L, value);
        return c->opaque && c->n >= GITCFG_MAX_ENTRIES ? 1 : 0;
}

static void load(struct loader *L, const char *name)
{
        struct gitcfg *c = L->c;
        char *where = NULL, *text = NULL;
        size_t len;
        unsigned line = 0;

        if (c->files.n >= GITCFG_MAX_FILES) {
                opaque(c, xasprintf("more than %d files included", GITCFG_MAX_FILES));
                return;
        }
        int r = view_resolve(L->v, name, &where, &c->files);
        if (r < 0) {
                opaque(c, xasprintf("%s: %s", name, r == -ELOOP ? "too many symlinks" : "path too long"));
                free(where);
                return;
        }
        if (r == 0) { /* leads outside the workspace: a file no transaction wrote */
                strvec_push(&c->outside, where);
                return;
        }
        strvec_push(&c->files, where); /* owns it; entries point at it */
        r = view_read(L->v, where, GITCFG_MAX_FILE, &text, &len);
        if (r == -ENOENT)
                return; /* git skips an include that does not exist */
        if (r < 0) {
                opaque(c, xasprintf("%s: %s", where[0] ? where : ".",
                                    r == -EFBIG ? "larger than 1 MiB" : "not a readable regular file"));
                return;
        }
        struct loader sub = *L;
        sub.name = name;
        sub.file = where;
        r = gitcfg_parse(text, len, on_entry, &sub, &line);
        if (r == -EINVAL)
                opaque(c, xasprintf("%s line %u: not valid git configuration (git refuses the file)", where, line));
        free(text);
}

void gitcfg_load(struct gitcfg *c, const struct view *v, const char *rel)
{
        struct loader L = {.c = c, .v = v, .depth = 0, .name = rel, .file = rel};
        load(&L, rel);
}

void gitcfg_free(struct gitcfg *c)
{
        for (size_t k = 0; k < c->n; k++) {
                free(c->v[k].name);
                free(c->v[k].value);
        }
        free(c->v);
        strvec_clear(&c->files);
        strvec_clear(&c->outside);
        free(c->opaque);
        *c = (struct gitcfg){0};
}

const char *gitcfg_last(const struct gitcfg *c, const char *name)
{
        for (size_t k = c->n; k-- > 0;)
                if (!strcmp(c->v[k].name, name))
                        return c->v[k].value;
        return NULL;
}

/* ---- what makes git run a program ---- */

/* git's boolean spelling (true/yes/on/false/no/off, an integer, or a key alone). */
static bool gitcfg_is_bool(const char *v)
{
        static const char *const words[] = {"true", "yes", "on", "false", "no", "off", ""};
        if (!v)
                return true;
        for (size_t k = 0; k < ARRAY_SIZE(words); k++)
                if (!strcasecmp(v, words[k]))
                        return true;
        char *end;
        errno = 0;
        (void)strtol(v, &end, 0);
        return !errno && end != v && (!*end || ((*end == 'k' || *end == 'm' || *end == 'g' || *end == 'K' ||
                                                  *end == 'M' || *end == 'G') && !end[1]));
}

enum { ANY = 0, NOTBOOL, BANG, EXT, SUBEXT, ABS, NOTNEVER, NOTEMPTY, NOTDEVNULL };
enum { NOSUB = 0, SUB, EITHER };

struct runs {
        const char *sec;
        int sub;
        const char *keys; /* '|'-separated; "*" any */
        int cond;
        const char *when;
};

/* From git-config(1), every key whose value is a program, a shell command, a place git takes
 * programs or hooks from, or a switch that lets one run (git-lfs's own keys included). */
static const struct runs table[] = {
        {"core", NOSUB, "fsmonitor", NOTBOOL, "as a file-system monitor at every git status, diff, add and commit"},
        {"core", NOSUB, "hookspath", NOTDEVNULL, "as the directory of hooks run at every commit, checkout, merge and "
                                                 "push"},
        {"core", NOSUB, "pager", ANY, "as the pager of git log, diff, show and every other git command that pages"},
        {"core", NOSUB, "editor", ANY, "as the editor of git commit, rebase -i and tag -a"},
        {"core", NOSUB, "sshcommand", ANY, "at every fetch and push over ssh"},
        {"core", NOSUB, "askpass", ANY, "whenever git asks for a password"},
        {"core", NOSUB, "gitproxy", ANY, "at every fetch over git://"},
        {"core", NOSUB, "alternaterefscommand", ANY, "at fetches and pushes with alternates"},
        {"core", NOSUB, "worktree", ANY, "as the directory git checks out to and changes"},
        {"sequence", NOSUB, "editor", ANY, "as the editor of git rebase -i"},
        {"pager", NOSUB, "*", NOTBOOL, "as the pager of that git command"},
        {"alias", NOSUB, "*", ANY, "when you type that git alias (a ! alias is a shell command; any other can start "
                                   "programs through its options)"},
        {"alias", SUB, "command", ANY, "when you type that git alias"},
        {"filter", SUB, "clean|smudge|process", ANY, "on files of that attribute at git add, checkout and status"},
        {"diff", SUB, "textconv|command", ANY, "at git diff, log -p and show"},
        {"diff", NOSUB, "external", ANY, "at every git diff"},
        {"merge", SUB, "driver", ANY, "at git merge, rebase, cherry-pick and stash pop"},
        {"mergetool", SUB, "cmd|path", ANY, "at git mergetool"},
        {"difftool", SUB, "cmd|path", ANY, "at git difftool"},
        {"credential", EITHER, "helper", NOTEMPTY, "at every fetch and push that needs a password, and is handed it"},
        {"gpg", EITHER, "program", ANY, "at every signed commit or tag and every signature check"},
        {"gpg", SUB, "defaultkeycommand", ANY, "at every signed commit or tag"},
        {"include", NOSUB, "path", ANY, "as more configuration, read by every git command"},
        {"includeif", SUB, "path", ANY, "as more configuration, read by every git command"},
        {"remote", SUB, "uploadpack|receivepack", ANY, "at fetch and push (on this machine, for a remote that is a "
                                                       "path)"},
        {"remote", SUB, "vcs", ANY, "as a remote helper at fetch and push"},
        {"remote", SUB, "url|pushurl", EXT, "as a transport command at fetch and push"},
        {"url", SUB, "insteadof|pushinsteadof", SUBEXT, "as a transport command at fetch and push"},
        {"protocol", EITHER, "allow", NOTNEVER, "by letting git use transports that run commands (ext::)"},
        {"submodule", SUB, "update", BANG, "at git submodule update"},
        {"uploadpack", NOSUB, "packobjectshook", ANY, "when this repository is fetched from"},
        {"hook", SUB, "command|event", ANY, "as a hook at the git event it names"},
        {"init", NOSUB, "templatedir", ANY, "by copying hooks into every repository git init and clone make"},
        {"tar", SUB, "command", ANY, "at git archive"},
        {"trailer", SUB, "command|cmd", ANY, "at git commit --trailer and interpret-trailers"},
        {"interactive", NOSUB, "difffilter", ANY, "at git add -p"},
        {"imap", NOSUB, "tunnel", ANY, "at git imap-send"},
        {"instaweb", NOSUB, "httpd|browser", ANY, "at git instaweb"},
        {"web", NOSUB, "browser", ANY, "at git help --web and instaweb"},
        {"browser", SUB, "cmd|path", ANY, "at git help --web and instaweb"},
        {"help", NOSUB, "browser", ANY, "at git help --web"},
        {"man", NOSUB, "viewer", ANY, "at git help"},
        {"man", SUB, "cmd|path", ANY, "at git help"},
        {"guitool", SUB, "cmd", ANY, "from git gui"},
        {"sendemail", EITHER, "sendmailcmd|tocmd|cccmd|headercmd", ANY, "at git send-email"},
        {"sendemail", EITHER, "smtpserver", ABS, "at git send-email"},
        {"gc", NOSUB, "recentobjectshook", ANY, "at git gc, which git starts on its own"},
        {"lfs", SUB, "path|clean|smudge", ANY, "at git lfs transfers, add and checkout"},
};

static bool key_in(const char *key, const char *keys)
{
        if (!strcmp(keys, "*"))
                return true;
        size_t l = strlen(key);
        for (const char *k = keys; *k;) {
                const char *end = strchrnul(k, '|');
                if ((size_t)(end - k) == l && !strncmp(k, key, l))
                        return true;
                k = *end ? end + 1 : end;
        }
        return false;
}

const char *gitcfg_runs(const char *name, const char *value)
{
        const char *dot = strchr(name, '.'), *last = strrchr(name, '.');
        if (!dot)
                return NULL;
        size_t sl = (size_t)(dot - name);
        bool has_sub = last != dot;
        const char *key = last + 1, *sub = dot + 1;
        size_t subl = has_sub ? (size_t)(last - sub) : 0;

        for (size_t k = 0; k < ARRAY_SIZE(table); k++) {
                const struct runs *t = &table[k];
                if (strlen(t->sec) != sl || strncmp(t->sec, name, sl) || !key_in(key, t->keys))
                        continue;
                if ((t->sub == NOSUB && has_sub) || (t->sub == SUB && !has_sub))
                        continue;
                switch (t->cond) {
                case NOTBOOL:
                        if (gitcfg_is_bool(value))
                                continue;
                        break;
                case BANG:
                        if (!value || value[0] != '!')
                                continue;
                        break;
                case EXT:
                        if (!value || strncasecmp(value, "ext::", 5))
                                continue;
                        break;
                case SUBEXT:
                        if (subl < 5 || strncasecmp(sub, "ext::", 5))
                                continue;
                        break;
                case ABS:
                        if (!value || value[0] != '/')
                                continue;
                        break;
                case NOTNEVER:
                        if (value && !strcasecmp(value, "never"))
                                continue;
                        break;
                case NOTEMPTY: /* an empty helper resets the list: nothing runs */
                        if (value && !value[0])
                                continue;
                        break;
                case NOTDEVNULL: /* core.hooksPath=/dev/null: the usual way to turn hooks off */
                        if (value && !strcmp(value, "/dev/null"))
                                continue;
                        break;
                default:
                        break;
                }
                return t->when;
        }
        return NULL;
}
