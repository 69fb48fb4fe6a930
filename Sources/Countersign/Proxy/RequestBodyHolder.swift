import CountersignConfig
import CountersignHTTP
import CountersignSigning

/// Reads a request body whole before its head goes upstream: for a host that signs a
/// `Content-Digest`, the one exception to streaming. Bounded per body (`signed_body_bytes`:
/// `413` above it) and process-wide (`held_bodies_bytes`: `503` while it is spent). The body is
/// de-chunked as it is held and goes upstream with a `Content-Length` and its digest.
final class RequestBodyHolder {
    enum Outcome {
        /// The head to sign and send (framing by length, digest added) and the budget it holds.
        case ready(head: RequestHead, framing: BodyFraming, body: OwnedEventBuffer, reserved: Int)
        case refused(ProxyError)
    }

    private var head: RequestHead
    private var pump: BodyPump
    private let body: OwnedEventBuffer
    private let digest: ContentDigester.Algorithm
    private let limit: Int
    private let budgetLimit: Int
    private(set) var reserved = 0

    init?(head: RequestHead, framing: BodyFraming, digest: ContentDigester.Algorithm, limits: Limits) {
        guard let body = OwnedEventBuffer() else { return nil }
        self.head = head
        self.pump = BodyPump(framing, output: .raw)
        self.body = body
        self.digest = digest
        self.limit = limits.signedBodyBytes
        self.budgetLimit = limits.heldBodiesBytes
    }

    /// Takes what the client has sent; nil while more is needed. A refusal releases the budget.
    func take(from input: EventBuffer) -> Outcome? {
        // Up to one byte past the limit may be moved, so that a body over it is seen; the budget
        // is reserved for what may be kept (never past the limit), and what was not used goes back.
        let room = limit + 1 - body.buffer.count
        let reservation = min(input.count, limit - body.buffer.count)
        guard reservation == 0 || HeldBodyBudget.shared.reserve(reservation, limit: budgetLimit) else {
            return refuse(ProxyError(.connectionLimitReached, details: "the bodies held for signing already take held_bodies_bytes (\(budgetLimit) bytes); try again shortly", status: 503))
        }
        reserved += reservation
        let progress = pump.pump(from: input, to: body.buffer, room: room)
        if body.buffer.count > limit {
            return refuse(ProxyError(.httpRequestError(status: 413), details: "a signed request's body is held whole, and this one is over signed_body_bytes (\(limit) bytes)"))
        }
        let unused = reserved - body.buffer.count
        HeldBodyBudget.shared.release(unused)
        reserved -= unused
        switch progress {
        case .waiting: return nil
        case .failed(let error): return refuse(.badRequest(error))
        case .finished: return ready()
        }
    }

    /// A body that announces more than the limit is refused before a byte of it is read.
    static func refusesUpFront(_ framing: BodyFraming, limits: Limits) -> ProxyError? {
        guard case .contentLength(let length) = framing, length > UInt64(limits.signedBodyBytes) else { return nil }
        return ProxyError(.httpRequestError(status: 413), details: "a signed request's body is held whole, and this one (\(length) bytes) is over signed_body_bytes (\(limits.signedBodyBytes) bytes)")
    }

    private func ready() -> Outcome {
        let digester = ContentDigester(digest)
        body.buffer.forEachSegment { digester.update($0) }
        var headers = head.headers
        for name in ["Transfer-Encoding", "Content-Length", "Expect", "Content-Digest", "Trailer"] { headers.removeAll(name) }
        headers.append("Content-Length", String(body.buffer.count))
        headers.append("Content-Digest", ContentDigester.fieldValue(digest: digester.finish(), digest))
        head.headers = headers
        return .ready(head: head, framing: .contentLength(UInt64(body.buffer.count)), body: body, reserved: reserved)
    }

    private func refuse(_ error: ProxyError) -> Outcome {
        HeldBodyBudget.shared.release(reserved)
        reserved = 0
        return .refused(error)
    }
}
