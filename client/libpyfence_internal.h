/* What libpyfence_session.c uses of libpyfence.c beyond pyfence.h. Not exported: the version
 * script keeps every name outside pyfence_* local. */
#ifndef CLIENT_LIBPYFENCE_INTERNAL_H
#define CLIENT_LIBPYFENCE_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "pyfence.h"

/* True for 0 (no signal) and for every number sigaddset() takes. */
bool libpyfence_signo_valid(int signo);

/* When signo (blocked) is pending: lets it through, so that its handler runs as it would have
 * in a wait, and returns true. A signal that comes while a wait does not block (as its reply
 * is read) stays pending until then. */
bool libpyfence_take_pending(int signo);

/* Sends req (its id added) and waits for its reply, which *ret_reply receives (the caller
 * deletes it); a reply that is not ok fails with its error. signo interrupts the wait as in
 * pyfence_wait_signal (0: nothing does): then it fails with PYFENCE_E_INTERRUPTED and the
 * request, whose id *ret_id received (ret_id may be NULL), is still in flight. */
int libpyfence_request_signal(struct pyfence_conn *conn, cJSON *req, int signo, uint64_t *ret_id,
                              cJSON **ret_reply, struct pyfence_error *err);

#endif
