/* A class's __getattr__ is asked for names normal lookup misses. But library code looks up, on
 * the objects it is handed, the very hooks a snippet's class may not define (class_dunders.c),
 * and those miss normal lookup: copy's getattr(x, '__deepcopy__', None) and
 * hasattr(y, '__setstate__'), copyreg's __getnewargs_ex__, copy's getattr(cls, '__copy__')
 * answered by a metaclass's __getattr__, pandas' interchange protocol's hasattr(df,
 * '__dataframe__'). Whatever __getattr__ answers there, the library calls: the refused hook by
 * another door. A snippet's class's __getattr__ is the snippet's code; a library class's may
 * answer data the snippet chose: pandas' NDFrame.__getattr__ answers s[name] for a label of an
 * object index, so Series([f], index=['__dataframe__']).__dataframe__ is the snippet's f.
 *
 * So a class whose __getattr__ is Python code gets, in place of CPython's __getattr__
 * dispatcher in its tp_getattro slot, one that asks __getattr__ only for names a class may
 * define: a dunder outside the class allow-list gets normal lookup's own AttributeError, as if
 * the class had no __getattr__ for that name. Every other name goes to CPython's dispatcher
 * unchanged. Being the type's slot, it holds however __getattr__ got there (def, assignment, a
 * lambda, a partial, a callable object, staticmethod, a base class's, type(), a metaclass,
 * types.new_class), and the class dict is untouched: K.__getattr__ is the class's own
 * function (which the snippet itself may not read: a refused dunder).
 *   - Classes made while a snippet runs (type.__new__ is replaced, class_dunders.c) check
 *     always: they are the snippet's, or a library's made for it.
 *   - Every other class checks only while a snippet runs (outside imports): outside runs it
 *     is CPython's own. Classes made at import get it as type.__new__ makes them; those made
 *     before the executor was installed (CPython's start-up) by one walk of object's
 *     subclasses then, in the zygote, before any library is imported.
 * CPython resets the slot when a class's or a base's __getattr__, __getattribute__ or
 * __bases__ is stored; guard_store.c calls exec_class_getattr_guard_tree or
 * exec_class_getattr_guard_library_tree after such a store. */
#include "exec_internal.h"

/* CPython's slot_tp_getattr_hook, static in typeobject.c: read from a probe class at install. */
static getattrofunc real_getattr_hook;
static PyObject *str_getattribute;

/* Normal lookup, as CPython's dispatcher makes it before asking __getattr__: __getattribute__
 * found along the MRO, bound and called (object's is PyObject_GenericGetAttr itself). */
static PyObject *
lookup_without_getattr(PyObject *self, PyObject *name)
{
    PyObject *ga = _PyType_Lookup(Py_TYPE(self), str_getattribute); /* borrowed */
    if (!ga || (Py_IS_TYPE(ga, &PyWrapperDescr_Type) &&
                ((PyWrapperDescrObject *) ga)->d_wrapped == (void *) PyObject_GenericGetAttr))
        return PyObject_GenericGetAttr(self, name);
    Py_INCREF(ga);
    descrgetfunc get = Py_TYPE(ga)->tp_descr_get;
    PyObject *bound = get ? get(ga, self, (PyObject *) Py_TYPE(self)) : Py_NewRef(ga);
    Py_DECREF(ga);
    if (!bound)
        return NULL;
    PyObject *res = PyObject_CallOneArg(bound, name);
    Py_DECREF(bound);
    return res;
}

/* decided on the characters, as the class namespace check is */
static bool
is_refused(PyObject *name)
{
    return PyUnicode_Check(name) && !exec_class_dunder_allowed(name);
}

/* The slot of a class made while a snippet ran. */
static PyObject *
checked_getattr_hook(PyObject *self, PyObject *name)
{
    if (is_refused(name))
        return lookup_without_getattr(self, name);
    return real_getattr_hook(self, name);
}

/* The lookup the walk makes for the snippet's own read (obj.name, getattr(), hasattr(), a class
 * pattern's attribute), while it is made: borrowed, and cleared once a library's dispatcher
 * took it, so that what its __getattr__ looks up in turn is checked. */
static PyObject *own_read_obj, *own_read_name;

PyObject *
exec_class_getattr_own_read(PyObject *obj, PyObject *name)
{
    PyObject *outer_obj = own_read_obj, *outer_name = own_read_name;
    own_read_obj = obj;
    own_read_name = name;
    PyObject *v = PyObject_GetAttr(obj, name);
    own_read_obj = outer_obj;
    own_read_name = outer_name;
    return v;
}

/* The slot of every other class, checking while a snippet runs (outside imports). The snippet's
 * own read is not checked: the walk let it pass by name (a dunder the snippet may read:
 * typing.Union.__name__ is answered by _SpecialForm.__getattr__), and the answer goes to the
 * snippet, which could read it anyway. The allow-list is consulted for dunder-shaped names
 * only, the run's state (a walk of the frames) for refused ones only: ordinary lookups pay a
 * few character reads. */
static PyObject *
library_getattr_hook(PyObject *self, PyObject *name)
{
    bool own = self == own_read_obj && name == own_read_name;
    own_read_obj = own_read_name = NULL;
    if (!own && is_refused(name) && exec_audit_stores_checked())
        return lookup_without_getattr(self, name);
    return real_getattr_hook(self, name);
}

void
exec_class_getattr_guard(PyTypeObject *t)
{
    if (real_getattr_hook && t->tp_getattro == real_getattr_hook)
        t->tp_getattro = checked_getattr_hook;
}

void
exec_class_getattr_guard_library(PyTypeObject *t)
{
    if (real_getattr_hook && t->tp_getattro == real_getattr_hook)
        t->tp_getattro = library_getattr_hook;
}

int
exec_class_getattr_guard_tree(PyTypeObject *t)
{
    return exec_type_tree_apply(t, exec_class_getattr_guard);
}

int
exec_class_getattr_guard_library_tree(PyTypeObject *t)
{
    return exec_type_tree_apply(t, exec_class_getattr_guard_library);
}

bool
exec_class_getattr_store_resets(PyObject *name)
{
    static const char *const names[] = {"__getattr__", "__getattribute__", "__bases__"};
    for (size_t i = 0; PyUnicode_Check(name) && i < sizeof(names) / sizeof(names[0]); i++)
        if (PyUnicode_CompareWithASCIIString(name, names[i]) == 0)
            return true;
    return false;
}

int
exec_class_getattr_install(void)
{
    if (real_getattr_hook)
        return 0;
    str_getattribute = PyUnicode_InternFromString("__getattribute__");
    /* any value under __getattr__ makes CPython install its dispatcher */
    PyObject *probe = str_getattribute
                              ? PyObject_CallFunction((PyObject *) &PyType_Type, "s(){s:O}",
                                                      "getattr_probe", "__getattr__", Py_None)
                              : NULL;
    if (!probe)
        return -1;
    real_getattr_hook = ((PyTypeObject *) probe)->tp_getattro;
    Py_DECREF(probe);
    /* fail closed on a CPython whose dispatcher is not a slot of its own */
    if (real_getattr_hook == PyObject_GenericGetAttr || !real_getattr_hook) {
        real_getattr_hook = NULL;
        PyErr_SetString(PyExc_RuntimeError,
                        "a class with __getattr__ has no dispatcher slot to install its check");
        return -1;
    }
    /* the classes CPython's start-up made; later ones get it from type.__new__ */
    return exec_class_getattr_guard_library_tree(&PyBaseObject_Type);
}
