/* Host-name lookups for egress (egress.h), on libuv's thread pool (uv_getaddrinfo), so that
 * the threads lookups take are bounded: libcurl's threaded resolver makes a thread per lookup,
 * and one left behind by a transfer that ended mid-lookup runs until getaddrinfo gives up (the
 * resolver's timeout, seconds), so that a snippet with a short egress timeout could leave
 * thousands; under systemd they count against the daemon's TasksMax.
 *
 * At most egress_lookups_max_running() lookups are in the pool at once: what libuv runs
 * concurrently for lookups (half its pool, UV_THREADPOOL_SIZE, rounded up), so that which
 * lookup goes next is decided here rather than by libuv's first-come queue. Lookups wait in
 * the order they were asked for, and one owner (the peer uid) has at most a quarter of those
 * places (at least one): lookups that hang on a DNS server that does not answer hold their
 * place until getaddrinfo gives up, even when nobody waits for the answer any more, and one
 * owner's hung lookups must not make everyone else's wait. What remains: four owners or more
 * whose lookups all hang can take every place, and everyone's lookups then wait (within their
 * own timeouts) until the resolver gives up on theirs.
 *
 * A lookup answers once, on the loop thread, never from within egress_lookup_start: with its
 * addresses, an error, or UV_ETIMEDOUT when its deadline passes first (a lookup still waiting
 * or running then is forgotten: its answer, when it comes, goes nowhere). */
#ifndef DAEMON_EGRESS_LOOKUP_H
#define DAEMON_EGRESS_LOOKUP_H

#include <stdint.h>
#include <uv.h>

struct egress_lookups; /* an engine's lookups: waiting, running, running for nobody */
struct egress_lookup;  /* one lookup asked for, until it answers or is cancelled */

/* status 0: res is the answer, owned by the callee (uv_freeaddrinfo); else a libuv error
 * (UV_ETIMEDOUT: the deadline passed) and res NULL. The lookup is gone once this is called. */
typedef void (*egress_lookup_cb)(void *ctx, int status, struct addrinfo *res);

/* NULL when out of memory. */
struct egress_lookups *egress_lookups_new(uv_loop_t *loop);

/* No lookup is answered any more: each still asked for is cancelled (its callback not called),
 * those running are left to end in the pool, and l is freed once its timer is closed. l may be
 * NULL. */
void egress_lookups_close(struct egress_lookups *l);

/* Looks host up for a connection to port, for owner (whose share of the lookups it takes),
 * answering cb(ctx, ...) within timeout_ms. NULL when out of memory (cb is not called). */
struct egress_lookup *egress_lookup_start(struct egress_lookups *l, const char *host, unsigned port,
                                          uint64_t owner, uint64_t timeout_ms, egress_lookup_cb cb,
                                          void *ctx);

/* The asker is gone: the callback is never called. A lookup already in the pool keeps its
 * place there until getaddrinfo returns (a thread cannot be stopped). q may be NULL. */
void egress_lookup_cancel(struct egress_lookup *q);

/* Lookups in the pool now, including those nobody waits for, and the most there may be. */
unsigned egress_lookups_running(const struct egress_lookups *l);
unsigned egress_lookups_max_running(const struct egress_lookups *l);

#endif
