/* The `none` backend: where no cgroup can be written. Every operation succeeds and does nothing;
 * the workers then rely on rlimits alone, which harden_cgroup_init() says loudly at start-up,
 * and the cgroup layer itself fails (required) or is skipped (best-effort) per job. */
#include "harden_cgroup.h"

static bool
none_usable(const struct cgroup_host *host, char *why, size_t why_len)
{
    snprintf(why, why_len, "rlimits only");
    return true;
}

static int
none_init_pool(const struct cgroup_host *host, char **ret_root, struct pf_error **err)
{
    return 0;
}

static int
none_create(char *const *root, unsigned index, struct cgroup_slot *slot, struct pf_error **err)
{
    return 0;
}

static int
none_attach(const struct cgroup_slot *slot, struct pf_error **err)
{
    return 0;
}

static int
none_set_limits(struct cgroup_slot *slot, const struct cgroup_limits *limits, struct pf_error **err)
{
    return 0;
}

static int
none_read_events(struct cgroup_slot *slot, struct cgroup_counters *ret, struct pf_error **err)
{
    *ret = (struct cgroup_counters){0};
    return 0;
}

static int
none_reset(struct cgroup_slot *slot, struct pf_error **err)
{
    return 0;
}

static int
none_destroy(struct cgroup_slot *slot, char *const *root, struct pf_error **err)
{
    return 0;
}

const struct cgroup_backend cgroup_backend_none = {
        .name = "none",
        .usable = none_usable,
        .init_pool = none_init_pool,
        .create = none_create,
        .attach = none_attach,
        .set_limits = none_set_limits,
        .read_events = none_read_events,
        .reset = none_reset,
        .destroy = none_destroy,
};
