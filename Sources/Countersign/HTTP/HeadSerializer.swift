/// Writes heads back to bytes, field lines in the order and spelling they were received.
public enum HeadSerializer {
    public static func request(method: String, target: String, version: HTTPVersion = .http11, headers: HeaderFields) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + headers.count * 32)
        out.append(contentsOf: method.utf8)
        out.append(SP)
        out.append(contentsOf: target.utf8)
        out.append(SP)
        out.append(contentsOf: version.description.utf8)
        out.append(CR); out.append(LF)
        appendFields(headers, to: &out)
        return out
    }

    public static func response(_ head: ResponseHead) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + head.headers.count * 32)
        out.append(contentsOf: head.version.description.utf8)
        out.append(SP)
        out.append(contentsOf: String(head.status).utf8)
        out.append(SP)
        appendLatin1(head.reason, to: &out)
        out.append(CR); out.append(LF)
        appendFields(head.headers, to: &out)
        return out
    }

    static func appendFields(_ headers: HeaderFields, to out: inout [UInt8]) {
        for field in headers {
            out.append(contentsOf: field.name.utf8)
            out.append(COLON)
            out.append(SP)
            appendLatin1(field.value, to: &out)
            out.append(CR); out.append(LF)
        }
        out.append(CR); out.append(LF)
    }

    /// The inverse of the parser's ISO-8859-1 decoding.
    static func appendLatin1(_ text: String, to out: inout [UInt8]) {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            out.append(contentsOf: text.utf8)
        } else {
            for scalar in text.unicodeScalars {
                out.append(scalar.value < 0x100 ? UInt8(scalar.value) : UInt8(ascii: "?"))
            }
        }
    }
}

/// The fields that belong to one connection and must not be forwarded (RFC 9110 §7.6.1),
/// plus the proxy's own credentials.
public enum HopByHop {
    static let always = ["Connection", "Proxy-Connection", "Keep-Alive", "TE", "Trailer", "Upgrade",
                         "Proxy-Authorization", "Proxy-Authenticate", "Proxy-Authentication-Info"]

    static let neverNominated = ["Content-Length", "Transfer-Encoding", "Host"]

    /// Removes the hop-by-hop fields and those `Connection` names. With `keepUpgrade`, an
    /// `Upgrade` field and `Connection: upgrade` survive so a WebSocket handshake can pass.
    public static func strip(_ headers: inout HeaderFields, keepUpgrade: Bool = false) {
        // Most messages have none of these: skip the rewrite (and its copy) entirely.
        guard headers.contains(where: { field in always.contains { field.hasName($0) } }) else { return }
        // The `Connection` values are scanned in place for each remaining field's name: no
        // token list is built, as this runs for nearly every response (`keep-alive`).
        let connection = headers.values("Connection")
        headers.removeAll { field in
            if keepUpgrade && field.hasName("Upgrade") { return false }
            if always.contains(where: { field.hasName($0) }) { return true }
            // The message was framed by these; dropping them because `Connection` names
            // them would let the body be read as another request.
            if neverNominated.contains(where: { field.hasName($0) }) { return false }
            return connection.contains { value in
                value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true).contains {
                    ASCIICase.equalTrimmingOWS($0, field.name)
                }
            }
        }
        if keepUpgrade && headers.contains("Upgrade") { headers.append("Connection", "upgrade") }
    }

    /// Whether a request asks to switch protocols (e.g. a WebSocket handshake).
    public static func requestsUpgrade(_ headers: HeaderFields) -> Bool {
        headers.contains("Upgrade") && headers.listContains("Connection", token: "upgrade")
    }
}
