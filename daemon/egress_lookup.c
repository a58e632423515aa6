#include "egress_lookup.h"

#include <ares.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "dlist.h"
#include "egress.h"
#include "pf_cleanup.h"

struct egress_lookups {
    uv_loop_t *loop;
    struct dlist running; /* struct egress_lookup: asked for, not yet handed over nor ended */
    unsigned n_running;
    unsigned max_running;
};

/* One lookup and its own c-ares channel, sockets and timer. Ended (lookup_end) when it is
 * handed over, cancelled or closed: its channel is destroyed then, its handles closed, and it
 * is freed once they are (on_handle_closed), not before: libuv still holds them. */
struct egress_lookup {
    struct dlist link;        /* on l->running while it runs */
    struct egress_lookups *l; /* not owned; NULL once ended */
    uv_loop_t *loop;
    ares_channel channel;  /* NULL once ended */
    uv_timer_t timer;      /* c-ares's next timeout, the deadline, or an answer to hand over */
    struct dlist sockets;  /* struct lookup_socket: what c-ares asked to have watched */
    unsigned open_handles; /* the timer and the polls not yet closed: freed at 0 */
    uint64_t owner;
    uint64_t deadline; /* uv_now() */
    egress_lookup_cb cb;
    void *ctx;
    bool answered; /* c-ares is done with it: handed over at the next timer or poll */
    /* c-ares's answer, kept until it is handed over */
    int status;
    const char *why;
    size_t n;
    struct egress_address addrs[EGRESS_LOOKUP_MAX_ADDRESSES];
};

/* A socket c-ares asked to have watched, freed once its poll handle is closed. */
struct lookup_socket {
    uv_poll_t poll;
    struct dlist link; /* on q->sockets until c-ares is done with it */
    struct egress_lookup *q;
    ares_socket_t fd;
};

static void
lookup_release(struct egress_lookup *q)
{
    if (--q->open_handles == 0)
        free(q);
}

static void
on_poll_closed(uv_handle_t *h)
{
    struct lookup_socket *s = pf_container_of((uv_poll_t *) h, struct lookup_socket, poll);
    struct egress_lookup *q = s->q;
    free(s);
    lookup_release(q);
}

static void
on_timer_closed(uv_handle_t *h)
{
    lookup_release(h->data);
}

static void
socket_close(struct lookup_socket *s)
{
    dlist_remove(&s->link);
    uv_poll_stop(&s->poll);
    uv_close((uv_handle_t *) &s->poll, on_poll_closed);
}

/* Destroys q's channel (its sockets are closed now: each is given back through
 * on_socket_state first) and closes its handles; q is freed once they are. Its callback is not
 * called: the caller calls it, or nobody waits. q may have ended already. */
static void
lookup_end(struct egress_lookup *q)
{
    if (!q->channel)
        return;
    dlist_remove(&q->link);
    q->l->n_running--;
    q->l = NULL;
    ares_channel channel = q->channel;
    /* NULL first: ares_destroy ends q's queries through on_ares_answer, which must see that
     * nobody is to be answered (not always with ARES_EDESTRUCTION: with A answered and AAAA
     * still asked, c-ares ends the lookup with ARES_SUCCESS). */
    q->channel = NULL;
    ares_destroy(channel);
    while (!dlist_empty(&q->sockets)) /* (none: c-ares gave each back) */
        socket_close(pf_container_of(q->sockets.next, struct lookup_socket, link));
    uv_close((uv_handle_t *) &q->timer, on_timer_closed);
}

/* Hands q's answer over, or UV_ETIMEDOUT once its deadline has passed, else waits for the
 * nearest of c-ares's next timeout and the deadline. After any call into c-ares, outside of it
 * (the callback may start or cancel lookups, or close them all). */
static void settle(struct egress_lookup *q);

static void
on_timer(uv_timer_t *t)
{
    struct egress_lookup *q = t->data;
    ares_process_fd(q->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD); /* retransmissions, give-ups */
    settle(q);
}

static void
arm_timer(struct egress_lookup *q)
{
    uint64_t now = uv_now(q->loop);
    uint64_t next = q->answered ? now : q->deadline;
    struct timeval tv;
    if (ares_timeout(q->channel, NULL, &tv)) {
        /* at least 1 ms: c-ares's clock is not the loop's, which may lag it */
        uint64_t ms = (uint64_t) tv.tv_sec * 1000 + ((uint64_t) tv.tv_usec + 999) / 1000;
        if (now + (ms ? ms : 1) < next)
            next = now + (ms ? ms : 1);
    }
    uv_timer_start(&q->timer, on_timer, next > now ? next - now : 0, 0);
}

static void
settle(struct egress_lookup *q)
{
    egress_lookup_cb cb = q->cb;
    void *ctx = q->ctx;
    if (q->answered) {
        lookup_end(q);
        cb(ctx, q->status, q->addrs, q->n, q->why); /* q is freed on a later loop iteration */
    } else if (q->deadline <= uv_now(q->loop)) {
        lookup_end(q);
        cb(ctx, UV_ETIMEDOUT, NULL, 0, NULL);
    } else {
        arm_timer(q);
    }
}

static void
on_poll(uv_poll_t *h, int status, int events)
{
    struct lookup_socket *s = h->data;
    struct egress_lookup *q = s->q;
    if (!q->channel) /* ended earlier in this loop iteration (libuv calls no closed handle) */
        return;
    /* An error is c-ares's to find: it reads and writes, and sees it. s may be closed (and
     * its fd reused) from within ares_process_fd: not touched after. */
    bool err = status < 0;
    ares_process_fd(q->channel, err || (events & UV_READABLE) ? s->fd : ARES_SOCKET_BAD,
                    err || (events & UV_WRITABLE) ? s->fd : ARES_SOCKET_BAD);
    settle(q);
}

static struct lookup_socket *
socket_find(struct egress_lookup *q, ares_socket_t fd)
{
    for (struct dlist *p = q->sockets.next; p != &q->sockets; p = p->next) {
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
    struct egress_lookup *q = data;
    struct lookup_socket *s = socket_find(q, fd);
    if (!readable && !writable) {
        if (s)
            socket_close(s);
        return;
    }
    if (!s) {
        if (!(s = calloc(1, sizeof(*s))))
            return;
        if (uv_poll_init_socket(q->loop, &s->poll, fd) < 0) {
            free(s);
            return;
        }
        s->q = q;
        s->fd = fd;
        s->poll.data = s;
        q->open_handles++;
        dlist_insert_tail(&q->sockets, &s->link);
    }
    uv_poll_start(&s->poll, (readable ? UV_READABLE : 0) | (writable ? UV_WRITABLE : 0), on_poll);
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

static void
keep_address(struct egress_lookup *q, const struct ares_addrinfo_node *a)
{
    struct egress_address *out = &q->addrs[q->n];
    if (a->ai_family == AF_INET)
        out->addr.v4 = ((const struct sockaddr_in *) a->ai_addr)->sin_addr;
    else if (a->ai_family == AF_INET6)
        out->addr.v6 = ((const struct sockaddr_in6 *) a->ai_addr)->sin6_addr;
    else
        return;
    out->family = a->ai_family;
    q->n++;
}

static bool
node_public(const struct ares_addrinfo_node *a)
{
    if (a->ai_family == AF_INET)
        return egress_address_public(AF_INET, &((const struct sockaddr_in *) a->ai_addr)->sin_addr);
    if (a->ai_family == AF_INET6)
        return egress_address_public(AF_INET6,
                                     &((const struct sockaddr_in6 *) a->ai_addr)->sin6_addr);
    return false;
}

/* Keeps the addresses of res in q, up to EGRESS_LOOKUP_MAX_ADDRESSES, the public ones first:
 * an answer of many private addresses and one public one still reaches the public one, and an
 * answer of private ones only keeps some, which the refusal names. */
static void
keep_addresses(struct egress_lookup *q, const struct ares_addrinfo *res)
{
    for (int public = 1; public >= 0; public --)
        for (const struct ares_addrinfo_node *a = res ? res->nodes : NULL;
             a && q->n < EGRESS_LOOKUP_MAX_ADDRESSES; a = a->ai_next)
            if (node_public(a) == (bool) public)
                keep_address(q, a);
}

/* c-ares ended q's queries: from within ares_getaddrinfo (/etc/hosts), ares_process_fd or
 * ares_destroy (lookup_end: q->channel is NULL then; q itself is freed only later, once its
 * handles are closed). Nothing is called back from here (the callback might end q, destroying
 * the channel c-ares is running): the answer waits for settle, outside c-ares. */
static void
on_ares_answer(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
    struct egress_lookup *q = arg;
    (void) timeouts;
    if (!q->channel) { /* ended: nobody is answered */
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
}

/* Keeps the first EGRESS_LOOKUP_SERVERS_MAX name servers of channel: c-ares would use every
 * one resolv.conf lists, each with a socket or two held until the lookup ends. */
static int
keep_first_servers(ares_channel channel)
{
    struct ares_addr_port_node *servers = NULL;
    int rc = ares_get_servers_ports(channel, &servers);
    if (rc != ARES_SUCCESS)
        return rc;
    struct ares_addr_port_node *last = servers;
    for (int i = 1; last && i < EGRESS_LOOKUP_SERVERS_MAX; i++)
        last = last->next;
    if (last && last->next) {
        struct ares_addr_port_node *rest = last->next;
        last->next = NULL;
        rc = ares_set_servers_ports(channel, servers);
        last->next = rest; /* the whole list is c-ares's to free */
    }
    ares_free_data(servers);
    return rc;
}

/* A new channel, reading resolv.conf now, for q (NULL: only to see that c-ares can start).
 * c-ares 1.18 fails here for memory only: a resolv.conf it cannot read (no fd left, say) gives
 * it its defaults (a name server on 127.0.0.1), so a lookup then fails later, when it cannot
 * open a socket or gets no answer, with that error instead. */
static int
channel_new(struct egress_lookup *q, ares_channel *ret, struct pf_error **err)
{
    struct ares_options o = {
            .sock_state_cb = on_socket_state,
            .sock_state_cb_data = q,
            .timeout = EGRESS_LOOKUP_TRY_MS,
            .tries = 2,
            /* /etc/hosts first, as glibc's default nsswitch.conf: an administrator's pinned
             * names keep working. Its answers are checked like DNS's (public only). */
            .lookups = (char *) "fb",
    };
    ares_channel channel;
    int rc = ares_init_options(&channel, &o,
                               ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
                                       ARES_OPT_LOOKUPS);
    if (rc == ARES_SUCCESS && (rc = keep_first_servers(channel)) != ARES_SUCCESS)
        ares_destroy(channel);
    if (rc != ARES_SUCCESS)
        return pf_error_set(err, PF_E_INTERNAL, "egress: cannot start the c-ares resolver: %s",
                            ares_strerror(rc));
    *ret = channel;
    return 0;
}

struct egress_lookups *
egress_lookups_new(uv_loop_t *loop, unsigned max_in_flight, struct pf_error **err)
{
    /* A channel now, only to fail at start-up, not at the first request, when c-ares cannot
     * start at all. */
    ares_channel probe;
    if (channel_new(NULL, &probe, err) < 0)
        return NULL;
    ares_destroy(probe);
    struct egress_lookups *l = calloc(1, sizeof(*l));
    if (!l)
        return pf_error_set(err, PF_E_INTERNAL, "egress: out of memory"), NULL;
    l->loop = loop;
    l->max_running = max_in_flight;
    dlist_init(&l->running);
    return l;
}

void
egress_lookups_close(struct egress_lookups *l)
{
    if (!l)
        return;
    while (!dlist_empty(&l->running))
        lookup_end(pf_container_of(l->running.next, struct egress_lookup, link));
    free(l);
}

static int
check_bounds(const struct egress_lookups *l, uint64_t owner, struct pf_error **err)
{
    if (l->n_running >= l->max_running)
        return pf_error_set(err, PF_E_BUSY,
                            "pyfenced has %u host-name lookups under way, its limit for all "
                            "users together (max_workers); try again later",
                            l->max_running);
    if (egress_lookups_in_flight_for(l, owner) >= EGRESS_LOOKUPS_MAX_PER_OWNER)
        return pf_error_set(err, PF_E_BUSY,
                            "uid %llu has %d host-name lookups under way, pyfenced's limit per "
                            "uid; try again later",
                            (unsigned long long) owner, EGRESS_LOOKUPS_MAX_PER_OWNER);
    return 0;
}

struct egress_lookup *
egress_lookup_start(struct egress_lookups *l, const char *host, uint64_t owner, uint64_t timeout_ms,
                    egress_lookup_cb cb, void *ctx, struct pf_error **err)
{
    if (check_bounds(l, owner, err) < 0)
        return NULL;
    struct egress_lookup *q = calloc(1, sizeof(*q));
    if (!q)
        return pf_error_set(err, PF_E_INTERNAL, "egress: out of memory"), NULL;
    dlist_init(&q->sockets);
    q->loop = l->loop; /* before the channel: on_socket_state needs it */
    if (channel_new(q, &q->channel, err) < 0) {
        free(q);
        return NULL;
    }
    q->l = l;
    q->owner = owner;
    q->deadline = uv_now(l->loop) + timeout_ms;
    q->cb = cb;
    q->ctx = ctx;
    uv_timer_init(l->loop, &q->timer);
    q->timer.data = q;
    q->open_handles = 1;
    dlist_insert_tail(&l->running, &q->link);
    l->n_running++;
    const struct ares_addrinfo_hints hints = {
            .ai_family = AF_UNSPEC,
            .ai_socktype = SOCK_STREAM,
            .ai_protocol = IPPROTO_TCP,
            /* c-ares's RFC 6724 sort opens, connects and closes a UDP socket per address, on
             * the loop: thousands for a hostile server's answer. libcurl orders them itself. */
            .ai_flags = ARES_AI_NOSORT};
    /* May answer from within (/etc/hosts, a bad name, out of memory): on_ares_answer keeps it
     * and the timer, armed for now, hands it over. */
    ares_getaddrinfo(q->channel, host, NULL, &hints, on_ares_answer, q);
    arm_timer(q);
    return q;
}

void
egress_lookup_cancel(struct egress_lookup *q)
{
    if (q)
        lookup_end(q);
}

unsigned
egress_lookups_in_flight(const struct egress_lookups *l)
{
    return l->n_running;
}

unsigned
egress_lookups_in_flight_for(const struct egress_lookups *l, uint64_t owner)
{
    unsigned n = 0;
    for (const struct dlist *p = l->running.next; p != &l->running; p = p->next)
        n += pf_container_of(p, struct egress_lookup, link)->owner == owner;
    return n;
}
