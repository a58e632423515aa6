/* Worker hardening, Foundation layers: the ordered sequence (harden.c), rlimits and fds+env,
 * each applied in a forked child that reports what it sees through its channel. Also the
 * harden_params JSON of the spawn request. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "harden.h"
#include "harden_internal.h"
#include "harden_params.h"
#include "pf_cleanup.h"

extern char **environ;

static const int resources[] = {RLIMIT_CPU,    RLIMIT_AS,    RLIMIT_FSIZE,
                                RLIMIT_NOFILE, RLIMIT_NPROC, RLIMIT_CORE};
#define N_RES PF_ELEMENTSOF(resources)

/* What a hardened child sees, sent back through its channel (fd 3). */
struct report {
    int harden_ret;
    char error[256];
    struct rlimit rl[N_RES];
    int fds[16];
    int n_fds;
    int stdio_dev_null; /* bitmask: fd i is /dev/null */
    int n_environ;
    int pdeathsig;
};

static int
list_fds(int *fds, int max)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        int fd = atoi(de->d_name);
        if (fd != dirfd(d) && n < max)
            fds[n++] = fd;
    }
    closedir(d);
    return n;
}

static struct harden_params
foundation_params(void)
{
    struct harden_params p;
    harden_params_init(&p);
    for (int i = 0; i < _HARDEN_LAYER_MAX; i++)
        p.level[i] = HARDEN_OFF;
    p.level[HARDEN_LAYER_RLIMITS] = HARDEN_REQUIRED;
    p.level[HARDEN_LAYER_FDS] = HARDEN_REQUIRED;
    p.cpu_ms = 2500;
    p.memory_mb = 512;
    p.file_size_mb = 3;
    p.scratch_mb = 2;
    p.open_files = 20;
    p.pids = 7;
    return p;
}

/* Forks a child that runs worker_harden(params) and reports; returns the report. */
static struct report
harden_in_child(const struct harden_params *params, pid_t expect_parent)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv), 0);
    /* Junk the hardened child must not keep: an fd without O_CLOEXEC, and a secret in the env. */
    int junk = open("/dev/zero", O_RDONLY);
    assert_true(junk >= 0);
    setenv("PYFENCE_TEST_SECRET", "hunter2", 1);

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        struct report r = {0};
        struct pf_error *err = NULL;
        harden_expect_parent(expect_parent);
        r.harden_ret = worker_harden(params, sv[1], &err);
        /* worker_harden moves the channel to fd 3 first, also when a layer then fails. */
        int ch = fcntl(HARDEN_CHANNEL_FD, F_GETFD) >= 0 ? HARDEN_CHANNEL_FD : sv[1];
        if (err)
            snprintf(r.error, sizeof(r.error), "%s", err->msg);
        for (size_t i = 0; i < N_RES; i++)
            getrlimit(resources[i], &r.rl[i]);
        r.n_fds = list_fds(r.fds, 16);
        for (int fd = 0; fd <= 2; fd++) {
            struct stat st;
            if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
                r.stdio_dev_null |= 1 << fd;
        }
        while (environ && environ[r.n_environ])
            r.n_environ++;
        prctl(PR_GET_PDEATHSIG, &r.pdeathsig, 0, 0, 0);
        _exit(write(ch, &r, sizeof(r)) == sizeof(r) ? 0 : 1);
    }
    close(sv[1]);
    close(junk);
    unsetenv("PYFENCE_TEST_SECRET");
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    struct report r;
    assert_int_equal(read(sv[0], &r, sizeof(r)), sizeof(r));
    close(sv[0]);
    return r;
}

static rlim_t
clamped(int resource, rlim_t want)
{
    struct rlimit cur;
    getrlimit(resource, &cur);
    return cur.rlim_max != RLIM_INFINITY && cur.rlim_max < want ? cur.rlim_max : want;
}

static void
test_foundation_layers(void **state)
{
    (void) state;
    struct harden_params p = foundation_params();
    struct report r = harden_in_child(&p, getpid());
    assert_string_equal(r.error, "");
    assert_int_equal(r.harden_ret, HARDEN_CHANNEL_FD);

    /* rlimits: 2500 ms is 3 s, hard one above so SIGXCPU comes first. */
    assert_int_equal(r.rl[0].rlim_cur, clamped(RLIMIT_CPU, 3));
    assert_int_equal(r.rl[0].rlim_max, clamped(RLIMIT_CPU, 4));
#if !defined(__SANITIZE_ADDRESS__)
    assert_int_equal(r.rl[1].rlim_max, clamped(RLIMIT_AS, 512ULL << 20));
#endif
    assert_int_equal(r.rl[2].rlim_max, clamped(RLIMIT_FSIZE, 3ULL << 20));
    assert_int_equal(r.rl[3].rlim_max, clamped(RLIMIT_NOFILE, 20));
    assert_int_equal(r.rl[4].rlim_max, clamped(RLIMIT_NPROC, 7));
    assert_int_equal(r.rl[5].rlim_cur, 0);
    assert_int_equal(r.rl[5].rlim_max, 0);

    /* fds: exactly 0, 1, 2 (/dev/null) and the channel on 3. */
    assert_int_equal(r.n_fds, 4);
    int seen = 0;
    for (int i = 0; i < r.n_fds; i++)
        seen |= 1 << r.fds[i];
    assert_int_equal(seen, 0xf);
    assert_int_equal(r.stdio_dev_null, 0x7);
    assert_int_equal(r.n_environ, 0);
    assert_int_equal(r.pdeathsig, SIGKILL);
}

static void
test_wrong_parent_fails_closed(void **state)
{
    (void) state;
    struct harden_params p = foundation_params();
    /* Not our pid: as if the zygote had died and the worker been re-parented. */
    struct report r = harden_in_child(&p, getpid() + 100000);
    assert_int_equal(r.harden_ret, -1);
    assert_non_null(strstr(r.error, "hardening layer 'fds'"));
    assert_non_null(strstr(r.error, "died before the worker was hardened"));
}

static void
test_layers_off_leave_process_alone(void **state)
{
    (void) state;
    struct harden_params p = foundation_params();
    p.level[HARDEN_LAYER_RLIMITS] = HARDEN_OFF;
    p.level[HARDEN_LAYER_FDS] = HARDEN_OFF;
    struct report r = harden_in_child(&p, getpid());
    assert_int_equal(r.harden_ret, HARDEN_CHANNEL_FD);
    assert_true(r.n_fds > 4);     /* the junk fd survived */
    assert_true(r.n_environ > 0); /* and the environment */
    assert_int_equal(r.pdeathsig, 0);
    assert_int_not_equal(r.rl[5].rlim_max, 0);
}

static void
test_unbuilt_layer(void **state)
{
    (void) state;
    int layer = -1;
    for (int l = 0; l < _HARDEN_LAYER_MAX && layer < 0; l++)
        if (!harden_layer_built((enum harden_layer) l))
            layer = l;
    if (layer < 0)
        skip(); /* every layer is built: nothing to check */
    struct harden_params p = foundation_params();
    p.level[layer] = HARDEN_BEST_EFFORT;
    struct report r = harden_in_child(&p, getpid());
    assert_int_equal(r.harden_ret, HARDEN_CHANNEL_FD);

    p.level[layer] = HARDEN_REQUIRED;
    r = harden_in_child(&p, getpid());
    assert_int_equal(r.harden_ret, -1);
    assert_non_null(strstr(r.error, harden_layer_name((enum harden_layer) layer)));
    assert_non_null(strstr(r.error, "required but not built"));
}

static void
test_invalid_level_fails_closed(void **state)
{
    (void) state;
    struct harden_params p = foundation_params();
    p.level[HARDEN_LAYER_NAMESPACES] = (enum harden_level) 7;
    struct report r = harden_in_child(&p, getpid());
    assert_int_equal(r.harden_ret, -1);
    assert_non_null(strstr(r.error, "hardening layer 'namespaces': invalid level 7"));
    /* It stopped there: the later layers did not run. */
    assert_true(r.n_fds > 4);
    assert_int_not_equal(r.rl[5].rlim_max, 0);
}

static void
test_close_from_fallback(void **state)
{
    (void) state;
    for (int fallback = 0; fallback <= 1; fallback++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            for (int i = 0; i < 10; i++)
                if (open("/dev/null", O_RDONLY) < 0)
                    _exit(100);
            dup2(0, 40);
            if (harden_fds_close_from(5, fallback, NULL) < 0)
                _exit(101);
            int fds[64];
            int n = list_fds(fds, 64), above = 0;
            for (int i = 0; i < n; i++)
                above += fds[i] >= 5;
            _exit(above);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
}

static void
test_names(void **state)
{
    (void) state;
    for (int l = 0; l < _HARDEN_LAYER_MAX; l++)
        assert_int_equal(harden_layer_from_name(harden_layer_name((enum harden_layer) l)), l);
    for (int v = 0; v < _HARDEN_LEVEL_MAX; v++)
        assert_int_equal(harden_level_from_name(harden_level_name((enum harden_level) v)), v);
    assert_string_equal(harden_layer_name(HARDEN_LAYER_SECCOMP), "seccomp");
    assert_string_equal(harden_level_name(HARDEN_BEST_EFFORT), "best-effort");
    assert_int_equal(harden_layer_from_name("selinux"), _HARDEN_LAYER_INVALID);
    assert_int_equal(harden_level_from_name(NULL), _HARDEN_LEVEL_INVALID);
}

static void
test_params_json_roundtrip(void **state)
{
    (void) state;
    struct harden_params p = foundation_params(), q;
    p.uid = 61000;
    p.gid = 61001;
    p.level[HARDEN_LAYER_SECCOMP] = HARDEN_BEST_EFFORT;
    cJSON *j = harden_params_to_json(&p);
    assert_non_null(j);
    struct pf_error *err = NULL;
    assert_int_equal(harden_params_from_json(j, &q, &err), 0);
    assert_memory_equal(&p, &q, sizeof(p));
    cJSON_Delete(j);
}

static void
expect_refused(const char *json, const char *needle)
{
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    struct harden_params q;
    struct pf_error *err = NULL;
    assert_int_equal(harden_params_from_json(j, &q, &err), -1);
    assert_non_null(err);
    if (!strstr(err->msg, needle))
        fail_msg("\"%s\" does not name \"%s\"", err->msg, needle);
    pf_error_free(err);
    cJSON_Delete(j);
}

static void
test_params_json_strict(void **state)
{
    (void) state;
#define LEVELS                                                                               \
    "\"levels\":{\"cgroup\":\"off\",\"namespaces\":\"off\",\"rlimits\":\"required\","        \
    "\"fds\":\"required\",\"identity\":\"off\",\"privileges\":\"off\",\"landlock\":\"off\"," \
    "\"seccomp\":\"off\"}"
#define NUMS                                                                                   \
    "\"cpu_ms\":1000,\"memory_mb\":256,\"file_size_mb\":1,\"scratch_mb\":1,\"open_files\":32," \
    "\"pids\":4"
    expect_refused("{" NUMS ",\"uid\":1,\"gid\":1," LEVELS ",\"extra\":1}", "extra");
    expect_refused("{" NUMS ",\"uid\":1," LEVELS "}", "gid");
    expect_refused("{" NUMS ",\"uid\":1,\"gid\":1.5," LEVELS "}", "gid");
    expect_refused("{\"cpu_ms\":1,\"memory_mb\":256,\"file_size_mb\":1,\"scratch_mb\":1,"
                   "\"open_files\":32,\"pids\":4,\"uid\":1,\"gid\":1," LEVELS "}",
                   "cpu_ms");
    /* A tmpfs of size 0 is unlimited: the channel refuses scratch_mb 0, and its absence. */
    expect_refused("{\"cpu_ms\":1000,\"memory_mb\":256,\"file_size_mb\":1,\"scratch_mb\":0,"
                   "\"open_files\":32,\"pids\":4,\"uid\":1,\"gid\":1," LEVELS "}",
                   "scratch_mb");
    expect_refused("{\"cpu_ms\":1000,\"memory_mb\":256,\"file_size_mb\":1,"
                   "\"open_files\":32,\"pids\":4,\"uid\":1,\"gid\":1," LEVELS "}",
                   "scratch_mb");
    expect_refused("{" NUMS ",\"uid\":1,\"gid\":1,\"levels\":{\"cgroup\":\"off\"}}",
                   "layer 'namespaces' missing");
    expect_refused("{" NUMS ",\"uid\":1,\"gid\":1,\"levels\":{\"cgroup\":\"maybe\"}}",
                   "harden.levels.cgroup");
    expect_refused("{" NUMS ",\"uid\":1,\"gid\":1,\"levels\":{\"selinux\":\"off\"}}",
                   "unknown layer 'selinux'");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_foundation_layers),
            cmocka_unit_test(test_wrong_parent_fails_closed),
            cmocka_unit_test(test_layers_off_leave_process_alone),
            cmocka_unit_test(test_unbuilt_layer),
            cmocka_unit_test(test_invalid_level_fails_closed),
            cmocka_unit_test(test_close_from_fallback),
            cmocka_unit_test(test_names),
            cmocka_unit_test(test_params_json_roundtrip),
            cmocka_unit_test(test_params_json_strict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
