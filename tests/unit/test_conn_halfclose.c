/* Half-closed connections on conn_fixture.c's real loop and fake zygote: after the client's
 * shutdown(SHUT_WR) the requests it already sent are still answered and the daemon closes after
 * the last reply; with nothing in flight it closes at once; the idle timer does not cut a
 * half-closed connection that still waits for a reply; a full close (at once, or later while a
 * job runs) still cancels the jobs. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "conn_fixture.h"
#include "pf_log.h"

static cJSON *
expect_ok(struct fx *f, double id)
{
    cJSON *r = recv_frame(f, &f->client, 3000);
    if (!r)
        fail_msg("no reply for id %.0f (eof %d)", id, f->client.eof);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    assert_true(cJSON_GetObjectItem(r, "id")->valuedouble == id);
    return r;
}

static void
half_close(struct fx *f)
{
    assert_int_equal(shutdown(f->client.fd, SHUT_WR), 0);
    pump(f, 30);
}

static void
test_half_close_jobs_answered(void **state)
{
    struct fx *f = *state;
    uint64_t a = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    int worker_a = f->worker.fd;
    uint64_t b = start_exec(f, "{\"id\":2,\"op\":\"exec\",\"code\":\"y\"}");
    int worker_b = f->worker.fd;
    half_close(f);
    assert_int_equal(fake.kills[a], 0);
    assert_int_equal(fake.kills[b], 0);
    assert_int_equal(f->d.n_conns, 1);

    send_frame(worker_b, "{\"event\":\"output\",\"data\":\"hi\"}");
    send_frame(worker_b, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    cJSON *ev = recv_frame(f, &f->client, 3000);
    assert_non_null(ev);
    assert_string_equal(cJSON_GetObjectItem(ev, "event")->valuestring, "output");
    cJSON_Delete(ev);
    cJSON_Delete(expect_ok(f, 2));
    end_worker(f, b, 0, 0, false, 0);
    /* One reply still owed: the connection stays. */
    pump(f, 30);
    assert_false(f->client.eof);
    assert_int_equal(f->d.n_conns, 1);

    send_frame(worker_a, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    cJSON_Delete(expect_ok(f, 1));
    end_worker(f, a, 0, 0, false, 0);
    expect_eof(f, &f->client);
    assert_int_equal(f->d.n_conns, 0);
    assert_int_equal(f->d.jobs_by_outcome[PF_E_CANCELLED], 0);
    assert_int_equal(f->d.jobs_by_outcome[0], 2); /* ok */
}

static void
tune_long_idle(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_CONN_IDLE_TIMEOUT_MS] = 60000;
}

/* Nothing in flight: the connection closes right after the replies already sent. */
static void
test_half_close_idle_closes_at_once(void **state)
{
    struct fx *f = *state;
    send_frame(f->client.fd, "{\"id\":5,\"op\":\"ping\"}");
    half_close(f);
    cJSON_Delete(expect_ok(f, 5));
    uint64_t t0 = uv_hrtime();
    expect_eof(f, &f->client);
    assert_true(uv_hrtime() - t0 < 1000 * 1000000ULL);
    assert_int_equal(f->d.n_conns, 0);
}

/* A frame cut short by the end of file is dropped; the request before it is still answered. */
static void
test_half_close_mid_frame(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    static const char cut[] = "\x00\x00\x00\x40{\"id\":2,\"op\":";
    send_raw(f->client.fd, cut, sizeof(cut) - 1);
    half_close(f);
    assert_int_equal(fake.kills[job], 0);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    cJSON_Delete(expect_ok(f, 1));
    end_worker(f, job, 0, 0, false, 0);
    expect_eof(f, &f->client);
}

static void
tune_short_idle(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_CONN_IDLE_TIMEOUT_MS] = 100;
}

/* Waiting for a reply is not idleness, half-closed or not. */
static void
test_half_close_outlives_idle_timeout(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    half_close(f);
    pump(f, 400);
    assert_int_equal(fake.kills[job], 0);
    assert_int_equal(f->d.n_conns, 1);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    cJSON_Delete(expect_ok(f, 1));
    end_worker(f, job, 0, 0, false, 0);
    expect_eof(f, &f->client);
}

/* Half-closed first, then closed for good while the job runs: cancelled then, as any close. */
static void
test_close_after_half_close_cancels(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    half_close(f);
    pump(f, 150);
    assert_int_equal(fake.kills[job], 0);
    close(f->client.fd);
    f->client.fd = -1;
    pump(f, 300);
    assert_int_equal(fake.kills[job], 1);
    assert_int_equal(f->d.n_conns, 0);
    end_worker(f, job, 0, SIGKILL, true, 0);
    assert_int_equal(f->d.jobs_by_outcome[PF_E_CANCELLED], 1);
}

/* shutdown(SHUT_RDWR) is a full close too: the client will not read the replies. */
static void
test_shutdown_both_ways_cancels(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    assert_int_equal(shutdown(f->client.fd, SHUT_RDWR), 0);
    pump(f, 50);
    assert_int_equal(fake.kills[job], 1);
    assert_int_equal(f->d.n_conns, 0);
    end_worker(f, job, 0, SIGKILL, true, 0);
    assert_int_equal(f->d.jobs_by_outcome[PF_E_CANCELLED], 1);
}

#define T(fn)        cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TW(fn, tune) cmocka_unit_test_setup_teardown(fn, setup_##tune, teardown)

static int
setup_long_idle(void **s)
{
    return setup_with(s, tune_long_idle);
}

static int
setup_short_idle(void **s)
{
    return setup_with(s, tune_short_idle);
}

int
main(void)
{
    pf_log_init(PF_LOG_CRIT, "test_conn_halfclose");
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
            T(test_half_close_jobs_answered),
            TW(test_half_close_idle_closes_at_once, long_idle),
            T(test_half_close_mid_frame),
            TW(test_half_close_outlives_idle_timeout, short_idle),
            T(test_close_after_half_close_cancels),
            T(test_shutdown_both_ways_cancels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
