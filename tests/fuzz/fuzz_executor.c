/* Fuzzes the executor (daemon/executor/exec.h) with snippets: the input is Python source, cut
 * into cells at lines that read "#%%", run one after the other in one environment as a
 * session runs them. Oracles beyond "no crash, no sanitizer report":
 * - every run returns a result with a known outcome, an error message when it is not "ok",
 *   and the exception's type as well when it is "error";
 * - no Python exception is left pending after a run (it would leak into the next one);
 * - every output chunk handed to the callback is valid UTF-8 (the worker sends it as is);
 * - the result, cut to the worker's channel frame as the worker cuts it, encodes (a snippet
 *   that made it unencodable would kill its worker without a reply), and so do the named
 *   variables session.get would read back.
 * Python's own memory is held to a budget by a hook on its allocators, so that a snippet
 * asking for too much gets MemoryError (as RLIMIT_AS gives it in a worker) instead of taking
 * the fuzzer's process down. Modules that can block (time.sleep, queue) are not importable
 * here: a worker's wall-clock limit ends those, and this process has none.
 * FUZZ_EXECUTOR_VERBOSE=1 prints each cell's result to stderr. */
#include <Python.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "fuzz.h"
#include "msg.h"
#include "msg_fit.h"
#include "pf_cleanup.h"

#define FUZZ_MEMORY_BUDGET (256u * 1024 * 1024)
#define FUZZ_MAX_CELLS     4
#define FUZZ_FRAME_BYTES   (64u * 1024 * 1024) /* WORKER_MAX_FRAME_BYTES */

static const char *const fuzz_imports[] = {"collections", "datetime",   "itertools",
                                           "math",        "random",     "re",
                                           "stat",        "statistics", "unicodedata"};

/* ---- memory budget ---------------------------------------------------------------------- */

/* Bytes Python holds from malloc (the raw domain, which pymalloc also uses for blocks over
 * 512 bytes) and in pymalloc's arenas. Signed: blocks allocated before the hook was installed
 * are subtracted when freed. */
static long long python_bytes;
static PyMemAllocatorEx raw_orig;
static PyObjectArenaAllocator arena_orig;

static bool
budget_allows(size_t n)
{
    return n <= FUZZ_MEMORY_BUDGET && python_bytes + (long long) n <= FUZZ_MEMORY_BUDGET;
}

static void
budget_count(void *p, long long sign)
{
    if (p)
        python_bytes += sign * (long long) malloc_usable_size(p);
}

static void *
raw_malloc(void *ctx, size_t n)
{
    (void) ctx;
    void *p = budget_allows(n) ? raw_orig.malloc(raw_orig.ctx, n) : NULL;
    budget_count(p, 1);
    return p;
}

static void *
raw_calloc(void *ctx, size_t nelem, size_t elsize)
{
    (void) ctx;
    if (elsize && nelem > FUZZ_MEMORY_BUDGET / elsize)
        return NULL;
    void *p = budget_allows(nelem * elsize) ? raw_orig.calloc(raw_orig.ctx, nelem, elsize) : NULL;
    budget_count(p, 1);
    return p;
}

static void *
raw_realloc(void *ctx, void *old, size_t n)
{
    (void) ctx;
    size_t before = old ? malloc_usable_size(old) : 0;
    if (n > before && !budget_allows(n - before))
        return NULL;
    void *p = raw_orig.realloc(raw_orig.ctx, old, n);
    if (p) {
        python_bytes -= (long long) before;
        budget_count(p, 1);
    }
    return p;
}

static void
raw_free(void *ctx, void *p)
{
    (void) ctx;
    budget_count(p, -1);
    raw_orig.free(raw_orig.ctx, p);
}

static void *
arena_alloc(void *ctx, size_t n)
{
    (void) ctx;
    void *p = budget_allows(n) ? arena_orig.alloc(arena_orig.ctx, n) : NULL;
    if (p)
        python_bytes += (long long) n;
    return p;
}

static void
arena_free(void *ctx, void *p, size_t n)
{
    (void) ctx;
    python_bytes -= (long long) n;
    arena_orig.free(arena_orig.ctx, p, n);
}

/* Wraps the allocators Python already uses (allowed after start-up for hooks that call the
 * previous allocator, as these do). */
static void
install_budget(void)
{
    PyMem_GetAllocator(PYMEM_DOMAIN_RAW, &raw_orig);
    PyMemAllocatorEx raw = {NULL, raw_malloc, raw_calloc, raw_realloc, raw_free};
    PyMem_SetAllocator(PYMEM_DOMAIN_RAW, &raw);
    PyObject_GetArenaAllocator(&arena_orig);
    PyObjectArenaAllocator arena = {NULL, arena_alloc, arena_free};
    PyObject_SetArenaAllocator(&arena);
}

/* ---- oracles ----------------------------------------------------------------------------- */

/* Says which oracle failed before aborting (the abort is what libFuzzer reports). */
static _Noreturn void
fail(const char *why)
{
    fprintf(stderr, "fuzz_executor: %s\n", why);
    if (PyErr_Occurred())
        PyErr_Print();
    abort();
}

static void
check_output(void *userdata, const char *data, size_t len)
{
    (void) userdata;
    if (data && !msg_utf8_valid(data, len, NULL))
        fail("an output chunk is not valid UTF-8");
}

static bool
is_string_member(const cJSON *obj, const char *name)
{
    return cJSON_IsString(cJSON_GetObjectItemCaseSensitive(obj, name));
}

static void
check_result(cJSON *res)
{
    static const char *const outcomes[] = {"ok",           "error",        "timeout",
                                           "output_limit", "memory_limit", "cancelled"};
    if (!res || PyErr_Occurred())
        fail("no result, or a Python exception left pending");
    const cJSON *outcome = cJSON_GetObjectItemCaseSensitive(res, "outcome");
    if (!cJSON_IsString(outcome))
        fail("the result has no outcome");
    bool known = false;
    for (size_t i = 0; i < PF_ELEMENTSOF(outcomes); i++)
        known = known || strcmp(outcome->valuestring, outcomes[i]) == 0;
    if (!known)
        fail("unknown outcome");
    /* Every outcome but "ok" says why; an exception also names its type (a limit has none). */
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(res, "error");
    if (strcmp(outcome->valuestring, "ok") != 0 && !is_string_member(error, "message"))
        fail("an outcome that is not ok without an error message");
    if (strcmp(outcome->valuestring, "error") == 0 && !is_string_member(error, "type"))
        fail("an error without a type");
    if (msg_fit_exec_reply(res, FUZZ_FRAME_BYTES, "the fuzzer's frame") < 0)
        fail("the result cannot be cut to a frame");
    char *buf = NULL;
    size_t len;
    struct pf_error *err = NULL;
    if (msg_encode(res, FUZZ_FRAME_BYTES, &buf, &len, &err) < 0)
        fail("the result does not encode");
    free(buf);
}

/* The names a snippet most likely bound, read back as session.get reads them. */
static void
check_variables(struct exec_env *env)
{
    static const char *const names[] = {"x", "y", "a", "b", "result", "data", "g", "f"};
    struct pf_error *err = NULL;
    cJSON *vars = exec_env_get_variables(env, names, PF_ELEMENTSOF(names), &err);
    if (PyErr_Occurred() || (!vars && !err))
        fail("reading variables back left an exception pending, or failed without saying why");
    char *buf = NULL;
    size_t len;
    if (vars && msg_encode(vars, FUZZ_FRAME_BYTES, &buf, &len, &err) < 0)
        fail("the variables read back do not encode");
    free(buf);
    cJSON_Delete(vars);
    pf_error_free(err);
}

/* FUZZ_EXECUTOR_VERBOSE=1: what each cell did, to see what an input exercises. */
static void
print_result(const cJSON *res)
{
    char *text = cJSON_PrintUnformatted(res);
    fprintf(stderr, "%s\n", text ? text : "(unprintable)");
    free(text);
}

/* ---- the target -------------------------------------------------------------------------- */

static void
init_once(void)
{
    static bool done;
    if (done)
        return;
    struct pf_error *err = NULL;
    size_t n = PF_ELEMENTSOF(fuzz_imports);
    if (exec_python_init(&err) < 0 || exec_preload(fuzz_imports, n, &err) < 0) {
        fprintf(stderr, "fuzz_executor: %s\n", err ? err->msg : "set-up failed");
        abort();
    }
    install_budget();
    done = true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A snippet reaches the worker as a JSON string: valid UTF-8 (the wire refuses anything
     * else, escapes included) without NUL (the wire refuses \u0000). */
    if (memchr(data, '\0', size) || !msg_utf8_valid((const char *) data, size, NULL))
        return 0;
    init_once();
    bool verbose = getenv("FUZZ_EXECUTOR_VERBOSE") != NULL;
    char *code = malloc(size + 1);
    if (!code)
        fail("out of memory");
    memcpy(code, data, size);
    code[size] = '\0';

    struct exec_policy policy = {
            .imports = fuzz_imports,
            .n_imports = PF_ELEMENTSOF(fuzz_imports),
            .max_ops = 50000,
            .max_while_iterations = 10000,
            .max_output_bytes = 64 * 1024,
            .max_log_chars = 4096,
            .timeout_ms = 2000,
            .max_result_bytes = 64 * 1024,
    };
    struct pf_error *err = NULL;
    struct exec_env *env = exec_env_new(&policy, &err);
    if (!env)
        fail("exec_env_new failed");
    char *cell = code;
    for (int i = 0; cell && i < FUZZ_MAX_CELLS; i++) {
        char *next = strstr(cell, "\n#%%\n");
        if (next) {
            *next = '\0';
            next += strlen("\n#%%\n");
        }
        cJSON *res = exec_env_run(env, cell, check_output, NULL);
        if (verbose)
            print_result(res);
        check_result(res);
        cJSON_Delete(res);
        cell = next;
    }
    check_variables(env);
    exec_env_free(env);
    free(code);
    return 0;
}
