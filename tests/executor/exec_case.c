/* Case files, native runs and executor runs, for the differential harness and the benchmark. */
#include "exec_case.h"

#include <Python.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "pf_cleanup.h"
#include "value.h"

#ifndef PF_NATIVE_PY
#    error "PF_NATIVE_PY must name tests/executor/native.py"
#endif

static PyObject *native_mod;

static char *
read_file(const char *path, struct pf_error **err)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return pf_error_set_errno(err, PF_E_INTERNAL, errno, "cannot open %s", path), NULL;
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 >= cap) {
            char *n = realloc(buf, cap *= 2);
            if (!n)
                free(buf);
            buf = n;
        }
    }
    fclose(f);
    if (!buf)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory reading %s", path), NULL;
    buf[len] = '\0';
    return buf;
}

int
exec_case_init(struct pf_error **err)
{
    if (exec_python_init(err) < 0)
        return -1;
    _cleanup_free_ char *src = read_file(PF_NATIVE_PY, err);
    if (!src)
        return -1;
    PyObject *code = Py_CompileString(src, PF_NATIVE_PY, Py_file_input);
    native_mod = code ? PyImport_ExecCodeModule("pf_native", code) : NULL;
    Py_XDECREF(code);
    if (!native_mod) {
        PyErr_Print();
        return pf_error_set(err, PF_E_INTERNAL, "cannot load %s", PF_NATIVE_PY);
    }
    return 0;
}

static char *
trim(char *s)
{
    while (isspace((unsigned char) *s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char) s[n - 1]))
        s[--n] = '\0';
    return s;
}

static int
parse_imports(struct exec_case *c, char *list, struct pf_error **err)
{
    char *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char **n = realloc(c->imports, (c->n_imports + 1) * sizeof(*n));
        if (!n)
            return pf_error_set(err, PF_E_INTERNAL, "out of memory");
        c->imports = n;
        if (!(c->imports[c->n_imports] = strdup(trim(tok))))
            return pf_error_set(err, PF_E_INTERNAL, "out of memory");
        c->n_imports++;
    }
    return 0;
}

/* One header line ("# key: value"); other comment lines are ignored. */
static int
parse_header(struct exec_case *c, char *line, struct pf_error **err)
{
    char *body = trim(line + 1);
    char *colon = strchr(body, ':');
    if (!colon)
        return 0;
    *colon = '\0';
    char *key = trim(body), *val = trim(colon + 1);
    if (strcmp(key, "skip") == 0)
        return (c->skip = strdup(val)) ? 0 : pf_error_set(err, PF_E_INTERNAL, "out of memory");
    if (strcmp(key, "imports") == 0)
        return parse_imports(c, val, err);
    if (strcmp(key, "variables") == 0) {
        cJSON_Delete(c->variables);
        c->variables = cJSON_Parse(val);
        if (!cJSON_IsObject(c->variables))
            return pf_error_set(err, PF_E_BAD_REQUEST, "%s: \"variables:\" needs a JSON object",
                                c->path);
        return 0;
    }
    if (strcmp(key, "expect") != 0)
        return 0;
    char *arg = val + strcspn(val, " \t");
    if (*arg)
        *arg++ = '\0';
    arg = trim(arg);
    if (strcmp(val, "native") == 0)
        c->expect = EXPECT_NATIVE;
    else if (strcmp(val, "error") == 0 && *arg)
        c->expect = EXPECT_ERROR;
    else if (strcmp(val, "refused") == 0 && *arg)
        c->expect = EXPECT_REFUSED;
    else if (strcmp(val, "logs") == 0 && *arg)
        c->expect = EXPECT_LOGS;
    else
        return pf_error_set(err, PF_E_BAD_REQUEST,
                            "%s: bad header \"expect: %s %s\" "
                            "(native | error TYPE | refused TEXT | logs TEXT)",
                            c->path, val, arg);
    return (c->expect_arg = strdup(arg)) ? 0 : pf_error_set(err, PF_E_INTERNAL, "out of memory");
}

/* A session case is several snippets separated by "# ---" lines, run one after the other in
 * the same namespace. */
static int
split_chunks(struct exec_case *c, struct pf_error **err)
{
    const char *p = c->src;
    for (;;) {
        const char *sep = strstr(p, "\n# ---\n");
        size_t len = sep ? (size_t) (sep - p) + 1 : strlen(p);
        char **n = realloc(c->chunks, (c->n_chunks + 1) * sizeof(*n));
        if (!n)
            return pf_error_set(err, PF_E_INTERNAL, "out of memory");
        c->chunks = n;
        if (!(c->chunks[c->n_chunks] = strndup(p, len)))
            return pf_error_set(err, PF_E_INTERNAL, "out of memory");
        c->n_chunks++;
        if (!sep)
            return 0;
        p = sep + strlen("\n# ---\n");
    }
}

struct exec_case *
exec_case_load(const char *path, struct pf_error **err)
{
    struct exec_case *c = calloc(1, sizeof(*c));
    if (!c || !(c->path = strdup(path)))
        return pf_error_set(err, PF_E_INTERNAL, "out of memory"), exec_case_free(c);
    if (!(c->src = read_file(path, err)))
        return exec_case_free(c);
    /* Headers are the leading comment lines. */
    const char *p = c->src;
    while (*p == '#') {
        size_t n = strcspn(p, "\n");
        _cleanup_free_ char *line = strndup(p, n);
        if (!line || parse_header(c, line, err) < 0)
            return exec_case_free(c);
        p += n + (p[n] == '\n');
    }
    return split_chunks(c, err) < 0 ? exec_case_free(c) : c;
}

struct exec_case *
exec_case_free(struct exec_case *c)
{
    if (!c)
        return NULL;
    for (size_t i = 0; i < c->n_imports; i++)
        free(c->imports[i]);
    free(c->imports);
    for (size_t i = 0; i < c->n_chunks; i++)
        free(c->chunks[i]);
    free(c->chunks);
    cJSON_Delete(c->variables);
    free(c->path);
    free(c->src);
    free(c->expect_arg);
    free(c->skip);
    free(c);
    return NULL;
}

static char *
str_dup_py(PyObject *s)
{
    if (s == Py_None)
        return NULL;
    /* Lone surrogates in an exception message are escaped rather than lost. */
    PyObject *b = PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace");
    if (!b) {
        PyErr_Clear();
        return strdup("(unencodable)");
    }
    char *r = strdup(PyBytes_AS_STRING(b));
    Py_DECREF(b);
    return r;
}

void *
exec_case_native_session(const struct exec_case *c)
{
    PyObject *vars = PyDict_New();
    const cJSON *v;
    cJSON_ArrayForEach(v, c->variables) {
        struct pf_error *err = NULL;
        PyObject *value = exec_value_from_json(v, &err);
        if (!value || PyDict_SetItemString(vars, v->string, value) < 0) {
            fprintf(stderr, "%s: variable %s: %s\n", c->path, v->string, err ? err->msg : "?");
            pf_error_free(err);
            Py_XDECREF(value);
            Py_DECREF(vars);
            return NULL;
        }
        Py_DECREF(value);
    }
    PyObject *session = PyObject_CallMethod(native_mod, "Session", "O", vars);
    Py_DECREF(vars);
    if (!session)
        PyErr_Print();
    return session;
}

void
exec_case_native_session_free(void *session)
{
    Py_XDECREF((PyObject *) session);
}

int
exec_case_native(void *session, const char *src, struct native_result *ret)
{
    memset(ret, 0, sizeof(*ret));
    PyObject *t = PyObject_CallMethod(session, "run", "s", src);
    if (!t || !PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 6) {
        PyErr_Print();
        Py_XDECREF(t);
        return -1;
    }
    ret->logs = str_dup_py(PyTuple_GET_ITEM(t, 0));
    cJSON *v = exec_value_to_json(PyTuple_GET_ITEM(t, 1), EXEC_VALUE_MAX_DEPTH);
    ret->value_text = exec_case_value_text(v);
    cJSON_Delete(v);
    ret->is_final = PyTuple_GET_ITEM(t, 2) == Py_True;
    ret->exc_type = str_dup_py(PyTuple_GET_ITEM(t, 3));
    ret->exc_msg = str_dup_py(PyTuple_GET_ITEM(t, 4));
    ret->value_repr = str_dup_py(PyTuple_GET_ITEM(t, 5));
    if (ret->value_repr)
        exec_case_blank_addresses(ret->value_repr);
    Py_DECREF(t);
    if (!ret->logs)
        ret->logs = strdup("");
    return ret->logs && ret->value_text ? 0 : -1;
}

void
exec_case_native_clear(struct native_result *n)
{
    free(n->logs);
    free(n->value_text);
    free(n->exc_type);
    free(n->exc_msg);
    free(n->value_repr);
    memset(n, 0, sizeof(*n));
}

double
exec_case_native_time(const char *src, int runs)
{
    PyObject *r = PyObject_CallMethod(native_mod, "bench", "si", src, runs);
    if (!r) {
        PyErr_Print();
        return -1;
    }
    double s = PyFloat_AsDouble(r);
    Py_DECREF(r);
    return s;
}

struct exec_env *
exec_case_env(const struct exec_case *c, struct pf_error **err)
{
    static const char *const defaults[] = {EXEC_DEFAULT_IMPORTS};
    size_t n = PF_ELEMENTSOF(defaults) + c->n_imports;
    _cleanup_free_ const char **imports = calloc(n, sizeof(*imports));
    if (!imports)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory"), NULL;
    memcpy(imports, defaults, sizeof(defaults));
    for (size_t i = 0; i < c->n_imports; i++)
        imports[PF_ELEMENTSOF(defaults) + i] = c->imports[i];
    struct exec_policy policy = {
            .imports = imports,
            .n_imports = n,
            .max_ops = 10000000,
            .max_while_iterations = 1000000,
            .max_recursion = 400,
            .max_output_bytes = 1 << 20,
            .max_log_chars = 50000,
            .timeout_ms = 15000,
    };
    struct exec_env *env = exec_env_new(&policy, err);
    if (env && c->variables && exec_env_set_variables(env, c->variables, err) < 0)
        env = exec_env_free(env);
    return env;
}

cJSON *
exec_case_run(const struct exec_case *c, struct pf_error **err)
{
    struct exec_env *env = exec_case_env(c, err);
    if (!env)
        return NULL;
    cJSON *res = exec_env_run(env, c->src, NULL, NULL);
    exec_env_free(env);
    if (!res)
        pf_error_set(err, PF_E_INTERNAL, "exec_env_run returned NULL (out of memory)");
    return res;
}

char *
exec_case_blank_addresses(char *s)
{
    char *w = s;
    for (const char *r = s; *r;) {
        if (r[0] == '0' && r[1] == 'x' && strspn(r + 2, "0123456789abcdef") >= 6) {
            r += 2 + strspn(r + 2, "0123456789abcdef");
            memcpy(w, "0x?", 3);
            w += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
    return s;
}

char *
exec_case_value_text(const cJSON *v)
{
    char *s = v ? cJSON_PrintUnformatted(v) : strdup("null");
    /* Object addresses differ between the two runs. */
    return s ? exec_case_blank_addresses(s) : NULL;
}
