import CountersignSupport

/// A SHA-256 pin of a SubjectPublicKeyInfo, written `sha256//BASE64` (curl's form) or
/// `sha256/BASE64`; rendered in curl's form.
public struct PublicKeyPin: Hashable, Sendable, CustomStringConvertible {
    /// The 32-byte SHA-256 of the DER SubjectPublicKeyInfo.
    public let sha256: [UInt8]

    public init(sha256: [UInt8]) throws {
        guard sha256.count == 32 else {
            throw TrustError("a SHA-256 pin is 32 bytes, got \(sha256.count)")
        }
        self.sha256 = sha256
    }

    /// The pin of `certificate`'s public key.
    public init(of certificate: Certificate) {
        sha256 = certificate.spkiSHA256
    }

    /// Parses `sha256//BASE64` or `sha256/BASE64` (the prefix is case-insensitive).
    public init(parsing text: String) throws {
        let trimmed = text.trimmingSpaces
        let lowered = trimmed.lowercased()
        guard lowered.hasPrefix("sha256/") else {
            throw TrustError("pin \"\(text)\" must start with sha256// followed by base64 (as curl writes it)")
        }
        guard let bytes = Base64.decodePinDigest(afterSlash: Substring(trimmed).dropFirst("sha256/".count)) else {
            throw TrustError("pin \"\(text)\" is not valid base64 after sha256//")
        }
        guard bytes.count == 32 else {
            throw TrustError("pin \"\(text)\" decodes to \(bytes.count) bytes; a SHA-256 pin is 32 bytes")
        }
        sha256 = bytes
    }

    /// `sha256//BASE64`, the form curl's `--pinnedpubkey` and our config take.
    public var description: String { "sha256//" + Base64.encode(sha256) }
}

extension String {
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
