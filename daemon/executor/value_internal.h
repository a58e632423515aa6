/* Shared by value.c (Python -> JSON) and value_parse.c (JSON -> Python). */
#ifndef DAEMON_EXECUTOR_VALUE_INTERNAL_H
#define DAEMON_EXECUTOR_VALUE_INTERNAL_H

/* value.h brings Python.h, which must come before datetime.h and every system header. */
// clang-format off
#include "value.h"

#include <datetime.h>
#include <stdbool.h>
// clang-format on

#include "pf_cleanup.h"

/* 2^53 - 1: ints within ±SAFE_INT_MAX travel as plain numbers. Not 2^53: a reader keeping
 * only the double (cJSON) cannot tell 2^53 from 2^53 + 1, so it refuses both, and an int sent
 * as 2^53 could not come back in. */
#define SAFE_INT_MAX 9007199254740991LL

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete)
#define _cleanup_json_ _cleanup_(cJSON_Deletep)

static inline void
pyobj_decrefp(PyObject **p)
{
    Py_XDECREF(*p);
}
#define _cleanup_pyobj_ _cleanup_(pyobj_decrefp)

/* The datetime C API is a capsule imported per translation unit (datetime.h's PyDateTimeAPI is
 * static); false when it cannot be had, in which case datetime values take the repr path. */
static inline bool
datetime_api(void)
{
    if (!PyDateTimeAPI) {
        PyDateTime_IMPORT;
        if (!PyDateTimeAPI) {
            PyErr_Clear();
            return false;
        }
    }
    return true;
}

/* binascii.NAME(arg, KW=flag): binascii is built into CPython, so this works in a worker that
 * can no longer open files. New reference, or NULL with an exception set. */
PyObject *exec_value_binascii(const char *name, PyObject *arg, const char *kw, PyObject *flag);

#endif
