#include "egress.h"

#include <ares.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "egress_internal.h"
#include "egress_lookup.h"
#include "pf_cleanup.h"
#include "pf_log.h"

/* A socket libcurl asked to have watched (CURLMOPT_SOCKETFUNCTION), freed when its poll
 * handle is closed. */
struct egress_socket {
    uv_poll_t poll;
    struct egress *e;
    curl_socket_t fd;
};

int
egress_global_init(struct pf_error **err)
{
    CURLcode c = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (c != CURLE_OK)
        return pf_error_set(err, PF_E_INTERNAL, "egress: curl_global_init: %s",
                            curl_easy_strerror(c));
    /* (Nothing to do on Linux in c-ares 1.18; its contract asks for it all the same.) */
    int rc = ares_library_init(ARES_LIB_INIT_ALL);
    if (rc != ARES_SUCCESS) {
        curl_global_cleanup();
        return pf_error_set(err, PF_E_INTERNAL, "egress: ares_library_init: %s", ares_strerror(rc));
    }
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    if (!(v->features & CURL_VERSION_ASYNCHDNS))
        pf_log_warning(EGRESS,
                       "libcurl %s resolves host names synchronously: while an egress request's "
                       "name is looked up, pyfenced serves nobody else (a libcurl built with the "
                       "threaded resolver or c-ares avoids it)",
                       v->version);
#if LIBCURL_VERSION_NUM < 0x075700
    pf_log_warning(EGRESS,
                   "libcurl %s has no CURLOPT_QUICK_EXIT (7.87): a request ended while its host "
                   "name is being resolved stops pyfenced until the resolver gives up",
                   v->version);
#endif
    return 0;
}

void
egress_global_cleanup(void)
{
    ares_library_cleanup();
    curl_global_cleanup();
}

cJSON *
egress_error_frame(const char *type, const char *message)
{
    cJSON *f = cJSON_CreateObject();
    cJSON *e = cJSON_CreateObject();
    if (!f || !e || !cJSON_AddStringToObject(f, "op", "egress") ||
        !cJSON_AddStringToObject(e, "type", type) ||
        !cJSON_AddStringToObject(e, "message", message)) {
        cJSON_Delete(f);
        cJSON_Delete(e);
        return NULL;
    }
    cJSON_AddItemToObject(f, "error", e);
    return f;
}

/* Forgets the response headers read so far (the next response's status line starts over). */
static void
headers_clear(struct egress_call *c)
{
    for (size_t i = 0; i < c->n_resp_headers; i++) {
        free(c->resp_headers[i].name);
        free(c->resp_headers[i].value);
    }
    c->n_resp_headers = 0;
}

/* Takes c out of its engine's list and frees it; its transfer must be over or removed. */
void
egress_call_free(struct egress_call *c)
{
    if (c->e) {
        if (c->prev)
            c->prev->next = c->next;
        else
            c->e->calls = c->next;
        if (c->next)
            c->next->prev = c->prev;
        c->e->held -= c->received;
    }
    egress_lookup_cancel(c->lookup);
    if (c->easy) {
        curl_multi_remove_handle(c->e->multi, c->easy);
        curl_easy_cleanup(c->easy);
    }
    if (c->share)
        curl_share_cleanup(c->share); /* after the easy handle: it used it */
    curl_slist_free_all(c->resolve);
    free(c->host);
    free(c->method);
    free(c->url);
    curl_slist_free_all(c->headers);
    free(c->body);
    headers_clear(c);
    free(c->resp_headers);
    free(c->resp_body);
    free(c);
}

static cJSON *failure_frame(const struct egress_call *c);

void
egress_call_link(struct egress *e, struct egress_call *c)
{
    c->e = e;
    c->next = e->calls;
    if (c->next)
        c->next->prev = c;
    e->calls = c;
}

void
egress_abandon(struct egress_call *call)
{
    if (call)
        egress_call_free(call);
}

/* ---- the transfer, on a thread-pool thread ------------------------------------------------ */

static bool
ipv4_public(const unsigned char a[4])
{
    static const struct {
        unsigned char net[4];
        int bits;
    } reserved[] = {
            {{0, 0, 0, 0}, 8},      {{10, 0, 0, 0}, 8},     {{100, 64, 0, 0}, 10},
            {{127, 0, 0, 0}, 8},    {{169, 254, 0, 0}, 16}, {{172, 16, 0, 0}, 12},
            {{192, 0, 0, 0}, 24},   {{192, 0, 2, 0}, 24},   {{192, 88, 99, 0}, 24},
            {{192, 168, 0, 0}, 16}, {{198, 18, 0, 0}, 15},  {{198, 51, 100, 0}, 24},
            {{203, 0, 113, 0}, 24}, {{224, 0, 0, 0}, 4},    {{240, 0, 0, 0}, 4},
    };
    uint32_t addr = (uint32_t) a[0] << 24 | (uint32_t) a[1] << 16 | (uint32_t) a[2] << 8 | a[3];
    for (size_t i = 0; i < PF_ELEMENTSOF(reserved); i++) {
        const unsigned char *n = reserved[i].net;
        uint32_t net = (uint32_t) n[0] << 24 | (uint32_t) n[1] << 16 | (uint32_t) n[2] << 8 | n[3];
        uint32_t mask = ~0u << (32 - reserved[i].bits);
        if ((addr & mask) == net)
            return false;
    }
    return true;
}

/* Global unicast (2000::/3) only; an address embedding an IPv4 one (mapped, NAT64) is that
 * address. */
static bool
ipv6_public(const unsigned char a[16])
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
        return ipv4_public(a + 12);
    if ((a[0] & 0xe0) != 0x20)
        return false;
    /* 6to4 (2002::/16, deprecated by RFC 7526) carries an IPv4 address of any kind, private
     * ones included, to a relay: never public, whatever it embeds */
    if (a[0] == 0x20 && a[1] == 0x02)
        return false;
    /* documentation (2001:db8::/32) and ORCHID/Teredo-like special ranges in 2001::/23 */
    return !(a[0] == 0x20 && a[1] == 0x01 && (a[2] < 0x02 || (a[2] == 0x0d && a[3] == 0xb8)));
}

bool
egress_address_public(int family, const void *addr)
{
    if (family == AF_INET)
        return ipv4_public(addr);
    return family == AF_INET6 && ipv6_public(addr);
}

/* Connects only where the rule allows: anywhere for an IP literal rule (curl connects to that
 * literal), else only to public addresses, whatever the name resolved to. */
static curl_socket_t
open_checked_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *address)
{
    struct egress_call *c = clientp;
    (void) purpose;
    const void *addr = NULL;
    if (address->family == AF_INET)
        addr = &((const struct sockaddr_in *) &address->addr)->sin_addr;
    else if (address->family == AF_INET6)
        addr = &((const struct sockaddr_in6 *) &address->addr)->sin6_addr;
    if (!c->host_is_ip && !(addr && egress_address_public(address->family, addr))) {
        if (!addr ||
            !inet_ntop(address->family, addr, c->refused_address, sizeof(c->refused_address)))
            snprintf(c->refused_address, sizeof(c->refused_address), "an address of family %d",
                     address->family);
        return CURL_SOCKET_BAD;
    }
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

/* Every byte received is counted once, in the call and in the engine's held, until the call is
 * freed: a response that would take held past max_held ends, whoever else holds the rest. */
static bool
count_received(struct egress_call *c, size_t n)
{
    if (c->received + n > c->limits.max_bytes) {
        c->too_large = true;
        return false;
    }
    if (c->e->held + n > c->e->max_held) {
        c->over_held = true;
        return false;
    }
    c->received += n;
    c->e->held += n;
    return true;
}

static size_t
on_body(char *data, size_t size, size_t nmemb, void *userdata)
{
    struct egress_call *c = userdata;
    size_t n = size * nmemb;
    if (!count_received(c, n))
        return 0;
    if (c->resp_len + n > c->resp_cap) {
        size_t cap = c->resp_cap ? c->resp_cap : 16384;
        while (cap < c->resp_len + n)
            cap *= 2;
        unsigned char *p = realloc(c->resp_body, cap);
        if (!p)
            return 0;
        c->resp_body = p;
        c->resp_cap = cap;
    }
    memcpy(c->resp_body + c->resp_len, data, n);
    c->resp_len += n;
    return n;
}

/* Header text is ISO-8859-1 (RFC 9110 obs-text): as UTF-8, every byte over 0x7f becomes two,
 * so that the frame to the worker is valid UTF-8 whatever the server sent. */
static char *
latin1_to_utf8(const char *s, size_t n)
{
    char *out = malloc(2 * n + 1);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char) s[i];
        if (c < 0x80) {
            out[k++] = (char) c;
        } else {
            out[k++] = (char) (0xc0 | (c >> 6));
            out[k++] = (char) (0x80 | (c & 0x3f));
        }
    }
    out[k] = '\0';
    return out;
}

/* The final response's header lines, names lowercased, kept in order; the reply joins repeated
 * names (headers_object). A status line starts over (1xx responses come first). Work per line
 * is constant, and the number of lines is capped, so that a server cannot make the loop
 * thread spend quadratic time on one response. */
static size_t
on_header(char *data, size_t size, size_t nmemb, void *userdata)
{
    struct egress_call *c = userdata;
    size_t n = size * nmemb;
    if (!count_received(c, n))
        return 0;
    if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        headers_clear(c);
        return n;
    }
    const char *colon = memchr(data, ':', n);
    if (!colon)
        return n; /* the blank line ending the headers, or a malformed line */
    if (c->n_resp_headers == EGRESS_MAX_RESPONSE_HEADERS) {
        c->too_many_headers = true;
        return 0;
    }
    if (!c->resp_headers &&
        !(c->resp_headers = calloc(EGRESS_MAX_RESPONSE_HEADERS, sizeof(*c->resp_headers))))
        return 0;
    _cleanup_free_ char *name = latin1_to_utf8(data, (size_t) (colon - data));
    const char *v = colon + 1, *end = data + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    char *value = latin1_to_utf8(v, (size_t) (end - v));
    if (!name || !value) {
        free(value);
        return 0;
    }
    for (char *p = name; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char) (*p - 'A' + 'a');
    c->resp_headers[c->n_resp_headers++] =
            (struct egress_header){TAKE_PTR(name), value, strlen(value)};
    return n;
}

/* The headers as one object, repeated names joined with ", " in the order they came: each
 * value is copied once. */
static cJSON *
headers_object(const struct egress_call *c)
{
    cJSON *obj = cJSON_CreateObject();
    for (size_t i = 0; obj && i < c->n_resp_headers; i++) {
        const struct egress_header *h = &c->resp_headers[i];
        if (cJSON_GetObjectItemCaseSensitive(obj, h->name))
            continue; /* joined with its first line */
        size_t len = 0;
        for (size_t k = i; k < c->n_resp_headers; k++)
            if (strcmp(c->resp_headers[k].name, h->name) == 0)
                len += c->resp_headers[k].value_len + 2;
        _cleanup_free_ char *joined = malloc(len + 1);
        if (!joined) {
            cJSON_Delete(obj);
            return NULL;
        }
        size_t at = 0;
        for (size_t k = i; k < c->n_resp_headers; k++) {
            const struct egress_header *o = &c->resp_headers[k];
            if (strcmp(o->name, h->name) != 0)
                continue;
            if (at) {
                memcpy(joined + at, ", ", 2);
                at += 2;
            }
            memcpy(joined + at, o->value, o->value_len);
            at += o->value_len;
        }
        joined[at] = '\0';
        if (!cJSON_AddStringToObject(obj, h->name, joined)) {
            cJSON_Delete(obj);
            return NULL;
        }
    }
    return obj;
}

/* CURLOPT_RESOLVER_START_FUNCTION: libcurl is about to look a name up itself (a thread of its
 * own, unbounded). A host name rule's addresses are in the transfer's DNS cache already
 * (CURLOPT_RESOLVE), so a name missing from it is one the engine did not check: refused. An IP
 * literal is "looked up" by libcurl without a thread (inet_pton). */
static int
refuse_lookup(void *resolver_state, void *reserved, void *userdata)
{
    struct egress_call *c = userdata;
    (void) resolver_state;
    (void) reserved;
    if (c->host_is_ip)
        return 0;
    c->resolver_refused = true;
    return 1;
}

/* The most addresses of one name handed to libcurl. */
#define EGRESS_MAX_ADDRESSES 16

/* "host:port:a,b,[c]" for CURLOPT_RESOLVE, the public addresses of addrs only (up to
 * EGRESS_MAX_ADDRESSES); -1 with c->refused_address when there is none. */
static int
resolve_entry(struct egress_call *c, const struct egress_address *addrs, size_t n_addrs, char **ret)
{
    char list[EGRESS_MAX_ADDRESSES * (INET6_ADDRSTRLEN + 3)] = "";
    size_t at = 0, n = 0;
    for (size_t i = 0; i < n_addrs && n < EGRESS_MAX_ADDRESSES; i++) {
        const struct egress_address *a = &addrs[i];
        char text[INET6_ADDRSTRLEN];
        if (!inet_ntop(a->family, &a->addr, text, sizeof(text)))
            continue;
        if (!egress_address_public(a->family, &a->addr)) {
            if (!c->refused_address[0])
                snprintf(c->refused_address, sizeof(c->refused_address), "%s", text);
            continue;
        }
        bool v6 = a->family == AF_INET6;
        at += (size_t) snprintf(list + at, sizeof(list) - at, "%s%s%s%s", n ? "," : "",
                                v6 ? "[" : "", text, v6 ? "]" : "");
        n++;
    }
    if (!n) {
        if (!c->refused_address[0])
            snprintf(c->refused_address, sizeof(c->refused_address), "no address");
        return -1;
    }
    return asprintf(ret, "%s:%u:%s", c->host, c->port, list) < 0 ? -2 : 0;
}

/* Ends c before its transfer started: its owner gets frame. */
static void
call_end(struct egress_call *c, cJSON *frame)
{
    egress_done_fn done = c->done;
    void *ctx = c->ctx;
    egress_call_free(c);
    done(ctx, frame);
}

static cJSON *
lookup_failure_frame(const struct egress_call *c, int status, const char *why)
{
    char msg[512];
    if (status == UV_ETIMEDOUT) {
        snprintf(msg, sizeof(msg),
                 "%s %s: the lookup of host name '%s' did not end within egress_timeout_ms %llu",
                 c->method, c->url, c->host, (unsigned long long) c->limits.timeout_ms);
        return egress_error_frame("timeout", msg);
    }
    snprintf(msg, sizeof(msg), "%s %s: cannot look up host name '%s': %s", c->method, c->url,
             c->host, why ? why : uv_strerror(status));
    return egress_error_frame("connection", msg);
}

/* The engine's lookup answered: the transfer starts with its public addresses only, in the
 * time left. */
static void
on_looked_up(void *ctx, int status, const struct egress_address *addrs, size_t n, const char *why)
{
    struct egress_call *c = ctx;
    c->lookup = NULL; /* gone with its answer */
    if (status == 0 && uv_now(c->e->loop) - c->started >= c->limits.timeout_ms)
        status = UV_ETIMEDOUT;
    if (status < 0) {
        call_end(c, lookup_failure_frame(c, status, why));
        return;
    }
    _cleanup_free_ char *entry = NULL;
    int rc = resolve_entry(c, addrs, n, &entry);
    if (rc == -1) {
        call_end(c, failure_frame(c));
        return;
    }
    if (rc < 0 || !(c->resolve = curl_slist_append(NULL, entry)) ||
        egress_call_transfer(c->e, c) < 0)
        call_end(c, egress_error_frame("connection",
                                       "egress: cannot start the transfer (out of memory)"));
}

int
egress_call_lookup(struct egress *e, struct egress_call *c, const char *host, unsigned port,
                   struct pf_error **err)
{
    if (!(c->host = strdup(host)))
        return pf_error_set(err, PF_E_INTERNAL, "egress: out of memory");
    c->port = port;
    c->lookup = egress_lookup_start(e->lookups, host, c->limits.owner, c->limits.timeout_ms,
                                    on_looked_up, c, err);
    return c->lookup ? 0 : -1;
}

/* A new easy handle for c, added to e's multi handle: libcurl starts it at its next timeout. */
int
egress_call_transfer(struct egress *e, struct egress_call *c)
{
    CURL *h = curl_easy_init();
    if (!h)
        return -1;
    curl_easy_setopt(h, CURLOPT_PRIVATE, c);
    curl_easy_setopt(h, CURLOPT_URL, c->url);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075700
    /* libcurl looks nothing up (refuse_lookup), so it has no resolver thread to wait for; were
     * it ever to have one, a transfer ending mid-lookup must still not wait for it on the loop
     * thread every agent shares. */
    curl_easy_setopt(h, CURLOPT_QUICK_EXIT, 1L);
#endif
    curl_easy_setopt(h, CURLOPT_PROXY, ""); /* not the daemon's environment's */
    /* A connection of its own, closed after it: none is shared with another request. */
    curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
    /* What the lookup left of the call's time (on_looked_up made sure it is not nothing). */
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
                     (long) (c->limits.timeout_ms - (uv_now(e->loop) - c->started)));
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) c->limits.max_bytes);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->curl_msg);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_checked_socket);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, c);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "pyfence");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, c->headers);
    if (strcmp(c->method, "HEAD") == 0)
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    else if (strcmp(c->method, "GET") != 0)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, c->method);
    if (c->body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) c->body_len);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, (const char *) c->body);
    }
    if (c->resolve &&
        (!(c->share = curl_share_init()) ||
         curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK)) {
        curl_easy_cleanup(h);
        return -1;
    }
    if (c->resolve) {
        /* The addresses the engine found, in a DNS cache of the transfer's own. */
        curl_easy_setopt(h, CURLOPT_SHARE, c->share);
        curl_easy_setopt(h, CURLOPT_RESOLVE, c->resolve);
    }
    curl_easy_setopt(h, CURLOPT_RESOLVER_START_FUNCTION, refuse_lookup);
    curl_easy_setopt(h, CURLOPT_RESOLVER_START_DATA, c);
    if (curl_multi_add_handle(e->multi, h) != CURLM_OK) {
        curl_easy_cleanup(h);
        return -1;
    }
    c->easy = h;
    return 0;
}

/* ---- the reply, on the loop thread ----------------------------------------------------- */

static cJSON *
failure_frame(const struct egress_call *c)
{
    char msg[512];
    if (c->too_large || c->code == CURLE_FILESIZE_EXCEEDED) {
        snprintf(msg, sizeof(msg), "the response to %s %s exceeds egress_max_bytes %llu", c->method,
                 c->url, (unsigned long long) c->limits.max_bytes);
        return egress_error_frame("too_large", msg);
    }
    if (c->over_held) {
        snprintf(msg, sizeof(msg),
                 "%s %s: the responses pyfenced holds for all egress requests under way would "
                 "exceed its daemon-wide limit, egress_max_bytes_held %llu bytes; try again later",
                 c->method, c->url, (unsigned long long) c->e->max_held);
        return egress_error_frame("connection", msg);
    }
    if (c->too_many_headers) {
        snprintf(msg, sizeof(msg), "the response to %s %s has more than %d header lines", c->method,
                 c->url, EGRESS_MAX_RESPONSE_HEADERS);
        return egress_error_frame("too_large", msg);
    }
    if (c->resolver_refused) {
        snprintf(msg, sizeof(msg),
                 "%s %s: libcurl wanted to look up a host name pyfenced had not checked; refused",
                 c->method, c->url);
        return egress_error_frame("refused", msg);
    }
    if (c->refused_address[0]) {
        snprintf(msg, sizeof(msg),
                 "%s resolves to %s, which is not a public address; an egress rule must name an "
                 "IP address to reach a private or local one",
                 c->url, c->refused_address);
        return egress_error_frame("refused", msg);
    }
    snprintf(msg, sizeof(msg), "%s %s: %s", c->method, c->url,
             c->curl_msg[0] ? c->curl_msg : curl_easy_strerror(c->code));
    return egress_error_frame(c->code == CURLE_OPERATION_TIMEDOUT ? "timeout" : "connection", msg);
}

static cJSON *
response_frame(struct egress_call *c)
{
    size_t cap = 4 * ((c->resp_len + 2) / 3) + 1;
    _cleanup_free_ unsigned char *b64 = malloc(cap);
    if (!b64)
        return NULL;
    EVP_EncodeBlock(b64, c->resp_body ? c->resp_body : (const unsigned char *) "",
                    (int) c->resp_len);
    /* Not held beside the frame's copy of b64: a response is held at most about 3.3 times
     * (its buffer, grown by doubling, beside b64), then 2.7 times (b64 and the frame's copy). */
    free(c->resp_body);
    c->resp_body = NULL;
    c->resp_cap = 0;
    cJSON *f = cJSON_CreateObject();
    cJSON *reply = cJSON_CreateObject();
    cJSON *headers = headers_object(c);
    if (!f || !reply || !headers || !cJSON_AddStringToObject(f, "op", "egress") ||
        !cJSON_AddNumberToObject(reply, "status", (double) c->status) ||
        !cJSON_AddStringToObject(reply, "body", (const char *) b64)) {
        cJSON_Delete(f);
        cJSON_Delete(reply);
        cJSON_Delete(headers);
        return NULL;
    }
    cJSON_AddItemToObject(reply, "headers", headers);
    cJSON_AddItemToObject(f, "reply", reply);
    return f;
}

/* The transfer is over: its frame goes to the call's owner, and the call is freed. */
static void
call_finish(struct egress_call *c, CURLcode code)
{
    c->code = code;
    curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &c->status);
    egress_done_fn done = c->done;
    void *ctx = c->ctx;
    cJSON *frame = code == CURLE_OK ? response_frame(c) : failure_frame(c);
    egress_call_free(c);
    done(ctx, frame);
}

/* Every transfer libcurl has finished, one at a time: a done callback may abandon others. */
static void
collect_finished(struct egress *e)
{
    CURLMsg *m;
    int left;
    /* (A done callback that stopped pyfenced closed the engine: nothing is left to read.) */
    while (!e->closing && (m = curl_multi_info_read(e->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        char *c = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &c);
        if (c)
            call_finish((struct egress_call *) c, m->data.result);
    }
}

static void
drive(struct egress *e, curl_socket_t fd, int flags)
{
    int running;
    if (e->closing)
        return;
    curl_multi_socket_action(e->multi, fd, flags, &running);
    collect_finished(e);
}

static void
on_timer(uv_timer_t *t)
{
    drive(t->data, CURL_SOCKET_TIMEOUT, 0);
}

/* CURLMOPT_TIMERFUNCTION: -1 stops the timer; 0 means as soon as possible, which must not be
 * from within this callback. */
static int
on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
    struct egress *e = userp;
    (void) multi;
    if (timeout_ms < 0)
        uv_timer_stop(&e->timer);
    else
        uv_timer_start(&e->timer, on_timer, (uint64_t) timeout_ms, 0);
    return 0;
}

static void
on_poll(uv_poll_t *h, int status, int events)
{
    struct egress_socket *sock = h->data;
    int flags = 0;
    if (status < 0)
        flags = CURL_CSELECT_ERR;
    if (events & UV_READABLE)
        flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
        flags |= CURL_CSELECT_OUT;
    drive(sock->e, sock->fd, flags);
}

static void
on_socket_closed(uv_handle_t *h)
{
    free(h->data);
}

/* CURLMOPT_SOCKETFUNCTION: what libcurl wants to hear about fd, or that it is done with it. */
static int
on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    struct egress *e = userp;
    struct egress_socket *sock = socketp;
    (void) easy;
    if (what == CURL_POLL_REMOVE) {
        if (sock) {
            uv_poll_stop(&sock->poll);
            uv_close((uv_handle_t *) &sock->poll, on_socket_closed);
            curl_multi_assign(e->multi, fd, NULL);
        }
        return 0;
    }
    if (!sock) {
        sock = calloc(1, sizeof(*sock));
        if (!sock)
            return -1;
        if (uv_poll_init_socket(e->loop, &sock->poll, fd) < 0) {
            free(sock);
            return -1;
        }
        sock->poll.data = sock;
        sock->e = e;
        sock->fd = fd;
        curl_multi_assign(e->multi, fd, sock);
    }
    int events = (what & CURL_POLL_IN ? UV_READABLE : 0) | (what & CURL_POLL_OUT ? UV_WRITABLE : 0);
    return uv_poll_start(&sock->poll, events, on_poll) < 0 ? -1 : 0;
}

struct egress *
egress_new(uv_loop_t *loop, uint64_t max_held, unsigned max_lookups, struct pf_error **err)
{
    struct egress *e = calloc(1, sizeof(*e));
    if (!e || !(e->multi = curl_multi_init())) {
        free(e);
        return pf_error_set(err, PF_E_INTERNAL, "egress: out of memory"), NULL;
    }
    if (!(e->lookups = egress_lookups_new(loop, max_lookups, err))) {
        curl_multi_cleanup(e->multi);
        free(e);
        return NULL;
    }
    e->loop = loop;
    e->max_held = max_held;
    uv_timer_init(loop, &e->timer);
    e->timer.data = e;
    curl_multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
    curl_multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
    curl_multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
    curl_multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
    /* No HTTP/2 multiplexing: requests, maybe of different users, never share a connection. */
    curl_multi_setopt(e->multi, CURLMOPT_PIPELINING, CURLPIPE_NOTHING);
    return e;
}

static void
on_engine_closed(uv_handle_t *h)
{
    free(h->data);
}

void
egress_close(struct egress *e)
{
    if (!e || e->closing)
        return;
    e->closing = true;
    while (e->calls) {
        struct egress_call *c = e->calls;
        egress_done_fn done = c->done;
        void *ctx = c->ctx;
        egress_call_free(c);
        done(ctx, egress_error_frame("connection", "pyfenced is stopping"));
    }
    curl_multi_cleanup(e->multi);
    e->multi = NULL;
    egress_lookups_close(e->lookups); /* none left: each call cancelled its own */
    e->lookups = NULL;
    uv_close((uv_handle_t *) &e->timer, on_engine_closed);
}

uint64_t
egress_held_bytes(const struct egress *e)
{
    return e->held;
}
