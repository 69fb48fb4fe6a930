import CountersignAuth
import CountersignHTTP
import CountersignSupport

/// The response: heads read from upstream, challenges' bodies dropped, the final head and
/// its body moved to the client as fast as it reads.
extension ForwardExchange {
    func readResponseHead() {
        // The upstream's stream, read once (each read of `upstream.stream` was a retain).
        guard let upstreamStream = upstream?.stream else { return }
        while machine.readMode == .head {
            // Interim responses go to the client only as fast as it reads them (a flood of
            // 1xx to a client that does not read); the upstream waits, its input bounded.
            guard withHeld(client.stream, { $0.writeRoom }) > 0 else { return }
            guard upstreamStream.inputLength > 0, let input = upstreamStream.input else { return }
            perform(.responseBytesArrived)
            switch responseReader.head(from: input, arrays: &context.responseHeadArrays) {
            case .incomplete:
                return
            case .invalid(let error):
                return perform(.invalidResponseHead(tooLarge: error.kind == .headTooLarge, detail: error.detail))
            case .complete(let response):
                let challenged = occasional?.authenticators[response.status] != nil
                let interim = response.isInterim
                perform(.responseHead(response, challenged: challenged))
                // An answered challenge's retry reads its own response on the next event.
                if challenged, !interim, machine.readMode == .head { return }
            }
        }
    }

    func continueDiscarding() {
        guard let input = upstream?.stream.input, let trash = context.staging else { return }
        switch responseReader.discardBody(from: input, through: trash) {
        case .waiting: break
        case .finished: perform(.challengeBodyDiscarded)
        case .failed: perform(.challengeBodyInvalid)
        }
    }

    func forwardInterim(_ response: ResponseHead) {
        client.responseHeads.sendInterim(response)
    }

    /// `upstreamEnded`: the upstream closed while this response waited (for an answer made
    /// off the loop): what it sent is all there is.
    func finalHeadArrived(_ response: consuming ResponseHead, framing: BodyFraming, clientKeepAlive: Bool, upstreamEnded: Bool) {
        let row = target.row
        // The last outcome is counted with the exchange itself (one lock and lookup for both)
        // when the response goes straight on; otherwise on its own.
        var outcomeToCount: AuthOutcome?
        // Only an exchange that sent an answer has an outcome to record and a server to verify.
        if let authenticators = occasional?.authenticators, authenticators.containsValue(where: { $0.hasAnswered }) {
            var note: AuthNote?
            // Each slot by its status: the sequence copied both through generic witnesses.
            complete(authenticators[401], with: response, row: row, note: &note, last: &outcomeToCount)
            complete(authenticators[407], with: response, row: row, note: &note, last: &outcomeToCount)
            // Usually what choosing the answer noted already (`basic:preemptive`): left as it is.
            if let note, !note.isOutcome(of: record.auth) { record.auth = note }
            // A server that failed mutual authentication is not the one the ticket was for: what
            // it sent never reaches the client, and its connection is closed.
            if let failure = authenticators.firstValue({ $0.mutualAuthFailure }) {
                if let outcomeToCount { Observations.shared.authOutcome(row: row, outcomeToCount) }
                record.upstreamStatus = response.status
                return perform(.finalHeadRefused(.init(.httpProtocolError, details: failure)))
            }
        }
        responseDeadline.end()
        // Setting the stream's limits lets nothing go: no retain around it.
        withHeld(upstream?.stream) { $0.setWatermarks(readHigh: context.responseReadAhead, writeBudget: context.bufferBudget) }
        // A challenge passed on because its space is locked out says so (never the secret).
        if let lockOut = occasional?.authenticators.firstValue({ $0.lockOut }) {
            response.headers.append("Proxy-Status", ProxyStatusField.notice(details: lockOut.sentence))
        }
        record.upstreamStatus = response.status
        // An injected access token the upstream refused is fetched anew by the next request.
        if response.status == 401, let injected = record.injectedTokens {
            for credential in injected.credentials { snapshot.auth.retireToken(for: credential, obtainedBy: injected.takenAt) }
        }
        if let verifier = target.plan?.verifier {
            if let outcomeToCount { Observations.shared.authOutcome(row: row, outcomeToCount) }
            holdForVerification(response, framing: framing, clientKeepAlive: clientKeepAlive, verifier: verifier)
        } else {
            // Sending a head ends nothing: the client (held by its worker, or by the HTTP/2 bridge
            // that `sendFinalHead` binds for its call) is used with no retain.
            let output = withHeld(client) { $0.sendFinalHead(response, framing: framing, clientVersion: head.version,
                                                             clientKeepAlive: clientKeepAlive, receivedIn: upstreamReceivedVersion) }
            record.status = response.status
            withHeld(context.metrics) { $0.countResponse(status: response.status) }
            Observations.shared.exchange(row: row, errorType: nil, authOutcome: outcomeToCount)
            responseReader.expectBody(framing, output: output)
        }
        // What is buffered already goes at once; an upstream that ended says so after it.
        pumpResponse()
        if upstreamEnded, machine.readMode == .body { self.upstreamEnded() }
    }

    /// One authenticator's outcome with the response the client gets, added to the access
    /// record's `note`; it becomes the `last` one, and the one before it is counted now.
    private func complete(_ authenticator: ExchangeAuthenticator?, with response: ResponseHead, row: String, note: inout AuthNote?,
                          last: inout AuthOutcome?) {
        guard let outcome = authenticator?.complete(response) else { return }
        if case .notAttempted = outcome { return }
        note = AuthNote.adding(outcome, to: note)
        if let earlier = last { Observations.shared.authOutcome(row: row, earlier) }
        last = outcome
    }

    func pumpResponse() {
        if let heldResponse { return pumpHeldResponse(heldResponse) }
        guard machine.readMode == .body else { return }
        // Both streams are used with no retain around them: moving bytes from one buffer to the
        // other lets neither go (what may, the machine's next step, comes after).
        let pumped = withHeld(client.stream) { clientStream in
            withHeld(upstream?.stream) { upstreamStream -> (progress: BodyPump.Progress, moved: UInt64)? in
                guard let source = upstreamStream.input, let destination = clientStream.output else { return nil }
                return responseReader.body(from: source, to: destination, room: clientStream.writeRoom)
            } ?? nil
        }
        guard let (progress, moved) = pumped else { return }
        record.countResponseBody(moved)
        switch progress {
        case .waiting:
            break
        case .finished:
            perform(.responseBodyFinished)
        case .failed(let error):
            context.log.warn("invalid response body", [("upstream", .string(key.description)), ("reason", .string(error.detail))])
            perform(.responseBodyInvalid)
        }
    }

    /// The upstream closed its side: a held response never verified; otherwise the machine decides.
    func upstreamEnded() {
        if heldResponse != nil {
            // Whatever came of a held response is dropped: it never verified.
            heldResponse = nil
            return perform(.finalHeadRefused(.init(.httpResponseIncomplete, details: "\(target.hostField) closed the connection before the response to verify was whole")))
        }
        perform(.upstreamEnded)
    }

    /// A close-delimited body ended with its connection: what is left goes, and that is the end.
    func readRestOfBody() {
        if let source = upstream?.stream.input, let destination = client.stream.output {
            record.countResponseBody(responseReader.restOfBody(from: source, to: destination))
        }
        perform(.responseBodyFinished)
    }

    func switchProtocols(_ response: ResponseHead) {
        client.stream.write(ForwardedHeads.switching(response))
        record.status = 101
        record.upstreamStatus = 101
        carryOut(.finish(Exchange.Ending(upstream: .handedToTunnel, client: .becameTunnel)))
    }
}
