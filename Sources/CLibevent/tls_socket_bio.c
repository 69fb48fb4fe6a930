#include "CLibevent.h"
#include <pthread.h>
#include <openssl/bio.h>

// The BIO a socket-based TLS stream's SSL reads and writes through: OpenSSL's own socket BIO with
// its read done by recv instead of read. On a socket the two deliver the same bytes, but read goes
// through the file layer first (vfs_read, sock_read_iter) where recv enters the socket directly:
// ~110 ns less a call on this kernel (bench/syscall_cost.c), and an intercepted request reads on
// two TLS legs. Writes stay on OpenSSL's write, which measured cheaper there than send.

static BIO_METHOD *cs_socket_bio_method;
static pthread_once_t cs_socket_bio_once = PTHREAD_ONCE_INIT;

// OpenSSL's socket read, with recv: errno cleared first so an end of file (0, errno 0) is told
// from a failure, a would-block read asks the caller to retry, and end of file is flagged for
// BIO_eof as the socket BIO flags it.
static int cs_socket_bio_read(BIO *bio, char *out, int length) {
    if (out == NULL) return 0;
    errno = 0;
    int got = (int)recv((int)BIO_get_fd(bio, NULL), out, (size_t)length, 0);
    BIO_clear_retry_flags(bio);
    if (got <= 0) {
        if (BIO_sock_should_retry(got)) {
            BIO_set_retry_read(bio);
        } else if (got == 0) {
            BIO_set_flags(bio, BIO_FLAGS_IN_EOF);
        }
    }
    return got;
}

static void cs_socket_bio_make_method(void) {
    const BIO_METHOD *socket = BIO_s_socket();
    BIO_METHOD *method = BIO_meth_new(BIO_TYPE_SOCKET, "socket read with recv");
    if (method == NULL) return;
    if (!BIO_meth_set_write(method, BIO_meth_get_write(socket))
        || !BIO_meth_set_read(method, cs_socket_bio_read)
        || !BIO_meth_set_puts(method, BIO_meth_get_puts(socket))
        || !BIO_meth_set_ctrl(method, BIO_meth_get_ctrl(socket))
        || !BIO_meth_set_create(method, BIO_meth_get_create(socket))
        || !BIO_meth_set_destroy(method, BIO_meth_get_destroy(socket))) {
        BIO_meth_free(method);
        return;
    }
    cs_socket_bio_method = method;
}

int cs_ssl_set_socket(SSL *ssl, int fd) {
    pthread_once(&cs_socket_bio_once, cs_socket_bio_make_method);
    if (cs_socket_bio_method == NULL) return -1;
    BIO *bio = BIO_new(cs_socket_bio_method);
    if (bio == NULL) return -1;
    BIO_set_fd(bio, fd, BIO_NOCLOSE);
    SSL_set_bio(ssl, bio, bio);
    return 0;
}
