/* A minimal libpyfence program: runs a snippet given on the command line and prints what it
 * printed, then its result.
 *
 *   cc client.c $(pkg-config --cflags --libs pyfence) -o client
 *   ./client 'print("hi")
 *   sum(range(10))'
 *
 * The socket is $PYFENCE_SOCKET, else the default path (see pyfence(1)). */
#include <pyfence.h>
#include <stdio.h>

static void
print_output(void *userdata, const char *data, size_t len)
{
    (void) userdata;
    fwrite(data, 1, len, stdout);
}

int
main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CODE\n", argv[0]);
        return 2;
    }
    struct pyfence_error err;
    struct pyfence_conn *conn;
    if (pyfence_connect(NULL, &conn, &err) < 0) {
        fprintf(stderr, "%s\n", err.message);
        return 2;
    }
    struct pyfence_exec_options opts;
    pyfence_exec_options_init(&opts);
    opts.timeout_ms = 5000;

    struct pyfence_result res;
    pyfence_result_init(&res);
    int status = 0;
    if (pyfence_exec(conn, argv[1], &opts, print_output, NULL, &res, &err) < 0) {
        fprintf(stderr, "%s\n", err.message); /* no reply: connection or protocol trouble */
        status = 2;
    } else if (!res.ok) {
        fprintf(stderr, "%s: %s\n", res.outcome, res.error.message); /* the snippet failed */
        status = 1;
    } else if (res.output_repr) {
        printf("%s\n", res.output_repr);
    }
    pyfence_result_finish(&res);
    pyfence_close(conn);
    return status;
}
