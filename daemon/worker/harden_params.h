/* struct harden_params on the control channel (CHANNEL.md, "spawn"): the daemon encodes it, the
 * zygote decodes it strictly. Also the names of layers and levels, which both sides and the
 * policy files use. Non-logging. */
#ifndef DAEMON_WORKER_HARDEN_PARAMS_H
#define DAEMON_WORKER_HARDEN_PARAMS_H

#include <cjson/cJSON.h>

#include "harden.h"
#include "pf_error.h"

/* Limits from the policy table's defaults; levels: rlimits and fds required, every other layer
 * off until its implementation lands (see the layer table in harden.c). */
void harden_params_init(struct harden_params *p);

/* Inverse of harden_layer_name / harden_level_name; _INVALID when the name is not ours. */
enum harden_layer harden_layer_from_name(const char *name);
enum harden_level harden_level_from_name(const char *name);

/* {"cpu_ms", "memory_mb", "file_size_mb", "scratch_mb", "open_files", "pids", "uid", "gid",
 *  "levels": {LAYER: LEVEL}}. NULL on OOM. */
cJSON *harden_params_to_json(const struct harden_params *p);

/* Strict: every field required, integral and in range, no unknown or missing field, every
 * layer named once in "levels". PF_E_BAD_REQUEST naming the field. *ret set only on success. */
int harden_params_from_json(const cJSON *obj, struct harden_params *ret, struct pf_error **err);

#endif
