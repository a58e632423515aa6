/* The warm pool and the placement of jobs on workers.
 *
 * Per profile, pool_size pre-forked, pre-hardened idle workers (a profile limit: the shipped
 * default profile keeps 2). A pool worker is a job that was spawned without a request: its
 * worker hardens itself and waits for its run frame like any other, so binding a request to it
 * is writing that frame (job_bind). An ephemeral exec takes one when its hardening parameters
 * (levels, cpu_ms, memory_mb, file_size_mb, open_files, pids) equal the pool's, i.e. when the
 * request did not tighten a limit applied at hardening time; else it forks a fresh worker.
 * Pools refill in the background, only while no job waits for a worker and never past
 * max_workers; idle workers are recycled after POOL_IDLE_MS; a policy reload rebuilds the pools
 * whose profile changed.
 *
 * The scheduler's start callback lives here too (pools_start_job): a pool worker if one
 * matches, else a fresh worker if max_workers allows, else the job keeps waiting (and an idle
 * pool worker that no waiting job can use is evicted to make room). A session.open waits in the
 * same queue; its worker is always a fresh one (session_launch). */
#ifndef DAEMON_POOL_H
#define DAEMON_POOL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "dlist.h"
#include "harden.h"
#include "scheduler.h"

#define POOL_IDLE_MS      60000 /* an idle worker older than this is replaced */
#define POOL_SWEEP_MS     5000
#define POOL_MAX_FAILURES 3 /* workers lost before use in a row: the pool backs off */
#define POOL_BACKOFF_MS   1000
#define POOL_BACKOFF_MAX  60000

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
    unsigned evicting; /* idle workers killed to make room, not reaped yet */
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

/* An idle pool worker ended, wrote before it had a job, or lost its channel: it leaves its
 * pool and the pool refills; `failure` counts it towards the back-off. */
void pool_worker_lost(struct job *j, bool failure);

/* {"profile": {"size", "idle", "hits", "misses", "spawned", "recycled", "lost"}, ...} */
cJSON *pools_stats_json(const struct pools *ps);
/* Idle pool workers, all pools together. */
unsigned pools_idle(const struct pools *ps);

#endif
