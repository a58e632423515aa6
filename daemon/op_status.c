/* hello, ping, stats: answered at once from the daemon's context. */
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

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

/* ---- what a peer that is not the daemon's administrator sees --------------------------- */

/* Root, or the uid pyfenced runs as (its owner when it is not root), sees everything. */
static bool
peer_is_admin(const struct conn *c)
{
    return c->uid == 0 || c->uid == getuid();
}

/* A profile the peer may not use is answered not_found like a missing one: its name must not
 * show up in stats either. */
static bool
peer_may_use(const struct daemon *d, const struct policy_peer *peer, const char *name)
{
    const struct policy_profile *p = d->policy ? policy_find(d->policy, name) : NULL;
    return p && policy_profile_allows(p, peer);
}

static void
keep_usable_profiles(const struct daemon *d, const struct policy_peer *peer, cJSON *reply)
{
    cJSON *pol = cJSON_GetObjectItemCaseSensitive(reply, "policy");
    cJSON *names = cJSON_GetObjectItemCaseSensitive(pol, "profiles");
    for (cJSON *n = names ? names->child : NULL, *next; n; n = next) {
        next = n->next;
        if (!cJSON_IsString(n) || !peer_may_use(d, peer, n->valuestring))
            cJSON_Delete(cJSON_DetachItemViaPointer(names, n));
    }
    cJSON *pools = cJSON_GetObjectItemCaseSensitive(reply, "pools");
    for (cJSON *p = pools ? pools->child : NULL, *next; p; p = next) {
        next = p->next;
        if (!peer_may_use(d, peer, p->string))
            cJSON_Delete(cJSON_DetachItemViaPointer(pools, p));
    }
    /* It names files and values of profiles the peer may not see. */
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(pol, "reload_error")))
        return;
    cJSON *told = cJSON_CreateString("the last reload failed: pyfenced's log says why");
    if (!told || !cJSON_ReplaceItemInObjectCaseSensitive(pol, "reload_error", told)) {
        cJSON_Delete(told);
        cJSON_DeleteItemFromObjectCaseSensitive(pol, "reload_error");
    }
}

static void
keep_own_uid(uid_t uid, cJSON *reply)
{
    cJSON *uids = cJSON_GetObjectItemCaseSensitive(reply, "uids");
    for (cJSON *u = uids ? uids->child : NULL, *next; u; u = next) {
        next = u->next;
        if (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(u, "uid")) != (double) uid)
            cJSON_Delete(cJSON_DetachItemViaPointer(uids, u));
    }
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
    /* Counts of the whole daemon are everyone's; which profiles exist and what other uids do
     * are not. */
    if (!peer_is_admin(c)) {
        struct policy_peer peer = conn_peer(c);
        keep_usable_profiles(d, &peer, reply);
        keep_own_uid(c->uid, reply);
    }
    *ret_reply = reply;
    return 0;
}
