/* `pyfence session open|get|list|close` (cli_session.h). */
#include "cli_session.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_common.h"
#include "cli_repr.h"
#include "pyfence.h"

const char cli_session_usage[] =
        "Usage: pyfence session open [--profile NAME] [--import MOD]... [--timeout SEC]\n"
        "       pyfence session get ID NAME... [--json]\n"
        "       pyfence session list [--json]\n"
        "       pyfence session close ID\n"
        "\n"
        "A session is one sandboxed worker that keeps the variables, functions, classes\n"
        "and imports of each snippet for the next: run snippets in it with\n"
        "pyfence exec --session ID. It belongs to your user.\n"
        "\n"
        "  open    start a session and print its id alone on a line. It is opened\n"
        "          detached (this command's connection ends when it exits): it lasts\n"
        "          until closed or idle for the profile's session_idle_timeout_ms\n"
        "          (10 minutes by default). Ctrl-C while it waits for a worker takes the\n"
        "          open back: no session is left, and it exits with status 130. When\n"
        "          sessions (of every user) hold their share of the workers (pyfence\n"
        "          status), it fails at once (busy).\n"
        "            -p, --profile NAME   a profile you may use (default: yours)\n"
        "            -i, --import MOD     also allow importing MOD, within the profile\n"
        "            -t, --timeout SEC    wall-clock limit of each snippet (tightens)\n"
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
    const char *first[1] = {NULL};
    struct cli_args args = {.v = first, .cap = 1};
    int c;
    while ((c = cli_getopt(argc, argv, "-p:i:t:h", longopts, &args)) != -1) {
        switch (c) {
        case 'p':
            opts.profile = optarg;
            break;
        case 'i':
            if (opts.n_imports == MAX_IMPORTS)
                return cli_usage_error(cli_session_usage, "at most %d --import options",
                                       MAX_IMPORTS);
            imports[opts.n_imports++] = optarg;
            break;
        case 't':
            if (cli_parse_timeout(optarg, &opts.timeout_ms) < 0)
                return cli_usage_error(cli_session_usage,
                                       "--timeout '%s' is not a number of seconds in (0, 86400]",
                                       optarg);
            break;
        case 'h':
            fputs(cli_session_usage, stdout);
            return EXIT_OK;
        default:
            fprintf(stderr, "\n%s", cli_session_usage);
            return EXIT_USAGE;
        }
    }
    if (args.n > 0)
        return cli_usage_error(cli_session_usage, "unexpected argument '%s'", first[0]);
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    char id[PYFENCE_SESSION_ID_LEN + 1];
    int status = EXIT_OK;
    int r = cli_connect(socket_path, &conn, &err);
    if (r == 0) {
        /* Ctrl-C takes the open back, and one that comes later waits until the id is out: no
         * detached session is left that nobody knows of. */
        struct cli_sigint_catch sc;
        cli_sigint_catch_begin(&sc);
        r = pyfence_session_open_signal(conn, &opts, sc.catching ? SIGINT : 0, id, &err);
        if (r == 0)
            r = print_session_id(conn, id, &err);
        cli_sigint_catch_end(&sc);
    }
    if (r == -PYFENCE_E_INTERRUPTED) {
        fputs("pyfence: cancelled: no session was opened\n", stderr);
        status = EXIT_INTERRUPTED;
    } else if (r < 0)
        status = cli_report(&err);
    pyfence_close(conn);
    return status;
}

/* Options (--json when json is not NULL, --help) anywhere; the other arguments are collected in
 * order into ret_args, which has room for cap of them (*ret_n counts them all). */
static int
session_args(int argc, char **argv, bool *json, const char **ret_args, int cap, int *ret_n)
{
    static const struct option with_json[] = {
            {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
    const struct option *longopts = json ? with_json : with_json + 1;
    struct cli_args args = {.v = ret_args, .cap = cap};
    int c;
    while ((c = cli_getopt(argc, argv, json ? "-jh" : "-h", longopts, &args)) != -1) {
        if (c == 'h') {
            fputs(cli_session_usage, stdout);
            return EXIT_OK;
        }
        if (c == 'j') {
            *json = true;
            continue;
        }
        fprintf(stderr, "\n%s", cli_session_usage);
        return EXIT_USAGE;
    }
    *ret_n = args.n;
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
    int r = session_args(argc, argv, &json, args, argc, &n);
    if (r < 0 && n < 2)
        r = cli_usage_error(cli_session_usage, "session get needs an id and at least one name");
    if (r >= 0) {
        free(args);
        return r;
    }
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    char *text = NULL;
    int status = EXIT_OK;
    if (cli_connect(socket_path, &conn, &err) < 0 ||
        pyfence_session_get(conn, args[0], args + 1, (size_t) n - 1, &text, &err) < 0) {
        cli_report(&err);
        /* variables over max_result_bytes: a limit, as for exec */
        status = err.code == PYFENCE_E_OUTPUT_LIMIT ? EXIT_LIMIT : EXIT_USAGE;
    } else if (json)
        cli_print_json_text(text);
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
        double idle = (now_ms - cli_num(s, "last_used")) / 1e3;
        printf("%-32s  %-12s  %-8s  %7.0f  %9.1f  %s\n", id ? id : "?", profile ? profile : "?",
               state ? state : "?", cli_num(s, "execs"), idle > 0 ? idle : 0,
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "detached")) ? "yes" : "no");
    }
}

static int
session_list(const char *socket_path, int argc, char **argv)
{
    bool json = false;
    const char *args[1];
    int n = 0;
    int r = session_args(argc, argv, &json, args, 1, &n);
    if (r < 0 && n > 0)
        r = cli_usage_error(cli_session_usage, "unexpected argument '%s'", args[0]);
    if (r >= 0)
        return r;
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    char *text = NULL;
    if (cli_connect(socket_path, &conn, &err) < 0 || pyfence_session_list(conn, &text, &err) < 0) {
        pyfence_close(conn);
        return cli_report(&err);
    }
    cJSON *reply = cJSON_Parse(text);
    const cJSON *sessions = cJSON_GetObjectItemCaseSensitive(reply, "sessions");
    int status = EXIT_OK;
    if (!reply) {
        fprintf(stderr, "pyfence: out of memory\n");
        status = EXIT_USAGE;
    } else if (json) {
        char *list = cJSON_PrintUnformatted(sessions);
        cli_print_json_text(list ? list : "[]");
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
    int r = session_args(argc, argv, NULL, args, 2, &n);
    if (r < 0 && n == 0)
        r = cli_usage_error(cli_session_usage, "session close takes one id");
    else if (r < 0 && n > 1)
        r = cli_usage_error(cli_session_usage, "session close takes one id, not also '%s'",
                            args[1]);
    if (r >= 0)
        return r;
    struct pyfence_error err = {0};
    struct pyfence_conn *conn = NULL;
    int status = EXIT_OK;
    if (cli_connect(socket_path, &conn, &err) < 0 || pyfence_session_close(conn, args[0], &err) < 0)
        status = cli_report(&err);
    pyfence_close(conn);
    return status;
}

int
cli_session(const char *socket_path, int argc, char **argv)
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
        return cli_usage_error(cli_session_usage, "session needs open, get, list or close");
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs(cli_session_usage, stdout);
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
        if (strcmp(subs[i].name, argv[1]) == 0)
            return subs[i].run(socket_path, argc - 1, argv + 1);
    return cli_usage_error(cli_session_usage, "unknown session command '%s'", argv[1]);
}
