/* libpyfence against a scripted server thread: request shapes, id matching, events, and every
 * way a server can misbehave (unexpected id, duplicate keys, bad length, id-less refusal, close
 * mid-frame). Only the public pyfence.h API is used. */
#include <cjson/cJSON.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "pyfence.h"

#define MAX_STEPS 256

/* One scripted answer per request: a printf format for the reply bytes' JSON, where every %1$llu
 * is the request's id; or raw bytes sent as they are; after delay_ms; then optionally close. */
struct step {
    const char *json; /* frame payload format, may contain "%1$llu" */
    const char *raw;  /* or: raw bytes (raw_len of them) */
    size_t raw_len;
    int delay_ms;
    int close_after;
    int early; /* sent as soon as the client connects, before its request is read (so its
                * json has the id written in, not %1$llu) */
};

struct fake {
    char dir[64];
    char path[96];
    int listen_fd;
    pthread_t thread;
    int joined;
    struct step steps[MAX_STEPS];
    size_t n_steps;
    char *requests[MAX_STEPS]; /* the request payloads received, for the test to check */
};

static int
read_exact(int fd, void *buf, size_t len)
{
    size_t have = 0;
    while (have < len) {
        ssize_t n = read(fd, (char *) buf + have, len - have);
        if (n <= 0)
            return -1;
        have += (size_t) n;
    }
    return 0;
}

static void
send_frame(int fd, const char *payload, size_t len)
{
    uint8_t hdr[4] = {(uint8_t) (len >> 24), (uint8_t) (len >> 16), (uint8_t) (len >> 8),
                      (uint8_t) len};
    /* One writev: a client never sees half a frame it would wait for the rest of. */
    struct iovec iov[2] = {{hdr, 4}, {(void *) payload, len}};
    if (writev(fd, iov, 2) != (ssize_t) (4 + len))
        fprintf(stderr, "fake server: short write\n");
}

/* Sends step s's answer to request id. */
static void
answer(int fd, const struct step *s, unsigned long long id)
{
    if (s->raw) {
        if (write(fd, s->raw, s->raw_len) != (ssize_t) s->raw_len)
            fprintf(stderr, "fake server: short write\n");
    } else if (s->json) {
        char *buf = NULL;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        int n = asprintf(&buf, s->json, id);
#pragma GCC diagnostic pop
        assert_true(n > 0);
        send_frame(fd, buf, (size_t) n);
        free(buf);
    }
}

static void *
serve(void *userdata)
{
    struct fake *f = userdata;
    int fd = accept(f->listen_fd, NULL, NULL);
    for (size_t i = 0; fd >= 0 && i < f->n_steps; i++) {
        const struct step *s = &f->steps[i];
        if (s->early)
            answer(fd, s, 0);
        uint8_t hdr[4];
        if (read_exact(fd, hdr, 4) < 0)
            break;
        size_t len = (size_t) hdr[0] << 24 | (size_t) hdr[1] << 16 | (size_t) hdr[2] << 8 | hdr[3];
        char *req = calloc(1, len + 1);
        if (!req || read_exact(fd, req, len) < 0) {
            free(req);
            break;
        }
        f->requests[i] = req;
        cJSON *obj = cJSON_Parse(req);
        unsigned long long id = (unsigned long long) cJSON_GetNumberValue(
                cJSON_GetObjectItemCaseSensitive(obj, "id"));
        cJSON_Delete(obj);
        if (s->delay_ms)
            usleep((useconds_t) s->delay_ms * 1000);
        if (!s->early)
            answer(fd, s, id);
        if (s->close_after)
            break;
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

static struct fake *
fake_start(const struct step *steps, size_t n)
{
    struct fake *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    snprintf(f->dir, sizeof(f->dir), "/tmp/pf-unit-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/s.sock", f->dir);
    memcpy(f->steps, steps, n * sizeof(*steps));
    f->n_steps = n;
    f->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", f->path);
    assert_int_equal(bind(f->listen_fd, (struct sockaddr *) &addr, sizeof(addr)), 0);
    assert_int_equal(listen(f->listen_fd, 4), 0);
    assert_int_equal(pthread_create(&f->thread, NULL, serve, f), 0);
    return f;
}

/* Waits for the server thread to finish its script (after which f->requests is complete). */
static void
fake_join(struct fake *f)
{
    if (!f->joined)
        pthread_join(f->thread, NULL);
    f->joined = 1;
}

static void
fake_stop(struct fake *f)
{
    fake_join(f);
    close(f->listen_fd);
    unlink(f->path);
    rmdir(f->dir);
    for (size_t i = 0; i < MAX_STEPS; i++)
        free(f->requests[i]);
    free(f);
}

static struct pyfence_conn *
connect_to(struct fake *f)
{
    struct pyfence_conn *conn = NULL;
    struct pyfence_error err = {0};
    assert_int_equal(pyfence_connect(f->path, &conn, &err), 0);
    return conn;
}

#define EXEC_OK                                                                    \
    "{\"id\": %1$llu, \"ok\": true, \"outcome\": \"ok\", \"output\": 42, "         \
    "\"output_repr\": \"42\", \"logs\": \"a\\nb\\n\", \"is_final_answer\": true, " \
    "\"stats\": {\"ops\": 7, \"run_ms\": 1.5, \"queue_ms\": 0.25, \"cpu_ms\": 3, " \
    "\"max_rss_kb\": 999}}"

struct captured {
    char buf[256];
};

static void
capture(void *userdata, const char *data, size_t len)
{
    struct captured *c = userdata;
    size_t have = strlen(c->buf);
    if (len < sizeof(c->buf) - have)
        memcpy(c->buf + have, data, len);
}

/* Frames as one buffer, for scripts that answer several requests at once. */
static size_t
build_frames(char *buf, const char *const *parts, size_t n)
{
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(parts[i]);
        buf[off++] = (char) (len >> 24);
        buf[off++] = (char) (len >> 16);
        buf[off++] = (char) (len >> 8);
        buf[off++] = (char) len;
        memcpy(buf + off, parts[i], len);
        off += len;
    }
    return off;
}

static void
test_exec_request_and_result(void **state)
{
    /* One request, several frames in answer: output events (and an unknown event, which
     * is ignored) then the reply. */
    char frames[2048];
    const char *parts[] = {
            "{\"id\": 1, \"event\": \"output\", \"data\": \"a\\n\"}",
            "{\"id\": 1, \"event\": \"tool_call\", \"name\": \"x\"}",
            "{\"id\": 1, \"event\": \"output\", \"data\": \"b\\n\"}",
            "{\"id\": 1, \"ok\": true, \"outcome\": \"ok\", \"output\": {\"$type\": \"tuple\", "
            "\"items\": [1]}, \"output_repr\": \"(1,)\", \"logs\": \"a\\nb\\n\", "
            "\"is_final_answer\": true, \"stats\": {\"ops\": 7, \"run_ms\": 1.5, \"queue_ms\": "
            "0.25, \"cpu_ms\": 3, \"max_rss_kb\": 999}}",
    };
    size_t off = build_frames(frames, parts, 4);
    const struct step s[] = {{.raw = frames, .raw_len = off}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);

    struct pyfence_result res;
    struct pyfence_error err = {0};
    struct captured out = {{0}};
    pyfence_result_init(&res);
    assert_int_equal(pyfence_exec(conn, "print(1)", NULL, capture, &out, &res, &err), 0);
    assert_string_equal(out.buf, "a\nb\n");
    assert_true(res.ok);
    assert_int_equal(res.outcome_code, PYFENCE_OK);
    assert_string_equal(res.outcome, "ok");
    assert_string_equal(res.output_json, "{\"$type\":\"tuple\",\"items\":[1]}");
    assert_string_equal(res.output_repr, "(1,)");
    assert_string_equal(res.logs, "a\nb\n");
    assert_true(res.is_final_answer);
    assert_int_equal(res.stats.ops, 7);
    assert_int_equal(res.stats.max_rss_kb, 999);
    assert_true(res.stats.queue_ms == 0.25 && res.stats.run_ms == 1.5);
    assert_null(res.error.message);
    assert_non_null(strstr(res.reply_json, "\"is_final_answer\":true"));
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_stop(f);
}

static void
test_pipelined_reverse(void **state)
{
    /* Requests 1 and 2 are answered together, 2 first, with 1's output event between. */
    const char *parts[] = {
            "{\"id\": 2, \"event\": \"output\", \"data\": \"two\"}",
            "{\"id\": 1, \"event\": \"output\", \"data\": \"one\"}",
            "{\"id\": 2, \"ok\": true, \"outcome\": \"ok\", \"output_repr\": \"2\"}",
            "{\"id\": 1, \"ok\": true, \"outcome\": \"ok\", \"output_repr\": \"1\"}",
    };
    char frames[1024];
    const struct step s[] = {{.json = NULL},
                             {.raw = frames, .raw_len = build_frames(frames, parts, 4)}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    uint64_t id1, id2;
    assert_int_equal(pyfence_submit(conn, "one", NULL, &id1, &err), 0);
    assert_int_equal(pyfence_submit(conn, "two", NULL, &id2, &err), 0);
    assert_true(id1 == 1 && id2 == 2);
    struct pyfence_result res;
    struct captured out1 = {{0}}, out2 = {{0}};
    pyfence_result_init(&res);
    assert_int_equal(pyfence_wait(conn, id1, capture, &out1, &res, &err), 0);
    assert_string_equal(res.output_repr, "1");
    assert_string_equal(out1.buf, "one");
    assert_int_equal(pyfence_wait(conn, id2, capture, &out2, &res, &err), 0);
    assert_string_equal(res.output_repr, "2");
    assert_string_equal(out2.buf, "two"); /* kept for id 2 while id 1 was waited for */
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_stop(f);
}

/* Many large requests sent before any reply is read, each answered with a large reply: the server
 * blocks writing and stops reading, so a client that only sent would block too. libpyfence takes
 * replies in while it sends. */
static void
test_pipelining_does_not_deadlock(void **state)
{
    enum { N = 200, LOGS = 60000 };
    /* A template for the fake server: %1$llu becomes each request's id. */
    static const char head[] = "{\"id\": %1$llu, \"ok\": true, \"outcome\": \"ok\", \"logs\": \"";
    size_t n = sizeof(head) - 1;
    char *json = malloc(n + LOGS + 3);
    assert_non_null(json);
    memcpy(json, head, n);
    memset(json + n, 'x', LOGS);
    strcpy(json + n + LOGS, "\"}");
    struct step *steps = calloc(N, sizeof(*steps));
    assert_non_null(steps);
    for (size_t i = 0; i < N; i++)
        steps[i].json = json;
    struct fake *f = fake_start(steps, N);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    uint64_t ids[N];
    char *code = malloc(LOGS + 1); /* big requests too, so that sending blocks */
    assert_non_null(code);
    memset(code, '#', LOGS);
    code[LOGS] = '\0';
    for (size_t i = 0; i < N; i++)
        assert_int_equal(pyfence_submit(conn, code, NULL, &ids[i], &err), 0);
    free(code);
    struct pyfence_result res;
    pyfence_result_init(&res);
    for (size_t i = N; i-- > 0;) {
        assert_int_equal(pyfence_wait(conn, ids[i], NULL, NULL, &res, &err), 0);
        assert_int_equal(strlen(res.logs), LOGS);
    }
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_stop(f);
    free(steps);
    free(json);
}

static void
test_request_shape(void **state)
{
    const struct step s[] = {{.json = EXEC_OK}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    const char *imports[] = {"json"};
    struct pyfence_exec_options opts;
    pyfence_exec_options_init(&opts);
    opts.imports = imports;
    opts.n_imports = 1;
    opts.timeout_ms = 250;
    opts.limits_json = "{\"max_ops\": 5, \"timeout_ms\": 9}";
    opts.variables_json = "{\"x\": 1}";
    opts.stream = false;
    struct pyfence_result res;
    struct pyfence_error err = {0};
    pyfence_result_init(&res);
    assert_int_equal(pyfence_exec(conn, "1", &opts, NULL, NULL, &res, &err), 0);
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_join(f);
    /* timeout_ms overrides the one in limits_json; the rest passes through. */
    cJSON *req = cJSON_Parse(f->requests[0]);
    assert_non_null(req);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(req, "op")), "exec");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(req, "code")), "1");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(req, "stream")));
    cJSON *limits = cJSON_GetObjectItem(req, "limits");
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(limits, "timeout_ms")), 250);
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(limits, "max_ops")), 5);
    assert_int_equal(cJSON_GetArraySize(limits), 2);
    assert_string_equal(
            cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(req, "imports"), 0)),
            "json");
    assert_int_equal(
            cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(req, "variables"), "x")),
            1);
    cJSON_Delete(req);
    fake_stop(f);
}

static void
test_refused_exec_is_a_result(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": false, \"error\": {\"code\": "
                                      "\"bad_request\", \"message\": \"limits.timeout_ms: too "
                                      "big\"}}"},
                             {.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_result res;
    struct pyfence_error err = {0};
    pyfence_result_init(&res);
    assert_int_equal(pyfence_exec(conn, "1", NULL, NULL, NULL, &res, &err), 0);
    assert_false(res.ok);
    assert_string_equal(res.outcome, "bad_request");
    assert_int_equal(res.outcome_code, PYFENCE_E_BAD_REQUEST);
    assert_string_equal(res.error.message, "limits.timeout_ms: too big");
    assert_null(res.output_repr);
    assert_string_equal(res.output_json, "null");
    pyfence_result_finish(&res);
    assert_int_equal(pyfence_ping(conn, &err), 0); /* the connection is still fine */
    pyfence_close(conn);
    fake_stop(f);
}

static void
expect_failure(const struct step *steps, size_t n, int code, const char *needle)
{
    struct fake *f = fake_start(steps, n);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    int r = pyfence_ping(conn, &err);
    for (size_t i = 1; i < n && r == 0; i++)
        r = pyfence_ping(conn, &err);
    assert_int_equal(r, -code);
    assert_int_equal(err.code, code);
    if (!strstr(err.message, needle))
        fail_msg("'%s' not in '%s'", needle, err.message);
    /* A broken connection stays broken, with the same error. */
    struct pyfence_error again = {0};
    assert_int_equal(pyfence_ping(conn, &again), -code);
    assert_string_equal(again.message, err.message);
    pyfence_close(conn);
    fake_stop(f);
}

static void
test_unexpected_id(void **state)
{
    const struct step s[] = {{.json = "{\"id\": 999, \"ok\": true}"}};
    expect_failure(s, 1, PYFENCE_E_PROTOCOL, "id 999, which is not in flight");
}

static void
test_string_id(void **state)
{
    const struct step s[] = {{.json = "{\"id\": \"1\", \"ok\": true}"}};
    expect_failure(s, 1, PYFENCE_E_PROTOCOL, "not an id this client sends");
}

static void
test_duplicate_key(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true, \"ok\": false}"}};
    expect_failure(s, 1, PYFENCE_E_PROTOCOL, "unreadable frame");
}

static void
test_zero_length(void **state)
{
    const struct step s[] = {{.raw = "\0\0\0\0", .raw_len = 4}};
    expect_failure(s, 1, PYFENCE_E_PROTOCOL, "bad frame");
}

static void
test_close_mid_frame(void **state)
{
    const struct step s[] = {{.raw = "\0\0\0\x20{\"id\"", .raw_len = 9, .close_after = 1}};
    expect_failure(s, 1, PYFENCE_E_CONNECT, "closed the connection in the middle of a frame");
}

static void
test_close_between_frames(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true}"}, {.close_after = 1}};
    expect_failure(s, 2, PYFENCE_E_CONNECT, "closed the connection");
}

static void
test_idless_refusal(void **state)
{
    const struct step s[] = {{.json = "{\"id\": null, \"ok\": false, \"error\": {\"code\": "
                                      "\"busy\", \"message\": \"max_connections reached\"}}",
                              .close_after = 1}};
    expect_failure(s, 1, PYFENCE_E_BUSY, "max_connections reached");
}

static void
test_failure_reply_for_ping(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": false, \"error\": {\"code\": "
                                      "\"shutting_down\", \"message\": \"stopping\"}}"}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    assert_int_equal(pyfence_ping(conn, &err), -PYFENCE_E_SHUTTING_DOWN);
    assert_string_equal(err.name, "shutting_down");
    assert_string_equal(err.message, "ping refused: stopping");
    pyfence_close(conn);
    fake_stop(f);
}

static void
test_bad_options_are_caught_locally(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_exec_options opts;
    struct pyfence_error err = {0};
    uint64_t id;
    pyfence_exec_options_init(&opts);
    opts.variables_json = "[1, 2]";
    assert_int_equal(pyfence_submit(conn, "1", &opts, &id, &err), -PYFENCE_E_BAD_REQUEST);
    assert_non_null(strstr(err.message, "variables_json"));
    assert_int_equal(pyfence_submit(conn, NULL, NULL, &id, &err), -PYFENCE_E_BAD_REQUEST);
    assert_int_equal(pyfence_submit(conn, "x = '\xe9'", NULL, &id, &err), -PYFENCE_E_BAD_REQUEST);
    assert_non_null(strstr(err.message, "not valid UTF-8 (byte 5)"));
    /* A request may nest 256 levels; the option sits one level down in it. */
    char deep[600] = "{\"x\": ";
    for (int i = 0; i < 255; i++)
        strcat(deep, "[");
    for (int i = 0; i < 255; i++)
        strcat(deep, "]");
    strcat(deep, "}");
    opts.variables_json = deep;
    assert_int_equal(pyfence_submit(conn, "1", &opts, &id, &err), -PYFENCE_E_BAD_REQUEST);
    assert_non_null(strstr(err.message, "nested deeper than 255 levels"));
    struct pyfence_result res;
    pyfence_result_init(&res);
    assert_int_equal(pyfence_wait(conn, 12345, NULL, NULL, &res, &err), -PYFENCE_E_NOT_FOUND);
    assert_int_equal(pyfence_ping(conn, &err), 0); /* nothing was sent for the bad ones */
    pyfence_close(conn);
    fake_stop(f);
}

static void
test_connect_errors(void **state)
{
    struct pyfence_conn *conn = NULL;
    struct pyfence_error err = {0};
    assert_int_equal(pyfence_connect("/nonexistent-dir/x.sock", &conn, &err), -PYFENCE_E_CONNECT);
    assert_null(conn);
    assert_non_null(strstr(err.message, "'/nonexistent-dir/x.sock'"));
    assert_non_null(strstr(err.message, "No such file or directory"));
    char longpath[300];
    memset(longpath, 'a', sizeof(longpath) - 1);
    longpath[0] = '/';
    longpath[sizeof(longpath) - 1] = '\0';
    assert_int_equal(pyfence_connect(longpath, &conn, NULL), -PYFENCE_E_CONFIG);
}

static void
test_hello(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true, \"server\": \"pyfenced\", "
                                      "\"version\": \"0.1.0\", \"python\": \"3.11.2\", "
                                      "\"protocol\": 1, \"limits\": {\"max_frame_bytes\": 4096}}"},
                             {.json = "{\"id\": %1$llu, \"ok\": true, \"protocol\": 2}"}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_server_info info;
    struct pyfence_error err = {0};
    pyfence_server_info_init(&info);
    assert_int_equal(pyfence_hello(conn, "unit", &info, &err), 0);
    assert_string_equal(info.server, "pyfenced");
    assert_string_equal(info.python, "3.11.2");
    assert_int_equal(info.protocol, 1);
    free(info.reply_json);
    /* The daemon's max_frame_bytes now bounds requests, checked before sending. */
    char code[5000];
    memset(code, 'x', sizeof(code) - 1);
    code[sizeof(code) - 1] = '\0';
    uint64_t id;
    assert_int_equal(pyfence_submit(conn, code, NULL, &id, &err), -PYFENCE_E_TOO_LARGE);
    assert_int_equal(pyfence_hello(conn, NULL, NULL, &err), -PYFENCE_E_PROTOCOL);
    assert_non_null(strstr(err.message, "speaks protocol 2; this libpyfence speaks 1"));
    pyfence_close(conn);
    fake_stop(f);
}

/* ---- interruptible waits ---------------------------------------------------------------- */

static volatile sig_atomic_t sigusr1_handled;

static void
on_sigusr1(int sig)
{
    (void) sig;
    sigusr1_handled++;
}

/* Sends SIGUSR1 to one thread every few milliseconds until told to stop: a wait that should
 * end on a signal gets one whenever it blocks, however the threads are scheduled. */
struct signaller {
    pthread_t target, thread;
    volatile int stop;
};

static void *
keep_signalling(void *userdata)
{
    struct signaller *s = userdata;
    while (!s->stop) {
        pthread_kill(s->target, SIGUSR1);
        usleep(5000);
    }
    return NULL;
}

static void
signaller_start(struct signaller *s, struct sigaction *ret_old)
{
    struct sigaction sa = {.sa_handler = on_sigusr1}; /* no SA_RESTART: recv fails with EINTR */
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, ret_old), 0);
    s->target = pthread_self();
    s->stop = 0;
    assert_int_equal(pthread_create(&s->thread, NULL, keep_signalling, s), 0);
}

static void
signaller_stop(struct signaller *s, const struct sigaction *old)
{
    s->stop = 1;
    pthread_join(s->thread, NULL);
    sigaction(SIGUSR1, old, NULL);
}

/* SIGUSR1 blocked, with a handler. */
static void
block_sigusr1(sigset_t *ret_old_mask, struct sigaction *ret_old)
{
    struct sigaction sa = {.sa_handler = on_sigusr1};
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, ret_old), 0);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &block, ret_old_mask), 0);
}

static void
test_interrupted_wait_keeps_the_request(void **state)
{
    /* The exec gets no answer until the cancel comes; then its reply, then the cancel's. */
    const char *parts[] = {
            "{\"id\": 1, \"event\": \"output\", \"data\": \"so far\\n\"}",
            "{\"id\": 1, \"ok\": false, \"outcome\": \"cancelled\", \"error\": {\"code\": "
            "\"cancelled\", \"message\": \"Code execution was cancelled\"}}",
            "{\"id\": 2, \"ok\": true, \"cancelled\": true}",
    };
    char frames[1024];
    const struct step s[] = {{.json = NULL},
                             {.raw = frames, .raw_len = build_frames(frames, parts, 3)}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    sigset_t old_mask;
    struct sigaction old;
    block_sigusr1(&old_mask, &old);
    struct pyfence_error err = {0};
    uint64_t id;
    assert_int_equal(pyfence_submit(conn, "while True: pass", NULL, &id, &err), 0);
    struct pyfence_result res;
    pyfence_result_init(&res);
    struct captured out = {{0}};
    /* Sent before the wait, while blocked: it stays pending, and the wait takes it. */
    assert_int_equal(pthread_kill(pthread_self(), SIGUSR1), 0);
    int r = pyfence_wait_signal(conn, id, SIGUSR1, capture, &out, &res, &err);
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGUSR1, &old, NULL);
    assert_int_equal(r, -PYFENCE_E_INTERRUPTED);
    assert_string_equal(err.name, "interrupted");
    assert_non_null(strstr(err.message, "still in flight"));
    /* A number that is no signal is refused, not waited on uninterruptibly. */
    assert_int_equal(pyfence_wait_signal(conn, id, 12345, NULL, NULL, &res, &err),
                     -PYFENCE_E_BAD_REQUEST);
    assert_non_null(strstr(err.message, "12345 is not a signal number"));
    assert_int_equal(pyfence_wait_signal(conn, id, -1, NULL, NULL, &res, &err),
                     -PYFENCE_E_BAD_REQUEST);
    /* Still in flight: it can be cancelled, and its reply waited for. */
    bool cancelled = false;
    assert_int_equal(pyfence_cancel(conn, id, &cancelled, &err), 0);
    assert_true(cancelled);
    assert_int_equal(pyfence_wait(conn, id, capture, &out, &res, &err), 0);
    assert_int_equal(res.outcome_code, PYFENCE_E_CANCELLED);
    assert_string_equal(out.buf, "so far\n");
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_stop(f);
}

/* Request i, as the fake server received it, has op, and field name with value (a string, or
 * a number's text). */
static void
assert_request(struct fake *f, size_t i, const char *op, const char *name, const char *value)
{
    assert_non_null(f->requests[i]);
    cJSON *req = cJSON_Parse(f->requests[i]);
    assert_non_null(req);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "op")), op);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, name);
    char num[32];
    if (cJSON_IsNumber(v))
        snprintf(num, sizeof(num), "%.0f", v->valuedouble);
    assert_string_equal(cJSON_IsNumber(v) ? num : cJSON_GetStringValue(v), value);
    cJSON_Delete(req);
}

#define SID "0123456789abcdef0123456789abcdef"

/* opts.profile goes out as the request's `profile`, and only when set. With a session it is
 * sent all the same (as imports and limits are): pyfenced refuses it, and that refusal is the
 * exec's result, not a local error. */
static void
test_profile_is_sent(void **state)
{
    const struct step s[] = {
            {.json = EXEC_OK},
            {.json = EXEC_OK},
            {.json = "{\"id\": %1$llu, \"ok\": false, \"error\": {\"code\": \"bad_request\", "
                     "\"message\": \"exec request: field 'profile' cannot be used with a session "
                     "(it is set by session.open)\"}}"},
    };
    struct fake *f = fake_start(s, 3);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_exec_options opts;
    pyfence_exec_options_init(&opts);
    assert_null(opts.profile);
    struct pyfence_result res;
    struct pyfence_error err = {0};
    pyfence_result_init(&res);
    opts.profile = "strict";
    assert_int_equal(pyfence_exec(conn, "1", &opts, NULL, NULL, &res, &err), 0);
    assert_true(res.ok);
    pyfence_result_finish(&res);
    assert_int_equal(pyfence_exec(conn, "1", NULL, NULL, NULL, &res, &err), 0);
    pyfence_result_finish(&res);
    opts.session = SID;
    assert_int_equal(pyfence_exec(conn, "1", &opts, NULL, NULL, &res, &err), 0);
    assert_false(res.ok);
    assert_int_equal(res.outcome_code, PYFENCE_E_BAD_REQUEST);
    assert_non_null(strstr(res.error.message, "field 'profile' cannot be used with a session"));
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "exec", "profile", "strict");
    cJSON *plain = cJSON_Parse(f->requests[1]);
    assert_non_null(plain);
    assert_null(cJSON_GetObjectItemCaseSensitive(plain, "profile"));
    cJSON_Delete(plain);
    assert_request(f, 2, "exec", "profile", "strict");
    assert_request(f, 2, "exec", "session", SID);
    fake_stop(f);
}

/* pyfence_session_open_signal(SIGUSR1) with SIGUSR1 blocked, handled, and already pending: the
 * call must take it (its handler runs once), whichever way it ends. */
static int
open_with_sigusr1_pending(struct pyfence_conn *conn, const struct pyfence_session_options *opts,
                          char *id, struct pyfence_error *err)
{
    sigset_t old_mask, pending;
    struct sigaction old;
    block_sigusr1(&old_mask, &old);
    sigusr1_handled = 0;
    assert_int_equal(pthread_kill(pthread_self(), SIGUSR1), 0);
    int r = pyfence_session_open_signal(conn, opts, SIGUSR1, id, err);
    assert_int_equal(sigpending(&pending), 0);
    assert_false(sigismember(&pending, SIGUSR1));
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGUSR1, &old, NULL);
    assert_int_equal(sigusr1_handled, 1);
    return r;
}

/* A detached open the server holds until its cancel, which it answers with open_reply (the
 * open's own answer, id 1) and the cancel's reply (cancelled as given), then a session.close if
 * one comes; the open runs with SIGUSR1 pending. Returns its result; *ret_f is the finished
 * server, whose requests the caller checks before fake_stop. */
static int
run_interrupted_open(const char *open_reply, bool cancelled, struct pyfence_error *err,
                     struct fake **ret_f)
{
    const char *parts[] = {open_reply, cancelled
                                               ? "{\"id\": 2, \"ok\": true, \"cancelled\": true}"
                                               : "{\"id\": 2, \"ok\": true, \"cancelled\": false}"};
    char frames[1024];
    const struct step s[] = {{.json = NULL},
                             {.raw = frames, .raw_len = build_frames(frames, parts, 2)},
                             {.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 3);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_session_options opts;
    pyfence_session_options_init(&opts);
    opts.detach = true;
    char id[PYFENCE_SESSION_ID_LEN + 1] = "";
    int r = open_with_sigusr1_pending(conn, &opts, id, err);
    assert_string_equal(id, ""); /* no id is handed out, whatever the outcome */
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "session.open", "id", "1");
    assert_request(f, 1, "cancel", "target", "1");
    *ret_f = f;
    return r;
}

static void
test_interrupted_open_is_cancelled(void **state)
{
    /* The open waits until its cancel: then its cancelled reply, then the cancel's. */
    struct pyfence_error err = {0};
    struct fake *f;
    int r = run_interrupted_open("{\"id\": 1, \"ok\": false, \"error\": {\"code\": \"cancelled\", "
                                 "\"message\": \"session.open was cancelled\"}}",
                                 true, &err, &f);
    assert_int_equal(r, -PYFENCE_E_INTERRUPTED);
    assert_string_equal(err.name, "interrupted");
    assert_non_null(strstr(err.message, "no session was opened"));
    assert_null(f->requests[2]);
    fake_stop(f);
}

static void
test_interrupted_open_that_opened_is_closed(void **state)
{
    /* The open's reply crosses the cancel: the session exists, and is closed. */
    struct pyfence_error err = {0};
    struct fake *f;
    int r = run_interrupted_open("{\"id\": 1, \"ok\": true, \"session\": \"" SID "\", "
                                 "\"profile\": \"default\", \"detached\": true}",
                                 false, &err, &f);
    assert_int_equal(r, -PYFENCE_E_INTERRUPTED);
    assert_request(f, 2, "session.close", "session", SID);
    fake_stop(f);
}

static void
test_interrupted_open_with_no_id_to_close_says_so(void **state)
{
    /* An open that succeeded without a usable id: it cannot be closed, and is not called gone. */
    struct pyfence_error err = {0};
    struct fake *f;
    int r = run_interrupted_open("{\"id\": 1, \"ok\": true, \"session\": \"short\"}", false, &err,
                                 &f);
    assert_int_equal(r, -PYFENCE_E_INTERNAL);
    assert_non_null(strstr(err.message, "cannot be closed"));
    assert_null(f->requests[2]);
    fake_stop(f);
}

static void
test_signal_as_the_open_reply_is_read_closes_it(void **state)
{
    /* The reply is there before the wait blocks, so the wait does not let the pending signal
     * through (ppoll reports a readable socket first): it is still pending once the reply is
     * read, and counts as an interruption all the same. */
    const struct step s[] = {
            {.json = "{\"id\": 1, \"ok\": true, \"session\": \"" SID "\"}", .early = 1},
            {.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    struct pollfd early = {.fd = pyfence_fileno(conn), .events = POLLIN};
    assert_int_equal(poll(&early, 1, 10000), 1); /* the early reply is there */
    struct pyfence_error err = {0};
    char id[PYFENCE_SESSION_ID_LEN + 1] = "";
    int r = open_with_sigusr1_pending(conn, NULL, id, &err);
    if (r != -PYFENCE_E_INTERRUPTED)
        fail_msg("%d: %s", r, err.message);
    assert_string_equal(id, "");
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "session.open", "id", "1");
    assert_request(f, 1, "session.close", "session", SID);
    fake_stop(f);
}

static void
test_open_signal_not_interrupted_and_bad_signo(void **state)
{
    /* signo 0: a plain wait for a late answer. */
    const struct step s[] = {
            {.json = "{\"id\": %1$llu, \"ok\": true, \"session\": \"" SID "\"}", .delay_ms = 100}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    char id[PYFENCE_SESSION_ID_LEN + 1] = "";
    assert_int_equal(pyfence_session_open_signal(conn, NULL, 0, id, &err), 0);
    assert_string_equal(id, SID);
    /* Refused before anything is sent. */
    assert_int_equal(pyfence_session_open_signal(conn, NULL, 12345, id, &err),
                     -PYFENCE_E_BAD_REQUEST);
    assert_non_null(strstr(err.message, "12345 is not a signal number"));
    fake_join(f);
    pyfence_close(conn);
    fake_stop(f);
}

static void
test_signals_do_not_end_a_wait_by_default(void **state)
{
    /* The answer comes 150 ms late, through some 30 signals. */
    const struct step s[] = {{.json = EXEC_OK, .delay_ms = 150}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    struct pyfence_result res;
    pyfence_result_init(&res);
    struct signaller sig;
    struct sigaction old;
    signaller_start(&sig, &old);
    int r = pyfence_exec(conn, "1", NULL, NULL, NULL, &res, &err);
    signaller_stop(&sig, &old);
    assert_int_equal(r, 0);
    assert_string_equal(res.output_repr, "42");
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_stop(f);
}

/* ---- structs sized by their caller (pyfence.h: size, _init macros) --------------------- */

/* Each byte of bytes[from, to) is still the canary 0xa5. */
static void
assert_canary(const unsigned char *bytes, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (bytes[i] != 0xa5)
            fail_msg("byte %zu, past the caller's size %zu, was written", i, from);
}

static void
assert_refused(int r, const struct pyfence_error *err, const char *needle)
{
    assert_int_equal(r, -PYFENCE_E_BAD_REQUEST);
    assert_string_equal(err->name, "bad_request");
    if (!strstr(err->message, needle))
        fail_msg("'%s' not in '%s'", needle, err->message);
}

/* Structs never initialised (size 0), or with a size no _init macro sets, are refused before
 * anything is sent, with the _init function to call. */
static void
test_uninitialised_structs_are_refused(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    uint64_t id = 0;
    struct pyfence_exec_options opts = {0};
    opts.timeout_ms = 5;
    assert_refused(pyfence_submit(conn, "1", &opts, &id, &err), &err,
                   "pyfence_exec_options.size is 0: initialise it with "
                   "pyfence_exec_options_init()");
    opts.size = 3;
    assert_refused(pyfence_submit(conn, "1", &opts, &id, &err), &err,
                   "pyfence_exec_options.size is 3, too small");
    opts.size = (size_t) 1 << 40; /* stack garbage, say: not read that far */
    assert_refused(pyfence_submit(conn, "1", &opts, &id, &err), &err,
                   "more than any pyfence.h makes it");
    struct pyfence_result res = {0};
    assert_refused(pyfence_exec(conn, "1", NULL, NULL, NULL, &res, &err), &err,
                   "pyfence_result.size is 0: initialise it with pyfence_result_init()");
    pyfence_result_finish(&res); /* frees nothing it cannot know it owns */
    struct pyfence_server_info info = {0};
    assert_refused(pyfence_hello(conn, NULL, &info, &err), &err,
                   "pyfence_server_info.size is 0: initialise it with "
                   "pyfence_server_info_init()");
    assert_int_equal(id, 0);
    assert_int_equal(pyfence_ping(conn, &err), 0);
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "ping", "id", "1"); /* the first request sent */
    fake_stop(f);
}

/* A wait with an uninitialised result is refused without taking the reply in, which a wait
 * with an initialised one then gets. */
static void
test_uninitialised_result_keeps_the_reply(void **state)
{
    const struct step s[] = {{.json = EXEC_OK}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    uint64_t id;
    assert_int_equal(pyfence_submit(conn, "1", NULL, &id, &err), 0);
    struct pyfence_result res = {0};
    assert_refused(pyfence_wait(conn, id, NULL, NULL, &res, &err), &err,
                   "pyfence_result.size is 0");
    pyfence_result_init(&res);
    assert_int_equal(pyfence_wait(conn, id, NULL, NULL, &res, &err), 0);
    assert_string_equal(res.output_repr, "42");
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_stop(f);
}

/* A program built when the exec options ended before `profile`: the library neither writes
 * nor reads past its size, and the options it does not have take their defaults. */
static void
test_older_exec_options(void **state)
{
    const struct step s[] = {{.json = EXEC_OK}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    const size_t size = offsetof(struct pyfence_exec_options, profile);
    union {
        struct pyfence_exec_options o;
        unsigned char bytes[sizeof(struct pyfence_exec_options)];
    } old;
    memset(&old, 0xa5, sizeof(old));
    pyfence_exec_options_init_size(&old.o, size);
    assert_canary(old.bytes, size, sizeof(old));
    assert_int_equal(old.o.size, size);
    assert_true(old.o.stream && old.o.n_imports == 0 && old.o.session == NULL);
    old.o.timeout_ms = 250;
    old.o.profile = "strict"; /* past its size: what the older caller has there */
    struct pyfence_error err = {0};
    struct pyfence_result res;
    pyfence_result_init(&res);
    assert_int_equal(pyfence_exec(conn, "1", &old.o, NULL, NULL, &res, &err), 0);
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "exec", "code", "1");
    cJSON *req = cJSON_Parse(f->requests[0]);
    assert_non_null(req);
    assert_null(cJSON_GetObjectItemCaseSensitive(req, "profile"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "stream")));
    const cJSON *limits = cJSON_GetObjectItemCaseSensitive(req, "limits");
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(limits, "timeout_ms")),
                     250);
    cJSON_Delete(req);
    fake_stop(f);
}

/* A program built against a newer pyfence.h, whose exec options have 16 more bytes: _init
 * zeroes them, which this library accepts; one set is refused, by its offset. */
static void
test_newer_exec_options(void **state)
{
    const struct step s[] = {{.json = EXEC_OK}, {.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    enum { OURS = sizeof(struct pyfence_exec_options), NEWER = OURS + 16 };
    union {
        struct pyfence_exec_options o;
        unsigned char bytes[NEWER];
    } newer;
    memset(&newer, 0xa5, sizeof(newer));
    pyfence_exec_options_init_size(&newer.o, NEWER);
    assert_int_equal(newer.o.size, NEWER);
    for (size_t i = OURS; i < NEWER; i++)
        assert_int_equal(newer.bytes[i], 0);
    newer.o.profile = "strict";
    struct pyfence_error err = {0};
    uint64_t id;
    assert_int_equal(pyfence_submit(conn, "1", &newer.o, &id, &err), 0);
    newer.bytes[OURS + 5] = 1;
    assert_refused(pyfence_submit(conn, "1", &newer.o, &id, &err), &err,
                   "pyfence_exec_options: byte ");
    char want[128];
    snprintf(want, sizeof(want), "byte %d is set, but this libpyfence (%s) knows only its first %d",
             OURS + 5, PYFENCE_VERSION_STRING, OURS);
    assert_refused(pyfence_submit(conn, "1", &newer.o, &id, &err), &err, want);
    assert_int_equal(pyfence_ping(conn, &err), 0); /* nothing was sent for it */
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "exec", "profile", "strict");
    assert_request(f, 1, "ping", "id", "2");
    fake_stop(f);
}

/* A result that ends before reply_json: the library writes nothing past its size, frees the
 * reply_json it does not hand over (the ASan build checks), and hands over the rest. */
static void
test_older_result(void **state)
{
    const struct step s[] = {{.json = EXEC_OK}, {.json = EXEC_OK}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    const size_t size = offsetof(struct pyfence_result, reply_json);
    union {
        struct pyfence_result r;
        unsigned char bytes[sizeof(struct pyfence_result)];
    } old;
    memset(&old, 0xa5, sizeof(old));
    pyfence_result_init_size(&old.r, 4); /* less than the size itself: still only 4 bytes */
    assert_canary(old.bytes, 4, sizeof(old));
    pyfence_result_init_size(&old.r, size);
    assert_canary(old.bytes, size, sizeof(old));
    struct pyfence_error err = {0};
    /* Twice: the second wait frees what the first handed over. */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pyfence_exec(conn, "1", NULL, NULL, NULL, &old.r, &err), 0);
        assert_canary(old.bytes, size, sizeof(old));
        assert_int_equal(old.r.size, size);
        assert_true(old.r.ok);
        assert_string_equal(old.r.outcome, "ok");
        assert_string_equal(old.r.output_repr, "42");
        assert_string_equal(old.r.logs, "a\nb\n");
        assert_int_equal(old.r.stats.max_rss_kb, 999);
    }
    pyfence_result_finish(&old.r);
    assert_canary(old.bytes, size, sizeof(old));
    assert_int_equal(old.r.size, size);
    assert_null(old.r.outcome);
    pyfence_close(conn);
    fake_stop(f);
}

/* The same for the server info of hello. */
static void
test_older_server_info(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true, \"server\": \"pyfenced\", "
                                      "\"version\": \"0.1.0\", \"python\": \"3.11.2\", "
                                      "\"protocol\": 1}"}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    const size_t size = offsetof(struct pyfence_server_info, reply_json);
    union {
        struct pyfence_server_info i;
        unsigned char bytes[sizeof(struct pyfence_server_info)];
    } old;
    memset(&old, 0xa5, sizeof(old));
    pyfence_server_info_init_size(&old.i, size);
    struct pyfence_error err = {0};
    assert_int_equal(pyfence_hello(conn, "unit", &old.i, &err), 0);
    assert_canary(old.bytes, size, sizeof(old));
    assert_string_equal(old.i.server, "pyfenced");
    assert_int_equal(old.i.protocol, 1);
    pyfence_close(conn);
    fake_stop(f);
}

/* Session options: never initialised, refused before anything is sent; from a program built
 * when they ended before `detach`, read within their size only. */
static void
test_session_options_sizes(void **state)
{
    const struct step s[] = {{.json = "{\"id\": %1$llu, \"ok\": true, \"session\": \"" SID "\"}"}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    char id[PYFENCE_SESSION_ID_LEN + 1] = "";
    struct pyfence_session_options zero = {0};
    zero.profile = "calc";
    assert_refused(pyfence_session_open(conn, &zero, id, &err), &err,
                   "pyfence_session_options.size is 0: initialise it with "
                   "pyfence_session_options_init()");
    assert_string_equal(id, "");
    const size_t size = offsetof(struct pyfence_session_options, detach);
    union {
        struct pyfence_session_options o;
        unsigned char bytes[sizeof(struct pyfence_session_options)];
    } old;
    memset(&old, 0xa5, sizeof(old));
    pyfence_session_options_init_size(&old.o, size);
    assert_canary(old.bytes, size, sizeof(old));
    old.o.profile = "calc";
    old.o.detach = true; /* past its size */
    assert_int_equal(pyfence_session_open(conn, &old.o, id, &err), 0);
    assert_string_equal(id, SID);
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "session.open", "profile", "calc");
    assert_request(f, 0, "session.open", "id", "1"); /* nothing was sent before */
    cJSON *req = cJSON_Parse(f->requests[0]);
    assert_non_null(req);
    assert_null(cJSON_GetObjectItemCaseSensitive(req, "detach"));
    cJSON_Delete(req);
    fake_stop(f);
}

static void
test_code_names(void **state)
{
    assert_string_equal(pyfence_code_name(PYFENCE_OK), "ok");
    assert_string_equal(pyfence_code_name(-PYFENCE_E_TIMEOUT), "timeout");
    assert_string_equal(pyfence_code_name(PYFENCE_E_SECCOMP), "seccomp_violation");
    assert_string_equal(pyfence_code_name(PYFENCE_E_PROTOCOL), "protocol");
    assert_string_equal(pyfence_code_name(PYFENCE_E_INTERRUPTED), "interrupted");
    assert_int_equal(pyfence_code_from_name("interrupted"), PYFENCE_E_INTERRUPTED);
    assert_string_equal(pyfence_code_name(12345), "internal");
    for (int c = PYFENCE_E_INTERNAL; c <= PYFENCE_E_SESSION_LOST; c++)
        assert_int_equal(pyfence_code_from_name(pyfence_code_name(c)), c);
    assert_int_equal(pyfence_code_from_name("protocol"), PYFENCE_E_PROTOCOL);
    assert_int_equal(pyfence_code_from_name("no-such-code"), PYFENCE_E_INTERNAL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_exec_request_and_result),
            cmocka_unit_test(test_pipelined_reverse),
            cmocka_unit_test(test_pipelining_does_not_deadlock),
            cmocka_unit_test(test_request_shape),
            cmocka_unit_test(test_profile_is_sent),
            cmocka_unit_test(test_refused_exec_is_a_result),
            cmocka_unit_test(test_unexpected_id),
            cmocka_unit_test(test_string_id),
            cmocka_unit_test(test_duplicate_key),
            cmocka_unit_test(test_zero_length),
            cmocka_unit_test(test_close_mid_frame),
            cmocka_unit_test(test_close_between_frames),
            cmocka_unit_test(test_idless_refusal),
            cmocka_unit_test(test_failure_reply_for_ping),
            cmocka_unit_test(test_bad_options_are_caught_locally),
            cmocka_unit_test(test_connect_errors),
            cmocka_unit_test(test_hello),
            cmocka_unit_test(test_interrupted_wait_keeps_the_request),
            cmocka_unit_test(test_signals_do_not_end_a_wait_by_default),
            cmocka_unit_test(test_interrupted_open_is_cancelled),
            cmocka_unit_test(test_interrupted_open_that_opened_is_closed),
            cmocka_unit_test(test_interrupted_open_with_no_id_to_close_says_so),
            cmocka_unit_test(test_signal_as_the_open_reply_is_read_closes_it),
            cmocka_unit_test(test_open_signal_not_interrupted_and_bad_signo),
            cmocka_unit_test(test_uninitialised_structs_are_refused),
            cmocka_unit_test(test_uninitialised_result_keeps_the_reply),
            cmocka_unit_test(test_older_exec_options),
            cmocka_unit_test(test_newer_exec_options),
            cmocka_unit_test(test_older_result),
            cmocka_unit_test(test_older_server_info),
            cmocka_unit_test(test_session_options_sizes),
            cmocka_unit_test(test_code_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
