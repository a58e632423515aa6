/* Policy warnings (policy_warnings.h): each hardening layer a profile turns off below its
 * default is named with what it means for a root and for an unprivileged pyfenced, modules that
 * open files are named, default_for entries that cannot work are named, and the shipped
 * profiles give none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "load.h"
#include "pf_cleanup.h"
#include "policy_warnings.h"
#include "profile.h"

/* A policy of the given profiles (JSON texts, NULL-terminated), sorted as a load sorts it. */
static struct policy *
make_policy(const char *const *texts)
{
    struct policy *p = calloc(1, sizeof(*p));
    assert_non_null(p);
    p->source = strdup("test");
    for (; *texts; texts++) {
        struct policy_profile *profile = NULL;
        struct pf_error *err = NULL;
        if (policy_profile_parse(*texts, strlen(*texts), "x.json", NULL, &profile, &err) < 0)
            fail_msg("unexpected error: %s", err->msg);
        p->profiles = realloc(p->profiles, (p->n + 1) * sizeof(*p->profiles));
        assert_non_null(p->profiles);
        p->profiles[p->n++] = profile;
    }
    return p;
}

static struct policy_strings
warnings_of(const struct policy *p, uid_t uid)
{
    struct policy_strings w = {0};
    struct pf_error *err = NULL;
    if (policy_warnings(p, uid, &w, &err) < 0)
        fail_msg("unexpected error: %s", err->msg);
    return w;
}

/* The number of warnings holding `part`. */
static size_t
count(const struct policy_strings *w, const char *part)
{
    size_t n = 0;
    for (size_t i = 0; i < w->n; i++)
        n += strstr(w->items[i], part) != NULL;
    return n;
}

static const char *const weak[] = {
        "{\"name\": \"weak\", \"hardening\": {\"cgroup\": \"off\", \"namespaces\": \"off\", "
        "\"identity\": \"off\", \"privileges\": \"off\", \"landlock\": \"off\", \"seccomp\": "
        "\"off\"}, \"access\": {\"everyone\": true}}",
        NULL,
};

static void
test_layers_off_as_root(void **state)
{
    (void) state;
    struct policy *p = make_policy(weak);
    struct policy_strings w = warnings_of(p, 0);
    assert_int_equal(w.n, 6);
    static const char *const said[] = {
            "profile 'weak' sets \"cgroup\": \"off\": ITS WORKERS GET NO CGROUP",
            "profile 'weak' sets \"namespaces\": \"off\": ITS WORKERS SHARE THE HOST'S MOUNT",
            "profile 'weak' sets \"identity\": \"off\": pyfenced is root: ITS WORKERS RUN AS ROOT "
            "(UID 0) ON THE HOST",
            "profile 'weak' sets \"privileges\": \"off\": pyfenced is root and \"identity\" is "
            "\"off\" too: ITS WORKERS HOLD EVERY CAPABILITY OF ROOT ON THE HOST",
            "profile 'weak' sets \"landlock\": \"off\": ITS WORKERS GET NO LANDLOCK RULESET",
            "profile 'weak' sets \"seccomp\": \"off\": ITS WORKERS MAY MAKE EVERY SYSTEM CALL",
    };
    for (size_t i = 0; i < PF_ELEMENTSOF(said); i++)
        if (count(&w, said[i]) != 1)
            fail_msg("no warning '%s'", said[i]);
    policy_strings_finish(&w);
    policy_free(p);
}

/* Without root identity off changes nothing (workers keep the daemon's uid anyway), and the
 * other layers say what they mean there. */
static void
test_layers_off_without_root(void **state)
{
    (void) state;
    struct policy *p = make_policy(weak);
    struct policy_strings w = warnings_of(p, 1000);
    assert_int_equal(w.n, 5);
    assert_int_equal(count(&w, "\"identity\""), 0);
    assert_int_equal(count(&w, "profile 'weak' sets \"namespaces\": \"off\" and pyfenced is not "
                               "root: ITS WORKERS RUN AS UID 1000, THE DAEMON'S"),
                     1);
    assert_int_equal(count(&w, "ITS WORKERS KEEP EVERY CAPABILITY OF THE ZYGOTE'S USER NAMESPACE"),
                     1);
    policy_strings_finish(&w);
    policy_free(p);
}

/* Only "off" where the default is stronger warns: best-effort and required, and a profile that
 * restates the defaults, say nothing. With identity on, privileges off as root names the
 * set-uid risk rather than full root. */
static void
test_only_off_warns(void **state)
{
    (void) state;
    static const char *const texts[] = {
            "{\"name\": \"a\", \"hardening\": {\"cgroup\": \"required\", \"seccomp\": "
            "\"best-effort\", \"identity\": \"best-effort\"}}",
            "{\"name\": \"b\", \"hardening\": {\"privileges\": \"off\"}}",
            NULL,
    };
    struct policy *p = make_policy(texts);
    struct policy_strings w = warnings_of(p, 0);
    assert_int_equal(w.n, 1);
    assert_non_null(strstr(w.items[0], "profile 'b' sets \"privileges\": \"off\": pyfenced is "
                                       "root: ITS WORKERS KEEP A FULL CAPABILITY BOUNDING SET"));
    policy_strings_finish(&w);
    policy_free(p);
}

static void
test_file_modules(void **state)
{
    (void) state;
    static const char *const texts[] = {
            "{\"name\": \"a\", \"imports\": [\"io\", \"iox\", \"json\", \"os.*\"], "
            "\"extra_imports\": [\"pathlib\", \"_io\"]}",
            NULL,
    };
    struct policy *p = make_policy(texts);
    struct policy_strings w = warnings_of(p, 0);
    assert_int_equal(w.n, 4);
    assert_int_equal(count(&w, "profile 'a' allows module 'io' (imports): its functions open"), 1);
    assert_int_equal(count(&w, "allows module 'os' (imports)"), 1);
    assert_int_equal(count(&w, "allows module 'pathlib' (extra_imports)"), 1);
    assert_int_equal(count(&w, "allows module '_io' (extra_imports)"), 1);
    policy_strings_finish(&w);
    policy_free(p);
}

static void
test_reflection_modules(void **state)
{
    (void) state;
    static const char *const texts[] = {
            "{\"name\": \"r\", \"imports\": [\"inspect\", \"sysconfig\", \"importlib.*\"], "
            "\"extra_imports\": [\"sys\"]}",
            NULL,
    };
    struct policy *p = make_policy(texts);
    struct policy_strings w = warnings_of(p, 0);
    assert_int_equal(w.n, 3);
    assert_int_equal(count(&w, "profile 'r' allows module 'inspect' (imports): it hands snippets "
                               "other modules"),
                     1);
    assert_int_equal(count(&w, "allows module 'importlib' (imports)"), 1);
    assert_int_equal(count(&w, "allows module 'sys' (extra_imports)"), 1);
    policy_strings_finish(&w);
    policy_free(p);
}

static void
test_default_for(void **state)
{
    (void) state;
    static const char *const texts[] = {
            /* uid 1001 admitted, 1002 not; gid 5000 not; shares uid 1001 and gid 5000 with b */
            "{\"name\": \"a\", \"access\": {\"uids\": [1001]}, \"default_for\": {\"uids\": [1001, "
            "1002], \"gids\": [5000]}}",
            "{\"name\": \"b\", \"access\": {\"everyone\": true}, \"default_for\": {\"uids\": "
            "[1001], \"gids\": [5000]}}",
            /* everyone, but access does not admit everyone; overlaps a and b */
            "{\"name\": \"c\", \"access\": {\"gids\": [5001]}, \"default_for\": {\"everyone\": "
            "true, \"gids\": [5001]}}",
            NULL,
    };
    struct policy *p = make_policy(texts);
    struct policy_strings w = warnings_of(p, 0);
    assert_int_equal(count(&w, "profile 'a': default_for uid 1002, which its access does not "
                               "admit: its requests that name no profile get not_found"),
                     1);
    assert_int_equal(count(&w, "uid 1001, which"), 0);
    assert_int_equal(count(&w, "profile 'a': default_for gid 5000, a group its access does not "
                               "admit"),
                     1);
    assert_int_equal(count(&w, "profile 'c': default_for.everyone, but its access does not admit "
                               "everyone"),
                     1);
    assert_int_equal(count(&w, "gid 5001, a group"), 0);
    assert_int_equal(count(&w, "profiles 'a' and 'b': both default_for uid 1001: the first by "
                               "name is the default, the other's entry is never used ('a')"),
                     1);
    assert_int_equal(count(&w, "profiles 'a' and 'b': both default_for gid 5000"), 1);
    assert_int_equal(count(&w, "profiles 'a' and 'c': both default_for, one of them for "
                               "everyone"),
                     1);
    assert_int_equal(count(&w, "profiles 'b' and 'c': both default_for, one of them for "
                               "everyone"),
                     1);
    assert_int_equal(w.n, 7);
    policy_strings_finish(&w);
    policy_free(p);
}

/* What ships (and is built in) is what the page recommends: it gives no warning, as root or
 * not. */
static void
test_shipped_profiles_give_none(void **state)
{
    (void) state;
    struct policy *p = NULL;
    struct pf_error *err = NULL;
    assert_int_equal(policy_load_builtin(&p, &err), 0);
    for (uid_t uid = 0; uid <= 1000; uid += 1000) {
        struct policy_strings w = warnings_of(p, uid);
        if (w.n)
            fail_msg("shipped profiles warn: %s", w.items[0]);
        policy_strings_finish(&w);
    }
    policy_free(p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_layers_off_as_root),
            cmocka_unit_test(test_layers_off_without_root),
            cmocka_unit_test(test_only_off_warns),
            cmocka_unit_test(test_file_modules),
            cmocka_unit_test(test_reflection_modules),
            cmocka_unit_test(test_default_for),
            cmocka_unit_test(test_shipped_profiles_give_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
