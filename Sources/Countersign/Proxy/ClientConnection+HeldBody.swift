import CountersignHTTP
import CountersignSigning

/// A request to a host that signs a `Content-Digest` or a SigV4 payload hash waits in `.holdingBody` until its body is
/// held whole (RequestBodyHolder); then its exchange starts with the body put back in front
/// of whatever the client sent after it.
extension ClientConnection {
    /// What waits for its body to be held whole: the request as it will be forwarded.
    struct HeldRequest {
        var head: RequestHead
        let target: UpstreamTarget
        let path: String
        let snapshot: ConfigSnapshot
        var record: AccessRecord
        var holder: RequestBodyHolder?
    }

    func hold(_ request: HeldRequest, framing: BodyFraming, hash: HeldBodyHash) {
        var request = request
        let limits = request.snapshot.configuration.limits
        if let tooLarge = RequestBodyHolder.refusesUpFront(framing, limits: limits) {
            return fail(with: tooLarge, record: request.record, close: true)
        }
        guard let holder = RequestBodyHolder(head: request.head, framing: framing, hash: hash, limits: limits) else {
            return fail(with: ProxyError(.proxyInternalError, details: "out of memory"), record: request.record, close: true)
        }
        // A client waiting for 100-continue sends nothing until told: the body is ours to take.
        if request.head.headers.listContains("Expect", token: "100-continue") {
            stream.write("HTTP/1.1 100 Continue\r\n\r\n")
        }
        request.holder = holder
        heldRequest = request
        state = .holdingBody
        continueHolding()
    }

    func continueHolding() {
        guard let request = heldRequest, let holder = request.holder, let input = stream.input else { return }
        switch holder.take(from: input) {
        case nil:
            return
        case .refused(let error)?:
            heldRequest = nil
            fail(with: error, record: request.record, close: true)
        case .ready(let head, let framing, let holder)?:
            heldRequest = nil
            heldBody = holder
            input.prependAll(from: holder.body.buffer)
            startExchange(head, to: request.target, path: request.path, framing: framing, snapshot: request.snapshot, record: request.record)
        }
    }

    func releaseHeldBody() {
        // Most exchanges hold nothing: then nothing is destroyed (storing nil over nil cost
        // an outlined destroy of each optional, every request).
        if let heldBody {
            heldBody.release()
            self.heldBody = nil
        }
        if heldRequest != nil {
            heldRequest?.holder?.holder.release()
            heldRequest = nil
        }
    }
}
