/* The queues of sessions, through the daemon with conn_fixture.c's fake zygote. Requests to one
 * session wait their turn: in order, bounded by max_pending_per_session, cancellable, answered
 * when the session is lost or closed, dropped with their connection. And a session.open waits in
 * the scheduler's queue when no worker is free (max_workers 1). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "pf_error.h"
#include "session.h"
#include "session_fixture.h"

/* ---- requests waiting for their session ------------------------------------------------ */

/* Nothing more reached the worker (it is still on the request before). */
static void
expect_worker_quiet(struct fx *f)
{
    cJSON *r = recv_frame(f, &f->worker, 50);
    if (r) {
        char *all = cJSON_PrintUnformatted(r);
        fail_msg("the worker got a frame while busy: %s", all);
    }
}

static double
queue_ms(const cJSON *reply)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "stats"), "queue_ms")->valuedouble;
}

/* Requests sent while one runs wait their turn and go to the worker one after the other, in
 * arrival order; a get waits like an exec. */
static void
test_requests_queue_in_order(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    send_exec(f, 2, sid, "x");
    expect_run(f, "x");
    send_exec(f, 3, sid, "y");
    send_fmt(f->client.fd, "{\"id\":4,\"op\":\"session.get\",\"session\":\"%s\",\"names\":[\"a\"]}",
             sid);
    send_exec(f, 5, sid, "z");
    pump(f, 20);
    expect_worker_quiet(f);
    struct pf_error *err = NULL;
    struct session *s = session_find(&f->d.sessions, sid, getuid(), &err);
    assert_non_null(s);
    assert_int_equal(s->n_pending, 3);
    send_frame(f->client.fd, "{\"id\":6,\"op\":\"session.list\"}");
    cJSON *r = expect_ok(f, "6");
    cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "sessions"), 0);
    assert_string_equal(cJSON_GetObjectItem(e, "state")->valuestring, "busy");
    assert_int_equal(cJSON_GetObjectItem(e, "pending")->valueint, 3);
    cJSON_Delete(r);
    /* Fields fixed at open are refused at once, queue or not. */
    send_fmt(f->client.fd,
             "{\"id\":7,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"y\",\"imports\":[\"json\"]}",
             sid);
    r = expect_error(f, "7", "bad_request");
    assert_string_equal(error_message(r), "exec request: field 'imports' cannot be used with a "
                                          "session (it is set by session.open)");
    cJSON_Delete(r);

    send_result(f, 1);
    cJSON_Delete(expect_ok(f, "2"));
    expect_run(f, "y");
    expect_worker_quiet(f);
    send_result(f, 2);
    r = expect_ok(f, "3");
    assert_int_equal(cJSON_GetObjectItem(r, "output")->valueint, 2);
    assert_true(queue_ms(r) >= 20); /* it waited for request 2 */
    cJSON_Delete(r);
    cJSON *get = recv_frame(f, &f->worker, 2000);
    assert_string_equal(cJSON_GetObjectItem(get, "op")->valuestring, "get");
    cJSON_Delete(get);
    send_frame(f->worker.fd, "{\"event\":\"variables\",\"variables\":{\"a\":3}}");
    cJSON_Delete(expect_ok(f, "4"));
    expect_run(f, "z");
    send_result(f, 3);
    cJSON_Delete(expect_ok(f, "5"));
    assert_int_equal(s->n_pending, 0);
    assert_int_equal(s->state, SESSION_IDLE);
}

/* At most the session's max_pending_per_session (here tightened by session.open to 3) wait
 * behind the one running: more are busy, with when to retry. */
static void
test_pending_limit(void **state)
{
    struct fx *f = *state;
    enum { MAX = 3 };
    char sid[SESSION_ID_LEN + 1];
    open_session(f, "{\"id\":1,\"op\":\"session.open\",\"limits\":{\"max_pending_per_session\":3}}",
                 sid);
    struct pf_error *err = NULL;
    struct session *s = session_find(&f->d.sessions, sid, getuid(), &err);
    assert_non_null(s);
    assert_int_equal(s->limits.v[POLICY_LIMIT_MAX_PENDING_PER_SESSION], MAX);
    send_exec(f, 2, sid, "x");
    expect_run(f, "x");
    for (int i = 0; i < MAX; i++)
        send_exec(f, 10 + i, sid, "y");
    send_exec(f, 99, sid, "z");
    cJSON *r = expect_error(f, "99", "busy");
    char expect[200];
    snprintf(expect, sizeof(expect), "session '%s' already has %d requests waiting", sid, MAX);
    assert_non_null(strstr(error_message(r), expect));
    assert_non_null(strstr(error_message(r), "(max_pending_per_session 3)"));
    cJSON *retry = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "retry_after_ms");
    assert_true(cJSON_IsNumber(retry) && retry->valuedouble >= SCHED_RETRY_MIN_MS);
    cJSON_Delete(r);
    /* Once one has gone to the worker, there is room again. */
    send_result(f, 1);
    cJSON_Delete(expect_ok(f, "2"));
    expect_run(f, "y");
    send_exec(f, 100, sid, "w");
    pump(f, 10);
    assert_int_equal(s->n_pending, MAX);
    for (int i = 0; i <= MAX; i++) {
        send_result(f, i);
        cJSON_Delete(recv_frame(f, &f->client, 2000));
        if (i < MAX)
            cJSON_Delete(recv_frame(f, &f->worker, 2000));
    }
    assert_int_equal(s->n_pending, 0);
}

/* max_pending_per_session 0: the session serves one request at a time, and one sent while it
 * runs is busy at once instead of waiting. */
static void
test_pending_limit_zero(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    open_session(f, "{\"id\":1,\"op\":\"session.open\",\"limits\":{\"max_pending_per_session\":0}}",
                 sid);
    for (int round = 0; round < 2; round++) {
        send_exec(f, 2, sid, "x");
        expect_run(f, "x");
        send_exec(f, 3, sid, "y");
        cJSON *r = expect_error(f, "3", "busy");
        assert_non_null(strstr(error_message(r), "already has 0 requests waiting"));
        assert_non_null(strstr(error_message(r), "(max_pending_per_session 0)"));
        cJSON_Delete(r);
        expect_worker_quiet(f);
        send_result(f, round);
        cJSON_Delete(expect_ok(f, "2"));
    }
}

/* session.open may tighten max_pending_per_session, never loosen it, and the error names it;
 * its reply lists the session's value with the other job limits. */
static void
test_pending_limit_tighten_only(void **state)
{
    struct fx *f = *state;
    send_frame(f->client.fd,
               "{\"id\":1,\"op\":\"session.open\",\"limits\":{\"max_pending_per_session\":17}}");
    cJSON *r = expect_error(f, "1", "bad_request");
    assert_non_null(strstr(error_message(r), "limits.max_pending_per_session: 17 would loosen "
                                             "the profile's 16"));
    cJSON_Delete(r);
    send_frame(f->client.fd,
               "{\"id\":1,\"op\":\"session.open\",\"limits\":{\"max_pending_per_session\":-1}}");
    r = expect_error(f, "1", "bad_request");
    assert_non_null(strstr(error_message(r), "limits.max_pending_per_session: -1 is below "
                                             "minimum 0"));
    cJSON_Delete(r);
    assert_int_equal(f->d.sessions.n, 0);
    uint64_t before = fake.last_job;
    send_frame(f->client.fd,
               "{\"id\":1,\"op\":\"session.open\",\"limits\":{\"max_pending_per_session\":5}}");
    for (int i = 0; i < 1000 && fake.last_job == before; i++)
        pump(f, 1);
    f->worker.fd = fake.worker_fd[fake.last_job];
    f->worker.len = 0;
    f->worker.eof = false;
    cJSON_Delete(recv_frame(f, &f->worker, 2000));
    send_frame(f->worker.fd, "{\"event\":\"ready\"}");
    r = expect_ok(f, "1");
    cJSON *max = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "limits"), "max_pending_per_session");
    assert_true(cJSON_IsNumber(max) && max->valueint == 5);
    cJSON_Delete(r);
}

/* cancel of a request waiting its turn: answered cancelled at once (before the cancel's own
 * reply), never sent to the worker; the session goes on with the next. */
static void
test_cancel_pending_request(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    send_exec(f, 2, sid, "x");
    expect_run(f, "x");
    send_exec(f, 3, sid, "must_not_run");
    send_exec(f, 4, sid, "y");
    send_frame(f->client.fd, "{\"id\":5,\"op\":\"cancel\",\"target\":3}");
    cJSON *r = expect_error(f, "3", "cancelled");
    assert_string_equal(cJSON_GetObjectItem(r, "outcome")->valuestring, "cancelled");
    assert_string_equal(error_message(r), "Code execution was cancelled before it started");
    assert_null(cJSON_GetObjectItem(r, "session_lost"));
    cJSON_Delete(r);
    r = expect_ok(f, "5");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "cancelled")));
    cJSON_Delete(r);
    assert_int_equal(fake.cancels[job], 0); /* the running one was left alone */
    send_result(f, 1);
    cJSON_Delete(expect_ok(f, "2"));
    expect_run(f, "y");
    send_result(f, 2);
    cJSON_Delete(expect_ok(f, "4"));
    /* Answered: nothing left to cancel. */
    send_frame(f->client.fd, "{\"id\":6,\"op\":\"cancel\",\"target\":3}");
    r = expect_ok(f, "6");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(r, "cancelled")));
    cJSON_Delete(r);
    assert_int_equal(f->d.jobs_by_outcome[PF_E_CANCELLED], 1);
}

/* The worker dies with requests waiting: the running one gets its outcome, each waiting one
 * session_lost with the cause, then the session is gone. */
static void
test_lost_session_answers_pending(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    send_exec(f, 2, sid, "boom()");
    expect_run(f, "boom()");
    send_exec(f, 3, sid, "a");
    send_fmt(f->client.fd, "{\"id\":4,\"op\":\"session.get\",\"session\":\"%s\",\"names\":[\"a\"]}",
             sid);
    pump(f, 10);
    end_worker(f, job, 0, SIGSEGV, false, 5);
    cJSON *r = expect_error(f, "2", "worker_crashed");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "session_lost")));
    cJSON_Delete(r);
    char expect[320];
    snprintf(expect, sizeof(expect), "session '%s' was lost: %s", sid, SEGV_CAUSE);
    r = expect_error(f, "3", "session_lost");
    assert_string_equal(error_message(r), expect);
    assert_string_equal(cJSON_GetObjectItem(r, "outcome")->valuestring, "session_lost");
    cJSON_Delete(r);
    r = expect_error(f, "4", "session_lost");
    assert_string_equal(error_message(r), expect);
    cJSON_Delete(r);
    /* Told: the id is gone. */
    send_exec(f, 5, sid, "1");
    cJSON_Delete(expect_error(f, "5", "not_found"));
    assert_int_equal(f->d.sessions.n, 0);
}

/* A memory_limit result retires the worker: the waiting requests are told at once. */
static void
test_retired_worker_answers_pending(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    send_exec(f, 2, sid, "x");
    expect_run(f, "x");
    send_exec(f, 3, sid, "y");
    pump(f, 10);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"memory_limit\",\"output\":null,"
                             "\"error\":{\"type\":\"MemoryError\",\"message\":\"m\"}}");
    cJSON_Delete(expect_error(f, "2", "memory_limit"));
    cJSON *r = expect_error(f, "3", "session_lost");
    assert_non_null(strstr(error_message(r), "was lost: worker killed by the memory limit"));
    cJSON_Delete(r);
    expect_worker_quiet(f); /* "y" never went to the retired worker */
    end_worker(f, job, 0, SIGKILL, true, 5);
    send_exec(f, 4, sid, "1");
    cJSON_Delete(expect_error(f, "4", "not_found"));
}

/* session.close with requests waiting: they are answered cancelled, like the one running. */
static void
test_close_answers_pending(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    send_exec(f, 2, sid, "x");
    expect_run(f, "x");
    send_exec(f, 3, sid, "y");
    send_fmt(f->client.fd, "{\"id\":4,\"op\":\"session.close\",\"session\":\"%s\"}", sid);
    cJSON *r = expect_error(f, "3", "cancelled");
    assert_non_null(strstr(error_message(r), "was closed before this request ran"));
    cJSON_Delete(r);
    r = expect_error(f, "2", "cancelled");
    assert_non_null(strstr(error_message(r), "was closed while this request ran"));
    cJSON_Delete(r);
    cJSON_Delete(expect_ok(f, "4"));
    end_worker(f, job, 0, SIGKILL, true, 1);
}

/* A connection that closes drops its waiting requests: they never reach the worker; another
 * connection's go on. */
static void
test_conn_close_drops_its_pending(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    open_session(f, "{\"id\":1,\"op\":\"session.open\",\"detach\":true}", sid);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct pf_error *err = NULL;
    assert_int_equal(conn_open_fd(&f->d, sv[0], NULL, &err), 0);
    send_exec(f, 2, sid, "x");
    expect_run(f, "x");
    send_fmt(sv[1], "{\"id\":3,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"gone\"}", sid);
    send_exec(f, 4, sid, "y");
    pump(f, 20);
    struct session *s = session_find(&f->d.sessions, sid, getuid(), &err);
    assert_non_null(s);
    assert_int_equal(s->n_pending, 2);
    close(sv[1]);
    pump(f, 20);
    assert_int_equal(s->n_pending, 1);
    send_result(f, 1);
    cJSON_Delete(expect_ok(f, "2"));
    expect_run(f, "y");
    send_result(f, 2);
    cJSON_Delete(expect_ok(f, "4"));
    expect_worker_quiet(f);
}

/* ---- session.open in the scheduler's queue (max_workers 1) ------------------------------ */

static void
tune_one_worker(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_MAX_WORKERS] = 1;
    l->v[POLICY_LIMIT_MAX_QUEUED] = 1;
}

static int
setup_one_worker(void **state)
{
    return setup_with(state, tune_one_worker);
}

/* The worker of a session.open that waited is asked for: its `session` frame, then ready. */
static cJSON *
finish_open(struct fx *f, uint64_t before, const char *id_json)
{
    for (int i = 0; i < 1000 && fake.last_job == before; i++)
        pump(f, 1);
    assert_true(fake.last_job > before);
    f->worker.fd = fake.worker_fd[fake.last_job];
    f->worker.len = 0;
    f->worker.eof = false;
    cJSON *first = recv_frame(f, &f->worker, 2000);
    assert_string_equal(cJSON_GetObjectItem(first, "op")->valuestring, "session");
    cJSON_Delete(first);
    send_frame(f->worker.fd, "{\"event\":\"ready\"}");
    return expect_ok(f, id_json);
}

/* The one worker runs an ephemeral exec (id 1, code "x"): a session.open must wait for it. */
static uint64_t
hold_the_worker(struct fx *f)
{
    return start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
}

/* That exec ends: its reply, then its worker's exit frees the slot. */
static void
release_the_worker(struct fx *f, uint64_t job)
{
    f->worker.fd = fake.worker_fd[job];
    send_result(f, 7);
    cJSON_Delete(expect_ok(f, "1"));
    pump(f, 20);
    assert_int_equal(fake.last_job, job); /* nothing forked before the worker is reaped */
    end_worker(f, job, 0, 0, false, 1);
}

/* Every worker taken by a job: session.open waits (no busy), and its worker is forked when one
 * frees; its reply says how long it waited. */
static void
test_open_waits_for_a_worker(void **state)
{
    struct fx *f = *state;
    uint64_t job_x = hold_the_worker(f);
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"session.open\"}");
    pump(f, 30);
    assert_int_equal(fake.last_job, job_x); /* no worker forked for it yet */
    assert_int_equal(f->d.sched.queued, 1);
    assert_int_equal(f->d.sessions.n, 1);
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"session.list\"}");
    cJSON *r = expect_ok(f, "3");
    cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "sessions"), 0);
    assert_string_equal(cJSON_GetObjectItem(e, "state")->valuestring, "starting");
    cJSON_Delete(r);
    release_the_worker(f, job_x);
    r = finish_open(f, job_x, "2");
    double waited = queue_ms(r);
    assert_true(waited >= 50);
    char b[SESSION_ID_LEN + 1];
    snprintf(b, sizeof(b), "%s", cJSON_GetObjectItem(r, "session")->valuestring);
    cJSON_Delete(r);
    assert_int_equal(f->d.sched.queued, 0);
    assert_int_equal(f->d.sched.running, 0); /* answered: it left the scheduler */
    send_exec(f, 5, b, "x");
    expect_run(f, "x");
    send_result(f, 7);
    cJSON_Delete(expect_ok(f, "5"));
}

/* The queue full (max_queued 1): busy with retry_after_ms, and nothing is left of it. */
static void
test_open_busy_when_queue_full(void **state)
{
    struct fx *f = *state;
    uint64_t job_x = hold_the_worker(f);
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"exec\",\"code\":\"y\"}");
    pump(f, 10);
    assert_int_equal(f->d.sched.queued, 1);
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"session.open\"}");
    cJSON *r = expect_error(f, "3", "busy");
    assert_non_null(strstr(error_message(r), "(max_queued)"));
    cJSON *retry = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "retry_after_ms");
    assert_true(cJSON_IsNumber(retry) && retry->valuedouble >= SCHED_RETRY_MIN_MS);
    cJSON_Delete(r);
    assert_int_equal(f->d.sessions.n, 0);
    assert_int_equal(f->d.sched.queued, 1);
    assert_int_equal(fake.last_job, job_x);
}

/* Sessions may hold every worker but those kept for ephemeral execs (max_workers 1: the one):
 * one more session.open is busy at once, without waiting in the queue, and names the bound. */
static void
test_open_busy_at_session_capacity(void **state)
{
    struct fx *f = *state;
    char a[SESSION_ID_LEN + 1];
    uint64_t job_a = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", a);
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"session.open\",\"detach\":true}");
    cJSON *r = expect_error(f, "2", "busy");
    assert_string_equal(error_message(r),
                        "sessions already hold their share of the workers: 1 of max_workers 1 "
                        "(0 kept for ephemeral execs); try again when a session ends");
    cJSON_Delete(r);
    assert_int_equal(f->d.sessions.n, 1);
    assert_int_equal(f->d.sched.queued, 0);
    assert_int_equal(fake.last_job, job_a);
    /* Its end makes room again. */
    send_fmt(f->client.fd, "{\"id\":3,\"op\":\"session.close\",\"session\":\"%s\"}", a);
    cJSON_Delete(expect_ok(f, "3"));
    end_worker(f, job_a, 0, SIGKILL, true, 1);
    char b[SESSION_ID_LEN + 1];
    open_session(f, "{\"id\":1,\"op\":\"session.open\"}", b);
}

/* The connection of a waiting session.open closes: it leaves the queue and never starts, even
 * detached (its id was never told). */
static void
test_open_dropped_when_its_conn_closes(void **state)
{
    struct fx *f = *state;
    uint64_t job_x = hold_the_worker(f);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct pf_error *err = NULL;
    assert_int_equal(conn_open_fd(&f->d, sv[0], NULL, &err), 0);
    send_frame(sv[1], "{\"id\":1,\"op\":\"session.open\",\"detach\":true}");
    pump(f, 20);
    assert_int_equal(f->d.sched.queued, 1);
    assert_int_equal(f->d.sessions.n, 1);
    close(sv[1]);
    pump(f, 20);
    assert_int_equal(f->d.sched.queued, 0);
    assert_int_equal(f->d.sessions.n, 0);
    /* The slot frees: nothing was waiting for it. */
    release_the_worker(f, job_x);
    pump(f, 20);
    assert_int_equal(fake.last_job, job_x);
    assert_int_equal(f->d.jobs_running, 0);
}

/* cancel of a waiting session.open: answered cancelled, out of the queue. */
static void
test_cancel_waiting_open(void **state)
{
    struct fx *f = *state;
    uint64_t job_x = hold_the_worker(f);
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"session.open\"}");
    pump(f, 10);
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"cancel\",\"target\":2}");
    cJSON *r = expect_error(f, "2", "cancelled");
    assert_non_null(strstr(error_message(r), "session.open was cancelled"));
    cJSON_Delete(r);
    r = expect_ok(f, "3");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "cancelled")));
    cJSON_Delete(r);
    assert_int_equal(f->d.sched.queued, 0);
    assert_int_equal(f->d.sessions.n, 0);
    assert_int_equal(fake.last_job, job_x);
}

int
main(void)
{
    /* As pyfenced does: a reply to a client that is gone is EPIPE, not the end. */
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest pending_tests[] = {
            cmocka_unit_test_setup_teardown(test_requests_queue_in_order, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pending_limit, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pending_limit_zero, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pending_limit_tighten_only, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cancel_pending_request, setup, teardown),
            cmocka_unit_test_setup_teardown(test_lost_session_answers_pending, setup, teardown),
            cmocka_unit_test_setup_teardown(test_retired_worker_answers_pending, setup, teardown),
            cmocka_unit_test_setup_teardown(test_close_answers_pending, setup, teardown),
            cmocka_unit_test_setup_teardown(test_conn_close_drops_its_pending, setup, teardown),
    };
    const struct CMUnitTest queue_tests[] = {
            cmocka_unit_test_setup_teardown(test_open_waits_for_a_worker, setup_one_worker,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_open_busy_when_queue_full, setup_one_worker,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_open_busy_at_session_capacity, setup_one_worker,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_open_dropped_when_its_conn_closes,
                                            setup_one_worker, teardown),
            cmocka_unit_test_setup_teardown(test_cancel_waiting_open, setup_one_worker, teardown),
    };
    int r = cmocka_run_group_tests_name("requests waiting for their session", pending_tests, NULL,
                                        NULL);
    return r | cmocka_run_group_tests_name("session.open in the queue", queue_tests, NULL, NULL);
}
