/* Classes and their C methods, judged by the module the class says it is defined in.
 *
 * Functions of modules the profile does not allow are refused as values (policy.c), Python
 * methods by the module of their function. A C type's methods have no module of their own:
 * _thread.lock.acquire is the lock type's, and queue.Queue().mutex hands out a lock. So a C
 * method is judged by the class that defines it, and a class by its module, as
 * type.__module__ reads it: a C type's from its tp_name ("_thread.lock"), any other's from
 * its __module__. The snippet's own classes are __main__'s, pyfence's exceptions pyfence's;
 * builtins are everyone's. Holding a class of a module the profile does not allow is refused
 * too: calling it runs its constructor (a file type opens its file when made). Instances stay
 * holdable: libraries return them (pandas hands out pytz time zones), and what they can do is
 * reached through their methods. */
#include <stdio.h>
#include <string.h>

#include "exec_internal.h"

/* A heap type's __module__ is whatever its maker wrote into its dict
 * (Enum('E', 'A', module='builtins'), type(name, bases, {'__module__': 'builtins'})): one
 * that says builtins is a builtin only if it is the builtins module's own (ExceptionGroup is
 * a heap type), else it is judged as any other class of that module. */
static bool
is_builtins_own(PyTypeObject *t)
{
    if (!(t->tp_flags & Py_TPFLAGS_HEAPTYPE))
        return true;
    static PyObject *builtins_dict;
    if (!builtins_dict) {
        PyObject *m = exec_import_own("builtins");
        builtins_dict = m ? Py_NewRef(PyModule_GetDict(m)) : NULL;
        Py_XDECREF(m);
        if (!builtins_dict) {
            PyErr_Clear();
            return false;
        }
    }
    PyObject *own = PyDict_GetItemWithError(builtins_dict, ((PyHeapTypeObject *) t)->ht_name);
    PyErr_Clear();
    return own == (PyObject *) t;
}

/* Whatever the profile: builtins, the snippet's own classes, and pyfence's exceptions (a
 * snippet may catch an InterpreterError and look at its type). */
static bool
module_always_allowed(PyTypeObject *t, const char *module)
{
    if (strcmp(module, "builtins") == 0)
        return is_builtins_own(t);
    return strcmp(module, "__main__") == 0 || strcmp(module, "pyfence") == 0;
}

/* t's module into buf, as type.__module__ would give it; false when t names none that fits
 * (a __module__ that is no str). A class made by type(name, bases, dict) takes its module
 * from the Python frame that makes it: made by the snippet, the run's __main__ frame
 * (main_frame.c), or, where none stands below the walk, no __module__: the snippet's. */
static bool
class_module(PyTypeObject *t, char *buf, size_t size)
{
    if (!(t->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
        const char *dot = strrchr(t->tp_name, '.');
        size_t len = dot ? (size_t) (dot - t->tp_name) : strlen("builtins");
        if (len >= size)
            return false;
        memcpy(buf, dot ? t->tp_name : "builtins", len);
        buf[len] = '\0';
        return true;
    }
    static PyObject *key;
    if (!key && !(key = PyUnicode_InternFromString("__module__")))
        return false;
    PyObject *m = PyDict_GetItemWithError(t->tp_dict, key);
    if (!m && !PyErr_Occurred()) {
        snprintf(buf, size, "__main__");
        return true;
    }
    Py_ssize_t len;
    const char *s = m && PyUnicode_Check(m) ? PyUnicode_AsUTF8AndSize(m, &len) : NULL;
    /* named after types by type.__new__ while a snippet ran: its maker's (class_maker.c) */
    const char *maker = s && strcmp(s, "types") == 0 ? exec_class_maker(t) : NULL;
    if (maker) {
        s = maker;
        len = (Py_ssize_t) strlen(maker);
    }
    if (!s || (size_t) len >= size) {
        PyErr_Clear();
        return false;
    }
    memcpy(buf, s, (size_t) len + 1);
    return true;
}

/* Refuses t unless its module is allowed; what names what was refused: "class" or a method
 * name. */
static int
check_class_module(struct exec_run *r, PyTypeObject *t, const char *method)
{
    char module[256];
    if (!class_module(t, module, sizeof(module))) {
        exec_fail(r, ABORT_NONE, "Forbidden access to class %s: its __module__ is no module name",
                  t->tp_name);
        return -1;
    }
    if (module_always_allowed(t, module) || exec_module_functions_allowed(r->env, module))
        return 0;
    PyObject *qualname = PyType_GetQualName(t);
    if (!qualname)
        return -1;
    if (method)
        exec_fail(r, ABORT_NONE, "Forbidden access to %s.%U.%s: module %s is not allowed", module,
                  qualname, method, module);
    else
        exec_fail(r, ABORT_NONE, "Forbidden access to class %s.%U: module %s is not allowed",
                  module, qualname, module);
    Py_DECREF(qualname);
    return -1;
}

bool
exec_class_module(PyTypeObject *t, char *buf, size_t size)
{
    return class_module(t, buf, size);
}

bool
exec_class_is_snippets(PyTypeObject *t)
{
    char module[16];
    return (t->tp_flags & Py_TPFLAGS_HEAPTYPE) && class_module(t, module, sizeof(module)) &&
           strcmp(module, "__main__") == 0;
}

int
exec_check_class_writable(struct exec_run *r, PyTypeObject *t, PyObject *name, const char *what)
{
    if (exec_class_is_snippets(t))
        return 0;
    char module[256];
    bool named = class_module(t, module, sizeof(module));
    PyObject *qualname = PyType_GetQualName(t);
    if (!qualname)
        return -1;
    exec_fail(r, ABORT_NONE,
              "Forbidden %s an attribute of class %s.%U: %U (only the snippet's own classes may "
              "be changed)",
              what, named ? module : "?", qualname, name);
    Py_DECREF(qualname);
    return -1;
}

/* A subclass of a class of a module that reads its caller's frames (policy.c) does what its base
 * does, from wherever it is defined: pandas' PyTablesScope is a Scope. */
static int
check_frame_reading_base(struct exec_run *r, PyTypeObject *t)
{
    PyObject *mro = t->tp_mro;
    for (Py_ssize_t i = 1; mro && i < PyTuple_GET_SIZE(mro); i++) {
        PyTypeObject *base = (PyTypeObject *) PyTuple_GET_ITEM(mro, i);
        char module[256];
        if (!class_module(base, module, sizeof(module)) || !exec_module_reads_caller_frames(module))
            continue;
        exec_fail(r, ABORT_NONE,
                  "Forbidden access to class %s: a subclass of %s, which hands out its caller's "
                  "frame's namespace",
                  t->tp_name, base->tp_name);
        return -1;
    }
    return 0;
}

int
exec_check_class_slow(struct exec_run *r, PyTypeObject *t)
{
    if (check_class_module(r, t, NULL) < 0)
        return -1;
    return check_frame_reading_base(r, t);
}

int
exec_check_c_method_slow(struct exec_run *r, PyTypeObject *owner, const char *name)
{
    return check_class_module(r, owner, name);
}

/* The class along t's MRO whose dictionary holds the descriptor ml was made from, or NULL. */
static PyTypeObject *
find_descriptor_owner(PyTypeObject *t, PyMethodDef *ml)
{
    PyObject *mro = t->tp_mro;
    if (!mro || !PyTuple_Check(mro))
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++) {
        PyTypeObject *base = (PyTypeObject *) PyTuple_GET_ITEM(mro, i);
        PyObject *d = base->tp_dict ? PyDict_GetItemString(base->tp_dict, ml->ml_name) : NULL;
        if (d && (Py_IS_TYPE(d, &PyMethodDescr_Type) || Py_IS_TYPE(d, &PyClassMethodDescr_Type)) &&
            ((PyMethodDescrObject *) d)->d_method == ml)
            return base;
    }
    return NULL;
}

/* Every class along t's MRO: for a C method whose defining class cannot be found, the
 * object's classes are all it can be one of. */
static int
check_whole_mro(struct exec_run *r, PyTypeObject *t, const char *method)
{
    PyObject *mro = t->tp_mro;
    if (!mro || !PyTuple_Check(mro))
        return exec_check_c_method(r, t, method);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); i++)
        if (exec_check_c_method(r, (PyTypeObject *) PyTuple_GET_ITEM(mro, i), method) < 0)
            return -1;
    return 0;
}

int
exec_check_bound_c_method(struct exec_run *r, PyObject *func)
{
    PyCFunctionObject *f = (PyCFunctionObject *) func;
    PyObject *self = f->m_self;
    const char *name = f->m_ml->ml_name;
    if (f->m_ml->ml_flags & METH_METHOD)
        return exec_check_c_method(r, ((PyCMethodObject *) f)->mm_class, name);
    /* a class's own classmethod (dict.fromkeys), else a method its metaclass defines
     * (int.mro) or an instance's */
    PyTypeObject *owner =
            PyType_Check(self) ? find_descriptor_owner((PyTypeObject *) self, f->m_ml) : NULL;
    if (!owner)
        owner = find_descriptor_owner(Py_TYPE(self), f->m_ml);
    if (owner)
        return exec_check_c_method(r, owner, name);
    return check_whole_mro(r, PyType_Check(self) ? (PyTypeObject *) self : Py_TYPE(self), name);
}

/* A C type's init whose only effect is the object's own contents, as its methods could fill
 * them: the containers and the exceptions (their args and fields). */
static bool
init_fills_contents_only(PyTypeObject *t)
{
    static const char *const collections_types[] = {"collections.deque", "collections.defaultdict",
                                                    "collections.OrderedDict"};
    if (t == &PyBaseObject_Type || t == &PyDict_Type || t == &PyList_Type || t == &PySet_Type ||
        t == &PyByteArray_Type || PyType_IsSubtype(t, (PyTypeObject *) PyExc_BaseException))
        return true;
    for (size_t i = 0; i < sizeof(collections_types) / sizeof(collections_types[0]); i++)
        if (!(t->tp_flags & Py_TPFLAGS_HEAPTYPE) && strcmp(t->tp_name, collections_types[i]) == 0)
            return true;
    return false;
}

static int
refuse_init(struct exec_run *r, PyTypeObject *owner, PyObject *self)
{
    if (self)
        exec_fail(r, ABORT_NONE,
                  "Forbidden: calling %s.__init__ again on a %s object the snippet did not make "
                  "(it would rewrite the object's state past every check)",
                  owner->tp_name, Py_TYPE(self)->tp_name);
    else
        exec_fail(r, ABORT_NONE,
                  "Forbidden access to %s.__init__ unbound (it would run again on any %s object; "
                  "a subclass's __init__ calls it as super().__init__(...))",
                  owner->tp_name, owner->tp_name);
    return -1;
}

/* __init__ is an allowed dunder, and on an object of a C type it is a slot wrapper that runs
 * the type's init again on an object that exists, writing its state past every store check:
 * module.__init__(json, 'os') renamed a library module (its __name__, __doc__, __spec__),
 * property.__init__ on the property in uuid.UUID's dict changed what every UUID answers,
 * FileIO.__init__ would reopen the worker's stdout on another path. So one is held only bound
 * to an object of the snippet's own class (super().__init__(...) in its __init__), or where
 * the init fills only the object's contents; unbound (property.__init__), it could be called
 * on any object of the class, C code calling it included. */
int
exec_check_slot_wrapper(struct exec_run *r, PyObject *v, PyObject *self)
{
    if (Py_IS_TYPE(v, &PyWrapperDescr_Type)) {
        PyWrapperDescrObject *d = (PyWrapperDescrObject *) v;
        if (strcmp(d->d_base->name, "__init__") != 0 || init_fills_contents_only(PyDescr_TYPE(v)) ||
            (self && exec_class_is_snippets(Py_TYPE(self))))
            return 0;
        return refuse_init(r, PyDescr_TYPE(v), self);
    }
    /* a method-wrapper: bound, to the object it says */
    PyObject *name = PyObject_GetAttrString(v, "__name__");
    PyObject *owner = PyObject_GetAttrString(v, "__objclass__");
    PyObject *bound = PyObject_GetAttrString(v, "__self__");
    int rc = -1;
    if (!name || !owner || !bound || !PyType_Check(owner))
        exec_fail(r, ABORT_NONE, "Forbidden: a method-wrapper that does not say what it wraps");
    else if (!PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, "__init__") != 0 ||
             init_fills_contents_only((PyTypeObject *) owner) ||
             exec_class_is_snippets(Py_TYPE(bound)))
        rc = 0;
    else
        rc = refuse_init(r, (PyTypeObject *) owner, bound);
    Py_XDECREF(name);
    Py_XDECREF(owner);
    Py_XDECREF(bound);
    return rc;
}

/* typing's class *name (an interned str, made on first use), cached in *cache once typing is
 * loaded. Found once, then kept: nothing rebinds typing's names (the snippet cannot store into
 * a module), and stores ask, so a missing typing costs one interned lookup. */
static PyTypeObject *
typing_class(const char *name, PyObject **key, PyTypeObject **cache)
{
    static PyObject *typing_name;
    if (*cache)
        return *cache;
    if (!typing_name && !(typing_name = PyUnicode_InternFromString("typing")))
        goto fail;
    if (!*key && !(*key = PyUnicode_InternFromString(name)))
        goto fail;
    PyObject *typing = PyDict_GetItemWithError(PyImport_GetModuleDict(), typing_name);
    PyObject *c = typing && PyModule_Check(typing)
                          ? PyDict_GetItemWithError(PyModule_GetDict(typing), *key)
                          : NULL;
    if (c && PyType_Check(c))
        *cache = (PyTypeObject *) Py_NewRef(c);
fail:
    PyErr_Clear();
    return *cache;
}

PyTypeObject *
exec_typing_final(void)
{
    static PyObject *key;
    static PyTypeObject *final;
    return typing_class("_Final", &key, &final);
}

bool
exec_is_typing_alias(PyObject *obj)
{
    static PyObject *key;
    static PyTypeObject *alias;
    PyTypeObject *t = typing_class("_BaseGenericAlias", &key, &alias);
    return t && PyObject_TypeCheck(obj, t);
}

/* typing's internal classes (typing._Final's subclasses: ForwardRef, TypeVar, the generic
 * aliases) refuse subclasses but for `_root=True`, a keyword meant for typing's own module
 * body. typing calls their methods with module namespaces and trusts what they answer:
 * get_type_hints calls t._evaluate(globalns, ...) on each ForwardRef, and a snippet's
 * ForwardRef with `_evaluate = collections.ChainMap` got the namespace of any module (chosen
 * by a class's __module__ or a function's __wrapped__) back in the hints. typing makes none of
 * them after its import, so no class made while a snippet runs may derive from one. */
int
exec_check_class_bases(struct exec_run *r, PyObject *bases, PyObject *clsname)
{
    PyTypeObject *final = exec_typing_final();
    if (!final || !PyTuple_Check(bases))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(bases); i++) {
        PyObject *base = PyTuple_GET_ITEM(bases, i);
        if (PyType_Check(base) && PyType_IsSubtype((PyTypeObject *) base, final)) {
            exec_fail(r, ABORT_NONE,
                      "Forbidden: class %V derives from typing.%s, one of typing's internal "
                      "classes (typing hands them module namespaces and trusts what they "
                      "answer); none is made while a snippet runs",
                      clsname && PyUnicode_Check(clsname) ? clsname : NULL, "?",
                      ((PyTypeObject *) base)->tp_name);
            return -1;
        }
    }
    return 0;
}
