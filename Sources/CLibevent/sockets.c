#include "CLibevent.h"
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/uio.h>

// A second descriptor for the same socket, closed on exec (fcntl is variadic: not callable from Swift).
int cs_dup_cloexec(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }

int cs_errno(void) { return errno; }

// Worker threads leave signal handling to the main thread's event loop.
int cs_block_signals_in_thread(void) {
    sigset_t set;
    sigfillset(&set);
    return pthread_sigmask(SIG_BLOCK, &set, NULL);
}

// Writes what `buffer` holds to socket `fd` in one sendmsg and drains what went: bytes written,
// or -1 with errno. evbuffer_write does the same with writev, which takes the file layer's path
// to the socket: ~500 ns more a call on this kernel (`bench/syscall_cost.c`), two writes a
// forwarded request. A buffer of more chains than one call takes is left with the rest.
ev_ssize_t cs_evbuffer_send(struct evbuffer *buffer, int fd) {
    enum { MOST_VECTORS = 64 };
    struct evbuffer_iovec chains[MOST_VECTORS];
    int count = evbuffer_peek(buffer, -1, NULL, chains, MOST_VECTORS);
    if (count <= 0) return 0;
    if (count > MOST_VECTORS) count = MOST_VECTORS;
    struct iovec vectors[MOST_VECTORS];
    for (int i = 0; i < count; i++) {
        vectors[i].iov_base = chains[i].iov_base;
        vectors[i].iov_len = chains[i].iov_len;
    }
    struct msghdr message = { .msg_iov = vectors, .msg_iovlen = (size_t)count };
    ssize_t written = sendmsg(fd, &message, MSG_NOSIGNAL);
    if (written > 0) evbuffer_drain(buffer, (size_t)written);
    return written;
}
