/* The cgroup layer on this host's backend (v1 here, v2 under systemd), and the `none` backend
 * forced: a worker joins its slot's cgroup, as a whole process (v1, which moves the calling
 * thread, refuses a worker with a second thread); hitting the memory limit is seen as an OOM
 * kill, hitting the pids limit as pids_limited; leftovers are killed when the slot is given
 * back; a reused slot starts clean; peak memory and CPU time are reported, job after job,
 * through the files a slot keeps open (high, close-on-exec, never seen by a worker). */
/* cmocka.h needs these first, in this order. */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <time.h>

#include "harden_cgroup.h"
#include "harden_internal.h"
#include "harden_test_child.h"
#include "harden_zygote.h"

static struct harden_params params;

static void
reset_params(uint64_t memory_mb, uint64_t pids)
{
    memset(&params, 0, sizeof(params));
    params.level[HARDEN_LAYER_CGROUP] = HARDEN_REQUIRED;
    params.memory_mb = memory_mb;
    params.pids = pids;
}

static int
join(void)
{
    struct pf_error *err = NULL;
    if (harden_cgroup_apply(&params, &err) < 0) {
        child_say(err->msg);
        return 2;
    }
    return 0;
}

static int
memory_bomb(void *arg)
{
    if (join())
        return 2;
    child_say("joined;");
    /* Touch far more than the limit: the cgroup OOM killer must end this. */
    for (int i = 0; i < 64; i++) {
        char *p = mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 3;
        memset(p, 1, 16 << 20);
    }
    return 4;
}

/* Runs body as the worker of one job and returns its outcome. */
static void
run_job(child_fn body, void *arg, struct child_result *r, struct harden_outcome *out)
{
    struct harden_job *job = NULL;
    struct pf_error *err = NULL;
    if (harden_job_prepare(&params, &job, &err) < 0)
        fail_msg("prepare: %s", err->msg);
    assert_int_equal(run_child(body, arg, r), 0);
    job = harden_job_finish(job, out);
    assert_null(job);
}

/* Whether the backend reports a job's own peak memory: v1 always; v2 only where memory.peak
 * resets per fd (kernel 6.12+), else the field is left out (0 here) rather than wrong. */
static bool
peak_reported(void)
{
    if (strcmp(harden_cgroup_backend_name(), "v2") != 0)
        return true;
    struct utsname u;
    int major = 0, minor = 0;
    if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
        return true;
    return major > 6 || (major == 6 && minor >= 12);
}

/* A job's peak memory in KiB within [lo, hi) where the backend reports it, else absent (0). */
static void
assert_peak_within(uint64_t peak_kb, uint64_t lo, uint64_t hi)
{
    if (!peak_reported()) {
        assert_int_equal(peak_kb, 0);
        return;
    }
    assert_true(peak_kb >= lo);
    assert_true(peak_kb < hi);
}

static void
test_memory_limit_is_oom(void **state)
{
    struct child_result r;
    struct harden_outcome out;
    reset_params(64, 16);
    run_job(memory_bomb, NULL, &r, &out);
    assert_string_equal(r.out, "joined;");
    assert_true(WIFSIGNALED(r.status));
    assert_int_equal(WTERMSIG(r.status), SIGKILL);
    assert_true(out.have_cgroup);
    assert_true(out.oom_killed);
    assert_false(out.pids_limited);
    assert_peak_within(out.peak_memory_kb, 32 * 1024, 80 * 1024 + 1);
}

static int
small_job(void *arg)
{
    if (join())
        return 2;
    /* mmap and a write to every page, not malloc: an allocator (ASan's) may hand back memory
     * this process touched before it joined the cgroup, or the compiler drop a buffer never
     * read; 8 MiB freshly mapped and written are charged to the cgroup whatever the build. */
    volatile char *p =
            mmap(NULL, 8 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 3;
    for (size_t i = 0; i < (8u << 20); i += 4096)
        p[i] = 1;
    /* Spin ~150 ms of CPU so that the CPU time is visible. */
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    do
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < 150);
    child_say("done");
    return 0;
}

static void
test_slot_reused_clean(void **state)
{
    struct child_result r;
    struct harden_outcome out;
    /* The same slot as the OOM test (slot 0 is free again): its old OOM does not count, and the
     * memory limit grows (v1: memsw before limit). */
    reset_params(128, 16);
    run_job(small_job, NULL, &r, &out);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
        fail_msg("child: %s", r.out);
    assert_string_equal(r.out, "done");
    assert_true(out.have_cgroup);
    assert_false(out.oom_killed);
    assert_false(out.pids_limited);
    assert_peak_within(out.peak_memory_kb, 8 * 1024, UINT64_MAX);
    assert_true(out.cgroup_cpu_ms >= 100);
    /* And shrinks again (v1: limit before memsw). */
    reset_params(48, 16);
    run_job(small_job, NULL, &r, &out);
    assert_true(WIFEXITED(r.status));
    assert_false(out.oom_killed);
}

static int
fork_bomb(void *arg)
{
    if (join())
        return 2;
    int forked = 0;
    for (int i = 0; i < 20; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            close(3); /* the test reads fd 3 until EOF */
            pause();
            _exit(0);
        }
        if (pid < 0)
            break;
        forked++;
    }
    char msg[32];
    snprintf(msg, sizeof(msg), "forked=%d", forked);
    child_say(msg);
    return 0;
}

/* The path of `file` in slot 0's directory of the v1 hierarchy d (or the v2 one): the pool's
 * own record once the slot exists (on v2 the process may have moved into "supervisor" since
 * the pool was made below its first cgroup), else where the pool will make it. */
static void
slot0_path(enum cgroup_dir d, const char *file, char *buf, size_t size)
{
    const char *dir = harden_cgroup_slot_dir(0, d);
    if (dir) {
        int n = snprintf(buf, size, "%s/%s", dir, file);
        assert_true(n > 0 && (size_t) n < size);
        return;
    }
    struct cgroup_host host;
    assert_int_equal(cgroup_host_detect(&host, NULL), 0);
    const char *base =
            strcmp(harden_cgroup_backend_name(), "v2") == 0 ? host.v2_dir : host.v1_dir[d];
    assert_non_null(base);
    int n = snprintf(buf, size, "%s/pyfence-%d/w0/%s", base, (int) getpid(), file);
    assert_true(n > 0 && (size_t) n < size);
    cgroup_host_finish(&host);
}

static uint64_t
read_u64_path(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    unsigned long long v = 0;
    assert_int_equal(fscanf(f, "%llu", &v), 1);
    fclose(f);
    return v;
}

/* The fork bomb's children, killed when their job finished, are zombies of this process (a
 * child subreaper: see main) and stay charged to the slot's pids.current until reaped (in the
 * daemon, the worker's pid namespace reaps them before the worker is). */
static void
reap_orphans(const char *pids_current)
{
    for (int i = 0; i < 5000 && read_u64_path(pids_current) != 0; i++) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        usleep(1000);
    }
    assert_true(read_u64_path(pids_current) == 0);
}

static void
test_pids_limit(void **state)
{
    struct child_result r;
    struct harden_outcome out;
    reset_params(64, 4);
    struct harden_job *job = NULL;
    struct pf_error *err = NULL;
    if (harden_job_prepare(&params, &job, &err) < 0)
        fail_msg("prepare: %s", err->msg);
    assert_int_equal(run_child(fork_bomb, NULL, &r), 0);
    /* The worker itself plus 3 children: the 4th fork is refused by the cgroup. */
    assert_string_equal(r.out, "forked=3");
    /* Its children outlive it (no pid namespace here): finishing the job kills them. */
    job = harden_job_finish(job, &out);
    assert_true(out.pids_limited);
    assert_false(out.oom_killed);
    /* Nothing left in the slot. */
    struct pf_error *e2 = NULL;
    assert_true(harden_job_prepare(&params, &job, &e2) == 0);
    job = harden_job_finish(job, NULL);
    char pids_current[4096];
    slot0_path(CGROUP_DIR_PIDS, "pids.current", pids_current, sizeof(pids_current));
    reap_orphans(pids_current);
}

/* Slot 0's cgroup.procs in every hierarchy the backend uses, for a child to read. */
struct slot_procs {
    char path[_CGROUP_DIR_MAX][4096];
    int n;
};

static void
slot0_procs_paths(struct slot_procs *sp)
{
    memset(sp, 0, sizeof(*sp));
    if (strcmp(harden_cgroup_backend_name(), "v2") == 0) {
        slot0_path(CGROUP_DIR_MEMORY, "cgroup.procs", sp->path[sp->n++], sizeof(sp->path[0]));
        return;
    }
    struct cgroup_host host;
    assert_int_equal(cgroup_host_detect(&host, NULL), 0);
    for (int d = 0; d < _CGROUP_DIR_MAX; d++)
        if (host.v1_dir[d] && access(host.v1_dir[d], W_OK) == 0)
            slot0_path(d, "cgroup.procs", sp->path[sp->n++], sizeof(sp->path[0]));
    cgroup_host_finish(&host);
}

/* Whether pid is listed in the cgroup.procs at path. */
static bool
procs_lists(const char *path, pid_t pid)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool found = false;
    for (int p; !found && fscanf(f, "%d", &p) == 1;)
        found = p == pid;
    fclose(f);
    return found;
}

/* Joins, then says in how many of the slot's hierarchies the process (not just this thread) is
 * listed. */
static int
join_and_count(void *arg)
{
    const struct slot_procs *sp = arg;
    if (join())
        return 2;
    int listed = 0;
    for (int i = 0; i < sp->n; i++)
        listed += procs_lists(sp->path[i], getpid());
    char msg[64];
    snprintf(msg, sizeof(msg), "listed=%d/%d", listed, sp->n);
    child_say(msg);
    return 0;
}

static void
test_join_moves_the_worker(void **state)
{
    struct child_result r;
    struct harden_outcome out;
    struct slot_procs sp;
    slot0_procs_paths(&sp);
    assert_true(sp.n >= 1);
    reset_params(64, 16);
    run_job(join_and_count, &sp, &r, &out);
    char want[64];
    snprintf(want, sizeof(want), "listed=%d/%d", sp.n, sp.n);
    assert_string_equal(r.out, want);
    /* Only a v2 slot can be forked into (clone3 takes a cgroup2 directory). */
    if (strcmp(harden_cgroup_backend_name(), "v2") == 0)
        assert_true(harden_cgroup_slot_dir_fd(0) >= 0);
    else
        assert_int_equal(harden_cgroup_slot_dir_fd(0), -1);
}

static void *
idle_thread(void *arg)
{
    (void) arg;
    pause();
    return NULL;
}

/* A worker with a second thread: v1 moves only the calling thread, so the join must refuse;
 * v2 moves the whole process and may go on. */
static int
join_with_two_threads(void *arg)
{
    pthread_t t;
    if (pthread_create(&t, NULL, idle_thread, NULL) != 0)
        return 5;
    return join_and_count(arg);
}

static void
test_join_refused_with_a_second_thread(void **state)
{
    struct child_result r;
    struct harden_outcome out;
    struct slot_procs sp;
    slot0_procs_paths(&sp);
    reset_params(64, 16);
    run_job(join_with_two_threads, &sp, &r, &out);
    assert_true(WIFEXITED(r.status));
    if (strcmp(harden_cgroup_backend_name(), "v1") == 0) {
        assert_int_equal(WEXITSTATUS(r.status), 2);
        assert_non_null(strstr(r.out, "the worker has 2 threads"));
    } else {
        assert_int_equal(WEXITSTATUS(r.status), 0);
    }
}

/* The fds of this process that point at a file of a pool slot ("/pyfence-<pid>/w<N>/<file>"),
 * as "<fd>:<file>;" in fd order; whether each is close-on-exec in *ret_cloexec. */
static void
slot_fds(char *buf, size_t size, bool *ret_cloexec)
{
    char needle[64];
    snprintf(needle, sizeof(needle), "/pyfence-%d/w", (int) getpid());
    buf[0] = '\0';
    *ret_cloexec = true;
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    for (struct dirent *de; (de = readdir(d));) {
        char link[300], target[4096];
        snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        const char *at = strstr(target, needle);
        const char *file = at ? strchr(at + strlen(needle), '/') : NULL;
        if (!file)
            continue;
        int fd = atoi(de->d_name);
        if (!(fcntl(fd, F_GETFD) & FD_CLOEXEC))
            *ret_cloexec = false;
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%d:%s;", fd, file + 1);
    }
    closedir(d);
}

/* The fds of the worker once the fds layer ran, as "0 1 2 3 ". */
static int
fds_after_fds_layer(void *arg)
{
    if (join())
        return 2;
    struct pf_error *err = NULL;
    if (harden_fds_apply(&params, &err) < 0) {
        child_say(err->msg);
        return 3;
    }
    char out[256] = "";
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 4;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(d))
            continue;
        size_t len = strlen(out);
        if (len + strlen(de->d_name) + 2 > sizeof(out))
            break;
        memcpy(out + len, de->d_name, strlen(de->d_name));
        memcpy(out + len + strlen(de->d_name), " ", 2);
    }
    closedir(d);
    child_say(out);
    return 0;
}

static void
test_kept_fds_high_and_not_in_worker(void **state)
{
    struct child_result r;
    struct harden_outcome out;
    reset_params(64, 16);
    run_job(small_job, NULL, &r, &out);
    /* The zygote (this process) keeps the slot's per-job files open: high, close-on-exec. */
    char fds[4096];
    bool cloexec = false;
    slot_fds(fds, sizeof(fds), &cloexec);
    assert_true(cloexec);
    bool v2 = strcmp(harden_cgroup_backend_name(), "v2") == 0;
    assert_non_null(strstr(fds, v2 ? ":memory.events;" : ":memory.oom_control;"));
    assert_non_null(strstr(fds, v2 ? ":memory.peak;" : ":memory.max_usage_in_bytes;"));
    if (v2)
        assert_non_null(strstr(fds, ":cgroup.kill;"));
    assert_non_null(strstr(fds, ":pids.events;"));
    assert_non_null(strstr(fds, ":pids.current;"));
    for (const char *p = fds; *p; p = strchr(p, ';') + 1)
        if (atoi(p) < HARDEN_HIGH_FD_MIN)
            fail_msg("slot fd below %d: %s", HARDEN_HIGH_FD_MIN, fds);
    /* A worker sees none of them once its fds layer ran: only stdio and the channel. */
    params.level[HARDEN_LAYER_FDS] = HARDEN_REQUIRED;
    run_job(fds_after_fds_layer, NULL, &r, &out);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
        fail_msg("child: %s", r.out);
    assert_string_equal(r.out, "0 1 2 3 ");
}

static void
test_counters_per_job_in_one_slot(void **state)
{
    /* Several jobs in one slot, read through the fds it keeps open: each job's OOM, pids-limit
     * and peak are its own, not those of the job before. */
    struct child_result r;
    struct harden_outcome out;
    char pids_current[4096];
    slot0_path(CGROUP_DIR_PIDS, "pids.current", pids_current, sizeof(pids_current));

    reset_params(64, 16);
    run_job(memory_bomb, NULL, &r, &out);
    assert_true(out.oom_killed);
    assert_peak_within(out.peak_memory_kb, 32 * 1024, UINT64_MAX);

    reset_params(64, 16);
    run_job(small_job, NULL, &r, &out);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
        fail_msg("child: %s", r.out);
    assert_false(out.oom_killed);
    assert_false(out.pids_limited);
    /* The peak was reset through the kept fd: 8 MiB and change, not the bomb's 64 MiB. */
    assert_peak_within(out.peak_memory_kb, 8 * 1024, 32 * 1024);
    assert_true(out.cgroup_cpu_ms >= 100);

    /* A job that leaves children behind: pids.current is not 0, so they are listed and killed. */
    reset_params(64, 4);
    struct harden_job *job = NULL;
    struct pf_error *err = NULL;
    if (harden_job_prepare(&params, &job, &err) < 0)
        fail_msg("prepare: %s", err->msg);
    assert_int_equal(run_child(fork_bomb, NULL, &r), 0);
    assert_string_equal(r.out, "forked=3");
    assert_true(read_u64_path(pids_current) == 3);
    job = harden_job_finish(job, &out);
    assert_true(out.pids_limited);
    assert_false(out.oom_killed);
    reap_orphans(pids_current);

    reset_params(64, 16);
    run_job(small_job, NULL, &r, &out);
    assert_true(WIFEXITED(r.status));
    assert_false(out.pids_limited);
    assert_false(out.oom_killed);
    assert_peak_within(out.peak_memory_kb, peak_reported() ? 1 : 0, 32 * 1024);
}

static int
try_join(void *arg)
{
    return join();
}

/* The worker joins, or says why it did not. */
static int
join_or_say_why(void *arg)
{
    struct pf_error *err = NULL;
    if (harden_cgroup_apply(&params, &err) < 0) {
        child_say(err->msg);
        pf_error_free(err);
        return 0;
    }
    child_say("joined");
    return 0;
}

static void
test_unwritten_limits_not_joined(void **state)
{
    struct child_result r;
    struct harden_outcome out;
    reset_params(64, 16);
    run_job(join_or_say_why, NULL, &r, &out);
    assert_string_equal(r.out, "joined");
    /* A pids limit the kernel refuses (past what pids.max holds), written after the memory
     * limit: best-effort, the job runs, its worker outside the slot, which holds a mix of this
     * job's limits and the last one's, and no cgroup counters are reported for it. */
    reset_params(32, UINT64_MAX);
    params.level[HARDEN_LAYER_CGROUP] = HARDEN_BEST_EFFORT;
    run_job(join_or_say_why, NULL, &r, &out);
    assert_non_null(strstr(r.out, "does not hold this job's limits"));
    assert_false(out.have_cgroup);
    /* The next job writes all of its limits and joins. On v1 the failed write left memsw at
     * 32 MiB, which the slot no longer knows: a larger limit must raise memsw first. */
    reset_params(128, 16);
    run_job(join_or_say_why, NULL, &r, &out);
    assert_string_equal(r.out, "joined");
    assert_true(out.have_cgroup);
}

static void
test_none_backend_forced(void **state)
{
    harden_cgroup_finish();
    struct pf_error *err = NULL;
    assert_int_equal(harden_cgroup_init("none", &err), 0);
    assert_string_equal(harden_cgroup_backend_name(), "none");
    struct child_result r;
    struct harden_outcome out;
    reset_params(64, 16);
    /* Required: the layer refuses and says why. */
    run_job(try_join, NULL, &r, &out);
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), 2);
    assert_non_null(strstr(r.out, "rlimits only"));
    assert_false(out.have_cgroup);
    assert_false(out.oom_killed);
    harden_cgroup_finish();
}

static void
test_stale_pool_removed(void **state)
{
    /* A pool left by a zygote that died: a dead pid's name, one slot with nothing in it. */
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    assert_true(dead > 0);
    waitpid(dead, NULL, 0);
    struct cgroup_host host;
    assert_int_equal(cgroup_host_detect(&host, NULL), 0);
    const char *mem = host.v2_dir && cgroup_v2_has(&host, "memory")
                              ? host.v2_dir
                              : host.v1_dir[CGROUP_DIR_MEMORY];
    assert_non_null(mem);
    char pool[4096], slot[4200];
    snprintf(pool, sizeof(pool), "%s/pyfence-%d", mem, (int) dead);
    snprintf(slot, sizeof(slot), "%s/w0", pool);
    assert_int_equal(cgroup_mkdir(pool, NULL), 0);
    assert_int_equal(cgroup_mkdir(slot, NULL), 0);
    harden_cgroup_finish();
    struct pf_error *err = NULL;
    assert_int_equal(harden_cgroup_init("auto", &err), 0);
    assert_int_equal(access(pool, F_OK), -1);
    cgroup_host_finish(&host);
}

static void
test_bad_mode(void **state)
{
    struct pf_error *err = NULL;
    assert_int_equal(harden_cgroup_init("v3", &err), -1);
    assert_non_null(strstr(err->msg, "v3"));
    pf_error_free(err);
}

int
main(void)
{
    /* Orphans (a fork bomb's children) come to this process, which reaps them. */
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    if (geteuid() != 0) {
        printf("cgroup tests need root: skipping\n");
        return 77;
    }
    struct pf_error *err = NULL;
    if (harden_cgroup_init("auto", &err) < 0) {
        printf("cgroup init: %s\n", err->msg);
        return 1;
    }
    if (strcmp(harden_cgroup_backend_name(), "none") == 0) {
        printf("no writable cgroup v1 or v2 memory+pids on this host: skipping\n");
        return 77;
    }
    printf("# cgroup backend: %s\n", harden_cgroup_backend_name());
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_memory_limit_is_oom),
            cmocka_unit_test(test_slot_reused_clean),
            cmocka_unit_test(test_pids_limit),
            cmocka_unit_test(test_join_moves_the_worker),
            cmocka_unit_test(test_join_refused_with_a_second_thread),
            cmocka_unit_test(test_kept_fds_high_and_not_in_worker),
            cmocka_unit_test(test_counters_per_job_in_one_slot),
            cmocka_unit_test(test_unwritten_limits_not_joined),
            cmocka_unit_test(test_stale_pool_removed),
            cmocka_unit_test(test_none_backend_forced),
            cmocka_unit_test(test_bad_mode),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    harden_cgroup_finish();
    return r;
}
