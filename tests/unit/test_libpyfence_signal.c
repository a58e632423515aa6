/* libpyfence's waits and signals, against the scripted server of libpyfence_fixture.c: a wait
 * a signal interrupts leaves its request in flight, a signal does not end a wait unless the call
 * names it, and an interrupted session.open is cancelled, or closed if it opened all the same. */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "libpyfence_fixture.h"
#include "pyfence.h"

static volatile sig_atomic_t sigusr1_handled;

static void
on_sigusr1(int sig)
{
    (void) sig;
    sigusr1_handled++;
}

/* Sends SIGUSR1 to one thread every few milliseconds until told to stop: a wait that should
 * end on a signal gets one whenever it blocks, however the threads are scheduled. */
struct signaller {
    pthread_t target, thread;
    volatile int stop;
};

static void *
keep_signalling(void *userdata)
{
    struct signaller *s = userdata;
    while (!s->stop) {
        pthread_kill(s->target, SIGUSR1);
        usleep(5000);
    }
    return NULL;
}

static void
signaller_start(struct signaller *s, struct sigaction *ret_old)
{
    struct sigaction sa = {.sa_handler = on_sigusr1}; /* no SA_RESTART: recv fails with EINTR */
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, ret_old), 0);
    s->target = pthread_self();
    s->stop = 0;
    assert_int_equal(pthread_create(&s->thread, NULL, keep_signalling, s), 0);
}

static void
signaller_stop(struct signaller *s, const struct sigaction *old)
{
    s->stop = 1;
    pthread_join(s->thread, NULL);
    sigaction(SIGUSR1, old, NULL);
}

/* SIGUSR1 blocked, with a handler. */
static void
block_sigusr1(sigset_t *ret_old_mask, struct sigaction *ret_old)
{
    struct sigaction sa = {.sa_handler = on_sigusr1};
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &sa, ret_old), 0);
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    assert_int_equal(pthread_sigmask(SIG_BLOCK, &block, ret_old_mask), 0);
}

static void
test_interrupted_wait_keeps_the_request(void **state)
{
    /* The exec gets no answer until the cancel comes; then its reply, then the cancel's. */
    const char *parts[] = {
            "{\"id\": 1, \"event\": \"output\", \"data\": \"so far\\n\"}",
            ("{\"id\": 1, \"ok\": false, \"outcome\": \"cancelled\", \"error\": {\"code\": "
             "\"cancelled\", \"message\": \"Code execution was cancelled\"}}"),
            "{\"id\": 2, \"ok\": true, \"cancelled\": true}",
    };
    char frames[1024];
    const struct step s[] = {{.json = NULL},
                             {.raw = frames, .raw_len = build_frames(frames, parts, 3)}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    sigset_t old_mask;
    struct sigaction old;
    block_sigusr1(&old_mask, &old);
    struct pyfence_error err = {0};
    uint64_t id;
    assert_int_equal(pyfence_submit(conn, "while True: pass", NULL, &id, &err), 0);
    struct pyfence_result res;
    pyfence_result_init(&res);
    struct captured out = {{0}};
    /* Sent before the wait, while blocked: it stays pending, and the wait takes it. */
    assert_int_equal(pthread_kill(pthread_self(), SIGUSR1), 0);
    int r = pyfence_wait_signal(conn, id, SIGUSR1, capture, &out, &res, &err);
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGUSR1, &old, NULL);
    assert_int_equal(r, -PYFENCE_E_INTERRUPTED);
    assert_string_equal(err.name, "interrupted");
    assert_non_null(strstr(err.message, "still in flight"));
    /* A number that is no signal is refused, not waited on uninterruptibly. */
    assert_int_equal(pyfence_wait_signal(conn, id, 12345, NULL, NULL, &res, &err),
                     -PYFENCE_E_BAD_REQUEST);
    assert_non_null(strstr(err.message, "12345 is not a signal number"));
    assert_int_equal(pyfence_wait_signal(conn, id, -1, NULL, NULL, &res, &err),
                     -PYFENCE_E_BAD_REQUEST);
    /* Still in flight: it can be cancelled, and its reply waited for. */
    bool cancelled = false;
    assert_int_equal(pyfence_cancel(conn, id, &cancelled, &err), 0);
    assert_true(cancelled);
    assert_int_equal(pyfence_wait(conn, id, capture, &out, &res, &err), 0);
    assert_int_equal(res.outcome_code, PYFENCE_E_CANCELLED);
    assert_string_equal(out.buf, "so far\n");
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_stop(f);
}

/* pyfence_session_open_signal(SIGUSR1) with SIGUSR1 blocked, handled, and already pending: the
 * call must take it (its handler runs once), whichever way it ends. */
static int
open_with_sigusr1_pending(struct pyfence_conn *conn, const struct pyfence_session_options *opts,
                          char *id, struct pyfence_error *err)
{
    sigset_t old_mask, pending;
    struct sigaction old;
    block_sigusr1(&old_mask, &old);
    sigusr1_handled = 0;
    assert_int_equal(pthread_kill(pthread_self(), SIGUSR1), 0);
    int r = pyfence_session_open_signal(conn, opts, SIGUSR1, id, err);
    assert_int_equal(sigpending(&pending), 0);
    assert_false(sigismember(&pending, SIGUSR1));
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGUSR1, &old, NULL);
    assert_int_equal(sigusr1_handled, 1);
    return r;
}

/* A detached open the server holds until its cancel, which it answers with open_reply (the
 * open's own answer, id 1) and the cancel's reply (cancelled as given), then a session.close if
 * one comes; the open runs with SIGUSR1 pending. Returns its result; *ret_f is the finished
 * server, whose requests the caller checks before fake_stop. */
static int
run_interrupted_open(const char *open_reply, bool cancelled, struct pyfence_error *err,
                     struct fake **ret_f)
{
    const char *parts[] = {open_reply, cancelled
                                               ? "{\"id\": 2, \"ok\": true, \"cancelled\": true}"
                                               : "{\"id\": 2, \"ok\": true, \"cancelled\": false}"};
    char frames[1024];
    const struct step s[] = {{.json = NULL},
                             {.raw = frames, .raw_len = build_frames(frames, parts, 2)},
                             {.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 3);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_session_options opts;
    pyfence_session_options_init(&opts);
    opts.detach = true;
    char id[PYFENCE_SESSION_ID_LEN + 1] = "";
    int r = open_with_sigusr1_pending(conn, &opts, id, err);
    assert_string_equal(id, ""); /* no id is handed out, whatever the outcome */
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "session.open", "id", "1");
    assert_request(f, 1, "cancel", "target", "1");
    *ret_f = f;
    return r;
}

static void
test_interrupted_open_is_cancelled(void **state)
{
    /* The open waits until its cancel: then its cancelled reply, then the cancel's. */
    struct pyfence_error err = {0};
    struct fake *f;
    int r = run_interrupted_open("{\"id\": 1, \"ok\": false, \"error\": {\"code\": \"cancelled\", "
                                 "\"message\": \"session.open was cancelled\"}}",
                                 true, &err, &f);
    assert_int_equal(r, -PYFENCE_E_INTERRUPTED);
    assert_string_equal(err.name, "interrupted");
    assert_non_null(strstr(err.message, "no session was opened"));
    assert_null(f->requests[2]);
    fake_stop(f);
}

static void
test_interrupted_open_that_opened_is_closed(void **state)
{
    /* The open's reply crosses the cancel: the session exists, and is closed. */
    struct pyfence_error err = {0};
    struct fake *f;
    int r = run_interrupted_open("{\"id\": 1, \"ok\": true, \"session\": \"" SID "\", "
                                 "\"profile\": \"default\", \"detached\": true}",
                                 false, &err, &f);
    assert_int_equal(r, -PYFENCE_E_INTERRUPTED);
    assert_request(f, 2, "session.close", "session", SID);
    fake_stop(f);
}

static void
test_interrupted_open_with_no_id_to_close_says_so(void **state)
{
    /* An open that succeeded without a usable id: it cannot be closed, and is not called gone. */
    struct pyfence_error err = {0};
    struct fake *f;
    int r = run_interrupted_open("{\"id\": 1, \"ok\": true, \"session\": \"short\"}", false, &err,
                                 &f);
    assert_int_equal(r, -PYFENCE_E_INTERNAL);
    assert_non_null(strstr(err.message, "cannot be closed"));
    assert_null(f->requests[2]);
    fake_stop(f);
}

static void
test_signal_as_the_open_reply_is_read_closes_it(void **state)
{
    /* The reply is there before the wait blocks, so the wait does not let the pending signal
     * through (ppoll reports a readable socket first): it is still pending once the reply is
     * read, and counts as an interruption all the same. */
    const struct step s[] = {
            {.json = "{\"id\": 1, \"ok\": true, \"session\": \"" SID "\"}", .early = 1},
            {.json = "{\"id\": %1$llu, \"ok\": true}"}};
    struct fake *f = fake_start(s, 2);
    struct pyfence_conn *conn = connect_to(f);
    struct pollfd early = {.fd = pyfence_fileno(conn), .events = POLLIN};
    assert_int_equal(poll(&early, 1, 10000), 1); /* the early reply is there */
    struct pyfence_error err = {0};
    char id[PYFENCE_SESSION_ID_LEN + 1] = "";
    int r = open_with_sigusr1_pending(conn, NULL, id, &err);
    if (r != -PYFENCE_E_INTERRUPTED)
        fail_msg("%d: %s", r, err.message);
    assert_string_equal(id, "");
    pyfence_close(conn);
    fake_join(f);
    assert_request(f, 0, "session.open", "id", "1");
    assert_request(f, 1, "session.close", "session", SID);
    fake_stop(f);
}

static void
test_open_signal_not_interrupted_and_bad_signo(void **state)
{
    /* signo 0: a plain wait for a late answer. */
    const struct step s[] = {
            {.json = "{\"id\": %1$llu, \"ok\": true, \"session\": \"" SID "\"}", .delay_ms = 100}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    char id[PYFENCE_SESSION_ID_LEN + 1] = "";
    assert_int_equal(pyfence_session_open_signal(conn, NULL, 0, id, &err), 0);
    assert_string_equal(id, SID);
    /* Refused before anything is sent. */
    assert_int_equal(pyfence_session_open_signal(conn, NULL, 12345, id, &err),
                     -PYFENCE_E_BAD_REQUEST);
    assert_non_null(strstr(err.message, "12345 is not a signal number"));
    fake_join(f);
    pyfence_close(conn);
    fake_stop(f);
}

static void
test_signals_do_not_end_a_wait_by_default(void **state)
{
    /* The answer comes 150 ms late, through some 30 signals. */
    const struct step s[] = {{.json = EXEC_OK, .delay_ms = 150}};
    struct fake *f = fake_start(s, 1);
    struct pyfence_conn *conn = connect_to(f);
    struct pyfence_error err = {0};
    struct pyfence_result res;
    pyfence_result_init(&res);
    struct signaller sig;
    struct sigaction old;
    signaller_start(&sig, &old);
    int r = pyfence_exec(conn, "1", NULL, NULL, NULL, &res, &err);
    signaller_stop(&sig, &old);
    assert_int_equal(r, 0);
    assert_string_equal(res.output_repr, "42");
    pyfence_result_finish(&res);
    pyfence_close(conn);
    fake_stop(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_interrupted_wait_keeps_the_request),
            cmocka_unit_test(test_signals_do_not_end_a_wait_by_default),
            cmocka_unit_test(test_interrupted_open_is_cancelled),
            cmocka_unit_test(test_interrupted_open_that_opened_is_closed),
            cmocka_unit_test(test_interrupted_open_with_no_id_to_close_says_so),
            cmocka_unit_test(test_signal_as_the_open_reply_is_read_closes_it),
            cmocka_unit_test(test_open_signal_not_interrupted_and_bad_signo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
