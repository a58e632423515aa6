/* cgroup v2 backend (systemd Delegate=yes): the zygote moves the processes of its own cgroup
 * into a "supervisor" leaf if that is needed to enable controllers (the no-internal-process
 * rule), then keeps the pool in "<own>/pyfence-<pid>/w<N>". memory.max with memory.swap.max 0,
 * pids.max, cpu.max; outcomes from memory.events, pids.events, memory.peak (reset per job through
 * the slot's fd, kernel 6.12+) and cpu.stat, each kept open by the slot and read with pread;
 * leftovers killed with cgroup.kill when pids.current says there are any. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harden_cgroup.h"
#include "pf_cleanup.h"

static bool
v2_usable(const struct cgroup_host *host, char *why, size_t why_len)
{
    if (!host->v2_dir) {
        snprintf(why, why_len, "no cgroup2 mount");
        return false;
    }
    if (!cgroup_v2_has(host, "memory") || !cgroup_v2_has(host, "pids")) {
        snprintf(why, why_len, "cgroup '%s' offers controllers '%s', not memory and pids",
                 host->v2_dir, host->v2_controllers ? host->v2_controllers : "");
        return false;
    }
    if (access(host->v2_dir, W_OK) < 0) {
        snprintf(why, why_len, "cgroup '%s' is not writable (not delegated to us)", host->v2_dir);
        return false;
    }
    snprintf(why, why_len, "delegated cgroup '%s' with controllers '%s'", host->v2_dir,
             host->v2_controllers);
    return true;
}

static int
enable_controllers(const char *dir, struct pf_error **err)
{
    /* cpu is optional: some delegations do not give it. */
    if (cgroup_write(dir, "cgroup.subtree_control", "+memory +pids", err) < 0)
        return -1;
    (void) cgroup_write(dir, "cgroup.subtree_control", "+cpu", NULL);
    return 0;
}

/* The pids listed in dir/cgroup.procs (at most n). */
static int
list_procs(const char *dir, pid_t *pids, size_t n, size_t *ret_n, struct pf_error **err)
{
    _cleanup_free_ char *procs = NULL;
    if (asprintf(&procs, "%s/cgroup.procs", dir) < 0)
        return pf_error_set(err, PF_E_INTERNAL, "cgroup: out of memory");
    FILE *f = fopen(procs, "re");
    if (!f)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup: open '%s'", procs);
    size_t k = 0;
    int pid;
    while (fscanf(f, "%d", &pid) == 1)
        if (k < n)
            pids[k++] = pid;
        else
            k = n + 1;
    fclose(f);
    *ret_n = k;
    return 0;
}

/* Moves the zygote and pyfenced into dir/supervisor, so that dir may enable controllers (a
 * cgroup with processes cannot: the no-internal-process rule). Only when they are alone there:
 * a cgroup that also holds other processes (a login session, say) is not ours to rearrange. */
static int
move_to_supervisor(const char *dir, struct pf_error **err)
{
    pid_t pids[8];
    size_t n = 0;
    if (list_procs(dir, pids, PF_ELEMENTSOF(pids), &n, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (i >= PF_ELEMENTSOF(pids) || (pids[i] != getpid() && pids[i] != getppid()))
            return pf_error_set(err, PF_E_CONFIG,
                                "cgroup '%s' holds processes other than pyfenced and its zygote, "
                                "so its controllers cannot be enabled without moving them; give "
                                "pyfenced a cgroup of its own (systemd Delegate=yes)",
                                dir);
    _cleanup_free_ char *sup = NULL;
    if (asprintf(&sup, "%s/%s", dir, CGROUP_V2_SUPERVISOR) < 0)
        return pf_error_set(err, PF_E_INTERNAL, "cgroup: out of memory");
    if (cgroup_mkdir(sup, err) < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char buf[16];
        snprintf(buf, sizeof(buf), "%d", (int) pids[i]);
        if (cgroup_write(sup, "cgroup.procs", buf, NULL) < 0 && kill(pids[i], 0) == 0)
            return pf_error_set(err, PF_E_INTERNAL, "cgroup: cannot move pid %d into '%s'",
                                (int) pids[i], sup);
    }
    return 0;
}

static int
v2_init_pool(const struct cgroup_host *host, char **ret_root, struct pf_error **err)
{
    if (enable_controllers(host->v2_dir, NULL) < 0) {
        if (move_to_supervisor(host->v2_dir, err) < 0 || enable_controllers(host->v2_dir, err) < 0)
            return -1;
    }
    cgroup_remove_stale_pools(host->v2_dir);
    char *root = NULL;
    if (asprintf(&root, "%s/pyfence-%d", host->v2_dir, (int) getpid()) < 0)
        return pf_error_set(err, PF_E_INTERNAL, "cgroup: out of memory");
    if (cgroup_mkdir(root, err) < 0 || enable_controllers(root, err) < 0) {
        rmdir(root);
        free(root);
        return -1;
    }
    ret_root[0] = root;
    return 0;
}

static int
v2_create(char *const *root, unsigned index, struct cgroup_slot *slot, struct pf_error **err)
{
    cgroup_slot_init_fds(slot);
    if (asprintf(&slot->dir[0], "%s/w%u", root[0], index) < 0)
        return pf_error_set(err, PF_E_INTERNAL, "cgroup: out of memory");
    const char *dir = slot->dir[0];
    if (cgroup_mkdir(dir, err) < 0)
        return -1;
    _cleanup_free_ char *procs = NULL;
    if (asprintf(&procs, "%s/cgroup.procs", dir) < 0)
        return pf_error_set(err, PF_E_INTERNAL, "cgroup: out of memory");
    slot->procs_fd[0] = harden_fd_move_high(open(procs, O_WRONLY | O_CLOEXEC));
    if (slot->procs_fd[0] < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup: open '%s'", procs);
    /* Workers are forked into the slot through this (harden_job_fork); without it they join. */
    slot->dir_fd = harden_fd_move_high(open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC));
    cgroup_slot_open(slot, CGROUP_FILE_PEAK, dir, "memory.peak", O_RDWR);
    if (slot->file_fd[CGROUP_FILE_PEAK] < 0)
        cgroup_slot_open(slot, CGROUP_FILE_PEAK, dir, "memory.peak", O_RDONLY);
    /* A peak read through this fd counts from this fd's last reset (kernel 6.12+). */
    slot->peak_resettable = slot->file_fd[CGROUP_FILE_PEAK] >= 0 &&
                            write(slot->file_fd[CGROUP_FILE_PEAK], "reset", 5) == 5;
    /* What v2_read_events and v2_reset use after every job. cpu.stat and cgroup.kill may be
     * absent (cpu not delegated, kernel before 5.14): -1 says so for the slot's lifetime. */
    cgroup_slot_open(slot, CGROUP_FILE_OOM, dir, "memory.events", O_RDONLY);
    cgroup_slot_open(slot, CGROUP_FILE_PIDS_EVENTS, dir, "pids.events", O_RDONLY);
    cgroup_slot_open(slot, CGROUP_FILE_PIDS_CURRENT, dir, "pids.current", O_RDONLY);
    cgroup_slot_open(slot, CGROUP_FILE_CPU, dir, "cpu.stat", O_RDONLY);
    cgroup_slot_open(slot, CGROUP_FILE_KILL, dir, "cgroup.kill", O_WRONLY);
    /* On OOM, kill the whole worker (its threads and children), not one task of it. */
    if (cgroup_file_exists(dir, "memory.oom.group"))
        (void) cgroup_write(dir, "memory.oom.group", "1", NULL);
    return 0;
}

static int
v2_attach(const struct cgroup_slot *slot, struct pf_error **err)
{
    if (write(slot->procs_fd[0], "0", 1) != 1)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup: joining '%s'", slot->dir[0]);
    return 0;
}

static int
v2_set_limits(struct cgroup_slot *slot, const struct cgroup_limits *l, struct pf_error **err)
{
    const char *dir = slot->dir[0];
    char cpu[64];
    snprintf(cpu, sizeof(cpu), "%llu %llu", (unsigned long long) l->cpu_quota_us,
             (unsigned long long) l->cpu_period_us);
    if (cgroup_write_u64(dir, "memory.max", l->memory_bytes, err) < 0 ||
        cgroup_write_u64(dir, "pids.max", l->pids, err) < 0)
        return -1;
    /* Absent without swap accounting, absent cpu when not delegated: both optional. */
    if (cgroup_file_exists(dir, "memory.swap.max") &&
        cgroup_write(dir, "memory.swap.max", "0", err) < 0)
        return -1;
    if (cgroup_file_exists(dir, "cpu.max") && cgroup_write(dir, "cpu.max", cpu, err) < 0)
        return -1;
    return 0;
}

static int
v2_read_events(struct cgroup_slot *slot, struct cgroup_counters *ret, struct pf_error **err)
{
    struct cgroup_counters c = {0};
    const char *dir = slot->dir[0];
    if (cgroup_slot_read_key(slot, CGROUP_FILE_OOM, dir, "memory.events", "oom_kill", &c.oom_kill,
                             err) < 0 ||
        cgroup_slot_read_key(slot, CGROUP_FILE_PIDS_EVENTS, dir, "pids.events", "max", &c.pids_max,
                             err) < 0)
        return -1;
    if (slot->file_fd[CGROUP_FILE_CPU] >= 0 &&
        cgroup_slot_read_key(slot, CGROUP_FILE_CPU, dir, "cpu.stat", "usage_usec", &c.cpu_usage_us,
                             err) < 0)
        return -1;
    if (slot->peak_resettable) {
        char buf[32];
        ssize_t n = pread(slot->file_fd[CGROUP_FILE_PEAK], buf, sizeof(buf) - 1, 0);
        if (n > 0) {
            buf[n] = '\0';
            c.peak_bytes = strtoull(buf, NULL, 10);
        }
    }
    *ret = c;
    return 0;
}

static int
v2_reset(struct cgroup_slot *slot, struct pf_error **err)
{
    const char *dir = slot->dir[0];
    /* pids.current 0: nothing left to kill, the usual case once the worker was reaped. */
    if (cgroup_slot_may_have_tasks(slot)) {
        int r = slot->file_fd[CGROUP_FILE_KILL] >= 0
                        ? cgroup_slot_write(slot, CGROUP_FILE_KILL, dir, "cgroup.kill", "1", err)
                        : cgroup_kill_listed(dir, err);
        if (r < 0)
            return -1;
    }
    if (slot->peak_resettable && write(slot->file_fd[CGROUP_FILE_PEAK], "reset", 5) != 5)
        slot->peak_resettable = false;
    return 0;
}

static int
v2_destroy(struct cgroup_slot *slot, char *const *root, struct pf_error **err)
{
    int r = v2_reset(slot, err);
    cgroup_slot_close_fds(slot);
    /* cgroup.kill is asynchronous: give the dying a moment before rmdir. */
    for (int i = 0; i < 100 && rmdir(slot->dir[0]) < 0 && errno == EBUSY; i++)
        usleep(1000);
    free(slot->dir[0]);
    slot->dir[0] = NULL;
    return r;
}

const struct cgroup_backend cgroup_backend_v2 = {
        .name = "v2",
        .usable = v2_usable,
        .init_pool = v2_init_pool,
        .create = v2_create,
        .attach = v2_attach,
        .set_limits = v2_set_limits,
        .read_events = v2_read_events,
        .reset = v2_reset,
        .destroy = v2_destroy,
};
