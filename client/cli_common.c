/* What the pyfence CLI's command files share (cli_common.h). */
#include "cli_common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
cli_usage_error(const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pyfence: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n\n%s", usage);
    return EXIT_USAGE;
}

static void
args_add(struct cli_args *args, const char *arg)
{
    if (args->n < args->cap)
        args->v[args->n] = arg;
    args->n++;
}

int
cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts,
           struct cli_args *args)
{
    if (!args->started) {
        /* 0, not 1: glibc then re-reads the ordering mode ("+" for pyfence's own options). */
        optind = 0;
        args->started = true;
    }
    int c;
    while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) == 1)
        args_add(args, optarg);
    if (c == -1) /* what follows a `--` */
        for (; optind < argc; optind++)
            args_add(args, argv[optind]);
    return c;
}

static void
append(struct pyfence_error *err, const char *text)
{
    size_t len = strlen(err->message);
    snprintf(err->message + len, sizeof(err->message) - len, "%s", text);
}

/* Which hint fits: the system socket exists and was not the one tried (a user's default is
 * $XDG_RUNTIME_DIR/pyfence.sock), or it was tried and this user may not write to it. */
static void
add_connect_hint(const char *socket_path, struct pyfence_error *err)
{
    struct stat st;
    bool system_socket = stat(CLI_SYSTEM_SOCKET, &st) == 0 && S_ISSOCK(st.st_mode);
    bool tried_it = strstr(err->message, "'" CLI_SYSTEM_SOCKET "'") != NULL;
    const char *env = getenv("PYFENCE_SOCKET");
    bool named = socket_path || (env && *env);
    if (system_socket && tried_it && access(CLI_SYSTEM_SOCKET, W_OK) < 0)
        append(err, "\n  hint: only root and the members of group pyfence may use the system's "
                    "pyfenced (" CLI_SYSTEM_SOCKET "); ask an administrator to add you (usermod "
                    "-aG pyfence USER), then log in again");
    else if (system_socket && !tried_it)
        append(err, "\n  hint: the system's pyfenced listens on " CLI_SYSTEM_SOCKET
                    ": export PYFENCE_SOCKET=" CLI_SYSTEM_SOCKET " (or pass --socket); only "
                    "root and the members of group pyfence may use it");
    else if (!named)
        append(err, "\n  hint: name the daemon's socket with PYFENCE_SOCKET=PATH or "
                    "pyfence --socket PATH");
}

int
cli_connect(const char *socket_path, struct pyfence_conn **ret_conn, struct pyfence_error *err)
{
    int r = pyfence_connect(socket_path, ret_conn, err);
    if (r < 0 && (err->code == PYFENCE_E_CONNECT || err->code == PYFENCE_E_CONFIG))
        add_connect_hint(socket_path, err);
    return r;
}

int
cli_report(const struct pyfence_error *err)
{
    fprintf(stderr, "pyfence: %s\n", err->message);
    return err->code == PYFENCE_E_HARDENING_UNAVAILABLE ? EXIT_HARDENING : EXIT_USAGE;
}

int
cli_parse_timeout(const char *arg, uint32_t *ret_ms)
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

void
cli_print_json_text(const char *text)
{
    cJSON *obj = cJSON_Parse(text);
    if (obj)
        exact_numbers(obj);
    char *pretty = obj ? cJSON_Print(obj) : NULL;
    puts(pretty ? pretty : text);
    free(pretty);
    cJSON_Delete(obj);
}

double
cli_num(const cJSON *obj, const char *name)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsNumber(n) ? n->valuedouble : 0;
}

static void
on_sigint(int sig)
{
    (void) sig; /* only there to interrupt the wait (installed without SA_RESTART) */
}

void
cli_sigint_catch_begin(struct cli_sigint_catch *sc)
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

void
cli_sigint_catch_end(struct cli_sigint_catch *sc)
{
    if (!sc->catching)
        return;
    sigaction(SIGINT, &sc->old, NULL);
    sigprocmask(SIG_SETMASK, &sc->old_mask, NULL);
}
