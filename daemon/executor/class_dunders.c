/* The dunders a snippet's class may define.
 *
 * A class's dunders are hooks CPython and libraries call where the walk does not look:
 * __del__ whenever an object is freed (inside any Py_DECREF of the executor's own C code,
 * in the middle of a library's work), __reduce_ex__ from copy, which then calls what it
 * answers and writes its state, __getattribute__ on every lookup libraries make,
 * __subclasshook__ answering isinstance() for a library's ABCs, __array_interface__ naming
 * memory numpy reads and writes. So a snippet's class may define only an allow-list: the
 * protocol methods ordinary code uses, each called by CPython at points where any Python
 * class's method may run and entered under the run's budgets (function.c). Whatever names
 * the snippet binds into a class namespace is checked: the class body's bindings (whatever
 * __prepare__ made the namespace), and the namespace of type(name, bases, ns), of a metaclass
 * called so and of type.__new__. Library code building a class for the snippet (dataclasses
 * adding __dataclass_fields__, enum, namedtuple) is not the snippet and is not checked here.
 * The same list bounds what a snippet class's __getattr__ is asked (class_getattr.c) and the
 * keywords a call may pass (eval_call.c: SimpleNamespace(**d) stores them as attributes),
 * what the instances of classes made during a run answer from their own state
 * (class_getattr.c), what copy's state and library stores on functions may write
 * (guard_store.c), and the names of a class's __slots__ (check_slots below). */
#include <string.h>

#include "exec_internal.h"

/* Each is called by CPython only where any class's method may run: on an operation the
 * snippet's code (or code it hands the object to) makes on the object or class itself.
 * Doubtful ones, kept:
 *   __new__, __init_subclass__, __set_name__: run while a class or object is made, which
 *     CPython allows any class; while dataclasses builds a class no snippet code may run at
 *     all (audit.c refuses the callback).
 *   __class_getitem__: C[x] on the snippet's class only.
 *   __getattr__: asked only for names normal lookup misses, on the snippet's objects, and
 *     never for a dunder outside this list: library code looks those up on the snippet's
 *     objects (copy's __deepcopy__, __setstate__) and calls what it finds, so the classes made
 *     here get a __getattr__ dispatcher that skips it for them (class_getattr.c).
 *   __setattr__, __delattr__: every store on the snippet's instances, library code's too; the
 *     values are those any callback receives, and the real store is unreachable anyway
 *     (object.__setattr__ and super().__setattr__ are dunder reads, refused).
 *   __get__, __set__, __delete__: descriptors, on lookups through the snippet's classes.
 *   __index__, __int__, __float__, __complex__: CPython's C code that converts calls them in
 *     the middle of its work, and is written to survive any Python code there; the executor
 *     converts no snippet object itself.
 *   __format__, __bytes__, __round__, __trunc__, __floor__, __ceil__: conversions as above.
 *   __hash__: hash() and dict/set lookups; __hash__ = None makes a class unhashable.
 *   __orig_bases__, __classcell__: the class statement sets them (PEP 560, super()).
 * Refused, among others: __del__ (runs at any Py_DECREF, after the run, at teardown),
 * __reduce__, __reduce_ex__, __getstate__, __setstate__, __getnewargs__, __getnewargs_ex__,
 * __copy__, __deepcopy__ (copy and pickle call what they answer and write their state),
 * __getattribute__ (answers libraries' lookups of any name, dunders included),
 * __instancecheck__, __subclasscheck__, __subclasshook__ (change isinstance() answers for
 * library classes too), __prepare__, __mro_entries__ (class creation outside the walk's
 * sight), __class__, __dict__, __weakref__ (what library code reads as an object's class and
 * state), __dataclass_fields__, __dataclass_params__, __abstractmethods__ (library state the
 * library trusts), __fspath__, __array__, __array_interface__, __length_hint__, __dir__,
 * __sizeof__, the async protocol (refused anyway). */
static const char *const class_dunders[] = {
        /* what the class statement itself binds, and class-level declarations */
        "__module__",
        "__qualname__",
        "__doc__",
        "__classcell__",
        "__orig_bases__",
        "__annotations__",
        "__slots__",
        "__match_args__",
        /* making objects */
        "__new__",
        "__init__",
        "__post_init__",
        "__init_subclass__",
        "__class_getitem__",
        "__set_name__",
        /* text, comparison, truth */
        "__repr__",
        "__str__",
        "__format__",
        "__bytes__",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__hash__",
        "__bool__",
        /* containers and iteration */
        "__len__",
        "__iter__",
        "__next__",
        "__reversed__",
        "__contains__",
        "__getitem__",
        "__setitem__",
        "__delitem__",
        "__missing__",
        /* attributes and descriptors */
        "__getattr__",
        "__setattr__",
        "__delattr__",
        "__get__",
        "__set__",
        "__delete__",
        /* calling, context managers */
        "__call__",
        "__enter__",
        "__exit__",
        /* unary operators and conversions */
        "__neg__",
        "__pos__",
        "__abs__",
        "__invert__",
        "__round__",
        "__trunc__",
        "__floor__",
        "__ceil__",
        "__int__",
        "__float__",
        "__complex__",
        "__index__",
        /* binary operators, reflected and in place */
        "__add__",
        "__radd__",
        "__iadd__",
        "__sub__",
        "__rsub__",
        "__isub__",
        "__mul__",
        "__rmul__",
        "__imul__",
        "__matmul__",
        "__rmatmul__",
        "__imatmul__",
        "__truediv__",
        "__rtruediv__",
        "__itruediv__",
        "__floordiv__",
        "__rfloordiv__",
        "__ifloordiv__",
        "__mod__",
        "__rmod__",
        "__imod__",
        "__divmod__",
        "__rdivmod__",
        "__pow__",
        "__rpow__",
        "__ipow__",
        "__lshift__",
        "__rlshift__",
        "__ilshift__",
        "__rshift__",
        "__rrshift__",
        "__irshift__",
        "__and__",
        "__rand__",
        "__iand__",
        "__xor__",
        "__rxor__",
        "__ixor__",
        "__or__",
        "__ror__",
        "__ior__",
};

static bool
is_dunder_shaped(PyObject *name)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(name);
    return len >= 4 && PyUnicode_READ_CHAR(name, 0) == '_' && PyUnicode_READ_CHAR(name, 1) == '_' &&
           PyUnicode_READ_CHAR(name, len - 1) == '_' && PyUnicode_READ_CHAR(name, len - 2) == '_';
}

/* The same list as a frozenset, for plain str: library classes' lookups ask it on every
 * dunder-shaped name they miss (numpy's __array_struct__ on each conversion, class_getattr.c). */
static PyObject *class_dunder_set;

static int
make_class_dunder_set(void)
{
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < sizeof(class_dunders) / sizeof(class_dunders[0]); i++) {
        PyObject *s = PyUnicode_InternFromString(class_dunders[i]);
        if (!s || PyList_Append(list, s) < 0)
            Py_CLEAR(list);
        Py_XDECREF(s);
    }
    class_dunder_set = list ? PyFrozenSet_New(list) : NULL;
    Py_XDECREF(list);
    return class_dunder_set ? 0 : -1;
}

bool
exec_class_dunder_allowed(PyObject *name)
{
    if (!is_dunder_shaped(name))
        return true;
    /* a plain str's hash and == are its characters'; a subclass's may lie */
    int in = class_dunder_set && PyUnicode_CheckExact(name) ? PySet_Contains(class_dunder_set, name)
                                                            : -1;
    if (in >= 0)
        return in;
    PyErr_Clear();
    /* decided on the characters: a name the snippet built may hold a lone surrogate */
    for (size_t i = 0; i < sizeof(class_dunders) / sizeof(class_dunders[0]); i++)
        if (PyUnicode_CompareWithASCIIString(name, class_dunders[i]) == 0)
            return true;
    return false;
}

bool
exec_class_dunder_instance_allowed(PyObject *name)
{
    return exec_class_dunder_allowed(name) || exec_is_allowed_dunder_str(name);
}

/* The class's name for a message: its str, or "?" for what is none (type() then fails). */
static PyObject *
display_name(PyObject *clsname)
{
    return clsname && PyUnicode_Check(clsname) ? clsname : NULL;
}

static int
refuse_key(struct exec_run *r, PyObject *key, PyObject *clsname)
{
    PyObject *shown = display_name(clsname);
    if (!PyUnicode_CheckExact(key)) {
        /* a str subclass can make its hash and == match a hook's name in CPython's lookup */
        exec_fail(r, ABORT_NONE,
                  "Forbidden class namespace for class %V: its keys must be plain str, not %s",
                  shown, "?", Py_TYPE(key)->tp_name);
        return -1;
    }
    exec_fail(r, ABORT_NONE,
              "Forbidden definition of dunder %U in class %V: a snippet's class may define only "
              "the protocol methods of the executor's allow-list",
              key, shown, "?");
    return -1;
}

int
exec_check_class_namespace(struct exec_run *r, PyObject *ns, PyObject *clsname)
{
    if (!PyDict_Check(ns)) {
        /* only a library metaclass's __prepare__ makes one (a snippet class may not define
         * __prepare__): what it holds is read through its own methods, not checked here */
        PyObject *shown = display_name(clsname);
        exec_fail(r, ABORT_NONE,
                  "Forbidden class namespace for class %V: a %s, not a dict (the executor checks "
                  "the names a class body binds in a dict only)",
                  shown, "?", Py_TYPE(ns)->tp_name);
        return -1;
    }
    /* the dict's own storage, as type.__new__ copies it (a dict subclass's methods may lie) */
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(ns, &pos, &key, &value))
        if (!PyUnicode_CheckExact(key) || !exec_class_dunder_allowed(key))
            return refuse_key(r, key, clsname);
    return 0;
}

/* Library code makes classes from namespaces the snippet filled, where the walk does not see
 * them: types.new_class calls the snippet's exec_body, enum's functional API files a
 * dunder-named "member" as a plain class attribute, C code the snippet called
 * (map(type, ...)) calls type(). So type.__new__ itself is replaced, once, before any library
 * is imported: while a snippet runs (outside imports), a namespace handed to it by the
 * snippet's frame is checked as a class body's, and one handed to it by library code may hold
 * a refused dunder only as the library's own: a function of the package whose code calls
 * type.__new__ (namedtuple's __getnewargs__, collections'), or anything when the library is
 * dataclasses (its slots=True rebuild copies the class dict it made itself: __dataclass_fields__,
 * __dataclass_params__). */
static newfunc real_type_new;

/* The module whose code f runs (its globals are that module's own dict), or NULL. */
static const char *
frame_module(PyFrameObject *f)
{
    PyObject *name = exec_frame_module(f);
    const char *s = name ? PyUnicode_AsUTF8(name) : NULL;
    PyErr_Clear();
    return s;
}

/* Module names a and b are of one top-level package. */
static bool
same_package(const char *a, const char *b)
{
    size_t la = strcspn(a, "."), lb = strcspn(b, ".");
    return la == lb && strncmp(a, b, la) == 0;
}

/* A Python function of the library (top-level package) `writer` whose code calls type.__new__:
 * its globals are the own dict of a module of that package. Any library's function was
 * accepted, but the snippet chooses the namespace make_dataclass (through types' new_class)
 * hands on: {'__subclasshook__': pandas.api.types.is_hashable} on a Mapping subclass made
 * every object a Mapping. A library's own refused dunders are its own functions (namedtuple's
 * __getnewargs__, collections'). */
static bool
is_writers_function(PyObject *v, const char *writer)
{
    if (!writer || !PyFunction_Check(v))
        return false;
    const char *s = exec_function_module(v);
    return s && strcmp(s, "__main__") != 0 && same_package(s, writer);
}

static int
check_library_namespace(PyObject *ns, PyObject *clsname)
{
    const char *writer = frame_module(PyEval_GetFrame());
    if (writer && strcmp(writer, "dataclasses") == 0)
        return 0;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(ns, &pos, &key, &value))
        if (!PyUnicode_CheckExact(key) ||
            (!exec_class_dunder_allowed(key) && !is_writers_function(value, writer)))
            return refuse_key(NULL, key, clsname);
    return 0;
}

/* __slots__ = ('__deepcopy__',) makes a member descriptor under a refused name: a data
 * descriptor of the class, which the lookup answers (class_getattr.c asks the class alone for
 * such a name) and library code fills (copy's slotstate, setattr). Checked on the class made,
 * whose own dict holds the members under their final (mangled) names, whatever iterable
 * __slots__ was. */
static int
check_slots(struct exec_run *r, PyTypeObject *t, PyObject *clsname)
{
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(t->tp_dict, &pos, &key, &value))
        if (Py_IS_TYPE(value, &PyMemberDescr_Type) && PyUnicode_Check(key) &&
            !exec_class_dunder_instance_allowed(key)) {
            exec_fail(r, ABORT_NONE,
                      "Forbidden slot %U in class %V: a snippet's class may name its __slots__ "
                      "with the dunders its methods may have only",
                      key, display_name(clsname), "?");
            return -1;
        }
    return 0;
}

bool
exec_type_tree_any(PyTypeObject *t, bool (*pred)(PyTypeObject *))
{
    if (pred(t))
        return true;
    PyObject *f = PyDict_GetItemString(PyType_Type.tp_dict, "__subclasses__"); /* borrowed */
    PyObject *subs = f ? PyObject_CallOneArg(f, (PyObject *) t) : NULL;
    if (!subs || !PyList_Check(subs)) {
        Py_XDECREF(subs);
        PyErr_Clear();
        return true; /* unknown: as if it held, for the callers refuse then */
    }
    bool any = false;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(subs) && !any; i++)
        any = exec_type_tree_any((PyTypeObject *) PyList_GET_ITEM(subs, i), pred);
    Py_DECREF(subs);
    return any;
}

/* A metaclass answering == and hash() for its classes makes a snippet class equal to another
 * in every table keyed by class: ABCMeta's caches (a weakref set: a weakref hashes and
 * compares as its class does) took a class answering hash(str) and True as str, and
 * isinstance('s', Mapping) was True for every library in the run; class_maker.c met the same
 * in its own table. A metaclass compares and hashes its classes as type does. */
static bool
is_metaclass(PyTypeObject *t)
{
    return PyType_IsSubtype(t, &PyType_Type);
}

static bool
compares_classes_as_type(PyTypeObject *t)
{
    return !is_metaclass(t) ||
           (t->tp_hash == PyType_Type.tp_hash && t->tp_richcompare == PyType_Type.tp_richcompare);
}

static int
check_metaclass_identity(struct exec_run *r, PyTypeObject *t)
{
    if (compares_classes_as_type(t))
        return 0;
    exec_fail(r, ABORT_NONE,
              "Forbidden: metaclass %s defines __eq__, __ne__ or __hash__ (its classes would "
              "compare and hash as other classes in every table keyed by class)",
              t->tp_name);
    return -1;
}

int
exec_check_class_identity_store(struct exec_run *r, PyTypeObject *t, PyObject *name)
{
    static const char *const names[] = {"__eq__", "__ne__", "__hash__"};
    bool compare = false;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !compare; i++)
        compare = PyUnicode_CompareWithASCIIString(name, names[i]) == 0;
    if (!compare || !exec_type_tree_any(t, is_metaclass))
        return 0;
    exec_fail(r, ABORT_NONE,
              "Forbidden: setting %U of class %s, a metaclass or a base of one (its classes "
              "would compare and hash as other classes in every table keyed by class)",
              name, t->tp_name);
    return -1;
}

/* What type.__new__ does to a class it made while a snippet runs: the checking lookup
 * (class_getattr.c), its maker recorded (class_maker.c), its slots checked. Consumes cls;
 * returns it, or NULL with an exception set. */
static PyObject *
finish_class(struct exec_run *r, PyObject *cls, PyObject *name)
{
    if (!cls || !PyType_Check(cls))
        return cls;
    exec_class_getattr_guard((PyTypeObject *) cls);
    PyObject *new_value = PyDict_GetItemString(((PyTypeObject *) cls)->tp_dict, "__new__");
    if ((new_value && exec_check_new_value(r, (PyTypeObject *) cls, new_value) < 0) ||
        check_metaclass_identity(r, (PyTypeObject *) cls) < 0 ||
        check_slots(r, (PyTypeObject *) cls, name) < 0 ||
        exec_class_maker_note((PyTypeObject *) cls) < 0)
        Py_CLEAR(cls);
    return cls;
}

static PyObject *
checked_type_new(PyTypeObject *metatype, PyObject *args, PyObject *kwds)
{
    if (exec_audit_stores_checked() && PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 3 &&
        PyDict_Check(PyTuple_GET_ITEM(args, 2))) {
        PyObject *name = PyTuple_GET_ITEM(args, 0), *ns = PyTuple_GET_ITEM(args, 2);
        struct exec_run *r = exec_audit_snippet_run();
        if (exec_check_class_bases(r, PyTuple_GET_ITEM(args, 1), name) < 0 ||
            (r ? exec_check_class_namespace(r, ns, name) : check_library_namespace(ns, name)) < 0)
            return NULL;
        return finish_class(r, real_type_new(metatype, args, kwds), name);
    }
    /* import, start-up, the daemon's own code: checked while a snippet runs (class_getattr.c) */
    PyObject *cls = real_type_new(metatype, args, kwds);
    if (cls && PyType_Check(cls))
        exec_class_getattr_guard_library((PyTypeObject *) cls);
    return cls;
}

int
exec_type_tree_apply(PyTypeObject *t, void (*fn)(PyTypeObject *))
{
    fn(t);
    /* type's own method: a snippet metaclass's lookup is not asked */
    PyObject *f = PyDict_GetItemString(PyType_Type.tp_dict, "__subclasses__"); /* borrowed */
    if (!f) {
        PyErr_SetString(PyExc_RuntimeError, "type has no __subclasses__ to walk classes by");
        return -1;
    }
    PyObject *subs = PyObject_CallOneArg(f, (PyObject *) t);
    if (!subs)
        return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(subs); i++)
        if (exec_type_tree_apply((PyTypeObject *) PyList_GET_ITEM(subs, i), fn) < 0) {
            Py_DECREF(subs);
            return -1;
        }
    Py_DECREF(subs);
    return 0;
}

/* t, if it inherited type.__new__ before now (abc.ABCMeta is made while CPython starts); the
 * others call type.__new__, which calls type's slot. */
static void
patch_type_new(PyTypeObject *t)
{
    if (t->tp_new == real_type_new)
        t->tp_new = checked_type_new;
}

int
exec_class_dunders_install(void)
{
    if (real_type_new)
        return 0;
    real_type_new = PyType_Type.tp_new;
    if (make_class_dunder_set() < 0 || exec_class_maker_install() < 0 ||
        exec_type_tree_apply(&PyType_Type, patch_type_new) < 0)
        return -1;
    return exec_class_getattr_install();
}
