#include "harden_params.h"

#include <stddef.h>
#include <string.h>

#include "msg.h"
#include "pf_cleanup.h"
#include "policy_limits.h"

static const char *const layer_names[_HARDEN_LAYER_MAX] = {
        [HARDEN_LAYER_CGROUP] = "cgroup",     [HARDEN_LAYER_NAMESPACES] = "namespaces",
        [HARDEN_LAYER_RLIMITS] = "rlimits",   [HARDEN_LAYER_FDS] = "fds",
        [HARDEN_LAYER_IDENTITY] = "identity", [HARDEN_LAYER_PRIVILEGES] = "privileges",
        [HARDEN_LAYER_LANDLOCK] = "landlock", [HARDEN_LAYER_SECCOMP] = "seccomp",
};

static const char *const level_names[_HARDEN_LEVEL_MAX] = {
        [HARDEN_OFF] = "off",
        [HARDEN_BEST_EFFORT] = "best-effort",
        [HARDEN_REQUIRED] = "required",
};

const char *
harden_layer_name(enum harden_layer layer)
{
    if ((int) layer < 0 || layer >= _HARDEN_LAYER_MAX)
        return "?";
    return layer_names[layer];
}

const char *
harden_level_name(enum harden_level level)
{
    if ((int) level < 0 || level >= _HARDEN_LEVEL_MAX)
        return "?";
    return level_names[level];
}

enum harden_layer
harden_layer_from_name(const char *name)
{
    for (int i = 0; name && i < _HARDEN_LAYER_MAX; i++)
        if (strcmp(layer_names[i], name) == 0)
            return (enum harden_layer) i;
    return _HARDEN_LAYER_INVALID;
}

enum harden_level
harden_level_from_name(const char *name)
{
    for (int i = 0; name && i < _HARDEN_LEVEL_MAX; i++)
        if (strcmp(level_names[i], name) == 0)
            return (enum harden_level) i;
    return _HARDEN_LEVEL_INVALID;
}

static int64_t
limit_default(enum policy_limit l)
{
    return policy_limit_def(l)->def;
}

void
harden_params_init(struct harden_params *p)
{
    *p = (struct harden_params){
            .cpu_ms = (uint64_t) limit_default(POLICY_LIMIT_CPU_MS),
            .memory_mb = (uint64_t) limit_default(POLICY_LIMIT_MEMORY_MB),
            .file_size_mb = (uint64_t) limit_default(POLICY_LIMIT_FILE_SIZE_MB),
            .scratch_mb = (uint64_t) limit_default(POLICY_LIMIT_SCRATCH_MB),
            .open_files = (uint64_t) limit_default(POLICY_LIMIT_OPEN_FILES),
            .pids = (uint64_t) limit_default(POLICY_LIMIT_PIDS),
            /* 0: one id per concurrent worker from the zygote's range (harden_zygote.h), so
             * that no two workers share a uid */
            .uid = 0,
            .gid = 0,
    };
    for (int i = 0; i < _HARDEN_LAYER_MAX; i++)
        p->level[i] = HARDEN_OFF;
    p->level[HARDEN_LAYER_RLIMITS] = HARDEN_REQUIRED;
    p->level[HARDEN_LAYER_FDS] = HARDEN_REQUIRED;
    /* The defaults: what every host can give is required; what depends on the host's
     * set-up (delegated cgroup, namespaces, Landlock) is best-effort. */
    p->level[HARDEN_LAYER_IDENTITY] = HARDEN_REQUIRED;
    p->level[HARDEN_LAYER_PRIVILEGES] = HARDEN_REQUIRED;
    p->level[HARDEN_LAYER_SECCOMP] = HARDEN_REQUIRED;
    p->level[HARDEN_LAYER_CGROUP] = HARDEN_BEST_EFFORT;
    p->level[HARDEN_LAYER_NAMESPACES] = HARDEN_BEST_EFFORT;
    p->level[HARDEN_LAYER_LANDLOCK] = HARDEN_BEST_EFFORT;
}

/* The numeric fields, each tied to the policy limit whose range bounds it (uid/gid have none). */
static const struct {
    const char *name;
    size_t offset;
    bool is_u32;
    enum policy_limit limit;
} num_fields[] = {
        {"cpu_ms", offsetof(struct harden_params, cpu_ms), false, POLICY_LIMIT_CPU_MS},
        {"memory_mb", offsetof(struct harden_params, memory_mb), false, POLICY_LIMIT_MEMORY_MB},
        {"file_size_mb", offsetof(struct harden_params, file_size_mb), false,
         POLICY_LIMIT_FILE_SIZE_MB},
        {"scratch_mb", offsetof(struct harden_params, scratch_mb), false, POLICY_LIMIT_SCRATCH_MB},
        {"open_files", offsetof(struct harden_params, open_files), false, POLICY_LIMIT_OPEN_FILES},
        {"pids", offsetof(struct harden_params, pids), false, POLICY_LIMIT_PIDS},
        {"uid", offsetof(struct harden_params, uid), true, _POLICY_LIMIT_INVALID},
        {"gid", offsetof(struct harden_params, gid), true, _POLICY_LIMIT_INVALID},
};

cJSON *
harden_params_to_json(const struct harden_params *p)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON *levels = obj ? cJSON_AddObjectToObject(obj, "levels") : NULL;
    if (!levels)
        goto fail;
    for (size_t i = 0; i < PF_ELEMENTSOF(num_fields); i++) {
        const char *at = (const char *) p + num_fields[i].offset;
        double v = num_fields[i].is_u32 ? (double) *(const uint32_t *) at
                                        : (double) *(const uint64_t *) at;
        if (!cJSON_AddNumberToObject(obj, num_fields[i].name, v))
            goto fail;
    }
    for (int l = 0; l < _HARDEN_LAYER_MAX; l++)
        if (!cJSON_AddStringToObject(levels, layer_names[l], harden_level_name(p->level[l])))
            goto fail;
    return obj;
fail:
    cJSON_Delete(obj);
    return NULL;
}

static int
levels_from_json(const cJSON *levels, struct harden_params *p, struct pf_error **err)
{
    bool seen[_HARDEN_LAYER_MAX] = {false};
    const cJSON *item;
    cJSON_ArrayForEach(item, levels) {
        enum harden_layer l = harden_layer_from_name(item->string);
        if (l == _HARDEN_LAYER_INVALID)
            return pf_error_set(err, PF_E_BAD_REQUEST, "harden.levels: unknown layer '%s'",
                                item->string);
        enum harden_level v = harden_level_from_name(cJSON_GetStringValue(item));
        if (v == _HARDEN_LEVEL_INVALID)
            return pf_error_set(err, PF_E_BAD_REQUEST,
                                "harden.levels.%s: must be \"off\", \"best-effort\" or "
                                "\"required\"",
                                item->string);
        p->level[l] = v;
        seen[l] = true;
    }
    for (int l = 0; l < _HARDEN_LAYER_MAX; l++)
        if (!seen[l])
            return pf_error_set(err, PF_E_BAD_REQUEST, "harden.levels: layer '%s' missing",
                                layer_names[l]);
    return 0;
}

int
harden_params_from_json(const cJSON *obj, struct harden_params *ret, struct pf_error **err)
{
    struct msg_field fields[PF_ELEMENTSOF(num_fields) + 1];
    for (size_t i = 0; i < PF_ELEMENTSOF(num_fields); i++) {
        const struct policy_limit_def *d = policy_limit_def(num_fields[i].limit);
        fields[i] = (struct msg_field){num_fields[i].name, MSG_T_INT, true, d ? (double) d->min : 0,
                                       d ? (double) d->max : (double) UINT32_MAX - 1};
    }
    fields[PF_ELEMENTSOF(num_fields)] = (struct msg_field){"levels", MSG_T_OBJECT, true, 0, 0};
    if (msg_check_fields(obj, fields, PF_ELEMENTSOF(fields), "harden", err) < 0)
        return -1;

    struct harden_params p;
    for (size_t i = 0; i < PF_ELEMENTSOF(num_fields); i++) {
        char *at = (char *) &p + num_fields[i].offset;
        int64_t v = msg_get_int(obj, num_fields[i].name, 0);
        if (num_fields[i].is_u32)
            *(uint32_t *) at = (uint32_t) v;
        else
            *(uint64_t *) at = (uint64_t) v;
    }
    if (levels_from_json(cJSON_GetObjectItemCaseSensitive(obj, "levels"), &p, err) < 0)
        return -1;
    *ret = p;
    return 0;
}
