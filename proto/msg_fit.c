#include "msg_fit.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_write.h"
#include "pf_cleanup.h"
#include "pf_error.h"

/* What json_write writes for one byte of a string: keep in step with its escapes. */
static size_t
byte_json_size(unsigned char c)
{
    if (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f')
        return 2;
    return c < 0x20 ? 6 : 1;
}

static bool
is_continuation(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

size_t
msg_fit_json_size(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += byte_json_size((unsigned char) s[i]);
    return n;
}

size_t
msg_fit_prefix(const char *s, size_t len, size_t budget)
{
    size_t i = 0, used = 0;
    while (i < len) {
        size_t end = i + 1;
        while (end < len && is_continuation((unsigned char) s[end]))
            end++;
        size_t c = msg_fit_json_size(s + i, end - i);
        if (used + c > budget)
            break;
        used += c;
        i = end;
    }
    return i;
}

size_t
msg_fit_suffix(const char *s, size_t len, size_t budget)
{
    size_t j = len, used = 0;
    while (j > 0) {
        size_t start = j - 1;
        while (start > 0 && is_continuation((unsigned char) s[start]))
            start--;
        size_t c = msg_fit_json_size(s + start, j - start);
        if (used + c > budget)
            break;
        used += c;
        j = start;
    }
    return len - j;
}

char *
msg_fit_cut(const char *s, size_t budget, const char *marker)
{
    size_t len = strlen(s);
    if (msg_fit_json_size(s, len) <= budget)
        return strdup(s);
    size_t marker_size = msg_fit_json_size(marker, strlen(marker));
    if (marker_size > budget)
        return strndup(s, msg_fit_prefix(s, len, budget));
    size_t left = budget - marker_size;
    size_t head = msg_fit_prefix(s, len, left / 2);
    left -= msg_fit_json_size(s, head);
    size_t tail = msg_fit_suffix(s + head, len - head, left);
    char *out = NULL;
    if (asprintf(&out, "%.*s%s%s", (int) head, s, marker, s + len - tail) < 0)
        return NULL;
    return out;
}

/* An upper bound of obj's size as JSON, without writing it: every string byte taken as a
 * \u00XX escape, every number as 32 bytes. Replies are checked on the request path, and
 * almost all are far below the limit. */
static size_t
size_bound(const cJSON *obj)
{
    size_t n = 2 + (obj->string ? 6 * strlen(obj->string) + 3 : 0);
    if ((cJSON_IsString(obj) || cJSON_IsRaw(obj)) && obj->valuestring)
        return n + 6 * strlen(obj->valuestring);
    if (cJSON_IsNumber(obj))
        return n + 32;
    for (const cJSON *c = obj->child; c; c = c->next)
        n += size_bound(c) + 1;
    return n + 5;
}

/* Size of obj as JSON; false when over max (or out of memory). */
static bool
fits(const cJSON *obj, uint32_t max, size_t *ret_size)
{
    _cleanup_free_ char *buf = NULL;
    _cleanup_pf_error_ struct pf_error *err = NULL;
    size_t len;
    if (json_write(obj, 0, max, &buf, &len, &err) < 0)
        return false;
    *ret_size = len;
    return true;
}

/* The reply's free texts, the parts with no bound of their own beyond the job's limits. */
enum { TEXT_LOGS, TEXT_MESSAGE, TEXT_SOURCE, N_TEXTS };

struct texts {
    cJSON *item[N_TEXTS]; /* string items of the reply, or NULL */
    char *saved[N_TEXTS]; /* their text while the items hold "" */
};

static void
texts_find(cJSON *reply, struct texts *t)
{
    cJSON *error = cJSON_GetObjectItemCaseSensitive(reply, "error");
    cJSON *items[N_TEXTS] = {
            [TEXT_LOGS] = cJSON_GetObjectItemCaseSensitive(reply, "logs"),
            [TEXT_MESSAGE] = cJSON_GetObjectItemCaseSensitive(error, "message"),
            [TEXT_SOURCE] = cJSON_GetObjectItemCaseSensitive(error, "source"),
    };
    for (int i = 0; i < N_TEXTS; i++)
        t->item[i] = cJSON_IsString(items[i]) ? items[i] : NULL;
}

/* Swaps each text for "" (the rest can then be measured), keeping the text in t->saved. */
static int
texts_empty(struct texts *t)
{
    for (int i = 0; i < N_TEXTS; i++) {
        if (!t->item[i] || t->saved[i])
            continue;
        char *empty = strdup("");
        if (!empty)
            return -1;
        t->saved[i] = t->item[i]->valuestring;
        t->item[i]->valuestring = empty;
    }
    return 0;
}

static void
texts_set(struct texts *t, int i, char *text)
{
    free(t->item[i]->valuestring);
    t->item[i]->valuestring = text;
}

/* Shares budget between the texts, the smaller ones first, so that no text is cut while
 * another leaves room unused; then cuts each to its share. */
static int
texts_cut(struct texts *t, size_t budget, const char *marker)
{
    size_t need[N_TEXTS] = {0};
    int order[N_TEXTS], n = 0;
    for (int i = 0; i < N_TEXTS; i++) {
        if (!t->item[i])
            continue;
        need[i] = msg_fit_json_size(t->saved[i], strlen(t->saved[i]));
        int k = n++;
        while (k > 0 && need[order[k - 1]] > need[i]) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
    for (int k = 0; k < n; k++) {
        int i = order[k];
        size_t share = budget / (size_t) (n - k);
        char *cut = msg_fit_cut(t->saved[i], share, marker);
        if (!cut)
            return -1;
        texts_set(t, i, cut);
        budget -= msg_fit_json_size(cut, strlen(cut));
    }
    return 0;
}

static void
texts_restore(struct texts *t)
{
    for (int i = 0; i < N_TEXTS; i++)
        if (t->saved[i])
            texts_set(t, i, TAKE_PTR(t->saved[i]));
}

/* obj[name] = item, whether or not obj had that field (item may be NULL: out of memory). */
static void
set_item(cJSON *obj, const char *name, cJSON *item)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, name);
    if (item)
        cJSON_AddItemToObject(obj, name, item);
}

/* The result as an output_limit failure: output and output_repr null, the reason in error. */
static int
leave_out_result(cJSON *reply, const char *limit_name, uint32_t max)
{
    char msg[200];
    snprintf(msg, sizeof(msg),
             "the result (output and output_repr) was left out: the reply would exceed %s (%u "
             "bytes); lower max_result_bytes",
             limit_name, (unsigned) max);
    bool is_reply = cJSON_HasObjectItem(reply, "ok");
    cJSON *error = cJSON_CreateObject();
    if (!error || !cJSON_AddStringToObject(error, "message", msg) ||
        (is_reply && !cJSON_AddStringToObject(error, "code", pf_code_name(PF_E_OUTPUT_LIMIT)))) {
        cJSON_Delete(error);
        return -1;
    }
    set_item(reply, "error", error);
    set_item(reply, "output", cJSON_CreateNull());
    set_item(reply, "output_repr", cJSON_CreateNull());
    set_item(reply, "is_final_answer", cJSON_CreateFalse());
    set_item(reply, "outcome", cJSON_CreateString(pf_code_name(PF_E_OUTPUT_LIMIT)));
    if (is_reply)
        set_item(reply, "ok", cJSON_CreateFalse());
    return 0;
}

static bool
has_result(const cJSON *reply)
{
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(reply, "output");
    const cJSON *repr = cJSON_GetObjectItemCaseSensitive(reply, "output_repr");
    return (out && !cJSON_IsNull(out)) || (repr && !cJSON_IsNull(repr));
}

int
msg_fit_exec_reply(cJSON *reply, uint32_t max_bytes, const char *limit_name)
{
    size_t size;
    if (size_bound(reply) <= max_bytes || fits(reply, max_bytes, &size))
        return 0;
    struct texts t = {0};
    texts_find(reply, &t);
    if (texts_empty(&t) < 0)
        goto fail;
    if (!fits(reply, max_bytes, &size) && has_result(reply)) {
        if (leave_out_result(reply, limit_name, max_bytes) < 0)
            goto fail;
        /* The old error went with its texts; error.message is the new one now. */
        for (int i = TEXT_MESSAGE; i <= TEXT_SOURCE; i++)
            free(TAKE_PTR(t.saved[i]));
        texts_find(reply, &t);
        if (texts_empty(&t) < 0)
            goto fail;
    }
    if (!fits(reply, max_bytes, &size))
        goto fail;
    char marker[128];
    snprintf(marker, sizeof(marker), "\n..._This content has been cut to fit %s (%u bytes)_...\n",
             limit_name, (unsigned) max_bytes);
    if (texts_cut(&t, max_bytes - size, marker) < 0)
        goto fail;
    for (int i = 0; i < N_TEXTS; i++)
        free(t.saved[i]);
    return fits(reply, max_bytes, &size) ? 0 : -1;
fail:
    texts_restore(&t);
    return -1;
}
