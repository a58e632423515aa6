/* Layer 4, fds and environment: the worker keeps its channel (fd 3) and /dev/null on 0-2,
 * nothing else the zygote or the daemon had open (but the zygote's pidfd on 4, until
 * worker_harden() is past the identity layer), and no environment at all. Also: the worker
 * dies with its parent, the zygote, and checks that it did not die already. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harden_internal.h"
#include "harden_zygote.h"
#include "pf_cleanup.h"

static pid_t expected_parent;
/* A pidfd of expected_parent, or -1: it says whether that process is gone from any pid
 * namespace, where getppid() says nothing in a worker whose pid namespace is its own (0). Kept
 * by the worker until worker_harden() is past the identity layer (harden_fds_forget_parent). */
static int parent_pidfd = -1;

void
harden_expect_parent(pid_t zygote_pid)
{
    expected_parent = zygote_pid;
    parent_pidfd = pf_close(parent_pidfd);
    /* Without one (a kernel before 5.3, or no such process), the check falls back to getppid(),
     * which cannot see past a pid namespace. */
    if (zygote_pid > 0)
        parent_pidfd = harden_fd_move_high(pidfd_open(zygote_pid, 0));
}

void
harden_fds_forget_parent(void)
{
    parent_pidfd = pf_close(parent_pidfd);
}

/* Keeps the parent's pidfd just above the channel, out of the way of the fds layer's sweep. */
static int
keep_parent_pidfd(struct pf_error **err)
{
    int low = HARDEN_CHANNEL_FD + 1;
    if (parent_pidfd < 0 || parent_pidfd == low)
        return 0;
    if (dup3(parent_pidfd, low, O_CLOEXEC) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "dup3(parent pidfd, %d)", low);
    pf_close(parent_pidfd);
    parent_pidfd = low;
    return 0;
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

/* Whether the expected parent has exited: its pidfd turns readable then. */
static int
parent_exited(bool *ret, struct pf_error **err)
{
    *ret = false;
    if (parent_pidfd < 0)
        return 0;
    struct pollfd pfd = {.fd = parent_pidfd, .events = POLLIN};
    int n = poll(&pfd, 1, 0);
    if (n < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "poll(parent pidfd)");
    if (pfd.revents & POLLNVAL)
        return pf_error_set(err, PF_E_INTERNAL, "the parent's pidfd %d is not open", parent_pidfd);
    *ret = n > 0 && (pfd.revents & POLLIN);
    return 0;
}

int
harden_fds_die_with_parent(struct pf_error **err)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "prctl(PR_SET_PDEATHSIG)");
    /* If the parent died before the prctl, the signal will never come: check after it. A worker
     * in its own pid namespace sees its parent as 0 (outside it), whether the zygote lives or it
     * was re-parented: there the zygote's pidfd tells. */
    bool exited;
    if (parent_exited(&exited, err) < 0)
        return -1;
    pid_t parent = getppid();
    bool gone =
            exited || (parent != 0 && (expected_parent ? parent != expected_parent : parent == 1));
    if (gone)
        return pf_error_set(err, PF_E_WORKER_CRASHED,
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
    if (stdio_from_dev_null(err) < 0 || keep_parent_pidfd(err) < 0)
        return -1;
    int lowfd = HARDEN_CHANNEL_FD + (parent_pidfd >= 0 ? 2 : 1);
    if (harden_fds_close_from(lowfd, false, err) < 0)
        return -1;
    if (clearenv() != 0)
        return pf_error_set(err, PF_E_INTERNAL, "clearenv() failed");
    return harden_fds_die_with_parent(err);
}
