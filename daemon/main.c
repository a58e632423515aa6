/* pyfenced: options, logging, the loop. Never daemonizes (systemd or the caller supervises). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "fdlimit.h"
#include "harden_zygote.h"
#include "load.h"
#include "pf_cleanup.h"
#include "pf_log.h"
#include "policy_warnings.h"

/* pyfenced(8): a bad command line is a start-up failure like any other. */
#define EXIT_USAGE 1

struct options {
    struct daemon_options d;
    struct policy_limits limits;
    bool limit_given[_POLICY_LIMIT_MAX]; /* set on the command line, not the table's default */
    const char *zygote_arg;
    /* --check, --check-policy DIR: run once the whole command line is parsed, so that the
     * options they audit are those given and a bad option fails them too. */
    bool check;
    const char *check_policy_dir;
};

/* One option per daemon-wide limit, named after it (max_jobs_per_uid: --max-jobs-per-uid), as
 * README and pyfence-profile(5) promise; test_options.py checks the table covers them all. */
static const struct {
    int opt;
    enum policy_limit limit;
    const char *flag;
    const char *alias; /* a former name, still accepted */
} limit_options[] = {
        {0x100, POLICY_LIMIT_MAX_CONNECTIONS, "--max-connections", NULL},
        {0x101, POLICY_LIMIT_MAX_INFLIGHT, "--max-inflight", NULL},
        {0x102, POLICY_LIMIT_MAX_FRAME_BYTES, "--max-frame-bytes", NULL},
        {0x103, POLICY_LIMIT_MAX_WORKERS, "--max-workers", NULL},
        {0x104, POLICY_LIMIT_CONN_IDLE_TIMEOUT_MS, "--conn-idle-timeout-ms", "--idle-timeout-ms"},
        {0x105, POLICY_LIMIT_MAX_JOBS_PER_UID, "--max-jobs-per-uid", NULL},
        {0x106, POLICY_LIMIT_MAX_QUEUED, "--max-queued", NULL},
        {0x107, POLICY_LIMIT_MAX_QUEUED_PER_UID, "--max-queued-per-uid", NULL},
        {0x108, POLICY_LIMIT_MAX_CONNECTIONS_PER_UID, "--max-connections-per-uid", NULL},
        {0x109, POLICY_LIMIT_MAX_BYTES_PER_UID, "--max-bytes-per-uid", NULL},
        {0x10a, POLICY_LIMIT_MAX_BYTES, "--max-bytes", NULL},
        {0x10b, POLICY_LIMIT_EGRESS_MAX_BYTES_HELD, "--egress-max-bytes-held", NULL},
        {0x10c, POLICY_LIMIT_MAX_SESSION_WORKERS_PER_UID, "--max-session-workers-per-uid", NULL},
        {0x10d, POLICY_LIMIT_MAX_OUTBUF_BYTES, "--max-outbuf-bytes", NULL},
};

/* Help text from the limits table, wrapped to 80 columns under the description column: the
 * table's sentences are written for pyfence-profile(5), not for a terminal. */
static void
print_wrapped(const char *text, int col)
{
    enum { INDENT = 25, WIDTH = 80 };
    bool first = true;
    while (*text) {
        int word = (int) strcspn(text, " ");
        if (!first && col + 1 + word > WIDTH) {
            printf("\n%*s", INDENT, "");
            col = INDENT;
        } else if (!first) {
            putchar(' ');
            col++;
        }
        printf("%.*s", word, text);
        col += word;
        text += word;
        text += strspn(text, " ");
        first = false;
    }
    putchar('\n');
}

static void
help(void)
{
    printf("Usage: pyfenced [OPTION]...\n"
           "Runs untrusted Python snippets for local agents, each in a hardened worker.\n"
           "\n"
           "  --socket PATH          listen on PATH (default: $PYFENCE_SOCKET, else\n"
           "                         /run/pyfence/pyfence.sock as root,\n"
           "                         $XDG_RUNTIME_DIR/pyfence.sock otherwise)\n"
           "  --socket-mode MODE     permissions of the socket, octal (default 0660)\n"
           "  --log-level LEVEL      crit, err, warning, notice, info or debug\n"
           "                         (default notice)\n"
           "  --zygote PATH          the pyfence-zygote binary (default: next to pyfenced,\n"
           "                         then worker/ below it, then " PYFENCE_LIBEXECDIR ")\n"
           "  --policy DIR           load the profiles (*.json, pyfence-profile(5)) from\n"
           "                         DIR; SIGHUP reloads them (default: the built-in\n"
           "                         profiles)\n"
           "  --cgroup MODE          the workers' cgroups: auto (default: v2, else v1, else\n"
           "                         none), v2, v1, or none (rlimits only: a loud warning)\n"
           "  --namespaces on|off    off: workers get no namespace (degraded runs; a loud\n"
           "                         warning); default on\n"
           "  --uid-range START:COUNT  workers run as uid/gid START.. START+COUNT-1, one per\n"
           "                         concurrent worker; ids of no user or group (default\n"
           "                         600000:65536)\n"
           "  --keep-groups          not root: start even with supplementary groups, which\n"
           "                         every worker then keeps (a loud warning)\n");
    for (size_t i = 0; i < PF_ELEMENTSOF(limit_options); i++) {
        const struct policy_limit_def *def = policy_limit_def(limit_options[i].limit);
        char flag[40];
        snprintf(flag, sizeof(flag), "%s N", limit_options[i].flag);
        int col = 25;
        if (strlen(flag) > 22) /* a long flag: its help starts on the next line */
            printf("  %s\n%25s", flag, "");
        else
            col = printf("  %-22s ", flag);
        print_wrapped(def->help, col);
        printf("  %-22s (default %lld, range %lld..%lld)\n", "", (long long) def->def,
               (long long) def->min, (long long) def->max);
        if (limit_options[i].alias)
            printf("  %-22s also %s N, its former name\n", "", limit_options[i].alias);
    }
    printf("  --check                audit the host: print what each hardening layer gets\n"
           "                         with the --cgroup, --namespaces, --uid-range and\n"
           "                         --keep-groups given, then exit\n"
           "  --check-policy DIR     validate the profiles of DIR and print them as they\n"
           "                         would be applied (one JSON object, by profile name),\n"
           "                         then exit\n"
           "  --version              print the version and exit\n"
           "  --help                 print this help and exit\n"
           "\n"
           "Environment:\n"
           "  PYFENCE_SOCKET         socket path when --socket is not given\n"
           "  XDG_RUNTIME_DIR        directory of the default socket for non-root users\n"
           "  JOURNAL_STREAM         set by systemd: log lines get <N> priority prefixes\n"
           "  LISTEN_PID, LISTEN_FDS set by systemd socket activation: fd 3 is the socket\n"
           "\n"
           "Signals: SIGTERM, SIGINT stop gracefully; SIGHUP reloads the policy.\n"
           "\n"
           "Exit status: 0 after a clean stop (SIGTERM or SIGINT), or when --check or\n"
           "--check-policy found nothing wrong; 1 otherwise (bad option, socket in use,\n"
           "zygote missing, a layer that cannot be applied, an invalid profile).\n");
}

static int
parse_octal_mode(const char *s, mode_t *ret)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 8);
    if (errno || !*s || *end || v > 0777)
        return -1;
    *ret = (mode_t) v;
    return 0;
}

static int
parse_limit(struct options *o, int opt, const char *arg)
{
    for (size_t i = 0; i < PF_ELEMENTSOF(limit_options); i++) {
        if (limit_options[i].opt != opt)
            continue;
        char *end;
        errno = 0;
        long long v = strtoll(arg, &end, 10);
        if (errno || !*arg || *end) {
            fprintf(stderr, "pyfenced: %s: '%s' is not an integer\n", limit_options[i].flag, arg);
            return -1;
        }
        struct pf_error *err = NULL;
        if (policy_limits_set(&o->limits, limit_options[i].limit, v, limit_options[i].flag, &err) <
            0) {
            fprintf(stderr, "pyfenced: %s\n", err->msg);
            pf_error_free(err);
            return -1;
        }
        o->limit_given[limit_options[i].limit] = true;
        return 0;
    }
    return -1;
}

/* The workers' identities: a range no user or group of this host has, clear of the system and
 * regular ids (below 65536, nobody included) and of (uid_t) -1. */
static int
parse_uid_range(const char *arg, uint32_t *ret_base, uint32_t *ret_count)
{
    unsigned long long base, count;
    int end = 0;
    if (sscanf(arg, "%llu:%llu%n", &base, &count, &end) != 2 || arg[end] || !isdigit(arg[0]) ||
        !strchr(arg, ':') || !isdigit(strchr(arg, ':')[1])) {
        fprintf(stderr, "pyfenced: --uid-range: '%s' is not START:COUNT (e.g. 600000:65536)\n",
                arg);
        return -1;
    }
    if (count < 1 || count > 1u << 24) {
        fprintf(stderr, "pyfenced: --uid-range: COUNT %llu is not in 1..%u\n", count, 1u << 24);
        return -1;
    }
    if (base < 65536) {
        fprintf(stderr,
                "pyfenced: --uid-range: START %llu is below 65536: workers would share the ids "
                "of system or regular users (or nobody)\n",
                base);
        return -1;
    }
    if (base + count - 1 >= UINT32_MAX) {
        fprintf(stderr, "pyfenced: --uid-range: %llu:%llu ends past the largest uid %u\n", base,
                count, UINT32_MAX - 1);
        return -1;
    }
    /* A worker with a real user's (or group's) id could read and write what that user owns. */
    const char *clash = NULL;
    unsigned long long id = 0;
    setpwent();
    for (struct passwd *pw; !clash && (pw = getpwent());)
        if (pw->pw_uid >= base && pw->pw_uid < base + count)
            clash = "user", id = pw->pw_uid;
    endpwent();
    setgrent();
    for (struct group *gr; !clash && (gr = getgrent());)
        if (gr->gr_gid >= base && gr->gr_gid < base + count)
            clash = "group", id = gr->gr_gid;
    endgrent();
    if (clash) {
        fprintf(stderr,
                "pyfenced: --uid-range: %llu:%llu holds id %llu of an existing %s; pick a range "
                "no user or group has\n",
                base, count, id, clash);
        return -1;
    }
    *ret_base = (uint32_t) base;
    *ret_count = (uint32_t) count;
    return 0;
}

/* Prints every profile of dir as it will be applied, as one JSON object by profile name (one
 * document, for jq and json.tool); exit status. */
static int
check_policy(const char *dir)
{
    struct policy *p = NULL;
    struct pf_error *err = NULL;
    if (policy_load_dir(dir, &p, &err) < 0) {
        fprintf(stderr, "pyfenced: %s\n", err ? err->msg : "out of memory");
        pf_error_free(err);
        return EXIT_FAILURE;
    }
    cJSON *all = cJSON_CreateObject();
    bool complete = all != NULL;
    for (size_t i = 0; complete && i < p->n; i++) {
        cJSON *json = policy_profile_to_json(p->profiles[i]);
        complete = json && cJSON_AddItemToObject(all, p->profiles[i]->name, json);
        if (!complete)
            cJSON_Delete(json);
    }
    char *text = complete ? cJSON_Print(all) : NULL;
    cJSON_Delete(all);
    if (!text) {
        fprintf(stderr, "pyfenced: out of memory printing the profiles of '%s'\n", dir);
        policy_free(p);
        return EXIT_FAILURE;
    }
    printf("%s\n", text);
    free(text);
    /* What pyfenced would log at each load of this policy, if it ran as this user. */
    struct policy_strings warnings = {0};
    if (policy_warnings(p, geteuid(), &warnings, &err) < 0) {
        fprintf(stderr, "pyfenced: %s\n", err ? err->msg : "out of memory");
        pf_error_free(err);
        policy_free(p);
        return EXIT_FAILURE;
    }
    for (size_t i = 0; i < warnings.n; i++)
        fprintf(stderr, "pyfenced: warning: %s\n", warnings.items[i]);
    fprintf(stderr,
            "pyfenced: %zu profiles in '%s' are valid (%zu warnings, as for a pyfenced "
            "running as uid %u)\n",
            p->n, dir, warnings.n, (unsigned) geteuid());
    policy_strings_finish(&warnings);
    policy_free(p);
    return EXIT_SUCCESS;
}

/* Returns 0 to go on, or an exit status + 1 (so 1 means "exit 0"). */
static int
parse_args(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {
            {"socket", required_argument, NULL, 's'},
            {"socket-mode", required_argument, NULL, 'm'},
            {"log-level", required_argument, NULL, 'l'},
            {"zygote", required_argument, NULL, 'z'},
            {"policy", required_argument, NULL, 'p'},
            {"check", no_argument, NULL, 'C'},
            {"check-policy", required_argument, NULL, 'P'},
            {"cgroup", required_argument, NULL, 'g'},
            {"namespaces", required_argument, NULL, 'n'},
            {"uid-range", required_argument, NULL, 'u'},
            {"keep-groups", no_argument, NULL, 'G'},
            {"max-connections", required_argument, NULL, 0x100},
            {"max-inflight", required_argument, NULL, 0x101},
            {"max-frame-bytes", required_argument, NULL, 0x102},
            {"max-workers", required_argument, NULL, 0x103},
            {"conn-idle-timeout-ms", required_argument, NULL, 0x104},
            {"idle-timeout-ms", required_argument, NULL, 0x104}, /* its former name */
            {"max-jobs-per-uid", required_argument, NULL, 0x105},
            {"max-queued", required_argument, NULL, 0x106},
            {"max-queued-per-uid", required_argument, NULL, 0x107},
            {"max-connections-per-uid", required_argument, NULL, 0x108},
            {"max-bytes-per-uid", required_argument, NULL, 0x109},
            {"max-bytes", required_argument, NULL, 0x10a},
            {"egress-max-bytes-held", required_argument, NULL, 0x10b},
            {"max-session-workers-per-uid", required_argument, NULL, 0x10c},
            {"max-outbuf-bytes", required_argument, NULL, 0x10d},
            {"version", no_argument, NULL, 'V'},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            o->d.socket_path = optarg;
            break;
        case 'm':
            if (parse_octal_mode(optarg, &o->d.socket_mode) < 0) {
                fprintf(stderr, "pyfenced: --socket-mode: '%s' is not an octal mode <= 0777\n",
                        optarg);
                return EXIT_USAGE + 1;
            }
            break;
        case 'l':
            o->d.log_level = pf_log_level_from_name(optarg);
            if (o->d.log_level < 0) {
                fprintf(stderr,
                        "pyfenced: --log-level: unknown level '%s' (crit, err, "
                        "warning, notice, info, debug)\n",
                        optarg);
                return EXIT_USAGE + 1;
            }
            break;
        case 'z':
            o->zygote_arg = optarg;
            break;
        case 'p':
            o->d.policy_dir = optarg;
            break;
        case 'g':
            if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "v2") != 0 &&
                strcmp(optarg, "v1") != 0 && strcmp(optarg, "none") != 0) {
                fprintf(stderr, "pyfenced: --cgroup: '%s' is not auto, v2, v1 or none\n", optarg);
                return EXIT_USAGE + 1;
            }
            o->d.cgroup_mode = strcmp(optarg, "auto") == 0 ? NULL : optarg;
            break;
        case 'n':
            if (strcmp(optarg, "on") != 0 && strcmp(optarg, "off") != 0) {
                fprintf(stderr, "pyfenced: --namespaces: '%s' is not on or off\n", optarg);
                return EXIT_USAGE + 1;
            }
            o->d.namespaces_off = strcmp(optarg, "off") == 0;
            break;
        case 'G':
            o->d.keep_groups = true;
            break;
        case 'u':
            if (parse_uid_range(optarg, &o->d.uid_base, &o->d.uid_count) < 0)
                return EXIT_USAGE + 1;
            break;
        case 'C':
            o->check = true;
            break;
        case 'P':
            o->check_policy_dir = optarg;
            break;
        case 'V':
            printf("pyfenced %s (protocol %d)\n", PYFENCE_VERSION, 1);
            return EXIT_SUCCESS + 1;
        case 'h':
            help();
            return EXIT_SUCCESS + 1;
        default:
            if (c >= 0x100 && c < 0x100 + (int) PF_ELEMENTSOF(limit_options)) {
                if (parse_limit(o, c, optarg) < 0)
                    return EXIT_USAGE + 1;
                break;
            }
            fprintf(stderr, "Try 'pyfenced --help'.\n");
            return EXIT_USAGE + 1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "pyfenced: unexpected argument '%s'\nTry 'pyfenced --help'.\n",
                argv[optind]);
        return EXIT_USAGE + 1;
    }
    if (o->check && o->check_policy_dir) {
        fprintf(stderr, "pyfenced: --check and --check-policy are two runs, not one\n");
        return EXIT_USAGE + 1;
    }
    return 0;
}

/* --check with the hardening options given (what the zygote would be started with). */
static int
check_host(const struct options *o)
{
    struct harden_zygote_config config = {
            .cgroup_mode = o->d.cgroup_mode,
            .namespaces_off = o->d.namespaces_off,
            .uid_base = o->d.uid_base,
            .uid_count = o->d.uid_count,
    };
    return harden_check_host(&config, o->d.keep_groups, stdout);
}

/* The zygote next to us (installed layout with libexecdir == bindir), in worker/ below us
 * (the build tree), then the configured libexecdir. */
static int
find_zygote(const char *explicit_path, char **ret, char *tried, size_t tried_size)
{
    if (explicit_path) {
        snprintf(tried, tried_size, "%s", explicit_path);
        if (access(explicit_path, X_OK) < 0)
            return -1;
        *ret = strdup(explicit_path);
        return *ret ? 0 : -1;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    char candidates[3][PATH_MAX + 32];
    size_t nc = 0;
    if (n > 0) {
        self[n] = '\0';
        const char *dir = dirname(self);
        snprintf(candidates[nc++], sizeof(candidates[0]), "%s/pyfence-zygote", dir);
        snprintf(candidates[nc++], sizeof(candidates[0]), "%s/worker/pyfence-zygote", dir);
    }
    snprintf(candidates[nc++], sizeof(candidates[0]), "%s/pyfence-zygote", PYFENCE_LIBEXECDIR);
    tried[0] = '\0';
    for (size_t i = 0; i < nc; i++) {
        if (access(candidates[i], X_OK) == 0) {
            *ret = strdup(candidates[i]);
            return *ret ? 0 : -1;
        }
        size_t len = strlen(tried);
        snprintf(tried + len, tried_size - len, "%s'%s'", i ? ", " : "", candidates[i]);
    }
    return -1;
}

static int
run(struct options *o)
{
    uv_loop_t loop;
    int r = uv_loop_init(&loop);
    if (r < 0) {
        pf_log_crit(MAIN, "uv_loop_init: %s", uv_strerror(r));
        return EXIT_FAILURE;
    }
    struct daemon *d = calloc(1, sizeof(*d));
    if (!d) {
        pf_log_crit(MAIN, "out of memory");
        return EXIT_FAILURE;
    }
    struct pf_error *err = NULL;
    if (egress_global_init(&err) < 0) {
        pf_log_crit(MAIN, "%s", err->msg);
        pf_error_free(err);
        free(d);
        return EXIT_FAILURE;
    }
    daemon_init(d, &loop, &o->d, &o->limits);
    if (daemon_start(d, &err) < 0) {
        pf_log_crit(MAIN, "%s", err->msg);
        pf_error_free(err);
        daemon_shutdown(d);
        uv_run(&loop, UV_RUN_DEFAULT);
        daemon_finish(d);
        uv_loop_close(&loop);
        free(d);
        egress_global_cleanup();
        return EXIT_FAILURE;
    }
    pf_log_notice(MAIN, "pyfenced %s ready", PYFENCE_VERSION);
    uv_run(&loop, UV_RUN_DEFAULT);
    daemon_finish(d);
    int status = d->exit_status;
    free(d);
    egress_global_cleanup();
    r = uv_loop_close(&loop);
    if (r < 0) {
        pf_log_error(MAIN, "handles still open at exit: %s", uv_strerror(r));
        return EXIT_FAILURE;
    }
    pf_log_notice(MAIN, "stopped");
    return status;
}

/* Raises the soft RLIMIT_NOFILE to the hard limit and fits max_connections in it beside the
 * daemon, its zygotes and its workers (fdlimit.h has the formula). An explicit --max-connections
 * that does not fit is a start-up failure: the admin asked for that many and would otherwise
 * find out under load. The default is lowered to what fits, loudly. */
static int
fit_open_files(struct options *o)
{
    struct fdlimit lim;
    struct pf_error *err = NULL;
    if (fdlimit_raise(&lim, &err) < 0) {
        pf_log_warning(MAIN, "%s, ignoring", err->msg);
        err = pf_error_free(err);
    }
    if (lim.soft != lim.before)
        pf_log_notice(MAIN, "open-file limit (RLIMIT_NOFILE) raised from %llu to %llu",
                      (unsigned long long) lim.before, (unsigned long long) lim.soft);
    else
        pf_log_info(MAIN, "open-file limit (RLIMIT_NOFILE): %llu (hard %llu)",
                    (unsigned long long) lim.soft, (unsigned long long) lim.hard);
    /* max_workers 0 becomes its concrete value here, for the sum (daemon_init keeps it). */
    sched_derive_limits(&o->limits);
    int64_t *max_conns = &o->limits.v[POLICY_LIMIT_MAX_CONNECTIONS];
    int64_t clamped_from = 0;
    if (fdlimit_fit(lim.soft, (uint64_t) o->limits.v[POLICY_LIMIT_MAX_WORKERS],
                    o->limit_given[POLICY_LIMIT_MAX_CONNECTIONS], max_conns, &clamped_from,
                    &err) < 0) {
        pf_log_crit(MAIN, "%s", err->msg);
        pf_error_free(err);
        return -1;
    }
    if (clamped_from)
        pf_log_warning(MAIN,
                       "max_connections lowered from %lld to %lld: the open-file limit %llu "
                       "(RLIMIT_NOFILE) holds no more beside pyfenced, its zygotes and %lld "
                       "workers; raise it (LimitNOFILE=, ulimit -n) to serve more",
                       (long long) clamped_from, (long long) *max_conns,
                       (unsigned long long) lim.soft,
                       (long long) o->limits.v[POLICY_LIMIT_MAX_WORKERS]);
    return 0;
}

int
main(int argc, char **argv)
{
    struct options o = {.d = {.socket_mode = 0660, .log_level = PF_LOG_NOTICE}};
    policy_limits_init_defaults(&o.limits);
    int r = parse_args(argc, argv, &o);
    if (r > 0)
        return r - 1;
    if (o.check)
        return check_host(&o);
    if (o.check_policy_dir)
        return check_policy(o.check_policy_dir);
    pf_log_init(o.d.log_level, "pyfenced");
    /* Not dumpable: no process of the daemon's uid (a worker of a pyfenced that is not root,
     * without namespaces) may ptrace it or read its /proc files, /proc/PID/mem and environ among
     * them, which hold every client's requests. Its own /proc/self stays readable. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
        pf_log_crit(MAIN, "prctl(PR_SET_DUMPABLE, 0): %m");
        return EXIT_FAILURE;
    }
    /* A peer that closes mid-reply must cost an EPIPE, not the daemon. */
    signal(SIGPIPE, SIG_IGN);
    if (fit_open_files(&o) < 0)
        return EXIT_FAILURE;

    _cleanup_free_ char *zygote = NULL;
    char tried[3 * (PATH_MAX + 40)];
    if (find_zygote(o.zygote_arg, &zygote, tried, sizeof(tried)) < 0) {
        fprintf(stderr,
                "pyfenced: cannot find an executable pyfence-zygote (tried %s); pass "
                "--zygote PATH\n",
                tried);
        return EXIT_FAILURE;
    }
    o.d.zygote_path = zygote;
    return run(&o);
}
