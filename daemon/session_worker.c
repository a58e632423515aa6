/* A session's worker: forked once, when the scheduler gives the session.open its turn, fed one
 * request at a time over its channel (CHANNEL.md, "Session worker"), the next one when the
 * last has ended (session_queue.c keeps them), and never used for anything else. Its death
 * makes the session lost. */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
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
#include "session.h"

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
static int
send_frame(struct session *s, const cJSON *obj, struct pf_error **err)
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

static void
close_channel(struct session *s)
{
    if (!s->channel_open)
        return;
    s->channel_open = false;
    egress_abandon(s->egress); /* its reply has nowhere to go */
    s->egress = NULL;
    uv_read_stop((uv_stream_t *) &s->channel);
    uv_close((uv_handle_t *) &s->channel, session_on_handle_closed);
}

static void
kill_worker(struct session *s)
{
    struct zygote *z = s->d ? daemon_zygote(s->d, s->preload_zygote) : NULL;
    if (s->awaiting_exit && z)
        zygote_kill(z, s->job_id);
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
static void
request_fail(struct session *s, int code, const char *message, bool lost)
{
    if (s->req.kind == SESSION_REQ_NONE)
        return;
    cJSON *reply = session_req_failure(&s->req, code, message, lost);
    request_finish(s, reply, code);
    cJSON_Delete(reply);
}

/* The worker is gone (or is being killed) and cause says why; the requests waiting their turn
 * learn it now, and the session is then gone; without any, the next request learns it. */
static void
make_lost(struct session *s, const char *cause)
{
    if (s->state == SESSION_LOST || s->state == SESSION_ENDED)
        return;
    s->state = SESSION_LOST;
    free(s->lost_cause);
    s->lost_cause = strdup(cause);
    pf_log_info(WORKER, "session %.8s… of uid %u lost: %s", s->id, (unsigned) s->uid, cause);
    kill_worker(s);
    close_channel(s);
    session_touch_idle(s); /* a lost session nobody asks about goes with its idle timeout */
    char msg[320];
    snprintf(msg, sizeof(msg), "session '%s' was lost: %s", s->id, cause);
    if (session_queue_fail(s, PF_E_SESSION_LOST, msg) > 0)
        session_end(s, SESSION_END_LOST);
}

static void
handle_result(struct session *s, cJSON *result)
{
    if (s->req.kind == SESSION_REQ_OPEN) {
        /* The worker could not set up (hardening, variables): session.open fails with why. */
        const char *outcome = msg_get_string(result, "outcome", "internal");
        int code = pf_code_from_name(outcome);
        const cJSON *error = cJSON_GetObjectItemCaseSensitive(result, "error");
        request_fail(s, code ? code : PF_E_INTERNAL,
                     msg_get_string(error, "message", "the session's worker failed to start"),
                     false);
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
    make_lost(s, cause);
}

/* {"id", "ok": true, "session", "variables": {...}, "missing": [names not defined]}; or the
 * worker's refusal (variables over max_result_bytes), the session going on. */
static void
handle_variables(struct session *s, cJSON *event)
{
    const char *refused = msg_get_string(event, "error", NULL);
    if (refused) {
        request_fail(s, PF_E_OUTPUT_LIMIT, refused, false);
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
        request_fail(s, PF_E_INTERNAL, "the session's worker sent no variables", false);
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
        request_fail(s, PF_E_OUTPUT_LIMIT, msg, true);
        make_lost(s, "worker killed for printing more than max_output_bytes");
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
        request_fail(s, PF_E_INTERNAL, "the session's worker broke the channel protocol", false);
        session_end(s, SESSION_END_FAILED);
        return;
    }
    snprintf(msg, sizeof(msg), "the worker broke the channel protocol; session '%s' is lost",
             s->id);
    request_fail(s, PF_E_INTERNAL, msg, true);
    make_lost(s, "the worker broke the channel protocol");
}

static void
on_egress_done(void *ctx, cJSON *frame)
{
    struct session *s = ctx;
    s->egress = NULL;
    _cleanup_pf_error_ struct pf_error *err = NULL;
    if (!frame)
        protocol_error(s, "the daemon could not answer the worker's egress request");
    else if (send_frame(s, frame, &err) < 0)
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
    cJSON *now = daemon_egress_start(s->d, s->profile, &s->limits, &s->egress_requests, event,
                                     on_egress_done, s, &s->egress);
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

/* ---- the worker's end ------------------------------------------------------------------- */

/* How the worker ended, as an error code and the cause told to the session's user. */
static int
exit_cause(const struct session *s, char *msg, size_t size)
{
    if (!s->exit_seen) {
        snprintf(msg, size, "the worker could not be started");
        return PF_E_WORKER_CRASHED;
    }
    /* An ephemeral job's reading of the exit (seccomp, the cgroup's OOM kill and refused forks,
     * the CPU limit...), so that both give the same outcomes; the words are the session's. */
    int code = job_outcome_from_exit(&s->exit_info, (uint64_t) s->limits.v[POLICY_LIMIT_CPU_MS],
                                     s->seccomp_syscall, msg, size);
    if (code == PF_E_MEMORY_LIMIT)
        snprintf(msg, size, "worker killed by the memory limit (memory_mb %lld)",
                 (long long) s->limits.v[POLICY_LIMIT_MEMORY_MB]);
    /* cpu_ms bounds the worker, which in a session runs every snippet. */
    if (code == PF_E_CPU_LIMIT)
        snprintf(msg, size,
                 "worker used up the CPU limit of %lld ms, which counts every snippet of the "
                 "session",
                 (long long) s->limits.v[POLICY_LIMIT_CPU_MS]);
    return code;
}

/* Both the channel and the exit are in: a session still in the table has lost its worker. */
static void
settle(struct session *s)
{
    if (s->channel_open || s->awaiting_exit)
        return;
    if (s->state == SESSION_LOST && s->cause_provisional) {
        /* Lost at the channel's end, before the exit said why: now it has. */
        char msg[256];
        exit_cause(s, msg, sizeof(msg));
        free(s->lost_cause);
        s->lost_cause = strdup(msg);
        s->cause_provisional = false;
    }
    if (s->state != SESSION_ENDED && s->state != SESSION_LOST) {
        char msg[256];
        int code = exit_cause(s, msg, sizeof(msg));
        if (s->req.kind == SESSION_REQ_OPEN) {
            char open_msg[320];
            snprintf(open_msg, sizeof(open_msg), "the session's worker failed to start: %s", msg);
            request_fail(s, code, open_msg, false);
            session_end(s, SESSION_END_FAILED);
        } else {
            char req_msg[320];
            snprintf(req_msg, sizeof(req_msg), "%s; session '%s' is lost", msg, s->id);
            request_fail(s, code, req_msg, true);
            make_lost(s, msg);
        }
    }
    session_maybe_release(s);
}

static void
on_channel_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
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
    close_channel(s);
    if (s->awaiting_exit && s->state == SESSION_IDLE) {
        /* The worker is going, and no request waits to hear why: the session is lost now,
         * so a request in the moment before its exit comes is told so, once, like later. */
        s->state = SESSION_LOST;
        free(s->lost_cause);
        s->lost_cause = strdup("its worker ended");
        s->cause_provisional = true;
        session_touch_idle(s);
    }
    settle(s);
}

static void
on_deadline(uv_timer_t *timer)
{
    struct session *s = timer->data;
    long long ms = (long long) s->limits.v[POLICY_LIMIT_TIMEOUT_MS];
    char msg[200];
    if (s->req.kind == SESSION_REQ_OPEN) {
        snprintf(msg, sizeof(msg), "the session's worker was not ready within %lld ms", ms);
        request_fail(s, PF_E_TIMEOUT, msg, false);
        session_end(s, SESSION_END_FAILED);
        return;
    }
    snprintf(msg, sizeof(msg), "%s the wall-clock limit of %lld ms; session '%s' is lost",
             s->req.kind == SESSION_REQ_GET ? "reading the variables exceeded" : "snippet exceeded",
             ms, s->id);
    request_fail(s, PF_E_TIMEOUT, msg, true);
    snprintf(msg, sizeof(msg), "worker killed at the wall-clock limit (timeout_ms %lld)", ms);
    make_lost(s, msg);
}

/* The request in s->req goes to the worker now (its frame is written): the wall clock starts. */
static void
begin_request(struct session *s)
{
    s->req.start_ns = uv_hrtime();
    s->req.output_bytes = 0;
    s->egress_requests = 0;
    if (s->state == SESSION_IDLE)
        s->state = SESSION_BUSY;
    session_touch_busy(s);
    uv_timer_start(&s->deadline, on_deadline,
                   (uint64_t) s->limits.v[POLICY_LIMIT_TIMEOUT_MS] + JOB_DEADLINE_GRACE_MS, 0);
}

/* {"op": "session", "imports", "builtins_add"?, "builtins_remove"?, "limits", "variables"?} */
static cJSON *
session_frame(const struct session *s, const cJSON *fields, const cJSON *variables)
{
    cJSON *f = cJSON_Duplicate(fields, 1);
    cJSON *lim = policy_limits_to_json(&s->limits, POLICY_SCOPE_JOB);
    cJSON *vars = variables ? cJSON_Duplicate(variables, 1) : NULL;
    bool ok = f && lim && (!variables || vars) && cJSON_AddStringToObject(f, "op", "session");
    if (ok) {
        cJSON_AddItemToObject(f, "limits", TAKE_PTR(lim));
        if (vars)
            cJSON_AddItemToObject(f, "variables", TAKE_PTR(vars));
    }
    cJSON_Delete(lim);
    cJSON_Delete(vars);
    if (!ok) {
        cJSON_Delete(f);
        return NULL;
    }
    return f;
}

int
session_start(struct session *s, struct conn *c, const cJSON *req_id,
              const enum harden_level *levels, const cJSON *fields, const cJSON *variables,
              uint32_t *ret_retry_after_ms, struct pf_error **err)
{
    struct daemon *d = c->d;
    if (!d->zygote)
        return pf_error_set(err, PF_E_INTERNAL, "pyfenced has no zygote; no session can run");
    cJSON *frame = session_frame(s, fields, variables);
    cJSON *id = req_id ? cJSON_Duplicate(req_id, 1) : NULL;
    if (!frame || (req_id && !id)) {
        cJSON_Delete(frame);
        cJSON_Delete(id);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    const char *why = NULL;
    int r = sched_submit(&d->sched, &s->sched, c->uid, pools_startable(&d->pools, NULL),
                         ret_retry_after_ms, &why);
    if (r < 0) {
        cJSON_Delete(frame);
        cJSON_Delete(id);
        if (r != -EBUSY)
            return pf_error_set(err, PF_E_INTERNAL, "out of memory");
        return pf_error_set(err, PF_E_BUSY,
                            "%u jobs already wait for a worker (%s); try again in %u ms",
                            d->sched.queued, why, ret_retry_after_ms ? *ret_retry_after_ms : 0);
    }
    job_harden_params(&s->limits, levels, &s->params);
    s->d = d;
    s->preload_zygote = daemon_profile_preloads(d, s->profile);
    s->req = (struct session_req){.kind = SESSION_REQ_OPEN,
                                  .conn = c,
                                  .id = id,
                                  .frame = frame,
                                  .arrival_ns = uv_hrtime()};
    dlist_init(&s->req.link);
    sched_pump(&d->sched);
    pools_kick(&d->pools);
    return 0;
}

/* The open fails before its worker could say it is ready, and the session with it. */
static enum sched_start
launch_failed(struct session *s, int code, const char *message)
{
    request_fail(s, code, message, false);
    session_end(s, SESSION_END_FAILED);
    return SCHED_FAILED;
}

enum sched_start
session_launch(struct session *s)
{
    struct daemon *d = s->d;
    struct zygote *z = daemon_zygote(d, s->preload_zygote);
    if (!z)
        return launch_failed(s, PF_E_INTERNAL, "pyfenced has no zygote; no session can run");
    s->job_id = ++d->next_job_id;
    int fd = -1;
    struct pf_error *err = NULL;
    if (zygote_spawn(z, s->job_id, &s->params, s, &fd, &err) < 0) {
        char msg[320];
        snprintf(msg, sizeof(msg), "cannot start the session's worker: %s",
                 err ? err->msg : "out of memory");
        int code = err && err->code > 0 && err->code < _PF_E_MAX ? err->code : PF_E_INTERNAL;
        pf_error_free(err);
        return launch_failed(s, code, msg);
    }
    /* From here the zygote owes an exit: every failure goes through the session's end. */
    s->awaiting_exit = true;
    d->jobs_running++;
    frame_decoder_init(&s->dec, JOB_MAX_WORKER_FRAME);
    uv_pipe_init(d->loop, &s->channel, 0);
    uv_timer_init(d->loop, &s->deadline);
    s->channel.data = s;
    s->deadline.data = s;
    s->open_handles += 2;
    s->worker_handles = true;
    s->channel_open = true;
    begin_request(s);
    cJSON *frame = TAKE_PTR(s->req.frame);
    int r = uv_pipe_open(&s->channel, fd);
    if (r < 0)
        close(fd);
    if (r < 0 || send_frame(s, frame, &err) < 0 ||
        (r = uv_read_start((uv_stream_t *) &s->channel, daemon_alloc_cb, on_channel_read)) < 0) {
        pf_log_warning(WORKER, "session %.8s…: cannot use the worker's channel: %s", s->id,
                       err ? err->msg : uv_strerror(r));
        pf_error_free(err);
        cJSON_Delete(frame);
        return launch_failed(s, PF_E_INTERNAL, "cannot talk to the session's worker");
    }
    cJSON_Delete(frame);
    return SCHED_STARTED;
}

/* A run frame carries its number (CHANNEL.md, "run"): 1, 2, 3... for those this worker is
 * sent. The worker counts them too, and a cancel names the run it is for. */
static int
number_run(struct session *s, cJSON *frame, struct pf_error **err)
{
    if (s->runs == INT_MAX)
        return pf_error_set(err, PF_E_SESSION_LOST,
                            "session '%s' ran %d snippets, the most its worker can number", s->id,
                            INT_MAX);
    if (!cJSON_AddNumberToObject(frame, "run", s->runs + 1))
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    return 0;
}

void
session_next(struct session *s)
{
    struct session_req *r;
    while (s->state == SESSION_IDLE && s->req.kind == SESSION_REQ_NONE &&
           (r = session_queue_pop(s))) {
        cJSON *frame = TAKE_PTR(r->frame);
        s->req = *r;
        dlist_init(&s->req.link);
        free(r);
        struct pf_error *err = NULL;
        bool run = s->req.kind == SESSION_REQ_EXEC;
        int rc = run ? number_run(s, frame, &err) : 0;
        if (rc == 0)
            rc = send_frame(s, frame, &err);
        cJSON_Delete(frame);
        begin_request(s);
        if (rc == 0) {
            if (run) {
                s->runs++;
                s->d->jobs_total++;
            }
            return;
        }
        int code = err ? err->code : PF_E_INTERNAL;
        char msg[320];
        snprintf(msg, sizeof(msg), "%s", err ? err->msg : "out of memory");
        pf_error_free(err);
        if (code != PF_E_SESSION_LOST) {
            /* This request could not be sent (its frame); the next one may be. */
            request_fail(s, code, msg, false);
            continue;
        }
        char req_msg[400];
        snprintf(req_msg, sizeof(req_msg), "%s; session '%s' is lost", msg, s->id);
        request_fail(s, code, req_msg, true);
        make_lost(s, msg);
    }
}

/* The cancelled snippet did not stop (it is inside a long call): as for an ephemeral job, its
 * worker is killed, and with it the session's state. */
static void
on_cancel_grace(uv_timer_t *timer)
{
    struct session *s = timer->data;
    char msg[240];
    snprintf(msg, sizeof(msg),
             "Code execution was cancelled (its worker did not stop within %d ms and was "
             "killed); session '%s' is lost",
             JOB_CANCEL_GRACE_MS, s->id);
    request_fail(s, PF_E_CANCELLED, msg, true);
    snprintf(msg, sizeof(msg),
             "worker killed: its snippet did not stop within %d ms of being cancelled",
             JOB_CANCEL_GRACE_MS);
    make_lost(s, msg);
}

bool
session_cancel_running(struct session *s)
{
    if (s->req.kind != SESSION_REQ_EXEC)
        return false;
    if (s->req.cancel_requested)
        return true;
    s->req.cancel_requested = true;
    struct zygote *z = daemon_zygote(s->d, s->preload_zygote);
    /* The exec in flight is the last run frame sent: one at a time goes to the worker. */
    if (z && s->awaiting_exit)
        zygote_cancel(z, s->job_id, s->runs);
    /* The deadline timer bounds the grace period now, unless the backstop comes first. */
    if (uv_timer_get_due_in(&s->deadline) > JOB_CANCEL_GRACE_MS)
        uv_timer_start(&s->deadline, on_cancel_grace, JOB_CANCEL_GRACE_MS, 0);
    return true;
}

void
session_cancel_open(struct session *s)
{
    request_fail(s, PF_E_CANCELLED,
                 "session.open was cancelled before the session's worker was ready", false);
    session_end(s, SESSION_END_FAILED);
}

/* ---- the end ------------------------------------------------------------------------------ */

/* What the requests of a session that ends for `why` are told: the one running (running) or
 * those still waiting their turn. */
static int
end_reason(const struct session *s, enum session_end why, bool running, char *msg, size_t size)
{
    switch (why) {
    case SESSION_END_CLOSE:
        snprintf(msg, size, "session '%s' was closed %s this request ran", s->id,
                 running ? "while" : "before");
        return PF_E_CANCELLED;
    case SESSION_END_CONN:
        snprintf(msg, size, "the connection that owns session '%s' closed", s->id);
        return PF_E_CANCELLED;
    case SESSION_END_IDLE: /* never with a request in flight */
    case SESSION_END_LIFETIME:
        snprintf(msg, size, "session '%s' reached its lifetime (session_lifetime_ms %lld)", s->id,
                 (long long) s->limits.v[POLICY_LIMIT_SESSION_LIFETIME_MS]);
        return PF_E_SESSION_LOST;
    case SESSION_END_SHUTDOWN:
        snprintf(msg, size, "pyfenced is shutting down");
        return PF_E_SHUTTING_DOWN;
    case SESSION_END_FAILED:
        if (!running) {
            snprintf(msg, size, "session '%s' was lost: its worker failed to start", s->id);
            return PF_E_SESSION_LOST;
        }
        break;
    case SESSION_END_LOST:
        if (!running) {
            snprintf(msg, size, "session '%s' was lost: %s", s->id,
                     s->lost_cause ? s->lost_cause : "its worker died");
            return PF_E_SESSION_LOST;
        }
        break;
    case _SESSION_END_MAX:
    case _SESSION_END_INVALID:
    default:
        break;
    }
    snprintf(msg, size, "the session ended");
    return PF_E_INTERNAL;
}

void
session_end(struct session *s, enum session_end why)
{
    if (s->state == SESSION_ENDED)
        return;
    char msg[320];
    /* Those waiting first: failing the one running frees the worker for the next. */
    int code = end_reason(s, why, false, msg, sizeof(msg));
    session_queue_fail(s, code, msg);
    code = end_reason(s, why, true, msg, sizeof(msg));
    request_fail(s, code, msg, true);
    pf_log_debug(WORKER, "session %.8s… of uid %u ends (%d)", s->id, (unsigned) s->uid, why);
    /* A session.open still waiting for a worker leaves the queue: it never starts. */
    if (s->d)
        sched_done(&s->d->sched, &s->sched, -1);
    session_unlink(s, why);
    kill_worker(s);
    close_channel(s);
    session_maybe_release(s);
}

void
session_on_spawned(struct session *s, pid_t pid, const struct pf_error *err)
{
    if (!err && pid > 0) {
        s->pid = pid;
        return;
    }
    /* No worker exists, so no exit will come. */
    pf_log_warning(WORKER, "session %.8s…: the zygote could not fork a worker: %s", s->id,
                   err ? err->msg : "no pid");
    s->awaiting_exit = false;
    s->d->jobs_running--;
    pools_kick(&s->d->pools);
    if (s->state == SESSION_STARTING) {
        char msg[256];
        snprintf(msg, sizeof(msg), "cannot start the session's worker: %s",
                 err ? err->msg : "the zygote gave no pid");
        int code = err && err->code > 0 && err->code < _PF_E_MAX ? err->code : PF_E_INTERNAL;
        request_fail(s, code, msg, false);
        session_end(s, SESSION_END_FAILED);
        return;
    }
    close_channel(s);
    settle(s);
}

void
session_on_exit(struct session *s, const struct zygote_exit *exit_info)
{
    if (!s->awaiting_exit)
        return;
    s->awaiting_exit = false;
    s->exit_seen = true;
    s->exit_info = *exit_info;
    s->d->jobs_running--;
    pools_kick(&s->d->pools); /* its worker slot is free: a waiting job may start */
    pf_log_debug(WORKER, "session %.8s…: worker pid %d ended (status %d, signal %d)", s->id,
                 (int) exit_info->pid, exit_info->exit_code, exit_info->signal);
    /* Frames the worker sent before it died are still read: the channel's EOF settles. */
    settle(s);
}

void
session_shutdown_all(struct session_table *t)
{
    struct dlist *pos, *tmp;
    DLIST_FOREACH_SAFE(pos, tmp, &t->all) {
        session_end(pf_container_of(pos, struct session, link), SESSION_END_SHUTDOWN);
    }
}

void
session_abandon_all(struct session_table *t)
{
    session_shutdown_all(t);
    struct dlist *pos, *tmp;
    DLIST_FOREACH_SAFE(pos, tmp, &t->ended) {
        struct session *s = pf_container_of(pos, struct session, link);
        if (s->awaiting_exit) {
            s->awaiting_exit = false;
            s->d->jobs_running--;
        }
        close_channel(s);
        session_maybe_release(s);
    }
}
