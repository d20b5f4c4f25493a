// What the benchmark's follower pool needs of Linux sockets that the Glibc module does not give
// Swift: sys/epoll.h, and receive timestamps (SO_TIMESTAMPNS, whose control messages are read
// through macros Swift cannot import).
#ifndef CEPOLL_H
#define CEPOLL_H
#ifdef __linux__
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

/// Asks the kernel to note when data arrives on the socket `fd` (SO_TIMESTAMPNS); returns
/// setsockopt's result (0, or -1 with errno).
static inline int cepoll_note_arrivals(int fd) {
    int one = 1;
    return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
}

/// recv(fd, buffer, length, 0) that also sets `*arrival` to the CLOCK_MONOTONIC time (ns) at which
/// the last byte it read arrived at the socket (for TCP, the timestamp of the last segment read),
/// or 0 when the kernel gave none. The kernel stamps arrivals with CLOCK_REALTIME; the time is
/// moved to CLOCK_MONOTONIC by the clocks' difference read here.
static inline ssize_t cepoll_recv_noting_arrival(int fd, void *buffer, size_t length, int64_t *arrival) {
    union {
        char bytes[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } control;
    struct iovec part = { buffer, length };
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = control.bytes;
    message.msg_controllen = sizeof control.bytes;
    *arrival = 0;
    ssize_t n = recvmsg(fd, &message, 0);
    if (n <= 0) return n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&message); c != NULL; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
        struct timespec stamp, real, monotonic;
        memcpy(&stamp, CMSG_DATA(c), sizeof stamp);
        if (stamp.tv_sec == 0 && stamp.tv_nsec == 0) continue;
        clock_gettime(CLOCK_REALTIME, &real);
        clock_gettime(CLOCK_MONOTONIC, &monotonic);
        int64_t at = (int64_t)stamp.tv_sec * 1000000000 + stamp.tv_nsec;
        *arrival = at - ((int64_t)real.tv_sec * 1000000000 + real.tv_nsec)
            + ((int64_t)monotonic.tv_sec * 1000000000 + monotonic.tv_nsec);
    }
    return n;
}
#endif
#endif
