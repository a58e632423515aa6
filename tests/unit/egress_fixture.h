/* What the egress unit tests (test_egress.c, test_egress_lookup.c) share: requests started
 * through the engine's own entry point (egress_start), their ends recorded, and a loop run
 * until they are answered. */
#ifndef TESTS_UNIT_EGRESS_FIXTURE_H
#define TESTS_UNIT_EGRESS_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress.h"

/* How a request ended: its frame, summed up. */
struct ending {
    int calls;
    int status; /* of a reply */
    char type[32];
    char message[400];
};

/* An egress_done_fn: records frame in ctx, a struct ending. */
void egress_fixture_record_end(void *ctx, cJSON *frame);

/* Starts GET url for owner with timeout_ms; false if it was answered at once (its frame is
 * then recorded in end). */
bool egress_fixture_start_get(struct egress *e, const struct policy_egress *rules, const char *url,
                              uint64_t owner, uint64_t timeout_ms, uint64_t max_bytes,
                              struct ending *end);

/* Runs the loop until every one of ends has been answered, or 20 s; seconds taken. (Not
 * UV_RUN_ONCE: it may wait for whatever the loop waits for, a lookup's thread in the past.) */
double egress_fixture_run_until_answered(struct ending *ends, size_t n);

#endif
