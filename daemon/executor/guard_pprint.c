/* pprint's printers format what an object holds and hand each part on to the printer filed for
 * its type in PrettyPrinter._dispatch, keyed by type(part).__repr__. The table is a class
 * attribute the snippet may change, so any printer could be filed for any type: the namespace
 * printer filed under type.__repr__ formatted a class's __dict__ (object's, with
 * object.__getattribute__, an unchecked getattr), under a module's repr a module's (case 341);
 * the dataclass printer, given a class whose field the snippet renamed '__getattribute__', read
 * that attribute of the class. Whatever the snippet filed for the parts' types got them: its
 * own hook (checked as an argument, case 347) or a C callable that keeps its arguments
 * (max(key=lst.append), cases 354, 357), which C chains then used without the walk ever holding
 * the value. So each printer formats only what CPython files it for: a printer of the table
 * only objects whose type's __repr__ is the key pprint filed it under, the dataclass printer
 * (called by pprint directly) no class or module. The executor's versions
 * replace pprint's in the table and as class attributes. Installed from
 * exec_guard_store_install, once, before any run. */
#include <stdlib.h>
#include <string.h>

#include "exec_internal.h"

/* A checked printer's own: (pprint's function, the key CPython filed it under or None for
 * the dataclass printer). */
enum { PRINTER_REAL, PRINTER_KEY, PRINTER_N };

/* What pprint's dispatch finds for obj is key, or, for a C class's __repr__, obj is of that
 * class: pprint's default-dict printer hands a defaultdict to the dict printer itself. */
static bool
printer_formats(PyObject *key, PyObject *obj)
{
    if (key == Py_None)
        return !PyType_Check(obj) && !PyModule_Check(obj);
    if (Py_IS_TYPE(key, &PyWrapperDescr_Type) && PyObject_TypeCheck(obj, PyDescr_TYPE(key)))
        return true;
    PyObject *repr = PyObject_GetAttrString((PyObject *) Py_TYPE(obj), "__repr__");
    bool same = repr == key;
    Py_XDECREF(repr);
    PyErr_Clear();
    return same;
}

/* (self, object, stream, indent, allowance, context, level), as pprint calls a printer */
static PyObject *
checked_printer(PyObject *own, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *real = PyTuple_GET_ITEM(own, PRINTER_REAL);
    if (nargs >= 2 && !printer_formats(PyTuple_GET_ITEM(own, PRINTER_KEY), args[1])) {
        PyErr_Format(exec_InterpreterError,
                     "Forbidden: pprint's printer %U formatting a %s object (each printer "
                     "formats only what pprint files it for: it hands on what the object holds)",
                     ((PyFunctionObject *) real)->func_name, Py_TYPE(args[1])->tp_name);
        return NULL;
    }
    return PyObject_Vectorcall(real, args, (size_t) nargs, NULL);
}

/* One definition a printer, named as pprint's function is. Statics, names included: they live
 * as long as the interpreter's classes do. */
static PyMethodDef printer_defs[32];
static size_t n_printer_defs;

static PyObject *
make_checked(PyObject *real, PyObject *key)
{
    if (n_printer_defs == sizeof(printer_defs) / sizeof(printer_defs[0])) {
        PyErr_SetString(PyExc_RuntimeError, "pprint has more printers than the executor expects");
        return NULL;
    }
    const char *utf8 = PyUnicode_AsUTF8(((PyFunctionObject *) real)->func_name);
    char *name = utf8 ? strdup(utf8) : NULL; /* kept with the definition, for good */
    if (!name)
        return utf8 ? PyErr_NoMemory() : NULL;
    PyMethodDef *def = &printer_defs[n_printer_defs++];
    *def = (PyMethodDef){name, (PyCFunction) (void (*)(void)) checked_printer, METH_FASTCALL,
                         "one of pprint's printers, formatting only the objects pprint files "
                         "it for"};
    PyObject *own = PyTuple_Pack(PRINTER_N, real, key);
    PyObject *checked = own ? PyCFunction_New(def, own) : NULL;
    Py_XDECREF(own);
    return checked;
}

/* The class attribute holding real, if any, becomes checked (an instancemethod binds as the
 * function did). */
static int
replace_attribute(PyTypeObject *cls, PyObject *real, PyObject *checked)
{
    PyObject *name, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(cls->tp_dict, &pos, &name, &value)) {
        if (value != real)
            continue;
        PyObject *method = PyInstanceMethod_New(checked);
        int rc = method ? PyObject_SetAttr((PyObject *) cls, name, method) : -1;
        Py_XDECREF(method);
        return rc;
    }
    return 0;
}

static int
guard_table(PyTypeObject *cls)
{
    PyObject *table = PyDict_GetItemString(cls->tp_dict, "_dispatch"); /* borrowed */
    if (!table || !PyDict_Check(table)) {
        PyErr_SetString(PyExc_RuntimeError, "pprint.PrettyPrinter._dispatch is not a dict");
        return -1;
    }
    PyObject *items = PyDict_Items(table); /* a snapshot: the table changes as we go */
    int rc = items ? 0 : -1;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(items); i++) {
        PyObject *key = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 0);
        PyObject *real = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 1);
        if (!PyFunction_Check(real))
            continue;
        PyObject *checked = make_checked(real, key);
        rc = checked && PyDict_SetItem(table, key, checked) == 0
                     ? replace_attribute(cls, real, checked)
                     : -1;
        Py_XDECREF(checked);
    }
    Py_XDECREF(items);
    return rc;
}

static int
guard_dataclass_printer(PyTypeObject *cls)
{
    PyObject *real = PyDict_GetItemString(cls->tp_dict, "_pprint_dataclass"); /* borrowed */
    if (!real || !PyFunction_Check(real)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "pprint.PrettyPrinter._pprint_dataclass is not the function expected");
        return -1;
    }
    PyObject *checked = make_checked(real, Py_None);
    int rc = checked ? replace_attribute(cls, real, checked) : -1;
    Py_XDECREF(checked);
    return rc;
}

int
exec_guard_pprint_install(void)
{
    static bool installed;
    if (installed)
        return 0;
    PyObject *pprint = exec_import_own("pprint");
    PyObject *cls = pprint ? PyObject_GetAttrString(pprint, "PrettyPrinter") : NULL;
    int rc = -1;
    if (cls && !PyType_Check(cls))
        PyErr_SetString(PyExc_RuntimeError, "pprint.PrettyPrinter is not a class");
    else if (cls)
        rc = guard_table((PyTypeObject *) cls) < 0 ||
                             guard_dataclass_printer((PyTypeObject *) cls) < 0
                     ? -1
                     : 0;
    installed = rc == 0;
    Py_XDECREF(cls);
    Py_XDECREF(pprint);
    return rc;
}
