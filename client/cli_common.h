/* What the pyfence CLI's command files (pyfence.c, cli_session.c) share: exit statuses, usage
 * errors and error reports, --timeout, JSON output with exact numbers, and Ctrl-C caught for one
 * request. */
#ifndef CLIENT_CLI_COMMON_H
#define CLIENT_CLI_COMMON_H

#include <cjson/cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "pyfence.h"

/* pyfence's exit statuses (pyfence.c says what each means). */
enum exit_status {
    EXIT_OK = 0,
    EXIT_SNIPPET = 1,
    EXIT_USAGE = 2,
    EXIT_LIMIT = 3,
    /* hardening_unavailable: the profile requires isolation the daemon's host cannot give; an
     * operator's matter, not the snippet's nor the command line's */
    EXIT_HARDENING = 4,
    EXIT_INTERRUPTED = 130, /* as a shell reports a command that SIGINT ended */
};

#define MAX_IMPORTS 64 /* --import options in one command */

/* A command's arguments that are not options, in order. Options may come before, between or
 * after them (`pyfence exec snippet.py --timeout 5`), as with most commands; `--` ends the
 * options. */
struct cli_args {
    const char **v; /* Not owned: room for cap arguments. */
    int cap;
    int n; /* arguments seen; those past cap are counted, not kept */
    bool started;
};

/* getopt_long over a command's own argv (argv[0] is the command's name), options anywhere:
 * returns each option as getopt_long does, and -1 at the end, having put every other argument
 * in args. optstring must begin with "-" (arguments in order, whatever POSIXLY_CORRECT says). */
int cli_getopt(int argc, char **argv, const char *optstring, const struct option *longopts,
               struct cli_args *args);

/* Prints "pyfence: " and the message, then usage, to stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The socket of the system's pyfenced (systemd/pyfenced.socket; the default as root, see
 * common/pf_socket_path.c). */
#define CLI_SYSTEM_SOCKET "/run/pyfence/pyfence.sock"

/* pyfence_connect, and when it fails, a hint in err's message at what the user can do: name
 * the socket (PYFENCE_SOCKET, --socket), the system socket when there is one, or the group
 * that may use it. */
int cli_connect(const char *socket_path, struct pyfence_conn **ret_conn, struct pyfence_error *err);

/* Prints err's message to stderr; returns EXIT_HARDENING for hardening_unavailable (a session
 * open refused so), else EXIT_USAGE. */
int cli_report(const struct pyfence_error *err);

/* --timeout SEC: seconds in (0, 86400], fractions allowed, into *ret_ms rounded up; -1 when arg
 * is not that. */
int cli_parse_timeout(const char *arg, uint32_t *ret_ms);

/* Prints a reply's JSON text indented, each number as exact as it came; text as it is when it
 * cannot be parsed. */
void cli_print_json_text(const char *text);

/* The number `name` of obj; 0 when it is absent or not a number. */
double cli_num(const cJSON *obj, const char *name);

/* SIGINT taken over for one request: blocked but while libpyfence's wait blocks, so a Ctrl-C
 * that comes while output is being printed is not lost (it ends the next wait). A SIGINT the
 * caller ignores stays ignored (catching false). */
struct cli_sigint_catch {
    bool catching;
    struct sigaction old;
    sigset_t old_mask;
};

/* Takes SIGINT over (sc->catching says whether it did). */
void cli_sigint_catch_begin(struct cli_sigint_catch *sc);

/* Gives SIGINT its previous disposition back: a second Ctrl-C normally ends the command. */
void cli_sigint_catch_end(struct cli_sigint_catch *sc);

#endif
