/* What job.c (a job's life: admitted, given a worker, timed, ended, released) and job_channel.c
 * (what its worker says over the channel, and the reply its request gets) use of each other
 * beyond job.h. Not a contract: only job.h is. */
#ifndef DAEMON_JOB_INTERNAL_H
#define DAEMON_JOB_INTERNAL_H

#include <sys/types.h>
#include <uv.h>

#include "job.h"

/* A write request embeds uv_write_t first and owns its buffer until job_on_channel_write. */
struct job_write {
    uv_write_t req;
    char *buf;
};

/* ---- the job's life (job.c) ------------------------------------------------------------- */

/* The connection no longer waits on j (it was answered, or is gone). Idempotent. */
void job_detach_conn(struct job *j);
/* Has the zygote kill j's worker, if it has one still running; the first reason given sticks. */
void job_kill_worker(struct job *j, enum job_kill_reason reason);
/* Stops reading j's channel and closes it (once): an egress call under way is abandoned, and
 * an idle pool worker leaves its pool. */
void job_close_channel(struct job *j);
/* Called at the worker's exit and at its channel's end: once both are in, a request still
 * unanswered is answered (from a held result, as cancelled, or from how the worker ended) or
 * goes to another worker (retry_elsewhere); then j is released if nothing else holds it. */
void job_settle(struct job *j);

/* ---- the channel and the reply (job_channel.c) ------------------------------------------ */

/* j's request is owed nothing more (it was answered, or handed over to another job). */
void job_mark_replied(struct job *j);
/* The exec error reply for a failure the daemon saw itself (once; nothing if j replied). */
void job_reply_failure(struct job *j, int code, const char *message);
/* Replies with the result held for the worker's exit (j->held_result, which it frees). */
void job_reply_held_result(struct job *j);

/* The read and write callbacks of j's channel (stream->data and req->data are the job). */
void job_on_channel_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);
void job_on_channel_write(uv_write_t *req, int status);

#endif
