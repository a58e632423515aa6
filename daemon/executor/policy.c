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
static PyObject *attrgetter_type, *methodcaller_type; /* once _operator is loaded */
static bool load_getter_types(void);
static PyObject *formatter_type, *checked_formatter_type; /* string.Formatter, guarded */

/* Cheap pre-check before looking the classes up in sys.modules. */
static bool
is_getter_name(PyObject *type)
{
    const char *n = ((PyTypeObject *) type)->tp_name;
    return strcmp(n, "operator.attrgetter") == 0 || strcmp(n, "operator.methodcaller") == 0;
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
    return exec_InterpreterError && exec_FinalAnswerException ? 0 : -1;
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

bool
exec_import_allowed(const struct exec_env *env, const char *name)
{
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
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < env->policy.n_imports; i++) {
        PyObject *s = PyUnicode_FromString(env->policy.imports[i]);
        if (!s || PyList_Append(list, s) < 0)
            Py_CLEAR(list);
        Py_XDECREF(s);
    }
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
 * Everything else (__class__, __dict__, __globals__, __subclasses__, __self__, __func__,
 * __reduce__, ...) leads to objects the policy keeps away. */
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
        "gi_frame", "gi_code",  "gi_yieldfrom", "cr_frame",  "cr_code",   "cr_await",
        "cr_origin", "ag_frame", "ag_code",      "ag_await",  "tb_frame",  "tb_next",
        "f_back",   "f_builtins", "f_code",     "f_globals", "f_locals",  "f_trace",
};

static const char *
refused_kind(const char *name)
{
    size_t len = strlen(name);
    if (len >= 4 && strncmp(name, "__", 2) == 0 && strcmp(name + len - 2, "__") == 0)
        return exec_is_allowed_dunder(name) ? NULL : "dunder attribute";
    if (strncmp(name, "co_", 3) == 0)
        return "introspection attribute";
    for (size_t i = 0; i < sizeof(introspection_attrs) / sizeof(introspection_attrs[0]); i++)
        if (strcmp(introspection_attrs[i], name) == 0)
            return "introspection attribute";
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
exec_str_is_private(PyObject *name)
{
    return PyUnicode_GET_LENGTH(name) > 0 && PyUnicode_READ_CHAR(name, 0) == '_' &&
           !allowed_dunder_str(name);
}

int
exec_check_attr_name(struct exec_run *r, PyObject *name)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(name);
    const char *kind = NULL;
    if (len >= 4 && PyUnicode_READ_CHAR(name, 0) == '_' && PyUnicode_READ_CHAR(name, 1) == '_' &&
        PyUnicode_READ_CHAR(name, len - 1) == '_' && PyUnicode_READ_CHAR(name, len - 2) == '_') {
        if (!allowed_dunder_str(name))
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

int
exec_check_value_slow(struct exec_run *r, PyObject *v)
{
    if (PyModule_Check(v)) {
        const char *name = PyModule_GetName(v);
        if (!name)
            return -1;
        if (!exec_import_allowed(r->env, name)) {
            exec_fail(r, ABORT_NONE, "Forbidden access to module: %s", name);
            return -1;
        }
        return 0;
    }
    if (PyType_Check(v) && ((is_getter_name(v) && load_getter_types() &&
                             (v == attrgetter_type || v == methodcaller_type)) ||
                            (formatter_type && v == formatter_type))) {
        exec_fail(r, ABORT_NONE, "Forbidden access to the %s class itself",
                  ((PyTypeObject *) v)->tp_name);
        return -1;
    }
    if (PyFrame_Check(v) || PyCode_Check(v) || PyTraceBack_Check(v)) {
        exec_fail(r, ABORT_NONE, "Forbidden access to %s object", Py_TYPE(v)->tp_name);
        return -1;
    }
    return 0;
}

static PyObject *formatter_parser, *field_name_split; /* from _string, looked up once */

static int
check_format_string(PyObject *fmt, int depth)
{
    PyObject *it = PyObject_CallOneArg(formatter_parser, fmt), *item;
    if (!it)
        return -1;
    int rc = 0;
    while (rc == 0 && (item = PyIter_Next(it))) {
        PyObject *field = PyTuple_GET_ITEM(item, 1), *spec = PyTuple_GET_ITEM(item, 2);
        if (field != Py_None) {
            PyObject *split = PyObject_CallOneArg(field_name_split, field), *part;
            PyObject *rest = split ? PyObject_GetIter(PyTuple_GET_ITEM(split, 1)) : NULL;
            rc = rest ? 0 : -1;
            while (rc == 0 && rest && (part = PyIter_Next(rest))) {
                PyObject *key = PyTuple_GET_ITEM(part, 1);
                if (PyObject_IsTrue(PyTuple_GET_ITEM(part, 0)) && PyUnicode_Check(key))
                    rc = exec_check_attr_name(NULL, key);
                Py_DECREF(part);
            }
            if (PyErr_Occurred())
                rc = -1;
            Py_XDECREF(rest);
            Py_XDECREF(split);
        }
        /* nested fields live in the spec: "{0:{1.attr}}" */
        if (rc == 0 && spec != Py_None && depth < 4 && PyUnicode_GET_LENGTH(spec) > 0)
            rc = check_format_string(spec, depth + 1);
        Py_DECREF(item);
    }
    Py_DECREF(it);
    return rc < 0 || PyErr_Occurred() ? -1 : 0;
}

/* self = (the real str.format or bound method, the bound str or None) */
static PyObject *
guarded_format(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *fmt = PyTuple_GET_ITEM(self, 1);
    if (fmt == Py_None)
        fmt = nargs > 0 ? args[0] : NULL;
    if (fmt && PyUnicode_Check(fmt) && check_format_string(fmt, 0) < 0)
        return NULL;
    return PyObject_Vectorcall(PyTuple_GET_ITEM(self, 0), args, nargsf, kwnames);
}

static PyMethodDef guarded_format_def = {"format", (PyCFunction) (void (*)(void)) guarded_format,
                                         METH_FASTCALL | METH_KEYWORDS,
                                         "str.format with the executor's field-name checks"};

static int
load_string_helpers(void)
{
    if (formatter_parser)
        return 0;
    PyObject *mod = PyImport_ImportModule("_string");
    if (!mod)
        return -1;
    formatter_parser = PyObject_GetAttrString(mod, "formatter_parser");
    field_name_split = PyObject_GetAttrString(mod, "formatter_field_name_split");
    Py_DECREF(mod);
    if (!formatter_parser || !field_name_split) {
        Py_CLEAR(formatter_parser);
        Py_CLEAR(field_name_split);
        return -1;
    }
    return 0;
}

static PyObject *
guard_format(PyObject *obj, PyObject *method)
{
    if (load_string_helpers() < 0)
        return NULL;
    PyObject *self = PyTuple_Pack(2, method, PyUnicode_Check(obj) ? obj : Py_None);
    if (!self)
        return NULL;
    PyObject *f = PyCFunction_New(&guarded_format_def, self);
    Py_DECREF(self);
    return f;
}

static bool
is_format_method(PyObject *obj, PyObject *name)
{
    if (PyUnicode_CompareWithASCIIString(name, "format") != 0 &&
        PyUnicode_CompareWithASCIIString(name, "format_map") != 0)
        return false;
    return PyUnicode_Check(obj) ||
           (PyType_Check(obj) && PyType_IsSubtype((PyTypeObject *) obj, &PyUnicode_Type));
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
    PyObject *v = PyObject_GetAttr(obj, name);
    return v ? exec_getattr_result(r, obj, name, v) : NULL;
}

/* The checks on a value read by obj.name (name already checked): modules, the operator
 * getters, frames and code, module privates, str.format. Steals v. */
PyObject *
exec_getattr_result(struct exec_run *r, PyObject *obj, PyObject *name, PyObject *v)
{
    if ((v = exec_guard_getters(v)) == NULL || exec_check_value(r, v) < 0) {
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
    if (is_format_method(obj, name)) {
        PyObject *g = guard_format(obj, v);
        Py_DECREF(v);
        v = g;
    }
    return v;
}

/* operator.attrgetter("__class__") and methodcaller("__reduce__") would read dunders with
 * CPython's getattr: when a profile allows the operator module, the snippet gets checking
 * versions of the two classes instead. */
static int
check_getter_name(PyObject *name)
{
    static PyObject *dot;
    if (!PyUnicode_Check(name))
        return 0; /* the real class raises its own TypeError */
    if (!dot && !(dot = PyUnicode_InternFromString(".")))
        return -1;
    PyObject *parts = PyUnicode_Split(name, dot, -1);
    if (!parts)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(parts); i++)
        rc = exec_check_attr_name(NULL, PyList_GET_ITEM(parts, i));
    Py_DECREF(parts);
    return rc;
}

/* self = the real class */
static PyObject *
guarded_getter(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t names = self == methodcaller_type ? (nargs > 0) : nargs;
    Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject **copy = PyMem_Calloc(total + 1, sizeof(PyObject *));
    if (!copy)
        return PyErr_NoMemory();
    PyObject *res = NULL;
    for (Py_ssize_t i = 0; i < total; i++) {
        bool is_name = i < names && PyUnicode_Check(args[i]);
        if (!(copy[i] = is_name ? exec_exact_str(args[i]) : Py_NewRef(args[i])) ||
            (is_name && check_getter_name(copy[i]) < 0))
            goto out;
    }
    res = PyObject_Vectorcall(self, copy, nargs, kwnames);
out:
    for (Py_ssize_t i = 0; i < total; i++)
        Py_XDECREF(copy[i]);
    PyMem_Free(copy);
    return res;
}

static PyMethodDef guarded_getter_def = {
        "attrgetter", (PyCFunction) (void (*)(void)) guarded_getter, METH_FASTCALL | METH_KEYWORDS,
        "operator.attrgetter/methodcaller with the executor's dunder check"};

/* Finds the two classes once _operator is loaded; false while it is not. */
static bool
load_getter_types(void)
{
    if (attrgetter_type)
        return true;
    PyObject *name = PyUnicode_FromString("_operator");
    PyObject *mod = name ? PyImport_GetModule(name) : NULL;
    Py_XDECREF(name);
    if (mod) {
        attrgetter_type = PyObject_GetAttrString(mod, "attrgetter");
        methodcaller_type = PyObject_GetAttrString(mod, "methodcaller");
        Py_DECREF(mod);
    }
    if (!attrgetter_type || !methodcaller_type) {
        Py_CLEAR(attrgetter_type);
        Py_CLEAR(methodcaller_type);
    }
    PyErr_Clear();
    return attrgetter_type != NULL;
}

/* string.Formatter resolves "0.attr" fields with CPython's getattr in get_field (which
 * format and vformat call): the snippet gets a subclass whose get_field checks the field
 * first. Built once, when string is first seen loaded. */

static PyObject *
checked_get_field(PyObject *unused, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "get_field(field_name, args, kwargs)");
        return NULL;
    }
    PyObject *field = args[1];
    if (PyUnicode_Check(field)) {
        /* "{" + field + "}" goes through the same check as str.format's fields */
        PyObject *fmt = PyUnicode_FromFormat("{%U}", field);
        int rc = fmt ? check_format_string(fmt, 0) : -1;
        Py_XDECREF(fmt);
        if (rc < 0)
            return NULL;
    }
    PyObject *real = PyObject_GetAttrString(formatter_type, "get_field");
    PyObject *res = real ? PyObject_Vectorcall(real, args, 4, NULL) : NULL;
    Py_XDECREF(real);
    return res;
}

static PyMethodDef checked_get_field_def = {"get_field",
                                            (PyCFunction) (void (*)(void)) checked_get_field,
                                            METH_FASTCALL, "get_field with the dunder check"};

static PyObject *
guard_formatter(PyObject *v)
{
    if (strcmp(((PyTypeObject *) v)->tp_name, "Formatter") != 0)
        return v;
    if (!formatter_type) {
        PyObject *name = PyUnicode_FromString("string");
        PyObject *mod = name ? PyImport_GetModule(name) : NULL;
        Py_XDECREF(name);
        formatter_type = mod ? PyObject_GetAttrString(mod, "Formatter") : NULL;
        Py_XDECREF(mod);
        PyErr_Clear();
        if (!formatter_type)
            return v;
    }
    if (v != formatter_type)
        return v;
    if (!checked_formatter_type) {
        if (load_string_helpers() < 0) {
            Py_DECREF(v);
            return NULL;
        }
        PyObject *cf = PyCFunction_New(&checked_get_field_def, NULL);
        PyObject *meth = cf ? PyInstanceMethod_New(cf) : NULL;
        Py_XDECREF(cf);
        if (!meth) {
            Py_DECREF(v);
            return NULL;
        }
        checked_formatter_type =
                PyObject_CallFunction((PyObject *) &PyType_Type, "s(O){sOss}", "Formatter",
                                      formatter_type, "get_field", meth, "__module__", "string");
        Py_DECREF(meth);
        if (!checked_formatter_type) {
            Py_DECREF(v);
            return NULL;
        }
    }
    Py_DECREF(v);
    return Py_NewRef(checked_formatter_type);
}

PyObject *
exec_guard_getters(PyObject *v)
{
    if (!PyType_Check(v))
        return v;
    if (!(v = guard_formatter(v)) || !is_getter_name(v) || !load_getter_types())
        return v;
    if (v != attrgetter_type && v != methodcaller_type)
        return v;
    PyObject *g = PyCFunction_New(&guarded_getter_def, v);
    Py_DECREF(v);
    return g;
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
    if (exec_check_attr_name(r, name) < 0)
        return -1;
    /* Writing into a module would change what other code sees through it. */
    if (PyModule_Check(obj)) {
        exec_fail(r, ABORT_NONE, "Forbidden assignment to an attribute of module %s: %U",
                  PyModule_GetName(obj) ? PyModule_GetName(obj) : "?", name);
        return -1;
    }
    return PyObject_SetAttr(obj, name, value);
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
    uint64_t next = r->ops + EXEC_CLOCK_EVERY;
    r->ops_check_at = next < r->max_ops + 1 ? next : r->max_ops + 1;
    return 0;
}
