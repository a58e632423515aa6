/* What test_session and test_session_queue add to conn_fixture.c for sessions: open one through
 * the fake zygote, send formatted requests and session execs, and check the replies and the `run`
 * frames the session's worker gets. */
#ifndef TESTS_UNIT_SESSION_FIXTURE_H
#define TESTS_UNIT_SESSION_FIXTURE_H

#include <stdint.h>

#include "conn_fixture.h"
#include "session.h"

/* job_outcome_from_exit's words for a worker that died of SIGSEGV. */
#define SEGV_CAUSE                                                                                 \
    "worker killed by signal SIGSEGV: a crash in C code, most often its C stack overflowing on a " \
    "value nested too deep (README, Limitations)"

/* Expects the client's next frame to be an ok reply with this id (as JSON); the caller owns it. */
cJSON *expect_ok(struct fx *f, const char *id_json);
/* session.open answered once the fake worker says ready; returns the job id of its worker
 * and copies the session id. */
uint64_t open_session(struct fx *f, const char *request, char id[SESSION_ID_LEN + 1]);
/* The client sends request id: exec of code in session sid. */
void send_exec(struct fx *f, int id, const char *sid, const char *code);
/* The worker's next frame is a `run` of this code. */
void expect_run(struct fx *f, const char *code);
/* The worker answers its run: an ok result with this output. */
void send_result(struct fx *f, int output);

#endif
