/* pyfenced's file descriptors. pyfenced is shared by every uid of the machine: one uid's idle
 * connections must not take the fds every uid's workers need (a worker's socketpair failing
 * with EMFILE fails everybody's jobs, and an accept failing with EMFILE drops a client without
 * its busy reply). So at start-up the soft RLIMIT_NOFILE is raised to the hard limit, and
 * max_connections must fit in it beside everything else the daemon holds; the rest stays free
 * whatever clients do. Non-logging: main.c says what it got.
 *
 * What each thing holds open in pyfenced, from the code:
 * - pyfenced itself, FDLIMIT_DAEMON_FDS: stdin, stdout and stderr (3); libuv's epoll fd, its two
 *   signal pipes, its async eventfd and its EMFILE reserve (/dev/null) (7); libcurl's multi
 *   handle's wake-up socketpair (2, egress.c); the listening socket (1): 13 — counted at start
 *   in /proc/PID/fd. Rounded up to 32 for what lives a moment: a spawn's second socketpair end
 *   until it is passed on (zygote_client.c), a /proc file read, a zygote start's pipes, and
 *   what an egress lookup reads when it starts (resolv.conf, /dev/urandom, /etc/hosts: opened
 *   and closed within one call on the loop, so one at a time).
 * - a zygote, FDLIMIT_ZYGOTE_FDS: its control socket, and while it restarts the new one's too:
 *   2. There are at most FDLIMIT_ZYGOTES: the lean one and, when a profile preloads, the
 *   preload one.
 * - a worker, FDLIMIT_WORKER_FDS, an ephemeral job's, a pool worker's or a session's alike: its
 *   channel and its pidfd (2), and while it makes an egress request (one at a time per worker)
 *   FDLIMIT_EGRESS_FDS, the more of what its two steps hold, one after the other (the lookup's
 *   sockets are closed before the transfer starts): its host-name lookup's c-ares channel, a
 *   UDP and a TCP socket per name server asked (EGRESS_LOOKUP_FDS_MAX, 6: egress_lookup.h);
 *   the transfer's libcurl socket, a second one while both address families are tried, and its
 *   threaded resolver's socketpair (FDLIMIT_TRANSFER_FDS, 4). So 8. A lookup is ended with its
 *   request (egress_lookup_cancel), so only workers' lookups hold fds. A session holds nothing
 *   more than its worker (the connection that owns it is counted as a connection). At most
 *   max_workers of them live.
 * - a connection: its socket, 1; at most max_connections are served.
 * - FDLIMIT_ACCEPT_SLACK: connections refused (max_connections, max_connections_per_uid) are
 *   accepted all the same, to be told why with a busy reply, and hold their socket until that
 *   reply is written, one loop iteration; in a burst, as many as the listen backlog.
 *
 * So, the formula:
 *   needed = FDLIMIT_DAEMON_FDS + FDLIMIT_ZYGOTES x FDLIMIT_ZYGOTE_FDS
 *            + max_workers x FDLIMIT_WORKER_FDS + FDLIMIT_ACCEPT_SLACK + max_connections
 * and max_connections fits when needed <= the (raised) soft RLIMIT_NOFILE. */
#ifndef DAEMON_FDLIMIT_H
#define DAEMON_FDLIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "egress_lookup.h"
#include "listener.h"
#include "pf_error.h"

#define FDLIMIT_DAEMON_FDS   32
#define FDLIMIT_ZYGOTE_FDS   2
#define FDLIMIT_ZYGOTES      2
#define FDLIMIT_TRANSFER_FDS 4
#define FDLIMIT_EGRESS_FDS \
    (EGRESS_LOOKUP_FDS_MAX > FDLIMIT_TRANSFER_FDS ? EGRESS_LOOKUP_FDS_MAX : FDLIMIT_TRANSFER_FDS)
#define FDLIMIT_WORKER_FDS   (2 + FDLIMIT_EGRESS_FDS)
#define FDLIMIT_ACCEPT_SLACK LISTENER_BACKLOG
/* An RLIMIT_NOFILE of RLIM_INFINITY (not on Linux, where nr_open caps it) fits anything. */
#define FDLIMIT_UNLIMITED UINT64_MAX

/* The fds pyfenced may need beside its connections, with max_workers workers. */
uint64_t fdlimit_fixed(uint64_t max_workers);

struct fdlimit {
    uint64_t before; /* the soft limit pyfenced was started with */
    uint64_t soft;   /* the soft limit now: the hard limit, unless raising it failed */
    uint64_t hard;
};

/* Raises the soft RLIMIT_NOFILE to the hard one. *ret says what it was and is; on failure to
 * raise it (a negative return, PF_E_INTERNAL) *ret is still filled, with soft == before. */
int fdlimit_raise(struct fdlimit *ret, struct pf_error **err);

/* Fits *max_connections into `limit` fds beside fdlimit_fixed(max_workers). When it does not:
 * an explicit --max-connections (`explicit_connections`) or workers that leave no room for
 * even one connection fail with PF_E_CONFIG naming the figures and the way out; the default
 * is lowered to what fits, and *ret_clamped_from (else 0) says from what. */
int fdlimit_fit(uint64_t limit, uint64_t max_workers, bool explicit_connections,
                int64_t *max_connections, int64_t *ret_clamped_from, struct pf_error **err);

#endif
