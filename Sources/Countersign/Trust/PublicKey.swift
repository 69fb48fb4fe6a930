import COpenSSL
import CountersignSupport

/// A public key on its own (a PEM `PUBLIC KEY`, SubjectPublicKeyInfo): what verifies an
/// origin's RFC 9421 response signatures. Owns its `EVP_PKEY*`.
public final class PublicKey: @unchecked Sendable {
    public let evpKey: OpaquePointer

    public init(pem: [UInt8], source: String = "PEM text") throws {
        OpenSSLErrorQueue.clear()
        guard let key = MemoryBIO.reading(pem, { PEM_read_bio_PUBKEY($0, nil, nil, nil) }) else {
            let reasons = OpenSSLErrorQueue.drainReasons()
            throw TrustError("\(source) contains no readable PEM public key" + (reasons.isEmpty ? "" : " (\(reasons.joined(separator: "; ")))"))
        }
        evpKey = key
    }

    /// The public half of a private key (a signer that is also its own verifier).
    public init(of privateKey: PrivateKey) {
        EVP_PKEY_up_ref(privateKey.evpKey)
        evpKey = privateKey.evpKey
    }

    public static func loadPEMFile(path: String) throws -> PublicKey {
        try PublicKey(pem: try FileBytes.read(path, what: "public key file"), source: path)
    }

    /// The key algorithm's short name, e.g. `RSA`, `EC`, `ED25519`.
    public var algorithm: String {
        EVP_PKEY_get0_type_name(evpKey).map { String(cString: $0) } ?? "unknown"
    }

    deinit { EVP_PKEY_free(evpKey) }
}
