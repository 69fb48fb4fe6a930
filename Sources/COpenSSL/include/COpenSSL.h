// Umbrella header: everything Countersign calls in OpenSSL, plus a few shims for what Swift
// cannot import directly (function-like macros). Auth/, Trust/, Interception/ and Support/
// import this module alone, so they cannot reach libevent (CLibevent is the proxy's).
#ifndef COUNTERSIGN_COPENSSL_H
#define COUNTERSIGN_COPENSSL_H

#include <stdint.h>

#include <openssl/ssl.h>
#include <openssl/err.h>
#include "cs_gssapi_types.h"
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/hmac.h>
#include <openssl/rsa.h>
#include <openssl/provider.h>
#include <openssl/asn1.h>
#include <openssl/ocsp.h>

// --- OpenSSL macros ---
long cs_SSL_CTX_set_mode(SSL_CTX *ctx, long mode);
long cs_SSL_CTX_set_max_send_fragment(SSL_CTX *ctx, long bytes);
long cs_SSL_CTX_set_options(SSL_CTX *ctx, long options);
int cs_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
int cs_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version);
int cs_SSL_set_tlsext_host_name(SSL *ssl, const char *name);
long cs_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode);
long cs_BIO_get_mem_data(BIO *bio, char **data);
int cs_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, int (*cb)(SSL *, int *, void *));
int cs_SSL_CTX_set_tlsext_servername_arg(SSL_CTX *ctx, void *arg);
long cs_SSL_CTX_add_extra_chain_cert(SSL_CTX *ctx, X509 *x509);
int cs_sk_X509_num(const STACK_OF(X509) *sk);
X509 *cs_sk_X509_value(const STACK_OF(X509) *sk, int i);
STACK_OF(X509) *cs_sk_X509_new_null(void);
int cs_sk_X509_push(STACK_OF(X509) *sk, X509 *x);
void cs_sk_X509_pop_free(STACK_OF(X509) *sk);
void cs_sk_X509_free(STACK_OF(X509) *sk);
int cs_sk_GENERAL_NAME_num(const GENERAL_NAMES *sk);
const GENERAL_NAME *cs_sk_GENERAL_NAME_value(const GENERAL_NAMES *sk, int i);
void cs_GENERAL_NAMES_free(GENERAL_NAMES *names);
unsigned long cs_ERR_get_error_all(const char **file, int *line);
int cs_EVP_PKEY_is_ec(EVP_PKEY *key);

// --- X.509 name constraints and general names (interception CA) ---
int cs_sk_GENERAL_SUBTREE_num(const STACK_OF(GENERAL_SUBTREE) *sk);
GENERAL_SUBTREE *cs_sk_GENERAL_SUBTREE_value(const STACK_OF(GENERAL_SUBTREE) *sk, int i);
STACK_OF(GENERAL_SUBTREE) *cs_sk_GENERAL_SUBTREE_new_null(void);
int cs_sk_GENERAL_SUBTREE_push(STACK_OF(GENERAL_SUBTREE) *sk, GENERAL_SUBTREE *subtree);
int cs_sk_GENERAL_NAME_push(GENERAL_NAMES *names, GENERAL_NAME *name);

// --- trust (CountersignTrust) ---
unsigned long cs_XN_FLAG_RFC2253(void);
long cs_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *x509);

// --- revocation: CRL entries and stapled OCSP (CountersignTrust) ---
int cs_sk_X509_REVOKED_num(const STACK_OF(X509_REVOKED) *sk);
X509_REVOKED *cs_sk_X509_REVOKED_value(const STACK_OF(X509_REVOKED) *sk, int i);
long cs_SSL_set_tlsext_status_type(SSL *ssl, int type);
long cs_SSL_get_tlsext_status_ocsp_resp(SSL *ssl, const unsigned char **response);
long cs_SSL_CTX_set_tlsext_status_cb(SSL_CTX *ctx, int (*cb)(SSL *, void *));
int cs_sk_OCSP_SINGLERESP_count(OCSP_BASICRESP *basic);

// SSL_OP_* are built with a cast-and-shift macro Swift does not import.
uint64_t cs_SSL_OP_NO_TICKET(void);
uint64_t cs_SSL_OP_NO_RENEGOTIATION(void);
uint64_t cs_SSL_OP_IGNORE_UNEXPECTED_EOF(void);
uint64_t cs_SSL_OP_CIPHER_SERVER_PREFERENCE(void);
uint64_t cs_SSL_OP_PRIORITIZE_CHACHA(void);

// --- HMAC-SHA256 under a fixed key (hmac_sha256.c) ---
typedef struct cs_hmac_sha256 cs_hmac_sha256;
cs_hmac_sha256 *cs_hmac_sha256_new(const uint8_t *key, size_t length);
void cs_hmac_sha256_free(cs_hmac_sha256 *hmac);
void cs_hmac_sha256_mac(const cs_hmac_sha256 *hmac, const uint8_t *message, size_t length, uint8_t output[32]);
/// HMAC-SHA256 under a key used once (the pads on the stack, no allocation).
void cs_hmac_sha256_once(const uint8_t *key, size_t key_length, const uint8_t *message, size_t length, uint8_t output[32]);

// --- one-shot MD5 and SHA-256 of short messages (one_shot_digests.c) ---
void cs_md5(const uint8_t *message, size_t length, uint8_t output[16]);
void cs_sha256(const uint8_t *message, size_t length, uint8_t output[32]);

// --- Digest's KD over a prefix hashed once (digest_kd.c) ---
// kind: which context hashes (the low-level MD5 or SHA-256 one, else an EVP one of `md`).
enum { CS_KD_EVP = 0, CS_KD_MD5 = 1, CS_KD_SHA256 = 2 };
typedef struct cs_digest_kd cs_digest_kd;
cs_digest_kd *cs_digest_kd_new(int kind, const EVP_MD *md);
void cs_digest_kd_update(cs_digest_kd *kd, const uint8_t *bytes, size_t length);
// hex(H(method ":" uri [":" body_hash])), H(A2), into hex_out; returns the number of hex digits.
size_t cs_digest_kd_a2_hex(const cs_digest_kd *kd, const uint8_t *method, size_t method_length,
                           const uint8_t *uri, size_t uri_length, const uint8_t *body_hash, size_t body_hash_length,
                           int with_body_hash, uint8_t *hex_out);
// An answer's two KDs from the prefix: hex(H(prefix || middle || a2_hex)) into response_out (the
// request's response) and hex(H(prefix || middle || rspauth_a2_hex)) into rspauth_out (the
// server's expected rspauth), where middle is nc ":" cnonce ":" qop ":" (empty without qop).
// Returns the number of hex digits each (0 on failure).
size_t cs_digest_kd_answer_hex(const cs_digest_kd *kd, const uint8_t *middle, size_t middle_length,
                               const uint8_t *a2_hex, size_t a2_length, const uint8_t *rspauth_a2_hex, size_t rspauth_a2_length,
                               uint8_t *response_out, uint8_t *rspauth_out);
void cs_digest_kd_free(cs_digest_kd *kd);

#endif
