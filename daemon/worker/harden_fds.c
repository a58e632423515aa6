/* Layer 4, fds and environment: the worker keeps its channel (fd 3) and /dev/null on 0-2,
 * nothing else the zygote or the daemon had open, and no environment at all. Also: the worker
 * dies with its parent, the zygote. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harden_internal.h"
#include "pf_cleanup.h"

static pid_t expected_parent;

void
harden_expect_parent(pid_t zygote_pid)
{
    expected_parent = zygote_pid;
}

int
harden_fds_move_channel(int channel_fd, struct pf_error **err)
{
    if (channel_fd < 0)
        return pf_error_set(err, PF_E_INTERNAL, "worker channel: invalid fd %d", channel_fd);
    if (channel_fd != HARDEN_CHANNEL_FD) {
        if (dup3(channel_fd, HARDEN_CHANNEL_FD, O_CLOEXEC) < 0)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "worker channel: dup3(%d, %d)",
                                      channel_fd, HARDEN_CHANNEL_FD);
        close(channel_fd);
    } else if (fcntl(HARDEN_CHANNEL_FD, F_SETFD, FD_CLOEXEC) < 0) {
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "worker channel: F_SETFD");
    }
    /* The daemon made the pair non-blocking; this end is the worker's alone (its own open file
     * description), and the worker does blocking I/O. */
    int fl = fcntl(HARDEN_CHANNEL_FD, F_GETFL);
    if (fl < 0 || fcntl(HARDEN_CHANNEL_FD, F_SETFL, fl & ~O_NONBLOCK) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "worker channel: F_SETFL");
    return HARDEN_CHANNEL_FD;
}

/* One pass over /proc/self/fd; returns how many fds it closed, or -1 when /proc is missing. */
static int
close_pass_proc(int lowfd)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int closed = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        if (*end || end == de->d_name || fd < lowfd || fd == dirfd(d))
            continue;
        close((int) fd);
        closed++;
    }
    closedir(d);
    return closed;
}

int
harden_fds_close_from(int lowfd, bool use_fallback, struct pf_error **err)
{
    if (!use_fallback) {
        if (close_range((unsigned) lowfd, ~0U, 0) == 0)
            return 0;
        if (errno != ENOSYS && errno != EPERM)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "close_range(%d, ~0U)", lowfd);
    }
    /* Passes until one finds nothing: closing entries while listing the directory may make
     * readdir skip some. */
    int n;
    while ((n = close_pass_proc(lowfd)) > 0)
        ;
    if (n == 0)
        return 0;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "getrlimit(RLIMIT_NOFILE)");
    rlim_t top = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 1048576 ? 1048576 : rl.rlim_max;
    for (rlim_t fd = (rlim_t) lowfd; fd < top; fd++)
        close((int) fd);
    return 0;
}

static int
stdio_from_dev_null(struct pf_error **err)
{
    _cleanup_close_ int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "open(\"/dev/null\")");
    for (int i = 0; i <= STDERR_FILENO; i++) {
        if (fd == i) {
            /* dup2 onto itself would keep O_CLOEXEC; keep this one, clear the flag. */
            if (fcntl(i, F_SETFD, 0) < 0)
                return pf_error_set_errno(err, PF_E_INTERNAL, errno, "fcntl(%d, F_SETFD)", i);
            continue;
        }
        if (dup2(fd, i) < 0)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "dup2(/dev/null, %d)", i);
    }
    if (fd <= STDERR_FILENO)
        TAKE_FD(fd);
    return 0;
}

int
harden_fds_die_with_parent(struct pf_error **err)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "prctl(PR_SET_PDEATHSIG)");
    /* If the parent died before the prctl, the signal will never come: check after it. A worker
     * in its own pid namespace (namespaces layer) sees 0, its parent being outside: it cannot
     * check, and relies on its channel's EOF, which follows the zygote's death. */
    pid_t parent = getppid();
    if (parent == 0)
        return 0;
    if (expected_parent ? parent != expected_parent : parent == 1)
        return pf_error_set(err, PF_E_INTERNAL,
                            "the zygote (pid %d) died before the worker was hardened",
                            (int) expected_parent);
    return 0;
}

int
harden_fds_apply(const struct harden_params *p, struct pf_error **err)
{
    (void) p;
    if (fcntl(HARDEN_CHANNEL_FD, F_GETFD) < 0)
        return pf_error_set(err, PF_E_INTERNAL, "worker channel is not at fd %d",
                            HARDEN_CHANNEL_FD);
    if (stdio_from_dev_null(err) < 0)
        return -1;
    if (harden_fds_close_from(HARDEN_CHANNEL_FD + 1, false, err) < 0)
        return -1;
    if (clearenv() != 0)
        return pf_error_set(err, PF_E_INTERNAL, "clearenv() failed");
    return harden_fds_die_with_parent(err);
}
