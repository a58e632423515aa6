/* Layer 5, identity: the worker becomes an unprivileged uid/gid of its own, with no
 * supplementary groups. Ids come from harden_params (uid/gid); 0 there means "one from the
 * zygote's range, per concurrent worker" (harden_job_ids), so that two workers never share a
 * uid and cannot signal or ptrace each other even without a pid namespace. */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "harden_internal.h"
#include "harden_zygote.h"
#include "pf_cleanup.h"

int
harden_identity_apply(const struct harden_params *p, struct pf_error **err)
{
    uid_t uid = p->uid;
    gid_t gid = p->gid;
    if (uid == 0 || gid == 0)
        harden_job_ids(&uid, &gid);
    if (uid == 0 || gid == 0)
        return pf_error_set(err, PF_E_CONFIG, "identity: refusing to run a worker as uid %u gid %u",
                            (unsigned) uid, (unsigned) gid);

    /* The privileges layer runs next and needs CAP_SETPCAP to shrink the bounding set and lock
     * the securebits, which a uid change from 0 would otherwise clear; it then empties every
     * set itself. With that layer off, the kernel's own clearing on the uid change is kept. */
    unsigned long keep = p->level[HARDEN_LAYER_PRIVILEGES] != HARDEN_OFF;
    if (prctl(PR_SET_KEEPCAPS, keep, 0, 0, 0) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "identity: PR_SET_KEEPCAPS");
    if (setgroups(0, NULL) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "identity: setgroups(0)");
    if (setresgid(gid, gid, gid) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "identity: setresgid(%u)",
                                  (unsigned) gid);
    if (setresuid(uid, uid, uid) < 0)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "identity: setresuid(%u)",
                                  (unsigned) uid);

    /* Trust, but verify: a partial switch must not go unnoticed. */
    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 || ru != uid || eu != uid ||
        su != uid || rg != gid || eg != gid || sg != gid || getgroups(0, NULL) != 0)
        return pf_error_set(err, PF_E_INTERNAL, "identity: uid/gid switch to %u/%u did not hold",
                            (unsigned) uid, (unsigned) gid);
    return 0;
}

int
harden_extra_groups(char *list, size_t size, unsigned *count, struct pf_error **err)
{
    int n = getgroups(0, NULL);
    _cleanup_free_ gid_t *groups = n > 0 ? calloc((size_t) n, sizeof(*groups)) : NULL;
    if (n > 0 && !groups)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    if (n < 0 || (n > 0 && (n = getgroups(n, groups)) < 0))
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "getgroups");
    size_t len = 0;
    *count = 0;
    if (size)
        list[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (groups[i] == getegid())
            continue;
        (*count)++;
        if (len < size)
            len += (size_t) snprintf(list + len, size - len, "%s%u", len ? ", " : "",
                                     (unsigned) groups[i]);
    }
    return 0;
}
