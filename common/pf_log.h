/* Logging for the daemon and the zygote. Library modules (proto/, policy/, daemon/executor/)
 * never log: they return errors. Groups have fixed meanings (knot-resolver style). Messages go
 * to stderr; when JOURNAL_STREAM is set (systemd), each line gets a `<N>` priority prefix.
 * User-supplied strings go in quotes; ignored failures end in ", ignoring". */
#ifndef PF_LOG_H
#define PF_LOG_H

#include <stdbool.h>
#include <stdlib.h>

enum pf_log_level {
    PF_LOG_CRIT = 2,
    PF_LOG_ERR = 3,
    PF_LOG_WARNING = 4,
    PF_LOG_NOTICE = 5,
    PF_LOG_INFO = 6,
    PF_LOG_DEBUG = 7,
};

enum pf_log_group {
    PF_LOG_GROUP_MAIN,
    PF_LOG_GROUP_CONN,
    PF_LOG_GROUP_POLICY,
    PF_LOG_GROUP_WORKER,
    PF_LOG_GROUP_ZYGOTE,
    PF_LOG_GROUP_SECCOMP,
    PF_LOG_GROUP_CGROUP,
    PF_LOG_GROUP_SCHED,
    PF_LOG_GROUP_EGRESS,
    _PF_LOG_GROUP_MAX,
};

/* Parses "crit|err|warning|notice|info|debug"; returns -1 when unknown. */
int pf_log_level_from_name(const char *name);
/* Process-wide log settings: the one piece of global state outside the daemon's context,
 * as it must be reachable from signal-free code everywhere (set once at start-up). */
void pf_log_init(int level, const char *ident);
bool pf_log_enabled(int level);
void pf_log(int level, enum pf_log_group group, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#define pf_log_crit(g, ...)    pf_log(PF_LOG_CRIT, PF_LOG_GROUP_##g, __VA_ARGS__)
#define pf_log_error(g, ...)   pf_log(PF_LOG_ERR, PF_LOG_GROUP_##g, __VA_ARGS__)
#define pf_log_warning(g, ...) pf_log(PF_LOG_WARNING, PF_LOG_GROUP_##g, __VA_ARGS__)
#define pf_log_notice(g, ...)  pf_log(PF_LOG_NOTICE, PF_LOG_GROUP_##g, __VA_ARGS__)
#define pf_log_info(g, ...)    pf_log(PF_LOG_INFO, PF_LOG_GROUP_##g, __VA_ARGS__)
#define pf_log_debug(g, ...)                                     \
    do {                                                         \
        if (pf_log_enabled(PF_LOG_DEBUG))                        \
            pf_log(PF_LOG_DEBUG, PF_LOG_GROUP_##g, __VA_ARGS__); \
    } while (0)

/* Always aborts: only where continuing would be memory-unsafe. */
#define pf_require(expr)                                                                    \
    do {                                                                                    \
        if (__builtin_expect(!(expr), 0)) {                                                 \
            pf_log(PF_LOG_CRIT, PF_LOG_GROUP_MAIN, "requirement failed: %s (%s:%d)", #expr, \
                   __FILE__, __LINE__);                                                     \
            abort();                                                                        \
        }                                                                                   \
    } while (0)

/* Logs and evaluates to true when expr is false: the caller drops that connection or job, and
 * the daemon keeps serving everyone else. */
#define pf_fails_assert(expr)                                                                      \
    ({                                                                                             \
        bool _failed = !(expr);                                                                    \
        if (__builtin_expect(_failed, 0))                                                          \
            pf_log(PF_LOG_ERR, PF_LOG_GROUP_MAIN, "assertion failed: %s (%s:%d)", #expr, __FILE__, \
                   __LINE__);                                                                      \
        _failed;                                                                                   \
    })

#endif
