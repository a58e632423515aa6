/* The scheduling part of `pyfence status`'s table: peers, sessions, workers, the queue,
 * latency, warm pools, per-uid counters and the last policy reload (PROTOCOL.md, "stats"). */
#ifndef CLIENT_CLI_STATUS_H
#define CLIENT_CLI_STATUS_H

#include <cjson/cJSON.h>
#include <stdio.h>

/* Rows for what `st` (a stats reply) has; fields an older daemon lacks are left out. */
void cli_status_scheduling(FILE *out, const cJSON *st);

#endif
