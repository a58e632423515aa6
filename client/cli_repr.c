/* Python's repr() of a tagged JSON value (PROTOCOL.md "Values"), for `pyfence session get`. */
#include "cli_repr.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH                                                                  \
    200 /* deeper than any value the daemon sends (64 containers, 2-3 levels each) \
         */

struct buf {
    char *s;
    size_t len, cap;
    bool oom;
};

static void
put(struct buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *ns = realloc(b->s, cap);
        if (!ns) {
            b->oom = true;
            return;
        }
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void
puts_(struct buf *b, const char *s)
{
    put(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void
putf(struct buf *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n > 0)
        put(b, tmp, (size_t) n < sizeof(tmp) ? (size_t) n : sizeof(tmp) - 1);
}

/* Python's quote choice: single quotes unless the text has ' and no ". */
static char
quote_for(const unsigned char *s, size_t n)
{
    bool single = memchr(s, '\'', n) != NULL, dbl = memchr(s, '"', n) != NULL;
    return single && !dbl ? '"' : '\'';
}

/* str repr (bytes == false) or the inside of a bytes repr (bytes == true). */
static void
quoted(struct buf *b, const unsigned char *s, size_t n, bool bytes)
{
    char q = quote_for(s, n);
    put(b, &q, 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == (unsigned char) q || c == '\\')
            putf(b, "\\%c", c);
        else if (c == '\n')
            puts_(b, "\\n");
        else if (c == '\r')
            puts_(b, "\\r");
        else if (c == '\t')
            puts_(b, "\\t");
        else if (c < 0x20 || c == 0x7f || (bytes && c >= 0x80))
            putf(b, "\\x%02x", c);
        else if (!bytes && c == 0xc2 && i + 1 < n && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f)
            putf(b, "\\x%02x", s[++i]); /* C1 controls, U+0080..U+009F */
        else
            put(b, (const char *) &c, 1);
    }
    put(b, &q, 1);
}

/* float repr: the shortest digits that read back, fixed between 1e-4 and 1e16 (Python's 'r');
 * dot0: an integral value gets ".0" (float's repr does, complex's parts do not). */
static void
float_repr(struct buf *b, double d, bool dot0)
{
    if (isnan(d)) {
        puts_(b, "nan");
        return;
    }
    if (isinf(d)) {
        puts_(b, d < 0 ? "-inf" : "inf");
        return;
    }
    char sci[64];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(sci, sizeof(sci), "%.*e", prec - 1, d);
        if (strtod(sci, NULL) == d)
            break;
    }
    int exp = atoi(strchr(sci, 'e') + 1);
    if (exp >= -4 && exp < 16) {
        int decimals = prec - 1 - exp;
        putf(b, "%.*f", decimals > 0 ? decimals : 0, d);
        if (decimals <= 0 && dot0)
            puts_(b, ".0");
        return;
    }
    char *e = strchr(sci, 'e');
    put(b, sci, (size_t) (e - sci));
    putf(b, "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
}

static void value(struct buf *b, const cJSON *v, int depth);

static void
items(struct buf *b, const cJSON *arr, const char *open, const char *close, int depth)
{
    puts_(b, open);
    const cJSON *it;
    bool first = true;
    cJSON_ArrayForEach(it, arr) {
        if (!first)
            puts_(b, ", ");
        first = false;
        value(b, it, depth + 1);
    }
    puts_(b, close);
}

static const char *
str_field(const cJSON *o, const char *name)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
}

static void
base64_bytes(struct buf *b, const char *text)
{
    static const char alphabet[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(text);
    unsigned char *out = malloc(n / 4 * 3 + 3);
    if (!out) {
        b->oom = true;
        return;
    }
    size_t len = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n && text[i] != '='; i++) {
        const char *p = strchr(alphabet, text[i]);
        if (!p || !text[i])
            continue;
        acc = acc << 6 | (unsigned) (p - alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[len++] = (unsigned char) (acc >> bits);
        }
    }
    puts_(b, "b");
    quoted(b, out, len, true);
    free(out);
}

/* A plain number, or a tagged float ({"$type": "float", "value": "-0.0"}). */
static double
number_of(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return v->valuedouble;
    const char *text = str_field(v, "value");
    return text ? strtod(text, NULL) : NAN;
}

static void
tagged(struct buf *b, const cJSON *o, const char *type, int depth)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "items");
    if (strcmp(type, "tuple") == 0) {
        items(b, list, "(", cJSON_GetArraySize(list) == 1 ? ",)" : ")", depth);
    } else if (strcmp(type, "set") == 0 || strcmp(type, "frozenset") == 0) {
        bool frozen = type[0] == 'f';
        if (cJSON_GetArraySize(list) == 0)
            puts_(b, frozen ? "frozenset()" : "set()");
        else
            items(b, list, frozen ? "frozenset({" : "{", frozen ? "})" : "}", depth);
    } else if (strcmp(type, "dict") == 0) {
        puts_(b, "{");
        const cJSON *pair;
        bool first = true;
        cJSON_ArrayForEach(pair, list) {
            if (!first)
                puts_(b, ", ");
            first = false;
            value(b, cJSON_GetArrayItem(pair, 0), depth + 1);
            puts_(b, ": ");
            value(b, cJSON_GetArrayItem(pair, 1), depth + 1);
        }
        puts_(b, "}");
    } else if (strcmp(type, "bytes") == 0 || strcmp(type, "bytearray") == 0) {
        const char *text = str_field(o, "base64");
        if (type[4] == 'a')
            puts_(b, "bytearray(");
        base64_bytes(b, text ? text : "");
        if (type[4] == 'a')
            puts_(b, ")");
    } else if (strcmp(type, "int") == 0 || strcmp(type, "float") == 0) {
        const char *text = str_field(o, "value");
        puts_(b, text ? text : "?");
    } else if (strcmp(type, "complex") == 0) {
        /* CPython: "Nj" when the real part is +0.0, else "(R+Nj)"; parts without ".0". */
        double re = number_of(cJSON_GetObjectItemCaseSensitive(o, "real"));
        double im = number_of(cJSON_GetObjectItemCaseSensitive(o, "imag"));
        if (re == 0 && !signbit(re)) {
            float_repr(b, im, false);
            puts_(b, "j");
        } else {
            puts_(b, "(");
            float_repr(b, re, false);
            puts_(b, signbit(im) && !isnan(im) ? "-" : "+");
            float_repr(b, isnan(im) ? im : fabs(im), false);
            puts_(b, "j)");
        }
    } else if (strcmp(type, "datetime") == 0 || strcmp(type, "date") == 0 ||
               strcmp(type, "time") == 0) {
        const char *iso = str_field(o, "iso");
        putf(b, "datetime.%s.fromisoformat(", type);
        quoted(b, (const unsigned char *) (iso ? iso : ""), iso ? strlen(iso) : 0, false);
        puts_(b, ")");
    } else if (strcmp(type, "timedelta") == 0) {
        /* As CPython: the non-zero fields only, "timedelta(0)" when all are zero. */
        static const char *const fields[] = {"days", "seconds", "microseconds"};
        puts_(b, "datetime.timedelta(");
        bool any = false;
        for (size_t i = 0; i < 3; i++) {
            double v = number_of(cJSON_GetObjectItemCaseSensitive(o, fields[i]));
            if (v == 0)
                continue;
            putf(b, "%s%s=%.0f", any ? ", " : "", fields[i], v);
            any = true;
        }
        puts_(b, any ? ")" : "0)");
    } else {
        /* "repr" (and any tag this client does not know): the text the worker made. */
        const char *text = str_field(o, "repr");
        puts_(b, text ? text : "<?>");
    }
}

static void
value(struct buf *b, const cJSON *v, int depth)
{
    if (!v || depth > MAX_DEPTH) {
        puts_(b, "...");
    } else if (cJSON_IsNull(v)) {
        puts_(b, "None");
    } else if (cJSON_IsBool(v)) {
        puts_(b, cJSON_IsTrue(v) ? "True" : "False");
    } else if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        /* An integral plain number is an int; floats with integral values come tagged. */
        if (d == trunc(d) && fabs(d) <= 9007199254740992.0)
            putf(b, "%.0f", d);
        else
            float_repr(b, d, true);
    } else if (cJSON_IsString(v)) {
        quoted(b, (const unsigned char *) v->valuestring, strlen(v->valuestring), false);
    } else if (cJSON_IsArray(v)) {
        items(b, v, "[", "]", depth);
    } else if (cJSON_IsObject(v)) {
        const char *type = str_field(v, "$type");
        if (type) {
            tagged(b, v, type, depth);
            return;
        }
        puts_(b, "{");
        const cJSON *it;
        bool first = true;
        cJSON_ArrayForEach(it, v) {
            if (!first)
                puts_(b, ", ");
            first = false;
            quoted(b, (const unsigned char *) it->string, strlen(it->string), false);
            puts_(b, ": ");
            value(b, it, depth + 1);
        }
        puts_(b, "}");
    } else {
        puts_(b, "?");
    }
}

char *
cli_repr(const cJSON *tagged_value)
{
    struct buf b = {0};
    value(&b, tagged_value, 0);
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s ? b.s : strdup("");
}
