/* Between worker_main() (worker.c: cancellation, the run frame, the environment, running a
 * snippet and its result) and the files it is split into: the channel's I/O (worker_channel.c),
 * the session loop (worker_session.c) and raw mode (worker_raw.c, -Draw_mode=true builds only).
 * Not a contract: only worker.h is. Everything here runs in the worker process, whose stderr may
 * be /dev/null: a failure is reported on the channel, and a broken channel ends the worker
 * (_exit(1)), so these functions return no error for it. */
#ifndef DAEMON_WORKER_WORKER_INTERNAL_H
#define DAEMON_WORKER_WORKER_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "pf_error.h"
#include "policy_limits.h"
#include "worker.h"

/* ---- worker_channel.c: the worker's end of its channel (CHANNEL.md, "Worker channel") ---- */

/* One frame read off the channel; payload is malloc'd and the reader's to free. */
struct frame_slot {
    char *payload;
    size_t len;
};

/* Printed text waiting to go out as "output" events (worker_output). */
struct out_batch {
    int fd;
    char *buf; /* owned */
    size_t len, cap;
    uint64_t last_flush_ms;
};

/* Sends obj as one frame; on failure the channel is gone and so is the worker's purpose. */
void worker_send_or_die(int fd, const cJSON *obj);
/* Reads the first frame (the run or session frame) into *slot. */
int worker_read_frame(int fd, struct frame_slot *slot, struct pf_error **err);
/* Readies worker_next_frame(), once the first frame has been read. */
void worker_channel_init(void);
/* 1 with the next frame in *slot, 0 at EOF; a broken channel ends the worker. Bytes past a
 * frame are kept for the next one. */
int worker_next_frame(int fd, struct frame_slot *slot);
/* exec_policy.egress: userdata points to the channel's fd. NULL ends the run. */
cJSON *worker_egress_round_trip(void *userdata, const cJSON *request);
/* exec_output_cb: userdata is a struct out_batch. */
void worker_output(void *userdata, const char *data, size_t len);
/* Sends what b holds now. */
void worker_output_flush(struct out_batch *b);

/* ---- worker.c: a run ---------------------------------------------------------------------- */

/* The first frame, parsed. */
struct run_job {
    struct exec_env *spare_env; /* the zygote's prebuilt environment, or NULL */
    cJSON *root;                /* owned */
    const char *code;
    const cJSON *variables;
    const char **imports; /* owned arrays; strings borrowed from root */
    size_t n_imports;
    const char **builtins_add, **builtins_remove;
    size_t n_builtins_add, n_builtins_remove;
    struct policy_limits limits;
    bool session; /* "op": "session": serve run/get frames until EOF (CHANNEL.md) */
    int run;      /* the run number of an ephemeral job's frame: 1 */
};

/* Run `run` begins (as soon as its frame is parsed, before its variables or code) and ends
 * (before its result is sent): what a cancel for it may stop (the block above them in worker.c). */
void worker_run_begin(int run);
void worker_run_end(void);

/* {"event": "result", "outcome": code, ...} for a failure outside the snippet itself. */
cJSON *worker_failure_result(int code, const char *message);
/* Sends worker_failure_result(code, message), then _exit(status). */
_Noreturn void worker_fail_job(int fd, int code, const char *message, int status);
/* Sets obj's member name to item (NULL: out of memory, which ends the worker). */
void worker_replace_item(cJSON *obj, const char *name, cJSON *item);
/* The worker's CPU time and peak RSS into res.stats. */
void worker_add_usage(cJSON *res);

/* The job's executor environment (the spare one configured, or a new one), with its variables
 * set. A failure is sent as the job's result and ends the worker. */
struct exec_env *worker_new_env(int fd, const struct run_job *job);
/* Runs one snippet and sends its result; env keeps the snippet's state for the next one. The
 * caller has called worker_run_begin(); this calls worker_run_end() before the result goes. */
void worker_run_snippet(int fd, struct exec_env *env, const struct policy_limits *limits,
                        const char *code);

/* ---- worker_session.c ----------------------------------------------------------------------- */

/* Serves a session's frames until the daemon closes the channel, then _exit(0). */
_Noreturn void worker_run_session(int fd, struct run_job *job);

/* ---- worker_raw.c (-Draw_mode=true test builds only) ---------------------------------- */

#if PYFENCE_RAW_MODE
/* Runs job->code as native CPython, sends its result, _exit(0). */
_Noreturn void worker_run_raw(int fd, const struct run_job *job);
#endif

#endif
