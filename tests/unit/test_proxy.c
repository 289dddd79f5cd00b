/* The proxy of --net=allow as a process (netproxy.c): what it answers to requests a hostile
 * sandbox could send (malformed request lines, missing and bad ports, over-long heads and
 * hosts, NUL bytes, escapes, alternative spellings of an address), what it forwards to an
 * upstream it admits, and what its log says.  test_netproxy.c holds the pure functions; here
 * the proxy runs for real, listening and connecting on 127.0.0.1 only, to an echo server of
 * this test.  Needs no privilege: tests/run.sh runs it as root and as-user (uid 54321). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/macros.h"
#include "base/mem.h"
#include "sandbox/netproxy.h"
#include "tap.h"
#include "txbox.h"

#define IO_TIMEOUT_S  10   /* a proxy that should have answered and did not */
#define REQ_MAX_BYTES 8192 /* the proxy's bound on a request's head (REQ_MAX in netproxy.c) */

static unsigned echo_port; /* the upstream: echoes every connection's bytes back */
static pid_t echo_pid;

struct proxy {
        struct netproxy *p;
        unsigned port;
        struct netproxy_rule rules[8];
};

static int listen_loopback(unsigned *port)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 16) < 0 ||
            getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
                printf("Bail out! cannot listen on 127.0.0.1: %s\n", strerror(errno));
                exit(1);
        }
        *port = ntohs(a.sin_port);
        return fd;
}

static void echo_start(void)
{
        int fd = listen_loopback(&echo_port);

        echo_pid = fork();
        if (echo_pid != 0) {
                close(fd);
                return;
        }
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        signal(SIGCHLD, SIG_IGN);
        for (;;) {
                int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
                if (c < 0)
                        continue;
                if (fork() == 0) {
                        char buf[4096];
                        ssize_t n;
                        while ((n = read(c, buf, sizeof(buf))) > 0)
                                if (write(c, buf, (size_t)n) != n)
                                        break;
                        _exit(0);
                }
                close(c);
        }
}

static void proxy_start(struct proxy *x, const char *const *entries, size_t n)
{
        struct txbox_error e;
        int fd = listen_loopback(&x->port);

        for (size_t i = 0; i < n; i++)
                if (netproxy_rule_parse(entries[i], &x->rules[i], &e) < 0) {
                        printf("Bail out! rule '%s': %s\n", entries[i], e.msg);
                        exit(1);
                }
        if (netproxy_start(x->rules, n, &x->p, &e) < 0 || netproxy_listen(x->p, fd) < 0) {
                printf("Bail out! cannot start the proxy: %s\n", e.msg);
                exit(1);
        }
}

static int dial(unsigned port)
{
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
                printf("Bail out! cannot connect to 127.0.0.1:%u: %s\n", port, strerror(errno));
                exit(1);
        }
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        return fd;
}

/* Everything until EOF (or the timeout: then "(timeout)" is appended, which no test expects). */
static size_t read_all(int fd, char *buf, size_t size)
{
        size_t len = 0;
        ssize_t n;

        while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
                len += (size_t)n;
        if (len + 1 < size && n < 0 && errno == EAGAIN)
                len += (size_t)snprintf(buf + len, size - len, "(timeout)");
        buf[len] = '\0';
        return len;
}

/* Send len bytes of req (NULs included), end our side, and read the whole answer into out. */
static const char *ask(const struct proxy *x, const char *req, size_t len, char *out, size_t size)
{
        int fd = dial(x->port);

        if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len)
                printf("# short send\n");
        shutdown(fd, SHUT_WR);
        read_all(fd, out, size);
        close(fd);
        return out;
}

static bool starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

/* A request with the echo server's port put in for each "PORT". */
static const char *req_fmt(char *buf, size_t size, const char *tmpl)
{
        size_t len = 0;

        for (const char *p; (p = strstr(tmpl, "PORT")); tmpl = p + 4)
                len += (size_t)snprintf(buf + len, size - len, "%.*s%u", (int)(p - tmpl), tmpl, echo_port);
        snprintf(buf + len, size - len, "%s", tmpl);
        return buf;
}

static unsigned allowed_expected; /* requests the proxy must log as allowed */

static void connect_tunnel(const struct proxy *x)
{
        char req[256], out[256];
        int fd = dial(x->port);

        req_fmt(req, sizeof(req), "CONNECT 127.0.0.1:PORT HTTP/1.1\r\nHost: whatever\r\n\r\n");
        send(fd, req, strlen(req), MSG_NOSIGNAL);
        ssize_t n = read(fd, out, sizeof(out) - 1);
        out[n > 0 ? n : 0] = '\0';
        is_str(out, "HTTP/1.1 200 Connection established\r\n\r\n",
               "CONNECT to a listed address and port: tunnel");
        send(fd, "ping\0pong", 9, MSG_NOSIGNAL);
        shutdown(fd, SHUT_WR);
        size_t len = read_all(fd, out, sizeof(out));
        ok(len == 9 && !memcmp(out, "ping\0pong", 9), "the tunnel relays bytes both ways, NULs included");
        close(fd);
        allowed_expected++;
}

static void plain_requests(const struct proxy *x)
{
        static const struct {
                const char *req, *upstream, *what;
        } t[] = {
                {"GET http://127.0.0.1:PORT/a/b?c=d HTTP/1.1\r\nHost: h\r\nX: y\r\n\r\n",
                 "GET /a/b?c=d HTTP/1.1\r\nHost: h\r\nX: y\r\n\r\n",
                 "absolute form goes upstream in origin form"},
                {"GET http://127.0.0.1:PORT HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\n\r\n", "no path: '/'"},
                {"GET HTTP://127.0.0.1:PORT?q HTTP/1.0\r\n\r\n", "GET /?q HTTP/1.0\r\n\r\n",
                 "a query without a path"},
                {"POST http://127.0.0.1:PORT/u HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody",
                 "POST /u HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody", "the body after the head follows"},
                {"GET http://0x7f000001:PORT/ HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\n\r\n",
                 "the listed address spelled in hex is the same address"},
                {"CONNECT 127.1:PORT HTTP/1.1\r\n\r\nx", "HTTP/1.1 200 Connection established\r\n\r\nx",
                 "... and in its short form"},
                {"CONNECT [::ffff:127.0.0.1]:PORT HTTP/1.1\r\n\r\n", NULL,
                 "... and IPv4-mapped (where IPv6 is up)"},
        };
        char req[512], out[512];

        for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
                req_fmt(req, sizeof(req), t[i].req);
                ask(x, req, strlen(req), out, sizeof(out));
                if (!t[i].upstream) {
                        /* Admitted by the list; connecting may fail where ::ffff: sockets do not work. */
                        ok(starts(out, "HTTP/1.1 200 ") || starts(out, "HTTP/1.1 502 "), "%s: %.12s",
                           t[i].what, out);
                        allowed_expected += starts(out, "HTTP/1.1 200 ");
                        continue;
                }
                is_str(out, t[i].upstream, "%s", t[i].what);
                allowed_expected++;
        }
}

/* Requests the proxy must refuse, with the start of its answer. */
static void refusals(const struct proxy *x)
{
        static const struct {
                const char *req, *answer, *what;
        } t[] = {
                /* not in the list */
                {"CONNECT example.com:443 HTTP/1.1\r\n\r\n", "HTTP/1.1 403", "an unlisted name"},
                {"CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n", "HTTP/1.1 403",
                 "the listed address on another port"},
                {"CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n", "HTTP/1.1 403",
                 "no port: 443, not listed for the address"},
                {"CONNECT [::1]:PORT HTTP/1.1\r\n\r\n", "HTTP/1.1 403",
                 "IPv6 loopback is not the listed 127.0.0.1"},
                {"CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n", "HTTP/1.1 403", "the metadata address"},
                {"CONNECT [::ffff:169.254.169.254]:80 HTTP/1.1\r\n\r\n", "HTTP/1.1 403",
                 "the metadata address, mapped"},
                {"CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n", "HTTP/1.1 403", "a private address"},
                {"GET http://user@127.0.0.1:PORT/ HTTP/1.1\r\n\r\n", "HTTP/1.1 403",
                 "userinfo before the host"},
                {"CONNECT exa\033]0;x\007mple.com:443 HTTP/1.1\r\n\r\n", "HTTP/1.1 403",
                 "a host with escapes"},
                {"CONNECT evil.allowed.test.attacker.com:443 HTTP/1.1\r\n\r\n", "HTTP/1.1 403",
                 "a listed suffix in the middle of a name"},
                {"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n", "HTTP/1.1 403", "*.NAME does not admit NAME"},
                /* malformed: ports */
                {"CONNECT 127.0.0.1: HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "an empty port"},
                {"CONNECT 127.0.0.1:0 HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "port 0"},
                {"CONNECT 127.0.0.1:65536 HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "port 65536"},
                {"CONNECT 127.0.0.1:18446744073709551617 HTTP/1.1\r\n\r\n", "HTTP/1.1 400",
                 "a port past 2^64"},
                {"CONNECT 127.0.0.1:-1 HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "a negative port"},
                {"CONNECT 127.0.0.1:+PORT HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "a signed port"},
                {"CONNECT 127.0.0.1:PORTx HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "a port with a tail"},
                {"CONNECT 127.0.0.1:0x50 HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "a port in hex"},
                {"GET http://127.0.0.1:PORT@evil.test/ HTTP/1.1\r\n\r\n", "HTTP/1.1 400",
                 "a port hiding a host"},
                /* malformed: hosts and the request line */
                {"CONNECT :443 HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "an empty host"},
                {"CONNECT [::1 HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "an unclosed bracket"},
                {"CONNECT [::1]x HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "text after the bracket"},
                {"CONNECT ::1:443 HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "IPv6 without brackets"},
                {"CONNECT 127.0.0.1:PORT\r\n\r\n", "HTTP/1.1 400", "no HTTP version"},
                {"GET /local HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "origin form: no host to check"},
                {"GET https://127.0.0.1:PORT/ HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "https not through CONNECT"},
                {"G\033T http://127.0.0.1:PORT/ HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "a method with an escape"},
                {"connect 127.0.0.1:PORT HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "a method in lower case"},
                {"\r\n\r\n", "HTTP/1.1 400", "an empty head"},
        };
        char req[512], out[512];

        for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
                req_fmt(req, sizeof(req), t[i].req);
                ask(x, req, strlen(req), out, sizeof(out));
                ok(starts(out, t[i].answer), "refused (%.12s): %s", t[i].answer + 9, t[i].what);
                if (!starts(out, t[i].answer))
                        printf("#   got '%.60s'\n", out);
        }
}

/* A host longer than any name, and a target longer than the proxy's buffer for it. */
static void long_requests(const struct proxy *x)
{
        static char req[REQ_MAX_BYTES + 64], out[512];
        char host[3001];

        memset(host, 'a', sizeof(host) - 1);
        host[sizeof(host) - 1] = '\0';
        snprintf(req, sizeof(req), "CONNECT %.400s.com:443 HTTP/1.1\r\n\r\n", host);
        ok(starts(ask(x, req, strlen(req), out, sizeof(out)), "HTTP/1.1 403"),
           "a 400-letter host name is refused");
        snprintf(req, sizeof(req), "CONNECT %s:%u HTTP/1.1\r\n\r\n", host, echo_port);
        ok(starts(ask(x, req, strlen(req), out, sizeof(out)), "HTTP/1.1 4"), "a 3000-byte target is refused");
        snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/%s HTTP/1.1\r\n\r\n", echo_port, host);
        char *want = xasprintf("GET /%s HTTP/1.1\r\n\r\n", host), big[4096];
        is_str(ask(x, req, strlen(req), big, sizeof(big)), want,
               "a 3000-byte path goes upstream whole (longer than the proxy's copy of the line)");
        free(want);
        allowed_expected++;

        /* A head of exactly the proxy's bound with no end: 431, then the connection closes. */
        memset(req, 'H', REQ_MAX_BYTES);
        const char *line = "CONNECT 127.0.0.1:1 HTTP/1.1\r\nX: ";
        memcpy(req, line, strlen(line));
        ok(starts(ask(x, req, REQ_MAX_BYTES, out, sizeof(out)), "HTTP/1.1 431"),
           "a head without an end: 431");
}

/* A NUL in the head hides its end from the proxy: it waits for an end that never comes and
 * never connects anywhere. */
static void nul_bytes(const struct proxy *x)
{
        static char req[REQ_MAX_BYTES], out[256];
        size_t len = (size_t)snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u", echo_port);
        req[len++] = '\0';
        len += (size_t)snprintf(req + len, sizeof(req) - len, " HTTP/1.1\r\n\r\n");
        is_str(ask(x, req, len, out, sizeof(out)), "",
               "a NUL in the request line: closed, no answer, no tunnel");

        len = (size_t)snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\nX: a", echo_port);
        req[len++] = '\0';
        len += (size_t)snprintf(req + len, sizeof(req) - len, "b\r\n\r\nping");
        is_str(ask(x, req, len, out, sizeof(out)), "", "a NUL in a header: closed, no answer, no tunnel");

        memset(req, 'x', sizeof(req));
        len = (size_t)snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n", echo_port);
        req[len] = '\0';
        memcpy(req + sizeof(req) - 4, "\r\n\r\n", 4);
        ok(starts(ask(x, req, sizeof(req), out, sizeof(out)), "HTTP/1.1 431"),
           "a NUL, then a head that ends at the bound: 431");
}

/* Names are resolved by the proxy, and every address they resolve to is judged. */
static void resolved_names(void)
{
        char e1[64], e2[64], req[256], out[256], log[4096];
        struct proxy plain, priv;
        const char *p1[] = {e1}, *p2[] = {e2};

        snprintf(e1, sizeof(e1), "localhost:%u", echo_port);
        snprintf(e2, sizeof(e2), "private:localhost:%u", echo_port);
        proxy_start(&plain, p1, 1);
        proxy_start(&priv, p2, 1);
        req_fmt(req, sizeof(req), "GET http://localhost:PORT/x HTTP/1.1\r\n\r\n");
        ok(starts(ask(&plain, req, strlen(req), out, sizeof(out)),
                  "HTTP/1.1 403 Forbidden (txbox: private address)"),
           "a listed name that resolves to loopback is refused");
        netproxy_stop(plain.p, log, sizeof(log));
        ok(strstr(log, "refused GET localhost:") && strstr(log, "resolves to loopback address"),
           "... and the log says so: %s", log);
        is_str(ask(&priv, req, strlen(req), out, sizeof(out)), "GET /x HTTP/1.1\r\n\r\n",
               "private:NAME reaches it");
        netproxy_stop(priv.p, log, sizeof(log));
        ok(starts(log, "allowed GET localhost:") && strstr(log, "via 127.0.0.1"),
           "... logged with its address: %s", log);
}

/* Entries of a log ("a, b, c") that start with what. */
static unsigned entries(const char *log, const char *what)
{
        unsigned n = starts(log, what);
        for (const char *s = log; (s = strstr(s, ", ")); s += 2)
                n += starts(s + 2, what);
        return n;
}

int main(void)
{
        char e1[64], log[64 * 512];
        const char *list[] = {e1, "*.allowed.test", "example.org"};
        struct proxy x;

        signal(SIGPIPE, SIG_IGN);
        echo_start();
        snprintf(e1, sizeof(e1), "127.0.0.1:%u", echo_port);
        proxy_start(&x, list, ARRAY_SIZE(list));

        connect_tunnel(&x);
        plain_requests(&x);
        refusals(&x);
        long_requests(&x);
        nul_bytes(&x);
        netproxy_stop(x.p, log, sizeof(log));
        is_int(entries(log, "allowed "), allowed_expected,
               "the log has one 'allowed' entry per admitted request");
        ok(!strchr(log, '\033') && !strchr(log, '\007'), "no escape from a request reaches the log");
        ok(strstr(log, "refused CONNECT example.com:443 (not in the allow list)") != NULL,
           "a refusal is logged with its reason");
        ok(strstr(log, "(unprintable host)") != NULL, "an unprintable host is logged as such");
        resolved_names();

        kill(echo_pid, SIGKILL);
        waitpid(echo_pid, NULL, 0);
        return tap_done();
}
