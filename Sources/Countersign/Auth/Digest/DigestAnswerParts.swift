/// The parameters of a Digest answer that stay the same while the nonce does, written once per
/// session and nonce instead of once per request (escaping and Latin-1 checks included): the
/// head (`Digest username=…, realm=…`), the middle (`, algorithm=…, nonce=…`), the cnonce and
/// the tail (`, opaque=…, userhash=true`). The request's `uri`, `nc`, `qop` and `response` go
/// between them, in RFC 7616's order. Holds no secret (with `userhash`, a hash of the name).
///
/// The cnonce is drawn with the parts, so once per nonce (and user); why one cnonce for every
/// answer with a nonce is safe: RFC 7616 §5.11 and §5.12 want the client to vary the hashed input
/// in a way the server cannot choose, against chosen-plaintext and precomputed-dictionary
/// attacks. A cnonce drawn from the CSPRNG after the nonce arrived, and never sent with another
/// nonce (a `nextnonce`, a new challenge or a nonce set anew makes new parts, so a new cnonce),
/// was unknown to the server when it chose that nonce, as a per-request one would be. Replays
/// are told apart by the nonce count (§3.4: the server keeps its own copy of nc and refuses one
/// seen twice), which still grows by one with every answer and is never reused for a nonce.
/// With the `-sess` algorithms, H(A1) is then one session key per nonce, as §3.4.2 intends.
/// An object: the session lends it to each answer, one reference rather than four.
final class DigestAnswerParts: Sendable {
    private let user: String
    private let nonce: String
    /// The cnonce of every answer made with these parts.
    let cnonce: String
    /// `head`, `, uri="`, `"`, `middle`, `, nc=`, `, cnonce="` cnonce `", qop=`, `"`, `tail`:
    /// the pieces `value` copies between the request's values, in order.
    private let bytes: [UInt8]
    /// Where the pieces before the uri, the nc, the qop and the response end.
    private let beforeURI: Int
    private let beforeNC: Int
    private let beforeQop: Int
    /// Where the cnonce lies among the pieces (KD's input takes it from there).
    private let cnonceRange: Range<Int>
    /// The cnonce goes in as it is (no quoted-pair needed, ASCII): `value` may be used.
    private let cnonceIsPlain: Bool

    init(session: DigestSession, user: String, cnonce: String) {
        self.user = user
        self.cnonce = cnonce
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
        writer.appendWritten(Self.uriOpening)
        beforeURI = writer.bytes.count
        writer.appendWritten(Self.uriClosing)
        writer.token("algorithm", algorithm.description)
        writer.quoted("nonce", session.nonce)
        writer.appendWritten(Self.ncOpening)
        beforeNC = writer.bytes.count
        writer.appendWritten(Self.cnonceOpening)
        let cnonceStart = writer.bytes.count
        writer.appendWritten(Array(cnonce.utf8)[...])
        cnonceRange = cnonceStart..<writer.bytes.count
        writer.appendWritten(Self.qopOpening)
        beforeQop = writer.bytes.count
        writer.appendWritten(Self.responseClosing)
        if let opaque = session.opaque { writer.quoted("opaque", opaque) }
        if session.userhash { writer.token("userhash", "true") }
        bytes = writer.bytes
        cnonceIsPlain = Self.isPlain(cnonce.utf8)
    }

    /// Whether these parts answer for `user` with `nonce` (a new nonce makes new parts).
    func isFor(user: String, nonce: String) -> Bool { self.nonce == nonce && self.user == user }

    var head: ArraySlice<UInt8> { bytes[..<(beforeURI - Self.uriOpening.count)] }
    var middle: ArraySlice<UInt8> { bytes[(beforeURI + Self.uriClosing.count)..<(beforeNC - Self.ncOpening.count)] }
    var tail: ArraySlice<UInt8> { bytes[(beforeQop + Self.responseClosing.count)...] }

    /// The whole value with a request's uri, nc, qop and response between the kept pieces, in
    /// RFC 7616's order, copied into one array of its exact size: the usual answer. Nil when
    /// the uri or cnonce would need escaping or is not ASCII (`AuthParamWriter` writes those),
    /// or the uri's bytes are not at hand as one buffer (a bridged string). `nc` and `qop` are
    /// the responder's own (hex digits, a token). The uri is read where it lies and the qop
    /// from its static text: a copy of either string to lend its bytes cost a retain and a
    /// release, and a closure each.
    func value(uri: String, nc: UnsafeRawBufferPointer, qop: DigestQop, response: UnsafeRawBufferPointer) -> [UInt8]? {
        guard cnonceIsPlain else { return nil }
        let qopToken = qop.tokenBytes
        let qop = UnsafeRawBufferPointer(start: qopToken.utf8Start, count: qopToken.utf8CodeUnitCount)
        return uri.utf8.withContiguousStorageIfAvailable { uri -> [UInt8]? in
            guard Self.isPlain(uri) else { return nil }
            return bytes.withUnsafeBytes { kept in
                let count = kept.count + uri.count + nc.count + qop.count + Self.responseOpening.count + response.count
                // Joined on the stack, then copied into an array of that size at once:
                // `init(unsafeUninitializedCapacity:)` (and `init(repeating:count:)`) reach the
                // standard library's unspecialized allocation, which looks the storage's type up
                // at run time (~530 instructions an answer); `init(_:)` of a buffer allocates from
                // the specialized code, and appending piece by piece cost ~100 a piece.
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { out in
                    var cursor = Cursor(out.baseAddress!)
                    cursor.put(UnsafeRawBufferPointer(rebasing: kept[..<beforeURI]))
                    cursor.put(UnsafeRawBufferPointer(uri))
                    cursor.put(UnsafeRawBufferPointer(rebasing: kept[beforeURI..<beforeNC]))
                    cursor.put(nc)
                    cursor.put(UnsafeRawBufferPointer(rebasing: kept[beforeNC..<beforeQop]))
                    cursor.put(qop)
                    cursor.put(Self.responseOpening)
                    cursor.put(response)
                    cursor.put(UnsafeRawBufferPointer(rebasing: kept[beforeQop...]))
                    return [UInt8](UnsafeBufferPointer(start: out.baseAddress, count: out.baseAddress!.distance(to: cursor.at)))
                }
            }
        } ?? nil
    }

    /// KD's response and rspauth with a qop (`DigestNoncePrefix.answer`) over the input after
    /// the nonce, nc ":" cnonce ":" qop ":", joined from the cnonce's bytes kept here: on the
    /// stack for the usual answer, whose cnonce is ours (32 digits), in a temporary allocation
    /// past 128 bytes. The hashes are made where the input lies: handed back out of a generic
    /// closure helper as its `Result`, they were copied twice more (~100 instructions an
    /// answer; made of strings, the input cost ~250).
    func answer(prefix: DigestNoncePrefix, nc: DigestNonceCount, qop: DigestQop, a2: DigestHex,
                rspauthA2: DigestHex) -> (response: DigestHex, rspauth: DigestHex) {
        let qopToken = qop.tokenBytes
        let length = 8 + cnonceRange.count + qopToken.utf8CodeUnitCount + 3
        func hashes(joinedAt start: UnsafeMutablePointer<UInt8>) -> (response: DigestHex, rspauth: DigestHex) {
            let count = bytes.withUnsafeBytes { kept in
                Self.putMiddle(at: start, nc: nc, cnonce: UnsafeRawBufferPointer(rebasing: kept[cnonceRange]), qop: qopToken)
            }
            return prefix.answer(middle: UnsafeBufferPointer(start: start, count: count), a2: a2, rspauthA2: rspauthA2)
        }
        guard length <= MemoryLayout<MiddleSpace>.size else {
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { hashes(joinedAt: $0.baseAddress!) }
        }
        var space: MiddleSpace = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        return withUnsafeMutableBytes(of: &space) { hashes(joinedAt: $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
    }

    /// Room on the stack for `answer`'s nc ":" cnonce ":" qop ":" (128 bytes).
    private typealias MiddleSpace = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                                     UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    /// Writes nc ":" cnonce ":" qop ":" at `start` (room checked by the caller); the count written.
    @inline(__always)
    private static func putMiddle(at start: UnsafeMutablePointer<UInt8>, nc: DigestNonceCount, cnonce: UnsafeRawBufferPointer,
                                  qop: StaticString) -> Int {
        var cursor = Cursor(start)
        nc.withBytes { cursor.put($0) }
        cursor.put(byte: UInt8(ascii: ":"))
        cursor.put(cnonce)
        cursor.put(byte: UInt8(ascii: ":"))
        cursor.put(UnsafeRawBufferPointer(start: qop.utf8Start, count: qop.utf8CodeUnitCount))
        cursor.put(byte: UInt8(ascii: ":"))
        return start.distance(to: cursor.at)
    }

    /// What the parts add, for the store's byte budget (the strings are the session's and the
    /// credential's own, shared).
    var byteCount: Int { bytes.count + cnonce.utf8.count }

    private static func isPlain<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Bool {
        !bytes.contains { $0 >= 0x80 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
    }

    /// The same for a request's uri, looked at on every answer: eight bytes at a time, then the
    /// rest byte by byte (a byte at a time cost ~10 instructions a byte of the uri). A word
    /// fails when a byte has its high bit set, or is `"` or `\` (the exact "has a zero byte"
    /// test on the word with each pattern xored out).
    private static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        if let base = bytes.baseAddress {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            while index + 8 <= bytes.count {
                let word = UnsafeRawPointer(base).loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\""))), backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
                let hasQuote = (quotes &- ones) & ~quotes, hasBackslash = (backslashes &- ones) & ~backslashes
                guard (word | hasQuote | hasBackslash) & highs == 0 else { return false }
                index += 8
            }
        }
        return isPlain(bytes[index...])
    }

    private static let uriOpening = Array(#", uri=""#.utf8)[...]
    private static let uriClosing = Array(#"""#.utf8)[...]
    private static let ncOpening = Array(", nc=".utf8)[...]
    private static let cnonceOpening = Array(#", cnonce=""#.utf8)[...]
    private static let qopOpening = Array(#"", qop="#.utf8)[...]
    private static let responseClosing = Array(#"""#.utf8)[...]
    private static var responseOpening: UnsafeRawBufferPointer {
        let literal: StaticString = #", response=""#
        return UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
    }

    /// Where `value` writes next.
    private struct Cursor {
        var at: UnsafeMutablePointer<UInt8>

        init(_ start: UnsafeMutablePointer<UInt8>) { at = start }

        @inline(__always)
        mutating func put(_ piece: UnsafeRawBufferPointer) {
            guard let base = piece.baseAddress else { return }
            UnsafeMutableRawPointer(at).copyMemory(from: base, byteCount: piece.count)
            at += piece.count
        }

        @inline(__always)
        mutating func put(byte: UInt8) {
            at.pointee = byte
            at += 1
        }
    }
}
