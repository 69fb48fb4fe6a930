/// Every key of the verified path, anchor included, must be one a forger cannot break or
/// that no conforming CA issues (CA/Browser Forum 6.1.5; what rustls-webpki and Chrome
/// accept): RSA of at least 2048 bits in whole bytes, ECDSA on P-256, P-384 or P-521 with
/// named parameters, Ed25519 or Ed448. DSA, P-192 and RSA-1024 are refused.
public struct KeyStrengthCheck: VerifiedPathCheck {
    public let storeLabel: String

    public init(storeLabel: String) {
        self.storeLabel = storeLabel
    }

    public func refusal(path: [CertificateSummary]) -> TrustRefusal? {
        for (depth, certificate) in path.enumerated() {
            if let weakness = KeyStrengthCheck.weakness(of: certificate.profile.publicKey) {
                return TrustRefusal(kind: .invalidChain,
                                    details: "weak key: \(VerifiedPath.name(certificate, depth: depth)) has \(weakness)")
            }
        }
        return nil
    }

    static let namedCurves = ["prime256v1": "P-256", "secp384r1": "P-384", "secp521r1": "P-521"]

    /// What is wrong with `key`, as the end of a sentence, or nil when it is strong enough.
    static func weakness(of key: CertificateProfile.PublicKey) -> String? {
        switch key {
        case .rsa(let bits) where bits < 2048:
            return "a \(bits)-bit RSA key (at least 2048 bits are required)"
        case .rsa(let bits) where bits % 8 != 0:
            return "a \(bits)-bit RSA key (the modulus must be a whole number of bytes)"
        case .rsa, .ed25519, .ed448:
            return nil
        case .ec(let curve?) where namedCurves[curve] != nil:
            return nil
        case .ec(let curve?):
            return "an EC key on curve \(curve) (P-256, P-384 or P-521 are required)"
        case .ec(nil):
            return "an EC key with explicit curve parameters (a named curve is required)"
        case .dsa(let bits):
            return "a \(bits)-bit DSA key (DSA is not accepted)"
        case .other(let name):
            return "a \(name) key (RSA, ECDSA or EdDSA are required)"
        }
    }
}
