// Digest's KD (RFC 7616 §3.4.1) over a prefix hashed once: H(A1) ":" nonce ":" is absorbed once
// per nonce; each answer continues from a copy on the stack with its nc ":" cnonce ":" qop ":",
// and both the request's `response` and the `rspauth` the server must send back (RFC 7616 §3.5)
// are finished from that state at once, each with its hex(H(A2)), which the caller may keep for
// a repeated method and uri: no state outlives the answer. MD5 and
// SHA-256 (nearly every Digest server) use the low-level contexts, which copy as plain memory;
// other algorithms (SHA-512/256) an EVP context of the fetched method, copied through OpenSSL.
// A2 is hashed from its pieces, so no buffer is joined for it.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "COpenSSL.h"
#include <openssl/md5.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef struct {
    int kind;
    union {
        MD5_CTX md5;
        SHA256_CTX sha256;
    } low;
    EVP_MD_CTX *evp;
} hash_state;

struct cs_digest_kd {
    const EVP_MD *md;
    hash_state prefix;
};

static int state_init(hash_state *state, int kind, const EVP_MD *md) {
    state->kind = kind;
    state->evp = NULL;
    switch (kind) {
    case CS_KD_MD5: return MD5_Init(&state->low.md5);
    case CS_KD_SHA256: return SHA256_Init(&state->low.sha256);
    default:
        state->evp = EVP_MD_CTX_new();
        return state->evp != NULL && EVP_DigestInit_ex2(state->evp, md, NULL) == 1;
    }
}

static void state_update(hash_state *state, const void *bytes, size_t length) {
    if (length == 0) return;
    switch (state->kind) {
    case CS_KD_MD5: MD5_Update(&state->low.md5, bytes, length); break;
    case CS_KD_SHA256: SHA256_Update(&state->low.sha256, bytes, length); break;
    default: EVP_DigestUpdate(state->evp, bytes, length); break;
    }
}

/// Four bytes as eight lower-case hex digits, computed in one 64-bit word: each byte spread to
/// a 16-bit lane, its high nibble in the lane's low byte (written first), each nibble then
/// turned into '0'..'9' or 'a'..'f' at once. A digit at a time from a table cost 13
/// instructions a byte, twice per answer.
static void hex4(const uint8_t *bytes, uint8_t *out) {
    uint64_t lanes = (uint64_t)bytes[0] | (uint64_t)bytes[1] << 16 | (uint64_t)bytes[2] << 32 | (uint64_t)bytes[3] << 48;
    uint64_t nibbles = (lanes >> 4 & 0x000f000f000f000fULL) | (lanes & 0x000f000f000f000fULL) << 8;
    // 1 in each byte whose nibble is 10 or more ('a' is 39 past '0' + 10).
    uint64_t letters = (nibbles + 0x0606060606060606ULL) >> 4 & 0x0101010101010101ULL;
    uint64_t digits = nibbles + 0x3030303030303030ULL + letters * 39;
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(digits >> (8 * i));
}

/// `length` bytes (a multiple of four: every digest here) as lower-case hex. With SSE2 (every
/// x86-64) sixteen bytes at a time, the same arithmetic in vector lanes: hex4 cost ~26
/// instructions per four bytes, ~200 an answer.
static inline void hex_digest(const uint8_t *bytes, size_t length, uint8_t *out) {
    size_t i = 0;
#ifdef __SSE2__
    const __m128i low_nibble = _mm_set1_epi8(0x0f), nine = _mm_set1_epi8(9);
    const __m128i zero_digit = _mm_set1_epi8('0'), past_nine = _mm_set1_epi8('a' - '0' - 10);
    for (; i + 16 <= length; i += 16) {
        __m128i value = _mm_loadu_si128((const __m128i *)(bytes + i));
        __m128i high = _mm_and_si128(_mm_srli_epi16(value, 4), low_nibble);
        __m128i low = _mm_and_si128(value, low_nibble);
        // Each byte's high nibble first, then its low one.
        __m128i nibbles[2] = { _mm_unpacklo_epi8(high, low), _mm_unpackhi_epi8(high, low) };
        for (int half = 0; half < 2; half++) {
            __m128i letters = _mm_and_si128(_mm_cmpgt_epi8(nibbles[half], nine), past_nine);
            __m128i digits = _mm_add_epi8(_mm_add_epi8(nibbles[half], zero_digit), letters);
            _mm_storeu_si128((__m128i *)(out + 2 * i + 16 * half), digits);
        }
    }
#endif
    for (; i < length; i += 4) hex4(bytes + i, out + 2 * i);
}

/// Finishes the hash into `out` as lower-case hex; returns the number of hex digits (0 on failure).
static size_t state_final_hex(hash_state *state, uint8_t *out) {
    uint8_t digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    switch (state->kind) {
    case CS_KD_MD5: MD5_Final(digest, &state->low.md5); length = MD5_DIGEST_LENGTH; break;
    case CS_KD_SHA256: SHA256_Final(digest, &state->low.sha256); length = SHA256_DIGEST_LENGTH; break;
    default:
        if (EVP_DigestFinal_ex(state->evp, digest, &length) != 1) length = 0;
        break;
    }
    // Every digest length here (16, 32, 64) is a multiple of four.
    hex_digest(digest, length, out);
    return 2 * (size_t)length;
}

// A 32-bit word's bytes in a given order, stored at once (a byte at a time, ~8 instructions each).
static inline void put_le32(uint8_t *out, uint32_t value) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    value = __builtin_bswap32(value);
#endif
    memcpy(out, &value, 4);
}

static inline void put_be32(uint8_t *out, uint32_t value) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    value = __builtin_bswap32(value);
#endif
    memcpy(out, &value, 4);
}

/// The bytes a low-level state has not compressed yet (`count`, under a block), then `tail` (at
/// most 64 bytes: a hex H(A2)), then the padding: 0x80, zeros, and the message's length in bits
/// in the last eight bytes (RFC 1321 §3.1-3.2 little-endian, FIPS 180-4 §5.1.1 big-endian), laid
/// out in `blocks` (zeroed by the caller). Returns the bytes to compress: one, two or three blocks.
static inline size_t last_blocks(uint8_t *blocks, const uint8_t *pending, size_t count, uint64_t bits,
                                 const uint8_t *tail, size_t tail_length, int length_is_big_endian) {
    memcpy(blocks, pending, count);
    memcpy(blocks + count, tail, tail_length);
    size_t length = count + tail_length;
    size_t padded = (length + 1 + 8 + 63) / 64 * 64;
    blocks[length] = 0x80;
    bits += (uint64_t)tail_length * 8;
    if (length_is_big_endian) {
        put_be32(blocks + padded - 8, (uint32_t)(bits >> 32));
        put_be32(blocks + padded - 4, (uint32_t)bits);
    } else {
        put_le32(blocks + padded - 8, (uint32_t)bits);
        put_le32(blocks + padded - 4, (uint32_t)(bits >> 32));
    }
    return padded;
}

/// What a low-level (MD5 or SHA-256) state holds beside its chaining value: the bytes it has not
/// compressed yet (`count`, under a block) and the length in bits of all it was given.
typedef struct {
    const uint8_t *pending;
    size_t count;
    uint64_t bits;
} low_progress;

// The helpers below take the kind as an argument: `low_answer_hex` calls their one body with a
// constant kind, and the compiler makes a version for each hash, as if written twice.
#define LOW_INLINE static inline __attribute__((always_inline))

LOW_INLINE low_progress progress_of(int kind, const hash_state *state) {
    if (kind == CS_KD_MD5) {
        const MD5_CTX *md5 = &state->low.md5;
        return (low_progress){ (const uint8_t *)md5->data, md5->num, (uint64_t)md5->Nh << 32 | md5->Nl };
    }
    const SHA256_CTX *sha256 = &state->low.sha256;
    return (low_progress){ (const uint8_t *)sha256->data, sha256->num, (uint64_t)sha256->Nh << 32 | sha256->Nl };
}

/// One 64-byte block compressed into a low-level state's chaining value.
LOW_INLINE void low_transform(int kind, hash_state *state, const uint8_t *block) {
    if (kind == CS_KD_MD5) MD5_Transform(&state->low.md5, block);
    else SHA256_Transform(&state->low.sha256, block);
}

/// A low-level state's chaining value as the digest's bytes (MD5's words little-endian,
/// SHA-256's big-endian); returns the digest's length.
LOW_INLINE size_t low_digest(int kind, const hash_state *state, uint8_t *digest) {
    if (kind == CS_KD_MD5) {
        const MD5_CTX *md5 = &state->low.md5;
        put_le32(digest, md5->A);
        put_le32(digest + 4, md5->B);
        put_le32(digest + 8, md5->C);
        put_le32(digest + 12, md5->D);
        return MD5_DIGEST_LENGTH;
    }
    for (int i = 0; i < 8; i++) put_be32(digest + 4 * i, state->low.sha256.h[i]);
    return SHA256_DIGEST_LENGTH;
}

// A low-level state's chaining value finished with `pending` (`count` bytes, `bits` in all so
// far) and then `tail`, and written out as hex: the last blocks laid out on the stack
// (`last_blocks`) and compressed into the chaining value. That is Update and Final in one,
// without Final's copying into the state's buffer and its wipe (what is laid out is the answer's
// public nc ":" cnonce ":" qop ":" and H(A2)). As after Final, the chaining value left is the
// digest, which is public here. Returns the number of hex digits.
LOW_INLINE size_t low_final_hex(int kind, hash_state *state, const uint8_t *pending, size_t count, uint64_t bits,
                                const uint8_t *tail, size_t tail_length, uint8_t *out) {
    uint8_t blocks[3 * 64] = {0};
    size_t padded = last_blocks(blocks, pending, count, bits, tail, tail_length, kind == CS_KD_SHA256);
    for (size_t offset = 0; offset < padded; offset += 64) low_transform(kind, state, blocks + offset);
    uint8_t digest[SHA256_DIGEST_LENGTH];
    size_t length = low_digest(kind, state, digest);
    hex_digest(digest, length, out);
    return 2 * length;
}

/// The longest middle (nc ":" cnonce ":" qop ":") `low_answer_hex` lays out itself; ours are
/// under 64 bytes (a 32-digit cnonce), a longer one is hashed through the state's Update.
enum { LOW_MIDDLE_MAX = 128 };

/// Whether `low_answer_hex` answers from this prefix: a low-level state whose uncompressed bytes
/// hold nothing of H(A1), so that nothing secret is laid out on the stack. H(A1) comes first (32
/// or 64 hex digits); with MD5 and a nonce under 30 bytes the first block is not full yet, and
/// Update and Final (which wipes the buffer) answer instead. A middle over LOW_MIDDLE_MAX, or an
/// H(A2) over 64 digits, is left to them too.
static int low_answer_applies(const hash_state *prefix, size_t middle_length, size_t a2_length, size_t rspauth_a2_length) {
    if (middle_length > LOW_MIDDLE_MAX || a2_length > 64 || rspauth_a2_length > 64) return 0;
    if (prefix->kind != CS_KD_MD5 && prefix->kind != CS_KD_SHA256) return 0;
    size_t ha1_digits = 2 * (prefix->kind == CS_KD_MD5 ? MD5_DIGEST_LENGTH : SHA256_DIGEST_LENGTH);
    low_progress progress = progress_of(prefix->kind, prefix);
    return progress.count < 64 && progress.bits / 8 - progress.count >= ha1_digits;
}

/// An answer's response and rspauth from a low-level (MD5 or SHA-256) prefix, its middle and both
/// tails laid out on the stack: the prefix's uncompressed bytes and the middle joined, the full
/// blocks of them compressed once from a copy of the prefix's chaining value (the same for both
/// hashes), and each hash finished from there with its H(A2) (`low_final_hex`). The states' own
/// Update, and copying the state whole, are not needed (~150 instructions an answer).
LOW_INLINE size_t low_answer_as(int kind, const hash_state *prefix, const uint8_t *middle, size_t middle_length,
                                const uint8_t *a2_hex, size_t a2_length, const uint8_t *rspauth_a2_hex, size_t rspauth_a2_length,
                                uint8_t *response_out, uint8_t *rspauth_out) {
    low_progress progress = progress_of(kind, prefix);
    uint8_t joined[64 + LOW_MIDDLE_MAX];
    memcpy(joined, progress.pending, progress.count);
    if (middle_length > 0) memcpy(joined + progress.count, middle, middle_length);
    size_t length = progress.count + middle_length, shared = length / 64 * 64;
    uint64_t bits = progress.bits + (uint64_t)middle_length * 8;
    // A low-level state has no EVP context: the copies own nothing to free.
    hash_state answer = *prefix;
    for (size_t offset = 0; offset < shared; offset += 64) low_transform(kind, &answer, joined + offset);
    hash_state response = answer;
    size_t digits = low_final_hex(kind, &response, joined + shared, length - shared, bits, a2_hex, a2_length, response_out);
    if (low_final_hex(kind, &answer, joined + shared, length - shared, bits, rspauth_a2_hex, rspauth_a2_length, rspauth_out) != digits) digits = 0;
    return digits;
}

static size_t low_answer_hex(const hash_state *prefix, const uint8_t *middle, size_t middle_length,
                             const uint8_t *a2_hex, size_t a2_length, const uint8_t *rspauth_a2_hex, size_t rspauth_a2_length,
                             uint8_t *response_out, uint8_t *rspauth_out) {
    if (prefix->kind == CS_KD_MD5) {
        return low_answer_as(CS_KD_MD5, prefix, middle, middle_length, a2_hex, a2_length, rspauth_a2_hex, rspauth_a2_length,
                             response_out, rspauth_out);
    }
    return low_answer_as(CS_KD_SHA256, prefix, middle, middle_length, a2_hex, a2_length, rspauth_a2_hex, rspauth_a2_length,
                         response_out, rspauth_out);
}

static int state_copy(hash_state *to, const hash_state *from) {
    to->kind = from->kind;
    to->evp = NULL;
    if (from->kind == CS_KD_MD5 || from->kind == CS_KD_SHA256) {
        to->low = from->low;
        return 1;
    }
    to->evp = EVP_MD_CTX_new();
    return to->evp != NULL && EVP_MD_CTX_copy_ex(to->evp, from->evp) == 1;
}

/// After a final nothing secret is left in a state (the chaining value is the digest, which is
/// public here: the response, or H(A2)); the prefix's state is wiped when the KD is freed.
static void state_clear(hash_state *state) {
    EVP_MD_CTX_free(state->evp);   // frees nothing for the low-level kinds (NULL)
    state->evp = NULL;
}

cs_digest_kd *cs_digest_kd_new(int kind, const EVP_MD *md) {
    cs_digest_kd *kd = malloc(sizeof *kd);
    if (!kd) return NULL;
    kd->md = md;
    if (!state_init(&kd->prefix, kind, md)) {
        state_clear(&kd->prefix);
        free(kd);
        return NULL;
    }
    return kd;
}

void cs_digest_kd_update(cs_digest_kd *kd, const uint8_t *bytes, size_t length) {
    state_update(&kd->prefix, bytes, length);
}

size_t cs_digest_kd_a2_hex(const cs_digest_kd *kd, const uint8_t *method, size_t method_length,
                           const uint8_t *uri, size_t uri_length, const uint8_t *body_hash, size_t body_hash_length,
                           int with_body_hash, uint8_t *hex_out) {
    static const uint8_t colon = ':';
    hash_state a2 = {0};
    if (!state_init(&a2, kd->prefix.kind, kd->md)) {
        state_clear(&a2);
        return 0;
    }
    state_update(&a2, method, method_length);
    state_update(&a2, &colon, 1);
    state_update(&a2, uri, uri_length);
    if (with_body_hash) {
        state_update(&a2, &colon, 1);
        state_update(&a2, body_hash, body_hash_length);
    }
    size_t length = state_final_hex(&a2, hex_out);
    state_clear(&a2);
    return length;
}

size_t cs_digest_kd_answer_hex(const cs_digest_kd *kd, const uint8_t *middle, size_t middle_length,
                               const uint8_t *a2_hex, size_t a2_length, const uint8_t *rspauth_a2_hex, size_t rspauth_a2_length,
                               uint8_t *response_out, uint8_t *rspauth_out) {
    if (a2_length == 0 || rspauth_a2_length == 0) return 0;
    if (low_answer_applies(&kd->prefix, middle_length, a2_length, rspauth_a2_length)) {
        return low_answer_hex(&kd->prefix, middle, middle_length, a2_hex, a2_length, rspauth_a2_hex, rspauth_a2_length,
                              response_out, rspauth_out);
    }
    hash_state answer = {0}, response = {0};
    size_t length = 0;
    if (state_copy(&answer, &kd->prefix)) {
        state_update(&answer, middle, middle_length);
        if (state_copy(&response, &answer)) {
            state_update(&response, a2_hex, a2_length);
            state_update(&answer, rspauth_a2_hex, rspauth_a2_length);
            // Both states are finished: what is left of either is its (public) digest.
            length = state_final_hex(&response, response_out);
            if (state_final_hex(&answer, rspauth_out) != length) length = 0;
        }
    }
    state_clear(&response);
    state_clear(&answer);
    return length;
}

void cs_digest_kd_free(cs_digest_kd *kd) {
    if (!kd) return;
    state_clear(&kd->prefix);
    OPENSSL_cleanse(&kd->prefix.low, sizeof kd->prefix.low);   // what H(A1) hashed to
    free(kd);
}
