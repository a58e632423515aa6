/* The worker's egress request (CHANNEL.md, "egress"), checked on the loop thread before any
 * call starts: its fields, its method and URL against the profile's rules, its headers and its
 * body; then the call it makes is started. Apart from egress.c, the engine, which looks the host
 * up, runs the transfer and makes the reply: this file only says which requests get that far. */
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"
#include "egress_internal.h"
#include "msg.h"
#include "pf_cleanup.h"

#define EGRESS_MAX_HEADERS      64
#define EGRESS_MAX_HEADER_BYTES 8192

/* ---- the request, checked on the loop thread --------------------------------------------- */

static const struct msg_field request_fields[] = {
        {"event", MSG_T_STRING, true, 1, 16},
        {"method", MSG_T_STRING, true, 1, 16},
        {"url", MSG_T_STRING, true, 1, POLICY_EGRESS_MAX_URL},
        {"headers", MSG_T_OBJECT, false, 0, 0},
        {"body", MSG_T_STRING, false, 0, 64.0 * 1024 * 1024},
};

/* RFC 9110 token characters. */
static bool
is_token(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              strchr("!#$%&'*+-.^_`|~", *s)))
            return false;
    return true;
}

/* Headers libcurl writes from the request itself: set by the snippet they could say another
 * host than the rule's, or frame the body differently from what is sent. */
static const char *const reserved_headers[] = {
        "host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer"};

static bool
header_reserved(const char *name)
{
    for (size_t i = 0; i < PF_ELEMENTSOF(reserved_headers); i++)
        if (strcasecmp(name, reserved_headers[i]) == 0)
            return true;
    return false;
}

static int
read_headers(const cJSON *obj, struct curl_slist **ret, char *why, size_t why_size)
{
    if (cJSON_GetArraySize(obj) > EGRESS_MAX_HEADERS) {
        snprintf(why, why_size, "headers: more than %d", EGRESS_MAX_HEADERS);
        return -1;
    }
    const cJSON *h;
    cJSON_ArrayForEach(h, obj) {
        if (!is_token(h->string)) {
            snprintf(why, why_size, "headers: '%.64s' is not a header name", h->string);
            return -1;
        }
        if (header_reserved(h->string)) {
            snprintf(why, why_size, "headers: %.64s is set by pyfence, not by the snippet",
                     h->string);
            return -1;
        }
        if (!cJSON_IsString(h) || strpbrk(h->valuestring, "\r\n") ||
            strlen(h->valuestring) > EGRESS_MAX_HEADER_BYTES) {
            snprintf(why, why_size,
                     "headers: the value of %.64s must be a string of at most %d bytes without "
                     "line breaks",
                     h->string, EGRESS_MAX_HEADER_BYTES);
            return -1;
        }
        /* "Name;" is libcurl's way to send a header with an empty value */
        _cleanup_free_ char *line = NULL;
        if (asprintf(&line, *h->valuestring ? "%s: %s" : "%s;", h->string, h->valuestring) < 0)
            return -1;
        struct curl_slist *l = curl_slist_append(*ret, line);
        if (!l)
            return -1;
        *ret = l;
    }
    return 0;
}

/* Standard padded base64 (the worker's encoding of bytes), decoded into *ret. */
static int
decode_base64(const char *text, unsigned char **ret, size_t *ret_len)
{
    size_t n = strlen(text);
    if (n % 4 != 0)
        return -1;
    unsigned char *out = malloc(n / 4 * 3 + 1);
    if (!out)
        return -1;
    int len = n ? EVP_DecodeBlock(out, (const unsigned char *) text, (int) n) : 0;
    if (len < 0) {
        free(out);
        return -1;
    }
    /* EVP_DecodeBlock counts the padding as zero bytes */
    for (size_t i = n; i > 0 && text[i - 1] == '='; i--)
        len--;
    *ret = out;
    *ret_len = (size_t) len;
    return 0;
}

cJSON *
egress_start(struct egress *e, const struct policy_egress *rules,
             const struct egress_limits *limits, const cJSON *request, egress_done_fn done,
             void *ctx, struct egress_call **ret_call)
{
    *ret_call = NULL;
    _cleanup_pf_error_ struct pf_error *err = NULL;
    if (msg_check_fields(request, request_fields, PF_ELEMENTSOF(request_fields), "egress", &err) <
        0)
        return egress_error_frame("bad_request", err->msg);
    const char *method = msg_get_string(request, "method", "");
    const char *url = msg_get_string(request, "url", "");
    const struct policy_egress_rule *rule = policy_egress_match(rules, method, url, &err);
    if (!rule)
        return egress_error_frame("refused", err ? err->msg : "out of memory");
    /* "localhost" and names under it are loopback by definition (RFC 6761): refused without a
     * lookup, which a host without them in /etc/hosts and without DNS could not answer at all.
     * A policy refuses such rules at load; a rule built otherwise (tests) still meets this. */
    if (!rule->host_is_ip && policy_egress_is_localhost_name(rule->host)) {
        char why[512];
        snprintf(why, sizeof(why),
                 "%s names host '%s', a loopback name (RFC 6761), which is not a public "
                 "address; an egress rule must name an IP address to reach a private or local one",
                 url, rule->host);
        return egress_error_frame("refused", why);
    }
    struct egress_call *c = calloc(1, sizeof(*c));
    if (!c || !(c->method = strdup(method)) || !(c->url = strdup(url))) {
        if (c)
            egress_call_free(c);
        return NULL;
    }
    c->host_is_ip = rule->host_is_ip;
    c->limits = *limits;
    char why[512] = "";
    const cJSON *headers = cJSON_GetObjectItemCaseSensitive(request, "headers");
    if (headers && read_headers(headers, &c->headers, why, sizeof(why)) < 0) {
        egress_call_free(c);
        return why[0] ? egress_error_frame("bad_request", why) : NULL;
    }
    const char *body = msg_get_string(request, "body", NULL);
    if (body && (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)) {
        egress_call_free(c);
        return egress_error_frame("bad_request", "a GET or HEAD request has no body");
    }
    if (body && decode_base64(body, &c->body, &c->body_len) < 0) {
        egress_call_free(c);
        return egress_error_frame("bad_request", "body: not standard padded base64");
    }
    if (c->body_len > limits->max_bytes) {
        snprintf(why, sizeof(why), "the request body (%zu bytes) exceeds egress_max_bytes %llu",
                 c->body_len, (unsigned long long) limits->max_bytes);
        egress_call_free(c);
        return egress_error_frame("too_large", why);
    }
    c->done = done;
    c->ctx = ctx;
    if (e->closing) {
        egress_call_free(c);
        return egress_error_frame("connection", "pyfenced is stopping");
    }
    egress_call_link(e, c);
    c->started = uv_now(e->loop);
    /* An IP literal needs no lookup (libcurl takes it as it is, no thread). */
    if (c->host_is_ip ? egress_call_transfer(e, c) < 0
                      : egress_call_lookup(e, c, rule->host, rule->port, &err) < 0) {
        egress_call_free(c);
        snprintf(why, sizeof(why), "%s %s: %s", method, url,
                 err ? err->msg : "egress: cannot start the transfer (out of memory)");
        return egress_error_frame("connection", why);
    }
    *ret_call = c;
    return NULL;
}
