/* The seccomp layer alone, in a forked child: a forbidden call dies with SIGSYS after writing a
 * frame that names it; the allowed neighbour works; threads only when the pids limit allows. */
/* cmocka.h needs these first, in this order. */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "harden_internal.h"
#include "harden_test_child.h"
#include "harden_zygote.h"

static struct harden_params params;

static int
apply(uint64_t pids)
{
    struct pf_error *err = NULL;
    params.pids = pids;
    params.level[HARDEN_LAYER_SECCOMP] = HARDEN_REQUIRED;
    if (harden_seccomp_apply(&params, &err) < 0) {
        child_say(err->msg);
        return 2;
    }
    return 0;
}

/* Runs body(arg) after the filter; asserts that the child said "ok" then trapped on
 * `syscall`. */
static void
expect_trap_arg(child_fn body, void *arg, const char *syscall)
{
    struct child_result r;
    assert_int_equal(run_child(body, arg, &r), 0);
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), HARDEN_SECCOMP_EXIT_CODE);
    assert_true(r.len > 2);
    assert_memory_equal(r.out, "ok", 2);
    size_t n;
    const char *json = frame_json(&r, 2, &n);
    assert_non_null(json);
    char want[128];
    snprintf(want, sizeof(want), "{\"event\":\"seccomp\",\"syscall\":\"%s\"}", syscall);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(json, want, n);
}

static void
expect_trap(child_fn body, const char *syscall)
{
    expect_trap_arg(body, NULL, syscall);
}

static int
do_socket(void *arg)
{
    if (apply(16))
        return 2;
    child_say("ok");
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    return fd >= 0 ? 3 : 4;
}

static void
test_socket_traps(void **state)
{
    expect_trap(do_socket, "socket");
}

static int
do_execve(void *arg)
{
    if (apply(16))
        return 2;
    child_say("ok");
    char *argv[] = {"sh", "-c", "true", NULL};
    execve("/bin/sh", argv, NULL);
    return 4;
}

static void
test_execve_traps(void **state)
{
    expect_trap(do_execve, "execve");
}

static int
do_fork(void *arg)
{
    if (apply(16))
        return 2;
    child_say("ok");
    pid_t pid = fork();
    return pid == 0 ? 5 : 4;
}

static void
test_fork_traps(void **state)
{
    /* glibc's fork is clone() without CLONE_THREAD. */
    expect_trap(do_fork, "clone");
}

static int
do_sigaction_sigsys(void *arg)
{
    if (apply(16))
        return 2;
    child_say("ok");
    signal(SIGSYS, SIG_IGN);
    return 4;
}

static void
test_sigsys_handler_stays(void **state)
{
    expect_trap(do_sigaction_sigsys, "rt_sigaction");
}

/* The kernel's struct sigaction on x86_64 and arm64 (not glibc's): handler, flags, restorer,
 * mask. Zeroed, it asks for SIG_DFL. */
struct kernel_sigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    unsigned long mask;
};

static int
do_sigaction_sigsys_high_bits(void *arg)
{
    if (apply(16))
        return 2;
    child_say("ok");
    /* The kernel reads the signal number as an int: this is SIGSYS to it, whatever the filter
     * compared. Let through, it would make the next trap kill without a frame. */
    struct kernel_sigaction ka = {0};
    syscall(SYS_rt_sigaction, (1UL << 32) | SIGSYS, &ka, NULL, sizeof(ka.mask));
    return 4;
}

static void
test_sigsys_handler_stays_high_bits(void **state)
{
    expect_trap(do_sigaction_sigsys_high_bits, "rt_sigaction");
}

static int
do_query_sigsys(void *arg)
{
    if (apply(16))
        return 2;
    /* The neighbour: reading the handler (Python's signal module does it for every signal). */
    struct sigaction old;
    if (sigaction(SIGSYS, NULL, &old) < 0)
        return 3;
    child_say("ok");
    return 0;
}

static void
test_sigsys_handler_readable(void **state)
{
    struct child_result r;
    assert_int_equal(run_child(do_query_sigsys, NULL, &r), 0);
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), 0);
    assert_string_equal(r.out, "ok");
}

static int
do_unshare(void *arg)
{
    if (apply(16))
        return 2;
    child_say("ok");
    unshare(0);
    return 4;
}

static void
test_unshare_traps(void **state)
{
    expect_trap(do_unshare, "unshare");
}

static volatile sig_atomic_t got_usr1;

static void
on_usr1(int sig)
{
    got_usr1 = 1;
}

static int
do_signal_others(void *arg)
{
    signal(SIGUSR1, on_usr1);
    pid_t parent = getppid();
    if (apply(16))
        return 2;
    /* The neighbours: signals to itself, by kill and by raise (tgkill). */
    if (kill(getpid(), 0) < 0 || raise(SIGUSR1) != 0 || !got_usr1)
        return 3;
    child_say("ok");
    kill(parent, 0);
    return 4;
}

static void
test_signals_to_self_only(void **state)
{
    expect_trap(do_signal_others, "kill");
}

/* fcntl commands that would let the channel signal another process when the daemon writes to
 * it (F_SETOWN, F_SETSIG, O_ASYNC through F_SETFL): each traps on its own. */
struct fcntl_call {
    int cmd;
    long arg;      /* for F_SETOWN: 0 means the parent's pid */
    bool or_flags; /* F_SETFL: arg is or-ed into the flags F_GETFL reads */
};

static int
do_fcntl_call(void *arg)
{
    const struct fcntl_call *c = arg;
    long value = c->cmd == F_SETOWN && c->arg == 0 ? (long) getppid() : c->arg;
    if (apply(16))
        return 2;
    if (c->or_flags) {
        int fl = fcntl(HARDEN_CHANNEL_FD, F_GETFL);
        if (fl < 0)
            return 3;
        value |= fl;
    }
    child_say("ok");
    fcntl(HARDEN_CHANNEL_FD, c->cmd, value);
    return 4;
}

static void
test_fcntl_setown_traps(void **state)
{
    struct fcntl_call c = {.cmd = F_SETOWN};
    expect_trap_arg(do_fcntl_call, &c, "fcntl");
}

static void
test_fcntl_setsig_traps(void **state)
{
    struct fcntl_call c = {.cmd = F_SETSIG, .arg = SIGKILL};
    expect_trap_arg(do_fcntl_call, &c, "fcntl");
}

static void
test_fcntl_async_traps(void **state)
{
    struct fcntl_call c = {.cmd = F_SETFL, .arg = O_ASYNC, .or_flags = true};
    expect_trap_arg(do_fcntl_call, &c, "fcntl");
}

static int
do_fcntl_allowed(void *arg)
{
    if (apply(16))
        return 2;
    /* The neighbours: what CPython's os and io do (get_blocking/set_blocking, set_inheritable,
     * os.dup). */
    int fl = fcntl(HARDEN_CHANNEL_FD, F_GETFL);
    if (fl < 0 || fcntl(HARDEN_CHANNEL_FD, F_SETFL, fl | O_NONBLOCK) < 0)
        return 3;
    if (!(fcntl(HARDEN_CHANNEL_FD, F_GETFL) & O_NONBLOCK) ||
        fcntl(HARDEN_CHANNEL_FD, F_SETFL, fl) < 0)
        return 4;
    int fd = fcntl(HARDEN_CHANNEL_FD, F_DUPFD_CLOEXEC, 10);
    if (fd < 10 || !(fcntl(fd, F_GETFD) & FD_CLOEXEC) || fcntl(fd, F_SETFD, 0) < 0)
        return 5;
    int fd2 = fcntl(fd, F_DUPFD, 10);
    if (fd2 < 10)
        return 6;
    close(fd2);
    close(fd);
    child_say("ok");
    return 0;
}

static void
test_fcntl_allowed_neighbours(void **state)
{
    struct child_result r;
    assert_int_equal(run_child(do_fcntl_allowed, NULL, &r), 0);
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), 0);
    assert_string_equal(r.out, "ok");
}

static void *
thread_main(void *arg)
{
    return arg;
}

static int
do_thread(void *arg)
{
    uint64_t pids = (uint64_t) (uintptr_t) arg;
    if (apply(pids))
        return 2;
    child_say("ok");
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0)
        return 6;
    pthread_join(t, NULL);
    child_say("joined");
    return 0;
}

static int
do_thread_one(void *arg)
{
    return do_thread((void *) (uintptr_t) 1);
}

static void
test_threads_only_when_allowed(void **state)
{
    struct child_result r;
    /* pids > 1: a thread is fine (clone3 gets ENOSYS, glibc falls back to clone). */
    assert_int_equal(run_child(do_thread, (void *) (uintptr_t) 16, &r), 0);
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), 0);
    assert_string_equal(r.out, "okjoined");
    /* pids == 1: the same clone traps. glibc blocks every signal around its clone, so the
     * forced SIGSYS kills the child outright instead of running the handler: no frame then. */
    assert_int_equal(run_child(do_thread_one, NULL, &r), 0);
    assert_true(WIFSIGNALED(r.status));
    assert_int_equal(WTERMSIG(r.status), SIGSYS);
    assert_string_equal(r.out, "ok");
}

static int
do_allowed(void *arg)
{
    if (apply(16))
        return 2;
    /* The neighbours of what is forbidden: files, memory, time, getpid, pipes. */
    char buf[8192];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 10;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 11;
    buf[n] = '\0';
    if (!strstr(buf, "Seccomp:\t2") || !strstr(buf, "NoNewPrivs:\t1"))
        return 12;
    void *m = malloc(64 << 20);
    if (!m)
        return 13;
    memset(m, 1, 64 << 20);
    free(m);
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return 14;
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0 || getpid() <= 0)
        return 15;
    child_say("ok");
    return 0;
}

static void
test_allowed_neighbours(void **state)
{
    struct child_result r;
    assert_int_equal(run_child(do_allowed, NULL, &r), 0);
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), 0);
    assert_string_equal(r.out, "ok");
}

/* A file's mode and times by path: Landlock does not cover them, so a worker running as the
 * daemon's uid could open the daemon's socket to everyone. */
struct path_call {
    const char *path;
    long nr;
};

static int
do_path_call(void *arg)
{
    const struct path_call *c = arg;
    if (apply(16))
        return 2;
    child_say("ok");
    if (c->nr == SYS_fchmodat)
        syscall(SYS_fchmodat, AT_FDCWD, c->path, 0777, 0);
    else if (c->nr == SYS_utimensat)
        syscall(SYS_utimensat, AT_FDCWD, c->path, NULL, 0);
    else
        syscall(c->nr, c->path, 0777); /* chmod */
    return 4;
}

static void
expect_path_call_traps(long nr, const char *name)
{
    char path[] = "/tmp/pyfence-test-mode-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct path_call c = {.path = path, .nr = nr};
    expect_trap_arg(do_path_call, &c, name);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    unlink(path);
}

static void
test_chmod_by_path_traps(void **state)
{
#ifdef SYS_chmod
    expect_path_call_traps(SYS_chmod, "chmod");
#else
    skip(); /* no chmod syscall on this architecture (arm64: fchmodat only) */
#endif
}

static void
test_fchmodat_traps(void **state)
{
    expect_path_call_traps(SYS_fchmodat, "fchmodat");
}

static void
test_utimensat_by_path_traps(void **state)
{
    expect_path_call_traps(SYS_utimensat, "utimensat");
}

/* The neighbours: the mode and times of a file the worker opened (fchmod, futimens). */
static int
do_mode_by_fd(void *arg)
{
    int fd = open(arg, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return 3;
    if (apply(16))
        return 2;
    const struct timespec times[2] = {{.tv_sec = 1000}, {.tv_sec = 2000}};
    if (fchmod(fd, 0640) < 0)
        return 5;
    if (futimens(fd, times) < 0)
        return 6;
    child_say("ok");
    return 0;
}

static void
test_mode_by_fd_allowed(void **state)
{
    char path[] = "/tmp/pyfence-test-mode-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct child_result r;
    assert_int_equal(run_child(do_mode_by_fd, path, &r), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    unlink(path);
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), 0);
    assert_string_equal(r.out, "ok");
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(st.st_mtim.tv_sec, 2000);
}

#if defined(__x86_64__)
/* The i386 ABI from a 64-bit process (getpid is 20 there): not the native architecture. */
static long
int80_getpid(void)
{
    long ret;
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
    return ret;
}

static int
do_int80_unfiltered(void *arg)
{
    signal(SIGSEGV, SIG_DFL); /* cmocka's handler would go on with the tests in this child */
    return int80_getpid() > 0 ? 0 : 3;
}

static int
do_int80(void *arg)
{
    if (apply(16))
        return 2;
    child_say("ok");
    int80_getpid();
    return 4;
}

static void
test_non_native_abi_killed(void **state)
{
    struct child_result r;
    /* Some kernels take no i386 system call from a 64-bit process at all (ia32_emulation=0,
     * or a paravirtualised guest that does not route int 0x80: the probe dies of SIGSEGV):
     * there the filter's rule has nothing to bite on. */
    assert_int_equal(run_child(do_int80_unfiltered, NULL, &r), 0);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
        printf("this kernel runs no i386 system call from a 64-bit process (without a filter, "
               "int 0x80 ended the probe with %s %d): nothing for the filter to kill, skipping\n",
               WIFSIGNALED(r.status) ? "signal" : "exit status",
               WIFSIGNALED(r.status) ? WTERMSIG(r.status) : WEXITSTATUS(r.status));
        skip();
    }
    assert_int_equal(run_child(do_int80, NULL, &r), 0);
    /* Killed outright (SCMP_ACT_KILL_PROCESS): no frame, no handler. */
    assert_true(WIFSIGNALED(r.status));
    assert_int_equal(WTERMSIG(r.status), SIGSYS);
    assert_string_equal(r.out, "ok");
}
#endif

int
main(void)
{
    struct pf_error *err = NULL;
    if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
        printf("seccomp is not available in this kernel: skipping\n");
        return 77;
    }
    if (harden_seccomp_prepare(false, NULL, &err) < 0) {
        printf("cannot compile the filter: %s\n", err->msg);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_socket_traps),
        cmocka_unit_test(test_execve_traps),
        cmocka_unit_test(test_fork_traps),
        cmocka_unit_test(test_sigsys_handler_stays),
        cmocka_unit_test(test_sigsys_handler_stays_high_bits),
        cmocka_unit_test(test_sigsys_handler_readable),
        cmocka_unit_test(test_unshare_traps),
        cmocka_unit_test(test_signals_to_self_only),
        cmocka_unit_test(test_fcntl_setown_traps),
        cmocka_unit_test(test_fcntl_setsig_traps),
        cmocka_unit_test(test_fcntl_async_traps),
        cmocka_unit_test(test_fcntl_allowed_neighbours),
        cmocka_unit_test(test_threads_only_when_allowed),
        cmocka_unit_test(test_allowed_neighbours),
        cmocka_unit_test(test_chmod_by_path_traps),
        cmocka_unit_test(test_fchmodat_traps),
        cmocka_unit_test(test_utimensat_by_path_traps),
        cmocka_unit_test(test_mode_by_fd_allowed),
#if defined(__x86_64__)
        cmocka_unit_test(test_non_native_abi_killed),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
