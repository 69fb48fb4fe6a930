#include "CLibevent.h"
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <openssl/err.h>

// Reads a plain socket into a bufferevent's input without libevent's read path: evbuffer_read
// asks the kernel how much is queued (ioctl FIONREAD) before every read, one system call per
// read for a number recv already gives. The bufferevent keeps writing, connecting and its
// event callback; its EV_READ stays disabled and this reader stands in for it, with the same
// contract: a read timeout restarted by every read, reading paused while the input is at the
// high watermark and resumed when it drains below it, reading stopped on EOF, error or timeout.
//
// The read timeout is a stored expiry, not a timeout on the read event: libevent would move a
// persistent event's timeout in its timer heap on every read, and every enable, watermark or
// timeout change re-added the event, about seven heap operations per forwarded request. Here
// a read only stores the new expiry; a separate timer, armed once, looks at it when it fires
// and arms itself again for what is left when reads pushed the expiry back. It is re-armed
// early only when an expiry comes before the time it is armed for.
//
// A TLS reader (`cs_socket_reader_new_tls`) takes over a socket-based TLS bufferevent once its
// handshake is done, with the same contract, calling SSL_read where the plain one calls recv.
// libevent's TLS read path re-adds its read event whenever the input changes below the high
// watermark (some seven times per forwarded request) and left bytes the SSL held undelivered
// (tls_pending.c); here the event is added once, and bytes the SSL holds are read without
// waiting for the socket: in the same event, or (reading paused) as soon as it resumes.

/// The most one read takes: what libevent 2.1 reads at most per event (EVBUFFER_MAX_READ).
#define CS_READ_MAX 4096
/// The most one TLS read event takes: one 16 KiB chain (a record, less the chain's header).
#define CS_TLS_READ_MAX (16 * 1024 - 64)
/// A timer that fires this close to the expiry (libevent waits in whole milliseconds) expires.
#define CS_TIMER_SLACK_US 1000

struct cs_socket_reader {
    struct event_base *base;
    struct event *event;            // on `fd`, once it is known
    struct event *timer;            // the read timeout's, once `event` exists
    struct evbuffer *input;
    struct evbuffer_cb_entry *drain_watch;  // only while `suspended`
    SSL *ssl;                       // a TLS reader's; NULL for a plain socket
    struct event *write_wait;       // a TLS reader's, while SSL_read waits to write (rare)
    cs_socket_reader_cb callback;
    void *context;
    int fd;
    int enabled;                    // the owner wants reading
    int suspended;                  // the input is at the high watermark
    int watching;                   // `event` is added
    size_t high;                    // 0: no limit
    int64_t timeout_us;             // 0: no read timeout
    int64_t expiry_us;              // when reading times out (monotonic); 0: not counting
    int64_t timer_at_us;            // what `timer` is armed for; 0: not armed
};

// The time a read event began, for the timeouts restarted while it is handled (a request
// restarts several, on both of its connections); libevent too counts an event_add from the
// time it cached for the loop iteration. 0 outside a read event: the clock is read.
static __thread int64_t cs_read_event_began_us;

static int64_t cs_clock_us(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

static int64_t cs_now_us(void) {
    return cs_read_event_began_us ? cs_read_event_began_us : cs_clock_us();
}

static void cs_reader_arm_timer(struct cs_socket_reader *reader, int64_t now) {
    int64_t wait = reader->expiry_us - now;
    if (wait < 0) wait = 0;
    struct timeval time = { .tv_sec = (time_t)(wait / 1000000), .tv_usec = (suseconds_t)(wait % 1000000) };
    event_add(reader->timer, &time);
    reader->timer_at_us = reader->expiry_us;
}

// The timeout counts from now; the timer moves only when it would fire too late.
static void cs_reader_restart_timeout(struct cs_socket_reader *reader) {
    if (reader->timeout_us == 0) {
        reader->expiry_us = 0;
        return;
    }
    int64_t now = cs_now_us();
    reader->expiry_us = now + reader->timeout_us;
    if (reader->timer_at_us == 0 || reader->timer_at_us > reader->expiry_us) cs_reader_arm_timer(reader, now);
}

// Watches the socket while reading is wanted and not paused, with the timeout counting from
// now (as libevent's event_add restarts it). Stopping leaves the timer to find nothing to do.
static void cs_reader_schedule(struct cs_socket_reader *reader) {
    if (!reader->event) return;
    int wanted = reader->enabled && !reader->suspended;
    int resumed = wanted && !reader->watching;
    if (resumed) event_add(reader->event, NULL);
    if (!wanted && reader->watching) event_del(reader->event);
    reader->watching = wanted;
    // Bytes already inside the SSL make the socket no readier: read them on the next turn. Asked
    // only when reading resumes: while it goes on, a read event that leaves whole records behind
    // comes back for them itself (a request enables reading and sets its limit some five times,
    // and each look cost ~50 instructions, or a read event for nothing when part of a record
    // was held).
    if (resumed && reader->ssl && SSL_has_pending(reader->ssl)) event_active(reader->event, EV_READ, 1);
    if (wanted) {
        cs_reader_restart_timeout(reader);
    } else {
        reader->expiry_us = 0;
    }
}

static int cs_reader_at_high(const struct cs_socket_reader *reader) {
    return reader->high > 0 && evbuffer_get_length(reader->input) >= reader->high;
}

static void cs_reader_drained(struct evbuffer *buffer, const struct evbuffer_cb_info *info, void *arg);

// Pauses or resumes reading at the high watermark. The input is watched for drains only while
// reading is paused: an evbuffer with no callback skips libevent's callback pass on every add
// and drain (four per forwarded request on each side). Without memory for the watch, reading
// stays paused: the input stays bounded and the owner's deadlines end the stall.
static void cs_reader_set_suspended(struct cs_socket_reader *reader, int suspended) {
    reader->suspended = suspended;
    if (suspended && !reader->drain_watch) {
        reader->drain_watch = evbuffer_add_cb(reader->input, cs_reader_drained, reader);
    } else if (!suspended && reader->drain_watch) {
        // Safe from inside the callback itself: libevent takes the next entry before calling one.
        evbuffer_remove_cb_entry(reader->input, reader->drain_watch);
        reader->drain_watch = NULL;
    }
}

// Resumes reading once a consumer drained the input below the high watermark.
static void cs_reader_drained(struct evbuffer *buffer, const struct evbuffer_cb_info *info, void *arg) {
    struct cs_socket_reader *reader = arg;
    (void)buffer;
    if (reader->suspended && info->n_deleted > 0 && !cs_reader_at_high(reader)) {
        cs_reader_set_suspended(reader, 0);
        cs_reader_schedule(reader);
    }
}

// One read into space reserved at the input's end: bytes read, 0 at EOF, -1 with errno.
// Through the socket calls, not readv: readv takes the file layer's path (iovec import,
// access notification) to the socket, ~250 ns more a call on this kernel than recv for the
// same bytes, two reads a forwarded request (`bench/syscall_cost.c`). One contiguous
// reservation: libevent's split over two chains (the last one's tail and a new one) cost
// ~75 instructions more a read to set up, and a read then needed recvmsg.
static ssize_t cs_reader_read(struct cs_socket_reader *reader, int fd, size_t room) {
    struct evbuffer_iovec space;
    if (evbuffer_reserve_space(reader->input, (ev_ssize_t)room, &space, 1) < 1) {
        errno = ENOMEM;
        return -1;
    }
    ssize_t n = recv(fd, space.iov_base, space.iov_len < room ? space.iov_len : room, 0);
    if (n <= 0) {
        int saved = errno;
        evbuffer_commit_space(reader->input, &space, 0);
        errno = saved;
        return n;
    }
    space.iov_len = (size_t)n;
    evbuffer_commit_space(reader->input, &space, 1);
    return n;
}

static void cs_reader_timer_fire(evutil_socket_t fd, short what, void *arg) {
    struct cs_socket_reader *reader = arg;
    (void)fd;
    (void)what;
    reader->timer_at_us = 0;
    if (reader->expiry_us == 0) return;
    int64_t now = cs_now_us();
    if (reader->expiry_us - now > CS_TIMER_SLACK_US) {
        cs_reader_arm_timer(reader, now);
        return;
    }
    reader->enabled = 0;
    cs_reader_schedule(reader);
    reader->callback(BEV_EVENT_READING | BEV_EVENT_TIMEOUT, reader->context);
}

// How much the next read may add, at most `most`, within the high watermark; 0 once reading
// paused, the input being at the watermark already. `*to_high` tells whether the room is what
// the watermark leaves, so a read that fills it brings the input to the watermark (known
// without measuring the input again).
static size_t cs_reader_room(struct cs_socket_reader *reader, size_t most, int *to_high) {
    *to_high = 0;
    if (reader->high == 0) return most;
    size_t length = evbuffer_get_length(reader->input);
    if (length >= reader->high) {
        cs_reader_set_suspended(reader, 1);
        cs_reader_schedule(reader);
        return 0;
    }
    if (reader->high - length > most) return most;
    *to_high = 1;
    return reader->high - length;
}

static void cs_reader_read_event(struct cs_socket_reader *reader, evutil_socket_t fd) {
    int to_high;
    size_t room = cs_reader_room(reader, CS_READ_MAX, &to_high);
    if (room == 0) return;
    ssize_t n = cs_reader_read(reader, fd, room);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {
        int saved = errno;
        reader->enabled = 0;
        cs_reader_schedule(reader);
        errno = saved;
        reader->callback(BEV_EVENT_READING | (n == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR), reader->context);
        return;
    }
    if (to_high && (size_t)n == room) {
        cs_reader_set_suspended(reader, 1);
        cs_reader_schedule(reader);
    } else if (reader->timeout_us != 0) {
        // Every read restarts the timeout: a store, the timer looks at it when it fires.
        reader->expiry_us = cs_now_us() + reader->timeout_us;
    }
    // The owner may free this reader from inside the callback: nothing follows it.
    reader->callback(EV_READ, reader->context);
}

// How an SSL_read that returned `result` ended the stream, as libevent reports it for a TLS
// bufferevent that allows a dirty shutdown (as ours all do): a close_notify, or the socket's end
// with no error queued, is an EOF; anything else an error.
static short cs_tls_read_ending(SSL *ssl, int error, int result) {
    switch (error) {
    case SSL_ERROR_ZERO_RETURN:
        return BEV_EVENT_EOF;
    case SSL_ERROR_SYSCALL:
        return (result == 0 || result == -1) && ERR_peek_error() == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR;
    default:
        return BEV_EVENT_ERROR;
    }
}

static void cs_reader_write_ready(evutil_socket_t fd, short what, void *arg);

// Reads records into the input until the SSL holds no more decrypted bytes, within the high
// watermark and CS_TLS_READ_MAX. Space is reserved only for a read that can return bytes, or
// given back at once, so an idle connection holds no input chain. The owner hears the bytes,
// or how reading ended (after the bytes, on the next turn: the callback may free this reader).
static void cs_reader_tls_read_event(struct cs_socket_reader *reader) {
    int to_high;
    size_t room = cs_reader_room(reader, CS_TLS_READ_MAX, &to_high);
    if (room == 0) return;
    size_t total = 0;
    short ending = 0;
    int pending = -1;               // whether the SSL holds more bytes; -1: not asked since the last call
    // Empty after every SSL call that succeeded: a look costs a fraction of a clear, which
    // walks all sixteen slots of the thread's queue.
    if (ERR_peek_error() != 0) ERR_clear_error();
    while (room > 0) {
        struct evbuffer_iovec space;
        if (evbuffer_reserve_space(reader->input, (ev_ssize_t)room, &space, 1) < 1) {
            ending = BEV_EVENT_ERROR;
            break;
        }
        size_t want = space.iov_len < room ? space.iov_len : room;
        int n = SSL_read(reader->ssl, space.iov_base, (int)want);
        if (n > 0) {
            space.iov_len = (size_t)n;
            evbuffer_commit_space(reader->input, &space, 1);
            total += (size_t)n;
            room -= (size_t)n;
            pending = SSL_has_pending(reader->ssl);
            if (!pending) break;
            continue;
        }
        pending = -1;
        evbuffer_commit_space(reader->input, &space, 0);
        int error = SSL_get_error(reader->ssl, n);
        if (error == SSL_ERROR_WANT_WRITE) {
            // A post-handshake message to answer and a full socket: read again once it drains.
            if (!reader->write_wait)
                reader->write_wait = event_new(reader->base, reader->fd, EV_WRITE, cs_reader_write_ready, reader);
            if (reader->write_wait) event_add(reader->write_wait, NULL);
            else ending = BEV_EVENT_ERROR;
        } else if (error != SSL_ERROR_WANT_READ) {
            ending = cs_tls_read_ending(reader->ssl, error, n);
        }
        break;
    }
    if (ending) ERR_clear_error();
    // The space the last SSL_read reserved is given back when the input holds nothing else
    // (draining a whole non-empty buffer frees every chain).
    if (evbuffer_get_length(reader->input) == 0) {
        static const char one = 0;
        evbuffer_add(reader->input, &one, 1);
        evbuffer_drain(reader->input, 1);
    }
    if (total == 0 && ending) {
        reader->enabled = 0;
        cs_reader_schedule(reader);
        reader->callback(BEV_EVENT_READING | ending, reader->context);
        return;
    }
    if (pending < 0) pending = SSL_has_pending(reader->ssl);
    // Part of a record, which decrypts only once whole: the owner may want to know it began.
    if (total == 0 && pending) reader->callback(CS_READER_CIPHERTEXT, reader->context);
    if (total == 0) return;
    if (cs_reader_at_high(reader)) {
        cs_reader_set_suspended(reader, 1);
        cs_reader_schedule(reader);
    } else {
        if (reader->timeout_us != 0) reader->expiry_us = cs_now_us() + reader->timeout_us;
        // Bytes left in the SSL (the read took its most), or an ending to report: next turn.
        if (ending || pending) event_active(reader->event, EV_READ, 1);
    }
    reader->callback(EV_READ, reader->context);
}

static void cs_reader_fire(evutil_socket_t fd, short what, void *arg) {
    (void)what;
    int64_t outer = cs_read_event_began_us;
    cs_read_event_began_us = cs_clock_us();
    struct cs_socket_reader *reader = arg;
    if (reader->ssl) {
        cs_reader_tls_read_event(reader);
    } else {
        cs_reader_read_event(reader, fd);
    }
    cs_read_event_began_us = outer;
}

static void cs_reader_write_ready(evutil_socket_t fd, short what, void *arg) {
    struct cs_socket_reader *reader = arg;
    (void)what;
    if (reader->enabled && !reader->suspended) cs_reader_fire(fd, EV_READ, reader);
}

struct cs_socket_reader *cs_socket_reader_new(struct bufferevent *bev, cs_socket_reader_cb callback, void *context) {
    struct cs_socket_reader *reader = calloc(1, sizeof *reader);
    if (!reader) return NULL;
    reader->base = bufferevent_get_base(bev);
    reader->input = bufferevent_get_input(bev);
    // A socket bufferevent keeps its input's end frozen (only its own reads add, lifting it
    // around each): the reader is the input's only writer, so it lifts it once, not per read,
    // and puts it back when it lets go (a TLS bufferevent's input is not frozen).
    evbuffer_unfreeze(reader->input, 0);
    reader->callback = callback;
    reader->context = context;
    reader->fd = -1;
    cs_socket_reader_attach(reader, bufferevent_getfd(bev));
    return reader;
}

struct cs_socket_reader *cs_socket_reader_new_tls(struct bufferevent *bev, SSL *ssl, cs_socket_reader_cb callback, void *context) {
    struct cs_socket_reader *reader = cs_socket_reader_new(bev, callback, context);
    if (reader) reader->ssl = ssl;
    return reader;
}

int cs_socket_reader_attach(struct cs_socket_reader *reader, int fd) {
    if (fd < 0 || reader->event) return reader->event ? 0 : -1;
    reader->event = event_new(reader->base, fd, EV_READ | EV_PERSIST, cs_reader_fire, reader);
    if (!reader->event) return -1;
    reader->timer = evtimer_new(reader->base, cs_reader_timer_fire, reader);
    if (!reader->timer) {
        event_free(reader->event);
        reader->event = NULL;
        return -1;
    }
    reader->fd = fd;
    cs_reader_set_suspended(reader, cs_reader_at_high(reader));
    cs_reader_schedule(reader);
    return 0;
}

void cs_socket_reader_free(struct cs_socket_reader *reader) {
    if (!reader) return;
    if (reader->event) event_free(reader->event);
    if (reader->timer) event_free(reader->timer);
    if (reader->write_wait) event_free(reader->write_wait);
    if (reader->drain_watch) evbuffer_remove_cb_entry(reader->input, reader->drain_watch);
    if (!reader->ssl) evbuffer_freeze(reader->input, 0);
    free(reader);
}

void cs_socket_reader_enable(struct cs_socket_reader *reader, int enabled) {
    reader->enabled = enabled;
    if (enabled) cs_reader_set_suspended(reader, cs_reader_at_high(reader));
    cs_reader_schedule(reader);
}

void cs_socket_reader_set_timeout(struct cs_socket_reader *reader, const struct timeval *timeout) {
    int64_t microseconds = timeout ? (int64_t)timeout->tv_sec * 1000000 + timeout->tv_usec : 0;
    // A zero timeval is libevent's "no timeout" too.
    reader->timeout_us = microseconds > 0 ? microseconds : 0;
    cs_reader_schedule(reader);
}

void cs_socket_reader_restart_timeout(struct cs_socket_reader *reader) {
    if (reader->watching) cs_reader_restart_timeout(reader);
}

void cs_socket_reader_set_high(struct cs_socket_reader *reader, size_t high) {
    reader->high = high;
    cs_reader_set_suspended(reader, reader->enabled && cs_reader_at_high(reader));
    cs_reader_schedule(reader);
}
