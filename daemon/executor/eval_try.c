/* Exceptions: try/except/else/finally, raise, with, assert. A refusal that ends the run
 * (r->abort: budgets, timeouts) is never caught, and finally blocks do not run under it: they
 * would only spend the budget that is already exhausted. final_answer() is not one: it raises
 * a BaseException that unwinds through finally blocks and with exits, as in smolagents. */
#include "exec_internal.h"

struct saved_exc {
    PyObject *type, *value, *tb;
};

static void
save_exc(struct saved_exc *e)
{
    PyErr_Fetch(&e->type, &e->value, &e->tb);
    PyErr_NormalizeException(&e->type, &e->value, &e->tb);
    if (e->tb && e->value)
        PyException_SetTraceback(e->value, e->tb);
}

static void
restore_exc(struct saved_exc *e)
{
    PyErr_Restore(e->type, e->value, e->tb);
    e->type = e->value = e->tb = NULL;
}

static void
drop_exc(struct saved_exc *e)
{
    Py_CLEAR(e->type);
    Py_CLEAR(e->value);
    Py_CLEAR(e->tb);
}

/* The exception being raised now gets `context` as its __context__ (CPython does it through
 * the thread's exception state, which the executor does not use). */
void
exec_handled_leave(struct exec_run *r, PyObject *enclosing)
{
    PyErr_SetHandledException(enclosing ? enclosing : r->outer_handled);
}

void
exec_chain_context(PyObject *context)
{
    if (!context || !PyErr_Occurred())
        return;
    struct saved_exc now;
    save_exc(&now);
    if (now.value && now.value != context) {
        PyObject *old = PyException_GetContext(now.value);
        if (!old)
            PyException_SetContext(now.value, Py_NewRef(context));
        Py_XDECREF(old);
    }
    restore_exc(&now);
}

static int
check_handler_type(PyObject *t)
{
    if (PyExceptionClass_Check(t))
        return 0;
    if (PyTuple_Check(t)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++)
            if (!PyExceptionClass_Check(PyTuple_GET_ITEM(t, i)))
                goto bad;
        return 0;
    }
bad:
    PyErr_SetString(PyExc_TypeError,
                    "catching classes that do not inherit from BaseException is not allowed");
    return -1;
}

static int
handle(struct exec_run *r, const struct node *s)
{
    struct saved_exc e;
    save_exc(&e);
    for (uint32_t i = 0; i < s->nw; i++) {
        const struct node *h = s->w[i];
        if (h->a) {
            PyObject *t = exec_eval(r, h->a);
            int m = t && check_handler_type(t) == 0 ? PyErr_GivenExceptionMatches(e.value, t) : -1;
            Py_XDECREF(t);
            if (m < 0) {
                exec_chain_context(e.value);
                drop_exc(&e);
                return FLOW_ERROR;
            }
            if (!m)
                continue;
        }
        PyObject *prev = r->handling;
        r->handling = Py_NewRef(e.value);
        /* native code in the handler sees it too: sys.exc_info(), traceback.format_exc() */
        PyErr_SetHandledException(e.value);
        int flow = h->b && exec_name_store(r, h->b, e.value) < 0 ? FLOW_ERROR
                                                                 : exec_block(r, h->v, h->nv);
        exec_handled_leave(r, prev);
        if (flow == FLOW_ERROR)
            exec_chain_context(e.value);
        if (h->b) {
            /* `except E as e` unbinds e afterwards (CPython's rule) */
            struct saved_exc keep = {0};
            if (flow == FLOW_ERROR)
                save_exc(&keep);
            if (exec_name_delete(r, h->b) < 0)
                PyErr_Clear();
            if (flow == FLOW_ERROR)
                restore_exc(&keep);
        }
        Py_SETREF(r->handling, prev);
        drop_exc(&e);
        return flow;
    }
    restore_exc(&e);
    return FLOW_ERROR;
}

static int
run_finally(struct exec_run *r, const struct node *fin, int flow)
{
    if (flow == FLOW_ERROR && r->abort != ABORT_NONE)
        return FLOW_ERROR;
    struct saved_exc e = {0};
    PyObject *retval = NULL;
    if (flow == FLOW_ERROR)
        save_exc(&e);
    if (flow == FLOW_RETURN)
        retval = r->retval, r->retval = NULL;
    PyObject *prev = r->handling;
    if (e.value)
        r->handling = Py_NewRef(e.value);
    int f2 = exec_block(r, fin->v, fin->nv);
    if (e.value)
        Py_SETREF(r->handling, prev);
    if (f2 == FLOW_NEXT) {
        if (flow == FLOW_ERROR)
            restore_exc(&e);
        if (flow == FLOW_RETURN)
            Py_XSETREF(r->retval, retval);
        return flow;
    }
    if (f2 == FLOW_ERROR)
        exec_chain_context(e.value);
    drop_exc(&e);
    Py_XDECREF(retval);
    return f2;
}

int
exec_try(struct exec_run *r, const struct node *s)
{
    int flow = exec_block(r, s->v, s->nv);
    if (flow == FLOW_ERROR && r->abort == ABORT_NONE && s->nw)
        flow = (s->flags & NF_TRY_STAR) ? exec_handle_star(r, s) : handle(r, s);
    else if (flow == FLOW_NEXT && s->nu)
        flow = exec_block(r, s->u, s->nu);
    if (s->c)
        flow = run_finally(r, s->c, flow);
    return flow;
}

static PyObject *
make_exception(PyObject *x)
{
    if (PyExceptionClass_Check(x)) {
        PyObject *inst = PyObject_CallNoArgs(x);
        if (inst && !PyExceptionInstance_Check(inst)) {
            PyErr_Format(PyExc_TypeError,
                         "calling %R should have returned an instance of BaseException, not %s", x,
                         Py_TYPE(inst)->tp_name);
            Py_CLEAR(inst);
        }
        return inst;
    }
    if (PyExceptionInstance_Check(x))
        return Py_NewRef(x);
    PyErr_SetString(PyExc_TypeError, "exceptions must derive from BaseException");
    return NULL;
}

int
exec_raise(struct exec_run *r, const struct node *s)
{
    if (!s->a) {
        /* the body's own handled exception, else (in a generator) its resumer's */
        PyObject *h = r->handling ? Py_NewRef(r->handling) : PyErr_GetHandledException();
        if (!h || h == Py_None) {
            Py_XDECREF(h);
            PyErr_SetString(PyExc_RuntimeError, "No active exception to reraise");
            return -1;
        }
        PyObject *tb = PyException_GetTraceback(h);
        PyErr_Restore(Py_NewRef((PyObject *) Py_TYPE(h)), h, tb);
        return -1;
    }
    PyObject *x = exec_eval(r, s->a);
    if (!x)
        return -1;
    PyObject *exc = make_exception(x);
    Py_DECREF(x);
    if (!exc)
        return -1;
    if (s->b) {
        PyObject *c = exec_eval(r, s->b), *cause = NULL;
        if (!c) {
            Py_DECREF(exc);
            return -1;
        }
        if (c != Py_None && !PyExceptionClass_Check(c) && !PyExceptionInstance_Check(c)) {
            PyErr_SetString(PyExc_TypeError, "exception causes must derive from BaseException");
            Py_DECREF(c);
            Py_DECREF(exc);
            return -1;
        }
        if (c != Py_None && !(cause = make_exception(c))) {
            Py_DECREF(c);
            Py_DECREF(exc);
            return -1;
        }
        Py_DECREF(c);
        PyException_SetCause(exc, cause); /* steals; NULL for `from None` */
    }
    PyErr_SetObject((PyObject *) Py_TYPE(exc), exc);
    Py_DECREF(exc);
    exec_chain_context(r->handling);
    return -1;
}

int
exec_assert(struct exec_run *r, const struct node *s)
{
    PyObject *t = exec_eval(r, s->a);
    if (!t)
        return -1;
    int truth = PyObject_IsTrue(t);
    Py_DECREF(t);
    if (truth != 0)
        return truth < 0 ? -1 : 0;
    PyObject *msg = s->b ? exec_eval(r, s->b) : NULL;
    if (s->b && !msg)
        return -1;
    PyObject *exc = msg ? PyObject_CallOneArg(PyExc_AssertionError, msg)
                        : PyObject_CallNoArgs(PyExc_AssertionError);
    Py_XDECREF(msg);
    if (exc) {
        PyErr_SetObject(PyExc_AssertionError, exc);
        Py_DECREF(exc);
    }
    return -1;
}

/* obj's special method `name`, looked up on its type as CPython does; NULL without an
 * exception when there is none. */
static PyObject *
special(PyObject *obj, const char *name)
{
    PyObject *s = PyUnicode_InternFromString(name);
    if (!s)
        return NULL;
    PyObject *m = _PyType_Lookup(Py_TYPE(obj), s); /* borrowed */
    Py_DECREF(s);
    if (!m)
        return NULL;
    descrgetfunc get = Py_TYPE(m)->tp_descr_get;
    return get ? get(m, obj, (PyObject *) Py_TYPE(obj)) : Py_NewRef(m);
}

/* Item i of a with statement, and inside it the rest (and then the body). */
static int
with_item(struct exec_run *r, const struct node *s, uint32_t i)
{
    if (i == s->nv)
        return exec_block(r, s->w, s->nw);
    const struct node *item = s->v[i];
    PyObject *mgr = exec_eval(r, item->a);
    if (!mgr)
        return FLOW_ERROR;
    PyObject *enter = special(mgr, "__enter__");
    PyObject *exit_ = enter ? special(mgr, "__exit__") : NULL;
    if (!enter || !exit_) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError,
                         "'%.200s' object does not support the context manager protocol%s",
                         Py_TYPE(mgr)->tp_name, enter ? " (missed __exit__ method)" : "");
        Py_XDECREF(enter);
        Py_DECREF(mgr);
        return FLOW_ERROR;
    }
    Py_DECREF(mgr);
    /* judged as obj.__enter__ read by the walk would be: a refused class's methods (the
     * worker's stdout's _io close, threading.Condition's acquire) are not run by `with` */
    if (exec_check_value(r, enter) < 0 || exec_check_value(r, exit_) < 0) {
        Py_DECREF(enter);
        Py_DECREF(exit_);
        return FLOW_ERROR;
    }
    PyObject *val = PyObject_CallNoArgs(enter);
    Py_DECREF(enter);
    int flow = FLOW_ERROR;
    if (val) {
        flow = item->b && exec_assign(r, item->b, val) < 0 ? FLOW_ERROR : with_item(r, s, i + 1);
        Py_DECREF(val);
    }
    if (flow == FLOW_ERROR && r->abort != ABORT_NONE) {
        Py_DECREF(exit_);
        return flow;
    }
    if (flow == FLOW_ERROR && val) {
        struct saved_exc e;
        save_exc(&e);
        PyObject *tb = e.value ? PyException_GetTraceback(e.value) : NULL;
        PyObject *res =
                PyObject_CallFunctionObjArgs(exit_, e.type, e.value, tb ? tb : Py_None, NULL);
        Py_XDECREF(tb);
        int suppress = res ? PyObject_IsTrue(res) : -1;
        Py_XDECREF(res);
        if (suppress > 0) {
            drop_exc(&e);
            flow = FLOW_NEXT;
        } else if (suppress < 0) {
            exec_chain_context(e.value);
            drop_exc(&e);
        } else {
            restore_exc(&e);
        }
    } else if (val) {
        PyObject *retval = flow == FLOW_RETURN ? r->retval : NULL;
        r->retval = NULL;
        PyObject *res = PyObject_CallFunctionObjArgs(exit_, Py_None, Py_None, Py_None, NULL);
        r->retval = retval;
        if (!res)
            flow = FLOW_ERROR;
        Py_XDECREF(res);
    }
    Py_DECREF(exit_);
    return flow;
}

int
exec_with(struct exec_run *r, const struct node *s)
{
    return with_item(r, s, 0);
}
