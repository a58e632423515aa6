/* What a required layer's failure turns into (harden_required_failed, harden.c): the job's error
 * is hardening_unavailable, naming the layer, the cause and what an operator can do; only the
 * zygote's death under the worker keeps its own code. Then through worker_harden() in a forked
 * child with no zygote behind it, so that the namespaces layer has nothing to give: required, it
 * refuses with that code; best-effort, the worker goes on without it. Needs no root. */
/* cmocka.h needs these first, in this order. */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */
#include <string.h>

#include "harden_internal.h"
#include "harden_test_child.h"

static void
assert_has(const char *haystack, const char *needle)
{
    if (!strstr(haystack, needle))
        fail_msg("\"%s\" does not say \"%s\"", haystack, needle);
}

static struct pf_error *
cause(int code, const char *msg)
{
    struct pf_error *e = NULL;
    pf_error_set(&e, code, "%s", msg);
    assert_non_null(e);
    return e;
}

static void
test_required_failure_is_hardening_unavailable(void **state)
{
    (void) state;
    struct pf_error *err = NULL;
    assert_int_equal(
            harden_required_failed(HARDEN_LAYER_LANDLOCK,
                                   cause(PF_E_INTERNAL, "landlock: create ruleset: ENOSYS"), &err),
            -1);
    assert_non_null(err);
    assert_int_equal(err->code, PF_E_HARDENING_UNAVAILABLE);
    assert_string_equal(pf_code_name(err->code), "hardening_unavailable");
    assert_has(err->msg, "hardening layer 'landlock' is required and this host cannot give it");
    assert_has(err->msg, "landlock: create ruleset: ENOSYS");
    assert_has(err->msg, "`pyfenced --check`");
    assert_has(err->msg, "\"best-effort\" in the profile's \"hardening\"");
    if (geteuid() != 0)
        assert_has(err->msg, "run it as root");
    else
        assert_null(strstr(err->msg, "as root"));
    err = pf_error_free(err);

    /* Whatever code the layer used: a required layer that did not hold is this outcome. */
    assert_int_equal(harden_required_failed(HARDEN_LAYER_IDENTITY,
                                            cause(PF_E_CONFIG, "identity: refusing uid 0"), &err),
                     -1);
    assert_int_equal(err->code, PF_E_HARDENING_UNAVAILABLE);
    assert_has(err->msg, "hardening layer 'identity'");
    err = pf_error_free(err);

    /* No cause (out of memory in the layer): still refused, still named. */
    assert_int_equal(harden_required_failed(HARDEN_LAYER_SECCOMP, NULL, &err), -1);
    assert_int_equal(err->code, PF_E_HARDENING_UNAVAILABLE);
    assert_has(err->msg, "hardening layer 'seccomp'");
    pf_error_free(err);
}

static void
test_namespaces_advice_without_root(void **state)
{
    (void) state;
    struct pf_error *err = NULL;
    harden_required_failed(HARDEN_LAYER_NAMESPACES,
                           cause(PF_E_INTERNAL, "namespaces: unavailable (why)"), &err);
    assert_int_equal(err->code, PF_E_HARDENING_UNAVAILABLE);
    if (geteuid() == 0) {
        assert_has(err->msg, "--namespaces");
    } else {
        /* harden_ns.c's message says what to do: best-effort would be raised to required
         * there, so the generic advice would be wrong. */
        assert_null(strstr(err->msg, "best-effort"));
    }
    pf_error_free(err);
}

static void
test_dead_zygote_is_not_the_hosts_fault(void **state)
{
    (void) state;
    struct pf_error *err = NULL;
    harden_required_failed(
            HARDEN_LAYER_FDS,
            cause(PF_E_WORKER_CRASHED, "the zygote (pid 7) died before the worker was hardened"),
            &err);
    assert_int_equal(err->code, PF_E_WORKER_CRASHED);
    assert_has(err->msg, "hardening layer 'fds': the zygote (pid 7) died");
    pf_error_free(err);
}

static void
test_first_error_wins(void **state)
{
    (void) state;
    struct pf_error *err = cause(PF_E_BUSY, "earlier");
    assert_int_equal(
            harden_required_failed(HARDEN_LAYER_CGROUP, cause(PF_E_INTERNAL, "later"), &err), -1);
    assert_int_equal(err->code, PF_E_BUSY);
    assert_string_equal(err->msg, "earlier");
    pf_error_free(err);
    /* No err at all: the cause is still freed (LeakSanitizer checks). */
    assert_int_equal(harden_required_failed(HARDEN_LAYER_CGROUP, cause(PF_E_INTERNAL, "x"), NULL),
                     -1);
}

/* Every layer off but namespaces, at the level in arg; no zygote prepared any namespace. The
 * child exits with the error's code, or 0 when worker_harden() let it through. */
static int
namespaces_only(void *arg)
{
    struct harden_params p = {.scratch_mb = 1};
    p.level[HARDEN_LAYER_NAMESPACES] = *(enum harden_level *) arg;
    struct pf_error *err = NULL;
    if (worker_harden(&p, 3, &err) >= 0)
        return 0;
    child_say(err ? err->msg : "no error");
    return err ? err->code : 100;
}

static void
test_worker_harden_refuses_a_required_layer(void **state)
{
    (void) state;
    enum harden_level level = HARDEN_REQUIRED;
    struct child_result r;
    assert_int_equal(run_child(namespaces_only, &level, &r), 0);
    assert_true(WIFEXITED(r.status));
    if (WEXITSTATUS(r.status) != PF_E_HARDENING_UNAVAILABLE)
        fail_msg("exit %d: %s", WEXITSTATUS(r.status), r.out);
    assert_has(r.out, "hardening layer 'namespaces' is required and this host cannot give it");
    assert_has(r.out, "namespaces: unavailable");

    level = HARDEN_BEST_EFFORT;
    assert_int_equal(run_child(namespaces_only, &level, &r), 0);
    assert_true(WIFEXITED(r.status));
    if (WEXITSTATUS(r.status) != 0)
        fail_msg("best-effort refused: exit %d: %s", WEXITSTATUS(r.status), r.out);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_required_failure_is_hardening_unavailable),
            cmocka_unit_test(test_namespaces_advice_without_root),
            cmocka_unit_test(test_dead_zygote_is_not_the_hosts_fault),
            cmocka_unit_test(test_first_error_wins),
            cmocka_unit_test(test_worker_harden_refuses_a_required_layer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
