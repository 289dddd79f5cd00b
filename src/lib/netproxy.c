/* The allow-list HTTP proxy of --net=allow (see netproxy.h). */
#define _GNU_SOURCE
#include "netproxy.h"

#include <netdb.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>

#define REQ_MAX 8192
#define BUF_SIZE 65536
#define CONNECT_TIMEOUT_S 10
#define LOG_MAX 64

enum conn_state { READING_REQUEST, RELAYING };

struct conn {
        int client, upstream;
        enum conn_state state;
        char req[REQ_MAX + 1];
        size_t req_len;
        /* Pending bytes for each direction: [0] client -> upstream, [1] upstream -> client. */
        char *buf[2];
        size_t len[2], off[2];
        bool eof[2];
};

struct netproxy {
        int listen_fd;
        char **hosts;
        struct conn conns[NETPROXY_MAX_CONNS];
        struct strvec log;
};

struct netproxy *netproxy_new(int listen_fd, char *const *hosts)
{
        struct netproxy *p = xcalloc(1, sizeof(*p));
        p->listen_fd = listen_fd;
        p->hosts = strv_dup(hosts);
        for (size_t i = 0; i < NETPROXY_MAX_CONNS; i++)
                p->conns[i].client = p->conns[i].upstream = -1;
        return p;
}

static void conn_close(struct conn *c)
{
        closep(&c->client);
        closep(&c->upstream);
        free(c->buf[0]);
        free(c->buf[1]);
        memset(c, 0, sizeof(*c));
        c->client = c->upstream = -1;
}

void netproxy_free(struct netproxy *p)
{
        if (!p)
                return;
        for (size_t i = 0; i < NETPROXY_MAX_CONNS; i++)
                conn_close(&p->conns[i]);
        closep(&p->listen_fd);
        strv_free(p->hosts);
        strvec_clear(&p->log);
        free(p);
}

bool netproxy_host_allowed(char *const *hosts, const char *host)
{
        size_t hl = strlen(host);
        for (size_t i = 0; hosts && hosts[i]; i++) {
                const char *h = hosts[i];
                bool sub_only = !strncmp(h, "*.", 2);
                if (sub_only)
                        h += 2;
                size_t n = strlen(h);
                if (!sub_only && !strcasecmp(host, h))
                        return true;
                if (hl > n && host[hl - n - 1] == '.' && !strcasecmp(host + hl - n, h))
                        return true;
        }
        return false;
}

/* One line of the log: "VERDICT METHOD host:port (why)". */
static void note(struct netproxy *p, const char *verdict, const char *method, const char *host, const char *port,
                 const char *why)
{
        if (p->log.n < LOG_MAX)
                strvec_push(&p->log, xasprintf("%s %s %s:%s%s", verdict, method, host, port, why));
}

/* A blocking connect with a timeout, from the supervisor's (the host's) network. */
static int connect_out(const char *host, const char *port)
{
        struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
        struct timeval tv = {.tv_sec = CONNECT_TIMEOUT_S};
        int fd = -1;

        if (getaddrinfo(host, port, &hints, &ai) != 0)
                return -1;
        for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
                fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
                if (fd < 0)
                        continue;
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
                if (connect(fd, a->ai_addr, a->ai_addrlen) < 0)
                        closep(&fd);
        }
        freeaddrinfo(ai);
        if (fd >= 0)
                fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        return fd;
}

static void reply(int fd, const char *status)
{
        char msg[256];
        int n = snprintf(msg, sizeof(msg), "HTTP/1.1 %s\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", status);
        if (write(fd, msg, (size_t)n) < 0) {
                /* the client went away: nothing to tell it */
        }
}

/* Split "host:port" (or "[v6]:port"), defaulting the port. */
static void split_hostport(char *hp, const char *def_port, char **host, char **port)
{
        char *colon = hp[0] == '[' ? strstr(hp, "]:") : strrchr(hp, ':');
        if (hp[0] == '[') {
                *host = hp + 1;
                char *end = strchr(hp, ']');
                if (end)
                        *end = '\0';
                *port = colon ? colon + 2 : (char *)def_port;
                return;
        }
        *host = hp;
        *port = (char *)def_port;
        if (colon) {
                *colon = '\0';
                *port = colon + 1;
        }
}

/* The request is complete: decide, connect, and set the connection relaying. */
static void handle_request(struct netproxy *p, struct conn *c)
{
        char method[16], target[2048], version[16], *host, *port;
        const char *def = "80";

        if (sscanf(c->req, "%15s %2047s %15s", method, target, version) != 3) {
                reply(c->client, "400 Bad Request");
                conn_close(c);
                return;
        }
        char *hp = target, *rest = NULL;
        if (strcasecmp(method, "CONNECT") != 0) {
                /* Absolute form: http://host[:port]/path; https must come through CONNECT. */
                if (strncasecmp(target, "http://", 7) != 0) {
                        reply(c->client, "400 Bad Request");
                        conn_close(c);
                        return;
                }
                hp = target + 7;
                rest = strchr(hp, '/');
        } else
                def = "443";
        _cleanup_free_ char *hpcopy = rest ? strndup(hp, (size_t)(rest - hp)) : xstrdup(hp);
        split_hostport(hpcopy, def, &host, &port);
        if (!netproxy_host_allowed(p->hosts, host)) {
                note(p, "refused", method, host, port, " (not in the allow list)");
                reply(c->client, "403 Forbidden (txbox: host not in --net=allow)");
                conn_close(c);
                return;
        }
        c->upstream = connect_out(host, port);
        if (c->upstream < 0) {
                note(p, "failed", method, host, port, " (cannot connect)");
                reply(c->client, "502 Bad Gateway");
                conn_close(c);
                return;
        }
        note(p, "allowed", method, host, port, "");
        c->buf[0] = xmalloc(BUF_SIZE);
        c->buf[1] = xmalloc(BUF_SIZE);
        c->state = RELAYING;
        if (!strcasecmp(method, "CONNECT")) {
                const char *ok = "HTTP/1.1 200 Connection established\r\n\r\n";
                memcpy(c->buf[1], ok, strlen(ok));
                c->len[1] = strlen(ok);
                return;
        }
        /* Forward the request in origin form: "GET /path HTTP/1.1" and the rest as sent. */
        const char *after_target = strstr(c->req, target) + strlen(target);
        int n = snprintf(c->buf[0], BUF_SIZE, "%s %s%s", method, rest ? rest : "/", after_target);
        c->len[0] = n > 0 && n < BUF_SIZE ? (size_t)n : 0;
}

static void read_request(struct netproxy *p, struct conn *c)
{
        ssize_t n = read(c->client, c->req + c->req_len, REQ_MAX - c->req_len);
        if (n <= 0) {
                conn_close(c);
                return;
        }
        c->req_len += (size_t)n;
        c->req[c->req_len] = '\0';
        if (strstr(c->req, "\r\n\r\n"))
                handle_request(p, c);
        else if (c->req_len >= REQ_MAX) {
                reply(c->client, "431 Request Header Fields Too Large");
                conn_close(c);
        }
}

static void accept_one(struct netproxy *p)
{
        int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
                return;
        for (size_t i = 0; i < NETPROXY_MAX_CONNS; i++)
                if (p->conns[i].client < 0) {
                        p->conns[i].client = fd;
                        p->conns[i].state = READING_REQUEST;
                        return;
                }
        reply(fd, "503 Service Unavailable");
        close(fd);
}

/* Move bytes in direction d (0: client -> upstream, 1: upstream -> client). */
static void pump(struct conn *c, int d, short revents_src, short revents_dst)
{
        int src = d == 0 ? c->client : c->upstream, dst = d == 0 ? c->upstream : c->client;
        if ((revents_src & (POLLIN | POLLHUP)) && c->len[d] == 0 && !c->eof[d]) {
                ssize_t n = read(src, c->buf[d], BUF_SIZE);
                if (n <= 0) {
                        c->eof[d] = true;
                        shutdown(dst, SHUT_WR);
                } else
                        c->len[d] = (size_t)n, c->off[d] = 0;
        }
        if ((revents_dst & POLLOUT) && c->len[d] > c->off[d]) {
                ssize_t n = write(dst, c->buf[d] + c->off[d], c->len[d] - c->off[d]);
                if (n > 0)
                        c->off[d] += (size_t)n;
                if (c->off[d] == c->len[d])
                        c->len[d] = c->off[d] = 0;
        }
}

size_t netproxy_pollfds(struct netproxy *p, struct pollfd *fds, size_t max)
{
        size_t n = 0;
        if (max < 1 + 2 * NETPROXY_MAX_CONNS)
                return 0;
        fds[n++] = (struct pollfd){.fd = p->listen_fd, .events = POLLIN};
        for (size_t i = 0; i < NETPROXY_MAX_CONNS; i++) {
                struct conn *c = &p->conns[i];
                /* Two slots per connection, in a fixed place, so handle() finds them again. */
                fds[n] = (struct pollfd){.fd = -1};
                fds[n + 1] = (struct pollfd){.fd = -1};
                if (c->client >= 0) {
                        fds[n].fd = c->client;
                        fds[n].events = (short)((c->state == READING_REQUEST || (c->len[0] == 0 && !c->eof[0]) ? POLLIN : 0) |
                                                (c->len[1] > c->off[1] ? POLLOUT : 0));
                }
                if (c->upstream >= 0) {
                        fds[n + 1].fd = c->upstream;
                        fds[n + 1].events = (short)((c->len[1] == 0 && !c->eof[1] ? POLLIN : 0) |
                                                    (c->len[0] > c->off[0] ? POLLOUT : 0));
                }
                n += 2;
        }
        return n;
}

void netproxy_handle(struct netproxy *p, const struct pollfd *fds, size_t n)
{
        if (n < 1 + 2 * NETPROXY_MAX_CONNS)
                return;
        for (size_t i = 0; i < NETPROXY_MAX_CONNS; i++) {
                struct conn *c = &p->conns[i];
                short rc = fds[1 + 2 * i].revents, ru = fds[2 + 2 * i].revents;
                if (c->client < 0 || (!rc && !ru))
                        continue;
                if (c->state == READING_REQUEST) {
                        if (rc & (POLLIN | POLLHUP | POLLERR))
                                read_request(p, c);
                        continue;
                }
                pump(c, 0, rc, ru);
                pump(c, 1, ru, rc);
                if ((c->eof[0] && c->eof[1] && !c->len[0] && !c->len[1]) || (rc & POLLERR) || (ru & POLLERR))
                        conn_close(c);
        }
        if (fds[0].revents & POLLIN)
                accept_one(p);
}

void netproxy_log(const struct netproxy *p, char *buf, size_t size)
{
        size_t off = 0;
        buf[0] = '\0';
        for (size_t i = 0; p && i < p->log.n && off + 1 < size; i++)
                off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? ", " : "", p->log.v[i]);
}
