/* What egress.c (the engine: its calls, their lookups and transfers, the replies they make) and
 * egress_request.c (the worker's request, checked before any call starts) use of each other
 * beyond egress.h. Not a contract: only egress.h is. */
#ifndef DAEMON_EGRESS_INTERNAL_H
#define DAEMON_EGRESS_INTERNAL_H

#include <curl/curl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "egress.h"
#include "egress_lookup.h"

/* Response header lines kept for one response: a server behind a rule decides how many it
 * sends, and they are handled on the loop thread every agent shares. */
#define EGRESS_MAX_RESPONSE_HEADERS 256

struct egress {
    uv_loop_t *loop;
    CURLM *multi;
    uv_timer_t timer;          /* libcurl's next timeout (CURLMOPT_TIMERFUNCTION) */
    struct egress_call *calls; /* under way, doubly linked */
    struct egress_lookups *lookups;
    uint64_t held;     /* response bytes received by the calls under way */
    uint64_t max_held; /* the daemon-wide cap on held */
    bool closing;
};

struct egress_call {
    struct egress *e;
    struct egress_call *prev, *next;
    CURL *easy;
    egress_done_fn done;
    void *ctx;
    /* the request, owned copies: libcurl reads them while the transfer runs */
    char *method;
    char *url;
    struct curl_slist *headers;
    unsigned char *body;
    size_t body_len;
    bool host_is_ip; /* the rule names an IP literal: connect to it whatever it is */
    struct egress_limits limits;
    /* a host name, looked up by the engine (egress_lookup.h) before the transfer starts */
    char *host;
    unsigned port;
    uint64_t started;             /* uv_now(): the lookup counts against the timeout */
    struct egress_lookup *lookup; /* while it runs */
    struct curl_slist *resolve;   /* CURLOPT_RESOLVE: the public addresses it gave */
    CURLSH *share;                /* the transfer's own DNS cache, holding only those */
    bool resolver_refused;        /* libcurl wanted to look a name up itself */
    /* filled as the transfer runs */
    CURLcode code;
    long status;
    char curl_msg[CURL_ERROR_SIZE];
    char refused_address[INET6_ADDRSTRLEN]; /* a non-public address the name resolved to */
    bool too_large;
    bool over_held;  /* the daemon-wide max_held would have been passed */
    size_t received; /* header and body bytes, counted in e->held until the call is freed */
    struct egress_header {
        char *name; /* lowercased UTF-8 */
        char *value;
        size_t value_len;
    } * resp_headers; /* EGRESS_MAX_RESPONSE_HEADERS of them, joined by name in the reply */
    size_t n_resp_headers;
    bool too_many_headers;
    unsigned char *resp_body;
    size_t resp_len, resp_cap;
};

/* ---- a call's life (egress.c) ----------------------------------------------------------- */

/* Puts c in e's list of calls under way (egress_call_free takes it out). */
void egress_call_link(struct egress *e, struct egress_call *c);
/* Takes c out of its engine's list, if it is in one, and frees it with all it holds (its
 * lookup cancelled, its transfer removed). */
void egress_call_free(struct egress_call *c);
/* Has the engine look host up for c; the transfer starts once it answers with a public
 * address, else c ends with a failure frame. -1 with *err: PF_E_BUSY past a bound on lookups
 * (egress_lookup.h), else out of memory. */
int egress_call_lookup(struct egress *e, struct egress_call *c, const char *host, unsigned port,
                       struct pf_error **err);
/* Starts c's transfer on e (an IP literal rule's, or one whose lookup answered). -1 when out
 * of memory. */
int egress_call_transfer(struct egress *e, struct egress_call *c);

#endif
