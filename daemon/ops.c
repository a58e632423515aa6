#include "ops.h"

#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "load.h"
#include "pf_cleanup.h"

struct op_entry {
    const char *name;
    op_handler_fn handler;
};

/* Sorted by name: looked up with bsearch. */
static const struct op_entry op_table[] = {
        {"cancel", op_cancel},
        {"exec", op_exec},
        {"hello", op_hello},
        {"ping", op_ping},
        {"session.close", op_session_close},
        {"session.get", op_session_get},
        {"session.list", op_session_list},
        {"session.open", op_session_open},
        {"stats", op_stats},
};

static int
entry_cmp(const void *key, const void *elem)
{
    return strcmp(key, ((const struct op_entry *) elem)->name);
}

op_handler_fn
ops_lookup(const char *name)
{
    if (!name)
        return NULL;
    const struct op_entry *e =
            bsearch(name, op_table, PF_ELEMENTSOF(op_table), sizeof(op_table[0]), entry_cmp);
    return e ? e->handler : NULL;
}

int
ops_dispatch(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
             struct pf_error **err)
{
    const char *name = msg_op_name(req->op);
    op_handler_fn handler = ops_lookup(name);
    if (!handler)
        return pf_error_set(err, PF_E_UNKNOWN_OP,
                            "operation '%s' is not served by this version of pyfenced",
                            name ? name : "?");
    *ret_reply = NULL;
    return handler(c, req, ret_reply, err);
}

int
ops_peer_profile(struct conn *c, const struct policy_profile **ret, struct pf_error **err)
{
    *ret = NULL;
    if (!c->d->policy)
        return 0;
    struct policy_peer peer = conn_peer(c);
    const struct policy_profile *p = policy_default_for(c->d->policy, &peer, err);
    if (!p)
        return -1;
    *ret = p;
    return 0;
}

int
ops_request_profile(struct conn *c, const cJSON *req, const struct policy_profile **ret,
                    struct pf_error **err)
{
    const char *name = msg_get_string(req, "profile", NULL);
    if (!name || !c->d->policy)
        return ops_peer_profile(c, ret, err);
    struct policy_peer peer = conn_peer(c);
    const struct policy_profile *p = policy_resolve(c->d->policy, name, &peer, err);
    if (!p)
        return -1;
    *ret = p;
    return 0;
}
