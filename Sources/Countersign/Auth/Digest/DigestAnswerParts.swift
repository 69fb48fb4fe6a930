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

    /// The whole value with a request's parameters (`qop` answers) between the kept parts, in
    /// RFC 7616's order, copied into one array of its exact size: the usual answer. Nil when a
    /// value would need escaping or is not ASCII (`AuthParamWriter` writes those).
    func value(uri: String, nc: String, cnonce: String, qop: String, response: UnsafeRawBufferPointer) -> [UInt8]? {
        var uri = uri, nc = nc, cnonce = cnonce, qop = qop
        func plain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
            !bytes.contains { $0 >= 0x80 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        }
        return uri.withUTF8 { uri in
            nc.withUTF8 { nc in
                cnonce.withUTF8 { cnonce in
                    qop.withUTF8 { qop in
                        guard plain(uri), plain(nc), plain(cnonce), plain(qop) else { return nil }
                        let count = bytes.count + uri.count + nc.count + cnonce.count + qop.count + response.count + Self.requestLiteralBytes
                        return bytes.withUnsafeBytes { kept in
                            [UInt8](unsafeUninitializedCapacity: count) { out, written in
                                var cursor = 0
                                func put(_ piece: UnsafeRawBufferPointer) {
                                    UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(out)[cursor...]).copyMemory(from: piece)
                                    cursor += piece.count
                                }
                                func put(_ piece: UnsafeBufferPointer<UInt8>) { put(UnsafeRawBufferPointer(piece)) }
                                func put(_ literal: StaticString) {
                                    put(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
                                }
                                put(UnsafeRawBufferPointer(rebasing: kept[..<headEnd]))
                                put(", uri=\"")
                                put(uri)
                                put("\"")
                                put(UnsafeRawBufferPointer(rebasing: kept[headEnd..<middleEnd]))
                                put(", nc=")
                                put(nc)
                                put(", cnonce=\"")
                                put(cnonce)
                                put("\", qop=")
                                put(qop)
                                put(", response=\"")
                                put(response)
                                put("\"")
                                put(UnsafeRawBufferPointer(rebasing: kept[middleEnd...]))
                                written = cursor
                            }
                        }
                    }
                }
            }
        }
    }

    /// `, uri="` `"` `, nc=` `, cnonce="` `", qop=` `, response="` `"`: what `value` writes around the request's values.
    private static let requestLiteralBytes = 7 + 1 + 5 + 10 + 7 + 12 + 1

    /// What the parts add, for the store's byte budget (the strings are the session's and the
    /// credential's own, shared).
    var byteCount: Int { bytes.count }
}
