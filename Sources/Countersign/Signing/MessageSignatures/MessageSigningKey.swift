import COpenSSL
import CountersignSupport
import CountersignTrust

/// A key that signs RFC 9421 signature bases: a shared HMAC secret or a private key, with the
/// one algorithm it signs with (chosen from the key, or asked for).
public struct MessageSigningKey: Sendable {
    public enum Material: Sendable {
        /// The shared secret, keyed into HMAC once (its bytes are not kept beside it).
        case shared(KeyedHMACSHA256)
        case privateKey(PrivateKey, PreparedEVPSigner)
    }

    public let material: Material
    public let algorithm: SignatureAlgorithm

    public init(sharedSecret: [UInt8]) throws {
        guard !sharedSecret.isEmpty else { throw SignatureError.invalidKey("the HMAC secret is empty") }
        guard let hmac = KeyedHMACSHA256(key: sharedSecret) else { throw SignatureError.invalidKey("OpenSSL cannot key HMAC-SHA256") }
        material = .shared(hmac)
        algorithm = .hmacSHA256
    }

    /// `algorithm` nil: the key's own (RSA keys: `rsa-pss-sha512`).
    public init(privateKey: PrivateKey, algorithm: SignatureAlgorithm? = nil) throws {
        let chosen = try SignatureAlgorithm.chosen(for: privateKey.evpKey, named: privateKey.algorithm, asked: algorithm, use: "sign")
        material = .privateKey(privateKey, try PreparedEVPSigner(key: privateKey.evpKey, algorithm: chosen))
        self.algorithm = chosen
    }

    public func sign(_ base: String) throws -> [UInt8] {
        try sign(bytes: Array(base.utf8))
    }

    /// The signature of `message`, base64-encoded onto `output`; an HMAC never leaves the stack.
    public func appendSignature(of message: [UInt8], base64To output: inout [UInt8]) throws {
        guard case .shared(let hmac) = material else {
            return try sign(bytes: message).withUnsafeBytes { Base64.append($0, to: &output) }
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { mac in
            message.withUnsafeBytes { hmac.authenticate($0, into: mac.baseAddress!) }
            Base64.append(UnsafeRawBufferPointer(mac), to: &output)
        }
    }

    public func sign(bytes message: [UInt8]) throws -> [UInt8] {
        switch material {
        case .shared(let hmac):
            return hmac.authenticate(message)
        case .privateKey(_, let signer):
            let signature = try signer.sign(message)
            guard let scalar = algorithm.ecdsaScalarLength else { return signature }
            return try ECDSARawSignature.fromDER(signature, scalarLength: scalar)
        }
    }
}

/// A key that checks an origin's RFC 9421 signatures: the shared secret or its public key.
public struct MessageVerifyingKey: Sendable {
    public enum Material: Sendable {
        case shared(KeyedHMACSHA256)
        case publicKey(PublicKey)
    }

    public let material: Material
    public let algorithm: SignatureAlgorithm

    public init(sharedSecret: [UInt8]) throws {
        guard !sharedSecret.isEmpty else { throw SignatureError.invalidKey("the HMAC secret is empty") }
        guard let hmac = KeyedHMACSHA256(key: sharedSecret) else { throw SignatureError.invalidKey("OpenSSL cannot key HMAC-SHA256") }
        material = .shared(hmac)
        algorithm = .hmacSHA256
    }

    public init(publicKey: PublicKey, algorithm: SignatureAlgorithm? = nil) throws {
        let chosen = try SignatureAlgorithm.chosen(for: publicKey.evpKey, named: publicKey.algorithm, asked: algorithm, use: "check")
        material = .publicKey(publicKey)
        self.algorithm = chosen
    }

    /// True only for a signature this key made over exactly `base`.
    public func verify(_ signature: [UInt8], over base: String) -> Bool {
        let message = Array(base.utf8)
        switch material {
        case .shared(let hmac):
            return ConstantTime.equal(hmac.authenticate(message), signature)
        case .publicKey(let key):
            var encoded = signature
            if let scalar = algorithm.ecdsaScalarLength {
                guard let der = ECDSARawSignature.toDER(signature, scalarLength: scalar) else { return false }
                encoded = der
            }
            return EVPSignature.verify(encoded, over: message, key: key.evpKey, algorithm: algorithm)
        }
    }
}
