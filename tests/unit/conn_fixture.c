#include "conn_fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "job.h"
#include "pf_log.h"
#include "zygote.h"

/* ---- a fake zygote: spawn hands the test the worker's end of the channel ---------------- */

struct zygote fake;

int
zygote_start(uv_loop_t *loop, const struct zygote_config *config, zygote_spawned_cb spawned_cb,
             zygote_exit_cb exit_cb, struct zygote **ret, struct pf_error **err)
{
    return pf_error_set(err, PF_E_INTERNAL, "not in this test");
}

int
zygote_spawn(struct zygote *z, uint64_t job_id, const struct harden_params *params, void *job_ctx,
             int *ret_channel_fd, struct pf_error **err)
{
    if (z->fail_spawn)
        return pf_error_set(err, PF_E_INTERNAL, "the zygote is restarting");
    if (z->restarting)
        return pf_error_set(err, PF_E_BUSY, "the zygote is restarting; try again shortly");
    assert_true(job_id >= 1 && job_id <= MAX_FAKE_JOBS);
    assert_int_equal(params->level[HARDEN_LAYER_RLIMITS], HARDEN_REQUIRED);
    assert_int_equal(params->level[HARDEN_LAYER_FDS], HARDEN_REQUIRED);
    z->ctx[job_id] = job_ctx;
    z->last_job = job_id;
    z->last_params = *params;
    if (z->bad_channel) {
        z->worker_fd[job_id] = -1;
        *ret_channel_fd = -1;
        return 0;
    }
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    z->worker_fd[job_id] = sv[1];
    *ret_channel_fd = sv[0];
    return 0;
}

bool
zygote_can_spawn(const struct zygote *z)
{
    return !z->restarting;
}

uint64_t
zygote_down_since(const struct zygote *z, char *why, size_t why_size)
{
    if (why_size)
        snprintf(why, why_size, "%s",
                 z->restarting ? "fake zygote lost; restart failed: test" : "");
    if (!z->restarting)
        return 0;
    return z->lost_ns ? z->lost_ns : uv_hrtime();
}

int
zygote_kill(struct zygote *z, uint64_t job_id)
{
    if (job_id <= MAX_FAKE_JOBS)
        z->kills[job_id]++;
    return 0;
}

int
zygote_cancel(struct zygote *z, uint64_t job_id, int run)
{
    if (job_id <= MAX_FAKE_JOBS) {
        z->cancels[job_id]++;
        z->cancel_run[job_id] = run;
    }
    return 0;
}

bool
zygote_worker_alive(const struct zygote *z, uint64_t job_id)
{
    return true;
}

pid_t
zygote_pid(const struct zygote *z)
{
    return 4242;
}

unsigned
zygote_restarts(const struct zygote *z)
{
    return 0;
}

const char *
zygote_python_version(const struct zygote *z)
{
    return "3.11.2";
}

struct zygote *
zygote_stop(struct zygote *z)
{
    return NULL;
}

/* ---- fixture ---------------------------------------------------------------------------- */

int
setup_with(void **state, void (*tune)(struct policy_limits *))
{
    memset(&fake, 0, sizeof(fake));
    struct fx *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    struct policy_limits limits;
    policy_limits_init_defaults(&limits);
    if (tune)
        tune(&limits);
    struct daemon_options opts = {.socket_mode = 0600, .log_level = PF_LOG_WARNING};
    daemon_init(&f->d, &f->loop, &opts, &limits);
    f->d.zygote = &fake;
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct pf_error *err = NULL;
    assert_int_equal(conn_open_fd(&f->d, sv[0], NULL, &err), 0);
    f->client.fd = sv[1];
    f->worker.fd = -1;
    *state = f;
    return 0;
}

int
setup(void **state)
{
    return setup_with(state, NULL);
}

void
pump(struct fx *f, int ms)
{
    uint64_t end = uv_hrtime() + (uint64_t) ms * 1000000;
    do {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        usleep(500);
    } while (uv_hrtime() < end);
}

int
teardown(void **state)
{
    struct fx *f = *state;
    if (f->client.fd >= 0)
        close(f->client.fd);
    for (int i = 0; i <= MAX_FAKE_JOBS; i++)
        if (fake.worker_fd[i] > 0)
            close(fake.worker_fd[i]);
    daemon_shutdown(&f->d);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_true(dlist_empty(&f->d.conns));
    assert_true(dlist_empty(&f->d.jobs));
    assert_int_equal(f->d.jobs_running, 0);
    /* Every byte charged to a uid (replies, queued frames, waiting session requests) was
     * released on its way out, and with nothing left no uid record is either. */
    assert_int_equal(f->d.sched.bytes, 0);
    assert_int_equal(f->d.sched.n_uids, 0);
    daemon_finish(&f->d);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    free(f);
    return 0;
}

void
send_raw(int fd, const void *data, size_t len)
{
    assert_int_equal(write(fd, data, len), (ssize_t) len);
}

void
send_frame(int fd, const char *json)
{
    uint32_t n = (uint32_t) strlen(json);
    uint8_t h[4] = {(uint8_t) (n >> 24), (uint8_t) (n >> 16), (uint8_t) (n >> 8), (uint8_t) n};
    send_raw(fd, h, 4);
    send_raw(fd, json, n);
}

void
send_fmt(int fd, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    send_frame(fd, buf);
}

cJSON *
recv_frame(struct fx *f, struct peer *p, int timeout_ms)
{
    uint64_t end = uv_hrtime() + (uint64_t) timeout_ms * 1000000;
    for (;;) {
        if (p->len >= 4) {
            uint32_t n = (uint32_t) ((uint8_t) p->buf[0] << 24 | (uint8_t) p->buf[1] << 16 |
                                     (uint8_t) p->buf[2] << 8 | (uint8_t) p->buf[3]);
            assert_true(n < sizeof(p->buf) - 4);
            if (p->len >= 4 + n) {
                cJSON *obj = cJSON_ParseWithLength(p->buf + 4, n);
                assert_non_null(obj);
                memmove(p->buf, p->buf + 4 + n, p->len - 4 - n);
                p->len -= 4 + n;
                return obj;
            }
        }
        if (p->eof || uv_hrtime() > end)
            return NULL;
        uv_run(&f->loop, UV_RUN_NOWAIT);
        struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
        if (poll(&pfd, 1, 1) == 1) {
            ssize_t r = read(p->fd, p->buf + p->len, sizeof(p->buf) - p->len);
            if (r <= 0)
                p->eof = true;
            else
                p->len += (size_t) r;
        }
    }
}

cJSON *
expect_error(struct fx *f, const char *id_json, const char *code)
{
    cJSON *r = recv_frame(f, &f->client, 3000);
    if (!r)
        fail_msg("no reply (expected %s)", code);
    char *id = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "id"));
    assert_string_equal(id, id_json);
    free(id);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(r, "ok")));
    cJSON *e = cJSON_GetObjectItem(r, "error");
    assert_string_equal(cJSON_GetObjectItem(e, "code")->valuestring, code);
    return r;
}

void
expect_eof(struct fx *f, struct peer *p)
{
    cJSON *r = recv_frame(f, p, 3000);
    if (r) {
        char *s = cJSON_PrintUnformatted(r);
        fail_msg("expected EOF, got %s", s);
    }
    assert_true(p->eof);
}

const char *
error_message(const cJSON *reply)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "error"), "message")->valuestring;
}

uint64_t
start_worker_of(struct fx *f, const char *request, cJSON **ret_first)
{
    uint64_t before = fake.last_job;
    send_frame(f->client.fd, request);
    for (int i = 0; i < 1000 && fake.last_job == before; i++)
        pump(f, 1);
    assert_true(fake.last_job > before);
    uint64_t job = fake.last_job;
    f->worker.fd = fake.worker_fd[job];
    f->worker.len = 0;
    f->worker.eof = false;
    *ret_first = recv_frame(f, &f->worker, 2000);
    assert_non_null(*ret_first);
    return job;
}

uint64_t
start_exec_run(struct fx *f, const char *request, cJSON **ret_run)
{
    cJSON *run = NULL;
    uint64_t job = start_worker_of(f, request, &run);
    assert_string_equal(cJSON_GetObjectItem(run, "op")->valuestring, "run");
    assert_true(cJSON_IsString(cJSON_GetObjectItem(run, "code")));
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(run, "imports")));
    assert_true(
            cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "limits"), "timeout_ms")));
    if (ret_run)
        *ret_run = run;
    else
        cJSON_Delete(run);
    return job;
}

uint64_t
start_exec(struct fx *f, const char *request)
{
    return start_exec_run(f, request, NULL);
}

void
end_worker(struct fx *f, uint64_t job, int exit_code, int sig, bool killed, uint64_t cpu_ms)
{
    close(fake.worker_fd[job]);
    fake.worker_fd[job] = 0;
    struct zygote_exit e = {.job_id = job,
                            .pid = 100 + (pid_t) job,
                            .exit_code = exit_code,
                            .signal = sig,
                            .killed_by_request = killed,
                            .cpu_ms = cpu_ms};
    job_on_exit(fake.ctx[job], &e);
    pump(f, 5);
}

void
write_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}
