// HMAC-SHA256 under one fixed key from two precomputed SHA-256 states (RFC 2104): the key's
// inner and outer pads are hashed once, and each message costs a copy of each state plus the
// compressions of the message itself. OpenSSL's EVP_MAC does the same work but spends about as
// many instructions again per message on duplicating a provider context and looking up its
// parameters; the low-level SHA256_* calls are deprecated in OpenSSL 3, not removed, and the
// compression underneath is the same assembly.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "COpenSSL.h"
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

struct cs_hmac_sha256 {
    SHA256_CTX inner;
    SHA256_CTX outer;
};

// The key's inner and outer pads absorbed into `inner` and `outer`; nothing of the key is
// left on the stack.
static void cs_hmac_sha256_pads(const uint8_t *key, size_t length, SHA256_CTX *inner, SHA256_CTX *outer) {
    uint8_t block[SHA256_CBLOCK];
    memset(block, 0, sizeof block);
    if (length > SHA256_CBLOCK) {
        SHA256(key, length, block);
    } else if (length > 0) {
        memcpy(block, key, length);
    }
    uint8_t pad[SHA256_CBLOCK];
    for (size_t i = 0; i < SHA256_CBLOCK; i++) pad[i] = block[i] ^ 0x36;
    SHA256_Init(inner);
    SHA256_Update(inner, pad, sizeof pad);
    for (size_t i = 0; i < SHA256_CBLOCK; i++) pad[i] = block[i] ^ 0x5c;
    SHA256_Init(outer);
    SHA256_Update(outer, pad, sizeof pad);
    OPENSSL_cleanse(block, sizeof block);
    OPENSSL_cleanse(pad, sizeof pad);
}

cs_hmac_sha256 *cs_hmac_sha256_new(const uint8_t *key, size_t length) {
    cs_hmac_sha256 *hmac = malloc(sizeof *hmac);
    if (!hmac) return NULL;
    cs_hmac_sha256_pads(key, length, &hmac->inner, &hmac->outer);
    return hmac;
}

void cs_hmac_sha256_once(const uint8_t *key, size_t key_length, const uint8_t *message, size_t length, uint8_t output[32]) {
    cs_hmac_sha256 hmac;
    cs_hmac_sha256_pads(key, key_length, &hmac.inner, &hmac.outer);
    cs_hmac_sha256_mac(&hmac, message, length, output);
    OPENSSL_cleanse(&hmac, sizeof hmac);
}

void cs_hmac_sha256_free(cs_hmac_sha256 *hmac) {
    if (!hmac) return;
    OPENSSL_cleanse(hmac, sizeof *hmac);
    free(hmac);
}

void cs_hmac_sha256_mac(const cs_hmac_sha256 *hmac, const uint8_t *message, size_t length, uint8_t output[32]) {
    SHA256_CTX context = hmac->inner;
    uint8_t inner[SHA256_DIGEST_LENGTH];
    SHA256_Update(&context, message, length);
    SHA256_Final(inner, &context);
    context = hmac->outer;
    SHA256_Update(&context, inner, sizeof inner);
    SHA256_Final(output, &context);
    OPENSSL_cleanse(&context, sizeof context);
    OPENSSL_cleanse(inner, sizeof inner);
}
