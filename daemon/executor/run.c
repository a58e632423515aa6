/* One run of a snippet in an environment, and the result object exec.h describes. */
#include <string.h>

#include "exec_internal.h"
#include "pf_cleanup.h"
#include "value.h"

static const char *const outcome_names[] = {"ok",           "error",        "timeout",
                                            "output_limit", "memory_limit", "cancelled"};
enum outcome { OUT_OK, OUT_ERROR, OUT_TIMEOUT, OUT_OUTPUT, OUT_MEMORY, OUT_CANCELLED };

struct run_error {
    char *type;
    char *message;
    char *source;
    uint32_t line;
};

/* Counts UTF-8 code points; returns the byte offset of code point `chars` (or len). */
static size_t
utf8_offset(const char *s, size_t len, size_t chars)
{
    size_t i = 0;
    for (size_t c = 0; i < len; i++) {
        if (((unsigned char) s[i] & 0xC0) != 0x80) {
            if (c == chars)
                return i;
            c++;
        }
    }
    return len;
}

static size_t
utf8_len(const char *s, size_t len)
{
    size_t c = 0;
    for (size_t i = 0; i < len; i++)
        c += ((unsigned char) s[i] & 0xC0) != 0x80;
    return c;
}

/* A copy of s[0..len) with each NUL character as U+FFFD, NUL-terminated (*ret_len without it);
 * NULL when out of memory. The wire refuses \u0000 (proto/msg.c) and C strings would end
 * there, hiding whatever was printed after it: output events send it the same way. */
static char *
without_nul(const char *s, size_t len, size_t *ret_len)
{
    size_t nuls = 0;
    for (size_t i = 0; i < len; i++)
        nuls += s[i] == '\0';
    char *out = malloc(len + 2 * nuls + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '\0') {
            out[o++] = s[i];
            continue;
        }
        memcpy(out + o, "\xEF\xBF\xBD", 3);
        o += 3;
    }
    out[o] = '\0';
    *ret_len = o;
    return out;
}

/* smolagents' truncate_content: head and tail, with a marker line between. For the logs, and
 * for an error's message and source, which quote what the snippet made (a 100 MB exception
 * message would otherwise travel whole). */
static cJSON *
cut_text_json(const char *raw, size_t raw_len, uint32_t max)
{
    size_t len;
    _cleanup_free_ char *text = without_nul(raw, raw_len, &len);
    if (!text)
        return NULL;
    size_t chars = utf8_len(text, len);
    if (chars <= max)
        return cJSON_CreateString(text);
    size_t head = utf8_offset(text, len, max / 2);
    size_t tail = utf8_offset(text, len, chars - (max - max / 2));
    char *out = NULL;
    if (asprintf(&out,
                 "%.*s\n..._This content has been truncated to stay below %u characters_...\n%s",
                 (int) head, text, max, text + tail) < 0)
        return NULL;
    cJSON *j = cJSON_CreateString(out);
    free(out);
    return j;
}

static char *
exc_str(PyObject *value)
{
    PyObject *s = value ? PyObject_Str(value) : NULL;
    /* a message may quote a lone surrogate the snippet made: shown escaped, as repr would */
    PyObject *b = s ? PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace") : NULL;
    size_t len;
    char *out = b ? without_nul(PyBytes_AS_STRING(b), (size_t) PyBytes_GET_SIZE(b), &len)
                  : strdup("<exception str() failed>");
    if (!b)
        PyErr_Clear();
    Py_XDECREF(b);
    Py_XDECREF(s);
    return out;
}

static int
syntax_error(struct run_error *e)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    const char *tname = type ? _PyType_Name((PyTypeObject *) type) : "SyntaxError";
    long lineno = 0, offset = 0;
    _cleanup_free_ char *msg = NULL, *text = NULL;
    if (value && PyObject_TypeCheck(value, (PyTypeObject *) PyExc_SyntaxError)) {
        PySyntaxErrorObject *se = (PySyntaxErrorObject *) value;
        lineno = se->lineno && PyLong_Check(se->lineno) ? PyLong_AsLong(se->lineno) : 0;
        offset = se->offset && PyLong_Check(se->offset) ? PyLong_AsLong(se->offset) : 0;
        msg = exc_str(se->msg);
        const char *t = se->text && PyUnicode_Check(se->text) ? PyUnicode_AsUTF8(se->text) : NULL;
        text = t ? strdup(t) : NULL;
    } else {
        msg = exc_str(value);
    }
    PyErr_Clear();
    if (text) {
        size_t l = strlen(text);
        while (l && (text[l - 1] == '\n' || text[l - 1] == '\r'))
            text[--l] = '\0';
    }
    int caret = offset > 1 && offset < 10000 ? (int) offset - 1 : 0;
    int rc;
    if (text)
        rc = asprintf(&e->message, "Code parsing failed on line %ld due to: %s: %s\n%s\n%*s^",
                      lineno, tname, msg ? msg : "?", text, caret, "");
    else
        rc = asprintf(&e->message, "Code parsing failed on line %ld due to: %s: %s", lineno, tname,
                      msg ? msg : "?");
    e->type = strdup(tname);
    e->source = text ? strdup(text) : NULL;
    e->line = (uint32_t) lineno;
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return rc < 0 ? -1 : 0;
}

/* The failure of a top-level statement, and the outcome it makes. */
static enum outcome
runtime_error(struct exec_run *r, const struct node *stmt, struct run_error *e)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    enum outcome out = OUT_ERROR;
    if (r->abort == ABORT_TIMEOUT)
        out = OUT_TIMEOUT;
    else if (r->abort == ABORT_OUTPUT)
        out = OUT_OUTPUT;
    else if (r->abort == ABORT_CANCEL)
        out = OUT_CANCELLED;
    else if (type && PyErr_GivenExceptionMatches(type, PyExc_MemoryError))
        out = OUT_MEMORY;
    if (r->abort != ABORT_NONE && r->abort_msg) {
        /* the refusal, even if CPython code turned it into another exception on the way */
        e->type = strdup("InterpreterError");
        e->message = exc_str(r->abort_msg);
    } else {
        e->type = strdup(type ? _PyType_Name((PyTypeObject *) type) : "Error");
        e->message = exc_str(value);
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    e->source = exec_tree_segment(r->tree, stmt);
    e->line = stmt->lineno;
    char *full = NULL;
    if (asprintf(&full, "Code execution failed at line '%s' due to: %s: %s",
                 e->source ? e->source : "", e->type ? e->type : "Error",
                 e->message ? e->message : "") >= 0) {
        free(e->message);
        e->message = full;
    }
    PyErr_Clear();
    return out;
}

/* Returns -1 when the value's JSON form or its repr() could not be made for lack of memory
 * (the result then says nothing true about the value). */
static int
add_output(struct exec_run *r, cJSON *res, PyObject *value)
{
    if (!value || value == Py_None) {
        cJSON_AddNullToObject(res, "output");
        cJSON_AddNullToObject(res, "output_repr");
        return 0;
    }
    cJSON *j = exec_value_to_json(value, EXEC_VALUE_MAX_DEPTH);
    if (!j) {
        cJSON_AddNullToObject(res, "output");
        cJSON_AddNullToObject(res, "output_repr");
        return -1;
    }
    cJSON_AddItemToObject(res, "output", j);
    PyObject *rep = PyObject_Repr(value);
    const char *s = rep ? PyUnicode_AsUTF8(rep) : NULL;
    bool oom = !s && PyErr_ExceptionMatches(PyExc_MemoryError);
    if (s)
        oom = !cJSON_AddStringToObject(res, "output_repr", s);
    else
        cJSON_AddStringToObject(res, "output_repr", "<repr() failed>");
    Py_XDECREF(rep);
    PyErr_Clear();
    return oom ? -1 : 0;
}

/* The answer carried by the FinalAnswerException being raised (consumed). */
static PyObject *
final_value(void)
{
    PyObject *type, *exc, *tb;
    PyErr_Fetch(&type, &exc, &tb);
    PyErr_NormalizeException(&type, &exc, &tb);
    PyObject *v = exc ? PyObject_GetAttrString(exc, "value") : NULL;
    if (!v && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear(); /* raised by the snippet itself, without an answer */
        v = Py_NewRef(Py_None);
    }
    Py_XDECREF(type);
    Py_XDECREF(exc);
    Py_XDECREF(tb);
    return v;
}

/* Runs the top-level statements; returns the value of the last one when it is an expression
 * statement (a new reference, or NULL with *ret_failed set on failure). */
static PyObject *
run_body(struct exec_run *r, const struct node **ret_failed)
{
    PyObject *last = NULL;
    for (uint32_t i = 0; i < r->tree->nbody; i++) {
        const struct node *s = r->tree->body[i];
        Py_CLEAR(last);
        if (s->kind == NK_S_EXPR) {
            if (exec_tick(r) == 0)
                last = exec_eval(r, s->a);
            if (!last) {
                *ret_failed = s;
                return NULL;
            }
        } else if (exec_stmt(r, s) == FLOW_ERROR) {
            *ret_failed = s;
            return NULL;
        }
    }
    return last ? last : Py_NewRef(Py_None);
}

static cJSON *
build_result(struct exec_run *r, enum outcome out, PyObject *value, bool is_final,
             struct run_error *e, bool *ret_out_of_memory)
{
    cJSON *res = cJSON_CreateObject();
    if (!res)
        return NULL;
    cJSON_AddStringToObject(res, "outcome", outcome_names[out]);
    bool oom = add_output(r, res, out == OUT_OK ? value : NULL) < 0;
    if (ret_out_of_memory)
        *ret_out_of_memory = oom;
    uint32_t max_chars = r->env->policy.max_log_chars;
    cJSON *logs = cut_text_json(r->logs ? r->logs : "", r->logs_len, max_chars);
    if (logs)
        cJSON_AddItemToObject(res, "logs", logs);
    cJSON_AddBoolToObject(res, "is_final_answer", is_final && out == OUT_OK);
    if (out != OUT_OK) {
        cJSON *err = cJSON_AddObjectToObject(res, "error");
        if (err) {
            cJSON_AddStringToObject(err, "type", e->type ? e->type : "Error");
            const char *m = e->message ? e->message : "";
            cJSON_AddItemToObject(err, "message", cut_text_json(m, strlen(m), max_chars));
            cJSON_AddNumberToObject(err, "line", e->line);
            if (e->source)
                cJSON_AddItemToObject(err, "source",
                                      cut_text_json(e->source, strlen(e->source), max_chars));
            else
                cJSON_AddNullToObject(err, "source");
        }
    } else {
        cJSON_AddNullToObject(res, "error");
    }
    cJSON *stats = cJSON_AddObjectToObject(res, "stats");
    if (stats) {
        cJSON_AddNumberToObject(stats, "ops", (double) r->ops);
        cJSON_AddNumberToObject(stats, "run_ms", (double) (exec_now_ns() - r->start_ns) / 1e6);
    }
    return res;
}

/* A value that cannot fit max_result_bytes, its size bounded from below without converting it:
 * the copies that would be dropped anyway are not made (a 1 GB str would need two more). The
 * error has the shape of the worker's own check of the converted result. */
static cJSON *
too_large_result(struct exec_run *r, PyObject *value)
{
    uint64_t max = r->env->policy.max_result_bytes;
    if (!max || !value || value == Py_None)
        return NULL;
    uint64_t floor = exec_value_size_floor(value, EXEC_VALUE_MAX_DEPTH, max);
    if (floor <= max)
        return NULL;
    struct run_error e = {0};
    if (asprintf(&e.message, "result of at least %llu bytes exceeds max_result_bytes %llu",
                 (unsigned long long) floor, (unsigned long long) max) < 0)
        e.message = NULL;
    cJSON *res = build_result(r, OUT_OUTPUT, NULL, false, &e, NULL);
    free(e.message);
    cJSON *err = res ? cJSON_GetObjectItemCaseSensitive(res, "error") : NULL;
    if (err) {
        cJSON_ReplaceItemInObjectCaseSensitive(err, "type", cJSON_CreateNull());
        cJSON_ReplaceItemInObjectCaseSensitive(err, "line", cJSON_CreateNull());
    }
    return res;
}

static void
tree_destroy(PyObject *capsule)
{
    exec_tree_free(PyCapsule_GetPointer(capsule, "pyfence.tree"));
}

static void
run_init(struct exec_env *env, struct exec_run *r, exec_output_cb cb, void *userdata)
{
    memset(r, 0, sizeof(*r));
    r->env = env;
    r->globals = env->globals;
    r->builtins = env->builtins;
    r->max_ops = env->policy.max_ops;
    r->cb = cb;
    r->userdata = userdata;
    r->start_ns = exec_now_ns();
    r->stack_limit = exec_stack_limit_here();
    r->ops_check_at = EXEC_CLOCK_EVERY < r->max_ops ? EXEC_CLOCK_EVERY : r->max_ops + 1;
    if (env->policy.timeout_ms)
        r->deadline_ns = r->start_ns + env->policy.timeout_ms * 1000000ULL;
}

struct value_json_call {
    struct exec_env *env;
    PyObject *value;
    cJSON *json;
};

static void
value_json_in_main(void *arg)
{
    struct value_json_call *c = arg;
    struct exec_env *env = c->env;
    run_init(env, env->rs, NULL, NULL);
    env->run = env->rs;
    exec_audit_enter(env->rs);
    c->json = exec_value_to_json(c->value, EXEC_VALUE_MAX_DEPTH);
    exec_audit_leave();
    PyErr_Clear();
    env->run = NULL;
    Py_CLEAR(env->rs->abort_msg);
    free(env->rs->logs);
    env->rs->logs = NULL;
}

/* Converts a namespace value outside exec_env_run: a user __repr__ it calls still runs in the
 * executor, under a fresh set of budgets, standing on a __main__ frame as a run does. */
cJSON *
exec_env_value_json(struct exec_env *env, PyObject *v)
{
    if (env->run)
        return exec_value_to_json(v, EXEC_VALUE_MAX_DEPTH);
    struct value_json_call c = {.env = env, .value = v};
    exec_main_frame_call(env->main_fn, env->frame_builtins, value_json_in_main, &c);
    return c.json;
}

/* The result of a run that ended with `out`. Converting the value may run the snippet's
 * __repr__: still under the budgets, and a budget it exhausts ends the run as any other place
 * would, reported at the statement that failed or else the last one. */
static cJSON *
run_result(struct exec_run *r, const struct exec_tree *tree, enum outcome out, PyObject *value,
           bool is_final, const struct node *failed, struct run_error *e)
{
    bool oom = false;
    cJSON *res = out == OUT_OK ? too_large_result(r, value) : NULL;
    if (res)
        out = OUT_OUTPUT;
    else
        res = build_result(r, out, value, is_final, e, &oom);
    if (res && out == OUT_OK && r->abort != ABORT_NONE && tree && tree->nbody) {
        cJSON_Delete(res);
        PyErr_SetObject(exec_InterpreterError, r->abort_msg);
        out = runtime_error(r, failed ? failed : tree->body[tree->nbody - 1], e);
        res = build_result(r, out, NULL, false, e, NULL);
    } else if (res && out == OUT_OK && oom && tree && tree->nbody) {
        /* a result that could not be converted for lack of memory is the memory limit's */
        cJSON_Delete(res);
        PyErr_SetString(PyExc_MemoryError,
                        "out of memory converting the result (its JSON form or its repr())");
        out = runtime_error(r, failed ? failed : tree->body[tree->nbody - 1], e);
        res = build_result(r, out, NULL, false, e, NULL);
    }
    return res;
}

/* exec_env_run inside the run's frame. */
static cJSON *
run_snippet(struct exec_env *env, const char *code, exec_output_cb cb, void *userdata)
{
    struct exec_run *r = env->rs;
    run_init(env, r, cb, userdata);
    env->run = r;
    exec_audit_enter(r);

    struct run_error e = {0};
    enum outcome out = OUT_OK;
    PyObject *value = NULL;
    bool is_final = false;
    const struct node *failed = NULL;
    /* special form classes made since the last run (typing_extensions') are guarded too */
    struct exec_tree *tree = exec_guard_typing_refresh() == 0 ? exec_tree_compile(code) : NULL;
    if (tree && !(r->tree_ref = PyCapsule_New(tree, "pyfence.tree", tree_destroy)))
        tree = exec_tree_free(tree);
    if (!tree) {
        /* CPython's parser reports its own stack running out (an expression nested thousands
         * deep: "x = ------...1") as a bare MemoryError: say what it means */
        if (PyErr_ExceptionMatches(PyExc_MemoryError))
            PyErr_SetString(PyExc_MemoryError,
                            "the parser ran out of stack or memory: expressions nested too "
                            "deeply, or the code is too large");
        out = OUT_ERROR;
        syntax_error(&e);
    } else {
        r->tree = tree;
        value = run_body(r, &failed);
        if (!value && r->abort == ABORT_NONE && PyErr_ExceptionMatches(exec_FinalAnswerException)) {
            value = final_value();
            is_final = value != NULL;
            if (!value)
                out = runtime_error(r, failed, &e);
        } else if (!value) {
            out = runtime_error(r, failed, &e);
        }
    }
    cJSON *res = run_result(r, tree, out, value, is_final, failed, &e);
    PyErr_Clear();
    env->run = NULL;
    exec_audit_leave();
    Py_XDECREF(value);
    Py_CLEAR(r->abort_msg);
    Py_CLEAR(r->retval);
    Py_CLEAR(r->handling);
    Py_CLEAR(r->tree_ref); /* the tree lives on while functions it defined do */
    r->tree = NULL;
    free(r->logs);
    r->logs = NULL;
    free(e.type);
    free(e.message);
    free(e.source);
    return res;
}

struct run_call {
    struct exec_env *env;
    const char *code;
    exec_output_cb cb;
    void *userdata;
    cJSON *result;
};

static void
run_in_main(void *arg)
{
    struct run_call *c = arg;
    c->result = run_snippet(c->env, c->code, c->cb, c->userdata);
}

/* The snippet runs as a script's module code would, on a frame whose globals say __main__
 * (main_frame.c): library code naming classes after its caller's module sees the snippet's. */
cJSON *
exec_env_run(struct exec_env *env, const char *code, exec_output_cb cb, void *userdata)
{
    if (!env->import_names)
        return NULL; /* prebuilt, never configured: no policy to run under */
    struct run_call c = {.env = env, .code = code, .cb = cb, .userdata = userdata};
    exec_main_frame_call(env->main_fn, env->frame_builtins, run_in_main, &c);
    return c.result;
}
