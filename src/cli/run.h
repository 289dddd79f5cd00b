/* Shared by txbox run and txbox sh. */
#ifndef TXBOX_CLI_RUN_H
#define TXBOX_CLI_RUN_H

#include "cli.h"

struct run_cli {
        enum txbox_commit_mode mode;
        struct txbox_run_opts opts;
        const char *report;
        const char *command; /* sh -c STRING */
        const char *session; /* --tx ID: add to this session as a savepoint */
        struct strvec_cli { const char **v; size_t n; } env_keep; /* --env NAME, repeated */
        char **net_allow;    /* --net=allow:HOSTS, split (strings in net_allow_buf) */
        char *net_allow_buf;
        bool verbose;
        bool shell;
};

int run_parse_options(int argc, char **argv, struct run_cli *o, void (*help)(FILE *));
/* arg as one of run's long options: 0 not one, 1 complete (--verbose, --net=host), 2 it takes
 * the next word as its value (--net host); abbreviated as getopt_long allows. */
int run_long_option(const char *arg);
/* Free what option parsing allocated (also after an error). */
void run_cli_free(struct run_cli *o);
void run_options_help(FILE *f);
/* Run argv as one transaction and return the exit status docs/CONTRACT.md gives. */
int run_transaction(char **argv, struct run_cli *o, const struct global_opts *g);

#endif
