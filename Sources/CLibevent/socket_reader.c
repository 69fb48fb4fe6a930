#include "CLibevent.h"
#include <stdlib.h>
#include <sys/uio.h>

// Reads a plain socket into a bufferevent's input without libevent's read path: evbuffer_read
// asks the kernel how much is queued (ioctl FIONREAD) before every read, one system call per
// read for a number recv already gives. The bufferevent keeps writing, connecting and its
// event callback; its EV_READ stays disabled and this reader stands in for it, with the same
// contract: a read timeout restarted by every read, reading paused while the input is at the
// high watermark and resumed when it drains below it, reading stopped on EOF, error or timeout.

/// The most one read takes: what libevent 2.1 reads at most per event (EVBUFFER_MAX_READ).
#define CS_READ_MAX 4096

struct cs_socket_reader {
    struct event_base *base;
    struct event *event;            // on `fd`, once it is known
    struct evbuffer *input;
    struct evbuffer_cb_entry *drain_watch;
    cs_socket_reader_cb callback;
    void *context;
    int fd;
    int enabled;                    // the owner wants reading
    int suspended;                  // the input is at the high watermark
    size_t high;                    // 0: no limit
    struct timeval timeout;
    int has_timeout;
};

static void cs_reader_schedule(struct cs_socket_reader *reader) {
    if (!reader->event) return;
    if (reader->enabled && !reader->suspended) {
        event_add(reader->event, reader->has_timeout ? &reader->timeout : NULL);
    } else {
        event_del(reader->event);
    }
}

static int cs_reader_at_high(const struct cs_socket_reader *reader) {
    return reader->high > 0 && evbuffer_get_length(reader->input) >= reader->high;
}

// Resumes reading once a consumer drained the input below the high watermark.
static void cs_reader_drained(struct evbuffer *buffer, const struct evbuffer_cb_info *info, void *arg) {
    struct cs_socket_reader *reader = arg;
    (void)buffer;
    if (reader->suspended && info->n_deleted > 0 && !cs_reader_at_high(reader)) {
        reader->suspended = 0;
        cs_reader_schedule(reader);
    }
}

// One readv into space reserved at the input's end: bytes read, 0 at EOF, -1 with errno.
static ssize_t cs_reader_read(struct cs_socket_reader *reader, int fd, size_t room) {
    struct evbuffer_iovec space[2];
    int chunks = evbuffer_reserve_space(reader->input, (ev_ssize_t)room, space, 2);
    if (chunks <= 0) {
        errno = ENOMEM;
        return -1;
    }
    struct iovec vectors[2];
    size_t reserved = 0;
    for (int i = 0; i < chunks; i++) {
        size_t length = space[i].iov_len;
        if (reserved + length > room) length = room - reserved;
        vectors[i].iov_base = space[i].iov_base;
        vectors[i].iov_len = length;
        reserved += length;
    }
    ssize_t n = readv(fd, vectors, chunks);
    if (n <= 0) {
        int saved = errno;
        evbuffer_commit_space(reader->input, space, 0);
        errno = saved;
        return n;
    }
    size_t left = (size_t)n;
    for (int i = 0; i < chunks; i++) {
        size_t used = left < vectors[i].iov_len ? left : vectors[i].iov_len;
        space[i].iov_len = used;
        left -= used;
    }
    evbuffer_commit_space(reader->input, space, chunks);
    return n;
}

static void cs_reader_fire(evutil_socket_t fd, short what, void *arg) {
    struct cs_socket_reader *reader = arg;
    if (what & EV_TIMEOUT) {
        reader->enabled = 0;
        cs_reader_schedule(reader);
        reader->callback(BEV_EVENT_READING | BEV_EVENT_TIMEOUT, reader->context);
        return;
    }
    size_t room = CS_READ_MAX;
    if (reader->high > 0) {
        size_t length = evbuffer_get_length(reader->input);
        if (length >= reader->high) {
            reader->suspended = 1;
            cs_reader_schedule(reader);
            return;
        }
        if (reader->high - length < room) room = reader->high - length;
    }
    // A socket bufferevent keeps its input's end frozen (only its own read adds), as libevent
    // does around its own reads.
    evbuffer_unfreeze(reader->input, 0);
    ssize_t n = cs_reader_read(reader, fd, room);
    int read_errno = errno;
    evbuffer_freeze(reader->input, 0);
    errno = read_errno;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {
        int saved = errno;
        reader->enabled = 0;
        cs_reader_schedule(reader);
        errno = saved;
        reader->callback(BEV_EVENT_READING | (n == 0 ? BEV_EVENT_EOF : BEV_EVENT_ERROR), reader->context);
        return;
    }
    if (cs_reader_at_high(reader)) {
        reader->suspended = 1;
        cs_reader_schedule(reader);
    }
    // The owner may free this reader from inside the callback: nothing follows it.
    reader->callback(EV_READ, reader->context);
}

struct cs_socket_reader *cs_socket_reader_new(struct bufferevent *bev, cs_socket_reader_cb callback, void *context) {
    struct cs_socket_reader *reader = calloc(1, sizeof *reader);
    if (!reader) return NULL;
    reader->base = bufferevent_get_base(bev);
    reader->input = bufferevent_get_input(bev);
    reader->callback = callback;
    reader->context = context;
    reader->fd = -1;
    reader->drain_watch = evbuffer_add_cb(reader->input, cs_reader_drained, reader);
    if (!reader->drain_watch) {
        free(reader);
        return NULL;
    }
    cs_socket_reader_attach(reader, bufferevent_getfd(bev));
    return reader;
}

int cs_socket_reader_attach(struct cs_socket_reader *reader, int fd) {
    if (fd < 0 || reader->event) return reader->event ? 0 : -1;
    reader->event = event_new(reader->base, fd, EV_READ | EV_PERSIST, cs_reader_fire, reader);
    if (!reader->event) return -1;
    reader->fd = fd;
    reader->suspended = cs_reader_at_high(reader);
    cs_reader_schedule(reader);
    return 0;
}

void cs_socket_reader_free(struct cs_socket_reader *reader) {
    if (!reader) return;
    if (reader->event) event_free(reader->event);
    evbuffer_remove_cb_entry(reader->input, reader->drain_watch);
    free(reader);
}

void cs_socket_reader_enable(struct cs_socket_reader *reader, int enabled) {
    reader->enabled = enabled;
    if (enabled) reader->suspended = cs_reader_at_high(reader);
    cs_reader_schedule(reader);
}

void cs_socket_reader_set_timeout(struct cs_socket_reader *reader, const struct timeval *timeout) {
    reader->has_timeout = timeout != NULL;
    if (timeout) reader->timeout = *timeout;
    cs_reader_schedule(reader);
}

void cs_socket_reader_set_high(struct cs_socket_reader *reader, size_t high) {
    reader->high = high;
    reader->suspended = reader->enabled && cs_reader_at_high(reader);
    cs_reader_schedule(reader);
}
