/* Frame codec: a frame is a 4-byte big-endian uint32 length followed by that many bytes of
 * payload (one UTF-8 JSON object). The decoder is incremental: bytes may arrive split or
 * coalesced at any point. The length is checked against the maximum BEFORE anything is
 * allocated. Non-logging module. */
#ifndef PROTO_FRAME_H
#define PROTO_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "pf_error.h"

#define FRAME_HEADER_BYTES      4
#define FRAME_DEFAULT_MAX_BYTES (8u * 1024 * 1024)

struct frame_decoder {
    uint32_t max_bytes;
    uint8_t header[FRAME_HEADER_BYTES];
    size_t header_len;
    char *payload; /* owned; allocated once the header is complete */
    uint32_t payload_len;
    uint32_t payload_have;
    int failed; /* after an error the decoder refuses further input */
};

/* Called once per complete frame. `payload` is NUL-terminated (the NUL is not counted in len)
 * and is OWNED by the callee, which must free() it. Return 0 to go on, negative to stop feeding
 * (the decoder keeps any unread bytes' state consistent: feeding may resume later). */
typedef int (*frame_cb)(void *userdata, char *payload, size_t len);

void frame_decoder_init(struct frame_decoder *d, uint32_t max_bytes);
void frame_decoder_finish(struct frame_decoder *d);

/* Feeds len bytes. Returns the number of bytes consumed (== len unless the callback returned
 * negative, in which case the count up to and including that frame), or -1 with *err set
 * (code PF_E_BAD_FRAME for a zero length, PF_E_TOO_LARGE for a length over max_bytes, which
 * names both numbers). After an error the decoder is failed: the connection should be closed. */
long frame_decoder_feed(struct frame_decoder *d, const char *data, size_t len, frame_cb cb,
                        void *userdata, struct pf_error **err);

/* True when the decoder holds part of a frame (a close now truncates it). */
int frame_decoder_pending(const struct frame_decoder *d);

/* Builds header+payload into one malloc'd buffer. Fails with PF_E_TOO_LARGE past max_bytes. */
int frame_encode(const char *payload, size_t len, uint32_t max_bytes, char **ret_buf,
                 size_t *ret_len, struct pf_error **err);

#endif
