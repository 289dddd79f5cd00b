/* txbox trust [--status | --revoke]: trust the workspace's .txbox/policy as it is now, so
 * that it applies as written (without trust it may only add restrictions). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "cli.h"
#include "policy/policy.h"

static void trust_usage(FILE *f)
{
        fprintf(f, "Usage: txbox [-C DIR] trust [--status | --revoke]\n\n"
                   "Trust the workspace's policy file, .txbox/policy, exactly as it is now: from then\n"
                   "on it applies as written, allow rules, defaults: false and higher effect limits\n"
                   "included.  Without trust it can only add restrictions to the built-in policy: it\n"
                   "lies where commands write, so one of them could have written it.  Read it first.\n\n"
                   "Trust is recorded outside the workspace, in $XDG_CONFIG_HOME/txbox/trusted-policies\n"
                   "(default ~/.config/txbox/trusted-policies), as the file's SHA-256 and the\n"
                   "workspace's path: any change to the file ends it (trust it again after reading\n"
                   "the change).  --policy FILE is always applied as written.\n\n"
                   "  --status    say whether the file is trusted and what trust changes (exit 0 when\n"
                   "              trusted, 1 when not)\n"
                   "  --revoke    withdraw the trust in this workspace's policy\n"
                   "  -h, --help  this help\n");
}

static int trust_status(const char *ws, const char *name, const char *hash)
{
        struct txbox_error err = {0};
        struct policy *p = NULL;
        bool trusted = policy_trusted(ws, hash);

        fputs(trusted ? "trusted: " : "not trusted: ", stdout);
        cli_human(stdout, name);
        printf(" (sha256 %s)\n", hash);
        if (!trusted && policy_load_for(ws, NULL, &p, &err) == 0) {
                const char *note = policy_note(p);
                printf("%s\n", note ? "  it would loosen the built-in policy, which it may not until trusted"
                                    : "  it only adds restrictions: it applies as written all the same");
        } else if (!trusted)
                cli_error("%s", err.msg);
        policy_free(p);
        return trusted ? 0 : EXIT_REFUSED;
}

int cmd_trust(int argc, char **argv, const struct global_opts *g)
{
        static const struct option opts[] = {{"status", no_argument, NULL, 's'},
                                             {"revoke", no_argument, NULL, 'r'},
                                             {"help", no_argument, NULL, 'h'},
                                             {0}};
        char ws[PATH_MAX], hash[65];
        bool status = false, revoke = false;
        struct txbox_error err = {0};
        int c;

        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 's': status = true; break;
                case 'r': revoke = true; break;
                case 'h': trust_usage(stdout); return 0;
                default: trust_usage(stderr); return EXIT_USAGE;
                }
        }
        if (optind < argc || (status && revoke)) {
                trust_usage(stderr);
                return EXIT_USAGE;
        }
        if (g->policy)
                fprintf(stderr, "txbox: note: --policy FILE is applied as written; trust is about the "
                                "workspace's own .txbox/policy\n");
        if (!realpath(cli_workspace(g), ws)) {
                cli_error("workspace '%s': %s", cli_workspace(g), strerror(errno));
                return EXIT_USAGE;
        }
        if (revoke) {
                if (policy_trust_set(ws, NULL, &err) < 0) {
                        cli_error("%s", err.msg);
                        return EXIT_REFUSED;
                }
                fputs("no longer trusted: the policy of ", stdout);
                cli_human(stdout, ws);
                putchar('\n');
                return 0;
        }
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = policy_ws_read(ws, &text, &len, &err);
        if (r == -ENOENT) {
                fputs("txbox: no .txbox/policy in ", stderr);
                cli_human(stderr, ws);
                fputs(": nothing to trust\n", stderr);
                return EXIT_REFUSED;
        }
        if (r < 0) {
                cli_error("%s", err.msg);
                return EXIT_REFUSED;
        }
        _cleanup_free_ char *name = NULL;
        if (asprintf(&name, "%s/.txbox/policy", ws) < 0)
                return EXIT_TXBOX;
        policy_hash(text, len, hash);
        if (status)
                return trust_status(ws, name, hash);
        /* Only what parses is worth trusting: the user sees the error now, not at the next run. */
        struct policy *p = NULL;
        if (policy_load_text(name, text, len, &p, &err) < 0) {
                cli_error("%s; nothing was trusted", err.msg);
                return EXIT_REFUSED;
        }
        _cleanup_free_ char *summary = policy_summary(p);
        policy_free(p);
        if (policy_trust_set(ws, hash, &err) < 0) {
                cli_error("%s", err.msg);
                return EXIT_REFUSED;
        }
        fputs("trusted: ", stdout);
        cli_human(stdout, name);
        printf(" (sha256 %s)\n  ", hash);
        cli_human(stdout, summary);
        printf("\n  it applies as written from now on; any change to it ends the trust\n");
        return 0;
}
