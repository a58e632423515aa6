/* The fixture of the unit tests that drive the daemon's connections (test_conn*, test_session*,
 * test_cancel*): a daemon context on a real uv loop with one client connection over a
 * socketpair, and a fake zygote whose spawn hands the test the worker's end of the job's
 * channel. Teardown stops the daemon gracefully and asserts that nothing is left: no
 * connection, no job, no byte held for any uid (max_bytes_per_uid's count back to zero), no
 * uid record, uv_loop_close() == 0. */
#ifndef TESTS_UNIT_CONN_FIXTURE_H
#define TESTS_UNIT_CONN_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "conn.h"
#include "daemon.h"
#include "harden.h"

#define MAX_FAKE_JOBS 8

struct zygote {
    int worker_fd[MAX_FAKE_JOBS + 1]; /* by job id */
    void *ctx[MAX_FAKE_JOBS + 1];
    int kills[MAX_FAKE_JOBS + 1];
    int cancels[MAX_FAKE_JOBS + 1];
    int cancel_run[MAX_FAKE_JOBS + 1]; /* the run the last cancel named */
    uint64_t last_job;
    bool fail_spawn;
    bool restarting;  /* zygote_can_spawn false, zygote_spawn busy */
    uint64_t lost_ns; /* zygote_down_since while restarting (0: uv_hrtime() of the call) */
    bool bad_channel; /* zygote_spawn succeeds with a channel fd that cannot be used (-1) */
    struct harden_params last_params;
};

extern struct zygote fake;

struct peer {
    int fd;
    bool eof;
    size_t len;
    char buf[256 * 1024];
};

struct fx {
    uv_loop_t loop;
    struct daemon d;
    struct peer client;
    struct peer worker; /* the current job's worker end */
};

int setup_with(void **state, void (*tune)(struct policy_limits *));
int setup(void **state);
int teardown(void **state);
/* Runs the loop for about ms milliseconds. */
void pump(struct fx *f, int ms);
void send_raw(int fd, const void *data, size_t len);
void send_frame(int fd, const char *json);
/* Formats a request (cut at 1023 bytes) and sends it on fd as one frame. */
void send_fmt(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The next frame from peer as JSON, running the loop meanwhile; NULL on EOF or timeout. */
cJSON *recv_frame(struct fx *f, struct peer *p, int timeout_ms);
/* Expects the client's next frame to be a failure reply with this id (as JSON) and code. */
cJSON *expect_error(struct fx *f, const char *id_json, const char *code);
void expect_eof(struct fx *f, struct peer *p);
const char *error_message(const cJSON *reply);
/* Sends a request that starts a worker (exec, session.open), takes the worker's end of its
 * channel and the first frame the daemon sent it (*ret_first, the caller's); returns the job
 * id. */
uint64_t start_worker_of(struct fx *f, const char *request, cJSON **ret_first);
/* Sends an exec, takes the worker's end of its channel, checks the `run` frame; returns the
 * job id. *ret_run (if not NULL) receives the run frame. */
uint64_t start_exec_run(struct fx *f, const char *request, cJSON **ret_run);
uint64_t start_exec(struct fx *f, const char *request);
/* The worker goes away: its end closes and the zygote reports how. */
void end_worker(struct fx *f, uint64_t job, int exit_code, int sig, bool killed, uint64_t cpu_ms);

/* dir/name holds text (a policy file, for reload tests). */
void write_file(const char *dir, const char *name, const char *text);

#endif
