/* Raw mode (test builds only), the hardening engineer's block. With -Draw_mode=true, a run frame
 * with "raw": true runs its code as native CPython (PyRun_String in a fresh dict, stdout and
 * stderr captured), bypassing the executor, so that tests/security can show each OS layer holds
 * on its own. A file of its own so that no other build contains it: daemon/worker/meson.build
 * compiles it only with -Draw_mode=true, and release builds refuse to compile it. */
#include "config.h"

#if !PYFENCE_RAW_MODE
#    error "worker_raw.c is built only with -Draw_mode=true (daemon/worker/meson.build)"
#endif
#if defined(NDEBUG)
#    error "raw_mode lets workers run native code: test builds only, never a release build"
#endif

#include <Python.h>
/* after Python.h, which comes first */
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "pf_cleanup.h"
#include "pf_error.h"
#include "worker_internal.h"

/* The text of the pending exception as "Type: message" (cleared). */
static char *
raw_exception_text(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *name = type ? ((PyTypeObject *) type)->tp_name : "Error";
    const char *msg = s ? PyUnicode_AsUTF8(s) : NULL;
    char *out = NULL;
    if (asprintf(&out, "%s: %s", name, msg ? msg : "") < 0)
        out = NULL;
    PyErr_Clear();
    Py_XDECREF(s);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return out;
}

void
worker_run_raw(int fd, const struct run_job *job)
{
    static const char prelude[] = "import io as _io, sys as _sys\n"
                                  "_pf_out = _io.StringIO()\n"
                                  "_sys.stdout = _sys.stderr = _pf_out\n";
    PyObject *globals = PyDict_New();
    if (!globals || PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) < 0)
        worker_fail_job(fd, PF_E_INTERNAL, "raw mode: cannot make the globals", 0);
    PyObject *r = PyRun_String(prelude, Py_file_input, globals, globals);
    if (!r)
        worker_fail_job(fd, PF_E_INTERNAL, "raw mode: cannot capture stdout", 0);
    Py_DECREF(r);
    r = PyRun_String(job->code, Py_file_input, globals, globals);
    /* As the executor reports it: the address-space rlimit refused an allocation. */
    bool oom = !r && PyErr_ExceptionMatches(PyExc_MemoryError);
    _cleanup_free_ char *error = r ? NULL : raw_exception_text();
    Py_XDECREF(r);
    PyObject *out = PyDict_GetItemString(globals, "_pf_out"); /* borrowed */
    PyObject *text = out ? PyObject_CallMethod(out, "getvalue", NULL) : NULL;
    const char *logs = text ? PyUnicode_AsUTF8(text) : NULL;
    cJSON *res = cJSON_CreateObject();
    if (!res)
        _exit(1);
    cJSON_AddStringToObject(res, "outcome",
                            r ? "ok" : pf_code_name(oom ? PF_E_MEMORY_LIMIT : PF_E_ERROR));
    cJSON_AddNullToObject(res, "output");
    cJSON_AddNullToObject(res, "output_repr");
    cJSON_AddStringToObject(res, "logs", logs ? logs : "");
    cJSON_AddBoolToObject(res, "is_final_answer", false);
    if (r) {
        cJSON_AddNullToObject(res, "error");
    } else {
        cJSON *e = cJSON_AddObjectToObject(res, "error");
        if (e) {
            cJSON_AddNullToObject(e, "type");
            cJSON_AddStringToObject(e, "message", error ? error : "error");
            cJSON_AddNullToObject(e, "line");
            cJSON_AddNullToObject(e, "source");
        }
    }
    worker_add_usage(res);
    worker_replace_item(res, "event", cJSON_CreateString("result"));
    worker_send_or_die(fd, res);
    _exit(0);
}
