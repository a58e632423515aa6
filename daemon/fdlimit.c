#include "fdlimit.h"

#include <errno.h>
#include <sys/resource.h>

static uint64_t
from_rlim(rlim_t v)
{
    return v == RLIM_INFINITY ? FDLIMIT_UNLIMITED : (uint64_t) v;
}

uint64_t
fdlimit_fixed(uint64_t max_workers)
{
    return FDLIMIT_DAEMON_FDS + FDLIMIT_ZYGOTES * FDLIMIT_ZYGOTE_FDS +
           max_workers * FDLIMIT_WORKER_FDS + FDLIMIT_ACCEPT_SLACK;
}

int
fdlimit_raise(struct fdlimit *ret, struct pf_error **err)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
        *ret = (struct fdlimit){FDLIMIT_UNLIMITED, FDLIMIT_UNLIMITED, FDLIMIT_UNLIMITED};
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "getrlimit(RLIMIT_NOFILE)");
    }
    *ret = (struct fdlimit){.before = from_rlim(rl.rlim_cur),
                            .soft = from_rlim(rl.rlim_cur),
                            .hard = from_rlim(rl.rlim_max)};
    if (rl.rlim_cur == rl.rlim_max)
        return 0;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                  "cannot raise the open-file limit (RLIMIT_NOFILE) from %llu to "
                                  "its hard limit %llu",
                                  (unsigned long long) ret->before, (unsigned long long) ret->hard);
    ret->soft = ret->hard;
    return 0;
}

int
fdlimit_fit(uint64_t limit, uint64_t max_workers, bool explicit_connections,
            int64_t *max_connections, int64_t *ret_clamped_from, struct pf_error **err)
{
    *ret_clamped_from = 0;
    if (limit == FDLIMIT_UNLIMITED)
        return 0;
    uint64_t fixed = fdlimit_fixed(max_workers);
    uint64_t want = (uint64_t) *max_connections;
    if (limit < fixed + 1)
        return pf_error_set(err, PF_E_CONFIG,
                            "the open-file limit %llu (RLIMIT_NOFILE) leaves no room for any "
                            "connection: pyfenced, its zygotes and %llu workers (max_workers) "
                            "may take %llu; raise it (LimitNOFILE=, ulimit -n) to at least %llu, "
                            "or lower --max-workers",
                            (unsigned long long) limit, (unsigned long long) max_workers,
                            (unsigned long long) fixed, (unsigned long long) (fixed + want));
    uint64_t room = limit - fixed;
    if (want <= room)
        return 0;
    if (explicit_connections)
        return pf_error_set(err, PF_E_CONFIG,
                            "--max-connections %llu does not fit in the open-file limit %llu "
                            "(RLIMIT_NOFILE): with %llu for pyfenced, its zygotes and %llu "
                            "workers (max_workers), at most %llu connections do; raise the limit "
                            "(LimitNOFILE=, ulimit -n) to at least %llu, or lower "
                            "--max-connections",
                            (unsigned long long) want, (unsigned long long) limit,
                            (unsigned long long) fixed, (unsigned long long) max_workers,
                            (unsigned long long) room, (unsigned long long) (fixed + want));
    *ret_clamped_from = *max_connections;
    *max_connections = (int64_t) room;
    return 0;
}
