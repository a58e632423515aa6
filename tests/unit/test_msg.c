/* Message layer: strict parsing (UTF-8, JSON, duplicates, depth, NUL), the op schemas with
 * their error messages, the id echo on failure, and the shapes of replies and events. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "frame.h"
#include "msg.h"
#include "pf_cleanup.h"

/* Parses a request and expects failure with code and exact message. */
static void
expect_request_error(const char *text, size_t len, int code, const char *msg)
{
    struct msg_request req;
    struct pf_error *err = NULL;
    cJSON *id = NULL;
    if (msg_request_parse(text, len, MSG_MAX_DEPTH, &req, &id, &err) >= 0)
        fail_msg("accepted: %.*s", (int) len, text);
    assert_non_null(err);
    if (strcmp(err->msg, msg) != 0)
        fail_msg("for %.*s\n  got      '%s'\n  expected '%s'", (int) len, text, err->msg, msg);
    assert_int_equal(err->code, code);
    pf_error_free(err);
    cJSON_Delete(id);
}

#define EXPECT_ERR(text, code, msg) expect_request_error(text, strlen(text), code, msg)

static struct msg_request
expect_request_ok(const char *text, enum msg_op op)
{
    struct msg_request req;
    struct pf_error *err = NULL;
    cJSON *id = (cJSON *) 0x1;
    if (msg_request_parse(text, strlen(text), MSG_MAX_DEPTH, &req, &id, &err) < 0)
        fail_msg("refused %s: %s", text, err->msg);
    assert_null(err);
    assert_null(id);
    assert_int_equal(req.op, op);
    assert_non_null(req.id);
    return req;
}

static void
test_valid_requests(void **state)
{
    (void) state;
    struct msg_request r;

    r = expect_request_ok("{\"id\": 1, \"op\": \"ping\"}", MSG_OP_PING);
    assert_int_equal(r.id->valuedouble, 1);
    msg_request_finish(&r);
    assert_null(r.root);

    r = expect_request_ok("{\"op\": \"hello\", \"id\": \"a\", \"client\": \"pytest/1\"}",
                          MSG_OP_HELLO);
    assert_string_equal(r.id->valuestring, "a");
    assert_string_equal(msg_get_string(r.root, "client", NULL), "pytest/1");
    msg_request_finish(&r);

    r = expect_request_ok("{\"id\": 9007199254740991, \"op\": \"stats\"}", MSG_OP_STATS);
    msg_request_finish(&r);

    r = expect_request_ok(" \n{\"id\":0,\"op\":\"exec\",\"code\":\"x = 1\\nx\","
                          "\"imports\":[\"math\",\"collections.abc\"],"
                          "\"limits\":{\"timeout_ms\":500},"
                          "\"variables\":{\"a\":[1,{\"$type\":\"int\",\"value\":\"1\"}]},"
                          "\"stream\":false}\r\n\t",
                          MSG_OP_EXEC);
    assert_string_equal(msg_get_string(r.root, "code", NULL), "x = 1\nx");
    assert_false(msg_get_bool(r.root, "stream", true));
    assert_true(msg_get_bool(r.root, "absent", true));
    msg_request_finish(&r);

    /* Non-ASCII, escaped and raw, round-trips as UTF-8. */
    r = expect_request_ok(
            "{\"id\":\"\xc3\xa9\\u00e9\xf0\x9f\x98\x80\\ud83d\\ude00\",\"op\":\"ping\"}",
            MSG_OP_PING);
    assert_string_equal(r.id->valuestring, "\xc3\xa9\xc3\xa9\xf0\x9f\x98\x80\xf0\x9f\x98\x80");
    msg_request_finish(&r);
}

static void
test_utf8_validator(void **state)
{
    (void) state;
    static const struct {
        const char *s;
        size_t len;
        bool ok;
        size_t offset;
    } cases[] = {
            {"plain ascii", 11, true, 0},
            {"\xc3\xa9", 2, true, 0},
            {"\xe2\x82\xac", 3, true, 0},
            {"\xf4\x8f\xbf\xbf", 4, true, 0},  /* U+10FFFF, the last code point */
            {"\xed\x9f\xbf", 3, true, 0},      /* U+D7FF, just below the surrogates */
            {"\xee\x80\x80", 3, true, 0},      /* U+E000, just above */
            {"ab\xc0\xaf", 4, false, 2},       /* overlong '/' */
            {"\xc1\xbf", 2, false, 0},         /* overlong */
            {"\xe0\x80\xaf", 3, false, 0},     /* 3-byte overlong */
            {"\xf0\x80\x80\xaf", 4, false, 0}, /* 4-byte overlong */
            {"x\xed\xa0\x80", 4, false, 1},    /* U+D800 surrogate */
            {"\xed\xbf\xbf", 3, false, 0},     /* U+DFFF surrogate */
            {"\xf4\x90\x80\x80", 4, false, 0}, /* U+110000 */
            {"\xf5\x80\x80\x80", 4, false, 0}, /* lead byte past F4 */
            {"abc\xe2\x82", 5, false, 3},      /* truncated at the end */
            {"\xe2\x82x", 3, false, 0},        /* truncated by an ASCII byte */
            {"\xff", 1, false, 0},
            {"ok\x80", 3, false, 2}, /* stray continuation */
            {"\xc3", 1, false, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t off = 12345;
        bool ok = msg_utf8_valid(cases[i].s, cases[i].len, &off);
        if (ok != cases[i].ok)
            fail_msg("case %zu: expected %d", i, cases[i].ok);
        if (!ok)
            assert_int_equal(off, cases[i].offset);
    }

    /* The 8-byte ASCII fast path must not skip over a bad byte or a sequence straddling a word
     * boundary, wherever it falls. */
    char buf[40];
    for (size_t at = 0; at < 30; at++) {
        memset(buf, 'a', sizeof(buf));
        buf[at] = (char) 0xff;
        size_t off = 0;
        assert_false(msg_utf8_valid(buf, sizeof(buf), &off));
        assert_int_equal(off, at);
        memset(buf, 'a', sizeof(buf));
        memcpy(buf + at, "\xf0\x9f\x98\x80", 4);
        assert_true(msg_utf8_valid(buf, sizeof(buf), NULL));
        assert_false(msg_utf8_valid(buf, at + 3, &off)); /* cut inside the sequence */
        assert_int_equal(off, at);
    }
}

/* A slow, obviously-correct reference: decode one sequence by the definition, then apply the
 * rules (shortest form, no surrogates, at most U+10FFFF). */
static bool
reference_utf8_valid(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        size_t n;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            n = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            n = 4;
            cp = c & 0x07;
        } else
            return false;
        if (i + n > len)
            return false;
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        static const uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_for_len[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
            return false;
        i += n;
    }
    return true;
}

static void
test_utf8_matches_reference(void **state)
{
    (void) state;
    unsigned char b[4];
    /* Every 1-, 2- and 3-byte input, and every 4-byte input whose last two bytes are taken
     * from the interesting values (continuation range edges and just outside them). */
    for (unsigned x = 0; x < 0x1000000; x++) {
        b[0] = (unsigned char) (x >> 16);
        b[1] = (unsigned char) (x >> 8);
        b[2] = (unsigned char) x;
        for (size_t len = 1; len <= 3; len++) {
            if (len < 3 && (x & 0xFFFF) != 0)
                continue; /* shorter inputs only need each prefix once */
            if (msg_utf8_valid((const char *) b, len, NULL) != reference_utf8_valid(b, len))
                fail_msg("disagree on %zu bytes %02x %02x %02x", len, b[0], b[1], b[2]);
        }
    }
    static const unsigned char edges[] = {0x00, 0x7F, 0x80, 0x8F, 0x90,
                                          0x9F, 0xA0, 0xBF, 0xC0, 0xFF};
    for (unsigned x = 0; x < 0x10000; x++)
        for (size_t e = 0; e < sizeof(edges); e++)
            for (size_t f = 0; f < sizeof(edges); f++) {
                b[0] = (unsigned char) (x >> 8);
                b[1] = (unsigned char) x;
                b[2] = edges[e];
                b[3] = edges[f];
                if (msg_utf8_valid((const char *) b, 4, NULL) != reference_utf8_valid(b, 4))
                    fail_msg("disagree on %02x %02x %02x %02x", b[0], b[1], b[2], b[3]);
            }
}

static void
test_bad_utf8_in_requests(void **state)
{
    (void) state;
    EXPECT_ERR("{\"id\":\"\xc0\xaf\",\"op\":\"ping\"}", PF_E_BAD_FRAME,
               "payload is not valid UTF-8 at offset 7");
    EXPECT_ERR("{\"id\":\"\xed\xa0\x80\",\"op\":\"ping\"}", PF_E_BAD_FRAME,
               "payload is not valid UTF-8 at offset 7");
    EXPECT_ERR("{\"id\":1,\"op\":\"ping\"}\xe2\x82", PF_E_BAD_FRAME,
               "payload is not valid UTF-8 at offset 20");
    EXPECT_ERR("{\"id\":\"\xff\",\"op\":\"ping\"}", PF_E_BAD_FRAME,
               "payload is not valid UTF-8 at offset 7");
    /* A lone surrogate escape is cJSON's to refuse: still a bad frame. */
    EXPECT_ERR("{\"id\":\"\\ud800\",\"op\":\"ping\"}", PF_E_BAD_FRAME, "invalid JSON at offset 7");
}

/* One byte-order mark as the very first bytes is ignored (RFC 8259 8.1 allows it; PROTOCOL.md
 * says so); anywhere else it is a bad frame. */
static void
test_leading_bom(void **state)
{
    (void) state;
    struct msg_request r = expect_request_ok("\xef\xbb\xbf{\"id\":1,\"op\":\"ping\"}", MSG_OP_PING);
    msg_request_finish(&r);
    EXPECT_ERR(" \xef\xbb\xbf{\"id\":1,\"op\":\"ping\"}", PF_E_BAD_FRAME,
               "invalid JSON at offset 1");
    EXPECT_ERR("\xef\xbb\xbf\xef\xbb\xbf{\"id\":1,\"op\":\"ping\"}", PF_E_BAD_FRAME,
               "invalid JSON at offset 3");
    EXPECT_ERR("{\"id\":1,\"op\":\"ping\"}\xef\xbb\xbf", PF_E_BAD_FRAME,
               "trailing data after the JSON value at offset 20");
}

static void
test_bad_json(void **state)
{
    (void) state;
    EXPECT_ERR("", PF_E_BAD_FRAME, "payload is empty, expected a JSON object");
    EXPECT_ERR("{\"id\":1,", PF_E_BAD_FRAME, "invalid JSON at offset 7");
    EXPECT_ERR("{'id':1}", PF_E_BAD_FRAME, "invalid JSON at offset 2");
    EXPECT_ERR("{\"id\":1,\"op\":\"ping\"} {}", PF_E_BAD_FRAME,
               "trailing data after the JSON value at offset 21");
    EXPECT_ERR("{\"id\":1,\"op\":\"ping\"}x", PF_E_BAD_FRAME,
               "trailing data after the JSON value at offset 20");
    EXPECT_ERR("[1,2]", PF_E_BAD_FRAME, "top level is an array, expected an object");
    EXPECT_ERR("\"str\"", PF_E_BAD_FRAME, "top level is a string, expected an object");
    EXPECT_ERR("42", PF_E_BAD_FRAME, "top level is a number, expected an object");
    EXPECT_ERR("null", PF_E_BAD_FRAME, "top level is null, expected an object");
    /* A raw NUL inside the payload must not end parsing early and pass. */
    expect_request_error("{\"id\":1,\"op\":\"ping\"}\0garbage", 28, PF_E_BAD_FRAME,
                         "trailing data after the JSON value at offset 20");
    /* cJSON would take these to strtod; JSON does not allow them. */
    EXPECT_ERR("{\"id\":01,\"op\":\"ping\"}", PF_E_BAD_FRAME, "malformed number at offset 6");
    EXPECT_ERR("{\"id\":1.,\"op\":\"ping\"}", PF_E_BAD_FRAME, "malformed number at offset 6");
    EXPECT_ERR("{\"id\":-.5,\"op\":\"ping\"}", PF_E_BAD_FRAME, "malformed number at offset 6");
    EXPECT_ERR("{\"id\":1e,\"op\":\"ping\"}", PF_E_BAD_FRAME, "malformed number at offset 6");
    EXPECT_ERR("{\"id\":1e+-2,\"op\":\"ping\"}", PF_E_BAD_FRAME, "malformed number at offset 6");
    EXPECT_ERR("{\"id\":--1,\"op\":\"ping\"}", PF_E_BAD_FRAME, "malformed number at offset 6");
    struct msg_request r =
            expect_request_ok("{\"id\":0,\"op\":\"exec\",\"code\":\"\",\"variables\":"
                              "{\"a\":[-0,0.5,-1.25e-3,1E+2,10e0,-0.0e-0]}}",
                              MSG_OP_EXEC);
    msg_request_finish(&r);
    EXPECT_ERR("{\"id\":\"a\x01\",\"op\":\"ping\"}", PF_E_BAD_FRAME,
               "unescaped control character 0x01 in a string at offset 8");
}

static void
test_duplicate_keys(void **state)
{
    (void) state;
    EXPECT_ERR("{\"id\":1,\"op\":\"ping\",\"op\":\"exec\"}", PF_E_BAD_FRAME,
               "duplicate key 'op' in the top-level object");
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"limits\":{\"a\":1,\"b\":2,\"a\":3}}",
               PF_E_BAD_FRAME, "duplicate key 'a' in object 'limits'");
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"variables\":{\"x\":[{\"k\":1,\"k\":1}]}}",
               PF_E_BAD_FRAME, "duplicate key 'k' in object 'x'");
    /* Keys differing only in case are distinct. */
    struct msg_request r = expect_request_ok(
            "{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"variables\":{\"a\":1,\"A\":2}}",
            MSG_OP_EXEC);
    msg_request_finish(&r);
}

/* {"id":1,"op":"exec","code":"","variables":{"v":[[...]]}} with total depth `depth`. */
#define NEST_HEAD "{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"variables\":{\"v\":"

static char *
nested(int depth)
{
    const char *head = NEST_HEAD;
    int arrays = depth - 2;
    size_t len = strlen(head) + 2 * (size_t) arrays + 3;
    char *s = malloc(len);
    assert_non_null(s);
    char *p = stpcpy(s, head);
    memset(p, '[', (size_t) arrays);
    p += arrays;
    memset(p, ']', (size_t) arrays);
    p += arrays;
    strcpy(p, "}}");
    return s;
}

static void
test_depth_limit(void **state)
{
    (void) state;
    char *s = nested(MSG_MAX_DEPTH);
    struct msg_request r = expect_request_ok(s, MSG_OP_EXEC);
    msg_request_finish(&r);
    free(s);

    s = nested(MSG_MAX_DEPTH + 1);
    char msg[128];
    /* The object and "variables" are two levels; the bracket that goes one over is the
     * (MSG_MAX_DEPTH - 1)th. */
    snprintf(msg, sizeof(msg), "JSON nested deeper than %d levels at offset %zu", MSG_MAX_DEPTH,
             strlen(NEST_HEAD) + MSG_MAX_DEPTH - 2);
    EXPECT_ERR(s, PF_E_BAD_FRAME, msg);
    free(s);

    /* Far beyond cJSON's own 1000: refused by the prescan, cJSON never recurses. */
    s = nested(100000);
    EXPECT_ERR(s, PF_E_BAD_FRAME, msg);
    free(s);

    /* Brackets inside strings do not count. */
    r = expect_request_ok(
            "{\"id\":\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
            "\\\"[[[[\",\"op\":\"ping\"}",
            MSG_OP_PING);
    msg_request_finish(&r);

    /* msg_parse's own max_depth is honoured. */
    cJSON *root = NULL;
    struct pf_error *err = NULL;
    assert_int_equal(msg_parse("{\"a\":{\"b\":{}}}", 14, 3, &root, &err), 0);
    cJSON_Delete(root);
    assert_int_equal(msg_parse("{\"a\":{\"b\":{}}}", 14, 2, &root, &err), -1);
    assert_string_equal(err->msg, "JSON nested deeper than 2 levels at offset 10");
    pf_error_free(err);
}

/* The deepest value the protocol promises, 64 containers in their deepest tagged form (a dict
 * with non-str keys: object, items, pair: 3 levels each) around a tagged leaf, fits a request,
 * in an exec and in a session.open. */
static void
test_depth_fits_tagged_values(void **state)
{
    (void) state;
    static const char open_dict[] = "{\"$type\":\"dict\",\"items\":[[1,";
    static const char close_dict[] = "]]}";
    static const char leaf[] = "{\"$type\":\"bytes\",\"base64\":\"aGk=\"}";
    const char *heads[] = {"{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"variables\":{\"v\":",
                           "{\"id\":1,\"op\":\"session.open\",\"variables\":{\"v\":"};
    const enum msg_op ops[] = {MSG_OP_EXEC, MSG_OP_SESSION_OPEN};
    for (size_t h = 0; h < PF_ELEMENTSOF(heads); h++) {
        size_t len =
                strlen(heads[h]) + 64 * (sizeof(open_dict) + sizeof(close_dict)) + sizeof(leaf) + 3;
        char *s = malloc(len);
        assert_non_null(s);
        char *p = stpcpy(s, heads[h]);
        for (int i = 0; i < 64; i++)
            p = stpcpy(p, open_dict);
        p = stpcpy(p, leaf);
        for (int i = 0; i < 64; i++)
            p = stpcpy(p, close_dict);
        strcpy(p, "}}");
        /* 2 request levels + 64 * 3 + the leaf's object = 195. */
        struct msg_request r = expect_request_ok(s, ops[h]);
        msg_request_finish(&r);
        free(s);
    }
}

static void
test_nul_in_string(void **state)
{
    (void) state;
    EXPECT_ERR("{\"id\":\"a\\u0000b\",\"op\":\"ping\"}", PF_E_BAD_FRAME,
               "string contains a NUL character (\\u0000) at offset 8");
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"variables\":{\"a\\u0000x\":1}}",
               PF_E_BAD_FRAME, "string contains a NUL character (\\u0000) at offset 45");
    /* An escaped backslash followed by u0000 is just text. */
    struct msg_request r =
            expect_request_ok("{\"id\":\"a\\\\u0000\",\"op\":\"ping\"}", MSG_OP_PING);
    assert_string_equal(r.id->valuestring, "a\\u0000");
    msg_request_finish(&r);
}

static void
test_wrong_types_and_fields(void **state)
{
    (void) state;
    EXPECT_ERR("{\"op\":\"ping\"}", PF_E_BAD_REQUEST, "field 'id' is missing");
    EXPECT_ERR("{\"id\":1}", PF_E_BAD_REQUEST, "field 'op' is missing");
    EXPECT_ERR("{\"id\":1,\"op\":7}", PF_E_BAD_REQUEST,
               "field 'op': expected a string, got a number");
    EXPECT_ERR("{\"id\":true,\"op\":\"ping\"}", PF_E_BAD_REQUEST,
               "request: field 'id': expected a string or an integer, got a boolean");
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\"}", PF_E_BAD_REQUEST,
               "exec request: field 'code' is missing");
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\",\"code\":5}", PF_E_BAD_REQUEST,
               "exec request: field 'code': expected a string, got a number");
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"stream\":1}", PF_E_BAD_REQUEST,
               "exec request: field 'stream': expected a boolean, got a number");
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"limits\":[]}", PF_E_BAD_REQUEST,
               "exec request: field 'limits': expected an object, got an array");
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"imports\":\"os\"}", PF_E_BAD_REQUEST,
               "exec request: field 'imports': expected an array, got a string");
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"imports\":[\"os\",null]}",
               PF_E_BAD_REQUEST,
               "exec request: field 'imports': item 1 is null, expected a string");
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"timeout\":5}", PF_E_BAD_REQUEST,
               "exec request: field 'timeout' is not allowed");
    EXPECT_ERR("{\"id\":1,\"op\":\"ping\",\"code\":\"\"}", PF_E_BAD_REQUEST,
               "ping request: field 'code' is not allowed");

    char client[400];
    snprintf(client, sizeof(client), "{\"id\":1,\"op\":\"hello\",\"client\":\"%0257d\"}", 0);
    EXPECT_ERR(client, PF_E_BAD_REQUEST,
               "hello request: field 'client': string of 257 bytes exceeds maximum 256");
    char id[400];
    snprintf(id, sizeof(id), "{\"id\":\"%0257d\",\"op\":\"ping\"}", 0);
    EXPECT_ERR(id, PF_E_BAD_REQUEST,
               "request: field 'id': string of 257 bytes exceeds maximum 256");

    char imports[1024] = "{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"imports\":[";
    for (int i = 0; i < 65; i++)
        strcat(imports, i ? ",\"m\"" : "\"m\"");
    strcat(imports, "]}");
    EXPECT_ERR(imports, PF_E_BAD_REQUEST,
               "exec request: field 'imports': 65 items exceed the maximum of 64");
}

static void
test_id_integer_range(void **state)
{
    (void) state;
    EXPECT_ERR("{\"id\":-1,\"op\":\"ping\"}", PF_E_BAD_REQUEST,
               "request: field 'id': -1 is negative (an id is a string or an integer in [0, 2^53 - "
               "1])");
    EXPECT_ERR("{\"id\":1.5,\"op\":\"ping\"}", PF_E_BAD_REQUEST,
               "request: field 'id': 1.5 is not an integer (an id is a string or an integer in "
               "[0, 2^53 - 1])");
    EXPECT_ERR("{\"id\":9007199254740994,\"op\":\"ping\"}", PF_E_BAD_REQUEST,
               "request: field 'id': 9007199254740994 is outside the exact integer range of "
               "+/-(2^53 - 1) (an id is a string or an integer in [0, 2^53 - 1])");
    /* 9007199254740993 reads as the double 2^53: refused, not echoed back rounded. */
    EXPECT_ERR("{\"id\":9007199254740993,\"op\":\"ping\"}", PF_E_BAD_REQUEST,
               "request: field 'id': 9007199254740992 is outside the exact integer range of "
               "+/-(2^53 - 1) (an id is a string or an integer in [0, 2^53 - 1])");
    EXPECT_ERR("{\"id\":9007199254740992,\"op\":\"ping\"}", PF_E_BAD_REQUEST,
               "request: field 'id': 9007199254740992 is outside the exact integer range of "
               "+/-(2^53 - 1) (an id is a string or an integer in [0, 2^53 - 1])");
    /* A text that reads back as an integral double counts as that integer. */
    struct msg_request r = expect_request_ok("{\"id\":1e-400,\"op\":\"ping\"}", MSG_OP_PING);
    assert_true(r.id->valuedouble == 0);
    msg_request_finish(&r);
    /* cJSON reads 1e400 as infinity: refused as malformed before any schema sees it. */
    EXPECT_ERR("{\"id\":1e400,\"op\":\"ping\"}", PF_E_BAD_FRAME, "number out of range in 'id'");
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"variables\":{\"v\":[-1e999]}}",
               PF_E_BAD_FRAME, "number out of range in 'v'");
}

static void
test_check_fields_int_and_number(void **state)
{
    (void) state;
    static const struct msg_field fields[] = {
            {"n", MSG_T_INT, true, 1, 1000},
            {"x", MSG_T_NUMBER, false, -1, 1},
            {"big", MSG_T_INT, false, -9007199254740991.0, 9007199254740991.0},
            {"any", MSG_T_ANY, false, 0, 0},
    };
    static const struct {
        const char *json;
        const char *msg; /* NULL: accepted */
    } cases[] = {
            {"{\"n\": 1}", NULL},
            {"{\"n\": 1000, \"x\": -1, \"any\": [null]}", NULL},
            {"{\"n\": 1.0e2}", NULL},
            {"{\"n\": 0}", "t: field 'n': 0 is below minimum 1"},
            {"{\"n\": 1001}", "t: field 'n': 1001 exceeds maximum 1000"},
            {"{\"n\": 2.5}", "t: field 'n': 2.5 is not an integer"},
            {"{\"n\": \"3\"}", "t: field 'n': expected an integer, got a string"},
            {"{\"n\": 5, \"x\": 1.5}", "t: field 'x': 1.5 exceeds maximum 1"},
            {"{\"n\": 5, \"big\": -9007199254740991}", NULL},
            /* reads as 2^53: refused, not rounded */
            {"{\"n\": 5, \"big\": 9007199254740993}", "t: field 'big': 9007199254740992 is outside "
                                                      "the exact integer range of +/-(2^53 - 1)"},
            {"{\"n\": 5, \"big\": -9007199254740992}",
             "t: field 'big': -9007199254740992 is outside the exact integer range of +/-(2^53 - "
             "1)"},
            {"{\"x\": 0}", "t: field 'n' is missing"},
            {"{\"n\": 5, \"N\": 5}", "t: field 'N' is not allowed"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cJSON *obj = NULL;
        struct pf_error *err = NULL;
        assert_int_equal(msg_parse(cases[i].json, strlen(cases[i].json), 0, &obj, &err), 0);
        int r = msg_check_fields(obj, fields, sizeof(fields) / sizeof(fields[0]), "t", &err);
        if (!cases[i].msg) {
            if (r < 0)
                fail_msg("%s refused: %s", cases[i].json, err->msg);
        } else {
            if (r >= 0)
                fail_msg("%s accepted", cases[i].json);
            if (strcmp(err->msg, cases[i].msg) != 0)
                fail_msg("%s: got '%s', expected '%s'", cases[i].json, err->msg, cases[i].msg);
            assert_int_equal(err->code, PF_E_BAD_REQUEST);
        }
        pf_error_free(err);
        cJSON_Delete(obj);
    }

    /* valueint saturates at INT_MAX; msg_get_int reads the double. */
    cJSON *obj = NULL;
    struct pf_error *err = NULL;
    assert_int_equal(msg_parse("{\"big\": 5000000000, \"f\": 1.5}", 29, 0, &obj, &err), 0);
    assert_int_equal(msg_get_int(obj, "big", -1), 5000000000LL);
    assert_int_equal(msg_get_int(obj, "f", -1), -1);
    assert_int_equal(msg_get_int(obj, "missing", 7), 7);
    cJSON_Delete(obj);
}

static void
test_unknown_and_unsupported_ops(void **state)
{
    (void) state;
    EXPECT_ERR("{\"id\":1,\"op\":\"launch\"}", PF_E_UNKNOWN_OP, "unknown op 'launch'");
    EXPECT_ERR("{\"id\":1,\"op\":\"PING\"}", PF_E_UNKNOWN_OP, "unknown op 'PING'");
    /* Every op of the protocol is served now: cancel has its schema. */
    EXPECT_ERR("{\"id\":1,\"op\":\"cancel\"}", PF_E_BAD_REQUEST,
               "cancel request: field 'target' is missing");
    EXPECT_ERR("{\"id\":1,\"op\":\"cancel\",\"target\":true}", PF_E_BAD_REQUEST,
               "cancel request: field 'target': expected a string or an integer, got a boolean");
    EXPECT_ERR("{\"id\":1,\"op\":\"cancel\",\"target\":-1}", PF_E_BAD_REQUEST,
               "cancel request: field 'target': -1 is negative (an id is a string or an integer "
               "in [0, 2^53 - 1])");
    struct msg_request req =
            expect_request_ok("{\"id\":2,\"op\":\"cancel\",\"target\":\"job-1\"}", MSG_OP_CANCEL);
    assert_string_equal(cJSON_GetObjectItem(req.root, "target")->valuestring, "job-1");
    msg_request_finish(&req);

    for (int op = 0; op < _MSG_OP_MAX; op++)
        assert_non_null(msg_op_name((enum msg_op) op));
    assert_string_equal(msg_op_name(MSG_OP_SESSION_LIST), "session.list");
    assert_string_equal(msg_op_name(MSG_OP_EXEC), "exec");
    assert_null(msg_op_name(_MSG_OP_MAX));
    assert_null(msg_op_name(_MSG_OP_INVALID));
}

static void
test_session_schemas(void **state)
{
    (void) state;
    struct msg_request r;
    r = expect_request_ok("{\"id\":1,\"op\":\"session.open\"}", MSG_OP_SESSION_OPEN);
    msg_request_finish(&r);
    r = expect_request_ok("{\"id\":1,\"op\":\"session.open\",\"profile\":\"strict\","
                          "\"limits\":{\"timeout_ms\":500},\"imports\":[\"json\"],"
                          "\"variables\":{\"x\":1},\"detach\":true}",
                          MSG_OP_SESSION_OPEN);
    assert_true(msg_get_bool(r.root, "detach", false));
    msg_request_finish(&r);
    r = expect_request_ok("{\"id\":2,\"op\":\"session.close\",\"session\":\"ab\"}",
                          MSG_OP_SESSION_CLOSE);
    msg_request_finish(&r);
    r = expect_request_ok("{\"id\":3,\"op\":\"session.list\"}", MSG_OP_SESSION_LIST);
    msg_request_finish(&r);
    r = expect_request_ok("{\"id\":4,\"op\":\"session.get\",\"session\":\"ab\","
                          "\"names\":[\"x\",\"y\"]}",
                          MSG_OP_SESSION_GET);
    msg_request_finish(&r);
    r = expect_request_ok("{\"id\":5,\"op\":\"exec\",\"code\":\"x\",\"session\":\"ab\"}",
                          MSG_OP_EXEC);
    assert_string_equal(msg_get_string(r.root, "session", NULL), "ab");
    msg_request_finish(&r);

    EXPECT_ERR("{\"id\":1,\"op\":\"session.open\",\"detach\":1}", PF_E_BAD_REQUEST,
               "session.open request: field 'detach': expected a boolean, got a number");
    EXPECT_ERR("{\"id\":1,\"op\":\"session.open\",\"profile\":\"\"}", PF_E_BAD_REQUEST,
               "session.open request: field 'profile': string of 0 bytes is below minimum 1");
    EXPECT_ERR("{\"id\":1,\"op\":\"session.open\",\"code\":\"x\"}", PF_E_BAD_REQUEST,
               "session.open request: field 'code' is not allowed");
    EXPECT_ERR("{\"id\":1,\"op\":\"session.close\"}", PF_E_BAD_REQUEST,
               "session.close request: field 'session' is missing");
    EXPECT_ERR("{\"id\":1,\"op\":\"session.close\",\"session\":7}", PF_E_BAD_REQUEST,
               "session.close request: field 'session': expected a string, got a number");
    EXPECT_ERR("{\"id\":1,\"op\":\"session.list\",\"session\":\"a\"}", PF_E_BAD_REQUEST,
               "session.list request: field 'session' is not allowed");
    EXPECT_ERR("{\"id\":1,\"op\":\"session.get\",\"session\":\"a\"}", PF_E_BAD_REQUEST,
               "session.get request: field 'names' is missing");
    EXPECT_ERR("{\"id\":1,\"op\":\"session.get\",\"session\":\"a\",\"names\":[1]}",
               PF_E_BAD_REQUEST,
               "session.get request: field 'names': item 0 is a number, expected a string");
    /* session.get's names are a set: its reply, an object keyed by name, holds each once. */
    EXPECT_ERR("{\"id\":1,\"op\":\"session.get\",\"session\":\"s\",\"names\":[\"a\",\"b\","
               "\"a\"]}",
               PF_E_BAD_REQUEST, "session.get request: field 'names': item 2 'a' repeats item 0");
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\",\"code\":\"\",\"session\":\"\"}", PF_E_BAD_REQUEST,
               "exec request: field 'session': string of 0 bytes is below minimum 1");

    /* An ephemeral exec may name a profile, as session.open does: 1 to 64 bytes. (With a
     * session the daemon refuses it: the session's profile was fixed at open.) */
    r = expect_request_ok("{\"id\":6,\"op\":\"exec\",\"code\":\"x\",\"profile\":\"strict\"}",
                          MSG_OP_EXEC);
    assert_string_equal(msg_get_string(r.root, "profile", NULL), "strict");
    msg_request_finish(&r);
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\",\"code\":\"x\",\"profile\":\"\"}", PF_E_BAD_REQUEST,
               "exec request: field 'profile': string of 0 bytes is below minimum 1");
    EXPECT_ERR("{\"id\":1,\"op\":\"exec\",\"code\":\"x\",\"profile\":7}", PF_E_BAD_REQUEST,
               "exec request: field 'profile': expected a string, got a number");
    char name[66];
    for (size_t len = 64; len <= 65; len++) {
        memset(name, 'p', len);
        name[len] = '\0';
        char req[160];
        snprintf(req, sizeof(req), "{\"id\":1,\"op\":\"exec\",\"code\":\"x\",\"profile\":\"%s\"}",
                 name);
        if (len == 64) {
            r = expect_request_ok(req, MSG_OP_EXEC);
            msg_request_finish(&r);
        } else {
            EXPECT_ERR(req, PF_E_BAD_REQUEST,
                       "exec request: field 'profile': string of 65 bytes exceeds maximum 64");
        }
    }

    /* 256 names pass, 257 do not. */
    char buf[8192];
    for (int n = 256; n <= 257; n++) {
        size_t len = (size_t) snprintf(
                buf, sizeof(buf), "{\"id\":1,\"op\":\"session.get\",\"session\":\"a\",\"names\":[");
        for (int i = 0; i < n; i++)
            len += (size_t) snprintf(buf + len, sizeof(buf) - len, "%s\"v%d\"", i ? "," : "", i);
        snprintf(buf + len, sizeof(buf) - len, "]}");
        if (n == 256) {
            r = expect_request_ok(buf, MSG_OP_SESSION_GET);
            msg_request_finish(&r);
        } else {
            EXPECT_ERR(buf, PF_E_BAD_REQUEST,
                       "session.get request: field 'names': 257 items exceed the maximum of 256");
        }
    }
    /* A session id longer than any real one is refused by the schema. */
    char id[MSG_SESSION_ID_MAX + 2];
    memset(id, 'a', sizeof(id) - 1);
    id[sizeof(id) - 1] = '\0';
    snprintf(buf, sizeof(buf), "{\"id\":1,\"op\":\"session.close\",\"session\":\"%s\"}", id);
    EXPECT_ERR(buf, PF_E_BAD_REQUEST,
               "session.close request: field 'session': string of 65 bytes exceeds maximum 64");
}

static void
test_id_copy_on_failure(void **state)
{
    (void) state;
    struct msg_request req;
    struct pf_error *err = NULL;
    cJSON *id = NULL;
    const char *t = "{\"id\":\"req-7\",\"op\":\"exec\",\"code\":1}";
    assert_int_equal(msg_request_parse(t, strlen(t), 0, &req, &id, &err), -1);
    assert_true(cJSON_IsString(id));
    assert_string_equal(id->valuestring, "req-7");
    cJSON_Delete(id);
    err = pf_error_free(err);

    t = "{\"id\":42,\"op\":\"nope\"}";
    assert_int_equal(msg_request_parse(t, strlen(t), 0, &req, &id, &err), -1);
    assert_true(cJSON_IsNumber(id));
    assert_int_equal(id->valuedouble, 42);
    cJSON_Delete(id);
    err = pf_error_free(err);

    /* Before the id is known (bad JSON, bad id) no copy is made. */
    id = (cJSON *) 0x1;
    t = "{\"id\":42,";
    assert_int_equal(msg_request_parse(t, strlen(t), 0, &req, &id, &err), -1);
    assert_null(id);
    err = pf_error_free(err);
    id = (cJSON *) 0x1;
    t = "{\"id\":[1],\"op\":\"ping\"}";
    assert_int_equal(msg_request_parse(t, strlen(t), 0, &req, &id, &err), -1);
    assert_null(id);
    err = pf_error_free(err);

    /* ret_id_copy may be NULL. */
    t = "{\"id\":42,\"op\":\"nope\"}";
    assert_int_equal(msg_request_parse(t, strlen(t), 0, &req, NULL, &err), -1);
    err = pf_error_free(err);
}

static char *
encode_payload(const cJSON *obj)
{
    char *buf;
    size_t len;
    struct pf_error *err = NULL;
    assert_int_equal(msg_encode(obj, 0, &buf, &len, &err), 0);
    uint32_t n = ((uint32_t) (unsigned char) buf[0] << 24) |
                 ((uint32_t) (unsigned char) buf[1] << 16) |
                 ((uint32_t) (unsigned char) buf[2] << 8) | (unsigned char) buf[3];
    assert_int_equal(n, len - FRAME_HEADER_BYTES);
    char *s = strndup(buf + FRAME_HEADER_BYTES, n);
    free(buf);
    return s;
}

static void
test_reply_shapes(void **state)
{
    (void) state;
    cJSON *id = cJSON_CreateString("a\"b");
    cJSON *o = msg_reply_ok(id);
    char *s = encode_payload(o);
    assert_string_equal(s, "{\"id\":\"a\\\"b\",\"ok\":true}");
    free(s);
    cJSON_Delete(o);

    o = msg_reply_error(NULL, PF_E_TOO_LARGE, "frame of 9 bytes exceeds max_frame_bytes 8");
    s = encode_payload(o);
    assert_string_equal(s, "{\"id\":null,\"ok\":false,\"error\":{\"code\":\"too_large\","
                           "\"message\":\"frame of 9 bytes exceeds max_frame_bytes 8\"}}");
    free(s);
    cJSON_Delete(o);

    /* Invalid UTF-8 in a message becomes U+FFFD instead of poisoning the reply. */
    o = msg_reply_error(id, PF_E_ERROR, "bad \xff byte \xe2\x82");
    s = encode_payload(o);
    assert_string_equal(s, "{\"id\":\"a\\\"b\",\"ok\":false,\"error\":{\"code\":\"error\","
                           "\"message\":\"bad \xef\xbf\xbd byte \xef\xbf\xbd\xef\xbf\xbd\"}}");
    free(s);
    cJSON_Delete(o);

    cJSON *num = cJSON_CreateNumber(9007199254740992.0);
    o = msg_event(num, "output");
    cJSON_AddStringToObject(o, "data", "hi\n");
    s = encode_payload(o);
    assert_string_equal(s, "{\"id\":9007199254740992,\"event\":\"output\",\"data\":\"hi\\n\"}");
    free(s);
    cJSON_Delete(o);
    cJSON_Delete(num);

    /* A reply must round-trip through our own strict parser. */
    o = msg_reply_ok(id);
    s = encode_payload(o);
    cJSON *back = NULL;
    struct pf_error *err = NULL;
    assert_int_equal(msg_parse(s, strlen(s), 0, &back, &err), 0);
    assert_true(cJSON_Compare(o, back, 1));
    cJSON_Delete(back);
    free(s);
    cJSON_Delete(o);

    /* An invalid string sneaked into a reply is refused at encode time. */
    o = msg_reply_ok(id);
    cJSON_AddStringToObject(o, "output", "\xc0\xaf");
    char *buf = NULL;
    size_t len;
    assert_int_equal(msg_encode(o, 0, &buf, &len, &err), -1);
    assert_int_equal(err->code, PF_E_INTERNAL);
    assert_null(buf);
    err = pf_error_free(err);

    /* Over the frame limit. */
    assert_int_equal(msg_encode(o, 10, &buf, &len, &err), -1);
    err = pf_error_free(err);
    cJSON_Delete(o);
    cJSON_Delete(id);
}

/* cJSON's own printer would send 2^53 as 9.00719925474099e+15 and 0.1+0.2 as 0.3. */
static void
test_encode_exact_numbers_and_escapes(void **state)
{
    (void) state;
    cJSON *o = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(o, "n");
    static const double nums[] = {
            9007199254740992.0,
            -9007199254740992.0,
            0.1 + 0.2,
            0.1,
            1e300,
            5e-324,
            -1e-310,
            2.2250738585072009e-308, /* the largest subnormal: 16 digits needed */
            -0.5,
            1e17,
            123456789012.0,
            NAN,
            INFINITY,
    };
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(nums[i]));
    cJSON_AddItemToArray(a, cJSON_CreateRaw("1.0"));
    cJSON_AddStringToObject(o, "s", "q\"b\\n\nt\tc\x01\x1f\x7f\xc3\xa9");
    cJSON_AddItemToObject(o, "e\n", cJSON_CreateObject());
    char *s = encode_payload(o);
    assert_string_equal(
            s,
            "{\"n\":[9007199254740992,-9007199254740992,0.30000000000000004,0.1,"
            "1e+300,5e-324,-1e-310,2.225073858507201e-308,-0.5,1e+17,123456789012,null,null,1.0],"
            "\"s\":\"q\\\"b\\\\n\\nt\\tc\\u0001\\u001f\x7f\xc3\xa9\","
            "\"e\\n\":{}}");

    /* Every number reads back to the same double through our own parser. */
    cJSON *back = NULL;
    struct pf_error *err = NULL;
    assert_int_equal(msg_parse(s, strlen(s), 0, &back, &err), 0);
    const cJSON *na = cJSON_GetObjectItemCaseSensitive(back, "n");
    for (size_t i = 0; i < 11; i++)
        assert_true(cJSON_GetArrayItem(na, (int) i)->valuedouble == nums[i]);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(back, "s")->valuestring,
                        "q\"b\\n\nt\tc\x01\x1f\x7f\xc3\xa9");
    cJSON_Delete(back);
    free(s);

    /* The size limit stops the writer; the message says so. */
    char *buf = NULL;
    size_t len;
    assert_int_equal(msg_encode(o, 16, &buf, &len, &err), -1);
    assert_int_equal(err->code, PF_E_TOO_LARGE);
    assert_null(buf);
    err = pf_error_free(err);
    cJSON_Delete(o);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_valid_requests),
            cmocka_unit_test(test_utf8_validator),
            cmocka_unit_test(test_utf8_matches_reference),
            cmocka_unit_test(test_bad_utf8_in_requests),
            cmocka_unit_test(test_leading_bom),
            cmocka_unit_test(test_bad_json),
            cmocka_unit_test(test_duplicate_keys),
            cmocka_unit_test(test_depth_limit),
            cmocka_unit_test(test_depth_fits_tagged_values),
            cmocka_unit_test(test_nul_in_string),
            cmocka_unit_test(test_wrong_types_and_fields),
            cmocka_unit_test(test_id_integer_range),
            cmocka_unit_test(test_check_fields_int_and_number),
            cmocka_unit_test(test_unknown_and_unsupported_ops),
            cmocka_unit_test(test_session_schemas),
            cmocka_unit_test(test_id_copy_on_failure),
            cmocka_unit_test(test_reply_shapes),
            cmocka_unit_test(test_encode_exact_numbers_and_escapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
