/* The listening socket, each case on its own temp dir: a path too long is refused, a stale
 * socket is replaced, a live daemon's socket is not, the mode is applied, a non-socket is left
 * alone, socket activation adopts fd 3, and stop unlinks only our own socket. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "listener.h"

struct tmp {
    char dir[64];
    char path[128];
};

static int
setup_tmp(void **state)
{
    struct tmp *t = calloc(1, sizeof(*t));
    snprintf(t->dir, sizeof(t->dir), "/tmp/pf-listener-XXXXXX");
    if (!mkdtemp(t->dir))
        return -1;
    snprintf(t->path, sizeof(t->path), "%s/pyfence.sock", t->dir);
    *state = t;
    return 0;
}

static int
teardown_tmp(void **state)
{
    struct tmp *t = *state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
    if (system(cmd) != 0)
        return -1;
    free(t);
    return 0;
}

/* A socket bound at path; listening when `listening`, else left as a dead daemon leaves it. */
static int
bound_socket(const char *path, int listening)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    assert_int_equal(bind(fd, (struct sockaddr *) &a, sizeof(a)), 0);
    if (listening)
        assert_int_equal(listen(fd, 4), 0);
    return fd;
}

static void
test_path_too_long(void **state)
{
    struct tmp *t = *state;
    char path[300];
    memset(path, 'x', sizeof(path));
    int n = snprintf(path, sizeof(path), "%s/", t->dir);
    path[n] = 'x';
    path[200] = '\0';
    struct pf_error *err = NULL;
    assert_int_equal(listener_prepare_path(path, &err), -1);
    assert_int_equal(err->code, PF_E_CONFIG);
    assert_non_null(strstr(err->msg, "over the 107 bytes a Unix socket address holds"));
    err = pf_error_free(err);
    int fd = -1;
    assert_int_equal(listener_bind(path, 0600, &fd, &err), -1);
    assert_non_null(strstr(err->msg, "is 200 bytes"));
    err = pf_error_free(err);

    /* The same check on the path that listener_start resolves. */
    uv_loop_t loop;
    uv_loop_init(&loop);
    struct listener l = {0};
    assert_int_equal(listener_start(&l, &loop, path, 0600, NULL, NULL, &err), -1);
    assert_non_null(strstr(err->msg, "over the 107 bytes"));
    err = pf_error_free(err);
    listener_stop(&l);
    listener_finish(&l);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void
test_stale_socket_replaced(void **state)
{
    struct tmp *t = *state;
    int old = bound_socket(t->path, 0);
    close(old); /* the file stays; nobody listens: ECONNREFUSED */
    struct stat st;
    assert_int_equal(lstat(t->path, &st), 0);
    struct pf_error *err = NULL;
    assert_int_equal(listener_prepare_path(t->path, &err), 0);
    assert_null(err);
    assert_int_equal(lstat(t->path, &st), -1);
    int fd = -1;
    assert_int_equal(listener_bind(t->path, 0600, &fd, &err), 0);
    assert_true(fd >= 0);
    close(fd);
}

static void
test_live_daemon_not_replaced(void **state)
{
    struct tmp *t = *state;
    int live = bound_socket(t->path, 1);
    struct stat before, after;
    assert_int_equal(lstat(t->path, &before), 0);
    struct pf_error *err = NULL;
    assert_int_equal(listener_prepare_path(t->path, &err), -1);
    char expected[256];
    snprintf(expected, sizeof(expected), "another pyfenced is listening on '%s'", t->path);
    assert_string_equal(err->msg, expected);
    err = pf_error_free(err);
    assert_int_equal(lstat(t->path, &after), 0);
    assert_int_equal(before.st_ino, after.st_ino);
    close(live);
}

static void
test_not_a_socket_refused(void **state)
{
    struct tmp *t = *state;
    int fd = open(t->path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
    struct pf_error *err = NULL;
    assert_int_equal(listener_prepare_path(t->path, &err), -1);
    assert_non_null(strstr(err->msg, "is not a socket; refusing to replace it"));
    err = pf_error_free(err);
    struct stat st;
    assert_int_equal(lstat(t->path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
}

static void
test_mode_applied(void **state)
{
    struct tmp *t = *state;
    static const mode_t modes[] = {0600, 0660, 0666, 0700};
    mode_t old = umask(022); /* a umask that would loosen or tighten 0666 if we relied on it */
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        struct pf_error *err = NULL;
        int fd = -1;
        assert_int_equal(listener_prepare_path(t->path, &err), 0);
        if (i > 0) /* the previous one was closed: it is stale now */
            assert_int_equal(access(t->path, F_OK), -1);
        assert_int_equal(listener_bind(t->path, modes[i], &fd, &err), 0);
        struct stat st;
        assert_int_equal(stat(t->path, &st), 0);
        assert_true(S_ISSOCK(st.st_mode));
        assert_int_equal(st.st_mode & 07777, modes[i]);
        close(fd);
    }
    assert_int_equal(umask(old), 022);
}

static void
test_parent_dir_created(void **state)
{
    struct tmp *t = *state;
    char path[160];
    snprintf(path, sizeof(path), "%s/sub/pyfence.sock", t->dir);
    struct pf_error *err = NULL;
    mode_t old = umask(022);
    assert_int_equal(listener_prepare_path(path, &err), 0);
    umask(old);
    char dir[160];
    snprintf(dir, sizeof(dir), "%s/sub", t->dir);
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0755);
}

static void
on_connection(uv_stream_t *server, int status)
{
    int *count = server->data;
    (*count)++;
    uv_pipe_t *client = malloc(sizeof(*client));
    uv_pipe_init(server->loop, client, 0);
    assert_int_equal(uv_accept(server, (uv_stream_t *) client), 0);
    uv_close((uv_handle_t *) client, (uv_close_cb) free);
}

static void
connect_and_serve(uv_loop_t *loop, const char *path, int *count)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    assert_int_equal(connect(fd, (struct sockaddr *) &a, sizeof(a)), 0);
    for (int i = 0; i < 100 && *count == 0; i++)
        uv_run(loop, UV_RUN_NOWAIT), usleep(1000);
    assert_int_equal(*count, 1);
    close(fd);
}

static void
test_start_stop_unlinks_only_ours(void **state)
{
    struct tmp *t = *state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    int count = 0;
    struct listener l = {0};
    struct pf_error *err = NULL;
    assert_int_equal(listener_start(&l, &loop, t->path, 0600, on_connection, &count, &err), 0);
    connect_and_serve(&loop, t->path, &count);
    listener_stop(&l);
    assert_int_equal(access(t->path, F_OK), -1); /* ours: removed */
    listener_finish(&l);
    uv_run(&loop, UV_RUN_DEFAULT);

    /* A second daemon replaced the file after us: stopping must not remove its socket. */
    struct listener l2 = {0};
    assert_int_equal(listener_start(&l2, &loop, t->path, 0600, on_connection, &count, &err), 0);
    assert_int_equal(unlink(t->path), 0);
    int other = bound_socket(t->path, 1);
    listener_stop(&l2);
    assert_int_equal(access(t->path, F_OK), 0);
    listener_finish(&l2);
    close(other);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void
test_socket_activation(void **state)
{
    struct tmp *t = *state;
    int saved3 = fcntl(3, F_DUPFD_CLOEXEC, 10); /* fd 3 may be in use by the runner */
    int lfd = bound_socket(t->path, 1);
    if (lfd != 3) {
        assert_int_equal(dup2(lfd, 3), 3);
        close(lfd);
    }
    char pid[32];
    snprintf(pid, sizeof(pid), "%d", (int) getpid());
    setenv("LISTEN_PID", pid, 1);
    setenv("LISTEN_FDS", "1", 1);

    uv_loop_t loop;
    uv_loop_init(&loop);
    int count = 0;
    struct listener l = {0};
    struct pf_error *err = NULL;
    if (listener_start(&l, &loop, "/nonexistent/ignored.sock", 0600, on_connection, &count, &err) <
        0)
        fail_msg("listener_start: %s", err->msg);
    assert_true(l.activated);
    assert_null(getenv("LISTEN_FDS")); /* children must not inherit it */
    assert_string_equal(l.path, t->path);
    connect_and_serve(&loop, t->path, &count);
    listener_stop(&l);
    assert_int_equal(access(t->path, F_OK), 0); /* systemd's socket: never unlinked */
    listener_finish(&l);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);

    /* fd 3 that is not a listening socket is refused, with a hint. */
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s != 3) {
        assert_int_equal(dup2(s, 3), 3);
        close(s);
    }
    setenv("LISTEN_PID", pid, 1);
    setenv("LISTEN_FDS", "1", 1);
    int fd = -1;
    assert_int_equal(listener_activation_fd(&fd, &err), -1);
    assert_non_null(strstr(err->msg, "not a listening Unix stream socket"));
    err = pf_error_free(err);
    close(3);
    /* Meant for another process: ignored. */
    setenv("LISTEN_PID", "1", 1);
    setenv("LISTEN_FDS", "1", 1);
    assert_int_equal(listener_activation_fd(&fd, &err), 0);
    assert_int_equal(fd, -1);
    if (saved3 >= 0) {
        dup2(saved3, 3);
        close(saved3);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_path_too_long, setup_tmp, teardown_tmp),
            cmocka_unit_test_setup_teardown(test_stale_socket_replaced, setup_tmp, teardown_tmp),
            cmocka_unit_test_setup_teardown(test_live_daemon_not_replaced, setup_tmp, teardown_tmp),
            cmocka_unit_test_setup_teardown(test_not_a_socket_refused, setup_tmp, teardown_tmp),
            cmocka_unit_test_setup_teardown(test_mode_applied, setup_tmp, teardown_tmp),
            cmocka_unit_test_setup_teardown(test_parent_dir_created, setup_tmp, teardown_tmp),
            cmocka_unit_test_setup_teardown(test_start_stop_unlinks_only_ours, setup_tmp,
                                            teardown_tmp),
            cmocka_unit_test_setup_teardown(test_socket_activation, setup_tmp, teardown_tmp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
