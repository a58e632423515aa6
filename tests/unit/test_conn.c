/* pyfenced's connections and exec jobs on a real uv loop, the client and the worker played by
 * this test over socketpairs, the zygote by a fake below: frame errors, busy at max_inflight,
 * max_connections and max_workers, slow readers dropped at max_outbuf_bytes, the idle timeout,
 * exec results, output streaming and limits, deadlines, worker deaths, cancellation on close,
 * and the graceful stop. Every test ends with uv_loop_close() == 0. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

#include "conn.h"
#include "daemon.h"
#include "job.h"
#include "msg.h"
#include "pf_log.h"
#include "zygote.h"

/* ---- a fake zygote: spawn hands the test the worker's end of the channel ---------------- */

#define MAX_FAKE_JOBS 8

struct zygote {
    int worker_fd[MAX_FAKE_JOBS + 1]; /* by job id */
    void *ctx[MAX_FAKE_JOBS + 1];
    int kills[MAX_FAKE_JOBS + 1];
    uint64_t last_job;
    bool fail_spawn;
};

static struct zygote fake;

int
zygote_start(uv_loop_t *loop, const struct zygote_config *config, zygote_spawned_cb spawned_cb,
             zygote_exit_cb exit_cb, struct zygote **ret, struct pf_error **err)
{
    return pf_error_set(err, PF_E_INTERNAL, "not in this test");
}

int
zygote_spawn(struct zygote *z, uint64_t job_id, const struct harden_params *params, void *job_ctx,
             int *ret_channel_fd, struct pf_error **err)
{
    if (z->fail_spawn)
        return pf_error_set(err, PF_E_INTERNAL, "the zygote is restarting");
    assert_true(job_id >= 1 && job_id <= MAX_FAKE_JOBS);
    assert_int_equal(params->level[HARDEN_LAYER_RLIMITS], HARDEN_REQUIRED);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    z->worker_fd[job_id] = sv[1];
    z->ctx[job_id] = job_ctx;
    z->last_job = job_id;
    *ret_channel_fd = sv[0];
    return 0;
}

int
zygote_kill(struct zygote *z, uint64_t job_id)
{
    if (job_id <= MAX_FAKE_JOBS)
        z->kills[job_id]++;
    return 0;
}

pid_t
zygote_pid(const struct zygote *z)
{
    return 4242;
}

unsigned
zygote_restarts(const struct zygote *z)
{
    return 0;
}

const char *
zygote_python_version(const struct zygote *z)
{
    return "3.11.2";
}

struct zygote *
zygote_stop(struct zygote *z)
{
    return NULL;
}

/* ---- fixture ---------------------------------------------------------------------------- */

struct peer {
    int fd;
    bool eof;
    size_t len;
    char buf[256 * 1024];
};

struct fx {
    uv_loop_t loop;
    struct daemon d;
    struct peer client;
    struct peer worker; /* the current job's worker end */
};

static int
setup_with(void **state, void (*tune)(struct policy_limits *))
{
    memset(&fake, 0, sizeof(fake));
    struct fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    struct policy_limits limits;
    policy_limits_init_defaults(&limits);
    if (tune)
        tune(&limits);
    struct daemon_options opts = {.socket_mode = 0600, .log_level = PF_LOG_WARNING};
    daemon_init(&f->d, &f->loop, &opts, &limits);
    f->d.zygote = &fake;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct pf_error *err = NULL;
    assert_int_equal(conn_open_fd(&f->d, sv[0], NULL, &err), 0);
    f->client.fd = sv[1];
    f->worker.fd = -1;
    *state = f;
    return 0;
}

static int
setup(void **state)
{
    return setup_with(state, NULL);
}

static void
pump(struct fx *f, int ms)
{
    uint64_t end = uv_hrtime() + (uint64_t) ms * 1000000;
    do {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(500);
    } while (uv_hrtime() < end);
}

static int
teardown(void **state)
{
    struct fx *f = *state;
    if (f->client.fd >= 0)
        close(f->client.fd);
    for (int i = 0; i <= MAX_FAKE_JOBS; i++)
        if (fake.worker_fd[i] > 0)
            close(fake.worker_fd[i]);
    daemon_shutdown(&f->d);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_true(dlist_empty(&f->d.conns));
    assert_true(dlist_empty(&f->d.jobs));
    assert_int_equal(f->d.jobs_running, 0);
    daemon_finish(&f->d);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    free(f);
    return 0;
}

static void
send_raw(int fd, const void *data, size_t len)
{
    assert_int_equal(write(fd, data, len), (ssize_t) len);
}

static void
send_frame(int fd, const char *json)
{
    uint32_t n = (uint32_t) strlen(json);
    uint8_t h[4] = {(uint8_t) (n >> 24), (uint8_t) (n >> 16), (uint8_t) (n >> 8), (uint8_t) n};
    send_raw(fd, h, 4);
    send_raw(fd, json, n);
}

/* The next frame from peer as JSON, running the loop meanwhile; NULL on EOF or timeout. */
static cJSON *
recv_frame(struct fx *f, struct peer *p, int timeout_ms)
{
    uint64_t end = uv_hrtime() + (uint64_t) timeout_ms * 1000000;
    for (;;) {
        if (p->len >= 4) {
            uint32_t n = (uint32_t) ((uint8_t) p->buf[0] << 24 | (uint8_t) p->buf[1] << 16 |
                                     (uint8_t) p->buf[2] << 8 | (uint8_t) p->buf[3]);
            assert_true(n < sizeof(p->buf) - 4);
            if (p->len >= 4 + n) {
                cJSON *obj = cJSON_ParseWithLength(p->buf + 4, n);
                assert_non_null(obj);
                memmove(p->buf, p->buf + 4 + n, p->len - 4 - n);
                p->len -= 4 + n;
                return obj;
            }
        }
        if (p->eof || uv_hrtime() > end)
            return NULL;
        uv_run(&f->loop, UV_RUN_NOWAIT);
        struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
        if (poll(&pfd, 1, 1) == 1) {
            ssize_t r = read(p->fd, p->buf + p->len, sizeof(p->buf) - p->len);
            if (r <= 0)
                p->eof = true;
            else
                p->len += (size_t) r;
        }
    }
}

/* Expects the peer's next frame to be a failure reply with this id text and code. */
static cJSON *
expect_error(struct fx *f, const char *id_json, const char *code)
{
    cJSON *r = recv_frame(f, &f->client, 3000);
    if (!r)
        fail_msg("no reply (expected %s)", code);
    char *id = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "id"));
    assert_string_equal(id, id_json);
    free(id);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(r, "ok")));
    cJSON *e = cJSON_GetObjectItem(r, "error");
    assert_string_equal(cJSON_GetObjectItem(e, "code")->valuestring, code);
    return r;
}

static void
expect_eof(struct fx *f, struct peer *p)
{
    cJSON *r = recv_frame(f, p, 3000);
    if (r) {
        char *s = cJSON_PrintUnformatted(r);
        fail_msg("expected EOF, got %s", s);
    }
    assert_true(p->eof);
}

static const char *
error_message(const cJSON *reply)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "error"), "message")->valuestring;
}

/* Sends an exec and takes the worker's end of its channel; checks the `run` frame. */
static uint64_t
start_exec(struct fx *f, const char *request)
{
    uint64_t before = fake.last_job;
    send_frame(f->client.fd, request);
    for (int i = 0; i < 1000 && fake.last_job == before; i++)
        pump(f, 1);
    assert_true(fake.last_job > before);
    uint64_t job = fake.last_job;
    f->worker.fd = fake.worker_fd[job];
    f->worker.len = 0;
    f->worker.eof = false;
    cJSON *run = recv_frame(f, &f->worker, 2000);
    assert_non_null(run);
    assert_string_equal(cJSON_GetObjectItem(run, "op")->valuestring, "run");
    assert_true(cJSON_IsString(cJSON_GetObjectItem(run, "code")));
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(run, "imports")));
    assert_true(
            cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "limits"), "timeout_ms")));
    cJSON_Delete(run);
    return job;
}

/* The worker goes away: its end closes and the zygote reports how. */
static void
end_worker(struct fx *f, uint64_t job, int exit_code, int sig, bool killed, uint64_t cpu_ms)
{
    close(fake.worker_fd[job]);
    fake.worker_fd[job] = 0;
    struct zygote_exit e = {.job_id = job,
                            .pid = 100 + (pid_t) job,
                            .exit_code = exit_code,
                            .signal = sig,
                            .killed_by_request = killed,
                            .cpu_ms = cpu_ms};
    job_on_exit(fake.ctx[job], &e);
    pump(f, 5);
}

/* ---- requests answered at once ---------------------------------------------------------- */

static void
test_ping_hello_stats(void **state)
{
    struct fx *f = *state;
    send_frame(f->client.fd, "{\"id\":1,\"op\":\"ping\"}");
    send_frame(f->client.fd, "{\"id\":\"h\",\"op\":\"hello\",\"client\":\"test\"}");
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"stats\"}");
    cJSON *r = recv_frame(f, &f->client, 2000);
    assert_non_null(r);
    assert_int_equal(cJSON_GetObjectItem(r, "id")->valueint, 1);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON_Delete(r);

    r = recv_frame(f, &f->client, 2000);
    assert_string_equal(cJSON_GetObjectItem(r, "id")->valuestring, "h");
    assert_string_equal(cJSON_GetObjectItem(r, "server")->valuestring, "pyfenced");
    assert_string_equal(cJSON_GetObjectItem(r, "python")->valuestring, "3.11.2");
    assert_int_equal(cJSON_GetObjectItem(r, "protocol")->valueint, MSG_PROTOCOL_VERSION);
    cJSON *jl = cJSON_GetObjectItem(r, "job_limits");
    assert_int_equal(cJSON_GetObjectItem(jl, "timeout_ms")->valuedouble, 30000);
    assert_null(cJSON_GetObjectItem(jl, "max_inflight")); /* daemon-wide: in "limits" */
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "limits"), "max_inflight"));
    cJSON_Delete(r);

    r = recv_frame(f, &f->client, 2000);
    assert_int_equal(cJSON_GetObjectItem(r, "connections")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "zygote"), "pid")->valueint, 4242);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "jobs"), "running")->valueint, 0);
    cJSON_Delete(r);
}

static void
test_bad_json_keeps_connection(void **state)
{
    struct fx *f = *state;
    send_frame(f->client.fd, "{\"id\":1,");
    cJSON_Delete(expect_error(f, "null", "bad_frame"));
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"ping\",\"id\":3}");
    cJSON_Delete(expect_error(f, "null", "bad_frame"));
    send_frame(f->client.fd, "{\"id\":4,\"op\":\"ping\",\"extra\":1}");
    cJSON_Delete(expect_error(f, "4", "bad_request"));
    send_frame(f->client.fd, "{\"id\":5,\"op\":\"session.open\"}");
    cJSON_Delete(expect_error(f, "5", "unknown_op"));
    send_frame(f->client.fd, "{\"id\":6,\"op\":\"ping\"}");
    cJSON *r = recv_frame(f, &f->client, 2000);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON_Delete(r);
}

static void
test_zero_length_closes(void **state)
{
    struct fx *f = *state;
    send_raw(f->client.fd, "\0\0\0\0", 4);
    cJSON_Delete(expect_error(f, "null", "bad_frame"));
    expect_eof(f, &f->client);
}

static void
test_oversized_frame_closes(void **state)
{
    struct fx *f = *state;
    send_raw(f->client.fd, "\x7f\xff\xff\xff{}", 6);
    cJSON *r = expect_error(f, "null", "too_large");
    assert_non_null(strstr(error_message(r), "8388608"));
    cJSON_Delete(r);
    expect_eof(f, &f->client);
    assert_int_equal(f->d.n_conns, 0);
}

/* ---- per-connection limits -------------------------------------------------------------- */

static void
tune_inflight(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_MAX_INFLIGHT] = 1;
}

static void
test_busy_at_max_inflight(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":\"a\",\"op\":\"exec\",\"code\":\"print(1)\"}");
    send_frame(f->client.fd, "{\"id\":\"b\",\"op\":\"exec\",\"code\":\"2\"}");
    cJSON *r = expect_error(f, "\"b\"", "busy");
    assert_non_null(strstr(error_message(r), "max_inflight"));
    cJSON_Delete(r);
    /* Requests answered at once are limited too while one is in flight. */
    send_frame(f->client.fd, "{\"id\":\"c\",\"op\":\"ping\"}");
    cJSON_Delete(expect_error(f, "\"c\"", "busy"));

    send_frame(f->worker.fd, "{\"event\":\"output\",\"data\":\"1\\n\"}");
    r = recv_frame(f, &f->client, 2000);
    assert_string_equal(cJSON_GetObjectItem(r, "id")->valuestring, "a");
    assert_string_equal(cJSON_GetObjectItem(r, "event")->valuestring, "output");
    assert_string_equal(cJSON_GetObjectItem(r, "data")->valuestring, "1\n");
    cJSON_Delete(r);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\",\"output\":null,"
                             "\"output_repr\":null,\"logs\":\"1\\n\",\"is_final_answer\":false,"
                             "\"stats\":{\"ops\":3,\"run_ms\":0.1,\"cpu_ms\":1,"
                             "\"max_rss_kb\":9000}}");
    r = recv_frame(f, &f->client, 2000);
    assert_string_equal(cJSON_GetObjectItem(r, "id")->valuestring, "a");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    assert_string_equal(cJSON_GetObjectItem(r, "outcome")->valuestring, "ok");
    assert_string_equal(cJSON_GetObjectItem(r, "logs")->valuestring, "1\n");
    cJSON *stats = cJSON_GetObjectItem(r, "stats");
    assert_int_equal(cJSON_GetObjectItem(stats, "ops")->valueint, 3);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(stats, "queue_ms")));
    assert_null(cJSON_GetObjectItem(r, "error"));
    cJSON_Delete(r);

    /* The reply freed the slot even though the worker has not exited yet. */
    send_frame(f->client.fd, "{\"id\":\"d\",\"op\":\"ping\"}");
    r = recv_frame(f, &f->client, 2000);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON_Delete(r);
    assert_false(dlist_empty(&f->d.jobs));
    end_worker(f, job, 0, 0, false, 1);
    assert_true(dlist_empty(&f->d.jobs));
    assert_int_equal(f->d.jobs_by_outcome[0], 1);
    assert_int_equal(fake.kills[job], 0);
}

static void
tune_connections(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_MAX_CONNECTIONS] = 1;
}

static void
test_busy_at_max_connections(void **state)
{
    struct fx *f = *state;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct pf_error *err = NULL;
    assert_int_equal(conn_open_fd(&f->d, sv[0], NULL, &err), 0);
    struct peer *second = calloc(1, sizeof(*second));
    second->fd = sv[1];
    cJSON *r = recv_frame(f, second, 2000);
    assert_non_null(r);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "id")));
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "code")->valuestring,
                        "busy");
    assert_non_null(strstr(error_message(r), "max_connections"));
    cJSON_Delete(r);
    expect_eof(f, second);
    close(second->fd);
    free(second);
    assert_int_equal(f->d.n_conns, 1);
    /* The first connection is still served. */
    send_frame(f->client.fd, "{\"id\":1,\"op\":\"ping\"}");
    r = recv_frame(f, &f->client, 2000);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON_Delete(r);
}

static void
tune_outbuf(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_MAX_OUTBUF_BYTES] = 64 * 1024;
}

static void
test_slow_reader_disconnected(void **state)
{
    struct fx *f = *state;
    int small = 4096;
    setsockopt(f->client.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    fcntl(f->client.fd, F_SETFL, O_NONBLOCK);
    /* hello replies are large (all limits): few requests fill the daemon's queue. */
    static const char payload[] = "{\"id\":1,\"op\":\"hello\"}";
    char frame[4 + sizeof(payload) - 1];
    frame[0] = frame[1] = frame[2] = 0;
    frame[3] = (char) (sizeof(payload) - 1);
    memcpy(frame + 4, payload, sizeof(payload) - 1);
    bool dropped = false;
    for (int i = 0; i < 20000 && !dropped; i++) {
        ssize_t w = write(f->client.fd, frame, sizeof(frame));
        if (w < 0 && errno == EAGAIN) {
            uv_run(&f->loop, UV_RUN_NOWAIT);
            i--;
            continue;
        }
        if (w < 0) {
            dropped = true; /* EPIPE/ECONNRESET: the daemon hung up */
            break;
        }
        assert_int_equal(w, (ssize_t) sizeof(frame)); /* small writes are atomic */
        uv_run(&f->loop, UV_RUN_NOWAIT);
        dropped = f->d.n_conns == 0;
    }
    assert_true(dropped);
    pump(f, 20);
    assert_int_equal(f->d.n_conns, 0);
    assert_true(dlist_empty(&f->d.conns));
}

static void
tune_idle(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_CONN_IDLE_TIMEOUT_MS] = 1000;
}

static void
test_idle_timeout(void **state)
{
    struct fx *f = *state;
    pump(f, 600);
    /* Traffic restarts the clock. */
    send_frame(f->client.fd, "{\"id\":1,\"op\":\"ping\"}");
    cJSON *r = recv_frame(f, &f->client, 1000);
    assert_non_null(r);
    cJSON_Delete(r);
    pump(f, 600);
    assert_int_equal(f->d.n_conns, 1);
    /* A request in flight keeps an otherwise quiet connection open. */
    uint64_t job = start_exec(f, "{\"id\":2,\"op\":\"exec\",\"code\":\"1\"}");
    pump(f, 1300);
    assert_int_equal(f->d.n_conns, 1);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    r = recv_frame(f, &f->client, 1000);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON_Delete(r);
    end_worker(f, job, 0, 0, false, 0);
    uint64_t t0 = uv_hrtime();
    expect_eof(f, &f->client);
    double waited = (double) (uv_hrtime() - t0) / 1e6;
    assert_true(waited > 800 && waited < 1500);
    assert_int_equal(f->d.n_conns, 0);
}

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
    assert_string_equal(error_message(r), "worker killed by signal SIGSEGV");
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
}

static void
test_busy_at_max_workers(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"exec\",\"code\":\"y\"}");
    cJSON *r = expect_error(f, "2", "busy");
    assert_non_null(strstr(error_message(r), "max_workers"));
    cJSON_Delete(r);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    cJSON_Delete(recv_frame(f, &f->client, 1000));
    /* Still busy until the worker is reaped: max_workers counts processes. */
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"exec\",\"code\":\"y\"}");
    cJSON_Delete(expect_error(f, "3", "busy"));
    end_worker(f, job, 0, 0, false, 0);
    job = start_exec(f, "{\"id\":4,\"op\":\"exec\",\"code\":\"z\"}");
    assert_int_equal(job, 2);
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

static void
test_shutdown_fails_inflight(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    daemon_shutdown(&f->d);
    cJSON *r = expect_error(f, "1", "shutting_down");
    assert_string_equal(error_message(r), "pyfenced is shutting down");
    cJSON_Delete(r);
    expect_eof(f, &f->client);
    assert_int_equal(fake.kills[job], 1);
    /* The loop ends by itself: every handle is closed (checked in teardown). */
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
    e = (struct zygote_exit){.exit_code = 3};
    assert_int_equal(job_outcome_from_exit(&e, 1000, "", msg, sizeof(msg)), PF_E_WORKER_CRASHED);
    assert_non_null(strstr(msg, "status 3"));
    e = (struct zygote_exit){.exit_code = 0};
    assert_int_equal(job_outcome_from_exit(&e, 1000, NULL, msg, sizeof(msg)), PF_E_WORKER_CRASHED);
    assert_string_equal(msg, "worker exited without sending a result");
}

#define T(fn)        cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TW(fn, tune) cmocka_unit_test_setup_teardown(fn, setup_##tune, teardown)

static int
setup_inflight(void **s)
{
    return setup_with(s, tune_inflight);
}
static int
setup_connections(void **s)
{
    return setup_with(s, tune_connections);
}
static int
setup_outbuf(void **s)
{
    return setup_with(s, tune_outbuf);
}
static int
setup_idle(void **s)
{
    return setup_with(s, tune_idle);
}
static int
setup_workers(void **s)
{
    return setup_with(s, tune_workers);
}

int
main(void)
{
    pf_log_init(PF_LOG_CRIT, "test_conn");
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
            T(test_ping_hello_stats),
            T(test_bad_json_keeps_connection),
            T(test_zero_length_closes),
            T(test_oversized_frame_closes),
            TW(test_busy_at_max_inflight, inflight),
            TW(test_busy_at_max_connections, connections),
            TW(test_slow_reader_disconnected, outbuf),
            TW(test_idle_timeout, idle),
            T(test_exec_error_result),
            T(test_exec_loosened_limit_refused),
            T(test_exec_timeout),
            T(test_exec_output_limit),
            T(test_exec_worker_crash),
            T(test_exec_spawn_failures),
            TW(test_busy_at_max_workers, workers),
            T(test_close_cancels_jobs),
            T(test_shutdown_fails_inflight),
            cmocka_unit_test(test_outcome_from_exit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
