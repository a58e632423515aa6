#include "pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "job.h"
#include "load.h"
#include "ops.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "session.h"
#include "zygote.h"

static void on_check(uv_check_t *h);

static void on_sweep(uv_timer_t *t);
static void on_hold_end(uv_timer_t *t);
static void on_zygote_wait(uv_timer_t *t);

void
pools_init(struct pools *ps, struct daemon *d)
{
    memset(ps, 0, sizeof(*ps));
    ps->d = d;
    dlist_init(&ps->list);
    uv_check_init(d->loop, &ps->check);
    uv_timer_init(d->loop, &ps->sweep);
    uv_timer_init(d->loop, &ps->hold);
    uv_timer_init(d->loop, &ps->zygote_wait);
    ps->check.data = ps;
    ps->sweep.data = ps;
    ps->hold.data = ps;
    ps->zygote_wait.data = ps;
    /* None keeps the loop alive: they only matter while something else does. */
    uv_unref((uv_handle_t *) &ps->check);
    uv_unref((uv_handle_t *) &ps->sweep);
    uv_unref((uv_handle_t *) &ps->hold);
    uv_unref((uv_handle_t *) &ps->zygote_wait);
    uv_timer_start(&ps->sweep, on_sweep, POOL_SWEEP_MS, POOL_SWEEP_MS);
}

static bool
same_params(const struct harden_params *a, const struct harden_params *b)
{
    return memcmp(a, b, sizeof(*a)) == 0;
}

static struct pool *
pool_find(const struct pools *ps, const char *name)
{
    struct dlist *pos;
    for (pos = ps->list.next; pos != &ps->list; pos = pos->next) {
        struct pool *p = pf_container_of(pos, struct pool, link);
        if (strcmp(p->name, name) == 0)
            return p;
    }
    return NULL;
}

static struct job *
first_idle(struct pool *p)
{
    return dlist_empty(&p->idle) ? NULL : pf_container_of(p->idle.next, struct job, pool_link);
}

/* Takes j out of its pool without touching the worker. */
static void
detach(struct job *j)
{
    struct pool *p = j->pool;
    dlist_remove(&j->pool_link);
    p->n_idle--;
    j->pool = NULL;
}

/* Lets an idle worker go (recycled, evicted, or its pool changed): killed, then released like
 * any job once the zygote reports its end. */
static void
let_go(struct job *j)
{
    detach(j);
    job_fail(j, PF_E_SHUTTING_DOWN, "idle pool worker recycled", JOB_KILL_SHUTDOWN);
}

static void
drain(struct pool *p)
{
    struct job *j;
    while ((j = first_idle(p))) {
        p->recycled++;
        let_go(j);
    }
}

void
pools_stop(struct pools *ps)
{
    struct dlist *pos, *tmp;
    DLIST_FOREACH_SAFE(pos, tmp, &ps->list) {
        struct pool *p = pf_container_of(pos, struct pool, link);
        /* The shutdown fails every job, these workers included. */
        struct job *j;
        while ((j = first_idle(p)))
            detach(j);
        dlist_remove(&p->link);
        free(p);
    }
    ps->check_active = false;
    uv_close((uv_handle_t *) &ps->check, NULL);
    uv_close((uv_handle_t *) &ps->sweep, NULL);
    uv_close((uv_handle_t *) &ps->hold, NULL);
    uv_close((uv_handle_t *) &ps->zygote_wait, NULL);
}

/* The hardening a job of profile p gets when its request tightens nothing. */
static int
profile_params(struct daemon *d, const struct policy_profile *p, struct harden_params *ret,
               struct pf_error **err)
{
    struct job_spec spec = {0};
    cJSON *fields = NULL;
    if (ops_resolve_job(d, p, NULL, &spec, &fields, err) < 0)
        return -1;
    cJSON_Delete(fields);
    job_harden_params(&spec.limits, spec.levels, ret);
    return 0;
}

void
pools_reload(struct pools *ps)
{
    struct daemon *d = ps->d;
    struct dlist *pos, *tmp;
    /* Pools whose profile is gone or keeps no pool any more. */
    DLIST_FOREACH_SAFE(pos, tmp, &ps->list) {
        struct pool *p = pf_container_of(pos, struct pool, link);
        const struct policy_profile *prof = d->policy ? policy_find(d->policy, p->name) : NULL;
        if (prof && prof->limits.v[POLICY_LIMIT_POOL_SIZE] > 0)
            continue;
        pf_log_info(WORKER, "pool '%s': profile gone or pool_size 0, dropping it", p->name);
        drain(p);
        dlist_remove(&p->link);
        free(p);
    }
    for (size_t i = 0; d->policy && i < d->policy->n; i++) {
        const struct policy_profile *prof = d->policy->profiles[i];
        unsigned size = (unsigned) prof->limits.v[POLICY_LIMIT_POOL_SIZE];
        if (size == 0)
            continue;
        struct harden_params params;
        struct pf_error *err = NULL;
        if (profile_params(d, prof, &params, &err) < 0) {
            pf_log_warning(WORKER, "pool '%s': %s, no pool", prof->name,
                           err ? err->msg : "out of memory");
            pf_error_free(err);
            continue;
        }
        struct pool *p = pool_find(ps, prof->name);
        if (!p) {
            p = calloc(1, sizeof(*p));
            if (!p) {
                pf_log_warning(WORKER, "pool '%s': out of memory, no pool", prof->name);
                continue;
            }
            snprintf(p->name, sizeof(p->name), "%s", prof->name);
            dlist_init(&p->idle);
            dlist_insert_tail(&ps->list, &p->link);
        } else if (!same_params(&p->params, &params)) {
            pf_log_info(WORKER, "pool '%s': hardening changed, replacing its idle workers",
                        p->name);
            drain(p);
        }
        p->params = params;
        p->size = size;
        p->failures = 0;
        p->retry_at_ms = 0;
        /* Shrunk: the extra idle workers go. */
        while (p->n_idle > p->size) {
            p->recycled++;
            let_go(first_idle(p));
        }
    }
    pools_kick(ps);
}

void
pools_kick(struct pools *ps)
{
    if (ps->check_active || uv_is_closing((uv_handle_t *) &ps->check))
        return;
    ps->check_active = true;
    uv_check_start(&ps->check, on_check);
}

static bool
slot_free(const struct daemon *d)
{
    return (int64_t) d->jobs_running < d->limits.v[POLICY_LIMIT_MAX_WORKERS];
}

/* The oldest idle worker hardened with params, from `home` first, forked by the zygote a job
 * asks for (`preload`: the preload zygote; -1: either). */
static struct job *
find_idle(const struct pools *ps, const struct harden_params *params, int preload,
          struct pool *home)
{
    if (home && home->n_idle && same_params(&home->params, params) &&
        (preload < 0 || first_idle(home)->preload_zygote == preload))
        return first_idle(home);
    struct dlist *pos;
    for (pos = ps->list.next; pos != &ps->list; pos = pos->next) {
        struct pool *p = pf_container_of(pos, struct pool, link);
        if (p->n_idle && same_params(&p->params, params) &&
            (preload < 0 || first_idle(p)->preload_zygote == preload))
            return first_idle(p);
    }
    return NULL;
}

bool
pools_startable(const struct pools *ps, const struct harden_params *params)
{
    /* A hint for the scheduler: a worker of the other zygote is then evicted to make room. A
     * session's worker is never a pool's: any idle one makes way for it. */
    if (!params)
        return slot_free(ps->d) || pools_idle(ps) > 0;
    return slot_free(ps->d) || find_idle(ps, params, -1, NULL);
}

/* Makes room for a waiting job that no idle worker fits: the oldest idle worker goes. Its slot
 * frees only when the zygote reports its end, and the scheduler asks again on every loop turn
 * meanwhile: at most one worker per waiting job is on its way out, or each turn would kill
 * another ready worker for the same job. */
static void
evict_one(struct pools *ps)
{
    if (ps->evicting > ps->d->sched.queued) /* the job asking is out of the queue meanwhile */
        return;
    struct job *oldest = NULL;
    struct dlist *pos;
    for (pos = ps->list.next; pos != &ps->list; pos = pos->next) {
        struct job *j = first_idle(pf_container_of(pos, struct pool, link));
        if (j && (!oldest || j->spawn_ns < oldest->spawn_ns))
            oldest = j;
    }
    if (oldest) {
        oldest->pool->recycled++;
        oldest->evicted = true;
        ps->evicting++;
        let_go(oldest);
    }
}

/* The zygote that would fork a worker of this kind is being restarted: the job or session
 * waits in the queue meanwhile, as for a slot, rather than fail (pools_kick's check runs on
 * every turn of the loop while anything waits, the restart's included). It is skipped
 * (SCHED_SKIP), not out of slots: the requests behind it that need the other zygote, its
 * uid's and other uids', start meanwhile. No zygote at all is not a wait: job_launch and
 * session_launch answer it. */
static bool
zygote_restarting(const struct daemon *d, bool preload)
{
    const struct zygote *z = daemon_zygote(d, preload);
    return z && !zygote_can_spawn(z);
}

/* ---- requests waiting for a zygote that is down (pool.h) ---------------------------------- */

/* What the scan of the queue needs of one queued entry: its zygote, when its wait for that
 * zygote began, and how long it may last. */
struct zygote_wait {
    bool preload;
    uint64_t since_ns; /* its arrival, or the zygote's loss if that came later */
    int64_t bound_ms;  /* the least of its timeout_ms and POOL_ZYGOTE_WAIT_MS */
};

/* False when e's zygote can spawn (or there is none: job_launch and session_launch answer). */
static bool
zygote_wait_of(const struct daemon *d, struct sched_entry *e, struct zygote_wait *ret)
{
    bool session = e->kind == WORKER_CTX_SESSION;
    const struct session *s = session ? pf_container_of(e, struct session, sched) : NULL;
    const struct job *j = session ? NULL : pf_container_of(e, struct job, sched);
    bool preload = session ? s->preload_zygote : j->preload_zygote;
    const struct zygote *z = daemon_zygote(d, preload);
    uint64_t lost_ns = z && !zygote_can_spawn(z) ? zygote_down_since(z, NULL, 0) : 0;
    if (!lost_ns)
        return false;
    uint64_t arrival_ns = session ? s->req.arrival_ns : j->arrival_ns;
    int64_t timeout_ms = (session ? &s->limits : &j->limits)->v[POLICY_LIMIT_TIMEOUT_MS];
    ret->preload = preload;
    ret->since_ns = arrival_ns > lost_ns ? arrival_ns : lost_ns;
    ret->bound_ms = timeout_ms < POOL_ZYGOTE_WAIT_MS ? timeout_ms : POOL_ZYGOTE_WAIT_MS;
    return true;
}

struct wait_scan {
    struct daemon *d;
    uint64_t now_ns;
    uint64_t next_ns; /* the earliest end of a wait not over yet; UINT64_MAX: none */
};

/* sched_match_cb: e has waited too long for its zygote. */
static bool
wait_over(void *ctx, struct sched_entry *e)
{
    struct wait_scan *scan = ctx;
    struct zygote_wait w;
    if (!zygote_wait_of(scan->d, e, &w))
        return false;
    uint64_t end_ns = w.since_ns + (uint64_t) w.bound_ms * 1000000;
    if (scan->now_ns >= end_ns)
        return true;
    if (end_ns < scan->next_ns)
        scan->next_ns = end_ns;
    return false;
}

/* Answers e, which waited too long for its zygote, through the path its cancel takes: the
 * reply, then its release takes it out of the queue (with its bytes) and the connection's
 * table. */
static void
fail_wait(struct daemon *d, struct sched_entry *e, uint64_t now_ns)
{
    struct zygote_wait w;
    if (pf_fails_assert(zygote_wait_of(d, e, &w)))
        return;
    char why[384], msg[640];
    zygote_down_since(daemon_zygote(d, w.preload), why, sizeof(why));
    snprintf(msg, sizeof(msg),
             "no worker can be forked: the %szygote is down (%s); gave up after waiting %.0f ms "
             "for it (the least of the request's timeout_ms and %d ms)",
             w.preload ? "preload " : "", why, (double) (now_ns - w.since_ns) / 1e6,
             POOL_ZYGOTE_WAIT_MS);
    if (e->kind == WORKER_CTX_SESSION)
        session_open_fail(pf_container_of(e, struct session, sched), PF_E_INTERNAL, msg);
    else
        job_fail(pf_container_of(e, struct job, sched), PF_E_INTERNAL, msg, JOB_KILL_NONE);
}

/* Fails the requests that waited too long for a zygote that is down and arms the timer for the
 * next one. The scan runs when the timer fired, or when an entry was admitted or a zygote was
 * lost since the last one; a wait ends only at one of those moments or later. */
static void
expire_zygote_waits(struct pools *ps, bool fired)
{
    struct daemon *d = ps->d;
    uint64_t lost[2] = {d->zygote ? zygote_down_since(d->zygote, NULL, 0) : 0,
                        d->zygote_preload ? zygote_down_since(d->zygote_preload, NULL, 0) : 0};
    if ((!lost[0] && !lost[1]) || d->sched.queued == 0 || d->shutting_down) {
        uv_timer_stop(&ps->zygote_wait);
        return;
    }
    if (!fired && uv_is_active((uv_handle_t *) &ps->zygote_wait) &&
        ps->wait_admitted == d->sched.admitted && ps->wait_lost_ns[0] == lost[0] &&
        ps->wait_lost_ns[1] == lost[1])
        return;
    ps->wait_admitted = d->sched.admitted;
    memcpy(ps->wait_lost_ns, lost, sizeof(lost));
    struct wait_scan scan = {.d = d, .now_ns = uv_hrtime(), .next_ns = UINT64_MAX};
    struct sched_entry *e;
    unsigned failed = 0;
    /* One at a time, from the start: a reply may close its connection and take that
     * connection's other entries out of the queue. */
    while ((e = sched_find_queued(&d->sched, wait_over, &scan))) {
        fail_wait(d, e, scan.now_ns);
        failed++;
        scan.next_ns = UINT64_MAX;
    }
    if (failed)
        pf_log_warning(WORKER,
                       "%u requests waited too long for a zygote that is down, failing them",
                       failed);
    if (scan.next_ns == UINT64_MAX) {
        uv_timer_stop(&ps->zygote_wait);
        return;
    }
    /* Rounded up: the timer must not fire before the wait is over. */
    uv_timer_start(&ps->zygote_wait, on_zygote_wait, (scan.next_ns - scan.now_ns) / 1000000 + 1, 0);
}

static void
on_zygote_wait(uv_timer_t *t)
{
    expire_zygote_waits(t->data, true);
}

/* A session's worker is forked for it (with its own hardening, and it is not a run frame that
 * it waits for): a free slot, or an idle pool worker makes way and the session waits for the
 * slot that frees when that worker is reaped. */
static enum sched_start
start_session(struct daemon *d, struct session *s)
{
    if (zygote_restarting(d, s->preload_zygote))
        return SCHED_SKIP; /* no idle worker goes for a fork that cannot be had */
    if (!slot_free(d)) {
        evict_one(&d->pools);
        return SCHED_NO_SLOT;
    }
    return session_launch(s);
}

enum sched_start
pools_start_job(void *ctx, struct sched_entry *e)
{
    struct daemon *d = ctx;
    struct pools *ps = &d->pools;
    if (e->kind == WORKER_CTX_SESSION)
        return start_session(d, pf_container_of(e, struct session, sched));
    struct job *q = pf_container_of(e, struct job, sched);
    struct pool *home = q->profile[0] ? pool_find(ps, q->profile) : NULL;
    struct job *w;
    /* A worker killed while idle may not have been reported yet: its pidfd knows. */
    while ((w = find_idle(ps, &q->params, q->preload_zygote, home)) &&
           daemon_zygote(d, w->preload_zygote) &&
           !zygote_worker_alive(daemon_zygote(d, w->preload_zygote), w->id)) {
        w->pool->lost++;
        detach(w);
    }
    if (w) {
        /* The hit is the asking profile's. A pool of another profile with the same hardening
         * may give the worker: it counts it as lent, so that its idle count dropping without
         * a hit of its own is explained. */
        if (home)
            home->hits++;
        if (w->pool != home)
            w->pool->lent++;
        w->pool->failures = 0; /* its workers do come up */
        detach(w);
        pools_request_begun(ps, w); /* before the bind, which may answer at once */
        job_bind(w, q);
        pools_kick(ps); /* refill */
        return SCHED_STARTED;
    }
    if (zygote_restarting(d, q->preload_zygote))
        return SCHED_SKIP;
    if (!slot_free(d)) {
        evict_one(ps);
        return SCHED_NO_SLOT;
    }
    struct pf_error *err = NULL;
    pools_request_begun(ps, q);
    if (job_launch(q, &err) < 0) {
        /* Its release takes it out of the scheduler. */
        job_fail(q, err && err->code > 0 && err->code < _PF_E_MAX ? err->code : PF_E_INTERNAL,
                 err ? err->msg : "out of memory", JOB_KILL_NONE);
        pf_error_free(err);
        return SCHED_FAILED;
    }
    if (home)
        home->misses++;
    return SCHED_STARTED;
}

static int
spawn_one(struct pools *ps, struct pool *p)
{
    struct daemon *d = ps->d;
    struct job_spec spec = {.limits = d->limits, .profile = p->name};
    struct job *j = job_create(d, NULL, NULL, &spec, NULL, 0);
    if (!j)
        return -1;
    j->params = p->params;
    struct pf_error *err = NULL;
    if (job_launch(j, &err) < 0) {
        pf_log_warning(WORKER, "pool '%s': %s", p->name, err ? err->msg : "out of memory");
        pf_error_free(err);
        job_fail(j, PF_E_INTERNAL, "pool worker not started", JOB_KILL_NONE);
        return -1;
    }
    /* Forked, but its channel could not be opened (job_run): the worker is being killed and is
     * released once reaped; a request bound to it could only fail. */
    if (j->channel_done)
        return -1;
    j->pool = p;
    dlist_insert_tail(&p->idle, &j->pool_link);
    p->n_idle++;
    p->spawned++;
    return 0;
}

void
pools_request_begun(struct pools *ps, struct job *j)
{
    if (j->serving)
        return;
    j->serving = true;
    ps->serving++;
    uv_timer_start(&ps->hold, on_hold_end, POOL_HOLD_MS, 0);
}

void
pools_request_answered(struct pools *ps, struct job *j)
{
    if (!j->serving)
        return;
    j->serving = false;
    if (--ps->serving == 0)
        pools_kick(ps);
}

static void
on_hold_end(uv_timer_t *t)
{
    pools_kick(t->data);
}

/* pool.h says why. */
static bool
refill_held(struct pools *ps, struct pool *p)
{
    bool held = p->n_idle > 0 && ps->serving > 0 && uv_is_active((uv_handle_t *) &ps->hold);
    if (held && !p->holding)
        p->held++;
    p->holding = held;
    return held;
}

/* Tops the pools up while no job waits and max_workers allows. True when one is still short. */
static bool
refill(struct pools *ps)
{
    struct daemon *d = ps->d;
    if (d->shutting_down || !d->zygote)
        return false;
    bool short_ = false;
    uint64_t now = uv_now(d->loop);
    struct dlist *pos;
    for (pos = ps->list.next; pos != &ps->list; pos = pos->next) {
        struct pool *p = pf_container_of(pos, struct pool, link);
        /* Not a failure: it refills once its zygote is back. */
        bool waits = zygote_restarting(d, daemon_profile_preloads(d, p->name));
        while (!waits && p->n_idle < p->size && d->sched.queued == 0 && slot_free(d) &&
               now >= p->retry_at_ms && !refill_held(ps, p))
            if (spawn_one(ps, p) < 0) {
                p->retry_at_ms = now + POOL_BACKOFF_MS;
                break;
            }
        short_ = short_ || p->n_idle < p->size;
    }
    return short_;
}

static void
on_check(uv_check_t *h)
{
    struct pools *ps = h->data;
    struct daemon *d = ps->d;
    sched_pump(&d->sched);
    expire_zygote_waits(ps, false);
    bool short_ = refill(ps);
    /* Still needed while jobs wait for a worker or a pool could grow: a slot is freed by a
     * reaped worker, which wakes the loop, and this runs again on that turn. */
    if (d->sched.queued == 0 && !short_) {
        ps->check_active = false;
        uv_check_stop(&ps->check);
    }
}

static void
on_sweep(uv_timer_t *t)
{
    struct pools *ps = t->data;
    uint64_t now = uv_hrtime();
    struct dlist *pos;
    for (pos = ps->list.next; pos != &ps->list; pos = pos->next) {
        struct pool *p = pf_container_of(pos, struct pool, link);
        struct job *j;
        while ((j = first_idle(p)) && now - j->spawn_ns > (uint64_t) POOL_IDLE_MS * 1000000) {
            p->recycled++;
            let_go(j);
        }
    }
    pools_kick(ps);
}

void
pool_worker_lost(struct job *j, bool failure)
{
    struct pool *p = j->pool;
    if (!p)
        return;
    detach(j);
    struct pools *ps = &j->d->pools;
    if (failure) {
        p->lost++;
        if (++p->failures >= POOL_MAX_FAILURES) {
            p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : POOL_BACKOFF_MS;
            if (p->backoff_ms > POOL_BACKOFF_MAX)
                p->backoff_ms = POOL_BACKOFF_MAX;
            p->retry_at_ms = uv_now(j->d->loop) + p->backoff_ms;
            pf_log_warning(WORKER,
                           "pool '%s': %u workers in a row ended before they were used (see "
                           "the log above); refilling again in %llu ms",
                           p->name, p->failures, (unsigned long long) p->backoff_ms);
            p->failures = 0;
        }
    }
    pools_kick(ps);
}

unsigned
pools_idle(const struct pools *ps)
{
    unsigned n = 0;
    struct dlist *pos;
    for (pos = ps->list.next; pos != &ps->list; pos = pos->next)
        n += pf_container_of(pos, struct pool, link)->n_idle;
    return n;
}

cJSON *
pools_stats_json(const struct pools *ps)
{
    cJSON *o = cJSON_CreateObject();
    const struct dlist *pos;
    for (pos = ps->list.next; o && pos != &ps->list; pos = pos->next) {
        const struct pool *p = pf_container_of(pos, struct pool, link);
        cJSON *e = cJSON_AddObjectToObject(o, p->name);
        if (!e || !cJSON_AddNumberToObject(e, "size", p->size) ||
            !cJSON_AddNumberToObject(e, "idle", p->n_idle) ||
            !cJSON_AddNumberToObject(e, "hits", (double) p->hits) ||
            !cJSON_AddNumberToObject(e, "misses", (double) p->misses) ||
            !cJSON_AddNumberToObject(e, "spawned", (double) p->spawned) ||
            !cJSON_AddNumberToObject(e, "held", (double) p->held) ||
            !cJSON_AddNumberToObject(e, "recycled", (double) p->recycled) ||
            !cJSON_AddNumberToObject(e, "lost", (double) p->lost) ||
            !cJSON_AddNumberToObject(e, "lent", (double) p->lent)) {
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}
