/* Network egress: the HTTP(S) requests pyfenced makes for a worker (workers have no network).
 *
 * A worker's snippet calls http_request(); the worker sends the request over its channel
 * (CHANNEL.md, "egress"); the daemon checks it against the egress rules of the job's profile
 * as the policy has them now (policy_egress.h), and makes it with libcurl's multi interface on
 * the daemon's own loop (struct egress): every allowed request is under way at once, each on a
 * connection of its own (none is reused or shared between requests, which may be different
 * users'), names resolved off the loop by libcurl's threaded resolver (a request that ends
 * mid-lookup leaves the lookup to finish on its thread: CURLOPT_QUICK_EXIT). At most
 * EGRESS_MAX_RESPONSE_HEADERS response header lines are read. No redirect is followed
 * (the snippet may follow one, each hop checked), host names are connected to only at public
 * addresses (an IP literal rule connects to exactly its address), proxies from the daemon's
 * environment are not used, and the response (headers and body) is cut off at
 * egress_max_bytes. The reply goes back to the worker as one frame. */
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
};

struct egress;      /* the transfers under way on one loop: the daemon owns one */
struct egress_call; /* one request, owned by the engine until done or abandoned */

/* Called on the loop thread once the transfer ends, with the frame for the worker (owned by
 * the callee), unless the call was abandoned. */
typedef void (*egress_done_fn)(void *ctx, cJSON *frame);

/* Once, before any thread runs (libcurl's global state). Returns -1 with *err. */
int egress_global_init(struct pf_error **err);
void egress_global_cleanup(void);

/* An engine on loop. NULL with *err when out of memory. */
struct egress *egress_new(uv_loop_t *loop, struct pf_error **err);

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
