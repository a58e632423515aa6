#include "conn.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "conn_internal.h"
#include "daemon.h"
#include "job.h"
#include "msg.h"
#include "ops.h"
#include "pf_cleanup.h"
#include "pf_log.h"

/* How often a half-closed connection with requests in flight is checked for a full close. */
#define CONN_HANGUP_CHECK_MS 100

static void release_partial(struct conn *c);

static void
on_handle_closed(uv_handle_t *handle)
{
    struct conn *c = handle->data;
    if (--c->open_handles > 0)
        return;
    struct daemon *d = c->d;
    release_partial(c);
    dlist_remove(&c->link);
    frame_decoder_finish(&c->dec);
    for (unsigned i = 0; i < c->inflight; i++)
        cJSON_Delete(c->inflight_ids[i]);
    free(c->inflight_ids);
    free(c->groups);
    free(c->held);
    pf_log_debug(CONN, "connection #%llu closed", (unsigned long long) c->serial);
    free(c);
    daemon_conn_gone(d);
}

void
conn_close(struct conn *c)
{
    if (c->closing)
        return;
    c->closing = true;
    /* Its unsent replies go with it (libuv cancels their writes in this loop iteration's close
     * phase): they stop counting for the uid now, so that closing a slow reader makes room at
     * once for the next reply's check (conn_send), and on_write does not release them again. */
    if (c->outbuf_bytes)
        sched_bytes_release(&c->d->sched, c->uid, c->outbuf_bytes);
    if (c->counted) {
        c->d->n_conns--;
        c->counted = false;
        sched_peer_detach(&c->d->sched, c->uid);
    }
    /* Nobody is left to read the replies of this connection's jobs: kill their workers. */
    struct dlist *pos, *tmp;
    DLIST_FOREACH_SAFE(pos, tmp, &c->jobs) {
        job_conn_gone(pf_container_of(pos, struct job, conn_link));
    }
    session_conn_gone(&c->d->sessions, c);
    uv_read_stop((uv_stream_t *) &c->pipe);
    uv_close((uv_handle_t *) &c->pipe, on_handle_closed);
    uv_close((uv_handle_t *) &c->idle, on_handle_closed);
}

/* True when the peer closed its socket altogether (or shut down its reading side): nobody will
 * read what we write. After shutdown(SHUT_WR) alone the socket is only at end-of-file. */
static bool
peer_hung_up(struct conn *c)
{
    uv_os_fd_t fd;
    if (uv_fileno((uv_handle_t *) &c->pipe, &fd) < 0)
        return true;
    struct pollfd p = {.fd = fd, .events = 0};
    int r = poll(&p, 1, 0);
    if (r < 0) {
        pf_log_warning(CONN, "connection #%llu: poll: %s, taking it as closed",
                       (unsigned long long) c->serial, strerror(errno));
        return true;
    }
    return r > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

static void
on_idle(uv_timer_t *timer)
{
    struct conn *c = timer->data;
    if (c->draining) {
        pf_log_debug(CONN, "connection #%llu: replies not read in time, closing",
                     (unsigned long long) c->serial);
        conn_close(c);
        return;
    }
    if (c->read_eof) {
        /* Half-closed with requests in flight (it drains once they are answered): the peer
         * may still close altogether, and then its jobs are cancelled as for any close. */
        if (peer_hung_up(c)) {
            pf_log_debug(CONN, "connection #%llu: peer closed with %u requests in flight",
                         (unsigned long long) c->serial, c->inflight);
            conn_close(c);
            return;
        }
        conn_restart_idle(c, 0);
        return;
    }
    if (c->inflight > 0) {
        conn_restart_idle(c, 0);
        return;
    }
    pf_log_debug(CONN, "connection #%llu idle for %lld ms, closing", (unsigned long long) c->serial,
                 (long long) c->d->limits.v[POLICY_LIMIT_CONN_IDLE_TIMEOUT_MS]);
    conn_close(c);
}

void
conn_restart_idle(struct conn *c, uint64_t timeout_ms)
{
    if (c->closing)
        return;
    if (c->read_eof)
        timeout_ms = CONN_HANGUP_CHECK_MS; /* no idleness left to time: see on_idle */
    else if (timeout_ms == 0)
        timeout_ms = (uint64_t) c->d->limits.v[POLICY_LIMIT_CONN_IDLE_TIMEOUT_MS];
    uv_timer_start(&c->idle, on_idle, timeout_ms, 0);
}

static void
on_shutdown(uv_shutdown_t *req, int status)
{
    struct conn *c = req->data;
    conn_close(c);
}

void
conn_drain(struct conn *c)
{
    if (c->closing || c->draining)
        return;
    c->draining = true;
    uv_read_stop((uv_stream_t *) &c->pipe);
    c->shutdown_req.data = c;
    /* uv_shutdown waits for the queued writes; uv_close would cancel them. */
    if (uv_shutdown(&c->shutdown_req, (uv_stream_t *) &c->pipe, on_shutdown) < 0) {
        conn_close(c);
        return;
    }
    uv_timer_start(&c->idle, on_idle, DAEMON_FLUSH_TIMEOUT_MS, 0);
}

/* Ids are compared exactly (cJSON_Compare treats close large numbers as equal); a string id
 * never equals a number id. */
static bool
same_id(const cJSON *a, const cJSON *b)
{
    if (cJSON_IsString(a) && cJSON_IsString(b))
        return strcmp(a->valuestring, b->valuestring) == 0;
    return cJSON_IsNumber(a) && cJSON_IsNumber(b) && a->valuedouble == b->valuedouble;
}

static int
inflight_find(const struct conn *c, const cJSON *id)
{
    for (unsigned i = 0; i < c->inflight; i++)
        if (same_id(c->inflight_ids[i], id))
            return (int) i;
    return -1;
}

static int
inflight_add(struct conn *c, const cJSON *id)
{
    if (c->inflight == c->inflight_cap) {
        unsigned cap = c->inflight_cap ? c->inflight_cap * 2 : 8;
        cJSON **ids = reallocarray(c->inflight_ids, cap, sizeof(*ids));
        if (!ids)
            return -ENOMEM;
        c->inflight_ids = ids;
        c->inflight_cap = cap;
    }
    cJSON *copy = cJSON_Duplicate(id, 1);
    if (!copy)
        return -ENOMEM;
    c->inflight_ids[c->inflight++] = copy;
    return 0;
}

static bool
inflight_remove(struct conn *c, const cJSON *id)
{
    int i = inflight_find(c, id);
    if (i < 0)
        return false;
    cJSON_Delete(c->inflight_ids[i]);
    c->inflight_ids[i] = c->inflight_ids[--c->inflight];
    return true;
}

void
conn_finish_request(struct conn *c, const cJSON *reply)
{
    /* A reply without a request would be a bug of ours: drop this connection, not the daemon. */
    if (pf_fails_assert(inflight_remove(c, cJSON_GetObjectItemCaseSensitive(reply, "id")))) {
        conn_close(c);
        return;
    }
    /* Idleness counts from the last reply: the idle timer may be due in this very loop
     * iteration (a deadline reply and the idle check expiring together), and must not close
     * the connection right after the reply it was waiting for. (Draining, the timer bounds the
     * flush instead.) */
    if (!c->draining)
        conn_restart_idle(c, 0);
    if (conn_send(c, reply) < 0)
        return;
    /* Half-closed: no request can follow; once the last reply is queued, flush and close. */
    if (c->read_eof && c->inflight == 0)
        conn_drain(c);
}

/* cancel and session.close only free what is held, and are answered at once (they never stay
 * in flight): no bound on what a client holds refuses them, or a client at its bound could not
 * end what it started. */
static bool
frees_only(const struct msg_request *req)
{
    return req->op == MSG_OP_CANCEL || req->op == MSG_OP_SESSION_CLOSE;
}

/* While pyfenced holds more than max_bytes_per_uid for the peer's uid (its unread replies, its
 * queued requests), or more than max_bytes for all uids together, its new requests are
 * answered busy with retry_after_ms, as a full queue would: all but cancel and session.close
 * (frees_only). */
static bool
refused_over_budget(struct conn *c, const struct msg_request *req)
{
    struct sched *s = &c->d->sched;
    if (frees_only(req))
        return false;
    const char *why = sched_bytes_bound(s, c->uid, 0);
    if (!why)
        return false;
    uint32_t retry_after_ms = sched_retry_after(s, why);
    struct pf_error *err = NULL;
    cJSON *reply = NULL;
    sched_busy_error(s, c->uid, why, retry_after_ms, &err);
    if (ops_busy_reply(req, retry_after_ms, &reply, &err) < 0) {
        conn_send_error(c, req->id, PF_E_BUSY, err ? err->msg : why);
        pf_error_free(err);
        return true;
    }
    conn_send(c, reply);
    cJSON_Delete(reply);
    return true;
}

static void
handle_request(struct conn *c, struct msg_request *req)
{
    struct daemon *d = c->d;
    if (d->shutting_down) {
        conn_send_error(c, req->id, PF_E_SHUTTING_DOWN, "pyfenced is shutting down");
        return;
    }
    if (c->inflight >= (unsigned) d->limits.v[POLICY_LIMIT_MAX_INFLIGHT] && !frees_only(req)) {
        char msg[160];
        snprintf(msg, sizeof(msg),
                 "%u requests already in flight on this connection (max_inflight); wait for a "
                 "reply before sending more",
                 c->inflight);
        conn_send_error(c, req->id, PF_E_BUSY, msg);
        return;
    }
    if (inflight_find(c, req->id) >= 0) {
        /* Its reply and the first one's would carry the same id: the client could not tell
         * them apart. */
        char num[32];
        snprintf(num, sizeof(num), "%.0f", req->id->valuedouble);
        _cleanup_free_ char *quoted =
                cJSON_IsString(req->id) ? cJSON_PrintUnformatted(req->id) : NULL;
        char msg[400];
        snprintf(msg, sizeof(msg),
                 "request id %s is already in flight on this connection; give each request an "
                 "id of its own",
                 cJSON_IsString(req->id) ? (quoted ? quoted : "(a string)") : num);
        conn_send_error(c, req->id, PF_E_BAD_REQUEST, msg);
        return;
    }
    if (refused_over_budget(c, req))
        return;
    if (inflight_add(c, req->id) < 0) {
        conn_send_error(c, req->id, PF_E_INTERNAL, "out of memory");
        return;
    }
    cJSON *reply = NULL;
    struct pf_error *err = NULL;
    if (ops_dispatch(c, req, &reply, &err) < 0) {
        inflight_remove(c, req->id);
        conn_send_error(c, req->id, err ? err->code : PF_E_INTERNAL,
                        err ? err->msg : "out of memory");
        pf_error_free(err);
        return;
    }
    if (reply) {
        inflight_remove(c, req->id);
        conn_send(c, reply);
        cJSON_Delete(reply);
    }
    /* else: the op answers later through conn_finish_request. */
}

/* The frame being received no longer counts for the uid: it is complete (and the request it
 * carries counts as what it becomes), or the connection is gone. */
static void
release_partial(struct conn *c)
{
    if (c->partial_bytes)
        sched_bytes_release(&c->d->sched, c->uid, c->partial_bytes);
    c->partial_bytes = 0;
}

/* The payload of a frame being received is allocated once its header is in, and may be
 * filled slowly: it counts for max_bytes_per_uid and max_bytes like a request waiting for a
 * worker. A frame whose header comes while the uid (or all uids) already holds more than that
 * is refused (busy) and the connection closed, as for a frame over max_frame_bytes: its bytes
 * cannot be skipped, and its id is not known. (A frame that arrives whole in one read is never
 * partial: a request past a bound is answered busy, refused_over_budget.) So frames being
 * received take a uid past its bound by one frame at most, and all uids past max_bytes by one
 * frame per connection. */
static void
charge_partial(struct conn *c)
{
    struct sched *s = &c->d->sched;
    uint64_t n = c->dec.payload ? c->dec.payload_len : 0;
    if (n == c->partial_bytes)
        return;
    release_partial(c);
    if (n == 0)
        return;
    const char *why = sched_bytes_bound(s, c->uid, 0);
    if (why) {
        bool all = strcmp(why, "max_bytes") == 0;
        char whom[32];
        snprintf(whom, sizeof(whom), all ? "all uids together" : "uid %u", (unsigned) c->uid);
        char msg[300];
        snprintf(msg, sizeof(msg),
                 "pyfenced already holds %llu bytes for %s, over %s %llu: a frame of %llu bytes "
                 "is not taken; closing, try again in %u ms",
                 (unsigned long long) (all ? s->bytes : sched_bytes_of(s, c->uid)), whom, why,
                 (unsigned long long) (all ? s->max_bytes : s->max_bytes_uid),
                 (unsigned long long) n, sched_retry_after(s, why));
        pf_log_debug(CONN, "connection #%llu: %s", (unsigned long long) c->serial, msg);
        conn_send_error(c, NULL, PF_E_BUSY, msg);
        conn_drain(c);
        return;
    }
    if (sched_bytes_charge(s, c->uid, n) < 0) {
        conn_close(c);
        return;
    }
    c->partial_bytes = n;
}

static int
on_frame(void *userdata, char *payload, size_t len)
{
    _cleanup_free_ char *owned = payload;
    struct conn *c = userdata;
    release_partial(c);
    if (c->closing || c->draining)
        return -1;
    struct msg_request req = {0};
    cJSON *id_copy = NULL;
    struct pf_error *err = NULL;
    if (msg_request_parse(owned, len, MSG_MAX_DEPTH, &req, &id_copy, &err) < 0) {
        /* The framing is intact: answer and keep the connection. */
        conn_send_error(c, id_copy, err ? err->code : PF_E_INTERNAL,
                        err ? err->msg : "out of memory");
        cJSON_Delete(id_copy);
        pf_error_free(err);
    } else {
        handle_request(c, &req);
        msg_request_finish(&req);
    }
    if (c->closing || c->draining)
        return -1;
    /* Back-pressure: no more requests from a peer that does not read the replies. */
    if (conn_unsent(c) > CONN_PAUSE_BYTES) {
        c->pausing = true;
        return -1;
    }
    return 0;
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

/* Stops reading c. The input not fed yet, `len` bytes at `rest`, waits in c->held: it is a copy
 * of the read buffer's, or (from_held) what is left of c->held already. */
static void
pause_reading(struct conn *c, const char *rest, size_t len, bool from_held)
{
    c->pausing = false;
    c->paused = true;
    uv_read_stop((uv_stream_t *) &c->pipe);
    pf_log_debug(CONN, "connection #%llu: %zu reply bytes unread, not reading it until it does",
                 (unsigned long long) c->serial, conn_unsent(c));
    if (from_held) {
        c->held_off = c->held_len - len;
        return;
    }
    if (len == 0)
        return;
    c->held = malloc(len);
    if (!c->held) {
        conn_close(c);
        return;
    }
    memcpy(c->held, rest, len);
    c->held_len = len;
}

/* Gives the decoder len bytes of input, request by request; a request that leaves the
 * connection paused stops it, and the rest waits for conn_resume(). */
static void
feed(struct conn *c, const char *data, size_t len, bool from_held)
{
    struct pf_error *err = NULL;
    long r = frame_decoder_feed(&c->dec, data, len, on_frame, c, &err);
    if (r < 0) {
        /* A bad length: the byte stream can no longer be trusted. */
        pf_log_debug(CONN, "connection #%llu: %s", (unsigned long long) c->serial,
                     err ? err->msg : "bad frame");
        conn_send_error(c, NULL, err ? err->code : PF_E_BAD_FRAME, err ? err->msg : "bad frame");
        pf_error_free(err);
        conn_drain(c);
        return;
    }
    if (c->pausing && !c->closing && !c->draining)
        pause_reading(c, data + r, len - (size_t) r, from_held);
    if (!c->closing && !c->draining)
        charge_partial(c);
}

/* The peer read enough of its replies: the input held at the pause goes first, then reading
 * starts again (unless that input paused it once more). */
void
conn_resume(struct conn *c)
{
    c->paused = false;
    if (c->held) {
        feed(c, c->held + c->held_off, c->held_len - c->held_off, true);
        if (c->paused || c->closing || c->draining)
            return;
        free(c->held);
        c->held = NULL;
        c->held_len = c->held_off = 0;
    }
    int r = uv_read_start((uv_stream_t *) &c->pipe, daemon_alloc_cb, on_read);
    if (r < 0) {
        pf_log_warning(CONN, "connection #%llu: uv_read_start: %s, closing",
                       (unsigned long long) c->serial, uv_strerror(r));
        conn_close(c);
    }
}

/* End-of-file: the peer sends nothing more. If it closed altogether, its jobs are cancelled (no
 * one would read their replies); if it only half-closed, the requests it already sent are
 * still answered, and the connection drains after the last reply. */
static void
on_read_eof(struct conn *c)
{
    if (frame_decoder_pending(&c->dec))
        pf_log_debug(CONN, "connection #%llu: end of file in the middle of a frame",
                     (unsigned long long) c->serial);
    if (peer_hung_up(c)) {
        conn_close(c);
        return;
    }
    c->read_eof = true;
    uv_read_stop((uv_stream_t *) &c->pipe);
    if (c->inflight == 0) {
        conn_drain(c); /* nothing owed: close at once, after the replies already queued */
        return;
    }
    pf_log_debug(CONN, "connection #%llu half-closed with %u requests in flight",
                 (unsigned long long) c->serial, c->inflight);
    conn_restart_idle(c, 0);
}

static void
on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    struct conn *c = stream->data;
    struct daemon *d = c->d;
    if (nread > 0) {
        conn_restart_idle(c, 0);
        feed(c, buf->base, (size_t) nread, false);
        daemon_release_buf(d, buf);
        return;
    }
    daemon_release_buf(d, buf);
    if (nread == 0)
        return;
    if (nread == UV_EOF) {
        on_read_eof(c);
        return;
    }
    pf_log_debug(CONN, "connection #%llu: read: %s", (unsigned long long) c->serial,
                 uv_strerror((int) nread));
    conn_close(c);
}

static struct conn *
conn_new(struct daemon *d)
{
    struct conn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->d = d;
    c->serial = ++d->next_conn_id;
    dlist_init(&c->link);
    dlist_init(&c->jobs);
    frame_decoder_init(&c->dec, (uint32_t) d->limits.v[POLICY_LIMIT_MAX_FRAME_BYTES]);
    uv_pipe_init(d->loop, &c->pipe, 0);
    uv_timer_init(d->loop, &c->idle);
    c->pipe.data = c;
    c->idle.data = c;
    c->open_handles = 2;
    dlist_insert_tail(&d->conns, &c->link);
    return c;
}

/* The supplementary groups the peer had when it connected (SO_PEERGROUPS; the kernel says how
 * much room they need). Without them only the primary group can match a profile's groups:
 * access is narrower, never wider. A default_for by supplementary group then does not match
 * either, and the peer's default is the next match or "default": a profile it could have named
 * itself, since "default" admits it or refuses it on its own terms. The warning says so. */
static void
read_peer_groups(struct conn *c, int fd)
{
    socklen_t len = 32 * sizeof(gid_t);
    for (int attempt = 0; attempt < 3; attempt++) {
        gid_t *groups = malloc(len > 0 ? len : 1);
        if (!groups)
            break;
        socklen_t got = len;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &got) == 0) {
            c->groups = groups;
            c->n_groups = got / sizeof(gid_t);
            return;
        }
        int saved = errno;
        free(groups);
        if (saved != ERANGE) {
            errno = saved;
            break;
        }
        len = got;
    }
    pf_log_warning(CONN,
                   "connection #%llu: cannot read the peer's supplementary groups (%s): only its "
                   "primary group %u counts for profiles' access.groups and default_for.groups",
                   (unsigned long long) c->serial, strerror(errno), (unsigned) c->gid);
}

struct policy_peer
conn_peer(const struct conn *c)
{
    return (struct policy_peer){
            .uid = c->uid, .gid = c->gid, .groups = c->groups, .n_groups = c->n_groups};
}

/* The refusal warning, at most once per CONN_REFUSAL_LOG_MS (d->refusals): a client retrying in
 * a loop must not flood the journal. The next line counts those left out. */
static void
log_refusal(struct conn *c, const char *msg)
{
    struct daemon_refusals *r = &c->d->refusals;
    uint64_t now = uv_now(c->d->loop);
    r->total++;
    if (r->logged > 0 && now - r->last_log_ms < CONN_REFUSAL_LOG_MS) {
        r->unlogged++;
        return;
    }
    if (r->unlogged > 0)
        pf_log_warning(CONN,
                       "refusing connection from uid %u pid %d: %s (%llu more refused since the "
                       "last such line, not logged)",
                       (unsigned) c->uid, (int) c->pid, msg, (unsigned long long) r->unlogged);
    else
        pf_log_warning(CONN, "refusing connection from uid %u pid %d: %s", (unsigned) c->uid,
                       (int) c->pid, msg);
    r->logged++;
    r->unlogged = 0;
    r->last_log_ms = now;
}

/* Answers the peer why (busy, PF_E_INTERNAL) and closes. A refused connection must give its
 * fd back at once: libuv accepts every pending connection in one pass, and refusals waiting
 * for a later shutdown callback would pile up past the fds kept for them (EMFILE, and the
 * connections past it dropped without a word). The short reply is normally written by
 * uv_write itself; a close after it leaves it for the peer to read. */
static int
refuse(struct conn *c, int code, const char *msg)
{
    log_refusal(c, msg);
    conn_send_error(c, NULL, code, msg);
    if (!c->closing && conn_unsent(c) == 0)
        conn_close(c);
    else
        conn_drain(c);
    return -1;
}

/* Counts c in max_connections and its uid's max_connections_per_uid, or refuses it. Root is
 * not exempt: its connections take places other uids need just the same. */
static int
admit(struct conn *c)
{
    struct daemon *d = c->d;
    char msg[200];
    int64_t max = d->limits.v[POLICY_LIMIT_MAX_CONNECTIONS];
    if ((int64_t) d->n_conns >= max) {
        snprintf(msg, sizeof(msg),
                 "pyfenced already serves %u connections (max_connections); try again later",
                 d->n_conns);
        return refuse(c, PF_E_BUSY, msg);
    }
    unsigned conns = 0;
    int r = sched_peer_attach(&d->sched, c->uid, &conns);
    if (r == -EBUSY) {
        snprintf(msg, sizeof(msg),
                 "uid %u already has %u connections open (max_connections_per_uid %u); close "
                 "one or try again later",
                 (unsigned) c->uid, conns, d->sched.max_conns_uid);
        return refuse(c, PF_E_BUSY, msg);
    }
    if (r < 0)
        return refuse(c, PF_E_INTERNAL, "out of memory");
    c->counted = true;
    d->n_conns++;
    return 0;
}

static void
conn_setup(struct conn *c)
{
    uv_os_fd_t fd;
    struct ucred cred = {.pid = 0, .uid = (uid_t) -1, .gid = (gid_t) -1};
    socklen_t len = sizeof(cred);
    bool have_fd = uv_fileno((uv_handle_t *) &c->pipe, &fd) == 0;
    if (have_fd && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
        pf_log_warning(CONN, "connection #%llu: SO_PEERCRED: %s, ignoring",
                       (unsigned long long) c->serial, strerror(errno));
    c->uid = cred.uid;
    c->gid = cred.gid;
    c->pid = cred.pid;
    if (have_fd)
        read_peer_groups(c, fd);

    if (admit(c) < 0)
        return;
    pf_log_debug(CONN, "connection #%llu from uid %u gid %u pid %d", (unsigned long long) c->serial,
                 (unsigned) c->uid, (unsigned) c->gid, (int) c->pid);
    int r = uv_read_start((uv_stream_t *) &c->pipe, daemon_alloc_cb, on_read);
    if (r < 0) {
        pf_log_warning(CONN, "connection #%llu: uv_read_start: %s, closing",
                       (unsigned long long) c->serial, uv_strerror(r));
        conn_close(c);
        return;
    }
    conn_restart_idle(c, 0);
}

void
conn_on_connection(uv_stream_t *server, int status)
{
    struct daemon *d = server->data;
    if (status < 0) {
        pf_log_warning(CONN, "accept: %s, ignoring", uv_strerror(status));
        return;
    }
    struct conn *c = conn_new(d);
    if (!c) {
        pf_log_warning(CONN, "accept: out of memory, ignoring");
        return;
    }
    int r = uv_accept(server, (uv_stream_t *) &c->pipe);
    if (r < 0) {
        pf_log_warning(CONN, "accept: %s, ignoring", uv_strerror(r));
        conn_close(c);
        return;
    }
    conn_setup(c);
}

int
conn_open_fd(struct daemon *d, int fd, struct conn **ret, struct pf_error **err)
{
    struct conn *c = conn_new(d);
    if (!c)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    int r = uv_pipe_open(&c->pipe, fd);
    if (r < 0) {
        conn_close(c);
        return pf_error_set(err, PF_E_INTERNAL, "uv_pipe_open: %s", uv_strerror(r));
    }
    conn_setup(c);
    if (ret)
        *ret = c;
    return 0;
}
