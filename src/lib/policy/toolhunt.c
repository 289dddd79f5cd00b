/* Hunting for keys: a search of the whole home directory or of / for files named as
 * credentials are named (`find ~ -name 'id_*'`, `find / -name '*.pem'`, `locate id_rsa`)
 * or for text that only credentials hold (`grep -r 'BEGIN RSA PRIVATE KEY' /`).  Nothing
 * in a coding task needs the user's keys found wherever they lie; the search is the first
 * half of stealing them (what it finds is read or sent next, often in the same command:
 * find -exec cat, | xargs cat).  A search of the workspace (`find . -name '*.pem'`, a test
 * certificate of the project) or of a project elsewhere in the home (`find ~/src/app -name
 * '*.key'`) stays allowed, and so does a search for ordinary names over the home
 * (`find ~ -name '*.py'`): the name test must select credentials and not ordinary files. */
#define _GNU_SOURCE
#include "policy/pathclass.h"
#include "policy/tools.h"

#include <fnmatch.h>
#include <regex.h>
#include <stdlib.h>
#include <strings.h>

#include "base/mem.h"

/* Names credentials go by, and names of ordinary files: a pattern hunts keys when it
 * matches one of the first and none of the second. */
static const char *const secret_names[] = {
        "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "server.key", "private.key", "tls.key",
        "private.pem", "server.pem", "cert.p12", "cert.pfx", "key.ppk", "keystore.jks", "vault.kdbx",
        ".env", ".env.production", "credentials", "credentials.json", ".netrc", ".git-credentials", ".pgpass",
        ".pypirc", "secring.gpg", "wallet.dat", ".htpasswd", "shadow", "service-account.json", NULL};
static const char *const ordinary_names[] = {
        "main.c", "README.md", "index.js", "setup.py", "Makefile", "config.yml", "data.json", "notes.txt",
        "app.log", "image.png", ".gitignore", "package.json", "test_app.py", "index.html", "lib.rs",
        "style.css", "Dockerfile", "go.mod", "x", "python3", "libc.so.6", "report2024", ".bashrc", ".config",
        "settings.json", "app.bak", "server", "Cargo.lock", "chapter5.md", "x86_64-linux-gnu", "ed25519.c",
        "key.go", NULL};
/* ... as full paths, for -path, -wholename and -regex */
static const char *const secret_paths[] = {
        "/home/u/.ssh/id_rsa", "/home/u/.ssh/id_ed25519", "/home/u/.aws/credentials", "/etc/ssl/private/server.key",
        "/home/u/app/.env", "/home/u/.gnupg/secring.gpg", "/home/u/certs/private.pem", "/home/u/.netrc",
        "/home/u/.config/gcloud/credentials.db", "/home/u/.kube/config", "/home/u/.docker/config.json", NULL};
static const char *const ordinary_paths[] = {
        "/home/u/app/src/main.c", "/home/u/app/README.md", "/home/u/app/index.js", "/home/u/app/setup.py",
        "/home/u/app/config/app.yml", "/home/u/app/package.json", "/home/u/app/lib/util.py", "/home/u/notes.txt",
        "/home/u/app/Makefile", "/home/u/app/.gitignore", "/home/u/.config/app/settings.json", "/home/u/.bashrc",
        "/home/u/.cache/pip/x.whl", "/usr/local/lib/python3", NULL};

static bool glob_selects(const char *pat, bool path, bool fold)
{
        int fl = fold ? FNM_CASEFOLD : 0;
        const char *const *sec = path ? secret_paths : secret_names;
        const char *const *ord = path ? ordinary_paths : ordinary_names;
        bool hit = false;
        for (size_t k = 0; sec[k] && !hit; k++)
                hit = !fnmatch(pat, sec[k], fl);
        for (size_t k = 0; ord[k] && hit; k++)
                hit = fnmatch(pat, ord[k], fl) != 0;
        return hit;
}

/* find's -regex matches the whole path; read as an extended regex (find's own emacs syntax
 * agrees on what key hunts use: .*, \., alternatives in groups). */
static bool regex_selects(const char *re, bool fold)
{
        char *anch = xasprintf("^(%s)$", re);
        regex_t rx;
        bool hit = false;
        if (!regcomp(&rx, anch, REG_EXTENDED | REG_NOSUB | (fold ? REG_ICASE : 0))) {
                for (size_t k = 0; secret_paths[k] && !hit; k++)
                        hit = !regexec(&rx, secret_paths[k], 0, NULL, 0);
                for (size_t k = 0; ordinary_paths[k] && hit; k++)
                        hit = regexec(&rx, ordinary_paths[k], 0, NULL, 0) != 0;
                regfree(&rx);
        }
        free(anch);
        return hit;
}

static bool has_backref(const char *re)
{
        for (const char *b = re; (b = strchr(b, '\\')) != NULL; b += 2)
                if (b[1] >= '1' && b[1] <= '9')
                        return true;
                else if (!b[1])
                        break;
        return false;
}

/* arg, as command idx sees it, is /, the home directory, a directory holding it (/home) or
 * a place outside the workspace, the home directory and /tmp (/etc, /var/www, other users'
 * homes): not the workspace, a project in the home or scratch space. */
static bool whole_tree(struct scan *sc, size_t idx, const char *arg)
{
        if (has_unk(arg))
                return false;
        char *p = uw_path(sc, idx, arg);
        if (!p)
                return false;
        unsigned c = classify_path(p, sc->ctx);
        bool scratch = (c & PC_TMP) || !strcmp(p, "/tmp") || !strcmp(p, "/var/tmp") || !strcmp(p, "/dev/shm");
        /* the home is the home wherever it lies (a test's home in /var/tmp too) */
        bool wide = (c & (PC_ROOT | PC_HOME)) || (!scratch && (c & PC_SYSTEM)) ||
                    (sc->ctx->home && pathclass_strictly_under(sc->ctx->home, p));
        free(p);
        return wide;
}

static void hunt(struct scan *sc, size_t idx, const char *what)
{
        uw_finding(sc, idx, "@key-hunt", what);
}

static void h_find_keys(struct scan *sc, size_t idx)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx), k = 1;
        while (k < n && a[k][0] == '-' && a[k][1] && strchr("HLPDO", a[k][1]))
                k += !strcmp(a[k], "-D") ? 2 : 1;
        bool wide = false;
        for (; k < n && a[k][0] != '-' && strcmp(a[k], "(") && strcmp(a[k], "!"); k++)
                wide |= whole_tree(sc, idx, a[k]);
        if (!wide)
                return;
        for (; k + 1 < n; k++) {
                const char *t = a[k], *v = a[k + 1];
                bool fold = t[0] == '-' && t[1] == 'i'; /* t may be "" */
                if (has_unk(v))
                        continue;
                if (!strcmp(t, "-name") || !strcmp(t, "-iname")) {
                        if (glob_selects(v, false, fold))
                                return hunt(sc, idx, "searches the home directory or / for credentials by name");
                } else if (!strcmp(t, "-path") || !strcmp(t, "-ipath") || !strcmp(t, "-wholename") ||
                           !strcmp(t, "-iwholename")) {
                        if (glob_selects(v, true, fold))
                                return hunt(sc, idx, "searches the home directory or / for credentials by path");
                } else if (!strcmp(t, "-regex") || !strcmp(t, "-iregex")) {
                        /* back-references make matching exponential: no judging those in
                         * time, so no judgement (a bound exceeded denies) */
                        if (strlen(v) > 256 || has_backref(v))
                                return uw_finding(sc, idx, "@limit-exceeded",
                                                  "a find -regex too long or with back-references");
                        if (regex_selects(v, fold))
                                return hunt(sc, idx, "searches the home directory or / for credentials by path");
                }
        }
}

/* locate searches every path the system indexed: a credential's name is a hunt wherever. */
static void h_locate_keys(struct scan *sc, size_t idx)
{
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        bool fold = false;
        static const char *const with_arg[] = {"-d", "--database", "-l", "--limit", "-n", NULL};
        for (size_t k = 1; k < n; k++) {
                if (!strcmp(a[k], "-i") || !strcmp(a[k], "--ignore-case"))
                        fold = true;
                if (uw_in(a[k], with_arg)) {
                        k++;
                        continue;
                }
                if (a[k][0] == '-' || has_unk(a[k]))
                        continue;
                /* a pattern with no glob characters matches as *PATTERN* */
                char *g = strpbrk(a[k], "*?[") ? xstrdup(a[k]) : xasprintf("*%s*", a[k]);
                bool hit = glob_selects(g, false, fold) || glob_selects(g, true, fold);
                free(g);
                if (hit)
                        return hunt(sc, idx, "searches the whole file system for credentials by name");
        }
}

/* Text only credentials hold. */
static bool secret_marker(const char *pat)
{
        static const char *const m[] = {"PRIVATE KEY", "BEGIN RSA", "BEGIN OPENSSH", "BEGIN DSA", "BEGIN EC ",
                                        "BEGIN PGP PRIVATE", "aws_secret_access_key", "aws_access_key_id",
                                        "AKIA", "password", "passwd", "secret", "api_key", "apikey",
                                        "api-key", "access_token", "auth_token", "ghp_", "github_pat_",
                                        "xoxb-", NULL};
        for (size_t k = 0; m[k]; k++)
                if (strcasestr(pat, m[k]))
                        return true;
        return false;
}

/* grep, rg, ag ... for a credential's text over / or the whole home directory. */
static void h_grep_keys(struct scan *sc, size_t idx)
{
        static const char *const with_arg[] = {"-m", "-A", "-B", "-C", "--max-count", "-d", "-D", "-t", "-T", "-f",
                                               "-g", "--glob", "--type", "--include", "--exclude", NULL};
        char **a = argv_of(sc, idx);
        size_t n = argc_of(sc, idx);
        bool marker = false, wide = false, pattern_given = false;
        for (size_t k = 1; k < n; k++) {
                if (has_unk(a[k]))
                        continue;
                if ((!strcmp(a[k], "-e") || !strcmp(a[k], "--regexp")) && k + 1 < n) {
                        marker |= secret_marker(a[++k]);
                        pattern_given = true;
                } else if (!strncmp(a[k], "--regexp=", 9)) {
                        marker |= secret_marker(a[k] + 9);
                        pattern_given = true;
                } else if (uw_in(a[k], with_arg)) {
                        k++;
                } else if (a[k][0] == '-' && a[k][1]) {
                        continue;
                } else if (!pattern_given) {
                        marker |= secret_marker(a[k]);
                        pattern_given = true;
                } else {
                        wide |= whole_tree(sc, idx, a[k]);
                }
        }
        if (marker && wide)
                hunt(sc, idx, "searches the home directory or / for the text of credentials");
}

void tool_hunt(struct scan *sc, size_t idx)
{
        char **a = argv_of(sc, idx);
        if (!argc_of(sc, idx) || a[0][0] == '@' || has_unk(a[0]))
                return;
        const char *p = base_name(a[0]);
        if (!strcmp(p, "find") || !strcmp(p, "bfs") || !strcmp(p, "gfind"))
                h_find_keys(sc, idx);
        else if (!strcmp(p, "locate") || !strcmp(p, "mlocate") || !strcmp(p, "plocate") || !strcmp(p, "slocate"))
                h_locate_keys(sc, idx);
        else if (!strcmp(p, "grep") || !strcmp(p, "egrep") || !strcmp(p, "fgrep") || !strcmp(p, "rg") ||
                 !strcmp(p, "ag") || !strcmp(p, "ack") || !strcmp(p, "rgrep") || !strcmp(p, "zgrep"))
                h_grep_keys(sc, idx);
}
