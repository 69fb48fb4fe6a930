// splice(2) and pipe2(2) are GNU extensions: this file asks for them before any header.
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include "CLibevent.h"

long cs_splice_move(int from, int to, unsigned long length) {
    return (long)splice(from, NULL, to, NULL, (size_t)length, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
}

int cs_pipe_nonblocking(int fds[2], int capacity) {
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return -1;
    // A larger pipe moves more per call; the kernel may refuse (pipe-max-size), then 64 KiB it is.
    (void)fcntl(fds[1], F_SETPIPE_SZ, capacity);
    return 0;
}
