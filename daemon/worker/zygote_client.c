/* The daemon's side of the zygote (zygote.h), its jobs: the spawn, kill and cancel requests it
 * sends on the zygote's control channel, and the events the zygote answers with (spawned,
 * spawn_failed, exited, ready). The zygote process itself, started, lost and restarted, is
 * zygote_client_proc.c's; the structs both use are in zygote_client_internal.h. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control_packet.h"
#include "harden_params.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "zygote_client_internal.h"

#define CONTROL_MAX_PACKET (64 * 1024)
#define MAX_JSON_INT       9007199254740992.0

/* ---- jobs ------------------------------------------------------------------------------- */

static struct zjob *
job_find(struct zygote *z, uint64_t id)
{
    for (struct zjob *j = z->jobs; j; j = j->next)
        if (j->id == id)
            return j;
    return NULL;
}

/* Unlinks j and releases its pidfd (the caller frees it). */
static void
job_unlink(struct zygote *z, struct zjob *j)
{
    j->pidfd = pf_close(j->pidfd);
    for (struct zjob **pp = &z->jobs; *pp; pp = &(*pp)->next)
        if (*pp == j) {
            *pp = j->next;
            if (j->pid > 0)
                z->n_live--;
            return;
        }
}

int
zygote_spawn_failed_code(const char *name)
{
    /* An allow-list: the zygote names one code only, the rest is a fault on our side. */
    if (name && strcmp(name, pf_code_name(PF_E_HARDENING_UNAVAILABLE)) == 0)
        return PF_E_HARDENING_UNAVAILABLE;
    return PF_E_INTERNAL;
}

static void
job_spawn_failed(struct zygote *z, struct zjob *j, int code, const char *message)
{
    struct pf_error e = {.code = code, .msg = (char *) message};
    void *ctx = j->ctx;
    job_unlink(z, j);
    free(j);
    if (z->spawned_cb)
        z->spawned_cb(ctx, 0, &e);
}

static void
job_exited(struct zygote *z, struct zjob *j, const struct zygote_exit *info)
{
    void *ctx = j->ctx;
    job_unlink(z, j);
    free(j);
    if (z->exit_cb)
        z->exit_cb(ctx, info);
}

/* Every job of a zygote that is gone. Its workers should die with it (PR_SET_PDEATHSIG), but
 * they are killed through their pidfds as well: an orphaned worker would run unsupervised, and
 * with namespaces, identity and cgroup layers all on, the parent-death signal has been seen not
 * to arrive (cause not found yet; test_zygote_death_and_restart covers it). */
void
zygote_fail_all_jobs(struct zygote *z, const char *why)
{
    struct zjob *j;
    for (j = z->jobs; j; j = j->next)
        if (j->pidfd >= 0)
            pidfd_send_signal(j->pidfd, SIGKILL, NULL, 0);
    while ((j = z->jobs)) {
        if (j->pid > 0) {
            struct zygote_exit info = {.job_id = j->id,
                                       .pid = j->pid,
                                       .signal = SIGKILL,
                                       .killed_by_request = j->killed};
            job_exited(z, j, &info);
        } else {
            job_spawn_failed(z, j, z->stopping ? PF_E_SHUTTING_DOWN : PF_E_WORKER_CRASHED, why);
        }
    }
}

/* ---- events from the zygote -------------------------------------------------------------- */

static const struct msg_field ready_fields[] = {
        {"event", MSG_T_STRING, true, 1, 32},
        {"pid", MSG_T_INT, true, 1, INT32_MAX},
        {"python", MSG_T_STRING, true, 1, 31},
};
static const struct msg_field spawned_fields[] = {
        {"event", MSG_T_STRING, true, 1, 32},
        {"job", MSG_T_INT, true, 0, MAX_JSON_INT},
        {"pid", MSG_T_INT, true, 1, INT32_MAX},
};
static const struct msg_field spawn_failed_fields[] = {
        {"event", MSG_T_STRING, true, 1, 32},
        {"job", MSG_T_INT, true, 0, MAX_JSON_INT},
        {"message", MSG_T_STRING, true, 0, 4096},
        {"code", MSG_T_STRING, false, 1, 32},
};
static const struct msg_field exited_fields[] = {
        {"event", MSG_T_STRING, true, 1, 32},
        {"job", MSG_T_INT, true, 0, MAX_JSON_INT},
        {"pid", MSG_T_INT, true, 1, INT32_MAX},
        {"exit_code", MSG_T_ANY, true, 0, 0},
        {"signal", MSG_T_ANY, true, 0, 0},
        {"cpu_ms", MSG_T_INT, true, 0, MAX_JSON_INT},
        {"max_rss_kb", MSG_T_INT, true, 0, MAX_JSON_INT},
        {"killed", MSG_T_BOOL, true, 0, 0},
        {"oom_killed", MSG_T_BOOL, false, 0, 0},
        {"pids_limited", MSG_T_BOOL, false, 0, 0},
        {"peak_memory_kb", MSG_T_INT, false, 0, MAX_JSON_INT},
        {"cgroup_cpu_ms", MSG_T_INT, false, 0, MAX_JSON_INT},
};

static int
int_or_null(const cJSON *msg, const char *name, int *ret, struct pf_error **err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, name);
    if (cJSON_IsNull(v)) {
        *ret = 0;
        return 0;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 255 ||
        v->valuedouble != (double) (int) v->valuedouble)
        return pf_error_set(err, PF_E_INTERNAL, "exited: '%s' must be null or 0..255", name);
    *ret = (int) v->valuedouble;
    return 0;
}

static int
on_exited(struct zygote *z, const cJSON *msg, struct pf_error **err)
{
    if (msg_check_fields(msg, exited_fields, PF_ELEMENTSOF(exited_fields), "exited", err) < 0)
        return -1;
    struct zygote_exit info = {
            .job_id = (uint64_t) msg_get_int(msg, "job", 0),
            .pid = (pid_t) msg_get_int(msg, "pid", 0),
            .cpu_ms = (uint64_t) msg_get_int(msg, "cpu_ms", 0),
            .max_rss_kb = (uint64_t) msg_get_int(msg, "max_rss_kb", 0),
            .have_cgroup = cJSON_HasObjectItem(msg, "oom_killed"),
            .oom_killed = msg_get_bool(msg, "oom_killed", false),
            .pids_limited = msg_get_bool(msg, "pids_limited", false),
            .peak_memory_kb = (uint64_t) msg_get_int(msg, "peak_memory_kb", 0),
            .cgroup_cpu_ms = (uint64_t) msg_get_int(msg, "cgroup_cpu_ms", 0),
    };
    if (int_or_null(msg, "exit_code", &info.exit_code, err) < 0 ||
        int_or_null(msg, "signal", &info.signal, err) < 0)
        return -1;
    struct zjob *j = job_find(z, info.job_id);
    if (!j || j->pid != info.pid)
        return pf_error_set(err, PF_E_INTERNAL, "exited: no job %llu with pid %d",
                            (unsigned long long) info.job_id, (int) info.pid);
    info.killed_by_request = msg_get_bool(msg, "killed", false) || j->killed;
    job_exited(z, j, &info);
    return 0;
}

/* fd: what came with the packet in SCM_RIGHTS, or -1; *fd is taken (set to -1) by the event
 * that owns it, and closed by the caller otherwise. */
static int
on_event(struct zproc *p, const cJSON *msg, int *fd, struct pf_error **err)
{
    struct zygote *z = p->z;
    const char *event = msg_get_string(msg, "event", "");
    if (strcmp(event, "exited") == 0)
        return on_exited(z, msg, err);
    if (strcmp(event, "spawned") == 0) {
        if (msg_check_fields(msg, spawned_fields, PF_ELEMENTSOF(spawned_fields), "spawned", err) <
            0)
            return -1;
        struct zjob *j = job_find(z, (uint64_t) msg_get_int(msg, "job", 0));
        if (!j || j->pid > 0)
            return pf_error_set(err, PF_E_INTERNAL, "spawned: unexpected job");
        j->pid = (pid_t) msg_get_int(msg, "pid", 0);
        /* The zygote opened it before it could reap the worker: it cannot name a reused pid. */
        j->pidfd = *fd;
        *fd = -1;
        z->n_live++;
        if (z->spawned_cb)
            z->spawned_cb(j->ctx, j->pid, NULL);
        return 0;
    }
    if (strcmp(event, "spawn_failed") == 0) {
        if (msg_check_fields(msg, spawn_failed_fields, PF_ELEMENTSOF(spawn_failed_fields),
                             "spawn_failed", err) < 0)
            return -1;
        struct zjob *j = job_find(z, (uint64_t) msg_get_int(msg, "job", 0));
        if (!j || j->pid > 0)
            return pf_error_set(err, PF_E_INTERNAL, "spawn_failed: unexpected job");
        job_spawn_failed(z, j, zygote_spawn_failed_code(msg_get_string(msg, "code", NULL)),
                         msg_get_string(msg, "message", ""));
        return 0;
    }
    if (strcmp(event, "ready") == 0 && !p->ready) {
        if (msg_check_fields(msg, ready_fields, PF_ELEMENTSOF(ready_fields), "ready", err) < 0)
            return -1;
        p->ready = true;
        snprintf(z->python, sizeof(z->python), "%s", msg_get_string(msg, "python", ""));
        pf_log_notice(ZYGOTE, "zygote pid %d ready, python %s", (int) p->pid, z->python);
        if (p == z->current)
            uv_timer_stop(&z->timer);
        return 0;
    }
    return pf_error_set(err, PF_E_INTERNAL, "unexpected event \"%s\"", event);
}

/* The zygote sends one fd at most, with "spawned": any more, or any with a truncated packet,
 * are closed and the event handled without them. */
static int
take_one_fd(struct zproc *p, struct control_packet_fds *fds)
{
    if (fds->n == 0)
        return -1;
    if (fds->n > 1 || fds->truncated) {
        pf_log_error(ZYGOTE, "zygote pid %d: a packet came with %zu fds%s, closing them",
                     (int) p->pid, fds->n, fds->truncated ? " (truncated)" : "");
        control_packet_close_fds(fds);
        return -1;
    }
    fds->n = 0;
    return fds->fd[0];
}

int
zygote_drain_control(struct zproc *p)
{
    static char buf[CONTROL_MAX_PACKET];
    while (p->fd >= 0) {
        struct control_packet_fds fds;
        ssize_t n = control_packet_recv(p->fd, buf, sizeof(buf), MSG_DONTWAIT, &fds);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        _cleanup_close_ int fd = take_one_fd(p, &fds);
        if (n <= 0)
            return -1;
        _cleanup_pf_error_ struct pf_error *err = NULL;
        _cleanup_json_ cJSON *msg = NULL;
        if (msg_parse(buf, (size_t) n, MSG_MAX_DEPTH, &msg, &err) < 0 ||
            on_event(p, msg, &fd, &err) < 0)
            pf_log_error(ZYGOTE, "zygote pid %d: %s, ignoring", (int) p->pid, err->msg);
    }
    return -1;
}

/* ---- requests to the zygote ------------------------------------------------------------- */

bool
zygote_can_spawn(const struct zygote *z)
{
    return !z->stopping && z->current && !z->current->lost;
}

int
zygote_spawn(struct zygote *z, uint64_t job_id, const struct harden_params *params, void *job_ctx,
             int *ret_channel_fd, struct pf_error **err)
{
    if (z->stopping)
        return pf_error_set(err, PF_E_SHUTTING_DOWN, "the zygote is stopping");
    if (!zygote_can_spawn(z))
        return pf_error_set(err, PF_E_BUSY, "the zygote is restarting; try again shortly");
    if ((double) job_id > MAX_JSON_INT || job_find(z, job_id))
        return pf_error_set(err, PF_E_INTERNAL, "job id %llu is invalid or already in use",
                            (unsigned long long) job_id);
    _cleanup_json_ cJSON *msg = cJSON_CreateObject();
    cJSON *harden = harden_params_to_json(params);
    if (!msg || !harden) {
        cJSON_Delete(harden);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    cJSON_AddStringToObject(msg, "op", "spawn");
    cJSON_AddNumberToObject(msg, "job", (double) job_id);
    cJSON_AddItemToObject(msg, "harden", harden);
    _cleanup_free_ char *s = cJSON_PrintUnformatted(msg);
    struct zjob *j = calloc(1, sizeof(*j));
    _cleanup_free_ struct zjob *owned_job = j;
    if (!s || !j)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
        return pf_error_set_errno(err, PF_E_BUSY, errno, "worker socketpair");
    _cleanup_close_ int daemon_end = sv[0], worker_end = sv[1];
    int r = control_packet_send(z->current->fd, s, strlen(s), worker_end, MSG_DONTWAIT);
    if (r == -EAGAIN)
        return pf_error_set(err, PF_E_BUSY, "the zygote's control channel is full");
    /* The zygote died and its loss is not processed yet: the job meets what zygote_fail_all_jobs
     * would have told it a moment later. */
    if (r == -EPIPE || r == -ECONNRESET)
        return pf_error_set(err, PF_E_WORKER_CRASHED, "the zygote died before forking this worker");
    if (r < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, -r, "zygote control channel: send");
    *j = (struct zjob){.next = z->jobs, .id = job_id, .ctx = job_ctx, .pidfd = -1};
    z->jobs = TAKE_PTR(owned_job);
    *ret_channel_fd = TAKE_FD(daemon_end);
    return 0;
}

int
zygote_kill(struct zygote *z, uint64_t job_id)
{
    struct zjob *j = job_find(z, job_id);
    if (!j)
        return 0;
    j->killed = true;
    if (!z->current || z->current->lost)
        return 0; /* its zygote is gone, and the worker with it */
    char s[96];
    snprintf(s, sizeof(s), "{\"op\":\"kill\",\"job\":%llu}", (unsigned long long) job_id);
    int r = control_packet_send(z->current->fd, s, strlen(s), -1, MSG_DONTWAIT);
    if (r < 0)
        pf_log_error(ZYGOTE, "job %llu: cannot ask for its kill: %s", (unsigned long long) job_id,
                     strerror(-r));
    return r;
}

int
zygote_cancel(struct zygote *z, uint64_t job_id, int run)
{
    struct zjob *j = job_find(z, job_id);
    if (!j || !z->current || z->current->lost)
        return 0;
    char s[128];
    snprintf(s, sizeof(s), "{\"op\":\"signal\",\"job\":%llu,\"signal\":\"SIGUSR1\",\"run\":%d}",
             (unsigned long long) job_id, run);
    int r = control_packet_send(z->current->fd, s, strlen(s), -1, MSG_DONTWAIT);
    if (r < 0)
        pf_log_error(ZYGOTE, "job %llu: cannot ask for its cancellation: %s",
                     (unsigned long long) job_id, strerror(-r));
    return r;
}

bool
zygote_worker_alive(const struct zygote *z, uint64_t job_id)
{
    for (const struct zjob *j = z->jobs; j; j = j->next) {
        if (j->id != job_id)
            continue;
        /* A pidfd turns readable when its process has exited, reaped or not. */
        struct pollfd p = {.fd = j->pidfd, .events = POLLIN};
        return j->pidfd < 0 || poll(&p, 1, 0) == 0;
    }
    return false;
}

unsigned
zygote_live_workers(const struct zygote *z)
{
    return z->n_live;
}
