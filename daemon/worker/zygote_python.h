/* The Python state workers inherit from the zygote, and the little that fork must redo in it.
 *
 * The zygote forks from C, between control packets: single-threaded, holding no Python lock,
 * with no Python frame on its stack, and its signals go to a signalfd, so Python's own handlers
 * never trip. CPython's fork protocol (PyOS_BeforeFork, PyOS_AfterFork_Child) re-creates locks
 * and thread states that are then already right, and runs the hooks modules registered with
 * os.register_at_fork: threading's (rebuilds its table of threads: there is one) and random's
 * (reseeds the module's shared generator). Those hooks run Python code, and every object they
 * touch is a page the worker must copy: about 200 page faults, half of a trivial job's, at about
 * 2 µs each. Workers therefore skip the protocol and redo the one thing that matters to a
 * snippet: a fresh seed for random's module-level generator, from the kernel, as random.seed()
 * would take it, and for numpy's legacy global generator where the zygote preloaded numpy (it
 * has no after-fork hook at all: every worker of the data profile drew the same numbers).
 *
 * For the same reason the zygote prebuilds one executor environment (exec_env_prebuild) that
 * each worker configures for its job: building the namespace in every worker cost it ~60 more
 * copied pages. And the scratch environment a pool worker's warm-up runs in (warm_up.h): made
 * in each warmed-up worker it cost ~85 page faults, more than the warm-up saved its job. */
#ifndef DAEMON_WORKER_ZYGOTE_PYTHON_H
#define DAEMON_WORKER_ZYGOTE_PYTHON_H

#include <stdbool.h>

#include "pf_error.h"

struct exec_env;

struct zygote_python {
    void *random_inst;          /* PyObject *: random._inst, NULL when random is not loaded */
    void *random_seed;          /* PyObject *: _random.Random.seed, the C method */
    void *gauss_next;           /* PyObject *: the interned name "gauss_next" */
    void *numpy_seed;           /* PyObject *: numpy.random.mtrand._rand.seed, NULL without numpy */
    struct exec_env *spare_env; /* never used here: each worker takes over its own copy */
    struct exec_env *warm_env;  /* the same for the warm-up's scratch (warm_up.h) */
};

/* In the zygote, after the preloads and before the first fork: finds what workers reseed and
 * prebuilds their environments. */
int zygote_python_prepare(struct zygote_python *zp, struct pf_error **err);

/* In a freshly forked worker, before anything else runs Python code. -1 with *err when the
 * generator could not be reseeded: the worker must not run snippets with its parent's state. */
int zygote_python_after_fork(const struct zygote_python *zp, struct pf_error **err);

void zygote_python_release(struct zygote_python *zp);

#endif
