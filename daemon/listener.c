#include "listener.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "pf_socket_path.h"

#if HAVE_LIBSYSTEMD
#    include <systemd/sd-daemon.h>
#endif

#define SD_LISTEN_FDS_START 3

static int
fill_addr(const char *path, struct sockaddr_un *addr, struct pf_error **err)
{
    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    /* libuv 1.44 has no uv_pipe_bind2 and would truncate silently: check ourselves. */
    if (strlen(path) >= sizeof(addr->sun_path))
        return pf_error_set(err, PF_E_CONFIG,
                            "socket path '%s' is %zu bytes, over the %zu bytes a Unix socket "
                            "address holds",
                            path, strlen(path), sizeof(addr->sun_path) - 1);
    memcpy(addr->sun_path, path, strlen(path) + 1);
    return 0;
}

static int
make_parent_dir(const char *path, struct pf_error **err)
{
    _cleanup_free_ char *copy = strdup(path);
    if (!copy)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    const char *dir = dirname(copy);
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return pf_error_set(err, PF_E_CONFIG, "'%s' (the socket's parent) is not a directory",
                                dir);
        return 0;
    }
    if (errno != ENOENT)
        return pf_error_set_errno(err, PF_E_CONFIG, errno, "cannot stat '%s'", dir);
    /* One level only: a missing grandparent usually means a typo in --socket. */
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return pf_error_set_errno(err, PF_E_CONFIG, errno,
                                  "cannot create the socket directory '%s'", dir);
    return 0;
}

int
listener_prepare_path(const char *path, struct pf_error **err)
{
    struct sockaddr_un addr;
    if (fill_addr(path, &addr, err) < 0)
        return -1;
    if (make_parent_dir(path, err) < 0)
        return -1;

    struct stat st;
    if (lstat(path, &st) < 0) {
        if (errno == ENOENT)
            return 0;
        return pf_error_set_errno(err, PF_E_CONFIG, errno, "cannot stat '%s'", path);
    }
    if (!S_ISSOCK(st.st_mode))
        return pf_error_set(err, PF_E_CONFIG,
                            "'%s' exists and is not a socket; refusing to replace it", path);

    _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "socket()");
    if (connect(fd, (struct sockaddr *) &addr, sizeof(addr)) == 0)
        return pf_error_set(err, PF_E_CONFIG, "another pyfenced is listening on '%s'", path);
    if (errno != ECONNREFUSED)
        return pf_error_set_errno(err, PF_E_CONFIG, errno,
                                  "cannot tell whether '%s' is in use; refusing to replace it",
                                  path);
    /* Nobody listens: a socket left by a daemon that died. */
    if (unlink(path) < 0 && errno != ENOENT)
        return pf_error_set_errno(err, PF_E_CONFIG, errno, "cannot remove stale socket '%s'", path);
    pf_log_info(MAIN, "replaced stale socket '%s'", path);
    return 0;
}

int
listener_bind(const char *path, mode_t mode, int *ret_fd, struct pf_error **err)
{
    /* Also tells gcc -O2 with UBSan, which otherwise warns that path may be NULL below. */
    if (!path)
        return pf_error_set(err, PF_E_INTERNAL, "no socket path to bind");
    struct sockaddr_un addr;
    if (fill_addr(path, &addr, err) < 0)
        return -1;
    _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "socket()");

    /* bind() creates the file with 0777 & ~umask: with this umask the socket is never, even
     * for an instant, more open than `mode`. */
    mode_t old_umask = umask(~mode & 0777);
    int r = bind(fd, (struct sockaddr *) &addr, sizeof(addr));
    int bind_errno = errno;
    umask(old_umask);
    if (r < 0)
        return pf_error_set_errno(err, PF_E_CONFIG, bind_errno, "cannot bind '%s'", path);
    if (chmod(path, mode) < 0) {
        pf_error_set_errno(err, PF_E_CONFIG, errno, "cannot chmod '%s' to %04o", path,
                           (unsigned) mode);
        unlink(path);
        return -1;
    }
    if (listen(fd, LISTENER_BACKLOG) < 0) {
        pf_error_set_errno(err, PF_E_CONFIG, errno, "cannot listen on '%s'", path);
        unlink(path);
        return -1;
    }
    *ret_fd = TAKE_FD(fd);
    return 0;
}

#if HAVE_LIBSYSTEMD
static int
activation_count(struct pf_error **err)
{
    int n = sd_listen_fds(1);
    if (n < 0)
        return pf_error_set_errno(err, PF_E_CONFIG, -n, "socket activation (LISTEN_FDS)");
    return n;
}
#else
static int
activation_count(struct pf_error **err)
{
    const char *pid_s = getenv("LISTEN_PID");
    const char *fds_s = getenv("LISTEN_FDS");
    int n = 0;
    if (pid_s && fds_s) {
        char *end;
        errno = 0;
        unsigned long pid = strtoul(pid_s, &end, 10);
        if (errno || *end || pid != (unsigned long) getpid())
            goto done; /* meant for another process */
        long v = strtol(fds_s, &end, 10);
        if (errno || *end || v < 0 || v > 1024) {
            unsetenv("LISTEN_PID");
            unsetenv("LISTEN_FDS");
            return pf_error_set(err, PF_E_CONFIG, "socket activation: bad LISTEN_FDS '%s'", fds_s);
        }
        n = (int) v;
        for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++)
            if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
                return pf_error_set_errno(err, PF_E_CONFIG, errno, "socket activation: fd %d", fd);
    }
done:
    /* As sd_listen_fds(1) does: children must not believe the fds are theirs. */
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    return n;
}
#endif

int
listener_activation_fd(int *ret_fd, struct pf_error **err)
{
    int n = activation_count(err);
    if (n < 0)
        return -1;
    if (n == 0) {
        *ret_fd = -1;
        return 0;
    }
    if (n > 1)
        return pf_error_set(err, PF_E_CONFIG,
                            "socket activation passed %d fds; pyfenced takes exactly one", n);
    int fd = SD_LISTEN_FDS_START;
    int type = 0, accepting = 0;
    socklen_t len = sizeof(type);
    struct sockaddr_un addr;
    socklen_t alen = sizeof(addr);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
        getsockname(fd, (struct sockaddr *) &addr, &alen) < 0)
        return pf_error_set_errno(err, PF_E_CONFIG, errno, "socket activation: fd %d", fd);
    len = sizeof(accepting);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) < 0)
        accepting = 0;
    if (addr.sun_family != AF_UNIX || type != SOCK_STREAM || !accepting)
        return pf_error_set(err, PF_E_CONFIG,
                            "socket activation: fd %d is not a listening Unix stream socket "
                            "(check ListenStream= in pyfenced.socket)",
                            fd);
    *ret_fd = fd;
    return 0;
}

static int
adopt_fd(struct listener *l, uv_loop_t *loop, int fd, uv_connection_cb cb, void *data,
         struct pf_error **err)
{
    int r = uv_pipe_init(loop, &l->pipe, 0);
    if (r < 0) {
        close(fd);
        return pf_error_set(err, PF_E_INTERNAL, "uv_pipe_init: %s", uv_strerror(r));
    }
    l->initialised = true;
    l->pipe.data = data;
    r = uv_pipe_open(&l->pipe, fd);
    if (r < 0) {
        close(fd);
        return pf_error_set(err, PF_E_INTERNAL, "uv_pipe_open: %s", uv_strerror(r));
    }
    r = uv_listen((uv_stream_t *) &l->pipe, LISTENER_BACKLOG, cb);
    if (r < 0)
        return pf_error_set(err, PF_E_CONFIG, "cannot listen on '%s': %s", l->path, uv_strerror(r));
    return 0;
}

static int
start_activated(struct listener *l, uv_loop_t *loop, int fd, uv_connection_cb cb, void *data,
                struct pf_error **err)
{
    struct sockaddr_un addr;
    socklen_t alen = sizeof(addr);
    memset(&addr, 0, sizeof(addr));
    if (getsockname(fd, (struct sockaddr *) &addr, &alen) == 0 && addr.sun_path[0])
        l->path = strndup(addr.sun_path, sizeof(addr.sun_path));
    else
        l->path = strdup("(socket activation)");
    if (!l->path)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    l->activated = true;
    if (adopt_fd(l, loop, fd, cb, data, err) < 0)
        return -1;
    pf_log_notice(MAIN, "listening on '%s' (socket activation)", l->path);
    return 0;
}

int
listener_start(struct listener *l, uv_loop_t *loop, const char *explicit_path, mode_t mode,
               uv_connection_cb cb, void *data, struct pf_error **err)
{
    int fd;
    if (listener_activation_fd(&fd, err) < 0)
        return -1;
    if (fd >= 0)
        return start_activated(l, loop, fd, cb, data, err);

    if (pf_socket_path_resolve(explicit_path, &l->path, err) < 0)
        return -1;
    if (listener_prepare_path(l->path, err) < 0 || listener_bind(l->path, mode, &fd, err) < 0)
        return -1;
    struct stat st;
    if (stat(l->path, &st) == 0) {
        l->created = true;
        l->dev = st.st_dev;
        l->ino = st.st_ino;
    }
    if (adopt_fd(l, loop, fd, cb, data, err) < 0) {
        listener_stop(l);
        return -1;
    }
    pf_log_notice(MAIN, "listening on '%s' (mode %04o)", l->path, (unsigned) mode);
    return 0;
}

void
listener_stop(struct listener *l)
{
    if (l->initialised) {
        if (!uv_is_closing((uv_handle_t *) &l->pipe))
            uv_close((uv_handle_t *) &l->pipe, NULL);
        l->initialised = false;
    }
    if (l->created && l->path) {
        struct stat st;
        /* Only our own socket: a newer daemon may already have replaced it. */
        if (lstat(l->path, &st) == 0 && st.st_dev == l->dev && st.st_ino == l->ino &&
            unlink(l->path) < 0)
            pf_log_warning(MAIN, "cannot remove '%s': %s, ignoring", l->path, strerror(errno));
        l->created = false;
    }
}

void
listener_finish(struct listener *l)
{
    free(l->path);
    l->path = NULL;
}
