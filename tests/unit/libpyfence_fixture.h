/* The fixture of test_libpyfence, test_libpyfence_signal and test_libpyfence_struct: a scripted
 * pyfenced on a temporary unix socket, served by a thread of its own, which answers each request
 * it reads with the next step of its script and keeps the request payloads for the test to
 * check. Only the public pyfence.h API is used on the client side. */
#ifndef TESTS_UNIT_LIBPYFENCE_FIXTURE_H
#define TESTS_UNIT_LIBPYFENCE_FIXTURE_H

#include <pthread.h>
#include <stddef.h>

#include "pyfence.h"

#define MAX_STEPS 256

/* A success reply to an exec, with output, logs and stats; every %1$llu is the request's id. */
#define EXEC_OK                                                                    \
    "{\"id\": %1$llu, \"ok\": true, \"outcome\": \"ok\", \"output\": 42, "         \
    "\"output_repr\": \"42\", \"logs\": \"a\\nb\\n\", \"is_final_answer\": true, " \
    "\"stats\": {\"ops\": 7, \"run_ms\": 1.5, \"queue_ms\": 0.25, \"cpu_ms\": 3, " \
    "\"max_rss_kb\": 999}}"

/* A well-formed session id. */
#define SID "0123456789abcdef0123456789abcdef"

/* One scripted answer per request: a printf format for the reply bytes' JSON, where every %1$llu
 * is the request's id; or raw bytes sent as they are; after delay_ms; then optionally close. */
struct step {
    const char *json; /* frame payload format, may contain "%1$llu" */
    const char *raw;  /* or: raw bytes (raw_len of them) */
    size_t raw_len;
    int delay_ms;
    int close_after;
    int early; /* sent as soon as the client connects, before its request is read (so its
                * json has the id written in, not %1$llu) */
};

struct fake {
    char dir[64];
    char path[96];
    int listen_fd;
    pthread_t thread;
    int joined;
    struct step steps[MAX_STEPS];
    size_t n_steps;
    char *requests[MAX_STEPS]; /* the request payloads received, for the test to check */
};

/* Listens on a new socket in a temporary directory and starts the server thread, which takes
 * one connection and plays steps[0..n) (copied) to it. */
struct fake *fake_start(const struct step *steps, size_t n);
/* Waits for the server thread to finish its script (after which f->requests is complete). */
void fake_join(struct fake *f);
/* Joins, removes the socket and its directory, and frees f with the requests it kept. */
void fake_stop(struct fake *f);
/* A client connection to f's socket (asserting that it connects). */
struct pyfence_conn *connect_to(struct fake *f);

/* Output events gathered by capture, a pyfence output callback whose userdata is a struct
 * captured (zeroed first); what does not fit is dropped. */
struct captured {
    char buf[256];
};
void capture(void *userdata, const char *data, size_t len);

/* Writes parts[0..n) as length-prefixed frames one after the other into buf (large enough),
 * for a step that answers several requests at once; returns the bytes written. */
size_t build_frames(char *buf, const char *const *parts, size_t n);

/* Request i, as the fake server received it, has op, and field name with value (a string, or
 * a number's text). */
void assert_request(struct fake *f, size_t i, const char *op, const char *name, const char *value);

#endif
