/* The executor's walk: each node kind gives CPython's value, and the result object's fields. */
#include "test_exec_util.h"

static void
test_constants_and_operators(void **state)
{
    (void) state;
    assert_eval("1 + 2 * 3", "7");
    assert_eval("2 ** 100", "1267650600228229401496703205376");
    assert_eval("7 // 2, 7 % 3, 7 / 2, -7 // 2", "(3, 1, 3.5, -4)");
    assert_eval("1 << 4 | 1, 6 & 3, 6 ^ 3, ~5, -(3), +4", "(17, 2, 5, -6, -3, 4)");
    assert_eval("'ab' * 2 + 'c'", "'ababc'");
    assert_eval("not 0, not 'x'", "(True, False)");
    assert_eval("1 < 2 < 3, 1 < 3 < 2, 1 == 1.0 != 2", "(True, False, True)");
    assert_eval("x = None\nx is None, x is not None, 2 in [1, 2], 3 not in (1, 2)",
                "(True, False, True, True)");
    assert_eval("0 or '' or 'z', 1 and 2 and 0, 1 or undefined_name", "('z', 0, 1)");
    assert_eval("'yes' if 0 else 'no'", "'no'");
    assert_eval("__debug__", "True");
    assert_eval("1 / 0", "Code execution failed at line '1 / 0' due to: ZeroDivisionError: "
                         "division by zero");
}

static void
test_displays(void **state)
{
    (void) state;
    assert_eval("a = [1, 2]\n[0, *a, *range(3, 5)]", "[0, 1, 2, 3, 4]");
    assert_eval("a = (1,)\n(*a, 2)", "(1, 2)");
    assert_eval("{1, 2, *[2, 3]}", "{1, 2, 3}");
    assert_eval("d = {'a': 1}\n{**d, 'b': 2, **{'a': 3}}", "{'a': 3, 'b': 2}");
    assert_eval_fails("[*5]", "TypeError: Value after * must be an iterable, not int");
    assert_eval_fails("{**5}", "TypeError: 'int' object is not a mapping");
    assert_eval("()", "()");
    assert_eval("{}", "{}");
}

static void
test_subscripts_and_slices(void **state)
{
    (void) state;
    assert_eval("s = 'abcdef'\ns[1], s[-1], s[1:4], s[::2], s[::-1], s[:]",
                "('b', 'f', 'bcd', 'ace', 'fedcba', 'abcdef')");
    assert_eval("d = {(1, 2): 'x'}\nd[1, 2]", "'x'");
    assert_eval_fails("{}['k']", "KeyError: 'k'");
    assert_eval("l = list(range(6))\nl[1:3] = ['a']\ndel l[0]\nl[::2] = [9, 9]\nl", "[9, 3, 9, 5]");
}

static void
test_fstrings(void **state)
{
    (void) state;
    assert_eval("x = 3.14159\nf'{x:.2f}|{x!r}|{\"s\"!a}|{\"é\"!a}|{x:{8}.{3}}|{{}}'",
                "\"3.14|3.14159|'s'|'\\\\xe9'|    3.14|{}\"");
    assert_eval("n = 'w'\nf'{n!s:>4}{f\"{n}{n}\"}'", "'   www'");
    assert_eval("f'{1+1=}'", "'1+1=2'");
}

static void
test_assignment(void **state)
{
    (void) state;
    assert_eval("a, (b, c), *d = 1, (2, 3), 4, 5\na, b, c, d", "(1, 2, 3, [4, 5])");
    assert_eval("first, *mid, last = 'abcd'\nfirst, mid, last", "('a', ['b', 'c'], 'd')");
    assert_eval("x = y = [1]\nx is y", "True");
    assert_eval("[a, b] = 1, 2\nb", "2");
    assert_eval_fails("a, b = 1, 2, 3", "ValueError: too many values to unpack (expected 2)");
    assert_eval_fails("a, b = [1]", "ValueError: not enough values to unpack (expected 2, got 1)");
    assert_eval_fails("a, *b, c = [1]",
                      "ValueError: not enough values to unpack (expected at least 2, got 1)");
    assert_eval_fails("a, b = 1", "TypeError: cannot unpack non-iterable int object");
    assert_eval("x: int = 5\nx", "5");
    assert_eval("d = {}\nd['k'] = 1\nd['k'] += 10\nd", "{'k': 11}");
    assert_eval("l = [1]\nm = l\nl += [2]\nm", "[1, 2]");
    assert_eval("n = 5\nn -= 1\nn **= 2\nn //= 3\nn", "5");
    assert_eval_fails("q += 1", "NameError: The variable `q` is not defined.");
}

static void
test_attributes(void **state)
{
    (void) state;
    assert_eval("'a,b'.split(',')", "['a', 'b']");
    assert_eval("import collections\nd = collections.OrderedDict()\nd['x'] = 1\nd.popitem()",
                "('x', 1)");
    assert_eval("z = 1j\nz.imag", "1.0");
    assert_eval("import datetime\nd = datetime.date(2024, 1, 2)\nd.year + d.month", "2025");
    assert_eval_fails("(1).nope", "AttributeError: 'int' object has no attribute 'nope'");
}

static void
test_delete(void **state)
{
    (void) state;
    assert_eval_fails("x = 1\ndel x\n'x' in dir()",
                      "InterpreterError: Forbidden function evaluation: 'dir' is not among the "
                      "explicitly allowed tools or defined/imported in the preceding code");
    assert_eval_fails("x = 1\ndel x\nx", "NameError: The variable `x` is not defined.");
    assert_eval_fails("del nothing", "NameError: name 'nothing' is not defined");
    assert_eval("d = {'a': 1, 'b': 2}\ndel d['a'], d['b']\nd", "{}");
}

static void
test_control_flow(void **state)
{
    (void) state;
    assert_eval("t = 0\nfor i in range(10):\n    if i % 2:\n        continue\n    if i > 6:\n"
                "        break\n    t += i\nelse:\n    t = -1\nt",
                "12");
    assert_eval("t = []\nfor i in range(2):\n    pass\nelse:\n    t.append('else')\nt", "['else']");
    assert_eval("i = 0\nwhile i < 5:\n    i += 1\nelse:\n    i *= 10\ni", "50");
    assert_eval(
            "i = 0\nwhile True:\n    i += 1\n    if i == 3:\n        break\nelse:\n    i = -1\ni",
            "3");
    assert_eval("x = 5\nif x > 3:\n    y = 'big'\nelif x > 1:\n    y = 'mid'\nelse:\n    y = "
                "'small'\ny",
                "'big'");
    assert_eval("for a, b in [(1, 2), (3, 4)]:\n    pass\na + b", "7");
}

static void
test_calls(void **state)
{
    (void) state;
    assert_eval("sorted([3, 1, 2], reverse=True)", "[3, 2, 1]");
    assert_eval("a = [3, 1]\nkw = {'reverse': True}\nsorted(*[a], **kw)", "[3, 1]");
    assert_eval("max(*[1, 5], *(7, 2), key=None)", "7");
    assert_eval("dict(a=1, **{'b': 2})", "{'a': 1, 'b': 2}");
    assert_eval_fails("dict(a=1, **{'a': 2})", "got multiple values for keyword argument 'a'");
    assert_eval_fails("len(**{1: 2})", "keywords must be strings");
    assert_eval("'-'.join(str(i) for i in range(3))", "'0-1-2'");
    assert_eval("int('ff', 16), round(2.675, 2), divmod(7, 2), pow(2, 10, 1000)",
                "(255, 2.67, (3, 1), 24)");
    assert_eval("list(zip('ab', range(2))), list(enumerate('x', 1))",
                "([('a', 0), ('b', 1)], [(1, 'x')])");
    assert_eval("isinstance(ValueError('x'), Exception), issubclass(KeyError, LookupError)",
                "(True, True)");
}

static void
test_imports(void **state)
{
    (void) state;
    assert_eval("import math\nmath.floor(2.5)", "2");
    assert_eval("import math as m\nfrom math import sqrt as s, pi\ns(16) + m.ceil(pi)", "8.0");
    assert_eval("from collections import *\nCounter('aab')['a']", "2");
    assert_eval("import collections\ntype(collections.Counter()).__name__", "'Counter'");
    assert_eval_fails("from math import nope",
                      "ImportError: cannot import name 'nope' from 'math'");
}

static void
test_result_fields(void **state)
{
    (void) state;
    struct exec_env *env = t_env(NULL);
    cJSON *res = t_run_in(env, "x = [1, 2.5, 'a', None]\nx");
    assert_string_equal(t_str(res, "outcome"), "ok");
    char *out = cJSON_PrintUnformatted(cJSON_GetObjectItem(res, "output"));
    assert_string_equal(out, "[1,2.5,\"a\",null]");
    free(out);
    assert_string_equal(t_str(res, "output_repr"), "[1, 2.5, 'a', None]");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(res, "is_final_answer")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(res, "error")));
    const cJSON *stats = cJSON_GetObjectItem(res, "stats");
    assert_true(cJSON_GetObjectItem(stats, "ops")->valuedouble > 5);
    assert_non_null(cJSON_GetObjectItem(stats, "run_ms"));
    cJSON_Delete(res);

    /* a statement last: no value */
    res = t_run_in(env, "y = x");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(res, "output")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(res, "output_repr")));
    cJSON_Delete(res);
    exec_env_free(env);
}

static void
test_error_fields(void **state)
{
    (void) state;
    struct exec_env *env = t_env(NULL);
    cJSON *res = t_run_in(env, "a = 1\nfor i in range(3):\n    a = a / (1 - i)\nprint('never')");
    assert_string_equal(t_str(res, "outcome"), "error");
    assert_string_equal(t_err(res, "type"), "ZeroDivisionError");
    assert_string_equal(t_err(res, "message"),
                        "Code execution failed at line 'for i in range(3):\n    a = a / (1 - i)' "
                        "due to: ZeroDivisionError: float division by zero");
    assert_string_equal(t_err(res, "source"), "for i in range(3):\n    a = a / (1 - i)");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "error"), "line")->valueint, 2);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(res, "output")));
    cJSON_Delete(res);
    exec_env_free(env);
}

/* CPython ends a line at "\r\n" and at a lone "\r" as well as at "\n": errors must name the
 * line and source it counts (an index of "\n" alone read past its end for the second). */
static void
test_error_location_carriage_returns(void **state)
{
    (void) state;
    struct exec_env *env = t_env(NULL);
    cJSON *res = t_run_in(env, "a = 1\rb = 2\r\nc = a / 0\rd = 4");
    assert_string_equal(t_err(res, "type"), "ZeroDivisionError");
    assert_string_equal(t_err(res, "source"), "c = a / 0");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "error"), "line")->valueint, 3);
    cJSON_Delete(res);
    /* found by the executor's compiler, not by CPython's parser */
    res = t_run_in(env, "x = 1\r\r\r\r\rnonlocal y\r\nz = 2");
    assert_string_equal(t_err(res, "type"), "SyntaxError");
    assert_string_equal(t_err(res, "message"),
                        "Code parsing failed on line 6 due to: SyntaxError: nonlocal declaration "
                        "not allowed at module level\nnonlocal y\n^");
    cJSON_Delete(res);
    exec_env_free(env);
}

/* Variables are bounded by max_result_bytes before they are converted: one made of shared parts
 * (2^20 nodes as JSON from 20 tuples) is refused at once, while a string whose JSON alone fits
 * is not refused for the repr() a result would also carry. */
static void
test_get_variables_bounded(void **state)
{
    (void) state;
    struct exec_env *env = t_env(&(struct exec_policy){.max_result_bytes = 1000});
    cJSON_Delete(t_run_in(env, "b = 1\nfor i in range(20):\n    b = (b, b)\ns = 'x' * 900\n"
                               "t = 'y' * 900"));
    struct pf_error *err = NULL;
    const char *shared[] = {"b"};
    assert_null(exec_env_get_variables(env, shared, 1, &err));
    assert_int_equal(err->code, PF_E_TOO_LARGE);
    assert_non_null(strstr(err->msg, "over max_result_bytes 1000"));
    err = pf_error_free(err);
    const char *str[] = {"s"};
    cJSON *got = exec_env_get_variables(env, str, 1, &err);
    assert_non_null(got);
    assert_int_equal(strlen(cJSON_GetObjectItem(got, "s")->valuestring), 900);
    cJSON_Delete(got);
    const char *both[] = {"s", "t"};
    assert_null(exec_env_get_variables(env, both, 2, &err));
    assert_int_equal(err->code, PF_E_TOO_LARGE);
    err = pf_error_free(err);
    /* A repeated name is one variable: counted once against the limit, one key in the reply
     * (a repeated key would be a frame the daemon refuses, losing the session). */
    const char *twice[] = {"s", "s", "s"};
    got = exec_env_get_variables(env, twice, 3, &err);
    assert_non_null(got);
    assert_int_equal(cJSON_GetArraySize(got), 1);
    cJSON_Delete(got);
    exec_env_free(env);
}

static void
test_syntax_error(void **state)
{
    (void) state;
    struct exec_env *env = t_env(NULL);
    cJSON *res = t_run_in(env, "x = 1\ny = (1 +\n");
    assert_string_equal(t_str(res, "outcome"), "error");
    assert_string_equal(t_err(res, "type"), "SyntaxError");
    assert_string_equal(t_err(res, "message"),
                        "Code parsing failed on line 2 due to: SyntaxError: '(' was never closed\n"
                        "y = (1 +\n    ^");
    cJSON_Delete(res);
    res = t_run_in(env, "if x:\nprint(1)");
    assert_non_null(strstr(t_err(res, "message"), "Code parsing failed on line 2 due to: "
                                                  "IndentationError: expected an indented block"));
    cJSON_Delete(res);
    exec_env_free(env);
}

static void
test_session_state(void **state)
{
    (void) state;
    struct exec_env *env = t_env(NULL);
    cJSON_Delete(t_run_in(env, "import math\ncount = 1"));
    cJSON *res = t_run_in(env, "count += 1\nmath.factorial(count + 1)");
    assert_string_equal(t_str(res, "output_repr"), "6");
    cJSON_Delete(res);

    struct pf_error *err = NULL;
    cJSON *vars = cJSON_Parse("{\"n\": 41, \"names\": [\"a\", \"b\"]}");
    assert_int_equal(exec_env_set_variables(env, vars, &err), 0);
    cJSON_Delete(vars);
    res = t_run_in(env, "n + len(names)\nm = n * 2");
    cJSON_Delete(res);
    const char *names[] = {"m", "count", "missing"};
    cJSON *got = exec_env_get_variables(env, names, 3, &err);
    char *s = cJSON_PrintUnformatted(got);
    assert_string_equal(s, "{\"m\":82,\"count\":2}");
    free(s);
    cJSON_Delete(got);

    /* a user __repr__ runs in the executor even between runs */
    cJSON_Delete(
            t_run_in(env, "class R:\n    def __repr__(self):\n        return 'R!'\nobj = R()"));
    const char *rn[] = {"obj"};
    got = exec_env_get_variables(env, rn, 1, &err);
    s = cJSON_PrintUnformatted(got);
    assert_non_null(strstr(s, "\"repr\":\"R!\""));
    free(s);
    cJSON_Delete(got);

    vars = cJSON_Parse("{\"not valid\": 1}");
    assert_int_equal(exec_env_set_variables(env, vars, &err), -1);
    assert_int_equal(err->code, PF_E_BAD_REQUEST);
    assert_non_null(strstr(err->msg, "not valid"));
    err = pf_error_free(err);
    cJSON_Delete(vars);
    /* a variable cannot replace final_answer either */
    vars = cJSON_Parse("{\"final_answer\": 1}");
    assert_int_equal(exec_env_set_variables(env, vars, &err), -1);
    assert_int_equal(err->code, PF_E_BAD_REQUEST);
    assert_non_null(strstr(err->msg, "cannot be rebound"));
    err = pf_error_free(err);
    cJSON_Delete(vars);
    exec_env_free(env);
}

/* Sets {name: value} in a fresh environment, which must refuse it with a message that has
 * `needle` and is at most `max_len` bytes. */
static void
check_variable_refused(const char *name, const char *value, const char *needle, size_t max_len)
{
    struct exec_env *env = t_env(NULL);
    cJSON *vars = cJSON_CreateObject();
    assert_non_null(cJSON_AddItemToObject(vars, name, cJSON_Parse(value)));
    struct pf_error *err = NULL;
    assert_int_equal(exec_env_set_variables(env, vars, &err), -1);
    assert_int_equal(err->code, PF_E_BAD_REQUEST);
    if (!strstr(err->msg, needle) || strlen(err->msg) > max_len)
        fail_msg("message \"%.300s\" (%zu bytes) lacks \"%s\" or exceeds %zu bytes", err->msg,
                 strlen(err->msg), needle, max_len);
    pf_error_free(err);
    cJSON_Delete(vars);
    exec_env_free(env);
}

/* A variable's name is echoed cut to 64 bytes, not in full, whatever is wrong with it. */
static void
test_variable_names_cut(void **state)
{
    (void) state;
    char *name = malloc(100001);
    assert_non_null(name);
    memset(name, 'v', 100000);
    name[100000] = '\0';
    char cut[80] = "variables.";
    memset(cut + 10, 'v', 64);
    cut[74] = '\0';
    check_variable_refused(name, "{\"$type\":\"nope\"}", cut, 400);
    name[0] = '-'; /* not an identifier */
    check_variable_refused(name, "1", "is not a valid variable name", 300);
    free(name);
}

/* A keyword is an identifier to PyUnicode_IsIdentifier, but no snippet could use it. */
static void
test_variable_keywords_refused(void **state)
{
    (void) state;
    static const char *const keywords[] = {"for", "None", "True", "lambda", "await", "yield"};
    for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++) {
        char want[64];
        snprintf(want, sizeof(want), "variables: \"%s\" is a Python keyword", keywords[i]);
        check_variable_refused(keywords[i], "1", want, 200);
    }
    /* Soft keywords are ordinary names. */
    struct exec_env *env = t_env(NULL);
    struct pf_error *err = NULL;
    cJSON *vars = cJSON_Parse("{\"match\": 1, \"case\": 2, \"_\": 3, \"type\": 4}");
    assert_int_equal(exec_env_set_variables(env, vars, &err), 0);
    cJSON_Delete(vars);
    cJSON *res = t_run_in(env, "match + case + _ + type");
    assert_string_equal(t_str(res, "output_repr"), "10");
    cJSON_Delete(res);
    exec_env_free(env);
}

static void
test_unsupported_nodes(void **state)
{
    (void) state;
    assert_eval_fails("async def f():\n    pass", "InterpreterError: async def is not supported");
    assert_eval_fails("async def f():\n    await g()\nf()",
                      "InterpreterError: async def is not supported");
    assert_eval_fails("x = 1\ny = await x", "InterpreterError: await is not supported");
    assert_eval_fails("x = 1\nasync with x:\n    pass",
                      "InterpreterError: async with is not supported");
    assert_eval_fails("for x in []:\n    pass\nasync for y in x:\n    pass",
                      "InterpreterError: async for is not supported");
    assert_eval_fails("x = 1\ny = [i async for i in x]",
                      "Code parsing failed on line 2 due to: SyntaxError: asynchronous "
                      "comprehension outside of an asynchronous function");
}

static void
test_python_init_idempotent(void **state)
{
    (void) state;
    struct pf_error *err = NULL;
    assert_int_equal(exec_python_init(&err), 0);
    const char *mods[] = {"math", "json"};
    assert_int_equal(exec_preload(mods, 2, &err), 0);
    const char *bad[] = {"no_such_module_xyz"};
    assert_int_equal(exec_preload(bad, 1, &err), -1);
    assert_non_null(strstr(err->msg, "no_such_module_xyz"));
    err = pf_error_free(err);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_python_init_idempotent),
            cmocka_unit_test(test_constants_and_operators),
            cmocka_unit_test(test_displays),
            cmocka_unit_test(test_subscripts_and_slices),
            cmocka_unit_test(test_fstrings),
            cmocka_unit_test(test_assignment),
            cmocka_unit_test(test_attributes),
            cmocka_unit_test(test_delete),
            cmocka_unit_test(test_control_flow),
            cmocka_unit_test(test_calls),
            cmocka_unit_test(test_imports),
            cmocka_unit_test(test_result_fields),
            cmocka_unit_test(test_error_fields),
            cmocka_unit_test(test_error_location_carriage_returns),
            cmocka_unit_test(test_get_variables_bounded),
            cmocka_unit_test(test_syntax_error),
            cmocka_unit_test(test_session_state),
            cmocka_unit_test(test_variable_names_cut),
            cmocka_unit_test(test_variable_keywords_refused),
            cmocka_unit_test(test_unsupported_nodes),
    };
    return cmocka_run_group_tests(tests, t_setup_python, NULL);
}
