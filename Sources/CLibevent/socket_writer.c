#include "CLibevent.h"
#include <errno.h>
#include <stdlib.h>
#include <openssl/err.h>

// Writes a socket from an output of its own, in place of a bufferevent's write path: a plain
// socket stream (with `writev`) from the start, or once connected, and a socket-based TLS stream
// (with SSL_write) once its handshake is done (the counterpart of socket_reader.c).
//
// A socket bufferevent's output carries libevent's own callback, run on every add and drain
// (each reservation committed, each write's drain: some eight callback passes a forwarded
// request), and keeps its start frozen, to be lifted and put back around every write of ours.
// libevent's TLS path adds its write event whenever its output goes from empty to non-empty and
// deletes it once drained (an event_add and event_del per response), walks all sixteen slots of
// OpenSSL's error queue before every SSL_write, and hands the write callback to the loop as a
// deferred callback. Here the bytes wait in an evbuffer with no callback (libevent's output stays
// empty, so its callback never runs) and are written when the owner flushes: a response's head
// and body in one writev, or as one record, the write event added only while the socket does not
// take everything, with the write timeout on it.

/// The most one SSL_write takes: a few records; a larger chain is written in several calls.
#define CS_TLS_WRITE_MAX (16 * 1024)
/// The longest run of several chains put together for one SSL_write without evbuffer_pullup
/// (a writer's `coalesce` is at most this; a longer one is pulled up).
#define CS_TLS_GATHER_MAX 4096

// Where a short output of several chains (a response's head and its body) is put together for
// one SSL_write: SSL_write copies it into its record at once, so one buffer serves every writer
// on the thread. evbuffer_pullup made a chain of its own for it instead (a malloc and a free, and
// the chains it copied freed there rather than by the drain after the write), ~300 instructions
// a response more.
static __thread unsigned char cs_tls_gathered[CS_TLS_GATHER_MAX];

struct cs_socket_writer {
    SSL *ssl;                       // NULL: a plain socket
    struct event_base *base;
    int fd;
    struct evbuffer *output;
    struct event *wait;             // made at the first wait for the socket (or failure to tell)
    cs_socket_writer_cb callback;
    void *context;
    size_t coalesce;                // TLS: a shorter first chain is made this long, when there is more
    size_t low;                     // writable is told at or below this after a wait
    size_t retry;                   // TLS: length of the SSL_write that blocked, offered again
    struct timeval timeout;
    int has_timeout;
    short waiting_for;              // 0, EV_WRITE or EV_READ
    short failed;                   // BEV_EVENT_WRITING | EOF or ERROR, once a write failed
};

static void cs_socket_writer_ready(evutil_socket_t fd, short what, void *arg);

struct cs_socket_writer *cs_socket_writer_new(struct event_base *base, SSL *ssl, int fd, size_t coalesce,
                                              cs_socket_writer_cb callback, void *context) {
    struct cs_socket_writer *writer = calloc(1, sizeof *writer);
    if (!writer) return NULL;
    writer->output = evbuffer_new();
    if (!writer->output) {
        free(writer);
        return NULL;
    }
    writer->ssl = ssl;
    writer->base = base;
    writer->fd = fd;
    writer->coalesce = coalesce;
    writer->callback = callback;
    writer->context = context;
    return writer;
}

void cs_socket_writer_free(struct cs_socket_writer *writer) {
    if (!writer) return;
    if (writer->wait) event_free(writer->wait);
    if (writer->output) evbuffer_free(writer->output);
    free(writer);
}

struct evbuffer *cs_socket_writer_output(struct cs_socket_writer *writer) { return writer->output; }

void cs_socket_writer_set_low(struct cs_socket_writer *writer, size_t low) { writer->low = low; }

void cs_socket_writer_set_timeout(struct cs_socket_writer *writer, const struct timeval *timeout) {
    writer->has_timeout = timeout != NULL && (timeout->tv_sec > 0 || timeout->tv_usec > 0);
    if (writer->has_timeout) writer->timeout = *timeout;
    // A wait under way keeps counting from when it began, as libevent's pending event did.
}

// The event for a wait in `direction` (made once, on the first wait: most connections never
// fill their socket, and an idle one keeps no event), not pending. NULL without memory.
static struct event *cs_socket_writer_event(struct cs_socket_writer *writer, short direction) {
    if (!writer->wait) return writer->wait = event_new(writer->base, writer->fd, direction, cs_socket_writer_ready, writer);
    event_del(writer->wait);
    event_assign(writer->wait, writer->base, writer->fd, direction, cs_socket_writer_ready, writer);
    return writer->wait;
}

static void cs_socket_writer_fail(struct cs_socket_writer *writer, short failure);

// Waits for the socket in the direction SSL_write asked for, the write timeout counting from now.
static void cs_socket_writer_wait(struct cs_socket_writer *writer, short direction) {
    struct event *wait = cs_socket_writer_event(writer, direction);
    if (!wait) return cs_socket_writer_fail(writer, BEV_EVENT_ERROR);
    writer->waiting_for = direction;
    event_add(wait, writer->has_timeout ? &writer->timeout : NULL);
}

// Reports a failed write on the next loop turn (the owner may free the writer when it hears).
// Without memory for the event that tells it, the stream's other deadlines end it.
static void cs_socket_writer_fail(struct cs_socket_writer *writer, short failure) {
    writer->failed = BEV_EVENT_WRITING | failure;
    writer->waiting_for = 0;
    struct event *tell = cs_socket_writer_event(writer, EV_WRITE);
    if (tell) event_active(tell, EV_WRITE, 1);
}

// One writev of the `length` bytes queued (as many chains as libevent gathers); what the socket
// did not take waits for it to drain. 1 when everything went out.
static int cs_socket_writer_write_plain(struct cs_socket_writer *writer, size_t length) {
    int written = evbuffer_write(writer->output, writer->fd);
    if (written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) written = 0;
    if (written < 0) {
        cs_socket_writer_fail(writer, BEV_EVENT_ERROR);
        return 0;
    }
    if ((size_t)written == length) return 1;
    cs_socket_writer_wait(writer, EV_WRITE);
    return 0;
}

// SSL_write until the output is empty or the socket full. 1 when everything went out.
static int cs_socket_writer_write_tls(struct cs_socket_writer *writer, size_t length) {
    // The queue is empty after every SSL call that succeeded: one look before the first.
    if (ERR_peek_error() != 0) ERR_clear_error();
    while (length > 0) {
        size_t chunk = writer->retry;
        size_t first = (size_t)evbuffer_get_contiguous_space(writer->output);
        if (chunk == 0) {
            chunk = first;
            if (chunk < writer->coalesce && length > chunk) chunk = length < writer->coalesce ? length : writer->coalesce;
            if (chunk > CS_TLS_WRITE_MAX) chunk = CS_TLS_WRITE_MAX;
        }
        // No copy when the first chain holds `chunk` already (pullup only points at it); a short
        // run over several chains is copied out; a longer one made one chain.
        unsigned char *bytes;
        if (chunk > first && chunk <= CS_TLS_GATHER_MAX) {
            bytes = evbuffer_copyout(writer->output, cs_tls_gathered, chunk) == (ev_ssize_t)chunk ? cs_tls_gathered : NULL;
        } else {
            bytes = evbuffer_pullup(writer->output, (ev_ssize_t)chunk);
        }
        if (!bytes) {
            cs_socket_writer_fail(writer, BEV_EVENT_ERROR);
            return 0;
        }
        int written = SSL_write(writer->ssl, bytes, (int)chunk);
        if (written > 0) {
            // Without partial writes SSL_write reports all of `chunk` or nothing.
            evbuffer_drain(writer->output, (size_t)written);
            writer->retry = 0;
            length -= (size_t)written;
            continue;
        }
        switch (SSL_get_error(writer->ssl, written)) {
        case SSL_ERROR_WANT_WRITE:
            // The same bytes must be offered again (they stay first in the output, and are
            // copied out again if gathered; OpenSSL accepts them from another address: libevent
            // sets ACCEPT_MOVING_WRITE_BUFFER).
            writer->retry = chunk;
            cs_socket_writer_wait(writer, EV_WRITE);
            return 0;
        case SSL_ERROR_WANT_READ:
            // A TLS 1.2 peer renegotiating: the write goes on once the socket has its answer.
            writer->retry = chunk;
            cs_socket_writer_wait(writer, EV_READ);
            return 0;
        case SSL_ERROR_ZERO_RETURN:
            cs_socket_writer_fail(writer, BEV_EVENT_EOF);
            break;
        default:
            cs_socket_writer_fail(writer, BEV_EVENT_ERROR);
            break;
        }
        ERR_clear_error();
        return 0;
    }
    return 1;
}

// Writes what the output holds: 1 when everything went out (or there was nothing).
static int cs_socket_writer_write_length(struct cs_socket_writer *writer, size_t length) {
    return writer->ssl ? cs_socket_writer_write_tls(writer, length) : cs_socket_writer_write_plain(writer, length);
}

static int cs_socket_writer_write(struct cs_socket_writer *writer) {
    size_t length = evbuffer_get_length(writer->output);
    return length == 0 ? 1 : cs_socket_writer_write_length(writer, length);
}

int cs_socket_writer_flush(struct cs_socket_writer *writer) {
    // A wait under way writes when the socket is ready; a failure is being reported.
    if (writer->waiting_for || writer->failed) return 0;
    size_t length = evbuffer_get_length(writer->output);
    return length == 0 ? 0 : cs_socket_writer_write_length(writer, length);
}

static void cs_socket_writer_ready(evutil_socket_t fd, short what, void *arg) {
    struct cs_socket_writer *writer = arg;
    (void)fd;
    writer->waiting_for = 0;
    // The callback may free the writer: nothing follows it.
    if (writer->failed) return writer->callback(writer->failed, writer->context);
    if (what & EV_TIMEOUT) return writer->callback(BEV_EVENT_WRITING | BEV_EVENT_TIMEOUT, writer->context);
    size_t before = evbuffer_get_length(writer->output);
    cs_socket_writer_write(writer);
    if (writer->failed) {
        // Told now, not on another turn: this is the loop's call already.
        if (writer->wait) event_del(writer->wait);
        return writer->callback(writer->failed, writer->context);
    }
    // As libevent does: the owner may add more once the output is down to the low mark, even
    // while the socket still holds the rest back.
    size_t after = evbuffer_get_length(writer->output);
    if (after < before && after <= writer->low) writer->callback(EV_WRITE, writer->context);
}
