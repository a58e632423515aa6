/* The warm-up of a pool worker that is waiting for its request.
 *
 * A worker shares the zygote's memory copy-on-write: the first write to each shared page (a
 * reference count, an allocator's free list, the parser's arenas) costs a page fault and a
 * page copy, and a trivial snippet's run in a fresh worker is mostly those. A pool worker
 * takes them before its request comes, by running a fixed snippet through the same paths
 * (parse, compile, walk, print, the result's JSON) in a scratch environment of its own: the
 * job's environment is not touched, and nothing of the warm-up is reachable from it.
 *
 * The scratch environment is made in the zygote (worker_warm_up_env_new), like the job's
 * (exec_env_prebuild), and a worker never frees it: making its builtins takes a reference to
 * each of ~150 objects and freeing them drops it, either one a page copy each in a worker
 * (~85 page faults, more than a trivial job's whole run). It dies with the worker. */
#ifndef DAEMON_WORKER_WARM_UP_H
#define DAEMON_WORKER_WARM_UP_H

#include <stdbool.h>

#include "pf_error.h"

struct exec_env;

/* The scratch environment the warm-up runs in, configured with its small budgets; NULL with
 * *err. Made once, in the zygote, before its heap is frozen. */
struct exec_env *worker_warm_up_env_new(struct pf_error **err);

/* Whether worker_warm_up runs at all: true unless the frame is already waiting on fd (a worker
 * forked for a waiting request, or a pool worker bound while it hardened: its request must not
 * wait for a warm-up). */
bool worker_warm_up_wanted(int fd);

/* Warms the worker up in scratch (from worker_warm_up_env_new; not freed) if
 * worker_warm_up_wanted(fd). Called after hardening, so the snippet runs under every layer,
 * and before the run frame is read, which it leaves unread. 1: it ran and its result was ok;
 * 0: skipped; -1: it failed (the worker goes on: its job takes the faults itself; the tests
 * check that the warm-up snippet still runs). */
int worker_warm_up(int fd, struct exec_env *scratch);

/* The warm-up itself, whatever is waiting: 1 when its result was ok, -1 otherwise. The zygote
 * also runs it in the child that finds the code a worker runs (zygote_mem_share_code). */
int worker_warm_up_run(struct exec_env *scratch);

#endif
