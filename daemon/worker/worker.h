/* A worker's life after the zygote forked it: harden, read one "run" frame from the channel,
 * run it through the executor, stream output, send the result, exit. Wire format:
 * CHANNEL.md, "Worker channel". */
#ifndef DAEMON_WORKER_WORKER_H
#define DAEMON_WORKER_WORKER_H

#include "harden.h"

/* Largest frame on a worker's channel, either way (the run frame carries code and variables). */
#define WORKER_MAX_FRAME_BYTES (64u * 1024 * 1024)

/* Exit status of a worker that could not harden itself (after reporting why on the channel). */
#define WORKER_EXIT_HARDEN_FAILED 70

/* Never returns: the worker _exit()s 0 after sending its result, WORKER_EXIT_HARDEN_FAILED when
 * a required hardening layer failed, 1 when its channel broke. Called in the forked child with
 * the GIL held (zygote_python.h: what fork redid). channel_fd is the worker's end of the
 * socketpair; params is copied before anything else runs. spare_env, when not NULL, is the
 * zygote's prebuilt executor environment (exec_env_prebuild), which this worker configures and
 * uses for its job instead of building one; warm_env is the zygote's scratch environment for
 * the warm-up (worker_warm_up_env_new). */
struct exec_env;
_Noreturn void worker_main(int channel_fd, const struct harden_params *params,
                           struct exec_env *spare_env, struct exec_env *warm_env);

#endif
