/* Request-to-reply times of the most recent jobs, in a fixed ring, for the percentiles `stats`
 * shows. Recording is O(1); percentiles sort a copy when asked. No allocation. */
#ifndef DAEMON_LATENCY_H
#define DAEMON_LATENCY_H

#include <cjson/cJSON.h>
#include <stddef.h>

#define LATENCY_RING 1024

struct latency {
    double ms[LATENCY_RING];
    size_t n;    /* samples held, up to LATENCY_RING */
    size_t next; /* where the next one goes */
};

void latency_record(struct latency *l, double ms);
/* The nearest-rank percentile p (0 < p <= 100) of the samples held; 0 when there are none. */
double latency_percentile(const struct latency *l, double p);
/* {"samples", "p50_ms", "p99_ms", "max_ms"} */
cJSON *latency_json(const struct latency *l);

#endif
