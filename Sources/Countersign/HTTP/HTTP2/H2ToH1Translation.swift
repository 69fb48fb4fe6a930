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
        // First the pseudo-headers and what the framing needs, then the lines in one pass of
        // writing into one array (fields were copied into a second list and their names into
        // strings before: most of the translation's cost).
        var method: [UInt8] = [], path: [UInt8] = [], authority: [UInt8]?
        var hasLength = false, cookies = 0, size = 64
        for field in fields {
            size += field.name.count + field.value.count + 4
            switch Pseudo(field.name) {
            case .method?: method = field.value
            case .path?: path = field.value
            case .authority?: authority = field.value
            case .scheme?, .protocol?: break
            case nil:
                if field.name == cookie { cookies += 1 } else if field.name == contentLength { hasLength = true }
            }
        }
        // CONNECT names its target in :authority (§8.5).
        if path.isEmpty, let authority { path = authority }
        var out: [UInt8] = []
        out.reserveCapacity(size)
        out += method
        out.append(0x20)
        out += path
        out += requestLineEnd
        // §8.3.1: :authority wins over a Host field.
        if let authority { appendLine(host, authority, to: &out) }
        for field in fields where Pseudo(field.name) == nil && field.name != cookie && (authority == nil || field.name != host) {
            appendLine(field.name, field.value, to: &out)
        }
        if cookies > 0 {
            // §8.2.3: the cookie fields become one again.
            out += cookie
            out += [0x3A, 0x20]
            var first = true
            for field in fields where field.name == cookie {
                if !first { out += [0x3B, 0x20] }
                out += field.value
                first = false
            }
            out += [0x0D, 0x0A]
        }
        let body: BodyEncoding = endStream ? .none : (hasLength ? .contentLength : .chunked)
        if body == .chunked { out += chunkedLine }
        out += [0x0D, 0x0A]
        return (out, body)
    }

    /// The request pseudo-headers this translation reads or drops; any other name is a field.
    private enum Pseudo {
        case method, path, authority, scheme, `protocol`

        init?(_ name: [UInt8]) {
            guard name.first == UInt8(ascii: ":") else { return nil }
            switch name {
            case methodName: self = .method
            case pathName: self = .path
            case authorityName: self = .authority
            case schemeName: self = .scheme
            case protocolName: self = .protocol
            default: return nil
            }
        }
    }

    private static let methodName = Array(":method".utf8), pathName = Array(":path".utf8)
    private static let authorityName = Array(":authority".utf8), schemeName = Array(":scheme".utf8)
    private static let protocolName = Array(":protocol".utf8), host = Array("host".utf8)
    private static let requestLineEnd = Array(" HTTP/1.1\r\n".utf8)
    private static let chunkedLine = Array("transfer-encoding: chunked\r\n".utf8)

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
