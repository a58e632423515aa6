/* The namespaces and Landlock layers, each alone and together, in a forked child that is (for
 * namespaces) the init of the fresh pid namespace the zygote side prepared: no network, no host
 * file beyond the read-only view, a private writable /tmp, a /proc showing itself alone. */
/* cmocka.h needs these first, in this order. */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "harden_internal.h"
#include "harden_test_child.h"
#include "harden_zygote.h"

/* A writable mount below /usr, made in the test's own mount namespace before the view (see
 * mount_below_usr): the view must show it read-only too. */
#define SUBMOUNT "/usr/local"
static bool have_submount;

/* scratch_mb apart from file_size_mb: the tmpfs must take its size from the former. */
static struct harden_params params = {.file_size_mb = 4, .scratch_mb = 3};

static void
say_errno(const char *what, int r)
{
    char line[128];
    snprintf(line, sizeof(line), "%s=%s;", what, r == 0 ? "ok" : strerrorname_np(errno));
    child_say(line);
}

static int
connect_loopback(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int r = connect(fd, (struct sockaddr *) &sa, sizeof(sa));
    int e = errno;
    close(fd);
    errno = e;
    return r;
}

static int
probe(void)
{
    char line[128];
    snprintf(line, sizeof(line), "pid=%d;", (int) getpid());
    child_say(line);
    say_errno("shadow", open("/etc/shadow", O_RDONLY | O_CLOEXEC) < 0 ? -1 : 0);
    say_errno("python", access("/usr/lib/python3.11/os.py", R_OK));
    say_errno("write_usr",
              open("/usr/pyfence-test", O_CREAT | O_WRONLY | O_CLOEXEC, 0600) < 0 ? -1 : 0);
    if (have_submount)
        say_errno("write_submount",
                  open(SUBMOUNT "/pyfence-test", O_CREAT | O_WRONLY | O_CLOEXEC, 0600) < 0 ? -1
                                                                                           : 0);
    int fd = open("/tmp/scratch-file", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    say_errno("write_tmp", fd < 0 ? -1 : 0);
    if (fd >= 0) {
        close(fd);
        unlink("/tmp/scratch-file");
    }
    struct statvfs sv;
    if (statvfs("/tmp", &sv) == 0) {
        snprintf(line, sizeof(line), "tmp_mb=%llu;",
                 (unsigned long long) sv.f_blocks * sv.f_frsize / (1024 * 1024));
        child_say(line);
    }
    say_errno("devnull", open("/dev/null", O_WRONLY | O_CLOEXEC) < 0 ? -1 : 0);
    say_errno("status", open("/proc/self/status", O_RDONLY | O_CLOEXEC) < 0 ? -1 : 0);
    say_errno("connect", connect_loopback());
    say_errno("kill_parent", kill(getppid() > 0 ? getppid() : 1, 0));
    /* /dev holds the three devices and the links into /proc/self/fd, nothing else. */
    static const char *const expected[] = {"null",   "urandom", "zero",  "fd",
                                           "stderr", "stdin",   "stdout"};
    char devs[256] = "devices=";
    for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
        char p[64];
        struct stat st;
        snprintf(p, sizeof(p), "/dev/%s", expected[i]);
        if (lstat(p, &st) == 0) {
            strcat(devs, expected[i]);
            strcat(devs, ",");
        }
    }
    int n_dev = 0;
    DIR *dd = opendir("/dev");
    for (struct dirent *e; dd && (e = readdir(dd));)
        if (e->d_name[0] != '.')
            n_dev++;
    if (dd)
        closedir(dd);
    if (n_dev != (int) (sizeof(expected) / sizeof(expected[0])))
        strcat(devs, "EXTRA,");
    devs[strlen(devs) - 1] = ';';
    child_say(devs);
    char host[64] = "";
    gethostname(host, sizeof(host));
    snprintf(line, sizeof(line), "host=%s;", host);
    child_say(line);
    int procs = 0;
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
            procs++;
    if (d)
        closedir(d);
    snprintf(line, sizeof(line), "procs=%d;", procs);
    child_say(line);
    return 0;
}

static int
apply_layers(void *arg)
{
    const char *which = arg;
    struct pf_error *err = NULL;
    if (strchr(which, 'n') && harden_namespaces_apply(&params, &err) < 0) {
        child_say(err->msg);
        return 2;
    }
    if (strchr(which, 'l') && harden_landlock_apply(&params, &err) < 0) {
        child_say(err->msg);
        return 3;
    }
    return probe();
}

static void
run(const char *which, bool new_pid_ns, struct child_result *r)
{
    struct pf_error *err = NULL;
    if (harden_ns_prefork(new_pid_ns, &err) < 0)
        fail_msg("prefork: %s", err->msg);
    assert_int_equal(run_child(apply_layers, (void *) which, r), 0);
    assert_int_equal(harden_ns_prefork(false, &err), 0);
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0)
        fail_msg("child: status %d: %s", r->status, r->out);
    print_message("# %s: %s\n", which, r->out);
}

static void
test_namespaces_alone(void **state)
{
    if (!harden_ns_have_netns() || !harden_ns_have_mount_view())
        skip();
    struct child_result r;
    run("n", true, &r);
    assert_non_null(strstr(r.out, "pid=1;"));
    assert_non_null(strstr(r.out, "shadow=ENOENT;"));
    assert_non_null(strstr(r.out, "python=ok;"));
    assert_non_null(strstr(r.out, "write_usr=EROFS;"));
    /* The host's mount below /usr (writable there) came into the view read-only. */
    if (have_submount)
        assert_non_null(strstr(r.out, "write_submount=EROFS;"));
    assert_non_null(strstr(r.out, "write_tmp=ok;"));
    assert_non_null(strstr(r.out, "tmp_mb=3;"));
    assert_non_null(strstr(r.out, "devnull=ok;"));
    assert_non_null(strstr(r.out, "devices=null,urandom,zero,fd,stderr,stdin,stdout;"));
    assert_non_null(strstr(r.out, "status=ok;"));
    assert_non_null(strstr(r.out, "connect=ENETUNREACH;"));
    assert_non_null(strstr(r.out, "host=pyfence;"));
    assert_non_null(strstr(r.out, "procs=1;"));
}

static void
test_landlock_alone(void **state)
{
    if (harden_landlock_abi() <= 0)
        skip();
    struct child_result r;
    run("l", false, &r);
    assert_non_null(strstr(r.out, "shadow=EACCES;"));
    assert_non_null(strstr(r.out, "python=ok;"));
    assert_non_null(strstr(r.out, "write_usr=EACCES;"));
    /* No private scratch without the mount namespace: the host's /tmp stays out of reach. */
    assert_non_null(strstr(r.out, "write_tmp=EACCES;"));
    assert_non_null(strstr(r.out, "devnull=ok;"));
    assert_non_null(strstr(r.out, "status=ok;"));
    if (harden_landlock_abi() >= 4)
        assert_non_null(strstr(r.out, "connect=EACCES;"));
    if (harden_landlock_abi() >= 6)
        assert_non_null(strstr(r.out, "kill_parent=EPERM;"));
}

static void
test_namespaces_then_landlock(void **state)
{
    if (!harden_ns_have_netns() || !harden_ns_have_mount_view() || harden_landlock_abi() <= 0)
        skip();
    struct child_result r;
    run("nl", true, &r);
    assert_non_null(strstr(r.out, "pid=1;"));
    assert_non_null(strstr(r.out, "write_tmp=ok;"));
    assert_non_null(strstr(r.out, "python=ok;"));
    assert_non_null(strstr(r.out, "status=ok;"));
    assert_non_null(strstr(r.out, "procs=1;"));
}

static int
report_pid(void *arg)
{
    char line[32];
    snprintf(line, sizeof(line), "pid=%d", (int) getpid());
    child_say(line);
    return 0;
}

static void
test_concurrent_workers_each_get_a_pid_namespace(void **state)
{
    /* Two jobs prepared and forked before either ends (a busy zygote): both are pid 1. */
    struct pf_error *err = NULL;
    struct child_result r;
    for (int i = 0; i < 3; i++) {
        if (harden_ns_prefork(true, &err) < 0)
            fail_msg("prefork %d: %s", i, err->msg);
        assert_int_equal(run_child(report_pid, NULL, &r), 0);
        assert_string_equal(r.out, "pid=1");
    }
    assert_int_equal(harden_ns_prefork(false, &err), 0);
    assert_int_equal(run_child(report_pid, NULL, &r), 0);
    assert_string_not_equal(r.out, "pid=1");
}

/* A process whose children were to get a pid namespace, applying the layer itself, as a worker
 * that a fork() fallback left in the zygote's namespace would: the layer refuses. */
static int
apply_outside_own_pidns(void *arg)
{
    (void) arg;
    struct pf_error *err = NULL;
    if (harden_ns_prefork(true, &err) < 0) {
        child_say("prefork failed");
        return 3;
    }
    if (harden_namespaces_apply(&params, &err) < 0) {
        child_say(err->msg);
        return 2;
    }
    return 0;
}

static void
test_a_worker_outside_its_pid_namespace_is_refused(void **state)
{
    if (!harden_ns_have_mount_view())
        skip();
    struct child_result r;
    assert_int_equal(run_child(apply_outside_own_pidns, NULL, &r), 0);
    print_message("# %s\n", r.out);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2);
    assert_non_null(strstr(r.out, "not the init of a pid namespace of its own"));
}

/* A worker that applies the namespaces layer, writes its ipc namespace's name on fd 3, and
 * stays alive (so that its namespace cannot be freed and its number reused) until fd 3 reads
 * EOF. Returns the parent's end of the channel, or -1. */
static int
start_ipc_worker(pid_t *ret_pid)
{
    int sv[2];
    struct pf_error *err = NULL;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
        harden_ns_prefork(true, &err) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        if (dup2(sv[1], 3) < 0 || harden_namespaces_apply(&params, &err) < 0)
            _exit(2);
        char ns[64] = "";
        ssize_t n = readlink("/proc/self/ns/ipc", ns, sizeof(ns) - 1);
        if (n <= 0 || write(3, ns, (size_t) n) != n)
            _exit(3);
        char c;
        _exit(read(3, &c, 1) == 0 ? 0 : 4);
    }
    close(sv[1]);
    *ret_pid = pid;
    if (pid < 0) {
        close(sv[0]);
        return -1;
    }
    return sv[0];
}

static void
test_each_worker_has_its_own_ipc_namespace(void **state)
{
    /* Made ahead by the zygote between jobs (a spare) or by the worker itself (forks back to
     * back): never shared, never the zygote's own. */
    if (!harden_ns_have_netns() || !harden_ns_have_mount_view())
        skip();
    enum { N = 4 };
    char names[N + 1][64] = {{0}};
    assert_true(readlink("/proc/self/ns/ipc", names[N], sizeof(names[N]) - 1) > 0);
    int fds[N];
    pid_t pids[N];
    struct pf_error *err = NULL;
    for (int i = 0; i < N; i++) {
        /* Every other fork after a job's end (a spare was made), the others back to back. */
        if (i % 2 == 0)
            assert_int_equal(harden_ns_prefork(false, &err), 0);
        fds[i] = start_ipc_worker(&pids[i]);
        assert_true(fds[i] >= 0);
        assert_true(read(fds[i], names[i], sizeof(names[i]) - 1) > 0);
    }
    /* All at once: a worker forked later holds copies of the earlier ones' channels. */
    for (int i = 0; i < N; i++)
        close(fds[i]);
    for (int i = 0; i < N; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    assert_int_equal(harden_ns_prefork(false, &err), 0);
    for (int i = 0; i < N; i++) {
        print_message("# worker %d: %s\n", i, names[i]);
        assert_non_null(strstr(names[i], "ipc:["));
        for (int j = i + 1; j <= N; j++)
            assert_string_not_equal(names[i], names[j]);
    }
}

static void
test_zygote_untouched(void **state)
{
    /* Making the view must leave the zygote in its own namespaces. */
    assert_int_equal(access("/etc/hostname", F_OK) == 0 || access("/etc/passwd", F_OK) == 0, 1);
    char a[64], b[64];
    ssize_t n1 = readlink("/proc/self/ns/mnt", a, sizeof(a) - 1);
    ssize_t n2 = readlink("/proc/1/ns/mnt", b, sizeof(b) - 1);
    if (n1 > 0 && n2 > 0) {
        a[n1] = b[n2] = '\0';
        assert_string_equal(a, b);
    }
}

/* A writable tmpfs on SUBMOUNT, in a private mount namespace of the test's own (the host's stays
 * as it is), as a host with a separate /usr/local has: harden_ns_prepare's view then holds it. */
static void
mount_below_usr(void)
{
    struct stat st;
    if (stat(SUBMOUNT, &st) < 0 || !S_ISDIR(st.st_mode) || unshare(CLONE_NEWNS) < 0 ||
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("pyfence-test", SUBMOUNT, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0) {
        printf("# no writable mount below /usr for the view: %s\n", strerror(errno));
        return;
    }
    have_submount = true;
}

int
main(void)
{
    if (geteuid() != 0) {
        printf("namespaces need root here: skipping\n");
        return 77;
    }
    mount_below_usr();
    struct pf_error *err = NULL;
    if (harden_ns_prepare(&err) < 0) {
        printf("# namespaces unavailable: %s\n", err->msg);
        err = pf_error_free(err);
    }
    if (!harden_ns_have_netns() && harden_landlock_abi() <= 0) {
        printf("neither namespaces nor Landlock on this host: skipping\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_namespaces_alone),
            cmocka_unit_test(test_landlock_alone),
            cmocka_unit_test(test_namespaces_then_landlock),
            cmocka_unit_test(test_concurrent_workers_each_get_a_pid_namespace),
            cmocka_unit_test(test_a_worker_outside_its_pid_namespace_is_refused),
            cmocka_unit_test(test_each_worker_has_its_own_ipc_namespace),
            cmocka_unit_test(test_zygote_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
