/* The Python frame a run's snippet stands on. The walk runs no Python frames, but library code
 * asks its caller's frame which module called it: enum's functional API and namedtuple read
 * sys._getframe(n).f_globals['__name__'] to name the new class's module, typing's NamedTuple,
 * TypedDict and NewType likewise, and type(name, bases, ns) reads the current frame's globals.
 * With no frame below them, enum marked its classes '<unknown>' (then refused as a module the
 * profile does not allow) and namedtuple's came out as collections'. In CPython a script's
 * module frame answers '__main__', so each run is made to stand on one: a tiny Python function
 * whose globals are {'__name__': '__main__', '__builtins__': <the frame's builtins>}, calling
 * back into C, which runs the snippet. That frame is the one the audit hook records as
 * the snippet's (exec_audit_enter runs inside it), so "the caller is the snippet" keeps meaning
 * what it meant with no frame. The snippet never holds it: frames, and dicts holding
 * __builtins__, are refused as values, and the frame-reaching attributes by name. Its globals
 * are nobody's namespace (the snippet's is the environment's dict; this one is the
 * environment's trampoline's, and put back to those two entries before a run if anything
 * changed it), so library code writing into its caller's globals (the warnings registry)
 * changes nothing anyone trusts. The trampoline, its globals and the frame's builtins are made
 * with the prebuilt environment, in the zygote: a worker making the frame's builtins took a
 * reference to each builtin object, copying ~70 pages, and the trampoline a few more.
 *
 * Library code may still hand those globals out: pandas' Scope copied its caller's f_globals
 * into a ChainMap, and C code (map, operator.itemgetter, operator.call) took the real builtins
 * out of it and called __import__('os') where no value check looks. So nothing reachable from
 * them is more than the snippet has: the frame's builtins are the environment's own (made
 * once per environment), holding exactly the CPython objects the snippet's builtins hold
 * (not eval, exec, open, getattr, __build_class__ ...), and an __import__ of its own. C code
 * reads that __import__ while the snippet's frame is current (PyImport_Import: strptime's
 * _strptime, pickle saving a global), and functions made with globals lacking __builtins__
 * (types.FunctionType) take these builtins. It loads only the lazy imports of C code (a list
 * found by logging) and what the run may import, refuses the rest with a message naming the
 * module, and answers None: PyImport_Import takes the module from sys.modules, and whoever
 * else calls it gets no module. The frame's builtins and their __import__ are refused as
 * values like the real ones. Snippet code that library Python code calls back (a function,
 * a generator resumed) is put on a trampoline frame of its own first (exec_main_frame_callback),
 * so library code it calls in turn finds __main__'s globals one frame up, not the library's
 * that called back, whose globals hold the real builtins. Library code sees the stack end at
 * the snippet's frame: sys._getframe past it is refused by the audit hook, f_back there
 * answers None (frame_view.c), and modules known to hand out their caller's globals at a depth
 * the caller chooses are refused by name as well (policy.c, caller_frame_readers). */
#include "exec_internal.h"

/* `lambda run: run()`, renamed <module>: compiled once, before any run (no audit event then). */
static PyObject *main_code;
static PyObject *main_name;    /* "__main__" */
static PyObject *name_key;     /* "__name__" */
static PyObject *builtins_key; /* "__builtins__" */
static PyObject *main_entry;   /* main_enter, the trampoline's argument */

struct main_call {
    void (*fn)(void *arg);
    void *arg;
    bool ran;
};

/* The call the trampoline's callback makes: taken once, so that the callback (a local of the
 * trampoline's frame) cannot run a snippet again should library code find it there. */
static struct main_call *pending;

static PyObject *
main_enter(PyObject *self, PyObject *unused)
{
    (void) self;
    (void) unused;
    struct main_call *c = pending;
    pending = NULL;
    if (!c) {
        PyErr_SetString(PyExc_RuntimeError, "pyfence's run entry was called outside a run");
        return NULL;
    }
    c->ran = true;
    c->fn(c->arg);
    /* the run reports its own errors in its result; whatever a finaliser left is not ours */
    PyErr_Clear();
    return Py_NewRef(Py_None);
}

static PyMethodDef main_enter_def = {"run", main_enter, METH_NOARGS, NULL};

int
exec_main_frame_init(void)
{
    if (main_code)
        return 0;
    if ((!main_name && !(main_name = PyUnicode_InternFromString("__main__"))) ||
        (!name_key && !(name_key = PyUnicode_InternFromString("__name__"))) ||
        (!builtins_key && !(builtins_key = PyUnicode_InternFromString("__builtins__"))) ||
        (!main_entry && !(main_entry = PyCFunction_New(&main_enter_def, NULL))))
        return -1;
    PyObject *expr = Py_CompileString("lambda run: run()", "<snippet>", Py_eval_input);
    PyObject *ns = expr ? PyDict_New() : NULL;
    PyObject *lambda = ns ? PyEval_EvalCode(expr, ns, ns) : NULL;
    PyObject *replace = lambda && PyFunction_Check(lambda)
                                ? PyObject_GetAttrString(PyFunction_GET_CODE(lambda), "replace")
                                : NULL;
    PyObject *kw = replace ? Py_BuildValue("{s:s}", "co_name", "<module>") : NULL;
    PyObject *empty = kw ? PyTuple_New(0) : NULL;
    main_code = empty ? PyObject_Call(replace, empty, kw) : NULL;
    Py_XDECREF(empty);
    Py_XDECREF(kw);
    Py_XDECREF(replace);
    Py_XDECREF(lambda);
    Py_XDECREF(ns);
    Py_XDECREF(expr);
    if (main_code && !PyCode_Check(main_code))
        Py_CLEAR(main_code);
    if (!main_code && !PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "cannot build the snippet's __main__ frame");
    return main_code ? 0 : -1;
}

/* What C code imports, besides the run's allowed modules, while the snippet's frame is current
 * (PyImport_Import reads __import__ from that frame's builtins): found by logging every name
 * the frame's __import__ was asked for over the executor's cases and policy suites and
 * realistic numpy/pandas/datetime/decimal/json/pickle code. The executor's own checks import
 * builtins; datetime.strptime imports _strptime, timetuple()/strftime time; pickle imports the
 * module of each global it saves (datetime, decimal, collections, functools, math, __main__
 * for the snippet's classes); 'x'.encode('idna') unicodedata. Each is the standard library's
 * and loaded for its side effect only (the answer is None). */
static const char *const lazy_imports[] = {
        "__main__", "_strptime", "builtins", "collections", "datetime",
        "decimal",  "functools", "math",     "time",        "unicodedata",
};

static bool
lazy_import_allowed(const char *name)
{
    for (size_t i = 0; i < sizeof(lazy_imports) / sizeof(lazy_imports[0]); i++)
        if (strcmp(lazy_imports[i], name) == 0)
            return true;
    return false;
}

/* Whether the frame's __import__ may load name: a lazy import of C code, or a module whose
 * functions the run in progress may hold (policy.c: an allowed module, or a submodule of an
 * allowed package, where its objects' methods are): pickle saving a pandas.DataFrame imports
 * pandas.core.frame. */
static bool
frame_import_allowed(const char *name)
{
    if (lazy_import_allowed(name))
        return true;
    struct exec_run *r = exec_audit_snippet_run();
    return r && exec_module_functions_allowed(r->env, name);
}

/* The trampoline's __import__(name, globals=None, locals=None, fromlist=(), level=0). Its
 * callers are C code calling PyImport_Import, which takes the module from sys.modules once
 * the call returns: so it imports for the side effect only and answers None. Snippet code can
 * reach it too (library code copies its caller's globals: pandas' Scope), so it hands out no
 * module, imports only what frame_import_allowed says, and no relative import (the package
 * would be read from globals the caller chooses). fromlist is not used: PyImport_Import's is
 * empty, and the module named is imported with its parents anyway. */
static PyObject *
frame_import(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void) self;
    static char *kwlist[] = {"name", "globals", "locals", "fromlist", "level", NULL};
    PyObject *name, *globals = NULL, *locals = NULL, *fromlist = NULL;
    int level = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "U|OOOi:__import__", kwlist, &name, &globals,
                                     &locals, &fromlist, &level))
        return NULL;
    if (!PyUnicode_CheckExact(name))
        return exec_fail(NULL, ABORT_NONE, "Forbidden import by C code: the name is no plain str");
    const char *n = PyUnicode_AsUTF8(name);
    if (!n)
        return NULL;
    if (level != 0)
        return exec_fail(NULL, ABORT_NONE, "Forbidden relative import of module %s by C code", n);
    if (!frame_import_allowed(n))
        return exec_fail(NULL, ABORT_NONE,
                         "Forbidden import of module %s by C code called from the snippet: it "
                         "is not among the run's allowed imports",
                         n);
    PyObject *m = PyImport_ImportModuleLevelObject(name, NULL, NULL, NULL, 0);
    if (!m)
        return NULL;
    Py_DECREF(m);
    return Py_NewRef(Py_None);
}

PyObject *
exec_import_own(const char *name)
{
    PyObject *n = PyUnicode_FromString(name);
    PyObject *m = n ? PyImport_ImportModuleLevelObject(n, NULL, NULL, NULL, 0) : NULL;
    Py_XDECREF(n);
    return m;
}

static PyMethodDef frame_import_def = {
        "__import__", (PyCFunction) (void (*)(void)) frame_import, METH_VARARGS | METH_KEYWORDS,
        "__import__(name, ...): the lazy imports of C code called by a snippet; answers None"};

bool
exec_main_frame_is_import(PyObject *v)
{
    return PyCFunction_Check(v) && ((PyCFunctionObject *) v)->m_ml == &frame_import_def;
}

PyObject *
exec_main_frame_builtins_new(PyObject *snippet_builtins)
{
    PyObject *real = PyEval_GetBuiltins(); /* borrowed: the interpreter's, outside runs */
    PyObject *dict = real ? PyDict_New() : NULL;
    PyObject *imp = dict ? PyCFunction_New(&frame_import_def, NULL) : NULL;
    if (!imp || PyDict_SetItemString(dict, "__import__", imp) < 0)
        goto fail;
    Py_CLEAR(imp);
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(snippet_builtins, &pos, &k, &v)) {
        /* CPython's own object under its own name: not one of the environment's checking
         * versions (getattr, print), which are bound to a run and belong to the walk */
        PyObject *own = PyDict_GetItemWithError(real, k);
        if (own == v && PyDict_SetItem(dict, k, v) < 0)
            goto fail;
        if (!own && PyErr_Occurred())
            goto fail;
    }
    return dict;
fail:
    Py_XDECREF(imp);
    Py_XDECREF(dict);
    return NULL;
}

int
exec_main_frame_builtins_update(PyObject *frame_builtins, PyObject *snippet_builtins,
                                const char *name)
{
    PyObject *real = PyEval_GetBuiltins();
    PyObject *v = PyDict_GetItemString(snippet_builtins, name);
    PyObject *own = real ? PyDict_GetItemString(real, name) : NULL;
    if (v && own == v)
        return PyDict_SetItemString(frame_builtins, name, v);
    if (strcmp(name, "__import__") == 0) /* the frame's own, whatever the snippet's is */
        return 0;
    if (PyDict_DelItemString(frame_builtins, name) < 0) {
        if (!PyErr_ExceptionMatches(PyExc_KeyError))
            return -1;
        PyErr_Clear();
    }
    return 0;
}

/* Puts the trampoline's globals back to what a run stands on: __main__, with the frame's
 * builtins (C code calling PyImport_Import reads __import__ from the current frame's globals'
 * __builtins__). Reads only when nothing changed them, so a worker copies no page for it. */
static int
main_globals_reset(PyObject *globals, PyObject *builtins)
{
    if (PyDict_GET_SIZE(globals) == 2 && PyDict_GetItem(globals, name_key) == main_name &&
        PyDict_GetItem(globals, builtins_key) == builtins)
        return 0;
    PyDict_Clear(globals);
    return PyDict_SetItem(globals, name_key, main_name) < 0 ||
                           PyDict_SetItem(globals, builtins_key, builtins) < 0
                   ? -1
                   : 0;
}

PyObject *
exec_main_frame_new(PyObject *builtins)
{
    PyObject *globals = main_code ? PyDict_New() : NULL;
    PyObject *fn = NULL;
    if (globals && main_globals_reset(globals, builtins) == 0)
        fn = PyFunction_New(main_code, globals);
    Py_XDECREF(globals);
    if (!fn && !PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "the executor's __main__ frame is not initialised");
    return fn;
}

/* Runs fn(arg) inside main_fn's frame: true if it ran, false with an exception set when that
 * frame could not be made (out of memory, Python's recursion limit). */
static bool
trampoline_run(PyObject *main_fn, PyObject *builtins, void (*fn)(void *arg), void *arg)
{
    struct main_call c = {.fn = fn, .arg = arg};
    if (!main_fn || !PyFunction_Check(main_fn) || PyFunction_GET_CODE(main_fn) != main_code) {
        PyErr_SetString(PyExc_RuntimeError, "the environment's __main__ frame is not usable");
        return false;
    }
    if (main_globals_reset(PyFunction_GET_GLOBALS(main_fn), builtins) < 0)
        return false;
    struct main_call *outer = pending;
    pending = &c;
    PyObject *res = PyObject_CallOneArg(main_fn, main_entry);
    pending = outer;
    Py_XDECREF(res);
    if (c.ran) {
        PyErr_Clear(); /* the run reports its own errors; whatever a finaliser left is not ours */
        return true;
    }
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "the snippet's __main__ frame did not run");
    return false;
}

void
exec_main_frame_call(PyObject *main_fn, PyObject *builtins, void (*fn)(void *arg), void *arg)
{
    /* no frame could be made (out of memory): run as before, standing on no frame, where
     * library code asking its caller's module gets no answer */
    if (!trampoline_run(main_fn, builtins, fn, arg)) {
        PyErr_Clear();
        fn(arg);
    }
}

struct callback_call {
    void (*fn)(void *arg);
    void *arg;
    PyObject *type, *value, *traceback;
};

static void
callback_in_main(void *arg)
{
    struct callback_call *c = arg;
    PyErr_Restore(c->type, c->value, c->traceback);
    PyFrameObject *audit_before = exec_audit_snippet_enter();
    c->fn(c->arg);
    exec_audit_snippet_leave(audit_before);
    PyErr_Fetch(&c->type, &c->value, &c->traceback);
}

int
exec_main_frame_callback(struct exec_env *env, void (*fn)(void *arg), void *arg)
{
    /* called by the walk, or by C code it called: the snippet's frame is current already */
    if (exec_audit_snippet_run()) {
        fn(arg);
        return 0;
    }
    struct callback_call c = {.fn = fn, .arg = arg};
    PyErr_Fetch(&c.type, &c.value, &c.traceback);
    if (!trampoline_run(env->main_fn, env->frame_builtins, callback_in_main, &c)) {
        /* not run: the trampoline's error (a RecursionError) is raised instead */
        Py_XDECREF(c.type);
        Py_XDECREF(c.value);
        Py_XDECREF(c.traceback);
        return -1;
    }
    PyErr_Restore(c.type, c.value, c.traceback);
    return 0;
}
