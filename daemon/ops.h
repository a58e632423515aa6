/* Request dispatch: a sorted {name, handler} table looked up with bsearch. A handler either
 * fills *ret_reply (answered now), leaves it NULL (it answers later through
 * conn_finish_request), or fails with *err, which conn.c sends as an error echoing the id. */
#ifndef DAEMON_OPS_H
#define DAEMON_OPS_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "msg.h"
#include "pf_error.h"

struct conn;
struct policy_profile;

typedef int (*op_handler_fn)(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
                             struct pf_error **err);

int ops_dispatch(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
                 struct pf_error **err);
/* The profile that applies to the peer of c: *ret is NULL when the daemon has no policy (tests).
 * Fails with PF_E_NOT_FOUND when the peer may not use its profile (as if it did not exist). */
int ops_peer_profile(struct conn *c, const struct policy_profile **ret, struct pf_error **err);
/* The profile a request (an ephemeral exec, session.open) runs under: the one its `profile`
 * field names, if the peer may use it, else the peer's own (ops_peer_profile). A name the peer
 * may not use fails with PF_E_NOT_FOUND and the same message as a missing one ("no profile
 * 'NAME' for uid N"), so that the policy's names are not disclosed. Without a policy (tests)
 * there is no profile to check a name against: *ret is NULL for every request, named or not,
 * and the table's defaults apply. */
int ops_request_profile(struct conn *c, const cJSON *req, const struct policy_profile **ret,
                        struct pf_error **err);

/* The handler for an op name, or NULL. */
op_handler_fn ops_lookup(const char *name);

/* op_status.c */
int op_hello(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
             struct pf_error **err);
int op_ping(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
            struct pf_error **err);
int op_stats(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
             struct pf_error **err);
/* op_cancel.c */
int op_cancel(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
              struct pf_error **err);
/* op_exec.c */
int op_exec(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
            struct pf_error **err);
/* A request refused because a queue is full (*err, PF_E_BUSY) is answered in *ret_reply, with
 * when to come back (PROTOCOL.md, "busy"): 0, *err consumed. Any other error: -1, left to the
 * caller. Shared by exec and the session ops. */
int ops_busy_reply(const struct msg_request *req, uint32_t retry_after_ms, cJSON **ret_reply,
                   struct pf_error **err);
/* What a request (exec or session.open: its limits, imports) gets under profile p (NULL: no
 * policy): limits and hardening levels in *spec, and in *ret_fields the executor's fields of
 * the worker's first frame: {"imports": [..], "builtins_add"?: [..], "builtins_remove"?: [..]}. */
struct daemon;
struct job_spec;
int ops_resolve_job(struct daemon *d, const struct policy_profile *p, const cJSON *req,
                    struct job_spec *spec, cJSON **ret_fields, struct pf_error **err);
/* op_session.c */
int op_session_open(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
                    struct pf_error **err);
int op_session_close(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
                     struct pf_error **err);
int op_session_list(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
                    struct pf_error **err);
int op_session_get(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
                   struct pf_error **err);
/* exec with a `session`: op_exec hands it over. */
int op_session_exec(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
                    struct pf_error **err);

#endif
