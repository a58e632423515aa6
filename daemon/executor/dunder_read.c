/* Dunders the snippet may read but never set or delete, and the one among them whose value
 * decides (__init_subclass__). The name allow-list (policy.c) holds dunders that are harmless
 * on every route, stores included; these are harmless to read only:
 *   - __class__: what type(x) answers (x's class; a proxy's or a mock's __class__ property
 *     answers another class, and the snippet's classes may not define one). Every route that
 *     hands the snippet a value checks it (exec_getattr_result, the operator getters, match),
 *     as type(x)'s answer is (guard_type.c): a class of a module the profile does not allow is
 *     refused when held. Setting it changes what every library reads as the object's class.
 *   - __bases__, __mro__: tuples of the classes cls.mro() already answers, each checked when
 *     the walk takes it out. Setting __bases__ rewires a class under its subclasses.
 *   - __members__: enum's read-only mapping of the members (the same objects iterating the
 *     class gives). No CPython protocol reads the name; a library class that defines it hands
 *     out what any attribute of it would, and the value is checked alike.
 *   - __init_subclass__: a class's hook for a new subclass, bound to the class it is read
 *     from. Read so that super().__init_subclass__(**kw) works, only when calling it is what
 *     making a class does anyway: object's (it only refuses keywords), or any class's bound to
 *     one of the snippet's classes. A library's own, bound to its own class, would run its
 *     registration again on a class that is not new (typing.Protocol's sets attributes of
 *     the class it is given): refused.
 * str.format's fields read them too, inside CPython: only formatted, never handed out. */
#include "exec_internal.h"

static const char *const read_only_dunders[] = {
        "__class__", "__bases__", "__mro__", "__members__", "__init_subclass__",
};

bool
exec_is_read_only_dunder(PyObject *name)
{
    for (size_t i = 0; i < sizeof(read_only_dunders) / sizeof(read_only_dunders[0]); i++)
        if (PyUnicode_CompareWithASCIIString(name, read_only_dunders[i]) == 0)
            return true;
    return false;
}

int
exec_check_attr_store_name(struct exec_run *r, PyObject *name)
{
    if (exec_check_attr_name(r, name) < 0)
        return -1;
    if (!exec_is_read_only_dunder(name))
        return 0;
    exec_fail(r, ABORT_NONE,
              "Forbidden assignment or deletion of dunder attribute: %U (it may be read, not "
              "changed)",
              name);
    return -1;
}

/* object.__init_subclass__'s method definition, found once. */
static PyMethodDef *
object_init_subclass(void)
{
    static PyMethodDef *ml;
    if (!ml) {
        PyObject *d = PyDict_GetItemString(PyBaseObject_Type.tp_dict, "__init_subclass__");
        if (d && Py_IS_TYPE(d, &PyClassMethodDescr_Type))
            ml = ((PyMethodDescrObject *) d)->d_method;
    }
    return ml;
}

/* v was read as __init_subclass__: object's, or bound to a class of the snippet's. */
static int
check_init_subclass(struct exec_run *r, PyObject *v)
{
    PyObject *self = NULL;
    if (PyCFunction_Check(v)) {
        PyMethodDef *object_ml = object_init_subclass();
        if (object_ml && ((PyCFunctionObject *) v)->m_ml == object_ml)
            return 0;
        self = PyCFunction_GET_SELF(v);
    } else if (PyMethod_Check(v)) {
        self = PyMethod_GET_SELF(v);
    }
    if (self && PyType_Check(self) && exec_class_is_snippets((PyTypeObject *) self))
        return 0;
    exec_fail(r, ABORT_NONE,
              "Forbidden access to dunder attribute: __init_subclass__ of a class the snippet "
              "did not make (only object's, or one bound to the snippet's own class, as "
              "super().__init_subclass__() in a snippet class's __init_subclass__ reads it)");
    return -1;
}

int
exec_check_read_only_dunder_value(struct exec_run *r, PyObject *name, PyObject *v)
{
    if (PyUnicode_GET_LENGTH(name) < 4 || PyUnicode_READ_CHAR(name, 0) != '_' ||
        PyUnicode_CompareWithASCIIString(name, "__init_subclass__") != 0)
        return 0;
    return check_init_subclass(r, v);
}
