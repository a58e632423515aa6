/* Egress rules: the HTTP(S) requests pyfenced may make on behalf of a profile's workers (the
 * workers themselves have no network). A rule is {"url": "https://api.example.com/v1/",
 * "methods": ["GET", "POST"]}: scheme, host and port must equal the request's, the request's
 * path must start with the rule's at a segment boundary, and its method must be listed
 * (default GET and HEAD). URLs are parsed with libcurl's URL API, as the daemon's requests
 * are, so that what is checked is what is requested. See pyfence-profile(5). Non-logging. */
#ifndef POLICY_EGRESS_H
#define POLICY_EGRESS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pf_error.h"

#define POLICY_EGRESS_MAX_URL 8192 /* bytes of a rule's or a request's URL */

enum policy_egress_method {
    POLICY_EGRESS_GET = 1u << 0,
    POLICY_EGRESS_HEAD = 1u << 1,
    POLICY_EGRESS_POST = 1u << 2,
    POLICY_EGRESS_PUT = 1u << 3,
    POLICY_EGRESS_PATCH = 1u << 4,
    POLICY_EGRESS_DELETE = 1u << 5,
};

/* A rule's methods when it lists none. */
#define POLICY_EGRESS_DEFAULT_METHODS (POLICY_EGRESS_GET | POLICY_EGRESS_HEAD)

struct policy_egress_rule {
    char *url;        /* as written in the profile (messages, --check-policy) */
    char *scheme;     /* "http" or "https" */
    char *host;       /* lowercase; an IPv6 literal without brackets */
    bool host_is_ip;  /* an IPv4 or IPv6 literal */
    unsigned port;    /* explicit, else the scheme's default */
    char *path;       /* the prefix a request's path must have, at least "/" */
    unsigned methods; /* enum policy_egress_method bits */
};

struct policy_egress {
    struct policy_egress_rule *rules;
    size_t n;
    /* Not set by the parser (0): the daemon numbers the versions of each profile's rules as it
     * loads policies, the same number exactly while they stay equal (policy_egress_equal), so
     * that a run can tell whether the rules in force are the ones it started with. */
    uint64_t version;
};

/* Parses a profile's "egress" array (NULL: no rules). origin prefixes messages ("profiles/x.json"):
 * "profiles/x.json: egress[1].url: scheme ftp is not allowed (http or https)". *ret is set only
 * on success; errors are PF_E_CONFIG (PF_E_BAD_REQUEST for a rule's shape, from proto/msg.h). */
int policy_egress_parse(const cJSON *array, const char *origin, struct policy_egress *ret,
                        struct pf_error **err);
void policy_egress_finish(struct policy_egress *e);
/* True when a and b allow exactly the same requests: the same rules (URL as written, effective
 * methods), in the same order. version is not compared. */
bool policy_egress_equal(const struct policy_egress *a, const struct policy_egress *b);
/* [{"url": ..., "methods": [...]}] with the effective methods (defaults filled in). */
cJSON *policy_egress_to_json(const struct policy_egress *e);

/* True for "localhost" and the names under it (RFC 6761: always loopback), in any case, with
 * or without a final dot. pyfenced connects a rule's host name to public addresses only, so a
 * rule naming one is refused at load ("... names host 'localhost', a loopback name (RFC 6761)
 * ..."), as the daemon refuses every request under it. */
bool policy_egress_is_localhost_name(const char *host);
/* Refuses rules that can never allow a request because pyfenced refuses every request under
 * them: a host name that is localhost or under it (loopback by definition, and a named host is
 * connected to at public addresses only; an IP literal, even loopback or private, is connected
 * to as written, so it is allowed). Called by policy_profile_parse on every profile; kept out of
 * policy_egress_parse so that the daemon's own refusal of such rules can still be tested. */
int policy_egress_check_reachable(const struct policy_egress *e, const char *origin,
                                  struct pf_error **err);

/* The bit of a method name, 0 when egress allows no such method. */
unsigned policy_egress_method_bit(const char *name);

/* The rule allowing METHOD URL, or NULL with *err (PF_E_PERMISSION; PF_E_INTERNAL when out of
 * memory) saying why: the URL is not one egress can request (names the problem), or no rule
 * allows it ("GET http://x/ matches no egress rule of this profile"; with no rules at all:
 * "this profile allows no network egress (its egress list is empty)"). The first rule that
 * allows the request is returned. The returned rule is borrowed from e. */
const struct policy_egress_rule *policy_egress_match(const struct policy_egress *e,
                                                     const char *method, const char *url,
                                                     struct pf_error **err);

#endif
