/* Which module's code made a class while a snippet ran.
 *
 * A library trusts the classes it made at import: their attributes are what its own code put
 * there. While a snippet runs, library code makes classes for it too (namedtuple's, enum's,
 * make_dataclass's, types.new_class's) and finishes them after making them (namedtuple setting
 * __module__, dataclasses adding __init__). So every class made while a snippet runs (outside
 * imports) is recorded here with the module whose code called type.__new__ (class_dunders.c):
 * the snippet's run's frame is __main__'s, a library frame's module is the one whose own dict
 * its globals are (by identity, as the audit hook decides), and code of no module (exec'd with
 * globals of its own) records nothing. types.new_class records its caller over its own name
 * (new_class.c). A class missing here was made at import, or before any run: a library's own.
 *
 * Two readers: guard_store.c lets a library's code change a class only if that library made it
 * while a snippet ran, and policy_class.c judges a class whose __module__ says types (the name
 * type.__new__ takes from types.new_class's frame, or copies of such a class's dict: the
 * rebuild of make_dataclass(..., slots=True)'s class) by its maker, as CPython's code named
 * it after a module that did not make it. */
#include "exec_internal.h"

static PyObject *makers;    /* {weakref to a class: its maker's module name} */
static PyObject *forget_fn; /* the weakrefs' callback: drops a dead class's entry */

static PyObject *
forget(PyObject *self, PyObject *wr)
{
    (void) self;
    if (PyDict_DelItem(makers, wr) < 0)
        PyErr_Clear(); /* already gone */
    return Py_NewRef(Py_None);
}

static PyMethodDef forget_def = {"forget_class_maker", forget, METH_O, NULL};

PyObject *
exec_class_maker_now(void)
{
    if (exec_audit_snippet_run())
        return PyUnicode_FromString("__main__");
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    PyObject *globals = f ? PyFrame_GetGlobals(f) : NULL;
    PyObject *name = globals ? PyDict_GetItemString(globals, "__name__") : NULL; /* borrowed */
    PyObject *mod = name && PyUnicode_CheckExact(name) ? PyImport_GetModule(name) : NULL;
    bool own = mod && PyModule_Check(mod) && PyModule_GetDict(mod) == globals;
    PyObject *res = own ? Py_NewRef(name) : NULL;
    Py_XDECREF(mod);
    Py_XDECREF(globals);
    PyErr_Clear();
    return res;
}

int
exec_class_maker_remember(PyTypeObject *t, PyObject *maker)
{
    if (!makers)
        return 0;
    PyObject *wr = PyWeakref_NewRef((PyObject *) t, forget_fn);
    int rc = wr ? PyDict_SetItem(makers, wr, maker) : -1;
    Py_XDECREF(wr);
    return rc;
}

int
exec_class_maker_note(PyTypeObject *t)
{
    PyObject *maker = exec_class_maker_now();
    int rc = maker ? exec_class_maker_remember(t, maker) : 0;
    Py_XDECREF(maker);
    return rc;
}

const char *
exec_class_maker(PyTypeObject *t)
{
    if (!makers)
        return NULL;
    PyObject *wr = PyWeakref_NewRef((PyObject *) t, NULL);
    PyObject *maker = wr ? PyDict_GetItemWithError(makers, wr) : NULL; /* borrowed */
    Py_XDECREF(wr);
    PyErr_Clear();
    return maker ? PyUnicode_AsUTF8(maker) : NULL;
}

int
exec_class_maker_install(void)
{
    if (makers)
        return 0;
    if (!(forget_fn = PyCFunction_New(&forget_def, NULL)) || !(makers = PyDict_New())) {
        Py_CLEAR(forget_fn);
        return -1;
    }
    return 0;
}
