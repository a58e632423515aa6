/* type(x) answers any object's class. The walk checks that answer as it checks every call's
 * result, but C code the snippet calls can call type too, where the walk sees no result:
 * list(map(type, [q.not_empty])) held threading.Condition (a queue.Queue's condition's class)
 * in a list, and C code iterating that list (map(map, L, args)) called it. So the type
 * object's own vectorcall is replaced, once, before the zygote forks: a one-argument call
 * made while the snippet's frame is the current one (by the walk, or by C code the snippet
 * called) has its answer checked as a value. Library Python code asks type(self) all the
 * time about its own objects; its frame is current then, and it is not checked. */
#include "exec_internal.h"

static vectorcallfunc real_type_vectorcall;

static PyObject *
checked_type_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyObject *v = real_type_vectorcall(callable, args, nargsf, kwnames);
    if (!v || callable != (PyObject *) &PyType_Type || PyVectorcall_NARGS(nargsf) != 1)
        return v;
    struct exec_run *r = exec_audit_snippet_run();
    if (r && exec_check_value(r, v) < 0)
        Py_CLEAR(v);
    return v;
}

int
exec_guard_type_install(void)
{
    if (real_type_vectorcall)
        return 0;
    /* Every call of type goes through this slot (PyObject_Call too) only while type says it
     * has one: fail closed on a CPython where it does not. */
    if (!PyType_Type.tp_vectorcall ||
        !PyType_HasFeature(&PyType_Type, Py_TPFLAGS_HAVE_VECTORCALL)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "type has no vectorcall slot to install type()'s check");
        return -1;
    }
    real_type_vectorcall = PyType_Type.tp_vectorcall;
    PyType_Type.tp_vectorcall = checked_type_vectorcall;
    return 0;
}
