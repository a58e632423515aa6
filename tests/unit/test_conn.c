/* pyfenced's connections on a real uv loop, the client played by this test over a socketpair
 * (conn_fixture.c): requests answered at once, frame errors (bad JSON kept, zero or oversized
 * length closed), busy at max_inflight and max_connections, slow readers dropped at
 * max_outbuf_bytes, the idle timeout and the graceful stop. Every test ends with
 * uv_loop_close() == 0. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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
#include "job.h"
#include "msg.h"
#include "pf_log.h"

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

/* A connection keeps the supplementary groups its peer had when it connected (a profile's
 * access.groups matches them): groups changed afterwards do not count. */
static void
test_peer_groups_read_at_accept(void **state)
{
    struct fx *f = *state;
    gid_t saved[64];
    int n_saved = getgroups(64, saved);
    assert_true(n_saved >= 0);
    const gid_t probe[] = {7, 8, 9};
    if (setgroups(3, probe) < 0)
        skip(); /* needs CAP_SETGID */
    int sv[2];
    int r = socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
    assert_int_equal(setgroups((size_t) n_saved, saved), 0);
    assert_int_equal(r, 0);
    struct conn *c = NULL;
    struct pf_error *err = NULL;
    assert_int_equal(conn_open_fd(&f->d, sv[0], &c, &err), 0);
    struct policy_peer peer = conn_peer(c);
    assert_int_equal(peer.uid, getuid());
    assert_int_equal(peer.gid, getgid());
    assert_int_equal(peer.n_groups, 3);
    assert_memory_equal(peer.groups, probe, sizeof(probe));
    close(sv[1]);
    pump(f, 20);
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
    send_frame(f->client.fd, "{\"id\":5,\"op\":\"launch\"}");
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
    /* Refused as accepted, its fd already given back: libuv accepts a whole backlog in one
     * pass, and refusals holding fds until a later callback ran the daemon out of them. */
    errno = 0;
    assert_int_equal(fcntl(sv[0], F_GETFD), -1);
    assert_int_equal(errno, EBADF);
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

int
main(void)
{
    pf_log_init(PF_LOG_CRIT, "test_conn");
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
            T(test_ping_hello_stats),
            T(test_peer_groups_read_at_accept),
            T(test_bad_json_keeps_connection),
            T(test_zero_length_closes),
            T(test_oversized_frame_closes),
            TW(test_busy_at_max_inflight, inflight),
            TW(test_busy_at_max_connections, connections),
            TW(test_slow_reader_disconnected, outbuf),
            TW(test_idle_timeout, idle),
            T(test_shutdown_fails_inflight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
