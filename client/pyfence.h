/* libpyfence: the C client of pyfenced (contract).
 *
 * A connection is a blocking Unix stream socket speaking proto/PROTOCOL.md. There is no global
 * state: everything lives in a `struct pyfence_conn`. One connection must not be used by two
 * threads at once; open one per thread (connections are cheap).
 *
 * Errors are values, as in libuv: every fallible function returns 0 (or a positive count) on
 * success and a negative `enum pyfence_code` (-PYFENCE_E_...) on failure, and fills the
 * caller's `struct pyfence_error` when one is passed (it may be NULL). The message names what a
 * user can act on: the socket path and errno, the request id, the server's own message.
 * What the caller passes is checked before anything is sent: a string that is not UTF-8 (code,
 * imports, profile, session id, names, client name), a NULL where a string is due, or JSON
 * option text pyfenced would refuse fails with PYFENCE_E_BAD_REQUEST naming the field, and the
 * connection stays usable (sent, pyfenced would refuse the whole frame, without an id).
 *
 * Several requests may be in flight on one connection: pyfence_submit() sends an exec and
 * returns its id; pyfence_wait() collects the reply of one id, keeping replies and events of
 * the other in-flight ids for their own pyfence_wait(). A frame for an id that is not in flight
 * is a protocol error (PYFENCE_E_PROTOCOL), and the connection is then unusable.
 *
 * Structs the caller allocates begin with their size, set by their _init macro: a program built
 * against an older pyfence.h keeps working with a newer library, and one built against a newer
 * header gets PYFENCE_E_BAD_REQUEST from an older library only when it sets an option that
 * library does not know. A size of 0 (a struct never initialised) fails with
 * PYFENCE_E_BAD_REQUEST. */
#ifndef PYFENCE_H
#define PYFENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PYFENCE_VERSION_STRING "0.1.0"
/* The wire protocol this library speaks (proto/PROTOCOL.md); pyfence_hello() checks it. */
#define PYFENCE_PROTOCOL_VERSION 1

/* Error codes. 1..22 are the server's codes (proto/PROTOCOL.md "Error codes"), with the same
 * wire names, returned by pyfence_code_name(). PYFENCE_E_PROTOCOL and PYFENCE_E_INTERRUPTED are
 * client-side only. */
enum pyfence_code {
    PYFENCE_OK = 0,
    PYFENCE_E_INTERNAL = 1,
    PYFENCE_E_BAD_FRAME,
    PYFENCE_E_BAD_REQUEST,
    PYFENCE_E_UNKNOWN_OP,
    PYFENCE_E_TOO_LARGE,
    PYFENCE_E_BUSY,
    PYFENCE_E_SHUTTING_DOWN,
    PYFENCE_E_ERROR,
    PYFENCE_E_TIMEOUT,
    PYFENCE_E_CPU_LIMIT,
    PYFENCE_E_MEMORY_LIMIT,
    PYFENCE_E_PIDS_LIMIT,
    PYFENCE_E_OUTPUT_LIMIT,
    PYFENCE_E_SECCOMP,
    PYFENCE_E_WORKER_CRASHED,
    PYFENCE_E_CANCELLED,
    PYFENCE_E_CONFIG,
    PYFENCE_E_CONNECT,
    PYFENCE_E_PERMISSION,
    PYFENCE_E_NOT_FOUND,
    PYFENCE_E_SESSION_LOST,
    /* The profile requires a hardening layer this host cannot give the worker: the message
     * names the profile, the layer, why and what an operator can do. */
    PYFENCE_E_HARDENING_UNAVAILABLE,
    PYFENCE_E_PROTOCOL = 100,    /* the server sent something we cannot interpret */
    PYFENCE_E_INTERRUPTED = 101, /* a signal ended a wait (pyfence_wait_signal) */
};

/* Stable lower-case name of a code ("connect", "timeout", "protocol"); accepts negative codes.
 * "internal" for unknown values. */
const char *pyfence_code_name(int code);
/* Inverse of pyfence_code_name (as sent on the wire); PYFENCE_E_INTERNAL for unknown names. */
int pyfence_code_from_name(const char *name);

struct pyfence_error {
    int code;           /* enum pyfence_code, positive */
    char name[32];      /* pyfence_code_name(code), or the server's code name verbatim */
    char message[1024]; /* truncated if longer */
};

struct pyfence_conn;

/* Connects to `path`, or when NULL to $PYFENCE_SOCKET, else /run/pyfence/pyfence.sock as
 * root, else $XDG_RUNTIME_DIR/pyfence.sock. Errors (PYFENCE_E_CONNECT / _CONFIG) name the path
 * and the errno. */
int pyfence_connect(const char *path, struct pyfence_conn **ret_conn, struct pyfence_error *err);
/* Closes the socket and frees everything; accepts NULL. Pending requests are abandoned. */
void pyfence_close(struct pyfence_conn *conn);
/* The socket fd (for poll() or tests); owned by the connection. */
int pyfence_fileno(const struct pyfence_conn *conn);
/* The resolved socket path; owned by the connection. */
const char *pyfence_path(const struct pyfence_conn *conn);

struct pyfence_server_info {
    size_t size;      /* sizeof the struct as the caller compiled it; set by
                       * pyfence_server_info_init() */
    char server[32];  /* "pyfenced" */
    char version[32]; /* "0.1.0" */
    char python[32];  /* "3.11.2" */
    int protocol;     /* 1 */
    char *reply_json; /* the whole reply, malloc'd; free() it */
};

/* Everything empty. */
void pyfence_server_info_init_size(struct pyfence_server_info *info, size_t size);
#define pyfence_server_info_init(info) pyfence_server_info_init_size((info), sizeof *(info))

/* `client_name` may be NULL. ret_info may be NULL; else it must have been initialised with
 * pyfence_server_info_init(), and receives the server's description (its reply_json is then
 * the caller's to free()). Fails with PYFENCE_E_PROTOCOL when the daemon speaks another
 * protocol version. */
int pyfence_hello(struct pyfence_conn *conn, const char *client_name,
                  struct pyfence_server_info *ret_info, struct pyfence_error *err);
int pyfence_ping(struct pyfence_conn *conn, struct pyfence_error *err);
/* *ret_json receives the stats reply as JSON text (malloc'd; free() it). */
int pyfence_stats(struct pyfence_conn *conn, char **ret_json, struct pyfence_error *err);

struct pyfence_exec_options {
    size_t size;                /* sizeof the struct as the caller compiled it; set by
                                 * pyfence_exec_options_init() */
    uint32_t timeout_ms;        /* 0: the profile's default; else sent as limits.timeout_ms */
    const char *const *imports; /* modules allowed on top of the defaults ("pkg", "pkg.*") */
    size_t n_imports;
    const char *limits_json;    /* JSON object text of per-job limits to tighten, or NULL */
    const char *variables_json; /* JSON object text of name → tagged value, or NULL. Both are
                                 * parsed as strictly as pyfenced parses a frame (UTF-8, one
                                 * object, no duplicate key, no \u0000, no number beyond a
                                 * double, nesting under 256 levels): else BAD_REQUEST */
    bool stream;                /* ask for output events (pyfence_exec_options_init: true) */
    const char *session;        /* run in this session (pyfence_session_open), or NULL; the
                                 * session fixed its profile, imports and limits: leave them
                                 * unset (pyfenced refuses them, outcome bad_request) */
    const char *profile;        /* NULL: the caller's default profile; else a profile it may
                                 * use (one it may not is outcome not_found, like a missing
                                 * one). Its limits, imports and warm pool apply */
};

/* Defaults: no timeout override, no imports/limits/variables, the caller's default profile,
 * stream = true. Use the macro: it passes the size the caller compiled the struct with. */
void pyfence_exec_options_init_size(struct pyfence_exec_options *opts, size_t size);
#define pyfence_exec_options_init(opts) pyfence_exec_options_init_size((opts), sizeof *(opts))

/* Receives printed output as the snippet runs (the exec's `output` events), in order. */
typedef void (*pyfence_output_cb)(void *userdata, const char *data, size_t len);

/* The reply to an exec. Strings are malloc'd, owned by the result, NULL when absent. */
struct pyfence_result {
    size_t size;       /* sizeof the struct as the caller compiled it; set by
                        * pyfence_result_init() */
    bool ok;           /* the snippet ran to completion */
    char *outcome;     /* "ok", "error", "timeout", ...; a request refused before it ran
                        * (bad_request, busy, shutting_down) has its error code here */
    int outcome_code;  /* PYFENCE_OK or the enum pyfence_code of `outcome` */
    char *output_json; /* the tagged JSON value of the result ("null" when None) */
    char *output_repr; /* repr() of the result; NULL when it is None */
    char *logs;        /* captured print output */
    bool is_final_answer;
    struct {
        char *code;    /* wire code, e.g. "error" */
        char *type;    /* Python exception type, e.g. "ZeroDivisionError" */
        char *message; /* "Code execution failed at line '...' due to: ..." */
        int line;      /* 1-based, 0 when unknown */
        char *source;  /* the failing statement's source text */
    } error;
    struct {
        double queue_ms, run_ms, cpu_ms;
        int64_t ops, max_rss_kb;
    } stats;
    char *reply_json; /* the whole reply object, as JSON text */
};

/* An empty result. pyfence_wait() and pyfence_exec() take only an initialised one. */
void pyfence_result_init_size(struct pyfence_result *result, size_t size);
#define pyfence_result_init(result) pyfence_result_init_size((result), sizeof *(result))
/* Frees what the result owns and re-initialises it; accepts an initialised or finished one. */
void pyfence_result_finish(struct pyfence_result *result);

/* Sends an exec request; *ret_id is its id for pyfence_wait(). opts may be NULL (defaults). */
int pyfence_submit(struct pyfence_conn *conn, const char *code,
                   const struct pyfence_exec_options *opts, uint64_t *ret_id,
                   struct pyfence_error *err);
/* Blocks until the reply of request `id`, delivering its output events to output_cb (may be
 * NULL), and fills result (initialised with pyfence_result_init(); what it held is freed
 * first). Returns 0 when a reply arrived, whatever its outcome: look at result->ok/outcome.
 * Fails only when no reply can be had (connection lost, protocol error, unknown id), or
 * result->size is 0 (then the reply is not consumed). */
int pyfence_wait(struct pyfence_conn *conn, uint64_t id, pyfence_output_cb output_cb,
                 void *userdata, struct pyfence_result *result, struct pyfence_error *err);
/* pyfence_wait, interruptible by one signal without a race: the caller keeps signal `signo`
 * blocked (sigprocmask) and handles it; while this wait blocks, signo is let through (ppoll()),
 * and when its handler has run the wait fails with PYFENCE_E_INTERRUPTED. Nothing is lost: the
 * request is still in flight, what was read is kept, and the same wait can be made again, or
 * the request cancelled first (pyfence_cancel), as the pyfence CLI does on Ctrl-C. A signal
 * that comes while no wait blocks stays pending and ends the next wait at once. Plain
 * pyfence_wait() goes on through signals; signo 0 is the same. A signo that is not a signal
 * number fails with PYFENCE_E_BAD_REQUEST. (An int, not a sigset_t: this header stays plain
 * C99.) */
int pyfence_wait_signal(struct pyfence_conn *conn, uint64_t id, int signo,
                        pyfence_output_cb output_cb, void *userdata, struct pyfence_result *result,
                        struct pyfence_error *err);
/* pyfence_submit + pyfence_wait. */
int pyfence_exec(struct pyfence_conn *conn, const char *code,
                 const struct pyfence_exec_options *opts, pyfence_output_cb output_cb,
                 void *userdata, struct pyfence_result *result, struct pyfence_error *err);

/* ---- sessions (PROTOCOL.md "Sessions") -------------------------------------------------
 * A session is one worker that keeps the state of each snippet for the next; run snippets in
 * it with pyfence_exec and opts.session. It belongs to the peer's uid and ends when closed,
 * when its connection closes (unless opened with detach), after its idle timeout, or with its
 * worker: then the next request on it fails with PYFENCE_E_SESSION_LOST and the cause. */

#define PYFENCE_SESSION_ID_LEN 32 /* hex digits of a session id */

struct pyfence_session_options {
    size_t size;                /* sizeof the struct as the caller compiled it; set by
                                 * pyfence_session_options_init() */
    const char *profile;        /* NULL: the caller's own profile */
    uint32_t timeout_ms;        /* per snippet; 0: the profile's */
    const char *const *imports; /* modules allowed on top of the profile's */
    size_t n_imports;
    const char *limits_json;    /* JSON object text of job limits to tighten, or NULL */
    const char *variables_json; /* JSON object text of name → tagged value, or NULL; both
                                 * parsed as strictly as pyfence_exec_options' */
    bool detach;                /* keep the session when this connection closes */
};

/* Defaults: the caller's profile, nothing tightened or added, not detached. */
void pyfence_session_options_init_size(struct pyfence_session_options *opts, size_t size);
#define pyfence_session_options_init(opts) pyfence_session_options_init_size((opts), sizeof *(opts))

/* Opens a session (opts may be NULL); ret_id receives its id, NUL-terminated. */
int pyfence_session_open(struct pyfence_conn *conn, const struct pyfence_session_options *opts,
                         char ret_id[PYFENCE_SESSION_ID_LEN + 1], struct pyfence_error *err);
/* pyfence_session_open, interruptible by signal signo as pyfence_wait_signal is (the caller
 * keeps signo blocked and handles it; 0: not interruptible). When signo comes while the open
 * waits (for a worker, or in a busy daemon's queue), or as its reply is read, the open is
 * taken back: cancelled, and if the session opened all the same, closed; then it fails with
 * PYFENCE_E_INTERRUPTED and no session is left. If taking it back fails (the connection broke,
 * say), that error is returned instead: a detached session that opened just before may then
 * stay until its idle timeout. */
int pyfence_session_open_signal(struct pyfence_conn *conn,
                                const struct pyfence_session_options *opts, int signo,
                                char ret_id[PYFENCE_SESSION_ID_LEN + 1], struct pyfence_error *err);
/* Ends a session and kills its worker. PYFENCE_E_NOT_FOUND when there is no such session of
 * this uid; PYFENCE_E_BAD_REQUEST, without sending, for a NULL or empty session_id (as for
 * pyfence_session_get). */
int pyfence_session_close(struct pyfence_conn *conn, const char *session_id,
                          struct pyfence_error *err);
/* Reads variables: *ret_json receives the reply as JSON text (malloc'd; free() it), with
 * "variables" {name: tagged value} and "missing" [names the session does not define]. */
int pyfence_session_get(struct pyfence_conn *conn, const char *session_id, const char *const *names,
                        size_t n_names, char **ret_json, struct pyfence_error *err);
/* This uid's sessions: *ret_json receives the reply as JSON text (malloc'd), whose "sessions"
 * is [{"id", "profile", "created", "last_used", "execs", "detached", "state", "pending"}]
 * (PROTOCOL.md "session.list"; pending: requests waiting behind the running one). A JSON
 * reply grows by fields, not the ABI: a caller ignores the fields it does not know. */
int pyfence_session_list(struct pyfence_conn *conn, char **ret_json, struct pyfence_error *err);

/* Cancels request `id` (from pyfence_submit) of this connection: a queued exec ends at once and
 * never starts; a running one stops at the executor's next check, or its worker is killed
 * 500 ms later. Its reply (outcome "cancelled") is still collected with pyfence_wait().
 * *ret_cancelled (may be NULL) is false when the daemon had no such request in flight (it was
 * answered already). Only the connection that sent a request can cancel it, so this is a
 * library call (the pyfence CLI owns no request another command could name; its exec cancels
 * its own on Ctrl-C). */
int pyfence_cancel(struct pyfence_conn *conn, uint64_t id, bool *ret_cancelled,
                   struct pyfence_error *err);

/* Any request, as JSON text of an object with "op" (the id is added): *ret_reply_json receives
 * the reply as JSON text (malloc'd). A failure reply is returned as an error, like the calls
 * above. For ops this header has no call for. */
int pyfence_request(struct pyfence_conn *conn, const char *request_json, char **ret_reply_json,
                    struct pyfence_error *err);

#ifdef __cplusplus
}
#endif

#endif
