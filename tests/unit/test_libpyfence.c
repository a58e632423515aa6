/* libpyfence against the scripted server of libpyfence_fixture.c: request shapes, pipelining and
 * id matching, events, and every way a server can misbehave (unexpected id, duplicate keys, bad
 * length, id-less refusal, close mid-frame); hello and the code names. Waits and signals are in
 * test_libpyfence_signal.c, the structs sized by their caller in test_libpyfence_struct.c. Only
 * the public pyfence.h API is used. */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "libpyfence_fixture.h"
#include "pyfence.h"

static void
test_exec_request_and_result(void **state)
{
    /* One request, several frames in answer: output events (and an unknown event, which
     * is ignored) then the reply. */
    char frames[2048];
    const char *parts[] = {
            "{\"id\": 1, \"event\": \"output\", \"data\": \"a\\n\"}",
            "{\"id\": 1, \"event\": \"tool_call\", \"name\": \"x\"}",
            "{\"id\": 1, \"event\": \"output\", \"data\": \"b\\n\"}",
            "{\"id\": 1, \"ok\": true, \"outcome\": \"ok\", \"output\": {\"$type\": \"tuple\", "
            "\"items\": [1]}, \"output_repr\": \"(1,)\", \"logs\": \"a\\nb\\n\", "
            "\"is_final_answer\": true, \"stats\": {\"ops\": 7, \"run_ms\": 1.5, \"queue_ms\": "
            "0.25, \"cpu_ms\": 3, \"max_rss_kb\": 999}}",
    };
    size_t off = build_frames(frames, parts, 4);
    const struct step s[] = {{.raw = frames, .raw_len = off}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);

    struct pyfence_result res;
    struct pyfence_error err = {0};
    struct captured out = {{0}};
    pyfence_result_init(&res);
    assert_int_equal(pyfence_exec(conn, "print(1)", NULL, capture, &out, &res, &err), 0);
    assert_string_equal(out.buf, "a\nb\n");
    assert_true(res.ok);
    assert_int_equal(res.outcome_code, PYFENCE_OK);
    assert_string_equal(res.outcome, "ok");
    assert_string_equal(res.output_json, "{\"$type\":\"tuple\",\"items\":[1]}");
    assert_string_equal(res.output_repr, "(1,)");
    assert_string_equal(res.logs, "a\nb\n");
    assert_true(res.is_final_answer);
    assert_int_equal(res.stats.ops, 7);
    assert_int_equal(res.stats.max_rss_kb, 999);
    assert_true(res.stats.queue_ms == 0.25 && res.stats.run_ms == 1.5);
    assert_null(res.error.message);
    assert_non_null(strstr(res.reply_json, "\"is_final_answer\":true"));
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_stop(f);
}

static void
test_pipelined_reverse(void **state)
{
    /* Requests 1 and 2 are answered together, 2 first, with 1's output event between. */
    const char *parts[] = {
            "{\"id\": 2, \"event\": \"output\", \"data\": \"two\"}",
            "{\"id\": 1, \"event\": \"output\", \"data\": \"one\"}",
            "{\"id\": 2, \"ok\": true, \"outcome\": \"ok\", \"output_repr\": \"2\"}",
            "{\"id\": 1, \"ok\": true, \"outcome\": \"ok\", \"output_repr\": \"1\"}",
    };
    char frames[1024];
    const struct step s[] = {{.json = NULL},
                             {.raw = frames, .raw_len = build_frames(frames, parts, 4)}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    uint64_t id1, id2;
    assert_int_equal(pyfence_submit(conn, "one", NULL, &id1, &err), 0);
    assert_int_equal(pyfence_submit(conn, "two", NULL, &id2, &err), 0);
    assert_true(id1 == 1 && id2 == 2);
    struct pyfence_result res;
    struct captured out1 = {{0}}, out2 = {{0}};
    pyfence_result_init(&res);
    assert_int_equal(pyfence_wait(conn, id1, capture, &out1, &res, &err), 0);
    assert_string_equal(res.output_repr, "1");
    assert_string_equal(out1.buf, "one");
    assert_int_equal(pyfence_wait(conn, id2, capture, &out2, &res, &err), 0);
    assert_string_equal(res.output_repr, "2");
    assert_string_equal(out2.buf, "two"); /* kept for id 2 while id 1 was waited for */
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_stop(f);
}

/* Many large requests sent before any reply is read, each answered with a large reply: the server
 * blocks writing and stops reading, so a client that only sent would block too. libpyfence takes
 * replies in while it sends. */
static void
test_pipelining_does_not_deadlock(void **state)
{
    enum { N = 200, LOGS = 60000 };
    /* A template for the fake server: %1$llu becomes each request's id. */
    static const char head[] = "{\"id\": %1$llu, \"ok\": true, \"outcome\": \"ok\", \"logs\": \"";
    size_t n = sizeof(head) - 1;
    char *json = malloc(n + LOGS + 3);
    assert_non_null(json);
    memcpy(json, head, n);
    memset(json + n, 'x', LOGS);
    strcpy(json + n + LOGS, "\"}");
    struct step *steps = calloc(N, sizeof(*steps));
    assert_non_null(steps);
    for (size_t i = 0; i < N; i++)
        steps[i].json = json;
    struct fake *f = fake_start(steps, N);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    uint64_t ids[N];
    char *code = malloc(LOGS + 1); /* big requests too, so that sending blocks */
    assert_non_null(code);
    memset(code, '#', LOGS);
    code[LOGS] = '\0';
    for (size_t i = 0; i < N; i++)
        assert_int_equal(pyfence_submit(conn, code, NULL, &ids[i], &err), 0);
    free(code);
    struct pyfence_result res;
    pyfence_result_init(&res);
    for (size_t i = N; i-- > 0;) {
        assert_int_equal(pyfence_wait(conn, ids[i], NULL, NULL, &res, &err), 0);
        assert_int_equal(strlen(res.logs), LOGS);
    }
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_stop(f);
    free(steps);
    free(json);
}

static void
test_request_shape(void **state)
{
    const struct step s[] = {{.json = EXEC_OK}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    const char *imports[] = {"json"};
    struct pyfence_exec_options opts;
    pyfence_exec_options_init(&opts);
    opts.imports = imports;
    opts.n_imports = 1;
    opts.timeout_ms = 250;
    opts.limits_json = "{\"max_ops\": 5, \"timeout_ms\": 9}";
    opts.variables_json = "{\"x\": 1}";
    opts.stream = false;
    struct pyfence_result res;
    struct pyfence_error err = {0};
    pyfence_result_init(&res);
    assert_int_equal(pyfence_exec(conn, "1", &opts, NULL, NULL, &res, &err), 0);
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_join(f);
    /* timeout_ms overrides the one in limits_json; the rest passes through. */
    cJSON *req = cJSON_Parse(f->requests[0]);
    assert_non_null(req);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(req, "op")), "exec");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(req, "code")), "1");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(req, "stream")));
    cJSON *limits = cJSON_GetObjectItem(req, "limits");
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(limits, "timeout_ms")), 250);
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(limits, "max_ops")), 5);
    assert_int_equal(cJSON_GetArraySize(limits), 2);
    assert_string_equal(
            cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(req, "imports"), 0)),
            "json");
    assert_int_equal(
            cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(req, "variables"), "x")),
            1);
    cJSON_Delete(req);
    fake_stop(f);
}

/* opts.profile goes out as the request's `profile`, and only when set. With a session it is
 * sent all the same (as imports and limits are): pyfenced refuses it, and that refusal is the
 * exec's result, not a local error. */
static void
test_profile_is_sent(void **state)
{
    const struct step s[] = {
            {.json = EXEC_OK},
            {.json = EXEC_OK},
            {.json = "{\"id\": %1$llu, \"ok\": false, \"error\": {\"code\": \"bad_request\", "
                     "\"message\": \"exec request: field 'profile' cannot be used with a session "
                     "(it is set by session.open)\"}}"},
    };
    struct fake *f = fake_start(s, 3);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_exec_options opts;
    pyfence_exec_options_init(&opts);
    assert_null(opts.profile);
    struct pyfence_result res;
    struct pyfence_error err = {0};
    pyfence_result_init(&res);
    opts.profile = "strict";
    assert_int_equal(pyfence_exec(conn, "1", &opts, NULL, NULL, &res, &err), 0);
    assert_true(res.ok);
    pyfence_result_finish(&res);
    assert_int_equal(pyfence_exec(conn, "1", NULL, NULL, NULL, &res, &err), 0);
    pyfence_result_finish(&res);
    opts.session = SID;
    assert_int_equal(pyfence_exec(conn, "1", &opts, NULL, NULL, &res, &err), 0);
    assert_false(res.ok);
    assert_int_equal(res.outcome_code, PYFENCE_E_BAD_REQUEST);
    assert_non_null(strstr(res.error.message, "field 'profile' cannot be used with a session"));
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "exec", "profile", "strict");
    cJSON *plain = cJSON_Parse(f->requests[1]);
    assert_non_null(plain);
    assert_null(cJSON_GetObjectItemCaseSensitive(plain, "profile"));
    cJSON_Delete(plain);
    assert_request(f, 2, "exec", "profile", "strict");
    assert_request(f, 2, "exec", "session", SID);
    fake_stop(f);
}

static void
test_refused_exec_is_a_result(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": false, \"error\": {\"code\": "
                                      "\"bad_request\", \"message\": \"limits.timeout_ms: too "
                                      "big\"}}"},
                             {.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_result res;
    struct pyfence_error err = {0};
    pyfence_result_init(&res);
    assert_int_equal(pyfence_exec(conn, "1", NULL, NULL, NULL, &res, &err), 0);
    assert_false(res.ok);
    assert_string_equal(res.outcome, "bad_request");
    assert_int_equal(res.outcome_code, PYFENCE_E_BAD_REQUEST);
    assert_string_equal(res.error.message, "limits.timeout_ms: too big");
    assert_null(res.output_repr);
    assert_string_equal(res.output_json, "null");
    pyfence_result_finish(&res);
    assert_int_equal(pyfence_ping(conn, &err), 0); /* the connection is still fine */
    pyfence_close(conn);
    fake_stop(f);
}

static void
expect_failure(const struct step *steps, size_t n, int code, const char *needle)
{
    struct fake *f = fake_start(steps, n);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    int r = pyfence_ping(conn, &err);
    for (size_t i = 1; i < n && r == 0; i++)
        r = pyfence_ping(conn, &err);
    assert_int_equal(r, -code);
    assert_int_equal(err.code, code);
    if (!strstr(err.message, needle))
        fail_msg("'%s' not in '%s'", needle, err.message);
    /* A broken connection stays broken, with the same error. */
    struct pyfence_error again = {0};
    assert_int_equal(pyfence_ping(conn, &again), -code);
    assert_string_equal(again.message, err.message);
    pyfence_close(conn);
    fake_stop(f);
}

static void
test_unexpected_id(void **state)
{
    const struct step s[] = {{.json = "{\"id\": 999, \"ok\": true}"}};
    expect_failure(s, 1, PYFENCE_E_PROTOCOL, "id 999, which is not in flight");
}

static void
test_string_id(void **state)
{
    const struct step s[] = {{.json = "{\"id\": \"1\", \"ok\": true}"}};
    expect_failure(s, 1, PYFENCE_E_PROTOCOL, "not an id this client sends");
}

static void
test_duplicate_key(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true, \"ok\": false}"}};
    expect_failure(s, 1, PYFENCE_E_PROTOCOL, "unreadable frame");
}

static void
test_zero_length(void **state)
{
    const struct step s[] = {{.raw = "\0\0\0\0", .raw_len = 4}};
    expect_failure(s, 1, PYFENCE_E_PROTOCOL, "bad frame");
}

static void
test_close_mid_frame(void **state)
{
    const struct step s[] = {{.raw = "\0\0\0\x20{\"id\"", .raw_len = 9, .close_after = 1}};
    expect_failure(s, 1, PYFENCE_E_CONNECT, "closed the connection in the middle of a frame");
}

static void
test_close_between_frames(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true}"}, {.close_after = 1}};
    expect_failure(s, 2, PYFENCE_E_CONNECT, "closed the connection");
}

static void
test_idless_refusal(void **state)
{
    const struct step s[] = {{.json = "{\"id\": null, \"ok\": false, \"error\": {\"code\": "
                                      "\"busy\", \"message\": \"max_connections reached\"}}",
                              .close_after = 1}};
    expect_failure(s, 1, PYFENCE_E_BUSY, "max_connections reached");
}

static void
test_failure_reply_for_ping(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": false, \"error\": {\"code\": "
                                      "\"shutting_down\", \"message\": \"stopping\"}}"}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    assert_int_equal(pyfence_ping(conn, &err), -PYFENCE_E_SHUTTING_DOWN);
    assert_string_equal(err.name, "shutting_down");
    assert_string_equal(err.message, "ping refused: stopping");
    pyfence_close(conn);
    fake_stop(f);
}

static void
test_bad_options_are_caught_locally(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_exec_options opts;
    struct pyfence_error err = {0};
    uint64_t id;
    pyfence_exec_options_init(&opts);
    opts.variables_json = "[1, 2]";
    assert_int_equal(pyfence_submit(conn, "1", &opts, &id, &err), -PYFENCE_E_BAD_REQUEST);
    assert_non_null(strstr(err.message, "variables_json"));
    assert_int_equal(pyfence_submit(conn, NULL, NULL, &id, &err), -PYFENCE_E_BAD_REQUEST);
    assert_int_equal(pyfence_submit(conn, "x = '\xe9'", NULL, &id, &err), -PYFENCE_E_BAD_REQUEST);
    assert_non_null(strstr(err.message, "not valid UTF-8 (byte 5)"));
    /* A request may nest 256 levels; the option sits one level down in it. */
    char deep[600] = "{\"x\": ";
    for (int i = 0; i < 255; i++)
        strcat(deep, "[");
    for (int i = 0; i < 255; i++)
        strcat(deep, "]");
    strcat(deep, "}");
    opts.variables_json = deep;
    assert_int_equal(pyfence_submit(conn, "1", &opts, &id, &err), -PYFENCE_E_BAD_REQUEST);
    assert_non_null(strstr(err.message, "nested deeper than 255 levels"));
    struct pyfence_result res;
    pyfence_result_init(&res);
    assert_int_equal(pyfence_wait(conn, 12345, NULL, NULL, &res, &err), -PYFENCE_E_NOT_FOUND);
    assert_int_equal(pyfence_ping(conn, &err), 0); /* nothing was sent for the bad ones */
    pyfence_close(conn);
    fake_stop(f);
}

static void
test_connect_errors(void **state)
{
    struct pyfence_conn *conn = NULL;
    struct pyfence_error err = {0};
    assert_int_equal(pyfence_connect("/nonexistent-dir/x.sock", &conn, &err), -PYFENCE_E_CONNECT);
    assert_null(conn);
    assert_non_null(strstr(err.message, "'/nonexistent-dir/x.sock'"));
    assert_non_null(strstr(err.message, "No such file or directory"));
    char longpath[300];
    memset(longpath, 'a', sizeof(longpath) - 1);
    longpath[0] = '/';
    longpath[sizeof(longpath) - 1] = '\0';
    assert_int_equal(pyfence_connect(longpath, &conn, NULL), -PYFENCE_E_CONFIG);
}

static void
test_hello(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true, \"server\": \"pyfenced\", "
                                      "\"version\": \"0.1.0\", \"python\": \"3.11.2\", "
                                      "\"protocol\": 1, \"limits\": {\"max_frame_bytes\": 4096}}"},
                             {.json = "{\"id\": %1$llu, \"ok\": true, \"protocol\": 2}"}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_server_info info;
    struct pyfence_error err = {0};
    pyfence_server_info_init(&info);
    assert_int_equal(pyfence_hello(conn, "unit", &info, &err), 0);
    assert_string_equal(info.server, "pyfenced");
    assert_string_equal(info.python, "3.11.2");
    assert_int_equal(info.protocol, 1);
    free(info.reply_json);
    /* The daemon's max_frame_bytes now bounds requests, checked before sending. */
    char code[5000];
    memset(code, 'x', sizeof(code) - 1);
    code[sizeof(code) - 1] = '\0';
    uint64_t id;
    assert_int_equal(pyfence_submit(conn, code, NULL, &id, &err), -PYFENCE_E_TOO_LARGE);
    assert_int_equal(pyfence_hello(conn, NULL, NULL, &err), -PYFENCE_E_PROTOCOL);
    assert_non_null(strstr(err.message, "speaks protocol 2; this libpyfence speaks 1"));
    pyfence_close(conn);
    fake_stop(f);
}

static void
test_code_names(void **state)
{
    assert_string_equal(pyfence_code_name(PYFENCE_OK), "ok");
    assert_string_equal(pyfence_code_name(-PYFENCE_E_TIMEOUT), "timeout");
    assert_string_equal(pyfence_code_name(PYFENCE_E_SECCOMP), "seccomp_violation");
    assert_string_equal(pyfence_code_name(PYFENCE_E_PROTOCOL), "protocol");
    assert_string_equal(pyfence_code_name(PYFENCE_E_INTERRUPTED), "interrupted");
    assert_int_equal(pyfence_code_from_name("interrupted"), PYFENCE_E_INTERRUPTED);
    assert_string_equal(pyfence_code_name(12345), "internal");
    assert_string_equal(pyfence_code_name(PYFENCE_E_HARDENING_UNAVAILABLE),
                        "hardening_unavailable");
    for (int c = PYFENCE_E_INTERNAL; c <= PYFENCE_E_HARDENING_UNAVAILABLE; c++)
        assert_int_equal(pyfence_code_from_name(pyfence_code_name(c)), c);
    assert_int_equal(pyfence_code_from_name("protocol"), PYFENCE_E_PROTOCOL);
    assert_int_equal(pyfence_code_from_name("no-such-code"), PYFENCE_E_INTERNAL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_exec_request_and_result),
            cmocka_unit_test(test_pipelined_reverse),
            cmocka_unit_test(test_pipelining_does_not_deadlock),
            cmocka_unit_test(test_request_shape),
            cmocka_unit_test(test_profile_is_sent),
            cmocka_unit_test(test_refused_exec_is_a_result),
            cmocka_unit_test(test_unexpected_id),
            cmocka_unit_test(test_string_id),
            cmocka_unit_test(test_duplicate_key),
            cmocka_unit_test(test_zero_length),
            cmocka_unit_test(test_close_mid_frame),
            cmocka_unit_test(test_close_between_frames),
            cmocka_unit_test(test_idless_refusal),
            cmocka_unit_test(test_failure_reply_for_ping),
            cmocka_unit_test(test_bad_options_are_caught_locally),
            cmocka_unit_test(test_connect_errors),
            cmocka_unit_test(test_hello),
            cmocka_unit_test(test_code_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
