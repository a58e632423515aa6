/* Tagged JSON <-> Python values, the Python -> JSON half (value_parse.c is the other). See
 * value.h for the contract and proto/PROTOCOL.md "Values" for the wire form. */
/* First: it brings Python.h, which precedes every system header. */
// clang-format off
#include "value_internal.h"
// clang-format on

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PyObject *
exec_value_binascii(const char *name, PyObject *arg, const char *kw, PyObject *flag)
{
    static PyObject *mod;
    /* not PyImport_ImportModule: during a run it asks the run frame's __import__, which loads
     * only what C code called by the snippet may (main_frame.c) */
    if (!mod && !(mod = PyImport_ImportModuleLevel("binascii", NULL, NULL, NULL, 0)))
        return NULL;
    _cleanup_pyobj_ PyObject *fn = PyObject_GetAttrString(mod, name);
    _cleanup_pyobj_ PyObject *args = fn ? PyTuple_Pack(1, arg) : NULL;
    _cleanup_pyobj_ PyObject *kwargs = args ? Py_BuildValue("{sO}", kw, flag) : NULL;
    return kwargs ? PyObject_Call(fn, args, kwargs) : NULL;
}

/* ==== Python -> JSON ==== */

static cJSON *to_json(PyObject *obj, int depth_left);

/* "module.Qualname" of a type, read from the type's own slots so that no user code runs (a
 * metaclass may override attribute access). Returns a malloc'd string or NULL on OOM. */
static char *
type_name(PyTypeObject *t)
{
    char *ret = NULL;
    if (t->tp_flags & Py_TPFLAGS_HEAPTYPE) {
        const char *module = "?";
        PyObject *m = PyDict_GetItemString(t->tp_dict, "__module__"); /* borrowed */
        if (m && PyUnicode_Check(m)) {
            module = PyUnicode_AsUTF8(m);
            if (!module) {
                PyErr_Clear();
                module = "?";
            }
        }
        _cleanup_pyobj_ PyObject *q = PyType_GetQualName(t);
        const char *qual = q ? PyUnicode_AsUTF8(q) : NULL;
        if (!qual) {
            PyErr_Clear();
            qual = t->tp_name;
        }
        if (asprintf(&ret, "%s.%s", module, qual) < 0)
            return NULL;
        return ret;
    }
    /* Static types spell their module in tp_name ("datetime.datetime"); builtins do not. */
    if (strchr(t->tp_name, '.'))
        return strdup(t->tp_name);
    if (asprintf(&ret, "builtins.%s", t->tp_name) < 0)
        return NULL;
    return ret;
}

/* repr() text as UTF-8, never failing but for OOM: a raising __repr__ is replaced by a
 * placeholder naming the type and the exception, so one bad object cannot fail a reply. */
static char *
repr_text(PyObject *obj)
{
    char *ret = NULL;
    _cleanup_pyobj_ PyObject *r = PyObject_Repr(obj);
    if (!r) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        const char *exc = type && PyType_Check(type) ? ((PyTypeObject *) type)->tp_name : "?";
        int n = asprintf(&ret, "<%s object; repr() raised %s>", Py_TYPE(obj)->tp_name, exc);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return n < 0 ? NULL : ret;
    }
    /* A user __repr__ may return lone surrogates; escape them rather than fail. */
    _cleanup_pyobj_ PyObject *b = PyUnicode_AsEncodedString(r, "utf-8", "backslashreplace");
    if (!b) {
        PyErr_Clear();
        return NULL;
    }
    return strdup(PyBytes_AS_STRING(b));
}

static cJSON *
repr_node(PyObject *obj)
{
    _cleanup_free_ char *type = type_name(Py_TYPE(obj));
    _cleanup_free_ char *text = repr_text(obj);
    if (!type || !text)
        return NULL;
    _cleanup_json_ cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddStringToObject(o, "$type", "repr") ||
        !cJSON_AddStringToObject(o, "type", type) || !cJSON_AddStringToObject(o, "repr", text))
        return NULL;
    return TAKE_PTR(o);
}

/* Starts {"$type": tag}; the caller adds the payload fields. */
static cJSON *
tagged(const char *tag)
{
    cJSON *o = cJSON_CreateObject();
    if (o && !cJSON_AddStringToObject(o, "$type", tag))
        o = (cJSON_Delete(o), NULL);
    return o;
}

static cJSON *
tagged_string(const char *tag, const char *field, const char *value)
{
    _cleanup_json_ cJSON *o = tagged(tag);
    if (!o || !cJSON_AddStringToObject(o, field, value))
        return NULL;
    return TAKE_PTR(o);
}

/* A float whose type is known from its place (a part of a complex): a plain number, tagged only
 * when JSON has no spelling for it, or when a hop may lose it (-0.0 prints as "-0", which most
 * JSON readers, Python's included, take as the int 0). */
static cJSON *
float_part_node(double v)
{
    if (isnan(v))
        return tagged_string("float", "value", "nan");
    if (isinf(v))
        return tagged_string("float", "value", v > 0 ? "inf" : "-inf");
    if (v == 0 && signbit(v))
        return tagged_string("float", "value", "-0.0");
    /* Python's own repr: shortest round-trip digits, exact whatever prints the tree. */
    char *s = PyOS_double_to_string(v, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!s) {
        PyErr_Clear();
        return NULL;
    }
    cJSON *n = cJSON_CreateRaw(s);
    PyMem_Free(s);
    return n;
}

/* Every hop that parses JSON with cJSON (the daemon, a client's own parser) keeps a number as a
 * double and prints an integral one without '.', so 2.0 and -0.0 would arrive as the ints 2
 * and 0: integral floats travel tagged, and only non-integral ones as plain numbers. */
static cJSON *
float_node(double v)
{
    if (!isfinite(v) || v != trunc(v))
        return float_part_node(v);
    char *s = PyOS_double_to_string(v, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!s) {
        PyErr_Clear();
        return NULL;
    }
    cJSON *n = tagged_string("float", "value", s);
    PyMem_Free(s);
    return n;
}

static cJSON *
int_node(PyObject *obj)
{
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (!overflow && v >= -SAFE_INT_MAX && v <= SAFE_INT_MAX) {
        /* cJSON prints numbers with %.15g, which turns 10**15 into "1e+15": a float to most
         * JSON readers. Past that, print the digits ourselves. */
        if (v > -1000000000000000LL && v < 1000000000000000LL)
            return cJSON_CreateNumber((double) v);
        char digits[24];
        snprintf(digits, sizeof(digits), "%lld", v);
        return cJSON_CreateRaw(digits);
    }
    /* Decimal, unless the int is past CPython's int_max_str_digits guard: then hex, which that
     * guard does not cover and which exec_value_from_json reads back. */
    _cleanup_pyobj_ PyObject *s = PyObject_Str(obj);
    if (!s) {
        PyErr_Clear();
        s = PyNumber_ToBase(obj, 16);
        if (!s) {
            PyErr_Clear();
            return NULL;
        }
    }
    const char *text = PyUnicode_AsUTF8(s);
    if (!text) {
        PyErr_Clear();
        return NULL;
    }
    return tagged_string("int", "value", text);
}

/* UTF-8 of an exact str when cJSON can carry it (no NUL, no lone surrogate), else NULL. */
static const char *
str_utf8(PyObject *s)
{
    Py_ssize_t len;
    const char *u = PyUnicode_AsUTF8AndSize(s, &len);
    if (!u) {
        PyErr_Clear();
        return NULL;
    }
    return strlen(u) == (size_t) len ? u : NULL;
}

static cJSON *
bytes_node(PyObject *obj)
{
    _cleanup_pyobj_ PyObject *b64 = exec_value_binascii("b2a_base64", obj, "newline", Py_False);
    if (!b64) {
        PyErr_Clear();
        return NULL;
    }
    return tagged_string(PyBytes_CheckExact(obj) ? "bytes" : "bytearray", "base64",
                         PyBytes_AS_STRING(b64));
}

/* Appends the conversion of every item of a sequence snapshot. A list is re-read on each step
 * because a user __repr__ reached during conversion may shrink it. */
static int
add_items(cJSON *arr, PyObject *seq, int depth_left)
{
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        Py_INCREF(item);
        cJSON *j = to_json(item, depth_left);
        Py_DECREF(item);
        if (!j)
            return -1;
        cJSON_AddItemToArray(arr, j);
    }
    return 0;
}

static cJSON *
sequence_node(PyObject *obj, const char *tag, int depth_left)
{
    /* Sets are snapshotted into a list first: iterating the set itself while user code (a
     * repr) may mutate it would raise half-way. */
    _cleanup_pyobj_ PyObject *snap = NULL;
    PyObject *seq = obj;
    if (PyAnySet_CheckExact(obj)) {
        snap = PySequence_List(obj);
        if (!snap) {
            PyErr_Clear();
            return NULL;
        }
        seq = snap;
    }
    _cleanup_json_ cJSON *arr = cJSON_CreateArray();
    if (!arr || add_items(arr, seq, depth_left) < 0)
        return NULL;
    if (!tag)
        return TAKE_PTR(arr);
    _cleanup_json_ cJSON *o = tagged(tag);
    if (!o)
        return NULL;
    cJSON_AddItemToObject(o, "items", TAKE_PTR(arr));
    return TAKE_PTR(o);
}

static bool
dict_is_plain(PyObject *items)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *key = PyTuple_GET_ITEM(PyList_GET_ITEM(items, i), 0);
        if (!PyUnicode_CheckExact(key))
            return false;
        const char *k = str_utf8(key);
        if (!k || strcmp(k, "$type") == 0)
            return false;
    }
    return true;
}

static cJSON *
dict_node(PyObject *obj, int depth_left)
{
    /* A snapshot of (key, value) pairs holds references, so a value's __repr__ that mutates
     * the dict cannot pull items out from under us. */
    _cleanup_pyobj_ PyObject *items = PyDict_Items(obj);
    if (!items) {
        PyErr_Clear();
        return NULL;
    }
    if (dict_is_plain(items)) {
        _cleanup_json_ cJSON *o = cJSON_CreateObject();
        if (!o)
            return NULL;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
            PyObject *pair = PyList_GET_ITEM(items, i);
            cJSON *v = to_json(PyTuple_GET_ITEM(pair, 1), depth_left);
            if (!v)
                return NULL;
            cJSON_AddItemToObject(o, str_utf8(PyTuple_GET_ITEM(pair, 0)), v);
        }
        return TAKE_PTR(o);
    }
    _cleanup_json_ cJSON *arr = cJSON_CreateArray();
    if (!arr)
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        cJSON *pair = sequence_node(PyList_GET_ITEM(items, i), NULL, depth_left);
        if (!pair)
            return NULL;
        cJSON_AddItemToArray(arr, pair);
    }
    _cleanup_json_ cJSON *o = tagged("dict");
    if (!o)
        return NULL;
    cJSON_AddItemToObject(o, "items", TAKE_PTR(arr));
    return TAKE_PTR(o);
}

static cJSON *
complex_node(PyObject *obj)
{
    Py_complex c = PyComplex_AsCComplex(obj);
    _cleanup_json_ cJSON *o = tagged("complex");
    cJSON *re = float_part_node(c.real);
    cJSON *im = float_part_node(c.imag);
    if (!o || !re || !im) {
        cJSON_Delete(re);
        cJSON_Delete(im);
        return NULL;
    }
    cJSON_AddItemToObject(o, "real", re);
    cJSON_AddItemToObject(o, "imag", im);
    return TAKE_PTR(o);
}

/* datetime, date, time and timedelta; NULL with *handled false when obj is none of them. */
static cJSON *
datetime_node(PyObject *obj, bool *handled)
{
    *handled = false;
    if (!datetime_api())
        return NULL;
    const char *tag = PyDateTime_CheckExact(obj) ? "datetime"
                      : PyDate_CheckExact(obj)   ? "date"
                      : PyTime_CheckExact(obj)   ? "time"
                                                 : NULL;
    if (tag) {
        /* isoformat() may call a user tzinfo; if that raises, the value goes out as repr. */
        _cleanup_pyobj_ PyObject *iso = PyObject_CallMethod(obj, "isoformat", NULL);
        const char *s = iso && PyUnicode_Check(iso) ? str_utf8(iso) : NULL;
        if (!s) {
            PyErr_Clear();
            return NULL;
        }
        *handled = true;
        return tagged_string(tag, "iso", s);
    }
    if (!PyDelta_CheckExact(obj))
        return NULL;
    *handled = true;
    _cleanup_json_ cJSON *o = tagged("timedelta");
    if (!o || !cJSON_AddNumberToObject(o, "days", PyDateTime_DELTA_GET_DAYS(obj)) ||
        !cJSON_AddNumberToObject(o, "seconds", PyDateTime_DELTA_GET_SECONDS(obj)) ||
        !cJSON_AddNumberToObject(o, "microseconds", PyDateTime_DELTA_GET_MICROSECONDS(obj)))
        return NULL;
    return TAKE_PTR(o);
}

static cJSON *
to_json(PyObject *obj, int depth_left)
{
    if (obj == Py_None)
        return cJSON_CreateNull();
    if (PyBool_Check(obj)) /* before int: bool is an int subclass */
        return cJSON_CreateBool(obj == Py_True);
    if (PyLong_CheckExact(obj))
        return int_node(obj);
    if (PyFloat_CheckExact(obj))
        return float_node(PyFloat_AS_DOUBLE(obj));
    if (PyUnicode_CheckExact(obj)) {
        const char *s = str_utf8(obj);
        return s ? cJSON_CreateString(s) : repr_node(obj);
    }
    if (PyBytes_CheckExact(obj) || PyByteArray_CheckExact(obj))
        return bytes_node(obj);
    if (PyComplex_CheckExact(obj))
        return complex_node(obj);

    bool container = PyList_CheckExact(obj) || PyTuple_CheckExact(obj) ||
                     PyAnySet_CheckExact(obj) || PyDict_CheckExact(obj);
    if (container && depth_left <= 0)
        return repr_node(obj);
    if (PyList_CheckExact(obj))
        return sequence_node(obj, NULL, depth_left - 1);
    if (PyTuple_CheckExact(obj))
        return sequence_node(obj, "tuple", depth_left - 1);
    if (PySet_CheckExact(obj))
        return sequence_node(obj, "set", depth_left - 1);
    if (PyFrozenSet_CheckExact(obj))
        return sequence_node(obj, "frozenset", depth_left - 1);
    if (PyDict_CheckExact(obj))
        return dict_node(obj, depth_left - 1);

    bool handled;
    cJSON *dt = datetime_node(obj, &handled);
    if (handled)
        return dt;
    return repr_node(obj);
}

cJSON *
exec_value_to_json(PyObject *obj, int max_depth)
{
    /* An exception already pending would make the object protocol misbehave; it is not ours
     * to report, so keep it aside and put it back. */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    cJSON *j = to_json(obj, max_depth);
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    return j;
}

/* Each node adds at least 2 (its JSON and its repr take a byte each), so the walk ends after
 * about stop / 2 nodes whatever the value's shape. */
static void
size_floor(PyObject *obj, int depth_left, uint64_t stop, uint64_t *acc)
{
    if (*acc > stop)
        return;
    if (PyUnicode_CheckExact(obj)) {
        /* at least a byte per character in JSON, and in repr(), plus the quotes */
        *acc += 2 * ((uint64_t) PyUnicode_GET_LENGTH(obj) + 2);
        return;
    }
    if (PyBytes_CheckExact(obj) || PyByteArray_CheckExact(obj)) {
        uint64_t n = PyBytes_CheckExact(obj) ? (uint64_t) PyBytes_GET_SIZE(obj)
                                             : (uint64_t) PyByteArray_GET_SIZE(obj);
        *acc += 4 * ((n + 2) / 3) + n; /* base64 in JSON, and at least a byte each in repr() */
        return;
    }
    bool container = PyList_CheckExact(obj) || PyTuple_CheckExact(obj) ||
                     PyAnySet_CheckExact(obj) || PyDict_CheckExact(obj);
    *acc += container ? 4 : 2;
    if (!container || depth_left <= 0)
        return;
    if (PyList_CheckExact(obj) || PyTuple_CheckExact(obj)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
        PyObject **items = PySequence_Fast_ITEMS(obj);
        for (Py_ssize_t i = 0; i < n && *acc <= stop; i++)
            size_floor(items[i], depth_left - 1, stop, acc);
    } else if (PyDict_CheckExact(obj)) {
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (*acc <= stop && PyDict_Next(obj, &pos, &k, &v)) {
            size_floor(k, depth_left - 1, stop, acc);
            size_floor(v, depth_left - 1, stop, acc);
        }
    } else {
        Py_ssize_t pos = 0;
        PyObject *k;
        Py_hash_t hash;
        while (*acc <= stop && _PySet_NextEntry(obj, &pos, &k, &hash))
            size_floor(k, depth_left - 1, stop, acc);
    }
}

uint64_t
exec_value_size_floor(PyObject *obj, int max_depth, uint64_t stop)
{
    uint64_t acc = 0;
    size_floor(obj, max_depth, stop, &acc);
    return acc;
}
