/* pyfence: the command-line client of pyfenced (contract in DESIGN.md "Names").
 * Exit status: 0 ok; 1 the snippet raised, was refused by policy, crashed its worker or made a
 * forbidden system call; 2 usage, connection, protocol or internal error; 3 a limit was hit;
 * 130 Ctrl-C cancelled the exec. */
#include "pyfence.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_repr.h"
#include "cli_status.h"
#include "config.h"

enum exit_status {
    EXIT_OK = 0,
    EXIT_SNIPPET = 1,
    EXIT_USAGE = 2,
    EXIT_LIMIT = 3,
    EXIT_INTERRUPTED = 130, /* as a shell reports a command that SIGINT ended */
};

#define MAX_IMPORTS    64
#define MAX_CODE_BYTES (16u * 1024 * 1024)

static const char main_usage[] =
        "Usage: pyfence [--socket PATH] COMMAND [ARGS]\n"
        "\n"
        "Runs Python snippets in pyfenced, the sandbox daemon for LLM agents.\n"
        "\n"
        "Commands:\n"
        "  exec [-c CODE | FILE | -]   run a snippet and print its output and result\n"
        "  session open|get|list|close keep state between snippets (pyfence help session)\n"
        "  ping                        check that the daemon answers\n"
        "  status [--json]             daemon version, uptime, connections and jobs\n"
        "  help [COMMAND]              show help for a command\n"
        "\n"
        "Options:\n"
        "  -s, --socket PATH   the daemon's socket (default: $PYFENCE_SOCKET, else\n"
        "                      /run/pyfence/pyfence.sock as root, else\n"
        "                      $XDG_RUNTIME_DIR/pyfence.sock)\n"
        "  -h, --help          show this help\n"
        "  -V, --version       show the version\n"
        "\n"
        "Exit status: 0 ok; 1 the snippet raised or was refused (also worker_crashed,\n"
        "seccomp_violation); 2 usage, connection or protocol error; 3 a limit was hit\n"
        "(timeout, cpu_limit, memory_limit, pids_limit, output_limit); 130 Ctrl-C\n"
        "cancelled an exec.\n";

static const char exec_usage[] =
        "Usage: pyfence exec [-c CODE | FILE | -] [--profile NAME] [--timeout SEC]\n"
        "                    [--import MOD]... [--json]\n"
        "       pyfence exec --session ID [-c CODE | FILE | -] [--json]\n"
        "\n"
        "Runs one snippet in a fresh sandboxed worker, or in a session's worker. Its printed "
        "output goes to stdout as it\n"
        "is produced, then the repr() of its result when that is not None. Errors go to\n"
        "stderr in smolagents' form. With no CODE or FILE, or with -, reads the snippet from\n"
        "stdin. Ctrl-C cancels the snippet (a session keeps its state) and reports how it\n"
        "ended, exit status 130; a second Ctrl-C ends the command at once.\n"
        "\n"
        "Options:\n"
        "  -c, --code CODE     the snippet itself\n"
        "  -p, --profile NAME  run under this profile, one you may use (default: yours):\n"
        "                      its limits, imports and warm pool\n"
        "  -t, --timeout SEC   wall-clock limit in seconds (fractions allowed); may only\n"
        "                      tighten the profile's\n"
        "  -i, --import MOD    also allow importing MOD (MOD.* allows its submodules too)\n"
        "  -j, --json          print the whole reply object as JSON instead\n"
        "  -S, --session ID    run in session ID (see pyfence session open), which keeps\n"
        "                      what earlier snippets defined; its profile, limits and\n"
        "                      imports were fixed when it opened\n"
        "  -h, --help          show this help\n";

static const char session_usage[] =
        "Usage: pyfence session open [--profile NAME] [--import MOD]... [--timeout SEC]\n"
        "       pyfence session get ID NAME... [--json]\n"
        "       pyfence session list [--json]\n"
        "       pyfence session close ID\n"
        "\n"
        "A session is one sandboxed worker that keeps the variables, functions, classes and\n"
        "imports of each snippet for the next: run snippets in it with\n"
        "pyfence exec --session ID. It belongs to your user.\n"
        "\n"
        "  open    start a session and print its id alone on a line. It is opened detached\n"
        "          (this command's connection ends when it exits): it lasts until closed or\n"
        "          idle for the profile's session_idle_timeout_ms (10 minutes by default).\n"
        "          Ctrl-C while it waits for a worker takes the open back: no session is\n"
        "          left, and it exits with status 130. When sessions (of every user) hold\n"
        "          their share of the workers (pyfence status), it fails at once (busy).\n"
        "            -p, --profile NAME   a profile you may use (default: yours)\n"
        "            -i, --import MOD     also allow importing MOD, within the profile\n"
        "            -t, --timeout SEC    wall-clock limit of each snippet (tightens only)\n"
        "  get     print the named variables, one 'name = repr' line each; names the\n"
        "          session does not define are reported on stderr (exit status 1);\n"
        "          variables over max_result_bytes together are refused (exit status 3).\n"
        "            -j, --json           print the reply (tagged values) as JSON\n"
        "  list    your sessions: id, profile, state, snippets run, idle time\n"
        "            -j, --json           print them as JSON\n"
        "  close   end the session and kill its worker\n"
        "\n"
        "A session whose worker died (memory limit, time limit, crash) is lost: the next\n"
        "command on it says why (session_lost), then the id is unknown.\n";

static const char ping_usage[] = "Usage: pyfence ping\n"
                                 "\n"
                                 "Sends a ping and prints the round-trip time.\n";

static const char status_usage[] =
        "Usage: pyfence status [--json]\n"
        "\n"
        "Shows the daemon's version, uptime, connections, jobs by outcome, workers, the\n"
        "queue, latency of recent jobs, warm pools, peers by uid and the policy.\n"
        "\n"
        "Options:\n"
        "  -j, --json   print the stats reply as JSON\n"
        "  -h, --help   show this help\n";

__attribute__((format(printf, 2, 3))) static int
usage_error(const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pyfence: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n\n%s", usage);
    return EXIT_USAGE;
}

static int
report(const struct pyfence_error *err)
{
    fprintf(stderr, "pyfence: %s\n", err->message);
    return EXIT_USAGE;
}

static int
exit_status_of(int outcome_code)
{
    switch (outcome_code) {
    case PYFENCE_OK:
        return EXIT_OK;
    case PYFENCE_E_ERROR:
    case PYFENCE_E_WORKER_CRASHED:
    case PYFENCE_E_SECCOMP:
        return EXIT_SNIPPET;
    case PYFENCE_E_TIMEOUT:
    case PYFENCE_E_CPU_LIMIT:
    case PYFENCE_E_MEMORY_LIMIT:
    case PYFENCE_E_PIDS_LIMIT:
    case PYFENCE_E_OUTPUT_LIMIT:
        return EXIT_LIMIT;
    case PYFENCE_E_CANCELLED:
        return EXIT_INTERRUPTED;
    default:
        return EXIT_USAGE;
    }
}

static char *
read_stream(FILE *f, const char *name)
{
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
        if (len + 1 == cap) {
            if (cap >= MAX_CODE_BYTES) {
                fprintf(stderr, "pyfence: %s is larger than %u bytes\n", name, MAX_CODE_BYTES);
                free(buf);
                return NULL;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                free(buf);
            buf = nb;
            cap *= 2;
        }
    }
    if (!buf) {
        fprintf(stderr, "pyfence: out of memory reading %s\n", name);
        return NULL;
    }
    if (ferror(f)) {
        fprintf(stderr, "pyfence: cannot read %s: %s\n", name, strerror(errno));
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

static char *
read_code(const char *path)
{
    if (!path || strcmp(path, "-") == 0)
        return read_stream(stdin, "stdin");
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "pyfence: cannot open '%s': %s\n", path, strerror(errno));
        return NULL;
    }
    char *code = read_stream(f, path);
    fclose(f);
    return code;
}

struct output_state {
    bool any;     /* some output was streamed */
    bool ends_nl; /* the last streamed byte was a newline */
};

static void
on_output(void *userdata, const char *data, size_t len)
{
    struct output_state *st = userdata;
    if (len == 0)
        return;
    fwrite(data, 1, len, stdout);
    fflush(stdout);
    st->any = true;
    st->ends_nl = data[len - 1] == '\n';
}

/* cJSON_Print keeps 15 digits when they are "close enough" (0.30000000000000004 prints as 0.3)
 * and gives big integers an exponent: every number becomes raw text that reads back exactly. */
static void
exact_numbers(cJSON *node)
{
    cJSON *child = node->child;
    while (child) {
        cJSON *next = child->next;
        if (cJSON_IsNumber(child)) {
            double d = child->valuedouble;
            char text[64];
            if (d == trunc(d) && fabs(d) < 1e17) {
                snprintf(text, sizeof(text), "%.0f", d);
            } else {
                /* A subnormal has fewer significant digits than DBL_DIG: start lower, or
                 * 5e-324 would print as 4.94065645841247e-324. */
                for (int prec = fpclassify(d) == FP_SUBNORMAL ? 1 : 15; prec <= 17; prec++) {
                    snprintf(text, sizeof(text), "%.*g", prec, d);
                    if (strtod(text, NULL) == d)
                        break;
                }
            }
            cJSON *raw = cJSON_CreateRaw(text);
            /* ReplaceItemViaPointer keeps the node's place, not its key. */
            if (raw && child->string && !(raw->string = strdup(child->string)))
                raw = (cJSON_Delete(raw), NULL);
            if (raw)
                cJSON_ReplaceItemViaPointer(node, child, raw);
        } else {
            exact_numbers(child);
        }
        child = next;
    }
}

static void
print_json_text(const char *text)
{
    cJSON *obj = cJSON_Parse(text);
    if (obj)
        exact_numbers(obj);
    char *pretty = obj ? cJSON_Print(obj) : NULL;
    puts(pretty ? pretty : text);
    free(pretty);
    cJSON_Delete(obj);
}

static int
print_exec_result(const struct pyfence_result *res, struct output_state *st, bool json)
{
    if (json) {
        print_json_text(res->reply_json);
        return exit_status_of(res->outcome_code);
    }
    /* A daemon that did not stream still returns the captured output in logs. */
    if (!st->any && res->logs && *res->logs)
        on_output(st, res->logs, strlen(res->logs));
    if (res->output_repr) {
        /* Keep the result on its own line, as a REPL would. */
        if (st->any && !st->ends_nl)
            putchar('\n');
        puts(res->output_repr);
    }
    fflush(stdout);
    if (!res->ok) {
        const char *msg = res->error.message ? res->error.message : "(no message)";
        if (res->outcome_code == PYFENCE_E_ERROR)
            fprintf(stderr, "%s\n", msg);
        else
            fprintf(stderr, "pyfence: %s: %s\n", res->outcome, msg);
    }
    return exit_status_of(res->outcome_code);
}

static int
parse_timeout(const char *arg, uint32_t *ret_ms)
{
    char *end = NULL;
    errno = 0;
    double sec = strtod(arg, &end);
    if (errno || end == arg || *end || !isfinite(sec) || sec <= 0 || sec > 86400)
        return -1;
    double ms = ceil(sec * 1000.0);
    *ret_ms = (uint32_t) ms;
    return 0;
}

static void
on_sigint(int sig)
{
    (void) sig; /* only there to interrupt the wait (installed without SA_RESTART) */
}

/* SIGINT taken over for one request: blocked but while libpyfence's wait blocks, so a Ctrl-C
 * that comes while output is being printed is not lost (it ends the next wait). A SIGINT the
 * caller ignores stays ignored (catching false). */
struct sigint_catch {
    bool catching;
    struct sigaction old;
    sigset_t old_mask;
};

static void
sigint_catch_begin(struct sigint_catch *sc)
{
    struct sigaction sa = {.sa_handler = on_sigint};
    sigemptyset(&sa.sa_mask);
    sigset_t sigint;
    sigemptyset(&sigint);
    sigaddset(&sigint, SIGINT);
    sigemptyset(&sc->old_mask);
    sc->catching = sigaction(SIGINT, NULL, &sc->old) == 0 && sc->old.sa_handler != SIG_IGN &&
                   sigprocmask(SIG_BLOCK, &sigint, &sc->old_mask) == 0;
    if (sc->catching && sigaction(SIGINT, &sa, NULL) < 0) {
        sigprocmask(SIG_SETMASK, &sc->old_mask, NULL);
        sc->catching = false;
    }
}

/* Gives SIGINT its previous disposition back: a second Ctrl-C normally ends the command. */
static void
sigint_catch_end(struct sigint_catch *sc)
{
    if (!sc->catching)
        return;
    sigaction(SIGINT, &sc->old, NULL);
    sigprocmask(SIG_SETMASK, &sc->old_mask, NULL);
}

/* pyfence_exec, but Ctrl-C cancels the snippet and the reply still comes: the user sees its
 * output so far and "cancelled", instead of a command that vanished while the daemon noticed
 * the closed connection (which cancels too, so a second Ctrl-C is safe). */
static int
exec_cancelling_on_sigint(struct pyfence_conn *conn, const char *code,
                          const struct pyfence_exec_options *opts, pyfence_output_cb cb,
                          void *userdata, struct pyfence_result *res, struct pyfence_error *err)
{
    struct sigint_catch sc;
    sigint_catch_begin(&sc);
    uint64_t id;
    int r = pyfence_submit(conn, code, opts, &id, err);
    if (r == 0)
        r = pyfence_wait_signal(conn, id, sc.catching ? SIGINT : 0, cb, userdata, res, err);
    sigint_catch_end(&sc);
    if (r != -PYFENCE_E_INTERRUPTED)
        return r;
    /* Not cancelled (false) means its reply is on its way already: wait for it all the same. */
    r = pyfence_cancel(conn, id, NULL, err);
    return r < 0 ? r : pyfence_wait(conn, id, cb, userdata, res, err);
}

static int
cmd_exec(const char *socket_path, int argc, char **argv)
{
    static const struct option longopts[] = {
            {"code", required_argument, NULL, 'c'},
            {"profile", required_argument, NULL, 'p'},
            {"timeout", required_argument, NULL, 't'},
            {"import", required_argument, NULL, 'i'},
            {"json", no_argument, NULL, 'j'},
            {"session", required_argument, NULL, 'S'}, /* not with -p, -t or -i */
            {"help", no_argument, NULL, 'h'},
            {0},
    };
    const char *code_arg = NULL, *imports[MAX_IMPORTS];
    struct pyfence_exec_options opts;
    pyfence_exec_options_init(&opts);
    opts.imports = imports;
    bool json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+c:p:t:i:jS:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            code_arg = optarg;
            break;
        case 'S':
            opts.session = optarg;
            break;
        case 'p':
            opts.profile = optarg;
            break;
        case 't':
            if (parse_timeout(optarg, &opts.timeout_ms) < 0)
                return usage_error(exec_usage,
                                   "--timeout '%s' is not a number of seconds "
                                   "in (0, 86400]",
                                   optarg);
            break;
        case 'i':
            if (opts.n_imports == MAX_IMPORTS)
                return usage_error(exec_usage, "at most %d --import options", MAX_IMPORTS);
            imports[opts.n_imports++] = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            fputs(exec_usage, stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "\n%s", exec_usage);
            return EXIT_USAGE;
        }
    }
    if (opts.session && (opts.profile || opts.n_imports || opts.timeout_ms))
        return usage_error(exec_usage, "--profile, --import and --timeout are fixed when a "
                                       "session opens (pyfence session open); not with "
                                       "--session");
    if (argc - optind > 1 || (code_arg && argc - optind > 0))
        return usage_error(exec_usage, "exec takes one of -c CODE, FILE or -, not '%s'",
                           argv[argc - 1]);
    char *code = code_arg ? strdup(code_arg) : read_code(optind < argc ? argv[optind] : NULL);
    if (!code)
        return EXIT_USAGE;

    /* Output events are only useful when printing as we go. */
    opts.stream = !json;
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    struct pyfence_result res;
    struct output_state st = {0};
    pyfence_result_init(&res);
    int status;
    if (pyfence_connect(socket_path, &conn, &err) < 0 ||
        exec_cancelling_on_sigint(conn, code, &opts, json ? NULL : on_output, &st, &res, &err) < 0)
        status = report(&err);
    else
        status = print_exec_result(&res, &st, json);
    pyfence_result_finish(&res);
    pyfence_close(conn);
    free(code);
    return status;
}

static int
only_help(int argc, char **argv, const char *usage, bool *json)
{
    static const struct option longopts[] = {
            {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, json ? "+jh" : "+h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return EXIT_OK;
        }
        if (c == 'j' && json) {
            *json = true;
            continue;
        }
        fprintf(stderr, "\n%s", usage);
        return EXIT_USAGE;
    }
    if (optind < argc)
        return usage_error(usage, "unexpected argument '%s'", argv[optind]);
    return -1;
}

static int
cmd_ping(const char *socket_path, int argc, char **argv)
{
    int r = only_help(argc, argv, ping_usage, NULL);
    if (r >= 0)
        return r;
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (pyfence_connect(socket_path, &conn, &err) < 0 || pyfence_ping(conn, &err) < 0) {
        pyfence_close(conn);
        return report(&err);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("pong from pyfenced at %s in %.3f ms\n", pyfence_path(conn), ms);
    pyfence_close(conn);
    return EXIT_OK;
}

static double
num(const cJSON *obj, const char *name)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsNumber(n) ? n->valuedouble : 0;
}

static void
print_status_table(const cJSON *st, const char *path)
{
    const char *version = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(st, "version"));
    long long up = (long long) (num(st, "uptime_ms") / 1000);
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(st, "jobs");
    const cJSON *zyg = cJSON_GetObjectItemCaseSensitive(st, "zygote");
    printf("pyfenced %s at %s\n", version ? version : "(unknown version)", path);
    printf("  %-14s %lldd %02lldh %02lldm %02llds\n", "uptime", up / 86400, up / 3600 % 24,
           up / 60 % 60, up % 60);
    printf("  %-14s %.0f\n", "connections", num(st, "connections"));
    printf("  %-14s %.0f\n", "jobs running", num(jobs, "running"));
    printf("  %-14s %.0f\n", "jobs total", num(jobs, "total"));
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(jobs, "by_outcome");
    const cJSON *o;
    cJSON_ArrayForEach(o, by) {
        if (cJSON_IsNumber(o))
            printf("    %-12s %.0f\n", o->string, o->valuedouble);
    }
    cli_status_scheduling(stdout, st);
    if (cJSON_IsObject(zyg))
        printf("  %-14s %.0f (restarts %.0f)\n", "zygote pid", num(zyg, "pid"),
               num(zyg, "restarts"));
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(zyg, "preload_pid")))
        printf("  %-14s %.0f (restarts %.0f; the profiles with preload)\n", "preload zygote",
               num(zyg, "preload_pid"), num(zyg, "preload_restarts"));
}

static int
cmd_status(const char *socket_path, int argc, char **argv)
{
    bool json = false;
    int r = only_help(argc, argv, status_usage, &json);
    if (r >= 0)
        return r;
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    char *text = NULL;
    if (pyfence_connect(socket_path, &conn, &err) < 0 || pyfence_stats(conn, &text, &err) < 0) {
        pyfence_close(conn);
        return report(&err);
    }
    int status = EXIT_OK;
    if (json) {
        print_json_text(text);
    } else {
        cJSON *st = cJSON_Parse(text);
        if (st) {
            print_status_table(st, pyfence_path(conn));
        } else {
            fprintf(stderr, "pyfence: out of memory\n");
            status = EXIT_USAGE;
        }
        cJSON_Delete(st);
    }
    free(text);
    pyfence_close(conn);
    return status;
}

/* ---- sessions ------------------------------------------------------------------------- */

/* Prints a new session's id; closes the session when the id cannot be written (a closed
 * pipe, a full disk), since nobody could use or close it. */
static int
print_session_id(struct pyfence_conn *conn, const char *id, struct pyfence_error *err)
{
    /* A closed pipe must fail the write (EPIPE), not end the command before the close. */
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ignore.sa_mask);
    bool ignoring = sigaction(SIGPIPE, &ignore, &old) == 0;
    bool written = printf("%s\n", id) >= 0 && fflush(stdout) == 0;
    int errnum = errno;
    if (ignoring)
        sigaction(SIGPIPE, &old, NULL);
    if (written)
        return 0;
    if (pyfence_session_close(conn, id, err) < 0) {
        char why[sizeof(err->message)];
        snprintf(why, sizeof(why), "%s", err->message);
        snprintf(err->message, sizeof(err->message),
                 "could not write the session id (%.64s), nor close the session %s: %.800s",
                 strerror(errnum), id, why);
    } else
        snprintf(err->message, sizeof(err->message),
                 "could not write the session id (%s): the session was closed", strerror(errnum));
    return -PYFENCE_E_INTERNAL;
}

static int
session_open(const char *socket_path, int argc, char **argv)
{
    static const struct option longopts[] = {
            {"profile", required_argument, NULL, 'p'},
            {"import", required_argument, NULL, 'i'},
            {"timeout", required_argument, NULL, 't'},
            {"help", no_argument, NULL, 'h'},
            {0},
    };
    const char *imports[MAX_IMPORTS];
    struct pyfence_session_options opts;
    pyfence_session_options_init(&opts);
    opts.imports = imports;
    /* The CLI's connection ends when it exits: an attached session would end with it. */
    opts.detach = true;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+p:i:t:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'p':
            opts.profile = optarg;
            break;
        case 'i':
            if (opts.n_imports == MAX_IMPORTS)
                return usage_error(session_usage, "at most %d --import options", MAX_IMPORTS);
            imports[opts.n_imports++] = optarg;
            break;
        case 't':
            if (parse_timeout(optarg, &opts.timeout_ms) < 0)
                return usage_error(session_usage,
                                   "--timeout '%s' is not a number of seconds in (0, 86400]",
                                   optarg);
            break;
        case 'h':
            fputs(session_usage, stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "\n%s", session_usage);
            return EXIT_USAGE;
        }
    }
    if (optind < argc)
        return usage_error(session_usage, "unexpected argument '%s'", argv[optind]);
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    char id[PYFENCE_SESSION_ID_LEN + 1];
    int status = EXIT_OK;
    int r = pyfence_connect(socket_path, &conn, &err);
    if (r == 0) {
        /* Ctrl-C takes the open back, and one that comes later waits until the id is out: no
         * detached session is left that nobody knows of. */
        struct sigint_catch sc;
        sigint_catch_begin(&sc);
        r = pyfence_session_open_signal(conn, &opts, sc.catching ? SIGINT : 0, id, &err);
        if (r == 0)
            r = print_session_id(conn, id, &err);
        sigint_catch_end(&sc);
    }
    if (r == -PYFENCE_E_INTERRUPTED) {
        fputs("pyfence: cancelled: no session was opened\n", stderr);
        status = EXIT_INTERRUPTED;
    } else if (r < 0)
        status = report(&err);
    pyfence_close(conn);
    return status;
}

/* Options (--json, --help) anywhere; the other arguments are collected in order. */
static int
session_args(int argc, char **argv, bool *json, const char **ret_args, int *ret_n)
{
    static const struct option longopts[] = {
            {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    int c;
    /* 0, not 1: glibc then re-reads the ordering mode ("-" here, "+" elsewhere). */
    optind = 0;
    /* "-" first: non-options come back as argument 1, in order. */
    while ((c = getopt_long(argc, argv, json ? "-jh" : "-h", longopts, NULL)) != -1) {
        if (c == 1) {
            ret_args[(*ret_n)++] = optarg;
            continue;
        }
        if (c == 'h') {
            fputs(session_usage, stdout);
            return EXIT_OK;
        }
        if (c == 'j' && json) {
            *json = true;
            continue;
        }
        fprintf(stderr, "\n%s", session_usage);
        return EXIT_USAGE;
    }
    return -1;
}

static int
print_variables(const char *text, const char *const *names, int n)
{
    cJSON *reply = cJSON_Parse(text);
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(reply, "variables");
    if (!reply) {
        fprintf(stderr, "pyfence: out of memory\n");
        return EXIT_USAGE;
    }
    int status = EXIT_OK;
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(vars, names[i]);
        if (!v) {
            fprintf(stderr, "pyfence: '%s' is not defined in the session\n", names[i]);
            status = EXIT_SNIPPET;
            continue;
        }
        char *repr = cli_repr(v);
        printf("%s = %s\n", names[i], repr ? repr : "(out of memory)");
        free(repr);
    }
    cJSON_Delete(reply);
    return status;
}

static int
session_get(const char *socket_path, int argc, char **argv)
{
    const char **args = calloc((size_t) argc + 1, sizeof(*args));
    if (!args)
        return EXIT_USAGE;
    bool json = false;
    int n = 0;
    int r = session_args(argc, argv, &json, args, &n);
    if (r < 0 && n < 2)
        r = usage_error(session_usage, "session get needs an id and at least one name");
    if (r >= 0) {
        free(args);
        return r;
    }
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    char *text = NULL;
    int status = EXIT_OK;
    if (pyfence_connect(socket_path, &conn, &err) < 0 ||
        pyfence_session_get(conn, args[0], args + 1, (size_t) n - 1, &text, &err) < 0) {
        report(&err);
        /* variables over max_result_bytes: a limit, as for exec */
        status = err.code == PYFENCE_E_OUTPUT_LIMIT ? EXIT_LIMIT : EXIT_USAGE;
    } else if (json)
        print_json_text(text);
    else
        status = print_variables(text, args + 1, n - 1);
    free(text);
    free(args);
    pyfence_close(conn);
    return status;
}

static void
print_session_table(const cJSON *sessions)
{
    printf("%-32s  %-12s  %-8s  %7s  %9s  %s\n", "ID", "PROFILE", "STATE", "EXECS", "IDLE (s)",
           "DETACHED");
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    double now_ms = (double) now.tv_sec * 1e3 + (double) now.tv_nsec / 1e6;
    const cJSON *s;
    cJSON_ArrayForEach(s, sessions) {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "id"));
        const char *profile = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "profile"));
        const char *state = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "state"));
        double idle = (now_ms - num(s, "last_used")) / 1e3;
        printf("%-32s  %-12s  %-8s  %7.0f  %9.1f  %s\n", id ? id : "?", profile ? profile : "?",
               state ? state : "?", num(s, "execs"), idle > 0 ? idle : 0,
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "detached")) ? "yes" : "no");
    }
}

static int
session_list(const char *socket_path, int argc, char **argv)
{
    bool json = false;
    const char *args[1];
    int n = 0;
    int r = argc > 2 ? usage_error(session_usage, "unexpected argument '%s'", argv[argc - 1])
                     : session_args(argc, argv, &json, args, &n);
    if (r < 0 && n > 0)
        r = usage_error(session_usage, "unexpected argument '%s'", args[0]);
    if (r >= 0)
        return r;
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    char *text = NULL;
    if (pyfence_connect(socket_path, &conn, &err) < 0 ||
        pyfence_session_list(conn, &text, &err) < 0) {
        pyfence_close(conn);
        return report(&err);
    }
    cJSON *reply = cJSON_Parse(text);
    const cJSON *sessions = cJSON_GetObjectItemCaseSensitive(reply, "sessions");
    int status = EXIT_OK;
    if (!reply) {
        fprintf(stderr, "pyfence: out of memory\n");
        status = EXIT_USAGE;
    } else if (json) {
        char *list = cJSON_PrintUnformatted(sessions);
        print_json_text(list ? list : "[]");
        free(list);
    } else {
        print_session_table(sessions);
    }
    cJSON_Delete(reply);
    free(text);
    pyfence_close(conn);
    return status;
}

static int
session_close(const char *socket_path, int argc, char **argv)
{
    const char *args[2];
    int n = 0;
    int r = argc > 3 ? usage_error(session_usage, "session close takes one id")
                     : session_args(argc, argv, NULL, args, &n);
    if (r < 0 && n != 1)
        r = usage_error(session_usage, "session close takes one id");
    if (r >= 0)
        return r;
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    int status = EXIT_OK;
    if (pyfence_connect(socket_path, &conn, &err) < 0 ||
        pyfence_session_close(conn, args[0], &err) < 0)
        status = report(&err);
    pyfence_close(conn);
    return status;
}

static int
cmd_session(const char *socket_path, int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(const char *socket_path, int argc, char **argv);
    } subs[] = {
            {"open", session_open},
            {"get", session_get},
            {"list", session_list},
            {"close", session_close},
    };
    if (argc < 2)
        return usage_error(session_usage, "session needs open, get, list or close");
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(session_usage, stdout);
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
        if (strcmp(subs[i].name, argv[1]) == 0)
            return subs[i].run(socket_path, argc - 1, argv + 1);
    return usage_error(session_usage, "unknown session command '%s'", argv[1]);
}

static const struct command {
    const char *name;
    int (*run)(const char *socket_path, int argc, char **argv);
    const char *usage;
} commands[] = {
        {"exec", cmd_exec, exec_usage},
        {"ping", cmd_ping, ping_usage},
        {"session", cmd_session, session_usage},
        {"status", cmd_status, status_usage},
};

static const struct command *
find_command(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {
            {"socket", required_argument, NULL, 's'},
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, 'V'},
            {0},
    };
    const char *socket_path = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "+s:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 's':
            socket_path = optarg;
            break;
        case 'h':
            fputs(main_usage, stdout);
            return EXIT_OK;
        case 'V':
            printf("pyfence %s (libpyfence %s)\n", PYFENCE_VERSION, PYFENCE_VERSION_STRING);
            return EXIT_OK;
        default:
            fprintf(stderr, "\n%s", main_usage);
            return EXIT_USAGE;
        }
    }
    if (optind >= argc)
        return usage_error(main_usage, "no command given");
    const char *name = argv[optind];
    if (strcmp(name, "help") == 0) {
        const struct command *cmd = optind + 1 < argc ? find_command(argv[optind + 1]) : NULL;
        if (optind + 1 < argc && !cmd)
            return usage_error(main_usage, "unknown command '%s'", argv[optind + 1]);
        fputs(cmd ? cmd->usage : main_usage, stdout);
        return EXIT_OK;
    }
    const struct command *cmd = find_command(name);
    if (!cmd)
        return usage_error(main_usage, "unknown command '%s'", name);
    return cmd->run(socket_path, argc - optind, argv + optind);
}
