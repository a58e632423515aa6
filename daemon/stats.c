#include "stats.h"

#include <stdbool.h>

#include "daemon.h"
#include "load.h"
#include "session.h"

static bool
add(cJSON *to, const char *name, cJSON *item)
{
    if (item && cJSON_AddItemToObject(to, name, item))
        return true;
    cJSON_Delete(item);
    return false;
}

static cJSON *
workers_json(const struct daemon *d)
{
    unsigned idle = pools_idle(&d->pools);
    unsigned live = d->jobs_running;
    cJSON *o = cJSON_CreateObject();
    if (o && cJSON_AddNumberToObject(o, "live", live) && cJSON_AddNumberToObject(o, "idle", idle) &&
        cJSON_AddNumberToObject(o, "busy", live > idle ? live - idle : 0) &&
        cJSON_AddNumberToObject(o, "max", (double) d->limits.v[POLICY_LIMIT_MAX_WORKERS]) &&
        cJSON_AddNumberToObject(o, "session_max", sched_session_capacity(d->sched.max_workers)) &&
        cJSON_AddNumberToObject(o, "session_max_per_uid", d->sched.max_session_workers_uid))
        return o;
    cJSON_Delete(o);
    return NULL;
}

/* The queue, then its per-uid part and its peer count moved up beside it. */
static bool
queue_json(struct daemon *d, cJSON *reply)
{
    cJSON *q = sched_stats_json(&d->sched);
    cJSON *uids = q ? cJSON_DetachItemFromObjectCaseSensitive(q, "uids") : NULL;
    cJSON *peers = q ? cJSON_DetachItemFromObjectCaseSensitive(q, "peers") : NULL;
    return add(reply, "queue", q) && add(reply, "uids", uids) && add(reply, "peers", peers);
}

/* {"at": Unix ms, "ok": bool} of the last reload attempt (start-up included). */
static cJSON *
reload_json(const struct daemon *d)
{
    cJSON *o = cJSON_CreateObject();
    if (o && cJSON_AddNumberToObject(o, "at", (double) d->policy_reload_at_ms) &&
        cJSON_AddBoolToObject(o, "ok", d->policy_reload_ok))
        return o;
    cJSON_Delete(o);
    return NULL;
}

int
stats_add_scheduling(struct daemon *d, cJSON *reply)
{
    cJSON *policy = cJSON_GetObjectItemCaseSensitive(reply, "policy");
    bool ok = add(reply, "workers", workers_json(d)) && queue_json(d, reply) &&
              cJSON_AddNumberToObject(reply, "sessions", (double) d->sessions.n) &&
              add(reply, "pools", pools_stats_json(&d->pools)) &&
              add(reply, "latency", latency_json(&d->latency)) &&
              (!cJSON_IsObject(policy) || add(policy, "last_reload", reload_json(d)));
    return ok ? 0 : -1;
}
