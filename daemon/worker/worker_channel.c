/* The worker's end of its channel (CHANNEL.md, "Worker channel"): reading frames (the first one,
 * then a session's requests and the answers to egress requests), sending frames, and batching
 * printed text into "output" events. Separate from worker.c, which decides what a run does and
 * says: this file only knows how frames go over the socket. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "worker_internal.h"

#define OUTPUT_FLUSH_BYTES 4096
#define OUTPUT_FLUSH_MS    20
#define OUTPUT_CHUNK_BYTES (64 * 1024) /* one output frame's data, at most (before escaping) */

/* ---- sending ------------------------------------------------------------------------------ */

static uint64_t
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static int
send_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t) n;
    }
    return 0;
}

void
worker_send_or_die(int fd, const cJSON *obj)
{
    _cleanup_pf_error_ struct pf_error *err = NULL;
    _cleanup_free_ char *buf = NULL;
    size_t len;
    if (msg_encode(obj, WORKER_MAX_FRAME_BYTES, &buf, &len, &err) < 0 || send_all(fd, buf, len) < 0)
        _exit(1);
}

/* ---- output batching ------------------------------------------------------------------- */

/* {"event":"output","data":"..."} written by hand: printed text may hold NUL characters, which
 * cJSON's NUL-terminated strings would cut. The wire refuses \u0000 (proto/msg.c), so a NUL
 * is sent as U+FFFD. */
static void
send_output_chunk(int fd, const char *data, size_t len)
{
    static const char head[] = "{\"event\":\"output\",\"data\":\"";
    _cleanup_free_ char *json = malloc(sizeof(head) + 6 * len + 2);
    if (!json)
        _exit(1);
    size_t n = sizeof(head) - 1;
    memcpy(json, head, n);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) data[i];
        if (c == '"' || c == '\\') {
            json[n++] = '\\';
            json[n++] = (char) c;
        } else if (c == 0) {
            memcpy(json + n, "\\ufffd", 6);
            n += 6;
        } else if (c < 0x20) {
            n += (size_t) snprintf(json + n, 7, "\\u%04x", c);
        } else {
            json[n++] = (char) c;
        }
    }
    json[n++] = '"';
    json[n++] = '}';
    _cleanup_pf_error_ struct pf_error *err = NULL;
    _cleanup_free_ char *frame = NULL;
    size_t flen;
    if (frame_encode(json, n, WORKER_MAX_FRAME_BYTES, &frame, &flen, &err) < 0 ||
        send_all(fd, frame, flen) < 0)
        _exit(1);
}

void
worker_output_flush(struct out_batch *b)
{
    size_t off = 0;
    while (off < b->len) {
        size_t n = b->len - off;
        if (n > OUTPUT_CHUNK_BYTES) {
            /* Cut on a UTF-8 character boundary so every chunk is valid on its own. */
            n = OUTPUT_CHUNK_BYTES;
            while (n > 0 && ((unsigned char) b->buf[off + n] & 0xC0) == 0x80)
                n--;
        }
        send_output_chunk(b->fd, b->buf + off, n);
        off += n;
    }
    b->len = 0;
    b->last_flush_ms = now_ms();
}

/* Lines go out at once unless the last batch went less than OUTPUT_FLUSH_MS ago (a burst is
 * then sent as one event); the walk's clock checks (len 0) send what has waited that long. */
void
worker_output(void *userdata, const char *data, size_t len)
{
    struct out_batch *b = userdata;
    if (len == 0) {
        if (b->len > 0 && now_ms() - b->last_flush_ms >= OUTPUT_FLUSH_MS)
            worker_output_flush(b);
        return;
    }
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : OUTPUT_FLUSH_BYTES;
        while (cap < b->len + len)
            cap *= 2;
        char *nb = realloc(b->buf, cap);
        if (!nb)
            _exit(1);
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, data, len);
    b->len += len;
    if (b->len >= OUTPUT_FLUSH_BYTES ||
        (memchr(data, '\n', len) && now_ms() - b->last_flush_ms >= OUTPUT_FLUSH_MS))
        worker_output_flush(b);
}

/* ---- reading ------------------------------------------------------------------------------ */

static int
take_frame(void *userdata, char *payload, size_t len)
{
    struct frame_slot *slot = userdata;
    slot->payload = payload;
    slot->len = len;
    return -1; /* one frame is all a worker reads */
}

int
worker_read_frame(int fd, struct frame_slot *slot, struct pf_error **err)
{
    struct frame_decoder d;
    frame_decoder_init(&d, WORKER_MAX_FRAME_BYTES);
    char buf[64 * 1024];
    int r = -1;
    while (!slot->payload) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            pf_error_set_errno(err, PF_E_INTERNAL, errno, "worker channel: read");
            goto out;
        }
        if (n == 0) {
            pf_error_set(err, PF_E_INTERNAL, "worker channel closed before the run frame");
            goto out;
        }
        if (frame_decoder_feed(&d, buf, (size_t) n, take_frame, slot, err) < 0)
            goto out;
    }
    r = 0;
out:
    frame_decoder_finish(&d);
    return r;
}

struct frame_reader {
    struct frame_decoder dec;
    size_t off, len;
    char buf[64 * 1024];
};

/* Everything the worker reads after its first frame: a session's requests, and the answers
 * to egress requests (which come while a run is under way). */
static struct frame_reader channel_rd;

void
worker_channel_init(void)
{
    frame_decoder_init(&channel_rd.dec, WORKER_MAX_FRAME_BYTES);
}

int
worker_next_frame(int fd, struct frame_slot *slot)
{
    struct frame_reader *rd = &channel_rd;
    _cleanup_pf_error_ struct pf_error *err = NULL;
    slot->payload = NULL;
    for (;;) {
        if (rd->off < rd->len) {
            long n = frame_decoder_feed(&rd->dec, rd->buf + rd->off, rd->len - rd->off, take_frame,
                                        slot, &err);
            if (n < 0)
                _exit(1);
            rd->off += (size_t) n;
            if (slot->payload)
                return 1;
        }
        ssize_t n = read(fd, rd->buf, sizeof(rd->buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            _exit(1);
        if (n == 0)
            return 0;
        rd->off = 0;
        rd->len = (size_t) n;
    }
}

/* ---- egress ------------------------------------------------------------------------------- */

/* http_request's round trip (exec_policy.egress): the request goes to pyfenced, which answers
 * with one frame before anything else (CHANNEL.md, "egress"). */
cJSON *
worker_egress_round_trip(void *userdata, const cJSON *request)
{
    int fd = *(const int *) userdata;
    worker_send_or_die(fd, request);
    struct frame_slot slot;
    if (worker_next_frame(fd, &slot) <= 0)
        return NULL;
    _cleanup_free_ char *payload = slot.payload;
    _cleanup_pf_error_ struct pf_error *err = NULL;
    cJSON *answer = NULL;
    if (msg_parse(payload, slot.len, MSG_MAX_DEPTH, &answer, &err) < 0)
        return NULL;
    if (strcmp(msg_get_string(answer, "op", ""), "egress") != 0) {
        cJSON_Delete(answer);
        return NULL;
    }
    return answer;
}
