/* What session_worker.c (the worker's life: started, given requests, timed, lost, ended) and
 * session_channel.c (the frames to and from that worker, and the replies they make) use of each
 * other beyond session.h. Not a contract: only session.h is. */
#ifndef DAEMON_SESSION_INTERNAL_H
#define DAEMON_SESSION_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

#include "pf_error.h"
#include "session.h"

/* ---- the channel and the replies (session_channel.c) ------------------------------------ */

/* Writes obj to s's worker as one frame; PF_E_SESSION_LOST once its channel is closed. */
int session_send_frame(struct session *s, const cJSON *obj, struct pf_error **err);
/* Stops reading s's channel and closes it (once); an egress call under way is abandoned. */
void session_close_channel(struct session *s);
/* Ends the request in flight, if any, with a failure reply (`lost` adds "session_lost": true).
 * The caller then gives the worker its next request if the session goes on. */
void session_request_fail(struct session *s, int code, const char *message, bool lost);
/* The read callback of s's channel (stream->data is the session). */
void session_on_channel_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf);

/* ---- the worker's life (session_worker.c) ----------------------------------------------- */

/* The worker is gone or is being killed, for cause: s is lost (once). The requests waiting
 * their turn are answered session_lost now, which ends s; without any, the next one learns it. */
void session_make_lost(struct session *s, const char *cause);
/* Called at the channel's end and at the worker's exit (or its failed spawn): once both are
 * in, a session still in the table has lost its worker, and an ended one may be released. */
void session_settle(struct session *s);

#endif
