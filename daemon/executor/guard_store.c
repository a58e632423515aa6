/* Library code storing into objects the snippet chose. The walk checks every attribute the
 * snippet itself sets (policy.c, exec_check_attr_owner), but library Python code the snippet
 * calls sets attributes too, on whatever object it was handed: copy rebuilding an object
 * (y.__dict__.update(state), setattr(y, k, v)), a dataclass's generated __init__ called with a
 * module or a library class as self, typing's aliases forwarding setattr to their origin.
 * Such writes change what the library's own code later reads and trusts.
 *
 * So the stores themselves are checked, whoever makes them: the attribute-setting slots of
 * module and type (and the __setattr__/__delattr__ descriptors that call them) are replaced
 * once, before any import of a library, and while a snippet runs (outside imports) they allow
 *   - on a module: only that module's own code (the current frame's globals are its dict),
 *     and not with the module handed to it as an argument (queue.Queue.__init__(queue, 5));
 *   - on a class: the snippet's own classes, and a library's class only from code of the
 *     package that made the class while a snippet ran (class_maker.c) and that the class still
 *     names: namedtuple setting its new class's __module__, dataclasses decorating
 *     make_dataclass's. Never a class a library made at import, whatever code stores: the store's
 *     maker being the class's own package says nothing about who chose target, name and value.
 *     typing's aliases forward setattr to their origin from typing's code
 *     (typing.IO[str].x = 1 sets typing.IO.x), typing.final(typing.IO) sets __final__ on its
 *     argument, numpy's set_module('__main__')(numpy.poly1d) rewrote the module a numpy class
 *     is judged by, pandas' register_dataframe_accessor(name)(K) puts K's objects under any
 *     name of DataFrame (copy's __reduce_ex__ among them). A store the class's own package
 *     needs at run time is on a class it is making for the snippet; one it made at import is
 *     what the rest of its code trusts.
 *   and on any class, a dunder the snippet's class may not define only as the stdlib's own
 *   bookkeeping (library_dunder_stores below): by (package, name), and where the name alone
 *   would allow too much, by the value too (enum's __reduce_ex__ only as enum.Enum's own:
 *   enum's same line of code copies whatever its first enum's __reduce_ex__ is).
 * copy's state written through y.__dict__ is no attribute store: copy._reconstruct is
 * replaced by a version that refuses a module as the object it rebuilds and a state holding a
 * dunder an object's own state may not (below). Function's attribute-setting slot is replaced
 * as well: library code sets no such dunder on a function (its __kwdefaults__, __defaults__,
 * __code__ and __dict__ are its behaviour), but for the stdlib's own stores on functions it
 * has just made. */
#include "exec_internal.h"

static setattrofunc real_module_setattro, real_type_setattro;

static PyObject *
refuse_store(PyObject *writer, const char *kind, const char *target, PyObject *name)
{
    if (writer)
        return PyErr_Format(exec_InterpreterError,
                            "Forbidden while a snippet runs: %U's code setting attribute %R of "
                            "%s %s (a module's and a library class's attributes are changed only "
                            "by their own code)",
                            writer, name, kind, target);
    return PyErr_Format(exec_InterpreterError,
                        "Forbidden while a snippet runs: setting attribute %R of %s %s from code "
                        "of no module (a module's and a library class's attributes are changed "
                        "only by their own code)",
                        name, kind, target);
}

/* The module whose code f runs (its globals are that module's dict): its name, borrowed from
 * the globals, or NULL. Decided by identity, as the audit hook does: exec'd code may carry any
 * __name__ (dataclasses' generated methods carry their class's module's). */
static PyObject *
frame_module_name(PyFrameObject *f)
{
    PyObject *globals = PyFrame_GetGlobals(f);
    PyObject *name = PyDict_GetItemString(globals, "__name__"); /* borrowed */
    PyObject *mod = name && PyUnicode_Check(name) ? PyImport_GetModule(name) : NULL;
    bool own = mod && PyModule_Check(mod) && PyModule_GetDict(mod) == globals;
    Py_XDECREF(mod);
    Py_DECREF(globals);
    PyErr_Clear();
    return own ? name : NULL;
}

/* The value of f's argument i (positional or keyword-only), borrowed from f's locals, or
 * NULL. */
static PyObject *
frame_arg(PyObject *locals, PyCodeObject *co, int i)
{
    PyObject *names = PyCode_GetVarnames(co);
    PyObject *v = names && i < PyTuple_GET_SIZE(names)
                          ? PyDict_GetItemWithError(locals, PyTuple_GET_ITEM(names, i))
                          : NULL;
    Py_XDECREF(names);
    PyErr_Clear();
    return v;
}

/* obj is one of the arguments f's code was called with. */
static bool
frame_has_arg(PyFrameObject *f, PyObject *obj)
{
    PyCodeObject *co = PyFrame_GetCode(f);
    PyObject *locals = PyFrame_GetLocals(f);
    bool found = false;
    if (!locals) {
        PyErr_Clear();
        Py_DECREF(co);
        return true; /* unknown: fail closed */
    }
    int n = co->co_argcount + co->co_kwonlyargcount;
    for (int i = 0; i < n && !found; i++)
        found = frame_arg(locals, co, i) == obj;
    Py_DECREF(locals);
    Py_DECREF(co);
    return found;
}

/* f runs code of module m itself (its globals are m's dict). */
static bool
frame_in(PyFrameObject *f, PyObject *m)
{
    PyObject *globals = PyFrame_GetGlobals(f);
    bool in = PyModule_Check(m) && PyModule_GetDict(m) == globals;
    Py_DECREF(globals);
    return in;
}

static int
checked_module_setattro(PyObject *m, PyObject *name, PyObject *value)
{
    if (!exec_audit_stores_checked())
        return real_module_setattro(m, name, value);
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    PyObject *writer = f ? frame_module_name(f) : NULL;
    if (writer && !exec_audit_snippet_run() && frame_in(f, m) && !frame_has_arg(f, m))
        return real_module_setattro(m, name, value);
    const char *target = PyModule_Check(m) ? PyModule_GetName(m) : NULL;
    if (!target)
        PyErr_Clear();
    refuse_store(writer, "module", target ? target : "?", name);
    return -1;
}

/* The top-level package of a module name, written into buf. */
static void
top_package(const char *module, char *buf, size_t size)
{
    size_t len = strcspn(module, ".");
    if (len >= size)
        len = size - 1;
    memcpy(buf, module, len);
    buf[len] = '\0';
}

/* Library code of module w may change class t, which names module `module`: a library made t
 * while a snippet ran, and w is of that library's top-level package, and so is the module t
 * names (a namedtuple made with module='json' is json's, which collections' code no longer
 * finishes). */
static bool
made_by_writer(PyTypeObject *t, const char *module, const char *w)
{
    const char *maker = exec_class_maker(t);
    char writers[256], makers[256], own[256];
    if (!maker)
        return false;
    top_package(w, writers, sizeof(writers));
    top_package(maker, makers, sizeof(makers));
    top_package(module, own, sizeof(own));
    return strcmp(writers, makers) == 0 && strcmp(writers, own) == 0;
}

/* enum's EnumType.__new__ saves the class body's __new__ as __new_member__ (its subclasses
 * make their members with it): value is the __new__ in t's own dict, or the function a
 * staticmethod there holds. A snippet's class may define __new__, so this is a name for what
 * it already has; another value (a snippet base's __init_subclass__ rebinding cls.__new__
 * first) is refused, as everything unforeseen is. */
static bool
is_own_new(PyTypeObject *t, PyObject *value, PyObject *ns)
{
    (void) ns;
    PyObject *own = t->tp_dict ? PyDict_GetItemString(t->tp_dict, "__new__") : NULL; /* borrowed */
    if (!own)
        return false;
    if (own == value)
        return true;
    if (!Py_IS_TYPE(own, &PyStaticMethod_Type))
        return false;
    PyObject *fn = PyStaticMethod_Type.tp_descr_get(own, NULL, (PyObject *) t);
    bool same = fn == value;
    Py_XDECREF(fn);
    PyErr_Clear();
    return same;
}

/* EnumType.__new__ puts first_enum's __reduce_ex__ over a mixed-in data type's own
 * (datetime.time's): value is enum.Enum's own, by identity, found in the storing module's
 * dict (enum's: its code is the writer, and no code but enum's changes that dict). Any other
 * function of enum's can be first_enum's: the functional API files Enum('B',
 * [('__reduce_ex__', enum.global_str)])'s as a plain attribute. */
static bool
is_enum_reduce_ex(PyTypeObject *t, PyObject *value, PyObject *ns)
{
    (void) t;
    PyObject *e = PyDict_GetItemString(ns, "Enum"); /* borrowed */
    PyTypeObject *enum_type = e && PyType_Check(e) ? (PyTypeObject *) e : NULL;
    PyObject *own = enum_type && enum_type->tp_dict
                            ? PyDict_GetItemString(enum_type->tp_dict, "__reduce_ex__")
                            : NULL;
    return own && own == value;
}

/* The dunders a snippet's class may not define (class_dunders.c) that a library stores on a
 * class it makes or finishes during a run, with the top-level package whose code stores them
 * and, where the name alone would allow too much, what the value must be (value_ok, given
 * the class, the value and the storing code's module dict; NULL: any value that package's
 * code stores). Found by logging every such store over the cases and policy suites, and by
 * reading the stdlib's stores on classes (the executor README lists those left refused). Any
 * other library store of a refused dunder on any class, the snippet's own included, is
 * refused: pandas' delegate_names(accessors=['__dataframe__'])(X) put a delegator calling the
 * snippet's _delegate_method under X.__dataframe__, a hook from_dataframe then called. */
static const struct {
    const char *package, *name;
    bool (*value_ok)(PyTypeObject *t, PyObject *value, PyObject *ns);
} library_dunder_stores[] = {
        {"abc", "__abstractmethods__", NULL}, /* ABCMeta.__new__ (_abc_init) */
        {"copyreg", "__slotnames__", NULL},   /* _slotnames' cache, for copy and pickle */
        {"dataclasses", "__dataclass_fields__", NULL},
        {"dataclasses", "__dataclass_params__", NULL},
        {"dataclasses", "__getstate__", NULL}, /* frozen slots: its own functions */
        {"dataclasses", "__setstate__", NULL},
        {"enum", "__new_member__", is_own_new},
        {"enum", "__reduce_ex__", is_enum_reduce_ex},
        /* update_wrapper(C, f, updated=()): both are names the snippet's own store may set on
         * its class (policy.c), and functools makes no class to store on */
        {"functools", "__name__", NULL},
        {"functools", "__wrapped__", NULL},
        {"typing", "__bases__", NULL},        /* a generic NamedTuple's */
        {"typing", "__final__", NULL},        /* typing.final */
        {"typing", "__parameters__", NULL},   /* Generic.__init_subclass__ */
        {"typing", "__subclasshook__", NULL}, /* Protocol.__init_subclass__: _proto_hook */
        {"typing", "__total__", NULL},        /* TypedDict's three */
        {"typing", "__required_keys__", NULL},
        {"typing", "__optional_keys__", NULL},
        /* markers for static checkers: no_type_check's True (get_type_hints then answers {}),
         * dataclass_transform's dict of its arguments, which nothing reads at run time */
        {"typing", "__no_type_check__", NULL},
        {"typing", "__dataclass_transform__", NULL},
};

/* The table's entry i allows value (NULL: a deletion) from code whose module dict f holds. */
static bool
store_value_allowed(size_t i, PyFrameObject *f, PyTypeObject *t, PyObject *value)
{
    if (!library_dunder_stores[i].value_ok)
        return true;
    if (!value)
        return false;
    PyObject *ns = PyFrame_GetGlobals(f);
    bool ok = library_dunder_stores[i].value_ok(t, value, ns);
    Py_DECREF(ns);
    return ok;
}

/* Code of module w (NULL: of no module), running in frame f, may store `name` = value on
 * class t, as far as the name and the value go. */
static bool
library_may_store(PyFrameObject *f, const char *w, PyTypeObject *t, PyObject *name, PyObject *value)
{
    char package[256];
    if (!PyUnicode_Check(name) || exec_class_dunder_allowed(name))
        /* type's own store refuses a name that is no str */
        return true;
    if (!w || !f || !PyUnicode_CheckExact(name))
        return false;
    top_package(w, package, sizeof(package));
    for (size_t i = 0; i < sizeof(library_dunder_stores) / sizeof(library_dunder_stores[0]); i++)
        if (strcmp(package, library_dunder_stores[i].package) == 0 &&
            PyUnicode_CompareWithASCIIString(name, library_dunder_stores[i].name) == 0)
            return store_value_allowed(i, f, t, value);
    return false;
}

static int
refuse_dunder_store(const char *w, PyTypeObject *t, PyObject *name)
{
    PyErr_Format(exec_InterpreterError,
                 "Forbidden while a snippet runs: %s%s setting dunder %R of class %s (a library "
                 "stores on a class only the dunders a snippet's class may define, and a few of "
                 "its own bookkeeping ones)",
                 w ? w : "code of no module", w ? "'s code" : "", name, t->tp_name);
    return -1;
}

/* The store, then, if it is one after which CPython resets the __getattr__ dispatcher of the
 * class and its subclasses, the check put back by guard_tree (class_getattr.c). */
static int
store_and_guard(PyObject *obj, PyObject *name, PyObject *value, int (*guard_tree)(PyTypeObject *))
{
    int rc = real_type_setattro(obj, name, value);
    if (rc < 0 || !PyType_Check(obj) || !exec_class_getattr_store_resets(name))
        return rc;
    return guard_tree((PyTypeObject *) obj);
}

static int
checked_type_setattro(PyObject *obj, PyObject *name, PyObject *value)
{
    PyTypeObject *t = (PyTypeObject *) obj;
    if (!exec_audit_stores_checked() || !PyType_Check(obj))
        return store_and_guard(obj, name, value, exec_class_getattr_guard_library_tree);
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    PyObject *writer = f ? frame_module_name(f) : NULL;
    const char *w = writer ? PyUnicode_AsUTF8(writer) : NULL;
    PyErr_Clear();
    /* the snippet's own stores are checked by the walk (policy.c) */
    bool name_ok = exec_audit_snippet_run() || library_may_store(f, w, t, name, value);
    if (exec_class_is_snippets(t)) {
        if (!name_ok)
            return refuse_dunder_store(w, t, name);
        if (value && PyUnicode_Check(name) &&
            PyUnicode_CompareWithASCIIString(name, "__new__") == 0 &&
            exec_check_new_value(exec_audit_running(), t, value) < 0)
            return -1;
        if (PyUnicode_Check(name) &&
            exec_check_class_identity_store(exec_audit_running(), t, name) < 0)
            return -1;
        /* CPython resets the __getattr__ dispatcher of t and its subclasses on some stores */
        int rc = real_type_setattro(obj, name, value);
        return rc < 0 ? rc : exec_class_getattr_guard_tree(t);
    }
    char module[256];
    if (!exec_class_module(t, module, sizeof(module)))
        snprintf(module, sizeof(module), "?");
    if (w && !exec_audit_snippet_run() && made_by_writer(t, module, w))
        return name_ok ? store_and_guard(obj, name, value, exec_class_getattr_guard_tree)
                       : refuse_dunder_store(w, t, name);
    PyErr_Clear();
    char target[512];
    snprintf(target, sizeof(target), "%s.%s", module,
             strrchr(t->tp_name, '.') ? strrchr(t->tp_name, '.') + 1 : t->tp_name);
    refuse_store(writer, "class", target, name);
    return -1;
}

/* Replaces `real` by `checked` in t and every subclass that inherited it (metaclasses made
 * before now: abc.ABCMeta is made while CPython starts). */
static int
patch_slot(PyTypeObject *t, setattrofunc real, setattrofunc checked)
{
    if (t->tp_setattro == real)
        t->tp_setattro = checked;
    PyObject *subs = PyObject_CallMethod((PyObject *) t, "__subclasses__", NULL);
    if (!subs && PyErr_ExceptionMatches(PyExc_TypeError)) {
        /* type.__subclasses__ read from type is unbound */
        PyErr_Clear();
        PyObject *d = PyDict_GetItemString(PyType_Type.tp_dict, "__subclasses__");
        subs = d ? PyObject_CallOneArg(d, (PyObject *) t) : NULL;
    }
    if (!subs)
        return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(subs); i++)
        if (patch_slot((PyTypeObject *) PyList_GET_ITEM(subs, i), real, checked) < 0) {
            Py_DECREF(subs);
            return -1;
        }
    Py_DECREF(subs);
    return 0;
}

/* type.__setattr__(C, n, v) and ModuleType.__delattr__ call the slot function they were made
 * with, not the type's slot: they must call the checking one (and CPython's check that the
 * function is the object's own then passes, while object.__setattr__(module, ...) fails it). */
static int
patch_descriptors(PyTypeObject *t, setattrofunc real, setattrofunc checked)
{
    static const char *const names[] = {"__setattr__", "__delattr__"};
    for (size_t i = 0; i < 2; i++) {
        PyObject *d = PyDict_GetItemString(t->tp_dict, names[i]);
        if (!d || !Py_IS_TYPE(d, &PyWrapperDescr_Type) ||
            ((PyWrapperDescrObject *) d)->d_wrapped != (void *) real) {
            PyErr_Format(PyExc_RuntimeError, "%s.%s is not the slot wrapper expected", t->tp_name,
                         names[i]);
            return -1;
        }
        ((PyWrapperDescrObject *) d)->d_wrapped = (void *) checked;
    }
    return 0;
}

/* Library code's stores on functions. A function's dunders are its behaviour
 * (__kwdefaults__, __defaults__, __code__, __dict__), and the snippet's own stores of them are
 * refused by name (the walk), but library code sets attributes by names and on objects it was
 * handed: copy's slotstate loop ran setattr(json.dumps, '__kwdefaults__', ...), and json.dumps
 * indented by 7 for every later caller; dataclasses.dataclass(f) stores __dataclass_params__
 * on any f. So function's attribute-setting slot is replaced too (CPython's own check then
 * refuses object.__setattr__ on a function, as on a module): while a snippet runs, library
 * code stores on a function only what an object's own state may hold
 * (exec_class_dunder_instance_allowed: __name__, __doc__, __wrapped__, __annotations__...),
 * and the stdlib's own stores on functions it has just made, by (package, name, value): the
 * snippet's functions are the executor's own type, never these. */
static setattrofunc real_function_setattro;

/* fn was made from text (namedtuple's __new__, by eval): its globals are no module's own
 * dict. A module's functions (json.dumps, a class's methods) are what the module's code
 * trusts. */
static bool
is_made_from_text(PyObject *fn, PyObject *value)
{
    (void) value;
    PyObject *globals = PyFunction_GET_GLOBALS(fn);
    PyObject *name = PyDict_GetItemString(globals, "__name__"); /* borrowed */
    PyObject *mod = name && PyUnicode_Check(name) ? PyImport_GetModule(name) : NULL;
    bool own = mod && PyModule_Check(mod) && PyModule_GetDict(mod) == globals;
    Py_XDECREF(mod);
    PyErr_Clear();
    return !own;
}

static const struct {
    const char *package, *name;
    bool (*value_ok)(PyObject *fn, PyObject *value);
} library_function_stores[] = {
        /* namedtuple(..., defaults=...): __new__.__defaults__ on the __new__ it just made */
        {"collections", "__defaults__", is_made_from_text},
        /* partialmethod's and singledispatchmethod's __get__: on the _method just made */
        {"functools", "__isabstractmethod__", NULL},
};

static bool
library_may_store_on_function(PyObject *writer, PyObject *fn, PyObject *name, PyObject *value)
{
    const char *w = writer ? PyUnicode_AsUTF8(writer) : NULL;
    char package[256];
    if (!w || !PyUnicode_CheckExact(name)) {
        PyErr_Clear();
        return false;
    }
    top_package(w, package, sizeof(package));
    for (size_t i = 0; i < sizeof(library_function_stores) / sizeof(library_function_stores[0]);
         i++)
        if (strcmp(package, library_function_stores[i].package) == 0 &&
            PyUnicode_CompareWithASCIIString(name, library_function_stores[i].name) == 0)
            return value && (!library_function_stores[i].value_ok ||
                             library_function_stores[i].value_ok(fn, value));
    return false;
}

static int
checked_function_setattro(PyObject *fn, PyObject *name, PyObject *value)
{
    /* the snippet's own stores are checked by the walk (policy.c) */
    if (!exec_audit_stores_checked() || exec_audit_snippet_run() || !PyUnicode_Check(name) ||
        exec_class_dunder_instance_allowed(name))
        return real_function_setattro(fn, name, value);
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    PyObject *writer = f ? frame_module_name(f) : NULL;
    if (PyFunction_Check(fn) && library_may_store_on_function(writer, fn, name, value))
        return real_function_setattro(fn, name, value);
    PyObject *qualname = PyFunction_Check(fn) ? ((PyFunctionObject *) fn)->func_qualname : NULL;
    PyErr_Format(exec_InterpreterError,
                 "Forbidden while a snippet runs: %s%s %s dunder %R of function %S (library "
                 "code sets on a function only what the snippet's own store could)",
                 writer ? PyUnicode_AsUTF8(writer) : "code of no module", writer ? "'s code" : "",
                 value ? "setting" : "deleting", name, qualname ? qualname : Py_None);
    return -1;
}

static int
guard_functions(void)
{
    if (PyFunction_Type.tp_setattro != PyObject_GenericSetAttr ||
        PyDict_GetItemString(PyFunction_Type.tp_dict, "__setattr__")) {
        PyErr_SetString(PyExc_RuntimeError,
                        "function's attribute store is not CPython's generic one, expected");
        return -1;
    }
    real_function_setattro = PyFunction_Type.tp_setattro;
    PyFunction_Type.tp_setattro = checked_function_setattro;
    return 0;
}

/* copy._reconstruct(x, memo, func, args, state, listiter, dictiter) rebuilds y = func(*args),
 * then, unless y has a __setstate__, writes state into y.__dict__ and sets slotstate attribute
 * by attribute (state may be a pair (state, slotstate)), deep-copying state first when memo is
 * given. func and state are the reducer's choice (a snippet's copy.dispatch_table entry), so:
 *   - y is checked before copy touches it: no module (its namespace would be written), and
 *     a value the snippet may hold, as copy hands it back, in containers the walk does not
 *     look into: typing's alias reducer is (operator.getitem, (globals()[alias._name], args)),
 *     and an alias whose _name was '__builtins__' was rebuilt as the real __import__;
 *   - the state copy writes is checked once it is the one copy writes (the shallow copy's as
 *     y is made, the deep copy's as _reconstruct's deepcopy returns it, through the deepcopy
 *     keyword copy never passes): every key that is a str is a plain str and no dunder an
 *     object's own state may not hold (class_dunders.c). setattr(json.dumps, '__kwdefaults__',
 *     ...) from the slotstate loop changed json.dumps for everyone, y.__dict__ ['__deepcopy__']
 *     made a library object's lookup answer the snippet's hook; a str subclass key can fake
 *     its hash and == in either. Unless y has its own __setstate__ (which takes any state),
 *     each part must be a plain dict: a subclass's keys() may answer keys its storage, which
 *     is what is checked, does not hold;
 *   - copy writes state, or appends listiter's and dictiter's items, only into an object func
 *     has just made (the call's reference is its only one): a func returning an object that
 *     exists already (calendar.c, which calendar.month() formats with) had copy write the
 *     reducer's state into the shared object's dict, call its __setstate__, or add items to a
 *     library's list or dict.
 * The call's context is a list [func, state, y, deep, items]: copy may keep the factory (a
 * traceback's locals) after the call. */
enum { CTX_FUNC, CTX_STATE, CTX_Y, CTX_DEEP, CTX_ITEMS, CTX_N };

static PyObject *real_reconstruct, *real_deepcopy;

static int
refuse_state(PyObject *y, PyObject *key, const char *why)
{
    PyErr_Format(exec_InterpreterError, "Forbidden: copy writing state key %R into a %s object: %s",
                 key, Py_TYPE(y)->tp_name, why);
    return -1;
}

static int
refuse_state_type(PyObject *y, PyObject *part, const char *why)
{
    PyErr_Format(exec_InterpreterError,
                 "Forbidden: copy writing a %s as the state of a %s object: %s",
                 Py_TYPE(part)->tp_name, Py_TYPE(y)->tp_name, why);
    return -1;
}

/* One part of the state (state or slotstate); own_setstate: y has a __setstate__ to take it. */
static int
check_state_part(PyObject *y, PyObject *part, bool own_setstate)
{
    if (part == Py_None)
        return 0;
    if (!PyDict_Check(part)) {
        return own_setstate ? 0 : refuse_state_type(y, part, "it writes state from a dict only");
    }
    if (!PyDict_CheckExact(part) && !own_setstate)
        return refuse_state_type(y, part, "a dict subclass may answer other keys than it holds");
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(part, &pos, &key, &value)) {
        if (!PyUnicode_Check(key))
            continue; /* no attribute name: never answers a lookup */
        if (!PyUnicode_CheckExact(key))
            return refuse_state(y, key, "a str subclass can fake its hash and ==");
        if (!exec_class_dunder_instance_allowed(key))
            return refuse_state(y, key,
                                "an object's own state may hold only the dunders a snippet's "
                                "class may define and the walk lets a snippet set");
    }
    return 0;
}

/* copy's split of a state: a pair is (state, slotstate), anything else the state alone. */
static void
state_parts(PyObject *state, PyObject *parts[2])
{
    bool pair = PyTuple_Check(state) && PyTuple_GET_SIZE(state) == 2;
    parts[0] = pair ? PyTuple_GET_ITEM(state, 0) : state;
    parts[1] = pair ? PyTuple_GET_ITEM(state, 1) : Py_None;
}

static int
check_state(PyObject *y, PyObject *state)
{
    if (state == Py_None || y == Py_None)
        return 0;
    bool own_setstate = PyObject_HasAttrString(y, "__setstate__");
    PyObject *parts[2];
    state_parts(state, parts);
    return check_state_part(y, parts[0], own_setstate) < 0 ||
                           check_state_part(y, parts[1], own_setstate) < 0
                   ? -1
                   : 0;
}

/* Whether copy will write into y: items to add, or a state it will pass to y's __setstate__
 * or write into y's dict (a part that is None or empty writes nothing). */
static bool
copy_writes_into(PyObject *y, PyObject *ctx)
{
    PyObject *state = PyList_GET_ITEM(ctx, CTX_STATE);
    if (PyList_GET_ITEM(ctx, CTX_ITEMS) == Py_True)
        return true;
    if (state == Py_None)
        return false;
    if (PyObject_HasAttrString(y, "__setstate__"))
        return true;
    PyObject *parts[2];
    state_parts(state, parts);
    for (size_t i = 0; i < 2; i++)
        if (parts[i] != Py_None && !(PyDict_Check(parts[i]) && PyDict_GET_SIZE(parts[i]) == 0))
            return true;
    return false;
}

/* Every C method's reducer is (getattr, (obj, name)), and a deep copy copies those arguments
 * through the memo, which the snippet may fill (a dict subclass's get, or the memo its
 * __deepcopy__ is handed): answering json.dumps for the method's object and '__globals__' for
 * its name had copy's frame read a library function's globals with the real getattr. So the
 * real getattr as a reducer's function reads as the snippet's getattr does, name and value
 * checked; the other real builtins the snippet lacks no reducer of CPython's names. */
static PyObject *
call_factory(PyObject *func, PyObject *args, PyObject *kwargs)
{
    const char *real = exec_guard_builtins_name(func);
    struct exec_run *r = exec_audit_running();
    if (!real || !r)
        return PyObject_Call(func, args, kwargs);
    if (strcmp(real, "getattr") != 0 || (kwargs && PyDict_GET_SIZE(kwargs) > 0) ||
        PyTuple_GET_SIZE(args) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(args, 1)))
        return PyErr_Format(exec_InterpreterError,
                            "Forbidden: copy calling the real builtin %s as a reducer's function "
                            "(copy rebuilds only a method, with getattr(obj, name))",
                            real);
    PyObject *obj = PyTuple_GET_ITEM(args, 0);
    return exec_check_value(r, obj) < 0 ? NULL : exec_getattr(r, obj, PyTuple_GET_ITEM(args, 1));
}

static PyObject *
checked_factory(PyObject *ctx, PyObject *args, PyObject *kwargs)
{
    PyObject *y = call_factory(PyList_GET_ITEM(ctx, CTX_FUNC), args, kwargs);
    /* made by the call, or held elsewhere too: read before anything else takes a reference */
    bool existed = y && Py_REFCNT(y) > 1;
    struct exec_run *r = exec_audit_running();
    if (y && r && exec_check_value(r, y) < 0)
        Py_CLEAR(y);
    if (y && PyModule_Check(y)) {
        const char *m = PyModule_GetName(y);
        PyErr_Clear();
        PyErr_Format(exec_InterpreterError,
                     "Forbidden: copy cannot rebuild an object as a module (%s): it would write "
                     "the copied state into the module's namespace",
                     m ? m : "?");
        Py_CLEAR(y);
    }
    if (!y)
        return NULL;
    PyList_SetItem(ctx, CTX_Y, Py_NewRef(y)); /* an index in range: cannot fail */
    if (PyList_GET_ITEM(ctx, CTX_DEEP) == Py_False &&
        check_state(y, PyList_GET_ITEM(ctx, CTX_STATE)) < 0) {
        Py_CLEAR(y);
    } else if (existed && copy_writes_into(y, ctx)) {
        PyErr_Format(exec_InterpreterError,
                     "Forbidden: copy writing state or items into a %s object it did not make "
                     "(the reducer's function returned an object that exists already)",
                     Py_TYPE(y)->tp_name);
        Py_CLEAR(y);
    }
    return y;
}

static PyMethodDef checked_factory_def = {"copy_factory",
                                          (PyCFunction) (void (*)(void)) checked_factory,
                                          METH_VARARGS | METH_KEYWORDS, NULL};

/* _reconstruct's deepcopy: the deep copy of the reducer's state is checked as the state. */
static PyObject *
checked_deepcopy(PyObject *ctx, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *res = PyObject_Vectorcall(real_deepcopy, args, (size_t) nargs, kwnames);
    if (res && nargs >= 1 && args[0] == PyList_GET_ITEM(ctx, CTX_STATE) &&
        check_state(PyList_GET_ITEM(ctx, CTX_Y), res) < 0)
        Py_CLEAR(res);
    return res;
}

static PyMethodDef checked_deepcopy_def = {"copy_deepcopy",
                                           (PyCFunction) (void (*)(void)) checked_deepcopy,
                                           METH_FASTCALL | METH_KEYWORDS, NULL};

static PyObject *
call_reconstruct(PyObject *ctx, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *factory = PyCFunction_New(&checked_factory_def, ctx);
    PyObject *deepcopy = PyCFunction_New(&checked_deepcopy_def, ctx);
    PyObject *kwnames = Py_BuildValue("(s)", "deepcopy");
    PyObject **argv = PyMem_Malloc((size_t) (nargs + 1) * sizeof(PyObject *));
    PyObject *y = NULL;
    if (argv && factory && deepcopy && kwnames) {
        memcpy(argv, args, (size_t) nargs * sizeof(PyObject *));
        argv[2] = factory;
        argv[nargs] = deepcopy;
        y = PyObject_Vectorcall(real_reconstruct, argv, (size_t) nargs, kwnames);
    } else if (!argv) {
        PyErr_NoMemory();
    }
    PyMem_Free(argv);
    Py_XDECREF(kwnames);
    Py_XDECREF(deepcopy);
    Py_XDECREF(factory);
    return y;
}

static PyObject *
checked_reconstruct(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void) self;
    /* copy passes func positionally, and no keyword: anything else is not copy's call */
    if (nargs < 3 || (kwnames && PyTuple_GET_SIZE(kwnames) > 0))
        return PyErr_Format(PyExc_TypeError,
                            "copy._reconstruct: x, memo and func must be positional, and no "
                            "keyword is taken");
    /* a deep copy puts copies of the reducer's arguments in the memo, which the snippet
     * holds: they are values it may hold (typing's alias reducer handed over typing's
     * builtins dict, the real eval in a plain dict's copy) */
    struct exec_run *r = exec_audit_running();
    if (r && nargs > 3 && PyTuple_Check(args[3]))
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[3]); i++)
            if (exec_check_value(r, PyTuple_GET_ITEM(args[3], i)) < 0)
                return NULL;
    bool items = (nargs > 5 && args[5] != Py_None) || (nargs > 6 && args[6] != Py_None);
    PyObject *ctx =
            Py_BuildValue("[OOOOO]", args[2], nargs > 4 ? args[4] : Py_None, Py_None,
                          args[1] == Py_None ? Py_False : Py_True, items ? Py_True : Py_False);
    PyObject *y = ctx ? call_reconstruct(ctx, args, nargs) : NULL;
    Py_XDECREF(ctx);
    return y;
}

static PyMethodDef checked_reconstruct_def = {
        "_reconstruct", (PyCFunction) (void (*)(void)) checked_reconstruct,
        METH_FASTCALL | METH_KEYWORDS,
        "copy._reconstruct, refusing to rebuild into a module or to write a refused dunder"};

static int
guard_copy(void)
{
    PyObject *copy = exec_import_own("copy");
    if (!copy)
        return -1;
    PyObject *ns = PyModule_GetDict(copy); /* borrowed */
    real_reconstruct = PyDict_GetItemString(ns, "_reconstruct");
    real_deepcopy = PyDict_GetItemString(ns, "deepcopy");
    PyObject *checked = PyCFunction_New(&checked_reconstruct_def, NULL);
    int rc = -1;
    if (!real_reconstruct || !PyFunction_Check(real_reconstruct) || !real_deepcopy)
        PyErr_SetString(PyExc_RuntimeError,
                        "copy._reconstruct or copy.deepcopy is not the function expected");
    else if (checked) {
        Py_INCREF(real_reconstruct);
        Py_INCREF(real_deepcopy);
        rc = PyDict_SetItemString(ns, "_reconstruct", checked);
    }
    Py_XDECREF(checked);
    Py_DECREF(copy);
    return rc;
}

int
exec_guard_store_install(void)
{
    if (real_type_setattro)
        return 0;
    real_module_setattro = PyModule_Type.tp_setattro;
    real_type_setattro = PyType_Type.tp_setattro;
    if (patch_descriptors(&PyModule_Type, real_module_setattro, checked_module_setattro) < 0 ||
        patch_descriptors(&PyType_Type, real_type_setattro, checked_type_setattro) < 0 ||
        patch_slot(&PyModule_Type, real_module_setattro, checked_module_setattro) < 0 ||
        patch_slot(&PyType_Type, real_type_setattro, checked_type_setattro) < 0)
        return -1;
    /* a class types.new_class makes for its caller is its caller's to change (new_class.c) */
    return guard_copy() < 0 || guard_functions() < 0 ? -1 : exec_new_class_install();
}
