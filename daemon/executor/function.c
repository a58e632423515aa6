/* Functions defined by a snippet are real Python callables (a C type with vectorcall and the
 * method-descriptor protocol), so CPython can call them anywhere it calls a function (sorted's
 * key=, map, a class's __eq__ or __repr__ slot): each call enters the executor, under the
 * budgets of the run in progress. */
#include <string.h>

#include "exec_internal.h"
#include "pf_cleanup.h"

static struct exec_run *
current_run(struct exec_function *f)
{
    struct exec_env *env = f->handle->env;
    if (!env || !env->run) {
        PyErr_SetString(PyExc_RuntimeError,
                        "a function defined by a snippet can only run while a snippet runs");
        return NULL;
    }
    return env->run;
}

static const char *
fname(const struct exec_function *f)
{
    const char *s = PyUnicode_AsUTF8(f->qualname);
    return s ? s : "function";
}

static void
missing_args(struct exec_function *f, PyObject **slots, uint32_t from, uint32_t to, bool kwonly)
{
    PyObject *names = PyList_New(0);
    for (uint32_t i = from; names && i < to; i++) {
        if (slots[i])
            continue;
        PyObject *q = PyUnicode_FromFormat("'%U'", PyTuple_GET_ITEM(f->code->varnames, i));
        if (!q || PyList_Append(names, q) < 0)
            Py_CLEAR(names);
        Py_XDECREF(q);
    }
    if (!names)
        return;
    Py_ssize_t n = PyList_GET_SIZE(names);
    PyObject *joined = NULL;
    if (n == 1) {
        joined = Py_NewRef(PyList_GET_ITEM(names, 0));
    } else {
        /* 'a' and 'b' / 'a', 'b', and 'c' (CPython's wording) */
        PyObject *head = PyList_GetSlice(names, 0, n - 1);
        PyObject *sep = PyUnicode_FromString(", ");
        PyObject *h = head && sep ? PyUnicode_Join(sep, head) : NULL;
        if (h)
            joined = PyUnicode_FromFormat("%U%s and %U", h, n > 2 ? "," : "",
                                          PyList_GET_ITEM(names, n - 1));
        Py_XDECREF(head);
        Py_XDECREF(sep);
        Py_XDECREF(h);
    }
    if (joined)
        PyErr_Format(PyExc_TypeError, "%s() missing %zd required %s argument%s: %U", fname(f), n,
                     kwonly ? "keyword-only" : "positional", n == 1 ? "" : "s", joined);
    Py_XDECREF(joined);
    Py_DECREF(names);
}

static int
too_many_positional(struct exec_function *f, Py_ssize_t given)
{
    const struct exec_code *c = f->code;
    Py_ssize_t ndef = f->defaults ? PyTuple_GET_SIZE(f->defaults) : 0;
    if (ndef > 0)
        PyErr_Format(PyExc_TypeError,
                     "%s() takes from %zd to %u positional arguments but %zd were given", fname(f),
                     (Py_ssize_t) c->argcount - ndef, c->argcount, given);
    else
        PyErr_Format(PyExc_TypeError, "%s() takes %u positional argument%s but %zd %s given",
                     fname(f), c->argcount, c->argcount == 1 ? "" : "s", given,
                     given == 1 ? "was" : "were");
    return -1;
}

static int
bind_keyword(struct exec_function *f, PyObject **slots, PyObject *kwdict, PyObject *k, PyObject *v)
{
    const struct exec_code *c = f->code;
    uint32_t end = c->argcount + c->kwonlycount;
    for (uint32_t j = 0; j < end; j++) {
        PyObject *name = PyTuple_GET_ITEM(c->varnames, j);
        if (name != k && PyUnicode_Compare(name, k) != 0)
            continue;
        if (j < c->posonlycount)
            break; /* positional-only: goes to **kwargs, or is an error */
        if (slots[j]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%U'", fname(f),
                         k);
            return -1;
        }
        slots[j] = Py_NewRef(v);
        return 0;
    }
    if (kwdict)
        return PyDict_SetItem(kwdict, k, v);
    for (uint32_t j = 0; j < c->posonlycount; j++)
        if (PyUnicode_Compare(PyTuple_GET_ITEM(c->varnames, j), k) == 0) {
            PyErr_Format(PyExc_TypeError,
                         "%s() got some positional-only arguments passed as keyword arguments: "
                         "'%U'",
                         fname(f), k);
            return -1;
        }
    PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname(f), k);
    return -1;
}

/* The keyword-only arguments not given take their defaults; every default first, so that the
 * message names only those without one, as CPython's does. */
static int
bind_kwonly_defaults(struct exec_function *f, PyObject **slots)
{
    const struct exec_code *c = f->code;
    uint32_t end = c->argcount + c->kwonlycount;
    bool missing = false;
    for (uint32_t i = c->argcount; i < end; i++) {
        if (slots[i])
            continue;
        PyObject *d = f->kwdefaults ? PyDict_GetItemWithError(f->kwdefaults,
                                                              PyTuple_GET_ITEM(c->varnames, i))
                                    : NULL;
        if (!d && PyErr_Occurred())
            return -1;
        if (d)
            slots[i] = Py_NewRef(d);
        else
            missing = true;
    }
    if (missing) {
        missing_args(f, slots, c->argcount, end, true);
        return -1;
    }
    return 0;
}

/* CPython's argument binding, with its error messages. */
static int
bind_args(struct exec_function *f, PyObject **slots, PyObject *const *args, Py_ssize_t nargs,
          PyObject *kwnames)
{
    const struct exec_code *c = f->code;
    Py_ssize_t npos = nargs < (Py_ssize_t) c->argcount ? nargs : (Py_ssize_t) c->argcount;
    for (Py_ssize_t i = 0; i < npos; i++)
        slots[i] = Py_NewRef(args[i]);
    if (c->vararg >= 0) {
        slots[c->vararg] = PyTuple_New(nargs > npos ? nargs - npos : 0);
        if (!slots[c->vararg])
            return -1;
        for (Py_ssize_t i = npos; i < nargs; i++)
            PyTuple_SET_ITEM(slots[c->vararg], i - npos, Py_NewRef(args[i]));
    } else if (nargs > npos) {
        return too_many_positional(f, nargs);
    }
    PyObject *kwdict = NULL;
    if (c->kwarg >= 0 && !(kwdict = slots[c->kwarg] = PyDict_New()))
        return -1;
    for (Py_ssize_t i = 0; kwnames && i < PyTuple_GET_SIZE(kwnames); i++)
        if (bind_keyword(f, slots, kwdict, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) < 0)
            return -1;
    Py_ssize_t ndef = f->defaults ? PyTuple_GET_SIZE(f->defaults) : 0;
    for (Py_ssize_t i = 0; i < ndef; i++) {
        uint32_t slot = c->argcount - (uint32_t) ndef + (uint32_t) i;
        if (!slots[slot])
            slots[slot] = Py_NewRef(PyTuple_GET_ITEM(f->defaults, i));
    }
    for (uint32_t i = 0; i < c->argcount; i++)
        if (!slots[i]) {
            missing_args(f, slots, 0, c->argcount, false);
            return -1;
        }
    return bind_kwonly_defaults(f, slots);
}

/* Wraps the captured locals in cells and fills the free variables from the closure. */
int
exec_frame_cells(const struct exec_code *c, PyObject **slots, PyObject *closure)
{
    for (uint32_t i = 0; i < c->ncells; i++) {
        PyObject *cell = PyCell_New(slots[c->cells[i]]);
        if (!cell)
            return -1;
        Py_XSETREF(slots[c->cells[i]], cell);
    }
    for (uint32_t i = 0; i < c->nfree; i++)
        slots[c->frees[i]] = Py_NewRef(PyTuple_GET_ITEM(closure, i));
    return 0;
}

void
exec_slots_free(PyObject **slots, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        Py_XDECREF(slots[i]);
}

int
exec_enter_call(struct exec_run *r)
{
    /* the frame address, not a local's: under ASan's fake stacks locals live on the heap */
    char *sp = __builtin_frame_address(0);
    if (r->depth >= r->env->policy.max_recursion) {
        PyErr_SetString(PyExc_RecursionError, "maximum recursion depth exceeded");
        return -1;
    }
    if (sp < r->stack_limit) {
        PyErr_SetString(PyExc_RecursionError,
                        "maximum recursion depth exceeded (the executor's C stack is full)");
        return -1;
    }
    r->depth++;
    return 0;
}

/* Runs a frame's body: statements, or a lambda's expression. Returns a new reference. */
PyObject *
exec_run_frame(struct exec_run *r, struct exec_frame *frame)
{
    const struct exec_code *c = frame->code;
    frame->back = r->frame;
    r->frame = frame;
    PyObject *res = NULL;
    if (c->expr) {
        res = exec_eval(r, c->expr);
    } else {
        int flow = exec_block(r, c->body, c->nbody);
        if (flow == FLOW_RETURN)
            res = r->retval, r->retval = NULL;
        else if (flow != FLOW_ERROR)
            res = Py_NewRef(Py_None);
    }
    r->frame = frame->back;
    return res;
}

struct frame_call {
    struct exec_run *r;
    struct exec_frame *frame;
    PyObject *res;
};

static void
frame_call_run(void *arg)
{
    struct frame_call *call = arg;
    call->res = exec_run_frame(call->r, call->frame);
}

/* Code that makes an object by calling cls.__new__(cls) writes the new object's state into
 * what __new__ returns: collections.UserDict.__copy__ runs inst.__dict__.update(...) on it,
 * and a snippet's __new__ answering json had json's namespace written, no attribute store
 * made. So a snippet function that is cls's __new__, called with cls, returns no module and
 * none of typing's objects (the kinds whose attributes the snippet may not set either). */
static int
check_new_result(struct exec_run *r, PyObject *self, PyObject *cls, PyObject *res)
{
    if (!PyModule_Check(res) && !exec_is_typing_object(res))
        return 0;
    static PyObject *new_name;
    if (!new_name && !(new_name = PyUnicode_InternFromString("__new__")))
        return -1;
    PyObject *found = _PyType_Lookup((PyTypeObject *) cls, new_name); /* borrowed */
    bool wrapped = found && (Py_IS_TYPE(found, &PyStaticMethod_Type) ||
                             Py_IS_TYPE(found, &PyClassMethod_Type));
    PyObject *func = NULL;
    if (wrapped)
        func = PyObject_GetAttrString(found, "__func__");
    else if (found)
        func = Py_NewRef(found);
    PyErr_Clear();
    bool is_new = func == self;
    Py_XDECREF(func);
    if (!is_new)
        return 0;
    exec_fail(r, ABORT_NONE,
              "Forbidden: %s.__new__ returning a %s object (code making a %s writes its state "
              "into what __new__ returns)",
              ((PyTypeObject *) cls)->tp_name, Py_TYPE(res)->tp_name,
              ((PyTypeObject *) cls)->tp_name);
    return -1;
}

/* A Python function library code made from text (namedtuple's __new__): its globals are no
 * module's own dict. The snippet cannot make one (guard_function.c). */
static bool
made_from_text(PyObject *f)
{
    return !exec_globals_module(PyFunction_GET_GLOBALS(f));
}

/* enum.Enum.__new__, which enum puts on every Enum class it makes. */
static bool
is_enum_new(PyObject *f)
{
    PyObject *enum_mod = PyDict_GetItemString(PyImport_GetModuleDict(), "enum"); /* borrowed */
    PyObject *enum_cls = enum_mod && PyModule_Check(enum_mod)
                                 ? PyDict_GetItemString(PyModule_GetDict(enum_mod), "Enum")
                                 : NULL;
    PyObject *own = enum_cls && PyType_Check(enum_cls)
                            ? PyDict_GetItemString(((PyTypeObject *) enum_cls)->tp_dict, "__new__")
                            : NULL; /* a static method: type.__new__ made it one */
    PyObject *func = own && Py_IS_TYPE(own, &PyStaticMethod_Type)
                             ? PyObject_GetAttrString(own, "__func__")
                             : NULL;
    PyErr_Clear();
    bool same = func && func == f;
    Py_XDECREF(func);
    return same;
}

/* The other half of check_new_result: what answers a snippet class's __new__ is the
 * snippet's function, whose answer that check sees, plain or as a static or class method, or
 * the Python function enum or namedtuple put there; never a callable object, a C function or
 * another library function answering what no check sees (functools.partial(operator.getitem,
 * {K: json}); statistics.mode(K) answering what K's metaclass iterates). */
int
exec_check_new_value(struct exec_run *r, PyTypeObject *t, PyObject *v)
{
    PyObject *f = v;
    if (Py_IS_TYPE(v, &PyStaticMethod_Type) || Py_IS_TYPE(v, &PyClassMethod_Type))
        f = PyObject_GetAttrString(v, "__func__");
    else
        Py_INCREF(f);
    bool ok = f && (Py_IS_TYPE(f, &exec_function_type) ||
                    (PyFunction_Check(f) && (made_from_text(f) || is_enum_new(f))));
    Py_XDECREF(f);
    PyErr_Clear();
    if (ok)
        return 0;
    exec_fail(r, ABORT_NONE,
              "Forbidden: %s.__new__ must be a function (a def or lambda, or one as a static or "
              "class method), not a %s: code making a %s writes its state into what __new__ "
              "returns, and only a function's answer is checked",
              t->tp_name, Py_TYPE(v)->tp_name, t->tp_name);
    return -1;
}

static PyObject *
function_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    struct exec_function *f = (struct exec_function *) self;
    const struct exec_code *c = f->code;
    struct exec_run *r = current_run(f);
    if (!r || exec_tick(r) < 0)
        return NULL;
    /* CPython code calls executor functions with values of its own (a key= function, a
     * dunder, a hook a library calls back): they enter the snippet's hands here */
    Py_ssize_t nall = PyVectorcall_NARGS(nargsf) + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    for (Py_ssize_t i = 0; i < nall; i++)
        if (exec_check_value(r, args[i]) < 0)
            return NULL;
    PyObject *small[16] = {0};
    bool heap = c->nslots > 16 || c->is_generator;
    PyObject **slots = heap ? PyMem_Calloc(c->nslots + 1, sizeof(PyObject *)) : small;
    if (!slots)
        return PyErr_NoMemory();
    PyObject *res = NULL;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (!kwnames && nargs == (Py_ssize_t) c->argcount && c->vararg < 0 && c->kwarg < 0 &&
        !c->kwonlycount) {
        /* the common call: exactly the positional parameters */
        for (Py_ssize_t i = 0; i < nargs; i++)
            slots[i] = Py_NewRef(args[i]);
    } else if (bind_args(f, slots, args, nargs, kwnames) < 0) {
        goto out;
    }
    if ((c->ncells || c->nfree) && exec_frame_cells(c, slots, f->closure) < 0)
        goto out;
    if (c->is_generator) {
        res = exec_generator_new(r, c, NULL, slots, f->tree_ref, f->name, f->qualname);
        slots = NULL; /* the generator owns them now, even on failure */
        goto out;
    }
    if (exec_audit_snippet_may_enter(r) < 0 || exec_enter_call(r) < 0)
        goto out;
    struct exec_frame frame = {.slots = slots, .code = c, .tree_ref = f->tree_ref};
    struct frame_call call = {.r = r, .frame = &frame};
    if (exec_main_frame_callback(r->env, frame_call_run, &call) == 0)
        res = call.res;
    r->depth--;
    if (res && nargs >= 1 && PyType_Check(args[0]) && check_new_result(r, self, args[0], res) < 0)
        Py_CLEAR(res);
out:
    if (slots)
        exec_slots_free(slots, c->nslots);
    if (heap && slots)
        PyMem_Free(slots);
    return res;
}

static PyObject *
function_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (!obj || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static int
function_traverse(PyObject *self, visitproc visit, void *arg)
{
    struct exec_function *f = (struct exec_function *) self;
    /* one Py_VISIT in a loop, as ten written out expand to ~80 statements; gc.get_referents
     * lists them in this order. A visitor runs no Python code, so no field changes while the
     * others are visited. */
    PyObject *const refs[] = {f->defaults,    f->kwdefaults, f->closure,  f->dict, f->tree_ref,
                              f->env_capsule, f->name,       f->qualname, f->doc,  f->module};
    for (size_t i = 0; i < PF_ELEMENTSOF(refs); i++)
        Py_VISIT(refs[i]);
    return 0;
}

static int
function_clear(PyObject *self)
{
    struct exec_function *f = (struct exec_function *) self;
    Py_CLEAR(f->defaults);
    Py_CLEAR(f->kwdefaults);
    Py_CLEAR(f->closure);
    Py_CLEAR(f->dict);
    Py_CLEAR(f->name);
    Py_CLEAR(f->qualname);
    Py_CLEAR(f->doc);
    Py_CLEAR(f->module);
    return 0;
}

static void
function_dealloc(PyObject *self)
{
    struct exec_function *f = (struct exec_function *) self;
    PyObject_GC_UnTrack(self);
    if (f->weakreflist)
        PyObject_ClearWeakRefs(self);
    function_clear(self);
    /* the code lives in the tree: drop it last */
    Py_CLEAR(f->env_capsule);
    Py_CLEAR(f->tree_ref);
    PyObject_GC_Del(self);
}

static PyObject *
function_repr(PyObject *self)
{
    struct exec_function *f = (struct exec_function *) self;
    return PyUnicode_FromFormat("<function %U at %p>", f->qualname, self);
}

static PyMemberDef function_members[] = {
        {"__doc__", T_OBJECT, offsetof(struct exec_function, doc), 0, NULL},
        {"__module__", T_OBJECT, offsetof(struct exec_function, module), 0, NULL},
        {NULL, 0, 0, 0, NULL},
};

/* __name__ and __qualname__ stay str (CPython's rule): messages and repr format them. */
static PyObject *
function_get_name(PyObject *self, void *closure)
{
    struct exec_function *f = (struct exec_function *) self;
    return Py_NewRef(closure ? f->qualname : f->name);
}

static int
function_set_name(PyObject *self, PyObject *value, void *closure)
{
    struct exec_function *f = (struct exec_function *) self;
    if (!value || !PyUnicode_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be set to a string object",
                     closure ? "__qualname__" : "__name__");
        return -1;
    }
    Py_XSETREF(*(closure ? &f->qualname : &f->name), Py_NewRef(value));
    return 0;
}

static PyGetSetDef function_getset[] = {
        {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
        {"__name__", function_get_name, function_set_name, NULL, NULL},
        {"__qualname__", function_get_name, function_set_name, NULL, (void *) 1},
        {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject exec_function_type = {
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = "function",
        .tp_basicsize = sizeof(struct exec_function),
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                    Py_TPFLAGS_METHOD_DESCRIPTOR,
        .tp_vectorcall_offset = offsetof(struct exec_function, vectorcall),
        .tp_call = PyVectorcall_Call,
        .tp_descr_get = function_descr_get,
        .tp_dictoffset = offsetof(struct exec_function, dict),
        .tp_weaklistoffset = offsetof(struct exec_function, weakreflist),
        .tp_traverse = function_traverse,
        .tp_clear = function_clear,
        .tp_dealloc = function_dealloc,
        .tp_repr = function_repr,
        .tp_members = function_members,
        .tp_getset = function_getset,
};

PyObject *
exec_function_new(struct exec_run *r, const struct node *n)
{
    const struct exec_code *c = n->code;
    PyObject *defaults = NULL, *kwdefaults = NULL, *closure = NULL;
    if (n->op > 0 && !(defaults = PyTuple_New(n->op)))
        return NULL;
    for (int32_t i = 0; i < n->op; i++) {
        PyObject *v = exec_eval(r, n->w[i]);
        if (!v)
            goto fail;
        PyTuple_SET_ITEM(defaults, i, v);
    }
    for (uint32_t i = (uint32_t) n->op; i < n->nw; i++) {
        if (!n->w[i])
            continue;
        PyObject *v = exec_eval(r, n->w[i]);
        if (!v || (!kwdefaults && !(kwdefaults = PyDict_New())) ||
            PyDict_SetItem(kwdefaults, PyTuple_GET_ITEM(c->varnames, c->argcount + i - n->op), v) <
                    0) {
            Py_XDECREF(v);
            goto fail;
        }
        Py_DECREF(v);
    }
    if (c->nfree && !(closure = exec_closure_new(r, c)))
        goto fail;
    struct exec_function *f = PyObject_GC_New(struct exec_function, &exec_function_type);
    if (!f)
        goto fail;
    f->vectorcall = function_vectorcall;
    f->code = c;
    f->tree_ref = Py_NewRef(exec_cur_tree(r));
    f->env_capsule = Py_NewRef(r->env->capsule);
    f->handle = r->env->handle;
    f->defaults = defaults;
    f->kwdefaults = kwdefaults;
    f->closure = closure;
    f->name = Py_NewRef(c->name);
    f->qualname = Py_NewRef(c->qualname);
    f->doc = Py_NewRef(c->doc ? c->doc : Py_None);
    f->dict = NULL;
    f->weakreflist = NULL;
    if (!(f->module = PyUnicode_FromString("__main__"))) {
        Py_DECREF(f);
        return NULL;
    }
    PyObject_GC_Track((PyObject *) f);
    return (PyObject *) f;
fail:
    Py_XDECREF(defaults);
    Py_XDECREF(kwdefaults);
    Py_XDECREF(closure);
    return NULL;
}

PyObject *
exec_closure_new(struct exec_run *r, const struct exec_code *c)
{
    PyObject *closure = PyTuple_New(c->nfree);
    for (uint32_t i = 0; closure && i < c->nfree; i++) {
        PyObject *cell = r->frame ? r->frame->slots[c->closure_from[i]] : NULL;
        if (!cell || !PyCell_Check(cell)) {
            Py_DECREF(closure);
            PyErr_SetString(PyExc_SystemError, "executor: closure cell missing");
            return NULL;
        }
        PyTuple_SET_ITEM(closure, i, Py_NewRef(cell));
    }
    return closure;
}

int
exec_function_init_type(void)
{
    return PyType_Ready(&exec_function_type);
}
