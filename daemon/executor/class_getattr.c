/* A class's __getattr__ is asked for names normal lookup misses. But library code looks up, on
 * the objects it is handed, the very hooks a snippet's class may not define (class_dunders.c),
 * and those miss normal lookup: copy's getattr(x, '__deepcopy__', None) and
 * hasattr(y, '__setstate__'), copyreg's __getnewargs_ex__, copy's getattr(cls, '__copy__')
 * answered by a metaclass's __getattr__, pandas' interchange protocol's hasattr(df,
 * '__dataframe__'). Whatever __getattr__ answers there, the library calls: the refused hook by
 * another door. A snippet's class's __getattr__ is the snippet's code; a library class's may
 * answer data the snippet chose: pandas' NDFrame.__getattr__ answers s[name] for a label of an
 * object index, so Series([f], index=['__dataframe__']).__dataframe__ is the snippet's f, and
 * numpy.record's Python __getattribute__ answers a field of object dtype for any name
 * numpy.void lacks.
 *
 * So a class whose attribute lookup is Python code (a __getattr__, a __getattribute__: CPython
 * puts one of two dispatchers in its tp_getattro slot) gets, in place of CPython's dispatcher,
 * one that looks up a dunder outside the class allow-list the way the C classes beneath do
 * (the nearest __getattribute__ along the MRO that is no Python code: object's, numpy.void's),
 * asking no Python __getattr__ or __getattribute__: its AttributeError is CPython's own, as if
 * the class had no Python lookup for that name. Every other name goes to CPython's dispatcher
 * unchanged. Being the type's slot, it holds however the lookup got there (def, assignment, a
 * lambda, a partial, a callable object, staticmethod, a base class's, type(), a metaclass,
 * types.new_class), and the class dict is untouched: K.__getattr__ is the class's own
 * function (which the snippet itself may not read: a refused dunder).
 *   - Classes made while a snippet runs (type.__new__ is replaced, class_dunders.c) check
 *     always: they are the snippet's, or a library's made for it.
 *   - Every other class checks only while a snippet runs (outside imports), and not the
 *     snippet's own reads: outside runs it is CPython's own. Classes made at import get it as
 *     type.__new__ makes them; those made before the executor was installed (CPython's
 *     start-up) by one walk of object's subclasses then, in the zygote, before any library is
 *     imported: no type object is written after the fork.
 * CPython resets the slot when a class's or a base's __getattr__, __getattribute__ or
 * __bases__ is stored (guard_store.c puts the check back after such a store). Its __getattr__
 * dispatcher replaces itself by the unchecked simpler one when it finds no __getattr__ (a
 * class with only a Python __getattribute__), then runs that __getattribute__: the check never
 * lets it, but makes the swap to the checked simpler one itself, before any Python code.
 *
 * Nor does an instance's own state answer those dunders on the classes made while a snippet
 * runs: library code writes into the instance dict under names the snippet chose
 * (functools.cached_property caches under its attrname, copy writes its state), where
 * CPython's lookup found '__deepcopy__' or '__dataframe__' before the class. So such a class
 * gets a checking slot also where CPython gave it the generic lookup, and every checking slot
 * of those classes looks such a name up on the class alone (the MRO, through the descriptor:
 * CPython's own lookup of the hooks it calls), unless the walk lets the snippet set the name
 * on an object itself (__name__, __wrapped__: exec_class_dunder_instance_allowed). A value
 * entering the snippet's hands gets it only if its class is the snippet's own: a library's
 * objects keep their dunders in their dicts. */
#include "exec_internal.h"

/* CPython's slot_tp_getattr_hook (a Python __getattr__, or a __getattribute__ before its first
 * use) and slot_tp_getattro (a Python __getattribute__ only), static in typeobject.c: read
 * from a probe class at install. */
static getattrofunc real_getattr_hook, real_getattribute;
static PyObject *str_getattribute, *str_getattr;

/* The nearest __getattribute__ along t's MRO that is a C slot's (a wrapper descriptor; the
 * others are Python code), new reference, or NULL for object's own. */
static PyObject *
c_getattribute(PyTypeObject *t)
{
    PyObject *mro = t->tp_mro;
    if (!mro)
        return NULL;
    Py_INCREF(mro);
    PyObject *found = NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro) && !found; i++) {
        PyObject *dict = ((PyTypeObject *) PyTuple_GET_ITEM(mro, i))->tp_dict;
        PyObject *ga = dict ? PyDict_GetItemWithError(dict, str_getattribute) : NULL;
        if (ga && Py_IS_TYPE(ga, &PyWrapperDescr_Type))
            found = Py_NewRef(ga);
    }
    Py_DECREF(mro);
    PyErr_Clear(); /* a dict lookup's failure: the next base's, then object's */
    return found;
}

/* The lookup of a refused dunder: as the C classes beneath the Python lookup make it. */
static PyObject *
lookup_in_c(PyObject *self, PyObject *name)
{
    PyObject *ga = c_getattribute(Py_TYPE(self));
    if (!ga || ((PyWrapperDescrObject *) ga)->d_wrapped == (void *) PyObject_GenericGetAttr) {
        Py_XDECREF(ga);
        return PyObject_GenericGetAttr(self, name);
    }
    PyObject *bound = Py_TYPE(ga)->tp_descr_get(ga, self, (PyObject *) Py_TYPE(self));
    Py_DECREF(ga);
    if (!bound)
        return NULL;
    PyObject *res = PyObject_CallOneArg(bound, name);
    Py_DECREF(bound);
    return res;
}

/* An instance's dunder that may not answer from the instance's own state, answered by its
 * class alone, as CPython looks up the hooks it calls itself (_PyObject_LookupSpecial): the
 * first class along the MRO whose dict has it, through its descriptor. Library code planted it
 * in the instance dict (functools.cached_property writing its cache under an attrname the
 * snippet chose, copy's state), where CPython's lookup found it before the class. */
static PyObject *
lookup_in_type(PyObject *self, PyObject *name)
{
    PyTypeObject *t = Py_TYPE(self);
    PyObject *descr = _PyType_Lookup(t, name); /* borrowed */
    if (!descr)
        return PyErr_Format(PyExc_AttributeError, "'%.100s' object has no attribute '%U'",
                            t->tp_name, name);
    descrgetfunc get = Py_TYPE(descr)->tp_descr_get;
    Py_INCREF(descr); /* the getter may run code that drops it from the class */
    if (!get)
        return descr;
    PyObject *res = get(descr, self, (PyObject *) t);
    Py_DECREF(descr);
    return res;
}

/* decided on the characters, as the class namespace check is */
static bool
is_refused(PyObject *name)
{
    return PyUnicode_Check(name) && !exec_class_dunder_allowed(name);
}

/* The lookup of a refused dunder on an instance of a class made while a snippet ran: by the
 * class alone, unless the name is one the snippet could store on the instance itself
 * (__name__, __wrapped__: update_wrapper on a snippet's object), then as the C classes
 * beneath the Python lookup make it. */
static PyObject *
lookup_refused(PyObject *self, PyObject *name)
{
    return exec_is_allowed_dunder_str(name) ? lookup_in_c(self, name) : lookup_in_type(self, name);
}

/* CPython's __getattr__ dispatcher, asked only when t has a __getattr__. Finding none, it
 * would put its unchecked simpler dispatcher in t's slot and run the Python __getattribute__
 * under it, and every lookup on t made meanwhile (numpy.record's __getattribute__ reading a
 * field whose object's __getattr__ calls a library back with another record) went unchecked:
 * the check `simpler` takes the slot first, before any Python code runs, and answers. */
static PyObject *
call_getattr_hook(PyObject *self, PyObject *name, getattrofunc simpler)
{
    PyTypeObject *t = Py_TYPE(self);
    if (_PyType_Lookup(t, str_getattr)) /* borrowed; no Python code runs */
        return real_getattr_hook(self, name);
    t->tp_getattro = simpler;
    return simpler(self, name);
}

/* The slots of a class made while a snippet ran. */
static PyObject *
checked_getattribute(PyObject *self, PyObject *name)
{
    return is_refused(name) ? lookup_refused(self, name) : real_getattribute(self, name);
}

static PyObject *
checked_getattr_hook(PyObject *self, PyObject *name)
{
    return is_refused(name) ? lookup_refused(self, name)
                            : call_getattr_hook(self, name, checked_getattribute);
}

/* ... and of one with CPython's generic lookup (no Python __getattr__ or __getattribute__):
 * ordinary names, and the dunders a class may define, pay four character reads. */
static PyObject *
checked_generic(PyObject *self, PyObject *name)
{
    return is_refused(name) ? lookup_refused(self, name) : PyObject_GenericGetAttr(self, name);
}

/* The lookup the walk makes for the snippet's own read (obj.name, getattr(), hasattr(), a class
 * pattern's attribute), while it is made: borrowed, and cleared once a library's dispatcher
 * took it, so that what its __getattr__ looks up in turn is checked. */
static PyObject *own_read_obj, *own_read_name;

PyObject *
exec_class_getattr_own_read(PyObject *obj, PyObject *name)
{
    PyObject *outer_obj = own_read_obj, *outer_name = own_read_name;
    own_read_obj = obj;
    own_read_name = name;
    PyObject *v = PyObject_GetAttr(obj, name);
    own_read_obj = outer_obj;
    own_read_name = outer_name;
    return v;
}

/* Whether a library class's slot checks this lookup: while a snippet runs (outside imports),
 * and not the snippet's own read: the walk let that pass by name (a dunder the snippet may
 * read: typing.Union.__name__ is answered by _SpecialForm.__getattr__), and the answer goes to
 * the snippet, which could read it anyway. The allow-list is consulted for dunder-shaped names
 * only, the run's state (a walk of the frames) for refused ones only: ordinary lookups pay a
 * few character reads. */
static bool
library_checks(PyObject *self, PyObject *name)
{
    bool own = self == own_read_obj && name == own_read_name;
    own_read_obj = own_read_name = NULL;
    return !own && is_refused(name) && exec_audit_stores_checked();
}

/* The slots of every other class. */
static PyObject *
library_getattribute(PyObject *self, PyObject *name)
{
    return library_checks(self, name) ? lookup_in_c(self, name) : real_getattribute(self, name);
}

static PyObject *
library_getattr_hook(PyObject *self, PyObject *name)
{
    return library_checks(self, name) ? lookup_in_c(self, name)
                                      : call_getattr_hook(self, name, library_getattribute);
}

/* CPython's dispatchers in t's slot, replaced by the checking ones. */
static void
guard_dispatcher(PyTypeObject *t)
{
    if (real_getattr_hook && t->tp_getattro == real_getattr_hook)
        t->tp_getattro = checked_getattr_hook;
    else if (real_getattribute && t->tp_getattro == real_getattribute)
        t->tp_getattro = checked_getattribute;
}

void
exec_class_getattr_guard(PyTypeObject *t)
{
    guard_dispatcher(t);
    if (t->tp_getattro == PyObject_GenericGetAttr && (t->tp_flags & Py_TPFLAGS_HEAPTYPE))
        t->tp_getattro = checked_generic;
}

/* type.__new__ guards the class it makes only once CPython's returns (class_dunders.c), but
 * CPython calls the class's namespace values' __set_name__ and its bases' __init_subclass__
 * before that, with the class under CPython's own dispatcher: copy.deepcopy(cls()) there asked
 * the snippet's __getattr__ for __deepcopy__. Every value entering the snippet's hands (a
 * call's arguments, function.c; whatever the walk checks, policy.c) passes here first, so such
 * a class and its instances are checked before any snippet code holds them. */
static void
guard_value_class(PyTypeObject *t)
{
    guard_dispatcher(t);
    /* the instance dict's check for the snippet's classes only: a library's objects keep
     * their dunders there (typing.TypeVar's __bound__, enum members' __objclass__) */
    if (t->tp_getattro == PyObject_GenericGetAttr && exec_class_is_snippets(t))
        t->tp_getattro = checked_generic;
}

void
exec_class_getattr_guard_value(PyObject *v)
{
    if (PyType_Check(v))
        guard_value_class((PyTypeObject *) v);
    guard_value_class(Py_TYPE(v));
}

void
exec_class_getattr_guard_library(PyTypeObject *t)
{
    if (real_getattr_hook && t->tp_getattro == real_getattr_hook)
        t->tp_getattro = library_getattr_hook;
    else if (real_getattribute && t->tp_getattro == real_getattribute)
        t->tp_getattro = library_getattribute;
}

int
exec_class_getattr_guard_tree(PyTypeObject *t)
{
    return exec_type_tree_apply(t, exec_class_getattr_guard);
}

int
exec_class_getattr_guard_library_tree(PyTypeObject *t)
{
    return exec_type_tree_apply(t, exec_class_getattr_guard_library);
}

bool
exec_class_getattr_store_resets(PyObject *name)
{
    static const char *const names[] = {"__getattr__", "__getattribute__", "__bases__"};
    for (size_t i = 0; PyUnicode_Check(name) && i < sizeof(names) / sizeof(names[0]); i++)
        if (PyUnicode_CompareWithASCIIString(name, names[i]) == 0)
            return true;
    return false;
}

/* A probe class with `name` in its dict (any value makes CPython install its __getattr__
 * dispatcher); with `lookup`, one lookup on an instance first (the dispatcher, finding no
 * __getattr__, puts the simpler one in the slot; calling None then fails, as expected). */
static getattrofunc
probe_slot(const char *name, bool lookup)
{
    PyObject *probe = PyObject_CallFunction((PyObject *) &PyType_Type, "s(){s:O}", "getattr_probe",
                                            name, Py_None);
    PyObject *inst = probe && lookup ? PyObject_CallNoArgs(probe) : NULL;
    if (inst) {
        PyObject *v = PyObject_GetAttrString(inst, "x");
        Py_XDECREF(v);
        Py_DECREF(inst);
    }
    PyErr_Clear();
    getattrofunc slot = probe && (!lookup || inst) ? ((PyTypeObject *) probe)->tp_getattro : NULL;
    Py_XDECREF(probe);
    /* fail closed on a CPython whose dispatchers are not slots of their own */
    return slot == PyObject_GenericGetAttr ? NULL : slot;
}

int
exec_class_getattr_install(void)
{
    if (real_getattr_hook)
        return 0;
    if (!(str_getattribute = PyUnicode_InternFromString("__getattribute__")) ||
        !(str_getattr = PyUnicode_InternFromString("__getattr__")))
        return -1;
    getattrofunc hook = probe_slot("__getattr__", false);
    getattrofunc simpler = probe_slot("__getattribute__", true);
    if (!hook || !simpler || hook == simpler) {
        PyErr_SetString(PyExc_RuntimeError, "a class with a Python __getattr__ or "
                                            "__getattribute__ has no dispatcher slot of its own "
                                            "to install the executor's check in");
        return -1;
    }
    real_getattr_hook = hook;
    real_getattribute = simpler;
    /* the classes CPython's start-up made; later ones get it from type.__new__ */
    return exec_class_getattr_guard_library_tree(&PyBaseObject_Type);
}
