/* exec: resolve the job's limits, check capacity, hand the snippet to a fresh worker (job.c).
 * The reply comes later, from the job. */
#include <stdio.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "job.h"
#include "ops.h"
#include "pf_cleanup.h"

/* The worker's `run` frame (CHANNEL.md): the request's snippet with the resolved limits. */
static char *
build_run_json(const cJSON *req, const struct policy_limits *limits)
{
    cJSON *run = cJSON_CreateObject();
    if (!run)
        return NULL;
    const cJSON *imports = cJSON_GetObjectItemCaseSensitive(req, "imports");
    const cJSON *variables = cJSON_GetObjectItemCaseSensitive(req, "variables");
    cJSON *lim = policy_limits_to_json(limits, POLICY_SCOPE_JOB);
    bool ok = lim && cJSON_AddItemToObject(run, "limits", lim);
    if (!ok)
        cJSON_Delete(lim);
    ok = ok && cJSON_AddStringToObject(run, "op", "run") &&
         cJSON_AddStringToObject(run, "code", msg_get_string(req, "code", "")) &&
         cJSON_AddItemToObject(run, "imports",
                               imports ? cJSON_Duplicate(imports, 1) : cJSON_CreateArray());
    if (ok && variables)
        ok = cJSON_AddItemToObject(run, "variables", cJSON_Duplicate(variables, 1));
    char *json = ok ? cJSON_PrintUnformatted(run) : NULL;
    cJSON_Delete(run);
    return json;
}

int
op_exec(struct conn *c, const struct msg_request *req, cJSON **ret_reply, struct pf_error **err)
{
    struct daemon *d = c->d;
    uint64_t arrival_ns = uv_hrtime();

    struct policy_limits limits = d->limits;
    if (policy_limits_tighten(&limits, cJSON_GetObjectItemCaseSensitive(req->root, "limits"),
                              "limits", err) < 0)
        return -1;
    int64_t max_workers = d->limits.v[POLICY_LIMIT_MAX_WORKERS];
    if ((int64_t) d->jobs_running >= max_workers)
        return pf_error_set(err, PF_E_BUSY,
                            "all %lld workers are busy (max_workers); try again later",
                            (long long) max_workers);

    _cleanup_free_ char *run = build_run_json(req->root, &limits);
    if (!run)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    bool stream = msg_get_bool(req->root, "stream", true);
    if (job_start(c, req->id, &limits, stream, run, strlen(run), arrival_ns, err) < 0)
        return -1;
    *ret_reply = NULL; /* the job replies */
    return 0;
}
