#include "profile.h"

#include <grp.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin_names.h"
#include "msg.h"
#include "pf_cleanup.h"

static const char *const layer_names[_POLICY_LAYER_MAX] = {
        [POLICY_LAYER_CGROUP] = "cgroup",     [POLICY_LAYER_NAMESPACES] = "namespaces",
        [POLICY_LAYER_RLIMITS] = "rlimits",   [POLICY_LAYER_FDS] = "fds",
        [POLICY_LAYER_IDENTITY] = "identity", [POLICY_LAYER_PRIVILEGES] = "privileges",
        [POLICY_LAYER_LANDLOCK] = "landlock", [POLICY_LAYER_SECCOMP] = "seccomp",
};

static const char *const level_names[_POLICY_LEVEL_MAX] = {
        [POLICY_LEVEL_OFF] = "off",
        [POLICY_LEVEL_BEST_EFFORT] = "best-effort",
        [POLICY_LEVEL_REQUIRED] = "required",
};

/* DESIGN.md / the Hardened-workers issue: required for what keeps the boundary even on a host
 * without cgroups or namespaces; best-effort for what depends on the host. */
static const enum policy_layer_level default_levels[_POLICY_LAYER_MAX] = {
        [POLICY_LAYER_CGROUP] = POLICY_LEVEL_BEST_EFFORT,
        [POLICY_LAYER_NAMESPACES] = POLICY_LEVEL_BEST_EFFORT,
        [POLICY_LAYER_RLIMITS] = POLICY_LEVEL_REQUIRED,
        [POLICY_LAYER_FDS] = POLICY_LEVEL_REQUIRED,
        [POLICY_LAYER_IDENTITY] = POLICY_LEVEL_REQUIRED,
        [POLICY_LAYER_PRIVILEGES] = POLICY_LEVEL_REQUIRED,
        [POLICY_LAYER_LANDLOCK] = POLICY_LEVEL_BEST_EFFORT,
        [POLICY_LAYER_SECCOMP] = POLICY_LEVEL_REQUIRED,
};

const char *
policy_layer_name(enum policy_layer layer)
{
    return (int) layer >= 0 && layer < _POLICY_LAYER_MAX ? layer_names[layer] : "?";
}

enum policy_layer_level
policy_layer_default(enum policy_layer layer)
{
    return (int) layer >= 0 && layer < _POLICY_LAYER_MAX ? default_levels[layer]
                                                         : _POLICY_LEVEL_INVALID;
}

const char *
policy_level_name(enum policy_layer_level level)
{
    return (int) level >= 0 && level < _POLICY_LEVEL_MAX ? level_names[level] : "?";
}

static const struct msg_field profile_fields[] = {
        {"name", MSG_T_STRING, true, 1, POLICY_MAX_NAME},
        {"description", MSG_T_STRING, false, 0, 1024},
        {"imports", MSG_T_STRING_ARRAY, false, 0, POLICY_MAX_LIST},
        {"extra_imports", MSG_T_STRING_ARRAY, false, 0, POLICY_MAX_LIST},
        {"builtins_add", MSG_T_STRING_ARRAY, false, 0, POLICY_MAX_LIST},
        {"builtins_remove", MSG_T_STRING_ARRAY, false, 0, POLICY_MAX_LIST},
        {"preload", MSG_T_STRING_ARRAY, false, 0, POLICY_MAX_LIST},
        {"limits", MSG_T_OBJECT, false, 0, 0},
        {"hardening", MSG_T_OBJECT, false, 0, 0},
        {"egress", MSG_T_ARRAY, false, 0, 0},
        {"access", MSG_T_OBJECT, false, 0, 0},
        {"default_for", MSG_T_OBJECT, false, 0, 0},
};

static const struct msg_field access_fields[] = {
        {"everyone", MSG_T_BOOL, false, 0, 0},
        {"uids", MSG_T_ARRAY, false, 0, 0},
        {"gids", MSG_T_ARRAY, false, 0, 0},
        {"users", MSG_T_STRING_ARRAY, false, 0, POLICY_MAX_LIST},
        {"groups", MSG_T_STRING_ARRAY, false, 0, POLICY_MAX_LIST},
};

void
policy_strings_finish(struct policy_strings *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->items[i]);
    free(s->items);
    *s = (struct policy_strings){0};
}

static void
access_finish(struct policy_access *a)
{
    free(a->uids);
    free(a->gids);
    *a = (struct policy_access){0};
}

struct policy_profile *
policy_profile_free(struct policy_profile *p)
{
    if (!p)
        return NULL;
    free(p->name);
    free(p->description);
    policy_strings_finish(&p->imports);
    policy_strings_finish(&p->extra_imports);
    policy_strings_finish(&p->builtins_add);
    policy_strings_finish(&p->builtins_remove);
    policy_strings_finish(&p->preload);
    policy_egress_finish(&p->egress);
    access_finish(&p->access);
    access_finish(&p->default_for);
    free(p);
    return NULL;
}

/* A module name: dotted identifiers, optionally ending in ".*" (submodules too). */
static bool
module_pattern_valid(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || len > 128)
        return false;
    if (len >= 2 && strcmp(s + len - 2, ".*") == 0)
        len -= 2;
    bool start = true;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '.') {
            if (start)
                return false;
            start = true;
            continue;
        }
        bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        bool digit = c >= '0' && c <= '9';
        if (!alpha && !(digit && !start))
            return false;
        start = false;
    }
    return !start;
}

/* Only the few harmless builtins left out by default may be added, and only builtins snippets
 * have may be removed: a typo would otherwise change nothing, silently. */
static int
check_builtins(const struct policy_profile *p, const char *origin, struct pf_error **err)
{
    static const char *const addable[] = {POLICY_ADDABLE_BUILTINS};
    static const char *const safe[] = {POLICY_SAFE_BUILTINS};
    static const char *const env[] = {POLICY_ENV_BUILTINS};
    for (size_t i = 0; i < p->builtins_add.n; i++)
        if (!policy_builtin_listed(addable, PF_ELEMENTSOF(addable), p->builtins_add.items[i]))
            return pf_error_set(err, PF_E_CONFIG,
                                "%s: builtins_add[%zu]: '%s' cannot be added (addable: id, "
                                "memoryview)",
                                origin, i, p->builtins_add.items[i]);
    for (size_t i = 0; i < p->builtins_remove.n; i++) {
        const char *name = p->builtins_remove.items[i];
        if (!policy_builtin_listed(safe, PF_ELEMENTSOF(safe), name) &&
            !policy_builtin_listed(env, PF_ELEMENTSOF(env), name))
            return pf_error_set(err, PF_E_CONFIG,
                                "%s: builtins_remove[%zu]: '%s' is not one of the builtins "
                                "snippets get (see pyfence-profile(5))",
                                origin, i, name);
    }
    return 0;
}

static int
read_strings(const cJSON *obj, const char *field, bool modules, const char *origin,
             struct policy_strings *ret, struct pf_error **err)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(obj, field);
    if (!arr)
        return 0;
    size_t n = (size_t) cJSON_GetArraySize(arr);
    struct policy_strings s = {calloc(n ? n : 1, sizeof(char *)), 0};
    if (!s.items)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    const cJSON *item;
    cJSON_ArrayForEach(item, arr) {
        if (modules && !module_pattern_valid(item->valuestring)) {
            pf_error_set(err, PF_E_CONFIG,
                         "%s: %s[%zu]: '%s' is not a module name (dotted identifiers, "
                         "optionally ending in '.*')",
                         origin, field, s.n, item->valuestring);
            policy_strings_finish(&s);
            return -1;
        }
        s.items[s.n] = strdup(item->valuestring);
        if (!s.items[s.n]) {
            policy_strings_finish(&s);
            return pf_error_set(err, PF_E_INTERNAL, "out of memory");
        }
        s.n++;
    }
    *ret = s;
    return 0;
}

static int
read_ids(const cJSON *arr, const char *where, unsigned **ret, size_t *ret_n, struct pf_error **err)
{
    size_t n = (size_t) cJSON_GetArraySize(arr);
    if (n > POLICY_MAX_LIST)
        return pf_error_set(err, PF_E_CONFIG, "%s: %zu entries exceed maximum %d", where, n,
                            POLICY_MAX_LIST);
    _cleanup_free_ unsigned *ids = calloc(n ? n : 1, sizeof(unsigned));
    if (!ids)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    size_t i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, arr) {
        double d = cJSON_IsNumber(item) ? item->valuedouble : -1;
        if (!cJSON_IsNumber(item) || d != floor(d) || d < 0 || d > 4294967294.0) {
            char text[80];
            msg_describe_value(item, text, sizeof(text));
            return pf_error_set(err, PF_E_CONFIG,
                                "%s[%zu]: %s is not an id (an integer from 0 to 4294967294%s)",
                                where, i, text,
                                cJSON_IsString(item) ? "; names go in users and groups" : "");
        }
        ids[i++] = (unsigned) d;
    }
    *ret = TAKE_PTR(ids);
    *ret_n = n;
    return 0;
}

static int
append_id(unsigned **ids, size_t *n, unsigned id, struct pf_error **err)
{
    unsigned *grown = realloc(*ids, (*n + 1) * sizeof(unsigned));
    if (!grown)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    grown[(*n)++] = id;
    *ids = grown;
    return 0;
}

static int
read_access(const cJSON *obj, const char *field, const char *origin, struct policy_access *ret,
            struct pf_error **err)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, field);
    if (!a)
        return 0;
    char where[512];
    snprintf(where, sizeof(where), "%s: %s", origin, field);
    if (msg_check_fields(a, access_fields, PF_ELEMENTSOF(access_fields), where, err) < 0)
        return -1;

    struct policy_access acc = {.everyone = msg_get_bool(a, "everyone", false)};
    const cJSON *uids = cJSON_GetObjectItemCaseSensitive(a, "uids");
    const cJSON *gids = cJSON_GetObjectItemCaseSensitive(a, "gids");
    char sub[600];
    snprintf(sub, sizeof(sub), "%s.uids", where);
    if (uids && read_ids(uids, sub, (unsigned **) &acc.uids, &acc.n_uids, err) < 0)
        goto fail;
    snprintf(sub, sizeof(sub), "%s.gids", where);
    if (gids && read_ids(gids, sub, (unsigned **) &acc.gids, &acc.n_gids, err) < 0)
        goto fail;

    const cJSON *item;
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(a, "users")) {
        struct passwd *pw = getpwnam(item->valuestring);
        if (!pw) {
            pf_error_set(err, PF_E_CONFIG, "%s.users: no user named '%s'", where,
                         item->valuestring);
            goto fail;
        }
        if (append_id((unsigned **) &acc.uids, &acc.n_uids, pw->pw_uid, err) < 0)
            goto fail;
    }
    cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(a, "groups")) {
        struct group *gr = getgrnam(item->valuestring);
        if (!gr) {
            pf_error_set(err, PF_E_CONFIG, "%s.groups: no group named '%s'", where,
                         item->valuestring);
            goto fail;
        }
        if (append_id((unsigned **) &acc.gids, &acc.n_gids, gr->gr_gid, err) < 0)
            goto fail;
    }
    *ret = acc;
    return 0;
fail:
    access_finish(&acc);
    return -1;
}

static int
read_hardening(const cJSON *obj, const char *origin, enum policy_layer_level *levels,
               struct pf_error **err)
{
    memcpy(levels, default_levels, sizeof(default_levels));
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(obj, "hardening");
    const cJSON *item;
    cJSON_ArrayForEach(item, h) {
        int layer = -1, level = -1;
        for (int i = 0; i < _POLICY_LAYER_MAX; i++)
            if (strcmp(layer_names[i], item->string) == 0)
                layer = i;
        if (layer < 0)
            return pf_error_set(err, PF_E_CONFIG,
                                "%s: hardening.%s: no such layer (cgroup, namespaces, rlimits, "
                                "fds, identity, privileges, landlock, seccomp)",
                                origin, item->string);
        for (int i = 0; cJSON_IsString(item) && i < _POLICY_LEVEL_MAX; i++)
            if (strcmp(level_names[i], item->valuestring) == 0)
                level = i;
        if (level < 0) {
            char text[80];
            msg_describe_value(item, text, sizeof(text));
            return pf_error_set(err, PF_E_CONFIG,
                                "%s: hardening.%s: %s is not \"off\", \"best-effort\" or "
                                "\"required\"",
                                origin, item->string, text);
        }
        /* Without these two, a worker would inherit the daemon's fds and environment. */
        if ((layer == POLICY_LAYER_FDS || layer == POLICY_LAYER_RLIMITS) &&
            level != POLICY_LEVEL_REQUIRED)
            return pf_error_set(err, PF_E_CONFIG,
                                "%s: hardening.%s: this layer is always "
                                "required",
                                origin, item->string);
        levels[layer] = (enum policy_layer_level) level;
    }
    return 0;
}

/* A preload is imported by name in the zygote: a pattern would name no module, and the
 * preloading zygote would start with nothing preloaded. */
static int
check_preload(const struct policy_profile *p, const char *origin, struct pf_error **err)
{
    for (size_t i = 0; i < p->preload.n; i++)
        if (strchr(p->preload.items[i], '*'))
            return pf_error_set(err, PF_E_CONFIG,
                                "%s: preload[%zu]: '%s' is a pattern; name each module to "
                                "preload",
                                origin, i, p->preload.items[i]);
    return 0;
}

static int
read_limits(const cJSON *obj, const char *origin, struct policy_limits *limits,
            struct pf_error **err)
{
    policy_limits_init_defaults(limits);
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(obj, "limits");
    const cJSON *item;
    char where[512];
    snprintf(where, sizeof(where), "%s: limits", origin);
    cJSON_ArrayForEach(item, l) {
        enum policy_limit id = policy_limit_from_name(item->string);
        const struct policy_limit_def *def = policy_limit_def(id);
        if (!def)
            return pf_error_set(err, PF_E_CONFIG, "%s.%s: no such limit", where, item->string);
        if (def->scope != POLICY_SCOPE_JOB && def->scope != POLICY_SCOPE_PROFILE)
            return pf_error_set(err, PF_E_CONFIG,
                                "%s.%s: not a per-job limit (daemon-wide limits are pyfenced "
                                "options)",
                                where, item->string);
        char field[600];
        snprintf(field, sizeof(field), "%s.%s", where, item->string);
        double d = 0;
        /* Compared as doubles: past 2^53 (1e300) a value is reported as written. */
        if (policy_limits_read_integral(item, field, &d, err) < 0 ||
            policy_limits_check_range(id, d, field, err) < 0 ||
            policy_limits_set(limits, id, (int64_t) d, field, err) < 0)
            return -1;
    }
    return 0;
}

int
policy_profile_parse(const char *text, size_t len, const char *origin, const char *expected_name,
                     struct policy_profile **ret, struct pf_error **err)
{
    cJSON *root = NULL;
    if (msg_parse(text, len, MSG_MAX_DEPTH, &root, err) < 0)
        return pf_error_prefix(err, "%s", origin);
    struct policy_profile *p = calloc(1, sizeof(*p));
    if (!p) {
        cJSON_Delete(root);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    if (msg_check_fields(root, profile_fields, PF_ELEMENTSOF(profile_fields), origin, err) < 0)
        goto fail;
    const char *name = msg_get_string(root, "name", "");
    if (!module_pattern_valid(name) || strchr(name, '.')) {
        pf_error_set(err, PF_E_CONFIG, "%s: name: '%s' must be an identifier", origin, name);
        goto fail;
    }
    if (expected_name && strcmp(name, expected_name) != 0) {
        pf_error_set(err, PF_E_CONFIG, "%s: name: '%s' differs from the file name '%s'", origin,
                     name, expected_name);
        goto fail;
    }
    p->name = strdup(name);
    p->description = strdup(msg_get_string(root, "description", ""));
    if (!p->name || !p->description) {
        pf_error_set(err, PF_E_INTERNAL, "out of memory");
        goto fail;
    }
    if (read_strings(root, "imports", true, origin, &p->imports, err) < 0 ||
        read_strings(root, "extra_imports", true, origin, &p->extra_imports, err) < 0 ||
        read_strings(root, "builtins_add", false, origin, &p->builtins_add, err) < 0 ||
        read_strings(root, "builtins_remove", false, origin, &p->builtins_remove, err) < 0 ||
        check_builtins(p, origin, err) < 0 ||
        read_strings(root, "preload", true, origin, &p->preload, err) < 0 ||
        check_preload(p, origin, err) < 0 || read_limits(root, origin, &p->limits, err) < 0 ||
        read_hardening(root, origin, p->hardening, err) < 0 ||
        read_access(root, "access", origin, &p->access, err) < 0 ||
        read_access(root, "default_for", origin, &p->default_for, err) < 0 ||
        policy_egress_parse(cJSON_GetObjectItemCaseSensitive(root, "egress"), origin, &p->egress,
                            err) < 0 ||
        policy_egress_check_reachable(&p->egress, origin, err) < 0)
        goto fail;
    cJSON_Delete(root);
    *ret = p;
    return 0;
fail:
    cJSON_Delete(root);
    policy_profile_free(p);
    return -1;
}

static bool
peer_in_group(const struct policy_peer *peer, gid_t gid)
{
    if (peer->gid == gid)
        return true;
    for (size_t i = 0; i < peer->n_groups; i++)
        if (peer->groups[i] == gid)
            return true;
    return false;
}

static bool
access_matches(const struct policy_access *a, const struct policy_peer *peer)
{
    if (a->everyone)
        return true;
    for (size_t i = 0; i < a->n_uids; i++)
        if (a->uids[i] == peer->uid)
            return true;
    for (size_t i = 0; i < a->n_gids; i++)
        if (peer_in_group(peer, a->gids[i]))
            return true;
    return false;
}

bool
policy_profile_allows(const struct policy_profile *p, const struct policy_peer *peer)
{
    return peer->uid == 0 || access_matches(&p->access, peer);
}

bool
policy_profile_is_default_for(const struct policy_profile *p, const struct policy_peer *peer)
{
    return access_matches(&p->default_for, peer);
}

static cJSON *
strings_to_json(const struct policy_strings *s)
{
    return cJSON_CreateStringArray((const char *const *) s->items, (int) s->n);
}

static cJSON *
access_to_json(const struct policy_access *a)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "everyone", a->everyone);
    cJSON *uids = cJSON_AddArrayToObject(o, "uids");
    for (size_t i = 0; i < a->n_uids; i++)
        cJSON_AddItemToArray(uids, cJSON_CreateNumber(a->uids[i]));
    cJSON *gids = cJSON_AddArrayToObject(o, "gids");
    for (size_t i = 0; i < a->n_gids; i++)
        cJSON_AddItemToArray(gids, cJSON_CreateNumber(a->gids[i]));
    return o;
}

cJSON *
policy_profile_to_json(const struct policy_profile *p)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "name", p->name);
    cJSON_AddStringToObject(o, "description", p->description);
    cJSON_AddItemToObject(o, "imports", strings_to_json(&p->imports));
    cJSON_AddItemToObject(o, "extra_imports", strings_to_json(&p->extra_imports));
    cJSON_AddItemToObject(o, "builtins_add", strings_to_json(&p->builtins_add));
    cJSON_AddItemToObject(o, "builtins_remove", strings_to_json(&p->builtins_remove));
    cJSON_AddItemToObject(o, "preload", strings_to_json(&p->preload));
    cJSON *limits = policy_limits_to_json(&p->limits, POLICY_SCOPE_JOB);
    cJSON *own = policy_limits_to_json(&p->limits, POLICY_SCOPE_PROFILE);
    cJSON *item;
    while (limits && own && (item = own->child))
        cJSON_AddItemToObject(limits, item->string, cJSON_DetachItemViaPointer(own, item));
    cJSON_Delete(own);
    cJSON_AddItemToObject(o, "limits", limits);
    cJSON *h = cJSON_AddObjectToObject(o, "hardening");
    for (int i = 0; i < _POLICY_LAYER_MAX; i++)
        cJSON_AddStringToObject(h, layer_names[i], level_names[p->hardening[i]]);
    cJSON_AddItemToObject(o, "egress", policy_egress_to_json(&p->egress));
    cJSON_AddItemToObject(o, "access", access_to_json(&p->access));
    cJSON_AddItemToObject(o, "default_for", access_to_json(&p->default_for));
    return o;
}
