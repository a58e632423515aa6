/* exec: resolve the request's profile (the one it names, or the peer's) and the job's limits,
 * check capacity, hand the snippet to a fresh worker (job.c). The reply comes later, from the
 * job. */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "conn.h"
#include "daemon.h"
#include "job.h"
#include "json_write.h"
#include "ops.h"
#include "pf_cleanup.h"
#include "pf_quote.h"
#include "profile.h"

/* The policy's layers and levels, in harden.h's terms (same names, kept apart so that policy/
 * does not depend on the worker). */
static const enum harden_layer layer_map[_POLICY_LAYER_MAX] = {
        [POLICY_LAYER_CGROUP] = HARDEN_LAYER_CGROUP,
        [POLICY_LAYER_NAMESPACES] = HARDEN_LAYER_NAMESPACES,
        [POLICY_LAYER_RLIMITS] = HARDEN_LAYER_RLIMITS,
        [POLICY_LAYER_FDS] = HARDEN_LAYER_FDS,
        [POLICY_LAYER_IDENTITY] = HARDEN_LAYER_IDENTITY,
        [POLICY_LAYER_PRIVILEGES] = HARDEN_LAYER_PRIVILEGES,
        [POLICY_LAYER_LANDLOCK] = HARDEN_LAYER_LANDLOCK,
        [POLICY_LAYER_SECCOMP] = HARDEN_LAYER_SECCOMP,
};
static const enum harden_level level_map[_POLICY_LEVEL_MAX] = {
        [POLICY_LEVEL_OFF] = HARDEN_OFF,
        [POLICY_LEVEL_BEST_EFFORT] = HARDEN_BEST_EFFORT,
        [POLICY_LEVEL_REQUIRED] = HARDEN_REQUIRED,
};

static bool
list_has(const struct policy_strings *list, const char *name, size_t len)
{
    for (size_t i = 0; i < list->n; i++)
        if (strlen(list->items[i]) == len && strncmp(list->items[i], name, len) == 0)
            return true;
    return false;
}

/* "pkg" and "pkg.sub" are allowed by "pkg" or "pkg.*" of the profile (for a submodule, by the
 * "top.*" of any dotted prefix); "pkg.*" only by "pkg.*". */
static bool
profile_allows_import(const struct policy_profile *p, const char *name)
{
    const struct policy_strings *lists[] = {&p->imports, &p->extra_imports};
    for (size_t l = 0; l < PF_ELEMENTSOF(lists); l++) {
        if (list_has(lists[l], name, strlen(name)))
            return true;
        char wild[POLICY_MAX_NAME * 4];
        for (const char *dot = strchr(name, '.'); dot; dot = strchr(dot + 1, '.')) {
            int n = snprintf(wild, sizeof(wild), "%.*s.*", (int) (dot - name), name);
            if (n > 0 && (size_t) n < sizeof(wild) && strcmp(dot, ".*") != 0 &&
                list_has(lists[l], wild, (size_t) n))
                return true;
        }
    }
    return false;
}

static cJSON *
strings_array(const struct policy_strings *s)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < s->n; i++)
        if (!cJSON_AddItemToArray(a, cJSON_CreateString(s->items[i])))
            a = NULL; /* cJSON_AddItemToArray only fails for a NULL item: out of memory */
    return a;
}

/* The run frame's `imports` (the profile's own, then those the request adds) and the profile's
 * `builtins_add` and `builtins_remove` (when it has any): {"imports": [..], ...}. */
static int
resolve_exec_fields(const struct policy_profile *p, const cJSON *requested, cJSON **ret,
                    struct pf_error **err)
{
    cJSON *fields = cJSON_CreateObject();
    cJSON *out = cJSON_AddArrayToObject(fields, "imports");
    if (!out ||
        (p && p->builtins_add.n &&
         !cJSON_AddItemToObject(fields, "builtins_add", strings_array(&p->builtins_add))) ||
        (p && p->builtins_remove.n &&
         !cJSON_AddItemToObject(fields, "builtins_remove", strings_array(&p->builtins_remove)))) {
        cJSON_Delete(fields);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    for (size_t i = 0; p && i < p->imports.n; i++)
        cJSON_AddItemToArray(out, cJSON_CreateString(p->imports.items[i]));
    const cJSON *item;
    cJSON_ArrayForEach(item, requested) {
        if (p && !profile_allows_import(p, item->valuestring)) {
            cJSON_Delete(fields);
            return pf_error_set(err, PF_E_BAD_REQUEST,
                                "imports: '%.*s' is not allowed by profile '%s' (see its "
                                "extra_imports)",
                                pf_quote_len(item->valuestring), item->valuestring, p->name);
        }
        cJSON_AddItemToArray(out, cJSON_CreateString(item->valuestring));
    }
    *ret = fields;
    return 0;
}

/* Without root there is no other uid to become (the zygote's user namespace maps the daemon's
 * alone): required, identity would fail every job. The privileges layer holds inside that
 * namespace, but only if the kernel let the zygote make it: best-effort too. The mirror image:
 * the namespaces layer is then all that keeps a worker, which runs as the daemon's uid, off the
 * daemon's files, its socket and the other workers (host mount and pid namespaces, a shared
 * /tmp), so best-effort is not enough: required, unless the profile turned it off, which says
 * the operator accepts exactly that. daemon_start warned about both once. */
static void
unprivileged_levels(enum harden_level *levels)
{
    static const enum harden_layer need_root[] = {HARDEN_LAYER_IDENTITY, HARDEN_LAYER_PRIVILEGES};
    for (size_t i = 0; i < PF_ELEMENTSOF(need_root); i++)
        if (levels[need_root[i]] == HARDEN_REQUIRED)
            levels[need_root[i]] = HARDEN_BEST_EFFORT;
    if (levels[HARDEN_LAYER_NAMESPACES] == HARDEN_BEST_EFFORT)
        levels[HARDEN_LAYER_NAMESPACES] = HARDEN_REQUIRED;
}

/* Limits and hardening from the profile (or, without a policy, the table's defaults with the
 * layers that hold everywhere), then the request may tighten the limits. */
static int
resolve_spec(struct daemon *d, const struct policy_profile *p, const cJSON *req,
             struct job_spec *spec, struct pf_error **err)
{
    spec->limits = d->limits;
    for (int i = 0; i < _HARDEN_LAYER_MAX; i++)
        spec->levels[i] = HARDEN_OFF;
    if (p) {
        for (int i = 0; i < _POLICY_LIMIT_MAX; i++)
            if (policy_limit_def((enum policy_limit) i)->scope == POLICY_SCOPE_JOB)
                spec->limits.v[i] = p->limits.v[i];
        for (int i = 0; i < _POLICY_LAYER_MAX; i++)
            spec->levels[layer_map[i]] = level_map[p->hardening[i]];
    } else {
        spec->levels[HARDEN_LAYER_RLIMITS] = HARDEN_REQUIRED;
        spec->levels[HARDEN_LAYER_FDS] = HARDEN_REQUIRED;
    }
    if (!d->privileged)
        unprivileged_levels(spec->levels);
    if (policy_limits_tighten(&spec->limits, cJSON_GetObjectItemCaseSensitive(req, "limits"),
                              "limits", err) < 0)
        return -1;
    spec->stream = msg_get_bool(req, "stream", true);
    return 0;
}

/* The worker's `run` frame (CHANNEL.md): the request's snippet with the resolved limits and
 * exec fields (resolve_exec_fields; taken over). */
static char *
build_run_json(const cJSON *req, const struct policy_limits *limits, cJSON *fields)
{
    cJSON *run = fields;
    if (!run)
        return NULL;
    const cJSON *variables = cJSON_GetObjectItemCaseSensitive(req, "variables");
    bool ok = true;
    cJSON *lim = policy_limits_to_json(limits, POLICY_SCOPE_JOB);
    ok = ok && lim && cJSON_AddItemToObject(run, "limits", lim);
    if (!ok)
        cJSON_Delete(lim);
    ok = ok && cJSON_AddStringToObject(run, "op", "run") &&
         cJSON_AddNumberToObject(run, "run", JOB_RUN) &&
         cJSON_AddStringToObject(run, "code", msg_get_string(req, "code", ""));
    if (ok && variables)
        ok = cJSON_AddItemToObject(run, "variables", cJSON_Duplicate(variables, 1));
#if PYFENCE_RAW_MODE
    /* Test builds only: the worker runs native CPython (worker_raw.c). */
    if (ok && msg_get_bool(req, "raw", false))
        ok = cJSON_AddTrueToObject(run, "raw");
#endif
    /* json_write, not cJSON_Print*: those print 0.1+0.2 as 0.3 and 10**15+1 as 1e+15. */
    char *json = NULL;
    size_t len;
    struct pf_error *err = NULL;
    if (ok && json_write(run, 0, JOB_MAX_WORKER_FRAME, &json, &len, &err) < 0)
        pf_error_free(err);
    cJSON_Delete(run);
    return json;
}

int
ops_busy_reply(const struct msg_request *req, uint32_t retry_after_ms, cJSON **ret_reply,
               struct pf_error **err)
{
    if (!err || !*err || (*err)->code != PF_E_BUSY || !retry_after_ms)
        return -1;
    cJSON *reply = msg_reply_error(req->id, PF_E_BUSY, (*err)->msg);
    cJSON *e = cJSON_GetObjectItemCaseSensitive(reply, "error");
    if (!e || !cJSON_AddNumberToObject(e, "retry_after_ms", retry_after_ms)) {
        cJSON_Delete(reply);
        return -1;
    }
    *err = pf_error_free(*err);
    *ret_reply = reply;
    return 0;
}

int
op_exec(struct conn *c, const struct msg_request *req, cJSON **ret_reply, struct pf_error **err)
{
    struct daemon *d = c->d;
    struct job_spec spec = {.arrival_ns = uv_hrtime()};
    if (cJSON_GetObjectItemCaseSensitive(req->root, "session"))
        return op_session_exec(c, req, ret_reply, err); /* op_session.c */

    /* The profile the request names (one the peer may use), else the peer's default. Its
     * name in spec.profile picks the warm pool; its limits, imports and hardening apply. */
    const struct policy_profile *profile = NULL;
    if (ops_request_profile(c, req->root, &profile, err) < 0)
        return -1;
    if (resolve_spec(d, profile, req->root, &spec, err) < 0)
        return -1;
    spec.profile = profile ? profile->name : NULL;
    spec.egress_version = profile ? profile->egress.version : 0;
    cJSON *fields = NULL;
    if (resolve_exec_fields(profile, cJSON_GetObjectItemCaseSensitive(req->root, "imports"),
                            &fields, err) < 0)
        return -1;
    _cleanup_free_ char *run = build_run_json(req->root, &spec.limits, fields);
    if (!run)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    uint32_t retry_after_ms = 0;
    if (job_start(c, req->id, &spec, run, strlen(run), &retry_after_ms, err) < 0)
        return ops_busy_reply(req, retry_after_ms, ret_reply, err);
    *ret_reply = NULL; /* the job replies */
    return 0;
}

int
ops_resolve_job(struct daemon *d, const struct policy_profile *p, const cJSON *req,
                struct job_spec *spec, cJSON **ret_fields, struct pf_error **err)
{
    if (resolve_spec(d, p, req, spec, err) < 0)
        return -1;
    return resolve_exec_fields(p, cJSON_GetObjectItemCaseSensitive(req, "imports"), ret_fields,
                               err);
}
