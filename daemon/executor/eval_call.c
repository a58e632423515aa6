/* Calls. The common shape (no *args, no **kwargs) goes through vectorcall with the arguments
 * on the C stack and the keyword-name tuple built at compile time; method calls on objects skip
 * the bound-method allocation with PyObject_VectorcallMethod. */
#include <stdarg.h>
#include <string.h>

#include "exec_internal.h"

#define SMALL_ARGS 8

/* TypeError "<callee>() <message>", naming the callee as CPython does ("__main__.f()"). */
static void
call_error(PyObject *func, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    PyObject *name = msg ? _PyObject_FunctionStr(func) : NULL;
    if (name)
        PyErr_Format(PyExc_TypeError, "%U %U", name, msg);
    Py_XDECREF(name);
    Py_XDECREF(msg);
}

/* 0 when k is not in kwargs yet, else -1 with CPython's message for a repeated keyword (%S:
 * the key may be any object until the call checks them all). */
static int
refuse_repeated(PyObject *func, PyObject *kwargs, PyObject *k)
{
    int dup = PyDict_Contains(kwargs, k);
    if (dup > 0)
        call_error(func, "got multiple values for keyword argument '%S'", k);
    return dup == 0 ? 0 : -1;
}

static int
set_keyword(PyObject *func, PyObject *kwargs, PyObject *k, PyObject *v)
{
    return refuse_repeated(func, kwargs, k) < 0 ? -1 : PyDict_SetItem(kwargs, k, v);
}

/* The items of a ** mapping that is not a dict, merged as CPython merges one: key by key from
 * keys(), a repeated key refused before its value is read, each value by __getitem__. */
static int
merge_mapping(PyObject *func, PyObject *kwargs, PyObject *mapping)
{
    PyObject *keys = PyMapping_Keys(mapping);
    if (!keys)
        return -1;
    int rc = 0;
    for (Py_ssize_t j = 0; rc == 0 && j < PyList_GET_SIZE(keys); j++) {
        /* held: keys() may have returned the mapping's own list, which __getitem__ can change */
        PyObject *k = Py_NewRef(PyList_GET_ITEM(keys, j));
        PyObject *v = refuse_repeated(func, kwargs, k) < 0 ? NULL : PyObject_GetItem(mapping, k);
        rc = v ? PyDict_SetItem(kwargs, k, v) : -1;
        Py_XDECREF(v);
        Py_DECREF(k);
    }
    Py_DECREF(keys);
    return rc;
}

/* Adds one keyword argument (name=value) or the items of one **mapping to kwargs, in CPython's
 * order and with its messages for a non-mapping and a repeated key. Kept out of line: inlined
 * into exec_call (through build_star_args), it makes GCC keep `r` on the stack on the common
 * path of every call. */
static __attribute__((noinline)) int
add_keyword_arg(struct exec_run *r, const struct node *kw, PyObject *func, PyObject *kwargs)
{
    PyObject *v = exec_eval(r, kw->a);
    if (!v)
        return -1;
    int rc = -1;
    if (kw->obj) {
        rc = set_keyword(func, kwargs, kw->obj, v);
    } else if (PyDict_Check(v)) {
        /* a snapshot: a key's __eq__ may run code that changes the dict */
        PyObject *items = PyDict_Items(v);
        rc = items ? 0 : -1;
        for (Py_ssize_t j = 0; rc == 0 && j < PyList_GET_SIZE(items); j++) {
            PyObject *pair = PyList_GET_ITEM(items, j);
            rc = set_keyword(func, kwargs, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
        }
        Py_XDECREF(items);
    } else if (PyMapping_Check(v) && PyObject_HasAttrString(v, "keys")) {
        rc = merge_mapping(func, kwargs, v);
    } else {
        call_error(func, "argument after ** must be a mapping, not %.200s", Py_TYPE(v)->tp_name);
    }
    Py_DECREF(v);
    return rc;
}

/* Every keyword a string, checked once all are merged, as CPython checks them at the call. */
static int
check_keywords(PyObject *kwargs)
{
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (kwargs && PyDict_Next(kwargs, &pos, &k, &v)) {
        if (!PyUnicode_Check(k)) {
            PyErr_SetString(PyExc_TypeError, "keywords must be strings");
            return -1;
        }
    }
    return 0;
}

/* Keywords name parameters, but a callee taking **kwargs may store them as attributes:
 * types.SimpleNamespace(**d), argparse.Namespace, any class whose __init__ does
 * setattr(self, k, v). A dunder a snippet's class may not define (class_dunders.c) stored in an
 * instance dict is found there first by library code's getattr (copy's __deepcopy__), which
 * calls it. So no call the walk makes passes such a keyword, whatever the callee: f(**d),
 * f(__deepcopy__=x), functools.partial(f, **d) (its keywords reach f later from C code, but
 * were passed here), a class statement's keywords. Checked on the characters (str subclasses
 * included); check_keywords has made them str. Returns 0, or -1 with InterpreterError set. */
int
exec_check_keyword_names(struct exec_run *r, PyObject *kwargs)
{
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (kwargs && PyDict_Next(kwargs, &pos, &k, &v))
        if (PyUnicode_Check(k) && !exec_class_dunder_allowed(k)) {
            exec_fail(r, ABORT_NONE,
                      "Forbidden keyword argument %U: a keyword named as a dunder that a "
                      "snippet's class may not define can become an attribute library code calls",
                      k);
            return -1;
        }
    return 0;
}

/* The items of *iterable and the values of **mapping reach the callee without passing through
 * the walk: map(*L, ...) would call whatever L holds (a list a library returned is never
 * looked into). Each argument is checked as a value, as the callee receives it. The keywords'
 * names are checked above (exec_check_keyword_names). */
static int
check_star_values(struct exec_run *r, PyObject *args, PyObject *kwargs)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); i++)
        if (exec_check_value(r, PyTuple_GET_ITEM(args, i)) < 0)
            return -1;
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (kwargs && PyDict_Next(kwargs, &pos, &k, &v))
        if (exec_check_value(r, v) < 0)
            return -1;
    return 0;
}

/* Builds (args tuple, kwargs dict) for a call with * or ** arguments. */
static int
build_star_args(struct exec_run *r, const struct node *n, PyObject *func, PyObject **ret_args,
                PyObject **ret_kwargs)
{
    PyObject *list = PyList_New(0), *kwargs = NULL, *args = NULL;
    if (!list)
        return -1;
    for (uint32_t i = 0; i < n->nv; i++) {
        const struct node *e = n->v[i];
        bool star = e->kind == NK_E_STARRED;
        PyObject *v = exec_eval(r, star ? e->a : e);
        if (!v)
            goto fail;
        int rc;
        if (star && !Py_TYPE(v)->tp_iter && !PySequence_Check(v)) {
            call_error(func, "argument after * must be an iterable, not %.200s",
                       Py_TYPE(v)->tp_name);
            rc = -1;
        } else if (star) {
            PyObject *none = _PyList_Extend((PyListObject *) list, v);
            rc = none ? 0 : -1;
            Py_XDECREF(none);
        } else {
            rc = PyList_Append(list, v);
        }
        Py_DECREF(v);
        if (rc < 0)
            goto fail;
    }
    if (!(args = PyList_AsTuple(list)))
        goto fail;
    if (n->nw && !(kwargs = PyDict_New()))
        goto fail;
    for (uint32_t i = 0; i < n->nw; i++)
        if (add_keyword_arg(r, n->w[i], func, kwargs) < 0)
            goto fail;
    if (check_keywords(kwargs) < 0 || exec_check_keyword_names(r, kwargs) < 0 ||
        check_star_values(r, args, kwargs) < 0)
        goto fail;
    Py_DECREF(list);
    *ret_args = args;
    *ret_kwargs = kwargs;
    return 0;
fail:
    Py_XDECREF(list);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    return -1;
}

/* type(name, bases, ns), a metaclass called so, and type.__new__(mcls, name, bases, ns) make a
 * class whose dunders CPython then calls (__eq__, __getitem__) and whose bases' methods it
 * inherits: a dict a library built (dict(zip(names, values))) holds values no check saw. The
 * bases and the values of ns (one level: CPython calls them, not what they hold) are checked
 * as values, and the names ns binds as a class body's are (no dunder outside the class
 * allow-list, class_dunders.c). Returns 0 or -1 with InterpreterError set. */
static int
check_class_parts(struct exec_run *r, PyObject *name, PyObject *bases, PyObject *ns)
{
    /* the names it binds (not a dict: CPython's own TypeError, or a metaclass's own code) */
    if (PyDict_Check(ns) && exec_check_class_namespace(r, ns, name) < 0)
        return -1;
    for (Py_ssize_t i = 0; PyTuple_Check(bases) && i < PyTuple_GET_SIZE(bases); i++)
        if (exec_check_value(r, PyTuple_GET_ITEM(bases, i)) < 0)
            return -1;
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Check(ns) && PyDict_Next(ns, &pos, &k, &v))
        if (exec_check_value(r, v) < 0)
            return -1;
    return 0;
}

static bool
is_metaclass(PyObject *o)
{
    return o && PyType_Check(o) &&
           PyType_FastSubclass((PyTypeObject *) o, Py_TPFLAGS_TYPE_SUBCLASS);
}

/* The common call pays an argument count and a flag test (a C function's self may be NULL). */
static int
check_class_creation(struct exec_run *r, PyObject *func, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs == 3 && is_metaclass(func))
        return check_class_parts(r, args[0], args[1], args[2]);
    if (nargs == 4 && PyCFunction_Check(func) && is_metaclass(PyCFunction_GET_SELF(func)) &&
        strcmp(((PyCFunctionObject *) func)->m_ml->ml_name, "__new__") == 0)
        return check_class_parts(r, args[1], args[2], args[3]);
    return 0;
}

/* Evaluates positional then keyword argument values into stack[1..]; stack[0] is left free
 * for PY_VECTORCALL_ARGUMENTS_OFFSET (the callee may use it to prepend self). */
static int
eval_args(struct exec_run *r, const struct node *n, PyObject **stack)
{
    uint32_t i = 0, total = n->nv + n->nw;
    for (; i < total; i++) {
        const struct node *e = i < n->nv ? n->v[i] : n->w[i - n->nv]->a;
        if (!(stack[i + 1] = exec_eval(r, e))) {
            for (uint32_t j = 0; j < i; j++)
                Py_DECREF(stack[j + 1]);
            return -1;
        }
    }
    return 0;
}

static PyObject *
call_method(struct exec_run *r, const struct node *n)
{
    const struct node *fn = n->a;
    PyObject *small[SMALL_ARGS + 1];
    uint32_t total = n->nv + n->nw;
    PyObject **stack = total < SMALL_ARGS ? small : PyMem_Malloc(sizeof(*stack) * (total + 1));
    if (!stack)
        return PyErr_NoMemory();
    PyObject *res = NULL;
    if (!(stack[0] = exec_eval(r, fn->a)))
        goto out;
    if (eval_args(r, n, stack) < 0) {
        Py_DECREF(stack[0]);
        goto out;
    }
    /* modules' attributes go through the checks too (private names, submodules, the
     * operator getters); module functions are no bound methods, so nothing is lost */
    if (PyModule_Check(stack[0])) {
        PyObject *m = exec_getattr(r, stack[0], fn->obj);
        if (m) {
            res = PyObject_Vectorcall(m, stack + 1, n->nv | PY_VECTORCALL_ARGUMENTS_OFFSET, n->obj);
            Py_DECREF(m);
        }
    } else {
        /* What PyObject_VectorcallMethod does, with the check obj.name gets as a value in
         * between: a held object's attribute may be a function of a module the profile does
         * not allow. Found on the type, the function is called unbound, self first. A C
         * type's own method (str.split, list.append) is no module's function and no getter:
         * it is judged by the class defining it alone, which for builtins is one flag test. */
        PyObject *meth = NULL;
        int unbound = _PyObject_GetMethod(stack[0], fn->obj, &meth);
        if (meth && unbound && Py_IS_TYPE(meth, &PyMethodDescr_Type)) {
            PyMethodDescrObject *d = (PyMethodDescrObject *) meth;
            if (exec_check_c_method(r, PyDescr_TYPE(d), d->d_method->ml_name) < 0)
                Py_CLEAR(meth);
        } else if (meth && unbound && Py_IS_TYPE(meth, &PyWrapperDescr_Type)) {
            if (exec_check_slot_wrapper(r, meth, stack[0]) < 0) /* a slot's: as if bound */
                Py_CLEAR(meth);
        } else if (meth) {
            meth = exec_getattr_result(r, stack[0], fn->obj, meth);
        }
        if (meth && !unbound && check_class_creation(r, meth, stack + 1, n->nv) < 0)
            Py_CLEAR(meth);
        if (meth)
            res = unbound ? PyObject_Vectorcall(meth, stack,
                                                (n->nv + 1) | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                                n->obj)
                          : PyObject_Vectorcall(meth, stack + 1,
                                                n->nv | PY_VECTORCALL_ARGUMENTS_OFFSET, n->obj);
        Py_XDECREF(meth);
    }
    for (uint32_t i = 0; i <= total; i++)
        Py_DECREF(stack[i]);
out:
    if (stack != small)
        PyMem_Free(stack);
    return res;
}

PyObject *
exec_call(struct exec_run *r, const struct node *n)
{
    const struct node *fn = n->a;
    PyObject *res = NULL;
    /* obj.method(...) without * or **: no bound method object, unless the policy must see it */
    if (fn->kind == NK_E_ATTR && !(n->flags & NF_HAS_STAR) && !(fn->flags & NF_FORBIDDEN)) {
        res = call_method(r, n);
        goto check;
    }
    PyObject *func;
    if (fn->kind == NK_E_NAME) {
        if (exec_tick(r) < 0)
            return NULL;
        func = exec_name_load(r, fn, true);
    } else {
        func = exec_eval(r, fn);
    }
    if (!func)
        return NULL;
    if (n->flags & NF_HAS_STAR) {
        PyObject *args, *kwargs;
        if (build_star_args(r, n, func, &args, &kwargs) == 0) {
            if (check_class_creation(r, func, &PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args)) ==
                0)
                res = PyObject_Call(func, args, kwargs);
            Py_DECREF(args);
            Py_XDECREF(kwargs);
        }
        Py_DECREF(func);
        goto check;
    }
    PyObject *small[SMALL_ARGS + 1];
    uint32_t total = n->nv + n->nw;
    PyObject **stack = total < SMALL_ARGS ? small : PyMem_Malloc(sizeof(*stack) * (total + 1));
    if (!stack) {
        Py_DECREF(func);
        return PyErr_NoMemory();
    }
    if (eval_args(r, n, stack) == 0) {
        if (check_class_creation(r, func, stack + 1, n->nv) == 0)
            res = PyObject_Vectorcall(func, stack + 1, n->nv | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                      n->obj);
        for (uint32_t i = 0; i < total; i++)
            Py_DECREF(stack[i + 1]);
    }
    if (stack != small)
        PyMem_Free(stack);
    Py_DECREF(func);
check:
    if (res && exec_check_value(r, res) < 0)
        Py_CLEAR(res);
    return res;
}
