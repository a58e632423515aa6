/* libpyfence's checks of what a caller passes, against the scripted server of
 * libpyfence_fixture.c: session options parsed as strictly as exec options and as pyfenced
 * parses a frame; strings that are not UTF-8, NULL or empty session ids refused before sending,
 * as bad_request naming the field; a refusal's message naming its op once. A refusal made here
 * sends nothing: each test ends with a request the server answers as its first. */
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

#define OPENED "{\"id\": %1$llu, \"ok\": true, \"session\": \"" SID "\"}"

static void
assert_refused(int r, const struct pyfence_error *err, const char *needle)
{
    if (r != -PYFENCE_E_BAD_REQUEST)
        fail_msg("returned %d (%s: %s), not bad_request; wanted '%s'", r, err->name, err->message,
                 needle);
    assert_string_equal(err->name, "bad_request");
    if (!strstr(err->message, needle))
        fail_msg("'%s' not in '%s'", needle, err->message);
}

/* JSON text the daemon's strict parser refuses (or that would make it refuse the whole frame),
 * and what the refusal says. */
static const struct {
    const char *text, *says;
} bad_json[] = {
        {"{\"x\": \"a\\u0000b\"}", "\\u0000"},
        {"{\"x\": 1e400}", "out of range"},
        {"{\"x\": 1} trailing", "after"},
        {"{\"x\": 01}", "offset"},
        {"{\"x\": 1, \"x\": 2}", "duplicate key"},
        {"{\"x\": \"\xff\"}", "UTF-8"},
        {"[1]", "object"},
        {"{\"x\": 1", "offset"},
};

/* As pyfence_exec's options, session.open's limits_json and variables_json are parsed strictly:
 * cJSON_Parse took "a" for "a\u0000b", null for 1e400, text after the object, a leading zero,
 * and a duplicate key that pyfenced then refused as a frame without an id (bad_frame), which
 * failed every later call on the connection. */
static void
test_session_json_options_are_strict(void **state)
{
    const struct step s[] = {{.json = OPENED}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    char id[PYFENCE_SESSION_ID_LEN + 1] = "";
    for (size_t i = 0; i < sizeof(bad_json) / sizeof(bad_json[0]); i++) {
        for (int which = 0; which < 2; which++) {
            struct pyfence_session_options o;
            pyfence_session_options_init(&o);
            *(which ? &o.variables_json : &o.limits_json) = bad_json[i].text;
            memset(&err, 0, sizeof(err));
            assert_refused(pyfence_session_open(conn, &o, id, &err), &err,
                           which ? "session option variables_json: "
                                 : "session option limits_json: ");
            if (!strstr(err.message, bad_json[i].says))
                fail_msg("%s: '%s' not in '%s'", bad_json[i].text, bad_json[i].says, err.message);
        }
    }
    /* The option goes one level down in a request of at most 256 levels. */
    char deep[600] = "{\"x\": ";
    for (int i = 0; i < 255; i++)
        strcat(deep, "[");
    for (int i = 0; i < 255; i++)
        strcat(deep, "]");
    strcat(deep, "}");
    struct pyfence_session_options o;
    pyfence_session_options_init(&o);
    o.variables_json = deep;
    assert_refused(pyfence_session_open(conn, &o, id, &err), &err, "nested deeper than 255");
    assert_string_equal(id, "");
    o.variables_json = "{\"x\": {\"$type\": \"int\", \"value\": \"0x1f\"}}";
    o.limits_json = "{\"max_ops\": 1000}";
    o.timeout_ms = 50;
    assert_int_equal(pyfence_session_open(conn, &o, id, &err), 0);
    assert_string_equal(id, SID);
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "session.open", "id", "1"); /* nothing was sent before */
    cJSON *req = cJSON_Parse(f->requests[0]);
    const cJSON *limits = cJSON_GetObjectItemCaseSensitive(req, "limits");
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(limits, "max_ops")), 1000);
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(limits, "timeout_ms")), 50);
    const cJSON *x = cJSON_GetObjectItem(cJSON_GetObjectItem(req, "variables"), "x");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(x, "value")), "0x1f");
    cJSON_Delete(req);
    fake_stop(f);
}

/* Strings that are not UTF-8 (or NULL where a string is due) in any field the caller gives
 * are the caller's mistake: bad_request naming the field, not internal "request not sent". */
static void
test_bad_strings_are_bad_request(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    uint64_t rid = 0;
    const char *bad_imports[] = {"json", "m\xc3("};
    const char *null_import[] = {"json", NULL};
    struct pyfence_exec_options eo;
    pyfence_exec_options_init(&eo);
    eo.imports = bad_imports;
    eo.n_imports = 2;
    assert_refused(pyfence_submit(conn, "1", &eo, &rid, &err), &err,
                   "exec option imports[1]: not valid UTF-8 (byte 1)");
    eo.imports = null_import;
    assert_refused(pyfence_submit(conn, "1", &eo, &rid, &err), &err,
                   "exec option imports[1]: NULL");
    pyfence_exec_options_init(&eo);
    eo.profile = "\xff";
    assert_refused(pyfence_submit(conn, "1", &eo, &rid, &err), &err,
                   "exec option profile: not valid UTF-8 (byte 0)");
    pyfence_exec_options_init(&eo);
    eo.session = "ab\xed\xa0\x80"; /* a surrogate */
    assert_refused(pyfence_submit(conn, "1", &eo, &rid, &err), &err,
                   "exec option session: not valid UTF-8 (byte 2)");

    char id[PYFENCE_SESSION_ID_LEN + 1] = "";
    struct pyfence_session_options so;
    pyfence_session_options_init(&so);
    so.profile = "p\x80";
    assert_refused(pyfence_session_open(conn, &so, id, &err), &err,
                   "session option profile: not valid UTF-8 (byte 1)");
    pyfence_session_options_init(&so);
    so.imports = bad_imports;
    so.n_imports = 2;
    assert_refused(pyfence_session_open(conn, &so, id, &err), &err,
                   "session option imports[1]: not valid UTF-8");

    assert_refused(pyfence_hello(conn, "agent\xc0\xaf", NULL, &err), &err,
                   "hello: client name: not valid UTF-8 (byte 5)");
    const char *names[] = {"a", "\xfe"};
    char *json = NULL;
    assert_refused(pyfence_session_get(conn, SID, names, 2, &json, &err), &err,
                   "session.get: name[1]: not valid UTF-8");
    assert_refused(pyfence_session_get(conn, "\xff", names, 1, &json, &err), &err,
                   "session.get: session id: not valid UTF-8");
    assert_refused(pyfence_session_close(conn, "x\xff", &err), &err,
                   "session.close: session id: not valid UTF-8 (byte 1)");
    assert_null(json);
    assert_int_equal(pyfence_ping(conn, &err), 0);
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "ping", "id", "1");
    fake_stop(f);
}

/* A NULL or empty session id used to be sent as "": refused here, not by the daemon. */
static void
test_session_id_required(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    assert_refused(pyfence_session_close(conn, NULL, &err), &err,
                   "session.close: session id: NULL");
    assert_refused(pyfence_session_close(conn, "", &err), &err, "session.close: session id: empty");
    const char *names[] = {"a"};
    char *json = NULL;
    assert_refused(pyfence_session_get(conn, NULL, names, 1, &json, &err), &err,
                   "session.get: session id: NULL");
    assert_refused(pyfence_session_get(conn, "", names, 1, &json, &err), &err,
                   "session.get: session id: empty");
    assert_int_equal(pyfence_ping(conn, &err), 0);
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "ping", "id", "1");
    fake_stop(f);
}

/* pyfenced's schema errors begin "OP request: "; the library's own "OP refused: " names the op
 * already, so the message says it once. Other messages keep their text whole. */
static void
test_refusal_names_the_op_once(void **state)
{
    const struct step s[] = {
            {.json = "{\"id\": %1$llu, \"ok\": false, \"error\": {\"code\": \"bad_request\", "
                     "\"message\": \"session.close request: field 'session' is too long\"}}"},
            {.json = "{\"id\": %1$llu, \"ok\": false, \"error\": {\"code\": \"not_found\", "
                     "\"message\": \"session.close request: is not the op's prefix here\"}}"},
            {.json = "{\"id\": %1$llu, \"ok\": false, \"error\": {\"code\": \"not_found\", "
                     "\"message\": \"session.get request names no session\"}}"},
    };
    struct fake *f = fake_start(s, 3);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    assert_int_equal(pyfence_session_close(conn, SID, &err), -PYFENCE_E_BAD_REQUEST);
    assert_string_equal(err.message, "session.close refused: field 'session' is too long");
    char *json = NULL;
    const char *names[] = {"a"};
    assert_int_equal(pyfence_session_get(conn, SID, names, 1, &json, &err), -PYFENCE_E_NOT_FOUND);
    assert_string_equal(err.message,
                        "session.get refused: session.close request: is not the op's prefix here");
    assert_int_equal(pyfence_session_get(conn, SID, names, 1, &json, &err), -PYFENCE_E_NOT_FOUND);
    assert_string_equal(err.message, "session.get refused: session.get request names no session");
    pyfence_close(conn);
    fake_stop(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_session_json_options_are_strict),
            cmocka_unit_test(test_bad_strings_are_bad_request),
            cmocka_unit_test(test_session_id_required),
            cmocka_unit_test(test_refusal_names_the_op_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
