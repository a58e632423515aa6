/* The scheduling part of the `stats` reply (PROTOCOL.md, "stats"): peers, sessions, workers
 * idle and busy, the queue and its bounds, per-uid counters, the warm pools, latency
 * percentiles of recent jobs and the last policy reload. */
#ifndef DAEMON_STATS_H
#define DAEMON_STATS_H

#include <cjson/cJSON.h>

struct daemon;

/* Adds the fields to reply; -1 when out of memory. */
int stats_add_scheduling(struct daemon *d, cJSON *reply);

#endif
