/* A session worker on its own: the real pyfence-zygote forks it, the test plays the daemon on
 * its channel (CHANNEL.md, "Session worker"): ready, state kept across runs, get, variables
 * refused without ending the session, frames sent back to back, exit 0 at EOF. */
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "harden_params.h"
#include "msg.h"
#include "worker_fixture.h"

static char zygote_path[PATH_MAX];

static void
test_session_worker(void **state)
{
    (void) state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote_config cfg = {.path = zygote_path, .log_level = 4};
    struct zygote *z = NULL;
    struct pf_error *err = NULL;
    if (zygote_start(&loop, &cfg, wfx_on_spawned, wfx_on_exit, &z, &err) < 0)
        fail_msg("zygote_start: %s", err->msg);
    struct harden_params p;
    harden_params_init(&p);
    struct wfx_worker w = {0};
    int fd = -1;
    if (zygote_spawn(z, 1, &p, &w, &fd, &err) < 0)
        fail_msg("zygote_spawn: %s", err->msg);
    struct wfx_reader r;
    wfx_reader_init(&r);

    wfx_send_json(fd, "{\"op\":\"session\",\"imports\":[\"json\"],\"limits\":{\"timeout_ms\":5000},"
                      "\"variables\":{\"n\":{\"$type\":\"tuple\",\"items\":[1,2]}}}");
    cJSON_Delete(wfx_expect_event(fd, &r, "ready"));

    wfx_send_json(fd, "{\"op\":\"run\",\"code\":\"import json\\ndef f(v):\\n    return v * 2\\n"
                      "x = f(len(n))\"}");
    cJSON *res = wfx_expect_event(fd, &r, "result");
    assert_string_equal(msg_get_string(res, "outcome", ""), "ok");
    cJSON_Delete(res);

    /* Two requests back to back: the worker keeps the bytes of the second. */
    wfx_send_json(fd,
                  "{\"op\":\"run\",\"code\":\"json.dumps([x, f(x)])\",\"variables\":{\"y\":7}}");
    wfx_send_json(fd, "{\"op\":\"get\",\"names\":[\"x\",\"y\",\"n\",\"missing\"]}");
    res = wfx_expect_event(fd, &r, "result");
    assert_string_equal(msg_get_string(res, "output", ""), "[4, 8]");
    cJSON_Delete(res);
    cJSON *vars = wfx_expect_event(fd, &r, "variables");
    cJSON *v = cJSON_GetObjectItem(vars, "variables");
    assert_int_equal(cJSON_GetArraySize(v), 3);
    assert_int_equal(msg_get_int(v, "x", 0), 4);
    assert_int_equal(msg_get_int(v, "y", 0), 7);
    assert_string_equal(msg_get_string(cJSON_GetObjectItem(v, "n"), "$type", ""), "tuple");
    assert_null(cJSON_GetObjectItem(v, "missing"));
    cJSON_Delete(vars);

    /* Variables the executor refuses: an error result, and the session goes on. */
    wfx_send_json(fd,
                  "{\"op\":\"run\",\"code\":\"x\",\"variables\":{\"bad\":{\"$type\":\"nope\"}}}");
    res = wfx_expect_event(fd, &r, "result");
    assert_string_not_equal(msg_get_string(res, "outcome", "ok"), "ok");
    cJSON_Delete(res);
    /* A snippet that fails keeps the state too. */
    wfx_send_json(fd, "{\"op\":\"run\",\"code\":\"x = 100\\n1/0\"}");
    res = wfx_expect_event(fd, &r, "result");
    assert_string_equal(msg_get_string(res, "outcome", ""), "error");
    cJSON_Delete(res);
    wfx_send_json(fd, "{\"op\":\"run\",\"code\":\"x\"}");
    res = wfx_expect_event(fd, &r, "result");
    assert_int_equal(msg_get_int(res, "output", 0), 100);
    cJSON_Delete(res);

    /* EOF: the worker exits 0 by itself. */
    close(fd);
    assert_true(wfx_run_until(&loop, &w.exited, 10000));
    assert_int_equal(w.exit.signal, 0);
    assert_int_equal(w.exit.exit_code, 0);
    assert_false(w.exit.killed_by_request);
    wfx_reader_finish(&r);
    zygote_stop(z);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void
test_unexpected_frame_ends_worker(void **state)
{
    (void) state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote_config cfg = {.path = zygote_path, .log_level = 4};
    struct zygote *z = NULL;
    struct pf_error *err = NULL;
    if (zygote_start(&loop, &cfg, wfx_on_spawned, wfx_on_exit, &z, &err) < 0)
        fail_msg("zygote_start: %s", err->msg);
    struct harden_params p;
    harden_params_init(&p);
    struct wfx_worker w = {0};
    int fd = -1;
    if (zygote_spawn(z, 2, &p, &w, &fd, &err) < 0)
        fail_msg("zygote_spawn: %s", err->msg);
    struct wfx_reader r;
    wfx_reader_init(&r);
    wfx_send_json(fd, "{\"op\":\"session\",\"limits\":{}}");
    cJSON_Delete(wfx_expect_event(fd, &r, "ready"));
    wfx_send_json(fd, "{\"op\":\"session\",\"limits\":{}}");
    assert_true(wfx_run_until(&loop, &w.exited, 10000));
    assert_int_equal(w.exit.exit_code, 1);
    close(fd);
    wfx_reader_finish(&r);
    zygote_stop(z);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int
main(void)
{
    if (!wfx_find_zygote(zygote_path, sizeof(zygote_path))) {
        printf("SKIP: no pyfence-zygote at %s (set PYFENCE_ZYGOTE, or build the executor)\n",
               zygote_path);
        return 77;
    }
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_session_worker),
            cmocka_unit_test(test_unexpected_frame_ends_worker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
