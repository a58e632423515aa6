/* Host-name lookups for egress (egress.h), with c-ares on the daemon's own loop: no thread.
 * c-ares's sockets are watched with a uv_poll_t each (ARES_OPT_SOCK_STATE_CB) and its
 * retransmissions and timeouts are driven by a uv_timer_t (ares_timeout, ares_process_fd), so
 * that a lookup a DNS server never answers costs a channel, not a thread (libuv's pool, where
 * uv_getaddrinfo blocked a thread until the resolver gave up, was shared by everyone: owners
 * whose lookups hung took every place).
 *
 * Each lookup has a c-ares channel of its own, made when it starts (ares_init_options) and
 * destroyed when it is answered, cancelled, past its deadline or closed (ares_destroy), with
 * its own sockets, poll handles and timer. So:
 * - its queries leave from sockets of its own, each bound to a random ephemeral port by the
 *   kernel, as glibc's resolver does per query: an off-path spoofer has to guess the source
 *   port too, not only the 16-bit query id (c-ares 1.18 keeps one UDP socket per name server
 *   for all of a channel's queries in flight; ARES_OPT_UDP_MAX_QUERIES came in 1.20);
 * - /etc/resolv.conf is read when the lookup starts: a network change is honoured at once;
 * - a lookup whose asker is gone (cancelled, its request ended) ends then: its sockets are
 *   closed at once, its queries dropped, and it counts against no bound. Only lookups someone
 *   waits for hold anything.
 * The price, measured on this project's build machine (c-ares 1.18.1, 2 busy cores): ~115 us
 * of the loop per lookup for ares_init_options plus ares_destroy (it reads resolv.conf and
 * /dev/urandom, not /etc/hosts), beside a DNS answer's round trip and the TLS handshake that
 * follows. /etc/hosts is read by every lookup, as it was with one shared channel: ~35-90 ms
 * of the loop for 100,000 lines, ~850 ms for a million (c-ares parses it whole each time).
 *
 * c-ares gives a name server that does not answer up after EGRESS_LOOKUP_TRY_MS, then tries it
 * again (and each other one) once, waiting twice as long: at most 3 x EGRESS_LOOKUP_TRY_MS per
 * name server, whatever resolv.conf's timeout and attempts say; the lookup's deadline (the
 * request's timeout) ends it sooner. It asks the first EGRESS_LOOKUP_SERVERS_MAX name servers
 * resolv.conf lists, as glibc does (MAXNS).
 *
 * Bounds: at most max_in_flight lookups (egress_lookups_new: the daemon gives max_workers) run
 * at once, and at most EGRESS_LOOKUPS_MAX_PER_OWNER of one owner (the peer uid); past either,
 * egress_lookup_start fails at once with PF_E_BUSY and a message saying which. A worker makes
 * one egress request at a time and its lookup ends with it, so live workers bound the lookups
 * first; these bounds say so explicitly. Each lookup holds at most EGRESS_LOOKUP_FDS_MAX fds
 * (a UDP socket per name server asked, a TCP one too after a truncated answer), counted in each
 * worker's share of the fd budget (fdlimit.h); what it opens and closes at once (resolv.conf,
 * /dev/urandom, /etc/hosts) is in the daemon's own.
 *
 * c-ares reads /etc/hosts (at each lookup, before DNS: "fb") itself; it does not use glibc's
 * NSS modules (nsswitch.conf: nss-resolve, mdns, ldap...). Names are asked for with
 * AF_UNSPEC: A and AAAA.
 *
 * A lookup answers once, on the loop thread, never from within egress_lookup_start (an answer
 * from /etc/hosts comes at once: it is handed over at the next timer): with its addresses, an
 * error, or UV_ETIMEDOUT when its deadline passes first. */
#ifndef DAEMON_EGRESS_LOOKUP_H
#define DAEMON_EGRESS_LOOKUP_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "pf_error.h"

#define EGRESS_LOOKUPS_MAX_PER_OWNER 64
/* The name servers of resolv.conf a lookup asks, and the fds it may hold: a UDP and a TCP
 * socket for each. */
#define EGRESS_LOOKUP_SERVERS_MAX 3
#define EGRESS_LOOKUP_FDS_MAX     (2 * EGRESS_LOOKUP_SERVERS_MAX)
/* c-ares's first wait for a name server's answer (ARES_OPT_TIMEOUTMS), doubled at the second
 * try (ARES_OPT_TRIES 2). */
#define EGRESS_LOOKUP_TRY_MS 1000
/* The most addresses of one answer handed to the callback. */
#define EGRESS_LOOKUP_MAX_ADDRESSES 32

struct egress_lookups; /* an engine's lookups under way, and their bounds */
struct egress_lookup;  /* one lookup and its channel, until it answers or is cancelled */

struct egress_address {
    int family; /* AF_INET or AF_INET6 */
    union {
        struct in_addr v4;
        struct in6_addr v6;
    } addr;
};

/* status 0: addrs[0..n) is the answer (borrowed for the call), n >= 1. Else a libuv error and
 * no address: UV_ETIMEDOUT (the deadline passed), UV_EAI_NONAME (no such name, or no address
 * for it), UV_EAI_AGAIN (the name servers did not answer, or failed), UV_ENOMEM, UV_EAI_FAIL;
 * why says it in c-ares's words (a static string; NULL for UV_ETIMEDOUT). The lookup is gone
 * once this is called. */
typedef void (*egress_lookup_cb)(void *ctx, int status, const struct egress_address *addrs,
                                 size_t n, const char *why);

/* Lookups on loop, at most max_in_flight at once. NULL with *err when c-ares cannot start (a
 * channel is made and destroyed to see it). */
struct egress_lookups *egress_lookups_new(uv_loop_t *loop, unsigned max_in_flight,
                                          struct pf_error **err);

/* No lookup is answered any more: each still under way is cancelled (its callback not called,
 * its handle invalid), and l is freed. Their handles close on the loop's next iterations, which
 * frees them. l may be NULL. */
void egress_lookups_close(struct egress_lookups *l);

/* Looks host up for owner, answering cb(ctx, ...) within timeout_ms. NULL with *err (cb is not
 * called): PF_E_BUSY past a bound (the message names it), PF_E_INTERNAL out of memory or when
 * c-ares cannot start. */
struct egress_lookup *egress_lookup_start(struct egress_lookups *l, const char *host,
                                          uint64_t owner, uint64_t timeout_ms, egress_lookup_cb cb,
                                          void *ctx, struct pf_error **err);

/* The asker is gone: the callback is never called, the lookup ends now (its sockets closed)
 * and counts no more. q is one still under way (not answered, not closed), or NULL. */
void egress_lookup_cancel(struct egress_lookup *q);

/* Lookups under way now, all owners' or owner's. */
unsigned egress_lookups_in_flight(const struct egress_lookups *l);
unsigned egress_lookups_in_flight_for(const struct egress_lookups *l, uint64_t owner);

#endif
