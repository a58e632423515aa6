/* Sessions through the daemon, on a real uv loop with conn_fixture.c's fake zygote: the test
 * plays the client and the session's worker over socketpairs. session.open, exec, session.get,
 * session.list and session.close; the owner check; a session lost with its worker, and the cause
 * told once; the end of the connection that opened it (attached or detached) or that runs its
 * exec; cancel; session.open failing. The table on its own is test_session_table.c, the queues
 * test_session_queue.c. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "job.h"
#include "pf_cleanup.h"
#include "pf_error.h"
#include "session.h"
#include "session_fixture.h"

static struct conn *
the_conn(struct fx *f)
{
    assert_false(dlist_empty(&f->d.conns));
    return pf_container_of(f->d.conns.next, struct conn, link);
}

static void
test_open_exec_get_close(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job =
            open_session(f, "{\"id\":1,\"op\":\"session.open\",\"variables\":{\"a\":1}}", sid);

    for (int round = 0; round < 2; round++) {
        send_fmt(f->client.fd,
                 "{\"id\":2,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"a += 1\\na\"}", sid);
        cJSON *run = recv_frame(f, &f->worker, 2000);
        assert_non_null(run);
        assert_string_equal(cJSON_GetObjectItem(run, "op")->valuestring, "run");
        assert_string_equal(cJSON_GetObjectItem(run, "code")->valuestring, "a += 1\na");
        assert_null(cJSON_GetObjectItem(run, "limits")); /* fixed when the session opened */
        cJSON_Delete(run);
        send_frame(f->worker.fd, "{\"event\":\"output\",\"data\":\"hi\\n\"}");
        send_fmt(f->worker.fd,
                 "{\"event\":\"result\",\"outcome\":\"ok\",\"output\":%d,\"output_repr\":\"%d\","
                 "\"logs\":\"hi\\n\",\"stats\":{\"ops\":3}}",
                 round + 2, round + 2);
        cJSON *ev = recv_frame(f, &f->client, 2000);
        assert_string_equal(cJSON_GetObjectItem(ev, "event")->valuestring, "output");
        cJSON_Delete(ev);
        cJSON *r = expect_ok(f, "2");
        assert_int_equal(cJSON_GetObjectItem(r, "output")->valueint, round + 2);
        assert_string_equal(cJSON_GetObjectItem(r, "outcome")->valuestring, "ok");
        cJSON_Delete(r);
    }

    send_fmt(f->client.fd,
             "{\"id\":3,\"op\":\"session.get\",\"session\":\"%s\",\"names\":[\"a\",\"nope\"]}",
             sid);
    cJSON *get = recv_frame(f, &f->worker, 2000);
    assert_string_equal(cJSON_GetObjectItem(get, "op")->valuestring, "get");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(get, "names")), 2);
    cJSON_Delete(get);
    send_frame(f->worker.fd, "{\"event\":\"variables\",\"variables\":{\"a\":3}}");
    cJSON *r = expect_ok(f, "3");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "variables"), "a")->valueint, 3);
    cJSON *missing = cJSON_GetObjectItem(r, "missing");
    assert_int_equal(cJSON_GetArraySize(missing), 1);
    assert_string_equal(cJSON_GetArrayItem(missing, 0)->valuestring, "nope");
    cJSON_Delete(r);

    send_frame(f->client.fd, "{\"id\":4,\"op\":\"session.list\"}");
    r = expect_ok(f, "4");
    cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "sessions"), 0);
    assert_string_equal(cJSON_GetObjectItem(e, "id")->valuestring, sid);
    assert_int_equal(cJSON_GetObjectItem(e, "execs")->valueint, 2);
    assert_string_equal(cJSON_GetObjectItem(e, "state")->valuestring, "idle");
    cJSON_Delete(r);

    send_fmt(f->client.fd, "{\"id\":5,\"op\":\"session.close\",\"session\":\"%s\"}", sid);
    cJSON_Delete(expect_ok(f, "5"));
    assert_true(fake.kills[job] > 0);
    end_worker(f, job, 0, SIGKILL, true, 1);
    send_fmt(f->client.fd, "{\"id\":6,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"a\"}", sid);
    cJSON_Delete(expect_error(f, "6", "not_found"));
    assert_int_equal(f->d.sessions.n, 0);
}

/* exec, session.get or session.close of session sid, as request 2. */
static void
send_op(int fd, int which, const char *sid)
{
    if (which == 0)
        send_fmt(fd, "{\"id\":2,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"1\"}", sid);
    else if (which == 1)
        send_fmt(fd, "{\"id\":2,\"op\":\"session.get\",\"session\":\"%s\",\"names\":[\"a\"]}", sid);
    else
        send_fmt(fd, "{\"id\":2,\"op\":\"session.close\",\"session\":\"%s\"}", sid);
}

/* A session's worker is hardened with the session's limits: a scratch_mb the open tightened
 * sizes its /tmp, and file_size_mb stays the profile's. */
static void
test_open_scratch_mb_reaches_worker(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    assert_int_equal(fake.last_params.scratch_mb, 16);
    end_worker(f, job, 0, SIGKILL, true, 0);
    job = open_session(f, "{\"id\":1,\"op\":\"session.open\",\"limits\":{\"scratch_mb\":2}}", sid);
    assert_int_equal(fake.last_params.scratch_mb, 2);
    assert_int_equal(fake.last_params.file_size_mb, 16);
    end_worker(f, job, 0, SIGKILL, true, 0);
}

static void
test_other_uid_sees_not_found(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\",\"detach\":true}", sid);
    struct conn *c = the_conn(f);
    uid_t mine = c->uid;
    c->uid = mine + 1;
    for (int i = 0; i < 3; i++) {
        char msg_theirs[128], msg_missing[128];
        send_op(f->client.fd, i, sid);
        cJSON *r = expect_error(f, "2", "not_found");
        snprintf(msg_theirs, sizeof(msg_theirs), "%s", error_message(r));
        cJSON_Delete(r);
        send_op(f->client.fd, i, "0123456789abcdef0123456789abcdef");
        r = expect_error(f, "2", "not_found");
        snprintf(msg_missing, sizeof(msg_missing), "%s", error_message(r));
        cJSON_Delete(r);
        char expect[128];
        snprintf(expect, sizeof(expect), "no session '%s'", sid);
        assert_string_equal(msg_theirs, expect);
        assert_string_equal(msg_missing, "no session '0123456789abcdef0123456789abcdef'");
    }
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"session.list\"}");
    cJSON *r = expect_ok(f, "3");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r, "sessions")), 0);
    cJSON_Delete(r);
    /* Nothing reached the worker, and the session is still its owner's. */
    assert_int_equal(fake.kills[job], 0);
    assert_int_equal(f->d.sessions.n, 1);
    c->uid = mine;
}

static void
test_worker_death_loses_session(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    send_fmt(f->client.fd, "{\"id\":2,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"boom()\"}",
             sid);
    cJSON_Delete(recv_frame(f, &f->worker, 2000));
    end_worker(f, job, 0, SIGSEGV, false, 5);
    cJSON *r = expect_error(f, "2", "worker_crashed");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "session_lost")));
    assert_string_equal(cJSON_GetObjectItem(r, "outcome")->valuestring, "worker_crashed");
    assert_non_null(strstr(error_message(r), "worker killed by signal SIGSEGV"));
    cJSON_Delete(r);

    /* The next request learns why, once; then the session is gone. */
    send_fmt(f->client.fd, "{\"id\":3,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"1\"}", sid);
    r = expect_error(f, "3", "session_lost");
    char expect[320];
    snprintf(expect, sizeof(expect), "session '%s' was lost: %s", sid, SEGV_CAUSE);
    assert_string_equal(error_message(r), expect);
    cJSON_Delete(r);
    send_fmt(f->client.fd, "{\"id\":4,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"1\"}", sid);
    cJSON_Delete(expect_error(f, "4", "not_found"));
}

static void
test_cpu_limit_counts_the_session(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    send_fmt(f->client.fd, "{\"id\":2,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"x\"}", sid);
    cJSON_Delete(recv_frame(f, &f->worker, 2000));
    end_worker(f, job, 0, SIGXCPU, false, 30001);
    cJSON *r = expect_error(f, "2", "cpu_limit");
    assert_non_null(strstr(error_message(r), "counts every snippet of the session"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "session_lost")));
    cJSON_Delete(r);
}

static void
test_channel_end_before_exit(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    /* The worker's channel ends while it is idle; the zygote has not said why yet. */
    close(fake.worker_fd[job]);
    fake.worker_fd[job] = 0;
    pump(f, 10);
    send_fmt(f->client.fd, "{\"id\":2,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"1\"}", sid);
    cJSON *r = expect_error(f, "2", "session_lost");
    assert_non_null(strstr(error_message(r), "was lost: its worker ended"));
    cJSON_Delete(r);
    send_fmt(f->client.fd, "{\"id\":3,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"1\"}", sid);
    cJSON_Delete(expect_error(f, "3", "not_found"));
    struct zygote_exit e = {.job_id = job, .pid = 77, .signal = SIGSEGV};
    job_on_exit(fake.ctx[job], &e);
    pump(f, 5);

    /* Same, but the exit comes before anyone asks: the cause is the exit's. */
    job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    close(fake.worker_fd[job]);
    fake.worker_fd[job] = 0;
    pump(f, 10);
    job_on_exit(fake.ctx[job], &e);
    pump(f, 5);
    send_fmt(f->client.fd, "{\"id\":4,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"1\"}", sid);
    r = expect_error(f, "4", "session_lost");
    assert_non_null(strstr(error_message(r), "was lost: worker killed by signal SIGSEGV"));
    cJSON_Delete(r);
}

static void
test_oom_killed_worker(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    /* Dies while idle, by the cgroup's OOM killer. */
    close(fake.worker_fd[job]);
    fake.worker_fd[job] = 0;
    struct zygote_exit e = {
            .job_id = job, .pid = 77, .signal = SIGKILL, .have_cgroup = true, .oom_killed = true};
    job_on_exit(fake.ctx[job], &e);
    pump(f, 5);
    send_fmt(f->client.fd, "{\"id\":2,\"op\":\"session.get\",\"session\":\"%s\",\"names\":[]}",
             sid);
    cJSON *r = expect_error(f, "2", "session_lost");
    assert_non_null(strstr(error_message(r), "was lost: worker killed by the memory limit"));
    cJSON_Delete(r);
}

/* A session's worker that dies mid-exec gets the outcome an ephemeral job's would
 * (job_outcome_from_exit), whatever the cgroup and seccomp said; only the words differ. */
static void
test_exit_outcomes_match_jobs(void **state)
{
    struct fx *f = *state;
    const struct zygote_exit exits[] = {
            {.signal = SIGKILL, .have_cgroup = true, .oom_killed = true},
            {.signal = SIGKILL, .have_cgroup = true, .pids_limited = true},
            {.exit_code = 1, .have_cgroup = true, .pids_limited = true},
            {.signal = SIGXCPU, .cpu_ms = 40},
            {.signal = SIGSYS},
            {.signal = SIGSYS, .have_cgroup = true, .oom_killed = true},
            {.signal = SIGSEGV},
            {.exit_code = 3},
    };
    for (size_t i = 0; i < PF_ELEMENTSOF(exits); i++) {
        char sid[SESSION_ID_LEN + 1];
        uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
        send_fmt(f->client.fd, "{\"id\":2,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"x\"}", sid);
        cJSON_Delete(recv_frame(f, &f->worker, 2000));
        close(fake.worker_fd[job]);
        fake.worker_fd[job] = 0;
        struct zygote_exit e = exits[i];
        e.job_id = job;
        e.pid = 77;
        job_on_exit(fake.ctx[job], &e);
        char msg[256];
        int code = job_outcome_from_exit(&e, 1000000, "", msg, sizeof(msg));
        cJSON *r = expect_error(f, "2", pf_code_name(code));
        assert_string_equal(cJSON_GetObjectItem(r, "outcome")->valuestring, pf_code_name(code));
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "session_lost")));
        cJSON_Delete(r);
        send_fmt(f->client.fd, "{\"id\":3,\"op\":\"session.close\",\"session\":\"%s\"}", sid);
        cJSON_Delete(recv_frame(f, &f->client, 2000)); /* session_lost, told once */
    }
}

static void
test_memory_limit_result_retires_worker(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    send_fmt(f->client.fd, "{\"id\":2,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"x\"}", sid);
    cJSON_Delete(recv_frame(f, &f->worker, 2000));
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"memory_limit\",\"output\":null,"
                             "\"error\":{\"type\":\"MemoryError\",\"message\":\"m\"}}");
    cJSON *r = expect_error(f, "2", "memory_limit");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "session_lost")));
    cJSON_Delete(r);
    assert_true(fake.kills[job] > 0);
    end_worker(f, job, 0, SIGKILL, true, 5);
    send_fmt(f->client.fd, "{\"id\":3,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"1\"}", sid);
    r = expect_error(f, "3", "session_lost");
    assert_non_null(strstr(error_message(r), "worker killed by the memory limit (memory_mb"));
    cJSON_Delete(r);
}

static void
test_deadline_backstop_loses_session(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(
            f, "{\"id\":1,\"op\":\"session.open\",\"limits\":{\"timeout_ms\":30}}", sid);
    send_fmt(f->client.fd, "{\"id\":2,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"x\"}", sid);
    cJSON_Delete(recv_frame(f, &f->worker, 2000));
    cJSON *r = recv_frame(f, &f->client, 3000); /* 30 ms + the grace */
    assert_non_null(r);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "code")->valuestring,
                        "timeout");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "session_lost")));
    cJSON_Delete(r);
    assert_true(fake.kills[job] > 0);
    end_worker(f, job, 0, SIGKILL, true, 5);
    send_fmt(f->client.fd, "{\"id\":3,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"1\"}", sid);
    r = expect_error(f, "3", "session_lost");
    assert_non_null(
            strstr(error_message(r), "worker killed at the wall-clock limit (timeout_ms 30)"));
    cJSON_Delete(r);
}

/* The connection that sent the exec a detached session runs closes: nobody will hear its
 * reply, so it is cancelled as `cancel` would (the worker is signalled, not killed). The snippet
 * stops, the session goes on, and another connection's request runs at once. */
static void
test_conn_close_cancels_its_running_exec(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\",\"detach\":true}", sid);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct pf_error *err = NULL;
    assert_int_equal(conn_open_fd(&f->d, sv[0], NULL, &err), 0);
    send_fmt(sv[1], "{\"id\":3,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"loop()\"}", sid);
    expect_run(f, "loop()");
    send_exec(f, 4, sid, "after");
    pump(f, 10);
    assert_int_equal(fake.cancels[job], 0);
    close(sv[1]);
    pump(f, 20);
    assert_int_equal(fake.cancels[job], 1);
    assert_int_equal(fake.kills[job], 0);
    struct session *s = session_find(&f->d.sessions, sid, getuid(), &err);
    assert_non_null(s);
    assert_int_equal(s->n_pending, 1); /* the other connection's request still waits */
    /* The executor stops at its next check. */
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"cancelled\",\"output\":null,"
                             "\"error\":{\"type\":\"InterpreterError\",\"message\":\"c\"}}");
    expect_run(f, "after");
    send_result(f, 5);
    cJSON *r = expect_ok(f, "4");
    assert_int_equal(cJSON_GetObjectItem(r, "output")->valueint, 5);
    cJSON_Delete(r);
    assert_int_equal(f->d.jobs_by_outcome[PF_E_CANCELLED], 1);
    assert_int_equal(s->state, SESSION_IDLE);
    /* No grace kill comes after a snippet that stopped. */
    pump(f, JOB_CANCEL_GRACE_MS + 100);
    assert_int_equal(fake.kills[job], 0);
    assert_int_equal(f->d.sessions.n, 1);
}

/* A cancelled session exec that does not stop (inside a long call): its worker is killed
 * JOB_CANCEL_GRACE_MS later, the reply says the session is lost, and the next request is told
 * why. */
static void
test_cancel_grace_kill_loses_session(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    send_exec(f, 2, sid, "sum(range(10**11))");
    expect_run(f, "sum(range(10**11))");
    uint64_t t0 = uv_now(&f->loop);
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"cancel\",\"target\":2}");
    cJSON *r = expect_ok(f, "3");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "cancelled")));
    cJSON_Delete(r);
    assert_int_equal(fake.cancels[job], 1);
    assert_int_equal(fake.kills[job], 0);
    /* A second cancel asks nothing more of the worker. */
    send_frame(f->client.fd, "{\"id\":4,\"op\":\"cancel\",\"target\":2}");
    cJSON_Delete(expect_ok(f, "4"));
    assert_int_equal(fake.cancels[job], 1);
    r = expect_error(f, "2", "cancelled");
    assert_true(uv_now(&f->loop) - t0 >= JOB_CANCEL_GRACE_MS - 10);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "session_lost")));
    assert_non_null(strstr(error_message(r), "did not stop within 500 ms and was killed"));
    cJSON_Delete(r);
    assert_true(fake.kills[job] > 0);
    end_worker(f, job, 0, SIGKILL, true, 5);
    send_exec(f, 5, sid, "1");
    r = expect_error(f, "5", "session_lost");
    char expect[200];
    snprintf(expect, sizeof(expect),
             "session '%s' was lost: worker killed: its snippet did not stop within 500 ms of "
             "being cancelled",
             sid);
    assert_string_equal(error_message(r), expect);
    cJSON_Delete(r);
}

static void
test_conn_close_ends_attached_not_detached(void **state)
{
    struct fx *f = *state;
    char attached[SESSION_ID_LEN + 1], detached[SESSION_ID_LEN + 1];
    uint64_t job_a = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", attached);
    uint64_t job_d =
            open_session(f, "{\"id\":1,\"op\":\"session.open\",\"detach\":true}", detached);
    assert_int_equal(f->d.sessions.n, 2);
    /* The attached one is running an exec: it ends with the session (killed, not cancelled). */
    f->worker.fd = fake.worker_fd[job_a];
    f->worker.len = 0;
    send_exec(f, 2, attached, "loop()");
    expect_run(f, "loop()");
    close(f->client.fd);
    f->client.fd = -1;
    pump(f, 20);
    assert_true(fake.kills[job_a] > 0);
    assert_int_equal(fake.cancels[job_a], 0);
    assert_int_equal(fake.kills[job_d], 0);
    assert_int_equal(f->d.sessions.n, 1);
    struct pf_error *err = NULL;
    assert_non_null(session_find(&f->d.sessions, detached, getuid(), &err));
    assert_null(session_find(&f->d.sessions, attached, getuid(), &err));
    pf_error_free(err);
    /* With no connection left, the detached session keeps the uid in the stats. */
    const struct sched_uid *u = sched_uid_find(&f->d.sched, getuid());
    assert_non_null(u);
    assert_int_equal(u->conns, 0);
    assert_int_equal(u->sessions, 1);
    assert_int_equal(session_count_uid(&f->d.sessions, getuid()), 1);
    end_worker(f, job_a, 0, SIGKILL, true, 1);
}

static void
test_session_open_failures(void **state)
{
    struct fx *f = *state;
    send_frame(f->client.fd,
               "{\"id\":1,\"op\":\"session.open\",\"limits\":{\"timeout_ms\":999999}}");
    cJSON *r = expect_error(f, "1", "bad_request");
    assert_non_null(strstr(error_message(r), "would loosen"));
    cJSON_Delete(r);
    fake.fail_spawn = true;
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"session.open\"}");
    r = expect_error(f, "2", "internal");
    assert_non_null(strstr(error_message(r), "cannot start the session's worker"));
    cJSON_Delete(r);
    fake.fail_spawn = false;
    assert_int_equal(f->d.sessions.n, 0);
    /* The worker fails to set up: session.open fails with its reason. */
    uint64_t before = fake.last_job;
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"session.open\"}");
    for (int i = 0; i < 1000 && fake.last_job == before; i++)
        pump(f, 1);
    uint64_t job = fake.last_job;
    f->worker.fd = fake.worker_fd[job];
    f->worker.len = 0;
    cJSON_Delete(recv_frame(f, &f->worker, 2000));
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"bad_request\",\"error\":"
                             "{\"message\":\"variables.x: bad tag\"}}");
    r = expect_error(f, "3", "bad_request");
    assert_string_equal(error_message(r), "variables.x: bad tag");
    cJSON_Delete(r);
    assert_int_equal(f->d.sessions.n, 0);
    end_worker(f, job, 0, SIGKILL, true, 1);
}

int
main(void)
{
    /* As pyfenced does: a reply to a client that is gone is EPIPE, not the end. */
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest daemon_tests[] = {
            cmocka_unit_test_setup_teardown(test_open_exec_get_close, setup, teardown),
            cmocka_unit_test_setup_teardown(test_open_scratch_mb_reaches_worker, setup, teardown),
            cmocka_unit_test_setup_teardown(test_other_uid_sees_not_found, setup, teardown),
            cmocka_unit_test_setup_teardown(test_worker_death_loses_session, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cpu_limit_counts_the_session, setup, teardown),
            cmocka_unit_test_setup_teardown(test_channel_end_before_exit, setup, teardown),
            cmocka_unit_test_setup_teardown(test_oom_killed_worker, setup, teardown),
            cmocka_unit_test_setup_teardown(test_exit_outcomes_match_jobs, setup, teardown),
            cmocka_unit_test_setup_teardown(test_memory_limit_result_retires_worker, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_deadline_backstop_loses_session, setup, teardown),
            cmocka_unit_test_setup_teardown(test_conn_close_ends_attached_not_detached, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_conn_close_cancels_its_running_exec, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_cancel_grace_kill_loses_session, setup, teardown),
            cmocka_unit_test_setup_teardown(test_session_open_failures, setup, teardown),
    };
    return cmocka_run_group_tests_name("sessions through the daemon", daemon_tests, NULL, NULL);
}
