/* For the hardening tests: run a function in a forked child that holds one end of a socketpair
 * at fd 3 (the worker's channel), and collect what it wrote there and how it ended. A layer is
 * applied in the child only, so the test process itself stays unhardened. */
#ifndef TESTS_UNIT_HARDEN_TEST_CHILD_H
#define TESTS_UNIT_HARDEN_TEST_CHILD_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

struct child_result {
    int status;     /* from waitpid */
    char out[4096]; /* what the child wrote to fd 3, NUL-terminated */
    size_t len;
};

/* The child's body: returns its exit code (the child calls _exit with it). */
typedef int (*child_fn)(void *arg);

static inline void
child_say(const char *s)
{
    ssize_t r = write(3, s, strlen(s));
    (void) r;
}

static inline int
run_child(child_fn fn, void *arg, struct child_result *ret)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(sv[0]);
        if (dup2(sv[1], 3) < 0)
            _exit(120);
        if (sv[1] != 3)
            close(sv[1]);
        _exit(fn(arg));
    }
    close(sv[1]);
    memset(ret, 0, sizeof(*ret));
    for (;;) {
        ssize_t n = read(sv[0], ret->out + ret->len, sizeof(ret->out) - 1 - ret->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        ret->len += (size_t) n;
    }
    ret->out[ret->len] = '\0';
    close(sv[0]);
    while (waitpid(pid, &ret->status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

/* The JSON of a frame the child wrote after `skip` bytes of plain text. */
static inline const char *
frame_json(const struct child_result *r, size_t skip, size_t *ret_len)
{
    if (r->len < skip + 4)
        return NULL;
    const unsigned char *p = (const unsigned char *) r->out + skip;
    size_t n = (size_t) p[0] << 24 | (size_t) p[1] << 16 | (size_t) p[2] << 8 | p[3];
    if (skip + 4 + n != r->len)
        return NULL;
    *ret_len = n;
    return r->out + skip + 4;
}

#endif
