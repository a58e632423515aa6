#include "policy_limits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "pf_quote.h"

#define KiB (1024LL)
#define MiB (1024LL * 1024)

static const struct policy_limit_def limit_defs[_POLICY_LIMIT_MAX] = {
        [POLICY_LIMIT_MAX_FRAME_BYTES] = {"max_frame_bytes", POLICY_SCOPE_DAEMON, 8 * MiB, 4 * KiB,
                                          64 * MiB, "largest frame accepted or sent, in bytes"},
        [POLICY_LIMIT_MAX_CONNECTIONS] = {"max_connections", POLICY_SCOPE_DAEMON, 1024, 1, 65536,
                                          "open client connections; more are refused with busy"},
        /* One uid's idle connections must not take every other uid's place: it takes 8 uids
         * at their cap to fill the default max_connections (1024 / 8). An agent needs one
         * connection, a busy one a connection per thread: 128 leaves room for the 64
         * concurrent clients of one uid that the load tests run, and more. */
        [POLICY_LIMIT_MAX_CONNECTIONS_PER_UID] = {"max_connections_per_uid", POLICY_SCOPE_DAEMON,
                                                  128, 1, 65536,
                                                  "open client connections of one peer uid; more "
                                                  "are refused with busy"},
        [POLICY_LIMIT_MAX_INFLIGHT] = {"max_inflight", POLICY_SCOPE_DAEMON, 64, 1, 4096,
                                       "requests in flight on one connection"},
        [POLICY_LIMIT_MAX_OUTBUF_BYTES] = {"max_outbuf_bytes", POLICY_SCOPE_DAEMON, 16 * MiB,
                                           64 * KiB, 256 * MiB,
                                           "unread reply bytes queued for one connection; a client "
                                           "that does not read past this is disconnected"},
        [POLICY_LIMIT_CONN_IDLE_TIMEOUT_MS] = {"conn_idle_timeout_ms", POLICY_SCOPE_DAEMON, 600000,
                                               1000, 86400000,
                                               "a connection with no request in flight and no "
                                               "traffic for this long is closed"},
        [POLICY_LIMIT_MAX_WORKERS] =
                {"max_workers", POLICY_SCOPE_DAEMON, 0, 0, 4096,
                 "live worker processes at once, warm pool included; more jobs "
                 "wait in the queue. 0: clamp(4 x cores, 4, 2 x memory GiB)"},
        [POLICY_LIMIT_MAX_JOBS_PER_UID] = {"max_jobs_per_uid", POLICY_SCOPE_DAEMON, 0, 0, 4096,
                                           "running jobs of one peer uid at once; its others wait. "
                                           "0: max_workers"},
        /* A session holds its worker until it ends, hours later perhaps: without a share of
         * its own, one uid's idle sessions would take every session's place from every other
         * uid. 0 is derived (sched_derive_limits) from what sessions may hold together. */
        [POLICY_LIMIT_MAX_SESSION_WORKERS_PER_UID] =
                {"max_session_workers_per_uid", POLICY_SCOPE_DAEMON, 0, 0, 4096,
                 "workers the sessions of one peer uid may hold or wait for at once; past it, its "
                 "session.open is busy. 0: half, rounded up, of what the sessions of all uids "
                 "may hold (all but a quarter of max_workers), so that another uid always finds "
                 "room"},
        [POLICY_LIMIT_MAX_QUEUED] = {"max_queued", POLICY_SCOPE_DAEMON, 4096, 0, 1048576,
                                     "jobs waiting for a worker, all peers together; more get busy "
                                     "with retry_after_ms"},
        [POLICY_LIMIT_MAX_QUEUED_PER_UID] = {"max_queued_per_uid", POLICY_SCOPE_DAEMON, 1024, 0,
                                             1048576,
                                             "jobs of one peer uid waiting for a worker; more get "
                                             "busy with retry_after_ms"},
        /* Room for 32 queued requests of the largest frame, or thousands of ordinary ones; the
         * unread replies a connection may hold are bounded apart (max_outbuf_bytes). */
        [POLICY_LIMIT_MAX_BYTES_PER_UID] = {"max_bytes_per_uid", POLICY_SCOPE_DAEMON, 256 * MiB,
                                            1 * MiB, 65536 * MiB,
                                            "memory pyfenced holds for one peer uid, in bytes: "
                                            "replies queued on its connections, frames they are "
                                            "receiving, requests waiting for a worker or their "
                                            "session's turn; past it, its new requests get busy "
                                            "with retry_after_ms"},
        /* Several uids at their max_bytes_per_uid: four at the defaults. */
        [POLICY_LIMIT_MAX_BYTES] = {"max_bytes", POLICY_SCOPE_DAEMON, 1024 * MiB, 1 * MiB,
                                    65536 * MiB,
                                    "memory pyfenced holds for all peer uids together, in bytes "
                                    "(what max_bytes_per_uid counts, summed); past it, every "
                                    "uid's new requests get busy with retry_after_ms"},
        /* 64 egress responses at the default egress_max_bytes, about 150 MiB at their peak
         * (daemon/egress.h): a fixed bound, not one derived from memory, so that what a
         * snippet may count on does not change from host to host. */
        [POLICY_LIMIT_EGRESS_MAX_BYTES_HELD] = {"egress_max_bytes_held", POLICY_SCOPE_DAEMON,
                                                64 * MiB, 64 * KiB, 65536 * MiB,
                                                "egress response bytes pyfenced holds at once, "
                                                "for all http_request calls under way together; a "
                                                "response that would pass it ends with a "
                                                "ConnectionError naming this limit"},
        [POLICY_LIMIT_POOL_SIZE] = {"pool_size", POLICY_SCOPE_PROFILE, 0, 0, 64,
                                    "pre-forked, pre-hardened idle workers kept for the profile's "
                                    "ephemeral jobs (the shipped default profile sets 2)"},
        [POLICY_LIMIT_TIMEOUT_MS] = {"timeout_ms", POLICY_SCOPE_JOB, 30000, 1, 3600000,
                                     "wall-clock time of one snippet"},
        [POLICY_LIMIT_CPU_MS] = {"cpu_ms", POLICY_SCOPE_JOB, 30000, 100, 3600000,
                                 "CPU time of one worker (enforced in whole seconds)"},
        [POLICY_LIMIT_MEMORY_MB] = {"memory_mb", POLICY_SCOPE_JOB, 1024, 32, 4096,
                                    "memory of one worker (address space; cgroup where available)"},
        [POLICY_LIMIT_PIDS] = {"pids", POLICY_SCOPE_JOB, 16, 1, 1024,
                               "processes and threads of one worker"},
        [POLICY_LIMIT_OPEN_FILES] = {"open_files", POLICY_SCOPE_JOB, 64, 16, 4096,
                                     "open file descriptors of one worker"},
        [POLICY_LIMIT_FILE_SIZE_MB] = {"file_size_mb", POLICY_SCOPE_JOB, 16, 0, 4096,
                                       "largest file a worker may write"},
        /* Min 1: the scratch is a tmpfs, and a tmpfs of size 0 is unlimited (harden_ns.c). Its
         * pages are memory, charged to the worker's memory cgroup, hence memory_mb's maximum. */
        [POLICY_LIMIT_SCRATCH_MB] = {"scratch_mb", POLICY_SCOPE_JOB, 16, 1, 4096,
                                     "size of the worker's private scratch directory /tmp "
                                     "(a tmpfs: it takes memory); each file in it is also "
                                     "bounded by file_size_mb"},
        [POLICY_LIMIT_MAX_OPS] = {"max_ops", POLICY_SCOPE_JOB, 10000000, 1, 10000000000LL,
                                  "operations (evaluated nodes) of one snippet"},
        [POLICY_LIMIT_MAX_WHILE_ITERATIONS] = {"max_while_iterations", POLICY_SCOPE_JOB, 1000000, 1,
                                               1000000000LL, "iterations of one while loop"},
        [POLICY_LIMIT_MAX_RECURSION] = {"max_recursion", POLICY_SCOPE_JOB, 1000, 10, 5000,
                                        "call depth inside the executor"},
        [POLICY_LIMIT_MAX_OUTPUT_BYTES] = {"max_output_bytes", POLICY_SCOPE_JOB, 1 * MiB, 1 * KiB,
                                           64 * MiB, "printed output of one snippet, in bytes"},
        [POLICY_LIMIT_MAX_LOG_CHARS] = {"max_log_chars", POLICY_SCOPE_JOB, 50000, 100, 10000000,
                                        "characters of `logs`, and of an error's message, kept in "
                                        "the reply (head and tail)"},
        [POLICY_LIMIT_MAX_RESULT_BYTES] =
                {"max_result_bytes", POLICY_SCOPE_JOB, 1 * MiB, 1 * KiB, 32 * MiB,
                 "bytes of the result: output as compact JSON plus output_repr"},
        [POLICY_LIMIT_SESSION_IDLE_TIMEOUT_MS] = {"session_idle_timeout_ms", POLICY_SCOPE_JOB,
                                                  600000, 100, 86400000,
                                                  "a session with no request for this long is "
                                                  "closed"},
        [POLICY_LIMIT_SESSION_LIFETIME_MS] = {"session_lifetime_ms", POLICY_SCOPE_JOB, 86400000,
                                              100, 604800000,
                                              "a session is closed this long after it was opened, "
                                              "used or not"},
        [POLICY_LIMIT_MAX_SESSIONS_PER_UID] = {"max_sessions_per_uid", POLICY_SCOPE_JOB, 16, 0,
                                               4096,
                                               "open sessions of one peer uid (0: no sessions)"},
        [POLICY_LIMIT_MAX_PENDING_PER_SESSION] = {"max_pending_per_session", POLICY_SCOPE_JOB, 16,
                                                  0, 1024,
                                                  "requests to one session waiting behind the one "
                                                  "its worker runs; more get busy with "
                                                  "retry_after_ms (0: none wait)"},
        [POLICY_LIMIT_EGRESS_TIMEOUT_MS] = {"egress_timeout_ms", POLICY_SCOPE_JOB, 10000, 100,
                                            300000,
                                            "time one egress request may take, connection "
                                            "included"},
        [POLICY_LIMIT_EGRESS_MAX_BYTES] = {"egress_max_bytes", POLICY_SCOPE_JOB, 1 * MiB, 1 * KiB,
                                           32 * MiB,
                                           "bytes of one egress request's body, and of its "
                                           "response (headers and body)"},
        [POLICY_LIMIT_EGRESS_MAX_REQUESTS] = {"egress_max_requests", POLICY_SCOPE_JOB, 16, 0, 10000,
                                              "egress requests of one snippet run"},
};

const struct policy_limit_def *
policy_limit_def(enum policy_limit limit)
{
    if ((int) limit < 0 || limit >= _POLICY_LIMIT_MAX)
        return NULL;
    return &limit_defs[limit];
}

enum policy_limit
policy_limit_from_name(const char *name)
{
    for (int i = 0; i < _POLICY_LIMIT_MAX; i++)
        if (name && strcmp(limit_defs[i].name, name) == 0)
            return (enum policy_limit) i;
    return _POLICY_LIMIT_INVALID;
}

void
policy_limits_init_defaults(struct policy_limits *limits)
{
    for (int i = 0; i < _POLICY_LIMIT_MAX; i++)
        limits->v[i] = limit_defs[i].def;
}

int
policy_limits_set(struct policy_limits *limits, enum policy_limit limit, int64_t value,
                  const char *field, struct pf_error **err)
{
    const struct policy_limit_def *def = policy_limit_def(limit);
    if (!def)
        return pf_error_set(err, PF_E_INTERNAL, "%s: unknown limit %d", field, (int) limit);
    if (value < def->min)
        return pf_error_set(err, PF_E_CONFIG, "%s: %lld is below minimum %lld", field,
                            (long long) value, (long long) def->min);
    if (value > def->max)
        return pf_error_set(err, PF_E_CONFIG, "%s: %lld exceeds maximum %lld", field,
                            (long long) value, (long long) def->max);
    limits->v[limit] = value;
    return 0;
}

int
policy_limits_read_integral(const cJSON *item, const char *field, double *ret,
                            struct pf_error **err)
{
    char text[80];
    msg_describe_value(item, text, sizeof(text));
    double d = cJSON_IsNumber(item) ? item->valuedouble : NAN;
    if (!isfinite(d) || d != floor(d))
        return pf_error_set(err, PF_E_BAD_REQUEST, "%s: %s is not an integer", field, text);
    *ret = d;
    return 0;
}

int
policy_limits_check_range(enum policy_limit l, double d, const char *field, struct pf_error **err)
{
    char text[40];
    msg_format_number(d, text, sizeof(text));
    if (d < (double) limit_defs[l].min)
        return pf_error_set(err, PF_E_CONFIG, "%s: %s is below minimum %lld", field, text,
                            (long long) limit_defs[l].min);
    if (d > (double) limit_defs[l].max)
        return pf_error_set(err, PF_E_CONFIG, "%s: %s exceeds maximum %lld", field, text,
                            (long long) limit_defs[l].max);
    return 0;
}

/* Checks one requested value against the table's minimum and the current (profile's) value;
 * the comparisons are made on the double, so they hold whatever its magnitude. */
static int
check_tighten(const cJSON *item, enum policy_limit l, int64_t current, const char *where,
              struct pf_error **err)
{
    char field[256];
    snprintf(field, sizeof(field), "%s.%s", where, item->string);
    double d = 0;
    if (policy_limits_read_integral(item, field, &d, err) < 0)
        return -1;
    char text[40];
    msg_format_number(d, text, sizeof(text));
    if (d < (double) limit_defs[l].min)
        return pf_error_set(err, PF_E_BAD_REQUEST, "%s: %s is below minimum %lld", field, text,
                            (long long) limit_defs[l].min);
    if (d > (double) current)
        return pf_error_set(err, PF_E_BAD_REQUEST,
                            "%s: %s would loosen the profile's %lld (a request may only "
                            "tighten limits)",
                            field, text, (long long) current);
    return 0;
}

int
policy_limits_tighten(struct policy_limits *limits, const cJSON *obj, const char *where,
                      struct pf_error **err)
{
    if (!obj)
        return 0;
    if (!cJSON_IsObject(obj))
        return pf_error_set(err, PF_E_BAD_REQUEST, "%s: must be an object", where);
    struct policy_limits next = *limits;
    const cJSON *item;
    cJSON_ArrayForEach(item, obj) {
        enum policy_limit l = policy_limit_from_name(item->string);
        if (l == _POLICY_LIMIT_INVALID || limit_defs[l].scope != POLICY_SCOPE_JOB)
            return pf_error_set(err, PF_E_BAD_REQUEST, "%s.%.*s: not a per-job limit", where,
                                pf_quote_len(item->string), item->string);
        if (check_tighten(item, l, next.v[l], where, err) < 0)
            return -1;
        /* Within [min, current], so exact as an int64. */
        next.v[l] = (int64_t) item->valuedouble;
    }
    *limits = next;
    return 0;
}

cJSON *
policy_limits_to_json(const struct policy_limits *limits, enum policy_scope scope)
{
    cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return NULL;
    for (int i = 0; i < _POLICY_LIMIT_MAX; i++) {
        if (limit_defs[i].scope != scope)
            continue;
        if (!cJSON_AddNumberToObject(obj, limit_defs[i].name, (double) limits->v[i])) {
            cJSON_Delete(obj);
            return NULL;
        }
    }
    return obj;
}
