import COpenSSL
import CountersignSupport

/// A private key. Owns its `EVP_PKEY*` (freed in deinit) and never prints its material.
public final class PrivateKey: @unchecked Sendable {
    /// The owned `EVP_PKEY*`. Callers that hand it to OpenSSL must not free it.
    public let evpKey: OpaquePointer

    /// Takes ownership of `evpKey` (one reference).
    init(taking evpKey: OpaquePointer) {
        self.evpKey = evpKey
    }

    /// Parses a PEM private key (PKCS#8, encrypted PKCS#8 or traditional RSA/EC form).
    /// An encrypted key needs `passphrase`; without one it fails instead of prompting.
    public convenience init(pem: [UInt8], passphrase: String? = nil, source: String = "PEM text") throws {
        OpenSSLErrorQueue.clear()
        let key: OpaquePointer? = MemoryBIO.reading(pem) { bio in
            PassphraseCallback.withPassphrase(passphrase) { context in
                PEM_read_bio_PrivateKey(bio, nil, PassphraseCallback.callback, context)
            }
        }
        guard let key else {
            let reasons = OpenSSLErrorQueue.drainReasons()
            let passphraseProblem = ["bad decrypt", "password", "passphrase"]
            if reasons.contains(where: { reason in passphraseProblem.contains { reason.contains($0) } }) {
                throw TrustError(passphrase == nil
                    ? "private key \(source) is encrypted: configure its passphrase"
                    : "private key \(source) could not be decrypted: wrong passphrase")
            }
            let detail = reasons.isEmpty ? "" : " (\(reasons.joined(separator: "; ")))"
            throw TrustError("\(source) contains no readable PEM private key\(detail)")
        }
        self.init(taking: key)
    }

    /// Loads a PEM private key file.
    public static func loadPEMFile(path: String, passphrase: String? = nil) throws -> PrivateKey {
        try PrivateKey(pem: try FileBytes.read(path, what: "private key file"), passphrase: passphrase, source: path)
    }

    /// True when this key is the private half of `certificate`'s public key.
    public func matches(_ certificate: Certificate) -> Bool {
        guard let publicKey = X509_get0_pubkey(certificate.x509) else { return false }
        let equal = EVP_PKEY_eq(publicKey, evpKey) == 1
        OpenSSLErrorQueue.clear()
        return equal
    }

    /// The key algorithm's short name, e.g. `RSA`, `EC`, `ED25519`.
    public var algorithm: String {
        EVP_PKEY_get0_type_name(evpKey).map { String(cString: $0) } ?? "unknown"
    }

    deinit {
        EVP_PKEY_free(evpKey)
    }
}

extension PrivateKey: CustomStringConvertible {
    /// Names the algorithm only: key material never appears in logs.
    public var description: String { "PrivateKey(\(algorithm))" }
}

/// Supplies a passphrase to OpenSSL's PEM reader without ever reaching the terminal prompt.
enum PassphraseCallback {
    static let callback: @convention(c) (
        UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?
    ) -> Int32 = { buffer, size, _, context in
        guard let buffer, let context else { return -1 }
        let passphrase = context.assumingMemoryBound(to: CChar.self)
        let length = Int32(strlen(passphrase))
        guard length <= size else { return -1 }
        memcpy(buffer, passphrase, Int(length))
        return length
    }

    static func withPassphrase<T>(
        _ passphrase: String?,
        _ body: (UnsafeMutableRawPointer?) -> T
    ) -> T {
        guard let passphrase else { return body(nil) }
        var bytes = Array(passphrase.utf8CString)
        defer { OPENSSL_cleanse(&bytes, bytes.count) }
        return bytes.withUnsafeMutableBytes { body($0.baseAddress) }
    }
}
