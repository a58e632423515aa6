#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "exec.h"
#include "frame.h"
#include "harden_internal.h"
#include "json_write.h"
#include "msg.h"
#include "msg_fit.h"
#include "pf_cleanup.h"
#include "policy_limits.h"
#include "warm_up.h"

#define OUTPUT_FLUSH_BYTES 4096
#define OUTPUT_FLUSH_MS    20
#define OUTPUT_CHUNK_BYTES (64 * 1024) /* one output frame's data, at most (before escaping) */

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
 * only for the run under way (current_run). run_begin() sets current_run first, then clears the
 * flag and raises it again if cancelled_run names the run. A cancel for the run that comes
 * before current_run is set is found in cancelled_run; one that comes after raises the flag
 * itself, or is found by that check if the clearing came after it. Either way the run is
 * cancelled, and a flag left by an earlier run's cancel is cleared. run_end() puts current_run
 * back to 0 before the result is sent. On the main thread, which runs the snippets, the handler
 * interrupts that code and never runs beside it, so volatile accesses need no lock.
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
static void
run_begin(int run)
{
    current_run = run;
    cancel_requested = 0;
    if (atomic_load(&cancelled_run) == run)
        cancel_requested = 1;
}

static void
run_end(void)
{
    current_run = 0;
    cancel_requested = 0;
}

static uint64_t
now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static int
send_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t) n;
    }
    return 0;
}

/* Sends obj as one frame; on failure the channel is gone and so is the worker's purpose. */
static void
send_or_die(int fd, const cJSON *obj)
{
    _cleanup_pf_error_ struct pf_error *err = NULL;
    _cleanup_free_ char *buf = NULL;
    size_t len;
    if (msg_encode(obj, WORKER_MAX_FRAME_BYTES, &buf, &len, &err) < 0 || send_all(fd, buf, len) < 0)
        _exit(1);
}

/* {"event": "result", "outcome": code, ...} for a failure outside the snippet itself. */
static cJSON *
failure_result(int code, const char *message)
{
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
    cJSON_AddStringToObject(e, "message", message ? message : "out of memory");
    cJSON_AddNullToObject(e, "line");
    cJSON_AddNullToObject(e, "source");
    cJSON_AddItemToObject(r, "error", e);
    return r;
}

static _Noreturn void
fail_job(int fd, int code, const char *message, int status)
{
    send_or_die(fd, failure_result(code, message));
    _exit(status);
}

/* ---- output batching ------------------------------------------------------------------- */

struct out_batch {
    int fd;
    char *buf;
    size_t len, cap;
    uint64_t last_flush_ms;
};

/* {"event":"output","data":"..."} written by hand: printed text may hold NUL characters, which
 * cJSON's NUL-terminated strings would cut. The wire refuses \u0000 (proto/msg.c), so a NUL
 * is sent as U+FFFD. */
static void
send_output_chunk(int fd, const char *data, size_t len)
{
    static const char head[] = "{\"event\":\"output\",\"data\":\"";
    _cleanup_free_ char *json = malloc(sizeof(head) + 6 * len + 2);
    if (!json)
        _exit(1);
    size_t n = sizeof(head) - 1;
    memcpy(json, head, n);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) data[i];
        if (c == '"' || c == '\\') {
            json[n++] = '\\';
            json[n++] = (char) c;
        } else if (c == 0) {
            memcpy(json + n, "\\ufffd", 6);
            n += 6;
        } else if (c < 0x20) {
            n += (size_t) snprintf(json + n, 7, "\\u%04x", c);
        } else {
            json[n++] = (char) c;
        }
    }
    json[n++] = '"';
    json[n++] = '}';
    _cleanup_pf_error_ struct pf_error *err = NULL;
    _cleanup_free_ char *frame = NULL;
    size_t flen;
    if (frame_encode(json, n, WORKER_MAX_FRAME_BYTES, &frame, &flen, &err) < 0 ||
        send_all(fd, frame, flen) < 0)
        _exit(1);
}

static void
batch_flush(struct out_batch *b)
{
    size_t off = 0;
    while (off < b->len) {
        size_t n = b->len - off;
        if (n > OUTPUT_CHUNK_BYTES) {
            /* Cut on a UTF-8 character boundary so every chunk is valid on its own. */
            n = OUTPUT_CHUNK_BYTES;
            while (n > 0 && ((unsigned char) b->buf[off + n] & 0xC0) == 0x80)
                n--;
        }
        send_output_chunk(b->fd, b->buf + off, n);
        off += n;
    }
    b->len = 0;
    b->last_flush_ms = now_ms();
}

/* Lines go out at once unless the last batch went less than OUTPUT_FLUSH_MS ago (a burst is
 * then sent as one event); the walk's clock checks (len 0) send what has waited that long. */
static void
on_output(void *userdata, const char *data, size_t len)
{
    struct out_batch *b = userdata;
    if (len == 0) {
        if (b->len > 0 && now_ms() - b->last_flush_ms >= OUTPUT_FLUSH_MS)
            batch_flush(b);
        return;
    }
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : OUTPUT_FLUSH_BYTES;
        while (cap < b->len + len)
            cap *= 2;
        char *nb = realloc(b->buf, cap);
        if (!nb)
            _exit(1);
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, data, len);
    b->len += len;
    if (b->len >= OUTPUT_FLUSH_BYTES ||
        (memchr(data, '\n', len) && now_ms() - b->last_flush_ms >= OUTPUT_FLUSH_MS))
        batch_flush(b);
}

/* ---- the run frame ---------------------------------------------------------------------- */

struct frame_slot {
    char *payload;
    size_t len;
};

static int
take_frame(void *userdata, char *payload, size_t len)
{
    struct frame_slot *slot = userdata;
    slot->payload = payload;
    slot->len = len;
    return -1; /* one frame is all a worker reads */
}

static int
read_frame(int fd, struct frame_slot *slot, struct pf_error **err)
{
    struct frame_decoder d;
    frame_decoder_init(&d, WORKER_MAX_FRAME_BYTES);
    char buf[64 * 1024];
    int r = -1;
    while (!slot->payload) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            pf_error_set_errno(err, PF_E_INTERNAL, errno, "worker channel: read");
            goto out;
        }
        if (n == 0) {
            pf_error_set(err, PF_E_INTERNAL, "worker channel closed before the run frame");
            goto out;
        }
        if (frame_decoder_feed(&d, buf, (size_t) n, take_frame, slot, err) < 0)
            goto out;
    }
    r = 0;
out:
    frame_decoder_finish(&d);
    return r;
}

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
        {"raw", MSG_T_BOOL, false, 0, 0}, /* raw mode: see the block above worker_main() */
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

struct run_job {
    struct exec_env *spare_env; /* the zygote's prebuilt environment, or NULL */
    cJSON *root;                /* owned */
    const char *code;
    const cJSON *variables;
    const char **imports; /* owned arrays; strings borrowed from root */
    size_t n_imports;
    const char **builtins_add, **builtins_remove;
    size_t n_builtins_add, n_builtins_remove;
    struct policy_limits limits;
    bool session; /* "op": "session": serve run/get frames until EOF (CHANNEL.md) */
    int run;      /* the run number of an ephemeral job's frame: 1 */
};

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

static void
replace_item(cJSON *obj, const char *name, cJSON *item)
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
    replace_item(res, "outcome", cJSON_CreateString(pf_code_name(PF_E_OUTPUT_LIMIT)));
    replace_item(res, "output", cJSON_CreateNull());
    replace_item(res, "output_repr", cJSON_CreateNull());
    replace_item(res, "error", e);
}

static void
add_usage(cJSON *res)
{
    cJSON *stats = cJSON_GetObjectItemCaseSensitive(res, "stats");
    if (!cJSON_IsObject(stats)) {
        stats = cJSON_CreateObject();
        replace_item(res, "stats", stats);
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) < 0)
        return;
    uint64_t cpu_ms = (uint64_t) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                      (uint64_t) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
    replace_item(stats, "cpu_ms", cJSON_CreateNumber((double) cpu_ms));
    replace_item(stats, "max_rss_kb", cJSON_CreateNumber((double) ru.ru_maxrss));
}

static cJSON *egress_round_trip(void *userdata, const cJSON *request);
static int egress_fd; /* the channel, for egress_round_trip */

static struct exec_env *
new_env(int fd, const struct run_job *job)
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
            .egress = egress_round_trip,
            .egress_userdata = &egress_fd,
    };
    egress_fd = fd;
    struct exec_env *env = job->spare_env;
    if (env && exec_env_configure(env, &policy, &err) < 0)
        fail_job(fd, err ? err->code : PF_E_INTERNAL, err ? err->msg : NULL, 0);
    if (!env && !(env = exec_env_new(&policy, &err)))
        fail_job(fd, err ? err->code : PF_E_INTERNAL, err ? err->msg : NULL, 0);
    if (job->variables && exec_env_set_variables(env, job->variables, &err) < 0)
        fail_job(fd, err ? err->code : PF_E_INTERNAL, err ? err->msg : NULL, 0);
    return env;
}

/* Runs one snippet and sends its result; env keeps the snippet's state for the next one. */
static void
run_snippet(int fd, struct exec_env *env, const struct policy_limits *limits, const char *code)
{
    /* last_flush_ms 0: the first line goes out at once */
    struct out_batch batch = {.fd = fd};
    cJSON *res = exec_env_run(env, code, on_output, &batch);
    run_end();
    batch_flush(&batch);
    free(batch.buf);
    if (!res)
        fail_job(fd, PF_E_INTERNAL, "out of memory while running the snippet", 0);
    enforce_result_size(res, (uint64_t) limits->v[POLICY_LIMIT_MAX_RESULT_BYTES]);
    add_usage(res);
    replace_item(res, "event", cJSON_CreateString("result"));
    /* Limits near their maximum (a repr of control characters is 6 bytes a character as JSON)
     * can make more than a channel frame: cut, not lost with the worker. */
    msg_fit_exec_reply(res, WORKER_MAX_FRAME_BYTES, "the worker channel's frame");
    send_or_die(fd, res);
    cJSON_Delete(res);
}

static _Noreturn void
run_job(int fd, struct run_job *job)
{
    struct exec_env *env = new_env(fd, job);
    run_snippet(fd, env, &job->limits, job->code);
    _exit(0);
}

/* ---- a session worker -------------------------------------------------------------------
 * After its "session" frame it answers one frame at a time, in order, until the daemon closes
 * the channel (CHANNEL.md). Bytes past a frame are kept for the next one. */

struct frame_reader {
    struct frame_decoder dec;
    size_t off, len;
    char buf[64 * 1024];
};

/* 1 with the next frame in *slot, 0 at EOF; a broken channel ends the worker. */
static int
next_frame(int fd, struct frame_reader *rd, struct frame_slot *slot)
{
    _cleanup_pf_error_ struct pf_error *err = NULL;
    slot->payload = NULL;
    for (;;) {
        if (rd->off < rd->len) {
            long n = frame_decoder_feed(&rd->dec, rd->buf + rd->off, rd->len - rd->off, take_frame,
                                        slot, &err);
            if (n < 0)
                _exit(1);
            rd->off += (size_t) n;
            if (slot->payload)
                return 1;
        }
        ssize_t n = read(fd, rd->buf, sizeof(rd->buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            _exit(1);
        if (n == 0)
            return 0;
        rd->off = 0;
        rd->len = (size_t) n;
    }
}

/* Everything the worker reads after its first frame: a session's requests, and the answers
 * to egress requests (which come while a run is under way). */
static struct frame_reader channel_rd;

/* http_request's round trip (exec_policy.egress): the request goes to pyfenced, which answers
 * with one frame before anything else (CHANNEL.md, "egress"). NULL ends the run. */
static cJSON *
egress_round_trip(void *userdata, const cJSON *request)
{
    int fd = *(const int *) userdata;
    send_or_die(fd, request);
    struct frame_slot slot;
    if (next_frame(fd, &channel_rd, &slot) <= 0)
        return NULL;
    _cleanup_free_ char *payload = slot.payload;
    _cleanup_pf_error_ struct pf_error *err = NULL;
    cJSON *answer = NULL;
    if (msg_parse(payload, slot.len, MSG_MAX_DEPTH, &answer, &err) < 0)
        return NULL;
    if (strcmp(msg_get_string(answer, "op", ""), "egress") != 0) {
        cJSON_Delete(answer);
        return NULL;
    }
    return answer;
}

static const struct msg_field session_req_fields[] = {
        {"op", MSG_T_STRING, true, 1, 16},
        {"code", MSG_T_STRING, false, 0, WORKER_MAX_FRAME_BYTES},
        {"run", MSG_T_INT, false, 1, INT_MAX},
        {"variables", MSG_T_OBJECT, false, 0, 0},
        {"names", MSG_T_STRING_ARRAY, false, 0, 4096},
};

/* Variables larger than max_result_bytes as JSON are refused as a result is (and could
 * otherwise pass the channel's frame and end the worker): the session goes on. */
static cJSON *
variables_too_large(const cJSON *vars, uint64_t max)
{
    _cleanup_free_ char *buf = NULL;
    _cleanup_pf_error_ struct pf_error *err = NULL;
    size_t len;
    if (json_write(vars, 0, (size_t) max, &buf, &len, &err) == 0)
        return NULL;
    char msg[200];
    if (err && err->code == PF_E_TOO_LARGE)
        snprintf(msg, sizeof(msg),
                 "the variables asked for exceed max_result_bytes %llu as JSON; ask for fewer "
                 "names, or read a part of a value with a snippet",
                 (unsigned long long) max);
    else
        snprintf(msg, sizeof(msg), "the variables could not be sent: %s",
                 err ? err->msg : "out of memory");
    cJSON *ev = cJSON_CreateObject();
    if (!ev || !cJSON_AddStringToObject(ev, "event", "variables") ||
        !cJSON_AddStringToObject(ev, "error", msg))
        _exit(1);
    return ev;
}

static void
session_get(int fd, struct exec_env *env, const struct policy_limits *limits, const cJSON *req)
{
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(req, "names");
    _cleanup_free_ const char **v = calloc((size_t) cJSON_GetArraySize(names) + 1, sizeof(*v));
    if (!v)
        _exit(1);
    size_t n = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, names)
        v[n++] = item->valuestring;
    cJSON *vars = exec_env_get_variables(env, v, n);
    cJSON *refused =
            vars ? variables_too_large(vars, (uint64_t) limits->v[POLICY_LIMIT_MAX_RESULT_BYTES])
                 : NULL;
    if (refused) {
        cJSON_Delete(vars);
        send_or_die(fd, refused);
        cJSON_Delete(refused);
        return;
    }
    cJSON *ev = cJSON_CreateObject();
    if (!vars || !ev || !cJSON_AddStringToObject(ev, "event", "variables") ||
        !cJSON_AddItemToObject(ev, "variables", vars))
        _exit(1);
    send_or_die(fd, ev);
    cJSON_Delete(ev);
}

/* One request of the daemon's; a frame it could not have sent ends the worker. *runs counts
 * the run frames so far: the next one is run *runs + 1, and says so when it names its number. */
static void
session_request(int fd, struct exec_env *env, const struct run_job *job, int *runs,
                const char *payload, size_t len)
{
    _cleanup_pf_error_ struct pf_error *err = NULL;
    _cleanup_json_ cJSON *req = NULL;
    if (msg_parse(payload, len, MSG_MAX_DEPTH, &req, &err) < 0 ||
        msg_check_fields(req, session_req_fields, PF_ELEMENTSOF(session_req_fields), "session",
                         &err) < 0)
        _exit(1);
    const char *op = msg_get_string(req, "op", "");
    if (strcmp(op, "get") == 0) {
        session_get(fd, env, &job->limits, req);
        return;
    }
    const char *code = msg_get_string(req, "code", NULL);
    if (strcmp(op, "run") != 0 || !code || *runs == INT_MAX ||
        msg_get_int(req, "run", *runs + 1) != *runs + 1)
        _exit(1);
    run_begin(++*runs);
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(req, "variables");
    if (vars && exec_env_set_variables(env, vars, &err) < 0) {
        run_end();
        cJSON *r = failure_result(err ? err->code : PF_E_INTERNAL, err ? err->msg : NULL);
        send_or_die(fd, r);
        cJSON_Delete(r);
        return;
    }
    run_snippet(fd, env, &job->limits, code);
}

static _Noreturn void
run_session(int fd, struct run_job *job)
{
    struct exec_env *env = new_env(fd, job);
    _cleanup_json_ cJSON *ready = cJSON_CreateObject();
    if (!ready || !cJSON_AddStringToObject(ready, "event", "ready"))
        _exit(1);
    send_or_die(fd, ready);
    struct frame_slot slot;
    int runs = 0;
    while (next_frame(fd, &channel_rd, &slot) > 0) {
        session_request(fd, env, job, &runs, slot.payload, slot.len);
        free(slot.payload);
    }
    _exit(0);
}

/* ---- raw mode (test builds only) ----------------------------------------------------------
 * Hardening engineer's block. With -Draw_mode=true, a run frame with "raw": true runs its code
 * as native CPython (PyRun_String in a fresh dict, stdout and stderr captured), bypassing the
 * executor, so that tests/security can show each OS layer holds on its own. Release builds
 * refuse to compile it. */
#if PYFENCE_RAW_MODE
#    if defined(NDEBUG)
#        error "raw_mode lets workers run native code: test builds only, never a release build"
#    endif
#    include <Python.h>

/* The text of the pending exception as "Type: message" (cleared). */
static char *
raw_exception_text(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *name = type ? ((PyTypeObject *) type)->tp_name : "Error";
    const char *msg = s ? PyUnicode_AsUTF8(s) : NULL;
    char *out = NULL;
    if (asprintf(&out, "%s: %s", name, msg ? msg : "") < 0)
        out = NULL;
    PyErr_Clear();
    Py_XDECREF(s);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return out;
}

static _Noreturn void
run_raw(int fd, const struct run_job *job)
{
    static const char prelude[] = "import io as _io, sys as _sys\n"
                                  "_pf_out = _io.StringIO()\n"
                                  "_sys.stdout = _sys.stderr = _pf_out\n";
    PyObject *globals = PyDict_New();
    if (!globals || PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) < 0)
        fail_job(fd, PF_E_INTERNAL, "raw mode: cannot make the globals", 0);
    PyObject *r = PyRun_String(prelude, Py_file_input, globals, globals);
    if (!r)
        fail_job(fd, PF_E_INTERNAL, "raw mode: cannot capture stdout", 0);
    Py_DECREF(r);
    r = PyRun_String(job->code, Py_file_input, globals, globals);
    /* As the executor reports it: the address-space rlimit refused an allocation. */
    bool oom = !r && PyErr_ExceptionMatches(PyExc_MemoryError);
    _cleanup_free_ char *error = r ? NULL : raw_exception_text();
    Py_XDECREF(r);
    PyObject *out = PyDict_GetItemString(globals, "_pf_out"); /* borrowed */
    PyObject *text = out ? PyObject_CallMethod(out, "getvalue", NULL) : NULL;
    const char *logs = text ? PyUnicode_AsUTF8(text) : NULL;
    cJSON *res = cJSON_CreateObject();
    if (!res)
        _exit(1);
    cJSON_AddStringToObject(res, "outcome",
                            r ? "ok" : pf_code_name(oom ? PF_E_MEMORY_LIMIT : PF_E_ERROR));
    cJSON_AddNullToObject(res, "output");
    cJSON_AddNullToObject(res, "output_repr");
    cJSON_AddStringToObject(res, "logs", logs ? logs : "");
    cJSON_AddBoolToObject(res, "is_final_answer", false);
    if (r) {
        cJSON_AddNullToObject(res, "error");
    } else {
        cJSON *e = cJSON_AddObjectToObject(res, "error");
        if (e) {
            cJSON_AddNullToObject(e, "type");
            cJSON_AddStringToObject(e, "message", error ? error : "error");
            cJSON_AddNullToObject(e, "line");
            cJSON_AddNullToObject(e, "source");
        }
    }
    add_usage(res);
    replace_item(res, "event", cJSON_CreateString("result"));
    send_or_die(fd, res);
    _exit(0);
}
#endif

void
worker_main(int channel_fd, const struct harden_params *params, struct exec_env *spare_env)
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
        fail_job(at, PF_E_INTERNAL, err ? err->msg : NULL, WORKER_EXIT_HARDEN_FAILED);
    }

    worker_warm_up(fd);
    struct frame_slot slot = {NULL, 0};
    struct run_job job = {.spare_env = spare_env};
    if (read_frame(fd, &slot, &err) < 0 || parse_run(slot.payload, slot.len, &job, &err) < 0)
        fail_job(fd, err ? err->code : PF_E_INTERNAL, err ? err->msg : NULL, 0);
    if (!job.session)
        run_begin(job.run);
    free(slot.payload);
    frame_decoder_init(&channel_rd.dec, WORKER_MAX_FRAME_BYTES);
#if PYFENCE_RAW_MODE
    if (msg_get_bool(job.root, "raw", false))
        run_raw(fd, &job);
#endif
    if (job.session)
        run_session(fd, &job);
    run_job(fd, &job);
}
