/* The real builtins the snippet's namespace lacks or has checking versions of (policy.c,
 * refused_builtins) are refused as values wherever the walk sees one. C code the snippet calls
 * (map, operator.call) calls what it iterates with no such check: a library's namespace
 * reached that way handed out the real __import__ and getattr (policy cases 310-314, closed
 * where they leaked). So, as a second fence, the ones that reach past the executor's checks
 * refuse a call made while the snippet's frame is the current one (by the walk, or by C code
 * it called): __import__ (any loaded or loadable module), getattr, setattr and delattr (any
 * attribute, dunders included), vars (any namespace), open (any file). Library Python code
 * calling them has its own frame current and is not affected; nor is C code importing through
 * PyImport_Import, which takes the current frame's __import__ (main_frame.c's own). eval, exec
 * and compile are the audit hook's (audit.c). Nor, so, is a leaked one called by a map that
 * library Python code iterates (copy's listiter, statistics' list(data)): its frame is current
 * then, and nothing tells that call from the library's own.
 *
 * Each function object keeps its identity (library code compares them, pickle names them): its
 * method-table pointer is swapped, once, in the zygote, for a copy whose C function checks
 * first. Both call paths read that pointer (vectorcall and tp_call alike), and so do 3.11's
 * specialised calls of builtins, which check the flags (kept the same) and not the function.
 * The flags are checked at install: a CPython whose builtins take other calling conventions
 * fails the start rather than run unguarded. */
#include "exec_internal.h"

enum { G_IMPORT, G_GETATTR, G_SETATTR, G_DELATTR, G_VARS, G_OPEN, N_GUARDED };

struct guarded_builtin {
    const char *name;
    int flags;            /* CPython 3.11's calling convention for it */
    PyCFunction guard;    /* ours, of that convention */
    PyMethodDef *cpython; /* the table entry it had */
    PyMethodDef ours;
};

/* declared before its definition: the guards read it, and its entries name the guards */
static struct guarded_builtin guarded[N_GUARDED];

static bool
refused_here(int i)
{
    if (!exec_audit_snippet_run())
        return false;
    PyErr_Format(exec_InterpreterError,
                 "Forbidden while a snippet runs: the real builtin %s called on the snippet's "
                 "behalf by C code it called (map, operator.call); the snippet's own builtins "
                 "are checked versions or lack it",
                 guarded[i].name);
    return true;
}

#define GUARD_FASTCALL(i)                                                                    \
    static PyObject *guard_##i(PyObject *self, PyObject *const *args, Py_ssize_t nargs)      \
    {                                                                                        \
        if (refused_here(i))                                                                 \
            return NULL;                                                                     \
        return ((_PyCFunctionFast) (void (*)(void)) guarded[i].cpython->ml_meth)(self, args, \
                                                                                 nargs);     \
    }
#define GUARD_FASTCALL_KEYWORDS(i)                                                            \
    static PyObject *guard_##i(PyObject *self, PyObject *const *args, Py_ssize_t nargs,       \
                               PyObject *kwnames)                                             \
    {                                                                                         \
        if (refused_here(i))                                                                  \
            return NULL;                                                                      \
        return ((_PyCFunctionFastWithKeywords) (void (*)(void)) guarded[i].cpython->ml_meth)( \
                self, args, nargs, kwnames);                                                  \
    }
#define GUARD_VARARGS(i)                                       \
    static PyObject *guard_##i(PyObject *self, PyObject *args) \
    {                                                          \
        if (refused_here(i))                                   \
            return NULL;                                       \
        return guarded[i].cpython->ml_meth(self, args);        \
    }

GUARD_FASTCALL_KEYWORDS(G_IMPORT)
GUARD_FASTCALL(G_GETATTR)
GUARD_FASTCALL(G_SETATTR)
GUARD_FASTCALL(G_DELATTR)
GUARD_VARARGS(G_VARS)
GUARD_FASTCALL_KEYWORDS(G_OPEN)

static struct guarded_builtin guarded[N_GUARDED] = {
        [G_IMPORT] = {"__import__", METH_FASTCALL | METH_KEYWORDS,
                      (PyCFunction) (void (*)(void)) guard_G_IMPORT},
        [G_GETATTR] = {"getattr", METH_FASTCALL, (PyCFunction) (void (*)(void)) guard_G_GETATTR},
        [G_SETATTR] = {"setattr", METH_FASTCALL, (PyCFunction) (void (*)(void)) guard_G_SETATTR},
        [G_DELATTR] = {"delattr", METH_FASTCALL, (PyCFunction) (void (*)(void)) guard_G_DELATTR},
        [G_VARS] = {"vars", METH_VARARGS, guard_G_VARS},
        [G_OPEN] = {"open", METH_FASTCALL | METH_KEYWORDS,
                    (PyCFunction) (void (*)(void)) guard_G_OPEN},
};

static int
install_one(PyObject *builtins, struct guarded_builtin *g)
{
    PyObject *f = PyDict_GetItemString(builtins, g->name); /* borrowed */
    if (!f || !PyCFunction_Check(f)) {
        PyErr_Format(PyExc_RuntimeError, "builtins.%s is not a C function to guard", g->name);
        return -1;
    }
    PyCFunctionObject *cf = (PyCFunctionObject *) f;
    if (cf->m_ml->ml_flags != g->flags) {
        PyErr_Format(PyExc_RuntimeError,
                     "builtins.%s takes calling convention %#x, not %#x: cannot guard it", g->name,
                     cf->m_ml->ml_flags, g->flags);
        return -1;
    }
    g->cpython = cf->m_ml;
    g->ours = *cf->m_ml;
    g->ours.ml_meth = g->guard;
    cf->m_ml = &g->ours;
    return 0;
}

const char *
exec_guard_builtins_name(PyObject *f)
{
    if (!PyCFunction_Check(f))
        return NULL;
    for (size_t i = 0; i < N_GUARDED; i++)
        if (((PyCFunctionObject *) f)->m_ml == &guarded[i].ours)
            return guarded[i].name;
    return NULL;
}

int
exec_guard_builtins_install(void)
{
    if (guarded[0].cpython)
        return 0;
    PyObject *builtins = PyEval_GetBuiltins(); /* borrowed: the interpreter's, before any run */
    if (!builtins) {
        PyErr_SetString(PyExc_RuntimeError, "no builtins to guard");
        return -1;
    }
    for (size_t i = 0; i < N_GUARDED; i++)
        if (install_one(builtins, &guarded[i]) < 0)
            return -1;
    return 0;
}
