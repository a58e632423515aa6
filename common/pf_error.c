#include "pf_error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const code_names[_PF_E_MAX] = {
        [PF_E_INTERNAL] = "internal",
        [PF_E_BAD_FRAME] = "bad_frame",
        [PF_E_BAD_REQUEST] = "bad_request",
        [PF_E_UNKNOWN_OP] = "unknown_op",
        [PF_E_TOO_LARGE] = "too_large",
        [PF_E_BUSY] = "busy",
        [PF_E_SHUTTING_DOWN] = "shutting_down",
        [PF_E_ERROR] = "error",
        [PF_E_TIMEOUT] = "timeout",
        [PF_E_CPU_LIMIT] = "cpu_limit",
        [PF_E_MEMORY_LIMIT] = "memory_limit",
        [PF_E_PIDS_LIMIT] = "pids_limit",
        [PF_E_OUTPUT_LIMIT] = "output_limit",
        [PF_E_SECCOMP] = "seccomp_violation",
        [PF_E_WORKER_CRASHED] = "worker_crashed",
        [PF_E_CANCELLED] = "cancelled",
        [PF_E_CONFIG] = "config",
        [PF_E_CONNECT] = "connect",
        [PF_E_PERMISSION] = "permission",
        [PF_E_NOT_FOUND] = "not_found",
        [PF_E_SESSION_LOST] = "session_lost",
        [PF_E_HARDENING_UNAVAILABLE] = "hardening_unavailable",
};

const char *
pf_code_name(int code)
{
    if (code <= 0 || code >= _PF_E_MAX || !code_names[code])
        return "internal";
    return code_names[code];
}

int
pf_code_from_name(const char *name)
{
    if (!name)
        return 0;
    for (int c = 1; c < _PF_E_MAX; c++)
        if (code_names[c] && strcmp(code_names[c], name) == 0)
            return c;
    return 0;
}

int
pf_error_setv(struct pf_error **err, int code, const char *fmt, va_list ap)
{
    if (!err || *err)
        return -1;
    struct pf_error *e = calloc(1, sizeof(*e));
    if (!e)
        return -1;
    e->code = code;
    if (vasprintf(&e->msg, fmt, ap) < 0)
        e->msg = NULL;
    if (!e->msg) {
        free(e);
        return -1;
    }
    *err = e;
    return -1;
}

int
pf_error_set(struct pf_error **err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pf_error_setv(err, code, fmt, ap);
    va_end(ap);
    return -1;
}

int
pf_error_set_errno(struct pf_error **err, int code, int errnum, const char *fmt, ...)
{
    char *head = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&head, fmt, ap);
    va_end(ap);
    if (n < 0)
        return pf_error_set(err, code, "%s", strerror(errnum));
    pf_error_set(err, code, "%s: %s", head, strerror(errnum));
    free(head);
    return -1;
}

int
pf_error_prefix(struct pf_error **err, const char *fmt, ...)
{
    if (!err || !*err)
        return -1;
    char *head = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&head, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    char *joined = NULL;
    if (asprintf(&joined, "%s: %s", head, (*err)->msg) >= 0) {
        free((*err)->msg);
        (*err)->msg = joined;
    }
    free(head);
    return -1;
}

struct pf_error *
pf_error_free(struct pf_error *e)
{
    if (e) {
        free(e->msg);
        free(e);
    }
    return NULL;
}
