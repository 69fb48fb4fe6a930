/// The hash functions the authentication schemes need, by their OpenSSL 3 fetch names.
public enum HashFunction: String, Codable, Sendable, CaseIterable {
    case md4
    case md5
    case sha256
    /// FIPS 180-4 SHA-512/256 (its own initial values), not SHA-512 cut to 256 bits.
    case sha512_256

    var openSSLName: String {
        switch self {
        case .md4: return "MD4"
        case .md5: return "MD5"
        case .sha256: return "SHA2-256"
        case .sha512_256: return "SHA2-512/256"
        }
    }

    public var outputLength: Int {
        switch self {
        case .md4, .md5: return 16
        case .sha256, .sha512_256: return 32
        }
    }
}
