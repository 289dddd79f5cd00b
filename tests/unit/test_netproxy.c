/* The allow list of --net=allow (netproxy.c): which entries parse, which addresses the deny
 * list refuses in every spelling, and which requests a list admits.  Pure functions: no
 * network, no resolver beyond numeric parsing. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>

#include "base/macros.h"
#include "sandbox/netproxy.h"
#include "tap.h"
#include "txbox.h"

/* The deny list's verdict on an address given as text (v4 or v6). */
static const char *denied(const char *text)
{
        struct sockaddr_in a4 = {.sin_family = AF_INET};
        struct sockaddr_in6 a6 = {.sin6_family = AF_INET6};
        if (inet_pton(AF_INET, text, &a4.sin_addr) == 1)
                return netproxy_addr_denied((struct sockaddr *)&a4);
        if (inet_pton(AF_INET6, text, &a6.sin6_addr) == 1)
                return netproxy_addr_denied((struct sockaddr *)&a6);
        return "unparsed";
}

static void deny_list(void)
{
        static const char *const refused[] = {
                "127.0.0.1", "127.255.255.254", "10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.255",
                "192.168.1.1", "169.254.169.254", "169.254.0.1", "100.64.0.1", "0.0.0.0", "224.0.0.1",
                "239.255.255.250", "255.255.255.255", "240.0.0.1", "192.0.2.1", "198.18.0.1",
                "::", "::1", "::ffff:127.0.0.1", "::ffff:10.1.2.3", "::ffff:169.254.169.254", "::127.0.0.1",
                "fc00::1", "fd12:3456::1", "fe80::1", "febf::1", "fec0::1", "ff02::1", "2001:db8::1",
                "64:ff9b::a00:1", "64:ff9b::7f00:1", "64:ff9b:1::1", "2002:7f00:1::1", "2002:a9fe:a9fe::1",
                "2001::1", "100::1",
        };
        static const char *const allowed[] = {
                "93.184.216.34", "1.1.1.1", "8.8.8.8", "172.32.0.1", "172.15.255.255", "192.169.0.1",
                "169.253.255.255", "100.128.0.1", "11.0.0.1", "2606:2800:220:1::1", "2a00:1450:4001::200e",
                "::ffff:93.184.216.34", "64:ff9b::5db8:d822", "2002:5db8:d822::1",
        };
        for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
                ok(denied(refused[i]) != NULL, "%s is refused (%s)", refused[i],
                   denied(refused[i]) ? denied(refused[i]) : "-");
        for (size_t i = 0; i < ARRAY_SIZE(allowed); i++)
                ok(denied(allowed[i]) == NULL, "%s is public", allowed[i]);
        is_str(denied("169.254.169.254"), "link-local", "the cloud metadata address is link-local");
        is_str(denied("::ffff:127.0.0.1"), "loopback", "an IPv4-mapped loopback address is loopback");
}

static void parse(void)
{
        struct netproxy_rule r;
        struct txbox_error e;

        ok(netproxy_rule_parse("Example.COM", &r, &e) == 0 && !strcmp(r.host, "example.com") && !r.port &&
                   !r.private_ok && !r.literal,
           "a name: lowercased, ports 80 and 443, public only");
        ok(netproxy_rule_parse("*.example.com", &r, &e) == 0 && r.subdomains_only &&
                   !strcmp(r.host, "example.com"),
           "*.name: subdomains only");
        ok(netproxy_rule_parse("example.com:8443", &r, &e) == 0 && r.port == 8443, "NAME:PORT");
        ok(netproxy_rule_parse("private:intranet.corp:8080", &r, &e) == 0 && r.private_ok && r.port == 8080 &&
                   !strcmp(r.host, "intranet.corp"),
           "private:NAME:PORT opts in to private addresses");
        ok(netproxy_rule_parse("127.0.0.1:8000", &r, &e) == 0 && r.literal && r.private_ok &&
                   r.family == AF_INET && r.port == 8000,
           "an IPv4 literal is an explicit choice");
        ok(netproxy_rule_parse("[::1]:8000", &r, &e) == 0 && r.literal && r.family == AF_INET6 &&
           r.port == 8000,
           "an IPv6 literal in brackets");
        ok(netproxy_rule_parse("[::ffff:10.0.0.1]", &r, &e) == 0 && r.literal && r.family == AF_INET,
           "an IPv4-mapped literal is the IPv4 address");
        static const char *const bad[] = {"",         "a b",      "::1",        "host:0",     "host:65536",
                                          "host:80x", "127.1",    "0x7f000001", "2130706433", "exa..mple",
                                          ".example", "example.", "[::1",       "[nothost]",  "host:80:90",
                                          "private:", "x/y",      "ho\tst"};
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                ok(netproxy_rule_parse(bad[i], &r, &e) == -EINVAL, "'%s' is refused: %s", bad[i], e.msg);
}

static void match(void)
{
        const char *const entries[] = {"example.com", "*.cdn.net", "api.test:8443", "private:mirror.corp",
                                       "10.1.2.3:3128", "[fd00::5]"};
        struct netproxy_rule rules[ARRAY_SIZE(entries)];
        struct txbox_error e;
        const char *why = NULL;
        const struct netproxy_rule *m;

        for (size_t i = 0; i < ARRAY_SIZE(entries); i++)
                netproxy_rule_parse(entries[i], &rules[i], &e);
        size_t n = ARRAY_SIZE(rules);
        ok(netproxy_match(rules, n, "example.com", 443, &why) == &rules[0], "a listed name on 443");
        ok(netproxy_match(rules, n, "www.EXAMPLE.com.", 80, &why) == &rules[0],
           "a subdomain, any case, trailing dot");
        ok(!netproxy_match(rules, n, "example.com", 8080, &why) && strstr(why, "port"),
           "an unlisted port: %s", why);
        ok(!netproxy_match(rules, n, "badexample.com", 443, &why), "a name that only ends the same way");
        ok(!netproxy_match(rules, n, "cdn.net", 443, &why), "*.name does not admit the name itself");
        ok(netproxy_match(rules, n, "a.cdn.net", 443, &why) == &rules[1], "*.name admits a subdomain");
        ok(netproxy_match(rules, n, "api.test", 8443, &why) == &rules[2], "NAME:PORT admits that port");
        ok(!netproxy_match(rules, n, "api.test", 443, &why), "... and only that port");
        m = netproxy_match(rules, n, "mirror.corp", 443, &why);
        ok(m && m->private_ok, "private:NAME keeps its opt-in");
        ok(!netproxy_match(rules, n, "93.184.216.34", 443, &why) && strstr(why, "address"),
           "an address matches no name rule: %s", why);
        ok(netproxy_match(rules, n, "10.1.2.3", 3128, &why) == &rules[4], "a listed address and port");
        ok(!netproxy_match(rules, n, "10.1.2.3", 443, &why), "a listed address on another port");
        ok(!netproxy_match(rules, n, "10.1.2.4", 3128, &why), "another address");
        ok(netproxy_match(rules, n, "::ffff:10.1.2.3", 3128, &why) == &rules[4],
           "the same address IPv4-mapped");
        ok(netproxy_match(rules, n, "0xa010203", 3128, &why) == &rules[4],
           "the same address in hex (resolvers accept it)");
        ok(!netproxy_match(rules, n, "127.1", 443, &why),
           "a short form of loopback is an address, not a name");
        ok(!netproxy_match(rules, n, "2130706433", 80, &why), "a decimal form of loopback likewise");
        ok(netproxy_match(rules, n, "fd00::5", 443, &why) == &rules[5], "a listed IPv6 address");
        ok(!netproxy_match(rules, n, "exa mple.com", 443, &why), "a malformed name");
        ok(!netproxy_match(rules, n, "", 443, &why), "an empty host");
}

int main(void)
{
        deny_list();
        parse();
        match();
        return tap_done();
}
