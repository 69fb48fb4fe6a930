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
        // What a server chooses is kept (learned, counted, persisted): past these lengths no
        // real server goes, and a hostile one would grow the proxy's memory with each answer.
        guard nonce.utf8.count <= Self.maxNonceBytes else {
            throw AuthError("the Digest challenge for realm \"\(realm.prefix(64))\" has a nonce of \(nonce.utf8.count) bytes, over the \(Self.maxNonceBytes) Countersign accepts; not answered")
        }
        let opaque = challenge[param: "opaque"]
        if let opaque, opaque.utf8.count > Self.maxOpaqueBytes {
            throw AuthError("the Digest challenge for realm \"\(realm.prefix(64))\" has an opaque of \(opaque.utf8.count) bytes, over the \(Self.maxOpaqueBytes) Countersign accepts; not answered")
        }
        self.realm = realm
        self.nonce = nonce
        domain = (challenge[param: "domain"] ?? "").split(separator: " ").map(String.init)
        self.opaque = opaque
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
        charset = challenge[param: "charset"].map { String($0.prefix(Self.maxCharsetBytes)) }
        userhash = challenge[param: "userhash"].map { TokenSyntax.equalsIgnoringCase($0, "true") } ?? false
    }
}

extension DigestChallenge {
    /// The longest nonce, `nextnonce` and opaque taken from a server (RFC 7616 sets no limit;
    /// servers send tens of bytes).
    public static let maxNonceBytes = 1024
    public static let maxOpaqueBytes = 1024
    static let maxCharsetBytes = 32
}

extension Substring {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
