/// `Authentication-Info` / `Proxy-Authentication-Info` (RFC 9110 §11.6.3, RFC 7616 §3.5):
/// what a Digest server says after accepting an answer.
public struct AuthenticationInfo: Equatable, Sendable {
    public var nextnonce: String?
    public var rspauth: String?
    public var qop: String?
    public var nc: String?
    public var cnonce: String?

    public init(nextnonce: String? = nil, rspauth: String? = nil, qop: String? = nil, nc: String? = nil, cnonce: String? = nil) {
        self.nextnonce = nextnonce
        self.rspauth = rspauth
        self.qop = qop
        self.nc = nc
        self.cnonce = cnonce
    }

    /// Nil when no field carries any parameter.
    public static func parse(fieldValues: [String]) -> AuthenticationInfo? {
        let params = fieldValues.flatMap { ChallengeParser.parseParameters(fieldValue: $0) }
        guard !params.isEmpty else { return nil }
        func value(_ name: String) -> String? {
            params.first { TokenSyntax.equalsIgnoringCase($0.name, name) }?.value
        }
        return AuthenticationInfo(nextnonce: value("nextnonce"), rspauth: value("rspauth"), qop: value("qop"),
                                  nc: value("nc"), cnonce: value("cnonce"))
    }
}
