/* Between worker_harden() (harden.c) and the layers, one file each. Each layer applies itself
 * to the calling process (a freshly forked worker that has not read untrusted input yet),
 * returns 0 or a negative value with *err set, and never logs: the worker's stderr is /dev/null
 * after the fds layer, so the error travels back to worker.c, which reports it on the channel.
 * A layer that reads a field of harden_params documents which one. */
#ifndef DAEMON_WORKER_HARDEN_INTERNAL_H
#define DAEMON_WORKER_HARDEN_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "harden.h"
#include "pf_error.h"

/* The fd the worker's channel is moved to by the fds layer (CHANNEL.md). */
#define HARDEN_CHANNEL_FD 3

/* Each layer's entry point. `p->level[layer]` is HARDEN_REQUIRED or HARDEN_BEST_EFFORT when it
 * is called; a layer that can do only part of its work in best-effort mode may return 0. */
typedef int (*harden_apply_fn)(const struct harden_params *p, struct pf_error **err);

int harden_cgroup_apply(const struct harden_params *p, struct pf_error **err);
/* In the worker, once harden_cgroup_apply() ran: whether it joined its pool cgroup. */
bool harden_cgroup_joined(void);
/* scratch_mb. */
int harden_namespaces_apply(const struct harden_params *p, struct pf_error **err);
/* cpu_ms, memory_mb, file_size_mb, open_files, pids. */
int harden_rlimits_apply(const struct harden_params *p, struct pf_error **err);
/* Expects the channel already at HARDEN_CHANNEL_FD (harden_fds_move_channel). */
int harden_fds_apply(const struct harden_params *p, struct pf_error **err);
/* uid, gid. */
int harden_identity_apply(const struct harden_params *p, struct pf_error **err);
int harden_privileges_apply(const struct harden_params *p, struct pf_error **err);
int harden_landlock_apply(const struct harden_params *p, struct pf_error **err);
int harden_seccomp_apply(const struct harden_params *p, struct pf_error **err);

/* The job's error when a required layer could not be applied (takes lerr, the layer's own
 * error, which may be NULL: out of memory): PF_E_HARDENING_UNAVAILABLE, naming the layer, the
 * cause and what an operator can do. Every required layer's failure ends the job with it, but
 * one: the zygote died under the worker (PF_E_WORKER_CRASHED from the layer), which says
 * nothing about what this host can give. Returns -1. */
int harden_required_failed(enum harden_layer layer, struct pf_error *lerr, struct pf_error **err);

/* Moves channel_fd to HARDEN_CHANNEL_FD (close-on-exec set, blocking mode). Done by
 * worker_harden() before any layer runs, whatever the fds layer's level, so that a layer which
 * closes fds never closes the channel. Returns HARDEN_CHANNEL_FD. */
int harden_fds_move_channel(int channel_fd, struct pf_error **err);

/* Closes every fd >= lowfd: close_range(2), or with use_fallback (and where close_range is
 * missing) a loop over /proc/self/fd. Exposed for the tests of both paths. */
int harden_fds_close_from(int lowfd, bool use_fallback, struct pf_error **err);

/* The pid the fds layer expects as the worker's parent (the zygote calls this once at start-up
 * with its own pid; forks inherit it, and a pidfd of it, O_CLOEXEC and high). The layer sets
 * PR_SET_PDEATHSIG and then checks that this parent is still alive, closing the race where the
 * zygote died before the prctl: by the pidfd (which sees past the worker's own pid namespace),
 * and by getppid() where the parent is visible. 0 (default) only refuses a visible parent that
 * is init. */
void harden_expect_parent(pid_t zygote_pid);
/* PR_SET_PDEATHSIG(SIGKILL), then the parent check above. Part of the fds layer; worker_harden()
 * calls it again after the identity layer, since a change of credentials clears the setting. */
int harden_fds_die_with_parent(struct pf_error **err);
/* Closes the worker's copy of the parent's pidfd (worker_harden(), after the identity layer). */
void harden_fds_forget_parent(void);

/* Whether worker_harden() has an implementation for the layer (false: its table entry is NULL). */
bool harden_layer_built(enum harden_layer layer);

#endif
