/* The identity and privileges layers, alone and in their real order, in a forked child: a
 * non-root uid with no supplementary groups; every capability set empty (CapInh, CapPrm, CapEff,
 * CapBnd, CapAmb all 0), NoNewPrivs 1, not dumpable; and a root-only action refused. */
/* cmocka.h needs these first, in this order. */
/* clang-format off */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
/* clang-format on */
#include <fcntl.h>
#include <sys/prctl.h>

#include "harden_internal.h"
#include "harden_test_child.h"
#include "harden_zygote.h"

static struct harden_params params;

/* "Name:\tvalue" of /proc/self/status into out. */
static int
status_field(const char *name, char *out, size_t size)
{
    char buf[8192];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char key[64];
    snprintf(key, sizeof(key), "\n%s:\t", name);
    const char *p = strstr(buf, key);
    if (!p)
        return -1;
    p += strlen(key);
    size_t len = strcspn(p, "\n");
    while (len > 0 && p[len - 1] == ' ')
        len--;
    snprintf(out, size, "%.*s", (int) len, p);
    return 0;
}

static int
report_state(void)
{
    static const char *const fields[] = {"Uid",    "Gid",    "Groups", "CapInh",    "CapPrm",
                                         "CapEff", "CapBnd", "CapAmb", "NoNewPrivs"};
    char line[256], v[128];
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        if (status_field(fields[i], v, sizeof(v)) < 0)
            snprintf(v, sizeof(v), "?");
        snprintf(line, sizeof(line), "%s=%s;", fields[i], v);
        child_say(line);
    }
    snprintf(line, sizeof(line), "dumpable=%d;", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
    child_say(line);
    /* A root-only action: the neighbour of what the layers allow. */
    uid_t other = getuid() == 0 ? 12345 : 0;
    snprintf(line, sizeof(line), "setuid=%s;", setuid(other) == 0 ? "yes" : "no");
    child_say(line);
    return 0;
}

static int
apply_layers(void *arg)
{
    const char *which = arg;
    struct pf_error *err = NULL;
    params.level[HARDEN_LAYER_PRIVILEGES] = strchr(which, 'p') ? HARDEN_REQUIRED : HARDEN_OFF;
    if (strchr(which, 'i') && harden_identity_apply(&params, &err) < 0) {
        child_say(err->msg);
        return 2;
    }
    if (strchr(which, 'p') && harden_privileges_apply(&params, &err) < 0) {
        child_say(err->msg);
        return 3;
    }
    return report_state();
}

static void
run(const char *which, struct child_result *r)
{
    assert_int_equal(run_child(apply_layers, (void *) which, r), 0);
    if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0)
        print_message("child said: %s\n", r->out);
    assert_true(WIFEXITED(r->status));
    assert_int_equal(WEXITSTATUS(r->status), 0);
}

static void
test_identity_alone(void **state)
{
    struct child_result r;
    params.uid = 0; /* 0: from the zygote's range */
    params.gid = 0;
    run("i", &r);
    char want[128];
    snprintf(want, sizeof(want), "Uid=%u\t%u\t%u\t%u;", HARDEN_UID_BASE_DEFAULT,
             HARDEN_UID_BASE_DEFAULT, HARDEN_UID_BASE_DEFAULT, HARDEN_UID_BASE_DEFAULT);
    assert_non_null(strstr(r.out, want));
    assert_non_null(strstr(r.out, "Groups=;"));
    /* Without the privileges layer, the uid change itself empties effective and permitted. */
    assert_non_null(strstr(r.out, "CapEff=0000000000000000;"));
    assert_non_null(strstr(r.out, "CapPrm=0000000000000000;"));
    assert_non_null(strstr(r.out, "setuid=no;"));
}

static void
test_identity_explicit_ids(void **state)
{
    struct child_result r;
    params.uid = 700123;
    params.gid = 700124;
    run("i", &r);
    assert_non_null(strstr(r.out, "Uid=700123\t700123\t700123\t700123;"));
    assert_non_null(strstr(r.out, "Gid=700124\t700124\t700124\t700124;"));
    params.uid = params.gid = 0;
}

static void
test_privileges_alone(void **state)
{
    struct child_result r;
    run("p", &r);
    assert_non_null(strstr(r.out, "Uid=0\t"));
    assert_non_null(strstr(r.out, "CapInh=0000000000000000;"));
    assert_non_null(strstr(r.out, "CapPrm=0000000000000000;"));
    assert_non_null(strstr(r.out, "CapEff=0000000000000000;"));
    assert_non_null(strstr(r.out, "CapBnd=0000000000000000;"));
    assert_non_null(strstr(r.out, "CapAmb=0000000000000000;"));
    assert_non_null(strstr(r.out, "NoNewPrivs=1;"));
    assert_non_null(strstr(r.out, "dumpable=0;"));
    /* uid 0 without CAP_SETUID cannot become another uid: the capability is what mattered. */
    assert_non_null(strstr(r.out, "setuid=no;"));
}

static void
test_identity_then_privileges(void **state)
{
    struct child_result r;
    run("ip", &r);
    assert_null(strstr(r.out, "Uid=0\t"));
    assert_non_null(strstr(r.out, "CapInh=0000000000000000;"));
    assert_non_null(strstr(r.out, "CapPrm=0000000000000000;"));
    assert_non_null(strstr(r.out, "CapEff=0000000000000000;"));
    assert_non_null(strstr(r.out, "CapBnd=0000000000000000;"));
    assert_non_null(strstr(r.out, "CapAmb=0000000000000000;"));
    assert_non_null(strstr(r.out, "NoNewPrivs=1;"));
    assert_non_null(strstr(r.out, "dumpable=0;"));
}

static int
identity_as_root(void *arg)
{
    struct pf_error *err = NULL;
    params.uid = 0;
    params.gid = 5;
    /* The range's ids are used for a 0; an explicit gid stays. */
    if (harden_identity_apply(&params, &err) < 0) {
        child_say(err->msg);
        return 2;
    }
    return getuid() == 0 ? 3 : 0;
}

static void
test_never_root(void **state)
{
    struct child_result r;
    assert_int_equal(run_child(identity_as_root, NULL, &r), 0);
    assert_true(WIFEXITED(r.status));
    assert_int_equal(WEXITSTATUS(r.status), 0);
    params.uid = params.gid = 0;
}

int
main(void)
{
    if (geteuid() != 0) {
        printf("the identity and privileges layers need root to be tested: skipping\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_identity_alone),
            cmocka_unit_test(test_identity_explicit_ids),
            cmocka_unit_test(test_privileges_alone),
            cmocka_unit_test(test_identity_then_privileges),
            cmocka_unit_test(test_never_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
