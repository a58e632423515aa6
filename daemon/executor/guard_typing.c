/* typing's special forms (Union, Optional, Literal, ClassVar: typing._SpecialForm's instances)
 * are made at typing's import and shared by every user of typing, and typing's code trusts
 * what they hold: Union._getitem answers every Union[...]. The walk refuses the snippet's own
 * stores on them (policy.c), but library code stores on objects the snippet hands it, and
 * typing's aliases pass a store on to their origin, which is Union for Optional[int]: a snippet
 * dataclass's __init__ called with that alias as self replaced Union._getitem (policy case
 * 352). So while a snippet runs (outside imports) no code sets or deletes a special form's
 * attributes: the slot is the class's own C function, so object.__setattr__ (a frozen
 * dataclass's __init__ calls it) refuses to jump over it, as it does for modules and classes.
 * Installed from exec_guard_store_install, once, before any run. */
#include "exec_internal.h"

static int
checked_special_form_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    if (!exec_audit_stores_checked())
        return PyObject_GenericSetAttr(self, name, value);
    PyObject *shown = PyObject_Repr(self); /* typing.Union */
    if (!shown)
        PyErr_Clear();
    PyErr_Format(exec_InterpreterError,
                 "Forbidden while a snippet runs: %s attribute %R of typing's special form %s "
                 "(typing's own code trusts what its special forms hold)",
                 value ? "setting" : "deleting", name,
                 shown && PyUnicode_Check(shown) ? PyUnicode_AsUTF8(shown)
                                                 : Py_TYPE(self)->tp_name);
    Py_XDECREF(shown);
    return -1;
}

/* t and its subclasses take the checking slot; each must have had object's own. */
static int
patch_tree(PyTypeObject *t)
{
    if (t->tp_setattro != PyObject_GenericSetAttr &&
        t->tp_setattro != checked_special_form_setattro) {
        PyErr_Format(PyExc_RuntimeError,
                     "typing's special form class %s sets attributes in its own way: not the "
                     "typing module the executor was built for",
                     t->tp_name);
        return -1;
    }
    t->tp_setattro = checked_special_form_setattro;
    PyObject *subclasses = PyObject_CallMethod((PyObject *) t, "__subclasses__", NULL);
    if (!subclasses)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(subclasses); i++)
        rc = patch_tree((PyTypeObject *) PyList_GET_ITEM(subclasses, i));
    Py_DECREF(subclasses);
    return rc;
}

int
exec_guard_typing_install(void)
{
    PyObject *typing = exec_import_own("typing");
    PyObject *special_form = typing ? PyObject_GetAttrString(typing, "_SpecialForm") : NULL;
    Py_XDECREF(typing);
    if (!special_form)
        return -1;
    int rc = -1;
    if (!PyType_Check(special_form))
        PyErr_SetString(PyExc_RuntimeError, "typing._SpecialForm is not a class");
    else
        rc = patch_tree((PyTypeObject *) special_form);
    Py_DECREF(special_form);
    return rc;
}
