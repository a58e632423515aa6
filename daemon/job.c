#include "job.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "pool.h"
#include "session.h"

/* A write request embeds uv_write_t first and owns its buffer until on_channel_write. */
struct job_write {
    uv_write_t req;
    char *buf;
};

static void maybe_release(struct job *j);
static void on_deadline(uv_timer_t *timer);

static void
on_handle_closed(uv_handle_t *handle)
{
    struct job *j = handle->data;
    if (--j->open_handles > 0)
        return;
    dlist_remove(&j->daemon_link);
    frame_decoder_finish(&j->dec);
    cJSON_Delete(j->req_id);
    cJSON_Delete(j->held_result);
    free(j->logs);
    free(j->frame);
    free(j);
}

static void
maybe_release(struct job *j)
{
    if (j->releasing || !j->replied || (j->launched && (!j->channel_done || !j->exit_seen)))
        return;
    j->releasing = true;
    /* A queued job never starts (a no-op for any other). */
    sched_done(&j->d->sched, &j->sched, -1);
    pf_log_debug(WORKER, "job %llu released", (unsigned long long) j->id);
    uv_close((uv_handle_t *) &j->deadline, on_handle_closed);
}

static void
close_channel(struct job *j)
{
    if (j->channel_done || !j->launched)
        return;
    j->channel_done = true;
    egress_abandon(j->egress); /* its reply has nowhere to go */
    j->egress = NULL;
    pool_worker_lost(j, true); /* an idle pool worker without its channel is of no use */
    uv_read_stop((uv_stream_t *) &j->channel);
    uv_close((uv_handle_t *) &j->channel, on_handle_closed);
}

static void
detach_conn(struct job *j)
{
    if (!j->conn)
        return;
    dlist_remove(&j->conn_link);
    j->conn = NULL;
}

static void
kill_worker(struct job *j, enum job_kill_reason reason)
{
    if (j->exit_seen || !j->launched)
        return;
    if (j->kill_reason == JOB_KILL_NONE)
        j->kill_reason = reason;
    struct zygote *z = daemon_zygote(j->d, j->preload_zygote);
    if (z)
        zygote_kill(z, j->id);
}

/* j's request needs nothing more from it: answered, or handed to another job. */
static void
mark_replied(struct job *j)
{
    j->replied = true;
    pools_request_answered(&j->d->pools, j);
}

/* Sends the reply that ends the request (once), counts the outcome, lets go of the conn. */
static void
send_reply(struct job *j, cJSON *reply, int code)
{
    if (j->replied)
        return;
    mark_replied(j);
    code = job_reply_fit(reply, (uint32_t) j->d->limits.v[POLICY_LIMIT_MAX_FRAME_BYTES], code);
    daemon_count_outcome(j->d, code);
    latency_record(&j->d->latency, daemon_elapsed_ms(j->arrival_ns));
    if (j->conn)
        conn_finish_request(j->conn, reply);
    detach_conn(j);
}

static cJSON *
daemon_side_stats(const struct job *j)
{
    cJSON *stats = cJSON_CreateObject();
    if (!stats)
        return NULL;
    uint64_t start = j->spawn_ns ? j->spawn_ns : j->arrival_ns;
    cJSON_AddNumberToObject(stats, "queue_ms", (double) (start - j->arrival_ns) / 1e6);
    cJSON_AddNumberToObject(stats, "run_ms", daemon_elapsed_ms(start));
    if (j->exit_seen) {
        cJSON_AddNumberToObject(stats, "cpu_ms", (double) j->exit_info.cpu_ms);
        cJSON_AddNumberToObject(stats, "max_rss_kb", (double) j->exit_info.max_rss_kb);
    }
    return stats;
}

/* An error reply the daemon makes itself (timeout, limits, crashes): it still has the exec
 * reply's outcome, logs and stats, so clients read every exec reply the same way. */
static void
reply_failure(struct job *j, int code, const char *message)
{
    if (j->replied)
        return;
    cJSON *reply = msg_reply_error(j->req_id, code, message);
    if (reply) {
        cJSON_AddStringToObject(reply, "outcome", pf_code_name(code));
        cJSON_AddNullToObject(reply, "output");
        cJSON_AddNullToObject(reply, "output_repr");
        cJSON *logs = cJSON_CreateString("");
        if (logs && j->logs_len) {
            cJSON_Delete(logs);
            _cleanup_free_ char *s = strndup(j->logs, j->logs_len);
            logs = s ? cJSON_CreateString(s) : NULL;
        }
        if (logs)
            cJSON_AddItemToObject(reply, "logs", logs);
        cJSON_AddFalseToObject(reply, "is_final_answer");
        cJSON *stats = daemon_side_stats(j);
        if (j->exit_seen)
            job_reply_add_cgroup_stats(&j->exit_info, stats);
        if (stats)
            cJSON_AddItemToObject(reply, "stats", stats);
    }
    pf_log_debug(WORKER, "job %llu: %s: %s", (unsigned long long) j->id, pf_code_name(code),
                 message);
    if (!reply) {
        /* Out of memory: the request still ends, the connection cannot be trusted to. */
        if (j->conn)
            conn_close(j->conn);
        mark_replied(j);
        daemon_count_outcome(j->d, code);
        detach_conn(j);
        return;
    }
    send_reply(j, reply, code);
    cJSON_Delete(reply);
}

void
job_fail(struct job *j, int code, const char *message, enum job_kill_reason reason)
{
    reply_failure(j, code, message);
    kill_worker(j, reason);
    maybe_release(j);
}

bool
job_cancel(struct job *j)
{
    if (j->replied)
        return false;
    if (!j->launched) {
        reply_failure(j, PF_E_CANCELLED, "Code execution was cancelled before it started");
        maybe_release(j);
        return true;
    }
    if (j->cancel_requested)
        return true;
    j->cancel_requested = true;
    struct zygote *z = daemon_zygote(j->d, j->preload_zygote);
    if (z && !j->exit_seen)
        zygote_cancel(z, j->id, JOB_RUN);
    /* The deadline timer now bounds the grace period (on_deadline kills). */
    uv_timer_start(&j->deadline, on_deadline, JOB_CANCEL_GRACE_MS, 0);
    return true;
}

void
job_conn_gone(struct job *j)
{
    detach_conn(j);
    if (!j->replied) {
        mark_replied(j);
        daemon_count_outcome(j->d, PF_E_CANCELLED);
        kill_worker(j, JOB_KILL_CANCEL);
    }
    maybe_release(j);
}

void
job_abandon(struct job *j)
{
    if (j->launched && !j->exit_seen) {
        j->exit_seen = true;
        j->exit_info.signal = SIGKILL;
        j->exit_info.killed_by_request = true;
        j->d->jobs_running--;
    }
    reply_failure(j, PF_E_SHUTTING_DOWN, "pyfenced is shutting down");
    close_channel(j);
    maybe_release(j);
}

/* A job's reply adds what its cgroup measured to the worker's own stats. */
static cJSON *
build_result_reply(struct job *j, cJSON *result, int *ret_code)
{
    uint64_t start = j->spawn_ns ? j->spawn_ns : j->arrival_ns;
    cJSON *reply = job_reply_from_result(j->req_id, result, (double) (start - j->arrival_ns) / 1e6,
                                         ret_code);
    if (reply && j->exit_seen)
        job_reply_add_cgroup_stats(&j->exit_info, cJSON_GetObjectItemCaseSensitive(reply, "stats"));
    return reply;
}

static void
reply_result(struct job *j, cJSON *result)
{
    if (j->replied)
        return;
    int code = PF_E_INTERNAL;
    cJSON *reply = build_result_reply(j, result, &code);
    if (!reply) {
        reply_failure(j, PF_E_INTERNAL, "out of memory building the reply");
        return;
    }
    if (j->exit_seen)
        code = job_reply_cgroup_outcome(&j->exit_info, &j->limits, reply, code);
    pf_log_debug(WORKER, "job %llu: result %s", (unsigned long long) j->id,
                 code ? pf_code_name(code) : "ok");
    send_reply(j, reply, code);
    cJSON_Delete(reply);
}

/* A result read with the worker's exit known: an "internal" failure of a worker that was
 * SIGKILLed from outside (its zygote died, or the OOM killer) was that kill's doing. */
static void
reply_result_after_exit(struct job *j, cJSON *result)
{
    const struct zygote_exit *e = &j->exit_info;
    bool internal = strcmp(msg_get_string(result, "outcome", ""), "internal") == 0;
    if (internal && j->exit_seen && e->signal == SIGKILL && !e->killed_by_request) {
        const cJSON *error = cJSON_GetObjectItemCaseSensitive(result, "error");
        char msg[512];
        bool oom = e->have_cgroup && e->oom_killed;
        snprintf(msg, sizeof(msg), "worker killed by %s before it finished (%s)",
                 oom ? "the kernel's OOM killer at its memory limit" : "signal SIGKILL",
                 msg_get_string(error, "message", "no detail"));
        reply_failure(j, oom ? PF_E_MEMORY_LIMIT : PF_E_WORKER_CRASHED, msg);
    } else {
        reply_result(j, result);
    }
}

static void
reply_held_result(struct job *j)
{
    cJSON *held = TAKE_PTR(j->held_result);
    reply_result_after_exit(j, held);
    cJSON_Delete(held);
}

static void
handle_result(struct job *j, cJSON *result)
{
    if (j->got_result || j->replied)
        return;
    j->got_result = true;
    /* A worker that fails inside itself (typically while hardening) may be failing because it
     * is being killed, e.g. with its zygote: the exit tells, so such a result waits for it. So
     * does a failed result of a job with a cgroup: the exit carries what the cgroup saw (an OOM
     * kill, a refused fork), which may be why it failed. An ok result goes out at once: waiting
     * would put the worker's teardown (its namespaces, its address space) on the request path,
     * for peak_memory_kb and cgroup_cpu_ms alone, which that reply then lacks. */
    const char *outcome = msg_get_string(result, "outcome", "");
    bool ok = strcmp(outcome, "ok") == 0;
    if (((j->wait_exit && !ok) || strcmp(outcome, "internal") == 0) && !j->exit_seen) {
        j->held_result = cJSON_Duplicate(result, 1);
        if (j->held_result)
            return;
    }
    /* The exit may also come first: a dead zygote is noticed before its worker's last frame
     * is read, and fail_all_jobs reports that worker's exit at once. */
    reply_result_after_exit(j, result);
}

static void
keep_log_head(struct job *j, const char *data, size_t len)
{
    size_t cap = (size_t) j->limits.v[POLICY_LIMIT_MAX_LOG_CHARS];
    if (j->logs_full || j->logs_len >= cap)
        return;
    if (!j->logs) {
        /* +1: always NUL-terminated, so reading it as a string never runs past the buffer
         * (strndup's interceptor under ASan's strict_string_checks does). */
        j->logs = calloc(cap + 1, 1);
        if (!j->logs)
            return;
    }
    size_t n = len < cap - j->logs_len ? len : cap - j->logs_len;
    /* Never cut a UTF-8 sequence: clients parse replies strictly. */
    if (n < len)
        while (n > 0 && ((unsigned char) data[n] & 0xC0) == 0x80)
            n--;
    memcpy(j->logs + j->logs_len, data, n);
    j->logs_len += n;
    /* Full: a later, shorter chunk must not fill the gap left by the cut. */
    j->logs_full = n < len;
}

static void
handle_output(struct job *j, const cJSON *event)
{
    const char *data = msg_get_string(event, "data", NULL);
    if (!data || j->replied)
        return;
    size_t len = strlen(data);
    j->output_bytes += len;
    uint64_t max = (uint64_t) j->limits.v[POLICY_LIMIT_MAX_OUTPUT_BYTES];
    if (j->output_bytes > max) {
        char msg[160];
        snprintf(msg, sizeof(msg), "snippet printed more than max_output_bytes (%llu bytes)",
                 (unsigned long long) max);
        job_fail(j, PF_E_OUTPUT_LIMIT, msg, JOB_KILL_OUTPUT);
        return;
    }
    keep_log_head(j, data, len);
    if (!j->stream || !j->conn)
        return;
    job_send_output(j->conn, j->req_id, data,
                    (uint32_t) j->d->limits.v[POLICY_LIMIT_MAX_FRAME_BYTES]);
}

static void on_channel_write(uv_write_t *req, int status);

/* Writes a frame to the worker (after its run frame, which send_run writes). */
static void
send_to_worker(struct job *j, cJSON *frame)
{
    _cleanup_pf_error_ struct pf_error *err = NULL;
    struct job_write *w = frame && !j->channel_done ? calloc(1, sizeof(*w)) : NULL;
    size_t len;
    if (!w || msg_encode(frame, JOB_MAX_WORKER_FRAME, &w->buf, &len, &err) < 0) {
        free(w);
        cJSON_Delete(frame);
        if (!j->channel_done)
            job_fail(j, PF_E_INTERNAL, "the daemon could not answer the worker (out of memory)",
                     JOB_KILL_PROTOCOL);
        return;
    }
    cJSON_Delete(frame);
    w->req.data = j;
    uv_buf_t b = uv_buf_init(w->buf, (unsigned) len);
    if (uv_write(&w->req, (uv_stream_t *) &j->channel, &b, 1, on_channel_write) < 0) {
        free(w->buf);
        free(w);
    }
}

static void
on_egress_done(void *ctx, cJSON *frame)
{
    struct job *j = ctx;
    j->egress = NULL;
    send_to_worker(j, frame);
}

/* One request at a time: the worker waits for each reply (CHANNEL.md). */
static void
handle_egress(struct job *j, const cJSON *event)
{
    if (j->egress) {
        job_fail(j, PF_E_INTERNAL, "the worker broke the channel protocol", JOB_KILL_PROTOCOL);
        return;
    }
    cJSON *now = daemon_egress_start(j->d, j->profile, &j->limits, &j->egress_requests, event,
                                     on_egress_done, j, &j->egress);
    if (!j->egress)
        send_to_worker(j, now);
}

static int
on_worker_frame(void *userdata, char *payload, size_t len)
{
    _cleanup_free_ char *owned = payload;
    struct job *j = userdata;
    cJSON *obj = NULL;
    struct pf_error *err = NULL;
    if (j->pool) {
        /* Before its run frame, a worker speaks only to say its hardening failed. */
        pool_worker_lost(j, true);
        kill_worker(j, JOB_KILL_PROTOCOL);
    }
    j->heard = true;
    if (msg_parse(owned, len, JOB_MAX_WORKER_DEPTH, &obj, &err) < 0) {
        pf_log_warning(WORKER, "job %llu: bad frame from worker: %s", (unsigned long long) j->id,
                       err ? err->msg : "out of memory");
        pf_error_free(err);
        job_fail(j, PF_E_INTERNAL, "the worker broke the channel protocol", JOB_KILL_PROTOCOL);
        return -1;
    }
    const char *event = msg_get_string(obj, "event", "");
    if (strcmp(event, "output") == 0) {
        handle_output(j, obj);
    } else if (strcmp(event, "result") == 0) {
        handle_result(j, obj);
    } else if (strcmp(event, "egress") == 0 && !j->replied) {
        handle_egress(j, obj);
    } else if (strcmp(event, "seccomp") == 0) {
        snprintf(j->seccomp_syscall, sizeof(j->seccomp_syscall), "%s",
                 msg_get_string(obj, "syscall", "?"));
    } else {
        pf_log_warning(WORKER, "job %llu: unknown event '%s' from worker, ignoring",
                       (unsigned long long) j->id, event);
    }
    cJSON_Delete(obj);
    return 0;
}

/* Why a pool job whose worker died cannot run elsewhere, NULL when it can. */
static const char *
why_not_retried(const struct job *j)
{
    if (j->heard)
        return "it had sent a frame";
    if (!j->channel_reset)
        return "its channel ended without a reset: the worker may have read the job";
    if (j->retries >= JOB_MAX_RETRIES)
        return "the job was retried too often already";
    if (!j->frame)
        return "its run frame is gone";
    if (!j->conn)
        return "its client is gone";
    if (j->kill_reason != JOB_KILL_NONE || j->cancel_requested)
        return "pyfenced killed or cancelled it";
    if (j->d->shutting_down)
        return "pyfenced is stopping";
    return NULL;
}

/* A pool worker that died without reading its run frame (the channel was reset: it was killed
 * while idle, before the zygote could say so) did not run the job: the request goes back to
 * the scheduler instead of failing with worker_crashed (its next pool worker may have been
 * killed with it: a few times). */
static bool
retry_elsewhere(struct job *j)
{
    struct daemon *d = j->d;
    if (!j->from_pool)
        return false;
    const char *why_not = why_not_retried(j);
    if (why_not) {
        pf_log_debug(WORKER, "job %llu: its pool worker (pid %d) died; not run elsewhere: %s",
                     (unsigned long long) j->id, (int) j->pid, why_not);
        return false;
    }
    struct job_spec spec = {.limits = j->limits,
                            .stream = j->stream,
                            .arrival_ns = j->arrival_ns,
                            .profile = j->profile};
    char *frame = malloc(j->frame_len);
    struct job *q = frame ? job_create(d, j->conn, j->req_id, &spec, frame, j->frame_len) : NULL;
    if (!q) {
        free(frame);
        return false;
    }
    memcpy(frame, j->frame, j->frame_len);
    q->params = j->params;
    q->wait_exit = j->wait_exit;
    q->retries = j->retries + 1;
    if (sched_submit(&d->sched, &q->sched, j->conn->uid, pools_startable(&d->pools, &q->params),
                     NULL, NULL) < 0) {
        detach_conn(q);
        q->replied = true;
        maybe_release(q);
        return false;
    }
    pf_log_info(WORKER,
                "job %llu: its pool worker (pid %d) died before reading it; running it on "
                "another worker",
                (unsigned long long) j->id, (int) j->pid);
    detach_conn(j);
    mark_replied(j); /* q owes the reply now */
    sched_pump(&d->sched);
    pools_kick(&d->pools);
    return true;
}

/* Called once the worker is gone and its channel drained: a job that got no result ends here. */
static void
settle(struct job *j)
{
    if (!j->replied && j->held_result && j->exit_seen && j->channel_done)
        reply_held_result(j);
    if (!j->replied && j->cancel_requested && j->exit_seen && j->channel_done)
        reply_failure(j, PF_E_CANCELLED, "Code execution was cancelled");
    if (!j->replied && j->exit_seen && j->channel_done && !retry_elsewhere(j)) {
        char msg[256];
        int code = job_outcome_from_exit(&j->exit_info, (uint64_t) j->limits.v[POLICY_LIMIT_CPU_MS],
                                         j->seccomp_syscall, msg, sizeof(msg));
        if (code == PF_E_SECCOMP || code == PF_E_WORKER_CRASHED)
            pf_log_warning(WORKER, "job %llu (pid %d): %s", (unsigned long long) j->id,
                           (int) j->pid, msg);
        reply_failure(j, code, msg);
    }
    maybe_release(j);
}

static void
on_channel_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    struct job *j = stream->data;
    if (nread > 0) {
        struct pf_error *err = NULL;
        long r = frame_decoder_feed(&j->dec, buf->base, (size_t) nread, on_worker_frame, j, &err);
        daemon_release_buf(j->d, buf);
        if (r < 0) {
            pf_log_warning(WORKER, "job %llu: %s", (unsigned long long) j->id,
                           err ? err->msg : "bad frame");
            pf_error_free(err);
            job_fail(j, PF_E_INTERNAL, "the worker broke the channel protocol", JOB_KILL_PROTOCOL);
        }
        /* A frame that broke the protocol stopped the feed: nothing more is read. */
        if (r < 0 || r < (long) nread) {
            close_channel(j);
            settle(j);
        }
        return;
    }
    daemon_release_buf(j->d, buf);
    if (nread == 0)
        return;
    if (nread != UV_EOF)
        pf_log_debug(WORKER, "job %llu: channel: %s", (unsigned long long) j->id,
                     uv_strerror((int) nread));
    if (nread == UV_ECONNRESET)
        j->channel_reset = true;
    close_channel(j);
    settle(j);
}

static void
on_channel_write(uv_write_t *req, int status)
{
    struct job_write *w = (struct job_write *) req;
    struct job *j = req->data;
    free(w->buf);
    free(w);
    /* A worker that dies before reading its job shows up as EOF and exit: handled there. One
     * whose end was closed before the run frame could even be written (a pool worker killed
     * while idle, its death not seen yet) never read it either: the job may run elsewhere. */
    if (status == UV_EPIPE || status == UV_ECONNRESET)
        j->channel_reset = true;
    if (status < 0 && status != UV_ECANCELED)
        pf_log_debug(WORKER, "job %llu: writing the job: %s", (unsigned long long) j->id,
                     uv_strerror(status));
}

static void
on_deadline(uv_timer_t *timer)
{
    struct job *j = timer->data;
    if (j->exit_seen) {
        /* The worker is gone but its channel stayed open: someone else holds its end. */
        close_channel(j);
        settle(j);
        return;
    }
    if (!j->replied && j->held_result)
        reply_held_result(j);
    if (!j->replied && j->cancel_requested)
        reply_failure(j, PF_E_CANCELLED,
                      "Code execution was cancelled (its worker did not stop within "
                      "500 ms and was killed)");
    if (!j->replied) {
        char msg[128];
        snprintf(msg, sizeof(msg), "snippet exceeded the wall-clock limit of %lld ms",
                 (long long) j->limits.v[POLICY_LIMIT_TIMEOUT_MS]);
        reply_failure(j, PF_E_TIMEOUT, msg);
    }
    kill_worker(j, j->cancel_requested ? JOB_KILL_CANCEL : JOB_KILL_DEADLINE);
    /* Check again later, in case the kill is lost with the zygote. */
    uv_timer_start(&j->deadline, on_deadline, JOB_DEADLINE_GRACE_MS * 4, 0);
}

void
job_harden_params(const struct policy_limits *l, const enum harden_level *levels,
                  struct harden_params *p)
{
    memset(p, 0, sizeof(*p));
    for (int i = 0; i < _HARDEN_LAYER_MAX; i++)
        p->level[i] = levels[i];
    p->cpu_ms = (uint64_t) l->v[POLICY_LIMIT_CPU_MS];
    p->memory_mb = (uint64_t) l->v[POLICY_LIMIT_MEMORY_MB];
    p->file_size_mb = (uint64_t) l->v[POLICY_LIMIT_FILE_SIZE_MB];
    p->scratch_mb = (uint64_t) l->v[POLICY_LIMIT_SCRATCH_MB];
    p->open_files = (uint64_t) l->v[POLICY_LIMIT_OPEN_FILES];
    p->pids = (uint64_t) l->v[POLICY_LIMIT_PIDS];
    /* 0: the zygote gives each concurrent worker a uid/gid of its own from its range. */
    p->uid = 0;
    p->gid = 0;
}

struct job *
job_create(struct daemon *d, struct conn *c, const cJSON *req_id, const struct job_spec *spec,
           char *frame, size_t frame_len)
{
    struct job *j = calloc(1, sizeof(*j));
    if (!j)
        return NULL;
    j->req_id = req_id ? cJSON_Duplicate(req_id, 1) : NULL;
    if (req_id && !j->req_id) {
        free(j);
        return NULL;
    }
    j->d = d;
    j->limits = spec->limits;
    j->stream = spec->stream;
    j->wait_exit = spec->levels[HARDEN_LAYER_CGROUP] != HARDEN_OFF;
    j->arrival_ns = spec->arrival_ns;
    job_harden_params(&spec->limits, spec->levels, &j->params);
    snprintf(j->profile, sizeof(j->profile), "%s", spec->profile ? spec->profile : "");
    j->preload_zygote = daemon_profile_preloads(d, j->profile);
    j->frame = frame;
    j->frame_len = frame_len;
    /* The deadline timer is the handle whose close frees the job, worker or not. */
    uv_timer_init(d->loop, &j->deadline);
    j->deadline.data = j;
    j->open_handles = 1;
    dlist_init(&j->pool_link);
    dlist_init(&j->conn_link);
    dlist_insert_tail(&d->jobs, &j->daemon_link);
    j->replied = !c; /* a pool worker owes nobody a reply until it is bound */
    if (c) {
        j->conn = c;
        dlist_insert_tail(&c->jobs, &j->conn_link);
    }
    return j;
}

/* Writes the held run frame and starts the wall clock: from here the job is running. */
static int
send_run(struct job *j)
{
    struct job_write *w = calloc(1, sizeof(*w));
    if (!w)
        return UV_ENOMEM;
    /* A pool worker may turn out to be dead (killed while idle, not reported yet): its job
     * keeps the frame, to run it elsewhere (retry_elsewhere). */
    w->buf = j->from_pool ? NULL : TAKE_PTR(j->frame);
    w->req.data = j;
    uv_buf_t b = uv_buf_init(w->buf ? w->buf : j->frame, (unsigned) j->frame_len);
    if (j->from_pool) {
        /* Tried at once, not queued: a dead worker's closed end shows now (EPIPE), before its
         * EOF and exit can settle the job as a crash, which a queued write's callback could
         * come too late to prevent. */
        int n = uv_try_write((uv_stream_t *) &j->channel, &b, 1);
        if (n == UV_EPIPE || n == UV_ECONNRESET) {
            j->channel_reset = true;
            b.len = 0;
        } else if (n > 0) {
            b.base += n;
            b.len -= (size_t) n;
        } else if (n != UV_EAGAIN) {
            free(w);
            return n;
        }
    }
    int r = b.len ? uv_write(&w->req, (uv_stream_t *) &j->channel, &b, 1, on_channel_write) : 0;
    if (r < 0 || !b.len) {
        free(w->buf);
        free(w);
    }
    if (r < 0)
        return r;
    j->d->jobs_total++;
    uv_timer_start(&j->deadline, on_deadline,
                   (uint64_t) j->limits.v[POLICY_LIMIT_TIMEOUT_MS] + JOB_DEADLINE_GRACE_MS, 0);
    return 0;
}

/* The zygote has the job: from here on its callbacks will come, so every failure goes through
 * the normal release path. */
static void
job_run(struct job *j, int fd)
{
    struct daemon *d = j->d;
    frame_decoder_init(&j->dec, JOB_MAX_WORKER_FRAME);
    uv_pipe_init(d->loop, &j->channel, 0);
    j->channel.data = j;
    j->open_handles++;
    j->launched = true;
    d->jobs_running++;
    int r = uv_pipe_open(&j->channel, fd);
    if (r < 0)
        close(fd);
    if (r == 0)
        r = uv_read_start((uv_stream_t *) &j->channel, daemon_alloc_cb, on_channel_read);
    if (r == 0 && j->frame)
        r = send_run(j);
    if (r < 0) {
        pf_log_warning(WORKER, "job %llu: worker channel: %s", (unsigned long long) j->id,
                       uv_strerror(r));
        job_fail(j, PF_E_INTERNAL, "cannot talk to the worker", JOB_KILL_PROTOCOL);
        close_channel(j);
    }
}

int
job_launch(struct job *j, struct pf_error **err)
{
    struct daemon *d = j->d;
    struct zygote *z = daemon_zygote(d, j->preload_zygote);
    if (!z)
        return pf_error_set(err, PF_E_INTERNAL, "pyfenced has no zygote; no job can run");
    uint64_t id = ++d->next_job_id;
    int fd = -1;
    if (zygote_spawn(z, id, &j->params, j, &fd, err) < 0)
        return pf_error_prefix(err, "cannot start a worker");
    j->id = id;
    j->spawn_ns = uv_hrtime();
    job_run(j, fd);
    return 0;
}

void
job_bind(struct job *w, struct job *q)
{
    w->req_id = TAKE_PTR(q->req_id);
    w->limits = q->limits;
    w->stream = q->stream;
    w->wait_exit = q->wait_exit;
    w->arrival_ns = q->arrival_ns;
    w->sched = q->sched;
    q->sched.state = SCHED_NONE;
    w->frame = TAKE_PTR(q->frame);
    w->frame_len = q->frame_len;
    w->from_pool = true;
    w->retries = q->retries;
    /* Same zygote as the request's profile: find_idle saw to it. */
    memcpy(w->profile, q->profile, sizeof(w->profile));
    w->spawn_ns = uv_hrtime(); /* queue_ms ends here */
    w->replied = false;
    if (q->conn) {
        w->conn = q->conn;
        dlist_insert_tail(&w->conn->jobs, &w->conn_link);
        detach_conn(q);
    }
    q->replied = true;
    maybe_release(q);
    int r = w->channel_done ? UV_EPIPE : send_run(w);
    if (r < 0) {
        pf_log_warning(WORKER, "job %llu: pool worker channel: %s", (unsigned long long) w->id,
                       uv_strerror(r));
        job_fail(w, PF_E_INTERNAL, "cannot talk to the worker", JOB_KILL_PROTOCOL);
    }
}

int
job_start(struct conn *c, const cJSON *req_id, const struct job_spec *spec, const char *run_json,
          size_t run_len, uint32_t *ret_retry_after_ms, struct pf_error **err)
{
    struct daemon *d = c->d;
    if (!d->zygote)
        return pf_error_set(err, PF_E_INTERNAL, "pyfenced has no zygote; no job can run");
    _cleanup_free_ char *frame = NULL;
    size_t frame_len;
    if (frame_encode(run_json, run_len, JOB_MAX_WORKER_FRAME, &frame, &frame_len, err) < 0)
        return pf_error_prefix(err, "exec request");
    struct job *j = job_create(d, c, req_id, spec, frame, frame_len);
    if (!j)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    TAKE_PTR(frame);
    const char *why = NULL;
    int r = sched_submit(&d->sched, &j->sched, c->uid, pools_startable(&d->pools, &j->params),
                         ret_retry_after_ms, &why);
    if (r < 0) {
        detach_conn(j);
        j->replied = true;
        maybe_release(j);
        if (r != -EBUSY)
            return pf_error_set(err, PF_E_INTERNAL, "out of memory");
        return pf_error_set(err, PF_E_BUSY,
                            "%u jobs already wait for a worker (%s); try again in %u ms",
                            d->sched.queued, why, ret_retry_after_ms ? *ret_retry_after_ms : 0);
    }
    sched_pump(&d->sched);
    pools_kick(&d->pools);
    return 0;
}

void
job_on_spawned(void *job_ctx, pid_t pid, const struct pf_error *err)
{
    if (*(const enum worker_ctx_kind *) job_ctx == WORKER_CTX_SESSION) {
        session_on_spawned(job_ctx, pid, err);
        return;
    }
    struct job *j = job_ctx;
    if (err || pid <= 0) {
        /* No worker exists, so no exit will be reported: the job ends here. */
        pf_log_warning(WORKER, "job %llu: the zygote could not fork a worker: %s",
                       (unsigned long long) j->id, err ? err->msg : "no pid");
        char msg[256];
        snprintf(msg, sizeof(msg), "cannot start a worker: %s",
                 err ? err->msg : "the zygote gave no pid");
        if (!j->exit_seen) {
            j->exit_seen = true;
            j->d->jobs_running--;
            sched_done(&j->d->sched, &j->sched, -1);
            pools_kick(&j->d->pools);
        }
        int code = err && err->code > 0 && err->code < _PF_E_MAX ? err->code : PF_E_INTERNAL;
        reply_failure(j, code, msg);
        close_channel(j);
        maybe_release(j);
        return;
    }
    j->pid = pid;
    if (!j->from_pool)
        j->spawn_ns = uv_hrtime();
    pf_log_debug(WORKER, "job %llu: worker pid %d", (unsigned long long) j->id, (int) pid);
}

void
job_on_exit(void *job_ctx, const struct zygote_exit *exit_info)
{
    if (*(const enum worker_ctx_kind *) job_ctx == WORKER_CTX_SESSION) {
        session_on_exit(job_ctx, exit_info);
        return;
    }
    struct job *j = job_ctx;
    if (j->exit_seen)
        return;
    j->exit_seen = true;
    j->exit_info = *exit_info;
    j->d->jobs_running--;
    if (j->evicted)
        j->d->pools.evicting--;
    /* Its worker slot is free: a waiting job may start, a pool may refill. */
    sched_done(&j->d->sched, &j->sched, daemon_elapsed_ms(j->spawn_ns));
    pool_worker_lost(j, true);
    pools_kick(&j->d->pools);
    pf_log_debug(WORKER, "job %llu: worker pid %d ended (status %d, signal %d, cpu %llu ms)",
                 (unsigned long long) j->id, (int) exit_info->pid, exit_info->exit_code,
                 exit_info->signal, (unsigned long long) exit_info->cpu_ms);
    settle(j);
}
