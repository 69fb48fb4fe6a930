import CountersignSupport

/// A Digest `algorithm` value (RFC 7616 §3.3): the hash and whether A1 is the `-sess` variant.
public struct DigestAlgorithm: Hashable, Codable, Sendable, CustomStringConvertible {
    public var hash: HashFunction
    public var isSession: Bool

    public init(hash: HashFunction, isSession: Bool = false) {
        self.hash = hash
        self.isSession = isSession
    }

    public static let md5 = DigestAlgorithm(hash: .md5)
    public static let sha256 = DigestAlgorithm(hash: .sha256)
    public static let sha512_256 = DigestAlgorithm(hash: .sha512_256)

    /// Parses the token case-insensitively; nil for algorithms RFC 7616 does not define
    /// (httpbin's "SHA-512", for one).
    public init?(token: String) {
        var name = TokenSyntax.lowercased(token)
        isSession = name.hasSuffix("-sess")
        if isSession { name.removeLast("-sess".count) }
        switch name {
        case "md5": hash = .md5
        case "sha-256": hash = .sha256
        case "sha-512-256": hash = .sha512_256
        default: return nil
        }
    }

    /// The token as RFC 7616 spells it on the wire.
    public var description: String {
        let base: String
        switch hash {
        case .md5, .md4: base = "MD5"
        case .sha256: base = "SHA-256"
        case .sha512_256: base = "SHA-512-256"
        }
        return isSession ? base + "-sess" : base
    }

    /// H(data) as lower-case hex.
    func hex(_ text: String) -> String { Hex.encode(MessageDigest.hash(hash, text)) }

    /// H(data) as lower-case hex bytes, for a value being built as bytes.
    func hexBytes(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        MessageDigest.appendHexHash(hash, bytes, to: &out)
        return out
    }

    func hexBytes(_ text: String) -> [UInt8] { hexBytes(Array(text.utf8)) }
}
