/// A hash in lower-case hex, held inline (up to SHA-256's and SHA-512/256's 64 digits): H(A2)
/// kept from one answer to the next, a response compared or written.
struct DigestHex: Sendable {
    private var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    let count: Int

    /// Filled by `fill` (room for 64 digits), which returns how many it wrote.
    init(_ fill: (UnsafeMutablePointer<UInt8>) -> Int) {
        var storage = self.storage
        let count = withUnsafeMutableBytes(of: &storage) { fill($0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
        precondition(count > 0 && count <= 64, "OpenSSL could not compute a Digest hash")
        self.storage = storage
        self.count = count
    }

    private init(storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64), count: Int) {
        self.storage = storage
        self.count = count
    }

    /// Two hashes filled by one call of `fill` (room for 64 digits each), which returns how many
    /// it wrote to each: an answer's response and the server's expected rspauth.
    static func pair(_ fill: (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>) -> Int) -> (DigestHex, DigestHex) {
        var first: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        var second = first
        let count = withUnsafeMutableBytes(of: &first) { first in
            withUnsafeMutableBytes(of: &second) { second in
                fill(first.baseAddress!.assumingMemoryBound(to: UInt8.self), second.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
        }
        precondition(count > 0 && count <= 64, "OpenSSL could not compute a Digest hash")
        return (DigestHex(storage: first, count: count), DigestHex(storage: second, count: count))
    }

    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        withUnsafeBytes(of: storage) { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// `parts` joined by ":" with a trailing ":", on the stack, lent to `body`.
    static func withColonJoined<Part: Collection<UInt8>, Result>(_ parts: Part..., body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let length = parts.reduce(0) { $0 + $1.count + 1 }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { joined in
            var end = 0
            for part in parts {
                end = UnsafeMutableBufferPointer(rebasing: joined[end...]).initialize(fromContentsOf: part) + end
                joined[end] = UInt8(ascii: ":")
                end += 1
            }
            return body(UnsafeBufferPointer(joined))
        }
    }
}

/// H(A2) of the last answered request's method and uri, for its `response` and for the
/// server's `rspauth` (":" uri): a client asks for the same resource again and again, and
/// these are then hashed once (not with auth-int, whose A2 takes the body's hash). An object:
/// the session lends it to each answer, one reference rather than two strings.
final class DigestA2Memo: Sendable {
    let method: String
    let uri: String
    let request: DigestHex
    let rspauth: DigestHex

    init(method: String, uri: String, request: DigestHex, rspauth: DigestHex) {
        self.method = method
        self.uri = uri
        self.request = request
        self.rspauth = rspauth
    }

    func isFor(method: String, uri: String) -> Bool { self.uri == uri && self.method == method }
}
