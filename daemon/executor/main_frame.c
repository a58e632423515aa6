/* The Python frame a run's snippet stands on. The walk runs no Python frames, but library code
 * asks its caller's frame which module called it: enum's functional API and namedtuple read
 * sys._getframe(n).f_globals['__name__'] to name the new class's module, typing's NamedTuple,
 * TypedDict and NewType likewise, and type(name, bases, ns) reads the current frame's globals.
 * With no frame below them, enum marked its classes '<unknown>' (then refused as a module the
 * profile does not allow) and namedtuple's came out as collections'. In CPython a script's
 * module frame answers '__main__', so each run is made to stand on one: a tiny Python function
 * whose globals are a fresh {'__name__': '__main__', '__builtins__': builtins}, calling back
 * into C, which runs the snippet. That frame is the one the audit hook records as the
 * snippet's (exec_audit_enter runs inside it), so "the caller is the snippet" keeps meaning
 * what it meant with no frame. The snippet never holds it: frames, and dicts holding
 * __builtins__, are refused as values, and the frame-reaching attributes by name. Its globals
 * are nobody's namespace (the snippet's is the environment's dict; this one is made per run
 * and dropped after), so library code writing into its caller's globals (the warnings
 * registry) changes nothing anyone trusts. */
#include "exec_internal.h"

/* `lambda run: run()`, renamed <module>: compiled once, before any run (no audit event then). */
static PyObject *main_code;
static PyObject *main_name; /* "__main__" */

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
    if (!main_name && !(main_name = PyUnicode_InternFromString("__main__")))
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

/* A fresh trampoline: its globals say __main__, with the real builtins (C code calling
 * PyImport_Import reads __builtins__ from the current frame's globals). */
static PyObject *
main_function(void)
{
    PyObject *globals = PyDict_New();
    PyObject *builtins = PyEval_GetBuiltins(); /* borrowed: the interpreter's, outside runs */
    PyObject *fn = NULL;
    if (globals && builtins && PyDict_SetItemString(globals, "__name__", main_name) == 0 &&
        PyDict_SetItemString(globals, "__builtins__", builtins) == 0)
        fn = PyFunction_New(main_code, globals);
    Py_XDECREF(globals);
    return fn;
}

void
exec_main_frame_call(void (*fn)(void *arg), void *arg)
{
    struct main_call c = {.fn = fn, .arg = arg};
    PyObject *func = main_code ? main_function() : NULL;
    PyObject *entry = func ? PyCFunction_New(&main_enter_def, NULL) : NULL;
    PyObject *res = NULL;
    if (entry) {
        struct main_call *outer = pending;
        pending = &c;
        res = PyObject_CallOneArg(func, entry);
        pending = outer;
    }
    Py_XDECREF(res);
    Py_XDECREF(entry);
    Py_XDECREF(func);
    PyErr_Clear();
    /* no frame could be made (out of memory): run as before, standing on no frame, where
     * library code asking its caller's module gets no answer */
    if (!c.ran)
        fn(arg);
}
