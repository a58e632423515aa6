/* libpyfence's structs sized by their caller (pyfence.h: each begins with its size, which its
 * _init macro sets), against the scripted server of libpyfence_fixture.c: one never initialised
 * is refused before anything is sent; one from an older pyfence.h is read and written within its
 * size only; one from a newer pyfence.h is taken while the bytes this library does not know are
 * zero. */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "libpyfence_fixture.h"
#include "pyfence.h"

/* Each byte of bytes[from, to) is still the canary 0xa5. */
static void
assert_canary(const unsigned char *bytes, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (bytes[i] != 0xa5)
            fail_msg("byte %zu, past the caller's size %zu, was written", i, from);
}

static void
assert_refused(int r, const struct pyfence_error *err, const char *needle)
{
    assert_int_equal(r, -PYFENCE_E_BAD_REQUEST);
    assert_string_equal(err->name, "bad_request");
    if (!strstr(err->message, needle))
        fail_msg("'%s' not in '%s'", needle, err->message);
}

/* Structs never initialised (size 0), or with a size no _init macro sets, are refused before
 * anything is sent, with the _init function to call. */
static void
test_uninitialised_structs_are_refused(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    uint64_t id = 0;
    struct pyfence_exec_options opts = {0};
    opts.timeout_ms = 5;
    assert_refused(pyfence_submit(conn, "1", &opts, &id, &err), &err,
                   "pyfence_exec_options.size is 0: initialise it with "
                   "pyfence_exec_options_init()");
    opts.size = 3;
    assert_refused(pyfence_submit(conn, "1", &opts, &id, &err), &err,
                   "pyfence_exec_options.size is 3, too small");
    opts.size = (size_t) 1 << 40; /* stack garbage, say: not read that far */
    assert_refused(pyfence_submit(conn, "1", &opts, &id, &err), &err,
                   "more than any pyfence.h makes it");
    struct pyfence_result res = {0};
    assert_refused(pyfence_exec(conn, "1", NULL, NULL, NULL, &res, &err), &err,
                   "pyfence_result.size is 0: initialise it with pyfence_result_init()");
    pyfence_result_finish(&res); /* frees nothing it cannot know it owns */
    struct pyfence_server_info info = {0};
    assert_refused(pyfence_hello(conn, NULL, &info, &err), &err,
                   "pyfence_server_info.size is 0: initialise it with "
                   "pyfence_server_info_init()");
    assert_int_equal(id, 0);
    assert_int_equal(pyfence_ping(conn, &err), 0);
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "ping", "id", "1"); /* the first request sent */
    fake_stop(f);
}

/* A wait with an uninitialised result is refused without taking the reply in, which a wait
 * with an initialised one then gets. */
static void
test_uninitialised_result_keeps_the_reply(void **state)
{
    const struct step s[] = {{.json = EXEC_OK}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    uint64_t id;
    assert_int_equal(pyfence_submit(conn, "1", NULL, &id, &err), 0);
    struct pyfence_result res = {0};
    assert_refused(pyfence_wait(conn, id, NULL, NULL, &res, &err), &err,
                   "pyfence_result.size is 0");
    pyfence_result_init(&res);
    assert_int_equal(pyfence_wait(conn, id, NULL, NULL, &res, &err), 0);
    assert_string_equal(res.output_repr, "42");
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_stop(f);
}

/* A program built when the exec options ended before `profile`: the library neither writes
 * nor reads past its size, and the options it does not have take their defaults. */
static void
test_older_exec_options(void **state)
{
    const struct step s[] = {{.json = EXEC_OK}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    const size_t size = offsetof(struct pyfence_exec_options, profile);
    union {
        struct pyfence_exec_options o;
        unsigned char bytes[sizeof(struct pyfence_exec_options)];
    } old;
    memset(&old, 0xa5, sizeof(old));
    pyfence_exec_options_init_size(&old.o, size);
    assert_canary(old.bytes, size, sizeof(old));
    assert_int_equal(old.o.size, size);
    assert_true(old.o.stream && old.o.n_imports == 0 && old.o.session == NULL);
    old.o.timeout_ms = 250;
    old.o.profile = "strict"; /* past its size: what the older caller has there */
    struct pyfence_error err = {0};
    struct pyfence_result res;
    pyfence_result_init(&res);
    assert_int_equal(pyfence_exec(conn, "1", &old.o, NULL, NULL, &res, &err), 0);
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "exec", "code", "1");
    cJSON *req = cJSON_Parse(f->requests[0]);
    assert_non_null(req);
    assert_null(cJSON_GetObjectItemCaseSensitive(req, "profile"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "stream")));
    const cJSON *limits = cJSON_GetObjectItemCaseSensitive(req, "limits");
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(limits, "timeout_ms")),
                     250);
    cJSON_Delete(req);
    fake_stop(f);
}

/* A program built against a newer pyfence.h, whose exec options have 16 more bytes: _init
 * zeroes them, which this library accepts; one set is refused, by its offset. */
static void
test_newer_exec_options(void **state)
{
    const struct step s[] = {{.json = EXEC_OK}, {.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    enum { OURS = sizeof(struct pyfence_exec_options), NEWER = OURS + 16 };
    union {
        struct pyfence_exec_options o;
        unsigned char bytes[NEWER];
    } newer;
    memset(&newer, 0xa5, sizeof(newer));
    pyfence_exec_options_init_size(&newer.o, NEWER);
    assert_int_equal(newer.o.size, NEWER);
    for (size_t i = OURS; i < NEWER; i++)
        assert_int_equal(newer.bytes[i], 0);
    newer.o.profile = "strict";
    struct pyfence_error err = {0};
    uint64_t id;
    assert_int_equal(pyfence_submit(conn, "1", &newer.o, &id, &err), 0);
    newer.bytes[OURS + 5] = 1;
    assert_refused(pyfence_submit(conn, "1", &newer.o, &id, &err), &err,
                   "pyfence_exec_options: byte ");
    char want[128];
    snprintf(want, sizeof(want), "byte %d is set, but this libpyfence (%s) knows only its first %d",
             OURS + 5, PYFENCE_VERSION_STRING, OURS);
    assert_refused(pyfence_submit(conn, "1", &newer.o, &id, &err), &err, want);
    assert_int_equal(pyfence_ping(conn, &err), 0); /* nothing was sent for it */
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "exec", "profile", "strict");
    assert_request(f, 1, "ping", "id", "2");
    fake_stop(f);
}

/* A result that ends before reply_json: the library writes nothing past its size, frees the
 * reply_json it does not hand over (the ASan build checks), and hands over the rest. */
static void
test_older_result(void **state)
{
    const struct step s[] = {{.json = EXEC_OK}, {.json = EXEC_OK}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    const size_t size = offsetof(struct pyfence_result, reply_json);
    union {
        struct pyfence_result r;
        unsigned char bytes[sizeof(struct pyfence_result)];
    } old;
    memset(&old, 0xa5, sizeof(old));
    pyfence_result_init_size(&old.r, 4); /* less than the size itself: still only 4 bytes */
    assert_canary(old.bytes, 4, sizeof(old));
    pyfence_result_init_size(&old.r, size);
    assert_canary(old.bytes, size, sizeof(old));
    struct pyfence_error err = {0};
    /* Twice: the second wait frees what the first handed over. */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pyfence_exec(conn, "1", NULL, NULL, NULL, &old.r, &err), 0);
        assert_canary(old.bytes, size, sizeof(old));
        assert_int_equal(old.r.size, size);
        assert_true(old.r.ok);
        assert_string_equal(old.r.outcome, "ok");
        assert_string_equal(old.r.output_repr, "42");
        assert_string_equal(old.r.logs, "a\nb\n");
        assert_int_equal(old.r.stats.max_rss_kb, 999);
    }
    pyfence_result_finish(&old.r);
    assert_canary(old.bytes, size, sizeof(old));
    assert_int_equal(old.r.size, size);
    assert_null(old.r.outcome);
    pyfence_close(conn);
    fake_stop(f);
}

/* The same for the server info of hello. */
static void
test_older_server_info(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true, \"server\": \"pyfenced\", "
                                      "\"version\": \"0.1.0\", \"python\": \"3.11.2\", "
                                      "\"protocol\": 1}"}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    const size_t size = offsetof(struct pyfence_server_info, reply_json);
    union {
        struct pyfence_server_info i;
        unsigned char bytes[sizeof(struct pyfence_server_info)];
    } old;
    memset(&old, 0xa5, sizeof(old));
    pyfence_server_info_init_size(&old.i, size);
    struct pyfence_error err = {0};
    assert_int_equal(pyfence_hello(conn, "unit", &old.i, &err), 0);
    assert_canary(old.bytes, size, sizeof(old));
    assert_string_equal(old.i.server, "pyfenced");
    assert_int_equal(old.i.protocol, 1);
    pyfence_close(conn);
    fake_stop(f);
}

/* Session options: never initialised, refused before anything is sent; from a program built
 * when they ended before `detach`, read within their size only. */
static void
test_session_options_sizes(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true, \"session\": \"" SID "\"}"}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    char id[PYFENCE_SESSION_ID_LEN + 1] = "";
    struct pyfence_session_options zero = {0};
    zero.profile = "calc";
    assert_refused(pyfence_session_open(conn, &zero, id, &err), &err,
                   "pyfence_session_options.size is 0: initialise it with "
                   "pyfence_session_options_init()");
    assert_string_equal(id, "");
    const size_t size = offsetof(struct pyfence_session_options, detach);
    union {
        struct pyfence_session_options o;
        unsigned char bytes[sizeof(struct pyfence_session_options)];
    } old;
    memset(&old, 0xa5, sizeof(old));
    pyfence_session_options_init_size(&old.o, size);
    assert_canary(old.bytes, size, sizeof(old));
    old.o.profile = "calc";
    old.o.detach = true; /* past its size */
    assert_int_equal(pyfence_session_open(conn, &old.o, id, &err), 0);
    assert_string_equal(id, SID);
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "session.open", "profile", "calc");
    assert_request(f, 0, "session.open", "id", "1"); /* nothing was sent before */
    cJSON *req = cJSON_Parse(f->requests[0]);
    assert_non_null(req);
    assert_null(cJSON_GetObjectItemCaseSensitive(req, "detach"));
    cJSON_Delete(req);
    fake_stop(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_uninitialised_structs_are_refused),
            cmocka_unit_test(test_uninitialised_result_keeps_the_reply),
            cmocka_unit_test(test_older_exec_options),
            cmocka_unit_test(test_newer_exec_options),
            cmocka_unit_test(test_older_result),
            cmocka_unit_test(test_older_server_info),
            cmocka_unit_test(test_session_options_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
