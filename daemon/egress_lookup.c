#include "egress_lookup.h"

#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "dlist.h"
#include "pf_cleanup.h"

/* libuv's own (src/threadpool.c, 1.44): the pool's size and its cap. */
#define LIBUV_DEFAULT_POOL 4
#define LIBUV_MAX_POOL     1024

struct egress_lookups {
    uv_loop_t *loop;
    uv_timer_t timer;     /* the nearest deadline of a lookup still asked for */
    struct dlist waiting; /* asked for, not yet in the pool: oldest first */
    struct dlist running; /* in the pool, asked for or not */
    unsigned n_running;
    unsigned max_running;
    unsigned max_per_owner;
    bool closed;
};

struct egress_lookup {
    struct dlist link;        /* on waiting or running; self-linked once l is closed */
    struct egress_lookups *l; /* NULL once l is closed: the answer goes nowhere */
    uv_getaddrinfo_t req;
    bool in_pool;
    int failed; /* uv_getaddrinfo's own error, answered at the next timer */
    char *host;
    char port[8];
    uint64_t owner;
    uint64_t deadline;   /* uv_now() */
    egress_lookup_cb cb; /* NULL once nobody waits for the answer */
    void *ctx;
};

/* How many lookups libuv runs at once: half its pool, rounded up (slow_work_thread_threshold
 * in src/threadpool.c), the pool sized as libuv sizes it. */
static unsigned
pool_lookups(void)
{
    unsigned n = LIBUV_DEFAULT_POOL;
    const char *v = getenv("UV_THREADPOOL_SIZE");
    if (v)
        n = (unsigned) atoi(v);
    if (n == 0)
        n = 1;
    if (n > LIBUV_MAX_POOL)
        n = LIBUV_MAX_POOL;
    return (n + 1) / 2;
}

static void
lookup_free(struct egress_lookup *q)
{
    dlist_remove(&q->link);
    free(q->host);
    free(q);
}

static unsigned
running_for(const struct egress_lookups *l, uint64_t owner)
{
    unsigned n = 0;
    for (const struct dlist *p = l->running.next; p != &l->running; p = p->next)
        n += pf_container_of(p, struct egress_lookup, link)->owner == owner;
    return n;
}

static void arm_timer(struct egress_lookups *l);
static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res);

/* Gives the pool the oldest waiting lookup whose owner is under its share, while there is a
 * place. A lookup libuv refuses at once answers with that error at the next timer. */
static void
schedule(struct egress_lookups *l)
{
    if (l->closed)
        return;
    struct dlist *pos, *tmp;
    DLIST_FOREACH_SAFE(pos, tmp, &l->waiting) {
        if (l->n_running >= l->max_running)
            break;
        struct egress_lookup *q = pf_container_of(pos, struct egress_lookup, link);
        if (q->failed || running_for(l, q->owner) >= l->max_per_owner)
            continue;
        const struct addrinfo hints = {
                .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP};
        int rc = uv_getaddrinfo(l->loop, &q->req, on_resolved, q->host, q->port, &hints);
        if (rc < 0) {
            q->failed = rc;
            q->deadline = 0;
            continue;
        }
        q->req.data = q;
        q->in_pool = true;
        dlist_remove(&q->link);
        dlist_insert_tail(&l->running, &q->link);
        l->n_running++;
    }
    arm_timer(l);
}

static void
on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
    struct egress_lookup *q = req->data;
    struct egress_lookups *l = q->l;
    egress_lookup_cb cb = q->cb;
    void *ctx = q->ctx;
    if (l)
        l->n_running--;
    lookup_free(q);
    if (cb)
        cb(ctx, status, res);
    else if (res)
        uv_freeaddrinfo(res);
    /* (A callback that closed l left it in memory until its timer's close callback.) */
    if (l)
        schedule(l);
}

/* The first lookup still asked for whose deadline has passed, NULL if none. */
static struct egress_lookup *
first_expired(struct egress_lookups *l, uint64_t now)
{
    struct dlist *lists[] = {&l->waiting, &l->running};
    for (size_t i = 0; i < 2; i++)
        for (struct dlist *p = lists[i]->next; p != lists[i]; p = p->next) {
            struct egress_lookup *q = pf_container_of(p, struct egress_lookup, link);
            if (q->cb && q->deadline <= now)
                return q;
        }
    return NULL;
}

/* Answers every lookup past its deadline (or refused by libuv), one at a time: a callback may
 * cancel others. */
static void
on_timer(uv_timer_t *t)
{
    struct egress_lookups *l = t->data;
    struct egress_lookup *q;
    while (!l->closed && (q = first_expired(l, uv_now(l->loop)))) {
        egress_lookup_cb cb = q->cb;
        void *ctx = q->ctx;
        int status = q->failed ? q->failed : UV_ETIMEDOUT;
        egress_lookup_cancel(q);
        cb(ctx, status, NULL);
    }
    schedule(l);
}

static void
arm_timer(struct egress_lookups *l)
{
    uint64_t next = UINT64_MAX;
    struct dlist *lists[] = {&l->waiting, &l->running};
    for (size_t i = 0; i < 2; i++)
        for (struct dlist *p = lists[i]->next; p != lists[i]; p = p->next) {
            struct egress_lookup *q = pf_container_of(p, struct egress_lookup, link);
            if (q->cb && q->deadline < next)
                next = q->deadline;
        }
    if (next == UINT64_MAX) {
        uv_timer_stop(&l->timer);
        return;
    }
    uint64_t now = uv_now(l->loop);
    uv_timer_start(&l->timer, on_timer, next > now ? next - now : 0, 0);
}

struct egress_lookups *
egress_lookups_new(uv_loop_t *loop)
{
    struct egress_lookups *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->loop = loop;
    dlist_init(&l->waiting);
    dlist_init(&l->running);
    l->max_running = pool_lookups();
    l->max_per_owner = l->max_running / 4 ? l->max_running / 4 : 1;
    uv_timer_init(loop, &l->timer);
    l->timer.data = l;
    return l;
}

static void
on_lookups_closed(uv_handle_t *h)
{
    free(h->data);
}

void
egress_lookups_close(struct egress_lookups *l)
{
    if (!l || l->closed)
        return;
    l->closed = true;
    while (!dlist_empty(&l->waiting))
        lookup_free(pf_container_of(l->waiting.next, struct egress_lookup, link));
    /* Those in the pool end there, on their own; their answers find nobody. */
    while (!dlist_empty(&l->running)) {
        struct egress_lookup *q = pf_container_of(l->running.next, struct egress_lookup, link);
        dlist_remove(&q->link);
        q->l = NULL;
        q->cb = NULL;
        uv_cancel((uv_req_t *) &q->req);
    }
    l->n_running = 0;
    uv_close((uv_handle_t *) &l->timer, on_lookups_closed);
}

struct egress_lookup *
egress_lookup_start(struct egress_lookups *l, const char *host, unsigned port, uint64_t owner,
                    uint64_t timeout_ms, egress_lookup_cb cb, void *ctx)
{
    struct egress_lookup *q = calloc(1, sizeof(*q));
    if (!q || !(q->host = strdup(host))) {
        free(q);
        return NULL;
    }
    dlist_init(&q->link);
    q->l = l;
    snprintf(q->port, sizeof(q->port), "%u", port);
    q->owner = owner;
    q->deadline = uv_now(l->loop) + timeout_ms;
    q->cb = cb;
    q->ctx = ctx;
    dlist_insert_tail(&l->waiting, &q->link);
    schedule(l);
    return q;
}

void
egress_lookup_cancel(struct egress_lookup *q)
{
    if (!q)
        return;
    q->cb = NULL;
    if (!q->in_pool) {
        lookup_free(q);
        return;
    }
    /* Still queued in libuv: it answers UV_EAI_CANCELED soon, to nobody. Running: it answers
     * when getaddrinfo returns, to nobody, and keeps its place until then. */
    uv_cancel((uv_req_t *) &q->req);
}

unsigned
egress_lookups_running(const struct egress_lookups *l)
{
    return l->n_running;
}

unsigned
egress_lookups_max_running(const struct egress_lookups *l)
{
    return l->max_running;
}
