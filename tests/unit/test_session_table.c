/* The session table on its own (daemon/session.c, no daemon around it): ids, the owner check,
 * idle and lifetime expiry, the per-uid bound, the workers sessions may hold, and session.list.
 * The session ops through the daemon are test_session.c, their queues test_session_queue.c. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "pf_cleanup.h"
#include "pf_error.h"
#include "session.h"

struct table_fx {
    uv_loop_t loop;
    struct sched sched; /* counts the sessions of each uid; starts nothing here */
    struct session_table t;
    struct policy_limits limits;
    int expired;
    enum session_end why;
    uint64_t expired_at;
};

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
    struct session *s =
            session_new(&f->t, &(struct policy_peer){.uid = uid}, "default", &f->limits, &err);
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
    /* Margins of 200 ms and more: a loaded test machine stalls a process for tens of ms. */
    f->limits.v[POLICY_LIMIT_SESSION_IDLE_TIMEOUT_MS] = 450;
    struct session *s = new_session(f, 1000);
    s->state = SESSION_IDLE;
    uint64_t t0 = uv_now(&f->loop);
    session_touch_idle(s);
    run_for(f, 240);
    assert_int_equal(f->expired, 0);
    /* A request running holds the idle time off, however long it takes. */
    s->state = SESSION_BUSY;
    session_touch_busy(s);
    run_for(f, 600);
    assert_int_equal(f->expired, 0);
    /* It counts again from the end of the request. */
    s->state = SESSION_IDLE;
    session_touch_idle(s);
    uint64_t idle_from = uv_now(&f->loop);
    run_for(f, 240);
    assert_int_equal(f->expired, 0);
    run_for(f, 450);
    assert_int_equal(f->expired, 1);
    assert_int_equal(f->why, SESSION_END_IDLE);
    assert_true(f->expired_at >= idle_from + 450);
    assert_true(f->expired_at > t0 + 840);
    assert_int_equal(f->t.n, 0);
}

static void
test_lifetime(void **state)
{
    struct table_fx *f = *state;
    f->limits.v[POLICY_LIMIT_SESSION_IDLE_TIMEOUT_MS] = 300;
    f->limits.v[POLICY_LIMIT_SESSION_LIFETIME_MS] = 750;
    struct session *s = new_session(f, 1000);
    s->state = SESSION_IDLE;
    uint64_t t0 = s->created_at;
    /* Used every 90 ms: never idle for 300 ms, yet it ends at its lifetime. */
    for (int i = 0; i < 20 && f->expired == 0; i++) {
        session_touch_idle(s);
        run_for(f, 90);
    }
    assert_int_equal(f->expired, 1);
    assert_int_equal(f->why, SESSION_END_LIFETIME);
    assert_true(f->expired_at >= t0 + 750);
    assert_true(f->expired_at < t0 + 1200);
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
    assert_null(
            session_new(&f->t, &(struct policy_peer){.uid = 1000}, "default", &f->limits, &err));
    assert_int_equal(err->code, PF_E_BUSY);
    assert_string_equal(err->msg, "uid 1000 already has 2 open sessions (max_sessions_per_uid "
                                  "2); close one first");
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
    assert_null(session_new(&f->t, &(struct policy_peer){.uid = 1002}, "strict", &f->limits, &err));
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
    assert_null(
            session_new(&f->t, &(struct policy_peer){.uid = 1003}, "default", &f->limits, &err));
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
    assert_null(
            session_new(&f->t, &(struct policy_peer){.uid = 1004}, "default", &f->limits, &err));
    err = pf_error_free(err);
    /* An ended one frees its place too. */
    session_unlink(a, SESSION_END_CLOSE);
    session_maybe_release(a);
    new_session(f, 1004);
    /* A single worker goes to whoever asks first. */
    f->sched.max_workers = 1;
    assert_null(
            session_new(&f->t, &(struct policy_peer){.uid = 1005}, "default", &f->limits, &err));
    assert_string_equal(err->msg, "sessions already hold their share of the workers: 3 of "
                                  "max_workers 1 (0 kept for ephemeral execs); try again when a "
                                  "session ends");
    pf_error_free(err);
}

/* One uid's sessions hold at most max_session_workers_per_uid workers (by default half of what
 * sessions may hold): the review's attack, one uid opening detached sessions until refused,
 * leaves room for another uid's session.open. A lost session of the uid holds none. */
static void
test_session_share_per_uid(void **state)
{
    struct table_fx *f = *state;
    /* The daemon's defaults on 2 cores: 8 workers, 6 for sessions, 3 of them per uid. */
    sched_finish(&f->sched);
    f->limits.v[POLICY_LIMIT_MAX_WORKERS] = 8;
    f->limits.v[POLICY_LIMIT_MAX_SESSION_WORKERS_PER_UID] = 0;
    sched_init(&f->sched, &f->limits, no_start, NULL);
    assert_int_equal(f->sched.max_session_workers_uid, 3);
    struct session *a[6] = {NULL};
    struct pf_error *err = NULL;
    unsigned opened = 0;
    for (unsigned i = 0; i < 6; i++) {
        a[i] = session_new(&f->t, &(struct policy_peer){.uid = 1001}, "default", &f->limits, &err);
        if (a[i])
            opened++;
    }
    assert_int_equal(opened, 3);
    assert_int_equal(err->code, PF_E_BUSY);
    assert_string_equal(err->msg, "the sessions of uid 1001 already hold 3 of the session "
                                  "workers (max_session_workers_per_uid 3; the others are left "
                                  "for other uids); close one first");
    err = pf_error_free(err);
    assert_int_equal(session_count_holding_uid(&f->t, 1001), 3);
    /* Another uid still opens one. */
    struct session *b = new_session(f, 1002);
    assert_int_equal(session_count_holding_uid(&f->t, 1002), 1);
    assert_int_equal(session_count_holding(&f->t), 4);
    /* A lost session's worker is gone: the uid may open another in its place. */
    a[0]->state = SESSION_LOST;
    assert_int_equal(session_count_holding_uid(&f->t, 1001), 2);
    new_session(f, 1001);
    /* An operator's explicit value is the bound. */
    f->sched.max_session_workers_uid = 1;
    assert_null(
            session_new(&f->t, &(struct policy_peer){.uid = 1002}, "default", &f->limits, &err));
    assert_string_equal(err->msg, "the sessions of uid 1002 already hold 1 of the session "
                                  "workers (max_session_workers_per_uid 1; the others are left "
                                  "for other uids); close one first");
    err = pf_error_free(err);
    session_unlink(b, SESSION_END_CLOSE);
    session_maybe_release(b);
    new_session(f, 1002);
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

int
main(void)
{
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
            cmocka_unit_test_setup_teardown(test_session_share_per_uid, table_setup,
                                            table_teardown),
            cmocka_unit_test_setup_teardown(test_list_own_only, table_setup, table_teardown),
    };
    return cmocka_run_group_tests_name("session table", table, NULL, NULL);
}
