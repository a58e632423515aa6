/* Orderings between pyfenced's modules that once gave the wrong answer, replayed
 * deterministically on conn_fixture.c's real loop and fake zygote: the idle timer expiring in
 * the loop iteration that sends a deadline reply, two requests in flight under one id, and a
 * zygote death noticed before its worker's last words. */
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

#include "conn_fixture.h"
#include "job.h"
#include "pf_cleanup.h"
#include "pf_log.h"

static void
expect_pong(struct fx *f, int id)
{
    char req[64];
    snprintf(req, sizeof(req), "{\"id\":%d,\"op\":\"ping\"}", id);
    send_frame(f->client.fd, req);
    cJSON *r = recv_frame(f, &f->client, 2000);
    if (!r)
        fail_msg("no pong: the connection was closed");
    assert_int_equal(cJSON_GetObjectItem(r, "id")->valueint, id);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON_Delete(r);
}

/* ---- idleness ---------------------------------------------------------------------------- */

static void
tune_idle(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_CONN_IDLE_TIMEOUT_MS] = 1000;
}

/* The job's deadline (100 + 500 ms) and the connection's idle timer (1000 ms) both fall due
 * while the loop is not running, so they run in one iteration, the deadline first: its reply
 * must count as activity, or the idle timer closes the connection right after that reply. */
static void
test_idle_timer_due_with_deadline_reply(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"while 1: pass\","
                                 "\"limits\":{\"timeout_ms\":100}}");
    usleep(1100 * 1000);
    cJSON *r = expect_error(f, "1", "timeout");
    cJSON_Delete(r);
    assert_int_equal(fake.kills[job], 1);
    expect_pong(f, 2);
    end_worker(f, job, 0, SIGKILL, true, 10);
    /* Idle for real now: closed after the idle timeout. */
    expect_eof(f, &f->client);
}

/* ---- ids --------------------------------------------------------------------------------- */

static cJSON *
expect_ok_reply(struct fx *f, const char *id_json)
{
    cJSON *r = recv_frame(f, &f->client, 2000);
    if (!r)
        fail_msg("no reply (expected %s ok)", id_json);
    char *id = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "id"));
    assert_string_equal(id, id_json);
    free(id);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    return r;
}

/* Two requests in flight under one id would get replies nobody can tell apart: the second is
 * refused, whatever its op; the same id is fine again once the first is answered, and a string
 * id never equals a number id. */
static void
test_duplicate_id_in_flight(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":7,\"op\":\"exec\",\"code\":\"x\"}");
    send_frame(f->client.fd, "{\"id\":7,\"op\":\"exec\",\"code\":\"y\"}");
    cJSON *r = expect_error(f, "7", "bad_request");
    assert_string_equal(error_message(r), "request id 7 is already in flight on this connection; "
                                          "give each request an id of its own");
    cJSON_Delete(r);
    send_frame(f->client.fd, "{\"id\":7,\"op\":\"ping\"}");
    cJSON_Delete(expect_error(f, "7", "bad_request"));
    assert_int_equal(fake.last_job, job); /* the second exec never started */
    send_frame(f->client.fd, "{\"id\":\"7\",\"op\":\"ping\"}");
    cJSON_Delete(expect_ok_reply(f, "\"7\""));

    /* A string id, in flight on a second job. */
    send_frame(f->client.fd, "{\"id\":\"a-1\",\"op\":\"exec\",\"code\":\"x\"}");
    for (int i = 0; i < 1000 && fake.last_job == job; i++)
        pump(f, 1);
    uint64_t job2 = fake.last_job;
    assert_true(job2 > job);
    send_frame(f->client.fd, "{\"id\":\"a-1\",\"op\":\"stats\"}");
    r = expect_error(f, "\"a-1\"", "bad_request");
    assert_non_null(strstr(error_message(r), "request id \"a-1\" is already in flight"));
    cJSON_Delete(r);

    /* Answered: the id is free again. */
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    cJSON_Delete(expect_ok_reply(f, "7"));
    end_worker(f, job, 0, 0, false, 1);
    expect_pong(f, 7);
    struct peer *w2 = calloc(1, sizeof(*w2));
    w2->fd = fake.worker_fd[job2];
    cJSON *run = recv_frame(f, w2, 2000);
    assert_non_null(run);
    cJSON_Delete(run);
    free(w2);
    send_frame(fake.worker_fd[job2], "{\"event\":\"result\",\"outcome\":\"ok\"}");
    cJSON_Delete(expect_ok_reply(f, "\"a-1\""));
    end_worker(f, job2, 0, 0, false, 1);
    assert_int_equal(pf_container_of(f->d.conns.next, struct conn, link)->inflight, 0);
}

/* ---- a zygote's death -------------------------------------------------------------------- */

/* The zygote dies under a worker that is still hardening. The daemon may notice the zygote's
 * death (and report the worker's exit, SIGKILL) before it reads the worker's last frame, an
 * "internal" hardening failure caused by that death: still worker_crashed, as when the frame
 * comes first (test_exec_internal_result_waits_for_exit). */
static void
test_zygote_death_seen_before_worker_result(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    struct zygote_exit e = {.job_id = job, .pid = 100 + (pid_t) job, .signal = SIGKILL};
    job_on_exit(fake.ctx[job], &e);
    pump(f, 5);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"internal\",\"error\":{"
                             "\"message\":\"hardening layer 'fds': the zygote died\"}}");
    cJSON *r = expect_error(f, "1", "worker_crashed");
    assert_string_equal(error_message(r), "worker killed by signal SIGKILL before it finished "
                                          "(hardening layer 'fds': the zygote died)");
    assert_string_equal(cJSON_GetObjectItem(r, "outcome")->valuestring, "worker_crashed");
    cJSON_Delete(r);
    close(fake.worker_fd[job]);
    fake.worker_fd[job] = 0;
    pump(f, 5);
    assert_true(dlist_empty(&f->d.jobs));
    assert_int_equal(f->d.jobs_by_outcome[PF_E_WORKER_CRASHED], 1);
}

#define T(fn)        cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TW(fn, tune) cmocka_unit_test_setup_teardown(fn, setup_##tune, teardown)

static int
setup_idle(void **s)
{
    return setup_with(s, tune_idle);
}

int
main(void)
{
    pf_log_init(PF_LOG_CRIT, "test_conn_races");
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
            TW(test_idle_timer_due_with_deadline_reply, idle),
            T(test_duplicate_id_in_flight),
            T(test_zygote_death_seen_before_worker_result),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
