/* copy, which rebuilds objects from what reducers answer (copy.dispatch_table, __reduce_ex__,
 * the memo) and writes their state directly: guard_store.c's checks of attribute stores do not
 * see it. Installed from exec_guard_store_install, once, before any run. */
#include "exec_internal.h"

/* copy._reconstruct(x, memo, func, args, state, listiter, dictiter) rebuilds y = func(*args),
 * then, unless y has a __setstate__, writes state into y.__dict__ and sets slotstate attribute
 * by attribute (state may be a pair (state, slotstate)), deep-copying state first when memo is
 * given. func and state are the reducer's choice (a snippet's copy.dispatch_table entry), so:
 *   - y is checked before copy touches it: no module (its namespace would be written), and
 *     a value the snippet may hold, as copy hands it back, in containers the walk does not
 *     look into: typing's alias reducer is (operator.getitem, (globals()[alias._name], args)),
 *     and an alias whose _name was '__builtins__' was rebuilt as the real __import__;
 *   - the state copy writes is checked once it is the one copy writes (the shallow copy's as
 *     y is made, the deep copy's as _reconstruct's deepcopy returns it, through the deepcopy
 *     keyword copy never passes): every key that is a str is a plain str and no dunder an
 *     object's own state may not hold (class_dunders.c). setattr(json.dumps, '__kwdefaults__',
 *     ...) from the slotstate loop changed json.dumps for everyone, y.__dict__ ['__deepcopy__']
 *     made a library object's lookup answer the snippet's hook; a str subclass key can fake
 *     its hash and == in either. Unless y has its own __setstate__ (which takes any state),
 *     each part must be a plain dict: a subclass's keys() may answer keys its storage, which
 *     is what is checked, does not hold;
 *   - copy writes state, or appends listiter's and dictiter's items, only into an object func
 *     has just made (the call's reference is its only one): a func returning an object that
 *     exists already (calendar.c, which calendar.month() formats with) had copy write the
 *     reducer's state into the shared object's dict, call its __setstate__, or add items to a
 *     library's list or dict.
 * The call's context is a list [func, state, y, deep, items]: copy may keep the factory (a
 * traceback's locals) after the call. */
enum { CTX_FUNC, CTX_STATE, CTX_Y, CTX_DEEP, CTX_ITEMS, CTX_N };

static PyObject *real_reconstruct, *real_deepcopy;

static int
refuse_state(PyObject *y, PyObject *key, const char *why)
{
    PyErr_Format(exec_InterpreterError, "Forbidden: copy writing state key %R into a %s object: %s",
                 key, Py_TYPE(y)->tp_name, why);
    return -1;
}

static int
refuse_state_type(PyObject *y, PyObject *part, const char *why)
{
    PyErr_Format(exec_InterpreterError,
                 "Forbidden: copy writing a %s as the state of a %s object: %s",
                 Py_TYPE(part)->tp_name, Py_TYPE(y)->tp_name, why);
    return -1;
}

/* One part of the state (state or slotstate); own_setstate: y has a __setstate__ to take it. */
static int
check_state_part(PyObject *y, PyObject *part, bool own_setstate)
{
    if (part == Py_None)
        return 0;
    if (!PyDict_Check(part)) {
        return own_setstate ? 0 : refuse_state_type(y, part, "it writes state from a dict only");
    }
    if (!PyDict_CheckExact(part) && !own_setstate)
        return refuse_state_type(y, part, "a dict subclass may answer other keys than it holds");
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(part, &pos, &key, &value)) {
        if (!PyUnicode_Check(key))
            continue; /* no attribute name: never answers a lookup */
        if (!PyUnicode_CheckExact(key))
            return refuse_state(y, key, "a str subclass can fake its hash and ==");
        if (!exec_class_dunder_instance_allowed(key))
            return refuse_state(y, key,
                                "an object's own state may hold only the dunders a snippet's "
                                "class may define and the walk lets a snippet set");
    }
    return 0;
}

/* copy's split of a state: a pair is (state, slotstate), anything else the state alone. */
static void
state_parts(PyObject *state, PyObject *parts[2])
{
    bool pair = PyTuple_Check(state) && PyTuple_GET_SIZE(state) == 2;
    parts[0] = pair ? PyTuple_GET_ITEM(state, 0) : state;
    parts[1] = pair ? PyTuple_GET_ITEM(state, 1) : Py_None;
}

static int
check_state(PyObject *y, PyObject *state)
{
    if (state == Py_None || y == Py_None)
        return 0;
    bool own_setstate = PyObject_HasAttrString(y, "__setstate__");
    PyObject *parts[2];
    state_parts(state, parts);
    return check_state_part(y, parts[0], own_setstate) < 0 ||
                           check_state_part(y, parts[1], own_setstate) < 0
                   ? -1
                   : 0;
}

/* Whether copy will write into y: items to add, or a state it will pass to y's __setstate__
 * or write into y's dict (a part that is None or empty writes nothing). */
static bool
copy_writes_into(PyObject *y, PyObject *ctx)
{
    PyObject *state = PyList_GET_ITEM(ctx, CTX_STATE);
    if (PyList_GET_ITEM(ctx, CTX_ITEMS) == Py_True)
        return true;
    if (state == Py_None)
        return false;
    if (PyObject_HasAttrString(y, "__setstate__"))
        return true;
    PyObject *parts[2];
    state_parts(state, parts);
    for (size_t i = 0; i < 2; i++)
        if (parts[i] != Py_None && !(PyDict_Check(parts[i]) && PyDict_GET_SIZE(parts[i]) == 0))
            return true;
    return false;
}

/* Every C method's reducer is (getattr, (obj, name)), and a deep copy copies those arguments
 * through the memo, which the snippet may fill (a dict subclass's get, or the memo its
 * __deepcopy__ is handed): answering json.dumps for the method's object and '__globals__' for
 * its name had copy's frame read a library function's globals with the real getattr. So the
 * real getattr as a reducer's function reads as the snippet's getattr does, name and value
 * checked; the other real builtins the snippet lacks no reducer of CPython's names. */
static PyObject *
call_factory(PyObject *func, PyObject *args, PyObject *kwargs)
{
    const char *real = exec_guard_builtins_name(func);
    struct exec_run *r = exec_audit_running();
    if (!real || !r)
        return PyObject_Call(func, args, kwargs);
    if (strcmp(real, "getattr") != 0 || (kwargs && PyDict_GET_SIZE(kwargs) > 0) ||
        PyTuple_GET_SIZE(args) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(args, 1)))
        return PyErr_Format(exec_InterpreterError,
                            "Forbidden: copy calling the real builtin %s as a reducer's function "
                            "(copy rebuilds only a method, with getattr(obj, name))",
                            real);
    PyObject *obj = PyTuple_GET_ITEM(args, 0);
    return exec_check_value(r, obj) < 0 ? NULL : exec_getattr(r, obj, PyTuple_GET_ITEM(args, 1));
}

static PyObject *
checked_factory(PyObject *ctx, PyObject *args, PyObject *kwargs)
{
    PyObject *y = call_factory(PyList_GET_ITEM(ctx, CTX_FUNC), args, kwargs);
    /* made by the call, or held elsewhere too: read before anything else takes a reference */
    bool existed = y && Py_REFCNT(y) > 1;
    struct exec_run *r = exec_audit_running();
    if (y && r && exec_check_value(r, y) < 0)
        Py_CLEAR(y);
    if (y && PyModule_Check(y)) {
        const char *m = PyModule_GetName(y);
        PyErr_Clear();
        PyErr_Format(exec_InterpreterError,
                     "Forbidden: copy cannot rebuild an object as a module (%s): it would write "
                     "the copied state into the module's namespace",
                     m ? m : "?");
        Py_CLEAR(y);
    }
    if (!y)
        return NULL;
    PyList_SetItem(ctx, CTX_Y, Py_NewRef(y)); /* an index in range: cannot fail */
    if (PyList_GET_ITEM(ctx, CTX_DEEP) == Py_False &&
        check_state(y, PyList_GET_ITEM(ctx, CTX_STATE)) < 0) {
        Py_CLEAR(y);
    } else if (existed && copy_writes_into(y, ctx)) {
        PyErr_Format(exec_InterpreterError,
                     "Forbidden: copy writing state or items into a %s object it did not make "
                     "(the reducer's function returned an object that exists already)",
                     Py_TYPE(y)->tp_name);
        Py_CLEAR(y);
    }
    return y;
}

static PyMethodDef checked_factory_def = {"copy_factory",
                                          (PyCFunction) (void (*)(void)) checked_factory,
                                          METH_VARARGS | METH_KEYWORDS, NULL};

/* _reconstruct's deepcopy: the deep copy of the reducer's state is checked as the state. */
static PyObject *
checked_deepcopy(PyObject *ctx, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *res = PyObject_Vectorcall(real_deepcopy, args, (size_t) nargs, kwnames);
    if (res && nargs >= 1 && args[0] == PyList_GET_ITEM(ctx, CTX_STATE) &&
        check_state(PyList_GET_ITEM(ctx, CTX_Y), res) < 0)
        Py_CLEAR(res);
    return res;
}

static PyMethodDef checked_deepcopy_def = {"copy_deepcopy",
                                           (PyCFunction) (void (*)(void)) checked_deepcopy,
                                           METH_FASTCALL | METH_KEYWORDS, NULL};

static PyObject *
call_reconstruct(PyObject *ctx, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *factory = PyCFunction_New(&checked_factory_def, ctx);
    PyObject *deepcopy = PyCFunction_New(&checked_deepcopy_def, ctx);
    PyObject *kwnames = Py_BuildValue("(s)", "deepcopy");
    PyObject **argv = PyMem_Malloc((size_t) (nargs + 1) * sizeof(PyObject *));
    PyObject *y = NULL;
    if (argv && factory && deepcopy && kwnames) {
        memcpy(argv, args, (size_t) nargs * sizeof(PyObject *));
        argv[2] = factory;
        argv[nargs] = deepcopy;
        y = PyObject_Vectorcall(real_reconstruct, argv, (size_t) nargs, kwnames);
    } else if (!argv) {
        PyErr_NoMemory();
    }
    PyMem_Free(argv);
    Py_XDECREF(kwnames);
    Py_XDECREF(deepcopy);
    Py_XDECREF(factory);
    return y;
}

static PyObject *
checked_reconstruct(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void) self;
    /* copy passes func positionally, and no keyword: anything else is not copy's call */
    if (nargs < 3 || (kwnames && PyTuple_GET_SIZE(kwnames) > 0))
        return PyErr_Format(PyExc_TypeError,
                            "copy._reconstruct: x, memo and func must be positional, and no "
                            "keyword is taken");
    /* a deep copy puts copies of the reducer's arguments in the memo, which the snippet
     * holds: they are values it may hold (typing's alias reducer handed over typing's
     * builtins dict, the real eval in a plain dict's copy) */
    struct exec_run *r = exec_audit_running();
    if (r && nargs > 3 && PyTuple_Check(args[3]))
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[3]); i++)
            if (exec_check_value(r, PyTuple_GET_ITEM(args[3], i)) < 0)
                return NULL;
    bool items = (nargs > 5 && args[5] != Py_None) || (nargs > 6 && args[6] != Py_None);
    PyObject *ctx =
            Py_BuildValue("[OOOOO]", args[2], nargs > 4 ? args[4] : Py_None, Py_None,
                          args[1] == Py_None ? Py_False : Py_True, items ? Py_True : Py_False);
    PyObject *y = ctx ? call_reconstruct(ctx, args, nargs) : NULL;
    Py_XDECREF(ctx);
    return y;
}

static PyMethodDef checked_reconstruct_def = {
        "_reconstruct", (PyCFunction) (void (*)(void)) checked_reconstruct,
        METH_FASTCALL | METH_KEYWORDS,
        "copy._reconstruct, refusing to rebuild into a module or to write a refused dunder"};

/* deepcopy keeps every original it copied alive in the memo, at memo[id(memo)], so that the
 * ids it files copies under stay unique: originals copy reached inside CPython code, where no
 * attribute check ran (a bound method's __self__: random's module-level Random instance behind
 * random.choice; a library object's real __dict__ as its reducer's state), and the memo is the
 * snippet's (it passed one, or its __deepcopy__ is handed it). So they are kept in a list
 * inside a capsule, which has no attribute or item anyone can read: alive as long as the
 * memo, out of the snippet's reach. */
static const char keep_alive_name[] = "pyfence.copy_keep_alive";

static void
keep_alive_free(PyObject *capsule)
{
    Py_XDECREF(PyCapsule_GetPointer(capsule, keep_alive_name));
}

static PyObject *
new_keep_alive(PyObject *x)
{
    PyObject *list = PyList_New(1);
    if (!list)
        return NULL;
    PyList_SET_ITEM(list, 0, Py_NewRef(x));
    PyObject *capsule = PyCapsule_New(list, keep_alive_name, keep_alive_free);
    if (!capsule)
        Py_DECREF(list);
    return capsule;
}

static PyObject *
checked_keep_alive(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void) self;
    if (nargs != 2)
        return PyErr_Format(PyExc_TypeError, "copy._keep_alive takes x and memo");
    PyObject *key = PyLong_FromVoidPtr(args[1]); /* id(memo), as copy keys it */
    if (!key)
        return NULL;
    PyObject *held = PyObject_GetItem(args[1], key);
    int rc = -1;
    if (held && PyCapsule_IsValid(held, keep_alive_name)) {
        rc = PyList_Append(PyCapsule_GetPointer(held, keep_alive_name), args[0]);
    } else if (held || PyErr_ExceptionMatches(PyExc_KeyError)) {
        PyErr_Clear();
        PyObject *capsule = new_keep_alive(args[0]);
        rc = capsule ? PyObject_SetItem(args[1], key, capsule) : -1;
        Py_XDECREF(capsule);
    }
    Py_XDECREF(held);
    Py_DECREF(key);
    return rc < 0 ? NULL : Py_NewRef(Py_None);
}

static PyMethodDef checked_keep_alive_def = {
        "_keep_alive", (PyCFunction) (void (*)(void)) checked_keep_alive, METH_FASTCALL,
        "copy._keep_alive, keeping the originals where the memo's owner cannot read them"};

static int
replace_in(PyObject *ns, PyMethodDef *def)
{
    PyObject *checked = PyCFunction_New(def, NULL);
    int rc = checked ? PyDict_SetItemString(ns, def->ml_name, checked) : -1;
    Py_XDECREF(checked);
    return rc;
}

int
exec_guard_copy_install(void)
{
    PyObject *copy = exec_import_own("copy");
    if (!copy)
        return -1;
    PyObject *ns = PyModule_GetDict(copy); /* borrowed */
    real_reconstruct = PyDict_GetItemString(ns, "_reconstruct");
    real_deepcopy = PyDict_GetItemString(ns, "deepcopy");
    PyObject *keep_alive = PyDict_GetItemString(ns, "_keep_alive");
    int rc = -1;
    if (!real_reconstruct || !PyFunction_Check(real_reconstruct) || !real_deepcopy || !keep_alive ||
        !PyFunction_Check(keep_alive)) {
        PyErr_SetString(PyExc_RuntimeError, "copy._reconstruct, copy.deepcopy or "
                                            "copy._keep_alive is not the function expected");
    } else {
        Py_INCREF(real_reconstruct);
        Py_INCREF(real_deepcopy);
        rc = replace_in(ns, &checked_reconstruct_def) < 0 ||
                             replace_in(ns, &checked_keep_alive_def) < 0
                     ? -1
                     : 0;
    }
    Py_DECREF(copy);
    return rc;
}
