/* Where each name lives, decided once at compile time, with CPython's rules: a name bound in a
 * function is local to it (a frame slot) unless declared global or nonlocal; a name an inner
 * function uses from an enclosing function is reached through a cell, which every scope in
 * between passes along; class bodies bind into their namespace and are skipped when inner
 * functions look for an owner, except for the implicit __class__ cell that super() needs. */
#include <string.h>

#include "compile_internal.h"

struct cscope *
exec_scope_push(struct cstate *cs, int kind)
{
    struct cscope *s = calloc(1, sizeof(*s));
    if (!s) {
        PyErr_NoMemory();
        return NULL;
    }
    s->kind = kind;
    s->parent = cs->scope;
    if (!(s->symbols = PyDict_New()) || !(s->slots = PyDict_New()) ||
        !(s->params = PyList_New(0))) {
        Py_XDECREF(s->symbols);
        Py_XDECREF(s->slots);
        free(s);
        return NULL;
    }
    s->next_all = cs->all;
    cs->all = s;
    cs->scope = s;
    return s;
}

void
exec_scope_pop(struct cstate *cs)
{
    cs->scope = cs->scope->parent;
}

void
exec_scope_free_all(struct cstate *cs)
{
    while (cs->all) {
        struct cscope *s = cs->all;
        cs->all = s->next_all;
        Py_XDECREF(s->symbols);
        Py_XDECREF(s->slots);
        Py_XDECREF(s->params);
        free(s->uses);
        free(s);
    }
    cs->scope = NULL;
}

static long
sym(struct cscope *s, PyObject *name)
{
    PyObject *v = PyDict_GetItemWithError(s->symbols, name);
    return v ? PyLong_AsLong(v) : 0;
}

bool
exec_is_tool_name(PyObject *name)
{
    return PyUnicode_CompareWithASCIIString(name, "final_answer") == 0;
}

int
exec_scope_add(struct cscope *s, PyObject *name, int flags)
{
    /* every binding of a name passes here (assignment, del, def, class, import, for, with,
     * except, match, walrus, parameter): the snippet cannot replace the tools it was given,
     * in any scope (smolagents refuses it too) */
    if ((flags & (SYM_LOCAL | SYM_PARAM)) && exec_is_tool_name(name)) {
        PyErr_Format(PyExc_SyntaxError, "Names of tools and final_answer cannot be rebound: '%U'",
                     name);
        return -1;
    }
    PyObject *v = PyLong_FromLong(sym(s, name) | flags);
    int rc = v ? PyDict_SetItem(s->symbols, name, v) : -1;
    Py_XDECREF(v);
    return rc;
}

int
exec_scope_use(struct cstate *cs, struct cscope *s, struct node *name_node)
{
    (void) cs;
    if (s->nuses == s->capuses) {
        uint32_t cap = s->capuses ? s->capuses * 2 : 16;
        struct node **p = realloc(s->uses, sizeof(*p) * cap);
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
        s->uses = p;
        s->capuses = cap;
    }
    s->uses[s->nuses++] = name_node;
    return 0;
}

static bool
is_class_cell(PyObject *name)
{
    return PyUnicode_CompareWithASCIIString(name, "__class__") == 0;
}

/* Looks for the function that owns `name`, starting at scope p (the parent of a scope that
 * uses it). Marks the owner's symbol a cell and every scope in between free. Returns 1 when
 * found, 0 when the name is global, -1 on error. */
static int
find_owner(struct cscope *p, PyObject *name)
{
    if (!p || p->kind == SCOPE_MODULE)
        return 0;
    if (p->kind == CODE_CLASS) {
        if (is_class_cell(name))
            return exec_scope_add(p, name, SYM_CELL) < 0 ? -1 : 1;
        int found = find_owner(p->parent, name);
        if (found > 0 && exec_scope_add(p, name, SYM_FREE) < 0)
            return -1;
        return found;
    }
    long f = sym(p, name);
    if (f & SYM_GLOBAL)
        return 0;
    if ((f & (SYM_LOCAL | SYM_PARAM)) && !(f & SYM_NONLOCAL))
        return exec_scope_add(p, name, SYM_CELL) < 0 ? -1 : 1;
    int found = find_owner(p->parent, name);
    if (found > 0 && exec_scope_add(p, name, SYM_FREE) < 0)
        return -1;
    return found;
}

/* Phase 1: decides, for each use, whether the name is a cell of an enclosing function. */
static int
mark_scope(struct cscope *s)
{
    if (s->kind == SCOPE_MODULE)
        return 0;
    if (s->uses_super && s->kind != CODE_CLASS) {
        PyObject *cls = PyUnicode_InternFromString("__class__");
        int found = cls ? find_owner(s->parent, cls) : -1;
        if (found > 0 && exec_scope_add(s, cls, SYM_FREE) < 0)
            found = -1;
        Py_XDECREF(cls);
        if (found < 0)
            return -1;
    }
    for (uint32_t i = 0; i < s->nuses; i++) {
        PyObject *name = s->uses[i]->obj;
        long f = sym(s, name);
        if (f & SYM_GLOBAL)
            continue;
        if ((f & (SYM_LOCAL | SYM_PARAM)) && !(f & SYM_NONLOCAL))
            continue;
        int found = find_owner(s->parent, name);
        if (found < 0)
            return -1;
        if (found) {
            if (exec_scope_add(s, name, SYM_FREE) < 0)
                return -1;
        } else if (f & SYM_NONLOCAL) {
            PyErr_Format(PyExc_SyntaxError, "no binding for nonlocal '%U' found", name);
            return -1;
        }
    }
    /* nonlocal names never used still need their cell */
    PyObject *name, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(s->symbols, &pos, &name, &v)) {
        if (!(PyLong_AsLong(v) & SYM_NONLOCAL) || (PyLong_AsLong(v) & SYM_FREE))
            continue;
        Py_INCREF(name);
        int found = find_owner(s->parent, name);
        if (found == 0)
            PyErr_Format(PyExc_SyntaxError, "no binding for nonlocal '%U' found", name);
        Py_DECREF(name);
        /* the dict may have grown: restart is not needed, flags only change in parents */
        if (found <= 0)
            return -1;
        if (exec_scope_add(s, name, SYM_FREE) < 0)
            return -1;
        pos = 0;
    }
    return 0;
}

static int
new_slot(struct cscope *s, PyObject *names, PyObject *name)
{
    PyObject *idx = PyLong_FromSsize_t(PyList_GET_SIZE(names));
    int rc = idx && PyDict_SetItem(s->slots, name, idx) == 0 ? PyList_Append(names, name) : -1;
    Py_XDECREF(idx);
    return rc;
}

static uint32_t
slot_of(struct cscope *s, PyObject *name)
{
    PyObject *v = PyDict_GetItem(s->slots, name);
    return v ? (uint32_t) PyLong_AsLong(v) : UINT32_MAX;
}

/* Phase 2: frame layout. Parameters first (in order), then locals, then cells and frees. */
static int
layout_scope(struct cstate *cs, struct cscope *s)
{
    if (s->kind == SCOPE_MODULE)
        return 0;
    PyObject *names = PyList_New(0);
    if (!names)
        return -1;
    bool fn = s->kind != CODE_CLASS;
    for (Py_ssize_t i = 0; fn && i < PyList_GET_SIZE(s->params); i++)
        if (new_slot(s, names, PyList_GET_ITEM(s->params, i)) < 0)
            goto fail;
    PyObject *name, *v;
    Py_ssize_t pos = 0;
    uint32_t ncells = 0, nfree = 0;
    while (PyDict_Next(s->symbols, &pos, &name, &v)) {
        long f = PyLong_AsLong(v);
        bool local = fn && (f & (SYM_LOCAL | SYM_PARAM)) && !(f & (SYM_GLOBAL | SYM_NONLOCAL));
        bool cell = (f & SYM_CELL) && (local || (!fn && is_class_cell(name)));
        bool free_ = (f & SYM_FREE) && !local && !cell;
        if ((local || cell || free_) && !(f & SYM_PARAM) && new_slot(s, names, name) < 0)
            goto fail;
        ncells += cell;
        nfree += free_;
    }
    struct exec_code *c = s->code;
    c->nslots = (uint32_t) PyList_GET_SIZE(names);
    c->varnames = exec_keep(cs, PyList_AsTuple(names));
    c->cells = exec_arena_alloc(cs->t, sizeof(uint32_t) * (ncells + 1));
    c->frees = exec_arena_alloc(cs->t, sizeof(uint32_t) * (nfree + 1));
    c->closure_from = exec_arena_alloc(cs->t, sizeof(uint32_t) * (nfree + 1));
    if (!c->varnames || !c->cells || !c->frees || !c->closure_from)
        goto fail;
    Py_CLEAR(names);
    return 0;
fail:
    Py_XDECREF(names);
    return -1;
}

/* Phase 3: each Name gets its scope and slot; each code its cells and closure sources. */
static int
bind_scope(struct cscope *s)
{
    struct exec_code *c = s->code;
    bool fn = s->kind != CODE_CLASS && s->kind != SCOPE_MODULE;
    for (uint32_t i = 0; i < s->nuses; i++) {
        struct node *n = s->uses[i];
        long f = sym(s, n->obj);
        if (s->kind == SCOPE_MODULE || (f & SYM_GLOBAL)) {
            n->op = NAME_GLOBAL;
        } else if (fn && (f & (SYM_LOCAL | SYM_PARAM)) && !(f & SYM_NONLOCAL)) {
            n->op = (f & SYM_CELL) ? NAME_DEREF : NAME_FAST;
            n->slot = slot_of(s, n->obj);
        } else if ((f & SYM_FREE) && (fn || (f & SYM_NONLOCAL) || !(f & SYM_LOCAL))) {
            /* a class body binds into its namespace, unless the name is declared nonlocal */
            n->op = NAME_DEREF;
            n->slot = slot_of(s, n->obj);
        } else {
            n->op = fn ? NAME_GLOBAL : NAME_CLASS;
        }
    }
    if (s->kind == SCOPE_MODULE)
        return 0;
    PyObject *name, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(s->symbols, &pos, &name, &v)) {
        long f = PyLong_AsLong(v);
        uint32_t slot = slot_of(s, name);
        if (slot == UINT32_MAX)
            continue;
        bool local = fn && (f & (SYM_LOCAL | SYM_PARAM)) && !(f & (SYM_GLOBAL | SYM_NONLOCAL));
        if ((f & SYM_CELL) && (local || (!fn && is_class_cell(name)))) {
            c->cells[c->ncells++] = slot;
            if (!fn)
                c->class_cell = (int32_t) slot;
        } else if ((f & SYM_FREE) && !local) {
            uint32_t from = slot_of(s->parent, name);
            if (from == UINT32_MAX) {
                PyErr_Format(PyExc_SystemError, "executor: no cell for free variable '%U'", name);
                return -1;
            }
            c->frees[c->nfree] = slot;
            c->closure_from[c->nfree++] = from;
            if (fn && is_class_cell(name))
                c->super_slot = (int32_t) slot;
        }
    }
    return 0;
}

int
exec_scope_resolve(struct cstate *cs)
{
    /* cs->all lists inner scopes first: mark from the outside in so that a parent's own
     * nonlocal names are known before its children ask it */
    size_t n = 0;
    for (struct cscope *s = cs->all; s; s = s->next_all)
        n++;
    struct cscope **order = malloc(sizeof(*order) * (n ? n : 1));
    if (!order) {
        PyErr_NoMemory();
        return -1;
    }
    n = 0;
    for (struct cscope *s = cs->all; s; s = s->next_all)
        order[n++] = s;
    int rc = -1;
    for (size_t i = n; i-- > 0;)
        if (mark_scope(order[i]) < 0) {
            if (order[i]->decl_line) {
                cs->lineno = order[i]->decl_line;
                cs->col = order[i]->decl_col;
            }
            goto out;
        }
    for (size_t i = n; i-- > 0;)
        if (layout_scope(cs, order[i]) < 0)
            goto out;
    for (size_t i = n; i-- > 0;)
        if (bind_scope(order[i]) < 0)
            goto out;
    rc = 0;
out:
    free(order);
    return rc;
}
