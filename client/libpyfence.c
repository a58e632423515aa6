/* libpyfence: blocking client of pyfenced over the framed-JSON Unix socket (pyfence.h). Here:
 * the connection, sending and receiving frames, waiting for a reply, and the small calls (hello,
 * ping, stats, cancel, pyfence_request). Exec is in libpyfence_exec.c, sessions in
 * libpyfence_session.c, the caller-allocated structs in libpyfence_struct.c. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "frame.h"
#include "json_write.h"
#include "libpyfence_internal.h"
#include "msg.h"
#include "pf_cleanup.h"
#include "pf_error.h"
#include "pf_socket_path.h"
#include "pyfence.h"

/* Replies may be as large as the largest max_frame_bytes a daemon can be configured with. */
#define CLIENT_MAX_REPLY_BYTES (64u * 1024 * 1024)
#define READ_CHUNK             65536
/* Values nest up to 64 containers (PROTOCOL.md "Values"), and a tagged container takes two or
 * three JSON levels ({"$type": "dict", "items": [[K, V]]}), plus the reply's own levels: room
 * to spare, as the daemon has for its workers' results. Still well below cJSON's own 1000. */
#define CLIENT_MAX_REPLY_DEPTH 512

_Static_assert((int) PYFENCE_E_HARDENING_UNAVAILABLE == (int) PF_E_HARDENING_UNAVAILABLE &&
                       (int) PYFENCE_E_HARDENING_UNAVAILABLE + 1 == (int) _PF_E_MAX &&
                       (int) PYFENCE_E_INTERNAL == (int) PF_E_INTERNAL,
               "enum pyfence_code must mirror enum pf_code");

/* One frame received for an id in flight, kept until pyfence_wait() of that id reads it. */
struct inbox_msg {
    struct inbox_msg *next;
    uint64_t id;
    cJSON *obj; /* owned */
};

struct pyfence_conn {
    int fd;
    char *path;
    uint64_t next_id;
    uint32_t max_request_bytes;
    struct frame_decoder decoder;
    uint64_t *inflight; /* ids sent and not yet answered */
    size_t n_inflight, cap_inflight;
    struct inbox_msg *head, *tail;
    /* Set once the stream cannot be trusted any more; every later call fails with it. */
    int broken_code;
    char broken_msg[512];
    /* A reply with a null id: the server refused something it could not attribute (busy,
     * bad_frame). It fails whichever wait runs next. */
    cJSON *orphan_error;
};

const char *
pyfence_code_name(int code)
{
    if (code < 0)
        code = -code;
    if (code == PYFENCE_OK)
        return "ok";
    if (code == PYFENCE_E_PROTOCOL)
        return "protocol";
    if (code == PYFENCE_E_INTERRUPTED)
        return "interrupted";
    return pf_code_name(code);
}

int
pyfence_code_from_name(const char *name)
{
    if (name && strcmp(name, "ok") == 0)
        return PYFENCE_OK;
    if (name && strcmp(name, "protocol") == 0)
        return PYFENCE_E_PROTOCOL;
    if (name && strcmp(name, "interrupted") == 0)
        return PYFENCE_E_INTERRUPTED;
    int c = pf_code_from_name(name);
    return c ? c : PYFENCE_E_INTERNAL;
}

int
libpyfence_fail_named(struct pyfence_error *err, int code, const char *name, const char *fmt, ...)
{
    if (err) {
        err->code = code;
        snprintf(err->name, sizeof(err->name), "%s", name ? name : pyfence_code_name(code));
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
    }
    return -code;
}

#define fail(err, code, ...) libpyfence_fail_named(err, code, NULL, __VA_ARGS__)

/* Converts an internal pf_error (and frees it) into the caller's error. */
static int
fail_pf(struct pyfence_error *err, struct pf_error *pe, int fallback_code, const char *context)
{
    int code = pe && pe->code > 0 ? pe->code : fallback_code;
    int r = fail(err, code, "%s: %s", context, pe && pe->msg ? pe->msg : "out of memory");
    pf_error_free(pe);
    return r;
}

int
libpyfence_check_text(const char *text, const char *what, struct pyfence_error *err)
{
    if (!text)
        return fail(err, PYFENCE_E_BAD_REQUEST, "%s: NULL", what);
    /* pyfenced refuses a frame that is not UTF-8 without being able to name its request. */
    size_t bad;
    if (!msg_utf8_valid(text, strlen(text), &bad))
        return fail(err, PYFENCE_E_BAD_REQUEST, "%s: not valid UTF-8 (byte %zu)", what, bad);
    return 0;
}

int
libpyfence_check_texts(const char *const *texts, size_t n, const char *what,
                       struct pyfence_error *err)
{
    if (n > 0 && !texts)
        return fail(err, PYFENCE_E_BAD_REQUEST, "%s: NULL array of %zu", what, n);
    for (size_t i = 0; i < n; i++) {
        char item[96];
        snprintf(item, sizeof(item), "%s[%zu]", what, i);
        int r = libpyfence_check_text(texts[i], item, err);
        if (r < 0)
            return r;
    }
    return 0;
}

int
libpyfence_parse_object(const char *text, const char *what, cJSON **ret, struct pyfence_error *err)
{
    struct pf_error *pe = NULL;
    cJSON *obj = NULL;
    /* The option sits one level down in the request, which may nest MSG_MAX_DEPTH levels:
     * catch a too-deep value here rather than have the daemon refuse the whole frame. */
    if (msg_parse(text, strlen(text), MSG_MAX_DEPTH - 1, &obj, &pe) < 0) {
        /* The caller's mistake, not the wire's: bad_request rather than msg_parse's bad_frame. */
        int r = fail(err, PYFENCE_E_BAD_REQUEST, "%s: %s", what,
                     pe && pe->msg ? pe->msg : "out of memory");
        pf_error_free(pe);
        return r;
    }
    *ret = obj;
    return 0;
}

char *
libpyfence_exact_json(const cJSON *item)
{
    char *buf = NULL;
    size_t len;
    struct pf_error *e = NULL;
    if (json_write(item, 0, SIZE_MAX / 2, &buf, &len, &e) < 0) {
        pf_error_free(e);
        return NULL;
    }
    return buf;
}

static int mark_broken(struct pyfence_conn *conn, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int
mark_broken(struct pyfence_conn *conn, int code, const char *fmt, ...)
{
    if (conn->broken_code)
        return -conn->broken_code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(conn->broken_msg, sizeof(conn->broken_msg), fmt, ap);
    va_end(ap);
    conn->broken_code = code;
    return -code;
}

int
pyfence_connect(const char *path, struct pyfence_conn **ret_conn, struct pyfence_error *err)
{
    struct pf_error *pe = NULL;
    _cleanup_free_ char *resolved = NULL;
    if (pf_socket_path_resolve(path, &resolved, &pe) < 0)
        return fail_pf(err, pe, PYFENCE_E_CONFIG, "cannot choose the pyfenced socket");

    _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(err, PYFENCE_E_CONNECT, "socket(AF_UNIX): %s", strerror(errno));
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    memcpy(addr.sun_path, resolved, strlen(resolved) + 1); /* resolve checked the length */
    int r;
    do
        r = connect(fd, (struct sockaddr *) &addr, sizeof(addr));
    while (r < 0 && errno == EINTR);
    if (r < 0) {
        int e = errno;
        return fail(err, PYFENCE_E_CONNECT, "cannot connect to pyfenced at '%s': %s%s", resolved,
                    strerror(e), e == ENOENT || e == ECONNREFUSED ? " (is pyfenced running?)" : "");
    }

    struct pyfence_conn *conn = calloc(1, sizeof(*conn));
    if (!conn)
        return fail(err, PYFENCE_E_INTERNAL, "out of memory");
    conn->fd = TAKE_FD(fd);
    conn->path = TAKE_PTR(resolved);
    conn->next_id = 1;
    conn->max_request_bytes = FRAME_DEFAULT_MAX_BYTES;
    frame_decoder_init(&conn->decoder, CLIENT_MAX_REPLY_BYTES);
    *ret_conn = conn;
    return 0;
}

void
pyfence_close(struct pyfence_conn *conn)
{
    if (!conn)
        return;
    pf_close(conn->fd);
    free(conn->path);
    frame_decoder_finish(&conn->decoder);
    free(conn->inflight);
    while (conn->head) {
        struct inbox_msg *m = conn->head;
        conn->head = m->next;
        cJSON_Delete(m->obj);
        free(m);
    }
    cJSON_Delete(conn->orphan_error);
    free(conn);
}

int
pyfence_fileno(const struct pyfence_conn *conn)
{
    return conn->fd;
}

const char *
pyfence_path(const struct pyfence_conn *conn)
{
    return conn->path;
}

/* ---- in-flight ids ------------------------------------------------------------------ */

static ssize_t
inflight_find(const struct pyfence_conn *conn, uint64_t id)
{
    for (size_t i = 0; i < conn->n_inflight; i++)
        if (conn->inflight[i] == id)
            return (ssize_t) i;
    return -1;
}

static int
inflight_add(struct pyfence_conn *conn, uint64_t id)
{
    if (conn->n_inflight == conn->cap_inflight) {
        size_t cap = conn->cap_inflight ? conn->cap_inflight * 2 : 16;
        uint64_t *n = realloc(conn->inflight, cap * sizeof(*n));
        if (!n)
            return -1;
        conn->inflight = n;
        conn->cap_inflight = cap;
    }
    conn->inflight[conn->n_inflight++] = id;
    return 0;
}

static void
inflight_remove(struct pyfence_conn *conn, uint64_t id)
{
    ssize_t i = inflight_find(conn, id);
    if (i >= 0)
        conn->inflight[i] = conn->inflight[--conn->n_inflight];
}

/* ---- sending -------------------------------------------------------------------------- */

static int read_more(struct pyfence_conn *conn, int flags);
static int take_orphan(struct pyfence_conn *conn, struct pyfence_error *err);

static int
send_all(struct pyfence_conn *conn, const char *buf, size_t len, struct pyfence_error *err)
{
    while (len > 0) {
        ssize_t n = send(conn->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* The daemon is not reading us, maybe because we are not reading its replies to
             * earlier requests: take those in while we wait, or both sides would block. */
            struct pollfd pfd = {.fd = conn->fd, .events = POLLIN | POLLOUT};
            if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
                n = -1;
            else if (!(pfd.revents & POLLIN) || read_more(conn, MSG_DONTWAIT) >= 0)
                continue;
            else if (conn->orphan_error)
                return take_orphan(conn, err);
            else
                return fail(err, conn->broken_code, "%s", conn->broken_msg);
        }
        if (n < 0) {
            int e = errno;
            /* The daemon may have said why before closing (busy, shutting_down): prefer its
             * words to a bare EPIPE. */
            while (!conn->orphan_error && read_more(conn, MSG_DONTWAIT) > 0)
                ;
            if (conn->orphan_error)
                return take_orphan(conn, err);
            mark_broken(conn, PYFENCE_E_CONNECT, "connection to pyfenced at '%s' lost: %s",
                        conn->path, strerror(e));
            return fail(err, conn->broken_code, "%s", conn->broken_msg);
        }
        buf += n;
        len -= (size_t) n;
    }
    return 0;
}

int
libpyfence_send_request(struct pyfence_conn *conn, cJSON *req, uint64_t *ret_id,
                        struct pyfence_error *err)
{
    if (conn->broken_code)
        return fail(err, conn->broken_code, "%s", conn->broken_msg);
    uint64_t id = conn->next_id++;
    if (!cJSON_AddNumberToObject(req, "id", (double) id))
        return fail(err, PYFENCE_E_INTERNAL, "out of memory");
    _cleanup_free_ char *buf = NULL;
    size_t len = 0;
    struct pf_error *pe = NULL;
    if (msg_encode(req, conn->max_request_bytes, &buf, &len, &pe) < 0)
        return fail_pf(err, pe, PYFENCE_E_TOO_LARGE, "request not sent");
    if (inflight_add(conn, id) < 0)
        return fail(err, PYFENCE_E_INTERNAL, "out of memory");
    int r = send_all(conn, buf, len, err);
    if (r < 0) {
        inflight_remove(conn, id);
        return r;
    }
    *ret_id = id;
    return 0;
}

/* ---- receiving ------------------------------------------------------------------------ */

/* Reads the id of a frame: a request id we sent (an integer), or null. */
static int
read_id(const cJSON *obj, uint64_t *ret_id, bool *ret_null)
{
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(obj, "id");
    if (!id || cJSON_IsNull(id)) {
        *ret_null = true;
        return 0;
    }
    if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble > 9007199254740991.0 ||
        id->valuedouble != (double) (uint64_t) id->valuedouble)
        return -1;
    *ret_id = (uint64_t) id->valuedouble;
    *ret_null = false;
    return 0;
}

static void
inbox_append(struct pyfence_conn *conn, uint64_t id, cJSON *obj)
{
    struct inbox_msg *m = calloc(1, sizeof(*m));
    if (!m) {
        cJSON_Delete(obj);
        mark_broken(conn, PYFENCE_E_INTERNAL, "out of memory while receiving a reply");
        return;
    }
    m->id = id;
    m->obj = obj;
    if (conn->tail)
        conn->tail->next = m;
    else
        conn->head = m;
    conn->tail = m;
}

static struct inbox_msg *
inbox_take(struct pyfence_conn *conn, uint64_t id)
{
    struct inbox_msg *prev = NULL;
    for (struct inbox_msg *m = conn->head; m; prev = m, m = m->next) {
        if (m->id != id)
            continue;
        if (prev)
            prev->next = m->next;
        else
            conn->head = m->next;
        if (conn->tail == m)
            conn->tail = prev;
        m->next = NULL;
        return m;
    }
    return NULL;
}

/* Never stops the decoder: a bad frame marks the connection broken and later ones are
 * discarded, so the decoder's state stays simple. */
static int
on_frame(void *userdata, char *payload, size_t len)
{
    struct pyfence_conn *conn = userdata;
    _cleanup_free_ char *owned = payload;
    if (conn->broken_code)
        return 0;
    cJSON *obj = NULL;
    struct pf_error *pe = NULL;
    if (msg_parse(owned, len, CLIENT_MAX_REPLY_DEPTH, &obj, &pe) < 0) {
        mark_broken(conn, PYFENCE_E_PROTOCOL, "pyfenced at '%s' sent an unreadable frame: %s",
                    conn->path, pe && pe->msg ? pe->msg : "out of memory");
        pf_error_free(pe);
        return 0;
    }
    uint64_t id = 0;
    bool is_null = false;
    if (read_id(obj, &id, &is_null) < 0) {
        mark_broken(conn, PYFENCE_E_PROTOCOL,
                    "pyfenced at '%s' sent a frame whose id is not an id this client sends",
                    conn->path);
        cJSON_Delete(obj);
        return 0;
    }
    if (is_null) {
        const cJSON *ok = cJSON_GetObjectItemCaseSensitive(obj, "ok");
        if (!cJSON_IsFalse(ok) || conn->orphan_error) {
            mark_broken(conn, PYFENCE_E_PROTOCOL,
                        "pyfenced at '%s' sent a frame without an id that is not an error",
                        conn->path);
            cJSON_Delete(obj);
        } else {
            conn->orphan_error = obj;
        }
        return 0;
    }
    if (inflight_find(conn, id) < 0) {
        mark_broken(conn, PYFENCE_E_PROTOCOL,
                    "pyfenced at '%s' sent a frame for id %llu, which is not in flight", conn->path,
                    (unsigned long long) id);
        cJSON_Delete(obj);
        return 0;
    }
    inbox_append(conn, id, obj);
    return 0;
}

/* Reads what is available (blocking unless flags has MSG_DONTWAIT) and files the frames.
 * Returns 1 when bytes were read, 0 when none were ready, -1 when the connection is broken. */
static int
read_more(struct pyfence_conn *conn, int flags)
{
    char buf[READ_CHUNK];
    ssize_t n;
    do
        n = recv(conn->fd, buf, sizeof(buf), flags);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (flags & MSG_DONTWAIT) && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    if (n < 0) {
        mark_broken(conn, PYFENCE_E_CONNECT, "reading from pyfenced at '%s': %s", conn->path,
                    strerror(errno));
        return -1;
    }
    if (n == 0) {
        mark_broken(conn, PYFENCE_E_CONNECT, "pyfenced at '%s' closed the connection%s", conn->path,
                    frame_decoder_pending(&conn->decoder) ? " in the middle of a frame" : "");
        return -1;
    }
    struct pf_error *pe = NULL;
    if (frame_decoder_feed(&conn->decoder, buf, (size_t) n, on_frame, conn, &pe) < 0)
        mark_broken(conn, PYFENCE_E_PROTOCOL, "bad frame from pyfenced at '%s': %s", conn->path,
                    pe && pe->msg ? pe->msg : "out of memory");
    pf_error_free(pe);
    return conn->broken_code ? -1 : 1;
}

/* The server's message, without the "OP request: " it starts with when it refused the fields
 * of request op (NULL: none): the caller's prefix, "OP refused: ", names the op already. */
static const char *
strip_op_prefix(const char *message, const char *op)
{
    static const char suffix[] = " request: ";
    size_t n = op ? strlen(op) : 0;
    if (n && strncmp(message, op, n) == 0 && strncmp(message + n, suffix, sizeof(suffix) - 1) == 0)
        return message + n + sizeof(suffix) - 1;
    return message;
}

static int
fail_from_error_obj(struct pyfence_error *err, const cJSON *reply, const char *what, const char *op)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(reply, "error");
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "code"));
    const char *message = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "message"));
    return libpyfence_fail_named(err, pyfence_code_from_name(name), name ? name : "internal",
                                 "%s: %s", what,
                                 message ? strip_op_prefix(message, op) : "(no message)");
}

/* Turns the daemon's error without an id (a refusal of the whole connection) into the error of
 * the current call; the connection is unusable afterwards. */
static int
take_orphan(struct pyfence_conn *conn, struct pyfence_error *err)
{
    _cleanup_json_ cJSON *orphan = TAKE_PTR(conn->orphan_error);
    char what[300];
    snprintf(what, sizeof(what), "pyfenced at '%s'", conn->path);
    struct pyfence_error local;
    int r = fail_from_error_obj(err ? err : &local, orphan, what, NULL);
    mark_broken(conn, -r, "%s", err ? err->message : local.message);
    return r;
}

bool
libpyfence_signo_valid(int signo)
{
    sigset_t valid;
    return signo == 0 || (signo > 0 && sigemptyset(&valid) == 0 && sigaddset(&valid, signo) == 0);
}

bool
libpyfence_take_pending(int signo)
{
    sigset_t pending, only, old;
    if (signo <= 0 || sigpending(&pending) != 0 || sigismember(&pending, signo) != 1)
        return false;
    /* Unblocking a pending signal delivers it before the call returns. */
    sigemptyset(&only);
    sigaddset(&only, signo);
    if (pthread_sigmask(SIG_UNBLOCK, &only, &old) != 0)
        return false;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return true;
}

/* Blocks until the socket is readable with signal signo unblocked: 0, or -1 when a signal
 * handler ran. */
static int
wait_readable(struct pyfence_conn *conn, int signo)
{
    sigset_t mask; /* signo was checked by pyfence_wait_signal */
    if (pthread_sigmask(SIG_BLOCK, NULL, &mask) != 0 || sigdelset(&mask, signo) != 0)
        return 0;
    struct pollfd pfd = {.fd = conn->fd, .events = POLLIN};
    for (;;) {
        int n = ppoll(&pfd, 1, NULL, &mask);
        if (n > 0)
            return 0;
        if (n < 0 && errno == EINTR)
            return -1;
        if (n < 0) /* ENOMEM: a blocking read waits instead, uninterruptibly */
            return 0;
    }
}

int
libpyfence_wait_reply(struct pyfence_conn *conn, uint64_t id, int signo, pyfence_output_cb cb,
                      void *userdata, cJSON **ret_reply, struct pyfence_error *err)
{
    if (inflight_find(conn, id) < 0)
        return fail(err, PYFENCE_E_NOT_FOUND, "request %llu is not in flight on this connection",
                    (unsigned long long) id);
    for (;;) {
        struct inbox_msg *m = inbox_take(conn, id);
        if (m) {
            cJSON *obj = m->obj;
            free(m);
            const cJSON *ev = cJSON_GetObjectItemCaseSensitive(obj, "event");
            if (!ev) {
                inflight_remove(conn, id);
                *ret_reply = obj;
                return 0;
            }
            const cJSON *data = cJSON_GetObjectItemCaseSensitive(obj, "data");
            /* Unknown events are for newer clients; only output has a meaning here. */
            if (cJSON_IsString(ev) && strcmp(ev->valuestring, "output") == 0 && cb &&
                cJSON_IsString(data))
                cb(userdata, data->valuestring, strlen(data->valuestring));
            cJSON_Delete(obj);
            continue;
        }
        if (conn->orphan_error) {
            inflight_remove(conn, id);
            return take_orphan(conn, err);
        }
        if (conn->broken_code)
            return fail(err, conn->broken_code, "%s", conn->broken_msg);
        if (signo > 0 && wait_readable(conn, signo) < 0)
            return fail(err, PYFENCE_E_INTERRUPTED,
                        "interrupted by a signal while waiting for request %llu (still in flight)",
                        (unsigned long long) id);
        read_more(conn, 0);
    }
}

int
libpyfence_request_signal(struct pyfence_conn *conn, cJSON *req, int signo, uint64_t *ret_id,
                          cJSON **ret_reply, struct pyfence_error *err)
{
    uint64_t id;
    const char *op = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "op"));
    int r = libpyfence_send_request(conn, req, &id, err);
    if (r < 0)
        return r;
    if (ret_id)
        *ret_id = id;
    _cleanup_json_ cJSON *reply = NULL;
    r = libpyfence_wait_reply(conn, id, signo, NULL, NULL, &reply, err);
    if (r < 0)
        return r;
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "ok"))) {
        char what[64];
        snprintf(what, sizeof(what), "%s refused", op ? op : "request");
        return fail_from_error_obj(err, reply, what, op);
    }
    *ret_reply = TAKE_PTR(reply);
    return 0;
}

/* Sends req (adding its id) and waits for its reply; a failure reply becomes an error. */
static int
simple_request(struct pyfence_conn *conn, cJSON *req, cJSON **ret_reply, struct pyfence_error *err)
{
    return libpyfence_request_signal(conn, req, 0, NULL, ret_reply, err);
}

/* simple_request, with the reply handed back as exact JSON text (the caller frees it). */
static int
request_reply_text(struct pyfence_conn *conn, cJSON *req, char **ret_json,
                   struct pyfence_error *err)
{
    _cleanup_json_ cJSON *reply = NULL;
    int r = simple_request(conn, req, &reply, err);
    if (r < 0)
        return r;
    char *s = libpyfence_exact_json(reply);
    if (!s)
        return fail(err, PYFENCE_E_INTERNAL, "out of memory");
    *ret_json = s;
    return 0;
}

static void
copy_string_field(char *dst, size_t size, const cJSON *obj, const char *name)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, name));
    snprintf(dst, size, "%s", s ? s : "");
}

int
pyfence_hello(struct pyfence_conn *conn, const char *client_name,
              struct pyfence_server_info *ret_info, struct pyfence_error *err)
{
    if (ret_info) {
        int r = libpyfence_struct_check(ret_info->size, "pyfence_server_info", err);
        if (r < 0)
            return r;
    }
    if (client_name) {
        int r = libpyfence_check_text(client_name, "hello: client name", err);
        if (r < 0)
            return r;
    }
    _cleanup_json_ cJSON *req = cJSON_CreateObject();
    if (!req || !cJSON_AddStringToObject(req, "op", "hello") ||
        (client_name && !cJSON_AddStringToObject(req, "client", client_name)))
        return fail(err, PYFENCE_E_INTERNAL, "out of memory");
    _cleanup_json_ cJSON *reply = NULL;
    int r = simple_request(conn, req, &reply, err);
    if (r < 0)
        return r;
    const cJSON *proto = cJSON_GetObjectItemCaseSensitive(reply, "protocol");
    if (!cJSON_IsNumber(proto) || proto->valuedouble != PYFENCE_PROTOCOL_VERSION) {
        /* Nothing it sends later can be trusted to mean what we think. */
        mark_broken(conn, PYFENCE_E_PROTOCOL,
                    "pyfenced at '%s' speaks protocol %g; this libpyfence speaks %d", conn->path,
                    cJSON_IsNumber(proto) ? proto->valuedouble : 0.0, PYFENCE_PROTOCOL_VERSION);
        return fail(err, conn->broken_code, "%s", conn->broken_msg);
    }
    const cJSON *limits = cJSON_GetObjectItemCaseSensitive(reply, "limits");
    const cJSON *mfb = cJSON_GetObjectItemCaseSensitive(limits, "max_frame_bytes");
    if (cJSON_IsNumber(mfb) && mfb->valuedouble >= FRAME_HEADER_BYTES &&
        mfb->valuedouble <= CLIENT_MAX_REPLY_BYTES)
        conn->max_request_bytes = (uint32_t) mfb->valuedouble;
    if (ret_info) {
        struct pyfence_server_info info;
        pyfence_server_info_init(&info);
        copy_string_field(info.server, sizeof(info.server), reply, "server");
        copy_string_field(info.version, sizeof(info.version), reply, "version");
        copy_string_field(info.python, sizeof(info.python), reply, "python");
        info.protocol = proto->valueint;
        info.reply_json = libpyfence_exact_json(reply);
        if (!info.reply_json)
            return fail(err, PYFENCE_E_INTERNAL, "out of memory");
        libpyfence_server_info_set(ret_info, &info);
    }
    return 0;
}

int
pyfence_ping(struct pyfence_conn *conn, struct pyfence_error *err)
{
    _cleanup_json_ cJSON *req = cJSON_CreateObject();
    if (!req || !cJSON_AddStringToObject(req, "op", "ping"))
        return fail(err, PYFENCE_E_INTERNAL, "out of memory");
    _cleanup_json_ cJSON *reply = NULL;
    return simple_request(conn, req, &reply, err);
}

int
pyfence_stats(struct pyfence_conn *conn, char **ret_json, struct pyfence_error *err)
{
    _cleanup_json_ cJSON *req = cJSON_CreateObject();
    if (!req || !cJSON_AddStringToObject(req, "op", "stats"))
        return fail(err, PYFENCE_E_INTERNAL, "out of memory");
    return request_reply_text(conn, req, ret_json, err);
}

int
pyfence_cancel(struct pyfence_conn *conn, uint64_t id, bool *ret_cancelled,
               struct pyfence_error *err)
{
    _cleanup_json_ cJSON *req = cJSON_CreateObject();
    if (!req || !cJSON_AddStringToObject(req, "op", "cancel") ||
        !cJSON_AddNumberToObject(req, "target", (double) id))
        return fail(err, PYFENCE_E_INTERNAL, "out of memory");
    /* The target's own reply may come first: libpyfence_wait_reply keeps it for pyfence_wait(). */
    _cleanup_json_ cJSON *reply = NULL;
    int r = simple_request(conn, req, &reply, err);
    if (r < 0)
        return r;
    if (ret_cancelled)
        *ret_cancelled = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "cancelled"));
    return 0;
}

int
pyfence_request(struct pyfence_conn *conn, const char *request_json, char **ret_reply_json,
                struct pyfence_error *err)
{
    _cleanup_json_ cJSON *req = NULL;
    struct pf_error *pe = NULL;
    if (!request_json ||
        msg_parse(request_json, strlen(request_json), MSG_MAX_DEPTH, &req, &pe) < 0) {
        /* The caller's mistake, not the wire's: bad_request rather than msg_parse's bad_frame. */
        int r = fail(err, PYFENCE_E_BAD_REQUEST, "request not sent: %s",
                     !request_json   ? "no request"
                     : pe && pe->msg ? pe->msg
                                     : "out of memory");
        pf_error_free(pe);
        return r;
    }
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(req, "op")) ||
        cJSON_HasObjectItem(req, "id"))
        return fail(err, PYFENCE_E_BAD_REQUEST,
                    "request not sent: it needs an \"op\" string and no \"id\" (one is added)");
    return request_reply_text(conn, req, ret_reply_json, err);
}
