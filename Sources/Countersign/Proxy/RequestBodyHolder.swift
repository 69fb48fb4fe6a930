import CountersignConfig
import CountersignHTTP
import CountersignSigning

/// Reads a request body whole before its head goes upstream: for a host that signs a
/// `Content-Digest`. Bounded per body (`signed_body_bytes`: `413` above it) and process-wide
/// (`held_bodies_bytes`: `503` while it is spent). The body goes upstream de-chunked, with a
/// `Content-Length` and its digest.
final class RequestBodyHolder {
    enum Outcome {
        /// The head to sign and send (framing by length, digest added), with the holder that
        /// keeps the body's budget until the exchange ends.
        case ready(head: RequestHead, framing: BodyFraming, holder: BodyHolder)
        case refused(ProxyError)
    }

    private var head: RequestHead
    let holder: BodyHolder
    private let digest: ContentDigester.Algorithm
    private let limits: Limits

    init?(head: RequestHead, framing: BodyFraming, digest: ContentDigester.Algorithm, limits: Limits) {
        guard let holder = BodyHolder(framing: framing, limit: limits.signedBodyBytes, budgetLimit: limits.heldBodiesBytes) else { return nil }
        self.head = head
        self.holder = holder
        self.digest = digest
        self.limits = limits
    }

    /// Takes what the client has sent; nil while more is needed.
    func take(from input: EventBuffer) -> Outcome? {
        switch holder.take(from: input) {
        case .waiting: return nil
        case .budgetSpent: return .refused(Self.budgetSpent(limits))
        case .overLimit: return .refused(ProxyError(.httpRequestError(status: 413), details: "a signed request's body is held whole, and this one is over signed_body_bytes (\(limits.signedBodyBytes) bytes)"))
        case .invalid(let error): return .refused(.badRequest(error))
        case .held(let body): return ready(body)
        }
    }

    /// A body that announces more than the limit is refused before a byte of it is read.
    static func refusesUpFront(_ framing: BodyFraming, limits: Limits) -> ProxyError? {
        guard case .contentLength(let length) = framing, length > UInt64(limits.signedBodyBytes) else { return nil }
        return ProxyError(.httpRequestError(status: 413), details: "a signed request's body is held whole, and this one (\(length) bytes) is over signed_body_bytes (\(limits.signedBodyBytes) bytes)")
    }

    static func budgetSpent(_ limits: Limits) -> ProxyError {
        ProxyError(.connectionLimitReached, details: "the bodies held for signing and verifying already take held_bodies_bytes (\(limits.heldBodiesBytes) bytes); try again shortly", status: 503)
    }

    private func ready(_ body: OwnedEventBuffer) -> Outcome {
        let digester = ContentDigester(digest)
        body.buffer.forEachSegment { digester.update($0) }
        var headers = head.headers
        for name in ["Transfer-Encoding", "Content-Length", "Expect", "Content-Digest", "Trailer"] { headers.removeAll(name) }
        headers.append("Content-Length", String(body.buffer.count))
        headers.append("Content-Digest", ContentDigester.fieldValue(digest: digester.finish(), digest))
        head.headers = headers
        return .ready(head: head, framing: .contentLength(UInt64(body.buffer.count)), holder: holder)
    }
}
