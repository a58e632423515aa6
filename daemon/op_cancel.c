/* cancel: ends a request of the same connection, named by its id (an ephemeral exec, queued or
 * running; an exec in a session, running or waiting its turn; a session.get waiting its turn; a
 * session.open not answered yet). A connection owns its requests: no other peer can name
 * them. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "job.h"
#include "ops.h"
#include "pf_cleanup.h"
#include "session.h"

/* Ids are compared exactly (cJSON_Compare treats close large numbers as equal). */
static bool
same_id(const cJSON *a, const cJSON *b)
{
    if (!a || !b)
        return false;
    if (cJSON_IsString(a) && cJSON_IsString(b))
        return strcmp(a->valuestring, b->valuestring) == 0;
    return cJSON_IsNumber(a) && cJSON_IsNumber(b) && a->valuedouble == b->valuedouble;
}

/* A request to a session, sent on this connection. One running (an exec) is asked to stop:
 * its worker stops the snippet, and the session keeps its state and serves on; a snippet that
 * does not stop (inside a long call) has its worker killed 500 ms later, which loses the
 * session (session_cancel_running). One waiting its turn is taken out and answered
 * `cancelled` at once, and so is a session.open not answered yet (the session never starts,
 * or its worker is killed). */
static bool
cancel_session_request(struct conn *c, const cJSON *target)
{
    struct dlist *head = &c->d->sessions.all, *pos;
    for (pos = head->next; pos != head; pos = pos->next) {
        struct session *s = pf_container_of(pos, struct session, link);
        if (s->req.conn == c && same_id(s->req.id, target)) {
            if (s->req.kind == SESSION_REQ_OPEN) {
                session_cancel_open(s);
                return true;
            }
            return session_cancel_running(s);
        }
        struct dlist *rpos;
        for (rpos = s->pending.next; rpos != &s->pending; rpos = rpos->next) {
            struct session_req *r = pf_container_of(rpos, struct session_req, link);
            if (r->conn == c && same_id(r->id, target)) {
                session_cancel_pending(s, r);
                return true;
            }
        }
    }
    return false;
}

int
op_cancel(struct conn *c, const struct msg_request *req, cJSON **ret_reply, struct pf_error **err)
{
    const cJSON *target = cJSON_GetObjectItemCaseSensitive(req->root, "target");
    bool cancelled = false;
    struct dlist *pos, *tmp;
    DLIST_FOREACH_SAFE(pos, tmp, &c->jobs) {
        struct job *j = pf_container_of(pos, struct job, conn_link);
        if (same_id(j->req_id, target)) {
            /* The target's own reply (cancelled) comes first when it was still queued. */
            cancelled = job_cancel(j);
            break;
        }
    }
    if (!cancelled)
        cancelled = cancel_session_request(c, target);
    cJSON *reply = msg_reply_ok(req->id);
    if (!reply || !cJSON_AddBoolToObject(reply, "cancelled", cancelled)) {
        cJSON_Delete(reply);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    *ret_reply = reply;
    return 0;
}
