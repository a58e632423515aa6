/* Host-name lookups for egress (egress.h), with c-ares on the daemon's own loop: no thread.
 * c-ares's sockets are watched with a uv_poll_t each (ARES_OPT_SOCK_STATE_CB) and its
 * retransmissions and timeouts are driven by one uv_timer_t (ares_timeout, ares_process_fd),
 * so that a lookup a DNS server never answers costs a few hundred bytes of c-ares's state,
 * not a thread (libuv's pool, where uv_getaddrinfo blocked a thread until the resolver gave
 * up, was shared by everyone: owners whose lookups hung took every place).
 *
 * All lookups share one c-ares channel: one UDP socket per name server while queries are in
 * flight (TCP only for a truncated answer), whatever the number of lookups, rather than a
 * channel each: that would cost ~115 us of the loop per lookup (ares_init_options reads
 * resolv.conf and friends; measured on this project's build machine) and an fd per lookup
 * until c-ares gives it up, up to EGRESS_LOOKUPS_MAX of them to fit beside the workers'
 * (fdlimit.h). The price: one source port for a server's queries in flight. A lookup cancelled or
 * past its deadline is forgotten (its callback is never called), but its queries run on in c-ares
 * until they end: ares_cancel would end every lookup of the channel. c-ares gives a name server
 * that does not answer up after EGRESS_LOOKUP_TRY_MS, then tries it again (and each other one)
 * once, waiting twice as long: at most 3 x EGRESS_LOOKUP_TRY_MS per name server (c-ares uses each
 * one resolv.conf lists; glibc reads at most 3), whatever resolv.conf's timeout and attempts say.
 * Until then such a lookup still counts against the bounds below.
 *
 * Bounds: at most EGRESS_LOOKUPS_MAX lookups are in c-ares at once, and at most
 * EGRESS_LOOKUPS_MAX_PER_OWNER of one owner (the peer uid), those forgotten included; past
 * either, egress_lookup_start fails at once with PF_E_BUSY and a message saying which. They
 * bound c-ares's memory (and the work of ares_timeout, linear in the queries in flight), not
 * fds: the channel's sockets are per name server.
 *
 * c-ares reads /etc/resolv.conf (once, when the lookups are made: egress_lookups_new) and
 * /etc/hosts (at each lookup, before DNS: "fb") itself; it does not use glibc's NSS modules
 * (nsswitch.conf: nss-resolve, mdns, ldap...). Names are asked for with AF_UNSPEC: A and AAAA.
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

#define EGRESS_LOOKUPS_MAX           1024
#define EGRESS_LOOKUPS_MAX_PER_OWNER 64
/* c-ares's first wait for a name server's answer (ARES_OPT_TIMEOUTMS), doubled at the second
 * try (ARES_OPT_TRIES 2). */
#define EGRESS_LOOKUP_TRY_MS 1000
/* The most addresses of one answer handed to the callback. */
#define EGRESS_LOOKUP_MAX_ADDRESSES 32

struct egress_lookups; /* an engine's lookups, and the c-ares channel they share */
struct egress_lookup;  /* one lookup asked for, until it answers or is cancelled */

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

/* Reads resolv.conf into a new channel on loop. NULL with *err when c-ares cannot start. */
struct egress_lookups *egress_lookups_new(uv_loop_t *loop, struct pf_error **err);

/* No lookup is answered any more: each still asked for is cancelled (its callback not called,
 * its handle invalid), the channel is destroyed (its queries end now, unanswered: nothing
 * waits for a name server), and l is freed once its handles are closed. l may be NULL. */
void egress_lookups_close(struct egress_lookups *l);

/* Looks host up for owner, answering cb(ctx, ...) within timeout_ms. NULL with *err (cb is not
 * called): PF_E_BUSY past a bound (the message names it), PF_E_INTERNAL out of memory. */
struct egress_lookup *egress_lookup_start(struct egress_lookups *l, const char *host,
                                          uint64_t owner, uint64_t timeout_ms, egress_lookup_cb cb,
                                          void *ctx, struct pf_error **err);

/* The asker is gone: the callback is never called. Its queries end in c-ares (within the bound
 * above), counted until then. q may be NULL. */
void egress_lookup_cancel(struct egress_lookup *q);

/* Lookups in c-ares now, forgotten ones included, all owners' or owner's. */
unsigned egress_lookups_in_flight(const struct egress_lookups *l);
unsigned egress_lookups_in_flight_for(const struct egress_lookups *l, uint64_t owner);

#endif
