/* Sessions: one worker kept between snippets, like a notebook kernel. A session belongs to the
 * peer uid that opened it; any other uid is answered exactly as for an id that does not exist.
 * It ends when it is closed, when its connection closes (unless detached), after
 * session_idle_timeout_ms without a request, after session_lifetime_ms in any case, and with its
 * worker: a session whose worker died answers its next request (or every request waiting its
 * turn) with session_lost and the cause, then is gone. Its worker is never reused for anything
 * else.
 *
 * Sessions together hold at most sched_session_capacity(max_workers) workers: the rest are
 * kept for ephemeral execs, served round-robin across uids. One uid's sessions hold at most
 * max_session_workers_per_uid of them (by default half), so that other uids find room. Within that,
 * a session.open that cannot have a worker at once waits in the scheduler's queue like an ephemeral
 * exec (scheduler.h; pools_start_job calls session_launch). Requests to one session run one at a
 * time on its worker; later ones wait in the session's own queue, in arrival order, at most the
 * session's max_pending_per_session.
 *
 * session.c keeps the table (ids, ownership, expiry); session_worker.c runs the worker's life
 * and session_channel.c its frames (CHANNEL.md, "Session worker"); session_queue.c keeps the
 * requests that wait their turn; op_session.c serves the session.* ops and exec with a session. See
 * PROTOCOL.md, "Sessions". */
#ifndef DAEMON_SESSION_H
#define DAEMON_SESSION_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "dlist.h"
#include "frame.h"
#include "job.h"
#include "load.h"
#include "pf_error.h"
#include "policy_limits.h"
#include "zygote.h"

#define SESSION_ID_BYTES 16 /* 128 random bits from getrandom */
#define SESSION_ID_LEN   (SESSION_ID_BYTES * 2)

struct conn;
struct daemon;
struct session;

enum session_state {
    SESSION_STARTING, /* waiting for a worker, or its worker is starting; session.open is
                       * answered when it is ready */
    SESSION_IDLE,
    SESSION_BUSY,  /* one request (exec or get) is with the worker; later ones wait (pending) */
    SESSION_LOST,  /* the worker died: the next request learns why, then the session is gone */
    SESSION_ENDED, /* out of the table; waits for its worker and handles to go, then freed */
    _SESSION_STATE_MAX,
    _SESSION_STATE_INVALID = -1,
};

/* Why a session ends (chooses the answer of a request still in flight). */
enum session_end {
    SESSION_END_CLOSE,    /* session.close */
    SESSION_END_CONN,     /* its (not detached) connection closed */
    SESSION_END_IDLE,     /* session_idle_timeout_ms */
    SESSION_END_LIFETIME, /* session_lifetime_ms */
    SESSION_END_LOST,     /* its worker died and a request has been told */
    SESSION_END_FAILED,   /* its worker never became ready (session.open failed) */
    SESSION_END_SHUTDOWN, /* pyfenced is stopping */
    _SESSION_END_MAX,
    _SESSION_END_INVALID = -1,
};

/* Called when a session's idle or lifetime timer fires; it must end the session. */
typedef void (*session_expire_cb)(struct session *s, enum session_end why);

struct session_table {
    uv_loop_t *loop;     /* Not owned. */
    struct dlist all;    /* struct session.link: every session not ended yet */
    struct dlist ended;  /* struct session.link: ended, waiting for their worker and handles */
    size_t n;            /* in `all` */
    struct sched *sched; /* Not owned: each session counts for its uid there while in `all` */
    session_expire_cb expire_cb;
    unsigned pass; /* session_conn_gone's walks (session.pass) */
};

enum session_req_kind {
    SESSION_REQ_NONE,
    SESSION_REQ_OPEN,
    SESSION_REQ_EXEC,
    SESSION_REQ_GET,
    _SESSION_REQ_MAX,
    _SESSION_REQ_INVALID = -1,
};

/* A request to a session: the one its worker is serving (session.req), or one waiting its
 * turn (session.pending, allocated). */
struct session_req {
    enum session_req_kind kind;
    struct conn *conn; /* Not owned; NULL once the reply is sent or its connection is gone. */
    cJSON *id;         /* owned copy of the request's id */
    cJSON *names;      /* get: owned copy of the names asked for */
    cJSON *frame;      /* owned: what its worker is to be sent, until it is */
    struct dlist link; /* in session.pending while it waits */
    bool stream;
    uint64_t arrival_ns, start_ns; /* uv_hrtime(); start_ns 0 until it goes to the worker */
    uint64_t output_bytes;
    bool cancel_requested; /* its worker was asked to stop it (session_cancel_running) */
    uint64_t bytes; /* while it waits in session.pending: what frame and names take, charged to
                     * the session's uid (max_bytes_per_uid) */
};

struct session {
    enum worker_ctx_kind ctx_kind; /* first: WORKER_CTX_SESSION (job.h) */
    struct session_table *table;   /* Not owned. */
    struct dlist link;             /* in table->all, then table->ended */
    char id[SESSION_ID_LEN + 1];
    uid_t uid;
    /* The opener's groups, kept so that a policy reload can ask again whether the profile
     * still admits it (session_revoke) when no connection of its is open. */
    gid_t gid;
    gid_t *groups; /* owned */
    size_t n_groups;
    char profile[64 + 1];
    uint64_t egress_version;     /* its profile's egress.version at open (daemon_egress_start) */
    struct policy_limits limits; /* the profile's, tightened by session.open; its
                                  * max_pending_per_session bounds `pending` */
    struct conn *owner;          /* Not owned: the connection it ends with; NULL when detached. */
    bool detached;
    uint64_t created_ms, last_used_ms; /* Unix time, for session.list */
    uint64_t created_at, last_active;  /* uv_now(): lifetime and idle time count from these */
    uint64_t execs;
    enum session_state state;
    enum session_end end_reason;
    uv_timer_t expiry; /* idle or lifetime, whichever comes first */

    /* The worker (session_worker.c). */
    struct daemon *d;    /* Not owned. */
    uint64_t job_id;     /* the zygote's name for the worker */
    int runs;            /* run frames sent to the worker: the last one's number (CHANNEL.md) */
    bool preload_zygote; /* its worker is d->zygote_preload's (daemon_profile_preloads) */
    pid_t pid;
    uv_pipe_t channel;
    uv_timer_t deadline; /* the wall-clock backstop of the request in flight */
    struct frame_decoder dec;
    bool worker_handles; /* channel and deadline were initialised (session_start) */
    bool channel_open;   /* the channel handle is not closing */
    bool awaiting_exit;  /* the zygote owes us this worker's exit (or its spawn failure) */
    bool exit_seen;      /* exit_info is valid */
    bool releasing;
    struct zygote_exit exit_info;
    char seccomp_syscall[64];
    char *lost_cause;       /* owned: why the worker is gone, for the next request */
    bool cause_provisional; /* lost at the channel's end; the exit will say why */
    struct session_req req;
    struct egress_call *egress; /* the worker's egress request under way (egress.h), or NULL */
    unsigned egress_requests;   /* its worker's egress requests in the request being served */
    struct dlist pending;       /* struct session_req.link: waiting for req to end, oldest first */
    unsigned n_pending;
    double avg_req_ms; /* moving average of how long a request holds the worker (retry_after_ms) */
    struct sched_entry sched;    /* session.open waiting for a worker, until it is answered */
    struct harden_params params; /* what its worker is hardened with */
    int open_handles;            /* freed when the last one has closed */
    unsigned pass;               /* the table's last walk that visited it */
};

/* ---- the table (session.c) ------------------------------------------------------------ */

/* sched counts each uid's sessions (the uid records of stats and the per-uid bound). */
void session_table_init(struct session_table *t, uv_loop_t *loop, struct sched *sched,
                        session_expire_cb expire_cb);

/* A new session of peer->uid in the table, with a fresh random id, in state STARTING, its timers
 * running (peer's groups are copied). Fails with busy past max_sessions_per_uid (limits is the
 * session's, and its max_sessions_per_uid is the bound), when the uid's sessions already hold
 * max_session_workers_per_uid workers (the scheduler's max_session_workers_uid), or when the
 * sessions of all uids already hold as many workers as sched_session_capacity allows. The caller
 * gives it a worker, or ends it. */
struct session *session_new(struct session_table *t, const struct policy_peer *peer,
                            const char *profile, const struct policy_limits *limits,
                            struct pf_error **err);

/* The session with this id if uid owns it. Anything else — an unknown id, a malformed one, or
 * one of another uid — is PF_E_NOT_FOUND "no session 'ID'", word for word the same. */
struct session *session_find(struct session_table *t, const char *id, uid_t uid,
                             struct pf_error **err);

/* The sessions of uid not ended yet. */
size_t session_count_uid(const struct session_table *t, uid_t uid);
/* The sessions, of every uid, that hold a worker or wait for one (all but the lost). */
size_t session_count_holding(const struct session_table *t);
/* Those of them that uid opened (what max_session_workers_per_uid bounds). */
size_t session_count_holding_uid(const struct session_table *t, uid_t uid);

/* A request starts (the idle timer stops) or ends (it restarts from now). */
void session_touch_busy(struct session *s);
void session_touch_idle(struct session *s);

/* Takes s out of the table (ENDED): nobody can find it any more. Idempotent. */
void session_unlink(struct session *s, enum session_end why);
/* Frees an ENDED session whose channel is closed and whose worker is gone: its timers close,
 * and the memory goes in the last close callback. Does nothing before that; idempotent. */
void session_maybe_release(struct session *s);
/* The close callback of every handle of a session (handle->data is the session). */
void session_on_handle_closed(uv_handle_t *handle);

/* [{"id", "profile", "created", "last_used", "execs", "detached", "state", "pending"}] of uid's
 * sessions. */
cJSON *session_list_json(const struct session_table *t, uid_t uid);

const char *session_state_name(enum session_state state);

/* ---- the worker (session_worker.c) ------------------------------------------------------ */

/* Admits the open request (id, conn) of s into the scheduler with its `session` frame (fields:
 * borrowed, the executor's fields ops_resolve_job resolved; variables: borrowed, may be NULL):
 * its worker is forked at once if one can be had, else when its turn comes (session_launch).
 * The request is answered when the worker says it is ready, or fails. On error nothing was
 * admitted and s is unchanged: PF_E_BUSY with *ret_retry_after_ms when the queue is full. */
int session_start(struct session *s, struct conn *c, const cJSON *req_id,
                  const enum harden_level *levels, const cJSON *fields, const cJSON *variables,
                  uint32_t *ret_retry_after_ms, struct pf_error **err);
/* The scheduler's turn of a waiting session.open (through pools_start_job, a slot being free):
 * forks the worker and writes the `session` frame. SCHED_FAILED: the open was answered and the
 * session ended. */
enum sched_start session_launch(struct session *s);

/* Queues one exec (code, variables may be NULL) or get (names) on s; it goes to the worker at
 * once when the worker is free, else after the requests before it. The reply comes later.
 * PF_E_BUSY with *ret_retry_after_ms when it would wait and max_pending_per_session (the
 * session's limit) requests already do. */
int session_exec(struct session *s, struct conn *c, const cJSON *req_id, const char *code,
                 const cJSON *variables, bool stream, uint32_t *ret_retry_after_ms,
                 struct pf_error **err);
int session_get(struct session *s, struct conn *c, const cJSON *req_id, const cJSON *names,
                uint32_t *ret_retry_after_ms, struct pf_error **err);
/* The worker is free (IDLE): the oldest waiting request goes to it. */
void session_next(struct session *s);

/* cancel of the exec s runs: its worker is asked to stop it (the executor ends it with
 * `cancelled` at its next check, and the session keeps its state); one still running
 * JOB_CANCEL_GRACE_MS later has its worker killed, and the session is lost. False when s runs no
 * exec (a session.get runs no snippet: it ends by itself). */
bool session_cancel_running(struct session *s);
/* cancel: a waiting request r of s is taken out and answered `cancelled`; the session goes on. */
void session_cancel_pending(struct session *s, struct session_req *r);
/* A session.open not answered yet fails with code and message (it leaves the scheduler's
 * queue, or its starting worker is killed), and the session ends: the one path of launch
 * failures, cancel, and a wait for a zygote that does not come back (pool.c). */
void session_open_fail(struct session *s, int code, const char *message);
/* cancel of a session.open not answered yet: it is answered `cancelled` and the session ends
 * (it leaves the scheduler's queue, or its starting worker is killed). */
void session_cancel_open(struct session *s);

/* Ends s: out of the table, the request in flight and those waiting are answered according to
 * why, the worker is killed, and s is freed once its worker is gone. */
void session_end(struct session *s, enum session_end why);

/* zygote callbacks, reached through job_on_spawned/job_on_exit (ctx_kind). */
void session_on_spawned(struct session *s, pid_t pid, const struct pf_error *err);
void session_on_exit(struct session *s, const struct zygote_exit *exit_info);

/* The connection c is closing: its requests are no longer owed a reply (those waiting are
 * dropped, an exec running on a session that goes on is cancelled: session_cancel_running),
 * and the sessions it owns (not detached), or whose open it sent and was not answered yet,
 * end. (session.c) */
void session_conn_gone(struct session_table *t, struct conn *c);

/* ---- requests waiting their turn (session_queue.c) -------------------------------------- */

/* The memory a request's JSON tree takes: every node and its strings (what max_bytes_per_uid
 * counts for a frame held as a tree). NULL takes 0. */
uint64_t session_frame_bytes(const cJSON *item);
/* Adds a request to s's queue (frame and names taken over; names may be NULL). A request that
 * would wait is refused busy, with *ret_retry_after_ms, past max_pending_per_session or when
 * its bytes would take the session's uid past max_bytes_per_uid; while it waits they are
 * charged to the uid. */
int session_queue_add(struct session *s, enum session_req_kind kind, struct conn *c,
                      const cJSON *req_id, cJSON *frame, cJSON *names, bool stream,
                      uint32_t *ret_retry_after_ms, struct pf_error **err);
/* The oldest waiting request, taken out of the queue (the caller owns it), or NULL. */
struct session_req *session_queue_pop(struct session *s);
/* Frees a request (NULL is fine); returns NULL. */
struct session_req *session_req_free(struct session_req *r);
/* The failure reply of r: an exec's has the fields of every exec reply (outcome, logs, stats);
 * `lost` adds "session_lost": true. NULL when out of memory. */
cJSON *session_req_failure(const struct session_req *r, int code, const char *message, bool lost);
/* Answers every waiting request with code and message, in arrival order; returns how many
 * there were. */
unsigned session_queue_fail(struct session *s, int code, const char *message);
/* Drops the waiting requests of connection c, without replies (it is gone). */
void session_queue_conn_gone(struct session *s, struct conn *c);
/* Folds the time a request held the worker into avg_req_ms. */
void session_queue_note_held(struct session *s, double held_ms);

/* Shutdown, first stage: every session ends (a request in flight gets shutting_down). */
void session_shutdown_all(struct session_table *t);
/* Last stage, after zygote_stop: workers are gone whatever the zygote said. */
void session_abandon_all(struct session_table *t);
/* After a policy reload: a session whose profile is gone, or no longer admits the peer that
 * opened it, is lost ("told once, then gone": its worker is killed now, its requests and the
 * next one answer session_lost naming the profile); one still opening is answered not_found,
 * as a new open would be. Returns how many sessions were ended. */
size_t session_revoke(struct session_table *t, const struct policy *policy);

#endif
