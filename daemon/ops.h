/* Request dispatch: a sorted {name, handler} table looked up with bsearch. A handler either
 * fills *ret_reply (answered now), leaves it NULL (it answers later through
 * conn_finish_request), or fails with *err, which conn.c sends as an error echoing the id. */
#ifndef DAEMON_OPS_H
#define DAEMON_OPS_H

#include <cjson/cJSON.h>

#include "msg.h"
#include "pf_error.h"

struct conn;
struct policy_profile;

typedef int (*op_handler_fn)(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
                             struct pf_error **err);

int ops_dispatch(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
                 struct pf_error **err);
/* The profile that applies to the peer of c: *ret is NULL when the daemon has no policy (tests).
 * Fails with PF_E_PERMISSION when the peer may not use its profile. */
int ops_peer_profile(struct conn *c, const struct policy_profile **ret, struct pf_error **err);

/* The handler for an op name, or NULL. */
op_handler_fn ops_lookup(const char *name);

/* op_status.c */
int op_hello(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
             struct pf_error **err);
int op_ping(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
            struct pf_error **err);
int op_stats(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
             struct pf_error **err);
/* op_exec.c */
int op_exec(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
            struct pf_error **err);

#endif
