/* What a valid policy does that its operator must hear at every load (start, SIGHUP,
 * --check-policy), as warnings, not errors: the policy loads. Each line names the profile and
 * says what the setting means for its workers:
 *  - a hardening layer set "off" whose default is stronger (cgroup, namespaces, identity,
 *    privileges, landlock, seccomp), per profile and per layer;
 *  - a module in imports or extra_imports that hands out what the builtins deny (`builtins`,
 *    `io`, `_io`: their `open` reads any file the worker may);
 *  - default_for entries that cannot work as written: two profiles default_for the same uid,
 *    gid or everyone (the first by name wins, the other's entry is dead), and a default_for
 *    that the profile's own access does not admit (those peers get not_found).
 * Non-logging: the caller logs or prints each line. */
#ifndef POLICY_WARNINGS_H
#define POLICY_WARNINGS_H

#include <sys/types.h>

#include "load.h"
#include "profile.h"

/* The warnings of policy p for a pyfenced running as daemon_uid (what a layer being off means
 * depends on it: identity off as root runs workers as root). *ret is set only on success; free
 * it with policy_strings_finish(). */
int policy_warnings(const struct policy *p, uid_t daemon_uid, struct policy_strings *ret,
                    struct pf_error **err);

#endif
