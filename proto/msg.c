#include "msg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "pf_cleanup.h"
#include "pf_quote.h"

/* cJSON's own nesting limit is 1000; our walk recurses once per level too, so a caller asking
 * for more than this is clamped rather than trusted. */
#define MAX_DEPTH_CEILING 512
/* 2^53 - 1. cJSON keeps no number text, only the double it read, so the bound must be one the
 * double alone decides: every integer text of magnitude 2^53 or more (9007199254740993
 * included) reads as a double of at least 2^53 and is refused, every one below reads exactly.
 * A bound of 2^53 itself would let 9007199254740993 through, silently rounded. */
#define EXACT_INT_MAX 9007199254740991.0
#define ID_MAX_BYTES  256

/* ---- UTF-8 ------------------------------------------------------------------------- */

/* Byte ranges per Unicode 15, table 3-7. The narrowed second-byte ranges after E0, ED, F0 and
 * F4 are what exclude overlongs, surrogates and code points above U+10FFFF. */
bool
msg_utf8_valid(const char *buf, size_t len, size_t *ret_offset)
{
    const unsigned char *s = (const unsigned char *) buf;
    size_t i = 0;

    while (i < len) {
        /* Payloads are mostly ASCII (code, keys): skip 8 bytes at a time while no high bit is
         * set. memcpy keeps the load free of alignment and aliasing trouble. */
        while (len - i >= 8) {
            uint64_t word;
            memcpy(&word, s + i, sizeof(word));
            if (word & 0x8080808080808080ULL)
                break;
            i += 8;
        }
        if (i >= len)
            break;
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c < 0xC2)
            goto bad; /* stray continuation byte, or a 2-byte overlong lead */
        else if (c < 0xE0)
            need = 1;
        else if (c < 0xF0) {
            need = 2;
            if (c == 0xE0)
                lo = 0xA0;
            else if (c == 0xED)
                hi = 0x9F;
        } else if (c < 0xF5) {
            need = 3;
            if (c == 0xF0)
                lo = 0x90;
            else if (c == 0xF4)
                hi = 0x8F;
        } else
            goto bad;

        if (len - i <= need)
            goto bad; /* truncated sequence */
        if (s[i + 1] < lo || s[i + 1] > hi)
            goto bad;
        for (size_t k = 2; k <= need; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF)
                goto bad;
        i += need + 1;
    }
    return true;

bad:
    if (ret_offset)
        *ret_offset = i;
    return false;
}

/* ---- strict parsing ---------------------------------------------------------------- */

static bool
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Length of the RFC 8259 number at s[0..len), or 0 if it is malformed. cJSON hands anything
 * made of [0-9+-.eE] to strtod, so it accepts 01, 1. and -.5; we do not. */
static size_t
number_len(const char *s, size_t len)
{
    size_t i = 0;
    if (i < len && s[i] == '-')
        i++;
    if (i < len && s[i] == '0')
        i++;
    else if (i < len && is_digit(s[i]))
        while (i < len && is_digit(s[i]))
            i++;
    else
        return 0;
    if (i < len && s[i] == '.') {
        size_t start = ++i;
        while (i < len && is_digit(s[i]))
            i++;
        if (i == start)
            return 0;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t start = i;
        while (i < len && is_digit(s[i]))
            i++;
        if (i == start)
            return 0;
    }
    if (i < len && (is_digit(s[i]) || strchr("+-.eE", s[i])))
        return 0;
    return i;
}

/* One pass over the raw text before cJSON sees it: bounds the nesting depth (so cJSON never
 * recurses deep), and refuses what cJSON would silently accept or mangle: \u0000 escapes
 * (cJSON truncates the string there), raw control characters inside strings and numbers
 * outside the JSON grammar. */
static int
prescan(const char *buf, size_t len, int max_depth, struct pf_error **err)
{
    int depth = 0;
    bool in_string = false;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) buf[i];
        if (in_string) {
            if (c == '"')
                in_string = false;
            else if (c == '\\') {
                if (i + 5 < len && buf[i + 1] == 'u' && memcmp(buf + i + 2, "0000", 4) == 0)
                    return pf_error_set(err, PF_E_BAD_FRAME,
                                        "string contains a NUL character (\\u0000) at offset %zu",
                                        i);
                i++; /* the escaped character cannot end the string */
            } else if (c < 0x20)
                return pf_error_set(err, PF_E_BAD_FRAME,
                                    "unescaped control character 0x%02x in a string at offset %zu",
                                    c, i);
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '-' || is_digit((char) c)) {
            size_t n = number_len(buf + i, len - i);
            if (n == 0)
                return pf_error_set(err, PF_E_BAD_FRAME, "malformed number at offset %zu", i);
            i += n - 1;
        } else if (c == '{' || c == '[') {
            if (++depth > max_depth)
                return pf_error_set(err, PF_E_BAD_FRAME,
                                    "JSON nested deeper than %d levels at offset %zu", max_depth,
                                    i);
        } else if (c == '}' || c == ']')
            depth--; /* unbalanced input is cJSON's to reject */
    }
    return 0;
}

static int
compare_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* Sorting makes the duplicate check O(n log n): an object with many keys must not cost
 * quadratic time. */
static int
check_object_keys(const cJSON *obj, const char *parent, struct pf_error **err)
{
    size_t n = 0;
    const cJSON *child;
    cJSON_ArrayForEach(child, obj)
        n++;
    if (n < 2)
        return 0;

    _cleanup_free_ const char **keys = malloc(n * sizeof(*keys));
    if (!keys)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory checking an object of %zu keys", n);
    size_t i = 0;
    cJSON_ArrayForEach(child, obj)
        keys[i++] = child->string;
    qsort(keys, n, sizeof(*keys), compare_keys);
    for (i = 1; i < n; i++) {
        if (strcmp(keys[i - 1], keys[i]) != 0)
            continue;
        if (parent)
            return pf_error_set(err, PF_E_BAD_FRAME, "duplicate key '%.*s' in object '%.*s'",
                                pf_quote_len(keys[i]), keys[i], pf_quote_len(parent), parent);
        return pf_error_set(err, PF_E_BAD_FRAME, "duplicate key '%.*s' in the top-level object",
                            pf_quote_len(keys[i]), keys[i]);
    }
    return 0;
}

/* `parent` is the nearest enclosing object key (NULL at the top level; arrays inherit their
 * own key), so that a message can point at where the problem is. */
static int
walk(const cJSON *node, int depth, int max_depth, const char *parent, struct pf_error **err)
{
    if (depth > max_depth)
        return pf_error_set(err, PF_E_BAD_FRAME, "JSON nested deeper than %d levels", max_depth);
    if (cJSON_IsObject(node) && check_object_keys(node, parent, err) < 0)
        return -1;

    const cJSON *child;
    cJSON_ArrayForEach(child, node) {
        const char *name = cJSON_IsObject(node) ? child->string : parent;
        /* cJSON turns 1e400 into infinity: we could never send it back and no limit or value
         * means it, so it is refused like any other malformed number. */
        if (cJSON_IsNumber(child) && !isfinite(child->valuedouble)) {
            if (name)
                return pf_error_set(err, PF_E_BAD_FRAME, "number out of range in '%.*s'",
                                    pf_quote_len(name), name);
            return pf_error_set(err, PF_E_BAD_FRAME, "number out of range");
        }
        if (!cJSON_IsObject(child) && !cJSON_IsArray(child))
            continue;
        if (walk(child, depth + 1, max_depth, name, err) < 0)
            return -1;
    }
    return 0;
}

static const char *
json_type_name(const cJSON *item)
{
    if (cJSON_IsNull(item))
        return "null";
    if (cJSON_IsBool(item))
        return "a boolean";
    if (cJSON_IsNumber(item))
        return "a number";
    if (cJSON_IsString(item))
        return "a string";
    if (cJSON_IsArray(item))
        return "an array";
    if (cJSON_IsObject(item))
        return "an object";
    return "an invalid value";
}

int
msg_parse(const char *buf, size_t len, int max_depth, cJSON **ret, struct pf_error **err)
{
    if (max_depth <= 0)
        max_depth = MSG_MAX_DEPTH;
    if (max_depth > MAX_DEPTH_CEILING)
        max_depth = MAX_DEPTH_CEILING;

    size_t bad;
    if (!msg_utf8_valid(buf, len, &bad))
        return pf_error_set(err, PF_E_BAD_FRAME, "payload is not valid UTF-8 at offset %zu", bad);
    if (prescan(buf, len, max_depth, err) < 0)
        return -1;

    /* cJSON was written for C strings and its length-limited entry point is its less trodden
     * path; callers other than the frame decoder (whose payloads are terminated) may pass a
     * buffer without a NUL. A terminated private copy means neither can make cJSON read past
     * the end. It costs one memcpy of at most a frame, which the frame limit bounds. */
    _cleanup_free_ char *text = malloc(len + 1);
    if (!text)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory parsing a %zu-byte payload", len);
    memcpy(text, buf, len);
    text[len] = '\0';

    const char *end = NULL;
    _cleanup_json_ cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        size_t at = end && end >= text && end <= text + len ? (size_t) (end - text) : 0;
        if (len == 0)
            return pf_error_set(err, PF_E_BAD_FRAME, "payload is empty, expected a JSON object");
        return pf_error_set(err, PF_E_BAD_FRAME, "invalid JSON at offset %zu", at);
    }
    size_t at = (size_t) (end - text);
    while (at < len && strchr(" \t\r\n", text[at]) && text[at] != '\0')
        at++;
    if (at < len)
        return pf_error_set(err, PF_E_BAD_FRAME, "trailing data after the JSON value at offset %zu",
                            at);
    if (!cJSON_IsObject(root))
        return pf_error_set(err, PF_E_BAD_FRAME, "top level is %s, expected an object",
                            json_type_name(root));
    if (walk(root, 1, max_depth, NULL, err) < 0)
        return -1;

    *ret = TAKE_PTR(root);
    return 0;
}

/* ---- schema ------------------------------------------------------------------------ */

/* Integers are read from valuedouble, never valueint (which saturates at INT_MAX). Returns a
 * static description of the problem, or NULL when v is an exactly representable integer. */
static const char *
integer_problem(double v)
{
    if (!isfinite(v))
        return "is not a finite number";
    if (v != trunc(v))
        return "is not an integer";
    if (fabs(v) > EXACT_INT_MAX)
        return "is outside the exact integer range of +/-(2^53 - 1)";
    return NULL;
}

static int
check_range(double v, const struct msg_field *f, const char *where, struct pf_error **err)
{
    if (v < f->min)
        return pf_error_set(err, PF_E_BAD_REQUEST, "%s: field '%s': %.17g is below minimum %.17g",
                            where, f->name, v, f->min);
    if (v > f->max)
        return pf_error_set(err, PF_E_BAD_REQUEST, "%s: field '%s': %.17g exceeds maximum %.17g",
                            where, f->name, v, f->max);
    return 0;
}

static int
check_id(const cJSON *item, const char *where, const char *name, struct pf_error **err)
{
    if (cJSON_IsString(item)) {
        size_t n = strlen(item->valuestring);
        if (n > ID_MAX_BYTES)
            return pf_error_set(err, PF_E_BAD_REQUEST,
                                "%s: field '%s': string of %zu bytes exceeds maximum %d", where,
                                name, n, ID_MAX_BYTES);
        return 0;
    }
    if (cJSON_IsNumber(item)) {
        const char *problem = integer_problem(item->valuedouble);
        if (!problem && item->valuedouble < 0)
            problem = "is negative";
        if (problem)
            return pf_error_set(err, PF_E_BAD_REQUEST,
                                "%s: field '%s': %.17g %s (an id is a string or an integer in "
                                "[0, 2^53 - 1])",
                                where, name, item->valuedouble, problem);
        return 0;
    }
    return pf_error_set(err, PF_E_BAD_REQUEST,
                        "%s: field '%s': expected a string or an integer, got %s", where, name,
                        json_type_name(item));
}

static int
check_string_array(const cJSON *item, const struct msg_field *f, const char *where,
                   struct pf_error **err)
{
    if (!cJSON_IsArray(item))
        return pf_error_set(err, PF_E_BAD_REQUEST, "%s: field '%s': expected an array, got %s",
                            where, f->name, json_type_name(item));
    int n = cJSON_GetArraySize(item);
    if (n > f->max)
        return pf_error_set(err, PF_E_BAD_REQUEST,
                            "%s: field '%s': %d items exceed the maximum of %.0f", where, f->name,
                            n, f->max);
    int i = 0;
    const cJSON *elem;
    cJSON_ArrayForEach(elem, item) {
        if (!cJSON_IsString(elem))
            return pf_error_set(err, PF_E_BAD_REQUEST,
                                "%s: field '%s': item %d is %s, expected a string", where, f->name,
                                i, json_type_name(elem));
        i++;
    }
    return 0;
}

/* A set given as a list: a repeated item is refused rather than dropped, since the reply (an
 * object keyed by item, for session.get's names) could not hold it twice. */
static int
check_string_set(const cJSON *item, const struct msg_field *f, const char *where,
                 struct pf_error **err)
{
    if (check_string_array(item, f, where, err) < 0)
        return -1;
    int i = 0;
    const cJSON *elem;
    cJSON_ArrayForEach(elem, item) {
        int j = 0;
        for (const cJSON *prev = item->child; prev != elem; prev = prev->next, j++)
            if (strcmp(prev->valuestring, elem->valuestring) == 0)
                return pf_error_set(
                        err, PF_E_BAD_REQUEST, "%s: field '%s': item %d '%.*s' repeats item %d",
                        where, f->name, i, pf_quote_len(elem->valuestring), elem->valuestring, j);
        i++;
    }
    return 0;
}

static int
check_field(const cJSON *item, const struct msg_field *f, const char *where, struct pf_error **err)
{
    const char *problem;

    switch (f->type) {
    case MSG_T_STRING: {
        if (!cJSON_IsString(item))
            break;
        size_t n = strlen(item->valuestring);
        if ((double) n < f->min)
            return pf_error_set(err, PF_E_BAD_REQUEST,
                                "%s: field '%s': string of %zu bytes is below minimum %.0f", where,
                                f->name, n, f->min);
        if ((double) n > f->max)
            return pf_error_set(err, PF_E_BAD_REQUEST,
                                "%s: field '%s': string of %zu bytes exceeds maximum %.0f", where,
                                f->name, n, f->max);
        return 0;
    }
    case MSG_T_INT:
        if (!cJSON_IsNumber(item))
            break;
        problem = integer_problem(item->valuedouble);
        if (problem)
            return pf_error_set(err, PF_E_BAD_REQUEST, "%s: field '%s': %.17g %s", where, f->name,
                                item->valuedouble, problem);
        return check_range(item->valuedouble, f, where, err);
    case MSG_T_NUMBER:
        if (!cJSON_IsNumber(item))
            break;
        if (!isfinite(item->valuedouble))
            return pf_error_set(err, PF_E_BAD_REQUEST, "%s: field '%s': not a finite number", where,
                                f->name);
        return check_range(item->valuedouble, f, where, err);
    case MSG_T_BOOL:
        if (!cJSON_IsBool(item))
            break;
        return 0;
    case MSG_T_OBJECT:
        if (!cJSON_IsObject(item))
            break;
        return 0;
    case MSG_T_ARRAY:
        if (!cJSON_IsArray(item))
            break;
        return 0;
    case MSG_T_STRING_ARRAY:
        return check_string_array(item, f, where, err);
    case MSG_T_STRING_SET:
        return check_string_set(item, f, where, err);
    case MSG_T_ID:
        return check_id(item, where, f->name, err);
    case MSG_T_ANY:
        return 0;
    case _MSG_T_MAX:
    case _MSG_T_INVALID:
    default:
        return pf_error_set(err, PF_E_INTERNAL, "%s: field '%s' has no valid type in the schema",
                            where, f->name);
    }

    static const char *const expected[_MSG_T_MAX] = {
            [MSG_T_STRING] = "a string", [MSG_T_INT] = "an integer",   [MSG_T_NUMBER] = "a number",
            [MSG_T_BOOL] = "a boolean",  [MSG_T_OBJECT] = "an object", [MSG_T_ARRAY] = "an array",
    };
    return pf_error_set(err, PF_E_BAD_REQUEST, "%s: field '%s': expected %s, got %s", where,
                        f->name, expected[f->type], json_type_name(item));
}

void
msg_format_number(double d, char *buf, size_t size)
{
    if (d == trunc(d) && fabs(d) <= EXACT_INT_MAX) {
        snprintf(buf, size, "%.0f", d);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            return;
    }
}

void
msg_describe_value(const cJSON *item, char *buf, size_t size)
{
    if (cJSON_IsString(item))
        snprintf(buf, size, "\"%.*s\"", pf_quote_len(item->valuestring), item->valuestring);
    else if (cJSON_IsNumber(item))
        msg_format_number(item->valuedouble, buf, size);
    else if (cJSON_IsBool(item))
        snprintf(buf, size, "%s", cJSON_IsTrue(item) ? "true" : "false");
    else
        snprintf(buf, size, "%s", json_type_name(item));
}

int
msg_check_fields(const cJSON *obj, const struct msg_field *fields, size_t n, const char *where,
                 struct pf_error **err)
{
    if (!where)
        where = "message";
    if (!cJSON_IsObject(obj))
        return pf_error_set(err, PF_E_BAD_REQUEST, "%s: expected an object, got %s", where,
                            json_type_name(obj));

    /* Unknown fields first: a misspelt optional field is the likeliest mistake, and naming it
     * beats reporting a consequence of it. */
    const cJSON *item;
    cJSON_ArrayForEach(item, obj) {
        size_t i = 0;
        while (i < n && strcmp(fields[i].name, item->string) != 0)
            i++;
        if (i == n)
            return pf_error_set(err, PF_E_BAD_REQUEST, "%s: field '%.*s' is not allowed", where,
                                pf_quote_len(item->string), item->string);
    }

    for (size_t i = 0; i < n; i++) {
        item = cJSON_GetObjectItemCaseSensitive(obj, fields[i].name);
        if (!item) {
            if (fields[i].required)
                return pf_error_set(err, PF_E_BAD_REQUEST, "%s: field '%s' is missing", where,
                                    fields[i].name);
            continue;
        }
        if (check_field(item, &fields[i], where, err) < 0)
            return -1;
    }
    return 0;
}

int64_t
msg_get_int(const cJSON *obj, const char *name, int64_t fallback)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!cJSON_IsNumber(item) || integer_problem(item->valuedouble))
        return fallback;
    return (int64_t) item->valuedouble;
}

const char *
msg_get_string(const cJSON *obj, const char *name, const char *fallback)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsString(item) ? item->valuestring : fallback;
}

bool
msg_get_bool(const cJSON *obj, const char *name, bool fallback)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsBool(item) ? cJSON_IsTrue(item) : fallback;
}

/* ---- requests ---------------------------------------------------------------------- */

#define ID_FIELD                   \
    {                              \
        "id", MSG_T_ID, true, 0, 0 \
    }
#define OP_FIELD                        \
    {                                   \
        "op", MSG_T_STRING, true, 0, 64 \
    }

static const struct msg_field hello_fields[] = {
        ID_FIELD,
        OP_FIELD,
        {"client", MSG_T_STRING, false, 0, 256},
};
static const struct msg_field bare_fields[] = {
        ID_FIELD,
        OP_FIELD,
};
static const struct msg_field exec_fields[] = {
        ID_FIELD,
        OP_FIELD,
        {"code", MSG_T_STRING, true, 0, 64.0 * 1024 * 1024},
        {"imports", MSG_T_STRING_ARRAY, false, 0, 64},
        {"limits", MSG_T_OBJECT, false, 0, 0},
        {"variables", MSG_T_OBJECT, false, 0, 0},
        {"stream", MSG_T_BOOL, false, 0, 0},
        {"session", MSG_T_STRING, false, 1, MSG_SESSION_ID_MAX},
        {"profile", MSG_T_STRING, false, 1, 64},
#if PYFENCE_RAW_MODE
        /* Test builds only (meson -Draw_mode=true): native CPython instead of the executor, so
         * that tests/security can attack the OS layers through pyfenced. */
        {"raw", MSG_T_BOOL, false, 0, 0},
#endif
};
/* A session id is 32 hex characters; the schema accepts any short string so that a malformed
 * id gets the same not_found answer as an unknown one. */
static const struct msg_field session_open_fields[] = {
        ID_FIELD,
        OP_FIELD,
        {"profile", MSG_T_STRING, false, 1, 64},
        {"limits", MSG_T_OBJECT, false, 0, 0},
        {"imports", MSG_T_STRING_ARRAY, false, 0, 64},
        {"variables", MSG_T_OBJECT, false, 0, 0},
        {"detach", MSG_T_BOOL, false, 0, 0},
};
/* cancel names a request of the same connection by its id. */
static const struct msg_field cancel_fields[] = {
        ID_FIELD,
        OP_FIELD,
        {"target", MSG_T_ID, true, 0, 0},
};
static const struct msg_field session_close_fields[] = {
        ID_FIELD,
        OP_FIELD,
        {"session", MSG_T_STRING, true, 1, MSG_SESSION_ID_MAX},
};
static const struct msg_field session_get_fields[] = {
        ID_FIELD,
        OP_FIELD,
        {"session", MSG_T_STRING, true, 1, MSG_SESSION_ID_MAX},
        {"names", MSG_T_STRING_SET, true, 0, MSG_SESSION_GET_MAX_NAMES},
};

/* Sorted by name, in enum order, so the name lookup can bsearch. An op without a schema is
 * known to the protocol but not served yet. */
static const struct op_def {
    const char *name;
    const struct msg_field *fields;
    size_t n_fields;
} ops[_MSG_OP_MAX] = {
        [MSG_OP_CANCEL] = {"cancel", cancel_fields, PF_ELEMENTSOF(cancel_fields)},
        [MSG_OP_EXEC] = {"exec", exec_fields, PF_ELEMENTSOF(exec_fields)},
        [MSG_OP_HELLO] = {"hello", hello_fields, PF_ELEMENTSOF(hello_fields)},
        [MSG_OP_PING] = {"ping", bare_fields, PF_ELEMENTSOF(bare_fields)},
        [MSG_OP_SESSION_CLOSE] = {"session.close", session_close_fields,
                                  PF_ELEMENTSOF(session_close_fields)},
        [MSG_OP_SESSION_GET] = {"session.get", session_get_fields,
                                PF_ELEMENTSOF(session_get_fields)},
        [MSG_OP_SESSION_LIST] = {"session.list", bare_fields, PF_ELEMENTSOF(bare_fields)},
        [MSG_OP_SESSION_OPEN] = {"session.open", session_open_fields,
                                 PF_ELEMENTSOF(session_open_fields)},
        [MSG_OP_STATS] = {"stats", bare_fields, PF_ELEMENTSOF(bare_fields)},
};

const char *
msg_op_name(enum msg_op op)
{
    if ((int) op < 0 || op >= _MSG_OP_MAX)
        return NULL;
    return ops[op].name;
}

static int
compare_op(const void *key, const void *elem)
{
    return strcmp(key, ((const struct op_def *) elem)->name);
}

static enum msg_op
op_from_name(const char *name)
{
    const struct op_def *d = bsearch(name, ops, _MSG_OP_MAX, sizeof(ops[0]), compare_op);
    return d ? (enum msg_op)(d - ops) : _MSG_OP_INVALID;
}

/* The id and op are checked by hand, before the op's table, so that every later failure can
 * echo the id and name the op. */
static int
request_op(const cJSON *root, enum msg_op *ret_op, struct pf_error **err)
{
    const cJSON *op_item = cJSON_GetObjectItemCaseSensitive(root, "op");
    if (!op_item)
        return pf_error_set(err, PF_E_BAD_REQUEST, "field 'op' is missing");
    if (!cJSON_IsString(op_item))
        return pf_error_set(err, PF_E_BAD_REQUEST, "field 'op': expected a string, got %s",
                            json_type_name(op_item));

    const char *name = op_item->valuestring;
    enum msg_op op = op_from_name(name);
    if (op == _MSG_OP_INVALID)
        return pf_error_set(err, PF_E_UNKNOWN_OP, "unknown op '%.*s'", pf_quote_len(name), name);
    if (!ops[op].fields)
        return pf_error_set(err, PF_E_UNKNOWN_OP, "op '%s' is not supported by this daemon yet",
                            ops[op].name);
    *ret_op = op;
    return 0;
}

int
msg_request_parse(const char *buf, size_t len, int max_depth, struct msg_request *ret,
                  cJSON **ret_id_copy, struct pf_error **err)
{
    if (ret_id_copy)
        *ret_id_copy = NULL;

    _cleanup_json_ cJSON *root = NULL;
    if (msg_parse(buf, len, max_depth, &root, err) < 0)
        return -1;

    const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
    if (!id)
        return pf_error_set(err, PF_E_BAD_REQUEST, "field 'id' is missing");
    if (check_id(id, "request", "id", err) < 0)
        return -1;

    enum msg_op op = _MSG_OP_INVALID;
    char where[32];
    int r = request_op(root, &op, err);
    if (r >= 0) {
        snprintf(where, sizeof(where), "%s request", ops[op].name);
        r = msg_check_fields(root, ops[op].fields, ops[op].n_fields, where, err);
    }
    if (r < 0) {
        /* A copy the caller owns: root (and the id inside it) dies with this function. */
        if (ret_id_copy)
            *ret_id_copy = cJSON_Duplicate(id, 1);
        return -1;
    }

    ret->root = TAKE_PTR(root);
    ret->id = id;
    ret->op = op;
    return 0;
}

void
msg_request_finish(struct msg_request *req)
{
    if (!req)
        return;
    cJSON_Delete(req->root);
    req->root = NULL;
    req->id = NULL;
    req->op = _MSG_OP_INVALID;
}
