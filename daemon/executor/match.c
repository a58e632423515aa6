/* The match statement (PEP 634). Class patterns read attributes by name, so their names go
 * through the same dunder rule as the . operator. */
#include <string.h>

#include "exec_internal.h"

static int match(struct exec_run *r, const struct node *p, PyObject *v);

static bool
is_sequence(PyObject *v)
{
    if (PyUnicode_Check(v) || PyBytes_Check(v) || PyByteArray_Check(v))
        return false;
    return PyType_HasFeature(Py_TYPE(v), Py_TPFLAGS_SEQUENCE);
}

static bool
is_wildcard(const struct node *p)
{
    return (p->kind == NK_P_AS && !p->a && !p->b) || (p->kind == NK_P_STAR && !p->a);
}

/* The subject's items as CPython's compiled patterns read them: by index (len - k for those
 * after a wildcard star) when the star is a wildcard, else by iteration. */
static PyObject *
sequence_items(const struct node *p, PyObject *v, Py_ssize_t len, Py_ssize_t star)
{
    Py_ssize_t n = (Py_ssize_t) p->nv;
    if (star >= 0 && !p->v[star]->a) {
        PyObject *items = PyTuple_New(n);
        for (Py_ssize_t i = 0; items && i < n; i++) {
            if (i == star) {
                PyTuple_SET_ITEM(items, i, Py_NewRef(Py_None));
                continue;
            }
            PyObject *idx = PyLong_FromSsize_t(i < star ? i : len - (n - i));
            PyObject *item = idx ? PyObject_GetItem(v, idx) : NULL;
            Py_XDECREF(idx);
            if (!item)
                Py_CLEAR(items);
            else
                PyTuple_SET_ITEM(items, i, item);
        }
        return items;
    }
    PyObject *it = PyObject_GetIter(v);
    if (!it)
        return NULL;
    PyObject *list = PyList_New(0), *item;
    /* no star: exactly len items, as UNPACK_SEQUENCE takes them */
    Py_ssize_t want = star < 0 ? n + 1 : PY_SSIZE_T_MAX;
    while (list && PyList_GET_SIZE(list) < want && (item = PyIter_Next(it))) {
        if (PyList_Append(list, item) < 0)
            Py_CLEAR(list);
        Py_DECREF(item);
    }
    Py_DECREF(it);
    if (!list || PyErr_Occurred()) {
        Py_XDECREF(list);
        return NULL;
    }
    if (star < 0 && PyList_GET_SIZE(list) != n) {
        PyErr_Format(PyExc_ValueError, "%s values to unpack (expected %zd)",
                     PyList_GET_SIZE(list) > n ? "too many" : "not enough", n);
        Py_DECREF(list);
        return NULL;
    }
    PyObject *items = PyList_AsTuple(list);
    Py_DECREF(list);
    return items;
}

static int
match_sequence(struct exec_run *r, const struct node *p, PyObject *v)
{
    if (!is_sequence(v))
        return 0;
    Py_ssize_t star = -1, n = (Py_ssize_t) p->nv;
    bool all_wild = true;
    for (uint32_t i = 0; i < p->nv; i++) {
        if (p->v[i]->kind == NK_P_STAR)
            star = i;
        all_wild = all_wild && is_wildcard(p->v[i]);
    }
    Py_ssize_t len = PySequence_Size(v);
    if (len < 0)
        return -1;
    if (star < 0 ? len != n : len < n - 1)
        return 0;
    if (all_wild)
        return 1;
    PyObject *items = sequence_items(p, v, len, star);
    if (!items)
        return -1;
    Py_ssize_t got = PyTuple_GET_SIZE(items);
    int m = 1;
    for (Py_ssize_t i = 0; m == 1 && i < n; i++) {
        const struct node *sub = p->v[i];
        if (i == star) {
            if (sub->a) {
                PyObject *rest = PyTuple_GetSlice(items, star, got - (n - 1 - star));
                PyObject *list = rest ? PySequence_List(rest) : NULL;
                m = list && exec_name_store(r, sub->a, list) == 0 ? 1 : -1;
                Py_XDECREF(rest);
                Py_XDECREF(list);
            }
            continue;
        }
        /* items read by index keep their pattern positions; iterated ones are all there */
        Py_ssize_t idx = i;
        if (star >= 0 && p->v[star]->a && i > star)
            idx = got - (n - i);
        m = match(r, sub, PyTuple_GET_ITEM(items, idx));
    }
    Py_DECREF(items);
    return m;
}

static int
match_mapping(struct exec_run *r, const struct node *p, PyObject *v)
{
    if (!PyType_HasFeature(Py_TYPE(v), Py_TPFLAGS_MAPPING))
        return 0;
    PyObject *keys = PyList_New(0), *dummy = PyList_New(0);
    int m = keys && dummy ? 1 : -1;
    for (uint32_t i = 0; m == 1 && i < p->nv; i++) {
        PyObject *k = exec_eval(r, p->v[i]);
        PyObject *got = k ? PyObject_CallMethod(v, "get", "OO", k, dummy) : NULL;
        if (!got || PyList_Append(keys, k) < 0)
            m = -1;
        else if (got == dummy)
            m = 0;
        else
            m = match(r, p->w[i], got);
        Py_XDECREF(k);
        Py_XDECREF(got);
    }
    if (m == 1 && p->a) {
        PyObject *rest = PyDict_New();
        m = rest && PyDict_Update(rest, v) == 0 ? 1 : -1;
        for (Py_ssize_t i = 0; m == 1 && i < PyList_GET_SIZE(keys); i++)
            if (PyDict_DelItem(rest, PyList_GET_ITEM(keys, i)) < 0)
                m = -1;
        if (m == 1 && exec_name_store(r, p->a, rest) < 0)
            m = -1;
        Py_XDECREF(rest);
    }
    Py_XDECREF(keys);
    Py_XDECREF(dummy);
    return m;
}

/* Builtins that match their single positional sub-pattern against the whole subject. */
static bool
self_matching(PyObject *cls)
{
    PyTypeObject *const types[] = {&PyBool_Type,  &PyByteArray_Type, &PyBytes_Type, &PyDict_Type,
                                   &PyFloat_Type, &PyFrozenSet_Type, &PyLong_Type,  &PyList_Type,
                                   &PySet_Type,   &PyUnicode_Type,   &PyTuple_Type};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (PyType_IsSubtype((PyTypeObject *) cls, types[i]))
            return true;
    return false;
}

static int match_attr_exact(struct exec_run *r, PyObject *v, PyObject *name,
                            const struct node *sub);

static int
match_attr(struct exec_run *r, PyObject *v, PyObject *name, const struct node *sub)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "__match_args__ elements must be strings (got %s)",
                     Py_TYPE(name)->tp_name);
        return -1;
    }
    PyObject *exact = exec_exact_str(name);
    int m = exact ? match_attr_exact(r, v, exact, sub) : -1;
    Py_XDECREF(exact);
    return m;
}

static int
match_attr_exact(struct exec_run *r, PyObject *v, PyObject *name, const struct node *sub)
{
    if (exec_check_attr_name(r, name) < 0)
        return -1;
    PyObject *a = exec_class_getattr_own_read(v, name);
    if (!a) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    /* the checks of obj.name's value: a module's private names, __init_subclass__'s */
    if (!(a = exec_getattr_result(r, v, name, a)))
        return -1;
    int m = match(r, sub, a);
    Py_DECREF(a);
    return m;
}

static int
match_class(struct exec_run *r, const struct node *p, PyObject *v)
{
    PyObject *cls = exec_eval(r, p->a);
    if (!cls)
        return -1;
    int m = -1;
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "called match pattern must be a class");
        goto out;
    }
    if ((m = PyObject_IsInstance(v, cls)) != 1)
        goto out;
    if (p->nv == 1 && self_matching(cls)) {
        m = match(r, p->v[0], v);
        goto out;
    }
    if (p->nv) {
        PyObject *args = PyObject_GetAttrString(cls, "__match_args__");
        if (!args) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                goto fail;
            PyErr_Clear();
            args = PyTuple_New(0);
        }
        if (!args || !PyTuple_Check(args)) {
            if (args)
                PyErr_Format(PyExc_TypeError, "%s.__match_args__ must be a tuple",
                             ((PyTypeObject *) cls)->tp_name);
            Py_XDECREF(args);
            goto fail;
        }
        if ((Py_ssize_t) p->nv > PyTuple_GET_SIZE(args)) {
            PyErr_Format(PyExc_TypeError, "%s() accepts %zd positional sub-pattern%s (%u given)",
                         ((PyTypeObject *) cls)->tp_name, PyTuple_GET_SIZE(args),
                         PyTuple_GET_SIZE(args) == 1 ? "" : "s", p->nv);
            Py_DECREF(args);
            goto fail;
        }
        for (uint32_t i = 0; m == 1 && i < p->nv; i++)
            m = match_attr(r, v, PyTuple_GET_ITEM(args, i), p->v[i]);
        Py_DECREF(args);
    }
    for (uint32_t i = 0; m == 1 && i < p->nw; i++)
        m = match_attr(r, v, PyTuple_GET_ITEM(p->obj, i), p->w[i]);
    goto out;
fail:
    m = -1;
out:
    Py_DECREF(cls);
    return m;
}

static int
match(struct exec_run *r, const struct node *p, PyObject *v)
{
    if (exec_tick(r) < 0)
        return -1;
    switch (p->kind) {
    case NK_P_VALUE: {
        PyObject *x = exec_eval(r, p->a);
        int m = x ? PyObject_RichCompareBool(v, x, Py_EQ) : -1;
        Py_XDECREF(x);
        return m;
    }
    case NK_P_SINGLETON:
        return v == p->obj;
    case NK_P_SEQUENCE:
        return match_sequence(r, p, v);
    case NK_P_MAPPING:
        return match_mapping(r, p, v);
    case NK_P_CLASS:
        return match_class(r, p, v);
    case NK_P_AS: {
        int m = p->a ? match(r, p->a, v) : 1;
        if (m == 1 && p->b && exec_name_store(r, p->b, v) < 0)
            return -1;
        return m;
    }
    case NK_P_OR:
        for (uint32_t i = 0; i < p->nv; i++) {
            int m = match(r, p->v[i], v);
            if (m != 0)
                return m;
        }
        return 0;
    default:
        PyErr_SetString(PyExc_SystemError, "executor: bad pattern");
        return -1;
    }
}

int
exec_match(struct exec_run *r, const struct node *s)
{
    PyObject *subject = exec_eval(r, s->a);
    if (!subject)
        return FLOW_ERROR;
    int flow = FLOW_NEXT;
    for (uint32_t i = 0; i < s->nv; i++) {
        const struct node *c = s->v[i];
        int m = match(r, c->a, subject);
        if (m == 1 && c->b) {
            PyObject *g = exec_eval(r, c->b);
            m = g ? PyObject_IsTrue(g) : -1;
            Py_XDECREF(g);
        }
        if (m < 0) {
            flow = FLOW_ERROR;
            break;
        }
        if (m) {
            flow = exec_block(r, c->v, c->nv);
            break;
        }
    }
    Py_DECREF(subject);
    return flow;
}
