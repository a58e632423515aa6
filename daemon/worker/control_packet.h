/* One packet of the control channel between pyfenced and pyfence-zygote (CHANNEL.md): a
 * SOCK_SEQPACKET message with at most a few fds in SCM_RIGHTS. Shared by both ends so that
 * what one sends is exactly what the other takes apart. */
#ifndef DAEMON_WORKER_CONTROL_PACKET_H
#define DAEMON_WORKER_CONTROL_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The most fds a packet is read with: room to receive (and close) more than any packet carries
 * (one), so that a bad sender is noticed rather than having the kernel drop them silently. */
#define CONTROL_PACKET_MAX_FDS 8

/* Sends len bytes of data, with fd in SCM_RIGHTS when fd >= 0 (sendmsg's flags; retried on
 * EINTR). Returns 0, or -errno. */
int control_packet_send(int sock, const char *data, size_t len, int fd, int flags);

struct control_packet_fds {
    int fd[CONTROL_PACKET_MAX_FDS]; /* owned by the caller once received, close-on-exec */
    size_t n;
    bool truncated; /* the packet or its fds did not fit (MSG_TRUNC, MSG_CTRUNC) */
};

/* Receives one packet of at most len bytes into buf (recvmsg's flags, plus
 * MSG_CMSG_CLOEXEC), and the fds that came with it into *fds. Returns recvmsg's result: the
 * length, 0 at EOF (with fds->n == 0), or -1 with errno (then no fds). */
ssize_t control_packet_recv(int sock, char *buf, size_t len, int flags,
                            struct control_packet_fds *fds);

/* Closes every fd in fds and forgets them. */
void control_packet_close_fds(struct control_packet_fds *fds);

#endif
