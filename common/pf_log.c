#include "pf_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct {
    int level;
    bool journal;
    const char *ident;
} log_settings = {PF_LOG_NOTICE, false, "pyfence"};

static const char *const group_names[_PF_LOG_GROUP_MAX] = {
        [PF_LOG_GROUP_MAIN] = "main",     [PF_LOG_GROUP_CONN] = "conn",
        [PF_LOG_GROUP_POLICY] = "policy", [PF_LOG_GROUP_WORKER] = "worker",
        [PF_LOG_GROUP_ZYGOTE] = "zygote", [PF_LOG_GROUP_SECCOMP] = "seccomp",
        [PF_LOG_GROUP_CGROUP] = "cgroup", [PF_LOG_GROUP_SCHED] = "sched",
        [PF_LOG_GROUP_EGRESS] = "egress",
};

static const struct {
    const char *name;
    int level;
} level_names[] = {
        {"crit", PF_LOG_CRIT},       {"err", PF_LOG_ERR},       {"error", PF_LOG_ERR},
        {"warning", PF_LOG_WARNING}, {"notice", PF_LOG_NOTICE}, {"info", PF_LOG_INFO},
        {"debug", PF_LOG_DEBUG},
};

int
pf_log_level_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
        if (strcmp(level_names[i].name, name) == 0)
            return level_names[i].level;
    return -1;
}

void
pf_log_init(int level, const char *ident)
{
    log_settings.level = level;
    log_settings.ident = ident ? ident : "pyfence";
    log_settings.journal = getenv("JOURNAL_STREAM") != NULL;
}

bool
pf_log_enabled(int level)
{
    return level <= log_settings.level;
}

void
pf_log(int level, enum pf_log_group group, const char *fmt, ...)
{
    if (!pf_log_enabled(level))
        return;
    char line[2048];
    int off = 0;
    if (log_settings.journal)
        off = snprintf(line, sizeof(line), "<%d>", level);
    const char *gname = (unsigned) group < _PF_LOG_GROUP_MAX ? group_names[group] : "?";
    off += snprintf(line + off, sizeof(line) - (size_t) off, "%s[%d]: [%s] ", log_settings.ident,
                    (int) getpid(), gname);
    va_list ap;
    va_start(ap, fmt);
    if (off < (int) sizeof(line))
        vsnprintf(line + off, sizeof(line) - (size_t) off, fmt, ap);
    va_end(ap);
    size_t n = strnlen(line, sizeof(line) - 2);
    line[n++] = '\n';
    /* One write per line so lines from daemon and zygote do not interleave. */
    ssize_t w = write(STDERR_FILENO, line, n);
    (void) w;
}
