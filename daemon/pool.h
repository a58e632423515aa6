/* The warm pool and the placement of jobs on workers.
 *
 * Per profile, pool_size pre-forked, pre-hardened idle workers (a profile limit: the shipped
 * default profile keeps 2). A pool worker is a job that was spawned without a request: its
 * worker hardens itself and waits for its run frame like any other, so binding a request to it
 * is writing that frame (job_bind). An ephemeral exec takes one when its hardening parameters
 * (levels, cpu_ms, memory_mb, file_size_mb, scratch_mb, open_files, pids) equal the pool's,
 * i.e. when the request did not tighten a limit applied at hardening time; else it forks a
 * fresh worker.
 * Pools refill in the background, only while no job waits for a worker and never past
 * max_workers; idle workers are recycled after POOL_IDLE_MS; a policy reload rebuilds the pools
 * whose profile changed.
 *
 * A refill is held back while an ephemeral request is being served and the pool still has an
 * idle worker: the zygote's fork and the new worker's hardening and warm-up (~1.5 ms of CPU)
 * would otherwise run on the same cores as that request's daemon, worker and client, and the
 * request's wake-ups waited for them (bench_exec, 5 ms apart, 2 cores: p99 2.8 -> 1.1 ms;
 * jobs/s under load unchanged). The refill runs once no request is being served, or
 * POOL_HOLD_MS after the latest one began, so a long snippet does not keep its pool short; an
 * empty pool refills at once.
 *
 * The scheduler's start callback lives here too (pools_start_job): a pool worker if one
 * matches, else a fresh worker if max_workers allows, else the job keeps waiting (and an idle
 * pool worker that no waiting job can use is evicted to make room). While its zygote is being
 * restarted no worker can be forked: the job keeps waiting too (skipped, SCHED_SKIP: requests
 * behind it that need the other zygote start meanwhile), and the pools do not refill. A
 * session.open waits in the same queue; its worker is always a fresh one (session_launch).
 *
 * That wait is bounded: a zygote whose restarts keep failing (its binary gone, an interpreter
 * that cannot start) would otherwise hold the requests that need it until their clients give
 * up. One waiting for a zygote that is down fails, internal, naming the zygote's loss and its
 * last restart failure, once it has waited for it (since it arrived, or since the zygote was
 * lost if that came later) the least of its own timeout_ms and POOL_ZYGOTE_WAIT_MS. Requests
 * for the other zygote, and those of live sessions, which need no new worker, are not
 * touched. */
#ifndef DAEMON_POOL_H
#define DAEMON_POOL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "dlist.h"
#include "harden.h"
#include "scheduler.h"
#include "zygote.h"

#define POOL_IDLE_MS      60000 /* an idle worker older than this is replaced */
#define POOL_SWEEP_MS     5000
#define POOL_MAX_FAILURES 3 /* workers lost before use in a row: the pool backs off */
#define POOL_BACKOFF_MS   1000
#define POOL_BACKOFF_MAX  60000
#define POOL_HOLD_MS      250 /* longest a refill waits for the requests being served */
/* Longest a request waits for a zygote that is down: two of the longest restart back-offs, so
 * at least one restart was tried (and failed) while it waited. */
#define POOL_ZYGOTE_WAIT_MS (2 * ZYGOTE_BACKOFF_MAX_MS)

struct daemon;
struct job;
struct policy;

struct pool {
    struct dlist link; /* in pools.list */
    char name[65];     /* the profile's */
    struct harden_params params;
    unsigned size;     /* idle workers wanted */
    struct dlist idle; /* struct job.pool_link: spawned, not bound to a request yet */
    unsigned n_idle;
    uint64_t hits, misses, spawned, recycled, lost;
    uint64_t lent;        /* idle workers taken by another profile's exec (same hardening) */
    uint64_t held;        /* refills held back while requests were served */
    bool holding;         /* a refill is held back now (held counted it once) */
    unsigned failures;    /* workers lost before use, in a row */
    uint64_t backoff_ms;  /* current back-off after POOL_MAX_FAILURES */
    uint64_t retry_at_ms; /* uv_now() before which it is not refilled */
};

struct pools {
    struct daemon *d; /* Not owned. */
    struct dlist list;
    uv_check_t check; /* once per loop turn while jobs wait or a pool is short: pump, refill */
    uv_timer_t sweep; /* recycles idle workers past POOL_IDLE_MS */
    bool check_active;
    unsigned evicting; /* idle workers killed to make room, not reaped (or failed to fork) yet */
    unsigned serving;  /* ephemeral requests on a worker and not answered yet */
    uv_timer_t hold;   /* active for POOL_HOLD_MS after the latest of them began */
    /* Due when the next request waiting for a zygote that is down has waited too long; the
     * queue is scanned again when it fires, or when an entry was admitted or a zygote lost
     * since the last scan (the values below). */
    uv_timer_t zygote_wait;
    uint64_t wait_admitted, wait_lost_ns[2];
};

void pools_init(struct pools *ps, struct daemon *d);
/* Closes the handles and forgets the pools (the shutdown kills the workers with every job). */
void pools_stop(struct pools *ps);

/* Makes the pools match the daemon's policy: a pool per profile with pool_size > 0; a pool
 * whose profile is gone, or whose size or hardening changed, lets its idle workers go. */
void pools_reload(struct pools *ps);

/* Pumps the scheduler and refills the pools on this loop turn. */
void pools_kick(struct pools *ps);

/* A worker could be had now for these parameters: a free slot or a matching idle one. params
 * NULL: a session's worker, for which any idle pool worker makes way. */
bool pools_startable(const struct pools *ps, const struct harden_params *params);

/* The scheduler's start callback (ctx is the daemon): an ephemeral job's entry or a session's
 * (session_launch), told apart by sched_entry.kind. */
enum sched_start pools_start_job(void *ctx, struct sched_entry *e);

/* j, an ephemeral job about to take or spawn a worker for its request, counts as served until
 * pools_request_answered(j) (its reply, or its request handed to another job); repeating
 * either is a no-op. */
void pools_request_begun(struct pools *ps, struct job *j);
void pools_request_answered(struct pools *ps, struct job *j);

/* An idle pool worker ended, wrote before it had a job, or lost its channel: it leaves its
 * pool and the pool refills; `failure` counts it towards the back-off. */
void pool_worker_lost(struct job *j, bool failure);

/* {"profile": {"size", "idle", "hits", "misses", "spawned", "held", "recycled", "lost",
 *  "lent"}, ...} */
cJSON *pools_stats_json(const struct pools *ps);
/* Idle pool workers, all pools together. */
unsigned pools_idle(const struct pools *ps);

#endif
