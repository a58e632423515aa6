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

/* Adds caller-supplied JSON object text under name, parsed as strictly as the exec options
 * are (libpyfence_parse_object); messages name the option, name_json. */
static int
add_json_object(cJSON *obj, const char *name, const char *text, cJSON **ret_item,
                struct pyfence_error *err)
{
    char what[64];
    snprintf(what, sizeof(what), "session option %s_json", name);
    cJSON *item = NULL;
    int r = libpyfence_parse_object(text, what, &item, err);
    if (r < 0)
        return r;
    cJSON_AddItemToObject(obj, name, item);
    if (ret_item)
        *ret_item = item;
    return 0;
}

static int
build_open(const struct pyfence_session_options *o, cJSON *req, struct pyfence_error *err)
{
    int r;
    if ((r = libpyfence_check_texts(o->imports, o->n_imports, "session option imports", err)) < 0 ||
        (o->profile && (r = libpyfence_check_text(o->profile, "session option profile", err)) < 0))
        return r;
    if ((o->profile && !cJSON_AddStringToObject(req, "profile", o->profile)) ||
        (o->n_imports && !add_strings(req, "imports", o->imports, o->n_imports)) ||
        (o->detach && !cJSON_AddTrueToObject(req, "detach")))
        return set_error(err, PYFENCE_E_INTERNAL, "out of memory");
    cJSON *limits = NULL;
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

/* Builds {"op": op, "session": id} into *ret_req; a NULL, empty or non-UTF-8 id is refused
 * here: pyfenced would answer "" with a schema error, and bad UTF-8 with a frame refusal. */
static int
session_request(const char *op, const char *session_id, cJSON **ret_req, struct pyfence_error *err)
{
    char what[48];
    snprintf(what, sizeof(what), "%s: session id", op);
    if (session_id && !*session_id)
        return libpyfence_fail_named(err, PYFENCE_E_BAD_REQUEST, NULL, "%s: empty", what);
    int r = libpyfence_check_text(session_id, what, err);
    if (r < 0)
        return r;
    cJSON *req = cJSON_CreateObject();
    if (!req || !cJSON_AddStringToObject(req, "op", op) ||
        !cJSON_AddStringToObject(req, "session", session_id)) {
        cJSON_Delete(req);
        return set_error(err, PYFENCE_E_INTERNAL, "out of memory");
    }
    *ret_req = req;
    return 0;
}

int
pyfence_session_close(struct pyfence_conn *conn, const char *session_id, struct pyfence_error *err)
{
    _cleanup_json_ cJSON *req = NULL;
    int r = session_request("session.close", session_id, &req, err);
    return r < 0 ? r : request_obj(conn, req, NULL, err);
}

int
pyfence_session_get(struct pyfence_conn *conn, const char *session_id, const char *const *names,
                    size_t n_names, char **ret_json, struct pyfence_error *err)
{
    _cleanup_json_ cJSON *req = NULL;
    int r = session_request("session.get", session_id, &req, err);
    if (r < 0 || (r = libpyfence_check_texts(names, n_names, "session.get: name", err)) < 0)
        return r;
    if (!add_strings(req, "names", names, n_names))
        return set_error(err, PYFENCE_E_INTERNAL, "out of memory");
    return request_text(conn, req, ret_json, err);
}

int
pyfence_session_list(struct pyfence_conn *conn, char **ret_json, struct pyfence_error *err)
{
    return pyfence_request(conn, "{\"op\":\"session.list\"}", ret_json, err);
}
