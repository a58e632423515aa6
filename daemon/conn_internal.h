/* What conn.c (a connection's life: accept, admission, reading and dispatching requests,
 * back-pressure, idleness, closing) and conn_send.c (the messages it sends, their write
 * callback, and the slow-reader bounds on what its peer has not read) use of each other beyond
 * conn.h. Not a contract: only conn.h is. */
#ifndef DAEMON_CONN_INTERNAL_H
#define DAEMON_CONN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "conn.h"

/* ---- the connection's life (conn.c) ----------------------------------------------------- */

/* Starts c's idle timer again: timeout_ms, or with 0 conn_idle_timeout_ms; a half-closed
 * connection is checked for a full close instead. Nothing once c is closing. */
void conn_restart_idle(struct conn *c, uint64_t timeout_ms);
/* Takes c out of its back-pressure pause (conn_send.c's write callback calls it once the unsent
 * bytes are back under CONN_PAUSE_BYTES). */
void conn_resume(struct conn *c);

/* ---- the output side (conn_send.c) ------------------------------------------------------ */

/* Reply bytes written to nobody yet: what the peer has not read. */
size_t conn_unsent(struct conn *c);

#endif
