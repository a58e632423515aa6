/* The executor's policy: each rule bites, and its harmless neighbour still works. Budgets,
 * output capture and the final_answer contract. */
#include "test_exec_util.h"
/* test_audit_hook_holds_alone puts objects in a snippet's namespace behind the checks' back */
#include <stdlib.h>
#include <unistd.h>

#include "exec_internal.h"

static char *
eval_with(const struct exec_policy *p, const char *code)
{
    return t_eval(code, p);
}

#define assert_policy(p, code, needle)                                                          \
    do {                                                                                        \
        char *_got = eval_with((p), (code));                                                    \
        if (!strstr(_got, (needle)))                                                            \
            fail_msg("snippet:\n%s\nexpected to contain: %s\ngot: %s", (code), (needle), _got); \
        free(_got);                                                                             \
    } while (0)

static void
test_import_allow_list(void **state)
{
    (void) state;
    assert_eval_fails("import os",
                      "InterpreterError: Import of os is not allowed. Authorized imports are: "
                      "['collections', 'datetime', 'itertools', 'math', 'queue', 'random', 're', "
                      "'stat', 'statistics', 'time', 'unicodedata']");
    assert_eval_fails("from os import path", "Import of os is not allowed");
    assert_eval_fails("import collections.abc", "Import of collections.abc is not allowed");
    assert_eval_fails("from . import x", "InterpreterError: Relative imports are not supported");
    assert_eval("import itertools\nlist(itertools.islice(itertools.count(), 3))", "[0, 1, 2]");

    /* The policy's list is the whole list: the base modules are not added to it. */
    const char *json_only[] = {"json"};
    struct exec_policy p = {.imports = json_only, .n_imports = 1};
    assert_policy(&p, "import json\njson.dumps([1])", "'[1]'");
    assert_policy(&p, "import json.decoder", "Import of json.decoder is not allowed");
    assert_policy(&p, "import math",
                  "Import of math is not allowed. Authorized imports are: "
                  "['json']");
    /* A module named twice is listed once. */
    const char *repeated[] = {"math", "json", "re", "json"};
    struct exec_policy pb = {.imports = repeated, .n_imports = 4};
    assert_policy(&pb, "import os", "Authorized imports are: ['json', 'math', 're']");
    /* No imports at all (the strict profile): not even the base modules. */
    const char *none[] = {NULL};
    struct exec_policy pn = {.imports = none, .n_imports = 0};
    assert_policy(&pn, "import math", "Import of math is not allowed. Authorized imports are: []");
    assert_policy(&pn, "1 + 1", "2");

    const char *json_tree[] = {"json.*"};
    p.imports = json_tree;
    assert_policy(&p, "import json.decoder\njson.decoder.JSONDecodeError.__name__",
                  "'JSONDecodeError'");
    assert_policy(&p, "from json import decoder\n1", "1");
    assert_policy(&p, "import jsonx", "Import of jsonx is not allowed");
}

static void
test_modules_through_attributes(void **state)
{
    (void) state;
    assert_eval_fails("import random\nrandom._os",
                      "InterpreterError: Forbidden access to module: os");
    assert_eval_fails("import random\nrandom._os.system('true')", "Forbidden access to module: os");
    assert_eval_fails("import datetime\ndatetime.sys", "Forbidden access to module: sys");
    assert_eval_fails("import random\ngetattr(random, '_os')", "Forbidden access to module: os");
    assert_eval_fails("from random import _os", "Import of os is not allowed");
    assert_eval_fails("import statistics\nx = [statistics.sys]", "Forbidden access to module: sys");
    /* the allowed neighbour */
    assert_eval("import random\nrandom.seed(1)\nrandom.randint(1, 1)", "1");
    assert_eval_fails("import math\nmath.pi = 3",
                      "Forbidden assignment to an attribute of module math");
    assert_eval_fails("import math\ndel math.pi",
                      "Forbidden deletion of an attribute of module math");
    /* a library's class, by every route that sets or deletes; the snippet's own classes may */
    static const char *const class_writes[][2] = {
            {"queue.Queue.put = 1", "assignment to"},
            {"queue.Queue.__doc__ += '!'", "assignment to"},
            {"setattr(queue.Queue, 'put', 1)", "assignment to"},
            {"del queue.Queue.put", "deletion of"},
            {"delattr(queue.Queue, 'put')", "deletion of"},
    };
    for (size_t i = 0; i < sizeof(class_writes) / sizeof(class_writes[0]); i++) {
        char code[128], msg[128];
        snprintf(code, sizeof(code), "import queue\n%s", class_writes[i][0]);
        snprintf(msg, sizeof(msg),
                 "Forbidden %s an attribute of class queue.Queue: ", class_writes[i][1]);
        assert_eval_fails(code, msg);
    }
    assert_eval("import queue\nclass Q(queue.Queue):\n    pass\nQ.put = 1\nQ.k = 2\n"
                "del Q.k\nsetattr(Q, 'k', 3)\ndelattr(Q, 'k')\nQ.put",
                "1");
}

static void
test_dunders(void **state)
{
    (void) state;
    const char *refused[] = {
            "(1).__dict__",
            "().__class__.__bases__[0].__subclasses__()",
            "getattr(1, '__dict__')",
            "getattr(1, '__dict__', None)",
            "hasattr(1, '__dict__')",
            "class_ = 1\nsetattr(class_, '__doc__x__', 1)",
            "delattr(1, '__x__')",
            "x = [1]\nx.__reduce__()",
            "'{0.__dict__}'.format(1)",
            "str.format('{0.__dict__}', 1)",
            "'{x.__dict__}'.format_map({'x': 1})",
            "'{0:{1.__dict__}}'.format(1, 2)",
            "f = '{0.__dict__}'.format\nf(1)",
            "import math\nmath.__loader__",
            "l = [1]\ndel l.__doc__x__",
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
        assert_eval_fails(refused[i], "InterpreterError: Forbidden access to dunder attribute: __");
    /* read, never set (dunder_read.c) */
    assert_eval("(1).__class__, getattr(1, '__class__'), '{0.__class__.__name__}'.format(1)",
                "(<class 'int'>, <class 'int'>, 'int')");
    assert_eval_fails("class A:\n    pass\nA().__class__ = int",
                      "Forbidden assignment or deletion of dunder attribute: __class__");
    /* neighbours */
    assert_eval("len.__name__, '{0.real}'.format(3), '{:>{}}'.format('a', 3)",
                "('len', '3', '  a')");
    assert_eval("getattr(1, 'real'), getattr(1, 'nope', 'dflt'), hasattr('', 'join')",
                "(1, 'dflt', True)");
    assert_eval("'{x}-{y[0]}'.format_map({'x': 1, 'y': [2]})", "'1-2'");
    /* protocol methods are allowed; what they lead to through other dunders is not */
    assert_eval("it = iter([1, 2])\nit.__next__(), [1].__len__(), (1).__eq__(1)", "(1, 1, True)");
    assert_eval_fails("[].__len__.__self__", "Forbidden access to dunder attribute: __self__");
    assert_eval_fails("getattr(1, 'nope')", "AttributeError: 'int' object has no attribute 'nope'");
}

/* A str subclass whose hash and == mimic "__class__" fools CPython's attribute lookup (natively,
 * getattr(1, S('zzz')) is int): every name reaches the lookup as a plain str. */
static void
test_str_subclass_names(void **state)
{
    (void) state;
    const char *S = "class S(str):\n    def __hash__(self):\n        return hash('__class__')\n"
                    "    def __eq__(self, o):\n        return True\n";
    char code[1024];
    snprintf(code, sizeof(code), "%sgetattr(1, S('zzz'))", S);
    assert_eval_fails(code, "AttributeError: 'int' object has no attribute 'zzz'");
    snprintf(code, sizeof(code), "%shasattr(1, S('zzz'))", S);
    assert_eval(code, "False");
    snprintf(code, sizeof(code),
             "%sclass P:\n    __match_args__ = (S('zzz'),)\nmatch 1:\n"
             "    case P(x):\n        r = x\n    case _:\n        r = 'no'\nr",
             S);
    assert_eval(code, "'no'");
    snprintf(code, sizeof(code), "%sclass A:\n    pass\na = A()\nsetattr(a, S('zzz'), 1)\na.zzz",
             S);
    assert_eval(code, "1");
}

static void
test_builtins_refused(void **state)
{
    (void) state;
    const char *names[] = {"eval",       "exec", "compile", "open",   "input",
                           "breakpoint", "help", "globals", "locals", "vars",
                           "__import__", "exit", "quit",    "dir"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char code[64], msg[256];
        snprintf(code, sizeof(code), "%s('1')", names[i]);
        snprintf(msg, sizeof(msg),
                 "InterpreterError: Forbidden function evaluation: '%s' is not among the "
                 "explicitly allowed tools or defined/imported in the preceding code",
                 names[i]);
        assert_eval_fails(code, msg);
    }
    assert_eval_fails("e = eval", "NameError: The variable `eval` is not defined.");
    assert_eval("abs(-2), any([0, 1]), chr(65), hex(255), sum(range(4)), repr('x')",
                "(2, True, 'A', '0xff', 6, \"'x'\")");
    assert_eval("try_ = ValueError('v')\nisinstance(try_, Exception)", "True");
}

static void
test_budget_ops(void **state)
{
    (void) state;
    struct exec_policy p = {.max_ops = 500};
    assert_policy(&p, "x = 0\nfor i in range(10000):\n    x += i",
                  "InterpreterError: Reached the max number of operations of 500. Maybe there is "
                  "an infinite loop somewhere in the code, or you're just asking too many "
                  "calculations.");
    assert_policy(&p, "x = 0\nfor i in range(10):\n    x += i\nx", "45");
}

static void
test_budget_while(void **state)
{
    (void) state;
    struct exec_policy p = {.max_while_iterations = 10};
    assert_policy(&p, "i = 0\nwhile True:\n    i += 1",
                  "InterpreterError: Maximum number of 10 iterations in While loop exceeded");
    assert_policy(&p, "i = 0\nwhile i < 10:\n    i += 1\ni", "10");
    /* the budget is per loop: two loops of 10 are fine */
    assert_policy(&p,
                  "n = 0\nfor _ in range(3):\n    i = 0\n    while i < 10:\n        i += 1\n"
                  "        n += 1\nn",
                  "30");
}

static void
test_budget_timeout(void **state)
{
    (void) state;
    struct exec_policy p = {
            .timeout_ms = 100, .max_ops = 1ULL << 40, .max_while_iterations = 1ULL << 40};
    struct exec_env *env = t_env(&p);
    cJSON *res = t_run_in(env, "print('start')\nwhile True:\n    pass");
    assert_string_equal(t_str(res, "outcome"), "timeout");
    assert_string_equal(t_err(res, "message"),
                        "Code execution failed at line 'while True:\n    pass' due to: "
                        "InterpreterError: Code execution exceeded the maximum execution time "
                        "of 0.1 seconds");
    assert_string_equal(t_str(res, "logs"), "start\n");
    double ms = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "stats"), "run_ms")->valuedouble;
    assert_true(ms >= 100 && ms < 2000);
    cJSON_Delete(res);
    /* the environment stays usable (a session continues after a timed-out snippet) */
    res = t_run_in(env, "1 + 1");
    assert_string_equal(t_str(res, "output_repr"), "2");
    cJSON_Delete(res);
    exec_env_free(env);
}

static void
test_memory_error(void **state)
{
    (void) state;
    struct exec_env *env = t_env(NULL);
    cJSON *res = t_run_in(env, "x = [0] * (2 ** 60)");
    assert_string_equal(t_str(res, "outcome"), "memory_limit");
    assert_string_equal(t_err(res, "type"), "MemoryError");
    cJSON_Delete(res);
    exec_env_free(env);
}

struct chunks {
    char buf[4096];
    size_t len;
    int calls;
};

static void
collect(void *userdata, const char *data, size_t len)
{
    struct chunks *c = userdata;
    if (len == 0) /* a clock check's call: nothing printed */
        return;
    memcpy(c->buf + c->len, data, len);
    c->len += len;
    c->buf[c->len] = '\0';
    c->calls++;
}

static void
test_print_capture(void **state)
{
    (void) state;
    struct exec_env *env = t_env(NULL);
    struct chunks c = {0};
    cJSON *res = exec_env_run(env,
                              "print('a', 1, None)\nprint('b', 'c', sep='-', end='!')\n"
                              "print(sep=None, end=None, flush=True)\nprint('é', [1])\n'v'",
                              collect, &c);
    const char *want = "a 1 None\nb-c!\né [1]\n";
    assert_string_equal(t_str(res, "logs"), want);
    assert_string_equal(c.buf, want);
    assert_int_equal(c.calls, 4);
    assert_string_equal(t_str(res, "output_repr"), "'v'");
    cJSON_Delete(res);

    res = t_run_in(env, "print('x')\nimport math\nprint(1, file=math)");
    assert_non_null(
            strstr(t_err(res, "message"), "InterpreterError: print(file=...) is not supported"));
    assert_string_equal(t_str(res, "logs"), "x\n");
    cJSON_Delete(res);
    res = t_run_in(env, "print(1, sep=2)");
    assert_non_null(
            strstr(t_err(res, "message"), "TypeError: sep must be None or a string, not int"));
    cJSON_Delete(res);
    res = t_run_in(env, "print(1, color=2)");
    assert_non_null(strstr(t_err(res, "message"), "TypeError"));
    cJSON_Delete(res);
    exec_env_free(env);
}

static void
test_output_limit(void **state)
{
    (void) state;
    struct exec_policy p = {.max_output_bytes = 100};
    struct exec_env *env = t_env(&p);
    struct chunks c = {0};
    cJSON *res = exec_env_run(env, "for i in range(100):\n    print('x' * 9)", collect, &c);
    assert_string_equal(t_str(res, "outcome"), "output_limit");
    assert_int_equal(strlen(t_str(res, "logs")), 100);
    assert_int_equal(c.len, 100);
    assert_non_null(strstr(t_err(res, "message"), "max_output_bytes (100 bytes)"));
    cJSON_Delete(res);
    /* the cut never splits a UTF-8 sequence */
    res = t_run_in(env, "print('a' + 'é' * 60)");
    assert_string_equal(t_str(res, "outcome"), "output_limit");
    assert_int_equal(strlen(t_str(res, "logs")), 99);
    cJSON_Delete(res);
    exec_env_free(env);
}

/* A printed NUL would end the logs string (and the reply's JSON cannot carry \u0000): it is
 * U+FFFD there, in error messages too, and what follows it is kept. */
static void
test_logs_nul(void **state)
{
    (void) state;
    struct exec_policy p = {0};
    struct exec_env *env = t_env(&p);
    cJSON *res =
            t_run_in(env, "print('a\\0b', 'after')\nprint('second')\nraise ValueError('x\\0y')");
    assert_string_equal(t_str(res, "logs"), "a\xEF\xBF\xBD"
                                            "b after\nsecond\n");
    assert_non_null(strstr(t_err(res, "message"), "ValueError: x\xEF\xBF\xBD"
                                                  "y"));
    cJSON_Delete(res);
    exec_env_free(env);
}

static void
test_logs_truncation(void **state)
{
    (void) state;
    struct exec_policy p = {.max_log_chars = 10};
    struct exec_env *env = t_env(&p);
    cJSON *res = t_run_in(env, "print('0123456789abcdé', end='')");
    assert_string_equal(t_str(res, "logs"),
                        "01234\n..._This content has been truncated to stay below 10 "
                        "characters_...\nabcdé");
    cJSON_Delete(res);
    res = t_run_in(env, "print('0123456789', end='')");
    assert_string_equal(t_str(res, "logs"), "0123456789");
    cJSON_Delete(res);
    exec_env_free(env);
}

static void
test_final_answer(void **state)
{
    (void) state;
    struct exec_env *env = t_env(NULL);
    cJSON *res = t_run_in(env, "x = 6\nfor i in range(3):\n    if i == 1:\n"
                               "        final_answer(x * 7)\nprint('never')");
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(res, "is_final_answer")));
    assert_int_equal(cJSON_GetObjectItem(res, "output")->valueint, 42);
    assert_string_equal(t_str(res, "logs"), "");
    cJSON_Delete(res);
    res = t_run_in(env, "final_answer(answer='k')");
    assert_string_equal(t_str(res, "output_repr"), "'k'");
    cJSON_Delete(res);
    res = t_run_in(env, "final_answer()");
    assert_string_equal(t_str(res, "outcome"), "error");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(res, "is_final_answer")));
    cJSON_Delete(res);
    exec_env_free(env);
}

static void
test_budget_survives_swallowing(void **state)
{
    (void) state;
    /* CPython code that swallows exceptions (sorted's key=) cannot hide a budget refusal */
    struct exec_policy p = {.max_ops = 300};
    assert_policy(&p, "d = {}\nfor i in range(1000):\n    d[i] = str(i)",
                  "Reached the max number of operations of 300");
}

static void
test_private_module_attributes(void **state)
{
    (void) state;
    /* math.ceil: a value the snippet may hold, refused as random's private name */
    assert_eval_fails("import random\nrandom._ceil(2.5)",
                      "InterpreterError: Forbidden access to private attribute _ceil of module "
                      "random");
    /* posix.urandom: refused as a function of a module the profile does not allow */
    assert_eval_fails("import random\nrandom._urandom(2)",
                      "InterpreterError: Forbidden access to posix.urandom: module posix is not "
                      "allowed");
    assert_eval_fails("from random import _urandom", "Forbidden access to private attribute");
    assert_eval_fails("import random\ngetattr(random, '_inst')",
                      "Forbidden access to private attribute _inst of module random");
    /* private names of the snippet's own objects stay usable */
    assert_eval("class A:\n    _x = 1\nA._x, A()._x", "(1, 1)");
    assert_eval("import random\nrandom.__name__", "'random'");
}

static void
test_frames_and_code(void **state)
{
    (void) state;
    assert_eval_fails("def g():\n    yield 1\ng().gi_frame",
                      "Forbidden access to introspection attribute: gi_frame");
    /* by every route, on any object, co_* as a prefix */
    assert_eval_fails("class A:\n    pass\ngetattr(A(), 'f_globals')",
                      "Forbidden access to introspection attribute: f_globals");
    assert_eval_fails("'{0.tb_frame}'.format(1)",
                      "Forbidden access to introspection attribute: tb_frame");
    assert_eval_fails("class A:\n    co_x = 1\nA.co_x", "introspection attribute: co_x");
    assert_eval("class A:\n    f_x = 1\n    cox = 2\nA.f_x, A.cox", "(1, 2)");
    assert_eval_fails("(lambda: 1).__globals__",
                      "Forbidden access to dunder attribute: __globals__");
    assert_eval_fails("def f():\n    pass\nf.__code__",
                      "Forbidden access to dunder attribute: __code__");
    assert_eval_fails("try:\n    1/0\nexcept Exception as e:\n    t = e.__traceback__",
                      "Forbidden access to dunder attribute: __traceback__");
    assert_eval_fails("def f():\n    pass\ngetattr(f, '__closure__')",
                      "Forbidden access to dunder attribute: __closure__");
}

static void
test_match_class_dunder(void **state)
{
    (void) state;
    assert_eval_fails("match 1:\n    case int(__dict__=c):\n        pass",
                      "InterpreterError: Forbidden access to dunder attribute: __dict__");
    assert_eval_fails("class P:\n    __match_args__ = ('__dict__',)\nmatch P():\n"
                      "    case P(d):\n        pass",
                      "Forbidden access to dunder attribute: __dict__");
    assert_eval("match 1:\n    case int(real=r):\n        x = r\nx", "1");
}

static void
test_budgets_cannot_be_caught(void **state)
{
    (void) state;
    struct exec_policy p = {.max_ops = 2000};
    assert_policy(&p,
                  "def k(x):\n    while True:\n        pass\ntry:\n    sorted([1, 2], key=k)\n"
                  "except BaseException as e:\n    print('caught')\n'end'",
                  "Reached the max number of operations of 2000");
    struct exec_policy w = {.max_while_iterations = 5};
    assert_policy(&w, "try:\n    while True:\n        pass\nexcept Exception:\n    pass\n'escaped'",
                  "Maximum number of 5 iterations in While loop exceeded");
    struct exec_policy t = {.timeout_ms = 50, .max_ops = 1ULL << 40};
    struct exec_env *env = t_env(&t);
    cJSON *res = t_run_in(env, "def gen():\n    while True:\n        yield 1\ntry:\n"
                               "    for x in gen():\n        pass\nexcept BaseException:\n"
                               "    print('caught')\nfinally:\n    print('finally')");
    assert_string_equal(t_str(res, "outcome"), "timeout");
    assert_string_equal(t_str(res, "logs"), "");
    cJSON_Delete(res);
    exec_env_free(env);
}

static void
test_operator_getters(void **state)
{
    (void) state;
    const char *op[] = {"operator"};
    struct exec_policy p = {.imports = op, .n_imports = 1};
    assert_policy(&p, "import operator\noperator.attrgetter('__dict__')(1)",
                  "InterpreterError: Forbidden access to dunder attribute: __dict__");
    assert_policy(&p, "from operator import attrgetter\nattrgetter('real.__dict__')(1)",
                  "Forbidden access to dunder attribute: __dict__");
    assert_policy(&p, "import operator as o\no.methodcaller('__reduce_ex__', 2)(1)",
                  "Forbidden access to dunder attribute: __reduce_ex__");
    /* the snippet's getters are the executor's functions: their type leads to no real
     * getter class (exec_is_unguarded_class refuses that class wherever else it shows) */
    assert_policy(&p, "import operator\ntype(operator.attrgetter('real'))('__class__')(1)",
                  "cannot create 'builtin_function_or_method' instances");
    assert_policy(&p,
                  "class S(str):\n    def __hash__(self):\n        return hash('__class__')\n"
                  "    def __eq__(self, o):\n        return True\n"
                  "import operator\noperator.attrgetter(S('zzz'))(1)",
                  "AttributeError: 'int' object has no attribute 'zzz'");
    assert_policy(&p,
                  "import operator\noperator.attrgetter('real', 'imag')(3), "
                  "operator.methodcaller('upper')('a'), operator.itemgetter(1)([5, 6])",
                  "((3, 0), 'A', 6)");
}

static void
test_string_formatter(void **state)
{
    (void) state;
    const char *str[] = {"string", "random"};
    struct exec_policy p = {.imports = str, .n_imports = 2};
    assert_policy(&p,
                  "import string\nimport random\n"
                  "string.Formatter().get_field('0.__func__.__globals__', [random.randint], {})",
                  "InterpreterError: Forbidden access to dunder attribute: __func__");
    assert_policy(&p, "import string\nstring.Formatter().vformat('{0.__dict__}', [1], {})",
                  "Forbidden access to dunder attribute: __dict__");
    assert_policy(&p,
                  "import string\nclass F(string.Formatter):\n    pass\n"
                  "F().format('{0.__dict__}', 1)",
                  "Forbidden access to dunder attribute: __dict__");
    assert_policy(&p, "import string\ntype(string.Formatter()).mro()[1]",
                  "Forbidden access to the Formatter class itself");
    assert_policy(&p, "from string import Formatter\nFormatter().format('{0.real}-{x}', 3, x='y')",
                  "'3-y'");
}

static void
test_cancel_flag(void **state)
{
    (void) state;
    volatile sig_atomic_t flag = 0;
    struct exec_policy p = {
            .cancel_flag = &flag, .max_ops = 1ULL << 40, .max_while_iterations = 1ULL << 40};
    struct exec_env *env = t_env(&p);
    cJSON *res = t_run_in(env, "x = 1\nx");
    assert_string_equal(t_str(res, "outcome"), "ok");
    cJSON_Delete(res);
    flag = 1; /* what the worker's SIGUSR1 handler does */
    res = t_run_in(env, "try:\n    while True:\n        pass\nexcept BaseException:\n"
                        "    print('caught')");
    assert_string_equal(t_str(res, "outcome"), "cancelled");
    assert_non_null(strstr(t_err(res, "message"), "Code execution was cancelled"));
    assert_string_equal(t_str(res, "logs"), "");
    cJSON_Delete(res);
    exec_env_free(env);
}

static void
test_audit_hook(void **state)
{
    (void) state;
    /* library code that evaluates a string the snippet wrote */
    static const char *const typing[] = {EXEC_DEFAULT_IMPORTS, "typing", "dataclasses"};
    struct exec_policy p = {.imports = typing, .n_imports = sizeof(typing) / sizeof(typing[0])};
    assert_policy(&p,
                  "import typing\nclass C:\n    x: \"__import__('os').getpid()\"\n"
                  "typing.get_type_hints(C)",
                  "Forbidden while a snippet runs: compiling or running code from a string "
                  "(exec in typing.py, _evaluate)");
    /* its neighbours: annotations that are not strings, dataclasses, namedtuple */
    assert_policy(&p,
                  "import typing, dataclasses, collections\nclass C:\n    x: int\n"
                  "@dataclasses.dataclass\nclass D:\n    a: int\n    b: str = 'b'\n"
                  "P = collections.namedtuple('P', 'u v')\n"
                  "typing.get_type_hints(C), D(1), P(1, 2)",
                  "({'x': <class 'int'>}, D(a=1, b='b'), P(u=1, v=2))");
    /* a field name that is code, set through the allowed __annotations__ */
    assert_policy(&p,
                  "import dataclasses\nclass D:\n    pass\n"
                  "D.__annotations__ = {'a=print(1)': int}\ndataclasses.dataclass(D)",
                  "a dataclass field whose name is not an identifier");
}

/* The audit hook is the last line: it must hold even when a snippet holds what the walk's
 * checks exist to keep from it. Simulated by putting such objects in its namespace directly:
 * the real compile() inside a list (C code calls it: map(map, ...)), and a function whose code
 * says it is "<frozen importlib._bootstrap>", the name the import system's frames have. */
static void
test_audit_hook_holds_alone(void **state)
{
    (void) state;
    struct exec_env *env = t_env(NULL);
    PyObject *ns = Py_BuildValue("{s:s,s:O}", "__name__", "__main__", "__builtins__",
                                 PyEval_GetBuiltins());
    PyObject *code = Py_CompileString("def fake_import(path):\n    open(path, 'w').close()\n",
                                      "<frozen importlib._bootstrap>", Py_file_input);
    PyObject *done = ns && code ? PyEval_EvalCode(code, ns, ns) : NULL;
    PyObject *leaked = Py_BuildValue("[O]", PyDict_GetItemString(PyEval_GetBuiltins(), "compile"));
    assert_true(done && leaked && PyDict_SetItemString(env->globals, "leaked", leaked) == 0 &&
                PyDict_SetItemString(env->globals, "fake_import",
                                     PyDict_GetItemString(ns, "fake_import")) == 0);
    Py_DECREF(leaked);
    Py_DECREF(done);
    Py_DECREF(code);
    Py_DECREF(ns);

    /* Called back by namedtuple, whose frame may compile: the snippet may not, from there. */
    cJSON *res = t_run_in(env, "import collections\n"
                               "class Names:\n"
                               "    def __iter__(self):\n"
                               "        list(map(list, map(map, leaked, [['1']], [['f']], "
                               "[['eval']])))\n"
                               "        return iter(['a'])\n"
                               "collections.namedtuple('T', Names())");
    const char *msg = t_err(res, "message");
    assert_non_null(msg);
    assert_non_null(
            strstr(msg, "Forbidden while a snippet runs: compiling or running code from a string "
                        "(compile)"));
    cJSON_Delete(res);
    /* The import system is known by its module, not by the file name its code objects have. */
    char path[] = "/tmp/pyfence-audit-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    char snippet[128];
    snprintf(snippet, sizeof(snippet), "fake_import('%s')", path);
    res = t_run_in(env, snippet);
    msg = t_err(res, "message");
    assert_non_null(msg);
    assert_non_null(strstr(msg, "Forbidden while a snippet runs: opening a file for writing"));
    assert_int_equal(access(path, F_OK), -1);
    cJSON_Delete(res);
    exec_env_free(env);
}

/* Runs source as the code of a library module named module (its own namespace, the real
 * builtins, outside any run, as a module's import is) and binds the names listed, NULL-ended,
 * into env's globals. Returns the namespace (new reference) for checks of its own. */
static PyObject *
t_library(struct exec_env *env, const char *module, const char *source, const char *const *names)
{
    PyObject *ns =
            Py_BuildValue("{s:s,s:O}", "__name__", module, "__builtins__", PyEval_GetBuiltins());
    PyObject *done = ns ? PyRun_String(source, Py_file_input, ns, ns) : NULL;
    if (!done)
        PyErr_Print();
    assert_non_null(done);
    Py_DECREF(done);
    for (; *names; names++)
        assert_int_equal(
                PyDict_SetItemString(env->globals, *names, PyDict_GetItemString(ns, *names)), 0);
    return ns;
}

/* What library code writes to sys.stdout or sys.stderr while a snippet runs is printed output
 * (stdio.c): in the logs, streamed, counted against max_output_bytes; sys.stdin is empty. The
 * streams have nothing to close and take no stores. Outside runs, writes reach the streams
 * CPython made (here the test's own fd 1, redirected to a file to be read back). */
static void
test_std_streams(void **state)
{
    (void) state;
    struct exec_policy p = {.max_output_bytes = 100};
    struct exec_env *env = t_env(&p);
    static const char *const names[] = {"shout", "out", NULL};
    PyObject *ns = t_library(env, "loud",
                             "import sys\n"
                             "out = sys.stdout\n"
                             "def shout(text, times=1):\n"
                             "    for _ in range(times):\n"
                             "        sys.stderr.write(text)\n"
                             "        sys.stdout.write(text.upper())\n"
                             "    return sys.stdin.read(), sys.stdin.readline()\n",
                             names);
    struct chunks c = {0};
    cJSON *res = exec_env_run(env, "print(shout('ab'))", collect, &c);
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_string_equal(t_str(res, "logs"), "abAB('', '')\n");
    assert_string_equal(c.buf, "abAB('', '')\n");
    cJSON_Delete(res);
    res = t_run_in(env, "shout('x' * 9, 20)");
    assert_string_equal(t_str(res, "outcome"), "output_limit");
    assert_int_equal(strlen(t_str(res, "logs")), 100);
    cJSON_Delete(res);
    res = t_run_in(env, "out.close()");
    assert_non_null(strstr(t_err(res, "message"), "has no attribute 'close'"));
    cJSON_Delete(res);
    res = t_run_in(env, "out.write = print");
    assert_non_null(strstr(t_err(res, "message"), "'write' is read-only"));
    cJSON_Delete(res);

    char path[] = "/tmp/pyfence-stdio-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stdout);
    int saved = dup(1);
    assert_true(saved >= 0 && dup2(fd, 1) == 1);
    int rc = PyRun_SimpleString("import sys\nsys.stdout.write('outside')\nsys.stdout.flush()\n");
    assert_true(dup2(saved, 1) == 1);
    close(saved);
    char got[32] = {0};
    assert_true(pread(fd, got, sizeof(got) - 1, 0) >= 0);
    close(fd);
    unlink(path);
    assert_int_equal(rc, 0);
    assert_string_equal(got, "outside");
    Py_DECREF(ns);
    exec_env_free(env);
}

/* `yield from` passes send, throw and close on to its delegate by name: each is judged as the
 * snippet's own it.close would be. The delegate here is an io.BytesIO (module io not allowed)
 * put in the namespace behind the checks' back; closing the generator ran its close unchecked.
 * The neighbour: a snippet generator as the delegate is closed as in CPython. */
static void
test_yield_from_delegate_checked(void **state)
{
    (void) state;
    struct exec_env *env = t_env(NULL);
    static const char *const names[] = {"b", NULL};
    PyObject *ns = t_library(env, "lib", "import io\nb = io.BytesIO(b'x\\ny\\n')\n", names);
    cJSON *res = t_run_in(env, "def g():\n    yield from b\nit = g()\nnext(it)\nit.close()");
    assert_non_null(strstr(t_err(res, "message"), "Forbidden access to _io."));
    assert_non_null(strstr(t_err(res, "message"), "close"));
    cJSON_Delete(res);
    PyObject *closed = PyObject_GetAttrString(PyDict_GetItemString(ns, "b"), "closed");
    assert_true(closed == Py_False);
    Py_XDECREF(closed);
    res = t_run_in(env, "def inner():\n    try:\n        yield 1\n    finally:\n"
                        "        print('inner closed')\n"
                        "def g():\n    yield from inner()\nit = g()\nnext(it)\nit.close()");
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_string_equal(t_str(res, "logs"), "inner closed\n");
    cJSON_Delete(res);
    Py_DECREF(ns);
    exec_env_free(env);
}

/* Code compiled from a string is no module's own code, whatever globals it runs with
 * (exec_frame_module): dataclasses runs the methods it generates for a snippet class in the
 * embedding's __main__ namespace. Shown with a module whose namespace holds two functions
 * reading the module's own __dict__ (answered only to the module's own code while a snippet
 * runs): one compiled from a file, one from a string. */
static void
test_text_code_is_no_modules(void **state)
{
    (void) state;
    static const char *const imports[] = {"pf_textmod", "json"};
    struct exec_policy p = {.imports = imports, .n_imports = 2};
    struct exec_env *env = t_env(&p);
    static const char *const names[] = {"from_file", "from_text", "other", "Fwd", "bump", NULL};
    PyObject *ns = t_library(
            env, "setup",
            "import sys, types\n"
            "m = types.ModuleType('pf_textmod')\n"
            "m.sys = sys\n"
            "sys.modules['pf_textmod'] = m\n"
            "src = 'def {}():\\n    return len(sys.modules[__name__].__dict__) > 0\\n'\n"
            "exec(compile(src.format('from_file'), 'pf_textmod.py', 'exec'), m.__dict__)\n"
            "exec(compile(src.format('from_text'), '<string>', 'exec'), m.__dict__)\n"
            "exec(compile('def other(m):\\n    return len(m.__dict__)\\n', 'pf_textmod.py', "
            "'exec'), m.__dict__)\n"
            "other = m.other\n"
            "fwd = 'class Fwd:\\n    def __setattr__(self, n, v):\\n        "
            "setattr(sys.modules[__name__], n, v)\\n"
            "def bump():\\n    setattr(sys.modules[__name__], \\'count\\', 1)\\n'\n"
            "exec(compile(fwd, 'pf_textmod.py', 'exec'), m.__dict__)\n"
            "Fwd, bump = m.Fwd, m.bump\n"
            "from_file, from_text = m.from_file, m.from_text\n",
            names);
    cJSON *res = t_run_in(env, "from_file()");
    assert_string_equal(t_str(res, "outcome"), "ok");
    cJSON_Delete(res);
    res = t_run_in(env, "from_text()");
    assert_non_null(strstr(t_err(res, "message"),
                           "code of no module reading the namespace of module pf_textmod"));
    cJSON_Delete(res);
    /* another module's namespace, read by a module's own code (pprint's namespace printer
     * did so, case 341) */
    res = t_run_in(env, "import json\nother(json)");
    assert_non_null(strstr(t_err(res, "message"),
                           "pf_textmod reading the namespace of module json through its __dict__"));
    cJSON_Delete(res);
    /* a module's own code sets its attributes, but not from an object's __setattr__ passing a
     * store on (typing's aliases did so, case 353) */
    res = t_run_in(env, "bump()\nf = Fwd()\nf.planted = 1");
    assert_non_null(strstr(t_err(res, "message"),
                           "pf_textmod's code setting attribute 'planted' of module pf_textmod"));
    cJSON_Delete(res);
    PyRun_SimpleString("import sys\ndel sys.modules['pf_textmod']\n");
    Py_DECREF(ns);
    exec_env_free(env);
}

/* A method named after a dunder the snippet may not read is refused as a value however it is
 * reached (policy.c check_method_name): put in a library's list behind the checks' back,
 * object.__getattribute__ (a slot wrapper, an unchecked getattr), a bound method-wrapper, a
 * library class's Python __setstate__, and object.__dict__'s __dict__ getset wrapped in a
 * staticmethod. Names the snippet may read stay held (dict.__repr__, object's
 * __init_subclass__). pprint's namespace printer, which handed the first out (case 347),
 * refuses to be called on anything but a types.SimpleNamespace, directly too (case 354). */
static void
test_dunder_methods_as_values(void **state)
{
    (void) state;
    static const char *const imports[] = {"pprint", "random"};
    struct exec_policy p = {.imports = imports, .n_imports = 2};
    struct exec_env *env = t_env(&p);
    static const char *const names[] = {"held", NULL};
    PyObject *ns = t_library(env, "lib",
                             "import random\n"
                             "held = [object.__getattribute__, (1).__setattr__,\n"
                             "        random.Random.__setstate__,\n"
                             "        staticmethod(object.__dict__['__class__']),\n"
                             "        staticmethod(type.__dict__['__dict__']),\n"
                             "        dict.__repr__, object.__init_subclass__]\n",
                             names);
    static const char *const refused[][2] = {
            {"held[0]", "dunder attribute __getattribute__: a wrapper_descriptor reached"},
            {"held[1]", "dunder attribute __setattr__: a method-wrapper reached"},
            {"held[2]", "dunder attribute __setstate__: a function reached"},
            {"held[4]", "dunder attribute __dict__: a getset_descriptor reached"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        cJSON *res = t_run_in(env, refused[i][0]);
        const char *msg = t_err(res, "message");
        if (!msg || !strstr(msg, refused[i][1]))
            fail_msg("%s: expected %s, got %s", refused[i][0], refused[i][1], msg ? msg : "ok");
        cJSON_Delete(res);
    }
    cJSON *res = t_run_in(env, "[h.__name__ for h in held[5:]] + [type(held[3]).__name__]");
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_non_null(strstr(t_str(res, "output_repr"), "['__repr__', '__init_subclass__', "
                                                      "'staticmethod']"));
    cJSON_Delete(res);
    res = t_run_in(env, "import pprint\npp = pprint.PrettyPrinter()\n"
                        "pprint.PrettyPrinter._pprint_simplenamespace(pp, object, pp._stream, 0, "
                        "0, {}, 0)");
    assert_non_null(strstr(t_err(res, "message"),
                           "pprint's printer _pprint_simplenamespace formatting a type object"));
    cJSON_Delete(res);
    Py_DECREF(ns);
    exec_env_free(env);
}

/* A library class's own __getattr__ is not asked for a dunder a snippet's class may not define
 * while a snippet runs (class_getattr.c), whatever way it got its checking slot: a class made
 * at CPython's start-up (codecs.StreamReaderWriter, forwarding any name to its stream: the walk
 * of object's subclasses at install), one given a __getattr__ after it was made (CPython resets
 * the slot on that store: guard_store.c puts the check back). Outside runs, and for the names a
 * class may define, the library's __getattr__ answers as in CPython. The "library" here is code
 * run outside any run, as a module's import is. */
static void
test_library_getattr(void **state)
{
    (void) state;
    struct exec_env *env = t_env(NULL);
    static const char *const names[] = {"ask", "answer", "srw", "late", NULL};
    PyObject *ns = t_library(env, "libproxy",
                             "import codecs, types\n"
                             "def ask(x, name):\n    return getattr(x, name, 'missing')\n"
                             "def answer(*a):\n    return 'answered'\n"
                             "stream = types.SimpleNamespace(errors='strict')\n"
                             "setattr(stream, '__deepcopy__', answer)\n"
                             "srw = codecs.StreamReaderWriter(stream, codecs.StreamReader, "
                             "codecs.StreamWriter)\n"
                             "class Late:\n    pass\n"
                             "Late.__getattr__ = lambda self, name: answer\n"
                             "late = Late()\n"
                             "outside = ask(srw, '__deepcopy__') is answer and "
                             "ask(late, '__reduce_ex__') is not answer and "
                             "ask(late, '__setstate__') is answer\n",
                             names);
    assert_true(PyDict_GetItemString(ns, "outside") == Py_True);
    Py_DECREF(ns);

    cJSON *res = t_run_in(env, "print(ask(srw, '__deepcopy__'), ask(late, '__setstate__'), "
                               "ask(late, 'x') is answer, ask(late, '__len__') is answer, "
                               "ask(srw, 'errors'))");
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_string_equal(t_str(res, "logs"), "missing missing True True strict\n");
    cJSON_Delete(res);
    /* after the run, CPython's behaviour again */
    PyObject *srw = PyDict_GetItemString(env->globals, "srw");
    PyObject *answered = srw ? PyObject_GetAttrString(srw, "__deepcopy__") : NULL;
    assert_true(answered && answered == PyDict_GetItemString(env->globals, "answer"));
    Py_DECREF(answered);
    exec_env_free(env);
}

/* The run's frame's builtins (main_frame.c) hold nothing the snippet does not have: library
 * code that copies its caller's globals (pandas' Scope did) hands out that frame's, and C code
 * (map, operator.itemgetter, operator.call) can use them where no value check sees them. */
static void
test_frame_builtins(void **state)
{
    (void) state;
    static const char *const imports[] = {"operator"};
    struct exec_policy p = {.imports = imports, .n_imports = 1};
    struct exec_env *env = t_env(&p);
    static const char *const names[] = {"leak", NULL};
    Py_DECREF(t_library(env, "libleak",
                        "import sys\n"
                        "def leak():\n"
                        "    return [sys._getframe(1).f_globals['__builtins__']]\n",
                        names));
    cJSON *res = t_run_in(
            env, "import operator\n"
                 "b = leak()\n"
                 "imp = lambda name: list(map(operator.call, map(operator.itemgetter("
                 "'__import__'), b), [name]))\n"
                 "print(imp('_strptime'), imp('operator'))\n"
                 "for name in ['os', 'sys']:\n"
                 "    try:\n        imp(name)\n"
                 "    except Exception as e:\n        print(type(e).__name__, e)\n"
                 "has = lambda n: list(map(operator.contains, b, [n]))[0]\n"
                 "print([n for n in ['eval', 'exec', 'compile', 'open', 'getattr', 'vars', "
                 "'globals', '__build_class__', 'print', 'breakpoint'] if has(n)])\n"
                 "print(has('len'), has('iter'), has('ValueError'))\n"
                 "for get in [lambda: b[0], lambda: list(map(operator.itemgetter('__import__'), "
                 "b))[0]]:\n"
                 "    try:\n        get()\n"
                 "    except Exception as e:\n        print(type(e).__name__, e)\n");
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_string_equal(
            t_str(res, "logs"),
            "[None] [None]\n"
            "InterpreterError Forbidden import of module os by C code called from the snippet: it "
            "is not among the run's allowed imports\n"
            "InterpreterError Forbidden import of module sys by C code called from the snippet: it "
            "is not among the run's allowed imports\n"
            "[]\n"
            "True True True\n"
            "InterpreterError Forbidden access to a module's namespace\n"
            "InterpreterError Forbidden access to the builtin function __import__\n");
    cJSON_Delete(res);
    exec_env_free(env);
}

/* What library code sees of the stack while a snippet runs (frame_view.c): walking f_back up
 * from its caller it finds the snippet's frame and no further, at the run's top as in a snippet
 * function it called back (where one frame more was the library's own, with the real
 * builtins); sys._getframe past it is refused; f_globals of a frame no longer running (a
 * library function's own, kept after it returned) is refused. Outside runs, CPython's
 * answers. */
static void
test_frame_view(void **state)
{
    (void) state;
    struct exec_policy p = {0};
    struct exec_env *env = t_env(&p);
    static const char *const names[] = {"walk", "call", "deeper", "kept", NULL};
    PyObject *ns = t_library(env, "libframes",
                             "import sys\n"
                             "def walk():\n"
                             "    f, seen = sys._getframe(1), []\n"
                             "    while f is not None:\n"
                             "        seen.append((f.f_code.co_name, f.f_globals['__name__'],\n"
                             "                     'open' in f.f_builtins, sorted(f.f_locals)))\n"
                             "        f = f.f_back\n"
                             "    return seen\n"
                             "def call(f):\n"
                             "    return f()\n"
                             "def deeper(n):\n"
                             "    return sys._getframe(n).f_globals['__name__']\n"
                             "def own():\n"
                             "    return sys._getframe(0)\n"
                             "def kept():\n"
                             "    return own().f_globals['__name__']\n",
                             names);
    cJSON *res = t_run_in(env, "print(walk())\n"
                               "def cb():\n    return walk()\n"
                               "print(call(cb))\n"
                               "print(call(lambda: deeper(1)))\n");
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_string_equal(t_str(res, "logs"), "[('<module>', '__main__', False, ['run'])]\n"
                                            "[('<module>', '__main__', False, ['run'])]\n"
                                            "__main__\n");
    cJSON_Delete(res);
    res = t_run_in(env, "call(lambda: deeper(2))\n");
    assert_string_equal(t_str(res, "outcome"), "error");
    assert_non_null(strstr(t_str(cJSON_GetObjectItem(res, "error"), "message"),
                           "reading a frame past the snippet's"));
    cJSON_Delete(res);
    res = t_run_in(env, "kept()\n");
    assert_string_equal(t_str(res, "outcome"), "error");
    assert_non_null(strstr(t_str(cJSON_GetObjectItem(res, "error"), "message"),
                           "reading f_globals of a frame past the snippet's or no longer running"));
    cJSON_Delete(res);
    /* outside runs, CPython's answers */
    PyObject *name = PyObject_CallNoArgs(PyDict_GetItemString(ns, "kept"));
    assert_non_null(name);
    assert_string_equal(PyUnicode_AsUTF8(name), "libframes");
    Py_DECREF(name);
    Py_DECREF(ns);
    exec_env_free(env);
}

/* The real __import__, getattr, setattr, delattr, vars and open, should a route leak one into a
 * container the walk does not look inside, refuse to be called by C code the snippet calls
 * (map calling map's items here); library code calls them as ever, and outside runs they
 * answer as in CPython (guard_builtins.c). */
static void
test_real_builtins_guarded(void **state)
{
    (void) state;
    struct exec_policy p = {0};
    struct exec_env *env = t_env(&p);
    static const char *const names[] = {"leaked", "uses", NULL};
    PyObject *ns = t_library(env, "libleaky",
                             "def leaked():\n"
                             "    return [__import__, getattr, setattr, delattr, vars, open]\n"
                             "class T:\n"
                             "    a = 1\n"
                             "def uses():\n"
                             "    t = T()\n"
                             "    setattr(t, 'b', 2)\n"
                             "    delattr(t, 'b')\n"
                             "    return (__import__('math').pi > 3, getattr(t, 'a'), vars(t),\n"
                             "            open('/dev/null').read())\n",
                             names);
    static const char *const calls[][2] = {
            {"list(map(list, map(map, leaked()[0:1], [['os']])))", "__import__"},
            {"list(map(list, map(map, leaked()[1:2], [[len]], [['__self__']])))", "getattr"},
            {"list(map(list, map(map, leaked()[2:3], [[len]], [['x']], [[1]])))", "setattr"},
            {"list(map(list, map(map, leaked()[3:4], [[len]], [['x']])))", "delattr"},
            {"list(map(list, map(map, leaked()[4:5], [[len]])))", "vars"},
            {"list(map(list, map(map, leaked()[5:6], [['/etc/hostname']])))", "open"},
    };
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        cJSON *res = t_run_in(env, calls[i][0]);
        char want[160];
        snprintf(want, sizeof(want), "the real builtin %s called on the snippet's behalf",
                 calls[i][1]);
        const char *msg = t_str(cJSON_GetObjectItem(res, "error"), "message");
        if (!msg || !strstr(msg, want))
            fail_msg("%s: outcome %s, %s", calls[i][0], t_str(res, "outcome"),
                     msg ? msg : "no error");
        cJSON_Delete(res);
    }
    cJSON *res = t_run_in(env, "print(uses())\n");
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_string_equal(t_str(res, "logs"), "(True, 1, {}, '')\n");
    cJSON_Delete(res);
    PyObject *leaked = PyObject_CallNoArgs(PyDict_GetItemString(ns, "leaked"));
    assert_non_null(leaked);
    PyObject *math = PyObject_CallFunction(PyList_GET_ITEM(leaked, 0), "s", "math");
    assert_non_null(math);
    Py_DECREF(math);
    Py_DECREF(leaked);
    Py_DECREF(ns);
    exec_env_free(env);
}

/* A ChainMap is a namespace when one of its maps is (nested too, as pandas' DeepChainMap holds
 * a ChainMap): library code wrapped a copy of its caller's globals so (pandas' Scope). */
static void
test_chainmap_namespace(void **state)
{
    (void) state;
    struct exec_env *env = t_env(NULL);
    static const char *const names[] = {"wrap", "mine", NULL};
    Py_DECREF(t_library(env, "libchain",
                        "import sys, collections\n"
                        "def wrap():\n"
                        "    g = sys._getframe(1).f_globals.copy()\n"
                        "    return collections.ChainMap(collections.ChainMap(g, {}))\n"
                        "def mine():\n"
                        "    return collections.ChainMap({'a': 1}, collections.ChainMap())\n",
                        names));
    cJSON *res = t_run_in(env, "print(mine()['a'])\n"
                               "try:\n    wrap()\n"
                               "except Exception as e:\n    print(type(e).__name__, e)\n");
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_string_equal(t_str(res, "logs"),
                        "1\nInterpreterError Forbidden access to a module's namespace\n");
    cJSON_Delete(res);
    exec_env_free(env);
}

/* A code object typing.ForwardRef compiled from the snippet's text (the audit hook lets it
 * compile) and the function class, held where no value check sees them (here put in lists
 * behind the checks' back; a leaked namespace gave both), made a function running that text
 * natively: function.__new__ is refused while a snippet runs. */
static void
test_function_from_code_refused(void **state)
{
    (void) state;
    static const char *const imports[] = {"operator", "typing"};
    struct exec_policy p = {.imports = imports, .n_imports = 2};
    struct exec_env *env = t_env(&p);
    static const char *const names[] = {"FT", "getcode", NULL};
    Py_DECREF(t_library(env, "libfn",
                        "import operator, types\n"
                        "FT = [types.FunctionType]\n"
                        "getcode = [operator.attrgetter('__forward_code__')]\n",
                        names));
    cJSON *res = t_run_in(env, "import operator, typing\n"
                               "code = list(map(operator.call, getcode, "
                               "[typing.ForwardRef('6 * 7')]))\n"
                               "try:\n"
                               "    fn = list(map(operator.call, FT, code, [{}]))\n"
                               "    print(list(map(operator.call, fn)))\n"
                               "except Exception as e:\n    print(type(e).__name__, e)\n");
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_string_equal(t_str(res, "logs"),
                        "InterpreterError Forbidden while a snippet runs: making a function from "
                        "a code object (function.__new__)\n");
    cJSON_Delete(res);
    /* outside runs (the daemon's own code, imports before them) the class works as ever */
    PyObject *types = PyImport_ImportModule("types");
    PyObject *ft = types ? PyObject_GetAttrString(types, "FunctionType") : NULL;
    PyObject *code = Py_CompileString("42", "<t>", Py_eval_input);
    PyObject *globals = PyDict_New();
    PyObject *fn =
            ft && code && globals ? PyObject_CallFunctionObjArgs(ft, code, globals, NULL) : NULL;
    assert_non_null(fn);
    Py_XDECREF(fn);
    Py_XDECREF(globals);
    Py_XDECREF(code);
    Py_XDECREF(ft);
    Py_XDECREF(types);
    exec_env_free(env);
}

static void
test_final_answer_from_function(void **state)
{
    (void) state;
    struct exec_env *env = t_env(NULL);
    /* smolagents' FinalAnswerException is a BaseException: `except Exception` lets it pass,
     * finally blocks and with exits run on the way out */
    cJSON *res = t_run_in(env, "class CM:\n    def __enter__(self):\n        pass\n"
                               "    def __exit__(self, *a):\n        print('exit')\n"
                               "def solve():\n    try:\n        with CM():\n"
                               "            final_answer('in try')\n"
                               "    except Exception:\n        return 'swallowed'\n"
                               "    finally:\n        print('finally')\n"
                               "solve()\nprint('never')");
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_string_equal(t_str(res, "output_repr"), "'in try'");
    assert_string_equal(t_str(res, "logs"), "exit\nfinally\n");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(res, "is_final_answer")));
    cJSON_Delete(res);
    /* as there, `except BaseException` catches it: the run goes on without an answer */
    res = t_run_in(env, "try:\n    final_answer(1)\nexcept BaseException as e:\n"
                        "    print(type(e).__name__, e.value)\n'next'");
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_string_equal(t_str(res, "logs"), "FinalAnswerException 1\n");
    assert_string_equal(t_str(res, "output_repr"), "'next'");
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(res, "is_final_answer")));
    cJSON_Delete(res);
    exec_env_free(env);
}

/* The run's frame's globals belong to the environment's trampoline, kept across runs: what
 * library code wrote into its caller's globals in one run is gone in the next. */
static void
test_frame_globals_reset(void **state)
{
    (void) state;
    struct exec_policy p = {0};
    struct exec_env *env = t_env(&p);
    static const char *const names[] = {"plant", "peek", NULL};
    Py_DECREF(t_library(env, "libframeglobals",
                        "import sys\n"
                        "def plant():\n"
                        "    g = sys._getframe(1).f_globals\n"
                        "    g['x'] = 1\n"
                        "    g['__builtins__'] = 'planted'\n"
                        "def peek():\n"
                        "    g = sys._getframe(1).f_globals\n"
                        "    return sorted(g), type(g['__builtins__']).__name__, g['__name__']\n",
                        names));
    for (int run = 0; run < 2; run++) {
        cJSON *res = t_run_in(env, run == 0 ? "plant()\nprint(peek())" : "print(peek())");
        assert_string_equal(t_str(res, "outcome"), "ok");
        assert_string_equal(t_str(res, "logs"),
                            run == 0 ? "(['__builtins__', '__name__', 'x'], 'str', '__main__')\n"
                                     : "(['__builtins__', '__name__'], 'dict', '__main__')\n");
        cJSON_Delete(res);
    }
    exec_env_free(env);
}

/* Snippet code that library Python code calls back (a function, a generator it drives or
 * throws into) stands on a trampoline frame of its own: library code it calls in turn finds
 * __main__'s globals one frame up, not the real builtins of the library that called back.
 * Exceptions cross the trampoline both ways. Called back from a library frame at Python's
 * recursion limit, where the trampoline cannot be pushed, the callback is refused with that
 * RecursionError rather than run on the library's frame. */
static void
test_callback_frame(void **state)
{
    (void) state;
    struct exec_policy p = {0};
    struct exec_env *env = t_env(&p);
    static const char *const names[] = {"peek", "call", "drive", "thrower", "at_depth", NULL};
    Py_DECREF(t_library(env, "libcallback",
                        "import sys\n"
                        "def peek():\n"
                        "    g = sys._getframe(1).f_globals\n"
                        "    return g['__name__'], 'open' in g['__builtins__']\n"
                        "def call(f):\n"
                        "    return f()\n"
                        "def drive(g):\n"
                        "    return [x for x in g]\n"
                        "def thrower(g):\n"
                        "    next(g)\n"
                        "    return g.throw(ValueError('thrown'))\n"
                        "reached = []\n"
                        "def chain(n, f):\n"
                        "    if n == 0:\n"
                        "        reached.append(1)\n"
                        "        return f()\n"
                        "    return chain(n - 1, f)\n"
                        "def at_depth(f, n):\n"
                        "    reached.clear()\n"
                        "    old = sys.getrecursionlimit()\n"
                        "    sys.setrecursionlimit(80)\n"
                        "    try:\n"
                        "        return chain(n, f)\n"
                        "    except RecursionError:\n"
                        "        return 'refused' if reached else 'too deep'\n"
                        "    finally:\n"
                        "        sys.setrecursionlimit(old)\n",
                        names));
    cJSON *res = t_run_in(env, "print(peek())\n"
                               "def cb():\n    return peek()\n"
                               "print(call(cb))\n"
                               "def gen():\n    yield peek()\n"
                               "print(drive(gen()))\n"
                               "def bad():\n    raise KeyError('from the callback')\n"
                               "try:\n    call(bad)\n"
                               "except KeyError as e:\n    print('caught', e)\n"
                               "def catcher():\n"
                               "    try:\n        yield 1\n"
                               "    except ValueError as e:\n        yield str(e)\n"
                               "print(thrower(catcher()))\n"
                               "def ran():\n    return 'ran'\n"
                               "r = [at_depth(ran, n) for n in range(100)]\n"
                               "print(r[0], 'refused' in r, r[-1])\n");
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_string_equal(t_str(res, "logs"), "('__main__', False)\n"
                                            "('__main__', False)\n"
                                            "[('__main__', False)]\n"
                                            "caught 'from the callback'\n"
                                            "thrown\n"
                                            "ran True too deep\n");
    cJSON_Delete(res);
    exec_env_free(env);
}

/* The frame's builtins are made with the prebuilt environment, before its policy is known:
 * what the policy removes must leave them too (else library code copying its caller's globals
 * hands the snippet a builtin its profile took away), and what it adds comes in. */
static void
test_frame_builtins_follow_policy(void **state)
{
    (void) state;
    static const char *const imports[] = {"operator"};
    const char *add[] = {"id"};
    const char *remove[] = {"len", "sorted"};
    struct exec_policy p = {.imports = imports,
                            .n_imports = 1,
                            .builtins_add = add,
                            .n_builtins_add = 1,
                            .builtins_remove = remove,
                            .n_builtins_remove = 2};
    struct exec_env *env = t_env(&p);
    static const char *const names[] = {"leak", NULL};
    Py_DECREF(t_library(env, "libleak2",
                        "import sys\n"
                        "def leak():\n"
                        "    return [sys._getframe(1).f_globals['__builtins__']]\n",
                        names));
    cJSON *res = t_run_in(env, "import operator\n"
                               "b = leak()\n"
                               "has = lambda n: list(map(operator.contains, b, [n]))[0]\n"
                               "print([has(n) for n in ['len', 'sorted', 'id', 'abs', "
                               "'__import__']])\n");
    assert_string_equal(t_str(res, "outcome"), "ok");
    assert_string_equal(t_str(res, "logs"), "[False, False, True, True, True]\n");
    cJSON_Delete(res);
    exec_env_free(env);
}

/* A profile's builtins_add / builtins_remove: only the addable ones come in, only builtins
 * snippets have go out, and nothing else is accepted, whatever the daemon sent. */
static void
test_builtins_add_remove(void **state)
{
    (void) state;
    const char *add[] = {"id", "memoryview"};
    const char *remove[] = {"len", "print"};
    struct exec_policy p = {.builtins_add = add,
                            .n_builtins_add = 2,
                            .builtins_remove = remove,
                            .n_builtins_remove = 2};
    assert_policy(&p, "type(id(1)).__name__", "'int'");
    assert_policy(&p, "bytes(memoryview(b'ab'))", "b'ab'");
    assert_policy(&p, "len('ab')", "'len' is not among the explicitly allowed tools");
    assert_policy(&p, "print(1)", "'print' is not among the explicitly allowed tools");
    assert_policy(&p, "abs(-2)", "2");
    assert_eval_fails("id(1)", "'id' is not among the explicitly allowed tools");

    const char *bad_add[][1] = {{"eval"}, {"open"}, {"exec"}, {"compile"}, {"globals"}};
    for (size_t i = 0; i < sizeof(bad_add) / sizeof(bad_add[0]); i++) {
        struct pf_error *err = NULL;
        struct exec_policy q = {.builtins_add = bad_add[i], .n_builtins_add = 1};
        struct exec_env *env = exec_env_new(&q, &err);
        assert_null(env);
        assert_non_null(err);
        assert_non_null(strstr(err->msg, "cannot be added"));
        pf_error_free(err);
    }
    const char *bad_remove[] = {"lenn"};
    struct pf_error *err = NULL;
    struct exec_policy q = {.builtins_remove = bad_remove, .n_builtins_remove = 1};
    assert_null(exec_env_new(&q, &err));
    assert_non_null(err);
    assert_non_null(strstr(err->msg, "builtins_remove[0]: 'lenn'"));
    pf_error_free(err);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_import_allow_list),
            cmocka_unit_test(test_modules_through_attributes),
            cmocka_unit_test(test_dunders),
            cmocka_unit_test(test_builtins_refused),
            cmocka_unit_test(test_str_subclass_names),
            cmocka_unit_test(test_budget_ops),
            cmocka_unit_test(test_budget_while),
            cmocka_unit_test(test_budget_timeout),
            cmocka_unit_test(test_memory_error),
            cmocka_unit_test(test_print_capture),
            cmocka_unit_test(test_output_limit),
            cmocka_unit_test(test_logs_truncation),
            cmocka_unit_test(test_final_answer),
            cmocka_unit_test(test_budget_survives_swallowing),
            cmocka_unit_test(test_private_module_attributes),
            cmocka_unit_test(test_frames_and_code),
            cmocka_unit_test(test_match_class_dunder),
            cmocka_unit_test(test_budgets_cannot_be_caught),
            cmocka_unit_test(test_audit_hook_holds_alone),
            cmocka_unit_test(test_final_answer_from_function),
            cmocka_unit_test(test_logs_nul),
            cmocka_unit_test(test_audit_hook),
            cmocka_unit_test(test_cancel_flag),
            cmocka_unit_test(test_operator_getters),
            cmocka_unit_test(test_string_formatter),
            cmocka_unit_test(test_builtins_add_remove),
            cmocka_unit_test(test_library_getattr),
            cmocka_unit_test(test_std_streams),
            cmocka_unit_test(test_yield_from_delegate_checked),
            cmocka_unit_test(test_text_code_is_no_modules),
            cmocka_unit_test(test_dunder_methods_as_values),
            cmocka_unit_test(test_frame_builtins),
            cmocka_unit_test(test_frame_builtins_follow_policy),
            cmocka_unit_test(test_frame_globals_reset),
            cmocka_unit_test(test_callback_frame),
            cmocka_unit_test(test_frame_view),
            cmocka_unit_test(test_real_builtins_guarded),
            cmocka_unit_test(test_chainmap_namespace),
            cmocka_unit_test(test_function_from_code_refused),
    };
    return cmocka_run_group_tests(tests, t_setup_python, NULL);
}
