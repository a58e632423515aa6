/* The daemon's side of the zygote (zygote.h). One struct zygote lives as long as the daemon;
 * each incarnation of the zygote process is a struct zproc, so that a dead one can finish
 * closing its libuv handles while its successor starts. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harden_params.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "zygote.h"

#define CONTROL_MAX_PACKET (64 * 1024)
/* A zygote imports what its profiles preload before it says it is ready: pandas alone took
 * over 10 s in the emulated guest of scripts/vm, and a slow host is not a broken zygote. */
#define READY_TIMEOUT_MS 30000
#define BACKOFF_MIN_MS   100
#define BACKOFF_MAX_MS   5000
#define STABLE_AFTER_MS  10000 /* a zygote that lived this long resets the back-off */
#define STOP_GRACE_MS    5000
#define MAX_JSON_INT     9007199254740992.0

struct zjob {
    struct zjob *next;
    uint64_t id;
    void *ctx; /* not owned: the caller's */
    pid_t pid; /* 0 until "spawned" */
    int pidfd; /* owned; -1 until "spawned", or when it could not be opened */
    bool killed;
};

struct zproc {
    uv_process_t process;
    uv_poll_t poll;
    struct zproc *next; /* in zygote.procs */
    struct zygote *z;
    int fd; /* control channel, owned */
    pid_t pid;
    bool ready, lost, exited, poll_init;
    int open_handles;
    uint64_t started_ms;
};

struct zygote {
    uv_loop_t *loop; /* not owned */
    char *path;
    int log_level;
    char **preload;
    char *cgroup_mode; /* NULL: auto */
    bool seccomp_strict;
    bool namespaces_off;
    char uid_range[32]; /* "START:COUNT", "" for the default */
    zygote_spawned_cb spawned_cb;
    zygote_exit_cb exit_cb;
    struct zproc *current; /* the incarnation that takes spawns, NULL while restarting */
    struct zproc *procs;   /* every incarnation whose handles are not closed yet */
    uv_timer_t timer;      /* restart back-off, then the restarted one's ready deadline */
    struct zjob *jobs;
    unsigned n_live, restarts;
    uint64_t backoff_ms;
    char python[32];
    bool stopping;
    int open_handles; /* the timer's and every zproc's: z is freed at zero once stopping */
};

static void proc_lost(struct zproc *p, const char *why);
static void schedule_restart(struct zygote *z);

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

/* The parent pid of pid, from /proc/PID/stat; 0 when it cannot be read. */
static pid_t
parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* "pid (comm) state ppid ...": comm may hold anything, so parse from its last ')'. */
    const char *p = strrchr(buf, ')');
    int ppid = 0;
    if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
        return 0;
    return (pid_t) ppid;
}

/* A handle on the worker that stays valid whatever happens to its pid. It is only trusted when,
 * after opening it, the process is still the zygote's child: the zygote had not reaped it, so
 * the pid cannot have been reused. Used to kill a lost zygote's workers (see fail_all_jobs). */
static int
open_worker_pidfd(pid_t pid, pid_t zygote)
{
    int fd = pidfd_open(pid, 0);
    if (fd >= 0 && parent_of(pid) != zygote)
        fd = pf_close(fd);
    return fd;
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
static void
fail_all_jobs(struct zygote *z, const char *why)
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

static int
on_event(struct zproc *p, const cJSON *msg, struct pf_error **err)
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
        j->pidfd = open_worker_pidfd(j->pid, p->pid);
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
        job_spawn_failed(z, j, PF_E_INTERNAL, msg_get_string(msg, "message", ""));
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

/* Reads every pending packet. Returns 0 when drained, -1 at EOF or on a broken channel. */
static int
drain_control(struct zproc *p)
{
    static char buf[CONTROL_MAX_PACKET];
    while (p->fd >= 0) {
        ssize_t n = recv(p->fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0)
            return -1;
        _cleanup_pf_error_ struct pf_error *err = NULL;
        _cleanup_json_ cJSON *msg = NULL;
        if (msg_parse(buf, (size_t) n, MSG_MAX_DEPTH, &msg, &err) < 0 || on_event(p, msg, &err) < 0)
            pf_log_error(ZYGOTE, "zygote pid %d: %s, ignoring", (int) p->pid, err->msg);
    }
    return -1;
}

/* ---- incarnations ------------------------------------------------------------------------ */

static void
maybe_free_zygote(struct zygote *z)
{
    if (!z->stopping || z->open_handles > 0)
        return;
    for (size_t i = 0; z->preload && z->preload[i]; i++)
        free(z->preload[i]);
    free(z->preload);
    free(z->cgroup_mode);
    free(z->path);
    free(z);
}

static void
on_proc_handle_closed(uv_handle_t *h)
{
    struct zproc *p = h->data;
    struct zygote *z = p->z;
    z->open_handles--;
    if (--p->open_handles > 0)
        return;
    for (struct zproc **pp = &z->procs; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    free(p);
    maybe_free_zygote(z);
}

static void
close_proc_handle(struct zproc *p, uv_handle_t *h)
{
    if (!uv_is_closing(h))
        uv_close(h, on_proc_handle_closed);
}

static void
on_poll(uv_poll_t *h, int status, int events)
{
    struct zproc *p = h->data;
    if (status < 0) {
        proc_lost(p, uv_strerror(status));
        return;
    }
    if (drain_control(p) < 0)
        proc_lost(p, "control channel closed");
}

static void
on_process_exit(uv_process_t *h, int64_t exit_status, int term_signal)
{
    struct zproc *p = h->data;
    p->exited = true;
    /* Events it sent before dying (workers it reaped) still count. */
    if (!p->lost && p->fd >= 0)
        drain_control(p);
    if (!p->lost && !p->z->stopping) {
        char why[64];
        snprintf(why, sizeof(why), term_signal ? "killed by signal %d" : "exited with status %d",
                 term_signal ? term_signal : (int) exit_status);
        proc_lost(p, why);
    }
    close_proc_handle(p, (uv_handle_t *) &p->process);
}

/* The zygote is gone (or no longer trusted): fail its jobs, make sure it dies, restart. */
static void
proc_lost(struct zproc *p, const char *why)
{
    struct zygote *z = p->z;
    if (p->lost)
        return;
    p->lost = true;
    if (p->poll_init) {
        uv_poll_stop(&p->poll);
        close_proc_handle(p, (uv_handle_t *) &p->poll);
    }
    /* Closing the channel is what asks a zygote to stop; when it was not asked, it is killed. */
    p->fd = pf_close(p->fd);
    if (!p->exited && !z->stopping)
        kill(p->pid, SIGKILL);
    if (p != z->current)
        return;
    z->current = NULL;
    if (z->stopping)
        return;
    if (uv_now(z->loop) - p->started_ms >= STABLE_AFTER_MS)
        z->backoff_ms = BACKOFF_MIN_MS;
    pf_log_error(ZYGOTE, "zygote pid %d lost (%s): failing %u live workers, restarting in %llu ms",
                 (int) p->pid, why, z->n_live, (unsigned long long) z->backoff_ms);
    fail_all_jobs(z, "the zygote died before forking this worker");
    schedule_restart(z);
}

static const char *
level_name(int level)
{
    static const char *const names[] = {
            [PF_LOG_CRIT] = "crit",     [PF_LOG_ERR] = "err",   [PF_LOG_WARNING] = "warning",
            [PF_LOG_NOTICE] = "notice", [PF_LOG_INFO] = "info", [PF_LOG_DEBUG] = "debug"};
    if (level < PF_LOG_CRIT)
        return "crit";
    if (level > PF_LOG_DEBUG)
        return "debug";
    return names[level];
}

/* Starts one incarnation; it is `current` once this returns 0, ready or not. */
static int
proc_start(struct zygote *z, struct pf_error **err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "zygote control socketpair");
    _cleanup_close_ int daemon_end = sv[0], zygote_end = sv[1];

    size_t n_pre = 0;
    while (z->preload && z->preload[n_pre])
        n_pre++;
    _cleanup_free_ char **args = calloc(10 + 2 * n_pre + 1, sizeof(char *));
    if (!args)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    size_t a = 0;
    args[a++] = z->path;
    args[a++] = (char *) "--log-level";
    args[a++] = (char *) level_name(z->log_level);
    for (size_t i = 0; i < n_pre; i++) {
        args[a++] = (char *) "--preload";
        args[a++] = z->preload[i];
    }
    if (z->cgroup_mode) {
        args[a++] = (char *) "--cgroup";
        args[a++] = z->cgroup_mode;
    }
    if (z->seccomp_strict)
        args[a++] = (char *) "--seccomp-strict";
    if (z->namespaces_off) {
        args[a++] = (char *) "--namespaces";
        args[a++] = (char *) "off";
    }
    if (z->uid_range[0]) {
        args[a++] = (char *) "--uid-range";
        args[a++] = z->uid_range;
    }
    /* No secret of the daemon's reaches the zygote: only what its logging needs, and
     * LD_BIND_NOW: the dynamic linker resolves every symbol once, in the zygote, instead of
     * writing each first-called function's address into a page every worker then copies. */
    const char *js = getenv("JOURNAL_STREAM");
    char js_var[128];
    char bind_now[] = "LD_BIND_NOW=1";
    char *env[3] = {bind_now, NULL, NULL};
    if (js && snprintf(js_var, sizeof(js_var), "JOURNAL_STREAM=%s", js) < (int) sizeof(js_var))
        env[1] = js_var;

    uv_stdio_container_t stdio[4] = {
            {.flags = UV_IGNORE},
            {.flags = UV_INHERIT_FD, .data.fd = STDOUT_FILENO},
            {.flags = UV_INHERIT_FD, .data.fd = STDERR_FILENO},
            {.flags = UV_INHERIT_FD, .data.fd = zygote_end},
    };
    uv_process_options_t opts = {.exit_cb = on_process_exit,
                                 .file = z->path,
                                 .args = args,
                                 .env = env,
                                 .stdio = stdio,
                                 .stdio_count = 4};
    struct zproc *p = calloc(1, sizeof(*p));
    if (!p)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    p->z = z;
    p->fd = -1;
    p->process.data = p;
    p->poll.data = p;
    p->next = z->procs;
    z->procs = p;
    p->open_handles = 1;
    z->open_handles++;
    int r = uv_spawn(z->loop, &p->process, &opts);
    if (r < 0) {
        p->lost = p->exited = true;
        close_proc_handle(p, (uv_handle_t *) &p->process);
        return pf_error_set(err, PF_E_INTERNAL, "cannot start the zygote \"%s\": %s", z->path,
                            uv_strerror(r));
    }
    p->pid = p->process.pid;
    p->started_ms = uv_now(z->loop);
    p->fd = TAKE_FD(daemon_end);
    r = uv_poll_init(z->loop, &p->poll, p->fd);
    if (r == 0) {
        p->poll_init = true;
        p->open_handles++;
        z->open_handles++;
        r = uv_poll_start(&p->poll, UV_READABLE | UV_DISCONNECT, on_poll);
    }
    z->current = p;
    if (r < 0) {
        proc_lost(p, uv_strerror(r));
        return pf_error_set(err, PF_E_INTERNAL, "zygote control channel: %s", uv_strerror(r));
    }
    return 0;
}

static void
on_timer(uv_timer_t *t)
{
    struct zygote *z = t->data;
    if (z->stopping)
        return;
    if (z->current) {
        if (!z->current->ready) {
            char why[64];
            snprintf(why, sizeof(why), "not ready within %d ms", READY_TIMEOUT_MS);
            proc_lost(z->current, why);
        }
        return;
    }
    _cleanup_pf_error_ struct pf_error *err = NULL;
    if (proc_start(z, &err) < 0) {
        pf_log_error(ZYGOTE, "restart failed: %s", err->msg);
        if (!z->current)
            schedule_restart(z);
        return;
    }
    z->restarts++;
    uv_timer_start(&z->timer, on_timer, READY_TIMEOUT_MS, 0);
}

static void
schedule_restart(struct zygote *z)
{
    uv_timer_start(&z->timer, on_timer, z->backoff_ms, 0);
    z->backoff_ms = z->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : z->backoff_ms * 2;
}

static void
on_timer_closed(uv_handle_t *h)
{
    struct zygote *z = h->data;
    z->open_handles--;
    maybe_free_zygote(z);
}

static uint64_t
mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* Blocking, at start-up only: the daemon has nothing to serve before its zygote is ready. */
static int
wait_ready(struct zproc *p, struct pf_error **err)
{
    uint64_t deadline = mono_ms() + READY_TIMEOUT_MS;
    while (!p->ready) {
        uint64_t now = mono_ms();
        if (now >= deadline)
            return pf_error_set(err, PF_E_INTERNAL, "zygote pid %d not ready within %d ms",
                                (int) p->pid, READY_TIMEOUT_MS);
        struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
        int r = poll(&pfd, 1, (int) (deadline - now));
        if (r < 0 && errno != EINTR)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "poll");
        if (r > 0 && drain_control(p) < 0 && !p->ready)
            return pf_error_set(err, PF_E_INTERNAL,
                                "zygote pid %d exited before it was ready (its log says why)",
                                (int) p->pid);
    }
    return 0;
}

/* Waits up to grace_ms for p to exit by itself, then SIGKILLs it; closes its process handle. */
static void
reap_blocking(struct zproc *p, uint64_t grace_ms)
{
    if (p->exited || p->pid <= 0)
        return;
    uint64_t deadline = mono_ms() + grace_ms;
    for (;;) {
        pid_t r = waitpid(p->pid, NULL, WNOHANG);
        if (r == p->pid || (r < 0 && errno != EINTR))
            break;
        if (mono_ms() >= deadline) {
            pf_log_warning(ZYGOTE, "zygote pid %d still running after %llu ms, killing it",
                           (int) p->pid, (unsigned long long) grace_ms);
            kill(p->pid, SIGKILL);
            while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
                ;
            break;
        }
        usleep(5000);
    }
    p->exited = true;
    close_proc_handle(p, (uv_handle_t *) &p->process);
}

int
zygote_start(uv_loop_t *loop, const struct zygote_config *config, zygote_spawned_cb spawned_cb,
             zygote_exit_cb exit_cb, struct zygote **ret, struct pf_error **err)
{
    if (!config || !config->path)
        return pf_error_set(err, PF_E_CONFIG, "no zygote binary configured");
    struct zygote *z = calloc(1, sizeof(*z));
    if (!z)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    z->loop = loop;
    z->log_level = config->log_level;
    z->spawned_cb = spawned_cb;
    z->exit_cb = exit_cb;
    z->backoff_ms = BACKOFF_MIN_MS;
    size_t n = 0;
    while (config->preload && config->preload[n])
        n++;
    z->path = strdup(config->path);
    z->preload = calloc(n + 1, sizeof(char *));
    z->seccomp_strict = config->seccomp_strict;
    z->namespaces_off = config->namespaces_off;
    if (config->uid_base && config->uid_count)
        snprintf(z->uid_range, sizeof(z->uid_range), "%u:%u", config->uid_base, config->uid_count);
    z->cgroup_mode = config->cgroup_mode ? strdup(config->cgroup_mode) : NULL;
    bool oom = !z->path || !z->preload || (config->cgroup_mode && !z->cgroup_mode);
    for (size_t i = 0; !oom && i < n; i++)
        oom = !(z->preload[i] = strdup(config->preload[i]));
    uv_timer_init(loop, &z->timer);
    z->timer.data = z;
    z->open_handles = 1;
    if (oom) {
        pf_error_set(err, PF_E_INTERNAL, "out of memory");
        goto fail;
    }
    if (proc_start(z, err) < 0 || wait_ready(z->current, err) < 0)
        goto fail;
    *ret = z;
    return 0;
fail:
    z->spawned_cb = NULL;
    z->exit_cb = NULL;
    zygote_stop(z);
    return -1;
}

static int
send_packet(int fd, const char *s, int pass_fd)
{
    struct iovec iov = {.iov_base = (void *) s, .iov_len = strlen(s)};
    union {
        char raw[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } cbuf;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (pass_fd >= 0) {
        memset(&cbuf, 0, sizeof(cbuf));
        mh.msg_control = cbuf.raw;
        mh.msg_controllen = sizeof(cbuf.raw);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    ssize_t n;
    do
        n = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n < 0 ? -errno : 0;
}

int
zygote_spawn(struct zygote *z, uint64_t job_id, const struct harden_params *params, void *job_ctx,
             int *ret_channel_fd, struct pf_error **err)
{
    if (z->stopping)
        return pf_error_set(err, PF_E_SHUTTING_DOWN, "the zygote is stopping");
    if (!z->current || z->current->lost)
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
    int r = send_packet(z->current->fd, s, worker_end);
    if (r == -EAGAIN)
        return pf_error_set(err, PF_E_BUSY, "the zygote's control channel is full");
    /* The zygote died and its loss is not processed yet: the job meets what fail_all_jobs
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
    int r = send_packet(z->current->fd, s, -1);
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
    int r = send_packet(z->current->fd, s, -1);
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

pid_t
zygote_pid(const struct zygote *z)
{
    return z->current ? z->current->pid : 0;
}

unsigned
zygote_restarts(const struct zygote *z)
{
    return z->restarts;
}

unsigned
zygote_live_workers(const struct zygote *z)
{
    return z->n_live;
}

const char *
zygote_python_version(const struct zygote *z)
{
    return z->python;
}

struct zygote *
zygote_stop(struct zygote *z)
{
    if (!z)
        return NULL;
    z->stopping = true;
    uv_timer_stop(&z->timer);
    if (!uv_is_closing((uv_handle_t *) &z->timer))
        uv_close((uv_handle_t *) &z->timer, on_timer_closed);
    /* EOF on its control channel makes a zygote kill and reap its workers, then exit 0. */
    for (struct zproc *p = z->procs; p; p = p->next)
        proc_lost(p, "stopping");
    z->current = NULL;
    for (struct zproc *p = z->procs; p; p = p->next)
        reap_blocking(p, STOP_GRACE_MS);
    fail_all_jobs(z, "the daemon is stopping");
    z->spawned_cb = NULL;
    z->exit_cb = NULL;
    maybe_free_zygote(z);
    return NULL;
}
