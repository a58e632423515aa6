/* daemon/egress.c and egress_request.c: which addresses a host name may be connected to, the
 * checks a worker's request passes before any transfer starts, and how the engine ends
 * transfers it was not let finish (the transfers themselves: integration.egress). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "egress.h"
#include "egress_fixture.h"
#include "msg.h"
#include "pf_cleanup.h"

static bool public(const char *text)
{
    unsigned char addr[16];
    int family = strchr(text, ':') ? AF_INET6 : AF_INET;
    assert_int_equal(inet_pton(family, text, addr), 1);
    return egress_address_public(family, addr);
}

static void
test_public_addresses_pass(void **state)
{
    (void) state;
    const char *ok[] = {"8.8.8.8",         "1.1.1.1",         "172.32.0.1",
                        "100.128.0.1",     "192.169.0.1",     "11.0.0.1",
                        "223.255.255.254", "2606:4700::1111", "2a00:1450:4001::200e"};
    for (size_t i = 0; i < PF_ELEMENTSOF(ok); i++)
        if (!public(ok[i]))
            fail_msg("%s should be public", ok[i]);
}

static void
test_local_and_private_addresses_are_refused(void **state)
{
    (void) state;
    const char *refused[] = {
            "127.0.0.1",
            "127.255.0.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
            "192.0.2.1",
            "198.18.0.1",
            "::",
            "::1",
            "fe80::1",
            "fc00::1",
            "fd12:3456::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2001:db8::1",
            "2002:a00:1::1",   /* 6to4 of 10.0.0.1 */
            "2002:7f00:1::1",  /* 6to4 of 127.0.0.1 */
            "2002:808:808::1", /* 6to4 of a public one: a relay's, not an address of its own */
    };
    for (size_t i = 0; i < PF_ELEMENTSOF(refused); i++)
        if (public(refused[i]))
            fail_msg("%s should not be public", refused[i]);
    /* an embedded public address stays public */
    assert_true(public("::ffff:8.8.8.8"));
}

static void
never_called(void *ctx, cJSON *frame)
{
    (void) ctx;
    cJSON_Delete(frame);
    fail_msg("no transfer should start");
}

/* The frame egress_start answers at once with for request_json under one rule. */
static cJSON *
answer(const char *request_json)
{
    _cleanup_pf_error_ struct pf_error *err = NULL;
    _cleanup_json_ cJSON *rules_json = cJSON_Parse(
            "[{\"url\": \"http://127.0.0.1:9/api/\", \"methods\": [\"GET\", \"POST\"]},"
            " {\"url\": \"http://localhost:9/\"}, {\"url\": \"http://db.LocalHost./\"}]");
    struct policy_egress rules = {0};
    assert_int_equal(policy_egress_parse(rules_json, "test", &rules, &err), 0);
    _cleanup_json_ cJSON *req = cJSON_Parse(request_json);
    assert_non_null(req);
    struct egress_limits limits = {.timeout_ms = 1000, .max_bytes = 4};
    struct egress_call *call = NULL;
    struct egress *e = egress_new(uv_default_loop(), 1 << 20, 1024, &err);
    assert_non_null(e);
    cJSON *frame = egress_start(e, &rules, &limits, req, never_called, NULL, &call);
    assert_null(call);
    egress_close(e);
    assert_int_equal(uv_run(uv_default_loop(), UV_RUN_DEFAULT), 0);
    policy_egress_finish(&rules);
    return frame;
}

static void
expect_error(const char *request_json, const char *type, const char *text)
{
    _cleanup_json_ cJSON *f = answer(request_json);
    assert_non_null(f);
    assert_string_equal(msg_get_string(f, "op", ""), "egress");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(f, "error");
    assert_string_equal(msg_get_string(e, "type", ""), type);
    const char *msg = msg_get_string(e, "message", "");
    if (!strstr(msg, text))
        fail_msg("message '%s' lacks '%s'", msg, text);
}

static void
test_requests_checked_before_any_transfer(void **state)
{
    (void) state;
    expect_error("{\"event\":\"egress\",\"method\":\"GET\",\"url\":\"http://127.0.0.1:9/admin\"}",
                 "refused", "matches no egress rule");
    expect_error("{\"event\":\"egress\",\"method\":\"PUT\",\"url\":\"http://127.0.0.1:9/api/x\"}",
                 "refused", "matches no egress rule");
    /* loopback names are refused without a lookup (RFC 6761) */
    expect_error("{\"event\":\"egress\",\"method\":\"GET\",\"url\":\"http://localhost:9/x\"}",
                 "refused", "a loopback name (RFC 6761), which is not a public address");
    expect_error("{\"event\":\"egress\",\"method\":\"GET\",\"url\":\"http://db.LocalHost./x\"}",
                 "refused", "a loopback name");
    expect_error("{\"event\":\"egress\",\"method\":\"GET\"}", "bad_request", "url");
    expect_error("{\"event\":\"egress\",\"method\":\"GET\",\"url\":\"http://127.0.0.1:9/api/\","
                 "\"extra\":1}",
                 "bad_request", "extra");
    expect_error("{\"event\":\"egress\",\"method\":\"GET\",\"url\":\"http://127.0.0.1:9/api/\","
                 "\"headers\":{\"Host\":\"example.com\"}}",
                 "bad_request", "set by pyfence");
    expect_error("{\"event\":\"egress\",\"method\":\"GET\",\"url\":\"http://127.0.0.1:9/api/\","
                 "\"headers\":{\"X-A\":\"b\\r\\nHost: evil\"}}",
                 "bad_request", "without line breaks");
    expect_error("{\"event\":\"egress\",\"method\":\"GET\",\"url\":\"http://127.0.0.1:9/api/\","
                 "\"headers\":{\"bad name\":\"v\"}}",
                 "bad_request", "is not a header name");
    expect_error("{\"event\":\"egress\",\"method\":\"GET\",\"url\":\"http://127.0.0.1:9/api/\","
                 "\"body\":\"aGk=\"}",
                 "bad_request", "GET or HEAD request has no body");
    expect_error("{\"event\":\"egress\",\"method\":\"POST\",\"url\":\"http://127.0.0.1:9/api/\","
                 "\"body\":\"not base64!\"}",
                 "bad_request", "base64");
    expect_error("{\"event\":\"egress\",\"method\":\"POST\",\"url\":\"http://127.0.0.1:9/api/\","
                 "\"body\":\"aGVsbG8=\"}",
                 "too_large", "egress_max_bytes 4");
}

/* A listening socket on 127.0.0.1 that never accepts: a transfer to it connects (the kernel
 * completes the handshake into the backlog) and then waits for an answer that never comes. */
static int
silent_server(int *ret_port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    assert_int_equal(bind(fd, (struct sockaddr *) &a, sizeof(a)), 0);
    assert_int_equal(listen(fd, 16), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *) &a, &len), 0);
    *ret_port = ntohs(a.sin_port);
    return fd;
}

/* One rule allowing the silent server at port. */
static void
rule_for(int port, struct policy_egress *rules)
{
    _cleanup_pf_error_ struct pf_error *err = NULL;
    char json[64];
    snprintf(json, sizeof(json), "[{\"url\": \"http://127.0.0.1:%d/\"}]", port);
    _cleanup_json_ cJSON *rules_json = cJSON_Parse(json);
    assert_int_equal(policy_egress_parse(rules_json, "test", rules, &err), 0);
}

/* Starts a GET to the silent server (listening on srv) under rules and runs the loop until
 * the connection is made: the request is then waiting for its answer. */
static struct egress_call *
start_stalled(struct egress *e, const struct policy_egress *rules, int srv, int port,
              struct ending *end)
{
    char json[128];
    snprintf(json, sizeof(json),
             "{\"event\":\"egress\",\"method\":\"GET\",\"url\":\"http://127.0.0.1:%d/x\"}", port);
    _cleanup_json_ cJSON *req = cJSON_Parse(json);
    struct egress_limits limits = {.timeout_ms = 60000, .max_bytes = 1024};
    struct egress_call *call = NULL;
    assert_null(egress_start(e, rules, &limits, req, egress_fixture_record_end, end, &call));
    assert_non_null(call);
    /* A connection waiting in the backlog makes the listening socket readable. */
    struct pollfd p = {.fd = srv, .events = POLLIN};
    for (int i = 0; i < 500 && poll(&p, 1, 0) == 0; i++) {
        uv_run(uv_default_loop(), UV_RUN_NOWAIT);
        poll(&p, 1, 10);
    }
    assert_true(p.revents & POLLIN);
    assert_int_equal(end->calls, 0);
    return call;
}

/* What the transfer tests share: a silent server, an engine, a rule for the server. */
struct stalled_world {
    int srv, port;
    struct egress *e;
    struct policy_egress rules;
};

static int
stalled_world_setup(void **state)
{
    struct stalled_world *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    w->srv = silent_server(&w->port);
    _cleanup_pf_error_ struct pf_error *err = NULL;
    w->e = egress_new(uv_default_loop(), 1 << 20, 1024, &err);
    assert_non_null(w->e);
    rule_for(w->port, &w->rules);
    *state = w;
    return 0;
}

static int
stalled_world_teardown(void **state)
{
    struct stalled_world *w = *state;
    policy_egress_finish(&w->rules);
    close(w->srv);
    free(w);
    return 0;
}

/* A daemon that stops ends the transfers under way at once, each owner told why, and the
 * loop is left with nothing open. */
static void
test_close_ends_transfers_under_way(void **state)
{
    struct stalled_world *w = *state;
    struct ending first = {0}, second = {0};
    start_stalled(w->e, &w->rules, w->srv, w->port, &first);
    /* The first's connection keeps the socket readable: this one may still be connecting. */
    start_stalled(w->e, &w->rules, w->srv, w->port, &second);
    egress_close(w->e);
    assert_int_equal(first.calls, 1);
    assert_int_equal(second.calls, 1);
    assert_string_equal(first.type, "connection");
    assert_string_equal(first.message, "pyfenced is stopping");
    assert_int_equal(uv_run(uv_default_loop(), UV_RUN_DEFAULT), 0);
}

/* An abandoned call is never answered, and leaves nothing open. */
static void
test_abandoned_transfer_is_not_answered(void **state)
{
    struct stalled_world *w = *state;
    struct ending end = {0};
    egress_abandon(start_stalled(w->e, &w->rules, w->srv, w->port, &end));
    for (int i = 0; i < 20; i++)
        uv_run(uv_default_loop(), UV_RUN_NOWAIT);
    egress_close(w->e);
    assert_int_equal(end.calls, 0);
    assert_int_equal(uv_run(uv_default_loop(), UV_RUN_DEFAULT), 0);
}

/* The server of test_response_bytes_held_are_capped, forked: the first request gets its
 * headers and 4000 of its 5000 body bytes, the second all of its own; once the second's
 * connection is closed, the first gets the rest. */
static void
two_responses_server(int srv)
{
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n";
    static char body[5000];
    memset(body, 'x', sizeof(body));
    char buf[4096];
    int first = accept(srv, NULL, NULL);
    if (first < 0 || read(first, buf, sizeof(buf)) <= 0 ||
        write(first, head, sizeof(head) - 1) < 0 || write(first, body, 4000) < 0)
        _exit(1);
    int second = accept(srv, NULL, NULL);
    if (second < 0 || read(second, buf, sizeof(buf)) <= 0 ||
        write(second, head, sizeof(head) - 1) < 0 || write(second, body, sizeof(body)) < 0)
        _exit(1);
    while (read(second, buf, sizeof(buf)) > 0)
        ; /* until the engine closes it */
    if (write(first, body + 4000, sizeof(body) - 4000) < 0)
        _exit(1);
    _exit(0);
}

/* Two responses whose bytes together pass the engine's max_held: the one that would pass it
 * ends with a connection error naming the daemon-wide limit, the other is served whole, and
 * every byte is given back. */
static void
test_response_bytes_held_are_capped(void **state)
{
    (void) state;
    int port;
    int srv = silent_server(&port);
    pid_t server = fork();
    assert_true(server >= 0);
    if (server == 0)
        two_responses_server(srv);
    struct policy_egress rules = {0};
    rule_for(port, &rules);
    _cleanup_pf_error_ struct pf_error *err = NULL;
    struct egress *e = egress_new(uv_default_loop(), 6000, 1024, &err);
    assert_non_null(e);
    char url[64];
    struct ending first = {0}, second = {0};
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/first", port);
    assert_true(egress_fixture_start_get(e, &rules, url, 1, 5000, 1 << 20, &first));
    for (int i = 0; i < 1000 && egress_held_bytes(e) < 4000; i++) {
        uv_run(uv_default_loop(), UV_RUN_NOWAIT);
        poll(NULL, 0, 5);
    }
    assert_true(egress_held_bytes(e) >= 4000);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/second", port);
    assert_true(egress_fixture_start_get(e, &rules, url, 2, 5000, 1 << 20, &second));
    egress_fixture_run_until_answered(&second, 1);
    assert_string_equal(second.type, "connection");
    if (!strstr(second.message, "daemon-wide limit, egress_max_bytes_held 6000"))
        fail_msg("message '%s' does not name the limit", second.message);
    egress_fixture_run_until_answered(&first, 1);
    assert_int_equal(first.status, 200);
    assert_int_equal(egress_held_bytes(e), 0);
    egress_close(e);
    assert_int_equal(uv_run(uv_default_loop(), UV_RUN_DEFAULT), 0);
    int status = 0;
    assert_int_equal(waitpid(server, &status, 0), server);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    policy_egress_finish(&rules);
    close(srv);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_public_addresses_pass),
            cmocka_unit_test(test_local_and_private_addresses_are_refused),
            cmocka_unit_test(test_requests_checked_before_any_transfer),
            cmocka_unit_test_setup_teardown(test_close_ends_transfers_under_way,
                                            stalled_world_setup, stalled_world_teardown),
            cmocka_unit_test_setup_teardown(test_abandoned_transfer_is_not_answered,
                                            stalled_world_setup, stalled_world_teardown),
            cmocka_unit_test(test_response_bytes_held_are_capped),
    };
    struct pf_error *err = NULL;
    if (egress_global_init(&err) < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
