#include "frame.h"

#include <endian.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pf_cleanup.h"

/* Zero means "use the default": a zero maximum would refuse every frame, which is never what a
 * caller meant. */
static uint32_t
effective_max(uint32_t max_bytes)
{
    return max_bytes ? max_bytes : FRAME_DEFAULT_MAX_BYTES;
}

void
frame_decoder_init(struct frame_decoder *d, uint32_t max_bytes)
{
    memset(d, 0, sizeof(*d));
    d->max_bytes = effective_max(max_bytes);
}

void
frame_decoder_finish(struct frame_decoder *d)
{
    if (!d)
        return;
    free(d->payload);
    d->payload = NULL;
    d->header_len = 0;
    d->payload_len = 0;
    d->payload_have = 0;
}

static int
fail(struct frame_decoder *d)
{
    d->failed = 1;
    frame_decoder_finish(d);
    return -1;
}

/* Called when the 4 header bytes are in: validates the length, then (and only then) allocates
 * room for the payload plus the NUL that lets callers hand it to string functions. */
static int
start_payload(struct frame_decoder *d, struct pf_error **err)
{
    uint32_t be;
    memcpy(&be, d->header, sizeof(be));
    uint32_t n = be32toh(be);

    if (n == 0) {
        pf_error_set(err, PF_E_BAD_FRAME, "frame length 0");
        return fail(d);
    }
    if (n > d->max_bytes) {
        pf_error_set(err, PF_E_TOO_LARGE,
                     "frame of %" PRIu32 " bytes exceeds max_frame_bytes %" PRIu32, n,
                     d->max_bytes);
        return fail(d);
    }
    d->payload = malloc((size_t) n + 1);
    if (!d->payload) {
        pf_error_set(err, PF_E_INTERNAL, "out of memory for a frame of %" PRIu32 " bytes", n);
        return fail(d);
    }
    d->payload_len = n;
    d->payload_have = 0;
    return 0;
}

long
frame_decoder_feed(struct frame_decoder *d, const char *data, size_t len, frame_cb cb,
                   void *userdata, struct pf_error **err)
{
    if (d->failed)
        return pf_error_set(
                err, PF_E_BAD_FRAME,
                "frame decoder is in a failed state: the stream cannot be resynchronised");
    if (len > LONG_MAX)
        return pf_error_set(err, PF_E_INTERNAL, "cannot feed %zu bytes at once", len);

    size_t pos = 0;
    while (pos < len) {
        if (d->header_len < FRAME_HEADER_BYTES) {
            size_t want = FRAME_HEADER_BYTES - d->header_len;
            size_t take = len - pos < want ? len - pos : want;
            memcpy(d->header + d->header_len, data + pos, take);
            d->header_len += take;
            pos += take;
            if (d->header_len < FRAME_HEADER_BYTES)
                break;
            if (start_payload(d, err) < 0)
                return -1;
        }

        size_t want = d->payload_len - d->payload_have;
        size_t take = len - pos < want ? len - pos : want;
        memcpy(d->payload + d->payload_have, data + pos, take);
        d->payload_have += take;
        pos += take;
        if (d->payload_have < d->payload_len)
            break;

        /* Reset before the callback so a callback that stops (or re-enters) sees a clean
         * decoder positioned at the next frame. */
        char *payload = TAKE_PTR(d->payload);
        size_t n = d->payload_len;
        payload[n] = '\0';
        d->header_len = 0;
        d->payload_len = 0;
        d->payload_have = 0;
        if (cb(userdata, payload, n) < 0)
            return (long) pos;
    }
    return (long) pos;
}

int
frame_decoder_pending(const struct frame_decoder *d)
{
    return d->header_len > 0;
}

int
frame_encode(const char *payload, size_t len, uint32_t max_bytes, char **ret_buf, size_t *ret_len,
             struct pf_error **err)
{
    uint32_t max = effective_max(max_bytes);

    /* An empty frame is a protocol error on the receiving side: never produce one. */
    if (len == 0)
        return pf_error_set(err, PF_E_INTERNAL, "refusing to encode an empty frame");
    if (len > max)
        return pf_error_set(err, PF_E_TOO_LARGE,
                            "frame of %zu bytes exceeds max_frame_bytes %" PRIu32, len, max);

    char *buf = malloc(FRAME_HEADER_BYTES + len);
    if (!buf)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory for a frame of %zu bytes", len);
    uint32_t be = htobe32((uint32_t) len);
    memcpy(buf, &be, sizeof(be));
    memcpy(buf + FRAME_HEADER_BYTES, payload, len);
    *ret_buf = buf;
    *ret_len = FRAME_HEADER_BYTES + len;
    return 0;
}
