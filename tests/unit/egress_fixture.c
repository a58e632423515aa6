#include "egress_fixture.h"

#include <poll.h>
#include <stdio.h>
#include <uv.h>

#include "msg.h"
#include "pf_cleanup.h"

void
egress_fixture_record_end(void *ctx, cJSON *frame)
{
    struct ending *end = ctx;
    end->calls++;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(frame, "error");
    snprintf(end->type, sizeof(end->type), "%s", msg_get_string(e, "type", "(none)"));
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(frame, "reply"), "status");
    end->status = cJSON_IsNumber(status) ? status->valueint : 0;
    snprintf(end->message, sizeof(end->message), "%s", msg_get_string(e, "message", ""));
    cJSON_Delete(frame);
}

bool
egress_fixture_start_get(struct egress *e, const struct policy_egress *rules, const char *url,
                         uint64_t owner, uint64_t timeout_ms, uint64_t max_bytes,
                         struct ending *end)
{
    char json[256];
    snprintf(json, sizeof(json), "{\"event\":\"egress\",\"method\":\"GET\",\"url\":\"%s\"}", url);
    _cleanup_json_ cJSON *req = cJSON_Parse(json);
    struct egress_limits limits = {
            .timeout_ms = timeout_ms, .max_bytes = max_bytes, .owner = owner};
    struct egress_call *call = NULL;
    cJSON *now = egress_start(e, rules, &limits, req, egress_fixture_record_end, end, &call);
    if (now)
        egress_fixture_record_end(end, now);
    return call != NULL;
}

double
egress_fixture_run_until_answered(struct ending *ends, size_t n)
{
    uint64_t start = uv_hrtime();
    for (size_t i = 0; i < n && uv_hrtime() - start < 20 * 1000000000ull;)
        if (ends[i].calls) {
            i++;
        } else {
            uv_run(uv_default_loop(), UV_RUN_NOWAIT);
            poll(NULL, 0, 5);
        }
    return (double) (uv_hrtime() - start) / 1e9;
}
