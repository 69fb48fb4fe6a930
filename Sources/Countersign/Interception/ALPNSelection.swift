import COpenSSL

/// Server-side ALPN choice for intercepted clients: `h2` when the client offers it and the
/// host allows HTTP/2 (`hosts.*.http2`), else `http/1.1`; a client offering neither goes on
/// without ALPN (RFC 7301 allows it) and speaks HTTP/1.1.
public enum ALPNSelection {
    static let http11: [UInt8] = Array("http/1.1".utf8)
    static let h2: [UInt8] = Array("h2".utf8)

    /// The protocol an SSL* negotiated, once its handshake is done.
    public enum Negotiated: Equatable, Sendable {
        case http11
        case h2
    }

    /// Marks an SSL* whose host allows HTTP/2, read back by the selection callback. Any non-nil
    /// value means yes; the slot holds no object, so nothing is freed with the SSL.
    private static let allowsH2Slot: Int32 = CRYPTO_get_ex_new_index(CRYPTO_EX_INDEX_SSL, 0, nil, nil, nil, nil)
    private static let yes = UnsafeMutableRawPointer(bitPattern: 1)

    static func allowH2(on ssl: OpaquePointer) {
        _ = SSL_set_ex_data(ssl, allowsH2Slot, yes)
    }

    static func allowsH2(_ ssl: OpaquePointer?) -> Bool {
        guard let ssl else { return false }
        return SSL_get_ex_data(ssl, allowsH2Slot) != nil
    }

    /// What the handshake of `ssl` settled on.
    public static func negotiated(_ ssl: OpaquePointer) -> Negotiated {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length == UInt32(h2.count) else { return .http11 }
        return UnsafeBufferPointer(start: data, count: Int(length)).elementsEqual(h2) ? .h2 : .http11
    }

    /// The byte range of the chosen name inside the client's wire-format list (length-prefixed
    /// names): `h2` first when allowed and offered, whatever the client's order, then "http/1.1".
    static func choice(inClientList list: UnsafeBufferPointer<UInt8>, allowH2: Bool) -> Range<Int>? {
        if allowH2, let range = range(of: h2, in: list) { return range }
        return range(of: http11, in: list)
    }

    private static func range(of name: [UInt8], in list: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        var offset = 0
        while offset < list.count {
            let length = Int(list[offset])
            let start = offset + 1
            guard length > 0, start + length <= list.count else { return nil }
            if length == name.count && list[start..<(start + length)].elementsEqual(name) {
                return start..<(start + length)
            }
            offset = start + length
        }
        return nil
    }
}
