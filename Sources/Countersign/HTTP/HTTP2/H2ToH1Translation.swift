/// An HTTP/2 message as HTTP/1.1 octets (RFC 9113 §8.3, RFC 9112). A request: the request line
/// from `:method` and `:path`, `Host` from `:authority`, cookies joined again (§8.2.3). A
/// response: the status line from `:status`. Either way the body is framed the way the stream
/// will deliver it. Heads were validated by `H2Connection` (connection-specific fields and any
/// TE but `trailers` were refused there).
public enum H2ToH1Translation {
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

    /// A response head as HTTP/1.1 octets, and how its body follows; `.none` for an interim head
    /// (more heads follow) and for a response without a body (HEAD, 204, 304, or the stream
    /// ended with its head: then `content-length: 0` says so, as a close would otherwise).
    public static func responseHead(_ fields: [HPACKField], endStream: Bool, requestMethod: String) -> (bytes: [UInt8], body: BodyEncoding) {
        var status = 0
        var out: [UInt8] = []
        var hasLength = false
        for field in fields {
            if field.name == Array(":status".utf8) {
                status = Int(field.valueText) ?? 0
            } else if field.name.first != UInt8(ascii: ":") {
                if field.name == contentLength { hasLength = true }
                appendLine(field.name, field.value, to: &out)
            }
        }
        let bodiless = status < 200 || status == 204 || status == 304 || requestMethod == "HEAD"
        let body: BodyEncoding
        if bodiless {
            body = .none
        } else if endStream {
            if !hasLength { out += Array("content-length: 0\r\n".utf8) }
            body = .none
        } else if hasLength {
            body = .contentLength
        } else {
            out += Array("transfer-encoding: chunked\r\n".utf8)
            body = .chunked
        }
        return (Array("HTTP/1.1 \(status) \r\n".utf8) + out + [0x0D, 0x0A], body)
    }

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
