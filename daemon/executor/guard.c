/* CPython callables that read attributes by a name the snippet gives, with CPython's own
 * getattr: str.format/format_map fields, string.Formatter.get_field, operator.attrgetter and
 * methodcaller, functools.update_wrapper and wraps. The snippet gets versions that check those
 * names first (exec_check_attr_name); the unchecked ones themselves are refused as values. */
#include <string.h>

#include "exec_internal.h"

static PyObject *attrgetter_type, *methodcaller_type; /* once _operator is loaded */
static bool load_getter_types(void);
static PyObject *formatter_type; /* string.Formatter, once string is loaded */

/* Cheap pre-check before looking the classes up in sys.modules. */
static bool
is_getter_name(PyObject *type)
{
    const char *n = ((PyTypeObject *) type)->tp_name;
    return strcmp(n, "operator.attrgetter") == 0 || strcmp(n, "operator.methodcaller") == 0;
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

static int
load_string_helpers(void)
{
    if (formatter_parser)
        return 0;
    PyObject *mod = exec_import_own("_string");
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

/* str.format and format_map as every caller sees them while a snippet runs: the snippet
 * itself, library code formatting a string it gave (collections.UserString.format calls
 * self.data.format), the method reached through super(S, s).format. All read fields with
 * CPython's getattr, so str's own type dict holds checking versions, installed once before
 * any run: no route to the method reaches the unchecked one. Outside runs (imports, the
 * daemon's own code) they only pass on. */
static PyObject *real_str_format, *real_str_format_map; /* the method descriptors replaced */

/* A constant of the calling Python function's own code: a format its author wrote, as
 * _collections_abc's '{0.__class__.__name__}({0._mapping!r})' for the repr of a dict view,
 * not one the snippet made. The walk runs no Python frames, and a format string (it has
 * braces) is never interned: a string the snippet made is no library code's constant. */
static bool
is_caller_constant(PyObject *s)
{
    PyFrameObject *frame = PyEval_GetFrame();
    if (!frame)
        return false;
    PyCodeObject *code = PyFrame_GetCode(frame);
    bool found = false;
    for (Py_ssize_t i = 0; !found && i < PyTuple_GET_SIZE(code->co_consts); i++)
        found = PyTuple_GET_ITEM(code->co_consts, i) == s;
    Py_DECREF(code);
    return found;
}

static PyObject *
call_checked(PyObject *real, PyObject *self, PyObject *const *args, Py_ssize_t nargsf,
             PyObject *kwnames)
{
    if (exec_audit_active() && !is_caller_constant(self) && check_format_string(self, 0) < 0)
        return NULL;
    PyObject *bound = Py_TYPE(real)->tp_descr_get(real, self, (PyObject *) Py_TYPE(self));
    if (!bound)
        return NULL;
    PyObject *v = PyObject_Vectorcall(bound, args, nargsf, kwnames);
    Py_DECREF(bound);
    return v;
}

static PyObject *
checked_str_format(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
    return call_checked(real_str_format, self, args, nargsf, kwnames);
}

static PyObject *
checked_str_format_map(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
    return call_checked(real_str_format_map, self, args, nargsf, kwnames);
}

static PyMethodDef checked_str_defs[] = {
        {"format", (PyCFunction) (void (*)(void)) checked_str_format, METH_FASTCALL | METH_KEYWORDS,
         "str.format with the executor's field-name checks while a snippet runs"},
        {"format_map", (PyCFunction) (void (*)(void)) checked_str_format_map,
         METH_FASTCALL | METH_KEYWORDS,
         "str.format_map with the executor's field-name checks while a snippet runs"},
};

static int
replace_str_method(PyObject *dict, const PyMethodDef *def, PyObject **ret_real)
{
    PyObject *real = PyDict_GetItemString(dict, def->ml_name);
    if (!real || Py_TYPE(real) != &PyMethodDescr_Type) {
        PyErr_Format(PyExc_RuntimeError, "str.%s is not CPython's method", def->ml_name);
        return -1;
    }
    PyObject *checked = PyDescr_NewMethod(&PyUnicode_Type, (PyMethodDef *) def);
    if (!checked)
        return -1;
    *ret_real = Py_NewRef(real);
    int rc = PyDict_SetItemString(dict, def->ml_name, checked);
    Py_DECREF(checked);
    return rc;
}

int
exec_guard_str_format_install(void)
{
    if (real_str_format)
        return 0;
    /* CPython 3.12 moved the dicts of static types out of tp_dict: fail closed there */
    PyObject *dict = PyUnicode_Type.tp_dict;
    if (load_string_helpers() < 0)
        return -1;
    if (!dict) {
        PyErr_SetString(PyExc_RuntimeError, "str has no type dict to install str.format's check");
        return -1;
    }
    if (replace_str_method(dict, &checked_str_defs[0], &real_str_format) < 0 ||
        replace_str_method(dict, &checked_str_defs[1], &real_str_format_map) < 0)
        return -1;
    PyType_Modified(&PyUnicode_Type);
    return 0;
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
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(parts); i++) {
        PyObject *part = PyList_GET_ITEM(parts, i);
        rc = exec_check_attr_name(NULL, part);
        /* methodcaller('format', obj)(template) would run str.format with no field check (the
         * template arrives only at the call); attrgetter('format')(str) would hand it over */
        if (rc == 0 && (PyUnicode_CompareWithASCIIString(part, "format") == 0 ||
                        PyUnicode_CompareWithASCIIString(part, "format_map") == 0)) {
            PyErr_SetString(exec_InterpreterError,
                            "operator.attrgetter/methodcaller cannot reach format or format_map "
                            "(their field names are checked only when called as str methods)");
            rc = -1;
        }
    }
    Py_DECREF(parts);
    return rc;
}

/* What the snippet's getters return is checked too: attrgetter('sys', 'math')(statistics)
 * would hand out a module inside a tuple, attrgetter('sys.modules') walk through one, and the
 * real getter objects are called by C code (map, sorted's key) where the walk sees no result.
 * So the getter the snippet holds is the executor's: attrgetter walks each dotted name with
 * exec_getattr (the . operator's checks, on every step's value), methodcaller reads the
 * method so and checks what it returns. The real getter is still built first, for CPython's
 * argument errors. */

/* The run of the environment whose capsule this is, or NULL with an exception. */
static struct exec_run *
getter_run(PyObject *capsule, const char *what, Py_ssize_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 1 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_Format(PyExc_TypeError, "%s expected 1 argument, got %zd", what,
                     nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0));
        return NULL;
    }
    return exec_run_of(capsule);
}

/* obj.a.b.c, each step through exec_getattr; parts is a tuple of plain str. */
static PyObject *
walk_path(struct exec_run *r, PyObject *obj, PyObject *parts)
{
    PyObject *v = Py_NewRef(obj);
    for (Py_ssize_t i = 0; v && i < PyTuple_GET_SIZE(parts); i++)
        Py_SETREF(v, exec_getattr(r, v, PyTuple_GET_ITEM(parts, i)));
    return v;
}

/* self = (capsule, (parts of each name, ...)) */
static PyObject *
checked_attrgetter_call(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
    struct exec_run *r = getter_run(PyTuple_GET_ITEM(self, 0), "attrgetter", nargsf, kwnames);
    PyObject *paths = PyTuple_GET_ITEM(self, 1);
    Py_ssize_t n = PyTuple_GET_SIZE(paths);
    if (!r)
        return NULL;
    if (n == 1)
        return walk_path(r, args[0], PyTuple_GET_ITEM(paths, 0));
    PyObject *res = PyTuple_New(n);
    for (Py_ssize_t i = 0; res && i < n; i++) {
        PyObject *v = walk_path(r, args[0], PyTuple_GET_ITEM(paths, i));
        if (!v)
            Py_CLEAR(res);
        else
            PyTuple_SET_ITEM(res, i, v);
    }
    return res;
}

/* self = (capsule, name, args, kwargs or None) */
static PyObject *
checked_methodcaller_call(PyObject *self, PyObject *const *args, Py_ssize_t nargsf,
                          PyObject *kwnames)
{
    struct exec_run *r = getter_run(PyTuple_GET_ITEM(self, 0), "methodcaller", nargsf, kwnames);
    PyObject *m = r ? exec_getattr(r, args[0], PyTuple_GET_ITEM(self, 1)) : NULL;
    PyObject *kw = PyTuple_GET_ITEM(self, 3);
    PyObject *res =
            m ? PyObject_Call(m, PyTuple_GET_ITEM(self, 2), kw == Py_None ? NULL : kw) : NULL;
    Py_XDECREF(m);
    if (res && exec_check_value(r, res) < 0)
        Py_CLEAR(res);
    return res;
}

static PyMethodDef checked_attrgetter_def = {
        "attrgetter", (PyCFunction) (void (*)(void)) checked_attrgetter_call,
        METH_FASTCALL | METH_KEYWORDS, "operator.attrgetter with the executor's checks"};
static PyMethodDef checked_methodcaller_def = {
        "methodcaller", (PyCFunction) (void (*)(void)) checked_methodcaller_call,
        METH_FASTCALL | METH_KEYWORDS, "operator.methodcaller with the executor's checks"};

/* The dotted names of attrgetter(*names), each split into its parts (names[i] plain str). */
static PyObject *
split_names(PyObject *const *names, Py_ssize_t n)
{
    static PyObject *dot;
    if (!dot && !(dot = PyUnicode_InternFromString(".")))
        return NULL;
    PyObject *paths = PyTuple_New(n);
    for (Py_ssize_t i = 0; paths && i < n; i++) {
        PyObject *parts = PyUnicode_Split(names[i], dot, -1);
        PyObject *t = parts ? PyList_AsTuple(parts) : NULL;
        Py_XDECREF(parts);
        if (!t)
            Py_CLEAR(paths);
        else
            PyTuple_SET_ITEM(paths, i, t);
    }
    return paths;
}

/* methodcaller(name, *args, **kwargs)'s state: (capsule, name, args, kwargs or None). */
static PyObject *
methodcaller_state(PyObject *capsule, PyObject *const *copy, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *margs = PyTuple_New(nargs - 1), *kw = Py_NewRef(Py_None);
    for (Py_ssize_t i = 1; margs && i < nargs; i++)
        PyTuple_SET_ITEM(margs, i - 1, Py_NewRef(copy[i]));
    if (kwnames && PyTuple_GET_SIZE(kwnames))
        Py_SETREF(kw, PyDict_New());
    for (Py_ssize_t i = 0; kw && kw != Py_None && i < PyTuple_GET_SIZE(kwnames); i++)
        if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), copy[nargs + i]) < 0)
            Py_CLEAR(kw);
    PyObject *state = margs && kw ? PyTuple_Pack(4, capsule, copy[0], margs, kw) : NULL;
    Py_XDECREF(margs);
    Py_XDECREF(kw);
    return state;
}

/* The executor's getter for a call of the real class that succeeded (copy: its arguments,
 * names checked and plain str). */
static PyObject *
checked_getter_new(PyObject *real, PyObject *capsule, PyObject *const *copy, Py_ssize_t nargs,
                   PyObject *kwnames)
{
    PyObject *state;
    if (real == methodcaller_type) {
        state = methodcaller_state(capsule, copy, nargs, kwnames);
    } else {
        PyObject *paths = split_names(copy, nargs);
        state = paths ? PyTuple_Pack(2, capsule, paths) : NULL;
        Py_XDECREF(paths);
    }
    PyObject *g = state ? PyCFunction_New(real == methodcaller_type ? &checked_methodcaller_def
                                                                    : &checked_attrgetter_def,
                                          state)
                        : NULL;
    Py_XDECREF(state);
    return g;
}

/* self = (the real class, the environment's capsule) */
static PyObject *
guarded_getter(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
    PyObject *real = PyTuple_GET_ITEM(self, 0);
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t names = real == methodcaller_type ? (nargs > 0) : nargs;
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
    /* the real class raises CPython's errors for missing or non-str names */
    res = PyObject_Vectorcall(real, copy, nargs, kwnames);
    if (res)
        Py_SETREF(res, checked_getter_new(real, PyTuple_GET_ITEM(self, 1), copy, nargs, kwnames));
out:
    for (Py_ssize_t i = 0; i < total; i++)
        Py_XDECREF(copy[i]);
    PyMem_Free(copy);
    return res;
}

static PyMethodDef guarded_getter_def = {
        "attrgetter", (PyCFunction) (void (*)(void)) guarded_getter, METH_FASTCALL | METH_KEYWORDS,
        "operator.attrgetter/methodcaller with the executor's dunder check"};

/* *ret_a and *ret_b: attributes a and b of module, once the snippet's imports have loaded it
 * (never imported here); both or neither. Returns whether they are set. */
static bool
load_pair(const char *module, const char *a, PyObject **ret_a, const char *b, PyObject **ret_b)
{
    if (*ret_a)
        return true;
    PyObject *name = PyUnicode_FromString(module);
    PyObject *mod = name ? PyImport_GetModule(name) : NULL;
    Py_XDECREF(name);
    if (mod) {
        *ret_a = PyObject_GetAttrString(mod, a);
        *ret_b = PyObject_GetAttrString(mod, b);
        Py_DECREF(mod);
    }
    if (!*ret_a || !*ret_b) {
        Py_CLEAR(*ret_a);
        Py_CLEAR(*ret_b);
    }
    PyErr_Clear();
    return *ret_a != NULL;
}

/* Finds the two classes once _operator is loaded; false while it is not. */
static bool
load_getter_types(void)
{
    return load_pair("_operator", "attrgetter", &attrgetter_type, "methodcaller",
                     &methodcaller_type);
}

/* string.Formatter resolves "0.attr" fields with CPython's getattr in get_field (which
 * format and vformat call), and get_field and get_value hand the objects they reach to the
 * caller: get_field('0.sys', [statistics], {}) returned (sys, 0). The snippet gets a subclass
 * whose get_field checks the field's names first, then walks it itself, checking every
 * step's value as the . operator and a subscript do, and whose get_value checks what it
 * returns. Built per environment, since the checks need its policy: the methods are bound
 * to its capsule. */

/* args[i] as the real Formatter's method `name` would compute it, then checked as a value. */
static PyObject *
call_real_checked(struct exec_run *r, const char *name, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *real = PyObject_GetAttrString(formatter_type, name);
    PyObject *res = real ? PyObject_Vectorcall(real, args, nargs, NULL) : NULL;
    Py_XDECREF(real);
    if (res && exec_check_value(r, res) < 0)
        Py_CLEAR(res);
    return res;
}

/* self = the environment's capsule; args = (formatter, key, args, kwargs) */
static PyObject *
checked_get_value(PyObject *capsule, PyObject *const *args, Py_ssize_t nargs)
{
    struct exec_run *r = exec_run_of(capsule);
    return r ? call_real_checked(r, "get_value", args, nargs) : NULL;
}

/* obj.attr or obj[key], one step of a field, checked as the walk checks it. */
static PyObject *
field_step(struct exec_run *r, PyObject *obj, PyObject *step)
{
    PyObject *key = PyTuple_GET_ITEM(step, 1);
    int is_attr = PyObject_IsTrue(PyTuple_GET_ITEM(step, 0));
    if (is_attr < 0)
        return NULL;
    if (is_attr)
        return exec_getattr(r, obj, key);
    PyObject *v = PyObject_GetItem(obj, key);
    if (v && exec_check_value(r, v) < 0)
        Py_CLEAR(v);
    return v;
}

/* Formatter.get_field as string.py writes it: get_value for the first part, then each
 * attribute or index, here each checked. Returns (obj, first). */
static PyObject *
walk_field(struct exec_run *r, PyObject *const *args)
{
    PyObject *split = PyObject_CallOneArg(field_name_split, args[1]), *step;
    if (!split)
        return NULL;
    PyObject *first = PyTuple_GET_ITEM(split, 0);
    PyObject *obj = PyObject_CallMethod(args[0], "get_value", "OOO", first, args[2], args[3]);
    if (obj && exec_check_value(r, obj) < 0)
        Py_CLEAR(obj);
    PyObject *rest = obj ? PyObject_GetIter(PyTuple_GET_ITEM(split, 1)) : NULL;
    while (rest && obj && (step = PyIter_Next(rest))) {
        Py_SETREF(obj, field_step(r, obj, step));
        Py_DECREF(step);
    }
    PyObject *res = obj && !PyErr_Occurred() ? PyTuple_Pack(2, obj, first) : NULL;
    Py_XDECREF(rest);
    Py_XDECREF(obj);
    Py_DECREF(split);
    return res;
}

/* self = the environment's capsule; args = (formatter, field_name, args, kwargs) */
static PyObject *
checked_get_field(PyObject *capsule, PyObject *const *args, Py_ssize_t nargs)
{
    struct exec_run *r = exec_run_of(capsule);
    if (!r)
        return NULL;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "get_field(field_name, args, kwargs)");
        return NULL;
    }
    if (!PyUnicode_Check(args[1])) /* the real one raises CPython's TypeError */
        return call_real_checked(r, "get_field", args, nargs);
    /* "{" + field + "}" goes through the same name check as str.format's fields, before
     * anything runs */
    PyObject *fmt = PyUnicode_FromFormat("{%U}", args[1]);
    int rc = fmt ? check_format_string(fmt, 0) : -1;
    Py_XDECREF(fmt);
    return rc < 0 ? NULL : walk_field(r, args);
}

static PyMethodDef checked_formatter_defs[] = {
        {"get_field", (PyCFunction) (void (*)(void)) checked_get_field, METH_FASTCALL,
         "get_field with the executor's checks"},
        {"get_value", (PyCFunction) (void (*)(void)) checked_get_value, METH_FASTCALL,
         "get_value with the executor's checks"},
};

/* A method of the checked subclass: bound to the capsule, taking the formatter as args[0]. */
static int
add_formatter_method(PyObject *dict, PyMethodDef *def, PyObject *capsule)
{
    PyObject *cf = PyCFunction_New(def, capsule);
    PyObject *meth = cf ? PyInstanceMethod_New(cf) : NULL;
    int rc = meth ? PyDict_SetItemString(dict, def->ml_name, meth) : -1;
    Py_XDECREF(cf);
    Py_XDECREF(meth);
    return rc;
}

static PyObject *
checked_formatter_new(struct exec_env *env)
{
    PyObject *dict = Py_BuildValue("{ss}", "__module__", "string");
    if (!dict || load_string_helpers() < 0 ||
        add_formatter_method(dict, &checked_formatter_defs[0], env->capsule) < 0 ||
        add_formatter_method(dict, &checked_formatter_defs[1], env->capsule) < 0) {
        Py_XDECREF(dict);
        return NULL;
    }
    PyObject *t = PyObject_CallFunction((PyObject *) &PyType_Type, "s(O)O", "Formatter",
                                        formatter_type, dict);
    Py_DECREF(dict);
    return t;
}

/* Steals v; string.Formatter becomes the environment's checked subclass. */
static PyObject *
guard_formatter(struct exec_run *r, PyObject *v)
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
    Py_DECREF(v);
    if (!r->env->formatter_type && !(r->env->formatter_type = checked_formatter_new(r->env)))
        return NULL;
    return Py_NewRef(r->env->formatter_type);
}

/* functools.update_wrapper(wrapper, wrapped, assigned, updated) and wraps(wrapped, assigned,
 * updated) copy each named attribute with CPython's getattr/setattr (a wrapper class with
 * __setattr__ receives the value: assigned=('__globals__',) handed over a module's globals)
 * and update the wrapper's __dict__ from the wrapped one's (a module's __dict__ is its
 * globals, a class's holds type.__subclasses__). The guard checks the names as the policy
 * does, lets only the default __dict__ update through, never from a module or a class, and
 * passes the real function a snapshot of the names (a user iterable could change them). */
static PyObject *update_wrapper_fn, *wraps_fn; /* functools', once it is loaded */

static bool
load_functools(void)
{
    return load_pair("functools", "update_wrapper", &update_wrapper_fn, "wraps", &wraps_fn);
}

/* The argument named kw, or at position pos; its slot in the call's argument array. */
static Py_ssize_t
arg_slot(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, Py_ssize_t pos, const char *kw)
{
    if (pos < nargs)
        return pos;
    for (Py_ssize_t i = 0; kwnames && i < PyTuple_GET_SIZE(kwnames); i++)
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), kw) == 0)
            return nargs + i;
    return -1;
}

/* A tuple of the names in seq, each a plain str the policy accepts (the defaults pass). */
static PyObject *
checked_names(PyObject *seq, bool *has_dict)
{
    PyObject *t = PySequence_Tuple(seq);
    for (Py_ssize_t i = 0; t && i < PyTuple_GET_SIZE(t); i++) {
        PyObject *n = PyTuple_GET_ITEM(t, i);
        if (!PyUnicode_CheckExact(n)) {
            PyErr_SetString(exec_InterpreterError,
                            "functools.update_wrapper/wraps: attribute names must be plain str");
            Py_CLEAR(t);
        } else if (PyUnicode_CompareWithASCIIString(n, "__dict__") == 0) {
            *has_dict = true;
        } else if (exec_check_attr_store_name(NULL, n) < 0) {
            /* set on the wrapper (assigned) or changed in place (updated) */
            Py_CLEAR(t);
        }
    }
    return t;
}

/* self = the real update_wrapper */
static PyObject *
guarded_update_wrapper(PyObject *self, PyObject *const *args, Py_ssize_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    Py_ssize_t w = arg_slot(args, nargs, kwnames, 1, "wrapped");
    Py_ssize_t slots[2] = {arg_slot(args, nargs, kwnames, 2, "assigned"),
                           arg_slot(args, nargs, kwnames, 3, "updated")};
    PyObject **copy = PyMem_Calloc(total + 1, sizeof(PyObject *));
    if (!copy)
        return PyErr_NoMemory();
    PyObject *res = NULL;
    for (Py_ssize_t i = 0; i < total; i++)
        copy[i] = Py_NewRef(args[i]);
    bool has_dict = slots[1] < 0; /* the default updated is ('__dict__',) */
    for (int k = 0; k < 2; k++) {
        if (slots[k] < 0)
            continue;
        PyObject *t = checked_names(args[slots[k]], &has_dict);
        if (!t)
            goto out;
        Py_SETREF(copy[slots[k]], t);
    }
    if (w >= 0 && (PyModule_Check(args[w]) || (has_dict && PyType_Check(args[w])))) {
        PyErr_Format(exec_InterpreterError,
                     "functools.update_wrapper/wraps cannot copy from a %s: it would hand over "
                     "its __dict__ or its private names",
                     PyModule_Check(args[w]) ? "module" : "class");
        goto out;
    }
    /* It sets the names on the wrapper in functools' own code: never on a module or a class
     * the snippet did not make, nor one of typing's special forms and aliases, which `.` and
     * setattr refuse. typing.Union as the wrapper had its _getitem replaced (case 351); an
     * alias keeps its dunders and __dict__ update to itself, and the cached typing.List[int]
     * took ClassVar[int]'s __origin__ for every caller (case 358). */
    Py_ssize_t to = arg_slot(args, nargs, kwnames, 0, "wrapper");
    if (to >= 0 &&
        (PyModule_Check(args[to]) || exec_is_typing_object(args[to]) ||
         (PyType_Check(args[to]) && !exec_class_is_snippets((PyTypeObject *) args[to])))) {
        PyErr_Format(exec_InterpreterError,
                     "functools.update_wrapper/wraps cannot write into a %s: only objects and "
                     "the snippet's own classes may be changed",
                     PyModule_Check(args[to]) ? "module"
                     : PyType_Check(args[to]) ? "library's class"
                                              : "typing object");
        goto out;
    }
    res = PyObject_Vectorcall(self, copy, nargs, kwnames);
out:
    for (Py_ssize_t i = 0; i < total; i++)
        Py_XDECREF(copy[i]);
    PyMem_Free(copy);
    return res;
}

static PyMethodDef guarded_update_wrapper_def = {
        "update_wrapper", (PyCFunction) (void (*)(void)) guarded_update_wrapper,
        METH_FASTCALL | METH_KEYWORDS,
        "functools.update_wrapper with the executor's attribute-name checks"};

/* wraps(wrapped, assigned=..., updated=...) is partial(update_wrapper, ...): the real one would
 * bind the real update_wrapper, and a partial's keywords stay mutable (p.keywords['assigned']),
 * so the partial binds the guarded one, which checks at each call. */
static PyObject *
guarded_wraps(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static const char *const names[] = {"wrapped", "assigned", "updated"};
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n > 3 || (n == 0 && (!kwargs || !PyDict_GetItemString(kwargs, "wrapped")))) {
        PyErr_SetString(PyExc_TypeError, "wraps() takes wrapped, assigned and updated");
        return NULL;
    }
    PyObject *kw = kwargs ? PyDict_Copy(kwargs) : PyDict_New();
    for (Py_ssize_t i = 0; kw && i < n; i++)
        if (PyDict_SetItemString(kw, names[i], PyTuple_GET_ITEM(args, i)) < 0)
            Py_CLEAR(kw);
    PyObject *fn = exec_import_own("functools");
    PyObject *partial = fn ? PyObject_GetAttrString(fn, "partial") : NULL;
    PyObject *uw = partial ? PyCFunction_New(&guarded_update_wrapper_def, update_wrapper_fn) : NULL;
    PyObject *res = uw && kw ? PyObject_VectorcallDict(partial, &uw, 1, kw) : NULL;
    Py_XDECREF(uw);
    Py_XDECREF(partial);
    Py_XDECREF(fn);
    Py_XDECREF(kw);
    return res;
}

static PyMethodDef guarded_wraps_def = {
        "wraps", (PyCFunction) (void (*)(void)) guarded_wraps, METH_VARARGS | METH_KEYWORDS,
        "functools.wraps binding the executor's checked update_wrapper"};

static PyObject *
guard_functools(PyObject *v)
{
    if (!load_functools() || (v != update_wrapper_fn && v != wraps_fn))
        return v;
    PyObject *g =
            PyCFunction_New(v == wraps_fn ? &guarded_wraps_def : &guarded_update_wrapper_def, v);
    Py_DECREF(v);
    return g;
}

bool
exec_is_unguarded_function(PyObject *v)
{
    return load_functools() && (v == update_wrapper_fn || v == wraps_fn);
}

PyObject *
exec_guard_getters(struct exec_run *r, PyObject *v)
{
    if (PyFunction_Check(v))
        return guard_functools(v);
    if (!PyType_Check(v))
        return v;
    if (!(v = guard_formatter(r, v)) || !is_getter_name(v) || !load_getter_types())
        return v;
    if (v != attrgetter_type && v != methodcaller_type)
        return v;
    /* bound to the environment: the getters it makes check values with its policy */
    PyObject *self = PyTuple_Pack(2, v, r->env->capsule);
    PyObject *g = self ? PyCFunction_New(&guarded_getter_def, self) : NULL;
    Py_XDECREF(self);
    Py_DECREF(v);
    return g;
}

bool
exec_is_unguarded_class(PyObject *v)
{
    return (is_getter_name(v) && load_getter_types() &&
            (v == attrgetter_type || v == methodcaller_type)) ||
           (formatter_type && v == formatter_type);
}
