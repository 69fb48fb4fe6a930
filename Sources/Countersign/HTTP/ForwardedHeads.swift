/// The heads a forwarding proxy writes: the client's request as it goes upstream and the
/// upstream's responses as they go to the client. Pure rewrites, no I/O.
public enum ForwardedHeads {
    public static let via = via(.http11).description

    /// RFC 9110 §7.6.3: the received-protocol is the version of the message as it was received
    /// (`2` for HTTP/2, whose version has no minor part).
    static func via(_ version: HTTPVersion) -> StaticString {
        switch version {
        case .http10: return "1.0 countersign"
        case .http2: return "2 countersign"
        default: return "1.1 countersign"
        }
    }

    /// The same as a whole line of the proxy's own.
    static func viaLine(_ version: HTTPVersion) -> FieldRewrite.OwnLine {
        switch version {
        case .http10: return .via10
        case .http2: return .via2
        default: return .via11
        }
    }

    /// The request head for one attempt. `answers` are the auth headers this attempt carries;
    /// a `handshakeLeg` (NTLM, Negotiate) carries no body; `ownExpect` adds our own
    /// `Expect: 100-continue` while the body is held for a challenge. `receivedIn` is the version
    /// the client sent the request in when that is not the head's own (an HTTP/2 stream
    /// translated to HTTP/1.1).
    public static func requestHead(_ head: RequestHead, framing: BodyFraming, target: String, hostField: String,
                                   answers: AnswerFields, handshakeLeg: Bool, ownExpect: Bool,
                                   receivedIn: HTTPVersion? = nil) -> ForwardedHead {
        ForwardedHead(method: head.method, target: target, received: head.headers,
                      keepUpgrade: HopByHop.requestsUpgrade(head.headers)) { fields in
            // RFC 9112 §3.2.2: the target's authority replaces whatever Host the client sent.
            fields.setOrAppend(.host, hostField)
            fields.append(viaLine(receivedIn ?? head.version))
            // An answer replaces a field of its name, or is one more line. A received field is
            // compared with it only when it has that name (`FieldRewrite.write`).
            answers.forEach { fields.setOrAppend($0.name, bytes: $0.value) }
            if handshakeLeg && framing != .none {
                // Handshake legs carry no body (IIS requires it); the body goes with the last leg.
                fields.remove(.transferEncoding)
                fields.remove(.expect)
                fields.setOrAppend(.contentLength, "0")
            } else {
                // The body is re-chunked: announce exactly the codings applied, whatever empty
                // list elements the client's spelling had.
                if framing == .chunked { fields.normalizeList(.transferEncoding) }
                if ownExpect { fields.append(.expectContinue) }
            }
        }
    }

    /// The same with the answers as a list of at most two (the tests and the fuzz targets).
    public static func requestHead(_ head: RequestHead, framing: BodyFraming, target: String, hostField: String,
                                   answers: [(name: FieldName, value: [UInt8])], handshakeLeg: Bool, ownExpect: Bool,
                                   receivedIn: HTTPVersion? = nil) -> ForwardedHead {
        precondition(answers.count <= 2, "a request carries at most the origin's and the parent proxy's answers")
        return requestHead(head, framing: framing, target: target, hostField: hostField,
                           answers: AnswerFields(answers.first, answers.dropFirst().first), handshakeLeg: handshakeLeg,
                           ownExpect: ownExpect, receivedIn: receivedIn)
    }

    /// The final response head for the client, and whether its body goes raw (an HTTP/1.0
    /// client cannot read chunked: the payload goes as it is and the connection closes).
    /// `receivedIn` as for `requestHead`: the version the upstream answered in (HTTP/2 lanes).
    public static func responseHead(_ response: ResponseHead, framing: BodyFraming, clientVersion: HTTPVersion,
                                    clientKeepAlive: Bool, receivedIn: HTTPVersion? = nil) -> (head: ForwardedHead, rawBody: Bool) {
        let raw = framing == .chunked && clientVersion == .http10
        let head = ForwardedHead(status: response.status, reason: response.reason, received: response.headers) { fields in
            if raw {
                fields.remove(.transferEncoding)
            } else if framing == .chunked {
                fields.normalizeList(.transferEncoding)
            }
            fields.append(viaLine(receivedIn ?? response.version))
            if !clientKeepAlive {
                fields.append(.connectionClose)
            } else if clientVersion == .http10 {
                fields.append(.connectionKeepAlive)
            }
        }
        return (head, raw)
    }

    /// A `1xx` other than `101`, for the client.
    public static func interim(_ response: ResponseHead) -> [UInt8] {
        var headers = response.headers
        HopByHop.strip(&headers)
        return HeadSerializer.response(ResponseHead(version: .http11, status: response.status, reason: response.reason, headers: headers))
    }

    /// A `101`, keeping the `Upgrade` it answers.
    public static func switching(_ response: ResponseHead) -> [UInt8] {
        var headers = response.headers
        HopByHop.strip(&headers, keepUpgrade: true)
        headers.append("Via", via)
        return HeadSerializer.response(ResponseHead(version: .http11, status: 101, reason: response.reason, headers: headers))
    }
}
