/* pprint's namespace printer, PrettyPrinter._pprint_simplenamespace, formats what
 * object.__dict__ holds, handing each value on to the printer filed for its type in the
 * dispatch table. The table is a class attribute the snippet may change, and a printer is
 * found by type(object).__repr__: filed under type.__repr__, the namespace printer formatted
 * a class's __dict__ (object's, with object.__getattribute__, an unchecked getattr), and under
 * a module's repr a module's (case 341). Whatever the snippet then filed for the values' types
 * got them: its own hook (checked as an argument, case 347) or a C callable that keeps its
 * arguments (max(key=lst.append), case 354), which C chains then used without the walk ever
 * holding the value. CPython files the printer only for types.SimpleNamespace, so the
 * executor's version refuses any other object, in the table and as the class attribute,
 * whoever calls it. Installed from exec_guard_store_install, once, before any run. */
#include "exec_internal.h"

static PyObject *real_printer;       /* pprint's own function */
static PyTypeObject *namespace_type; /* types.SimpleNamespace */

/* (self, object, stream, indent, allowance, context, level), as the dispatch table calls it */
static PyObject *
checked_printer(PyObject *unused, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs >= 2 && !PyObject_TypeCheck(args[1], namespace_type)) {
        PyErr_Format(exec_InterpreterError,
                     "Forbidden: pprint's namespace printer formatting a %s object (it hands on "
                     "what the object's __dict__ holds: only a types.SimpleNamespace's)",
                     Py_TYPE(args[1])->tp_name);
        return NULL;
    }
    return PyObject_Vectorcall(real_printer, args, (size_t) nargs, NULL);
}

static PyMethodDef checked_printer_def = {
        "_pprint_simplenamespace", (PyCFunction) (void (*)(void)) checked_printer, METH_FASTCALL,
        "pprint's namespace printer, for types.SimpleNamespace objects only"};

/* Every entry of the dispatch table holding pprint's function, and the class attribute (an
 * instancemethod binds as the function did). */
static int
replace_printer(PyObject *printer_class, PyObject *checked)
{
    PyObject *table = PyObject_GetAttrString(printer_class, "_dispatch");
    if (!table || !PyDict_Check(table)) {
        Py_XDECREF(table);
        PyErr_SetString(PyExc_RuntimeError, "pprint.PrettyPrinter._dispatch is not a dict");
        return -1;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int rc = 0;
    while (rc == 0 && PyDict_Next(table, &pos, &key, &value))
        if (value == real_printer)
            rc = PyDict_SetItem(table, key, checked); /* a value replaced: the walk goes on */
    Py_DECREF(table);
    PyObject *method = rc == 0 ? PyInstanceMethod_New(checked) : NULL;
    rc = method ? PyObject_SetAttrString(printer_class, "_pprint_simplenamespace", method) : -1;
    Py_XDECREF(method);
    return rc;
}

int
exec_guard_pprint_install(void)
{
    if (real_printer)
        return 0;
    PyObject *types = exec_import_own("types");
    PyObject *pprint = types ? exec_import_own("pprint") : NULL;
    PyObject *ns = types ? PyObject_GetAttrString(types, "SimpleNamespace") : NULL;
    PyObject *cls = pprint ? PyObject_GetAttrString(pprint, "PrettyPrinter") : NULL;
    PyObject *real = cls ? PyObject_GetAttrString(cls, "_pprint_simplenamespace") : NULL;
    PyObject *checked = NULL;
    int rc = -1;
    if (!ns || !PyType_Check(ns) || !real || !PyFunction_Check(real)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError,
                            "pprint's namespace printer is not the function expected");
    } else if ((checked = PyCFunction_New(&checked_printer_def, NULL)) != NULL) {
        namespace_type = (PyTypeObject *) Py_NewRef(ns);
        real_printer = Py_NewRef(real);
        rc = replace_printer(cls, checked);
    }
    Py_XDECREF(checked);
    Py_XDECREF(real);
    Py_XDECREF(cls);
    Py_XDECREF(ns);
    Py_XDECREF(pprint);
    Py_XDECREF(types);
    return rc;
}
