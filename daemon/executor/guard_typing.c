/* typing's special forms (Union, Optional, Literal, ClassVar: typing._SpecialForm's instances)
 * are made at typing's import and shared by every user of typing, and typing's code trusts
 * what they hold: Union._getitem answers every Union[...]. The walk refuses the snippet's own
 * stores on them (policy.c), but library code stores on objects the snippet hands it, and
 * typing's aliases pass a store on to their origin, which is Union for Optional[int]: a snippet
 * dataclass's __init__ called with that alias as self replaced Union._getitem (policy case
 * 352). So while a snippet runs (outside imports) no code sets or deletes a special form's
 * attributes: the slot is the class's own C function, so object.__setattr__ (a frozen
 * dataclass's __init__ calls it) refuses to jump over it, as it does for modules and classes.
 *
 * typing's aliases (List[int], cached and shared) set their own state in their __setattr__
 * (dunders and a few private names) and pass any other name on to their __origin__. While a
 * snippet runs, the executor's version of that __setattr__ lets only typing's own code (making
 * an alias) set an alias's own state, and passes a store on only to a class, whose stores
 * guard_store.c judges: a snippet dataclass's __init__ run with the cached alias as self
 * rewrote its _name, and one with an alias of a ForwardRef set that ForwardRef's _evaluate,
 * which get_type_hints calls with module namespaces (case 359).
 *
 * Special form subclasses made after install (typing_extensions') get the slot when a run
 * starts (exec_guard_typing_refresh). Installed from exec_guard_store_install, once, before
 * any run. */
#include "exec_internal.h"

static int
checked_special_form_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    if (!exec_audit_stores_checked())
        return PyObject_GenericSetAttr(self, name, value);
    PyObject *shown = PyObject_Repr(self); /* typing.Union */
    const char *s = shown && PyUnicode_Check(shown) ? PyUnicode_AsUTF8(shown) : NULL;
    if (!s) {
        PyErr_Clear();
        s = Py_TYPE(self)->tp_name;
    }
    PyErr_Format(exec_InterpreterError,
                 "Forbidden while a snippet runs: %s attribute %R of typing's special form %s "
                 "(typing's own code trusts what its special forms hold)",
                 value ? "setting" : "deleting", name, s);
    Py_XDECREF(shown);
    return -1;
}

/* t and its subclasses take the checking slot; each must have had object's own (or ours). */
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

static PyObject *real_alias_setattr; /* typing._BaseGenericAlias.__setattr__ */
static PyObject *alias_own_names;    /* the names it keeps on the alias: from its code */
static PyTypeObject *special_form_type;

static bool
is_dunder(PyObject *name)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(name);
    return n > 4 && PyUnicode_READ_CHAR(name, 0) == '_' && PyUnicode_READ_CHAR(name, 1) == '_' &&
           PyUnicode_READ_CHAR(name, n - 1) == '_' && PyUnicode_READ_CHAR(name, n - 2) == '_';
}

/* The store of name on alias self is allowed now; -1 with InterpreterError set if not. */
static int
check_alias_store(PyObject *self, PyObject *name)
{
    int own = is_dunder(name) ? 1 : PySet_Contains(alias_own_names, name);
    if (own < 0)
        return -1;
    if (own) {
        PyObject *writer = exec_frame_module(PyEval_GetFrame());
        if (writer && PyUnicode_CompareWithASCIIString(writer, "typing") == 0)
            return 0;
        PyErr_Format(exec_InterpreterError,
                     "Forbidden while a snippet runs: %s setting attribute %R of a typing alias "
                     "(only typing's own code sets an alias's own state: aliases are cached and "
                     "shared)",
                     writer ? PyUnicode_AsUTF8(writer) : "code of no module", name);
        return -1;
    }
    PyObject *origin = exec_typing_origin(self);
    bool to_class = origin && PyType_Check(origin);
    Py_XDECREF(origin);
    if (to_class)
        return 0;
    PyErr_Format(exec_InterpreterError,
                 "Forbidden while a snippet runs: a typing alias passing the store of attribute "
                 "%R on to an origin that is no class",
                 name);
    return -1;
}

static PyObject *
checked_alias_setattr(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyUnicode_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "__setattr__ expects a name (str) and a value");
        return NULL;
    }
    if (exec_audit_stores_checked() && check_alias_store(self, args[0]) < 0)
        return NULL;
    PyObject *call[3] = {self, args[0], args[1]};
    return PyObject_Vectorcall(real_alias_setattr, call, 3, NULL);
}

static PyMethodDef checked_alias_setattr_def = {
        "__setattr__", (PyCFunction) (void (*)(void)) checked_alias_setattr, METH_FASTCALL,
        "typing's alias __setattr__, with the executor's checks while a snippet runs"};

/* The frozenset of names the real __setattr__ keeps on the alias, found among its code's
 * constants (typing writes it as a set literal). */
static PyObject *
own_names_of(PyObject *setattr)
{
    PyObject *code = PyFunction_Check(setattr) ? PyFunction_GET_CODE(setattr) : NULL;
    PyObject *consts = code ? ((PyCodeObject *) code)->co_consts : NULL;
    for (Py_ssize_t i = 0; consts && i < PyTuple_GET_SIZE(consts); i++)
        if (PyFrozenSet_CheckExact(PyTuple_GET_ITEM(consts, i)))
            return Py_NewRef(PyTuple_GET_ITEM(consts, i));
    PyErr_SetString(PyExc_RuntimeError,
                    "typing._BaseGenericAlias.__setattr__ is not the function expected");
    return NULL;
}

static int
guard_aliases(PyObject *typing)
{
    PyObject *alias = PyObject_GetAttrString(typing, "_BaseGenericAlias");
    PyObject *real =
            alias && PyType_Check(alias)
                    ? PyDict_GetItemString(((PyTypeObject *) alias)->tp_dict, "__setattr__")
                    : NULL;
    int rc = -1;
    if (real && (alias_own_names = own_names_of(real)) != NULL) {
        real_alias_setattr = Py_NewRef(real);
        PyObject *descr = PyDescr_NewMethod((PyTypeObject *) alias, &checked_alias_setattr_def);
        rc = descr ? PyObject_SetAttrString(alias, "__setattr__", descr) : -1;
        Py_XDECREF(descr);
    } else if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_RuntimeError, "typing._BaseGenericAlias has no __setattr__");
    }
    Py_XDECREF(alias);
    return rc;
}

int
exec_guard_typing_refresh(void)
{
    return special_form_type ? patch_tree(special_form_type) : 0;
}

int
exec_guard_typing_install(void)
{
    if (special_form_type)
        return 0;
    PyObject *typing = exec_import_own("typing");
    PyObject *special_form = typing ? PyObject_GetAttrString(typing, "_SpecialForm") : NULL;
    int rc = -1;
    if (special_form && !PyType_Check(special_form))
        PyErr_SetString(PyExc_RuntimeError, "typing._SpecialForm is not a class");
    else if (special_form && patch_tree((PyTypeObject *) special_form) == 0 &&
             guard_aliases(typing) == 0) {
        special_form_type = (PyTypeObject *) Py_NewRef(special_form);
        rc = 0;
    }
    Py_XDECREF(special_form);
    Py_XDECREF(typing);
    return rc;
}
