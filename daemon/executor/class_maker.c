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

/* The record is keyed by the class's address, never by the class (or a weakref to it, which
 * hashes and compares as its referent): a snippet metaclass's __hash__ and __eq__ (bool, no
 * snippet code) made a lookup for enum.Enum find the entry of the snippet's own class, and
 * with it a library as enum.Enum's maker. Each entry holds (weakref to the class, maker); the
 * weakref's callback, bound to the entry's key, drops the entry when the class dies, and a
 * lookup accepts an entry only if its weakref still refers to the very class asked about. */
static PyObject *makers; /* {id of a class: (weakref to it, its maker's module name)} */

/* self: the entry's key; wr: the dead class's weakref. Drops the entry only if it is still
 * that class's (a later class at the same address has an entry of its own). */
static PyObject *
forget(PyObject *self, PyObject *wr)
{
    PyObject *entry = PyDict_GetItemWithError(makers, self); /* borrowed */
    if (entry && PyTuple_GET_ITEM(entry, 0) == wr && PyDict_DelItem(makers, self) < 0)
        PyErr_WriteUnraisable(self);
    PyErr_Clear();
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
    PyObject *name = Py_XNewRef(exec_globals_module(globals));
    Py_XDECREF(globals);
    return name;
}

int
exec_class_maker_remember(PyTypeObject *t, PyObject *maker)
{
    if (!makers)
        return 0;
    PyObject *key = PyLong_FromVoidPtr(t);
    PyObject *forget_fn = key ? PyCFunction_New(&forget_def, key) : NULL;
    PyObject *wr = forget_fn ? PyWeakref_NewRef((PyObject *) t, forget_fn) : NULL;
    PyObject *entry = wr ? PyTuple_Pack(2, wr, maker) : NULL;
    int rc = entry ? PyDict_SetItem(makers, key, entry) : -1;
    Py_XDECREF(entry);
    Py_XDECREF(wr);
    Py_XDECREF(forget_fn);
    Py_XDECREF(key);
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
    PyObject *key = PyLong_FromVoidPtr(t);
    PyObject *entry = key ? PyDict_GetItemWithError(makers, key) : NULL; /* borrowed */
    Py_XDECREF(key);
    PyErr_Clear();
    if (!entry || PyWeakref_GetObject(PyTuple_GET_ITEM(entry, 0)) != (PyObject *) t)
        return NULL;
    return PyUnicode_AsUTF8(PyTuple_GET_ITEM(entry, 1));
}

int
exec_class_maker_install(void)
{
    if (makers)
        return 0;
    return (makers = PyDict_New()) ? 0 : -1;
}
