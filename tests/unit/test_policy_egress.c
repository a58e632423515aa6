/* Egress rules: every rule of the format is refused with its exact message, a valid rule is
 * read with its defaults, and matching holds at each of its edges (method, scheme, host, port,
 * path prefix at a segment boundary, dot segments, encoded separators, credentials). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "pf_cleanup.h"
#include "policy_egress.h"
#include "profile.h"

#define METHODS "(GET, HEAD, POST, PUT, PATCH, DELETE)"

static struct policy_profile *
parse_ok(const char *text)
{
    struct policy_profile *p = NULL;
    struct pf_error *err = NULL;
    if (policy_profile_parse(text, strlen(text), "profiles/x.json", "x", &p, &err) < 0)
        fail_msg("unexpected error: %s", err->msg);
    return p;
}

/* A profile whose egress list is `egress` is refused with exactly `message`. */
static void
expect_refused(const char *egress, const char *message)
{
    char text[16384];
    snprintf(text, sizeof(text), "{\"name\": \"x\", \"egress\": %s}", egress);
    struct policy_profile *p = NULL;
    struct pf_error *err = NULL;
    assert_int_equal(policy_profile_parse(text, strlen(text), "profiles/x.json", "x", &p, &err),
                     -1);
    assert_null(p);
    assert_non_null(err);
    if (strcmp(err->msg, message) != 0)
        fail_msg("for %s\n  got:  '%s'\n  want: '%s'", egress, err->msg, message);
    pf_error_free(err);
}

static void
test_rules_parse_with_defaults(void **state)
{
    (void) state;
    struct policy_profile *p = parse_ok(
            "{\"name\": \"x\", \"egress\": ["
            "{\"url\": \"https://API.Example.COM/v1/\", \"methods\": [\"POST\", \"GET\"]},"
            "{\"url\": \"http://[2001:DB8:0::1]:8080\"},"
            "{\"url\": \"http://127.0.0.1/data\", \"methods\": [\"DELETE\", \"PUT\", \"PATCH\", "
            "\"HEAD\"]},"
            "{\"url\": \"HTTP://example.org:80/a/b\"}]}");
    assert_int_equal(p->egress.n, 4);

    const struct policy_egress_rule *r = &p->egress.rules[0];
    assert_string_equal(r->url, "https://API.Example.COM/v1/");
    assert_string_equal(r->scheme, "https");
    assert_string_equal(r->host, "api.example.com");
    assert_false(r->host_is_ip);
    assert_int_equal(r->port, 443);
    assert_string_equal(r->path, "/v1/");
    assert_int_equal(r->methods, POLICY_EGRESS_GET | POLICY_EGRESS_POST);

    r = &p->egress.rules[1];
    assert_string_equal(r->scheme, "http");
    assert_string_equal(r->host, "2001:db8::1"); /* no brackets, canonical form */
    assert_true(r->host_is_ip);
    assert_int_equal(r->port, 8080);
    assert_string_equal(r->path, "/");
    assert_int_equal(r->methods, POLICY_EGRESS_GET | POLICY_EGRESS_HEAD);

    r = &p->egress.rules[2];
    assert_string_equal(r->host, "127.0.0.1");
    assert_true(r->host_is_ip);
    assert_int_equal(r->port, 80);
    assert_string_equal(r->path, "/data");
    assert_int_equal(r->methods, POLICY_EGRESS_DELETE | POLICY_EGRESS_PUT | POLICY_EGRESS_PATCH |
                                         POLICY_EGRESS_HEAD);

    r = &p->egress.rules[3];
    assert_string_equal(r->scheme, "http");
    assert_string_equal(r->host, "example.org");
    assert_int_equal(r->port, 80);
    assert_string_equal(r->path, "/a/b");

    /* --check-policy shows each rule as written with its effective methods. */
    cJSON *j = policy_profile_to_json(p);
    char *text = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "egress"));
    assert_string_equal(
            text, "[{\"url\":\"https://API.Example.COM/v1/\",\"methods\":[\"GET\",\"POST\"]},"
                  "{\"url\":\"http://[2001:DB8:0::1]:8080\",\"methods\":[\"GET\",\"HEAD\"]},"
                  "{\"url\":\"http://127.0.0.1/data\",\"methods\":[\"HEAD\",\"PUT\",\"PATCH\","
                  "\"DELETE\"]},"
                  "{\"url\":\"HTTP://example.org:80/a/b\",\"methods\":[\"GET\",\"HEAD\"]}]");
    free(text);
    cJSON_Delete(j);
    policy_profile_free(p);

    /* No egress field, or an empty list: no rules, shown as []. */
    p = parse_ok("{\"name\": \"x\"}");
    assert_int_equal(p->egress.n, 0);
    j = policy_profile_to_json(p);
    const cJSON *e = cJSON_GetObjectItem(j, "egress");
    assert_true(cJSON_IsArray(e) && cJSON_GetArraySize(e) == 0);
    cJSON_Delete(j);
    policy_profile_free(p);
    p = parse_ok("{\"name\": \"x\", \"egress\": []}");
    assert_int_equal(p->egress.n, 0);
    policy_profile_free(p);
}

static void
test_rule_refusals(void **state)
{
    (void) state;
    static const struct {
        const char *egress, *message;
    } cases[] = {
            /* the rule's shape (proto/msg.h's schema code) */
            {"[\"https://a.example/\"]", "profiles/x.json: egress[0]: expected an object, got a "
                                         "string"},
            {"[{\"methods\": [\"GET\"]}]", "profiles/x.json: egress[0]: field 'url' is missing"},
            {"[{\"url\": \"https://a.example/\", \"host\": \"a.example\"}]",
             "profiles/x.json: egress[0]: field 'host' is not allowed"},
            {"[{\"url\": 1}]", "profiles/x.json: egress[0]: field 'url': expected a string, got a "
                               "number"},
            {"[{\"url\": \"https://a.example/\", \"methods\": \"GET\"}]",
             "profiles/x.json: egress[0]: field 'methods': expected an array, got a string"},
            {"[{\"url\": \"https://a.example/\", \"methods\": [\"GET\", 1]}]",
             "profiles/x.json: egress[0]: field 'methods': item 1 is a number, expected a string"},
            /* methods */
            {"[{\"url\": \"https://a.example/\", \"methods\": []}]",
             "profiles/x.json: egress[0].methods: must name at least one method " METHODS},
            {"[{\"url\": \"https://a.example/\", \"methods\": [\"GET\", \"HEAD\", \"CONNECT\"]}]",
             "profiles/x.json: egress[0].methods[2]: CONNECT is not a method egress "
             "allows " METHODS},
            {"[{\"url\": \"https://a.example/\", \"methods\": [\"get\"]}]",
             "profiles/x.json: egress[0].methods[0]: get is not a method egress allows " METHODS},
            {"[{\"url\": \"https://a.example/\", \"methods\": [\"GET\", \"POST\", \"GET\"]}]",
             "profiles/x.json: egress[0].methods[2]: GET is listed twice"},
            /* the URL */
            {"[{\"url\": \"https://a.example/\"}, {\"url\": \"ftp://files.example.com/\"}]",
             "profiles/x.json: egress[1].url: scheme ftp is not allowed (http or https)"},
            {"[{\"url\": \"https://user:secret@a.example/\"}]",
             "profiles/x.json: egress[0].url: a user name or password in the URL is not allowed"},
            {"[{\"url\": \"https://user@a.example/\"}]",
             "profiles/x.json: egress[0].url: a user name or password in the URL is not allowed"},
            {"[{\"url\": \"https://a.example/v1?key=1\"}]",
             "profiles/x.json: egress[0].url: a query is not allowed (a rule gives a path prefix; "
             "a request's query is not matched)"},
            {"[{\"url\": \"https://a.example/v1?\"}]",
             "profiles/x.json: egress[0].url: a query is not allowed (a rule gives a path prefix; "
             "a request's query is not matched)"},
            {"[{\"url\": \"https://a.example/v1#top\"}]",
             "profiles/x.json: egress[0].url: a fragment ('#') is not allowed"},
            {"[{\"url\": \"https://a.example/v1#\"}]",
             "profiles/x.json: egress[0].url: a fragment ('#') is not allowed"},
            {"[{\"url\": \"https:///a.example/v1\"}]",
             "profiles/x.json: egress[0].url: must be written https://host[:port][/path]"},
            {"[{\"url\": \"http:/a.example/v1\"}]",
             "profiles/x.json: egress[0].url: must be written http://host[:port][/path]"},
            {"[{\"url\": \"https://a.example:0/\"}]",
             "profiles/x.json: egress[0].url: port 0 is not allowed (1 to 65535)"},
            {"[{\"url\": \"http://[fe80::1%25eth0]/\"}]",
             "profiles/x.json: egress[0].url: an IPv6 zone id is not allowed"},
            {"[{\"url\": \"https://\xc3\xa9t\xc3\xa9.example/\"}]",
             "profiles/x.json: egress[0].url: host '\xc3\xa9t\xc3\xa9.example' is not ASCII (write "
             "an internationalised name in its xn-- form)"},
            {"[{\"url\": \"https://a.example/v1/%2E%2E/\"}]",
             "profiles/x.json: egress[0].url: path has a percent-encoded dot, slash or backslash "
             "(%2E, %2F, %5C), which a server could decode past the rule's prefix"},
            {"[{\"url\": \"https://a.example/v1\\\\\"}]",
             "profiles/x.json: egress[0].url: path has a backslash, which a server could read as "
             "a slash"},
            {"[{\"url\": \"https://a.example/v1%zz\"}]",
             "profiles/x.json: egress[0].url: path has a '%' not followed by two hex digits"},
            /* never allowed by pyfenced: loopback names (RFC 6761), in any case, final dot */
            {"[{\"url\": \"https://a.example/\"}, {\"url\": \"http://localhost:8080/\"}]",
             "profiles/x.json: egress[1].url: http://localhost:8080/ names host 'localhost', a "
             "loopback name (RFC 6761), which is not a public address: pyfenced would refuse every "
             "request this rule allows; an egress rule must name an IP address to reach a private "
             "or local one (http://127.0.0.1:8080/)"},
            {"[{\"url\": \"http://api.localhost/\"}]",
             "profiles/x.json: egress[0].url: http://api.localhost/ names host 'api.localhost', a "
             "loopback name (RFC 6761), which is not a public address: pyfenced would refuse every "
             "request this rule allows; an egress rule must name an IP address to reach a private "
             "or local one (http://127.0.0.1:8080/)"},
            {"[{\"url\": \"http://DB.LocalHost./v1\"}]",
             "profiles/x.json: egress[0].url: http://DB.LocalHost./v1 names host 'db.localhost.', "
             "a loopback name (RFC 6761), which is not a public address: pyfenced would refuse "
             "every "
             "request this rule allows; an egress rule must name an IP address to reach a private "
             "or local one (http://127.0.0.1:8080/)"},
    };
    for (size_t i = 0; i < PF_ELEMENTSOF(cases); i++)
        expect_refused(cases[i].egress, cases[i].message);

    /* libcurl's own reason for a URL it cannot parse (its wording is libcurl's). */
    const char *text = "{\"name\": \"x\", \"egress\": [{\"url\": \"api.example.com/v1\"}]}";
    struct policy_profile *p = NULL;
    struct pf_error *err = NULL;
    assert_int_equal(policy_profile_parse(text, strlen(text), "profiles/x.json", "x", &p, &err),
                     -1);
    assert_non_null(strstr(err->msg, "profiles/x.json: egress[0].url: 'api.example.com/v1' is not "
                                     "a valid URL ("));
    err = pf_error_free(err);

    /* At most POLICY_MAX_LIST rules. */
    size_t n = POLICY_MAX_LIST + 1;
    char *many = malloc(n * 32 + 64);
    assert_non_null(many);
    strcpy(many, "{\"name\": \"x\", \"egress\": [");
    for (size_t i = 0; i < n; i++)
        strcat(many, i ? ", {\"url\": \"http://a/\"}" : "{\"url\": \"http://a/\"}");
    strcat(many, "]}");
    assert_int_equal(policy_profile_parse(many, strlen(many), "profiles/x.json", "x", &p, &err),
                     -1);
    assert_string_equal(err->msg, "profiles/x.json: egress: 257 rules exceed maximum 256");
    err = pf_error_free(err);
    free(many);
}

/* Only localhost and names under it are loopback by name: a name that merely contains it is
 * looked up like any other, and IP literals (even loopback) are connected to as written. */
static void
test_localhost_neighbours_load(void **state)
{
    (void) state;
    const char *text = "{\"name\": \"x\", \"egress\": [{\"url\": \"http://localhost.example/\"}, "
                       "{\"url\": \"http://mylocalhost/\"}, {\"url\": \"http://127.0.0.1:8080/\"}, "
                       "{\"url\": \"http://[::1]/\"}]}";
    struct policy_profile *p = NULL;
    struct pf_error *err = NULL;
    if (policy_profile_parse(text, strlen(text), "profiles/x.json", "x", &p, &err) < 0)
        fail_msg("unexpected error: %s", err->msg);
    assert_int_equal(p->egress.n, 4);
    policy_profile_free(p);
    assert_true(policy_egress_is_localhost_name("LOCALHOST"));
    assert_true(policy_egress_is_localhost_name("a.b.localhost."));
    assert_false(policy_egress_is_localhost_name("localhost.example"));
    assert_false(policy_egress_is_localhost_name("xlocalhost"));
}

static void
test_method_bit(void **state)
{
    (void) state;
    assert_int_equal(policy_egress_method_bit("GET"), POLICY_EGRESS_GET);
    assert_int_equal(policy_egress_method_bit("DELETE"), POLICY_EGRESS_DELETE);
    assert_int_equal(policy_egress_method_bit("get"), 0);
    assert_int_equal(policy_egress_method_bit("CONNECT"), 0);
    assert_int_equal(policy_egress_method_bit(""), 0);
    assert_int_equal(policy_egress_method_bit(NULL), 0);
}

static const char *const match_rules =
        "["
        /* 0 */ "{\"url\": \"https://api.example.com/v1\", \"methods\": [\"GET\", \"POST\"]},"
        /* 1 */ "{\"url\": \"https://api.example.com/v1/\", \"methods\": [\"DELETE\"]},"
        /* 2 */ "{\"url\": \"http://api.example.com:8080/\"},"
        /* 3 */ "{\"url\": \"https://[2001:db8::1]/\"},"
        /* 4 */ "{\"url\": \"http://10.0.0.1/\"},"
        /* 5 */ "{\"url\": \"https://api.example.com/caf%c3%a9\"},"
        /* 6 */ "{\"url\": \"https://api.example.com/v1\", \"methods\": [\"GET\", \"PUT\"]}"
        "]";

static int
setup_rules(void **state)
{
    struct policy_egress *e = calloc(1, sizeof(*e));
    cJSON *arr = cJSON_Parse(match_rules);
    struct pf_error *err = NULL;
    if (!e || !arr || policy_egress_parse(arr, "profiles/x.json", e, &err) < 0) {
        fprintf(stderr, "setup: %s\n", err ? err->msg : "out of memory");
        return -1;
    }
    cJSON_Delete(arr);
    *state = e;
    return 0;
}

static int
teardown_rules(void **state)
{
    policy_egress_finish(*state);
    free(*state);
    return 0;
}

/* METHOD URL is allowed by rule `want`, or refused (want < 0) with exactly `message`. */
static void
check(const struct policy_egress *e, const char *method, const char *url, int want,
      const char *message)
{
    struct pf_error *err = NULL;
    const struct policy_egress_rule *r = policy_egress_match(e, method, url, &err);
    if (want >= 0) {
        if (!r)
            fail_msg("%s %s: refused: %s", method, url, err->msg);
        if (r != &e->rules[want])
            fail_msg("%s %s: rule %td, expected %d", method, url, r - e->rules, want);
        assert_null(err);
        return;
    }
    if (r)
        fail_msg("%s %s: allowed by rule %td", method, url, r - e->rules);
    assert_non_null(err);
    assert_int_equal(err->code, PF_E_PERMISSION);
    if (strcmp(err->msg, message) != 0)
        fail_msg("%s %s\n  got:  '%s'\n  want: '%s'", method, url, err->msg, message);
    pf_error_free(err);
}

static void
test_match_allowed(void **state)
{
    const struct policy_egress *e = *state;
    check(e, "GET", "https://api.example.com/v1", 0, NULL);
    check(e, "HEAD", "http://api.example.com:8080/", 2, NULL);            /* default methods */
    check(e, "POST", "https://api.example.com/v1/items?page=2", 0, NULL); /* query not matched */
    check(e, "GET", "https://API.Example.COM/v1/x", 0, NULL);        /* host case-insensitive */
    check(e, "GET", "HTTPS://api.example.com:443/v1", 0, NULL);      /* explicit default port */
    check(e, "GET", "https://api.example.com/v1/./x/../y", 0, NULL); /* dots resolved, in /v1 */
    check(e, "GET", "https://[2001:DB8:0:0::1]/x", 3, NULL); /* IPv6 literal, any spelling */
    check(e, "GET", "http://10.1/", 4, NULL);                /* 10.1 is 10.0.0.1 */
    check(e, "GET", "https://api.example.com/caf%C3%A9/menu", 5, NULL); /* %-hex in any case */
}

static void
test_match_first_rule_wins(void **state)
{
    const struct policy_egress *e = *state;
    /* Rules 0 and 6 both allow GET /v1: the first is returned. PUT only by 6, DELETE only by
     * 1 (a later rule is tried when an earlier one does not allow the method). */
    check(e, "GET", "https://api.example.com/v1/x", 0, NULL);
    check(e, "PUT", "https://api.example.com/v1/x", 6, NULL);
    check(e, "DELETE", "https://api.example.com/v1/x", 1, NULL);
}

static void
test_match_refused(void **state)
{
    const struct policy_egress *e = *state;
    static const struct {
        const char *method, *url, *message;
    } cases[] = {
            /* wrong method */
            {"PATCH", "https://api.example.com/v1/x",
             "PATCH https://api.example.com/v1/x matches no egress rule of this profile"},
            {"POST", "http://api.example.com:8080/",
             "POST http://api.example.com:8080/ matches no egress rule of this profile"},
            {"CONNECT", "https://api.example.com/v1",
             "CONNECT is not a method egress allows " METHODS},
            {"get", "https://api.example.com/v1", "get is not a method egress allows " METHODS},
            /* wrong scheme, host, port */
            {"GET", "http://api.example.com/v1",
             "GET http://api.example.com/v1 matches no egress rule of this profile"},
            {"GET", "https://api.example.org/v1",
             "GET https://api.example.org/v1 matches no egress rule of this profile"},
            {"GET", "https://api.example.com:8443/v1",
             "GET https://api.example.com:8443/v1 matches no egress rule of this profile"},
            {"GET", "http://api.example.com/", /* port 80 by default, the rule says 8080 */
             "GET http://api.example.com/ matches no egress rule of this profile"},
            {"GET", "http://api.example.com:80/",
             "GET http://api.example.com/ matches no egress rule of this profile"},
            {"GET", "https://[2001:db8::2]/",
             "GET https://[2001:db8::2]/ matches no egress rule of this profile"},
            /* the path prefix ends at a segment boundary, both ways */
            {"GET", "https://api.example.com/v10",
             "GET https://api.example.com/v10 matches no egress rule of this profile"},
            {"GET", "https://api.example.com/v1.json",
             "GET https://api.example.com/v1.json matches no egress rule of this profile"},
            {"DELETE", "https://api.example.com/v1", /* rule 1 is "/v1/" */
             "DELETE https://api.example.com/v1 matches no egress rule of this profile"},
            {"GET", "https://api.example.com/", /* the path is shown, not the query */
             "GET https://api.example.com/ matches no egress rule of this profile"},
            {"GET", "https://api.example.com/?token=secret",
             "GET https://api.example.com/ matches no egress rule of this profile"},
            /* dot segments are resolved before matching */
            {"GET", "https://api.example.com/v1/../admin",
             "GET https://api.example.com/admin matches no egress rule of this profile"},
            {"GET", "https://api.example.com/v1/x/../../admin",
             "GET https://api.example.com/admin matches no egress rule of this profile"},
            /* what a server could decode past the prefix */
            {"GET", "https://api.example.com/v1/%2e%2e/admin",
             "egress URL: path has a percent-encoded dot, slash or backslash (%2E, %2F, %5C), "
             "which a server could decode past the rule's prefix"},
            {"GET", "https://api.example.com/v1/.%2E/admin",
             "egress URL: path has a percent-encoded dot, slash or backslash (%2E, %2F, %5C), "
             "which a server could decode past the rule's prefix"},
            {"GET", "https://api.example.com/v1%2F..%2Fadmin",
             "egress URL: path has a percent-encoded dot, slash or backslash (%2E, %2F, %5C), "
             "which a server could decode past the rule's prefix"},
            {"GET", "https://api.example.com/v1/..%5cadmin",
             "egress URL: path has a percent-encoded dot, slash or backslash (%2E, %2F, %5C), "
             "which a server could decode past the rule's prefix"},
            {"GET", "https://api.example.com/v1/..\\admin",
             "egress URL: path has a backslash, which a server could read as a slash"},
            {"GET", "https://api.example.com/v1/..;/admin",
             "egress URL: path has a segment starting '..;', which a server could read as a dot "
             "segment"},
            {"GET", "https://api.example.com/v1/.;x/y",
             "egress URL: path has a segment starting '.;', which a server could read as a dot "
             "segment"},
            {"GET", "https://api.example.com/v1/%",
             "egress URL: path has a '%' not followed by two hex digits"},
            /* credentials, fragments, other schemes */
            {"GET", "https://user:secret@api.example.com/v1",
             "egress URL: a user name or password in the URL is not allowed"},
            {"GET", "https://:secret@api.example.com/v1",
             "egress URL: a user name or password in the URL is not allowed"},
            {"GET", "https://api.example.com/v1#part",
             "egress URL: a fragment ('#') is not allowed"},
            {"GET", "ftp://api.example.com/v1",
             "egress URL: scheme ftp is not allowed (http or https)"},
            {"GET", "https:/api.example.com/v1",
             "egress URL: must be written https://host[:port][/path]"},
            {"GET", "https://api.example.com:0/v1",
             "egress URL: port 0 is not allowed (1 to 65535)"},
    };
    for (size_t i = 0; i < PF_ELEMENTSOF(cases); i++)
        check(e, cases[i].method, cases[i].url, -1, cases[i].message);

    /* libcurl's reason for what it cannot parse; the URL echoed cut to 64 bytes. */
    struct pf_error *err = NULL;
    assert_null(policy_egress_match(e, "GET", "api.example.com/v1", &err));
    assert_int_equal(err->code, PF_E_PERMISSION);
    assert_non_null(strstr(err->msg, "egress URL: 'api.example.com/v1' is not a valid URL ("));
    err = pf_error_free(err);
    assert_null(policy_egress_match(e, "GET", NULL, &err));
    assert_int_equal(err->code, PF_E_PERMISSION);
    err = pf_error_free(err);

    /* At most 8192 bytes; the no-match message echoes at most 64 bytes of the URL. */
    char *url = malloc(8300);
    assert_non_null(url);
    strcpy(url, "https://api.example.com/other/");
    size_t n = strlen(url);
    memset(url + n, 'a', 8192 - n);
    url[8192] = '\0';
    check(e, "GET", url, -1,
          "GET https://api.example.com/other/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa matches no egress "
          "rule of this profile");
    strcat(url, "a");
    check(e, "GET", url, -1, "egress URL: URL of 8193 bytes exceeds maximum 8192");
    free(url);
}

static void
test_match_without_rules(void **state)
{
    (void) state;
    struct policy_egress none = {0};
    struct pf_error *err = NULL;
    assert_int_equal(policy_egress_parse(NULL, "profiles/x.json", &none, &err), 0);
    assert_int_equal(none.n, 0);
    check(&none, "GET", "https://api.example.com/", -1,
          "this profile allows no network egress (its egress list is empty)");
    check(NULL, "GET", "https://api.example.com/", -1,
          "this profile allows no network egress (its egress list is empty)");
    policy_egress_finish(&none);
    cJSON *j = policy_egress_to_json(&none);
    assert_true(cJSON_IsArray(j) && cJSON_GetArraySize(j) == 0);
    cJSON_Delete(j);
}

/* The three egress limits are job limits of the table: a profile sets them within range, a
 * request may tighten them, and --check-policy shows them. */
static void
test_egress_limits(void **state)
{
    (void) state;
    struct policy_profile *p =
            parse_ok("{\"name\": \"x\", \"limits\": {\"egress_timeout_ms\": 100, "
                     "\"egress_max_bytes\": 1024, \"egress_max_requests\": 0}}");
    assert_int_equal(p->limits.v[POLICY_LIMIT_EGRESS_TIMEOUT_MS], 100);
    assert_int_equal(p->limits.v[POLICY_LIMIT_EGRESS_MAX_BYTES], 1024);
    assert_int_equal(p->limits.v[POLICY_LIMIT_EGRESS_MAX_REQUESTS], 0);
    policy_profile_free(p);

    p = parse_ok("{\"name\": \"x\"}");
    assert_int_equal(p->limits.v[POLICY_LIMIT_EGRESS_TIMEOUT_MS], 10000);
    assert_int_equal(p->limits.v[POLICY_LIMIT_EGRESS_MAX_BYTES], 1024 * 1024);
    assert_int_equal(p->limits.v[POLICY_LIMIT_EGRESS_MAX_REQUESTS], 16);
    cJSON *j = policy_profile_to_json(p);
    const cJSON *l = cJSON_GetObjectItem(j, "limits");
    assert_int_equal(cJSON_GetObjectItem(l, "egress_timeout_ms")->valuedouble, 10000);
    assert_int_equal(cJSON_GetObjectItem(l, "egress_max_bytes")->valuedouble, 1048576);
    assert_int_equal(cJSON_GetObjectItem(l, "egress_max_requests")->valuedouble, 16);
    cJSON_Delete(j);

    struct pf_error *err = NULL;
    cJSON *t = cJSON_Parse("{\"egress_max_requests\": 2, \"egress_timeout_ms\": 500}");
    assert_int_equal(policy_limits_tighten(&p->limits, t, "limits", &err), 0);
    assert_int_equal(p->limits.v[POLICY_LIMIT_EGRESS_MAX_REQUESTS], 2);
    cJSON_Delete(t);
    t = cJSON_Parse("{\"egress_max_bytes\": 2097152}");
    assert_int_equal(policy_limits_tighten(&p->limits, t, "limits", &err), -1);
    assert_string_equal(err->msg, "limits.egress_max_bytes: 2097152 would loosen the profile's "
                                  "1048576 (a request may only tighten limits)");
    err = pf_error_free(err);
    cJSON_Delete(t);
    policy_profile_free(p);

    static const struct {
        const char *json, *message;
    } bad[] = {
            {"{\"name\": \"x\", \"limits\": {\"egress_timeout_ms\": 99}}",
             "profiles/x.json: limits.egress_timeout_ms: 99 is below minimum 100"},
            {"{\"name\": \"x\", \"limits\": {\"egress_timeout_ms\": 300001}}",
             "profiles/x.json: limits.egress_timeout_ms: 300001 exceeds maximum 300000"},
            {"{\"name\": \"x\", \"limits\": {\"egress_max_bytes\": 1023}}",
             "profiles/x.json: limits.egress_max_bytes: 1023 is below minimum 1024"},
            {"{\"name\": \"x\", \"limits\": {\"egress_max_bytes\": 33554433}}",
             "profiles/x.json: limits.egress_max_bytes: 33554433 exceeds maximum 33554432"},
            {"{\"name\": \"x\", \"limits\": {\"egress_max_requests\": 10001}}",
             "profiles/x.json: limits.egress_max_requests: 10001 exceeds maximum 10000"},
    };
    for (size_t i = 0; i < PF_ELEMENTSOF(bad); i++) {
        struct policy_profile *q = NULL;
        assert_int_equal(policy_profile_parse(bad[i].json, strlen(bad[i].json), "profiles/x.json",
                                              "x", &q, &err),
                         -1);
        assert_string_equal(err->msg, bad[i].message);
        err = pf_error_free(err);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_rules_parse_with_defaults),
            cmocka_unit_test(test_rule_refusals),
            cmocka_unit_test(test_localhost_neighbours_load),
            cmocka_unit_test(test_method_bit),
            cmocka_unit_test_setup_teardown(test_match_allowed, setup_rules, teardown_rules),
            cmocka_unit_test_setup_teardown(test_match_first_rule_wins, setup_rules,
                                            teardown_rules),
            cmocka_unit_test_setup_teardown(test_match_refused, setup_rules, teardown_rules),
            cmocka_unit_test(test_match_without_rules),
            cmocka_unit_test(test_egress_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
