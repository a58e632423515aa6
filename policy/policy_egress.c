#include "policy_egress.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "msg.h"
#include "pf_cleanup.h"
#include "pf_quote.h"
#include "profile.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(CURLU *, curl_url_cleanup)
#define _cleanup_curlu_ _cleanup_(curl_url_cleanupp)
/* A string libcurl allocated (curl_url_get). */
DEFINE_TRIVIAL_CLEANUP_FUNC(char *, curl_free)
#define _cleanup_curl_free_ _cleanup_(curl_freep)

#define METHOD_NAMES "GET, HEAD, POST, PUT, PATCH, DELETE"

static const struct {
    const char *name;
    unsigned bit;
} methods[] = {
        {"GET", POLICY_EGRESS_GET},     {"HEAD", POLICY_EGRESS_HEAD},
        {"POST", POLICY_EGRESS_POST},   {"PUT", POLICY_EGRESS_PUT},
        {"PATCH", POLICY_EGRESS_PATCH}, {"DELETE", POLICY_EGRESS_DELETE},
};

static const struct msg_field rule_fields[] = {
        {"url", MSG_T_STRING, true, 1, POLICY_EGRESS_MAX_URL},
        {"methods", MSG_T_STRING_ARRAY, false, 0, POLICY_MAX_LIST},
};

unsigned
policy_egress_method_bit(const char *name)
{
    for (size_t i = 0; name && i < PF_ELEMENTSOF(methods); i++)
        if (strcmp(methods[i].name, name) == 0)
            return methods[i].bit;
    return 0;
}

/* What a URL comes to once libcurl has parsed it: the parts a rule and a request are compared
 * on, normalised the same way for both. */
struct url_parts {
    char *scheme;
    char *host; /* lowercase; IPv6 in its canonical form, without brackets */
    bool host_is_ip;
    unsigned port;
    char *path; /* dot segments removed (libcurl), percent-encodings in upper case */
};

static void
url_parts_finish(struct url_parts *u)
{
    free(u->scheme);
    free(u->host);
    free(u->path);
    *u = (struct url_parts){0};
}

static int
hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* A server decodes and normalises a path its own way. Refused here is what could let its idea
 * of the path leave the rule's prefix although ours does not: an encoded dot, slash or
 * backslash ("/v1/%2e%2e/admin"), a backslash, a stray '%', and a segment that is a dot
 * segment before its ';' parameters ("/v1/..;/admin", which some servers read as ".."). The
 * hex digits of the path's percent-encodings are put in upper case (in place), so that a rule
 * and a request compare equal however each writes them. */
static int
check_path(char *path, int code, struct pf_error **err)
{
    for (char *c = path; *c; c++) {
        if (*c == '\\')
            return pf_error_set(err, code,
                                "path has a backslash, which a server could read as a slash");
        if (*c != '%')
            continue;
        int hi = hex_value(c[1]), lo = hi < 0 ? -1 : hex_value(c[2]);
        if (hi < 0 || lo < 0)
            return pf_error_set(err, code, "path has a '%%' not followed by two hex digits");
        int decoded = hi * 16 + lo;
        if (decoded == '.' || decoded == '/' || decoded == '\\')
            return pf_error_set(err, code,
                                "path has a percent-encoded dot, slash or backslash (%%2E, %%2F, "
                                "%%5C), which a server could decode past the rule's prefix");
        c[1] = "0123456789ABCDEF"[hi];
        c[2] = "0123456789ABCDEF"[lo];
        c += 2;
    }
    for (const char *seg = path; seg; seg = strchr(seg + 1, '/')) {
        size_t n = strcspn(seg + 1, "/;");
        if ((n == 1 || n == 2) && strncmp(seg + 1, "..", n) == 0)
            return pf_error_set(err, code,
                                "path has a segment starting '%.*s', which a server could read "
                                "as a dot segment",
                                (int) n + 1, seg + 1);
    }
    return 0;
}

/* The host as libcurl has it, normalised: an IPv6 literal loses its brackets and takes its
 * canonical form; a name must be ASCII (libcurl would convert an internationalised one) and is
 * put in lower case; an IPv4 literal libcurl has already normalised ("127.1" is "127.0.0.1"). */
static int
normalise_host(const char *host, int code, char **ret, bool *ret_is_ip, struct pf_error **err)
{
    char buf[INET6_ADDRSTRLEN];
    size_t len = strlen(host);
    if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
        struct in6_addr a6;
        if (len - 2 >= sizeof(buf))
            return pf_error_set(err, code, "host is not an IPv6 address");
        memcpy(buf, host + 1, len - 2);
        buf[len - 2] = '\0';
        if (inet_pton(AF_INET6, buf, &a6) != 1 || !inet_ntop(AF_INET6, &a6, buf, sizeof(buf)))
            return pf_error_set(err, code, "host '%s' is not an IPv6 address", buf);
        *ret_is_ip = true;
        *ret = strdup(buf);
    } else {
        if (len == 0)
            return pf_error_set(err, code, "the URL has no host");
        for (size_t i = 0; i < len; i++)
            if ((unsigned char) host[i] >= 0x80)
                return pf_error_set(err, code,
                                    "host '%.*s' is not ASCII (write an internationalised name "
                                    "in its xn-- form)",
                                    pf_quote_len(host), host);
        struct in_addr a4;
        *ret_is_ip = inet_pton(AF_INET, host, &a4) == 1;
        *ret = strdup(host);
        for (char *c = *ret; c && *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char) (*c - 'A' + 'a');
    }
    return *ret ? 0 : pf_error_set(err, PF_E_INTERNAL, "out of memory");
}

/* True when the parsed URL has the part. */
static bool
has_part(CURLU *h, CURLUPart part)
{
    _cleanup_curl_free_ char *v = NULL;
    return curl_url_get(h, part, &v, 0) == CURLUE_OK;
}

static int
get_part(CURLU *h, CURLUPart part, unsigned flags, char **ret, struct pf_error **err)
{
    _cleanup_curl_free_ char *v = NULL;
    CURLUcode rc = curl_url_get(h, part, &v, flags);
    if (rc == CURLUE_OUT_OF_MEMORY)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    if (rc != CURLUE_OK)
        return pf_error_set(err, PF_E_INTERNAL, "libcurl gave no part %d of a URL it parsed: %s",
                            (int) part, curl_url_strerror(rc));
    *ret = strdup(v);
    return *ret ? 0 : pf_error_set(err, PF_E_INTERNAL, "out of memory");
}

/* The scheme must be followed by "://" and the host: libcurl also takes "http:/h" and
 * "http:///h" (as host h), which would read as something else. */
static bool
written_with_authority(const char *url, const char *scheme)
{
    size_t n = strlen(scheme);
    return strncasecmp(url, scheme, n) == 0 && strncmp(url + n, "://", 3) == 0 && url[n + 3] != '/';
}

/* Parses url (a rule's when is_rule, else a request's) into *ret. Messages name the problem
 * alone; the caller says which URL it was. */
static int
url_split(const char *url, bool is_rule, int code, struct url_parts *ret, struct pf_error **err)
{
    size_t len = strlen(url);
    if (len > POLICY_EGRESS_MAX_URL)
        return pf_error_set(err, code, "URL of %zu bytes exceeds maximum %d", len,
                            POLICY_EGRESS_MAX_URL);
    _cleanup_curlu_ CURLU *h = curl_url();
    if (!h)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    /* Any scheme, so that ftp:// is named as a scheme rather than as an unparsable URL. */
    CURLUcode rc = curl_url_set(h, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME);
    if (rc == CURLUE_OUT_OF_MEMORY)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    if (rc != CURLUE_OK)
        return pf_error_set(err, code, "'%.*s' is not a valid URL (%s)", pf_quote_len(url), url,
                            curl_url_strerror(rc));

    struct url_parts u = {0};
    _cleanup_curl_free_ char *host = NULL, *port = NULL;
    if (get_part(h, CURLUPART_SCHEME, 0, &u.scheme, err) < 0)
        goto fail;
    if (strcmp(u.scheme, "http") != 0 && strcmp(u.scheme, "https") != 0) {
        pf_error_set(err, code, "scheme %.*s is not allowed (http or https)",
                     pf_quote_len(u.scheme), u.scheme);
        goto fail;
    }
    if (!written_with_authority(url, u.scheme)) {
        pf_error_set(err, code, "must be written %s://host[:port][/path]", u.scheme);
        goto fail;
    }
    if (has_part(h, CURLUPART_USER) || has_part(h, CURLUPART_PASSWORD) ||
        has_part(h, CURLUPART_OPTIONS)) {
        pf_error_set(err, code, "a user name or password in the URL is not allowed");
        goto fail;
    }
    if (is_rule && has_part(h, CURLUPART_QUERY)) {
        pf_error_set(err, code,
                     "a query is not allowed (a rule gives a path prefix; a request's query is "
                     "not matched)");
        goto fail;
    }
    /* libcurl drops an empty fragment ("x#"): look at the text, where '#' can only start one. */
    if (strchr(url, '#')) {
        pf_error_set(err, code, "a fragment ('#') is not allowed");
        goto fail;
    }
    if (has_part(h, CURLUPART_ZONEID)) {
        pf_error_set(err, code, "an IPv6 zone id is not allowed");
        goto fail;
    }
    rc = curl_url_get(h, CURLUPART_HOST, &host, 0);
    if (rc == CURLUE_OK)
        rc = curl_url_get(h, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
    if (rc != CURLUE_OK) {
        pf_error_set(err, rc == CURLUE_OUT_OF_MEMORY ? PF_E_INTERNAL : code, "%s",
                     curl_url_strerror(rc));
        goto fail;
    }
    if (normalise_host(host, code, &u.host, &u.host_is_ip, err) < 0)
        goto fail;
    unsigned long p = strtoul(port, NULL, 10);
    if (p == 0 || p > 65535) {
        pf_error_set(err, code, "port %lu is not allowed (1 to 65535)", p);
        goto fail;
    }
    u.port = (unsigned) p;
    if (get_part(h, CURLUPART_PATH, 0, &u.path, err) < 0 || check_path(u.path, code, err) < 0)
        goto fail;
    *ret = u;
    return 0;
fail:
    url_parts_finish(&u);
    return -1;
}

bool
policy_egress_is_localhost_name(const char *host)
{
    size_t len = strlen(host);
    if (len && host[len - 1] == '.')
        len--;
    static const char name[] = "localhost";
    size_t n = sizeof(name) - 1;
    if (len < n || strncasecmp(host + len - n, name, n) != 0)
        return false;
    return len == n || host[len - n - 1] == '.';
}

static void
rule_finish(struct policy_egress_rule *r)
{
    free(r->url);
    free(r->scheme);
    free(r->host);
    free(r->path);
    *r = (struct policy_egress_rule){0};
}

static int
read_methods(const cJSON *arr, const char *where, unsigned *ret, struct pf_error **err)
{
    if (!arr) {
        *ret = POLICY_EGRESS_DEFAULT_METHODS;
        return 0;
    }
    if (cJSON_GetArraySize(arr) == 0)
        return pf_error_set(err, PF_E_CONFIG,
                            "%s.methods: must name at least one method (" METHOD_NAMES ")", where);
    unsigned bits = 0;
    size_t i = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, arr) {
        const char *name = item->valuestring;
        unsigned bit = policy_egress_method_bit(name);
        if (!bit)
            return pf_error_set(err, PF_E_CONFIG,
                                "%s.methods[%zu]: %.*s is not a method egress allows "
                                "(" METHOD_NAMES ")",
                                where, i, pf_quote_len(name), name);
        if (bits & bit)
            return pf_error_set(err, PF_E_CONFIG, "%s.methods[%zu]: %s is listed twice", where, i,
                                name);
        bits |= bit;
        i++;
    }
    *ret = bits;
    return 0;
}

static int
parse_rule(const cJSON *obj, const char *where, struct policy_egress_rule *ret,
           struct pf_error **err)
{
    if (msg_check_fields(obj, rule_fields, PF_ELEMENTSOF(rule_fields), where, err) < 0)
        return -1;
    struct policy_egress_rule r = {0};
    if (read_methods(cJSON_GetObjectItemCaseSensitive(obj, "methods"), where, &r.methods, err) < 0)
        return -1;
    const char *url = msg_get_string(obj, "url", "");
    struct url_parts u = {0};
    if (url_split(url, true, PF_E_CONFIG, &u, err) < 0)
        return pf_error_prefix(err, "%s.url", where);
    r.url = strdup(url);
    r.scheme = u.scheme;
    r.host = u.host;
    r.host_is_ip = u.host_is_ip;
    r.port = u.port;
    r.path = u.path;
    if (!r.url) {
        rule_finish(&r);
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    }
    *ret = r;
    return 0;
}

int
policy_egress_parse(const cJSON *array, const char *origin, struct policy_egress *ret,
                    struct pf_error **err)
{
    if (!array) {
        *ret = (struct policy_egress){0};
        return 0;
    }
    if (!cJSON_IsArray(array))
        return pf_error_set(err, PF_E_CONFIG, "%s: egress: must be an array", origin);
    size_t n = (size_t) cJSON_GetArraySize(array);
    if (n > POLICY_MAX_LIST)
        return pf_error_set(err, PF_E_CONFIG, "%s: egress: %zu rules exceed maximum %d", origin, n,
                            POLICY_MAX_LIST);
    struct policy_egress e = {n ? calloc(n, sizeof(*e.rules)) : NULL, 0};
    if (n && !e.rules)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    const cJSON *item;
    cJSON_ArrayForEach(item, array) {
        char where[512];
        snprintf(where, sizeof(where), "%s: egress[%zu]", origin, e.n);
        if (parse_rule(item, where, &e.rules[e.n], err) < 0) {
            policy_egress_finish(&e);
            return -1;
        }
        e.n++;
    }
    *ret = e;
    return 0;
}

int
policy_egress_check_reachable(const struct policy_egress *e, const char *origin,
                              struct pf_error **err)
{
    for (size_t i = 0; e && i < e->n; i++) {
        const struct policy_egress_rule *r = &e->rules[i];
        if (!r->host_is_ip && policy_egress_is_localhost_name(r->host))
            return pf_error_set(err, PF_E_CONFIG,
                                "%s: egress[%zu].url: %.*s names host '%s', a loopback name (RFC "
                                "6761), which is not a public address: pyfenced would refuse "
                                "every request this rule allows; an egress rule must name an IP "
                                "address to reach a private or local one (http://127.0.0.1:8080/)",
                                origin, i, pf_quote_len(r->url), r->url, r->host);
    }
    return 0;
}

void
policy_egress_finish(struct policy_egress *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n; i++)
        rule_finish(&e->rules[i]);
    free(e->rules);
    *e = (struct policy_egress){0};
}

bool
policy_egress_equal(const struct policy_egress *a, const struct policy_egress *b)
{
    if (a->n != b->n)
        return false;
    /* The other fields of a rule are parsed from its URL. */
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->rules[i].url, b->rules[i].url) != 0 ||
            a->rules[i].methods != b->rules[i].methods)
            return false;
    return true;
}

cJSON *
policy_egress_to_json(const struct policy_egress *e)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && e && i < e->n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON *m = NULL;
        bool ok = cJSON_AddStringToObject(o, "url", e->rules[i].url) &&
                  (m = cJSON_AddArrayToObject(o, "methods"));
        for (size_t j = 0; ok && j < PF_ELEMENTSOF(methods); j++)
            if (e->rules[i].methods & methods[j].bit)
                ok = cJSON_AddItemToArray(m, cJSON_CreateString(methods[j].name));
        if (!ok) {
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}

/* The rule's path is a prefix of the request's that ends at a segment boundary: "/v1" allows
 * "/v1" and "/v1/x", not "/v10"; "/v1/" allows "/v1/x", not "/v1". */
static bool
path_allowed(const char *rule, const char *path)
{
    size_t n = strlen(rule);
    return strncmp(rule, path, n) == 0 && (rule[n - 1] == '/' || path[n] == '\0' || path[n] == '/');
}

static bool
rule_allows(const struct policy_egress_rule *r, unsigned method, const struct url_parts *u)
{
    return (r->methods & method) && r->port == u->port && strcmp(r->scheme, u->scheme) == 0 &&
           strcmp(r->host, u->host) == 0 && path_allowed(r->path, u->path);
}

const struct policy_egress_rule *
policy_egress_match(const struct policy_egress *e, const char *method, const char *url,
                    struct pf_error **err)
{
    if (!e || e->n == 0) {
        pf_error_set(err, PF_E_PERMISSION,
                     "this profile allows no network egress (its egress list is empty)");
        return NULL;
    }
    unsigned bit = policy_egress_method_bit(method);
    if (!bit) {
        pf_error_set(err, PF_E_PERMISSION, "%.*s is not a method egress allows (" METHOD_NAMES ")",
                     pf_quote_len(method), method ? method : "");
        return NULL;
    }
    struct url_parts u = {0};
    if (url_split(url ? url : "", false, PF_E_PERMISSION, &u, err) < 0) {
        pf_error_prefix(err, "egress URL");
        return NULL;
    }
    const struct policy_egress_rule *found = NULL;
    for (size_t i = 0; !found && i < e->n; i++)
        if (rule_allows(&e->rules[i], bit, &u))
            found = &e->rules[i];
    if (!found) {
        /* The URL as it was checked, without its query (which may carry a secret). */
        bool v6 = strchr(u.host, ':') != NULL;
        bool default_port = u.port == (strcmp(u.scheme, "https") == 0 ? 443u : 80u);
        char port[16] = "";
        if (!default_port)
            snprintf(port, sizeof(port), ":%u", u.port);
        char shown[POLICY_EGRESS_MAX_URL + 64];
        snprintf(shown, sizeof(shown), "%s://%s%s%s%s%s", u.scheme, v6 ? "[" : "", u.host,
                 v6 ? "]" : "", port, u.path);
        pf_error_set(err, PF_E_PERMISSION, "%s %.*s matches no egress rule of this profile", method,
                     pf_quote_len(shown), shown);
    }
    url_parts_finish(&u);
    return found;
}
