/// The heads a forwarding proxy writes: the client's request as it goes upstream and the
/// upstream's responses as they go to the client. Pure rewrites, no I/O.
public enum ForwardedHeads {
    public static let via = "1.1 countersign"

    private static func via(_ version: HTTPVersion) -> String { version == .http10 ? "1.0 countersign" : via }

    /// The request head for one attempt. `answers` are the auth headers this attempt carries;
    /// a `handshakeLeg` (NTLM, Negotiate) carries no body; `ownExpect` adds our own
    /// `Expect: 100-continue` while the body is held for a challenge.
    public static func request(_ head: RequestHead, framing: BodyFraming, target: String, hostField: String,
                               answers: [(name: String, value: [UInt8])], handshakeLeg: Bool, ownExpect: Bool) -> [UInt8] {
        var headers = head.headers
        HopByHop.strip(&headers, keepUpgrade: HopByHop.requestsUpgrade(head.headers))
        // RFC 9112 §3.2.2: the target's authority replaces whatever Host the client sent.
        headers.replaceOrAppend("Host", hostField)
        headers.append("Via", via(head.version))
        for answer in answers { headers.replaceOrAppend(answer.name, bytes: answer.value) }
        if handshakeLeg && framing != .none {
            // Handshake legs carry no body (IIS requires it); the body goes with the last leg.
            headers.removeAll("Transfer-Encoding")
            headers.removeAll("Expect")
            headers.replaceOrAppend("Content-Length", "0")
        } else {
            // The body is re-chunked: announce exactly the codings applied, whatever empty
            // list elements the client's spelling had.
            if framing == .chunked { headers.normalizeList("Transfer-Encoding") }
            if ownExpect { headers.append("Expect", "100-continue") }
        }
        return HeadSerializer.request(method: head.method, target: target, headers: headers)
    }

    /// The final response head for the client, and whether its body goes raw (an HTTP/1.0
    /// client cannot read chunked: the payload goes as it is and the connection closes).
    public static func response(_ response: ResponseHead, framing: BodyFraming, clientVersion: HTTPVersion,
                                clientKeepAlive: Bool) -> (head: [UInt8], rawBody: Bool) {
        var headers = response.headers
        HopByHop.strip(&headers)
        var raw = false
        if framing == .chunked && clientVersion == .http10 {
            raw = true
            headers.removeAll("Transfer-Encoding")
        } else if framing == .chunked {
            headers.normalizeList("Transfer-Encoding")
        }
        headers.append("Via", via(response.version))
        if !clientKeepAlive {
            headers.append("Connection", "close")
        } else if clientVersion == .http10 {
            headers.append("Connection", "keep-alive")
        }
        return (HeadSerializer.response(ResponseHead(version: .http11, status: response.status, reason: response.reason, headers: headers)), raw)
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
