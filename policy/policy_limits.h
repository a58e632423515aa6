/* Every quantity a client controls has a named limit with a default, a minimum and a maximum,
 * in ONE table (policy/limits.c, redis's static_configs[] pattern). The table drives profile
 * parsing, the "a request may tighten, never loosen" check, error messages, `pyfence status`,
 * the man page's limits table and the tests. Non-logging module. */
#ifndef POLICY_LIMITS_H
#define POLICY_LIMITS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "pf_error.h"

enum policy_limit {
    /* daemon-wide (pyfenced options / daemon config) */
    POLICY_LIMIT_MAX_FRAME_BYTES,
    POLICY_LIMIT_MAX_CONNECTIONS,
    POLICY_LIMIT_MAX_CONNECTIONS_PER_UID,
    POLICY_LIMIT_MAX_INFLIGHT,
    POLICY_LIMIT_MAX_OUTBUF_BYTES,
    POLICY_LIMIT_CONN_IDLE_TIMEOUT_MS,
    POLICY_LIMIT_MAX_WORKERS,
    POLICY_LIMIT_MAX_JOBS_PER_UID,
    POLICY_LIMIT_MAX_SESSION_WORKERS_PER_UID,
    POLICY_LIMIT_MAX_QUEUED,
    POLICY_LIMIT_MAX_QUEUED_PER_UID,
    POLICY_LIMIT_MAX_BYTES_PER_UID,
    POLICY_LIMIT_MAX_BYTES,
    POLICY_LIMIT_EGRESS_MAX_BYTES_HELD,
    /* per profile (profile files only; a request cannot change them) */
    POLICY_LIMIT_POOL_SIZE,
    /* per job (profile; a request may tighten them) */
    POLICY_LIMIT_TIMEOUT_MS,
    POLICY_LIMIT_CPU_MS,
    POLICY_LIMIT_MEMORY_MB,
    POLICY_LIMIT_PIDS,
    POLICY_LIMIT_OPEN_FILES,
    POLICY_LIMIT_FILE_SIZE_MB,
    POLICY_LIMIT_SCRATCH_MB,
    POLICY_LIMIT_MAX_OPS,
    POLICY_LIMIT_MAX_WHILE_ITERATIONS,
    POLICY_LIMIT_MAX_RECURSION,
    POLICY_LIMIT_MAX_OUTPUT_BYTES,
    POLICY_LIMIT_MAX_LOG_CHARS,
    POLICY_LIMIT_MAX_RESULT_BYTES,
    /* sessions (daemon/session.c): a profile sets them, session.open may tighten them */
    POLICY_LIMIT_SESSION_IDLE_TIMEOUT_MS,
    POLICY_LIMIT_SESSION_LIFETIME_MS,
    POLICY_LIMIT_MAX_SESSIONS_PER_UID,
    POLICY_LIMIT_MAX_PENDING_PER_SESSION,
    /* network egress (daemon/egress.c, policy_egress.h): per job, like the executor's budgets */
    POLICY_LIMIT_EGRESS_TIMEOUT_MS,
    POLICY_LIMIT_EGRESS_MAX_BYTES,
    POLICY_LIMIT_EGRESS_MAX_REQUESTS,
    _POLICY_LIMIT_MAX,
    _POLICY_LIMIT_INVALID = -1,
};

enum policy_scope {
    POLICY_SCOPE_DAEMON,
    POLICY_SCOPE_JOB,
    POLICY_SCOPE_PROFILE, /* set by a profile file, never by a request, never sent to a worker */
    _POLICY_SCOPE_MAX,
    _POLICY_SCOPE_INVALID = -1,
};

struct policy_limit_def {
    const char *name; /* wire and file name, e.g. "timeout_ms" */
    enum policy_scope scope;
    int64_t def, min, max;
    const char *help;
};

struct policy_limits {
    int64_t v[_POLICY_LIMIT_MAX];
};

const struct policy_limit_def *policy_limit_def(enum policy_limit limit);
enum policy_limit policy_limit_from_name(const char *name);

void policy_limits_init_defaults(struct policy_limits *limits);

/* Sets one limit, checking the table's [min, max]. `field` names the value where the user wrote
 * it and starts the message: "profiles/x.json: limits.memory_mb: 9000 exceeds maximum 4096",
 * "--max-workers: 0 is below minimum 1". PF_E_CONFIG. */
int policy_limits_set(struct policy_limits *limits, enum policy_limit limit, int64_t value,
                      const char *field, struct pf_error **err);

/* Reads an integral JSON number into *ret (cJSON's valueint saturates); it may lie outside any
 * int64 (1e300). Else "FIELD: VALUE is not an integer", naming what was written ("512", 512.5,
 * null, true). PF_E_BAD_REQUEST. */
int policy_limits_read_integral(const cJSON *item, const char *field, double *ret,
                                struct pf_error **err);
/* Checks d against the table's [min, max] as a double, so that 1e300 is reported as written:
 * "FIELD: 1e+300 exceeds maximum 10000000000". PF_E_CONFIG. */
int policy_limits_check_range(enum policy_limit limit, double d, const char *field,
                              struct pf_error **err);

/* Applies an object {name: integer} of per-job limits that may only tighten: each value must
 * be a job-scope limit, integral, within the table's range, and <= the current value.
 * All-or-nothing: on error *limits is unchanged. Errors are PF_E_BAD_REQUEST and name the limit,
 * e.g. "limits.timeout_ms: 90000 would loosen the profile's 30000". */
int policy_limits_tighten(struct policy_limits *limits, const cJSON *obj, const char *where,
                          struct pf_error **err);

/* {name: value} for every limit of the scope. */
cJSON *policy_limits_to_json(const struct policy_limits *limits, enum policy_scope scope);

#endif
