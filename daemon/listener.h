/* The listening socket: path resolution, stale-socket replacement, a mode that is never looser
 * than asked, and systemd socket activation (fd 3). */
#ifndef DAEMON_LISTENER_H
#define DAEMON_LISTENER_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <uv.h>

#include "pf_error.h"

#define LISTENER_BACKLOG 128

struct listener {
    uv_pipe_t pipe;
    char *path;       /* owned; for logs, and for the unlink at exit */
    bool initialised; /* pipe was uv_pipe_init'ed and must be closed */
    bool activated;   /* handed over by systemd: never unlinked */
    bool created;     /* we bound it: unlink at exit, if it is still ours */
    dev_t dev;        /* identity of the socket file we created */
    ino_t ino;
};

/* Makes path usable for bind: creates its parent directory (0755) if missing; if the path
 * exists it must be a socket nobody listens on (ECONNREFUSED: stale, unlinked). A live socket
 * or a non-socket is refused with a message naming the path. */
int listener_prepare_path(const char *path, struct pf_error **err);

/* Binds and listens on path with exactly `mode` (the socket never exists with a looser one).
 * On success *ret_fd is a listening, non-blocking, close-on-exec socket. */
int listener_bind(const char *path, mode_t mode, int *ret_fd, struct pf_error **err);

/* The fd systemd passed (LISTEN_PID/LISTEN_FDS), or -1 when not socket-activated; errors when
 * the activation is malformed (several fds, fd 3 not a listening Unix stream socket). */
int listener_activation_fd(int *ret_fd, struct pf_error **err);

/* Resolves the path (explicit_path may be NULL), or adopts the activated socket, and starts
 * listening on loop. l->pipe.data is set to data. */
int listener_start(struct listener *l, uv_loop_t *loop, const char *explicit_path, mode_t mode,
                   uv_connection_cb cb, void *data, struct pf_error **err);

/* Stops accepting: closes the handle and unlinks the socket if we created it and it is still
 * ours. Idempotent. */
void listener_stop(struct listener *l);
/* Frees the path. */
void listener_finish(struct listener *l);

#endif
