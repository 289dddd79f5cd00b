/* txbox sh [OPTIONS] [SH OPTIONS] -c STRING [NAME [ARG...]]: a drop-in for sh -c, one
 * transaction.  sh's own options (-l, -i, -e, -x, -o OPT, +o OPT ..., clustered as in -lc or
 * -ec, the way tools call bash -lc) are passed on to /bin/sh; txbox's are its long options
 * and -v and -h standing alone. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run.h"

static void sh_usage(FILE *f)
{
        fprintf(f, "Usage: txbox sh [OPTIONS] [SH OPTIONS] -c STRING [NAME [ARG...]]\n\n"
                   "Run /bin/sh [SH OPTIONS] -c STRING as one transaction, exactly like txbox run --\n"
                   "/bin/sh [SH OPTIONS] -c STRING; a drop-in replacement for sh -c (and bash -lc)\n"
                   "wherever an agent lets you set the shell.  Inside txbox's sandbox (an inherited\n"
                   "SHELL), the string runs in the current sandbox, as part of its transaction.\n\n"
                   "SH OPTIONS are passed on to /bin/sh in the order given: -l, -i, -e, -u, -x, -v,\n"
                   "-o NAME, +o NAME and the others sh knows, alone or together with c (-lc, -ec,\n"
                   "-euxc); --login is -l.  -v and -h standing alone are txbox's (--verbose, --help).\n\n"
                   "Options:\n");
        run_options_help(f);
}

/* The command line split three ways. */
struct sh_line {
        char **txbox; /* "sh" and txbox's options, for run_parse_options */
        int ntxbox;
        char **sh; /* /bin/sh and its options; then -c STRING NAME ARG... */
        int nsh;
        char **own; /* the clusters rewritten without c, to free */
        int nown;
        const char *command;
};

static int sh_fail(const char *msg, const char *what)
{
        cli_error("sh: %s%s%s; txbox sh --help for the options", msg, what ? ": " : "", what ? what : "");
        return -1;
}

/* Split argv; 0, 1 for --help, or -1 with the error printed. */
static int split_line(int argc, char **argv, struct sh_line *l)
{
        bool c = false;
        int i = 1;

        l->txbox[l->ntxbox++] = argv[0];
        l->sh[l->nsh++] = "/bin/sh";
        for (; i < argc; i++) {
                char *w = argv[i];
                int k;
                if (!strcmp(w, "--")) {
                        i++;
                        break;
                }
                if (!strcmp(w, "--login")) {
                        l->sh[l->nsh++] = "-l";
                } else if ((k = run_long_option(w)) > 0) {
                        l->txbox[l->ntxbox++] = w;
                        if (k == 2 && i + 1 >= argc)
                                return sh_fail("this option needs a value", w);
                        if (k == 2)
                                l->txbox[l->ntxbox++] = argv[++i];
                } else if (!strncmp(w, "--", 2)) {
                        return sh_fail("unknown option", w);
                } else if (!strcmp(w, "-v") || !strcmp(w, "-h")) {
                        l->txbox[l->ntxbox++] = w;
                } else if ((w[0] == '-' || w[0] == '+') && w[1]) {
                        /* a cluster of sh's letters: c marks the string, each o takes a name */
                        char *rest = strdup(w);
                        size_t n = 1, names = 0;
                        if (!rest)
                                return sh_fail("out of memory", NULL);
                        l->own[l->nown++] = rest;
                        for (const char *p = w + 1; *p; p++) {
                                if (*p == 'c' && w[0] == '-')
                                        c = true;
                                else
                                        rest[n++] = *p;
                                names += *p == 'o' || *p == 'O';
                        }
                        rest[n] = '\0';
                        if (n > 1)
                                l->sh[l->nsh++] = rest;
                        for (; names > 0; names--) {
                                if (i + 1 >= argc)
                                        return sh_fail("-o needs the name of a shell option", w);
                                l->sh[l->nsh++] = argv[++i];
                        }
                } else {
                        break; /* the first operand */
                }
        }
        for (int k = 1; k < l->ntxbox; k++)
                if (!strcmp(l->txbox[k], "-h") || !strcmp(l->txbox[k], "--help"))
                        return 1;
        if (!c)
                return sh_fail("-c STRING is required (txbox sh runs a string, like sh -c)", NULL);
        if (i >= argc)
                return sh_fail("-c needs the string to run", NULL);
        l->command = argv[i++];
        l->sh[l->nsh++] = "-c";
        l->sh[l->nsh++] = (char *)l->command;
        /* txbox's long options right after the string, as txbox sh -c STRING --report=FILE has
         * always been taken; then NAME and ARGs */
        for (int k; i < argc; i++) {
                if (!strcmp(argv[i], "--")) {
                        i++;
                        break;
                }
                if (!(k = run_long_option(argv[i])))
                        break;
                l->txbox[l->ntxbox++] = argv[i];
                if (k == 2 && i + 1 < argc)
                        l->txbox[l->ntxbox++] = argv[++i];
        }
        for (; i < argc; i++)
                l->sh[l->nsh++] = argv[i];
        return 0;
}

int cmd_sh(int argc, char **argv, const struct global_opts *g)
{
        struct run_cli o = {.shell = true};
        struct sh_line l = {.txbox = calloc((size_t)argc + 2, sizeof(char *)),
                            .sh = calloc((size_t)argc * 2 + 4, sizeof(char *)),
                            .own = calloc((size_t)argc + 1, sizeof(char *))};
        int st;

        if (!l.txbox || !l.sh || !l.own) {
                free(l.txbox);
                free(l.sh);
                free(l.own);
                return EXIT_TXBOX;
        }
        int r = split_line(argc, argv, &l);
        if (r == 1) {
                sh_usage(stdout);
                st = 0;
        } else if (r < 0) {
                st = EXIT_TXBOX;
        } else {
                int i = run_parse_options(l.ntxbox, l.txbox, &o, sh_usage);
                if (i == -0x100 || i < 0)
                        st = i == -0x100 ? 0 : -i;
                else {
                        o.command = l.command;
                        st = run_transaction(l.sh, &o, g);
                }
        }
        run_cli_free(&o);
        for (int k = 0; k < l.nown; k++)
                free(l.own[k]);
        free(l.own);
        free(l.txbox);
        free(l.sh);
        return st;
}
