/* A session worker: after its "session" frame it answers one frame at a time, in order ("run"
 * and "get"), until the daemon closes the channel (CHANNEL.md). Separate from worker.c, which
 * handles the first frame and an ephemeral job's single run: this is the loop that keeps one
 * executor environment alive across many runs. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec.h"
#include "json_write.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "worker_internal.h"

static const struct msg_field session_req_fields[] = {
        {"op", MSG_T_STRING, true, 1, 16},
        {"code", MSG_T_STRING, false, 0, WORKER_MAX_FRAME_BYTES},
        {"run", MSG_T_INT, false, 1, INT_MAX},
        {"variables", MSG_T_OBJECT, false, 0, 0},
        {"names", MSG_T_STRING_ARRAY, false, 0, 4096},
};

/* The answer to a get whose variables cannot be sent; the session goes on. */
static cJSON *
variables_refused(const struct pf_error *err, uint64_t max)
{
    char msg[200];
    if (err && err->code == PF_E_TOO_LARGE)
        snprintf(msg, sizeof(msg),
                 "the variables asked for exceed max_result_bytes %llu as JSON; ask for fewer "
                 "names, or read a part of a value with a snippet",
                 (unsigned long long) max);
    else
        snprintf(msg, sizeof(msg), "the variables could not be sent: %s",
                 err ? err->msg : "out of memory");
    cJSON *ev = cJSON_CreateObject();
    if (!ev || !cJSON_AddStringToObject(ev, "event", "variables") ||
        !cJSON_AddStringToObject(ev, "error", msg))
        _exit(1);
    return ev;
}

/* Variables larger than max_result_bytes as JSON are refused as a result is (and could
 * otherwise pass the channel's frame and end the worker). exec_env_get_variables refused
 * those it could tell before converting; this is the exact check of the converted ones. */
static cJSON *
variables_too_large(const cJSON *vars, uint64_t max)
{
    _cleanup_free_ char *buf = NULL;
    _cleanup_pf_error_ struct pf_error *err = NULL;
    size_t len;
    if (json_write(vars, 0, (size_t) max, &buf, &len, &err) == 0)
        return NULL;
    return variables_refused(err, max);
}

static void
session_get(int fd, struct exec_env *env, const struct policy_limits *limits, const cJSON *req)
{
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(req, "names");
    _cleanup_free_ const char **v = calloc((size_t) cJSON_GetArraySize(names) + 1, sizeof(*v));
    if (!v)
        _exit(1);
    size_t n = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, names)
        v[n++] = item->valuestring;
    uint64_t max = (uint64_t) limits->v[POLICY_LIMIT_MAX_RESULT_BYTES];
    _cleanup_pf_error_ struct pf_error *err = NULL;
    cJSON *vars = exec_env_get_variables(env, v, n, &err);
    cJSON *refused = vars ? variables_too_large(vars, max) : variables_refused(err, max);
    if (refused) {
        cJSON_Delete(vars);
        worker_send_or_die(fd, refused);
        cJSON_Delete(refused);
        return;
    }
    cJSON *ev = cJSON_CreateObject();
    if (!ev || !cJSON_AddStringToObject(ev, "event", "variables") ||
        !cJSON_AddItemToObject(ev, "variables", vars))
        _exit(1);
    worker_send_or_die(fd, ev);
    cJSON_Delete(ev);
}

/* One request of the daemon's; a frame it could not have sent ends the worker. *runs counts
 * the run frames so far: the next one is run *runs + 1, and says so when it names its number. */
static void
session_request(int fd, struct exec_env *env, const struct run_job *job, int *runs,
                const char *payload, size_t len)
{
    _cleanup_pf_error_ struct pf_error *err = NULL;
    _cleanup_json_ cJSON *req = NULL;
    if (msg_parse(payload, len, MSG_MAX_DEPTH, &req, &err) < 0 ||
        msg_check_fields(req, session_req_fields, PF_ELEMENTSOF(session_req_fields), "session",
                         &err) < 0)
        _exit(1);
    const char *op = msg_get_string(req, "op", "");
    if (strcmp(op, "get") == 0) {
        session_get(fd, env, &job->limits, req);
        return;
    }
    const char *code = msg_get_string(req, "code", NULL);
    if (strcmp(op, "run") != 0 || !code || *runs == INT_MAX ||
        msg_get_int(req, "run", *runs + 1) != *runs + 1)
        _exit(1);
    worker_run_begin(++*runs);
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(req, "variables");
    if (vars && exec_env_set_variables(env, vars, &err) < 0) {
        worker_run_end();
        cJSON *r = worker_failure_result(err ? err->code : PF_E_INTERNAL, err ? err->msg : NULL);
        worker_send_or_die(fd, r);
        cJSON_Delete(r);
        return;
    }
    worker_run_snippet(fd, env, &job->limits, code);
}

void
worker_run_session(int fd, struct run_job *job)
{
    struct exec_env *env = worker_new_env(fd, job);
    _cleanup_json_ cJSON *ready = cJSON_CreateObject();
    if (!ready || !cJSON_AddStringToObject(ready, "event", "ready"))
        _exit(1);
    worker_send_or_die(fd, ready);
    struct frame_slot slot;
    int runs = 0;
    while (worker_next_frame(fd, &slot) > 0) {
        session_request(fd, env, job, &runs, slot.payload, slot.len);
        free(slot.payload);
    }
    _exit(0);
}
