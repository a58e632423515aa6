/* The limits table: defaults in range, set() bounds, tighten() never loosens. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "policy_limits.h"

static void
test_defaults_within_bounds(void **state)
{
    (void) state;
    struct policy_limits l;
    policy_limits_init_defaults(&l);
    for (int i = 0; i < _POLICY_LIMIT_MAX; i++) {
        const struct policy_limit_def *d = policy_limit_def((enum policy_limit) i);
        assert_non_null(d);
        assert_true(d->min <= d->def && d->def <= d->max);
        assert_int_equal(l.v[i], d->def);
        assert_int_equal(policy_limit_from_name(d->name), i);
    }
    assert_int_equal(policy_limit_from_name("no_such_limit"), _POLICY_LIMIT_INVALID);
}

static void
test_set_names_the_limit(void **state)
{
    (void) state;
    struct policy_limits l;
    struct pf_error *err = NULL;
    policy_limits_init_defaults(&l);
    assert_int_equal(policy_limits_set(&l, POLICY_LIMIT_MEMORY_MB, 9000,
                                       "profiles/x.json: limits.memory_mb", &err),
                     -1);
    assert_string_equal(err->msg, "profiles/x.json: limits.memory_mb: 9000 exceeds maximum 4096");
    err = pf_error_free(err);
    assert_int_equal(policy_limits_set(&l, POLICY_LIMIT_MEMORY_MB, 256, "x", &err), 0);
    assert_int_equal(l.v[POLICY_LIMIT_MEMORY_MB], 256);
}

static void
test_tighten_only(void **state)
{
    (void) state;
    struct policy_limits l;
    struct pf_error *err = NULL;
    policy_limits_init_defaults(&l);

    cJSON *ok = cJSON_Parse("{\"timeout_ms\": 500, \"max_ops\": 1000}");
    assert_int_equal(policy_limits_tighten(&l, ok, "limits", &err), 0);
    assert_int_equal(l.v[POLICY_LIMIT_TIMEOUT_MS], 500);
    assert_int_equal(l.v[POLICY_LIMIT_MAX_OPS], 1000);
    cJSON_Delete(ok);

    /* Loosening is refused, and nothing is half-applied. */
    cJSON *loose = cJSON_Parse("{\"max_ops\": 10, \"timeout_ms\": 900}");
    assert_int_equal(policy_limits_tighten(&l, loose, "limits", &err), -1);
    assert_non_null(strstr(err->msg, "limits.timeout_ms: 900 would loosen the profile's 500"));
    assert_int_equal(l.v[POLICY_LIMIT_MAX_OPS], 1000);
    err = pf_error_free(err);
    cJSON_Delete(loose);

    const char *bad[] = {"{\"max_frame_bytes\": 10}", "{\"nope\": 1}",
                         "{\"timeout_ms\": 1.5}",     "{\"timeout_ms\": \"1\"}",
                         "{\"timeout_ms\": 0}",       "[1]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cJSON *j = cJSON_Parse(bad[i]);
        assert_int_equal(policy_limits_tighten(&l, j, "limits", &err), -1);
        assert_int_equal(err->code, PF_E_BAD_REQUEST);
        err = pf_error_free(err);
        cJSON_Delete(j);
    }
}

/* Past int64 (or past the 2^53 a double holds exactly), a value is still a number too large or
 * too small, and gets the message any such value gets: not "is not an integer". */
static void
test_tighten_out_of_range(void **state)
{
    (void) state;
    static const struct {
        const char *json, *msg;
    } cases[] = {
            {"{\"timeout_ms\": 9223372036854775808}",
             "limits.timeout_ms: 9.223372036854776e+18 would loosen the profile's 30000 (a request "
             "may only tighten limits)"},
            {"{\"timeout_ms\": 1e300}",
             "limits.timeout_ms: 1e+300 would loosen the profile's 30000 (a request may only "
             "tighten limits)"},
            {"{\"timeout_ms\": 9007199254740993}",
             "limits.timeout_ms: 9007199254740992 would loosen the profile's 30000 (a request may "
             "only tighten limits)"},
            {"{\"timeout_ms\": -9223372036854775809}",
             "limits.timeout_ms: -9.223372036854776e+18 is below minimum 1"},
            {"{\"max_ops\": -1e300}", "limits.max_ops: -1e+300 is below minimum 1"},
            {"{\"timeout_ms\": 1.5}", "limits.timeout_ms: 1.5 is not an integer"},
            /* the value as written, whatever its type (requests and profiles alike) */
            {"{\"timeout_ms\": \"500\"}", "limits.timeout_ms: \"500\" is not an integer"},
            {"{\"timeout_ms\": null}", "limits.timeout_ms: null is not an integer"},
            {"{\"timeout_ms\": false}", "limits.timeout_ms: false is not an integer"},
            {"{\"timeout_ms\": [1]}", "limits.timeout_ms: an array is not an integer"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct policy_limits l;
        struct pf_error *err = NULL;
        policy_limits_init_defaults(&l);
        cJSON *j = cJSON_Parse(cases[i].json);
        assert_non_null(j);
        assert_int_equal(policy_limits_tighten(&l, j, "limits", &err), -1);
        assert_int_equal(err->code, PF_E_BAD_REQUEST);
        assert_string_equal(err->msg, cases[i].msg);
        assert_int_equal(l.v[POLICY_LIMIT_TIMEOUT_MS], 30000);
        pf_error_free(err);
        cJSON_Delete(j);
    }
}

/* scratch_mb, the worker's private /tmp: 16 MiB by default (what the scratch was before it had a
 * limit of its own), never 0 (a tmpfs of size 0 is unlimited), a request may shrink it, and it
 * is independent of file_size_mb. */
static void
test_scratch_mb(void **state)
{
    (void) state;
    const struct policy_limit_def *d = policy_limit_def(POLICY_LIMIT_SCRATCH_MB);
    assert_string_equal(d->name, "scratch_mb");
    assert_int_equal(d->scope, POLICY_SCOPE_JOB);
    assert_int_equal(d->def, 16);
    assert_int_equal(d->min, 1);
    assert_int_equal(d->max, 4096);
    assert_int_equal(policy_limit_from_name("scratch_mb"), POLICY_LIMIT_SCRATCH_MB);

    struct policy_limits l;
    struct pf_error *err = NULL;
    policy_limits_init_defaults(&l);
    assert_int_equal(l.v[POLICY_LIMIT_SCRATCH_MB], 16);
    assert_int_equal(policy_limits_set(&l, POLICY_LIMIT_SCRATCH_MB, 0, "limits.scratch_mb", &err),
                     -1);
    assert_string_equal(err->msg, "limits.scratch_mb: 0 is below minimum 1");
    err = pf_error_free(err);
    assert_int_equal(
            policy_limits_set(&l, POLICY_LIMIT_SCRATCH_MB, 4097, "limits.scratch_mb", &err), -1);
    assert_string_equal(err->msg, "limits.scratch_mb: 4097 exceeds maximum 4096");
    err = pf_error_free(err);
    assert_int_equal(policy_limits_set(&l, POLICY_LIMIT_SCRATCH_MB, 4096, "x", &err), 0);
    assert_int_equal(policy_limits_set(&l, POLICY_LIMIT_SCRATCH_MB, 1, "x", &err), 0);
    assert_int_equal(l.v[POLICY_LIMIT_SCRATCH_MB], 1);

    policy_limits_init_defaults(&l);
    cJSON *j = cJSON_Parse("{\"scratch_mb\": 2}");
    assert_int_equal(policy_limits_tighten(&l, j, "limits", &err), 0);
    assert_int_equal(l.v[POLICY_LIMIT_SCRATCH_MB], 2);
    assert_int_equal(l.v[POLICY_LIMIT_FILE_SIZE_MB], 16);
    cJSON_Delete(j);
    static const struct {
        const char *json, *msg;
    } refused[] = {
            {"{\"scratch_mb\": 0}", "limits.scratch_mb: 0 is below minimum 1"},
            {"{\"scratch_mb\": 3}",
             "limits.scratch_mb: 3 would loosen the profile's 2 (a request may only tighten "
             "limits)"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        j = cJSON_Parse(refused[i].json);
        assert_int_equal(policy_limits_tighten(&l, j, "limits", &err), -1);
        assert_string_equal(err->msg, refused[i].msg);
        err = pf_error_free(err);
        cJSON_Delete(j);
    }
    assert_int_equal(l.v[POLICY_LIMIT_SCRATCH_MB], 2);

    cJSON *out = policy_limits_to_json(&l, POLICY_SCOPE_JOB);
    assert_int_equal(cJSON_GetObjectItem(out, "scratch_mb")->valuedouble, 2);
    cJSON_Delete(out);
}

/* A client's key is echoed cut to 64 bytes (on a character boundary), not in full. */
static void
test_tighten_long_key_cut(void **state)
{
    (void) state;
    struct policy_limits l;
    struct pf_error *err = NULL;
    policy_limits_init_defaults(&l);
    size_t n = 50000;
    char *json = malloc(n * 2 + 16);
    assert_non_null(json);
    strcpy(json, "{\"y");
    for (size_t i = 0; i < n; i++)
        memcpy(json + 3 + 2 * i, "\xc3\xa9", 2); /* é: the cut falls inside one */
    strcpy(json + 3 + 2 * n, "\": 1}");
    cJSON *j = cJSON_Parse(json);
    free(json);
    assert_non_null(j);
    assert_int_equal(policy_limits_tighten(&l, j, "limits", &err), -1);
    char want[128] = "limits.y";
    for (int i = 0; i < 31; i++)
        strcat(want, "\xc3\xa9");
    strcat(want, ": not a per-job limit");
    assert_string_equal(err->msg, want);
    pf_error_free(err);
    cJSON_Delete(j);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_defaults_within_bounds),
            cmocka_unit_test(test_set_names_the_limit),
            cmocka_unit_test(test_tighten_only),
            cmocka_unit_test(test_tighten_out_of_range),
            cmocka_unit_test(test_tighten_long_key_cut),
            cmocka_unit_test(test_scratch_mb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
