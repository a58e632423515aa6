/* Generators (functions with yield, generator expressions) as stackful coroutines: each
 * generator body runs on its own C stack (mmap'd, with a guard page), switched to
 * (stack_switch.h) when the generator is resumed and away from when it yields or ends.
 *
 * Why this is sound with CPython: switching is strictly nested (resume is a call, yield is its
 * return), and a yield is only reachable from the generator's own frame, never from inside a
 * CPython call made by it (yield in a nested function makes that function a generator, and
 * yield in comprehensions is refused). So at every switch, every CPython frame, C recursion
 * counter and thread-state field pushed since the resume has been popped again: the thread
 * state is exactly as the resumer left it. The executor's own per-context state (current
 * frame, exception being handled, call depth, C stack limit, running generator) is swapped by
 * hand below. Single-threaded, no signals: the zygote's model. */
#include <string.h>
#include <sys/mman.h>

#include "exec_internal.h"
#include "stack_switch.h"

#if defined(__SANITIZE_ADDRESS__)
#    include <sanitizer/common_interface_defs.h>
#    define ASAN_START(save, bottom, size)  __sanitizer_start_switch_fiber(save, bottom, size)
#    define ASAN_FINISH(save, bottom, size) __sanitizer_finish_switch_fiber(save, bottom, size)
#else
#    define ASAN_START(save, bottom, size)  ((void) (save), (void) (bottom), (void) (size))
#    define ASAN_FINISH(save, bottom, size) ((void) (save), (void) (bottom), (void) (size))
#endif

/* Valgrind must be told about the stacks it will see the stack pointer jump to; the client
 * requests cost a few instructions outside valgrind. */
#if defined(__has_include)
#    if __has_include(<valgrind/valgrind.h>)
#        include <valgrind/valgrind.h>
#        define GEN_VALGRIND 1
#    endif
#endif
#ifndef GEN_VALGRIND
#    define VALGRIND_STACK_REGISTER(start, end) 0u
#    define VALGRIND_STACK_DEREGISTER(id)       ((void) (id))
#endif

#define GEN_STACK_SIZE   (1024 * 1024)
#define GEN_STACK_MARGIN (256 * 1024) /* left for CPython's own C recursion */

enum gen_state { GEN_CREATED, GEN_SUSPENDED, GEN_RUNNING, GEN_DONE };

struct exec_generator {
    PyObject_HEAD const struct exec_code *code;
    const struct node *comp; /* generator expression, or NULL for a function body */
    struct exec_frame frame;
    PyObject *tree_ref, *env_capsule;
    struct env_handle *handle; /* inside env_capsule: no named-capsule lookup per resume */
    PyObject *name, *qualname;
    struct exec_run *run; /* the env's run state: stable for the env's lifetime */
    int state;
    bool throwing; /* resumed by throw(): the exception is set */
    /* throw()'s arguments while it resumes the body (borrowed from gen_throw): a yield from
     * passes them on to its delegate's throw as given, as CPython's _gen_throw does */
    PyObject *throw_args;
    PyObject *sent, *yielded, *retval;
    PyObject *handling;
    struct exec_stack_ctx ctx, caller;
    char *stack;
    unsigned valgrind_id;
    const void *caller_stack_bottom;
    size_t caller_stack_size;
    struct exec_generator *next_live, **prev_live; /* the env's suspended generators */
    PyObject *weakreflist;
};

static struct exec_generator *starting;

static void
gen_entry(void)
{
    struct exec_generator *g = starting;
    struct exec_run *r = g->run;
    ASAN_FINISH(NULL, &g->caller_stack_bottom, &g->caller_stack_size);
    PyObject *res = NULL;
    if (g->comp) {
        res = exec_comp_body(r, g->comp, NULL) < 0 ? NULL : Py_NewRef(Py_None);
    } else if (g->code->expr) {
        res = exec_eval(r, g->code->expr); /* lambda: (yield x) */
    } else {
        int flow = exec_block(r, g->code->body, g->code->nbody);
        if (flow == FLOW_RETURN)
            res = r->retval, r->retval = NULL;
        else if (flow != FLOW_ERROR)
            res = Py_NewRef(Py_None);
    }
    g->retval = res;
    g->state = GEN_DONE;
    ASAN_START(NULL, g->caller_stack_bottom, g->caller_stack_size);
    exec_stack_switch(&g->ctx, &g->caller);
    __builtin_unreachable();
}

static int
gen_start(struct exec_generator *g)
{
    g->stack = mmap(NULL, GEN_STACK_SIZE, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (g->stack == MAP_FAILED) {
        g->stack = NULL;
        PyErr_NoMemory();
        return -1;
    }
    mprotect(g->stack, 4096, PROT_NONE); /* guard page */
    g->valgrind_id = VALGRIND_STACK_REGISTER(g->stack, g->stack + GEN_STACK_SIZE);
    if (exec_stack_ctx_init(&g->ctx, g->stack, GEN_STACK_SIZE, gen_entry) < 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    return 0;
}

static void
live_unlink(struct exec_generator *g)
{
    if (!g->prev_live)
        return;
    *g->prev_live = g->next_live;
    if (g->next_live)
        g->next_live->prev_live = g->prev_live;
    g->next_live = NULL;
    g->prev_live = NULL;
}

static struct exec_env *
gen_env(struct exec_generator *g)
{
    return g->handle->env;
}

/* The resume proper: switches to g's stack and runs its body until it yields or ends. For that
 * while the executor's per-context state (frame, exception being handled, running generator,
 * C stack limit) and sys.exc_info() are g's; the resumer's are put back after. */
static void
gen_run_to_yield(struct exec_generator *g, struct exec_run *r, PyObject *sent, bool throwing)
{
    struct exec_frame *caller_frame = r->frame;
    PyObject *caller_handling = r->handling;
    struct exec_generator *caller_gen = r->gen;
    char *caller_limit = r->stack_limit;
    g->frame.back = caller_frame;
    r->frame = &g->frame;
    r->handling = g->handling;
    g->handling = NULL;
    r->gen = g;
    r->stack_limit = g->stack + GEN_STACK_MARGIN;
    /* sys.exc_info(): what the body is handling if anything, else the caller's */
    PyObject *caller_handled = PyErr_GetHandledException();
    PyObject *caller_outer = r->outer_handled;
    r->outer_handled = caller_handled; /* held until the switch back */
    if (r->handling)
        PyErr_SetHandledException(r->handling);
    g->sent = sent ? Py_NewRef(sent) : NULL;
    g->throwing = throwing;
    bool first = g->state == GEN_CREATED;
    g->state = GEN_RUNNING;
    live_unlink(g);
    starting = first ? g : NULL;
    void *fake = NULL;
    ASAN_START(&fake, g->stack, GEN_STACK_SIZE);
    exec_stack_switch(&g->caller, &g->ctx);
    ASAN_FINISH(fake, NULL, NULL);
    g->handling = r->handling;
    PyErr_SetHandledException(caller_handled);
    r->outer_handled = caller_outer;
    Py_XDECREF(caller_handled);
    r->frame = caller_frame;
    r->handling = caller_handling;
    r->gen = caller_gen;
    r->stack_limit = caller_limit;
}

struct resume_call {
    struct exec_generator *g;
    struct exec_run *r;
    PyObject *sent;
    bool throwing;
};

static void
resume_call_run(void *arg)
{
    struct resume_call *call = arg;
    gen_run_to_yield(call->g, call->r, call->sent, call->throwing);
}

/* Resumes g with `sent` (borrowed), or with the pending exception when throwing. Returns the
 * yielded value; NULL when it ended (g->state == GEN_DONE) or failed. */
static PyObject *
gen_resume(struct exec_generator *g, PyObject *sent, bool throwing)
{
    struct exec_env *env = gen_env(g);
    struct exec_run *r = g->run;
    if (g->state == GEN_RUNNING) {
        PyErr_SetString(PyExc_ValueError, "generator already executing");
        return NULL;
    }
    if (!env || env->run != r) {
        if (!throwing)
            PyErr_SetString(PyExc_RuntimeError,
                            "a generator defined by a snippet can only run while a snippet runs");
        return NULL;
    }
    if (g->state == GEN_CREATED && !throwing && sent != Py_None) {
        PyErr_SetString(PyExc_TypeError, "can't send non-None value to a just-started generator");
        return NULL;
    }
    if (g->state == GEN_CREATED && throwing) {
        g->state = GEN_DONE;
        return NULL;
    }
    if (exec_audit_snippet_may_enter(r) < 0)
        return NULL;
    if (g->state == GEN_CREATED && gen_start(g) < 0)
        return NULL;
    if (exec_enter_call(r) < 0)
        return NULL;
    struct resume_call call = {.g = g, .r = r, .sent = sent, .throwing = throwing};
    int entered = exec_main_frame_callback(env, resume_call_run, &call);
    r->depth--;
    if (entered < 0)
        return NULL;
    if (g->state == GEN_SUSPENDED) {
        g->next_live = env->live_gens;
        if (g->next_live)
            g->next_live->prev_live = &g->next_live;
        env->live_gens = g;
        g->prev_live = &env->live_gens;
        PyObject *y = g->yielded;
        g->yielded = NULL;
        return y;
    }
    Py_CLEAR(g->handling);
    if (g->stack) {
        VALGRIND_STACK_DEREGISTER(g->valgrind_id);
        munmap(g->stack, GEN_STACK_SIZE);
        g->stack = NULL;
    }
    return NULL;
}

PyObject *
exec_gen_yield(struct exec_run *r, PyObject *value)
{
    struct exec_generator *g = r->gen;
    if (!g) {
        Py_DECREF(value);
        PyErr_SetString(PyExc_SystemError, "executor: yield outside a running generator");
        return NULL;
    }
    g->yielded = value;
    g->state = GEN_SUSPENDED;
    Py_CLEAR(g->sent);
    void *fake = NULL;
    ASAN_START(&fake, g->caller_stack_bottom, g->caller_stack_size);
    exec_stack_switch(&g->ctx, &g->caller);
    ASAN_FINISH(fake, &g->caller_stack_bottom, &g->caller_stack_size);
    if (g->throwing) {
        /* raised at this yield: chained to what the body is handling here, as in CPython */
        exec_chain_context(r->handling);
        return NULL;
    }
    PyObject *s = g->sent;
    g->sent = NULL;
    return s ? s : Py_NewRef(Py_None);
}

/* After gen_resume returned NULL: the ending as CPython's generators report it. */
static PyObject *
gen_finish(struct exec_generator *g, bool as_iternext)
{
    if (PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_StopIteration) && g->state == GEN_DONE) {
            PyObject *t, *v, *tb;
            PyErr_Fetch(&t, &v, &tb);
            PyErr_NormalizeException(&t, &v, &tb);
            PyErr_SetString(PyExc_RuntimeError, "generator raised StopIteration");
            PyObject *t2, *v2, *tb2;
            PyErr_Fetch(&t2, &v2, &tb2);
            PyErr_NormalizeException(&t2, &v2, &tb2);
            PyException_SetCause(v2, Py_NewRef(v));
            PyException_SetContext(v2, v);
            Py_XDECREF(t);
            Py_XDECREF(tb);
            PyErr_Restore(t2, v2, tb2);
        }
        Py_CLEAR(g->retval);
        return NULL;
    }
    PyObject *ret = g->retval;
    g->retval = NULL;
    if (ret && ret != Py_None)
        _PyGen_SetStopIterationValue(ret);
    else if (!as_iternext)
        PyErr_SetNone(PyExc_StopIteration);
    Py_XDECREF(ret);
    return NULL;
}

static PyObject *
gen_iternext(PyObject *self)
{
    struct exec_generator *g = (struct exec_generator *) self;
    if (g->state == GEN_DONE)
        return NULL;
    PyObject *y = gen_resume(g, Py_None, false);
    return y ? y : gen_finish(g, true);
}

static PyObject *
gen_send(PyObject *self, PyObject *arg)
{
    struct exec_generator *g = (struct exec_generator *) self;
    if (g->state == GEN_DONE) {
        PyErr_SetNone(PyExc_StopIteration);
        return NULL;
    }
    PyObject *y = gen_resume(g, arg, false);
    return y ? y : gen_finish(g, false);
}

/* Resumes g with the exception set by throw(args), which a yield from's delegate gets as given. */
static PyObject *
resume_thrown(struct exec_generator *g, PyObject *args)
{
    if (g->state == GEN_SUSPENDED)
        g->throw_args = args;
    PyObject *y = gen_resume(g, NULL, true);
    g->throw_args = NULL;
    return y ? y : gen_finish(g, false);
}

/* The exception throw(typ[, val[, tb]]) raises (set), or -1 with another error; *ret_raise_at_yield
 * when making it failed and that failure is raised at the yield instead, as CPython does. */
static int
thrown_exception(PyObject *typ, PyObject *val, bool *ret_raise_at_yield)
{
    *ret_raise_at_yield = false;
    if (PyExceptionInstance_Check(typ)) {
        PyErr_SetObject((PyObject *) Py_TYPE(typ), typ);
        return 0;
    }
    if (!PyExceptionClass_Check(typ)) {
        PyErr_SetString(PyExc_TypeError,
                        "exceptions must be classes or instances deriving from BaseException");
        return -1;
    }
    PyObject *inst = val && PyExceptionInstance_Check(val)
                             ? Py_NewRef(val)
                             : (val && val != Py_None ? PyObject_CallOneArg(typ, val)
                                                      : PyObject_CallNoArgs(typ));
    if (inst && !PyExceptionInstance_Check(inst)) {
        PyErr_Format(PyExc_TypeError,
                     "calling %R should have returned an instance of BaseException, not %s", typ,
                     Py_TYPE(inst)->tp_name);
        Py_CLEAR(inst);
    }
    if (!inst) {
        *ret_raise_at_yield = true;
        return -1;
    }
    PyErr_SetObject((PyObject *) Py_TYPE(inst), inst);
    Py_DECREF(inst);
    return 0;
}

static PyObject *
gen_throw(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    struct exec_generator *g = (struct exec_generator *) self;
    if (nargs < 1 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "throw expected at least 1 argument");
        return NULL;
    }
    PyObject *targs = PyTuple_New(nargs);
    if (!targs)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++)
        PyTuple_SET_ITEM(targs, i, Py_NewRef(args[i]));
    bool at_yield;
    PyObject *y = NULL;
    if (thrown_exception(args[0], nargs > 1 ? args[1] : NULL, &at_yield) == 0) {
        if (g->state != GEN_DONE)
            y = resume_thrown(g, targs);
    } else if (at_yield && g->state == GEN_SUSPENDED) {
        /* raised at the generator's yield, as CPython does with a failing throw() */
        y = resume_thrown(g, NULL);
    }
    Py_DECREF(targs);
    return y;
}

static int
gen_close_inner(struct exec_generator *g)
{
    /* closing itself from its own body (a finally block calling close()): CPython throws
     * GeneratorExit in, which finds the frame executing and refuses */
    if (g->state == GEN_RUNNING) {
        PyErr_SetString(PyExc_ValueError, "generator already executing");
        return -1;
    }
    if (g->state != GEN_SUSPENDED) {
        g->state = GEN_DONE;
        return 0;
    }
    PyErr_SetNone(PyExc_GeneratorExit);
    PyObject *y = gen_resume(g, NULL, true);
    if (y) {
        Py_DECREF(y);
        PyErr_SetString(PyExc_RuntimeError, "generator ignored GeneratorExit");
        return -1;
    }
    Py_CLEAR(g->retval);
    if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_GeneratorExit) ||
        PyErr_ExceptionMatches(PyExc_StopIteration)) {
        PyErr_Clear();
        return 0;
    }
    return -1;
}

static PyObject *
gen_close(PyObject *self, PyObject *unused)
{
    return gen_close_inner((struct exec_generator *) self) < 0 ? NULL : Py_NewRef(Py_None);
}

static int
gen_traverse(PyObject *self, visitproc visit, void *arg)
{
    struct exec_generator *g = (struct exec_generator *) self;
    for (uint32_t i = 0; g->frame.slots && i < g->code->nslots; i++)
        Py_VISIT(g->frame.slots[i]);
    Py_VISIT(g->name);
    Py_VISIT(g->qualname);
    return 0;
}

/* PEP 442 finaliser: a suspended generator is closed (its finally blocks run) before the
 * garbage collector or dealloc frees it, so that its stack holds no references any more. */
static void
gen_finalize(PyObject *self)
{
    struct exec_generator *g = (struct exec_generator *) self;
    if (g->state != GEN_SUSPENDED)
        return;
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    if (gen_close_inner(g) < 0)
        PyErr_WriteUnraisable(self);
    PyErr_Restore(t, v, tb);
}

static void
clear_slots(struct exec_generator *g)
{
    if (!g->frame.slots)
        return;
    PyObject **slots = g->frame.slots;
    g->frame.slots = NULL;
    exec_slots_free(slots, g->code->nslots);
    PyMem_Free(slots);
}

static int
gen_clear(PyObject *self)
{
    struct exec_generator *g = (struct exec_generator *) self;
    /* a suspended body's C frames still point into the slots: only a finished or unstarted
     * generator can let go of them */
    if (g->state == GEN_DONE || g->state == GEN_CREATED)
        clear_slots(g);
    return 0;
}

static void
gen_dealloc(PyObject *self)
{
    struct exec_generator *g = (struct exec_generator *) self;
    PyObject_GC_UnTrack(self);
    if (g->weakreflist)
        PyObject_ClearWeakRefs(self);
    PyObject_GC_Track(self);
    if (PyObject_CallFinalizerFromDealloc(self) < 0)
        return; /* resurrected */
    PyObject_GC_UnTrack(self);
    live_unlink(g);
    if (g->stack) { /* never unwound (its environment is gone): the frames' references leak */
        VALGRIND_STACK_DEREGISTER(g->valgrind_id);
        munmap(g->stack, GEN_STACK_SIZE);
    }
    clear_slots(g);
    Py_XDECREF(g->sent);
    Py_XDECREF(g->yielded);
    Py_XDECREF(g->retval);
    Py_XDECREF(g->handling);
    Py_XDECREF(g->name);
    Py_XDECREF(g->qualname);
    Py_XDECREF(g->env_capsule);
    Py_XDECREF(g->tree_ref); /* last: the code lives in the tree */
    PyObject_GC_Del(self);
}

static PyObject *
gen_repr(PyObject *self)
{
    struct exec_generator *g = (struct exec_generator *) self;
    return PyUnicode_FromFormat("<generator object %U at %p>", g->qualname, self);
}

static PyObject *
gen_get_running(PyObject *self, void *closure)
{
    return PyBool_FromLong(((struct exec_generator *) self)->state == GEN_RUNNING);
}

static PyMethodDef gen_methods[] = {
        {"send", gen_send, METH_O, "send(value) -> the next yielded value"},
        {"throw", (PyCFunction) (void (*)(void)) gen_throw, METH_FASTCALL,
         "throw(exception) -> raises it where the generator is suspended"},
        {"close", gen_close, METH_NOARGS, "close() -> raises GeneratorExit inside"},
        {NULL, NULL, 0, NULL},
};

static PyObject *
gen_get_suspended(PyObject *self, void *closure)
{
    return PyBool_FromLong(((struct exec_generator *) self)->state == GEN_SUSPENDED);
}

static PyObject *
gen_get_name(PyObject *self, void *closure)
{
    struct exec_generator *g = (struct exec_generator *) self;
    return Py_NewRef(closure ? g->qualname : g->name);
}

static int
gen_set_name(PyObject *self, PyObject *value, void *closure)
{
    struct exec_generator *g = (struct exec_generator *) self;
    if (!value || !PyUnicode_Check(value)) {
        PyErr_Format(PyExc_TypeError, "%s must be set to a string object",
                     closure ? "__qualname__" : "__name__");
        return -1;
    }
    Py_XSETREF(*(closure ? &g->qualname : &g->name), Py_NewRef(value));
    return 0;
}

static PyGetSetDef gen_getset[] = {
        {"gi_running", gen_get_running, NULL, NULL, NULL},
        {"gi_suspended", gen_get_suspended, NULL, NULL, NULL},
        {"__name__", gen_get_name, gen_set_name, NULL, NULL},
        {"__qualname__", gen_get_name, gen_set_name, NULL, (void *) 1},
        {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject generator_type = {
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = "generator",
        .tp_basicsize = sizeof(struct exec_generator),
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
        .tp_iter = PyObject_SelfIter,
        .tp_iternext = gen_iternext,
        .tp_traverse = gen_traverse,
        .tp_clear = gen_clear,
        .tp_finalize = gen_finalize,
        .tp_weaklistoffset = offsetof(struct exec_generator, weakreflist),
        .tp_dealloc = gen_dealloc,
        .tp_repr = gen_repr,
        .tp_methods = gen_methods,
        .tp_getset = gen_getset,
};

int
exec_generator_init_type(void)
{
    return PyType_Ready(&generator_type);
}

PyObject *
exec_generator_new(struct exec_run *r, const struct exec_code *c, const struct node *comp,
                   PyObject **slots, PyObject *tree_ref, PyObject *name, PyObject *qualname)
{
    struct exec_generator *g = PyObject_GC_New(struct exec_generator, &generator_type);
    if (!g) {
        exec_slots_free(slots, c->nslots);
        PyMem_Free(slots);
        return NULL;
    }
    memset((char *) g + sizeof(PyObject), 0, sizeof(*g) - sizeof(PyObject));
    g->code = c;
    g->comp = comp;
    g->frame.slots = slots;
    g->frame.code = c;
    g->frame.tree_ref = tree_ref;
    g->tree_ref = Py_NewRef(tree_ref);
    g->env_capsule = Py_NewRef(r->env->capsule);
    g->handle = r->env->handle;
    g->name = Py_NewRef(name); /* the function's current names, as CPython takes them */
    g->qualname = Py_NewRef(qualname);
    g->run = r;
    g->state = GEN_CREATED;
    PyObject_GC_Track((PyObject *) g);
    return (PyObject *) g;
}

/* StopIteration's value (or None) after the delegate ended; NULL on another error. */
static PyObject *
delegate_result(void)
{
    PyObject *res = NULL;
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_StopIteration))
        return NULL;
    return _PyGen_FetchStopIterationValue(&res) < 0 ? NULL : res;
}

/* The delegate's send, throw or close, judged as it.name read by the snippet is: yield from
 * calls them by name, and a refused class's (the worker's stdout's _io close) is not run for
 * the snippet this way either. */
static PyObject *
delegate_method(struct exec_run *r, PyObject *it, const char *name)
{
    PyObject *key = PyUnicode_InternFromString(name);
    PyObject *m = key ? exec_getattr(r, it, key) : NULL;
    Py_XDECREF(key);
    return m;
}

/* CPython's SEND (PyIter_Send): None to an iterator is next(); any other value goes to the
 * delegate's send method, which a plain iterator lacks (itertools.count(): AttributeError,
 * raised at the yield from). An iterator whose next() ended returns NULL with no error set. */
static PyObject *
delegate_next(struct exec_run *r, PyObject *it, PyObject *sent)
{
    if (sent == Py_None && PyIter_Check(it))
        return Py_TYPE(it)->tp_iternext(it);
    PyObject *send = delegate_method(r, it, "send");
    PyObject *v = send ? PyObject_CallOneArg(send, sent) : NULL;
    Py_XDECREF(send);
    return v;
}

/* Passes a GeneratorExit on: the delegate's close, when it has one. */
static int
delegate_close(struct exec_run *r, PyObject *it)
{
    if (!PyObject_HasAttrString(it, "close"))
        return 0;
    PyObject *close = delegate_method(r, it, "close");
    PyObject *res = close ? PyObject_CallNoArgs(close) : NULL;
    Py_XDECREF(close);
    Py_XDECREF(res);
    return res ? 0 : -1;
}

/* yield from it: PEP 380, with send, throw and close passed to the delegate. */
static PyObject *
yield_from(struct exec_run *r, PyObject *it)
{
    PyObject *v = delegate_next(r, it, Py_None);
    for (;;) {
        if (!v)
            return delegate_result();
        PyObject *sent = exec_gen_yield(r, v);
        if (sent) {
            v = delegate_next(r, it, sent);
            Py_DECREF(sent);
            continue;
        }
        PyObject *t, *e, *tb;
        PyErr_Fetch(&t, &e, &tb);
        PyErr_NormalizeException(&t, &e, &tb);
        bool exiting = PyErr_GivenExceptionMatches(t, PyExc_GeneratorExit);
        if (exiting || !PyObject_HasAttrString(it, "throw")) {
            if (!exiting || delegate_close(r, it) == 0) {
                PyErr_Restore(t, e, tb);
            } else {
                Py_XDECREF(t);
                Py_XDECREF(e);
                Py_XDECREF(tb);
            }
            return NULL;
        }
        /* throw()'s own arguments when it was called (a type stays a type); else the
         * exception, raised at the yield by a failing throw() */
        PyObject *targs = r->gen ? Py_XNewRef(r->gen->throw_args) : NULL;
        if (r->gen)
            r->gen->throw_args = NULL;
        PyObject *meth = delegate_method(r, it, "throw");
        if (meth && targs)
            v = PyObject_Call(meth, targs, NULL);
        else
            v = meth ? PyObject_CallOneArg(meth, e) : NULL;
        Py_XDECREF(meth);
        Py_XDECREF(targs);
        Py_XDECREF(t);
        Py_XDECREF(e);
        Py_XDECREF(tb);
    }
}

PyObject *
exec_eval_yield(struct exec_run *r, const struct node *n)
{
    if (n->kind == NK_E_YIELD) {
        PyObject *v = n->a ? exec_eval(r, n->a) : Py_NewRef(Py_None);
        return v ? exec_gen_yield(r, v) : NULL;
    }
    PyObject *x = exec_eval(r, n->a);
    PyObject *it = x ? PyObject_GetIter(x) : NULL;
    Py_XDECREF(x);
    if (!it)
        return NULL;
    PyObject *res = yield_from(r, it);
    Py_DECREF(it);
    return res;
}

void
exec_generators_close_all(struct exec_env *env)
{
    while (env->live_gens) {
        struct exec_generator *g = env->live_gens;
        Py_INCREF(g);
        if (gen_close_inner(g) < 0)
            PyErr_Clear();
        live_unlink(g); /* ignored GeneratorExit: stop tracking it */
        Py_DECREF(g);
    }
}
