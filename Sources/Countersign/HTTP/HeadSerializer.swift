/// Writes heads back to bytes, field lines in the order and spelling they were received.
/// Every start line the proxy sends is written here, by `writeRequestLine` and
/// `writeStatusLine`, into a `HeadWriter`: in place for a forwarded head (`ForwardedHead`),
/// into an array for the heads the proxy makes or signs (`request`, `response`).
public enum HeadSerializer {
    public static func request(method: String, target: String, version: HTTPVersion = .http11, headers: HeaderFields) -> [UInt8] {
        var out: [UInt8] = []
        out.appendHead(bound: requestLineBound(method: method, target: target, version: version) + fieldsBound(headers)) {
            writeRequestLine(method: method, target: target, version: version, to: &$0)
            writeFields(headers, to: &$0)
        }
        return out
    }

    public static func response(_ head: ResponseHead) -> [UInt8] {
        var out: [UInt8] = []
        out.appendHead(bound: statusLineBound(reason: head.reason, version: head.version) + fieldsBound(head.headers)) {
            writeStatusLine(version: head.version, status: head.status, reason: head.reason, to: &$0)
            writeFields(head.headers, to: &$0)
        }
        return out
    }

    /// The most `writeRequestLine` takes.
    static func requestLineBound(method: String, target: String, version: HTTPVersion = .http11) -> Int {
        method.utf8.count + target.utf8.count + versionBound(version) + 4
    }

    /// `METHOD target HTTP/1.1` CRLF.
    static func writeRequestLine(method: String, target: String, version: HTTPVersion = .http11, to out: inout HeadWriter) {
        out.putUTF8(method)
        out.put(SP)
        out.putUTF8(target)
        // Forwarded requests are all HTTP/1.1: their version and line end go as one copy.
        if version == .http11 { return out.put(spelled: " HTTP/1.1\r\n") }
        out.put(SP)
        writeVersion(version, to: &out)
        out.putCRLF()
    }

    /// The most `writeStatusLine` takes (a status outside 100...999 as up to 20 characters; a
    /// reason's UTF-8 is never shorter than its ISO-8859-1).
    static func statusLineBound(reason: String, version: HTTPVersion = .http11) -> Int {
        reason.utf8.count + versionBound(version) + 24
    }

    /// `HTTP/1.1 200 OK` CRLF.
    static func writeStatusLine(version: HTTPVersion = .http11, status: Int, reason: String, to out: inout HeadWriter) {
        // The usual line, as one copy: written in parts it was ~130 instructions a response.
        if status == 200, version == .http11, reason == "OK" { return out.put(spelled: "HTTP/1.1 200 OK\r\n") }
        if version == .http11 {
            out.put(spelled: "HTTP/1.1 ")
        } else {
            writeVersion(version, to: &out)
            out.put(SP)
        }
        writeStatus(status, to: &out)
        out.put(SP)
        out.putLatin1(reason)
        out.putCRLF()
    }

    /// A status code's three digits (any other value as its decimal text, at most 20 bytes).
    @inline(__always)
    static func writeStatus(_ status: Int, to out: inout HeadWriter) {
        guard (100...999).contains(status) else { return out.putUTF8(String(status)) }
        out.put(0x30 + UInt8(status / 100))
        out.put(0x30 + UInt8(status / 10 % 10))
        out.put(0x30 + UInt8(status % 10))
    }

    /// `HTTP/1.0`, without building its `description` when both numbers are one digit.
    private static func writeVersion(_ version: HTTPVersion, to out: inout HeadWriter) {
        guard (0...9).contains(version.major), (0...9).contains(version.minor) else { return out.putUTF8(version.description) }
        out.put(spelled: "HTTP/")
        out.put(0x30 + UInt8(version.major))
        out.put(UInt8(ascii: "."))
        out.put(0x30 + UInt8(version.minor))
    }

    /// The most `writeVersion` takes.
    private static func versionBound(_ version: HTTPVersion) -> Int {
        (0...9).contains(version.major) && (0...9).contains(version.minor) ? 8 : version.description.utf8.count
    }

    /// The field lines as received, then the blank line.
    private static func writeFields(_ headers: HeaderFields, to out: inout HeadWriter) {
        headers.writeLines(to: &out, attending: FieldNames(), attendAll: false, context: ()) { _, _, _, _ in .kept }
        out.putCRLF()
    }

    /// The most `writeFields` takes.
    private static func fieldsBound(_ headers: HeaderFields) -> Int { headers.byteCount + 2 }
}

/// The fields that belong to one connection and must not be forwarded (RFC 9110 §7.6.1),
/// plus the proxy's own credentials.
public enum HopByHop {
    /// The fields that are hop-by-hop whatever `Connection` says: Connection, Proxy-Connection,
    /// Keep-Alive, TE, Trailer, Upgrade and the proxy's own auth fields.
    static let alwaysHopByHop = FieldNames(.connection, .proxyConnection, .keepAlive, .te, .trailer, .upgrade,
                                           .proxyAuthenticate, .proxyAuthorization, .proxyAuthenticationInfo)

    /// The message was framed by these; dropping them because `Connection` names them would
    /// let the body be read as another request.
    static let neverNominated = FieldNames(.contentLength, .transferEncoding, .host)

    /// Removes the hop-by-hop fields and those `Connection` names. With `keepUpgrade`, an
    /// `Upgrade` field and `Connection: upgrade` survive so a WebSocket handshake can pass.
    /// Works on the stored bytes: no field becomes a `String`.
    public static func strip(_ headers: inout HeaderFields, keepUpgrade: Bool = false) {
        if let collapsed = collapsedContentLength(headers) { headers.replaceOrAppend("Content-Length", collapsed) }
        let filter = Filter(headers, keepUpgrade: keepUpgrade)
        guard filter.dropsAny else { return }
        let received = headers
        headers.removeSlots { filter.drops($0, in: received) }
        if filter.addsConnectionUpgrade { headers.append("Connection", "upgrade") }
    }

    /// Which fields of a received section are left out when it is forwarded; decided on the
    /// stored bytes, so a forwarded head can be written without copying the section first.
    /// It holds no copy of the fields (the caller passes them to `drops`): a stored copy was
    /// two more retains and releases per forwarded head.
    struct Filter {
        private let keepUpgrade: Bool
        /// Whether any field is left out at all (most messages have no hop-by-hop field).
        let dropsAny: Bool
        /// Whether `Connection` names anything besides keep-alive and upgrade, whose fields
        /// are removed (or kept for an upgrade) anyway: usually it does not.
        let nominatesFields: Bool
        /// With `keepUpgrade`, the kept `Upgrade` is announced again by our own `Connection`.
        let addsConnectionUpgrade: Bool

        init(_ headers: HeaderFields, keepUpgrade: Bool) {
            self.keepUpgrade = keepUpgrade
            dropsAny = headers.containsAny(of: HopByHop.alwaysHopByHop)
            nominatesFields = dropsAny && !headers.connection.isDisjoint(with: .nominating)
            addsConnectionUpgrade = keepUpgrade && headers.contains(.upgrade)
        }

        /// Whether field `index` of `headers` (the fields this filter was made for) is left out.
        func drops(_ index: Int, in headers: HeaderFields) -> Bool {
            guard dropsAny else { return false }
            let known = headers.knownName(index)
            if keepUpgrade && known == .upgrade { return false }
            if alwaysHopByHop.contains(known) { return true }
            guard nominatesFields, !neverNominated.contains(known) else { return false }
            // The `Connection` values are scanned in place for each remaining field's name.
            return headers.nameBytes(index).withUnsafeBufferPointer { name in
                headers.anyConnectionElement { ASCIICase.sameIgnoringCase($0, name) }
            }
        }
    }

    /// Trailer fields never forwarded (RFC 9110 §6.5.1): framing, routing and connection fields
    /// belong to the header section, and gunicorn answers 400 to a request whose trailer has one.
    public static func isDroppedFromTrailer(_ field: HeaderField) -> Bool {
        let known = FieldName(field.name)
        return alwaysHopByHop.contains(known) || neverNominated.contains(known)
    }

    /// The one value to forward for a Content-Length repeated with one value (as lines or as
    /// a list, RFC 9110 §8.6), which was accepted as that value; nil when it was written once.
    /// nginx and Apache refuse the repetition and other parsers take the first element, so
    /// passing it on would split the hops' views.
    static func collapsedContentLength(_ headers: HeaderFields) -> String? {
        // One pass over the stored values (none without the field): the usual single, plain
        // value costs no String. A comma ends the count, as the value is collapsed then anyway.
        var lines = 0
        let listed = headers.anyValue(of: .contentLength) { value in
            lines += 1
            return value.contains(UInt8(ascii: ","))
        }
        guard lines > 1 || listed, let value = headers["Content-Length"] else { return nil }
        let first = value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true).first ?? value.utf8[...]
        let digits = first.filter { $0 != SP && $0 != HTAB }
        return String(decoding: digits, as: UTF8.self)
    }

    /// Whether a request asks to switch protocols (e.g. a WebSocket handshake).
    public static func requestsUpgrade(_ headers: HeaderFields) -> Bool {
        headers.contains(.upgrade) && headers.connection.contains(.upgrade)
    }
}
