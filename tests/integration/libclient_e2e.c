/* End-to-end check of libpyfence through its public header only, run by
 * tests/integration/test_libclient.py against the real pyfenced (and against the fake server).
 * Usage: libclient_e2e SOCKET. Prints one line per check; exits 0 when all pass, 1 otherwise. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyfence.h"

static int failures;

#define CHECK(cond, ...)                \
    do {                                \
        if (cond) {                     \
            printf("ok   %s\n", #cond); \
        } else {                        \
            printf("FAIL %s: ", #cond); \
            printf(__VA_ARGS__);        \
            printf("\n");               \
            failures++;                 \
        }                               \
    } while (0)

struct captured {
    char buf[4096];
    size_t len;
};

static void
capture(void *userdata, const char *data, size_t len)
{
    struct captured *c = userdata;
    size_t n = len < sizeof(c->buf) - 1 - c->len ? len : sizeof(c->buf) - 1 - c->len;
    memcpy(c->buf + c->len, data, n);
    c->len += n;
    c->buf[c->len] = '\0';
}

static void
check_hello_ping_stats(struct pyfence_conn *conn)
{
    struct pyfence_error err = {0};
    struct pyfence_server_info info;
    pyfence_server_info_init(&info);
    int r = pyfence_hello(conn, "libclient_e2e", &info, &err);
    CHECK(r == 0, "hello: %s", err.message);
    CHECK(strcmp(info.server, "pyfenced") == 0, "server '%s'", info.server);
    CHECK(info.protocol == 1, "protocol %d", info.protocol);
    CHECK(info.reply_json && strstr(info.reply_json, "\"limits\""), "hello reply %s",
          info.reply_json ? info.reply_json : "(null)");
    free(info.reply_json);
    r = pyfence_ping(conn, &err);
    CHECK(r == 0, "ping: %s", err.message);
    char *stats = NULL;
    r = pyfence_stats(conn, &stats, &err);
    CHECK(r == 0 && stats && strstr(stats, "\"jobs\""), "stats: %s", r ? err.message : stats);
    free(stats);
}

static void
check_exec(struct pyfence_conn *conn)
{
    struct pyfence_error err = {0};
    struct pyfence_result res;
    struct captured out = {0};
    pyfence_result_init(&res);
    int r = pyfence_exec(conn, "print('hello')\n6 * 7", NULL, capture, &out, &res, &err);
    CHECK(r == 0, "exec: %s", err.message);
    CHECK(res.ok && res.outcome_code == PYFENCE_OK, "outcome %s", res.outcome);
    CHECK(strcmp(out.buf, "hello\n") == 0, "streamed output '%s'", out.buf);
    CHECK(res.logs && strcmp(res.logs, "hello\n") == 0, "logs '%s'", res.logs);
    CHECK(res.output_repr && strcmp(res.output_repr, "42") == 0, "repr '%s'", res.output_repr);
    CHECK(res.output_json && strcmp(res.output_json, "42") == 0, "output %s", res.output_json);

    r = pyfence_exec(conn, "x = 1\n1 / 0", NULL, NULL, NULL, &res, &err);
    CHECK(r == 0, "exec 1/0: %s", err.message);
    CHECK(!res.ok && res.outcome_code == PYFENCE_E_ERROR, "outcome %s", res.outcome);
    CHECK(res.error.type && strcmp(res.error.type, "ZeroDivisionError") == 0, "type %s",
          res.error.type);
    CHECK(res.error.message && strstr(res.error.message, "Code execution failed at line"),
          "message %s", res.error.message);
    CHECK(res.output_repr == NULL, "repr of a failed snippet '%s'", res.output_repr);

    struct pyfence_exec_options opts;
    pyfence_exec_options_init(&opts);
    opts.limits_json = "{\"max_ops\": 1000";
    r = pyfence_exec(conn, "1", &opts, NULL, NULL, &res, &err);
    CHECK(r == -PYFENCE_E_BAD_REQUEST && strstr(err.message, "limits_json"), "bad limits: %d %s", r,
          err.message);
    pyfence_result_finish(&res);
}

/* Three execs in flight at once, collected in reverse order: each reply and each output event
 * must reach the wait() of its own id. */
static void
check_pipelining(struct pyfence_conn *conn)
{
    struct pyfence_error err = {0};
    uint64_t ids[3];
    for (int i = 0; i < 3; i++) {
        char code[64];
        snprintf(code, sizeof(code), "print('job%d')\n%d * 100", i, i);
        int r = pyfence_submit(conn, code, NULL, &ids[i], &err);
        CHECK(r == 0, "submit %d: %s", i, err.message);
    }
    for (int i = 2; i >= 0; i--) {
        struct pyfence_result res;
        struct captured out = {0};
        char want_out[16], want_repr[16];
        pyfence_result_init(&res);
        int r = pyfence_wait(conn, ids[i], capture, &out, &res, &err);
        snprintf(want_out, sizeof(want_out), "job%d\n", i);
        snprintf(want_repr, sizeof(want_repr), "%d", i * 100);
        CHECK(r == 0, "wait %" PRIu64 ": %s", ids[i], err.message);
        CHECK(strcmp(out.buf, want_out) == 0, "job %d output '%s'", i, out.buf);
        CHECK(res.output_repr && strcmp(res.output_repr, want_repr) == 0, "job %d repr '%s'", i,
              res.output_repr);
        pyfence_result_finish(&res);
    }
    struct pyfence_result res;
    pyfence_result_init(&res);
    int r = pyfence_wait(conn, ids[0], NULL, NULL, &res, &err);
    CHECK(r == -PYFENCE_E_NOT_FOUND, "second wait of an answered id: %d", r);
}

/* Session options are parsed as strictly as the daemon parses frames: a duplicate key used to
 * be sent, refused by pyfenced as a frame without an id, and then every call failed. */
static void
check_session_options(struct pyfence_conn *conn)
{
    struct pyfence_error err = {0};
    struct pyfence_session_options o;
    char id[PYFENCE_SESSION_ID_LEN + 1] = "";
    pyfence_session_options_init(&o);
    o.variables_json = "{\"x\": 1, \"x\": 2}";
    int r = pyfence_session_open(conn, &o, id, &err);
    CHECK(r == -PYFENCE_E_BAD_REQUEST && strstr(err.message, "variables_json"), "dup key: %d %s", r,
          err.message);
    o.variables_json = "{\"x\": {\"$type\": \"int\", \"value\": \"-0x1f\"}}";
    r = pyfence_session_open(conn, &o, id, &err);
    if (r == -PYFENCE_E_UNKNOWN_OP) { /* the fake server of test_cli_fake.py has no sessions */
        printf("skip sessions: %s\n", err.message);
        CHECK(pyfence_ping(conn, &err) == 0, "ping: %s", err.message);
        return;
    }
    CHECK(r == 0, "open: %s", err.message);
    const char *names[] = {"x"};
    char *json = NULL;
    r = pyfence_session_get(conn, id, names, 1, &json, &err);
    CHECK(r == 0 && strstr(json, "\"x\":-31"), "get: %s", r ? err.message : json);
    free(json);
    r = pyfence_session_close(conn, NULL, &err);
    CHECK(r == -PYFENCE_E_BAD_REQUEST, "close(NULL): %d %s", r, err.message);
    r = pyfence_session_list(conn, &json, &err);
    CHECK(r == 0 && strstr(json, "\"pending\":0"), "list: %s", r ? err.message : json);
    free(json);
    r = pyfence_session_close(conn, id, &err);
    CHECK(r == 0, "close: %s", err.message);
    r = pyfence_session_close(conn, id, &err);
    CHECK(r == -PYFENCE_E_NOT_FOUND && strncmp(err.message, "session.close refused: ", 23) == 0 &&
                  !strstr(err.message + 23, "session.close"),
          "second close: %d %s", r, err.message);
    CHECK(pyfence_ping(conn, &err) == 0, "ping: %s", err.message);
}

static void
check_connect_error(void)
{
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    int r = pyfence_connect("/nonexistent/pyfence.sock", &conn, &err);
    CHECK(r == -PYFENCE_E_CONNECT && conn == NULL, "connect to a missing socket: %d", r);
    CHECK(strstr(err.message, "/nonexistent/pyfence.sock") && strstr(err.message, "No such file"),
          "message '%s'", err.message);
    CHECK(strcmp(err.name, "connect") == 0, "name '%s'", err.name);
}

int
main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SOCKET\n", argv[0]);
        return 2;
    }
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    if (pyfence_connect(argv[1], &conn, &err) < 0) {
        fprintf(stderr, "libclient_e2e: %s\n", err.message);
        return 1;
    }
    check_hello_ping_stats(conn);
    check_exec(conn);
    check_pipelining(conn);
    check_session_options(conn);
    pyfence_close(conn);
    check_connect_error();
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
