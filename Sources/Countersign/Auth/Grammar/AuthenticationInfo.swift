import CountersignHTTP

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
    /// One pass over the parameters; the first of a repeated name counts, across fields too.
    public static func parse(fieldValues: [String]) -> AuthenticationInfo? {
        var info = AuthenticationInfo()
        var any = false
        for field in fieldValues {
            for param in ChallengeParser.parseParameters(fieldValue: field) {
                any = true
                switch param.name.utf8.count {
                case 9 where ASCIICase.equal(param.name, "nextnonce"): info.nextnonce = info.nextnonce ?? param.value
                case 7 where ASCIICase.equal(param.name, "rspauth"): info.rspauth = info.rspauth ?? param.value
                case 6 where ASCIICase.equal(param.name, "cnonce"): info.cnonce = info.cnonce ?? param.value
                case 3 where ASCIICase.equal(param.name, "qop"): info.qop = info.qop ?? param.value
                case 2 where ASCIICase.equal(param.name, "nc"): info.nc = info.nc ?? param.value
                default: break
                }
            }
        }
        return any ? info : nil
    }
}
