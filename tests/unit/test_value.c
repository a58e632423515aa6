/* Tagged JSON <-> Python values (daemon/executor/value.c): the wire text of every tagged type,
 * round trips, and the refusals of exec_value_from_json. */
#include <Python.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
/* cmocka.h needs the four headers above first. */
#include <cmocka.h>

#include "json_write.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "pf_error.h"
#include "value.h"

static PyObject *globals;

/* Evaluates a Python expression in a namespace that has datetime and collections. */
static PyObject *
eval(const char *expr)
{
    PyObject *v = PyRun_String(expr, Py_eval_input, globals, globals);
    if (!v) {
        PyErr_Print();
        fail_msg("cannot evaluate %s", expr);
    }
    return v;
}

static char *
to_text(PyObject *obj, int max_depth)
{
    cJSON *j = exec_value_to_json(obj, max_depth);
    assert_non_null(j);
    assert_false(PyErr_Occurred());
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    assert_non_null(s);
    return s;
}

/* expr's value prints as `expected`, and reads back (from the in-memory tree, which keeps float
 * vs int) as an equal value of the same type. */
static void
check_round_trip(const char *expr, const char *expected)
{
    PyObject *v = eval(expr);
    _cleanup_free_ char *s = to_text(v, EXEC_VALUE_MAX_DEPTH);
    if (strcmp(s, expected) != 0)
        fail_msg("%s: got %s, expected %s", expr, s, expected);

    cJSON *j = exec_value_to_json(v, EXEC_VALUE_MAX_DEPTH);
    struct pf_error *err = NULL;
    PyObject *back = exec_value_from_json(j, &err);
    cJSON_Delete(j);
    if (!back)
        fail_msg("%s: read back failed: %s", expr, err->msg);
    assert_false(PyErr_Occurred());
    assert_ptr_equal(Py_TYPE(back), Py_TYPE(v));
    /* nan != nan: values holding one are compared by repr. */
    if (PyObject_RichCompareBool(back, v, Py_EQ) != 1) {
        PyObject *r1 = PyObject_Repr(v), *r2 = PyObject_Repr(back);
        if (PyObject_RichCompareBool(r1, r2, Py_EQ) != 1 || !strstr(PyUnicode_AsUTF8(r1), "nan"))
            fail_msg("%s: read back as something else", expr);
        Py_DECREF(r1);
        Py_DECREF(r2);
    }
    if (PyFloat_Check(v))
        assert_int_equal(signbit(PyFloat_AS_DOUBLE(v)), signbit(PyFloat_AS_DOUBLE(back)));
    Py_DECREF(back);
    Py_DECREF(v);

    /* The printed text parses back too (floats may come back as ints there: documented). */
    cJSON *parsed = cJSON_Parse(expected);
    assert_non_null(parsed);
    back = exec_value_from_json(parsed, &err);
    cJSON_Delete(parsed);
    if (!back)
        fail_msg("%s: printed form read back failed: %s", expr, err->msg);
    Py_DECREF(back);
}

static void
test_scalars(void **state)
{
    check_round_trip("None", "null");
    check_round_trip("True", "true");
    check_round_trip("False", "false");
    check_round_trip("0", "0");
    check_round_trip("42", "42");
    check_round_trip("-7", "-7");
    check_round_trip("'h\\u00e9llo \"q\"'", "\"h\xc3\xa9llo \\\"q\\\"\"");
    check_round_trip("''", "\"\"");
}

static void
test_int_edges(void **state)
{
    check_round_trip("2**53 - 1", "9007199254740991");
    check_round_trip("-2**53 + 1", "-9007199254740991");
    /* 2^53 goes tagged: read back as a plain number it could not be told from 2^53 + 1. */
    check_round_trip("2**53", "{\"$type\":\"int\",\"value\":\"9007199254740992\"}");
    check_round_trip("-2**53", "{\"$type\":\"int\",\"value\":\"-9007199254740992\"}");
    check_round_trip("2**53 + 1", "{\"$type\":\"int\",\"value\":\"9007199254740993\"}");
    check_round_trip("-2**53 - 1", "{\"$type\":\"int\",\"value\":\"-9007199254740993\"}");
    check_round_trip("10**15", "1000000000000000");
    check_round_trip("-10**15 + 1", "-999999999999999");
    check_round_trip("2**200", "{\"$type\":\"int\",\"value\":\"16069380442589902755419620923411626"
                               "02522202993782792835301376\"}");
    /* Past CPython's int_max_str_digits guard decimal is refused; the value goes out as hex. */
    PyObject *big = eval("10**5000");
    _cleanup_free_ char *s = to_text(big, 8);
    assert_non_null(strstr(s, "\"value\":\"0x"));
    cJSON *j = exec_value_to_json(big, 8);
    struct pf_error *err = NULL;
    PyObject *back = exec_value_from_json(j, &err);
    cJSON_Delete(j);
    assert_non_null(back);
    assert_int_equal(PyObject_RichCompareBool(back, big, Py_EQ), 1);
    Py_DECREF(back);
    Py_DECREF(big);
}

static void
test_float_edges(void **state)
{
    /* Non-integral finite floats are plain numbers; integral ones (and -0.0) are tagged, since
     * a hop that parses numbers as doubles would print them back as ints. */
    check_round_trip("1.5", "1.5");
    check_round_trip("0.1", "0.1");
    check_round_trip("0.1 + 0.2", "0.30000000000000004");
    check_round_trip("1e-05", "1e-05");
    check_round_trip("5e-324", "5e-324");
    check_round_trip("-2.5e-300", "-2.5e-300");
    check_round_trip("2.0**51 + 0.5", "2251799813685248.5");
    check_round_trip("1.0", "{\"$type\":\"float\",\"value\":\"1.0\"}");
    check_round_trip("-0.0", "{\"$type\":\"float\",\"value\":\"-0.0\"}");
    check_round_trip("0.0", "{\"$type\":\"float\",\"value\":\"0.0\"}");
    check_round_trip("1e16", "{\"$type\":\"float\",\"value\":\"1e+16\"}");
    check_round_trip("1e100", "{\"$type\":\"float\",\"value\":\"1e+100\"}");
    check_round_trip("2.0**53", "{\"$type\":\"float\",\"value\":\"9007199254740992.0\"}");
    check_round_trip("-1.7976931348623157e308",
                     "{\"$type\":\"float\",\"value\":\"-1.7976931348623157e+308\"}");
    check_round_trip("float('nan')", "{\"$type\":\"float\",\"value\":\"nan\"}");
    check_round_trip("float('inf')", "{\"$type\":\"float\",\"value\":\"inf\"}");
    check_round_trip("-float('inf')", "{\"$type\":\"float\",\"value\":\"-inf\"}");
    /* A complex's parts are floats by position: plain numbers, tagged only when not finite. */
    check_round_trip("1+2j", "{\"$type\":\"complex\",\"real\":1.0,\"imag\":2.0}");
    check_round_trip("complex(float('nan'), -0.0)",
                     "{\"$type\":\"complex\",\"real\":{\"$type\":\"float\",\"value\":\"nan\"},"
                     "\"imag\":{\"$type\":\"float\",\"value\":\"-0.0\"}}");
    check_round_trip("complex(1e300, 0.5)", "{\"$type\":\"complex\",\"real\":1e+300,\"imag\":0.5}");
}

/* The hop that matters: pyfenced parses a worker's frame with cJSON (numbers become doubles)
 * and writes the reply with json_write, which prints integral doubles without a '.'; variables
 * take the same path inwards. Every float must come out of that with its type and sign. */
static void
check_through_parser(const char *expr)
{
    PyObject *v = eval(expr);
    _cleanup_free_ char *s = to_text(v, EXEC_VALUE_MAX_DEPTH);
    cJSON *parsed = cJSON_Parse(s);
    assert_non_null(parsed);
    struct pf_error *err = NULL;
    _cleanup_free_ char *hop = NULL;
    size_t hop_len;
    assert_int_equal(json_write(parsed, 0, 1 << 20, &hop, &hop_len, &err), 0);
    cJSON_Delete(parsed);
    parsed = cJSON_Parse(hop);
    assert_non_null(parsed);
    PyObject *back = exec_value_from_json(parsed, &err);
    cJSON_Delete(parsed);
    if (!back)
        fail_msg("%s (%s): read back failed: %s", expr, hop, err->msg);
    PyObject *r1 = PyObject_Repr(v), *r2 = PyObject_Repr(back);
    if (PyObject_RichCompareBool(r1, r2, Py_EQ) != 1)
        fail_msg("%s: came back as %s through %s", expr, PyUnicode_AsUTF8(r2), hop);
    Py_DECREF(r1);
    Py_DECREF(r2);
    Py_DECREF(back);
    Py_DECREF(v);
}

static void
test_float_through_parser(void **state)
{
    check_through_parser("[1.0, -0.0, 1e16, 0.5, 2, complex(-0.0, -0.0), 10**20, float('-inf')]");
    check_through_parser("{'a': (0.0, 3.0e300, 0.30000000000000004), 'b': {1.0: -7.0}}");
}

static void
test_containers(void **state)
{
    check_round_trip("[]", "[]");
    check_round_trip("[1, [2, [3, 'x']], None]", "[1,[2,[3,\"x\"]],null]");
    check_round_trip("{'a': 1, 'b': [True]}", "{\"a\":1,\"b\":[true]}");
    check_round_trip("{}", "{}");
    check_round_trip("()", "{\"$type\":\"tuple\",\"items\":[]}");
    check_round_trip(
            "(1, 'a', (2,))",
            "{\"$type\":\"tuple\",\"items\":[1,\"a\",{\"$type\":\"tuple\",\"items\":[2]}]}");
    check_round_trip("{3}", "{\"$type\":\"set\",\"items\":[3]}");
    check_round_trip("set()", "{\"$type\":\"set\",\"items\":[]}");
    check_round_trip("frozenset({'z'})", "{\"$type\":\"frozenset\",\"items\":[\"z\"]}");
}

static void
test_dict_keys(void **state)
{
    check_round_trip("{1: 'a'}", "{\"$type\":\"dict\",\"items\":[[1,\"a\"]]}");
    check_round_trip("{'a': 1, 2: 3}", "{\"$type\":\"dict\",\"items\":[[\"a\",1],[2,3]]}");
    /* A "$type" key would make a plain object look tagged: the tagged form is forced. */
    check_round_trip("{'$type': 'int'}", "{\"$type\":\"dict\",\"items\":[[\"$type\",\"int\"]]}");
    check_round_trip("{(1, 2): [1]}", "{\"$type\":\"dict\",\"items\":[[{\"$type\":\"tuple\","
                                      "\"items\":[1,2]},[1]]]}");
    check_round_trip("{None: 1, 1.5: 2}", "{\"$type\":\"dict\",\"items\":[[null,1],[1.5,2]]}");
}

static void
test_bytes(void **state)
{
    check_round_trip("b''", "{\"$type\":\"bytes\",\"base64\":\"\"}");
    check_round_trip("b'\\x00\\xff'", "{\"$type\":\"bytes\",\"base64\":\"AP8=\"}");
    check_round_trip("b'a'", "{\"$type\":\"bytes\",\"base64\":\"YQ==\"}");
    check_round_trip("b'abc'", "{\"$type\":\"bytes\",\"base64\":\"YWJj\"}");
    check_round_trip("bytearray(b'abcd')", "{\"$type\":\"bytearray\",\"base64\":\"YWJjZA==\"}");
    check_round_trip("bytearray()", "{\"$type\":\"bytearray\",\"base64\":\"\"}");
    check_round_trip(
            "bytes(range(256))",
            "{\"$type\":\"bytes\",\"base64\":\"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g"
            "ISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWl"
            "tcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SV"
            "lpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9"
            "DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w==\"}");
}

static void
test_datetime(void **state)
{
    check_round_trip("datetime.datetime(2024, 1, 2, 3, 4, 5, 6)",
                     "{\"$type\":\"datetime\",\"iso\":\"2024-01-02T03:04:05.000006\"}");
    check_round_trip("datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone("
                     "datetime.timedelta(hours=-5)))",
                     "{\"$type\":\"datetime\",\"iso\":\"2024-01-02T00:00:00-05:00\"}");
    check_round_trip("datetime.date(1999, 12, 31)", "{\"$type\":\"date\",\"iso\":\"1999-12-31\"}");
    check_round_trip("datetime.time(23, 59)", "{\"$type\":\"time\",\"iso\":\"23:59:00\"}");
    check_round_trip("datetime.timedelta(days=-1, seconds=5, microseconds=7)",
                     "{\"$type\":\"timedelta\",\"days\":-1,\"seconds\":5,\"microseconds\":7}");
}

/* Reads a repr node's fields, failing when obj was not sent as repr. */
static void
check_repr(PyObject *obj, const char *type, const char *repr_prefix)
{
    cJSON *j = exec_value_to_json(obj, EXEC_VALUE_MAX_DEPTH);
    assert_non_null(j);
    assert_false(PyErr_Occurred());
    assert_string_equal(cJSON_GetObjectItem(j, "$type")->valuestring, "repr");
    assert_string_equal(cJSON_GetObjectItem(j, "type")->valuestring, type);
    const char *r = cJSON_GetObjectItem(j, "repr")->valuestring;
    if (strncmp(r, repr_prefix, strlen(repr_prefix)) != 0)
        fail_msg("repr %s does not start with %s", r, repr_prefix);
    assert_int_equal(cJSON_GetArraySize(j), 3);
    cJSON_Delete(j);
}

static void
test_repr_fallbacks(void **state)
{
    PyObject *v = eval("object()");
    check_repr(v, "builtins.object", "<object object at 0x");
    Py_DECREF(v);
    v = eval("collections.Counter('aab')");
    check_repr(v, "collections.Counter", "Counter({'a': 2, 'b': 1})");
    Py_DECREF(v);
    v = eval("collections.OrderedDict(a=1)");
    check_repr(v, "collections.OrderedDict", "OrderedDict([('a', 1)])");
    Py_DECREF(v);
    v = eval("'a\\x00b'");
    check_repr(v, "builtins.str", "'a\\x00b'");
    Py_DECREF(v);
    v = eval("'\\ud800'");
    check_repr(v, "builtins.str", "'\\ud800'");
    Py_DECREF(v);
    v = eval("len");
    check_repr(v, "builtins.builtin_function_or_method", "<built-in function len>");
    Py_DECREF(v);
    v = eval("Point(1, 2)");
    check_repr(v, "__main__.Point", "Point(x=1, y=2)");
    Py_DECREF(v);
    v = eval("Outer.Inner()");
    check_repr(v, "__main__.Outer.Inner", "<inner>");
    Py_DECREF(v);
    /* A repr that raises is replaced by a placeholder; no exception escapes. */
    v = eval("Bad()");
    check_repr(v, "__main__.Bad", "<Bad object; repr() raised ZeroDivisionError>");
    Py_DECREF(v);
    /* A str key that cJSON cannot carry forces the tagged dict form, key sent as repr. */
    v = eval("{'a\\x00': 1}");
    _cleanup_free_ char *s = to_text(v, 4);
    assert_string_equal(s, "{\"$type\":\"dict\",\"items\":[[{\"$type\":\"repr\",\"type\":"
                           "\"builtins.str\",\"repr\":\"'a\\\\x00'\"},1]]}");
    Py_DECREF(v);
}

static void
test_depth(void **state)
{
    /* 70 nested lists: the 65th level onwards becomes one repr. */
    PyObject *v = eval("nest(70)");
    cJSON *j = exec_value_to_json(v, 64);
    assert_non_null(j);
    const cJSON *cur = j;
    for (int level = 1; level <= 64; level++) {
        assert_true(cJSON_IsArray(cur));
        cur = cJSON_GetArrayItem(cur, 0);
    }
    assert_string_equal(cJSON_GetObjectItem(cur, "$type")->valuestring, "repr");
    assert_string_equal(cJSON_GetObjectItem(cur, "repr")->valuestring,
                        "[[[[[[]]]]]]" /* levels 65..70 */);
    cJSON_Delete(j);
    Py_DECREF(v);

    /* A self-referencing list stops at max_depth too. */
    v = eval("selfref()");
    _cleanup_free_ char *s = to_text(v, 2);
    assert_string_equal(s, "[1,[1,{\"$type\":\"repr\",\"type\":\"builtins.list\",\"repr\":"
                           "\"[1, [...]]\"}]]");
    Py_DECREF(v);

    /* A user repr that mutates the list being converted cannot crash us. */
    v = eval("shrinking()");
    _cleanup_free_ char *s2 = to_text(v, 4);
    assert_non_null(s2);
    Py_DECREF(v);

    /* max_depth 0: even the top-level container is a repr; scalars are unaffected. */
    v = eval("[1]");
    _cleanup_free_ char *s3 = to_text(v, 0);
    assert_string_equal(s3, "{\"$type\":\"repr\",\"type\":\"builtins.list\",\"repr\":\"[1]\"}");
    Py_DECREF(v);
}

static char *
nested_arrays(int n)
{
    char *s = malloc(2 * (size_t) n + 1);
    assert_non_null(s);
    memset(s, '[', (size_t) n);
    memset(s + n, ']', (size_t) n);
    s[2 * n] = '\0';
    return s;
}

/* Parses text, which must be refused with a message containing `needle`. */
static void
check_refused(const char *text, const char *needle)
{
    cJSON *j = cJSON_Parse(text);
    if (!j)
        fail_msg("test input is not JSON: %s", text);
    struct pf_error *err = NULL;
    PyObject *v = exec_value_from_json(j, &err);
    cJSON_Delete(j);
    if (v)
        fail_msg("%s was accepted", text);
    assert_false(PyErr_Occurred());
    assert_non_null(err);
    assert_int_equal(err->code, PF_E_BAD_REQUEST);
    if (!strstr(err->msg, needle))
        fail_msg("%s: message \"%s\" lacks \"%s\"", text, err->msg, needle);
    pf_error_free(err);
}

/* Past 4300 decimal digits CPython asks the caller to raise sys.set_int_max_str_digits(), which
 * a client cannot: the message gives the limit and what to send instead. */
static void
test_int_digit_limit(void)
{
    char text[5200];
    int n = snprintf(text, sizeof(text), "{\"$type\":\"int\",\"value\":\"-");
    memset(text + n, '9', 5000);
    strcpy(text + n + 5000, "\"}");
    check_refused(text, "value: an int of 5000 decimal digits exceeds the limit of 4300 digits: "
                        "send it in hex");
    cJSON *j = cJSON_Parse(text);
    struct pf_error *err = NULL;
    assert_null(exec_value_from_json(j, &err));
    assert_null(strstr(err->msg, "set_int_max_str_digits"));
    pf_error_free(err);
    cJSON_Delete(j);
    text[n + 4300] = '\0'; /* exactly 4300 digits: still read */
    strcat(text, "\"}");
    j = cJSON_Parse(text);
    PyObject *v = exec_value_from_json(j, &err);
    assert_non_null(v);
    Py_DECREF(v);
    cJSON_Delete(j);
}

static void
test_refusals(void **state)
{
    check_refused("{\"$type\":\"nope\"}", "value: unknown $type \"nope\"");
    check_refused("{\"$type\":3}", "\"$type\" must be a string");
    check_refused("{\"$type\":\"repr\",\"type\":\"builtins.object\",\"repr\":\"x\"}",
                  "\"repr\" value cannot be sent in");
    check_refused("{\"$type\":\"tuple\"}", "needs the field \"items\"");
    check_refused("{\"$type\":\"tuple\",\"items\":[],\"extra\":1}", "unknown field \"extra\"");
    check_refused("{\"$type\":\"tuple\",\"items\":{}}", "\"items\" must be an array");
    check_refused("{\"$type\":\"int\",\"value\":12}", "\"value\" of a \"int\" value must be a");
    check_refused("{\"$type\":\"int\",\"value\":\"12a\"}", "not a decimal or 0x-hex integer");
    check_refused("{\"$type\":\"int\",\"value\":\"\"}", "not a decimal");
    check_refused("{\"$type\":\"int\",\"value\":\"-\"}", "not a decimal");
    check_refused("{\"$type\":\"int\",\"value\":\" 1\"}", "not a decimal");
    test_int_digit_limit();
    check_refused("{\"$type\":\"float\",\"value\":\"abc\"}", "value: bad float");
    check_refused("{\"$type\":\"float\",\"value\":\"1.5x\"}", "is not a float");
    check_refused("{\"$type\":\"bytes\",\"base64\":\"abc\"}", "not padded standard base64");
    check_refused("{\"$type\":\"bytes\",\"base64\":\"ab=c\"}", "base64");

    check_refused("{\"$type\":\"bytes\",\"base64\":\"YQ==YQ==\"}", "base64");
    check_refused("{\"$type\":\"bytes\",\"base64\":\"Y Q=\"}", "base64");
    check_refused("{\"$type\":\"dict\",\"items\":[[[1],2]]}", "unhashable");
    check_refused("{\"$type\":\"dict\",\"items\":[[1]]}", "[key, value] array");
    check_refused("{\"$type\":\"dict\",\"items\":[{\"a\":1,\"b\":2}]}", "[key, value] array");
    check_refused("{\"$type\":\"set\",\"items\":[{}]}",
                  "value: bad item: TypeError: unhashable type: 'dict'");
    check_refused("{\"$type\":\"date\",\"iso\":\"2024-13-01\"}", "bad iso: ValueError");
    check_refused("{\"$type\":\"timedelta\",\"days\":1.5,\"seconds\":0,\"microseconds\":0}",
                  "\"days\" of a \"timedelta\" value must be an int32");
    check_refused("{\"$type\":\"timedelta\",\"days\":1000000000,\"seconds\":0,\"microseconds\":0}",
                  "bad timedelta: OverflowError");
    check_refused("{\"$type\":\"complex\",\"real\":\"1\",\"imag\":0}", "value.real: must be");
    check_refused("{\"a\":[1,{\"$type\":\"nope\"}]}", "value.a[1]: unknown $type");
    check_refused("[0,{\"$type\":\"tuple\",\"items\":[{\"$type\":\"repr\"}]}]",
                  "value[1].items[0]: a \"repr\" value");
}

/* A client's keys are echoed cut to 64 bytes, and however the path is cut the message stays
 * UTF-8 (it could not be sent otherwise). */
static void
test_refusals_cut_long_keys(void **state)
{
    (void) state;
    size_t n = 1000, len = 0;
    char *text = malloc(8 * (n * 2 + 8) + n + 64);
    assert_non_null(text);
    for (int level = 0; level < 8; level++) {
        len += (size_t) sprintf(text + len, "{\"");
        for (size_t i = 0; i < n; i++, len += 2)
            memcpy(text + len, "\xc3\xa9", 2);
        len += (size_t) sprintf(text + len, "\":");
    }
    len += (size_t) sprintf(text + len, "{\"$type\":\"tuple\",\"items\":[],\"");
    memset(text + len, 'z', n);
    len += n;
    strcpy(text + len, "\":1}}}}}}}}}");
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    struct pf_error *err = NULL;
    PyObject *v = exec_value_from_json(j, &err);
    cJSON_Delete(j);
    assert_null(v);
    PyErr_Clear();
    assert_non_null(err);
    assert_int_equal(err->code, PF_E_BAD_REQUEST);
    assert_true(strlen(err->msg) < 600);
    assert_true(msg_utf8_valid(err->msg, strlen(err->msg), NULL));
    assert_non_null(strstr(err->msg,
                           "unknown field \"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
                           "zzzzzzzzzzzzzzzz\" in a \"tuple\" value"));
    pf_error_free(err);
}

static void
test_input_forms(void **state)
{
    /* Tagged floats force a float even for integral text; plain integral numbers are ints
     * (3.0 and -0 included: JSON parsers keep no difference), others floats. */
    cJSON *j = cJSON_Parse("[{\"$type\":\"float\",\"value\":\"1\"},3.0,2.5,-0,1e15,"
                           "9007199254740991,{\"$type\":\"float\",\"value\":\"1e300\"},"
                           "{\"$type\":\"int\",\"value\":\"-0x1F\"}]");
    struct pf_error *err = NULL;
    PyObject *v = exec_value_from_json(j, &err);
    cJSON_Delete(j);
    assert_non_null(v);
    PyObject *expected = eval("[1.0, 3, 2.5, 0, 10**15, 2**53 - 1, 1e300, -31]");
    assert_int_equal(PyObject_RichCompareBool(v, expected, Py_EQ), 1);
    assert_true(PyFloat_CheckExact(PyList_GET_ITEM(v, 0)));
    for (int i = 1; i <= 5; i++)
        assert_true(i == 2 ? PyFloat_CheckExact(PyList_GET_ITEM(v, i))
                           : PyLong_CheckExact(PyList_GET_ITEM(v, i)));
    Py_DECREF(expected);
    Py_DECREF(v);
    /* An integral number past ±2^53 may have lost digits already: refused, saying what to send. */
    check_refused("[1e300]", "value[0]: the number 1.0000000000000001e+300 is integral and beyond");
    check_refused("{\"n\":-9007199254740994}", "send an int as {\"$type\": \"int\"");
    /* 9007199254740993 reads as the double 2^53: refused rather than rounded. */
    check_refused("[9007199254740993]", "value[0]: the number 9007199254740992 is integral");
    check_refused("[-9007199254740992]", "value[0]: the number -9007199254740992 is integral");
}

static void
test_input_depth(void **state)
{
    _cleanup_free_ char *ok = nested_arrays(EXEC_VALUE_MAX_DEPTH);
    cJSON *j = cJSON_Parse(ok);
    struct pf_error *err = NULL;
    PyObject *v = exec_value_from_json(j, &err);
    cJSON_Delete(j);
    assert_non_null(v);
    Py_DECREF(v);

    _cleanup_free_ char *deep = nested_arrays(EXEC_VALUE_MAX_DEPTH + 1);
    check_refused(deep, "nested deeper than 64 levels");
    /* Tagged containers count as levels too. */
    char buf[4096] = "";
    for (int i = 0; i < EXEC_VALUE_MAX_DEPTH + 1; i++)
        strcat(buf, "{\"$type\":\"tuple\",\"items\":[");
    for (int i = 0; i < EXEC_VALUE_MAX_DEPTH + 1; i++)
        strcat(buf, "]}");
    check_refused(buf, "nested deeper than 64 levels");
}

static void
test_pending_exception_kept(void **state)
{
    /* A caller's pending exception is neither lost nor confused with ours. */
    PyErr_SetString(PyExc_KeyError, "mine");
    PyObject *v = PyLong_FromLong(5);
    cJSON *j = exec_value_to_json(v, 4);
    assert_non_null(j);
    assert_true(PyErr_ExceptionMatches(PyExc_KeyError));
    PyErr_Clear();
    cJSON_Delete(j);
    Py_DECREF(v);
}

static const char setup_code[] =
        "import datetime, collections\n"
        "Point = collections.namedtuple('Point', 'x y')\n"
        "class Outer:\n"
        "    class Inner:\n"
        "        def __repr__(self): return '<inner>'\n"
        "class Bad:\n"
        "    def __repr__(self): return 1 // 0\n"
        "def nest(n):\n"
        "    v = []\n"
        "    for _ in range(n - 1): v = [v]\n"
        "    return v\n"
        "def selfref():\n"
        "    l = [1]; l.append(l); return l\n"
        "class Shrink:\n"
        "    def __init__(self, l): self.l = l\n"
        "    def __repr__(self): self.l.clear(); return 'gone'\n"
        "def shrinking():\n"
        "    l = [0]; l.append(Shrink(l)); l.extend(range(50)); return l\n";

int
main(void)
{
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    PyStatus st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) {
        fprintf(stderr, "cannot start embedded Python: %s\n", st.err_msg ? st.err_msg : "?");
        return 1;
    }
    PyObject *main_mod = PyImport_AddModule("__main__");
    globals = PyModule_GetDict(main_mod);
    PyObject *r = PyRun_String(setup_code, Py_file_input, globals, globals);
    if (!r) {
        PyErr_Print();
        return 1;
    }
    Py_DECREF(r);

    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_scalars),
            cmocka_unit_test(test_int_edges),
            cmocka_unit_test(test_float_edges),
            cmocka_unit_test(test_float_through_parser),
            cmocka_unit_test(test_containers),
            cmocka_unit_test(test_dict_keys),
            cmocka_unit_test(test_bytes),
            cmocka_unit_test(test_datetime),
            cmocka_unit_test(test_repr_fallbacks),
            cmocka_unit_test(test_depth),
            cmocka_unit_test(test_refusals),
            cmocka_unit_test(test_refusals_cut_long_keys),
            cmocka_unit_test(test_input_forms),
            cmocka_unit_test(test_input_depth),
            cmocka_unit_test(test_pending_exception_kept),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    Py_FinalizeEx();
    return failed;
}
