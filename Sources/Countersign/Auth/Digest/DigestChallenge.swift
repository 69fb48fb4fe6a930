/// The parameters of a Digest challenge (RFC 7616 §3.3), validated.
public struct DigestChallenge: Equatable, Sendable {
    public var realm: String
    public var domain: [String]
    public var nonce: String
    public var opaque: String?
    public var stale: Bool
    public var algorithm: DigestAlgorithm
    /// The qop options offered, lower-cased; nil when the server sent none (RFC 2069 style).
    public var qopOptions: [String]?
    public var charset: String?
    public var userhash: Bool

    public init(_ challenge: Challenge) throws {
        guard challenge.hasScheme("Digest") else {
            throw AuthError("not a Digest challenge (scheme \(challenge.scheme))")
        }
        guard let realm = challenge.realm else {
            throw AuthError("the Digest challenge has no realm; the server is not RFC 7616 compliant")
        }
        guard let nonce = challenge[param: "nonce"], !nonce.isEmpty else {
            throw AuthError("the Digest challenge for realm \"\(realm)\" has no nonce")
        }
        self.realm = realm
        self.nonce = nonce
        domain = (challenge[param: "domain"] ?? "").split(separator: " ").map(String.init)
        opaque = challenge[param: "opaque"]
        stale = challenge[param: "stale"].map { TokenSyntax.equalsIgnoringCase($0, "true") } ?? false
        if let token = challenge[param: "algorithm"] {
            guard let algorithm = DigestAlgorithm(token: token) else {
                throw AuthError("the Digest challenge for realm \"\(realm)\" asks for algorithm \(token), which RFC 7616 does not define")
            }
            self.algorithm = algorithm
        } else {
            algorithm = .md5
        }
        qopOptions = challenge[param: "qop"].map { value in
            value.split(separator: ",").map { TokenSyntax.lowercased($0.trimmingSpaces()) }.filter { !$0.isEmpty }
        }
        if let options = qopOptions, !options.contains("auth"), !options.contains("auth-int") {
            throw AuthError("the Digest challenge for realm \"\(realm)\" offers qop \(options.joined(separator: ",")), none of which is auth or auth-int")
        }
        charset = challenge[param: "charset"]
        userhash = challenge[param: "userhash"].map { TokenSyntax.equalsIgnoringCase($0, "true") } ?? false
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
