/* What libpyfence's files use of each other beyond pyfence.h. Not exported: the version script
 * keeps every name outside pyfence_* local. */
#ifndef CLIENT_LIBPYFENCE_INTERNAL_H
#define CLIENT_LIBPYFENCE_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pyfence.h"

/* True for 0 (no signal) and for every number sigaddset() takes. */
bool libpyfence_signo_valid(int signo);

/* When signo (blocked) is pending: lets it through, so that its handler runs as it would have
 * in a wait, and returns true. A signal that comes while a wait does not block (as its reply
 * is read) stays pending until then. */
bool libpyfence_take_pending(int signo);

/* Sends req (its id added) and waits for its reply, which *ret_reply receives (the caller
 * deletes it); a reply that is not ok fails with its error. signo interrupts the wait as in
 * pyfence_wait_signal (0: nothing does): then it fails with PYFENCE_E_INTERRUPTED and the
 * request, whose id *ret_id received (ret_id may be NULL), is still in flight. */
int libpyfence_request_signal(struct pyfence_conn *conn, cJSON *req, int signo, uint64_t *ret_id,
                              cJSON **ret_reply, struct pyfence_error *err);

/* Gives `req` an id, sends it and records the id as in flight. */
int libpyfence_send_request(struct pyfence_conn *conn, cJSON *req, uint64_t *ret_id,
                            struct pyfence_error *err);

/* Reads frames until the reply of `id`, passing its output events to cb. With a signal
 * (signo > 0), its handler running while it waits ends it (pyfence_wait_signal); only a wait its
 * caller can make again may have one: the other calls' ids are internal. *ret_reply receives
 * the reply, ok or not (the caller deletes it). */
int libpyfence_wait_reply(struct pyfence_conn *conn, uint64_t id, int signo, pyfence_output_cb cb,
                          void *userdata, cJSON **ret_reply, struct pyfence_error *err);

/* 0 when text, a string of the caller's to send, is valid UTF-8; else PYFENCE_E_BAD_REQUEST
 * naming `what` ("exec option profile") and the first bad byte, or saying it is NULL. Checked
 * before sending: pyfenced refuses a frame that is not UTF-8 as a whole, without an id. */
int libpyfence_check_text(const char *text, const char *what, struct pyfence_error *err);

/* libpyfence_check_text for texts[0..n), each named `what[i]`. */
int libpyfence_check_texts(const char *const *texts, size_t n, const char *what,
                           struct pyfence_error *err);

/* Parses caller-supplied JSON text (an option such as limits_json) that must be an object, as
 * strictly as pyfenced parses a frame (msg_parse: UTF-8, no duplicate keys, no \u0000, numbers
 * within a double, one value and nothing after it), one level shallower than a request since
 * it goes one level down in one. Failures are PYFENCE_E_BAD_REQUEST, prefixed with `what`
 * ("exec option limits_json"): refused here, they cannot become a refusal of the whole frame
 * that the daemon could not attribute to a request. */
int libpyfence_parse_object(const char *text, const char *what, cJSON **ret,
                            struct pyfence_error *err);

/* JSON text of a parsed reply, numbers exact: cJSON_Print* would turn 0.30000000000000004 into
 * 0.3 and 10**16 into 1e+16. NULL on OOM (a parsed reply is valid UTF-8, so nothing else). */
char *libpyfence_exact_json(const cJSON *item);

/* Fills err (may be NULL) with code, its name (or `name`) and the message; returns -code. */
int libpyfence_fail_named(struct pyfence_error *err, int code, const char *name, const char *fmt,
                          ...) __attribute__((format(printf, 4, 5)));

/* ---- the structs a caller allocates, at the size it compiled them with (libpyfence_struct.c)
 * Each begins with `size_t size`, set by its _init macro. As Linux reads openat2()'s struct
 * open_how (copy_struct_from_user()), the library reads what lies within the caller's size and
 * takes its defaults past it; refuses non-zero bytes past its own sizeof (options of a newer
 * pyfence.h it does not know); and writes only within the caller's size.
 *
 * Growing one of them: append fields only, each at an offset at or past the previous sizeof
 * (one put in the old trailing padding would be ignored, not refused, by an older library),
 * and give each one a zero that means "unset", since an older library's _init zeroes what it
 * does not know. */

/* 0 when `size`, that of the caller's struct `name` ("pyfence_result"), can be one its _init
 * macro set: at least a size_t's, at most a page (as openat2() and clone3() cap theirs). Else
 * PYFENCE_E_BAD_REQUEST, naming the _init function to call. */
int libpyfence_struct_check(size_t size, const char *name, struct pyfence_error *err);

/* Reads the caller's struct `name` at src into dst, this library's own (dst_size bytes),
 * which holds the defaults: the fields within src's size replace them. src NULL: nothing is
 * read. Fails (PYFENCE_E_BAD_REQUEST) when src's size is not plausible, or when a byte past
 * dst_size is not zero, naming its offset. */
int libpyfence_struct_in(void *dst, size_t dst_size, const void *src, const char *name,
                         struct pyfence_error *err);

/* Frees what result (checked by libpyfence_struct_check) holds and hands it `full`, as filled
 * by this library: the fields within result->size; the strings past it are freed. */
void libpyfence_result_set(struct pyfence_result *result, struct pyfence_result *full);

/* libpyfence_result_set for a struct pyfence_server_info, which is overwritten: what it held
 * was the caller's to free. */
void libpyfence_server_info_set(struct pyfence_server_info *info, struct pyfence_server_info *full);

#endif
