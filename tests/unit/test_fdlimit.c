/* pyfenced's open-file budget (daemon/fdlimit.h): the formula, an explicit max_connections that
 * does not fit refused with both figures, the default lowered to what fits, workers that leave
 * no room refused, and the soft RLIMIT_NOFILE raised to the hard one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "fdlimit.h"
#include "pf_error.h"

static void
test_formula(void **state)
{
    (void) state;
    /* 32 for pyfenced, 2 zygotes x 2, 6 per worker, the listen backlog's worth of refusals. */
    assert_int_equal(fdlimit_fixed(0), 32 + 4 + LISTENER_BACKLOG);
    assert_int_equal(fdlimit_fixed(8), 32 + 4 + 8 * 8 + LISTENER_BACKLOG);
    assert_int_equal(fdlimit_fixed(4096), 32 + 4 + 4096 * 8 + LISTENER_BACKLOG);
}

static void
test_fits_or_not(void **state)
{
    (void) state;
    struct pf_error *err = NULL;
    int64_t conns = 1024, from = -1;
    uint64_t fixed = fdlimit_fixed(8);
    /* systemd's LimitNOFILE=65536 (the unit's) fits the defaults with room to spare. */
    assert_int_equal(fdlimit_fit(65536, 8, false, &conns, &from, &err), 0);
    assert_int_equal(conns, 1024);
    assert_int_equal(from, 0);
    /* Exactly enough. */
    assert_int_equal(fdlimit_fit(fixed + 1024, 8, true, &conns, &from, &err), 0);
    assert_int_equal(conns, 1024);
    /* No limit at all. */
    assert_int_equal(fdlimit_fit(FDLIMIT_UNLIMITED, 4096, true, &conns, &from, &err), 0);

    /* systemd's default soft limit, 1024, as the red team found pyfenced running: an explicit
     * --max-connections 1024 is refused, naming both figures and how many would fit... */
    assert_int_equal(fdlimit_fit(1024, 8, true, &conns, &from, &err), -1);
    assert_int_equal(err->code, PF_E_CONFIG);
    char want[300];
    snprintf(want, sizeof(want),
             "--max-connections 1024 does not fit in the open-file limit 1024 (RLIMIT_NOFILE): "
             "with %llu for pyfenced, its zygotes and 8 workers (max_workers), at most %llu "
             "connections do; raise the limit (LimitNOFILE=, ulimit -n) to at least %llu, or "
             "lower --max-connections",
             (unsigned long long) fixed, (unsigned long long) (1024 - fixed),
             (unsigned long long) (fixed + 1024));
    assert_string_equal(err->msg, want);
    err = pf_error_free(err);
    assert_int_equal(conns, 1024);
    /* ...the default is lowered to what fits. */
    assert_int_equal(fdlimit_fit(1024, 8, false, &conns, &from, &err), 0);
    assert_int_equal(conns, (int64_t) (1024 - fixed));
    assert_int_equal(from, 1024);

    /* Workers that leave no room for one connection: refused, default or not. */
    conns = 1024;
    assert_int_equal(fdlimit_fit(fdlimit_fixed(100), 100, false, &conns, &from, &err), -1);
    assert_non_null(strstr(err->msg, "leaves no room for any connection"));
    assert_non_null(strstr(err->msg, "100 workers (max_workers)"));
    err = pf_error_free(err);
    assert_int_equal(fdlimit_fit(fdlimit_fixed(100) + 1, 100, false, &conns, &from, &err), 0);
    assert_int_equal(conns, 1);
}

/* In a child, so that this process keeps its limits: soft 64 under hard 512 becomes 512. */
static void
test_raise_to_hard(void **state)
{
    (void) state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = {.rlim_cur = 64, .rlim_max = 512};
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            _exit(2);
        struct fdlimit lim;
        struct pf_error *err = NULL;
        if (fdlimit_raise(&lim, &err) < 0)
            _exit(3);
        if (lim.before != 64 || lim.soft != 512 || lim.hard != 512)
            _exit(4);
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur != 512)
            _exit(5);
        /* Already at the hard limit: nothing to do. */
        if (fdlimit_raise(&lim, &err) < 0 || lim.before != 512 || lim.soft != 512)
            _exit(6);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_formula),
            cmocka_unit_test(test_fits_or_not),
            cmocka_unit_test(test_raise_to_hard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
