/* Between the two halves of the daemon's side of the zygote (zygote.h): its jobs and the events
 * the zygote sends about them (zygote_client.c), and its incarnations: starting, losing,
 * restarting and stopping the zygote process (zygote_client_proc.c). Not a contract: only
 * zygote.h is. One struct zygote lives as long as the daemon; each incarnation of the zygote
 * process is a struct zproc, so that a dead one can finish closing its libuv handles while its
 * successor starts. */
#ifndef DAEMON_WORKER_ZYGOTE_CLIENT_INTERNAL_H
#define DAEMON_WORKER_ZYGOTE_CLIENT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "zygote.h"

struct zjob {
    struct zjob *next;
    uint64_t id;
    void *ctx; /* not owned: the caller's */
    pid_t pid; /* 0 until "spawned" */
    int pidfd; /* owned, from the zygote with "spawned"; -1 before, or when it sent none */
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
    uint64_t lost_ns;        /* uv_hrtime() when `current` was last lost */
    char lost_why[96];       /* how it was lost: "zygote pid N lost (killed by signal 9)" */
    char restart_error[224]; /* why the last restart since then failed, "" if none did */
    char python[32];
    bool stopping;
    int open_handles; /* the timer's and every zproc's: z is freed at zero once stopping */
};

/* zygote_client.c: reads every pending packet of p's control channel and acts on each event.
 * Returns 0 when drained, -1 at EOF or on a broken channel. */
int zygote_drain_control(struct zproc *p);
/* zygote_client.c: ends every job of a zygote that is gone (exit_cb for spawned workers, which it
 * also kills; spawned_cb with an error for spawns not answered yet). */
void zygote_fail_all_jobs(struct zygote *z, const char *why);
/* zygote_client.c: the code a spawn_failed event's optional "code" gives the job: the zygote
 * may name hardening_unavailable (a required layer it prepares per job); anything else, or
 * none, is internal. */
int zygote_spawn_failed_code(const char *name);

#endif
