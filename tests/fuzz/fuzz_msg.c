/* Fuzzes the request parser on raw payloads (not NUL-terminated, exact size, so ASan sees any
 * over-read). Oracles beyond "no crash":
 * - every failure carries a message, and the error reply built from it encodes (so no message
 *   ever quotes user bytes into invalid UTF-8);
 * - every accepted request re-encodes and parses back to an equal tree (the writer and the
 *   parser agree, and nothing accepted is unrepresentable). */
#include <stdbool.h>
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

/* cJSON_Compare compares each pair of object members twice (a in b, then b in a), which is
 * exponential in the nesting depth, and tolerates an epsilon on numbers. Keys are unique here
 * (the parser refused duplicates), so one pass per direction of sizes is enough, and numbers
 * must match exactly: the writer promises round-trip output. */
static bool
same_tree(const cJSON *a, const cJSON *b)
{
    if ((a->type & 0xFF) != (b->type & 0xFF))
        return false;
    if (cJSON_IsNumber(a))
        return a->valuedouble == b->valuedouble;
    if (cJSON_IsString(a))
        return strcmp(a->valuestring, b->valuestring) == 0;
    if (!cJSON_IsArray(a) && !cJSON_IsObject(a))
        return true;
    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
        return false;
    const cJSON *x = a->child, *y = b->child;
    for (; x && y; x = x->next, y = y->next) {
        /* The writer keeps member order, so members line up one to one. */
        if (cJSON_IsObject(a) && strcmp(x->string, y->string) != 0)
            return false;
        if (!same_tree(x, y))
            return false;
    }
    return !x && !y;
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
    if (!same_tree(root, back))
        abort();
    cJSON_Delete(back);
    free(buf);
}

static void
check_generic_fields(const cJSON *root)
{
    static const struct msg_field fields[] = {
            {"id", MSG_T_ID, false, 0, 0},     {"op", MSG_T_STRING, false, 1, 8},
            {"n", MSG_T_INT, false, -5, 1e15}, {"x", MSG_T_NUMBER, false, -1.5, 1e300},
            {"a", MSG_T_ARRAY, false, 0, 0},   {"s", MSG_T_STRING_ARRAY, false, 0, 3},
            {"any", MSG_T_ANY, false, 0, 0},   {"b", MSG_T_BOOL, false, 0, 0},
            {"o", MSG_T_OBJECT, false, 0, 0},  {"u", MSG_T_STRING_SET, false, 0, 3},
    };
    struct pf_error *err = NULL;
    if (msg_check_fields(root, fields, sizeof(fields) / sizeof(fields[0]), "fuzz", &err) < 0) {
        if (!err || !msg_utf8_valid(err->msg, strlen(err->msg), NULL))
            abort();
        pf_error_free(err);
        return;
    }
    int64_t n = msg_get_int(root, "n", 0);
    if (n < -5 || n > 1000000000000000LL)
        abort();
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(root, "x");
    if (x && (x->valuedouble < -1.5 || x->valuedouble > 1e300))
        abort();
    const cJSON *sa = cJSON_GetObjectItemCaseSensitive(root, "s");
    if (sa && cJSON_GetArraySize(sa) > 3)
        abort();
    const char *op = msg_get_string(root, "op", "x");
    if (strlen(op) < 1 || strlen(op) > 8)
        abort();
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
        if (req.op == MSG_OP_EXEC && !msg_get_string(req.root, "code", NULL))
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

    /* Any parse that msg_parse accepts alone must also round-trip, and the field checker must
     * keep its promises on it: a field it accepts reads back within its range. */
    cJSON *root = NULL;
    if (msg_parse((const char *) data, size, MSG_MAX_DEPTH, &root, &err) == 0) {
        check_round_trip(root);
        check_generic_fields(root);
        cJSON_Delete(root);
    }
    err = pf_error_free(err);
    return 0;
}
