#include "CLibevent.h"
#include <fcntl.h>

// A second descriptor for the same socket, closed on exec (fcntl is variadic: not callable from Swift).
int cs_dup_cloexec(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }

int cs_errno(void) { return errno; }

// Worker threads leave signal handling to the main thread's event loop.
int cs_block_signals_in_thread(void) {
    sigset_t set;
    sigfillset(&set);
    return pthread_sigmask(SIG_BLOCK, &set, NULL);
}
