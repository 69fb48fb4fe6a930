import COpenSSL

/// The algorithms of RFC 9421 §3.3 that Countersign makes and checks, by their registry names.
public enum SignatureAlgorithm: String, CaseIterable, Sendable {
    case hmacSHA256 = "hmac-sha256"
    case ed25519 = "ed25519"
    case ecdsaP256SHA256 = "ecdsa-p256-sha256"
    case ecdsaP384SHA384 = "ecdsa-p384-sha384"
    case rsaPSSSHA512 = "rsa-pss-sha512"
    case rsaV15SHA256 = "rsa-v1_5-sha256"

    /// The digest the EVP signer hashes with (none for HMAC's own and Ed25519's).
    var digest: OpaquePointer? {
        switch self {
        case .hmacSHA256, .ecdsaP256SHA256, .rsaV15SHA256: return EVP_sha256()
        case .ecdsaP384SHA384: return EVP_sha384()
        case .rsaPSSSHA512: return EVP_sha512()
        case .ed25519: return nil
        }
    }

    /// The size of r and of s in the raw `r || s` form RFC 9421 §3.3.4-5 sends.
    var ecdsaScalarLength: Int? {
        switch self {
        case .ecdsaP256SHA256: return 32
        case .ecdsaP384SHA384: return 48
        default: return nil
        }
    }

    /// The algorithm a key implies: Ed25519 keys sign `ed25519`, P-256 and P-384 keys their
    /// ECDSA, RSA keys `rsa-pss-sha512` unless `rsa-v1_5-sha256` is asked for.
    static func implied(byKeyType type: String, group: String?) -> SignatureAlgorithm? {
        switch type {
        case "ED25519": return .ed25519
        case "EC":
            switch group {
            case "prime256v1", "P-256": return .ecdsaP256SHA256
            case "secp384r1", "P-384": return .ecdsaP384SHA384
            default: return nil
            }
        case "RSA", "RSA-PSS": return .rsaPSSSHA512
        default: return nil
        }
    }

    /// Whether a key of this type can make or check this algorithm's signatures.
    func fits(keyType type: String, group: String?) -> Bool {
        switch self {
        case .hmacSHA256: return false
        case .rsaV15SHA256: return type == "RSA"
        case .rsaPSSSHA512: return type == "RSA" || type == "RSA-PSS"
        default: return Self.implied(byKeyType: type, group: group) == self
        }
    }

    /// The algorithm an EVP key signs or checks with: the one asked for, else the key's own,
    /// refused when the key cannot do it. One choice for signing and verifying keys alike.
    static func chosen(for key: OpaquePointer, named type: String, asked: SignatureAlgorithm?, use verb: String) throws -> SignatureAlgorithm {
        let group = EVPKeyFacts.group(key)
        guard let chosen = asked ?? implied(byKeyType: type, group: group) else {
            throw SignatureError.invalidKey("a \(type) key\(group.map { " on \($0)" } ?? "") can \(verb) none of RFC 9421's algorithms (Ed25519, ECDSA P-256/P-384, RSA)")
        }
        guard chosen.fits(keyType: type, group: group) else {
            throw SignatureError.invalidKey("a \(type) key cannot \(verb) \(chosen.rawValue)")
        }
        return chosen
    }
}
