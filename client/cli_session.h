/* `pyfence session open|get|list|close`: sessions, sandboxed workers that keep what each
 * snippet defined for the next (PROTOCOL.md "Sessions"). */
#ifndef CLIENT_CLI_SESSION_H
#define CLIENT_CLI_SESSION_H

/* The help of `pyfence session`, as `pyfence help session` prints it. */
extern const char cli_session_usage[];

/* Runs `pyfence session ...` (argv[0] is "session") with the daemon at socket_path (NULL: the
 * default one); returns the command's exit status. */
int cli_session(const char *socket_path, int argc, char **argv);

#endif
