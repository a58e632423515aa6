/* session.open, session.close, session.list, session.get, and exec with a `session`: the
 * peer's uid owns what it opens (session.c); the worker answers later (session_worker.c). */
#include <stdio.h>
#include <string.h>

#include "conn.h"
#include "daemon.h"
#include "job.h"
#include "ops.h"
#include "pf_cleanup.h"
#include "profile.h"
#include "session.h"

static int
oom(cJSON *reply, struct pf_error **err)
{
    cJSON_Delete(reply);
    return pf_error_set(err, PF_E_INTERNAL, "out of memory");
}

int
op_session_open(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
                struct pf_error **err)
{
    struct daemon *d = c->d;
    const struct policy_profile *profile = NULL;
    if (ops_request_profile(c, req->root, &profile, err) < 0)
        return -1;
    struct job_spec spec = {.arrival_ns = uv_hrtime()};
    cJSON *fields = NULL;
    if (ops_resolve_job(d, profile, req->root, &spec, &fields, err) < 0)
        return -1;
    const char *name = profile ? profile->name : msg_get_string(req->root, "profile", "default");
    struct policy_peer peer = conn_peer(c);
    struct session *s = session_new(&d->sessions, &peer, name, &spec.limits, err);
    if (!s) {
        cJSON_Delete(fields);
        return -1;
    }
    s->egress_version = profile ? profile->egress.version : 0;
    s->detached = msg_get_bool(req->root, "detach", false);
    s->owner = s->detached ? NULL : c;
    /* A session holds its worker from open to close: it counts against max_workers. Without a
     * free one, the open waits in the scheduler's queue like an exec (an idle pool worker
     * makes way for it). */
    uint32_t retry_after_ms = 0;
    int r = session_start(s, c, req->id, spec.levels, fields,
                          cJSON_GetObjectItemCaseSensitive(req->root, "variables"), &retry_after_ms,
                          err);
    cJSON_Delete(fields);
    if (r < 0) {
        session_end(s, SESSION_END_FAILED);
        return ops_busy_reply(req, retry_after_ms, ret_reply, err);
    }
    *ret_reply = NULL; /* answered when the worker is ready */
    return 0;
}

/* The session named by the request, if the peer owns it. A lost one answers session_lost with
 * its cause, once, and is gone. */
static struct session *
find_live(struct conn *c, const cJSON *req, struct pf_error **err)
{
    const char *id = msg_get_string(req, "session", "");
    struct session *s = session_find(&c->d->sessions, id, c->uid, err);
    if (!s || s->state != SESSION_LOST)
        return s;
    pf_error_set(err, PF_E_SESSION_LOST, "session '%s' was lost: %s", s->id,
                 s->lost_cause ? s->lost_cause : "its worker died");
    session_end(s, SESSION_END_LOST);
    return NULL;
}

int
op_session_exec(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
                struct pf_error **err)
{
    /* The worker's profile, policy and limits were fixed when it started: only session.open
     * sets them. */
    static const char *const fixed[] = {"imports", "limits", "profile"};
    for (size_t i = 0; i < PF_ELEMENTSOF(fixed); i++)
        if (cJSON_GetObjectItemCaseSensitive(req->root, fixed[i]))
            return pf_error_set(err, PF_E_BAD_REQUEST,
                                "exec request: field '%s' cannot be used with a session (it is "
                                "set by session.open)",
                                fixed[i]);
    struct session *s = find_live(c, req->root, err);
    if (!s)
        return -1;
    uint32_t retry_after_ms = 0;
    if (session_exec(s, c, req->id, msg_get_string(req->root, "code", ""),
                     cJSON_GetObjectItemCaseSensitive(req->root, "variables"),
                     msg_get_bool(req->root, "stream", true), &retry_after_ms, err) < 0)
        return ops_busy_reply(req, retry_after_ms, ret_reply, err);
    *ret_reply = NULL;
    return 0;
}

int
op_session_get(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
               struct pf_error **err)
{
    struct session *s = find_live(c, req->root, err);
    if (!s)
        return -1;
    uint32_t retry_after_ms = 0;
    if (session_get(s, c, req->id, cJSON_GetObjectItemCaseSensitive(req->root, "names"),
                    &retry_after_ms, err) < 0)
        return ops_busy_reply(req, retry_after_ms, ret_reply, err);
    *ret_reply = NULL;
    return 0;
}

int
op_session_close(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
                 struct pf_error **err)
{
    struct session *s =
            session_find(&c->d->sessions, msg_get_string(req->root, "session", ""), c->uid, err);
    if (!s)
        return -1;
    cJSON *reply = msg_reply_ok(req->id);
    if (!reply || !cJSON_AddStringToObject(reply, "session", s->id))
        return oom(reply, err);
    session_end(s, SESSION_END_CLOSE);
    *ret_reply = reply;
    return 0;
}

int
op_session_list(struct conn *c, const struct msg_request *req, cJSON **ret_reply,
                struct pf_error **err)
{
    cJSON *reply = msg_reply_ok(req->id);
    cJSON *list = session_list_json(&c->d->sessions, c->uid);
    if (!reply || !list || !cJSON_AddItemToObject(reply, "sessions", list)) {
        cJSON_Delete(list);
        return oom(reply, err);
    }
    *ret_reply = reply;
    return 0;
}
