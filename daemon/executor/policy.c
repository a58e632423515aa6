/* The policy checks the walk makes: imports against the allow-list, modules reached through
 * attributes, dunder attributes, frame/code/traceback objects, and the budgets. */
#include <stdarg.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "exec_internal.h"

PyObject *exec_InterpreterError;
PyObject *exec_FinalAnswerException;

/* A str subclass can make its hash and == match another name ("__class__") in CPython's
 * attribute lookup: the checks and the lookup must both see a plain str. */
PyObject *
exec_exact_str(PyObject *name)
{
    return PyUnicode_CheckExact(name) ? Py_NewRef(name) : PyUnicode_FromObject(name);
}
int
exec_policy_init_types(void)
{
    if (exec_InterpreterError)
        return 0;
    /* Like smolagents' InterpreterError; an Exception so that `except Exception` behaves as
     * there, but refusals that must stick set r->abort so they cannot be swallowed. */
    exec_InterpreterError = PyErr_NewExceptionWithDoc("pyfence.InterpreterError",
                                                      "Refused by the pyfence executor's policy.",
                                                      PyExc_Exception, NULL);
    /* smolagents' FinalAnswerException: a BaseException, so `except Exception` lets it pass
     * while finally blocks and with exits run as the walk unwinds. */
    exec_FinalAnswerException = PyErr_NewExceptionWithDoc(
            "pyfence.FinalAnswerException", "Raised by final_answer(); .value is the answer.",
            PyExc_BaseException, NULL);
    if (!exec_InterpreterError || !exec_FinalAnswerException ||
        exec_guard_str_format_install() < 0 || exec_guard_type_install() < 0 ||
        exec_guard_builtins_install() < 0 || exec_guard_function_install() < 0 ||
        exec_guard_store_install() < 0 || exec_class_dunders_install() < 0)
        return -1;
    return exec_audit_install();
}

uint64_t
exec_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

char *
exec_stack_limit_here(void)
{
    char *here = __builtin_frame_address(0);
    static size_t size; /* read once: the limit does not change under a running worker */
    if (!size) {
        struct rlimit rl;
        size = 8u << 20;
        if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < size)
            size = rl.rlim_cur;
    }
    /* what callers above us already use is unknown: keep a generous reserve for them and for
     * CPython's own C recursion below us */
    size_t reserve = 1u << 20;
    if (size < 2 * reserve)
        reserve = size / 2;
    return here - (size - reserve);
}

/* Library modules whose code copies its caller's frame's namespace and hands it out: pandas'
 * Scope (ensure_scope, Scope, its subclass PyTablesScope) puts sys._getframe(level).f_globals
 * into the ChainMap it answers as .scope and .resolve()s any name in it. Called from the
 * snippet's frame that was the run's frame (main_frame.c: nothing more than the snippet has);
 * called from a snippet function that library code called back, one level past the snippet's
 * trampoline frame is that library's, whose globals hold the real builtins, which C code (map,
 * operator.itemgetter) took out where no value check looks. pandas' own callers (eval,
 * query) compile their expression, which the audit hook refuses anyway, so snippets lose
 * nothing. Allowed only when a profile names them exactly: no wildcard ("pandas.*") and no
 * allowed package covers them. Since the audit hook refuses frames past the snippet's
 * (audit.c), this list is a second fence. */
static const char *const caller_frame_readers[] = {
        "pandas.core.computation.scope",
};

bool
exec_module_reads_caller_frames(const char *name)
{
    for (size_t i = 0; i < sizeof(caller_frame_readers) / sizeof(caller_frame_readers[0]); i++)
        if (strcmp(caller_frame_readers[i], name) == 0)
            return true;
    return false;
}

static bool
import_listed_exactly(const struct exec_env *env, const char *name)
{
    for (size_t i = 0; i < env->policy.n_imports; i++)
        if (strcmp(env->policy.imports[i], name) == 0)
            return true;
    return false;
}

bool
exec_import_allowed(const struct exec_env *env, const char *name)
{
    if (exec_module_reads_caller_frames(name))
        return import_listed_exactly(env, name);
    size_t len = strlen(name);
    for (size_t i = 0; i < env->policy.n_imports; i++) {
        const char *a = env->policy.imports[i];
        size_t alen = strlen(a);
        if (strcmp(a, "*") == 0 || strcmp(a, name) == 0)
            return true;
        /* "pkg.*": pkg itself and anything below it */
        if (alen >= 2 && strcmp(a + alen - 2, ".*") == 0) {
            size_t plen = alen - 2;
            if (len >= plen && strncmp(name, a, plen) == 0 &&
                (name[plen] == '\0' || name[plen] == '.'))
                return true;
        }
    }
    return false;
}

void
exec_raise_import_refused(const struct exec_env *env, const char *name)
{
    /* Each name once, sorted, as smolagents prints it: the profile's list usually repeats the
     * base modules every environment has. */
    PyObject *set = PySet_New(NULL);
    for (size_t i = 0; set && i < env->policy.n_imports; i++) {
        PyObject *s = PyUnicode_FromString(env->policy.imports[i]);
        if (!s || PySet_Add(set, s) < 0)
            Py_CLEAR(set);
        Py_XDECREF(s);
    }
    PyObject *list = set ? PySequence_List(set) : NULL;
    Py_XDECREF(set);
    if (!list || PyList_Sort(list) < 0) {
        Py_XDECREF(list);
        return;
    }
    PyErr_Format(exec_InterpreterError, "Import of %s is not allowed. Authorized imports are: %R",
                 name, list);
    Py_DECREF(list);
}

/* Dunders the snippet may use: names, docs and versions, the constructor protocol classes
 * need, exception chaining, data-only attributes and the protocol methods (cm.__enter__(),
 * it.__next__()), whose wrappers only lead further through dunders that stay refused.
 * Read but never set or deleted (dunder_read.c): __class__, __bases__, __mro__, __members__,
 * and __init_subclass__ where it is object's or bound to the snippet's class: the classes
 * they lead to are what type(x) and cls.mro() answer, checked as values alike.
 * Everything else (__dict__, __globals__, __subclasses__, __self__, __func__, __reduce__, ...)
 * leads to objects the policy keeps away: __subclasses__ to every class of the interpreter,
 * __dict__ to a namespace written without attribute checks. */
static const char *const allowed_dunders[] = {
        "__init__",        "__new__",
        "__name__",        "__qualname__",
        "__doc__",         "__module__",
        "__str__",         "__repr__",
        "__version__",     "__all__",
        "__cause__",       "__context__",
        "__wrapped__",     "__suppress_context__",
        "__match_args__",  "__slots__",
        "__enter__",       "__exit__",
        "__iter__",        "__next__",
        "__len__",         "__contains__",
        "__getitem__",     "__setitem__",
        "__delitem__",     "__hash__",
        "__eq__",          "__ne__",
        "__lt__",          "__le__",
        "__gt__",          "__ge__",
        "__bool__",        "__format__",
        "__annotations__", "__notes__",
};

bool
exec_is_allowed_dunder(const char *name)
{
    for (size_t i = 0; i < sizeof(allowed_dunders) / sizeof(allowed_dunders[0]); i++)
        if (strcmp(allowed_dunders[i], name) == 0)
            return true;
    return false;
}

/* Attributes that lead to frames, code objects and tracebacks, and through a frame to the
 * globals and builtins of the code it runs: refused by name on every route, whatever object
 * carries them (a user class may name its attributes so too: rare, and refused alike). The
 * values themselves are refused as well (exec_check_value); the names are refused first so
 * that no route which hands a value to CPython code unchecked (operator.attrgetter with a
 * dotted path, str.format fields) can walk through one. co_* is refused as a prefix. */
static const char *const introspection_attrs[] = {
        "gi_frame",  "gi_code",    "gi_yieldfrom", "cr_frame",  "cr_code",  "cr_await",
        "cr_origin", "ag_frame",   "ag_code",      "ag_await",  "tb_frame", "tb_next",
        "f_back",    "f_builtins", "f_code",       "f_globals", "f_locals", "f_trace",
};

/* Library functions refused by name on every object, like the introspection names, and as
 * values (exec_check_value), whatever route reached them (from enum import global_enum, a
 * container a library returned, operator.attrgetter):
 * - enum's helpers that read and write a module's namespace chosen by name: Enum._convert_
 *   and _old_convert_ take sys.modules[module].__dict__ (or any held object's __dict__) as
 *   the members of a new class and write into that namespace; global_enum writes the members
 *   into sys.modules[cls.__module__].__dict__;
 * - inspect's readers of every attribute: getmembers (and _static) answers each attribute of
 *   any object as a value the walk never sees, a library function's __globals__ with the real
 *   builtins among them; getclosurevars answers the real builtins a function's code names
 *   (getattr, eval); getattr_static any one attribute, classify_class_attrs a class's slot
 *   wrappers (object.__getattribute__). C code (map, operator.call) took __import__ out of
 *   them and imported os (policy cases 313, 314). The rest of inspect answers names, text,
 *   signatures and the snippet's own frames. */
struct refused_function {
    const char *module, *name, *kind;
};
static const struct refused_function refused_functions[] = {
        {"enum", "_convert_", "module namespace helper"},
        {"enum", "_old_convert_", "module namespace helper"},
        {"enum", "global_enum", "module namespace helper"},
        {"inspect", "getmembers", "reflection function"},
        {"inspect", "getmembers_static", "reflection function"},
        {"inspect", "getclosurevars", "reflection function"},
        {"inspect", "getattr_static", "reflection function"},
        {"inspect", "classify_class_attrs", "reflection function"},
};

static const char *
refused_kind(const char *name)
{
    size_t len = strlen(name);
    if (len >= 4 && strncmp(name, "__", 2) == 0 && strcmp(name + len - 2, "__") == 0)
        return exec_is_allowed_dunder(name) ? NULL : "dunder attribute";
    if (strncmp(name, "co_", 3) == 0)
        return "introspection attribute";
    /* ABCMeta's bookkeeping: _abc's C code trusts what a class's _abc_impl holds, and a
     * snippet ABC given another's made every int a Mapping for every library */
    if (strncmp(name, "_abc_", 5) == 0)
        return "abstract base class bookkeeping attribute";
    for (size_t i = 0; i < sizeof(introspection_attrs) / sizeof(introspection_attrs[0]); i++)
        if (strcmp(introspection_attrs[i], name) == 0)
            return "introspection attribute";
    for (size_t i = 0; i < sizeof(refused_functions) / sizeof(refused_functions[0]); i++)
        if (strcmp(refused_functions[i].name, name) == 0)
            return refused_functions[i].kind;
    return NULL;
}

bool
exec_dunder_forbidden(const char *name)
{
    return refused_kind(name) != NULL;
}

/* Decided on the str's characters, not on its UTF-8: a name the snippet built may hold a lone
 * surrogate, which has no UTF-8 form. */
static bool
allowed_dunder_str(PyObject *name)
{
    for (size_t i = 0; i < sizeof(allowed_dunders) / sizeof(allowed_dunders[0]); i++)
        if (PyUnicode_CompareWithASCIIString(name, allowed_dunders[i]) == 0)
            return true;
    return false;
}

bool
exec_is_allowed_dunder_str(PyObject *name)
{
    return PyUnicode_Check(name) && allowed_dunder_str(name);
}

bool
exec_str_is_private(PyObject *name)
{
    return PyUnicode_GET_LENGTH(name) > 0 && PyUnicode_READ_CHAR(name, 0) == '_' &&
           !allowed_dunder_str(name) && !exec_is_read_only_dunder(name);
}

int
exec_check_attr_name(struct exec_run *r, PyObject *name)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(name);
    const char *kind = NULL;
    if (len >= 4 && PyUnicode_READ_CHAR(name, 0) == '_' && PyUnicode_READ_CHAR(name, 1) == '_' &&
        PyUnicode_READ_CHAR(name, len - 1) == '_' && PyUnicode_READ_CHAR(name, len - 2) == '_') {
        if (!allowed_dunder_str(name) && !exec_is_read_only_dunder(name))
            kind = "dunder attribute";
    } else if (len >= 3 && PyUnicode_IS_ASCII(name)) {
        /* the other refused names are ASCII: their UTF-8 is their data, nothing can fail */
        kind = refused_kind(PyUnicode_AsUTF8(name));
    }
    if (!kind)
        return 0;
    exec_fail(r, ABORT_NONE, "Forbidden access to %s: %U", kind, name);
    return -1;
}

PyObject *
exec_fail(struct exec_run *r, int abort, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (!msg)
        return NULL;
    PyErr_SetObject(exec_InterpreterError, msg);
    if (r && abort != ABORT_NONE && r->abort == ABORT_NONE) {
        r->abort = abort;
        r->abort_msg = Py_NewRef(msg); /* reported even if CPython code swallows the exception */
        r->ops_check_at = 0;           /* every later tick fails too */
    }
    Py_DECREF(msg);
    return NULL;
}

/* The real builtins the snippet's namespace does not have (or has in checking versions): held
 * as values they would run with no policy at all. They can only come from CPython's own
 * namespaces, so a value that is one means some route leaked a namespace. */
static const char *const refused_builtins[] = {
        "eval",    "exec",    "compile", "open",  "input",      "breakpoint",      "globals",
        "locals",  "vars",    "dir",     "print", "__import__", "__build_class__", "getattr",
        "setattr", "delattr", "help",    "exit",  "quit",
};

/* C modules that are the implementation of a public one: allowing "os" allows posix.listdir,
 * which os.listdir is. Otherwise a module "_x" counts as "x" (_collections, _datetime). */
static const char *const implementation_of[][2] = {
        {"posix", "os"},
        {"_sre", "re"},
        {"_io", "io"},
        {"_thread", "threading"},
};

/* Whether functions of module `name` may be held by the snippet: the module, or the public
 * module it implements, is in the profile's allow-list. */
static bool
module_itself_allowed(const struct exec_env *env, const char *name)
{
    if (exec_import_allowed(env, name))
        return true;
    for (size_t i = 0; i < sizeof(implementation_of) / sizeof(implementation_of[0]); i++)
        if (strcmp(name, implementation_of[i][0]) == 0)
            return exec_import_allowed(env, implementation_of[i][1]);
    return name[0] == '_' && name[1] != '_' && exec_import_allowed(env, name + 1);
}

/* ... or a package it belongs to is: an allowed package's objects have their methods in its
 * submodules (json.JSONEncoder's in json.encoder, pandas.DataFrame's in pandas.core.frame),
 * which the snippet may not import but uses through the package. */
bool
exec_module_functions_allowed(const struct exec_env *env, const char *name)
{
    char package[256];
    if (snprintf(package, sizeof(package), "%s", name) >= (int) sizeof(package))
        return false;
    for (;;) {
        if (module_itself_allowed(env, package))
            return true;
        if (exec_module_reads_caller_frames(package))
            return false; /* not covered by its package either */
        char *dot = strrchr(package, '.');
        if (!dot)
            return false;
        *dot = '\0';
    }
}

/* A function of a module the profile does not allow: the real open is _io.open, os.listdir is
 * posix.listdir, importlib's helpers run their argument inside import frames the audit hook
 * trusts. Reached through a leak (an exception's .obj, a library's return value), they would
 * run with no policy at all. */
static int
refuse_module_function(struct exec_run *r, const char *module, const char *function)
{
    exec_fail(r, ABORT_NONE, "Forbidden access to %s.%s: module %s is not allowed", module,
              function, module);
    return -1;
}

PyObject *
exec_globals_module(PyObject *globals)
{
    PyObject *name = globals && PyDict_Check(globals)
                             ? PyDict_GetItemString(globals, "__name__") /* borrowed */
                             : NULL;
    /* an exact str: a subclass's __hash__ and __eq__ would run in sys.modules' lookup */
    PyObject *mod = name && PyUnicode_CheckExact(name) ? PyImport_GetModule(name) : NULL;
    bool own = mod && PyModule_Check(mod) && PyModule_GetDict(mod) == globals;
    Py_XDECREF(mod);
    PyErr_Clear();
    return own ? name : NULL;
}

PyObject *
exec_frame_module(PyFrameObject *f)
{
    if (!f)
        return NULL;
    PyCodeObject *code = PyFrame_GetCode(f);
    bool from_text = PyUnicode_CompareWithASCIIString(code->co_filename, "<string>") == 0;
    Py_DECREF(code);
    if (from_text)
        return NULL;
    PyObject *globals = PyFrame_GetGlobals(f);
    PyObject *name = exec_globals_module(globals);
    Py_DECREF(globals); /* a frame's globals outlive it: name stays borrowed from them */
    return name;
}

const char *
exec_function_module(PyObject *func)
{
    PyObject *name = exec_globals_module(PyFunction_GET_GLOBALS(func));
    const char *s = name ? PyUnicode_AsUTF8(name) : NULL;
    PyErr_Clear();
    return s;
}

/* A refused library function held as a value: its kind, or NULL. */
static const char *
refused_function_kind(const char *module, PyObject *func)
{
    PyObject *name = ((PyFunctionObject *) func)->func_name;
    for (size_t i = 0; i < sizeof(refused_functions) / sizeof(refused_functions[0]); i++)
        if (strcmp(refused_functions[i].module, module) == 0 &&
            PyUnicode_CompareWithASCIIString(name, refused_functions[i].name) == 0)
            return refused_functions[i].kind;
    return NULL;
}

/* A method, slot wrapper or descriptor named after an attribute the snippet may not read is
 * refused as a value too, however it was reached: object.__getattribute__ is an unchecked
 * getattr, and pprint's namespace printer, filed for classes, handed it to a snippet hook
 * from object's __dict__ (policy case 347). name: the method's own name, or NULL. */
static int
check_method_name(struct exec_run *r, PyObject *v, const char *name)
{
    size_t len = name ? strlen(name) : 0;
    if (len < 5 || strncmp(name, "__", 2) != 0 || strcmp(name + len - 2, "__") != 0 ||
        exec_is_allowed_dunder(name))
        return 0;
    PyObject *s = PyUnicode_FromString(name);
    if (!s)
        return -1;
    bool readable = exec_is_read_only_dunder(s);
    Py_DECREF(s);
    if (readable)
        return 0;
    exec_fail(r, ABORT_NONE, "Forbidden access to dunder attribute %s: a %s reached as a value",
              name, Py_TYPE(v)->tp_name);
    return -1;
}

/* The own name of a C method or descriptor v, borrowed, or NULL for other objects. */
static const char *
c_method_name(PyObject *v)
{
    PyTypeObject *t = Py_TYPE(v);
    if (t == &PyWrapperDescr_Type)
        return ((PyWrapperDescrObject *) v)->d_base->name;
    if (t == &PyMethodDescr_Type || t == &PyClassMethodDescr_Type)
        return ((PyMethodDescrObject *) v)->d_method->ml_name;
    if (t == &PyGetSetDescr_Type)
        return ((PyGetSetDescrObject *) v)->d_getset->name;
    if (t == &PyMemberDescr_Type)
        return ((PyMemberDescrObject *) v)->d_member->name;
    if (PyCFunction_Check(v))
        return ((PyCFunctionObject *) v)->m_ml->ml_name;
    return NULL;
}

/* A bound slot wrapper (method-wrapper) says its name only as an attribute. */
static int
check_method_wrapper_name(struct exec_run *r, PyObject *v)
{
    PyObject *name = PyObject_GetAttrString(v, "__name__");
    const char *s = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    int rc = s ? check_method_name(r, v, s) : -1;
    if (!s && !PyErr_Occurred())
        exec_fail(r, ABORT_NONE, "Forbidden: a method-wrapper that does not say its name");
    Py_XDECREF(name);
    return rc;
}

PyObject *
exec_typing_origin(PyObject *v)
{
    PyObject *dict = PyObject_GenericGetDict(v, NULL);
    if (!dict) {
        PyErr_Clear(); /* a special form: slots, no origin */
        return NULL;
    }
    PyObject *origin = Py_XNewRef(PyDict_GetItemString(dict, "__origin__"));
    Py_DECREF(dict);
    return origin;
}

/* typing's aliases pass reads and stores of their other attributes on to their __origin__,
 * from typing's own code: an alias the snippet made with the typing module as its origin set
 * typing's own names (its callable, which its protocol checks call) and would read its private
 * ones. No module is an alias's origin (policy case 350); stores passed on to anything but a
 * class are refused where they are made (guard_typing.c). */
static int
check_typing_origin(struct exec_run *r, PyObject *v)
{
    PyObject *origin = exec_typing_origin(v);
    const char *module = origin && PyModule_Check(origin) ? PyModule_GetName(origin) : NULL;
    bool refused = origin && PyModule_Check(origin);
    Py_XDECREF(origin);
    if (!refused)
        return 0;
    PyErr_Clear();
    exec_fail(r, ABORT_NONE,
              "Forbidden: a typing alias of module %s (typing passes an alias's attribute reads "
              "and stores on to its origin)",
              module ? module : "?");
    return -1;
}

/* A staticmethod or classmethod from a class's __dict__ is judged by what it wraps. */
static int
check_wrapped(struct exec_run *r, PyObject *v)
{
    PyObject *f = PyObject_GetAttrString(v, "__func__");
    int rc = f ? exec_check_value(r, f) : -1;
    Py_XDECREF(f);
    return rc;
}

/* __main__ is where the snippet's classes say they live: dataclasses builds their methods
 * with its namespace, which holds nothing else. */
static int
check_python_function(struct exec_run *r, PyObject *v)
{
    if (PyFunction_GET_GLOBALS(v) == r->globals)
        return 0; /* the snippet's own: the common case of method calls, without a lookup */
    /* a library class's own __getattr__ or __setstate__, say, held apart from its class */
    const char *own_name = PyUnicode_AsUTF8(((PyFunctionObject *) v)->func_name);
    if (!own_name)
        PyErr_Clear(); /* a lone surrogate (functools.wraps copies any name): no dunder */
    else if (check_method_name(r, v, own_name) < 0)
        return -1;
    const char *module = exec_function_module(v);
    if (!module)
        return PyErr_Occurred() ? -1 : 0;
    /* typing's objects are made by its classes' __init__ and shared (typing.List[int] is
     * cached, typing.AnyStr module-level): run again on one, it rewrote the alias every caller
     * gets (case 355). Making one calls the __init__ from C; nothing needs to hold it. */
    if (own_name && strcmp(module, "typing") == 0 && strcmp(own_name, "__init__") == 0) {
        exec_fail(r, ABORT_NONE,
                  "Forbidden access to typing's %U: it would run again on an object typing "
                  "made and shares",
                  ((PyFunctionObject *) v)->func_qualname);
        return -1;
    }
    const char *kind = refused_function_kind(module, v);
    if (kind) {
        exec_fail(r, ABORT_NONE, "Forbidden access to %s: %s.%U", kind, module,
                  ((PyFunctionObject *) v)->func_qualname);
        return -1;
    }
    if (strcmp(module, "__main__") == 0 || exec_module_functions_allowed(r->env, module))
        return 0;
    const char *qualname = PyUnicode_AsUTF8(((PyFunctionObject *) v)->func_qualname);
    return qualname ? refuse_module_function(r, module, qualname) : -1;
}

static int
check_builtin_function(struct exec_run *r, PyObject *v)
{
    static PyObject *builtins;
    if (!builtins && !(builtins = exec_import_own("builtins")))
        return -1;
    PyObject *self = PyCFunction_GET_SELF(v);
    const char *name = ((PyCFunctionObject *) v)->m_ml->ml_name;
    if (self && self != builtins && PyModule_Check(self)) {
        const char *module = PyModule_GetName(self);
        if (!module)
            return -1;
        return exec_module_functions_allowed(r->env, module)
                       ? 0
                       : refuse_module_function(r, module, name);
    }
    if (self && self != builtins)
        return exec_check_bound_c_method(r, v); /* a method: judged by the class defining it */
    if (exec_main_frame_is_import(v)) {
        exec_fail(r, ABORT_NONE, "Forbidden access to the builtin function __import__");
        return -1;
    }
    if (!self)
        return 0; /* bound to nothing: no module's function, no class's method */
    for (size_t i = 0; i < sizeof(refused_builtins) / sizeof(refused_builtins[0]); i++)
        if (strcmp(refused_builtins[i], name) == 0) {
            exec_fail(r, ABORT_NONE, "Forbidden access to the builtin function %s", name);
            return -1;
        }
    return 0;
}

/* The run frame's builtins (main_frame.c) are known by their __import__: borrowed, or NULL
 * (with an exception set on error). */
static PyObject *
frame_builtins_import(PyObject *v)
{
    static PyObject *key;
    if (!key && !(key = PyUnicode_InternFromString("__import__")))
        return NULL;
    PyObject *imp = PyDict_GetItemWithError(v, key);
    return imp && exec_main_frame_is_import(imp) ? imp : NULL;
}

/* A module's namespace (its globals hold __builtins__, the builtins' own is the builtins
 * dict), or a run frame's builtins: every function of the module and the real builtins, or
 * the frame's __import__, are one subscript away. */
static int
check_dict(struct exec_run *r, PyObject *v)
{
    static PyObject *builtins_dict, *key;
    if (!builtins_dict) {
        PyObject *m = exec_import_own("builtins");
        builtins_dict = m ? Py_NewRef(PyModule_GetDict(m)) : NULL;
        Py_XDECREF(m);
        if (!builtins_dict || !(key = PyUnicode_InternFromString("__builtins__")))
            return -1;
    }
    PyObject *b = v == builtins_dict ? v : PyDict_GetItemWithError(v, key);
    if (!b && !PyErr_Occurred())
        b = frame_builtins_import(v);
    if (!b)
        return PyErr_Occurred() ? -1 : 0;
    exec_fail(r, ABORT_NONE, "Forbidden access to a module's namespace");
    return -1;
}

/* collections.ChainMap, read once (collections is loaded before any run); borrowed. */
static PyTypeObject *
chainmap_type(void)
{
    static PyTypeObject *t;
    if (!t) {
        PyObject *m = exec_import_own("collections");
        PyObject *c = m ? PyObject_GetAttrString(m, "ChainMap") : NULL;
        Py_XDECREF(m);
        if (c && !PyType_Check(c)) {
            Py_CLEAR(c);
            PyErr_SetString(PyExc_RuntimeError, "collections.ChainMap is no class");
        }
        t = (PyTypeObject *) c; /* kept for the process's life */
    }
    return t;
}

/* ChainMaps nest (pandas' DeepChainMap holds the ChainMap new_child made): deeper than this is
 * refused rather than left unlooked at. */
#define CHAINMAP_MAX_DEPTH 16

/* A ChainMap (or subclass: pandas' DeepChainMap) is a namespace when one of its maps is:
 * pandas' Scope copied its caller's frame's globals into one, whose __builtins__ C code (map,
 * operator.itemgetter) then took out. The maps are read from the instance dict (no property,
 * no __getattr__ runs), as a snapshot; a snippet subclass keeping them elsewhere keeps its
 * own. */
static int
check_chainmap(struct exec_run *r, PyObject *v, int depth)
{
    if (depth > CHAINMAP_MAX_DEPTH) {
        exec_fail(r, ABORT_NONE, "Forbidden: ChainMaps nested more than %d deep",
                  CHAINMAP_MAX_DEPTH);
        return -1;
    }
    PyObject *d = PyObject_GenericGetDict(v, NULL);
    if (!d)
        return -1;
    int rc = 0;
    PyObject *items = NULL;
    PyObject *maps = PyDict_GetItemString(d, "maps"); /* borrowed from d */
    /* a list is what ChainMap's own methods make; anything else is a snippet's doing */
    if (maps && (PyList_Check(maps) || PyTuple_Check(maps)))
        rc = (items = PySequence_Tuple(maps)) ? 0 : -1;
    for (Py_ssize_t i = 0; items && rc == 0 && i < PyTuple_GET_SIZE(items); i++) {
        PyObject *m = PyTuple_GET_ITEM(items, i);
        if (PyDict_Check(m))
            rc = check_dict(r, m);
        else if (PyType_IsSubtype(Py_TYPE(m), chainmap_type()))
            rc = check_chainmap(r, m, depth + 1);
    }
    Py_XDECREF(items);
    Py_DECREF(d);
    return rc;
}

int
exec_check_value_slow(struct exec_run *r, PyObject *v)
{
    exec_class_getattr_guard_value(v); /* class_getattr.c: before the snippet holds it */
    if (PyMethod_Check(v))
        return exec_check_value(r, PyMethod_GET_FUNCTION(v));
    if (PyCFunction_Check(v))
        return check_builtin_function(r, v) < 0 ? -1 : check_method_name(r, v, c_method_name(v));
    if (Py_IS_TYPE(v, &PyStaticMethod_Type) || Py_IS_TYPE(v, &PyClassMethod_Type))
        return check_wrapped(r, v); /* a staticmethod is callable as it is */
    if (check_method_name(r, v, c_method_name(v)) < 0)
        return -1;
    if (Py_IS_TYPE(v, &_PyMethodWrapper_Type) && check_method_wrapper_name(r, v) < 0)
        return -1;
    if (PyDict_Check(v))
        return check_dict(r, v);
    PyTypeObject *chainmap = chainmap_type();
    if (!chainmap)
        return -1;
    if (PyType_IsSubtype(Py_TYPE(v), chainmap))
        return check_chainmap(r, v, 0);
    if (PyModule_Check(v)) {
        const char *name = PyModule_GetName(v);
        if (!name && PyErr_ExceptionMatches(PyExc_SystemError)) {
            /* no __name__ yet: a module subclass's instance before its __init__ ran */
            PyErr_Clear();
            exec_fail(r, ABORT_NONE, "Forbidden access to a module object with no name");
            return -1;
        }
        if (!name)
            return -1;
        if (!exec_import_allowed(r->env, name)) {
            exec_fail(r, ABORT_NONE, "Forbidden access to module: %s", name);
            return -1;
        }
        return 0;
    }
    if ((PyType_Check(v) && exec_is_unguarded_class(v)) ||
        (PyFunction_Check(v) && exec_is_unguarded_function(v))) {
        /* the snippet gets checking versions of these; the real ones leak through results
         * (functools.wraps(f).func) */
        if (PyType_Check(v))
            exec_fail(r, ABORT_NONE, "Forbidden access to the %s class itself",
                      ((PyTypeObject *) v)->tp_name);
        else
            exec_fail(r, ABORT_NONE, "Forbidden access to the unchecked functools.%U",
                      ((PyFunctionObject *) v)->func_name);
        return -1;
    }
    if (PyFunction_Check(v))
        return check_python_function(r, v);
    /* the classes that make code run: function(code, globals) runs any code object (marshal
     * and compile are refused, but one class less to reason about) */
    if (v == (PyObject *) &PyFunction_Type || v == (PyObject *) &PyCode_Type ||
        v == (PyObject *) &PyFrame_Type) {
        exec_fail(r, ABORT_NONE, "Forbidden access to the %s class", ((PyTypeObject *) v)->tp_name);
        return -1;
    }
    if (PyFrame_Check(v) || PyCode_Check(v) || PyTraceBack_Check(v)) {
        exec_fail(r, ABORT_NONE, "Forbidden access to %s object", Py_TYPE(v)->tp_name);
        return -1;
    }
    if (PyType_Check(v))
        return exec_check_class(r, (PyTypeObject *) v);
    if (Py_IS_TYPE(v, &PyWrapperDescr_Type) || Py_IS_TYPE(v, &_PyMethodWrapper_Type))
        return exec_check_slot_wrapper(r, v, NULL);
    if (exec_is_typing_alias(v))
        return check_typing_origin(r, v);
    if (Py_IS_TYPE(v, &PyMethodDescr_Type) || Py_IS_TYPE(v, &PyClassMethodDescr_Type))
        return exec_check_c_method(r, PyDescr_TYPE(v),
                                   ((PyMethodDescrObject *) v)->d_method->ml_name);
    return 0;
}

PyObject *
exec_getattr(struct exec_run *r, PyObject *obj, PyObject *name)
{
    if (!PyUnicode_CheckExact(name)) {
        PyObject *exact = exec_exact_str(name);
        PyObject *v = exact ? exec_getattr(r, obj, exact) : NULL;
        Py_XDECREF(exact);
        return v;
    }
    if (exec_check_attr_name(r, name) < 0)
        return NULL;
    PyObject *v = exec_class_getattr_own_read(obj, name);
    return v ? exec_getattr_result(r, obj, name, v) : NULL;
}

/* The checks on a value read by obj.name (name already checked): modules, the operator
 * getters, frames and code, module privates, str.format. Steals v. */
PyObject *
exec_getattr_result(struct exec_run *r, PyObject *obj, PyObject *name, PyObject *v)
{
    if ((v = exec_guard_getters(r, v)) == NULL || exec_check_value(r, v) < 0 ||
        exec_check_read_only_dunder_value(r, name, v) < 0) {
        Py_XDECREF(v);
        return NULL;
    }
    if (PyModule_Check(obj) && exec_str_is_private(name)) {
        /* a module's private names are its implementation: often other modules' functions */
        Py_DECREF(v);
        const char *m = PyModule_GetName(obj);
        return exec_fail(r, ABORT_NONE, "Forbidden access to private attribute %U of module %s",
                         name, m ? m : "?");
    }
    return v;
}

int
exec_setattr(struct exec_run *r, PyObject *obj, PyObject *name, PyObject *value)
{
    if (!PyUnicode_CheckExact(name)) {
        PyObject *exact = exec_exact_str(name);
        int rc = exact ? exec_setattr(r, obj, exact, value) : -1;
        Py_XDECREF(exact);
        return rc;
    }
    if (exec_check_attr_store_name(r, name) < 0 || exec_check_attr_owner(r, obj, name, false) < 0)
        return -1;
    return PyObject_SetAttr(obj, name, value);
}

int
exec_check_attr_owner(struct exec_run *r, PyObject *obj, PyObject *name, bool deleting)
{
    const char *what = deleting ? "deletion of" : "assignment to";
    /* Writing into a module would change what other code sees through it. */
    if (PyModule_Check(obj)) {
        const char *m = PyModule_GetName(obj);
        if (!m)
            PyErr_Clear();
        exec_fail(r, ABORT_NONE, "Forbidden %s an attribute of module %s: %U", what, m ? m : "?",
                  name);
        return -1;
    }
    /* A library's class: its own code reads what it finds there and trusts it (dataclasses
     * builds source text from Field.name, which a property could make anything). */
    if (PyType_Check(obj))
        return exec_check_class_writable(r, (PyTypeObject *) obj, name, what);
    /* typing's special forms and aliases: typing's code trusts what they hold as it trusts
     * its classes (an alias's reducer looks its _name up in typing's globals: '__builtins__'
     * rebuilt it as the real __import__; Union._getitem answers every Union[...]), and those
     * made at its import are every user's. */
    if (exec_is_typing_object(obj)) {
        exec_fail(r, ABORT_NONE,
                  "Forbidden %s an attribute of typing's internal object %s: %U (typing's own "
                  "code trusts what its special forms and aliases hold)",
                  what, Py_TYPE(obj)->tp_name, name);
        return -1;
    }
    return 0;
}

int
exec_budget_slow(struct exec_run *r)
{
    if (r->abort != ABORT_NONE) {
        /* Already failed: keep failing until the walk unwinds. Keep the first message. */
        if (!PyErr_Occurred())
            PyErr_SetObject(exec_InterpreterError, r->abort_msg ? r->abort_msg : Py_None);
        return -1;
    }
    if (r->ops > r->max_ops) {
        exec_fail(r, ABORT_ERROR,
                  "Reached the max number of operations of %llu. Maybe there is an infinite loop "
                  "somewhere in the code, or you're just asking too many calculations.",
                  (unsigned long long) r->max_ops);
        return -1;
    }
    if (r->deadline_ns && exec_now_ns() >= r->deadline_ns) {
        uint64_t ms = r->env->policy.timeout_ms;
        char secs[32];
        if (ms % 1000 == 0)
            snprintf(secs, sizeof(secs), "%llu", (unsigned long long) (ms / 1000));
        else
            snprintf(secs, sizeof(secs), "%g", (double) ms / 1000.0);
        exec_fail(r, ABORT_TIMEOUT,
                  "Code execution exceeded the maximum execution time of %s seconds", secs);
        return -1;
    }
    volatile sig_atomic_t *cancel = r->env->policy.cancel_flag;
    if (cancel && *cancel) {
        exec_fail(r, ABORT_CANCEL, "Code execution was cancelled");
        return -1;
    }
    if (r->cb)
        r->cb(r->userdata, NULL, 0);
    uint64_t next = r->ops + EXEC_CLOCK_EVERY;
    r->ops_check_at = next < r->max_ops + 1 ? next : r->max_ops + 1;
    return 0;
}
