/* A session's worker: forked once, when the scheduler gives the session.open its turn, fed one
 * request at a time over its channel (CHANNEL.md, "Session worker"), the next one when the
 * last has ended (session_queue.c keeps them), and never used for anything else. Its death
 * makes the session lost. This file is the worker's life: when it starts, gets a request, is
 * timed, cancelled, lost and ended. What goes over its channel, and the reply each frame from
 * the worker makes, is session_channel.c. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "pool.h"
#include "session_internal.h"

static void
kill_worker(struct session *s)
{
    struct zygote *z = s->d ? daemon_zygote(s->d, s->preload_zygote) : NULL;
    if (s->awaiting_exit && z)
        zygote_kill(z, s->job_id);
}

/* ---- the worker's end ------------------------------------------------------------------- */

/* The worker is gone (or is being killed) and cause says why; the requests waiting their turn
 * learn it now, and the session is then gone; without any, the next request learns it. */
void
session_make_lost(struct session *s, const char *cause)
{
    if (s->state == SESSION_LOST || s->state == SESSION_ENDED)
        return;
    s->state = SESSION_LOST;
    free(s->lost_cause);
    s->lost_cause = strdup(cause);
    pf_log_info(WORKER, "session %.8s… of uid %u lost: %s", s->id, (unsigned) s->uid, cause);
    kill_worker(s);
    session_close_channel(s);
    session_touch_idle(s); /* a lost session nobody asks about goes with its idle timeout */
    char msg[320];
    snprintf(msg, sizeof(msg), "session '%s' was lost: %s", s->id, cause);
    if (session_queue_fail(s, PF_E_SESSION_LOST, msg) > 0)
        session_end(s, SESSION_END_LOST);
}

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
void
session_settle(struct session *s)
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
            session_request_fail(s, code, open_msg, false);
            session_end(s, SESSION_END_FAILED);
        } else {
            char req_msg[320];
            snprintf(req_msg, sizeof(req_msg), "%s; session '%s' is lost", msg, s->id);
            session_request_fail(s, code, req_msg, true);
            session_make_lost(s, msg);
        }
    }
    session_maybe_release(s);
}

/* ---- its requests ------------------------------------------------------------------------ */

static void
on_deadline(uv_timer_t *timer)
{
    struct session *s = timer->data;
    long long ms = (long long) s->limits.v[POLICY_LIMIT_TIMEOUT_MS];
    char msg[200];
    if (s->req.kind == SESSION_REQ_OPEN) {
        snprintf(msg, sizeof(msg), "the session's worker was not ready within %lld ms", ms);
        session_request_fail(s, PF_E_TIMEOUT, msg, false);
        session_end(s, SESSION_END_FAILED);
        return;
    }
    snprintf(msg, sizeof(msg), "%s the wall-clock limit of %lld ms; session '%s' is lost",
             s->req.kind == SESSION_REQ_GET ? "reading the variables exceeded" : "snippet exceeded",
             ms, s->id);
    session_request_fail(s, PF_E_TIMEOUT, msg, true);
    snprintf(msg, sizeof(msg), "worker killed at the wall-clock limit (timeout_ms %lld)", ms);
    session_make_lost(s, msg);
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
    /* Its frame (variables included) is held while the open waits for a worker: it counts for
     * max_bytes_per_uid until then. */
    const char *why = NULL;
    int r = sched_submit(&d->sched, &s->sched, c->uid, pools_startable(&d->pools, NULL),
                         session_frame_bytes(frame), ret_retry_after_ms, &why);
    if (r < 0) {
        cJSON_Delete(frame);
        cJSON_Delete(id);
        if (r != -EBUSY)
            return pf_error_set(err, PF_E_INTERNAL, "out of memory");
        return sched_busy_error(&d->sched, c->uid, why,
                                ret_retry_after_ms ? *ret_retry_after_ms : 0, err);
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

void
session_open_fail(struct session *s, int code, const char *message)
{
    session_request_fail(s, code, message, false);
    session_end(s, SESSION_END_FAILED);
}

static enum sched_start
launch_failed(struct session *s, int code, const char *message)
{
    session_open_fail(s, code, message);
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
    if (r < 0 || session_send_frame(s, frame, &err) < 0 ||
        (r = uv_read_start((uv_stream_t *) &s->channel, daemon_alloc_cb, session_on_channel_read)) <
                0) {
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
            rc = session_send_frame(s, frame, &err);
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
            session_request_fail(s, code, msg, false);
            continue;
        }
        char req_msg[400];
        snprintf(req_msg, sizeof(req_msg), "%s; session '%s' is lost", msg, s->id);
        session_request_fail(s, code, req_msg, true);
        session_make_lost(s, msg);
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
    session_request_fail(s, PF_E_CANCELLED, msg, true);
    snprintf(msg, sizeof(msg),
             "worker killed: its snippet did not stop within %d ms of being cancelled",
             JOB_CANCEL_GRACE_MS);
    session_make_lost(s, msg);
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
    session_open_fail(s, PF_E_CANCELLED,
                      "session.open was cancelled before the session's worker was ready");
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
    session_request_fail(s, code, msg, true);
    pf_log_debug(WORKER, "session %.8s… of uid %u ends (%d)", s->id, (unsigned) s->uid, why);
    /* A session.open still waiting for a worker leaves the queue: it never starts. */
    if (s->d)
        sched_done(&s->d->sched, &s->sched, -1);
    session_unlink(s, why);
    kill_worker(s);
    session_close_channel(s);
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
        char msg[1024];
        bool hardening = err && err->code == PF_E_HARDENING_UNAVAILABLE;
        snprintf(msg, sizeof(msg), "%s%s", hardening ? "" : "cannot start the session's worker: ",
                 err ? err->msg : "the zygote gave no pid");
        int code = err && err->code > 0 && err->code < _PF_E_MAX ? err->code : PF_E_INTERNAL;
        session_request_fail(s, code, msg, false);
        session_end(s, SESSION_END_FAILED);
        return;
    }
    session_close_channel(s);
    session_settle(s);
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
    session_settle(s);
}

void
session_shutdown_all(struct session_table *t)
{
    /* The head each time, not a saved next: answering a request may close its connection,
     * which ends that connection's sessions too. Each session_end leaves the list. */
    while (!dlist_empty(&t->all))
        session_end(pf_container_of(t->all.next, struct session, link), SESSION_END_SHUTDOWN);
}

/* Whether the policy still admits the peer that opened s to its profile. */
static bool
still_admitted(const struct session *s, const struct policy *policy)
{
    const struct policy_profile *p = policy_find(policy, s->profile);
    struct policy_peer peer = {
            .uid = s->uid, .gid = s->gid, .groups = s->groups, .n_groups = s->n_groups};
    return p && policy_profile_allows(p, &peer);
}

static void
end_revoked(struct session *s)
{
    char msg[320];
    if (s->state == SESSION_STARTING) {
        /* Word for word what a new session.open with this profile now gets. */
        snprintf(msg, sizeof(msg), "no profile '%s' for uid %u", s->profile, (unsigned) s->uid);
        session_request_fail(s, PF_E_NOT_FOUND, msg, false);
        session_end(s, SESSION_END_FAILED);
        return;
    }
    char cause[200];
    snprintf(cause, sizeof(cause),
             "the reloaded policy no longer lets uid %u use profile '%s'; its worker was killed",
             (unsigned) s->uid, s->profile);
    snprintf(msg, sizeof(msg), "session '%s' was lost: %s", s->id, cause);
    session_request_fail(s, PF_E_SESSION_LOST, msg, true);
    session_make_lost(s, cause);
}

/* The first session of t's that the policy no longer admits, or NULL. */
static struct session *
first_unadmitted(struct session_table *t, const struct policy *policy)
{
    struct dlist *pos, *tmp;
    DLIST_FOREACH_SAFE(pos, tmp, &t->all) {
        struct session *s = pf_container_of(pos, struct session, link);
        if (s->state != SESSION_LOST && !still_admitted(s, policy))
            return s;
    }
    return NULL;
}

size_t
session_revoke(struct session_table *t, const struct policy *policy)
{
    /* From the head each time: answering a request may close its connection (over
     * max_outbuf_bytes), which ends that connection's sessions, the next one here included.
     * Each revoked session leaves the search (lost or ended). */
    size_t n = 0;
    struct session *s;
    while ((s = first_unadmitted(t, policy))) {
        pf_log_notice(POLICY,
                      "session %.8s… of uid %u ends: the reloaded policy no longer lets it use "
                      "profile '%s'",
                      s->id, (unsigned) s->uid, s->profile);
        end_revoked(s);
        n++;
    }
    return n;
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
        session_close_channel(s);
        session_maybe_release(s);
    }
}
