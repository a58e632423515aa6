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
 * dunder an object's own state may not (guard_copy.c). Function's attribute-setting slot is
 * replaced as well: library code sets no such dunder on a function (its __kwdefaults__,
 * __defaults__,
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

/* f runs an object's __setattr__ or __delattr__: a store it makes is passed on from whoever
 * set the attribute on that object, not its module's own doing. typing's aliases pass stores on
 * to their __origin__, and an alias of the typing module itself (made in C, where the walk's
 * check of it does not stand), as self of a snippet dataclass's __init__, set typing.callable
 * from typing's own code (policy case 353). */
static bool
frame_passes_store_on(PyFrameObject *f)
{
    PyCodeObject *co = PyFrame_GetCode(f);
    bool on = PyUnicode_CompareWithASCIIString(co->co_name, "__setattr__") == 0 ||
              PyUnicode_CompareWithASCIIString(co->co_name, "__delattr__") == 0;
    Py_DECREF(co);
    return on;
}

static int
checked_module_setattro(PyObject *m, PyObject *name, PyObject *value)
{
    if (!exec_audit_stores_checked())
        return real_module_setattro(m, name, value);
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    PyObject *writer = f ? exec_frame_module(f) : NULL;
    if (writer && !exec_audit_snippet_run() && frame_in(f, m) && !frame_has_arg(f, m) &&
        !frame_passes_store_on(f))
        return real_module_setattro(m, name, value);
    const char *target = PyModule_Check(m) ? PyModule_GetName(m) : NULL;
    if (!target)
        PyErr_Clear();
    refuse_store(writer, "module", target ? target : "?", name);
    return -1;
}

/* A module's namespace, read through its __dict__ attribute, is every store into it at once:
 * library code writing into the dict it got makes no attribute store. collections'
 * UserDict.__copy__ ran inst.__dict__.update(...) on what a snippet class's __new__ answered
 * (json: json.dumps replaced for every caller), and pprint's namespace printer, filed by the
 * snippet under a module's repr, read any module's. So while a snippet runs a module's
 * __dict__ is answered only to the module's own code and to the two libraries that read
 * another module's namespace to evaluate a class's annotations in it (typing's
 * get_type_hints, dataclasses' generated methods); anyone else gets InterpreterError.
 * Imports, and C code (PyModule_GetDict), are not affected. */
static bool
reads_annotation_namespaces(const char *reader)
{
    static const char *const readers[] = {"typing", "dataclasses"};
    for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++)
        if (strcmp(reader, readers[i]) == 0)
            return true;
    return false;
}

static PyObject *
checked_module_dict(PyObject *m, void *closure)
{
    (void) closure;
    PyObject *ns = PyModule_GetDict(m); /* borrowed */
    if (!ns || !exec_audit_stores_checked())
        return Py_XNewRef(ns);
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    PyObject *reader = f && !exec_audit_snippet_run() ? exec_frame_module(f) : NULL;
    const char *r = reader ? PyUnicode_AsUTF8(reader) : NULL;
    PyErr_Clear();
    if (r && (frame_in(f, m) || reads_annotation_namespaces(r)))
        return Py_NewRef(ns);
    const char *target = PyModule_GetName(m);
    PyErr_Clear();
    return PyErr_Format(exec_InterpreterError,
                        "Forbidden while a snippet runs: %s reading the namespace of module %s "
                        "through its __dict__ (answered only to the module's own code, typing's "
                        "and dataclasses')",
                        r ? r : "code of no module", target ? target : "?");
}

static PyGetSetDef module_dict_getset = {"__dict__", checked_module_dict, NULL,
                                         "the module's namespace", NULL};

static int
guard_module_dict(void)
{
    PyObject *d = PyDict_GetItemString(PyModule_Type.tp_dict, "__dict__"); /* borrowed */
    if (!d || !Py_IS_TYPE(d, &PyMemberDescr_Type)) {
        PyErr_SetString(PyExc_RuntimeError, "module.__dict__ is not the member expected");
        return -1;
    }
    PyObject *checked = PyDescr_NewGetSet(&PyModule_Type, &module_dict_getset);
    int rc = checked ? PyDict_SetItemString(PyModule_Type.tp_dict, "__dict__", checked) : -1;
    Py_XDECREF(checked);
    PyType_Modified(&PyModule_Type);
    return rc;
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
    PyObject *writer = f ? exec_frame_module(f) : NULL;
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
    return !exec_globals_module(PyFunction_GET_GLOBALS(fn));
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
    PyObject *writer = f ? exec_frame_module(f) : NULL;
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
        patch_slot(&PyType_Type, real_type_setattro, checked_type_setattro) < 0 ||
        guard_module_dict() < 0)
        return -1;
    /* a class types.new_class makes for its caller is its caller's to change (new_class.c) */
    return exec_guard_copy_install() < 0 || exec_guard_typing_install() < 0 ||
                           exec_guard_pprint_install() < 0 || guard_functions() < 0
                   ? -1
                   : exec_new_class_install();
}
