/* List, set and dict comprehensions: a frame of their own (their loop variables do not leak),
 * the first iterable evaluated outside it (CPython's rule). Generator expressions are
 * generators (generator.c) over the same frame layout. */
#include "exec_internal.h"

static int
add_item(struct exec_run *r, const struct node *n, PyObject *acc)
{
    PyObject *k = exec_eval(r, n->a);
    if (!k)
        return -1;
    if (!acc) {
        PyObject *sent = exec_gen_yield(r, k);
        Py_XDECREF(sent);
        return sent ? 0 : -1;
    }
    int rc;
    if (n->op == COMP_DICT) {
        PyObject *v = exec_eval(r, n->b);
        rc = v ? PyDict_SetItem(acc, k, v) : -1;
        Py_XDECREF(v);
    } else if (n->op == COMP_SET) {
        rc = PySet_Add(acc, k);
    } else {
        rc = PyList_Append(acc, k);
    }
    Py_DECREF(k);
    return rc;
}

/* Runs generator clause i (and the ones after it) over `it`. */
static int
comp_loop(struct exec_run *r, const struct node *n, uint32_t i, PyObject *it, PyObject *acc)
{
    const struct node *g = n->v[i];
    PyObject *item;
    while ((item = PyIter_Next(it))) {
        int rc = exec_assign(r, g->a, item);
        Py_DECREF(item);
        if (rc < 0)
            return -1;
        bool keep = true;
        for (uint32_t j = 0; keep && j < g->nv; j++) {
            PyObject *t = exec_eval(r, g->v[j]);
            int truth = t ? PyObject_IsTrue(t) : -1;
            Py_XDECREF(t);
            if (truth < 0)
                return -1;
            keep = truth;
        }
        if (!keep)
            continue;
        if (i + 1 == n->nv) {
            rc = add_item(r, n, acc);
        } else {
            PyObject *seq = exec_eval(r, n->v[i + 1]->b);
            PyObject *inner = seq ? PyObject_GetIter(seq) : NULL;
            Py_XDECREF(seq);
            rc = inner ? comp_loop(r, n, i + 1, inner, acc) : -1;
            Py_XDECREF(inner);
        }
        if (rc < 0)
            return -1;
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* Runs a comprehension frame whose slot 0 holds the iterator; acc NULL: a generator
 * expression, whose items are yielded. */
int
exec_comp_body(struct exec_run *r, const struct node *n, PyObject *acc)
{
    return comp_loop(r, n, 0, r->frame->slots[0], acc);
}

PyObject *
exec_eval_comp(struct exec_run *r, const struct node *n)
{
    const struct exec_code *c = n->code;
    PyObject *seq = exec_eval(r, n->v[0]->b);
    if (!seq)
        return NULL;
    PyObject *it = PyObject_GetIter(seq);
    Py_DECREF(seq);
    if (!it)
        return NULL;
    PyObject **slots = PyMem_Calloc(c->nslots + 1, sizeof(PyObject *));
    PyObject *closure = NULL, *res = NULL;
    if (!slots) {
        Py_DECREF(it);
        return PyErr_NoMemory();
    }
    slots[0] = it;
    if ((c->nfree && !(closure = exec_closure_new(r, c))) ||
        exec_frame_cells(c, slots, closure) < 0)
        goto out;
    if (c->is_generator) {
        res = exec_generator_new(r, c, n, slots, exec_cur_tree(r), c->name, c->qualname);
        slots = NULL;
        goto out;
    }
    PyObject *acc = n->op == COMP_DICT  ? PyDict_New()
                    : n->op == COMP_SET ? PySet_New(NULL)
                                        : PyList_New(0);
    if (!acc)
        goto out;
    struct exec_frame frame = {
            .slots = slots, .code = c, .back = r->frame, .tree_ref = exec_cur_tree(r)};
    r->frame = &frame;
    int rc = exec_comp_body(r, n, acc);
    r->frame = frame.back;
    if (rc < 0)
        Py_CLEAR(acc);
    res = acc;
out:
    Py_XDECREF(closure);
    if (slots) {
        exec_slots_free(slots, c->nslots);
        PyMem_Free(slots);
    }
    return res;
}
