/* The walk over statements: assignment (names, attributes, subscripts, unpacking), del,
 * augmented assignment, if/for/while, import. */
#include <string.h>

#include "exec_internal.h"

static PyObject *
load_global(struct exec_run *r, PyObject *name, bool for_call)
{
    PyObject *v = PyDict_GetItemWithError(r->globals, name);
    if (!v && !PyErr_Occurred())
        v = PyDict_GetItemWithError(r->builtins, name);
    if (v)
        return Py_NewRef(v);
    if (PyErr_Occurred())
        return NULL;
    if (for_call)
        return exec_fail(r, ABORT_NONE,
                         "Forbidden function evaluation: '%U' is not among the explicitly allowed "
                         "tools or defined/imported in the preceding code",
                         name);
    PyErr_Format(PyExc_NameError, "The variable `%U` is not defined.", name);
    return NULL;
}

static PyObject *
unbound_local(PyObject *name)
{
    PyErr_Format(PyExc_UnboundLocalError,
                 "cannot access local variable '%U' where it is not associated with a value", name);
    return NULL;
}

/* An empty cell: the frame's own variable (UnboundLocalError) or an enclosing one's. */
static PyObject *
unbound_cell(struct exec_run *r, const struct node *n)
{
    const struct exec_code *c = r->frame->code;
    for (uint32_t i = 0; i < c->ncells; i++)
        if (c->cells[i] == n->slot)
            return unbound_local(n->obj);
    PyErr_Format(PyExc_NameError,
                 "cannot access free variable '%U' where it is not associated with a value in "
                 "enclosing scope",
                 n->obj);
    return NULL;
}

PyObject *
exec_name_load(struct exec_run *r, const struct node *n, bool for_call)
{
    PyObject *v;
    switch (n->op) {
    case NAME_FAST:
        v = r->frame->slots[n->slot];
        return v ? Py_NewRef(v) : unbound_local(n->obj);
    case NAME_DEREF:
        v = PyCell_GET(r->frame->slots[n->slot]);
        if (v)
            return Py_NewRef(v);
        return unbound_cell(r, n);
    case NAME_CLASS:
        v = PyObject_GetItem(r->frame->ns, n->obj);
        if (v || !PyErr_ExceptionMatches(PyExc_KeyError))
            return v;
        PyErr_Clear();
        return load_global(r, n->obj, for_call);
    default:
        return load_global(r, n->obj, for_call);
    }
}

int
exec_name_store(struct exec_run *r, const struct node *n, PyObject *v)
{
    /* every value the snippet names passes here: items of a for loop or an unpacking come
     * from containers whose elements no other check saw */
    if (exec_check_value(r, v) < 0)
        return -1;
    switch (n->op) {
    case NAME_FAST:
        Py_XSETREF(r->frame->slots[n->slot], Py_NewRef(v));
        return 0;
    case NAME_DEREF:
        return PyCell_Set(r->frame->slots[n->slot], v);
    case NAME_CLASS:
        return PyObject_SetItem(r->frame->ns, n->obj, v);
    default:
        return PyDict_SetItem(r->globals, n->obj, v);
    }
}

int
exec_name_delete(struct exec_run *r, const struct node *n)
{
    int rc;
    switch (n->op) {
    case NAME_FAST:
        if (!r->frame->slots[n->slot])
            return unbound_local(n->obj) ? 0 : -1;
        Py_CLEAR(r->frame->slots[n->slot]);
        return 0;
    case NAME_DEREF:
        if (!PyCell_GET(r->frame->slots[n->slot]))
            return unbound_cell(r, n) ? 0 : -1;
        return PyCell_Set(r->frame->slots[n->slot], NULL);
    case NAME_CLASS:
        rc = PyObject_DelItem(r->frame->ns, n->obj);
        break;
    default:
        rc = PyDict_DelItem(r->globals, n->obj);
        break;
    }
    if (rc < 0 && PyErr_ExceptionMatches(PyExc_KeyError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_NameError, "name '%U' is not defined", n->obj);
    }
    return rc;
}

/* The starred target of unpack, once the `star` items before it are taken: the rest of `it` as
 * a list, its last items moved out to the targets after the star. On failure, what was put in
 * items is left there for the caller to release. */
static int
unpack_starred(PyObject *it, PyObject **items, uint32_t n, uint32_t star)
{
    PyObject *rest = PySequence_List(it);
    if (!rest)
        return -1;
    uint32_t tail = n - star - 1;
    Py_ssize_t len = PyList_GET_SIZE(rest);
    if ((size_t) len < tail) {
        PyErr_Format(PyExc_ValueError,
                     "not enough values to unpack (expected at least %u, got %zd)", n - 1,
                     (Py_ssize_t) star + len);
        Py_DECREF(rest);
        return -1;
    }
    for (uint32_t i = 0; i < tail; i++)
        items[star + 1 + i] = Py_NewRef(PyList_GET_ITEM(rest, len - tail + i));
    if (PyList_SetSlice(rest, len - tail, len, NULL) < 0) {
        Py_DECREF(rest);
        return -1;
    }
    items[star] = rest;
    return 0;
}

/* a, b, *c = value: CPython's order and messages (all items are taken before any store). */
static int
unpack(struct exec_run *r, const struct node *t, PyObject *value)
{
    uint32_t n = t->nv, star = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (t->v[i]->kind == NK_E_STARRED)
            star = i;
    PyObject *it = PyObject_GetIter(value);
    if (!it) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "cannot unpack non-iterable %.200s object",
                         Py_TYPE(value)->tp_name);
        }
        return -1;
    }
    PyObject **items = PyMem_Calloc(n ? n : 1, sizeof(*items));
    int rc = -1;
    uint32_t head = star == UINT32_MAX ? n : star, got = 0;
    if (!items) {
        PyErr_NoMemory();
        goto out;
    }
    for (; got < head; got++) {
        if (!(items[got] = PyIter_Next(it))) {
            if (!PyErr_Occurred() && star == UINT32_MAX)
                PyErr_Format(PyExc_ValueError, "not enough values to unpack (expected %u, got %u)",
                             n, got);
            else if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError,
                             "not enough values to unpack (expected at least %u, got %u)", n - 1,
                             got);
            goto out;
        }
    }
    if (star == UINT32_MAX) {
        PyObject *extra = PyIter_Next(it);
        if (extra) {
            Py_DECREF(extra);
            PyErr_Format(PyExc_ValueError, "too many values to unpack (expected %u)", n);
            goto out;
        }
        if (PyErr_Occurred())
            goto out;
    } else if (unpack_starred(it, items, n, star) < 0) {
        goto out;
    }
    rc = 0;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        const struct node *tv = t->v[i];
        rc = exec_assign(r, tv->kind == NK_E_STARRED ? tv->a : tv, items[i]);
    }
out:
    for (uint32_t i = 0; items && i < n; i++)
        Py_XDECREF(items[i]);
    PyMem_Free(items);
    Py_DECREF(it);
    return rc;
}

int
exec_assign(struct exec_run *r, const struct node *t, PyObject *value)
{
    PyObject *obj, *key;
    int rc;
    switch (t->kind) {
    case NK_E_NAME:
        if (t->op == NAME_FAST) {
            if (exec_check_value(r, value) < 0)
                return -1;
            Py_XSETREF(r->frame->slots[t->slot], Py_NewRef(value));
            return 0;
        }
        return exec_name_store(r, t, value);
    case NK_E_ATTR:
        if (!(obj = exec_eval(r, t->a)))
            return -1;
        /* a refused name (NF_FORBIDDEN), a module, a class or a typing object go to
         * exec_setattr, which refuses the name or what it would change */
        rc = (t->flags & NF_FORBIDDEN) || PyModule_Check(obj) || PyType_Check(obj) ||
                             exec_is_typing_object(obj)
                     ? exec_setattr(r, obj, t->obj, value)
                     : PyObject_SetAttr(obj, t->obj, value);
        Py_DECREF(obj);
        return rc;
    case NK_E_SUBSCRIPT:
        if (!(obj = exec_eval(r, t->a)))
            return -1;
        if (!(key = exec_eval(r, t->b))) {
            Py_DECREF(obj);
            return -1;
        }
        rc = PyObject_SetItem(obj, key, value);
        Py_DECREF(obj);
        Py_DECREF(key);
        return rc;
    case NK_E_TUPLE:
    case NK_E_LIST:
        return unpack(r, t, value);
    default:
        exec_fail(r, ABORT_NONE, "cannot assign to this expression");
        return -1;
    }
}

static int
exec_delete(struct exec_run *r, const struct node *t)
{
    PyObject *obj, *key;
    int rc;
    switch (t->kind) {
    case NK_E_NAME:
        return exec_name_delete(r, t);
    case NK_E_ATTR:
        if ((t->flags & NF_FORBIDDEN) && exec_check_attr_store_name(r, t->obj) < 0)
            return -1;
        if (!(obj = exec_eval(r, t->a)))
            return -1;
        rc = exec_check_attr_owner(r, obj, t->obj, true) < 0 ? -1 : PyObject_DelAttr(obj, t->obj);
        Py_DECREF(obj);
        return rc;
    case NK_E_SUBSCRIPT:
        if (!(obj = exec_eval(r, t->a)))
            return -1;
        if (!(key = exec_eval(r, t->b))) {
            Py_DECREF(obj);
            return -1;
        }
        rc = PyObject_DelItem(obj, key);
        Py_DECREF(obj);
        Py_DECREF(key);
        return rc;
    case NK_E_TUPLE:
    case NK_E_LIST:
        for (uint32_t i = 0; i < t->nv; i++)
            if (exec_delete(r, t->v[i]) < 0)
                return -1;
        return 0;
    default:
        exec_fail(r, ABORT_NONE, "cannot delete this expression");
        return -1;
    }
}

static int
exec_augassign(struct exec_run *r, const struct node *s)
{
    const struct node *t = s->a;
    PyObject *obj = NULL, *key = NULL, *old = NULL, *val = NULL, *res = NULL;
    int rc = -1;
    switch (t->kind) {
    case NK_E_NAME:
        old = exec_name_load(r, t, false);
        break;
    case NK_E_ATTR:
        /* a refused name is refused by exec_getattr, one read but not set by exec_setattr */
        if ((obj = exec_eval(r, t->a)))
            old = exec_getattr(r, obj, t->obj);
        break;
    case NK_E_SUBSCRIPT:
        if ((obj = exec_eval(r, t->a)) && (key = exec_eval(r, t->b)))
            old = PyObject_GetItem(obj, key);
        break;
    default:
        exec_fail(r, ABORT_NONE, "illegal expression for augmented assignment");
        return -1;
    }
    if (!old || !(val = exec_eval(r, s->b)) || !(res = exec_binop(s->op, old, val, true)))
        goto out;
    if (t->kind == NK_E_NAME)
        rc = exec_name_store(r, t, res);
    else if (t->kind == NK_E_ATTR)
        rc = exec_setattr(r, obj, t->obj, res);
    else
        rc = PyObject_SetItem(obj, key, res);
out:
    Py_XDECREF(obj);
    Py_XDECREF(key);
    Py_XDECREF(old);
    Py_XDECREF(val);
    Py_XDECREF(res);
    return rc;
}

static int
exec_for(struct exec_run *r, const struct node *s)
{
    PyObject *seq = exec_eval(r, s->b);
    if (!seq)
        return FLOW_ERROR;
    PyObject *it = PyObject_GetIter(seq), *item;
    Py_DECREF(seq);
    if (!it)
        return FLOW_ERROR;
    int flow = FLOW_NEXT;
    while ((item = PyIter_Next(it))) {
        int rc = exec_assign(r, s->a, item);
        Py_DECREF(item);
        flow = rc < 0 ? FLOW_ERROR : exec_block(r, s->v, s->nv);
        if (flow == FLOW_ERROR || flow == FLOW_BREAK || flow == FLOW_RETURN)
            break;
        flow = FLOW_NEXT;
    }
    Py_DECREF(it);
    if (flow == FLOW_ERROR || (flow != FLOW_RETURN && PyErr_Occurred()))
        return FLOW_ERROR;
    if (flow == FLOW_RETURN)
        return flow;
    if (flow == FLOW_BREAK)
        return FLOW_NEXT;
    return exec_block(r, s->w, s->nw);
}

static int
exec_while(struct exec_run *r, const struct node *s)
{
    uint64_t max = r->env->policy.max_while_iterations, iterations = 0;
    for (;;) {
        PyObject *t = exec_eval(r, s->a);
        if (!t)
            return FLOW_ERROR;
        int truth = PyObject_IsTrue(t);
        Py_DECREF(t);
        if (truth < 0)
            return FLOW_ERROR;
        if (!truth)
            break;
        if (++iterations > max) {
            exec_fail(r, ABORT_ERROR, "Maximum number of %llu iterations in While loop exceeded",
                      (unsigned long long) max);
            return FLOW_ERROR;
        }
        int flow = exec_block(r, s->v, s->nv);
        if (flow == FLOW_ERROR || flow == FLOW_RETURN)
            return flow;
        if (flow == FLOW_BREAK)
            return FLOW_NEXT;
    }
    return exec_block(r, s->w, s->nw);
}

static int
exec_import(struct exec_run *r, const struct node *s)
{
    for (uint32_t i = 0; i < s->nv; i++) {
        const struct node *alias = s->v[i];
        const char *name = PyUnicode_AsUTF8(alias->obj);
        if (!name)
            return -1;
        if (!exec_import_allowed(r->env, name)) {
            exec_raise_import_refused(r->env, name);
            return -1;
        }
        /* `import a.b` binds a, which must be allowed itself */
        const char *bound = PyUnicode_AsUTF8(alias->a->obj);
        if (!alias->obj2 && strcmp(bound, name) != 0 && !exec_import_allowed(r->env, bound)) {
            exec_raise_import_refused(r->env, bound);
            return -1;
        }
        PyObject *mod = alias->obj2
                                ? PyImport_Import(alias->obj)
                                : PyImport_ImportModuleLevelObject(alias->obj, NULL, NULL, NULL, 0);
        if (mod)
            exec_audit_note_imports();
        int rc = mod ? exec_name_store(r, alias->a, mod) : -1;
        Py_XDECREF(mod);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* `from m import *` is only allowed at module level (CPython's rule), so names go to globals
 * or, in a class body, to its namespace. */
static int
exec_store_global_or_frame(struct exec_run *r, PyObject *name, PyObject *v)
{
    if (r->frame && r->frame->ns)
        return PyObject_SetItem(r->frame->ns, name, v);
    return PyDict_SetItem(r->globals, name, v);
}

static int
import_star(struct exec_run *r, PyObject *mod)
{
    if (r->frame && !r->frame->ns) {
        PyErr_SetString(PyExc_SyntaxError, "import * only allowed at module level");
        return -1;
    }
    PyObject *names = PyObject_GetAttrString(mod, "__all__");
    if (!names) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        PyObject *dict = PyModule_GetDict(mod);
        if (!dict || !(names = PyDict_Keys(dict)))
            return -1;
    }
    PyObject *seq = PySequence_Fast(names, "__all__ must be a sequence");
    Py_DECREF(names);
    if (!seq)
        return -1;
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *name = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyUnicode_Check(name) || PyUnicode_GET_LENGTH(name) == 0 ||
            PyUnicode_READ_CHAR(name, 0) == '_')
            continue;
        /* a name refused on every route (enum's global_enum) is left unbound, not made a
         * reason to refuse the whole import */
        if (PyUnicode_IS_ASCII(name) && exec_dunder_forbidden(PyUnicode_AsUTF8(name)))
            continue;
        PyObject *v = PyObject_GetAttr(mod, name);
        v = v ? exec_guard_getters(r, v) : NULL;
        rc = v && exec_check_value(r, v) == 0 ? exec_store_global_or_frame(r, name, v) : -1;
        Py_XDECREF(v);
    }
    Py_DECREF(seq);
    return rc;
}

static int
exec_import_from(struct exec_run *r, const struct node *s)
{
    if (s->op > 0 || !s->obj) {
        exec_fail(r, ABORT_NONE, "Relative imports are not supported");
        return -1;
    }
    const char *modname = PyUnicode_AsUTF8(s->obj);
    if (!modname)
        return -1;
    if (!exec_import_allowed(r->env, modname)) {
        exec_raise_import_refused(r->env, modname);
        return -1;
    }
    PyObject *fromlist = PyTuple_New(s->nv);
    if (!fromlist)
        return -1;
    for (uint32_t i = 0; i < s->nv; i++)
        PyTuple_SET_ITEM(fromlist, i, Py_NewRef(s->v[i]->obj));
    PyObject *mod = PyImport_ImportModuleLevelObject(s->obj, NULL, NULL, fromlist, 0);
    Py_DECREF(fromlist);
    if (!mod)
        return -1;
    exec_audit_note_imports();
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < s->nv; i++) {
        const struct node *alias = s->v[i];
        if (strcmp(PyUnicode_AsUTF8(alias->obj), "*") == 0) {
            rc = import_star(r, mod);
            continue;
        }
        PyObject *v = PyObject_GetAttr(mod, alias->obj);
        if (!v && PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            PyObject *file = PyModule_GetFilenameObject(mod);
            if (!file)
                PyErr_Clear();
            if (file)
                PyErr_Format(PyExc_ImportError, "cannot import name '%U' from '%s' (%U)",
                             alias->obj, modname, file);
            else
                PyErr_Format(PyExc_ImportError,
                             "cannot import name '%U' from '%s' (unknown location)", alias->obj,
                             modname);
            Py_XDECREF(file);
        }
        if (v && PyModule_Check(v) && !exec_import_allowed(r->env, PyModule_GetName(v))) {
            exec_raise_import_refused(r->env, PyModule_GetName(v));
            Py_CLEAR(v);
        }
        const char *an = PyUnicode_AsUTF8(alias->obj);
        if (v && !PyModule_Check(v) && an[0] == '_' && !exec_is_allowed_dunder(an)) {
            exec_fail(r, ABORT_NONE, "Forbidden access to private attribute %s of module %s", an,
                      modname);
            Py_CLEAR(v);
        }
        v = v ? exec_guard_getters(r, v) : NULL;
        rc = v && exec_check_value(r, v) == 0 ? exec_name_store(r, alias->a, v) : -1;
        Py_XDECREF(v);
    }
    Py_DECREF(mod);
    return rc;
}

/* x: T in a module or class body: __annotations__[x] = T, as CPython records it. */
static int
annotate(struct exec_run *r, const struct node *s)
{
    PyObject *ns = r->frame && r->frame->ns ? r->frame->ns : r->globals;
    PyObject *ann = exec_eval(r, s->c);
    if (!ann)
        return -1;
    PyObject *key = PyUnicode_InternFromString("__annotations__");
    PyObject *dict = key ? PyObject_GetItem(ns, key) : NULL;
    if (!dict && key && PyErr_ExceptionMatches(PyExc_KeyError)) {
        PyErr_Clear();
        if ((dict = PyDict_New()) && PyObject_SetItem(ns, key, dict) < 0)
            Py_CLEAR(dict);
    }
    int rc = dict ? PyObject_SetItem(dict, s->a->obj, ann) : -1;
    Py_XDECREF(dict);
    Py_XDECREF(key);
    Py_DECREF(ann);
    return rc;
}

/* x: T = v, or x: T alone: the store, then the annotation where one is recorded. */
static int
exec_annassign(struct exec_run *r, const struct node *s)
{
    if (s->b) {
        PyObject *v = exec_eval(r, s->b);
        if (!v)
            return -1;
        int rc = exec_assign(r, s->a, v);
        Py_DECREF(v);
        if (rc < 0)
            return -1;
    }
    return s->c && annotate(r, s) < 0 ? -1 : 0;
}

int
exec_stmt(struct exec_run *r, const struct node *s)
{
    PyObject *v;
    int rc;
    if (exec_tick(r) < 0)
        return FLOW_ERROR;
    switch (s->kind) {
    case NK_S_EXPR:
        if (!(v = exec_eval(r, s->a)))
            return FLOW_ERROR;
        Py_DECREF(v);
        return FLOW_NEXT;
    case NK_S_ASSIGN:
        if (!(v = exec_eval(r, s->a)))
            return FLOW_ERROR;
        rc = 0;
        for (uint32_t i = 0; rc == 0 && i < s->nv; i++)
            rc = exec_assign(r, s->v[i], v);
        Py_DECREF(v);
        return rc < 0 ? FLOW_ERROR : FLOW_NEXT;
    case NK_S_ANNASSIGN:
        return exec_annassign(r, s) < 0 ? FLOW_ERROR : FLOW_NEXT;
    case NK_S_AUGASSIGN:
        return exec_augassign(r, s) < 0 ? FLOW_ERROR : FLOW_NEXT;
    case NK_S_DELETE:
        for (uint32_t i = 0; i < s->nv; i++)
            if (exec_delete(r, s->v[i]) < 0)
                return FLOW_ERROR;
        return FLOW_NEXT;
    case NK_S_IF:
        if (!(v = exec_eval(r, s->a)))
            return FLOW_ERROR;
        rc = PyObject_IsTrue(v);
        Py_DECREF(v);
        if (rc < 0)
            return FLOW_ERROR;
        return rc ? exec_block(r, s->v, s->nv) : exec_block(r, s->w, s->nw);
    case NK_S_FOR:
        return exec_for(r, s);
    case NK_S_WHILE:
        return exec_while(r, s);
    case NK_S_BREAK:
        return FLOW_BREAK;
    case NK_S_CONTINUE:
        return FLOW_CONTINUE;
    case NK_S_PASS:
        return FLOW_NEXT;
    case NK_S_IMPORT:
        return exec_import(r, s) < 0 ? FLOW_ERROR : FLOW_NEXT;
    case NK_S_IMPORTFROM:
        return exec_import_from(r, s) < 0 ? FLOW_ERROR : FLOW_NEXT;
    case NK_S_RETURN:
        if (s->a) {
            if (!(v = exec_eval(r, s->a)))
                return FLOW_ERROR;
        } else {
            v = Py_NewRef(Py_None);
        }
        Py_XSETREF(r->retval, v);
        return FLOW_RETURN;
    case NK_S_FUNCDEF:
        return exec_funcdef(r, s) < 0 ? FLOW_ERROR : FLOW_NEXT;
    case NK_S_CLASSDEF:
        return exec_classdef(r, s) < 0 ? FLOW_ERROR : FLOW_NEXT;
    case NK_S_TRY:
        return exec_try(r, s);
    case NK_S_RAISE:
        exec_raise(r, s);
        return FLOW_ERROR;
    case NK_S_ASSERT:
        return exec_assert(r, s) < 0 ? FLOW_ERROR : FLOW_NEXT;
    case NK_S_WITH:
        return exec_with(r, s);
    case NK_S_MATCH:
        return exec_match(r, s);
    case NK_S_UNSUPPORTED:
        exec_fail(r, ABORT_NONE, "%s is not supported", PyUnicode_AsUTF8(s->obj));
        return FLOW_ERROR;
    default:
        PyErr_Format(PyExc_SystemError, "executor: node kind %d is not a statement", s->kind);
        return FLOW_ERROR;
    }
}

int
exec_block(struct exec_run *r, struct node *const *stmts, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        int flow = exec_stmt(r, stmts[i]);
        if (flow != FLOW_NEXT)
            return flow;
    }
    return FLOW_NEXT;
}
