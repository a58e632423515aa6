/* The policy: every profile of a directory, loaded all-or-nothing. A reload (SIGHUP) builds a
 * complete new policy and swaps it in only when every file is valid; otherwise the old policy
 * stays in force and the error says which file, field and value. Non-logging. */
#ifndef POLICY_LOAD_H
#define POLICY_LOAD_H

#include <sys/types.h>

#include "pf_error.h"
#include "profile.h"

struct policy {
    struct policy_profile **profiles; /* sorted by name */
    size_t n;
    char *source; /* directory, or "built-in" */
};

/* Loads every *.json in dir (other names are ignored). A *.json that is not a regular file
 * (a symbolic link, a directory, a FIFO: opened without blocking, never read) fails the load: what
 * it would hold is unknown, and ignoring it would drop a profile silently. At least one profile
 * named "default" must exist. Errors name the file. */
int policy_load_dir(const char *dir, struct policy **ret, struct pf_error **err);
/* The profiles shipped in policy/profiles/, compiled in. */
int policy_load_builtin(struct policy **ret, struct pf_error **err);
struct policy *policy_free(struct policy *p);

const struct policy_profile *policy_find(const struct policy *p, const char *name);

/* The profile a peer gets when it names none: the first (by name) whose default_for matches,
 * else "default". NULL (with *err) when the peer may not use that profile. */
const struct policy_profile *
policy_default_for(const struct policy *p, const struct policy_peer *peer, struct pf_error **err);
/* The named profile if the peer may use it; PF_E_NOT_FOUND otherwise: a profile the peer may
 * not use is reported exactly like a missing one, so names do not leak. */
const struct policy_profile *policy_resolve(const struct policy *p, const char *name,
                                            const struct policy_peer *peer, struct pf_error **err);

#endif
