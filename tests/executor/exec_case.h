/* Shared by the differential harness and the executor benchmark: case files, the native
 * (CPython) run of a snippet, and its run through the executor. */
#ifndef TESTS_EXECUTOR_EXEC_CASE_H
#define TESTS_EXECUTOR_EXEC_CASE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "pf_error.h"

enum exec_case_expect {
    EXPECT_NATIVE,  /* agree with CPython */
    EXPECT_ERROR,   /* both raise expect_arg; messages not compared */
    EXPECT_REFUSED, /* the executor refuses; its message contains expect_arg */
    EXPECT_LOGS,    /* the executor's run ends ok, its output contains expect_arg */
};

struct exec_case {
    char *path;
    char *src;
    int expect; /* enum exec_case_expect */
    char *expect_arg;
    char **imports; /* on top of EXEC_DEFAULT_IMPORTS */
    size_t n_imports;
    char *skip;       /* reason, or NULL */
    cJSON *variables; /* `# variables: {JSON}`, tagged values set before the first snippet */
    char **chunks;    /* the snippets of a session, split at "# ---" lines; one if none */
    size_t n_chunks;
};

/* What CPython did with a snippet. Strings are malloc'd. */
struct native_result {
    char *logs;
    char *value_text; /* tagged JSON of the result, as exec_case_value_text prints it */
    char *value_repr; /* repr() of the result, addresses blanked; NULL when it is None */
    bool is_final;
    char *exc_type; /* NULL when nothing was raised */
    char *exc_msg;
};

/* Starts embedded CPython through the executor and loads native.py. */
int exec_case_init(struct pf_error **err);

struct exec_case *exec_case_load(const char *path, struct pf_error **err);
struct exec_case *exec_case_free(struct exec_case *c);

/* A native namespace kept across snippets, holding the case's variables. New reference, or NULL
 * (harness failure, printed). */
void *exec_case_native_session(const struct exec_case *c);
void exec_case_native_session_free(void *session);
/* Runs src with CPython in session. Returns -1 only when the harness itself failed. */
int exec_case_native(void *session, const char *src, struct native_result *ret);
void exec_case_native_clear(struct native_result *n);
/* Best wall time in seconds of `runs` native runs of src (compilation excluded), or -1. */
double exec_case_native_time(const char *src, int runs);

/* A fresh exec_env with the default policy plus the case's imports, and its variables set. */
struct exec_env *exec_case_env(const struct exec_case *c, struct pf_error **err);
/* Runs the whole case source once in a fresh exec_case_env. Returns exec_env_run's result
 * (caller frees), or NULL with *err set. */
cJSON *exec_case_run(const struct exec_case *c, struct pf_error **err);

/* Prints a tagged value with repr addresses ("0x7f...") blanked, so that the two sides compare;
 * NULL prints as null. malloc'd. */
char *exec_case_value_text(const cJSON *v);
/* Blanks addresses in place ("0x7f3a2c..." -> "0x?"); returns s. */
char *exec_case_blank_addresses(char *s);

#endif
