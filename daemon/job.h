/* One exec job: a worker forked by the zygote, its channel, its deadline and its reply.
 * A job has one owner (the daemon's job table) and one release path: it is freed only once
 * its reply is sent (or no longer owed because the connection is gone), its channel is closed
 * and its worker's exit has been seen (the zygote reaps; we never leave a zombie).
 *
 * job.c is a job's life (admission, its worker, its deadline, its end); job_channel.c what its
 * worker says over the channel and the reply that makes; job_reply.c what an exec reply holds,
 * for sessions too. */
#ifndef DAEMON_JOB_H
#define DAEMON_JOB_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "dlist.h"
#include "frame.h"
#include "pf_error.h"
#include "policy_limits.h"
#include "scheduler.h"
#include "zygote.h"

/* Grace on top of timeout_ms before the daemon kills: the executor's own deadline, checked
 * inside the walk, should fire first and give a proper result. */
#define JOB_DEADLINE_GRACE_MS 500
/* A cancelled job's worker gets this long to stop by itself (SIGUSR1) before it is killed. */
#define JOB_CANCEL_GRACE_MS 500

/* An ephemeral job's worker has one run, run 1 (CHANNEL.md, "run"): its frame says so, and so
 * does a cancel, which the worker then cannot take for another run's. */
#define JOB_RUN 1
/* A job whose pool worker died before reading it goes back to the scheduler, this many times. */
#define JOB_MAX_RETRIES 3
/* Largest frame accepted from a worker (the result carries output, logs and stats). */
#define JOB_MAX_WORKER_FRAME (64u * 1024 * 1024)
/* Nesting accepted from a worker: tagged values take two JSON levels per container. */
#define JOB_MAX_WORKER_DEPTH 512

struct daemon;
struct conn;

enum job_kill_reason {
    JOB_KILL_NONE,
    JOB_KILL_DEADLINE,
    JOB_KILL_OUTPUT,
    JOB_KILL_CANCEL,
    JOB_KILL_PROTOCOL,
    JOB_KILL_SHUTDOWN,
    _JOB_KILL_MAX,
    _JOB_KILL_INVALID = -1,
};

/* The zygote hands each worker's context back as a void *: its first member says whose it
 * is, a job's (calloc gives WORKER_CTX_JOB) or a session's (session.h). */
enum worker_ctx_kind {
    WORKER_CTX_JOB,
    WORKER_CTX_SESSION,
    _WORKER_CTX_MAX,
    _WORKER_CTX_INVALID = -1,
};

struct job {
    enum worker_ctx_kind ctx_kind; /* first: see above */
    uint64_t id;
    struct daemon *d;         /* Not owned. */
    struct conn *conn;        /* Not owned; NULL once the reply is sent or the peer is gone. */
    struct dlist conn_link;   /* in conn->jobs while conn is set */
    struct dlist daemon_link; /* in d->jobs until freed */
    cJSON *req_id;            /* owned copy of the request's id */
    struct policy_limits limits;
    bool stream;

    uv_pipe_t channel; /* the daemon's end of the worker's socketpair */
    uv_timer_t deadline;
    int open_handles;
    struct frame_decoder dec;

    uint64_t arrival_ns; /* uv_hrtime() when the request arrived */
    uint64_t spawn_ns;   /* when the zygote reported the fork */
    pid_t pid;
    uint64_t output_bytes;
    char *logs; /* head of the printed output, for replies the daemon makes itself */
    size_t logs_len;
    bool logs_full;
    char seccomp_syscall[64];
    enum job_kill_reason kill_reason;
    struct zygote_exit exit_info;
    /* A result held until the exit says how the worker ended: an "internal" one always, any
     * other when the job has a cgroup (its outcome and stats complete the reply). */
    cJSON *held_result;
    bool wait_exit; /* the cgroup layer is on: results wait for the exit */

    bool replied; /* the reply was sent, or is no longer owed */
    bool got_result;
    bool channel_done; /* EOF or error on the channel; its handle is closing */
    bool exit_seen;
    bool releasing;

    /* Scheduling and the warm pool (scheduler.c, pool.c). A job is created when its request
     * is admitted and waits in the scheduler until a worker is had: a fresh one (job_launch)
     * or an idle pool worker, which then takes the request over (job_bind). */
    struct sched_entry sched;
    struct harden_params params; /* what its worker is (to be) hardened with */
    char profile[65];            /* the profile that resolved it ("" without a policy) */
    uint64_t egress_version;     /* that profile's egress.version then (daemon_egress_start) */
    bool preload_zygote;         /* its worker is d->zygote_preload's (daemon_profile_preloads) */
    char *frame;                 /* owned: the run frame, until it is written */
    size_t frame_len;
    struct pool *pool;      /* Not owned: the pool of an idle pool worker; NULL once bound */
    struct dlist pool_link; /* in pool->idle while idle */
    bool launched;          /* it has a worker (spawned, or bound from the pool) */
    bool from_pool;         /* its worker came from the pool */
    bool serving;           /* counted in pools.serving until its request is answered */
    bool evicted;           /* killed idle: in pools.evicting until its exit or failed fork */
    bool cancel_requested;  /* cancel: asked to stop, killed after JOB_CANCEL_GRACE_MS */
    bool heard;             /* its worker sent a frame since it got the job */
    bool channel_reset;     /* the run frame was not read: ECONNRESET, or EPIPE writing it */
    unsigned retries;       /* times it went back to the scheduler (retry_elsewhere) */

    struct egress_call *egress; /* the worker's egress request under way (egress.h), or NULL */
    unsigned egress_requests;   /* its worker's egress requests so far */
};

/* What an exec request resolved to. A job copies it, so a policy reload never changes a job
 * that is already running. */
struct job_spec {
    struct policy_limits limits; /* the profile's, tightened by the request */
    enum harden_level levels[_HARDEN_LAYER_MAX];
    bool stream;
    uint64_t arrival_ns;     /* uv_hrtime() when the request arrived */
    const char *profile;     /* Not owned: the profile's name; NULL without a policy */
    uint64_t egress_version; /* the profile's egress.version: the rules its egress may use */
};

/* Admits a job for an exec request (frame payload run_json, borrowed) into the scheduler; it
 * starts at once when a worker can be had, else waits its turn. On failure nothing was admitted
 * and the caller replies with *err: PF_E_BUSY with *ret_retry_after_ms when the queue is full. */
int job_start(struct conn *c, const cJSON *req_id, const struct job_spec *spec,
              const char *run_json, size_t run_len, uint32_t *ret_retry_after_ms,
              struct pf_error **err);

/* A job in the daemon's table (and c's, when c is not NULL: a request; else a pool worker,
 * which owes nobody a reply). frame (may be NULL) is taken over on success. */
struct job *job_create(struct daemon *d, struct conn *c, const cJSON *req_id,
                       const struct job_spec *spec, char *frame, size_t frame_len);
/* Asks the zygote for j's worker; the run frame, if any, is written at once. On failure j is
 * unchanged (not launched) and the caller ends it (job_fail). 0 once the zygote has the job,
 * even if its channel then could not be used: j has then failed (internal, its worker killed)
 * and channel_done is set, and it is released like any job once its worker is reaped. */
int job_launch(struct job *j, struct pf_error **err);
/* The idle pool worker w takes over the queued request q: q's frame goes to w's worker, its
 * connection and reply become w's, and q is released. */
void job_bind(struct job *w, struct job *q);
/* The hardening that limits and levels ask for (uid/gid 0: the zygote picks): one place for
 * ephemeral jobs, pool workers and sessions' workers alike. */
void job_harden_params(const struct policy_limits *limits, const enum harden_level *levels,
                       struct harden_params *ret);

/* zygote callbacks (job_ctx is the struct job). */
void job_on_spawned(void *job_ctx, pid_t pid, const struct pf_error *err);
void job_on_exit(void *job_ctx, const struct zygote_exit *exit_info);

/* The connection is closing: no reply is owed any more; the worker is killed. */
void job_conn_gone(struct job *j);
/* cancel: a queued job ends at once (it never starts); a running one is asked to stop (the
 * executor answers `cancelled` at its next check) and is killed after JOB_CANCEL_GRACE_MS.
 * False when the request was already answered. */
bool job_cancel(struct job *j);
/* Ends the request now with an error reply (e.g. shutting_down) and kills the worker. */
void job_fail(struct job *j, int code, const char *message, enum job_kill_reason reason);

/* After a policy reload: every queued exec (not started yet) whose profile the new policy
 * removed, or no longer lets the peer that sent it use, is answered not_found "no profile 'P'
 * for uid N", as a request naming P now would be, and never starts. Running jobs keep what
 * they started with. Returns how many were answered. */
size_t job_revoke_queued(struct daemon *d);

/* Last stage of a shutdown, after zygote_stop: the worker is gone whatever the zygote said;
 * drops the channel so the job is released without waiting for anything. */
void job_abandon(struct job *j);

/* ---- replies (job_reply.c) -------------------------------------------------------------- */

/* How a worker that sent no result ended, as an error code (enum pf_code) and a message.
 * cpu_limit_ms is the job's cpu_ms; seccomp_syscall is the name the worker reported, or "".
 * The cgroup's word comes first after seccomp: an OOM kill is memory_limit, a refused fork or
 * thread in a worker that then died is pids_limit. */
int job_outcome_from_exit(const struct zygote_exit *e, uint64_t cpu_limit_ms,
                          const char *seccomp_syscall, char *msg, size_t msg_size);

/* The exec reply for a worker's result frame, shared by ephemeral jobs and sessions: moves (not
 * copies) output, output_repr, logs, is_final_answer, error and stats out of `result`, fills
 * what the worker left out, sets error.code and stats.queue_ms. *ret_code is 0 for an ok
 * outcome, else its enum pf_code (PF_E_INTERNAL when the worker named none we know). */
cJSON *job_reply_from_result(const cJSON *req_id, cJSON *result, double queue_ms, int *ret_code);

/* Adds what the worker's cgroup measured (e, once its exit is known; CHANNEL.md) to a reply's
 * stats: peak_memory_kb and cgroup_cpu_ms, threads and children included, which the worker's
 * own rusage is not. Nothing without a cgroup. */
void job_reply_add_cgroup_stats(const struct zygote_exit *e, cJSON *stats);

/* A snippet that failed (code PF_E_ERROR or PF_E_INTERNAL) because its cgroup refused memory or
 * a process failed on that limit: the reply's outcome and error.code become memory_limit or
 * pids_limit, the message names the limit (from limits) and keeps the snippet's own error.
 * Returns the reply's code. */
int job_reply_cgroup_outcome(const struct zygote_exit *e, const struct policy_limits *limits,
                             cJSON *reply, int code);

/* A reply that ends in hardening_unavailable (code) names the profile whose levels this host
 * cannot meet: its error.message gets "profile 'NAME': " in front (profile "" or NULL: pyfenced
 * runs without a policy). The worker that failed cannot say it: a warm pool's worker serves
 * every profile with the same hardening. Any other reply is left as it is. */
void job_reply_name_profile(cJSON *reply, int code, const char *profile);

/* Brings an exec reply (ok or not) under max_frame bytes as msg_fit_exec_reply does: long
 * texts cut, else the result left out. Returns the reply's code: output_limit once the result
 * was left out. A reply that cannot fit stays as it is, for conn_send's bare too_large. */
int job_reply_fit(cJSON *reply, uint32_t max_frame, int code);

/* Sends data as the request's `output` events: one, or as many as it takes for each to fit
 * max_frame bytes, cut between characters (a worker's chunk can be larger than a small
 * max_frame_bytes once escaped). */
void job_send_output(struct conn *c, const cJSON *req_id, const char *data, uint32_t max_frame);

#endif
