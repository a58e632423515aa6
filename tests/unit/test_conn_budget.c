/* What one uid may take of pyfenced, through the daemon with conn_fixture.c's fake zygote and a
 * client on a socketpair (all of this test's connections are its own uid's):
 * max_connections_per_uid (busy naming the uid's count), the rate-limited refusal warning,
 * back-pressure on a peer that does not read its replies, and max_bytes_per_uid — the bytes of
 * a uid's unread replies, queued execs, waiting session.open and requests waiting for their
 * session, each released on its way out (started, cancelled, connection closed, session closed),
 * and busy with retry_after_ms past it; unread replies kept near it (and max_bytes) by closing
 * the connections that do not read them; and max_inflight, which like max_bytes_per_uid never
 * refuses cancel or session.close. Teardown checks every count is back to zero. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "job.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "session.h"
#include "session_fixture.h"

/* What pyfenced holds for this test's uid, once the writes that can complete have. */
static uint64_t
held(struct fx *f)
{
    pump(f, 5);
    return sched_bytes_of(&f->d.sched, getuid());
}

static struct conn *
first_conn(struct fx *f)
{
    assert_false(dlist_empty(&f->d.conns));
    return pf_container_of(f->d.conns.next, struct conn, link);
}

/* A second client connection of this uid; its peer end in *ret_fd. */
static struct conn *
connect_again(struct fx *f, int *ret_fd)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct conn *c = NULL;
    struct pf_error *err = NULL;
    assert_int_equal(conn_open_fd(&f->d, sv[0], &c, &err), 0);
    *ret_fd = sv[1];
    return c;
}

/* ---- max_connections_per_uid -------------------------------------------------------------- */

static void
tune_two_conns(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_MAX_CONNECTIONS_PER_UID] = 2;
}

static void
test_busy_at_max_connections_per_uid(void **state)
{
    struct fx *f = *state;
    int second = -1;
    connect_again(f, &second);
    assert_int_equal(f->d.n_conns, 2);
    struct peer *third = calloc(1, sizeof(*third));
    connect_again(f, &third->fd);
    cJSON *r = recv_frame(f, third, 2000);
    assert_non_null(r);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "id")));
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "code")->valuestring,
                        "busy");
    char want[160];
    snprintf(want, sizeof(want),
             "uid %u already has 2 connections open (max_connections_per_uid 2); close one or "
             "try again later",
             (unsigned) getuid());
    assert_string_equal(error_message(r), want);
    cJSON_Delete(r);
    expect_eof(f, third);
    close(third->fd);
    free(third);
    assert_int_equal(f->d.n_conns, 2);
    assert_int_equal(sched_uid_find(&f->d.sched, getuid())->conns, 2);
    /* The first connection is still served; a closed one makes room. */
    send_frame(f->client.fd, "{\"id\":1,\"op\":\"ping\"}");
    cJSON_Delete(expect_ok(f, "1"));
    close(second);
    pump(f, 20);
    assert_int_equal(f->d.n_conns, 1);
    connect_again(f, &second);
    assert_int_equal(f->d.n_conns, 2);
    close(second);
}

/* A client retrying in a loop gets its busy every time, but the warning is logged once per
 * CONN_REFUSAL_LOG_MS, the next line saying how many went unlogged. */
static void
test_refusal_warning_rate_limited(void **state)
{
    struct fx *f = *state;
    int log = memfd_create("log", MFD_CLOEXEC);
    int saved = dup(STDERR_FILENO);
    assert_true(log >= 0 && saved >= 0);
    assert_int_equal(dup2(log, STDERR_FILENO), STDERR_FILENO);
    pf_log_init(PF_LOG_WARNING, "test_conn_budget");
    int fd;
    connect_again(f, &fd); /* the second: admitted */
    int keep = fd;
    for (int i = 0; i < 50; i++) {
        connect_again(f, &fd);
        close(fd);
    }
    pump(f, 20);
    assert_int_equal(f->d.refusals.total, 50);
    assert_int_equal(f->d.refusals.logged, 1);
    assert_int_equal(f->d.refusals.unlogged, 49);
    pump(f, CONN_REFUSAL_LOG_MS + 100);
    connect_again(f, &fd);
    close(fd);
    pump(f, 20);
    assert_int_equal(f->d.refusals.logged, 2);
    assert_int_equal(f->d.refusals.unlogged, 0);

    pf_log_init(PF_LOG_CRIT, "test_conn_budget");
    assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
    close(saved);
    char text[8192] = "";
    ssize_t n = pread(log, text, sizeof(text) - 1, 0);
    close(log);
    assert_true(n > 0);
    text[n] = '\0';
    int lines = 0;
    for (const char *p = text; (p = strstr(p, "refusing connection from uid")); p++)
        lines++;
    if (lines != 2)
        fail_msg("want 2 refusal lines, got %d:\n%s", lines, text);
    assert_non_null(strstr(text, "(49 more refused since the last such line, not logged)"));
    close(keep);
}

/* ---- back-pressure ------------------------------------------------------------------------ */

/* A peer that sends requests and does not read: once CONN_PAUSE_BYTES of replies are unsent,
 * its connection is not read (no disconnect, nothing more piles up), and what was read but not
 * handled yet waits; when the peer reads, every request it sent is answered, in order, and the
 * bytes held for the uid come back to zero. */
static void
test_not_read_while_replies_unread(void **state)
{
    struct fx *f = *state;
    int small = 4096;
    setsockopt(f->client.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    struct conn *c = first_conn(f);
    /* 1000 hello requests in one write (25 KB, one read for the daemon), whose replies (a few
     * KiB each) are far more than the socket and CONN_PAUSE_BYTES hold. */
    enum { N = 1000 };
    char *burst = malloc(N * 32);
    size_t len = 0;
    for (int i = 0; i < N; i++) {
        char json[32];
        int n = snprintf(json, sizeof(json), "{\"id\":%d,\"op\":\"hello\"}", i);
        burst[len] = burst[len + 1] = burst[len + 2] = 0;
        burst[len + 3] = (char) n;
        memcpy(burst + len + 4, json, (size_t) n);
        len += 4 + (size_t) n;
    }
    send_raw(f->client.fd, burst, len);
    free(burst);
    pump(f, 50);
    assert_true(c->paused);
    assert_non_null(c->held); /* the rest of that read */
    size_t unsent = uv_stream_get_write_queue_size((uv_stream_t *) &c->pipe);
    /* Over the mark by one reply at most (a hello reply is a few KiB). */
    assert_true(unsent > CONN_PAUSE_BYTES && unsent < CONN_PAUSE_BYTES + 16 * 1024);
    assert_int_equal(f->d.n_conns, 1);
    /* What the uid holds is exactly this connection's queued replies. */
    assert_int_equal(sched_bytes_of(&f->d.sched, getuid()), c->outbuf_bytes);
    assert_true(c->outbuf_bytes >= unsent);
    /* Nothing changes while the peer does not read, whatever else it sends. */
    send_frame(f->client.fd, "{\"id\":\"more\",\"op\":\"hello\"}");
    pump(f, 50);
    assert_true(c->paused);
    assert_int_equal(uv_stream_get_write_queue_size((uv_stream_t *) &c->pipe), unsent);

    for (int got = 0; got < N; got++) {
        cJSON *r = recv_frame(f, &f->client, 5000);
        if (!r)
            fail_msg("reply %d of %d missing", got, N);
        assert_int_equal(cJSON_GetObjectItem(r, "id")->valueint, got);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
        cJSON_Delete(r);
    }
    cJSON_Delete(expect_ok(f, "\"more\""));
    assert_false(c->paused);
    assert_null(c->held);
    assert_int_equal(held(f), 0);
}

/* ---- max_bytes_per_uid ---------------------------------------------------------------------- */

/* An output event of about 64 KiB, as the worker sends it. */
static char *
big_output_event(void)
{
    enum { N = 64 * 1024 };
    char *ev = malloc(N + 64);
    assert_non_null(ev);
    int n = snprintf(ev, 64, "{\"event\":\"output\",\"data\":\"");
    memset(ev + n, 'x', N);
    snprintf(ev + n + N, 64, "\"}");
    return ev;
}

/* The client's connection stops reading (a tiny receive buffer) and sends an exec, whose
 * output is streamed to it. */
static void
start_unread_exec(struct fx *f)
{
    int small = 4096;
    setsockopt(f->client.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\",\"stream\":true}");
}

/* The exec's worker sends 64 KiB output events, one by one, up to `max` of them, until the
 * daemon closes the client's connection; returns how many it sent. */
static int
stream_until_closed(struct fx *f, int max)
{
    char *ev = big_output_event();
    int sent = 0;
    while (sent < max && f->d.n_conns > 0) {
        send_frame(f->worker.fd, ev);
        sent++;
        pump(f, 5);
    }
    free(ev);
    return sent;
}

/* Unread replies are bounded per uid, not only per connection (max_outbuf_bytes): a peer that
 * does not read while the replies of what it asked keep coming (a streamed exec's output here;
 * in the review's attack, 15 execs' replies on each of 72 connections) is disconnected as a slow
 * reader once its uid holds more than max_bytes_per_uid with more than CONN_PAUSE_BYTES unsent
 * on it; what it held is released at once, and the uid is served again. */
static void
test_unread_replies_bounded_per_uid(void **state)
{
    struct fx *f = *state;
    f->d.sched.max_bytes_uid = 512 * 1024;
    start_unread_exec(f);
    /* Up to 16 events (1 MiB, the exec's max_output_bytes; far under max_outbuf_bytes, 16 MiB):
     * the uid's bound closes it before. */
    int sent = stream_until_closed(f, 16);
    if (f->d.n_conns > 0)
        fail_msg("%d output events (%llu bytes held for the uid) and still connected", sent,
                 (unsigned long long) sched_bytes_of(&f->d.sched, getuid()));
    /* Closed once past the bound: by the event that took it over (the socket holds some). */
    assert_true(sent >= 8 && sent < 16);
    assert_int_equal(sched_bytes_of(&f->d.sched, getuid()), 0);
    /* The peer reads what reached its socket, then the end. */
    for (cJSON *r; (r = recv_frame(f, &f->client, 3000));)
        cJSON_Delete(r);
    assert_true(f->client.eof);
    /* The uid is served again, on a new connection. */
    struct peer *other = calloc(1, sizeof(*other));
    connect_again(f, &other->fd);
    send_frame(other->fd, "{\"id\":2,\"op\":\"ping\"}");
    cJSON *r = recv_frame(f, other, 3000);
    assert_non_null(r);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON_Delete(r);
    close(other->fd);
    free(other);
}

/* All uids together past max_bytes: the uid that holds more than an even part of it gives way
 * (its slow connection is closed), one that holds less does not, though its peer reads slowly
 * too: another uid's excess is not its to pay. */
static void
test_unread_replies_bounded_all_uids(void **state)
{
    struct fx *f = *state;
    uid_t other_uid = getuid() + 1;
    f->d.sched.max_bytes = 1024 * 1024;
    start_unread_exec(f);
    /* The other uid holds past max_bytes on its own: two uids, an even part is 512 KiB. */
    assert_int_equal(sched_bytes_charge(&f->d.sched, other_uid, 1100 * 1024), 0);
    /* 7 events: more than 256 KiB unsent (the socket takes about 200 KiB), under 512 KiB. */
    assert_int_equal(stream_until_closed(f, 7), 7);
    assert_int_equal(f->d.n_conns, 1);
    uint64_t mine = sched_bytes_of(&f->d.sched, getuid());
    if (mine <= CONN_PAUSE_BYTES || mine >= 512 * 1024)
        fail_msg("%llu bytes held: not what this test needs", (unsigned long long) mine);
    /* Now the other uid holds little, and this one (past 512 KiB) gives way. */
    sched_bytes_release(&f->d.sched, other_uid, 1100 * 1024);
    assert_int_equal(sched_bytes_charge(&f->d.sched, other_uid, 400 * 1024), 0);
    int sent = stream_until_closed(f, 8);
    assert_true(sent < 8);
    assert_int_equal(f->d.n_conns, 0);
    assert_int_equal(sched_bytes_of(&f->d.sched, getuid()), 0);
    sched_bytes_release(&f->d.sched, other_uid, 400 * 1024);
}

/* A frame's header, announcing n bytes of payload. */
static void
send_header(int fd, uint32_t n)
{
    uint8_t h[4] = {(uint8_t) (n >> 24), (uint8_t) (n >> 16), (uint8_t) (n >> 8), (uint8_t) n};
    send_raw(fd, h, 4);
}

/* A new connection's frame of 50 bytes, 10 of them sent, is refused busy (id null) with a
 * message beginning with `want`, and the connection closed. */
static void
expect_frame_refused(struct fx *f, const char *want)
{
    struct peer *other = calloc(1, sizeof(*other));
    connect_again(f, &other->fd);
    send_header(other->fd, 50);
    send_raw(other->fd, "{\"id\":1,\"op\"", 10);
    cJSON *r = recv_frame(f, other, 3000);
    assert_non_null(r);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(r, "id")));
    if (strncmp(error_message(r), want, strlen(want)) != 0)
        fail_msg("'%s' is not '%s...'", error_message(r), want);
    cJSON_Delete(r);
    expect_eof(f, other);
    close(other->fd);
    free(other);
}

/* A frame being received counts for its uid from its header on (its payload is allocated
 * then), until it is complete or its connection closes; one whose header comes while the uid
 * already holds more than max_bytes_per_uid is refused busy and the connection closed (its
 * bytes cannot be skipped). */
static void
test_frame_being_received_counts(void **state)
{
    struct fx *f = *state;
    char body[3000]; /* a ping, padded with spaces (JSON allows them) */
    memset(body, ' ', sizeof(body));
    memcpy(body, "{\"id\":1,\"op\":\"ping\"}", 20);
    send_header(f->client.fd, sizeof(body));
    send_raw(f->client.fd, body, 1000);
    assert_int_equal(held(f), sizeof(body));
    send_raw(f->client.fd, body + 1000, sizeof(body) - 1000);
    cJSON_Delete(expect_ok(f, "1"));
    assert_int_equal(held(f), 0);

    /* Cut short by a close: released with the connection (teardown checks the zero). */
    int fd;
    connect_again(f, &fd);
    send_header(fd, sizeof(body));
    send_raw(fd, body, 10);
    assert_int_equal(held(f), sizeof(body));
    close(fd);
    pump(f, 20);
    assert_int_equal(held(f), 0);

    /* Within the bound when its header came: taken, though it takes the uid past it... */
    f->d.sched.max_bytes_uid = 2000;
    send_header(f->client.fd, sizeof(body));
    send_raw(f->client.fd, body, 100);
    assert_int_equal(held(f), sizeof(body));
    /* ...and then another connection's frame is refused busy, naming it, and closed. */
    char want[200];
    snprintf(want, sizeof(want),
             "pyfenced already holds 3000 bytes for uid %u, over max_bytes_per_uid 2000: a frame "
             "of 50 bytes is not taken; closing, try again in ",
             (unsigned) getuid());
    expect_frame_refused(f, want);
    /* The first one completes: its request is served (the uid holds nothing more then). */
    send_raw(f->client.fd, body + 100, sizeof(body) - 100);
    cJSON_Delete(expect_ok(f, "1"));
    assert_int_equal(held(f), 0);
}

/* max_bytes counts every uid: with another uid holding past it and this one holding nothing,
 * this uid's ping is answered busy naming max_bytes and the sum, a frame whose header comes
 * then is refused and its connection closed, and a cancel still goes through; once the other
 * uid's bytes are released, the uid is served again. */
static void
test_busy_past_max_bytes_all_uids(void **state)
{
    struct fx *f = *state;
    uid_t other_uid = getuid() + 1;
    f->d.sched.max_bytes = 2000;
    assert_int_equal(sched_bytes_charge(&f->d.sched, other_uid, 2001), 0);
    send_frame(f->client.fd, "{\"id\":1,\"op\":\"ping\"}");
    cJSON *r = expect_error(f, "1", "busy");
    const char *want = "pyfenced already holds 2001 bytes for all uids together (max_bytes 2000";
    if (!strstr(error_message(r), want))
        fail_msg("'%s' lacks '%s'", error_message(r), want);
    assert_true(
            cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "retry_after_ms")));
    cJSON_Delete(r);
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"cancel\",\"target\":9}");
    cJSON_Delete(expect_ok(f, "2"));

    expect_frame_refused(f, "pyfenced already holds 2001 bytes for all uids together, over "
                            "max_bytes 2000: a frame of 50 bytes is not taken; closing, try "
                            "again in ");

    sched_bytes_release(&f->d.sched, other_uid, 2001);
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"ping\"}");
    cJSON_Delete(expect_ok(f, "3"));
}

static void
tune_one_worker(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_MAX_WORKERS] = 1;
}

/* The queued (not launched) job of this test's connection. */
static struct job *
queued_job(struct fx *f)
{
    struct dlist *pos;
    for (pos = f->d.jobs.next; pos != &f->d.jobs; pos = pos->next) {
        struct job *j = pf_container_of(pos, struct job, daemon_link);
        if (!j->launched && j->conn)
            return j;
    }
    fail_msg("no queued job");
    return NULL;
}

/* A queued exec's run frame counts for its uid until it starts, or is cancelled, or its
 * connection closes. */
static void
test_queued_exec_counts_until_it_starts(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    assert_int_equal(held(f), 0);
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"exec\",\"code\":\"'queued'\"}");
    pump(f, 20);
    struct job *q = queued_job(f);
    assert_true(q->frame_len > 0);
    assert_int_equal(held(f), q->frame_len);
    /* Cancelled: it never starts, and holds nothing any more. */
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"cancel\",\"target\":2}");
    cJSON_Delete(expect_error(f, "2", "cancelled"));
    cJSON_Delete(expect_ok(f, "3"));
    assert_int_equal(held(f), 0);
    /* Queued again; it starts when the worker frees: from then on the queue holds nothing. */
    send_frame(f->client.fd, "{\"id\":4,\"op\":\"exec\",\"code\":\"'next'\"}");
    pump(f, 20);
    assert_int_equal(held(f), queued_job(f)->frame_len);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    cJSON_Delete(expect_ok(f, "1"));
    end_worker(f, job, 0, 0, false, 0);
    pump(f, 20);
    assert_true(fake.last_job > job);
    assert_int_equal(held(f), 0);
    /* One more queued behind it, then the connection closes: released with the job
     * (teardown checks the zero). */
    send_frame(f->client.fd, "{\"id\":5,\"op\":\"exec\",\"code\":\"'dropped'\"}");
    pump(f, 20);
    assert_true(held(f) > 0);
    close(f->client.fd);
    f->client.fd = -1;
    pump(f, 20);
    assert_int_equal(held(f), 0);
}

/* Past max_bytes_per_uid: an exec that would wait is refused busy (naming the bound and what
 * the uid holds, with retry_after_ms); once the uid holds more than the bound, any request but
 * cancel and session.close is; cancel frees, and the uid is served again. */
static void
test_busy_past_max_bytes_per_uid(void **state)
{
    struct fx *f = *state;
    start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"exec\",\"code\":\"'aaaa'\"}");
    pump(f, 20);
    uint64_t one = held(f);
    assert_true(one > 0);
    f->d.sched.max_bytes_uid = one + one / 2;
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"exec\",\"code\":\"'bbbb'\"}");
    cJSON *r = expect_error(f, "3", "busy");
    char want[200];
    snprintf(want, sizeof(want),
             "pyfenced already holds %llu bytes for uid %u (max_bytes_per_uid %llu",
             (unsigned long long) one, (unsigned) getuid(),
             (unsigned long long) f->d.sched.max_bytes_uid);
    if (!strstr(error_message(r), want))
        fail_msg("'%s' lacks '%s'", error_message(r), want);
    cJSON *retry = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "retry_after_ms");
    assert_true(cJSON_IsNumber(retry) && retry->valuedouble >= SCHED_RETRY_MIN_MS);
    cJSON_Delete(r);
    assert_int_equal(f->d.sched.queued, 1);
    assert_int_equal(held(f), one);

    /* The uid now holds more than its bound: a ping is refused too... */
    f->d.sched.max_bytes_uid = one - 1;
    send_frame(f->client.fd, "{\"id\":4,\"op\":\"ping\"}");
    r = expect_error(f, "4", "busy");
    assert_non_null(strstr(error_message(r), "max_bytes_per_uid"));
    assert_true(
            cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "retry_after_ms")));
    cJSON_Delete(r);
    /* ...but not a cancel, which frees what the queued exec held. */
    send_frame(f->client.fd, "{\"id\":5,\"op\":\"cancel\",\"target\":2}");
    cJSON_Delete(expect_error(f, "2", "cancelled"));
    cJSON_Delete(expect_ok(f, "5"));
    assert_int_equal(held(f), 0);
    send_frame(f->client.fd, "{\"id\":6,\"op\":\"ping\"}");
    cJSON_Delete(expect_ok(f, "6"));
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    cJSON_Delete(expect_ok(f, "1"));
}

/* A session.open waiting for a worker holds its frame (variables included) for its uid until
 * its worker is forked. */
static void
test_waiting_open_counts_until_it_starts(void **state)
{
    struct fx *f = *state;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"x\"}");
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"session.open\",\"variables\":{\"big\":\""
                             "0123456789012345678901234567890123456789\"}}");
    pump(f, 20);
    assert_int_equal(f->d.sched.queued, 1);
    uint64_t open = held(f);
    assert_true(open > 100);
    struct session *s = pf_container_of(f->d.sessions.all.next, struct session, link);
    assert_int_equal(open, session_frame_bytes(s->req.frame));
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    cJSON_Delete(expect_ok(f, "1"));
    end_worker(f, job, 0, 0, false, 0);
    for (int i = 0; i < 1000 && fake.last_job == job; i++)
        pump(f, 1);
    assert_true(fake.last_job > job);
    assert_int_equal(held(f), 0);
    f->worker.fd = fake.worker_fd[fake.last_job];
    f->worker.len = 0;
    cJSON_Delete(recv_frame(f, &f->worker, 2000));
    send_frame(f->worker.fd, "{\"event\":\"ready\"}");
    cJSON_Delete(expect_ok(f, "2"));
}

/* Requests waiting for their session's worker hold their frames for the uid: each is released
 * when it is cancelled, goes to the worker, or is answered at the session's close; one that
 * would take the uid past max_bytes_per_uid is refused busy. */
static void
test_waiting_session_requests_count(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    assert_int_equal(held(f), 0);
    send_exec(f, 2, sid, "x");
    expect_run(f, "x");
    assert_int_equal(held(f), 0); /* the one the worker runs is not waiting */
    send_exec(f, 3, sid, "'waits'");
    send_fmt(f->client.fd,
             "{\"id\":4,\"op\":\"session.get\",\"session\":\"%s\",\"names\":[\"a\",\"b\"]}", sid);
    pump(f, 20);
    struct pf_error *err = NULL;
    struct session *s = session_find(&f->d.sessions, sid, getuid(), &err);
    assert_non_null(s);
    assert_int_equal(s->n_pending, 2);
    struct session_req *r3 = pf_container_of(s->pending.next, struct session_req, link);
    struct session_req *r4 = pf_container_of(r3->link.next, struct session_req, link);
    assert_int_equal(r3->bytes, session_frame_bytes(r3->frame));
    assert_int_equal(r4->bytes, session_frame_bytes(r4->frame) + session_frame_bytes(r4->names));
    uint64_t get_bytes = r4->bytes;
    assert_int_equal(held(f), r3->bytes + r4->bytes);

    /* Over the bound: refused, and nothing is added. */
    f->d.sched.max_bytes_uid = held(f) + 10;
    send_exec(f, 5, sid, "'this one does not fit'");
    cJSON *r = expect_error(f, "5", "busy");
    assert_non_null(strstr(error_message(r), "max_bytes_per_uid"));
    assert_true(
            cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "retry_after_ms")));
    cJSON_Delete(r);
    assert_int_equal(s->n_pending, 2);
    /* The same for all uids together (max_bytes), with the uid within its own bound. */
    f->d.sched.max_bytes_uid = f->d.sched.max_bytes;
    f->d.sched.max_bytes = held(f) + 10;
    send_exec(f, 50, sid, "'this one does not fit'");
    r = expect_error(f, "50", "busy");
    assert_non_null(strstr(error_message(r), "for all uids together (max_bytes"));
    cJSON_Delete(r);
    assert_int_equal(s->n_pending, 2);
    f->d.sched.max_bytes = f->d.sched.max_bytes_uid;

    /* Cancelled: released. */
    send_frame(f->client.fd, "{\"id\":6,\"op\":\"cancel\",\"target\":3}");
    cJSON_Delete(expect_error(f, "3", "cancelled"));
    cJSON_Delete(expect_ok(f, "6"));
    assert_int_equal(held(f), get_bytes);
    /* Its turn: the get goes to the worker, released. */
    send_result(f, 7);
    cJSON_Delete(expect_ok(f, "2"));
    cJSON *get = recv_frame(f, &f->worker, 2000);
    assert_string_equal(cJSON_GetObjectItem(get, "op")->valuestring, "get");
    cJSON_Delete(get);
    assert_int_equal(held(f), 0);
    /* One more waits; the session's close answers it and releases it. */
    send_exec(f, 7, sid, "'at close'");
    pump(f, 20);
    assert_true(held(f) > 0);
    send_fmt(f->client.fd, "{\"id\":8,\"op\":\"session.close\",\"session\":\"%s\"}", sid);
    cJSON_Delete(expect_error(f, "7", "cancelled"));
    cJSON_Delete(expect_error(f, "4", "cancelled")); /* the get its worker had */
    cJSON_Delete(expect_ok(f, "8"));
    assert_int_equal(held(f), 0);
}

/* ---- max_inflight --------------------------------------------------------------------------- */

static void
tune_three_inflight(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_MAX_INFLIGHT] = 3;
}

/* The next n frames for the client are failure replies with the code `code`, their ids (JSON
 * integers) those of `ids`, in any order. */
static void
expect_errors_any_order(struct fx *f, const int *ids, size_t n, const char *code)
{
    bool seen[8] = {false};
    assert_true(n <= PF_ELEMENTSOF(seen));
    for (size_t k = 0; k < n; k++) {
        cJSON *r = recv_frame(f, &f->client, 2000);
        if (!r)
            fail_msg("no reply (expected %zu more %s)", n - k, code);
        const cJSON *id = cJSON_GetObjectItem(r, "id");
        assert_true(cJSON_IsNumber(id));
        size_t i = 0;
        while (i < n && ids[i] != id->valueint)
            i++;
        if (i == n || seen[i])
            fail_msg("unexpected reply to id %d (%s)", id->valueint, error_message(r));
        seen[i] = true;
        assert_string_equal(
                cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "code")->valuestring, code);
        cJSON_Delete(r);
    }
}

/* A client with max_inflight requests in flight can still end them: cancel and session.close
 * are not refused busy by max_inflight (as they are not by max_bytes_per_uid), since they only
 * free what is held; any other request is. */
static void
test_cancel_and_close_past_max_inflight(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    send_exec(f, 2, sid, "x");
    expect_run(f, "x");
    send_exec(f, 3, sid, "'waits'");
    send_exec(f, 4, sid, "'waits too'");
    pump(f, 20);
    assert_int_equal(first_conn(f)->inflight, 3);

    send_frame(f->client.fd, "{\"id\":5,\"op\":\"ping\"}");
    cJSON *r = expect_error(f, "5", "busy");
    assert_non_null(strstr(error_message(r), "max_inflight"));
    cJSON_Delete(r);

    send_frame(f->client.fd, "{\"id\":6,\"op\":\"cancel\",\"target\":3}");
    cJSON_Delete(expect_error(f, "3", "cancelled"));
    r = expect_ok(f, "6");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "cancelled")));
    cJSON_Delete(r);

    send_exec(f, 7, sid, "'waits as well'");
    pump(f, 20);
    assert_int_equal(first_conn(f)->inflight, 3);
    send_fmt(f->client.fd, "{\"id\":8,\"op\":\"session.close\",\"session\":\"%s\"}", sid);
    const int ended[] = {2, 4, 7};
    expect_errors_any_order(f, ended, PF_ELEMENTSOF(ended), "cancelled");
    cJSON_Delete(expect_ok(f, "8"));
    assert_int_equal(first_conn(f)->inflight, 0);
}

#define T(fn)        cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TW(fn, tune) cmocka_unit_test_setup_teardown(fn, setup_##tune, teardown)

static int
setup_two_conns(void **s)
{
    return setup_with(s, tune_two_conns);
}
static int
setup_one_worker(void **s)
{
    return setup_with(s, tune_one_worker);
}
static int
setup_three_inflight(void **s)
{
    return setup_with(s, tune_three_inflight);
}

int
main(void)
{
    pf_log_init(PF_LOG_CRIT, "test_conn_budget");
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
            TW(test_busy_at_max_connections_per_uid, two_conns),
            TW(test_refusal_warning_rate_limited, two_conns),
            T(test_not_read_while_replies_unread),
            T(test_frame_being_received_counts),
            TW(test_queued_exec_counts_until_it_starts, one_worker),
            TW(test_busy_past_max_bytes_per_uid, one_worker),
            T(test_busy_past_max_bytes_all_uids),
            T(test_unread_replies_bounded_per_uid),
            T(test_unread_replies_bounded_all_uids),
            TW(test_waiting_open_counts_until_it_starts, one_worker),
            T(test_waiting_session_requests_count),
            TW(test_cancel_and_close_past_max_inflight, three_inflight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
