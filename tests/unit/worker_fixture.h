/* A unit test playing pyfenced to a real zygote and its workers (test_session_worker,
 * test_worker_cancel): the zygote's callbacks, a loop that runs until a flag is set, and the
 * worker's channel — frames out, events in. */
#ifndef TESTS_UNIT_WORKER_FIXTURE_H
#define TESTS_UNIT_WORKER_FIXTURE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "frame.h"
#include "zygote.h"

/* What the zygote said of one worker (its job_ctx). */
struct wfx_worker {
    pid_t pid;
    bool spawned, exited;
    struct zygote_exit exit;
};

/* zygote_start's callbacks, for a struct wfx_worker job_ctx. */
void wfx_on_spawned(void *ctx, pid_t pid, const struct pf_error *err);
void wfx_on_exit(void *ctx, const struct zygote_exit *e);

/* Runs loop until *flag is set or timeout_ms pass; *flag. */
bool wfx_run_until(uv_loop_t *loop, const bool *flag, uint64_t timeout_ms);

/* The zygote binary: $PYFENCE_ZYGOTE, else the one in the build tree beside this test. Sets
 * path; false when it is not there. */
bool wfx_find_zygote(char *path, size_t size);

/* Writes json as one frame on fd (asserting). */
void wfx_send_json(int fd, const char *json);
void wfx_send_fmt(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The events read from a worker's channel, output events left out. */
struct wfx_reader {
    struct frame_decoder dec;
    cJSON *got[8];
    int n;
};
void wfx_reader_init(struct wfx_reader *r);
void wfx_reader_finish(struct wfx_reader *r);

/* The next non-output event from fd, which must be `event` (the test fails otherwise); NULL
 * at EOF. The caller owns it. */
cJSON *wfx_expect_event(int fd, struct wfx_reader *r, const char *event);

#endif
