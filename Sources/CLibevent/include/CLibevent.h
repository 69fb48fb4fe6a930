// Umbrella header: everything the proxy's event-loop shell calls in libevent (bufferevents
// over OpenSSL included) and the socket calls around it, plus shims for what Swift cannot
// import directly. Only Proxy/ imports it; the protocol core sees OpenSSL alone (COpenSSL).
#ifndef COUNTERSIGN_CLIBEVENT_H
#define COUNTERSIGN_CLIBEVENT_H

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <unistd.h>
#include <fcntl.h>
#include <signal.h>
#include <errno.h>
#include <string.h>
#include <pthread.h>

#include <openssl/ssl.h>
#include <event2/event.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/listener.h>
#include <event2/dns.h>
#include <event2/util.h>
#include <event2/thread.h>

// --- sockets ---
int cs_dup_cloexec(int fd);
int cs_errno(void);

/// splice(2) with SPLICE_F_MOVE | SPLICE_F_NONBLOCK: bytes from one descriptor to another,
/// one of them a pipe, without passing through user space.
long cs_splice_move(int from, int to, unsigned long length);
/// pipe2(2) with O_NONBLOCK | O_CLOEXEC, asking for `capacity` bytes; fds[0] is the read end.
int cs_pipe_nonblocking(int fds[2], int capacity);
int cs_block_signals_in_thread(void);

// --- libevent's memory (see chain_memory.c) ---
/// Has libevent take its memory through functions that keep freed buffer chains, a few of
/// each size per thread, for the next chain of that size. Once per process; safe at any time.
void cs_chain_memory_install(void);
/// How many freed blocks the calling thread keeps now (tests).
int cs_chain_memory_kept(void);

// --- TLS bufferevents ---
/// Activates a socket-based TLS bufferevent's read event when its SSL holds bytes the socket
/// will not announce (see tls_pending.c). 1 when it did.
int cs_bufferevent_tls_read_pending(struct bufferevent *bev);
/// Makes a socket-based TLS bufferevent deliver the bytes left inside its SSL when its input
/// is drained below the read watermark (see tls_pending.c). 0 on success.
int cs_bufferevent_tls_read_pending_on_drain(struct bufferevent *bev);
/// Has a socket-based TLS bufferevent write its output now, the first `coalesce` bytes as one
/// record (see tls_pending.c). 1 when it tried, 0 when there was nothing it could do.
int cs_bufferevent_tls_write_now(struct bufferevent *bev, size_t coalesce);
/// Turns off the write event libevent turned on with nothing to write: for a server SSL
/// before its handshake, and for one whose handshake just finished (see tls_pending.c).
void cs_bufferevent_tls_write_idle_before_handshake(struct bufferevent *bev);
void cs_bufferevent_tls_write_idle_after_handshake(struct bufferevent *bev);

// --- reading plain sockets (see socket_reader.c) ---
/// Reads a plain socket bufferevent's socket into its input in place of libevent's read path,
/// which asks FIONREAD before every read. `callback` hears EV_READ when bytes arrived, or
/// BEV_EVENT_READING with EOF, ERROR or TIMEOUT (reading then stops until enabled again).
typedef void (*cs_socket_reader_cb)(short what, void *context);
struct cs_socket_reader;
struct cs_socket_reader *cs_socket_reader_new(struct bufferevent *bev, cs_socket_reader_cb callback, void *context);
/// The same for a socket-based TLS bufferevent whose handshake is done: `SSL_read` on `ssl` in
/// place of libevent's TLS read path (which re-adds its read event on every change to the
/// input). The caller switches the bufferevent's own reading off. Its callback also hears
/// CS_READER_CIPHERTEXT when a read brought part of a record and nothing decrypted yet.
#define CS_READER_CIPHERTEXT 0x4000
struct cs_socket_reader *cs_socket_reader_new_tls(struct bufferevent *bev, SSL *ssl, cs_socket_reader_cb callback, void *context);
/// Stops the input callback of `cs_bufferevent_tls_read_pending_on_drain`: a TLS reader does its work.
void cs_bufferevent_tls_read_pending_off(struct bufferevent *bev);
/// Starts watching `fd` once the bufferevent has one (after its connect); 0 when it does.
int cs_socket_reader_attach(struct cs_socket_reader *reader, int fd);
void cs_socket_reader_free(struct cs_socket_reader *reader);
void cs_socket_reader_enable(struct cs_socket_reader *reader, int enabled);
/// NULL: no read timeout.
void cs_socket_reader_set_timeout(struct cs_socket_reader *reader, const struct timeval *timeout);
/// The read timeout counts from now (as `enable` and `set_timeout` make it do too).
void cs_socket_reader_restart_timeout(struct cs_socket_reader *reader);
/// Reading pauses while the input holds `high` bytes or more (0: no limit).
void cs_socket_reader_set_high(struct cs_socket_reader *reader, size_t high);

// --- the socket BIO of TLS sockets (see tls_socket_bio.c) ---
/// Gives `ssl` a BIO on `fd` (not closing it when freed) that reads with recv; libevent's TLS
/// bufferevent takes the fd from it. 0 on success, -1 when out of memory.
int cs_ssl_set_socket(SSL *ssl, int fd);

// --- writing sockets (see socket_writer.c) ---
/// Writes a socket from an output of its own, in place of libevent's write path: a plain socket
/// (`ssl` NULL) with `writev`, or a socket-based TLS bufferevent whose handshake is done with
/// `SSL_write` on `ssl`. `callback` hears EV_WRITE when a wait for the socket brought the output
/// down to the low mark, or BEV_EVENT_WRITING with EOF, ERROR or TIMEOUT. TLS: a first chain
/// shorter than `coalesce` is made that long (when there is more) so a head and its body leave
/// as one record.
typedef void (*cs_socket_writer_cb)(short what, void *context);
struct cs_socket_writer;
struct cs_socket_writer *cs_socket_writer_new(struct event_base *base, SSL *ssl, int fd, size_t coalesce,
                                              cs_socket_writer_cb callback, void *context);
void cs_socket_writer_free(struct cs_socket_writer *writer);
/// Where the owner adds the bytes (plaintext, for TLS); written by `cs_socket_writer_flush`.
struct evbuffer *cs_socket_writer_output(struct cs_socket_writer *writer);
/// Writes the output now: 1 when there was some and all of it went out; 0 when there was none,
/// or it waits for the socket, or it failed (the callback hears that on the next loop turn).
int cs_socket_writer_flush(struct cs_socket_writer *writer);
void cs_socket_writer_set_low(struct cs_socket_writer *writer, size_t low);
/// NULL: no write timeout. It bounds each wait for the socket.
void cs_socket_writer_set_timeout(struct cs_socket_writer *writer, const struct timeval *timeout);

#endif
