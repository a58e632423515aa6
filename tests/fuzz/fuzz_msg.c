/* Fuzzes the request parser on raw payloads (not NUL-terminated, exact size, so ASan sees any
 * over-read). Oracles beyond "no crash":
 * - every failure carries a message, and the error reply built from it encodes (so no message
 *   ever quotes user bytes into invalid UTF-8);
 * - every accepted request re-encodes and parses back to an equal tree (the writer and the
 *   parser agree, and nothing accepted is unrepresentable). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "msg.h"

static void
must_encode(const cJSON *obj)
{
    char *buf = NULL;
    size_t len;
    struct pf_error *err = NULL;
    if (!obj || msg_encode(obj, 64u * 1024 * 1024, &buf, &len, &err) < 0)
        abort();
    free(buf);
}

static void
check_round_trip(const cJSON *root)
{
    char *buf = NULL;
    size_t len;
    struct pf_error *err = NULL;
    if (msg_encode(root, 64u * 1024 * 1024, &buf, &len, &err) < 0)
        abort();
    cJSON *back = NULL;
    if (msg_parse(buf + 4, len - 4, MSG_MAX_DEPTH, &back, &err) < 0)
        abort();
    if (!cJSON_Compare(root, back, 1))
        abort();
    cJSON_Delete(back);
    free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct msg_request req;
    struct pf_error *err = NULL;
    cJSON *id = NULL;

    if (msg_request_parse((const char *) data, size, MSG_MAX_DEPTH, &req, &id, &err) == 0) {
        if (err || id || !req.root || !req.id || !msg_op_name(req.op))
            abort();
        check_round_trip(req.root);
        cJSON *reply = msg_reply_ok(req.id);
        must_encode(reply);
        cJSON_Delete(reply);
        msg_request_finish(&req);
        return 0;
    }

    if (!err || !err->msg || !*err->msg)
        abort();
    cJSON *reply = msg_reply_error(id, err->code, err->msg);
    must_encode(reply);
    cJSON_Delete(reply);
    /* Our own messages are valid UTF-8 before any sanitising. */
    if (!msg_utf8_valid(err->msg, strlen(err->msg), NULL))
        abort();
    err = pf_error_free(err);
    cJSON_Delete(id);

    /* Any parse that msg_parse accepts alone must also round-trip. */
    cJSON *root = NULL;
    if (msg_parse((const char *) data, size, MSG_MAX_DEPTH, &root, &err) == 0) {
        check_round_trip(root);
        cJSON_Delete(root);
    }
    err = pf_error_free(err);
    return 0;
}
