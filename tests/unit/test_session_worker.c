/* A session worker on its own: the real pyfence-zygote forks it, the test plays the daemon on
 * its channel (CHANNEL.md, "Session worker"): ready, state kept across runs, get, variables
 * refused without ending the session, frames sent back to back, exit 0 at EOF. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
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

#include "frame.h"
#include "harden_params.h"
#include "msg.h"
#include "zygote.h"

static char zygote_path[PATH_MAX];

struct worker {
    pid_t pid;
    bool spawned, exited;
    struct zygote_exit exit;
};

static void
on_spawned(void *ctx, pid_t pid, const struct pf_error *err)
{
    struct worker *w = ctx;
    w->spawned = true;
    w->pid = err ? -1 : pid;
}

static void
on_exit_cb(void *ctx, const struct zygote_exit *e)
{
    struct worker *w = ctx;
    w->exited = true;
    w->exit = *e;
}

static void
on_tick(uv_timer_t *t)
{
    (void) t;
}

static bool
run_until(uv_loop_t *loop, const bool *flag, uint64_t timeout_ms)
{
    uv_timer_t tick;
    uv_timer_init(loop, &tick);
    uv_timer_start(&tick, on_tick, 20, 20);
    uint64_t deadline = uv_now(loop) + timeout_ms;
    while (!*flag && uv_now(loop) < deadline)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *) &tick, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    return *flag;
}

static void
send_json(int fd, const char *json)
{
    char *frame;
    size_t len;
    assert_int_equal(frame_encode(json, strlen(json), 64u << 20, &frame, &len, NULL), 0);
    assert_int_equal(write(fd, frame, len), (ssize_t) len);
    free(frame);
}

struct reader {
    struct frame_decoder dec;
    cJSON *got[8];
    int n;
};

static int
keep_frame(void *userdata, char *payload, size_t len)
{
    struct reader *r = userdata;
    cJSON *obj = NULL;
    assert_int_equal(msg_parse(payload, len, 512, &obj, NULL), 0);
    free(payload);
    /* Output events are not what these tests look at. */
    if (strcmp(msg_get_string(obj, "event", ""), "output") == 0) {
        cJSON_Delete(obj);
        return 0;
    }
    assert_true(r->n < 8);
    r->got[r->n++] = obj;
    return 0;
}

/* The next non-output frame from the worker. */
static cJSON *
next(int fd, struct reader *r)
{
    while (r->n == 0) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        assert_int_equal(poll(&pfd, 1, 15000), 1);
        char buf[8192];
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EAGAIN)
            continue;
        assert_true(n > 0);
        assert_int_equal(frame_decoder_feed(&r->dec, buf, (size_t) n, keep_frame, r, NULL), n);
    }
    cJSON *obj = r->got[0];
    memmove(r->got, r->got + 1, (size_t) --r->n * sizeof(r->got[0]));
    return obj;
}

static cJSON *
expect_event(int fd, struct reader *r, const char *event)
{
    cJSON *obj = next(fd, r);
    const char *got = msg_get_string(obj, "event", "");
    if (strcmp(got, event) != 0) {
        char *text = cJSON_PrintUnformatted(obj);
        fail_msg("expected event %s, got %s", event, text);
    }
    return obj;
}

static void
test_session_worker(void **state)
{
    (void) state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote_config cfg = {.path = zygote_path, .log_level = 4};
    struct zygote *z = NULL;
    struct pf_error *err = NULL;
    if (zygote_start(&loop, &cfg, on_spawned, on_exit_cb, &z, &err) < 0)
        fail_msg("zygote_start: %s", err->msg);
    struct harden_params p;
    harden_params_init(&p);
    struct worker w = {0};
    int fd = -1;
    if (zygote_spawn(z, 1, &p, &w, &fd, &err) < 0)
        fail_msg("zygote_spawn: %s", err->msg);
    struct reader r = {0};
    frame_decoder_init(&r.dec, 64u << 20);

    send_json(fd, "{\"op\":\"session\",\"imports\":[\"json\"],\"limits\":{\"timeout_ms\":5000},"
                  "\"variables\":{\"n\":{\"$type\":\"tuple\",\"items\":[1,2]}}}");
    cJSON_Delete(expect_event(fd, &r, "ready"));

    send_json(fd, "{\"op\":\"run\",\"code\":\"import json\\ndef f(v):\\n    return v * 2\\n"
                  "x = f(len(n))\"}");
    cJSON *res = expect_event(fd, &r, "result");
    assert_string_equal(msg_get_string(res, "outcome", ""), "ok");
    cJSON_Delete(res);

    /* Two requests back to back: the worker keeps the bytes of the second. */
    send_json(fd, "{\"op\":\"run\",\"code\":\"json.dumps([x, f(x)])\",\"variables\":{\"y\":7}}");
    send_json(fd, "{\"op\":\"get\",\"names\":[\"x\",\"y\",\"n\",\"missing\"]}");
    res = expect_event(fd, &r, "result");
    assert_string_equal(msg_get_string(res, "output", ""), "[4, 8]");
    cJSON_Delete(res);
    cJSON *vars = expect_event(fd, &r, "variables");
    cJSON *v = cJSON_GetObjectItem(vars, "variables");
    assert_int_equal(cJSON_GetArraySize(v), 3);
    assert_int_equal(msg_get_int(v, "x", 0), 4);
    assert_int_equal(msg_get_int(v, "y", 0), 7);
    assert_string_equal(msg_get_string(cJSON_GetObjectItem(v, "n"), "$type", ""), "tuple");
    assert_null(cJSON_GetObjectItem(v, "missing"));
    cJSON_Delete(vars);

    /* Variables the executor refuses: an error result, and the session goes on. */
    send_json(fd, "{\"op\":\"run\",\"code\":\"x\",\"variables\":{\"bad\":{\"$type\":\"nope\"}}}");
    res = expect_event(fd, &r, "result");
    assert_string_not_equal(msg_get_string(res, "outcome", "ok"), "ok");
    cJSON_Delete(res);
    /* A snippet that fails keeps the state too. */
    send_json(fd, "{\"op\":\"run\",\"code\":\"x = 100\\n1/0\"}");
    res = expect_event(fd, &r, "result");
    assert_string_equal(msg_get_string(res, "outcome", ""), "error");
    cJSON_Delete(res);
    send_json(fd, "{\"op\":\"run\",\"code\":\"x\"}");
    res = expect_event(fd, &r, "result");
    assert_int_equal(msg_get_int(res, "output", 0), 100);
    cJSON_Delete(res);

    /* EOF: the worker exits 0 by itself. */
    close(fd);
    assert_true(run_until(&loop, &w.exited, 10000));
    assert_int_equal(w.exit.signal, 0);
    assert_int_equal(w.exit.exit_code, 0);
    assert_false(w.exit.killed_by_request);
    frame_decoder_finish(&r.dec);
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
    if (zygote_start(&loop, &cfg, on_spawned, on_exit_cb, &z, &err) < 0)
        fail_msg("zygote_start: %s", err->msg);
    struct harden_params p;
    harden_params_init(&p);
    struct worker w = {0};
    int fd = -1;
    if (zygote_spawn(z, 2, &p, &w, &fd, &err) < 0)
        fail_msg("zygote_spawn: %s", err->msg);
    struct reader r = {0};
    frame_decoder_init(&r.dec, 64u << 20);
    send_json(fd, "{\"op\":\"session\",\"limits\":{}}");
    cJSON_Delete(expect_event(fd, &r, "ready"));
    send_json(fd, "{\"op\":\"session\",\"limits\":{}}");
    assert_true(run_until(&loop, &w.exited, 10000));
    assert_int_equal(w.exit.exit_code, 1);
    close(fd);
    frame_decoder_finish(&r.dec);
    zygote_stop(z);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static bool
find_zygote(void)
{
    const char *env = getenv("PYFENCE_ZYGOTE");
    if (env) {
        snprintf(zygote_path, sizeof(zygote_path), "%s", env);
    } else {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n < 0)
            return false;
        self[n] = '\0';
        /* build/tests/unit/test_session_worker -> build/daemon/worker/pyfence-zygote */
        snprintf(zygote_path, sizeof(zygote_path), "%s/../../daemon/worker/pyfence-zygote",
                 dirname(self));
    }
    return access(zygote_path, X_OK) == 0;
}

int
main(void)
{
    if (!find_zygote()) {
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
