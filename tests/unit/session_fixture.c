#include "session_fixture.h"

#include <setjmp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

cJSON *
expect_ok(struct fx *f, const char *id_json)
{
    cJSON *r = recv_frame(f, &f->client, 3000);
    if (!r)
        fail_msg("no reply to %s", id_json);
    char *id = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, "id"));
    char *all = cJSON_PrintUnformatted(r);
    if (strcmp(id, id_json) != 0 || !cJSON_IsTrue(cJSON_GetObjectItem(r, "ok")))
        fail_msg("expected an ok reply to %s, got %s", id_json, all);
    free(id);
    free(all);
    return r;
}

uint64_t
open_session(struct fx *f, const char *request, char id[SESSION_ID_LEN + 1])
{
    cJSON *first = NULL;
    uint64_t job = start_worker_of(f, request, &first);
    assert_string_equal(cJSON_GetObjectItem(first, "op")->valuestring, "session");
    assert_null(cJSON_GetObjectItem(first, "code"));
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(first, "imports")));
    cJSON *lim = cJSON_GetObjectItem(first, "limits");
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(lim, "timeout_ms")));
    cJSON_Delete(first);
    send_frame(f->worker.fd, "{\"event\":\"ready\"}");
    cJSON *r = expect_ok(f, "1");
    const char *sid = cJSON_GetObjectItem(r, "session")->valuestring;
    assert_int_equal(strlen(sid), SESSION_ID_LEN);
    memcpy(id, sid, SESSION_ID_LEN + 1);
    cJSON_Delete(r);
    return job;
}

void
send_exec(struct fx *f, int id, const char *sid, const char *code)
{
    send_fmt(f->client.fd, "{\"id\":%d,\"op\":\"exec\",\"session\":\"%s\",\"code\":\"%s\"}", id,
             sid, code);
}

void
expect_run(struct fx *f, const char *code)
{
    cJSON *run = recv_frame(f, &f->worker, 2000);
    assert_non_null(run);
    assert_string_equal(cJSON_GetObjectItem(run, "op")->valuestring, "run");
    assert_string_equal(cJSON_GetObjectItem(run, "code")->valuestring, code);
    cJSON_Delete(run);
}

void
send_result(struct fx *f, int output)
{
    send_fmt(f->worker.fd, "{\"event\":\"result\",\"outcome\":\"ok\",\"output\":%d}", output);
}
