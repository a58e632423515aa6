/* pyfence-zygote: pays CPython's start-up once, then forks one worker per "spawn" request from
 * pyfenced and reports how each ended. Single-threaded by design (fork and threads do not mix):
 * one poll() over the control channel (fd 3, SOCK_SEQPACKET) and a signalfd for SIGCHLD.
 * Wire format: CHANNEL.md. */
#include <Python.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control_packet.h"
#include "exec.h"
#include "harden_internal.h"
#include "harden_params.h"
#include "harden_zygote.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "warm_up.h"
#include "worker.h"
#include "zygote_mem.h"
#include "zygote_python.h"

#define CONTROL_FD         3
#define CONTROL_MAX_PACKET (64 * 1024)
/* Room for the cJSON trees of one control packet or event (a spawn message needs ~4 KiB);
 * a larger one spills into malloc. */
#define CJSON_ARENA_BYTES (256 * 1024)

struct job {
    uint64_t id;
    pid_t pid;
    bool killed;
    struct harden_job *hj; /* its pool slot (cgroup, identity), given back once reaped */
};

struct zygote {
    int ctl;
    int sigfd;
    struct zygote_python python;
    char *rx;         /* CONTROL_MAX_PACKET bytes that no fork copies (zygote_mem.h) */
    struct job *jobs; /* live workers, unordered */
    size_t n_jobs, cap_jobs;
    bool warned_pidfd; /* a failing pidfd_open is said once, not per job */
};

#if defined(__SANITIZE_ADDRESS__)
/* Sanitizer builds only. Embedded CPython is never finalised (workers _exit, the zygote exits
 * without Py_FinalizeEx), so LeakSanitizer would report every interpreter allocation; and the
 * zygote runs with an empty environment, where LSAN_OPTIONS cannot reach it. */
const char *__lsan_default_suppressions(void);
const char *
__lsan_default_suppressions(void)
{
    return "leak:libpython3.11.so\n";
}
#endif

/* cJSON's own free: its strings may live in the zygote's arena, not in malloc's heap. */
static inline void
cjson_freep(char **p)
{
    cJSON_free(*p);
}
#define _cleanup_cjson_free_ _cleanup_(cjson_freep)

/* Sends one event, with fd (when >= 0) in SCM_RIGHTS. A failure means the daemon is gone: the
 * caller shuts down. */
static int
send_event_fd(struct zygote *z, cJSON *obj, int fd)
{
    _cleanup_json_ cJSON *owned = obj;
    _cleanup_cjson_free_ char *s = owned ? cJSON_PrintUnformatted(owned) : NULL;
    if (!s) {
        pf_log_error(ZYGOTE, "out of memory encoding an event");
        return -1;
    }
    int r = control_packet_send(z->ctl, s, strlen(s), fd, 0);
    if (r < 0) {
        pf_log_error(ZYGOTE, "control channel: sendmsg: %s", strerror(-r));
        return -1;
    }
    return 0;
}

static int
send_event(struct zygote *z, cJSON *obj)
{
    return send_event_fd(z, obj, -1);
}

static struct job *
find_job_by_id(struct zygote *z, uint64_t id)
{
    for (size_t i = 0; i < z->n_jobs; i++)
        if (z->jobs[i].id == id)
            return &z->jobs[i];
    return NULL;
}

static struct job *
find_job_by_pid(struct zygote *z, pid_t pid)
{
    for (size_t i = 0; i < z->n_jobs; i++)
        if (z->jobs[i].pid == pid)
            return &z->jobs[i];
    return NULL;
}

static void
drop_job(struct zygote *z, struct job *j, struct harden_outcome *ret_outcome)
{
    j->hj = harden_job_finish(j->hj, ret_outcome);
    *j = z->jobs[--z->n_jobs];
}

static int
add_job(struct zygote *z, uint64_t id, pid_t pid)
{
    if (z->n_jobs == z->cap_jobs) {
        size_t cap = z->cap_jobs ? 2 * z->cap_jobs : 16;
        struct job *nj = realloc(z->jobs, cap * sizeof(*nj));
        if (!nj)
            return -1;
        z->jobs = nj;
        z->cap_jobs = cap;
    }
    z->jobs[z->n_jobs++] = (struct job){.id = id, .pid = pid};
    return 0;
}

static cJSON *
job_event(const char *event, uint64_t id)
{
    cJSON *o = cJSON_CreateObject();
    if (o && (!cJSON_AddStringToObject(o, "event", event) ||
              !cJSON_AddNumberToObject(o, "job", (double) id))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* code: PF_E_HARDENING_UNAVAILABLE (a required layer the zygote prepares per job: the job's
 * cgroup slot, its pid namespace) goes to the daemon as "code"; anything else is its fault. */
static int
reply_spawn_failed_code(struct zygote *z, uint64_t id, int code, const char *message)
{
    pf_log_warning(ZYGOTE, "job %llu: spawn failed: %s", (unsigned long long) id, message);
    cJSON *o = job_event("spawn_failed", id);
    if (o)
        cJSON_AddStringToObject(o, "message", message);
    if (o && code == PF_E_HARDENING_UNAVAILABLE)
        cJSON_AddStringToObject(o, "code", pf_code_name(code));
    return send_event(z, o);
}

static int
reply_spawn_failed(struct zygote *z, uint64_t id, const char *message)
{
    return reply_spawn_failed_code(z, id, PF_E_INTERNAL, message);
}

/* In the child: never returns. No PyOS_AfterFork_Child: zygote_python.h says why. */
static _Noreturn void
become_worker(struct zygote *z, int channel_fd, const struct harden_params *params)
{
    zygote_mem_arena_forget();
    close(z->ctl);
    close(z->sigfd);
    _cleanup_pf_error_ struct pf_error *err = NULL;
    if (zygote_python_after_fork(&z->python, &err) < 0) {
        pf_log_error(ZYGOTE, "worker: %s", err->msg);
        _exit(WORKER_EXIT_HARDEN_FAILED);
    }
    worker_main(channel_fd, params, z->python.spare_env, z->python.warm_env);
}

static int
spawn(struct zygote *z, uint64_t id, const struct harden_params *params, int channel_fd)
{
    if (find_job_by_id(z, id))
        return reply_spawn_failed(z, id, "a worker for this job id is already running");
    _cleanup_pf_error_ struct pf_error *err = NULL;
    struct harden_job *hj = NULL;
    if (harden_job_prepare(params, &hj, &err) < 0)
        return reply_spawn_failed_code(z, id, err->code, err->msg);
    if (add_job(z, id, 0) < 0) {
        harden_job_finish(hj, NULL);
        return reply_spawn_failed(z, id, "out of memory");
    }
    z->jobs[z->n_jobs - 1].hj = hj;
    pid_t pid = harden_job_fork(hj);
    if (pid == 0)
        become_worker(z, channel_fd, params);
    int saved = errno;
    if (pid < 0) {
        drop_job(z, &z->jobs[z->n_jobs - 1], NULL);
        char msg[128];
        snprintf(msg, sizeof(msg), "fork: %s", strerror(saved));
        return reply_spawn_failed(z, id, msg);
    }
    z->jobs[z->n_jobs - 1].pid = pid;
    pf_log_debug(ZYGOTE, "job %llu: worker pid %d", (unsigned long long) id, (int) pid);
    cJSON *o = job_event("spawned", id);
    if (o)
        cJSON_AddNumberToObject(o, "pid", pid);
    /* The daemon's handle on the worker, for when this zygote is gone (CHANNEL.md). Opened
     * here, before this process reaps anything, so it cannot name a reused pid. */
    _cleanup_close_ int pidfd = pidfd_open(pid, 0);
    if (pidfd < 0 && !z->warned_pidfd) {
        z->warned_pidfd = true;
        pf_log_warning(ZYGOTE,
                       "job %llu: pidfd_open(%d): %m; pyfenced cannot kill this worker, nor "
                       "later ones whose pidfd_open fails, if the zygote dies before them "
                       "(said once)",
                       (unsigned long long) id, (int) pid);
    } else if (pidfd < 0) {
        pf_log_debug(ZYGOTE, "job %llu: pidfd_open(%d): %m", (unsigned long long) id, (int) pid);
    }
    return send_event_fd(z, o, pidfd);
}

static const struct msg_field spawn_fields[] = {
        {"op", MSG_T_STRING, true, 1, 16},
        {"job", MSG_T_INT, true, 0, 9007199254740992.0},
        {"harden", MSG_T_OBJECT, true, 0, 0},
};

static const struct msg_field kill_fields[] = {
        {"op", MSG_T_STRING, true, 1, 16},
        {"job", MSG_T_INT, true, 0, 9007199254740992.0},
};

static const struct msg_field signal_fields[] = {
        {"op", MSG_T_STRING, true, 1, 16},
        {"job", MSG_T_INT, true, 0, 9007199254740992.0},
        {"signal", MSG_T_STRING, true, 1, 16},
        {"run", MSG_T_INT, true, 1, INT_MAX}, /* a sigval's int: the run the cancel is for */
};

/* Cancellation (CHANNEL.md, "signal"): SIGUSR1 to a tracked, live child only, queued with the
 * number of the run it is for, so that the worker can tell it from a late cancel of a run that
 * has already ended (worker.c, on_cancel_signal). */
static void
signal_job(struct zygote *z, const cJSON *msg)
{
    if (strcmp(msg_get_string(msg, "signal", ""), "SIGUSR1") != 0) {
        pf_log_error(ZYGOTE, "control channel: signal \"%s\" is not one we send, ignoring",
                     msg_get_string(msg, "signal", ""));
        return;
    }
    struct job *j = find_job_by_id(z, (uint64_t) msg_get_int(msg, "job", 0));
    if (j && j->pid > 0)
        sigqueue(j->pid, SIGUSR1, (union sigval){.sival_int = (int) msg_get_int(msg, "run", 0)});
}

static void
kill_job(struct zygote *z, uint64_t id)
{
    struct job *j = find_job_by_id(z, id);
    /* Only tracked pids: a reaped one may already belong to someone else. */
    if (!j || j->pid <= 0)
        return;
    if (kill(j->pid, SIGKILL) == 0)
        j->killed = true;
}

/* One control packet, with the fds that came with it (all closed here unless handed on). */
static int
handle_packet(struct zygote *z, const char *buf, size_t len, int *fds, size_t n_fds)
{
    _cleanup_pf_error_ struct pf_error *err = NULL;
    _cleanup_json_ cJSON *msg = NULL;
    int r = 0;
    if (msg_parse(buf, len, MSG_MAX_DEPTH, &msg, &err) < 0) {
        pf_log_error(ZYGOTE, "control channel: %s, ignoring", err->msg);
        goto out;
    }
    const char *op = msg_get_string(msg, "op", "");
    if (strcmp(op, "kill") == 0) {
        if (msg_check_fields(msg, kill_fields, PF_ELEMENTSOF(kill_fields), "kill", &err) < 0 ||
            n_fds != 0) {
            pf_log_error(ZYGOTE, "control channel: %s, ignoring", err ? err->msg : "kill with fds");
            goto out;
        }
        kill_job(z, (uint64_t) msg_get_int(msg, "job", 0));
    } else if (strcmp(op, "signal") == 0) {
        if (msg_check_fields(msg, signal_fields, PF_ELEMENTSOF(signal_fields), "signal", &err) <
                    0 ||
            n_fds != 0) {
            pf_log_error(ZYGOTE, "control channel: %s, ignoring",
                         err ? err->msg : "signal with fds");
            goto out;
        }
        signal_job(z, msg);
    } else if (strcmp(op, "spawn") == 0) {
        uint64_t id = (uint64_t) msg_get_int(msg, "job", 0);
        struct harden_params params;
        if (msg_check_fields(msg, spawn_fields, PF_ELEMENTSOF(spawn_fields), "spawn", &err) < 0 ||
            harden_params_from_json(cJSON_GetObjectItemCaseSensitive(msg, "harden"), &params,
                                    &err) < 0) {
            r = reply_spawn_failed(z, id, err->msg);
            goto out;
        }
        if (n_fds != 1) {
            char m[96];
            snprintf(m, sizeof(m), "spawn carries %zu fds, expected exactly 1", n_fds);
            r = reply_spawn_failed(z, id, m);
            goto out;
        }
        r = spawn(z, id, &params, fds[0]);
    } else {
        pf_log_error(ZYGOTE, "control channel: unknown op \"%s\", ignoring", op);
    }
out:
    for (size_t i = 0; i < n_fds; i++)
        close(fds[i]);
    return r;
}

/* Returns 1 to go on, 0 at EOF, -1 on error. */
static int
read_control(struct zygote *z)
{
    struct control_packet_fds fds;
    ssize_t n = control_packet_recv(z->ctl, z->rx, CONTROL_MAX_PACKET, MSG_DONTWAIT, &fds);
    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : -1;
    if (n == 0 && fds.n == 0)
        return 0;
    if (fds.truncated) {
        pf_log_error(ZYGOTE, "control channel: packet or its fds truncated, ignoring");
        control_packet_close_fds(&fds);
        return 1;
    }
    return handle_packet(z, z->rx, (size_t) n, fds.fd, fds.n) < 0 ? -1 : 1;
}

/* The optional fields of "exited" (CHANNEL.md), from the worker's cgroup. */
static void
add_cgroup_outcome(cJSON *o, const struct harden_outcome *h)
{
    cJSON_AddBoolToObject(o, "oom_killed", h->oom_killed);
    cJSON_AddBoolToObject(o, "pids_limited", h->pids_limited);
    if (h->peak_memory_kb)
        cJSON_AddNumberToObject(o, "peak_memory_kb", (double) h->peak_memory_kb);
    cJSON_AddNumberToObject(o, "cgroup_cpu_ms", (double) h->cgroup_cpu_ms);
}

static int
reap(struct zygote *z)
{
    struct signalfd_siginfo si;
    while (read(z->sigfd, &si, sizeof(si)) == sizeof(si))
        if (si.ssi_signo != SIGCHLD)
            pf_log_info(ZYGOTE, "%s: the zygote stops when pyfenced closes its channel, ignoring",
                        strsignal((int) si.ssi_signo));
    for (;;) {
        int status;
        struct rusage ru;
        pid_t pid = wait4(-1, &status, WNOHANG, &ru);
        if (pid <= 0)
            return 0;
        struct job *j = find_job_by_pid(z, pid);
        if (!j) {
            pf_log_warning(ZYGOTE, "reaped unknown child %d, ignoring", (int) pid);
            continue;
        }
        cJSON *o = job_event("exited", j->id);
        if (o) {
            cJSON_AddNumberToObject(o, "pid", pid);
            if (WIFEXITED(status))
                cJSON_AddNumberToObject(o, "exit_code", WEXITSTATUS(status));
            else
                cJSON_AddNullToObject(o, "exit_code");
            if (WIFSIGNALED(status))
                cJSON_AddNumberToObject(o, "signal", WTERMSIG(status));
            else
                cJSON_AddNullToObject(o, "signal");
            uint64_t cpu_ms = (uint64_t) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                              (uint64_t) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
            cJSON_AddNumberToObject(o, "cpu_ms", (double) cpu_ms);
            cJSON_AddNumberToObject(o, "max_rss_kb", (double) ru.ru_maxrss);
            cJSON_AddBoolToObject(o, "killed", j->killed);
        }
        struct harden_outcome hout;
        drop_job(z, j, &hout);
        if (o && hout.have_cgroup)
            add_cgroup_outcome(o, &hout);
        if (send_event(z, o) < 0)
            return -1;
    }
}

static void
kill_all_and_reap(struct zygote *z)
{
    for (size_t i = 0; i < z->n_jobs; i++)
        if (z->jobs[i].pid > 0)
            kill(z->jobs[i].pid, SIGKILL);
    while (z->n_jobs > 0) {
        struct job *j = &z->jobs[z->n_jobs - 1];
        if (j->pid > 0)
            while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        drop_job(z, j, NULL);
    }
}

static void
serve(struct zygote *z)
{
    for (;;) {
        struct pollfd pfd[2] = {{.fd = z->ctl, .events = POLLIN},
                                {.fd = z->sigfd, .events = POLLIN}};
        if (poll(pfd, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            pf_log_error(ZYGOTE, "poll: %m");
            return;
        }
        if (pfd[1].revents & POLLIN && reap(z) < 0)
            return;
        if (pfd[0].revents & POLLIN) {
            int r = read_control(z);
            /* ECONNRESET is EOF with events of ours still unread: pyfenced stopped. */
            if (r <= 0) {
                if (r < 0 && errno != ECONNRESET)
                    pf_log_error(ZYGOTE, "control channel: %m");
                return;
            }
        } else if (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
            return;
        }
    }
}

static void
usage(FILE *f)
{
    fprintf(f, "Usage: pyfence-zygote [--log-level LEVEL] [--preload MODULE]...\n"
               "Started by pyfenced with its control channel on fd 3 (SOCK_SEQPACKET); not meant\n"
               "to be run by hand.\n"
               "  --log-level LEVEL  crit, err, warning, notice, info or debug\n"
               "  --preload MODULE   import MODULE once, before forking workers (repeatable)\n"
               "  --cgroup MODE      auto (default), v2, v1 or none (rlimits only, for tests)\n"
               "  --namespaces on|off  off: make no namespace (degraded runs, for tests)\n"
               "  --uid-range START:COUNT  worker uids/gids (pyfenced validates the range)\n"
               "  --seccomp-strict   an allow-listed syscall unknown here is a start-up error\n"
               "  --help             show this help\n");
}

struct options {
    int log_level;
    struct harden_zygote_config harden;
    const char **preload; /* owned array, strings borrowed from argv */
    size_t n_preload;
};

/* Returns 1 to run, 0 to exit successfully (--help), -1 on a usage error. */
static int
parse_args(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
            {"log-level", required_argument, NULL, 'l'},
            {"preload", required_argument, NULL, 'p'},
            {"cgroup", required_argument, NULL, 'c'},
            {"seccomp-strict", no_argument, NULL, 's'},
            {"namespaces", required_argument, NULL, 'n'},
            {"uid-range", required_argument, NULL, 'u'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
    };
    o->log_level = PF_LOG_NOTICE;
    o->preload = calloc((size_t) argc, sizeof(char *));
    if (!o->preload)
        return -1;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'l':
            o->log_level = pf_log_level_from_name(optarg);
            if (o->log_level < 0) {
                fprintf(stderr, "pyfence-zygote: unknown log level \"%s\"\n", optarg);
                return -1;
            }
            break;
        case 'p':
            o->preload[o->n_preload++] = optarg;
            break;
        case 'c':
            if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "v2") != 0 &&
                strcmp(optarg, "v1") != 0 && strcmp(optarg, "none") != 0) {
                fprintf(stderr, "pyfence-zygote: --cgroup must be auto, v2, v1 or none\n");
                return -1;
            }
            o->harden.cgroup_mode = optarg;
            break;
        case 's':
            o->harden.seccomp_strict = true;
            break;
        case 'n':
            if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
                fprintf(stderr, "pyfence-zygote: --namespaces must be on or off\n");
                return -1;
            }
            o->harden.namespaces_off = strcmp(optarg, "off") == 0;
            break;
        case 'u': {
            unsigned base, count;
            int end = 0;
            if (sscanf(optarg, "%u:%u%n", &base, &count, &end) != 2 || optarg[end] || !base ||
                !count) {
                fprintf(stderr, "pyfence-zygote: --uid-range must be START:COUNT\n");
                return -1;
            }
            o->harden.uid_base = base;
            o->harden.uid_count = count;
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "pyfence-zygote: unexpected argument \"%s\"\n", argv[optind]);
        return -1;
    }
    return 1;
}

static int
check_control_fd(void)
{
    int type;
    socklen_t len = sizeof(type);
    if (getsockopt(CONTROL_FD, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET) {
        pf_log_crit(ZYGOTE,
                    "fd %d is not a SOCK_SEQPACKET socket: pyfence-zygote is started by "
                    "pyfenced, not by hand",
                    CONTROL_FD);
        return -1;
    }
    /* Workers must not inherit it even if they ever exec'd. */
    return fcntl(CONTROL_FD, F_SETFD, FD_CLOEXEC);
}

/* Runs one small snippet before forking, so that what CPython and the executor set up on first
 * use (the AST types, method caches, interned names: ~1.3 ms) is done once here instead of in
 * every worker, on its request's path; zygote_python_prepare() then freezes the heap. A
 * failure only costs that time back, so it is logged and ignored. */
static void
warm_up(void)
{
    static const char *const imports[] = {EXEC_DEFAULT_IMPORTS};
    static const char code[] = "import math\n"
                               "def f(n):\n"
                               "    return [i * i for i in range(n) if i % 2 == 0]\n"
                               "x = {'a': f(5), 'b': math.sqrt(4.0), 'c': (1, 'two', None)}\n"
                               "print(f'{x!r} {len(x)}', sorted(x))\n"
                               "x['a'][-1] + 1";
    struct exec_policy policy = {.imports = imports, .n_imports = PF_ELEMENTSOF(imports)};
    _cleanup_pf_error_ struct pf_error *err = NULL;
    struct exec_env *env = exec_env_new(&policy, &err);
    cJSON *res = env ? exec_env_run(env, code, NULL, NULL) : NULL;
    const char *outcome = res ? msg_get_string(res, "outcome", "") : "";
    if (strcmp(outcome, "ok") != 0)
        pf_log_warning(ZYGOTE, "warming up the executor: %s, ignoring",
                       err   ? err->msg
                       : res ? outcome
                             : "out of memory");
    cJSON_Delete(res);
    exec_env_free(env);
    PyGC_Collect();
}

/* zygote_mem_share_code's probe: a pool worker's warm-up is the path every worker runs. The
 * probe child lets go of the control channel first: pyfenced must see it close when the
 * zygote dies, whether or not the probe is still running. */
static void
probe_worker_code(void *userdata)
{
    struct zygote *z = userdata;
    z->ctl = pf_close(z->ctl);
    (void) worker_warm_up_run(z->python.warm_env);
}

/* Once, before the zygote says it is ready: what it writes per job from then on stays out of
 * the pages its workers share, and forks copy the entries of the code workers run
 * (zygote_mem.h). Only the control packets' buffer is required; the rest makes forks cheaper. */
static int
lay_out_memory(struct zygote *z)
{
    _cleanup_pf_error_ struct pf_error *err = NULL;
    z->rx = zygote_mem_private_alloc(CONTROL_MAX_PACKET, &err);
    if (!z->rx) {
        pf_log_crit(ZYGOTE, "%s", err->msg);
        return -1;
    }
    size_t settled = zygote_mem_settle_heap(8u << 20);
    struct zygote_mem_code_stats code;
    bool shared = zygote_mem_share_code(probe_worker_code, z, &code) == 0;
    pf_log_info(ZYGOTE,
                "memory laid out for forks: %zu bytes of free heap chunks out of use; forks copy "
                "the entries of %zu code and constant pages in %zu of %zu read-only mappings (%zu "
                "mapped before)",
                settled, code.pages_shared, code.shared, code.mappings, code.pages_before);
    if (!shared)
        pf_log_warning(ZYGOTE,
                       "cannot read /proc/self/maps or pagemap, or write /proc/self/mem: every "
                       "worker faults its code in again (slower jobs, same safety)");
    else if (!code.probed)
        pf_log_warning(ZYGOTE, "the probe of a worker's code failed: forks copy the entries of "
                               "all the code the zygote ran (slower jobs, same safety)");
    if (zygote_mem_arena_init(CJSON_ARENA_BYTES, &err) < 0)
        pf_log_warning(ZYGOTE, "%s; control messages use malloc (slower forks)", err->msg);
    return 0;
}

/* Not dumpable, from the point where the zygote no longer needs its own /proc/self files by
 * path (the uid and gid maps harden_zygote_init wrote, the /proc/self/mem lay_out_memory wrote:
 * non-dumpable, they are root's, and a zygote that is not root could no longer open them): no
 * process of its uid (a worker without namespaces of a pyfenced that is not root) may ptrace it
 * or write its /proc/PID/mem, and with it every later worker forked from it. Workers inherit
 * the setting at fork (the privileges layer sets it again). */
static int
stop_being_dumpable(void)
{
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
        pf_log_crit(ZYGOTE, "prctl(PR_SET_DUMPABLE, 0): %m");
        return -1;
    }
    return 0;
}

static int
send_ready(struct zygote *z)
{
    /* "3.11.2 (main, ...)": the version is the first word. */
    char version[32];
    snprintf(version, sizeof(version), "%s", Py_GetVersion());
    version[strcspn(version, " ")] = '\0';
    cJSON *o = cJSON_CreateObject();
    if (o) {
        cJSON_AddStringToObject(o, "event", "ready");
        cJSON_AddNumberToObject(o, "pid", getpid());
        cJSON_AddStringToObject(o, "python", version);
    }
    return send_event(z, o);
}

int
main(int argc, char **argv)
{
    /* pyfenced sets it so that the dynamic linker bound every symbol before main (workers then
     * inherit a resolved GOT instead of each writing its own); it has done its work, and must
     * not reach CPython's os.environ, which snippets see. */
    unsetenv("LD_BIND_NOW");
    struct options o = {0};
    int r = parse_args(argc, argv, &o);
    if (r <= 0)
        return r < 0 ? 2 : 0;
    pf_log_init(o.log_level, "pyfence-zygote");
    if (check_control_fd() < 0)
        return 1;

    struct zygote z = {.ctl = CONTROL_FD, .sigfd = -1};
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    /* Ctrl-C in a terminal and systemd's stop (KillMode=control-group) signal the whole group:
     * the zygote outlives them until pyfenced, shutting down gracefully, closes its channel,
     * then kills its workers and removes its cgroup pool. Dying at once would leave the pool
     * behind and fail in-flight jobs before pyfenced could answer them. */
    sigaddset(&chld, SIGTERM);
    sigaddset(&chld, SIGINT);
    /* SIGUSR1 (cancel) stays blocked until a worker has its handler (worker_main). */
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0 || sigprocmask(SIG_BLOCK, &usr1, NULL) < 0 ||
        (z.sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
        pf_log_crit(ZYGOTE, "signalfd(SIGCHLD): %m");
        return 1;
    }

    _cleanup_pf_error_ struct pf_error *err = NULL;
    if (exec_python_init(&err) < 0) {
        pf_log_crit(ZYGOTE, "cannot start the executor: %s", err->msg);
        return 1;
    }
    /* A profile may name a module this host lacks (the data profile's numpy): the other
     * profiles still work, and that one's snippets get the import error when they ask. */
    size_t preloaded = 0;
    for (size_t i = 0; i < o.n_preload; i++) {
        if (exec_preload(&o.preload[i], 1, &err) == 0) {
            preloaded++;
            continue;
        }
        pf_log_warning(ZYGOTE, "%s; skipping it", err->msg);
        err = pf_error_free(err);
    }
    warm_up();
    if (zygote_python_prepare(&z.python, &err) < 0) {
        pf_log_crit(ZYGOTE, "%s", err->msg);
        return 1;
    }
    if (harden_zygote_init(&o.harden, &err) < 0) {
        pf_log_crit(ZYGOTE, "cannot prepare worker hardening: %s", err->msg);
        return 1;
    }
    harden_expect_parent(getpid());
    if (lay_out_memory(&z) < 0 || stop_being_dumpable() < 0 || send_ready(&z) < 0) {
        harden_zygote_finish();
        return 1;
    }
    pf_log_info(ZYGOTE, "ready: python %s, %zu of %zu modules preloaded", Py_GetVersion(),
                preloaded, o.n_preload);
    serve(&z);

    /* Control channel gone: the daemon stopped or died. No worker outlives it. */
    kill_all_and_reap(&z);
    zygote_mem_arena_release();
    zygote_mem_private_free(z.rx, CONTROL_MAX_PACKET);
    harden_zygote_finish();
    zygote_python_release(&z.python);
    free(z.jobs);
    free(o.preload);
    pf_log_info(ZYGOTE, "control channel closed, exiting");
    return 0;
}
