/* --net=allow:HOST,...: an HTTP proxy outside the sandbox that lets it reach only the listed
 * hosts.  The sandbox has its own network namespace with only loopback; its init listens on
 * 127.0.0.1:NETPROXY_PORT there and hands the listening socket to the supervisor, which gives
 * it to a proxy process of its own (forked before the sandbox, in the host's network).  The proxy forks one
 * handler per connection: it reads the request (CONNECT host:port, or an absolute-form
 * http:// request), checks the host and port against the list, resolves the name once,
 * checks every address it resolves to against a deny list (loopback, private, link-local,
 * ...), connects to exactly an address that passed, and relays bytes.  Nothing of this runs
 * in the supervisor's loop, so a slow resolver never delays an exec check or a limit.
 *
 * Entries of the list (docs/SECURITY.md, "Network"):
 *   NAME          NAME and its subdomains, ports 80 and 443, public addresses only
 *   *.NAME        its subdomains only
 *   NAME:PORT     that port only
 *   A.B.C.D[:PORT], [V6][:PORT]   exactly that address (private ones too: it was typed)
 *   private:NAME[:PORT]           NAME may resolve to private and loopback addresses */
#ifndef TXBOX_NETPROXY_H
#define TXBOX_NETPROXY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct txbox_error;

#define NETPROXY_PORT 3128
#define NETPROXY_MAX_CONNS 64
#define NETPROXY_RULES_MAX 256

struct netproxy_rule {
        char host[254];       /* a name, lowercase, without "*." (unused for a literal) */
        bool subdomains_only; /* "*.NAME" */
        bool literal;         /* an IP address, in family/addr */
        bool private_ok;      /* "private:" (implied for a literal) */
        int family;           /* AF_INET or AF_INET6, for a literal */
        unsigned char addr[16];
        uint16_t port;        /* 0: 80 and 443 */
};

/* Parse one entry; on error err says what is wrong with it. */
int netproxy_rule_parse(const char *entry, struct netproxy_rule *out, struct txbox_error *err);

/* Why addr must not be reached unless the user asked for it ("loopback", "private", ...), or
 * NULL for a public unicast address.  IPv4-mapped, NAT64 and 6to4 forms are judged by the
 * IPv4 address they carry. */
const char *netproxy_addr_denied(const struct sockaddr *addr);

/* The rule that admits a request for host:port, or NULL (with *why saying why not).  host
 * is as the request gave it (a name or an address literal, without brackets). */
const struct netproxy_rule *netproxy_match(const struct netproxy_rule *rules, size_t n, const char *host,
                                           unsigned port, const char **why);

struct netproxy;

/* Start the proxy process with rules (copied); it serves nothing until netproxy_listen.
 * Call while no other thread runs (the resolver takes locks a fork would copy held).
 * Returns 0, or -errno with err set. */
int netproxy_start(const struct netproxy_rule *rules, size_t n, struct netproxy **out,
                   struct txbox_error *err);
/* Hand it the sandbox's listening socket (taken over: closed here in any case). */
int netproxy_listen(struct netproxy *p, int listen_fd);
/* End the proxy and every connection it holds; put its log of attempts, one entry each
 * ("allowed CONNECT host:443 via 93.184.216.34", "refused GET localhost:80 (resolves to
 * loopback address 127.0.0.1)"), comma-separated into log.  NULL is fine. */
void netproxy_stop(struct netproxy *p, char *log, size_t size);

#endif
