#include "CLibevent.h"

int cs_set_reuseport(evutil_socket_t fd) {
    int one = 1;
    return setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
}
int cs_errno(void) { return errno; }

// Worker threads leave signal handling to the main thread's event loop.
int cs_block_signals_in_thread(void) {
    sigset_t set;
    sigfillset(&set);
    return pthread_sigmask(SIG_BLOCK, &set, NULL);
}
