/* cancel on a real uv loop (conn_fixture.c's fake zygote): a running job is asked to stop and
 * answers `cancelled`; one that does not stop is killed after the grace period; a queued job
 * ends at once and never starts; ids of other requests, unknown or already answered, are not
 * cancelled. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "conn_fixture.h"
#include "job.h"
#include "pf_log.h"

static const char *
str(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(o, name);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The next reply to the client, which must carry this (integer) id. */
static cJSON *
reply_for(struct fx *f, int id)
{
    cJSON *r = recv_frame(f, &f->client, 3000);
    assert_non_null(r);
    assert_int_equal(cJSON_GetObjectItem(r, "id")->valuedouble, id);
    return r;
}

static void
expect_cancel_reply(struct fx *f, int id, bool cancelled)
{
    cJSON *r = reply_for(f, id);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(r, "cancelled")), cancelled);
    cJSON_Delete(r);
}

static void
test_cancel_running_job(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"while 1: pass\"}");
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"cancel\",\"target\":1}");
    expect_cancel_reply(f, 2, true);
    assert_int_equal(fake.cancels[job], 1);
    assert_int_equal(fake.kills[job], 0);
    /* The executor stops at its next check and says so. */
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"cancelled\",\"error\":"
                             "{\"type\":\"InterpreterError\",\"message\":\"Code execution was "
                             "cancelled\",\"line\":1,\"source\":\"while 1: pass\"}}");
    cJSON *r = reply_for(f, 1);
    assert_string_equal(str(r, "outcome"), "cancelled");
    assert_string_equal(str(cJSON_GetObjectItem(r, "error"), "code"), "cancelled");
    cJSON_Delete(r);
    /* Answered already: a second cancel finds nothing to do. */
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"cancel\",\"target\":1}");
    expect_cancel_reply(f, 3, false);
    end_worker(f, job, 0, 0, false, 0);
    assert_int_equal(f->d.jobs_by_outcome[PF_E_CANCELLED], 1);
}

static void
test_cancel_kills_a_worker_that_does_not_stop(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":\"a\",\"op\":\"exec\",\"code\":\"x\"}");
    /* Before the cancel is sent: the grace period cannot have started earlier. */
    uint64_t t0 = uv_hrtime();
    send_frame(f->client.fd, "{\"id\":\"b\",\"op\":\"cancel\",\"target\":\"a\"}");
    cJSON *r = recv_frame(f, &f->client, 3000);
    assert_string_equal(str(r, "id"), "b");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "cancelled")));
    cJSON_Delete(r);
    r = recv_frame(f, &f->client, 3000);
    assert_non_null(r);
    double waited_ms = (double) (uv_hrtime() - t0) / 1e6;
    assert_string_equal(str(r, "id"), "a");
    assert_string_equal(str(r, "outcome"), "cancelled");
    assert_non_null(strstr(str(cJSON_GetObjectItem(r, "error"), "message"), "was killed"));
    cJSON_Delete(r);
    /* The grace period, then the kill. */
    assert_true(waited_ms >= JOB_CANCEL_GRACE_MS - 5 && waited_ms < JOB_CANCEL_GRACE_MS + 1000);
    assert_int_equal(fake.kills[job], 1);
    end_worker(f, job, 0, SIGKILL, true, 0);
}

static void
test_cancel_queued_job(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"exec\",\"code\":\"y\"}");
    pump(f, 10);
    assert_int_equal(f->d.sched.queued, 1);
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"cancel\",\"target\":2}");
    /* The target's reply first, then the cancel's. */
    cJSON *r = reply_for(f, 2);
    assert_string_equal(str(r, "outcome"), "cancelled");
    cJSON_Delete(r);
    expect_cancel_reply(f, 3, true);
    assert_int_equal(f->d.sched.queued, 0);
    /* It never starts, even once a worker is free. */
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    cJSON_Delete(reply_for(f, 1));
    end_worker(f, job, 0, 0, false, 0);
    pump(f, 20);
    assert_int_equal(fake.last_job, job);
    assert_int_equal(fake.cancels[job], 0);
}

static void
test_cancel_unknown_target(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    /* Same number, other type; and an id no request has. */
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"cancel\",\"target\":\"1\"}");
    expect_cancel_reply(f, 2, false);
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"cancel\",\"target\":99}");
    expect_cancel_reply(f, 3, false);
    /* A cancel cannot name itself into anything either. */
    send_frame(f->client.fd, "{\"id\":4,\"op\":\"cancel\",\"target\":4}");
    expect_cancel_reply(f, 4, false);
    assert_int_equal(fake.cancels[job], 0);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    cJSON *r = reply_for(f, 1);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON_Delete(r);
    end_worker(f, job, 0, 0, false, 0);
}

static void
tune_one_worker(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_MAX_WORKERS] = 1;
}

static int
setup_one_worker(void **state)
{
    return setup_with(state, tune_one_worker);
}

int
main(void)
{
    pf_log_init(PF_LOG_CRIT, "test_cancel");
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_cancel_running_job, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cancel_kills_a_worker_that_does_not_stop, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_cancel_queued_job, setup_one_worker, teardown),
            cmocka_unit_test_setup_teardown(test_cancel_unknown_target, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
