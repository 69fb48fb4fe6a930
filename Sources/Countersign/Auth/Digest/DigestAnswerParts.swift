/// The parameters of a Digest answer that stay the same while the nonce does, written once per
/// session and nonce instead of once per request (escaping and Latin-1 checks included): the
/// head (`Digest username=…, realm=…`), the middle (`, algorithm=…, nonce=…`) and the tail
/// (`, opaque=…, userhash=true`). The request's `uri`, `nc`, `cnonce`, `qop` and `response` go
/// between them, in RFC 7616's order. Holds no secret (with `userhash`, a hash of the name).
struct DigestAnswerParts: Sendable {
    private let user: String
    private let nonce: String
    private let bytes: [UInt8]
    private let headEnd: Int
    private let middleEnd: Int

    init(session: DigestSession, user: String) {
        self.user = user
        nonce = session.nonce
        let algorithm = session.algorithm
        var writer = AuthParamWriter(scheme: "Digest")
        if session.userhash {
            writer.quoted("username", algorithm.hex("\(user):\(session.realm)"))
        } else if user.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) {
            writer.quoted("username", user)
        } else {
            // Non-ASCII names go in the RFC 8187 extended form (RFC 7616 §3.4.4).
            writer.token("username*", "UTF-8''" + DigestResponder.percentEncoded(user))
        }
        writer.quoted("realm", session.realm)
        headEnd = writer.bytes.count
        writer.token("algorithm", algorithm.description)
        writer.quoted("nonce", session.nonce)
        middleEnd = writer.bytes.count
        if let opaque = session.opaque { writer.quoted("opaque", opaque) }
        if session.userhash { writer.token("userhash", "true") }
        bytes = writer.bytes
    }

    /// Whether these parts answer for `user` with `nonce` (a new nonce makes new parts).
    func isFor(user: String, nonce: String) -> Bool { self.nonce == nonce && self.user == user }

    var head: ArraySlice<UInt8> { bytes[..<headEnd] }
    var middle: ArraySlice<UInt8> { bytes[headEnd..<middleEnd] }
    var tail: ArraySlice<UInt8> { bytes[middleEnd...] }

    /// What the parts add, for the store's byte budget (the strings are the session's and the
    /// credential's own, shared).
    var byteCount: Int { bytes.count }
}
