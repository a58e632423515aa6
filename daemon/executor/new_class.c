/* Classes types.new_class makes while a snippet runs count as their caller's module's.
 *
 * type.__new__ names a class's module after the code that calls it, and in types.new_class
 * that is types' own: dataclasses.make_dataclass('P', ['x']) (which on 3.11 cannot name a
 * module) made a class of module 'types'. Judged by that name, the class was a library's
 * that only types' code may change (guard_store.c), so dataclasses' own code, decorating the
 * class it had just made, was refused; and the snippet could hold it only with types allowed.
 * But types' code never changes a class after making it: the one that made it is new_class's
 * caller. So types.new_class is replaced, once, before any library is imported, by a version
 * that records, for a class it made while a snippet runs (outside imports) without a
 * __module__ of its caller's choosing, which module called it (class_maker.c, over the
 * record type.__new__ made of types' frame): the snippet (its run's frame is current: the
 * class is the snippet's, __main__'s) or a library whose own code the current frame runs
 * (make_dataclass: dataclasses'). policy_class.c judges the class by that module, for holding
 * it and for who may change it; __module__ itself still says 'types', as in CPython. A caller
 * that is neither (code exec'd with globals of its own) is not recorded: the class stays
 * types'. Classes made while no snippet runs (a library's, at import) stay types' too: the
 * rule that only a library's own code changes its classes keeps holding for them. */
#include "exec_internal.h"

static PyObject *real_new_class;

/* cls's own __module__ is exactly "types": type.__new__ named it after new_class's frame. */
static bool
named_after_types(PyObject *cls)
{
    PyObject *m = PyDict_GetItemString(((PyTypeObject *) cls)->tp_dict, "__module__");
    return m && PyUnicode_CheckExact(m) && PyUnicode_CompareWithASCIIString(m, "types") == 0;
}

static PyObject *
checked_new_class(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
    (void) self;
    PyObject *cls = PyObject_Vectorcall(real_new_class, args, nargsf, kwnames);
    if (!cls || !exec_audit_stores_checked() || !PyType_Check(cls) ||
        !(((PyTypeObject *) cls)->tp_flags & Py_TPFLAGS_HEAPTYPE) || !named_after_types(cls))
        return cls;
    PyObject *maker = exec_class_maker_now();
    if (maker && exec_class_maker_remember((PyTypeObject *) cls, maker) < 0)
        Py_CLEAR(cls);
    Py_XDECREF(maker);
    return cls;
}

static PyMethodDef checked_new_class_def = {
        "new_class", (PyCFunction) (void (*)(void)) checked_new_class,
        METH_FASTCALL | METH_KEYWORDS,
        "types.new_class; a class it makes while a snippet runs counts as its caller's"};

int
exec_new_class_install(void)
{
    if (real_new_class)
        return 0;
    PyObject *types = exec_import_own("types");
    if (!types)
        return -1;
    PyObject *ns = PyModule_GetDict(types); /* borrowed */
    PyObject *real = PyDict_GetItemString(ns, "new_class");
    PyObject *checked = PyCFunction_New(&checked_new_class_def, NULL);
    int rc = -1;
    if (!real || !PyFunction_Check(real))
        PyErr_SetString(PyExc_RuntimeError, "types.new_class is not the function expected");
    else if (checked) {
        real_new_class = Py_NewRef(real);
        rc = PyDict_SetItemString(ns, "new_class", checked);
    }
    Py_XDECREF(checked);
    Py_DECREF(types);
    return rc;
}
