/* One client connection: framing in, replies and events out, per-connection limits
 * (in-flight requests, queued reply bytes, idle time), the peer's credentials, and the per-uid
 * bounds it is admitted under (max_connections_per_uid; max_bytes_per_uid, which its queued
 * replies and the frame it is receiving count towards).
 *
 * Back-pressure: once more than CONN_PAUSE_BYTES of a connection's replies are unsent (its peer
 * does not read them), it is not read either, so it sends no new request, until its writes
 * drain below that; what was read but not parsed yet waits in `held`. A peer that keeps not
 * reading while replies of requests already taken pile up is still disconnected past
 * max_outbuf_bytes, or with more than CONN_PAUSE_BYTES unsent while its uid is past its share of
 * memory (sched_bytes_over): so a uid's unread replies, over however many connections, stay
 * near max_bytes_per_uid. Its unsent bytes stop counting for the uid when it closes.
 *
 * conn.c is a connection's life (accept, admission, reading and dispatching requests,
 * back-pressure, idleness, closing); conn_send.c its output side (conn_send, the write callback,
 * the slow-reader closes above). */
#ifndef DAEMON_CONN_H
#define DAEMON_CONN_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "dlist.h"
#include "frame.h"
#include "pf_error.h"
#include "profile.h"

/* Unsent reply bytes past which a connection is not read (back-pressure, above). The reply that
 * crosses it, and the replies and events of requests already taken, still go out (up to
 * max_outbuf_bytes in all). */
#define CONN_PAUSE_BYTES (256 * 1024)
/* The "refusing connection" warning is logged at most once per this many ms; the next line
 * says how many refusals went unlogged meanwhile. */
#define CONN_REFUSAL_LOG_MS 1000

struct daemon;

struct conn {
    uv_pipe_t pipe; /* first: libuv hands it back, container_of recovers the conn */
    uv_timer_t idle;
    uv_shutdown_t shutdown_req;
    struct daemon *d;  /* Not owned. */
    struct dlist link; /* in d->conns */
    struct dlist jobs; /* struct job.conn_link: this connection's jobs */
    struct frame_decoder dec;
    uint64_t serial; /* for logs */
    uid_t uid;       /* SO_PEERCRED, read once at accept */
    gid_t gid;
    pid_t pid;
    gid_t *groups; /* owned: supplementary groups (SO_PEERGROUPS), read once at accept */
    size_t n_groups;
    unsigned inflight;    /* requests without a reply yet: the length of inflight_ids */
    cJSON **inflight_ids; /* owned copies of their ids, each unique on this connection */
    unsigned inflight_cap;
    size_t outbuf_bytes; /* bytes in writes libuv has not completed yet, charged to uid in
                          * d->sched (sched_bytes_charge) until they are */
    int open_handles;    /* the conn is freed when the last close callback ran */
    bool counted;        /* counted in d->n_conns (refused connections are not) */
    bool closing;        /* uv_close requested: nothing more is sent */
    bool draining;       /* reading stopped; closes once pending writes are flushed */
    bool read_eof;       /* the peer half-closed (shutdown(SHUT_WR)): no more requests; the
                          * connection stays open for the replies still owed, then drains */
    bool paused;         /* not read: over CONN_PAUSE_BYTES unsent (back-pressure, above) */
    bool pausing;        /* the frame just handled took it over: stop feeding the decoder */
    char *held;          /* owned: input read before the pause and not fed yet, or NULL */
    size_t held_len, held_off;
    uint64_t partial_bytes; /* the frame being received (dec's payload): charged to uid */
};

/* The listener's connection callback. */
void conn_on_connection(uv_stream_t *server, int status);

/* The peer's credentials, as the policy matches them (valid while c is). */
struct policy_peer conn_peer(const struct conn *c);
/* Serves an already-connected stream socket (tests, and anything that is not accept()). */
int conn_open_fd(struct daemon *d, int fd, struct conn **ret, struct pf_error **err);

/* Queues one message (reply or event). Returns -1 when the connection is closing or was
 * dropped because of it (slow reader); the caller then forgets the connection. */
int conn_send(struct conn *c, const cJSON *msg);
/* Sends the reply that ends a request that was answered later (exec), and counts it done. */
void conn_finish_request(struct conn *c, const cJSON *reply);
/* Sends {"id", "ok": false, "error": {code, message}}. */
void conn_send_error(struct conn *c, const cJSON *id, int code, const char *message);

/* Stops reading and closes once the queued replies are written (or the flush bound passes).
 * A half-closed connection (read_eof) drains by itself once its last request is answered. */
void conn_drain(struct conn *c);
/* Closes now: queued writes are cancelled; the conn's jobs are cancelled without reply. */
void conn_close(struct conn *c);

#endif
