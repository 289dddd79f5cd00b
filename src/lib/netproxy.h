/* --net=allow:HOST,...: an HTTP proxy in the supervisor that lets the sandbox reach only
 * the listed hosts.  The sandbox has its own network namespace with only loopback; its init
 * listens on 127.0.0.1:NETPROXY_PORT there and hands the listening socket to the supervisor,
 * which accepts, reads the request (CONNECT host:port, or an absolute-form http:// request),
 * checks the host against the list, connects out from the host's network and relays bytes. */
#ifndef TXBOX_NETPROXY_H
#define TXBOX_NETPROXY_H

#include <poll.h>

#include "util.h"

#define NETPROXY_PORT 3128
#define NETPROXY_MAX_CONNS 64

struct netproxy;

/* Take ownership of listen_fd; hosts is NULL-terminated ("example.com" matches it and its
 * subdomains; "*.example.com" only the subdomains). */
struct netproxy *netproxy_new(int listen_fd, char *const *hosts);
/* Fill up to max pollfds; returns how many. */
size_t netproxy_pollfds(struct netproxy *p, struct pollfd *fds, size_t max);
/* Handle what poll() reported for the fds netproxy_pollfds() gave. */
void netproxy_handle(struct netproxy *p, const struct pollfd *fds, size_t n);
/* Every attempt so far, one line each ("allowed CONNECT host:443", "refused GET host:80
 * (not in the allow list)"), comma-separated into buf. */
void netproxy_log(const struct netproxy *p, char *buf, size_t size);
void netproxy_free(struct netproxy *p);

/* Does host match the allow list? */
bool netproxy_host_allowed(char *const *hosts, const char *host);

#endif
