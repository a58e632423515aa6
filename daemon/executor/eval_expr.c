/* The walk over expressions. Every value operation is CPython's object protocol, so values
 * behave exactly as in CPython; the executor adds only counting and the policy checks. */
#include <string.h>

#include "exec_internal.h"

/* Indexed by enum exec_binop; shared with augmented assignment in eval_stmt.c. */
static PyObject *
binop(int op, PyObject *a, PyObject *b)
{
    switch (op) {
    case BOP_ADD:
        return PyNumber_Add(a, b);
    case BOP_SUB:
        return PyNumber_Subtract(a, b);
    case BOP_MULT:
        return PyNumber_Multiply(a, b);
    case BOP_MATMULT:
        return PyNumber_MatrixMultiply(a, b);
    case BOP_DIV:
        return PyNumber_TrueDivide(a, b);
    case BOP_MOD:
        return PyNumber_Remainder(a, b);
    case BOP_POW:
        return PyNumber_Power(a, b, Py_None);
    case BOP_LSHIFT:
        return PyNumber_Lshift(a, b);
    case BOP_RSHIFT:
        return PyNumber_Rshift(a, b);
    case BOP_BITOR:
        return PyNumber_Or(a, b);
    case BOP_BITXOR:
        return PyNumber_Xor(a, b);
    case BOP_BITAND:
        return PyNumber_And(a, b);
    case BOP_FLOORDIV:
        return PyNumber_FloorDivide(a, b);
    default:
        PyErr_SetString(PyExc_SystemError, "bad binary operator");
        return NULL;
    }
}

PyObject *
exec_binop(int op, PyObject *a, PyObject *b, bool inplace)
{
    if (!inplace)
        return binop(op, a, b);
    switch (op) {
    case BOP_ADD:
        return PyNumber_InPlaceAdd(a, b);
    case BOP_SUB:
        return PyNumber_InPlaceSubtract(a, b);
    case BOP_MULT:
        return PyNumber_InPlaceMultiply(a, b);
    case BOP_MATMULT:
        return PyNumber_InPlaceMatrixMultiply(a, b);
    case BOP_DIV:
        return PyNumber_InPlaceTrueDivide(a, b);
    case BOP_MOD:
        return PyNumber_InPlaceRemainder(a, b);
    case BOP_POW:
        return PyNumber_InPlacePower(a, b, Py_None);
    case BOP_LSHIFT:
        return PyNumber_InPlaceLshift(a, b);
    case BOP_RSHIFT:
        return PyNumber_InPlaceRshift(a, b);
    case BOP_BITOR:
        return PyNumber_InPlaceOr(a, b);
    case BOP_BITXOR:
        return PyNumber_InPlaceXor(a, b);
    case BOP_BITAND:
        return PyNumber_InPlaceAnd(a, b);
    case BOP_FLOORDIV:
        return PyNumber_InPlaceFloorDivide(a, b);
    default:
        PyErr_SetString(PyExc_SystemError, "bad binary operator");
        return NULL;
    }
}

static PyObject *
unop(int op, PyObject *a)
{
    switch (op) {
    case UOP_INVERT:
        return PyNumber_Invert(a);
    case UOP_UADD:
        return PyNumber_Positive(a);
    case UOP_USUB:
        return PyNumber_Negative(a);
    case UOP_NOT: {
        int t = PyObject_IsTrue(a);
        return t < 0 ? NULL : Py_NewRef(t ? Py_False : Py_True);
    }
    default:
        PyErr_SetString(PyExc_SystemError, "bad unary operator");
        return NULL;
    }
}

static PyObject *
compare(int op, PyObject *a, PyObject *b)
{
    int t;
    switch (op) {
    case CMP_EQ:
        return PyObject_RichCompare(a, b, Py_EQ);
    case CMP_NOTEQ:
        return PyObject_RichCompare(a, b, Py_NE);
    case CMP_LT:
        return PyObject_RichCompare(a, b, Py_LT);
    case CMP_LTE:
        return PyObject_RichCompare(a, b, Py_LE);
    case CMP_GT:
        return PyObject_RichCompare(a, b, Py_GT);
    case CMP_GTE:
        return PyObject_RichCompare(a, b, Py_GE);
    case CMP_IS:
        return Py_NewRef(a == b ? Py_True : Py_False);
    case CMP_ISNOT:
        return Py_NewRef(a != b ? Py_True : Py_False);
    case CMP_IN:
    case CMP_NOTIN:
        t = PySequence_Contains(b, a);
        if (t < 0)
            return NULL;
        return Py_NewRef((t != 0) == (op == CMP_IN) ? Py_True : Py_False);
    default:
        PyErr_SetString(PyExc_SystemError, "bad comparison operator");
        return NULL;
    }
}

static PyObject *
eval_compare(struct exec_run *r, const struct node *n)
{
    PyObject *left = exec_eval(r, n->a);
    if (!left)
        return NULL;
    for (uint32_t i = 0; i < n->nv; i++) {
        PyObject *right = exec_eval(r, n->v[i]);
        if (!right) {
            Py_DECREF(left);
            return NULL;
        }
        PyObject *res = compare(n->iv[i], left, right);
        Py_DECREF(left);
        if (!res || i + 1 == n->nv) {
            Py_DECREF(right);
            return res;
        }
        int t = PyObject_IsTrue(res);
        if (t <= 0) {
            Py_DECREF(right);
            if (t < 0)
                Py_CLEAR(res);
            return res;
        }
        Py_DECREF(res);
        left = right;
    }
    return left; /* no comparators: the parser never produces this */
}

static PyObject *
eval_boolop(struct exec_run *r, const struct node *n)
{
    bool is_or = n->flags & NF_BOOL_OR;
    PyObject *v = NULL;
    for (uint32_t i = 0; i < n->nv; i++) {
        Py_XDECREF(v);
        if (!(v = exec_eval(r, n->v[i])))
            return NULL;
        if (i + 1 == n->nv)
            break;
        int t = PyObject_IsTrue(v);
        if (t < 0) {
            Py_DECREF(v);
            return NULL;
        }
        if (t == is_or)
            break;
    }
    return v;
}

/* Appends the items of a *value, with CPython's wording for a non-iterable. */
static int
extend_star(PyObject *list, PyObject *v)
{
    if (!Py_TYPE(v)->tp_iter && !PySequence_Check(v)) {
        PyErr_Format(PyExc_TypeError, "Value after * must be an iterable, not %.200s",
                     Py_TYPE(v)->tp_name);
        return -1;
    }
    PyObject *none = _PyList_Extend((PyListObject *) list, v);
    if (!none)
        return -1;
    Py_DECREF(none);
    return 0;
}

static PyObject *
eval_sequence(struct exec_run *r, const struct node *n)
{
    if (!(n->flags & NF_HAS_STAR) && n->kind != NK_E_SET) {
        PyObject *seq = n->kind == NK_E_LIST ? PyList_New(n->nv) : PyTuple_New(n->nv);
        if (!seq)
            return NULL;
        for (uint32_t i = 0; i < n->nv; i++) {
            PyObject *v = exec_eval(r, n->v[i]);
            if (!v) {
                Py_DECREF(seq);
                return NULL;
            }
            if (n->kind == NK_E_LIST)
                PyList_SET_ITEM(seq, i, v);
            else
                PyTuple_SET_ITEM(seq, i, v);
        }
        return seq;
    }
    PyObject *list = PyList_New(0);
    if (!list)
        return NULL;
    for (uint32_t i = 0; i < n->nv; i++) {
        const struct node *e = n->v[i];
        PyObject *v = exec_eval(r, e->kind == NK_E_STARRED ? e->a : e);
        int rc = !v ? -1 : e->kind == NK_E_STARRED ? extend_star(list, v) : PyList_Append(list, v);
        Py_XDECREF(v);
        if (rc < 0) {
            Py_DECREF(list);
            return NULL;
        }
    }
    PyObject *res = list;
    if (n->kind == NK_E_TUPLE)
        res = PyList_AsTuple(list);
    else if (n->kind == NK_E_SET)
        res = PySet_New(list);
    if (res != list)
        Py_DECREF(list);
    return res;
}

static PyObject *
eval_dict(struct exec_run *r, const struct node *n)
{
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    for (uint32_t i = 0; i < n->nv; i++) {
        PyObject *k = NULL, *v = NULL;
        int rc = -1;
        if (n->v[i] && !(k = exec_eval(r, n->v[i])))
            goto fail;
        if (!(v = exec_eval(r, n->w[i])))
            goto fail;
        if (k) {
            rc = PyDict_SetItem(d, k, v);
        } else {
            rc = PyDict_Update(d, v);
            if (rc < 0 && PyErr_ExceptionMatches(PyExc_AttributeError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "'%.200s' object is not a mapping",
                             Py_TYPE(v)->tp_name);
            }
        }
fail:
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (rc < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

static PyObject *
eval_formatted(struct exec_run *r, const struct node *n)
{
    PyObject *v = exec_eval(r, n->a);
    if (!v)
        return NULL;
    PyObject *c = v;
    switch (n->op) {
    case 's':
        c = PyObject_Str(v);
        break;
    case 'r':
        c = PyObject_Repr(v);
        break;
    case 'a':
        c = PyObject_ASCII(v);
        break;
    default:
        Py_INCREF(c);
        break;
    }
    Py_DECREF(v);
    if (!c)
        return NULL;
    PyObject *spec = NULL;
    if (n->b && !(spec = exec_eval(r, n->b))) {
        Py_DECREF(c);
        return NULL;
    }
    PyObject *res = PyObject_Format(c, spec);
    Py_DECREF(c);
    Py_XDECREF(spec);
    return res;
}

static PyObject *
eval_joined(struct exec_run *r, const struct node *n)
{
    PyObject *small[16];
    PyObject **parts = n->nv <= 16 ? small : PyMem_Malloc(sizeof(*parts) * n->nv);
    if (!parts)
        return PyErr_NoMemory();
    PyObject *res = NULL;
    uint32_t got = 0;
    for (; got < n->nv; got++) {
        PyObject *p = exec_eval(r, n->v[got]);
        if (!p)
            goto out;
        if (!PyUnicode_Check(p)) {
            PyErr_SetString(PyExc_SystemError, "f-string part is not a str");
            Py_DECREF(p);
            goto out;
        }
        parts[got] = p;
    }
    static PyObject *empty; /* the "" singleton, kept for the process */
    if (!empty && !(empty = PyUnicode_FromStringAndSize("", 0)))
        goto out;
    res = _PyUnicode_JoinArray(empty, parts, n->nv);
out:
    for (uint32_t i = 0; i < got; i++)
        Py_DECREF(parts[i]);
    if (parts != small)
        PyMem_Free(parts);
    return res;
}

static PyObject *
eval_slice(struct exec_run *r, const struct node *n)
{
    PyObject *p[3] = {NULL, NULL, NULL};
    const struct node *kids[3] = {n->a, n->b, n->c};
    PyObject *res = NULL;
    for (int i = 0; i < 3; i++)
        if (kids[i] && !(p[i] = exec_eval(r, kids[i])))
            goto out;
    res = PySlice_New(p[0], p[1], p[2]);
out:
    for (int i = 0; i < 3; i++)
        Py_XDECREF(p[i]);
    return res;
}

static PyObject *
eval_subscript(struct exec_run *r, const struct node *n)
{
    PyObject *obj = exec_eval(r, n->a);
    if (!obj)
        return NULL;
    PyObject *key = exec_eval(r, n->b);
    if (!key) {
        Py_DECREF(obj);
        return NULL;
    }
    PyObject *v = PyObject_GetItem(obj, key);
    Py_DECREF(obj);
    Py_DECREF(key);
    if (v && exec_check_value(r, v) < 0)
        Py_CLEAR(v);
    return v;
}

PyObject *
exec_eval_attr(struct exec_run *r, const struct node *n)
{
    /* the object first, as CPython does: a.b.c names the first refused step */
    PyObject *obj = exec_eval(r, n->a);
    if (!obj)
        return NULL;
    if ((n->flags & NF_FORBIDDEN) && exec_check_attr_name(r, n->obj) < 0) {
        Py_DECREF(obj);
        return NULL;
    }
    /* the name passed its checks at compile time: only the value needs a look */
    PyObject *v = exec_class_getattr_own_read(obj, n->obj);
    if (v && unlikely((n->flags & NF_PRIVATE) || !exec_value_is_plain(v)))
        v = exec_getattr_result(r, obj, n->obj, v);
    Py_DECREF(obj);
    return v;
}

static PyObject *
eval_unsupported(struct exec_run *r, const struct node *n)
{
    return exec_fail(r, ABORT_NONE, "%s is not supported", PyUnicode_AsUTF8(n->obj));
}

static PyObject *
eval_binop_node(struct exec_run *r, const struct node *n)
{
    PyObject *a = exec_eval(r, n->a);
    if (!a)
        return NULL;
    PyObject *b = exec_eval(r, n->b);
    if (!b) {
        Py_DECREF(a);
        return NULL;
    }
    PyObject *v = binop(n->op, a, b);
    Py_DECREF(a);
    Py_DECREF(b);
    return v;
}

static PyObject *
stack_full(void)
{
    PyErr_SetString(PyExc_RecursionError,
                    "maximum recursion depth exceeded (the executor's C stack is full)");
    return NULL;
}

PyObject *
exec_eval(struct exec_run *r, const struct node *n)
{
    if (exec_tick(r) < 0)
        return NULL;
    /* deep expressions in a generator's smaller stack: one compare per node keeps it safe */
    if (unlikely((char *) __builtin_frame_address(0) < r->stack_limit))
        return stack_full();
    switch (n->kind) {
    case NK_E_CONST:
        return Py_NewRef(n->obj);
    case NK_E_NAME:
        if (n->op == NAME_FAST && r->frame->slots[n->slot])
            return Py_NewRef(r->frame->slots[n->slot]);
        return exec_name_load(r, n, false);
    case NK_E_BINOP:
        return eval_binop_node(r, n);
    case NK_E_CALL:
        return exec_call(r, n);
    case NK_E_ATTR:
        return exec_eval_attr(r, n);
    case NK_E_SUBSCRIPT:
        return eval_subscript(r, n);
    case NK_E_COMPARE:
        return eval_compare(r, n);
    case NK_E_BOOLOP:
        return eval_boolop(r, n);
    case NK_E_UNARY: {
        PyObject *a = exec_eval(r, n->a);
        if (!a)
            return NULL;
        PyObject *v = unop(n->op, a);
        Py_DECREF(a);
        return v;
    }
    case NK_E_IFEXP: {
        PyObject *t = exec_eval(r, n->a);
        if (!t)
            return NULL;
        int truth = PyObject_IsTrue(t);
        Py_DECREF(t);
        if (truth < 0)
            return NULL;
        return exec_eval(r, truth ? n->b : n->c);
    }
    case NK_E_LIST:
    case NK_E_TUPLE:
    case NK_E_SET:
        return eval_sequence(r, n);
    case NK_E_DICT:
        return eval_dict(r, n);
    case NK_E_SLICE:
        return eval_slice(r, n);
    case NK_E_JOINEDSTR:
        return eval_joined(r, n);
    case NK_E_FORMATTED:
        return eval_formatted(r, n);
    case NK_E_LAMBDA:
        return exec_function_new(r, n);
    case NK_E_NAMEDEXPR: {
        PyObject *v = exec_eval(r, n->b);
        if (v && exec_name_store(r, n->a, v) < 0)
            Py_CLEAR(v);
        return v;
    }
    case NK_E_COMP:
        return exec_eval_comp(r, n);
    case NK_E_YIELD:
    case NK_E_YIELDFROM:
        return exec_eval_yield(r, n);
    case NK_E_STARRED:
        return exec_fail(r, ABORT_NONE, "can't use starred expression here");
    case NK_E_UNSUPPORTED:
        return eval_unsupported(r, n);
    default:
        PyErr_Format(PyExc_SystemError, "executor: node kind %d is not an expression", n->kind);
        return NULL;
    }
}
