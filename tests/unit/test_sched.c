/* The scheduler on its own: round-robin order across uids, the per-uid cap on running jobs,
 * the queue bounds with retry_after_ms, a cancelled queued job that never starts, a start that
 * fails, the derived max_workers and the stats. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "pf_cleanup.h"
#include "scheduler.h"

#define MAX_JOBS 64

struct job {
    struct sched_entry e;
    int tag;
};

struct fake {
    struct sched s;
    int slots;    /* workers the start callback may still hand out */
    int fail_tag; /* a job with this tag fails to start */
    int order[MAX_JOBS];
    int n_started;
    int n_jobs;
    struct job jobs[MAX_JOBS];
};

static enum sched_start
start_cb(void *ctx, struct sched_entry *e)
{
    struct fake *f = ctx;
    struct job *j = pf_container_of(e, struct job, e);
    assert_int_equal(e->state, SCHED_RUNNING);
    if (j->tag == f->fail_tag) {
        sched_done(&f->s, e, -1);
        return SCHED_FAILED;
    }
    if (f->slots == 0)
        return SCHED_NO_SLOT;
    f->slots--;
    f->order[f->n_started++] = j->tag;
    return SCHED_STARTED;
}

static struct fake *
fake_new(int max_queued, int max_queued_uid, int max_running_uid, int max_workers)
{
    struct fake *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    struct policy_limits l;
    policy_limits_init_defaults(&l);
    l.v[POLICY_LIMIT_MAX_QUEUED] = max_queued;
    l.v[POLICY_LIMIT_MAX_QUEUED_PER_UID] = max_queued_uid;
    l.v[POLICY_LIMIT_MAX_JOBS_PER_UID] = max_running_uid;
    l.v[POLICY_LIMIT_MAX_WORKERS] = max_workers;
    sched_init(&f->s, &l, start_cb, f);
    f->fail_tag = -1;
    return f;
}

static void
fake_free(struct fake *f)
{
    /* Every record went away with its last job. */
    assert_int_equal(f->s.n_uids, 0);
    assert_int_equal(f->s.queued, 0);
    assert_int_equal(f->s.running, 0);
    sched_finish(&f->s);
    free(f);
}

/* Submits a job tagged `tag` for uid; returns its errno-style result. */
static int
submit(struct fake *f, uid_t uid, int tag, bool startable)
{
    assert_true(f->n_jobs < MAX_JOBS);
    struct job *j = &f->jobs[f->n_jobs++];
    j->tag = tag;
    uint32_t retry = 0;
    const char *why = NULL;
    return sched_submit(&f->s, &j->e, uid, startable, &retry, &why);
}

static struct job *
job_by_tag(struct fake *f, int tag)
{
    for (int i = 0; i < f->n_jobs; i++)
        if (f->jobs[i].tag == tag)
            return &f->jobs[i];
    fail_msg("no job %d", tag);
    return NULL;
}

static void
finish_all(struct fake *f)
{
    for (int i = 0; i < f->n_jobs; i++)
        sched_done(&f->s, &f->jobs[i].e, 1.0);
}

static void
test_round_robin_across_uids(void **state)
{
    (void) state;
    struct fake *f = fake_new(100, 100, 100, 8);
    /* uid 1 floods first, then 2 and 3 arrive: no worker is free meanwhile. */
    for (int i = 0; i < 5; i++)
        assert_int_equal(submit(f, 1, 10 + i, false), 0);
    assert_int_equal(submit(f, 2, 20, false), 0);
    assert_int_equal(submit(f, 2, 21, false), 0);
    assert_int_equal(submit(f, 3, 30, false), 0);
    sched_pump(&f->s);
    assert_int_equal(f->n_started, 0);
    assert_int_equal(f->s.queued, 8);

    /* Workers free up one at a time: each uid gets its turn, in the order it came. */
    static const int expect[] = {10, 20, 30, 11, 21, 12, 13, 14};
    for (size_t i = 0; i < PF_ELEMENTSOF(expect); i++) {
        f->slots = 1;
        sched_pump(&f->s);
        assert_int_equal(f->n_started, (int) i + 1);
        assert_int_equal(f->order[i], expect[i]);
    }
    assert_int_equal(f->s.queued, 0);
    assert_int_equal(f->s.running, 8);
    finish_all(f);
    fake_free(f);
}

static void
test_flooder_waits_its_turn(void **state)
{
    (void) state;
    struct fake *f = fake_new(100, 100, 100, 2);
    for (int i = 0; i < 20; i++)
        assert_int_equal(submit(f, 1, 100 + i, false), 0);
    f->slots = 2;
    sched_pump(&f->s);
    assert_int_equal(f->n_started, 2);
    /* A second uid arrives behind 18 queued jobs: it is next, not 19th. */
    assert_int_equal(submit(f, 2, 200, false), 0);
    sched_done(&f->s, &job_by_tag(f, 100)->e, 5.0);
    f->slots = 1;
    sched_pump(&f->s);
    assert_int_equal(f->order[2], 200);
    finish_all(f);
    fake_free(f);
}

static void
test_per_uid_running_cap(void **state)
{
    (void) state;
    struct fake *f = fake_new(100, 100, 2, 8);
    f->slots = 8;
    for (int i = 0; i < 4; i++)
        assert_int_equal(submit(f, 1, 10 + i, true), 0);
    sched_pump(&f->s);
    assert_int_equal(f->n_started, 2);
    struct sched_uid *u = sched_uid_find(&f->s, 1);
    assert_non_null(u);
    assert_int_equal(u->running, 2);
    assert_int_equal(u->queued, 2);
    /* Another uid is not held back by the first one's cap. */
    assert_int_equal(submit(f, 2, 20, true), 0);
    sched_pump(&f->s);
    assert_int_equal(f->n_started, 3);
    assert_int_equal(f->order[2], 20);
    /* One of uid 1's jobs ends: its next one starts. */
    sched_done(&f->s, &job_by_tag(f, 10)->e, 3.0);
    sched_pump(&f->s);
    assert_int_equal(f->n_started, 4);
    assert_int_equal(f->order[3], 12);
    assert_int_equal(u->running, 2);
    finish_all(f);
    fake_free(f);
}

static void
test_queue_bounds_and_retry_after(void **state)
{
    (void) state;
    struct fake *f = fake_new(4, 2, 8, 4);
    struct job extra = {.tag = 99};
    uint32_t retry = 0;
    const char *why = NULL;

    assert_int_equal(submit(f, 1, 10, false), 0);
    assert_int_equal(submit(f, 1, 11, false), 0);
    assert_int_equal(sched_submit(&f->s, &extra.e, 1, false, &retry, &why), -EBUSY);
    assert_string_equal(why, "max_queued_per_uid");
    assert_true(retry >= SCHED_RETRY_MIN_MS && retry <= SCHED_RETRY_MAX_MS);
    assert_int_equal(extra.e.state, SCHED_NONE);
    assert_int_equal(submit(f, 2, 20, false), 0);

    /* The estimate follows how long jobs hold their workers: 400 ms jobs on 4 workers free a
     * queue place about every 100 ms; the per-uid bound also waits for every ready uid's turn
     * (two here, plus its own). */
    f->s.avg_run_ms = 400;
    assert_int_equal(sched_submit(&f->s, &extra.e, 1, false, &retry, &why), -EBUSY);
    assert_string_equal(why, "max_queued_per_uid");
    assert_int_equal(retry, 300);

    assert_int_equal(submit(f, 3, 30, false), 0);
    assert_int_equal(sched_submit(&f->s, &extra.e, 4, true, &retry, &why), -EBUSY);
    assert_string_equal(why, "max_queued");
    assert_int_equal(retry, 100);
    /* A refused uid leaves no record behind. */
    assert_null(sched_uid_find(&f->s, 4));
    f->s.avg_run_ms = 1e9;
    assert_int_equal(sched_submit(&f->s, &extra.e, 4, false, &retry, &why), -EBUSY);
    assert_int_equal(retry, SCHED_RETRY_MAX_MS);

    /* A place frees up: admitted again. */
    f->slots = 1;
    sched_pump(&f->s);
    assert_int_equal(submit(f, 4, 40, false), 0);
    f->slots = 10;
    sched_pump(&f->s);
    assert_int_equal(f->n_started, 5);
    finish_all(f);
    fake_free(f);
}

static void
test_no_queue_still_starts_what_can_start(void **state)
{
    (void) state;
    struct fake *f = fake_new(0, 0, 8, 4);
    f->slots = 1;
    assert_int_equal(submit(f, 1, 10, true), 0);
    sched_pump(&f->s);
    assert_int_equal(f->n_started, 1);
    /* No worker free and no queue: busy at once. */
    assert_int_equal(submit(f, 1, 11, false), -EBUSY);
    finish_all(f);
    fake_free(f);
}

static void
test_cancelled_queued_job_never_starts(void **state)
{
    (void) state;
    struct fake *f = fake_new(100, 100, 100, 4);
    assert_int_equal(submit(f, 1, 10, false), 0);
    assert_int_equal(submit(f, 1, 11, false), 0);
    assert_int_equal(submit(f, 2, 20, false), 0);
    sched_done(&f->s, &job_by_tag(f, 11)->e, -1);
    sched_done(&f->s, &job_by_tag(f, 20)->e, -1);
    assert_int_equal(job_by_tag(f, 11)->e.state, SCHED_NONE);
    /* uid 2 had nothing else: its record is gone. */
    assert_null(sched_uid_find(&f->s, 2));
    assert_int_equal(f->s.queued, 1);
    f->slots = 10;
    sched_pump(&f->s);
    assert_int_equal(f->n_started, 1);
    assert_int_equal(f->order[0], 10);
    finish_all(f);
    fake_free(f);
}

static void
test_failed_start_moves_on(void **state)
{
    (void) state;
    struct fake *f = fake_new(100, 100, 100, 4);
    f->fail_tag = 10;
    assert_int_equal(submit(f, 1, 10, false), 0);
    assert_int_equal(submit(f, 1, 11, false), 0);
    f->slots = 10;
    sched_pump(&f->s);
    assert_int_equal(f->n_started, 1);
    assert_int_equal(f->order[0], 11);
    assert_int_equal(f->s.running, 1);
    finish_all(f);
    fake_free(f);
}

static void
test_peers_and_stats(void **state)
{
    (void) state;
    struct fake *f = fake_new(100, 100, 100, 4);
    assert_int_equal(sched_peer_attach(&f->s, 1000), 0);
    assert_int_equal(sched_peer_attach(&f->s, 1000), 0);
    assert_int_equal(sched_peer_attach(&f->s, 7), 0);
    assert_int_equal(f->s.peers, 2);
    assert_int_equal(submit(f, 1000, 1, false), 0);
    assert_int_equal(submit(f, 5, 2, false), 0);

    cJSON *st = sched_stats_json(&f->s);
    assert_non_null(st);
    assert_int_equal(cJSON_GetObjectItem(st, "queued")->valuedouble, 2);
    assert_int_equal(cJSON_GetObjectItem(st, "peers")->valuedouble, 2);
    cJSON *uids = cJSON_GetObjectItem(st, "uids");
    assert_int_equal(cJSON_GetArraySize(uids), 3);
    /* Sorted by uid. */
    cJSON *u0 = cJSON_GetArrayItem(uids, 0), *u2 = cJSON_GetArrayItem(uids, 2);
    assert_int_equal(cJSON_GetObjectItem(u0, "uid")->valuedouble, 5);
    assert_int_equal(cJSON_GetObjectItem(u0, "queued")->valuedouble, 1);
    assert_int_equal(cJSON_GetObjectItem(u2, "uid")->valuedouble, 1000);
    assert_int_equal(cJSON_GetObjectItem(u2, "conns")->valuedouble, 2);
    assert_int_equal(cJSON_GetObjectItem(u2, "jobs")->valuedouble, 1);
    cJSON_Delete(st);

    finish_all(f);
    sched_peer_detach(&f->s, 1000);
    assert_int_equal(f->s.peers, 2);
    sched_peer_detach(&f->s, 1000);
    sched_peer_detach(&f->s, 7);
    sched_peer_detach(&f->s, 7); /* unbalanced: ignored */
    assert_int_equal(f->s.peers, 0);
    fake_free(f);
}

/* A uid whose only state is a detached session (no connection, no job) keeps its record, and
 * with it its counters and its line in the stats, until the session ends. */
static void
test_session_keeps_the_uid_record(void **state)
{
    (void) state;
    struct fake *f = fake_new(100, 100, 100, 4);
    assert_int_equal(sched_peer_attach(&f->s, 1000), 0);
    assert_int_equal(submit(f, 1000, 1, false), 0);
    assert_int_equal(sched_session_attach(&f->s, 1000), 0);
    finish_all(f);
    sched_peer_detach(&f->s, 1000);

    struct sched_uid *u = sched_uid_find(&f->s, 1000);
    assert_non_null(u);
    assert_int_equal(u->sessions, 1);
    assert_int_equal(u->conns, 0);
    assert_int_equal(u->jobs, 1);
    cJSON *st = sched_stats_json(&f->s);
    assert_non_null(st);
    cJSON *uids = cJSON_GetObjectItem(st, "uids");
    assert_int_equal(cJSON_GetArraySize(uids), 1);
    cJSON *u0 = cJSON_GetArrayItem(uids, 0);
    assert_int_equal(cJSON_GetObjectItem(u0, "uid")->valuedouble, 1000);
    assert_int_equal(cJSON_GetObjectItem(u0, "sessions")->valuedouble, 1);
    assert_int_equal(cJSON_GetObjectItem(u0, "jobs")->valuedouble, 1);
    cJSON_Delete(st);

    sched_session_detach(&f->s, 1000);
    assert_null(sched_uid_find(&f->s, 1000));
    sched_session_detach(&f->s, 1000); /* unbalanced: ignored */
    fake_free(f);
}

/* Sessions may hold all workers but a quarter (at least one): those stay for ephemeral execs. */
static void
test_session_capacity(void **state)
{
    (void) state;
    static const unsigned want[][2] = {{1, 1}, {2, 1}, {3, 2},   {4, 3},
                                       {7, 6}, {8, 6}, {16, 12}, {4096, 3072}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (sched_session_capacity(want[i][0]) != want[i][1])
            fail_msg("max_workers %u: sessions may hold %u, want %u", want[i][0],
                     sched_session_capacity(want[i][0]), want[i][1]);
}

static void
test_derived_limits(void **state)
{
    (void) state;
    const uint64_t gib = 1024ULL * 1024 * 1024;
    assert_int_equal(sched_default_workers(2, 23 * gib), 8);
    assert_int_equal(sched_default_workers(1, 64 * gib), 4);
    assert_int_equal(sched_default_workers(64, 8 * gib), 16); /* memory bound */
    assert_int_equal(sched_default_workers(8, 1 * gib), 4);   /* never below 4 */
    struct policy_limits l;
    policy_limits_init_defaults(&l);
    assert_int_equal(l.v[POLICY_LIMIT_MAX_WORKERS], 0);
    sched_derive_limits(&l);
    assert_true(l.v[POLICY_LIMIT_MAX_WORKERS] >= 4);
    assert_int_equal(l.v[POLICY_LIMIT_MAX_JOBS_PER_UID], l.v[POLICY_LIMIT_MAX_WORKERS]);
    l.v[POLICY_LIMIT_MAX_WORKERS] = 6;
    l.v[POLICY_LIMIT_MAX_JOBS_PER_UID] = 2;
    sched_derive_limits(&l);
    assert_int_equal(l.v[POLICY_LIMIT_MAX_WORKERS], 6);
    assert_int_equal(l.v[POLICY_LIMIT_MAX_JOBS_PER_UID], 2);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_round_robin_across_uids),
            cmocka_unit_test(test_flooder_waits_its_turn),
            cmocka_unit_test(test_per_uid_running_cap),
            cmocka_unit_test(test_queue_bounds_and_retry_after),
            cmocka_unit_test(test_no_queue_still_starts_what_can_start),
            cmocka_unit_test(test_cancelled_queued_job_never_starts),
            cmocka_unit_test(test_failed_start_moves_on),
            cmocka_unit_test(test_peers_and_stats),
            cmocka_unit_test(test_session_keeps_the_uid_record),
            cmocka_unit_test(test_session_capacity),
            cmocka_unit_test(test_derived_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
