/* hello, ping, stats: answered at once from the daemon's context. */
#include <stdbool.h>

#include "config.h"
#include "conn.h"
#include "daemon.h"
#include "load.h"
#include "ops.h"
#include "profile.h"
#include "stats.h"
#include "zygote.h"

static int
oom(cJSON *reply, struct pf_error **err)
{
    cJSON_Delete(reply);
    return pf_error_set(err, PF_E_INTERNAL, "out of memory");
}

int
op_hello(struct conn *c, const struct msg_request *req, cJSON **ret_reply, struct pf_error **err)
{
    struct daemon *d = c->d;
    cJSON *reply = msg_reply_ok(req->id);
    if (!reply)
        return oom(reply, err);
    const char *python = d->zygote ? zygote_python_version(d->zygote) : NULL;
    bool ok = cJSON_AddStringToObject(reply, "server", "pyfenced") &&
              cJSON_AddStringToObject(reply, "version", PYFENCE_VERSION) &&
              cJSON_AddNumberToObject(reply, "protocol", MSG_PROTOCOL_VERSION) &&
              (python ? cJSON_AddStringToObject(reply, "python", python) != NULL
                      : cJSON_AddNullToObject(reply, "python") != NULL);
    cJSON *limits = policy_limits_to_json(&d->limits, POLICY_SCOPE_DAEMON);
    if (!limits || !cJSON_AddItemToObject(reply, "limits", limits)) {
        cJSON_Delete(limits);
        ok = false;
    }
    /* The peer's own profile: its job limits are the ones its requests start from. */
    const struct policy_profile *profile = NULL;
    struct pf_error *perr = NULL;
    if (ops_peer_profile(c, &profile, &perr) < 0)
        perr = pf_error_free(perr); /* hello still answers; exec will say why */
    ok = ok && (profile ? cJSON_AddStringToObject(reply, "profile", profile->name) != NULL
                        : cJSON_AddNullToObject(reply, "profile") != NULL);
    cJSON *job_limits =
            policy_limits_to_json(profile ? &profile->limits : &d->limits, POLICY_SCOPE_JOB);
    if (!job_limits || !cJSON_AddItemToObject(reply, "job_limits", job_limits)) {
        cJSON_Delete(job_limits);
        ok = false;
    }
    if (!ok)
        return oom(reply, err);
    *ret_reply = reply;
    return 0;
}

int
op_ping(struct conn *c, const struct msg_request *req, cJSON **ret_reply, struct pf_error **err)
{
    cJSON *reply = msg_reply_ok(req->id);
    if (!reply)
        return oom(reply, err);
    *ret_reply = reply;
    return 0;
}

static cJSON *
jobs_json(const struct daemon *d)
{
    cJSON *jobs = cJSON_CreateObject();
    cJSON *by = cJSON_CreateObject();
    if (!jobs || !by || !cJSON_AddItemToObject(jobs, "by_outcome", by)) {
        cJSON_Delete(by);
        cJSON_Delete(jobs);
        return NULL;
    }
    bool ok = cJSON_AddNumberToObject(jobs, "running", d->jobs_running) &&
              cJSON_AddNumberToObject(jobs, "total", (double) d->jobs_total);
    for (int code = 0; code < _PF_E_MAX && ok; code++) {
        if (d->jobs_by_outcome[code] == 0)
            continue;
        const char *name = code == 0 ? "ok" : pf_code_name(code);
        ok = cJSON_AddNumberToObject(by, name, (double) d->jobs_by_outcome[code]) != NULL;
    }
    if (!ok) {
        cJSON_Delete(jobs);
        return NULL;
    }
    return jobs;
}

/* {"source", "profiles": [names], "reload_error": TEXT | null} */
static bool
policy_json(const struct daemon *d, cJSON *pol)
{
    if (!d->policy)
        return cJSON_AddNullToObject(pol, "source") != NULL;
    cJSON *names = cJSON_AddArrayToObject(pol, "profiles");
    for (size_t i = 0; names && i < d->policy->n; i++)
        cJSON_AddItemToArray(names, cJSON_CreateString(d->policy->profiles[i]->name));
    return names && cJSON_AddStringToObject(pol, "source", d->policy->source) &&
           (d->policy_error ? cJSON_AddStringToObject(pol, "reload_error", d->policy_error)
                            : cJSON_AddNullToObject(pol, "reload_error")) != NULL;
}

int
op_stats(struct conn *c, const struct msg_request *req, cJSON **ret_reply, struct pf_error **err)
{
    struct daemon *d = c->d;
    cJSON *reply = msg_reply_ok(req->id);
    if (!reply)
        return oom(reply, err);
    bool ok = cJSON_AddStringToObject(reply, "version", PYFENCE_VERSION) &&
              cJSON_AddNumberToObject(reply, "uptime_ms",
                                      (double) (uint64_t) daemon_elapsed_ms(d->start_ns)) &&
              cJSON_AddNumberToObject(reply, "connections", d->n_conns);
    cJSON *jobs = jobs_json(d);
    if (!jobs || !cJSON_AddItemToObject(reply, "jobs", jobs)) {
        cJSON_Delete(jobs);
        ok = false;
    }
    cJSON *pol = cJSON_AddObjectToObject(reply, "policy");
    ok = ok && pol && policy_json(d, pol);
    cJSON *zyg = cJSON_AddObjectToObject(reply, "zygote");
    ok = ok && zyg && cJSON_AddNumberToObject(zyg, "pid", d->zygote ? zygote_pid(d->zygote) : 0) &&
         cJSON_AddNumberToObject(zyg, "restarts", d->zygote ? zygote_restarts(d->zygote) : 0);
    if (ok && d->zygote_preload)
        ok = cJSON_AddNumberToObject(zyg, "preload_pid", zygote_pid(d->zygote_preload)) &&
             cJSON_AddNumberToObject(zyg, "preload_restarts", zygote_restarts(d->zygote_preload));
    ok = ok && stats_add_scheduling(d, reply) == 0;
    if (!ok)
        return oom(reply, err);
    *ret_reply = reply;
    return 0;
}
