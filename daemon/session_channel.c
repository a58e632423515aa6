/* A session's channel to its worker (CHANNEL.md, "Session worker"): the frames written to it,
 * those read from it (ready, result, variables, output, egress, seccomp) and the reply each
 * makes for the request in flight. Apart from session_worker.c, which decides when the worker
 * starts, gets its next request, is lost and ends: this file only says what each frame means. */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "json_write.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "pool.h"
#include "session_internal.h"

/* A write request embeds uv_write_t first and owns its buffer until on_write. */
struct session_write {
    uv_write_t req;
    char *buf;
};

static void
on_write(uv_write_t *req, int status)
{
    struct session_write *w = (struct session_write *) req;
    free(w->buf);
    free(w);
    /* A worker that died shows up as EOF and exit: handled there. */
    (void) status;
}

/* Writes obj as one frame; json_write keeps client numbers exact. */
int
session_send_frame(struct session *s, const cJSON *obj, struct pf_error **err)
{
    if (!s->channel_open)
        return pf_error_set(err, PF_E_SESSION_LOST, "session '%s' has no worker", s->id);
    char *buf = NULL;
    size_t len;
    if (json_write(obj, FRAME_HEADER_BYTES, JOB_MAX_WORKER_FRAME, &buf, &len, err) < 0)
        return -1;
    uint32_t be = htobe32((uint32_t) (len - FRAME_HEADER_BYTES));
    memcpy(buf, &be, sizeof(be));
    struct session_write *w = calloc(1, sizeof(*w));
    if (!w) {
        free(buf);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    w->buf = buf;
    uv_buf_t b = uv_buf_init(buf, (unsigned) len);
    int r = uv_write(&w->req, (uv_stream_t *) &s->channel, &b, 1, on_write);
    if (r < 0) {
        free(buf);
        free(w);
        return pf_error_set(err, PF_E_SESSION_LOST, "session '%s': writing to its worker: %s",
                            s->id, uv_strerror(r));
    }
    return 0;
}

void
session_close_channel(struct session *s)
{
    if (!s->channel_open)
        return;
    s->channel_open = false;
    egress_abandon(s->egress); /* its reply has nowhere to go */
    s->egress = NULL;
    uv_read_stop((uv_stream_t *) &s->channel);
    uv_close((uv_handle_t *) &s->channel, session_on_handle_closed);
}

/* ---- replies ------------------------------------------------------------------------------ */

static void
request_clear(struct session *s)
{
    /* An open that never had a worker has no deadline timer yet. */
    if (s->worker_handles)
        uv_timer_stop(&s->deadline);
    cJSON_Delete(s->req.id);
    cJSON_Delete(s->req.names);
    cJSON_Delete(s->req.frame);
    s->req = (struct session_req){.kind = SESSION_REQ_NONE};
    dlist_init(&s->req.link);
}

/* Ends the request in flight with reply (borrowed); code counts exec outcomes like jobs. The
 * caller then gives the worker its next request (session_next) if the session goes on. */
static void
request_finish(struct session *s, cJSON *reply, int code)
{
    enum session_req_kind kind = s->req.kind;
    if (reply)
        job_reply_name_profile(reply, code, s->profile);
    if (kind == SESSION_REQ_EXEC && reply)
        code = job_reply_fit(reply, (uint32_t) s->d->limits.v[POLICY_LIMIT_MAX_FRAME_BYTES], code);
    if (kind == SESSION_REQ_EXEC)
        daemon_count_outcome(s->d, code);
    if (kind != SESSION_REQ_OPEN && s->req.start_ns)
        session_queue_note_held(s, daemon_elapsed_ms(s->req.start_ns));
    /* The session is settled before the connection hears of it: sending may close the
     * connection, and with it end this session. s itself lives on until its handles close. */
    struct conn *c = s->req.conn;
    request_clear(s);
    if (kind == SESSION_REQ_OPEN) {
        /* Answered: the open leaves the scheduler (its worker counts in jobs_running until it
         * is reaped, as every worker does). */
        sched_done(&s->d->sched, &s->sched, -1);
        pools_kick(&s->d->pools);
    }
    if (s->state == SESSION_BUSY || s->state == SESSION_STARTING)
        s->state = SESSION_IDLE;
    session_touch_idle(s);
    if (c && reply)
        conn_finish_request(c, reply);
    else if (c)
        conn_close(c); /* out of memory: the request must still end */
}

/* The failure reply of the request in flight; an exec's has the fields of every exec reply. */
void
session_request_fail(struct session *s, int code, const char *message, bool lost)
{
    if (s->req.kind == SESSION_REQ_NONE)
        return;
    cJSON *reply = session_req_failure(&s->req, code, message, lost);
    request_finish(s, reply, code);
    cJSON_Delete(reply);
}

/* ---- frames from the worker ------------------------------------------------------------- */

static void
handle_result(struct session *s, cJSON *result)
{
    if (s->req.kind == SESSION_REQ_OPEN) {
        /* The worker could not set up (hardening, variables): session.open fails with why. */
        const char *outcome = msg_get_string(result, "outcome", "internal");
        int code = pf_code_from_name(outcome);
        const cJSON *error = cJSON_GetObjectItemCaseSensitive(result, "error");
        session_request_fail(
                s, code ? code : PF_E_INTERNAL,
                msg_get_string(error, "message", "the session's worker failed to start"), false);
        session_end(s, SESSION_END_FAILED);
        return;
    }
    int code = PF_E_INTERNAL;
    cJSON *reply = job_reply_from_result(
            s->req.id, result, (double) (s->req.start_ns - s->req.arrival_ns) / 1e6, &code);
    s->execs++;
    /* A heap full of the session's own data fails every later snippet the same way: the
     * worker is retired, and the session is lost (PROTOCOL.md). */
    bool oom = code == PF_E_MEMORY_LIMIT;
    if (oom && reply)
        cJSON_AddTrueToObject(reply, "session_lost");
    request_finish(s, reply, code);
    cJSON_Delete(reply);
    if (!oom) {
        session_next(s);
        return;
    }
    char cause[96];
    snprintf(cause, sizeof(cause), "worker killed by the memory limit (memory_mb %lld)",
             (long long) s->limits.v[POLICY_LIMIT_MEMORY_MB]);
    session_make_lost(s, cause);
}

/* {"id", "ok": true, "session", "variables": {...}, "missing": [names not defined]}; or the
 * worker's refusal (variables over max_result_bytes), the session going on. */
static void
handle_variables(struct session *s, cJSON *event)
{
    const char *refused = msg_get_string(event, "error", NULL);
    if (refused) {
        session_request_fail(s, PF_E_OUTPUT_LIMIT, refused, false);
        session_next(s);
        return;
    }
    cJSON *vars = cJSON_DetachItemFromObjectCaseSensitive(event, "variables");
    cJSON *reply = msg_reply_ok(s->req.id);
    cJSON *missing = cJSON_CreateArray();
    if (!cJSON_IsObject(vars) || !reply || !missing) {
        cJSON_Delete(vars);
        cJSON_Delete(missing);
        cJSON_Delete(reply);
        session_request_fail(s, PF_E_INTERNAL, "the session's worker sent no variables", false);
        session_next(s);
        return;
    }
    const cJSON *name;
    cJSON_ArrayForEach(name, s->req.names) {
        if (!cJSON_GetObjectItemCaseSensitive(vars, name->valuestring) &&
            !cJSON_AddItemToArray(missing, cJSON_CreateString(name->valuestring)))
            break;
    }
    cJSON_AddStringToObject(reply, "session", s->id);
    cJSON_AddItemToObject(reply, "variables", vars);
    cJSON_AddItemToObject(reply, "missing", missing);
    request_finish(s, reply, 0);
    cJSON_Delete(reply);
    session_next(s);
}

static void
handle_ready(struct session *s)
{
    cJSON *reply = msg_reply_ok(s->req.id);
    cJSON *limits = policy_limits_to_json(&s->limits, POLICY_SCOPE_JOB);
    cJSON *stats = cJSON_CreateObject();
    if (reply && limits && stats) {
        cJSON_AddStringToObject(reply, "session", s->id);
        cJSON_AddStringToObject(reply, "profile", s->profile);
        cJSON_AddBoolToObject(reply, "detached", s->detached);
        cJSON_AddItemToObject(reply, "limits", TAKE_PTR(limits));
        /* As an exec's: from the request to its worker's fork, waiting in the queue included. */
        cJSON_AddNumberToObject(stats, "queue_ms",
                                (double) (s->req.start_ns - s->req.arrival_ns) / 1e6);
        cJSON_AddItemToObject(reply, "stats", TAKE_PTR(stats));
    }
    cJSON_Delete(limits);
    cJSON_Delete(stats);
    pf_log_debug(WORKER, "session %.8s… of uid %u ready (worker pid %d)", s->id, (unsigned) s->uid,
                 (int) s->pid);
    request_finish(s, reply, 0);
    cJSON_Delete(reply);
    session_next(s);
}

static void
handle_output(struct session *s, const cJSON *event)
{
    const char *data = msg_get_string(event, "data", NULL);
    if (!data)
        return;
    s->req.output_bytes += strlen(data);
    uint64_t max = (uint64_t) s->limits.v[POLICY_LIMIT_MAX_OUTPUT_BYTES];
    if (s->req.output_bytes > max) {
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "snippet printed more than max_output_bytes (%llu bytes); session '%s' is lost",
                 (unsigned long long) max, s->id);
        session_request_fail(s, PF_E_OUTPUT_LIMIT, msg, true);
        session_make_lost(s, "worker killed for printing more than max_output_bytes");
        return;
    }
    if (!s->req.stream || !s->req.conn)
        return;
    job_send_output(s->req.conn, s->req.id, data,
                    (uint32_t) s->d->limits.v[POLICY_LIMIT_MAX_FRAME_BYTES]);
}

/* A frame the worker could not have sent in this state. */
static void
protocol_error(struct session *s, const char *what)
{
    pf_log_warning(WORKER, "session %.8s… (worker pid %d): %s", s->id, (int) s->pid, what);
    char msg[160];
    if (s->req.kind == SESSION_REQ_OPEN) {
        session_request_fail(s, PF_E_INTERNAL, "the session's worker broke the channel protocol",
                             false);
        session_end(s, SESSION_END_FAILED);
        return;
    }
    snprintf(msg, sizeof(msg), "the worker broke the channel protocol; session '%s' is lost",
             s->id);
    session_request_fail(s, PF_E_INTERNAL, msg, true);
    session_make_lost(s, "the worker broke the channel protocol");
}

static void
on_egress_done(void *ctx, cJSON *frame)
{
    struct session *s = ctx;
    s->egress = NULL;
    _cleanup_pf_error_ struct pf_error *err = NULL;
    if (!frame)
        protocol_error(s, "the daemon could not answer the worker's egress request");
    else if (session_send_frame(s, frame, &err) < 0)
        pf_log_debug(WORKER, "session %.8s…: egress reply: %s", s->id, err ? err->msg : "?");
    cJSON_Delete(frame);
}

/* One request at a time: the worker waits for each reply (CHANNEL.md). */
static void
handle_egress(struct session *s, const cJSON *event)
{
    if (s->egress) {
        protocol_error(s, "a second egress request before the first was answered");
        return;
    }
    /* The peer that opened it (session_revoke asks the same): sessions outlive connections. */
    struct policy_peer peer = {
            .uid = s->uid, .gid = s->gid, .groups = s->groups, .n_groups = s->n_groups};
    struct daemon_egress_run run = {.profile = s->profile,
                                    .egress_version = s->egress_version,
                                    .peer = &peer,
                                    .limits = &s->limits,
                                    .count = &s->egress_requests};
    cJSON *now = daemon_egress_start(s->d, &run, event, on_egress_done, s, &s->egress);
    if (!s->egress)
        on_egress_done(s, now);
}

static void
dispatch_frame(struct session *s, cJSON *obj)
{
    const char *event = msg_get_string(obj, "event", "");
    enum session_req_kind kind = s->req.kind;
    if (strcmp(event, "seccomp") == 0)
        snprintf(s->seccomp_syscall, sizeof(s->seccomp_syscall), "%s",
                 msg_get_string(obj, "syscall", "?"));
    else if (strcmp(event, "output") == 0 && kind == SESSION_REQ_EXEC)
        handle_output(s, obj);
    else if (strcmp(event, "egress") == 0 && kind == SESSION_REQ_EXEC)
        handle_egress(s, obj);
    else if (strcmp(event, "result") == 0 && (kind == SESSION_REQ_EXEC || kind == SESSION_REQ_OPEN))
        handle_result(s, obj);
    else if (strcmp(event, "variables") == 0 && kind == SESSION_REQ_GET)
        handle_variables(s, obj);
    else if (strcmp(event, "ready") == 0 && kind == SESSION_REQ_OPEN)
        handle_ready(s);
    else
        protocol_error(s, "unexpected frame from the worker");
}

static int
on_worker_frame(void *userdata, char *payload, size_t len)
{
    _cleanup_free_ char *owned = payload;
    struct session *s = userdata;
    cJSON *obj = NULL;
    struct pf_error *err = NULL;
    if (msg_parse(owned, len, JOB_MAX_WORKER_DEPTH, &obj, &err) < 0) {
        pf_error_free(err);
        protocol_error(s, "bad frame from the worker");
        return -1;
    }
    dispatch_frame(s, obj);
    cJSON_Delete(obj);
    return s->channel_open ? 0 : -1;
}

void
session_on_channel_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    struct session *s = stream->data;
    if (nread > 0) {
        struct pf_error *err = NULL;
        long r = frame_decoder_feed(&s->dec, buf->base, (size_t) nread, on_worker_frame, s, &err);
        daemon_release_buf(s->d, buf);
        if (r < 0) {
            pf_error_free(err);
            protocol_error(s, "bad frame length from the worker");
        }
        return;
    }
    daemon_release_buf(s->d, buf);
    if (nread == 0)
        return;
    session_close_channel(s);
    if (s->awaiting_exit && s->state == SESSION_IDLE) {
        /* The worker is going, and no request waits to hear why: the session is lost now,
         * so a request in the moment before its exit comes is told so, once, like later. */
        s->state = SESSION_LOST;
        free(s->lost_cause);
        s->lost_cause = strdup("its worker ended");
        s->cause_provisional = true;
        session_touch_idle(s);
    }
    session_settle(s);
}
