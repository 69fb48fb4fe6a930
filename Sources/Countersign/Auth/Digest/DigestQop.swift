/// The qop an answer goes with (RFC 7616 §3.4), chosen once and then compared as a value:
/// each answer asked whether it was auth-int twice, a string comparison each time.
enum DigestQop {
    case auth
    case authInt

    /// As it is written in the answer and hashed into it.
    var token: String { self == .auth ? "auth" : "auth-int" }
    /// The same bytes, for KD's input joined on the stack (`DigestAnswerParts.answer`).
    var tokenBytes: StaticString { self == .auth ? "auth" : "auth-int" }
}

/// Which qop values a session's challenge offered, read from its `qop` list once (when the
/// session's fields are set) instead of comparing the strings for every answer.
struct DigestQopOffer: OptionSet, Sendable {
    let rawValue: UInt8

    /// The challenge had a `qop` list (RFC 2069 compatibility when not).
    static let listed = DigestQopOffer(rawValue: 1)
    static let auth = DigestQopOffer(rawValue: 2)
    static let authInt = DigestQopOffer(rawValue: 4)

    init(rawValue: UInt8) { self.rawValue = rawValue }

    init(_ options: [String]?) {
        guard let options else { self = []; return }
        self = .listed
        if options.contains("auth") { insert(.auth) }
        if options.contains("auth-int") { insert(.authInt) }
    }
}
