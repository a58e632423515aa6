/* The output side of a connection (conn.h): the frames it sends, the write callback, and the
 * bounds on the replies its peer has not read (max_outbuf_bytes, and the slow-reader close while
 * its uid is over budget). Apart from conn.c, the connection's life (accept, admission, reading
 * and dispatching requests, back-pressure, idleness, closing): this file only says how a message
 * goes out and when a peer that does not read it is dropped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "conn_internal.h"
#include "daemon.h"
#include "msg.h"
#include "pf_log.h"

/* A write request embeds uv_write_t first and owns its buffer until on_write. */
struct conn_write {
    uv_write_t req;
    struct conn *c;
    char *buf;
    size_t len;
};

/* Reply bytes written to nobody yet: what the peer has not read. */
size_t
conn_unsent(struct conn *c)
{
    return uv_stream_get_write_queue_size((uv_stream_t *) &c->pipe);
}

static void
on_write(uv_write_t *req, int status)
{
    struct conn_write *w = (struct conn_write *) req;
    struct conn *c = w->c;
    c->outbuf_bytes -= w->len;
    if (!c->closing) /* else released by conn_close */
        sched_bytes_release(&c->d->sched, c->uid, w->len);
    free(w->buf);
    free(w);
    if (status < 0 && status != UV_ECANCELED) {
        pf_log_debug(CONN, "connection #%llu: write failed: %s", (unsigned long long) c->serial,
                     uv_strerror(status));
        conn_close(c);
        return;
    }
    if (!c->draining)
        conn_restart_idle(c, 0);
    if (c->paused && !c->closing && !c->draining && conn_unsent(c) <= CONN_PAUSE_BYTES)
        conn_resume(c);
}

static int
encode_or_substitute(struct conn *c, const cJSON *msg, char **ret_buf, size_t *ret_len)
{
    uint32_t max = (uint32_t) c->d->limits.v[POLICY_LIMIT_MAX_FRAME_BYTES];
    struct pf_error *err = NULL;
    if (msg_encode(msg, max, ret_buf, ret_len, &err) == 0)
        return 0;
    pf_log_warning(CONN, "connection #%llu: cannot send a message: %s",
                   (unsigned long long) c->serial, err->msg);
    err = pf_error_free(err);
    /* A reply must still end its request: send an error in its place. Events are dropped. */
    if (!cJSON_HasObjectItem(msg, "ok"))
        return -1;
    cJSON *sub = msg_reply_error(cJSON_GetObjectItemCaseSensitive(msg, "id"), PF_E_TOO_LARGE,
                                 "the reply exceeds max_frame_bytes; ask for less (fewer "
                                 "session.get names, smaller values)");
    if (!sub)
        return -1;
    int r = msg_encode(sub, max, ret_buf, ret_len, &err);
    cJSON_Delete(sub);
    err = pf_error_free(err);
    return r;
}

/* max_outbuf_bytes bounds one connection's unread replies; these bound a uid's. A peer that
 * does not read, and has more than CONN_PAUSE_BYTES of replies unsent (those of requests it
 * sent before it stopped reading keep coming), is disconnected as a slow reader when a reply
 * for it comes while its uid holds more than max_bytes_per_uid, or more than its even part of
 * max_bytes while all uids together hold more than that (sched_bytes_over). Otherwise a uid's
 * connections, each under max_outbuf_bytes, would together hold what they like: those bounds
 * refuse new requests, not the replies of requests taken. A client that reads its replies as
 * they come keeps under CONN_PAUSE_BYTES unsent, and is never closed by this. */
static bool
unread_over_budget(struct conn *c, size_t queued)
{
    struct sched *s = &c->d->sched;
    const char *why = sched_bytes_over(s, c->uid);
    if (!why)
        return false;
    bool all = strcmp(why, "max_bytes") == 0;
    char whom[32];
    snprintf(whom, sizeof(whom), all ? "all uids together" : "uid %u", (unsigned) c->uid);
    pf_log_warning(CONN,
                   "connection #%llu (uid %u, pid %d) does not read its replies: %zu bytes "
                   "queued while pyfenced holds %llu bytes for %s, over %s %llu; disconnecting",
                   (unsigned long long) c->serial, (unsigned) c->uid, (int) c->pid, queued,
                   (unsigned long long) (all ? s->bytes : sched_bytes_of(s, c->uid)), whom, why,
                   (unsigned long long) (all ? s->max_bytes : s->max_bytes_uid));
    conn_close(c);
    return true;
}

int
conn_send(struct conn *c, const cJSON *msg)
{
    if (c->closing || c->draining)
        return -1;
    char *buf;
    size_t len;
    if (encode_or_substitute(c, msg, &buf, &len) < 0)
        return 0; /* dropped, the connection itself is fine */
    struct conn_write *w = calloc(1, sizeof(*w));
    if (!w) {
        free(buf);
        conn_close(c);
        return -1;
    }
    w->c = c;
    w->buf = buf;
    w->len = len;
    /* Held for the peer's uid until on_write: max_bytes_per_uid counts it. */
    if (sched_bytes_charge(&c->d->sched, c->uid, len) < 0) {
        free(buf);
        free(w);
        conn_close(c);
        return -1;
    }
    uv_buf_t b = uv_buf_init(buf, (unsigned) len);
    int r = uv_write(&w->req, (uv_stream_t *) &c->pipe, &b, 1, on_write);
    if (r < 0) {
        sched_bytes_release(&c->d->sched, c->uid, len);
        free(buf);
        free(w);
        pf_log_debug(CONN, "connection #%llu: write: %s", (unsigned long long) c->serial,
                     uv_strerror(r));
        conn_close(c);
        return -1;
    }
    c->outbuf_bytes += len;
    /* libuv writes what it can at once; the rest is what the peer has not read. */
    size_t queued = uv_stream_get_write_queue_size((uv_stream_t *) &c->pipe);
    int64_t max = c->d->limits.v[POLICY_LIMIT_MAX_OUTBUF_BYTES];
    if ((int64_t) queued > max) {
        pf_log_warning(CONN,
                       "connection #%llu (uid %u, pid %d) does not read its replies: %zu bytes "
                       "queued, over max_outbuf_bytes %lld; disconnecting",
                       (unsigned long long) c->serial, (unsigned) c->uid, (int) c->pid, queued,
                       (long long) max);
        conn_close(c);
        return -1;
    }
    if (queued > CONN_PAUSE_BYTES && unread_over_budget(c, queued))
        return -1;
    return 0;
}

void
conn_send_error(struct conn *c, const cJSON *id, int code, const char *message)
{
    cJSON *reply = msg_reply_error(id, code, message);
    if (!reply) {
        conn_close(c);
        return;
    }
    conn_send(c, reply);
    cJSON_Delete(reply);
}
