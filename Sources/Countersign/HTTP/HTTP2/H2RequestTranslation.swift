/// An HTTP/2 request as HTTP/1.1 octets (RFC 9113 §8.3.1, RFC 9112): the request line from
/// `:method` and `:path`, `Host` from `:authority`, cookies joined again (§8.2.3), and the body
/// framed the way the stream will deliver it. The head was validated by `H2Connection`
/// (connection-specific fields and any TE but `trailers` were refused there).
public enum H2RequestTranslation {
    /// How the stream's DATA reaches the HTTP/1.1 side.
    public enum BodyEncoding: Equatable, Sendable {
        /// The stream ended with its head: no body.
        case none
        /// `content-length` was given: DATA passes as it is; trailers cannot follow and are dropped.
        case contentLength
        /// Length unknown: each DATA becomes a chunk, and trailers the chunked trailer section.
        case chunked
    }

    private static let cookie = Array("cookie".utf8)
    private static let contentLength = Array("content-length".utf8)

    /// The request head as HTTP/1.1 octets, and how its body follows.
    public static func head(_ fields: [HPACKField], endStream: Bool) -> (bytes: [UInt8], body: BodyEncoding) {
        var method: [UInt8] = [], path: [UInt8] = [], authority: [UInt8]?
        var regular: [HPACKField] = []
        var cookies: [[UInt8]] = []
        var hasLength = false
        for field in fields {
            switch field.nameText {
            case ":method": method = field.value
            case ":path": path = field.value
            case ":authority": authority = field.value
            case ":scheme", ":protocol": break
            default:
                if field.name == cookie {
                    cookies.append(field.value)
                    continue
                }
                if field.name == contentLength { hasLength = true }
                regular.append(field)
            }
        }
        // CONNECT names its target in :authority (§8.5).
        if path.isEmpty, let authority { path = authority }
        var out = method + [0x20] + path + Array(" HTTP/1.1\r\n".utf8)
        // §8.3.1: :authority wins over a Host field.
        if let authority {
            out += Array("host: ".utf8) + authority + [0x0D, 0x0A]
            regular.removeAll { $0.name == Array("host".utf8) }
        }
        for field in regular { appendLine(field.name, field.value, to: &out) }
        if !cookies.isEmpty { appendLine(cookie, Array(cookies.joined(separator: Array("; ".utf8))), to: &out) }
        let body: BodyEncoding = endStream ? .none : (hasLength ? .contentLength : .chunked)
        if body == .chunked { out += Array("transfer-encoding: chunked\r\n".utf8) }
        out += [0x0D, 0x0A]
        return (out, body)
    }

    /// One DATA frame's octets under `encoding` (an empty one adds nothing: a zero-length
    /// chunk would end the body).
    public static func data(_ data: [UInt8], as encoding: BodyEncoding) -> [UInt8] {
        guard encoding == .chunked else { return data }
        guard !data.isEmpty else { return [] }
        return Array(String(data.count, radix: 16).utf8) + [0x0D, 0x0A] + data + [0x0D, 0x0A]
    }

    /// The end of the body: the last chunk with `trailers` under chunked, nothing otherwise.
    public static func end(trailers: [HPACKField], as encoding: BodyEncoding) -> [UInt8] {
        guard encoding == .chunked else { return [] }
        var out = Array("0\r\n".utf8)
        for field in trailers { appendLine(field.name, field.value, to: &out) }
        return out + [0x0D, 0x0A]
    }

    private static func appendLine(_ name: [UInt8], _ value: [UInt8], to out: inout [UInt8]) {
        out += name
        out += [0x3A, 0x20]
        out += value
        out += [0x0D, 0x0A]
    }
}
