/* harden_fork_into_cgroup() against this host's real cgroup2 mount (on this project's CI hosts
 * it has no memory or pids controller, but a child can still be created inside one of its
 * directories): the child starts in the directory, and glibc's thread-id slot in it holds its
 * own id, as after glibc's fork(); without a directory, with a directory clone3 refuses, the child
 * is an ordinary fork in the parent's cgroup. With CLONE_NEWPID (the zygote in a user namespace
 * of its own) the child is the init of a new pid namespace, with or without the directory. */
/* cmocka.h needs these first, in this order. */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harden_internal.h"
#include "harden_zygote.h"

static char cgroup2_mnt[4096]; /* "" when this host has no cgroup2 mount */
static char test_dir[4200];    /* a directory of ours in it */

/* The first cgroup2 mount point in /proc/self/mountinfo. */
static void
find_cgroup2(void)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    assert_non_null(f);
    char line[8192];
    while (fgets(line, sizeof(line), f)) {
        char *sep = strstr(line, " - cgroup2 ");
        if (!sep)
            continue;
        char mnt[4096];
        if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1) {
            snprintf(cgroup2_mnt, sizeof(cgroup2_mnt), "%s", mnt);
            break;
        }
    }
    fclose(f);
}

/* "ok" when glibc's thread-id slot (the clear_child_tid address) holds this thread's id. */
static const char *
tid_slot_state(void)
{
    int *slot = NULL;
    if (prctl(PR_GET_TID_ADDRESS, &slot, 0, 0, 0) < 0)
        return "unreadable";
    if (!slot)
        return "unregistered";
    return *slot == (int) syscall(SYS_gettid) ? "ok" : "stale";
}

/* The calling process's cgroup v2 path ("" when it has none), from /proc/self/cgroup. */
static void
own_cgroup(char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/self/cgroup", "re");
    char line[4096];
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(buf, len, "%s", line + 3);
        }
    if (f)
        fclose(f);
}

/* In the child: writes "<its cgroup v2 path>;tid=<state>;pid=<1 or other>" to fd and exits. */
static void
child_report(int fd)
{
    char cg[4096], out[4200];
    own_cgroup(cg, sizeof(cg));
    int n = snprintf(out, sizeof(out), "%s;tid=%s;pid=%s", cg, tid_slot_state(),
                     getpid() == 1 ? "1" : "other");
    ssize_t w = write(fd, out, (size_t) n);
    _exit(w == n ? 0 : 1);
}

/* Forks with harden_fork_into_cgroup(cgroup_fd, ns_flags) and returns what the child reported. */
static void
fork_and_report(int cgroup_fd, uint64_t ns_flags, bool *ret_placed, char *out, size_t out_len)
{
    int p[2];
    assert_int_equal(pipe2(p, O_CLOEXEC), 0);
    fflush(NULL);
    bool placed = false;
    pid_t pid = harden_fork_into_cgroup(cgroup_fd, ns_flags, &placed);
    if (pid == 0) {
        close(p[0]);
        child_report(p[1]);
    }
    assert_true(pid > 0);
    close(p[1]);
    ssize_t n = read(p[0], out, out_len - 1);
    close(p[0]);
    out[n > 0 ? n : 0] = '\0';
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    *ret_placed = placed;
}

/* Forks with (cgroup_fd, ns_flags); the child must have started in the caller's own cgroup,
 * with glibc's thread-id slot right, as pid `pid` ("1" or "other"). */
static void
expect_in_own_cgroup(int cgroup_fd, uint64_t ns_flags, const char *pid)
{
    char own[4096], out[4200], want[4200];
    own_cgroup(own, sizeof(own));
    bool placed = true;
    fork_and_report(cgroup_fd, ns_flags, &placed, out, sizeof(out));
    assert_false(placed);
    snprintf(want, sizeof(want), "%s;tid=ok;pid=%s", own, pid);
    assert_string_equal(out, want);
}

/* The same, forked into our test directory of the cgroup2 mount. */
static void
expect_in_test_dir(uint64_t ns_flags, const char *pid)
{
    int fd = open(test_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    assert_true(fd >= 0);
    char out[4200];
    bool placed = false;
    fork_and_report(fd, ns_flags, &placed, out, sizeof(out));
    close(fd);
    print_message("# child: %s\n", out);
    assert_true(placed);
    /* The path is relative to the mount's root: it ends with our directory's name. */
    char want[128];
    snprintf(want, sizeof(want), "/pyfence-forktest-%d;tid=ok;pid=%s", (int) getpid(), pid);
    size_t lo = strlen(out), lw = strlen(want);
    assert_true(lo >= lw);
    assert_string_equal(out + lo - lw, want);
}

/* Not a cgroup directory: clone3 refuses it (EBADF). */
static void
expect_refused_directory(uint64_t ns_flags, const char *pid)
{
    int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    assert_true(fd >= 0);
    expect_in_own_cgroup(fd, ns_flags, pid);
    close(fd);
}

static bool
clone3_usable(void)
{
    char why[256];
    return harden_fork_into_cgroup_usable(why, sizeof(why));
}

static void
test_child_starts_in_the_cgroup(void **state)
{
    if (!cgroup2_mnt[0] || !clone3_usable())
        skip();
    expect_in_test_dir(0, "other");
}

static void
test_no_directory_is_a_plain_fork(void **state)
{
    expect_in_own_cgroup(-1, 0, "other");
}

static void
test_refused_directory_falls_back_to_fork(void **state)
{
    if (!clone3_usable())
        skip();
    /* The child is forked all the same. */
    expect_refused_directory(0, "other");
    /* One refusal of that kind does not disable forking into cgroups; it is named. */
    char why[256];
    assert_true(harden_fork_into_cgroup_usable(why, sizeof(why)));
    print_message("# after the refusal: %s\n", why);
    assert_non_null(strstr(why, "clone3(CLONE_INTO_CGROUP): "));
}

static void
test_new_pid_namespace_without_a_directory(void **state)
{
    if (!clone3_usable())
        skip();
    expect_in_own_cgroup(-1, CLONE_NEWPID, "1");
}

static void
test_new_pid_namespace_in_the_cgroup(void **state)
{
    if (!cgroup2_mnt[0] || !clone3_usable())
        skip();
    expect_in_test_dir(CLONE_NEWPID, "1");
}

static void
test_refused_directory_still_makes_the_namespace(void **state)
{
    if (!clone3_usable())
        skip();
    /* The namespace is not given up with the directory. */
    expect_refused_directory(CLONE_NEWPID, "1");
}

/* A zygote's stand-in forks a worker into a new pid namespace, where getppid() is 0 whether the
 * zygote lives or not, then exits at once or waits for it. The worker, once the zygote is gone
 * (or straight away), runs the fds layer's parent check and reports what it said ("ok" or the
 * error) in out. */
static void
parent_check_in_own_pidns(bool zygote_dies, char *out, size_t out_len)
{
    int report[2];
    assert_int_equal(pipe2(report, O_CLOEXEC), 0);
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
    fflush(NULL);
    pid_t zygote = fork();
    assert_true(zygote >= 0);
    if (zygote == 0) {
        close(report[0]);
        harden_expect_parent(getpid());
        /* The worker waits on the zygote's pidfd, readable once it has exited: EOF on a pipe
         * it held would come earlier, when its files are closed, while it still lives. */
        int life = pidfd_open(getpid(), 0);
        bool placed;
        if (life < 0)
            _exit(2);
        pid_t worker = harden_fork_into_cgroup(-1, CLONE_NEWPID, &placed);
        if (worker == 0) {
            struct pollfd gone = {.fd = life, .events = POLLIN};
            while (zygote_dies && poll(&gone, 1, -1) < 0 && errno == EINTR)
                ;
            struct pf_error *err = NULL;
            const char *said = harden_fds_die_with_parent(&err) < 0 ? err->msg : "ok";
            _exit(write(report[1], said, strlen(said)) > 0 && getpid() == 1 ? 0 : 1);
        }
        _exit(worker > 0 && (zygote_dies || waitpid(worker, NULL, 0) == worker) ? 0 : 3);
    }
    close(report[1]);
    int status;
    assert_int_equal(waitpid(zygote, &status, 0), zygote);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* EOF once the worker is gone too; it was re-parented to us, and is reaped here. */
    size_t len = 0;
    ssize_t n;
    while ((n = read(report[0], out + len, out_len - 1 - len)) > 0)
        len += (size_t) n;
    out[len] = '\0';
    close(report[0]);
    while (waitpid(-1, NULL, 0) > 0)
        ;
    assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
}

static void
test_zygote_death_seen_from_own_pid_namespace(void **state)
{
    if (!clone3_usable())
        skip();
    char out[512];
    parent_check_in_own_pidns(true, out, sizeof(out));
    print_message("# worker said: %s\n", out);
    assert_non_null(strstr(out, "died before the worker was hardened"));
    /* The neighbour: a zygote alive and waiting passes the same check. */
    parent_check_in_own_pidns(false, out, sizeof(out));
    assert_string_equal(out, "ok");
}

int
main(void)
{
    if (geteuid() != 0) {
        printf("making a cgroup needs root: skipping\n");
        return 77;
    }
    find_cgroup2();
    if (cgroup2_mnt[0]) {
        snprintf(test_dir, sizeof(test_dir), "%s/pyfence-forktest-%d", cgroup2_mnt, (int) getpid());
        if (mkdir(test_dir, 0755) < 0) {
            printf("# cannot make %s: %m\n", test_dir);
            cgroup2_mnt[0] = '\0';
        }
    }
    char why[256];
    printf("# cgroup2 mount: %s; fork into a cgroup: %s\n", cgroup2_mnt[0] ? cgroup2_mnt : "none",
           harden_fork_into_cgroup_usable(why, sizeof(why)) ? "usable" : why);
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_child_starts_in_the_cgroup),
            cmocka_unit_test(test_no_directory_is_a_plain_fork),
            cmocka_unit_test(test_refused_directory_falls_back_to_fork),
            cmocka_unit_test(test_new_pid_namespace_without_a_directory),
            cmocka_unit_test(test_new_pid_namespace_in_the_cgroup),
            cmocka_unit_test(test_refused_directory_still_makes_the_namespace),
            cmocka_unit_test(test_zygote_death_seen_from_own_pid_namespace),
    };
    int r = cmocka_run_group_tests(tests, NULL, NULL);
    if (cgroup2_mnt[0] && rmdir(test_dir) < 0)
        printf("# rmdir %s: %m\n", test_dir);
    return r;
}
