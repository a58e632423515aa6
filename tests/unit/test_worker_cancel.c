/* A cancel stops only the run it names (worker.c, on_cancel_signal; CHANNEL.md "signal"). The
 * real pyfence-zygote forks a worker and the test plays the daemon on its channel. Cancels are
 * queued by the test itself with sigqueue(), at points it controls: the worker is blocked reading
 * its next frame, so the signal is handled before that frame is read. The last cases go the
 * daemon's way, through zygote_cancel and the zygote's sigqueue. */
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

/* Long enough to pass many of the executor's cancel checks (one per 1024 operations), short
 * enough to end by itself: its result is 300000 unless it was cancelled. */
#define COUNTING "n = 0\\nfor i in range(100000):\\n    n += 3\\nn"
#define COUNTED  300000

/* The test's side of one worker: the zygote, the worker's channel and what came on it. */
struct fx {
    uv_loop_t loop;
    struct zygote *z;
    struct wfx_worker w;
    int fd;
    struct wfx_reader rd;
};

/* The next non-output frame from the worker, which must be `event`; NULL at EOF. */
static cJSON *
next_event(struct fx *f, const char *event)
{
    return wfx_expect_event(f->fd, &f->rd, event);
}

static void
start_worker(struct fx *f, uint64_t job)
{
    uv_loop_init(&f->loop);
    struct zygote_config cfg = {.path = zygote_path, .log_level = 4};
    struct pf_error *err = NULL;
    if (zygote_start(&f->loop, &cfg, wfx_on_spawned, wfx_on_exit, &f->z, &err) < 0)
        fail_msg("zygote_start: %s", err->msg);
    struct harden_params p;
    harden_params_init(&p);
    if (zygote_spawn(f->z, job, &p, &f->w, &f->fd, &err) < 0)
        fail_msg("zygote_spawn: %s", err->msg);
    assert_true(wfx_run_until(&f->loop, &f->w.spawned, 10000));
    assert_true(f->w.pid > 0);
    wfx_reader_init(&f->rd);
}

static void
start_session(struct fx *f, uint64_t job)
{
    start_worker(f, job);
    /* A `while True` only ends by its cancel, or at the deadline when the test fails. */
    wfx_send_fmt(f->fd, "{\"op\":\"session\",\"limits\":{\"timeout_ms\":10000,"
                        "\"max_while_iterations\":1000000000,\"max_ops\":10000000000}}");
    cJSON_Delete(next_event(f, "ready"));
}

/* Closes the channel; the worker must then exit 0 by itself. */
static void
finish(struct fx *f)
{
    close(f->fd);
    assert_true(wfx_run_until(&f->loop, &f->w.exited, 10000));
    assert_int_equal(f->w.exit.signal, 0);
    assert_int_equal(f->w.exit.exit_code, 0);
    wfx_reader_finish(&f->rd);
    zygote_stop(f->z);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&f->loop), 0);
}

/* Queues the cancel of run `run` as the zygote does. */
static void
cancel(const struct fx *f, int run)
{
    assert_int_equal(sigqueue(f->w.pid, SIGUSR1, (union sigval){.sival_int = run}), 0);
}

#define ANY_OUTPUT INT64_MIN

/* Session run `run` of `code`: its outcome, and its output (unless ANY_OUTPUT). */
static void
expect_run(struct fx *f, int run, const char *code, const char *outcome, int64_t output)
{
    wfx_send_fmt(f->fd, "{\"op\":\"run\",\"run\":%d,\"code\":\"%s\"}", run, code);
    cJSON *res = next_event(f, "result");
    assert_non_null(res);
    assert_string_equal(msg_get_string(res, "outcome", ""), outcome);
    if (output != ANY_OUTPUT)
        assert_int_equal(msg_get_int(res, "output", -1), output);
    cJSON_Delete(res);
}

static void
test_late_cancel_does_not_stop_the_next_run(void **state)
{
    (void) state;
    struct fx f = {0};
    start_session(&f, 1);
    expect_run(&f, 1, "1", "ok", 1);
    /* Run 1's cancel, after its result was sent (the daemon had not read it yet). */
    cancel(&f, 1);
    expect_run(&f, 2, COUNTING, "ok", COUNTED);
    /* Still remembered, still not run 3's. */
    expect_run(&f, 3, COUNTING, "ok", COUNTED);
    finish(&f);
}

static void
test_early_cancel_stops_its_run(void **state)
{
    (void) state;
    struct fx f = {0};
    start_session(&f, 2);
    expect_run(&f, 1, "x = 5", "ok", ANY_OUTPUT);
    /* Run 2's cancel, before its frame is read: it takes effect when run 2 begins. */
    cancel(&f, 2);
    expect_run(&f, 2, COUNTING, "cancelled", ANY_OUTPUT);
    /* It was for run 2 only, and the session's state is kept. */
    expect_run(&f, 3, COUNTING "+x", "ok", COUNTED + 5);
    finish(&f);
}

static void
test_unnumbered_signal_does_nothing(void **state)
{
    (void) state;
    struct fx f = {0};
    start_session(&f, 3);
    /* A plain kill carries no run number (si_code SI_USER); nor does a queued 0 name a run. */
    assert_int_equal(kill(f.w.pid, SIGUSR1), 0);
    expect_run(&f, 1, COUNTING, "ok", COUNTED);
    cancel(&f, 0);
    expect_run(&f, 2, COUNTING, "ok", COUNTED);
    finish(&f);
}

/* The worker counts run frames: one that skips a number is a frame the daemon could not have
 * sent, and ends the worker. */
static void
test_run_number_out_of_order_ends_worker(void **state)
{
    (void) state;
    struct fx f = {0};
    start_session(&f, 4);
    expect_run(&f, 1, "1", "ok", 1);
    wfx_send_fmt(f.fd, "{\"op\":\"run\",\"run\":3,\"code\":\"1\"}");
    assert_true(wfx_run_until(&f.loop, &f.w.exited, 10000));
    assert_int_equal(f.w.exit.exit_code, 1);
    close(f.fd);
    wfx_reader_finish(&f.rd);
    zygote_stop(f.z);
    uv_run(&f.loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&f.loop), 0);
}

/* An ephemeral job: run 1, cancelled before its frame is even sent; a frame naming another run
 * is refused. */
static void
test_ephemeral_job(void **state)
{
    (void) state;
    struct fx f = {0};
    start_worker(&f, 5);
    cancel(&f, 1);
    wfx_send_fmt(f.fd, "{\"op\":\"run\",\"run\":1,\"code\":\"while True: pass\",\"limits\":"
                       "{\"max_while_iterations\":1000000000,\"max_ops\":10000000000}}");
    cJSON *res = next_event(&f, "result");
    assert_string_equal(msg_get_string(res, "outcome", ""), "cancelled");
    cJSON_Delete(res);
    finish(&f);

    f = (struct fx){0};
    start_worker(&f, 6);
    wfx_send_fmt(f.fd, "{\"op\":\"run\",\"run\":2,\"code\":\"1\"}");
    res = next_event(&f, "result");
    assert_string_equal(msg_get_string(res, "outcome", ""), "bad_request");
    assert_non_null(strstr(msg_get_string(cJSON_GetObjectItem(res, "error"), "message", ""),
                           "an ephemeral job has one run"));
    cJSON_Delete(res);
    finish(&f);
}

/* The daemon's way: zygote_cancel, and the zygote queues the signal. A run that does not stop
 * by itself is cancelled by its own number; a late cancel of it, sent the moment its result is
 * in, does not stop the next run, whenever the zygote delivers it. */
static void
test_through_the_zygote(void **state)
{
    (void) state;
    struct fx f = {0};
    start_session(&f, 7);
    wfx_send_fmt(f.fd, "{\"op\":\"run\",\"run\":1,\"code\":\"while True: pass\"}");
    assert_int_equal(zygote_cancel(f.z, 7, 1), 0);
    cJSON *res = next_event(&f, "result");
    assert_string_equal(msg_get_string(res, "outcome", ""), "cancelled");
    cJSON_Delete(res);
    assert_int_equal(zygote_cancel(f.z, 7, 1), 0);
    for (int run = 2; run <= 4; run++)
        expect_run(&f, run, COUNTING, "ok", COUNTED);
    finish(&f);
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
            cmocka_unit_test(test_late_cancel_does_not_stop_the_next_run),
            cmocka_unit_test(test_early_cancel_stops_its_run),
            cmocka_unit_test(test_unnumbered_signal_does_nothing),
            cmocka_unit_test(test_run_number_out_of_order_ends_worker),
            cmocka_unit_test(test_ephemeral_job),
            cmocka_unit_test(test_through_the_zygote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
