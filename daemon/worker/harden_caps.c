/* Layer 6, privileges: no capability in any set (effective, permitted, inheritable, bounding,
 * ambient), securebits locked so that none can come back through a uid change or an exec,
 * no_new_privs, not dumpable (no ptrace, no core, /proc/PID files root-owned), and death with
 * the parent (set again here: the identity layer's uid change clears PR_SET_PDEATHSIG). */
#include <errno.h>
#include <linux/securebits.h>
#include <signal.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "harden_internal.h"
#include "harden_zygote.h"

static inline void
cap_freep(cap_t *c)
{
    if (*c)
        cap_free(*c);
}
#define _cleanup_cap_ __attribute__((cleanup(cap_freep)))

/* Shrinks the bounding set and locks the securebits; both need CAP_SETPCAP, which is raised into
 * the effective set from the permitted one (kept across the identity switch). */
static int
drop_bounding_and_lock(struct pf_error **err)
{
    _cleanup_cap_ cap_t caps = cap_get_proc();
    if (!caps)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "privileges: cap_get_proc");
    cap_value_t setpcap = CAP_SETPCAP;
    if (cap_set_flag(caps, CAP_EFFECTIVE, 1, &setpcap, CAP_SET) < 0 || cap_set_proc(caps) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                  "privileges: CAP_SETPCAP is not available to shrink the "
                                  "bounding set (is the zygote running without it?)");
    cap_value_t max = cap_max_bits();
    /* Each drop commits a new set of credentials (~1.5 us, even for a capability already gone)
     * where a read costs a tenth of that, and a zygote's workers inherit an empty bounding set
     * (harden_privileges_prepare): read first, drop what is there. */
    for (cap_value_t c = 0; c < max; c++) {
        if (cap_get_bound(c) == 0)
            continue;
        if (cap_drop_bound(c) < 0)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                      "privileges: dropping capability %d from the bounding set",
                                      (int) c);
    }
    unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                         SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                         SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "privileges: PR_SET_SECUREBITS");
    return 0;
}

static int
clear_sets(struct pf_error **err)
{
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "privileges: clearing ambient set");
    _cleanup_cap_ cap_t empty = cap_init();
    if (!empty)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "privileges: cap_init");
    if (cap_set_proc(empty) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                  "privileges: clearing effective, permitted and inheritable sets");
    return 0;
}

int
harden_privileges_apply(const struct harden_params *p, struct pf_error **err)
{
    /* Emptying the sets is done whatever happened before it, so that a best-effort run that
     * could not lock the bounding set still holds no capability. */
    struct pf_error *first = NULL;
    drop_bounding_and_lock(&first);
    clear_sets(first ? NULL : &first);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 && !first)
        pf_error_set_errno(&first, PF_E_INTERNAL, errno, "privileges: PR_SET_NO_NEW_PRIVS");
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 && !first)
        pf_error_set_errno(&first, PF_E_INTERNAL, errno, "privileges: PR_SET_DUMPABLE");
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 && !first)
        pf_error_set_errno(&first, PF_E_INTERNAL, errno, "privileges: PR_SET_PDEATHSIG");
    if (first) {
        if (err && !*err)
            *err = first;
        else
            pf_error_free(first);
        return -1;
    }
    return 0;
}

int
harden_privileges_prepare(struct pf_error **err)
{
    /* The bounding set only matters at execve(), which the zygote never calls: emptying it here
     * costs the zygote nothing and spares every worker ~40 credential commits. */
    cap_value_t max = cap_max_bits();
    for (cap_value_t c = 0; c < max; c++)
        if (cap_get_bound(c) != 0 && cap_drop_bound(c) < 0)
            return pf_error_set_errno(err, PF_E_INTERNAL, errno,
                                      "privileges: dropping capability %d from the zygote's "
                                      "bounding set",
                                      (int) c);
    return 0;
}
