/* The warm pool (daemon/pool.c) on conn_fixture.c's real loop and fake zygote, with the
 * built-in policy (whose default profile keeps 2 idle workers): eviction of idle workers to
 * make room for a job that none of them fits; the start callback's wait for a zygote that is
 * being restarted; and what a policy reload does to the queue and to running jobs' egress. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "conn_fixture.h"
#include "job.h"
#include "load.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "pool.h"
#include "session_fixture.h"

static void
tune_two_workers(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_MAX_WORKERS] = 2;
}

/* max_workers 2, both slots taken by the default profile's pool. */
static int
setup_full_pool(void **state)
{
    setup_with(state, tune_two_workers);
    struct fx *f = *state;
    struct pf_error *err = NULL;
    if (policy_load_builtin(&f->d.policy, &err) < 0)
        fail_msg("built-in policy: %s", err->msg);
    pools_reload(&f->d.pools);
    pump(f, 5);
    assert_int_equal(pools_idle(&f->d.pools), 2);
    assert_int_equal(f->d.jobs_running, 2);
    return 0;
}

/* An exec that tightens scratch_mb fits no pool worker: with both slots held by idle ones,
 * the oldest is evicted for it. Returns the evicted worker's job id. */
static uint64_t
exec_evicting(struct fx *f, int id)
{
    uint64_t idle[2];
    struct dlist *first = pf_container_of(f->d.pools.list.next, struct pool, link)->idle.next;
    idle[0] = pf_container_of(first, struct job, pool_link)->id;
    idle[1] = pf_container_of(first->next, struct job, pool_link)->id;
    send_fmt(f->client.fd,
             "{\"id\":%d,\"op\":\"exec\",\"code\":\"1\",\"limits\":{\"scratch_mb\":2}}", id);
    pump(f, 20);
    assert_int_equal(f->d.sched.queued, 1);
    if (fake.kills[idle[0]] != 1)
        fail_msg("the oldest idle worker (job %llu) was not evicted for the waiting exec "
                 "(pools.evicting %u)",
                 (unsigned long long) idle[0], f->d.pools.evicting);
    assert_int_equal(fake.kills[idle[1]], 0); /* one per waiting job */
    return idle[0];
}

/* The exec that waited got a fresh worker once the evicted one's slot freed: it runs, and is
 * answered. */
static void
run_waiting_exec(struct fx *f, uint64_t evicted, const char *id)
{
    uint64_t job = fake.last_job;
    assert_true(job > evicted);
    assert_int_equal(fake.last_params.scratch_mb, 2);
    f->worker.fd = fake.worker_fd[job];
    f->worker.len = 0;
    f->worker.eof = false;
    cJSON *run = recv_frame(f, &f->worker, 2000);
    assert_non_null(run);
    cJSON_Delete(run);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\"}");
    end_worker(f, job, 0, 0, false, 0);
    cJSON *r = recv_frame(f, &f->client, 2000);
    assert_non_null(r);
    char *got = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "id"));
    assert_string_equal(got, id);
    free(got);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")));
    cJSON_Delete(r);
}

/* The evicted worker's fork fails (the zygote reports spawn_failed, which is not an exit):
 * its slot frees all the same and it no longer counts as on its way out, so that the next job
 * needing a slot held by idle pool workers still gets one by eviction at once, not after the
 * idle sweep (POOL_IDLE_MS). */
static void
test_evicted_spawn_failure_ends_eviction(void **state)
{
    struct fx *f = *state;
    uint64_t evicted = exec_evicting(f, 1);
    struct pf_error e = {.code = PF_E_INTERNAL, .msg = (char *) "fork: out of memory"};
    job_on_spawned(fake.ctx[evicted], 0, &e);
    pump(f, 20);
    assert_int_equal(f->d.pools.evicting, 0);
    run_waiting_exec(f, evicted, "1");

    /* The pool refilled the slot; both are idle again. */
    pump(f, 20);
    assert_int_equal(pools_idle(&f->d.pools), 2);
    evicted = exec_evicting(f, 2);
    end_worker(f, evicted, 0, SIGKILL, true, 0);
    pump(f, 20);
    assert_int_equal(f->d.pools.evicting, 0);
    run_waiting_exec(f, evicted, "2");
}

/* A pool worker the zygote forked but whose channel the daemon could not open (job_run failed:
 * uv_pipe_open or uv_read_start) is not offered as idle: an exec that came then would be bound
 * to it and answered internal "cannot talk to the worker". It is killed, and the pool refills
 * later; the exec gets a fresh worker meanwhile. */
static void
test_pool_worker_without_channel_not_idle(void **state)
{
    struct fx *f = *state;
    struct pf_error *err = NULL;
    if (policy_load_builtin(&f->d.policy, &err) < 0)
        fail_msg("built-in policy: %s", err->msg);
    fake.bad_channel = true;
    pools_reload(&f->d.pools);
    pump(f, 5);
    uint64_t dead = fake.last_job;
    assert_true(dead >= 1);
    assert_int_equal(fake.kills[dead], 1);
    assert_int_equal(pools_idle(&f->d.pools), 0);

    fake.bad_channel = false;
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"6 * 7\"}");
    assert_true(job > dead);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\",\"output\":42}");
    end_worker(f, job, 0, 0, false, 0);
    cJSON_Delete(expect_ok(f, "1"));
}

/* A worker's end of job's channel becomes the test's current one. */
static void
take_worker(struct fx *f, uint64_t job)
{
    f->worker.fd = fake.worker_fd[job];
    f->worker.len = 0;
    f->worker.eof = false;
}

/* While the zygote restarts, an exec and a session.open wait in the queue as they would for a
 * slot, instead of being refused busy (without retry_after_ms) at once; on the first turn of
 * the loop that finds the zygote back, both get their workers. */
static void
test_requests_wait_while_zygote_restarts(void **state)
{
    struct fx *f = *state;
    fake.restarting = true;
    send_frame(f->client.fd, "{\"id\":1,\"op\":\"exec\",\"code\":\"6 * 7\"}");
    send_frame(f->client.fd, "{\"id\":2,\"op\":\"session.open\"}");
    cJSON *r = recv_frame(f, &f->client, 100);
    if (r)
        fail_msg("answered while the zygote restarts: %s", cJSON_PrintUnformatted(r));
    assert_int_equal(f->d.sched.queued, 2);
    assert_int_equal(fake.last_job, 0);

    fake.restarting = false;
    for (int i = 0; i < 1000 && fake.last_job < 2; i++)
        pump(f, 1);
    assert_int_equal(fake.last_job, 2);
    assert_int_equal(f->d.sched.queued, 0);

    take_worker(f, 1);
    cJSON *run = recv_frame(f, &f->worker, 2000);
    assert_non_null(run);
    assert_string_equal(cJSON_GetObjectItem(run, "op")->valuestring, "run");
    cJSON_Delete(run);
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\",\"output\":42}");
    end_worker(f, 1, 0, 0, false, 0);
    r = expect_ok(f, "1");
    assert_int_equal(cJSON_GetObjectItem(r, "output")->valueint, 42);
    cJSON_Delete(r);

    take_worker(f, 2);
    cJSON *open = recv_frame(f, &f->worker, 2000);
    assert_non_null(open);
    assert_string_equal(cJSON_GetObjectItem(open, "op")->valuestring, "session");
    cJSON_Delete(open);
    send_frame(f->worker.fd, "{\"event\":\"ready\"}");
    cJSON_Delete(expect_ok(f, "2"));
}

static double
number_at(const cJSON *o, const char *a, const char *b)
{
    const cJSON *n = cJSON_GetObjectItem(cJSON_GetObjectItem(o, a), b);
    assert_true(cJSON_IsNumber(n));
    return n->valuedouble;
}

/* A failure reply for a zygote that stayed down: internal, naming its loss and last restart
 * failure; queue_ms is the wait (from the request's arrival: it came after the loss). */
static void
expect_zygote_down(struct fx *f, const char *id, double bound_ms)
{
    cJSON *r = expect_error(f, id, "internal");
    const char *msg = error_message(r);
    if (!strstr(msg, "the zygote is down (fake zygote lost; restart failed: test); gave up after "
                     "waiting "))
        fail_msg("reply %s: %s", id, msg);
    double queue_ms = number_at(r, "stats", "queue_ms");
    if (queue_ms < bound_ms - 1 || queue_ms > bound_ms + 500)
        fail_msg("reply %s: queue_ms %.1f for a wait bounded by %.0f ms", id, queue_ms, bound_ms);
    if (strcmp(id, "11") == 0 && number_at(r, "stats", "run_ms") != 0)
        fail_msg("reply %s never ran, but run_ms is %f", id, number_at(r, "stats", "run_ms"));
    cJSON_Delete(r);
}

static bool
any_entry(void *ctx, struct sched_entry *e)
{
    (void) ctx;
    (void) e;
    return true;
}

/* A request waiting for a zygote that does not come back is answered once it has waited its
 * timeout_ms (an exec, a session.open): not left waiting until its client gives up. One with a
 * longer bound waits on, and runs once the zygote is back; a live session's exec, which needs
 * no new worker, is not touched. Nothing is left of the failed ones: queue entries, bytes,
 * in-flight ids. */
static void
test_zygote_wait_is_bounded(void **state)
{
    struct fx *f = *state;
    char sid[SESSION_ID_LEN + 1];
    uint64_t session_job = open_session(f, "{\"id\":1,\"op\":\"session.open\"}", sid);
    struct peer session_worker = f->worker;

    fake.restarting = true;
    fake.lost_ns = uv_hrtime();
    send_exec(f, 10, sid, "1 + 1");
    expect_run(f, "1 + 1");
    send_frame(f->client.fd,
               "{\"id\":11,\"op\":\"exec\",\"code\":\"1\",\"limits\":{\"timeout_ms\":150}}");
    send_frame(f->client.fd, "{\"id\":12,\"op\":\"session.open\",\"limits\":{\"timeout_ms\":250}}");
    send_frame(f->client.fd, "{\"id\":13,\"op\":\"exec\",\"code\":\"6 * 7\"}");
    expect_zygote_down(f, "11", 150);
    assert_int_equal(f->d.jobs_by_outcome[PF_E_INTERNAL], 1);
    expect_zygote_down(f, "12", 250);
    assert_int_equal(f->d.sched.queued, 1); /* 13: up to POOL_ZYGOTE_WAIT_MS */
    assert_int_equal(f->d.sched.bytes, sched_find_queued(&f->d.sched, any_entry, NULL)->bytes);
    struct conn *c = pf_container_of(f->d.conns.next, struct conn, link);
    assert_int_equal(c->inflight, 2); /* 10 and 13 */
    assert_int_equal(session_count_uid(&f->d.sessions, c->uid), 1);

    send_result(f, 2);
    cJSON_Delete(expect_ok(f, "10"));

    fake.restarting = false;
    for (int i = 0; i < 1000 && fake.last_job == session_job; i++)
        pump(f, 1);
    take_worker(f, fake.last_job);
    expect_run(f, "6 * 7");
    send_frame(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\",\"output\":42}");
    end_worker(f, fake.last_job, 0, 0, false, 0);
    cJSON *r = expect_ok(f, "13");
    assert_int_equal(cJSON_GetObjectItem(r, "output")->valueint, 42);
    cJSON_Delete(r);
    assert_int_equal(f->d.jobs_by_outcome[PF_E_INTERNAL], 1);
    f->worker = session_worker;
}

static void
tune_one_worker(struct policy_limits *l)
{
    l->v[POLICY_LIMIT_MAX_WORKERS] = 1;
}

static int
setup_one_worker(void **state)
{
    return setup_with(state, tune_one_worker);
}

static void
reload(struct fx *f)
{
    struct pf_error *err = NULL;
    if (daemon_reload_policy(&f->d, &err) < 0)
        fail_msg("reload: %s", err->msg);
}

/* A not_found reply for an exec that never ran, with this message. */
static void
expect_revoked(struct fx *f, const char *id, const char *message)
{
    cJSON *r = expect_error(f, id, "not_found");
    if (strcmp(error_message(r), message) != 0)
        fail_msg("reply %s: \"%s\", not \"%s\"", id, error_message(r), message);
    if (number_at(r, "stats", "run_ms") != 0)
        fail_msg("reply %s never ran, but run_ms is %f", id, number_at(r, "stats", "run_ms"));
    cJSON_Delete(r);
}

/* Execs waiting for a worker were resolved at arrival: a reload that removes their profile, or
 * no longer lets their uid use it, answers them not_found, word for word what a request naming
 * the profile now gets, and they never start. An exec of a profile still allowed waits on and
 * runs; the one already running finishes. Nothing of the answered ones is left. */
static void
test_reload_revokes_queued_execs(void **state)
{
    struct fx *f = *state;
    struct conn *c = pf_container_of(f->d.conns.next, struct conn, link);
    uid_t mine = c->uid;
    c->uid = 4000; /* not root, whom every profile admits; put back before the teardown */
    char dir[] = "/tmp/pf-policy-XXXXXX";
    assert_non_null(mkdtemp(dir));
    f->d.opts.policy_dir = dir;
    write_file(
            dir, "default.json",
            "{\"name\":\"default\",\"limits\":{\"pool_size\":0},\"access\":{\"everyone\":true}}");
    write_file(dir, "restricted.json",
               "{\"name\":\"restricted\",\"imports\":[\"time\"],\"limits\":{\"pool_size\":0},"
               "\"access\":{\"uids\":[4000]}}");
    write_file(dir, "gone.json",
               "{\"name\":\"gone\",\"limits\":{\"pool_size\":0},\"access\":{\"everyone\":true}}");
    reload(f);

    uint64_t running =
            start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"1\",\"profile\":\"restricted\"}");
    struct peer running_worker = f->worker;
    send_frame(f->client.fd,
               "{\"id\":2,\"op\":\"exec\",\"code\":\"2\",\"profile\":\"restricted\"}");
    send_frame(f->client.fd, "{\"id\":3,\"op\":\"exec\",\"code\":\"3\",\"profile\":\"gone\"}");
    send_frame(f->client.fd, "{\"id\":4,\"op\":\"exec\",\"code\":\"6 * 7\"}");
    send_frame(f->client.fd,
               "{\"id\":5,\"op\":\"exec\",\"code\":\"5\",\"profile\":\"restricted\"}");
    pump(f, 50);
    assert_int_equal(f->d.sched.queued, 4);

    write_file(dir, "restricted.json",
               "{\"name\":\"restricted\",\"imports\":[\"time\"],\"limits\":{\"pool_size\":0},"
               "\"access\":{\"uids\":[4242]}}");
    char path[64];
    snprintf(path, sizeof(path), "%s/gone.json", dir);
    assert_int_equal(unlink(path), 0);
    reload(f);
    expect_revoked(f, "2", "no profile 'restricted' for uid 4000");
    expect_revoked(f, "3", "no profile 'gone' for uid 4000");
    expect_revoked(f, "5", "no profile 'restricted' for uid 4000");
    assert_int_equal(f->d.sched.queued, 1);
    assert_int_equal(f->d.sched.bytes, sched_find_queued(&f->d.sched, any_entry, NULL)->bytes);
    assert_int_equal(c->inflight, 2); /* 1 (running) and 4 (queued) */
    assert_int_equal(f->d.jobs_by_outcome[PF_E_NOT_FOUND], 3);
    /* What a new request naming the profile gets: the same words. */
    send_frame(f->client.fd,
               "{\"id\":6,\"op\":\"exec\",\"code\":\"6\",\"profile\":\"restricted\"}");
    cJSON *r = expect_error(f, "6", "not_found");
    assert_string_equal(error_message(r), "no profile 'restricted' for uid 4000");
    cJSON_Delete(r);

    /* The running one finishes under what it started with; then the default one runs. */
    f->worker = running_worker;
    send_result(f, 1);
    cJSON_Delete(expect_ok(f, "1"));
    end_worker(f, running, 0, 0, false, 0);
    for (int i = 0; i < 1000 && fake.last_job == running; i++)
        pump(f, 1);
    take_worker(f, fake.last_job);
    expect_run(f, "6 * 7");
    send_result(f, 42);
    end_worker(f, fake.last_job, 0, 0, false, 0);
    cJSON_Delete(expect_ok(f, "4"));
    assert_int_equal(fake.last_job, running + 1); /* 2, 3 and 5 never had a worker */

    c->uid = mine;
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The worker of the current job asks for GET url; returns the error type of the answer and
 * copies its message into msg. The fixture has no egress engine: a request that got past the
 * choice of the rules it is checked against is answered "connection", "pyfenced is stopping",
 * before any rule is matched. */
static const char *
egress_answer(struct fx *f, const char *url, char *msg, size_t size)
{
    send_fmt(f->worker.fd, "{\"event\":\"egress\",\"method\":\"GET\",\"url\":\"%s\"}", url);
    cJSON *r = recv_frame(f, &f->worker, 2000);
    assert_non_null(r);
    assert_string_equal(cJSON_GetObjectItem(r, "op")->valuestring, "egress");
    cJSON *e = cJSON_GetObjectItem(r, "error");
    assert_non_null(e);
    snprintf(msg, size, "%s", cJSON_GetObjectItem(e, "message")->valuestring);
    const char *type = cJSON_GetObjectItem(e, "type")->valuestring;
    static char got[32];
    snprintf(got, sizeof(got), "%s", type);
    cJSON_Delete(r);
    return got;
}

/* Profile 'net' (uid may use it; a rule for /api/, and one for /other/ when other), then a
 * reload. */
static void
reload_net(struct fx *f, const char *dir, int timeout_ms, int uid, bool other)
{
    char text[512];
    snprintf(text, sizeof(text),
             "{\"name\":\"net\",\"limits\":{\"pool_size\":0,\"timeout_ms\":%d},"
             "\"access\":{\"uids\":[%d]},\"egress\":[{\"url\":\"http://127.0.0.1:9/api/\"}%s]}",
             timeout_ms, uid, other ? ",{\"url\":\"http://127.0.0.1:9/other/\"}" : "");
    write_file(dir, "net.json", text);
    reload(f);
}

static const char changed[] =
        "a policy reload since this run started changed the egress rules of profile 'net', or "
        "who may use it: this run's egress is refused (a new run gets the profile as it is now)";

/* A running job's egress is checked against the rules it started with, never against another
 * profile's: after a reload that keeps its profile's rules (other fields may change) it goes
 * on; after one that changes them (even only adding a rule), or takes its uid's access to the
 * profile away, its egress is refused; a job started after the reload gets the rules in
 * force. */
static void
test_reload_egress_keeps_the_run_rules(void **state)
{
    struct fx *f = *state;
    struct conn *c = pf_container_of(f->d.conns.next, struct conn, link);
    uid_t mine = c->uid;
    c->uid = 4000;
    char dir[] = "/tmp/pf-policy-XXXXXX", msg[512];
    assert_non_null(mkdtemp(dir));
    f->d.opts.policy_dir = dir;
    write_file(
            dir, "default.json",
            "{\"name\":\"default\",\"limits\":{\"pool_size\":0},\"access\":{\"everyone\":true}}");
    reload_net(f, dir, 30000, 4000, false);
    uint64_t job = start_exec(f, "{\"id\":1,\"op\":\"exec\",\"code\":\"1\",\"profile\":\"net\"}");
    assert_string_equal(egress_answer(f, "http://127.0.0.1:9/api/x", msg, sizeof(msg)),
                        "connection");

    /* Same rules, another limit: the run goes on with them. */
    reload_net(f, dir, 20000, 4000, false);
    assert_string_equal(egress_answer(f, "http://127.0.0.1:9/api/x", msg, sizeof(msg)),
                        "connection");

    /* A rule more: the profile named 'net' now is not the one the run started with. */
    reload_net(f, dir, 20000, 4000, true);
    assert_string_equal(egress_answer(f, "http://127.0.0.1:9/other/", msg, sizeof(msg)), "refused");
    assert_string_equal(msg, changed);
    assert_string_equal(egress_answer(f, "http://127.0.0.1:9/api/x", msg, sizeof(msg)), "refused");
    send_result(f, 1);
    cJSON_Delete(expect_ok(f, "1"));
    end_worker(f, job, 0, 0, false, 0);

    /* A run started now has the rules in force; then its uid loses the profile, the rules
     * staying the same: refused too. */
    job = start_exec(f, "{\"id\":2,\"op\":\"exec\",\"code\":\"2\",\"profile\":\"net\"}");
    assert_string_equal(egress_answer(f, "http://127.0.0.1:9/other/", msg, sizeof(msg)),
                        "connection");
    reload_net(f, dir, 20000, 4242, true);
    assert_string_equal(egress_answer(f, "http://127.0.0.1:9/other/", msg, sizeof(msg)), "refused");
    assert_string_equal(msg, changed);
    send_result(f, 2);
    cJSON_Delete(expect_ok(f, "2"));
    end_worker(f, job, 0, 0, false, 0);

    c->uid = mine;
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* A request whose zygote is down does not hold back one behind it that needs the other
 * zygote, of the same uid here (independent requests: the later may pass the earlier); the
 * earlier one runs once its zygote is back. */
static void
test_zygote_down_blocks_only_its_requests(void **state)
{
    struct fx *f = *state;
    static struct zygote preload;
    memset(&preload, 0, sizeof(preload));
    f->d.zygote_preload = &preload;
    char dir[] = "/tmp/pf-policy-XXXXXX";
    assert_non_null(mkdtemp(dir));
    f->d.opts.policy_dir = dir;
    write_file(
            dir, "default.json",
            "{\"name\":\"default\",\"limits\":{\"pool_size\":0},\"access\":{\"everyone\":true}}");
    write_file(dir, "data.json",
               "{\"name\":\"data\",\"preload\":[\"json\"],\"limits\":{\"pool_size\":0},"
               "\"access\":{\"everyone\":true}}");
    reload(f);

    preload.restarting = true;
    send_frame(f->client.fd, "{\"id\":1,\"op\":\"exec\",\"code\":\"1\",\"profile\":\"data\"}");
    uint64_t job = start_exec(f, "{\"id\":2,\"op\":\"exec\",\"code\":\"6 * 7\"}");
    assert_int_equal(f->d.sched.queued, 1); /* 1, waiting for the preload zygote */
    send_result(f, 42);
    end_worker(f, job, 0, 0, false, 0);
    cJSON_Delete(expect_ok(f, "2"));

    preload.restarting = false;
    for (int i = 0; i < 1000 && preload.last_job == 0; i++)
        pump(f, 1);
    job = preload.last_job;
    assert_int_equal(fake.last_job, job - 1); /* the plain zygote forked nothing more */
    /* Job ids are the daemon's, unique across zygotes: end_worker may take it from fake. */
    fake.worker_fd[job] = preload.worker_fd[job];
    fake.ctx[job] = preload.ctx[job];
    take_worker(f, job);
    expect_run(f, "1");
    send_result(f, 1);
    end_worker(f, job, 0, 0, false, 0);
    cJSON_Delete(expect_ok(f, "1"));
    f->d.zygote_preload = NULL;
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int
main(void)
{
    pf_log_init(PF_LOG_CRIT, "test_pool");
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_evicted_spawn_failure_ends_eviction,
                                            setup_full_pool, teardown),
            cmocka_unit_test_setup_teardown(test_requests_wait_while_zygote_restarts, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_zygote_wait_is_bounded, setup, teardown),
            cmocka_unit_test_setup_teardown(test_pool_worker_without_channel_not_idle, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_reload_revokes_queued_execs, setup_one_worker,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_reload_egress_keeps_the_run_rules,
                                            setup_one_worker, teardown),
            cmocka_unit_test_setup_teardown(test_zygote_down_blocks_only_its_requests, setup,
                                            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
