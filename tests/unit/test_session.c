/* Sessions. The table on its own (ids, the owner check, idle and lifetime expiry, the per-uid
 * bound), then the daemon's session ops on a real uv loop with conn_fixture.c's fake zygote:
 * the test plays the client and the session's worker over socketpairs. Then the queues: requests
 * to one session wait their turn (in order, bounded, cancellable, answered when the session is
 * lost or closed), and a session.open waits in the scheduler's queue when no worker is free. */
#include <ctype.h>
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
#include "pf_cleanup.h"
#include "pf_error.h"
#include "session.h"

/* ---- the table ------------------------------------------------------------------------- */

struct table_fx {
    uv_loop_t loop;
    struct sched sched; /* counts the sessions of each uid; starts nothing here */
    struct session_table t;
    struct policy_limits limits;
    int expired;
    enum session_end why;
    uint64_t expired_at;
};

/* job_outcome_from_exit's words for a worker that died of SIGSEGV. */
#define SEGV_CAUSE                                                                                 \
    "worker killed by signal SIGSEGV: a crash in C code, most often its C stack overflowing on a " \
    "value nested too deep (README, Limitations)"

static struct table_fx *current;

/* What the daemon's expire callback does for a session without a worker. */
static void
on_expire(struct session *s, enum session_end why)
{
    current->expired++;
    current->why = why;
    current->expired_at = uv_now(&current->loop);
    session_unlink(s, why);
    session_maybe_release(s);
}

static enum sched_start
no_start(void *ctx, struct sched_entry *e)
{
    fail_msg("the table's tests submit nothing to the scheduler");
    return SCHED_FAILED;
}

static int
table_setup(void **state)
{
    struct table_fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    policy_limits_init_defaults(&f->limits);
    /* Room for many sessions: test_session_capacity narrows it. */
    f->limits.v[POLICY_LIMIT_MAX_WORKERS] = 4096;
    sched_init(&f->sched, &f->limits, no_start, NULL);
    session_table_init(&f->t, &f->loop, &f->sched, on_expire);
    current = f;
    *state = f;
    return 0;
}

static int
table_teardown(void **state)
{
    struct table_fx *f = *state;
    struct dlist *pos, *tmp;
    DLIST_FOREACH_SAFE(pos, tmp, &f->t.all) {
        struct session *s = pf_container_of(pos, struct session, link);
        session_unlink(s, SESSION_END_CLOSE);
        session_maybe_release(s);
    }
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_true(dlist_empty(&f->t.all));
    assert_true(dlist_empty(&f->t.ended));
    /* Every session ended, so no uid record is left. */
    assert_int_equal(f->sched.n_uids, 0);
    sched_finish(&f->sched);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    free(f);
    return 0;
}

static struct session *
new_session(struct table_fx *f, uid_t uid)
{
    struct pf_error *err = NULL;
    struct session *s = session_new(&f->t, uid, "default", &f->limits, &err);
    if (!s)
        fail_msg("session_new: %s", err->msg);
    return s;
}

static int
hexval(char c)
{
    return c <= '9' ? c - '0' : c - 'a' + 10;
}

static void
test_ids_unique_128_bits(void **state)
{
    struct table_fx *f = *state;
    enum { N = 64 };
    f->limits.v[POLICY_LIMIT_MAX_SESSIONS_PER_UID] = N;
    struct session *s[N];
    unsigned ones[128] = {0};
    for (int i = 0; i < N; i++) {
        s[i] = new_session(f, 1000);
        assert_int_equal(strlen(s[i]->id), SESSION_ID_LEN);
        assert_int_equal(SESSION_ID_LEN, 32);
        for (int k = 0; k < SESSION_ID_LEN; k++) {
            char c = s[i]->id[k];
            assert_true(isdigit((unsigned char) c) || (c >= 'a' && c <= 'f'));
            for (int b = 0; b < 4; b++)
                ones[k * 4 + b] += (hexval(c) >> b) & 1;
        }
        for (int j = 0; j < i; j++)
            assert_string_not_equal(s[i]->id, s[j]->id);
    }
    /* Every one of the 128 bits varies: the id is not a counter or a short random value
     * padded out (each check fails by chance with probability 2^-63). */
    for (int b = 0; b < 128; b++) {
        if (ones[b] == 0 || ones[b] == N)
            fail_msg("bit %d of the id never varies", b);
    }
    assert_int_equal(f->t.n, N);
}

static void
test_owner_check_is_not_found(void **state)
{
    struct table_fx *f = *state;
    struct session *s = new_session(f, 1001);
    struct pf_error *err = NULL;
    assert_ptr_equal(session_find(&f->t, s->id, 1001, &err), s);
    assert_null(err);

    /* Another uid, the right id. */
    struct pf_error *other = NULL;
    assert_null(session_find(&f->t, s->id, 1002, &other));
    /* The same uid, an id that does not exist (same length, same alphabet). */
    char missing[SESSION_ID_LEN + 1];
    memcpy(missing, s->id, sizeof(missing));
    missing[0] = missing[0] == 'a' ? 'b' : 'a';
    struct pf_error *none = NULL;
    assert_null(session_find(&f->t, missing, 1002, &none));

    assert_int_equal(other->code, PF_E_NOT_FOUND);
    assert_int_equal(none->code, PF_E_NOT_FOUND);
    char expect[128];
    snprintf(expect, sizeof(expect), "no session '%s'", s->id);
    assert_string_equal(other->msg, expect);
    snprintf(expect, sizeof(expect), "no session '%s'", missing);
    assert_string_equal(none->msg, expect);
    /* Word for word the same answer but for the id quoted back. */
    assert_int_equal(strlen(other->msg), strlen(none->msg));
    pf_error_free(other);
    pf_error_free(none);

    err = NULL;
    assert_null(session_find(&f->t, "not-hex", 1001, &err));
    assert_string_equal(err->msg, "no session 'not-hex'");
    pf_error_free(err);

    /* Ended: nobody finds it any more, not even its owner. */
    char id[SESSION_ID_LEN + 1];
    memcpy(id, s->id, sizeof(id));
    session_unlink(s, SESSION_END_CLOSE);
    session_maybe_release(s);
    err = NULL;
    assert_null(session_find(&f->t, id, 1001, &err));
    assert_int_equal(err->code, PF_E_NOT_FOUND);
    pf_error_free(err);
}

static void
run_for(struct table_fx *f, uint64_t ms)
{
    uint64_t end = uv_hrtime() + ms * 1000000;
    while (uv_hrtime() < end) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(1000);
    }
}

static void
test_idle_expiry(void **state)
{
    struct table_fx *f = *state;
    f->limits.v[POLICY_LIMIT_SESSION_IDLE_TIMEOUT_MS] = 150;
    struct session *s = new_session(f, 1000);
    s->state = SESSION_IDLE;
    uint64_t t0 = uv_now(&f->loop);
    session_touch_idle(s);
    run_for(f, 80);
    assert_int_equal(f->expired, 0);
    /* A request running holds the idle time off, however long it takes. */
    s->state = SESSION_BUSY;
    session_touch_busy(s);
    run_for(f, 200);
    assert_int_equal(f->expired, 0);
    /* It counts again from the end of the request. */
    s->state = SESSION_IDLE;
    session_touch_idle(s);
    uint64_t idle_from = uv_now(&f->loop);
    run_for(f, 100);
    assert_int_equal(f->expired, 0);
    run_for(f, 150);
    assert_int_equal(f->expired, 1);
    assert_int_equal(f->why, SESSION_END_IDLE);
    assert_true(f->expired_at >= idle_from + 150);
    assert_true(f->expired_at > t0 + 280);
    assert_int_equal(f->t.n, 0);
}

static void
test_lifetime(void **state)
{
    struct table_fx *f = *state;
    f->limits.v[POLICY_LIMIT_SESSION_IDLE_TIMEOUT_MS] = 100;
    f->limits.v[POLICY_LIMIT_SESSION_LIFETIME_MS] = 250;
    struct session *s = new_session(f, 1000);
    s->state = SESSION_IDLE;
    uint64_t t0 = s->created_at;
    /* Used every 30 ms: never idle for 100 ms, yet it ends at its lifetime. */
    for (int i = 0; i < 20 && f->expired == 0; i++) {
        session_touch_idle(s);
        run_for(f, 30);
    }
    assert_int_equal(f->expired, 1);
    assert_int_equal(f->why, SESSION_END_LIFETIME);
    assert_true(f->expired_at >= t0 + 250);
    assert_true(f->expired_at < t0 + 400);
}

static void
test_lifetime_ends_busy_session(void **state)
{
    struct table_fx *f = *state;
    f->limits.v[POLICY_LIMIT_SESSION_LIFETIME_MS] = 100;
    struct session *s = new_session(f, 1000);
    s->state = SESSION_BUSY;
    session_touch_busy(s);
    run_for(f, 200);
    assert_int_equal(f->expired, 1);
    assert_int_equal(f->why, SESSION_END_LIFETIME);
}

static void
test_max_per_uid(void **state)
{
    struct table_fx *f = *state;
    f->limits.v[POLICY_LIMIT_MAX_SESSIONS_PER_UID] = 2;
    struct session *a = new_session(f, 1000);
    new_session(f, 1000);
    struct pf_error *err = NULL;
    assert_null(session_new(&f->t, 1000, "default", &f->limits, &err));
    assert_int_equal(err->code, PF_E_BUSY);
    assert_string_equal(err->msg, "uid 1000 already has 2 open sessions (max_sessions_per_uid); "
                                  "close one first");
    err = pf_error_free(err);
    /* Another uid has its own count. */
    new_session(f, 1001);
    assert_int_equal(session_count_uid(&f->t, 1000), 2);
    assert_int_equal(session_count_uid(&f->t, 1001), 1);
    /* An ended session frees its place. */
    session_unlink(a, SESSION_END_CLOSE);
    session_maybe_release(a);
    new_session(f, 1000);
    /* A profile without sessions says so. */
    f->limits.v[POLICY_LIMIT_MAX_SESSIONS_PER_UID] = 0;
    assert_null(session_new(&f->t, 1002, "strict", &f->limits, &err));
    assert_int_equal(err->code, PF_E_PERMISSION);
    assert_string_equal(err->msg, "profile 'strict' allows no sessions (max_sessions_per_uid 0)");
    pf_error_free(err);
}

/* Sessions of all uids together hold at most sched_session_capacity(max_workers) workers, so
 * that ephemeral execs always have some; a lost session holds none and does not count. */
static void
test_session_capacity(void **state)
{
    struct table_fx *f = *state;
    f->sched.max_workers = 4; /* one kept back: three for sessions */
    struct session *a = new_session(f, 1000);
    new_session(f, 1001);
    struct session *c = new_session(f, 1002);
    assert_int_equal(session_count_holding(&f->t), 3);
    struct pf_error *err = NULL;
    assert_null(session_new(&f->t, 1003, "default", &f->limits, &err));
    assert_int_equal(err->code, PF_E_BUSY);
    assert_string_equal(err->msg, "sessions already hold their share of the workers: 3 of "
                                  "max_workers 4 (1 kept for ephemeral execs); try again when a "
                                  "session ends");
    err = pf_error_free(err);
    assert_int_equal(f->t.n, 3);
    assert_int_equal(session_count_uid(&f->t, 1003), 0);
    /* A lost session's worker is gone: its place is free before anyone asks about it. */
    c->state = SESSION_LOST;
    assert_int_equal(session_count_holding(&f->t), 2);
    new_session(f, 1003);
    assert_null(session_new(&f->t, 1004, "default", &f->limits, &err));
    err = pf_error_free(err);
    /* An ended one frees its place too. */
    session_unlink(a, SESSION_END_CLOSE);
    session_maybe_release(a);
    new_session(f, 1004);
    /* A single worker goes to whoever asks first. */
    f->sched.max_workers = 1;
    assert_null(session_new(&f->t, 1005, "default", &f->limits, &err));
    assert_string_equal(err->msg, "sessions already hold their share of the workers: 3 of "
                                  "max_workers 1 (0 kept for ephemeral execs); try again when a "
                                  "session ends");
    pf_error_free(err);
}

static void
test_list_own_only(void **state)
{
    struct table_fx *f = *state;
    struct session *mine = new_session(f, 1000);
    new_session(f, 1001);
    cJSON *list = session_list_json(&f->t, 1000);
    assert_int_equal(cJSON_GetArraySize(list), 1);
    cJSON *e = cJSON_GetArrayItem(list, 0);
    assert_string_equal(cJSON_GetObjectItem(e, "id")->valuestring, mine->id);
    assert_string_equal(cJSON_GetObjectItem(e, "profile")->valuestring, "default");
    assert_string_equal(cJSON_GetObjectItem(e, "state")->valuestring, "starting");
    assert_true(cJSON_GetObjectItem(e, "created")->valuedouble > 1.6e12);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(e, "last_used")));
    assert_int_equal(cJSON_GetObjectItem(e, "execs")->valueint, 0);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(e, "detached")));
    cJSON_Delete(list);
    list = session_list_json(&f->t, 4242);
    assert_int_equal(cJSON_GetArraySize(list), 0);
    cJSON_Delete(list);
}

/* ---- through the daemon --------------------------------------------------------------- */

static struct conn *
the_conn(struct fx *f)
{
    assert_false(dlist_empty(&f->d.conns));
    return pf_container_of(f->d.conns.next, struct conn, link);
}

static cJSON *
expect_ok(struct fx *f, const char *id_json)
{
    cJSON *r = recv_frame(f, &f->client, 3000);
    if (!r)
        fail_msg("no reply to %s", id_json);
    char *id = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "id"));
    char *all = cJSON_PrintUnformatted(r);
    if (strcmp(id, id_json) != 0 || !cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")))
        fail_msg("expected an ok reply to %s, got %s", id_json, all);
    free(id);
    free(all);
    return r;
}

/* session.open answered once the fake worker says ready; returns the job id of its worker
 * and copies the session id. */
static uint64_t
open_session(struct fx *f, const char *request, char id[SESSION_ID_LEN + 1])
{
    cJSON *first = NULL;
    uint64_t job = start_worker_of(f, request, &first);
    assert_string_equal(cJSON_GetObjectItem(first, "op")->valuestring, "session");
    assert_null(cJSON_GetObjectItem(first, "code"));
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(first, "imports")));
    cJSON *lim = cJSON_GetObjectItem(first, "limits");
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(lim, "timeout_ms")));
    cJSON_Delete(first);
    send_frame(f->worker.fd, "{\"event\":\"ready\"}");
    cJSON *r = expect_ok(f, "1");
    const char *sid = cJSON_GetObjectItem(r, "session")->valuestring;
    assert_int_equal(strlen(sid), SESSION_ID_LEN);
    memcpy(id, sid, SESSION_ID_LEN + 1);
    cJSON_Delete(r);
    return job;
}

static void send_fmt(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void
send_fmt(int fd, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    send_frame(fd, buf);
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

/* The worker's next frame is a `run` of this code. */
static void
expect_run(struct fx *f, const char *code)
{
    cJSON *run = recv_frame(f, &f->worker, 2000);
    assert_non_null(run);
    assert_string_equal(cJSON_GetObjectItem(run, "op")->valuestring, "run");
    assert_string_equal(cJSON_GetObjectItem(run, "code")->valuestring, code);
    cJSON_Delete(run);
}

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

static void
send_exec(struct fx *f, int id, const char *sid, const char *code)
{
    send_fmt(f->client.fd, "{\"id\":%d,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"%s\"}", id,
             sid, code);
}

static void
send_result(struct fx *f, int output)
{
    send_fmt(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\",\"output\":%d}", output);
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
    const struct CMUnitTest table[] = {
            cmocka_unit_test_setup_teardown(test_ids_unique_128_bits, table_setup, table_teardown),
            cmocka_unit_test_setup_teardown(test_owner_check_is_not_found, table_setup,
                                            table_teardown),
            cmocka_unit_test_setup_teardown(test_idle_expiry, table_setup, table_teardown),
            cmocka_unit_test_setup_teardown(test_lifetime, table_setup, table_teardown),
            cmocka_unit_test_setup_teardown(test_lifetime_ends_busy_session, table_setup,
                                            table_teardown),
            cmocka_unit_test_setup_teardown(test_max_per_uid, table_setup, table_teardown),
            cmocka_unit_test_setup_teardown(test_session_capacity, table_setup, table_teardown),
            cmocka_unit_test_setup_teardown(test_list_own_only, table_setup, table_teardown),
    };
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
            cmocka_unit_test_setup_teardown(test_requests_queue_in_order, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pending_limit, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pending_limit_zero, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pending_limit_tighten_only, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cancel_pending_request, setup, teardown),
            cmocka_unit_test_setup_teardown(test_lost_session_answers_pending, setup, teardown),
            cmocka_unit_test_setup_teardown(test_retired_worker_answers_pending, setup, teardown),
            cmocka_unit_test_setup_teardown(test_close_answers_pending, setup, teardown),
            cmocka_unit_test_setup_teardown(test_conn_close_drops_its_pending, setup, teardown),
            cmocka_unit_test_setup_teardown(test_conn_close_ends_attached_not_detached, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_conn_close_cancels_its_running_exec, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_cancel_grace_kill_loses_session, setup, teardown),
            cmocka_unit_test_setup_teardown(test_session_open_failures, setup, teardown),
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
    int r = cmocka_run_group_tests_name("session table", table, NULL, NULL);
    r |= cmocka_run_group_tests_name("sessions through the daemon", daemon_tests, NULL, NULL);
    return r | cmocka_run_group_tests_name("session.open in the queue", queue_tests, NULL, NULL);
}
