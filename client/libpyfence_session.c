/* libpyfence: the session calls of pyfence.h, built on pyfence_request (session.open on
 * libpyfence_request_signal, to be interruptible). */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_write.h"
#include "libpyfence_internal.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "pyfence.h"

static int
set_error(struct pyfence_error *err, int code, const char *message)
{
    if (err) {
        err->code = code;
        snprintf(err->name, sizeof(err->name), "%s", pyfence_code_name(code));
        snprintf(err->message, sizeof(err->message), "%s", message);
    }
    return -code;
}

/* Sends req (a cJSON object, NULL when building it ran out of memory), written exactly,
 * through pyfence_request; *ret_reply_text receives the reply's text. */
static int
request_text(struct pyfence_conn *conn, const cJSON *req, char **ret_reply_text,
             struct pyfence_error *err)
{
    _cleanup_free_ char *text = NULL;
    size_t len;
    _cleanup_pf_error_ struct pf_error *pe = NULL;
    if (!req || json_write(req, 0, SIZE_MAX / 2, &text, &len, &pe) < 0)
        return set_error(err, PYFENCE_E_BAD_REQUEST,
                         pe && pe->msg ? pe->msg : "out of memory building the request");
    return pyfence_request(conn, text, ret_reply_text, err);
}

/* request_text, with the reply parsed into *ret_reply (may be NULL: not wanted). */
static int
request_obj(struct pyfence_conn *conn, const cJSON *req, cJSON **ret_reply,
            struct pyfence_error *err)
{
    _cleanup_free_ char *reply_text = NULL;
    int r = request_text(conn, req, &reply_text, err);
    if (r < 0)
        return r;
    if (!ret_reply)
        return 0;
    *ret_reply = cJSON_Parse(reply_text);
    return *ret_reply ? 0 : set_error(err, PYFENCE_E_INTERNAL, "out of memory reading a reply");
}

static bool
add_strings(cJSON *obj, const char *name, const char *const *items, size_t n)
{
    cJSON *arr = cJSON_AddArrayToObject(obj, name);
    for (size_t i = 0; arr && i < n; i++)
        if (!items[i] || !cJSON_AddItemToArray(arr, cJSON_CreateString(items[i])))
            return false;
    return arr != NULL;
}

/* Adds caller-supplied JSON object text under name; messages name the option, name_json. */
static int
add_json_object(cJSON *obj, const char *name, const char *text, cJSON **ret_item,
                struct pyfence_error *err)
{
    cJSON *item = cJSON_Parse(text);
    if (!cJSON_IsObject(item)) {
        cJSON_Delete(item);
        char msg[128];
        snprintf(msg, sizeof(msg), "session option %s_json: not a JSON object", name);
        return set_error(err, PYFENCE_E_BAD_REQUEST, msg);
    }
    cJSON_AddItemToObject(obj, name, item);
    if (ret_item)
        *ret_item = item;
    return 0;
}

static int
build_open(const struct pyfence_session_options *o, cJSON *req, struct pyfence_error *err)
{
    if ((o->profile && !cJSON_AddStringToObject(req, "profile", o->profile)) ||
        (o->n_imports && !add_strings(req, "imports", o->imports, o->n_imports)) ||
        (o->detach && !cJSON_AddTrueToObject(req, "detach")))
        return set_error(err, PYFENCE_E_INTERNAL, "out of memory");
    cJSON *limits = NULL;
    int r;
    if (o->limits_json && (r = add_json_object(req, "limits", o->limits_json, &limits, err)) < 0)
        return r;
    if (o->timeout_ms) {
        if (!limits)
            limits = cJSON_AddObjectToObject(req, "limits");
        cJSON_DeleteItemFromObjectCaseSensitive(limits, "timeout_ms");
        if (!limits || !cJSON_AddNumberToObject(limits, "timeout_ms", o->timeout_ms))
            return set_error(err, PYFENCE_E_INTERNAL, "out of memory");
    }
    if (o->variables_json &&
        (r = add_json_object(req, "variables", o->variables_json, NULL, err)) < 0)
        return r;
    return 0;
}

/* The session id of a session.open reply; NULL when it has none (or reply is NULL). */
static const char *
reply_session_id(const cJSON *reply)
{
    const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(reply, "session"));
    return id && strlen(id) == PYFENCE_SESSION_ID_LEN ? id : NULL;
}

/* After an interrupted open: closes the session it opened all the same (id; NULL: none).
 * PYFENCE_E_INTERRUPTED when nothing is left open. */
static int
close_opened(struct pyfence_conn *conn, const char *id, struct pyfence_error *err)
{
    int r = id ? pyfence_session_close(conn, id, err) : 0;
    return r < 0 ? r
                 : set_error(err, PYFENCE_E_INTERRUPTED,
                             "session.open interrupted by a signal: no session was opened");
}

/* After an interrupted open: cancels request open_id and waits for its answer; closes the
 * session if it opened all the same. PYFENCE_E_INTERRUPTED when nothing is left open. */
static int
take_back_open(struct pyfence_conn *conn, uint64_t open_id, struct pyfence_error *err)
{
    /* Not cancelled means its reply is on its way (or here): wait for it all the same. */
    int r = pyfence_cancel(conn, open_id, NULL, err);
    struct pyfence_result res;
    pyfence_result_init(&res);
    if (r == 0)
        r = pyfence_wait(conn, open_id, NULL, NULL, &res, err);
    bool opened = r == 0 && res.ok;
    _cleanup_json_ cJSON *reply = opened ? cJSON_Parse(res.reply_json) : NULL;
    pyfence_result_finish(&res);
    if (r < 0)
        return r;
    if (opened && !reply_session_id(reply))
        return set_error(err, PYFENCE_E_INTERNAL,
                         "session.open interrupted, but the session it opened cannot be "
                         "closed: no session id could be read from its reply");
    return close_opened(conn, reply_session_id(reply), err);
}

int
pyfence_session_open_signal(struct pyfence_conn *conn, const struct pyfence_session_options *opts,
                            int signo, char ret_id[PYFENCE_SESSION_ID_LEN + 1],
                            struct pyfence_error *err)
{
    if (!libpyfence_signo_valid(signo)) {
        char msg[64];
        snprintf(msg, sizeof(msg), "session.open: %d is not a signal number", signo);
        return set_error(err, PYFENCE_E_BAD_REQUEST, msg);
    }
    struct pyfence_session_options o;
    pyfence_session_options_init(&o);
    int r = libpyfence_struct_in(&o, sizeof(o), opts, "pyfence_session_options", err);
    if (r < 0)
        return r;
    _cleanup_json_ cJSON *req = cJSON_CreateObject();
    if (!req || !cJSON_AddStringToObject(req, "op", "session.open"))
        return set_error(err, PYFENCE_E_INTERNAL, "out of memory");
    r = build_open(&o, req, err);
    if (r < 0)
        return r;
    _cleanup_json_ cJSON *reply = NULL;
    uint64_t open_id = 0;
    r = libpyfence_request_signal(conn, req, signo, &open_id, &reply, err);
    if (r == -PYFENCE_E_INTERRUPTED)
        return take_back_open(conn, open_id, err);
    if (r < 0)
        return r;
    const char *id = reply_session_id(reply);
    if (!id)
        return set_error(err, PYFENCE_E_PROTOCOL, "session.open: the reply has no session id");
    /* One that came as the reply was read counts too: the caller would otherwise get an id
     * and then, with the signal handled, likely drop it, leaving a detached session behind. */
    if (libpyfence_take_pending(signo))
        return close_opened(conn, id, err);
    memcpy(ret_id, id, PYFENCE_SESSION_ID_LEN + 1);
    return 0;
}

int
pyfence_session_open(struct pyfence_conn *conn, const struct pyfence_session_options *opts,
                     char ret_id[PYFENCE_SESSION_ID_LEN + 1], struct pyfence_error *err)
{
    return pyfence_session_open_signal(conn, opts, 0, ret_id, err);
}

/* {"op": op, "session": id} */
static cJSON *
session_request(const char *op, const char *session_id)
{
    cJSON *req = cJSON_CreateObject();
    if (req && cJSON_AddStringToObject(req, "op", op) &&
        cJSON_AddStringToObject(req, "session", session_id ? session_id : ""))
        return req;
    cJSON_Delete(req);
    return NULL;
}

int
pyfence_session_close(struct pyfence_conn *conn, const char *session_id, struct pyfence_error *err)
{
    _cleanup_json_ cJSON *req = session_request("session.close", session_id);
    return request_obj(conn, req, NULL, err);
}

int
pyfence_session_get(struct pyfence_conn *conn, const char *session_id, const char *const *names,
                    size_t n_names, char **ret_json, struct pyfence_error *err)
{
    _cleanup_json_ cJSON *req = session_request("session.get", session_id);
    if (req && !add_strings(req, "names", names, n_names))
        return set_error(err, PYFENCE_E_BAD_REQUEST, "session.get: a name is NULL");
    return request_text(conn, req, ret_json, err);
}

int
pyfence_session_list(struct pyfence_conn *conn, char **ret_json, struct pyfence_error *err)
{
    return pyfence_request(conn, "{\"op\":\"session.list\"}", ret_json, err);
}
