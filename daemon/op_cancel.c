/* cancel: ends a request of the same connection, named by its id (an ephemeral exec, queued or
 * running, or an exec in a session). A connection owns its requests: no other peer can name
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

/* An exec running in a session, sent on this connection: its worker is asked to stop, and the
 * session keeps its state and serves on. A snippet that does not stop (inside a long call) is
 * bounded by the session's own wall-clock backstop, which ends the session. */
static bool
cancel_session_exec(struct conn *c, const cJSON *target)
{
    struct dlist *head = &c->d->sessions.all, *pos;
    for (pos = head->next; pos != head; pos = pos->next) {
        struct session *s = pf_container_of(pos, struct session, link);
        if (s->state != SESSION_BUSY || s->req.kind != SESSION_REQ_EXEC || s->req.conn != c ||
            !same_id(s->req.id, target))
            continue;
        struct zygote *z = daemon_zygote(c->d, s->preload_zygote);
        if (z)
            zygote_cancel(z, s->job_id);
        return true;
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
        cancelled = cancel_session_exec(c, target);
    cJSON *reply = msg_reply_ok(req->id);
    if (!reply || !cJSON_AddBoolToObject(reply, "cancelled", cancelled)) {
        cJSON_Delete(reply);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    *ret_reply = reply;
    return 0;
}
