/* The executor's differential harness: each case file under the directories given on the
 * command line is run natively by CPython (tests/executor/native.py) and through exec_env_run,
 * and the two must agree on the printed output, the result value and the exception (type, and
 * message containment). Policy cases (`# expect: refused TEXT`) must instead be refused.
 *
 *   exec_differential [-v] [-k SUBSTRING] DIR_OR_FILE...
 *
 * Each case runs in a forked child, so a crash or a hang fails that case only. The last line is
 * "N passed, N failed, N skipped"; the exit status is 1 when any case failed.
 *
 * Case headers, leading comment lines of the file:
 *   # expect: native            (default) agree with CPython in every respect
 *   # expect: error TYPE        both raise TYPE (in some snippet); its message is not compared
 *                               (smolagents' NameError wording differs)
 *   # expect: refused TEXT      the executor refuses (outcome error, message contains TEXT)
 *   # expect: logs TEXT         the executor's run ends ok and its printed output contains TEXT;
 *                               CPython is not run (for a hook CPython calls and the executor
 *                               keeps library code from calling)
 *   # imports: a,b              modules allowed on top of the defaults
 *   # skip: REASON              not run; reported as skipped
 *   # variables: {JSON}         tagged values (PROTOCOL.md "Values") defined before the run
 * A line "# ---" splits a case into snippets run one after another in one session. */
#include <Python.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"
#include "exec_case.h"
#include "pf_cleanup.h"
#include "pf_error.h"

#define CASE_TIMEOUT_MS 20000

static bool verbose;

/* ---- comparison, in the child ---- */

/* Reports a failure through the child's verdict pipe (stdout) and returns false. */
static bool failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static bool
failf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    return false;
}

static const char *
json_str(const cJSON *o, const char *name)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(f) ? f->valuestring : NULL;
}

static bool
check_refused(const struct exec_case *c, const cJSON *res)
{
    const char *outcome = json_str(res, "outcome");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(res, "error");
    const char *msg = json_str(error, "message");
    /* A budget refusal may end as "timeout" or "output_limit" rather than "error". */
    if (!outcome || strcmp(outcome, "ok") == 0 || !msg)
        return failf("expected a refusal containing \"%s\", got outcome %s, logs \"%s\"",
                     c->expect_arg, outcome ? outcome : "(none)", json_str(res, "logs"));
    if (!strstr(msg, c->expect_arg))
        return failf("refused, but the message \"%s\" lacks \"%s\"", msg, c->expect_arg);
    return true;
}

static bool
check_logs(const struct exec_case *c, const cJSON *res)
{
    const char *outcome = json_str(res, "outcome");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(res, "error");
    const char *logs = json_str(res, "logs");
    if (!outcome || strcmp(outcome, "ok") != 0)
        return failf("expected the run to end ok, got outcome %s (%s), logs \"%s\"",
                     outcome ? outcome : "(none)",
                     json_str(error, "message") ? json_str(error, "message") : "",
                     logs ? logs : "(none)");
    if (!logs || !strstr(logs, c->expect_arg))
        return failf("the output \"%s\" lacks \"%s\"", logs ? logs : "(none)", c->expect_arg);
    return true;
}

static bool
check_native(const struct exec_case *c, const struct native_result *n, const cJSON *res)
{
    const char *outcome = json_str(res, "outcome");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(res, "error");
    const char *etype = json_str(error, "type");
    const char *emsg = json_str(error, "message");
    const char *logs = json_str(res, "logs");
    if (!outcome)
        return failf("the executor's result has no outcome");

    if (n->exc_type && strcmp(outcome, "error") != 0)
        return failf("CPython raised %s: %s; the executor's outcome is %s (output %s)", n->exc_type,
                     n->exc_msg, outcome, n->value_text ? "set" : "none");
    if (!n->exc_type && strcmp(outcome, "ok") != 0)
        return failf("the executor's outcome is %s (%s: %s); CPython succeeded", outcome,
                     etype ? etype : "?", emsg ? emsg : "?");
    if (n->exc_type) {
        if (!etype || strcmp(etype, n->exc_type) != 0)
            return failf("CPython raised %s, the executor %s (%s)", n->exc_type,
                         etype ? etype : "(no type)", emsg ? emsg : "");
        bool expected = c->expect == EXPECT_ERROR && strcmp(n->exc_type, c->expect_arg) == 0;
        if (!expected && (!emsg || !strstr(emsg, n->exc_msg)))
            return failf("%s message: CPython \"%s\", executor \"%s\"", n->exc_type, n->exc_msg,
                         emsg ? emsg : "(none)");
    }
    if (!logs || strcmp(logs, n->logs) != 0)
        return failf("printed output differs:\n--- CPython\n%s\n--- executor\n%s\n---", n->logs,
                     logs ? logs : "(none)");
    if (n->exc_type)
        return true;

    const cJSON *fin = cJSON_GetObjectItemCaseSensitive(res, "is_final_answer");
    if (cJSON_IsTrue(fin) != n->is_final)
        return failf("is_final_answer: CPython %d, executor %d", n->is_final, cJSON_IsTrue(fin));
    _cleanup_free_ char *got =
            exec_case_value_text(cJSON_GetObjectItemCaseSensitive(res, "output"));
    if (!got || !n->value_text || strcmp(got, n->value_text) != 0)
        return failf("result differs: CPython %s, executor %s", n->value_text ? n->value_text : "?",
                     got ? got : "(none)");
    const char *shown = json_str(res, "output_repr");
    _cleanup_free_ char *repr = shown ? exec_case_blank_addresses(strdup(shown)) : NULL;
    if ((repr == NULL) != (n->value_repr == NULL) || (repr && strcmp(repr, n->value_repr) != 0))
        return failf("output_repr differs: CPython %s, executor %s",
                     n->value_repr ? n->value_repr : "null", repr ? repr : "null");
    return true;
}

/* Runs one case in this (forked) process; prints the reason of a failure on stdout. */
static int
child_run(const struct exec_case *c)
{
    struct pf_error *err = NULL;
    if (c->expect == EXPECT_REFUSED || c->expect == EXPECT_LOGS) {
        cJSON *res = exec_case_run(c, &err);
        if (!res)
            return failf("cannot run: %s", err ? err->msg : "?"), 1;
        bool ok = c->expect == EXPECT_REFUSED ? check_refused(c, res) : check_logs(c, res);
        cJSON_Delete(res);
        return ok ? 0 : 1;
    }
    /* Each snippet of a session runs in the same namespace on both sides. */
    void *session = exec_case_native_session(c);
    struct exec_env *env = session ? exec_case_env(c, &err) : NULL;
    if (!env)
        return failf("cannot set up the case: %s", err ? err->msg : "native session failed"), 1;
    bool ok = true, raised_expected = false;
    for (size_t i = 0; ok && i < c->n_chunks; i++) {
        struct native_result n = {0};
        if (exec_case_native(session, c->chunks[i], &n) < 0)
            return failf("the native run itself failed (harness bug)"), 1;
        if (c->expect == EXPECT_ERROR && n.exc_type && strcmp(n.exc_type, c->expect_arg) == 0)
            raised_expected = true;
        cJSON *res = exec_env_run(env, c->chunks[i], NULL, NULL);
        if (!res)
            return failf("exec_env_run returned NULL"), 1;
        if (c->n_chunks > 1)
            printf("snippet %zu of %zu: ", i + 1, c->n_chunks);
        ok = check_native(c, &n, res);
        cJSON_Delete(res);
        exec_case_native_clear(&n);
    }
    exec_env_free(env);
    exec_case_native_session_free(session);
    if (ok && c->expect == EXPECT_ERROR && !raised_expected)
        return failf("bad case: expects %s but CPython never raised it", c->expect_arg), 1;
    return ok ? 0 : 1;
}

/* ---- the driver, in the parent ---- */

static char *
read_all_with_deadline(int fd, pid_t pid, bool *timed_out)
{
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    *timed_out = false;
    while (buf) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long elapsed = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        if (elapsed >= CASE_TIMEOUT_MS) {
            kill(pid, SIGKILL);
            *timed_out = true;
            break;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, (int) (CASE_TIMEOUT_MS - elapsed));
        if (r <= 0)
            continue;
        if (len + 1024 > cap) {
            char *n = realloc(buf, cap *= 2);
            if (!n)
                break;
            buf = n;
        }
        ssize_t got = read(fd, buf + len, cap - len - 1);
        if (got <= 0)
            break;
        len += (size_t) got;
    }
    if (buf)
        buf[len] = '\0';
    return buf;
}

enum verdict { V_PASS, V_FAIL, V_SKIP };

static enum verdict
run_case(const char *path, const char *shown)
{
    struct pf_error *err = NULL;
    struct exec_case *c = exec_case_load(path, &err);
    if (!c) {
        printf("FAIL %s: %s\n", shown, err ? err->msg : "cannot load");
        pf_error_free(err);
        return V_FAIL;
    }
    if (c->skip) {
        if (verbose)
            printf("SKIP %s: %s\n", shown, c->skip);
        exec_case_free(c);
        return V_SKIP;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        perror("pipe2");
        exit(2);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        int rc = child_run(c);
        fflush(stdout); /* _exit() does not flush stdio */
        _exit(rc);
    }
    close(fds[1]);
    bool timed_out;
    _cleanup_free_ char *why = read_all_with_deadline(fds[0], pid, &timed_out);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    enum verdict v = V_FAIL;
    if (timed_out)
        printf("FAIL %s: no verdict within %d ms (hang?)\n", shown, CASE_TIMEOUT_MS);
    else if (WIFSIGNALED(status))
        printf("FAIL %s: the child died of signal %d (%s)\n", shown, WTERMSIG(status),
               strsignal(WTERMSIG(status)));
    else if (WEXITSTATUS(status) != 0)
        printf("FAIL %s: %s\n", shown, why && *why ? why : "(no reason given)");
    else
        v = V_PASS;
    if (v == V_PASS && verbose)
        printf("PASS %s\n", shown);
    exec_case_free(c);
    return v;
}

struct counts {
    unsigned pass, fail, skip;
};

static void
count(struct counts *n, enum verdict v)
{
    if (v == V_PASS)
        n->pass++;
    else if (v == V_FAIL)
        n->fail++;
    else
        n->skip++;
}

static int
filter_dirs(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* Walks a directory in name order (cases are numbered), recursing into topics. */
static void
run_tree(const char *path, const char *shown, const char *filter, struct counts *n)
{
    struct dirent **list;
    int k = scandir(path, &list, filter_dirs, alphasort);
    if (k < 0) {
        size_t len = strlen(path);
        if (len > 3 && strcmp(path + len - 3, ".py") == 0 && (!filter || strstr(shown, filter)))
            count(n, run_case(path, shown));
        return;
    }
    for (int i = 0; i < k; i++) {
        _cleanup_free_ char *child = NULL, *child_shown = NULL;
        if (asprintf(&child, "%s/%s", path, list[i]->d_name) < 0 ||
            asprintf(&child_shown, "%s/%s", shown, list[i]->d_name) < 0)
            exit(2);
        run_tree(child, child_shown, filter, n);
        free(list[i]);
    }
    free(list);
}

int
main(int argc, char **argv)
{
    const char *filter = NULL;
    int opt;
    while ((opt = getopt(argc, argv, "vk:")) != -1) {
        if (opt == 'v')
            verbose = true;
        else if (opt == 'k')
            filter = optarg;
        else {
            fprintf(stderr, "usage: %s [-v] [-k SUBSTRING] DIR_OR_FILE...\n", argv[0]);
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "usage: %s [-v] [-k SUBSTRING] DIR_OR_FILE...\n", argv[0]);
        return 2;
    }
    struct pf_error *err = NULL;
    if (exec_case_init(&err) < 0) {
        fprintf(stderr, "cannot start the harness: %s\n", err ? err->msg : "?");
        return 2;
    }
    struct counts n = {0};
    for (int i = optind; i < argc; i++) {
        if (access(argv[i], R_OK) < 0) {
            printf("FAIL %s: %s\n", argv[i], strerror(errno));
            n.fail++;
            continue;
        }
        const char *base = strrchr(argv[i], '/');
        run_tree(argv[i], base ? base + 1 : argv[i], filter, &n);
    }
    printf("%u passed, %u failed, %u skipped\n", n.pass, n.fail, n.skip);
    return n.fail ? 1 : 0;
}
