/* A job's life (job.h): admitted into the scheduler, given a worker (a fresh one, or an idle
 * pool worker's), timed by its deadline, cancelled, failed or run elsewhere, settled once its
 * worker is gone, and released. What the worker says over the channel, and the reply the
 * client gets from it, is job_channel.c: this file decides when a job moves on, that one what
 * is said. */
#include "job.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "job_internal.h"
#include "load.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "pool.h"
#include "session.h"

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

void
job_close_channel(struct job *j)
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

void
job_detach_conn(struct job *j)
{
    if (!j->conn)
        return;
    dlist_remove(&j->conn_link);
    j->conn = NULL;
}

void
job_kill_worker(struct job *j, enum job_kill_reason reason)
{
    if (j->exit_seen || !j->launched)
        return;
    if (j->kill_reason == JOB_KILL_NONE)
        j->kill_reason = reason;
    struct zygote *z = daemon_zygote(j->d, j->preload_zygote);
    if (z)
        zygote_kill(z, j->id);
}

void
job_fail(struct job *j, int code, const char *message, enum job_kill_reason reason)
{
    job_reply_failure(j, code, message);
    job_kill_worker(j, reason);
    maybe_release(j);
}

bool
job_cancel(struct job *j)
{
    if (j->replied)
        return false;
    if (!j->launched) {
        job_reply_failure(j, PF_E_CANCELLED, "Code execution was cancelled before it started");
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
    job_detach_conn(j);
    if (!j->replied) {
        job_mark_replied(j);
        daemon_count_outcome(j->d, PF_E_CANCELLED);
        job_kill_worker(j, JOB_KILL_CANCEL);
    }
    maybe_release(j);
}

/* j's worker is gone, or never came to be: its slot is free, and an evicted one is no longer on
 * its way out. Every path that sets exit_seen goes through here, once per job. */
static void
worker_gone(struct job *j)
{
    j->exit_seen = true;
    j->d->jobs_running--;
    if (j->evicted) {
        j->evicted = false;
        j->d->pools.evicting--;
    }
}

void
job_abandon(struct job *j)
{
    if (j->launched && !j->exit_seen) {
        j->exit_info.signal = SIGKILL;
        j->exit_info.killed_by_request = true;
        worker_gone(j);
    }
    job_reply_failure(j, PF_E_SHUTTING_DOWN, "pyfenced is shutting down");
    job_close_channel(j);
    maybe_release(j);
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
                            .profile = j->profile,
                            .egress_version = j->egress_version};
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
                     q->frame_len, NULL, NULL) < 0) {
        job_detach_conn(q);
        q->replied = true;
        maybe_release(q);
        return false;
    }
    pf_log_info(WORKER,
                "job %llu: its pool worker (pid %d) died before reading it; running it on "
                "another worker",
                (unsigned long long) j->id, (int) j->pid);
    job_detach_conn(j);
    job_mark_replied(j); /* q owes the reply now */
    sched_pump(&d->sched);
    pools_kick(&d->pools);
    return true;
}

/* Called once the worker is gone and its channel drained: a job that got no result ends here. */
void
job_settle(struct job *j)
{
    if (!j->replied && j->held_result && j->exit_seen && j->channel_done)
        job_reply_held_result(j);
    if (!j->replied && j->cancel_requested && j->exit_seen && j->channel_done)
        job_reply_failure(j, PF_E_CANCELLED, "Code execution was cancelled");
    if (!j->replied && j->exit_seen && j->channel_done && !retry_elsewhere(j)) {
        char msg[256];
        int code = job_outcome_from_exit(&j->exit_info, (uint64_t) j->limits.v[POLICY_LIMIT_CPU_MS],
                                         j->seccomp_syscall, msg, sizeof(msg));
        if (code == PF_E_SECCOMP || code == PF_E_WORKER_CRASHED)
            pf_log_warning(WORKER, "job %llu (pid %d): %s", (unsigned long long) j->id,
                           (int) j->pid, msg);
        job_reply_failure(j, code, msg);
    }
    maybe_release(j);
}

static void
on_deadline(uv_timer_t *timer)
{
    struct job *j = timer->data;
    if (j->exit_seen) {
        /* The worker is gone but its channel stayed open: someone else holds its end. */
        job_close_channel(j);
        job_settle(j);
        return;
    }
    if (!j->replied && j->held_result)
        job_reply_held_result(j);
    if (!j->replied && j->cancel_requested)
        job_reply_failure(j, PF_E_CANCELLED,
                          "Code execution was cancelled (its worker did not stop within "
                          "500 ms and was killed)");
    if (!j->replied) {
        char msg[128];
        snprintf(msg, sizeof(msg), "snippet exceeded the wall-clock limit of %lld ms",
                 (long long) j->limits.v[POLICY_LIMIT_TIMEOUT_MS]);
        job_reply_failure(j, PF_E_TIMEOUT, msg);
    }
    job_kill_worker(j, j->cancel_requested ? JOB_KILL_CANCEL : JOB_KILL_DEADLINE);
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
    j->egress_version = spec->egress_version;
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
    int r = b.len ? uv_write(&w->req, (uv_stream_t *) &j->channel, &b, 1, job_on_channel_write) : 0;
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
        r = uv_read_start((uv_stream_t *) &j->channel, daemon_alloc_cb, job_on_channel_read);
    if (r == 0 && j->frame)
        r = send_run(j);
    if (r < 0) {
        pf_log_warning(WORKER, "job %llu: worker channel: %s", (unsigned long long) j->id,
                       uv_strerror(r));
        job_fail(j, PF_E_INTERNAL, "cannot talk to the worker", JOB_KILL_PROTOCOL);
        job_close_channel(j);
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
    w->egress_version = q->egress_version;
    w->spawn_ns = uv_hrtime(); /* queue_ms ends here */
    w->replied = false;
    if (q->conn) {
        w->conn = q->conn;
        dlist_insert_tail(&w->conn->jobs, &w->conn_link);
        job_detach_conn(q);
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
    /* The run frame is held while the job waits for a worker: it counts for max_bytes_per_uid
     * until then (sched_submit). */
    const char *why = NULL;
    int r = sched_submit(&d->sched, &j->sched, c->uid, pools_startable(&d->pools, &j->params),
                         frame_len, ret_retry_after_ms, &why);
    if (r < 0) {
        job_detach_conn(j);
        j->replied = true;
        maybe_release(j);
        if (r != -EBUSY)
            return pf_error_set(err, PF_E_INTERNAL, "out of memory");
        return sched_busy_error(&d->sched, c->uid, why,
                                ret_retry_after_ms ? *ret_retry_after_ms : 0, err);
    }
    sched_pump(&d->sched);
    pools_kick(&d->pools);
    return 0;
}

/* sched_match_cb: e is a queued exec that the policy (ctx) no longer lets its peer use under
 * the profile it was resolved with. The peer is the connection's credentials, read once at
 * accept: the identity the request arrived with. A queued job always has its connection (one
 * that goes takes its queued jobs out); one without is not admitted either. */
static bool
queued_revoked(void *ctx, struct sched_entry *e)
{
    const struct policy *policy = ctx;
    if (e->kind != WORKER_CTX_JOB)
        return false; /* a session.open: session_revoke answers it */
    const struct job *j = pf_container_of(e, struct job, sched);
    if (!j->profile[0])
        return false; /* resolved without a policy (tests): nothing to revoke */
    const struct policy_profile *p = policy_find(policy, j->profile);
    if (!p || !j->conn)
        return true;
    struct policy_peer peer = conn_peer(j->conn);
    return !policy_profile_allows(p, &peer);
}

size_t
job_revoke_queued(struct daemon *d)
{
    if (!d->policy)
        return 0;
    size_t n = 0;
    struct sched_entry *e;
    /* From the start each time: a reply may close its connection (over max_outbuf_bytes),
     * which takes that connection's other queued jobs out of the queue. Each failed job
     * leaves the queue through its release (job_fail), so the search moves on. */
    while ((e = sched_find_queued(&d->sched, queued_revoked, d->policy))) {
        struct job *j = pf_container_of(e, struct job, sched);
        char msg[128];
        /* Word for word what an exec naming the profile now gets (policy_resolve): the
         * peer learns nothing a new request would not tell it. */
        snprintf(msg, sizeof(msg), "no profile '%s' for uid %u", j->profile,
                 (unsigned) (j->conn ? j->conn->uid : e->u->uid));
        job_fail(j, PF_E_NOT_FOUND, msg, JOB_KILL_NONE);
        n++;
    }
    return n;
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
        /* hardening_unavailable says it all (the layer, why, what to do); anything else is a
         * fault of ours in starting it. */
        char msg[1024];
        bool hardening = err && err->code == PF_E_HARDENING_UNAVAILABLE;
        snprintf(msg, sizeof(msg), "%s%s", hardening ? "" : "cannot start a worker: ",
                 err ? err->msg : "the zygote gave no pid");
        if (!j->exit_seen) {
            worker_gone(j);
            sched_done(&j->d->sched, &j->sched, -1);
            pools_kick(&j->d->pools);
        }
        int code = err && err->code > 0 && err->code < _PF_E_MAX ? err->code : PF_E_INTERNAL;
        job_reply_failure(j, code, msg);
        job_close_channel(j);
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
    j->exit_info = *exit_info;
    worker_gone(j);
    /* Its worker slot is free: a waiting job may start, a pool may refill. */
    sched_done(&j->d->sched, &j->sched, daemon_elapsed_ms(j->spawn_ns));
    pool_worker_lost(j, true);
    pools_kick(&j->d->pools);
    pf_log_debug(WORKER, "job %llu: worker pid %d ended (status %d, signal %d, cpu %llu ms)",
                 (unsigned long long) j->id, (int) exit_info->pid, exit_info->exit_code,
                 exit_info->signal, (unsigned long long) exit_info->cpu_ms);
    job_settle(j);
}
