#include "control_packet.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int
control_packet_send(int sock, const char *data, size_t len, int fd, int flags)
{
    struct iovec iov = {.iov_base = (void *) data, .iov_len = len};
    union {
        char raw[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } cbuf;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&cbuf, 0, sizeof(cbuf));
        mh.msg_control = cbuf.raw;
        mh.msg_controllen = sizeof(cbuf.raw);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ssize_t n;
    do
        n = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n < 0 ? -errno : 0;
}

ssize_t
control_packet_recv(int sock, char *buf, size_t len, int flags, struct control_packet_fds *fds)
{
    union {
        char raw[CMSG_SPACE(sizeof(int) * CONTROL_PACKET_MAX_FDS)];
        struct cmsghdr align;
    } cbuf;
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = cbuf.raw,
                        .msg_controllen = sizeof(cbuf.raw)};
    fds->n = 0;
    fds->truncated = false;
    ssize_t n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
    if (n < 0)
        return n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k && fds->n < CONTROL_PACKET_MAX_FDS; i++)
            memcpy(&fds->fd[fds->n++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
    }
    fds->truncated = (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
    return n;
}

void
control_packet_close_fds(struct control_packet_fds *fds)
{
    for (size_t i = 0; i < fds->n; i++)
        close(fds->fd[i]);
    fds->n = 0;
}
