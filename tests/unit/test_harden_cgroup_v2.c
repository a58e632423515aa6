/* The cgroup v2 backend's file protocol against a fake cgroup directory (this machine's memory
 * and pids controllers are on v1, so the kernel side of v2 is exercised where systemd delegates
 * a v2 cgroup): the choice of v2 over v1, the limits written, memory.events / pids.events /
 * cpu.stat / memory.peak parsed through the fds a slot keeps open, cgroup.kill used to empty a
 * slot, and only when pids.current says it is not empty; and the delegated cgroup a zygote
 * started after the first keeps its pool in. */
/* cmocka.h needs these first, in this order. */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harden_cgroup.h"

static char root[256];

static void
put(const char *dir, const char *file, const char *content)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static char *
get(const char *dir, const char *file)
{
    static char buf[256];
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The files the kernel would make in a fresh cgroup. */
static void
fake_cgroup(const char *dir)
{
    mkdir(dir, 0755);
    static const char *const files[] = {"cgroup.procs",  "cgroup.subtree_control",
                                        "memory.max",    "memory.swap.max",
                                        "pids.max",      "cpu.max",
                                        "memory.events", "pids.events",
                                        "cpu.stat",      "memory.peak",
                                        "cgroup.kill",   "memory.oom.group"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        put(dir, files[i], "");
    put(dir, "cgroup.controllers", "cpuset cpu io memory pids\n");
}

static void
test_choose_prefers_v2(void **state)
{
    struct cgroup_host host = {.v2_dir = root, .v2_controllers = "cpu memory pids"};
    char why[512];
    assert_ptr_equal(cgroup_choose(&host, "auto", why, sizeof(why), NULL), &cgroup_backend_v2);
    assert_non_null(strstr(why, "delegated"));
    /* Without memory in v2 and without v1: none, saying why. */
    host.v2_controllers = "cpu pids";
    assert_ptr_equal(cgroup_choose(&host, "auto", why, sizeof(why), NULL), &cgroup_backend_none);
    assert_non_null(strstr(why, "not memory and pids"));
    /* Asked for v2 where it cannot work: an error naming the mode. */
    struct pf_error *err = NULL;
    assert_null(cgroup_choose(&host, "v2", why, sizeof(why), &err));
    assert_non_null(strstr(err->msg, "'v2'"));
    pf_error_free(err);
}

static void
test_pool_limits_events(void **state)
{
    struct cgroup_host host = {.v2_dir = root, .v2_controllers = "cpu memory pids"};
    char pool[512], w0[600];
    snprintf(pool, sizeof(pool), "%s/pyfence-%d", root, (int) getpid());
    snprintf(w0, sizeof(w0), "%s/w0", pool);
    fake_cgroup(pool);
    fake_cgroup(w0);

    char *roots[_CGROUP_DIR_MAX] = {NULL};
    struct pf_error *err = NULL;
    assert_int_equal(cgroup_backend_v2.init_pool(&host, roots, &err), 0);
    assert_string_equal(roots[0], pool);
    /* A plain file keeps the last write over the first: "+cpu" then over "+memory +pids". */
    assert_non_null(strstr(get(pool, "cgroup.subtree_control"), "+cpuory +pids"));

    struct cgroup_slot slot = {0};
    cgroup_slot_init_fds(&slot);
    assert_int_equal(cgroup_backend_v2.create(roots, 0, &slot, &err), 0);
    assert_string_equal(slot.dir[0], w0);
    assert_true(slot.procs_fd[0] >= HARDEN_HIGH_FD_MIN);
    /* The directory itself, for forking workers into it (harden_job_fork), high and O_PATH. */
    assert_true(slot.dir_fd >= HARDEN_HIGH_FD_MIN);
    assert_true(fcntl(slot.dir_fd, F_GETFD) & FD_CLOEXEC);
    assert_true(fcntl(slot.dir_fd, F_GETFL) & O_PATH);
    char link[64], target[700];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", slot.dir_fd);
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    assert_true(n > 0);
    target[n] = '\0';
    assert_string_equal(target, w0);
    /* The files read after every job are open for the slot's lifetime, high and close-on-exec;
     * pids.current is missing from this fake, and stays -1. */
    static const enum cgroup_file kept[] = {CGROUP_FILE_OOM, CGROUP_FILE_PEAK,
                                            CGROUP_FILE_PIDS_EVENTS, CGROUP_FILE_CPU,
                                            CGROUP_FILE_KILL};
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        int fd = slot.file_fd[kept[i]];
        assert_true(fd >= HARDEN_HIGH_FD_MIN);
        assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    }
    assert_int_equal(slot.file_fd[CGROUP_FILE_PIDS_CURRENT], -1);
    assert_string_equal(get(w0, "memory.oom.group"), "1");

    struct cgroup_limits l = {
            .memory_bytes = 64 << 20, .pids = 16, .cpu_quota_us = 50000, .cpu_period_us = 100000};
    assert_int_equal(cgroup_backend_v2.set_limits(&slot, &l, &err), 0);
    assert_string_equal(get(w0, "memory.max"), "67108864");
    assert_string_equal(get(w0, "memory.swap.max"), "0");
    assert_string_equal(get(w0, "pids.max"), "16");
    assert_string_equal(get(w0, "cpu.max"), "50000 100000");

    put(w0, "memory.events", "low 0\nhigh 0\nmax 7\noom 2\noom_kill 1\noom_group_kill 0\n");
    put(w0, "pids.events", "max 3\n");
    put(w0, "cpu.stat", "usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n");
    put(w0, "memory.peak", "8388608\n");
    struct cgroup_counters c;
    assert_int_equal(cgroup_backend_v2.read_events(&slot, &c, &err), 0);
    assert_int_equal(c.oom_kill, 1);
    assert_int_equal(c.pids_max, 3);
    assert_int_equal(c.cpu_usage_us, 123456);
    assert_int_equal(c.peak_bytes, 8388608);

    /* Without pids.current the slot cannot know it is empty: cgroup.kill, as always. */
    assert_int_equal(cgroup_backend_v2.reset(&slot, &err), 0);
    assert_string_equal(get(w0, "cgroup.kill"), "1");

    /* The second job of the slot: the same kept fds read the files' new contents. */
    put(w0, "memory.events", "low 0\nhigh 0\nmax 9\noom 3\noom_kill 2\noom_group_kill 0\n");
    put(w0, "pids.events", "max 3\n");
    put(w0, "cpu.stat", "usage_usec 200000\nuser_usec 150000\nsystem_usec 50000\n");
    assert_int_equal(cgroup_backend_v2.read_events(&slot, &c, &err), 0);
    assert_int_equal(c.oom_kill, 2);
    assert_int_equal(c.pids_max, 3);
    assert_int_equal(c.cpu_usage_us, 200000);

    /* They are read through the fds, not the paths: a file replaced under the same name (a new
     * inode) is not what the slot reads. */
    char path[700];
    snprintf(path, sizeof(path), "%s/pids.events", w0);
    assert_int_equal(unlink(path), 0);
    put(w0, "pids.events", "max 100\n");
    assert_int_equal(cgroup_backend_v2.read_events(&slot, &c, &err), 0);
    assert_int_equal(c.pids_max, 3);

    cgroup_backend_v2.destroy(&slot, roots, NULL);
    assert_int_equal(slot.procs_fd[0], -1);
    for (int f = 0; f < _CGROUP_FILE_MAX; f++)
        assert_int_equal(slot.file_fd[f], -1);
    free(roots[0]);
}

static void
test_empty_slot_not_killed(void **state)
{
    /* A kernel with pids.current: 0 there means the slot is empty, and reset writes nothing to
     * cgroup.kill; anything else (tasks left, an unreadable value) kills. */
    struct cgroup_host host = {.v2_dir = root, .v2_controllers = "cpu memory pids"};
    char pool[512], w1[600];
    snprintf(pool, sizeof(pool), "%s/pyfence-%d", root, (int) getpid());
    snprintf(w1, sizeof(w1), "%s/w1", pool);
    fake_cgroup(pool);
    fake_cgroup(w1);
    put(w1, "pids.current", "0\n");
    char *roots[_CGROUP_DIR_MAX] = {NULL};
    struct pf_error *err = NULL;
    assert_int_equal(cgroup_backend_v2.init_pool(&host, roots, &err), 0);
    struct cgroup_slot slot = {0};
    cgroup_slot_init_fds(&slot);
    assert_int_equal(cgroup_backend_v2.create(roots, 1, &slot, &err), 0);
    assert_true(slot.file_fd[CGROUP_FILE_PIDS_CURRENT] >= HARDEN_HIGH_FD_MIN);

    assert_int_equal(cgroup_backend_v2.reset(&slot, &err), 0);
    assert_string_equal(get(w1, "cgroup.kill"), "");

    put(w1, "pids.current", "2\n");
    assert_int_equal(cgroup_backend_v2.reset(&slot, &err), 0);
    assert_string_equal(get(w1, "cgroup.kill"), "1");

    put(w1, "cgroup.kill", "");
    put(w1, "pids.current", "garbage\n");
    assert_int_equal(cgroup_backend_v2.reset(&slot, &err), 0);
    assert_string_equal(get(w1, "cgroup.kill"), "1");

    put(w1, "cgroup.kill", "");
    put(w1, "pids.current", "0\n");
    cgroup_backend_v2.destroy(&slot, roots, NULL);
    assert_string_equal(get(w1, "cgroup.kill"), "");
    free(roots[0]);
}

static void
test_foreign_processes_not_moved(void **state)
{
    /* Controllers cannot be enabled (here: the control file cannot be written) and the cgroup
     * holds a process that is neither the zygote nor its parent: refuse, move nothing. */
    char dir[512], ctl[600];
    snprintf(dir, sizeof(dir), "%s/foreign", root);
    fake_cgroup(dir);
    snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", dir);
    assert_int_equal(unlink(ctl), 0);
    assert_int_equal(mkdir(ctl, 0755), 0);
    put(dir, "cgroup.procs", "1\n");
    struct cgroup_host host = {.v2_dir = dir, .v2_controllers = "cpu memory pids"};
    char *roots[_CGROUP_DIR_MAX] = {NULL};
    struct pf_error *err = NULL;
    assert_int_equal(cgroup_backend_v2.init_pool(&host, roots, &err), -1);
    assert_non_null(strstr(err->msg, "Delegate=yes"));
    pf_error_free(err);
    char sup[700];
    snprintf(sup, sizeof(sup), "%s/supervisor", dir);
    assert_int_equal(access(sup, F_OK), -1);
}

static void
test_later_zygotes_use_the_delegated_cgroup(void **state)
{
    /* The first zygote moved pyfenced into <delegated>/supervisor and enabled memory and pids
     * there: a zygote pyfenced starts later finds itself in that leaf, and keeps its pool in
     * the delegated cgroup, as the first did. */
    char deleg[512], sup[600];
    snprintf(deleg, sizeof(deleg), "%s/deleg", root);
    snprintf(sup, sizeof(sup), "%s/" CGROUP_V2_SUPERVISOR, deleg);
    fake_cgroup(deleg);
    fake_cgroup(sup);
    put(deleg, "cgroup.subtree_control", "cpu memory pids\n");
    char *dir = cgroup_v2_delegated_dir(sup);
    assert_string_equal(dir, deleg);
    free(dir);
    /* Controllers not enabled there (not made by a zygote): the leaf itself, as for any. */
    put(deleg, "cgroup.subtree_control", "cpu\n");
    dir = cgroup_v2_delegated_dir(sup);
    assert_string_equal(dir, sup);
    free(dir);
    /* Another name: its own cgroup, whatever its parent enables. */
    put(deleg, "cgroup.subtree_control", "memory pids\n");
    char other[700];
    snprintf(other, sizeof(other), "%s/session", deleg);
    fake_cgroup(other);
    dir = cgroup_v2_delegated_dir(other);
    assert_string_equal(dir, other);
    free(dir);
    /* A parent without the control file (not a cgroup): the leaf. */
    char plain[700], leaf[800];
    snprintf(plain, sizeof(plain), "%s/plain", root);
    snprintf(leaf, sizeof(leaf), "%s/" CGROUP_V2_SUPERVISOR, plain);
    assert_int_equal(mkdir(plain, 0755), 0);
    fake_cgroup(leaf);
    dir = cgroup_v2_delegated_dir(leaf);
    assert_string_equal(dir, leaf);
    free(dir);
}

struct seen_pids {
    pid_t pid[8];
    int n;
};

static void
record_pid(pid_t pid, void *data)
{
    struct seen_pids *seen = data;
    if (seen->n < 8)
        seen->pid[seen->n] = pid;
    seen->n++;
}

/* What cgroup_procs_foreach does with text: the number of lines it returned, the pids it passed
 * on in *seen. */
static int
foreach_text(const char *text, struct seen_pids *seen, struct pf_error **err)
{
    FILE *f = fmemopen((void *) text, strlen(text), "r");
    assert_non_null(f);
    memset(seen, 0, sizeof(*seen));
    int r = cgroup_procs_foreach(f, record_pid, seen, err);
    fclose(f);
    return r;
}

static void
test_procs_zero_listed_not_passed_on(void **state)
{
    struct seen_pids seen;
    /* A task outside our pid namespace, or exiting, reads as 0: listed, never a pid to kill
     * (kill(0) is our own process group). */
    assert_int_equal(foreach_text("0\n", &seen, NULL), 1);
    assert_int_equal(seen.n, 0);
    assert_int_equal(foreach_text("12\n0\n345\n", &seen, NULL), 3);
    assert_int_equal(seen.n, 2);
    assert_int_equal(seen.pid[0], 12);
    assert_int_equal(seen.pid[1], 345);
    assert_int_equal(foreach_text("", &seen, NULL), 0);
    /* The last line without its newline still counts. */
    assert_int_equal(foreach_text("7", &seen, NULL), 1);
    assert_int_equal(seen.pid[0], 7);
}

static void
test_procs_parsed_strictly(void **state)
{
    /* Nothing but a decimal pid per line: no sign (-1 is every process we may signal), no
     * blanks, no trailing junk, nothing past a pid_t. */
    static const char *const bad[] = {"-1\n", "+5\n",   " 5\n",         "5 \n",         "5x\n",
                                      "\n",   "0x10\n", "2147483648\n", "99999999999\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct seen_pids seen;
        struct pf_error *err = NULL;
        assert_int_equal(foreach_text(bad[i], &seen, &err), -1);
        assert_int_equal(seen.n, 0);
        assert_non_null(strstr(err->msg, "is not a pid"));
        pf_error_free(err);
    }
}

/* A slot whose cgroup.procs lists 0, emptied in a child that leads its own process group: were
 * the 0 passed to kill, SIGKILL would end the whole group, the child with it. */
static void
test_kill_listed_spares_own_group(void **state)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/zero", root);
    fake_cgroup(dir);
    put(dir, "cgroup.procs", "0\n");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setpgid(0, 0) < 0)
            _exit(2);
        struct pf_error *err = NULL;
        /* The 0 never goes away here: the bounded retries end with an error. */
        int r = cgroup_kill_listed(dir, &err);
        _exit(r < 0 && strstr(err->msg, "still has processes") ? 0 : 3);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int
main(void)
{
    snprintf(root, sizeof(root), "/tmp/pf-cgv2-XXXXXX");
    if (!mkdtemp(root))
        return 1;
    fake_cgroup(root);
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_choose_prefers_v2),
            cmocka_unit_test(test_pool_limits_events),
            cmocka_unit_test(test_empty_slot_not_killed),
            cmocka_unit_test(test_foreign_processes_not_moved),
            cmocka_unit_test(test_later_zygotes_use_the_delegated_cgroup),
            cmocka_unit_test(test_procs_zero_listed_not_passed_on),
            cmocka_unit_test(test_procs_parsed_strictly),
            cmocka_unit_test(test_kill_listed_spares_own_group),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s, ignoring\n", root);
    return r;
}
