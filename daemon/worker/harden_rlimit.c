/* Layer 3, rlimits: the kernel's per-process ceilings. They hold even where no cgroup can be
 * written, which is why they are the one layer always required. */
#include <errno.h>
#include <stdint.h>
#include <sys/resource.h>

#include "harden_internal.h"

#define MiB (1024ULL * 1024)

static int
set_limit(int resource, const char *name, uint64_t soft, uint64_t hard, struct pf_error **err)
{
    /* Never above the current hard limit: lowering needs no privilege, and a worker started
     * under a tighter ceiling (systemd's LimitNOFILE=, say) keeps that one. */
    struct rlimit cur;
    if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
        if (hard > cur.rlim_max)
            hard = cur.rlim_max;
        if (soft > hard)
            soft = hard;
    }
    struct rlimit rl = {.rlim_cur = (rlim_t) soft, .rlim_max = (rlim_t) hard};
    if (setrlimit(resource, &rl) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "setrlimit(%s, %llu, %llu)", name,
                                  (unsigned long long) soft, (unsigned long long) hard);
    return 0;
}

int
harden_rlimits_apply(const struct harden_params *p, struct pf_error **err)
{
    /* Whole seconds, rounded up; hard one second above soft so that SIGXCPU (reported as
     * cpu_limit) comes first, and SIGKILL only if the worker survives it. */
    uint64_t cpu_s = (p->cpu_ms + 999) / 1000;
    if (cpu_s == 0)
        cpu_s = 1;
    if (set_limit(RLIMIT_CPU, "RLIMIT_CPU", cpu_s, cpu_s + 1, err) < 0)
        return -1;
#if !defined(__SANITIZE_ADDRESS__)
    /* Skipped under AddressSanitizer only: its shadow memory reserves terabytes of address
     * space, so any RLIMIT_AS would make every later mmap fail. Test builds only. */
    if (set_limit(RLIMIT_AS, "RLIMIT_AS", p->memory_mb * MiB, p->memory_mb * MiB, err) < 0)
        return -1;
#endif
    if (set_limit(RLIMIT_FSIZE, "RLIMIT_FSIZE", p->file_size_mb * MiB, p->file_size_mb * MiB, err) <
        0)
        return -1;
    if (set_limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", p->open_files, p->open_files, err) < 0)
        return -1;
    /* In its cgroup, pids.max is the exact limit, and a refusal there is what the zygote sees
     * and reports as pids_limit. RLIMIT_NPROC, checked first by the kernel, is then the
     * backstop one above it; alone (no cgroup), it is the limit. */
    uint64_t nproc = harden_cgroup_joined() ? p->pids + 1 : p->pids;
    if (set_limit(RLIMIT_NPROC, "RLIMIT_NPROC", nproc, nproc, err) < 0)
        return -1;
    if (set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0, 0, err) < 0)
        return -1;
    return 0;
}
