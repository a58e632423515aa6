/* A job's side of the talk (job.h): the frames its worker sends over the channel (output,
 * result, egress, seccomp) and the daemon's answers to it, and the one reply the request gets,
 * from the worker's result or from a failure the daemon reports itself. Apart from job.c, the
 * job's life, which decides when a job starts, times out and ends: this file only says what
 * each frame means. What goes in an exec reply is job_reply.c, shared with sessions. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "job_internal.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "pool.h"

/* ---- the reply -------------------------------------------------------------------------- */

/* j's request needs nothing more from it: answered, or handed to another job. */
void
job_mark_replied(struct job *j)
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
    job_mark_replied(j);
    job_reply_name_profile(reply, code, j->profile);
    code = job_reply_fit(reply, (uint32_t) j->d->limits.v[POLICY_LIMIT_MAX_FRAME_BYTES], code);
    daemon_count_outcome(j->d, code);
    latency_record(&j->d->latency, daemon_elapsed_ms(j->arrival_ns));
    if (j->conn)
        conn_finish_request(j->conn, reply);
    job_detach_conn(j);
}

static cJSON *
daemon_side_stats(const struct job *j)
{
    cJSON *stats = cJSON_CreateObject();
    if (!stats)
        return NULL;
    /* A request answered before it had a worker (cancelled, or its zygote did not come back)
     * waited all along: its queue_ms is that wait, its run_ms 0. */
    uint64_t start = j->spawn_ns ? j->spawn_ns : uv_hrtime();
    cJSON_AddNumberToObject(stats, "queue_ms", (double) (start - j->arrival_ns) / 1e6);
    cJSON_AddNumberToObject(stats, "run_ms", j->spawn_ns ? daemon_elapsed_ms(start) : 0);
    if (j->exit_seen) {
        cJSON_AddNumberToObject(stats, "cpu_ms", (double) j->exit_info.cpu_ms);
        cJSON_AddNumberToObject(stats, "max_rss_kb", (double) j->exit_info.max_rss_kb);
    }
    return stats;
}

/* An error reply the daemon makes itself (timeout, limits, crashes): it still has the exec
 * reply's outcome, logs and stats, so clients read every exec reply the same way. */
void
job_reply_failure(struct job *j, int code, const char *message)
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
        job_mark_replied(j);
        daemon_count_outcome(j->d, code);
        job_detach_conn(j);
        return;
    }
    send_reply(j, reply, code);
    cJSON_Delete(reply);
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
        job_reply_failure(j, PF_E_INTERNAL, "out of memory building the reply");
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
        job_reply_failure(j, oom ? PF_E_MEMORY_LIMIT : PF_E_WORKER_CRASHED, msg);
    } else {
        reply_result(j, result);
    }
}

void
job_reply_held_result(struct job *j)
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

/* ---- the channel ------------------------------------------------------------------------ */

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
    if (uv_write(&w->req, (uv_stream_t *) &j->channel, &b, 1, job_on_channel_write) < 0) {
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
    /* The peer the request came from: the connection's credentials, read at accept. Without
     * its connection the job is being cancelled: no peer, no egress. */
    struct policy_peer peer = j->conn ? conn_peer(j->conn) : (struct policy_peer){0};
    struct daemon_egress_run run = {.profile = j->profile,
                                    .egress_version = j->egress_version,
                                    .peer = j->conn ? &peer : NULL,
                                    .limits = &j->limits,
                                    .count = &j->egress_requests};
    cJSON *now = daemon_egress_start(j->d, &run, event, on_egress_done, j, &j->egress);
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
        job_kill_worker(j, JOB_KILL_PROTOCOL);
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

void
job_on_channel_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
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
            job_close_channel(j);
            job_settle(j);
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
    job_close_channel(j);
    job_settle(j);
}

void
job_on_channel_write(uv_write_t *req, int status)
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
