/* The one context of pyfenced: everything the loop's callbacks reach is here, passed as a
 * `struct daemon *`. There is no other global mutable state (pf_log's level excepted). */
#ifndef DAEMON_DAEMON_H
#define DAEMON_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "dlist.h"
#include "egress.h"
#include "latency.h"
#include "listener.h"
#include "pf_error.h"
#include "policy_limits.h"
#include "pool.h"
#include "scheduler.h"
#include "session.h"

#define DAEMON_READ_BUF_BYTES   (64 * 1024)
#define DAEMON_FLUSH_TIMEOUT_MS 2000

struct policy;
struct policy_peer;
struct zygote;

/* Refused connections, and the rate limit of their warning (conn.c, CONN_REFUSAL_LOG_MS): a
 * client that retries in a loop must not flood the journal. */
struct daemon_refusals {
    uint64_t total;       /* connections refused since start */
    uint64_t logged;      /* warnings logged about them */
    uint64_t unlogged;    /* refusals since the last warning, not logged */
    uint64_t last_log_ms; /* uv_now() of the last warning */
};

struct daemon_options {
    const char *socket_path; /* --socket; NULL: resolved by pf_socket_path_resolve. Not owned. */
    mode_t socket_mode;
    const char *zygote_path; /* Not owned. NULL: run without a zygote (tests only). */
    const char *policy_dir;  /* Not owned. NULL: the built-in profiles. */
    int log_level;
    /* Passed to the zygote's hardening (degraded runs, tests): --cgroup, --namespaces off. */
    const char *cgroup_mode; /* Not owned. NULL: auto. */
    bool namespaces_off;
    uint32_t uid_base, uid_count; /* --uid-range; 0: the zygote's default */
    bool keep_groups;             /* --keep-groups: not root, start with supplementary groups */
};

struct daemon {
    uv_loop_t *loop; /* Not owned. */
    struct daemon_options opts;
    struct policy_limits limits; /* daemon-wide limits and the default job limits */
    struct listener listener;
    struct zygote *zygote; /* owned; NULL until started (and in tests) */
    /* owned; the zygote that also imported the profiles' `preload` modules, whose jobs it
     * forks; NULL when no profile preloads (or in tests). A fat zygote makes every fork and
     * exit dearer, so the other profiles' workers come from the lean one. */
    struct zygote *zygote_preload;
    struct policy *policy;       /* owned; NULL until started: then jobs get the table's defaults */
    char *policy_error;          /* owned; why the last reload failed, NULL once one succeeds */
    int64_t policy_reload_at_ms; /* Unix time of the last load or reload attempt */
    bool policy_reload_ok;       /* and whether it succeeded */
    uint64_t egress_versions;    /* the last version given to a profile's egress rules */

    struct dlist conns; /* struct conn.link */
    unsigned n_conns;   /* accepted connections, not counting ones refused with busy */
    uint64_t next_conn_id;
    struct daemon_refusals refusals;
    struct dlist jobs; /* struct job.daemon_link: the job table */
    uint64_t next_job_id;
    unsigned jobs_running; /* jobs whose worker has not been reaped yet */
    uint64_t jobs_total;
    uint64_t jobs_by_outcome[_PF_E_MAX]; /* index 0 counts "ok", others by enum pf_code */
    struct session_table sessions;       /* session.c; a session's worker counts in jobs_running */
    struct sched sched;                  /* the queue, per-uid caps and counters (scheduler.c) */
    struct pools pools;                  /* warm pools, job placement (pool.c) */
    struct egress *egress;               /* owned (egress.h); NULL until started */
    struct latency latency;              /* request-to-reply times of recent jobs */

    uint64_t start_ns; /* uv_hrtime() at daemon_init */
    bool privileged;   /* euid 0: workers can get uids of their own */
    bool shutting_down;
    bool stopped; /* the final stage of the shutdown ran */
    uv_signal_t sig_term, sig_int, sig_hup;
    uv_timer_t flush_timer; /* bounds how long a shutdown waits for replies to drain */
    int exit_status;

    /* One read buffer for every stream: libuv calls alloc_cb and read_cb back to back. */
    bool read_buf_busy;
    char read_buf[DAEMON_READ_BUF_BYTES];
};

/* Sets up the context; limits are copied. No handle is started. */
void daemon_init(struct daemon *d, uv_loop_t *loop, const struct daemon_options *opts,
                 const struct policy_limits *limits);
/* Binds (or adopts) the socket, starts the zygote and the signal handlers. */
int daemon_start(struct daemon *d, struct pf_error **err);
/* Graceful stop (SIGTERM/SIGINT): stop accepting, fail in-flight requests with shutting_down,
 * let replies drain (bounded), stop the zygote, close every handle. The loop then ends. */
void daemon_shutdown(struct daemon *d);
/* After uv_run returned: unlinks the socket if we created it. */
void daemon_finish(struct daemon *d);

/* A worker's egress request (egress.h) for a job or session of `profile` with these limits,
 * checked against the profile's rules in the policy now in force, which must be the ones the
 * run started with (egress_version, its profile's egress.version then) and must still admit
 * its peer (NULL: gone): after a reload that changed the rules, removed the profile or took
 * the peer's access away, the run's egress is refused, never checked against other rules.
 * *count is its run's requests so far (egress_max_requests). Returns the frame to send the
 * worker at once, or NULL with *ret_call under way (NULL with neither: out of memory). */
struct daemon_egress_run {
    const char *profile; /* the name it was resolved to; NULL or "": no policy (tests) */
    uint64_t egress_version;
    const struct policy_peer *peer;
    const struct policy_limits *limits;
    unsigned *count;
};
cJSON *daemon_egress_start(struct daemon *d, const struct daemon_egress_run *run,
                           const cJSON *request, egress_done_fn done, void *ctx,
                           struct egress_call **ret_call);
/* Loads the policy again (SIGHUP): all-or-nothing, a bad file keeps the old policy, and the
 * reason stays in d->policy_error (shown by `stats`) until a reload succeeds. */
int daemon_reload_policy(struct daemon *d, struct pf_error **err);

/* True when the profile's workers come from d->zygote_preload (it has `preload`, and that
 * zygote runs); daemon_zygote() then gives the zygote to talk to (NULL once stopped). */
bool daemon_profile_preloads(const struct daemon *d, const char *profile);
static inline struct zygote *
daemon_zygote(const struct daemon *d, bool preload)
{
    return preload ? d->zygote_preload : d->zygote;
}

/* Counts a finished job under its outcome (0 = ok, else enum pf_code). */
void daemon_count_outcome(struct daemon *d, int code);
/* Called when a connection is freed: a shutdown in progress may now finish. */
void daemon_conn_gone(struct daemon *d);

/* alloc_cb for every stream the daemon reads. */
void daemon_alloc_cb(uv_handle_t *handle, size_t suggested, uv_buf_t *buf);
/* Gives back a buffer handed out by daemon_alloc_cb (call in every read_cb). */
void daemon_release_buf(struct daemon *d, const uv_buf_t *buf);

/* Milliseconds since daemon_init, with sub-millisecond precision. */
double daemon_elapsed_ms(uint64_t from_ns);

#endif
