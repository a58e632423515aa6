#include "egress_lookup.h"

#include <ares.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "dlist.h"
#include "pf_cleanup.h"

struct egress_lookups {
    uv_loop_t *loop;
    ares_channel channel;  /* NULL once closed */
    uv_timer_t timer;      /* c-ares's next timeout, the nearest deadline, or an answer to give */
    struct dlist in_ares;  /* lookups whose queries run in c-ares, asked for or forgotten */
    struct dlist answered; /* lookups c-ares answered, to be handed over at the next timer */
    struct dlist sockets;  /* struct lookup_socket: what c-ares asked to have watched */
    unsigned n_in_ares;
    unsigned open_handles; /* the timer and the polls not yet closed: l is freed at 0 */
    bool closed;
};

struct egress_lookup {
    struct dlist link;        /* on in_ares or answered */
    struct egress_lookups *l; /* not owned */
    uint64_t owner;
    uint64_t deadline;   /* uv_now() */
    egress_lookup_cb cb; /* NULL once nobody waits for the answer */
    void *ctx;
    bool answered; /* c-ares is done with it: on l->answered */
    /* c-ares's answer, kept until the next timer hands it over */
    int status;
    const char *why;
    size_t n;
    struct egress_address addrs[EGRESS_LOOKUP_MAX_ADDRESSES];
};

/* A socket c-ares asked to have watched, freed once its poll handle is closed. */
struct lookup_socket {
    uv_poll_t poll;
    struct dlist link; /* on l->sockets until c-ares is done with it */
    struct egress_lookups *l;
    ares_socket_t fd;
};

static void arm_timer(struct egress_lookups *l);

static void
on_handle_closed(uv_handle_t *h)
{
    struct egress_lookups *l = h->data;
    if (h->type == UV_POLL)
        free(pf_container_of((uv_poll_t *) h, struct lookup_socket, poll));
    if (--l->open_handles == 0)
        free(l);
}

static void
socket_close(struct lookup_socket *s)
{
    dlist_remove(&s->link);
    uv_poll_stop(&s->poll);
    s->poll.data = s->l;
    uv_close((uv_handle_t *) &s->poll, on_handle_closed);
}

/* After any call into c-ares, outside of it: answers may be waiting, timeouts changed. */
static void
after_ares(struct egress_lookups *l)
{
    if (!l->closed)
        arm_timer(l);
}

static void
on_poll(uv_poll_t *h, int status, int events)
{
    struct lookup_socket *s = h->data;
    struct egress_lookups *l = s->l;
    ares_socket_t fd = s->fd;
    /* An error is c-ares's to find: it reads and writes, and sees it. s may be closed (and
     * its fd reused) from within ares_process_fd: not touched after. */
    bool err = status < 0;
    ares_process_fd(l->channel, err || (events & UV_READABLE) ? fd : ARES_SOCKET_BAD,
                    err || (events & UV_WRITABLE) ? fd : ARES_SOCKET_BAD);
    after_ares(l);
}

static struct lookup_socket *
socket_find(struct egress_lookups *l, ares_socket_t fd)
{
    for (struct dlist *p = l->sockets.next; p != &l->sockets; p = p->next) {
        struct lookup_socket *s = pf_container_of(p, struct lookup_socket, link);
        if (s->fd == fd)
            return s;
    }
    return NULL;
}

/* ARES_OPT_SOCK_STATE_CB: watch fd for what c-ares waits for, or stop (before c-ares closes
 * it). A socket that cannot be watched is left to c-ares's timeouts (the timer). */
static void
on_socket_state(void *data, ares_socket_t fd, int readable, int writable)
{
    struct egress_lookups *l = data;
    struct lookup_socket *s = socket_find(l, fd);
    if (!readable && !writable) {
        if (s)
            socket_close(s);
        return;
    }
    if (!s) {
        if (!(s = calloc(1, sizeof(*s))))
            return;
        if (uv_poll_init_socket(l->loop, &s->poll, fd) < 0) {
            free(s);
            return;
        }
        s->l = l;
        s->fd = fd;
        s->poll.data = s;
        l->open_handles++;
        dlist_insert_tail(&l->sockets, &s->link);
    }
    uv_poll_start(&s->poll, (readable ? UV_READABLE : 0) | (writable ? UV_WRITABLE : 0), on_poll);
}

static void
lookup_free(struct egress_lookup *q)
{
    dlist_remove(&q->link);
    free(q);
}

static int
status_from_ares(int status)
{
    switch (status) {
    case ARES_ENOTFOUND:
    case ARES_ENODATA:
    case ARES_ENONAME:
        return UV_EAI_NONAME;
    case ARES_ETIMEOUT:
    case ARES_ECONNREFUSED:
    case ARES_ESERVFAIL:
    case ARES_EREFUSED:
        return UV_EAI_AGAIN;
    case ARES_ENOMEM:
        return UV_ENOMEM;
    default:
        return UV_EAI_FAIL;
    }
}

/* Keeps the addresses of res (up to EGRESS_LOOKUP_MAX_ADDRESSES) in q. */
static void
keep_addresses(struct egress_lookup *q, const struct ares_addrinfo *res)
{
    for (const struct ares_addrinfo_node *a = res ? res->nodes : NULL;
         a && q->n < EGRESS_LOOKUP_MAX_ADDRESSES; a = a->ai_next) {
        struct egress_address *out = &q->addrs[q->n];
        if (a->ai_family == AF_INET)
            out->addr.v4 = ((const struct sockaddr_in *) a->ai_addr)->sin_addr;
        else if (a->ai_family == AF_INET6)
            out->addr.v6 = ((const struct sockaddr_in6 *) a->ai_addr)->sin6_addr;
        else
            continue;
        out->family = a->ai_family;
        q->n++;
    }
}

/* c-ares ended q's queries: from within ares_getaddrinfo (/etc/hosts), ares_process_fd or
 * ares_destroy. Nothing is called back from here (the callback might close l, destroying
 * the channel c-ares is running): the answer waits for the timer. */
static void
on_ares_answer(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
    struct egress_lookup *q = arg;
    struct egress_lookups *l = q->l;
    (void) timeouts;
    l->n_in_ares--;
    if (!q->cb || status == ARES_EDESTRUCTION) {
        lookup_free(q);
        ares_freeaddrinfo(res);
        return;
    }
    keep_addresses(q, res);
    ares_freeaddrinfo(res);
    q->status = status == ARES_SUCCESS ? 0 : status_from_ares(status);
    q->why = status == ARES_SUCCESS ? NULL : ares_strerror(status);
    if (q->status == 0 && q->n == 0) {
        q->status = UV_EAI_NONAME;
        q->why = "no IPv4 or IPv6 address";
    }
    q->answered = true;
    dlist_remove(&q->link);
    dlist_insert_tail(&l->answered, &q->link);
}

/* The next lookup to hand over: one answered, else one asked for past its deadline. */
static struct egress_lookup *
next_due(struct egress_lookups *l, uint64_t now)
{
    if (!dlist_empty(&l->answered))
        return pf_container_of(l->answered.next, struct egress_lookup, link);
    for (struct dlist *p = l->in_ares.next; p != &l->in_ares; p = p->next) {
        struct egress_lookup *q = pf_container_of(p, struct egress_lookup, link);
        if (q->cb && q->deadline <= now)
            return q;
    }
    return NULL;
}

/* c-ares's timeouts first (retransmissions, name servers given up), then every lookup due,
 * one at a time: a callback may cancel others, or close l. */
static void
on_timer(uv_timer_t *t)
{
    struct egress_lookups *l = t->data;
    ares_process_fd(l->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
    struct egress_lookup *q;
    while (!l->closed && (q = next_due(l, uv_now(l->loop)))) {
        egress_lookup_cb cb = q->cb;
        void *ctx = q->ctx;
        if (q->answered) {
            int status = q->status;
            const char *why = q->why;
            size_t n = q->n;
            struct egress_address addrs[EGRESS_LOOKUP_MAX_ADDRESSES];
            memcpy(addrs, q->addrs, n * sizeof(addrs[0]));
            lookup_free(q);
            cb(ctx, status, addrs, n, why);
        } else {
            q->cb = NULL; /* forgotten: c-ares ends its queries on its own */
            cb(ctx, UV_ETIMEDOUT, NULL, 0, NULL);
        }
    }
    after_ares(l);
}

/* The nearest of: an answer to hand over (now), a deadline, c-ares's next timeout. */
static void
arm_timer(struct egress_lookups *l)
{
    uint64_t now = uv_now(l->loop);
    uint64_t next = UINT64_MAX;
    if (!dlist_empty(&l->answered))
        next = now;
    for (struct dlist *p = l->in_ares.next; p != &l->in_ares && next > now; p = p->next) {
        struct egress_lookup *q = pf_container_of(p, struct egress_lookup, link);
        if (q->cb && q->deadline < next)
            next = q->deadline;
    }
    struct timeval tv;
    if (ares_timeout(l->channel, NULL, &tv)) {
        /* at least 1 ms: c-ares's clock is not the loop's, which may lag it */
        uint64_t ms = (uint64_t) tv.tv_sec * 1000 + ((uint64_t) tv.tv_usec + 999) / 1000;
        if (now + (ms ? ms : 1) < next)
            next = now + (ms ? ms : 1);
    }
    if (next == UINT64_MAX) {
        uv_timer_stop(&l->timer);
        return;
    }
    uv_timer_start(&l->timer, on_timer, next > now ? next - now : 0, 0);
}

struct egress_lookups *
egress_lookups_new(uv_loop_t *loop, struct pf_error **err)
{
    struct egress_lookups *l = calloc(1, sizeof(*l));
    if (!l)
        return pf_error_set(err, PF_E_INTERNAL, "egress: out of memory"), NULL;
    l->loop = loop;
    dlist_init(&l->in_ares);
    dlist_init(&l->answered);
    dlist_init(&l->sockets);
    struct ares_options o = {
            .sock_state_cb = on_socket_state,
            .sock_state_cb_data = l,
            .timeout = EGRESS_LOOKUP_TRY_MS,
            .tries = 2,
            /* /etc/hosts first, as glibc's default nsswitch.conf: an administrator's pinned
             * names keep working. Its answers are checked like DNS's (public only). */
            .lookups = (char *) "fb",
    };
    int rc = ares_init_options(&l->channel, &o,
                               ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
                                       ARES_OPT_LOOKUPS);
    if (rc != ARES_SUCCESS) {
        free(l);
        return pf_error_set(err, PF_E_INTERNAL,
                            "egress: cannot start the c-ares resolver (/etc/resolv.conf): %s",
                            ares_strerror(rc)),
               NULL;
    }
    uv_timer_init(loop, &l->timer);
    l->timer.data = l;
    l->open_handles = 1;
    return l;
}

void
egress_lookups_close(struct egress_lookups *l)
{
    if (!l || l->closed)
        return;
    l->closed = true;
    for (struct dlist *p = l->in_ares.next; p != &l->in_ares; p = p->next)
        pf_container_of(p, struct egress_lookup, link)->cb = NULL;
    /* Every query ends now, with ARES_EDESTRUCTION (on_ares_answer frees its lookup), and
     * every socket is given back (on_socket_state closes its poll). */
    ares_destroy(l->channel);
    l->channel = NULL;
    while (!dlist_empty(&l->answered))
        lookup_free(pf_container_of(l->answered.next, struct egress_lookup, link));
    while (!dlist_empty(&l->sockets)) /* (none: c-ares gave each back) */
        socket_close(pf_container_of(l->sockets.next, struct lookup_socket, link));
    uv_close((uv_handle_t *) &l->timer, on_handle_closed);
}

static int
check_bounds(const struct egress_lookups *l, uint64_t owner, struct pf_error **err)
{
    if (l->n_in_ares >= EGRESS_LOOKUPS_MAX)
        return pf_error_set(err, PF_E_BUSY,
                            "pyfenced has %d host-name lookups under way, its limit for all "
                            "users together (name servers that do not answer hold them up to "
                            "%d s); try again later",
                            EGRESS_LOOKUPS_MAX, 3 * EGRESS_LOOKUP_TRY_MS / 1000);
    if (egress_lookups_in_flight_for(l, owner) >= EGRESS_LOOKUPS_MAX_PER_OWNER)
        return pf_error_set(err, PF_E_BUSY,
                            "uid %llu has %d host-name lookups under way, pyfenced's limit per "
                            "uid (ended requests' lookups included: a name server that does "
                            "not answer holds them up to %d s); try again later",
                            (unsigned long long) owner, EGRESS_LOOKUPS_MAX_PER_OWNER,
                            3 * EGRESS_LOOKUP_TRY_MS / 1000);
    return 0;
}

struct egress_lookup *
egress_lookup_start(struct egress_lookups *l, const char *host, uint64_t owner, uint64_t timeout_ms,
                    egress_lookup_cb cb, void *ctx, struct pf_error **err)
{
    if (l->closed)
        return pf_error_set(err, PF_E_SHUTTING_DOWN, "pyfenced is stopping"), NULL;
    if (check_bounds(l, owner, err) < 0)
        return NULL;
    struct egress_lookup *q = calloc(1, sizeof(*q));
    if (!q)
        return pf_error_set(err, PF_E_INTERNAL, "egress: out of memory"), NULL;
    q->l = l;
    q->owner = owner;
    q->deadline = uv_now(l->loop) + timeout_ms;
    q->cb = cb;
    q->ctx = ctx;
    dlist_insert_tail(&l->in_ares, &q->link);
    l->n_in_ares++;
    const struct ares_addrinfo_hints hints = {
            .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP};
    /* May answer from within (/etc/hosts, a bad name, out of memory): on_ares_answer keeps it
     * for the timer. */
    ares_getaddrinfo(l->channel, host, NULL, &hints, on_ares_answer, q);
    after_ares(l);
    return q;
}

void
egress_lookup_cancel(struct egress_lookup *q)
{
    if (!q)
        return;
    q->cb = NULL;
    /* Answered, not yet handed over: nothing holds it any more. Else c-ares still does, and
     * on_ares_answer frees it when its queries end. */
    if (q->answered)
        lookup_free(q);
}

unsigned
egress_lookups_in_flight(const struct egress_lookups *l)
{
    return l->n_in_ares;
}

unsigned
egress_lookups_in_flight_for(const struct egress_lookups *l, uint64_t owner)
{
    unsigned n = 0;
    for (const struct dlist *p = l->in_ares.next; p != &l->in_ares; p = p->next)
        n += pf_container_of(p, struct egress_lookup, link)->owner == owner;
    return n;
}
