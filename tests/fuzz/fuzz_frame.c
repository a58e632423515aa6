/* Fuzzes the frame decoder the way a connection drives it: the input goes through a real
 * socketpair in 143-byte writes (systemd's fuzz-varlink.c) and is read back in uneven chunks.
 * The oracle is differential: the same input fed in one piece, stopping after every frame and
 * resuming, must yield exactly the same frames and the same error. Each frame's payload also
 * goes through the request parser, as the daemon would.
 *
 * Input: byte 0 picks the frame limit and the read pattern; the rest is the byte stream. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frame.h"
#include "fuzz.h"
#include "msg.h"

#define WRITE_CHUNK 143

struct outcome {
    size_t frames;
    uint64_t hash; /* FNV-1a over every payload and its length */
    bool stop_each;
};

static void
hash_bytes(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        *h ^= b[i];
        *h *= 1099511628211ULL;
    }
}

static int
on_frame(void *userdata, char *payload, size_t len)
{
    struct outcome *o = userdata;
    if (len == 0 || payload[len] != '\0')
        abort(); /* the decoder promised a non-empty, NUL-terminated payload */
    o->frames++;
    hash_bytes(&o->hash, &len, sizeof(len));
    hash_bytes(&o->hash, payload, len);

    struct msg_request req;
    struct pf_error *err = NULL;
    cJSON *id = NULL;
    if (msg_request_parse(payload, len, MSG_MAX_DEPTH, &req, &id, &err) == 0)
        msg_request_finish(&req);
    else if (!err)
        abort(); /* every failure must say why */
    err = pf_error_free(err);
    cJSON_Delete(id);
    free(payload);
    return o->stop_each ? -1 : 0;
}

/* Feeds everything at once, resuming after each stop. Returns the error code, 0 if none. */
static int
decode_whole(const uint8_t *data, size_t size, uint32_t max, struct outcome *o)
{
    struct frame_decoder d;
    struct pf_error *err = NULL;
    int code = 0;
    frame_decoder_init(&d, max);
    o->stop_each = true;
    size_t pos = 0;
    while (pos < size) {
        long r = frame_decoder_feed(&d, (const char *) data + pos, size - pos, on_frame, o, &err);
        if (r < 0) {
            code = err ? err->code : -1;
            break;
        }
        if (r == 0)
            abort(); /* a stop is only allowed after a whole frame, so progress is made */
        pos += (size_t) r;
    }
    err = pf_error_free(err);
    frame_decoder_finish(&d);
    return code;
}

static int
decode_socket(const uint8_t *data, size_t size, uint32_t max, unsigned pattern, struct outcome *o)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        abort();
    struct frame_decoder d;
    struct pf_error *err = NULL;
    int code = 0;
    frame_decoder_init(&d, max);
    o->stop_each = false;

    char buf[WRITE_CHUNK];
    unsigned k = 0;
    for (size_t pos = 0; pos < size && code == 0;) {
        size_t n = size - pos < WRITE_CHUNK ? size - pos : WRITE_CHUNK;
        if (write(sv[0], data + pos, n) != (ssize_t) n)
            abort();
        pos += n;
        /* Read back what was written in uneven pieces, so the decoder sees every kind of
         * split: inside the header, at its end, inside the payload. */
        while (n > 0 && code == 0) {
            size_t want = 1 + (pattern + 7 * k++) % 61;
            if (want > n)
                want = n;
            ssize_t got = read(sv[1], buf, want);
            if (got <= 0)
                abort();
            n -= (size_t) got;
            if (frame_decoder_feed(&d, buf, (size_t) got, on_frame, o, &err) < 0)
                code = err ? err->code : -1;
        }
    }
    err = pf_error_free(err);
    frame_decoder_finish(&d);
    close(sv[0]);
    close(sv[1]);
    return code;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const uint32_t limits[] = {16, 256, 4096, FRAME_DEFAULT_MAX_BYTES};
    uint32_t max = limits[data[0] & 3];
    unsigned pattern = data[0] >> 2;
    data++;
    size--;

    struct outcome whole = {.hash = 14695981039346656037ULL};
    struct outcome chunked = {.hash = 14695981039346656037ULL};
    int code_whole = decode_whole(data, size, max, &whole);
    int code_chunked = decode_socket(data, size, max, pattern, &chunked);
    if (code_whole != code_chunked || whole.frames != chunked.frames || whole.hash != chunked.hash)
        abort();

    /* A frame we encode decodes back to itself. */
    if (size > 0 && size <= max) {
        char *buf;
        size_t len;
        struct pf_error *err = NULL;
        if (frame_encode((const char *) data, size, max, &buf, &len, &err) < 0)
            abort();
        struct outcome back = {.hash = 14695981039346656037ULL};
        if (decode_whole((const uint8_t *) buf, len, max, &back) != 0 || back.frames != 1)
            abort();
        free(buf);
    }
    return 0;
}
