/* What a snippet may call without importing: harmless builtins taken from CPython as they are,
 * the exception classes, and the executor's own print, final_answer and the checked getattr
 * family. The functions that need the environment are bound to it through a handle that
 * exec_env_free() empties, so a function object that outlives its environment fails cleanly. */
#include <string.h>

#include "builtin_names.h"
#include "exec_internal.h"
#include "pf_cleanup.h"

static const char *const safe_builtins[] = {POLICY_SAFE_BUILTINS};
static const char *const addable_builtins[] = {POLICY_ADDABLE_BUILTINS};

struct exec_env *
exec_handle_env(PyObject *capsule)
{
    struct env_handle *h = PyCapsule_GetPointer(capsule, "pyfence.env");
    return h ? h->env : NULL;
}

struct exec_run *
exec_run_of(PyObject *self)
{
    struct env_handle *h = PyCapsule_GetPointer(self, "pyfence.env");
    if (!h)
        return NULL;
    if (!h->env || !h->env->run) {
        PyErr_SetString(PyExc_RuntimeError,
                        "this function can only be called by a running snippet");
        return NULL;
    }
    return h->env->run;
}

int
exec_output(struct exec_run *r, const char *data, size_t len)
{
    uint64_t max = r->env->policy.max_output_bytes;
    bool over = r->out_bytes + len > max;
    if (over) {
        len = (size_t) (max - r->out_bytes);
        /* never cut a UTF-8 sequence: logs and output events must stay valid UTF-8 */
        while (len > 0 && ((unsigned char) data[len] & 0xC0) == 0x80)
            len--;
    }
    if (r->logs_len + len + 1 > r->logs_cap) {
        size_t cap = r->logs_cap ? r->logs_cap : 4096;
        while (cap < r->logs_len + len + 1)
            cap *= 2;
        char *p = realloc(r->logs, cap);
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
        r->logs = p;
        r->logs_cap = cap;
    }
    memcpy(r->logs + r->logs_len, data, len);
    r->logs_len += len;
    r->logs[r->logs_len] = '\0';
    r->out_bytes += len;
    if (r->cb && len)
        r->cb(r->userdata, data, len);
    if (over) {
        exec_fail(r, ABORT_OUTPUT,
                  "Printed output exceeded max_output_bytes (%llu bytes); print less, or "
                  "summarise the data before printing it",
                  (unsigned long long) max);
        return -1;
    }
    return 0;
}

static int
print_kw(PyObject *kwargs, const char *name, PyObject **ret)
{
    PyObject *v = kwargs ? PyDict_GetItemString(kwargs, name) : NULL;
    *ret = v == Py_None ? NULL : v;
    return v ? 1 : 0;
}

static PyObject *
builtin_print(PyObject *self, PyObject *args, PyObject *kwargs)
{
    struct exec_run *r = exec_run_of(self);
    if (!r)
        return NULL;
    PyObject *sep, *end, *file, *flush;
    Py_ssize_t known = print_kw(kwargs, "sep", &sep) + print_kw(kwargs, "end", &end) +
                       print_kw(kwargs, "file", &file) + print_kw(kwargs, "flush", &flush);
    if (kwargs && PyDict_GET_SIZE(kwargs) > known) {
        PyErr_SetString(PyExc_TypeError,
                        "print() accepts only the keyword arguments sep, end, file and flush");
        return NULL;
    }
    if (file)
        return exec_fail(r, ABORT_NONE,
                         "print(file=...) is not supported: printed output always goes to the "
                         "captured logs");
    if ((sep && !PyUnicode_Check(sep)) || (end && !PyUnicode_Check(end))) {
        PyErr_Format(PyExc_TypeError, "%s must be None or a string, not %.200s",
                     sep && !PyUnicode_Check(sep) ? "sep" : "end",
                     Py_TYPE(sep && !PyUnicode_Check(sep) ? sep : end)->tp_name);
        return NULL;
    }
    PyObject *parts = PyList_New(0);
    for (Py_ssize_t i = 0; parts && i < PyTuple_GET_SIZE(args); i++) {
        PyObject *s = PyObject_Str(PyTuple_GET_ITEM(args, i));
        if (!s || PyList_Append(parts, s) < 0)
            Py_CLEAR(parts);
        Py_XDECREF(s);
    }
    if (!parts)
        return NULL;
    PyObject *space = sep ? NULL : PyUnicode_FromString(" ");
    PyObject *line = sep || space ? PyUnicode_Join(sep ? sep : space, parts) : NULL;
    Py_XDECREF(space);
    Py_DECREF(parts);
    if (line && end)
        PyUnicode_Append(&line, end);
    else if (line)
        PyUnicode_AppendAndDel(&line, PyUnicode_FromString("\n"));
    if (!line)
        return NULL;
    PyObject *bytes = PyUnicode_AsEncodedString(line, "utf-8", "backslashreplace");
    Py_DECREF(line);
    if (!bytes)
        return NULL;
    int rc = exec_output(r, PyBytes_AS_STRING(bytes), (size_t) PyBytes_GET_SIZE(bytes));
    Py_DECREF(bytes);
    return rc < 0 ? NULL : Py_NewRef(Py_None);
}

static PyObject *
builtin_final_answer(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"answer", NULL};
    PyObject *answer;
    struct exec_run *r = exec_run_of(self);
    if (!r || !PyArg_ParseTupleAndKeywords(args, kwargs, "O:final_answer", kwlist, &answer))
        return NULL;
    PyObject *exc = PyObject_CallNoArgs(exec_FinalAnswerException);
    if (exc && PyObject_SetAttrString(exc, "value", answer) == 0)
        PyErr_SetObject(exec_FinalAnswerException, exc);
    Py_XDECREF(exc);
    return NULL;
}

static int
name_arg(PyObject *name)
{
    if (PyUnicode_Check(name))
        return 0;
    PyErr_Format(PyExc_TypeError, "attribute name must be string, not '%.200s'",
                 Py_TYPE(name)->tp_name);
    return -1;
}

static PyObject *
builtin_getattr(PyObject *self, PyObject *args)
{
    PyObject *obj, *name, *def = NULL;
    struct exec_run *r = exec_run_of(self);
    if (!r || !PyArg_UnpackTuple(args, "getattr", 2, 3, &obj, &name, &def) || name_arg(name) < 0 ||
        exec_check_value(r, obj) < 0)
        return NULL;
    PyObject *v = exec_getattr(r, obj, name);
    if (!v && def && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        return Py_NewRef(def);
    }
    return v;
}

static PyObject *
builtin_hasattr(PyObject *self, PyObject *args)
{
    PyObject *obj, *name;
    struct exec_run *r = exec_run_of(self);
    if (!r || !PyArg_UnpackTuple(args, "hasattr", 2, 2, &obj, &name) || name_arg(name) < 0)
        return NULL;
    PyObject *exact = exec_exact_str(name);
    if (!exact)
        return NULL;
    if (exec_check_attr_name(r, exact) < 0) {
        Py_DECREF(exact);
        return NULL;
    }
    PyObject *v = exec_class_getattr_own_read(obj, exact);
    Py_DECREF(exact);
    if (v) {
        Py_DECREF(v);
        Py_RETURN_TRUE;
    }
    if (!PyErr_ExceptionMatches(PyExc_AttributeError))
        return NULL;
    PyErr_Clear();
    Py_RETURN_FALSE;
}

static PyObject *
builtin_setattr(PyObject *self, PyObject *args)
{
    PyObject *obj, *name, *value;
    struct exec_run *r = exec_run_of(self);
    /* the value is checked as getattr checks obj: C code calls this with values of its own
     * (map(setattr, objs, names, values) with values a library returned in a list) */
    if (!r || !PyArg_UnpackTuple(args, "setattr", 3, 3, &obj, &name, &value) ||
        name_arg(name) < 0 || exec_check_value(r, value) < 0 ||
        exec_setattr(r, obj, name, value) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
builtin_delattr(PyObject *self, PyObject *args)
{
    PyObject *obj, *name;
    struct exec_run *r = exec_run_of(self);
    if (!r || !PyArg_UnpackTuple(args, "delattr", 2, 2, &obj, &name) || name_arg(name) < 0)
        return NULL;
    PyObject *exact = exec_exact_str(name);
    if (!exact)
        return NULL;
    PyObject *res = NULL;
    if (exec_check_attr_store_name(r, exact) == 0 &&
        exec_check_attr_owner(r, obj, exact, true) == 0 && PyObject_DelAttr(obj, exact) == 0)
        res = Py_NewRef(Py_None);
    Py_DECREF(exact);
    return res;
}

static PyMethodDef env_functions[] = {
        {"print", (PyCFunction) (void (*)(void)) builtin_print, METH_VARARGS | METH_KEYWORDS,
         "print(*values, sep=' ', end='\\n'): output goes to the captured logs"},
        {"final_answer", (PyCFunction) (void (*)(void)) builtin_final_answer,
         METH_VARARGS | METH_KEYWORDS, "final_answer(answer): ends the snippet with this answer"},
        {"getattr", builtin_getattr, METH_VARARGS, "getattr(obj, name[, default])"},
        {"hasattr", builtin_hasattr, METH_VARARGS, "hasattr(obj, name)"},
        {"setattr", builtin_setattr, METH_VARARGS, "setattr(obj, name, value)"},
        {"delattr", builtin_delattr, METH_VARARGS, "delattr(obj, name)"},
        {"super", (PyCFunction) (void (*)(void)) exec_builtin_super, METH_VARARGS | METH_KEYWORDS,
         "super() or super(type, obj)"},
        {"http_request", (PyCFunction) (void (*)(void)) exec_builtin_http_request,
         METH_VARARGS | METH_KEYWORDS,
         "http_request(url, method='GET', headers=None, body=None): an HTTP(S) request made by "
         "pyfenced where the profile's egress rules allow it; returns {'status', 'headers', "
         "'body'}"},
        {NULL, NULL, 0, NULL},
};

static void
handle_destroy(PyObject *capsule)
{
    free(PyCapsule_GetPointer(capsule, "pyfence.env"));
}

static int
add_cpython_builtins(PyObject *dict)
{
    PyObject *b = PyEval_GetBuiltins(); /* borrowed */
    if (!b) {
        PyObject *mod = exec_import_own("builtins");
        if (!mod)
            return -1;
        b = PyModule_GetDict(mod);
        Py_DECREF(mod);
    }
    for (size_t i = 0; i < sizeof(safe_builtins) / sizeof(safe_builtins[0]); i++) {
        PyObject *v = PyDict_GetItemString(b, safe_builtins[i]);
        if (v && PyDict_SetItemString(dict, safe_builtins[i], v) < 0)
            return -1;
    }
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(b, &pos, &k, &v))
        if (PyExceptionClass_Check(v) && PyDict_SetItem(dict, k, v) < 0)
            return -1;
    return 0;
}

/* Returns a new dict; env->handle is emptied by exec_builtins_detach() when env goes away. */
PyObject *
exec_builtins_new(struct exec_env *env)
{
    PyObject *dict = PyDict_New();
    if (!dict || add_cpython_builtins(dict) < 0)
        goto fail;
    struct env_handle *h = calloc(1, sizeof(*h));
    if (!h) {
        PyErr_NoMemory();
        goto fail;
    }
    h->env = env;
    PyObject *capsule = PyCapsule_New(h, "pyfence.env", handle_destroy);
    if (!capsule) {
        free(h);
        goto fail;
    }
    env->handle = h;
    env->capsule = Py_NewRef(capsule);
    for (PyMethodDef *d = env_functions; d->ml_name; d++) {
        PyObject *f = PyCFunction_New(d, capsule);
        if (!f || PyDict_SetItemString(dict, d->ml_name, f) < 0) {
            Py_XDECREF(f);
            Py_DECREF(capsule);
            goto fail;
        }
        Py_DECREF(f);
    }
    Py_DECREF(capsule);
    return dict;
fail:
    Py_XDECREF(dict);
    return NULL;
}

int
exec_builtins_adjust(struct exec_env *env, const struct exec_policy *p, struct pf_error **err)
{
    static const char *const env_builtins[] = {POLICY_ENV_BUILTINS};
    PyObject *cpython = PyEval_GetBuiltins(); /* borrowed */
    for (size_t i = 0; i < p->n_builtins_add; i++) {
        const char *name = p->builtins_add[i];
        if (!name ||
            !policy_builtin_listed(addable_builtins, PF_ELEMENTSOF(addable_builtins), name))
            return pf_error_set(err, PF_E_BAD_REQUEST,
                                "builtins_add[%zu]: '%s' cannot be added (addable: id, "
                                "memoryview)",
                                i, name ? name : "null");
        PyObject *v = cpython ? PyDict_GetItemString(cpython, name) : NULL;
        if (!v || PyDict_SetItemString(env->builtins, name, v) < 0) {
            PyErr_Clear();
            return pf_error_set(err, PF_E_INTERNAL, "builtins_add: cannot add '%s'", name);
        }
    }
    for (size_t i = 0; i < p->n_builtins_remove; i++) {
        const char *name = p->builtins_remove[i];
        if (!name || (!policy_builtin_listed(safe_builtins, PF_ELEMENTSOF(safe_builtins), name) &&
                      !policy_builtin_listed(env_builtins, PF_ELEMENTSOF(env_builtins), name)))
            return pf_error_set(err, PF_E_BAD_REQUEST,
                                "builtins_remove[%zu]: '%s' is not one of the builtins snippets "
                                "get",
                                i, name ? name : "null");
        /* Listed twice, or also added: gone either way. */
        if (PyDict_DelItemString(env->builtins, name) < 0)
            PyErr_Clear();
    }
    return 0;
}

void
exec_builtins_detach(struct exec_env *env)
{
    if (env->handle)
        env->handle->env = NULL;
    env->handle = NULL;
    Py_CLEAR(env->capsule);
}
