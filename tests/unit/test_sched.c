/* The scheduler on its own: round-robin order across uids, the per-uid cap on running jobs,
 * the queue bounds with retry_after_ms, a cancelled queued job that never starts, a start that
 * fails, the derived max_workers and the stats; the per-uid bounds on connections and on the
 * bytes held, whose counts return to zero once everything has left. */
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
    int skip_min; /* jobs tagged from here to skip_max are skipped (their zygote is down) */
    int skip_max;
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
    if (j->tag >= f->skip_min && j->tag <= f->skip_max)
        return SCHED_SKIP; /* before the slot, as pool.c asks about the zygote first */
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
    f->skip_min = 1;
    f->skip_max = 0;
    return f;
}

static void
fake_free(struct fake *f)
{
    /* Every record went away with its last job, and nothing is held for anyone. */
    assert_int_equal(f->s.n_uids, 0);
    assert_int_equal(f->s.bytes, 0);
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
    return sched_submit(&f->s, &j->e, uid, startable, 0, &retry, &why);
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

/* Entries that cannot start for a reason of their own (SCHED_SKIP: the zygote they need is
 * down) hold back neither the later entries of their uid nor other uids: those start, still
 * round robin, within the free slots. A uid all of whose entries are skipped keeps its place:
 * once they can start, it is served before the uids that were served meanwhile. */
static void
test_skipped_entries_do_not_block(void **state)
{
    (void) state;
    struct fake *f = fake_new(100, 100, 100, 8);
    f->skip_min = 100; /* tags 100..199: need the zygote that is down */
    f->skip_max = 199;
    assert_int_equal(submit(f, 1, 100, false), 0);
    assert_int_equal(submit(f, 1, 10, false), 0);
    assert_int_equal(submit(f, 1, 11, false), 0);
    assert_int_equal(submit(f, 2, 120, false), 0);
    assert_int_equal(submit(f, 2, 121, false), 0);
    assert_int_equal(submit(f, 3, 30, false), 0);
    assert_int_equal(submit(f, 3, 31, false), 0);
    f->slots = 3;
    sched_pump(&f->s);
    static const int first[] = {10, 30, 11};
    assert_int_equal(f->n_started, 3);
    for (size_t i = 0; i < PF_ELEMENTSOF(first); i++)
        assert_int_equal(f->order[i], first[i]);
    assert_int_equal(f->s.queued, 4);
    /* No slot left: the pump stops at the first entry it could start. */
    sched_pump(&f->s);
    assert_int_equal(f->n_started, 3);

    /* The zygote is back: uid 2, skipped all along, goes first, then round robin goes on
     * (uid 3 was served once meanwhile, uid 1 twice); each skipped entry kept its place in
     * its uid's queue. */
    f->skip_max = 0;
    static const int then[] = {120, 31, 100, 121};
    for (size_t i = 0; i < PF_ELEMENTSOF(then); i++) {
        f->slots = 1;
        sched_pump(&f->s);
        assert_int_equal(f->n_started, 4 + (int) i);
        assert_int_equal(f->order[3 + i], then[i]);
    }
    assert_int_equal(f->s.queued, 0);
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
    assert_int_equal(sched_submit(&f->s, &extra.e, 1, false, 0, &retry, &why), -EBUSY);
    assert_string_equal(why, "max_queued_per_uid");
    assert_true(retry >= SCHED_RETRY_MIN_MS && retry <= SCHED_RETRY_MAX_MS);
    assert_int_equal(extra.e.state, SCHED_NONE);
    assert_int_equal(submit(f, 2, 20, false), 0);

    /* The estimate follows how long jobs hold their workers: 400 ms jobs on 4 workers free a
     * queue place about every 100 ms; the per-uid bound also waits for every ready uid's turn
     * (two here, plus its own). */
    f->s.avg_run_ms = 400;
    assert_int_equal(sched_submit(&f->s, &extra.e, 1, false, 0, &retry, &why), -EBUSY);
    assert_string_equal(why, "max_queued_per_uid");
    assert_int_equal(retry, 300);

    assert_int_equal(submit(f, 3, 30, false), 0);
    assert_int_equal(sched_submit(&f->s, &extra.e, 4, true, 0, &retry, &why), -EBUSY);
    assert_string_equal(why, "max_queued");
    assert_int_equal(retry, 100);
    /* A refused uid leaves no record behind. */
    assert_null(sched_uid_find(&f->s, 4));
    f->s.avg_run_ms = 1e9;
    assert_int_equal(sched_submit(&f->s, &extra.e, 4, false, 0, &retry, &why), -EBUSY);
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
    assert_int_equal(sched_peer_attach(&f->s, 1000, NULL), 0);
    assert_int_equal(sched_peer_attach(&f->s, 1000, NULL), 0);
    assert_int_equal(sched_peer_attach(&f->s, 7, NULL), 0);
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

/* max_connections_per_uid: a uid at its cap is refused (and told how many it has), others are
 * not, root included; a closed connection makes room. */
static void
test_connections_per_uid(void **state)
{
    (void) state;
    struct fake *f = fake_new(100, 100, 100, 4);
    f->s.max_conns_uid = 2;
    unsigned conns = 99;
    for (uid_t uid = 0; uid <= 1; uid++) {
        assert_int_equal(sched_peer_attach(&f->s, uid, &conns), 0);
        assert_int_equal(conns, 0);
        assert_int_equal(sched_peer_attach(&f->s, uid, &conns), 0);
        assert_int_equal(conns, 1);
        assert_int_equal(sched_peer_attach(&f->s, uid, &conns), -EBUSY);
        assert_int_equal(conns, 2);
        assert_int_equal(sched_uid_find(&f->s, uid)->conns, 2);
    }
    /* Another uid is not held up by them. */
    assert_int_equal(sched_peer_attach(&f->s, 2, NULL), 0);
    assert_int_equal(f->s.peers, 3);
    sched_peer_detach(&f->s, 1);
    assert_int_equal(sched_peer_attach(&f->s, 1, &conns), 0);
    assert_int_equal(conns, 1);
    for (uid_t uid = 0; uid <= 1; uid++) {
        sched_peer_detach(&f->s, uid);
        sched_peer_detach(&f->s, uid);
    }
    sched_peer_detach(&f->s, 2);
    assert_int_equal(f->s.peers, 0);
    fake_free(f);
}

/* A queued entry's frame counts for its uid while it waits, and no longer once it starts, goes
 * back to the queue (counted again), or is dropped; past max_bytes_per_uid a uid's next entry
 * that would wait is refused, an entry that starts at once is not, and other uids go on. */
static void
test_queued_bytes_per_uid(void **state)
{
    (void) state;
    struct fake *f = fake_new(100, 100, 100, 4);
    f->s.max_bytes_uid = 100;
    struct job *a = &f->jobs[f->n_jobs++], *b = &f->jobs[f->n_jobs++];
    struct job *c = &f->jobs[f->n_jobs++], *d = &f->jobs[f->n_jobs++];
    a->tag = 1, b->tag = 2, c->tag = 3, d->tag = 4;
    uint32_t retry = 0;
    const char *why = NULL;
    assert_int_equal(sched_submit(&f->s, &a->e, 1, false, 60, &retry, &why), 0);
    assert_int_equal(sched_bytes_of(&f->s, 1), 60);
    assert_int_equal(sched_submit(&f->s, &b->e, 1, false, 41, &retry, &why), -EBUSY);
    assert_string_equal(why, "max_bytes_per_uid");
    assert_true(retry >= SCHED_RETRY_MIN_MS && retry <= SCHED_RETRY_MAX_MS);
    assert_int_equal(b->e.state, SCHED_NONE);
    struct pf_error *err = NULL;
    assert_int_equal(sched_busy_error(&f->s, 1, why, retry, &err), -1);
    assert_int_equal(err->code, PF_E_BUSY);
    assert_non_null(strstr(err->msg, "holds 60 bytes for uid 1 (max_bytes_per_uid 100"));
    err = pf_error_free(err);
    /* Exactly up to the bound is within it. */
    assert_int_equal(sched_submit(&f->s, &b->e, 1, false, 40, &retry, &why), 0);
    assert_int_equal(sched_bytes_of(&f->s, 1), 100);
    assert_null(sched_bytes_bound(&f->s, 1, 0));
    assert_string_equal(sched_bytes_bound(&f->s, 1, 1), "max_bytes_per_uid");
    /* Another uid has a budget of its own. */
    assert_int_equal(sched_submit(&f->s, &c->e, 2, false, 100, &retry, &why), 0);
    assert_int_equal(f->s.bytes, 200);

    /* No slot: the first in turn (uid 1's a) goes back to the queue, still counted. */
    sched_pump(&f->s);
    assert_int_equal(sched_bytes_of(&f->s, 1), 100);
    /* It starts: its bytes are no longer the queue's. */
    f->slots = 1;
    sched_pump(&f->s);
    assert_int_equal(f->order[0], 1);
    assert_int_equal(sched_bytes_of(&f->s, 1), 40);
    /* A dropped (cancelled) entry gives its bytes back; with them its record may go. */
    sched_done(&f->s, &c->e, -1);
    assert_null(sched_uid_find(&f->s, 2));
    assert_int_equal(f->s.bytes, 40);

    /* Over the bound by what other modules charge: what would wait is refused, what starts
     * at once (nobody waits, a worker is free) is admitted. */
    assert_int_equal(sched_bytes_charge(&f->s, 3, 150), 0);
    assert_string_equal(sched_bytes_bound(&f->s, 3, 0), "max_bytes_per_uid");
    assert_int_equal(sched_submit(&f->s, &d->e, 3, false, 1, &retry, &why), -EBUSY);
    assert_string_equal(why, "max_bytes_per_uid");
    sched_done(&f->s, &b->e, -1);
    assert_int_equal(sched_submit(&f->s, &d->e, 3, true, 1, &retry, &why), 0);
    f->slots = 1;
    sched_pump(&f->s);
    assert_int_equal(d->e.state, SCHED_RUNNING);
    assert_int_equal(sched_bytes_of(&f->s, 3), 150);

    cJSON *st = sched_stats_json(&f->s);
    assert_int_equal(cJSON_GetObjectItem(st, "bytes")->valuedouble, 150);
    assert_int_equal(cJSON_GetObjectItem(st, "max_bytes_per_uid")->valuedouble, 100);
    assert_int_equal(cJSON_GetObjectItem(st, "max_bytes")->valuedouble, f->s.max_bytes);
    assert_non_null(cJSON_GetObjectItem(st, "max_connections_per_uid"));
    cJSON *u3 = cJSON_GetArrayItem(cJSON_GetObjectItem(st, "uids"), 1);
    assert_int_equal(cJSON_GetObjectItem(u3, "uid")->valuedouble, 3);
    assert_int_equal(cJSON_GetObjectItem(u3, "bytes")->valuedouble, 150);
    cJSON_Delete(st);

    /* A record held only by bytes goes with their release. */
    sched_bytes_release(&f->s, 3, 150);
    assert_non_null(sched_uid_find(&f->s, 3)); /* d still runs */
    finish_all(f);
    assert_null(sched_uid_find(&f->s, 3));
    assert_int_equal(sched_bytes_charge(&f->s, 4, 5), 0);
    sched_bytes_release(&f->s, 4, 5);
    assert_null(sched_uid_find(&f->s, 4));
    fake_free(f);
}

/* max_bytes bounds what all uids hold together: with every uid within max_bytes_per_uid, the
 * entry that would take the sum past it is refused, naming max_bytes and the sum, and retried
 * after anyone's job (not after every ready uid's turn); what starts at once is admitted. */
static void
test_queued_bytes_all_uids(void **state)
{
    (void) state;
    struct fake *f = fake_new(100, 100, 100, 4);
    f->s.max_bytes_uid = 100;
    f->s.max_bytes = 150;
    struct job *a = &f->jobs[f->n_jobs++], *b = &f->jobs[f->n_jobs++];
    struct job *c = &f->jobs[f->n_jobs++], *d = &f->jobs[f->n_jobs++];
    a->tag = 1, b->tag = 2, c->tag = 3, d->tag = 4;
    uint32_t retry = 0;
    const char *why = NULL;
    assert_int_equal(sched_submit(&f->s, &a->e, 1, false, 100, &retry, &why), 0);
    assert_int_equal(sched_submit(&f->s, &b->e, 2, false, 50, &retry, &why), 0);
    assert_int_equal(f->s.bytes, 150);
    /* uid 3 holds nothing and is within its own bound; all uids together are not. */
    assert_string_equal(sched_bytes_bound(&f->s, 3, 1), "max_bytes");
    assert_null(sched_bytes_bound(&f->s, 3, 0));
    assert_int_equal(sched_submit(&f->s, &c->e, 3, false, 1, &retry, &why), -EBUSY);
    assert_string_equal(why, "max_bytes");
    assert_int_equal(c->e.state, SCHED_NONE);
    assert_int_equal(retry, sched_retry_after(&f->s, "max_queued"));
    assert_true(retry < sched_retry_after(&f->s, "max_bytes_per_uid")); /* 2 uids ready */
    struct pf_error *err = NULL;
    assert_int_equal(sched_busy_error(&f->s, 3, why, retry, &err), -1);
    assert_int_equal(err->code, PF_E_BUSY);
    assert_non_null(strstr(err->msg, "holds 150 bytes for all uids together (max_bytes 150"));
    err = pf_error_free(err);
    /* The per-uid bound is named first when both are passed. */
    assert_string_equal(sched_bytes_bound(&f->s, 1, 1), "max_bytes_per_uid");
    /* Within both again once a queued entry leaves. */
    sched_done(&f->s, &b->e, -1);
    assert_null(sched_bytes_bound(&f->s, 3, 50));
    assert_int_equal(sched_submit(&f->s, &c->e, 3, false, 50, &retry, &why), 0);
    /* Past max_bytes, an entry that starts at once is still admitted. */
    assert_int_equal(sched_bytes_charge(&f->s, 4, 1), 0);
    assert_string_equal(sched_bytes_bound(&f->s, 4, 0), "max_bytes");
    sched_bytes_release(&f->s, 4, 1);
    f->slots = 2;
    sched_pump(&f->s);
    assert_int_equal(f->s.bytes, 0);
    assert_int_equal(sched_bytes_charge(&f->s, 5, 151), 0);
    assert_int_equal(sched_submit(&f->s, &d->e, 4, true, 1, &retry, &why), 0);
    f->slots = 1;
    sched_pump(&f->s);
    assert_int_equal(d->e.state, SCHED_RUNNING);
    sched_bytes_release(&f->s, 5, 151);
    finish_all(f);
    fake_free(f);
}

/* A uid whose only state is a detached session (no connection, no job) keeps its record, and
 * with it its counters and its line in the stats, until the session ends. */
static void
test_session_keeps_the_uid_record(void **state)
{
    (void) state;
    struct fake *f = fake_new(100, 100, 100, 4);
    assert_int_equal(sched_peer_attach(&f->s, 1000, NULL), 0);
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

/* One uid's sessions may hold half of the session workers, rounded up, at least 1: another
 * uid always finds room, but for a lone session worker. */
static void
test_session_share(void **state)
{
    (void) state;
    static const unsigned want[][2] = {{1, 1}, {2, 1}, {3, 1},  {4, 2},
                                       {7, 3}, {8, 3}, {16, 6}, {4096, 1536}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (sched_session_share(want[i][0]) != want[i][1])
            fail_msg("max_workers %u: one uid's sessions may hold %u, want %u", want[i][0],
                     sched_session_share(want[i][0]), want[i][1]);
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
    assert_int_equal(l.v[POLICY_LIMIT_MAX_SESSION_WORKERS_PER_UID],
                     sched_session_share((unsigned) l.v[POLICY_LIMIT_MAX_WORKERS]));
    l.v[POLICY_LIMIT_MAX_WORKERS] = 6;
    l.v[POLICY_LIMIT_MAX_JOBS_PER_UID] = 2;
    l.v[POLICY_LIMIT_MAX_SESSION_WORKERS_PER_UID] = 4;
    sched_derive_limits(&l);
    assert_int_equal(l.v[POLICY_LIMIT_MAX_WORKERS], 6);
    assert_int_equal(l.v[POLICY_LIMIT_MAX_JOBS_PER_UID], 2);
    assert_int_equal(l.v[POLICY_LIMIT_MAX_SESSION_WORKERS_PER_UID], 4);
    /* Past what sessions may hold together (5 of 6), it is that. */
    l.v[POLICY_LIMIT_MAX_SESSION_WORKERS_PER_UID] = 6;
    sched_derive_limits(&l);
    assert_int_equal(l.v[POLICY_LIMIT_MAX_SESSION_WORKERS_PER_UID], 5);
    l.v[POLICY_LIMIT_MAX_SESSION_WORKERS_PER_UID] = 0;
    sched_derive_limits(&l);
    assert_int_equal(l.v[POLICY_LIMIT_MAX_SESSION_WORKERS_PER_UID], 3);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_round_robin_across_uids),
            cmocka_unit_test(test_flooder_waits_its_turn),
            cmocka_unit_test(test_skipped_entries_do_not_block),
            cmocka_unit_test(test_per_uid_running_cap),
            cmocka_unit_test(test_queue_bounds_and_retry_after),
            cmocka_unit_test(test_no_queue_still_starts_what_can_start),
            cmocka_unit_test(test_cancelled_queued_job_never_starts),
            cmocka_unit_test(test_failed_start_moves_on),
            cmocka_unit_test(test_peers_and_stats),
            cmocka_unit_test(test_connections_per_uid),
            cmocka_unit_test(test_queued_bytes_per_uid),
            cmocka_unit_test(test_queued_bytes_all_uids),
            cmocka_unit_test(test_session_keeps_the_uid_record),
            cmocka_unit_test(test_session_capacity),
            cmocka_unit_test(test_session_share),
            cmocka_unit_test(test_derived_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
