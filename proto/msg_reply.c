/* Replies and events out: the shapes of proto/PROTOCOL.md, serialised by json_write. Part of
 * the msg module (msg.h); split from msg.c, which parses what comes in. */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "json_write.h"
#include "msg.h"
#include "pf_cleanup.h"

/* ---- replies and events -------------------------------------------------------------- */

static cJSON *
reply_with_id(const cJSON *id)
{
    _cleanup_json_ cJSON *obj = cJSON_CreateObject();
    if (!obj)
        return NULL;
    cJSON *copy = id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull();
    if (!copy)
        return NULL;
    if (!cJSON_AddItemToObject(obj, "id", copy)) {
        cJSON_Delete(copy);
        return NULL;
    }
    return TAKE_PTR(obj);
}

cJSON *
msg_reply_ok(const cJSON *id)
{
    _cleanup_json_ cJSON *obj = reply_with_id(id);
    if (!obj || !cJSON_AddTrueToObject(obj, "ok"))
        return NULL;
    return TAKE_PTR(obj);
}

/* Messages may quote text from elsewhere (a Python exception, an OS string) that is not valid
 * UTF-8; our clients parse strictly, so bad bytes become U+FFFD rather than poison the reply. */
static char *
utf8_sanitized(const char *s)
{
    size_t len = strlen(s);
    char *out = malloc(len * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0, i = 0;
    while (i < len) {
        size_t bad;
        if (msg_utf8_valid(s + i, len - i, &bad)) {
            memcpy(out + o, s + i, len - i);
            o += len - i;
            break;
        }
        memcpy(out + o, s + i, bad);
        o += bad;
        memcpy(out + o, "\xEF\xBF\xBD", 3);
        o += 3;
        i += bad + 1;
    }
    out[o] = '\0';
    return out;
}

cJSON *
msg_reply_error(const cJSON *id, int code, const char *message)
{
    _cleanup_json_ cJSON *obj = reply_with_id(id);
    if (!obj || !cJSON_AddFalseToObject(obj, "ok"))
        return NULL;
    cJSON *error = cJSON_AddObjectToObject(obj, "error");
    if (!error || !cJSON_AddStringToObject(error, "code", pf_code_name(code)))
        return NULL;
    _cleanup_free_ char *clean = utf8_sanitized(message ? message : "");
    if (!clean || !cJSON_AddStringToObject(error, "message", clean))
        return NULL;
    return TAKE_PTR(obj);
}

cJSON *
msg_event(const cJSON *id, const char *event)
{
    _cleanup_json_ cJSON *obj = reply_with_id(id);
    if (!obj || !cJSON_AddStringToObject(obj, "event", event))
        return NULL;
    return TAKE_PTR(obj);
}

int
msg_encode(const cJSON *obj, uint32_t max_bytes, char **ret_buf, size_t *ret_len,
           struct pf_error **err)
{
    uint32_t max = max_bytes ? max_bytes : FRAME_DEFAULT_MAX_BYTES;
    char *buf;
    size_t len;

    /* Written straight after room for the header: no second copy of a possibly large reply,
     * and the size limit stops the writer early instead of after building it all. */
    if (json_write(obj, FRAME_HEADER_BYTES, max, &buf, &len, err) < 0)
        return -1;
    uint32_t be = htobe32((uint32_t) (len - FRAME_HEADER_BYTES));
    memcpy(buf, &be, sizeof(be));
    *ret_buf = buf;
    *ret_len = len;
    return 0;
}
