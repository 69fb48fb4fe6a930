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

    /// The request head the HTTP/1.1 side serves, built from the fields (never written as
    /// octets only to be parsed back), and how its body follows on the HTTP/1.1 side. It is
    /// the head its HTTP/1.1 octets would parse to, and is refused for what `HeadParser` would
    /// refuse in them: a method or target HTTP/1.1 cannot carry, a field name or value it does
    /// not accept, a head over `maxHeadBytes`.
    public static func requestHead(_ fields: [HPACKField], endStream: Bool, maxHeadBytes: Int) throws(HTTPParseError) -> (head: RequestHead, body: BodyEncoding) {
        // First the pseudo-headers and what the framing needs, then the field lines in one
        // pass of writing into one array, located as the parser locates them.
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
        guard !method.isEmpty, method.allSatisfy(CharacterClass.isTokenChar) else { throw HTTPParseError(.badStartLine, "invalid method") }
        guard !path.isEmpty, path.allSatisfy(CharacterClass.isVisible) else { throw HTTPParseError(.badStartLine, "invalid request target") }
        var lines = FieldLines(capacity: size, count: fields.count + 2)
        // §8.3.1: :authority wins over a Host field.
        if let authority { try lines.append(host, authority) }
        for field in fields where Pseudo(field.name) == nil && field.name != cookie && (authority == nil || field.name != host) {
            try lines.append(field.name, field.value)
        }
        if cookies > 0 {
            // §8.2.3: the cookie fields become one again.
            try lines.append(cookie, fields.lazy.filter { $0.name == cookie }.map(\.value).joined(separator: cookieSeparator))
        }
        let body: BodyEncoding = endStream ? .none : (hasLength ? .contentLength : .chunked)
        if body == .chunked { try lines.append(transferEncoding, chunked) }
        // As the octets would count: the request line, the field lines and the blank line.
        let headBytes = method.count + 1 + path.count + requestLineEnd.count + lines.byteCount + 2
        guard headBytes <= maxHeadBytes else { throw HTTPParseError(.headTooLarge, "message head larger than \(maxHeadBytes) bytes") }
        let head = RequestHead(method: String(decoding: method, as: UTF8.self), target: String(decoding: path, as: UTF8.self),
                               version: .http11, headers: lines.fields)
        return (head, body)
    }

    /// Field lines written as a parsed head stores them (`name: value`, CRLF between lines),
    /// each checked as the parser checks a received line.
    private struct FieldLines {
        private var storage: [UInt8] = []
        private var slots: [HeaderFields.Slot] = []
        private var present = FieldNames()

        init(capacity: Int, count: Int) {
            storage.reserveCapacity(capacity)
            slots.reserveCapacity(count)
        }

        /// The lines' size in octets, each with its CRLF.
        var byteCount: Int { slots.isEmpty ? 0 : storage.count + 2 }
        var fields: HeaderFields { HeaderFields(bytes: storage, slots: slots, present: present) }

        mutating func append(_ name: [UInt8], _ value: some Sequence<UInt8>) throws(HTTPParseError) {
            guard name.allSatisfy(CharacterClass.isTokenChar) else { throw HTTPParseError(.badFieldName, "invalid character in a field name") }
            if !slots.isEmpty { storage += [0x0D, 0x0A] }
            let nameStart = storage.count
            storage += name
            storage += [0x3A, 0x20]
            let valueStart = storage.count
            storage += value
            let valid = storage.withUnsafeBytes { ByteScan.allFieldValueBytes($0, valueStart..<$0.count) }
            guard valid else { throw HTTPParseError(.badFieldValue, "invalid character in the value of a field") }
            let known = name.withUnsafeBufferPointer { FieldName($0) }
            slots.append(HeaderFields.Slot(name: nameStart..<(nameStart + name.count), value: valueStart..<storage.count, known: known))
            present.insert(known)
        }
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
    private static let transferEncoding = Array("transfer-encoding".utf8), chunked = Array("chunked".utf8)
    private static let cookieSeparator = Array("; ".utf8)

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
