// MD5 and SHA-256 of one short message through OpenSSL's low-level functions: EVP_Digest
// allocates, initialises and frees a provider context around every call, which for the few
// dozen bytes a Digest answer hashes (three or four times per request) costs more than the
// hashing. The low-level calls are deprecated in OpenSSL 3, not removed; the compression
// underneath is the same assembly.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "COpenSSL.h"
#include <openssl/md5.h>
#include <openssl/sha.h>

void cs_md5(const uint8_t *message, size_t length, uint8_t output[16]) {
    MD5(message, length, output);
}

void cs_sha256(const uint8_t *message, size_t length, uint8_t output[32]) {
    SHA256(message, length, output);
}
