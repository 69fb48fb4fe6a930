import CountersignConfig
import CountersignHTTP
import CountersignSigning
import CountersignSupport

/// Reads a request body whole before its head goes upstream: for a host that signs a
/// `Content-Digest` or an AWS SigV4 payload hash. Bounded per body (`signed_body_bytes`: `413` above it) and process-wide
/// (`held_bodies_bytes`: `503` while it is spent). The body goes upstream de-chunked, with a
/// `Content-Length` and its digest (`Content-Digest`, or `X-Amz-Content-Sha256` replacing the client's).
final class RequestBodyHolder {
    enum Outcome {
        /// The head to sign and send (framing by length, digest added), with the holder that
        /// keeps the body's budget until the exchange ends.
        case ready(head: RequestHead, framing: BodyFraming, holder: BodyHolder)
        case refused(ProxyError)
    }

    private var head: RequestHead
    let holder: BodyHolder
    private let hash: HeldBodyHash
    private let limits: Limits

    init?(head: RequestHead, framing: BodyFraming, hash: HeldBodyHash, limits: Limits) {
        guard let holder = BodyHolder(framing: framing, limit: limits.signedBodyBytes, budgetLimit: limits.heldBodiesBytes) else { return nil }
        self.head = head
        self.holder = holder
        self.hash = hash
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
        var headers = head.headers
        for name in ["Transfer-Encoding", "Content-Length", "Expect", "Trailer"] { headers.removeAll(name) }
        headers.append("Content-Length", String(body.buffer.count))
        switch hash {
        case .contentDigest(let algorithm):
            let digester = ContentDigester(algorithm)
            body.buffer.forEachSegment { digester.update($0) }
            headers.removeAll("Content-Digest")
            headers.append("Content-Digest", ContentDigester.fieldValue(digest: digester.finish(), algorithm))
        case .awsPayload:
            // The hash the signature covers; the client's claim (if any) is replaced, not trusted.
            let digester = ContentDigester(.sha256)
            body.buffer.forEachSegment { digester.update($0) }
            headers.removeAll("X-Amz-Content-Sha256")
            headers.append("X-Amz-Content-Sha256", Hex.encode(digester.finish()))
        }
        head.headers = headers
        return .ready(head: head, framing: .contentLength(UInt64(body.buffer.count)), holder: holder)
    }
}
