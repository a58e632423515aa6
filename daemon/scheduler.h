/* The scheduler (named scheduler.h, not sched.h: daemon/ is on the include path and would
 * shadow <sched.h>): admission of jobs into a bounded queue, per-uid caps, and round-robin across
 * uids so that one peer flooding the daemon cannot starve another. Pure bookkeeping: no libuv,
 * no logging (but pf_fails_assert's, for a bug of ours), no worker. The daemon says whether a job
 * could start at once when it submits it, and supplies the `start` callback that gives a job a
 * worker (pool.c); sched_pump() calls it in round-robin order until it answers SCHED_NO_SLOT.
 *
 * A uid's record lives while the uid has connections, sessions, queued or running jobs, or
 * bytes held for it; it carries the per-uid counters shown by `stats` and the per-uid bounds:
 * max_connections_per_uid (sched_peer_attach) and max_bytes_per_uid, the memory the daemon
 * holds for the uid. Those bytes are what its queued entries' frames take (charged by
 * sched_submit, released when the entry leaves the queue: started or dropped) plus what other
 * modules charge and release themselves (sched_bytes_charge): the replies queued on its
 * connections and the frame each of them is receiving (conn.c), and the requests waiting for
 * their session's worker (session_queue.c). Each charge has exactly one release; at rest
 * every count is back to zero. max_bytes bounds the same bytes of all uids together. */
#ifndef DAEMON_SCHED_H
#define DAEMON_SCHED_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "dlist.h"
#include "pf_error.h"
#include "policy_limits.h"

#define SCHED_HASH_BUCKETS 64
/* Bounds of retry_after_ms: a client must not spin, nor wait for minutes. */
#define SCHED_RETRY_MIN_MS 5
#define SCHED_RETRY_MAX_MS 60000
/* ms rounded up into [SCHED_RETRY_MIN_MS, SCHED_RETRY_MAX_MS]: a busy reply's retry_after_ms. */
uint32_t sched_retry_ms(double ms);

struct sched;

struct sched_uid {
    uid_t uid;
    struct dlist hash_link;
    struct dlist ready_link; /* in sched.ready while it has queued jobs and is under its cap */
    struct dlist queue;      /* struct sched_entry.link, oldest first */
    unsigned queued, running;
    unsigned conns;    /* connections of this uid (sched_peer_attach) */
    uint64_t bytes;    /* held for this uid: see the top of this file */
    unsigned sessions; /* sessions of this uid not ended yet (sched_session_attach) */
    uint64_t jobs;     /* jobs admitted since the record was made */
    uint64_t skipped;  /* the sched_pump in which every queued entry was skipped (sched.pumps) */
    bool in_ready;
};

enum sched_state {
    SCHED_NONE, /* not in the scheduler (a pool worker, or not submitted yet) */
    SCHED_QUEUED,
    SCHED_RUNNING,
    _SCHED_STATE_MAX,
    _SCHED_STATE_INVALID = -1,
};

/* Embedded in what it schedules: an ephemeral job, or a session waiting for its worker. */
struct sched_entry {
    struct dlist link;   /* in u->queue while queued */
    struct sched_uid *u; /* Not owned; NULL while SCHED_NONE. */
    enum sched_state state;
    int kind; /* the start callback's: what embeds the entry (enum worker_ctx_kind, job.h); the
               * scheduler never reads it */
    uint64_t bytes; /* its frame, charged to its uid while it is queued (sched_submit) */
};

enum sched_start {
    SCHED_STARTED, /* the entry runs now */
    SCHED_NO_SLOT, /* no worker can be had now: the entry stays first in its queue */
    SCHED_FAILED,  /* it could not start and has been answered; it left the scheduler */
    /* it cannot start now for a reason of its own that other entries need not share (the
     * zygote that forks its kind of worker is down): it keeps its place, and the pump goes on
     * with the uid's later entries and the other uids' */
    SCHED_SKIP,
    _SCHED_START_MAX,
    _SCHED_START_INVALID = -1,
};

/* Gives e a worker. On SCHED_STARTED or SCHED_FAILED, e is already out of the queue (its state
 * is SCHED_RUNNING, or SCHED_NONE after sched_done on failure) and may have been moved or
 * freed by the callback. On SCHED_NO_SLOT and SCHED_SKIP it must not have touched the
 * scheduler: e goes back where it was. */
typedef enum sched_start (*sched_start_cb)(void *ctx, struct sched_entry *e);

struct sched {
    sched_start_cb start_cb;
    void *ctx;                        /* Not owned. */
    unsigned max_queued;              /* all uids together */
    unsigned max_queued_uid;          /* per uid */
    unsigned max_running_uid;         /* per uid */
    unsigned max_workers;             /* for retry_after_ms */
    unsigned max_conns_uid;           /* per uid: max_connections_per_uid */
    unsigned max_session_workers_uid; /* per uid: max_session_workers_per_uid (session.c) */
    uint64_t max_bytes_uid;           /* per uid: max_bytes_per_uid */
    uint64_t max_bytes;               /* all uids together: max_bytes */
    unsigned queued, running;
    uint64_t admitted;      /* entries ever admitted (sched_submit) */
    uint64_t bytes;         /* held for all uids together (the sum of their records' bytes) */
    unsigned n_uids, peers; /* records; uids with at least one connection */
    struct dlist ready;     /* struct sched_uid.ready_link: the round-robin ring */
    struct sched_uid *last; /* Not owned: the uid served last (NULL once its record is gone) */
    struct dlist buckets[SCHED_HASH_BUCKETS];
    double avg_run_ms; /* moving average of the time a job holds a worker */
    uint64_t pumps;    /* sched_pump calls: a uid skipped in the current one has skipped == it */
    bool pumping;
};

/* max_workers (0: derived from cores and memory), max_jobs_per_uid (0: max_workers) and
 * max_session_workers_per_uid (0: sched_session_share) become concrete values; the last two are
 * lowered to max_workers and sched_session_capacity, which bound them anyway. */
void sched_derive_limits(struct policy_limits *limits);
/* The derivation on its own: clamp(4 x cores, 4, 2 x memory GiB). */
unsigned sched_default_workers(unsigned cores, uint64_t memory_bytes);
/* How many of max_workers workers sessions may hold together: all but a quarter (at least one)
 * kept for ephemeral jobs; a lone worker goes to whoever asks first. */
unsigned sched_session_capacity(unsigned max_workers);
/* The default of max_session_workers_per_uid: half of sched_session_capacity, rounded up, at
 * least 1, so that one uid's sessions leave room for another uid's (but with a lone session
 * worker, which goes to whoever asks first). */
unsigned sched_session_share(unsigned max_workers);

void sched_init(struct sched *s, const struct policy_limits *limits, sched_start_cb start_cb,
                void *ctx);
/* Frees the uid records. Every entry must have left (the daemon released its jobs). */
void sched_finish(struct sched *s);

/* A connection of uid opened or closed (peers, per-uid counters). On attach: -EBUSY when uid
 * already has max_connections_per_uid connections (*ret_conns, if not NULL, says how many),
 * -ENOMEM; the connection is then not counted. */
int sched_peer_attach(struct sched *s, uid_t uid, unsigned *ret_conns);
void sched_peer_detach(struct sched *s, uid_t uid);
/* A session of uid opened or ended: the uid's record, with its counters, stays while it has
 * one (a detached session outlives its connections). -ENOMEM on attach. */
int sched_session_attach(struct sched *s, uid_t uid);
void sched_session_detach(struct sched *s, uid_t uid);
/* The record of uid, or NULL. */
struct sched_uid *sched_uid_find(struct sched *s, uid_t uid);

/* n bytes more (charge) or fewer (release) held for uid: a release must match an earlier
 * successful charge of the same uid. -ENOMEM on charge (nothing was charged). */
int sched_bytes_charge(struct sched *s, uid_t uid, uint64_t n);
void sched_bytes_release(struct sched *s, uid_t uid, uint64_t n);
/* The bytes held for uid (0 without a record). */
uint64_t sched_bytes_of(struct sched *s, uid_t uid);
/* The bound holding n more bytes for uid would pass: "max_bytes_per_uid" (uid's own),
 * "max_bytes" (all uids together), or NULL within both. */
const char *sched_bytes_bound(struct sched *s, uid_t uid, uint64_t n);
/* Whether uid's unread replies must give way (conn_send.c closes its connections that do not
 * read them): "max_bytes_per_uid" while uid holds more than that; "max_bytes" while all uids
 * together hold more than max_bytes and uid more than an even part of it (max_bytes over the uids
 * with a record: one of them always does), so that the uids holding the most give way, not
 * whichever uid's reply comes next; else NULL. */
const char *sched_bytes_over(struct sched *s, uid_t uid);
/* When a client refused by `why` (a bound sched_submit or sched_bytes_bound names) should try
 * again: once about one queued job of its own (per-uid bounds, with every ready uid taking its
 * turn) or of anyone (max_queued, max_bytes) has left the queue. */
uint32_t sched_retry_after(const struct sched *s, const char *why);

/* Admits e for uid; `bytes`, what its frame takes, is charged to uid while e is queued.
 * `startable`: a worker could be had at once (a free slot or a matching idle pool worker). A
 * job that would start at the next pump is always admitted; any other waits in the queue
 * within max_queued, max_queued_per_uid, max_bytes_per_uid and max_bytes, or is refused:
 * -EBUSY with *ret_retry_after_ms (when to try again) and *ret_why naming the bound. -ENOMEM.
 * The caller then calls sched_pump(). */
int sched_submit(struct sched *s, struct sched_entry *e, uid_t uid, bool startable, uint64_t bytes,
                 uint32_t *ret_retry_after_ms, const char **ret_why);
/* The busy error of a refused submit (why and retry_after_ms from sched_submit): PF_E_BUSY
 * naming the bound, and for max_bytes_per_uid and max_bytes what is held. Returns -1. */
int sched_busy_error(struct sched *s, uid_t uid, const char *why, uint32_t retry_after_ms,
                     struct pf_error **err);
/* Starts queued entries, round-robin across uids, until the callback answers SCHED_NO_SLOT or
 * nothing is ready. Each uid's turn goes to its oldest entry that the callback does not skip:
 * an entry skipped (SCHED_SKIP) holds back neither the entries behind it in its uid's queue
 * nor the other uids (their requests are independent of its cause), and a uid all of whose
 * entries are skipped keeps its place in the ring, so it is served first once they can start.
 * Re-entrant calls (from the callback) return at once. */
void sched_pump(struct sched *s);
/* e leaves the scheduler: a queued one is dropped (it never starts), a running one is done
 * after holding its worker for held_ms (ignored when negative). Harmless for SCHED_NONE. */
void sched_done(struct sched *s, struct sched_entry *e, double held_ms);

/* Tells whether the queued entry e is the one sought (sched_find_queued). */
typedef bool (*sched_match_cb)(void *ctx, struct sched_entry *e);
/* The first queued entry (uid by uid, each uid's oldest first) that match accepts, or NULL.
 * Looks only: a caller that acts on the entry, which may take others out of the queue with it
 * (a reply that closes a connection), asks again from the start. */
struct sched_entry *sched_find_queued(struct sched *s, sched_match_cb match, void *ctx);

/* {"queued", "running", "max_queued", "max_queued_per_uid", "max_jobs_per_uid",
 *  "max_connections_per_uid", "max_bytes_per_uid", "max_bytes", "bytes", "peers", "avg_job_ms",
 *  "uids": [{"uid", "conns", "sessions", "jobs", "queued", "running", "bytes"}]} */
cJSON *sched_stats_json(const struct sched *s);

#endif
