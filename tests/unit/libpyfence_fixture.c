#include "libpyfence_fixture.h"

#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>
/* cmocka.h needs the headers above first. */
#include <cmocka.h>

static int
read_exact(int fd, void *buf, size_t len)
{
    size_t have = 0;
    while (have < len) {
        ssize_t n = read(fd, (char *) buf + have, len - have);
        if (n <= 0)
            return -1;
        have += (size_t) n;
    }
    return 0;
}

static void
send_frame(int fd, const char *payload, size_t len)
{
    uint8_t hdr[4] = {(uint8_t) (len >> 24), (uint8_t) (len >> 16), (uint8_t) (len >> 8),
                      (uint8_t) len};
    /* One writev: a client never sees half a frame it would wait for the rest of. */
    struct iovec iov[2] = {{hdr, 4}, {(void *) payload, len}};
    if (writev(fd, iov, 2) != (ssize_t) (4 + len))
        fprintf(stderr, "fake server: short write\n");
}

/* Sends step s's answer to request id. */
static void
answer(int fd, const struct step *s, unsigned long long id)
{
    if (s->raw) {
        if (write(fd, s->raw, s->raw_len) != (ssize_t) s->raw_len)
            fprintf(stderr, "fake server: short write\n");
    } else if (s->json) {
        char *buf = NULL;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        int n = asprintf(&buf, s->json, id);
#pragma GCC diagnostic pop
        assert_true(n > 0);
        send_frame(fd, buf, (size_t) n);
        free(buf);
    }
}

static void *
serve(void *userdata)
{
    struct fake *f = userdata;
    int fd = accept(f->listen_fd, NULL, NULL);
    for (size_t i = 0; fd >= 0 && i < f->n_steps; i++) {
        const struct step *s = &f->steps[i];
        if (s->early)
            answer(fd, s, 0);
        uint8_t hdr[4];
        if (read_exact(fd, hdr, 4) < 0)
            break;
        size_t len = (size_t) hdr[0] << 24 | (size_t) hdr[1] << 16 | (size_t) hdr[2] << 8 | hdr[3];
        char *req = calloc(1, len + 1);
        if (!req || read_exact(fd, req, len) < 0) {
            free(req);
            break;
        }
        f->requests[i] = req;
        cJSON *obj = cJSON_Parse(req);
        unsigned long long id = (unsigned long long) cJSON_GetNumberValue(
                cJSON_GetObjectItemCaseSensitive(obj, "id"));
        cJSON_Delete(obj);
        if (s->delay_ms)
            usleep((useconds_t) s->delay_ms * 1000);
        if (!s->early)
            answer(fd, s, id);
        if (s->close_after)
            break;
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

struct fake *
fake_start(const struct step *steps, size_t n)
{
    struct fake *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    snprintf(f->dir, sizeof(f->dir), "/tmp/pf-unit-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/s.sock", f->dir);
    memcpy(f->steps, steps, n * sizeof(*steps));
    f->n_steps = n;
    f->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", f->path);
    assert_int_equal(bind(f->listen_fd, (struct sockaddr *) &addr, sizeof(addr)), 0);
    assert_int_equal(listen(f->listen_fd, 4), 0);
    assert_int_equal(pthread_create(&f->thread, NULL, serve, f), 0);
    return f;
}

void
fake_join(struct fake *f)
{
    if (!f->joined)
        pthread_join(f->thread, NULL);
    f->joined = 1;
}

void
fake_stop(struct fake *f)
{
    fake_join(f);
    close(f->listen_fd);
    unlink(f->path);
    rmdir(f->dir);
    for (size_t i = 0; i < MAX_STEPS; i++)
        free(f->requests[i]);
    free(f);
}

struct pyfence_conn *
connect_to(struct fake *f)
{
    struct pyfence_conn *conn = NULL;
    struct pyfence_error err = {0};
    assert_int_equal(pyfence_connect(f->path, &conn, &err), 0);
    return conn;
}

void
capture(void *userdata, const char *data, size_t len)
{
    struct captured *c = userdata;
    size_t have = strlen(c->buf);
    if (len < sizeof(c->buf) - have)
        memcpy(c->buf + have, data, len);
}

size_t
build_frames(char *buf, const char *const *parts, size_t n)
{
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(parts[i]);
        buf[off++] = (char) (len >> 24);
        buf[off++] = (char) (len >> 16);
        buf[off++] = (char) (len >> 8);
        buf[off++] = (char) len;
        memcpy(buf + off, parts[i], len);
        off += len;
    }
    return off;
}

void
assert_request(struct fake *f, size_t i, const char *op, const char *name, const char *value)
{
    assert_non_null(f->requests[i]);
    cJSON *req = cJSON_Parse(f->requests[i]);
    assert_non_null(req);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "op")), op);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, name);
    char num[32];
    if (cJSON_IsNumber(v))
        snprintf(num, sizeof(num), "%.0f", v->valuedouble);
    assert_string_equal(cJSON_IsNumber(v) ? num : cJSON_GetStringValue(v), value);
    cJSON_Delete(req);
}
