/* Policy profiles: who may run what, with which limits and which hardening. A profile is one
 * JSON file in the policy directory (pyfence-profile(5)); `default`, `strict` and `data` ship
 * in policy/profiles/ and are also built in, for when no directory is given. Non-logging. */
#ifndef POLICY_PROFILE_H
#define POLICY_PROFILE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "pf_error.h"
#include "policy_egress.h"
#include "policy_limits.h"

#define POLICY_MAX_NAME 64
#define POLICY_MAX_LIST 256

enum policy_layer_level {
    POLICY_LEVEL_OFF,
    POLICY_LEVEL_BEST_EFFORT,
    POLICY_LEVEL_REQUIRED,
    _POLICY_LEVEL_MAX,
    _POLICY_LEVEL_INVALID = -1,
};

/* The hardening layers a profile sets a level for, in DESIGN.md's order (same order and names
 * as daemon/worker/harden.h's enum harden_layer). */
enum policy_layer {
    POLICY_LAYER_CGROUP,
    POLICY_LAYER_NAMESPACES,
    POLICY_LAYER_RLIMITS,
    POLICY_LAYER_FDS,
    POLICY_LAYER_IDENTITY,
    POLICY_LAYER_PRIVILEGES,
    POLICY_LAYER_LANDLOCK,
    POLICY_LAYER_SECCOMP,
    _POLICY_LAYER_MAX,
    _POLICY_LAYER_INVALID = -1,
};

const char *policy_layer_name(enum policy_layer layer);
const char *policy_level_name(enum policy_layer_level level);
/* The level a layer has when a profile does not set it. */
enum policy_layer_level policy_layer_default(enum policy_layer layer);

struct policy_strings {
    char **items;
    size_t n;
};

/* Frees the items; s is left empty. */
void policy_strings_finish(struct policy_strings *s);

/* Who may use a profile. Empty lists everywhere and `everyone` false: nobody but root. */
struct policy_access {
    bool everyone;
    uid_t *uids;
    size_t n_uids;
    gid_t *gids;
    size_t n_gids;
};

struct policy_profile {
    char *name;
    char *description;
    struct policy_strings imports;         /* always allowed imports: "pkg" or "pkg.*" */
    struct policy_strings extra_imports;   /* what a request may add on top */
    struct policy_strings builtins_add;    /* from POLICY_ADDABLE_BUILTINS (builtin_names.h) */
    struct policy_strings builtins_remove; /* builtins taken away from the default set */
    struct policy_strings preload;         /* modules the zygote imports ahead of time */
    struct policy_limits limits;           /* job-scope values used; daemon-scope ignored */
    enum policy_layer_level hardening[_POLICY_LAYER_MAX];
    struct policy_egress egress; /* requests pyfenced may make for the profile's workers */
    struct policy_access access;
    struct policy_access default_for; /* peers for whom this is the default profile */
};

/* Parses one profile from JSON text (strict: proto/msg.h's parser and schema code). `origin`
 * names the source in messages: "profiles/x.json: limits.memory_mb: 9000 exceeds maximum
 * 4096". User and group names in `access` are resolved here (getpwnam/getgrnam); an unknown
 * name is an error. `expected_name` (the file's stem) must equal the "name" field when given. */
int policy_profile_parse(const char *text, size_t len, const char *origin,
                         const char *expected_name, struct policy_profile **ret,
                         struct pf_error **err);
struct policy_profile *policy_profile_free(struct policy_profile *p);

/* Who asks: the credentials its socket recorded when it connected. A group in a profile's
 * access matches the primary group or any supplementary one, as file permissions do. */
struct policy_peer {
    uid_t uid;
    gid_t gid;           /* primary (SO_PEERCRED) */
    const gid_t *groups; /* supplementary (SO_PEERGROUPS); Not owned */
    size_t n_groups;
};

/* True when the peer may use the profile (root always may). */
bool policy_profile_allows(const struct policy_profile *p, const struct policy_peer *peer);
bool policy_profile_is_default_for(const struct policy_profile *p, const struct policy_peer *peer);

/* The effective profile as JSON (what `pyfenced --check-policy` prints). */
cJSON *policy_profile_to_json(const struct policy_profile *p);

#endif
