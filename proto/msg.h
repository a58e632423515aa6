/* Message layer: strict JSON in (UTF-8 checked, duplicate keys refused, depth limited,
 * integers range-checked, unknown fields refused), replies and events out. Shape checks
 * happen here once, before dispatch. Non-logging module. See PROTOCOL.md. */
#ifndef PROTO_MSG_H
#define PROTO_MSG_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pf_cleanup.h"
#include "pf_error.h"

/* A cJSON tree owned by a scope. */
DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete)
#define _cleanup_json_ _cleanup_(cJSON_Deletep)

#define MSG_PROTOCOL_VERSION      1
#define MSG_MAX_DEPTH             256 /* JSON levels, below cJSON's 1000: see msg_parse */
#define MSG_SESSION_ID_MAX        64  /* bytes of a `session` field (real ids are 32 hex digits) */
#define MSG_SESSION_GET_MAX_NAMES 256 /* names in one session.get */

/* ---- strict parsing ---------------------------------------------------------------- */

/* True when buf[0..len) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
 * On failure *ret_offset is the offset of the first bad byte. */
bool msg_utf8_valid(const char *buf, size_t len, size_t *ret_offset);

/* Parses exactly one JSON value filling buf[0..len): UTF-8 validated first, then cJSON, then
 * the tree is checked for duplicate keys and nesting deeper than max_depth. The top level must
 * be an object. Errors are PF_E_BAD_FRAME with a message naming the problem and offset/key.
 * buf need not be NUL-terminated (only buf[0..len) is read). Also refused: \u0000 in strings
 * (cJSON would truncate), raw control characters in strings, numbers outside the JSON grammar
 * or the range of a double. max_depth <= 0 means MSG_MAX_DEPTH; values over 512 are capped.
 * MSG_MAX_DEPTH leaves room for the values a request carries: 64 nested containers (PROTOCOL.md
 * "Values"), each up to 3 JSON levels in tagged form ({"$type": "dict", "items": [[K, V]]}),
 * plus the request's own levels. */
int msg_parse(const char *buf, size_t len, int max_depth, cJSON **ret, struct pf_error **err);

/* ---- schema ------------------------------------------------------------------------ */

enum msg_type {
    MSG_T_STRING,
    MSG_T_INT,    /* integral JSON number within [min, max] (read from valuedouble) */
    MSG_T_NUMBER, /* any finite JSON number within [min, max] */
    MSG_T_BOOL,
    MSG_T_OBJECT,
    MSG_T_ARRAY,
    MSG_T_STRING_ARRAY, /* array of strings, at most `max` items */
    MSG_T_STRING_SET,   /* array of distinct strings, at most `max` items */
    MSG_T_ID,           /* request id: a string (<= 256 bytes) or an integer in [0, 2^53 - 1] */
    MSG_T_ANY,
    _MSG_T_MAX,
    _MSG_T_INVALID = -1,
};

struct msg_field {
    const char *name;
    enum msg_type type;
    bool required;
    double min; /* for INT/NUMBER; for STRING: min length in bytes */
    double max; /* for INT/NUMBER; for STRING: max length; STRING_ARRAY/SET: max items */
};

/* Checks obj (an object) against fields[0..n): every required field present, every present
 * field of its type and range, no field outside the table. `where` prefixes messages, e.g.
 * "exec request" → "exec request: field 'timeout_ms': 0 is below minimum 1". PF_E_BAD_REQUEST. */
int msg_check_fields(const cJSON *obj, const struct msg_field *fields, size_t n, const char *where,
                     struct pf_error **err);

/* A number as a user would recognise it: all digits while integral and exact (9000, not
 * 9.000e+03), else the shortest form that reads back to it (1e+300, 512.5). */
void msg_format_number(double d, char *buf, size_t size);
/* A JSON value for a message naming it: "512" (a string, in quotes, cut by pf_quote_len), 512.5,
 * 1e+300, true, false, null, "an object", "an array". */
void msg_describe_value(const cJSON *item, char *buf, size_t size);

/* Reads an integral number; the caller has validated the range with msg_check_fields. */
int64_t msg_get_int(const cJSON *obj, const char *name, int64_t fallback);
const char *msg_get_string(const cJSON *obj, const char *name, const char *fallback);
bool msg_get_bool(const cJSON *obj, const char *name, bool fallback);

/* ---- requests ---------------------------------------------------------------------- */

enum msg_op {
    MSG_OP_CANCEL,
    MSG_OP_EXEC,
    MSG_OP_HELLO,
    MSG_OP_PING,
    MSG_OP_SESSION_CLOSE,
    MSG_OP_SESSION_GET,
    MSG_OP_SESSION_LIST,
    MSG_OP_SESSION_OPEN,
    MSG_OP_STATS,
    _MSG_OP_MAX,
    _MSG_OP_INVALID = -1,
};

const char *msg_op_name(enum msg_op op);

struct msg_request {
    cJSON *root;     /* owned: the whole request */
    const cJSON *id; /* borrowed from root: echoed verbatim in replies */
    enum msg_op op;
};

/* Parses and validates one request frame: strict JSON, `id` (MSG_T_ID) and `op` present,
 * `op` known (PF_E_UNKNOWN_OP), the op's fields checked against its schema table.
 * When the failure happens after `id` was read, *ret_id_copy (if not NULL) receives a copy of
 * the id so the error reply can echo it; else it is set to NULL. */
int msg_request_parse(const char *buf, size_t len, int max_depth, struct msg_request *ret,
                      cJSON **ret_id_copy, struct pf_error **err);
void msg_request_finish(struct msg_request *req);

/* ---- replies and events -------------------------------------------------------------- */

/* {"id": <id>, "ok": true}; id may be NULL (→ JSON null). Returns NULL on OOM. */
cJSON *msg_reply_ok(const cJSON *id);
/* {"id": <id>, "ok": false, "error": {"code": pf_code_name(code), "message": message}} */
cJSON *msg_reply_error(const cJSON *id, int code, const char *message);
/* {"id": <id>, "event": event} */
cJSON *msg_event(const cJSON *id, const char *event);

/* Serialises obj (unformatted) into a frame. PF_E_TOO_LARGE past max_bytes. */
int msg_encode(const cJSON *obj, uint32_t max_bytes, char **ret_buf, size_t *ret_len,
               struct pf_error **err);

#endif
