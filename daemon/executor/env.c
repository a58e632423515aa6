/* Embedded CPython set-up, environments (namespace + policy) and one run of a snippet: the
 * result object of exec.h, error messages worded as smolagents words them. */
#include <string.h>

#include "exec_internal.h"
#include "pf_cleanup.h"
#include "pf_quote.h"
#include "value.h"

#define DEFAULT_MAX_OPS       10000000ULL
#define DEFAULT_MAX_WHILE     1000000ULL
#define DEFAULT_MAX_RECURSION 1000U
#define DEFAULT_MAX_OUTPUT    (1024ULL * 1024ULL)
#define DEFAULT_MAX_LOG_CHARS 50000U

/* "Type: message" of the pending exception (cleared); malloc'd, never NULL but on OOM. */
static char *
take_exception_text(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *msg = s ? PyUnicode_AsUTF8(s) : NULL;
    if (!msg)
        PyErr_Clear();
    char *out = NULL;
    if (asprintf(&out, "%s: %s", type ? _PyType_Name((PyTypeObject *) type) : "Error",
                 msg ? msg : "<unprintable>") < 0)
        out = NULL;
    Py_XDECREF(s);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return out;
}

/* The system's site-packages (Debian's dist-packages, where python3-numpy and python3-pandas
 * live) on sys.path, without running site's main(): no user site, no .pth file's code. What a
 * snippet may import is still the policy's allow-list. */
static int
add_site_packages(void)
{
    PyObject *site = exec_import_own("site");
    PyObject *dirs = site ? PyObject_CallMethod(site, "getsitepackages", NULL) : NULL;
    PyObject *path = PySys_GetObject("path"); /* borrowed */
    int r = dirs && path && PyList_Check(dirs) && PyList_Check(path) ? 0 : -1;
    for (Py_ssize_t i = 0; r == 0 && i < PyList_GET_SIZE(dirs); i++) {
        PyObject *dir = PyList_GET_ITEM(dirs, i);
        int has = PySequence_Contains(path, dir);
        if (has < 0 || (has == 0 && PyList_Append(path, dir) < 0))
            r = -1;
    }
    Py_XDECREF(dirs);
    Py_XDECREF(site);
    return r;
}

int
exec_python_init(struct pf_error **err)
{
    if (!Py_IsInitialized()) {
        PyConfig config;
        PyConfig_InitIsolatedConfig(&config);
        config.site_import = 0;
        config.user_site_directory = 0;
        config.use_environment = 0;
        config.install_signal_handlers = 0;
        config.parse_argv = 0;
        config.write_bytecode = 0;
        config.configure_c_stdio = 0;
        config.pathconfig_warnings = 0;
        config.safe_path = 1;
        PyStatus st = Py_InitializeFromConfig(&config);
        PyConfig_Clear(&config);
        if (PyStatus_Exception(st))
            return pf_error_set(err, PF_E_INTERNAL, "cannot initialise embedded CPython: %s%s%s",
                                st.func ? st.func : "", st.func ? ": " : "",
                                st.err_msg ? st.err_msg : "unknown error");
        if (add_site_packages() < 0) {
            _cleanup_free_ char *t = take_exception_text();
            return pf_error_set(err, PF_E_INTERNAL, "cannot find the site-packages: %s",
                                t ? t : "?");
        }
    }
    /* the std streams first: the guards below import libraries (typing, pprint, copy) */
    if (exec_stdio_install() < 0 || exec_policy_init_types() < 0 || exec_function_init_type() < 0 ||
        exec_generator_init_type() < 0 || exec_main_frame_init() < 0 ||
        exec_frame_view_install() < 0) {
        _cleanup_free_ char *t = take_exception_text();
        return pf_error_set(err, PF_E_INTERNAL, "executor set-up failed: %s", t ? t : "?");
    }
    return 0;
}

int
exec_preload(const char *const *modules, size_t n, struct pf_error **err)
{
    for (size_t i = 0; i < n; i++) {
        PyObject *m = PyImport_ImportModule(modules[i]);
        if (!m) {
            _cleanup_free_ char *t = take_exception_text();
            return pf_error_set(err, PF_E_CONFIG, "preloading module `%s` failed: %s", modules[i],
                                t ? t : "?");
        }
        Py_DECREF(m);
    }
    return 0;
}

static void
policy_defaults(struct exec_policy *p)
{
    if (!p->max_ops)
        p->max_ops = DEFAULT_MAX_OPS;
    if (!p->max_while_iterations)
        p->max_while_iterations = DEFAULT_MAX_WHILE;
    if (!p->max_recursion)
        p->max_recursion = DEFAULT_MAX_RECURSION;
    if (!p->max_output_bytes)
        p->max_output_bytes = DEFAULT_MAX_OUTPUT;
    if (!p->max_log_chars)
        p->max_log_chars = DEFAULT_MAX_LOG_CHARS;
}

struct exec_env *
exec_env_prebuild(struct pf_error **err)
{
    struct exec_env *env = calloc(1, sizeof(*env));
    if (!env || !(env->rs = calloc(1, sizeof(*env->rs)))) {
        exec_env_free(env);
        pf_error_set(err, PF_E_INTERNAL, "out of memory creating an executor environment");
        return NULL;
    }
    if (!(env->globals = PyDict_New()) || !(env->builtins = exec_builtins_new(env)) ||
        !(env->frame_builtins = exec_main_frame_builtins_new(env->builtins)) ||
        !(env->main_fn = exec_main_frame_new(env->frame_builtins))) {
        _cleanup_free_ char *t = take_exception_text();
        exec_env_free(env);
        pf_error_set(err, PF_E_INTERNAL, "cannot create the executor namespace: %s", t ? t : "?");
        return NULL;
    }
    return env;
}

static void
free_names(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
}

/* The run frame's builtins were made with the prebuilt environment's: only the names the
 * policy added or removed can differ now. */
static int
frame_builtins_adjust(struct exec_env *env, const struct exec_policy *policy, struct pf_error **err)
{
    const char *const *lists[] = {policy->builtins_add, policy->builtins_remove};
    size_t counts[] = {policy->n_builtins_add, policy->n_builtins_remove};
    for (size_t l = 0; l < PF_ELEMENTSOF(lists); l++)
        for (size_t i = 0; i < counts[l]; i++)
            if (exec_main_frame_builtins_update(env->frame_builtins, env->builtins, lists[l][i]) <
                0) {
                _cleanup_free_ char *t = take_exception_text();
                return pf_error_set(err, PF_E_INTERNAL, "cannot make the run frame's builtins: %s",
                                    t ? t : "?");
            }
    return 0;
}

int
exec_env_configure(struct exec_env *env, const struct exec_policy *policy, struct pf_error **err)
{
    if (env->import_names)
        return pf_error_set(err, PF_E_INTERNAL, "executor environment configured twice");
    /* The policy's list is the whole list: no module is importable unless it names it (the
     * strict profile names none; the others list smolagents' base modules themselves). */
    size_t n = policy->n_imports;
    char **names = calloc(n + 1, sizeof(char *));
    if (!names)
        return pf_error_set(err, PF_E_INTERNAL,
                            "out of memory configuring an executor environment");
    for (size_t i = 0; i < n; i++) {
        const char *s = policy->imports[i];
        if (!s || !(names[i] = strdup(s))) {
            free_names(names, i);
            return s ? pf_error_set(err, PF_E_INTERNAL,
                                    "out of memory configuring an executor "
                                    "environment")
                     : pf_error_set(err, PF_E_BAD_REQUEST, "imports[%zu] is null", i);
        }
    }
    if (exec_builtins_adjust(env, policy, err) < 0 || frame_builtins_adjust(env, policy, err) < 0) {
        free_names(names, n);
        return -1;
    }
    env->policy = *policy;
    policy_defaults(&env->policy);
    env->policy.builtins_add = env->policy.builtins_remove = NULL; /* borrowed: not kept */
    env->policy.n_builtins_add = env->policy.n_builtins_remove = 0;
    env->import_names = names;
    env->policy.imports = (const char *const *) names;
    env->policy.n_imports = n;
    return 0;
}

struct exec_env *
exec_env_new(const struct exec_policy *policy, struct pf_error **err)
{
    struct exec_env *env = exec_env_prebuild(err);
    if (env && exec_env_configure(env, policy, err) < 0)
        env = exec_env_free(env);
    return env;
}

struct exec_env *
exec_env_free(struct exec_env *env)
{
    if (!env)
        return NULL;
    if (env->rs && env->capsule) {
        /* unwind suspended generators now, while they can still find their environment;
         * the abort makes their bodies stop at once instead of running finally blocks */
        struct exec_run *r = env->rs;
        memset(r, 0, sizeof(*r));
        r->env = env;
        r->globals = env->globals;
        r->builtins = env->builtins;
        r->abort = ABORT_ERROR;
        r->stack_limit = exec_stack_limit_here();
        env->run = r;
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        exec_generators_close_all(env);
        if (env->globals)
            PyDict_Clear(env->globals); /* breaks cycles through the namespace */
        /* classes are always in reference cycles: collect them (and the code trees their
         * methods keep) now rather than at some later run's garbage collection */
        PyGC_Collect();
        PyErr_Clear();
        PyErr_Restore(t, v, tb);
        env->run = NULL;
    }
    Py_CLEAR(env->formatter_type);
    exec_builtins_detach(env);
    if (env->globals)
        PyDict_Clear(env->globals);
    Py_XDECREF(env->globals);
    Py_XDECREF(env->builtins);
    Py_XDECREF(env->main_fn);
    Py_XDECREF(env->frame_builtins);
    free_names(env->import_names, env->policy.n_imports);
    if (env->rs) {
        free(env->rs->logs); /* printed by finalisers while the environment closed */
        Py_XDECREF(env->rs->abort_msg);
    }
    free(env->rs);
    free(env);
    return NULL;
}

/* The hard keywords of Python 3.11 (keyword.kwlist). PyUnicode_IsIdentifier accepts them, and
 * CPython has no C API for keyword.iskeyword, but a snippet cannot name a variable called `for`.
 * Soft keywords (match, case, _) are ordinary names and stay allowed. */
static bool
is_keyword(const char *name)
{
    static const char *const keywords[] = {
            "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
            "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
            "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
            "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield",
    };
    for (size_t i = 0; i < PF_ELEMENTSOF(keywords); i++)
        if (strcmp(name, keywords[i]) == 0)
            return true;
    return false;
}

int
exec_env_set_variables(struct exec_env *env, const cJSON *vars, struct pf_error **err)
{
    if (!cJSON_IsObject(vars))
        return pf_error_set(err, PF_E_BAD_REQUEST, "variables: expected an object of name: value");
    const cJSON *item;
    cJSON_ArrayForEach(item, vars) {
        PyObject *name = PyUnicode_FromString(item->string);
        if (!name || !PyUnicode_IsIdentifier(name) || strncmp(item->string, "__", 2) == 0) {
            Py_XDECREF(name);
            PyErr_Clear();
            return pf_error_set(err, PF_E_BAD_REQUEST,
                                "variables: \"%.*s\" is not a valid variable name (a Python "
                                "identifier not starting with __)",
                                pf_quote_len(item->string), item->string);
        }
        if (is_keyword(item->string)) {
            Py_DECREF(name);
            return pf_error_set(err, PF_E_BAD_REQUEST,
                                "variables: \"%s\" is a Python keyword, so a snippet could not "
                                "use it as a variable name",
                                item->string);
        }
        if (exec_is_tool_name(name)) {
            Py_DECREF(name);
            return pf_error_set(err, PF_E_BAD_REQUEST,
                                "variables: \"%.*s\": names of tools and final_answer cannot "
                                "be rebound",
                                pf_quote_len(item->string), item->string);
        }
        PyObject *v = exec_value_from_json(item, err);
        int rc = v ? PyDict_SetItem(env->globals, name, v) : -1;
        Py_DECREF(name);
        Py_XDECREF(v);
        if (rc < 0) {
            if (PyErr_Occurred()) {
                _cleanup_free_ char *t = take_exception_text();
                return pf_error_set(err, PF_E_INTERNAL, "variables: %s", t ? t : "?");
            }
            return pf_error_prefix(err, "variables.%.*s", pf_quote_len(item->string), item->string);
        }
    }
    return 0;
}

/* The variables come back as an object keyed by name, which must hold each name once (the
 * daemon's parser refuses a frame with a repeated key): a repeated name is skipped. */
static bool
repeats_earlier(const char *const *names, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (strcmp(names[j], names[i]) == 0)
            return true;
    return false;
}

/* A value built of shared parts converts to far more than it holds (a tuple holding one tuple
 * twice, forty levels deep, is 2^40 nodes as JSON): the size is bounded from below before
 * anything is converted, as a run's result is, so that asking for it cannot exhaust the
 * worker's memory. Returns -1 with *err when the names surely exceed max_result_bytes. */
static int
check_variables_size(struct exec_env *env, const char *const *names, size_t n,
                     struct pf_error **err)
{
    uint64_t max = env->policy.max_result_bytes, floor = 2; /* {} */
    for (size_t i = 0; max && i < n && floor <= max; i++) {
        PyObject *v = PyDict_GetItemString(env->globals, names[i]); /* no code runs: borrowed */
        /* The floor counts a value's JSON and its repr() together, each node at most twice
         * what its JSON takes: half of it bounds the JSON alone. "name": and a comma. */
        if (v && !repeats_earlier(names, i))
            floor += strlen(names[i]) + 4 +
                     exec_value_size_floor(v, EXEC_VALUE_MAX_DEPTH, 2 * max) / 2;
    }
    if (max && floor > max)
        return pf_error_set(err, PF_E_TOO_LARGE,
                            "the variables asked for are at least %llu bytes as JSON, over "
                            "max_result_bytes %llu",
                            (unsigned long long) floor, (unsigned long long) max);
    return 0;
}

cJSON *
exec_env_get_variables(struct exec_env *env, const char *const *names, size_t n,
                       struct pf_error **err)
{
    if (check_variables_size(env, names, n, err) < 0)
        return NULL;
    cJSON *obj = cJSON_CreateObject();
    for (size_t i = 0; obj && i < n; i++) {
        if (repeats_earlier(names, i))
            continue;
        /* Held: converting it may run the snippet's __repr__, which may unbind the name. */
        PyObject *v = Py_XNewRef(PyDict_GetItemString(env->globals, names[i]));
        if (!v)
            continue;
        cJSON *j = exec_env_value_json(env, v);
        Py_DECREF(v);
        if (!j || !cJSON_AddItemToObject(obj, names[i], j)) {
            cJSON_Delete(j);
            cJSON_Delete(obj);
            obj = NULL;
        }
    }
    PyErr_Clear();
    if (!obj)
        pf_error_set(err, PF_E_INTERNAL, "out of memory converting the variables asked for");
    return obj;
}
