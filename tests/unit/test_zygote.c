/* The zygote end to end: the daemon's client (zygote_client.c) starts the real pyfence-zygote,
 * which forks real workers that harden themselves and run snippets through the executor. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "frame.h"
#include "harden_internal.h"
#include "harden_params.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "worker_fixture.h"
#include "zygote.h"
#include "zygote_client_internal.h"

static char zygote_path[PATH_MAX];

struct job {
    pid_t pid;
    bool spawned, exited, spawn_failed;
    char error[256];
    struct zygote_exit exit;
};

static void
on_spawned(void *ctx, pid_t pid, const struct pf_error *err)
{
    struct job *j = ctx;
    j->spawned = true;
    j->pid = pid;
    if (err) {
        j->spawn_failed = true;
        snprintf(j->error, sizeof(j->error), "%s", err->msg);
    }
}

static void
on_exit_cb(void *ctx, const struct zygote_exit *e)
{
    struct job *j = ctx;
    j->exited = true;
    j->exit = *e;
}

static int
count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += de->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own fd */
}

struct frames {
    cJSON *output; /* all output data joined, as a string item */
    cJSON *result; /* the result frame */
    char data[64 * 1024];
    size_t data_len;
    int n_output_frames;
};

static int
on_frame(void *userdata, char *payload, size_t len)
{
    struct frames *f = userdata;
    cJSON *obj = NULL;
    struct pf_error *err = NULL;
    if (msg_parse(payload, len, MSG_MAX_DEPTH, &obj, &err) < 0)
        fail_msg("worker sent a bad frame: %s", err->msg);
    free(payload);
    const char *ev = msg_get_string(obj, "event", "");
    if (strcmp(ev, "output") == 0) {
        const char *d = msg_get_string(obj, "data", "");
        size_t n = strlen(d);
        assert_true(f->data_len + n < sizeof(f->data));
        memcpy(f->data + f->data_len, d, n);
        f->data_len += n;
        f->n_output_frames++;
        cJSON_Delete(obj);
    } else {
        assert_string_equal(ev, "result");
        assert_null(f->result);
        f->result = obj;
    }
    return 0;
}

/* Reads frames from the worker's channel until EOF (the worker exits after its result). */
static void
read_frames(int fd, struct frames *f)
{
    struct frame_decoder d;
    frame_decoder_init(&d, 64u << 20);
    char buf[8192];
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        assert_int_equal(poll(&pfd, 1, 15000), 1);
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EAGAIN)
            continue;
        /* A worker that exits without reading its run frame (hardening failed) resets the
         * connection: once its frames are read, that reads as ECONNRESET rather than EOF. */
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            break;
        assert_true(n > 0);
        assert_int_equal(frame_decoder_feed(&d, buf, (size_t) n, on_frame, f, NULL), n);
    }
    frame_decoder_finish(&d);
}

static ssize_t
write_run(int fd, const char *code, const char *limits_json)
{
    char json[1024];
    snprintf(json, sizeof(json), "{\"op\":\"run\",\"code\":\"%s\",\"limits\":%s}", code,
             limits_json ? limits_json : "{}");
    char *frame;
    size_t len;
    assert_int_equal(frame_encode(json, strlen(json), 64u << 20, &frame, &len, NULL), 0);
    ssize_t n = write(fd, frame, len);
    if (n >= 0)
        assert_int_equal(n, (ssize_t) len);
    free(frame);
    return n;
}

static void
send_run(int fd, const char *code, const char *limits_json)
{
    assert_true(write_run(fd, code, limits_json) >= 0);
}

/* A run that spins until it is killed. */
static void
send_spin(int fd)
{
    send_run(fd, "while True: pass",
             "{\"max_while_iterations\":1000000000,\"max_ops\":10000000000}");
}

/* A worker whose hardening fails answers and exits without reading its run frame: it may be
 * gone before the frame is written (EPIPE, or ECONNRESET once it closed with our bytes
 * unread), and its answer must still be there to read. */
static void
send_run_to_refusing(int fd, const char *code)
{
    if (write_run(fd, code, NULL) < 0 && errno != EPIPE && errno != ECONNRESET)
        fail_msg("writing the run frame: %s", strerror(errno));
}

static struct zygote *
start(uv_loop_t *loop)
{
    struct zygote_config cfg = {.path = zygote_path, .log_level = 4, .preload = NULL};
    struct zygote *z = NULL;
    struct pf_error *err = NULL;
    if (zygote_start(loop, &cfg, on_spawned, on_exit_cb, &z, &err) < 0)
        fail_msg("zygote_start: %s", err->msg);
    assert_true(zygote_pid(z) > 0);
    assert_true(strncmp(zygote_python_version(z), "3.", 2) == 0);
    return z;
}

static void
stop(uv_loop_t *loop, struct zygote *z)
{
    zygote_stop(z);
    uv_run(loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(loop), 0);
}

static int
spawn_with(struct zygote *z, uint64_t id, const struct harden_params *params, struct job *j)
{
    struct pf_error *err = NULL;
    int fd = -1;
    if (zygote_spawn(z, id, params, j, &fd, &err) < 0)
        fail_msg("zygote_spawn: %s", err->msg);
    return fd;
}

static int
spawn(struct zygote *z, uint64_t id, struct job *j)
{
    struct harden_params p;
    harden_params_init(&p);
    struct pf_error *err = NULL;
    int fd = -1;
    if (zygote_spawn(z, id, &p, j, &fd, &err) < 0)
        fail_msg("zygote_spawn: %s", err->msg);
    return fd;
}

/* A worker for job id, spinning once spawned; returns the channel. */
static int
spawn_spinning(uv_loop_t *loop, struct zygote *z, uint64_t id, struct job *j)
{
    int fd = spawn(z, id, j);
    send_spin(fd);
    assert_true(wfx_run_until(loop, &j->spawned, 10000));
    assert_false(j->spawn_failed);
    return fd;
}

static void
assert_reaped(pid_t pid)
{
    /* A zombie still answers kill(pid, 0); a reaped pid does not. */
    for (int i = 0; i < 200 && kill(pid, 0) == 0; i++)
        usleep(10000);

    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

static void
test_run_snippet(void **state)
{
    (void) state;
    int fds_before = count_fds();
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote *z = start(&loop);

    struct job j = {0};
    int fd = spawn(z, 1, &j);
    send_run(fd, "print(\\\"hi\\\")\\n1+1", NULL);
    struct frames f = {0};
    read_frames(fd, &f);
    close(fd);
    assert_true(wfx_run_until(&loop, &j.exited, 10000));
    assert_true(j.spawned && !j.spawn_failed);

    assert_non_null(f.result);
    assert_string_equal(msg_get_string(f.result, "outcome", ""), "ok");
    assert_int_equal(msg_get_int(f.result, "output", 0), 2);
    assert_string_equal(msg_get_string(f.result, "logs", ""), "hi\n");
    const cJSON *stats = cJSON_GetObjectItem(f.result, "stats");
    assert_non_null(cJSON_GetObjectItem(stats, "cpu_ms"));
    assert_true(msg_get_int(stats, "max_rss_kb", 0) > 0);
    assert_int_equal(f.data_len, 3);
    assert_memory_equal(f.data, "hi\n", 3);
    cJSON_Delete(f.result);

    assert_int_equal(j.exit.job_id, 1);
    assert_int_equal(j.exit.pid, j.pid);
    assert_int_equal(j.exit.signal, 0);
    assert_int_equal(j.exit.exit_code, 0);
    assert_false(j.exit.killed_by_request);
    assert_int_equal(zygote_live_workers(z), 0);
    assert_reaped(j.pid);

    stop(&loop, z);
    assert_int_equal(count_fds(), fds_before);
}

static void
test_kill_spinning_job(void **state)
{
    (void) state;
    int fds_before = count_fds();
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote *z = start(&loop);

    struct job j = {0};
    int fd = spawn_spinning(&loop, z, 7, &j);
    assert_int_equal(zygote_live_workers(z), 1);
    usleep(100000); /* let it spin */
    assert_false(j.exited);
    assert_int_equal(zygote_kill(z, 7), 0);
    assert_true(wfx_run_until(&loop, &j.exited, 10000));
    assert_int_equal(j.exit.signal, SIGKILL);
    assert_true(j.exit.killed_by_request);
    assert_true(j.exit.cpu_ms > 0);
    assert_reaped(j.pid);
    /* Killing a job that is gone is a no-op. */
    assert_int_equal(zygote_kill(z, 7), 0);
    close(fd);

    stop(&loop, z);
    assert_int_equal(count_fds(), fds_before);
}

/* The zygote hands over each worker's pidfd with its spawned event: a worker that died is
 * known to be dead before its exited event is read (the pool's check before lending an idle
 * worker), and pyfenced can kill it if the zygote dies first. */
static void
test_worker_alive_follows_pidfd(void **state)
{
    (void) state;
    int fds_before = count_fds();
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote *z = start(&loop);

    struct job j = {0};
    int fd = spawn_spinning(&loop, z, 9, &j);
    assert_true(zygote_worker_alive(z, 9));
    assert_int_equal(kill(j.pid, SIGKILL), 0);
    /* The loop does not run here: the exited event waits unread, and the job is still live. */
    bool alive = true;
    for (int i = 0; i < 500 && alive; i++) {
        alive = zygote_worker_alive(z, 9);
        if (alive)
            usleep(10000);
    }
    assert_false(alive);
    assert_false(j.exited);
    assert_int_equal(zygote_live_workers(z), 1);
    assert_true(wfx_run_until(&loop, &j.exited, 10000));
    assert_int_equal(j.exit.signal, SIGKILL);
    assert_false(zygote_worker_alive(z, 9));
    close(fd);

    stop(&loop, z);
    assert_int_equal(count_fds(), fds_before);
}

static void
test_zygote_death_and_restart(void **state)
{
    (void) state;
    int fds_before = count_fds();
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote *z = start(&loop);
    pid_t old = zygote_pid(z);

    struct job j = {0};
    int fd = spawn_spinning(&loop, z, 3, &j);
    assert_int_equal(kill(old, SIGKILL), 0);
    assert_true(wfx_run_until(&loop, &j.exited, 10000));
    assert_int_equal(j.exit.signal, SIGKILL);
    assert_false(j.exit.killed_by_request);
    close(fd);
    /* The worker dies with its zygote (PR_SET_PDEATHSIG, and the client's pidfd kill). */
    assert_reaped(j.pid);
    /* Until the back-off has passed there is no zygote: a spawn is refused as busy. */
    struct harden_params hp;
    harden_params_init(&hp);
    struct pf_error *err = NULL;
    int busy_fd = -1;
    assert_int_equal(zygote_spawn(z, 5, &hp, NULL, &busy_fd, &err), -1);
    assert_int_equal(err->code, PF_E_BUSY);
    assert_int_equal(busy_fd, -1);
    pf_error_free(err);

    /* A new zygote after the back-off; it serves jobs. */
    bool restarted = false;
    for (int i = 0; i < 100 && !restarted; i++) {
        wfx_run_until(&loop, &restarted, 50);
        restarted = zygote_restarts(z) == 1 && zygote_pid(z) > 0;
    }
    assert_true(restarted);
    assert_int_not_equal(zygote_pid(z), old);
    struct job k = {0};
    fd = spawn(z, 4, &k);
    send_run(fd, "6*7", NULL);
    struct frames f = {0};
    read_frames(fd, &f);
    close(fd);
    assert_true(wfx_run_until(&loop, &k.exited, 10000));
    assert_non_null(f.result);
    assert_int_equal(msg_get_int(f.result, "output", 0), 42);
    cJSON_Delete(f.result);

    stop(&loop, z);
    assert_reaped(old);
    assert_int_equal(count_fds(), fds_before);
}

/* A zygote that died a moment ago, its loss not processed yet (the loop has not run): a spawn
 * gets what fail_all_jobs tells the jobs it was forking, worker_crashed, not internal. */
static void
test_spawn_to_a_zygote_just_dead(void **state)
{
    (void) state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote *z = start(&loop);
    pid_t old = zygote_pid(z);
    assert_int_equal(kill(old, SIGKILL), 0);
    /* Dead (a zombie, or reaped by whoever is its parent): its end of the channel is closed. */
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int) old);
    for (int i = 0; i < 500; i++) {
        char buf[512] = "";
        FILE *fp = fopen(path, "re");
        if (!fp)
            break;
        size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
        fclose(fp);
        buf[n] = '\0';
        const char *paren = strrchr(buf, ')');
        if (paren && paren[1] == ' ' && paren[2] == 'Z')
            break;
        usleep(10000);
    }
    struct harden_params hp;
    harden_params_init(&hp);
    struct pf_error *err = NULL;
    int fd = -1;
    assert_int_equal(zygote_spawn(z, 1, &hp, NULL, &fd, &err), -1);
    assert_int_equal(err->code, PF_E_WORKER_CRASHED);
    assert_string_equal(err->msg, "the zygote died before forking this worker");
    assert_int_equal(fd, -1);
    pf_error_free(err);
    stop(&loop, z);
}

static void
test_stop_with_live_worker(void **state)
{
    (void) state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote *z = start(&loop);
    pid_t zpid = zygote_pid(z);
    struct job j = {0};
    int fd = spawn(z, 9, &j);
    assert_true(wfx_run_until(&loop, &j.spawned, 10000));
    /* The worker waits for its run frame; stopping must still end it, and report it. */
    stop(&loop, z);
    assert_true(j.exited);
    assert_int_equal(j.exit.signal, SIGKILL);
    assert_reaped(j.pid);
    assert_reaped(zpid);
    close(fd);
}

static void
test_bad_binary(void **state)
{
    (void) state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote_config cfg = {.path = "/nonexistent/pyfence-zygote", .log_level = 4};
    struct zygote *z = NULL;
    struct pf_error *err = NULL;
    assert_int_equal(zygote_start(&loop, &cfg, on_spawned, on_exit_cb, &z, &err), -1);
    assert_non_null(strstr(err->msg, "/nonexistent/pyfence-zygote"));
    pf_error_free(err);
    /* /bin/true starts, never says ready, exits. */
    cfg.path = "/bin/true";
    err = NULL;
    assert_int_equal(zygote_start(&loop, &cfg, on_spawned, on_exit_cb, &z, &err), -1);
    assert_non_null(strstr(err->msg, "before it was ready"));
    pf_error_free(err);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void
test_cpu_limit(void **state)
{
    (void) state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote *z = start(&loop);
    struct harden_params p;
    harden_params_init(&p);
    p.cpu_ms = 100; /* one second, the smallest RLIMIT_CPU */
    /* As the init of its own pid namespace, a worker ignores SIGXCPU (CHANNEL.md) and dies only
     * at the hard limit: outside one, SIGXCPU comes first. */
    p.level[HARDEN_LAYER_NAMESPACES] = HARDEN_OFF;
    struct job j = {0};
    int fd = spawn_with(z, 11, &p, &j);
    send_spin(fd);
    assert_true(wfx_run_until(&loop, &j.exited, 10000));
    assert_int_equal(j.exit.signal, SIGXCPU);
    assert_false(j.exit.killed_by_request);
    assert_true(j.exit.cpu_ms >= 500);
    close(fd);
    stop(&loop, z);
}

static void
test_result_over_max_result_bytes(void **state)
{
    (void) state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote *z = start(&loop);
    struct job j = {0};
    int fd = spawn(z, 12, &j);
    send_run(fd, "'x' * 5000", "{\"max_result_bytes\":1024}");
    struct frames f = {0};
    read_frames(fd, &f);
    close(fd);
    assert_true(wfx_run_until(&loop, &j.exited, 10000));
    assert_non_null(f.result);
    assert_string_equal(msg_get_string(f.result, "outcome", ""), "output_limit");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(f.result, "output")));
    const char *m = msg_get_string(cJSON_GetObjectItem(f.result, "error"), "message", "");
    assert_non_null(strstr(m, "max_result_bytes 1024"));
    cJSON_Delete(f.result);
    stop(&loop, z);
}

static void
test_required_layer_missing_fails_closed(void **state)
{
    (void) state;
    int layer = -1;
    for (int l = 0; l < _HARDEN_LAYER_MAX && layer < 0; l++)
        if (!harden_layer_built((enum harden_layer) l))
            layer = l;
    if (layer < 0)
        skip();
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote *z = start(&loop);
    struct harden_params p;
    harden_params_init(&p);
    p.level[layer] = HARDEN_REQUIRED;
    struct job j = {0};
    int fd = spawn_with(z, 13, &p, &j);
    send_run_to_refusing(fd, "print('must not run')");
    struct frames f = {0};
    read_frames(fd, &f);
    close(fd);
    assert_true(wfx_run_until(&loop, &j.exited, 10000));
    assert_int_equal(j.exit.exit_code, 70);
    assert_int_equal(f.data_len, 0);
    assert_non_null(f.result);
    assert_string_equal(msg_get_string(f.result, "outcome", ""), "hardening_unavailable");
    const char *m = msg_get_string(cJSON_GetObjectItem(f.result, "error"), "message", "");
    assert_non_null(strstr(m, harden_layer_name((enum harden_layer) layer)));
    cJSON_Delete(f.result);
    stop(&loop, z);
}

static void
test_output_batching(void **state)
{
    (void) state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote *z = start(&loop);
    struct job j = {0};
    int fd = spawn(z, 14, &j);
    send_run(fd, "for i in range(2000): print('line', i)\\nprint('a' + chr(0) + 'b')", NULL);
    struct frames f = {0};
    read_frames(fd, &f);
    close(fd);
    assert_true(wfx_run_until(&loop, &j.exited, 10000));
    assert_non_null(f.result);
    assert_string_equal(msg_get_string(f.result, "outcome", ""), "ok");
    cJSON_Delete(f.result);

    char *want = malloc(sizeof(f.data));
    size_t n = 0;
    for (int i = 0; i < 2000; i++)
        n += (size_t) sprintf(want + n, "line %d\n", i);
    n += (size_t) sprintf(want + n, "a\xef\xbf\xbd"
                                    "b\n"); /* NUL travels as U+FFFD */
    assert_int_equal(f.data_len, n);
    assert_memory_equal(f.data, want, n);
    free(want);
    /* Batched: about one frame per 4 KiB, not one per print. */
    assert_true(f.n_output_frames >= 2);
    assert_true(f.n_output_frames <= 20);
    stop(&loop, z);
}

static void
test_many_jobs(void **state)
{
    (void) state;
    enum { N = 24 };
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote *z = start(&loop);
    struct job jobs[N] = {{0}};
    int fds[N];
    for (int i = 0; i < N; i++) {
        fds[i] = spawn(z, 100 + (uint64_t) i, &jobs[i]);
        send_run(fds[i], "sum(range(1000))", NULL);
    }
    for (int i = 0; i < N; i++) {
        struct frames f = {0};
        read_frames(fds[i], &f);
        close(fds[i]);
        assert_non_null(f.result);
        assert_int_equal(msg_get_int(f.result, "output", 0), 499500);
        cJSON_Delete(f.result);
    }
    for (int i = 0; i < N; i++) {
        assert_true(wfx_run_until(&loop, &jobs[i].exited, 10000));
        assert_int_equal(jobs[i].exit.job_id, 100 + (uint64_t) i);
        assert_int_equal(jobs[i].exit.pid, jobs[i].pid);
        assert_int_equal(jobs[i].exit.exit_code, 0);
    }
    assert_int_equal(zygote_live_workers(z), 0);
    stop(&loop, z);
}

/* Talks to pyfence-zygote directly over its control channel, as a buggy daemon would. */
static pid_t
start_raw_zygote(int *ret_ctl)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (sv[1] == 3)
            fcntl(3, F_SETFD, 0);
        else
            dup2(sv[1], 3);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 1);
        dup2(null, 2);
        char *argv[] = {zygote_path, (char *) "--log-level", (char *) "crit", NULL};
        char *envp[] = {NULL};
        execve(zygote_path, argv, envp);
        _exit(127);
    }
    close(sv[1]);
    *ret_ctl = sv[0];
    return pid;
}

/* One event, and in *ret_fd the fd that came with it (-1 if none; NULL: none may come). */
static cJSON *
recv_event_fd(int ctl, int *ret_fd)
{
    char buf[65536];
    struct pollfd pfd = {.fd = ctl, .events = POLLIN};
    assert_int_equal(poll(&pfd, 1, 10000), 1);
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
    union {
        char raw[CMSG_SPACE(sizeof(int) * 4)];
        struct cmsghdr align;
    } cbuf;
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = cbuf.raw,
                        .msg_controllen = sizeof(cbuf)};
    ssize_t n = recvmsg(ctl, &mh, MSG_CMSG_CLOEXEC);
    assert_true(n > 0);
    assert_false(mh.msg_flags & MSG_CTRUNC);
    int fd = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        assert_int_equal(c->cmsg_type, SCM_RIGHTS);
        assert_int_equal(c->cmsg_len, CMSG_LEN(sizeof(int)));
        assert_int_equal(fd, -1);
        memcpy(&fd, CMSG_DATA(c), sizeof(int));
    }
    if (ret_fd)
        *ret_fd = fd;
    else if (fd >= 0)
        fail_msg("an event came with fd %d: \"%.*s\"", fd, (int) n, buf);
    cJSON *obj = NULL;
    assert_int_equal(msg_parse(buf, (size_t) n, MSG_MAX_DEPTH, &obj, NULL), 0);
    return obj;
}

static cJSON *
recv_event(int ctl)
{
    return recv_event_fd(ctl, NULL);
}

/* The pid a pidfd refers to, from its fdinfo ("Pid:"); -1 if fd is no pidfd. */
static pid_t
pidfd_pid(int fd)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    FILE *f = fopen(path, "re");
    assert_non_null(f);
    pid_t pid = -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "Pid: %d", &pid) == 1)
            break;
    fclose(f);
    return pid;
}

static void
send_with_fds(int ctl, const char *json, const int *fds, size_t n_fds)
{
    struct iovec iov = {.iov_base = (void *) json, .iov_len = strlen(json)};
    union {
        char raw[CMSG_SPACE(sizeof(int) * 4)];
        struct cmsghdr align;
    } cbuf;
    memset(&cbuf, 0, sizeof(cbuf));
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (n_fds) {
        mh.msg_control = cbuf.raw;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
    }
    assert_true(sendmsg(ctl, &mh, 0) >= 0);
}

static void
expect_spawn_failed(int ctl, const char *needle)
{
    cJSON *ev = recv_event(ctl);
    assert_string_equal(msg_get_string(ev, "event", ""), "spawn_failed");
    const char *m = msg_get_string(ev, "message", "");
    if (!strstr(m, needle))
        fail_msg("\"%s\" does not name \"%s\"", m, needle);
    cJSON_Delete(ev);
}

static void
test_control_channel_strict(void **state)
{
    (void) state;
    int ctl;
    pid_t zpid = start_raw_zygote(&ctl);
    cJSON *ev = recv_event(ctl);
    assert_string_equal(msg_get_string(ev, "event", ""), "ready");
    cJSON_Delete(ev);

    struct harden_params p;
    harden_params_init(&p);
    cJSON *h = harden_params_to_json(&p);
    char *hs = cJSON_PrintUnformatted(h);
    cJSON_Delete(h);
    char good[1024], extra[1024];
    snprintf(good, sizeof(good), "{\"op\":\"spawn\",\"job\":5,\"harden\":%s}", hs);
    snprintf(extra, sizeof(extra), "{\"op\":\"spawn\",\"job\":5,\"harden\":%s,\"x\":1}", hs);
    free(hs);
    int pair[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);

    /* Garbage, unknown ops and kills of unknown jobs are ignored: the zygote stays up. */
    send_with_fds(ctl, "not json", NULL, 0);
    send_with_fds(ctl, "{\"op\":\"format_disk\"}", NULL, 0);
    send_with_fds(ctl, "{\"op\":\"kill\",\"job\":99}", NULL, 0);
    /* A spawn must carry exactly one fd, and a strictly shaped body. */
    send_with_fds(ctl, good, NULL, 0);
    expect_spawn_failed(ctl, "expected exactly 1");
    send_with_fds(ctl, good, (int[]){pair[1], pair[1]}, 2);
    expect_spawn_failed(ctl, "expected exactly 1");
    send_with_fds(ctl, extra, &pair[1], 1);
    expect_spawn_failed(ctl, "'x'");
    send_with_fds(ctl, "{\"op\":\"spawn\",\"job\":6,\"harden\":{}}", &pair[1], 1);
    expect_spawn_failed(ctl, "harden");

    /* And a good one still works after all that. */
    send_with_fds(ctl, good, &pair[1], 1);
    int pidfd = -1;
    ev = recv_event_fd(ctl, &pidfd);
    assert_string_equal(msg_get_string(ev, "event", ""), "spawned");
    assert_int_equal(msg_get_int(ev, "job", 0), 5);
    pid_t wpid = (pid_t) msg_get_int(ev, "pid", 0);
    cJSON_Delete(ev);
    /* With it, the worker's pidfd: the daemon's handle on it should this zygote die. */
    assert_true(pidfd >= 0);
    assert_int_equal(pidfd_pid(pidfd), wpid);
    close(pidfd);
    close(pair[1]);
    close(pair[0]); /* the worker sees EOF instead of a run frame and reports, then exits */
    ev = recv_event(ctl);
    assert_string_equal(msg_get_string(ev, "event", ""), "exited");
    assert_int_equal(msg_get_int(ev, "pid", 0), wpid);
    cJSON_Delete(ev);

    /* EOF on the control channel: the zygote exits 0. */
    close(ctl);
    int status;
    assert_int_equal(waitpid(zpid, &status, 0), zpid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* This test binary run as a zygote (test_stray_fds_closed): it answers one spawn with two fds
 * where one is the most a packet carries, and its exited event with an fd where none belongs. */
static int
fake_zygote_main(void)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "{\"event\":\"ready\",\"pid\":%d,\"python\":\"3.0\"}",
             (int) getpid());
    send_with_fds(3, msg, NULL, 0);
    char buf[65536];
    ssize_t n;
    while ((n = recv(3, buf, sizeof(buf) - 1, 0)) > 0) {
        buf[n] = '\0';
        cJSON *req = NULL;
        if (msg_parse(buf, (size_t) n, MSG_MAX_DEPTH, &req, NULL) < 0)
            return 1;
        long long job = (long long) msg_get_int(req, "job", 0);
        cJSON_Delete(req);
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        snprintf(msg, sizeof(msg), "{\"event\":\"spawned\",\"job\":%lld,\"pid\":%d}", job,
                 (int) getpid());
        send_with_fds(3, msg, (int[]){null, null}, 2);
        snprintf(msg, sizeof(msg),
                 "{\"event\":\"exited\",\"job\":%lld,\"pid\":%d,\"exit_code\":0,"
                 "\"signal\":null,\"cpu_ms\":0,\"max_rss_kb\":0,\"killed\":false}",
                 job, (int) getpid());
        send_with_fds(3, msg, &null, 1);
        close(null);
    }
    return n == 0 ? 0 : 1;
}

/* pyfenced takes one fd from the zygote, with "spawned": more than one, or one with another
 * event, are closed, and the events still handled. */
static void
test_stray_fds_closed(void **state)
{
    (void) state;
    int fds_before = count_fds();
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    assert_true(len > 0);
    self[len] = '\0';
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct zygote_config cfg = {.path = self, .log_level = 0};
    struct zygote *z = NULL;
    struct pf_error *err = NULL;
    if (zygote_start(&loop, &cfg, on_spawned, on_exit_cb, &z, &err) < 0)
        fail_msg("zygote_start: %s", err->msg);
    struct job j = {0};
    int fd = spawn(z, 11, &j);
    assert_true(wfx_run_until(&loop, &j.exited, 10000));
    assert_true(j.spawned && !j.spawn_failed);
    assert_int_equal(j.exit.exit_code, 0);
    close(fd);
    stop(&loop, z);
    assert_int_equal(count_fds(), fds_before);
}

static void
test_required_cgroup_without_cgroups(void **state)
{
    (void) state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    /* The rlimits-only fallback, forced: a worker whose profile requires the cgroup layer
     * refuses to run, and says why on its channel; one that asks best-effort runs. */
    struct zygote_config cfg = {.path = zygote_path, .log_level = 3, .cgroup_mode = "none"};
    struct zygote *z = NULL;
    struct pf_error *err = NULL;
    if (zygote_start(&loop, &cfg, on_spawned, on_exit_cb, &z, &err) < 0)
        fail_msg("zygote_start: %s", err->msg);
    struct harden_params p;
    harden_params_init(&p);
    p.level[HARDEN_LAYER_CGROUP] = HARDEN_REQUIRED;
    struct job j = {0};
    int fd = spawn_with(z, 21, &p, &j);
    /* The worker refuses before reading its run frame: let it be gone before the frame is
     * written, which must not lose its answer (test_required_layer_missing_fails_closed
     * writes at once, the usual order). */
    assert_true(wfx_run_until(&loop, &j.exited, 10000));
    send_run_to_refusing(fd, "print('must not run')");
    struct frames f = {0};
    read_frames(fd, &f);
    close(fd);
    assert_true(wfx_run_until(&loop, &j.exited, 10000));
    assert_int_equal(j.exit.exit_code, 70);
    assert_int_equal(f.data_len, 0);
    assert_non_null(f.result);
    assert_string_equal(msg_get_string(f.result, "outcome", ""), "hardening_unavailable");
    const char *m = msg_get_string(cJSON_GetObjectItem(f.result, "error"), "message", "");
    if (!strstr(m, "hardening layer 'cgroup' is required and this host cannot give it") ||
        !strstr(m, "\"best-effort\""))
        fail_msg("\"%s\" does not name the cgroup layer and what to do", m);
    cJSON_Delete(f.result);

    p.level[HARDEN_LAYER_CGROUP] = HARDEN_BEST_EFFORT;
    struct job k = {0};
    fd = spawn_with(z, 22, &p, &k);
    send_run(fd, "1+1", NULL);
    memset(&f, 0, sizeof(f));
    read_frames(fd, &f);
    close(fd);
    assert_true(wfx_run_until(&loop, &k.exited, 10000));
    assert_false(k.spawn_failed);
    assert_false(k.exit.have_cgroup);
    assert_non_null(f.result);
    assert_int_equal(msg_get_int(f.result, "output", 0), 2);
    cJSON_Delete(f.result);
    stop(&loop, z);
}

/* The code a spawn_failed event may carry is an allow-list of one: a zygote that names any
 * other (or none) reports a fault of ours, never what it pleases. */
static void
test_spawn_failed_code(void **state)
{
    (void) state;
    assert_int_equal(zygote_spawn_failed_code("hardening_unavailable"), PF_E_HARDENING_UNAVAILABLE);
    assert_int_equal(zygote_spawn_failed_code(NULL), PF_E_INTERNAL);
    assert_int_equal(zygote_spawn_failed_code(""), PF_E_INTERNAL);
    assert_int_equal(zygote_spawn_failed_code("busy"), PF_E_INTERNAL);
    assert_int_equal(zygote_spawn_failed_code("hardening_unavailable "), PF_E_INTERNAL);
}

int
main(int argc, char **argv)
{
    /* Started by test_stray_fds_closed as its zygote: "--log-level" is what pyfenced passes. */
    if (argc > 1 && strcmp(argv[1], "--log-level") == 0)
        return fake_zygote_main();
    if (!wfx_find_zygote(zygote_path, sizeof(zygote_path))) {
        printf("SKIP: no pyfence-zygote at %s (set PYFENCE_ZYGOTE, or build the executor)\n",
               zygote_path);
        return 77;
    }
    signal(SIGPIPE, SIG_IGN);
    /* libuv opens a process-wide signal pipe on first use and keeps it: open it before any
     * test counts its fds. */
    uv_loop_t warm;
    uv_signal_t sig;
    uv_loop_init(&warm);
    uv_signal_init(&warm, &sig);
    uv_close((uv_handle_t *) &sig, NULL);
    uv_run(&warm, UV_RUN_DEFAULT);
    uv_loop_close(&warm);
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_run_snippet),
            cmocka_unit_test(test_kill_spinning_job),
            cmocka_unit_test(test_worker_alive_follows_pidfd),
            cmocka_unit_test(test_zygote_death_and_restart),
            cmocka_unit_test(test_spawn_to_a_zygote_just_dead),
            cmocka_unit_test(test_stop_with_live_worker),
            cmocka_unit_test(test_bad_binary),
            cmocka_unit_test(test_cpu_limit),
            cmocka_unit_test(test_required_cgroup_without_cgroups),
            cmocka_unit_test(test_many_jobs),
            cmocka_unit_test(test_control_channel_strict),
            cmocka_unit_test(test_stray_fds_closed),
            cmocka_unit_test(test_output_batching),
            cmocka_unit_test(test_result_over_max_result_bytes),
            cmocka_unit_test(test_required_layer_missing_fails_closed),
            cmocka_unit_test(test_spawn_failed_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
