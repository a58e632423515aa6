/* The executor: an AST-walking interpreter in C on top of embedded CPython, and the policy
 * layer. CPython parses (PyCF_ONLY_AST); the executor compiles that tree once into its own
 * compact node tree and walks it, doing every value operation through CPython's object protocol.
 * Non-logging module: errors are returned, never printed. Used by the worker (daemon/worker/)
 * and by the tests; never by pyfenced itself. */
#ifndef DAEMON_EXECUTOR_EXEC_H
#define DAEMON_EXECUTOR_EXEC_H

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pf_error.h"

/* smolagents' base list of importable modules. */
#define EXEC_DEFAULT_IMPORTS                                                                       \
    "collections", "datetime", "itertools", "math", "queue", "random", "re", "stat", "statistics", \
            "time", "unicodedata"

struct exec_policy {
    /* Allowed imports: "pkg" allows the module pkg; "pkg.*" allows pkg and its submodules. */
    const char *const *imports;
    size_t n_imports;
    uint64_t max_ops;              /* evaluated nodes; default 10,000,000 */
    uint64_t max_while_iterations; /* per while loop; default 1,000,000 */
    uint32_t max_recursion;        /* executor call depth */
    uint64_t max_output_bytes;     /* total print bytes before an output_limit outcome */
    uint32_t max_log_chars;        /* `logs` keeps head and tail within this; default 50,000 */
    uint64_t timeout_ms;           /* wall-clock deadline checked during the walk; 0 = none */
    /* A result whose output and output_repr together surely exceed this (counted from its str
     * and bytes lengths before converting) is outcome "output_limit" without being converted;
     * 0 = no bound. The worker still checks the converted result exactly. */
    uint64_t max_result_bytes;
    /* Set to non-zero (by a signal handler: the worker's SIGUSR1) to end the run with outcome
     * "cancelled", checked where the deadline is. NULL: none. Not owned. */
    volatile sig_atomic_t *cancel_flag;
    /* A profile's changes to the builtins (policy/builtin_names.h): names to add, from
     * POLICY_ADDABLE_BUILTINS only, and default ones to remove. Anything else is refused.
     * Borrowed, and only read while the environment is configured. */
    const char *const *builtins_add;
    size_t n_builtins_add;
    const char *const *builtins_remove;
    size_t n_builtins_remove;
    /* http_request() hands its request to this hook: {"event": "egress", "method", "url",
     * "headers"?, "body"? (standard base64)}. The answer, owned by the caller, is {"reply":
     * {"status", "headers", "body" (base64)}} or {"error": {"type", "message"}} (the worker's
     * channel frames, daemon/worker/CHANNEL.md); NULL ends the run (the channel is gone). A
     * NULL hook: http_request refuses every request. */
    cJSON *(*egress)(void *userdata, const cJSON *request);
    void *egress_userdata;
};

/* Initialises embedded CPython for executor use (isolated config, no site, no user env).
 * Idempotent. Called once in the zygote (before forking) and in tests. */
int exec_python_init(struct pf_error **err);
/* Imports each module once so that forks share it (the zygote's preload). */
int exec_preload(const char *const *modules, size_t n, struct pf_error **err);

/* A persistent namespace plus its policy: one per ephemeral job, or one per session. */
struct exec_env;

struct exec_env *exec_env_new(const struct exec_policy *policy, struct pf_error **err);
/* exec_env_new() in two steps. The zygote prebuilds one environment (its namespace and
 * builtins: the costly part) before forking, and each worker configures its copy for its job
 * instead of building its own: a fork-per-job worker is its copy's only user, and every object
 * it would otherwise build or reference is a page it copies. An environment is configured
 * once; running one that was not is refused (exec_env_run returns NULL). */
struct exec_env *exec_env_prebuild(struct pf_error **err);
int exec_env_configure(struct exec_env *env, const struct exec_policy *policy,
                       struct pf_error **err);
struct exec_env *exec_env_free(struct exec_env *env);

/* Injects variables, given as an object of name → tagged JSON value (PROTOCOL.md "Values"). */
int exec_env_set_variables(struct exec_env *env, const cJSON *vars, struct pf_error **err);
/* Reads the named variables back as tagged JSON: {name: value}; missing names are omitted.
 * NULL with *err: PF_E_TOO_LARGE when they surely exceed the policy's max_result_bytes as
 * JSON (found before converting anything), PF_E_INTERNAL when converting ran out of memory.
 * A result within the bound can still exceed it once converted: the caller checks that. */
cJSON *exec_env_get_variables(struct exec_env *env, const char *const *names, size_t n,
                              struct pf_error **err);

/* Receives print output as it is produced (already counted against max_output_bytes). Also
 * called with (NULL, 0) from the walk's clock checks, so that a caller batching output can
 * send what has waited too long while the snippet computes without printing. */
typedef void (*exec_output_cb)(void *userdata, const char *data, size_t len);

/* Runs one snippet in env. Never returns NULL except on allocation failure or for an env that
 * was prebuilt and never configured. The result object:
 *   "outcome":        "ok" | "error" | "timeout" | "output_limit" | "memory_limit" |
 *                     "cancelled"
 *   "output":         tagged JSON of the last expression / final_answer value (null otherwise)
 *   "output_repr":    repr() of it, or null when it is None
 *   (a value over policy.max_result_bytes is "output_limit"; one whose JSON form or repr()
 *   runs out of memory is "memory_limit")
 *   "logs":           captured print output (head and tail kept within max_log_chars)
 *   "is_final_answer": bool
 *   "error":          (outcome != "ok") {"type", "message", "line", "source"}; message is
 *                     "Code execution failed at line '<source>' due to: <Type>: <msg>" or
 *                     "Code parsing failed on line N due to: SyntaxError: ..."; message and
 *                     source keep head and tail within max_log_chars, as logs do
 *   "stats":          {"ops": evaluated nodes, "run_ms": wall time in the executor}
 */
cJSON *exec_env_run(struct exec_env *env, const char *code, exec_output_cb cb, void *userdata);

#endif
