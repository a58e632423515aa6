/* Errors as values. A fallible function returns a negative int (or NULL) and takes
 * `struct pf_error **err` last; the message is one a user can act on: it names the field,
 * the limit and the line. See HACKING.md, "Errors". */
#ifndef PF_ERROR_H
#define PF_ERROR_H

#include <stdarg.h>

/* The catalogue of error codes. Each has a stable wire name (pf_code_name) used in replies
 * `{"ok": false, "error": {"code": ...}}` and documented in proto/PROTOCOL.md. */
enum pf_code {
    PF_E_INTERNAL = 1,   /* a bug or a failed system call on our side */
    PF_E_BAD_FRAME,      /* frame length zero/over max, bad UTF-8, bad JSON */
    PF_E_BAD_REQUEST,    /* well-formed JSON of the wrong shape */
    PF_E_UNKNOWN_OP,     /* `op` names no operation */
    PF_E_TOO_LARGE,      /* a frame or value over its size limit */
    PF_E_BUSY,           /* a capacity limit: connections, in-flight requests, workers */
    PF_E_SHUTTING_DOWN,  /* the daemon is stopping */
    PF_E_ERROR,          /* the snippet raised, or the policy refused it */
    PF_E_TIMEOUT,        /* wall-clock deadline */
    PF_E_CPU_LIMIT,      /* CPU seconds */
    PF_E_MEMORY_LIMIT,   /* memory (address space, cgroup OOM) */
    PF_E_PIDS_LIMIT,     /* process/thread count */
    PF_E_OUTPUT_LIMIT,   /* output or result size */
    PF_E_SECCOMP,        /* the worker made a forbidden system call */
    PF_E_WORKER_CRASHED, /* the worker died otherwise */
    PF_E_CANCELLED,      /* cancelled by the client */
    PF_E_CONFIG,         /* bad configuration or policy file */
    PF_E_CONNECT,        /* client side: cannot reach the daemon */
    PF_E_PERMISSION,     /* peer not allowed */
    PF_E_NOT_FOUND,      /* no such session/request */
    PF_E_SESSION_LOST,   /* a session's worker died */
    /* The profile requires a hardening layer that this host (kernel, privileges, options)
     * cannot give the worker: the job is refused, and the message says what to change. */
    PF_E_HARDENING_UNAVAILABLE,
    _PF_E_MAX,
};

struct pf_error {
    int code; /* enum pf_code */
    char *msg;
};

/* Stable lower-case wire name of a code ("bad_frame"); "internal" for unknown values. */
const char *pf_code_name(int code);
/* Inverse of pf_code_name; 0 when the name is not one of ours. */
int pf_code_from_name(const char *name);

/* Sets *err (when err is not NULL and *err is NULL: the first error wins) and returns -1. */
int pf_error_set(struct pf_error **err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
int pf_error_setv(struct pf_error **err, int code, const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));
/* Like pf_error_set, appending ": strerror(errnum)". */
int pf_error_set_errno(struct pf_error **err, int code, int errnum, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* Prepends "prefix: " to the message of *err (context added on the way up). Returns -1. */
int pf_error_prefix(struct pf_error **err, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
/* Frees e; accepts NULL; returns NULL so `e = pf_error_free(e);` always works. */
struct pf_error *pf_error_free(struct pf_error *e);

static inline void
pf_error_freep(struct pf_error **e)
{
    pf_error_free(*e);
}
#define _cleanup_pf_error_ __attribute__((cleanup(pf_error_freep)))

#endif
