import Glibc
import CountersignHTTP
import CountersignSigning

/// Responses of `verify_responses` hosts: held whole, verified, then released or refused.
extension ForwardExchange {
    // MARK: - Verified responses

    func holdForVerification(_ response: ResponseHead, framing: BodyFraming, clientKeepAlive: Bool, verifier: ResponseVerifier) {
        if framing == .untilClose {
            perform(.finalHeadRefused(.init(.httpProtocolError, details: "a response to verify must say where it ends (Content-Length or chunked); \(target.hostField) sent one that runs until the connection closes")))
            return
        }
        guard let holder = BodyHolder(framing: framing, limit: limits.signedBodyBytes, budgetLimit: limits.heldBodiesBytes) else {
            perform(.finalHeadRefused(.init(.proxyInternalError, details: "out of memory")))
            return
        }
        let hasContent = head.method != "HEAD" && response.status != 204 && response.status != 304
        heldResponse = HeldResponse(head: response, clientKeepAlive: clientKeepAlive, holder: holder, verifier: verifier, hasContent: hasContent)
    }

    /// Takes the held response's body as it arrives; once whole, verifies it and releases it to
    /// the client, or answers with a `502` saying what failed (nothing of it is sent).
    func pumpHeldResponse(_ held: HeldResponse) {
        guard machine.readMode == .body, let upstream, let source = upstream.stream.input else { return }
        func refuse(_ type: ProxyErrorType, _ details: String, status: Int? = nil) {
            heldResponse = nil
            context.log.warn("response refused", [("upstream", .string(key.description)), ("reason", .string(details))])
            Observations.shared.authOutcome(row: target.row, outcome: "response:refused")
            perform(.finalHeadRefused(.init(type, details: details, status: status)))
        }
        switch held.holder.take(from: source) {
        case .waiting:
            return
        case .overLimit:
            refuse(.httpResponseBodySize, "the response of \(target.hostField) is held whole to be verified, and its body is over signed_body_bytes (\(limits.signedBodyBytes) bytes)")
        case .budgetSpent:
            // As for a request: the process is busy, not the upstream wrong (SPEC: 503 until it frees).
            refuse(.connectionLimitReached, "the bodies held for signing and verifying already take held_bodies_bytes (\(limits.heldBodiesBytes) bytes); try again shortly",
                   status: 503)
        case .invalid(let error):
            refuse(.httpProtocolError, "the response of \(target.hostField) has an invalid body: \(error.detail)")
        case .held(let body):
            let request = SignableRequest(method: head.method, scheme: target.scheme, authority: target.hostField, target: path,
                                          fields: head.headers.fields.map { (name: $0.name, value: $0.value) })
            switch held.verified(body: body.buffer, request: request, now: Int64(time(nil))) {
            case .failure(let why):
                refuse(.httpProtocolError, "the response of \(target.hostField) did not verify: \(why)")
            case .success(let released):
                heldResponse = nil
                let framing: BodyFraming = held.hasContent ? .contentLength(UInt64(body.buffer.count)) : .none
                // The body goes whole with a Content-Length: never raw, whatever the client.
                _ = client.responseHeads.sendFinal(released, framing: framing, clientVersion: head.version, clientKeepAlive: held.clientKeepAlive,
                                                   receivedIn: upstreamReceivedVersion)
                record.status = released.status
                record.verified = true
                context.metrics.countResponse(status: released.status)
                Observations.shared.exchange(row: target.row, errorType: nil)
                Observations.shared.authOutcome(row: target.row, outcome: "response:verified")
                if let output = client.stream.output {
                    record.countResponseBody(UInt64(body.buffer.count))
                    body.buffer.moveAll(to: output)
                }
                held.holder.release()
                perform(.responseBodyFinished)
            }
        }
    }
}
