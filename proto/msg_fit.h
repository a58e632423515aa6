/* Making messages fit a frame without losing their shape: text cut or split by its size as
 * JSON (json_write's escapes counted), and an exec reply brought under a frame limit in the
 * steps that lose the least. Used by the worker (its channel's frame) and the daemon
 * (max_frame_bytes). Non-logging module. See PROTOCOL.md, "exec". */
#ifndef PROTO_MSG_FIT_H
#define PROTO_MSG_FIT_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes json_write writes for s[0..len) inside a string's quotes. */
size_t msg_fit_json_size(const char *s, size_t len);

/* Length in bytes of the longest prefix (suffix) of the UTF-8 text s[0..len) that is made of
 * whole characters and takes at most budget bytes as JSON. */
size_t msg_fit_prefix(const char *s, size_t len, size_t budget);
size_t msg_fit_suffix(const char *s, size_t len, size_t budget);

/* A malloc'd copy of s that takes at most budget bytes as JSON: s itself when it fits, else
 * its head, the marker, and its tail (the head alone when not even the marker fits). NULL when
 * out of memory. */
char *msg_fit_cut(const char *s, size_t budget, const char *marker);

/* Brings an exec reply, or a worker's result (same fields: PROTOCOL.md "exec", CHANNEL.md),
 * under max_bytes of JSON: first `logs`, `error.message` and `error.source` are cut (head and
 * tail, with a marker naming limit_name), sharing what the rest leaves; when the rest alone is
 * too large, the result (`output`, `output_repr`) is left out as well, with outcome
 * `output_limit` and a message saying so. Returns 0 when the reply fits (changed or not), -1
 * when even that cannot make it fit, or memory ran out (the reply is then still valid). */
int msg_fit_exec_reply(cJSON *reply, uint32_t max_bytes, const char *limit_name);

#endif
