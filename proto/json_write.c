#include "json_write.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "pf_cleanup.h"

/* Deep enough for anything we build (values are capped at 64 levels); a bound so that a
 * runaway tree cannot exhaust the stack. */
#define WRITE_MAX_DEPTH 512

struct writer {
    char *buf;
    size_t len, cap;
    size_t reserve;  /* bytes in front of the text */
    size_t max_text; /* limit on len - reserve */
    struct pf_error **err;
};

static int
grow(struct writer *w, size_t n)
{
    if (w->len - w->reserve + n > w->max_text)
        return pf_error_set(w->err, PF_E_TOO_LARGE,
                            "message of more than %zu bytes exceeds the limit of %zu bytes",
                            w->len - w->reserve + n, w->max_text);
    if (w->len + n + 1 <= w->cap)
        return 0;
    size_t cap = w->cap ? w->cap : 256;
    while (cap < w->len + n + 1)
        cap *= 2;
    char *b = realloc(w->buf, cap);
    if (!b)
        return pf_error_set(w->err, PF_E_INTERNAL,
                            "out of memory serialising a message of %zu bytes", w->len + n);
    w->buf = b;
    w->cap = cap;
    return 0;
}

static int
put(struct writer *w, const char *s, size_t n)
{
    if (grow(w, n) < 0)
        return -1;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    return 0;
}

static int
puts_(struct writer *w, const char *s)
{
    return put(w, s, strlen(s));
}

/* Integral values print exactly (no exponent up to 1e17); others in the shortest %.Ng form
 * that reads back to the same double, as Python's repr does. A normal double's shortest form
 * never has more than 15 digits unless it needs 16 or 17 (DBL_DIG), so %.15g finds it when it
 * is shorter; a subnormal holds fewer significant bits (5e-324 has one), so %.15g would print
 * digits it does not have: the search starts at one digit for them. */
static int
put_number(struct writer *w, double d)
{
    char tmp[64];
    if (!isfinite(d))
        return puts_(w, "null"); /* JSON has no spelling for them; values tag them instead */
    if (d == trunc(d) && fabs(d) < 1e17) {
        snprintf(tmp, sizeof(tmp), "%.0f", d);
    } else {
        for (int prec = fpclassify(d) == FP_SUBNORMAL ? 1 : 15; prec <= 17; prec++) {
            snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
            if (strtod(tmp, NULL) == d)
                break;
        }
    }
    return puts_(w, tmp);
}

static int
put_string(struct writer *w, const char *s, const char *key)
{
    if (!s)
        return pf_error_set(w->err, PF_E_INTERNAL, "message holds a string without a value");
    size_t len = strlen(s), bad;
    if (!msg_utf8_valid(s, len, &bad)) {
        if (key)
            return pf_error_set(w->err, PF_E_INTERNAL,
                                "field '%s' of a message is not valid UTF-8 (byte %zu)", key, bad);
        return pf_error_set(w->err, PF_E_INTERNAL, "a message string is not valid UTF-8 (byte %zu)",
                            bad);
    }
    if (put(w, "\"", 1) < 0)
        return -1;
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        if (put(w, s + start, i - start) < 0)
            return -1;
        char esc[8];
        switch (c) {
        case '"':
            strcpy(esc, "\\\"");
            break;
        case '\\':
            strcpy(esc, "\\\\");
            break;
        case '\n':
            strcpy(esc, "\\n");
            break;
        case '\r':
            strcpy(esc, "\\r");
            break;
        case '\t':
            strcpy(esc, "\\t");
            break;
        case '\b':
            strcpy(esc, "\\b");
            break;
        case '\f':
            strcpy(esc, "\\f");
            break;
        default:
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            break;
        }
        if (puts_(w, esc) < 0)
            return -1;
        start = i + 1;
    }
    if (put(w, s + start, len - start) < 0)
        return -1;
    return put(w, "\"", 1);
}

static int put_value(struct writer *w, const cJSON *item, const char *key, int depth);

static int
put_container(struct writer *w, const cJSON *item, bool object, int depth)
{
    if (depth > WRITE_MAX_DEPTH)
        return pf_error_set(w->err, PF_E_INTERNAL, "message nested deeper than %d levels",
                            WRITE_MAX_DEPTH);
    if (put(w, object ? "{" : "[", 1) < 0)
        return -1;
    const cJSON *child;
    bool first = true;
    cJSON_ArrayForEach(child, item) {
        if (!first && put(w, ",", 1) < 0)
            return -1;
        first = false;
        if (object) {
            if (put_string(w, child->string, NULL) < 0 || put(w, ":", 1) < 0)
                return -1;
        }
        if (put_value(w, child, object ? child->string : NULL, depth + 1) < 0)
            return -1;
    }
    return put(w, object ? "}" : "]", 1);
}

static int
put_value(struct writer *w, const cJSON *item, const char *key, int depth)
{
    switch (item->type & 0xFF) {
    case cJSON_NULL:
        return puts_(w, "null");
    case cJSON_False:
        return puts_(w, "false");
    case cJSON_True:
        return puts_(w, "true");
    case cJSON_Number:
        return put_number(w, item->valuedouble);
    case cJSON_String:
        return put_string(w, item->valuestring, key);
    case cJSON_Raw:
        /* Pre-serialised JSON from our own builders (e.g. exact numbers); trusted to be JSON,
         * but still held to UTF-8 like everything we send. */
        if (!item->valuestring || !*item->valuestring)
            return pf_error_set(w->err, PF_E_INTERNAL, "message holds an empty raw value");
        if (!msg_utf8_valid(item->valuestring, strlen(item->valuestring), NULL))
            return pf_error_set(w->err, PF_E_INTERNAL, "a raw message value is not valid UTF-8");
        return puts_(w, item->valuestring);
    case cJSON_Array:
        return put_container(w, item, false, depth);
    case cJSON_Object:
        return put_container(w, item, true, depth);
    default:
        return pf_error_set(w->err, PF_E_INTERNAL, "message holds a value of unknown type %d",
                            item->type);
    }
}

int
json_write(const cJSON *item, size_t reserve, size_t max_text, char **ret_buf, size_t *ret_len,
           struct pf_error **err)
{
    if (!item)
        return pf_error_set(err, PF_E_INTERNAL, "no message to serialise");
    struct writer w = {.reserve = reserve, .max_text = max_text, .err = err};
    w.cap = reserve + 256;
    w.buf = malloc(w.cap);
    if (!w.buf)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory serialising a message");
    memset(w.buf, 0, reserve);
    w.len = reserve;
    if (put_value(&w, item, NULL, 1) < 0) {
        free(w.buf);
        return -1;
    }
    w.buf[w.len] = '\0';
    *ret_buf = w.buf;
    *ret_len = w.len;
    return 0;
}
