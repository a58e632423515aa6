/* http_request(url, method="GET", headers=None, body=None): the snippet's network egress.
 *
 * Workers have no network. The request goes through the environment's egress hook (the
 * worker sends it to pyfenced, which checks it against the profile's egress rules and makes
 * it: daemon/egress.h) and the answer comes back as a dict {"status", "headers", "body"}.
 * A request the rules refuse is an InterpreterError like any policy refusal; a failed
 * transfer is a TimeoutError or a ConnectionError, which the snippet may handle. */
#include <string.h>

#include "exec_internal.h"
#include "pf_cleanup.h"
#include "value_internal.h"

static const char *const http_methods[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"};

static int
add_headers(cJSON *req, PyObject *headers)
{
    if (!headers || headers == Py_None)
        return 0;
    if (!PyDict_Check(headers)) {
        PyErr_SetString(PyExc_TypeError, "http_request: headers must be a dict of str to str");
        return -1;
    }
    cJSON *obj = cJSON_AddObjectToObject(req, "headers");
    if (!obj) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(headers, &pos, &k, &v)) {
        const char *ks = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        const char *vs = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
        if (!ks || !vs) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError,
                                "http_request: headers must be a dict of str to str");
            return -1;
        }
        if (!cJSON_AddStringToObject(obj, ks, vs)) {
            PyErr_NoMemory();
            return -1;
        }
    }
    return 0;
}

/* body: bytes-like, or str sent as UTF-8; base64 on the wire. */
static int
add_body(cJSON *req, PyObject *body)
{
    if (!body || body == Py_None)
        return 0;
    PyObject *bytes =
            PyUnicode_Check(body) ? PyUnicode_AsUTF8String(body) : PyBytes_FromObject(body);
    if (!bytes)
        return -1;
    PyObject *b64 = exec_value_binascii("b2a_base64", bytes, "newline", Py_False);
    Py_DECREF(bytes);
    const char *s = b64 ? PyBytes_AsString(b64) : NULL;
    int rc = s && cJSON_AddStringToObject(req, "body", s) ? 0 : -1;
    if (rc < 0 && s)
        PyErr_NoMemory();
    Py_XDECREF(b64);
    return rc;
}

static PyObject *
raise_egress_error(struct exec_run *r, const cJSON *error)
{
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "type"));
    const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "message"));
    if (!type || !msg)
        return exec_fail(r, ABORT_NONE, "http_request: the daemon's answer is malformed");
    if (strcmp(type, "timeout") == 0)
        PyErr_SetString(PyExc_TimeoutError, msg);
    else if (strcmp(type, "connection") == 0)
        PyErr_SetString(PyExc_ConnectionError, msg);
    else
        exec_fail(r, ABORT_NONE, "Forbidden network egress: %s", msg);
    return NULL;
}

static PyObject *
response_dict(struct exec_run *r, const cJSON *reply)
{
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(reply, "status");
    const cJSON *headers = cJSON_GetObjectItemCaseSensitive(reply, "headers");
    const char *body = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(reply, "body"));
    if (!cJSON_IsNumber(status) || !cJSON_IsObject(headers) || !body)
        return exec_fail(r, ABORT_NONE, "http_request: the daemon's answer is malformed");
    PyObject *h = PyDict_New();
    const cJSON *item;
    cJSON_ArrayForEach(item, headers) {
        PyObject *v = cJSON_IsString(item)
                              ? PyUnicode_DecodeUTF8(item->valuestring,
                                                     (Py_ssize_t) strlen(item->valuestring),
                                                     "surrogateescape")
                              : NULL;
        if (!h || !v || PyDict_SetItemString(h, item->string, v) < 0)
            Py_CLEAR(h);
        Py_XDECREF(v);
        if (!h)
            return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    PyObject *text = PyUnicode_FromString(body);
    PyObject *bytes = text ? exec_value_binascii("a2b_base64", text, "strict_mode", Py_True) : NULL;
    Py_XDECREF(text);
    PyObject *res = h && bytes ? Py_BuildValue("{s:i,s:O,s:O}", "status", status->valueint,
                                               "headers", h, "body", bytes)
                               : NULL;
    Py_XDECREF(h);
    Py_XDECREF(bytes);
    return res;
}

PyObject *
exec_builtin_http_request(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"url", "method", "headers", "body", NULL};
    const char *url, *method = "GET";
    PyObject *headers = NULL, *body = NULL;
    struct exec_run *r = exec_run_of(self);
    if (!r || !PyArg_ParseTupleAndKeywords(args, kwargs, "s|sOO:http_request", kwlist, &url,
                                           &method, &headers, &body))
        return NULL;
    const struct exec_policy *p = &r->env->policy;
    if (!p->egress)
        return exec_fail(r, ABORT_NONE,
                         "Forbidden network egress: this environment has no network egress");
    bool known = false;
    for (size_t i = 0; i < PF_ELEMENTSOF(http_methods); i++)
        known = known || strcmp(http_methods[i], method) == 0;
    if (!known) {
        PyErr_Format(PyExc_ValueError,
                     "http_request: method must be one of GET, HEAD, POST, PUT, PATCH, DELETE, "
                     "not '%s'",
                     method);
        return NULL;
    }
    cJSON *req = cJSON_CreateObject();
    if (!req || !cJSON_AddStringToObject(req, "event", "egress") ||
        !cJSON_AddStringToObject(req, "method", method) ||
        !cJSON_AddStringToObject(req, "url", url)) {
        cJSON_Delete(req);
        return PyErr_NoMemory();
    }
    if (add_headers(req, headers) < 0 || add_body(req, body) < 0) {
        cJSON_Delete(req);
        return NULL;
    }
    cJSON *answer = p->egress(p->egress_userdata, req);
    cJSON_Delete(req);
    if (!answer)
        return exec_fail(r, ABORT_ERROR, "http_request: the worker lost its channel to pyfenced");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer, "error");
    const cJSON *reply = cJSON_GetObjectItemCaseSensitive(answer, "reply");
    PyObject *res =
            error   ? raise_egress_error(r, error)
            : reply ? response_dict(r, reply)
                    : exec_fail(r, ABORT_NONE, "http_request: the daemon's answer is malformed");
    cJSON_Delete(answer);
    return res;
}
