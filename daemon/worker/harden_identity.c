/* Layer 5, identity: the worker becomes an unprivileged uid/gid of its own, with no
 * supplementary groups. Ids come from harden_params (uid/gid); 0 there means "one from the
 * zygote's range, per concurrent worker" (harden_job_ids), so that two workers never share a
 * uid and cannot signal or ptrace each other even without a pid namespace. */
#include <errno.h>
#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "harden_internal.h"
#include "harden_zygote.h"

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
