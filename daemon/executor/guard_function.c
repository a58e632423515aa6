/* function(code, globals) makes a function of any code object, and CPython raises no audit
 * event for it (code.__new__ and writing __code__ have theirs, refused while a snippet runs).
 * Code objects are refused as values and so is the function class, but C code the snippet
 * calls can hold both where the walk sees neither: with the run frame's globals leaked (pandas'
 * Scope), getattr(json.dumps, '__class__') called through map gave the function class, and
 * typing.ForwardRef(text).__forward_code__ a code object compiled from the snippet's text
 * (the audit hook lets ForwardRef compile: it only checks its string is an expression);
 * calling the one with the other ran that text as Python, natively, with no walk and no
 * budgets. So the class's tp_new (which type's call and function.__new__ both reach) is
 * replaced, once, before the zygote forks: while a snippet runs, outside imports, no code
 * makes a function from a code object; library code makes its functions with def and
 * lambda, which are no call of the class. */
#include "exec_internal.h"

static newfunc real_function_new;

static PyObject *
checked_function_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (exec_audit_stores_checked())
        return exec_fail(exec_audit_snippet_run(), ABORT_NONE,
                         "Forbidden while a snippet runs: making a function from a code object "
                         "(function.__new__)");
    return real_function_new(type, args, kwargs);
}

int
exec_guard_function_install(void)
{
    if (real_function_new)
        return 0;
    if (!PyFunction_Type.tp_new) {
        PyErr_SetString(PyExc_RuntimeError, "the function class has no tp_new to check");
        return -1;
    }
    real_function_new = PyFunction_Type.tp_new;
    PyFunction_Type.tp_new = checked_function_new;
    return 0;
}
