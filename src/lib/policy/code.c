/* Interpreter one-liners and SQL: find the calls that delete, write, execute or reach the
 * network, and turn each into the shell command it amounts to (shutil.rmtree(p) is
 * rm -r -f p), so that one set of rules judges both.  A small tokenizer (identifiers,
 * string literals, punctuation) is enough: one-liners are short, and a call whose
 * argument is not a literal is reported as unknown rather than guessed. */
#define _GNU_SOURCE
#include "pol.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/macros.h"
#include "base/mem.h"

#define MAX_TOKENS 20000

enum tk { T_ID, T_STR, T_PUNCT };

struct tok {
        enum tk k;
        char q;  /* quote of a string */
        char *s; /* identifier, string contents or punctuation */
};

struct toks {
        struct tok *v;
        size_t n, cap;
        bool overflow;
};

static void tok_push(struct toks *t, enum tk k, char q, const char *s, size_t n)
{
        if (t->n >= MAX_TOKENS) {
                t->overflow = true;
                return;
        }
        if (t->n == t->cap) {
                t->cap = t->cap ? t->cap * 2 : 64;
                t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
        }
        char *c = strndup(s, n);
        if (!c)
                abort();
        t->v[t->n++] = (struct tok){k, q, c};
}

static bool id_char(int c) { return isalnum(c) || c == '_' || c == '$' || c == '.' || c == ':'; }

/* A string literal starting at s[i] (quote q); escapes \\ \' \" \n decoded. */
static size_t read_str(const char *s, size_t n, size_t i, struct toks *t, bool triple)
{
        char q = s[i];
        size_t k = i + (triple ? 3 : 1);
        char *buf = xmalloc(n - i + 1);
        size_t b = 0;
        while (k < n) {
                if (triple ? (k + 2 < n && s[k] == q && s[k + 1] == q && s[k + 2] == q) : s[k] == q)
                        break;
                if (s[k] == '\\' && k + 1 < n) {
                        char e = s[k + 1];
                        buf[b++] = e == 'n' ? '\n' : e == 't' ? '\t' : e;
                        k += 2;
                        continue;
                }
                buf[b++] = s[k++];
        }
        tok_push(t, T_STR, q, buf, b);
        free(buf);
        return k + (triple ? 3 : 1);
}

static void tokenize(const char *s, struct toks *t)
{
        size_t n = strlen(s), i = 0;
        while (i < n && !t->overflow) {
                unsigned char c = (unsigned char)s[i];
                if (c == '"' || c == '\'' || c == '`') {
                        bool triple = i + 2 < n && s[i + 1] == (char)c && s[i + 2] == (char)c;
                        i = read_str(s, n, i, t, triple);
                } else if (id_char(c) || c == '-') {
                        size_t j = i;
                        while (j < n && (id_char((unsigned char)s[j]) || (s[j] == '-' && s[j + 1] == '>')))
                                j += s[j] == '-' ? 2 : 1;
                        if (j == i)
                                j++;
                        tok_push(t, T_ID, 0, s + i, j - i);
                        i = j;
                } else if (isspace(c))
                        i++;
                else {
                        tok_push(t, T_PUNCT, 0, s + i, 1);
                        i++;
                }
        }
}

static void toks_free(struct toks *t)
{
        for (size_t k = 0; k < t->n; k++)
                free(t->v[k].s);
        free(t->v);
}

enum kind { K_SH, K_RMTREE, K_RM, K_OPEN, K_WRITE, K_READ, K_NET, K_DUP, K_EVAL };

struct api {
        const char *name;  /* the last component of the called name */
        enum kind kind;
        const char *langs; /* space-separated languages, NULL for all */
        const char *qual;  /* required in the full name (e.g. "subprocess"), or NULL */
};

static const struct api apis[] = {
        {"system", K_SH, NULL, NULL},
        {"popen", K_SH, NULL, NULL},
        {"execute", K_SH, "lua", "os"},
        {"pcntl_exec", K_SH, "php", NULL},
        {"getoutput", K_SH, "python", NULL},
        {"getstatusoutput", K_SH, "python", NULL},
        {"check_output", K_SH, "python", NULL},
        {"check_call", K_SH, "python", NULL},
        {"call", K_SH, "python", "subprocess"},
        {"run", K_SH, "python", "subprocess"},
        {"Popen", K_SH, "python", NULL},
        {"execv", K_SH, "python", NULL},
        {"execvp", K_SH, "python", NULL},
        {"execve", K_SH, "python", NULL},
        {"execl", K_SH, "python", NULL},
        {"execlp", K_SH, "python", NULL},
        {"spawnv", K_SH, "python", NULL},
        {"spawnvp", K_SH, "python", NULL},
        {"spawn", K_DUP, "python", "pty"},
        {"execSync", K_SH, "js", NULL},
        {"exec", K_SH, "js perl ruby php", NULL},
        {"exec", K_EVAL, "python", NULL},
        {"eval", K_EVAL, "python js ruby", NULL},
        {"execFile", K_SH, "js", NULL},
        {"execFileSync", K_SH, "js", NULL},
        {"spawn", K_SH, "js ruby", NULL},
        {"spawnSync", K_SH, "js", NULL},
        {"shell_exec", K_SH, "php", NULL},
        {"passthru", K_SH, "php", NULL},
        {"proc_open", K_SH, "php", NULL},
        {"capture2", K_SH, "ruby", NULL},
        {"capture2e", K_SH, "ruby", NULL},
        {"capture3", K_SH, "ruby", NULL},
        {"popen3", K_SH, "ruby", NULL},
        {"rmtree", K_RMTREE, NULL, NULL},
        {"rm_rf", K_RMTREE, NULL, NULL},
        {"rm_r", K_RMTREE, NULL, NULL},
        {"remove_tree", K_RMTREE, NULL, NULL},
        {"rmSync", K_RMTREE, "js", NULL},
        {"rmdirSync", K_RMTREE, "js", NULL},
        {"rm", K_RMTREE, "js ruby", NULL},
        {"remove", K_RM, "python", "os"},
        {"remove", K_RM, "ruby", "File"},
        {"unlink", K_RM, NULL, NULL},
        {"unlinkSync", K_RM, "js", NULL},
        {"rmdir", K_RM, NULL, NULL},
        {"delete", K_RM, "ruby", "File"},
        {"open", K_OPEN, "python perl ruby lua julia", NULL},
        {"writeFileSync", K_WRITE, "js", NULL},
        {"appendFileSync", K_WRITE, "js", NULL},
        {"writeFile", K_WRITE, "js", NULL},
        {"write", K_WRITE, "ruby", "File"},
        {"file_put_contents", K_WRITE, "php", NULL},
        {"readFileSync", K_READ, "js", NULL},
        {"read", K_READ, "ruby", "File"},
        {"file_get_contents", K_READ, "php", NULL},
        {"copyfile", K_READ, "python", NULL},
        {"copy", K_READ, "python", "shutil"},
        {"socket", K_NET, NULL, NULL},
        {"create_connection", K_NET, NULL, NULL},
        {"urlopen", K_NET, NULL, NULL},
        {"urlretrieve", K_NET, NULL, NULL},
        {"HTTPConnection", K_NET, NULL, NULL},
        {"HTTPSConnection", K_NET, NULL, NULL},
        {"get", K_NET, "python", "requests"},
        {"post", K_NET, "python", "requests"},
        {"put", K_NET, "python", "requests"},
        {"fetch", K_NET, "js", NULL},
        {"connect", K_NET, "js", NULL},
        {"createConnection", K_NET, "js", NULL},
        {"request", K_NET, "js", "http"},
        {"get", K_NET, "js", "http"},
        {"TCPSocket", K_NET, NULL, NULL},
        {"INET", K_NET, "perl", NULL},
        {"getstore", K_NET, "perl", NULL},
        {"getprint", K_NET, "perl", NULL},
        {"HTTP", K_NET, "perl ruby", NULL},
        {"fsockopen", K_NET, "php", NULL},
        {"curl_exec", K_NET, "php", NULL},
        {"dup2", K_DUP, NULL, NULL},
};

static bool lang_ok(const struct api *a, const char *lang)
{
        if (!a->langs)
                return true;
        size_t l = strlen(lang);
        for (const char *p = a->langs; (p = strstr(p, lang)); p += l)
                if ((p == a->langs || p[-1] == ' ') && (!p[l] || p[l] == ' '))
                        return true;
        return false;
}

static const char *last_part(const char *id)
{
        const char *r = id;
        for (const char *p = id; *p; p++)
                if (*p == '.' || *p == ':' || (*p == '>' && p > id && p[-1] == '-'))
                        r = p + 1;
        return r;
}

static const struct api *find_api(const char *id, const char *lang)
{
        const char *last = last_part(id);
        for (size_t k = 0; k < ARRAY_SIZE(apis); k++)
                if (!strcmp(last, apis[k].name) && lang_ok(&apis[k], lang) &&
                    (!apis[k].qual || strstr(id, apis[k].qual)))
                        return &apis[k];
        return NULL;
}

/* The string arguments of the call at tokens[i] (the name): up to max, and whether they
 * came as a list; the first non-literal argument ends the collection (*unknown). */
struct call_args {
        const char *s[64];
        size_t n;
        bool list, unknown, any;
        bool more; /* more literals than s holds: the call cannot be judged whole */
};

static void call_args(const struct toks *t, size_t i, struct call_args *ca)
{
        memset(ca, 0, sizeof(*ca));
        size_t k = i + 1, end = t->n;
        int depth = 0;
        if (k < end && t->v[k].k == T_PUNCT && t->v[k].s[0] == '(')
                k++, depth = 1;
        else if (!(k < end && t->v[k].k == T_STR))
                return;
        for (; k < end; k++) {
                const struct tok *x = &t->v[k];
                if (x->k == T_PUNCT && strchr("([{", x->s[0])) {
                        ca->list |= x->s[0] == '[';
                        depth++;
                        continue;
                }
                if (x->k == T_PUNCT && strchr(")]}", x->s[0])) {
                        if (--depth <= 0)
                                break;
                        continue;
                }
                if (x->k == T_PUNCT && (x->s[0] == ';' || x->s[0] == '+') && depth <= 0)
                        break;
                if (x->k == T_STR && ca->n == ARRAY_SIZE(ca->s)) {
                        ca->more = true;
                        break;
                }
                if (x->k == T_STR) {
                        ca->s[ca->n++] = x->s;
                        ca->any = true;
                } else if (x->k == T_ID && !ca->n && strcmp(x->s, "shell") && strcmp(x->s, "True")) {
                        ca->unknown = true;
                        ca->any = true;
                        if (!depth)
                                break;
                }
                if (!depth)
                        break;
        }
}

struct code_state {
        struct scan *sc;
        size_t parent;
        int depth;
        const char *lang;
        bool net, dup, shell_i;
        char *listed; /* names some call lists (glob('*'), listdir('.') ...): "PATTERN", or NULL */
};

/* Calls that list names: a literal glob pattern, or a directory whose entries they return.
 * A deletion whose argument is a variable then acts on those names (os.remove(f) for each
 * f of glob.glob('*')): the one-liner's loop is not followed, its listing is. */
static const char *const globbers[] = {"glob", "iglob", "rglob", "Glob", "sync", NULL};
static const char *const listers[] = {"listdir", "scandir", "walk", "readdirSync", "readdir", "entries",
                                      "children", "opendir", "iterdir", "each_child", NULL};

static char *listing_of(const struct toks *t)
{
        for (size_t i = 0; i < t->n; i++) {
                const struct tok *x = &t->v[i];
                if (x->k != T_ID)
                        continue;
                const char *last = last_part(x->s);
                bool g = false, l = false;
                for (const char *const *p = globbers; *p; p++)
                        g |= !strcmp(last, *p);
                for (const char *const *p = listers; *p; p++)
                        l |= !strcmp(last, *p);
                /* Dir["*"] / Dir.glob("*") in ruby */
                if (!strcmp(x->s, "Dir") && i + 2 < t->n && t->v[i + 1].k == T_PUNCT &&
                    t->v[i + 1].s[0] == '[')
                        g = true;
                if (!g && !l)
                        continue;
                size_t k = i + 1;
                while (k < t->n && t->v[k].k == T_PUNCT && strchr("([", t->v[k].s[0]))
                        k++;
                const char *arg = k < t->n && t->v[k].k == T_STR ? t->v[k].s : NULL;
                if (g && arg && strpbrk(arg, "*?[")) {
                        /* every name beneath a directory, at any depth, is every name there */
                        const char *r = arg;
                        while (!strncmp(r, "./", 2) || !strncmp(r, "**/", 3))
                                r += r[0] == '.' ? 2 : 3;
                        return xstrdup(!strcmp(r, "**") ? "*" : r);
                }
                if (l && (!arg || !strcmp(arg, ".") || !strcmp(arg, "./")))
                        return xstrdup(arg || k >= t->n || t->v[k].k != T_ID ? "*" : UNK_S);
                if (l && arg)
                        return xasprintf("%s/*", arg);
        }
        return NULL;
}

static void path_cmd(struct code_state *st, const char *prog, const char *f1, const char *f2,
                     const struct call_args *ca)
{
        char *argv[5] = {(char *)prog};
        size_t n = 1;
        if (f1)
                argv[n++] = (char *)f1;
        if (f2)
                argv[n++] = (char *)f2;
        argv[n++] = ca->n && !ca->unknown ? (char *)ca->s[0] : UNK_S;
        /* a deletion of a name some listing produced: of what it lists */
        if ((!ca->n || ca->unknown) && st->listed && !strcmp(prog, "rm"))
                argv[n - 1] = st->listed;
        code_child(st->sc, st->parent, argv, n, st->depth);
}

static void do_exec(struct code_state *st, const struct call_args *ca)
{
        if (ca->unknown || !ca->n) {
                if (ca->any)
                        code_finding(st->sc, st->parent, "@unknown-command",
                                     "interpreter runs a command that cannot be known");
                return;
        }
        for (size_t k = 0; k < ca->n; k++)
                if (strstr(ca->s[k], "-i") || strstr(ca->s[k], "/bin/sh") || strstr(ca->s[k], "/bin/bash"))
                        st->shell_i = true;
        if (ca->list || ca->n > 1)
                code_child(st->sc, st->parent, (char *const *)ca->s, ca->n, st->depth);
        else
                code_shell(st->sc, st->parent, ca->s[0], st->depth);
}

/* open(path, mode) in python/ruby; open(FH, '>', path) / open(FH, ">path") in perl. */
static void do_open(struct code_state *st, const struct call_args *ca)
{
        if (!ca->n)
                return;
        const char *path = ca->s[0], *mode = ca->n > 1 ? ca->s[1] : "r";
        if (!strcmp(st->lang, "perl")) {
                const char *m = ca->s[0];
                mode = "r";
                if (m[0] == '>' || m[0] == '+') {
                        mode = "w";
                        path = m + strspn(m, "+>< ");
                        if (!*path && ca->n > 1)
                                path = ca->s[1];
                } else if (m[0] == '<' && ca->n > 1)
                        path = ca->s[1];
                if (m[0] == '|' || (*m && m[strlen(m) - 1] == '|')) {
                        struct call_args sh = {.n = 1, .s = {m}};
                        return do_exec(st, &sh);
                }
        }
        bool w = strpbrk(mode, "wax+") != NULL;
        struct call_args one = {.n = 1, .s = {path}};
        path_cmd(st, w ? "tee" : "cat", NULL, NULL, &one);
}

static void code_call(struct code_state *st, const struct toks *t, size_t i, const struct api *a)
{
        struct call_args ca;
        call_args(t, i, &ca);
        if (ca.more) /* judging the first 64 would miss subprocess.run([..., "/"]) */
                return code_finding(st->sc, st->parent, "@limit-exceeded", "a call with too many arguments");
        switch (a->kind) {
        case K_SH: do_exec(st, &ca); break;
        case K_RMTREE: path_cmd(st, "rm", "-r", "-f", &ca); break;
        case K_RM: path_cmd(st, "rm", "-f", NULL, &ca); break;
        case K_OPEN: do_open(st, &ca); break;
        case K_WRITE: path_cmd(st, "tee", NULL, NULL, &ca); break;
        case K_READ: path_cmd(st, "cat", NULL, NULL, &ca); break;
        case K_NET: st->net = true; break;
        case K_DUP: st->dup = true; break;
        case K_EVAL:
                if (ca.n && !ca.unknown)
                        scan_code(st->sc, st->lang, ca.s[0], st->parent, st->depth + 1);
                else if (ca.any)
                        code_finding(st->sc, st->parent, "@unknown-command",
                                     "interpreter evaluates code that cannot be known");
                break;
        }
}

static bool is_shell_name(const char *s)
{
        const char *b = base_name(s);
        return !strcmp(b, "sh") || !strcmp(b, "bash") || !strcmp(b, "dash") || !strcmp(b, "zsh");
}

/* awk: print | "cmd" and "cmd" | getline run cmd through sh. */
static void awk_pipes(struct code_state *st, const struct toks *t, size_t i)
{
        const struct tok *x = &t->v[i];
        if (x->k != T_PUNCT || (x->s[0] != '|' && x->s[0] != '>'))
                return;
        if (x->s[0] == '|' && i + 1 < t->n && t->v[i + 1].k == T_STR) {
                const char *cmd = t->v[i + 1].s;
                if (is_shell_name(cmd))
                        code_finding(st->sc, st->parent, "@unknown-command",
                                     "awk prints commands into a shell");
                else
                        code_shell(st->sc, st->parent, cmd, st->depth);
        }
        if (x->s[0] == '>' && i + 1 < t->n && t->v[i + 1].k == T_STR) { /* print > "file" */
                char *const tee[] = {"tee", t->v[i + 1].s, NULL};
                code_child(st->sc, st->parent, tee, 2, st->depth);
        }
        if (x->s[0] == '|' && i > 0 && t->v[i - 1].k == T_STR && i + 1 < t->n &&
            !strcmp(t->v[i + 1].s, "getline"))
                code_shell(st->sc, st->parent, t->v[i - 1].s, st->depth);
}

/* expect (Tcl): "spawn CMD ARGS" and "exec CMD ARGS" commands, one per line or ';'. */
static void scan_expect(struct scan *sc, const char *code, size_t parent, int depth)
{
        char *copy = xstrdup(code), *save = NULL;
        for (char *l = strtok_r(copy, ";\n", &save); l; l = strtok_r(NULL, ";\n", &save)) {
                l += strspn(l, " \t");
                if (!strncmp(l, "spawn ", 6) || !strncmp(l, "exec ", 5))
                        code_shell(sc, parent, l + (l[0] == 's' ? 6 : 5), depth);
        }
        free(copy);
}

/* Code that reaches the network and reads a file from outside the workspace (a system file
 * or a secret) sends it, as curl -d @FILE would: each such read, from first on, is an
 * @upload of its path, which the rules judge by the path's class. */
static void code_uploads(struct scan *sc, size_t parent, size_t first, int depth)
{
        for (size_t k = first; k < sc->n && !sc->failed; k++) {
                const struct scmd *c = &sc->cmds[k];
                if (c->argv.n != 2 || strcmp(c->argv.v[0], "cat") || has_unk(c->argv.v[1]))
                        continue;
                char *p = uw_path(sc, k, c->argv.v[1]);
                bool out = p && (classify_path(p, sc->ctx) & (PC_SYSTEM | PC_SECRET));
                if (out)
                        code_child(sc, parent, (char *const[]){"@upload", p, NULL}, 2, depth);
                free(p);
        }
}

void scan_code(struct scan *sc, const char *lang, const char *code, size_t parent, int depth)
{
        if (!strcmp(lang, "expect") && depth <= POL_MAX_DEPTH)
                return scan_expect(sc, code, parent, depth + 1);
        if (depth > POL_MAX_DEPTH) {
                code_finding(sc, parent, "@limit-exceeded", "code nested too deep");
                return;
        }
        struct toks t = {0};
        tokenize(code, &t);
        if (t.overflow)
                code_finding(sc, parent, "@limit-exceeded", "interpreter code too long");
        struct code_state st = {
                .sc = sc, .parent = parent, .depth = depth + 1, .lang = lang, .listed = listing_of(&t)};
        size_t first = sc->n;
        for (size_t i = 0; i < t.n && !sc->failed; i++) {
                const struct tok *x = &t.v[i];
                if (x->k == T_STR && x->q == '`' &&
                    (!strcmp(lang, "perl") || !strcmp(lang, "ruby") || !strcmp(lang, "julia"))) {
                        code_shell(sc, parent, x->s, st.depth);
                        continue;
                }
                if (!strcmp(lang, "awk"))
                        awk_pipes(&st, &t, i);
                if (x->k != T_ID)
                        continue;
                const struct api *a = find_api(x->s, lang);
                if (a)
                        code_call(&st, &t, i, a);
        }
        /* gawk's /inet/tcp/... special files are sockets; with |& a co-process talks to it */
        if (!strcmp(lang, "awk") &&
            (strstr(code, "/inet/") || strstr(code, "/inet4/") || strstr(code, "/inet6/")))
                st.net = st.shell_i = true;
        if (st.net) {
                code_child(sc, parent, (char *const[]){"@net", NULL}, 1, st.depth);
                code_uploads(sc, parent, first, st.depth);
        }
        /* A socket plus descriptors handed to a shell is a reverse shell. */
        if (st.net && (st.dup || st.shell_i))
                code_finding(sc, parent, "@reverse-shell", "interpreter connects a shell to the network");
        free(st.listed);
        toks_free(&t);
}

/* ---- SQL ---- */

static size_t sql_word(const char *s, size_t i, char *out, size_t max)
{
        size_t n = 0;
        while (s[i] && (isalnum((unsigned char)s[i]) || s[i] == '_') && n + 1 < max)
                out[n++] = (char)toupper((unsigned char)s[i++]);
        out[n] = 0;
        return i;
}

void scan_sql(struct scan *sc, const char *sql, size_t parent)
{
        char prev2[32] = "", prev[32] = "", w[32];
        int after_delete = 0; /* words since DELETE FROM */
        for (size_t i = 0; sql[i];) {
                if (!isalnum((unsigned char)sql[i]) && sql[i] != '_') {
                        if (sql[i] == ';' && after_delete > 0) {
                                code_finding(sc, parent, "@sql-delete-all", "DELETE without WHERE");
                                after_delete = 0;
                        }
                        i++;
                        continue;
                }
                i = sql_word(sql, i, w, sizeof(w));
                while (isalnum((unsigned char)sql[i]) || sql[i] == '_')
                        i++;
                if (!strcmp(prev, "DROP") && (!strcmp(w, "DATABASE") || !strcmp(w, "TABLE") ||
                                              !strcmp(w, "SCHEMA") || !strcmp(w, "USER")))
                        code_finding(sc, parent, "@sql-drop", "DROP");
                if (!strcmp(w, "TRUNCATE") || !strcmp(w, "FLUSHALL") || !strcmp(w, "FLUSHDB") ||
                    !strcmp(w, "DROPDATABASE"))
                        code_finding(sc, parent, "@sql-drop", w);
                if (after_delete > 0 && !strcmp(w, "WHERE"))
                        after_delete = 0;
                else if (after_delete > 0)
                        after_delete++;
                if (!strcmp(prev, "DELETE") && !strcmp(w, "FROM"))
                        after_delete = 1;
                (void)prev2;
                memcpy(prev2, prev, sizeof(prev));
                memcpy(prev, w, sizeof(prev));
        }
        if (after_delete > 0)
                code_finding(sc, parent, "@sql-delete-all", "DELETE without WHERE");
}
