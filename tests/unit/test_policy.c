/* Profiles: the shipped ones load, every bad field is refused with file, field and value named,
 * access and defaults resolve, and a directory loads all-or-nothing. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "load.h"
#include "profile.h"

/* A peer with no supplementary groups. */
#define PEER(uid_, gid_) (&(struct policy_peer){.uid = (uid_), .gid = (gid_)})

static struct policy_profile *
parse_ok(const char *text)
{
    struct policy_profile *p = NULL;
    struct pf_error *err = NULL;
    int r = policy_profile_parse(text, strlen(text), "profiles/x.json", NULL, &p, &err);
    if (r < 0)
        fail_msg("unexpected error: %s", err->msg);
    return p;
}

static void
expect_error(const char *text, const char *message)
{
    struct policy_profile *p = NULL;
    struct pf_error *err = NULL;
    assert_int_equal(policy_profile_parse(text, strlen(text), "profiles/x.json", "x", &p, &err),
                     -1);
    assert_null(p);
    assert_non_null(err);
    if (!strstr(err->msg, message))
        fail_msg("error '%s' lacks '%s'", err->msg, message);
    pf_error_free(err);
}

static void
test_builtin_profiles_load(void **state)
{
    (void) state;
    struct policy *pol = NULL;
    struct pf_error *err = NULL;
    assert_int_equal(policy_load_builtin(&pol, &err), 0);
    assert_int_equal(pol->n, 3);
    const struct policy_profile *strict = policy_find(pol, "strict");
    assert_non_null(strict);
    assert_int_equal(strict->imports.n, 0);
    assert_int_equal(strict->limits.v[POLICY_LIMIT_MEMORY_MB], 256);
    const struct policy_profile *def = policy_find(pol, "default");
    assert_int_equal(def->hardening[POLICY_LAYER_SECCOMP], POLICY_LEVEL_REQUIRED);
    assert_int_equal(def->hardening[POLICY_LAYER_CGROUP], POLICY_LEVEL_BEST_EFFORT);
    /* Unspecified limits keep the table's defaults. */
    assert_int_equal(def->limits.v[POLICY_LIMIT_MAX_RECURSION],
                     policy_limit_def(POLICY_LIMIT_MAX_RECURSION)->def);
    assert_ptr_equal(policy_default_for(pol, PEER(1000, 1000), &err), def);
    policy_free(pol);
}

static bool
strings_have(const struct policy_strings *s, const char *item)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->items[i], item) == 0)
            return true;
    return false;
}

static void
expect_superset(const struct policy_strings *big, const struct policy_strings *small,
                const char *what)
{
    for (size_t i = 0; i < small->n; i++)
        if (!strings_have(big, small->items[i]))
            fail_msg("data's %s lack default's '%s'", what, small->items[i]);
}

/* pyfence-profile(5) and data's description: "the default imports plus numpy and pandas". The
 * built-in profiles are the shipped files, embedded at build time (policy/embed_profiles.py). */
static void
test_data_is_default_plus_numpy_and_pandas(void **state)
{
    (void) state;
    struct policy *pol = NULL;
    struct pf_error *err = NULL;
    assert_int_equal(policy_load_builtin(&pol, &err), 0);
    const struct policy_profile *data = policy_find(pol, "data");
    const struct policy_profile *def = policy_find(pol, "default");
    expect_superset(&data->imports, &def->imports, "imports");
    expect_superset(&data->extra_imports, &def->extra_imports, "extra_imports");
    static const char *const more[] = {"numpy", "numpy.*", "pandas", "pandas.*"};
    for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
        assert_true(strings_have(&data->imports, more[i]));
    assert_int_equal(data->imports.n, def->imports.n + 4);
    assert_int_equal(data->extra_imports.n, def->extra_imports.n);
    policy_free(pol);
}

static void
test_minimal_profile(void **state)
{
    (void) state;
    struct policy_profile *p = parse_ok("{\"name\": \"x\"}");
    assert_string_equal(p->name, "x");
    /* Nobody but root may use a profile that names no one. */
    assert_false(policy_profile_allows(p, PEER(1000, 1000)));
    assert_true(policy_profile_allows(p, PEER(0, 0)));
    cJSON *j = policy_profile_to_json(p);
    assert_non_null(cJSON_GetObjectItem(j, "limits"));
    cJSON_Delete(j);
    policy_profile_free(p);
}

static void
test_bad_fields_are_named(void **state)
{
    (void) state;
    expect_error("{\"name\": \"x\", \"limits\": {\"memory_mb\": 9000}}",
                 "profiles/x.json: limits.memory_mb: 9000 exceeds maximum 4096");
    /* every message names the value as written (the review's cases) */
    expect_error("{\"name\": \"x\", \"limits\": {\"memory_mb\": 1.5}}",
                 "profiles/x.json: limits.memory_mb: 1.5 is not an integer");
    expect_error("{\"name\": \"x\", \"limits\": {\"memory_mb\": 512.5}}",
                 "profiles/x.json: limits.memory_mb: 512.5 is not an integer");
    expect_error("{\"name\": \"x\", \"limits\": {\"memory_mb\": \"512\"}}",
                 "profiles/x.json: limits.memory_mb: \"512\" is not an integer");
    expect_error("{\"name\": \"x\", \"limits\": {\"memory_mb\": null}}",
                 "profiles/x.json: limits.memory_mb: null is not an integer");
    expect_error("{\"name\": \"x\", \"limits\": {\"memory_mb\": true}}",
                 "profiles/x.json: limits.memory_mb: true is not an integer");
    expect_error("{\"name\": \"x\", \"limits\": {\"memory_mb\": 1e16}}",
                 "limits.memory_mb: 1e+16 exceeds maximum 4096");
    expect_error("{\"name\": \"x\", \"limits\": {\"max_ops\": 1e300}}",
                 "profiles/x.json: limits.max_ops: 1e+300 exceeds maximum 10000000000");
    expect_error("{\"name\": \"x\", \"limits\": {\"memory_mb\": -1e300}}",
                 "limits.memory_mb: -1e+300 is below minimum 32");
    expect_error("{\"name\": \"x\", \"limits\": {\"max_connections\": 5}}",
                 "limits.max_connections: not a per-job limit");
    expect_error("{\"name\": \"x\", \"limits\": {\"memory_mbb\": 5}}",
                 "limits.memory_mbb: no such limit");
    expect_error("{\"name\": \"x\", \"preload\": [\"numpy.*\"]}",
                 "preload[0]: 'numpy.*' is a pattern");
    expect_error("{\"name\": \"x\", \"color\": 1}", "color");
    expect_error("{\"name\": \"y\"}", "differs from the file name 'x'");
    expect_error("{\"name\": \"x\", \"imports\": [\"os;rm\"]}",
                 "imports[0]: 'os;rm' is not a module name");
    expect_error("{\"name\": \"x\", \"imports\": [\"a..b\"]}", "is not a module name");
    expect_error("{\"name\": \"x\", \"hardening\": {\"seccomp\": \"maybe\"}}",
                 "profiles/x.json: hardening.seccomp: \"maybe\" is not \"off\", \"best-effort\" or "
                 "\"required\"");
    expect_error("{\"name\": \"x\", \"hardening\": {\"seccomp\": 1}}",
                 "hardening.seccomp: 1 is not \"off\"");
    expect_error("{\"name\": \"x\", \"hardening\": {\"kernel\": \"off\"}}",
                 "hardening.kernel: no such layer");
    expect_error("{\"name\": \"x\", \"hardening\": {\"fds\": \"off\"}}", "always required");
    expect_error("{\"name\": \"x\", \"egress\": [{\"host\": \"example.org\"}]}",
                 "profiles/x.json: egress[0]: field 'host' is not allowed");
    expect_error("{\"name\": \"x\", \"egress\": {}}", "field 'egress': expected an array");
    expect_error("{\"name\": \"x\", \"access\": {\"users\": [\"no-such-user-pyfence\"]}}",
                 "access.users: no user named 'no-such-user-pyfence'");
    expect_error("{\"name\": \"x\", \"access\": {\"uids\": [-1]}}",
                 "profiles/x.json: access.uids[0]: -1 is not an id (an integer from 0 to "
                 "4294967294)");
    expect_error("{\"name\": \"x\", \"access\": {\"uids\": [0, \"0\"]}}",
                 "profiles/x.json: access.uids[1]: \"0\" is not an id (an integer from 0 to "
                 "4294967294; names go in users and groups)");
    expect_error("{\"name\": \"x\", \"default_for\": {\"gids\": [4294967295]}}",
                 "profiles/x.json: default_for.gids[0]: 4294967295 is not an id");
    expect_error("{\"name\": \"x\", \"name\": \"x\"}", "profiles/x.json");
    expect_error("{\"name\": \"x\"", "profiles/x.json");
}

/* max_pending_per_session is a session limit of the table like the others: a profile sets it
 * within [0, 1024], --check-policy and status show it, and out of range is refused with the
 * table's message. */
static void
test_max_pending_per_session(void **state)
{
    (void) state;
    struct policy_profile *p =
            parse_ok("{\"name\": \"x\", \"limits\": {\"max_pending_per_session\": 2}}");
    assert_int_equal(p->limits.v[POLICY_LIMIT_MAX_PENDING_PER_SESSION], 2);
    cJSON *j = policy_profile_to_json(p);
    cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "limits"), "max_pending_per_session");
    assert_true(cJSON_IsNumber(v) && v->valueint == 2);
    cJSON_Delete(j);
    policy_profile_free(p);
    p = parse_ok("{\"name\": \"x\", \"limits\": {\"max_pending_per_session\": 0}}");
    assert_int_equal(p->limits.v[POLICY_LIMIT_MAX_PENDING_PER_SESSION], 0);
    policy_profile_free(p);
    p = parse_ok("{\"name\": \"x\"}");
    assert_int_equal(p->limits.v[POLICY_LIMIT_MAX_PENDING_PER_SESSION], 16);
    policy_profile_free(p);
    expect_error("{\"name\": \"x\", \"limits\": {\"max_pending_per_session\": 1025}}",
                 "profiles/x.json: limits.max_pending_per_session: 1025 exceeds maximum 1024");
    expect_error("{\"name\": \"x\", \"limits\": {\"max_pending_per_session\": -1}}",
                 "profiles/x.json: limits.max_pending_per_session: -1 is below minimum 0");
    expect_error("{\"name\": \"x\", \"limits\": {\"max_pending_per_session\": \"8\"}}",
                 "max_pending_per_session: \"8\" is not an integer");

    /* A request tightens it like any job limit, and may not loosen it. */
    struct policy_limits l;
    struct pf_error *err = NULL;
    policy_limits_init_defaults(&l);
    cJSON *t = cJSON_Parse("{\"max_pending_per_session\": 4}");
    assert_int_equal(policy_limits_tighten(&l, t, "limits", &err), 0);
    assert_int_equal(l.v[POLICY_LIMIT_MAX_PENDING_PER_SESSION], 4);
    cJSON_Delete(t);
    t = cJSON_Parse("{\"max_pending_per_session\": 5}");
    assert_int_equal(policy_limits_tighten(&l, t, "limits", &err), -1);
    assert_string_equal(err->msg, "limits.max_pending_per_session: 5 would loosen the profile's "
                                  "4 (a request may only tighten limits)");
    err = pf_error_free(err);
    cJSON_Delete(t);
}

static void
test_access_and_defaults(void **state)
{
    (void) state;
    struct policy_profile *p =
            parse_ok("{\"name\": \"x\", \"access\": {\"uids\": [1001], "
                     "\"groups\": [\"root\"]}, \"default_for\": {\"uids\": [1001]}}");
    assert_true(policy_profile_allows(p, PEER(1001, 50)));
    assert_true(policy_profile_allows(p, PEER(1002, 0))); /* group root */
    assert_false(policy_profile_allows(p, PEER(1002, 50)));
    assert_true(policy_profile_is_default_for(p, PEER(1001, 5)));
    assert_false(policy_profile_is_default_for(p, PEER(1002, 5)));
    policy_profile_free(p);
}

/* access.groups matches a supplementary group as well as the primary one, and access.users
 * names a user by name (resolved when the file loads). */
static void
test_access_by_supplementary_group_and_user_name(void **state)
{
    (void) state;
    struct policy_profile *p =
            parse_ok("{\"name\": \"x\", \"access\": {\"users\": [\"nobody\"], "
                     "\"groups\": [\"root\"]}, \"default_for\": {\"groups\": [\"root\"]}}");
    const gid_t in_root[] = {10, 0, 20}, not_in_root[] = {10, 20};
    struct policy_peer member = {.uid = 1002, .gid = 50, .groups = in_root, .n_groups = 3};
    struct policy_peer other = {.uid = 1002, .gid = 50, .groups = not_in_root, .n_groups = 2};
    assert_true(policy_profile_allows(p, &member));
    assert_true(policy_profile_is_default_for(p, &member));
    assert_false(policy_profile_allows(p, &other));
    assert_false(policy_profile_is_default_for(p, &other));
    assert_true(policy_profile_allows(p, PEER(65534, 65534))); /* nobody */
    assert_false(policy_profile_allows(p, PEER(65533, 65534)));
    policy_profile_free(p);
}

static char *
make_dir(void)
{
    char *dir = strdup("/tmp/pyfence-policy-XXXXXX");
    assert_non_null(mkdtemp(dir));
    return dir;
}

static void
write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void
remove_dir(char *dir, const char *const *names)
{
    char path[512];
    for (; *names; names++) {
        snprintf(path, sizeof(path), "%s/%s", dir, *names);
        unlink(path);
    }
    rmdir(dir);
    free(dir);
}

static void
test_directory_all_or_nothing(void **state)
{
    (void) state;
    char *dir = make_dir();
    struct policy *pol = NULL;
    struct pf_error *err = NULL;
    write_file(dir, "default.json", "{\"name\": \"default\", \"access\": {\"everyone\": true}}");
    write_file(dir, "agents.json",
               "{\"name\": \"agents\", \"access\": {\"uids\": [1001]}, "
               "\"default_for\": {\"uids\": [1001]}}");
    write_file(dir, "README.txt", "not a profile");
    assert_int_equal(policy_load_dir(dir, &pol, &err), 0);
    assert_int_equal(pol->n, 2);
    assert_string_equal(policy_default_for(pol, PEER(1001, 1001), &err)->name, "agents");
    assert_string_equal(policy_default_for(pol, PEER(1002, 1002), &err)->name, "default");
    /* A profile the peer may not use answers exactly like a missing one. */
    assert_null(policy_resolve(pol, "agents", PEER(1002, 1002), &err));
    assert_int_equal(err->code, PF_E_NOT_FOUND);
    err = pf_error_free(err);
    assert_null(policy_resolve(pol, "nothere", PEER(1002, 1002), &err));
    assert_int_equal(err->code, PF_E_NOT_FOUND);
    err = pf_error_free(err);
    pol = policy_free(pol);

    /* A default_for that access does not admit refuses without naming the profile. */
    write_file(dir, "agents.json",
               "{\"name\": \"agents\", \"access\": {\"uids\": [1001]}, "
               "\"default_for\": {\"uids\": [1003]}}");
    assert_int_equal(policy_load_dir(dir, &pol, &err), 0);
    assert_null(policy_default_for(pol, PEER(1003, 1003), &err));
    assert_int_equal(err->code, PF_E_NOT_FOUND);
    assert_string_equal(err->msg, "no default profile for uid 1003");
    err = pf_error_free(err);
    pol = policy_free(pol);

    /* One bad file: nothing loads, and the error names the file and field. */
    write_file(dir, "bad.json", "{\"name\": \"bad\", \"limits\": {\"pids\": 0}}");
    assert_int_equal(policy_load_dir(dir, &pol, &err), -1);
    assert_null(pol);
    assert_non_null(strstr(err->msg, "/bad.json: limits.pids: 0 is below minimum 1"));
    err = pf_error_free(err);

    /* A profile that is a symbolic link fails the load, and says so. */
    unlink(strcat(strcpy((char[512]){0}, dir), "/bad.json"));
    assert_int_equal(symlinkat("agents.json", -1, strcat(strcpy((char[512]){0}, dir), "/bad.json")),
                     0);
    assert_int_equal(policy_load_dir(dir, &pol, &err), -1);
    assert_non_null(strstr(err->msg, "/bad.json: a symbolic link"));
    err = pf_error_free(err);

    /* No default profile. */
    unlink(strcat(strcpy((char[512]){0}, dir), "/bad.json"));
    unlink(strcat(strcpy((char[512]){0}, dir), "/default.json"));
    assert_int_equal(policy_load_dir(dir, &pol, &err), -1);
    assert_non_null(strstr(err->msg, "no profile named 'default'"));
    err = pf_error_free(err);

    const char *names[] = {"default.json", "agents.json", "README.txt", "bad.json", NULL};
    remove_dir(dir, names);

    assert_int_equal(policy_load_dir("/nonexistent/pyfence", &pol, &err), -1);
    assert_non_null(strstr(err->msg, "policy directory '/nonexistent/pyfence'"));
    pf_error_free(err);
}

static void
on_alarm(int sig)
{
    (void) sig;
}

/* A FIFO named *.json: opening it for reading would block until a writer came (a frozen daemon
 * on SIGHUP). The load refuses it at once, as any other file that is not a regular one. An
 * alarm (without SA_RESTART) bounds the wait: an open that blocked ends in EINTR, and the
 * message then says "cannot open" instead. */
static void
test_fifo_is_refused_without_blocking(void **state)
{
    (void) state;
    char *dir = make_dir();
    write_file(dir, "default.json", "{\"name\": \"default\"}");
    char path[512];
    snprintf(path, sizeof(path), "%s/zz.json", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    struct sigaction sa = {.sa_handler = on_alarm}, old;
    assert_int_equal(sigaction(SIGALRM, &sa, &old), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    alarm(3);
    struct policy *pol = NULL;
    struct pf_error *err = NULL;
    int r = policy_load_dir(dir, &pol, &err);
    alarm(0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(sigaction(SIGALRM, &old, NULL), 0);
    assert_int_equal(r, -1);
    assert_null(pol);
    if (!strstr(err->msg, "/zz.json: not a regular file"))
        fail_msg("unexpected error: %s", err->msg);
    assert_true(t1.tv_sec - t0.tv_sec < 2);
    pf_error_free(err);
    const char *names[] = {"default.json", "zz.json", NULL};
    remove_dir(dir, names);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_builtin_profiles_load),
            cmocka_unit_test(test_data_is_default_plus_numpy_and_pandas),
            cmocka_unit_test(test_minimal_profile),
            cmocka_unit_test(test_bad_fields_are_named),
            cmocka_unit_test(test_max_pending_per_session),
            cmocka_unit_test(test_access_and_defaults),
            cmocka_unit_test(test_access_by_supplementary_group_and_user_name),
            cmocka_unit_test(test_directory_all_or_nothing),
            cmocka_unit_test(test_fifo_is_refused_without_blocking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
