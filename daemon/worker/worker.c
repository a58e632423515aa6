/* The worker process's main (worker.h) and what one run is: the first frame parsed into a
 * struct run_job, the cancellation state a signal handler sets, the executor environment, running
 * a snippet and shaping its result, and an ephemeral job's single run. How frames travel is in
 * worker_channel.c, a session's loop in worker_session.c, raw mode in worker_raw.c; what they
 * share is in worker_internal.h. */
#include "worker.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "config.h"
#include "exec.h"
#include "harden_internal.h"
#include "msg.h"
#include "msg_fit.h"
#include "pf_cleanup.h"
#include "policy_limits.h"
#include "warm_up.h"
#include "worker_internal.h"

/* ---- cancellation ------------------------------------------------------------------------
 * The daemon numbers the runs it sends a worker (CHANNEL.md, "run"): 1 for an ephemeral job;
 * 1, 2, 3... for a session's run frames. A cancel is SIGUSR1 that the zygote queues with
 * sigqueue() and the number of the run it is for as its value.
 *
 * The daemon sends the cancel for run N after writing N's frame and before reading N's result,
 * so it reaches this worker at one of three points:
 *   - before N has begun (the frame is still in the socket, or the worker is hardening, warming
 *     up, or has just sent run N-1's result): the number is the NEXT run's;
 *   - during N: the number is the current run's;
 *   - after N's result has gone (the daemon had not read it yet, or the zygote was slow): the
 *     number is a PAST run's, and a later run must not be stopped by it.
 * So the handler remembers the highest number it was given (cancelled_run: run numbers only grow,
 * so a late cancel for an older run never hides one for the next) and raises the executor's flag
 * only for the run under way (current_run). worker_run_begin() sets current_run first, then clears
 * the flag and raises it again if cancelled_run names the run. A cancel for the run that comes
 * before current_run is set is found in cancelled_run; one that comes after raises the flag
 * itself, or is found by that check if the clearing came after it. Either way the run is
 * cancelled, and a flag left by an earlier run's cancel is cleared. worker_run_end() puts
 * current_run back to 0 before the result is sent. On the main thread, which runs the snippets, the
 * handler interrupts that code and never runs beside it, so volatile accesses need no lock.
 *
 * A snippet's threads (where its profile's pids limit lets it have some) may take the signal
 * too. There the handler only records the number: it could be preempted between reading
 * current_run and raising the flag until the run has ended and the next one begun. The kernel
 * gives a process's signal to its main thread unless that one has another signal pending, so a
 * cancel is rarely lost this way, and then the daemon's grace-period kill ends the run.
 *
 * Only a queued signal (SI_QUEUE) names a run: a plain kill(SIGUSR1) does nothing. SIGUSR1 is a
 * standard signal, so two sent before the worker gets the CPU merge into the first: if a stale
 * cancel for N-1 and the one for N land together, the one for N is lost and the grace-period
 * kill ends run N, as for a snippet that does not stop. Either way, a run is never stopped by a
 * cancel meant for another. */
static volatile sig_atomic_t cancel_requested; /* the executor's cancel_flag */
static volatile sig_atomic_t current_run;      /* run under way; 0: none */
static _Atomic int cancelled_run; /* highest run a cancel came for; 0: none (any thread's) */

static void
on_cancel_signal(int sig, siginfo_t *si, void *ucontext)
{
    (void) sig, (void) ucontext;
    if (si->si_code != SI_QUEUE || si->si_value.sival_int <= 0)
        return;
    int run = si->si_value.sival_int;
    int seen = atomic_load(&cancelled_run);
    while (run > seen && !atomic_compare_exchange_weak(&cancelled_run, &seen, run))
        ;
    if (gettid() == getpid() && run == current_run)
        cancel_requested = 1;
}

/* Called as soon as run `run`'s frame is parsed, before its variables or code. */
void
worker_run_begin(int run)
{
    current_run = run;
    cancel_requested = 0;
    if (atomic_load(&cancelled_run) == run)
        cancel_requested = 1;
}

void
worker_run_end(void)
{
    current_run = 0;
    cancel_requested = 0;
}

/* message with every byte that is not part of well-formed UTF-8 made '?': a message that
 * quotes a client's value cut mid-character must still make a frame (the wire refuses bad
 * UTF-8), or the worker could only exit and a session would be lost over a bad request. */
static char *
utf8_repaired(const char *message)
{
    char *copy = strdup(message);
    if (!copy)
        return NULL;
    size_t len = strlen(copy), done = 0, bad;
    while (done < len && !msg_utf8_valid(copy + done, len - done, &bad)) {
        copy[done + bad] = '?';
        done += bad + 1;
    }
    return copy;
}

cJSON *
worker_failure_result(int code, const char *message)
{
    _cleanup_free_ char *text = message ? utf8_repaired(message) : NULL;
    cJSON *r = cJSON_CreateObject();
    cJSON *e = cJSON_CreateObject();
    if (!r || !e)
        _exit(1);
    cJSON_AddStringToObject(r, "event", "result");
    cJSON_AddStringToObject(r, "outcome", pf_code_name(code));
    cJSON_AddNullToObject(r, "output");
    cJSON_AddNullToObject(r, "output_repr");
    cJSON_AddStringToObject(r, "logs", "");
    cJSON_AddBoolToObject(r, "is_final_answer", false);
    cJSON_AddNullToObject(e, "type");
    cJSON_AddStringToObject(e, "message", text ? text : "out of memory");
    cJSON_AddNullToObject(e, "line");
    cJSON_AddNullToObject(e, "source");
    cJSON_AddItemToObject(r, "error", e);
    return r;
}

void
worker_fail_job(int fd, int code, const char *message, int status)
{
    worker_send_or_die(fd, worker_failure_result(code, message));
    _exit(status);
}

/* ---- the run frame ---------------------------------------------------------------------- */

/* Also the first frame of a session worker ("op": "session", no code). */
static const struct msg_field run_fields[] = {
        {"op", MSG_T_STRING, true, 1, 16},
        {"code", MSG_T_STRING, false, 0, WORKER_MAX_FRAME_BYTES},
        {"imports", MSG_T_STRING_ARRAY, false, 0, 4096},
        {"limits", MSG_T_OBJECT, false, 0, 0},
        {"variables", MSG_T_OBJECT, false, 0, 0},
        {"builtins_add", MSG_T_STRING_ARRAY, false, 0, 4096},
        {"builtins_remove", MSG_T_STRING_ARRAY, false, 0, 4096},
        {"run", MSG_T_INT, false, 1, INT_MAX}, /* "run" frames only; an ephemeral job's is 1 */
#if PYFENCE_RAW_MODE
        {"raw", MSG_T_BOOL, false, 0, 0}, /* raw mode: worker_raw.c */
#endif
};

/* The job limits the daemon resolved; absent ones keep the table's defaults. */
static int
limits_from_json(const cJSON *obj, struct policy_limits *lim, struct pf_error **err)
{
    policy_limits_init_defaults(lim);
    const cJSON *item;
    cJSON_ArrayForEach(item, obj) {
        enum policy_limit l = policy_limit_from_name(item->string);
        const struct policy_limit_def *d = policy_limit_def(l);
        if (!d || d->scope != POLICY_SCOPE_JOB)
            return pf_error_set(err, PF_E_BAD_REQUEST, "run.limits.%s: not a per-job limit",
                                item->string);
        double v = cJSON_IsNumber(item) ? item->valuedouble : -1;
        if (v != (double) (int64_t) v)
            return pf_error_set(err, PF_E_BAD_REQUEST, "run.limits.%s: must be an integer",
                                item->string);
        char field[64];
        snprintf(field, sizeof(field), "run.limits.%s", d->name);
        if (policy_limits_set(lim, l, (int64_t) v, field, err) < 0)
            return -1;
    }
    return 0;
}

/* The strings of root's array `field` (absent: none), in a new array that borrows them. */
static int
borrow_strings(const cJSON *root, const char *field, const char ***ret, size_t *ret_n,
               struct pf_error **err)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, field);
    if (!arr)
        return 0;
    const char **v = calloc((size_t) cJSON_GetArraySize(arr) + 1, sizeof(char *));
    if (!v)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    size_t n = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, arr)
        v[n++] = item->valuestring;
    *ret = v;
    *ret_n = n;
    return 0;
}

static int
parse_run(const char *payload, size_t len, struct run_job *job, struct pf_error **err)
{
    static const char *const default_imports[] = {EXEC_DEFAULT_IMPORTS};
    if (msg_parse(payload, len, MSG_MAX_DEPTH, &job->root, err) < 0)
        return -1;
    if (msg_check_fields(job->root, run_fields, PF_ELEMENTSOF(run_fields), "run", err) < 0)
        return -1;
    const char *op = msg_get_string(job->root, "op", "");
    job->session = strcmp(op, "session") == 0;
    if (strcmp(op, "run") != 0 && !job->session)
        return pf_error_set(err, PF_E_BAD_REQUEST,
                            "worker channel: expected op \"run\" or \"session\"");
    if (!job->session && !cJSON_GetObjectItemCaseSensitive(job->root, "code"))
        return pf_error_set(err, PF_E_BAD_REQUEST, "run: field 'code' is missing");
    if (job->session && cJSON_GetObjectItemCaseSensitive(job->root, "run"))
        return pf_error_set(err, PF_E_BAD_REQUEST,
                            "session: field 'run' belongs in the run frames that follow");
    job->run = (int) msg_get_int(job->root, "run", 1);
    if (job->run != 1)
        return pf_error_set(err, PF_E_BAD_REQUEST,
                            "run: field 'run' is %d, but an ephemeral job has one run, run 1",
                            job->run);
    job->code = msg_get_string(job->root, "code", "");
    job->variables = cJSON_GetObjectItemCaseSensitive(job->root, "variables");
    if (limits_from_json(cJSON_GetObjectItemCaseSensitive(job->root, "limits"), &job->limits, err) <
        0)
        return -1;
    if (borrow_strings(job->root, "builtins_add", &job->builtins_add, &job->n_builtins_add, err) <
                0 ||
        borrow_strings(job->root, "builtins_remove", &job->builtins_remove, &job->n_builtins_remove,
                       err) < 0)
        return -1;
    const cJSON *imports = cJSON_GetObjectItemCaseSensitive(job->root, "imports");
    if (!imports) {
        job->imports = malloc(sizeof(default_imports));
        if (!job->imports)
            return pf_error_set(err, PF_E_INTERNAL, "out of memory");
        memcpy(job->imports, default_imports, sizeof(default_imports));
        job->n_imports = PF_ELEMENTSOF(default_imports);
        return 0;
    }
    return borrow_strings(job->root, "imports", &job->imports, &job->n_imports, err);
}

/* ---- the result ------------------------------------------------------------------------- */

void
worker_replace_item(cJSON *obj, const char *name, cJSON *item)
{
    if (!item)
        _exit(1);
    if (cJSON_GetObjectItemCaseSensitive(obj, name))
        cJSON_ReplaceItemInObjectCaseSensitive(obj, name, item);
    else
        cJSON_AddItemToObject(obj, name, item);
}

/* Over max_result_bytes, the value is dropped and the outcome says which limit bit. */
static void
enforce_result_size(cJSON *res, uint64_t max)
{
    const cJSON *output = cJSON_GetObjectItemCaseSensitive(res, "output");
    const char *repr = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "output_repr"));
    _cleanup_free_ char *enc = output ? cJSON_PrintUnformatted(output) : NULL;
    size_t size = (enc ? strlen(enc) : 0) + (repr ? strlen(repr) : 0);
    if (size <= max)
        return;
    char msg[160];
    snprintf(msg, sizeof(msg), "result of %zu bytes exceeds max_result_bytes %llu", size,
             (unsigned long long) max);
    cJSON *e = cJSON_CreateObject();
    if (!e)
        _exit(1);
    cJSON_AddNullToObject(e, "type");
    cJSON_AddStringToObject(e, "message", msg);
    cJSON_AddNullToObject(e, "line");
    cJSON_AddNullToObject(e, "source");
    worker_replace_item(res, "outcome", cJSON_CreateString(pf_code_name(PF_E_OUTPUT_LIMIT)));
    worker_replace_item(res, "output", cJSON_CreateNull());
    worker_replace_item(res, "output_repr", cJSON_CreateNull());
    worker_replace_item(res, "error", e);
}

void
worker_add_usage(cJSON *res)
{
    cJSON *stats = cJSON_GetObjectItemCaseSensitive(res, "stats");
    if (!cJSON_IsObject(stats)) {
        stats = cJSON_CreateObject();
        worker_replace_item(res, "stats", stats);
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) < 0)
        return;
    uint64_t cpu_ms = (uint64_t) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                      (uint64_t) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
    worker_replace_item(stats, "cpu_ms", cJSON_CreateNumber((double) cpu_ms));
    worker_replace_item(stats, "max_rss_kb", cJSON_CreateNumber((double) ru.ru_maxrss));
}

static int egress_fd; /* the channel, for worker_egress_round_trip */

struct exec_env *
worker_new_env(int fd, const struct run_job *job)
{
    _cleanup_pf_error_ struct pf_error *err = NULL;
    struct exec_policy policy = {
            .imports = job->imports,
            .n_imports = job->n_imports,
            .max_ops = (uint64_t) job->limits.v[POLICY_LIMIT_MAX_OPS],
            .max_while_iterations = (uint64_t) job->limits.v[POLICY_LIMIT_MAX_WHILE_ITERATIONS],
            .max_recursion = (uint32_t) job->limits.v[POLICY_LIMIT_MAX_RECURSION],
            .max_output_bytes = (uint64_t) job->limits.v[POLICY_LIMIT_MAX_OUTPUT_BYTES],
            .max_log_chars = (uint32_t) job->limits.v[POLICY_LIMIT_MAX_LOG_CHARS],
            .timeout_ms = (uint64_t) job->limits.v[POLICY_LIMIT_TIMEOUT_MS],
            .max_result_bytes = (uint64_t) job->limits.v[POLICY_LIMIT_MAX_RESULT_BYTES],
            .cancel_flag = &cancel_requested,
            .builtins_add = job->builtins_add,
            .n_builtins_add = job->n_builtins_add,
            .builtins_remove = job->builtins_remove,
            .n_builtins_remove = job->n_builtins_remove,
            .egress = worker_egress_round_trip,
            .egress_userdata = &egress_fd,
    };
    egress_fd = fd;
    struct exec_env *env = job->spare_env;
    if (env && exec_env_configure(env, &policy, &err) < 0)
        worker_fail_job(fd, err ? err->code : PF_E_INTERNAL, err ? err->msg : NULL, 0);
    if (!env && !(env = exec_env_new(&policy, &err)))
        worker_fail_job(fd, err ? err->code : PF_E_INTERNAL, err ? err->msg : NULL, 0);
    if (job->variables && exec_env_set_variables(env, job->variables, &err) < 0)
        worker_fail_job(fd, err ? err->code : PF_E_INTERNAL, err ? err->msg : NULL, 0);
    return env;
}

void
worker_run_snippet(int fd, struct exec_env *env, const struct policy_limits *limits,
                   const char *code)
{
    /* last_flush_ms 0: the first line goes out at once */
    struct out_batch batch = {.fd = fd};
    cJSON *res = exec_env_run(env, code, worker_output, &batch);
    worker_run_end();
    worker_output_flush(&batch);
    free(batch.buf);
    if (!res)
        worker_fail_job(fd, PF_E_INTERNAL, "out of memory while running the snippet", 0);
    enforce_result_size(res, (uint64_t) limits->v[POLICY_LIMIT_MAX_RESULT_BYTES]);
    worker_add_usage(res);
    worker_replace_item(res, "event", cJSON_CreateString("result"));
    /* Limits near their maximum (a repr of control characters is 6 bytes a character as JSON)
     * can make more than a channel frame: cut, not lost with the worker. */
    msg_fit_exec_reply(res, WORKER_MAX_FRAME_BYTES, "the worker channel's frame");
    worker_send_or_die(fd, res);
    cJSON_Delete(res);
}

static _Noreturn void
run_job(int fd, struct run_job *job)
{
    struct exec_env *env = worker_new_env(fd, job);
    worker_run_snippet(fd, env, &job->limits, job->code);
    _exit(0);
}

void
worker_main(int channel_fd, const struct harden_params *params, struct exec_env *spare_env,
            struct exec_env *warm_env)
{
    struct harden_params p = *params;
    _cleanup_pf_error_ struct pf_error *err = NULL;

    /* The zygote blocks SIGCHLD for its signalfd, and SIGUSR1 until this handler exists (a
     * cancel sent early stays pending); a worker starts with a clean mask. SA_RESTART: a
     * cancel must not fail a system call of the snippet's. */
    struct sigaction sa = {.sa_sigaction = on_cancel_signal, .sa_flags = SA_RESTART | SA_SIGINFO};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* A write past RLIMIT_FSIZE (file_size_mb) must fail with EFBIG, an OSError the snippet
     * sees, not kill the worker: embedded CPython does not ignore SIGXFSZ as python3 does. */
    signal(SIGXFSZ, SIG_IGN);

    int fd = worker_harden(&p, channel_fd, &err);
    if (fd < 0) {
        /* The channel is at fd 3 once worker_harden got past its first step, else where it was;
         * stderr may be /dev/null already, so the channel is the only place to say why. */
        int at = fcntl(HARDEN_CHANNEL_FD, F_GETFD) >= 0 ? HARDEN_CHANNEL_FD : channel_fd;
        worker_fail_job(at, err ? err->code : PF_E_INTERNAL, err ? err->msg : NULL,
                        WORKER_EXIT_HARDEN_FAILED);
    }

    worker_warm_up(fd, warm_env);
    struct frame_slot slot = {NULL, 0};
    struct run_job job = {.spare_env = spare_env};
    if (worker_read_frame(fd, &slot, &err) < 0 || parse_run(slot.payload, slot.len, &job, &err) < 0)
        worker_fail_job(fd, err ? err->code : PF_E_INTERNAL, err ? err->msg : NULL, 0);
    if (!job.session)
        worker_run_begin(job.run);
    free(slot.payload);
    worker_channel_init();
#if PYFENCE_RAW_MODE
    if (msg_get_bool(job.root, "raw", false))
        worker_run_raw(fd, &job);
#endif
    if (job.session)
        worker_run_session(fd, &job);
    run_job(fd, &job);
}
