/* Tagged JSON <-> Python values, the JSON -> Python half: how variables enter a worker. Every
 * refusal names the path of the offending value ("variables.x[2].re"). */
/* First: it brings Python.h, which precedes every system header. */
// clang-format off
#include "value_internal.h"
// clang-format on

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_quote.h"

/* ==== JSON -> Python ==== */

/* Where we are in the input, for messages like "value.items[2][0]: ...". */
struct path {
    char buf[256];
    size_t len;
};

/* A message cut to its buffer by vsnprintf may end inside a character: drop that partial
 * character, since a message that is not UTF-8 cannot be sent. */
static void
trim_partial_char(char *s, size_t len)
{
    size_t end = len;
    while (end > 0 && ((unsigned char) s[end - 1] & 0xC0) == 0x80)
        end--;
    if (end == 0)
        return;
    unsigned char lead = (unsigned char) s[end - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (len - (end - 1) < need)
        s[end - 1] = '\0';
}

static size_t path_push(struct path *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static size_t
path_push(struct path *p, const char *fmt, ...)
{
    size_t saved = p->len;
    if (p->len < sizeof(p->buf) - 1) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(p->buf + p->len, sizeof(p->buf) - p->len, fmt, ap);
        va_end(ap);
        if (n > 0)
            p->len =
                    p->len + (size_t) n < sizeof(p->buf) ? p->len + (size_t) n : sizeof(p->buf) - 1;
        trim_partial_char(p->buf, p->len);
        p->len = strlen(p->buf);
    }
    return saved;
}

static void
path_pop(struct path *p, size_t saved)
{
    p->len = saved;
    p->buf[saved] = '\0';
}

static PyObject *from_json(const cJSON *j, int depth, struct path *p, struct pf_error **err);

static PyObject *bad(struct path *p, struct pf_error **err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static PyObject *
bad(struct path *p, struct pf_error **err, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n >= (int) sizeof(msg))
        trim_partial_char(msg, sizeof(msg) - 1);
    pf_error_set(err, PF_E_BAD_REQUEST, "%s: %s", p->buf, msg);
    return NULL;
}

/* Turns a pending Python exception into a bad_request naming the place, e.g. a ValueError from
 * fromisoformat or a TypeError for an unhashable key. */
static PyObject *
bad_from_exception(struct path *p, struct pf_error **err, const char *what)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    _cleanup_pyobj_ PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *text = s ? PyUnicode_AsUTF8(s) : NULL;
    PyErr_Clear();
    const char *tname = type && PyType_Check(type) ? ((PyTypeObject *) type)->tp_name : "error";
    if (type && PyErr_GivenExceptionMatches(type, PyExc_MemoryError))
        pf_error_set(err, PF_E_MEMORY_LIMIT, "%s: out of memory", p->buf);
    else if (!text)
        bad(p, err, "%s: %s", what, tname);
    else /* Python's message repeats the client's value: quoted as any other echo of it */
        bad(p, err, "%s: %s: %.*s%s", what, tname, pf_quote_len(text), text,
            text[pf_quote_len(text)] ? "..." : "");
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return NULL;
}

/* Every field of a tagged object must be one the tag expects: a typo never passes silently. */
static int
check_fields(const cJSON *o, const char *tag, const char *const fields[4], struct path *p,
             struct pf_error **err)
{
    const cJSON *f;
    size_t seen = 0, n = 0;
    while (n < 4 && fields[n])
        n++;
    cJSON_ArrayForEach(f, o) {
        if (strcmp(f->string, "$type") == 0)
            continue;
        bool known = false;
        for (size_t i = 0; i < n; i++)
            known = known || strcmp(f->string, fields[i]) == 0;
        if (!known)
            return bad(p, err, "unknown field \"%.*s\" in a \"%s\" value", pf_quote_len(f->string),
                       f->string, tag),
                   -1;
        seen++;
    }
    for (size_t i = 0; i < n; i++)
        if (!cJSON_GetObjectItemCaseSensitive(o, fields[i]))
            return bad(p, err, "a \"%s\" value needs the field \"%s\"", tag, fields[i]), -1;
    if (seen != n)
        return bad(p, err, "duplicate field in a \"%s\" value", tag), -1;
    return 0;
}

static const char *
string_field(const cJSON *o, const char *name, const char *tag, struct path *p,
             struct pf_error **err)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsString(f) || !f->valuestring) {
        bad(p, err, "field \"%s\" of a \"%s\" value must be a string", name, tag);
        return NULL;
    }
    return f->valuestring;
}

/* CPython's default int_max_str_digits (sys.set_int_max_str_digits). Past it, decimal text is
 * refused with a hint to call that function, which a client cannot: we refuse first, saying
 * what the client can do instead (hex has no such limit, and is what we send such ints as). */
#define INT_MAX_DECIMAL_DIGITS 4300

static PyObject *
int_from_text(const char *s, struct path *p, struct pf_error **err)
{
    const char *digits = s + (*s == '-');
    bool hex = digits[0] == '0' && digits[1] == 'x';
    const char *d = hex ? digits + 2 : digits;
    const char *allowed = hex ? "0123456789abcdefABCDEF" : "0123456789";
    if (!*d || strspn(d, allowed) != strlen(d))
        return bad(p, err, "\"%.*s\" is not a decimal or 0x-hex integer", pf_quote_len(s), s);
    if (!hex && strlen(d) > INT_MAX_DECIMAL_DIGITS)
        return bad(p, err,
                   "an int of %zu decimal digits exceeds the limit of %d digits: send it in hex "
                   "(\"0x...\"), which has no such limit",
                   strlen(d), INT_MAX_DECIMAL_DIGITS);
    PyObject *v = PyLong_FromString(s, NULL, hex ? 16 : 10);
    return v ? v : bad_from_exception(p, err, "bad int");
}

static PyObject *
float_from_text(const char *s, struct path *p, struct pf_error **err)
{
    char *end = NULL;
    double v = PyOS_string_to_double(s, &end, NULL);
    if (v == -1.0 && PyErr_Occurred())
        return bad_from_exception(p, err, "bad float");
    if (!*s || !end || *end)
        return bad(p, err, "\"%.*s\" is not a float (a number, \"nan\", \"inf\" or \"-inf\")",
                   pf_quote_len(s), s);
    return PyFloat_FromDouble(v);
}

/* A plain number with an integral value is an int (integral floats come tagged); from ±2^53 on
 * a double no longer holds every integer, so the sender's digits may already be lost (the text
 * 9007199254740993 reads as 2^53): only ±(2^53 - 1) is sure to be exact. */
static PyObject *
number_from_json(const cJSON *j, struct path *p, struct pf_error **err)
{
    double v = j->valuedouble;
    if (!isfinite(v) || v != trunc(v))
        return PyFloat_FromDouble(v);
    if (fabs(v) <= (double) SAFE_INT_MAX)
        return PyLong_FromLongLong((long long) v);
    return bad(p, err,
               "the number %.17g is integral and beyond ±(2^53 - 1), so it may not be exact: send "
               "an int "
               "as {\"$type\": \"int\", \"value\": \"DIGITS\"} and a float as "
               "{\"$type\": \"float\", \"value\": \"%.17g\"}",
               v, v);
}

/* A raw node is what exec_value_to_json makes of an int past 10^15 or of a non-integral float
 * (never parsed from the wire): read by the same rule as a plain number, exactly. */
static PyObject *
raw_from_json(const cJSON *j, struct path *p, struct pf_error **err)
{
    const char *s = j->valuestring ? j->valuestring : "";
    if (strpbrk(s, ".eEnN"))
        return float_from_text(s, p, err);
    return int_from_text(s, p, err);
}

static PyObject *
items_from_json(const cJSON *items, bool pairs, int depth, struct path *p, struct pf_error **err)
{
    if (!cJSON_IsArray(items))
        return bad(p, err, "field \"items\" must be an array");
    _cleanup_pyobj_ PyObject *list = PyList_New(0);
    if (!list)
        return bad_from_exception(p, err, "items");
    const cJSON *it;
    int i = 0;
    cJSON_ArrayForEach(it, items) {
        size_t saved = path_push(p, ".items[%d]", i++);
        if (pairs && (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2))
            return bad(p, err, "a \"dict\" item must be a [key, value] array");
        _cleanup_pyobj_ PyObject *v = NULL;
        if (pairs) {
            _cleanup_pyobj_ PyObject *k = from_json(cJSON_GetArrayItem(it, 0), depth, p, err);
            _cleanup_pyobj_ PyObject *val =
                    k ? from_json(cJSON_GetArrayItem(it, 1), depth, p, err) : NULL;
            v = val ? PyTuple_Pack(2, k, val) : NULL;
            if (!v && val)
                return bad_from_exception(p, err, "items");
        } else {
            v = from_json(it, depth, p, err);
        }
        if (!v || PyList_Append(list, v) < 0)
            return v ? bad_from_exception(p, err, "items") : NULL;
        path_pop(p, saved);
    }
    return TAKE_PTR(list);
}

/* Each tagged form: its tag, its fields (all required, no others) and its reader. */
typedef PyObject *(*tag_reader)(const cJSON *o, const char *tag, int depth, struct path *p,
                                struct pf_error **err);

static PyObject *
scalar_from_tag(const cJSON *o, const char *tag, int depth, struct path *p, struct pf_error **err)
{
    const char *s = string_field(o, "value", tag, p, err);
    if (!s)
        return NULL;
    return tag[0] == 'i' ? int_from_text(s, p, err) : float_from_text(s, p, err);
}

static PyObject *
container_from_tag(const cJSON *o, const char *tag, int depth, struct path *p,
                   struct pf_error **err)
{
    bool is_dict = strcmp(tag, "dict") == 0;
    _cleanup_pyobj_ PyObject *items = items_from_json(cJSON_GetObjectItemCaseSensitive(o, "items"),
                                                      is_dict, depth + 1, p, err);
    if (!items)
        return NULL;
    PyObject *v = NULL;
    if (is_dict) {
        v = PyDict_New();
        for (Py_ssize_t i = 0; v && i < PyList_GET_SIZE(items); i++) {
            PyObject *pair = PyList_GET_ITEM(items, i);
            if (PyDict_SetItem(v, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1)) < 0)
                Py_CLEAR(v);
        }
    } else if (strcmp(tag, "tuple") == 0) {
        v = PyList_AsTuple(items);
    } else if (strcmp(tag, "set") == 0) {
        v = PySet_New(items);
    } else {
        v = PyFrozenSet_New(items);
    }
    return v ? v : bad_from_exception(p, err, "bad item");
}

static PyObject *
bytes_from_tag(const cJSON *o, const char *tag, int depth, struct path *p, struct pf_error **err)
{
    const char *b64 = string_field(o, "base64", tag, p, err);
    if (!b64)
        return NULL;
    _cleanup_pyobj_ PyObject *text = PyBytes_FromString(b64);
    _cleanup_pyobj_ PyObject *raw =
            text ? exec_value_binascii("a2b_base64", text, "strict_mode", Py_True) : NULL;
    if (!raw)
        return bad_from_exception(p, err, "field \"base64\" is not padded standard base64");
    PyObject *v = strcmp(tag, "bytes") == 0 ? Py_NewRef(raw) : PyByteArray_FromObject(raw);
    return v ? v : bad_from_exception(p, err, tag);
}

static PyObject *
datetime_from_tag(const cJSON *o, const char *tag, int depth, struct path *p, struct pf_error **err)
{
    const char *iso = string_field(o, "iso", tag, p, err);
    if (!iso)
        return NULL;
    PyTypeObject *t = strcmp(tag, "datetime") == 0 ? PyDateTimeAPI->DateTimeType
                      : strcmp(tag, "date") == 0   ? PyDateTimeAPI->DateType
                                                   : PyDateTimeAPI->TimeType;
    PyObject *v = PyObject_CallMethod((PyObject *) t, "fromisoformat", "s", iso);
    return v ? v : bad_from_exception(p, err, "bad iso");
}

static PyObject *
timedelta_from_tag(const cJSON *o, const char *tag, int depth, struct path *p,
                   struct pf_error **err)
{
    static const char *const fields[] = {"days", "seconds", "microseconds"};
    int v[3];
    for (int i = 0; i < 3; i++) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, fields[i]);
        double d = cJSON_IsNumber(f) ? f->valuedouble : NAN;
        if (!(d == floor(d) && fabs(d) <= 2147483647.0))
            return bad(p, err, "field \"%s\" of a \"timedelta\" value must be an int32", fields[i]);
        v[i] = (int) d;
    }
    PyObject *td = PyDelta_FromDSU(v[0], v[1], v[2]);
    return td ? td : bad_from_exception(p, err, "bad timedelta");
}

static PyObject *
complex_from_tag(const cJSON *o, const char *tag, int depth, struct path *p, struct pf_error **err)
{
    double part[2];
    for (int i = 0; i < 2; i++) {
        const char *name = i == 0 ? "real" : "imag";
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, name);
        size_t saved = path_push(p, ".%s", name);
        /* A part is a float whatever its value, so a plain number is read as one as it is. */
        if (cJSON_IsNumber(f)) {
            part[i] = f->valuedouble;
            path_pop(p, saved);
            continue;
        }
        _cleanup_pyobj_ PyObject *v =
                cJSON_IsRaw(f) || cJSON_IsObject(f) ? from_json(f, depth, p, err) : NULL;
        if (!v || !(PyFloat_CheckExact(v) || PyLong_CheckExact(v))) {
            Py_CLEAR(v);
            PyErr_Clear();
            return bad(p, err, "must be a number or a \"float\" value");
        }
        part[i] = PyFloat_AsDouble(v);
        path_pop(p, saved);
    }
    return PyComplex_FromDoubles(part[0], part[1]);
}

static const struct tag_rule {
    const char *tag;
    bool container; /* counts as a nesting level */
    const char *fields[4];
    tag_reader read;
} tag_rules[] = {
        {"int", false, {"value"}, scalar_from_tag},
        {"float", false, {"value"}, scalar_from_tag},
        {"dict", true, {"items"}, container_from_tag},
        {"tuple", true, {"items"}, container_from_tag},
        {"set", true, {"items"}, container_from_tag},
        {"frozenset", true, {"items"}, container_from_tag},
        {"bytes", false, {"base64"}, bytes_from_tag},
        {"bytearray", false, {"base64"}, bytes_from_tag},
        {"complex", false, {"real", "imag"}, complex_from_tag},
        {"datetime", false, {"iso"}, datetime_from_tag},
        {"date", false, {"iso"}, datetime_from_tag},
        {"time", false, {"iso"}, datetime_from_tag},
        {"timedelta", false, {"days", "seconds", "microseconds"}, timedelta_from_tag},
};

static const struct tag_rule *
find_tag_rule(const cJSON *type)
{
    if (!cJSON_IsString(type) || !type->valuestring)
        return NULL;
    for (size_t i = 0; i < PF_ELEMENTSOF(tag_rules); i++)
        if (strcmp(type->valuestring, tag_rules[i].tag) == 0)
            return &tag_rules[i];
    return NULL;
}

static PyObject *
tagged_from_json(const cJSON *o, const cJSON *type, int depth, struct path *p,
                 struct pf_error **err)
{
    const struct tag_rule *rule = find_tag_rule(type);
    if (!cJSON_IsString(type) || !type->valuestring)
        return bad(p, err, "\"$type\" must be a string");
    if (strcmp(type->valuestring, "repr") == 0)
        return bad(p, err,
                   "a \"repr\" value cannot be sent in: it only describes an object "
                   "that has no JSON form");
    if (!rule)
        return bad(p, err,
                   "unknown $type \"%.*s\" (expected int, float, dict, tuple, set, frozenset, "
                   "bytes, bytearray, complex, datetime, date, time or timedelta)",
                   pf_quote_len(type->valuestring), type->valuestring);
    if (check_fields(o, rule->tag, rule->fields, p, err) < 0)
        return NULL;
    if (rule->read == datetime_from_tag || rule->read == timedelta_from_tag)
        if (!datetime_api())
            return bad(p, err, "the datetime module is not available");
    return rule->read(o, rule->tag, depth, p, err);
}

static PyObject *
object_from_json(const cJSON *o, int depth, struct path *p, struct pf_error **err)
{
    _cleanup_pyobj_ PyObject *d = PyDict_New();
    if (!d)
        return bad_from_exception(p, err, "object");
    const cJSON *f;
    cJSON_ArrayForEach(f, o) {
        size_t saved = path_push(p, ".%.*s", pf_quote_len(f->string), f->string);
        _cleanup_pyobj_ PyObject *k = PyUnicode_DecodeUTF8(f->string, strlen(f->string), NULL);
        if (!k)
            return bad_from_exception(p, err, "key");
        if (PyDict_Contains(d, k))
            return bad(p, err, "duplicate key");
        _cleanup_pyobj_ PyObject *v = from_json(f, depth + 1, p, err);
        if (!v)
            return NULL;
        if (PyDict_SetItem(d, k, v) < 0)
            return bad_from_exception(p, err, "object");
        path_pop(p, saved);
    }
    return TAKE_PTR(d);
}

static PyObject *
array_from_json(const cJSON *j, int depth, struct path *p, struct pf_error **err)
{
    _cleanup_pyobj_ PyObject *list = PyList_New(0);
    if (!list)
        return bad_from_exception(p, err, "array");
    const cJSON *it;
    int i = 0;
    cJSON_ArrayForEach(it, j) {
        size_t saved = path_push(p, "[%d]", i++);
        _cleanup_pyobj_ PyObject *v = from_json(it, depth + 1, p, err);
        if (!v)
            return NULL;
        if (PyList_Append(list, v) < 0)
            return bad_from_exception(p, err, "array");
        path_pop(p, saved);
    }
    return TAKE_PTR(list);
}

static PyObject *
from_json(const cJSON *j, int depth, struct path *p, struct pf_error **err)
{
    if (!j)
        return bad(p, err, "missing value");
    if (cJSON_IsArray(j) || cJSON_IsObject(j)) {
        const cJSON *type = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "$type") : NULL;
        const struct tag_rule *rule = type ? find_tag_rule(type) : NULL;
        bool container = !type || (rule && rule->container);
        if (container && depth >= EXEC_VALUE_MAX_DEPTH)
            return bad(p, err, "nested deeper than %d levels", EXEC_VALUE_MAX_DEPTH);
        if (type)
            return tagged_from_json(j, type, depth, p, err);
    }
    switch (j->type & 0xff) {
    case cJSON_NULL:
        Py_RETURN_NONE;
    case cJSON_False:
        Py_RETURN_FALSE;
    case cJSON_True:
        Py_RETURN_TRUE;
    case cJSON_Number:
        return number_from_json(j, p, err);
    case cJSON_Raw:
        return raw_from_json(j, p, err);
    case cJSON_String: {
        const char *s = j->valuestring ? j->valuestring : "";
        PyObject *v = PyUnicode_DecodeUTF8(s, strlen(s), NULL);
        return v ? v : bad_from_exception(p, err, "string");
    }
    case cJSON_Array:
        return array_from_json(j, depth, p, err);
    case cJSON_Object:
        return object_from_json(j, depth, p, err);
    default:
        return bad(p, err, "not a JSON value (cJSON type %d)", j->type);
    }
}

PyObject *
exec_value_from_json(const cJSON *json, struct pf_error **err)
{
    struct path p = {.buf = "value", .len = 5};
    PyObject *v = from_json(json, 0, &p, err);
    if (!v)
        PyErr_Clear();
    return v;
}
