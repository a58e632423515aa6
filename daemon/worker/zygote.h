/* The daemon's side of the zygote (daemon/worker/zygote_client.c and zygote_client_proc.c):
 * starts the pyfence-zygote process, asks it to fork workers, learns how they ended. The daemon
 * never embeds Python; the zygote does, and a worker is a fork of it. Wire format of the control
 * channel and of a worker's channel: daemon/worker/CHANNEL.md. Logs through group ZYGOTE/WORKER. */
#ifndef DAEMON_WORKER_ZYGOTE_H
#define DAEMON_WORKER_ZYGOTE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "harden.h"
#include "pf_error.h"

/* How a worker process ended, as the zygote (its parent) saw it through wait4(). */
struct zygote_exit {
    uint64_t job_id;
    pid_t pid;
    int exit_code;          /* valid when signal == 0 */
    int signal;             /* terminating signal, 0 when it exited */
    bool killed_by_request; /* we asked for the kill (zygote_kill) */
    uint64_t cpu_ms;        /* user+system, from rusage */
    uint64_t max_rss_kb;
    /* From the worker's cgroup (CHANNEL.md, optional fields of "exited"); all false/0 when
     * have_cgroup is false (the `none` backend, or the cgroup layer off). */
    bool have_cgroup;
    bool oom_killed;         /* the cgroup's OOM killer ran: memory_limit */
    bool pids_limited;       /* a fork or thread was refused: pids_limit */
    uint64_t peak_memory_kb; /* 0 when unknown */
    uint64_t cgroup_cpu_ms;  /* threads and children included */
};

/* Called once per spawn request: with pid > 0 when the worker was forked, or with an error.
 * Then exit_cb is called exactly once when that worker has been reaped (also when the zygote
 * itself died: then signal is SIGKILL and the exit is synthesised). After a spawned_cb with an
 * error there is no exit_cb. Callbacks may call zygote_spawn/zygote_kill, not zygote_stop. */
typedef void (*zygote_spawned_cb)(void *job_ctx, pid_t pid, const struct pf_error *err);
typedef void (*zygote_exit_cb)(void *job_ctx, const struct zygote_exit *exit_info);

struct zygote;

struct zygote_config {
    /* pyfence-zygote binary. pyfenced (--zygote PATH, else) looks next to its own executable,
     * then in worker/ below it (the build tree), then in PYFENCE_LIBEXECDIR (config.h). */
    const char *path;
    int log_level;
    const char *const *preload; /* modules the zygote imports once (NULL-terminated), may be NULL */
    const char *cgroup_mode;    /* --cgroup: "auto" (NULL), "v2", "v1", "none" (rlimits only) */
    bool seccomp_strict;        /* --seccomp-strict */
    bool namespaces_off;        /* --namespaces off: no namespace is made or entered */
    uint32_t uid_base, uid_count; /* --uid-range START:COUNT; 0: the zygote's default */
};

/* Starts the zygote and waits (blocking, bounded by 10 s) for its "ready" message. */
int zygote_start(uv_loop_t *loop, const struct zygote_config *config, zygote_spawned_cb spawned_cb,
                 zygote_exit_cb exit_cb, struct zygote **ret, struct pf_error **err);

/* Asks for a worker for job_id, hardened with `params`. On success *ret_channel_fd is the
 * daemon's end of a fresh SOCK_STREAM socketpair (O_CLOEXEC, non-blocking), owned by the
 * caller; the worker holds the other end. Callbacks receive job_ctx. */
int zygote_spawn(struct zygote *z, uint64_t job_id, const struct harden_params *params,
                 void *job_ctx, int *ret_channel_fd, struct pf_error **err);

/* False while no zygote process can take a spawn: the last one was lost and the next is not
 * started yet (zygote_spawn would refuse, busy "the zygote is restarting"), or z is stopping.
 * A caller that can wait keeps its job waiting and asks again on a later turn of the loop: the
 * restart is a timer on the loop, so the turn that runs it finds the zygote back (and a spawn
 * sent before it is ready waits on its control channel). */
bool zygote_can_spawn(const struct zygote *z);

/* The longest pause between two restarts of a lost zygote: the back-off doubles from 100 ms up
 * to this, so a zygote that can come back is tried again at least this often. */
#define ZYGOTE_BACKOFF_MAX_MS 5000

/* While zygote_can_spawn is false and z is not stopping: when (uv_hrtime()) the last zygote
 * process was lost, and in why (cut to why_size) what is known of the cause: how it was lost,
 * and the last restart's failure when one failed since ("zygote pid 12 lost (killed by signal
 * 9); restart failed: cannot start the zygote \"/x\": no such file or directory"). Returns 0,
 * why "", while a zygote can take spawns (or z is stopping). */
uint64_t zygote_down_since(const struct zygote *z, char *why, size_t why_size);

/* SIGKILLs the worker of job_id if it still lives (no-op otherwise). */
int zygote_kill(struct zygote *z, uint64_t job_id);

/* Asks the worker of job_id to stop run `run` (the number its run frame carried, 1 or more;
 * CHANNEL.md): the zygote queues it SIGUSR1 with that number if it is still its live child (no
 * pid reuse), and the executor ends the run with `cancelled` at its next check. A cancel that
 * comes after that run has ended stops nothing, a later run included; one that comes before the
 * run has begun takes effect when it begins. No-op when the worker is gone. The caller kills it
 * after a grace period. */
int zygote_cancel(struct zygote *z, uint64_t job_id, int run);

/* False when the worker of job_id is known to have died (its pidfd says so), even if the
 * zygote has not reported it yet; true while it lives or cannot be told. */
bool zygote_worker_alive(const struct zygote *z, uint64_t job_id);

pid_t zygote_pid(const struct zygote *z);
unsigned zygote_restarts(const struct zygote *z);
unsigned zygote_live_workers(const struct zygote *z);
const char *zygote_python_version(const struct zygote *z);

/* Kills every worker, stops the zygote, reaps it, frees z. Accepts NULL; returns NULL.
 * exit_cb is called for each worker still live (spawned_cb with PF_E_SHUTTING_DOWN for spawns
 * not answered yet); no callback after it returns. Its libuv handles finish closing on the next
 * turn of the loop: run the loop before uv_loop_close(). A failed zygote_start() leaves the
 * same kind of closing handles behind. */
struct zygote *zygote_stop(struct zygote *z);

#endif
