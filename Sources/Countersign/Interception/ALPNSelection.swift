/// Server-side ALPN choice: Countersign speaks HTTP/1.1 to clients and nothing else.
enum ALPNSelection {
    static let http11: [UInt8] = Array("http/1.1".utf8)

    /// The byte range of "http/1.1" inside the client's wire-format list (length-prefixed
    /// names), or nil when the client did not offer it; the handshake then goes on without
    /// ALPN, and a client that offered only h2 falls back to HTTP/1.1 as RFC 7301 allows.
    static func http11Range(inClientList list: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        var offset = 0
        while offset < list.count {
            let length = Int(list[offset])
            let start = offset + 1
            guard length > 0, start + length <= list.count else { return nil }
            if length == http11.count && list[start..<(start + length)].elementsEqual(http11) {
                return start..<(start + length)
            }
            offset = start + length
        }
        return nil
    }
}
