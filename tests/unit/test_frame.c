/* Frame codec: frames survive any split or coalescing of the byte stream, bad lengths are
 * refused before anything is allocated, and a stopped feed resumes where it left off. */
#include <endian.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "frame.h"

#define MAX_COLLECTED 16

struct collector {
    char *frames[MAX_COLLECTED];
    size_t lens[MAX_COLLECTED];
    size_t n;
    size_t stop_after; /* stop the feed after this many frames in total (0: never) */
};

static int
collect(void *userdata, char *payload, size_t len)
{
    struct collector *c = userdata;
    assert_true(c->n < MAX_COLLECTED);
    /* The decoder promises a NUL right after the payload. */
    assert_int_equal(payload[len], '\0');
    c->frames[c->n] = payload;
    c->lens[c->n] = len;
    c->n++;
    if (c->stop_after && c->n == c->stop_after)
        return -1;
    return 0;
}

static void
collector_reset(struct collector *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->frames[i]);
    memset(c, 0, sizeof(*c));
}

static const char *const payloads[] = {
        "{\"id\":1,\"op\":\"ping\"}",
        "x",
        "{\"id\":\"two\",\"op\":\"exec\",\"code\":\"print('h\\u00e9')\"}",
        "{}",
};

/* Builds the concatenation of every payload's frame. */
static char *
build_stream(size_t *ret_len)
{
    char *stream = NULL;
    size_t total = 0;
    for (size_t i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
        char *buf;
        size_t len;
        struct pf_error *err = NULL;
        assert_int_equal(frame_encode(payloads[i], strlen(payloads[i]), 0, &buf, &len, &err), 0);
        assert_null(err);
        assert_int_equal(len, FRAME_HEADER_BYTES + strlen(payloads[i]));
        stream = realloc(stream, total + len);
        assert_non_null(stream);
        memcpy(stream + total, buf, len);
        total += len;
        free(buf);
    }
    *ret_len = total;
    return stream;
}

static void
assert_all_payloads(const struct collector *c)
{
    assert_int_equal(c->n, sizeof(payloads) / sizeof(payloads[0]));
    for (size_t i = 0; i < c->n; i++) {
        assert_int_equal(c->lens[i], strlen(payloads[i]));
        assert_memory_equal(c->frames[i], payloads[i], c->lens[i]);
    }
}

/* Feeds stream in chunks whose sizes come from next_chunk(). */
static void
feed_chunked(const char *stream, size_t len, size_t (*next_chunk)(size_t pos, void *), void *arg,
             struct collector *c)
{
    struct frame_decoder d;
    frame_decoder_init(&d, 0);
    size_t pos = 0;
    while (pos < len) {
        size_t n = next_chunk(pos, arg);
        if (n > len - pos)
            n = len - pos;
        struct pf_error *err = NULL;
        long r = frame_decoder_feed(&d, stream + pos, n, collect, c, &err);
        assert_null(err);
        assert_int_equal(r, (long) n);
        pos += n;
    }
    assert_false(frame_decoder_pending(&d));
    frame_decoder_finish(&d);
}

static size_t
split_at(size_t pos, void *arg)
{
    size_t cut = *(size_t *) arg;
    return pos < cut ? cut - pos : (size_t) -1;
}

static void
test_split_at_every_byte(void **state)
{
    (void) state;
    size_t len;
    char *stream = build_stream(&len);
    for (size_t cut = 0; cut <= len; cut++) {
        struct collector c = {0};
        feed_chunked(stream, len, split_at, &cut, &c);
        assert_all_payloads(&c);
        collector_reset(&c);
    }
    free(stream);
}

static size_t
one_byte(size_t pos, void *arg)
{
    (void) pos;
    (void) arg;
    return 1;
}

static size_t
random_chunk(size_t pos, void *arg)
{
    (void) pos;
    unsigned *seed = arg;
    return 1 + (size_t) rand_r(seed) % 9;
}

static void
test_one_byte_and_random_chunks(void **state)
{
    (void) state;
    size_t len;
    char *stream = build_stream(&len);
    struct collector c = {0};
    feed_chunked(stream, len, one_byte, NULL, &c);
    assert_all_payloads(&c);
    collector_reset(&c);

    for (unsigned seed = 1; seed <= 200; seed++) {
        unsigned s = seed;
        feed_chunked(stream, len, random_chunk, &s, &c);
        assert_all_payloads(&c);
        collector_reset(&c);
    }
    free(stream);
}

static void
test_coalesced(void **state)
{
    (void) state;
    size_t len;
    char *stream = build_stream(&len);
    struct frame_decoder d;
    struct collector c = {0};
    struct pf_error *err = NULL;
    frame_decoder_init(&d, 0);
    assert_int_equal(frame_decoder_feed(&d, stream, len, collect, &c, &err), (long) len);
    assert_all_payloads(&c);
    assert_false(frame_decoder_pending(&d));
    collector_reset(&c);
    frame_decoder_finish(&d);
    free(stream);
}

static void
test_zero_length(void **state)
{
    (void) state;
    struct frame_decoder d;
    struct collector c = {0};
    struct pf_error *err = NULL;
    frame_decoder_init(&d, 0);
    assert_int_equal(frame_decoder_feed(&d, "\0\0\0\0{}", 6, collect, &c, &err), -1);
    assert_non_null(err);
    assert_int_equal(err->code, PF_E_BAD_FRAME);
    assert_string_equal(err->msg, "frame length 0");
    assert_int_equal(c.n, 0);
    err = pf_error_free(err);

    /* A failed decoder stays failed: the stream cannot be trusted any more. */
    assert_int_equal(frame_decoder_feed(&d, "\0\0\0\2{}", 6, collect, &c, &err), -1);
    assert_non_null(err);
    assert_int_equal(c.n, 0);
    err = pf_error_free(err);
    frame_decoder_finish(&d);
}

static void
test_oversize_refused_before_allocation(void **state)
{
    (void) state;
    struct frame_decoder d;
    struct collector c = {0};
    struct pf_error *err = NULL;
    frame_decoder_init(&d, 100);

    /* Exactly the maximum is fine. */
    char ok[4 + 100];
    uint32_t be = htobe32(100);
    memcpy(ok, &be, 4);
    memset(ok + 4, 'a', 100);
    assert_int_equal(frame_decoder_feed(&d, ok, sizeof(ok), collect, &c, &err), (long) sizeof(ok));
    assert_int_equal(c.n, 1);
    collector_reset(&c);

    /* One over, and a 4 GiB claim: refused with only the header seen, nothing allocated. */
    be = htobe32(101);
    assert_int_equal(frame_decoder_feed(&d, (const char *) &be, 4, collect, &c, &err), -1);
    assert_int_equal(err->code, PF_E_TOO_LARGE);
    assert_string_equal(err->msg, "frame of 101 bytes exceeds max_frame_bytes 100");
    assert_null(d.payload);
    err = pf_error_free(err);
    frame_decoder_finish(&d);

    frame_decoder_init(&d, 0);
    assert_int_equal(frame_decoder_feed(&d, "\xff\xff\xff\xff", 4, collect, &c, &err), -1);
    assert_int_equal(err->code, PF_E_TOO_LARGE);
    assert_string_equal(err->msg, "frame of 4294967295 bytes exceeds max_frame_bytes 8388608");
    assert_null(d.payload);
    err = pf_error_free(err);
    frame_decoder_finish(&d);
}

static void
test_resume_after_stop(void **state)
{
    (void) state;
    size_t len;
    char *stream = build_stream(&len);
    struct frame_decoder d;
    struct collector c = {0};
    struct pf_error *err = NULL;
    frame_decoder_init(&d, 0);

    /* Stop after each frame; the returned count lets the caller resume exactly there. */
    size_t pos = 0;
    for (size_t k = 1; k <= 4; k++) {
        c.stop_after = k;
        long r = frame_decoder_feed(&d, stream + pos, len - pos, collect, &c, &err);
        assert_null(err);
        assert_int_equal(c.n, k);
        size_t frame_end = 0;
        for (size_t i = 0; i < k; i++)
            frame_end += FRAME_HEADER_BYTES + strlen(payloads[i]);
        assert_int_equal(pos + (size_t) r, frame_end);
        pos += (size_t) r;
        assert_false(frame_decoder_pending(&d));
    }
    assert_int_equal(pos, len);
    assert_all_payloads(&c);
    collector_reset(&c);
    frame_decoder_finish(&d);
    free(stream);
}

static void
test_pending_and_finish_free(void **state)
{
    (void) state;
    struct frame_decoder d;
    struct collector c = {0};
    struct pf_error *err = NULL;
    frame_decoder_init(&d, 0);
    assert_false(frame_decoder_pending(&d));
    assert_int_equal(frame_decoder_feed(&d, "\0\0", 2, collect, &c, &err), 2);
    assert_true(frame_decoder_pending(&d));
    assert_int_equal(frame_decoder_feed(&d, "\0\5{\"a\"", 6, collect, &c, &err), 6);
    assert_true(frame_decoder_pending(&d));
    assert_non_null(d.payload);
    assert_int_equal(c.n, 0);
    /* A truncated frame at close: finish releases the partial payload (ASan checks). */
    frame_decoder_finish(&d);
    assert_false(frame_decoder_pending(&d));
}

static void
test_encode_round_trip_and_limits(void **state)
{
    (void) state;
    char *buf;
    size_t len;
    struct pf_error *err = NULL;
    const char *p = "{\"k\":\"v\"}";
    assert_int_equal(frame_encode(p, strlen(p), 0, &buf, &len, &err), 0);
    assert_memory_equal(buf, "\0\0\0\x09", 4);
    struct frame_decoder d;
    struct collector c = {0};
    frame_decoder_init(&d, 0);
    assert_int_equal(frame_decoder_feed(&d, buf, len, collect, &c, &err), (long) len);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.frames[0], p);
    collector_reset(&c);
    frame_decoder_finish(&d);
    free(buf);

    buf = NULL;
    assert_int_equal(frame_encode(p, strlen(p), 8, &buf, &len, &err), -1);
    assert_int_equal(err->code, PF_E_TOO_LARGE);
    assert_string_equal(err->msg, "frame of 9 bytes exceeds max_frame_bytes 8");
    assert_null(buf);
    err = pf_error_free(err);

    assert_int_equal(frame_encode("", 0, 0, &buf, &len, &err), -1);
    assert_non_null(err);
    err = pf_error_free(err);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_split_at_every_byte),
            cmocka_unit_test(test_one_byte_and_random_chunks),
            cmocka_unit_test(test_coalesced),
            cmocka_unit_test(test_zero_length),
            cmocka_unit_test(test_oversize_refused_before_allocation),
            cmocka_unit_test(test_resume_after_stop),
            cmocka_unit_test(test_pending_and_finish_free),
            cmocka_unit_test(test_encode_round_trip_and_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
