import COpenSSL
import CountersignSupport

/// OpenSSL's one-shot EVP_DigestVerify (signing: `PreparedEVPSigner`), set up per RFC 9421 §3.3:
/// RSASSA-PSS with SHA-512, MGF1-SHA-512 and a 64-byte salt; PKCS#1 v1.5 with SHA-256;
/// ECDSA with the curve's hash; pure Ed25519.
enum EVPSignature {
    static func verify(_ signature: [UInt8], over message: [UInt8], key: OpaquePointer, algorithm: SignatureAlgorithm) -> Bool {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new: out of memory") }
        defer {
            EVP_MD_CTX_free(context)
            OpenSSLErrorQueue.clear()
        }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(context, &keyContext, algorithm.digest, nil, key) == 1, configure(keyContext, algorithm) else { return false }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }

    static func configure(_ keyContext: OpaquePointer?, _ algorithm: SignatureAlgorithm) -> Bool {
        guard algorithm == .rsaPSSSHA512 else { return true }
        guard let keyContext else { return false }
        return EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1
            && EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, EVP_sha512()) == 1
            && EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, 64) == 1
    }

    static func failure(_ what: String) -> String {
        let reasons = OpenSSLErrorQueue.drainReasons()
        return reasons.isEmpty ? what : "\(what) (\(reasons.joined(separator: "; ")))"
    }
}

/// A private key's signing context set up once (`EVP_DigestSignInit`: the algorithm fetched, the
/// key's provider data and, for RSA-PSS, the padding set) and copied for each signature, which
/// skips the set-up every request paid. The template is only read after `init`, so one serves
/// every worker thread.
public final class PreparedEVPSigner: @unchecked Sendable {
    private let template: OpaquePointer
    let algorithm: SignatureAlgorithm

    init(key: OpaquePointer, algorithm: SignatureAlgorithm) throws {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new: out of memory") }
        OpenSSLErrorQueue.clear()
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit(context, &keyContext, algorithm.digest, nil, key) == 1, EVPSignature.configure(keyContext, algorithm) else {
            EVP_MD_CTX_free(context)
            throw SignatureError.signingFailed(EVPSignature.failure("cannot start \(algorithm.rawValue)"))
        }
        template = context
        self.algorithm = algorithm
    }

    deinit { EVP_MD_CTX_free(template) }

    func sign(_ message: [UInt8]) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new: out of memory") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_MD_CTX_copy_ex(context, template) == 1 else {
            throw SignatureError.signingFailed(EVPSignature.failure("cannot copy the \(algorithm.rawValue) context"))
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else {
            throw SignatureError.signingFailed(EVPSignature.failure("\(algorithm.rawValue) refused"))
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
            throw SignatureError.signingFailed(EVPSignature.failure("\(algorithm.rawValue) refused"))
        }
        signature.removeLast(signature.count - length)
        return signature
    }
}

/// ECDSA signatures as RFC 9421 sends them, `r || s` each padded to the curve's size, and as
/// OpenSSL makes and checks them, DER `ECDSA-Sig-Value`.
enum ECDSARawSignature {
    static func fromDER(_ der: [UInt8], scalarLength: Int) throws -> [UInt8] {
        var cursor: UnsafePointer<UInt8>? = nil
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw SignatureError.signingFailed("OpenSSL made an unreadable ECDSA signature") }
        defer { ECDSA_SIG_free(parsed) }
        var r: OpaquePointer?, s: OpaquePointer?
        ECDSA_SIG_get0(parsed, &r, &s)
        var raw = [UInt8](repeating: 0, count: 2 * scalarLength)
        let written = raw.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(r, buffer.baseAddress, Int32(scalarLength)) + BN_bn2binpad(s, buffer.baseAddress! + scalarLength, Int32(scalarLength))
        }
        guard written == Int32(2 * scalarLength) else { throw SignatureError.signingFailed("an ECDSA scalar is larger than the curve") }
        return raw
    }

    static func toDER(_ raw: [UInt8], scalarLength: Int) -> [UInt8]? {
        guard raw.count == 2 * scalarLength, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(scalarLength), nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + scalarLength, Int32(scalarLength), nil) }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        _ = der.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return der
    }
}

/// Facts about an EVP key that choose its algorithm.
enum EVPKeyFacts {
    /// The curve of an EC key (`prime256v1`, `secp384r1`), nil for other keys.
    static func group(_ key: OpaquePointer) -> String? {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        return String(cString: name)
    }
}

/// HMAC-SHA256 (RFC 2104) in one call, through the low-level SHA-256 contexts (`cs_hmac_sha256_once`):
/// OpenSSL's `HMAC()` fetches the MAC and digest methods by name on every call.
enum HMACSHA256 {
    static func authenticate(key: [UInt8], message: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { output, count in
            key.withUnsafeBufferPointer { keyBytes in
                message.withUnsafeBufferPointer { cs_hmac_sha256_once(keyBytes.baseAddress, keyBytes.count, $0.baseAddress, $0.count, output.baseAddress!) }
            }
            count = 32
        }
    }
}

/// Comparison whose time does not depend on where two MACs differ.
enum ConstantTime {
    static func equal(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.count == rhs.count && CRYPTO_memcmp(lhs, rhs, lhs.count) == 0
    }
}
