/* Tagged JSON <-> Python values (proto/PROTOCOL.md, "Values"): how results leave a worker and
 * how variables enter it. Nothing is ever pickled; anything without a faithful JSON form leaves
 * as {"$type": "repr", ...} and is refused on the way in.
 *
 * Both functions need the GIL (the executor's thread holds it throughout) and leave no Python
 * exception set behind them. Non-logging module. */
#ifndef DAEMON_EXECUTOR_VALUE_H
#define DAEMON_EXECUTOR_VALUE_H

#include <Python.h>
#include <cjson/cJSON.h>
#include <stdint.h>

#include "pf_error.h"

/* Container nesting allowed on input (and the depth the worker uses on output). */
#define EXEC_VALUE_MAX_DEPTH 64

/* Converts obj to tagged JSON. Never raises; returns NULL only when memory runs out.
 *
 * - Only exact built-in types get a structured form: an instance of a subclass (Counter,
 *   namedtuple, IntEnum, a user's list subclass...) is sent as "repr", because sending it as its
 *   base type would silently change its type on the way back.
 * - Containers deeper than max_depth levels (the top-level container is level 1) are sent as
 *   "repr"; so are self-referencing containers, once they reach that depth.
 * - A str that contains NUL or is not encodable as UTF-8 (lone surrogates) is sent as "repr":
 *   cJSON strings are NUL-terminated UTF-8.
 * - A float with an integral value (2.0, -0.0, 1e100) is {"$type": "float", "value": REPR}:
 *   every hop that parses JSON as doubles (cJSON in pyfenced, most clients) would print it back
 *   as an int. Other finite floats are cJSON *raw* nodes holding Python's repr ("0.1", "1e-05"),
 *   exact whatever prints the tree; test them with cJSON_IsRaw, not cJSON_IsNumber. The parts
 *   of a complex are plain (raw) numbers whatever their value. Ints within ±(2^53 - 1) are numbers.
 *
 * Runs user code: PyObject_Repr on objects without a structured form calls their __repr__, and
 * datetime.isoformat may call a user tzinfo's utcoffset(). The caller (the executor) is
 * responsible for running this under its budgets; an exception raised there is swallowed and
 * replaced by a placeholder repr naming the type. */
cJSON *exec_value_to_json(PyObject *obj, int max_depth);

/* A lower bound of the bytes obj's tagged JSON (as exec_value_to_json(obj, max_depth) makes it)
 * and its repr() take together, counted from str and bytes lengths and container sizes: no user
 * code runs and nothing is allocated. Counting stops once the bound passes `stop` (so a huge or
 * self-referencing value costs at most about stop / 2 steps); the value returned is then just
 * over `stop`. Lets a result that cannot fit max_result_bytes be refused before it is copied. */
uint64_t exec_value_size_floor(PyObject *obj, int max_depth, uint64_t stop);

/* Converts tagged JSON to a new reference. Strict: an unknown "$type", a tagged object with a
 * missing, extra or wrongly typed field, bad base64, a "repr" value, an unhashable dict key or
 * set item, or nesting deeper than EXEC_VALUE_MAX_DEPTH fails with PF_E_BAD_REQUEST and a
 * message that names the place ("value.items[2][0]: ..."). A plain JSON number is an int when
 * its value is integral (within ±(2^53 - 1); beyond, it is refused as inexact), else a float; an
 * integral float comes as {"$type": "float", "value": "1.0"}. Returns NULL with *err set (and no
 * Python exception pending) on failure. */
PyObject *exec_value_from_json(const cJSON *json, struct pf_error **err);

#endif
