/* Shared helpers of the executor unit tests (test_exec_*.c): run a snippet in a fresh or given
 * environment and look at the result object. Header-only so each test binary stays one file. */
#ifndef TESTS_UNIT_TEST_EXEC_UTIL_H
#define TESTS_UNIT_TEST_EXEC_UTIL_H

#include <Python.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
/* cmocka.h needs the headers above */
#include <cmocka.h>

#include "exec.h"

/* A policy's imports as the default profile has them (smolagents' base modules) when the test
 * gives none (imports NULL); an empty list that is not NULL allows no import. */
static struct exec_env *
t_env(const struct exec_policy *p)
{
    static const char *const base[] = {EXEC_DEFAULT_IMPORTS};
    struct exec_policy def = p ? *p : (struct exec_policy){0};
    if (!def.imports) {
        def.imports = base;
        def.n_imports = sizeof(base) / sizeof(base[0]);
    }
    struct pf_error *err = NULL;
    struct exec_env *env = exec_env_new(&def, &err);
    if (!env)
        fail_msg("exec_env_new: %s", err ? err->msg : "?");
    return env;
}

/* Runs code in env; the caller frees the result. */
static cJSON *
t_run_in(struct exec_env *env, const char *code)
{
    cJSON *res = exec_env_run(env, code, NULL, NULL);
    assert_non_null(res);
    return res;
}

static const char *
t_str(const cJSON *res, const char *field)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(res, field);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

static const char *
t_err(const cJSON *res, const char *field)
{
    return t_str(cJSON_GetObjectItemCaseSensitive(res, "error"), field);
}

/* The repr of the snippet's value ("None" when it has none), or the error message. */
static char *
t_eval(const char *code, const struct exec_policy *p)
{
    struct exec_env *env = t_env(p);
    cJSON *res = t_run_in(env, code);
    char *out;
    if (strcmp(t_str(res, "outcome"), "ok") != 0)
        out = strdup(t_err(res, "message"));
    else
        out = strdup(t_str(res, "output_repr") ? t_str(res, "output_repr") : "None");
    cJSON_Delete(res);
    exec_env_free(env);
    return out;
}

#define assert_eval(code, expected)                                                         \
    do {                                                                                    \
        char *_got = t_eval((code), NULL);                                                  \
        if (strcmp(_got, (expected)) != 0)                                                  \
            fail_msg("snippet:\n%s\nexpected: %s\ngot:      %s", (code), (expected), _got); \
        free(_got);                                                                         \
    } while (0)

/* The error message must contain `needle`. */
#define assert_eval_fails(code, needle)                                                           \
    do {                                                                                          \
        char *_got = t_eval((code), NULL);                                                        \
        if (!strstr(_got, (needle)))                                                              \
            fail_msg("snippet:\n%s\nexpected an error containing: %s\ngot: %s", (code), (needle), \
                     _got);                                                                       \
        free(_got);                                                                               \
    } while (0)

/* Embedded CPython is never finalised (the worker exits instead), so LeakSanitizer would report
 * every interpreter allocation; only leaks outside libpython are ours to see. */
const char *__lsan_default_suppressions(void);
const char *
__lsan_default_suppressions(void)
{
    return "leak:libpython3.11.so\n";
}

static int
t_setup_python(void **state)
{
    (void) state;
    struct pf_error *err = NULL;
    if (exec_python_init(&err) < 0) {
        fprintf(stderr, "embedded CPython unavailable: %s\n", err->msg);
        exit(77);
    }
    return 0;
}

#endif
