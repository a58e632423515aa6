/* try ... except* (PEP 654), as CPython 3.11 runs it: each handler takes the part of the
 * exception group its type matches (a naked exception is wrapped in a group for it), and at
 * the end what no handler took, plus what handlers re-raised, keeps the original group's
 * structure, while what handlers raised anew is grouped with it. */
#include "exec_internal.h"

static PyObject *
split_name(void)
{
    static PyObject *name; /* kept for the process */
    if (!name)
        name = PyUnicode_InternFromString("split");
    return name;
}

/* Adds the identity of every leaf exception of e to the set. */
static int
add_leaves(PyObject *set, PyObject *e)
{
    if (!PyObject_TypeCheck(e, (PyTypeObject *) PyExc_BaseExceptionGroup)) {
        PyObject *id = PyLong_FromVoidPtr(e);
        int rc = id ? PySet_Add(set, id) : -1;
        Py_XDECREF(id);
        return rc;
    }
    PyObject *excs = PyObject_GetAttrString(e, "exceptions");
    if (!excs)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyTuple_GET_SIZE(excs); i++)
        rc = add_leaves(set, PyTuple_GET_ITEM(excs, i));
    Py_DECREF(excs);
    return rc;
}

/* 1 when every leaf of e is a leaf of the original exception (a re-raise) */
static int
all_leaves_in(PyObject *e, PyObject *orig_leaves)
{
    PyObject *mine = PySet_New(NULL);
    if (!mine || add_leaves(mine, e) < 0) {
        Py_XDECREF(mine);
        return -1;
    }
    PyObject *diff = PyNumber_Subtract(mine, orig_leaves);
    int rc = diff ? PySet_GET_SIZE(diff) == 0 : -1;
    Py_XDECREF(diff);
    Py_DECREF(mine);
    return rc;
}

static int
keep_has(PyObject *keep, PyObject *leaf)
{
    PyObject *id = PyLong_FromVoidPtr(leaf);
    int in = id ? PySet_Contains(keep, id) : -1;
    Py_XDECREF(id);
    return in;
}

/* The part of orig whose leaves are in keep, with orig's structure (as
 * BaseExceptionGroup.split builds it: derive() plus the chaining and notes); None when
 * empty. split() itself only takes Python functions as predicates in 3.11. */
static PyObject *
restrict_to(PyObject *orig, PyObject *keep)
{
    if (!PyObject_TypeCheck(orig, (PyTypeObject *) PyExc_BaseExceptionGroup)) {
        int in = keep_has(keep, orig);
        return in < 0 ? NULL : Py_NewRef(in ? orig : Py_None);
    }
    PyObject *excs = PyObject_GetAttrString(orig, "exceptions");
    PyObject *parts = excs ? PyList_New(0) : NULL, *res = NULL;
    bool same = true;
    for (Py_ssize_t i = 0; parts && i < PyTuple_GET_SIZE(excs); i++) {
        PyObject *child = PyTuple_GET_ITEM(excs, i), *part = restrict_to(child, keep);
        if (!part || (part != Py_None && PyList_Append(parts, part) < 0)) {
            Py_XDECREF(part);
            goto out;
        }
        same = same && part == child;
        Py_DECREF(part);
    }
    if (!parts)
        goto out;
    if (PyList_GET_SIZE(parts) == 0) {
        res = Py_NewRef(Py_None);
    } else if (same) {
        res = Py_NewRef(orig);
    } else if ((res = PyObject_CallMethod(orig, "derive", "(O)", parts))) {
        static const char *const copy[] = {"__traceback__", "__cause__", "__context__",
                                           "__notes__"};
        for (int i = 0; i < 4; i++) {
            PyObject *v = PyObject_GetAttrString(orig, copy[i]);
            if (!v) {
                PyErr_Clear();
                continue;
            }
            if (PyObject_SetAttrString(res, copy[i], v) < 0)
                PyErr_Clear();
            Py_DECREF(v);
        }
    }
out:
    Py_XDECREF(parts);
    Py_XDECREF(excs);
    return res;
}

/* (match, rest) of exc for handler type t; either may be None. */
static int
split_for(PyObject *exc, PyObject *t, PyObject **ret_match, PyObject **ret_rest)
{
    if (PyObject_TypeCheck(exc, (PyTypeObject *) PyExc_BaseExceptionGroup)) {
        PyObject *pair = PyObject_CallMethodOneArg(exc, split_name(), t);
        if (!pair)
            return -1;
        *ret_match = Py_NewRef(PyTuple_GET_ITEM(pair, 0));
        *ret_rest = Py_NewRef(PyTuple_GET_ITEM(pair, 1));
        Py_DECREF(pair);
        return 0;
    }
    int m = PyErr_GivenExceptionMatches(exc, t);
    if (!m) {
        *ret_match = Py_NewRef(Py_None);
        *ret_rest = Py_NewRef(exc);
        return 0;
    }
    /* a naked exception is wrapped for the handler */
    PyObject *group = PyObject_CallFunction(PyExc_BaseExceptionGroup, "s(O)", "", exc);
    if (!group)
        return -1;
    *ret_match = group;
    *ret_rest = Py_NewRef(Py_None);
    return 0;
}

static int
check_star_type(PyObject *t)
{
    PyObject *items = PyTuple_Check(t) ? Py_NewRef(t) : PyTuple_Pack(1, t);
    if (!items)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PyTuple_GET_SIZE(items); i++) {
        PyObject *c = PyTuple_GET_ITEM(items, i);
        if (!PyExceptionClass_Check(c)) {
            PyErr_SetString(PyExc_TypeError, "catching classes that do not inherit from "
                                             "BaseException is not allowed");
            rc = -1;
        } else if (PyObject_IsSubclass(c, PyExc_BaseExceptionGroup) > 0) {
            PyErr_SetString(PyExc_TypeError, "catching ExceptionGroup with except* is not "
                                             "allowed. Use except instead.");
            rc = -1;
        }
    }
    Py_DECREF(items);
    return rc;
}

/* Runs handler h on match; appends what it raised to raised. Returns FLOW_NEXT, or
 * FLOW_ERROR with an exception set when the handler itself could not run. */
static int
run_star_handler(struct exec_run *r, const struct node *h, PyObject *match, PyObject *raised)
{
    PyObject *prev = r->handling;
    r->handling = Py_NewRef(match);
    PyErr_SetHandledException(match);
    int flow =
            h->b && exec_name_store(r, h->b, match) < 0 ? FLOW_ERROR : exec_block(r, h->v, h->nv);
    exec_handled_leave(r, prev);
    Py_SETREF(r->handling, prev);
    int rc = FLOW_NEXT;
    if (flow == FLOW_ERROR) {
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        PyErr_NormalizeException(&t, &v, &tb);
        if (tb && v)
            PyException_SetTraceback(v, tb);
        if (r->abort != ABORT_NONE) {
            PyErr_Restore(t, v, tb);
            rc = FLOW_ERROR;
        } else {
            if (v && v != match && !PyException_GetContext(v))
                PyException_SetContext(v, Py_NewRef(match));
            else if (v && v != match)
                Py_DECREF(PyException_GetContext(v)); /* GetContext returned a new ref */
            if (!v || PyList_Append(raised, v) < 0)
                rc = FLOW_ERROR;
            Py_XDECREF(t);
            Py_XDECREF(v);
            Py_XDECREF(tb);
        }
    }
    if (h->b) {
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        if (exec_name_delete(r, h->b) < 0)
            PyErr_Clear();
        PyErr_Restore(t, v, tb);
    }
    return rc;
}

/* What to raise after the handlers (3.11.2's _PyExc_PrepReraiseStar): for a naked original,
 * what its one handler raised, else itself if unhandled; for a group, the kept part of the
 * original alone, or new raises grouped with it. */
static int
reraise_star(PyObject *orig, PyObject *rest, PyObject *raised)
{
    if (!PyObject_TypeCheck(orig, (PyTypeObject *) PyExc_BaseExceptionGroup)) {
        PyObject *e = PyList_GET_SIZE(raised) ? PyList_GET_ITEM(raised, 0) : rest;
        if (e == Py_None)
            return 0;
        PyErr_SetObject((PyObject *) Py_TYPE(e), e);
        return -1;
    }
    PyObject *orig_leaves = PySet_New(NULL), *keep = PySet_New(NULL), *list = PyList_New(0);
    PyObject *kept = NULL;
    int rc = -1;
    if (!orig_leaves || !keep || !list || add_leaves(orig_leaves, orig) < 0 ||
        (rest != Py_None && add_leaves(keep, rest) < 0))
        goto out;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(raised); i++) {
        PyObject *e = PyList_GET_ITEM(raised, i);
        int re = all_leaves_in(e, orig_leaves);
        if (re < 0 || (re ? add_leaves(keep, e) : PyList_Append(list, e)) < 0)
            goto out;
    }
    if (!(kept = restrict_to(orig, keep)))
        goto out;
    if (PyList_GET_SIZE(list) == 0) {
        rc = 0;
        if (kept != Py_None) {
            PyErr_SetObject((PyObject *) Py_TYPE(kept), kept);
            rc = -1;
        }
        goto out;
    }
    if (kept != Py_None && PyList_Append(list, kept) < 0)
        goto out;
    PyObject *e = PyObject_CallFunction(PyExc_BaseExceptionGroup, "sO", "", list);
    if (e) {
        PyErr_SetObject((PyObject *) Py_TYPE(e), e);
        Py_DECREF(e);
    }
out:
    Py_XDECREF(kept);
    Py_XDECREF(orig_leaves);
    Py_XDECREF(keep);
    Py_XDECREF(list);
    return rc;
}

int
exec_handle_star(struct exec_run *r, const struct node *s)
{
    PyObject *t, *orig, *tb;
    PyErr_Fetch(&t, &orig, &tb);
    PyErr_NormalizeException(&t, &orig, &tb);
    if (tb && orig)
        PyException_SetTraceback(orig, tb);
    Py_XDECREF(t);
    Py_XDECREF(tb);
    if (!orig)
        return FLOW_ERROR;
    PyObject *rest = Py_NewRef(orig), *raised = PyList_New(0);
    int flow = raised ? FLOW_NEXT : FLOW_ERROR;
    for (uint32_t i = 0; flow == FLOW_NEXT && rest != Py_None && i < s->nw; i++) {
        const struct node *h = s->w[i];
        PyObject *ty = exec_eval(r, h->a), *match = NULL, *nrest = NULL;
        if (!ty || check_star_type(ty) < 0 || split_for(rest, ty, &match, &nrest) < 0) {
            Py_XDECREF(ty);
            exec_chain_context(orig);
            flow = FLOW_ERROR;
            break;
        }
        Py_DECREF(ty);
        Py_SETREF(rest, nrest);
        if (match != Py_None)
            flow = run_star_handler(r, h, match, raised);
        Py_DECREF(match);
    }
    if (flow == FLOW_NEXT)
        flow = reraise_star(orig, rest, raised) < 0 ? FLOW_ERROR : FLOW_NEXT;
    Py_XDECREF(raised);
    Py_DECREF(rest);
    Py_DECREF(orig);
    return flow;
}
