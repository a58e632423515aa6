/* The daemon's half of run numbers (daemon/worker/CHANNEL.md, "run"), on conn_fixture.c's fake
 * zygote: an ephemeral job's run frame says run 1 and its cancel names run 1; a session's run
 * frames count 1, 2, 3... (a get frame does not count), and a cancel, by request or because the
 * connection of a detached session's exec closed, names the run in flight. The worker's half is
 * test_worker_cancel.c. */
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "conn_fixture.h"
#include "msg.h"
#include "pf_log.h"
#include "session.h"

/* The client's next frame: an ok reply to request id. */
static cJSON *
expect_ok(struct fx *f, int id)
{
    cJSON *r = recv_frame(f, &f->client, 3000);
    assert_non_null(r);
    assert_int_equal(msg_get_int(r, "id", -1), id);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    return r;
}

/* The worker's next frame: op, and for a run frame, its run number (0: none). */
static int64_t
expect_worker_frame(struct fx *f, const char *op)
{
    cJSON *frame = recv_frame(f, &f->worker, 2000);
    assert_non_null(frame);
    assert_string_equal(msg_get_string(frame, "op", ""), op);
    const cJSON *run = cJSON_GetObjectItem(frame, "run");
    int64_t n = run ? msg_get_int(frame, "run", -1) : 0;
    if (run)
        assert_true(cJSON_IsNumber(run));
    cJSON_Delete(frame);
    return n;
}

static void
test_ephemeral_job_is_run_1(void **state)
{
    struct fx *f = *state;
    cJSON *run = NULL;
    uint64_t job = start_exec_run(
            f, "{\"id\":1,\"op\":\"exec\",\"code\":\"while 1: pass\",\"variables\":{\"v\":0.1}}",
            &run);
    assert_int_equal(msg_get_int(run, "run", 0), 1);
    /* The rest of the frame is op_exec.c's as before. */
    assert_string_equal(msg_get_string(run, "code", ""), "while 1: pass");
    assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "variables"), "v")->valuedouble ==
                0.1);
    cJSON_Delete(run);
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"cancel\",\"target\":1}");
    cJSON_Delete(expect_ok(f, 2));
    assert_int_equal(fake.cancels[job], 1);
    assert_int_equal(fake.cancel_run[job], 1);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"cancelled\"}");
    cJSON *r = recv_frame(f, &f->client, 3000);
    assert_non_null(r);
    assert_string_equal(msg_get_string(r, "outcome", ""), "cancelled");
    cJSON_Delete(r);
    end_worker(f, job, 0, 0, false, 0);
}

/* session.open answered once the fake worker says ready; returns its worker's job id. */
static uint64_t
open_session(struct fx *f, const char *request, char sid[SESSION_ID_LEN + 1])
{
    cJSON *first = NULL;
    uint64_t job = start_worker_of(f, request, &first);
    assert_string_equal(msg_get_string(first, "op", ""), "session");
    assert_null(cJSON_GetObjectItem(first, "run")); /* not a run */
    cJSON_Delete(first);
    send_frame(f->worker.fd, "{\"event\":\"ready\"}");
    cJSON *r = expect_ok(f, 1);
    snprintf(sid, SESSION_ID_LEN + 1, "%s", msg_get_string(r, "session", ""));
    cJSON_Delete(r);
    return job;
}

/* exec `code` in session sid as request id; the worker answers it with outcome. */
static void
exec_answered(struct fx *f, int id, const char *sid, int64_t expect_run, const char *outcome)
{
    send_fmt(f->client.fd, "{\"id\":%d,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"1\"}", id,
             sid);
    assert_int_equal(expect_worker_frame(f, "run"), expect_run);
    send_fmt(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"%s\"}", outcome);
    cJSON *r = recv_frame(f, &f->client, 3000);
    assert_non_null(r);
    assert_int_equal(msg_get_int(r, "id", -1), id);
    cJSON_Delete(r);
}

static void
test_session_runs_count_and_cancel_names_the_run(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    exec_answered(f, 2, sid, 1, "ok");
    /* A get is not a run: no number, and the count goes on after it. */
    send_fmt(f->client.fd, "{\"id\":3,\"op\":\"session.get\",\"session\":\"%s\",\"names\":[]}",
             sid);
    assert_int_equal(expect_worker_frame(f, "get"), 0);
    send_frame(f->worker.fd, "{\"event\":\"variables\",\"variables\":{}}");
    cJSON_Delete(expect_ok(f, 3));
    exec_answered(f, 4, sid, 2, "error");

    send_fmt(f->client.fd, "{\"id\":5,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"1\"}", sid);
    assert_int_equal(expect_worker_frame(f, "run"), 3);
    send_frame(f->client.fd, "{\"id\":6,\"op\":\"cancel\",\"target\":5}");
    cJSON_Delete(expect_ok(f, 6));
    assert_int_equal(fake.cancels[job], 1);
    assert_int_equal(fake.cancel_run[job], 3);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"cancelled\"}");
    cJSON *r = recv_frame(f, &f->client, 3000);
    assert_non_null(r);
    assert_int_equal(msg_get_int(r, "id", -1), 5);
    assert_string_equal(msg_get_string(cJSON_GetObjectItem(r, "error"), "code", ""), "cancelled");
    cJSON_Delete(r);
    exec_answered(f, 7, sid, 4, "ok");

    send_fmt(f->client.fd, "{\"id\":8,\"op\":\"session.close\",\"session\":\"%s\"}", sid);
    cJSON_Delete(expect_ok(f, 8));
    end_worker(f, job, 0, SIGKILL, true, 1);
}

/* The connection that sent the exec a detached session runs closes (session.c cancels it): that
 * cancel names the run in flight too, and the next connection's exec is the next run. */
static void
test_closed_connection_cancel_names_the_run(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\",\"detach\":true}", sid);
    exec_answered(f, 2, sid, 1, "ok");
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct pf_error *err = NULL;
    assert_int_equal(conn_open_fd(&f->d, sv[0], NULL, &err), 0);
    send_fmt(sv[1], "{\"id\":3,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"1\"}", sid);
    assert_int_equal(expect_worker_frame(f, "run"), 2);
    send_fmt(f->client.fd, "{\"id\":4,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"1\"}", sid);
    pump(f, 10);
    close(sv[1]);
    for (int i = 0; i < 1000 && fake.cancels[job] == 0; i++)
        pump(f, 1);
    assert_int_equal(fake.cancels[job], 1);
    assert_int_equal(fake.cancel_run[job], 2);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"cancelled\"}");
    assert_int_equal(expect_worker_frame(f, "run"), 3);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\",\"output\":1}");
    cJSON_Delete(expect_ok(f, 4));
    send_fmt(f->client.fd, "{\"id\":5,\"op\":\"session.close\",\"session\":\"%s\"}", sid);
    cJSON_Delete(expect_ok(f, 5));
    end_worker(f, job, 0, SIGKILL, true, 1);
}

int
main(void)
{
    pf_log_init(PF_LOG_CRIT, "test_cancel_run");
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_ephemeral_job_is_run_1, setup, teardown),
            cmocka_unit_test_setup_teardown(test_session_runs_count_and_cancel_names_the_run, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_closed_connection_cancel_names_the_run, setup,
                                            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
