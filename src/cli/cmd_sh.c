/* txbox sh -c STRING [NAME [ARG...]]: a drop-in for sh -c, one transaction. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run.h"

static void sh_usage(FILE *f)
{
        fprintf(f, "Usage: txbox sh [OPTIONS] -c STRING [NAME [ARG...]]\n\n"
                   "Run /bin/sh -c STRING as one transaction, exactly like txbox run -- /bin/sh -c\n"
                   "STRING; a drop-in replacement for sh -c wherever an agent lets you set the shell.\n\n"
                   "Options:\n");
        run_options_help(f);
}

int cmd_sh(int argc, char **argv, const struct global_opts *g)
{
        struct run_cli o = {.shell = true};
        int i = run_parse_options(argc, argv, &o, sh_usage);

        if (i == -0x100 || i < 0 || !o.command) {
                if (i >= 0 && i != -0x100)
                        cli_error("sh: -c STRING is required; usage: txbox sh -c STRING");
                run_cli_free(&o);
                return i == -0x100 ? 0 : i < 0 ? -i : EXIT_TXBOX;
        }
        char **av = calloc((size_t)(argc - i) + 4, sizeof(char *));
        if (!av) {
                run_cli_free(&o);
                return EXIT_TXBOX;
        }
        av[0] = "/bin/sh";
        av[1] = "-c";
        av[2] = (char *)o.command;
        for (int k = i; k < argc; k++)
                av[3 + k - i] = argv[k];
        int st = run_transaction(av, &o, g);
        free(av);
        run_cli_free(&o);
        return st;
}
