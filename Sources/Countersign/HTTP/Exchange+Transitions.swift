extension Exchange {
    /// The one entry: an event in, the action to carry out. An event the state cannot receive
    /// is the driver's bug, never a peer's: it stops the process with both named.
    public mutating func handle(_ event: consuming Event) -> Action {
        guard accepts(event) else { unexpected(event) }
        // Consumed: a response head in it moves on into the action, uncopied.
        switch consume event {
        case .start(let credential): return start(tokenFirst: credential)
        case .answersChosen(let plan): return answersChosen(plan)
        case .tokenArrived: return tokenArrived()
        case .tokenFailed(let failure): return fail(failure)
        case .upstreamConnected(let reused, let answer): return upstreamConnected(reused: reused, answer: answer)
        case .upstreamFailed(let failure): return fail(failure)
        case .answerPrepared(let handshakeLeg): return answerPrepared(handshakeLeg: handshakeLeg)
        case .headRefused(let failure): return fail(failure)
        case .requestBodyProgressed(let keptWhole):
            switch body {
            case .waiting, .uploading: body = .uploading(kept: keptWhole)
            case .absent, .held, .sent: break
            }
            return .nothing
        case .requestBodyFinished: return requestBodyFinished()
        case .requestBodyInvalid(let failure):
            return responseStarted ? abort(.httpRequestError(status: 400)) : fail(failure)
        case .continueTimerFired:
            guard body == .held else { return .nothing }
            body = .waiting(keep: false)
            return .pumpRequestBody
        case .responseBytesArrived:
            markResponseBytesSeen()
            // A head that starts while the request body is still uploading is due all the same.
            return .armResponseTimer
        case .responseHead(let response, let challenged): return responseHead(response, challenged: challenged)
        case .invalidResponseHead(let tooLarge, let detail):
            return fail(Failure(tooLarge ? .httpResponseHeaderSectionSize : .httpProtocolError,
                                details: "invalid response from \(upstreamName): \(detail)"))
        case .challengeDecided(let verdict, let response): return challengeDecided(verdict, on: response)
        case .challengeBodyDiscarded: return challengeBodyDiscarded()
        case .challengeBodyInvalid:
            return fail(Failure(.httpProtocolError, details: "invalid 401 body from \(upstreamName)"))
        case .finalHeadRefused(let failure):
            state = .done
            return .fail(failure, client: clientFateAfterFailure)
        case .responseBodyFinished: return finishStreaming()
        case .responseBodyInvalid: return abort(.httpProtocolError)
        case .upstreamEnded: return upstreamEnded()
        case .upstreamReadTimedOut:
            // Silence while the request is still uploading (or a token is fetched) is not a fault.
            return responseStarted ? abort(.connectionReadTimeout) : .resumeUpstreamRead
        case .upstreamBroke(let timeout, let detail): return upstreamBroke(timeout: timeout, detail: detail)
        case .responseTimerFired(let seconds): return responseTimerFired(after: seconds)
        case .clientReadTimedOut:
            // Silence from a client is idleness only while its request is still coming. Once
            // it is in, the client waits for the answer or takes it in, however long that
            // lasts (a long download): the answer has its own bounds (connect_timeout,
            // header_timeout, the upstream's silence, the client's write timeout). A client
            // waiting while the KDC is asked is not idle either: that wait has its own bound.
            if body.finished { return .resumeClientRead }
            if case .preparingAnswer = state { return .resumeClientRead }
            return abandon(client: .closeNow)
        case .clientLost: return abandon(client: .closeNow)
        case .clientClosed: return abandon(client: .gone)
        case .drainBegan:
            clientMustClose = true
            return .nothing
        }
    }

    /// Whether `event` can happen in the current state.
    public func accepts(_ event: Event) -> Bool {
        let live: Bool
        switch state {
        case .idle, .choosingAnswers, .done: live = false
        case .fetchingToken, .connecting, .preparingAnswer, .awaitingHead, .discardingChallenge, .streaming: live = true
        }
        switch (event, state) {
        case (.start, .idle), (.answersChosen, .choosingAnswers),
             (.tokenArrived, .fetchingToken), (.tokenFailed, .fetchingToken),
             (.upstreamConnected, .connecting), (.upstreamFailed, .connecting),
             (.answerPrepared, .preparingAnswer), (.headRefused, .awaitingHead),
             (.requestBodyProgressed, .awaitingHead), (.requestBodyProgressed, .streaming),
             (.requestBodyFinished, .awaitingHead), (.requestBodyFinished, .streaming),
             (.requestBodyInvalid, .awaitingHead), (.requestBodyInvalid, .streaming),
             (.responseBytesArrived, .awaitingHead), (.responseHead, .awaitingHead), (.invalidResponseHead, .awaitingHead),
             (.challengeDecided, .awaitingHead), (.challengeDecided, .fetchingToken(_, _?, _)),
             (.challengeBodyDiscarded, .discardingChallenge), (.challengeBodyInvalid, .discardingChallenge),
             (.finalHeadRefused, .streaming), (.responseBodyFinished, .streaming), (.responseBodyInvalid, .streaming),
             (.drainBegan, _):
            return true
        case (.continueTimerFired, _), (.upstreamEnded, _), (.upstreamReadTimedOut, _), (.upstreamBroke, _),
             (.responseTimerFired, _), (.clientReadTimedOut, _), (.clientLost, _), (.clientClosed, _):
            return live
        default:
            return false
        }
    }

    // MARK: - Starting

    private mutating func start(tokenFirst credential: String?) -> Action {
        if let credential {
            state = .fetchingToken(credential: credential, challenge: nil, reusable: false)
            return .fetchToken
        }
        state = .choosingAnswers
        return .chooseAnswers
    }

    /// How the body survives a challenge: kept for a replay when small enough; else, while a
    /// challenger has no answer yet, held behind our own `Expect: 100-continue`.
    private mutating func answersChosen(_ plan: AnswerPlan) -> Action {
        if case .authenticated(let allKnown) = plan, case .waiting = body {
            if case .contentLength(let length) = request.framing, length <= UInt64(replayLimit) {
                body = .waiting(keep: true)
            } else if !allKnown {
                body = .held
            }
        }
        state = .connecting(Attempt())
        return .acquireUpstream
    }

    private mutating func tokenArrived() -> Action {
        guard case .fetchingToken(_, let challenge, _) = state else { unexpected(.tokenArrived) }
        if let challenge { return .decideChallenge(challenge) }
        state = .choosingAnswers
        return .chooseAnswers
    }

    // MARK: - Connection

    private mutating func upstreamConnected(reused: Bool, answer: FirstAnswer) -> Action {
        guard case .connecting(var attempt) = state else { unexpected(.upstreamConnected(reused: reused, answer: answer)) }
        attempt.reusedConnection = reused
        switch answer {
        case .ready(let handshakeLeg):
            return sendHead(attempt, handshakeLeg: handshakeLeg)
        case .toPrepare:
            state = .preparingAnswer(attempt, challenge: nil)
            return .prepareAnswer
        }
    }

    private mutating func answerPrepared(handshakeLeg: Bool) -> Action {
        guard case .preparingAnswer(let attempt, let challenge) = state else { unexpected(.answerPrepared(handshakeLeg: handshakeLeg)) }
        if let challenge {
            state = .awaitingHead(attempt)
            return .decideChallenge(challenge)
        }
        return sendHead(attempt, handshakeLeg: handshakeLeg)
    }

    mutating func sendHead(_ attempt: Attempt, handshakeLeg: Bool) -> Action {
        var attempt = attempt
        attempt.carriesBody = !handshakeLeg && request.framing != .none
        attempt.responseBytesSeen = false
        state = .awaitingHead(attempt)
        let held = body == .held
        let ownExpect = held && !handshakeLeg && !request.clientExpectsContinue
        let replay = attempt.carriesBody && body.started
        let armContinue = attempt.carriesBody && held
        let then: AfterHead
        if body.finished || !attempt.carriesBody {
            then = .armResponseTimer
        } else if held {
            then = .waitForContinue
        } else {
            then = .pumpRequestBody
        }
        return .sendHead(ownExpect: ownExpect, replay: replay, armContinueTimer: armContinue, then: then)
    }

    // MARK: - Request body

    private mutating func requestBodyFinished() -> Action {
        switch body {
        case .uploading(let kept): body = .sent(kept: kept)
        case .waiting, .held: body = .absent
        case .absent, .sent: break
        }
        if case .awaitingHead = state { return .armResponseTimer }
        return .nothing
    }

    // MARK: - Response head

    private mutating func markResponseBytesSeen() {
        guard case .awaitingHead(var a) = state else { return }
        a.responseBytesSeen = true
        state = .awaitingHead(a)
    }

    private mutating func responseHead(_ response: consuming ResponseHead, challenged: Bool) -> Action {
        markResponseBytesSeen()
        if response.status == 101 {
            guard request.wantsUpgrade else {
                return fail(Failure(.httpUpgradeFailed, details: "\(upstreamName) switched protocols without being asked"))
            }
            state = .done
            return .switchProtocols(response)
        }
        if response.isInterim {
            if response.status == 100 && body == .held {
                body = .waiting(keep: false)
                return .releaseBody(forward: request.clientExpectsContinue && request.version != .http10 ? response : nil)
            }
            // HTTP/1.0 clients do not understand 1xx (RFC 9110 §15.2).
            return request.version == .http10 ? .nothing : .forwardInterim(response)
        }
        if challenged { return .decideChallenge(response) }
        return finalHead(response)
    }

    mutating func finalHead(_ response: consuming ResponseHead) -> Action {
        let framing: BodyFraming
        do {
            framing = try BodyFraming.forResponse(response, requestMethod: request.method)
        } catch let error as HTTPParseError {
            return fail(Failure(.httpProtocolError, details: "invalid response from \(upstreamName): \(error.detail)"))
        } catch {
            return fail(Failure(.httpProtocolError, details: "invalid response from \(upstreamName)"))
        }
        // An HTTP/1.0 client cannot read chunked: the payload goes raw and the connection closes.
        let keepAlive = request.wantsKeepAlive && !clientMustClose && framing != .untilClose && !(framing == .chunked && request.version == .http10)
        let ended = attempt?.upstreamEnded ?? false
        state = .streaming(Streaming(framing: framing, clientKeepAlive: keepAlive, upstreamKeepAlive: response.allowsKeepAlive,
                                     carriesBody: attempt?.carriesBody ?? false))
        return .forwardResponse(response, framing: framing, clientKeepAlive: keepAlive, upstreamEnded: ended)
    }

    // MARK: - Response body and endings

    private mutating func finishStreaming() -> Action {
        guard case .streaming(let s) = state else { unexpected(.responseBodyFinished) }
        state = .done
        let reusable = body.finished && s.upstreamKeepAlive && s.framing != .untilClose
        let upstream: UpstreamFate
        if reusable && clientBound {
            upstream = s.clientKeepAlive ? .keepBound : .close
        } else {
            upstream = reusable ? .pool : .close
        }
        // Unread request body bytes leave the client connection's framing unknown: close it.
        let keepClient = s.clientKeepAlive && body.finished && !clientMustClose
        return .finish(Ending(upstream: upstream, client: keepClient ? .keepAlive : .closeAfterFlush))
    }

    private mutating func upstreamEnded() -> Action {
        switch state {
        case .preparingAnswer(var attempt, let challenge?):
            // A server that closes after its challenge (keep-alive off): the challenge is read,
            // so the answer still goes, on a new connection.
            attempt.upstreamEnded = true
            state = .preparingAnswer(attempt, challenge: challenge)
            return .nothing
        case .fetchingToken(let credential, let challenge, _):
            // The connection cannot carry the retry after the token.
            state = .fetchingToken(credential: credential, challenge: challenge, reusable: false)
            return .nothing
        case .connecting, .awaitingHead, .discardingChallenge, .preparingAnswer:
            let attempt = self.attempt ?? Attempt()
            if attempt.reusedConnection && !attempt.responseBytesSeen && request.framing == .none && !retriedStaleConnection {
                // A pooled connection the server had already closed: try once on a new one.
                retriedStaleConnection = true
                state = .connecting(Attempt())
                return .reconnect
            }
            return fail(Failure(.httpResponseIncomplete, details: "\(upstreamName) closed the connection without a response"))
        case .streaming(var s) where s.framing == .untilClose:
            // Close-delimited body: what is left is moved, and that is the end.
            s.upstreamKeepAlive = false
            state = .streaming(s)
            return .readRestOfBody
        case .streaming:
            return abort(.httpResponseIncomplete)
        case .idle, .choosingAnswers, .done:
            unexpected(.upstreamEnded)
        }
    }

    private mutating func upstreamBroke(timeout: Bool, detail: String) -> Action {
        switch state {
        case .fetchingToken(let credential, let challenge, _):
            state = .fetchingToken(credential: credential, challenge: challenge, reusable: false)
            return .nothing
        case .streaming:
            return abort(timeout ? .connectionReadTimeout : .httpResponseIncomplete)
        default:
            return fail(Failure(timeout ? .httpResponseTimeout : .connectionTerminated,
                                details: "\(upstreamName) failed before responding (\(detail))"))
        }
    }

    private mutating func responseTimerFired(after seconds: String) -> Action {
        switch state {
        case .awaitingHead, .discardingChallenge, .connecting:
            return fail(Failure(.httpResponseTimeout, details: "\(upstreamName) sent no response head within \(seconds)"))
        default:
            return .nothing
        }
    }

    /// The client is gone or dropped: the exchange ends, nothing more is sent.
    private mutating func abandon(client: ClientFate) -> Action {
        state = .done
        return .abort(errorType: "client_closed", client: client)
    }

    /// Before the response: the client keeps its connection when its body was read whole.
    var clientFateAfterFailure: ClientFate {
        body.finished && !clientMustClose ? .keepAlive : .closeAfterFlush
    }

    mutating func fail(_ failure: Failure) -> Action {
        if responseStarted { return abort(failure.type) }
        state = .done
        return .fail(failure, client: clientFateAfterFailure)
    }

    mutating func abort(_ type: ProxyErrorType) -> Action {
        state = .done
        return .abort(errorType: type.name, client: .closeNow)
    }

    /// Stops the process: the driver reported what cannot happen (swift-nio's "internal inconsistency").
    func unexpected(_ event: consuming Event) -> Never {
        preconditionFailure("internal inconsistency: event \(event.name) in state \(state.name)")
    }
}
