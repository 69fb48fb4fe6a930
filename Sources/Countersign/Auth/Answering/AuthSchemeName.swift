/// The schemes Countersign answers. OAuth2 client-credentials tokens answer `bearer` challenges.
public enum AuthSchemeName: String, Codable, Sendable, CaseIterable, CustomStringConvertible {
    case basic
    case digest
    case ntlm
    case negotiate
    case bearer

    /// The scheme of a received challenge, compared case-insensitively; nil for schemes not answered here.
    public init?(challengeScheme: String) {
        self.init(rawValue: TokenSyntax.lowercased(challengeScheme))
    }

    public var description: String { rawValue }
}
