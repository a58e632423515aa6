/* daemon/egress.c and egress_request.c: which addresses a host name may be connected to, the
 * checks a worker's request passes before any transfer starts, and how the engine ends
 * transfers it was not let finish (the transfers themselves: integration.egress). */
#include <arpa/inet.h>
#include <dirent.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "egress.h"
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
    struct egress *e = egress_new(uv_default_loop(), 1 << 20, &err);
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

struct ending {
    int calls;
    int status; /* of a reply */
    char type[32];
    char message[320];
};

static void
record_end(void *ctx, cJSON *frame)
{
    struct ending *end = ctx;
    end->calls++;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(frame, "error");
    snprintf(end->type, sizeof(end->type), "%s", msg_get_string(e, "type", "(none)"));
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(frame, "reply"), "status");
    end->status = cJSON_IsNumber(status) ? status->valueint : 0;
    snprintf(end->message, sizeof(end->message), "%s", msg_get_string(e, "message", ""));
    cJSON_Delete(frame);
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
    assert_null(egress_start(e, rules, &limits, req, record_end, end, &call));
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
    w->e = egress_new(uv_default_loop(), 1 << 20, &err);
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

/* Bind-mounts a file holding text over path (in this mount namespace). */
static int
mount_text(const char *path, const char *text)
{
    char file[] = "/tmp/pyfence-etc-XXXXXX";
    int fd = mkstemp(file);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t) strlen(text))
        return -1;
    close(fd);
    int bound = mount(file, path, NULL, MS_BIND, NULL);
    unlink(file);
    return bound;
}

/* For the lookup tests' children: network and mount namespaces of their own, where names not
 * in hosts_text (an /etc/hosts) are looked up at a DNS server on 127.0.0.1 that never answers,
 * with a 30 s resolver timeout. 0, or -1: cannot set up here. */
static int
blackhole_dns(const char *hosts_text)
{
    if (unshare(CLONE_NEWNS | CLONE_NEWNET) < 0 ||
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount_text("/etc/resolv.conf", "nameserver 127.0.0.1\noptions timeout:30 attempts:1\n") <
                0 ||
        mount_text("/etc/hosts", hosts_text) < 0)
        return -1;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq lo = {.ifr_name = "lo"};
    if (s < 0 || ioctl(s, SIOCGIFFLAGS, &lo) < 0)
        return -1;
    lo.ifr_flags |= IFF_UP;
    struct sockaddr_in dns = {.sin_family = AF_INET,
                              .sin_port = htons(53),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (ioctl(s, SIOCSIFFLAGS, &lo) < 0 || bind(s, (struct sockaddr *) &dns, sizeof(dns)) < 0)
        return -1; /* s stays open, unread: the server that never answers */
    return 0;
}

/* The child of test_unanswered_lookup_holds_nobody: a request for a name the DNS server never
 * answers must end at its own timeout, 300 ms, without the loop waiting for the lookup. Exit
 * status: 0 passed, 77 cannot set up, else failed. */
static int
lookup_child(void)
{
    if (blackhole_dns("127.0.0.1 localhost\n") < 0)
        return 77;
    struct pf_error *err = NULL;
    struct egress *e = egress_new(uv_default_loop(), 1 << 20, &err);
    _cleanup_json_ cJSON *rules_json = cJSON_Parse("[{\"url\": \"http://slow.example/\"}]");
    struct policy_egress rules = {0};
    if (!e || policy_egress_parse(rules_json, "test", &rules, &err) < 0)
        return 2;
    _cleanup_json_ cJSON *req = cJSON_Parse(
            "{\"event\":\"egress\",\"method\":\"GET\",\"url\":\"http://slow.example/x\"}");
    struct egress_limits limits = {.timeout_ms = 300, .max_bytes = 1024};
    struct ending end = {0};
    struct egress_call *call = NULL;
    uint64_t start = uv_hrtime();
    if (egress_start(e, &rules, &limits, req, record_end, &end, &call) || !call)
        return 3;
    while (end.calls == 0 && uv_hrtime() - start < 60 * 1000000000ull)
        uv_run(uv_default_loop(), UV_RUN_ONCE);
    double took_s = (double) (uv_hrtime() - start) / 1e9;
    egress_close(e);
    policy_egress_finish(&rules);
    fprintf(stderr, "lookup child: %d answer(s), %s (%s), after %.1f s\n", end.calls, end.type,
            end.message, took_s);
    /* 10 s: far from 0.3 s on any machine, far from the resolver's 30 s. */
    return end.calls == 1 && strcmp(end.type, "timeout") == 0 && took_s < 10 ? 0 : 4;
}

/* child() runs in a forked process (it makes namespaces of its own): 0 passes, 77 skips. */
static void
run_in_namespaces(int (*child)(void))
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        skip(); /* no namespaces here (not root): nothing to test with */
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* A request whose host name is still being looked up when it ends (its timeout, its job
 * killed) does not hold the loop, which every agent shares, until the lookup gives up. */
static void
test_unanswered_lookup_holds_nobody(void **state)
{
    (void) state;
    run_in_namespaces(lookup_child);
}

/* 11.0.0.1, a public address, on lo, and a forked HTTP server there answering every
 * connection 200 "ok" (the caller kills it). -1: cannot set up here. */
static pid_t
public_server(int *ret_port)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq alias = {.ifr_name = "lo:1"};
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = inet_addr("11.0.0.1")};
    memcpy(&alias.ifr_addr, &sa, sizeof(sa));
    if (s < 0 || ioctl(s, SIOCSIFADDR, &alias) < 0)
        return -1;
    close(s);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    socklen_t len = sizeof(sa);
    if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 16) < 0 ||
        getsockname(fd, (struct sockaddr *) &sa, &len) < 0)
        return -1;
    *ret_port = ntohs(sa.sin_port);
    pid_t pid = fork();
    if (pid != 0) {
        close(fd);
        return pid;
    }
    static const char reply[] =
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    for (int c; (c = accept(fd, NULL, NULL)) >= 0; close(c)) {
        char buf[4096];
        if (read(c, buf, sizeof(buf)) <= 0 || write(c, reply, sizeof(reply) - 1) < 0)
            continue;
    }
    _exit(0);
}

static int
count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d));)
        n += de->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* Starts GET url for owner with timeout_ms; false if it was answered at once. */
static bool
start_get(struct egress *e, const struct policy_egress *rules, const char *url, uint64_t owner,
          uint64_t timeout_ms, uint64_t max_bytes, struct ending *end)
{
    char json[256];
    snprintf(json, sizeof(json), "{\"event\":\"egress\",\"method\":\"GET\",\"url\":\"%s\"}", url);
    _cleanup_json_ cJSON *req = cJSON_Parse(json);
    struct egress_limits limits = {
            .timeout_ms = timeout_ms, .max_bytes = max_bytes, .owner = owner};
    struct egress_call *call = NULL;
    cJSON *now = egress_start(e, rules, &limits, req, record_end, end, &call);
    cJSON_Delete(now);
    return call != NULL;
}

/* Runs the loop until every one of ends has been answered, or 20 s; seconds taken. (Not
 * UV_RUN_ONCE: with nothing else to do, it waits for a hung lookup's thread.) */
static double
run_until_answered(struct ending *ends, size_t n)
{
    uint64_t start = uv_hrtime();
    for (size_t i = 0; i < n && uv_hrtime() - start < 20 * 1000000000ull;)
        if (ends[i].calls) {
            i++;
        } else {
            uv_run(uv_default_loop(), UV_RUN_NOWAIT);
            poll(NULL, 0, 5);
        }
    return (double) (uv_hrtime() - start) / 1e9;
}

#define HUNG_LOOKUPS 40

/* The checks of test_lookups_are_bounded_and_shared, in its child; 0 passed. */
static int
lookups_checks(int port)
{
    struct pf_error *err = NULL;
    struct egress *e = egress_new(uv_default_loop(), 1 << 20, &err);
    char json[256];
    snprintf(json, sizeof(json),
             "[{\"url\": \"http://slow.example/\"}, {\"url\": \"http://good.example:%d/\"}, "
             "{\"url\": \"http://private.example:%d/\"}]",
             port, port);
    _cleanup_json_ cJSON *rules_json = cJSON_Parse(json);
    struct policy_egress rules = {0};
    if (!e || policy_egress_parse(rules_json, "test", &rules, &err) < 0)
        return 2;
    uv_update_time(uv_default_loop()); /* as in the daemon, where requests come in callbacks */
    /* One owner's snippet, run after run: short timeouts, names that never resolve. */
    static struct ending hung[HUNG_LOOKUPS];
    for (int i = 0; i < HUNG_LOOKUPS; i++)
        if (!start_get(e, &rules, "http://slow.example/x", 1000, 200, 1024, &hung[i]))
            return 3;
    double took = run_until_answered(hung, HUNG_LOOKUPS);
    int timeouts = 0;
    for (int i = 0; i < HUNG_LOOKUPS; i++)
        timeouts += hung[i].calls == 1 && strcmp(hung[i].type, "timeout") == 0;
    int threads = count_threads();
    fprintf(stderr, "lookups child: %d of %d hung lookups timed out in %.1f s; %d threads\n",
            timeouts, HUNG_LOOKUPS, took, threads);
    /* the loop thread, libuv's pool of 4 (UV_THREADPOOL_SIZE), and slack; not one per lookup */
    if (timeouts != HUNG_LOOKUPS || took > 5 || threads > 1 + 4 + 2)
        return 4;
    /* Another owner's name that resolves: served while the hung lookups still run. */
    char url[128];
    struct ending good = {0}, private = {0};
    snprintf(url, sizeof(url), "http://good.example:%d/x", port);
    if (!start_get(e, &rules, url, 1001, 5000, 1024, &good))
        return 5;
    took = run_until_answered(&good, 1);
    fprintf(stderr, "lookups child: good.example: %s %d (%s) in %.1f s\n", good.type, good.status,
            good.message, took);
    if (good.calls != 1 || good.status != 200 || took > 4)
        return 6;
    /* A name the resolver answers with a private address is refused. */
    snprintf(url, sizeof(url), "http://private.example:%d/x", port);
    if (!start_get(e, &rules, url, 1001, 5000, 1024, &private))
        return 7;
    run_until_answered(&private, 1);
    fprintf(stderr, "lookups child: private.example: %s (%s)\n", private.type, private.message);
    if (private.calls != 1 || strcmp(private.type, "refused") != 0 ||
        !strstr(private.message, "10.0.0.7"))
        return 8;
    egress_close(e); /* the hung lookups end with this process */
    policy_egress_finish(&rules);
    return 0;
}

static int
lookups_child(void)
{
    /* before libuv's pool starts: the bound the checks expect */
    if (setenv("UV_THREADPOOL_SIZE", "4", 1) < 0 ||
        blackhole_dns("127.0.0.1 localhost\n11.0.0.1 good.example\n10.0.0.7 private.example\n") < 0)
        return 77;
    int port = 0;
    pid_t server = public_server(&port);
    if (server < 0)
        return 77;
    int rc = lookups_checks(port);
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
    return rc;
}

/* Lookups hung on a DNS server that does not answer leave the daemon's threads bounded (they
 * used to leave a thread each, until the resolver gave up: under systemd, pyfenced's TasksMax),
 * one owner's hung lookups do not hold back another owner's, and a name the resolver answers
 * with a private address is still refused. */
static void
test_lookups_are_bounded_and_shared(void **state)
{
    (void) state;
    run_in_namespaces(lookups_child);
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
    struct egress *e = egress_new(uv_default_loop(), 6000, &err);
    assert_non_null(e);
    char url[64];
    struct ending first = {0}, second = {0};
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/first", port);
    assert_true(start_get(e, &rules, url, 1, 5000, 1 << 20, &first));
    for (int i = 0; i < 1000 && egress_held_bytes(e) < 4000; i++) {
        uv_run(uv_default_loop(), UV_RUN_NOWAIT);
        poll(NULL, 0, 5);
    }
    assert_true(egress_held_bytes(e) >= 4000);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/second", port);
    assert_true(start_get(e, &rules, url, 2, 5000, 1 << 20, &second));
    run_until_answered(&second, 1);
    assert_string_equal(second.type, "connection");
    if (!strstr(second.message, "daemon-wide limit, egress_max_bytes_held 6000"))
        fail_msg("message '%s' does not name the limit", second.message);
    run_until_answered(&first, 1);
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
            cmocka_unit_test(test_unanswered_lookup_holds_nobody),
            cmocka_unit_test(test_lookups_are_bounded_and_shared),
            cmocka_unit_test(test_response_bytes_held_are_capped),
    };
    struct pf_error *err = NULL;
    if (egress_global_init(&err) < 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
