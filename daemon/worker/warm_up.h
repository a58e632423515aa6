/* The warm-up of a pool worker that is waiting for its request.
 *
 * A worker shares the zygote's memory copy-on-write: the first write to each shared page (a
 * reference count, an allocator's free list, the parser's arenas) costs a page fault and a
 * page copy, and a trivial snippet's run in a fresh worker is mostly those. A pool worker
 * takes them before its request comes, by running a fixed snippet through the same paths
 * (parse, compile, walk, print, the result's JSON) in a scratch environment that it then
 * frees: the job's own environment is not touched, and nothing of the warm-up is left for the
 * job to see. */
#ifndef DAEMON_WORKER_WARM_UP_H
#define DAEMON_WORKER_WARM_UP_H

#include <stdbool.h>

/* Whether worker_warm_up runs at all: true unless the frame is already waiting on fd (a worker
 * forked for a waiting request, or a pool worker bound while it hardened: its request must not
 * wait for a warm-up). */
bool worker_warm_up_wanted(int fd);

/* Warms the worker up if worker_warm_up_wanted(fd). Called after hardening, so the snippet
 * runs under every layer, and before the run frame is read, which it leaves unread.
 * 1: it ran and its result was ok; 0: skipped; -1: it failed (the worker goes on: its job
 * takes the faults itself; the tests check that the warm-up snippet still runs). */
int worker_warm_up(int fd);

/* The warm-up itself, whatever is waiting: 1 when its result was ok, -1 otherwise. The zygote
 * also runs it in the child that finds the code a worker runs (zygote_mem_share_code). */
int worker_warm_up_run(void);

#endif
