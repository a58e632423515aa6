/* Forking a worker straight into its cgroup v2 slot: clone3(CLONE_INTO_CGROUP). A worker that
 * joins its slot after the fork (writing cgroup.procs) moves a whole process, which write-locks
 * the kernel's global threadgroup rwsem: its first writer waits for an RCU grace period while
 * holding the global cgroup mutex, and under load the joining workers queue there. A child
 * created inside its cgroup is not moved at all. See harden_zygote.h. */
#include <errno.h>
#include <linux/sched.h> /* struct clone_args, CLONE_INTO_CGROUP; not with <sched.h> */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harden_zygote.h"

/* Whether clone3 with CLONE_INTO_CGROUP may be tried: cleared for good once the kernel says it
 * lacks either, or when glibc's thread-id slot cannot be found. */
static struct {
    bool probed;
    bool usable;
    int tid_errno;    /* why PR_GET_TID_ADDRESS failed, or 0 */
    int clone3_errno; /* what the last clone3 that fell back returned, or 0 */
    pid_t *tid_slot;  /* glibc's copy of the calling thread's id, in its thread control block */
} the_fork;

/* glibc's fork() has the kernel write the child's thread id into the thread control block
 * (CLONE_CHILD_SETTID) and clear it at exit (CLONE_CHILD_CLEARTID), as for every thread: glibc
 * reads it to name the thread to the kernel (pthread_getcpuclockid, the owner of error-checking
 * and robust mutexes). glibc registered that slot as the thread's clear_child_tid address at
 * start-up (set_tid_address), which PR_GET_TID_ADDRESS reads back. Without it the child would
 * keep its parent's id there. */
static void
probe(void)
{
    if (the_fork.probed)
        return;
    the_fork.probed = true;
    int *slot = NULL;
    if (prctl(PR_GET_TID_ADDRESS, &slot, 0, 0, 0) < 0) {
        the_fork.tid_errno = errno;
        return;
    }
    /* The slot must hold this thread's id: then it is glibc's, not a stale registration. */
    if (!slot || *slot != (int) syscall(SYS_gettid)) {
        the_fork.tid_errno = EINVAL;
        return;
    }
    the_fork.tid_slot = (pid_t *) slot;
    the_fork.usable = true;
}

bool
harden_fork_into_cgroup_usable(char *why, size_t why_len)
{
    probe();
    if (why && why_len) {
        if (the_fork.tid_errno)
            snprintf(why, why_len,
                     "the thread-id address glibc registered cannot be read "
                     "(prctl(PR_GET_TID_ADDRESS): %s)",
                     strerror(the_fork.tid_errno));
        else if (the_fork.clone3_errno)
            snprintf(why, why_len, "clone3(CLONE_INTO_CGROUP): %s",
                     strerror(the_fork.clone3_errno));
        else
            snprintf(why, why_len, "clone3(CLONE_INTO_CGROUP)");
    }
    return the_fork.usable;
}

pid_t
harden_fork_into_cgroup(int cgroup_fd, uint64_t ns_flags, bool *ret_placed)
{
    *ret_placed = false;
    probe();
    if ((cgroup_fd >= 0 || ns_flags) && the_fork.usable) {
        struct clone_args args = {
                .flags = ns_flags | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID,
                .child_tid = (uint64_t) (uintptr_t) the_fork.tid_slot,
                .exit_signal = SIGCHLD,
        };
        if (cgroup_fd >= 0) {
            args.flags |= CLONE_INTO_CGROUP;
            args.cgroup = (uint64_t) cgroup_fd;
        }
        long pid = syscall(SYS_clone3, &args, sizeof(args));
        if (pid >= 0) {
            *ret_placed = cgroup_fd >= 0;
            return (pid_t) pid;
        }
        /* The kernel lacks clone3 or CLONE_INTO_CGROUP: never again. Any other failure (a bad
         * directory, a full pids limit) falls back for this fork only, and the worker then
         * joins by cgroup.procs or fails closed. */
        the_fork.clone3_errno = errno;
        if (errno == ENOSYS || errno == E2BIG)
            the_fork.usable = false;
        /* Still a namespace to make: without the cgroup, once more. */
        if (cgroup_fd >= 0 && ns_flags && the_fork.usable) {
            args.flags &= ~(uint64_t) CLONE_INTO_CGROUP;
            args.cgroup = 0;
            pid = syscall(SYS_clone3, &args, sizeof(args));
            if (pid >= 0)
                return (pid_t) pid;
        }
    }
    /* fork() makes no namespace: a worker that needed one finds it missing (its namespaces
     * layer checks that it is the init of a pid namespace of its own). */
    return fork();
}
