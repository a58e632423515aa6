/* The session table: ids, ownership, expiry, and what a closing connection leaves of its
 * sessions. No worker here (session_worker.c). */
#include "session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "pf_cleanup.h"

static const char *const state_names[_SESSION_STATE_MAX] = {
        [SESSION_STARTING] = "starting", [SESSION_IDLE] = "idle",   [SESSION_BUSY] = "busy",
        [SESSION_LOST] = "lost",         [SESSION_ENDED] = "ended",
};

const char *
session_state_name(enum session_state state)
{
    return (int) state >= 0 && state < _SESSION_STATE_MAX ? state_names[state] : "?";
}

static uint64_t
unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

void
session_table_init(struct session_table *t, uv_loop_t *loop, struct sched *sched,
                   session_expire_cb expire_cb)
{
    memset(t, 0, sizeof(*t));
    t->loop = loop;
    t->sched = sched;
    t->expire_cb = expire_cb;
    dlist_init(&t->all);
    dlist_init(&t->ended);
}

/* 128 bits from the kernel's CSPRNG, as 32 lower-case hex digits. */
static int
make_id(char out[SESSION_ID_LEN + 1], struct pf_error **err)
{
    unsigned char raw[SESSION_ID_BYTES];
    size_t have = 0;
    while (have < sizeof(raw)) {
        ssize_t n = getrandom(raw + have, sizeof(raw) - have, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "getrandom");
        have += (size_t) n;
    }
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof(raw); i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 0xf];
    }
    out[SESSION_ID_LEN] = '\0';
    return 0;
}

static struct session *
lookup(struct session_table *t, const char *id)
{
    struct dlist *pos, *tmp;
    DLIST_FOREACH_SAFE(pos, tmp, &t->all) {
        struct session *s = pf_container_of(pos, struct session, link);
        if (strcmp(s->id, id) == 0)
            return s;
    }
    return NULL;
}

size_t
session_count_uid(const struct session_table *t, uid_t uid)
{
    const struct sched_uid *u = sched_uid_find(t->sched, uid);
    return u ? u->sessions : 0;
}

/* A session holds a worker, or waits for one, unless it is lost. */
static bool
holds_worker(const struct session *s)
{
    return s->state != SESSION_LOST;
}

size_t
session_count_holding(const struct session_table *t)
{
    size_t n = 0;
    for (const struct dlist *pos = t->all.next; pos != &t->all; pos = pos->next)
        if (holds_worker(pf_container_of(pos, const struct session, link)))
            n++;
    return n;
}

size_t
session_count_holding_uid(const struct session_table *t, uid_t uid)
{
    size_t n = 0;
    for (const struct dlist *pos = t->all.next; pos != &t->all; pos = pos->next) {
        const struct session *s = pf_container_of(pos, const struct session, link);
        if (s->uid == uid && holds_worker(s))
            n++;
    }
    return n;
}

/* Past max_sessions_per_uid (a profile's bound), past the uid's share of the session workers
 * (max_session_workers_per_uid), or past what sessions of all uids may hold of the daemon's
 * workers (sched_session_capacity): busy, not a wait in the queue, since a session frees its
 * worker only when it ends, which may be hours away. The uid's share comes before the total,
 * so that one uid's sessions, detached and renewed by an exec now and then, cannot keep every
 * other uid from opening one. */
static int
check_room(struct session_table *t, uid_t uid, const char *profile,
           const struct policy_limits *limits, struct pf_error **err)
{
    int64_t max = limits->v[POLICY_LIMIT_MAX_SESSIONS_PER_UID];
    size_t have = session_count_uid(t, uid);
    if ((int64_t) have >= max) {
        if (max == 0)
            return pf_error_set(err, PF_E_PERMISSION,
                                "profile '%s' allows no sessions (max_sessions_per_uid 0)",
                                profile);
        return pf_error_set(err, PF_E_BUSY,
                            "uid %u already has %zu open sessions (max_sessions_per_uid %lld); "
                            "close one first",
                            (unsigned) uid, have, (long long) max);
    }
    unsigned workers = t->sched->max_workers;
    unsigned capacity = sched_session_capacity(workers);
    /* A share of all of it (a lone session worker) bounds nothing the total does not. */
    unsigned share = t->sched->max_session_workers_uid;
    size_t mine = session_count_holding_uid(t, uid);
    if (share < capacity && mine >= share)
        return pf_error_set(err, PF_E_BUSY,
                            "the sessions of uid %u already hold %zu of the session workers "
                            "(max_session_workers_per_uid %u; the others are left for other "
                            "uids); close one first",
                            (unsigned) uid, mine, share);
    size_t holding = session_count_holding(t);
    if (holding >= capacity)
        return pf_error_set(err, PF_E_BUSY,
                            "sessions already hold their share of the workers: %zu of max_workers "
                            "%u (%u kept for ephemeral execs); try again when a session ends",
                            holding, workers, workers - capacity);
    return 0;
}

static bool
is_busy(const struct session *s)
{
    return s->state == SESSION_STARTING || s->state == SESSION_BUSY;
}

static void on_expiry(uv_timer_t *timer);

/* One timer for both bounds: the lifetime always, the idle time while no request runs. */
static void
arm_expiry(struct session *s)
{
    if (s->state == SESSION_ENDED)
        return;
    uint64_t now = uv_now(s->table->loop);
    uint64_t due = s->created_at + (uint64_t) s->limits.v[POLICY_LIMIT_SESSION_LIFETIME_MS];
    if (!is_busy(s)) {
        uint64_t idle_due =
                s->last_active + (uint64_t) s->limits.v[POLICY_LIMIT_SESSION_IDLE_TIMEOUT_MS];
        if (idle_due < due)
            due = idle_due;
    }
    uv_timer_start(&s->expiry, on_expiry, due > now ? due - now : 0, 0);
}

static void
on_expiry(uv_timer_t *timer)
{
    struct session *s = timer->data;
    uint64_t now = uv_now(s->table->loop);
    if (now >= s->created_at + (uint64_t) s->limits.v[POLICY_LIMIT_SESSION_LIFETIME_MS]) {
        s->table->expire_cb(s, SESSION_END_LIFETIME);
        return;
    }
    if (!is_busy(s) &&
        now >= s->last_active + (uint64_t) s->limits.v[POLICY_LIMIT_SESSION_IDLE_TIMEOUT_MS]) {
        s->table->expire_cb(s, SESSION_END_IDLE);
        return;
    }
    arm_expiry(s);
}

struct session *
session_new(struct session_table *t, const struct policy_peer *peer, const char *profile,
            const struct policy_limits *limits, struct pf_error **err)
{
    uid_t uid = peer->uid;
    if (check_room(t, uid, profile, limits, err) < 0)
        return NULL;
    _cleanup_free_ struct session *s = calloc(1, sizeof(*s));
    _cleanup_free_ gid_t *groups = peer->n_groups ? calloc(peer->n_groups, sizeof(gid_t)) : NULL;
    if (!s || (peer->n_groups && !groups)) {
        pf_error_set(err, PF_E_INTERNAL, "out of memory");
        return NULL;
    }
    /* A collision of 128 random bits does not happen; checking costs nothing. */
    do {
        if (make_id(s->id, err) < 0)
            return NULL;
    } while (lookup(t, s->id));
    if (sched_session_attach(t->sched, uid) < 0) {
        pf_error_set(err, PF_E_INTERNAL, "out of memory");
        return NULL;
    }
    s->ctx_kind = WORKER_CTX_SESSION;
    s->table = t;
    s->uid = uid;
    s->gid = peer->gid;
    if (groups)
        memcpy(groups, peer->groups, peer->n_groups * sizeof(gid_t));
    s->groups = TAKE_PTR(groups);
    s->n_groups = peer->n_groups;
    snprintf(s->profile, sizeof(s->profile), "%s", profile);
    s->limits = *limits;
    s->state = SESSION_STARTING;
    s->sched.kind = WORKER_CTX_SESSION;
    dlist_init(&s->pending);
    dlist_init(&s->req.link);
    s->created_ms = s->last_used_ms = unix_ms();
    s->created_at = s->last_active = uv_now(t->loop);
    uv_timer_init(t->loop, &s->expiry);
    s->expiry.data = s;
    s->open_handles = 1;
    dlist_insert_tail(&t->all, &s->link);
    t->n++;
    arm_expiry(s);
    return TAKE_PTR(s);
}

struct session *
session_find(struct session_table *t, const char *id, uid_t uid, struct pf_error **err)
{
    struct session *s = lookup(t, id);
    /* Another uid's session is answered like a missing one: ids never leak through errors.
     * id is at most MSG_SESSION_ID_MAX bytes of valid UTF-8 (the request schema). */
    if (!s || s->uid != uid) {
        pf_error_set(err, PF_E_NOT_FOUND, "no session '%s'", id);
        return NULL;
    }
    return s;
}

void
session_touch_busy(struct session *s)
{
    s->last_used_ms = unix_ms();
    arm_expiry(s);
}

void
session_touch_idle(struct session *s)
{
    s->last_used_ms = unix_ms();
    s->last_active = uv_now(s->table->loop);
    arm_expiry(s);
}

void
session_unlink(struct session *s, enum session_end why)
{
    if (s->state == SESSION_ENDED)
        return;
    s->state = SESSION_ENDED;
    s->end_reason = why;
    uv_timer_stop(&s->expiry);
    dlist_remove(&s->link);
    dlist_insert_tail(&s->table->ended, &s->link);
    s->table->n--;
    sched_session_detach(s->table->sched, s->uid);
}

void
session_on_handle_closed(uv_handle_t *handle)
{
    struct session *s = handle->data;
    if (--s->open_handles > 0)
        return;
    dlist_remove(&s->link);
    frame_decoder_finish(&s->dec);
    cJSON_Delete(s->req.id);
    cJSON_Delete(s->req.names);
    cJSON_Delete(s->req.frame);
    /* Every waiting request was answered or dropped when the session ended. */
    struct session_req *r;
    while ((r = session_queue_pop(s)))
        session_req_free(r);
    free(s->lost_cause);
    free(s->groups);
    free(s);
}

void
session_maybe_release(struct session *s)
{
    if (s->releasing || s->state != SESSION_ENDED || s->channel_open || s->awaiting_exit)
        return;
    s->releasing = true;
    if (s->worker_handles)
        uv_close((uv_handle_t *) &s->deadline, session_on_handle_closed);
    uv_close((uv_handle_t *) &s->expiry, session_on_handle_closed);
}

static cJSON *
session_json(const struct session *s)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    bool ok = cJSON_AddStringToObject(o, "id", s->id) &&
              cJSON_AddStringToObject(o, "profile", s->profile) &&
              cJSON_AddNumberToObject(o, "created", (double) s->created_ms) &&
              cJSON_AddNumberToObject(o, "last_used", (double) s->last_used_ms) &&
              cJSON_AddNumberToObject(o, "execs", (double) s->execs) &&
              cJSON_AddBoolToObject(o, "detached", s->detached) &&
              cJSON_AddStringToObject(o, "state", session_state_name(s->state)) &&
              cJSON_AddNumberToObject(o, "pending", s->n_pending);
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

cJSON *
session_list_json(const struct session_table *t, uid_t uid)
{
    cJSON *list = cJSON_CreateArray();
    for (const struct dlist *pos = t->all.next; list && pos != &t->all; pos = pos->next) {
        const struct session *s = pf_container_of(pos, struct session, link);
        if (s->uid != uid)
            continue;
        cJSON *o = session_json(s);
        if (!o) {
            cJSON_Delete(list);
            return NULL;
        }
        cJSON_AddItemToArray(list, o);
    }
    return list;
}

/* The first session of t->all not visited in this pass yet, now marked; NULL when none is
 * left. From the head each time, not from a saved next: ending a session answers its requests,
 * and an answer may close another connection (over max_outbuf_bytes), which ends that one's
 * sessions at once, perhaps the saved next among them. Sessions are freed only in close
 * callbacks, never during a pass. */
static struct session *
next_unvisited(struct session_table *t, unsigned pass)
{
    struct dlist *pos, *tmp;
    DLIST_FOREACH_SAFE(pos, tmp, &t->all) {
        struct session *s = pf_container_of(pos, struct session, link);
        if (s->pass != pass) {
            s->pass = pass;
            return s;
        }
    }
    return NULL;
}

void
session_conn_gone(struct session_table *t, struct conn *c)
{
    unsigned pass = ++t->pass;
    struct session *s;
    while ((s = next_unvisited(t, pass))) {
        session_queue_conn_gone(s, c);
        /* An open nobody will hear the answer of leaves nothing behind: even a detached
         * session, whose id was never told. */
        bool opening = s->req.kind == SESSION_REQ_OPEN && s->req.conn == c;
        bool ends = s->owner == c || opening;
        if (s->req.conn == c) {
            s->req.conn = NULL;
            /* Nobody is left to hear how its snippet ends: it is cancelled as `cancel` would,
             * and a session that goes on (detached) serves its next request at once. */
            if (!ends)
                session_cancel_running(s);
        }
        if (ends)
            session_end(s, SESSION_END_CONN);
    }
}
