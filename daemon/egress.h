/* Network egress: the HTTP(S) requests pyfenced makes for a worker (workers have no network).
 *
 * A worker's snippet calls http_request(); the worker sends the request over its channel
 * (CHANNEL.md, "egress"); the daemon checks it against the egress rules of the job's profile
 * as the policy has them now (policy_egress.h), and makes it with libcurl's multi interface on
 * the daemon's own loop (struct egress): every allowed request is under way at once, each on a
 * connection of its own (none is reused or shared between requests, which may be different
 * users'). At most EGRESS_MAX_RESPONSE_HEADERS response header lines are read. No redirect is
 * followed (the snippet may follow one, each hop checked), proxies from the daemon's
 * environment are not used, and the response (headers and body) is cut off at
 * egress_max_bytes. The reply goes back to the worker as one frame.
 *
 * Host names are looked up by the engine, not by libcurl (egress_lookup.h): with c-ares on the
 * daemon's own loop, no thread, so that lookups left hanging by a DNS server that does not
 * answer cost a c-ares channel each (its own sockets, so its own source ports), not a thread
 * (libcurl's threaded resolver makes one per lookup; libuv's pool had a few for everyone);
 * their number under way is bounded, per owner (the peer uid) and in all. Only the public addresses
 * of the answer (A and AAAA) are handed to libcurl (CURLOPT_RESOLVE, in a DNS cache of the
 * transfer's own), and libcurl is refused any lookup of its own (CURLOPT_RESOLVER_START_FUNCTION);
 * the address is checked again at connect. "localhost" and names under it are loopback by
 * definition (RFC 6761): refused, unlooked-up. An IP literal rule connects to exactly its address,
 * whatever it is. The lookup counts against the request's egress_timeout_ms; a request that ends
 * mid-lookup ends it (its sockets closed at once), and stopping ends every lookup at once.
 *
 * Response bytes are counted when received, against the request's egress_max_bytes and
 * against the engine's daemon-wide max_held (pyfenced --egress-max-bytes-held): a response
 * that would pass the latter ends with a "connection" error naming it, and every request gives
 * its bytes back when it ends, however it ends. The memory one response takes is at most about
 * 3.3 times its bytes (its buffer, grown by doubling, beside its base64), then 2.7 times (the
 * base64 and the worker's frame's copy of it: response_frame), then the frame queued to the
 * worker, which is the job's and no longer counted here.
 *
 * egress_request.c checks the worker's request and starts its call (egress_start); egress.c is
 * the engine that runs the call (lookup, transfer, reply); egress_lookup.c the lookups;
 * egress_internal.h what the first two share. */
#ifndef DAEMON_EGRESS_H
#define DAEMON_EGRESS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "policy_egress.h"

struct egress_limits {
    uint64_t timeout_ms; /* the whole transfer, connection included */
    uint64_t max_bytes;  /* request body; response headers plus body */
    uint64_t owner;      /* whose request (the peer uid): its bound on name lookups */
};

struct egress;      /* the transfers under way on one loop: the daemon owns one */
struct egress_call; /* one request, owned by the engine until done or abandoned */

/* Called on the loop thread once the transfer ends, with the frame for the worker (owned by
 * the callee), unless the call was abandoned. */
typedef void (*egress_done_fn)(void *ctx, cJSON *frame);

/* Once, before any thread runs (libcurl's global state). Returns -1 with *err. */
int egress_global_init(struct pf_error **err);
void egress_global_cleanup(void);

/* An engine on loop, holding at most max_held response bytes for all its requests together
 * and looking up at most max_lookups host names at once (the daemon's max_workers: a worker
 * makes one request at a time). NULL with *err when out of memory or c-ares cannot start. */
struct egress *egress_new(uv_loop_t *loop, uint64_t max_held, unsigned max_lookups,
                          struct pf_error **err);

/* Response bytes the requests under way hold now (counted against max_held). */
uint64_t egress_held_bytes(const struct egress *e);

/* Ends every transfer still under way (each call's done gets a "connection" error frame
 * saying pyfenced is stopping), closes the engine's handles and frees it once the loop has
 * closed them. e may be NULL. */
void egress_close(struct egress *e);

/* The worker's {"event": "egress", "method", "url", "headers"?, "body"?} checked against
 * rules. Refused or malformed: returns the worker's reply frame at once (*ret_call NULL).
 * Allowed: returns NULL and *ret_call, the transfer under way; done(ctx, frame) follows on a
 * later loop iteration, never from within this call. NULL with neither only when out of
 * memory. */
cJSON *egress_start(struct egress *e, const struct policy_egress *rules,
                    const struct egress_limits *limits, const cJSON *request, egress_done_fn done,
                    void *ctx, struct egress_call **ret_call);

/* The call's owner is going away: the transfer stops now (its connection closed), done is
 * not called, and the call is freed. call may be NULL. */
void egress_abandon(struct egress_call *call);

/* Whether a host name may be connected to at addr (struct in_addr or in6_addr by family):
 * global unicast only, not loopback, private, link-local, shared, multicast, reserved or
 * documentation ranges; an IPv6 address embedding an IPv4 one (mapped, NAT64) is judged as
 * that address. */
bool egress_address_public(int family, const void *addr);

/* {"op": "egress", "error": {"type": type, "message": message}}: type is "refused",
 * "bad_request", "too_large", "timeout" or "connection" (CHANNEL.md). */
cJSON *egress_error_frame(const char *type, const char *message);

#endif
