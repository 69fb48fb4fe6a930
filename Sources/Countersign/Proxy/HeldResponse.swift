import CountersignHTTP
import CountersignSigning

/// A response from a host with `verify_responses`, held whole until it verifies: nothing of an
/// unverified response reaches the client. The body is held de-chunked and goes on with a
/// `Content-Length`.
struct HeldResponse {
    let head: ResponseHead
    let clientKeepAlive: Bool
    let holder: BodyHolder
    let verifier: ResponseVerifier
    /// A response to `HEAD`, or a `204` / `304`, carries no content and needs no digest.
    let hasContent: Bool

    /// The head to send once the held body verifies, or why it does not.
    func verified(body: EventBuffer, request: SignableRequest, now: Int64) -> Result<ResponseHead, SignatureError> {
        let fields = head.headers.fields.map { (name: $0.name, value: $0.value) }
        let message = SignableResponse(status: head.status, fields: fields, request: request)
        let result = verifier.verify(message, hasContent: hasContent, now: now) { algorithm in
            let digester = ContentDigester(algorithm)
            body.forEachSegment { digester.update($0) }
            return digester.finish()
        }
        if case .failure(let why) = result { return .failure(why) }
        var released = head
        if hasContent {
            for name in ["Transfer-Encoding", "Content-Length", "Trailer"] { released.headers.removeAll(name) }
            released.headers.append("Content-Length", String(body.count))
        }
        return .success(released)
    }
}
