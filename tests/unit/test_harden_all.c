/* Every layer through worker_harden(), in order, after harden_zygote_init(): what a real worker
 * gets. The probe checks the end state in /proc/self/status, then a forbidden call must produce
 * the seccomp frame. Also: many jobs in a row each get the full sequence and their slot back.
 * What hardening costs is measured by tests/bench/bench_harden, not here: timings on a shared,
 * loaded machine make no pass/fail. */
/* cmocka.h needs these first, in this order. */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "harden_internal.h"
#include "harden_test_child.h"
#include "harden_zygote.h"

static struct harden_params params;
static bool have_cgroup;

static void
full_params(void)
{
    memset(&params, 0, sizeof(params));
    for (int l = 0; l < _HARDEN_LAYER_MAX; l++)
        params.level[l] = HARDEN_REQUIRED;
    if (!have_cgroup)
        params.level[HARDEN_LAYER_CGROUP] = HARDEN_BEST_EFFORT;
    if (harden_landlock_abi() <= 0)
        params.level[HARDEN_LAYER_LANDLOCK] = HARDEN_BEST_EFFORT;
    params.cpu_ms = 5000;
    params.memory_mb = 512;
    params.file_size_mb = 4;
    params.scratch_mb = 4;
    params.open_files = 64;
    params.pids = 16;
}

static int
worker(void *arg)
{
    struct pf_error *err = NULL;
    if (worker_harden(&params, 3, &err) < 0) {
        child_say(err->msg);
        return 2;
    }
    char buf[8192];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (n <= 0)
        return 3;
    buf[n] = '\0';
    static const char *const want[] = {"Seccomp:\t2",
                                       "NoNewPrivs:\t1",
                                       "CapEff:\t0000000000000000",
                                       "CapPrm:\t0000000000000000",
                                       "CapBnd:\t0000000000000000",
                                       "CapAmb:\t0000000000000000",
                                       "CapInh:\t0000000000000000"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        if (!strstr(buf, want[i])) {
            child_say(want[i]);
            return 4;
        }
    if (getuid() == 0 || getpid() != 1)
        return 5;
    child_say("ok");
    socket(AF_UNIX, SOCK_STREAM, 0);
    return 6;
}

static void
test_full_sequence(void **state)
{
    full_params();
    struct harden_job *job = NULL;
    struct pf_error *err = NULL;
    if (harden_job_prepare(&params, &job, &err) < 0)
        fail_msg("prepare: %s", err->msg);
    struct child_result r;
    assert_int_equal(run_child(worker, NULL, &r), 0);
    struct harden_outcome out;
    harden_job_finish(job, &out);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != HARDEN_SECCOMP_EXIT_CODE)
        fail_msg("worker: status %d: %s", r.status, r.out);
    size_t n;
    const char *json = frame_json(&r, 2, &n);
    assert_non_null(json);
    const char *want = "{\"event\":\"seccomp\",\"syscall\":\"socket\"}";
    assert_int_equal(n, strlen(want));
    assert_memory_equal(json, want, n);
    assert_int_equal(out.have_cgroup, have_cgroup);
    assert_false(out.oom_killed);
}

static int
quiet_worker(void *arg)
{
    struct pf_error *err = NULL;
    if (worker_harden(&params, 3, &err) < 0)
        return 2;
    return 0;
}

/* Jobs back to back: prepare + fork + worker_harden + exit + wait + finish, each one ending
 * cleanly, so that a slot, a pid namespace or a cgroup handed from job to job keeps working. */
static void
test_jobs_in_a_row(void **state)
{
    full_params();
    for (int i = 0; i < 100; i++) {
        struct harden_job *job = NULL;
        struct pf_error *err = NULL;
        if (harden_job_prepare(&params, &job, &err) < 0)
            fail_msg("job %d: prepare: %s", i, err->msg);
        struct child_result r;
        assert_int_equal(run_child(quiet_worker, NULL, &r), 0);
        struct harden_outcome out;
        harden_job_finish(job, &out);
        if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
            fail_msg("job %d: worker status %d", i, r.status);
        assert_int_equal(out.have_cgroup, have_cgroup);
        assert_false(out.oom_killed);
    }
}

/* The worker dies with its zygote from its first instruction on, before any layer: the cgroup,
 * namespaces and rlimits layers run before the fds layer's own PR_SET_PDEATHSIG. */
static void
test_dies_with_zygote_from_fork(void **state)
{
    full_params();
    struct harden_job *job = NULL;
    struct pf_error *err = NULL;
    if (harden_job_prepare(&params, &job, &err) < 0)
        fail_msg("prepare: %s", err->msg);
    fflush(NULL);
    pid_t pid = harden_job_fork(job);
    if (pid == 0) {
        int sig = 0;
        _exit(prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0) == 0 && sig == SIGKILL ? 0 : 1);
    }
    assert_true(pid > 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    harden_job_finish(job, NULL);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void
test_check_host(void **state)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    struct harden_zygote_config config = {0}; /* pyfenced's defaults */
    int r = harden_check_host(&config, false, f);
    fclose(f);
    print_message("%s", text);
    /* As root on a kernel with seccomp: every layer required by default can be applied. */
    assert_int_equal(r, 0);
    assert_non_null(strstr(text, "seccomp:     yes"));
    assert_non_null(strstr(text, have_cgroup ? "cgroup:      v" : "cgroup:      none"));
    /* With a cgroup2 mount, whether workers can be forked straight into a v2 slot. */
    if (strstr(text, "  v2:        "))
        assert_non_null(strstr(text, "  v2 fork:   "));
    assert_non_null(strstr(text, "namespaces:"));
    assert_non_null(strstr(text, "landlock:"));
    assert_non_null(strstr(text, "workers as uid/gid 600000..665535"));
    /* root: supplementary groups, if any, are dropped by each worker */
    assert_non_null(strstr(text, "\ngroups:      "));
    assert_null(strstr(text, "CANNOT BE DROPPED"));
    free(text);
}

int
main(void)
{
    if (geteuid() != 0) {
        printf("the full sequence needs root: skipping\n");
        return 77;
    }
    struct pf_error *err = NULL;
    struct harden_zygote_config config = {.cgroup_mode = "auto"};
    if (harden_zygote_init(&config, &err) < 0) {
        printf("harden_zygote_init: %s\n", err->msg);
        return 1;
    }
    have_cgroup = strcmp(harden_cgroup_backend_name(), "none") != 0;
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_full_sequence),
            cmocka_unit_test(test_jobs_in_a_row),
            cmocka_unit_test(test_dies_with_zygote_from_fork),
            cmocka_unit_test(test_check_host),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    harden_zygote_finish();
    return r;
}
