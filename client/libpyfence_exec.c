/* libpyfence: the exec calls of pyfence.h: the exec request built from its options, submitted,
 * and its reply waited for (output events to the caller's callback) and read into a
 * struct pyfence_result. The connection, framing and waits are libpyfence.c's. */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libpyfence_internal.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "pf_error.h"
#include "pyfence.h"

/* As in libpyfence.c: the error is named after its code. */
#define fail(err, code, ...) libpyfence_fail_named(err, code, NULL, __VA_ARGS__)

static int
build_exec_request(const char *code, const struct pyfence_exec_options *opts, cJSON **ret,
                   struct pyfence_error *err)
{
    _cleanup_json_ cJSON *req = cJSON_CreateObject();
    if (!req || !cJSON_AddStringToObject(req, "op", "exec") ||
        !cJSON_AddStringToObject(req, "code", code))
        return fail(err, PYFENCE_E_INTERNAL, "out of memory");
    if (opts->n_imports > 0) {
        cJSON *arr = cJSON_AddArrayToObject(req, "imports");
        for (size_t i = 0; arr && i < opts->n_imports; i++)
            if (!cJSON_AddItemToArray(arr, cJSON_CreateString(opts->imports[i])))
                arr = NULL;
        if (!arr)
            return fail(err, PYFENCE_E_INTERNAL, "out of memory");
    }
    cJSON *limits = NULL;
    if (opts->limits_json) {
        int r = libpyfence_parse_object(opts->limits_json, "exec option limits_json", &limits, err);
        if (r < 0)
            return r;
        cJSON_AddItemToObject(req, "limits", limits);
    }
    if (opts->timeout_ms > 0) {
        if (!limits)
            limits = cJSON_AddObjectToObject(req, "limits");
        cJSON_DeleteItemFromObjectCaseSensitive(limits, "timeout_ms");
        if (!limits || !cJSON_AddNumberToObject(limits, "timeout_ms", opts->timeout_ms))
            return fail(err, PYFENCE_E_INTERNAL, "out of memory");
    }
    if (opts->variables_json) {
        cJSON *vars = NULL;
        int r = libpyfence_parse_object(opts->variables_json, "exec option variables_json", &vars,
                                        err);
        if (r < 0)
            return r;
        cJSON_AddItemToObject(req, "variables", vars);
    }
    /* A profile with a session is sent all the same: pyfenced refuses it as it refuses
     * imports and limits there (bad_request, "set by session.open"), in the reply. */
    if (!cJSON_AddBoolToObject(req, "stream", opts->stream) ||
        (opts->session && !cJSON_AddStringToObject(req, "session", opts->session)) ||
        (opts->profile && !cJSON_AddStringToObject(req, "profile", opts->profile)))
        return fail(err, PYFENCE_E_INTERNAL, "out of memory");
    *ret = TAKE_PTR(req);
    return 0;
}

int
pyfence_submit(struct pyfence_conn *conn, const char *code, const struct pyfence_exec_options *opts,
               uint64_t *ret_id, struct pyfence_error *err)
{
    struct pyfence_exec_options o;
    pyfence_exec_options_init(&o);
    int r = libpyfence_struct_in(&o, sizeof(o), opts, "pyfence_exec_options", err);
    if (r < 0)
        return r;
    if (!code)
        return fail(err, PYFENCE_E_BAD_REQUEST, "exec: no code given");
    /* pyfenced refuses a frame that is not UTF-8 without being able to name its request. */
    size_t bad;
    if (!msg_utf8_valid(code, strlen(code), &bad))
        return fail(err, PYFENCE_E_BAD_REQUEST, "exec: the code is not valid UTF-8 (byte %zu)",
                    bad);
    if ((r = libpyfence_check_texts(o.imports, o.n_imports, "exec option imports", err)) < 0 ||
        (o.profile && (r = libpyfence_check_text(o.profile, "exec option profile", err)) < 0) ||
        (o.session && (r = libpyfence_check_text(o.session, "exec option session", err)) < 0))
        return r;
    _cleanup_json_ cJSON *req = NULL;
    r = build_exec_request(code, &o, &req, err);
    if (r < 0)
        return r;
    return libpyfence_send_request(conn, req, ret_id, err);
}

/* strdup of a string field; NULL when absent or not a string. Sets *oom on allocation failure. */
static char *
dup_field(const cJSON *obj, const char *name, bool *oom)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, name));
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = true;
    return d;
}

static double
number_field(const cJSON *obj, const char *name)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsNumber(n) ? n->valuedouble : 0;
}

static int
fill_result(const cJSON *reply, struct pyfence_result *res, struct pyfence_error *err)
{
    bool oom = false;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(reply, "error");
    res->ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "ok"));
    res->outcome = dup_field(reply, "outcome", &oom);
    if (!res->outcome && !oom) {
        const char *c = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "code"));
        res->outcome = strdup(c ? c : res->ok ? "ok" : "internal");
        oom = !res->outcome;
    }
    if (res->outcome)
        res->outcome_code = pyfence_code_from_name(res->outcome);
    const cJSON *output = cJSON_GetObjectItemCaseSensitive(reply, "output");
    res->output_json = output ? libpyfence_exact_json(output) : strdup("null");
    oom |= !res->output_json;
    res->output_repr = dup_field(reply, "output_repr", &oom);
    res->logs = dup_field(reply, "logs", &oom);
    res->is_final_answer = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "is_final_answer"));
    if (cJSON_IsObject(e)) {
        res->error.code = dup_field(e, "code", &oom);
        res->error.type = dup_field(e, "type", &oom);
        res->error.message = dup_field(e, "message", &oom);
        res->error.source = dup_field(e, "source", &oom);
        res->error.line = (int) number_field(e, "line");
    }
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(reply, "stats");
    res->stats.queue_ms = number_field(st, "queue_ms");
    res->stats.run_ms = number_field(st, "run_ms");
    res->stats.cpu_ms = number_field(st, "cpu_ms");
    res->stats.ops = (int64_t) number_field(st, "ops");
    res->stats.max_rss_kb = (int64_t) number_field(st, "max_rss_kb");
    res->reply_json = libpyfence_exact_json(reply);
    oom |= !res->reply_json;
    if (oom) {
        pyfence_result_finish(res);
        return fail(err, PYFENCE_E_INTERNAL, "out of memory while reading a reply");
    }
    return 0;
}

int
pyfence_wait_signal(struct pyfence_conn *conn, uint64_t id, int signo, pyfence_output_cb output_cb,
                    void *userdata, struct pyfence_result *result, struct pyfence_error *err)
{
    if (!libpyfence_signo_valid(signo))
        return fail(err, PYFENCE_E_BAD_REQUEST, "wait for request %llu: %d is not a signal number",
                    (unsigned long long) id, signo);
    /* Before the reply is taken in: it stays for a wait with an initialised result. */
    int r = libpyfence_struct_check(result->size, "pyfence_result", err);
    if (r < 0)
        return r;
    _cleanup_json_ cJSON *reply = NULL;
    r = libpyfence_wait_reply(conn, id, signo, output_cb, userdata, &reply, err);
    if (r < 0)
        return r;
    struct pyfence_result full;
    pyfence_result_init(&full);
    r = fill_result(reply, &full, err);
    /* Also when fill_result ran out of memory: result is then left empty. */
    libpyfence_result_set(result, &full);
    return r;
}

int
pyfence_wait(struct pyfence_conn *conn, uint64_t id, pyfence_output_cb output_cb, void *userdata,
             struct pyfence_result *result, struct pyfence_error *err)
{
    return pyfence_wait_signal(conn, id, 0, output_cb, userdata, result, err);
}

int
pyfence_exec(struct pyfence_conn *conn, const char *code, const struct pyfence_exec_options *opts,
             pyfence_output_cb output_cb, void *userdata, struct pyfence_result *result,
             struct pyfence_error *err)
{
    /* Before the request is sent: nothing could take its reply in. */
    int r = libpyfence_struct_check(result->size, "pyfence_result", err);
    if (r < 0)
        return r;
    uint64_t id;
    r = pyfence_submit(conn, code, opts, &id, err);
    if (r < 0)
        return r;
    return pyfence_wait(conn, id, output_cb, userdata, result, err);
}
