#include "CLibevent.h"
#include <event2/bufferevent_struct.h>

// A socket-based TLS bufferevent reads only when its socket is readable. Bytes can be left
// inside the SSL with the socket drained: the rest of a record when the input reached the
// read high watermark or reading was off, whole records read ahead (SSL_has_pending). When
// reading becomes possible again libevent 2.1 only re-arms the socket's read event, so if
// the peer has nothing more to send those bytes are never delivered (a filter does not have
// this problem: it re-reads its underlying bufferevent synchronously). So at each such point
// (a drain of the input, reading switched on, the end of a callback) the read event is
// activated by hand when the SSL holds bytes; libevent's read callback then decrypts them,
// within the watermark as usual, or does nothing while reading stays off.
int cs_bufferevent_tls_read_pending(struct bufferevent *bev) {
    SSL *ssl = bufferevent_openssl_get_ssl(bev);
    if (ssl == NULL || !SSL_has_pending(ssl)) return 0;
    event_active(&bev->ev_read, EV_READ, 1);
    return 1;
}

static void cs_tls_input_changed(struct evbuffer *buffer, const struct evbuffer_cb_info *info, void *context) {
    (void)buffer;
    if (info->n_deleted != 0) cs_bufferevent_tls_read_pending(context);
}

int cs_bufferevent_tls_read_pending_on_drain(struct bufferevent *bev) {
    return evbuffer_add_cb(bufferevent_get_input(bev), cs_tls_input_changed, bev) == NULL ? -1 : 0;
}

void cs_bufferevent_tls_read_pending_off(struct bufferevent *bev) {
    evbuffer_remove_cb(bufferevent_get_input(bev), cs_tls_input_changed, bev);
}

// Writes what a socket-based TLS bufferevent holds now, instead of on the next loop iteration
// after a write event: libevent's own write callback runs (SSL_write, drain, the deferred
// write callback, the write event left on only if the socket did not take everything). With
// the epoll changelist the event it added for those bytes and removes once they are out cost
// no epoll_ctl. A short output is made contiguous first, so a response's head and body leave
// as one TLS record and one write instead of one per evbuffer chain.
int cs_bufferevent_tls_write_now(struct bufferevent *bev, size_t coalesce) {
    struct evbuffer *output = bufferevent_get_output(bev);
    size_t length = evbuffer_get_length(output);
    if (length == 0 || !(bufferevent_get_enabled(bev) & EV_WRITE)) return 0;
    SSL *ssl = bufferevent_openssl_get_ssl(bev);
    // During the handshake the write event belongs to the handshake: leave it to libevent.
    if (ssl == NULL || !SSL_is_init_finished(ssl)) return 0;
    size_t head = length < coalesce ? length : coalesce;
    if ((size_t)evbuffer_get_contiguous_space(output) < head) evbuffer_pullup(output, (ev_ssize_t)head);
    event_callback_fn callback = event_get_callback(&bev->ev_write);
    if (callback == NULL) return 0;
    callback(event_get_fd(&bev->ev_write), EV_WRITE, event_get_callback_arg(&bev->ev_write));
    return 1;
}

// libevent turns a socket-based TLS bufferevent's write event on whenever writing is enabled,
// with nothing to write: when the bufferevent is made (for the handshake), on each
// bufferevent_enable(EV_WRITE) and again when the handshake ends. Each time that costs an
// epoll_ctl to add it, a wakeup with nothing to do, and an epoll_ctl to remove it (four
// system calls and two loop turns per intercepted connection). Removed while the output is
// empty, before the loop applies the change, it costs no system call (the changelist nets
// the two out). Only where no SSL call can be waiting for the socket to take bytes: a server
// SSL before its handshake (the ClientHello's arrival drives it), or one whose handshake just
// finished. libevent adds the event itself when a handshake step or SSL_write blocks, as it
// does after each write that leaves nothing behind.
static int cs_tls_write_event_idle(struct bufferevent *bev, SSL *ssl) {
    return ssl != NULL && evbuffer_get_length(bufferevent_get_output(bev)) == 0;
}

void cs_bufferevent_tls_write_idle_before_handshake(struct bufferevent *bev) {
    SSL *ssl = bufferevent_openssl_get_ssl(bev);
    if (cs_tls_write_event_idle(bev, ssl) && SSL_is_server(ssl) && SSL_in_before(ssl)) event_del(&bev->ev_write);
}

void cs_bufferevent_tls_write_idle_after_handshake(struct bufferevent *bev) {
    SSL *ssl = bufferevent_openssl_get_ssl(bev);
    if (cs_tls_write_event_idle(bev, ssl) && SSL_is_init_finished(ssl)) event_del(&bev->ev_write);
}
