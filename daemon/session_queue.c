/* exec and session.get on a session: their frames are made here and they queue for the
 * session's worker. One runs at a time (session.req); later ones wait here in arrival order, as
 * many as the session's max_pending_per_session. No worker here: session_worker.c sends each
 * one when its turn comes (session_next). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "session.h"

/* Weight of the newest sample in the moving average of request times. */
#define AVG_WEIGHT 0.2
/* Until a request has finished, a guess of how long one holds the worker. */
#define AVG_START_MS 10.0

uint64_t
session_frame_bytes(const cJSON *item)
{
    uint64_t n = 0;
    /* Siblings in a loop, children by recursion: a request's depth is bounded (MSG_MAX_DEPTH). */
    for (; item; item = item->next) {
        n += sizeof(*item);
        if (item->string)
            n += strlen(item->string) + 1;
        if (item->valuestring)
            n += strlen(item->valuestring) + 1;
        n += session_frame_bytes(item->child);
    }
    return n;
}

/* r leaves s's queue: what it held no longer counts for its uid. */
static void
unqueue(struct session *s, struct session_req *r)
{
    dlist_remove(&r->link);
    s->n_pending--;
    if (s->table && s->table->sched)
        sched_bytes_release(s->table->sched, s->uid, r->bytes);
    r->bytes = 0;
}

struct session_req *
session_req_free(struct session_req *r)
{
    if (!r)
        return NULL;
    cJSON_Delete(r->id);
    cJSON_Delete(r->names);
    cJSON_Delete(r->frame);
    free(r);
    return NULL;
}

void
session_queue_note_held(struct session *s, double held_ms)
{
    if (s->avg_req_ms <= 0)
        s->avg_req_ms = held_ms;
    else
        s->avg_req_ms += AVG_WEIGHT * (held_ms - s->avg_req_ms);
}

/* When a refused request should come back: once about one request has left the queue, i.e.
 * the one the worker runs has ended. */
static uint32_t
retry_after(const struct session *s)
{
    double avg = s->avg_req_ms > 0 ? s->avg_req_ms : AVG_START_MS;
    /* Part of the running one may have run already. */
    double left = s->req.start_ns ? avg - daemon_elapsed_ms(s->req.start_ns) : avg;
    return sched_retry_ms(left > 0 ? left : 0);
}

int
session_queue_add(struct session *s, enum session_req_kind kind, struct conn *c,
                  const cJSON *req_id, cJSON *frame, cJSON *names, bool stream,
                  uint32_t *ret_retry_after_ms, struct pf_error **err)
{
    struct session_req *r = NULL;
    struct sched *sched = s->table ? s->table->sched : NULL;
    /* A request the worker can take at once never waits, so it is not counted against the
     * limits: with max_pending_per_session 0 a session still serves one request at a time. */
    bool waits = s->state != SESSION_IDLE || s->req.kind != SESSION_REQ_NONE || s->n_pending > 0;
    int64_t max = s->limits.v[POLICY_LIMIT_MAX_PENDING_PER_SESSION];
    uint64_t bytes = session_frame_bytes(frame) + session_frame_bytes(names);
    if (waits && (int64_t) s->n_pending >= max) {
        uint32_t ms = retry_after(s);
        if (ret_retry_after_ms)
            *ret_retry_after_ms = ms;
        pf_error_set(err, PF_E_BUSY,
                     "session '%s' already has %u requests waiting for its worker "
                     "(max_pending_per_session %lld); try again in %u ms",
                     s->id, s->n_pending, (long long) max, ms);
        goto fail;
    }
    const char *why = waits && sched ? sched_bytes_bound(sched, s->uid, bytes) : NULL;
    if (why) {
        uint32_t ms = retry_after(s);
        if (ret_retry_after_ms)
            *ret_retry_after_ms = ms;
        sched_busy_error(sched, s->uid, why, ms, err);
        goto fail;
    }
    r = calloc(1, sizeof(*r));
    if (!r || (req_id && !(r->id = cJSON_Duplicate(req_id, 1)))) {
        pf_error_set(err, PF_E_INTERNAL, "out of memory");
        goto fail;
    }
    if (sched && sched_bytes_charge(sched, s->uid, bytes) < 0) {
        pf_error_set(err, PF_E_INTERNAL, "out of memory");
        cJSON_Delete(r->id);
        goto fail;
    }
    r->bytes = sched ? bytes : 0;
    r->kind = kind;
    r->conn = c;
    r->frame = frame;
    r->names = names;
    r->stream = stream;
    r->arrival_ns = uv_hrtime();
    dlist_insert_tail(&s->pending, &r->link);
    s->n_pending++;
    return 0;
fail:
    free(r);
    cJSON_Delete(frame);
    cJSON_Delete(names);
    return -1;
}

struct session_req *
session_queue_pop(struct session *s)
{
    if (dlist_empty(&s->pending))
        return NULL;
    struct session_req *r = pf_container_of(s->pending.next, struct session_req, link);
    unqueue(s, r);
    return r;
}

cJSON *
session_req_failure(const struct session_req *r, int code, const char *message, bool lost)
{
    cJSON *reply = msg_reply_error(r->id, code, message);
    if (reply && r->kind == SESSION_REQ_EXEC) {
        cJSON_AddStringToObject(reply, "outcome", pf_code_name(code));
        cJSON_AddNullToObject(reply, "output");
        cJSON_AddNullToObject(reply, "output_repr");
        cJSON_AddStringToObject(reply, "logs", "");
        cJSON_AddFalseToObject(reply, "is_final_answer");
        cJSON *stats = cJSON_AddObjectToObject(reply, "stats");
        if (stats) {
            /* A request that never reached the worker waited all along. */
            uint64_t start = r->start_ns ? r->start_ns : uv_hrtime();
            cJSON_AddNumberToObject(stats, "queue_ms", (double) (start - r->arrival_ns) / 1e6);
            cJSON_AddNumberToObject(stats, "run_ms",
                                    r->start_ns ? daemon_elapsed_ms(r->start_ns) : 0);
        }
    }
    if (reply && r->kind == SESSION_REQ_OPEN) {
        /* As a ready session's: from the request to its worker's fork, or until now. */
        cJSON *stats = cJSON_AddObjectToObject(reply, "stats");
        uint64_t start = r->start_ns ? r->start_ns : uv_hrtime();
        if (stats)
            cJSON_AddNumberToObject(stats, "queue_ms", (double) (start - r->arrival_ns) / 1e6);
    }
    if (reply && lost)
        cJSON_AddTrueToObject(reply, "session_lost");
    return reply;
}

/* Ends a waiting request r (taken out of the queue) with an error reply. */
static void
answer(struct session *s, struct session_req *r, int code, const char *message)
{
    if (r->kind == SESSION_REQ_EXEC)
        daemon_count_outcome(s->d, code);
    cJSON *reply = r->conn ? session_req_failure(r, code, message, false) : NULL;
    struct conn *c = r->conn;
    r->conn = NULL;
    if (c && reply)
        conn_finish_request(c, reply);
    else if (c)
        conn_close(c); /* out of memory: the request must still end */
    cJSON_Delete(reply);
    session_req_free(r);
}

unsigned
session_queue_fail(struct session *s, int code, const char *message)
{
    unsigned n = 0;
    struct session_req *r;
    /* Each is out of the queue before its reply goes: sending may close a connection, whose
     * end drops that connection's waiting requests from the queue. */
    while ((r = session_queue_pop(s))) {
        answer(s, r, code, message);
        n++;
    }
    return n;
}

void
session_cancel_pending(struct session *s, struct session_req *r)
{
    unqueue(s, r);
    answer(s, r, PF_E_CANCELLED,
           r->kind == SESSION_REQ_EXEC ? "Code execution was cancelled before it started"
                                       : "the request was cancelled before it started");
}

void
session_queue_conn_gone(struct session *s, struct conn *c)
{
    struct dlist *pos, *tmp;
    DLIST_FOREACH_SAFE(pos, tmp, &s->pending) {
        struct session_req *r = pf_container_of(pos, struct session_req, link);
        if (r->conn != c)
            continue;
        unqueue(s, r);
        /* Counted like an ephemeral job whose connection went: cancelled, without a reply. */
        if (r->kind == SESSION_REQ_EXEC)
            daemon_count_outcome(s->d, PF_E_CANCELLED);
        session_req_free(r);
    }
}

int
session_exec(struct session *s, struct conn *c, const cJSON *req_id, const char *code,
             const cJSON *variables, bool stream, uint32_t *ret_retry_after_ms,
             struct pf_error **err)
{
    cJSON *run = cJSON_CreateObject();
    bool ok = run && cJSON_AddStringToObject(run, "op", "run") &&
              cJSON_AddStringToObject(run, "code", code);
    if (ok && variables) {
        cJSON *v = cJSON_Duplicate(variables, 1);
        ok = v && cJSON_AddItemToObject(run, "variables", v);
        if (!ok)
            cJSON_Delete(v);
    }
    if (!ok) {
        cJSON_Delete(run);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    if (session_queue_add(s, SESSION_REQ_EXEC, c, req_id, run, NULL, stream, ret_retry_after_ms,
                          err) < 0)
        return -1;
    session_next(s);
    return 0;
}

int
session_get(struct session *s, struct conn *c, const cJSON *req_id, const cJSON *names,
            uint32_t *ret_retry_after_ms, struct pf_error **err)
{
    cJSON *get = cJSON_CreateObject();
    cJSON *asked = cJSON_Duplicate(names, 1);
    cJSON *copy = cJSON_Duplicate(names, 1);
    bool ok = get && asked && copy && cJSON_AddStringToObject(get, "op", "get") &&
              cJSON_AddItemToObject(get, "names", TAKE_PTR(asked));
    if (!ok) {
        cJSON_Delete(get);
        cJSON_Delete(asked);
        cJSON_Delete(copy);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    if (session_queue_add(s, SESSION_REQ_GET, c, req_id, get, copy, false, ret_retry_after_ms,
                          err) < 0)
        return -1;
    session_next(s);
    return 0;
}
