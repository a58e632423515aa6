/* The daemon's side of the zygote (zygote.h), its incarnations: starting the pyfence-zygote
 * process (zygote_start), noticing it is lost (its channel closed, it exited, or it was not
 * ready in time), restarting it with back-off, and stopping it (zygote_stop). Separate from
 * zygote_client.c, which handles the jobs a running zygote serves: this file only knows that a
 * zygote process lives or dies, and hands that file the events and the jobs to fail. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pf_cleanup.h"
#include "pf_log.h"
#include "zygote_client_internal.h"

/* A zygote imports what its profiles preload before it says it is ready: pandas alone took
 * over 10 s in the emulated guest of scripts/vm, and a slow host is not a broken zygote. */
#define READY_TIMEOUT_MS 30000
#define BACKOFF_MIN_MS   100
#define BACKOFF_MAX_MS   ZYGOTE_BACKOFF_MAX_MS
#define STABLE_AFTER_MS  10000 /* a zygote that lived this long resets the back-off */
#define STOP_GRACE_MS    5000

static void proc_lost(struct zproc *p, const char *why);
static void schedule_restart(struct zygote *z);

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
    if (zygote_drain_control(p) < 0)
        proc_lost(p, "control channel closed");
}

static void
on_process_exit(uv_process_t *h, int64_t exit_status, int term_signal)
{
    struct zproc *p = h->data;
    p->exited = true;
    /* Events it sent before dying (workers it reaped) still count. */
    if (!p->lost && p->fd >= 0)
        zygote_drain_control(p);
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
    /* Requests waiting for a worker meanwhile are told this if it does not come back. */
    z->lost_ns = uv_hrtime();
    snprintf(z->lost_why, sizeof(z->lost_why), "zygote pid %d lost (%s)", (int) p->pid, why);
    z->restart_error[0] = '\0';
    zygote_fail_all_jobs(z, "the zygote died before forking this worker");
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

/* The zygote's command line from z's configuration; NULL when out of memory. The strings are
 * borrowed from z (or literals): free the array only. */
static char **
zygote_args(const struct zygote *z)
{
    size_t n_pre = 0;
    while (z->preload && z->preload[n_pre])
        n_pre++;
    char **args = calloc(10 + 2 * n_pre + 1, sizeof(char *));
    if (!args)
        return NULL;
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
        args[a++] = (char *) z->uid_range;
    }
    return args;
}

/* Starts one incarnation; it is `current` once this returns 0, ready or not. */
static int
proc_start(struct zygote *z, struct pf_error **err)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "zygote control socketpair");
    _cleanup_close_ int daemon_end = sv[0], zygote_end = sv[1];

    _cleanup_free_ char **args = zygote_args(z);
    if (!args)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
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
        snprintf(z->restart_error, sizeof(z->restart_error), "%s", err->msg);
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
        if (r > 0 && zygote_drain_control(p) < 0 && !p->ready)
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

uint64_t
zygote_down_since(const struct zygote *z, char *why, size_t why_size)
{
    if (why_size)
        why[0] = '\0';
    if (zygote_can_spawn(z) || z->stopping)
        return 0;
    if (why_size)
        snprintf(why, why_size, "%s%s%s", z->lost_why,
                 z->restart_error[0] ? "; restart failed: " : "", z->restart_error);
    return z->lost_ns;
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
    zygote_fail_all_jobs(z, "the daemon is stopping");
    z->spawned_cb = NULL;
    z->exit_cb = NULL;
    maybe_free_zygote(z);
    return NULL;
}
