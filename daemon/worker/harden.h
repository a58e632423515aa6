/* Worker hardening: one function, worker_harden(), applies every layer in the order of
 * DESIGN.md, before the worker reads any untrusted input. Each layer is its own file
 * (harden_rlimit.c, harden_fds.c, harden_cgroup.c, harden_ns.c, harden_caps.c,
 * harden_landlock.c, harden_seccomp.c) and returns an error; the worker dies on the first
 * failure of a `required` layer. */
#ifndef DAEMON_WORKER_HARDEN_H
#define DAEMON_WORKER_HARDEN_H

#include <stdbool.h>
#include <stdint.h>

#include "pf_error.h"

enum harden_level {
    HARDEN_OFF,
    HARDEN_BEST_EFFORT,
    HARDEN_REQUIRED,
    _HARDEN_LEVEL_MAX,
    _HARDEN_LEVEL_INVALID = -1,
};

enum harden_layer {
    HARDEN_LAYER_CGROUP,
    HARDEN_LAYER_NAMESPACES,
    HARDEN_LAYER_RLIMITS,
    HARDEN_LAYER_FDS,
    HARDEN_LAYER_IDENTITY,
    HARDEN_LAYER_PRIVILEGES,
    HARDEN_LAYER_LANDLOCK,
    HARDEN_LAYER_SECCOMP,
    _HARDEN_LAYER_MAX,
    _HARDEN_LAYER_INVALID = -1,
};

const char *harden_layer_name(enum harden_layer layer);
const char *harden_level_name(enum harden_level level);

/* What the daemon sends with each spawn request (limits already resolved from policy). */
struct harden_params {
    enum harden_level level[_HARDEN_LAYER_MAX];
    uint64_t cpu_ms;       /* RLIMIT_CPU (rounded up to seconds) and cgroup cpu */
    uint64_t memory_mb;    /* RLIMIT_AS / cgroup memory */
    uint64_t file_size_mb; /* RLIMIT_FSIZE */
    uint64_t scratch_mb;   /* size of the private tmpfs on /tmp (namespaces layer) */
    uint64_t open_files;   /* RLIMIT_NOFILE */
    uint64_t pids;         /* RLIMIT_NPROC / cgroup pids */
    uint32_t uid, gid;     /* identity layer: unprivileged ids for this worker */
};

/* Applies the layers, in order, to the calling process (a freshly forked worker).
 * channel_fd is kept open (moved to fd 3); everything else is closed.
 * Returns the channel's new fd, or -1 with *err naming the layer that failed. */
int worker_harden(const struct harden_params *params, int channel_fd, struct pf_error **err);

#endif
