/* A unit test playing pyfenced to a real zygote and its workers. Why: worker_fixture.h. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

#include "msg.h"
#include "worker_fixture.h"

void
wfx_on_spawned(void *ctx, pid_t pid, const struct pf_error *err)
{
    struct wfx_worker *w = ctx;
    w->spawned = true;
    w->pid = err ? -1 : pid;
}

void
wfx_on_exit(void *ctx, const struct zygote_exit *e)
{
    struct wfx_worker *w = ctx;
    w->exited = true;
    w->exit = *e;
}

static void
on_tick(uv_timer_t *t)
{
    (void) t;
}

bool
wfx_run_until(uv_loop_t *loop, const bool *flag, uint64_t timeout_ms)
{
    /* A timer, so that the loop wakes to look at the deadline even when nothing happens. */
    uv_timer_t tick;
    uv_timer_init(loop, &tick);
    uv_timer_start(&tick, on_tick, 20, 20);
    uint64_t deadline = uv_now(loop) + timeout_ms;
    while (!*flag && uv_now(loop) < deadline)
        uv_run(loop, UV_RUN_ONCE);
    uv_close((uv_handle_t *) &tick, NULL);
    uv_run(loop, UV_RUN_NOWAIT);
    return *flag;
}

bool
wfx_find_zygote(char *path, size_t size)
{
    const char *env = getenv("PYFENCE_ZYGOTE");
    if (env) {
        snprintf(path, size, "%s", env);
    } else {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n < 0)
            return false;
        self[n] = '\0';
        /* build/tests/unit/test_X -> build/daemon/worker/pyfence-zygote */
        snprintf(path, size, "%s/../../daemon/worker/pyfence-zygote", dirname(self));
    }
    return access(path, X_OK) == 0;
}

void
wfx_send_json(int fd, const char *json)
{
    char *frame;
    size_t len;
    assert_int_equal(frame_encode(json, strlen(json), 64u << 20, &frame, &len, NULL), 0);
    assert_int_equal(write(fd, frame, len), (ssize_t) len);
    free(frame);
}

void
wfx_send_fmt(int fd, const char *fmt, ...)
{
    char json[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(json, sizeof(json), fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t) n < sizeof(json));
    wfx_send_json(fd, json);
}

void
wfx_reader_init(struct wfx_reader *r)
{
    *r = (struct wfx_reader){.n = 0};
    frame_decoder_init(&r->dec, 64u << 20);
}

void
wfx_reader_finish(struct wfx_reader *r)
{
    for (int i = 0; i < r->n; i++)
        cJSON_Delete(r->got[i]);
    r->n = 0;
    frame_decoder_finish(&r->dec);
}

static int
keep_frame(void *userdata, char *payload, size_t len)
{
    struct wfx_reader *r = userdata;
    cJSON *obj = NULL;
    assert_int_equal(msg_parse(payload, len, 512, &obj, NULL), 0);
    free(payload);
    /* Output events are not what these tests look at. */
    if (strcmp(msg_get_string(obj, "event", ""), "output") == 0) {
        cJSON_Delete(obj);
        return 0;
    }
    assert_true(r->n < (int) (sizeof(r->got) / sizeof(r->got[0])));
    r->got[r->n++] = obj;
    return 0;
}

/* The next non-output event; NULL at EOF. */
static cJSON *
next_event(int fd, struct wfx_reader *r)
{
    while (r->n == 0) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        assert_int_equal(poll(&pfd, 1, 15000), 1);
        char buf[8192];
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EAGAIN)
            continue;
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return NULL;
        assert_true(n > 0);
        assert_int_equal(frame_decoder_feed(&r->dec, buf, (size_t) n, keep_frame, r, NULL), n);
    }
    cJSON *obj = r->got[0];
    memmove(r->got, r->got + 1, (size_t) --r->n * sizeof(r->got[0]));
    return obj;
}

cJSON *
wfx_expect_event(int fd, struct wfx_reader *r, const char *event)
{
    cJSON *obj = next_event(fd, r);
    if (obj && strcmp(msg_get_string(obj, "event", ""), event) != 0) {
        char *text = cJSON_PrintUnformatted(obj);
        fail_msg("expected event %s, got %s", event, text);
    }
    return obj;
}
