/* The allow-list HTTP proxy of --net=allow (see netproxy.h). */
#define _GNU_SOURCE
#include "sandbox/netproxy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#include "base/cleanup.h"
#include "base/error.h"
#include "base/macros.h"
#include "base/mem.h"
#include "base/process.h"
#include "base/str.h"
#include "sandbox/guard.h"
#include "base/syscalls.h"
#include "txbox.h"

#define REQ_MAX 8192
#define RELAY_BUF 65536
#define REQUEST_TIMEOUT_S 30
#define CONNECT_TIMEOUT_MS 10000
#define RESOLVE_TIMEOUT_S 30
#define LOG_MAX 64
#define LOG_LINE 512

/* ---- the allow list ---- */

static bool parse_port(const char *s, uint16_t *port)
{
        char *end;
        if (!isdigit((unsigned char)*s))
                return false;
        unsigned long v = strtoul(s, &end, 10);
        if (*end || v == 0 || v > 65535)
                return false;
        *port = (uint16_t)v;
        return true;
}

/* Letters, digits, '-', '_' and dots between non-empty labels; not all digits in the last
 * label (that is an address in some short form, like 127.1). */
static bool valid_name(const char *s)
{
        size_t n = strlen(s);
        const char *last = strrchr(s, '.');

        if (n == 0 || n > 253 || s[0] == '.' || s[n - 1] == '.' || strstr(s, ".."))
                return false;
        if (strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != n)
                return false;
        last = last ? last + 1 : s;
        return strspn(last, "0123456789") != strlen(last) && strncmp(last, "0x", 2) != 0;
}

static void lower(char *s)
{
        for (; *s; s++)
                *s = (char)tolower((unsigned char)*s);
}

/* The address a numeric host stands for, in any form getaddrinfo accepts ("127.1",
 * "0x7f000001", "::ffff:127.0.0.1"); IPv4-mapped IPv6 addresses as the IPv4 address. */
static bool numeric_host(const char *host, int *family, unsigned char addr[16])
{
        struct addrinfo hints = {.ai_flags = AI_NUMERICHOST, .ai_socktype = SOCK_STREAM}, *ai = NULL;

        if (getaddrinfo(host, NULL, &hints, &ai) != 0 || !ai)
                return false;
        memset(addr, 0, 16);
        if (ai->ai_family == AF_INET) {
                *family = AF_INET;
                memcpy(addr, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
        } else {
                const unsigned char *a = ((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr.s6_addr;
                static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
                *family = memcmp(a, mapped, 12) ? AF_INET6 : AF_INET;
                memcpy(addr, *family == AF_INET ? a + 12 : a, *family == AF_INET ? 4 : 16);
        }
        freeaddrinfo(ai);
        return true;
}

int netproxy_rule_parse(const char *entry, struct netproxy_rule *r, struct txbox_error *err)
{
        char buf[300], *host, *port = NULL;
        const char *item = entry;

        memset(r, 0, sizeof(*r));
        if (str_has_prefix(item, "private:")) {
                r->private_ok = true;
                item += 8;
        }
        if (strlen(item) >= sizeof(buf) || !*item)
                return tx_err(err, EINVAL, "--net=allow: '%.80s' is not a host name, address or HOST:PORT",
                              entry);
        strcpy(buf, item);
        host = buf;
        if (buf[0] == '[') {
                char *end = strchr(buf, ']');
                if (!end || (end[1] && end[1] != ':'))
                        return tx_err(err, EINVAL, "--net=allow: '%.80s': expected [IPV6] or [IPV6]:PORT",
                                      entry);
                *end = '\0';
                host = buf + 1;
                port = end[1] ? end + 2 : NULL;
        } else if ((port = strchr(buf, ':'))) {
                if (strchr(port + 1, ':'))
                        return tx_err(err, EINVAL, "--net=allow: '%.80s': write an IPv6 address in brackets, "
                                                   "e.g. [::1]:8080", entry);
                *port++ = '\0';
        }
        if (port && !parse_port(port, &r->port))
                return tx_err(err, EINVAL, "--net=allow: '%.80s': '%.20s' is not a port (1-65535)", entry,
                              port);
        lower(host);
        if (inet_pton(AF_INET6, host, r->addr) == 1 && buf[0] == '[') {
                r->literal = true;
                r->family = AF_INET6;
        } else if (inet_pton(AF_INET, host, r->addr) == 1 && buf[0] != '[') {
                r->literal = true;
                r->family = AF_INET;
        } else if (buf[0] != '[') {
                /* Normalised through the same parser as requests, so that "[::ffff:a.b.c.d]"
                 * and "a.b.c.d" are one address. */
                if (str_has_prefix(host, "*.")) {
                        r->subdomains_only = true;
                        host += 2;
                }
                if (!valid_name(host))
                        return tx_err(err, EINVAL,
                                      "--net=allow: '%.80s' is not a host name (an IPv4 address "
                                      "is written as four decimal numbers, an IPv6 one in brackets)",
                                      entry);
                snprintf(r->host, sizeof(r->host), "%.253s", host); /* valid_name: at most 253 */
                return 0;
        } else
                return tx_err(err, EINVAL, "--net=allow: '%.80s' is not an IPv6 address", entry);
        /* An address typed by the user is an explicit choice, private or not. */
        r->private_ok = true;
        numeric_host(host, &r->family, r->addr); /* maps ::ffff:a.b.c.d to a.b.c.d */
        return 0;
}

int txbox_net_allow_check(const char *entry, struct txbox_error *err)
{
        struct netproxy_rule r;
        return netproxy_rule_parse(entry, &r, err);
}

/* ---- the deny list ---- */

static const char *v4_denied(const unsigned char *b)
{
        static const struct {
                uint32_t net;
                unsigned bits;
                const char *what;
        } t[] = {
                {0x00000000, 8, "unspecified"},     {0x0a000000, 8, "private"},
                {0x64400000, 10, "shared (CGNAT)"}, {0x7f000000, 8, "loopback"},
                {0xa9fe0000, 16, "link-local"},     {0xac100000, 12, "private"},
                {0xc0000000, 24, "IETF protocol"},  {0xc0000200, 24, "documentation"},
                {0xc0586300, 24, "6to4 relay"},     {0xc0a80000, 16, "private"},
                {0xc6120000, 15, "benchmarking"},   {0xc6336400, 24, "documentation"},
                {0xcb007100, 24, "documentation"},  {0xe0000000, 4, "multicast"},
                {0xf0000000, 4, "reserved"},
        };
        uint32_t a = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];

        for (size_t i = 0; i < ARRAY_SIZE(t); i++)
                if ((a >> (32 - t[i].bits)) == (t[i].net >> (32 - t[i].bits)))
                        return t[i].what;
        return NULL;
}

static bool prefix_is(const unsigned char *a, const unsigned char *p, unsigned bits)
{
        for (unsigned i = 0; i < bits / 8; i++)
                if (a[i] != p[i])
                        return false;
        unsigned rest = bits % 8;
        return !rest || (a[bits / 8] >> (8 - rest)) == (p[bits / 8] >> (8 - rest));
}

static const char *v6_denied(const unsigned char *a)
{
        static const struct {
                unsigned char p[16];
                unsigned bits;
                int v4_at; /* >= 0: judged by the IPv4 address at this offset */
                const char *what;
        } t[] = {
                {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96, 12, NULL}, /* IPv4-mapped */
                {{0, 0x64, 0xff, 0x9b, 0, 1}, 48, -1, "local NAT64"},
                {{0, 0x64, 0xff, 0x9b}, 96, 12, NULL},                         /* NAT64 */
                {{0x20, 0x02}, 16, 2, NULL},                                   /* 6to4 */
                {{0}, 128, -1, "unspecified"},
                {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, -1, "loopback"},
                {{0}, 96, -1, "IPv4-compatible"},
                {{0x01, 0x00}, 64, -1, "discard"},
                {{0x20, 0x01, 0x0d, 0xb8}, 32, -1, "documentation"},
                {{0x3f, 0xff}, 20, -1, "documentation"},
                {{0x20, 0x01}, 23, -1, "IETF protocol (Teredo, ORCHID)"},
                {{0xfc}, 7, -1, "unique local (private)"},
                {{0xfe, 0x80}, 10, -1, "link-local"},
                {{0xfe, 0xc0}, 10, -1, "site-local"},
                {{0xff}, 8, -1, "multicast"},
        };
        for (size_t i = 0; i < ARRAY_SIZE(t); i++)
                if (prefix_is(a, t[i].p, t[i].bits))
                        return t[i].v4_at >= 0 ? v4_denied(a + t[i].v4_at) : t[i].what;
        return NULL;
}

const char *netproxy_addr_denied(const struct sockaddr *sa)
{
        if (sa->sa_family == AF_INET)
                return v4_denied((const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr);
        if (sa->sa_family == AF_INET6)
                return v6_denied(((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr);
        return "non-IP";
}

/* ---- matching a request ---- */

static bool name_matches(const struct netproxy_rule *r, const char *host)
{
        size_t hl = strlen(host), n = strlen(r->host);
        if (!r->subdomains_only && !strcmp(host, r->host))
                return true;
        return hl > n && host[hl - n - 1] == '.' && !strcmp(host + hl - n, r->host);
}

static bool port_matches(const struct netproxy_rule *r, unsigned port)
{
        return r->port ? r->port == port : port == 80 || port == 443;
}

const struct netproxy_rule *netproxy_match(const struct netproxy_rule *rules, size_t n, const char *host,
                                           unsigned port, const char **why)
{
        const struct netproxy_rule *hit = NULL;
        unsigned char addr[16];
        char name[256];
        int family;
        bool host_listed = false;

        if (strlen(host) >= sizeof(name)) {
                *why = "not a host name";
                return NULL;
        }
        strcpy(name, host);
        lower(name);
        if (numeric_host(name, &family, addr)) {
                /* An address matches only the same address, typed into the list. */
                for (size_t i = 0; i < n; i++)
                        if (rules[i].literal && rules[i].family == family &&
                            !memcmp(rules[i].addr, addr, family == AF_INET ? 4 : 16)) {
                                host_listed = true;
                                if (port_matches(&rules[i], port))
                                        return &rules[i];
                        }
                *why = host_listed ? "port not allowed: 80 and 443 only, unless listed as HOST:PORT"
                                   : "address not in the allow list";
                return NULL;
        }
        size_t len = strlen(name);
        if (len && name[len - 1] == '.')
                name[len - 1] = '\0';
        if (!valid_name(name)) {
                *why = "not a host name";
                return NULL;
        }
        /* Of the rules that admit host and port, one that allows private addresses if any:
         * listing a name twice, once with "private:", means the user asked for it. */
        for (size_t i = 0; i < n; i++) {
                if (rules[i].literal || !name_matches(&rules[i], name))
                        continue;
                host_listed = true;
                if (port_matches(&rules[i], port) && (!hit || rules[i].private_ok))
                        hit = &rules[i];
        }
        if (!hit)
                *why = host_listed ? "port not allowed: 80 and 443 only, unless listed as HOST:PORT"
                                   : "not in the allow list";
        return hit;
}

/* ---- the proxy process ---- */

struct netproxy {
        pid_t pid;
        int log_fd; /* read end: one line per attempt */
        int sock;   /* ours: the listening socket goes to the proxy over it */
};

struct proxy_ctx {
        const struct netproxy_rule *rules;
        size_t n;
        int log_fd; /* write end, non-blocking: a full pipe drops lines, never stalls */
};

static void log_line(const struct proxy_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void log_line(const struct proxy_ctx *c, const char *fmt, ...)
{
        char line[LOG_LINE];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        if ((size_t)n > sizeof(line) - 2)
                n = (int)sizeof(line) - 2;
        line[n++] = '\n';
        /* One write below PIPE_BUF: lines of concurrent handlers never mix. */
        if (write(c->log_fd, line, (size_t)n) < 0) {
                /* full: the log keeps its first LOG_MAX entries anyway */
        }
}

static void reply(int fd, const char *status)
{
        char msg[256];
        int n = snprintf(msg, sizeof(msg), "HTTP/1.1 %s\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
                         status);
        if (write(fd, msg, (size_t)n) < 0) {
                /* the client went away: nothing to tell it */
        }
}

static bool write_all(int fd, const char *buf, size_t len)
{
        while (len) {
                ssize_t n = write(fd, buf, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return false;
                buf += n;
                len -= (size_t)n;
        }
        return true;
}

/* Test builds only: TXBOX_TEST_RESOLVE_STALL_MS delays the resolution of names under ".invalid",
 * a top-level domain that never resolves (RFC 6761), so that a test can show that a stalled
 * resolver holds up nothing but its own connection.  It cannot change what a real name
 * resolves to, nor any decision. */
static void test_stall(const char *host)
{
#ifndef TXBOX_TESTING
        (void)host;
#else
        const char *v = getenv("TXBOX_TEST_RESOLVE_STALL_MS");
        size_t n = strlen(host);
        if (!v || n < 8 || strcmp(host + n - 8, ".invalid"))
                return;
        long ms = strtol(v, NULL, 10);
        if (ms <= 0 || ms > 60000)
                return;
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
#endif
}

static int connect_timeout(const struct addrinfo *a)
{
        int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -1;
        if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 && errno != EINPROGRESS) {
                close(fd);
                return -1;
        }
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int e = 0;
        socklen_t len = sizeof(e);
        if (poll(&p, 1, CONNECT_TIMEOUT_MS) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0 || e) {
                close(fd);
                return -1;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        return fd;
}

static void addr_text(const struct sockaddr *sa, char *buf, size_t size)
{
        const void *a = sa->sa_family == AF_INET
                                ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
                                : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (!inet_ntop(sa->sa_family, a, buf, (socklen_t)size))
                snprintf(buf, size, "?");
}

/* Resolve host once, refuse it when any address it resolves to is denied (unless the rule
 * allows private ones), and connect to an address that passed: the one checked is the one
 * used, so a second answer (DNS rebinding) never reaches a socket.  Returns the connected
 * descriptor, or -1 with why set; addr gets the address. */
static int resolve_connect(const char *host, unsigned port, bool private_ok, char *addr, size_t size,
                           char *why, size_t why_size)
{
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
        struct addrinfo *ai = NULL;
        char service[8];
        int fd = -1;

        snprintf(service, sizeof(service), "%u", port);
        snprintf(addr, size, "-");
        test_stall(host);
        int g = getaddrinfo(host, service, &hints, &ai);
        if (g != 0 || !ai) {
                snprintf(why, why_size, "cannot resolve: %s", gai_strerror(g));
                return -1;
        }
        for (struct addrinfo *a = ai; a; a = a->ai_next) {
                const char *bad = netproxy_addr_denied(a->ai_addr);
                if (bad && !private_ok) {
                        addr_text(a->ai_addr, addr, size);
                        snprintf(why, why_size, "resolves to %s address %s; list it as private:%s to allow",
                                 bad, addr, host);
                        freeaddrinfo(ai);
                        return -1;
                }
        }
        for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next)
                if ((a->ai_family == AF_INET || a->ai_family == AF_INET6) && (fd = connect_timeout(a)) >= 0)
                        addr_text(a->ai_addr, addr, size);
        freeaddrinfo(ai);
        if (fd < 0)
                snprintf(why, why_size, "cannot connect");
        return fd;
}

/* Copy bytes both ways until both sides are done. */
static void relay(int client, int up)
{
        static char buf[RELAY_BUF];
        bool open[2] = {true, true};
        int fds[2] = {client, up};

        while (open[0] || open[1]) {
                struct pollfd p[2] = {{.fd = open[0] ? client : -1, .events = POLLIN},
                                      {.fd = open[1] ? up : -1, .events = POLLIN}};
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return;
                }
                for (int d = 0; d < 2; d++) {
                        if (!(p[d].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        ssize_t n = read(fds[d], buf, sizeof(buf));
                        if (n <= 0) {
                                open[d] = false;
                                shutdown(fds[!d], SHUT_WR);
                        } else if (!write_all(fds[!d], buf, (size_t)n))
                                return;
                }
        }
}

/* Split "host:port" or "[v6]:port" in place; the port defaults to def. */
static bool split_hostport(char *hp, unsigned def, char **host, unsigned *port)
{
        char *p = NULL;
        uint16_t v;

        *port = def;
        if (hp[0] == '[') {
                char *end = strchr(hp, ']');
                if (!end || (end[1] && end[1] != ':'))
                        return false;
                *end = '\0';
                *host = hp + 1;
                p = end[1] ? end + 2 : NULL;
        } else {
                *host = hp;
                if ((p = strchr(hp, ':'))) {
                        if (strchr(p + 1, ':'))
                                return false;
                        *p++ = '\0';
                }
        }
        if (p) {
                if (!parse_port(p, &v))
                        return false;
                *port = v;
        }
        return **host != '\0';
}

/* Read the request's head (up to the blank line); returns its length, the bytes after it
 * stay in req[head..len). */
static ssize_t read_head(int fd, char *req, size_t *len)
{
        *len = 0;
        while (*len < REQ_MAX) {
                ssize_t n = read(fd, req + *len, REQ_MAX - *len);
                if (n <= 0)
                        return -1;
                *len += (size_t)n;
                req[*len] = '\0';
                char *end = strstr(req, "\r\n\r\n");
                if (end)
                        return end + 4 - req;
        }
        return -2;
}

/* Printable for the log: the host as the sandbox sent it, or a placeholder. */
static const char *loggable(const char *host)
{
        return strlen(host) < 256 &&
                               strspn(host,
                                      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:") ==
                                       strlen(host)
                       ? host
                       : "(unprintable host)";
}

struct request {
        char method[16], target[2048], version[16];
        char hostport[300];
        char *host;    /* in hostport */
        unsigned port;
        const char *rest; /* plain HTTP: the path and what follows, in target */
        bool connect;
};

/* Parse the request line; false after answering the client when it is malformed. */
static bool parse_request(int client, const char *req, struct request *r)
{
        /* The method is logged: letters only, as HTTP's are. */
        if (sscanf(req, "%15s %2047s %15s", r->method, r->target, r->version) != 3 ||
            strspn(r->method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(r->method)) {
                reply(client, "400 Bad Request");
                return false;
        }
        r->connect = !strcasecmp(r->method, "CONNECT");
        const char *hp = r->target;
        r->rest = NULL;
        if (!r->connect) {
                /* Absolute form: http://host[:port]/path; https must come through CONNECT. */
                if (strncasecmp(r->target, "http://", 7) != 0) {
                        reply(client, "400 Bad Request");
                        return false;
                }
                hp = r->target + 7;
                r->rest = hp + strcspn(hp, "/?#");
        }
        snprintf(r->hostport, sizeof(r->hostport), "%.*s", r->rest ? (int)(r->rest - hp) : (int)strlen(hp),
                 hp);
        if (!split_hostport(r->hostport, r->connect ? 443 : 80, &r->host, &r->port)) {
                reply(client, "400 Bad Request");
                return false;
        }
        return true;
}

/* The connection is made: answer CONNECT, or forward a plain request in origin form
 * ("GET /path HTTP/1.1" and the rest as sent), then whatever followed the head. */
static bool forward(int client, int up, const char *req, size_t head, size_t len, const struct request *r)
{
        if (r->connect) {
                const char *ok = "HTTP/1.1 200 Connection established\r\n\r\n";
                if (!write_all(client, ok, strlen(ok)))
                        return false;
        } else {
                const char *after = strstr(req + strlen(r->method), r->target) + strlen(r->target);
                char line[2100];
                int n = snprintf(line, sizeof(line), "%s %s%s", r->method, *r->rest == '/' ? "" : "/",
                                 r->rest);
                if (n < 0 || (size_t)n >= sizeof(line) || !write_all(up, line, (size_t)n) ||
                    !write_all(up, after, (size_t)(req + head - after)))
                        return false;
        }
        return head >= len || write_all(up, req + head, len - head);
}

/* One connection, in its own process: request, decision, connection, relay. */
static void handle(const struct proxy_ctx *c, int client)
{
        static char req[REQ_MAX + 1];
        char addr[64], why[256];
        size_t len;
        struct timeval tv = {.tv_sec = REQUEST_TIMEOUT_S};
        struct request r;

        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        ssize_t head = read_head(client, req, &len);
        if (head < 0) {
                if (head == -2)
                        reply(client, "431 Request Header Fields Too Large");
                return;
        }
        if (!parse_request(client, req, &r))
                return;
        const char *refusal = NULL;
        const struct netproxy_rule *rule = netproxy_match(c->rules, c->n, r.host, r.port, &refusal);
        if (!rule) {
                log_line(c, "refused %s %s:%u (%s)", r.method, loggable(r.host), r.port, refusal);
                reply(client, "403 Forbidden (txbox: not in --net=allow)");
                return;
        }
        alarm(RESOLVE_TIMEOUT_S + CONNECT_TIMEOUT_MS / 1000);
        int up = resolve_connect(r.host, r.port, rule->private_ok, addr, sizeof(addr), why, sizeof(why));
        alarm(0);
        if (up < 0) {
                bool denied = str_has_prefix(why, "resolves to");
                log_line(c, "%s %s %s:%u (%s)", denied ? "refused" : "failed", r.method, loggable(r.host),
                         r.port, why);
                reply(client, denied ? "403 Forbidden (txbox: private address)" : "502 Bad Gateway");
                return;
        }
        log_line(c, "allowed %s %s:%u via %s", r.method, loggable(r.host), r.port, addr);
        tv.tv_sec = 0;
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        if (forward(client, up, req, (size_t)head, len, &r))
                relay(client, up);
}

static void reap(unsigned *active, bool block)
{
        while (*active > 0 && waitpid(-1, NULL, block ? 0 : WNOHANG) > 0) {
                (*active)--;
                block = false;
        }
}

__attribute__((noreturn)) static void proxy_main(const struct proxy_ctx *c, int listen_fd)
{
        unsigned active = 0;

        for (;;) {
                reap(&active, active >= NETPROXY_MAX_CONNS);
                int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0) {
                        if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE)
                                continue;
                        _exit(1);
                }
                pid_t self = getpid(), pid = fork();
                if (pid == 0) {
                        if (die_with_parent(self) < 0)
                                _exit(1);
                        close(listen_fd);
                        handle(c, fd);
                        _exit(0);
                }
                if (pid > 0)
                        active++;
                else
                        reply(fd, "503 Service Unavailable");
                close(fd);
        }
}

/* The listening socket, once the sandbox's init has made it (-1 when it never comes). */
static int receive_listener(int sock)
{
        char byte, cbuf[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        ssize_t n;
        int fd;

        while ((n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
                ;
        struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
        if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
                return -1;
        memcpy(&fd, CMSG_DATA(c), sizeof(int));
        return fd;
}

/* In the proxy process: keep only the two descriptors it needs, die with the supervisor,
 * write nothing anywhere (Landlock), gain nothing by exec.  It parses what the sandbox sends:
 * a bug there should not hand the sandbox the supervisor's powers. */
static void proxy_confine(pid_t supervisor, int *sock, int *log_fd)
{
        sigset_t none;

        if (die_with_parent(supervisor) < 0)
                _exit(1);
        if (dup3(*sock, 3, O_CLOEXEC) < 0 || dup3(*log_fd, 4, O_CLOEXEC) < 0)
                _exit(1);
        *sock = 3;
        *log_fd = 4;
        if (sys_close_range(5, ~0U, 0) < 0)
                _exit(1);
        for (int sig = 1; sig < NSIG; sig++)
                signal(sig, SIG_DFL);
        signal(SIGPIPE, SIG_IGN);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        static const char *const no_writes[] = {NULL};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || guard_landlock_apply(no_writes) < 0)
                _exit(1);
}

/* Forked while the supervisor runs no other thread (before the sandbox is cloned): the
 * resolver it calls loads modules and takes locks that another thread could have held. */
int netproxy_start(const struct netproxy_rule *rules, size_t n, struct netproxy **out,
                   struct txbox_error *err)
{
        int lp[2], sp[2];

        if (pipe2(lp, O_CLOEXEC) < 0)
                return tx_err(err, errno, "cannot start the network proxy: %s", strerror(errno));
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
                int e = errno;
                close(lp[0]), close(lp[1]);
                return tx_err(err, e, "cannot start the network proxy: %s", strerror(e));
        }
        fcntl(lp[1], F_SETFL, O_NONBLOCK);
        pid_t self = getpid(), pid = fork();
        if (pid == 0) {
                struct proxy_ctx c = {.rules = rules, .n = n, .log_fd = lp[1]};
                int sock = sp[1];
                setpgid(0, 0);
                proxy_confine(self, &sock, &c.log_fd);
                int listen_fd = receive_listener(sock);
                if (listen_fd < 0)
                        _exit(0); /* the sandbox never asked for it */
                close(sock);
                fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) & ~O_NONBLOCK);
                proxy_main(&c, listen_fd);
        }
        int e = errno;
        close(lp[1]);
        close(sp[1]);
        if (pid < 0) {
                close(lp[0]);
                close(sp[0]);
                return tx_err(err, e, "cannot start the network proxy: %s", strerror(e));
        }
        setpgid(pid, pid); /* both sides: whichever runs first, the group exists before a kill */
        struct netproxy *p = xcalloc(1, sizeof(*p));
        p->pid = pid;
        p->log_fd = lp[0];
        p->sock = sp[0];
        *out = p;
        return 0;
}

int netproxy_listen(struct netproxy *p, int listen_fd)
{
        char byte = 'p', cbuf[CMSG_SPACE(sizeof(int))] = {0};
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        int r = 0;

        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &listen_fd, sizeof(int));
        if (sendmsg(p->sock, &mh, MSG_NOSIGNAL) != 1)
                r = -errno;
        close(listen_fd);
        closep(&p->sock);
        return r;
}

void netproxy_stop(struct netproxy *p, char *log, size_t size)
{
        char buf[LOG_MAX * LOG_LINE];
        size_t len = 0, off = 0, entries = 0;
        ssize_t n;

        if (size)
                log[0] = '\0';
        if (!p)
                return;
        kill(-p->pid, SIGKILL);
        kill(p->pid, SIGKILL);
        while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        fcntl(p->log_fd, F_SETFL, O_NONBLOCK);
        while (len < sizeof(buf) - 1 && (n = read(p->log_fd, buf + len, sizeof(buf) - 1 - len)) > 0)
                len += (size_t)n;
        buf[len] = '\0';
        for (char *s = buf, *nl; (nl = strchr(s, '\n')) && entries < LOG_MAX && off + 1 < size;
             s = nl + 1, entries++) {
                *nl = '\0';
                off += (size_t)snprintf(log + off, size - off, "%s%s", entries ? ", " : "", s);
        }
        closep(&p->sock);
        close(p->log_fd);
        free(p);
}
