#include "COpenSSL.h"

long cs_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
long cs_SSL_CTX_set_max_send_fragment(SSL_CTX *ctx, long bytes) { return SSL_CTX_set_max_send_fragment(ctx, bytes); }
long cs_SSL_CTX_set_options(SSL_CTX *ctx, long options) { return SSL_CTX_set_options(ctx, options); }
int cs_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int v) { return SSL_CTX_set_min_proto_version(ctx, v); }
int cs_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int v) { return SSL_CTX_set_max_proto_version(ctx, v); }
int cs_SSL_set_tlsext_host_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }
long cs_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_session_cache_mode(ctx, mode); }
long cs_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
int cs_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, int (*cb)(SSL *, int *, void *)) {
    return (int)SSL_CTX_set_tlsext_servername_callback(ctx, cb);
}
int cs_SSL_CTX_set_tlsext_servername_arg(SSL_CTX *ctx, void *arg) { return (int)SSL_CTX_set_tlsext_servername_arg(ctx, arg); }
long cs_SSL_CTX_add_extra_chain_cert(SSL_CTX *ctx, X509 *x509) { return SSL_CTX_add_extra_chain_cert(ctx, x509); }
int cs_sk_X509_num(const STACK_OF(X509) *sk) { return sk_X509_num(sk); }
X509 *cs_sk_X509_value(const STACK_OF(X509) *sk, int i) { return sk_X509_value(sk, i); }
STACK_OF(X509) *cs_sk_X509_new_null(void) { return sk_X509_new_null(); }
int cs_sk_X509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
void cs_sk_X509_pop_free(STACK_OF(X509) *sk) { sk_X509_pop_free(sk, X509_free); }
void cs_sk_X509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }
int cs_sk_GENERAL_NAME_num(const GENERAL_NAMES *sk) { return sk_GENERAL_NAME_num(sk); }
const GENERAL_NAME *cs_sk_GENERAL_NAME_value(const GENERAL_NAMES *sk, int i) { return sk_GENERAL_NAME_value(sk, i); }
void cs_GENERAL_NAMES_free(GENERAL_NAMES *names) { GENERAL_NAMES_free(names); }
unsigned long cs_ERR_get_error_all(const char **file, int *line) { return ERR_get_error_all(file, line, NULL, NULL, NULL); }
int cs_EVP_PKEY_is_ec(EVP_PKEY *key) { return EVP_PKEY_is_a(key, "EC"); }

int cs_sk_GENERAL_SUBTREE_num(const STACK_OF(GENERAL_SUBTREE) *sk) { return sk_GENERAL_SUBTREE_num(sk); }
GENERAL_SUBTREE *cs_sk_GENERAL_SUBTREE_value(const STACK_OF(GENERAL_SUBTREE) *sk, int i) { return sk_GENERAL_SUBTREE_value(sk, i); }
STACK_OF(GENERAL_SUBTREE) *cs_sk_GENERAL_SUBTREE_new_null(void) { return sk_GENERAL_SUBTREE_new_null(); }
int cs_sk_GENERAL_SUBTREE_push(STACK_OF(GENERAL_SUBTREE) *sk, GENERAL_SUBTREE *subtree) { return sk_GENERAL_SUBTREE_push(sk, subtree); }
int cs_sk_GENERAL_NAME_push(GENERAL_NAMES *names, GENERAL_NAME *name) { return sk_GENERAL_NAME_push(names, name); }

// --- trust (CountersignTrust) ---
unsigned long cs_XN_FLAG_RFC2253(void) { return XN_FLAG_RFC2253; }
long cs_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *x509) { return SSL_CTX_add1_chain_cert(ctx, x509); }
uint64_t cs_SSL_OP_NO_TICKET(void) { return SSL_OP_NO_TICKET; }
uint64_t cs_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }
uint64_t cs_SSL_OP_IGNORE_UNEXPECTED_EOF(void) { return SSL_OP_IGNORE_UNEXPECTED_EOF; }
uint64_t cs_SSL_OP_CIPHER_SERVER_PREFERENCE(void) { return SSL_OP_CIPHER_SERVER_PREFERENCE; }
uint64_t cs_SSL_OP_PRIORITIZE_CHACHA(void) { return SSL_OP_PRIORITIZE_CHACHA; }

// --- revocation: CRL entries and stapled OCSP (CountersignTrust) ---
int cs_sk_X509_REVOKED_num(const STACK_OF(X509_REVOKED) *sk) { return sk_X509_REVOKED_num(sk); }
X509_REVOKED *cs_sk_X509_REVOKED_value(const STACK_OF(X509_REVOKED) *sk, int i) { return sk_X509_REVOKED_value(sk, i); }
long cs_SSL_set_tlsext_status_type(SSL *ssl, int type) { return SSL_set_tlsext_status_type(ssl, type); }
long cs_SSL_get_tlsext_status_ocsp_resp(SSL *ssl, const unsigned char **response) {
    unsigned char *bytes = NULL;
    long length = SSL_get_tlsext_status_ocsp_resp(ssl, &bytes);
    *response = bytes;
    return length;
}
long cs_SSL_CTX_set_tlsext_status_cb(SSL_CTX *ctx, int (*cb)(SSL *, void *)) { return SSL_CTX_set_tlsext_status_cb(ctx, cb); }
int cs_sk_OCSP_SINGLERESP_count(OCSP_BASICRESP *basic) { return OCSP_resp_count(basic); }
