/* What a worker's result or its end means for the exec reply (job.h, "replies"): shared by
 * ephemeral jobs (job.c) and sessions (session_worker.c). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "conn.h"
#include "harden_zygote.h"
#include "job.h"
#include "json_write.h"
#include "msg.h"
#include "msg_fit.h"
#include "pf_cleanup.h"

/* What the worker's cgroup measured (CHANNEL.md): threads and children included, which the
 * worker's own rusage is not. */
void
job_reply_add_cgroup_stats(const struct zygote_exit *e, cJSON *stats)
{
    if (!e->have_cgroup || !stats)
        return;
    cJSON_DeleteItemFromObjectCaseSensitive(stats, "peak_memory_kb");
    cJSON_DeleteItemFromObjectCaseSensitive(stats, "cgroup_cpu_ms");
    if (e->peak_memory_kb)
        cJSON_AddNumberToObject(stats, "peak_memory_kb", (double) e->peak_memory_kb);
    cJSON_AddNumberToObject(stats, "cgroup_cpu_ms", (double) e->cgroup_cpu_ms);
}

static cJSON *
take_item(cJSON *from, const char *name)
{
    return cJSON_DetachItemFromObjectCaseSensitive(from, name);
}

cJSON *
job_reply_from_result(const cJSON *req_id, cJSON *result, double queue_ms, int *ret_code)
{
    const char *outcome = msg_get_string(result, "outcome", NULL);
    bool ok = outcome && strcmp(outcome, "ok") == 0;
    int code = ok ? 0 : pf_code_from_name(outcome);
    if (!ok && code == 0)
        code = PF_E_INTERNAL;

    cJSON *reply = cJSON_CreateObject();
    if (!reply)
        return NULL;
    cJSON_AddItemToObject(reply, "id", req_id ? cJSON_Duplicate(req_id, 1) : cJSON_CreateNull());
    cJSON_AddBoolToObject(reply, "ok", ok);
    cJSON_AddStringToObject(reply, "outcome", ok ? "ok" : pf_code_name(code));
    static const char *const moved[] = {"output", "output_repr", "logs", "is_final_answer"};
    for (size_t i = 0; i < PF_ELEMENTSOF(moved); i++) {
        cJSON *item = take_item(result, moved[i]);
        if (!item)
            item = strcmp(moved[i], "logs") == 0              ? cJSON_CreateString("")
                   : strcmp(moved[i], "is_final_answer") == 0 ? cJSON_CreateFalse()
                                                              : cJSON_CreateNull();
        cJSON_AddItemToObject(reply, moved[i], item);
    }
    if (!ok) {
        cJSON *error = take_item(result, "error");
        if (!cJSON_IsObject(error)) {
            cJSON_Delete(error);
            error = cJSON_CreateObject();
        }
        if (error) {
            cJSON_DeleteItemFromObjectCaseSensitive(error, "code");
            cJSON_AddStringToObject(error, "code", pf_code_name(code));
            if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(error, "message")))
                cJSON_AddStringToObject(error, "message",
                                        outcome ? outcome : "the worker sent no outcome");
            cJSON_AddItemToObject(reply, "error", error);
        }
    }
    cJSON *stats = take_item(result, "stats");
    if (!cJSON_IsObject(stats)) {
        cJSON_Delete(stats);
        stats = cJSON_CreateObject();
    }
    if (stats) {
        cJSON_DeleteItemFromObjectCaseSensitive(stats, "queue_ms");
        cJSON_AddNumberToObject(stats, "queue_ms", queue_ms);
        cJSON_AddItemToObject(reply, "stats", stats);
    }
    *ret_code = code;
    return reply;
}

void
job_reply_name_profile(cJSON *reply, int code, const char *profile)
{
    if (code != PF_E_HARDENING_UNAVAILABLE)
        return;
    cJSON *error = cJSON_GetObjectItemCaseSensitive(reply, "error");
    const char *msg = msg_get_string(error, "message", NULL);
    if (!msg)
        return;
    _cleanup_free_ char *named = NULL;
    int n = profile && profile[0] ? asprintf(&named, "profile '%s': %s", profile, msg)
                                  : asprintf(&named, "pyfenced's levels without a policy: %s", msg);
    cJSON *s = n >= 0 ? cJSON_CreateString(named) : NULL;
    /* Out of memory: the reply keeps the worker's words, which name the layer. */
    if (s && !cJSON_ReplaceItemInObjectCaseSensitive(error, "message", s))
        cJSON_Delete(s);
}

/* A snippet that failed because its cgroup refused memory or a process (a child OOM-killed, a
 * fork or thread refused: an OSError or RuntimeError in the worker) failed on that limit: the
 * outcome names it, the message keeps the snippet's own error. */
int
job_reply_cgroup_outcome(const struct zygote_exit *e, const struct policy_limits *limits,
                         cJSON *reply, int code)
{
    if (!e->have_cgroup || (code != PF_E_ERROR && code != PF_E_INTERNAL))
        return code;
    int limit_code;
    char msg[1024];
    cJSON *error = cJSON_GetObjectItemCaseSensitive(reply, "error");
    const char *was = msg_get_string(error, "message", "no detail");
    if (e->oom_killed) {
        limit_code = PF_E_MEMORY_LIMIT;
        snprintf(msg, sizeof(msg),
                 "snippet exceeded the memory limit of %lld MiB: the kernel's OOM killer ended a "
                 "process of the job (%s)",
                 (long long) limits->v[POLICY_LIMIT_MEMORY_MB], was);
    } else if (e->pids_limited) {
        limit_code = PF_E_PIDS_LIMIT;
        snprintf(msg, sizeof(msg),
                 "snippet reached the process limit of %lld (pids): a fork or thread was "
                 "refused (%s)",
                 (long long) limits->v[POLICY_LIMIT_PIDS], was);
    } else {
        return code;
    }
    if (!cJSON_IsObject(error))
        return code;
    cJSON_ReplaceItemInObjectCaseSensitive(reply, "outcome",
                                           cJSON_CreateString(pf_code_name(limit_code)));
    cJSON_ReplaceItemInObjectCaseSensitive(error, "code",
                                           cJSON_CreateString(pf_code_name(limit_code)));
    cJSON_ReplaceItemInObjectCaseSensitive(error, "message", cJSON_CreateString(msg));
    return limit_code;
}

int
job_outcome_from_exit(const struct zygote_exit *e, uint64_t cpu_limit_ms,
                      const char *seccomp_syscall, char *msg, size_t msg_size)
{
    bool seccomp_exit = e->signal == 0 && e->exit_code == HARDEN_SECCOMP_EXIT_CODE;
    if ((seccomp_syscall && *seccomp_syscall) || e->signal == SIGSYS || seccomp_exit) {
        snprintf(msg, msg_size, "the snippet made a forbidden system call (%s)",
                 seccomp_syscall && *seccomp_syscall ? seccomp_syscall : "unknown");
        return PF_E_SECCOMP;
    }
    if (e->have_cgroup && e->oom_killed) {
        char peak[64] = "";
        if (e->peak_memory_kb)
            snprintf(peak, sizeof(peak), " (peak %llu MiB)",
                     (unsigned long long) e->peak_memory_kb / 1024);
        snprintf(msg, msg_size,
                 "snippet exceeded the memory limit (memory_mb): the kernel's OOM killer ended "
                 "the worker%s",
                 peak);
        return PF_E_MEMORY_LIMIT;
    }
    if (e->have_cgroup && e->pids_limited && !e->killed_by_request) {
        snprintf(msg, msg_size,
                 "snippet reached the process limit (pids): a fork or thread was refused, then "
                 "the worker died (%s %d)",
                 e->signal ? "signal" : "status", e->signal ? e->signal : e->exit_code);
        return PF_E_PIDS_LIMIT;
    }
    if (e->signal == SIGXCPU || (e->signal == SIGKILL && e->cpu_ms >= cpu_limit_ms)) {
        snprintf(msg, msg_size, "snippet exceeded the CPU limit of %llu ms (used %llu ms)",
                 (unsigned long long) cpu_limit_ms, (unsigned long long) e->cpu_ms);
        return PF_E_CPU_LIMIT;
    }
    if (e->killed_by_request) {
        snprintf(msg, msg_size, "the worker was killed by pyfenced before it finished");
        return PF_E_TIMEOUT;
    }
    if (e->signal == SIGSEGV) {
        /* CPython recurses in C without a depth check through some values (hash, compare or
         * print a tuple nested 300,000 deep): the likeliest cause, since snippets reach no C
         * memory directly. */
        snprintf(msg, msg_size,
                 "worker killed by signal SIGSEGV: a crash in C code, most often its C stack "
                 "overflowing on a value nested too deep (README, Limitations)");
        return PF_E_WORKER_CRASHED;
    }
    if (e->signal != 0) {
        const char *abbrev = sigabbrev_np(e->signal);
        if (abbrev)
            snprintf(msg, msg_size, "worker killed by signal SIG%s", abbrev);
        else
            snprintf(msg, msg_size, "worker killed by signal %d", e->signal);
        return PF_E_WORKER_CRASHED;
    }
    if (e->exit_code != 0) {
        snprintf(msg, msg_size,
                 "worker exited with status %d before sending a result (see pyfenced's log)",
                 e->exit_code);
        return PF_E_WORKER_CRASHED;
    }
    snprintf(msg, msg_size, "worker exited without sending a result");
    return PF_E_WORKER_CRASHED;
}

int
job_reply_fit(cJSON *reply, uint32_t max_frame, int code)
{
    if (msg_fit_exec_reply(reply, max_frame, "max_frame_bytes") < 0)
        return code;
    const char *outcome = msg_get_string(reply, "outcome", "");
    return code == 0 && strcmp(outcome, pf_code_name(PF_E_OUTPUT_LIMIT)) == 0 ? PF_E_OUTPUT_LIMIT
                                                                              : code;
}

/* The event with data "" as JSON: what each piece of data is added to. */
static size_t
output_event_overhead(const cJSON *req_id)
{
    _cleanup_json_ cJSON *ev = msg_event(req_id, "output");
    _cleanup_free_ char *buf = NULL;
    _cleanup_pf_error_ struct pf_error *err = NULL;
    size_t len = 0;
    if (!ev || !cJSON_AddStringToObject(ev, "data", "") ||
        json_write(ev, 0, SIZE_MAX, &buf, &len, &err) < 0)
        return SIZE_MAX;
    return len;
}

/* -1 once the connection is closing: the rest would go nowhere. */
static int
send_output_piece(struct conn *c, const cJSON *req_id, const char *data, size_t len)
{
    _cleanup_json_ cJSON *ev = msg_event(req_id, "output");
    _cleanup_free_ char *piece = strndup(data, len);
    if (ev && piece && cJSON_AddStringToObject(ev, "data", piece))
        return conn_send(c, ev);
    return 0; /* out of memory: this piece is lost, as a single event would be */
}

void
job_send_output(struct conn *c, const cJSON *req_id, const char *data, uint32_t max_frame)
{
    size_t len = strlen(data);
    /* Almost every event: even as \u00XX escapes, with an id of 256 bytes, it fits as it is. */
    if (len <= (max_frame - 2048) / 6) {
        _cleanup_json_ cJSON *ev = msg_event(req_id, "output");
        if (ev && cJSON_AddStringToObject(ev, "data", data))
            conn_send(c, ev);
        return;
    }
    size_t overhead = output_event_overhead(req_id);
    if (overhead >= max_frame)
        return; /* cannot happen with an id of <= 256 bytes and a frame of >= 4 KiB */
    size_t budget = max_frame - overhead;
    do {
        size_t n = msg_fit_prefix(data, len, budget);
        if (n == 0 || send_output_piece(c, req_id, data, n) < 0)
            return;
        data += n;
        len -= n;
    } while (len > 0);
}
