/* txbox log [--json] [-n N]: transactions, newest first; txbox log --json-lines [--since SEQ]
 * [--follow] [--cursor FILE]: the log as a stream of changes, for shipping. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "cli.h"

static void log_usage(FILE *f)
{
        fprintf(f, "Usage: txbox log [--json] [-n N]\n"
                   "       txbox log --json-lines [--since SEQ] [--follow] [--cursor FILE]\n\n"
                   "List the workspace's transactions, newest first: id, start time, outcome\n"
                   "(committed, rolled_back, denied, pending, undone), exit status, changes\n"
                   "(+added ~modified -deleted), duration and command.\n\n"
                   "  --json          a JSON array of records (see txbox(1))\n"
                   "  -n N            only the N newest\n"
                   "  --json-lines    the log as a stream for log shippers: one record per line,\n"
                   "                  oldest change first, each with \"seq\", its change number; a\n"
                   "                  transaction appears again each time its record changes\n"
                   "                  (running, then committed, later undone)\n"
                   "  --since SEQ     only records changed after change number SEQ\n"
                   "  --follow        keep printing changes as they happen (until killed)\n"
                   "  --cursor FILE   start after the number in FILE (when --since is not given) and\n"
                   "                  write the last number printed there, so that a restarted\n"
                   "                  shipper resumes where it stopped\n"
                   "  -h, --help      this help\n\n"
                   "The stream reads the live audit database with SQLite's own locking: nothing needs\n"
                   "to copy the file (docs/KUBERNETES.md shows a sidecar).\n");
}

static volatile sig_atomic_t stop;
static void on_stop(int sig) { (void)sig; stop = 1; }

static int parse_seq(const char *s, int64_t *out)
{
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        while (*end == '\n' || *end == ' ')
                end++;
        if (errno || end == s || *end || v < 0)
                return -1;
        *out = v;
        return 0;
}

static int read_cursor(const char *file, int64_t *since)
{
        char buf[32] = "";
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n < 0)
                return -EIO;
        buf[n] = '\0';
        return n == 0 ? 0 : parse_seq(buf, since) < 0 ? -EINVAL : 0;
}

static int write_cursor(const char *file, int64_t seq)
{
        char tmp[4096], buf[32];
        int n = snprintf(tmp, sizeof(tmp), "%s.tmp", file),
            len = snprintf(buf, sizeof(buf), "%lld\n", (long long)seq);
        if (n < 0 || (size_t)n >= sizeof(tmp))
                return -ENAMETOOLONG;
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        int r = write(fd, buf, (size_t)len) == len ? 0 : -EIO;
        close(fd);
        if (r == 0 && rename(tmp, file) < 0)
                r = -errno;
        return r;
}

/* Print every record changed after *since; advance *since.  Returns the count, or -1. */
static long print_changes(struct txbox_ws *ws, int64_t *since, const char *cursor)
{
        struct txbox_error err = {0};
        long total = 0;

        for (;;) {
                struct txbox_record *recs = NULL;
                int64_t *seqs = NULL;
                size_t n = 0;
                if (txbox_log_changes(ws, *since, 1000, &recs, &seqs, &n, &err) < 0) {
                        cli_error("%s", err.msg);
                        return -1;
                }
                for (size_t i = 0; i < n; i++) {
                        char *s = txbox_record_json(&recs[i]);
                        /* The record's object with the change number in front. */
                        printf("{\"seq\": %lld, %s\n", (long long)seqs[i], s + 1);
                        free(s);
                        *since = seqs[i];
                }
                txbox_records_free(recs, n);
                free(seqs);
                if (fflush(stdout) != 0 || ferror(stdout))
                        return -1;
                if (n && cursor && write_cursor(cursor, *since) < 0) {
                        cli_error("log: cannot write the cursor file '%s': %s", cursor, strerror(errno));
                        return -1;
                }
                total += (long)n;
                if (n < 1000)
                        return total;
        }
}

/* Wait until the state dir changes (the log's WAL is written), at most a second. */
static void wait_change(int ino)
{
        struct pollfd p = {.fd = ino, .events = POLLIN};
        char buf[4096];

        if (ino < 0) {
                usleep(500000);
                return;
        }
        if (poll(&p, 1, 1000) > 0)
                while (read(ino, buf, sizeof(buf)) > 0)
                        ;
}

static int log_stream(const struct global_opts *g, int64_t since, bool have_since, bool follow,
                      const char *cursor)
{
        int r;

        if (cursor && !have_since && (r = read_cursor(cursor, &since)) < 0) {
                cli_error("log: cannot read the cursor file '%s': %s", cursor, strerror(-r));
                return EXIT_REFUSED;
        }
        /* --follow waits for transactions to come: it may make the state dir to watch it. */
        struct txbox_ws *ws = cli_open(g, follow ? 0 : TXBOX_OPEN_NOCREATE);
        if (!ws)
                return EXIT_TXBOX;
        signal(SIGPIPE, SIG_IGN); /* a closed pipe ends the stream as a write error */
        struct sigaction sa = {.sa_handler = on_stop};
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        int ino = follow ? inotify_init1(IN_NONBLOCK | IN_CLOEXEC) : -1;
        if (ino >= 0 &&
            inotify_add_watch(ino, txbox_ws_state_path(ws), IN_MODIFY | IN_CREATE | IN_MOVED_TO) < 0) {
                close(ino);
                ino = -1;
        }
        long n;
        while ((n = print_changes(ws, &since, cursor)) >= 0 && follow && !stop)
                wait_change(ino);
        if (ino >= 0)
                close(ino);
        txbox_ws_close(ws);
        return n < 0 && !stop ? EXIT_REFUSED : 0;
}

int cmd_log(int argc, char **argv, const struct global_opts *g)
{
        static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                             {"json-lines", no_argument, NULL, 'l'},
                                             {"since", required_argument, NULL, 's'},
                                             {"follow", no_argument, NULL, 'f'},
                                             {"cursor", required_argument, NULL, 'c'},
                                             {"help", no_argument, NULL, 'h'},
                                             {0}};
        struct txbox_record *recs = NULL;
        struct txbox_error err = {0};
        size_t n = 0;
        bool json = false, lines = false, follow = false, have_since = false;
        const char *cursor = NULL;
        int64_t since = 0;
        int limit = 0, c;

        while ((c = getopt_long(argc, argv, "n:fh", opts, NULL)) != -1) {
                switch (c) {
                case 'j': json = true; break;
                case 'l': lines = true; break;
                case 'f': follow = true; break;
                case 'c': cursor = optarg; break;
                case 's':
                        if (parse_seq(optarg, &since) < 0) {
                                cli_error("log: --since %s: expected a change number (0 or more)", optarg);
                                return EXIT_USAGE;
                        }
                        have_since = true;
                        break;
                case 'n': {
                        char *end;
                        long v = strtol(optarg, &end, 10);
                        if (*end || v <= 0 || v > 1000000) {
                                cli_error("log: -n %s: expected a positive number", optarg);
                                return EXIT_USAGE;
                        }
                        limit = (int)v;
                        break;
                }
                case 'h': log_usage(stdout); return 0;
                default: log_usage(stderr); return EXIT_USAGE;
                }
        }
        if (optind < argc || (lines && (json || limit)) || (!lines && (follow || have_since || cursor))) {
                if (!lines && (follow || have_since || cursor))
                        cli_error("log: --since, --follow and --cursor go with --json-lines");
                log_usage(stderr);
                return EXIT_USAGE;
        }
        if (lines)
                return log_stream(g, since, have_since, follow, cursor);
        struct txbox_ws *ws = cli_open(g, TXBOX_OPEN_NOCREATE);
        if (!ws)
                return EXIT_TXBOX;
        int r = txbox_log(ws, limit, &recs, &n, &err);
        if (r < 0)
                cli_error("%s", err.msg);
        else if (!txbox_ws_has_state(ws) && !json)
                cli_no_transactions(g, ws);
        else if (json) {
                char *s = txbox_records_json(recs, n);
                printf("%s\n", s);
                free(s);
        } else
                print_log_table(stdout, recs, n);
        txbox_records_free(recs, n);
        txbox_ws_close(ws);
        return r < 0 ? EXIT_REFUSED : 0;
}
