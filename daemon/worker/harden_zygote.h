/* The zygote's side of hardening (harden_zygote.c). The expensive work is done once, in the
 * zygote, before any fork, and every worker inherits it: the cgroup backend and its pool of
 * cgroups, the empty network namespace and the read-only mount view, the compiled seccomp
 * filter and the SIGSYS frames. Per job, the zygote brackets each fork:
 *
 *     harden_job_prepare(params, &job, &err);   // picks a pool slot, sets its limits
 *     pid = fork();                             // child: worker_harden() → the layers
 *     ... wait4(pid) ...
 *     job = harden_job_finish(job, &outcome);   // oom_killed, pids_limited, peak, cpu
 *
 * These functions run in the zygote and may log (groups ZYGOTE, CGROUP, SECCOMP); the layers
 * themselves (harden_internal.h) never log. The zygote is single-threaded, so the state here is
 * process-wide, and a fork carries the prepared job into the worker. */
#ifndef DAEMON_WORKER_HARDEN_ZYGOTE_H
#define DAEMON_WORKER_HARDEN_ZYGOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "harden.h"
#include "pf_error.h"

/* Exit code of a worker killed by its SIGSYS handler, after the seccomp frame (128 + SIGSYS). */
#define HARDEN_SECCOMP_EXIT_CODE 159

/* Long-lived fds of the zygote's hardening state (cgroup.procs of each slot, the namespaces)
 * are kept at or above this number, clear of the worker's channel, which worker_harden() moves
 * to fd 3 with dup2 before any layer runs. */
#define HARDEN_HIGH_FD_MIN 10

/* Moves fd to the lowest free number >= HARDEN_HIGH_FD_MIN (close-on-exec), closing the old one.
 * Returns the new fd, or -1 (fd closed) with errno set. */
int harden_fd_move_high(int fd);

/* The identity range used when harden_params.uid/gid is 0: base + pool slot. */
#define HARDEN_UID_BASE_DEFAULT  600000u
#define HARDEN_UID_COUNT_DEFAULT 65536u

struct harden_zygote_config {
    const char *cgroup_mode; /* "auto" (or NULL), "v2", "v1", "none" */
    bool seccomp_strict;     /* an allow-listed name unknown on this arch is an error */
    bool namespaces_off;     /* make no namespace: the layer fails per job (degraded runs) */
    uint32_t uid_base;       /* 0: HARDEN_UID_BASE_DEFAULT */
    uint32_t uid_count;      /* 0: HARDEN_UID_COUNT_DEFAULT */
};

/* What the worker's cgroup saw, read after it was reaped. have_cgroup is false with the `none`
 * backend (or the cgroup layer off): then every other field is 0. */
struct harden_outcome {
    bool have_cgroup;
    bool oom_killed;         /* memory.events oom_kill / memory.oom_control oom_kill grew */
    bool pids_limited;       /* pids.events max grew: a fork or clone was refused */
    uint64_t peak_memory_kb; /* memory.peak / memory.max_usage_in_bytes; 0 when unknown */
    uint64_t cgroup_cpu_ms;  /* cpu.stat usage_usec / cpuacct.usage */
};

/* Once at zygote start-up, before the first fork. Chooses the cgroup backend (logging which and
 * why; the `none` backend logs the loud rlimits-only warning), makes the network namespace and
 * the mount view, compiles the seccomp filter, probes Landlock, empties the caller's capability
 * bounding set (harden_privileges_prepare: the caller must not execve() as root afterwards). Only a
 * failure that no profile could run with (the seccomp filter does not compile, say) is an error; a
 * missing facility is logged and the layer then fails per job with a message naming it. */
int harden_zygote_init(const struct harden_zygote_config *config, struct pf_error **err);
/* "v2", "v1" or "none": the cgroup backend harden_zygote_init() chose. */
const char *harden_cgroup_backend_name(void);
/* At zygote exit: kills what is left in the pool's cgroups and removes them. */
void harden_zygote_finish(void);

struct harden_job;

/* Before forking the worker of a job: takes a free pool slot, writes its cgroup limits (only
 * those that changed since the slot's last job), and points the zygote's next child at a fresh
 * pid namespace when the namespaces layer is on. On error nothing is held. */
int harden_job_prepare(const struct harden_params *p, struct harden_job **ret,
                       struct pf_error **err);
/* After the worker was reaped (or the fork failed): reads what its cgroup saw into
 * *ret_outcome (may be NULL), kills anything left in it, and gives the slot back. Accepts NULL;
 * returns NULL. */
struct harden_job *harden_job_finish(struct harden_job *job, struct harden_outcome *ret_outcome);

/* Forks the worker of a prepared job: on cgroup v2 straight into its slot (clone3 with
 * CLONE_INTO_CGROUP), so that the worker need not move itself there; otherwise, or when the
 * kernel refuses, with fork() (the worker then joins by cgroup.procs or tasks). Returns what
 * fork() returns. Logs once when the kernel cannot fork into a cgroup. */
pid_t harden_job_fork(struct harden_job *job);

/* clone3(CLONE_INTO_CGROUP) into the cgroup v2 directory cgroup_fd (O_PATH is enough), and with
 * the namespace flags ns_flags (CLONE_NEW*, 0 for none), with the thread-id bookkeeping glibc's
 * fork() does; fork() when cgroup_fd is -1 and ns_flags 0, when clone3 cannot be used here, or
 * when the kernel refuses this one (refused into the cgroup, it is tried once more without it if
 * there are ns_flags). *ret_placed says, in parent and child, whether the child started in that
 * cgroup. Single-threaded callers only, as for fork() in the zygote. */
pid_t harden_fork_into_cgroup(int cgroup_fd, uint64_t ns_flags, bool *ret_placed);
/* Whether harden_fork_into_cgroup() may place children on this host (false once the kernel
 * said it has no clone3 or CLONE_INTO_CGROUP); why, or the last refusal, in why. */
bool harden_fork_into_cgroup_usable(char *why, size_t why_len);

/* ---- used by the layers (in the worker, after the fork) ---------------------------------- */

/* The uid/gid of the prepared job's slot in the configured range; the range's first ids when no
 * job was prepared (unit tests). */
void harden_job_ids(uid_t *ret_uid, gid_t *ret_gid);
/* The pool slot of the prepared job, or -1. */
int harden_job_slot(void);
/* In the worker: whether harden_job_fork() started it inside its slot's cgroup already. */
bool harden_job_forked_into_slot(void);

/* Compiles the two seccomp filters (with and without threads) and the SIGSYS frames; idempotent.
 * *ret_unknown: allow-listed names unknown on this architecture (skipped unless strict). */
int harden_seccomp_prepare(bool strict, unsigned *ret_unknown, struct pf_error **err);
const char *const *harden_seccomp_allowed(size_t *ret_n);
unsigned harden_seccomp_instructions(bool threads);

/* Makes the empty network namespace and the read-only mount view, first entering a user
 * namespace of the zygote's own when it is not root; idempotent. Best effort: what cannot be
 * made is reported through ret_* and the namespaces layer fails later, per job. */
int harden_ns_prepare(struct pf_error **err);
/* --namespaces off: harden_ns_prepare is not called; the per-job error says why. */
void harden_ns_set_off(void);
/* Makes the next fork()ed child of the calling process the init of a fresh pid namespace (or,
 * with new_pid_ns false, a member of the caller's own), and hands it the fresh ipc namespace made
 * ahead of time; with new_pid_ns false (between jobs), makes that spare. Once per fork: two
 * children forked after one call would share the ipc namespace. */
int harden_ns_prefork(bool new_pid_ns, struct pf_error **err);
/* The clone flags the next worker's fork needs (CLONE_NEWPID when the zygote is in a user
 * namespace of its own and the job gets a pid namespace; else 0). */
uint64_t harden_ns_fork_flags(void);
/* Whether harden_ns_prepare made the zygote a user namespace of its own (not root). */
bool harden_ns_in_userns(void);
/* What harden_ns_prepare could make, for the start-up line and `pyfenced --check`. */
bool harden_ns_have_netns(void);
bool harden_ns_have_mount_view(void);
/* Whether the namespaces layer gave this worker a private /tmp (Landlock then allows it). */
bool harden_ns_private_scratch(void);

/* Empties the calling process's capability bounding set (needs CAP_SETPCAP), so that its forks
 * start with an empty one and the privileges layer only checks it. Done by
 * harden_zygote_init(): a process that later calls execve() as root must not call it. */
int harden_privileges_prepare(struct pf_error **err);

/* The Landlock ABI of the running kernel: 0 when Landlock is absent or disabled. */
int harden_landlock_abi(void);

/* The calling process's supplementary groups other than its effective gid: how many in
 * *count, the first of them as "4, 27" in list. Without root a worker keeps them (its zygote's
 * user namespace must deny setgroups), so pyfenced starts with any only under --keep-groups. */
int harden_extra_groups(char *list, size_t size, unsigned *count, struct pf_error **err);

/* `pyfenced --check`: prints, for each layer, what this host will give it under config (the
 * options pyfenced was given: --cgroup, --namespaces, --uid-range; keep_groups: --keep-groups).
 * Returns 0 when every layer that is required by default (seccomp, privileges, identity,
 * rlimits) can be applied and pyfenced would start (the cgroup backend asked for can be used;
 * not root, no supplementary groups or --keep-groups), 1 otherwise. */
int harden_check_host(const struct harden_zygote_config *config, bool keep_groups, FILE *out);

#endif
