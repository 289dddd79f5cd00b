/* What feeds a shell or interpreter its code within one input: the text echo and printf
 * print (escapes decoded), what reaches a command's stdin (a here-document, piped text, a
 * download, decoded data), and the files the input writes or downloads before a later
 * command runs them (echo 'rm -rf ~' > x.sh; sh x.sh).  Apart from unwrap.c because this is
 * the data flow between commands, not what any one program runs; unwrap.c's handlers ask
 * it through feeds.h. */
#define _GNU_SOURCE
#include "policy/feeds.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/mem.h"
#include "base/strv.h"

/* ---- text a command prints (echo, printf) ---- */

struct buf {
        char *s;
        size_t n, cap;
        bool over;
};

static void bput(struct buf *b, char c)
{
        if (b->n + 2 > b->cap) {
                if (b->cap > POL_MAX_INPUT) {
                        b->over = true;
                        return;
                }
                b->cap = b->cap ? b->cap * 2 : 64;
                b->s = xrealloc(b->s, b->cap);
        }
        b->s[b->n++] = c;
        b->s[b->n] = 0;
}

static void bputs(struct buf *b, const char *s)
{
        for (; *s && !b->over; s++)
                bput(b, *s);
}

static int hexv(int c) { return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1; }

/* One backslash escape of printf's format, %b or echo -e (s after the backslash):
 * characters consumed; *stop for \c. */
static size_t escape(const char *s, struct buf *b, bool echo_octal, bool *stop)
{
        static const char from[] = "abefnrtv\\\"'", to[] = "\a\b\033\f\n\r\t\v\\\"'";
        const char *m = *s ? strchr(from, *s) : NULL;
        if (m) {
                bput(b, to[m - from]);
                return 1;
        }
        if (*s == 'c') {
                *stop = true;
                return 1;
        }
        if (*s == 'x' && hexv((unsigned char)s[1]) >= 0) {
                unsigned v = 0;
                size_t k = 1;
                for (; k < 3 && hexv((unsigned char)s[k]) >= 0; k++)
                        v = v * 16 + (unsigned)hexv((unsigned char)s[k]);
                bput(b, (char)v);
                return k;
        }
        if (*s >= '0' && *s <= '7') {
                size_t k = echo_octal && *s == '0' ? 1 : 0, d = 0;
                unsigned v = 0;
                for (; d < 3 && s[k] >= '0' && s[k] <= '7'; k++, d++)
                        v = v * 8 + (unsigned)(s[k] - '0');
                bput(b, (char)v);
                return k ? k : 1;
        }
        bput(b, '\\');
        if (*s) {
                bput(b, *s);
                return 1;
        }
        return 0;
}

static void unescape(const char *s, struct buf *b, bool echo_octal, bool *stop)
{
        while (*s && !*stop && !b->over) {
                if (*s == '\\') {
                        s++;
                        s += escape(s, b, echo_octal, stop);
                } else
                        bput(b, *s++);
        }
}

char *printf_text(char *const *argv, size_t argc)
{
        if (!argc || !argv[0])
                return NULL;
        for (size_t k = 0; k < argc; k++)
                if (has_unk(argv[k]))
                        return NULL;
        const char *fmt = argv[0];
        size_t ai = 1;
        struct buf b = {0};
        bool stop = false;
        for (int round = 0; round < 64 && !stop && !b.over; round++) {
                bool used = false;
                for (const char *f = fmt; *f && !stop && !b.over;) {
                        if (*f == '\\') {
                                f++;
                                f += escape(f, &b, false, &stop);
                                continue;
                        }
                        if (*f != '%') {
                                bput(&b, *f++);
                                continue;
                        }
                        f++;
                        if (*f == '%') {
                                bput(&b, *f++);
                                continue;
                        }
                        f += strspn(f, "-+ #0123456789.*");
                        char conv = *f ? *f++ : 0;
                        const char *arg = ai < argc ? argv[ai] : "";
                        if (ai < argc)
                                ai++, used = true;
                        if (conv == 'b')
                                unescape(arg, &b, true, &stop);
                        else if (conv == 'c' && *arg)
                                bput(&b, *arg);
                        else if (conv == 's' || conv == 'q')
                                bputs(&b, arg);
                        else if (conv && strchr("diouxXeEfFgGaA", conv))
                                bputs(&b, *arg ? arg : "0");
                }
                if (!used || ai >= argc)
                        break;
        }
        if (b.over) {
                free(b.s);
                return NULL;
        }
        return b.s ? b.s : xstrdup("");
}

/* printf / echo output of known words (escapes decoded), or NULL. */
static char *echo_text(char **argv, size_t argc)
{
        const char *p = base_name(argv[0]);
        if (!strcmp(p, "printf")) {
                size_t k = 1;
                if (k < argc && !strcmp(argv[k], "--"))
                        k++;
                if (k < argc && !strcmp(argv[k], "-v"))
                        return NULL;
                return printf_text(argv + k, argc - k);
        }
        if (strcmp(p, "echo"))
                return NULL;
        size_t k = 1;
        bool esc = false, nl = true;
        while (k < argc && argv[k][0] == '-' && argv[k][1] &&
               strspn(argv[k] + 1, "neE") == strlen(argv[k] + 1)) {
                esc |= strchr(argv[k], 'e') != NULL;
                nl &= strchr(argv[k], 'n') == NULL;
                k++;
        }
        char *r = render_argv(argv + k, SIZE_MAX);
        if (has_unk(r)) {
                free(r);
                return NULL;
        }
        if (!esc)
                return r;
        struct buf b = {0};
        bool stop = false;
        unescape(r, &b, true, &stop);
        free(r);
        if (b.over) {
                free(b.s);
                return NULL;
        }
        (void)nl;
        return b.s ? b.s : xstrdup("");
}

/* ---- what feeds a command's stdin ---- */

/* A program whose output is decoded data (base64 -d, xxd -r, gunzip, rot13 with tr ...). */
static bool is_decoder(char **argv, size_t argc)
{
        const char *p = base_name(argv[0]);
        static const char *const always[] = {"uudecode", "gunzip",    "zcat",       "bzcat", "xzcat",
                                             "rev",      "unxz",      "zstdcat",    "lzcat", "unlzma",
                                             "lz4cat",   "b64decode", "uncompress", NULL};
        static const char *const with_flag[] = {"base64", "base32", "basenc",   "openssl", "xxd", "gzip",
                                                "bzip2",  "xz",     "zstd",     "lzma",    "lz4", "brotli",
                                                "gpg",    "age",    "uudecode", NULL};
        static const char *const flags[] = {"-d",           "--decode",  "-D",       "-r",
                                            "-rp",          "-pr",       "-base64",  "-a",
                                            "--decompress", "--decrypt", "-decrypt", NULL};
        if (uw_in(p, always))
                return true;
        if (uw_in(p, with_flag))
                for (size_t k = 1; k < argc; k++)
                        if (uw_in(argv[k], flags) || (!strcmp(p, "openssl") && !strcmp(argv[k], "base64")))
                                return true;
        return !strcmp(p, "tr") && argc > 2; /* rot13 and friends */
}

static bool is_dl(const char *p)
{
        static const char *const dl[] = {"curl", "wget", "fetch", "aria2c", "http", "https",
                                         "lwp-download", "lwp-request", "GET", "POST", "nc", "ncat",
                                         "netcat", "socat", "telnet", "ftp", "tftp", "@net", "xh", "httpie",
                                         "curlie", "ztcp", "openssl", "s_client", "gh", "glab", NULL};
        return uw_in(p, dl) && strcmp(p, "openssl") && strcmp(p, "gh") && strcmp(p, "glab");
}

static bool in_files(const struct strvec *v, const char *path)
{
        for (size_t k = 0; k < v->n; k++)
                if (!strcmp(v->v[k], path))
                        return true;
        return false;
}

/* The text last written to path by this input, or NULL. */
const char *uw_text_file(const struct scan *sc, const char *path)
{
        for (size_t k = sc->text_files.n; k >= 2; k -= 2)
                if (!strcmp(sc->text_files.v[k - 2], path))
                        return sc->text_files.v[k - 1];
        return NULL;
}

enum stdin_kind uw_stdin_of(struct scan *sc, size_t idx, char **text)
{
        struct scmd *me = &sc->cmds[idx];
        *text = NULL;
        if (me->stdin_text) {
                *text = xstrdup(me->stdin_text);
                return IN_TEXT;
        }
        if (me->reads.n && me->dl_word) /* sh < <(curl URL) */
                return IN_DOWNLOAD;
        if (me->reads.n) { /* sh < file */
                *text = xstrdup(me->reads.v[me->reads.n - 1]);
                return IN_FILE;
        }
        if (me->stage <= 0 || me->pipe_id < 0)
                return IN_NONE;
        /* A stage we cannot see into (( ... ) | sh) or a program's output is unknown text. */
        enum stdin_kind prev = IN_UNKNOWN;
        char *ptext = NULL;
        bool decoded = false, seen = false;
        for (size_t k = idx; k-- > 0;) {
                struct scmd *c = &sc->cmds[k];
                if (c->pipe_id != me->pipe_id || c->stage >= me->stage || !c->argv.n ||
                    c->argv.v[0][0] == '@')
                        continue;
                if (is_dl(base_name(c->argv.v[0]))) {
                        free(ptext);
                        return IN_DOWNLOAD;
                }
                decoded |= is_decoder(c->argv.v, c->argv.n);
                if (c->stage != me->stage - 1 || seen)
                        continue;
                seen = true; /* the stage's innermost command: the one whose output it is */
                const char *p = base_name(c->argv.v[0]);
                if ((ptext = echo_text(c->argv.v, c->argv.n)))
                        prev = IN_TEXT;
                else if (!strcmp(p, "cat") && c->argv.n == 1 && c->stdin_text) {
                        ptext = xstrdup(c->stdin_text);
                        prev = IN_TEXT;
                } else if (!strcmp(p, "cat") && c->argv.n == 2 && !has_unk(c->argv.v[1]) &&
                           c->argv.v[1][0] != '-' && (ptext = uw_path(sc, k, c->argv.v[1])))
                        prev = IN_FILE;
        }
        if (decoded) {
                free(ptext);
                return IN_DECODED;
        }
        *text = ptext;
        return prev;
}

/* A program that will read code from stdin: judge what feeds it. */
void uw_code_from_stdin(struct scan *sc, size_t idx, const char *lang, int depth)
{
        char *text;
        enum stdin_kind k = uw_stdin_of(sc, idx, &text);
        if (k == IN_DOWNLOAD)
                uw_finding(sc, idx, "@download-exec", "downloaded code piped into a shell or interpreter");
        else if (k == IN_DECODED)
                uw_finding(sc, idx, "@obfuscated-exec", "decoded data piped into a shell or interpreter");
        else if (k == IN_UNKNOWN)
                uw_finding(
                        sc, idx, "@unknown-command",
                        "a shell or interpreter reads its commands from a pipe whose text cannot be known");
        else if (k == IN_FILE)
                uw_script_file(sc, idx, text, lang, depth);
        else if (k == IN_TEXT && !lang)
                uw_text(sc, idx, text, depth);
        else if (k == IN_TEXT)
                scan_code(sc, lang, text, idx, depth);
        free(text);
}

/* Parsed from a shell string with nothing feeding its stdin (an argv checked at exec time
 * has pipe_id -1: its stdin is unknown, so it is not called interactive). */
bool uw_no_input(const struct scmd *c)
{
        return !c->stdin_text && !c->reads.n && c->stage == 0 && c->pipe_id >= 0;
}

/* ---- files written earlier in this input ---- */

/* A file this input downloaded or wrote with known text, run now by a shell (lang NULL)
 * or an interpreter: the download is refused, the text judged.  Any other file runs in
 * the sandbox like any program, its execs checked. */
void uw_script_file(struct scan *sc, size_t idx, const char *path, const char *lang, int depth)
{
        if (!path || has_unk(path))
                return;
        char *abs = uw_path(sc, idx, path);
        if (!abs)
                return;
        if (in_files(&sc->dl_files, abs))
                uw_finding(sc, idx, "@download-exec",
                           "runs a file downloaded earlier in this command; read it first");
        else {
                const char *t = uw_text_file(sc, abs);
                char *copy = t ? xstrdup(t) : NULL;
                if (copy && !lang)
                        uw_text(sc, idx, copy, depth);
                else if (copy)
                        scan_code(sc, lang, copy, idx, depth);
                free(copy);
        }
        free(abs);
}

static void remember(struct strvec *v, char *abs)
{
        if (abs && v->n < 1024)
                strvec_push(v, abs);
        else
                free(abs);
}

/* The URL's last path component: where curl -O and wget put a download. */
static char *url_name(const char *url)
{
        const char *s = strstr(url, "://");
        s = s ? s + 3 : url;
        size_t l = strcspn(s, "?#");
        const char *e = s + l;
        const char *slash = NULL;
        for (const char *p = s; p < e; p++)
                if (*p == '/')
                        slash = p;
        if (!slash || slash + 1 >= e)
                return xstrdup("index.html");
        return strndup(slash + 1, (size_t)(e - slash - 1));
}

/* Where a downloader puts what it fetched (curl -o/-O, wget -O, wget's default name). */
/* Short options that take an argument, for clusters such as curl -fsSLo FILE. */
#define CURL_ARGS "AbcCdDeEFHKmoPQrtTuUwxXyYz"
#define WGET_ARGS "aABDeiIlOoPQtTUwXY"

/* The argument of option opt in a cluster of short options at a[*k] (-fsSLo FILE,
 * -qOFILE), or NULL when opt is not in it before another option that takes one; *k moves
 * past a separate argument. */
static const char *cluster_arg(char *const *a, size_t n, size_t *k, char opt, const char *with_arg)
{
        for (const char *c = a[*k] + 1; *c; c++) {
                if (!strchr(with_arg, *c))
                        continue;
                if (*c != opt)
                        return NULL;
                if (c[1])
                        return c + 1;
                return *k + 1 < n ? a[++*k] : NULL;
        }
        return NULL;
}

static void record_download(struct scan *sc, size_t idx)
{
        struct scmd *c = &sc->cmds[idx];
        char **a = c->argv.v;
        size_t n = c->argv.n;
        const char *p = base_name(a[0]);
        const char *url = NULL, *dir = NULL;
        bool remote = false, out_opt = false;
        for (size_t k = 1; k < n; k++) {
                const char *o = a[k], *v = NULL;
                if (strstr(o, "://") && !url)
                        url = o;
                if (!strcmp(p, "curl")) {
                        if ((!strcmp(o, "-o") || !strcmp(o, "--output")) && k + 1 < n)
                                v = a[++k];
                        else if (!strncmp(o, "--output=", 9))
                                v = o + 9;
                        else if (!strncmp(o, "-o", 2) && o[2] && o[1] != '-')
                                v = o + 2;
                        else if (o[0] == '-' && o[1] != '-' && (v = cluster_arg(a, n, &k, 'o', CURL_ARGS)))
                                ;
                        else if (!strcmp(o, "--output-dir") && k + 1 < n)
                                dir = a[++k];
                        else if (o[0] == '-' && o[1] != '-' && strchr(o, 'O'))
                                remote = true;
                        else if (!strcmp(o, "--remote-name") || !strcmp(o, "--remote-name-all"))
                                remote = true;
                } else if (!strcmp(p, "wget")) {
                        if ((!strcmp(o, "-O") || !strcmp(o, "--output-document")) && k + 1 < n)
                                v = a[++k];
                        else if (!strncmp(o, "--output-document=", 18))
                                v = o + 18;
                        else if (!strncmp(o, "-O", 2) && o[2])
                                v = o + 2;
                        else if (o[0] == '-' && o[1] != '-' && (v = cluster_arg(a, n, &k, 'O', WGET_ARGS)))
                                ;
                        else if ((!strcmp(o, "-P") || !strcmp(o, "--directory-prefix")) && k + 1 < n)
                                dir = a[++k];
                        else if (!strncmp(o, "--directory-prefix=", 19))
                                dir = o + 19;
                }
                if (v) {
                        out_opt = true;
                        if (strcmp(v, "-"))
                                remember(&sc->dl_files, uw_path(sc, idx, v));
                }
        }
        if (((!strcmp(p, "wget") && !out_opt) || remote) && url) {
                char *name = url_name(url);
                char *rel = dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
                remember(&sc->dl_files, uw_path(sc, idx, rel));
                free(rel);
                free(name);
        }
}

/* After a command: what it wrote that a later command may run (a download, a script with
 * known text: echo 'rm -rf ~' > x.sh; sh x.sh). */
void uw_record_outputs(struct scan *sc, size_t idx)
{
        struct scmd *c = &sc->cmds[idx];
        if (!c->argv.n || c->argv.v[0][0] == '@')
                return;
        const char *p = base_name(c->argv.v[0]);
        bool tee = !strcmp(p, "tee"), dl = is_dl(p);
        if (dl)
                record_download(sc, idx);
        if (!c->writes.n && !tee)
                return;
        char *text = NULL;
        if (!dl) {
                char *in_text;
                enum stdin_kind k = uw_stdin_of(sc, idx, &in_text);
                dl = k == IN_DOWNLOAD;
                if (!strcmp(p, "echo") || !strcmp(p, "printf"))
                        text = echo_text(c->argv.v, c->argv.n);
                else if (k == IN_TEXT && (tee || (!strcmp(p, "cat") && c->argv.n == 1)))
                        text = TAKE_PTR(in_text);
                free(in_text);
        }
        c = &sc->cmds[idx];
        size_t targets = c->writes.n + (tee ? c->argv.n - 1 : 0);
        for (size_t k = 0; k < targets; k++) {
                const char *t = k < c->writes.n ? c->writes.v[k] : c->argv.v[1 + k - c->writes.n];
                if (t[0] == '-' && k >= c->writes.n)
                        continue;
                char *abs = uw_path(sc, idx, t);
                if (!abs)
                        continue;
                if (dl) {
                        remember(&sc->dl_files, abs);
                        continue;
                }
                bool append = k < c->writes.n ? !in_files(&c->clobbers, t)
                                              : uw_has_short(c->argv.v, 1, c->argv.n, 'a');
                const char *old = append ? uw_text_file(sc, abs) : NULL;
                if (!text || sc->text_files.n >= 256) {
                        /* unknown content now: forget what we knew of it */
                        if (uw_text_file(sc, abs) && sc->text_files.n < 512) {
                                strvec_push(&sc->text_files, abs);
                                strvec_push(&sc->text_files, xstrdup(""));
                        } else
                                free(abs);
                        continue;
                }
                strvec_push(&sc->text_files, abs);
                strvec_push(&sc->text_files, old ? xasprintf("%s%s", old, text) : xstrdup(text));
        }
        free(text);
}
