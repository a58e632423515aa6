#include "scheduler.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pf_cleanup.h"
#include "pf_log.h"

#define GiB (1024ULL * 1024 * 1024)
/* Weight of the newest sample in the moving average of job times. */
#define AVG_WEIGHT 0.05
/* Until a job has finished, a guess of how long one holds its worker. */
#define AVG_START_MS 10.0

unsigned
sched_default_workers(unsigned cores, uint64_t memory_bytes)
{
    uint64_t want = 4ULL * (cores ? cores : 1);
    uint64_t ceiling = 2 * (memory_bytes / GiB);
    if (want > ceiling)
        want = ceiling;
    if (want < 4)
        want = 4;
    return want > 4096 ? 4096 : (unsigned) want;
}

/* A session holds its worker until it ends, minutes later perhaps, outside the round-robin:
 * were sessions allowed every worker, one uid's idle sessions would starve every other uid's
 * execs. The workers kept back are shared by all uids' ephemeral jobs in turn. */
unsigned
sched_session_capacity(unsigned max_workers)
{
    if (max_workers < 2)
        return max_workers;
    unsigned reserve = max_workers / 4;
    return max_workers - (reserve ? reserve : 1);
}

unsigned
sched_session_share(unsigned max_workers)
{
    unsigned capacity = sched_session_capacity(max_workers);
    return capacity > 1 ? (capacity + 1) / 2 : 1;
}

void
sched_derive_limits(struct policy_limits *limits)
{
    if (limits->v[POLICY_LIMIT_MAX_WORKERS] == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        uint64_t memory = pages > 0 && page > 0 ? (uint64_t) pages * (uint64_t) page : 0;
        limits->v[POLICY_LIMIT_MAX_WORKERS] =
                sched_default_workers(cores > 0 ? (unsigned) cores : 1, memory);
    }
    if (limits->v[POLICY_LIMIT_MAX_JOBS_PER_UID] == 0 ||
        limits->v[POLICY_LIMIT_MAX_JOBS_PER_UID] > limits->v[POLICY_LIMIT_MAX_WORKERS])
        limits->v[POLICY_LIMIT_MAX_JOBS_PER_UID] = limits->v[POLICY_LIMIT_MAX_WORKERS];
    unsigned workers = (unsigned) limits->v[POLICY_LIMIT_MAX_WORKERS];
    int64_t *share = &limits->v[POLICY_LIMIT_MAX_SESSION_WORKERS_PER_UID];
    if (*share == 0)
        *share = sched_session_share(workers);
    else if (*share > sched_session_capacity(workers))
        *share = sched_session_capacity(workers);
}

void
sched_init(struct sched *s, const struct policy_limits *limits, sched_start_cb start_cb, void *ctx)
{
    memset(s, 0, sizeof(*s));
    s->start_cb = start_cb;
    s->ctx = ctx;
    s->max_queued = (unsigned) limits->v[POLICY_LIMIT_MAX_QUEUED];
    s->max_queued_uid = (unsigned) limits->v[POLICY_LIMIT_MAX_QUEUED_PER_UID];
    s->max_running_uid = (unsigned) limits->v[POLICY_LIMIT_MAX_JOBS_PER_UID];
    s->max_workers = (unsigned) limits->v[POLICY_LIMIT_MAX_WORKERS];
    s->max_conns_uid = (unsigned) limits->v[POLICY_LIMIT_MAX_CONNECTIONS_PER_UID];
    s->max_bytes_uid = (uint64_t) limits->v[POLICY_LIMIT_MAX_BYTES_PER_UID];
    s->max_bytes = (uint64_t) limits->v[POLICY_LIMIT_MAX_BYTES];
    if (s->max_workers == 0)
        s->max_workers = 1;
    if (s->max_running_uid == 0)
        s->max_running_uid = s->max_workers;
    s->max_session_workers_uid = (unsigned) limits->v[POLICY_LIMIT_MAX_SESSION_WORKERS_PER_UID];
    if (s->max_session_workers_uid == 0)
        s->max_session_workers_uid = sched_session_share(s->max_workers);
    s->avg_run_ms = AVG_START_MS;
    dlist_init(&s->ready);
    for (size_t i = 0; i < SCHED_HASH_BUCKETS; i++)
        dlist_init(&s->buckets[i]);
}

void
sched_finish(struct sched *s)
{
    struct dlist *pos, *tmp;
    for (size_t i = 0; i < SCHED_HASH_BUCKETS; i++)
        DLIST_FOREACH_SAFE(pos, tmp, &s->buckets[i]) {
            dlist_remove(pos);
            free(pf_container_of(pos, struct sched_uid, hash_link));
        }
    s->n_uids = 0;
}

static struct dlist *
bucket(struct sched *s, uid_t uid)
{
    return &s->buckets[(uid * 2654435761u) % SCHED_HASH_BUCKETS];
}

struct sched_uid *
sched_uid_find(struct sched *s, uid_t uid)
{
    struct dlist *head = bucket(s, uid), *pos;
    for (pos = head->next; pos != head; pos = pos->next) {
        struct sched_uid *u = pf_container_of(pos, struct sched_uid, hash_link);
        if (u->uid == uid)
            return u;
    }
    return NULL;
}

static struct sched_uid *
uid_get(struct sched *s, uid_t uid)
{
    struct sched_uid *u = sched_uid_find(s, uid);
    if (u)
        return u;
    u = calloc(1, sizeof(*u));
    if (!u)
        return NULL;
    u->uid = uid;
    dlist_init(&u->queue);
    dlist_init(&u->ready_link);
    dlist_insert_tail(bucket(s, uid), &u->hash_link);
    s->n_uids++;
    return u;
}

/* A record with nothing left to count goes; its counters with it. */
static void
uid_maybe_free(struct sched *s, struct sched_uid *u)
{
    if (u->queued || u->running || u->conns || u->sessions || u->bytes)
        return;
    if (s->last == u)
        s->last = NULL;
    dlist_remove(&u->ready_link);
    dlist_remove(&u->hash_link);
    s->n_uids--;
    free(u);
}

/* Keeps u in the ready ring exactly when it has a queued job it may start. */
static void
update_ready(struct sched *s, struct sched_uid *u)
{
    bool want = u->queued > 0 && u->running < s->max_running_uid;
    /* A uid that becomes ready goes just before the one served last (the ring's tail), so it
     * is served before that one comes round again: a lone flooder is not served twice while a
     * newcomer waits. */
    if (want && !u->in_ready)
        dlist_insert_tail(s->last && s->last->in_ready ? &s->last->ready_link : &s->ready,
                          &u->ready_link);
    else if (!want && u->in_ready)
        dlist_remove(&u->ready_link);
    u->in_ready = want;
}

int
sched_peer_attach(struct sched *s, uid_t uid, unsigned *ret_conns)
{
    struct sched_uid *u = uid_get(s, uid);
    if (!u)
        return -ENOMEM;
    if (ret_conns)
        *ret_conns = u->conns;
    if (u->conns >= s->max_conns_uid) {
        uid_maybe_free(s, u);
        return -EBUSY;
    }
    if (u->conns++ == 0)
        s->peers++;
    return 0;
}

void
sched_peer_detach(struct sched *s, uid_t uid)
{
    struct sched_uid *u = sched_uid_find(s, uid);
    if (!u || u->conns == 0)
        return;
    if (--u->conns == 0)
        s->peers--;
    uid_maybe_free(s, u);
}

int
sched_session_attach(struct sched *s, uid_t uid)
{
    struct sched_uid *u = uid_get(s, uid);
    if (!u)
        return -ENOMEM;
    u->sessions++;
    return 0;
}

void
sched_session_detach(struct sched *s, uid_t uid)
{
    struct sched_uid *u = sched_uid_find(s, uid);
    if (!u || u->sessions == 0)
        return;
    u->sessions--;
    uid_maybe_free(s, u);
}

int
sched_bytes_charge(struct sched *s, uid_t uid, uint64_t n)
{
    struct sched_uid *u = uid_get(s, uid);
    if (!u)
        return -ENOMEM;
    u->bytes += n;
    s->bytes += n;
    return 0;
}

void
sched_bytes_release(struct sched *s, uid_t uid, uint64_t n)
{
    struct sched_uid *u = sched_uid_find(s, uid);
    /* A release without its charge is a bug of ours: the counts stay as they were. */
    if (pf_fails_assert(u && u->bytes >= n && s->bytes >= n))
        return;
    u->bytes -= n;
    s->bytes -= n;
    uid_maybe_free(s, u);
}

uint64_t
sched_bytes_of(struct sched *s, uid_t uid)
{
    struct sched_uid *u = sched_uid_find(s, uid);
    return u ? u->bytes : 0;
}

/* True when held + n is past max. */
static bool
past(uint64_t held, uint64_t n, uint64_t max)
{
    return held > max || n > max - held;
}

static const char *
bytes_bound(const struct sched *s, uint64_t uid_held, uint64_t n)
{
    if (past(uid_held, n, s->max_bytes_uid))
        return "max_bytes_per_uid";
    if (past(s->bytes, n, s->max_bytes))
        return "max_bytes";
    return NULL;
}

const char *
sched_bytes_bound(struct sched *s, uid_t uid, uint64_t n)
{
    return bytes_bound(s, sched_bytes_of(s, uid), n);
}

const char *
sched_bytes_over(struct sched *s, uid_t uid)
{
    uint64_t held = sched_bytes_of(s, uid);
    if (held > s->max_bytes_uid)
        return "max_bytes_per_uid";
    if (s->bytes > s->max_bytes && s->n_uids > 0 && held > s->max_bytes / s->n_uids)
        return "max_bytes";
    return NULL;
}

uint32_t
sched_retry_after(const struct sched *s, const char *why)
{
    bool per_uid = strcmp(why, "max_queued") != 0 && strcmp(why, "max_bytes") != 0;
    unsigned turns = 1;
    if (per_uid) {
        const struct dlist *pos;
        for (pos = s->ready.next; pos != &s->ready; pos = pos->next)
            turns++;
    }
    return sched_retry_ms(s->avg_run_ms * turns / s->max_workers);
}

uint32_t
sched_retry_ms(double ms)
{
    ms = ceil(ms);
    if (ms < SCHED_RETRY_MIN_MS)
        ms = SCHED_RETRY_MIN_MS;
    if (ms > SCHED_RETRY_MAX_MS)
        ms = SCHED_RETRY_MAX_MS;
    return (uint32_t) ms;
}

int
sched_submit(struct sched *s, struct sched_entry *e, uid_t uid, bool startable, uint64_t bytes,
             uint32_t *ret_retry_after_ms, const char **ret_why)
{
    struct sched_uid *u = uid_get(s, uid);
    if (!u)
        return -ENOMEM;
    /* Nobody else is waiting for a worker this job may take: the next pump starts it. */
    bool goes_now = startable && dlist_empty(&s->ready) && u->queued == 0 &&
                    u->running < s->max_running_uid;
    const char *why = NULL;
    if (!goes_now && s->queued >= s->max_queued)
        why = "max_queued";
    else if (!goes_now && u->queued >= s->max_queued_uid)
        why = "max_queued_per_uid";
    else if (!goes_now)
        why = bytes_bound(s, u->bytes, bytes);
    if (why) {
        if (ret_retry_after_ms)
            *ret_retry_after_ms = sched_retry_after(s, why);
        if (ret_why)
            *ret_why = why;
        uid_maybe_free(s, u);
        return -EBUSY;
    }
    e->u = u;
    e->state = SCHED_QUEUED;
    e->bytes = bytes;
    dlist_insert_tail(&u->queue, &e->link);
    u->queued++;
    u->jobs++;
    s->admitted++;
    s->queued++;
    u->bytes += bytes;
    s->bytes += bytes;
    update_ready(s, u);
    return 0;
}

int
sched_busy_error(struct sched *s, uid_t uid, const char *why, uint32_t retry_after_ms,
                 struct pf_error **err)
{
    if (why && strcmp(why, "max_bytes_per_uid") == 0)
        return pf_error_set(err, PF_E_BUSY,
                            "pyfenced already holds %llu bytes for uid %u (max_bytes_per_uid "
                            "%llu: its unread replies, the frames it is sending and its requests "
                            "waiting for a worker or a session's turn); try again in %u ms",
                            (unsigned long long) sched_bytes_of(s, uid), (unsigned) uid,
                            (unsigned long long) s->max_bytes_uid, retry_after_ms);
    if (why && strcmp(why, "max_bytes") == 0)
        return pf_error_set(err, PF_E_BUSY,
                            "pyfenced already holds %llu bytes for all uids together (max_bytes "
                            "%llu: their unread replies, the frames they are sending and their "
                            "requests waiting for a worker or a session's turn); try again in %u "
                            "ms",
                            (unsigned long long) s->bytes, (unsigned long long) s->max_bytes,
                            retry_after_ms);
    return pf_error_set(err, PF_E_BUSY,
                        "%u jobs already wait for a worker (%s); try again in %u ms", s->queued,
                        why ? why : "max_queued", retry_after_ms);
}

/* Takes e off u's queue, as running. */
static void
dequeue(struct sched *s, struct sched_uid *u, struct sched_entry *e)
{
    dlist_remove(&e->link);
    u->queued--;
    s->queued--;
    u->bytes -= e->bytes;
    s->bytes -= e->bytes;
    e->state = SCHED_RUNNING;
    u->running++;
    s->running++;
}

/* The callback did not start e: it goes back into its queue just before `next` (where it was). */
static void
requeue_before(struct sched *s, struct sched_entry *e, struct dlist *next)
{
    struct sched_uid *u = e->u;
    u->running--;
    s->running--;
    e->state = SCHED_QUEUED;
    dlist_insert_tail(next, &e->link);
    u->queued++;
    s->queued++;
    u->bytes += e->bytes;
    s->bytes += e->bytes;
}

/* Offers u's entry e a worker. Round robin: u goes to the back of the ring before e starts;
 * when e does not start (no slot, or skipped), both go back where they were: u keeps its turn,
 * e its place. */
static enum sched_start
try_start(struct sched *s, struct sched_uid *u, struct sched_entry *e)
{
    struct dlist *queue_next = e->link.next, *ring_next = u->ready_link.next;
    struct sched_uid *last = s->last;
    dlist_remove(&u->ready_link);
    dlist_insert_tail(&s->ready, &u->ready_link);
    s->last = u;
    dequeue(s, u, e);
    enum sched_start r = s->start_cb(s->ctx, e);
    if (r == SCHED_NO_SLOT || r == SCHED_SKIP) {
        requeue_before(s, e, queue_next);
        s->last = last;
        dlist_remove(&u->ready_link);
        dlist_insert_tail(ring_next, &u->ready_link);
    } else if (r == SCHED_STARTED) {
        update_ready(s, u);
    }
    /* SCHED_FAILED: the callback called sched_done; u may be gone with it. */
    return r;
}

/* The uid whose turn it is: the first of the ring not skipped in this pump. */
static struct sched_uid *
next_turn(struct sched *s)
{
    for (struct dlist *pos = s->ready.next; pos != &s->ready; pos = pos->next) {
        struct sched_uid *u = pf_container_of(pos, struct sched_uid, ready_link);
        if (u->skipped != s->pumps)
            return u;
    }
    return NULL;
}

void
sched_pump(struct sched *s)
{
    if (s->pumping || !s->start_cb)
        return;
    s->pumping = true;
    s->pumps++;
    struct sched_uid *u;
    while ((u = next_turn(s))) {
        /* Its oldest entry that can start now; a skipped one stays where it was, and the
         * entries after it are independent of why it cannot start. */
        enum sched_start r = SCHED_SKIP;
        for (struct dlist *q = u->queue.next; r == SCHED_SKIP && q != &u->queue;) {
            struct sched_entry *e = pf_container_of(q, struct sched_entry, link);
            q = q->next; /* a skip leaves the queue as it was: e goes back before q */
            r = try_start(s, u, e);
        }
        if (r == SCHED_NO_SLOT)
            break; /* nobody's entry can have a worker now */
        if (r == SCHED_SKIP)
            u->skipped = s->pumps; /* none of its entries can start: the next uid's turn */
    }
    s->pumping = false;
}

void
sched_done(struct sched *s, struct sched_entry *e, double held_ms)
{
    struct sched_uid *u = e->u;
    if (e->state == SCHED_QUEUED) {
        dlist_remove(&e->link);
        u->queued--;
        s->queued--;
        u->bytes -= e->bytes;
        s->bytes -= e->bytes;
    } else if (e->state == SCHED_RUNNING) {
        u->running--;
        s->running--;
        if (held_ms >= 0)
            s->avg_run_ms += AVG_WEIGHT * (held_ms - s->avg_run_ms);
    } else {
        return;
    }
    e->state = SCHED_NONE;
    e->u = NULL;
    update_ready(s, u);
    uid_maybe_free(s, u);
}

struct sched_entry *
sched_find_queued(struct sched *s, sched_match_cb match, void *ctx)
{
    for (size_t i = 0; i < SCHED_HASH_BUCKETS; i++)
        for (struct dlist *pos = s->buckets[i].next; pos != &s->buckets[i]; pos = pos->next) {
            struct sched_uid *u = pf_container_of(pos, struct sched_uid, hash_link);
            for (struct dlist *q = u->queue.next; q != &u->queue; q = q->next) {
                struct sched_entry *e = pf_container_of(q, struct sched_entry, link);
                if (match(ctx, e))
                    return e;
            }
        }
    return NULL;
}

static cJSON *
uid_json(const struct sched_uid *u)
{
    cJSON *o = cJSON_CreateObject();
    if (o && cJSON_AddNumberToObject(o, "uid", u->uid) &&
        cJSON_AddNumberToObject(o, "conns", u->conns) &&
        cJSON_AddNumberToObject(o, "sessions", u->sessions) &&
        cJSON_AddNumberToObject(o, "jobs", (double) u->jobs) &&
        cJSON_AddNumberToObject(o, "queued", u->queued) &&
        cJSON_AddNumberToObject(o, "running", u->running) &&
        cJSON_AddNumberToObject(o, "bytes", (double) u->bytes))
        return o;
    cJSON_Delete(o);
    return NULL;
}

static int
cmp_uid(const void *a, const void *b)
{
    uid_t x = (*(const struct sched_uid *const *) a)->uid;
    uid_t y = (*(const struct sched_uid *const *) b)->uid;
    return (x > y) - (x < y);
}

cJSON *
sched_stats_json(const struct sched *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *uids = o ? cJSON_AddArrayToObject(o, "uids") : NULL;
    _cleanup_free_ const struct sched_uid **sorted = calloc(s->n_uids + 1, sizeof(*sorted));
    bool ok = uids && sorted && cJSON_AddNumberToObject(o, "queued", s->queued) &&
              cJSON_AddNumberToObject(o, "running", s->running) &&
              cJSON_AddNumberToObject(o, "max_queued", s->max_queued) &&
              cJSON_AddNumberToObject(o, "max_queued_per_uid", s->max_queued_uid) &&
              cJSON_AddNumberToObject(o, "max_jobs_per_uid", s->max_running_uid) &&
              cJSON_AddNumberToObject(o, "max_connections_per_uid", s->max_conns_uid) &&
              cJSON_AddNumberToObject(o, "max_bytes_per_uid", (double) s->max_bytes_uid) &&
              cJSON_AddNumberToObject(o, "max_bytes", (double) s->max_bytes) &&
              cJSON_AddNumberToObject(o, "bytes", (double) s->bytes) &&
              cJSON_AddNumberToObject(o, "peers", s->peers) &&
              cJSON_AddNumberToObject(o, "avg_job_ms", round(s->avg_run_ms * 1000) / 1000);
    size_t n = 0;
    for (size_t i = 0; ok && i < SCHED_HASH_BUCKETS; i++)
        for (const struct dlist *pos = s->buckets[i].next; pos != &s->buckets[i]; pos = pos->next)
            if (n < s->n_uids)
                sorted[n++] = pf_container_of(pos, struct sched_uid, hash_link);
    if (ok)
        qsort(sorted, n, sizeof(*sorted), cmp_uid);
    for (size_t i = 0; ok && i < n; i++) {
        cJSON *u = uid_json(sorted[i]);
        ok = u && cJSON_AddItemToArray(uids, u);
    }
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}
