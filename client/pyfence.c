/* pyfence: the command-line client of pyfenced (contract in DESIGN.md "Names").
 * Exit status: 0 ok; 1 the snippet raised, was refused by policy, crashed its worker or made a
 * forbidden system call; 2 usage, connection, protocol or internal error; 3 a limit was hit;
 * 130 Ctrl-C cancelled the exec. */
#include "pyfence.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_session.h"
#include "cli_status.h"
#include "config.h"

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
        "(timeout, cpu_limit, memory_limit, pids_limit, output_limit); 4 the profile\n"
        "requires hardening the daemon's host cannot give (hardening_unavailable: the\n"
        "message says what an operator can do); 130 Ctrl-C cancelled an exec.\n";

static const char exec_usage[] =
        "Usage: pyfence exec [-c CODE | FILE | -] [--profile NAME] [--timeout SEC]\n"
        "                    [--import MOD]... [--json]\n"
        "       pyfence exec --session ID [-c CODE | FILE | -] [--json]\n"
        "\n"
        "Runs one snippet in a fresh sandboxed worker, or in a session's worker. Its\n"
        "printed output goes to stdout as it is produced, then the repr() of its result\n"
        "when that is not None. Errors go to stderr in smolagents' form. With no CODE or\n"
        "FILE, or with -, reads the snippet from stdin. Ctrl-C cancels the snippet (a\n"
        "session keeps its state) and reports how it ended, exit status 130; a second\n"
        "Ctrl-C ends the command at once.\n"
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
    case PYFENCE_E_HARDENING_UNAVAILABLE:
        return EXIT_HARDENING;
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
    /* The code goes on as a C string: a NUL would silently cut it there. */
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        fprintf(stderr, "pyfence: %s has a NUL byte at offset %zu; a snippet is text without NUL\n",
                name, (size_t) (nul - buf));
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

static int
print_exec_result(const struct pyfence_result *res, struct output_state *st, bool json)
{
    if (json) {
        cli_print_json_text(res->reply_json);
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
        /* On a terminal, the error starts its own line, not after output cut mid-line. */
        if (st->any && !st->ends_nl && !res->output_repr && isatty(STDOUT_FILENO) &&
            isatty(STDERR_FILENO)) {
            putchar('\n');
            fflush(stdout);
        }
        if (res->outcome_code == PYFENCE_E_ERROR)
            fprintf(stderr, "%s\n", msg);
        else
            fprintf(stderr, "pyfence: %s: %s\n", res->outcome, msg);
    }
    return exit_status_of(res->outcome_code);
}

/* pyfence_exec, but Ctrl-C cancels the snippet and the reply still comes: the user sees its
 * output so far and "cancelled", instead of a command that vanished while the daemon noticed
 * the closed connection (which cancels too, so a second Ctrl-C is safe). */
static int
exec_cancelling_on_sigint(struct pyfence_conn *conn, const char *code,
                          const struct pyfence_exec_options *opts, pyfence_output_cb cb,
                          void *userdata, struct pyfence_result *res, struct pyfence_error *err)
{
    struct cli_sigint_catch sc;
    cli_sigint_catch_begin(&sc);
    uint64_t id;
    int r = pyfence_submit(conn, code, opts, &id, err);
    if (r == 0)
        r = pyfence_wait_signal(conn, id, sc.catching ? SIGINT : 0, cb, userdata, res, err);
    cli_sigint_catch_end(&sc);
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
    /* The file (or -), and the first argument too many. */
    const char *files[2] = {NULL, NULL};
    struct cli_args args = {.v = files, .cap = 2};
    int c;
    while ((c = cli_getopt(argc, argv, "-c:p:t:i:jS:h", longopts, &args)) != -1) {
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
            if (cli_parse_timeout(optarg, &opts.timeout_ms) < 0)
                return cli_usage_error(exec_usage,
                                       "--timeout '%s' is not a number of seconds "
                                       "in (0, 86400]",
                                       optarg);
            break;
        case 'i':
            if (opts.n_imports == MAX_IMPORTS)
                return cli_usage_error(exec_usage, "at most %d --import options", MAX_IMPORTS);
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
        return cli_usage_error(exec_usage, "--profile, --import and --timeout are fixed when a "
                                           "session opens (pyfence session open); not with "
                                           "--session");
    /* The first argument that has no place: a FILE after -c CODE, or a second FILE. */
    const char *unexpected = code_arg ? files[0] : files[1];
    if (unexpected)
        return cli_usage_error(exec_usage, "exec takes one of -c CODE, FILE or -, not '%s'",
                               unexpected);
    char *code = code_arg ? strdup(code_arg) : read_code(files[0]);
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
    if (cli_connect(socket_path, &conn, &err) < 0 ||
        exec_cancelling_on_sigint(conn, code, &opts, json ? NULL : on_output, &st, &res, &err) < 0)
        status = cli_report(&err);
    else
        status = print_exec_result(&res, &st, json);
    pyfence_result_finish(&res);
    pyfence_close(conn);
    free(code);
    return status;
}

/* The arguments of a command that takes no argument, only --help (and --json when json is not
 * NULL), anywhere: an exit status, or -1 to go on. */
static int
only_help(int argc, char **argv, const char *usage, bool *json)
{
    static const struct option with_json[] = {
            {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    const struct option *longopts = json ? with_json : with_json + 1;
    const char *first[1] = {NULL};
    struct cli_args args = {.v = first, .cap = 1};
    int c;
    while ((c = cli_getopt(argc, argv, json ? "-jh" : "-h", longopts, &args)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return EXIT_OK;
        }
        if (c == 'j') {
            *json = true;
            continue;
        }
        fprintf(stderr, "\n%s", usage);
        return EXIT_USAGE;
    }
    if (args.n > 0)
        return cli_usage_error(usage, "unexpected argument '%s'", first[0]);
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
    if (cli_connect(socket_path, &conn, &err) < 0 || pyfence_ping(conn, &err) < 0) {
        pyfence_close(conn);
        return cli_report(&err);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("pong from pyfenced at %s in %.3f ms\n", pyfence_path(conn), ms);
    pyfence_close(conn);
    return EXIT_OK;
}

/* One line per outcome, the counts in one column whatever the longest name
 * (hardening_unavailable is 21 characters); at least 12 wide, as the table's other rows. */
static void
print_outcome_counts(const cJSON *by)
{
    const cJSON *o;
    int width = 12;
    cJSON_ArrayForEach(o, by) {
        if (cJSON_IsNumber(o) && o->string && (int) strlen(o->string) > width)
            width = (int) strlen(o->string);
    }
    cJSON_ArrayForEach(o, by) {
        if (cJSON_IsNumber(o) && o->string)
            printf("    %-*s %.0f\n", width, o->string, o->valuedouble);
    }
}

static void
print_status_table(const cJSON *st, const char *path)
{
    const char *version = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(st, "version"));
    long long up = (long long) (cli_num(st, "uptime_ms") / 1000);
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(st, "jobs");
    const cJSON *zyg = cJSON_GetObjectItemCaseSensitive(st, "zygote");
    printf("pyfenced %s at %s\n", version ? version : "(unknown version)", path);
    printf("  %-14s %lldd %02lldh %02lldm %02llds\n", "uptime", up / 86400, up / 3600 % 24,
           up / 60 % 60, up % 60);
    printf("  %-14s %.0f\n", "connections", cli_num(st, "connections"));
    /* jobs.running counts live worker processes, idle pool workers included (PROTOCOL.md). */
    printf("  %-14s %.0f\n", "live workers", cli_num(jobs, "running"));
    printf("  %-14s %.0f\n", "jobs total", cli_num(jobs, "total"));
    print_outcome_counts(cJSON_GetObjectItemCaseSensitive(jobs, "by_outcome"));
    cli_status_scheduling(stdout, st);
    if (cJSON_IsObject(zyg))
        printf("  %-14s %.0f (restarts %.0f)\n", "zygote pid", cli_num(zyg, "pid"),
               cli_num(zyg, "restarts"));
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(zyg, "preload_pid")))
        printf("  %-14s %.0f (restarts %.0f; the profiles with preload)\n", "preload zygote",
               cli_num(zyg, "preload_pid"), cli_num(zyg, "preload_restarts"));
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
    if (cli_connect(socket_path, &conn, &err) < 0 || pyfence_stats(conn, &text, &err) < 0) {
        pyfence_close(conn);
        return cli_report(&err);
    }
    int status = EXIT_OK;
    if (json) {
        cli_print_json_text(text);
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

static const struct command {
    const char *name;
    int (*run)(const char *socket_path, int argc, char **argv);
    const char *usage;
} commands[] = {
        {"exec", cmd_exec, exec_usage},
        {"ping", cmd_ping, ping_usage},
        {"session", cli_session, cli_session_usage},
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
        return cli_usage_error(main_usage, "no command given");
    const char *name = argv[optind];
    if (strcmp(name, "help") == 0) {
        const struct command *cmd = optind + 1 < argc ? find_command(argv[optind + 1]) : NULL;
        if (optind + 1 < argc && !cmd)
            return cli_usage_error(main_usage, "unknown command '%s'", argv[optind + 1]);
        if (optind + 2 < argc)
            return cli_usage_error(main_usage, "unexpected argument '%s'", argv[optind + 2]);
        fputs(cmd ? cmd->usage : main_usage, stdout);
        return EXIT_OK;
    }
    const struct command *cmd = find_command(name);
    if (!cmd)
        return cli_usage_error(main_usage, "unknown command '%s'", name);
    return cmd->run(socket_path, argc - optind, argv + optind);
}
