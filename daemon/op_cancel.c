/* cancel: ends a request of the same connection, named by its id. A connection owns its
 * requests: no other peer can name them. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "job.h"
#include "ops.h"
#include "pf_cleanup.h"

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
    cJSON *reply = msg_reply_ok(req->id);
    if (!reply || !cJSON_AddBoolToObject(reply, "cancelled", cancelled)) {
        cJSON_Delete(reply);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    *ret_reply = reply;
    return 0;
}
