/* The zygote's side of hardening: start-up (every layer's expensive preparation, once) and the
 * per-job bracket around each fork. See harden_zygote.h. */
#include "harden_zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "harden_cgroup.h"
#include "harden_internal.h"
#include "pf_log.h"

struct harden_job {
    unsigned slot;
    bool cgroup_ready; /* the cgroup layer is on and the slot's limits are written */
};

/* Slots are numbered from 0; a slot is a cgroup of the pool and an identity of the range. */
static struct {
    struct harden_zygote_config config;
    bool *busy;
    unsigned n_busy;
    int current_slot;        /* the prepared job's slot: what a fork carries into the worker */
    bool forked_into_slot;   /* in a worker: harden_job_fork() started it in its slot's cgroup */
    bool told_no_clone_into; /* the zygote logged that it cannot fork into a cgroup */
} the_zygote = {.current_slot = -1};

static uint32_t
uid_base(void)
{
    return the_zygote.config.uid_base ? the_zygote.config.uid_base : HARDEN_UID_BASE_DEFAULT;
}

static uint32_t
uid_count(void)
{
    return the_zygote.config.uid_count ? the_zygote.config.uid_count : HARDEN_UID_COUNT_DEFAULT;
}

int
harden_fd_move_high(int fd)
{
    if (fd < 0 || fd >= HARDEN_HIGH_FD_MIN)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, HARDEN_HIGH_FD_MIN);
    int saved = errno;
    close(fd);
    errno = saved;
    return high;
}

int
harden_zygote_init(const struct harden_zygote_config *config, struct pf_error **err)
{
    if (config)
        the_zygote.config = *config;
    if (harden_cgroup_init(the_zygote.config.cgroup_mode, err) < 0)
        return -1;

    struct pf_error *nerr = NULL;
    if (the_zygote.config.namespaces_off) {
        harden_ns_set_off();
        pf_log_warning(ZYGOTE,
                       "namespaces: off (--namespaces off). WORKERS SHARE THE HOST'S NETWORK, "
                       "PID, IPC, UTS AND MOUNT NAMESPACES: a profile that requires the layer "
                       "refuses its jobs, best-effort ones run without it%s",
                       geteuid() == 0 ? ""
                                      : " (not root: every profile requires it unless it sets it "
                                        "off)");
    } else if (harden_ns_prepare(&nerr) < 0) {
        pf_log_warning(ZYGOTE, "namespaces: %s; the namespaces layer will fail per job", nerr->msg);
        pf_error_free(nerr);
    }

    unsigned unknown = 0;
    if (harden_seccomp_prepare(the_zygote.config.seccomp_strict, &unknown, err) < 0)
        return pf_error_prefix(err, "seccomp filter");
    if (unknown)
        pf_log_notice(SECCOMP,
                      "%u allow-listed syscall names are unknown on this architecture, "
                      "skipped",
                      unknown);

    struct pf_error *perr = NULL;
    if (harden_privileges_prepare(&perr) < 0) {
        /* Each worker then empties the set itself, or its privileges layer says why not. */
        pf_log_notice(ZYGOTE, "%s; each worker drops it itself", perr->msg);
        pf_error_free(perr);
    }

    int abi = harden_landlock_abi();
    if (abi <= 0)
        pf_log_warning(ZYGOTE, "Landlock is not available in this kernel (or disabled at boot): "
                               "the landlock layer is skipped where best-effort, and a profile "
                               "that requires it refuses its jobs");
    /* Without root no other id can be taken: workers keep the daemon's. */
    char ids[48];
    if (geteuid() == 0)
        snprintf(ids, sizeof(ids), "from %u", uid_base());
    else
        snprintf(ids, sizeof(ids), "the daemon's, %u (not root)", (unsigned) geteuid());
    pf_log_notice(ZYGOTE,
                  "hardening: cgroup %s; %snetwork namespace %s; mount view %s; seccomp %u/%u "
                  "BPF instructions (no threads/threads); Landlock %s%d; worker ids %s",
                  harden_cgroup_backend_name(),
                  harden_ns_in_userns() ? "not root: in a user namespace of the zygote's own, "
                                        : "",
                  harden_ns_have_netns() ? "ready" : "UNAVAILABLE",
                  harden_ns_have_mount_view() ? "ready" : "UNAVAILABLE",
                  harden_seccomp_instructions(false), harden_seccomp_instructions(true),
                  abi > 0 ? "ABI " : "UNAVAILABLE, ABI ", abi, ids);
    return 0;
}

void
harden_zygote_finish(void)
{
    harden_cgroup_finish();
    free(the_zygote.busy);
    the_zygote.busy = NULL;
    the_zygote.n_busy = 0;
}

static int
take_slot(unsigned *ret, struct pf_error **err)
{
    for (unsigned i = 0; i < the_zygote.n_busy; i++)
        if (!the_zygote.busy[i]) {
            the_zygote.busy[i] = true;
            *ret = i;
            return 0;
        }
    unsigned n = the_zygote.n_busy ? the_zygote.n_busy * 2 : 16;
    if (n > uid_count())
        n = uid_count();
    if (n <= the_zygote.n_busy)
        return pf_error_set(err, PF_E_BUSY, "all %u worker identities of the range %u+ are in use",
                            uid_count(), uid_base());
    bool *b = realloc(the_zygote.busy, n * sizeof(*b));
    if (!b)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory for the worker slots");
    memset(b + the_zygote.n_busy, 0, (n - the_zygote.n_busy) * sizeof(*b));
    *ret = the_zygote.n_busy;
    b[*ret] = true;
    the_zygote.busy = b;
    the_zygote.n_busy = n;
    return 0;
}

int
harden_job_prepare(const struct harden_params *p, struct harden_job **ret, struct pf_error **err)
{
    struct harden_job *job = calloc(1, sizeof(*job));
    if (!job)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory for a job");
    if (take_slot(&job->slot, err) < 0) {
        free(job);
        return -1;
    }
    struct pf_error *cerr = NULL;
    int cr = harden_cgroup_slot_prepare(job->slot, p, &cerr);
    job->cgroup_ready = cr == 0 && p->level[HARDEN_LAYER_CGROUP] != HARDEN_OFF;
    if (cr < 0) {
        if (p->level[HARDEN_LAYER_CGROUP] == HARDEN_REQUIRED) {
            harden_job_finish(job, NULL);
            return harden_required_failed(HARDEN_LAYER_CGROUP, cerr, err);
        }
        /* Best-effort: said loudly once, not per job. */
        static bool warned;
        if (!warned)
            pf_log_warning(CGROUP,
                           "slot %u: %s; workers run without their cgroup limits (logged once)",
                           job->slot, cerr->msg);
        warned = true;
        pf_error_free(cerr);
    }
    /* A fresh pid namespace per worker costs one unshare here; the mount of its /proc happens in
     * the worker (namespaces layer). */
    bool new_pid_ns =
            p->level[HARDEN_LAYER_NAMESPACES] != HARDEN_OFF && !the_zygote.config.namespaces_off;
    struct pf_error *nerr = NULL;
    if (harden_ns_prefork(new_pid_ns, &nerr) < 0) {
        if (p->level[HARDEN_LAYER_NAMESPACES] == HARDEN_REQUIRED) {
            harden_job_finish(job, NULL);
            return harden_required_failed(HARDEN_LAYER_NAMESPACES, nerr, err);
        }
        pf_error_free(nerr);
    }
    the_zygote.current_slot = (int) job->slot;
    *ret = job;
    return 0;
}

struct harden_job *
harden_job_finish(struct harden_job *job, struct harden_outcome *ret_outcome)
{
    if (!job)
        return NULL;
    struct harden_outcome out = {0};
    /* The slot is emptied either way; its counters are this job's only if its worker could
     * join it, which needs the job's limits written (harden_cgroup_apply). */
    harden_cgroup_slot_finish(job->slot, job->cgroup_ready ? &out : NULL);
    /* The pid namespace prepared for this job's fork has lost its init by now: any later fork
     * into it would fail, so children go back to the zygote's own namespace. */
    struct pf_error *nerr = NULL;
    if (harden_ns_prefork(false, &nerr) < 0) {
        pf_log_warning(ZYGOTE, "%s, ignoring", nerr->msg);
        pf_error_free(nerr);
    }
    if (job->slot < the_zygote.n_busy)
        the_zygote.busy[job->slot] = false;
    if (the_zygote.current_slot == (int) job->slot)
        the_zygote.current_slot = -1;
    if (ret_outcome)
        *ret_outcome = out;
    free(job);
    return NULL;
}

pid_t
harden_job_fork(struct harden_job *job)
{
    /* Only into a slot whose limits this job's profile wrote. */
    int cgroup_fd = job && job->cgroup_ready ? harden_cgroup_slot_dir_fd(job->slot) : -1;
    bool placed = false;
    pid_t pid = harden_fork_into_cgroup(cgroup_fd, harden_ns_fork_flags(), &placed);
    if (pid == 0) {
        /* First thing in the worker: it dies with the zygote from here on, not only from the
         * fds layer on (the cgroup, namespaces and rlimits layers would otherwise run, and a
         * worker outlive its zygote, unsupervised). Unchecked here, where there is nobody to
         * tell: the fds layer makes the same call again, checks it, and checks that the zygote
         * did not die before this one. */
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        the_zygote.forked_into_slot = placed;
        return 0;
    }
    if (pid > 0 && cgroup_fd >= 0 && !placed && !the_zygote.told_no_clone_into) {
        char why[160];
        harden_fork_into_cgroup_usable(why, sizeof(why));
        pf_log_notice(CGROUP,
                      "a worker could not be forked into its cgroup v2 slot (%s): it joins by "
                      "cgroup.procs, as does every worker the kernel refuses so, which "
                      "serializes them on the kernel's global cgroup lock under load (logged "
                      "once)",
                      why);
        the_zygote.told_no_clone_into = true;
    }
    return pid;
}

bool
harden_job_forked_into_slot(void)
{
    return the_zygote.forked_into_slot;
}

void
harden_job_ids(uid_t *ret_uid, gid_t *ret_gid)
{
    unsigned slot = the_zygote.current_slot >= 0 ? (unsigned) the_zygote.current_slot : 0;
    *ret_uid = (uid_t) (uid_base() + slot);
    *ret_gid = (gid_t) (uid_base() + slot);
}

int
harden_job_slot(void)
{
    return the_zygote.current_slot;
}
