/* cgroup v1 backend: one directory per hierarchy (memory, pids, cpu, cpuacct), each under the
 * zygote's own cgroup of that hierarchy. memory.memsw.limit_in_bytes (swap 0) where the kernel
 * accounts swap; OOM kills from memory.oom_control, peak from memory.max_usage_in_bytes (reset
 * per job), fork refusals from pids.events, CPU time from cpuacct.usage: each kept open by the
 * slot and read with pread, as is pids.current, which spares reading cgroup.procs when the slot
 * is already empty. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harden_cgroup.h"
#include "pf_cleanup.h"

static bool
v1_usable(const struct cgroup_host *host, char *why, size_t why_len)
{
    if (!host->v1_dir[CGROUP_DIR_MEMORY] || !host->v1_dir[CGROUP_DIR_PIDS]) {
        snprintf(why, why_len, "no v1 memory and pids hierarchies are mounted");
        return false;
    }
    if (access(host->v1_dir[CGROUP_DIR_MEMORY], W_OK) < 0 ||
        access(host->v1_dir[CGROUP_DIR_PIDS], W_OK) < 0) {
        snprintf(why, why_len, "the v1 memory/pids cgroups '%s', '%s' are not writable",
                 host->v1_dir[CGROUP_DIR_MEMORY], host->v1_dir[CGROUP_DIR_PIDS]);
        return false;
    }
    snprintf(why, why_len, "v1 hierarchies: memory, pids%s%s",
             host->v1_dir[CGROUP_DIR_CPU] ? ", cpu" : "",
             host->v1_dir[CGROUP_DIR_CPUACCT] ? ", cpuacct" : "");
    return true;
}

static int
v1_init_pool(const struct cgroup_host *host, char **ret_root, struct pf_error **err)
{
    for (int d = 0; d < _CGROUP_DIR_MAX; d++) {
        if (!host->v1_dir[d] || access(host->v1_dir[d], W_OK) < 0)
            continue;
        cgroup_remove_stale_pools(host->v1_dir[d]);
        char *root = NULL;
        if (asprintf(&root, "%s/pyfence-%d", host->v1_dir[d], (int) getpid()) < 0)
            return pf_error_set(err, PF_E_INTERNAL, "cgroup: out of memory");
        if (cgroup_mkdir(root, err) < 0) {
            free(root);
            return -1;
        }
        ret_root[d] = root;
    }
    return 0;
}

static int
v1_create(char *const *root, unsigned index, struct cgroup_slot *slot, struct pf_error **err)
{
    cgroup_slot_init_fds(slot);
    for (int d = 0; d < _CGROUP_DIR_MAX; d++) {
        if (!root[d])
            continue;
        if (asprintf(&slot->dir[d], "%s/w%u", root[d], index) < 0)
            return pf_error_set(err, PF_E_INTERNAL, "cgroup: out of memory");
        if (cgroup_mkdir(slot->dir[d], err) < 0)
            return -1;
        /* The worker joins by `tasks`, not cgroup.procs: see v1_attach. */
        _cleanup_free_ char *tasks = NULL;
        if (asprintf(&tasks, "%s/tasks", slot->dir[d]) < 0)
            return pf_error_set(err, PF_E_INTERNAL, "cgroup: out of memory");
        slot->procs_fd[d] = harden_fd_move_high(open(tasks, O_WRONLY | O_CLOEXEC));
        if (slot->procs_fd[d] < 0)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup: open '%s'", tasks);
    }
    /* What v1_read_events and v1_reset use after every job. */
    const char *mem = slot->dir[CGROUP_DIR_MEMORY], *pids = slot->dir[CGROUP_DIR_PIDS];
    const char *cpuacct = slot->dir[CGROUP_DIR_CPUACCT];
    if (mem) {
        cgroup_slot_open(slot, CGROUP_FILE_OOM, mem, "memory.oom_control", O_RDONLY);
        cgroup_slot_open(slot, CGROUP_FILE_PEAK, mem, "memory.max_usage_in_bytes", O_RDWR);
    }
    if (pids) {
        cgroup_slot_open(slot, CGROUP_FILE_PIDS_EVENTS, pids, "pids.events", O_RDONLY);
        cgroup_slot_open(slot, CGROUP_FILE_PIDS_CURRENT, pids, "pids.current", O_RDONLY);
    }
    if (cpuacct)
        cgroup_slot_open(slot, CGROUP_FILE_CPU, cpuacct, "cpuacct.usage", O_RDONLY);
    return 0;
}

/* The threads of the calling process, from the link count of /proc/self/task (2 + threads):
 * one stat, where /proc/self/status would be an open, a read and a parse. */
static int
count_own_threads(struct pf_error **err)
{
    struct stat st;
    if (stat("/proc/self/task", &st) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                  "cgroup: counting the worker's threads in /proc/self/task");
    return st.st_nlink > 2 ? (int) (st.st_nlink - 2) : 0;
}

/* The worker writes "0" (itself) to each slot's `tasks`, which moves the calling thread only.
 * Moving a whole process (cgroup.procs) write-locks the kernel's global threadgroup rwsem, whose
 * first writer waits for an RCU grace period while holding the global cgroup mutex: under load
 * the joining workers queued behind each other there (~0.45 of them at any moment with 16
 * clients; see README, Benchmarks). Moving the current thread alone takes neither. It moves the
 * whole worker only while the worker has one thread, so that is checked first: a second thread
 * would stay outside the slot's limits. */
static int
v1_attach(const struct cgroup_slot *slot, struct pf_error **err)
{
    int threads = count_own_threads(err);
    if (threads < 0)
        return -1;
    if (threads != 1)
        return pf_error_set(err, PF_E_INTERNAL,
                            "cgroup: the worker has %d threads when it joins its slot, where "
                            "v1 moves only the calling one (a thread started before hardening?)",
                            threads);
    for (int d = 0; d < _CGROUP_DIR_MAX; d++) {
        if (slot->procs_fd[d] < 0)
            continue;
        /* "0" is the writer itself. */
        if (write(slot->procs_fd[d], "0", 1) != 1)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup: joining '%s'",
                                      slot->dir[d]);
    }
    return 0;
}

/* The memory limit the slot has now: what was written last, or, when that is unknown (a fresh
 * slot, or a write that failed part-way and left memsw at the last job's value), what the file
 * says. Taken for "no limit", as in a fresh slot, when it cannot be read. */
static uint64_t
current_memory_limit(const struct cgroup_slot *slot, const char *mem)
{
    if (slot->applied.memory_bytes)
        return slot->applied.memory_bytes;
    uint64_t v;
    if (cgroup_read_u64(mem, "memory.limit_in_bytes", &v, NULL) < 0)
        return UINT64_MAX;
    return v;
}

static int
v1_set_limits(struct cgroup_slot *slot, const struct cgroup_limits *l, struct pf_error **err)
{
    const char *mem = slot->dir[CGROUP_DIR_MEMORY];
    if (mem) {
        /* memsw must stay >= limit: raise memsw first when growing, after when shrinking. */
        bool memsw = cgroup_file_exists(mem, "memory.memsw.limit_in_bytes");
        bool growing = memsw && l->memory_bytes > current_memory_limit(slot, mem);
        if (memsw && growing &&
            cgroup_write_u64(mem, "memory.memsw.limit_in_bytes", l->memory_bytes, err) < 0)
            return -1;
        if (cgroup_write_u64(mem, "memory.limit_in_bytes", l->memory_bytes, err) < 0)
            return -1;
        if (memsw && !growing &&
            cgroup_write_u64(mem, "memory.memsw.limit_in_bytes", l->memory_bytes, err) < 0)
            return -1;
        /* Without swap accounting, swappiness 0 is the closest to "no swap"; a kernel that
         * refuses it still has the memory limit, so its failure is ignored. */
        if (!memsw)
            (void) cgroup_write(mem, "memory.swappiness", "0", NULL);
    }
    if (slot->dir[CGROUP_DIR_PIDS] &&
        cgroup_write_u64(slot->dir[CGROUP_DIR_PIDS], "pids.max", l->pids, err) < 0)
        return -1;
    const char *cpu = slot->dir[CGROUP_DIR_CPU];
    if (cpu && (cgroup_write_u64(cpu, "cpu.cfs_period_us", l->cpu_period_us, err) < 0 ||
                cgroup_write_u64(cpu, "cpu.cfs_quota_us", l->cpu_quota_us, err) < 0))
        return -1;
    return 0;
}

static int
v1_read_events(struct cgroup_slot *slot, struct cgroup_counters *ret, struct pf_error **err)
{
    struct cgroup_counters c = {0};
    const char *mem = slot->dir[CGROUP_DIR_MEMORY], *pids = slot->dir[CGROUP_DIR_PIDS];
    const char *cpuacct = slot->dir[CGROUP_DIR_CPUACCT];
    if (mem && (cgroup_slot_read_key(slot, CGROUP_FILE_OOM, mem, "memory.oom_control", "oom_kill",
                                     &c.oom_kill, err) < 0 ||
                cgroup_slot_read_u64(slot, CGROUP_FILE_PEAK, mem, "memory.max_usage_in_bytes",
                                     &c.peak_bytes, err) < 0))
        return -1;
    if (pids && cgroup_slot_read_key(slot, CGROUP_FILE_PIDS_EVENTS, pids, "pids.events", "max",
                                     &c.pids_max, err) < 0)
        return -1;
    if (cpuacct) {
        uint64_t ns = 0;
        if (cgroup_slot_read_u64(slot, CGROUP_FILE_CPU, cpuacct, "cpuacct.usage", &ns, err) < 0)
            return -1;
        c.cpu_usage_us = ns / 1000;
    }
    *ret = c;
    return 0;
}

static int
v1_reset(struct cgroup_slot *slot, struct pf_error **err)
{
    /* Every hierarchy holds the same processes; the pids one lists them all. Its pids.current
     * says, in one read, whether there is anything to list (usually not: the worker was reaped
     * and its pid namespace took its children with it). */
    const char *dir =
            slot->dir[CGROUP_DIR_PIDS] ? slot->dir[CGROUP_DIR_PIDS] : slot->dir[CGROUP_DIR_MEMORY];
    if (dir && cgroup_slot_may_have_tasks(slot) && cgroup_kill_listed(dir, err) < 0)
        return -1;
    if (slot->dir[CGROUP_DIR_MEMORY] &&
        cgroup_slot_write(slot, CGROUP_FILE_PEAK, slot->dir[CGROUP_DIR_MEMORY],
                          "memory.max_usage_in_bytes", "0", err) < 0)
        return -1;
    return 0;
}

static int
v1_destroy(struct cgroup_slot *slot, char *const *root, struct pf_error **err)
{
    int r = v1_reset(slot, err);
    cgroup_slot_close_fds(slot);
    for (int d = 0; d < _CGROUP_DIR_MAX; d++) {
        /* ENOENT: cpu and cpuacct co-mounted give the same directory twice. */
        if (slot->dir[d] && rmdir(slot->dir[d]) < 0 && errno != ENOENT && r == 0)
            r = pf_error_set_errno(err, PF_E_INTERNAL, errno, "cgroup: rmdir '%s'", slot->dir[d]);
        free(slot->dir[d]);
        slot->dir[d] = NULL;
    }
    return r;
}

const struct cgroup_backend cgroup_backend_v1 = {
        .name = "v1",
        .usable = v1_usable,
        .init_pool = v1_init_pool,
        .create = v1_create,
        .attach = v1_attach,
        .set_limits = v1_set_limits,
        .read_events = v1_read_events,
        .reset = v1_reset,
        .destroy = v1_destroy,
};
