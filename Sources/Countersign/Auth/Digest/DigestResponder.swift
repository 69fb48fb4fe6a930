import CountersignHTTP
import CountersignSupport

/// The request facts a Digest answer covers.
public struct DigestRequest: Sendable {
    public var method: String
    /// The request-target exactly as sent on the request line (the `uri` parameter must match it).
    public var uri: String
    /// H(entity-body) in lower-case hex, computed with the session's algorithm (see `DigestHasher`);
    /// nil when the body cannot be hashed, which rules out qop=auth-int.
    public var bodyHash: String?

    public init(method: String, uri: String, bodyHash: String? = nil) {
        self.method = method
        self.uri = uri
        self.bodyHash = bodyHash
    }
}

/// Builds Digest `Authorization` values (RFC 7616 §3.4) and counts nonce uses in the session.
public struct DigestResponder: Sendable {
    /// Produces the cnonce; random by default, fixed in the known-answer tests.
    public var clientNonce: @Sendable () -> String

    public init(clientNonce: @escaping @Sendable () -> String = { DigestResponder.randomClientNonce() }) {
        self.clientNonce = clientNonce
    }

    /// 16 random bytes as hex: unguessable, and free of characters that would need quoting.
    public static func randomClientNonce() -> String { NonceBytes.hex(16) }

    /// `userRealmPasswordHash` is H(user:realm:password) in hex when already known for this
    /// credential and realm (it does not change from one answer to the next). The value is
    /// built as bytes: the hashes are hexed straight into it. The cnonce is drawn once per nonce
    /// (`DigestAnswerParts` says why that is safe).
    public func authorize(session: inout DigestSession, user: String, password: String,
                          request: DigestRequest, userRealmPasswordHash: SecretValue? = nil) throws -> DigestAuthorization {
        try authorize(session: &session, user: user, password: password, method: request.method, uri: request.uri,
                      bodyHash: request.bodyHash, userRealmPasswordHash: userRealmPasswordHash)
    }

    /// The same with the request's facts as they are (a `DigestRequest` made of them copied
    /// each string in and released it again).
    func authorize(session: inout DigestSession, user: String, password: String, method: String, uri: String, bodyHash: String?,
                   userRealmPasswordHash: SecretValue?) throws -> DigestAuthorization {
        let qop = try chooseQop(session.qopOffer, bodyHash: bodyHash)
        let algorithm = session.algorithm
        let parts: DigestAnswerParts
        if let kept = session.answerParts, kept.isFor(user: user, nonce: session.nonce) {
            parts = kept
        } else {
            parts = DigestAnswerParts(session: session, user: user, cnonce: clientNonce())
            session.answerParts = parts
        }
        let cnonce = qop != nil || algorithm.isSession ? parts.cnonce : nil
        let nc = qop != nil ? DigestNonceCount(session.nextNonceCount()) : nil

        var ha1 = userRealmPasswordHash?.bytes ?? algorithm.hexBytes("\(user):\(session.realm):\(password)")
        let prefix: DigestNoncePrefix
        if algorithm.isSession {
            var a1 = ColonJoined(ha1)
            a1.add(session.nonce)
            a1.add(cnonce ?? "")
            ha1 = algorithm.hexBytes(a1.bytes)
        }
        if let kept = session.noncePrefix, kept.isFor(ha1: ha1, nonce: session.nonce) {
            prefix = kept
        } else {
            prefix = DigestNoncePrefix(algorithm: algorithm, ha1: ha1, nonce: session.nonce)
            session.noncePrefix = prefix
        }
        // H(A2) of a repeated method and uri is the last one's (auth-int's takes the body).
        let a2: (request: DigestHex, rspauth: DigestHex)
        if qop == .authInt {
            let body = bodyHash ?? ""
            a2 = (prefix.a2(method: method, uri: uri, bodyHash: body), prefix.a2(method: "", uri: uri, bodyHash: body))
        } else if let kept = session.a2Memo, kept.isFor(method: method, uri: uri) {
            a2 = (kept.request, kept.rspauth)
        } else {
            let made = DigestA2Memo(method: method, uri: uri,
                                    request: prefix.a2(method: method, uri: uri, bodyHash: nil),
                                    rspauth: prefix.a2(method: "", uri: uri, bodyHash: nil))
            session.a2Memo = made
            a2 = (made.request, made.rspauth)
        }
        let hashes: (response: DigestHex, rspauth: DigestHex)
        if let nc, let qop {
            hashes = parts.answer(prefix: prefix, nc: nc, qop: qop, a2: a2.request, rspauthA2: a2.rspauth)
        } else {
            hashes = prefix.answer(middle: UnsafeBufferPointer(start: nil, count: 0), a2: a2.request, rspauthA2: a2.rspauth)
        }
        let response = hashes.response
        let proof = DigestProof(algorithm: algorithm, count: nc?.count, protectsBody: qop == .authInt, sentClientNonce: cnonce != nil,
                                rspauth: hashes.rspauth)

        if let nc, let qop, let value = response.withBytes({ response in
            nc.withBytes { parts.value(uri: uri, nc: $0, qop: qop, response: response) }
        }) {
            return DigestAuthorization(value: SecretValue(bytes: value), proof: proof, clientNonce: cnonce)
        }
        // In RFC 7616's order: the fixed parts written once per nonce, the request's between them.
        var writer = AuthParamWriter(continuing: parts.head)
        writer.quoted("uri", uri)
        writer.appendWritten(parts.middle)
        if let nc, let qop {
            writer.token("nc", nc.text)
            writer.quoted("cnonce", cnonce ?? "")
            writer.token("qop", qop.token)
        } else if let cnonce {
            writer.quoted("cnonce", cnonce)
        }
        response.withBytes { writer.quotedHex("response", $0) }
        writer.appendWritten(parts.tail)
        return DigestAuthorization(value: SecretValue(bytes: writer.bytes), proof: proof, clientNonce: cnonce)
    }

    /// auth-int only when the body hash is at hand and the server offers it; auth otherwise;
    /// nil (RFC 2069 compatibility) when the server offered no qop at all.
    private func chooseQop(_ offer: DigestQopOffer, bodyHash: String?) throws -> DigestQop? {
        guard offer.contains(.listed) else { return nil }
        if bodyHash != nil && offer.contains(.authInt) { return .authInt }
        if offer.contains(.auth) { return .auth }
        throw AuthError("the server accepts Digest only with qop=auth-int, and this request's body could not be hashed (it is streamed, not kept)")
    }

    /// nc is exactly 8 lower-case hex digits (RFC 7616 §3.4).
    public static func formatNonceCount(_ count: UInt32) -> String { DigestNonceCount(count).text }

    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if TokenSyntax.isDigitOrAlpha(byte) || "!#$&+-.^_`|~".utf8.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + Hex.encode([byte]).uppercased()
            }
        }
        return out
    }
}

/// What the RFC writes H(a ":" b ":" ...) over, built in one buffer.
struct ColonJoined {
    private(set) var bytes: [UInt8] = []

    init(_ first: String) {
        bytes.reserveCapacity(first.utf8.count + 192)
        bytes.append(contentsOf: first.utf8)
    }

    init(_ first: [UInt8]) {
        bytes.reserveCapacity(first.count + 192)
        bytes.append(contentsOf: first)
    }

    mutating func add(_ part: String) {
        bytes.append(UInt8(ascii: ":"))
        bytes.append(contentsOf: part.utf8)
    }

    mutating func add(_ part: [UInt8]) {
        bytes.append(UInt8(ascii: ":"))
        bytes.append(contentsOf: part)
    }
}

/// A Digest `Authorization` value and what is needed to verify the server's reply to it
/// (`DigestReply.read` with the `proof` and the cnonce).
public struct DigestAuthorization: CustomStringConvertible {
    /// The header value, as it goes on the wire.
    public let value: SecretValue
    let proof: DigestProof
    /// The cnonce sent, if any (the session's for its nonce).
    let clientNonce: String?

    public var description: String { "Digest authorization (\(proof.algorithm), qop \(proof.qop ?? "none"))" }
}
