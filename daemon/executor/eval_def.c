/* def and class statements, and super(). A class is built the way CPython's __build_class__
 * builds it: metaclass, __prepare__, the body run in its own namespace, __classcell__ for
 * super() without arguments. */
#include <string.h>

#include "exec_internal.h"

/* Evaluates decorators, in source order, before anything else (CPython's order). */
static PyObject *
eval_list(struct exec_run *r, struct node *const *v, uint32_t n)
{
    PyObject *list = PyList_New(0);
    for (uint32_t i = 0; list && i < n; i++) {
        const struct node *e = v[i];
        PyObject *x = exec_eval(r, e->kind == NK_E_STARRED ? e->a : e);
        int rc = -1;
        if (x && e->kind == NK_E_STARRED) {
            PyObject *none = _PyList_Extend((PyListObject *) list, x);
            rc = none ? 0 : -1;
            Py_XDECREF(none);
        } else if (x) {
            rc = PyList_Append(list, x);
        }
        Py_XDECREF(x);
        if (rc < 0)
            Py_CLEAR(list);
    }
    return list;
}

static PyObject *
decorate(PyObject *obj, PyObject *decorators)
{
    for (Py_ssize_t i = PyList_GET_SIZE(decorators); obj && i-- > 0;)
        Py_SETREF(obj, PyObject_CallOneArg(PyList_GET_ITEM(decorators, i), obj));
    return obj;
}

int
exec_funcdef(struct exec_run *r, const struct node *s)
{
    PyObject *decorators = eval_list(r, s->v, s->nv);
    if (!decorators)
        return -1;
    PyObject *f = decorate(exec_function_new(r, s), decorators);
    Py_DECREF(decorators);
    int rc = f && exec_check_value(r, f) == 0 ? exec_name_store(r, s->c, f) : -1;
    Py_XDECREF(f);
    return rc;
}

/* A class statement hands its bases and keywords (metaclass=) to CPython, which calls them
 * and their dunders: items of class X(*L) and values of class X(**d) were never looked at,
 * and __mro_entries__ may name other classes. Each is checked as a value. */
static int
check_tuple_items(struct exec_run *r, PyObject *t)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++)
        if (exec_check_value(r, PyTuple_GET_ITEM(t, i)) < 0)
            return -1;
    return 0;
}

static int
check_dict_values(struct exec_run *r, PyObject *d)
{
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &k, &v))
        if (exec_check_value(r, v) < 0)
            return -1;
    return 0;
}

static PyObject *
class_keywords(struct exec_run *r, const struct node *s)
{
    PyObject *kw = PyDict_New();
    for (uint32_t i = 0; kw && i < s->nw; i++) {
        PyObject *v = exec_eval(r, s->w[i]->a);
        int rc = !v             ? -1
                 : s->w[i]->obj ? PyDict_SetItem(kw, s->w[i]->obj, v)
                                : PyDict_Update(kw, v);
        Py_XDECREF(v);
        if (rc < 0)
            Py_CLEAR(kw);
    }
    if (kw && (exec_check_keyword_names(r, kw) < 0 || check_dict_values(r, kw) < 0))
        Py_CLEAR(kw);
    return kw;
}

/* Runs the class body in ns; returns 0 or -1. */
static int
run_class_body(struct exec_run *r, const struct exec_code *c, PyObject *ns)
{
    PyObject **slots = PyMem_Calloc(c->nslots + 1, sizeof(PyObject *));
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *closure = c->nfree ? exec_closure_new(r, c) : NULL;
    int rc = -1;
    if ((c->nfree && !closure) || exec_frame_cells(c, slots, closure) < 0)
        goto out;
    struct exec_frame frame = {.slots = slots, .ns = ns, .code = c, .tree_ref = exec_cur_tree(r)};
    PyObject *res = exec_run_frame(r, &frame);
    if (!res)
        goto out;
    Py_DECREF(res);
    rc = 0;
    if (c->class_cell >= 0)
        rc = PyDict_SetItemString(ns, "__classcell__", slots[c->class_cell]);
out:
    Py_XDECREF(closure);
    exec_slots_free(slots, c->nslots);
    PyMem_Free(slots);
    return rc;
}

/* type.__new__ makes these implicitly static or class methods, but only when they are
 * CPython functions: do it for executor functions too. */
static int
implicit_methods(PyObject *ns)
{
    static const char *const names[] = {"__new__", "__init_subclass__", "__class_getitem__"};
    for (int i = 0; i < 3; i++) {
        PyObject *f = PyMapping_GetItemString(ns, names[i]);
        if (!f) {
            if (!PyErr_ExceptionMatches(PyExc_KeyError))
                return -1;
            PyErr_Clear();
            continue;
        }
        int rc = 0;
        if (Py_IS_TYPE(f, &exec_function_type)) {
            PyObject *w = i == 0 ? PyStaticMethod_New(f) : PyClassMethod_New(f);
            rc = w ? PyMapping_SetItemString(ns, names[i], w) : -1;
            Py_XDECREF(w);
        }
        Py_DECREF(f);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static PyObject *
build_class(struct exec_run *r, const struct node *s, PyObject *bases, PyObject *kw,
            PyObject *orig_bases)
{
    const struct exec_code *c = s->code;
    PyObject *meta = PyDict_GetItemString(kw, "metaclass");
    if (meta) {
        Py_INCREF(meta);
        PyDict_DelItemString(kw, "metaclass");
    } else {
        meta = Py_NewRef(PyTuple_GET_SIZE(bases) ? (PyObject *) Py_TYPE(PyTuple_GET_ITEM(bases, 0))
                                                 : (PyObject *) &PyType_Type);
    }
    if (PyType_Check(meta)) {
        PyTypeObject *winner = _PyType_CalculateMetaclass((PyTypeObject *) meta, bases);
        if (!winner) {
            Py_DECREF(meta);
            return NULL;
        }
        Py_SETREF(meta, Py_NewRef((PyObject *) winner));
    }
    PyObject *ns = NULL, *cls = NULL, *args = NULL;
    PyObject *prepare = PyObject_GetAttrString(meta, "__prepare__");
    if (prepare) {
        PyObject *pargs = PyTuple_Pack(2, c->name, bases);
        ns = pargs ? PyObject_Call(prepare, pargs, kw) : NULL;
        Py_XDECREF(pargs);
        Py_DECREF(prepare);
    } else if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        ns = PyDict_New();
    }
    if (!ns)
        goto out;
    {
        PyObject *mod = PyUnicode_FromString("__main__");
        int rc = mod ? PyMapping_SetItemString(ns, "__module__", mod) : -1;
        Py_XDECREF(mod);
        if (rc < 0 || PyMapping_SetItemString(ns, "__qualname__", c->qualname) < 0 ||
            (orig_bases && PyMapping_SetItemString(ns, "__orig_bases__", orig_bases) < 0) ||
            (c->doc && PyMapping_SetItemString(ns, "__doc__", c->doc) < 0))
            goto out;
    }
    if (run_class_body(r, c, ns) < 0 || exec_check_class_namespace(r, ns, c->qualname) < 0 ||
        implicit_methods(ns) < 0 || !(args = PyTuple_Pack(3, c->name, bases, ns)))
        goto out;
    cls = PyObject_Call(meta, args, kw);
out:
    Py_XDECREF(args);
    Py_XDECREF(ns);
    Py_DECREF(meta);
    return cls;
}

/* PEP 560: a base that is not a class may name the classes to use instead (typing's
 * NamedTuple, TypedDict, Generic[T]). Returns new bases; *ret_orig is set when they differ. */
static PyObject *
update_bases(PyObject *bases, PyObject **ret_orig)
{
    PyObject *list = NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(bases); i++) {
        PyObject *b = PyTuple_GET_ITEM(bases, i), *meth;
        if (PyType_Check(b)) {
            if (list && PyList_Append(list, b) < 0)
                goto fail;
            continue;
        }
        if (!(meth = PyObject_GetAttrString(b, "__mro_entries__"))) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                goto fail;
            PyErr_Clear();
            if (list && PyList_Append(list, b) < 0)
                goto fail;
            continue;
        }
        PyObject *entries = PyObject_CallOneArg(meth, bases);
        Py_DECREF(meth);
        if (!entries)
            goto fail;
        if (!PyTuple_Check(entries)) {
            PyErr_SetString(PyExc_TypeError, "__mro_entries__ must return a tuple");
            Py_DECREF(entries);
            goto fail;
        }
        if (!list) {
            PyObject *head = PyTuple_GetSlice(bases, 0, i);
            list = head ? PySequence_List(head) : NULL;
            Py_XDECREF(head);
            if (!list) {
                Py_DECREF(entries);
                goto fail;
            }
        }
        PyObject *none = _PyList_Extend((PyListObject *) list, entries);
        Py_DECREF(entries);
        if (!none)
            goto fail;
        Py_DECREF(none);
    }
    if (!list)
        return Py_NewRef(bases);
    *ret_orig = Py_NewRef(bases);
    PyObject *t = PyList_AsTuple(list);
    Py_DECREF(list);
    return t;
fail:
    Py_XDECREF(list);
    return NULL;
}

int
exec_classdef(struct exec_run *r, const struct node *s)
{
    PyObject *decorators = eval_list(r, s->u, s->nu), *bases = NULL, *kw = NULL, *cls = NULL;
    PyObject *blist = decorators ? eval_list(r, s->v, s->nv) : NULL, *orig = NULL, *b0 = NULL;
    if (blist && (b0 = PyList_AsTuple(blist)) && check_tuple_items(r, b0) == 0 &&
        (bases = update_bases(b0, &orig)) && check_tuple_items(r, bases) == 0 &&
        (kw = class_keywords(r, s)))
        cls = decorate(build_class(r, s, bases, kw, orig), decorators);
    Py_XDECREF(b0);
    Py_XDECREF(orig);
    int rc = cls ? exec_name_store(r, s->c, cls) : -1;
    Py_XDECREF(decorators);
    Py_XDECREF(blist);
    Py_XDECREF(bases);
    Py_XDECREF(kw);
    Py_XDECREF(cls);
    return rc;
}

/* super() without arguments reads the __class__ cell and the first argument of the calling
 * executor frame, as CPython reads them from its own frame. */
PyObject *
exec_builtin_super(PyObject *self, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) || (kwargs && PyDict_GET_SIZE(kwargs)))
        return PyObject_Call((PyObject *) &PySuper_Type, args, kwargs);
    struct exec_env *env = exec_handle_env(self);
    struct exec_run *r = env ? env->run : NULL;
    const struct exec_frame *f = r ? r->frame : NULL;
    if (!f || f->code->super_slot < 0) {
        PyErr_SetString(PyExc_RuntimeError, "super(): __class__ cell not found");
        return NULL;
    }
    PyObject *cls = PyCell_GET(f->slots[f->code->super_slot]);
    if (!cls) {
        PyErr_SetString(PyExc_RuntimeError, "super(): empty __class__ cell");
        return NULL;
    }
    if (f->code->argcount == 0 || !f->slots[0]) {
        PyErr_SetString(PyExc_RuntimeError, "super(): no arguments");
        return NULL;
    }
    PyObject *obj = f->slots[0];
    for (uint32_t i = 0; i < f->code->ncells; i++)
        if (f->code->cells[i] == 0)
            obj = PyCell_GET(obj);
    if (!obj) {
        PyErr_SetString(PyExc_RuntimeError, "super(): arg[0] deleted");
        return NULL;
    }
    return PyObject_CallFunctionObjArgs((PyObject *) &PySuper_Type, cls, obj, NULL);
}
