/* pyfenced's exec jobs on a real uv loop, the client and the worker played by this test over
 * socketpairs, the zygote by conn_fixture.c's fake: results and errors, output streaming and
 * output_limit, the deadline, worker deaths mapped to worker_crashed / seccomp_violation /
 * cpu_limit, spawn failures, the queue at max_workers, cancellation when the client goes, and
 * the policy: the peer's profile sets limits, hardening levels and the imports a request may add.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "conn_fixture.h"
#include "harden_zygote.h"
#include "job.h"
#include "load.h"
#include "msg.h"
#include "pf_log.h"

/* ---- exec jobs --------------------------------------------------------------------------- */

static void
test_exec_error_result(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":7,\"op\":\"exec\",\"code\":\"1/0\",\"stream\":false}");
    /* stream false: output is not forwarded, only the reply comes. */
    send_frame(f->worker.fd, "{\"event\":\"output\",\"data\":\"x\"}");
    send_frame(f->worker.fd,
               "{\"event\":\"result\",\"outcome\":\"error\",\"output\":null,\"logs\":\"x\","
               "\"error\":{\"type\":\"ZeroDivisionError\",\"message\":\"Code execution failed "
               "at line '1/0' due to: ZeroDivisionError: division by zero\",\"line\":1,"
               "\"source\":\"1/0\"},\"stats\":{\"ops\":2}}");
    cJSON *r = expect_error(f, "7", "error");
    assert_string_equal(cJSON_GetObjectItem(r, "outcome")->valuestring, "error");
    cJSON *e = cJSON_GetObjectItem(r, "error");
    assert_string_equal(cJSON_GetObjectItem(e, "type")->valuestring, "ZeroDivisionError");
    assert_int_equal(cJSON_GetObjectItem(e, "line")->valueint, 1);
    assert_non_null(strstr(error_message(r), "division by zero"));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(r, "is_final_answer")));
    cJSON_Delete(r);
    end_worker(f, job, 0, 0, false, 2);
    assert_int_equal(f->d.jobs_by_outcome[PF_E_ERROR], 1);
}

/* prefix, 100,000 'x', suffix: a client string far longer than any message should echo. */
static char *
long_string_frame(const char *prefix, const char *suffix)
{
    size_t n = 100000, a = strlen(prefix), b = strlen(suffix);
    char *s = malloc(a + n + b + 1);
    assert_non_null(s);
    memcpy(s, prefix, a);
    memset(s + a, 'x', n);
    memcpy(s + a + n, suffix, b + 1);
    return s;
}

static void
test_exec_loosened_limit_refused(void **state)
{
    struct fx *f = *state;
    send_frame(f->client.fd,
               "{\"id\":1,\"op\":\"exec\",\"code\":\"1\",\"limits\":{\"timeout_ms\":90000}}");
    cJSON *r = expect_error(f, "1", "bad_request");
    assert_non_null(strstr(error_message(r), "limits.timeout_ms: 90000 would loosen"));
    cJSON_Delete(r);
    send_frame(f->client.fd,
               "{\"id\":2,\"op\":\"exec\",\"code\":\"1\",\"limits\":{\"max_inflight\":1}}");
    r = expect_error(f, "2", "bad_request");
    assert_non_null(strstr(error_message(r), "limits.max_inflight: not a per-job limit"));
    cJSON_Delete(r);
    /* A client's string is echoed cut to 64 bytes, not in full. */
    char *frame =
            long_string_frame("{\"id\":3,\"op\":\"exec\",\"code\":\"1\",\"limits\":{\"", "\":1}}");
    send_frame(f->client.fd, frame);
    free(frame);
    r = expect_error(f, "3", "bad_request");
    assert_string_equal(error_message(r),
                        "limits.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                        "xxxxxxxxxxxxxx: not a per-job limit");
    cJSON_Delete(r);
    assert_int_equal(fake.last_job, 0);
}

static void
test_exec_timeout(void **state)
{
    struct fx *f = *state;
    uint64_t t0 = uv_hrtime();
    uint64_t job = start_exec(
            f,
            "{\"id\":1,\"op\":\"exec\",\"code\":\"while 1: pass\",\"limits\":{\"timeout_ms\":50}}");
    send_frame(f->worker.fd, "{\"event\":\"output\",\"data\":\"started\\n\"}");
    cJSON *r = recv_frame(f, &f->client, 2000);
    assert_string_equal(cJSON_GetObjectItem(r, "event")->valuestring, "output");
    cJSON_Delete(r);
    r = expect_error(f, "1", "timeout");
    double waited = (double) (uv_hrtime() - t0) / 1e6;
    assert_true(waited >= 50 + JOB_DEADLINE_GRACE_MS - 5 && waited < 2000);
    assert_string_equal(error_message(r), "snippet exceeded the wall-clock limit of 50 ms");
    assert_string_equal(cJSON_GetObjectItem(r, "outcome")->valuestring, "timeout");
    assert_string_equal(cJSON_GetObjectItem(r, "logs")->valuestring, "started\n");
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "stats"), "run_ms"));
    cJSON_Delete(r);
    assert_int_equal(fake.kills[job], 1);
    /* A result that comes too late changes nothing. */
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    end_worker(f, job, 0, SIGKILL, true, 10);
    assert_null(recv_frame(f, &f->client, 50));
    assert_true(dlist_empty(&f->d.jobs));
    assert_int_equal(f->d.jobs_by_outcome[PF_E_TIMEOUT], 1);
}

static void
test_exec_logs_cut_on_utf8_boundary(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\",\"stream\":false,"
                                 "\"limits\":{\"timeout_ms\":1,\"max_log_chars\":100}}");
    /* 99 ASCII bytes, then a 2-byte character that would straddle the 100-byte cap. */
    char ev[256];
    int n = snprintf(ev, sizeof(ev), "{\"event\":\"output\",\"data\":\"");
    memset(ev + n, 'a', 99);
    snprintf(ev + n + 99, sizeof(ev) - (size_t) n - 99, "\xc3\xa9\"}");
    send_frame(f->worker.fd, ev);
    send_frame(f->worker.fd, "{\"event\":\"output\",\"data\":\"b\"}");
    cJSON *r = expect_error(f, "1", "timeout");
    const char *logs = cJSON_GetObjectItem(r, "logs")->valuestring;
    assert_int_equal(strlen(logs), 99);
    assert_true(msg_utf8_valid(logs, strlen(logs), NULL));
    cJSON_Delete(r);
    end_worker(f, job, 0, SIGKILL, true, 0);
}

static void
test_exec_output_limit(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"print('x' * 5000)\","
                                 "\"limits\":{\"max_output_bytes\":1024}}");
    char big[1500];
    memset(big, 'x', sizeof(big));
    int n = snprintf(big, sizeof(big), "{\"event\":\"output\",\"data\":\"");
    memset(big + n, 'x', 700);
    snprintf(big + n + 700, sizeof(big) - (size_t) n - 700, "\"}");
    send_frame(f->worker.fd, big);
    cJSON *r = recv_frame(f, &f->client, 2000); /* 700 bytes: under the limit, forwarded */
    assert_string_equal(cJSON_GetObjectItem(r, "event")->valuestring, "output");
    cJSON_Delete(r);
    send_frame(f->worker.fd, big);
    r = expect_error(f, "1", "output_limit");
    assert_non_null(strstr(error_message(r), "max_output_bytes (1024 bytes)"));
    cJSON_Delete(r);
    assert_int_equal(fake.kills[job], 1);
    end_worker(f, job, 0, SIGKILL, true, 1);
    assert_true(dlist_empty(&f->d.jobs));
}

static void
test_exec_worker_crash(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    /* The exit is reported before the channel's EOF is read: the daemon waits for both. */
    end_worker(f, job, 0, SIGSEGV, false, 3);
    cJSON *r = expect_error(f, "1", "worker_crashed");
    assert_string_equal(error_message(r),
                        "worker killed by signal SIGSEGV: a crash in C code, most often its C "
                        "stack overflowing on a value nested too deep (README, Limitations)");
    cJSON_Delete(r);

    job = start_exec(f, "{\"id\":2,\"op\":\"exec\",\"code\":\"x\"}");
    send_frame(f->worker.fd, "{\"event\":\"seccomp\",\"syscall\":\"socket\"}");
    pump(f, 5);
    end_worker(f, job, 0, SIGSYS, false, 3);
    r = expect_error(f, "2", "seccomp_violation");
    assert_non_null(strstr(error_message(r), "(socket)"));
    cJSON_Delete(r);

    job = start_exec(f, "{\"id\":3,\"op\":\"exec\",\"code\":\"x\",\"limits\":{\"cpu_ms\":1000}}");
    end_worker(f, job, 0, SIGKILL, false, 2000);
    r = expect_error(f, "3", "cpu_limit");
    assert_non_null(strstr(error_message(r), "CPU limit of 1000 ms"));
    cJSON_Delete(r);
    assert_true(dlist_empty(&f->d.jobs));
    assert_int_equal(f->d.jobs_running, 0);
}

static void
test_exec_worker_protocol_error(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    send_frame(f->worker.fd, "{\"event\":");
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}"); /* not read */
    cJSON *r = expect_error(f, "1", "internal");
    assert_string_equal(error_message(r), "the worker broke the channel protocol");
    cJSON_Delete(r);
    assert_int_equal(fake.kills[job], 1);
    assert_null(recv_frame(f, &f->client, 30));
    end_worker(f, job, 0, SIGKILL, true, 0);
    assert_true(dlist_empty(&f->d.jobs));
}

static void
test_exec_internal_result_waits_for_exit(void **state)
{
    struct fx *f = *state;
    static const char internal[] =
            "{\"event\":\"result\",\"outcome\":\"internal\",\"error\":{\"message\":"
            "\"hardening layer 'fds': the zygote died\"}}";
    /* The zygote died under a worker that was still hardening: worker_crashed. */
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    send_frame(f->worker.fd, internal);
    assert_null(recv_frame(f, &f->client, 30)); /* held */
    end_worker(f, job, 0, SIGKILL, false, 0);
    cJSON *r = expect_error(f, "1", "worker_crashed");
    assert_string_equal(error_message(r), "worker killed by signal SIGKILL before it finished "
                                          "(hardening layer 'fds': the zygote died)");
    cJSON_Delete(r);
    /* The worker failed by itself and exited: its own report stands. */
    job = start_exec(f, "{\"id\":2,\"op\":\"exec\",\"code\":\"x\"}");
    send_frame(f->worker.fd, internal);
    end_worker(f, job, 1, 0, false, 0);
    r = expect_error(f, "2", "internal");
    assert_string_equal(error_message(r), "hardening layer 'fds': the zygote died");
    cJSON_Delete(r);
    assert_true(dlist_empty(&f->d.jobs));
}

static void
test_exec_spawn_failures(void **state)
{
    struct fx *f = *state;
    fake.fail_spawn = true;
    send_frame(f->client.fd, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    cJSON *r = expect_error(f, "1", "internal");
    assert_non_null(strstr(error_message(r), "cannot start a worker: the zygote is restarting"));
    cJSON_Delete(r);
    fake.fail_spawn = false;
    /* Asynchronous failure: the zygote reports it later; no exit follows. */
    uint64_t job = start_exec(f, "{\"id\":2,\"op\":\"exec\",\"code\":\"x\"}");
    struct pf_error e = {.code = PF_E_WORKER_CRASHED, .msg = (char *) "fork: EAGAIN"};
    job_on_spawned(fake.ctx[job], 0, &e);
    r = expect_error(f, "2", "worker_crashed");
    assert_non_null(strstr(error_message(r), "fork: EAGAIN"));
    cJSON_Delete(r);
    pump(f, 5);
    assert_true(dlist_empty(&f->d.jobs));
    assert_int_equal(f->d.jobs_running, 0);
}

static void
tune_workers(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_MAX_WORKERS] = 1;
    l->v[POLICY_LIMIT_MAX_QUEUED] = 1;
}

/* The worker of the job that started after `before`, and its run frame. */
static uint64_t
take_started_job(struct fx *f, uint64_t before, cJSON **ret_run)
{
    for (int i = 0; i < 1000 && fake.last_job == before; i++)
        pump(f, 1);
    assert_true(fake.last_job > before);
    f->worker.fd = fake.worker_fd[fake.last_job];
    f->worker.len = 0;
    f->worker.eof = false;
    *ret_run = recv_frame(f, &f->worker, 2000);
    assert_non_null(*ret_run);
    return fake.last_job;
}

static void
test_queued_at_max_workers(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    /* max_workers reached: the next job waits for a worker... */
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"exec\",\"code\":\"y\"}");
    pump(f, 20);
    assert_int_equal(fake.last_job, job);
    /* ...and past max_queued, busy says when to come back. */
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"exec\",\"code\":\"z\"}");
    cJSON *r = expect_error(f, "3", "busy");
    assert_non_null(strstr(error_message(r), "max_queued"));
    cJSON *retry = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "retry_after_ms");
    assert_true(cJSON_IsNumber(retry) && retry->valuedouble >= 1);
    cJSON_Delete(r);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    cJSON_Delete(recv_frame(f, &f->client, 1000));
    /* A worker holds its slot until it is reaped. */
    pump(f, 20);
    assert_int_equal(fake.last_job, job);
    end_worker(f, job, 0, 0, false, 0);
    cJSON *run = NULL;
    job = take_started_job(f, job, &run);
    assert_string_equal(cJSON_GetObjectItem(run, "code")->valuestring, "y");
    cJSON_Delete(run);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    r = recv_frame(f, &f->client, 1000);
    assert_non_null(r);
    assert_int_equal(cJSON_GetObjectItem(r, "id")->valuedouble, 2);
    /* It waited for the first worker: 40 ms of pumping at least. */
    double queue_ms = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "stats"), "queue_ms")->valuedouble;
    assert_true(queue_ms >= 40);
    cJSON_Delete(r);
    end_worker(f, job, 0, 0, false, 0);
}

static void
test_close_drops_queued_job(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"exec\",\"code\":\"y\"}");
    pump(f, 10);
    close(f->client.fd);
    f->client.fd = -1;
    pump(f, 10);
    assert_int_equal(fake.kills[job], 1);
    /* The queued job is gone with its client: it never starts. */
    end_worker(f, job, 0, SIGKILL, true, 0);
    pump(f, 20);
    assert_int_equal(fake.last_job, job);
    assert_int_equal(f->d.sched.queued, 0);
}

static void
test_close_cancels_jobs(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    close(f->client.fd);
    f->client.fd = -1;
    pump(f, 20);
    assert_int_equal(fake.kills[job], 1);
    assert_int_equal(f->d.n_conns, 0);
    assert_false(dlist_empty(&f->d.jobs)); /* until the worker is reaped */
    send_frame(f->worker.fd, "{\"event\":\"output\",\"data\":\"late\"}");
    end_worker(f, job, 0, SIGKILL, true, 0);
    assert_true(dlist_empty(&f->d.jobs));
    assert_int_equal(f->d.jobs_by_outcome[PF_E_CANCELLED], 1);
}

/* ---- pure mapping ------------------------------------------------------------------------- */

static void
test_outcome_from_exit(void **state)
{
    (void) state;
    char msg[256];
    struct zygote_exit e = {.signal = SIGXCPU, .cpu_ms = 1000};
    assert_int_equal(job_outcome_from_exit(&e, 1000, "", msg, sizeof(msg)), PF_E_CPU_LIMIT);
    e = (struct zygote_exit){.signal = SIGKILL, .cpu_ms = 10};
    assert_int_equal(job_outcome_from_exit(&e, 1000, "", msg, sizeof(msg)), PF_E_WORKER_CRASHED);
    assert_string_equal(msg, "worker killed by signal SIGKILL");
    e.killed_by_request = true;
    assert_int_equal(job_outcome_from_exit(&e, 1000, "", msg, sizeof(msg)), PF_E_TIMEOUT);
    e = (struct zygote_exit){.signal = SIGSYS};
    assert_int_equal(job_outcome_from_exit(&e, 1000, "", msg, sizeof(msg)), PF_E_SECCOMP);
    assert_string_equal(msg, "the snippet made a forbidden system call (unknown)");
    /* The worker's SIGSYS handler exits with 128 + SIGSYS after its seccomp frame. */
    e = (struct zygote_exit){.exit_code = HARDEN_SECCOMP_EXIT_CODE};
    assert_int_equal(job_outcome_from_exit(&e, 1000, "", msg, sizeof(msg)), PF_E_SECCOMP);
    e = (struct zygote_exit){.exit_code = 3};
    assert_int_equal(job_outcome_from_exit(&e, 1000, "", msg, sizeof(msg)), PF_E_WORKER_CRASHED);
    assert_non_null(strstr(msg, "status 3"));
    e = (struct zygote_exit){.exit_code = 0};
    assert_int_equal(job_outcome_from_exit(&e, 1000, NULL, msg, sizeof(msg)), PF_E_WORKER_CRASHED);
    assert_string_equal(msg, "worker exited without sending a result");
    /* The cgroup's word: an OOM kill is memory_limit (even with CPU spent past the limit), a
     * refused fork in a worker that then died is pids_limit; seccomp still comes first. */
    e = (struct zygote_exit){.signal = SIGKILL,
                             .cpu_ms = 5000,
                             .have_cgroup = true,
                             .oom_killed = true,
                             .peak_memory_kb = 65 * 1024};
    assert_int_equal(job_outcome_from_exit(&e, 1000, "", msg, sizeof(msg)), PF_E_MEMORY_LIMIT);
    assert_non_null(strstr(msg, "OOM killer"));
    assert_non_null(strstr(msg, "peak 65 MiB"));
    e.have_cgroup = false; /* without a cgroup the flags mean nothing */
    assert_int_equal(job_outcome_from_exit(&e, 1000, "", msg, sizeof(msg)), PF_E_CPU_LIMIT);
    e = (struct zygote_exit){.exit_code = 1, .have_cgroup = true, .pids_limited = true};
    assert_int_equal(job_outcome_from_exit(&e, 1000, "", msg, sizeof(msg)), PF_E_PIDS_LIMIT);
    assert_non_null(strstr(msg, "process limit"));
    e.killed_by_request = true; /* a timeout kill says why it died */
    assert_int_equal(job_outcome_from_exit(&e, 1000, "", msg, sizeof(msg)), PF_E_TIMEOUT);
    e = (struct zygote_exit){.signal = SIGSYS, .have_cgroup = true, .oom_killed = true};
    assert_int_equal(job_outcome_from_exit(&e, 1000, "clone", msg, sizeof(msg)), PF_E_SECCOMP);
}

/* A hardening_unavailable reply names the profile (the worker cannot: a warm pool's worker
 * serves every profile with its hardening); no other reply is touched. */
static void
test_reply_names_the_profile(void **state)
{
    (void) state;
    cJSON *reply = msg_reply_error(NULL, PF_E_HARDENING_UNAVAILABLE,
                                   "hardening layer 'cgroup' is required and this host cannot "
                                   "give it: why");
    assert_non_null(reply);
    job_reply_name_profile(reply, PF_E_HARDENING_UNAVAILABLE, "agent");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(reply, "error");
    assert_string_equal(msg_get_string(error, "message", ""),
                        "profile 'agent': hardening layer 'cgroup' is required and this host "
                        "cannot give it: why");
    assert_string_equal(msg_get_string(error, "code", ""), "hardening_unavailable");
    cJSON_Delete(reply);

    reply = msg_reply_error(NULL, PF_E_HARDENING_UNAVAILABLE, "m");
    job_reply_name_profile(reply, PF_E_HARDENING_UNAVAILABLE, "");
    assert_string_equal(
            msg_get_string(cJSON_GetObjectItemCaseSensitive(reply, "error"), "message", ""),
            "pyfenced's levels without a policy: m");
    cJSON_Delete(reply);

    static const int others[] = {PF_E_INTERNAL, PF_E_ERROR, PF_E_WORKER_CRASHED, 0};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        reply = msg_reply_error(NULL, PF_E_INTERNAL, "m");
        job_reply_name_profile(reply, others[i], "agent");
        assert_string_equal(
                msg_get_string(cJSON_GetObjectItemCaseSensitive(reply, "error"), "message", ""),
                "m");
        cJSON_Delete(reply);
    }
    /* An ok reply has no error to name anything in. */
    reply = cJSON_CreateObject();
    job_reply_name_profile(reply, PF_E_HARDENING_UNAVAILABLE, "agent");
    assert_null(cJSON_GetObjectItemCaseSensitive(reply, "error"));
    cJSON_Delete(reply);
}

/* The zygote reports the worker's end with what its cgroup saw. */
static void
end_worker_cgroup(struct fx *f, uint64_t job, struct zygote_exit e)
{
    close(fake.worker_fd[job]);
    fake.worker_fd[job] = 0;
    e.job_id = job;
    e.pid = 100 + (pid_t) job;
    e.have_cgroup = true;
    job_on_exit(fake.ctx[job], &e);
    pump(f, 5);
}

static void
test_exec_cgroup_outcomes(void **state)
{
    struct fx *f = *state;
    /* ok: replied at once, before the exit (the worker's teardown stays off the request
     * path), so without the cgroup's numbers. */
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"1\"}");
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\",\"output\":1,"
                             "\"stats\":{\"ops\":1,\"cpu_ms\":3}}");
    cJSON *r = recv_frame(f, &f->client, 1000);
    assert_non_null(r);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON *st = cJSON_GetObjectItem(r, "stats");
    assert_null(cJSON_GetObjectItem(st, "peak_memory_kb"));
    assert_null(cJSON_GetObjectItem(st, "cgroup_cpu_ms"));
    assert_int_equal(cJSON_GetObjectItem(st, "ops")->valueint, 1);
    cJSON_Delete(r);
    end_worker_cgroup(
            f, job, (struct zygote_exit){.cpu_ms = 3, .peak_memory_kb = 2048, .cgroup_cpu_ms = 4});

    /* The snippet's error came from a refused fork: pids_limit, its own message kept. */
    job = start_exec(f, "{\"id\":2,\"op\":\"exec\",\"code\":\"x\"}");
    send_frame(f->worker.fd,
               "{\"event\":\"result\",\"outcome\":\"error\",\"error\":{\"type\":"
               "\"BlockingIOError\",\"message\":\"BlockingIOError: [Errno 11] Resource "
               "temporarily unavailable\"}}");
    end_worker_cgroup(f, job, (struct zygote_exit){.pids_limited = true});
    r = expect_error(f, "2", "pids_limit");
    assert_string_equal(cJSON_GetObjectItem(r, "outcome")->valuestring, "pids_limit");
    assert_non_null(strstr(error_message(r), "process limit of 16 (pids)"));
    assert_non_null(strstr(error_message(r), "Errno 11"));
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "type")->valuestring,
                        "BlockingIOError");
    cJSON_Delete(r);

    /* A child OOM-killed made the snippet fail: memory_limit. A snippet that succeeded stays ok
     * whatever its cgroup saw (it handled the refusal). */
    job = start_exec(f, "{\"id\":3,\"op\":\"exec\",\"code\":\"x\"}");
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"error\",\"error\":{"
                             "\"message\":\"RuntimeError: child died\"}}");
    end_worker_cgroup(f, job, (struct zygote_exit){.oom_killed = true, .pids_limited = true});
    r = expect_error(f, "3", "memory_limit");
    assert_non_null(strstr(error_message(r), "memory limit of 1024 MiB"));
    cJSON_Delete(r);
    job = start_exec(f, "{\"id\":4,\"op\":\"exec\",\"code\":\"x\"}");
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    end_worker_cgroup(f, job, (struct zygote_exit){.pids_limited = true});
    r = recv_frame(f, &f->client, 1000);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON_Delete(r);

    /* No result: the worker was OOM-killed. */
    job = start_exec(f, "{\"id\":5,\"op\":\"exec\",\"code\":\"x\"}");
    end_worker_cgroup(f, job,
                      (struct zygote_exit){.signal = SIGKILL,
                                           .oom_killed = true,
                                           .peak_memory_kb = 1024 * 1024,
                                           .cgroup_cpu_ms = 70});
    r = expect_error(f, "5", "memory_limit");
    st = cJSON_GetObjectItem(r, "stats");
    assert_int_equal(cJSON_GetObjectItem(st, "peak_memory_kb")->valueint, 1024 * 1024);
    assert_int_equal(cJSON_GetObjectItem(st, "cgroup_cpu_ms")->valueint, 70);
    cJSON_Delete(r);
    assert_int_equal(f->d.jobs_by_outcome[PF_E_MEMORY_LIMIT], 2);
    assert_int_equal(f->d.jobs_by_outcome[PF_E_PIDS_LIMIT], 1);
    assert_true(dlist_empty(&f->d.jobs));
}

/* ---- the policy ------------------------------------------------------------------------- */

static int
setup_policy(void **state)
{
    setup_with(state, NULL);
    struct fx *f = *state;
    struct pf_error *err = NULL;
    if (policy_load_builtin(&f->d.policy, &err) < 0)
        fail_msg("built-in policy: %s", err->msg);
    return 0;
}

static bool
json_array_has(const cJSON *array, const char *s)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, array) {
        if (cJSON_IsString(item) && strcmp(item->valuestring, s) == 0)
            return true;
    }
    return false;
}

static void
test_profile_sets_limits_levels_imports(void **state)
{
    struct fx *f = *state;
    send_frame(f->client.fd, "{\"id\":1,\"op\":\"hello\"}");
    cJSON *r = recv_frame(f, &f->client, 2000);
    assert_string_equal(cJSON_GetObjectItem(r, "profile")->valuestring, "default");
    cJSON_Delete(r);

    cJSON *run = NULL;
    uint64_t job = start_exec_run(
            f, "{\"id\":2,\"op\":\"exec\",\"code\":\"import json\",\"imports\":[\"json\"]}", &run);
    const cJSON *imports = cJSON_GetObjectItem(run, "imports");
    assert_true(json_array_has(imports, "math"));   /* the profile's own */
    assert_true(json_array_has(imports, "json"));   /* what the request adds */
    assert_false(json_array_has(imports, "numpy")); /* another profile's */
    cJSON_Delete(run);
    const struct harden_params *hp = &fake.last_params;
    assert_int_equal(hp->level[HARDEN_LAYER_SECCOMP], HARDEN_REQUIRED);
    assert_int_equal(hp->level[HARDEN_LAYER_IDENTITY], HARDEN_REQUIRED);
    assert_int_equal(hp->level[HARDEN_LAYER_CGROUP], HARDEN_BEST_EFFORT);
    assert_int_equal(hp->level[HARDEN_LAYER_NAMESPACES], HARDEN_BEST_EFFORT);
    assert_int_equal(hp->uid, 0); /* the zygote picks a uid of its range */
    assert_int_equal(hp->pids, 16);
    assert_int_equal(hp->file_size_mb, 16);
    assert_int_equal(hp->scratch_mb, 16);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    /* The cgroup layer is on: the result waits for the exit (test_exec_cgroup_outcomes). */
    end_worker(f, job, 0, 0, false, 0);
    cJSON_Delete(recv_frame(f, &f->client, 1000));

    /* A request that shrinks its scratch gets a worker whose /tmp is that size (a fresh one:
     * the pool's were hardened with the profile's), and RLIMIT_FSIZE stays the profile's. */
    job = start_exec_run(
            f, "{\"id\":6,\"op\":\"exec\",\"code\":\"1\",\"limits\":{\"scratch_mb\":2}}", &run);
    assert_int_equal(hp->scratch_mb, 2);
    assert_int_equal(hp->file_size_mb, 16);
    assert_int_equal(
            cJSON_GetObjectItem(cJSON_GetObjectItem(run, "limits"), "scratch_mb")->valuedouble, 2);
    cJSON_Delete(run);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    end_worker(f, job, 0, 0, false, 0);
    cJSON_Delete(recv_frame(f, &f->client, 1000));

    send_frame(f->client.fd,
               "{\"id\":3,\"op\":\"exec\",\"code\":\"1\",\"imports\":[\"json\",\"numpy\"]}");
    r = expect_error(f, "3", "bad_request");
    assert_string_equal(error_message(r),
                        "imports: 'numpy' is not allowed by profile 'default' (see its "
                        "extra_imports)");
    cJSON_Delete(r);
    char *frame =
            long_string_frame("{\"id\":5,\"op\":\"exec\",\"code\":\"1\",\"imports\":[\"", "\"]}");
    send_frame(f->client.fd, frame);
    free(frame);
    r = expect_error(f, "5", "bad_request");
    assert_string_equal(
            error_message(r),
            "imports: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' "
            "is not allowed by profile 'default' (see its extra_imports)");
    cJSON_Delete(r);

    /* Not root: the layers that need root are best-effort, the others stay required, and the
     * namespaces layer (the profile's best-effort) becomes required: without it the worker would
     * act as the daemon's uid on the host. */
    f->d.privileged = false;
    job = start_exec(f, "{\"id\":4,\"op\":\"exec\",\"code\":\"1\"}");
    assert_int_equal(hp->level[HARDEN_LAYER_IDENTITY], HARDEN_BEST_EFFORT);
    assert_int_equal(hp->level[HARDEN_LAYER_PRIVILEGES], HARDEN_BEST_EFFORT);
    assert_int_equal(hp->level[HARDEN_LAYER_SECCOMP], HARDEN_REQUIRED);
    assert_int_equal(hp->level[HARDEN_LAYER_NAMESPACES], HARDEN_REQUIRED);
    assert_int_equal(hp->level[HARDEN_LAYER_CGROUP], HARDEN_BEST_EFFORT);
    end_worker(f, job, 0, SIGKILL, false, 0);
    cJSON_Delete(expect_error(f, "4", "worker_crashed"));
}

static void
test_reload_keeps_old_policy_on_error(void **state)
{
    struct fx *f = *state;
    char dir[] = "/tmp/pf-policy-XXXXXX";
    assert_non_null(mkdtemp(dir));
    f->d.opts.policy_dir = dir;
    write_file(dir, "default.json",
               "{\"name\":\"default\",\"limits\":{\"timeout_ms\":1234},"
               "\"access\":{\"everyone\":true}}");
    struct pf_error *err = NULL;
    if (daemon_reload_policy(&f->d, &err) < 0)
        fail_msg("reload: %s", err->msg);
    const struct policy *good = f->d.policy;

    write_file(dir, "broken.json", "{\"name\":\"broken\",\"limits\":{\"memory_mb\":9000}}");
    assert_int_equal(daemon_reload_policy(&f->d, &err), -1);
    assert_non_null(strstr(err->msg, "limits.memory_mb: 9000 exceeds maximum 4096"));
    err = pf_error_free(err);
    assert_ptr_equal(f->d.policy, good);

    send_frame(f->client.fd, "{\"id\":1,\"op\":\"hello\"}");
    cJSON *r = recv_frame(f, &f->client, 2000);
    cJSON *jl = cJSON_GetObjectItem(r, "job_limits");
    assert_int_equal(cJSON_GetObjectItem(jl, "timeout_ms")->valueint, 1234);
    cJSON_Delete(r);
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"stats\"}");
    r = recv_frame(f, &f->client, 2000);
    cJSON *pol = cJSON_GetObjectItem(r, "policy");
    assert_string_equal(cJSON_GetObjectItem(pol, "source")->valuestring, dir);
    assert_non_null(strstr(cJSON_GetObjectItem(pol, "reload_error")->valuestring,
                           "limits.memory_mb: 9000 exceeds maximum 4096"));
    cJSON_Delete(r);
    /* Fixed: the next reload succeeds and the error is gone. */
    write_file(dir, "broken.json", "{\"name\":\"broken\"}");
    assert_int_equal(daemon_reload_policy(&f->d, &err), 0);
    assert_null(f->d.policy_error);
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

#define T(fn)        cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TW(fn, tune) cmocka_unit_test_setup_teardown(fn, setup_##tune, teardown)

static int
setup_workers(void **s)
{
    return setup_with(s, tune_workers);
}

int
main(void)
{
    pf_log_init(PF_LOG_CRIT, "test_conn_exec");
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
            T(test_exec_error_result),
            T(test_exec_loosened_limit_refused),
            T(test_exec_timeout),
            T(test_exec_output_limit),
            T(test_exec_logs_cut_on_utf8_boundary),
            T(test_exec_worker_crash),
            T(test_exec_internal_result_waits_for_exit),
            T(test_exec_worker_protocol_error),
            T(test_exec_spawn_failures),
            TW(test_queued_at_max_workers, workers),
            TW(test_close_drops_queued_job, workers),
            T(test_close_cancels_jobs),
            cmocka_unit_test(test_outcome_from_exit),
            cmocka_unit_test(test_reply_names_the_profile),
            cmocka_unit_test_setup_teardown(test_profile_sets_limits_levels_imports, setup_policy,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_reload_keeps_old_policy_on_error, setup_policy,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_exec_cgroup_outcomes, setup_policy, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
