/* What library code sees of the Python stack while a snippet runs: the frames from the current
 * one down to the one the snippet stands on (main_frame.c), and nothing past it. Past it is the
 * library code that called the snippet back, whose globals hold the real builtins, or, at a
 * run's top, nothing. sys._getframe is checked by the audit hook (its event carries the frame);
 * f_back raises no event in CPython 3.11, so library code walking it (inspect.stack,
 * inspect.getmembers of what it found: f_globals, f_builtins) reached those globals, and C code
 * (map, operator.itemgetter) took the real __import__ out of them where no value check looks.
 * So frame objects' f_back, f_globals, f_builtins and f_locals are CPython's own getters behind
 * a check, put in place once, before any run (no type object is written after the fork):
 * - f_back of a frame in view that would answer one past it answers None, where a script's
 *   module frame's does: library code walking up sees the stack end at the snippet's frame;
 * - the four of a frame out of view (past the snippet's, or no longer running: a library
 *   function's own frame kept after it returned) are refused.
 * Outside runs nothing changes. C code reading frames (PyFrame_GetBack, the warnings module's
 * registry lookup) is not seen; the executor's own walks use those. */
#include "exec_internal.h"

enum { VIEW_F_BACK, VIEW_F_GLOBALS, VIEW_F_BUILTINS, VIEW_F_LOCALS, N_VIEW_ATTRS };

struct view_attr {
    const char *name;
    getter cpython_get; /* CPython's getter, and its closure */
    void *cpython_closure;
    PyGetSetDef def; /* ours: lives as long as the type */
};

static struct view_attr view_attrs[N_VIEW_ATTRS] = {
        [VIEW_F_BACK] = {.name = "f_back"},
        [VIEW_F_GLOBALS] = {.name = "f_globals"},
        [VIEW_F_BUILTINS] = {.name = "f_builtins"},
        [VIEW_F_LOCALS] = {.name = "f_locals"},
};

static PyObject *
view_get(PyObject *frame, void *closure)
{
    const struct view_attr *a = closure;
    if (!exec_audit_active())
        return a->cpython_get(frame, a->cpython_closure);
    if (!exec_audit_frame_in_view(frame)) {
        PyErr_Format(exec_InterpreterError,
                     "Forbidden while a snippet runs: reading %s of a frame past the snippet's "
                     "or no longer running",
                     a->name);
        return NULL;
    }
    PyObject *v = a->cpython_get(frame, a->cpython_closure);
    if (v && a == &view_attrs[VIEW_F_BACK] && v != Py_None && !exec_audit_frame_in_view(v))
        Py_SETREF(v, Py_NewRef(Py_None));
    return v;
}

static int
install_one(PyObject *type_dict, struct view_attr *a)
{
    PyObject *orig = PyDict_GetItemString(type_dict, a->name); /* borrowed */
    if (!orig || Py_TYPE(orig) != &PyGetSetDescr_Type) {
        PyErr_Format(PyExc_RuntimeError, "frame.%s is not CPython's getset descriptor", a->name);
        return -1;
    }
    const PyGetSetDef *cpython = ((PyGetSetDescrObject *) orig)->d_getset;
    if (cpython->set) { /* read-only in 3.11: a setter would need CPython's closure, not ours */
        PyErr_Format(PyExc_RuntimeError, "frame.%s can be set: not guarding it", a->name);
        return -1;
    }
    a->cpython_get = cpython->get;
    a->cpython_closure = cpython->closure;
    a->def = (PyGetSetDef){.name = a->name, .get = view_get, .doc = cpython->doc, .closure = a};
    PyObject *ours = PyDescr_NewGetSet(&PyFrame_Type, &a->def);
    int rc = ours ? PyDict_SetItemString(type_dict, a->name, ours) : -1;
    Py_XDECREF(ours);
    return rc;
}

int
exec_frame_view_install(void)
{
    if (view_attrs[0].cpython_get)
        return 0;
    PyObject *type_dict = PyFrame_Type.tp_dict;
    if (!type_dict) {
        PyErr_SetString(PyExc_RuntimeError, "the frame type has no dict to guard");
        return -1;
    }
    for (size_t i = 0; i < N_VIEW_ATTRS; i++)
        if (install_one(type_dict, &view_attrs[i]) < 0)
            return -1;
    PyType_Modified(&PyFrame_Type);
    return 0;
}
