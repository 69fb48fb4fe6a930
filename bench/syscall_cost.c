// What one socket system call costs by the call that makes it, on this kernel: the same bytes
// read with readv, read and recv, and written with writev, sendmsg, write and send, on one
// loopback TCP connection, the calls of each kind interleaved so that the machine's drift falls
// on all alike. The proxy's per-request kernel time is mostly these calls. On the 2-core VM of
// 2026-11-28 (6.18 kernel): readv ~1,180 ns, read ~1,020, recv ~910, so the plain reader reads
// with recv (nginx does too); writev ~2,070, sendmsg ~2,180 for a head and body as two vectors,
// so plain writes stay evbuffer_write's writev.
//
//   cc -O2 -o /tmp/syscall_cost bench/syscall_cost.c && taskset -c 1 /tmp/syscall_cost [ROUNDS]
//
// Prints nanoseconds per call of each kind (reads of 64 bytes from a filled receive queue, so
// no TCP work is timed; writes of a 200-byte head and a 1 KiB body, as two iovecs or one
// buffer, each onto a connection whose peer has read everything, the draining not timed).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void connected_pair(int *client, int *server) {
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t length = sizeof address;
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 1) != 0 ||
        getsockname(listener, (struct sockaddr *)&address, &length) != 0) {
        perror("listen");
        exit(1);
    }
    *client = socket(AF_INET, SOCK_STREAM, 0);
    if (*client < 0 || connect(*client, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("connect");
        exit(1);
    }
    *server = accept(listener, NULL, NULL);
    close(listener);
}

enum { READ_KINDS = 3, WRITE_KINDS = 4, READ_SIZE = 64 };
static const char *read_names[READ_KINDS] = { "readv", "read", "recv" };
static const char *write_names[WRITE_KINDS] = { "writev", "sendmsg", "write", "send" };

static ssize_t read_as(int kind, int fd, char *buffer) {
    struct iovec vector = { buffer, READ_SIZE };
    switch (kind) {
    case 0: return readv(fd, &vector, 1);
    case 1: return read(fd, buffer, READ_SIZE);
    default: return recv(fd, buffer, READ_SIZE, 0);
    }
}

// writev and sendmsg take the head and the body as two vectors; write and send (what a TLS
// record goes out with) one buffer of the same length.
static ssize_t write_as(int kind, int fd, struct iovec *vectors, const char *joined) {
    struct msghdr message = { .msg_iov = vectors, .msg_iovlen = 2 };
    size_t length = vectors[0].iov_len + vectors[1].iov_len;
    switch (kind) {
    case 0: return writev(fd, vectors, 2);
    case 1: return sendmsg(fd, &message, 0);
    case 2: return write(fd, joined, length);
    default: return send(fd, joined, length, 0);
    }
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 300;
    int client, server;
    connected_pair(&client, &server);
    static char fill[65536], head[200], body[1024], joined[sizeof head + sizeof body], drain[1 << 20], buffer[READ_SIZE];
    memset(fill, 'x', sizeof fill);
    memset(head, 'h', sizeof head);
    memset(body, 'b', sizeof body);
    double read_time[READ_KINDS] = {0}, write_time[WRITE_KINDS] = {0};
    long reads[READ_KINDS] = {0}, writes[WRITE_KINDS] = {0};
    memset(joined, 'j', sizeof joined);
    for (int round = 0; round < rounds; round++) {
        // Reads: fill the receive queue, then empty it in 64-byte reads, the kinds in turn.
        if (write(client, fill, sizeof fill) != (ssize_t)sizeof fill) { perror("write"); return 1; }
        for (size_t got = 0; got < sizeof fill;) {
            int kind = (int)(reads[0] + reads[1] + reads[2]) % READ_KINDS;
            double start = now_ns();
            ssize_t n = read_as(kind, server, buffer);
            read_time[kind] += now_ns() - start;
            if (n <= 0) { perror("read"); return 1; }
            reads[kind]++;
            got += (size_t)n;
        }
        // Writes: a head and a body, the kinds in turn, each onto a connection whose peer has
        // read everything (as a proxy's answer goes), the draining not timed.
        for (int i = 0; i < 64; i++) {
            struct iovec vectors[2] = { { head, sizeof head }, { body, sizeof body } };
            int kind = i % WRITE_KINDS;
            double start = now_ns();
            ssize_t n = write_as(kind, client, vectors, joined);
            write_time[kind] += now_ns() - start;
            if (n <= 0) { perror("writev"); return 1; }
            writes[kind]++;
            while (recv(server, drain, sizeof drain, MSG_DONTWAIT) > 0) {}
        }
    }
    for (int kind = 0; kind < READ_KINDS; kind++) printf("%-8s %7.0f ns/call\n", read_names[kind], read_time[kind] / (double)reads[kind]);
    for (int kind = 0; kind < WRITE_KINDS; kind++) printf("%-8s %7.0f ns/call\n", write_names[kind], write_time[kind] / (double)writes[kind]);
    return 0;
}
