/* The pool worker's warm-up (daemon/worker/warm_up.h): its snippet still runs under the
 * executor (a warm-up that fails would silently do nothing), it never runs or reads when a
 * frame is waiting, and it leaves nothing behind that a job could see. */
#include <sys/socket.h>
#include <unistd.h>

#include "test_exec_util.h"
#include "warm_up.h"

static void
channel(int sv[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

/* The zygote's scratch environment, as workers get it. */
static struct exec_env *scratch;

static int
setup(void **state)
{
    (void) state;
    struct pf_error *err = NULL;
    scratch = worker_warm_up_env_new(&err);
    if (!scratch)
        fail_msg("worker_warm_up_env_new: %s", err->msg);
    return 0;
}

static int
teardown(void **state)
{
    (void) state;
    scratch = exec_env_free(scratch);
    return 0;
}

static void
test_runs_when_nothing_waits(void **state)
{
    (void) state;
    int sv[2];
    channel(sv);
    assert_true(worker_warm_up_wanted(sv[0]));
    assert_int_equal(worker_warm_up(sv[0], scratch), 1);
    /* Twice: a worker warms up once, but nothing in it may depend on a first run. */
    assert_int_equal(worker_warm_up(sv[0], scratch), 1);
    close(sv[0]);
    close(sv[1]);
}

static void
test_skipped_and_frame_left_when_one_waits(void **state)
{
    (void) state;
    int sv[2];
    channel(sv);
    static const char frame[] = "\0\0\0\2{}";
    assert_int_equal(write(sv[1], frame, sizeof(frame) - 1), (ssize_t) sizeof(frame) - 1);
    assert_false(worker_warm_up_wanted(sv[0]));
    assert_int_equal(worker_warm_up(sv[0], scratch), 0);
    char buf[16];
    assert_int_equal(read(sv[0], buf, sizeof(buf)), (ssize_t) sizeof(frame) - 1);
    assert_memory_equal(buf, frame, sizeof(frame) - 1);
    close(sv[0]);
    close(sv[1]);
}

/* What the warm-up defines (f, v, key, val) exists only in its scratch environment, and the
 * interpreter-wide state a job can reach is as it was: no module imported or added. */
static void
test_leaves_nothing_behind(void **state)
{
    (void) state;
    PyObject *modules = PySys_GetObject("modules");
    assert_non_null(modules);
    Py_ssize_t n_modules = PyDict_Size(modules);
    int sv[2];
    channel(sv);
    assert_int_equal(worker_warm_up(sv[0], scratch), 1);
    assert_int_equal(PyDict_Size(modules), n_modules);
    static const char *const names[] = {"f", "v", "key", "val"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char *out = t_eval(names[i], NULL);
        assert_non_null(strstr(out, "NameError"));
        free(out);
    }
    char *out = t_eval("print('job'); 6 * 7", NULL);
    assert_string_equal(out, "42");
    free(out);
    close(sv[0]);
    close(sv[1]);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_runs_when_nothing_waits, setup, teardown),
            cmocka_unit_test_setup_teardown(test_skipped_and_frame_left_when_one_waits, setup,
                                            teardown),
            cmocka_unit_test_setup_teardown(test_leaves_nothing_behind, setup, teardown),
    };
    return cmocka_run_group_tests(tests, t_setup_python, NULL);
}
